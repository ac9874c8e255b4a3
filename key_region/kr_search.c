/* kr_search.c — the CPU search engine over the Harmonia layout: point lookup, lower bound, range
 * count and range collect, OpenMP-parallel over queries, descending with the first-child array
 * exactly as the GPU kernels do. It is the reference every GPU result is checked against. */
#include <omp.h>
#include <string.h>

#include "key_region/key_region.h"

/* Queries descended together by one thread so that their cache misses overlap. */
#define SEARCH_GROUP 16

#define KR_T uint32_t
#define KR_FN(name) name##_u32
#include "key_region/kr_search_impl.h"
#undef KR_T
#undef KR_FN

#define KR_T uint64_t
#define KR_FN(name) name##_u64
#include "key_region/kr_search_impl.h"
#undef KR_T
#undef KR_FN

int kr_resolve_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

void kr_parallel_copy(void *dst, const void *src, size_t bytes, int threads)
{
    if (bytes < KR_PARALLEL_COPY_MIN) {
        memcpy(dst, src, bytes);
        return;
    }
    const size_t chunk = KR_PARALLEL_COPY_CHUNK;
    const int64_t chunks = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(threads))
    for (int64_t i = 0; i < chunks; i++) {
        const size_t off = (size_t)i * chunk;
        memcpy((char *)dst + off, (const char *)src + off, bytes - off < chunk ? bytes - off : chunk);
    }
}

void kr_leaf_batch(const kr_tree *t, const void *queries, uint64_t count, uint64_t *leaf_out, int threads)
{
    const uint64_t groups = (count + SEARCH_GROUP - 1) / SEARCH_GROUP;
    threads = kr_resolve_threads(threads);
#pragma omp parallel for schedule(static) num_threads(threads) if (count > KR_PARALLEL_MIN / 4)
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t first = g * SEARCH_GROUP;
        uint32_t n = (uint32_t)(count - first < SEARCH_GROUP ? count - first : SEARCH_GROUP);
        if (t->key_bits == 32)
            descend_group_u32(t, (const uint32_t *)queries + first, n, leaf_out + first);
        else
            descend_group_u64(t, (const uint64_t *)queries + first, n, leaf_out + first);
    }
}

void kr_at_rank(const kr_tree *t, uint64_t r, uint64_t *key, uint64_t *value)
{
    /* the leaf holding rank r: the last leaf whose leaf_rank is <= r */
    uint64_t lo = 0, hi = t->n_leaves; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->leaf_rank[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    uint64_t slot = r - t->leaf_rank[lo];
    *key = kr_load(t->keys, t->key_bits, kr_leaf_key_offset(t, lo) + slot);
    *value = kr_load(t->leaf_values, t->key_bits, lo * t->leaf_size + slot);
}

void kr_lookup_batch(const kr_tree *t, const void *queries, uint64_t count, void *values_out,
                     uint8_t *found_out, int threads)
{
    if (t->key_bits == 32)
        lookup_batch_u32(t, queries, count, values_out, found_out, kr_resolve_threads(threads));
    else
        lookup_batch_u64(t, queries, count, values_out, found_out, kr_resolve_threads(threads));
}

void kr_lower_bound_batch(const kr_tree *t, const void *queries, uint64_t count, void *keys_out,
                          void *values_out, uint8_t *found_out, int threads)
{
    if (t->key_bits == 32)
        lower_bound_batch_u32(t, queries, count, keys_out, values_out, found_out,
                              kr_resolve_threads(threads));
    else
        lower_bound_batch_u64(t, queries, count, keys_out, values_out, found_out,
                              kr_resolve_threads(threads));
}

void kr_range_count_batch(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                          uint64_t *counts_out, int threads)
{
    if (t->key_bits == 32)
        range_count_batch_u32(t, lo, hi, count, counts_out, kr_resolve_threads(threads));
    else
        range_count_batch_u64(t, lo, hi, count, counts_out, kr_resolve_threads(threads));
}

void kr_range_offsets(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                      uint64_t *offsets, int threads)
{
    /* counts into offsets[1..count], then an in-place inclusive scan makes the exclusive scan */
    offsets[0] = 0;
    kr_range_count_batch(t, lo, hi, count, offsets + 1, threads);
    kr_inclusive_scan(offsets + 1, count, threads);
}

void kr_inclusive_scan(uint64_t *values, uint64_t n, int threads)
{
    if (n < (1u << 16)) {
        for (uint64_t i = 1; i < n; i++)
            values[i] += values[i - 1];
        return;
    }
    int max_threads = kr_resolve_threads(threads);
    uint64_t block_sums[max_threads + 1];
#pragma omp parallel num_threads(max_threads)
    {
        int nt = omp_get_num_threads(), t = omp_get_thread_num();
        uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
        for (uint64_t i = lo + 1; i < hi; i++)
            values[i] += values[i - 1];
        block_sums[t + 1] = hi > lo ? values[hi - 1] : 0;
#pragma omp barrier
#pragma omp single
        {
            block_sums[0] = 0;
            for (int u = 1; u <= nt; u++)
                block_sums[u] += block_sums[u - 1];
        }
        for (uint64_t i = lo; i < hi; i++)
            values[i] += block_sums[t];
    }
}

void kr_range_collect_batch(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                            const uint64_t *offsets, void *keys_out, void *values_out, int threads)
{
    if (t->key_bits == 32)
        range_collect_batch_u32(t, lo, hi, count, offsets, keys_out, values_out,
                                kr_resolve_threads(threads));
    else
        range_collect_batch_u64(t, lo, hi, count, offsets, keys_out, values_out,
                                kr_resolve_threads(threads));
}
