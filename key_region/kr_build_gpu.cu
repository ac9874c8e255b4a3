/* kr_build_gpu.cu — the device-wide steps of the GPU bulk build (kr_build_gpu.h says what each
 * does): CUB's radix sort and scan, and the kernels that check the order, drop duplicates and write
 * the leaf level and the internal levels. No host-device copies here, no allocation. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

extern "C" {
#include "key_region/kr_build_gpu.h"
}

#define KR_GPU_THREADS 256

namespace {

unsigned blocks_for(uint64_t items)
{
    uint64_t b = (items + KR_GPU_THREADS - 1) / KR_GPU_THREADS;
    return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b); /* grid-stride beyond */
}

#define GRID_STRIDE(i, n)                                                                           \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                     \
         i += (uint64_t)gridDim.x * blockDim.x)

__global__ void iota_kernel(uint32_t *positions, uint64_t count)
{
    GRID_STRIDE(i, count) positions[i] = (uint32_t)i;
}

template <typename K>
__global__ void gather_kernel(const K *values_in, const uint32_t *positions, K *values_out, uint64_t count)
{
    GRID_STRIDE(i, count) values_out[i] = values_in ? values_in[positions[i]] : (K)positions[i];
}

template <typename K>
__global__ void init_order_kernel(unsigned long long *result, uint64_t count)
{
    result[0] = count;
    result[1] = count;
}

template <typename K>
__global__ void order_kernel(const K *keys, uint64_t count, unsigned long long *result)
{
    GRID_STRIDE(i, count)
    {
        if (i == 0)
            continue;
        const K a = keys[i - 1], b = keys[i];
        if (b < a)
            atomicMin(&result[0], (unsigned long long)i);
        else if (b == a)
            atomicMin(&result[1], (unsigned long long)i);
    }
}

template <typename K>
__global__ void keep_flags_kernel(const K *keys, uint64_t count, bool keep_last, uint32_t *flags)
{
    GRID_STRIDE(i, count + 1)
    {
        uint32_t keep = 0;
        if (i < count)
            keep = keep_last ? (i + 1 == count || keys[i + 1] != keys[i]) : (i == 0 || keys[i - 1] != keys[i]);
        flags[i] = keep;
    }
}

template <typename K>
__global__ void scatter_kernel(const K *keys, const K *values, uint64_t count, bool keep_last,
                               const uint32_t *offsets, K *keys_out, K *values_out)
{
    GRID_STRIDE(i, count)
    {
        if (offsets[i + 1] != offsets[i]) {
            keys_out[offsets[i]] = keys[i];
            values_out[offsets[i]] = values[i];
        }
    }
}

/* One thread per leaf slot: the even spread of kr_plan_even. */
template <typename K>
__global__ void leaf_kernel(const K *sorted_keys, const K *sorted_values, K *leaf_keys, K *leaf_values,
                            uint64_t *leaf_rank, uint64_t n, uint64_t n_leaves, uint32_t leaf_shift)
{
    const uint64_t base = n / n_leaves, extra = n % n_leaves;
    const uint64_t L = 1ull << leaf_shift;
    const K max_key = (K)~(K)0;
    GRID_STRIDE(slot, n_leaves * L)
    {
        const uint64_t li = slot >> leaf_shift, s = slot & (L - 1);
        const uint64_t start = li * base + (li < extra ? li : extra);
        const uint64_t in_leaf = base + (li < extra ? 1 : 0);
        if (s < in_leaf) {
            leaf_keys[slot] = sorted_keys[start + s];
            leaf_values[slot] = sorted_values[start + s];
        } else {
            leaf_keys[slot] = max_key;
            leaf_values[slot] = 0;
        }
        if (s == 0)
            leaf_rank[li] = start;
        if (slot == 0)
            leaf_rank[n_leaves] = n;
    }
}

/* One thread per key slot of the internal nodes [first, end): separator j-1 = the smallest key under
 * child j, padding the maximum; node_min of each node = that of its first child. Children are leaves
 * (their first slot) or the internal nodes of the level below (node_min). */
template <typename K>
__global__ void level_kernel(K *keys, const uint32_t *first_child, uint64_t *node_min, uint64_t first,
                             uint64_t end, uint32_t fanout_shift, uint64_t n_internal, uint32_t leaf_shift,
                             bool children_are_leaves)
{
    const uint64_t F = 1ull << fanout_shift;
    const uint64_t leaf_base = n_internal << fanout_shift;
    const K max_key = (K)~(K)0;
    GRID_STRIDE(idx, (end - first) << fanout_shift)
    {
        const uint64_t p = first + (idx >> fanout_shift), s = idx & (F - 1);
        const uint64_t child = first_child[p], c = first_child[p + 1] - child;
#define CHILD_MIN(node)                                                                             \
    (children_are_leaves ? (uint64_t)keys[leaf_base + (((node) - n_internal) << leaf_shift)] : node_min[node])
        keys[(p << fanout_shift) + s] = s + 1 < c ? (K)CHILD_MIN(child + s + 1) : max_key;
        if (s == 0)
            node_min[p] = CHILD_MIN(child);
#undef CHILD_MIN
    }
}

uint32_t log2_of(uint32_t x)
{
    uint32_t s = 0;
    while ((1u << s) < x)
        s++;
    return s;
}

template <typename K>
cudaError_t sort_pairs(void *keys[2], uint32_t *positions[2], uint64_t count, void *temp, size_t temp_bytes,
                       int *current, cudaStream_t stream)
{
    cub::DoubleBuffer<K> k((K *)keys[*current], (K *)keys[1 - *current]);
    cub::DoubleBuffer<uint32_t> v(positions[*current], positions[1 - *current]);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(temp, temp_bytes, k, v, (int64_t)count, 0,
                                                    (int)(sizeof(K) * 8), stream);
    if (e == cudaSuccess)
        *current = k.Current() == (K *)keys[*current] ? *current : 1 - *current;
    return e;
}

template <typename K>
cudaError_t layout(const kr_tree *t, const K *sorted_keys, const K *sorted_values, K *keys, K *leaf_values,
                   const uint32_t *first_child, uint64_t *leaf_rank, uint64_t *node_min, cudaStream_t stream)
{
    const uint32_t leaf_shift = log2_of(t->leaf_size), fanout_shift = log2_of(t->fanout);
    leaf_kernel<K><<<blocks_for(t->n_leaves * t->leaf_size), KR_GPU_THREADS, 0, stream>>>(
        sorted_keys, sorted_values, keys + t->n_internal * t->fanout, leaf_values, leaf_rank, t->n_keys,
        t->n_leaves, leaf_shift);
    cudaError_t e = cudaGetLastError();
    for (uint32_t l = t->height - 1; e == cudaSuccess && l-- > 0;) {
        const uint64_t first = t->level_start[l], end = t->level_start[l + 1];
        level_kernel<K><<<blocks_for((end - first) * t->fanout), KR_GPU_THREADS, 0, stream>>>(
            keys, first_child, node_min, first, end, fanout_shift, t->n_internal, leaf_shift, l + 2 == t->height);
        e = cudaGetLastError();
    }
    return e;
}

} // namespace

extern "C" cudaError_t kr_gpu_temp_bytes(uint32_t key_bits, uint64_t count, size_t *bytes_out)
{
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e;
    if (key_bits == 32) {
        cub::DoubleBuffer<uint32_t> k(NULL, NULL), v(NULL, NULL);
        e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, k, v, (int64_t)count, 0, 32);
    } else {
        cub::DoubleBuffer<uint64_t> k(NULL, NULL);
        cub::DoubleBuffer<uint32_t> v(NULL, NULL);
        e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, k, v, (int64_t)count, 0, 64);
    }
    if (e == cudaSuccess)
        e = cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (uint32_t *)NULL, (uint32_t *)NULL, (int64_t)count + 1);
    *bytes_out = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    return e;
}

extern "C" cudaError_t kr_gpu_iota32(uint32_t *positions, uint64_t count, cudaStream_t stream)
{
    iota_kernel<<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>(positions, count);
    return cudaGetLastError();
}

extern "C" cudaError_t kr_gpu_sort_pairs(uint32_t key_bits, void *keys[2], uint32_t *positions[2], uint64_t count,
                                         void *temp, size_t temp_bytes, int *current, cudaStream_t stream)
{
    if (count < 2)
        return cudaSuccess;
    return key_bits == 32 ? sort_pairs<uint32_t>(keys, positions, count, temp, temp_bytes, current, stream)
                          : sort_pairs<uint64_t>(keys, positions, count, temp, temp_bytes, current, stream);
}

extern "C" cudaError_t kr_gpu_gather_values(uint32_t key_bits, const void *values_in, const uint32_t *positions,
                                            void *values_out, uint64_t count, cudaStream_t stream)
{
    if (count == 0)
        return cudaSuccess;
    if (key_bits == 32)
        gather_kernel<uint32_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>(
            (const uint32_t *)values_in, positions, (uint32_t *)values_out, count);
    else
        gather_kernel<uint64_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>(
            (const uint64_t *)values_in, positions, (uint64_t *)values_out, count);
    return cudaGetLastError();
}

extern "C" cudaError_t kr_gpu_find_order(uint32_t key_bits, const void *keys, uint64_t count,
                                         unsigned long long *result, cudaStream_t stream)
{
    init_order_kernel<uint32_t><<<1, 1, 0, stream>>>(result, count);
    if (count >= 2) {
        if (key_bits == 32)
            order_kernel<uint32_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>((const uint32_t *)keys, count,
                                                                                     result);
        else
            order_kernel<uint64_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>((const uint64_t *)keys, count,
                                                                                     result);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t kr_gpu_dedupe(uint32_t key_bits, const void *keys, const void *values, uint64_t count,
                                     bool keep_last, uint32_t *offsets, void *temp, size_t temp_bytes,
                                     void *keys_out, void *values_out, cudaStream_t stream)
{
    if (key_bits == 32)
        keep_flags_kernel<uint32_t><<<blocks_for(count + 1), KR_GPU_THREADS, 0, stream>>>((const uint32_t *)keys,
                                                                                         count, keep_last, offsets);
    else
        keep_flags_kernel<uint64_t><<<blocks_for(count + 1), KR_GPU_THREADS, 0, stream>>>((const uint64_t *)keys,
                                                                                         count, keep_last, offsets);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) /* in place: CUB's scans allow d_in == d_out */
        e = cub::DeviceScan::ExclusiveSum(temp, temp_bytes, offsets, offsets, (int64_t)count + 1, stream);
    if (e != cudaSuccess || count == 0)
        return e;
    if (key_bits == 32)
        scatter_kernel<uint32_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>(
            (const uint32_t *)keys, (const uint32_t *)values, count, keep_last, offsets, (uint32_t *)keys_out,
            (uint32_t *)values_out);
    else
        scatter_kernel<uint64_t><<<blocks_for(count), KR_GPU_THREADS, 0, stream>>>(
            (const uint64_t *)keys, (const uint64_t *)values, count, keep_last, offsets, (uint64_t *)keys_out,
            (uint64_t *)values_out);
    return cudaGetLastError();
}

extern "C" cudaError_t kr_gpu_layout(const kr_tree *shape, const void *sorted_keys, const void *sorted_values,
                                     void *keys, void *leaf_values, const uint32_t *first_child,
                                     uint64_t *leaf_rank, uint64_t *node_min, cudaStream_t stream)
{
    if (shape->key_bits == 32)
        return layout<uint32_t>(shape, (const uint32_t *)sorted_keys, (const uint32_t *)sorted_values,
                                (uint32_t *)keys, (uint32_t *)leaf_values, first_child, leaf_rank, node_min, stream);
    return layout<uint64_t>(shape, (const uint64_t *)sorted_keys, (const uint64_t *)sorted_values, (uint64_t *)keys,
                            (uint64_t *)leaf_values, first_child, leaf_rank, node_min, stream);
}
