/* bench_gpu.cu — the GPU point-lookup benchmark: a tree of random unique keys, uniform random
 * queries (never zero data) already in device memory, end to end on the device (sort, search,
 * order restored) for every G and PSA on/off, beside a plain binary search over a sorted array of
 * the same keys in the same run. CUDA events, one warm-up, median of several runs; every
 * configuration's results are compared with the CPU engine's, and the run fails on a mismatch. */
#include <algorithm>
#include <parallel/algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

extern "C" {
#include "harmonia.h"
}
#include "util/cuda_check.h"
#include "util/mix.h"

#define CHECK_CUDA(call) UTIL_CUDA_CHECK(call)

static uint64_t splitmix(uint64_t *s) { return util_splitmix64(s); }

template <typename K> static K mix_bijective(K x);
template <> uint64_t mix_bijective<uint64_t>(uint64_t z) { return util_mix64(z); }
template <> uint32_t mix_bijective<uint32_t>(uint32_t h) { return util_mix32(h); }

/* Plain binary search over the sorted keys, one thread per query, results in the queries' order. */
template <typename K>
__global__ void binary_search_kernel(const K *__restrict__ keys, const K *__restrict__ values, uint64_t n_keys,
                                     const K *__restrict__ queries, uint64_t n, K *__restrict__ out,
                                     uint8_t *__restrict__ found)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const K q = queries[i];
        uint64_t lo = 0, len = n_keys;
        while (len > 0) {
            uint64_t half = len / 2;
            if (__ldg(keys + lo + half) < q) {
                lo += half + 1;
                len -= half + 1;
            } else {
                len = half;
            }
        }
        const bool hit = lo < n_keys && __ldg(keys + lo) == q;
        out[i] = hit ? __ldg(values + lo) : (K)0;
        found[i] = hit;
    }
}

typedef struct options {
    uint32_t bits = 64;
    uint32_t keys_log2 = 23;
    uint32_t queries_log2 = 27;
    uint32_t fanout = 16, leaf = 16;
    uint32_t runs = 5;
    std::vector<uint64_t> windows{0};  /* PSA windows to try (0 = the library's default) */
    std::vector<uint32_t> psa_bits{0}; /* PSA bit counts to try (0 = Eq. 2) */
    std::vector<int> orders{0};        /* 0 = results in query order, 1 = unordered */
    uint32_t lanes = 0;
    int only_group = 0;
    int only_psa = -1;
    int32_t constant_levels = HARMONIA_CONSTANT_LEVELS_DEFAULT;
} options;

static std::vector<uint64_t> parse_list(const char *text)
{
    std::vector<uint64_t> list;
    for (const char *p = text; *p;) {
        char *end;
        list.push_back(strtoull(p, &end, 0));
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p)
            break;
    }
    return list;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <typename K> static int run(const options &o)
{
    const uint64_t n_keys = 1ull << o.keys_log2, n_q = 1ull << o.queries_log2;
    const K mask = (K)~(K)0;
    uint64_t rng = 0x5eed0000ull + o.keys_log2 * 131 + o.bits;
    /* unique random keys: a bijective mix of 0 .. n-1 (splitmix64's finalizer for 64 bits, murmur3's
     * for 32) is unique by construction and uniform-looking; then sorted */
    std::vector<K> keys(n_keys);
    const uint64_t salt = splitmix(&rng);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n_keys; i++)
        keys[i] = mix_bijective<K>((K)((uint64_t)i + salt));
    __gnu_parallel::sort(keys.begin(), keys.end());
    std::vector<K> values(n_keys);
    for (uint64_t i = 0; i < n_keys; i++)
        values[i] = (K)(splitmix(&rng) & mask) | 1;
    /* queries: uniform over the tree's keys (100 % hits), random order */
    std::vector<K> queries(n_q);
    for (auto &q : queries)
        q = keys[splitmix(&rng) % n_keys];

    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = o.bits;
    bc.fanout = o.fanout;
    bc.leaf_size = o.leaf;
    bc.input_sorted = true;
    harmonia_tree *tree = NULL;
    auto t0 = std::chrono::steady_clock::now();
    if (harmonia_build(&bc, keys.data(), values.data(), n_keys, &tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_gpu: build: %s\n", harmonia_last_error(NULL));
        return 1;
    }
    double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    harmonia_tree_info info;
    harmonia_info(tree, &info);

    /* the CPU engine's answers: the reference for every configuration */
    std::vector<K> ref_values(n_q);
    std::vector<uint8_t> ref_found(n_q);
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    t0 = std::chrono::steady_clock::now();
    if (harmonia_lookup(tree, &cpu, queries.data(), n_q, ref_values.data(), ref_found.data()) != HARMONIA_OK) {
        fprintf(stderr, "bench_gpu: CPU lookup: %s\n", harmonia_last_error(tree));
        return 1;
    }
    double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    K *d_queries, *d_values, *d_keys, *d_kv;
    uint8_t *d_found;
    uint64_t *d_positions = NULL;
    CHECK_CUDA(cudaMalloc(&d_queries, n_q * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_values, n_q * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_found, n_q));
    if (std::find(o.orders.begin(), o.orders.end(), 1) != o.orders.end())
        CHECK_CUDA(cudaMalloc(&d_positions, n_q * sizeof(uint64_t)));
    CHECK_CUDA(cudaMalloc(&d_keys, n_keys * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_kv, n_keys * sizeof(K)));
    CHECK_CUDA(cudaMemcpy(d_queries, queries.data(), n_q * sizeof(K), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_keys, keys.data(), n_keys * sizeof(K), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_kv, values.data(), n_keys * sizeof(K), cudaMemcpyHostToDevice));
    if (harmonia_set_constant_levels(tree, o.constant_levels) != HARMONIA_OK ||
        harmonia_device_upload(tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_gpu: upload: %s\n", harmonia_last_error(tree));
        return 1;
    }
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    std::vector<K> got_values(n_q);
    std::vector<uint8_t> got_found(n_q);
    std::vector<uint64_t> got_positions(d_positions ? n_q : 0);
    int failures = 0;

    /* verifies the device results against the CPU engine */
    auto verify = [&](const char *what) {
        CHECK_CUDA(cudaMemcpy(got_values.data(), d_values, n_q * sizeof(K), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(got_found.data(), d_found, n_q, cudaMemcpyDeviceToHost));
        if (d_positions)
            CHECK_CUDA(cudaMemcpy(got_positions.data(), d_positions, n_q * 8, cudaMemcpyDeviceToHost));
        uint64_t bad = 0;
        for (uint64_t i = 0; i < n_q; i++) {
            uint64_t src = d_positions && strstr(what, "unordered") ? got_positions[i] : i;
            if (src >= n_q || got_found[i] != ref_found[src] || got_values[i] != ref_values[src])
                bad++;
        }
        if (bad) {
            fprintf(stderr, "bench_gpu: %s: %" PRIu64 " results differ from the CPU engine\n", what, bad);
            failures++;
        }
        CHECK_CUDA(cudaMemset(d_values, 0xA5, n_q * sizeof(K))); /* poison for the next one */
        CHECK_CUDA(cudaMemset(d_found, 0xA5, n_q));
        return bad == 0;
    };
    auto time_it = [&](auto &&launch) {
        launch(); /* warm-up */
        CHECK_CUDA(cudaDeviceSynchronize());
        std::vector<double> ms;
        for (uint32_t r = 0; r < o.runs; r++) {
            CHECK_CUDA(cudaEventRecord(start, 0));
            launch();
            CHECK_CUDA(cudaEventRecord(stop, 0));
            CHECK_CUDA(cudaEventSynchronize(stop));
            float t = 0;
            CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
            ms.push_back(t);
        }
        return median(ms);
    };

    printf("# device tree: %u-bit keys, 2^%u keys, F=%u L=%u, height %u, %.1f MB; build %.2f s; CPU engine %.2f G/s\n",
           o.bits, o.keys_log2, o.fanout, o.leaf, info.height, info.total_bytes / 1e6, build_s, n_q / cpu_s / 1e9);
    printf("%-52s %10s %10s %8s\n", "configuration", "median ms", "G q/s", "verified");
    /* the baseline */
    double base_ms = time_it([&] {
        binary_search_kernel<K><<<(unsigned)std::min<uint64_t>((n_q + 255) / 256, 1u << 20), 256>>>(
            d_keys, d_kv, n_keys, d_queries, n_q, d_values, d_found);
    });
    CHECK_CUDA(cudaGetLastError());
    bool ok = verify("binary search");
    printf("%-52s %10.3f %10.3f %8s\n", "binary search (sorted array)", base_ms, n_q / base_ms / 1e6, ok ? "yes" : "NO");
    const uint32_t groups[] = {1, 2, 4, 8, 16, 32};
    double best = 0;
    for (int psa = 1; psa >= 0; psa--)
        for (uint32_t g : groups)
            for (int unordered : o.orders)
                for (uint64_t window : o.windows)
                    for (uint32_t bits : o.psa_bits) {
            if (g > o.fanout || (o.only_group && (int)g != o.only_group) || (o.only_psa >= 0 && psa != o.only_psa))
                continue;
            if (!psa && (window != o.windows[0] || bits != o.psa_bits[0]))
                continue; /* windows and bits only matter with PSA */
            harmonia_query_config q;
            harmonia_query_config_init(&q);
            q.backend = HARMONIA_BACKEND_GPU;
            q.memory = HARMONIA_MEMORY_DEVICE;
            q.group_size = g;
            q.psa = psa;
            q.psa_window = window;
            q.psa_bits = bits;
            q.pipeline_depth = o.lanes;
            harmonia_status st = HARMONIA_OK;
            double ms = time_it([&] {
                st = unordered ? harmonia_lookup_unordered(tree, &q, d_queries, n_q, d_values, d_found, d_positions)
                               : harmonia_lookup(tree, &q, d_queries, n_q, d_values, d_found);
            });
            if (st != HARMONIA_OK) {
                fprintf(stderr, "bench_gpu: lookup: %s\n", harmonia_last_error(tree));
                return 1;
            }
            char name[128];
            snprintf(name, sizeof name, "harmonia G=%u PSA %s%s w=%llu b=%u l=%u", g, psa ? "on" : "off",
                     unordered ? " unordered" : "", (unsigned long long)window, bits, o.lanes);
            ok = verify(name);
            double gq = n_q / ms / 1e6;
            if (gq > best)
                best = gq;
            printf("%-52s %10.3f %10.3f %8s\n", name, ms, gq, ok ? "yes" : "NO");
        }
    printf("# best harmonia %.3f G q/s = %.2fx the binary search (%.3f G q/s)\n", best, best / (n_q / base_ms / 1e6),
           n_q / base_ms / 1e6);
    cudaFree(d_queries);
    cudaFree(d_values);
    cudaFree(d_found);
    cudaFree(d_positions);
    cudaFree(d_keys);
    cudaFree(d_kv);
    harmonia_free(tree);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--bits")) o.bits = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--keys-log2")) o.keys_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--queries-log2")) o.queries_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--fanout")) o.fanout = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--leaf-size")) o.leaf = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--runs")) o.runs = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--window") || !strcmp(a, "--windows")) o.windows = parse_list(v), i++;
        else if (!strcmp(a, "--psa-bits")) {
            o.psa_bits.clear();
            for (uint64_t b : parse_list(v))
                o.psa_bits.push_back((uint32_t)b);
            i++;
        }
        else if (!strcmp(a, "--lanes")) o.lanes = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--psa")) o.only_psa = atoi(v), i++;
        else if (!strcmp(a, "--group")) o.only_group = atoi(v), i++;
        else if (!strcmp(a, "--constant-levels"))
            o.constant_levels = !strcmp(v, "all") ? HARMONIA_CONSTANT_LEVELS_ALL : atoi(v), i++;
        else if (!strcmp(a, "--unordered")) o.orders = {1};
        else if (!strcmp(a, "--both-orders")) o.orders = {0, 1};
        else {
            fprintf(stderr, "usage: bench_gpu [--bits 32|64] [--keys-log2 N] [--queries-log2 N] [--fanout F] "
                            "[--leaf-size L] [--runs R] [--windows W,W..] [--psa-bits B,B..] [--lanes 1-3] [--group G] [--psa 0|1] [--unordered | --both-orders] [--constant-levels N|all]\n");
            return 2;
        }
    }
    harmonia_device_info di;
    if (harmonia_device_probe(&di) != HARMONIA_OK) {
        printf("no GPU: %s\n", harmonia_last_error(NULL));
        return 77;
    }
    printf("# %s, %d SMs, L2 %.0f MiB\n", di.name, di.sm_count, di.l2_bytes / 1048576.0);
    return o.bits == 32 ? run<uint32_t>(o) : run<uint64_t>(o);
}
