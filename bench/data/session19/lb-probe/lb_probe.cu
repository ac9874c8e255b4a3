/* lb_probe.cu — session 19: lower bounds of sparse windows (harmonia_lower_bound, NULL config, device
 * arrays), the library built with PSA's descent path for lower bounds (PSA_DESCENT_LOWER_BOUND=1,
 * the default) or without it (=0: the descent in query order). One binary per build (build.sh
 * LB=0|1); the device call runs both, alternating. Keys as sort_sweep's: 64-bit util_mix64(i + 1)
 * (sorted, unique), 32-bit 16 i + (mix & 15); queries: tree keys, every other one plus 1 (a lower
 * bound that is the next key, or the same key where the +1 is a key), in random order. CUDA events
 * around each call, median of 15 after 3 warm-ups; one result in 7 checked against std::lower_bound. */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "util/mix.h"

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e_ = (x);                                                                               \
        if (e_ != cudaSuccess) {                                                                            \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);                 \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

template <typename K> static int run_case(unsigned keys_log2, const std::vector<unsigned> &q_log2s)
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
    int ok = 1;
    for (unsigned ql : q_log2s) {
        const uint64_t nq = 1ull << ql;
        std::vector<K> q(nq);
        for (uint64_t i = 0; i < nq; i++)
            q[i] = keys[util_mix64(777 + i) % nk] + (K)(i & 1);
        K *d_q, *d_k, *d_v;
        uint8_t *d_f;
        CK(cudaMalloc(&d_q, nq * sizeof(K)));
        CK(cudaMalloc(&d_k, nq * sizeof(K)));
        CK(cudaMalloc(&d_v, nq * sizeof(K)));
        CK(cudaMalloc(&d_f, nq));
        CK(cudaMemcpy(d_q, q.data(), nq * sizeof(K), cudaMemcpyHostToDevice));
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        std::vector<float> ms;
        harmonia_status st = HARMONIA_OK;
        for (int r = 0; r < 18; r++) {
            CK(cudaEventRecord(a, 0));
            if (st == HARMONIA_OK)
                st = harmonia_lower_bound(t, NULL, d_q, nq, d_k, d_v, d_f);
            CK(cudaEventRecord(b, 0));
            CK(cudaEventSynchronize(b));
            float x = 0;
            CK(cudaEventElapsedTime(&x, a, b));
            if (r >= 3)
                ms.push_back(x);
        }
        std::sort(ms.begin(), ms.end());
        std::vector<K> ko(nq), vo(nq);
        std::vector<uint8_t> fo(nq);
        CK(cudaMemcpy(ko.data(), d_k, nq * sizeof(K), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(vo.data(), d_v, nq * sizeof(K), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(fo.data(), d_f, nq, cudaMemcpyDeviceToHost));
        uint64_t bad = st != HARMONIA_OK;
        for (uint64_t i = 0; i < nq; i += 7) {
            const uint64_t r = std::lower_bound(keys.begin(), keys.end(), q[i]) - keys.begin();
            const bool f = r < nk;
            bad += fo[i] != f || (f && (ko[i] != keys[r] || (uint64_t)vo[i] != r + 1));
        }
        const float med = ms[ms.size() / 2];
        printf("%u-bit 2^%u keys, 2^%u queries (%.2f a leaf): harmonia_lower_bound %.3f ms %.2f G/s %s\n", bits,
               keys_log2, ql, (double)nq / t->kr.n_leaves, med, nq / (med * 1e6), bad ? "WRONG" : "verified");
        ok &= bad == 0;
        cudaFree(d_q); cudaFree(d_k); cudaFree(d_v); cudaFree(d_f);
        cudaEventDestroy(a); cudaEventDestroy(b);
    }
    harmonia_free(t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    /* session 21 (`dense32`): 32-bit windows of one and two queries a leaf, where lower bounds
     * keep the staged search (PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32 = 2) or take the
     * descent path (a build with 5) */
    if (argc > 1 && !strcmp(argv[1], "dense32")) {
        const int rc = run_case<uint32_t>(28, {24, 25});
        printf(rc ? "FAILED\n" : "OK\n");
        return rc;
    }
    int rc = run_case<uint32_t>(28, {21, 22, 23});
    rc |= run_case<uint64_t>(26, {22});
    printf(rc ? "FAILED\n" : "OK\n");
    return rc;
}
