/* stage_probe.cu — session 27, call 1 (measurement only): where a small call's host time goes, stage
 * by stage (harmonia/stage_probe.h hooks in a copy of the library), and the pieces alone. 64-bit keys,
 * 2^22 keys, 2^10 and 2^14 device queries. */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <vector>
#include <cuda.h>

#include "harmonia/gpu_internal.h"
#include "harmonia/stage_probe.h"

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e_ = (x);                                                                               \
        if (e_ != cudaSuccess) {                                                                            \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                 \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

__global__ void empty_kernel(const void *p, uint64_t n)
{
    if (n == 12345 && threadIdx.x == 999)
        printf("%p\n", p);
}

static double per_call_us(const std::function<void()> &f, int iters, bool sync_each)
{
    std::vector<double> v;
    for (int r = 0; r < 9; r++) {
        CK(cudaDeviceSynchronize());
        const auto a = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; i++) {
            f();
            if (sync_each)
                CK(cudaStreamSynchronize(0));
        }
        const auto b = std::chrono::steady_clock::now();
        CK(cudaDeviceSynchronize());
        v.push_back(std::chrono::duration<double, std::micro>(b - a).count() / iters);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static const char *stage_names[13] = {"", "config+backend", "hm_call fill", "check_config", "hm_gpu_enter",
                                      "setup_call", "to run_window", "run_window (launch)", "to finish",
                                      "order_after", "unlock", "stream sync", "call_end+leave"};

static void stages(const char *what, const std::function<void()> &f, int iters)
{
    for (int k = 0; k < 16; k++) {
        hm_probe_acc[k] = 0;
        hm_probe_hits[k] = 0;
    }
    CK(cudaDeviceSynchronize());
    const auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; i++)
        f();
    const auto b = std::chrono::steady_clock::now();
    CK(cudaDeviceSynchronize());
    printf("  %s: %.3f us a call (host clock)\n   ", what, std::chrono::duration<double, std::micro>(b - a).count() / iters);
    for (int k = 1; k < 13; k++)
        if (hm_probe_hits[k])
            printf(" %s %.3f |", stage_names[k], hm_probe_acc[k] / hm_probe_hits[k]);
    printf("\n");
}

int main()
{
    const uint64_t n = 1u << 22;
    std::vector<uint64_t> keys(n), values(n);
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = 7 * i + 3;
        values[i] = i;
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = 64;
    bc.input_sorted = true;
    harmonia_tree *t = nullptr;
    if (harmonia_build(&bc, keys.data(), values.data(), n, &t) != HARMONIA_OK || harmonia_device_upload(t) != HARMONIA_OK) {
        printf("build failed\n");
        return 1;
    }
    for (uint64_t nq : {1ull << 10, 1ull << 14}) {
        std::vector<uint64_t> q(nq);
        for (uint64_t i = 0; i < nq; i++)
            q[i] = keys[(i * 7919) % n];
        uint64_t *d_q, *d_v;
        uint8_t *d_f;
        CK(cudaMalloc(&d_q, nq * 8));
        CK(cudaMalloc(&d_v, nq * 8));
        CK(cudaMalloc(&d_f, nq));
        CK(cudaMemcpy(d_q, q.data(), nq * 8, cudaMemcpyHostToDevice));
        cudaStream_t s2;
        CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        cudaEvent_t ev;
        CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        harmonia_query_config qc;
        harmonia_query_config_init(&qc);
        qc.backend = HARMONIA_BACKEND_GPU;
        qc.memory = HARMONIA_MEMORY_DEVICE;
        int bad = 0;
        auto ok = [&](harmonia_status s) { bad |= s != HARMONIA_OK; };
        int dev = 0;
        pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        struct row {
            const char *name;
            std::function<void()> f;
            bool sync_each;
        };
        std::vector<row> rows = {
            {"clock_gettime", [&] { volatile double x = hm_probe_now(); (void)x; }, false},
            {"mutex lock+unlock", [&] { pthread_mutex_lock(&mu); pthread_mutex_unlock(&mu); }, false},
            {"cudaGetDevice", [&] { CK(cudaGetDevice(&dev)); }, false},
            {"cudaGetLastError", [&] { (void)cudaGetLastError(); }, false},
            {"hm_pointer_where", [&] { int d; (void)hm_pointer_where(d_q, &d); }, false},
            {"cuPointerGetAttribute(MEMORY_TYPE)", [&] { unsigned mt = 0; (void)cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)d_q); }, false},
            {"cudaEventRecord", [&] { CK(cudaEventRecord(ev, 0)); }, false},
            {"cudaStreamWaitEvent", [&] { CK(cudaStreamWaitEvent(s2, ev, 0)); }, false},
            {"empty launch 16 B", [&] { empty_kernel<<<32, 256>>>(d_q, nq); }, false},
            {"ntg_launch_lookup bare (G 8)", [&] { CK(ntg_launch_lookup(&t->gpu->view, &t->gpu->cut, 8, d_q, NULL, nq, d_v, d_f, NULL, 0, 0)); }, false},
            {"empty launch 16 B + sync", [&] { empty_kernel<<<32, 256>>>(d_q, nq); }, true},
            {"ntg_launch_lookup bare + sync", [&] { CK(ntg_launch_lookup(&t->gpu->view, &t->gpu->cut, 8, d_q, NULL, nq, d_v, d_f, NULL, 0, 0)); }, true},
            {"harmonia_lookup explicit (sync)", [&] { ok(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f)); }, false},
            {"harmonia_lookup NULL (sync)", [&] { ok(harmonia_lookup(t, NULL, d_q, nq, d_v, d_f)); }, false},
            {"harmonia_lookup_async explicit", [&] { ok(harmonia_lookup_async(t, &qc, d_q, nq, d_v, d_f, NULL)); }, false},
            {"harmonia_lookup_async NULL", [&] { ok(harmonia_lookup_async(t, NULL, d_q, nq, d_v, d_f, NULL)); }, false},
        };
        for (int rep = 0; rep < 2; rep++) {
            printf("2^%d queries: host us a call (median of 9 samples of 400), repetition %d\n", nq == 1024 ? 10 : 14, rep + 1);
            for (const row &r : rows)
                printf("  %-40s %7.3f\n", r.name, per_call_us(r.f, 400, r.sync_each));
            printf(" stages (mean over 2000 calls; each stage includes one clock_gettime pair):\n");
            stages("sync NULL", [&] { ok(harmonia_lookup(t, NULL, d_q, nq, d_v, d_f)); }, 2000);
            stages("sync explicit", [&] { ok(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f)); }, 2000);
            stages("async NULL", [&] { ok(harmonia_lookup_async(t, NULL, d_q, nq, d_v, d_f, NULL)); }, 2000);
            stages("async explicit", [&] { ok(harmonia_lookup_async(t, &qc, d_q, nq, d_v, d_f, NULL)); }, 2000);
        }
        CK(cudaDeviceSynchronize());
        printf(bad ? "FAILED\n" : "OK\n");
        cudaFree(d_q); cudaFree(d_v); cudaFree(d_f);
    }
    harmonia_free(t);
    return 0;
}
