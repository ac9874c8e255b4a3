/* ptr_cost.cu — session 11: what one cudaPointerGetAttributes costs (host clock, median of 2001
 * calls) on a device pointer, a pinned and a pageable one, with 1, 64 and 512 other device
 * allocations live — bench_versus holds dozens where small_call (session 10) held three, and its
 * NULL-config row of 2^10 queries is 1.2 µs slower than its explicit-memory row. */
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

static double median_us(const void *p)
{
    std::vector<double> t;
    cudaPointerAttributes a;
    for (int i = 0; i < 2001; i++) {
        auto t0 = std::chrono::steady_clock::now();
        cudaPointerGetAttributes(&a, p);
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    cudaFree(0);
    std::vector<void *> others;
    void *d, *pinned;
    cudaMalloc(&d, 1 << 20);
    cudaMallocHost(&pinned, 1 << 20);
    void *pageable = malloc(1 << 20);
    for (int n : {1, 64, 512}) {
        while ((int)others.size() < n) {
            void *p;
            if (cudaMalloc(&p, (size_t)(1 + others.size() % 7) << 20) != cudaSuccess)
                return 1;
            others.push_back(p);
        }
        printf("%4d other allocations: device %.3f us, pinned %.3f us, pageable %.3f us, device+offset %.3f us\n", n,
               median_us(d), median_us(pinned), median_us(pageable), median_us((char *)others[n / 2] + 4096));
    }
    return 0;
}
