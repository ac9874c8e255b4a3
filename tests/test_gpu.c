/* test_gpu.c — differential tests of the GPU engine against the CPU engine: every group size G,
 * every F and L, both key widths, PSA on and off, several window sizes, original and unordered
 * results, host and device arrays, odd batch sizes (0, 1, 31, 33, larger than a window), keys 0 and
 * the maximum, dense keys and keys whose top bits are all equal; PSA by partition with one- and
 * two-pass plans, staged and descending search tiles; range counts and collects; the
 * device copy's life cycle and the out-of-memory error; every kind of memory an array can live in
 * (memory AUTO). Skipped (77) without a GPU. */
#include <cuda_runtime.h>
#include <pthread.h>

#include "tests/test_util.h"
#include "harmonia/tree_internal.h" /* the leaf level, to pick the dirty leaves of a scattered batch */
#include "psa/psa.h"                /* psa_pays and the policy: which path a window takes */
#include "psa/psa_gpu.h"            /* psa_scratch_bytes: what the descent path's workspace must hold */
#include "ntg/ntg_policy.h"         /* the collect's G from the mean length, and the default G */
#include "ntg/ntg.h"                /* the start table's entries */
#include "harmonia/gpu_engine.h"    /* hm_gpu_start_table */
#include "harmonia/gpu_policy.h"    /* HM_SIGNAL_MAX_BATCH: which calls take a completion signal */

static const uint32_t node_sizes[] = {8, 16, 32, 64, 128};
/* psa_bits of the query configs the check functions make (0: the plan's own) */
static uint32_t config_psa_bits = 0;
static const uint32_t group_sizes[] = {1, 2, 4, 8, 16, 32};

static void *device_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    assert_int_equal(cudaMalloc(&d, bytes ? bytes : 8), cudaSuccess);
    if (bytes)
        assert_int_equal(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

static void *device_alloc(size_t bytes)
{
    void *d = NULL;
    assert_int_equal(cudaMalloc(&d, bytes ? bytes : 8), cudaSuccess);
    assert_int_equal(cudaMemset(d, 0xA5, bytes ? bytes : 8), cudaSuccess); /* poison */
    return d;
}

static void to_host(void *host, const void *d, size_t bytes)
{
    if (bytes)
        assert_int_equal(cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
}

static harmonia_tree *build_filled(const tu_model *m, uint32_t fanout, uint32_t leaf_size, double leaf_fill,
                                   uint64_t *rng)
{
    void *k, *v;
    tu_model_arrays(m, &k, &v, 1, rng);
    harmonia_build_config c;
    harmonia_build_config_init(&c);
    c.key_bits = m->key_bits;
    c.fanout = fanout;
    c.leaf_size = leaf_size;
    c.leaf_fill = leaf_fill;
    harmonia_tree *t = NULL;
    if (harmonia_build(&c, k, v, m->n, &t) != HARMONIA_OK)
        fail_msg("build: %s", harmonia_last_error(NULL));
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    free(k);
    free(v);
    return t;
}

/* A tree of m's keys, its leaves full or 70 % full at random. */
static harmonia_tree *build(const tu_model *m, uint32_t fanout, uint32_t leaf_size, uint64_t *rng)
{
    const double leaf_fill = (tu_next(rng) % 2) ? 1.0 : 0.7;
    return build_filled(m, fanout, leaf_size, leaf_fill, rng);
}

/* The CPU engine's answers for the same queries: the reference. */
typedef struct reference {
    void *values, *keys;
    uint8_t *found;
} reference;

static void cpu_reference(harmonia_tree *t, uint32_t bits, const void *queries, uint64_t n, int lower_bound,
                          reference *r)
{
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_CPU;
    r->values = malloc(n * bits / 8 + 8);
    r->keys = malloc(n * bits / 8 + 8);
    r->found = malloc(n + 1);
    if (lower_bound)
        assert_int_equal(harmonia_lower_bound(t, &q, queries, n, r->keys, r->values, r->found), HARMONIA_OK);
    else
        assert_int_equal(harmonia_lookup(t, &q, queries, n, r->values, r->found), HARMONIA_OK);
}

static void free_reference(reference *r)
{
    free(r->values);
    free(r->keys);
    free(r->found);
}

/* Runs lookups (and lower bounds) of n queries on the GPU with the given options, host or device
 * arrays, original order (unordered 0) or unordered with 64-bit positions (1) or 32-bit ones
 * (2: harmonia_lookup_unordered32), and compares every result with the CPU engine. */
static void check_lookups(harmonia_tree *t, uint32_t bits, const void *queries, uint64_t n, uint32_t g, int psa,
                          uint64_t window, int on_device, int unordered)
{
    const size_t kb = bits / 8;
    reference ref;
    cpu_reference(t, bits, queries, n, 0, &ref);
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_GPU;
    q.group_size = g;
    q.psa = psa;
    q.psa_window = window;
    q.psa_bits = config_psa_bits;
    void *values = malloc(n * kb + 8);
    uint8_t *found = malloc(n + 1);
    uint64_t *positions = malloc(n * 8 + 8);
    const size_t position_bytes = unordered == 2 ? 4 : 8;
    memset(values, 0xA5, n * kb + 8);
    memset(found, 0xA5, n + 1);
    memset(positions, 0xA5, n * 8 + 8); /* (32-bit positions: nothing written past n * 4 bytes) */
    harmonia_status st;
    if (on_device) {
        void *d_q = device_copy(queries, n * kb), *d_v = device_alloc(n * kb), *d_f = device_alloc(n);
        void *d_p = device_alloc(n * position_bytes); /* exactly the positions' bytes (memcheck) */
        st = unordered == 2 ? harmonia_lookup_unordered32(t, &q, d_q, n, d_v, d_f, d_p)
             : unordered    ? harmonia_lookup_unordered(t, &q, d_q, n, d_v, d_f, d_p)
                            : harmonia_lookup(t, &q, d_q, n, d_v, d_f);
        to_host(values, d_v, n * kb);
        to_host(found, d_f, n);
        to_host(positions, d_p, n * position_bytes);
        cudaFree(d_q);
        cudaFree(d_v);
        cudaFree(d_f);
        cudaFree(d_p);
    } else {
        st = unordered == 2 ? harmonia_lookup_unordered32(t, &q, queries, n, values, found, (uint32_t *)positions)
             : unordered    ? harmonia_lookup_unordered(t, &q, queries, n, values, found, positions)
                            : harmonia_lookup(t, &q, queries, n, values, found);
    }
    if (st != HARMONIA_OK)
        fail_msg("GPU lookup (G=%u psa=%d window=%llu device=%d) failed: %s", g, psa, (unsigned long long)window,
                 on_device, harmonia_last_error(t));
    if (unordered == 2 && !on_device)
        for (size_t b = n * 4; b < n * 8 + 8; b++)
            if (((const uint8_t *)positions)[b] != 0xA5)
                fail_msg("32-bit positions: byte %zu written past the %llu positions", b, (unsigned long long)n);
    uint8_t *seen = unordered ? calloc(n + 1, 1) : NULL;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t src = i;
        if (unordered) {
            src = unordered == 2 ? ((const uint32_t *)positions)[i] : positions[i];
            if (src >= n || seen[src])
                fail_msg("unordered: slot %llu holds position %llu (out of range or repeated)", (unsigned long long)i,
                         (unsigned long long)src);
            seen[src] = 1;
        }
        if (found[i] != ref.found[src] || tu_get(values, bits, i) != tu_get(ref.values, bits, src))
            fail_msg("GPU lookup of %llu (G=%u psa=%d window=%llu device=%d unordered=%d F=%u): found %d value %llu, "
                     "CPU %d %llu", (unsigned long long)tu_get(queries, bits, src), g, psa, (unsigned long long)window,
                     on_device, unordered, 0u, found[i], (unsigned long long)tu_get(values, bits, i), ref.found[src],
                     (unsigned long long)tu_get(ref.values, bits, src));
    }
    free(seen);
    free(values);
    free(found);
    free(positions);
    free_reference(&ref);
}

static void check_lower_bounds(harmonia_tree *t, uint32_t bits, const void *queries, uint64_t n, uint32_t g, int psa,
                               uint64_t window, int on_device)
{
    const size_t kb = bits / 8;
    reference ref;
    cpu_reference(t, bits, queries, n, 1, &ref);
    harmonia_query_config q;
    harmonia_query_config_init(&q);
    q.backend = HARMONIA_BACKEND_GPU;
    q.group_size = g;
    q.psa = psa;
    q.psa_window = window;
    q.psa_bits = config_psa_bits;
    void *keys = malloc(n * kb + 8), *values = malloc(n * kb + 8);
    uint8_t *found = malloc(n + 1);
    harmonia_status st;
    if (on_device) {
        void *d_q = device_copy(queries, n * kb), *d_k = device_alloc(n * kb), *d_v = device_alloc(n * kb);
        void *d_f = device_alloc(n);
        st = harmonia_lower_bound(t, &q, d_q, n, d_k, d_v, d_f);
        to_host(keys, d_k, n * kb);
        to_host(values, d_v, n * kb);
        to_host(found, d_f, n);
        cudaFree(d_q);
        cudaFree(d_k);
        cudaFree(d_v);
        cudaFree(d_f);
    } else {
        st = harmonia_lower_bound(t, &q, queries, n, keys, values, found);
    }
    if (st != HARMONIA_OK)
        fail_msg("GPU lower bound failed: %s", harmonia_last_error(t));
    for (uint64_t i = 0; i < n; i++)
        if (found[i] != ref.found[i] || tu_get(keys, bits, i) != tu_get(ref.keys, bits, i) ||
            tu_get(values, bits, i) != tu_get(ref.values, bits, i))
            fail_msg("GPU lower bound of %llu (G=%u psa=%d device=%d): %d %llu, CPU %d %llu",
                     (unsigned long long)tu_get(queries, bits, i), g, psa, on_device, found[i],
                     (unsigned long long)tu_get(keys, bits, i), ref.found[i],
                     (unsigned long long)tu_get(ref.keys, bits, i));
    free(keys);
    free(values);
    free(found);
    free_reference(&ref);
}

static void check_ranges(harmonia_tree *t, const tu_model *m, uint64_t n, uint32_t g, int on_device, uint64_t *rng)
{
    const uint32_t bits = m->key_bits;
    const size_t kb = bits / 8;
    const uint64_t mask = tu_mask(bits);
    void *lo = malloc(n * kb + 8), *hi = malloc(n * kb + 8);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t a = tu_query_key(m, rng), b;
        switch (tu_next(rng) % 5) {
        case 0: b = a; break;
        case 1: b = a > 0 ? a - 1 : 0; break;
        case 2: b = mask; break;
        case 3: b = (a + tu_next(rng) % 1000) & mask; if (b < a) b = mask; break;
        default: b = tu_next(rng) & mask; break;
        }
        if (i < 3) /* a few ranges over everything */
            a = 0, b = mask;
        tu_set(lo, bits, i, a);
        tu_set(hi, bits, i, b);
    }
    harmonia_query_config cpu, gpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    harmonia_query_config_init(&gpu);
    gpu.backend = HARMONIA_BACKEND_GPU;
    gpu.group_size = g;
    gpu.psa_window = 1024; /* small chunks for the host collect */
    uint64_t *ref_offsets = malloc((n + 1) * 8), *offsets = malloc((n + 1) * 8), *counts = malloc(n * 8 + 8);
    assert_int_equal(harmonia_range_collect(t, &cpu, lo, hi, n, ref_offsets, NULL, NULL), HARMONIA_OK);
    uint64_t total = ref_offsets[n];
    void *ref_keys = malloc(total * kb + 8), *ref_values = malloc(total * kb + 8);
    assert_int_equal(harmonia_range_collect(t, &cpu, lo, hi, n, ref_offsets, ref_keys, ref_values), HARMONIA_OK);
    void *keys = malloc(total * kb + 8), *values = malloc(total * kb + 8);
    memset(keys, 0xA5, total * kb + 8);
    if (on_device) {
        void *d_lo = device_copy(lo, n * kb), *d_hi = device_copy(hi, n * kb);
        void *d_counts = device_alloc(n * 8), *d_offsets = device_alloc((n + 1) * 8);
        void *d_keys = device_alloc(total * kb), *d_values = device_alloc(total * kb);
        assert_int_equal(harmonia_range_count(t, &gpu, d_lo, d_hi, n, d_counts), HARMONIA_OK);
        to_host(counts, d_counts, n * 8);
        if (harmonia_range_collect(t, &gpu, d_lo, d_hi, n, d_offsets, NULL, NULL) != HARMONIA_OK)
            fail_msg("device offsets: %s", harmonia_last_error(t));
        to_host(offsets, d_offsets, (n + 1) * 8);
        assert_int_equal(harmonia_range_collect(t, &gpu, d_lo, d_hi, n, d_offsets, d_keys, d_values), HARMONIA_OK);
        to_host(keys, d_keys, total * kb);
        to_host(values, d_values, total * kb);
        cudaFree(d_lo); cudaFree(d_hi); cudaFree(d_counts); cudaFree(d_offsets); cudaFree(d_keys); cudaFree(d_values);
    } else {
        assert_int_equal(harmonia_range_count(t, &gpu, lo, hi, n, counts), HARMONIA_OK);
        assert_int_equal(harmonia_range_collect(t, &gpu, lo, hi, n, offsets, NULL, NULL), HARMONIA_OK);
        if (harmonia_range_collect(t, &gpu, lo, hi, n, offsets, keys, values) != HARMONIA_OK)
            fail_msg("host collect: %s", harmonia_last_error(t));
    }
    for (uint64_t i = 0; i < n; i++) {
        if (counts[i] != ref_offsets[i + 1] - ref_offsets[i])
            fail_msg("GPU range count %llu (G=%u device=%d): %llu, CPU %llu", (unsigned long long)i, g, on_device,
                     (unsigned long long)counts[i], (unsigned long long)(ref_offsets[i + 1] - ref_offsets[i]));
    }
    for (uint64_t i = 0; i <= n; i++)
        assert_int_equal(offsets[i], ref_offsets[i]);
    for (uint64_t j = 0; j < total; j++)
        if (tu_get(keys, bits, j) != tu_get(ref_keys, bits, j) || tu_get(values, bits, j) != tu_get(ref_values, bits, j))
            fail_msg("GPU range collect pair %llu of %llu (G=%u device=%d) differs", (unsigned long long)j,
                     (unsigned long long)total, g, on_device);
    free(lo); free(hi); free(ref_offsets); free(offsets); free(counts);
    free(ref_keys); free(ref_values); free(keys); free(values);
}

static void *make_queries(const tu_model *m, uint64_t n, uint64_t *rng)
{
    void *q = malloc(n * m->key_bits / 8 + 8);
    for (uint64_t i = 0; i < n; i++)
        tu_set(q, m->key_bits, i, tu_query_key(m, rng));
    return q;
}

/* Under compute-sanitizer (HARMONIA_GPU_TEST_QUICK=1) fewer combinations run: it is ~100x slower. */
static int quick(void) { return getenv("HARMONIA_GPU_TEST_QUICK") != NULL; }

/* Every G, F and L, both widths: lookups and lower bounds, PSA on and off, host and device. */
static void test_every_group_fanout_leaf(void **state)
{
    (void)state;
    uint64_t rng = 5;
    for (unsigned w = 0; w < 2; w++)
        for (unsigned fi = 0; fi < 5; fi++)
            for (unsigned li = 0; li < 5; li++) {
                /* quick: the fixed-shape kernels' trees (the default F and L of each width) among them */
                if (quick() && !((fi == 0 && li == 0) || (fi == 1 && li == 2 && w == 1) || (fi == 4 && li == 1 && w == 0) ||
                                 (fi == 1 && li == 1 && w == 1) || (fi == 2 && li == 1 && w == 0)))
                    continue;
                uint32_t bits = w ? 64 : 32, F = node_sizes[fi], L = node_sizes[li];
                tu_model m;
                tu_model_make(&m, bits, 3000 + tu_next(&rng) % 40000, (tu_dist)(tu_next(&rng) % TU_DIST_COUNT), &rng);
                harmonia_tree *t = build(&m, F, L, &rng);
                uint64_t n = 5000 + tu_next(&rng) % 3000;
                void *q = make_queries(&m, n, &rng);
                for (unsigned gi = 0; gi < 6; gi++) {
                    uint32_t g = group_sizes[gi];
                    if (g > F)
                        continue;
                    int psa = (int)(tu_next(&rng) % 2), dev = (int)(tu_next(&rng) % 2);
                    check_lookups(t, bits, q, n, g, psa, 2048, dev, 0);
                    check_lower_bounds(t, bits, q, n, g, !psa, 4096, !dev);
                }
                free(q);
                harmonia_free(t);
                tu_model_free(&m);
            }
}

/* Batch sizes and windows: 0, 1, 31, 33, odd, larger than a window; unordered results. */
static void test_batch_sizes_and_windows(void **state)
{
    (void)state;
    uint64_t rng = 9;
    const uint64_t sizes[] = {0, 1, 31, 33, 1023, 1025, 4099, 100003};
    const unsigned n_sizes = quick() ? 5 : sizeof sizes / sizeof sizes[0];
    const uint64_t windows[] = {1024, 1u << 23, 4096, 0};
    for (unsigned w = 0; w < 2; w++) {
        tu_model m;
        tu_model_make(&m, w ? 64 : 32, 200000, TU_UNIFORM, &rng);
        harmonia_tree *t = build(&m, 16, 16, &rng);
        for (unsigned s = 0; s < n_sizes; s++) {
            void *q = make_queries(&m, sizes[s], &rng);
            for (unsigned wi = 0; wi < (quick() ? 2u : 4u); wi++)
                for (int dev = 0; dev < 2; dev++)
                    for (int unordered = 0; unordered < 3; unordered++) { /* 2: 32-bit positions */
                        check_lookups(t, m.key_bits, q, sizes[s], 8, 1, windows[wi], dev, unordered);
                        check_lookups(t, m.key_bits, q, sizes[s], 4, 0, windows[wi], dev, unordered);
                    }
            free(q);
        }
        harmonia_free(t);
        tu_model_free(&m);
    }
}

/* Dense keys, keys whose top bits are all equal, extremes (0 and the maximum), a one-key and an
 * empty tree. */
/* A model of n keys in a narrow band at the top of the key width, `stride` apart, the largest the
 * maximum key: every key's top bits equal (the PSA plans take their bits where key_min and key_max
 * differ). */
static void make_top_band(tu_model *m, uint32_t bits, uint64_t n, uint64_t stride, uint64_t *rng)
{
    tu_model_make(m, bits, n, TU_DENSE, rng);
    for (uint64_t i = 0; i < m->n; i++)
        m->keys[i] = tu_mask(bits) - stride * (m->n - 1 - i);
}

static void test_key_shapes(void **state)
{
    (void)state;
    uint64_t rng = 13;
    for (unsigned w = 0; w < 2; w++) {
        uint32_t bits = w ? 64 : 32;
        for (int shape = 0; shape < 5; shape++) {
            if (quick() && shape != 1 && shape != 2)
                continue;
            tu_model m;
            if (shape == 0)
                tu_model_make(&m, bits, 100000, TU_DENSE, &rng);
            else if (shape == 1) /* top bits all equal: a narrow band near the maximum */
                make_top_band(&m, bits, 50000, 3, &rng);
            else if (shape == 2)
                tu_model_make(&m, bits, 50000, TU_EXTREMES, &rng);
            else
                tu_model_make(&m, bits, shape == 3 ? 1 : 0, TU_UNIFORM, &rng);
            uint64_t n = 20000;
            void *q = make_queries(&m, n, &rng);
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            /* a shape the kernels read from the view, and the default shape they are compiled for */
            for (int fixed = 0; fixed < 2; fixed++) {
                harmonia_tree *t = fixed ? build(&m, HARMONIA_DEFAULT_FANOUT(bits), HARMONIA_DEFAULT_LEAF_SIZE, &rng)
                                         : build(&m, 32, 8, &rng);
                for (unsigned gi = 0; gi < 6; gi++) {
                    if (group_sizes[gi] > (fixed ? HARMONIA_DEFAULT_FANOUT(bits) : 32u))
                        continue;
                    /* the fixed shape without PSA: the descent kernels themselves, at every G */
                    check_lookups(t, bits, q, n, group_sizes[gi], !fixed, 4096, gi % 2, 0);
                    check_lower_bounds(t, bits, q, n, group_sizes[gi], !fixed, 4096, gi % 2);
                }
                harmonia_free(t);
            }
            free(q);
            tu_model_free(&m);
        }
    }
}

/* Deletes every 17th key of the tree and the model: no leaf empties (a leaf of L >= 8 keys holds at
 * most one of them), so the batch applies in place and leaves whose first key went keep a separator
 * below their new first key — a shape the searches must handle. */
static void delete_every_17th(harmonia_tree *t, tu_model *m)
{
    const uint32_t bits = m->key_bits;
    const uint64_t n = m->n / 17;
    uint8_t *kinds = malloc(n + 1);
    void *keys = malloc((n + 1) * 8);
    for (uint64_t i = 0; i < n; i++) {
        kinds[i] = HARMONIA_OP_DELETE;
        tu_set(keys, bits, i, m->keys[i * 17 + 5]);
    }
    harmonia_update_stats st;
    if (harmonia_update(t, NULL, kinds, keys, NULL, n, &st) != HARMONIA_OK)
        fail_msg("update: %s", harmonia_last_error(t));
    assert_false(st.shape_changed);
    uint64_t kept = 0;
    for (uint64_t i = 0; i < m->n; i++)
        if (!(i % 17 == 5 && i / 17 < n)) {
            m->keys[kept] = m->keys[i];
            m->values[kept++] = m->values[i];
        }
    m->n = kept;
    assert_int_equal(harmonia_check(t), HARMONIA_OK);
    free(kinds);
    free(keys);
}

/* A window clamped to the edges of the keys (psa.h, plan.edges): 3 in 8 queries the smallest key,
 * 3 in 8 the largest, 1 in 16 each 0 and the maximum (below and above the span where they are not
 * keys), 1 in 8 keys or misses over the tree; in query order (the restore answers the edges),
 * unordered (the edges searched) and for lower bounds, with PSA on. Then the values of both edge
 * keys change in place (an update: the same keys, a new version) and the window runs again: the
 * restore's answers follow the version. */
static void check_edge_window(harmonia_tree *t, tu_model *m, void *q, uint64_t n, uint64_t *rng)
{
    const uint32_t bits = m->key_bits;
    assert_true(m->n >= 2);
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t r = tu_next(rng) % 16;
        tu_set(q, bits, i, r < 6 ? m->keys[0] : r < 12 ? m->keys[m->n - 1] : r == 12 ? 0 : r == 13 ? tu_mask(bits)
                                                                                   : tu_query_key(m, rng));
    }
    for (int round = 0; round < 2; round++) {
        check_lookups(t, bits, q, n, 0, 1, 0, 1, 0);
        check_lookups(t, bits, q, n, 0, 1, 0, 1, 1);
        check_lower_bounds(t, bits, q, n, 0, 1, 0, 1);
        if (round == 1)
            break;
        uint8_t kinds[2] = {HARMONIA_OP_UPDATE, HARMONIA_OP_UPDATE};
        uint64_t keys[2], values[2];
        const uint64_t edge[2] = {0, m->n - 1};
        for (int k = 0; k < 2; k++) {
            m->values[edge[k]] = (m->values[edge[k]] + 0x5a5a5a5bu) & tu_mask(bits);
            tu_set(keys, bits, k, m->keys[edge[k]]);
            tu_set(values, bits, k, m->values[edge[k]]);
        }
        harmonia_update_stats st;
        if (harmonia_update(t, NULL, kinds, keys, values, 2, &st) != HARMONIA_OK)
            fail_msg("update: %s", harmonia_last_error(t));
    }
}

/* PSA by partition (psa.h, ntg_partitioned.cu): windows dense enough that the search tiles stage
 * their leaves, and sparse ones whose tiles descend; one- and two-pass plans; several windows per
 * call; PSA auto; every key shape; a tree whose separators lie below their leaves' first keys; a
 * window clamped to the edges of the keys (check_edge_window). */
static void test_psa_partition(void **state)
{
    (void)state;
    uint64_t rng = 21;
    const uint32_t leaf_sizes[] = {8, 16, 64};
    /* 10 bits: a two-pass plan of 32 coarse bins, where pass 2's tile search (pass2_tile) takes
     * one round of ballots, not two */
    const uint32_t plan_bits[] = {0, 4, 10, 13, 19};
    const unsigned n_plans = sizeof plan_bits / sizeof plan_bits[0];
    for (unsigned w = 0; w < 2; w++)
        for (int shape = 0; shape < 5; shape++) {
            if (quick() && shape > 1)
                continue;
            const uint32_t bits = w ? 64 : 32;
            tu_model m;
            const uint64_t n_keys = quick() ? 20000 : 1u << 17;
            if (shape == 4) /* top bits all equal: a narrow band near the maximum */
                make_top_band(&m, bits, n_keys, 3, &rng);
            else
                tu_model_make(&m, bits, n_keys, (tu_dist)shape, &rng);
            harmonia_tree *t = build(&m, w ? 16 : 32, leaf_sizes[shape % 3], &rng);
            if (shape == 1 || shape == 3)
                delete_every_17th(t, &m);
            const uint64_t n = quick() ? 1u << 17 : (1u << 20) + 777;
            void *q = make_queries(&m, n, &rng);
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            tu_set(q, bits, n - 1, tu_mask(bits));
            for (unsigned pb = 0; pb < n_plans; pb += quick() ? 2 : 1) {
                config_psa_bits = plan_bits[pb];
                const int dev = (int)(pb % 2);
                check_lookups(t, bits, q, n, 0, 1, 0, dev, 0);
                /* device arrays with 64-bit positions, host arrays with 32-bit ones */
                check_lookups(t, bits, q, n, 0, 1, 0, !dev, 1 + dev);
                check_lower_bounds(t, bits, q, n, 0, 1, 0, dev);
            }
            config_psa_bits = 0;
            check_lookups(t, bits, q, n, 0, 1, 1u << 18, 1, 0);  /* several windows, device arrays */
            check_lookups(t, bits, q, n, 0, 1, 1u << 18, 0, 1);  /* several windows, host arrays */
            check_lookups(t, bits, q, n, 0, 1, 1u << 18, 0, 2);  /* the same, 32-bit positions */
            check_lookups(t, bits, q, n, 0, 1, 1u << 18, 1, 2);  /* device arrays, 32-bit positions */
            check_lower_bounds(t, bits, q, n, 0, 1, 1u << 18, 1);
            check_lookups(t, bits, q, n, 0, -1, 0, 1, 0);        /* auto */
            /* sparser windows: tiles staged in halves, quarters, ... or descending */
            for (uint64_t sparse = n / 8; sparse >= 3000; sparse /= 4) {
                check_lookups(t, bits, q, sparse, 0, 1, 0, 1, 0);
                check_lookups(t, bits, q, sparse, 0, 1, 0, 1, 1);
                check_lookups(t, bits, q, sparse, 0, 1, 0, 1, 2);
                check_lower_bounds(t, bits, q, sparse, 0, 1, 0, 1);
            }
            check_lookups(t, bits, q, 3000, 0, 1, 0, 1, 0);      /* sparse: the tiles descend */
            check_lower_bounds(t, bits, q, 3000, 0, 1, 0, 1);
            /* a dense window whose queries are not spread as its mean says (as a Zipf window's):
             * 63 in 64 are one of four keys, the rest over the whole tree, so the tiles of the rare
             * ones span far more leaves than the stage holds and are searched in chunks */
            for (uint64_t i = 0; i < n; i++) {
                const uint64_t r = tu_next(&rng);
                tu_set(q, bits, i, r % 64 == 0 ? tu_query_key(&m, &rng) : m.keys[(m.n / 5) * (1 + (r >> 8) % 4)]);
            }
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            tu_set(q, bits, n - 1, tu_mask(bits));
            check_lookups(t, bits, q, n, 0, 1, 0, 1, 0);
            check_lookups(t, bits, q, n, 0, 1, 0, 1, 1);
            check_lower_bounds(t, bits, q, n, 0, 1, 0, 1);
            check_edge_window(t, &m, q, n, &rng);
            free(q);
            harmonia_free(t);
            tu_model_free(&m);
        }
}

/* Windows of 32-bit keys of PSA_ITEMS_LARGE_WINDOW queries or more: the passes and the restore take
 * tiles of PSA_ITEMS_LARGE items a thread (psa_pass_items). Against the CPU engine in query order
 * (device and host arrays), unordered and for lower bounds, with the library's plan and a one-pass
 * plan; keys uniform, and a narrow band near the maximum; queries 0 and the maximum among them, and
 * the smallest and largest keys (in query order set apart with those outside the span). */
static void test_psa_large_tiles(void **state)
{
    (void)state;
    uint64_t rng = 29;
    assert_int_equal(psa_pass_items(32, PSA_ITEMS_LARGE_WINDOW), PSA_ITEMS_LARGE);
    assert_int_equal(psa_pass_items(32, PSA_ITEMS_LARGE_WINDOW - 1), PSA_ITEMS);
    assert_int_equal(psa_pass_items(64, PSA_ITEMS_LARGE_WINDOW), PSA_ITEMS);
    for (int shape = 0; shape < 2; shape++) {
        if (quick() && shape > 0)
            continue;
        tu_model m;
        const uint64_t n_keys = quick() ? 1u << 16 : 1u << 20;
        if (shape == 1) /* a narrow band near the maximum */
            make_top_band(&m, 32, n_keys, 3, &rng);
        else
            tu_model_make(&m, 32, n_keys, TU_UNIFORM, &rng);
        harmonia_tree *t = build(&m, 32, 16, &rng);
        const uint64_t n = (uint64_t)PSA_ITEMS_LARGE_WINDOW + 777;
        void *q = make_queries(&m, n, &rng);
        tu_set(q, 32, 0, 0);
        tu_set(q, 32, 1, tu_mask(32));
        tu_set(q, 32, n - 1, tu_mask(32));
        for (uint64_t i = 2; i < n; i += 64) /* the edges: set apart in query order (plan.edges) */
            tu_set(q, 32, i, m.keys[i % 128 == 2 ? 0 : m.n - 1]);
        const uint32_t plan_bits[] = {0, 9};
        for (unsigned pb = 0; pb < 2; pb++) {
            if (quick() && pb > 0)
                continue;
            config_psa_bits = plan_bits[pb];
            check_lookups(t, 32, q, n, 0, 1, 0, 1, 0); /* the passes and the restore, large tiles */
            if (!quick()) { /* (under the sanitizers, that one call: 2^22 queries are slow there) */
                check_lookups(t, 32, q, n, 0, 1, 0, 1, 1);
                check_lookups(t, 32, q, n, 0, 1, 0, 1, 2);
                check_lookups(t, 32, q, n, 0, 1, 0, 0, 0);
                check_lower_bounds(t, 32, q, n, 0, 1, 0, 1);
            }
        }
        config_psa_bits = 0;
        free(q);
        harmonia_free(t);
        tu_model_free(&m);
    }
}

/* Windows of PSA_CHUNKED_MIN_WINDOW queries or more under two-pass plans: pass 1 runs without a
 * count, into chunks taken in turn, and pass 2 takes the chunks as its tiles (psa_partition.cu, "Pass
 * 1 into chunks"). Both widths; plans of 16 bits (8 + 8) and of 19 (9 + 10: every pass-1 bin the
 * shared arrays hold); queries spread over every bin (hits, misses, below and above the span), and
 * queries crowded into one bucket (one bin takes most chunks, the outside bin the rest); query 0 and
 * the maximum among them, and the smallest and largest keys (in query order set apart with them).
 * Against the CPU engine in query order, unordered (every position once) and for lower bounds. */
static void test_psa_chunked(void **state)
{
    (void)state;
    uint64_t rng = 37;
    assert_true(psa_pass1_chunked(PSA_CHUNKED_MIN_WINDOW, 8));
    assert_false(psa_pass1_chunked(PSA_CHUNKED_MIN_WINDOW - 1, 8));
    assert_false(psa_pass1_chunked(PSA_CHUNKED_MIN_WINDOW, 0)); /* one pass: pass 1 is the layout */
    /* pass 2's count from pass 1's fine bins where they are narrower than half a key (the plans
     * below take both widths of them: 16 bits = 8 + 8, 19 = 9 + 10; test_psa_partition's 13 = 6 + 7
     * the counted pass 1's unaligned tiles) */
    assert_int_equal(psa_fine_bytes(64, 8), 1);
    assert_int_equal(psa_fine_bytes(64, 10), 2);
    assert_int_equal(psa_fine_bytes(32, 8), 1);
    assert_int_equal(psa_fine_bytes(32, 9), 0);
    assert_int_equal(psa_fine_bytes(64, 0), 0);
    /* a plan with edges serves ordered windows only (their answers come from the restore) */
    {
        psa_plan edges = psa_make_plan(10, 1u << 30, 1u << 16, 128, 0);
        edges.edges = 1;
        uint64_t positions[4];
        uint32_t queries[4] = {1, 2, 3, 4};
        psa_partitioned part;
        memset(&part, 0, sizeof part);
        const psa_positions where = {positions, 0, true};
        assert_int_equal(psa_partition(32, &edges, queries, 4, where, NULL, 0, &part, 0), cudaErrorInvalidValue);
        part.plan = edges;
        part.n = 4;
        part.slots1 = (const uint32_t *)queries; /* (refused before anything is read) */
        uint8_t found[4];
        assert_int_equal(psa_restore(32, &part, NULL, NULL, found, NULL, NULL, found, NULL, 0), cudaErrorInvalidValue);
    }
    for (unsigned w = 0; w < 2; w++)
        for (int shape = 0; shape < 2; shape++) {
            if (quick() && (w || shape)) /* (under the sanitizers one case: 2^23 queries are slow there) */
                continue;
            const uint32_t bits = w ? 64 : 32;
            tu_model m;
            tu_model_make(&m, bits, quick() ? 1u << 16 : 1u << 20, TU_UNIFORM, &rng);
            harmonia_tree *t = build(&m, w ? 16 : 32, 16, &rng);
            const uint64_t n = (uint64_t)PSA_CHUNKED_MIN_WINDOW + 777;
            void *q = make_queries(&m, n, &rng);
            if (shape == 1) /* crowded: 7 queries in 8 among 64 neighbouring keys */
                for (uint64_t i = 0; i < n; i++)
                    if (tu_next(&rng) % 8)
                        tu_set(q, bits, i, m.keys[m.n / 2 + tu_next(&rng) % 64]);
            for (uint64_t i = 5; i < n; i += 16) /* the smallest and largest keys: set apart in query
                                                    order (plan.edges), with those outside the span */
                tu_set(q, bits, i, m.keys[i % 32 == 5 ? 0 : m.n - 1]);
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            tu_set(q, bits, n - 1, tu_mask(bits));
            const uint32_t plan_bits[] = {16, 19};
            for (unsigned pb = 0; pb < 2; pb++) {
                if (quick() && pb > 0)
                    continue;
                config_psa_bits = plan_bits[pb];
                check_lookups(t, bits, q, n, 0, 1, 0, 1, 1); /* unordered: the outside bin's region too */
                check_lookups(t, bits, q, n, 0, 1, 0, 1, 2);
                if (!quick()) {
                    check_lookups(t, bits, q, n, 0, 1, 0, 1, 0);
                    check_lower_bounds(t, bits, q, n, 0, 1, 0, 1);
                }
            }
            config_psa_bits = 0;
            free(q);
            harmonia_free(t);
            tu_model_free(&m);
        }
}


/* The staged search's bucket tables (gpu_tree.cu, HM_BUCKET_TABLES: two, the one built longest ago
 * giving way): calls of three plans (a config's psa_bits) in the order 16, 19, 16, 13, 19, 13 —
 * built, built, found, built in the first's place, found, found — results in query order and
 * unordered in turn, three rounds with an update before the third (a new version: every table
 * stale); then (not under the sanitizers) the unordered lookups' own
 * plan (psa_unordered_plan: one bit fewer on 64-bit trees of more than 2^22 leaves) beside the
 * tree's, unordered, in query order and unordered again, with the library's defaults, over 2^27
 * keys at 8 queries a leaf (the staged search in both orders). Every result against the CPU
 * engine. */
static void test_bucket_tables(void **state)
{
    (void)state;
    uint64_t rng = 41;
    tu_model m;
    tu_model_make(&m, 64, quick() ? 1u << 16 : 1u << 20, TU_UNIFORM, &rng);
    harmonia_tree *t = build_filled(&m, 16, 16, 1.0, &rng);
    const uint64_t n = quick() ? (1u << 14) + 3 : (1u << 18) + 5;
    void *q = make_queries(&m, n, &rng);
    const uint32_t plan_bits[] = {16, 19, 16, 13, 19, 13};
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 6; k++) {
            if (quick() && k >= 4)
                break;
            config_psa_bits = plan_bits[k];
            check_lookups(t, 64, q, n, 0, 1, 0, 1, (k + round) % 2);
        }
        if (round == 1)
            delete_every_17th(t, &m);
    }
    config_psa_bits = 0;
    free(q);
    harmonia_free(t);
    tu_model_free(&m);
    if (quick())
        return;
    /* the defaults on a large 64-bit tree: two plans, two tables */
    assert_true(psa_unordered_wider(64, 17));
    assert_false(psa_unordered_wider(64, 16));
    tu_model_make(&m, 64, 1u << 27, TU_UNIFORM, &rng);
    t = build_filled(&m, 16, 16, 1.0, &rng);
    { /* the two plans the calls below take (a failure here names the plan, not a byte count) */
        const psa_plan tree_plan = psa_make_plan(m.keys[0], m.keys[m.n - 1], t->kr.n_leaves, 16 * 8, 0);
        assert_int_equal(tree_plan.bits, 17);
        assert_int_equal(psa_unordered_plan(&tree_plan, 64, t->kr.n_leaves, 16 * 8).bits, 16);
    }
    const uint64_t big = 1u << 26; /* 8 a leaf: staged in query order too (at 4: the descent path) */
    q = make_queries(&m, big, &rng);
    for (uint64_t i = 0; i < big; i += 4099) /* the smallest and largest keys, and outside the span */
        tu_set(q, 64, i, i % 3 == 0 ? m.keys[0] : i % 3 == 1 ? m.keys[m.n - 1] : tu_mask(64));
    /* the device bytes after each call: the query-order call adds the tree's plan's table (17 bits)
     * beside the unordered plan's (16 bits) and nothing else (the same window's scratch); the third
     * call finds its table */
    uint64_t held[3];
    for (int k = 0; k < 3; k++) {
        check_lookups(t, 64, q, big, 0, -1, 0, 1, k != 1);
        harmonia_tree_info info;
        assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
        held[k] = info.device_bytes;
    }
    assert_int_equal(held[1] - held[0], ((1u << 17) + 1) * 4);
    assert_int_equal(held[2], held[1]);
    free(q);
    harmonia_free(t);
    tu_model_free(&m);
}

/* --- the start table (ntg.h) --------------------------------------------------------------------- */

/* The node at `level` of the descent of q from the root on the host tree: the kernels' node search
 * (the keys <= q among the node's F slots, at most the last child). */
static uint64_t host_node_at(const kr_tree *t, uint64_t q, uint32_t level)
{
    uint64_t node = 0;
    for (uint32_t l = 0; l < level; l++) {
        uint64_t j = 0;
        for (uint32_t s = 0; s < t->fanout; s++)
            j += kr_load(t->keys, t->key_bits, node * t->fanout + s) <= q;
        const uint64_t first = t->first_child[node], last = t->first_child[node + 1] - first - 1;
        node = first + (j < last ? j : last);
    }
    return node;
}

/* Every entry of one of the tree's start tables (the coarse, or the fine when `fine`) against the
 * invariant: each key q of bucket u (its first and last keys, keys between, 0 and the largest key
 * value in the first and last buckets) passes through the entry's node at its level, the second
 * candidate from the separator on. Returns the mean start level's distance from the leaf level (0:
 * every descent starts at its leaf); *count_out: the table's entries (0: none). */
static double check_start_entries(harmonia_tree *t, bool fine, uint64_t *rng, uint64_t *count_out)
{
    const kr_tree *kr = &t->kr;
    const uint64_t capacity = 1u << NTG_START_FINE_MAX_BITS;
    ntg_start_entry *e = malloc(capacity * sizeof *e);
    uint64_t count = 0;
    psa_plan plan;
    assert_int_equal(hm_gpu_start_table(t, fine, e, capacity, &count, &plan), HARMONIA_OK);
    *count_out = count;
    /* the coarse table: every tree of two levels and more (bits as the policy and the keys' span
     * allow: psa_make_plan); the fine one: where its plan has more buckets than the coarse one's */
    uint64_t want = 0;
    if (kr->height >= 2 && kr->n_keys >= 2) {
        harmonia_tree_info info;
        assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
        const uint32_t leaf_bytes = kr->leaf_size * (kr->key_bits / 8);
        const psa_plan coarse = psa_make_plan(info.min_key, info.max_key, kr->n_leaves, leaf_bytes,
                                              ntg_start_bits(kr->n_leaves, NTG_START_MAX_BITS)),
                       finer = psa_make_plan(info.min_key, info.max_key, kr->n_leaves, leaf_bytes,
                                             ntg_start_bits(kr->n_leaves, NTG_START_FINE_MAX_BITS));
        if (!fine && coarse.bits > 0)
            want = 1ull << coarse.bits;
        if (fine && finer.bits > coarse.bits)
            want = 1ull << finer.bits;
    }
    if (want == 0 || count == 0) {
        assert_int_equal(count, want); /* nothing to skip, or a fine table no finer */
        free(e);
        return 0;
    }
    assert_true(count >= 2 && count <= capacity);
    assert_int_equal(count, 1ull << plan.bits);
    assert_int_equal(count, want);
    const uint64_t kmax = tu_mask(kr->key_bits);
    double depth = 0;
    for (uint64_t u = 0; u < count; u++) {
        const uint32_t level = e[u].level & ~NTG_START_TWO;
        const bool two = (e[u].level & NTG_START_TWO) != 0;
        assert_true(level < kr->height);
        assert_true(!two || level > 0);
        depth += kr->height - 1 - level;
        const uint64_t lo = u == 0 ? 0 : psa_bucket_start(&plan, u);
        uint64_t hi = u + 1 == count ? kmax : psa_bucket_start(&plan, u + 1) - 1;
        if (hi < lo)
            continue; /* no key reaches it */
        /* [lo, hi] is the whole bucket: the keys next to it belong to others */
        if (lo > 0)
            assert_true(psa_bucket(&plan, lo - 1) < u);
        if (hi < kmax)
            assert_true(psa_bucket(&plan, hi + 1) > u);
        uint64_t probes[8] = {lo, hi, lo + (hi - lo) / 2, lo + tu_next(rng) % (hi - lo + 1), lo + tu_next(rng) % (hi - lo + 1),
                              two ? e[u].separator : lo, two && e[u].separator > 0 ? e[u].separator - 1 : hi, hi};
        for (int k = 0; k < 8; k++) {
            const uint64_t q = probes[k];
            if (q < lo || q > hi)
                continue;
            assert_int_equal(psa_bucket(&plan, q), u);
            const uint64_t want = host_node_at(kr, q, level);
            const uint64_t got = e[u].node + (two && q >= e[u].separator ? 1 : 0);
            if (want != got)
                fail_msg("start table: bucket %llu of %llu, key %llu: level %u node %llu, the descent passes %llu",
                         (unsigned long long)u, (unsigned long long)count, (unsigned long long)q, level,
                         (unsigned long long)got, (unsigned long long)want);
        }
    }
    free(e);
    return depth / (double)count;
}

/* Both start tables of the tree; returns the coarse one's mean start depth (check_start_entries),
 * the fine one's in *fine_depth (0 without one). */
static double check_start_table(harmonia_tree *t, uint64_t *rng, double *fine_depth)
{
    uint64_t count = 0, fine_count = 0;
    const double depth = check_start_entries(t, false, rng, &count);
    const double fine = check_start_entries(t, true, rng, &fine_count);
    if (fine_depth)
        *fine_depth = fine;
    if (fine_count)
        assert_true(fine_count > count && fine <= depth); /* finer, and starting no higher on average */
    return depth;
}

/* A device allocator that refuses allocations of the sizes in the zero-terminated list *context
 * and serves the rest. (By size only: the calls made with it below allocate nothing else of those
 * sizes — device arrays, no PSA, so no lanes or scratch.) */
static void *refuse_size(void *context, size_t bytes, void *stream)
{
    (void)stream;
    void *p = NULL;
    for (const size_t *r = (const size_t *)context; *r; r++)
        if (bytes == *r)
            return NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess)
        return NULL;
    return p;
}

static void free_device(void *context, void *pointer, size_t bytes, void *stream)
{
    (void)context;
    (void)bytes;
    (void)stream;
    cudaFree(pointer);
}

/* Without the memory for its start tables a tree answers as before, from the root, and without the
 * fine one's from the coarse one: an allocator that refuses the tables' sizes (2^16 and 2^17
 * entries of 16 bytes), every answer against the CPU engine (small batches: the fine table's
 * descents; large ones: the coarse table's). */
static void check_without_start_table(uint64_t *rng)
{
    tu_model m;
    tu_model_make(&m, 64, 1000000, TU_UNIFORM, rng); /* 62,500 leaves: tables of 2^16 and 2^17 entries */
    harmonia_tree *t = build_filled(&m, 16, 16, 1.0, rng);
    ntg_start_entry e[2];
    uint64_t count = 0, fine_count = 0;
    psa_plan plan;
    assert_int_equal(hm_gpu_start_table(t, false, e, 2, &count, &plan), HARMONIA_OK);
    assert_int_equal(hm_gpu_start_table(t, true, e, 2, &fine_count, &plan), HARMONIA_OK);
    assert_int_equal(count, 1u << 16); /* with the library's allocator: both tables */
    assert_int_equal(fine_count, 1u << 17);
    check_start_table(t, rng, NULL); /* (also under the sanitizers: a fine table checked entry by entry) */
    const uint64_t n = 30000, n_large = 1u << 17;
    void *q = make_queries(&m, n_large, rng);
    tu_set(q, 64, 0, 0);
    tu_set(q, 64, 1, tu_mask(64));
    check_lookups(t, 64, q, n, 0, 0, 4096, 1, 0); /* both tables: the fine one's descents */
    check_lower_bounds(t, 64, q, n, 0, 0, 4096, 1);
    /* refused: the fine table; the coarse one (the fine one then serves the small batches alone);
     * both. An allocator of another context each time: harmonia_set_device makes the copy again
     * only for a different placement. */
    const size_t fine_bytes = fine_count * sizeof(ntg_start_entry), coarse_bytes = count * sizeof(ntg_start_entry);
    size_t refused[3][3] = {{fine_bytes, 0, 0}, {coarse_bytes, 0, 0}, {fine_bytes, coarse_bytes, 0}};
    for (int r = 0; r < 3; r++) {
        const bool refuse_fine = r != 1, refuse_coarse = r != 0;
        harmonia_allocator a;
        harmonia_allocator_init(&a);
        a.context = refused[r];
        a.device_alloc = refuse_size;
        a.device_free = free_device;
        assert_int_equal(harmonia_set_device(t, HARMONIA_DEVICE_CURRENT, &a), HARMONIA_OK);
        uint64_t c = 0, fc = 0;
        assert_int_equal(hm_gpu_start_table(t, false, e, 2, &c, &plan), HARMONIA_OK);
        assert_int_equal(hm_gpu_start_table(t, true, e, 2, &fc, &plan), HARMONIA_OK);
        assert_int_equal(c, refuse_coarse ? 0 : count); /* the copy made again through the allocator */
        assert_int_equal(fc, refuse_fine ? 0 : fine_count);
        check_lookups(t, 64, q, n, 0, 0, 4096, 1, 0);
        check_lower_bounds(t, 64, q, n, 0, 0, 4096, 1);
        check_lookups(t, 64, q, n_large, 0, 0, 4096, 1, 0);
    }
    free(q);
    harmonia_free(t);
    tu_model_free(&m);
}

/* The scattered lookups that load with L2 priorities (ntg_policy.h NTG_L2_HINTS: batches of
 * NTG_L2_HINTS_BATCH queries or more, PSA off, the default shape): every G, both widths, both result
 * orders, device and host arrays, the smallest and largest key values among the queries, a tree
 * with deleted keys (separators below their leaves' first keys); and the batch one below the bound
 * (plain loads) — every answer against the CPU engine. */
static void test_l2_hints(void **state)
{
    (void)state;
    uint64_t rng = 2026;
    const uint32_t groups[] = {1, 2, 4, 8, 16, 32};
    for (unsigned w = 0; w < 2; w++) {
        const uint32_t bits = w ? 64 : 32;
        tu_model m;
        tu_model_make(&m, bits, quick() ? 1u << 17 : 1u << 20, TU_UNIFORM, &rng);
        harmonia_tree *t = build(&m, HARMONIA_DEFAULT_FANOUT(bits), 16, &rng);
        for (int round = 0; round < 2; round++) {
            if (round == 1)
                delete_every_17th(t, &m);
            const uint64_t n = NTG_L2_HINTS_BATCH + 777;
            void *q = make_queries(&m, n, &rng);
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            tu_set(q, bits, n - 1, tu_mask(bits));
            for (unsigned gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
                const uint32_t g = groups[gi];
                if (g > HARMONIA_DEFAULT_FANOUT(bits) || (quick() && g != 4 && g != 32))
                    continue;
                check_lookups(t, bits, q, n, g, 0, 0, 1, 0);
                check_lookups(t, bits, q, n, g, 0, 0, 1, 1);
                check_lookups(t, bits, q, n, g, 0, 0, 1, 2);
            }
            check_lookups(t, bits, q, n, 0, 0, 0, 0, 2); /* host arrays, 32-bit positions */
            check_lookups(t, bits, q, n, 0, 0, 0, 0, 0);                      /* host arrays */
            check_lookups(t, bits, q, NTG_L2_HINTS_BATCH - 1, 0, 0, 0, 1, 0); /* plain loads */
            free(q);
        }
        harmonia_free(t);
        tu_model_free(&m);
    }
}

/* The start table of trees of both widths, several shapes and key distributions, before and after
 * updates (separators below their leaves' first keys; a reshaping insert batch), and a tree whose
 * allocator refuses it (answers from the root); every entry
 * against descents on the host tree; lookups and lower bounds through it against the CPU engine
 * (the rest of this file runs every query kind through it too); and its reach on uniform keys. */
static void test_start_table(void **state)
{
    (void)state;
    uint64_t rng = 101;
    check_without_start_table(&rng);
    static const uint64_t sizes[] = {1, 2, 40, 3000, 200000, 2000000};
    for (unsigned w = 0; w < 2; w++) {
        const uint32_t bits = w ? 64 : 32;
        for (unsigned si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            for (int dist = 0; dist < TU_DIST_COUNT; dist++) {
                if (quick() && (sizes[si] > 200000 || (dist != TU_UNIFORM && dist != TU_CLUSTERED)))
                    continue;
                tu_model m;
                tu_model_make(&m, bits, sizes[si], (tu_dist)dist, &rng);
                const uint32_t fanout = si % 2 ? HARMONIA_DEFAULT_FANOUT(bits) : 8, leaf = si % 2 ? 16 : 32;
                harmonia_tree *t = build(&m, fanout, leaf, &rng);
                double fine_depth = 0;
                const double depth = check_start_table(t, &rng, &fine_depth);
                /* uniform keys: buckets of half a leaf, at most 2^16 of them; a descent starts at most
                 * ~two levels above the leaves (up to 2^16 leaves: at its leaf, mostly); the fine
                 * table's (2^18 buckets here), at its leaf mostly */
                if (dist == TU_UNIFORM && t->kr.n_leaves >= 4 && t->kr.n_leaves <= (1u << 15))
                    assert_true(depth < 0.5);
                if (dist == TU_UNIFORM && t->kr.n_leaves > (1u << 15)) {
                    assert_true(depth < 2.5);
                    assert_true(fine_depth < 0.5);
                }
                uint64_t n = 30000;
                void *q = make_queries(&m, n, &rng);
                tu_set(q, bits, 0, 0);
                tu_set(q, bits, 1, tu_mask(bits));
                check_lookups(t, bits, q, n, 0, 0, 4096, 1, 0); /* (small batches: the fine table, if any) */
                check_lower_bounds(t, bits, q, n, 0, 0, 4096, 0);
                if (t->kr.n_leaves > (1u << 15)) { /* a batch that takes the coarse table */
                    const uint64_t nb = NTG_START_FINE_BATCH;
                    void *qb = make_queries(&m, nb, &rng);
                    tu_set(qb, bits, nb - 1, tu_mask(bits));
                    check_lookups(t, bits, qb, nb, 0, 0, 4096, 1, 0);
                    check_lower_bounds(t, bits, qb, nb, 0, 0, 4096, 1);
                    free(qb);
                }
                if (m.n >= 17 * 16) { /* in place: separators below their leaves' first keys */
                    delete_every_17th(t, &m);
                    check_start_table(t, &rng, NULL);
                    free(q);
                    q = make_queries(&m, n, &rng);
                    check_lookups(t, bits, q, n, 0, 0, 4096, 1, 0);
                    check_lower_bounds(t, bits, q, n, 0, 0, 4096, 1);
                }
                if (m.n >= 1000) { /* a batch of upserts that reshapes the tree */
                    const uint64_t ni = m.n / 2;
                    uint8_t *kinds = calloc(ni, 1);
                    void *keys = malloc(ni * 8), *values = malloc(ni * 8);
                    for (uint64_t i = 0; i < ni; i++) {
                        kinds[i] = HARMONIA_OP_UPSERT; /* random keys: some are present */
                        tu_set(keys, bits, i, tu_next(&rng));
                        tu_set(values, bits, i, tu_next(&rng));
                    }
                    harmonia_update_stats st;
                    if (harmonia_update(t, NULL, kinds, keys, values, ni, &st) != HARMONIA_OK)
                        fail_msg("update: %s", harmonia_last_error(t));
                    check_start_table(t, &rng, NULL);
                    check_lookups(t, bits, keys, ni, 0, 0, 4096, 1, 0);
                    check_lower_bounds(t, bits, keys, ni, 0, 0, 4096, 0);
                    free(kinds);
                    free(keys);
                    free(values);
                }
                free(q);
                harmonia_free(t);
                tu_model_free(&m);
            }
        }
    }
}

/* Lookups and lower bounds of large sparse windows (0.6 to 1.4 queries a leaf, at least 2^21; and
 * 2.2 a leaf): PSA's descent path (a one-pass partition on psa_descent_bits bits, which writes the
 * positions of unordered windows, then the plain descent over the slots, for 64-bit keys two
 * queries a group at the policy's G (ntg_policy.h) and at G 2 and 8, one at G 1 and 16; in query
 * order, and for lower bounds of 32-bit keys, the restore), with PSA auto; against the CPU engine,
 * every position once. Shapes: uniform keys, and a narrow band near the maximum (the plan's bits
 * sit where key_min and key_max differ); queries 0 and the maximum among them (outside the span:
 * the partition puts them last, and the descent searches them too), and a window two thirds
 * outside (pass 1 ranks a warp's outside queries together: rank_add); two windows (the second's
 * positions from its base); a config's psa_bits (which the descent path does not take: it needs a
 * one-pass plan). */
static void test_sparse_unordered(void **state)
{
    (void)state;
    uint64_t rng = 77;
    for (unsigned w = 0; w < 2; w++)
        for (int shape = 0; shape < 2; shape++) {
            /* both widths under the sanitizers too */
            if (quick() && shape == 1)
                continue;
            const uint32_t bits = w ? 64 : 32;
            tu_model m;
            /* shape 0: the default F and L (the fixed-shape kernels), shape 1: leaves of 8 */
            const uint64_t n_keys = shape == 0 ? 1u << 24 : 1u << 23;
            if (shape == 1) {
                make_top_band(&m, bits, n_keys, 5, &rng);
            } else {
                tu_model_make(&m, bits, n_keys, TU_UNIFORM, &rng);
            }
            /* leaves at 70 %: about 1.5M leaves, more than half the queries: the staged search does
             * not pay (psa_pays), the descent path does (psa_descent_pays), in both orders (in query
             * order below 2.5 queries a leaf for 32-bit keys, 4.5 for 64-bit), and so do lower bounds
             * of 32-bit keys (below 1.5 a leaf; shape 0's at 35 %, about 3M leaves, more than the
             * queries) */
            const double fill = shape == 0 && bits == 32 ? 0.35 : 0.7;
            harmonia_tree *t = shape == 0 ? build_filled(&m, HARMONIA_DEFAULT_FANOUT(bits), HARMONIA_DEFAULT_LEAF_SIZE,
                                                         fill, &rng)
                                          : build_filled(&m, w ? 16 : 32, 8, fill, &rng);
            const uint64_t n = (1u << 21) + 333;
            /* the window takes the descent path: the staged search declines, and it is large enough */
            assert_false(psa_pays(n, t->kr.n_leaves));
            assert_true(psa_descent_pays(n, t->kr.n_leaves, t->kr.key_bits, true));
            assert_true(psa_descent_pays(n, t->kr.n_leaves, t->kr.key_bits, false));
            assert_true(2 * n < 3 * t->kr.n_leaves); /* below 1.5 a leaf */
            const bool lower_bound_descent = bits == 32;
            assert_int_equal(psa_descent_lower_bound_pays(n, t->kr.n_leaves, bits), lower_bound_descent);
            /* harmonia_query_workspace_bytes counts PSA's scratch for lookups of device arrays in
             * either order (the descent path), and for lower bounds where it takes them too (32-bit
             * keys), else none (the descent alone) */
            harmonia_query_config wc;
            harmonia_query_config_init(&wc);
            wc.backend = HARMONIA_BACKEND_GPU;
            wc.memory = HARMONIA_MEMORY_DEVICE;
            size_t device_bytes = 0, scratch_bytes = 0;
            assert_int_equal(harmonia_query_workspace_bytes(t, &wc, HARMONIA_QUERY_LOOKUP_UNORDERED, n, &device_bytes,
                                                            NULL),
                             HARMONIA_OK);
            assert_int_equal(psa_scratch_bytes(bits, (uint32_t)n, &scratch_bytes), cudaSuccess);
            assert_true(scratch_bytes > 0 && device_bytes >= scratch_bytes);
            assert_int_equal(harmonia_query_workspace_bytes(t, &wc, HARMONIA_QUERY_LOOKUP, n, &device_bytes, NULL),
                             HARMONIA_OK);
            assert_int_equal(device_bytes, scratch_bytes);
            assert_int_equal(harmonia_query_workspace_bytes(t, &wc, HARMONIA_QUERY_LOWER_BOUND, n, &device_bytes, NULL),
                             HARMONIA_OK);
            assert_int_equal(device_bytes, lower_bound_descent ? scratch_bytes : 0);
            void *q = make_queries(&m, n, &rng);
            tu_set(q, bits, 0, 0);
            tu_set(q, bits, 1, tu_mask(bits));
            tu_set(q, bits, n / 2, m.keys[0]);
            tu_set(q, bits, n - 1, m.keys[m.n - 1]);
            check_lookups(t, bits, q, n, 0, -1, 0, 1, 1); /* auto: partitioned, then the descent */
            check_lookups(t, bits, q, n, 4, -1, 0, 1, 1); /* another G */
            check_lookups(t, bits, q, n, 0, -1, 1u << 21, 1, 1); /* two windows: 2^21 queries, then 333 */
            check_lookups(t, bits, q, n, 0, -1, 0, 1, 2);        /* 32-bit positions */
            check_lookups(t, bits, q, n, 0, -1, 1u << 21, 1, 2); /* and two windows */
            check_lookups(t, bits, q, n, 0, -1, 0, 1, 0); /* query order: the descent path
                                                             (partitioned, descended, restored) */
            check_lookups(t, bits, q, n, 8, -1, 0, 1, 0); /* another G (64-bit: two queries a group) */
            check_lookups(t, bits, q, n, 0, -1, 1u << 21, 1, 0); /* query order, two windows */
            /* lower bounds: the same path for 32-bit keys below 1.5 queries a leaf (0 below the span:
             * the smallest key; the maximum above it: none), else the descent in query order
             * (psa_descent_lower_bound_pays) */
            assert_int_equal(psa_descent_lower_bound(bits), bits == 32);
            check_lower_bounds(t, bits, q, n, 0, -1, 0, 1);
            check_lower_bounds(t, bits, q, n, 0, -1, 1u << 21, 1);
            config_psa_bits = 12; /* a config's bits (a two-pass plan): the descent keeps its own */
            check_lookups(t, bits, q, n, 0, -1, 0, 1, 1);
            config_psa_bits = 0;
            if (shape == 0) {
                /* a window whose buckets hold 0, the maximum, the smallest and largest keys and the
                 * tree's keys: two thirds of it outside the span, and in query order four fifths set
                 * apart by pass 1 (the edges too: plan.edges) (in quick mode too: the sanitizers see
                 * pass 1 rank a warp's outside queries together, rank_add, for 64-bit keys); both
                 * orders */
                void *q3 = make_queries(&m, n, &rng);
                for (uint64_t i = 0; i < n; i++) {
                    const uint64_t r = i % 15;
                    tu_set(q3, bits, i, r < 5 ? 0 : r < 10 ? tu_mask(bits) : r == 10 ? m.keys[0]
                                        : r == 11 ? m.keys[m.n - 1] : m.keys[(i * 7919) % m.n]);
                }
                check_lookups(t, bits, q3, n, 0, -1, 0, 1, 1);
                check_lookups(t, bits, q3, n, 0, -1, 0, 1, 2);
                check_lookups(t, bits, q3, n, 0, -1, 0, 1, 0);
                free(q3);
            }
            if (shape == 0 && !quick()) {
                /* the descent at other G, then a window whose partition has one bucket (every query
                 * the same key) (not in quick mode: the sanitizers run the same kernels on the window
                 * above) */
                check_lookups(t, bits, q, n, 1, -1, 0, 1, 1);
                check_lookups(t, bits, q, n, 2, -1, 0, 1, 1); /* 64-bit: two queries a group at G = 2 */
                check_lookups(t, bits, q, n, 8, -1, 0, 1, 1);
                check_lookups(t, bits, q, n, 16, -1, 0, 1, 1);
                for (uint64_t i = 0; i < n; i++)
                    tu_set(q, bits, i, m.keys[m.n / 3]);
                check_lookups(t, bits, q, n, 0, -1, 0, 1, 1);
                /* 2.2 queries a leaf: the staged search pays (psa_pays), and 64-bit keys still take
                 * the descent path below 4 a leaf (psa_policy.h), 32-bit ones the staged search; in
                 * query order both take the descent path (below 4.5 and 2.5 a leaf) */
                const uint64_t n2 = t->kr.n_leaves * 11 / 5;
                assert_true(psa_pays(n2, t->kr.n_leaves));
                assert_int_equal(psa_descent_pays(n2, t->kr.n_leaves, bits, true), bits == 64);
                void *q2 = make_queries(&m, n2, &rng);
                tu_set(q2, bits, 0, 0);
                tu_set(q2, bits, 1, tu_mask(bits));
                tu_set(q2, bits, n2 - 1, m.keys[m.n - 1]);
                check_lookups(t, bits, q2, n2, 0, -1, 0, 1, 1);
                check_lookups(t, bits, q2, n2, 0, -1, 0, 1, 2);
                assert_true(psa_descent_pays(n2, t->kr.n_leaves, bits, false));
                check_lookups(t, bits, q2, n2, 0, -1, 0, 1, 0);
                /* lower bounds there: the staged search (psa_pays; 32-bit keys take the descent path
                 * below 1.5 a leaf, 64-bit keys never) */
                assert_false(psa_descent_lower_bound_pays(n2, t->kr.n_leaves, bits));
                check_lower_bounds(t, bits, q2, n2, 0, -1, 0, 1);
                free(q2);
            }
            free(q);
            harmonia_free(t);
            tu_model_free(&m);
        }
}

static void test_ranges(void **state)
{
    (void)state;
    uint64_t rng = 17;
    for (unsigned w = 0; w < 2; w++) {
        tu_model m;
        tu_model_make(&m, w ? 64 : 32, 30000, (tu_dist)(w ? TU_CLUSTERED : TU_EXTREMES), &rng);
        harmonia_tree *t = build(&m, 8, 16, &rng);
        for (unsigned gi = 0; gi < 4; gi += quick() ? 3 : 1)
            for (int dev = 0; dev < 2; dev++)
                check_ranges(t, &m, quick() ? 500 : 3000, group_sizes[gi], dev, &rng);
        for (int dev = 0; dev < 2; dev++) /* no G: the library's choice (the collect's from the mean length) */
            check_ranges(t, &m, quick() ? 500 : 3000, 0, dev, &rng);
        harmonia_free(t);
        tu_model_free(&m);
    }
}

/* Range collect with no G in the config on device arrays: the kernel picks G from the ranges' mean
 * length (offsets[n] - offsets[0]) / n on the device (ntg_collect_group_size: the tree's G below
 * 32 pairs, 8 from 32, 32 from 512, at most the fanout). The results are the same for every G, so
 * what the test checks is that every band, and each edge of one, gives the CPU engine's pairs:
 * ranges of exactly `length` keys (one in 97 empty and the next one twice as long, so that the mean
 * is exactly `length`; lengths below 16 also get one range over the whole tree where that keeps
 * the mean below 24), or with `sparse`
 * one range in 20 of 20 * length keys and the rest empty (many ranges at a long mean: the kernel
 * loops over its grid). Synchronous and asynchronous. Returns the G the policy gives the call. */
static unsigned check_collect_lengths(harmonia_tree *t, const tu_model *m, uint64_t n, uint64_t length, int sparse,
                                      int async, uint64_t *rng)
{
    const uint32_t bits = m->key_bits;
    const size_t kb = bits / 8;
    void *lo = malloc(n * kb + 8), *hi = malloc(n * kb + 8);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = sparse ? (i % 20 == 0 ? 20 * length : 0) : i % 97 == 5 ? 0 : i % 97 == 6 ? 2 * length : length;
        const uint64_t first = tu_next(rng) % (m->n - (sparse ? 20 : 2) * length - 1);
        uint64_t a = m->keys[first + 1], b = m->keys[first]; /* empty: lo above hi */
        if (len > 0)
            a = m->keys[first], b = m->keys[first + len - 1];
        /* one range over everything, where it keeps the mean below 16 + 8 (not an edge) */
        if (!sparse && i == n / 2 && length < 16 && 8 * n > m->n)
            a = 0, b = tu_mask(bits);
        tu_set(lo, bits, i, a);
        tu_set(hi, bits, i, b);
    }
    harmonia_query_config cpu, gpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    harmonia_query_config_init(&gpu);
    gpu.backend = HARMONIA_BACKEND_GPU;
    uint64_t *ref_offsets = malloc((n + 1) * 8), *offsets = malloc((n + 1) * 8);
    assert_int_equal(harmonia_range_collect(t, &cpu, lo, hi, n, ref_offsets, NULL, NULL), HARMONIA_OK);
    const uint64_t total = ref_offsets[n];
    if (length >= 16 || sparse) /* the mean is the length: the band's edge is where the test says */
        assert_int_equal(total, n * length);
    harmonia_tree_info info;
    assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
    const unsigned tree_g = info.ntg_group_size ? info.ntg_group_size
                                                : ntg_default_group_size(info.fanout, bits, n, 0, 0);
    const unsigned g = ntg_collect_group_size(total, n, tree_g, info.fanout);
    void *ref_keys = malloc(total * kb + 8), *ref_values = malloc(total * kb + 8);
    void *keys = malloc(total * kb + 8), *values = malloc(total * kb + 8);
    assert_int_equal(harmonia_range_collect(t, &cpu, lo, hi, n, ref_offsets, ref_keys, ref_values), HARMONIA_OK);
    void *d_lo = device_copy(lo, n * kb), *d_hi = device_copy(hi, n * kb);
    void *d_offsets = device_alloc((n + 1) * 8), *d_keys = device_alloc(total * kb), *d_values = device_alloc(total * kb);
    assert_int_equal(cudaMemset(d_keys, 0xA5, total * kb), cudaSuccess);
    if (async) {
        cudaStream_t stream;
        assert_int_equal(cudaStreamCreate(&stream), cudaSuccess);
        assert_int_equal(harmonia_range_collect_async(t, &gpu, d_lo, d_hi, n, d_offsets, NULL, NULL, stream),
                         HARMONIA_OK);
        if (harmonia_range_collect_async(t, &gpu, d_lo, d_hi, n, d_offsets, d_keys, d_values, stream) != HARMONIA_OK)
            fail_msg("async collect, mean length %llu: %s", (unsigned long long)length, harmonia_last_error(t));
        assert_int_equal(cudaStreamSynchronize(stream), cudaSuccess);
        assert_int_equal(cudaStreamDestroy(stream), cudaSuccess);
    } else {
        assert_int_equal(harmonia_range_collect(t, &gpu, d_lo, d_hi, n, d_offsets, NULL, NULL), HARMONIA_OK);
        if (harmonia_range_collect(t, &gpu, d_lo, d_hi, n, d_offsets, d_keys, d_values) != HARMONIA_OK)
            fail_msg("collect, mean length %llu: %s", (unsigned long long)length, harmonia_last_error(t));
    }
    to_host(offsets, d_offsets, (n + 1) * 8);
    to_host(keys, d_keys, total * kb);
    to_host(values, d_values, total * kb);
    for (uint64_t i = 0; i <= n; i++)
        assert_int_equal(offsets[i], ref_offsets[i]);
    for (uint64_t j = 0; j < total; j++)
        if (tu_get(keys, bits, j) != tu_get(ref_keys, bits, j) || tu_get(values, bits, j) != tu_get(ref_values, bits, j))
            fail_msg("collect pair %llu of %llu differs (%u-bit, length %llu, n %llu, G %u, async %d)",
                     (unsigned long long)j, (unsigned long long)total, bits, (unsigned long long)length,
                     (unsigned long long)n, g, async);
    cudaFree(d_lo); cudaFree(d_hi); cudaFree(d_offsets); cudaFree(d_keys); cudaFree(d_values);
    free(lo); free(hi); free(ref_offsets); free(offsets); free(ref_keys); free(ref_values); free(keys); free(values);
    return g;
}

static void test_collect_group_choice(void **state)
{
    (void)state;
    uint64_t rng = 23;
    static const uint64_t lengths[] = {1, 8, 31, 32, 64, 511, 512, 1024, 5000};
    uint64_t seen = 0; /* bit g: a call the policy gave G = g */
    for (unsigned w = 0; w < 2; w++)
        for (unsigned f = 0; f < 2; f++) {
            const uint32_t bits = w ? 64 : 32, F = f ? 64 : HARMONIA_DEFAULT_FANOUT(bits);
            tu_model m;
            tu_model_make(&m, bits, quick() ? 20000 : 60000, TU_UNIFORM, &rng);
            harmonia_tree *t = build(&m, F, HARMONIA_DEFAULT_LEAF_SIZE, &rng);
            for (unsigned li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                if (quick() && li % 3 != 1)
                    continue;
                const uint64_t n = lengths[li] >= 256 ? 400 : quick() ? 3000 : 70000;
                for (int async = 0; async < 2; async++)
                    seen |= 1ull << check_collect_lengths(t, &m, n, lengths[li], 0, async, &rng);
            }
            /* the tree's own G (harmonia_set_group_size) for short ranges: 1 and 2 */
            for (uint32_t g = 1; g <= 2; g++) {
                assert_int_equal(harmonia_set_group_size(t, g), HARMONIA_OK);
                seen |= 1ull << check_collect_lengths(t, &m, 2000, 8, 0, (int)g - 1, &rng);
            }
            assert_int_equal(harmonia_set_group_size(t, 0), HARMONIA_OK);
            /* many ranges at a mean of 512 (the 32-bit default tree: G = 32, more ranges than the
             * grid's warps), and at 40 */
            if (!quick() && !w && !f)
                for (int async = 0; async < 2; async++)
                    seen |= 1ull << check_collect_lengths(t, &m, 40000, 512, 1, async, &rng);
            seen |= 1ull << check_collect_lengths(t, &m, quick() ? 2000 : 40000, 40, 1, 0, &rng);
            harmonia_free(t);
            tu_model_free(&m);
        }
    /* every G the kernel can pick was given to some call */
    for (uint32_t g = 1; g <= 32; g *= 2)
        if (!(seen & (1ull << g)))
            fail_msg("no collect call was given G = %u (seen 0x%llx)", g, (unsigned long long)seen);
}

/* Upload, release and re-upload repeatedly; info reports the device copy; a bad G is refused. */
static void test_device_copy_life_cycle(void **state)
{
    (void)state;
    uint64_t rng = 21;
    tu_model m;
    tu_model_make(&m, 64, 50000, TU_UNIFORM, &rng);
    harmonia_tree *t = build(&m, 16, 16, &rng);
    void *q = make_queries(&m, 4000, &rng);
    for (int round = 0; round < (quick() ? 3 : 20); round++) {
        assert_int_equal(harmonia_device_upload(t), HARMONIA_OK);
        harmonia_tree_info info;
        harmonia_info(t, &info);
        assert_true(info.device_resident);
        assert_true(info.device_bytes >= info.total_bytes);
        if (round % 3 == 0)
            check_lookups(t, 64, q, 4000, 16, round % 2, 1024, round % 2, 0);
        harmonia_device_release(t);
        harmonia_info(t, &info);
        assert_false(info.device_resident);
    }
    /* every __constant__ cut: none, the root (default), two levels, all that fit; changed on the
     * live device copy (odd rounds) or before a fresh upload (even rounds); every query kind. The
     * first three run the default-shape kernels with their small copy of the cut (ntg_kernels.cu,
     * at most 34 entries), all that fit (more than 34 entries here) the generic kernels with the
     * whole cut; the plain descents (PSA off) of lookups and lower bounds are the cut's readers */
    harmonia_tree_info shape;
    harmonia_info(t, &shape);
    /* 50000 keys, F = L = 16, leaf fill 1.0 or 0.7: 3 or 4 internal levels, all of them small
     * enough for __constant__ memory */
    const uint32_t internal_levels = shape.height - 1;
    assert_true(internal_levels == 3 || internal_levels == 4);
    const int32_t cuts[] = {0, 1, 2, HARMONIA_CONSTANT_LEVELS_ALL, 40, 1};
    const uint32_t cut_levels[] = {0, 1, 2, internal_levels, internal_levels, 1};
    /* a batch past the small-batch kernels' (NTG_VALUES_WITH_LEAF_BATCH), in one device launch */
    void *q_large = make_queries(&m, 70000, &rng);
    for (unsigned c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        assert_int_equal(harmonia_set_constant_levels(t, cuts[c]), HARMONIA_OK);
        if (c % 2 == 0)
            harmonia_device_release(t);
        check_lookups(t, 64, q, 4000, 2, 0, 0, 0, 0);
        check_lookups(t, 64, q_large, 70000, 4, 0, 0, 1, c % 2);
        check_lookups(t, 64, q, 4000, 16, 1, 1024, 1, 0);
        check_lower_bounds(t, 64, q, 4000, 4, 1, 0, 1);
        check_lower_bounds(t, 64, q, 4000, 4, 0, 0, c % 2); /* the plain descent: the cut's readers */
        check_ranges(t, &m, 300, 2, c % 2, &rng);
        harmonia_tree_info info;
        harmonia_info(t, &info);
        assert_int_equal(info.constant_prefix_levels, cut_levels[c]);
        assert_true(info.device_resident);
    }
    /* two trees alternate: each call must see its own __constant__ part */
    tu_model m2;
    tu_model_make(&m2, 64, 70000, TU_CLUSTERED, &rng);
    harmonia_tree *t2 = build(&m2, 8, 8, &rng);
    void *q2 = make_queries(&m2, 4000, &rng);
    for (int round = 0; round < 4; round++) {
        check_lookups(t, 64, q, 4000, 8, 1, 0, 0, 0);
        check_lookups(t2, 64, q2, 4000, 8, 1, 0, 1, 0);
    }
    harmonia_query_config bad;
    harmonia_query_config_init(&bad);
    bad.backend = HARMONIA_BACKEND_GPU;
    bad.group_size = 3;
    uint64_t v[1];
    uint8_t f[1];
    assert_int_equal(harmonia_lookup(t, &bad, q, 1, v, f), HARMONIA_ERR_INVALID);
    bad.group_size = 16;
    assert_int_equal(harmonia_lookup(t2, &bad, q, 1, v, f), HARMONIA_ERR_INVALID); /* G > F = 8 */
    assert_non_null(strstr(harmonia_last_error(t2), "fanout"));
    free(q);
    free(q_large);
    free(q2);
    harmonia_free(t);
    harmonia_free(t2);
    tu_model_free(&m);
    tu_model_free(&m2);
}

/* ------------------------------------------------------------------------------------------------
 * Completion signals (gpu_tree.cu, "completion signals"), seen from inside: small synchronous
 * device-array lookups and lower bounds take their slot's next sequence number (each such call one,
 * so the slots' sequences sum to the calls), the tree's words exist and the signals stay on; a
 * call above HM_SIGNAL_MAX_BATCH, an asynchronous one and one that finds every slot taken wait
 * for their streams (no sequence); a call on a stream being captured fails without turning the
 * signals off; a new allocator (harmonia_set_device) frees the words and the next call makes them
 * again with it, and harmonia_free gives them back to it. Every result against the CPU engine. (test_gpu_embedding's
 * test_completion_signals checks the contract from outside: results in place at the return.)
 * ---------------------------------------------------------------------------------------------- */
static uint64_t signal_sequences(const harmonia_tree *t)
{
    uint64_t sum = 0;
    for (int i = 0; i < HM_CALLS_IN_FLIGHT; i++)
        sum += t->call_sequence[i];
    return sum;
}

static void check_device_lookup(harmonia_tree *t, const harmonia_query_config *c, const void *q, const void *d_q,
                                uint64_t n, const reference *ref, void *d_v, uint8_t *d_f)
{
    assert_int_equal(cudaMemset(d_v, 0xA5, n * 8), cudaSuccess);
    assert_int_equal(harmonia_lookup(t, c, d_q, n, d_v, d_f), HARMONIA_OK);
    uint64_t *v = malloc(n * 8);
    uint8_t *f = malloc(n);
    to_host(v, d_v, n * 8);
    to_host(f, d_f, n);
    assert_memory_equal(v, ref->values, n * 8);
    assert_memory_equal(f, ref->found, n);
    free(v);
    free(f);
    (void)q;
}

/* Pinned memory that counts what it hands out and takes back (context: int[2]). */
static void *pinned_alloc(void *context, size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess)
        return NULL;
    ((int *)context)[0]++;
    return p;
}

static void pinned_free(void *context, void *pointer, size_t bytes)
{
    (void)bytes;
    ((int *)context)[1]++;
    cudaFreeHost(pointer);
}

static void test_completion_signals_taken(void **state)
{
    (void)state;
    uint64_t rng = 2811;
    tu_model m;
    tu_model_make(&m, 64, quick() ? 50000 : 200000, TU_UNIFORM, &rng);
    harmonia_tree *t = build(&m, 16, 16, &rng);
    const uint64_t n = 4096, large = HM_SIGNAL_MAX_BATCH + 1;
    void *q = make_queries(&m, large, &rng);
    reference ref, ref_large, ref_lb;
    cpu_reference(t, 64, q, n, 0, &ref);
    cpu_reference(t, 64, q, large, 0, &ref_large);
    cpu_reference(t, 64, q, n, 1, &ref_lb);
    void *d_q = device_copy(q, large * 8), *d_v = device_alloc(large * 8), *d_k = device_alloc(n * 8);
    uint8_t *d_f = device_alloc(large);
    harmonia_query_config c;
    harmonia_query_config_init(&c);
    assert_null(t->call_flags);
    /* 1. small synchronous calls: one sequence number each */
    const int calls = quick() ? 10 : 50;
    for (int i = 0; i < calls; i++) {
        check_device_lookup(t, &c, q, d_q, n, &ref, d_v, d_f);
        assert_int_equal(harmonia_lower_bound(t, &c, d_q, n, d_k, d_v, d_f), HARMONIA_OK);
        uint64_t *keys = malloc(n * 8);
        to_host(keys, d_k, n * 8);
        assert_memory_equal(keys, ref_lb.keys, n * 8);
        free(keys);
    }
    assert_non_null(t->call_flags);
    assert_false(t->signals_off);
    assert_int_equal(signal_sequences(t), 2 * (uint64_t)calls);
    /* 2. a call above the bound (PSA off: one launch all the same), an asynchronous one, one that
     *    finds every slot taken: no signal, the same answers */
    harmonia_query_config off = c;
    off.psa = 0;
    check_device_lookup(t, &off, q, d_q, large, &ref_large, d_v, d_f);
    assert_int_equal(harmonia_lookup_async(t, &c, d_q, n, d_v, d_f, NULL), HARMONIA_OK);
    assert_int_equal(cudaStreamSynchronize(NULL), cudaSuccess);
    pthread_mutex_lock(&t->calls_lock);
    for (int i = 0; i < HM_CALLS_IN_FLIGHT; i++)
        t->call_busy[i] = true; /* (no call is in flight: this thread holds them all) */
    pthread_mutex_unlock(&t->calls_lock);
    check_device_lookup(t, &c, q, d_q, n, &ref, d_v, d_f);
    pthread_mutex_lock(&t->calls_lock);
    for (int i = 0; i < HM_CALLS_IN_FLIGHT; i++)
        t->call_busy[i] = false;
    pthread_mutex_unlock(&t->calls_lock);
    assert_int_equal(signal_sequences(t), 2 * (uint64_t)calls);
    assert_false(t->signals_off);
    /* 2b. a synchronous call on a stream being captured into a graph: the caller's error (nothing
     *     runs there), reported, and it leaves the signals on; the next call is signalled again.
     *     Not under the sanitizers (quick): the CUDA errors this provokes on purpose would count
     *     as theirs (compute-sanitizer reports every failed API call). */
    uint64_t sequences = 2 * (uint64_t)calls;
    if (!quick()) {
        cudaStream_t s;
        assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
        assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
        harmonia_query_config captured = c;
        captured.stream = s;
        assert_int_not_equal(harmonia_lookup(t, &captured, d_q, n, d_v, d_f), HARMONIA_OK);
        printf("expected error: %s\n", harmonia_last_error(t));
        cudaGraph_t graph = NULL;
        assert_int_not_equal(cudaStreamEndCapture(s, &graph), cudaSuccess); /* invalidated by the call */
        if (graph)
            cudaGraphDestroy(graph);
        cudaGetLastError();
        assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
        assert_false(t->signals_off);
        check_device_lookup(t, &c, q, d_q, n, &ref, d_v, d_f);
        sequences += 2; /* the captured call's and this one's */
        assert_int_equal(signal_sequences(t), sequences);
    }
    /* 3. an update between (the copy brought to the new version): signals as before */
    delete_every_17th(t, &m);
    reference after;
    cpu_reference(t, 64, q, n, 0, &after);
    check_device_lookup(t, &c, q, d_q, n, &after, d_v, d_f);
    assert_int_equal(signal_sequences(t), sequences + 1);
    /* 4. another allocator: the words made again by it, the sequences from 0 */
    int pinned[2] = {0, 0}; /* allocations, frees */
    harmonia_allocator a;
    harmonia_allocator_init(&a);
    a.context = pinned;
    a.host_alloc = pinned_alloc;
    a.host_free = pinned_free;
    assert_int_equal(harmonia_set_device(t, HARMONIA_DEVICE_CURRENT, &a), HARMONIA_OK);
    assert_null(t->call_flags);
    check_device_lookup(t, &c, q, d_q, n, &after, d_v, d_f);
    assert_non_null(t->call_flags);
    assert_int_equal(pinned[0], 1); /* the words, from the allocator (a small tree: no staging) */
    assert_int_equal(signal_sequences(t), 1);
    assert_false(t->signals_off);
    free_reference(&ref);
    free_reference(&ref_large);
    free_reference(&ref_lb);
    free_reference(&after);
    cudaFree(d_q);
    cudaFree(d_v);
    cudaFree(d_k);
    cudaFree(d_f);
    free(q);
    harmonia_free(t);
    assert_int_equal(pinned[1], pinned[0]); /* given back to the allocator that made them */
    tu_model_free(&m);
}

static void *refuse_pinned(void *context, size_t bytes)
{
    (void)context;
    (void)bytes;
    return NULL;
}

static void unused_free(void *context, void *pointer, size_t bytes)
{
    (void)context;
    (void)pointer;
    (void)bytes;
}

/* The tree's pinned memory refused (an allocator without it): uploads and syncs copy from pageable
 * memory, host-array queries are refused. */
static void without_pinned_memory(harmonia_tree *t)
{
    harmonia_allocator a;
    harmonia_allocator_init(&a);
    a.host_alloc = refuse_pinned;
    a.host_free = unused_free;
    assert_int_equal(harmonia_set_device(t, HARMONIA_DEVICE_CURRENT, &a), HARMONIA_OK);
}

/* Uploads through the pinned staging (gpu_upload.cu): a tree whose keys and values are several
 * staging chunks and a remainder; re-uploads after a batch that splits leaves (the staging carried
 * to the new copy) and after an in-place batch of deletes (the incremental sync, one long span);
 * then the same with an allocator that has no pinned memory (pageable copies). Every answer checked
 * against the CPU engine. */
static void test_large_uploads(void **state)
{
    (void)state;
    uint64_t rng = 77;
    tu_model m;
    tu_model_make(&m, 64, quick() ? 3000000 : 5000000, TU_UNIFORM, &rng); /* 46 or 76 MB of keys */
    harmonia_tree *t = build(&m, 16, 16, &rng);
    const uint64_t nq = 200000;
    void *q = make_queries(&m, nq, &rng);
    for (int pinned = 1; pinned >= 0; pinned--) {
        if (!pinned)
            without_pinned_memory(t);
        assert_int_equal(harmonia_device_upload(t), HARMONIA_OK);
        check_lookups(t, 64, q, nq, 2, 0, 0, 1, 0);
        /* inserts that split leaves: a new layout, uploaded whole */
        const uint64_t ni = m.n / 20;
        uint8_t *kinds = malloc(ni);
        uint64_t *keys = malloc(ni * 8), *values = malloc(ni * 8);
        for (uint64_t i = 0; i < ni; i++) {
            kinds[i] = HARMONIA_OP_UPSERT;
            keys[i] = tu_next(&rng);
            values[i] = tu_next(&rng);
        }
        harmonia_update_stats st;
        if (harmonia_update(t, NULL, kinds, keys, values, ni, &st) != HARMONIA_OK)
            fail_msg("update: %s", harmonia_last_error(t));
        assert_true(st.shape_changed);
        assert_false(st.incremental_upload);
        assert_true(st.uploaded_bytes > (64u << 20));
        check_lookups(t, 64, keys, ni, 2, 0, 0, 1, 0); /* the new keys */
        if (pinned) {
            check_lookups(t, 64, q, nq, 2, 1, 0, 0, 0); /* host arrays: through the lanes' staging */
        } else { /* host-array queries need pinned staging: refused with a clear error */
            uint64_t v[4];
            uint8_t f[4];
            harmonia_query_config c;
            harmonia_query_config_init(&c);
            c.backend = HARMONIA_BACKEND_GPU;
            assert_int_equal(harmonia_lookup(t, &c, q, 4, v, f), HARMONIA_ERR_NO_MEMORY);
            assert_non_null(strstr(harmonia_last_error(t), "pinned host memory"));
            check_lookups(t, 64, q, nq, 2, 1, 0, 1, 0);
        }
        /* updates of present keys in place: dirty leaves over the whole tree, one long span */
        for (uint64_t i = 0; i < ni; i++) {
            kinds[i] = HARMONIA_OP_UPDATE;
            values[i] = ~values[i];
        }
        if (harmonia_update(t, NULL, kinds, keys, values, ni, &st) != HARMONIA_OK)
            fail_msg("update in place: %s", harmonia_last_error(t));
        assert_false(st.shape_changed);
        assert_true(st.incremental_upload);
        check_lookups(t, 64, keys, ni, 2, 0, 0, 1, 0);
        assert_int_equal(harmonia_check(t), HARMONIA_OK);
        free(kinds);
        free(keys);
        free(values);
    }
    free(q);
    harmonia_free(t);
    tu_model_free(&m);
}

/* In-place batches whose dirty leaves are spread thinly over the level (more runs than
 * HM_SYNC_MAX_RUNS, at most half the span): gathered into the pinned staging with their indices,
 * one DMA a chunk, put in place by a kernel (gpu_scatter.cu). A full tree of 5M 64-bit keys
 * (312,500 leaves): updates of the first key of leaves picked by a pattern, then deletes of them
 * (the leaf ranks change too): clusters of 62 dirty leaves 68 apart (149K leaves: two staging
 * chunks of 127K) and single leaves 150 apart (one chunk). Every answer on the GPU checked against
 * the CPU engine; the bytes sent are the gathered leaves' (and the ranks), not a span. Then the same
 * with no pinned memory (no staging: the span, as before, and the same answers). */
static void test_scattered_in_place(void **state)
{
    (void)state;
    uint64_t rng = 93;
    tu_model m;
    tu_model_make(&m, 64, 5000000, TU_UNIFORM, &rng);
    const uint64_t nq = 200000;
    void *q = make_queries(&m, nq, &rng);
    const uint64_t patterns[3][2] = {{130, 62}, {150, 1}, {150, 1}}; /* period, dirty leaves a period */
    for (int variant = quick() ? 1 : 0; variant < 3; variant++) { /* (two chunks: too slow under the sanitizer) */
        harmonia_tree *t = build_filled(&m, 16, 16, 1.0, &rng); /* full leaves: in-place deletes keep them */
        if (variant == 2)
            without_pinned_memory(t);
        assert_int_equal(harmonia_device_upload(t), HARMONIA_OK);
        const uint64_t period = patterns[variant][0], per = patterns[variant][1], n_leaves = t->kr.n_leaves;
        uint64_t n = 0;
        for (uint64_t li = 0; li < n_leaves; li++)
            n += li % period < per;
        uint8_t *kinds = malloc(n);
        uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
        for (int round = 0; round < 2; round++) { /* updates, then deletes */
            uint64_t i = 0;
            for (uint64_t li = 0; li < n_leaves; li++) {
                if (li % period >= per)
                    continue;
                uint64_t key, value;
                kr_at_rank(&t->kr, t->kr.leaf_rank[li] + (round == 0 ? 0 : 1), &key, &value); /* a key of leaf li */
                kinds[i] = round == 0 ? HARMONIA_OP_UPDATE : HARMONIA_OP_DELETE;
                keys[i] = key;
                values[i++] = ~value;
            }
            assert_int_equal(i, n);
            harmonia_update_stats st;
            if (harmonia_update(t, NULL, kinds, keys, values, n, &st) != HARMONIA_OK)
                fail_msg("update %d (variant %d): %s", round, variant, harmonia_last_error(t));
            assert_false(st.shape_changed);
            assert_int_equal(st.leaves_touched, n);
            assert_true(st.incremental_upload);
            const uint64_t gathered = n * (2 * 16 * 8 + 8) + 64 + (round == 1 ? (n_leaves + 1) * 8 : 0);
            if (variant < 2)
                assert_true(st.uploaded_bytes <= gathered); /* not the span (2 x 128 B x its leaves) */
            else
                assert_true(st.uploaded_bytes > gathered); /* no staging: the span */
            harmonia_tree_info info;
            assert_int_equal(harmonia_info(t, &info), HARMONIA_OK);
            assert_int_equal(info.device_version, info.version);
            check_lookups(t, 64, keys, n, 2, 0, 0, 1, 0); /* the changed keys (round 1: absent) */
            check_lookups(t, 64, q, nq, 4, 1, 0, 1, 0);
            check_lower_bounds(t, 64, keys, n, 8, 0, 0, 1);
            assert_int_equal(harmonia_check(t), HARMONIA_OK);
        }
        free(kinds);
        free(keys);
        free(values);
        harmonia_free(t);
    }
    free(q);
    tu_model_free(&m);
}

/* Options the other tests leave at their defaults: pipeline depth 1 and 2, a PSA bit override,
 * async calls on an explicit stream, pinned host arrays, ranges at G = 16 and 32, a host collect of
 * a few very long ranges (cut into pieces), and arrays in the wrong memory (INVALID, no crash). */
static void test_options_and_misuse(void **state)
{
    (void)state;
    uint64_t rng = 31;
    tu_model m;
    tu_model_make(&m, 64, 300000, TU_UNIFORM, &rng);
    harmonia_tree *t = build(&m, 32, 16, &rng);
    const uint64_t n = 50000;
    void *q = make_queries(&m, n, &rng);
    reference ref;
    cpu_reference(t, 64, q, n, 0, &ref);
    harmonia_query_config c;
    /* pipeline depth and PSA bits */
    for (uint32_t depth = 1; depth <= 3; depth++)
        for (uint32_t bits = 0; bits <= 16; bits += 8) {
            harmonia_query_config_init(&c);
            c.backend = HARMONIA_BACKEND_GPU;
            c.psa = 1;
            c.psa_window = 4096;
            c.pipeline_depth = depth;
            c.psa_bits = bits;
            uint64_t *v = malloc(n * 8);
            uint8_t *f = malloc(n);
            assert_int_equal(harmonia_lookup(t, &c, q, n, v, f), HARMONIA_OK);
            assert_memory_equal(v, ref.values, n * 8);
            assert_memory_equal(f, ref.found, n);
            free(v);
            free(f);
        }
    /* async on an explicit stream, device arrays */
    cudaStream_t stream;
    assert_int_equal(cudaStreamCreate(&stream), cudaSuccess);
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_GPU;
    void *d_q = device_copy(q, n * 8), *d_v = device_alloc(n * 8), *d_f = device_alloc(n);
    assert_int_equal(harmonia_lookup_async(t, &c, d_q, n, d_v, d_f, stream), HARMONIA_OK);
    assert_int_equal(cudaStreamSynchronize(stream), cudaSuccess);
    uint64_t *v = malloc(n * 8);
    uint8_t *f = malloc(n);
    to_host(v, d_v, n * 8);
    to_host(f, d_f, n);
    assert_memory_equal(v, ref.values, n * 8);
    assert_memory_equal(f, ref.found, n);
    /* pinned host arrays are copied directly */
    void *p_q, *p_v, *p_f;
    assert_int_equal(cudaHostAlloc(&p_q, n * 8, cudaHostAllocDefault), cudaSuccess);
    assert_int_equal(cudaHostAlloc(&p_v, n * 8, cudaHostAllocDefault), cudaSuccess);
    assert_int_equal(cudaHostAlloc(&p_f, n, cudaHostAllocDefault), cudaSuccess);
    memcpy(p_q, q, n * 8);
    harmonia_query_config_init(&c);
    c.backend = HARMONIA_BACKEND_GPU;
    c.psa_window = 8192;
    assert_int_equal(harmonia_lookup(t, &c, p_q, n, p_v, p_f), HARMONIA_OK);
    assert_memory_equal(p_v, ref.values, n * 8);
    assert_memory_equal(p_f, ref.found, n);
    /* arrays in the wrong memory */
    uint64_t lo[2] = {0, 10}, hi[2] = {UINT64_MAX, 20}, offsets[3];
    assert_int_equal(harmonia_range_collect(t, &c, d_q, d_q, 2, offsets, NULL, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_range_collect(t, &c, lo, hi, 2, (uint64_t *)d_v, NULL, NULL), HARMONIA_ERR_INVALID);
    assert_int_equal(harmonia_lookup(t, &c, d_q, n, v, f), HARMONIA_ERR_INVALID);
    /* a host collect of a few very long ranges: the whole tree, twice, and a short one */
    assert_int_equal(harmonia_range_collect(t, &c, lo, hi, 2, offsets, NULL, NULL), HARMONIA_OK);
    assert_int_equal(offsets[1], m.n);
    uint64_t *keys = malloc(offsets[2] * 8 + 8), *values = malloc(offsets[2] * 8 + 8);
    assert_int_equal(harmonia_range_collect(t, &c, lo, hi, 2, offsets, keys, values), HARMONIA_OK);
    for (uint64_t i = 0; i < m.n; i++) {
        assert_int_equal(keys[i], m.keys[i]);
        assert_int_equal(values[i], m.values[i]);
    }
    free(keys);
    free(values);
    /* device offsets that decrease (not phase 1's): the device path does not read them on the host,
     * so it cannot refuse them, but a decreasing pair is an empty range, never a length that
     * underflows and writes past the outputs; with the kernel's G and with each explicit one */
    {
        const uint64_t bad[5] = {0, 5, 3, 8, 8}, guard = 4096, sentinel = 0x5A5A5A5A5A5A5A5Aull;
        uint64_t *d_bad = device_copy(bad, sizeof bad);
        uint64_t four_lo[4] = {m.keys[0], m.keys[10], m.keys[20], m.keys[30]};
        void *d_lo4 = device_copy(four_lo, sizeof four_lo);
        uint64_t *out = malloc((8 + guard) * 8);
        for (uint32_t g = 0; g <= 16; g = g ? 2 * g : 1) {
            for (uint64_t i = 0; i < 8 + guard; i++)
                out[i] = sentinel;
            void *d_out = device_copy(out, (8 + guard) * 8);
            harmonia_query_config_init(&c);
            c.backend = HARMONIA_BACKEND_GPU;
            c.group_size = g;
            assert_int_equal(harmonia_range_collect(t, &c, d_lo4, d_lo4, 4, d_bad, d_out, NULL), HARMONIA_OK);
            to_host(out, d_out, (8 + guard) * 8);
            for (uint64_t i = 0; i < 8; i++) /* range 0 wrote 0 .. 4, range 2 3 .. 7 (3 and 4: either) */
                if (i < 3 || i > 4)
                    assert_int_equal(out[i], i < 3 ? m.keys[i] : m.keys[20 + i - 3]);
            for (uint64_t i = 8; i < 8 + guard; i++)
                if (out[i] != sentinel)
                    fail_msg("G %u: a collect with decreasing offsets wrote slot %llu past the outputs", g,
                             (unsigned long long)i);
            cudaFree(d_out);
        }
        free(out);
        cudaFree(d_bad);
        cudaFree(d_lo4);
    }
    cudaFree(d_q);
    cudaFree(d_v);
    cudaFree(d_f);
    cudaFreeHost(p_q);
    cudaFreeHost(p_v);
    cudaFreeHost(p_f);
    cudaStreamDestroy(stream);
    free(v);
    free(f);
    free(q);
    free_reference(&ref);
    /* ranges at G = 16 and 32 */
    for (uint32_t g = 16; g <= 32; g *= 2)
        for (int dev = 0; dev < 2; dev++)
            check_ranges(t, &m, 2000, g, dev, &rng);
    harmonia_free(t);
    tu_model_free(&m);
}

/* Where the arrays live, found per array (memory AUTO: one driver query a pointer,
 * hm_pointer_where in gpu_upload.cu): pageable, pinned and registered host memory; cudaMalloc,
 * stream-ordered (cudaMallocAsync) and managed device memory. Each a small batch (the one-launch
 * path of 2^10 queries, and an odd 1000) against the CPU engine, ordered and unordered; the device
 * kinds also asynchronously; arrays in mixed memories refused; no CUDA error left behind for the
 * caller's own checks. */
enum { MEM_PAGEABLE, MEM_PINNED, MEM_REGISTERED, MEM_DEVICE, MEM_POOL, MEM_MANAGED, MEM_KINDS };
static const char *const mem_names[MEM_KINDS] = {"pageable", "pinned", "registered", "device", "pool", "managed"};

static void *mem_alloc(int kind, size_t bytes)
{
    void *p = NULL;
    switch (kind) {
    case MEM_PAGEABLE:
        p = malloc(bytes);
        break;
    case MEM_PINNED:
        assert_int_equal(cudaHostAlloc(&p, bytes, cudaHostAllocDefault), cudaSuccess);
        break;
    case MEM_REGISTERED: { /* whole pages of its own: two registrations must not share a page */
        const size_t whole = (bytes + 4095) & ~(size_t)4095;
        p = aligned_alloc(4096, whole);
        assert_non_null(p);
        assert_int_equal(cudaHostRegister(p, whole, cudaHostRegisterDefault), cudaSuccess);
        break;
    }
    case MEM_DEVICE:
        assert_int_equal(cudaMalloc(&p, bytes), cudaSuccess);
        break;
    case MEM_POOL:
        assert_int_equal(cudaMallocAsync(&p, bytes, 0), cudaSuccess);
        assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
        break;
    default:
        assert_int_equal(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal), cudaSuccess);
        break;
    }
    assert_non_null(p);
    return p;
}

static void mem_free(int kind, void *p)
{
    switch (kind) {
    case MEM_PAGEABLE:
        free(p);
        break;
    case MEM_PINNED:
        cudaFreeHost(p);
        break;
    case MEM_REGISTERED:
        cudaHostUnregister(p);
        free(p);
        break;
    case MEM_POOL:
        cudaFreeAsync(p, 0);
        cudaStreamSynchronize(0);
        break;
    default:
        cudaFree(p);
        break;
    }
}

static void test_memory_kinds(void **state)
{
    (void)state;
    uint64_t rng = 41;
    tu_model m;
    tu_model_make(&m, 64, 100000, TU_UNIFORM, &rng);
    harmonia_tree *t = build(&m, 16, 16, &rng);
    const uint64_t counts[] = {1024, 1000};
    cudaStream_t stream;
    assert_int_equal(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    for (unsigned ci = 0; ci < 2; ci++) {
        const uint64_t n = counts[ci];
        void *q = make_queries(&m, n, &rng);
        reference ref;
        cpu_reference(t, 64, q, n, 0, &ref);
        uint64_t *values = malloc(n * 8), *positions = malloc(n * 8);
        uint8_t *found = malloc(n);
        for (int kind = 0; kind < MEM_KINDS; kind++) {
            const int device_kind = kind >= MEM_DEVICE;
            /* ordered, unordered, async, unordered with 32-bit positions, that asynchronously */
            for (int mode = 0; mode < 5; mode++) {
                if (!device_kind && (mode == 2 || mode == 4))
                    continue; /* (the asynchronous calls take device arrays only) */
                const int unordered = mode == 1 || mode == 3 || mode == 4;
                void *m_q = mem_alloc(kind, n * 8), *m_v = mem_alloc(kind, n * 8), *m_f = mem_alloc(kind, n);
                const size_t position_bytes = mode == 1 ? 8 : 4; /* (modes 3-4: 32-bit positions) */
                void *m_p = mem_alloc(kind, n * position_bytes);
                assert_int_equal(cudaMemcpy(m_q, q, n * 8, cudaMemcpyDefault), cudaSuccess);
                harmonia_query_config c;
                harmonia_query_config_init(&c); /* memory AUTO */
                c.backend = HARMONIA_BACKEND_GPU;
                harmonia_status st;
                if (mode == 0)
                    st = harmonia_lookup(t, &c, m_q, n, m_v, m_f);
                else if (mode == 1)
                    st = harmonia_lookup_unordered(t, &c, m_q, n, m_v, m_f, m_p);
                else if (mode == 2)
                    st = harmonia_lookup_async(t, &c, m_q, n, m_v, m_f, stream);
                else if (mode == 3)
                    st = harmonia_lookup_unordered32(t, &c, m_q, n, m_v, m_f, m_p);
                else
                    st = harmonia_lookup_unordered32_async(t, &c, m_q, n, m_v, m_f, m_p, stream);
                if (st != HARMONIA_OK)
                    fail_msg("%s memory, mode %d: %s", mem_names[kind], mode, harmonia_last_error(t));
                if (mode == 2 || mode == 4)
                    assert_int_equal(cudaStreamSynchronize(stream), cudaSuccess);
                assert_int_equal(cudaMemcpy(values, m_v, n * 8, cudaMemcpyDefault), cudaSuccess);
                assert_int_equal(cudaMemcpy(found, m_f, n, cudaMemcpyDefault), cudaSuccess);
                if (unordered) {
                    const int narrow = mode != 1;
                    assert_int_equal(cudaMemcpy(positions, m_p, n * (narrow ? 4 : 8), cudaMemcpyDefault), cudaSuccess);
                    uint8_t *seen = calloc(n, 1);
                    for (uint64_t i = 0; i < n; i++) {
                        const uint64_t at = narrow ? ((const uint32_t *)positions)[i] : positions[i];
                        assert_true(at < n && !seen[at]);
                        seen[at] = 1;
                        assert_int_equal(found[i], ref.found[at]);
                        if (found[i])
                            assert_int_equal(values[i], ((const uint64_t *)ref.values)[at]);
                    }
                    free(seen);
                } else {
                    assert_memory_equal(found, ref.found, n);
                    for (uint64_t i = 0; i < n; i++)
                        if (found[i])
                            assert_int_equal(values[i], ((const uint64_t *)ref.values)[i]);
                }
                /* one array in other memory: refused, whichever it is */
                const int other = device_kind ? MEM_PAGEABLE : MEM_DEVICE;
                void *o_v = mem_alloc(other, n * 8), *o_f = mem_alloc(other, n);
                assert_int_equal(harmonia_lookup(t, &c, m_q, n, o_v, m_f), HARMONIA_ERR_INVALID);
                assert_int_equal(harmonia_lookup(t, &c, m_q, n, m_v, o_f), HARMONIA_ERR_INVALID);
                assert_int_equal(harmonia_lookup_unordered(t, &c, m_q, n, m_v, m_f, o_v), HARMONIA_ERR_INVALID);
                assert_int_equal(harmonia_lookup_unordered32(t, &c, m_q, n, m_v, m_f, o_v), HARMONIA_ERR_INVALID);
                if (!device_kind) { /* the asynchronous calls take device arrays only */
                    assert_int_equal(harmonia_lookup_async(t, &c, m_q, n, m_v, m_f, stream), HARMONIA_ERR_INVALID);
                    assert_int_equal(harmonia_lookup_unordered32_async(t, &c, m_q, n, m_v, m_f, m_p, stream),
                                     HARMONIA_ERR_INVALID);
                }
                mem_free(other, o_v);
                mem_free(other, o_f);
                mem_free(kind, m_q);
                mem_free(kind, m_v);
                mem_free(kind, m_f);
                mem_free(kind, m_p);
                assert_int_equal(cudaGetLastError(), cudaSuccess); /* nothing left for the caller's checks */
            }
        }
        /* managed queries with device results: both count as the tree's device */
        void *d_q = mem_alloc(MEM_MANAGED, n * 8), *d_v = mem_alloc(MEM_DEVICE, n * 8), *d_f = mem_alloc(MEM_POOL, n);
        assert_int_equal(cudaMemcpy(d_q, q, n * 8, cudaMemcpyDefault), cudaSuccess);
        harmonia_query_config c;
        harmonia_query_config_init(&c);
        assert_int_equal(harmonia_lookup(t, &c, d_q, n, d_v, d_f), HARMONIA_OK);
        assert_int_equal(cudaMemcpy(found, d_f, n, cudaMemcpyDefault), cudaSuccess);
        assert_memory_equal(found, ref.found, n);
        mem_free(MEM_MANAGED, d_q);
        mem_free(MEM_DEVICE, d_v);
        mem_free(MEM_POOL, d_f);
        free(values);
        free(positions);
        free(found);
        free_reference(&ref);
        free(q);
    }
    cudaStreamDestroy(stream);
    harmonia_free(t);
    tu_model_free(&m);
}

/* Not enough GPU memory: a status that says how many bytes were needed and free, then success
 * once memory is back. */
static void test_out_of_device_memory(void **state)
{
    (void)state;
    if (quick()) { /* under compute-sanitizer: its own allocations make the numbers meaningless */
        skip();
        return;
    }
    uint64_t rng = 23;
    tu_model m;
    tu_model_make(&m, 64, 4000000, TU_DENSE, &rng); /* about 130 MB on the device */
    harmonia_tree *t = build(&m, 16, 16, &rng);
    harmonia_device_release(t); /* a GPU build kept its device copy: the upload below makes a new one */
    /* Every byte but 32 MB taken, whatever earlier tests left the driver and the default pool
     * holding: memory they freed can come back a while later (memory that the pool holds after
     * stream-ordered frees, pages the driver releases lazily: measured on the H100 after the
     * managed-memory test, 100 MB more free after a first hog than before it), so hogs are added
     * until no more than 48 MB are free. */
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
        if (free_bytes <= (48u << 20) || n_hogs == 16)
            break;
        assert_int_equal(cudaMalloc(&hogs[n_hogs], free_bytes - (32u << 20)), cudaSuccess); /* leave 32 MB */
        n_hogs++;
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    }
    harmonia_status st = harmonia_device_upload(t);
    if (st != HARMONIA_ERR_DEVICE_MEMORY)
        for (int h = 0; h < n_hogs; h++)
            cudaFree(hogs[h]); /* the tests after this one get their memory back */
    assert_int_equal(st, HARMONIA_ERR_DEVICE_MEMORY);
    assert_non_null(strstr(harmonia_last_error(t), "bytes"));
    printf("expected error: %s\n", harmonia_last_error(t));
    for (int h = 0; h < n_hogs; h++)
        cudaFree(hogs[h]);
    assert_int_equal(harmonia_device_upload(t), HARMONIA_OK);
    void *q = make_queries(&m, 10000, &rng);
    check_lookups(t, 64, q, 10000, 8, 1, 0, 0, 0);
    free(q);
    harmonia_free(t);
    tu_model_free(&m);
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
        cmocka_unit_test(test_every_group_fanout_leaf),
        cmocka_unit_test(test_batch_sizes_and_windows),
        cmocka_unit_test(test_key_shapes),
        cmocka_unit_test(test_psa_partition),
        cmocka_unit_test(test_psa_large_tiles),
        cmocka_unit_test(test_psa_chunked),
        cmocka_unit_test(test_bucket_tables),
        cmocka_unit_test(test_sparse_unordered),
        cmocka_unit_test(test_start_table),
        cmocka_unit_test(test_l2_hints),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_collect_group_choice),
        cmocka_unit_test(test_device_copy_life_cycle),
        cmocka_unit_test(test_completion_signals_taken),
        cmocka_unit_test(test_options_and_misuse),
        cmocka_unit_test(test_memory_kinds),
        cmocka_unit_test(test_out_of_device_memory),
        cmocka_unit_test(test_large_uploads),
        cmocka_unit_test(test_scattered_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
