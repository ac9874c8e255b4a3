// Session 26 probe: what the H100 machine's driver says about pageable memory access, and what a
// pointer classification costs with and without the allocation's range (cuPointerGetAttributes).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef CUresult (*attrs_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
int main()
{
    int n = 0; cudaGetDeviceCount(&n);
    int pma = -1, pmah = -1, cma = -1, dhr = -1;
    cudaDeviceGetAttribute(&pma, cudaDevAttrPageableMemoryAccess, 0);
    cudaDeviceGetAttribute(&pmah, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0);
    cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, 0);
    cudaDeviceGetAttribute(&dhr, cudaDevAttrDirectManagedMemAccessFromHost, 0);
    int drv = 0; cudaDriverGetVersion(&drv);
    printf("devices %d pageableMemoryAccess %d usesHostPageTables %d concurrentManaged %d directManagedFromHost %d driver %d\n",
           n, pma, pmah, cma, dhr, drv);
    void *fn = NULL; cudaDriverEntryPointQueryResult q;
    cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &fn, 12000, cudaEnableDefault, &q);
    attrs_fn f = (attrs_fn)fn;
    void *d = NULL; cudaMalloc(&d, 1 << 26);
    void *h = malloc(1 << 20);
    const char *base = (const char *)d + 4096;
    for (int rep = 0; rep < 3; rep++) {
        unsigned type = 0, managed = 0; int ord = -1; CUdeviceptr start = 0; size_t size = 0;
        CUpointer_attribute w3[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void *d3[3] = {&type, &managed, &ord};
        CUpointer_attribute w5[5] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
        void *d5[5] = {&type, &managed, &ord, &start, &size};
        const int N = 10000;
        double t0 = now();
        for (int i = 0; i < N; i++) f(3, w3, d3, (CUdeviceptr)(base + (i & 1023)));
        double t1 = now();
        for (int i = 0; i < N; i++) f(5, w5, d5, (CUdeviceptr)(base + (i & 1023)));
        double t2 = now();
        for (int i = 0; i < N; i++) f(3, w3, d3, (CUdeviceptr)((char *)h + (i & 1023)));
        double t3 = now();
        printf("rep %d: 3 attrs device %.3f us, 5 attrs %.3f us (start %p size %zu, alloc %p), 3 attrs pageable %.3f us\n", rep,
               (t1 - t0) / N, (t2 - t1) / N, (void *)start, size, d, (t3 - t2) / N);
    }
    return 0;
}
