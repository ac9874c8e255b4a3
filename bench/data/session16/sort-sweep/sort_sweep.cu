/* sort_sweep.cu — session 18 added the `dense` and `dense2` modes (PSA's sort path against the
 * library's partition at 2-4 queries a leaf: 64-bit 2^26 keys with 2^23 and 2^24 queries, 32-bit
 * 2^28 keys with 2^25; then 2.5 and 3 a leaf at both widths), whose "with table" runs take the fine
 * start table as the library's sort path does (gpu_query.cu run_window), and no small batches.
 * Session 16 (from session 12's): with the start table (ntg.h), which B and G for
 * the sorted path, each with the table and without it (the view's start cleared); and which G for
 * batches of 2^10-2^18 queries in query order (the library's call with memory DEVICE and each G).
 * Session 12's text follows.
 * Session 12: sorted-order results of sparse windows (the library's PSA sort path:
 * psa_sort.cu's CUB sort of (query, position) on the top B bits of the keys' span, then the
 * descent kernel with positions, ntg_launch_lookup) — which B and which G? The library picks
 * B = 8 (64-bit) / 16 (32-bit) and G = 4 / 2 (psa_policy.h, ntg_policy.h). Here every B in
 * {8, 12, 16} and G in {1, 2, 4, 8} with the library's own kernel and 64-bit positions, against
 * the library's default call and the baseline of bench_versus (the same 16-bit sort + a binary
 * search of a sorted array, sorted results), in one process on the same data.
 * Keys: 64-bit util_mix64(i + 1) (sorted, unique), 32-bit 16 i + (mix & 15) (uniform over the
 * 32 bits); queries: random keys (all hits). CUDA events on the legacy stream, median of 15 after
 * 3 warm-ups; every result checked (values, found flags, positions a permutation). */
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
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

/* `ncu` mode (argv[1] = "ncu"): each pipeline runs once (no warm-up, no median) and only the
 * library's call, the library's B and G by hand and the 16-bit baseline, so that ncu's kernel list
 * splits into pipelines at each lookup_kernel / bsearch_kernel. */
static bool g_ncu = false;
/* `small` mode (argv[1] = "small"): the small batches only (no sort sweep). */
static bool g_small = false;
static bool g_dense = false; /* `dense` / `dense2` (above) */
/* `part` mode (session 19): PSA's partition (psa_partition, unordered: the passes write the 64-bit
 * positions) at B bits, then the plain descent from the fine table over the partitioned keys in
 * slot order (no positions read or written by the descent), against the library's call, its sort
 * path by hand at the policy's B and G, and the 16-bit baseline. `part-small`: the same at 2^20 and
 * 2^21 queries, where the library's call switches from the descent in query order. */
static bool g_part = false;
/* `part-q` mode (session 19): results in query order — the library's harmonia_lookup against the
 * ordered partition at 8 bits (one pass) or the library's plan, the descent into slot-order buffers
 * and psa_restore back to query order. */
static bool g_part_q = false;

static float median_ms(const std::function<void()> &f)
{
    if (g_ncu) {
        f();
        cudaDeviceSynchronize();
        return 1.0f;
    }
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

template <typename K> static int run_case(unsigned keys_log2, unsigned q_log2, double per_leaf = 0)
{
    const unsigned bits = sizeof(K) * 8;
    const uint64_t n = 1ull << keys_log2;
    /* per_leaf > 0: that many queries a full leaf (16 keys) instead of 2^q_log2 */
    const uint64_t nq = per_leaf > 0 ? (uint64_t)(per_leaf * (double)(n / 16)) : 1ull << q_log2;
    std::vector<K> keys(n), values(n), q(nq);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = bits == 64 ? (K)util_mix64(i + 1) : (K)(16 * i + (util_mix64(i) & 15));
    if (!std::is_sorted(keys.begin(), keys.end()))
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
    printf("%u-bit 2^%u keys (%llu), %llu queries (%.2f a leaf), span %d bits, fanout %u\n", bits, keys_log2,
           (unsigned long long)nk, (unsigned long long)nq, (double)nq / view->n_leaves, span_bits, view->fanout);
    int ok = 1;
    /* results in sorted order with positions: the sort's (u32) or the library's (u64) */
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
            if (i % 8 == 0) { /* the values of one result in 8 (the permutation of all) */
                const uint64_t r = std::lower_bound(keys.begin(), keys.end(), q[pos]) - keys.begin();
                bad += !f[i] || (uint64_t)v[i] != r + 1;
            }
        }
        printf("  %-62s %8.3f ms  %6.2f G/s  %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
        ok &= bad == 0;
        CK(cudaMemset(d_v, 0, nq * sizeof(K)));
        CK(cudaMemset(d_f, 0, nq));
        CK(cudaMemset(d_p64, 0xFF, nq * 8));
    };
    float ms = 0;
    if (!g_small && !g_part_q) {
    ms = median_ms([&] { harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, d_p64); });
    check("library: harmonia_lookup_unordered, NULL config", ms, true);
    ntg_view bare = *view;
    bare.start = NULL;
    ntg_view fine_view = *view; /* dense modes: the fine table, as the library's sort path descends */
    if (t->gpu->start_fine) {
        fine_view.start = t->gpu->start_fine;
        fine_view.start_plan = t->gpu->start_fine_plan;
    }
    printf("  fine start table: %s, %u bits\n", t->gpu->start_fine ? "yes" : "no",
           t->gpu->start_fine ? t->gpu->start_fine_plan.bits : 0);
    printf("  start table: %s, %u bits\n", view->start ? "yes" : "no", view->start ? view->start_plan.bits : 0);
    for (int b : {8, 12, 16}) {
        if ((g_ncu || g_part) && b != (bits == 64 ? 8 : 16))
            continue;
        const int end = span_bits, begin = end > b ? end - b : 0;
        for (uint32_t g : {1u, 2u, 4u, 8u}) {
            if ((g_ncu || g_part) && g != (bits == 64 ? 4u : 2u))
                continue;
            for (int table = 1; table >= 0; table--) {
                if (g_dense && !table)
                    continue;
                const ntg_view *vw = !table ? &bare : g_dense ? &fine_view : view;
                ms = median_ms([&] {
                    size_t tb = temp_bytes;
                    iota_kernel<<<1024, 256>>>(d_pos, nq);
                    cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int64_t)nq, begin, end);
                    ntg_launch_lookup(vw, &t->gpu->cut, g, d_sq, d_spos, nq, d_v, d_f, d_p64, 0, 0);
                });
                char name[128];
                snprintf(name, sizeof name, "sort [%d,%d) + descent G=%u %s table, u64 positions", begin, end, g,
                         table ? "with" : "without");
                check(name, ms, true);
            }
        }
    }
    for (int b : {8, 12, 16}) {
        if ((g_ncu || g_part) && b != 16)
            continue;
        const int end = span_bits, begin = end > b ? end - b : 0;
        ms = median_ms([&] {
            size_t tb = temp_bytes;
            iota_kernel<<<1024, 256>>>(d_pos, nq);
            cub::DeviceRadixSort::SortPairs(d_temp, tb, d_q, d_sq, d_pos, d_spos, (int64_t)nq, begin, end);
            bsearch_kernel<K><<<(unsigned)((nq + 255) / 256), 256>>>(d_keys, d_values, nk, d_sq, nq, d_v, d_f);
        });
        char name[128];
        snprintf(name, sizeof name, "sort [%d,%d) + binary search (the baseline), u32 positions", begin, end);
        check(name, ms, false);
    }
    if (g_part) { /* the partition at B bits, then the descent over its slots */
        const psa_plan lib = t->gpu->plan;
        for (uint32_t b : {8u, 9u, 12u, 16u}) {
            const psa_plan plan = psa_make_plan(lib.key_min, lib.key_max, view->n_leaves,
                                                view->leaf_size * (bits / 8), b);
            size_t wb = 0;
            CK(psa_workspace_bytes(bits, (uint32_t)nq, &plan, &wb));
            void *d_ws = nullptr;
            CK(cudaMalloc(&d_ws, wb));
            for (uint32_t g : {1u, 2u, 4u}) {
                cudaError_t pe = cudaSuccess;
                ms = median_ms([&] {
                    psa_partitioned part;
                    cudaError_t e = psa_partition(bits, &plan, d_q, (uint32_t)nq, d_p64, 0, d_ws, wb, &part, 0);
                    if (e == cudaSuccess)
                        e = ntg_launch_lookup(&fine_view, &t->gpu->cut, g, part.keys, NULL, nq, d_v, d_f, NULL, 0, 0);
                    if (e != cudaSuccess)
                        pe = e;
                });
                CK(pe);
                char name[128];
                snprintf(name, sizeof name, "partition %u bits (%u+%u) + descent G=%u, u64 positions", plan.bits,
                         plan.bits1, plan.bits2, g);
                check(name, ms, true);
            }
            CK(cudaFree(d_ws));
        }
        printf("  library's plan: %u bits (%u+%u)\n", lib.bits, lib.bits1, lib.bits2);
    }
    } /* !g_small && !g_part_q */
    if (g_part_q) {
        ntg_view fine_view = *view;
        if (t->gpu->start_fine) {
            fine_view.start = t->gpu->start_fine;
            fine_view.start_plan = t->gpu->start_fine_plan;
        }
    if (g_part_q) { /* query order: partition (ordered), descent into the slots, restore */
        auto check_q = [&](const char *name, float ms) {
            std::vector<K> v(nq);
            std::vector<uint8_t> f(nq);
            CK(cudaMemcpy(v.data(), d_v, nq * sizeof(K), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            uint64_t bad = 0;
            for (uint64_t i = 0; i < nq; i += 7) {
                const uint64_t r = std::lower_bound(keys.begin(), keys.end(), q[i]) - keys.begin();
                bad += !f[i] || (uint64_t)v[i] != r + 1;
            }
            printf("  %-62s %8.3f ms  %6.2f G/s  %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
            ok &= bad == 0;
            CK(cudaMemset(d_v, 0, nq * sizeof(K)));
            CK(cudaMemset(d_f, 0, nq));
        };
        ms = median_ms([&] { harmonia_lookup(t, NULL, d_q, nq, d_v, d_f); });
        check_q("library: harmonia_lookup (query order), NULL config", ms);
        K *d_sv;
        uint8_t *d_sf;
        CK(cudaMalloc(&d_sv, nq * sizeof(K)));
        CK(cudaMalloc(&d_sf, nq));
        const psa_plan lib = t->gpu->plan;
        const psa_outside_answer below = {lib.key_min, t->gpu->min_value, false};
        for (uint32_t b : {8u, 0u}) {
            const psa_plan plan = psa_make_plan(lib.key_min, lib.key_max, view->n_leaves,
                                                view->leaf_size * (bits / 8), b);
            size_t wb = 0;
            CK(psa_workspace_bytes(bits, (uint32_t)nq, &plan, &wb));
            void *d_ws = nullptr;
            CK(cudaMalloc(&d_ws, wb));
            for (uint32_t g : {2u, 4u}) {
                cudaError_t pe = cudaSuccess;
                ms = median_ms([&] {
                    psa_partitioned part;
                    cudaError_t e = psa_partition(bits, &plan, d_q, (uint32_t)nq, NULL, 0, d_ws, wb, &part, 0);
                    if (e == cudaSuccess)
                        e = ntg_launch_lookup(&fine_view, &t->gpu->cut, g, part.keys, NULL, nq, d_sv, d_sf, NULL, 0, 0);
                    if (e == cudaSuccess)
                        e = psa_restore(bits, &part, d_sv, NULL, d_sf, d_v, NULL, d_f, &below, 0);
                    if (e != cudaSuccess)
                        pe = e;
                });
                CK(pe);
                char name[128];
                snprintf(name, sizeof name, "partition %u bits (%u+%u) + descent G=%u + restore", plan.bits, plan.bits1,
                         plan.bits2, g);
                check_q(name, ms);
            }
            CK(cudaFree(d_ws));
        }
        CK(cudaFree(d_sv));
        CK(cudaFree(d_sf));
    }
    }
    /* query order, the library's call (memory DEVICE) at each G, and the NULL config: small batches */
    for (unsigned lb : {10u, 14u, 18u}) {
        const uint64_t m = 1ull << lb;
        if (m > nq || g_dense)
            continue;
        auto small = [&](const harmonia_query_config *c) {
            std::vector<float> t_us;
            for (int r = 0; r < 101; r++) {
                cudaEvent_t a, b;
                cudaEventCreate(&a);
                cudaEventCreate(&b);
                cudaEventRecord(a, 0);
                if (harmonia_lookup(t, c, d_q, m, d_v, d_f) != HARMONIA_OK)
                    printf("lookup failed: %s\n", harmonia_last_error(t));
                cudaEventRecord(b, 0);
                cudaEventSynchronize(b);
                float x = 0;
                cudaEventElapsedTime(&x, a, b);
                if (r >= 5)
                    t_us.push_back(x * 1000);
                cudaEventDestroy(a);
                cudaEventDestroy(b);
            }
            std::sort(t_us.begin(), t_us.end());
            return t_us[t_us.size() / 2];
        };
        printf("  2^%u queries, query order: NULL config %.2f us", lb, small(NULL));
        for (uint32_t g : {2u, 4u, 8u, 16u, 32u}) {
            if (g > view->fanout)
                continue;
            harmonia_query_config c;
            harmonia_query_config_init(&c);
            c.backend = HARMONIA_BACKEND_GPU;
            c.memory = HARMONIA_MEMORY_DEVICE;
            c.group_size = g;
            printf(" | G=%u %.2f", g, small(&c));
        }
        printf(" us (median of 96)\n");
    }
    CK(cudaGetLastError());
    cudaFree(d_keys); cudaFree(d_values); cudaFree(d_q); cudaFree(d_sq); cudaFree(d_v);
    cudaFree(d_pos); cudaFree(d_spos); cudaFree(d_f); cudaFree(d_p64); cudaFree(d_temp);
    harmonia_free(t);
    return ok ? 0 : 1;
}

__global__ void gather_kernel(const uint64_t *__restrict__ a, uint64_t mask, uint64_t n, uint64_t *__restrict__ out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = __ldg(a + (util_mix64(i + 12345) & mask));
}

/* The machine's rates in this process: a device-to-device copy of 2 GiB (bytes read + written a
 * second) and a random gather of 8-byte words from 2 GiB (one 32-byte sector each: words and
 * sectors a second), median of 15 after 3 warm-ups. */
static void rates()
{
    const uint64_t bytes = 2ull << 30, words = bytes / 8, n = 1ull << 27;
    uint64_t *a, *b, *out;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&out, n * 8));
    CK(cudaMemset(a, 1, bytes));
    float ms = median_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0); });
    printf("copy 2 GiB device to device: %.3f ms = %.0f GB/s read + written\n", ms, 2.0 * bytes / (ms * 1e6));
    ms = median_ms([&] { gather_kernel<<<4096, 256>>>(a, words - 1, n, out); });
    printf("random gather of 2^27 8-byte words from 2 GiB: %.3f ms = %.2f G words/s (= G sectors/s read)\n", ms,
           n / (ms * 1e6));
    CK(cudaGetLastError());
    cudaFree(a);
    cudaFree(b);
    cudaFree(out);
}

/* What the host-side size queries cost (µs a call, median of 5 rounds of 2000 calls). */
static void costs()
{
    auto per_call = [](const std::function<void()> &f) {
        std::vector<double> us;
        for (int r = 0; r < 5; r++) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < 2000; i++)
                f();
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 2000);
        }
        std::sort(us.begin(), us.end());
        return us[2];
    };
    size_t b = 0;
    int d = 0;
    printf("host cost a call: cudaGetDevice %.3f us\n", per_call([&] { cudaGetDevice(&d); }));
    printf("host cost a call: cub DeviceScan::ExclusiveSum size query (2^16 + 1 items) %.3f us\n", per_call([&] {
        cub::DeviceScan::ExclusiveSum(NULL, b, (const uint32_t *)NULL, (uint32_t *)NULL, (1 << 16) + 1);
    }));
    printf("host cost a call: cub DeviceRadixSort::SortPairs size query (u64, 2^22, 8 bits) %.3f us\n", per_call([&] {
        cub::DeviceRadixSort::SortPairs(NULL, b, (const uint64_t *)NULL, (uint64_t *)NULL, (const uint32_t *)NULL,
                                        (uint32_t *)NULL, (int64_t)1 << 22, 56, 64);
    }));
    printf("host cost a call: psa_workspace_bytes (u64, 2^27) %.3f us\n",
           per_call([&] { psa_workspace_bytes(64, 1u << 27, NULL, &b); }));
    /* (psa_sort_workspace_bytes went with psa_sort.cu in session 19) */
    printf("host cost a call: psa_scratch_bytes (u64, 2^27) %.3f us\n",
           per_call([&] { psa_scratch_bytes(64, 1u << 27, &b); }));
}

int main(int argc, char **argv)
{
    int rc = 0;
    g_ncu = argc > 1 && !strcmp(argv[1], "ncu");
    if (g_ncu) {
        rc |= run_case<uint64_t>(26, 22);
        rc |= run_case<uint32_t>(28, 24);
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    g_dense = argc > 1 && !strcmp(argv[1], "dense");
    if (g_dense) {
        rc |= run_case<uint64_t>(26, 24);
        rc |= run_case<uint64_t>(26, 23);
        rc |= run_case<uint32_t>(28, 25);
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "part-q")) {
        g_part_q = g_dense = true;
        rc |= run_case<uint64_t>(26, 21);
        rc |= run_case<uint64_t>(26, 22);
        rc |= run_case<uint64_t>(26, 23);
        rc |= run_case<uint64_t>(26, 24);
        rc |= run_case<uint32_t>(28, 22);
        rc |= run_case<uint32_t>(28, 23);
        rc |= run_case<uint32_t>(28, 24);
        rc |= run_case<uint32_t>(28, 25);
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "part-small")) { /* where the descent path starts: 2^20, 2^21 */
        g_part = g_dense = true;
        rc |= run_case<uint64_t>(26, 20);
        rc |= run_case<uint64_t>(26, 21);
        rc |= run_case<uint32_t>(28, 20);
        rc |= run_case<uint32_t>(28, 21);
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    g_part = argc > 1 && !strcmp(argv[1], "part");
    if (g_part) {
        g_dense = true; /* the fine table, no small batches */
        rc |= run_case<uint64_t>(26, 22);
        rc |= run_case<uint64_t>(26, 23);
        rc |= run_case<uint64_t>(26, 24);
        rc |= run_case<uint32_t>(28, 22);
        rc |= run_case<uint32_t>(28, 24);
        rc |= run_case<uint32_t>(28, 25);
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "dense2")) { /* between 2 and 4 a leaf */
        g_dense = true;
        for (double per : {2.5, 3.0}) {
            rc |= run_case<uint64_t>(26, 0, per);
            rc |= run_case<uint32_t>(28, 0, per);
        }
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    g_small = argc > 1 && !strcmp(argv[1], "small");
    if (g_small) {
        for (int round = 0; round < 2; round++) {
            rc |= run_case<uint64_t>(26, 22);
            rc |= run_case<uint32_t>(28, 22);
        }
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "rates")) {
        rates();
        return 0;
    }
    if (argc > 1) { /* costs only */
        costs();
        printf("OK\n");
        return 0;
    }
    rc |= run_case<uint64_t>(26, 22);
    rc |= run_case<uint32_t>(28, 24);
    rc |= run_case<uint32_t>(28, 22);
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
