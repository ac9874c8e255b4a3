/* psa_sort.cu — PSA by radix sort, for sparse windows whose results are wanted unordered: the queries
 * of a window sorted with CUB on the top psa_sort_bits bits where the tree's keys differ, with each
 * query's window-relative position beside it, so that the plain descent (ntg/) meets neighbouring
 * queries on neighbouring paths. Where a window has fewer queries than leaves the partition's
 * buckets hold about one query each and its staged search has nothing to share; a sort of 8 or 16
 * bits (one or two CUB passes) costs less and the descent then finds the upper levels in L1 (bench/NOTES.md,
 * "Sparse unordered windows" and "The fixed-shape descent"). */
#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "psa/psa_gpu.h"
#include "psa/psa_policy.h"
}

namespace {

__global__ void __launch_bounds__(256) positions_kernel(uint32_t n, uint32_t *__restrict__ positions)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        positions[i] = i;
}

template <typename K>
__global__ void __launch_bounds__(256) copy_with_positions(const K *__restrict__ in, uint32_t n, K *__restrict__ keys,
                                                           uint32_t *__restrict__ positions)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        keys[i] = in[i];
        positions[i] = i;
    }
}

/* The bits [begin, end) of the sort: end just above the highest bit where key_min and key_max
 * differ (the bits above it are the same for every key of the tree), psa_sort_bits below it. */
void sort_bits(uint32_t key_bits, const psa_plan *plan, int *begin, int *end)
{
    const int bits = (int)psa_sort_bits(key_bits);
    const uint64_t differ = plan->key_min ^ plan->key_max;
    int e = 0;
    while (e < 64 && (differ >> e) != 0)
        e++;
    *end = e;
    *begin = e > bits ? e - bits : 0;
}

/* CUB's scratch for the sort of up to n pairs on up to PSA_SORT_MAX_BITS bits. */
template <typename K> cudaError_t cub_temp_bytes(uint32_t n, size_t *bytes)
{
    cub::DoubleBuffer<K> keys(NULL, NULL);
    cub::DoubleBuffer<uint32_t> positions(NULL, NULL);
    *bytes = 0;
    return cub::DeviceRadixSort::SortPairs(NULL, *bytes, keys, positions, (int64_t)n, 0, PSA_SORT_MAX_BITS);
}

/* The workspace: the positions' two buffers, then CUB's scratch; PSA_ALIGN - 1 bytes of slack so
 * that the workspace need not be aligned. */
template <typename K> cudaError_t sort_workspace_bytes(uint32_t capacity, size_t *bytes)
{
    size_t temp = 0;
    const cudaError_t e = cub_temp_bytes<K>(capacity, &temp);
    *bytes = PSA_ALIGN - 1 + 2 * psa_align_up((size_t)capacity * 4) + temp;
    return e;
}

template <typename K>
cudaError_t sort_typed(const psa_plan *plan, const K *queries, uint32_t n, K *keys_a, K *keys_b, void *workspace,
                       size_t workspace_bytes, const void **sorted_keys, const uint32_t **sorted_positions,
                       cudaStream_t stream)
{
    /* the positions' two buffers first, then CUB's scratch */
    char *at = (char *)psa_align_up((uintptr_t)workspace);
    const size_t before_temp = (size_t)(at - (char *)workspace) + 2 * psa_align_up((size_t)n * 4);
    if (before_temp > workspace_bytes)
        return cudaErrorInvalidValue;
    uint32_t *pos_a = (uint32_t *)at, *pos_b = (uint32_t *)(at + psa_align_up((size_t)n * 4));
    void *temp = at + 2 * psa_align_up((size_t)n * 4);
    const size_t temp_room = workspace_bytes - before_temp;
    int begin = 0, end = 0;
    sort_bits((uint32_t)(sizeof(K) * 8), plan, &begin, &end);
    const unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    cudaError_t e = cudaSuccess;
    if (end > begin) {
        /* Straight from the caller's queries into keys_a where CUB needs no buffers of its own for
         * that (a sort of one pass: it then reads the input once and writes the output once), which
         * saves the copy: only the positions 0 .. n-1 are written first. One size query of CUB's
         * (0.3 µs on the H100) where the direct sort fits, as it does in psa_scratch_bytes'
         * scratch; the double buffer's size only where it does not. */
        size_t direct_bytes = 0;
        e = cub::DeviceRadixSort::SortPairs(NULL, direct_bytes, queries, keys_a, pos_a, pos_b, (int64_t)n, begin, end,
                                            stream);
        if (e != cudaSuccess)
            return e;
        if (direct_bytes <= temp_room) {
            positions_kernel<<<blocks, 256, 0, stream>>>(n, pos_a);
            e = cudaGetLastError();
            if (e == cudaSuccess)
                e = cub::DeviceRadixSort::SortPairs(temp, direct_bytes, queries, keys_a, pos_a, pos_b, (int64_t)n, begin,
                                                    end, stream);
            *sorted_keys = keys_a;
            *sorted_positions = pos_b;
            return e;
        }
    }
    size_t temp_bytes = 0;
    e = cub_temp_bytes<K>(n, &temp_bytes);
    if (e != cudaSuccess)
        return e;
    if (temp_bytes > temp_room)
        return cudaErrorInvalidValue;
    cub::DoubleBuffer<K> keys(keys_a, keys_b);
    cub::DoubleBuffer<uint32_t> positions(pos_a, pos_b);
    copy_with_positions<K><<<blocks, 256, 0, stream>>>(queries, n, keys_a, pos_a);
    e = cudaGetLastError();
    if (e == cudaSuccess && end > begin) /* else the tree holds one key: nothing to sort */
        e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, positions, (int64_t)n, begin, end, stream);
    if (e != cudaSuccess)
        return e;
    *sorted_keys = keys.Current();
    *sorted_positions = positions.Current();
    return cudaSuccess;
}

} // namespace

extern "C" cudaError_t psa_sort_workspace_bytes(uint32_t key_bits, uint32_t capacity, size_t *bytes_out)
{
    return key_bits == 32 ? sort_workspace_bytes<uint32_t>(capacity, bytes_out)
                          : sort_workspace_bytes<uint64_t>(capacity, bytes_out);
}

extern "C" cudaError_t psa_sort_window(uint32_t key_bits, const psa_plan *plan, const void *queries, uint32_t n,
                                       void *keys_a, void *keys_b, void *workspace, size_t workspace_bytes,
                                       const void **sorted_keys, const uint32_t **sorted_positions,
                                       cudaStream_t stream)
{
    if (n == 0)
        return cudaErrorInvalidValue;
    if (key_bits == 32)
        return sort_typed<uint32_t>(plan, (const uint32_t *)queries, n, (uint32_t *)keys_a, (uint32_t *)keys_b,
                                    workspace, workspace_bytes, sorted_keys, sorted_positions, stream);
    return sort_typed<uint64_t>(plan, (const uint64_t *)queries, n, (uint64_t *)keys_a, (uint64_t *)keys_b, workspace,
                                workspace_bytes, sorted_keys, sorted_positions, stream);
}
