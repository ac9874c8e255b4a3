/* dcli_commands.c — the commands of harmonia-dist: build, lookup, lower-bound, range, update, info
 * and check. Each parses its options (the harmonia tool's parser), reads its rank's part of the
 * input (dcli_io.c), calls include/harmonia_dist.h and writes the results in input order. Results
 * and messages follow the harmonia tool's formats; summaries are printed by rank 0. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcli.h"

/* rank 0's answer, for every rank */
static bool rank0_true(bool value)
{
    int v = value;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v != 0;
}

static void print_split(const char *what, double route, double exchange, double local, double back,
                        uint64_t bytes, uint64_t units, const char *unit)
{
    printf("  %s: route %.4f s, exchange %.4f s, local %.4f s, return %.4f s (largest over the ranks); "
           "%" PRIu64 " bytes between ranks (%.2f per %s)\n", what, route, exchange, local, back, bytes,
           units > 0 ? (double)bytes / (double)units : 0.0, unit);
}

/* ---- build ------------------------------------------------------------------------------------ */

int dcli_cmd_build(int argc, char **argv)
{
    cli_opt opts[] = {
        {"input", "FILE", "the key,value pairs (or keys) to index; each rank reads its part (required)", NULL},
        {"out", "MANIFEST", "the manifest to write; the shard files go beside it (required)", NULL},
        CLI_OPT_BITS,
        {"format", "F", "input format: auto (default), bin or text", NULL},
        CLI_OPT_KEYS_ONLY,
        {"fanout", "F", "children per internal node: 8, 16, 32, 64, 128 (default: the library's)", NULL},
        CLI_OPT_LEAF_SIZE,
        CLI_OPT_FILL,
        {"duplicates", "P", "a key present twice: reject (default), first or last (in file order)", NULL},
        {"samples", "N", "keys sampled per rank for the splitters (default 16384)", NULL},
        {"balance", "X", "rebalance when a shard is off the mean by more than X (default 0.05; "
                         "negative: never)", NULL},
        {"threads", "T", "OpenMP threads per rank (default: the node's cores / its ranks)", NULL},
        {"check", NULL, "run the integrity checks on every shard before saving", NULL},
        {"json", NULL, "print the summary as JSON", NULL},
        {"quiet", NULL, "no summary", NULL},
    };
    cli_spec spec = {
        "build", "build --input FILE [options] --out MANIFEST",
        "Builds a range-sharded index over the ranks of the job from key,value pairs: each rank\n"
        "reads its part of the input, the splitters come from a sample of the keys, the pairs go\n"
        "to their shards (MPI_Alltoallv) and each rank builds and saves its shard. Duplicates\n"
        "follow the policy in file order, as with 'harmonia build'. Text input lines are\n"
        "'key,value' or 'key' (then the value is the row id, the key's position in the file).",
        opts, CLI_COUNT_OF(opts),
        "The manifest names the shard files (MANIFEST.<generation>.<r>-of-<N>, beside it); load\n"
        "the index on N ranks. Example:\n"
        "  mpirun -np 4 harmonia-dist build --input pairs.bin --out pairs.hdm\n"};
    dcli_capture_begin();
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    const char *input = NULL, *out = NULL;
    int format = 0;
    uint32_t key_bits = 64;
    harmonia_duplicates duplicates = HARMONIA_DUPLICATES_REJECT;
    uint64_t fanout = 0, leaf_size = 0, threads = 0, samples = 0;
    double fill = 0.0, balance = 0.0;
    if (status == 0)
        (void)((status = cli_opt_required(&spec, "input", &input)) ||
         (status = cli_opt_required(&spec, "out", &out)) ||
         (status = cli_opt_key_bits(&spec, &key_bits)) ||
         (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
         (status = cli_opt_node_size(&spec, "fanout", &fanout)) ||
         (status = cli_opt_node_size(&spec, "leaf-size", &leaf_size)) ||
         (status = cli_opt_double(&spec, "fill", 0.0, 0.0, 1.0, &fill)) ||
         (status = cli_opt_duplicates(&spec, &duplicates)) ||
         (status = cli_opt_u64(&spec, "samples", 0, 0, (uint64_t)1 << 22, &samples)) ||
         (status = cli_opt_double(&spec, "balance", 0.0, -1.0, 10.0, &balance)) ||
         (status = cli_opt_u64(&spec, "threads", 0, 0, 1u << 16, &threads)));
    if (status == 0 && cli_opt_given(&spec, "fill") && fill <= 0.0)
        status = cli_usage_error("--fill: must be in (0, 1]");
    dcli_capture_end();
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const bool quiet = cli_opt_given(&spec, "quiet"), json = cli_opt_given(&spec, "json");
    if (cli_is_stdout(out))
        return dcli_error0("--out: an index is saved to files, not standard output"), CLI_EXIT_USAGE;
    const cli_named_path build_inputs[] = {{"--input", input}};
    if ((status = dcli_check_output("--out", out, build_inputs, 1)) != 0)
        return status;

    double t0 = MPI_Wtime();
    dcli_part part;
    if (dcli_read_records(input, (cli_format)format, key_bits, 1, 2,
                          cli_opt_given(&spec, "keys-only") ? 1 : 2, "key or key,value", &part) != 0)
        return CLI_EXIT_FAIL;
    double t1 = MPI_Wtime();

    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    config.build.key_bits = key_bits;
    if (fanout)
        config.build.fanout = (uint32_t)fanout;
    if (leaf_size)
        config.build.leaf_size = (uint32_t)leaf_size;
    if (fill > 0.0)
        config.build.leaf_fill = fill;
    config.build.duplicates = duplicates;
    config.build.threads = (int)threads;
    config.samples_per_rank = samples;
    config.balance_tolerance = balance;
    harmonia_dist *dist = NULL;
    harmonia_dist_build_stats bs;
    harmonia_status hs = harmonia_dist_build(MPI_COMM_WORLD, &config, part.column[0],
                                             part.fields == 2 ? part.column[1] : NULL, part.count,
                                             &dist, &bs);
    dcli_part_free(&part);
    double t2 = MPI_Wtime();
    if (hs != HARMONIA_OK) {
        if (hs == HARMONIA_ERR_DUPLICATE_KEY)
            return dcli_error0("%s: %s (%s; --duplicates first|last keeps one)", input,
                               harmonia_dist_last_error(NULL), harmonia_strerror(hs));
        return dcli_library_error0(hs, harmonia_dist_last_error(NULL), input);
    }
    if (cli_opt_given(&spec, "check") && (hs = harmonia_dist_check(dist)) != HARMONIA_OK) {
        int s = dcli_library_error0(hs, harmonia_dist_last_error(dist), "the built index failed its check");
        harmonia_dist_free(dist);
        return s;
    }
    double t3 = MPI_Wtime();
    hs = harmonia_dist_save(dist, out);
    double t4 = MPI_Wtime();
    if (hs != HARMONIA_OK) {
        int s = dcli_library_error0(hs, harmonia_dist_last_error(dist), out);
        harmonia_dist_free(dist);
        return s;
    }
    harmonia_dist_info info;
    harmonia_dist_get_info(dist, &info);
    double sample = dcli_max_double(bs.sample_seconds), route = dcli_max_double(bs.route_seconds),
           exchange = dcli_max_double(bs.exchange_seconds), local = dcli_max_double(bs.local_seconds),
           rebalance = dcli_max_double(bs.rebalance_seconds);
    double read_s = dcli_max_double(t1 - t0), build_s = dcli_max_double(t2 - t1),
           save_s = dcli_max_double(t4 - t3);
    uint64_t sent = dcli_sum_u64(bs.bytes_sent);
    int rebalanced = bs.rebalanced;
    MPI_Allreduce(MPI_IN_PLACE, &rebalanced, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (dcli_rank == 0) {
        if (json) {
            printf("{\"command\":\"build\",\"input\":");
            cli_json_string(stdout, input);
            printf(",\"index\":");
            cli_json_string(stdout, out);
            printf(",\"ranks\":%d,\"keys\":%" PRIu64 ",\"key_bits\":%u,\"fanout\":%u,\"leaf_size\":%u,"
                   "\"smallest_shard\":%" PRIu64 ",\"largest_shard\":%" PRIu64 ",\"imbalance\":%.6f,"
                   "\"rebalanced\":%s,\"bytes_exchanged\":%" PRIu64 ",\"read_seconds\":%.6f,"
                   "\"build_seconds\":%.6f,\"sample_seconds\":%.6f,\"route_seconds\":%.6f,"
                   "\"exchange_seconds\":%.6f,\"local_seconds\":%.6f,\"rebalance_seconds\":%.6f,"
                   "\"save_seconds\":%.6f}\n",
                   info.ranks, info.keys, info.key_bits, info.local.fanout, info.local.leaf_size,
                   info.smallest_shard, info.largest_shard, info.imbalance, rebalanced ? "true" : "false",
                   sent, read_s, build_s, sample, route, exchange, local, rebalance, save_s);
        } else if (!quiet) {
            printf("built %s: %" PRIu64 " keys in %d shards (%" PRIu64 " to %" PRIu64 " keys each, "
                   "imbalance %.2f %%%s), %u-bit, F=%u L=%u\n", out, info.keys, info.ranks,
                   info.smallest_shard, info.largest_shard, 100.0 * info.imbalance,
                   rebalanced ? ", rebalanced" : "", info.key_bits, info.local.fanout, info.local.leaf_size);
            printf("read %.3f s, build %.3f s (sample %.3f, route %.3f, exchange %.3f, local %.3f, "
                   "rebalance %.3f), save %.3f s; %" PRIu64 " bytes between ranks\n", read_s, build_s,
                   sample, route, exchange, local, rebalance, save_s, sent);
        }
    }
    harmonia_dist_free(dist);
    return CLI_EXIT_OK;
}

/* ---- queries ---------------------------------------------------------------------------------- */

#define QUERY_OPTS                                                                                \
    {"index", "MANIFEST", "the index's manifest (required)", NULL},                               \
    {"out", "FILE", "write the results to FILE (default: standard output)", NULL},                \
    CLI_OPT_RESULTS_FORMAT,                                    \
    {"json", NULL, "results (and the summary) as JSON", NULL},                                    \
    CLI_OPT_QUERY_BACKEND,                    \
    {"threads", "T", "CPU engine threads per rank (default: the node's cores / its ranks)", NULL},\
    {"group-size", "G", "GPU: threads per query, 1..32 and <= F", NULL},                          \
    CLI_OPT_PSA,         \
    CLI_OPT_WINDOW,              \
    CLI_OPT_PIPELINE_DEPTH,                    \
    {"no-verify", NULL, "load the shards without their checksums and integrity checks", NULL},    \
    {"quiet", NULL, "no summary", NULL}

/* "--queries" for "queries": the option as the user wrote it, for messages. */
static const char *input_option_name(const char *option)
{
    return strcmp(option, "queries") == 0 ? "--queries" : "--ranges";
}

typedef struct query_setup {
    const char *index_path, *input_path, *out_path;
    bool binary_out, json, quiet;
    int backend_index, input_format;
    harmonia_query_config config;
    harmonia_dist *dist;
    uint32_t key_bits;
    double load_seconds, read_seconds;
    dcli_part input;
} query_setup;

static int query_setup_run(query_setup *q, cli_spec *spec, int argc, char **argv,
                           const char *input_option, const char *input_format_option, int fields,
                           const char *what)
{
    memset(q, 0, sizeof *q);
    dcli_capture_begin();
    int status = cli_parse(spec, argc, argv, NULL, 0, NULL);
    int psa = -1;
    uint64_t threads = 0, group_size = 0, window = 0, depth = 0;
    if (status == 0)
        (void)((status = cli_opt_required(spec, "index", &q->index_path)) ||
         (status = cli_opt_required(spec, input_option, &q->input_path)) ||
         (status = cli_opt_choice(spec, input_format_option, cli_format_names, CLI_FORMAT_AUTO,
                                  &q->input_format)) ||
         (status = cli_opt_results_format(spec, &q->binary_out)) ||
         (status = cli_opt_choice(spec, "backend", cli_backend_names, 0, &q->backend_index)) ||
         (status = cli_opt_u64(spec, "threads", 0, 0, 1u << 16, &threads)) ||
         (status = cli_opt_u64(spec, "group-size", 0, 0, 32, &group_size)) ||
         (status = cli_opt_psa(spec, &psa)) ||
         (status = cli_opt_u64(spec, "window", 0, 0, 1u << 30, &window)) ||
         (status = cli_opt_u64(spec, "pipeline-depth", 0, 0, 3, &depth)));
    q->out_path = status == 0 ? cli_opt_str(spec, "out", NULL) : NULL;
    q->json = status == 0 && cli_opt_given(spec, "json");
    q->quiet = status == 0 && cli_opt_given(spec, "quiet");
    if (status == 0 && q->json && q->binary_out)
        status = cli_usage_error("--json and --format bin exclude each other");
    if (status == 0 && q->binary_out && cli_is_stdout(q->out_path) &&
        rank0_true(dcli_rank == 0 && isatty(STDOUT_FILENO)))
        status = cli_usage_error("binary results to a terminal: give --out FILE");
    dcli_capture_end();
    if (status != 0)
        return status;
    const cli_named_path inputs[] = {{"--index", q->index_path}, {input_option_name(input_option), q->input_path}};
    if ((status = dcli_check_output("--out", q->out_path, inputs, 2)) != 0)
        return status;
    harmonia_query_config_init(&q->config);
    q->config.backend = cli_backend_of(q->backend_index);
    q->config.group_size = (uint32_t)group_size;
    q->config.psa = psa;
    q->config.psa_window = window;
    q->config.pipeline_depth = (uint32_t)depth;
    double t0 = MPI_Wtime();
    if (dcli_load(q->index_path, !cli_opt_given(spec, "no-verify"), &q->dist) != 0)
        return CLI_EXIT_FAIL;
    q->config.threads = threads > 0 ? (int)threads : dcli_default_threads(q->dist);
    harmonia_dist_info info;
    harmonia_dist_get_info(q->dist, &info);
    q->key_bits = info.key_bits;
    double t1 = MPI_Wtime();
    if (dcli_read_records(q->input_path, (cli_format)q->input_format, q->key_bits, fields, fields,
                          fields, what, &q->input) != 0) {
        harmonia_dist_free(q->dist);
        q->dist = NULL;
        return CLI_EXIT_FAIL;
    }
    q->load_seconds = dcli_max_double(t1 - t0);
    q->read_seconds = dcli_max_double(MPI_Wtime() - t1);
    return 0;
}

static void query_teardown(query_setup *q)
{
    harmonia_dist_free(q->dist);
    dcli_part_free(&q->input);
}

static void json_header(dcli_buf *b, const query_setup *q, const char *command, const char *unit,
                        uint64_t count, const char *result_name, uint64_t result_count, double seconds)
{
    dcli_printf(b, "{\"command\":\"%s\",\"index\":", command);
    /* cli_json_string writes to a FILE: format it through a memory stream */
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (m != NULL) {
        cli_json_string(m, q->index_path);
        fclose(m);
        dcli_put_str(b, text);
        free(text);
    }
    dcli_printf(b, ",\"key_bits\":%u,\"ranks\":%d,\"%s\":%" PRIu64 ",\"%s\":%" PRIu64
                   ",\"seconds\":%.6f,\"backend\":\"%s\",\"results\":[",
                q->key_bits, dcli_ranks, unit, count, result_name, result_count, seconds,
                cli_backend_names[q->backend_index]);
}

static void print_summary(const query_setup *q, const char *command, const char *unit, uint64_t count,
                          const char *result_name, uint64_t result_count, double seconds,
                          const harmonia_dist_query_stats *st)
{
    double route = dcli_max_double(st->route_seconds), exchange = dcli_max_double(st->exchange_seconds),
           local = dcli_max_double(st->local_seconds), back = dcli_max_double(st->return_seconds);
    uint64_t bytes = dcli_sum_u64(st->bytes_sent);
    if (q->quiet || cli_is_stdout(q->out_path) || dcli_rank != 0)
        return;
    double rate = seconds > 0 ? (double)count / seconds / 1e6 : 0.0;
    if (q->json) {
        printf("{\"command\":\"%s\",\"index\":", command);
        cli_json_string(stdout, q->index_path);
        printf(",\"out\":");
        cli_json_string(stdout, q->out_path);
        printf(",\"ranks\":%d,\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 ",\"seconds\":%.6f,"
               "\"million_per_second\":%.3f,\"backend\":\"%s\",\"route_seconds\":%.6f,"
               "\"exchange_seconds\":%.6f,\"local_seconds\":%.6f,\"return_seconds\":%.6f,"
               "\"bytes_exchanged\":%" PRIu64 "}\n",
               dcli_ranks, unit, count, result_name, result_count, seconds, rate,
               cli_backend_names[q->backend_index], route, exchange, local, back, bytes);
    } else {
        printf("%s: %" PRIu64 " %s, %" PRIu64 " %s, %.4f s (%.2f M %s/s on %d ranks, backend %s) -> %s\n",
               command, count, unit, result_count, result_name, seconds, rate, unit, dcli_ranks,
               cli_backend_names[q->backend_index], q->out_path);
        print_split("time split", route, exchange, local, back, bytes, count, "query");
    }
}

static int point_command(bool lower_bound, int argc, char **argv)
{
    cli_opt opts[] = {
        {"queries", "FILE", "the queries: one key per record; each rank reads its part (required)", NULL},
        {"queries-format", "F", "format of the queries file: auto (default), bin or text", NULL},
        QUERY_OPTS,
    };
    cli_spec lookup_spec = {
        "lookup", "lookup --index MANIFEST --queries FILE [--out FILE] [--json]",
        "Looks up every query key in the sharded index and writes, in query order, its value\n"
        "or that it is not there. Each rank reads its part of the queries.",
        opts, CLI_COUNT_OF(opts),
        "Results as 'harmonia lookup': text lines 'key<TAB>value' or 'key<TAB>NOT FOUND';\n"
        "--format bin writes value,found records of the key width; --json one object with a\n"
        "\"results\" array. Each rank writes its results at their place in --out.\n"};
    cli_spec lower_bound_spec = {
        "lower-bound", "lower-bound --index MANIFEST --queries FILE [--out FILE] [--json]",
        "Finds, for every query, the smallest key of the sharded index that is >= the query,\n"
        "and its value (past a shard's last key, the next shard's first).",
        opts, CLI_COUNT_OF(opts),
        "Results as 'harmonia lower-bound': text lines 'query<TAB>key<TAB>value' or\n"
        "'query<TAB>NONE'; --format bin writes key,value,found records; --json one object.\n"};
    const char *command = lower_bound ? "lower-bound" : "lookup";
    query_setup q;
    int status = query_setup_run(&q, lower_bound ? &lower_bound_spec : &lookup_spec, argc, argv,
                                 "queries", "queries-format", 1, "key");
    if (status != 0) {
        query_teardown(&q);
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    }
    const uint32_t bits = q.key_bits;
    const size_t width = bits / 8;
    const uint64_t n = q.input.count;
    const void *queries = q.input.column[0];
    void *values = malloc(n > 0 ? n * width : 1), *keys = malloc(n > 0 ? n * width : 1);
    uint8_t *found = malloc(n > 0 ? n : 1);
    cli_err err;
    cli_err_init(&err, true);
    if (values == NULL || keys == NULL || found == NULL)
        cli_fail(&err, "out of memory for %" PRIu64 " results", n);
    if (dcli_agree(&err) != 0) {
        free(values);
        free(keys);
        free(found);
        query_teardown(&q);
        return CLI_EXIT_FAIL;
    }
    harmonia_dist_query_stats st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    harmonia_status hs = lower_bound ? harmonia_dist_lower_bound(q.dist, &q.config, queries, n, keys,
                                                                  values, found, &st)
                                     : harmonia_dist_lookup(q.dist, &q.config, queries, n, values, found, &st);
    double seconds = dcli_max_double(MPI_Wtime() - t0);
    if (hs != HARMONIA_OK) {
        status = dcli_library_error0(hs, harmonia_dist_last_error(q.dist), NULL);
        goto done;
    }
    uint64_t mine_found = 0;
    for (uint64_t i = 0; i < n; i++)
        mine_found += found[i] != 0;
    const uint64_t total = q.input.total, total_found = dcli_sum_u64(mine_found);
    dcli_buf out = {NULL, 0, 0, false};
    if (q.json && dcli_rank == 0)
        json_header(&out, &q, command, "queries", total, "found", total_found, seconds);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = cli_get(queries, bits, i), v = cli_get(values, bits, i);
        uint64_t k = lower_bound ? cli_get(keys, bits, i) : 0;
        if (q.json) {
            dcli_put_str(&out, q.input.base + i == 0 ? "\n" : ",\n");
            dcli_printf(&out, "{\"%s\":%" PRIu64 ",\"found\":%s", lower_bound ? "query" : "key", key,
                        found[i] ? "true" : "false");
            if (found[i] && lower_bound)
                dcli_printf(&out, ",\"key\":%" PRIu64, k);
            if (found[i])
                dcli_printf(&out, ",\"value\":%" PRIu64, v);
            dcli_put_char(&out, '}');
        } else if (q.binary_out) {
            if (lower_bound)
                dcli_put_bin(&out, bits, k);
            dcli_put_bin(&out, bits, v);
            dcli_put_bin(&out, bits, found[i] ? 1 : 0);
        } else {
            dcli_put_u64(&out, key);
            dcli_put_char(&out, '\t');
            if (!found[i]) {
                dcli_put_str(&out, lower_bound ? "NONE" : "NOT FOUND");
            } else {
                if (lower_bound) {
                    dcli_put_u64(&out, k);
                    dcli_put_char(&out, '\t');
                }
                dcli_put_u64(&out, v);
            }
            dcli_put_char(&out, '\n');
        }
    }
    if (q.json && dcli_rank == dcli_ranks - 1)
        dcli_put_str(&out, total > 0 ? "\n]}\n" : "]}\n");
    status = dcli_write_ordered(q.out_path, &out, 1);
    dcli_buf_free(&out);
    if (status == 0)
        print_summary(&q, command, "queries", total, "found", total_found, seconds, &st);
done:
    free(values);
    free(keys);
    free(found);
    query_teardown(&q);
    return status;
}

int dcli_cmd_lookup(int argc, char **argv)
{
    return point_command(false, argc, argv);
}

int dcli_cmd_lower_bound(int argc, char **argv)
{
    return point_command(true, argc, argv);
}

int dcli_cmd_range(int argc, char **argv)
{
    cli_opt opts[] = {
        {"ranges", "FILE", "the ranges: lo,hi records, inclusive; each rank reads its part (required)", NULL},
        {"ranges-format", "F", "format of the ranges file: auto (default), bin or text", NULL},
        CLI_OPT_COLLECT,
        QUERY_OPTS,
    };
    cli_spec spec = {
        "range", "range --index MANIFEST --ranges FILE [--collect] [--out FILE] [--json]",
        "Counts (or, with --collect, lists) the keys k with lo <= k <= hi of the sharded index\n"
        "for every range lo,hi (lo > hi is empty); a range over several shards is split and\n"
        "its parts summed (or concatenated in key order).",
        opts, CLI_COUNT_OF(opts),
        "Results as 'harmonia range': text lines 'lo<TAB>hi<TAB>count'; with --collect, for\n"
        "each range '# range I [lo, hi]: N keys' (I counted over the whole file) and its pairs\n"
        "'key<TAB>value'. --format bin: one 64-bit count per range; with --collect the count+1\n"
        "64-bit offsets, then the key,value records. --json: one object with \"results\".\n"};
    query_setup q;
    int status = query_setup_run(&q, &spec, argc, argv, "ranges", "ranges-format", 2, "lo,hi");
    if (status != 0) {
        query_teardown(&q);
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    }
    const bool collect = cli_opt_given(&spec, "collect");
    const uint32_t bits = q.key_bits;
    const size_t width = bits / 8;
    const uint64_t n = q.input.count;
    const void *lo = q.input.column[0], *hi = q.input.column[1];
    uint64_t *counts = malloc((n + 1) * sizeof *counts);
    void *keys = NULL, *values = NULL;
    cli_err err;
    cli_err_init(&err, true);
    if (counts == NULL)
        cli_fail(&err, "out of memory for %" PRIu64 " ranges", n);
    if (dcli_agree(&err) != 0) {
        free(counts);
        query_teardown(&q);
        return CLI_EXIT_FAIL;
    }
    harmonia_dist_query_stats st, st2;
    memset(&st2, 0, sizeof st2);
    harmonia_status hs;
    uint64_t pairs = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (!collect) {
        hs = harmonia_dist_range_count(q.dist, &q.config, lo, hi, n, counts, &st);
        for (uint64_t i = 0; hs == HARMONIA_OK && i < n; i++)
            pairs += counts[i];
    } else {
        hs = harmonia_dist_range_collect(q.dist, &q.config, lo, hi, n, counts, NULL, NULL, &st);
        if (hs == HARMONIA_OK) {
            pairs = counts[n];
            keys = malloc(pairs > 0 ? pairs * width : 1);
            values = malloc(pairs > 0 ? pairs * width : 1);
            if (keys == NULL || values == NULL)
                cli_fail(&err, "out of memory for the %" PRIu64 " pairs of the ranges", pairs);
            if (dcli_agree(&err) != 0) {
                status = CLI_EXIT_FAIL;
                goto done;
            }
            hs = harmonia_dist_range_collect(q.dist, &q.config, lo, hi, n, counts, keys, values, &st2);
            st.route_seconds += st2.route_seconds;
            st.exchange_seconds += st2.exchange_seconds;
            st.local_seconds += st2.local_seconds;
            st.return_seconds += st2.return_seconds;
            st.bytes_sent += st2.bytes_sent;
        }
    }
    double seconds = dcli_max_double(MPI_Wtime() - t0);
    if (hs != HARMONIA_OK) {
        status = dcli_library_error0(hs, harmonia_dist_last_error(q.dist), NULL);
        goto done;
    }
    const uint64_t total = q.input.total, total_pairs = dcli_sum_u64(pairs);
    uint64_t pair_base = 0; /* pairs of the ranks before this one */
    MPI_Exscan(&pairs, &pair_base, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (dcli_rank == 0)
        pair_base = 0;
    dcli_buf seg[2] = {{NULL, 0, 0, false}, {NULL, 0, 0, false}};
    if (q.json && dcli_rank == 0)
        json_header(&seg[0], &q, "range", "ranges", total, "keys", total_pairs, seconds);
    if (q.binary_out && collect) {
        for (uint64_t i = 0; i < n; i++)
            dcli_put_bin(&seg[0], 64, pair_base + counts[i]);
        if (dcli_rank == dcli_ranks - 1)
            dcli_put_bin(&seg[0], 64, total_pairs);
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t range_lo = cli_get(lo, bits, i), range_hi = cli_get(hi, bits, i);
        const uint64_t first = collect ? counts[i] : 0;
        const uint64_t count = collect ? counts[i + 1] - counts[i] : counts[i];
        if (q.json) {
            dcli_put_str(&seg[0], q.input.base + i == 0 ? "\n" : ",\n");
            dcli_printf(&seg[0], "{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"count\":%" PRIu64, range_lo,
                        range_hi, count);
            if (collect) {
                dcli_put_str(&seg[0], ",\"pairs\":[");
                for (uint64_t j = 0; j < count; j++)
                    dcli_printf(&seg[0], "%s[%" PRIu64 ",%" PRIu64 "]", j == 0 ? "" : ",",
                                cli_get(keys, bits, first + j), cli_get(values, bits, first + j));
                dcli_put_char(&seg[0], ']');
            }
            dcli_put_char(&seg[0], '}');
        } else if (q.binary_out) {
            if (!collect) {
                dcli_put_bin(&seg[0], 64, count);
            } else {
                for (uint64_t j = 0; j < count; j++) {
                    dcli_put_bin(&seg[1], bits, cli_get(keys, bits, first + j));
                    dcli_put_bin(&seg[1], bits, cli_get(values, bits, first + j));
                }
            }
        } else if (!collect) {
            dcli_put_u64(&seg[0], range_lo);
            dcli_put_char(&seg[0], '\t');
            dcli_put_u64(&seg[0], range_hi);
            dcli_put_char(&seg[0], '\t');
            dcli_put_u64(&seg[0], count);
            dcli_put_char(&seg[0], '\n');
        } else {
            dcli_printf(&seg[0], "# range %" PRIu64 " [%" PRIu64 ", %" PRIu64 "]: %" PRIu64 " %s\n",
                        q.input.base + i, range_lo, range_hi, count, count == 1 ? "key" : "keys");
            for (uint64_t j = 0; j < count; j++) {
                dcli_put_u64(&seg[0], cli_get(keys, bits, first + j));
                dcli_put_char(&seg[0], '\t');
                dcli_put_u64(&seg[0], cli_get(values, bits, first + j));
                dcli_put_char(&seg[0], '\n');
            }
        }
    }
    if (q.json && dcli_rank == dcli_ranks - 1)
        dcli_put_str(&seg[0], total > 0 ? "\n]}\n" : "]}\n");
    status = dcli_write_ordered(q.out_path, seg, 2);
    dcli_buf_free(&seg[0]);
    dcli_buf_free(&seg[1]);
    if (status == 0)
        print_summary(&q, "range", "ranges", total, "keys", total_pairs, seconds, &st);
done:
    free(counts);
    free(keys);
    free(values);
    query_teardown(&q);
    return status;
}

/* ---- update ----------------------------------------------------------------------------------- */

int dcli_cmd_update(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "MANIFEST", "the index to update (required)", NULL},
        {"ops", "FILE", "the operations, applied as one batch; each rank reads its part (required)", NULL},
        {"out", "MANIFEST", "save the updated index here (default: over --index)", NULL},
        {"format", "F", "format of the operations file: auto (default), bin or text", NULL},
        CLI_OPT_INSERT_EXISTING,
        CLI_OPT_UPDATE_MISSING,
        {"split-fill", "X", "fill of the nodes an overflowing leaf splits into, in (0, 1]", NULL},
        {"threads", "T", "OpenMP threads per rank (default: the node's cores / its ranks)", NULL},
        {"json", NULL, "print the statistics as JSON", NULL},
        {"no-verify", NULL, "load the shards without their checksums and integrity checks", NULL},
        {"quiet", NULL, "no summary", NULL},
    };
    cli_spec spec = {
        "update", "update --index MANIFEST --ops FILE [--out MANIFEST] [options] [--json]",
        "Applies a batch of inserts, updates, upserts and deletes to a sharded index, all or\n"
        "nothing on every shard: each rank reads its part of the operations file, each\n"
        "operation goes to its key's shard (operations on one key apply in file order), every\n"
        "shard checks its part before any applies it, then every shard is checked and the\n"
        "index saved (a new manifest and shard files, atomically), over --index or to --out.\n"
        "A malformed line or a batch that fails under the policies applies nothing, saves\n"
        "nothing, and the error names the file line (or binary record) of the operation.",
        opts, CLI_COUNT_OF(opts),
        "Operations files as 'harmonia update': text lines '+ key value', '= key value',\n"
        "'* key value', '- key'; binary kind,key,value records of the key width.\n"};
    dcli_capture_begin();
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    const char *index_path = NULL, *ops_path = NULL, *target = NULL;
    int format = 0;
    harmonia_insert_policy insert_existing = HARMONIA_INSERT_EXISTING_ERROR;
    harmonia_update_policy update_missing = HARMONIA_UPDATE_MISSING_ERROR;
    double split_fill = 0.0;
    uint64_t threads = 0;
    if (status == 0)
        (void)((status = cli_opt_required(&spec, "index", &index_path)) ||
         (status = cli_opt_required(&spec, "ops", &ops_path)) ||
         (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
         (status = cli_opt_insert_existing(&spec, &insert_existing)) ||
         (status = cli_opt_update_missing(&spec, &update_missing)) ||
         (status = cli_opt_double(&spec, "split-fill", 0.0, 0.0, 1.0, &split_fill)) ||
         (status = cli_opt_u64(&spec, "threads", 0, 0, 1u << 16, &threads)));
    if (status == 0 && cli_opt_given(&spec, "split-fill") && split_fill <= 0.0)
        status = cli_usage_error("--split-fill: must be in (0, 1]");
    if (status == 0) {
        target = cli_opt_str(&spec, "out", index_path);
        if (cli_is_stdout(target))
            status = cli_usage_error("--out: an index is saved to files, not standard output");
    }
    dcli_capture_end();
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const bool json = cli_opt_given(&spec, "json"), quiet = cli_opt_given(&spec, "quiet");
    const cli_named_path update_inputs[] = {{"--ops", ops_path}};
    if ((status = dcli_check_output("--out", target, update_inputs, 1)) != 0)
        return status;

    double t0 = MPI_Wtime();
    harmonia_dist *dist = NULL;
    if (dcli_load(index_path, !cli_opt_given(&spec, "no-verify"), &dist) != 0)
        return CLI_EXIT_FAIL;
    harmonia_dist_info before, after;
    harmonia_dist_get_info(dist, &before);
    double t1 = MPI_Wtime();
    dcli_part ops;
    if (dcli_read_ops(ops_path, (cli_format)format, before.key_bits, &ops) != 0) {
        dcli_error0("nothing was applied; %s is unchanged", index_path);
        harmonia_dist_free(dist);
        return CLI_EXIT_FAIL;
    }
    double t2 = MPI_Wtime();
    harmonia_update_config config;
    harmonia_update_config_init(&config);
    config.insert_existing = insert_existing;
    config.update_missing = update_missing;
    if (split_fill > 0.0)
        config.split_fill = split_fill;
    config.threads = threads > 0 ? (int)threads : dcli_default_threads(dist);
    harmonia_dist_update_stats st;
    harmonia_status hs = harmonia_dist_update(dist, &config, ops.kinds, ops.column[0], ops.column[1],
                                              ops.count, &st);
    double t3 = MPI_Wtime();
    if (hs != HARMONIA_OK) {
        /* the failing operation's place in the file, from the rank that read it */
        char where[1024] = "";
        if (st.failed_rank >= 0) {
            if (dcli_rank == st.failed_rank)
                dcli_part_location(ops_path, &ops, st.total.failed_operation, 3, where, sizeof where);
            MPI_Bcast(where, sizeof where, MPI_CHAR, st.failed_rank, MPI_COMM_WORLD);
        } else {
            snprintf(where, sizeof where, "%s", ops_path);
        }
        const char *hint = hs == HARMONIA_ERR_KEY_EXISTS ? "; --insert-existing upsert makes such inserts updates"
                           : hs == HARMONIA_ERR_KEY_MISSING ? "; --update-missing skip skips updates of missing keys"
                                                            : "";
        status = dcli_error0("%s: %s (%s%s); %s is unchanged", where, harmonia_dist_last_error(dist),
                             harmonia_strerror(hs), hint, index_path);
        dcli_part_free(&ops);
        harmonia_dist_free(dist);
        return status;
    }
    dcli_part_free(&ops);
    hs = harmonia_dist_check(dist);
    double t4 = MPI_Wtime();
    if (hs != HARMONIA_OK) {
        status = dcli_error0("the updated index failed its check: %s (%s); nothing was saved and %s is "
                             "unchanged", harmonia_dist_last_error(dist), harmonia_strerror(hs), index_path);
        harmonia_dist_free(dist);
        return status;
    }
    hs = harmonia_dist_save(dist, target);
    double t5 = MPI_Wtime();
    if (hs != HARMONIA_OK) {
        status = dcli_library_error0(hs, harmonia_dist_last_error(dist), target);
        harmonia_dist_free(dist);
        return status;
    }
    harmonia_dist_get_info(dist, &after);
    double load_s = dcli_max_double(t1 - t0), read_s = dcli_max_double(t2 - t1),
           update_s = dcli_max_double(t3 - t2), check_s = dcli_max_double(t4 - t3),
           save_s = dcli_max_double(t5 - t4), route = dcli_max_double(st.route_seconds),
           exchange = dcli_max_double(st.exchange_seconds), validate = dcli_max_double(st.validate_seconds),
           commit = dcli_max_double(st.commit_seconds);
    uint64_t bytes = dcli_sum_u64(st.bytes_sent);
    const harmonia_update_stats *s = &st.total;
    if (dcli_rank == 0 && json) {
        printf("{\"command\":\"update\",\"index\":");
        cli_json_string(stdout, index_path);
        printf(",\"ops\":");
        cli_json_string(stdout, ops_path);
        printf(",\"out\":");
        cli_json_string(stdout, target);
        printf(",\"ranks\":%d,\"key_bits\":%u,\"operations\":%" PRIu64 ",\"applied\":%" PRIu64
               ",\"inserted\":%" PRIu64 ",\"updated\":%" PRIu64 ",\"deleted\":%" PRIu64 ",\"missing\":%" PRIu64
               ",\"duplicates\":%" PRIu64 ",\"leaves_touched\":%" PRIu64 ",\"leaves_split\":%" PRIu64
               ",\"leaves_removed\":%" PRIu64 ",\"auxiliary_nodes\":%" PRIu64 ",\"keys_before\":%" PRIu64
               ",\"keys_after\":%" PRIu64 ",\"smallest_shard\":%" PRIu64 ",\"largest_shard\":%" PRIu64
               ",\"bytes_exchanged\":%" PRIu64 ",\"load_seconds\":%.6f,\"read_seconds\":%.6f,"
               "\"update_seconds\":%.6f,\"route_seconds\":%.6f,\"exchange_seconds\":%.6f,"
               "\"validate_seconds\":%.6f,\"commit_seconds\":%.6f,\"check_seconds\":%.6f,"
               "\"save_seconds\":%.6f}\n",
               dcli_ranks, after.key_bits, s->operations, s->applied, s->inserted, s->updated, s->deleted,
               s->missing, s->duplicates, s->leaves_touched, s->leaves_split, s->leaves_removed,
               s->auxiliary_nodes, before.keys, after.keys, after.smallest_shard, after.largest_shard, bytes,
               load_s, read_s, update_s, route, exchange, validate, commit, check_s, save_s);
    } else if (dcli_rank == 0 && !quiet) {
        printf("updated %s with %s on %d ranks", index_path, ops_path, dcli_ranks);
        if (strcmp(target, index_path) != 0)
            printf(", saved to %s", target);
        printf("\n");
        printf("operations       %" PRIu64 "\n", s->operations);
        printf("applied          %" PRIu64 "\n", s->applied);
        printf("  inserted       %" PRIu64 "\n", s->inserted);
        printf("  updated        %" PRIu64 "\n", s->updated);
        printf("  deleted        %" PRIu64 "\n", s->deleted);
        printf("missing          %" PRIu64 "\n", s->missing);
        printf("duplicates       %" PRIu64 "\n", s->duplicates);
        printf("leaves touched   %" PRIu64 "\n", s->leaves_touched);
        printf("leaves split     %" PRIu64 "\n", s->leaves_split);
        printf("leaves removed   %" PRIu64 "\n", s->leaves_removed);
        printf("keys             %" PRIu64 " -> %" PRIu64 " (shards of %" PRIu64 " to %" PRIu64 ")\n",
               before.keys, after.keys, after.smallest_shard, after.largest_shard);
        printf("load             %.4f s\n", load_s);
        printf("read operations  %.4f s\n", read_s);
        printf("update           %.4f s (route %.4f, exchange %.4f, check %.4f, apply %.4f; %" PRIu64
               " bytes between ranks)\n", update_s, route, exchange, validate, commit, bytes);
        printf("check            %.4f s\n", check_s);
        printf("save             %.4f s\n", save_s);
    }
    harmonia_dist_free(dist);
    return CLI_EXIT_OK;
}

/* ---- info and check --------------------------------------------------------------------------- */

typedef struct shard_row {
    uint64_t keys, lower, upper, min_key, max_key, total_bytes, empty_range;
    uint64_t height, fanout, leaf_size;
    int64_t device;
} shard_row;

int dcli_cmd_info(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "MANIFEST", "the index's manifest (required)", NULL},
        {"json", NULL, "print the description as JSON", NULL},
        {"no-verify", NULL, "load the shards without their checksums and integrity checks", NULL},
    };
    cli_spec spec = {"info", "info --index MANIFEST [--json]",
                     "Describes a sharded index: ranks, key width, keys, the splitters and every\n"
                     "shard (its keys, its key range, its tree, the GPU of its rank). Runs on as\n"
                     "many ranks as the index has shards.",
                     opts, CLI_COUNT_OF(opts), NULL};
    dcli_capture_begin();
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    const char *index_path = NULL;
    if (status == 0)
        status = cli_opt_required(&spec, "index", &index_path);
    dcli_capture_end();
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    harmonia_dist *dist = NULL;
    if (dcli_load(index_path, !cli_opt_given(&spec, "no-verify"), &dist) != 0)
        return CLI_EXIT_FAIL;
    harmonia_dist_info info;
    harmonia_dist_get_info(dist, &info);
    shard_row mine;
    memset(&mine, 0, sizeof mine);
    harmonia_dist_shard_info sh;
    harmonia_dist_shard(dist, dcli_rank, &sh);
    mine.keys = sh.keys;
    mine.lower = sh.lower;
    mine.upper = sh.upper;
    mine.empty_range = sh.empty_range;
    mine.min_key = sh.min_key;
    mine.max_key = sh.max_key;
    mine.total_bytes = info.local.total_bytes;
    mine.height = info.local.height;
    mine.fanout = info.local.fanout;
    mine.leaf_size = info.local.leaf_size;
    mine.device = info.device;
    shard_row *rows = dcli_rank == 0 ? malloc((size_t)dcli_ranks * sizeof *rows) : NULL;
    cli_err err;
    cli_err_init(&err, true);
    if (dcli_rank == 0 && rows == NULL)
        cli_fail(&err, "out of memory");
    if (dcli_agree(&err) != 0) {
        harmonia_dist_free(dist);
        return CLI_EXIT_FAIL;
    }
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, rows, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (dcli_rank == 0) {
        const bool json = cli_opt_given(&spec, "json");
        if (json) {
            printf("{\"index\":");
            cli_json_string(stdout, index_path);
            printf(",\"ranks\":%d,\"key_bits\":%u,\"keys\":%" PRIu64 ",\"smallest_shard\":%" PRIu64
                   ",\"largest_shard\":%" PRIu64 ",\"imbalance\":%.6f,\"shards\":[",
                   info.ranks, info.key_bits, info.keys, info.smallest_shard, info.largest_shard,
                   info.imbalance);
            for (int r = 0; r < dcli_ranks; r++) {
                const shard_row *w = &rows[r];
                printf("%s{\"rank\":%d,\"keys\":%" PRIu64 ",\"lower\":%" PRIu64 ",\"upper\":%" PRIu64
                       ",\"empty_range\":%s", r ? "," : "", r, w->keys, w->lower, w->upper,
                       w->empty_range ? "true" : "false");
                if (w->keys > 0)
                    printf(",\"min_key\":%" PRIu64 ",\"max_key\":%" PRIu64, w->min_key, w->max_key);
                printf(",\"height\":%" PRIu64 ",\"fanout\":%" PRIu64 ",\"leaf_size\":%" PRIu64
                       ",\"total_bytes\":%" PRIu64 ",\"device\":%lld}", w->height, w->fanout, w->leaf_size,
                       w->total_bytes, (long long)w->device);
            }
            printf("]}\n");
        } else {
            printf("index        %s\n", index_path);
            printf("shards       %d (one per rank)\n", info.ranks);
            printf("key width    %u-bit\n", info.key_bits);
            printf("keys         %" PRIu64 " (shards of %" PRIu64 " to %" PRIu64 ", imbalance %.2f %%)\n",
                   info.keys, info.smallest_shard, info.largest_shard, 100.0 * info.imbalance);
            printf("\n%-5s %12s  %-22s %-22s %-22s %-22s %6s %8s %12s %6s\n", "shard", "keys", "lower",
                   "upper", "min key", "max key", "height", "F/L", "bytes", "GPU");
            for (int r = 0; r < dcli_ranks; r++) {
                const shard_row *w = &rows[r];
                char upper[32], min_key[32], max_key[32], fl[16], gpu[16];
                snprintf(upper, sizeof upper, w->empty_range ? "(empty range)" : "%" PRIu64, w->upper);
                snprintf(min_key, sizeof min_key, w->keys ? "%" PRIu64 : "-", w->min_key);
                snprintf(max_key, sizeof max_key, w->keys ? "%" PRIu64 : "-", w->max_key);
                snprintf(fl, sizeof fl, "%" PRIu64 "/%" PRIu64, w->fanout, w->leaf_size);
                snprintf(gpu, sizeof gpu, w->device >= 0 ? "%lld" : "none", (long long)w->device);
                printf("%-5d %12" PRIu64 "  %-22" PRIu64 " %-22s %-22s %-22s %6" PRIu64 " %8s %12" PRIu64 " %6s\n",
                       r, w->keys, w->lower, upper, min_key, max_key, w->height, fl, w->total_bytes, gpu);
            }
        }
        free(rows);
    }
    harmonia_dist_free(dist);
    return CLI_EXIT_OK;
}

int dcli_cmd_check(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "MANIFEST", "the index's manifest (required)", NULL},
        {"json", NULL, "print the verdict as JSON", NULL},
    };
    cli_spec spec = {"check", "check --index MANIFEST [--json]",
                     "Verifies a sharded index: the manifest's checksum, every shard file's checksum\n"
                     "against it, every shard's own checksums and integrity checker, and that every\n"
                     "shard holds only keys inside its splitters. Exit status 1 on any failure.",
                     opts, CLI_COUNT_OF(opts), NULL};
    dcli_capture_begin();
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    const char *index_path = NULL;
    if (status == 0)
        status = cli_opt_required(&spec, "index", &index_path);
    dcli_capture_end();
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const bool json = cli_opt_given(&spec, "json");
    harmonia_dist *dist = NULL;
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    harmonia_status hs = harmonia_dist_load(MPI_COMM_WORLD, index_path, &config, &dist);
    const char *message = harmonia_dist_last_error(NULL);
    if (hs == HARMONIA_OK && (hs = harmonia_dist_check(dist)) != HARMONIA_OK)
        message = harmonia_dist_last_error(dist);
    if (dcli_rank == 0 && json) {
        printf("{\"index\":");
        cli_json_string(stdout, index_path);
        printf(",\"ok\":%s", hs == HARMONIA_OK ? "true" : "false");
        if (hs != HARMONIA_OK) {
            printf(",\"status\":\"%s\",\"message\":", harmonia_strerror(hs));
            cli_json_string(stdout, message);
        }
        printf("}\n");
    }
    if (hs != HARMONIA_OK) {
        if (!json)
            dcli_library_error0(hs, message, NULL);
        harmonia_dist_free(dist);
        return CLI_EXIT_FAIL;
    }
    harmonia_dist_info info;
    harmonia_dist_get_info(dist, &info);
    if (dcli_rank == 0 && !json)
        printf("OK: %s: %" PRIu64 " keys in %d shards; the manifest, every shard file's checksum and every "
               "tree's invariants hold\n", index_path, info.keys, info.ranks);
    harmonia_dist_free(dist);
    return CLI_EXIT_OK;
}
