/* test_build.c — the bulk build's contract: argument checks, the duplicate policies, input promised
 * sorted (verified, with the first out-of-order position named), values defaulting to positions,
 * the empty tree, keys 0 and the maximum, the shape (fill factor, level sizes) and the default
 * node sizes per key width. */
#include "tests/test_util.h"

static harmonia_build_config config(uint32_t key_bits)
{
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    c.key_bits = key_bits;
    return c;
}

static void test_bad_arguments(void **state)
{
    (void)state;
    harmonia_tree *t = (harmonia_tree *)0x1;
    uint64_t k[2] = {1, 2};
    harmonia_build_config c = config(64);
    c.key_bits = 16;
    assert_int_equal(harmonia_build(&c, k, NULL, 2, &t), HARMONIA_ERR_INVALID);
    assert_null(t);
    assert_non_null(strstr(harmonia_last_error(NULL), "16"));
    c = config(64);
    c.fanout = 12;
    assert_int_equal(harmonia_build(&c, k, NULL, 2, &t), HARMONIA_ERR_INVALID);
    c = config(64);
    c.leaf_size = 256;
    assert_int_equal(harmonia_build(&c, k, NULL, 2, &t), HARMONIA_ERR_INVALID);
    c = config(64);
    c.leaf_fill = 1.5;
    assert_int_equal(harmonia_build(&c, k, NULL, 2, &t), HARMONIA_ERR_INVALID);
    c = config(64);
    assert_int_equal(harmonia_build(&c, NULL, NULL, 2, &t), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_build(&c, k, NULL, 2, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_check(NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_lookup(NULL, NULL, k, 1, k, (uint8_t *)k), HARMONIA_ERR_INVALID);
    harmonia_free(NULL);
    assert_string_not_equal(harmonia_strerror(HARMONIA_ERR_CORRUPT), "unknown status");
    assert_string_equal(harmonia_strerror((harmonia_status)999), "unknown status");
}

static void test_empty_tree(void **state)
{
    (void)state;
    harmonia_build_config c = config(32);
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, NULL, NULL, 0, &t), HARMONIA_OK);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    uint32_t q[3] = {0, 5, UINT32_MAX}, v[3];
    uint8_t f[3];
    uint64_t counts[3];
    assert_int_equal(harmonia_lookup(t, NULL, q, 3, v, f), HARMONIA_OK);
    assert_int_equal(f[0] + f[1] + f[2], 0);
    assert_int_equal(harmonia_lower_bound(t, NULL, q, 3, NULL, v, f), HARMONIA_OK);
    assert_int_equal(f[0] + f[1] + f[2], 0);
    uint32_t hi[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    assert_int_equal(harmonia_range_count(t, NULL, q, hi, 3, counts), HARMONIA_OK);
    assert_int_equal(counts[0] + counts[1] + counts[2], 0);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.key_count, 0);
    assert_int_equal(info.height, 1);
    assert_int_equal(harmonia_lookup(t, NULL, NULL, 0, NULL, NULL), HARMONIA_OK);
    harmonia_free(t);
}

static void test_values_default_to_positions(void **state)
{
    (void)state;
    uint64_t keys[5] = {50, 10, 40, 20, 30};
    harmonia_build_config c = config(64);
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_OK);
    uint64_t v[5];
    uint8_t f[5];
    assert_int_equal(harmonia_lookup(t, NULL, keys, 5, v, f), HARMONIA_OK);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(f[i], 1);
        assert_int_equal(v[i], i);
    }
    harmonia_free(t);
}

static void test_extreme_keys(void **state)
{
    (void)state;
    for (int w = 0; w < 2; w++) {
        uint32_t bits = w ? 64 : 32;
        uint64_t max = tu_mask(bits);
        uint64_t keys[4] = {max, 0, 1, max - 1}, vals[4] = {7, 8, 9, 10};
        void *kk = malloc(32), *vv = malloc(32);
        for (int i = 0; i < 4; i++) {
            tu_set(kk, bits, i, keys[i]);
            tu_set(vv, bits, i, vals[i]);
        }
        harmonia_build_config c = config(bits);
        harmonia_tree *t = NULL;
        assert_int_equal(harmonia_build(&c, kk, vv, 4, &t), HARMONIA_OK);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        void *out = malloc(32);
        uint8_t f[4];
        assert_int_equal(harmonia_lookup(t, NULL, kk, 4, out, f), HARMONIA_OK);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(f[i], 1);
            assert_int_equal(tu_get(out, bits, i), vals[i]);
        }
        /* the maximum key is a miss in a tree without it */
        harmonia_free(t);
        assert_int_equal(harmonia_build(&c, (char *)kk + bits / 8, vv, 3, &t), HARMONIA_OK);
        assert_int_equal(harmonia_lookup(t, NULL, kk, 1, out, f), HARMONIA_OK);
        assert_int_equal(f[0], 0);
        uint64_t count;
        void *lo = malloc(8), *hi = malloc(8);
        tu_set(lo, bits, 0, 0);
        tu_set(hi, bits, 0, max);
        assert_int_equal(harmonia_range_count(t, NULL, lo, hi, 1, &count), HARMONIA_OK);
        assert_int_equal(count, 3);
        harmonia_free(t);
        free(kk);
        free(vv);
        free(out);
        free(lo);
        free(hi);
    }
}

static void test_duplicate_policies(void **state)
{
    (void)state;
    uint64_t keys[6] = {5, 3, 5, 9, 3, 5}, vals[6] = {100, 101, 102, 103, 104, 105};
    harmonia_build_config c = config(64);
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, keys, vals, 6, &t), HARMONIA_ERR_DUPLICATE_KEY);
    assert_null(t);
    assert_non_null(strstr(harmonia_last_error(NULL), "duplicate key"));
    /* without values the message names both input positions */
    assert_int_equal(harmonia_build(&c, keys, NULL, 6, &t), HARMONIA_ERR_DUPLICATE_KEY);
    assert_non_null(strstr(harmonia_last_error(NULL), "positions"));
    uint64_t q[3] = {3, 5, 9}, v[3];
    uint8_t f[3];
    c.duplicates = HARMONIA_DUPLICATES_KEEP_FIRST;
    assert_int_equal(harmonia_build(&c, keys, vals, 6, &t), HARMONIA_OK);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    assert_int_equal(harmonia_lookup(t, NULL, q, 3, v, f), HARMONIA_OK);
    assert_int_equal(v[0], 101);
    assert_int_equal(v[1], 100);
    assert_int_equal(v[2], 103);
    harmonia_tree_info info;
    harmonia_info(t, &info);
    assert_int_equal(info.key_count, 3);
    harmonia_free(t);
    c.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
    assert_int_equal(harmonia_build(&c, keys, vals, 6, &t), HARMONIA_OK);
    assert_int_equal(harmonia_lookup(t, NULL, q, 3, v, f), HARMONIA_OK);
    assert_int_equal(v[0], 104);
    assert_int_equal(v[1], 105);
    assert_int_equal(v[2], 103);
    harmonia_free(t);
    /* duplicates in input promised sorted, both policies */
    uint64_t sorted[5] = {1, 2, 2, 2, 7}, sv[5] = {10, 20, 21, 22, 70};
    c.input_sorted = true;
    c.duplicates = HARMONIA_DUPLICATES_REJECT;
    assert_int_equal(harmonia_build(&c, sorted, sv, 5, &t), HARMONIA_ERR_DUPLICATE_KEY);
    assert_non_null(strstr(harmonia_last_error(NULL), "positions 1 and 2"));
    c.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
    assert_int_equal(harmonia_build(&c, sorted, sv, 5, &t), HARMONIA_OK);
    assert_int_equal(harmonia_lookup(t, NULL, &sorted[1], 1, v, f), HARMONIA_OK);
    assert_int_equal(v[0], 22);
    harmonia_free(t);
}

static void test_duplicates_large_parallel(void **state)
{
    (void)state;
    /* 300k pairs over 100k keys: the parallel sort and compaction keep input order per key */
    uint64_t n = 300000;
    uint32_t *keys = malloc(n * 4), *vals = malloc(n * 4);
    uint64_t rng = 3;
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = (uint32_t)(tu_next(&rng) % 100000) * 7u;
        vals[i] = (uint32_t)i;
    }
    harmonia_build_config c = config(32);
    harmonia_tree *first = NULL, *last = NULL;
    c.duplicates = HARMONIA_DUPLICATES_KEEP_FIRST;
    assert_int_equal(harmonia_build(&c, keys, vals, n, &first), HARMONIA_OK);
    c.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
    assert_int_equal(harmonia_build(&c, keys, vals, n, &last), HARMONIA_OK);
    assert_int_equal(harmonia_check(first), HARMONIA_OK);
    assert_int_equal(harmonia_check(last), HARMONIA_OK);
    uint32_t *vf = malloc(n * 4), *vl = malloc(n * 4);
    uint8_t *ff = malloc(n), *fl = malloc(n);
    assert_int_equal(harmonia_lookup(first, NULL, keys, n, vf, ff), HARMONIA_OK);
    assert_int_equal(harmonia_lookup(last, NULL, keys, n, vl, fl), HARMONIA_OK);
    for (uint64_t i = 0; i < n; i++) {
        assert_true(ff[i] && fl[i]);
        assert_true(vf[i] <= i && vl[i] >= i);
        assert_int_equal(keys[vf[i]], keys[i]);
        assert_int_equal(keys[vl[i]], keys[i]);
    }
    free(keys); free(vals); free(vf); free(vl); free(ff); free(fl);
    harmonia_free(first);
    harmonia_free(last);
}

static void test_unsorted_promise(void **state)
{
    (void)state;
    uint32_t keys[6] = {1, 4, 9, 8, 12, 13};
    harmonia_build_config c = config(32);
    c.input_sorted = true;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, keys, NULL, 6, &t), HARMONIA_ERR_UNSORTED);
    assert_null(t);
    assert_non_null(strstr(harmonia_last_error(NULL), "position 3"));
    c.input_sorted = false;
    assert_int_equal(harmonia_build(&c, keys, NULL, 6, &t), HARMONIA_OK);
    harmonia_free(t);
}

static void test_shape_and_fill(void **state)
{
    (void)state;
    uint64_t n = 10000;
    uint64_t *keys = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = i * 3 + 1;
    harmonia_build_config c = config(64);
    c.fanout = 8;
    c.leaf_size = 16;
    c.leaf_fill = 0.5;
    c.input_sorted = true;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, keys, NULL, n, &t), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.leaf_count, n / 8); /* 8 keys per leaf at fill 0.5 */
    assert_true(info.leaf_fill > 0.49 && info.leaf_fill < 0.51);
    uint64_t nodes = 0;
    for (uint32_t l = 0; l < info.height; l++)
        nodes += info.level_nodes[l];
    assert_int_equal(nodes, info.internal_nodes + info.leaf_count);
    assert_int_equal(info.level_nodes[0], 1);
    /* 1250 leaves, F = 8: 157, 20, 3, 1 above them */
    assert_int_equal(info.height, 5);
    /* the __constant__ cut: the root level by default (entries: its first-child entry and the
     * sentinel), every level that fits with ALL, a count capped by the internal levels */
    assert_int_equal(info.constant_prefix_levels, 1);
    assert_int_equal(info.constant_prefix_entries, 2);
    assert_int_equal(harmonia_set_constant_levels(t, HARMONIA_CONSTANT_LEVELS_ALL), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.constant_prefix_levels, 4);
    assert_int_equal(info.constant_prefix_entries, 1 + 3 + 20 + 157 + 1);
    assert_int_equal(harmonia_set_constant_levels(t, 2), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.constant_prefix_levels, 2);
    assert_int_equal(info.constant_prefix_entries, 1 + 3 + 1);
    assert_int_equal(harmonia_set_constant_levels(t, 40), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.constant_prefix_levels, 4);
    assert_int_equal(harmonia_set_constant_levels(t, 0), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.constant_prefix_levels, 0);
    assert_int_equal(info.constant_prefix_entries, 0);
    assert_int_equal(harmonia_set_constant_levels(t, -2), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_set_constant_levels(NULL, 1), HARMONIA_ERR_INVALID);
    harmonia_free(t);

    /* a root that is a leaf has no internal level: no cut whatever the setting */
    for (uint64_t small = 0; small <= 7; small += 7) {
        c.leaf_fill = 1.0;
        assert_int_equal(harmonia_build(&c, keys, NULL, small, &t), HARMONIA_OK);
        const int32_t settings[] = {0, 1, 5, HARMONIA_CONSTANT_LEVELS_ALL};
        for (unsigned s = 0; s < 4; s++) {
            assert_int_equal(harmonia_set_constant_levels(t, settings[s]), HARMONIA_OK);
            assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
            assert_int_equal(info.height, 1);
            assert_int_equal(info.constant_prefix_levels, 0);
            assert_int_equal(info.constant_prefix_entries, 0);
        }
        harmonia_free(t);
    }
    free(keys);

    /* the budget (HARMONIA_CONSTANT_ENTRIES_MAX = 512 entries, passed as kernel parameters) cuts ALL
     * and large counts: 2^20 keys, F = L = 8 give 131072 leaves under 6 internal levels of 16384,
     * 2048, 256, 32, 4, 1 nodes: the top 4 fit (294 entries with the sentinel; 2342 with level 4) */
    n = 1u << 20;
    keys = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = i * 5 + 3;
    c.fanout = 8;
    c.leaf_size = 8;
    c.leaf_fill = 1.0;
    assert_int_equal(harmonia_build(&c, keys, NULL, n, &t), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.height, 7);
    const int32_t big[] = {HARMONIA_CONSTANT_LEVELS_ALL, 6, 7, 64};
    for (unsigned s = 0; s < 4; s++) {
        assert_int_equal(harmonia_set_constant_levels(t, big[s]), HARMONIA_OK);
        assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
        assert_int_equal(info.constant_prefix_levels, 4);
        assert_int_equal(info.constant_prefix_entries, 1 + 4 + 32 + 256 + 1);
        assert_true(info.constant_prefix_entries <= HARMONIA_CONSTANT_ENTRIES_MAX);
    }
    harmonia_free(t);
    free(keys);
}

/* The default node sizes: F is one 128-byte line per internal node (16 64-bit or 32 32-bit keys),
 * chosen by the build from the key width when the configuration leaves it 0; L = 16; a caller's F
 * stays as given. */
static void test_default_node_sizes(void **state)
{
    (void)state;
    const uint64_t n = 5000;
    uint64_t *keys64 = malloc(n * 8);
    uint32_t *keys32 = malloc(n * 4);
    assert_non_null(keys64);
    assert_non_null(keys32);
    for (uint64_t i = 0; i < n; i++) {
        keys64[i] = i * 7 + 2;
        keys32[i] = (uint32_t)(i * 7 + 2);
    }
    for (uint32_t bits = 32; bits <= 64; bits += 32) {
        harmonia_build_config c = config(bits);
        assert_int_equal(c.fanout, 0);
        for (uint32_t given = 0; given <= 8; given += 8) {
            c.fanout = given;
            harmonia_tree *t = NULL;
            assert_int_equal(harmonia_build(&c, bits == 32 ? (const void *)keys32 : keys64, NULL, n, &t), HARMONIA_OK);
            harmonia_tree_info info;
            assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
            assert_int_equal(info.fanout, given ? given : HARMONIA_DEFAULT_FANOUT(bits));
            assert_int_equal(info.fanout, given ? given : (bits == 32 ? 32 : 16));
            assert_int_equal(info.leaf_size, HARMONIA_DEFAULT_LEAF_SIZE);
            assert_int_equal(harmonia_check(t), HARMONIA_OK);
            harmonia_free(t);
        }
    }
    /* no configuration at all: 64-bit keys, the 64-bit default */
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(NULL, keys64, NULL, n, &t), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.fanout, 16);
    harmonia_free(t);
    free(keys64);
    free(keys32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_empty_tree),
        cmocka_unit_test(test_values_default_to_positions),
        cmocka_unit_test(test_extreme_keys),
        cmocka_unit_test(test_duplicate_policies),
        cmocka_unit_test(test_duplicates_large_parallel),
        cmocka_unit_test(test_unsorted_promise),
        cmocka_unit_test(test_shape_and_fill),
        cmocka_unit_test(test_default_node_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
