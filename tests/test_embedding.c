/* test_embedding.c — the parts of the embedding contract that need no GPU, through libharmonia.so
 * and the public header as an engine uses them: configs of another header version (a size field
 * set by the init functions: an uninitialised config is INVALID, a newer header's unknown options
 * UNSUPPORTED, its zero ones accepted), the caller's OpenMP settings left as they were by builds,
 * updates and queries with their own thread counts, the device and allocator checks, the device
 * bytes of a tree, and what the asynchronous calls answer without a GPU. The GPU side is
 * test_gpu_embedding.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include <harmonia.h>

static harmonia_tree *build(uint64_t n, int threads)
{
    uint64_t *keys = malloc(n * sizeof *keys);
    assert_non_null(keys);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = (i * 0x9E3779B97F4A7C15ull) >> 8; /* distinct: an odd multiplier, 56 bits kept */
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    c.threads = threads;
    harmonia_tree *t = NULL;
    if (harmonia_build(&c, keys, NULL, n, &t) != HARMONIA_OK)
        fail_msg("build: %s", harmonia_last_error(NULL));
    free(keys);
    return t;
}

/* A config made by a newer header: this one's fields, then options this library does not know. */
typedef struct newer_query_config {
    harmonia_query_config known;
    uint64_t unknown[4];
} newer_query_config;

static void test_config_sizes(void **state)
{
    (void)state;
    harmonia_tree *t = build(10000, 0);
    uint64_t q[4] = {0, 1, 2, 3}, v[4];
    uint8_t f[4];
    /* the init functions set the size */
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    assert_int_equal(c.size, sizeof c);
    c.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup(t, &c, q, 4, v, f), HARMONIA_OK);
    /* never initialised: INVALID, saying so */
    harmonia_query_config zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(harmonia_lookup(t, &zero, q, 4, v, f), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(t), "harmonia_query_config_init"));
    /* a newer header: its init (the same library function, a larger size) zeroes what it does not
     * know, and the library takes the config; an unknown option set is UNSUPPORTED */
    newer_query_config newer;
    memset(&newer, 0xA5, sizeof newer);
    harmonia_query_config_init_sized(&newer.known, sizeof newer);
    assert_int_equal(newer.known.size, sizeof newer);
    for (int i = 0; i < 4; i++)
        assert_int_equal(newer.unknown[i], 0);
    newer.known.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup(t, &newer.known, q, 4, v, f), HARMONIA_OK);
    newer.unknown[2] = 1;
    assert_int_equal(harmonia_lookup(t, &newer.known, q, 4, v, f), HARMONIA_ERR_UNSUPPORTED);
    assert_non_null(strstr(harmonia_last_error(t), "newer header"));
    /* the other configs: built, updated and loaded with a zero one are INVALID too */
    harmonia_build_config bc;
    memset(&bc, 0, sizeof bc);
    harmonia_tree *other = NULL;
    assert_int_equal(harmonia_build(&bc, q, NULL, 4, &other), HARMONIA_ERR_INVALID);
    assert_null(other);
    harmonia_update_config uc;
    memset(&uc, 0, sizeof uc);
    uint8_t kind = HARMONIA_OP_DELETE;
    assert_int_equal(harmonia_update(t, &uc, &kind, q, NULL, 1, NULL), HARMONIA_ERR_INVALID);
    harmonia_load_config lc;
    memset(&lc, 0, sizeof lc);
    assert_int_equal(harmonia_load("/nonexistent.idx", &lc, &other), HARMONIA_ERR_INVALID);
    harmonia_ntg_config nc;
    memset(&nc, 0, sizeof nc);
    harmonia_ntg_model_result r;
    assert_int_equal(harmonia_ntg_model(t, &nc, q, 4, &r), HARMONIA_ERR_INVALID);
    harmonia_ntg_config_init(&nc);
    harmonia_query_config bad_query;
    memset(&bad_query, 0, sizeof bad_query);
    nc.query = &bad_query;
    assert_int_equal(harmonia_ntg_model(t, &nc, q, 4, &r), HARMONIA_ERR_INVALID);
    nc.query = NULL;
    assert_int_equal(harmonia_ntg_model(t, &nc, q, 4, &r), HARMONIA_OK);
    harmonia_free(t);
}

/* Builds, updates and queries with thread counts of their own: the caller's OpenMP settings stay. */
static void test_openmp_settings_kept(void **state)
{
    (void)state;
    omp_set_num_threads(3);
    omp_set_dynamic(0);
    const int max_before = omp_get_max_threads(), dynamic_before = omp_get_dynamic();
    harmonia_tree *t = build(200000, 2);
    assert_int_equal(omp_get_max_threads(), max_before);
    const uint64_t n = 100000;
    uint8_t *kinds = malloc(n);
    uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) {
        kinds[i] = HARMONIA_OP_UPSERT;
        keys[i] = i * 7919;
        values[i] = i;
    }
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = 1;
    assert_int_equal(harmonia_update(t, &uc, kinds, keys, values, n, NULL), HARMONIA_OK);
    assert_int_equal(omp_get_max_threads(), max_before);
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_CPU;
    qc.threads = 2;
    uint64_t *out = malloc(n * 8);
    uint8_t *found = malloc(n);
    assert_int_equal(harmonia_lookup(t, &qc, keys, n, out, found), HARMONIA_OK);
    for (uint64_t i = 0; i < n; i++) {
        assert_int_equal(found[i], 1);
        assert_int_equal(out[i], i);
    }
    assert_int_equal(omp_get_max_threads(), max_before);
    assert_int_equal(omp_get_dynamic(), dynamic_before);
    /* a negative thread count is a mistake, not "the default" */
    uc.threads = -1;
    assert_int_equal(harmonia_update(t, &uc, kinds, keys, values, 1, NULL), HARMONIA_ERR_INVALID);
    qc.threads = -2;
    assert_int_equal(harmonia_lookup(t, &qc, keys, 1, out, found), HARMONIA_ERR_INVALID);
    free(kinds);
    free(keys);
    free(values);
    free(out);
    free(found);
    harmonia_free(t);
}

static void *never_alloc(void *context, size_t bytes, void *stream)
{
    (void)context; (void)bytes; (void)stream;
    return NULL;
}

/* Device placement and allocators: what is checked without a GPU; the device bytes of a tree. */
static void test_device_settings(void **state)
{
    (void)state;
    harmonia_tree *t = build(50000, 0);
    assert_int_equal(harmonia_set_device(t, -2, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_set_device(NULL, 0, NULL), HARMONIA_ERR_INVALID);
    harmonia_allocator half;
    harmonia_allocator_init(&half);
    half.device_alloc = never_alloc; /* without device_free */
    assert_int_equal(harmonia_set_device(t, 0, &half), HARMONIA_ERR_INVALID);
    harmonia_allocator unsized;
    memset(&unsized, 0, sizeof unsized);
    assert_int_equal(harmonia_set_device(t, 0, &unsized), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_set_device(t, 1, NULL), HARMONIA_OK);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.device, 1);           /* the setting, until a copy is made */
    assert_false(info.device_resident);
    uint64_t bytes = 0;
    assert_int_equal(harmonia_device_bytes(t, &bytes), HARMONIA_OK);
    assert_int_equal(bytes, info.total_bytes);  /* key region, values, first child, ranks */
    assert_int_equal(harmonia_device_bytes(t, NULL), HARMONIA_ERR_INVALID);
    /* a build config's device and allocator are checked the same way */
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    assert_int_equal(bc.device, HARMONIA_DEVICE_CURRENT);
    bc.allocator = &half;
    uint64_t key = 1;
    harmonia_tree *other = NULL;
    assert_int_equal(harmonia_build(&bc, &key, NULL, 1, &other), HARMONIA_ERR_INVALID);
    assert_null(other);
    harmonia_free(t);
}

/* The asynchronous calls never run on the CPU and never take host arrays. */
static void test_async_without_gpu(void **state)
{
    (void)state;
    harmonia_tree *t = build(1000, 0);
    uint64_t q[4] = {0, 1, 2, 3}, v[4], counts[4], offsets[5];
    uint8_t f[4];
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_lookup_async(t, &c, q, 4, v, f, NULL), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(t), "GPU"));
    harmonia_query_config_init(&c);
    c.memory = HARMONIA_MEMORY_HOST;
    assert_int_equal(harmonia_range_count_async(t, &c, q, q, 4, counts, NULL), HARMONIA_ERR_INVALID);
    assert_non_null(strstr(harmonia_last_error(t), "device arrays"));
    harmonia_device_info device;
    if (harmonia_device_probe(&device) != HARMONIA_OK) { /* no GPU: NO_DEVICE, with the reason */
        harmonia_query_config_init(&c);
        assert_int_equal(harmonia_lookup_async(t, &c, q, 4, v, f, NULL), HARMONIA_ERR_NO_DEVICE);
        assert_int_equal(harmonia_lower_bound_async(t, &c, q, 4, v, v, f, NULL), HARMONIA_ERR_NO_DEVICE);
        assert_int_equal(harmonia_range_collect_async(t, &c, q, q, 4, offsets, NULL, NULL, NULL),
                         HARMONIA_ERR_NO_DEVICE);
        size_t bytes = 0;
        assert_int_equal(harmonia_query_workspace_bytes(t, &c, HARMONIA_QUERY_LOOKUP, 1000, &bytes, NULL),
                         HARMONIA_ERR_NO_DEVICE);
    }
    harmonia_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_sizes),
        cmocka_unit_test(test_openmp_settings_kept),
        cmocka_unit_test(test_device_settings),
        cmocka_unit_test(test_async_without_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
