// Session 17: what a pointer classification costs on the host, by driver query shape (ns a call).
// Build: nvcc -O2 -o ptr_probe ptr_probe.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <chrono>
#include <vector>
#include <algorithm>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
template <typename F> double per_call_ns(F f, int n = 200000)
{
    std::vector<double> reps;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        for (int i = 0; i < n; i++) f(i);
        reps.push_back((now() - t0) / n * 1e9);
    }
    std::sort(reps.begin(), reps.end());
    return reps[3];
}
int main()
{
    cudaFree(0);
    const int K = 8;
    void *dev[K], *pinned, *managed, *pageable = malloc(1 << 20);
    for (int k = 0; k < K; k++) cudaMalloc(&dev[k], (1 << 20) * (k + 1));
    cudaMallocHost(&pinned, 1 << 20);
    cudaMallocManaged(&managed, 1 << 20);
    volatile unsigned sink = 0;
    CUpointer_attribute three[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    auto attrs3 = [&](const void *p) {
        unsigned type = 0, man = 0; int ord = -1; void *d[3] = {&type, &man, &ord};
        cuPointerGetAttributes(3, three, d, (CUdeviceptr)p); sink += type + man + ord;
    };
    auto attrs1 = [&](const void *p) {
        unsigned type = 0; void *d[1] = {&type};
        cuPointerGetAttributes(1, three, d, (CUdeviceptr)p); sink += type;
    };
    auto attr_single = [&](const void *p) {
        unsigned type = 0; cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p); sink += type;
    };
    printf("device, same pointer:   3 attrs %.1f ns, 1 attr %.1f, cuPointerGetAttribute %.1f\n",
           per_call_ns([&](int) { attrs3(dev[0]); }), per_call_ns([&](int) { attrs1(dev[0]); }),
           per_call_ns([&](int) { attr_single(dev[0]); }));
    printf("device, 8 pointers:     3 attrs %.1f ns, 1 attr %.1f, cuPointerGetAttribute %.1f\n",
           per_call_ns([&](int i) { attrs3(dev[i & 7]); }), per_call_ns([&](int i) { attrs1(dev[i & 7]); }),
           per_call_ns([&](int i) { attr_single(dev[i & 7]); }));
    printf("pageable:               3 attrs %.1f ns, 1 attr %.1f\n", per_call_ns([&](int) { attrs3(pageable); }),
           per_call_ns([&](int) { attrs1(pageable); }));
    printf("pinned:                 3 attrs %.1f ns; managed 3 attrs %.1f\n", per_call_ns([&](int) { attrs3(pinned); }),
           per_call_ns([&](int) { attrs3(managed); }));
    cudaPointerAttributes a;
    printf("cudaPointerGetAttributes device %.1f ns\n",
           per_call_ns([&](int i) { cudaPointerGetAttributes(&a, dev[i & 7]); sink += a.type; }));
    CUcontext c;
    printf("cuCtxGetCurrent %.1f ns, cudaGetDevice %.1f ns\n", per_call_ns([&](int) { cuCtxGetCurrent(&c); sink += (size_t)c & 1; }),
           per_call_ns([&](int) { int d; cudaGetDevice(&d); sink += d; }));
    CUdeviceptr base; size_t size;
    printf("cuMemGetAddressRange %.1f ns\n",
           per_call_ns([&](int i) { cuMemGetAddressRange(&base, &size, (CUdeviceptr)dev[i & 7]); sink += size & 1; }));
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    printf("mutex lock+unlock %.1f ns\n", per_call_ns([&](int) { pthread_mutex_lock(&m); sink++; pthread_mutex_unlock(&m); }));
    unsigned type = 0;
    cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)managed);
    printf("managed memory's MEMORY_TYPE: %u (host %d device %d unified %d)\n", type, CU_MEMORYTYPE_HOST,
           CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_UNIFIED);
    return sink == 12345;
}
