/* overlap_probe.cu — session 27 (measurement only): would the sorted pipeline gain from running
 * its phases of different key ranges at once? The partition (≈ 60 % of the copy rate) and the
 * staged search (≈ 76 % of DRAM peak) run one after another in one call; here a batch is split on
 * the host into S parts of disjoint key ranges (their leaves disjoint, so no leaf is read twice),
 * and the library's own asynchronous calls (each with its own workspace) run them one after another
 * on one stream or at once on S streams, against the whole batch in one call. Public API only.
 * Usage: overlap_probe [log2 keys] [log2 queries] [S (0: 1, 2 and 4)] [runs (7)] [sorted only: 1] */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "harmonia.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)
#define HK(x) do { harmonia_status s_ = (x); if (s_ != HARMONIA_OK) { printf("harmonia %d at %d: %s\n", (int)s_, __LINE__, harmonia_last_error(NULL)); exit(1); } } while (0)

static uint64_t mix(uint64_t x) { x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull; x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31); }

struct part { uint64_t n; uint64_t *q, *v, *pos; uint8_t *f; void *ws; size_t ws_bytes; cudaStream_t s; };

int main(int argc, char **argv)
{
    const int kl = argc > 1 ? atoi(argv[1]) : 26, ql = argc > 2 ? atoi(argv[2]) : 27;
    const int only_s = argc > 3 ? atoi(argv[3]) : 0, runs = argc > 4 ? atoi(argv[4]) : 7, sorted_only = argc > 5 ? atoi(argv[5]) : 0;
    const uint64_t n = 1ull << kl, nq = 1ull << ql;
    std::vector<uint64_t> keys(n), vals(n);
    const int gap = 64 - kl;
    for (uint64_t i = 0; i < n; i++) { keys[i] = (i << gap) | (mix(i) & ((1ull << (gap - 1)) - 1)); vals[i] = mix(i ^ 77); }
    harmonia_build_config bc; harmonia_build_config_init(&bc); bc.key_bits = 64; bc.input_sorted = true;
    harmonia_tree *t = nullptr;
    HK(harmonia_build(&bc, keys.data(), vals.data(), n, &t));
    HK(harmonia_device_upload(t));
    std::vector<uint64_t> qidx(nq);
    for (uint64_t j = 0; j < nq; j++) qidx[j] = mix(j * 31 + 5) % n;
    harmonia_query_config qc; harmonia_query_config_init(&qc); qc.backend = HARMONIA_BACKEND_GPU; qc.memory = HARMONIA_MEMORY_DEVICE;
    printf("# overlap_probe: 64-bit 2^%d keys, 2^%d uniform queries (all hits); ms, median of 7 (host clock, all streams synchronised)\n", kl, ql);
    for (int S : {1, 2, 4}) {
        if (only_s && S != only_s)
            continue;
        std::vector<std::vector<uint64_t>> hq(S);
        for (uint64_t j = 0; j < nq; j++) hq[(qidx[j] * S) / n].push_back(keys[qidx[j]]);
        std::vector<part> P(S);
        for (int p = 0; p < S; p++) {
            part &x = P[p]; x.n = hq[p].size();
            CK(cudaMalloc(&x.q, x.n * 8)); CK(cudaMalloc(&x.v, x.n * 8)); CK(cudaMalloc(&x.pos, x.n * 8)); CK(cudaMalloc(&x.f, x.n));
            CK(cudaMemcpy(x.q, hq[p].data(), x.n * 8, cudaMemcpyHostToDevice));
            size_t pinned = 0;
            HK(harmonia_query_workspace_bytes(t, &qc, HARMONIA_QUERY_LOOKUP_UNORDERED, x.n, &x.ws_bytes, &pinned));
            size_t b2 = 0; HK(harmonia_query_workspace_bytes(t, &qc, HARMONIA_QUERY_LOOKUP, x.n, &b2, &pinned));
            x.ws_bytes = std::max(x.ws_bytes, b2);
            CK(cudaMalloc(&x.ws, x.ws_bytes));
            CK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
        }
        for (int ordered = 0; ordered < (sorted_only ? 1 : 2); ordered++)
            for (int concurrent = 0; concurrent < (S > 1 && !sorted_only ? 2 : 1); concurrent++) {
                auto run = [&] {
                    for (int p = 0; p < S; p++) {
                        part &x = P[p];
                        harmonia_query_config c = qc; c.workspace = x.ws; c.workspace_bytes = x.ws_bytes;
                        void *s = concurrent ? (void *)x.s : (void *)P[0].s;
                        if (ordered) HK(harmonia_lookup_async(t, &c, x.q, x.n, x.v, x.f, s));
                        else HK(harmonia_lookup_unordered_async(t, &c, x.q, x.n, x.v, x.f, x.pos, s));
                    }
                    CK(cudaDeviceSynchronize());
                };
                if (runs > 1) { run(); run(); }
                std::vector<double> ms;
                for (int r = 0; r < runs; r++) {
                    auto a = std::chrono::steady_clock::now(); run(); auto b = std::chrono::steady_clock::now();
                    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
                }
                std::sort(ms.begin(), ms.end());
                /* verify: every query found, values right (a sample) */
                uint64_t bad = 0;
                for (int p = 0; p < S; p++) {
                    part &x = P[p]; const uint64_t m = std::min<uint64_t>(x.n, 1 << 16);
                    std::vector<uint64_t> v(m), pos(m); std::vector<uint8_t> f(m);
                    CK(cudaMemcpy(v.data(), x.v, m * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(f.data(), x.f, m, cudaMemcpyDeviceToHost));
                    if (!ordered) CK(cudaMemcpy(pos.data(), x.pos, m * 8, cudaMemcpyDeviceToHost));
                    for (uint64_t i = 0; i < m; i++) {
                        const uint64_t qi = ordered ? i : pos[i];
                        if (qi >= x.n) { bad++; continue; }
                        const uint64_t key = hq[p][qi];
                        const uint64_t k = std::lower_bound(keys.begin(), keys.end(), key) - keys.begin();
                        if (!f[i] || v[i] != vals[k]) bad++;
                    }
                }
                printf("S=%d %-9s %-10s %8.3f ms (min %.3f) = %6.2f G/s %s\n", S, ordered ? "query" : "sorted",
                       S == 1 ? "one call" : concurrent ? "S streams" : "one stream", ms[ms.size() / 2], ms[0], nq / ms[ms.size() / 2] / 1e6,
                       bad ? "MISMATCH" : "verified");
                fflush(stdout);
            }
        for (part &x : P) { cudaFree(x.q); cudaFree(x.v); cudaFree(x.pos); cudaFree(x.f); cudaFree(x.ws); cudaStreamDestroy(x.s); }
    }
    harmonia_free(t);
    return 0;
}
