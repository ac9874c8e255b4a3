/* outside_probe.cu — session 21 (from session 15's zipf_probe): where the library's PSA pipeline
 * spends a window of 2^27 queries 90 % outside the keys' span (bench_versus "queries outside":
 * 32-bit 2^28 keys 4.70 ms in query order against 5.96 for uniform queries, though nine in ten
 * of its queries need no search). bench_versus's trees (uniform keys, its seeds) and queries
 * (uniform, Zipf s = 0.99, outside; its seeds), generated with the suite's own code. Default mode:
 * the library's unordered and ordered calls on each, CUDA events, median of 7 after a warm-up, a
 * sample of results checked against the host. `ncu` mode: a warm-up, then one unordered and one
 * ordered call on each between cudaProfilerStart/Stop (ncu --profile-from-start off). */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <vector>

#include "bench/suite.h"

#define CKE(x)                                                                                               \
    do {                                                                                                     \
        cudaError_t e_ = (x);                                                                                \
        if (e_ != cudaSuccess) {                                                                             \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

template <typename F> static float median_ms(F &&f)
{
    cudaEvent_t a, b;
    CKE(cudaEventCreate(&a));
    CKE(cudaEventCreate(&b));
    f();
    CKE(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (int r = 0; r < 7; r++) {
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

int main(int argc, char **argv)
{
    const bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    const int rounds = argc > 3 ? atoi(argv[3]) : 1;
    const uint32_t bits = argc > 2 ? (uint32_t)atoi(argv[2]) : 32, keys_log2 = bits == 32 ? 28 : 26;
    const uint64_t n = 1ull << keys_log2, nq = 1ull << 27, kb = bits / 8;
    const uint64_t seed = 0x5eed0000ull + keys_log2 * 131 + bits + (uint64_t)KEYS_UNIFORM * 7919;
    void *d_keys, *d_values;
    CKE(cudaMalloc(&d_keys, n * kb));
    CKE(cudaMalloc(&d_values, n * kb));
    if (!gen_sorted_device(bits, KEYS_UNIFORM, n, seed, d_keys, d_values))
        return 1;
    std::vector<char> h_keys(n * kb), h_values(n * kb);
    CKE(cudaMemcpy(h_keys.data(), d_keys, n * kb, cudaMemcpyDeviceToHost));
    CKE(cudaMemcpy(h_values.data(), d_values, n * kb, cudaMemcpyDeviceToHost));
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.input_sorted = true;
    harmonia_tree *t = NULL;
    if (harmonia_build(&bc, h_keys.data(), h_values.data(), n, &t) != HARMONIA_OK ||
        harmonia_device_upload(t) != HARMONIA_OK) {
        printf("build: %s\n", harmonia_last_error(t));
        return 1;
    }
    void *d_q, *d_v, *d_pos;
    uint8_t *d_f;
    CKE(cudaMalloc(&d_q, nq * kb));
    CKE(cudaMalloc(&d_v, nq * kb));
    CKE(cudaMalloc(&d_f, nq));
    CKE(cudaMalloc(&d_pos, nq * 8));
    int rc = 0;
    for (query_dist dist : {QUERIES_UNIFORM, QUERIES_ZIPF, QUERIES_OUTSIDE}) {
        query_spec qs;
        qs.dist = dist;
        qs.hit_rate = 1.0;
        qs.zipf_s = 0.99;
        qs.seed = 0x9e3779b9ull + keys_log2 + (uint64_t)dist * 17 + 1000 + nq;
        gen_queries_device(bits, d_keys, n, qs, 0, nq, d_q);
        CKE(cudaDeviceSynchronize());
        if (ncu) {
            harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, (uint64_t *)d_pos);
            CKE(cudaDeviceSynchronize());
            harmonia_lookup(t, NULL, d_q, nq, d_v, d_f);
            CKE(cudaDeviceSynchronize());
            printf("ncu: %s (unordered, then ordered)\n", query_dist_name(dist));
            cudaProfilerStart();
            harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, (uint64_t *)d_pos);
            harmonia_lookup(t, NULL, d_q, nq, d_v, d_f);
            CKE(cudaDeviceSynchronize());
            cudaProfilerStop();
            continue;
        }
        /* the expected answer of query key: found, and the value beside it */
        auto expect = [&](uint64_t key, uint64_t *want) {
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
            uint64_t at = 0;
            if (lo < n)
                memcpy(&at, &h_keys[lo * kb], kb);
            const bool hit = lo < n && at == key;
            *want = 0;
            if (hit)
                memcpy(want, &h_values[lo * kb], kb);
            return hit;
        };
        std::vector<uint64_t> pos(nq);
        std::vector<char> q(nq * kb), v(nq * kb);
        std::vector<uint8_t> f(nq);
        CKE(cudaMemcpy(q.data(), d_q, nq * kb, cudaMemcpyDeviceToHost));
        for (int round = 0; round < rounds; round++) {
            const float un = median_ms([&] { harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, (uint64_t *)d_pos); });
            /* a sample checked: slot i's query is positions[i] */
            CKE(cudaMemcpy(pos.data(), d_pos, nq * 8, cudaMemcpyDeviceToHost));
            CKE(cudaMemcpy(v.data(), d_v, nq * kb, cudaMemcpyDeviceToHost));
            CKE(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, hits = 0;
            for (uint64_t i = 0; i < nq; i += 4093) {
                uint64_t key = 0, val = 0, want = 0;
                if (pos[i] >= nq) {
                    bad++;
                    continue;
                }
                memcpy(&key, &q[pos[i] * kb], kb);
                memcpy(&val, &v[i * kb], kb);
                const bool hit = expect(key, &want);
                hits += hit;
                bad += f[i] != hit || (hit && val != want);
            }
            const float ord = median_ms([&] { harmonia_lookup(t, NULL, d_q, nq, d_v, d_f); });
            /* and the ordered call's: query i's results at i */
            CKE(cudaMemcpy(v.data(), d_v, nq * kb, cudaMemcpyDeviceToHost));
            CKE(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            for (uint64_t i = 1; i < nq; i += 4091) {
                uint64_t key = 0, val = 0, want = 0;
                memcpy(&key, &q[i * kb], kb);
                memcpy(&val, &v[i * kb], kb);
                const bool hit = expect(key, &want);
                bad += f[i] != hit || (hit && val != want);
            }
            printf("%u-bit 2^%u keys, 2^27 %s queries: unordered %.3f ms (%.2f G/s), ordered %.3f ms (%.2f G/s)  "
                   "%s (%.0f %% of the sample found)\n",
                   bits, keys_log2, query_dist_name(dist), un, nq / (un * 1e6), ord, nq / (ord * 1e6),
                   bad ? "WRONG" : "sample verified", 100.0 * hits / ((nq + 4092) / 4093));
            rc |= bad != 0;
        }
    }
    harmonia_free(t);
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
