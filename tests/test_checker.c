/* test_checker.c — the integrity checker finds each kind of broken invariant of the layout and says
 * which, in words: one deliberate corruption at a time on a valid tree, restored after each. */
#include "tests/test_util.h"
#include "harmonia/tree_internal.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaf_corruptions),
        cmocka_unit_test(test_internal_corruptions),
        cmocka_unit_test(test_structure_corruptions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
