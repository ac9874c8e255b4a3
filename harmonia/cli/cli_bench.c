/* cli_bench.c — `harmonia bench`: generates keys and queries in memory, builds a tree, and times
 * Harmonia's point lookups, lower bounds and range counts against the binary-search baseline
 * (cli_baselines.c) on the same data: one warm-up, median of R runs, every result checked. */
#include <stdlib.h>
#include <string.h>

#include "harmonia/cli/cli_baselines.h"
#include "cli.h"
#include "cli_data.h"
#include "cli_io.h"

static const char *const op_names[] = {"lookup", "lower-bound", "range-count"};

enum { OP_LOOKUP, OP_LOWER_BOUND, OP_RANGE_COUNT, OP_COUNT };

typedef struct bench_data {
    uint32_t bits;
    uint64_t n;                /* keys */
    void *sorted_keys, *sorted_values;
    uint64_t n_queries;
    void *queries;
    uint64_t n_ranges;
    void *range_lo, *range_hi;
    harmonia_tree *tree;
    harmonia_query_config config;
    int threads;
    /* results: [0] Harmonia, [1] baseline */
    void *values[2], *keys[2];
    uint8_t *found[2];
    uint64_t *counts[2];
} bench_data;

typedef struct bench_row {
    int op;
    double seconds[2];  /* median: Harmonia, baseline */
    uint64_t items;
    bool ran;
} bench_row;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs one operation with one engine (0 = Harmonia, 1 = baseline) once. */
static harmonia_status run_once(bench_data *d, int op, int engine)
{
    if (engine == 0) {
        switch (op) {
        case OP_LOOKUP:
            return harmonia_lookup(d->tree, &d->config, d->queries, d->n_queries, d->values[0],
                                   d->found[0]);
        case OP_LOWER_BOUND:
            return harmonia_lower_bound(d->tree, &d->config, d->queries, d->n_queries,
                                        d->keys[0], d->values[0], d->found[0]);
        default:
            return harmonia_range_count(d->tree, &d->config, d->range_lo, d->range_hi,
                                        d->n_ranges, d->counts[0]);
        }
    }
    switch (op) {
    case OP_LOOKUP:
        bl_lookup(d->bits, d->sorted_keys, d->sorted_values, d->n, d->queries, d->n_queries,
                  d->values[1], d->found[1], d->threads);
        break;
    case OP_LOWER_BOUND:
        bl_lower_bound(d->bits, d->sorted_keys, d->sorted_values, d->n, d->queries, d->n_queries,
                       d->keys[1], d->values[1], d->found[1], d->threads);
        break;
    default:
        bl_range_count(d->bits, d->sorted_keys, d->n, d->range_lo, d->range_hi, d->n_ranges,
                       d->counts[1], d->threads);
    }
    return HARMONIA_OK;
}

/* Compares the last results of both engines; prints up to 5 mismatches. Returns their number. */
static uint64_t verify(const bench_data *d, int op)
{
    uint64_t mismatches = 0;
    uint64_t n = op == OP_RANGE_COUNT ? d->n_ranges : d->n_queries;
    for (uint64_t i = 0; i < n; i++) {
        bool same;
        if (op == OP_RANGE_COUNT) {
            same = d->counts[0][i] == d->counts[1][i];
        } else {
            same = d->found[0][i] == d->found[1][i] &&
                   cli_get(d->values[0], d->bits, i) == cli_get(d->values[1], d->bits, i) &&
                   (op == OP_LOOKUP ||
                    cli_get(d->keys[0], d->bits, i) == cli_get(d->keys[1], d->bits, i));
        }
        if (same)
            continue;
        if (++mismatches <= 5) {
            if (op == OP_RANGE_COUNT)
                cli_error("MISMATCH range-count %llu [%llu, %llu]: harmonia %llu, baseline %llu",
                          (unsigned long long)i,
                          (unsigned long long)cli_get(d->range_lo, d->bits, i),
                          (unsigned long long)cli_get(d->range_hi, d->bits, i),
                          (unsigned long long)d->counts[0][i],
                          (unsigned long long)d->counts[1][i]);
            else
                cli_error("MISMATCH %s query %llu (%llu): harmonia found=%d key=%llu value=%llu, "
                          "baseline found=%d key=%llu value=%llu",
                          op_names[op], (unsigned long long)i,
                          (unsigned long long)cli_get(d->queries, d->bits, i), d->found[0][i],
                          op == OP_LOOKUP ? 0ULL
                                          : (unsigned long long)cli_get(d->keys[0], d->bits, i),
                          (unsigned long long)cli_get(d->values[0], d->bits, i), d->found[1][i],
                          op == OP_LOOKUP ? 0ULL
                                          : (unsigned long long)cli_get(d->keys[1], d->bits, i),
                          (unsigned long long)cli_get(d->values[1], d->bits, i));
        }
    }
    return mismatches;
}

static void free_data(bench_data *d)
{
    free(d->sorted_keys);
    free(d->sorted_values);
    free(d->queries);
    free(d->range_lo);
    free(d->range_hi);
    for (int e = 0; e < 2; e++) {
        free(d->values[e]);
        free(d->keys[e]);
        free(d->found[e]);
        free(d->counts[e]);
    }
    harmonia_free(d->tree);
}

int cli_cmd_bench(int argc, char **argv)
{
    cli_opt opts[] = {
        {"keys", "N", "keys in the tree (default 2^24)", NULL},
        {"queries", "N", "point queries per run (default 2^24)", NULL},
        {"ranges", "N", "range-count queries per run (default queries/4; 0 = skip)", NULL},
        {"range-length", "K", "keys per range (default 64)", NULL},
        CLI_OPT_BITS,
        {"dist", "D", "key distribution: uniform (default), dense, normal, zipf", NULL},
        {"hit-rate", "H", "fraction of point queries that are keys (default 1)", NULL},
        {"fanout", "F", "F of the tree (default: 16 for 64-bit keys, 32 for 32-bit)", NULL},
        {"leaf-size", "L", "L of the tree (default: library's)", NULL},
        {"fill", "X", "leaf fill of the build (default: library's)", NULL},
        {"threads", "T", "OpenMP threads of both engines (default: OpenMP's)", NULL},
        {"runs", "R", "timed runs after one warm-up; the median is reported (default 5)", NULL},
        {"backend", "B", "Harmonia's backend: auto (default: the GPU when present), cpu or gpu", NULL},
        {"seed", "S", "seed of the data (default 42)", NULL},
        {"json", NULL, "print the results as JSON", NULL},
        {"quiet", NULL, "no progress bar", NULL},
    };
    cli_spec spec = {
        "bench", "bench [--keys N] [--queries N] [options]",
        "Measures Harmonia against a plain binary search over the sorted keys (OpenMP over\n"
        "the queries), on the same data in the same process: builds a tree of N distinct\n"
        "keys (values: row ids), then times point lookups, lower bounds and range counts,\n"
        "one warm-up and the median of R runs each. Every Harmonia result is checked\n"
        "against the baseline; any mismatch fails the command (exit 1).",
        opts, CLI_COUNT_OF(opts),
        "With no options: 2^24 uniform 64-bit keys, 2^24 queries (all hits), 2^22 ranges\n"
        "of 64 keys, the CPU engine.\n"};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    uint64_t n_keys, n_queries, n_ranges, range_length, fanout, leaf_size, threads, runs, seed;
    int dist, backend_index;
    uint32_t bits;
    double hit_rate, fill;
    if ((status = cli_opt_u64(&spec, "keys", (uint64_t)1 << 24, 0, (uint64_t)1 << 40, &n_keys)) ||
        (status = cli_opt_u64(&spec, "queries", (uint64_t)1 << 24, 0, (uint64_t)1 << 40,
                              &n_queries)) ||
        (status = cli_opt_u64(&spec, "ranges", n_queries / 4, 0, (uint64_t)1 << 40,
                              &n_ranges)) ||
        (status = cli_opt_u64(&spec, "range-length", 64, 1, UINT64_MAX, &range_length)) ||
        (status = cli_opt_key_bits(&spec, &bits)) ||
        (status = cli_opt_choice(&spec, "dist", cli_key_dist_names, CLI_DIST_UNIFORM, &dist)) ||
        (status = cli_opt_double(&spec, "hit-rate", 1.0, 0.0, 1.0, &hit_rate)) ||
        (status = cli_opt_node_size(&spec, "fanout", &fanout)) ||
        (status = cli_opt_node_size(&spec, "leaf-size", &leaf_size)) ||
        (status = cli_opt_double(&spec, "fill", 0.0, 0.0, 1.0, &fill)) ||
        (status = cli_opt_u64(&spec, "threads", 0, 0, 1u << 16, &threads)) ||
        (status = cli_opt_u64(&spec, "runs", 5, 1, 1000, &runs)) ||
        (status = cli_opt_choice(&spec, "backend", cli_backend_names, 0, &backend_index)) ||
        (status = cli_opt_u64(&spec, "seed", 42, 0, UINT64_MAX, &seed)))
        return status;
    if (n_keys == 0 && hit_rate > 0.0)
        return cli_usage_error("--keys 0 leaves nothing to hit; add --hit-rate 0");
    if (n_keys == 0)
        n_ranges = 0;
    bool json = cli_opt_given(&spec, "json");
    bool quiet = cli_opt_given(&spec, "quiet");
    size_t width = bits / 8;

    bench_data d;
    memset(&d, 0, sizeof d);
    d.bits = bits;
    d.n = n_keys;
    d.n_queries = n_queries;
    d.n_ranges = n_ranges;
    d.threads = (int)threads;
    harmonia_query_config_init(&d.config);
    d.config.backend = cli_backend_of(backend_index);
    d.config.threads = (int)threads;

    cli_progress progress;
    cli_progress_init(&progress, quiet);
    /* The data: keys in random order with row ids, the baseline's sorted copy, the queries. */
    double t0 = cli_now();
    void *keys;
    if ((status = cli_gen_keys((cli_key_dist)dist, bits, n_keys, seed, &keys, &progress)) != 0) {
        cli_progress_done(&progress);
        return status;
    }
    d.sorted_keys = malloc(n_keys * width + 1);
    d.sorted_values = malloc(n_keys * width + 1);
    if (d.sorted_keys == NULL || d.sorted_values == NULL) {
        free(keys);
        free_data(&d);
        cli_progress_done(&progress);
        return cli_error("out of memory for %llu keys", (unsigned long long)n_keys);
    }
    for (uint64_t i = 0; i < n_keys; i++)
        cli_set(d.sorted_values, bits, i, i);
    double t1 = cli_now();

    harmonia_build_config build_config;
    harmonia_build_config_init(&build_config);
    build_config.key_bits = bits;
    if (fanout != 0)
        build_config.fanout = (uint32_t)fanout;
    if (leaf_size != 0)
        build_config.leaf_size = (uint32_t)leaf_size;
    if (fill > 0.0)
        build_config.leaf_fill = fill;
    build_config.threads = (int)threads;
    build_config.progress = cli_progress_callback;
    build_config.progress_arg = &progress;
    harmonia_status hs = harmonia_build(&build_config, keys, d.sorted_values, n_keys, &d.tree);
    double t2 = cli_now();
    cli_progress_done(&progress);
    if (hs != HARMONIA_OK) {
        free(keys);
        free_data(&d);
        return cli_library_error(NULL, hs, "build");
    }
    memcpy(d.sorted_keys, keys, n_keys * width);
    free(keys);
    if (cli_sort_pairs(d.sorted_keys, d.sorted_values, n_keys, bits) != 0) {
        free_data(&d);
        return CLI_EXIT_FAIL;
    }
    if ((status = cli_gen_queries(d.sorted_keys, n_keys, bits, n_queries, hit_rate, 0.0,
                                  seed + 1, &d.queries)) != 0 ||
        (status = cli_gen_ranges(d.sorted_keys, n_keys, bits, n_ranges, range_length, seed + 2,
                                 &d.range_lo, &d.range_hi)) != 0) {
        free_data(&d);
        return status;
    }
    for (int e = 0; e < 2; e++) {
        d.values[e] = malloc(n_queries * width + 1);
        d.keys[e] = malloc(n_queries * width + 1);
        d.found[e] = malloc(n_queries + 1);
        d.counts[e] = malloc(n_ranges * sizeof(uint64_t) + 1);
        if (d.values[e] == NULL || d.keys[e] == NULL || d.found[e] == NULL ||
            d.counts[e] == NULL) {
            free_data(&d);
            return cli_error("out of memory for the results of %llu queries",
                             (unsigned long long)n_queries);
        }
    }
    harmonia_tree_info info;
    if ((hs = harmonia_info(d.tree, &info)) != HARMONIA_OK) {
        status = cli_library_error(d.tree, hs, "info");
        free_data(&d);
        return status;
    }

    /* The runs. */
    bench_row rows[OP_COUNT];
    double *times = malloc(runs * sizeof *times);
    if (times == NULL) {
        free_data(&d);
        return cli_error("out of memory");
    }
    uint64_t total_mismatches = 0;
    for (int op = 0; op < OP_COUNT; op++) {
        rows[op].op = op;
        rows[op].items = op == OP_RANGE_COUNT ? n_ranges : n_queries;
        rows[op].ran = rows[op].items > 0;
        if (!rows[op].ran)
            continue;
        for (int engine = 0; engine < 2; engine++) {
            cli_progress_update(&progress, op_names[op], 0.0);
            for (uint64_t r = 0; r <= runs; r++) { /* run 0 is the warm-up */
                double start = cli_now();
                hs = run_once(&d, op, engine);
                double seconds = cli_now() - start;
                if (hs != HARMONIA_OK) {
                    cli_progress_done(&progress);
                    status = cli_library_error(d.tree, hs, op_names[op]);
                    free(times);
                    free_data(&d);
                    return status;
                }
                if (r > 0)
                    times[r - 1] = seconds;
                cli_progress_update(&progress, op_names[op],
                                    ((double)engine * (double)(runs + 1) + (double)r + 1.0) /
                                        (2.0 * (double)(runs + 1)));
            }
            qsort(times, runs, sizeof *times, compare_double);
            rows[op].seconds[engine] =
                runs % 2 == 1 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
        }
        cli_progress_done(&progress);
        total_mismatches += verify(&d, op);
    }
    free(times);

    /* auto takes the GPU when one is usable: name the engine that ran */
    const char *engine_name = backend_index == 1   ? "harmonia cpu"
                              : backend_index == 2 ? "harmonia gpu"
                              : harmonia_device_probe(NULL) == HARMONIA_OK ? "harmonia gpu (auto)"
                                                                           : "harmonia cpu (auto)";
    int thread_count = cli_thread_count((int)threads);
    if (json) {
        printf("{\"command\":\"bench\",\"keys\":%llu,\"queries\":%llu,\"ranges\":%llu,"
               "\"range_length\":%llu,\"key_bits\":%u,\"dist\":\"%s\",\"hit_rate\":%g,"
               "\"fanout\":%u,\"leaf_size\":%u,\"height\":%u,\"leaf_fill\":%.6f,\"threads\":%d,"
               "\"runs\":%llu,\"seed\":%llu,\"backend\":\"%s\",\"generate_seconds\":%.6f,"
               "\"build_seconds\":%.6f,\"results\":[",
               (unsigned long long)n_keys, (unsigned long long)n_queries,
               (unsigned long long)n_ranges, (unsigned long long)range_length, bits,
               cli_key_dist_names[dist], hit_rate, info.fanout, info.leaf_size, info.height,
               info.leaf_fill, thread_count, (unsigned long long)runs, (unsigned long long)seed,
               cli_backend_names[backend_index], t1 - t0, t2 - t1);
        bool first = true;
        for (int op = 0; op < OP_COUNT; op++) {
            if (!rows[op].ran)
                continue;
            double h = rows[op].seconds[0], b = rows[op].seconds[1];
            double items = (double)rows[op].items;
            printf("%s{\"operation\":\"%s\",\"engine\":\"binary search\",\"median_seconds\":%.6f,"
                   "\"million_per_second\":%.3f},",
                   first ? "" : ",", op_names[op], b, b > 0 ? items / b / 1e6 : 0.0);
            printf("{\"operation\":\"%s\",\"engine\":\"%s\",\"median_seconds\":%.6f,"
                   "\"million_per_second\":%.3f,\"speedup\":%.3f}",
                   op_names[op], engine_name, h, h > 0 ? items / h / 1e6 : 0.0,
                   h > 0 ? b / h : 0.0);
            first = false;
        }
        printf("],\"verified\":%s,\"mismatches\":%llu}\n", total_mismatches == 0 ? "true" : "false",
               (unsigned long long)total_mismatches);
    } else {
        printf("harmonia bench --keys %llu --queries %llu --ranges %llu --range-length %llu "
               "--bits %u --dist %s --hit-rate %g --fanout %u --leaf-size %u --threads %d "
               "--runs %llu --backend %s --seed %llu\n",
               (unsigned long long)n_keys, (unsigned long long)n_queries,
               (unsigned long long)n_ranges, (unsigned long long)range_length, bits,
               cli_key_dist_names[dist], hit_rate, info.fanout, info.leaf_size, thread_count,
               (unsigned long long)runs, cli_backend_names[backend_index],
               (unsigned long long)seed);
        printf("tree: height %u, leaf fill %.3f; generate %.3f s, build %.3f s; median of %llu "
               "runs after a warm-up\n\n",
               info.height, info.leaf_fill, t1 - t0, t2 - t1, (unsigned long long)runs);
        printf("%-12s %-20s %12s %14s %9s\n", "operation", "engine", "median ms", "M queries/s",
               "speed-up");
        for (int op = 0; op < OP_COUNT; op++) {
            if (!rows[op].ran)
                continue;
            double h = rows[op].seconds[0], b = rows[op].seconds[1];
            double items = (double)rows[op].items;
            printf("%-12s %-20s %12.3f %14.2f %9s\n", op_names[op], "binary search", b * 1e3,
                   b > 0 ? items / b / 1e6 : 0.0, "1.00x");
            char speedup[32];
            snprintf(speedup, sizeof speedup, "%.2fx", h > 0 ? b / h : 0.0);
            printf("%-12s %-20s %12.3f %14.2f %9s\n", op_names[op], engine_name, h * 1e3,
                   h > 0 ? items / h / 1e6 : 0.0, speedup);
        }
        if (total_mismatches == 0)
            printf("\nverified: every Harmonia result equals the baseline's\n");
    }
    free_data(&d);
    if (total_mismatches != 0)
        return cli_error("%llu results differ from the baseline: Harmonia is WRONG",
                         (unsigned long long)total_mismatches);
    return CLI_EXIT_OK;
}
