/* test_checker.c — the integrity checker finds each kind of broken invariant of the layout and says
 * which, in words: one deliberate corruption at a time on a valid tree, restored after each. */
#include "tests/test_util.h"
#include "harmonia/tree_internal.h"
#include "prefix_sum/prefix_sum.h"

static harmonia_tree *make_tree(uint32_t key_bits, uint64_t n, uint32_t fanout, uint32_t leaf_size, double fill)
{
    uint64_t rng = 11;
    tu_model m;
    tu_model_make(&m, key_bits, n, TU_UNIFORM, &rng);
    void *k, *v;
    tu_model_arrays(&m, &k, &v, 1, &rng);
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    c.key_bits = key_bits;
    c.fanout = fanout;
    c.leaf_size = leaf_size;
    c.leaf_fill = fill;
    harmonia_tree *t = NULL;
    assert_int_equal(harmonia_build(&c, k, v, m.n, &t), HARMONIA_OK);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    free(k);
    free(v);
    tu_model_free(&m);
    return t;
}

/* Expects the check to fail with a message containing `words`, then restores a saved word. */
static void expect_corrupt(harmonia_tree *t, const char *words)
{
    harmonia_status st = harmonia_check(t);
    if (st != HARMONIA_ERR_CORRUPT)
        fail_msg("corruption '%s' not detected (status %d)", words, (int)st);
    if (!strstr(harmonia_last_error(t), words))
        fail_msg("message '%s' does not mention '%s'", harmonia_last_error(t), words);
}

static void test_leaf_corruptions(void **state)
{
    (void)state;
    for (int w = 0; w < 2; w++) {
        uint32_t bits = w ? 64 : 32;
        harmonia_tree *t = make_tree(bits, 5000, 16, 16, 0.75);
        kr_tree *kr = &t->kr;
        uint64_t leaf = 37, base = kr_leaf_key_offset(kr, leaf);
        uint64_t saved0 = kr_load(kr->keys, bits, base), saved1 = kr_load(kr->keys, bits, base + 1);
        /* two keys swapped inside a leaf */
        kr_store(kr->keys, bits, base, saved1);
        kr_store(kr->keys, bits, base + 1, saved0);
        expect_corrupt(t, "leaf 37");
        kr_store(kr->keys, bits, base, saved0);
        kr_store(kr->keys, bits, base + 1, saved1);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        /* first key of a leaf not above the previous leaf's last */
        uint64_t prev_last = kr_load(kr->keys, bits, kr_leaf_key_offset(kr, leaf - 1) +
                                                     (kr->leaf_rank[leaf] - kr->leaf_rank[leaf - 1]) - 1);
        kr_store(kr->keys, bits, base, prev_last);
        expect_corrupt(t, "not above the last key");
        kr_store(kr->keys, bits, base, saved0);
        /* padding key and padding value */
        uint64_t n = kr->leaf_rank[leaf + 1] - kr->leaf_rank[leaf];
        assert_true(n < kr->leaf_size);
        kr_store(kr->keys, bits, base + kr->leaf_size - 1, 5);
        expect_corrupt(t, "padding slot");
        kr_store(kr->keys, bits, base + kr->leaf_size - 1, kr_max_key(bits));
        kr_store(kr->leaf_values, bits, leaf * kr->leaf_size + kr->leaf_size - 1, 5);
        expect_corrupt(t, "padding slot");
        kr_store(kr->leaf_values, bits, leaf * kr->leaf_size + kr->leaf_size - 1, 0);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        harmonia_free(t);
    }
}

static void test_internal_corruptions(void **state)
{
    (void)state;
    harmonia_tree *t = make_tree(64, 20000, 8, 8, 1.0);
    kr_tree *kr = &t->kr;
    uint64_t node = kr->level_start[kr->height - 2] + 3; /* a parent of leaves */
    uint64_t slot = node * kr->fanout;
    uint64_t saved = kr_load(kr->keys, 64, slot);
    kr_store(kr->keys, 64, slot, saved + 1); /* separator above its right child's smallest key */
    expect_corrupt(t, "does not lie between");
    kr_store(kr->keys, 64, slot, saved);
    kr_store(kr->keys, 64, slot + 1, saved); /* separators not increasing */
    expect_corrupt(t, "does not exceed");
    harmonia_free(t);
    t = make_tree(64, 20000, 8, 8, 1.0);
    kr = &t->kr;
    /* a padding slot of an internal node with fewer than F children */
    uint64_t p = 0;
    while (kr->first_child[p + 1] - kr->first_child[p] == kr->fanout)
        p++;
    kr_store(kr->keys, 64, p * kr->fanout + kr->fanout - 1, 1);
    expect_corrupt(t, "padding slot");
    kr_store(kr->keys, 64, p * kr->fanout + kr->fanout - 1, UINT64_MAX);
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    harmonia_free(t);
}

static void test_structure_corruptions(void **state)
{
    (void)state;
    harmonia_tree *t = make_tree(32, 20000, 8, 16, 1.0);
    kr_tree *kr = &t->kr;
    /* first_child: one node with a child too many */
    uint32_t saved = kr->first_child[5];
    kr->first_child[5] = saved + 1;
    expect_corrupt(t, "prefix sums");
    kr->first_child[5] = saved;
    saved = kr->first_child[0];
    kr->first_child[0] = 2;
    expect_corrupt(t, "first_child[0]");
    kr->first_child[0] = saved;
    /* leaf ranks */
    uint64_t r = kr->leaf_rank[10];
    kr->leaf_rank[10] = kr->leaf_rank[11];
    expect_corrupt(t, "leaf 9 holds");
    kr->leaf_rank[10] = r;
    kr->n_keys++;
    expect_corrupt(t, "leaf ranks");
    kr->n_keys--;
    /* levels */
    uint64_t ls = kr->level_start[1];
    kr->level_start[1] = 2;
    expect_corrupt(t, "root level");
    kr->level_start[1] = ls;
    kr->n_nodes++;
    expect_corrupt(t, "node counts");
    kr->n_nodes--;
    kr->height = 0;
    expect_corrupt(t, "height");
    kr->height = 99;
    expect_corrupt(t, "height");
    kr->height = 5; /* restored enough to free */
    harmonia_free(t);
}

/* The even share (prefix_sum.h): a first-child array that keeps every other sentence of the
 * invariant (child counts in [2, F], each level's first child) but moves one child from one node to
 * its neighbour is corrupt: the GPU kernels compute children from each level's closed form. */
static void test_uneven_share(void **state)
{
    (void)state;
    harmonia_tree *t = make_tree(32, 20000, 8, 16, 1.0);
    kr_tree *kr = &t->kr;
    assert_true(kr->height >= 3);
    /* two neighbours of the leaves' parents' level, the first able to take a child, the second to
     * give one */
    const uint64_t first = kr->level_start[kr->height - 2], end = kr->level_start[kr->height - 1];
    uint64_t i = first;
    while (i + 2 < end && !(kr->first_child[i + 1] - kr->first_child[i] < kr->fanout &&
                            kr->first_child[i + 2] - kr->first_child[i + 1] > 2))
        i++;
    assert_true(i + 2 < end);
    const uint32_t saved = kr->first_child[i + 1];
    kr->first_child[i + 1] = saved + 1;
    expect_corrupt(t, "evenly");
    kr->first_child[i + 1] = saved;
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    harmonia_free(t);
}

/* Each level's closed form (ps_levels, ps_level_children) gives every entry of the array ps_build
 * writes, and every node's child count, over shapes of every remainder: what the kernels compute. */
static void test_closed_form(void **state)
{
    (void)state;
    const uint32_t fanouts[] = {4, 5, 8, 16, 33};
    for (size_t f = 0; f < sizeof fanouts / sizeof fanouts[0]; f++)
        for (uint64_t leaves = 1; leaves < 3000; leaves += leaves < 80 ? 1 : 97) {
            const uint32_t F = fanouts[f];
            /* the planner's shape: each level ceil(children / F) nodes */
            uint64_t counts[HARMONIA_MAX_LEVELS], n = leaves;
            uint32_t levels = 0;
            counts[levels++] = n;
            while (n > 1) {
                n = (n + F - 1) / F;
                counts[levels++] = n;
            }
            uint64_t level_start[HARMONIA_MAX_LEVELS + 1];
            level_start[0] = 0;
            for (uint32_t l = 0; l < levels; l++)
                level_start[l + 1] = level_start[l] + counts[levels - 1 - l];
            const uint32_t height = levels;
            const uint64_t n_internal = level_start[height - 1];
            uint32_t *fc = malloc((n_internal + 1) * sizeof(uint32_t));
            assert_non_null(fc);
            ps_build(fc, level_start, height);
            char message[256];
            assert_true(ps_check(fc, level_start, height, F, message, sizeof message));
            ps_level lv[HARMONIA_MAX_LEVELS];
            ps_levels(level_start, height, lv);
            for (uint32_t l = 0; l + 1 < height; l++)
                for (uint64_t node = level_start[l]; node < level_start[l + 1]; node++) {
                    uint32_t last = 0;
                    assert_int_equal(ps_level_children(&lv[l], (uint32_t)node, &last), fc[node]);
                    assert_int_equal(last + 1, fc[node + 1] - fc[node]);
                }
            free(fc);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf_corruptions),
        cmocka_unit_test(test_internal_corruptions),
        cmocka_unit_test(test_structure_corruptions),
        cmocka_unit_test(test_uneven_share),
        cmocka_unit_test(test_closed_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
