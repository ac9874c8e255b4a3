/* launch_cost.cu — session 10: what a small call costs on the host's side. (1) A launch whose
 * parameters are 2.2 KiB (ntg_view with its top cut) against one of 96 bytes, each followed by a
 * stream synchronisation, as a 2^10-query lookup (32 blocks of 256 threads, trivial work); (2) the
 * pointer classification: cuPointerGetAttributes of 3 attributes, and cudaPointerGetAttributes.
 * Host clock over 20 rounds of 500 calls, median round. Build: nvcc -O2 -arch=sm_90 -o launch_cost
 * launch_cost.cu -lcuda */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdint.h>
#include <algorithm>
#include <chrono>
#include <vector>

struct big_params {
    const void *a, *b, *c, *d;
    uint64_t n1, n2, n3, n4;
    uint32_t w, f, l, h;
    bool flag;
    uint32_t top_entries;
    uint32_t top[512];
};
struct small_params {
    const void *a, *b, *c, *d;
    uint64_t n1, n2, n3, n4;
    uint32_t w, f, l, h;
    bool flag;
    uint32_t top_entries;
};

__global__ void big_kernel(const __grid_constant__ big_params p, const uint64_t *q, uint64_t n, uint64_t *out, uint8_t *f)
{
    const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = q[i] + p.top[q[i] % 512];
        f[i] = 1;
    }
}
__global__ void small_kernel(const __grid_constant__ small_params p, const uint64_t *q, uint64_t n, uint64_t *out, uint8_t *f)
{
    const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = q[i] + p.top_entries;
        f[i] = 1;
    }
}

template <typename F> double median_us(F &&call)
{
    std::vector<double> rounds;
    for (int r = 0; r < 21; r++) {
        const int calls = 500;
        auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; c++)
            call();
        auto t1 = std::chrono::steady_clock::now();
        rounds.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

int main()
{
    const uint64_t n = 8192; /* 2^10 queries at G = 8 */
    uint64_t *q, *out;
    uint8_t *f;
    cudaMalloc(&q, n * 8);
    cudaMalloc(&out, n * 8);
    cudaMalloc(&f, n);
    cudaMemset(q, 0, n * 8);
    big_params bp = {};
    small_params sp = {};
    bp.top_entries = 273;
    sp.top_entries = 273;
    printf("sizeof big %zu small %zu\n", sizeof bp, sizeof sp);
    for (int w = 0; w < 1000; w++) {
        big_kernel<<<32, 256>>>(bp, q, n, out, f);
        small_kernel<<<32, 256>>>(sp, q, n, out, f);
    }
    cudaDeviceSynchronize();
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int rep = 0; rep < 3; rep++) {
        printf("launch+sync, default stream: big %.2f us, small %.2f us\n",
               median_us([&] { big_kernel<<<32, 256>>>(bp, q, n, out, f); cudaStreamSynchronize(0); }),
               median_us([&] { small_kernel<<<32, 256>>>(sp, q, n, out, f); cudaStreamSynchronize(0); }));
        printf("launch+sync, own stream:     big %.2f us, small %.2f us\n",
               median_us([&] { big_kernel<<<32, 256, 0, s>>>(bp, q, n, out, f); cudaStreamSynchronize(s); }),
               median_us([&] { small_kernel<<<32, 256, 0, s>>>(sp, q, n, out, f); cudaStreamSynchronize(s); }));
        printf("launch only (no sync, 500 queued): big %.2f us, small %.2f us\n",
               median_us([&] { big_kernel<<<32, 256>>>(bp, q, n, out, f); }),
               median_us([&] { small_kernel<<<32, 256>>>(sp, q, n, out, f); }));
        cudaDeviceSynchronize();
    }
    /* the classification */
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    unsigned int type = 0, managed = 0;
    int ordinal = 0;
    void *data[3] = {&type, &managed, &ordinal};
    void *ptrs[3] = {q, out, f};
    printf("3 x cuPointerGetAttributes (3 attributes): %.2f us\n", median_us([&] {
               for (int k = 0; k < 3; k++)
                   cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)ptrs[k]);
           }));
    cudaPointerAttributes pa;
    printf("3 x cudaPointerGetAttributes: %.2f us\n", median_us([&] {
               for (int k = 0; k < 3; k++)
                   cudaPointerGetAttributes(&pa, ptrs[k]);
           }));
    int dev = 0;
    printf("cudaGetDevice: %.3f us\n", median_us([&] { cudaGetDevice(&dev); }));
    printf("cudaGetLastError: %.3f us\n", median_us([&] { (void)cudaGetLastError(); }));
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    printf("cudaEventRecord + cudaStreamWaitEvent: %.3f us\n", median_us([&] { cudaEventRecord(e, 0); cudaStreamWaitEvent(s, e, 0); }));
    cudaDeviceSynchronize();
    return 0;
}
