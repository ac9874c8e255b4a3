// Session 17: how soon a host thread can know that a small kernel is done. A kernel of 32 blocks of
// 256 threads (each thread reads and writes 8 bytes, as a 2^10-query lookup's grid), timed on the
// host from just before its launch until (a) cudaStreamSynchronize returns, (b) a flag in mapped
// pinned memory, written by the grid's last block after a system fence, is seen (then the stream
// synchronised untimed), (c) the flag with cudaStreamQuery every 64 spins. Rounds, median of 7 means.
// Build: nvcc -O2 -arch=sm_90 -o flag_probe flag_probe.cu
#include <cuda_runtime.h>
#include <stdio.h>
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__global__ void work(const unsigned long long *in, unsigned long long *out, unsigned *counter,
                     volatile unsigned *flag, unsigned seq)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * 3 + 1;
    if (!flag)
        return;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(counter, 1) == gridDim.x - 1) {
            *counter = 0;
            __threadfence_system();
            *flag = seq;
        }
    }
}

int main()
{
    const int n = 32 * 256;
    unsigned long long *in, *out;
    unsigned *counter, *flag, *d_flag;
    cudaMalloc(&in, n * 8);
    cudaMalloc(&out, n * 8);
    cudaMemset(in, 1, n * 8);
    cudaMalloc(&counter, 4);
    cudaMemset(counter, 0, 4);
    cudaHostAlloc(&flag, 4, cudaHostAllocMapped);
    *flag = 0;
    cudaHostGetDevicePointer(&d_flag, flag, 0);
    unsigned seq = 0;
    struct variant { const char *name; std::function<void()> f; };
    std::vector<variant> vs = {
        {"launch + cudaStreamSynchronize", [&] { work<<<32, 256>>>(in, out, NULL, NULL, 0); cudaStreamSynchronize(0); }},
        {"launch (with the flag) + cudaStreamSynchronize", [&] { ++seq; work<<<32, 256>>>(in, out, counter, d_flag, seq); cudaStreamSynchronize(0); }},
        {"launch + spin on the flag", [&] {
             ++seq; work<<<32, 256>>>(in, out, counter, d_flag, seq);
             while (*(volatile unsigned *)flag != seq) {}
         }},
        {"launch + spin on the flag, cudaStreamQuery every 64", [&] {
             ++seq; work<<<32, 256>>>(in, out, counter, d_flag, seq);
             for (unsigned k = 1; *(volatile unsigned *)flag != seq; k++)
                 if ((k & 63) == 0 && cudaStreamQuery(0) == cudaSuccess && *(volatile unsigned *)flag == seq) break;
         }},
    };
    for (auto &v : vs) { v.f(); cudaStreamSynchronize(0); }
    std::vector<std::vector<double>> means(vs.size());
    for (int rep = 0; rep < 7; rep++) {
        std::vector<double> sum(vs.size(), 0);
        for (int r = 0; r < 3000; r++)
            for (size_t j = 0; j < vs.size(); j++) {
                const size_t k = (j + r) % vs.size();
                vs[k].f(); cudaStreamSynchronize(0);
                const double t0 = now();
                vs[k].f();
                sum[k] += now() - t0;
                cudaStreamSynchronize(0);
            }
        for (size_t j = 0; j < vs.size(); j++) means[j].push_back(sum[j] / 3000 * 1e6);
    }
    for (size_t j = 0; j < vs.size(); j++) {
        std::sort(means[j].begin(), means[j].end());
        printf("%-52s %7.3f us (%.3f .. %.3f)\n", vs[j].name, means[j][3], means[j][0], means[j][6]);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
