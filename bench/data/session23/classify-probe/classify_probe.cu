/* classify_probe.cu — session 23: where the default call's excess over the explicit call goes at
 * small batches (0.4-1.5 µs between their events in every bench_versus log of the session, against
 * 0.24-0.38 µs measured for the three pointer classifications alone in session 17). bench_versus's
 * 64-bit 2^26-key tree, 2^10 and 2^14 uniform queries; every variant timed in rounds (each timed
 * call after an untimed one of its own, as bench_versus), CUDA events around each call, median of
 * 301 rounds; and the host clock around the classifications alone:
 *   default     : harmonia_lookup(NULL config)
 *   explicit    : memory DEVICE (no classification)
 *   explicit+3w : three hm_pointer_where (the library's classification) right before the explicit call
 *   explicit+3d : three cuPointerGetAttributes of one attribute (memory type) instead
 *   explicit+1w : one hm_pointer_where */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <time.h>
#include <vector>

#include "bench/data/session23/probe_tree.h"
#include "harmonia/gpu_internal.h" /* (C++ linkage, as gpu_upload.cu defines it) */

typedef CUresult (*attributes_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

int main(void)
{
    const uint32_t bits = 64, keys_log2 = 26;
    const uint64_t kb = bits / 8;
    probe_tree pt;
    probe_tree_make(&pt, bits, keys_log2);
    harmonia_tree *t = pt.t;
    const uint64_t n = pt.n;
    void *d_keys = pt.d_keys;
    void *attributes = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    CKE(cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &attributes, 12000, cudaEnableDefault, &found));
    const attributes_fn driver_attributes = (attributes_fn)attributes;
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.memory = HARMONIA_MEMORY_DEVICE;
    for (uint32_t log2q : {10u, 14u}) {
        const uint64_t nq = 1ull << log2q;
        void *d_q, *d_v;
        uint8_t *d_f;
        CKE(cudaMalloc(&d_q, nq * kb));
        CKE(cudaMalloc(&d_v, nq * kb));
        CKE(cudaMalloc(&d_f, nq));
        query_spec qs;
        qs.dist = QUERIES_UNIFORM;
        qs.hit_rate = 1.0;
        qs.zipf_s = 0.99;
        qs.seed = 0x9e3779b9ull + keys_log2 + 1000 + nq;
        gen_queries_device(bits, d_keys, n, qs, 0, nq, d_q);
        CKE(cudaDeviceSynchronize());
        auto check = [&](harmonia_status st) {
            if (st != HARMONIA_OK) {
                printf("lookup: %s\n", harmonia_last_error(t));
                exit(1);
            }
        };
        auto three_where = [&] {
            int dev;
            volatile int sink = 0;
            sink += hm_pointer_where(d_q, &dev);
            sink += hm_pointer_where(d_v, &dev);
            sink += hm_pointer_where(d_f, &dev);
        };
        auto three_driver = [&] {
            void *ptrs[3] = {d_q, d_v, d_f};
            for (void *p : ptrs) {
                unsigned int type = 0;
                CUpointer_attribute what = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
                void *data = &type;
                driver_attributes(1, &what, &data, (CUdeviceptr)(uintptr_t)p);
            }
        };
        std::vector<std::pair<std::string, std::function<void()>>> calls = {
            {"default", [&] { check(harmonia_lookup(t, NULL, d_q, nq, d_v, d_f)); }},
            {"explicit", [&] { check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f)); }},
            {"explicit+3w", [&] { three_where(); check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f)); }},
            {"explicit+3d", [&] { three_driver(); check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f)); }},
            {"explicit+1w", [&] {
                 int dev;
                 volatile int sink = hm_pointer_where(d_q, &dev);
                 (void)sink;
                 check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f));
             }},
        };
        const size_t m = calls.size();
        std::vector<std::vector<float>> ms(m);
        std::vector<std::vector<double>> host(m);
        cudaEvent_t a, b;
        CKE(cudaEventCreate(&a));
        CKE(cudaEventCreate(&b));
        for (auto &c : calls)
            c.second();
        CKE(cudaDeviceSynchronize());
        for (int r = 0; r < 301; r++)
            for (size_t j = 0; j < m; j++) {
                const size_t k = (j + r) % m;
                calls[k].second(); /* untimed: its own state warm */
                CKE(cudaEventRecord(a, 0));
                const double h0 = now_us();
                calls[k].second();
                const double h1 = now_us();
                CKE(cudaEventRecord(b, 0));
                CKE(cudaEventSynchronize(b));
                float x = 0;
                CKE(cudaEventElapsedTime(&x, a, b));
                ms[k].push_back(x * 1000.0f);
                host[k].push_back(h1 - h0);
            }
        /* the classifications alone, host clock, after a synchronised call each (as in a call) */
        std::vector<double> w3, d3;
        for (int r = 0; r < 301; r++) {
            check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f));
            double h0 = now_us();
            three_where();
            w3.push_back(now_us() - h0);
            check(harmonia_lookup(t, &qc, d_q, nq, d_v, d_f));
            h0 = now_us();
            three_driver();
            d3.push_back(now_us() - h0);
        }
        auto med = [](auto v) {
            std::sort(v.begin(), v.end());
            return (double)v[v.size() / 2];
        };
        printf("2^%u queries (events µs / host µs, medians of 301 rounds):", log2q);
        for (size_t k = 0; k < m; k++)
            printf("  %s %.2f / %.2f", calls[k].first.c_str(), med(ms[k]), med(host[k]));
        printf("\n  alone after a call (host µs): three hm_pointer_where %.3f, three 1-attribute driver queries %.3f\n",
               med(w3), med(d3));
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        cudaFree(d_q);
        cudaFree(d_v);
        cudaFree(d_f);
    }
    probe_tree_free(&pt);
    return 0;
}
