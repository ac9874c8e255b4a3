/* psa_partition.cu — PSA by partition on the GPU (psa.h says what and why): the bin counts, the
 * one or two partition passes that group a window of queries by bucket and record where each query
 * went, and the restore that gathers results back into query order. Also the CUB exclusive scan of
 * the range-collect pipeline. The search of a partitioned window is in ntg/. */
#include <algorithm>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

extern "C" {
#include "psa/psa_gpu.h"
}

#define PSA_MAX_BINS (1u << PSA_MAX_PASS_BITS)

namespace {

/* Where each part of the workspace sits: a fixed layout for a capacity, sized for the largest plan
 * so that one allocation serves every plan. */
struct layout {
    size_t keys1, keys2, map1, map2, hist1, offsets1, cursor1, tile_start, hist2, cursor2, scan_temp, scan_bytes,
        total;
};

size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

cudaError_t layout_of(uint32_t key_bits, uint32_t capacity, layout *l)
{
    const size_t kb = key_bits / 8, all_buckets = (size_t)1 << PSA_MAX_BITS;
    size_t at = 0;
    l->keys1 = at, at = align_up(at + (size_t)capacity * kb);
    l->keys2 = at, at = align_up(at + (size_t)capacity * kb);
    l->map1 = at, at = align_up(at + (size_t)capacity * 4);
    l->map2 = at, at = align_up(at + (size_t)capacity * 4);
    l->hist1 = at, at = align_up(at + PSA_MAX_BINS * 4);
    l->offsets1 = at, at = align_up(at + (PSA_MAX_BINS + 1) * 4);
    l->cursor1 = at, at = align_up(at + PSA_MAX_BINS * 4);
    l->tile_start = at, at = align_up(at + (PSA_MAX_BINS + 1) * 4);
    l->hist2 = at, at = align_up(at + all_buckets * 4);
    l->cursor2 = at, at = align_up(at + all_buckets * 4);
    l->scan_bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, l->scan_bytes, (const uint32_t *)NULL, (uint32_t *)NULL,
                                                  (int)all_buckets);
    l->scan_temp = at, at = align_up(at + l->scan_bytes);
    l->total = at;
    return e;
}

template <typename K> __device__ __forceinline__ uint32_t coarse_bin(const psa_plan &plan, K q)
{
    return psa_bucket(&plan, (uint64_t)q) >> plan.bits2;
}

template <typename K> __device__ __forceinline__ uint32_t fine_bin(const psa_plan &plan, K q)
{
    return psa_bucket(&plan, (uint64_t)q) & ((1u << plan.bits2) - 1u);
}

/* Pass-1 bin counts: hist1[b] += queries whose coarse bin is b. */
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) hist1_kernel(const K *__restrict__ queries, uint32_t n, psa_plan plan,
                                                            uint32_t *__restrict__ hist1)
{
    __shared__ uint32_t counts[PSA_MAX_BINS];
    const uint32_t bins = 1u << plan.bits1;
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        counts[b] = 0;
    __syncthreads();
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        atomicAdd(&counts[coarse_bin<K>(plan, queries[i])], 1u);
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (counts[b])
            atomicAdd(&hist1[b], counts[b]);
}

/* One block of PSA_MAX_BINS threads: offsets1 = exclusive scan of hist1 (offsets1[bins] = n),
 * cursor1 = offsets1, and tile_start = exclusive scan of each coarse bin's pass-2 tile count. */
__global__ void __launch_bounds__(PSA_MAX_BINS) scan1_kernel(const uint32_t *__restrict__ hist1, uint32_t bins,
                                                             uint32_t *__restrict__ offsets1,
                                                             uint32_t *__restrict__ cursor1,
                                                             uint32_t *__restrict__ tile_start)
{
    typedef cub::BlockScan<uint32_t, PSA_MAX_BINS> scan;
    __shared__ typename scan::TempStorage temp;
    const uint32_t b = threadIdx.x;
    const uint32_t count = b < bins ? hist1[b] : 0;
    uint32_t offset, total;
    scan(temp).ExclusiveSum(count, offset, total);
    __syncthreads();
    const uint32_t tiles = (count + PSA_TILE - 1) / PSA_TILE;
    uint32_t tile, tiles_total;
    scan(temp).ExclusiveSum(tiles, tile, tiles_total);
    if (b < bins) {
        offsets1[b] = offset;
        cursor1[b] = offset;
        tile_start[b] = tile;
    }
    if (b == 0) {
        offsets1[bins] = total;
        tile_start[bins] = tiles_total;
    }
}

/* A tile of up to PSA_TILE items is grouped by bin: each item's rank among the tile's items of its
 * bin (shared atomics), then one global atomic per non-empty bin reserves the tile's run of slots
 * in that bin. Used by both passes: get(k) yields item k of the tile, bin_of its bin, put(k, slot)
 * stores it. */
template <typename K, typename BIN, typename PUT>
__device__ __forceinline__ void partition_tile(const K (&key)[PSA_ITEMS], const bool (&valid)[PSA_ITEMS], uint32_t bins,
                                               uint32_t *__restrict__ cursor, uint32_t *counts, uint32_t *base,
                                               BIN bin_of, PUT put)
{
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        counts[b] = 0;
    __syncthreads();
    uint32_t bin[PSA_ITEMS], rank[PSA_ITEMS];
#pragma unroll
    for (int k = 0; k < PSA_ITEMS; k++)
        if (valid[k]) {
            bin[k] = bin_of(key[k]);
            rank[k] = atomicAdd(&counts[bin[k]], 1u);
        }
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (counts[b])
            base[b] = atomicAdd(&cursor[b], counts[b]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < PSA_ITEMS; k++)
        if (valid[k])
            put(k, base[bin[k]] + rank[k]);
}

/* Pass 1: queries (in query order) into keys_out grouped by coarse bin; map1[i] = slot of query i,
 * or (unordered) positions[slot] = i. */
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) pass1_kernel(const K *__restrict__ queries, uint32_t n, psa_plan plan,
                                                            uint32_t *__restrict__ cursor1, K *__restrict__ keys_out,
                                                            uint32_t *__restrict__ map1,
                                                            uint32_t *__restrict__ positions)
{
    __shared__ uint32_t counts[PSA_MAX_BINS], base[PSA_MAX_BINS];
    const uint64_t tile = (uint64_t)blockIdx.x * PSA_TILE;
    K key[PSA_ITEMS];
    bool valid[PSA_ITEMS];
    uint32_t index[PSA_ITEMS];
#pragma unroll
    for (int k = 0; k < PSA_ITEMS; k++) {
        const uint64_t i = tile + (uint64_t)k * PSA_THREADS + threadIdx.x;
        valid[k] = i < n;
        index[k] = (uint32_t)i;
        key[k] = valid[k] ? queries[i] : (K)0;
    }
    partition_tile<K>(key, valid, 1u << plan.bits1, cursor1, counts, base,
                      [&](K q) { return coarse_bin<K>(plan, q); },
                      [&](int k, uint32_t slot) {
                          keys_out[slot] = key[k];
                          if (map1)
                              map1[index[k]] = slot;
                          else
                              positions[slot] = index[k];
                      });
}

/* The pass-2 tile a block works on: tiles never cross a coarse bin (tile_start numbers each bin's
 * tiles), so all of a tile's items share one coarse bin c and at most 2^bits2 fine bins. */
__device__ __forceinline__ bool pass2_tile(const uint32_t *tile_start, const uint32_t *offsets1, uint32_t bins1,
                                           uint32_t *c_out, uint32_t *begin_out, uint32_t *end_out)
{
    const uint32_t t = blockIdx.x;
    if (t >= tile_start[bins1])
        return false;
    uint32_t lo = 0, hi = bins1; /* the last bin c with tile_start[c] <= t */
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2;
        if (tile_start[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    *c_out = lo;
    *begin_out = offsets1[lo] + (t - tile_start[lo]) * PSA_TILE;
    const uint32_t bin_end = offsets1[lo + 1];
    *end_out = bin_end - *begin_out < PSA_TILE ? bin_end : *begin_out + PSA_TILE;
    return true;
}

/* Pass-2 bin counts: hist2[c << bits2 | f] += items of coarse bin c with fine bin f. */
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) hist2_kernel(const K *__restrict__ keys1, psa_plan plan,
                                                            const uint32_t *__restrict__ offsets1,
                                                            const uint32_t *__restrict__ tile_start,
                                                            uint32_t *__restrict__ hist2)
{
    __shared__ uint32_t counts[PSA_MAX_BINS];
    __shared__ uint32_t place[3];
    if (threadIdx.x == 0 && !pass2_tile(tile_start, offsets1, 1u << plan.bits1, &place[0], &place[1], &place[2]))
        place[1] = place[2] = 0;
    const uint32_t bins = 1u << plan.bits2;
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        counts[b] = 0;
    __syncthreads();
    const uint32_t c = place[0], begin = place[1], end = place[2];
    for (uint32_t s = begin + threadIdx.x; s < end; s += blockDim.x)
        atomicAdd(&counts[fine_bin<K>(plan, keys1[s])], 1u);
    __syncthreads();
    if (begin == end)
        return;
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (counts[b])
            atomicAdd(&hist2[(c << plan.bits2) | b], counts[b]);
}

/* Pass 2: each coarse bin's items into keys2 grouped by fine bin; map2[s] = final slot of pass-1
 * slot s, or (unordered) positions2[slot] = positions1[s]. cursor2 = exclusive scan of hist2. */
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) pass2_kernel(const K *__restrict__ keys1, psa_plan plan,
                                                            const uint32_t *__restrict__ offsets1,
                                                            const uint32_t *__restrict__ tile_start,
                                                            uint32_t *__restrict__ cursor2, K *__restrict__ keys2,
                                                            uint32_t *__restrict__ map2,
                                                            const uint32_t *__restrict__ positions1,
                                                            uint32_t *__restrict__ positions2)
{
    __shared__ uint32_t counts[PSA_MAX_BINS], base[PSA_MAX_BINS];
    __shared__ uint32_t place[3];
    if (threadIdx.x == 0 && !pass2_tile(tile_start, offsets1, 1u << plan.bits1, &place[0], &place[1], &place[2]))
        place[1] = place[2] = 0;
    __syncthreads();
    const uint32_t c = place[0], begin = place[1], end = place[2];
    if (begin == end)
        return; /* block-uniform */
    K key[PSA_ITEMS];
    bool valid[PSA_ITEMS];
    uint32_t slot1[PSA_ITEMS];
#pragma unroll
    for (int k = 0; k < PSA_ITEMS; k++) {
        const uint32_t s = begin + (uint32_t)k * PSA_THREADS + threadIdx.x;
        valid[k] = s < end;
        slot1[k] = s;
        key[k] = valid[k] ? keys1[s] : (K)0;
    }
    partition_tile<K>(key, valid, 1u << plan.bits2, cursor2 + ((size_t)c << plan.bits2), counts, base,
                      [&](K q) { return fine_bin<K>(plan, q); },
                      [&](int k, uint32_t slot) {
                          keys2[slot] = key[k];
                          if (map2)
                              map2[slot1[k]] = slot;
                          else
                              positions2[slot] = positions1[slot1[k]];
                      });
}

#define RESTORE_THREADS 256
#define RESTORE_ITEMS 4

/* out[i] = in[map2[map1[i]]] for values, keys and found flags; RESTORE_ITEMS per thread, strided
 * by the block so that every load of map1 and every store is coalesced, all gathers in flight. */
template <typename K>
__global__ void __launch_bounds__(RESTORE_THREADS) restore_kernel(const uint32_t *__restrict__ map1,
                                                                  const uint32_t *__restrict__ map2, uint32_t n,
                                                                  const K *__restrict__ values,
                                                                  const K *__restrict__ keys,
                                                                  const uint8_t *__restrict__ found,
                                                                  K *__restrict__ values_out, K *__restrict__ keys_out,
                                                                  uint8_t *__restrict__ found_out)
{
    const uint64_t tile = (uint64_t)blockIdx.x * RESTORE_THREADS * RESTORE_ITEMS + threadIdx.x;
    uint32_t slot[RESTORE_ITEMS];
#pragma unroll
    for (int k = 0; k < RESTORE_ITEMS; k++) {
        const uint64_t i = tile + (uint64_t)k * RESTORE_THREADS;
        slot[k] = i < n ? __ldg(map1 + i) : 0;
    }
    if (map2) {
#pragma unroll
        for (int k = 0; k < RESTORE_ITEMS; k++)
            if (tile + (uint64_t)k * RESTORE_THREADS < n)
                slot[k] = __ldg(map2 + slot[k]);
    }
#pragma unroll
    for (int k = 0; k < RESTORE_ITEMS; k++) {
        const uint64_t i = tile + (uint64_t)k * RESTORE_THREADS;
        if (i < n) {
            if (values_out)
                values_out[i] = __ldg(values + slot[k]);
            if (keys_out)
                keys_out[i] = __ldg(keys + slot[k]);
            found_out[i] = __ldg(found + slot[k]);
        }
    }
}

unsigned blocks_for(uint64_t items, uint64_t per_block)
{
    uint64_t b = (items + per_block - 1) / per_block;
    return b ? (unsigned)b : 1u;
}

int sm_count()
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        return 80;
    }
    return sms;
}

template <typename K>
cudaError_t partition_typed(const psa_plan &plan, const K *queries, uint32_t n, bool unordered, char *ws,
                            const layout &l, psa_partitioned *out, cudaStream_t stream)
{
    K *keys1 = (K *)(ws + l.keys1), *keys2 = (K *)(ws + l.keys2);
    uint32_t *map1 = (uint32_t *)(ws + l.map1), *map2 = (uint32_t *)(ws + l.map2);
    uint32_t *hist1 = (uint32_t *)(ws + l.hist1), *offsets1 = (uint32_t *)(ws + l.offsets1);
    uint32_t *cursor1 = (uint32_t *)(ws + l.cursor1), *tile_start = (uint32_t *)(ws + l.tile_start);
    uint32_t *hist2 = (uint32_t *)(ws + l.hist2), *cursor2 = (uint32_t *)(ws + l.cursor2);
    const uint32_t bins1 = 1u << plan.bits1;
    const bool two_passes = plan.bits2 > 0;

    cudaError_t e = cudaMemsetAsync(hist1, 0, bins1 * 4, stream);
    if (e != cudaSuccess)
        return e;
    const unsigned hist_blocks = (unsigned)std::min<uint64_t>(blocks_for(n, (uint64_t)PSA_THREADS * 16), 8u * sm_count());
    hist1_kernel<K><<<hist_blocks, PSA_THREADS, 0, stream>>>(queries, n, plan, hist1);
    scan1_kernel<<<1, PSA_MAX_BINS, 0, stream>>>(hist1, bins1, offsets1, cursor1, tile_start);
    pass1_kernel<K><<<blocks_for(n, PSA_TILE), PSA_THREADS, 0, stream>>>(
        queries, n, plan, cursor1, keys1, unordered ? NULL : map1, unordered ? map1 : NULL);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    out->keys = keys1;
    out->map1 = unordered ? NULL : map1;
    out->map2 = NULL;
    out->positions = unordered ? map1 : NULL;
    if (!two_passes)
        return cudaSuccess;

    const size_t buckets = (size_t)1 << plan.bits;
    if ((e = cudaMemsetAsync(hist2, 0, buckets * 4, stream)) != cudaSuccess)
        return e;
    /* at most one partial tile per coarse bin beyond the full ones */
    const unsigned tiles = blocks_for(n, PSA_TILE) + bins1;
    hist2_kernel<K><<<tiles, PSA_THREADS, 0, stream>>>(keys1, plan, offsets1, tile_start, hist2);
    size_t scan_bytes = l.scan_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(ws + l.scan_temp, scan_bytes, hist2, cursor2, (int)buckets, stream)) !=
        cudaSuccess)
        return e;
    pass2_kernel<K><<<tiles, PSA_THREADS, 0, stream>>>(keys1, plan, offsets1, tile_start, cursor2, keys2,
                                                        unordered ? NULL : map2, unordered ? map1 : NULL,
                                                        unordered ? map2 : NULL);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    out->keys = keys2;
    out->map2 = unordered ? NULL : map2;
    out->positions = unordered ? map2 : NULL;
    return cudaSuccess;
}

} /* namespace */

extern "C" cudaError_t psa_workspace_bytes(uint32_t key_bits, uint32_t capacity, const psa_plan *plan,
                                           size_t *bytes_out)
{
    (void)plan; /* the layout serves every plan */
    layout l;
    cudaError_t e = layout_of(key_bits, capacity, &l);
    *bytes_out = l.total;
    return e;
}

extern "C" cudaError_t psa_partition(uint32_t key_bits, const psa_plan *plan, const void *queries, uint32_t n,
                                     bool unordered, void *workspace, size_t workspace_bytes, psa_partitioned *out,
                                     cudaStream_t stream)
{
    if (plan->bits1 > PSA_MAX_PASS_BITS || plan->bits2 > PSA_MAX_PASS_BITS || plan->bits != plan->bits1 + plan->bits2)
        return cudaErrorInvalidValue;
    layout l;
    cudaError_t e = layout_of(key_bits, n, &l);
    if (e != cudaSuccess)
        return e;
    if (l.total > workspace_bytes)
        return cudaErrorInvalidValue;
    if (n == 0) {
        out->keys = queries;
        out->map1 = out->map2 = out->positions = NULL;
        return cudaSuccess;
    }
    /* the layout of n queries: no larger than the capacity's, which the workspace was sized for */
    return key_bits == 32 ? partition_typed<uint32_t>(*plan, (const uint32_t *)queries, n, unordered,
                                                      (char *)workspace, l, out, stream)
                          : partition_typed<uint64_t>(*plan, (const uint64_t *)queries, n, unordered,
                                                      (char *)workspace, l, out, stream);
}

extern "C" cudaError_t psa_restore(uint32_t key_bits, const psa_partitioned *part, uint32_t n, const void *values,
                                   const void *keys, const uint8_t *found, void *values_out, void *keys_out,
                                   uint8_t *found_out, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!part->map1 || !found || !found_out)
        return cudaErrorInvalidValue;
    const unsigned blocks = blocks_for(n, RESTORE_THREADS * RESTORE_ITEMS);
    if (key_bits == 32)
        restore_kernel<uint32_t><<<blocks, RESTORE_THREADS, 0, stream>>>(
            part->map1, part->map2, n, (const uint32_t *)values, (const uint32_t *)keys, found,
            values_out ? (uint32_t *)values_out : NULL, keys_out && keys ? (uint32_t *)keys_out : NULL, found_out);
    else
        restore_kernel<uint64_t><<<blocks, RESTORE_THREADS, 0, stream>>>(
            part->map1, part->map2, n, (const uint64_t *)values, (const uint64_t *)keys, found,
            values_out ? (uint64_t *)values_out : NULL, keys_out && keys ? (uint64_t *)keys_out : NULL, found_out);
    return cudaGetLastError();
}

extern "C" cudaError_t psa_scan_temp_bytes(uint64_t max_n, size_t *bytes_out)
{
    *bytes_out = 0;
    return cub::DeviceScan::ExclusiveSum(NULL, *bytes_out, (const uint64_t *)NULL, (uint64_t *)NULL,
                                         (int64_t)(max_n + 1), 0);
}

/* counts has n entries; the scan runs over n + 1 items whose last is a zero, so offsets[n] is the
 * total: the caller's counts array must have room for that extra zero (count[n] = 0). */
extern "C" cudaError_t psa_exclusive_scan(void *temp, size_t temp_bytes, const uint64_t *counts,
                                          uint64_t *offsets, uint64_t n, cudaStream_t stream)
{
    return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, offsets, (int64_t)(n + 1), stream);
}
