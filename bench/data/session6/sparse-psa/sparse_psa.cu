// sparse_psa.cu — sparse windows (fewer than 2 queries a leaf) with PSA auto / on / on with fewer bucket
// bits, in both orders (issue 11: sorted-order results of 2^22-2^24 queries over 2^26-2^28 keys).
// CUDA events around each call on the legacy stream, median of 15 after 3 warm-ups; results
// checked against the PSA-off call. Build: nvcc -O2 -arch=sm_90 -I<include> sparse_psa.cu -lharmonia
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>
#include "harmonia.h"

static float median_ms(harmonia_tree *t, const harmonia_query_config *c, bool unordered, const void *d_q, uint64_t n,
                       void *d_v, uint8_t *d_f, uint64_t *d_p, int *ok)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms;
    for (int r = 0; r < 18; r++) {
        cudaEventRecord(a, 0);
        harmonia_status st = unordered ? harmonia_lookup_unordered(t, c, d_q, n, d_v, d_f, d_p)
                                       : harmonia_lookup(t, c, d_q, n, d_v, d_f);
        cudaEventRecord(b, 0);
        cudaEventSynchronize(b);
        if (st != HARMONIA_OK) { *ok = 0; printf("call failed: %s\n", harmonia_last_error(t)); }
        float x = 0;
        cudaEventElapsedTime(&x, a, b);
        if (r >= 3) ms.push_back(x);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

int main()
{
    struct { unsigned bits, keys_log2, q_log2; } cases[] = {{32, 28, 24}, {32, 28, 22}, {64, 26, 24}, {64, 26, 22}, {32, 26, 24}, {64, 27, 24}};
    for (auto cs : cases) {
        const uint64_t n = 1ull << cs.keys_log2, nq = 1ull << cs.q_log2, kb = cs.bits / 8;
        std::vector<unsigned char> keys(n * kb), values(n * kb), q(nq * kb);
        uint64_t x = 88172645463325252ull;
        for (uint64_t i = 0; i < n; i++) { /* keys 3, 10, 17, ... (stride 7), values i */
            uint64_t k = i * 7 + 3, v = i;
            memcpy(&keys[i * kb], &k, kb);
            memcpy(&values[i * kb], &v, kb);
        }
        for (uint64_t i = 0; i < nq; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            memcpy(&q[i * kb], &keys[(x % n) * kb], kb);
        }
        harmonia_build_config bc;
        harmonia_build_config_init(&bc);
        bc.key_bits = cs.bits;
        harmonia_tree *t = nullptr;
        if (harmonia_build(&bc, keys.data(), values.data(), n, &t) != HARMONIA_OK || harmonia_device_upload(t) != HARMONIA_OK) {
            printf("build failed\n");
            return 1;
        }
        void *d_q, *d_v, *d_v2; uint8_t *d_f, *d_f2; uint64_t *d_p, *d_p2;
        cudaMalloc(&d_q, nq * kb); cudaMalloc(&d_v, nq * kb); cudaMalloc(&d_v2, nq * kb);
        cudaMalloc(&d_f, nq); cudaMalloc(&d_f2, nq); cudaMalloc(&d_p, nq * 8); cudaMalloc(&d_p2, nq * 8);
        cudaMemcpy(d_q, q.data(), nq * kb, cudaMemcpyHostToDevice);
        harmonia_query_config c;
        harmonia_query_config_init(&c);
        c.memory = HARMONIA_MEMORY_DEVICE;
        int ok = 1;
        printf("%u-bit 2^%u keys, 2^%u queries (%.2f a leaf at L = 16)\n", cs.bits, cs.keys_log2, cs.q_log2, (double)nq / (n / 16));
        for (int unordered = 0; unordered < 2; unordered++) {
            const int psas[] = {-1, 0, 1, 1, 1};
            const unsigned bits[] = {0, 0, 0, 16, 12};
            for (int k = 0; k < 5; k++) {
                c.psa = psas[k];
                c.psa_bits = bits[k];
                float ms = median_ms(t, &c, unordered, d_q, nq, d_v, d_f, d_p, &ok);
                /* check: every query a hit, value = key's index; query order against the key */
                std::vector<unsigned char> v(nq * kb), f(nq);
                std::vector<uint64_t> p(unordered ? nq : 0);
                cudaMemcpy(v.data(), d_v, nq * kb, cudaMemcpyDeviceToHost);
                cudaMemcpy(f.data(), d_f, nq, cudaMemcpyDeviceToHost);
                if (unordered) cudaMemcpy(p.data(), d_p, nq * 8, cudaMemcpyDeviceToHost);
                uint64_t bad = 0;
                for (uint64_t i = 0; i < nq; i++) {
                    uint64_t pos = unordered ? p[i] : i, key = 0, val = 0;
                    memcpy(&key, &q[pos * kb], kb);
                    memcpy(&val, &v[i * kb], kb);
                    bad += !f[i] || val != (key - 3) / 7;
                }
                printf("  %-9s psa %-4s bits %-2u  %8.3f ms  %6.2f G/s  %s\n", unordered ? "sorted" : "query",
                       psas[k] < 0 ? "auto" : psas[k] ? "on" : "off", bits[k], ms, nq / (ms * 1e6), bad ? "WRONG" : "verified");
                ok &= bad == 0;
            }
        }
        cudaFree(d_q); cudaFree(d_v); cudaFree(d_v2); cudaFree(d_f); cudaFree(d_f2); cudaFree(d_p); cudaFree(d_p2);
        harmonia_free(t);
        if (!ok) return 1;
    }
    return 0;
}
