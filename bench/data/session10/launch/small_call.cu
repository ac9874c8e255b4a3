/* small_call.cu — session 10: where a 2^10-query lookup's time goes. On a 64-bit 2^26-key tree
 * (keys util_mix64(i + 1)), 2^10 queries in device memory, host clock over 21 rounds of 400 calls,
 * median round, µs a call: harmonia_lookup with a NULL config; with an explicit config (GPU, device
 * memory: no classification); ntg_launch_lookup on the tree's view with the library's G and a
 * stream synchronisation (the kernel and its launch alone, the values-with-leaf kernel when the
 * library takes it); a trivial kernel of the same grid with a synchronisation (the floor). */
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <stdio.h>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "ntg/ntg_policy.h"
#include "util/mix.h"

__global__ void trivial(const uint64_t *q, uint64_t n, uint64_t *out, uint8_t *f)
{
    const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = q[i];
        f[i] = 1;
    }
}

template <typename F> double median_us(F &&call)
{
    std::vector<double> rounds;
    for (int r = 0; r < 21; r++) {
        const int calls = 400;
        auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; c++)
            call();
        auto t1 = std::chrono::steady_clock::now();
        rounds.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
}

int main(int argc, char **argv)
{
    const uint32_t keys_log2 = argc > 1 ? atoi(argv[1]) : 26;
    const uint64_t n_keys = 1ull << keys_log2, n = 1024;
    std::vector<uint64_t> keys(n_keys), values(n_keys);
    for (uint64_t i = 0; i < n_keys; i++) {
        keys[i] = util_mix64(i + 1);
        values[i] = i + 1;
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = 64;
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, keys.data(), values.data(), n_keys, &tree) != HARMONIA_OK || harmonia_device_upload(tree) != HARMONIA_OK) {
        fprintf(stderr, "build: %s\n", harmonia_last_error(tree));
        return 1;
    }
    std::vector<uint64_t> q(n);
    for (uint64_t i = 0; i < n; i++)
        q[i] = keys[util_mix64(777 + i) % n_keys];
    uint64_t *d_q, *d_v;
    uint8_t *d_f;
    cudaMalloc(&d_q, n * 8);
    cudaMalloc(&d_v, n * 8);
    cudaMalloc(&d_f, n);
    cudaMemcpy(d_q, q.data(), n * 8, cudaMemcpyHostToDevice);
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.memory = HARMONIA_MEMORY_DEVICE;
    if (harmonia_lookup(tree, NULL, d_q, n, d_v, d_f) != HARMONIA_OK)
        return 1;
    const ntg_view *v = &tree->gpu->view;
    const uint32_t g = ntg_default_group_size(v->fanout, 64, n, 1, 0);
    printf("# 64-bit 2^%u keys, 2^10 queries, G = %u, height %u, top entries %u\n", keys_log2, g, v->height, v->top_entries);
    for (int rep = 0; rep < 3; rep++) {
        const double a = median_us([&] { harmonia_lookup(tree, NULL, d_q, n, d_v, d_f); });
        const double b = median_us([&] { harmonia_lookup(tree, &qc, d_q, n, d_v, d_f); });
        const double c = median_us([&] {
            ntg_launch_lookup(v, g, d_q, NULL, n, d_v, d_f, NULL, 0, 0);
            cudaStreamSynchronize(0);
        });
        const double d = median_us([&] {
            trivial<<<(unsigned)((n * g + 255) / 256), 256>>>(d_q, n, d_v, d_f);
            cudaStreamSynchronize(0);
        });
        printf("NULL config %.2f us | explicit %.2f | ntg_launch_lookup + sync %.2f | trivial kernel + sync %.2f\n", a, b, c, d);
    }
    harmonia_free(tree);
    return 0;
}
