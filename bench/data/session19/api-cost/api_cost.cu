/* api_cost.cu — session 19: what an asynchronous device-array call costs the host, piece by piece.
 * small_probe `stream` found harmonia_lookup_async at ≈ 7 µs a call back to back (2^10 queries)
 * against ≈ 4.9 for the Eytzinger baseline's launch. Here each piece alone, host clock around 400
 * back-to-back calls (no synchronisation inside; the stream drained between samples), median of 7:
 * the CUDA API calls the library makes (event record, stream wait, event query, get device), the
 * pointer classification, an empty launch with 16 bytes of parameters, the library's lookup kernel
 * launched bare (ntg_launch_lookup), and the whole async call with a NULL config and with memory =
 * DEVICE. A tree of 2^20 64-bit keys; 2^10 queries. */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "harmonia/gpu_internal.h"

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

static double per_call_us(const std::function<void()> &f, int iters = 400)
{
    std::vector<double> v;
    for (int r = 0; r < 7; r++) {
        CK(cudaDeviceSynchronize());
        const auto a = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; i++)
            f();
        const auto b = std::chrono::steady_clock::now();
        CK(cudaDeviceSynchronize());
        v.push_back(std::chrono::duration<double, std::micro>(b - a).count() / iters);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main()
{
    const uint64_t n = 1u << 20, nq = 1u << 10;
    std::vector<uint64_t> keys(n), values(n), q(nq);
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = 7 * i + 3;
        values[i] = i;
    }
    for (uint64_t i = 0; i < nq; i++)
        q[i] = keys[(i * 7919) % n];
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = 64;
    bc.input_sorted = true;
    harmonia_tree *t = nullptr;
    if (harmonia_build(&bc, keys.data(), values.data(), n, &t) != HARMONIA_OK || harmonia_device_upload(t) != HARMONIA_OK) {
        printf("build failed\n");
        return 1;
    }
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
    struct row {
        const char *name;
        std::function<void()> f;
    };
    std::vector<row> rows = {
        {"cudaEventRecord (legacy stream)", [&] { CK(cudaEventRecord(ev, 0)); }},
        {"cudaStreamWaitEvent (another stream)", [&] { CK(cudaStreamWaitEvent(s2, ev, 0)); }},
        {"record + wait (hm_gpu_order_after)", [&] { CK(cudaEventRecord(ev, 0)); CK(cudaStreamWaitEvent(s2, ev, 0)); }},
        {"cudaEventQuery (complete)", [&] { (void)cudaEventQuery(ev); }},
        {"cudaGetDevice", [&] { CK(cudaGetDevice(&dev)); }},
        {"hm_pointer_where (device array)", [&] { int d; (void)hm_pointer_where(d_q, &d); }},
        {"empty kernel launch, 16 B of parameters", [&] { empty_kernel<<<32, 256>>>(d_q, nq); }},
        {"ntg_launch_lookup bare (G = 8)",
         [&] { CK(ntg_launch_lookup(&t->gpu->view, &t->gpu->cut, 8, d_q, NULL, nq, d_v, d_f, NULL, 0, 0)); }},
        {"harmonia_lookup_async, memory device", [&] { ok(harmonia_lookup_async(t, &qc, d_q, nq, d_v, d_f, NULL)); }},
        {"harmonia_lookup_async, NULL config", [&] { ok(harmonia_lookup_async(t, NULL, d_q, nq, d_v, d_f, NULL)); }},
    };
    for (int rep = 0; rep < 2; rep++) {
        printf("host µs a call (median of 7 samples of 400 calls), repetition %d\n", rep + 1);
        for (const row &r : rows)
            printf("  %-44s %7.3f\n", r.name, per_call_us(r.f));
    }
    CK(cudaDeviceSynchronize());
    printf(bad ? "FAILED\n" : "OK\n");
    harmonia_free(t);
    return bad;
}
