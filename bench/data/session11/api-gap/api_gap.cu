/* api_gap.cu — session 11: why bench_versus's library call of sorted results (64-bit 2^26 keys,
 * 2^27 queries) measured 5.55 ms when bench_phases' pipeline of the same plan took 5.39. On the same
 * tree shape (keys util_mix64(i + 1)), 2^27 hits in device memory: harmonia_lookup_unordered and
 * harmonia_lookup with a NULL config, CUDA events around each call and the host clock, median of
 * the calls; the window the tree's lanes were sized for. Under ncu (argv[1] = 1: one timed call of
 * each) the kernels of a call show with their durations. */
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "util/mix.h"

int main(int argc, char **argv)
{
    const int calls = argc > 1 ? atoi(argv[1]) : 9;
    const uint32_t keys_log2 = argc > 2 ? atoi(argv[2]) : 26;
    const uint64_t n_keys = 1ull << keys_log2, n = 1ull << 27;
    std::vector<uint64_t> keys(n_keys), values(n_keys);
    for (uint64_t i = 0; i < n_keys; i++) {
        keys[i] = util_mix64(i + 1);
        values[i] = i + 1;
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = 64;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, keys.data(), values.data(), n_keys, &tree) != HARMONIA_OK ||
        harmonia_device_upload(tree) != HARMONIA_OK) {
        fprintf(stderr, "build: %s\n", harmonia_last_error(tree));
        return 1;
    }
    std::vector<uint64_t> q(n);
    for (uint64_t i = 0; i < n; i++)
        q[i] = keys[util_mix64(777 + i) % n_keys];
    uint64_t *d_q, *d_v, *d_p;
    uint8_t *d_f;
    if (cudaMalloc(&d_q, n * 8) || cudaMalloc(&d_v, n * 8) || cudaMalloc(&d_p, n * 8) || cudaMalloc(&d_f, n))
        return 1;
    cudaMemcpy(d_q, q.data(), n * 8, cudaMemcpyHostToDevice);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    /* mode 2: sorted results in a workspace of the caller's (the caller's stream alone: no free-memory
     * query, no fork to the tree's lane) */
    harmonia_query_config wc;
    harmonia_query_config_init(&wc);
    size_t ws_bytes = 0, pinned = 0;
    if (harmonia_query_workspace_bytes(tree, &wc, HARMONIA_QUERY_LOOKUP_UNORDERED, n, &ws_bytes, &pinned) != HARMONIA_OK ||
        cudaMalloc(&wc.workspace, ws_bytes))
        return 1;
    wc.workspace_bytes = ws_bytes;
    {
        std::vector<double> t;
        for (int i = 0; i < 21; i++) {
            size_t fr, tot;
            auto t0 = std::chrono::steady_clock::now();
            cudaMemGetInfo(&fr, &tot);
            t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        printf("cudaMemGetInfo: median %.1f us (min %.1f)\n", t[10], t[0]);
    }
    for (int mode = 0; mode < 3; mode++) {
        auto call = [&] {
            return mode == 1 ? harmonia_lookup(tree, NULL, d_q, n, d_v, d_f)
                             : harmonia_lookup_unordered(tree, mode == 2 ? &wc : NULL, d_q, n, d_v, d_f, d_p);
        };
        if (call() != HARMONIA_OK) { /* warm-up: scratch, bucket table */
            fprintf(stderr, "call: %s\n", harmonia_last_error(tree));
            return 1;
        }
        std::vector<double> ev, host;
        for (int c = 0; c < calls; c++) {
            auto t0 = std::chrono::steady_clock::now();
            cudaEventRecord(a, 0);
            call();
            cudaEventRecord(b, 0);
            cudaEventSynchronize(b);
            auto t1 = std::chrono::steady_clock::now();
            float ms = 0;
            cudaEventElapsedTime(&ms, a, b);
            ev.push_back(ms);
            host.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        std::sort(ev.begin(), ev.end());
        std::sort(host.begin(), host.end());
        printf("%s: events median %.3f ms (min %.3f) = %.2f G/s, host clock median %.3f ms; lanes' window %u\n",
               mode == 1 ? "harmonia_lookup (query order)"
               : mode == 2 ? "harmonia_lookup_unordered (sorted), caller's workspace"
                           : "harmonia_lookup_unordered (sorted)",
               ev[ev.size() / 2],
               ev[0], n / ev[ev.size() / 2] / 1e6, host[host.size() / 2], tree->gpu->window);
        /* a sample of the results */
        std::vector<uint64_t> v(1024);
        std::vector<uint8_t> f(1024);
        cudaMemcpy(v.data(), d_v, 1024 * 8, cudaMemcpyDeviceToHost);
        cudaMemcpy(f.data(), d_f, 1024, cudaMemcpyDeviceToHost);
        uint64_t hits = 0;
        for (int i = 0; i < 1024; i++)
            hits += f[i] && v[i] != 0;
        printf("  sample: %llu of 1024 found with a value\n", (unsigned long long)hits);
    }
    harmonia_free(tree);
    return 0;
}
