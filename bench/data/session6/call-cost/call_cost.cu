// call_cost.cu — where a small device-array lookup's fixed cost goes (issue 11, small batches).
// Times, median of 2000 calls each, wall clock around the whole call on the legacy stream (as
// bench_versus does): Harmonia's lookup of 2^10 device queries (NULL config; memory = DEVICE), a bare
// kernel launch + sync with a small and with a 2.2 KiB parameter block, the API calls alone.
// Build: nvcc -O2 -arch=sm_90 -I../../../../include call_cost.cu -L<dir of libharmonia.so> -lharmonia
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
#include <vector>
#include "harmonia.h"

struct big { unsigned char bytes[2240]; };
__global__ void k_small(const unsigned long long *q, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = q[i] + 1;
}
__global__ void k_big(const __grid_constant__ big b, const unsigned long long *q, unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = q[i] + b.bytes[i % 2240];
}
template <class F> static double median_us(F f, int reps = 2000)
{
    std::vector<double> t(reps);
    for (int w = 0; w < 200; w++) f();
    for (int r = 0; r < reps; r++) {
        auto a = std::chrono::steady_clock::now();
        f();
        auto b = std::chrono::steady_clock::now();
        t[r] = std::chrono::duration<double, std::micro>(b - a).count();
    }
    std::sort(t.begin(), t.end());
    return t[reps / 2];
}
int main()
{
    const uint64_t n = 1u << 20, nq = 1024;
    std::vector<uint64_t> keys(n), values(n), q(nq);
    for (uint64_t i = 0; i < n; i++) { keys[i] = i * 7 + 3; values[i] = i; }
    for (uint64_t i = 0; i < nq; i++) q[i] = keys[(i * 2654435761u) % n];
    harmonia_build_config bc; harmonia_build_config_init(&bc); bc.key_bits = 64;
    harmonia_tree *t = nullptr;
    if (harmonia_build(&bc, keys.data(), values.data(), n, &t) != HARMONIA_OK) { printf("build failed\n"); return 1; }
    if (harmonia_device_upload(t) != HARMONIA_OK) { printf("upload failed: %s\n", harmonia_last_error(t)); return 1; }
    unsigned long long *d_q, *d_v; uint8_t *d_f;
    cudaMalloc(&d_q, nq * 8); cudaMalloc(&d_v, nq * 8); cudaMalloc(&d_f, nq);
    cudaMemcpy(d_q, q.data(), nq * 8, cudaMemcpyHostToDevice);
    harmonia_query_config dev; harmonia_query_config_init(&dev); dev.memory = HARMONIA_MEMORY_DEVICE;
    big b = {};
    int ok = 1;
    printf("harmonia_lookup 2^10, NULL config       %.2f us\n", median_us([&] { ok &= harmonia_lookup(t, nullptr, d_q, nq, d_v, d_f) == HARMONIA_OK; }));
    printf("harmonia_lookup 2^10, memory = DEVICE   %.2f us\n", median_us([&] { ok &= harmonia_lookup(t, &dev, d_q, nq, d_v, d_f) == HARMONIA_OK; }));
    printf("bare launch (small params) + sync(0)    %.2f us\n", median_us([&] { k_small<<<4, 256>>>(d_q, d_v, nq); cudaStreamSynchronize(0); }));
    printf("bare launch (2.2 KiB params) + sync(0)  %.2f us\n", median_us([&] { k_big<<<4, 256>>>(b, d_q, d_v, nq); cudaStreamSynchronize(0); }));
    printf("launch (small) alone                    %.2f us\n", median_us([&] { k_small<<<4, 256>>>(d_q, d_v, nq); }, 500));
    cudaDeviceSynchronize();
    printf("launch (2.2 KiB) alone                  %.2f us\n", median_us([&] { k_big<<<4, 256>>>(b, d_q, d_v, nq); }, 500));
    cudaDeviceSynchronize();
    printf("cudaStreamSynchronize(0), idle          %.2f us\n", median_us([&] { cudaStreamSynchronize(0); }));
    printf("cudaGetDevice                           %.2f us\n", median_us([&] { int d; cudaGetDevice(&d); }));
    printf("cudaPointerGetAttributes                %.2f us\n", median_us([&] { cudaPointerAttributes a; cudaPointerGetAttributes(&a, d_q); }));
    printf("cuPointerGetAttribute (memory type)     %.2f us\n", median_us([&] { unsigned int m; cuPointerGetAttribute(&m, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)d_q); }));
    printf("cudaGetLastError                        %.2f us\n", median_us([&] { cudaGetLastError(); }));
    harmonia_free(t);
    /* the descent's latency: the same call on trees of 2^10 .. 2^26 keys (one more level every 4
     * bits at F = 16), and 1 query against 1024 */
    for (int lg = 10; lg <= 26; lg += 4) {
        const uint64_t m = 1ull << lg;
        std::vector<uint64_t> k2(m), v2(m);
        for (uint64_t i = 0; i < m; i++) { k2[i] = i * 7 + 3; v2[i] = i; }
        for (uint64_t i = 0; i < nq; i++) q[i] = k2[(i * 2654435761u) % m];
        cudaMemcpy(d_q, q.data(), nq * 8, cudaMemcpyHostToDevice);
        harmonia_tree *t2 = nullptr;
        if (harmonia_build(&bc, k2.data(), v2.data(), m, &t2) != HARMONIA_OK || harmonia_device_upload(t2) != HARMONIA_OK) { printf("tree 2^%d failed\n", lg); return 1; }
        harmonia_tree_info info; harmonia_info(t2, &info);
        double a = median_us([&] { ok &= harmonia_lookup(t2, &dev, d_q, nq, d_v, d_f) == HARMONIA_OK; });
        double one = median_us([&] { ok &= harmonia_lookup(t2, &dev, d_q, 1, d_v, d_f) == HARMONIA_OK; });
        printf("tree 2^%d keys (height %u): 1024 queries %.2f us, 1 query %.2f us\n", lg, (unsigned)info.height, a, one);
        harmonia_free(t2);
    }
    printf("results ok: %d\n", ok);
    return 0;
}
