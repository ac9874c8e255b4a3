// sort_descend.cu — issue 11, sorted-order results of sparse windows (2^22-2^24 queries over 2^26-2^28
// keys, about one query a leaf or fewer): does "radix-sort the queries on the top B bits of the keys'
// span, then the plain NTG descent over the sorted queries" beat what the library does today (PSA
// partition + partitioned search, or the descent in query order), and the strongest baseline (the
// same sort + a binary search of a sorted array), in one process on the same data?
// Each pipeline is timed whole (sort + search), CUDA events on the legacy stream, median of 15
// after 3 warm-ups; every result is checked (all queries hit; value = key's index).
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -I<repo>/include sort_descend.cu <libharmonia.a and its deps>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <functional>
#include <vector>

#include "harmonia.h"

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
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms;
    for (int r = 0; r < 18; r++) {
        cudaEventRecord(a, 0);
        f();
        cudaEventRecord(b, 0);
        cudaEventSynchronize(b);
        float x = 0;
        cudaEventElapsedTime(&x, a, b);
        if (r >= 3)
            ms.push_back(x);
    }
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

/* lower bound over the sorted keys, one thread a query (queries in whatever order they come) */
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
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; i++) { /* keys 3, 10, 17, ... (stride 7), values i */
        keys[i] = (K)(i * 7 + 3);
        values[i] = (K)i;
    }
    for (uint64_t i = 0; i < nq; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        q[i] = keys[x % n];
    }
    const uint64_t span = (uint64_t)keys[n - 1] - keys[0];
    unsigned span_bits = 0;
    while (span_bits < 64 && (span >> span_bits) != 0)
        span_bits++;
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.input_sorted = true;
    harmonia_tree *t = nullptr;
    if (harmonia_build(&bc, keys.data(), values.data(), n, &t) != HARMONIA_OK || harmonia_device_upload(t) != HARMONIA_OK) {
        printf("build failed\n");
        return 1;
    }
    K *d_keys, *d_values, *d_q, *d_sq, *d_v;
    uint32_t *d_pos, *d_spos;
    uint8_t *d_f;
    uint64_t *d_p64;
    CK(cudaMalloc(&d_keys, n * sizeof(K)));
    CK(cudaMalloc(&d_values, n * sizeof(K)));
    CK(cudaMalloc(&d_q, nq * sizeof(K)));
    CK(cudaMalloc(&d_sq, nq * sizeof(K)));
    CK(cudaMalloc(&d_v, nq * sizeof(K)));
    CK(cudaMalloc(&d_pos, nq * 4));
    CK(cudaMalloc(&d_spos, nq * 4));
    CK(cudaMalloc(&d_f, nq));
    CK(cudaMalloc(&d_p64, nq * 8));
    CK(cudaMemcpy(d_keys, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_values, values.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_q, q.data(), nq * sizeof(K), cudaMemcpyHostToDevice));
    iota_kernel<<<1024, 256>>>(d_pos, nq);
    size_t temp_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, d_q, d_sq, d_pos, d_spos, (int)nq, 0, (int)bits));
    void *d_temp;
    CK(cudaMalloc(&d_temp, temp_bytes));
    printf("%u-bit 2^%u keys, 2^%u queries (%.2f a leaf at L = 16), span %u bits\n", bits, keys_log2, q_log2,
           (double)nq / (n / 16), span_bits);
    int ok = 1;

    /* checks: results in sorted order with the sort's positions (u32) or the library's (u64) */
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
            const uint64_t key = q[pos];
            bad += !f[i] || (uint64_t)v[i] != (key - 3) / 7;
        }
        printf("  %-58s %8.3f ms  %6.2f G/s  %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
        ok &= bad == 0;
        CK(cudaMemset(d_v, 0, nq * sizeof(K)));
        CK(cudaMemset(d_f, 0, nq));
    };

    harmonia_query_config c;
    harmonia_query_config_init(&c);
    c.memory = HARMONIA_MEMORY_DEVICE;
    float ms = median_ms([&] { harmonia_lookup_unordered(t, &c, d_q, nq, d_v, d_f, d_p64); });
    check("library today: harmonia_lookup_unordered, defaults", ms, true);

    for (unsigned b : {8u, 12u, 16u}) {
        const int end = (int)span_bits, begin = end > (int)b ? end - (int)b : 0;
        auto sort = [&] {
            size_t tb = temp_bytes;
            cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int)nq, begin, end);
        };
        for (uint32_t g : {1u, 2u, 4u, 8u}) {
            harmonia_query_config d;
            harmonia_query_config_init(&d);
            d.memory = HARMONIA_MEMORY_DEVICE;
            d.psa = 0;
            d.group_size = g;
            ms = median_ms([&] {
                sort();
                harmonia_lookup(t, &d, d_sq, nq, d_v, d_f);
            });
            char name[128];
            snprintf(name, sizeof name, "sort [%d,%d) + NTG descent G=%u (sorted results)", begin, end, g);
            check(name, ms, false);
        }
        ms = median_ms([&] {
            sort();
            bsearch_kernel<K><<<(unsigned)((nq + 255) / 256), 256>>>(d_keys, d_values, n, d_sq, nq, d_v, d_f);
        });
        char name[128];
        snprintf(name, sizeof name, "sort [%d,%d) + binary search (sorted results)", begin, end);
        check(name, ms, false);
    }
    /* the searches alone on fully sorted queries (the sort not timed) */
    {
        size_t tb = temp_bytes;
        cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int)nq, 0, (int)bits);
        CK(cudaDeviceSynchronize());
        for (uint32_t g : {1u, 2u, 4u, 8u}) {
            harmonia_query_config d;
            harmonia_query_config_init(&d);
            d.memory = HARMONIA_MEMORY_DEVICE;
            d.psa = 0;
            d.group_size = g;
            ms = median_ms([&] { harmonia_lookup(t, &d, d_sq, nq, d_v, d_f); });
            char name[128];
            snprintf(name, sizeof name, "NTG descent G=%u alone, queries fully sorted (not timed)", g);
            check(name, ms, false);
        }
        ms = median_ms([&] {
            bsearch_kernel<K><<<(unsigned)((nq + 255) / 256), 256>>>(d_keys, d_values, n, d_sq, nq, d_v, d_f);
        });
        check("binary search alone, queries fully sorted (not timed)", ms, false);
        size_t tb2 = temp_bytes;
        ms = median_ms([&] {
            size_t tb3 = tb2;
            cub::DeviceRadixSort::SortPairs(d_temp, tb3, d_q, d_sq, d_pos, d_spos, (int)nq, (int)span_bits - 16,
                                            (int)span_bits);
        });
        printf("  %-58s %8.3f ms\n", "the 16-bit sort alone", ms);
    }
    CK(cudaGetLastError());
    cudaFree(d_keys);
    cudaFree(d_values);
    cudaFree(d_q);
    cudaFree(d_sq);
    cudaFree(d_v);
    cudaFree(d_pos);
    cudaFree(d_spos);
    cudaFree(d_f);
    cudaFree(d_p64);
    cudaFree(d_temp);
    harmonia_free(t);
    return ok ? 0 : 1;
}

int main()
{
    int rc = 0;
    rc |= run_case<uint64_t>(26, 22);
    rc |= run_case<uint64_t>(26, 24);
    rc |= run_case<uint32_t>(28, 22);
    rc |= run_case<uint32_t>(28, 24);
    rc |= run_case<uint64_t>(26, 20);
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
