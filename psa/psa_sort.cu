/* psa_sort.cu — the PSA window sort: CUB radix sort of (key, position) pairs on the bits chosen by
 * psa_choose_bits, the position sequence it sorts, and the CUB exclusive scan the range-collect
 * pipeline uses for its offsets. Device-wide CUB calls with two-phase temporary storage. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#define HARMONIA_PSA_CUDA 1
extern "C" {
#include "psa/psa.h"
}

template <typename K>
static cudaError_t sort_pairs(void *temp, size_t *temp_bytes, const void *keys_in, void *keys_out,
                              const uint32_t *positions_in, uint32_t *positions_out, uint32_t n,
                              psa_bits bits, cudaStream_t stream)
{
    /* an empty bit range still sorts (as a copy) so that the search sees keys_out/positions_out */
    int begin = (int)bits.begin_bit, end = (int)bits.end_bit;
    if (end <= begin) {
        begin = 0;
        end = 1;
    }
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, static_cast<const K *>(keys_in),
                                           static_cast<K *>(keys_out), positions_in, positions_out,
                                           n, begin, end, stream); /* 32-bit n: 32-bit offsets in CUB */
}

extern "C" cudaError_t psa_sort_temp_bytes(uint32_t key_bits, uint32_t max_window, size_t *bytes_out)
{
    psa_bits all = {0, key_bits};
    *bytes_out = 0;
    return key_bits == 32
               ? sort_pairs<uint32_t>(NULL, bytes_out, NULL, NULL, NULL, NULL, max_window, all, 0)
               : sort_pairs<uint64_t>(NULL, bytes_out, NULL, NULL, NULL, NULL, max_window, all, 0);
}

extern "C" cudaError_t psa_sort_window(uint32_t key_bits, void *temp, size_t temp_bytes, const void *keys_in,
                                       void *keys_out, const uint32_t *positions_in, uint32_t *positions_out,
                                       uint32_t n, psa_bits bits, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return key_bits == 32 ? sort_pairs<uint32_t>(temp, &temp_bytes, keys_in, keys_out, positions_in,
                                                 positions_out, n, bits, stream)
                          : sort_pairs<uint64_t>(temp, &temp_bytes, keys_in, keys_out, positions_in,
                                                 positions_out, n, bits, stream);
}

static __global__ void iota_kernel(uint32_t *positions, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        positions[i] = i;
}

extern "C" cudaError_t psa_fill_iota(uint32_t *positions, uint32_t n, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    unsigned blocks = (n + 255) / 256;
    if (blocks > 65535)
        blocks = 65535;
    iota_kernel<<<blocks, 256, 0, stream>>>(positions, n);
    return cudaGetLastError();
}

/* Bits of a packed (position << 1 | found) word that hold positions below n. */
static int packed_end_bit(uint32_t n)
{
    int bits = 1;
    while (bits < 32 && (1ull << bits) < (uint64_t)n)
        bits++;
    return 1 + bits;
}

template <typename K>
static cudaError_t restore_sort(void *temp, size_t *temp_bytes, const uint32_t *packed_in, uint32_t *packed_out,
                                const void *values_in, void *values_out, uint32_t n, cudaStream_t stream)
{
    int end = packed_end_bit(n), begin = 1 + PSA_RESTORE_LOCAL_BITS;
    if (begin >= end)
        begin = end - 1;
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, packed_in, packed_out, static_cast<const K *>(values_in),
                                           static_cast<K *>(values_out), n, begin, end, stream);
}

extern "C" cudaError_t psa_restore_temp_bytes(uint32_t key_bits, uint32_t max_window, size_t *bytes_out)
{
    *bytes_out = 0;
    return key_bits == 32 ? restore_sort<uint32_t>(NULL, bytes_out, NULL, NULL, NULL, NULL, max_window, 0)
                          : restore_sort<uint64_t>(NULL, bytes_out, NULL, NULL, NULL, NULL, max_window, 0);
}

extern "C" cudaError_t psa_restore_sort(uint32_t key_bits, void *temp, size_t temp_bytes, const uint32_t *packed_in,
                                        uint32_t *packed_out, const void *values_in, void *values_out, uint32_t n,
                                        cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return key_bits == 32
               ? restore_sort<uint32_t>(temp, &temp_bytes, packed_in, packed_out, values_in, values_out, n, stream)
               : restore_sort<uint64_t>(temp, &temp_bytes, packed_in, packed_out, values_in, values_out, n, stream);
}

template <typename K>
static __global__ void restore_scatter_kernel(const uint32_t *__restrict__ packed, const K *__restrict__ values,
                                              uint32_t n, K *__restrict__ values_out, uint8_t *__restrict__ found_out)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t word = packed[i], position = word >> 1;
        values_out[position] = values[i];
        found_out[position] = (uint8_t)(word & 1u);
    }
}

extern "C" cudaError_t psa_restore_scatter(uint32_t key_bits, const uint32_t *packed, const void *values, uint32_t n,
                                           void *values_out, uint8_t *found_out, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    unsigned blocks = (n + 255) / 256;
    if (blocks > (1u << 20))
        blocks = 1u << 20;
    if (key_bits == 32)
        restore_scatter_kernel<uint32_t><<<blocks, 256, 0, stream>>>(packed, (const uint32_t *)values, n,
                                                                      (uint32_t *)values_out, found_out);
    else
        restore_scatter_kernel<uint64_t><<<blocks, 256, 0, stream>>>(packed, (const uint64_t *)values, n,
                                                                      (uint64_t *)values_out, found_out);
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
