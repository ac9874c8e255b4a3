/* bench_phases.cu — the steps of a PSA lookup pipeline timed apart (bench/NOTES.md asked for it:
 * the sort-based restore ran at half its predicted speed and nobody knew which step lost the
 * time). One window over the whole batch of 2^Q uniform queries (100 % hits) already in device
 * memory, through the library's own internals (psa_sort_window, ntg_launch_lookup_packed,
 * psa_restore_sort, psa_restore_scatter), each step timed with CUDA events, median of R runs after a
 * warm-up, beside references: the search on unsorted queries (PSA off), the search on fully sorted
 * queries (the floor of the search), a full-key sort and a device-to-device copy of the queries.
 * The restored results are compared with the CPU engine's on a sample; the run fails on a mismatch.
 * Usage: bench_phases [--bits 64|32] [--keys-log2 K (26)] [--queries-log2 Q (27)] [--group G (2)]
 *                     [--runs R (5)] */
#include <algorithm>
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "suite.h" /* sx_mix64, sx_mix32: the suite's bijective hashes */

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "bench_phases: %s: %s\n", #call, cudaGetErrorString(e_));             \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

#define CHECK_HM(tree, call)                                                                      \
    do {                                                                                          \
        harmonia_status s_ = (call);                                                              \
        if (s_ != HARMONIA_OK) {                                                                  \
            fprintf(stderr, "bench_phases: %s: %s\n", #call, harmonia_last_error(tree));          \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* Times fn (enqueued on the default stream): one warm-up, then the median of runs, in ms. */
template <typename F> static double time_ms(uint32_t runs, F fn)
{
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    CHECK_CUDA(fn());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> ms;
    for (uint32_t r = 0; r < runs; r++) {
        CHECK_CUDA(cudaEventRecord(a));
        CHECK_CUDA(fn());
        CHECK_CUDA(cudaEventRecord(b));
        CHECK_CUDA(cudaEventSynchronize(b));
        float t = 0;
        CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    return ms[ms.size() / 2];
}

static void row(const char *what, double ms, double bytes, uint64_t n)
{
    printf("%-52s %9.3f ms %9.2f G/s %9.0f GB/s\n", what, ms, n / ms / 1e6, bytes / ms / 1e6);
}

template <typename K> static int run(uint32_t keys_log2, uint32_t queries_log2, uint32_t group, uint32_t runs)
{
    const uint32_t bits = 8 * sizeof(K);
    const uint64_t n_keys = 1ull << keys_log2;
    const uint32_t n = 1u << queries_log2;
    std::vector<K> keys(n_keys), values(n_keys);
    for (uint64_t i = 0; i < n_keys; i++) {
        keys[i] = sizeof(K) == 8 ? (K)sx_mix64(i + 1) : (K)sx_mix32((uint32_t)(i + 1));
        values[i] = (K)(i + 1);
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    harmonia_tree *tree = NULL;
    CHECK_HM(tree, harmonia_build(&bc, keys.data(), values.data(), n_keys, &tree));
    std::vector<K> queries(n);
    uint64_t s = 12345;
    for (uint32_t i = 0; i < n; i++)
        queries[i] = keys[sx_mix64(s + i) % n_keys];

    /* the device copy and its __constant__ part, through one GPU lookup */
    CHECK_HM(tree, harmonia_device_upload(tree));
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_GPU;
    qc.group_size = group;
    K one_value;
    uint8_t one_found;
    CHECK_HM(tree, harmonia_lookup(tree, &qc, queries.data(), 1, &one_value, &one_found));
    const ntg_view *v = &tree->gpu->view;
    const psa_bits eq2 = tree->gpu->bits;
    const psa_bits top16 = {bits - 16, bits};
    const psa_bits all = {0, bits};

    K *d_q, *d_sorted, *d_vals_sorted, *d_vals_by_pos, *d_out, *d_copy;
    uint32_t *d_iota, *d_pos, *d_packed, *d_packed_by_pos;
    uint8_t *d_found;
    CHECK_CUDA(cudaMalloc(&d_q, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_sorted, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_vals_sorted, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_vals_by_pos, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_out, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_copy, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_iota, n * sizeof(uint32_t)));
    CHECK_CUDA(cudaMalloc(&d_pos, n * sizeof(uint32_t)));
    CHECK_CUDA(cudaMalloc(&d_packed, n * sizeof(uint32_t)));
    CHECK_CUDA(cudaMalloc(&d_packed_by_pos, n * sizeof(uint32_t)));
    CHECK_CUDA(cudaMalloc(&d_found, n));
    size_t sort_bytes = 0, restore_bytes = 0;
    CHECK_CUDA(psa_sort_temp_bytes(bits, n, &sort_bytes));
    CHECK_CUDA(psa_restore_temp_bytes(bits, n, &restore_bytes));
    void *d_temp;
    const size_t temp_bytes = std::max(sort_bytes, restore_bytes);
    CHECK_CUDA(cudaMalloc(&d_temp, temp_bytes));
    CHECK_CUDA(cudaMemcpy(d_q, queries.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CHECK_CUDA(psa_fill_iota(d_iota, n, 0));
    CHECK_CUDA(cudaDeviceSynchronize());

    const double kb = sizeof(K);
    printf("# %s; tree: %u-bit keys, 2^%u keys, F=%u L=%u, height %u; 2^%u queries, one window, G=%u; "
           "Eq. 2 bits [%u, %u)\n",
           "bench_phases", bits, keys_log2, v->fanout, v->leaf_size, v->height, queries_log2, group, eq2.begin_bit,
           eq2.end_bit);
    printf("%-52s %12s %13s %14s\n", "step", "median", "queries/s", "bytes moved/s");
    const double copy_ms = time_ms(runs, [&] { return cudaMemcpyAsync(d_copy, d_q, n * sizeof(K), cudaMemcpyDeviceToDevice, 0); });
    row("copy of the queries (device to device)", copy_ms, 2 * kb * n, n);
    const double plain_ms = time_ms(runs, [&] {
        return ntg_launch_lookup(v, group, d_q, NULL, n, d_out, d_found, NULL, 0, 0);
    });
    row("search, unsorted queries, results in order (PSA off)", plain_ms, (kb + kb + 1) * n, n);

    const struct { const char *name; psa_bits b; } sorts[] = {{"Eq. 2", eq2}, {"16 bits", top16}, {"all bits", all}};
    for (const auto &srt : sorts) {
        char label[128];
        const psa_bits b = srt.b;
        const uint32_t passes = (b.end_bit - b.begin_bit + 7) / 8;
        const double sort_ms = time_ms(runs, [&] {
            return psa_sort_window(bits, d_temp, temp_bytes, d_q, d_sorted, d_iota, d_pos, n, b, 0);
        });
        snprintf(label, sizeof label, "sort (key, position) on %s [%u, %u)", srt.name, b.begin_bit, b.end_bit);
        /* a pass reads and writes key + position; the first reads iota too */
        row(label, sort_ms, passes * 2 * (kb + 4) * n, n);
        const double search_ms = time_ms(runs, [&] {
            return ntg_launch_lookup_packed(v, group, d_sorted, d_pos, n, d_vals_sorted, d_packed, 0);
        });
        snprintf(label, sizeof label, "  search of those (sorted results, packed)");
        row(label, search_ms, (kb + 4 + kb + 4) * n, n);
        const double rsort_ms = time_ms(runs, [&] {
            return psa_restore_sort(bits, d_temp, temp_bytes, d_packed, d_packed_by_pos, d_vals_sorted, d_vals_by_pos, n, 0);
        });
        row("  restore: sort results by position", rsort_ms, 2 * 2 * (kb + 4) * n, n);
        const double scatter_ms = time_ms(runs, [&] {
            return psa_restore_scatter(bits, d_packed_by_pos, d_vals_by_pos, n, d_out, d_found, 0);
        });
        row("  restore: localized scatter", scatter_ms, (kb + 4 + kb + 1) * n, n);
        snprintf(label, sizeof label, "  total, %s: sorted results / in query order", srt.name);
        printf("%-52s %9.3f ms / %.3f ms = %.2f / %.2f G/s\n", label, sort_ms + search_ms,
               sort_ms + search_ms + rsort_ms + scatter_ms, n / (sort_ms + search_ms) / 1e6,
               n / (sort_ms + search_ms + rsort_ms + scatter_ms) / 1e6);

        /* the restored results against the CPU engine, on a sample */
        std::vector<K> got(n);
        std::vector<uint8_t> got_found(n);
        CHECK_CUDA(cudaMemcpy(got.data(), d_out, n * sizeof(K), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(got_found.data(), d_found, n, cudaMemcpyDeviceToHost));
        const uint32_t sample = n < (1u << 20) ? n : (1u << 20);
        std::vector<K> sq(sample), want(sample);
        std::vector<uint8_t> want_found(sample);
        std::vector<uint32_t> at(sample);
        for (uint32_t i = 0; i < sample; i++) {
            at[i] = (uint32_t)(sx_mix64(977 + i) % n);
            sq[i] = queries[at[i]];
        }
        harmonia_query_config cpu;
        harmonia_query_config_init(&cpu);
        cpu.backend = HARMONIA_BACKEND_CPU;
        CHECK_HM(tree, harmonia_lookup(tree, &cpu, sq.data(), sample, want.data(), want_found.data()));
        for (uint32_t i = 0; i < sample; i++)
            if (got[at[i]] != want[i] || got_found[at[i]] != want_found[i]) {
                fprintf(stderr, "bench_phases: MISMATCH (%s) at query %u\n", srt.name, at[i]);
                return 1;
            }
    }
    printf("# every restored result of the sample (2^20 or all) equal to the CPU engine's\n");
    cudaFree(d_q);
    cudaFree(d_sorted);
    cudaFree(d_vals_sorted);
    cudaFree(d_vals_by_pos);
    cudaFree(d_out);
    cudaFree(d_copy);
    cudaFree(d_iota);
    cudaFree(d_pos);
    cudaFree(d_packed);
    cudaFree(d_packed_by_pos);
    cudaFree(d_found);
    cudaFree(d_temp);
    harmonia_free(tree);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t bits = 64, keys_log2 = 26, queries_log2 = 27, group = 2, runs = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--bits")) bits = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--keys-log2")) keys_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--queries-log2")) queries_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--group")) group = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--runs")) runs = (uint32_t)atoi(v), i++;
        else {
            fprintf(stderr, "usage: bench_phases [--bits 64|32] [--keys-log2 K] [--queries-log2 Q (<= 31)] "
                            "[--group G] [--runs R]\n");
            return 2;
        }
    }
    if ((bits != 32 && bits != 64) || keys_log2 < 4 || keys_log2 > 31 || queries_log2 < 4 || queries_log2 > 30 ||
        !ntg_valid_group_size(group) || runs == 0) {
        fprintf(stderr, "bench_phases: bad arguments\n");
        return 2;
    }
    harmonia_device_info dev;
    if (harmonia_device_probe(&dev) != HARMONIA_OK) {
        printf("bench_phases: no GPU (%s)\n", harmonia_last_error(NULL));
        return 77;
    }
    return bits == 64 ? run<uint64_t>(keys_log2, queries_log2, group, runs)
                      : run<uint32_t>(keys_log2, queries_log2, group, runs);
}
