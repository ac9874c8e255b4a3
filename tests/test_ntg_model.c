/* test_ntg_model.c — the NTG model (ntg/ntg_model.h) on small hand-made trees against step counts
 * computed by hand, the PSA-order simulation, the stored group size through save and load, the
 * profiling workload, and the measurement's answer without a GPU (with one: a small real sweep). */
#include <math.h>
#include <unistd.h>

#include "tests/test_util.h"

#define MAX_KEY UINT64_MAX

static harmonia_tree *build_keys(const uint64_t *keys, uint64_t n, uint32_t fanout, uint32_t leaf)
{
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.key_bits = 64;
    config.fanout = fanout;
    config.leaf_size = leaf;
    config.leaf_fill = 1.0;
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_build(&config, keys, NULL, n, &tree), HARMONIA_OK);
    assert_int_equal(harmonia_check(tree), HARMONIA_OK);
    return tree;
}

static void model(harmonia_tree *tree, const uint64_t *queries, uint64_t n, int psa, uint32_t psa_bits,
                  uint32_t levels, harmonia_ntg_model_result *r)
{
    harmonia_ntg_config config;
    harmonia_ntg_config_init(&config);
    harmonia_query_config query;
    harmonia_query_config_init(&query);
    query.psa = psa;
    query.psa_bits = psa_bits;
    config.query = &query;
    config.sample = n;
    config.levels = levels;
    harmonia_status st = harmonia_ntg_model(tree, &config, queries, n, r);
    if (st != HARMONIA_OK)
        fprintf(stderr, "%s\n", harmonia_last_error(tree));
    assert_int_equal(st, HARMONIA_OK);
}

static void expect_close(double got, double want)
{
    if (fabs(got - want) > 1e-12)
        fprintf(stderr, "got %.15g, want %.15g\n", got, want);
    assert_true(fabs(got - want) <= 1e-12);
}

/* ---- tree A: F = L = 8, keys 0..63: one root over 8 full leaves (height 2) -------------------
 * Root separators 8, 16, ..., 56 (c = 8); leaf l holds 8l .. 8l+7.
 * Queries 0, 2, 4, ..., 62 (32 hits, one run). For q: root child j = q / 8, m_root = min(j+1, 7);
 * leaf pos = q mod 8, m_leaf = pos + 1 (in {1, 3, 5, 7}).
 *   G = 8 (8 warps of 4): every m <= 8, one step each level: S = 2 (root 1, leaf 1).
 *   G = 4 (4 warps of 8, warp w = q 16w .. 16w+14, j in {2w, 2w+1}): root max m = 2, 4, 6, 7
 *     -> steps 1, 1, 2, 2 (mean 1.5); leaf max 7 -> 2: S = (3 + 3 + 4 + 4) / 4 = 3.5.
 *   G = 2 (2 warps of 16): root max m 4 -> 2 and 7 -> 4 (mean 3); leaf 7 -> 4: S = (6 + 8) / 2 = 7.
 *   G = 1 (1 warp): root 7, leaf 7: S = 14.
 *   Eq. 4: ratio(4) = 2 / 3.5 * 2 = 8/7 > 1, narrow; ratio(2) = 3.5 / 7 * 2 = 1 exactly: stop.
 *   The model's choice: G = 4. ratio(1) = 7 / 14 * 2 = 1. */
static void test_tree_a(void **state)
{
    (void)state;
    uint64_t keys[64], queries[32];
    for (int i = 0; i < 64; i++)
        keys[i] = (uint64_t)i;
    for (int i = 0; i < 32; i++)
        queries[i] = 2 * (uint64_t)i;
    harmonia_tree *tree = build_keys(keys, 64, 8, 8);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.height, 2);
    assert_int_equal(info.level_nodes[1], 8);

    harmonia_ntg_model_result r;
    model(tree, queries, 32, 0, 0, 2, &r);
    assert_int_equal(r.size_count, 4);
    const uint32_t sizes[4] = {1, 2, 4, 8};
    for (int s = 0; s < 4; s++)
        assert_int_equal(r.group_sizes[s], sizes[s]);
    assert_int_equal(r.sample_queries, 32);
    assert_int_equal(r.runs, 1);
    assert_int_equal(r.first_level, 0);
    assert_int_equal(r.levels, 2);
    assert_false(r.psa);
    const double steps[4] = {14, 7, 3.5, 2}, root[4] = {7, 3, 1.5, 1}, leaf[4] = {7, 4, 2, 1};
    for (int s = 0; s < 4; s++) {
        expect_close(r.steps[s], steps[s]);
        expect_close(r.level_steps[s][0], root[s]);
        expect_close(r.level_steps[s][1], leaf[s]);
    }
    expect_close(r.ratio[3], 0);
    expect_close(r.ratio[2], 8.0 / 7.0);
    expect_close(r.ratio[1], 1.0);
    expect_close(r.ratio[0], 1.0);
    assert_int_equal(r.choice, 4);

    /* the leaves alone: S = 1, 2, 4, 7 for G = 8, 4, 2, 1: ratio(4) = 1 / 2 * 2 = 1, no gain */
    model(tree, queries, 32, 0, 0, 1, &r);
    assert_int_equal(r.first_level, 1);
    expect_close(r.steps[3], 1);
    expect_close(r.steps[2], 2);
    expect_close(r.steps[1], 4);
    expect_close(r.steps[0], 7);
    assert_int_equal(r.choice, 8);

    /* more levels than the tree has: all (2) */
    model(tree, queries, 32, 0, 0, 9, &r);
    assert_int_equal(r.levels, 2);
    assert_int_equal(r.choice, 4);
    harmonia_free(tree);
}

/* ---- tree B: F = L = 8, keys 0, 10, ..., 790 (80 keys): 10 full leaves, 2 parents of 5 leaves,
 * a root of 2 children (height 3). Leaf l holds 80l .. 80l+70. P0 separators 80 160 240 320
 * (c = 5: m = min(j+1, 4)); P1 separators 480 560 640 720; root separator 400 (c = 2: m = 1).
 * Queries by (m at the parents, m at the leaves):
 *   a = 0 (1, 1)   b = 5 (1, 2: pos 1)     c = 79 (1, 8: all 8 keys < 79)   d = 80 (2, 1)
 *   e = 399 (4, 8) f = 400 (1, 1)          g = 735 (4, 3: 720, 730 < 735)
 *   h = the maximum key (4: j clamped to 4, m = min(5, 4); 8: every key of leaf 9 is below it)
 * The run: a b d f  b a f d  a a b b  d d f f  a b c d  e f g h  a a a a  g g g g
 *   G = 8 (warps of 4): every m <= 8: S = 2.
 *   G = 4 (warps of 8): parents 1 step everywhere (m <= 4); leaves ceil(m/4): warps 1-2: 1;
 *     warp 3 (c, e, h: m 8): 2; warp 4 (g: m 3): 1. S = (2 + 2 + 3 + 2) / 4 = 2.25.
 *   G = 2 (warps of 16): warp 1 (a b d f only): parents 1 (m <= 2), leaves 1 (m <= 2): 2;
 *     warp 2: parents ceil(4/2) = 2, leaves ceil(8/2) = 4: 6. S = 4.
 *   G = 1: parents 4, leaves 8: S = 12.
 *   ratio(4) = 2 / 2.25 * 2 = 16/9, ratio(2) = 2.25 / 4 * 2 = 1.125, ratio(1) = 4 / 12 * 2 = 2/3:
 *   the choice is G = 2.
 *   With the root counted too (3 levels): +1 step for every G: 3, 3.25, 5, 13 -> choice 2.
 *   The leaves alone: 1, 1.25, 2.5, 8: ratio(2) = 1.25 / 2.5 * 2 = 1 exactly -> choice 4. */
enum { QA, QB, QC, QD, QE, QF, QG, QH };
static const uint64_t tree_b_query[8] = {0, 5, 79, 80, 399, 400, 735, MAX_KEY};
static const int tree_b_run[32] = {QA, QB, QD, QF, QB, QA, QF, QD, QA, QA, QB, QB, QD, QD, QF, QF,
                                   QA, QB, QC, QD, QE, QF, QG, QH, QA, QA, QA, QA, QG, QG, QG, QG};

static harmonia_tree *build_tree_b(void)
{
    uint64_t keys[80];
    for (int i = 0; i < 80; i++)
        keys[i] = 10 * (uint64_t)i;
    harmonia_tree *tree = build_keys(keys, 80, 8, 8);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.height, 3);
    assert_int_equal(info.level_nodes[0], 1);
    assert_int_equal(info.level_nodes[1], 2);
    assert_int_equal(info.level_nodes[2], 10);
    return tree;
}

static void test_tree_b(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b();
    uint64_t queries[32];
    for (int i = 0; i < 32; i++)
        queries[i] = tree_b_query[tree_b_run[i]];
    harmonia_ntg_model_result r;
    model(tree, queries, 32, 0, 0, 0 /* default: 2 */, &r);
    assert_int_equal(r.levels, 2);
    assert_int_equal(r.first_level, 1);
    const double steps[4] = {12, 4, 2.25, 2}, parents[4] = {4, 1.5, 1, 1}, leaves[4] = {8, 2.5, 1.25, 1};
    for (int s = 0; s < 4; s++) {
        expect_close(r.steps[s], steps[s]);
        expect_close(r.level_steps[s][0], parents[s]);
        expect_close(r.level_steps[s][1], leaves[s]);
    }
    expect_close(r.ratio[2], 16.0 / 9.0);
    expect_close(r.ratio[1], 1.125);
    expect_close(r.ratio[0], 2.0 / 3.0);
    assert_int_equal(r.choice, 2);

    model(tree, queries, 32, 0, 0, 3, &r);
    const double with_root[4] = {13, 5, 3.25, 3};
    for (int s = 0; s < 4; s++) {
        expect_close(r.steps[s], with_root[s]);
        expect_close(r.level_steps[s][0], 1);
    }
    assert_int_equal(r.choice, 2);

    model(tree, queries, 32, 0, 0, 1, &r);
    const double leaves_only[4] = {8, 2.5, 1.25, 1};
    for (int s = 0; s < 4; s++)
        expect_close(r.steps[s], leaves_only[s]);
    assert_int_equal(r.choice, 4);
    harmonia_free(tree);
}

/* Runs: a workload of 64 queries with a sample of 32 takes the first 32 (one run); a sample of 64
 * takes both runs; a sample below 32 still takes one run; a workload of 5 queries is one short run
 * (at G = 8 its warps are q0-q3 and q4). */
static void test_runs(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b();
    uint64_t queries[64];
    for (int i = 0; i < 32; i++) {
        queries[i] = tree_b_query[tree_b_run[i]];
        queries[32 + i] = tree_b_query[QA]; /* the easiest query: 1 step everywhere */
    }
    harmonia_ntg_config config;
    harmonia_ntg_config_init(&config);
    harmonia_query_config query;
    harmonia_query_config_init(&query);
    query.psa = 0;
    config.query = &query;
    harmonia_ntg_model_result r;
    config.sample = 32;
    assert_int_equal(harmonia_ntg_model(tree, &config, queries, 64, &r), HARMONIA_OK);
    assert_int_equal(r.runs, 1);
    assert_int_equal(r.window, 64);
    expect_close(r.steps[0], 12);
    config.sample = 64;
    assert_int_equal(harmonia_ntg_model(tree, &config, queries, 64, &r), HARMONIA_OK);
    assert_int_equal(r.runs, 2);
    assert_int_equal(r.sample_queries, 64);
    expect_close(r.steps[0], (12 + 2) / 2.0);
    expect_close(r.steps[1], (4 * 2 + 2 * 2) / 4.0);
    config.sample = 7;
    assert_int_equal(harmonia_ntg_model(tree, &config, queries, 64, &r), HARMONIA_OK);
    assert_int_equal(r.runs, 1);
    assert_int_equal(r.sample_queries, 32);
    /* the default sample (1000) of 64 queries: both runs */
    assert_int_equal(harmonia_ntg_model(tree, NULL, queries, 64, &r), HARMONIA_OK);
    assert_int_equal(r.runs, 2);

    /* 5 queries c a a a h: G = 8 warps {c a a a} {h}: parents 1 + 1, leaves 1 + 1 -> S = 2;
     * G = 4 and below: one warp of all 5: parents max m 4, leaves max m 8 */
    const uint64_t few[5] = {tree_b_query[QC], 0, 0, 0, MAX_KEY};
    config.sample = 1000;
    assert_int_equal(harmonia_ntg_model(tree, &config, few, 5, &r), HARMONIA_OK);
    assert_int_equal(r.runs, 1);
    assert_int_equal(r.sample_queries, 5);
    expect_close(r.steps[3], 2);
    expect_close(r.steps[2], 1 + 2);
    expect_close(r.steps[1], 2 + 4);
    expect_close(r.steps[0], 4 + 8);
    harmonia_free(tree);
}

/* PSA order: the first window sorted stably on the PSA bits. Tree B's keys span 10 bits and fill
 * 5 lines of 16 keys: Eq. 2 gives 3 bits, [7, 10). Sorting the run on those bits (bucket = q >> 7
 * & 7, ties in query order) and modelling without PSA must give the same numbers; with psa_bits =
 * 10 (every bit of the span) the sort is complete. */
static uint64_t bucket_of(uint64_t q, uint32_t begin, uint32_t end)
{
    return (q >> begin) & ((1ull << (end - begin)) - 1);
}

static void stable_sort_by_bits(uint64_t *q, int n, uint32_t begin, uint32_t end)
{
    for (int i = 1; i < n; i++) { /* insertion sort: stable */
        uint64_t x = q[i];
        int j = i - 1;
        while (j >= 0 && bucket_of(q[j], begin, end) > bucket_of(x, begin, end)) {
            q[j + 1] = q[j];
            j--;
        }
        q[j + 1] = x;
    }
}

static void expect_same_model(const harmonia_ntg_model_result *a, const harmonia_ntg_model_result *b)
{
    assert_int_equal(a->size_count, b->size_count);
    for (uint32_t s = 0; s < a->size_count; s++) {
        expect_close(a->steps[s], b->steps[s]);
        for (uint32_t k = 0; k < a->levels; k++)
            expect_close(a->level_steps[s][k], b->level_steps[s][k]);
    }
    assert_int_equal(a->choice, b->choice);
}

static void test_psa_order(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b();
    uint64_t queries[32], sorted[32];
    for (int i = 0; i < 32; i++) /* reversed, so that sorting matters */
        queries[i] = sorted[i] = tree_b_query[tree_b_run[31 - i]];
    harmonia_ntg_model_result with_psa, without;
    model(tree, queries, 32, 1, 0, 2, &with_psa);
    assert_true(with_psa.psa);
    assert_int_equal(with_psa.psa_begin_bit, 7);
    assert_int_equal(with_psa.psa_end_bit, 10);
    assert_int_equal(with_psa.window, 32);
    stable_sort_by_bits(sorted, 32, 7, 10);
    model(tree, sorted, 32, 0, 0, 2, &without);
    expect_same_model(&with_psa, &without);

    model(tree, queries, 32, 1, 10, 2, &with_psa);
    assert_int_equal(with_psa.psa_begin_bit, 0);
    assert_int_equal(with_psa.psa_end_bit, 10);
    for (int i = 0; i < 32; i++)
        sorted[i] = queries[i];
    stable_sort_by_bits(sorted, 32, 0, 10);
    model(tree, sorted, 32, 0, 0, 2, &without);
    expect_same_model(&with_psa, &without);

    /* PSA auto follows the engine: off for results in query order, on for unordered results */
    harmonia_ntg_config config;
    harmonia_ntg_config_init(&config);
    config.sample = 32;
    assert_int_equal(harmonia_ntg_model(tree, &config, queries, 32, &without), HARMONIA_OK);
    assert_false(without.psa);
    config.unordered = true;
    assert_int_equal(harmonia_ntg_model(tree, &config, queries, 32, &with_psa), HARMONIA_OK);
    assert_true(with_psa.psa);
    harmonia_free(tree);
}

/* Wide trees: G stops at 32 (F = 64, 128); every G's steps are finite and the choice is a size. */
static void test_sizes_of_wide_trees(void **state)
{
    (void)state;
    uint64_t rng = 7;
    tu_model m;
    tu_model_make(&m, 64, 20000, TU_UNIFORM, &rng);
    void *keys, *values;
    tu_model_arrays(&m, &keys, &values, 1, &rng);
    const uint32_t fanouts[5] = {8, 16, 32, 64, 128}, counts[5] = {4, 5, 6, 6, 6};
    uint64_t queries[4000];
    for (int i = 0; i < 4000; i++)
        queries[i] = tu_query_key(&m, &rng);
    for (int f = 0; f < 5; f++) {
        harmonia_build_config config;
        harmonia_build_config_init(&config);
        config.fanout = fanouts[f];
        config.leaf_size = 16;
        harmonia_tree *tree = NULL;
        assert_int_equal(harmonia_build(&config, keys, values, m.n, &tree), HARMONIA_OK);
        harmonia_ntg_model_result r;
        assert_int_equal(harmonia_ntg_model(tree, NULL, queries, 4000, &r), HARMONIA_OK);
        assert_int_equal(r.size_count, counts[f]);
        assert_int_equal(r.group_sizes[r.size_count - 1], fanouts[f] < 32 ? fanouts[f] : 32);
        assert_int_equal(r.runs, 31);
        bool found = false;
        for (uint32_t s = 0; s < r.size_count; s++) {
            assert_true(r.steps[s] >= 1.0 * r.levels);
            if (s + 1 < r.size_count) /* narrowing never takes fewer steps */
                assert_true(r.steps[s] >= r.steps[s + 1]);
            found |= r.group_sizes[s] == r.choice;
        }
        assert_true(found);
        harmonia_free(tree);
    }
    free(keys);
    free(values);
    tu_model_free(&m);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b();
    uint64_t q = 5;
    harmonia_ntg_model_result r;
    harmonia_ntg_measurement mr;
    assert_int_equal(harmonia_ntg_model(NULL, NULL, &q, 1, &r), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_ntg_model(tree, NULL, NULL, 1, &r), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_ntg_model(tree, NULL, &q, 0, &r), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(tree), "no queries"));
    assert_int_equal(harmonia_ntg_model(tree, NULL, &q, 1, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_ntg_measure(NULL, NULL, &q, 1, &mr), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_ntg_measure(tree, NULL, &q, 0, &mr), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_sample_keys(NULL, 1, 0, &q), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_sample_keys(tree, 1, 0, NULL), HARMONIA_ERR_INVALID);
    harmonia_free(tree);

    /* an empty tree: no keys to sample, but the model runs (one leaf, one comparison) */
    harmonia_tree *empty = build_keys(NULL, 0, 8, 8);
    assert_int_equal(harmonia_sample_keys(empty, 4, 1, &q), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(empty), "no keys"));
    assert_int_equal(harmonia_ntg_model(empty, NULL, &q, 1, &r), HARMONIA_OK);
    assert_int_equal(r.levels, 1);
    expect_close(r.steps[0], 1);
    harmonia_free(empty);
}

/* The stored choice: validated, kept by save and load, used as harmonia_info reports it. */
static void test_stored_choice_survives_save_and_load(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b(); /* F = 8 */
    assert_int_equal(harmonia_set_group_size(tree, 3), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(tree), "NTG group size 3"));
    assert_int_equal(harmonia_set_group_size(tree, 16), HARMONIA_ERR_INVALID); /* above F */
    assert_int_equal(harmonia_set_group_size(NULL, 2), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_set_group_size(tree, 4), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.ntg_group_size, 4);

    char dir[] = "/tmp/harmonia-ntg-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.idx", dir);
    assert_int_equal(harmonia_save(tree, path), HARMONIA_OK);
    harmonia_free(tree);
    harmonia_tree *loaded = NULL;
    assert_int_equal(harmonia_load(path, NULL, &loaded), HARMONIA_OK);
    assert_int_equal(harmonia_info(loaded, &info), HARMONIA_OK);
    assert_int_equal(info.ntg_group_size, 4);
    /* a loaded (mapped) tree saved over its own file, with another choice, then cleared */
    assert_int_equal(harmonia_set_group_size(loaded, 1), HARMONIA_OK);
    assert_int_equal(harmonia_save(loaded, path), HARMONIA_OK);
    harmonia_free(loaded);
    assert_int_equal(harmonia_load(path, NULL, &loaded), HARMONIA_OK);
    assert_int_equal(harmonia_info(loaded, &info), HARMONIA_OK);
    assert_int_equal(info.ntg_group_size, 1);
    assert_int_equal(harmonia_set_group_size(loaded, 0), HARMONIA_OK);
    assert_int_equal(harmonia_save(loaded, path), HARMONIA_OK);
    harmonia_free(loaded);
    assert_int_equal(harmonia_load(path, NULL, &loaded), HARMONIA_OK);
    assert_int_equal(harmonia_info(loaded, &info), HARMONIA_OK);
    assert_int_equal(info.ntg_group_size, 0);
    harmonia_free(loaded);
    unlink(path);
    rmdir(dir);

    /* F = 128 still stops at 32 */
    uint64_t keys[300];
    for (int i = 0; i < 300; i++)
        keys[i] = 3 * (uint64_t)i;
    harmonia_tree *wide = build_keys(keys, 300, 128, 8);
    assert_int_equal(harmonia_set_group_size(wide, 64), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_set_group_size(wide, 32), HARMONIA_OK);
    harmonia_free(wide);
}

static void test_choice(void **state)
{
    (void)state;
    harmonia_ntg_model_result r;
    harmonia_ntg_measurement mr;
    memset(&r, 0, sizeof r);
    memset(&mr, 0, sizeof mr);
    r.choice = 4;
    assert_int_equal(harmonia_ntg_choice(&r, NULL), 4);
    assert_int_equal(harmonia_ntg_choice(&r, &mr), 4); /* no measured best */
    mr.best = 2;
    assert_int_equal(harmonia_ntg_choice(&r, &mr), 2);
    assert_int_equal(harmonia_ntg_choice(NULL, &mr), 2);
    assert_int_equal(harmonia_ntg_choice(NULL, NULL), 0);
}

/* The profiling workload: hits only, deterministic for a seed, another seed another workload. */
static void test_sample_keys(void **state)
{
    (void)state;
    harmonia_tree *tree = build_tree_b();
    uint64_t a[1000], b[1000], c[1000], values[1000];
    uint8_t found[1000];
    assert_int_equal(harmonia_sample_keys(tree, 1000, 42, a), HARMONIA_OK);
    assert_int_equal(harmonia_sample_keys(tree, 1000, 42, b), HARMONIA_OK);
    assert_int_equal(harmonia_sample_keys(tree, 1000, 43, c), HARMONIA_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup(tree, &q, a, 1000, values, found), HARMONIA_OK);
    int seen[80] = {0};
    for (int i = 0; i < 1000; i++) {
        assert_true(found[i]);
        seen[a[i] / 10]++;
    }
    int distinct = 0;
    for (int k = 0; k < 80; k++)
        distinct += seen[k] > 0;
    assert_true(distinct >= 75); /* 1000 draws from 80 keys miss almost none */
    assert_int_equal(harmonia_sample_keys(tree, 0, 1, NULL), HARMONIA_OK);
    harmonia_free(tree);
}

/* Without a GPU the measurement says why; with one, a small sweep of every G (same results). */
static void test_measure(void **state)
{
    (void)state;
    uint64_t rng = 11;
    tu_model m;
    tu_model_make(&m, 64, 50000, TU_UNIFORM, &rng);
    void *keys, *values;
    tu_model_arrays(&m, &keys, &values, 1, &rng);
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.fanout = 32;
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_build(&bc, keys, values, m.n, &tree), HARMONIA_OK);
    uint64_t *queries = malloc(100000 * sizeof *queries);
    assert_non_null(queries);
    assert_int_equal(harmonia_sample_keys(tree, 100000, 5, queries), HARMONIA_OK);
    harmonia_ntg_config config;
    harmonia_ntg_config_init(&config);
    config.runs = 3;
    harmonia_ntg_measurement mr;
    harmonia_status st = harmonia_ntg_measure(tree, &config, queries, 100000, &mr);
    if (harmonia_device_probe(NULL) != HARMONIA_OK) {
        assert_int_equal(st, HARMONIA_ERR_NO_DEVICE);
        assert_true(harmonia_last_error(tree)[0] != '\0');
        assert_int_equal(mr.best, 0);
        assert_int_equal(mr.size_count, 6);
    } else {
        if (st != HARMONIA_OK)
            fprintf(stderr, "%s\n", harmonia_last_error(tree));
        assert_int_equal(st, HARMONIA_OK);
        assert_int_equal(mr.size_count, 6);
        assert_int_equal(mr.found, 100000);
        bool found = false;
        for (uint32_t s = 0; s < mr.size_count; s++) {
            assert_true(mr.seconds[s] > 0);
            assert_true(mr.queries_per_second[s] > 0);
            found |= mr.group_sizes[s] == mr.best;
        }
        assert_true(found);
        config.unordered = true; /* PSA on, results in PSA order */
        assert_int_equal(harmonia_ntg_measure(tree, &config, queries, 100000, &mr), HARMONIA_OK);
        assert_true(mr.psa);
        assert_int_equal(mr.found, 100000);
    }
    free(queries);
    harmonia_free(tree);
    free(keys);
    free(values);
    tu_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_a),
        cmocka_unit_test(test_tree_b),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_psa_order),
        cmocka_unit_test(test_sizes_of_wide_trees),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_stored_choice_survives_save_and_load),
        cmocka_unit_test(test_choice),
        cmocka_unit_test(test_sample_keys),
        cmocka_unit_test(test_measure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
