/* test_concurrent.c — queries during updates on the CPU engine (issue 15, item 2; the harness is
 * concurrent_harness.h): three query threads (lookups, lower bounds, range counts with the CPU
 * backend, OpenMP teams of 1 and 2) against a built tree and against a tree loaded from a mapped
 * file, while the main thread applies 14 batches (in place, splits, removed leaves, the previous
 * layout kept and freed); every call's results are one version's. Also: two updates of one tree
 * from two threads at once (the second waits; both apply). Runs under ThreadSanitizer in
 * scripts/test.sh. The GPU engine: test_gpu_concurrent.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/concurrent_harness.h"

static harmonia_status run_cpu(void *context, harmonia_tree *tree, const hc_world *w, hc_kind kind, unsigned call,
                               hc_results *r)
{
    (void)context;
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_CPU;
    c.threads = 1 + (int)(call % 2);
    switch (kind) {
    case HC_LOOKUP:
        return harmonia_lookup(tree, &c, w->queries, HC_QUERIES, r->a, r->found);
    case HC_LOWER_BOUND:
        return harmonia_lower_bound(tree, &c, w->queries, HC_QUERIES, r->a, r->b, r->found);
    default:
        return harmonia_range_count(tree, &c, w->lo, w->hi, HC_QUERIES, r->a);
    }
}

static harmonia_tree *build_initial(const hc_world *w)
{
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.leaf_fill = 0.7;
    bc.input_sorted = true;
    bc.threads = 2;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, w->versions[0].keys, w->versions[0].values, w->versions[0].n, &tree) != HARMONIA_OK)
        fail_msg("build: %s", harmonia_last_error(NULL));
    return tree;
}

static void test_queries_during_updates(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(15);
    harmonia_tree *tree = build_initial(w);
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 2;
    bool in_place, relayout, blocking;
    hc_run_updates(tree, w, run_cpu, NULL, 3, &uc, &in_place, &relayout, &blocking);
    assert_true(in_place);  /* both kinds of batch ran under the readers */
    assert_true(relayout);
    assert_false(blocking); /* no device copy */
    harmonia_free(tree);
    hc_world_free(w);
}

/* A tree that reads a mapped index file: its first batch leaves the mapping to the readers of the
 * version before, unmapped once they are done. */
static void test_queries_during_updates_of_a_loaded_tree(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(16);
    harmonia_tree *built = build_initial(w);
    char path[] = "/tmp/harmonia-concurrent-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(harmonia_save(built, path), HARMONIA_OK);
    harmonia_free(built);
    harmonia_tree *tree = NULL;
    assert_int_equal(harmonia_load(path, NULL, &tree), HARMONIA_OK);
    unlink(path);
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 1;
    bool in_place, relayout, blocking;
    hc_run_updates(tree, w, run_cpu, NULL, 2, &uc, &in_place, &relayout, &blocking);
    harmonia_free(tree);
    hc_world_free(w);
}

typedef struct updater_arg {
    harmonia_tree *tree;
    const hc_batch *batch;
    harmonia_status status;
} updater_arg;

static void *updater(void *p)
{
    updater_arg *a = p;
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 1;
    a->status = harmonia_update(a->tree, &uc, a->batch->kinds, a->batch->keys, a->batch->values, a->batch->count, NULL);
    return NULL;
}

/* Two updates of one tree at once: the second waits for the first, both apply (the batches touch
 * disjoint keys, so either order gives the same tree). */
static void test_two_updates_at_once(void **state)
{
    (void)state;
    hc_world *w = hc_world_make(17);
    harmonia_tree *tree = build_initial(w);
    hc_batch b[2];
    uint64_t rng = 99;
    for (int k = 0; k < 2; k++) {
        b[k].count = 2000;
        b[k].kinds = malloc(b[k].count);
        b[k].keys = malloc(b[k].count * sizeof(uint64_t));
        b[k].values = malloc(b[k].count * sizeof(uint64_t));
        for (uint64_t i = 0; i < b[k].count; i++) {
            b[k].kinds[i] = i % 3 == 0 ? HARMONIA_OP_DELETE : HARMONIA_OP_UPSERT;
            b[k].keys[i] = i % 3 == 0 ? 8 * (2 * i + (uint64_t)k) : 8 * (tu_next(&rng) % HC_KEYS) + 2 + 4 * (uint64_t)k;
            b[k].values[i] = tu_next(&rng);
        }
    }
    tu_model expect;
    hc_copy_model(&expect, &w->versions[0], 4001);
    for (int k = 0; k < 2; k++)
        for (uint64_t i = 0; i < b[k].count; i++)
            hc_apply_op(&expect, b[k].kinds[i], b[k].keys[i], b[k].values[i]);
    pthread_t ids[2];
    updater_arg args[2];
    for (int k = 0; k < 2; k++) {
        args[k] = (updater_arg){tree, &b[k], HARMONIA_ERR_INVALID};
        assert_int_equal(pthread_create(&ids[k], NULL, updater, &args[k]), 0);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(ids[k], NULL);
        assert_int_equal(args[k].status, HARMONIA_OK);
    }
    assert_int_equal(harmonia_check(tree), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(tree, &info), HARMONIA_OK);
    assert_int_equal(info.key_count, expect.n);
    assert_int_equal(info.version, 2);
    uint64_t *values = malloc(expect.n * sizeof(uint64_t));
    uint8_t *found = malloc(expect.n);
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup(tree, &c, expect.keys, expect.n, values, found), HARMONIA_OK);
    for (uint64_t i = 0; i < expect.n; i++) {
        assert_int_equal(found[i], 1);
        assert_int_equal(values[i], expect.values[i]);
    }
    free(values);
    free(found);
    free(expect.keys);
    free(expect.values);
    for (int k = 0; k < 2; k++) {
        free(b[k].kinds);
        free(b[k].keys);
        free(b[k].values);
    }
    harmonia_free(tree);
    hc_world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_during_updates),
        cmocka_unit_test(test_queries_during_updates_of_a_loaded_tree),
        cmocka_unit_test(test_two_updates_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
