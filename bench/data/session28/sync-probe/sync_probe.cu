// sync_probe.cu — session 28: what a small synchronous call's completion costs, timed as
// bench_versus times a call (an event on stream 0 before, the whole call, an event after, the
// median of R runs each after an untimed call). Variants of the same small kernel (B blocks of 256
// threads, each thread a chain of D dependent loads from a table in L2):
//   sync   : launch + cudaStreamSynchronize (what every method of bench_versus does)
//   flag   : the kernel's last block (an atomic counter) writes a sequence number to mapped pinned
//            host memory after a __threadfence_system; the host spins on it, then returns
//   flag+q : the same, then cudaStreamQuery once (no wait) so the driver sees the stream
// Usage: sync_probe [blocks (4)] [depth (6)] [runs (201)]
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <chrono>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void chain(const uint32_t *table, uint32_t mask, int depth, uint32_t *out, unsigned *counter,
                      volatile unsigned *flag, unsigned seq)
{
    uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u & mask;
    for (int d = 0; d < depth; d++)
        i = table[i] & mask;
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
    if (flag) {
        __syncthreads();
        if (threadIdx.x == 0) {
            __threadfence();
            unsigned done = atomicAdd(counter, 1u);
            if (done == gridDim.x - 1) {
                *counter = 0;
                __threadfence_system();
                *flag = seq;
            }
        }
    }
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 4, depth = argc > 2 ? atoi(argv[2]) : 6, runs = argc > 3 ? atoi(argv[3]) : 201;
    const uint32_t n = 1u << 22, mask = n - 1; // 16 MB table: stays in L2 after the first call
    std::vector<uint32_t> h(n);
    for (uint32_t k = 0; k < n; k++) h[k] = (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 40);
    uint32_t *table, *out; unsigned *counter;
    CK(cudaMalloc(&table, n * 4)); CK(cudaMalloc(&out, (size_t)blocks * 256 * 4)); CK(cudaMalloc(&counter, 4));
    CK(cudaMemcpy(table, h.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(counter, 0, 4));
    unsigned *hflag, *dflag;
    CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); *hflag = 0;
    CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned seq = 0;
    auto call = [&](int mode, cudaStream_t st) {
        if (mode == 0) {
            chain<<<blocks, 256, 0, st>>>(table, mask, depth, out, counter, nullptr, 0);
            CK(cudaGetLastError()); CK(cudaStreamSynchronize(st));
        } else {
            ++seq;
            chain<<<blocks, 256, 0, st>>>(table, mask, depth, out, counter, dflag, seq);
            CK(cudaGetLastError());
            while (*(volatile unsigned *)hflag != seq) { }
            if (mode == 2) { cudaError_t e = cudaStreamQuery(st); if (e != cudaSuccess && e != cudaErrorNotReady) CK(e); }
        }
    };
    const char *names[] = {"sync", "flag", "flag+q"};
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int streamkind = 0; streamkind < 2; streamkind++) {
        cudaStream_t st = streamkind ? s : 0;
        std::vector<double> ev[3], wall[3];
        for (int m = 0; m < 3; m++) call(m, st);
        CK(cudaDeviceSynchronize());
        for (int r = 0; r < runs; r++)
            for (int j = 0; j < 3; j++) {
                int m = (j + r) % 3;
                call(m, st);
                CK(cudaEventRecord(a, 0));
                auto t0 = std::chrono::steady_clock::now();
                call(m, st);
                auto t1 = std::chrono::steady_clock::now();
                CK(cudaEventRecord(b, 0)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                ev[m].push_back(ms * 1000); wall[m].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
        for (int m = 0; m < 3; m++)
            printf("blocks %d depth %d stream %s %-7s events median %.2f us (p10 %.2f p90 %.2f)  host wall median %.2f us\n",
                   blocks, depth, streamkind ? "own" : "legacy", names[m], median(ev[m]),
                   [&]{auto v=ev[m]; std::sort(v.begin(),v.end()); return v[v.size()/10];}(),
                   [&]{auto v=ev[m]; std::sort(v.begin(),v.end()); return v[v.size()*9/10];}(), median(wall[m]));
    }
    // check: the flag path's results equal the sync path's
    std::vector<uint32_t> r1((size_t)blocks * 256), r2(r1.size());
    call(0, s); CK(cudaMemcpy(r1.data(), out, r1.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0, r1.size() * 4)); CK(cudaDeviceSynchronize());
    call(1, s); CK(cudaMemcpy(r2.data(), out, r2.size() * 4, cudaMemcpyDeviceToHost));
    printf("results %s\n", r1 == r2 ? "equal" : "DIFFER");
    return 0;
}
