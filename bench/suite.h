/* suite.h — the pieces of the benchmark suite (bench_suite.cu) and how they fit: the clock, the
 * budget and the CSV tables (suite_util.cu), data generation on the device and the host
 * (suite_data.cu), the baselines (suite_baselines.cu), the machine's ceilings (suite_ceilings.cu)
 * and the check of every result against the CPU engine (suite_verify.cu). Benchmark code only:
 * nothing here is part of libharmonia, which the suite uses through include/harmonia.h alone.
 *
 * The element functions below (hashes, key and query generators, the K-ary Eytzinger and the
 * pointer B+tree node builders) are __host__ __device__: the device builds with them and the
 * --quick mode runs the very same code on the CPU, so a machine without a GPU checks the layouts. */
#ifndef HARMONIA_BENCH_SUITE_H
#define HARMONIA_BENCH_SUITE_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "harmonia.h"
#include "util/mix.h"
#include "util/width.h"
}

#define SX_HD __host__ __device__ __forceinline__

/* ================================================================================================
 * Failing loudly (suite_util.cu). Every CUDA call of the suite goes through CK: a failure prints
 * the call, file and line, marks the run failed in meta.csv and exits 1 (the tables written so far
 * stay: every row is flushed when written).
 * ============================================================================================== */
[[noreturn]] void suite_cuda_fail(const char *call, cudaError_t e, const char *file, int line);
#define UTIL_CUDA_ON_FAILURE(what, error, file, line) suite_cuda_fail((what), (error), (file), (line))
#include "util/cuda_check.h"
#define CK(call) UTIL_CUDA_CHECK(call)

/* cudaMalloc that reports a failure instead of exiting: the caller skips its experiment. */
void *suite_try_device_alloc(size_t bytes, const char *what);
/* cudaMalloc that exits (through CK) on failure. */
void *suite_device_alloc(size_t bytes);
void suite_device_free(void *p);
/* Free GPU memory in bytes. */
uint64_t suite_device_free_bytes(void);

/* ================================================================================================
 * Hashes and generators (host and device, identical results).
 * ============================================================================================== */
/* splitmix64's finalizer and murmur3's fmix32: bijections on 64- and 32-bit integers. */
#define sx_mix64 util_mix64
#define sx_mix32 util_mix32
/* The i-th draw of stream `seed`: a counter-based generator, so every thread draws on its own. */
#define sx_hash util_draw
/* A uniform draw in [0, n) from a 64-bit hash (multiply-high, no modulo bias worth naming). */
SX_HD uint64_t sx_below(uint64_t h, uint64_t n)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(h, n);
#else
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
#endif
}
/* A uniform double in (0, 1]. */
SX_HD double sx_unit(uint64_t h)
{
    return (double)((h >> 11) + 1) * (1.0 / 9007199254740992.0);
}
/* Number of bits needed for x (0 for 0). */
SX_HD uint32_t sx_bit_width(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return x ? 64u - (uint32_t)__clzll((long long)x) : 0u;
#else
    return x ? 64u - (uint32_t)__builtin_clzll(x) : 0u;
#endif
}

template <typename K> SX_HD K sx_max_key() { return (K)~(K)0; }

/* Key distributions of a tree. uniform: a bijective hash of 0 .. n-1 over the whole key domain
 * (unique by construction); dense: base + 0 .. n-1; zipf: power-law gaps (Pareto, alpha = 1.5,
 * the continuous relative of Zipf): long runs of close keys and rare long jumps, so the keys'
 * density varies by orders of magnitude over their span. */
enum key_dist { KEYS_UNIFORM = 0, KEYS_DENSE = 1, KEYS_ZIPF = 2 };
/* Query distributions: hits drawn uniform over the keys, or Zipf-popular (exponent zipf_s) over
 * the keys through a random bijection of the ranks (popular keys are spread over the tree), or
 * clustered (ranks from 64 clusters, each 1/4096 of the keys wide), or outside (90 % of the queries
 * below the smallest or above the largest key, half each; the rest uniform as hit_rate says).
 * Misses are uniform over the whole key domain (a miss that happens to hit is counted as a hit:
 * the measured hit rate is reported). */
enum query_dist { QUERIES_UNIFORM = 0, QUERIES_ZIPF = 1, QUERIES_CLUSTERED = 2, QUERIES_OUTSIDE = 3 };

const char *key_dist_name(key_dist d);
const char *query_dist_name(query_dist d);

template <typename K> SX_HD K gen_uniform_key(uint64_t i, uint64_t salt);
template <> SX_HD uint64_t gen_uniform_key<uint64_t>(uint64_t i, uint64_t salt) { return sx_mix64(i + salt); }
template <> SX_HD uint32_t gen_uniform_key<uint32_t>(uint64_t i, uint64_t salt)
{
    return sx_mix32((uint32_t)(i + salt));
}
template <typename K> SX_HD K gen_value(uint64_t i, uint64_t seed) { return (K)sx_hash(seed ^ 0x76616c7565ull, i); }
/* Gap i of the zipf key distribution (>= 1). */
template <typename K> SX_HD uint64_t gen_zipf_gap(uint64_t i, uint64_t seed)
{
    const double scale = sizeof(K) == 4 ? 1.0 : 1024.0;
    const double cap = sizeof(K) == 4 ? 65536.0 : 1099511627776.0;
    double x = scale * (pow(sx_unit(sx_hash(seed ^ 0x676170ull, i)), -1.0 / 1.5) - 1.0);
    if (x > cap)
        x = cap;
    return 1 + (uint64_t)x;
}
template <typename K> SX_HD K dense_base()
{
    return sizeof(K) == 4 ? (K)4099u : (K)((1ull << 40) + 4099u);
}

/* Zipf rank in [0, n) with exponent s (the CLI's generator: the continuous inverse). */
SX_HD uint64_t gen_zipf_rank(uint64_t h, uint64_t n, double s)
{
    const double u = sx_unit(h);
    const double top = (double)n + 1.0;
    double x;
    if (fabs(s - 1.0) < 1e-9) {
        x = exp(u * log(top));
    } else {
        const double hn = (pow(top, 1.0 - s) - 1.0) / (1.0 - s);
        x = pow(1.0 + u * hn * (1.0 - s), 1.0 / (1.0 - s));
    }
    uint64_t rank = x < 1.0 ? 0 : (uint64_t)x - 1;
    return rank >= n ? n - 1 : rank;
}

/* Parameters of a query set over n sorted keys. */
struct query_spec {
    query_dist dist;
    double hit_rate;  /* fraction of queries drawn from the keys */
    double zipf_s;    /* exponent for QUERIES_ZIPF */
    uint64_t seed;
};

/* Query j of a set (j is global: a set generated in chunks is the same as in one piece). */
template <typename K> SX_HD K gen_query(const K *sorted_keys, uint64_t n, const query_spec &qs, uint64_t j)
{
    const uint64_t h = sx_hash(qs.seed, j);
    if (qs.dist == QUERIES_OUTSIDE && n > 0 && sx_unit(sx_hash(qs.seed + 3, j)) <= 0.9) {
        const K lo = sorted_keys[0], hi = sorted_keys[n - 1];
        const bool below = (h >> 63) != 0;
        if (below && lo > 0)
            return (K)sx_below(h, (uint64_t)lo);
        if (!below && hi < sx_max_key<K>())
            return (K)(hi + 1 + (K)sx_below(h, (uint64_t)(sx_max_key<K>() - hi)));
        return below ? (K)0 : sx_max_key<K>();
    }
    if (sx_unit(h) <= qs.hit_rate && n > 0) {
        const uint64_t h2 = sx_hash(qs.seed + 1, j);
        uint64_t rank;
        if (qs.dist == QUERIES_ZIPF) {
            rank = gen_zipf_rank(h2, n, qs.zipf_s);
        } else if (qs.dist == QUERIES_CLUSTERED) {
            const uint64_t width = n >= 4096 ? n / 4096 : 1;
            const uint64_t center = sx_below(sx_hash(qs.seed + 4, h2 & 63), n);
            rank = (center + sx_below(sx_hash(qs.seed + 5, j), width)) % n;
            return sorted_keys[rank];
        } else {
            rank = sx_below(h2, n);
        }
        if ((n & (n - 1)) == 0) /* an odd multiplier and an offset: a bijection of [0, n) */
            rank = (rank * (0x9E3779B97F4A7C15ull | 1) + (qs.seed >> 7)) & (n - 1);
        return sorted_keys[rank];
    }
    return (K)sx_hash(qs.seed + 2, j);
}

/* Range j of `length` consecutive keys: lo = key of rank r, hi = key of rank r + length - 1. */
template <typename K>
SX_HD void gen_range(const K *sorted_keys, uint64_t n, uint64_t length, uint64_t seed, uint64_t j, K *lo, K *hi)
{
    const uint64_t r = sx_below(sx_hash(seed, j), n - length + 1);
    *lo = sorted_keys[r];
    *hi = sorted_keys[r + length - 1];
}

/* ================================================================================================
 * K-ary Eytzinger order (the binary-search paper's EO+KS), K = 9: node x holds 8 keys (one 32-byte
 * sector of 32-bit keys), its children are nodes 9x+1 .. 9x+9, nodes 0 .. m-1 exist (m = ceil(n/8);
 * the tail of the last node is padded with the maximum key). Keys are placed so that an in-order
 * walk (child 0, key 0, child 1, ..., key 7, child 8) visits them sorted: the slot of key j of node
 * x gets the key of rank eyt_rank_start(x) + sum_{c <= j} 8 * nodes(child c) + j. Values are stored
 * in the same order in a second array.
 * ============================================================================================== */
#define EYT_K 9u
#define EYT_KEYS 8u

/* Nodes < m in the subtree of node x. */
SX_HD uint64_t eyt_subtree_nodes(uint64_t x, uint64_t m)
{
    uint64_t total = 0, first = x, width = 1;
    while (first < m) {
        const uint64_t end = first + width;
        total += (end < m ? end : m) - first;
        first = first * EYT_K + 1;
        width *= EYT_K;
    }
    return total;
}

/* In-order rank of the first key of node x's subtree. */
SX_HD uint64_t eyt_rank_start(uint64_t x, uint64_t m)
{
    uint32_t digits[48];
    int depth = 0;
    for (uint64_t y = x; y > 0; y = (y - 1) / EYT_K)
        digits[depth++] = (uint32_t)((y - 1) % EYT_K);
    uint64_t rank = 0, node = 0;
    for (int d = depth - 1; d >= 0; d--) {
        const uint32_t c = digits[d];
        for (uint32_t cc = 0; cc < c; cc++)
            rank += EYT_KEYS * eyt_subtree_nodes(node * EYT_K + 1 + cc, m);
        rank += c;
        node = node * EYT_K + 1 + c;
    }
    return rank;
}

/* Fills node x from the n sorted pairs. */
template <typename K>
SX_HD void eyt_fill_node(uint64_t x, uint64_t m, const K *sorted_keys, const K *sorted_values, uint64_t n,
                         K *eyt_keys, K *eyt_values)
{
    uint64_t rank = eyt_rank_start(x, m);
    for (uint32_t j = 0; j < EYT_KEYS; j++) {
        rank += EYT_KEYS * eyt_subtree_nodes(x * EYT_K + 1 + j, m);
        eyt_keys[x * EYT_KEYS + j] = rank < n ? sorted_keys[rank] : sx_max_key<K>();
        eyt_values[x * EYT_KEYS + j] = rank < n ? sorted_values[rank] : (K)0;
        rank++;
    }
}

/* Levels of a K-ary Eytzinger tree of m nodes. */
SX_HD uint32_t eyt_height(uint64_t m)
{
    uint32_t h = 0;
    for (uint64_t first = 0; first < m; first = first * EYT_K + 1)
        h++;
    return h;
}

/* ================================================================================================
 * A regular pointer-based B+tree (the HB+tree-style baseline of the Harmonia paper): internal
 * nodes of F key slots (F-1 separators, padding = the maximum key) followed by F child pointers
 * (64-bit addresses; a padding slot repeats the last child), leaves of F keys followed by their F
 * values. Built bottom-up from sorted pairs with full leaves; levels are stored root first. A
 * search counts the separators <= q in each node (one cooperative group of min(F, 32) threads)
 * and follows the pointer: the pointer load is the dependent access Harmonia's prefix-sum array
 * removes.
 * ============================================================================================== */
#define HBT_MAX_LEVELS 24

struct hbt_shape {
    uint32_t key_bits, fanout, height;      /* height: levels, leaves included */
    uint64_t n_keys;
    uint64_t level_nodes[HBT_MAX_LEVELS];   /* level 0 = leaves, height-1 = root */
    uint64_t level_first[HBT_MAX_LEVELS];   /* index of a level's first node in the internal array */
    uint64_t n_internal, n_leaves;
    uint64_t internal_node_bytes, leaf_node_bytes;
};

template <typename K>
SX_HD void hbt_fill_leaf(uint64_t leaf, const K *sorted_keys, const K *sorted_values, uint64_t n, uint32_t fanout,
                         uint8_t *leaves, K *first_keys)
{
    K *keys = (K *)(leaves + leaf * (uint64_t)fanout * 2 * sizeof(K));
    K *values = keys + fanout;
    for (uint32_t s = 0; s < fanout; s++) {
        const uint64_t i = leaf * fanout + s;
        keys[s] = i < n ? sorted_keys[i] : sx_max_key<K>();
        values[s] = i < n ? sorted_values[i] : (K)0;
    }
    first_keys[leaf] = sorted_keys[leaf * fanout];
}

/* Node j of an internal level whose children are the n_below nodes at below_base (stride
 * below_bytes) with first keys first_below. */
template <typename K>
SX_HD void hbt_fill_internal(uint64_t j, uint64_t n_below, const K *first_below, uint64_t below_base,
                             uint64_t below_bytes, uint32_t fanout, uint8_t *node_base, K *first_keys)
{
    K *keys = (K *)(node_base + j * (uint64_t)fanout * (sizeof(K) + 8));
    uint64_t *child = (uint64_t *)(keys + fanout);
    const uint64_t first_child = j * fanout;
    const uint64_t left = n_below - first_child;
    const uint32_t children = left < fanout ? (uint32_t)left : fanout;
    for (uint32_t s = 0; s < fanout; s++) {
        keys[s] = s + 1 < children ? first_below[first_child + s + 1] : sx_max_key<K>();
        const uint64_t c = first_child + (s < children ? s : children - 1);
        child[s] = below_base + c * below_bytes;
    }
    first_keys[j] = first_below[first_child];
}

void hbt_plan(hbt_shape *shape, uint32_t key_bits, uint32_t fanout, uint64_t n_keys);

/* ================================================================================================
 * Clock, budget, tables (suite_util.cu).
 * ============================================================================================== */
double suite_now(void); /* seconds, monotonic */

struct timing {
    double median_ms, min_ms, max_ms;
    uint32_t runs;
};
timing timing_of(std::vector<double> ms);

/* GPU timing: one warm-up, then `runs` runs between CUDA events on the default stream. */
template <typename F> timing time_gpu(uint32_t runs, F &&launch)
{
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    std::vector<double> ms;
    for (uint32_t r = 0; r < runs; r++) {
        CK(cudaEventRecord(start, 0));
        launch();
        CK(cudaGetLastError());
        CK(cudaEventRecord(stop, 0));
        CK(cudaEventSynchronize(stop));
        float t = 0;
        CK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
    }
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    return timing_of(ms);
}

/* Several whole calls timed in rounds: a warm-up of each, then `runs` rounds, each timing every call
 * once (CUDA events on the default stream around the call and, unless it is synchronous, a
 * synchronisation of that stream), round r starting at call r mod M, and each timed call after an
 * untimed call of its own, so that a drift of the GPU's or the host's state falls on every call
 * alike and each finds its own caches and TLB as a caller repeating it does (bench/NOTES.md,
 * "Session 17" and "Session 18"). The timing of each call's runs, in the calls' order. */
struct gpu_call {
    std::function<void()> run;
    bool synchronous; /* run() returns with its work done (the library's calls) */
};
std::vector<timing> time_gpu_rounds(uint32_t runs, const std::vector<gpu_call> &calls);

/* Host timing (wall clock), one warm-up unless warm_up is false. */
template <typename F> timing time_host(uint32_t runs, F &&fn, bool warm_up = true)
{
    if (warm_up)
        fn();
    std::vector<double> ms;
    for (uint32_t r = 0; r < runs; r++) {
        const double t0 = suite_now();
        fn();
        ms.push_back((suite_now() - t0) * 1e3);
    }
    return timing_of(ms);
}

/* The time budget: work is started only when its estimate fits; what does not fit is skipped
 * and named (printed and written to meta.csv). */
struct suite_budget {
    double start, deadline;
    std::vector<std::string> skipped;
};
void budget_init(suite_budget *b, double seconds);
double budget_left(const suite_budget *b);
/* True when `estimate` seconds fit (keeping `reserve` seconds for work still to come); else
 * records `what` as skipped. */
bool budget_allows(suite_budget *b, const std::string &what, double estimate, double reserve = 0.0);

/* A CSV table: header line first, then rows, each flushed as written. */
struct csv_table {
    FILE *file;
    std::string path;
};
bool csv_open(csv_table *t, const std::string &dir, const char *name, const char *header);
void csv_row(csv_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void csv_close(csv_table *t);

/* The run's tables: one per experiment family. */
struct suite_tables {
    csv_table ceilings, lookup, ablation, range, build, meta;
};
bool tables_open(suite_tables *t, const std::string &dir);
void tables_close(suite_tables *t);
void meta_row(suite_tables *t, const char *key, const std::string &value);

/* ================================================================================================
 * Data on the device (suite_data.cu). All arrays are of the key width unless said; `bits` is 32
 * or 64. Calls are synchronous on the default stream.
 * ============================================================================================== */
/* Uniform keys in hash order (unsorted), and their values. */
void gen_uniform_unsorted_device(uint32_t bits, uint64_t n, uint64_t seed, void *d_keys, void *d_values);
/* Sorted keys and values of a distribution (uniform: generated, then CUB-sorted; dense and zipf:
 * generated in order). False (with a message) when the zipf keys overflow the domain. */
bool gen_sorted_device(uint32_t bits, key_dist dist, uint64_t n, uint64_t seed, void *d_keys, void *d_values);
/* CUB radix sort of (key, value) pairs on all bits, into separate output arrays. */
void sort_pairs_device(uint32_t bits, uint64_t n, const void *d_keys_in, const void *d_values_in, void *d_keys_out,
                       void *d_values_out);
/* count queries j = first .. first+count-1 of a query set, into d_queries[0 .. count). */
void gen_queries_device(uint32_t bits, const void *d_sorted_keys, uint64_t n, const query_spec &qs, uint64_t first,
                        uint64_t count, void *d_queries);
void gen_ranges_device(uint32_t bits, const void *d_sorted_keys, uint64_t n, uint64_t length, uint64_t seed,
                       uint64_t count, void *d_lo, void *d_hi);
/* 0, 1, ..., n-1 as uint32. */
void fill_iota_device(uint32_t *d, uint64_t n);

/* The same on the host (OpenMP), for --quick and for the host copies. */
void gen_uniform_unsorted_host(uint32_t bits, uint64_t n, uint64_t seed, void *keys, void *values);
bool gen_sorted_host(uint32_t bits, key_dist dist, uint64_t n, uint64_t seed, void *keys, void *values);
void gen_queries_host(uint32_t bits, const void *sorted_keys, uint64_t n, const query_spec &qs, uint64_t first,
                      uint64_t count, void *queries);
void gen_ranges_host(uint32_t bits, const void *sorted_keys, uint64_t n, uint64_t length, uint64_t seed,
                     uint64_t count, void *lo, void *hi);
/* Sorts pairs on the host (by key; keys are unique). */
void sort_pairs_host(uint32_t bits, uint64_t n, void *keys, void *values);

/* ================================================================================================
 * Baselines (suite_baselines.cu). Device structures live in device memory; *_host variants in
 * host memory. Every lookup writes values and found flags (1 byte) like harmonia_lookup.
 * ============================================================================================== */
struct sorted_array {
    uint32_t bits;
    uint64_t n;
    const void *keys, *values; /* device */
    uint32_t span_bits;        /* bits in which the smallest and largest key differ */
};

/* Plain binary search, one thread per query; with positions, result i goes to slot positions[i]
 * (the scatter of a sorted pipeline). */
void bsearch_lookup_device(const sorted_array &a, const void *d_queries, uint64_t n, const uint32_t *d_positions,
                           void *d_values_out, uint8_t *d_found_out);

/* The sort + search + scatter pipeline: (query, position) pairs radix-sorted on bits
 * [begin_bit, end_bit) with CUB, searched in that order, results scattered to the original
 * positions. Buffers allocated once by bsearch_pipeline_init. */
struct bsearch_pipeline {
    uint32_t bits;
    uint64_t capacity;
    void *sorted_queries;
    uint32_t *iota, *sorted_positions;
    void *temp;
    size_t temp_bytes;
};
bool bsearch_pipeline_init(bsearch_pipeline *p, uint32_t bits, uint64_t capacity);
void bsearch_pipeline_sort(bsearch_pipeline *p, const void *d_queries, uint64_t n, uint32_t begin_bit,
                           uint32_t end_bit);
void bsearch_pipeline_run(bsearch_pipeline *p, const sorted_array &a, const void *d_queries, uint64_t n,
                          uint32_t begin_bit, uint32_t end_bit, void *d_values_out, uint8_t *d_found_out);
void bsearch_pipeline_free(bsearch_pipeline *p);

/* How a sort + search pipeline hands back its results (bsearch_pipeline_run_as):
 *   BS_FUSED_SCATTER  the search writes each value and found flag at its query's position;
 *   BS_PACKED_SCATTER the search writes one (value, found) record per result at its position into a
 *                     scratch array (one scattered write instead of two), then a coalesced pass
 *                     splits the records into values and flags (scratch: bs_packed_bytes);
 *   BS_BITMAP_SCATTER the search writes each value at its position and sets its found bit in a
 *                     bitmap (an atomic OR, in L2: one bit per query), then a coalesced pass turns
 *                     the bits into flags — one scattered 8-byte write per query, the fewest bytes a
 *                     scatter of (value, found) can move (scratch: bs_packed_bytes);
 *   BS_SORTED         results stay in sorted order; the sort's own 32-bit positions say whose they
 *                     are (p->sorted_positions) — no restore at all. */
enum bs_restore { BS_FUSED_SCATTER = 0, BS_PACKED_SCATTER = 1, BS_SORTED = 2, BS_BITMAP_SCATTER = 3 };
const char *bs_restore_name(bs_restore how);
size_t bs_packed_bytes(uint32_t bits, uint64_t n);
void bsearch_pipeline_run_as(bsearch_pipeline *p, const sorted_array &a, const void *d_queries, uint64_t n,
                             uint32_t begin_bit, uint32_t end_bit, bs_restore how, void *d_packed,
                             void *d_values_out, uint8_t *d_found_out);

/* A GPU hash table, the ceiling for point lookups that an ordered index does not have to beat:
 * open addressing with linear probing over a power-of-two number of (key, value) slots at most
 * half full (50 % load when n is a power of two), one slot = one 16-byte (64-bit) or 8-byte
 * (32-bit) load; an absent key value marks empty slots (every key value may be stored: the marker
 * is chosen among the values the set lacks). Built on the device with atomic compare-and-swap. */
struct hash_table {
    uint32_t bits;
    uint64_t n, capacity;
    void *slots;            /* capacity * 2 words of the key width: key, value */
    uint64_t empty;         /* the marker */
};
bool hash_build_device(hash_table *h, const sorted_array &a);
void hash_lookup_device(const hash_table &h, const void *d_queries, uint64_t n, void *d_values_out,
                        uint8_t *d_found_out);
void hash_free(hash_table *h);

/* K-ary Eytzinger (K = 9), 8 threads per query, one ballot per level, no early exit, the value
 * fetched once at the end. */
struct eyt_tree {
    uint32_t bits, height;
    uint64_t n, m;          /* keys, nodes */
    void *keys, *values;    /* m * 8 slots each */
    bool max_key_present;
    bool on_device;
};
bool eyt_build_device(eyt_tree *t, const sorted_array &a);
void eyt_build_host(eyt_tree *t, uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n);
void eyt_lookup_device(const eyt_tree &t, const void *d_queries, uint64_t n, void *d_values_out, uint8_t *d_found_out);
void eyt_lookup_host(const eyt_tree &t, const void *queries, uint64_t n, void *values_out, uint8_t *found_out);
void eyt_free(eyt_tree *t);
uint64_t eyt_bytes(const eyt_tree &t);

struct hbt_tree {
    hbt_shape shape;
    uint8_t *internal, *leaves;
    uint64_t root;          /* address of the root node (device or host) */
    bool max_key_present;
    bool on_device;
};
bool hbt_build_device(hbt_tree *t, const sorted_array &a, uint32_t fanout);
void hbt_build_host(hbt_tree *t, uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n,
                    uint32_t fanout);
void hbt_lookup_device(const hbt_tree &t, const void *d_queries, uint64_t n, void *d_values_out, uint8_t *d_found_out);
void hbt_lookup_host(const hbt_tree &t, const void *queries, uint64_t n, void *values_out, uint8_t *found_out);
void hbt_free(hbt_tree *t);
uint64_t hbt_bytes(const hbt_tree &t);

/* Range queries over the sorted array: counts, and a two-phase collect (counts + CUB exclusive
 * scan into offsets[0 .. n], then the pairs). scratch: (n + 1) * 8 bytes for the counts, plus the
 * scan's temporary storage (range_scan_temp_bytes). */
void range_count_device(const sorted_array &a, const void *d_lo, const void *d_hi, uint64_t n, uint64_t *d_counts);
size_t range_scan_temp_bytes(uint64_t n);
void range_offsets_device(const sorted_array &a, const void *d_lo, const void *d_hi, uint64_t n, uint64_t *d_counts,
                          void *d_temp, size_t temp_bytes, uint64_t *d_offsets);
void range_collect_device(const sorted_array &a, const void *d_lo, uint64_t n, const uint64_t *d_offsets,
                          uint64_t expected_length, void *d_keys_out, void *d_values_out);
/* Host sorted-array collect (phase 2; offsets from bl_range_count + a scan). */
void range_collect_host(uint32_t bits, const void *sorted_keys, const void *sorted_values, uint64_t n_keys,
                        const void *lo, uint64_t n, const uint64_t *offsets, void *keys_out, void *values_out);

/* ================================================================================================
 * Ceilings (suite_ceilings.cu).
 * ============================================================================================== */
/* Device-to-device copy of `bytes`; returns the timing; GB/s = 2 * bytes / time. */
timing ceiling_copy(uint64_t bytes, uint32_t runs);
/* `loads` random 8-byte loads over an array of `array_bytes` (rounded down to 8). */
timing ceiling_gather(uint64_t array_bytes, uint64_t loads, uint32_t runs);
/* Random scatter of n 8-byte values to a permutation of their positions. */
timing ceiling_scatter(uint64_t n, uint32_t runs);
/* The same probes on the CPU (OpenMP), for --quick. */
timing ceiling_gather_host(uint64_t array_bytes, uint64_t loads, uint32_t runs);
timing ceiling_copy_host(uint64_t bytes, uint32_t runs);

/* ================================================================================================
 * Verification against the CPU engine (suite_verify.cu).
 * ============================================================================================== */
struct check_result {
    bool ok;
    uint64_t sample, mismatches;
    double hit_rate; /* in the sample, from the CPU engine */
};

/* A fixed sample of result slots of an n-query batch: all when n <= sample_max, else sample_max
 * random slots (repeats allowed). */
struct verifier {
    harmonia_tree *tree;
    uint32_t bits;
    uint64_t n, sample;
    std::vector<uint64_t> slots;  /* the sampled slots (host) */
    uint64_t *d_slots;            /* and on the device (NULL in host-only use) */
    void *d_a, *d_b, *d_c, *d_d;  /* sample * 8 bytes each: gathered queries, results, offsets */
    uint8_t *d_f;
    unsigned long long *d_bad;
};
void verifier_init(verifier *vf, harmonia_tree *tree, uint32_t bits, uint64_t n, uint64_t sample_max, bool device);
void verifier_free(verifier *vf);
/* Lookup results in device memory. Slot i holds the result of query i, or of query positions[i]
 * when a positions array is given (64- or 32-bit); positions must then be a permutation of
 * 0 .. n-1 (checked over all n). */
check_result verify_lookup_device(verifier *vf, const void *d_queries, const void *d_values, const uint8_t *d_found,
                                  const uint64_t *d_pos64, const uint32_t *d_pos32);
/* Lookup results in host memory, in query order. */
check_result verify_lookup_host(verifier *vf, const void *queries, const void *values, const uint8_t *found);
/* Range counts in device memory, against harmonia_range_count on the CPU. */
check_result verify_range_count_device(verifier *vf, const void *d_lo, const void *d_hi, const uint64_t *d_counts);
/* Range collect in device memory: offsets (n + 1) and the pairs, for the sampled ranges; the total
 * offsets[n] must equal expected_total unless that is UINT64_MAX. */
check_result verify_range_collect_device(verifier *vf, const void *d_lo, const void *d_hi, const uint64_t *d_offsets,
                                         const void *d_keys, const void *d_values, uint64_t expected_total);

#endif /* HARMONIA_BENCH_SUITE_H */
