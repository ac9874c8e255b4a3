/* test_gpu_build.c — the GPU bulk build (harmonia.h, harmonia_build_config.backend) against the CPU
 * build, bit for bit: key region, leaf values, first-child array, leaf ranks and shape, for both
 * key widths, node sizes, fills, sorted and unsorted input, values given or not, the duplicate
 * policies, keys 0 and the maximum, the empty tree; the same errors and messages (duplicates,
 * unsorted input); the build from device arrays; the device copy it leaves (queried at once); the
 * backend choice and the fallback when GPU memory runs out. Skipped (77) without a GPU. */
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_util.h"
#include "harmonia/gpu_policy.h"
#include "harmonia/tree_internal.h"
#include "util/mix.h"

static void put(void *a, uint32_t bits, uint64_t i, uint64_t v)
{
    if (bits == 32)
        ((uint32_t *)a)[i] = (uint32_t)v;
    else
        ((uint64_t *)a)[i] = v;
}

static uint64_t get(const void *a, uint32_t bits, uint64_t i)
{
    return bits == 32 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

static int compare32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int compare64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* count pairs: distinct random keys with 0 and the maximum among them (count >= 2), then `dups`
 * of them repeated at random positions; sorted ascending when asked (dups then sit together). */
static void make_pairs(uint32_t bits, uint64_t count, uint64_t dups, bool sorted, uint64_t seed, void **keys_out,
                       void **values_out)
{
    const size_t kb = bits / 8;
    void *k = malloc((count ? count : 1) * kb), *v = malloc((count ? count : 1) * kb);
    const uint64_t max = bits == 32 ? UINT32_MAX : UINT64_MAX;
    const uint64_t distinct = count - dups;
    for (uint64_t i = 0; i < distinct; i++) {
        uint64_t key = sorted ? (i * (max / (distinct + 1))) : util_mix64(i + seed * 0x9E3779B97F4A7C15ull) & max;
        if (!sorted && bits == 32) /* a bijection on 32 bits: distinct keys */
            key = (uint32_t)(i * 2654435761u + (uint32_t)seed);
        put(k, bits, i, key);
    }
    if (distinct >= 2) {
        put(k, bits, sorted ? 0 : distinct / 2, 0);
        put(k, bits, sorted ? distinct - 1 : distinct / 3, max);
    }
    for (uint64_t d = 0; d < dups; d++)
        put(k, bits, distinct + d, get(k, bits, util_mix64(d + seed) % (distinct ? distinct : 1)));
    if (sorted && dups)
        qsort(k, count, kb, bits == 32 ? compare32 : compare64);
    for (uint64_t i = 0; i < count; i++)
        put(v, bits, i, util_mix64(i ^ 0xABCDEFull) & max);
    *keys_out = k;
    *values_out = v;
}

/* Fails the test unless the two trees' layouts are equal bit for bit. */
static void assert_same_tree(const harmonia_tree *a, const harmonia_tree *b, const char *what)
{
    const kr_tree *x = &a->kr, *y = &b->kr;
    if (x->key_bits != y->key_bits || x->fanout != y->fanout || x->leaf_size != y->leaf_size ||
        x->height != y->height || x->n_keys != y->n_keys || x->n_internal != y->n_internal ||
        x->n_leaves != y->n_leaves || x->n_nodes != y->n_nodes ||
        memcmp(x->level_start, y->level_start, sizeof x->level_start) != 0)
        fail_msg("%s: the shapes differ (keys %" PRIu64 "/%" PRIu64 ", leaves %" PRIu64 "/%" PRIu64 ")", what,
                 x->n_keys, y->n_keys, x->n_leaves, y->n_leaves);
    const size_t kb = x->key_bits / 8;
    if (memcmp(x->keys, y->keys, kr_key_slots(x) * kb) != 0)
        fail_msg("%s: the key regions differ", what);
    if (memcmp(x->leaf_values, y->leaf_values, x->n_leaves * x->leaf_size * kb) != 0)
        fail_msg("%s: the leaf values differ", what);
    if (memcmp(x->first_child, y->first_child, (x->n_internal + 1) * sizeof(uint32_t)) != 0)
        fail_msg("%s: the first-child arrays differ", what);
    if (memcmp(x->leaf_rank, y->leaf_rank, (x->n_leaves + 1) * sizeof(uint64_t)) != 0)
        fail_msg("%s: the leaf ranks differ", what);
}

/* Every key of the tree looked up on its device copy (made by the GPU build: no upload). */
static void assert_device_copy_answers(harmonia_tree *t)
{
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_true(info.device_resident);
    const uint32_t bits = t->kr.key_bits;
    const uint64_t n = t->kr.n_keys;
    if (n == 0)
        return;
    void *q = malloc(n * (bits / 8)), *want = malloc(n * (bits / 8)), *got = malloc(n * (bits / 8));
    uint8_t *found = malloc(n);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t key, value;
        kr_at_rank(&t->kr, r, &key, &value);
        put(q, bits, r, key);
        put(want, bits, r, value);
    }
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    assert_int_equal(harmonia_lookup(t, &qc, q, n, got, found), HARMONIA_OK);
    for (uint64_t r = 0; r < n; r++)
        if (!found[r] || get(got, bits, r) != get(want, bits, r))
            fail_msg("GPU lookup of rank %" PRIu64 " of the GPU-built tree: wrong answer", r);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_int_equal(info.device_version, info.version);
    free(q);
    free(want);
    free(got);
    free(found);
}

typedef struct build_case {
    uint32_t bits, fanout, leaf, threads;
    double fill;
    uint64_t count, dups;
    bool sorted, with_values;
    harmonia_duplicates policy;
} build_case;

/* Builds the case on the CPU and on the GPU (host arrays, then device arrays) and compares. */
static void check_case(const build_case *c)
{
    char what[256];
    snprintf(what, sizeof what, "%u-bit F=%u L=%u fill %.2f, %" PRIu64 " pairs (%" PRIu64 " repeats), %s, %s, policy %d",
             c->bits, c->fanout, c->leaf, c->fill, c->count, c->dups, c->sorted ? "sorted" : "unsorted",
             c->with_values ? "values" : "positions", (int)c->policy);
    void *keys, *values;
    make_pairs(c->bits, c->count, c->dups, c->sorted, c->count + c->fanout, &keys, &values);
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.key_bits = c->bits;
    config.fanout = c->fanout;
    config.leaf_size = c->leaf;
    config.leaf_fill = c->fill;
    config.duplicates = c->policy;
    config.input_sorted = c->sorted;
    config.threads = (int)c->threads;
    const void *v = c->with_values ? values : NULL;

    harmonia_tree *cpu = NULL, *gpu = NULL;
    config.backend = HARMONIA_BACKEND_CPU;
    harmonia_status cpu_st = harmonia_build(&config, keys, v, c->count, &cpu);
    char cpu_message[512];
    snprintf(cpu_message, sizeof cpu_message, "%s", harmonia_last_error(NULL));
    config.backend = HARMONIA_BACKEND_GPU;
    harmonia_status gpu_st = harmonia_build(&config, keys, v, c->count, &gpu);
    if (gpu_st != cpu_st)
        fail_msg("%s: CPU build %d (%s), GPU build %d (%s)", what, cpu_st, cpu_message, gpu_st,
                 harmonia_last_error(NULL));
    if (cpu_st != HARMONIA_OK) {
        if (strcmp(cpu_message, harmonia_last_error(NULL)) != 0)
            fail_msg("%s: messages differ: CPU '%s', GPU '%s'", what, cpu_message, harmonia_last_error(NULL));
    } else {
        assert_same_tree(cpu, gpu, what);
        assert_int_equal(harmonia_check(gpu), HARMONIA_OK);
        assert_device_copy_answers(gpu);
        harmonia_tree_info info;
        assert_int_equal(harmonia_info(cpu, &info), HARMONIA_OK);
        assert_false(info.device_resident);
    }
    harmonia_free(gpu);
    gpu = NULL;

    /* the same pairs from device memory */
    const size_t bytes = (c->count ? c->count : 1) * (c->bits / 8);
    void *d_keys = NULL, *d_values = NULL;
    assert_int_equal(cudaMalloc(&d_keys, bytes), cudaSuccess);
    assert_int_equal(cudaMalloc(&d_values, bytes), cudaSuccess);
    assert_int_equal(cudaMemcpy(d_keys, keys, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(d_values, values, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    config.backend = HARMONIA_BACKEND_AUTO;
    gpu_st = harmonia_build_device(&config, d_keys, c->with_values ? d_values : NULL, c->count, &gpu);
    if (gpu_st != cpu_st)
        fail_msg("%s, device arrays: CPU build %d (%s), GPU build %d (%s)", what, cpu_st, cpu_message, gpu_st,
                 harmonia_last_error(NULL));
    if (cpu_st == HARMONIA_OK) {
        assert_same_tree(cpu, gpu, what);
        assert_device_copy_answers(gpu);
    } else if (strcmp(cpu_message, harmonia_last_error(NULL)) != 0) {
        fail_msg("%s, device arrays: messages differ: CPU '%s', GPU '%s'", what, cpu_message, harmonia_last_error(NULL));
    }
    harmonia_free(gpu);
    harmonia_free(cpu);
    cudaFree(d_keys);
    cudaFree(d_values);
    free(keys);
    free(values);
}

static void test_bit_for_bit(void **state)
{
    (void)state;
    static const uint32_t shapes[][2] = {{8, 8}, {16, 16}, {32, 16}, {16, 128}, {128, 8}};
    static const uint64_t counts[] = {0, 1, 2, 3, 17, 1000, 40000};
    static const double fills[] = {1.0, 0.7};
    for (uint32_t bits = 32; bits <= 64; bits += 32)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t n = 0; n < sizeof counts / sizeof counts[0]; n++)
                for (size_t f = 0; f < 2; f++)
                    for (int sorted = 0; sorted < 2; sorted++) {
                        build_case c = {bits, shapes[s][0], shapes[s][1], 2, fills[f], counts[n], 0,
                                        sorted != 0, ((n + s) & 1) != 0, HARMONIA_DUPLICATES_REJECT};
                        check_case(&c);
                    }
    /* one large tree of each width (several internal levels, the staging in several chunks) */
    for (uint32_t bits = 32; bits <= 64; bits += 32) {
        build_case c = {bits, 16, 16, 0, 1.0, (5u << 20) + 13, 0, false, true, HARMONIA_DUPLICATES_REJECT};
        check_case(&c);
        c.with_values = false;
        c.fanout = 8;
        c.fill = 0.75;
        check_case(&c);
    }
}

static void test_duplicates(void **state)
{
    (void)state;
    static const harmonia_duplicates policies[] = {HARMONIA_DUPLICATES_REJECT, HARMONIA_DUPLICATES_KEEP_FIRST,
                                                   HARMONIA_DUPLICATES_KEEP_LAST};
    static const uint64_t counts[] = {2, 9, 5000, 300000};
    for (uint32_t bits = 32; bits <= 64; bits += 32)
        for (size_t p = 0; p < 3; p++)
            for (size_t n = 0; n < sizeof counts / sizeof counts[0]; n++)
                for (int sorted = 0; sorted < 2; sorted++)
                    for (int with_values = 0; with_values < 2; with_values++) {
                        build_case c = {bits, 16, 16, 2, 0.8, counts[n], counts[n] / 3 + 1, sorted != 0,
                                        with_values != 0, policies[p]};
                        check_case(&c);
                    }
}

static void test_unsorted_promise(void **state)
{
    (void)state;
    for (uint32_t bits = 32; bits <= 64; bits += 32) {
        build_case c = {bits, 16, 16, 2, 1.0, 100000, 0, false, true, HARMONIA_DUPLICATES_REJECT};
        void *keys, *values;
        make_pairs(bits, c.count, 0, true, 5, &keys, &values);
        put(keys, bits, 77777, 3); /* one descent */
        harmonia_build_config config;
        harmonia_build_config_init(&config);
        config.key_bits = bits;
        config.input_sorted = true;
        harmonia_tree *t = NULL;
        config.backend = HARMONIA_BACKEND_CPU;
        assert_int_equal(harmonia_build(&config, keys, values, c.count, &t), HARMONIA_ERR_UNSORTED);
        char cpu_message[512];
        snprintf(cpu_message, sizeof cpu_message, "%s", harmonia_last_error(NULL));
        config.backend = HARMONIA_BACKEND_GPU;
        assert_int_equal(harmonia_build(&config, keys, values, c.count, &t), HARMONIA_ERR_UNSORTED);
        assert_string_equal(cpu_message, harmonia_last_error(NULL));
        assert_null(t);
        free(keys);
        free(values);
    }
}

/* AUTO picks the GPU for large host inputs, the CPU for small ones; CPU is honoured; GPU memory
 * running out is an error when the GPU was asked for and a fallback to the CPU under AUTO. */
static void test_choice_and_fallback(void **state)
{
    (void)state;
    const uint64_t n = (uint64_t)HM_GPU_BUILD_MIN_PAIRS + 5;
    void *keys, *values;
    make_pairs(64, n, 0, false, 9, &keys, &values);
    harmonia_build_config config;
    harmonia_build_config_init(&config);
    harmonia_tree *t = NULL;
    harmonia_tree_info info;
    assert_int_equal(harmonia_build(&config, keys, values, n, &t), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_true(info.device_resident); /* AUTO, HM_GPU_BUILD_MIN_PAIRS pairs or more: the GPU */
    harmonia_free(t);
    assert_int_equal(harmonia_build(&config, keys, values, 1000, &t), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_false(info.device_resident); /* small: the CPU */
    harmonia_free(t);
    config.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_build(&config, keys, values, n, &t), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_false(info.device_resident);
    harmonia_free(t);

    /* about 48 MB left: the trees freed above give their memory back to the default pool, which
     * keeps it (counted as used) until trimmed; one allocation of all but 48 MB may still not fit
     * at once (session 17's run failed it), so as many as it takes, as test_gpu's upload test does */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    int device = 0;
    cudaMemPool_t pool;
    assert_int_equal(cudaGetDevice(&device), cudaSuccess);
    assert_int_equal(cudaDeviceGetDefaultMemPool(&pool, device), cudaSuccess);
    void *hogs[16] = {NULL};
    int n_hogs = 0;
    for (;;) {
        assert_int_equal(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
        size_t free_bytes = 0, total = 0;
        assert_int_equal(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
        if (free_bytes <= (64u << 20) || n_hogs == 16)
            break;
        if (cudaMalloc(&hogs[n_hogs], free_bytes - (48u << 20)) != cudaSuccess) {
            cudaGetLastError(); /* not at once: half of it, and again */
            assert_int_equal(cudaMalloc(&hogs[n_hogs], (free_bytes - (48u << 20)) / 2), cudaSuccess);
        }
        n_hogs++;
    }
    config.backend = HARMONIA_BACKEND_GPU;
    assert_int_equal(harmonia_build(&config, keys, values, n, &t), HARMONIA_ERR_DEVICE_MEMORY);
    printf("expected error: %s\n", harmonia_last_error(NULL));
    assert_non_null(strstr(harmonia_last_error(NULL), "bytes"));
    config.backend = HARMONIA_BACKEND_AUTO;
    assert_int_equal(harmonia_build(&config, keys, values, n, &t), HARMONIA_OK);
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    assert_false(info.device_resident); /* fell back to the CPU */
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    harmonia_free(t);
    for (int h = 0; h < n_hogs; h++)
        cudaFree(hogs[h]);

    /* device arrays with the CPU backend: INVALID */
    void *d_keys = NULL;
    assert_int_equal(cudaMalloc(&d_keys, 1000 * 8), cudaSuccess);
    config.backend = HARMONIA_BACKEND_CPU;
    assert_int_equal(harmonia_build(&config, d_keys, NULL, 1000, &t), HARMONIA_ERR_INVALID);
    config.memory = HARMONIA_MEMORY_DEVICE;
    assert_int_equal(harmonia_build(&config, d_keys, NULL, 1000, &t), HARMONIA_ERR_INVALID);
    /* host arrays named device arrays: INVALID, not a crash */
    config.backend = HARMONIA_BACKEND_AUTO;
    assert_int_equal(harmonia_build_device(&config, keys, NULL, 1000, &t), HARMONIA_ERR_INVALID);
    printf("expected error: %s\n", harmonia_last_error(NULL));
    cudaFree(d_keys);
    free(keys);
    free(values);
}

int main(void)
{
    harmonia_device_info info;
    if (harmonia_device_probe(&info) != HARMONIA_OK) {
        printf("SKIP: no GPU: %s\n", harmonia_last_error(NULL));
        return 77;
    }
    printf("GPU: %s\n", info.name);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_for_bit),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_unsorted_promise),
        cmocka_unit_test(test_choice_and_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
