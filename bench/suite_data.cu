/* suite_data.cu — the suite's data: tree keys of each distribution with their values, query sets
 * and range sets, generated on the device (bijective hashes, CUB radix sort and scan) and, with
 * the same element functions of suite.h, on the host for --quick. */
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "bench/suite.h"

#define DATA_THREADS 256u

static unsigned data_grid(uint64_t n)
{
    uint64_t blocks = (n + DATA_THREADS - 1) / DATA_THREADS;
    if (blocks > (1u << 20))
        blocks = 1u << 20;
    return blocks ? (unsigned)blocks : 1u;
}

#define GRID_STRIDE(i, n)                                                                          \
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (uint64_t)gridDim.x * blockDim.x)

static uint64_t salt_of(uint64_t seed) { return sx_hash(seed, 0x73616c74ull); }

/* --- device kernels --------------------------------------------------------------------------- */

template <typename K> __global__ void uniform_kernel(uint64_t n, uint64_t salt, uint64_t seed, K *keys, K *values)
{
    GRID_STRIDE(i, n)
    {
        keys[i] = gen_uniform_key<K>(i, salt);
        values[i] = gen_value<K>(i, seed);
    }
}

template <typename K> __global__ void dense_kernel(uint64_t n, uint64_t seed, K *keys, K *values)
{
    GRID_STRIDE(i, n)
    {
        keys[i] = (K)(dense_base<K>() + (K)i);
        values[i] = gen_value<K>(i, seed);
    }
}

template <typename K> __global__ void zipf_gap_kernel(uint64_t n, uint64_t seed, uint64_t *gaps)
{
    GRID_STRIDE(i, n)
    gaps[i] = gen_zipf_gap<K>(i, seed);
}

template <typename K>
__global__ void from_prefix_kernel(uint64_t n, uint64_t seed, const uint64_t *prefix, K *keys, K *values)
{
    GRID_STRIDE(i, n)
    {
        keys[i] = (K)(dense_base<K>() + (K)prefix[i]);
        values[i] = gen_value<K>(i, seed);
    }
}

template <typename K>
__global__ void queries_kernel(const K *sorted_keys, uint64_t n, query_spec qs, uint64_t first, uint64_t count,
                               K *queries)
{
    GRID_STRIDE(i, count)
    queries[i] = gen_query<K>(sorted_keys, n, qs, first + i);
}

template <typename K>
__global__ void ranges_kernel(const K *sorted_keys, uint64_t n, uint64_t length, uint64_t seed, uint64_t count, K *lo,
                              K *hi)
{
    GRID_STRIDE(i, count)
    gen_range<K>(sorted_keys, n, length, seed, i, lo + i, hi + i);
}

__global__ void iota_kernel(uint32_t *d, uint64_t n)
{
    GRID_STRIDE(i, n)
    d[i] = (uint32_t)i;
}

/* --- device entry points ---------------------------------------------------------------------- */

void gen_uniform_unsorted_device(uint32_t bits, uint64_t n, uint64_t seed, void *d_keys, void *d_values)
{
    if (bits == 32)
        uniform_kernel<uint32_t><<<data_grid(n), DATA_THREADS>>>(n, salt_of(seed), seed, (uint32_t *)d_keys,
                                                                 (uint32_t *)d_values);
    else
        uniform_kernel<uint64_t><<<data_grid(n), DATA_THREADS>>>(n, salt_of(seed), seed, (uint64_t *)d_keys,
                                                                 (uint64_t *)d_values);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

template <typename K>
static void sort_pairs_typed(uint64_t n, const void *keys_in, const void *values_in, void *keys_out, void *values_out)
{
    size_t temp_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairs(NULL, temp_bytes, (const K *)keys_in, (K *)keys_out, (const K *)values_in,
                                       (K *)values_out, (int64_t)n));
    void *temp = suite_device_alloc(temp_bytes);
    CK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, (const K *)keys_in, (K *)keys_out, (const K *)values_in,
                                       (K *)values_out, (int64_t)n));
    CK(cudaDeviceSynchronize());
    suite_device_free(temp);
}

void sort_pairs_device(uint32_t bits, uint64_t n, const void *d_keys_in, const void *d_values_in, void *d_keys_out,
                       void *d_values_out)
{
    if (bits == 32)
        sort_pairs_typed<uint32_t>(n, d_keys_in, d_values_in, d_keys_out, d_values_out);
    else
        sort_pairs_typed<uint64_t>(n, d_keys_in, d_values_in, d_keys_out, d_values_out);
}

template <typename K> static bool zipf_sorted_device(uint64_t n, uint64_t seed, K *keys, K *values)
{
    uint64_t *gaps = (uint64_t *)suite_device_alloc(n * 8);
    uint64_t *prefix = (uint64_t *)suite_device_alloc(n * 8);
    zipf_gap_kernel<K><<<data_grid(n), DATA_THREADS>>>(n, seed, gaps);
    CK(cudaGetLastError());
    size_t temp_bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(NULL, temp_bytes, gaps, prefix, (int64_t)n));
    void *temp = suite_device_alloc(temp_bytes);
    CK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, gaps, prefix, (int64_t)n));
    uint64_t last = 0;
    CK(cudaMemcpy(&last, prefix + n - 1, 8, cudaMemcpyDeviceToHost));
    const bool fits = last <= (uint64_t)(sx_max_key<K>() - dense_base<K>());
    if (fits) {
        from_prefix_kernel<K><<<data_grid(n), DATA_THREADS>>>(n, seed, prefix, keys, values);
        CK(cudaGetLastError());
    } else {
        fprintf(stderr, "bench_suite: zipf keys overflow the %zu-bit domain (span %llu)\n", sizeof(K) * 8,
                (unsigned long long)last);
    }
    CK(cudaDeviceSynchronize());
    suite_device_free(temp);
    suite_device_free(prefix);
    suite_device_free(gaps);
    return fits;
}

bool gen_sorted_device(uint32_t bits, key_dist dist, uint64_t n, uint64_t seed, void *d_keys, void *d_values)
{
    const size_t kb = bits / 8;
    if (dist == KEYS_UNIFORM) {
        void *unsorted_keys = suite_device_alloc(n * kb), *unsorted_values = suite_device_alloc(n * kb);
        gen_uniform_unsorted_device(bits, n, seed, unsorted_keys, unsorted_values);
        sort_pairs_device(bits, n, unsorted_keys, unsorted_values, d_keys, d_values);
        suite_device_free(unsorted_keys);
        suite_device_free(unsorted_values);
        return true;
    }
    if (dist == KEYS_DENSE) {
        if (bits == 32)
            dense_kernel<uint32_t><<<data_grid(n), DATA_THREADS>>>(n, seed, (uint32_t *)d_keys, (uint32_t *)d_values);
        else
            dense_kernel<uint64_t><<<data_grid(n), DATA_THREADS>>>(n, seed, (uint64_t *)d_keys, (uint64_t *)d_values);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        return true;
    }
    return bits == 32 ? zipf_sorted_device<uint32_t>(n, seed, (uint32_t *)d_keys, (uint32_t *)d_values)
                      : zipf_sorted_device<uint64_t>(n, seed, (uint64_t *)d_keys, (uint64_t *)d_values);
}

void gen_queries_device(uint32_t bits, const void *d_sorted_keys, uint64_t n, const query_spec &qs, uint64_t first,
                        uint64_t count, void *d_queries)
{
    if (bits == 32)
        queries_kernel<uint32_t><<<data_grid(count), DATA_THREADS>>>((const uint32_t *)d_sorted_keys, n, qs, first,
                                                                     count, (uint32_t *)d_queries);
    else
        queries_kernel<uint64_t><<<data_grid(count), DATA_THREADS>>>((const uint64_t *)d_sorted_keys, n, qs, first,
                                                                     count, (uint64_t *)d_queries);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

void gen_ranges_device(uint32_t bits, const void *d_sorted_keys, uint64_t n, uint64_t length, uint64_t seed,
                       uint64_t count, void *d_lo, void *d_hi)
{
    if (bits == 32)
        ranges_kernel<uint32_t><<<data_grid(count), DATA_THREADS>>>((const uint32_t *)d_sorted_keys, n, length, seed,
                                                                    count, (uint32_t *)d_lo, (uint32_t *)d_hi);
    else
        ranges_kernel<uint64_t><<<data_grid(count), DATA_THREADS>>>((const uint64_t *)d_sorted_keys, n, length, seed,
                                                                    count, (uint64_t *)d_lo, (uint64_t *)d_hi);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

void fill_iota_device(uint32_t *d, uint64_t n)
{
    iota_kernel<<<data_grid(n), DATA_THREADS>>>(d, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

/* --- host versions ------------------------------------------------------------------------------ */

template <typename K> static void uniform_host(uint64_t n, uint64_t seed, K *keys, K *values)
{
    const uint64_t salt = salt_of(seed);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++) {
        keys[i] = gen_uniform_key<K>((uint64_t)i, salt);
        values[i] = gen_value<K>((uint64_t)i, seed);
    }
}

void gen_uniform_unsorted_host(uint32_t bits, uint64_t n, uint64_t seed, void *keys, void *values)
{
    if (bits == 32)
        uniform_host<uint32_t>(n, seed, (uint32_t *)keys, (uint32_t *)values);
    else
        uniform_host<uint64_t>(n, seed, (uint64_t *)keys, (uint64_t *)values);
}

template <typename K> static void sort_pairs_host_typed(uint64_t n, K *keys, K *values)
{
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return keys[a] < keys[b]; });
    std::vector<K> k(n), v(n);
    for (uint64_t i = 0; i < n; i++) {
        k[i] = keys[order[i]];
        v[i] = values[order[i]];
    }
    memcpy(keys, k.data(), n * sizeof(K));
    memcpy(values, v.data(), n * sizeof(K));
}

void sort_pairs_host(uint32_t bits, uint64_t n, void *keys, void *values)
{
    if (bits == 32)
        sort_pairs_host_typed<uint32_t>(n, (uint32_t *)keys, (uint32_t *)values);
    else
        sort_pairs_host_typed<uint64_t>(n, (uint64_t *)keys, (uint64_t *)values);
}

template <typename K> static bool sorted_host(key_dist dist, uint64_t n, uint64_t seed, K *keys, K *values)
{
    if (dist == KEYS_UNIFORM) {
        uniform_host<K>(n, seed, keys, values);
        sort_pairs_host_typed<K>(n, keys, values);
        return true;
    }
    if (dist == KEYS_DENSE) {
        for (uint64_t i = 0; i < n; i++) {
            keys[i] = (K)(dense_base<K>() + (K)i);
            values[i] = gen_value<K>(i, seed);
        }
        return true;
    }
    uint64_t prefix = 0;
    for (uint64_t i = 0; i < n; i++) {
        prefix += gen_zipf_gap<K>(i, seed);
        if (prefix > (uint64_t)(sx_max_key<K>() - dense_base<K>())) {
            fprintf(stderr, "bench_suite: zipf keys overflow the %zu-bit domain\n", sizeof(K) * 8);
            return false;
        }
        keys[i] = (K)(dense_base<K>() + (K)prefix);
        values[i] = gen_value<K>(i, seed);
    }
    return true;
}

bool gen_sorted_host(uint32_t bits, key_dist dist, uint64_t n, uint64_t seed, void *keys, void *values)
{
    return bits == 32 ? sorted_host<uint32_t>(dist, n, seed, (uint32_t *)keys, (uint32_t *)values)
                      : sorted_host<uint64_t>(dist, n, seed, (uint64_t *)keys, (uint64_t *)values);
}

template <typename K>
static void queries_host(const K *sorted_keys, uint64_t n, const query_spec &qs, uint64_t first, uint64_t count,
                         K *queries)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)count; i++)
        queries[i] = gen_query<K>(sorted_keys, n, qs, first + (uint64_t)i);
}

void gen_queries_host(uint32_t bits, const void *sorted_keys, uint64_t n, const query_spec &qs, uint64_t first,
                      uint64_t count, void *queries)
{
    if (bits == 32)
        queries_host<uint32_t>((const uint32_t *)sorted_keys, n, qs, first, count, (uint32_t *)queries);
    else
        queries_host<uint64_t>((const uint64_t *)sorted_keys, n, qs, first, count, (uint64_t *)queries);
}

template <typename K>
static void ranges_host(const K *sorted_keys, uint64_t n, uint64_t length, uint64_t seed, uint64_t count, K *lo, K *hi)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)count; i++)
        gen_range<K>(sorted_keys, n, length, seed, (uint64_t)i, lo + i, hi + i);
}

void gen_ranges_host(uint32_t bits, const void *sorted_keys, uint64_t n, uint64_t length, uint64_t seed,
                     uint64_t count, void *lo, void *hi)
{
    if (bits == 32)
        ranges_host<uint32_t>((const uint32_t *)sorted_keys, n, length, seed, count, (uint32_t *)lo, (uint32_t *)hi);
    else
        ranges_host<uint64_t>((const uint64_t *)sorted_keys, n, length, seed, count, (uint64_t *)lo, (uint64_t *)hi);
}
