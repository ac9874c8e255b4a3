/* test_differential.c — differential property tests of the CPU engine: thousands of random trees
 * (both key widths, every F and L, several fill factors, sizes 0, 1, around every F and L boundary,
 * up to about 10^6; uniform, dense, clustered and extreme keys) checked by the integrity checker and
 * against the plain sorted-array model with point, lower-bound, range-count and range-collect
 * queries: hits, misses, below the minimum, above the maximum, lo > hi, lo = hi, long ranges. */
#include "tests/test_util.h"

static const uint32_t node_sizes[] = {8, 16, 32, 64, 128};
static const double fills[] = {1.0, 0.75, 0.5, 0.3};

/* Builds a tree from the model (shuffled or promised sorted) and checks every query kind. */
static void check_tree_against_model(const tu_model *m, uint32_t fanout, uint32_t leaf_size,
                                     double fill, uint64_t n_queries, uint64_t *rng)
{
    const uint32_t kb = m->key_bits / 8;
    const uint64_t mask = tu_mask(m->key_bits);
    int sorted_input = (int)(tu_next(rng) % 3 == 0);
    void *keys, *values;
    tu_model_arrays(m, &keys, &values, !sorted_input, rng);

    harmonia_build_config cfg;
    harmonia_build_config_init(&cfg);
    cfg.key_bits = m->key_bits;
    cfg.fanout = fanout;
    cfg.leaf_size = leaf_size;
    cfg.leaf_fill = fill;
    cfg.input_sorted = sorted_input;
    harmonia_tree *tree = NULL;
    harmonia_status st = harmonia_build(&cfg, keys, values, m->n, &tree);
    if (st != HARMONIA_OK)
        fail_msg("build of %llu keys (F=%u L=%u fill=%g) failed: %s", (unsigned long long)m->n, fanout,
                 leaf_size, fill, harmonia_last_error(NULL));
    st = harmonia_check(tree);
    if (st != HARMONIA_OK)
        fail_msg("check after build failed: %s", harmonia_last_error(tree));
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.key_count, m->n);
    if (m->n) {
        assert_int_equal(info.min_key, m->keys[0]);
        assert_int_equal(info.max_key, m->keys[m->n - 1]);
    }

    /* the CPU engine is what this test checks: name it, so that a machine with a GPU does too */
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;

    /* queries: every key when small, then random mixes */
    uint64_t q_n = n_queries + (m->n <= 4096 ? m->n : 0);
    void *queries = malloc(q_n * kb + 8), *his = malloc(q_n * kb + 8);
    void *out_keys = malloc(q_n * kb + 8), *out_values = malloc(q_n * kb + 8);
    uint8_t *found = malloc(q_n + 1);
    uint64_t *counts = malloc((q_n + 1) * sizeof(uint64_t));
    uint64_t *offsets = malloc((q_n + 1) * sizeof(uint64_t));
    assert_true(queries && his && out_keys && out_values && found && counts && offsets);
    uint64_t qi = 0;
    if (m->n <= 4096)
        for (; qi < m->n; qi++)
            tu_set(queries, m->key_bits, qi, m->keys[qi]);
    for (; qi < q_n; qi++)
        tu_set(queries, m->key_bits, qi, tu_query_key(m, rng));

    assert_int_equal(harmonia_lookup(tree, &cpu, queries, q_n, out_values, found), HARMONIA_OK);
    for (uint64_t i = 0; i < q_n; i++) {
        uint64_t q = tu_get(queries, m->key_bits, i);
        uint64_t r = tu_model_rank(m, q);
        int hit = r < m->n && m->keys[r] == q;
        if (found[i] != hit || tu_get(out_values, m->key_bits, i) != (hit ? m->values[r] : 0))
            fail_msg("lookup %llu (n=%llu F=%u L=%u): found %d value %llu, model %d %llu",
                     (unsigned long long)q, (unsigned long long)m->n, fanout, leaf_size, found[i],
                     (unsigned long long)tu_get(out_values, m->key_bits, i), hit,
                     (unsigned long long)(hit ? m->values[r] : 0));
    }

    /* unordered, 64- and 32-bit positions: the CPU engine keeps the queries' order (position i at
     * slot i) with the same results */
    {
        void *u_values = malloc(q_n * kb + 8);
        uint8_t *u_found = malloc(q_n + 1);
        uint64_t *pos64 = malloc(q_n * 8 + 8);
        uint32_t *pos32 = malloc(q_n * 4 + 4);
        assert_true(u_values && u_found && pos64 && pos32);
        memset(pos64, 0xA5, q_n * 8 + 8);
        memset(pos32, 0xA5, q_n * 4 + 4);
        assert_int_equal(harmonia_lookup_unordered(tree, &cpu, queries, q_n, u_values, u_found, pos64), HARMONIA_OK);
        for (uint64_t i = 0; i < q_n; i++)
            assert_int_equal(pos64[i], i);
        assert_memory_equal(u_found, found, q_n);
        assert_memory_equal(u_values, out_values, q_n * kb);
        memset(u_values, 0xA5, q_n * kb + 8);
        memset(u_found, 0xA5, q_n + 1);
        assert_int_equal(harmonia_lookup_unordered32(tree, &cpu, queries, q_n, u_values, u_found, pos32), HARMONIA_OK);
        for (uint64_t i = 0; i < q_n; i++)
            assert_int_equal(pos32[i], i);
        assert_int_equal(pos32[q_n], 0xA5A5A5A5u); /* nothing past the batch */
        assert_memory_equal(u_found, found, q_n);
        assert_memory_equal(u_values, out_values, q_n * kb);
        free(u_values);
        free(u_found);
        free(pos64);
        free(pos32);
    }

    assert_int_equal(harmonia_lower_bound(tree, &cpu, queries, q_n, out_keys, out_values, found), HARMONIA_OK);
    for (uint64_t i = 0; i < q_n; i++) {
        uint64_t q = tu_get(queries, m->key_bits, i);
        uint64_t r = tu_model_rank(m, q);
        int has = r < m->n;
        if (found[i] != has || tu_get(out_keys, m->key_bits, i) != (has ? m->keys[r] : 0) ||
            tu_get(out_values, m->key_bits, i) != (has ? m->values[r] : 0))
            fail_msg("lower bound %llu (n=%llu F=%u L=%u): found %d key %llu, model %d %llu",
                     (unsigned long long)q, (unsigned long long)m->n, fanout, leaf_size, found[i],
                     (unsigned long long)tu_get(out_keys, m->key_bits, i), has,
                     (unsigned long long)(has ? m->keys[r] : 0));
    }

    /* ranges: lo from the query mix; hi = lo + length (lengths 0, short, long, reversed) */
    for (uint64_t i = 0; i < q_n; i++) {
        uint64_t lo = tu_get(queries, m->key_bits, i), hi;
        switch (tu_next(rng) % 6) {
        case 0: hi = lo; break;
        case 1: hi = lo > 0 ? lo - 1 - tu_next(rng) % (lo < 100 ? lo : 100) : 0; break; /* lo > hi */
        case 2: hi = mask; break;
        case 3: hi = (lo + tu_next(rng) % 64) & mask; if (hi < lo) hi = mask; break;
        case 4: { /* spans many leaves: up to a random later key of the model */
            uint64_t r = tu_model_rank(m, lo);
            hi = r < m->n ? m->keys[r + (tu_next(rng) % (m->n - r))] : mask;
            break;
        }
        default: hi = tu_next(rng) & mask; break;
        }
        tu_set(his, m->key_bits, i, hi);
    }
    assert_int_equal(harmonia_range_count(tree, &cpu, queries, his, q_n, counts), HARMONIA_OK);
    for (uint64_t i = 0; i < q_n; i++) {
        uint64_t lo = tu_get(queries, m->key_bits, i), hi = tu_get(his, m->key_bits, i);
        if (counts[i] != tu_model_range_count(m, lo, hi))
            fail_msg("range count [%llu, %llu]: %llu, model %llu", (unsigned long long)lo,
                     (unsigned long long)hi, (unsigned long long)counts[i],
                     (unsigned long long)tu_model_range_count(m, lo, hi));
    }
    /* collect: only a prefix of the ranges, to bound the output */
    uint64_t c_n = q_n < 200 ? q_n : 200;
    assert_int_equal(harmonia_range_collect(tree, &cpu, queries, his, c_n, offsets, NULL, NULL), HARMONIA_OK);
    assert_int_equal(offsets[0], 0);
    for (uint64_t i = 0; i < c_n; i++)
        assert_int_equal(offsets[i + 1] - offsets[i], counts[i]);
    uint64_t total = offsets[c_n];
    void *pair_keys = malloc(total * kb + 8), *pair_values = malloc(total * kb + 8);
    assert_true(pair_keys && pair_values);
    assert_int_equal(harmonia_range_collect(tree, &cpu, queries, his, c_n, offsets, pair_keys, pair_values),
                     HARMONIA_OK);
    for (uint64_t i = 0; i < c_n; i++) {
        uint64_t r = tu_model_rank(m, tu_get(queries, m->key_bits, i));
        for (uint64_t j = offsets[i]; j < offsets[i + 1]; j++, r++) {
            if (tu_get(pair_keys, m->key_bits, j) != m->keys[r] ||
                tu_get(pair_values, m->key_bits, j) != m->values[r])
                fail_msg("range collect %llu: pair %llu is (%llu, %llu), model (%llu, %llu)",
                         (unsigned long long)i, (unsigned long long)(j - offsets[i]),
                         (unsigned long long)tu_get(pair_keys, m->key_bits, j),
                         (unsigned long long)tu_get(pair_values, m->key_bits, j),
                         (unsigned long long)m->keys[r], (unsigned long long)m->values[r]);
        }
    }
    free(pair_keys);
    free(pair_values);
    free(queries);
    free(his);
    free(out_keys);
    free(out_values);
    free(found);
    free(counts);
    free(offsets);
    free(keys);
    free(values);
    harmonia_free(tree);
}

static void run_one(uint32_t key_bits, uint64_t size, uint32_t fanout, uint32_t leaf_size, double fill,
                    tu_dist dist, uint64_t n_queries, uint64_t *rng)
{
    tu_model m;
    tu_model_make(&m, key_bits, size, dist, rng);
    check_tree_against_model(&m, fanout, leaf_size, fill, n_queries, rng);
    tu_model_free(&m);
}

/* 32-bit positions number at most 2^32 queries: more is INVALID with a message, before any array
 * is read or written (the arrays here are 8 bytes long); NULL positions are INVALID too. */
static void test_positions32_limits(void **state)
{
    (void)state;
    const uint64_t keys[3] = {1, 5, 9};
    harmonia_build_config cfg;
    harmonia_build_config_init(&cfg);
    cfg.key_bits = 64;
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_build(&cfg, keys, NULL, 3, &tree), HARMONIA_OK);
    uint64_t q = 5, v = 7;
    uint8_t f = 3;
    uint32_t p = 11;
    for (int backend = 0; backend < 2; backend++) { /* the default (auto) and the CPU engine */
        harmonia_query_config c;
        harmonia_query_config_init(&c);
        if (backend)
            c.backend = HARMONIA_BACKEND_CPU;
        assert_int_equal(harmonia_lookup_unordered32(tree, &c, &q, HARMONIA_POSITIONS32_MAX_COUNT + 1, &v, &f, &p),
                         HARMONIA_ERR_INVALID);
        assert_non_null(strstr(harmonia_last_error(tree), "32-bit positions"));
        assert_int_equal(harmonia_lookup_unordered32_async(tree, &c, &q, UINT64_MAX, &v, &f, &p, NULL),
                         HARMONIA_ERR_INVALID);
        assert_true(v == 7 && f == 3 && p == 11);
        assert_int_equal(harmonia_lookup_unordered32(tree, &c, &q, 1, &v, &f, NULL), HARMONIA_ERR_INVALID);
        assert_int_equal(harmonia_lookup_unordered32(tree, NULL, &q, 0, NULL, NULL, NULL), HARMONIA_OK);
    }
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup_unordered32(tree, &cpu, &q, 1, &v, &f, &p), HARMONIA_OK);
    assert_true(v == 1 && f == 1 && p == 0); /* values default to input positions: key 5 is pair 1 */
    harmonia_free(tree);
}

/* Sizes 0, 1 and just around every boundary where a level fills up: L, L*F, L*F*F. */
static void test_boundary_sizes(void **state)
{
    (void)state;
    uint64_t rng = 42;
    for (unsigned w = 0; w < 2; w++)
        for (unsigned fi = 0; fi < 5; fi++)
            for (unsigned li = 0; li < 5; li++) {
                uint32_t key_bits = w ? 64 : 32, F = node_sizes[fi], L = node_sizes[li];
                uint64_t cuts[] = {0, 1, 2, L - 1, L, L + 1, (uint64_t)L * F - 1, (uint64_t)L * F,
                                   (uint64_t)L * F + 1, (uint64_t)L * F * 2 + 1};
                for (unsigned c = 0; c < sizeof cuts / sizeof cuts[0]; c++)
                    run_one(key_bits, cuts[c], F, L, 1.0, (tu_dist)(tu_next(&rng) % TU_DIST_COUNT), 64, &rng);
                if ((uint64_t)L * F * F < 300000) /* third level boundary */
                    run_one(key_bits, (uint64_t)L * F * F + 1, F, L, 1.0, TU_UNIFORM, 256, &rng);
            }
}

/* Thousands of random small and medium trees over every parameter. */
static void test_random_trees(void **state)
{
    (void)state;
    uint64_t rng = 7;
    for (unsigned i = 0; i < 2000; i++) {
        uint32_t key_bits = tu_next(&rng) % 2 ? 64 : 32;
        uint32_t F = node_sizes[tu_next(&rng) % 5], L = node_sizes[tu_next(&rng) % 5];
        double fill = fills[tu_next(&rng) % 4];
        uint64_t size = tu_next(&rng) % 4 ? tu_next(&rng) % 600 : tu_next(&rng) % 20000;
        run_one(key_bits, size, F, L, fill, (tu_dist)(tu_next(&rng) % TU_DIST_COUNT), 64, &rng);
    }
}

/* A few large trees, about 10^6 keys, both widths. */
static void test_large_trees(void **state)
{
    (void)state;
    uint64_t rng = 99;
    run_one(64, 1000000, 16, 16, 1.0, TU_UNIFORM, 200000, &rng);
    run_one(32, 1000000, 64, 32, 0.75, TU_CLUSTERED, 200000, &rng);
    run_one(64, 700000, 8, 8, 0.5, TU_DENSE, 100000, &rng);
    run_one(32, 900000, 128, 128, 1.0, TU_EXTREMES, 100000, &rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions32_limits),
        cmocka_unit_test(test_boundary_sizes),
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_large_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
