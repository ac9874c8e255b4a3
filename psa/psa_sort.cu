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
                                           (int64_t)n, begin, end, stream);
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
