/* bench_update.c — the batch-update benchmark (issue 4): a tree of 2^K random keys; batches of the
 * paper's mix (5 % inserts of new keys, 95 % updates of present keys) and insert-only batches of
 * several sizes; throughput and the time of each step (sort, apply, re-layout, upload when a device
 * copy exists), beside a full rebuild of the tree from its pairs on the CPU. Every updated tree is
 * checked by the integrity checker and by lookups of a sample of the batch's keys. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia.h"
#include "util/mix.h"

#define mix64 util_mix64

/* Key i of the universe: a bijection, so keys 0 .. n-1 are the tree's and n .. are new ones. */
static uint64_t key_of(uint64_t i) { return mix64(i + 0x1234567ull); }

static double now(void) { return omp_get_wtime(); }

static int compare_key_then_index(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The integrity checker, then lookups of a sample of the batch's keys against the value of the
 * last operation on each key (the batch's own order decides). */
static int verify(harmonia_tree *t, const uint8_t *kinds, const uint64_t *keys, const uint64_t *values, uint64_t n)
{
    if (harmonia_check(t) != HARMONIA_OK) {
        fprintf(stderr, "bench_update: check failed: %s\n", harmonia_last_error(t));
        return 1;
    }
    uint64_t *pairs = malloc(n * 16 + 16);
    for (uint64_t i = 0; i < n; i++) {
        pairs[2 * i] = keys[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, n, 16, compare_key_then_index);
    uint64_t last_ops = 0;
    for (uint64_t i = 0; i < n; i++) /* keep the last operation of each key */
        if (i + 1 == n || pairs[2 * (i + 1)] != pairs[2 * i])
            pairs[2 * last_ops++ + 1] = pairs[2 * i + 1];
    uint64_t step = last_ops / 100000 + 1, sample = (last_ops + step - 1) / step;
    uint64_t *q = malloc(sample * 8 + 8), *v = malloc(sample * 8 + 8), *op = malloc(sample * 8 + 8);
    uint8_t *f = malloc(sample + 1);
    for (uint64_t i = 0; i < sample; i++) {
        op[i] = pairs[2 * (i * step) + 1];
        q[i] = keys[op[i]];
    }
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_CPU;
    harmonia_lookup(t, &qc, q, sample, v, f);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < sample; i++)
        if (f[i] != (kinds[op[i]] != HARMONIA_OP_DELETE) || (f[i] && v[i] != values[op[i]]))
            bad++;
    free(pairs);
    free(q);
    free(v);
    free(op);
    free(f);
    if (bad)
        fprintf(stderr, "bench_update: %" PRIu64 " of %" PRIu64 " sampled keys disagree with the batch\n", bad, sample);
    return bad != 0;
}

int main(int argc, char **argv)
{
    uint32_t keys_log2 = argc > 1 ? (uint32_t)atoi(argv[1]) : 22;
    uint64_t paper_ops = argc > 2 ? strtoull(argv[2], NULL, 0) : (1ull << keys_log2) / 16;
    const uint64_t n = 1ull << keys_log2;
    uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
#pragma omp parallel for
    for (int64_t i = 0; i < (int64_t)n; i++) {
        keys[i] = key_of((uint64_t)i);
        values[i] = mix64((uint64_t)i * 7 + 1) | 1;
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    if (argc > 3)
        bc.leaf_fill = atof(argv[3]);
    double t0 = now();
    harmonia_tree *tree = NULL;
    if (harmonia_build(&bc, keys, values, n, &tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_update: %s\n", harmonia_last_error(NULL));
        return 1;
    }
    double rebuild = now() - t0;
    int gpu = harmonia_device_upload(tree) == HARMONIA_OK;
    printf("# 2^%u keys (64-bit, F=%u L=%u, leaf fill %.3f), %d threads; full rebuild from unsorted pairs: %.3f s; device copy: %s\n",
           keys_log2, bc.fanout, bc.leaf_size, bc.leaf_fill, omp_get_max_threads(), rebuild, gpu ? "yes" : "no");
    printf("%-22s %10s %9s %9s %9s %9s %9s %12s %8s\n", "batch", "ops", "sort s", "apply s", "relay s", "upload s",
           "total s", "M ops/s", "splits");
    int failures = 0;
    uint64_t next_new = n; /* new keys come from the universe past the tree's */
    for (int round = 0; round < 2 + 7; round++) {
        int paper = round < 2;
        uint64_t ops = paper ? paper_ops : 1ull << (16 + (round - 2));
        if (!paper && ops > n)
            break;
        uint8_t *kinds = malloc(ops);
        uint64_t *op_keys = malloc(ops * 8), *op_values = malloc(ops * 8);
        for (uint64_t i = 0; i < ops; i++) {
            uint64_t r = mix64(i * 31 + (uint64_t)round * 1000003);
            if (!paper || r % 20 == 0) {
                kinds[i] = HARMONIA_OP_INSERT;
                op_keys[i] = key_of(next_new++);
            } else {
                kinds[i] = HARMONIA_OP_UPDATE;
                op_keys[i] = key_of(r % n); /* a present key (inserted keys stay; none deleted) */
            }
            op_values[i] = mix64(r) | 1;
        }
        harmonia_update_stats s;
        double t1 = now();
        harmonia_status st = harmonia_update(tree, NULL, kinds, op_keys, op_values, ops, &s);
        double total = now() - t1;
        if (st != HARMONIA_OK) {
            fprintf(stderr, "bench_update: %s\n", harmonia_last_error(tree));
            return 1;
        }
        failures += verify(tree, kinds, op_keys, op_values, ops);
        char name[64];
        snprintf(name, sizeof name, paper ? "paper mix %d" : "insert-only", round + 1);
        printf("%-22s %10" PRIu64 " %9.4f %9.4f %9.4f %9.4f %9.4f %12.1f %8" PRIu64 "\n", name, ops, s.sort_seconds,
               s.apply_seconds, s.relayout_seconds, s.upload_seconds, total, ops / total / 1e6, s.leaves_split);
        free(kinds);
        free(op_keys);
        free(op_values);
    }
    harmonia_free(tree);
    free(keys);
    free(values);
    return failures ? 1 : 0;
}
