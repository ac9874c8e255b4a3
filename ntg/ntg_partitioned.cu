/* ntg_partitioned.cu — point lookups and lower bounds of a window that PSA partitioned by bucket
 * (psa.h): each block takes a tile of consecutive slots, whose queries fall in a few neighbouring
 * buckets, hence in a short run of leaves that the bucket table names; it copies those leaves into
 * shared memory with 16-byte loads and answers every query there (a binary search over the
 * leaves' first keys, then one inside the leaf); only the values come from global memory. A tile
 * whose leaves do not fit descends the tree, one thread per query. Also builds the bucket table. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "ntg/ntg_device.cuh"
#include "ntg/ntg_policy.h"

namespace {

/* table[u] = the last leaf whose first key is <= psa_bucket_start(u) (0 if none), u < 2^bits;
 * table[2^bits] = the last leaf. Every query q of bucket u then searches leaves
 * table[u] .. table[u + 1] (the leaf of q is the last leaf whose first key is <= q). */
template <typename K>
__global__ void table_kernel(const ntg_view v, psa_plan plan, uint32_t *__restrict__ table, uint32_t entries)
{
    const K *first_keys = static_cast<const K *>(v.keys) + v.leaf_key_base;
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < entries; u += gridDim.x * blockDim.x) {
        if (u + 1 == entries) {
            table[u] = (uint32_t)(v.n_leaves - 1);
            continue;
        }
        const K start = (K)psa_bucket_start(&plan, u);
        uint64_t lo = 0, hi = v.n_leaves; /* lo = leaves whose first key is <= start */
        while (lo < hi) {
            const uint64_t mid = (lo + hi) / 2;
            if (__ldg(first_keys + mid * v.leaf_size) <= start)
                lo = mid + 1;
            else
                hi = mid;
        }
        table[u] = (uint32_t)(lo ? lo - 1 : 0);
    }
}

/* Leaves hold at least this many slots (KR_MIN_NODE): a staged row is at least 9 keys long. */
#define NTG_PS_MIN_LEAF 8

template <typename K> struct stage_shape {
    static constexpr uint32_t keys = NTG_PS_STAGE_BYTES / sizeof(K);
    static constexpr uint32_t firsts = keys / (NTG_PS_MIN_LEAF + 1) + 1;
};

#define NO_VALUE UINT64_MAX

template <typename K, bool LOWER_BOUND>
__global__ void __launch_bounds__(NTG_PS_THREADS, NTG_PS_MIN_BLOCKS)
search_kernel(const ntg_view v, psa_plan plan, const uint32_t *__restrict__ table, const K *__restrict__ queries,
              uint32_t n, K *__restrict__ values_out, K *__restrict__ keys_out, uint8_t *__restrict__ found_out,
              const uint32_t *__restrict__ positions, uint64_t *__restrict__ positions_out, uint64_t position_base)
{
    __shared__ __align__(16) K stage[stage_shape<K>::keys];
    __shared__ K firsts[stage_shape<K>::firsts];
    const K *keys = static_cast<const K *>(v.keys);
    const K *values = static_cast<const K *>(v.leaf_values);
    const K *leaf_level = keys + v.leaf_key_base;
    const K max_key = max_key_of<K>();
    const uint32_t L = v.leaf_size;
    const uint64_t tile = (uint64_t)blockIdx.x * NTG_PS_TILE;
    const uint32_t in_tile = n - tile < NTG_PS_TILE ? (uint32_t)(n - tile) : NTG_PS_TILE;

    /* the tile's slots hold buckets u0 .. u1 in order: its queries' leaves are l0 .. l1 */
    const K first_q = queries[tile], last_q = queries[tile + in_tile - 1];
    const uint64_t l0 = __ldg(table + psa_bucket(&plan, first_q));
    uint64_t l1 = __ldg(table + psa_bucket(&plan, last_q) + 1);
    if (LOWER_BOUND && l1 + 1 < v.n_leaves)
        l1++; /* a lower bound past the last key of leaf l1 is the next leaf's first key */
    const uint64_t rows = l1 - l0 + 1;
    const uint32_t row = L + 1;

    K q[NTG_PS_ITEMS];
#pragma unroll
    for (int k = 0; k < NTG_PS_ITEMS; k++) {
        const uint32_t at = (uint32_t)k * NTG_PS_THREADS + threadIdx.x;
        q[k] = at < in_tile ? queries[tile + at] : last_q;
    }

    /* per query: where its value is (NO_VALUE: not found) and, for lower bounds, the key */
    uint64_t value_at[NTG_PS_ITEMS];
    K key[NTG_PS_ITEMS];
    if (rows * row <= stage_shape<K>::keys) { /* block-uniform */
        /* stage rows l0 .. l1: leaf r's L keys at stage[r * row ..], its first key at firsts[r] */
        const uint32_t per_vec = 16 / sizeof(K), vecs_per_row = L / per_vec;
        const uint32_t row_shift = __ffs(vecs_per_row) - 1;
        const uint4 *src = reinterpret_cast<const uint4 *>(leaf_level + l0 * L);
        for (uint32_t x = threadIdx.x; x < (uint32_t)rows * vecs_per_row; x += NTG_PS_THREADS) {
            const uint32_t r = x >> row_shift, c = x & (vecs_per_row - 1);
            const uint4 word = __ldg(src + x);
            K part[16 / sizeof(K)];
            memcpy(part, &word, 16);
            K *dst = stage + r * row + c * per_vec;
#pragma unroll
            for (int e = 0; e < (int)(16 / sizeof(K)); e++)
                dst[e] = part[e];
            if (c == 0)
                firsts[r] = part[0];
        }
        __syncthreads();
        /* the leaf: the last row whose first key is <= q (row 0 when none is) */
        uint32_t r[NTG_PS_ITEMS];
#pragma unroll
        for (int k = 0; k < NTG_PS_ITEMS; k++)
            r[k] = 0;
        for (uint32_t len = (uint32_t)rows; len > 1;) {
            const uint32_t half = len >> 1;
#pragma unroll
            for (int k = 0; k < NTG_PS_ITEMS; k++)
                r[k] = firsts[r[k] + half] <= q[k] ? r[k] + half : r[k];
            len -= half;
        }
        /* the slot: the number of the leaf's keys < q (padding is the maximum key, never < q) */
        uint32_t s[NTG_PS_ITEMS];
#pragma unroll
        for (int k = 0; k < NTG_PS_ITEMS; k++)
            s[k] = 0;
        for (uint32_t step = L >> 1; step > 0; step >>= 1) {
#pragma unroll
            for (int k = 0; k < NTG_PS_ITEMS; k++)
                s[k] = stage[r[k] * row + s[k] + step - 1] < q[k] ? s[k] + step : s[k];
        }
#pragma unroll
        for (int k = 0; k < NTG_PS_ITEMS; k++) {
            const K *rp = stage + r[k] * row;
            s[k] += rp[s[k]] < q[k];
            const uint64_t leaf = l0 + r[k];
            const K at = s[k] < L ? rp[s[k]] : max_key;
            if (LOWER_BOUND) {
                /* past the leaf's keys: slot L, or padding (the maximum key, real only as the last
                 * key of the last leaf of a tree that holds it) */
                const bool real_max = v.max_key_present && leaf + 1 == v.n_leaves;
                if (s[k] < L && (at != max_key || real_max)) {
                    value_at[k] = leaf * L + s[k];
                    key[k] = at;
                } else if (leaf + 1 < v.n_leaves) {
                    value_at[k] = (leaf + 1) * L;
                    key[k] = r[k] + 1 < rows ? firsts[r[k] + 1] : __ldg(leaf_level + (leaf + 1) * L);
                } else {
                    value_at[k] = NO_VALUE;
                    key[k] = 0;
                }
            } else {
                const bool found = at == q[k] && s[k] < L && (q[k] != max_key || v.max_key_present);
                value_at[k] = found ? leaf * L + s[k] : NO_VALUE;
            }
        }
    } else {
        /* fallback: the tile's leaves do not fit; one thread per query descends the tree (unrolled:
         * the per-query arrays stay in registers) */
#pragma unroll
        for (int k = 0; k < NTG_PS_ITEMS; k++) {
            const uint64_t leaf = descend<K, 1, true>(v, q[k], 0, 0, ntg_first_child_global());
            const K *leaf_keys = leaf_level + leaf * L;
            const uint32_t sl = group_count<K, 1, true, true>(leaf_keys, L, q[k], 0, 0);
            const K at = sl < L ? __ldg(leaf_keys + sl) : max_key;
            if (LOWER_BOUND) {
                const uint64_t in_leaf = __ldg(v.leaf_rank + leaf + 1) - __ldg(v.leaf_rank + leaf);
                if (sl < in_leaf) {
                    value_at[k] = leaf * L + sl;
                    key[k] = at;
                } else if (leaf + 1 < v.n_leaves) {
                    value_at[k] = (leaf + 1) * L;
                    key[k] = __ldg(leaf_level + (leaf + 1) * L);
                } else {
                    value_at[k] = NO_VALUE;
                    key[k] = 0;
                }
            } else {
                const bool found = sl < L && at == q[k] && (q[k] != max_key || v.max_key_present);
                value_at[k] = found ? leaf * L + sl : NO_VALUE;
            }
        }
    }

    /* results, in slot order: every value load first, then the stores */
    K value[NTG_PS_ITEMS];
#pragma unroll
    for (int k = 0; k < NTG_PS_ITEMS; k++)
        value[k] = value_at[k] != NO_VALUE && values_out ? __ldg(values + value_at[k]) : (K)0;
#pragma unroll
    for (int k = 0; k < NTG_PS_ITEMS; k++) {
        const uint32_t at = (uint32_t)k * NTG_PS_THREADS + threadIdx.x;
        if (at >= in_tile)
            continue;
        const uint64_t j = tile + at;
        if (values_out)
            values_out[j] = value[k];
        if (LOWER_BOUND && keys_out)
            keys_out[j] = key[k];
        found_out[j] = value_at[k] != NO_VALUE;
        if (positions_out)
            positions_out[j] = position_base + positions[j];
    }
}

unsigned blocks_for(uint64_t items, uint64_t per_block)
{
    const uint64_t b = (items + per_block - 1) / per_block;
    return b ? (unsigned)b : 1u;
}

} /* namespace */

extern "C" cudaError_t ntg_build_bucket_table(const ntg_view *v, const psa_plan *plan, uint32_t *table,
                                              cudaStream_t stream)
{
    if (v->n_leaves == 0 || plan->bits > 31)
        return cudaErrorInvalidValue;
    const uint32_t entries = (1u << plan->bits) + 1;
    const unsigned blocks = blocks_for(entries, 256) < 4096 ? blocks_for(entries, 256) : 4096;
    if (v->key_bits == 32)
        table_kernel<uint32_t><<<blocks, 256, 0, stream>>>(*v, *plan, table, entries);
    else
        table_kernel<uint64_t><<<blocks, 256, 0, stream>>>(*v, *plan, table, entries);
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_search_partitioned(const ntg_view *v, const psa_plan *plan, const uint32_t *table,
                                                     bool lower_bound, const void *queries, uint32_t n,
                                                     void *values_out, void *keys_out, uint8_t *found_out,
                                                     const uint32_t *positions, uint64_t *positions_out,
                                                     uint64_t position_base, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!found_out || v->n_keys == 0 || (positions_out && !positions))
        return cudaErrorInvalidValue;
    const unsigned blocks = blocks_for(n, NTG_PS_TILE);
    if (v->key_bits == 32) {
        if (lower_bound)
            search_kernel<uint32_t, true><<<blocks, NTG_PS_THREADS, 0, stream>>>(
                *v, *plan, table, (const uint32_t *)queries, n, (uint32_t *)values_out, (uint32_t *)keys_out,
                found_out, positions, positions_out, position_base);
        else
            search_kernel<uint32_t, false><<<blocks, NTG_PS_THREADS, 0, stream>>>(
                *v, *plan, table, (const uint32_t *)queries, n, (uint32_t *)values_out, NULL, found_out, positions,
                positions_out, position_base);
    } else {
        if (lower_bound)
            search_kernel<uint64_t, true><<<blocks, NTG_PS_THREADS, 0, stream>>>(
                *v, *plan, table, (const uint64_t *)queries, n, (uint64_t *)values_out, (uint64_t *)keys_out,
                found_out, positions, positions_out, position_base);
        else
            search_kernel<uint64_t, false><<<blocks, NTG_PS_THREADS, 0, stream>>>(
                *v, *plan, table, (const uint64_t *)queries, n, (uint64_t *)values_out, NULL, found_out, positions,
                positions_out, position_base);
    }
    return cudaGetLastError();
}
