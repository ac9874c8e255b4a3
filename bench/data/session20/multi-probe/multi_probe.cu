/* multi_probe.cu — session 20: Q queries a group in flight (ntg_launch_lookup_q, lookup_multi_kernel)
 * against one (Q = 1, today's kernel), G in {2, 4, 8}, in the three places the descent serves large
 * batches of point lookups: (a) the plain descent in query order (the library's path for 2^16 ..
 * 2^22 queries of 64-bit keys below PSA, from the coarse start table, as run_window); (b) PSA's
 * descent path for sorted results (the one-pass partition on psa_descent_plan, which writes the
 * 64-bit positions, then the descent over the slots from the fine table); (c) the same in query
 * order (ordered partition, descent into slot buffers, psa_restore). The library's default calls
 * beside them. Keys as sort_sweep's: 64-bit util_mix64(i + 1) (sorted, unique), 32-bit
 * 16 i + (mix & 15); queries: random tree keys (all hits). CUDA events on the legacy stream, median
 * of 15 after 3 warm-ups; every result checked (query order: one in max(7, n / 2^16) against
 * std::lower_bound; sorted: the positions a permutation, values as often). Each tree built once,
 * its batches measured in argv[1] rounds (default 2).
 * Since the read-through after call 6 the library compiles the multi-query kernel for 64-bit keys
 * at Q = 2 only (ntg_kernels.cu, launch_lookup_multi): the Q = 4 rows and the 32-bit Q = 2 rows of
 * calls 1-2 were measured with 3694627's library; built against a later one they run as Q = 1. */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "util/mix.h"
extern "C" {
#include "ntg/ntg_policy.h"
}

/* G and Q lists (session 20 call 2 narrows them to G 2, 4) */
static std::vector<uint32_t> g_list = {2, 4, 8}, q_list = {1, 2, 4};

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e_ = (x);                                                                               \
        if (e_ != cudaSuccess) {                                                                            \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                 \
            exit(1);                                                                                        \
        }                                                                                                   \
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
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

/* `dense` mode (call 5): windows of per_leaf queries a leaf (2.5 .. 4, where the library's staged
 * search takes 64-bit windows), G = 4, Q = 1 and 2, without the descent in query order */
static std::vector<double> g_per_leaf;

template <typename K> static int run_case(unsigned keys_log2, const std::vector<unsigned> &q_log2s, bool sorted_too,
                                          int rounds)
{
    const unsigned bits = sizeof(K) * 8;
    const uint64_t n = 1ull << keys_log2;
    std::vector<K> keys(n), values(n);
    for (uint64_t i = 0; i < n; i++)
        keys[i] = bits == 64 ? (K)util_mix64(i + 1) : (K)(16 * i + (util_mix64(i) & 15));
    if (!std::is_sorted(keys.begin(), keys.end()))
        std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const uint64_t nk = keys.size();
    for (uint64_t i = 0; i < nk; i++)
        values[i] = (K)(i + 1);
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
    const psa_plan plan = psa_descent_plan(&t->gpu->plan, view->n_leaves, view->leaf_size * (bits / 8));
    int ok = 1;
    const size_t n_sizes = g_per_leaf.empty() ? q_log2s.size() : g_per_leaf.size();
    for (int round = 0; round < rounds; round++)
    for (size_t si = 0; si < n_sizes; si++) {
        const unsigned ql = g_per_leaf.empty() ? q_log2s[si] : 0;
        const uint64_t nq = g_per_leaf.empty() ? 1ull << ql : (uint64_t)(g_per_leaf[si] * (double)view->n_leaves);
        std::vector<K> q(nq);
        for (uint64_t i = 0; i < nq; i++)
            q[i] = keys[util_mix64(777 + i + ql) % nk];
        K *d_q, *d_v, *d_sv;
        uint8_t *d_f, *d_sf;
        uint64_t *d_p;
        CK(cudaMalloc(&d_q, nq * sizeof(K)));
        CK(cudaMalloc(&d_v, nq * sizeof(K)));
        CK(cudaMalloc(&d_sv, nq * sizeof(K)));
        CK(cudaMalloc(&d_f, nq));
        CK(cudaMalloc(&d_sf, nq));
        CK(cudaMalloc(&d_p, nq * 8));
        CK(cudaMemcpy(d_q, q.data(), nq * sizeof(K), cudaMemcpyHostToDevice));
        size_t wb = 0;
        CK(psa_workspace_bytes(bits, (uint32_t)nq, &plan, &wb));
        void *d_ws = nullptr;
        CK(cudaMalloc(&d_ws, wb));
        printf("round %d: %u-bit 2^%u keys, %llu queries (%.3f a leaf)\n", round + 1, bits, keys_log2,
               (unsigned long long)nq, (double)nq / view->n_leaves);
        const uint64_t stride = nq >> 16 > 7 ? nq >> 16 : 7; /* about 2^16 results checked by value */
        auto reset = [&] {
            CK(cudaMemset(d_v, 0, nq * sizeof(K)));
            CK(cudaMemset(d_f, 0, nq));
            CK(cudaMemset(d_p, 0xFF, nq * 8));
        };
        auto check_q = [&](const char *name, float ms) {
            std::vector<K> v(nq);
            std::vector<uint8_t> f(nq);
            CK(cudaMemcpy(v.data(), d_v, nq * sizeof(K), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            uint64_t bad = 0;
            for (uint64_t i = 0; i < nq; i += stride) {
                const uint64_t r = std::lower_bound(keys.begin(), keys.end(), q[i]) - keys.begin();
                bad += !f[i] || (uint64_t)v[i] != r + 1;
            }
            printf("  %-52s %8.4f ms %7.2f G/s %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
            ok &= bad == 0;
            reset();
        };
        auto check_s = [&](const char *name, float ms) {
            std::vector<K> v(nq);
            std::vector<uint8_t> f(nq);
            std::vector<uint64_t> p(nq);
            CK(cudaMemcpy(v.data(), d_v, nq * sizeof(K), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(p.data(), d_p, nq * 8, cudaMemcpyDeviceToHost));
            std::vector<uint8_t> seen(nq, 0);
            uint64_t bad = 0;
            for (uint64_t i = 0; i < nq; i++) {
                if (p[i] >= nq || seen[p[i]]) {
                    bad++;
                    continue;
                }
                seen[p[i]] = 1;
                if (i % stride == 0) {
                    const uint64_t r = std::lower_bound(keys.begin(), keys.end(), q[p[i]]) - keys.begin();
                    bad += !f[i] || (uint64_t)v[i] != r + 1;
                }
            }
            printf("  %-52s %8.4f ms %7.2f G/s %s\n", name, ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
            ok &= bad == 0;
            reset();
        };
        char name[128];
        reset();
        check_q("library harmonia_lookup (NULL config)", median_ms([&] { harmonia_lookup(t, NULL, d_q, nq, d_v, d_f); }));
        if (sorted_too)
            check_s("library harmonia_lookup_unordered (NULL config)",
                    median_ms([&] { harmonia_lookup_unordered(t, NULL, d_q, nq, d_v, d_f, d_p); }));
        /* the start tables exist once the library's first call has built them (prepare_start): the
         * views are taken after it (call 1 of session 20 took them before, and descended from the
         * root in (b) and (c)) */
        ntg_view fine_view = *view;
        if (t->gpu->start_fine) {
            fine_view.start = t->gpu->start_fine;
            fine_view.start_plan = t->gpu->start_fine_plan;
        }
        if (round == 0)
            printf("  start tables: coarse %s (%u bits), fine %s (%u bits)\n", view->start ? "yes" : "no",
                   view->start ? view->start_plan.bits : 0, t->gpu->start_fine ? "yes" : "no",
                   t->gpu->start_fine ? t->gpu->start_fine_plan.bits : 0);
        const ntg_view *qv = nq < NTG_START_FINE_BATCH ? &fine_view : view;
        if (g_per_leaf.empty())
        for (uint32_t g : g_list)
            for (uint32_t qq : q_list) {
                cudaError_t pe = cudaSuccess;
                const float ms = median_ms([&] {
                    cudaError_t e = ntg_launch_lookup_q(qv, &t->gpu->cut, g, qq, d_q, NULL, nq, d_v, d_f, NULL, 0, 0);
                    if (e != cudaSuccess)
                        pe = e;
                });
                CK(pe);
                snprintf(name, sizeof name, "(a) descent, query order, G=%u Q=%u", g, qq);
                check_q(name, ms);
            }
        if (sorted_too)
            for (uint32_t g : g_list)
                for (uint32_t qq : q_list) {
                    cudaError_t pe = cudaSuccess;
                    const float ms = median_ms([&] {
                        psa_partitioned part;
                        cudaError_t e = psa_partition(bits, &plan, d_q, (uint32_t)nq, d_p, 0, d_ws, wb, &part, 0);
                        if (e == cudaSuccess)
                            e = ntg_launch_lookup_q(&fine_view, &t->gpu->cut, g, qq, part.keys, NULL, nq, d_v, d_f,
                                                    NULL, 0, 0);
                        if (e != cudaSuccess)
                            pe = e;
                    });
                    CK(pe);
                    snprintf(name, sizeof name, "(b) partition %u bits + descent, sorted, G=%u Q=%u", plan.bits, g, qq);
                    check_s(name, ms);
                }
        const psa_outside_answer below = {t->gpu->plan.key_min, t->gpu->min_value, false};
        for (uint32_t g : g_list)
            for (uint32_t qq : q_list) {
                cudaError_t pe = cudaSuccess;
                const float ms = median_ms([&] {
                    psa_partitioned part;
                    cudaError_t e = psa_partition(bits, &plan, d_q, (uint32_t)nq, NULL, 0, d_ws, wb, &part, 0);
                    if (e == cudaSuccess)
                        e = ntg_launch_lookup_q(&fine_view, &t->gpu->cut, g, qq, part.keys, NULL, nq, d_sv, d_sf, NULL,
                                                0, 0);
                    if (e == cudaSuccess)
                        e = psa_restore(bits, &part, d_sv, NULL, d_sf, d_v, NULL, d_f, &below, 0);
                    if (e != cudaSuccess)
                        pe = e;
                });
                CK(pe);
                snprintf(name, sizeof name, "(c) partition + descent + restore, G=%u Q=%u", g, qq);
                check_q(name, ms);
            }
        cudaFree(d_q); cudaFree(d_v); cudaFree(d_sv); cudaFree(d_f); cudaFree(d_sf); cudaFree(d_p); cudaFree(d_ws);
        fflush(stdout);
    }
    harmonia_free(t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 2;
    const bool narrow = argc > 2 && !strcmp(argv[2], "narrow"); /* call 2: G 2, 4; the sparse sizes */
    int rc = 0;
    if (argc > 2 && !strcmp(argv[2], "dense")) {
        g_list = {4};
        q_list = {1, 2};
        g_per_leaf = {2.5, 3.0, 3.5, 4.0};
        rc |= run_case<uint64_t>(26, {}, true, rounds);
    } else if (argc > 2 && !strcmp(argv[2], "ordered32")) {
        /* session 21: the 32-bit descent path + restore in query order at one a leaf (2^24 queries),
         * and half and two a leaf beside it, against the library's call (G = 2, one query a group) */
        g_list = {2};
        q_list = {1};
        if (argc > 3) /* queries a leaf, comma-separated (session 21, call 4: 1.5, 2.5, 3) */
            for (const char *p = argv[3]; *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p))
                g_per_leaf.push_back(atof(p));
        rc |= run_case<uint32_t>(28, {23, 24, 25}, false, rounds);
    } else if (argc > 2 && !strcmp(argv[2], "ordered32small")) {
        /* session 21, call 7: a 32-bit tree of 2^26 keys (2^22 leaves), where windows of one and
         * two a leaf are below PSA_LARGE_WINDOW: the library's call (the descent path since
         * session 21; before it, the descent in query order at one a leaf, the staged search at
         * two), the descent in query order (a) and the path by hand (c) */
        g_list = {2};
        q_list = {1};
        rc |= run_case<uint32_t>(26, {22, 23}, false, rounds);
    } else if (narrow) {
        g_list = {2, 4};
        rc |= run_case<uint64_t>(26, {22, 23}, true, rounds);
        rc |= run_case<uint32_t>(28, {22, 23, 24}, true, rounds);
    } else {
        rc |= run_case<uint64_t>(26, {18, 20, 22, 23}, true, rounds);
        rc |= run_case<uint32_t>(28, {18, 20, 22, 23, 24}, true, rounds);
    }
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
