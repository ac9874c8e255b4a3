/* call_probe.cu — session 17: where a small call's host time goes. A 64-bit tree of 2^24 keys, 2^10
 * queries in device memory; host clock (steady_clock) around: the asynchronous call (returns once
 * its kernel is queued: the work before the launch) with a NULL config and with memory = DEVICE;
 * the synchronous call both ways; an empty kernel's launch alone and with a synchronisation; the
 * classification alone (hm_pointer_where, three pointers). Rounds: every variant once a round, 2000
 * rounds, seven times; the median of each seven's means. */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <functional>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "util/mix.h"

#define CK(x)                                                                                                \
    do {                                                                                                     \
        cudaError_t e_ = (x);                                                                                \
        if (e_ != cudaSuccess) {                                                                             \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)
#define HK(x)                                                                                                \
    do {                                                                                                     \
        if ((x) != HARMONIA_OK) {                                                                            \
            printf("harmonia error %s at %d\n", harmonia_last_error(tree), __LINE__);                       \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

__global__ void empty_kernel(int *p) { if (p && threadIdx.x == 1234567) *p = 1; }

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main()
{
    const uint64_t n = 1ull << 24, nq = 1u << 10;
    std::vector<uint64_t> keys(n), values(n), q(nq);
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = util_mix64(i + 1);
        values[i] = i;
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (uint64_t i = 0; i < nq; i++)
        q[i] = keys[util_mix64(i + 99) % keys.size()];
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = 64;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, keys.data(), values.data(), keys.size(), &tree) != HARMONIA_OK) {
        printf("build: %s\n", harmonia_last_error(NULL));
        return 1;
    }
    void *d_q, *d_v;
    uint8_t *d_f;
    CK(cudaMalloc(&d_q, nq * 8));
    CK(cudaMalloc(&d_v, nq * 8));
    CK(cudaMalloc(&d_f, nq));
    CK(cudaMemcpy(d_q, q.data(), nq * 8, cudaMemcpyHostToDevice));
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.memory = HARMONIA_MEMORY_DEVICE;
    struct variant {
        const char *name;
        std::function<void()> timed, after;
    };
    int where = 0;
    std::vector<variant> vs = {
        {"async call, NULL config (until queued)", [&] { HK(harmonia_lookup_async(tree, NULL, d_q, nq, d_v, d_f, NULL)); },
         [&] { CK(cudaStreamSynchronize(0)); }},
        {"async call, memory DEVICE (until queued)", [&] { HK(harmonia_lookup_async(tree, &qc, d_q, nq, d_v, d_f, NULL)); },
         [&] { CK(cudaStreamSynchronize(0)); }},
        {"sync call, NULL config", [&] { HK(harmonia_lookup(tree, NULL, d_q, nq, d_v, d_f)); }, [] {}},
        {"sync call, memory DEVICE", [&] { HK(harmonia_lookup(tree, &qc, d_q, nq, d_v, d_f)); }, [] {}},
        {"empty kernel, launch only", [&] { empty_kernel<<<32, 256>>>(NULL); }, [&] { CK(cudaStreamSynchronize(0)); }},
        {"empty kernel, launch + sync", [&] { empty_kernel<<<32, 256>>>(NULL); CK(cudaStreamSynchronize(0)); }, [] {}},
        {"three classifications", [&] {
             int d;
             where += hm_pointer_where(d_q, &d) + hm_pointer_where(d_v, &d) + hm_pointer_where(d_f, &d);
         }, [] {}},
    };
    for (auto &v : vs) { v.timed(); v.after(); }
    std::vector<std::vector<double>> means(vs.size());
    for (int rep = 0; rep < 7; rep++) {
        std::vector<double> sum(vs.size(), 0);
        for (int r = 0; r < 2000; r++)
            for (size_t j = 0; j < vs.size(); j++) {
                variant &v = vs[(j + r) % vs.size()];
                v.timed(); v.after(); /* warm: the same variant just before */
                const double t0 = now();
                v.timed();
                sum[(j + r) % vs.size()] += now() - t0;
                v.after();
            }
        for (size_t j = 0; j < vs.size(); j++)
            means[j].push_back(sum[j] / 2000 * 1e6);
    }
    for (size_t j = 0; j < vs.size(); j++) {
        std::sort(means[j].begin(), means[j].end());
        printf("%-44s %7.3f us (of seven means: %.3f .. %.3f)\n", vs[j].name, means[j][3], means[j][0], means[j][6]);
    }
    std::vector<uint64_t> v(nq);
    std::vector<uint8_t> f(nq);
    CK(cudaMemcpy(v.data(), d_v, nq * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
    uint64_t bad = 0;
    for (uint64_t i = 0; i < nq; i++) {
        const uint64_t at = std::lower_bound(keys.begin(), keys.end(), q[i]) - keys.begin();
        bad += !f[i] || v[i] != at;
    }
    printf(bad ? "FAILED (%llu wrong)\n" : "OK (%llu wrong)\n", (unsigned long long)bad);
    return bad != 0;
}
