/* probe_tree.h — session 23's probes (bounds-probe, classify-probe): bench_versus's tree of
 * 2^keys_log2 uniform keys of `bits` bits (its seed), built on the host from the sorted pairs and
 * uploaded, with the sorted keys and values kept on both sides (the queries are drawn from the
 * device keys, the results checked against the host ones). CKE: exit on a CUDA error. */
#ifndef SESSION23_PROBE_TREE_H
#define SESSION23_PROBE_TREE_H
#include <cstdio>
#include <cstdlib>
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

struct probe_tree {
    harmonia_tree *t = NULL;
    void *d_keys = NULL, *d_values = NULL;
    std::vector<char> h_keys, h_values;
    uint64_t n = 0;
};

/* Builds it, or exits with a message. */
static inline void probe_tree_make(probe_tree *p, uint32_t bits, uint32_t keys_log2)
{
    const uint64_t n = 1ull << keys_log2, kb = bits / 8;
    const uint64_t seed = 0x5eed0000ull + keys_log2 * 131 + bits + (uint64_t)KEYS_UNIFORM * 7919;
    p->n = n;
    CKE(cudaMalloc(&p->d_keys, n * kb));
    CKE(cudaMalloc(&p->d_values, n * kb));
    if (!gen_sorted_device(bits, KEYS_UNIFORM, n, seed, p->d_keys, p->d_values))
        exit(1);
    p->h_keys.resize(n * kb);
    p->h_values.resize(n * kb);
    CKE(cudaMemcpy(p->h_keys.data(), p->d_keys, n * kb, cudaMemcpyDeviceToHost));
    CKE(cudaMemcpy(p->h_values.data(), p->d_values, n * kb, cudaMemcpyDeviceToHost));
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.input_sorted = true;
    if (harmonia_build(&bc, p->h_keys.data(), p->h_values.data(), n, &p->t) != HARMONIA_OK ||
        harmonia_device_upload(p->t) != HARMONIA_OK) {
        printf("build: %s\n", harmonia_last_error(p->t));
        exit(1);
    }
}

static inline void probe_tree_free(probe_tree *p)
{
    harmonia_free(p->t);
    cudaFree(p->d_keys);
    cudaFree(p->d_values);
    *p = probe_tree();
}
#endif
