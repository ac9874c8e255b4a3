/* tiled_sweep.cu — session 15: sorted-order results of sparse windows (PSA's sort path). Before:
 * a CUB sort of (query, position) on the top 8 bits (64-bit keys) or 16 bits (32-bit keys, two
 * passes), then the plain descent (ntg_launch_lookup, G = 4 / 2). Now: one 8-bit pass for both
 * widths, then the tiled descent (ntg_launch_lookup_tiled: each block orders runs of at most `tile`
 * queries by their own span in shared memory before it descends). Here, in one process on the same
 * data, two alternating rounds of: the library's call (the new policy), the old pipeline by hand
 * (with CUB's separate-output sort, which needs no copy: at least as fast as the old library's),
 * the new one by hand for G in {1, 2, 4} and tile in {512, 1024, 2048}, and the baseline of
 * bench_versus (16-bit sort + binary search of a sorted array, sorted results, u32 positions).
 * Keys: 64-bit util_mix64(i + 1) (sorted, unique), 32-bit 16 i + (mix & 15); queries: random keys
 * (all hits). CUDA events on the legacy stream, median of 15 after 3 warm-ups; every result checked
 * (values, found flags, positions a permutation). */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cub/cub.cuh>
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

static float median_ms(const std::function<void()> &f)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < 18; r++) {
        CK(cudaEventRecord(a, 0));
        f();
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        float x = 0;
        CK(cudaEventElapsedTime(&x, a, b));
        if (r >= 3)
            ms.push_back(x);
    }
    CK(cudaGetLastError());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

__global__ void iota_kernel(uint32_t *p, uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = (uint32_t)i;
}

/* the baseline's search: lower bound over the sorted keys, one thread a query; positions stay the sort's */
template <typename K>
__global__ void bsearch_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n,
                               const K *__restrict__ q, uint64_t nq, K *__restrict__ out, uint8_t *__restrict__ found)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nq; i += (uint64_t)gridDim.x * blockDim.x) {
        const K x = q[i];
        uint64_t lo = 0, len = n;
        while (len > 1) {
            const uint64_t half = len / 2;
            lo = __ldg(keys + lo + half - 1) < x ? lo + half : lo;
            len -= half;
        }
        const bool hit = n > 0 && __ldg(keys + lo) == x;
        out[i] = hit ? __ldg(values + lo) : (K)0;
        found[i] = hit;
    }
}

template <typename K> static int run_case(unsigned keys_log2, unsigned q_log2)
{
    const unsigned bits = sizeof(K) * 8;
    const uint64_t n = 1ull << keys_log2, nq = 1ull << q_log2;
    std::vector<K> keys(n), values(n), q(nq);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = bits == 64 ? (K)util_mix64(i + 1) : (K)(16 * i + (util_mix64(i) & 15));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const uint64_t nk = keys.size();
    for (uint64_t i = 0; i < nk; i++)
        values[i] = (K)(i + 1);
    for (uint64_t i = 0; i < nq; i++)
        q[i] = keys[util_mix64(777 + i) % nk];
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.input_sorted = true;
    harmonia_tree *t = nullptr;
    if (harmonia_build(&bc, keys.data(), values.data(), nk, &t) != HARMONIA_OK || harmonia_device_upload(t) != HARMONIA_OK) {
        printf("build failed: %s\n", harmonia_last_error(t));
        return 1;
    }
    const ntg_view *view = &t->gpu->view;
    const ntg_top_cut *cut = &t->gpu->cut;
    const uint64_t differ = (uint64_t)keys[0] ^ (uint64_t)keys[nk - 1];
    int span_bits = 0;
    while (span_bits < 64 && (differ >> span_bits) != 0)
        span_bits++;
    K *d_keys, *d_values, *d_q, *d_sq, *d_v;
    uint32_t *d_pos, *d_spos;
    uint8_t *d_f;
    uint64_t *d_p64;
    CK(cudaMalloc(&d_keys, nk * sizeof(K)));
    CK(cudaMalloc(&d_values, nk * sizeof(K)));
    CK(cudaMalloc(&d_q, nq * sizeof(K)));
    CK(cudaMalloc(&d_sq, nq * sizeof(K)));
    CK(cudaMalloc(&d_v, nq * sizeof(K)));
    CK(cudaMalloc(&d_pos, nq * 4));
    CK(cudaMalloc(&d_spos, nq * 4));
    CK(cudaMalloc(&d_f, nq));
    CK(cudaMalloc(&d_p64, nq * 8));
    CK(cudaMemcpy(d_keys, keys.data(), nk * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_values, values.data(), nk * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_q, q.data(), nq * sizeof(K), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d_q, d_sq, d_pos, d_spos, (int64_t)nq, 0, (int)bits));
    void *d_temp;
    CK(cudaMalloc(&d_temp, temp_bytes));
    printf("%u-bit 2^%u keys (%llu), 2^%u queries (%.2f a leaf), span %d bits, fanout %u\n", bits, keys_log2,
           (unsigned long long)nk, q_log2, (double)nq / view->n_leaves, span_bits, view->fanout);
    /* each query's expected value (its key's rank + 1), computed once (16 cores) */
    std::vector<uint64_t> expect(nq);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)nq; i++)
        expect[i] = (uint64_t)(std::lower_bound(keys.begin(), keys.end(), q[i]) - keys.begin()) + 1;
    int ok = 1;
    auto check = [&](const char *name, float ms, bool pos64) {
        std::vector<K> v(nq);
        std::vector<uint8_t> f(nq);
        std::vector<uint32_t> p32(pos64 ? 0 : nq);
        std::vector<uint64_t> p64(pos64 ? nq : 0);
        CK(cudaMemcpy(v.data(), d_v, nq * sizeof(K), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
        if (pos64)
            CK(cudaMemcpy(p64.data(), d_p64, nq * 8, cudaMemcpyDeviceToHost));
        else
            CK(cudaMemcpy(p32.data(), d_spos, nq * 4, cudaMemcpyDeviceToHost));
        uint64_t bad = 0;
        std::vector<uint8_t> seen(nq, 0);
        for (uint64_t i = 0; i < nq; i++) {
            const uint64_t pos = pos64 ? p64[i] : p32[i];
            if (pos >= nq || seen[pos]) {
                bad++;
                continue;
            }
            seen[pos] = 1;
            bad += !f[i] || (uint64_t)v[i] != expect[pos];
        }
        printf("  %-62s %8.3f ms  %6.2f G/s  %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
        fflush(stdout);
        ok &= bad == 0;
        CK(cudaMemset(d_v, 0, nq * sizeof(K)));
        CK(cudaMemset(d_f, 0, nq));
        CK(cudaMemset(d_p64, 0xFF, nq * 8));
    };
    const int old_bits = bits == 64 ? 8 : 16;
    const uint32_t old_g = bits == 64 ? 4 : 2;
    for (int round = 0; round < 2; round++) {
        printf(" round %d\n", round + 1);
        float ms = median_ms([&] { harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, d_p64); });
        check("library: harmonia_lookup_unordered, NULL config (new policy)", ms, true);
        {
            const int end = span_bits, begin = end > old_bits ? end - old_bits : 0;
            ms = median_ms([&] {
                size_t tb = temp_bytes;
                iota_kernel<<<1024, 256>>>(d_pos, nq);
                cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int64_t)nq, begin, end);
                ntg_launch_lookup(view, cut, old_g, d_sq, d_spos, nq, d_v, d_f, d_p64, 0, 0);
            });
            char name[128];
            snprintf(name, sizeof name, "old: sort [%d,%d) + plain descent G=%u", begin, end, old_g);
            check(name, ms, true);
        }
        const int end = span_bits, begin = end > 8 ? end - 8 : 0;
        for (uint32_t g : {1u, 2u, 4u})
            for (uint32_t tile : {512u, 1024u, 2048u}) {
                ms = median_ms([&] {
                    size_t tb = temp_bytes;
                    iota_kernel<<<1024, 256>>>(d_pos, nq);
                    cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int64_t)nq, begin, end);
                    ntg_launch_lookup_tiled(view, cut, g, tile, d_sq, d_spos, nq, d_v, d_f, d_p64, 0, 0);
                });
                char name[128];
                snprintf(name, sizeof name, "new: sort [%d,%d) + tiled descent G=%u tile %u", begin, end, g, tile);
                check(name, ms, true);
            }
        {
            const int b16 = end > 16 ? end - 16 : 0;
            ms = median_ms([&] {
                size_t tb = temp_bytes;
                iota_kernel<<<1024, 256>>>(d_pos, nq);
                cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int64_t)nq, b16, end);
                bsearch_kernel<K><<<(unsigned)((nq + 255) / 256), 256>>>(d_keys, d_values, nk, d_sq, nq, d_v, d_f);
            });
            char name[128];
            snprintf(name, sizeof name, "baseline: sort [%d,%d) + binary search, u32 positions", b16, end);
            check(name, ms, false);
        }
    }
    CK(cudaGetLastError());
    cudaFree(d_keys); cudaFree(d_values); cudaFree(d_q); cudaFree(d_sq); cudaFree(d_v);
    cudaFree(d_pos); cudaFree(d_spos); cudaFree(d_f); cudaFree(d_p64); cudaFree(d_temp);
    harmonia_free(t);
    return ok ? 0 : 1;
}

int main()
{
    int rc = 0;
    rc |= run_case<uint64_t>(26, 22);
    rc |= run_case<uint32_t>(28, 24);
    rc |= run_case<uint32_t>(28, 22);
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
