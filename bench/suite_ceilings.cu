/* suite_ceilings.cu — the machine's ceilings, measured in the same run as the lookups: device-to-
 * device copy bandwidth, random 8-byte gathers over an array of a given size (the size of a tree,
 * or one that fits in L2), and the random scatter that restores query order; the gather and copy
 * also on the CPU for --quick. Host <-> device (PCIe) copies are measured beside the host-to-host
 * lookups in bench_suite.cu. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/suite.h"

#define CEIL_THREADS 256u

static unsigned ceiling_grid(void)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return (unsigned)(sms > 0 ? sms : 1) * 8u; /* 8 blocks of 256 = 2048 threads per SM: full occupancy */
}

timing ceiling_copy(uint64_t bytes, uint32_t runs)
{
    void *src = suite_device_alloc(bytes), *dst = suite_device_alloc(bytes);
    CK(cudaMemset(src, 0x5a, bytes));
    timing t = time_gpu(runs, [&] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0)); });
    suite_device_free(src);
    suite_device_free(dst);
    return t;
}

/* Four independent random loads per step, so that each thread keeps several in flight; the XOR of
 * what was loaded is stored only in a case that never happens, so no load is optimised away and
 * almost nothing is written. */
__global__ void __launch_bounds__(CEIL_THREADS)
gather_kernel(const uint64_t *__restrict__ array, uint64_t words, uint64_t loads, uint64_t seed, uint64_t *sink)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    uint64_t acc = 0;
    for (; i + 3 * stride < loads; i += 4 * stride) {
        const uint64_t a0 = __ldg(array + sx_below(sx_hash(seed, i), words));
        const uint64_t a1 = __ldg(array + sx_below(sx_hash(seed, i + stride), words));
        const uint64_t a2 = __ldg(array + sx_below(sx_hash(seed, i + 2 * stride), words));
        const uint64_t a3 = __ldg(array + sx_below(sx_hash(seed, i + 3 * stride), words));
        acc ^= a0 ^ a1 ^ a2 ^ a3;
    }
    for (; i < loads; i += stride)
        acc ^= __ldg(array + sx_below(sx_hash(seed, i), words));
    if (acc == 0x0123456789abcdefull)
        sink[0] = acc;
}

timing ceiling_gather(uint64_t array_bytes, uint64_t loads, uint32_t runs)
{
    const uint64_t words = array_bytes / 8;
    uint64_t *array = (uint64_t *)suite_device_alloc(words * 8);
    uint64_t *sink = (uint64_t *)suite_device_alloc(8);
    CK(cudaMemset(array, 0x3c, words * 8));
    const unsigned grid = ceiling_grid();
    uint64_t seed = 1;
    timing t = time_gpu(runs, [&] {
        gather_kernel<<<grid, CEIL_THREADS>>>(array, words, loads, seed++, sink);
    });
    suite_device_free(array);
    suite_device_free(sink);
    return t;
}

/* A bijection of [0, 2^bits): an odd multiplier, an offset and xor-shifts, each invertible mod 2^bits. */
__device__ __forceinline__ uint64_t permute_bits(uint64_t i, uint32_t bits)
{
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t x = (i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) & mask;
    x ^= x >> (bits / 2 + 1);
    x = (x * 0xD6E8FEB86659FD93ull) & mask;
    x ^= x >> (bits / 2 + 1);
    return x;
}

__global__ void __launch_bounds__(CEIL_THREADS)
scatter_kernel(const uint64_t *__restrict__ in, uint64_t n, uint32_t bits, uint64_t *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        out[permute_bits(i, bits)] = in[i];
}

timing ceiling_scatter(uint64_t n, uint32_t runs)
{
    uint32_t bits = 0;
    while ((1ull << bits) < n)
        bits++;
    n = 1ull << bits; /* a power of two: the permutation is one of [0, n) */
    uint64_t *in = (uint64_t *)suite_device_alloc(n * 8), *out = (uint64_t *)suite_device_alloc(n * 8);
    CK(cudaMemset(in, 0x11, n * 8));
    uint64_t blocks = (n + CEIL_THREADS - 1) / CEIL_THREADS;
    if (blocks > (1u << 20))
        blocks = 1u << 20;
    timing t = time_gpu(runs, [&] { scatter_kernel<<<(unsigned)blocks, CEIL_THREADS>>>(in, n, bits, out); });
    suite_device_free(in);
    suite_device_free(out);
    return t;
}

timing ceiling_gather_host(uint64_t array_bytes, uint64_t loads, uint32_t runs)
{
    const uint64_t words = array_bytes / 8;
    uint64_t *array = (uint64_t *)malloc(words * 8);
    memset(array, 0x3c, words * 8);
    uint64_t seed = 1;
    volatile uint64_t sink = 0;
    timing t = time_host(runs, [&] {
        uint64_t acc = 0;
        const uint64_t s = seed++;
#pragma omp parallel for reduction(^ : acc) schedule(static)
        for (int64_t i = 0; i < (int64_t)loads; i++)
            acc ^= array[sx_below(sx_hash(s, (uint64_t)i), words)];
        sink = acc;
    });
    (void)sink;
    free(array);
    return t;
}

timing ceiling_copy_host(uint64_t bytes, uint32_t runs)
{
    char *src = (char *)malloc(bytes), *dst = (char *)malloc(bytes);
    memset(src, 0x5a, bytes);
    memset(dst, 0, bytes);
    timing t = time_host(runs, [&] {
        const uint64_t chunk = 1u << 20, chunks = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < (int64_t)chunks; c++) {
            const uint64_t off = (uint64_t)c * chunk;
            memcpy(dst + off, src + off, bytes - off < chunk ? bytes - off : chunk);
        }
    });
    free(src);
    free(dst);
    return t;
}
