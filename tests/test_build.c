/* test_build.c — the bulk build's contract: argument checks, the duplicate policies, input promised
 * sorted (verified, with the first out-of-order position named), values defaulting to positions,
 * the empty tree, keys 0 and the maximum, the shape (fill factor, level sizes) and the default
 * node sizes per key width; and the built arrays byte for byte against a plain reference build of
 * the layout (key_region.h) on random inputs, and against digests of trees the build produced
 * before its sort and layout were rewritten (issue 15). */
#include <xxhash.h>

#include "harmonia/tree_internal.h"
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

/* --- the reference build: the layout of key_region.h written plainly, one key at a time --------- */

typedef struct ref_pair {
    uint64_t key, value, position;
} ref_pair;

static int ref_pair_order(const void *a, const void *b)
{
    const ref_pair *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position;
}

/* The tree the layout prescribes for count pairs (values NULL = positions) under the duplicate
 * policy (no duplicates when rejecting), as arrays of the given tree's shape; fails the test if
 * the shapes differ, else compares every byte. */
static void expect_reference_layout(const kr_tree *t, uint32_t bits, uint32_t F, uint32_t L, double fill,
                                    harmonia_duplicates dup, const void *keys, const void *values, uint64_t count)
{
    ref_pair *p = malloc((count + 1) * sizeof *p);
    for (uint64_t i = 0; i < count; i++)
        p[i] = (ref_pair){tu_get(keys, bits, i), values ? tu_get(values, bits, i) : i, i};
    qsort(p, count, sizeof *p, ref_pair_order);
    uint64_t n = 0;
    for (uint64_t i = 0; i < count; i++) {
        bool first = i == 0 || p[i].key != p[i - 1].key, last = i + 1 == count || p[i + 1].key != p[i].key;
        if (dup == HARMONIA_DUPLICATES_KEEP_LAST ? last : first)
            p[n++] = p[i];
    }
    uint64_t per_leaf = (uint64_t)(L * fill);
    per_leaf = per_leaf < 1 ? 1 : per_leaf > L ? L : per_leaf;
    const uint64_t leaves = n == 0 ? 1 : (n + per_leaf - 1) / per_leaf;
    uint64_t sizes[KR_MAX_LEVELS], levels = 0;
    for (uint64_t c = leaves;; c = (c + F - 1) / F) {
        sizes[levels++] = c;
        if (c == 1)
            break;
    }
    uint64_t start[KR_MAX_LEVELS + 1], nodes = 0;
    for (uint64_t l = 0; l < levels; l++) {
        start[l] = nodes;
        nodes += sizes[levels - 1 - l];
    }
    start[levels] = nodes;
    const uint64_t internal = nodes - leaves, mask = tu_mask(bits);
    assert_int_equal(t->n_keys, n);
    assert_int_equal(t->n_leaves, leaves);
    assert_int_equal(t->n_internal, internal);
    assert_int_equal(t->height, levels);
    const uint64_t slots = internal * F + leaves * L;
    void *rk = malloc(slots * (bits / 8)), *rv = malloc(leaves * L * (bits / 8));
    uint32_t *fc = malloc((internal + 1) * 4);
    uint64_t *rank = malloc((leaves + 1) * 8);
    for (uint64_t li = 0; li < leaves; li++) { /* leaf li: keys [li*n/leaves, ...) spread evenly */
        uint64_t b = n / leaves * li + (li < n % leaves ? li : n % leaves);
        uint64_t e = n / leaves * (li + 1) + (li + 1 < n % leaves ? li + 1 : n % leaves);
        rank[li] = b;
        for (uint64_t s = 0; s < L; s++) {
            tu_set(rk, bits, internal * F + li * L + s, b + s < e ? p[b + s].key : mask);
            tu_set(rv, bits, li * L + s, b + s < e ? p[b + s].value : 0);
        }
    }
    rank[leaves] = n;
    uint64_t next = 1;
    for (uint64_t l = 0; l + 1 < levels; l++) {
        uint64_t parents = start[l + 1] - start[l], children = start[l + 2] - start[l + 1];
        for (uint64_t q = 0; q < parents; q++) {
            fc[start[l] + q] = (uint32_t)next;
            next += children / parents + (q < children % parents);
        }
    }
    fc[internal] = (uint32_t)next;
    for (uint64_t node = 0; node < internal; node++) {
        uint64_t c = fc[node + 1] - fc[node];
        for (uint64_t s = 0; s < F; s++) {
            uint64_t key = mask;
            if (s + 1 < c) { /* the first key under child s + 1 */
                uint64_t d = fc[node] + s + 1;
                while (d < internal)
                    d = fc[d];
                key = tu_get(rk, bits, internal * F + (d - internal) * L);
            }
            tu_set(rk, bits, node * F + s, key);
        }
    }
    assert_memory_equal(t->keys, rk, slots * (bits / 8));
    assert_memory_equal(t->leaf_values, rv, leaves * L * (bits / 8));
    assert_memory_equal(t->first_child, fc, (internal + 1) * 4);
    assert_memory_equal(t->leaf_rank, rank, (leaves + 1) * 8);
    free(p);
    free(rk);
    free(rv);
    free(fc);
    free(rank);
}

/* Random inputs of every shape the build takes: widths, node sizes, fills, policies, sorted or
 * not, values or positions, distributions from dense to clustered (skewed buckets for the sort)
 * and sizes from 0 to past the parallel thresholds. */
static void test_equals_reference_layout(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {8, 16, 32, 64, 128};
    uint64_t rng = 99;
    for (int round = 0; round < 60; round++) {
        uint32_t bits = tu_next(&rng) % 2 ? 64 : 32;
        uint32_t F = sizes[tu_next(&rng) % 5], L = sizes[tu_next(&rng) % 5];
        double fill = tu_next(&rng) % 3 ? 1.0 : 0.3 + (double)(tu_next(&rng) % 70) / 100.0;
        uint64_t n = round % 10 == 0 ? tu_next(&rng) % 4 : round % 3 == 0 ? 100000 + tu_next(&rng) % 200000
                                                                           : tu_next(&rng) % 5000;
        harmonia_duplicates dup = (harmonia_duplicates)(tu_next(&rng) % 3);
        int dist = (int)(tu_next(&rng) % 5), with_values = (int)(tu_next(&rng) % 2);
        const uint64_t mask = tu_mask(bits);
        void *keys = malloc(n * 8 + 8), *values = malloc(n * 8 + 8);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t k;
            switch (dist) {
            case 0: k = tu_next(&rng); break;                                           /* uniform */
            case 1: k = i * 3 + 7; break;                                               /* dense, sorted */
            case 2: k = (tu_next(&rng) % 4) * (mask / 4) + tu_next(&rng) % (4 * n + 9); break; /* clustered */
            case 3: k = tu_next(&rng) % 3 ? tu_next(&rng) % (n / 2 + 2) : mask - tu_next(&rng) % 5; break; /* repeats */
            default: k = n - i; break;                                                  /* descending */
            }
            tu_set(keys, bits, i, k & mask);
            tu_set(values, bits, i, tu_next(&rng));
        }
        if (dup == HARMONIA_DUPLICATES_REJECT && dist != 1 && dist != 4) /* unique: rejection is tested apart */
            for (uint64_t i = 0; i < n; i++) /* scattered (a bijection), or in 4 dense clusters far apart */
                tu_set(keys, bits, i, (dist == 2 ? (i % 4) * (mask / 4) + i / 4 : i * 2654435761u) & mask);
        harmonia_build_config c = config(bits);
        c.fanout = F;
        c.leaf_size = L;
        c.leaf_fill = fill;
        c.duplicates = dup;
        c.input_sorted = dist == 1 && tu_next(&rng) % 2;
        harmonia_tree *t = NULL;
        if (harmonia_build(&c, keys, with_values ? values : NULL, n, &t) != HARMONIA_OK)
            fail_msg("build of %llu pairs: %s", (unsigned long long)n, harmonia_last_error(NULL));
        expect_reference_layout(&t->kr, bits, F, L, fill, dup, keys, with_values ? values : NULL, n);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        harmonia_free(t);
        free(keys);
        free(values);
    }
}

/* Keys in a few clusters far apart, unsorted: the sort's buckets above its cache scratch, each
 * sorted by one thread through its mid buffer, pieces of them that cluster again, and one bucket
 * larger still (a nested team level); the tree equals the reference layout. */
static void test_large_buckets(void **state)
{
    (void)state;
    uint64_t rng = 27;
    for (int round = 0; round < 4; round++) {
        const uint32_t bits = round < 2 ? 64 : 32;
        const uint64_t n = bits == 64 ? 1u << 19 : 1u << 20, mask = tu_mask(bits);
        const harmonia_duplicates dup = round % 2 ? HARMONIA_DUPLICATES_KEEP_FIRST : HARMONIA_DUPLICATES_REJECT;
        void *keys = malloc(n * 8), *values = malloc(n * 8);
        for (uint64_t i = 0; i < n; i++) {
            /* cluster 0: 9/16 of the keys (a nested level), 1: 4/16 (one thread's, three quarters
             * of it in a narrow run: a piece above the scratch), 2: 2/16 (one thread's), 3: 1/16 (in
             * cache); inside a cluster unique keys (i times an odd number), or for KEEP_FIRST
             * repeated ones, below the narrow run */
            const uint64_t r = i % 16, c = r < 9 ? 0 : r < 13 ? 1 : r < 15 ? 2 : 3;
            const uint64_t odd = bits == 64 ? 2654435761u : 15u, run = bits == 64 ? 1ull << 51 : 1u << 25;
            uint64_t in = (dup == HARMONIA_DUPLICATES_REJECT ? i : tu_next(&rng) % (n / 3)) * odd;
            if (c == 1 && r < 12)
                in = run + i;
            tu_set(keys, bits, i, (c * (mask / 4 + 1) + in) & mask);
            tu_set(values, bits, i, tu_next(&rng) & mask);
        }
        harmonia_build_config cfg = config(bits);
        cfg.fanout = 16;
        cfg.leaf_size = 16;
        cfg.duplicates = dup;
        harmonia_tree *t = NULL;
        if (harmonia_build(&cfg, keys, values, n, &t) != HARMONIA_OK)
            fail_msg("build of %llu clustered pairs: %s", (unsigned long long)n, harmonia_last_error(NULL));
        expect_reference_layout(&t->kr, bits, 16, 16, 1.0, dup, keys, values, n);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        harmonia_free(t);
        free(keys);
        free(values);
    }
}

/* Trees the build made before issue 15 rewrote its sort and layout (commit 37504a3), by digest. */
static uint64_t tree_digest(const kr_tree *t)
{
    size_t kb = t->key_bits / 8;
    uint64_t h = XXH64(t->keys, kr_key_slots(t) * kb, 0);
    h = XXH64(t->leaf_values, t->n_leaves * t->leaf_size * kb, h);
    h = XXH64(t->first_child, (t->n_internal + 1) * 4, h);
    return XXH64(t->leaf_rank, (t->n_leaves + 1) * 8, h);
}

static void test_equals_previous_build(void **state)
{
    (void)state;
    uint64_t rng = 2026, n = 1u << 18;
    uint64_t *k = malloc(n * 8), *v = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) {
        k[i] = tu_next(&rng);
        v[i] = tu_next(&rng);
    }
    harmonia_build_config c = config(64);
    c.fanout = 16;
    c.leaf_size = 16;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, k, v, n, &t), HARMONIA_OK);
    assert_true(tree_digest(&t->kr) == 0x633a0c5b86d1d835ull);
    harmonia_free(t);
    free(k);
    free(v);
    rng = 15, n = 300000;
    uint32_t *k32 = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++)
        k32[i] = (uint32_t)(tu_next(&rng) % 200000) * 13u;
    c = config(32);
    c.fanout = 32;
    c.leaf_size = 16;
    c.leaf_fill = 0.8;
    c.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
    assert_int_equal(harmonia_build(&c, k32, NULL, n, &t), HARMONIA_OK);
    assert_true(tree_digest(&t->kr) == 0x2a781b67495eabc6ull);
    harmonia_free(t);
    free(k32);
}

/* Rejected duplicates in a large unsorted input (the fused sort-and-layout path): the smallest
 * duplicated key is named, with its first two input positions when the values are positions. */
static void test_duplicate_rejected_large(void **state)
{
    (void)state;
    uint64_t n = 200000, rng = 8;
    uint64_t *k = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++)
        k[i] = tu_next(&rng) | 1; /* odd keys */
    k[150000] = 40, k[7000] = 40, k[190000] = 40; /* the smallest repeated key, at 7000 and 150000 first */
    k[100] = 1ull << 62, k[120000] = 1ull << 62;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(NULL, k, NULL, n, &t), HARMONIA_ERR_DUPLICATE_KEY);
    assert_null(t);
    assert_non_null(strstr(harmonia_last_error(NULL), "duplicate key 40 at input positions 7000 and 150000"));
    assert_int_equal(harmonia_build(NULL, k, k, n, &t), HARMONIA_ERR_DUPLICATE_KEY);
    assert_non_null(strstr(harmonia_last_error(NULL), "duplicate key 40 "));
    free(k);
}

/* The build config's backend and memory: checked, CPU honoured; without a GPU, AUTO builds on the
 * CPU and GPU is NO_DEVICE (test_gpu_build covers the GPU build itself). */
static void test_backend_choice(void **state)
{
    (void)state;
    uint64_t keys[5] = {9, 3, 7, 1, 5};
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    harmonia_tree *t = NULL;
    c.backend = (harmonia_backend)7;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_ERR_INVALID);
    c.backend = HARMONIA_BACKEND_AUTO;
    c.memory = (harmonia_memory)9;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_ERR_INVALID);
    c.memory = HARMONIA_MEMORY_HOST;
    c.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_OK);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    harmonia_free(t);
    if (harmonia_device_probe(NULL) == HARMONIA_OK)
        return;
    c.backend = HARMONIA_BACKEND_AUTO;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_OK);
    harmonia_free(t);
    c.backend = HARMONIA_BACKEND_GPU;
    assert_int_equal(harmonia_build(&c, keys, NULL, 5, &t), HARMONIA_ERR_NO_DEVICE);
    assert_null(t);
    assert_int_equal(harmonia_build_device(NULL, keys, NULL, 5, &t), HARMONIA_ERR_NO_DEVICE);
    printf("expected error: %s\n", harmonia_last_error(NULL));
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
        cmocka_unit_test(test_equals_reference_layout),
        cmocka_unit_test(test_large_buckets),
        cmocka_unit_test(test_equals_previous_build),
        cmocka_unit_test(test_duplicate_rejected_large),
        cmocka_unit_test(test_backend_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
