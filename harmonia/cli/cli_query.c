/* cli_query.c — `harmonia lookup`, `lower-bound` and `range`: load an index, read a queries or
 * ranges file, run the batch through the public query calls, write the results as text, binary or
 * JSON. Formats of the input files are cli_io's; the searching is the library's. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_io.h"


enum query_kind { QUERY_LOOKUP, QUERY_LOWER_BOUND, QUERY_RANGE };

#define COMMON_OPTS                                                                              \
    {"index", "INDEX", "the index file (required)", NULL},                                      \
    {"out", "FILE", "write the results to FILE (default: standard output)", NULL},              \
    CLI_OPT_RESULTS_FORMAT,                                  \
    {"json", NULL, "results (and the summary) as JSON", NULL},                                  \
    CLI_OPT_QUERY_BACKEND,                  \
    {"threads", "T", "CPU engine threads (default: OpenMP's)", NULL},                           \
    {"group-size", "G", "GPU: threads per query of the descent kernels, 1..32 and <= F (default: "\
                        "the index's stored choice, else 64 bytes of a node per thread)", NULL},  \
    CLI_OPT_PSA,       \
    CLI_OPT_WINDOW,             \
    {"psa-bits", "B", "GPU: bucket bits of the PSA partition (default: buckets of ~8 KiB of leaf keys)", NULL}, \
    CLI_OPT_PIPELINE_DEPTH,                 \
    {"constant-levels", "N", "GPU: internal levels read from constant memory, a count or all "   \
                             "(default 1: the root)", NULL},                                      \
    {"no-verify", NULL, CLI_NO_VERIFY_HELP, NULL},                                                \
    {"quiet", NULL, "no progress bar, no summary", NULL}

typedef struct query_run {
    const cli_spec *spec;
    enum query_kind kind;
    const char *index_path, *input_path, *out_path;
    bool binary_out, json, quiet;
    int backend_index;
    harmonia_query_config config;
    harmonia_tree *tree;
    harmonia_tree_info info;
    cli_records input;
} query_run;

/* Parses the options shared by the three commands, loads the index and reads the input file
 * (fields per record: 1 for queries, 2 for ranges). */
static int setup(query_run *run, int argc, char **argv, const char *input_option,
                 const char *input_format_option, int fields, const char *what)
{
    const cli_spec *spec = run->spec;
    int status = cli_parse(spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_HELP_SHOWN : status;
    int input_format, psa;
    uint64_t threads, group_size, window, psa_bits, depth;
    if ((status = cli_opt_required(spec, "index", &run->index_path)) ||
        (status = cli_opt_required(spec, input_option, &run->input_path)) ||
        (status = cli_opt_choice(spec, input_format_option, cli_format_names, CLI_FORMAT_AUTO,
                                 &input_format)) ||
        (status = cli_opt_results_format(spec, &run->binary_out)) ||
        (status = cli_opt_choice(spec, "backend", cli_backend_names, 0, &run->backend_index)) ||
        (status = cli_opt_u64(spec, "threads", 0, 0, 1u << 16, &threads)) ||
        (status = cli_opt_u64(spec, "group-size", 0, 0, UINT64_MAX, &group_size)) ||
        (status = cli_opt_psa(spec, &psa)) ||
        (status = cli_opt_u64(spec, "window", 0, 0, 1u << 30, &window)) ||
        (status = cli_opt_u64(spec, "psa-bits", 0, 0, 64, &psa_bits)) ||
        (status = cli_opt_u64(spec, "pipeline-depth", 0, 0, 3, &depth)))
        return status;
    run->out_path = cli_opt_str(spec, "out", NULL);
    run->json = cli_opt_given(spec, "json");
    run->quiet = cli_opt_given(spec, "quiet");
    if (run->json && run->binary_out)
        return cli_usage_error("--json and --format bin exclude each other");
    if (run->binary_out && cli_is_stdout(run->out_path) && isatty(STDOUT_FILENO))
        return cli_usage_error("binary results to a terminal: give --out FILE");
    if (group_size != 0 && (group_size > 32 || (group_size & (group_size - 1)) != 0))
        return cli_usage_error("--group-size %llu: G must be 1, 2, 4, 8, 16 or 32 (threads per "
                               "query on the GPU; 0 or absent: the index's stored choice)",
                               (unsigned long long)group_size);
    const char *input_option_name = strcmp(input_option, "queries") == 0 ? "--queries" : "--ranges";
    const cli_named_path inputs[] = {{"--index", run->index_path}, {input_option_name, run->input_path}};
    if ((status = cli_check_output("--out", run->out_path, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    harmonia_query_config_init(&run->config);
    run->config.backend = cli_backend_of(run->backend_index);
    run->config.threads = (int)threads;
    run->config.group_size = (uint32_t)group_size;
    run->config.psa = psa;
    run->config.psa_window = window;
    run->config.psa_bits = (uint32_t)psa_bits;
    run->config.pipeline_depth = (uint32_t)depth;
    run->config.memory = HARMONIA_MEMORY_HOST; /* the tool's arrays are malloc'd */

    int32_t constant_levels;
    if ((status = cli_opt_constant_levels(spec, &constant_levels)) != 0)
        return status;

    if ((status = cli_load_index(run->index_path, !cli_opt_given(spec, "no-verify"), HARMONIA_LOCK_NONE, run->quiet,
                                 &run->tree)) != 0)
        return status;
    harmonia_status hs = harmonia_set_constant_levels(run->tree, constant_levels);
    if (hs == HARMONIA_OK)
        hs = harmonia_info(run->tree, &run->info);
    if (hs != HARMONIA_OK)
        return cli_library_error(run->tree, hs, run->index_path);
    if (group_size > run->info.fanout)
        return cli_usage_error("--group-size %llu: larger than the index's fanout (G <= F; %s has "
                               "F = %u)",
                               (unsigned long long)group_size, run->index_path, run->info.fanout);
    cli_progress progress;
    cli_progress_init(&progress, run->quiet);
    status = cli_read_records(run->input_path, (cli_format)input_format, run->info.key_bits,
                              fields, fields, fields, what, CLI_INDEX_WIDTH_HINT(run->info.key_bits),
                              &run->input, &progress);
    cli_progress_done(&progress);
    return status;
}

static void teardown(query_run *run)
{
    harmonia_free(run->tree);
    cli_records_free(&run->input);
}

/* The one-line (or JSON) summary that goes to standard output when the results go to a file. */
static void print_summary(const query_run *run, const char *unit, uint64_t count,
                          const char *result_name, uint64_t result_count, double seconds)
{
    if (run->quiet || cli_is_stdout(run->out_path))
        return;
    double rate = seconds > 0 ? (double)count / seconds / 1e6 : 0.0;
    if (run->json) {
        printf("{\"command\":\"%s\",\"index\":", run->spec->command);
        cli_json_string(stdout, run->index_path);
        printf(",\"out\":");
        cli_json_string(stdout, run->out_path);
        printf(",\"%s\":%llu,\"%s\":%llu,\"seconds\":%.6f,\"million_per_second\":%.3f,"
               "\"backend\":\"%s\"}\n",
               unit, (unsigned long long)count, result_name, (unsigned long long)result_count,
               seconds, rate, cli_backend_names[run->backend_index]);
    } else {
        printf("%s: %llu %s, %llu %s, %.4f s (%.2f M %s/s, backend %s) -> %s\n",
               run->spec->command, (unsigned long long)count, unit,
               (unsigned long long)result_count, result_name, seconds, rate, unit,
               cli_backend_names[run->backend_index], run->out_path);
    }
}

static void json_header(cli_writer *w, const query_run *run, const char *unit, uint64_t count,
                        const char *result_name, uint64_t result_count, double seconds)
{
    fprintf(w->file, "{\"command\":\"%s\",\"index\":", run->spec->command);
    cli_json_string(w->file, run->index_path);
    fprintf(w->file, ",\"key_bits\":%u,\"%s\":%llu,\"%s\":%llu,\"seconds\":%.6f,"
                     "\"backend\":\"%s\",\"results\":[",
            run->info.key_bits, unit, (unsigned long long)count, result_name,
            (unsigned long long)result_count, seconds, cli_backend_names[run->backend_index]);
}

/* ---- lookup and lower-bound ---------------------------------------------------------------- */

static int point_command(enum query_kind kind, int argc, char **argv)
{
    cli_opt opts[] = {
        {"queries", "FILE", "the queries: one key per record (required)", NULL},
        {"queries-format", "F", "format of the queries file: auto (default), bin or text", NULL},
        COMMON_OPTS,
    };
    cli_spec lookup_spec = {
        "lookup", "lookup --index INDEX --queries FILE [--out FILE] [--json]",
        "Looks up every query key in the index and writes, in query order, its value or\n"
        "that it is not there.",
        opts, CLI_COUNT_OF(opts),
        "Results: text lines 'key<TAB>value' or 'key<TAB>NOT FOUND'; --format bin writes\n"
        "value,found records of the key width (found = 1 or 0); --json one object with a\n"
        "\"results\" array of {\"key\",\"found\",\"value\"}.\n"};
    cli_spec lower_bound_spec = {
        "lower-bound", "lower-bound --index INDEX --queries FILE [--out FILE] [--json]",
        "Finds, for every query, the smallest key of the index that is >= the query, and\n"
        "its value.",
        opts, CLI_COUNT_OF(opts),
        "Results: text lines 'query<TAB>key<TAB>value' or 'query<TAB>NONE' when no key is\n"
        ">= the query; --format bin writes key,value,found records of the key width; --json\n"
        "one object with a \"results\" array of {\"query\",\"found\",\"key\",\"value\"}.\n"};
    query_run run;
    memset(&run, 0, sizeof run);
    run.kind = kind;
    run.spec = kind == QUERY_LOOKUP ? &lookup_spec : &lower_bound_spec;
    int status = setup(&run, argc, argv, "queries", "queries-format", 1, "key");
    if (status != 0) {
        teardown(&run);
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    }
    uint32_t bits = run.info.key_bits;
    uint64_t n = run.input.count;
    const void *queries = run.input.column[0];
    size_t width = bits / 8;
    void *values = malloc(n > 0 ? n * width : 1);
    void *keys = kind == QUERY_LOWER_BOUND ? malloc(n > 0 ? n * width : 1) : NULL;
    uint8_t *found = malloc(n > 0 ? n : 1);
    if (values == NULL || found == NULL || (kind == QUERY_LOWER_BOUND && keys == NULL)) {
        free(values);
        free(keys);
        free(found);
        teardown(&run);
        return cli_error("out of memory for %llu results", (unsigned long long)n);
    }
    double start = cli_now();
    harmonia_status hs =
        kind == QUERY_LOOKUP
            ? harmonia_lookup(run.tree, &run.config, queries, n, values, found)
            : harmonia_lower_bound(run.tree, &run.config, queries, n, keys, values, found);
    double seconds = cli_now() - start;
    if (hs != HARMONIA_OK) {
        status = cli_library_error(run.tree, hs, NULL);
        goto done;
    }
    uint64_t n_found = 0;
    for (uint64_t i = 0; i < n; i++)
        n_found += found[i] != 0;

    cli_writer w;
    if ((status = cli_writer_open(&w, run.out_path)) != 0)
        goto done;
    if (run.json)
        json_header(&w, &run, "queries", n, "found", n_found, seconds);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t q = cli_get(queries, bits, i);
        uint64_t v = cli_get(values, bits, i);
        uint64_t k = kind == QUERY_LOWER_BOUND ? cli_get(keys, bits, i) : 0;
        if (run.json) {
            fputs(i == 0 ? "\n" : ",\n", w.file);
            fprintf(w.file, "{\"%s\":%llu,\"found\":%s", kind == QUERY_LOOKUP ? "key" : "query",
                    (unsigned long long)q, found[i] ? "true" : "false");
            if (found[i] && kind == QUERY_LOWER_BOUND)
                fprintf(w.file, ",\"key\":%llu", (unsigned long long)k);
            if (found[i])
                fprintf(w.file, ",\"value\":%llu", (unsigned long long)v);
            fputc('}', w.file);
        } else if (run.binary_out) {
            if (kind == QUERY_LOWER_BOUND)
                cli_write_bin(&w, bits, k);
            cli_write_bin(&w, bits, v);
            cli_write_bin(&w, bits, found[i] ? 1 : 0);
        } else {
            cli_write_u64(&w, q);
            cli_write_char(&w, '\t');
            if (!found[i]) {
                cli_write_str(&w, kind == QUERY_LOOKUP ? "NOT FOUND" : "NONE");
            } else {
                if (kind == QUERY_LOWER_BOUND) {
                    cli_write_u64(&w, k);
                    cli_write_char(&w, '\t');
                }
                cli_write_u64(&w, v);
            }
            cli_write_char(&w, '\n');
        }
    }
    if (run.json)
        fputs(n > 0 ? "\n]}\n" : "]}\n", w.file);
    if ((status = cli_writer_close(&w)) != 0)
        goto done;
    print_summary(&run, "queries", n, "found", n_found, seconds);
done:
    free(values);
    free(keys);
    free(found);
    teardown(&run);
    return status;
}

int cli_cmd_lookup(int argc, char **argv)
{
    return point_command(QUERY_LOOKUP, argc, argv);
}

int cli_cmd_lower_bound(int argc, char **argv)
{
    return point_command(QUERY_LOWER_BOUND, argc, argv);
}

/* ---- range --------------------------------------------------------------------------------- */

static void write_range_text_header(cli_writer *w, uint64_t i, uint64_t lo, uint64_t hi,
                                    uint64_t count)
{
    cli_write_str(w, "# range ");
    cli_write_u64(w, i);
    cli_write_str(w, " [");
    cli_write_u64(w, lo);
    cli_write_str(w, ", ");
    cli_write_u64(w, hi);
    cli_write_str(w, "]: ");
    cli_write_u64(w, count);
    cli_write_str(w, count == 1 ? " key\n" : " keys\n");
}

int cli_cmd_range(int argc, char **argv)
{
    cli_opt opts[] = {
        {"ranges", "FILE", "the ranges: lo,hi records, inclusive (required)", NULL},
        {"ranges-format", "F", "format of the ranges file: auto (default), bin or text", NULL},
        CLI_OPT_COLLECT,
        COMMON_OPTS,
    };
    cli_spec spec = {
        "range", "range --index INDEX --ranges FILE [--collect] [--out FILE] [--json]",
        "Counts (or, with --collect, lists) the keys k of the index with lo <= k <= hi for\n"
        "every range lo,hi. lo > hi is an empty range.",
        opts, CLI_COUNT_OF(opts),
        "Results: text lines 'lo<TAB>hi<TAB>count'; with --collect, for each range a line\n"
        "'# range I [lo, hi]: N keys' and then its pairs 'key<TAB>value' in key order.\n"
        "--format bin writes one 64-bit count per range; with --collect, the count+1 64-bit\n"
        "offsets of the ranges into the pairs and then the key,value records of the key width.\n"
        "--json: one object with a \"results\" array of {\"lo\",\"hi\",\"count\"[,\"pairs\"]}.\n"};
    query_run run;
    memset(&run, 0, sizeof run);
    run.kind = QUERY_RANGE;
    run.spec = &spec;
    int status = setup(&run, argc, argv, "ranges", "ranges-format", 2, "lo,hi");
    if (status != 0) {
        teardown(&run);
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    }
    bool collect = cli_opt_given(&spec, "collect");
    uint32_t bits = run.info.key_bits;
    size_t width = bits / 8;
    uint64_t n = run.input.count;
    const void *lo = run.input.column[0], *hi = run.input.column[1];
    uint64_t *counts = malloc((n + 1) * sizeof *counts); /* counts, or offsets with --collect */
    void *keys = NULL, *values = NULL;
    if (counts == NULL) {
        teardown(&run);
        return cli_error("out of memory for %llu ranges", (unsigned long long)n);
    }
    harmonia_status hs;
    uint64_t total = 0;
    double start = cli_now();
    if (!collect) {
        hs = harmonia_range_count(run.tree, &run.config, lo, hi, n, counts);
        if (hs == HARMONIA_OK) {
            for (uint64_t i = 0; i < n; i++)
                total += counts[i];
        }
    } else {
        hs = harmonia_range_collect(run.tree, &run.config, lo, hi, n, counts, NULL, NULL);
        if (hs == HARMONIA_OK) {
            total = counts[n];
            if (total > SIZE_MAX / width ||
                (keys = malloc(total > 0 ? total * width : 1)) == NULL ||
                (values = malloc(total > 0 ? total * width : 1)) == NULL) {
                status = cli_error("out of memory for the %llu pairs of the ranges",
                                   (unsigned long long)total);
                goto done;
            }
            hs = harmonia_range_collect(run.tree, &run.config, lo, hi, n, counts, keys, values);
        }
    }
    double seconds = cli_now() - start;
    if (hs != HARMONIA_OK) {
        status = cli_library_error(run.tree, hs, NULL);
        goto done;
    }

    cli_writer w;
    if ((status = cli_writer_open(&w, run.out_path)) != 0)
        goto done;
    if (run.json)
        json_header(&w, &run, "ranges", n, "keys", total, seconds);
    if (run.binary_out && collect) {
        for (uint64_t i = 0; i <= n; i++)
            cli_write_bin(&w, 64, counts[i]);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t range_lo = cli_get(lo, bits, i), range_hi = cli_get(hi, bits, i);
        uint64_t first = collect ? counts[i] : 0;
        uint64_t count = collect ? counts[i + 1] - counts[i] : counts[i];
        if (run.json) {
            fputs(i == 0 ? "\n" : ",\n", w.file);
            fprintf(w.file, "{\"lo\":%llu,\"hi\":%llu,\"count\":%llu",
                    (unsigned long long)range_lo, (unsigned long long)range_hi,
                    (unsigned long long)count);
            if (collect) {
                fputs(",\"pairs\":[", w.file);
                for (uint64_t j = 0; j < count; j++)
                    fprintf(w.file, "%s[%llu,%llu]", j == 0 ? "" : ",",
                            (unsigned long long)cli_get(keys, bits, first + j),
                            (unsigned long long)cli_get(values, bits, first + j));
                fputc(']', w.file);
            }
            fputc('}', w.file);
        } else if (run.binary_out) {
            if (!collect) {
                cli_write_bin(&w, 64, count);
            } else {
                for (uint64_t j = 0; j < count; j++) {
                    cli_write_bin(&w, bits, cli_get(keys, bits, first + j));
                    cli_write_bin(&w, bits, cli_get(values, bits, first + j));
                }
            }
        } else if (!collect) {
            cli_write_u64(&w, range_lo);
            cli_write_char(&w, '\t');
            cli_write_u64(&w, range_hi);
            cli_write_char(&w, '\t');
            cli_write_u64(&w, count);
            cli_write_char(&w, '\n');
        } else {
            write_range_text_header(&w, i, range_lo, range_hi, count);
            for (uint64_t j = 0; j < count; j++) {
                cli_write_u64(&w, cli_get(keys, bits, first + j));
                cli_write_char(&w, '\t');
                cli_write_u64(&w, cli_get(values, bits, first + j));
                cli_write_char(&w, '\n');
            }
        }
    }
    if (run.json)
        fputs(n > 0 ? "\n]}\n" : "]}\n", w.file);
    if ((status = cli_writer_close(&w)) != 0)
        goto done;
    print_summary(&run, "ranges", n, "keys", total, seconds);
done:
    free(counts);
    free(keys);
    free(values);
    teardown(&run);
    return status;
}
