/* pass_probe.cu — session 25: session 23's bounds_probe cut to the sorted windows whose partition
 * passes session 25 profiles by source line (argv[2] picks the workloads: "64" the 64-bit 2^26-key
 * tree's sorted 2^23 and 2^24 windows, "all" every workload of bounds_probe). The rest as in
 * bounds_probe.cu — session 23: what bounds the rows of issue 11 that stay below 1.25x the
 * strongest ordered baseline, measured in one process: the library's default call (NULL config) on
 * bench_versus's trees and queries (its seeds), and the machine's ceilings beside it (the copy rate,
 * random 8-byte gathers over an array of the tree's size). Modes:
 *   time : each workload's call, CUDA events, median of 9 after a warm-up, a sample of results
 *          checked against the host keys; then the ceilings (suite_ceilings.cu).
 *   ncu  : each workload's call once warm, then once between cudaProfilerStart/Stop, after a
 *          one-block marker kernel whose grid says which workload follows (parse_ncu.py); and one
 *          gather kernel over the tree-sized array (its DRAM bytes a load: the burst size).
 * Run ncu with --profile-from-start off --cache-control none --clock-control none (caches and clocks
 * as in a run: the warm call before each profiled one leaves what a caller repeating calls sees). */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <string>
#include <vector>

#include "bench/data/session23/probe_tree.h"

__global__ void marker_kernel(int *sink)
{
    if (threadIdx.x == 0 && blockIdx.x == 0 && sink)
        *sink = 1;
}

template <typename F> static float median_ms(F &&f)
{
    cudaEvent_t a, b;
    CKE(cudaEventCreate(&a));
    CKE(cudaEventCreate(&b));
    f();
    CKE(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < 9; r++) {
        f(); /* each timed call after an untimed one of its own, as bench_versus */
        CKE(cudaEventRecord(a, 0));
        f();
        CKE(cudaEventRecord(b, 0));
        CKE(cudaEventSynchronize(b));
        float x = 0;
        CKE(cudaEventElapsedTime(&x, a, b));
        ms.push_back(x);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

struct workload {
    const char *name;
    query_dist dist;
    uint32_t log2_queries;
    bool sorted; /* results in sorted order (harmonia_lookup_unordered) */
};

struct tree_case {
    uint32_t bits, keys_log2;
    std::vector<workload> w;
};

int main(int argc, char **argv)
{
    const bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    const bool only64 = argc > 2 && !strcmp(argv[2], "64");
    const std::vector<tree_case> narrow = {
        {64, 26, {{"batch 2^23, sorted", QUERIES_UNIFORM, 23, true}, {"batch 2^24, sorted", QUERIES_UNIFORM, 24, true}}}};
    const std::vector<tree_case> every = {
        {64, 26,
         {{"batch 2^16, query order", QUERIES_UNIFORM, 16, false},
          {"batch 2^18, query order", QUERIES_UNIFORM, 18, false},
          {"batch 2^23, sorted", QUERIES_UNIFORM, 23, true},
          {"batch 2^24, sorted", QUERIES_UNIFORM, 24, true},
          {"batch 2^27, sorted (the priority row)", QUERIES_UNIFORM, 27, true}}},
        {32, 28,
         {{"batch 2^16, query order", QUERIES_UNIFORM, 16, false},
          {"batch 2^18, query order", QUERIES_UNIFORM, 18, false},
          {"batch 2^24, sorted", QUERIES_UNIFORM, 24, true},
          {"batch 2^26, sorted", QUERIES_UNIFORM, 26, true},
          {"Zipf 2^27, sorted", QUERIES_ZIPF, 27, true}}},
        {32, 23, {{"2^27 uniform, sorted", QUERIES_UNIFORM, 27, true}}},
    };
    const std::vector<tree_case> &cases = only64 ? narrow : every;
    int *d_sink = NULL;
    CKE(cudaMalloc(&d_sink, sizeof(int)));
    int rc = 0, index = 0;
    for (const tree_case &c : cases) {
        const uint32_t bits = c.bits, keys_log2 = c.keys_log2;
        const uint64_t kb = bits / 8;
        probe_tree pt;
        probe_tree_make(&pt, bits, keys_log2);
        harmonia_tree *t = pt.t;
        const uint64_t n = pt.n;
        void *d_keys = pt.d_keys;
        const std::vector<char> &h_keys = pt.h_keys, &h_values = pt.h_values;
        harmonia_tree_info info;
        harmonia_info(t, &info);
        const uint64_t tree_bytes = info.key_region_bytes + info.leaf_value_bytes;
        uint64_t max_q = 0;
        for (const workload &w : c.w)
            max_q = std::max<uint64_t>(max_q, 1ull << w.log2_queries);
        void *d_q, *d_v, *d_pos;
        uint8_t *d_f;
        CKE(cudaMalloc(&d_q, max_q * kb));
        CKE(cudaMalloc(&d_v, max_q * kb));
        CKE(cudaMalloc(&d_f, max_q));
        CKE(cudaMalloc(&d_pos, max_q * 8));
        for (const workload &w : c.w) {
            const uint64_t nq = 1ull << w.log2_queries;
            query_spec qs;
            qs.dist = w.dist;
            qs.hit_rate = 1.0;
            qs.zipf_s = 0.99;
            qs.seed = 0x9e3779b9ull + keys_log2 + (uint64_t)w.dist * 17 + 1000 + nq;
            gen_queries_device(bits, d_keys, n, qs, 0, nq, d_q);
            CKE(cudaDeviceSynchronize());
            auto call = [&] {
                harmonia_status st = w.sorted ? harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, (uint64_t *)d_pos)
                                              : harmonia_lookup(t, NULL, d_q, nq, d_v, d_f);
                if (st != HARMONIA_OK) {
                    printf("lookup: %s\n", harmonia_last_error(t));
                    exit(1);
                }
            };
            if (ncu) {
                call();
                CKE(cudaDeviceSynchronize());
                printf("ncu %d: %u-bit 2^%u keys, %s\n", index, bits, keys_log2, w.name);
                cudaProfilerStart();
                marker_kernel<<<index + 1, 32>>>(d_sink);
                call();
                CKE(cudaDeviceSynchronize());
                cudaProfilerStop();
                index++;
                continue;
            }
            const float ms = median_ms(call);
            /* a sample checked against the host keys (sorted: slot i's query is positions[i]) */
            std::vector<char> q(nq * kb), v(nq * kb);
            std::vector<uint8_t> f(nq);
            std::vector<uint64_t> pos(w.sorted ? nq : 0);
            CKE(cudaMemcpy(q.data(), d_q, nq * kb, cudaMemcpyDeviceToHost));
            CKE(cudaMemcpy(v.data(), d_v, nq * kb, cudaMemcpyDeviceToHost));
            CKE(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            if (w.sorted)
                CKE(cudaMemcpy(pos.data(), d_pos, nq * 8, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, checked = 0;
            for (uint64_t i = 0; i < nq; i += (nq >> 12) + 1, checked++) {
                const uint64_t at = w.sorted ? pos[i] : i;
                if (at >= nq) {
                    bad++;
                    continue;
                }
                uint64_t key = 0, val = 0;
                memcpy(&key, &q[at * kb], kb);
                memcpy(&val, &v[i * kb], kb);
                uint64_t lo = 0, len = n; /* lower bound on the host keys */
                while (len > 0) {
                    const uint64_t half = len / 2;
                    uint64_t k = 0;
                    memcpy(&k, &h_keys[(lo + half) * kb], kb);
                    if (k < key) {
                        lo += half + 1;
                        len -= half + 1;
                    } else {
                        len = half;
                    }
                }
                uint64_t found_key = 0, want = 0;
                if (lo < n)
                    memcpy(&found_key, &h_keys[lo * kb], kb);
                const bool hit = lo < n && found_key == key;
                if (hit)
                    memcpy(&want, &h_values[lo * kb], kb);
                bad += f[i] != hit || (hit && val != want);
            }
            printf("time: %u-bit 2^%u keys, %s: %.4f ms, %.3f G/s, %s (%llu checked)\n", bits, keys_log2, w.name, ms,
                   nq / (ms * 1e6), bad ? "WRONG" : "verified", (unsigned long long)checked);
            rc |= bad != 0;
        }
        if (ncu) { /* the burst a random 8-byte load costs: one gather kernel over the tree-sized array */
            printf("ncu %d: %u-bit 2^%u keys, gather 2^24 8-byte loads over %llu bytes\n", index, bits, keys_log2,
                   (unsigned long long)tree_bytes);
            ceiling_gather(tree_bytes, 1ull << 24, 1); /* warm */
            cudaProfilerStart();
            marker_kernel<<<index + 1, 32>>>(d_sink);
            ceiling_gather(tree_bytes, 1ull << 24, 1);
            CKE(cudaDeviceSynchronize());
            cudaProfilerStop();
            index++;
        } else {
            const uint64_t loads = 1ull << 27;
            const timing g = ceiling_gather(tree_bytes, loads, 3);
            printf("ceiling: %u-bit 2^%u keys, random 8-byte gather over %llu bytes: %.3f G loads/s\n", bits, keys_log2,
                   (unsigned long long)tree_bytes, loads / (g.median_ms * 1e6));
        }
        cudaFree(d_q);
        cudaFree(d_v);
        cudaFree(d_f);
        cudaFree(d_pos);
        probe_tree_free(&pt);
    }
    if (!ncu) {
        const uint64_t bytes = 1ull << 30;
        const timing c = ceiling_copy(bytes, 5);
        printf("ceiling: device copy of 1 GiB: %.1f GB/s read + written\n", 2.0 * bytes / (c.median_ms * 1e6));
    }
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
