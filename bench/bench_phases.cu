/* bench_phases.cu — the steps of the PSA lookup pipeline timed apart, so that each can be held
 * against its byte floor (bench/NOTES.md): one window over the whole batch of 2^Q uniform queries
 * (100 % hits) already in device memory, through the library's own internals (psa_partition with
 * one and two passes, ntg_launch_search_partitioned, psa_restore), each step timed with CUDA events,
 * median of R runs after a warm-up, beside references: a device-to-device copy of the queries and
 * the descent kernel on the unsorted queries (PSA off). The restored results are compared with the
 * CPU engine's on a sample; the run fails on a mismatch.
 * Usage: bench_phases [--bits 64|32] [--keys-log2 K (26)] [--queries-log2 Q (27)] [--group G (2)]
 *                     [--runs R (5)] [--psa-bits B,B,... (plans of B bucket bits beside the library's)]
 *                     [--unordered-only (the sorted-results pipeline alone: partition with positions,
 *                      search writing them; no copy, descent, one-pass plan or restore; for ncu)] */
#include <algorithm>
#include <cuda_runtime.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "harmonia/gpu_internal.h"
#include "util/mix.h" /* util_mix64, util_mix32: the bijective hashes the suite uses too */
#include "util/cuda_check.h"

#define CHECK_CUDA(call) UTIL_CUDA_CHECK(call)

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

/* Results of n slots against the CPU engine on a sample (2^20 slots, or all): slot j holds the
 * answer (values[j], found[j]) to the query query_of(j). Returns 0, or 1 after a message. */
template <typename K, typename QueryOf>
static int check_sample(harmonia_tree *tree, uint32_t n, QueryOf query_of, const K *values, const uint8_t *found,
                        const char *what)
{
    const uint32_t sample = n < (1u << 20) ? n : (1u << 20);
    std::vector<K> sq(sample), want(sample);
    std::vector<uint8_t> want_found(sample);
    std::vector<uint32_t> at(sample);
    for (uint32_t i = 0; i < sample; i++) {
        at[i] = sample == n ? i : (uint32_t)(util_mix64(977 + i) % n);
        sq[i] = query_of(at[i]);
    }
    harmonia_query_config cpu;
    harmonia_query_config_init(&cpu);
    cpu.backend = HARMONIA_BACKEND_CPU;
    CHECK_HM(tree, harmonia_lookup(tree, &cpu, sq.data(), sample, want.data(), want_found.data()));
    for (uint32_t i = 0; i < sample; i++)
        if (values[at[i]] != want[i] || found[at[i]] != want_found[i]) {
            fprintf(stderr, "bench_phases: MISMATCH (%s) at slot %u\n", what, at[i]);
            return 1;
        }
    return 0;
}

/* The bytes a partition of n keys of kb bytes under plan reads and writes, besides the positions:
 * per pass a count (read the keys; none before a chunked pass 1, psa_pass1_chunked) and the pass
 * (read the keys, write keys and a 4-byte map). */
static double partition_bytes(const psa_plan &plan, uint32_t n, double kb)
{
    const uint32_t passes = plan.bits2 ? 2 : 1, counts = passes - (psa_pass1_chunked(n, plan.bits2) ? 1 : 0);
    return (counts * kb + passes * (kb + kb + 4)) * n;
}

/* The sorted-results pipeline of one plan (the partition writes the positions, the search values and found flags),
 * timed whole and by step; the results checked: positions a permutation of 0 .. n-1, a sample of the
 * slots equal to the CPU engine's answer for the query each slot names, and, given the same plan's
 * restored results in query order (ordered, ordered_found: host copies), every slot equal to its
 * query's. */
template <typename K>
static int unordered_pipeline(harmonia_tree *tree, const ntg_view *v, const psa_plan &plan,
                              const std::vector<K> &queries, const K *d_q, uint32_t n, uint32_t runs,
                              uint32_t *d_table, void *d_ws, size_t ws_bytes, K *d_slot_values,
                              uint8_t *d_slot_found, uint64_t *d_positions, const K *ordered,
                              const uint8_t *ordered_found)
{
    const uint32_t bits = 8 * sizeof(K);
    const double kb = sizeof(K);
    const uint32_t passes = plan.bits2 ? 2 : 1;
    CHECK_CUDA(ntg_build_bucket_table(v, &plan, d_table, 0));
    psa_partitioned upart;
    char label[160];
    const double total_ms = time_ms(runs, [&] {
        cudaError_t e =
            psa_partition(bits, &plan, d_q, n, psa_positions{d_positions, 0, true}, d_ws, ws_bytes, &upart, 0);
        if (e == cudaSuccess)
            e = ntg_launch_search_partitioned(v, &plan, d_table, false, upart.keys, n, upart.in_span, d_slot_values,
                                              NULL, d_slot_found, true, 0);
        return e;
    });
    snprintf(label, sizeof label, "sorted results with positions, %u bits (%u + %u)", plan.bits, plan.bits1,
             plan.bits2);
    row(label, total_ms, 0, n);
    const double part_ms = time_ms(runs, [&] {
        return psa_partition(bits, &plan, d_q, n, psa_positions{d_positions, 0, true}, d_ws, ws_bytes, &upart, 0);
    });
    /* and pass 2 reads the positions; the last pass's are the caller's 64-bit ones */
    row("  of which the partition writing the positions", part_ms,
        partition_bytes(plan, n, kb) + ((passes - 1) * 4.0 + 4.0) * n, n);
    const double search_ms = time_ms(runs, [&] {
        return ntg_launch_search_partitioned(v, &plan, d_table, false, upart.keys, n, upart.in_span, d_slot_values,
                                             NULL, d_slot_found, true, 0);
    });
    row("  and the search (values, found flags)", search_ms, (kb + kb + 1) * n, n);
    std::vector<uint64_t> pos(n);
    std::vector<K> uvals(n);
    std::vector<uint8_t> ufound(n), seen(n, 0);
    CHECK_CUDA(cudaMemcpy(pos.data(), d_positions, n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(uvals.data(), d_slot_values, n * sizeof(K), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(ufound.data(), d_slot_found, n, cudaMemcpyDeviceToHost));
    for (uint32_t j = 0; j < n; j++) {
        if (pos[j] >= n || seen[pos[j]]) {
            fprintf(stderr, "bench_phases: positions are not a permutation at slot %u\n", j);
            return 1;
        }
        seen[pos[j]] = 1;
        if (ordered && (uvals[j] != ordered[pos[j]] || ufound[j] != ordered_found[pos[j]])) {
            fprintf(stderr, "bench_phases: unordered result of slot %u differs from the restored one\n", j);
            return 1;
        }
    }
    return check_sample<K>(tree, n, [&](uint32_t j) { return queries[pos[j]]; }, uvals.data(), ufound.data(),
                           "unordered results");
}

template <typename K>
static int run(uint32_t keys_log2, uint32_t queries_log2, uint32_t group, uint32_t runs,
               const std::vector<uint32_t> &psa_bits_wanted, bool unordered_only)
{
    const uint32_t bits = 8 * sizeof(K);
    const uint64_t n_keys = 1ull << keys_log2;
    const uint32_t n = 1u << queries_log2;
    std::vector<K> keys(n_keys), values(n_keys);
    for (uint64_t i = 0; i < n_keys; i++) {
        keys[i] = sizeof(K) == 8 ? (K)util_mix64(i + 1) : (K)util_mix32((uint32_t)(i + 1));
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
        queries[i] = keys[util_mix64(s + i) % n_keys];

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
    const psa_plan base_plan = tree->gpu->plan;

    K *d_q, *d_out, *d_copy, *d_slot_values;
    uint8_t *d_found, *d_slot_found;
    uint64_t *d_positions;
    uint32_t *d_table;
    CHECK_CUDA(cudaMalloc(&d_q, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_out, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_copy, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_slot_values, n * sizeof(K)));
    CHECK_CUDA(cudaMalloc(&d_found, n));
    CHECK_CUDA(cudaMalloc(&d_slot_found, n));
    CHECK_CUDA(cudaMalloc(&d_positions, n * sizeof(uint64_t)));
    CHECK_CUDA(cudaMalloc(&d_table, (((size_t)1 << PSA_MAX_BITS) + 1) * sizeof(uint32_t)));
    size_t ws_bytes = 0;
    CHECK_CUDA(psa_workspace_bytes(bits, n, NULL, &ws_bytes));
    void *d_ws;
    CHECK_CUDA(cudaMalloc(&d_ws, ws_bytes));
    auto release = [&] {
        cudaFree(d_q);
        cudaFree(d_out);
        cudaFree(d_copy);
        cudaFree(d_slot_values);
        cudaFree(d_found);
        cudaFree(d_slot_found);
        cudaFree(d_positions);
        cudaFree(d_table);
        cudaFree(d_ws);
        harmonia_free(tree);
    };
    CHECK_CUDA(cudaMemcpy(d_q, queries.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize());

    const double kb = sizeof(K);
    printf("# bench_phases; tree: %u-bit keys, 2^%u keys, F=%u L=%u, height %u, %" PRIu64 " leaves; 2^%u queries, "
           "one window; descent G=%u; plan: %u bucket bits (%u + %u)\n",
           bits, keys_log2, v->fanout, v->leaf_size, v->height, v->n_leaves, queries_log2, group, base_plan.bits,
           base_plan.bits1, base_plan.bits2);
    printf("%-52s %12s %13s %14s\n", "step", "median", "queries/s", "bytes moved/s");
    std::vector<psa_plan> plans{base_plan};
    if (unordered_only) {
        /* the library's plan for unordered device-array lookups first (psa_unordered_plan: one bit
         * fewer on large 64-bit trees), then the tree's where it differs */
        const psa_plan unordered_plan = tree->gpu->plan_unordered;
        if (!psa_same_buckets(&unordered_plan, &base_plan))
            plans.insert(plans.begin(), unordered_plan);
        for (uint32_t b : psa_bits_wanted)
            plans.push_back(psa_make_plan(base_plan.key_min, base_plan.key_max, v->n_leaves, v->leaf_size * bits / 8, b));
        for (const psa_plan &plan : plans)
            if (unordered_pipeline<K>(tree, v, plan, queries, d_q, n, runs, d_table, d_ws, ws_bytes, d_slot_values,
                                      d_slot_found, d_positions, NULL, NULL) != 0)
                return 1;
        printf("# unordered results: positions a permutation, a sample of 2^20 slots (or all) equal to the CPU "
               "engine's\n");
        release();
        return 0;
    }
    const double copy_ms = time_ms(runs, [&] { return cudaMemcpyAsync(d_copy, d_q, n * sizeof(K), cudaMemcpyDeviceToDevice, 0); });
    row("copy of the queries (device to device)", copy_ms, 2 * kb * n, n);
    const double plain_ms = time_ms(runs, [&] {
        return ntg_launch_lookup(v, &tree->gpu->cut, group, d_q, NULL, n, d_out, d_found, psa_positions{}, NULL, 0);
    });
    row("descent, unsorted queries, in order (PSA off)", plain_ms, (kb + kb + 1) * n, n);

    /* plans: the library's, one pass (at most PSA_MAX_PASS1_BITS bits), and asked-for bits */
    plans.push_back(psa_make_plan(base_plan.key_min, base_plan.key_max, v->n_leaves, v->leaf_size * bits / 8, PSA_MAX_PASS1_BITS));
    for (uint32_t b : psa_bits_wanted)
        plans.push_back(psa_make_plan(base_plan.key_min, base_plan.key_max, v->n_leaves, v->leaf_size * bits / 8, b));
    for (const psa_plan &plan : plans) {
        char label[160];
        CHECK_CUDA(ntg_build_bucket_table(v, &plan, d_table, 0));
        psa_partitioned part;
        const uint32_t passes = plan.bits2 ? 2 : 1;
        const double part_ms = time_ms(runs, [&] {
            return psa_partition(bits, &plan, d_q, n, psa_positions{}, d_ws, ws_bytes, &part, 0);
        });
        snprintf(label, sizeof label, "partition, %u bits (%u + %u), %u pass%s", plan.bits, plan.bits1, plan.bits2,
                 passes, passes > 1 ? "es" : "");
        row(label, part_ms, partition_bytes(plan, n, kb), n);
        const double search_ms = time_ms(runs, [&] {
            return ntg_launch_search_partitioned(v, &plan, d_table, false, part.keys, n, part.in_span, d_slot_values,
                                                 NULL, d_slot_found, false, 0);
        });
        row("  search of the partitioned keys (slot order)", search_ms, (kb + kb + 1) * n, n);
        const double restore_ms = time_ms(runs, [&] {
            return psa_restore(bits, &part, d_slot_values, NULL, d_slot_found, d_out, NULL, d_found, NULL, 0);
        });
        row("  restore (gather in query order)", restore_ms, (4.0 * passes + kb + 1 + kb + 1) * n, n);
        const double total_ms = time_ms(runs, [&] {
            cudaError_t e = psa_partition(bits, &plan, d_q, n, psa_positions{}, d_ws, ws_bytes, &part, 0);
            if (e == cudaSuccess)
                e = ntg_launch_search_partitioned(v, &plan, d_table, false, part.keys, n, part.in_span,
                                                  d_slot_values, NULL, d_slot_found, false, 0);
            if (e == cudaSuccess)
                e = psa_restore(bits, &part, d_slot_values, NULL, d_slot_found, d_out, NULL, d_found, NULL, 0);
            return e;
        });
        row("  total, results in query order", total_ms, 0, n);
        std::vector<K> got(n);
        std::vector<uint8_t> got_found(n);
        CHECK_CUDA(cudaMemcpy(got.data(), d_out, n * sizeof(K), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(got_found.data(), d_found, n, cudaMemcpyDeviceToHost));
        if (check_sample<K>(tree, n, [&](uint32_t j) { return queries[j]; }, got.data(), got_found.data(),
                            "restored results"))
            return 1;
        /* the sorted-results pipeline of the same plan, its slots against these restored results */
        if (unordered_pipeline<K>(tree, v, plan, queries, d_q, n, runs, d_table, d_ws, ws_bytes, d_slot_values,
                                  d_slot_found, d_positions, got.data(), got_found.data()) != 0)
            return 1;
    }
    printf("# every restored result of the sample (2^20 or all) equal to the CPU engine's; unordered results "
           "a permutation equal to the ordered ones\n");
    release();
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t bits = 64, keys_log2 = 26, queries_log2 = 27, group = 2, runs = 5;
    bool unordered_only = false;
    std::vector<uint32_t> psa_bits;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--bits")) bits = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--keys-log2")) keys_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--queries-log2")) queries_log2 = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--group")) group = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--runs")) runs = (uint32_t)atoi(v), i++;
        else if (!strcmp(a, "--unordered-only")) unordered_only = true;
        else if (!strcmp(a, "--psa-bits")) {
            for (const char *p = v; *p;) {
                char *end;
                psa_bits.push_back((uint32_t)strtoul(p, &end, 10));
                p = *end == ',' ? end + 1 : end;
                if (end == p && *p)
                    break;
            }
            i++;
        }
        else {
            fprintf(stderr, "usage: bench_phases [--bits 64|32] [--keys-log2 K] [--queries-log2 Q (<= 31)] "
                            "[--group G] [--runs R] [--psa-bits B] [--unordered-only]\n");
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
    return bits == 64 ? run<uint64_t>(keys_log2, queries_log2, group, runs, psa_bits, unordered_only)
                      : run<uint32_t>(keys_log2, queries_log2, group, runs, psa_bits, unordered_only);
}
