/* cli_generate.c — `harmonia generate keys|queries|ranges|ops`: synthetic key,value pairs,
 * queries with a hit rate, ranges of a length and update batches, written as data files. The
 * drawing itself is cli_data.c. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_data.h"
#include "cli_io.h"

#define DEFAULT_SEED 42

static const char *const value_kinds[] = {"rowid", "random", NULL};
static const char *const query_dists[] = {"uniform", "zipf", NULL};

static const char generate_help[] =
    "Usage: harmonia generate keys|queries|ranges|ops [options]\n"
    "\n"
    "Writes synthetic data files:\n"
    "  keys      distinct key,value pairs (uniform, dense, normal or zipf keys)\n"
    "  queries   point queries drawn from a key file, with a hit rate\n"
    "  ranges    lo,hi ranges over a key file, each holding --length keys\n"
    "  ops       an update batch against a key file (for 'harmonia update')\n"
    "\n"
    "'harmonia generate <kind> --help' lists the options of each.\n";

static const char formats_note[] =
    "Formats: binary files are raw little-endian records of the key width (pairs: key,value;\n"
    "queries: key; ranges: lo,hi). Text files hold one record per line, fields separated by ','.\n"
    "--format auto (the default) picks text for names ending in .txt/.csv/.tsv, else binary.\n";

static void free_columns(void *a, void *b)
{
    free(a);
    free(b);
}

static int generate_keys(int argc, char **argv)
{
    cli_opt opts[] = {
        {"count", "N", "number of distinct keys (required; 2^20 and 1e6 forms work)", NULL},
        {"dist", "D", "uniform (default), dense, normal or zipf", NULL},
        CLI_OPT_BITS,
        {"values", "V", "rowid (default: the pair's position in the file) or random", NULL},
        {"sorted", NULL, "write the pairs in ascending key order (default: random order)", NULL},
        {"seed", "S", "seed of the generator (default 42)", NULL},
        {"format", "F", "auto (default), bin or text", NULL},
        {"out", "FILE", "the file to write (required)", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {"generate keys", "generate keys --count N [--dist D] [--bits B] --out FILE",
                     "Writes N distinct keys with a value each, as key,value pairs.\n"
                     "uniform: over the whole key domain; dense: a random offset + 0..N-1;\n"
                     "normal: clustered around the middle of the domain; zipf: clusters of\n"
                     "Zipf-distributed sizes at random places.",
                     opts, CLI_COUNT_OF(opts), formats_note};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    uint64_t count, seed;
    int dist, value_kind, format;
    uint32_t key_bits;
    const char *out;
    if ((status = cli_opt_u64(&spec, "count", 0, 0, UINT64_MAX, &count)) != 0 ||
        (status = cli_opt_choice(&spec, "dist", cli_key_dist_names, CLI_DIST_UNIFORM, &dist)) ||
        (status = cli_opt_key_bits(&spec, &key_bits)) ||
        (status = cli_opt_choice(&spec, "values", value_kinds, 0, &value_kind)) ||
        (status = cli_opt_u64(&spec, "seed", DEFAULT_SEED, 0, UINT64_MAX, &seed)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_required(&spec, "out", &out)))
        return status;
    if ((status = cli_check_output("--out", out, NULL, 0)) != 0)
        return status;
    if (!cli_opt_given(&spec, "count"))
        return cli_usage_error("missing --count");
    bool quiet = cli_opt_given(&spec, "quiet");
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    double start = cli_now();

    void *keys;
    if ((status = cli_gen_keys((cli_key_dist)dist, key_bits, count, seed, &keys, &progress)) != 0) {
        cli_progress_done(&progress);
        return status;
    }
    if (cli_opt_given(&spec, "sorted") && cli_sort_pairs(keys, NULL, count, key_bits) != 0) {
        cli_progress_done(&progress);
        free(keys);
        return CLI_EXIT_FAIL;
    }
    void *values = malloc(count > 0 ? count * (key_bits / 8) : 1);
    if (values == NULL) {
        cli_progress_done(&progress);
        free(keys);
        return cli_error("out of memory for %llu values", (unsigned long long)count);
    }
    cli_rng rng;
    cli_rng_seed(&rng, seed ^ 0x5eed5eed5eed5eedULL);
    for (uint64_t i = 0; i < count; i++)
        cli_set(values, key_bits, i,
                value_kind == 0 ? i : cli_rng_next(&rng) & cli_max_key(key_bits));

    char header[256];
    snprintf(header, sizeof header,
             "# harmonia generate keys: %llu %s %u-bit keys, values %s, seed %llu\n",
             (unsigned long long)count, cli_key_dist_names[dist], key_bits,
             value_kinds[value_kind], (unsigned long long)seed);
    void *columns[2] = {keys, values};
    status = cli_write_records(out, (cli_format)format, key_bits, count, 2, columns, header,
                               &progress);
    cli_progress_done(&progress);
    free_columns(keys, values);
    if (status != 0)
        return status;
    if (!quiet && !cli_is_stdout(out))
        printf("wrote %llu %s %u-bit key,value pairs (%s) to %s in %.2f s\n",
               (unsigned long long)count, cli_key_dist_names[dist], key_bits,
               cli_format_for_path((cli_format)format, out) == CLI_FORMAT_TEXT ? "text"
                                                                              : "binary",
               out, cli_now() - start);
    return CLI_EXIT_OK;
}

/* Reads the keys of a key file (pairs or keys only), sorted, repeats removed. */
static int read_sorted_keys(const cli_spec *spec, uint32_t key_bits, void **keys_out,
                            uint64_t *n_out, cli_progress *progress)
{
    const char *path;
    int format, status;
    if ((status = cli_opt_required(spec, "keys", &path)) != 0 ||
        (status = cli_opt_choice(spec, "keys-format", cli_format_names, CLI_FORMAT_AUTO,
                                 &format)) != 0)
        return status;
    int binary_fields = cli_opt_given(spec, "keys-only") ? 1 : 2;
    cli_records records;
    status = cli_read_records(path, (cli_format)format, key_bits, 1, 2, binary_fields,
                              "key or key,value", key_bits == 32 ? " (use --bits 64?)" : NULL,
                              &records, progress);
    if (status != 0)
        return status;
    free(records.column[1]);
    records.column[1] = NULL;
    void *keys = records.column[0];
    uint64_t n = records.count;
    if (cli_sort_pairs(keys, NULL, n, key_bits) != 0) {
        free(keys);
        return CLI_EXIT_FAIL;
    }
    uint64_t unique = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = cli_get(keys, key_bits, i);
        if (unique == 0 || cli_get(keys, key_bits, unique - 1) != k)
            cli_set(keys, key_bits, unique++, k);
    }
    *keys_out = keys;
    *n_out = unique;
    return 0;
}

static int generate_queries(int argc, char **argv)
{
    cli_opt opts[] = {
        {"keys", "FILE", "the key file the queries are drawn from (required)", NULL},
        {"keys-format", "F", "format of the key file: auto (default), bin or text", NULL},
        {"keys-only", NULL, "the binary key file holds keys only, not key,value pairs", NULL},
        {"bits", "B", "key width: 32 or 64 (default 64)", NULL},
        {"count", "N", "number of queries (required)", NULL},
        {"hit-rate", "H", "fraction of queries that are keys of the file (default 0.5)", NULL},
        {"dist", "D", "hits drawn uniform (default) or zipf (popular keys)", NULL},
        {"skew", "S", "Zipf exponent for --dist zipf (default 0.99)", NULL},
        {"seed", "S", "seed of the generator (default 42)", NULL},
        {"format", "F", "auto (default), bin or text", NULL},
        {"out", "FILE", "the file to write (required)", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {"generate queries",
                     "generate queries --keys FILE --count N [--hit-rate H] --out FILE",
                     "Writes N point queries (one key each) drawn from a key file: about H x N\n"
                     "hits (keys of the file) and the rest misses (keys not in the file, within\n"
                     "the span of its keys where there is room), in random order.",
                     opts, CLI_COUNT_OF(opts), formats_note};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    uint64_t count, seed;
    double hit_rate, skew;
    int dist, format;
    uint32_t key_bits;
    const char *out, *keys_path;
    if ((status = cli_opt_required(&spec, "keys", &keys_path)) ||
        (status = cli_opt_key_bits(&spec, &key_bits)) ||
        (status = cli_opt_u64(&spec, "count", 0, 0, UINT64_MAX, &count)) ||
        (status = cli_opt_double(&spec, "hit-rate", 0.5, 0.0, 1.0, &hit_rate)) ||
        (status = cli_opt_choice(&spec, "dist", query_dists, 0, &dist)) ||
        (status = cli_opt_double(&spec, "skew", 0.99, 0.01, 10.0, &skew)) ||
        (status = cli_opt_u64(&spec, "seed", DEFAULT_SEED, 0, UINT64_MAX, &seed)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_required(&spec, "out", &out)))
        return status;
    const cli_named_path inputs[] = {{"--keys", keys_path}};
    if ((status = cli_check_output("--out", out, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    if (!cli_opt_given(&spec, "count"))
        return cli_usage_error("missing --count");
    bool quiet = cli_opt_given(&spec, "quiet");
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    double start = cli_now();
    void *keys, *queries;
    uint64_t n;
    if ((status = read_sorted_keys(&spec, key_bits, &keys, &n, &progress)) != 0) {
        cli_progress_done(&progress);
        return status;
    }
    status = cli_gen_queries(keys, n, key_bits, count, hit_rate, dist == 1 ? skew : 0.0, seed,
                             &queries);
    free(keys);
    if (status != 0) {
        cli_progress_done(&progress);
        return status;
    }
    char header[256];
    snprintf(header, sizeof header,
             "# harmonia generate queries: %llu queries, hit rate %g, %s, from %s, seed %llu\n",
             (unsigned long long)count, hit_rate, query_dists[dist], keys_path,
             (unsigned long long)seed);
    status = cli_write_records(out, (cli_format)format, key_bits, count, 1, &queries, header,
                               &progress);
    cli_progress_done(&progress);
    free(queries);
    if (status != 0)
        return status;
    if (!quiet && !cli_is_stdout(out))
        printf("wrote %llu %u-bit queries (hit rate %g, %s) to %s in %.2f s\n",
               (unsigned long long)count, key_bits, hit_rate, query_dists[dist], out,
               cli_now() - start);
    return CLI_EXIT_OK;
}

static int generate_ranges(int argc, char **argv)
{
    cli_opt opts[] = {
        {"keys", "FILE", "the key file the ranges are drawn over (required)", NULL},
        {"keys-format", "F", "format of the key file: auto (default), bin or text", NULL},
        {"keys-only", NULL, "the binary key file holds keys only, not key,value pairs", NULL},
        {"bits", "B", "key width: 32 or 64 (default 64)", NULL},
        {"count", "N", "number of ranges (required)", NULL},
        {"length", "K", "keys in each range (default 64; fewer at the end of the keys)", NULL},
        {"seed", "S", "seed of the generator (default 42)", NULL},
        {"format", "F", "auto (default), bin or text", NULL},
        {"out", "FILE", "the file to write (required)", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {"generate ranges",
                     "generate ranges --keys FILE --count N [--length K] --out FILE",
                     "Writes N inclusive ranges lo,hi over the keys of a key file; each starts at\n"
                     "a random key and holds K keys (fewer near the largest key). Half of them\n"
                     "have their bounds moved into the gaps around those keys.",
                     opts, CLI_COUNT_OF(opts), formats_note};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    uint64_t count, seed, length;
    int format;
    uint32_t key_bits;
    const char *out, *keys_path;
    if ((status = cli_opt_required(&spec, "keys", &keys_path)) ||
        (status = cli_opt_key_bits(&spec, &key_bits)) ||
        (status = cli_opt_u64(&spec, "count", 0, 0, UINT64_MAX, &count)) ||
        (status = cli_opt_u64(&spec, "length", 64, 1, UINT64_MAX, &length)) ||
        (status = cli_opt_u64(&spec, "seed", DEFAULT_SEED, 0, UINT64_MAX, &seed)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_required(&spec, "out", &out)))
        return status;
    const cli_named_path inputs[] = {{"--keys", keys_path}};
    if ((status = cli_check_output("--out", out, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    if (!cli_opt_given(&spec, "count"))
        return cli_usage_error("missing --count");
    bool quiet = cli_opt_given(&spec, "quiet");
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    double start = cli_now();
    void *keys, *lo, *hi;
    uint64_t n;
    if ((status = read_sorted_keys(&spec, key_bits, &keys, &n, &progress)) != 0) {
        cli_progress_done(&progress);
        return status;
    }
    status = cli_gen_ranges(keys, n, key_bits, count, length, seed, &lo, &hi);
    free(keys);
    if (status != 0) {
        cli_progress_done(&progress);
        return status;
    }
    char header[256];
    snprintf(header, sizeof header,
             "# harmonia generate ranges: %llu ranges lo,hi of %llu keys, from %s, seed %llu\n",
             (unsigned long long)count, (unsigned long long)length, keys_path,
             (unsigned long long)seed);
    void *columns[2] = {lo, hi};
    status = cli_write_records(out, (cli_format)format, key_bits, count, 2, columns, header,
                               &progress);
    cli_progress_done(&progress);
    free_columns(lo, hi);
    if (status != 0)
        return status;
    if (!quiet && !cli_is_stdout(out))
        printf("wrote %llu %u-bit ranges of %llu keys to %s in %.2f s\n",
               (unsigned long long)count, key_bits, (unsigned long long)length, out,
               cli_now() - start);
    return CLI_EXIT_OK;
}

static int generate_ops(int argc, char **argv)
{
    cli_opt opts[] = {
        {"keys", "FILE", "the key file the batch is made against (required)", NULL},
        {"keys-format", "F", "format of the key file: auto (default), bin or text", NULL},
        {"keys-only", NULL, "the binary key file holds keys only, not key,value pairs", NULL},
        {"bits", "B", "key width: 32 or 64 (default 64)", NULL},
        {"count", "N", "number of operations (required)", NULL},
        {"mix", "M", "paper (default), insert, delete or mixed", NULL},
        {"seed", "S", "seed of the generator (default 42)", NULL},
        {"format", "F", "auto (default), bin or text", NULL},
        {"out", "FILE", "the file to write (required)", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {
        "generate ops", "generate ops --keys FILE --count N [--mix M] --out FILE",
        "Writes an update batch of N operations against the keys of a key file, for\n"
        "'harmonia update', in random order:\n"
        "  paper   5 % inserts of new keys, 95 % updates of distinct keys of the file\n"
        "          (the mix of the Harmonia paper)\n"
        "  insert  inserts of distinct new keys\n"
        "  delete  deletes of distinct keys of the file\n"
        "  mixed   inserts, updates, upserts and deletes of keys of the file and new keys,\n"
        "          some keys named twice; it needs --insert-existing upsert and\n"
        "          --update-missing skip\n"
        "New keys are never keys of the file (they lie within the span of its keys when it\n"
        "has room), so paper, insert and delete batches apply under the strict policies.\n"
        "Values are random.",
        opts, CLI_COUNT_OF(opts),
        "Formats: text lines '+ key value' (insert), '= key value' (update), '* key value'\n"
        "(upsert), '- key' (delete); binary records kind,key,value of the key width,\n"
        "little-endian, kind 0 insert, 1 update, 2 upsert, 3 delete (value 0 for deletes).\n"
        "--format auto (the default) picks text for names ending in .txt/.csv/.tsv, else binary.\n"
        "\n"
        "Example:\n"
        "  harmonia generate keys --count 1e6 --out pairs.bin\n"
        "  harmonia build --input pairs.bin --out pairs.idx\n"
        "  harmonia generate ops --keys pairs.bin --count 1e5 --mix paper --out ops.bin\n"
        "  harmonia update --index pairs.idx --ops ops.bin\n"};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    uint64_t count, seed;
    int mix, format;
    uint32_t key_bits;
    const char *out, *keys_path;
    if ((status = cli_opt_required(&spec, "keys", &keys_path)) ||
        (status = cli_opt_key_bits(&spec, &key_bits)) ||
        (status = cli_opt_u64(&spec, "count", 0, 0, UINT64_MAX, &count)) ||
        (status = cli_opt_choice(&spec, "mix", cli_ops_mix_names, CLI_MIX_PAPER, &mix)) ||
        (status = cli_opt_u64(&spec, "seed", DEFAULT_SEED, 0, UINT64_MAX, &seed)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_required(&spec, "out", &out)))
        return status;
    const cli_named_path inputs[] = {{"--keys", keys_path}};
    if ((status = cli_check_output("--out", out, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    if (!cli_opt_given(&spec, "count"))
        return cli_usage_error("missing --count");
    bool quiet = cli_opt_given(&spec, "quiet");
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    double start = cli_now();
    void *keys;
    uint64_t n;
    if ((status = read_sorted_keys(&spec, key_bits, &keys, &n, &progress)) != 0) {
        cli_progress_done(&progress);
        return status;
    }
    cli_ops ops;
    status = cli_gen_ops(keys, n, key_bits, count, (cli_ops_mix)mix, seed, &ops);
    free(keys);
    if (status != 0) {
        cli_progress_done(&progress);
        return status;
    }
    uint64_t per_kind[4] = {0, 0, 0, 0};
    for (uint64_t i = 0; i < ops.count; i++)
        per_kind[ops.kinds[i]]++;
    char kinds_text[160];
    snprintf(kinds_text, sizeof kinds_text,
             "%llu inserts, %llu updates, %llu upserts, %llu deletes",
             (unsigned long long)per_kind[HARMONIA_OP_INSERT],
             (unsigned long long)per_kind[HARMONIA_OP_UPDATE],
             (unsigned long long)per_kind[HARMONIA_OP_UPSERT],
             (unsigned long long)per_kind[HARMONIA_OP_DELETE]);
    char header[512];
    snprintf(header, sizeof header,
             "# harmonia generate ops: %llu operations, mix %s (%s), against %llu keys of %s, "
             "seed %llu\n",
             (unsigned long long)count, cli_ops_mix_names[mix], kinds_text, (unsigned long long)n,
             keys_path, (unsigned long long)seed);
    status = cli_write_ops(out, (cli_format)format, &ops, header, &progress);
    cli_progress_done(&progress);
    cli_ops_free(&ops);
    if (status != 0)
        return status;
    if (!quiet && !cli_is_stdout(out))
        printf("wrote %llu %u-bit operations (mix %s: %s) to %s in %.2f s%s\n",
               (unsigned long long)count, key_bits, cli_ops_mix_names[mix], kinds_text, out,
               cli_now() - start,
               mix == CLI_MIX_MIXED
                   ? "\n(apply with --insert-existing upsert --update-missing skip)"
                   : "");
    return CLI_EXIT_OK;
}

int cli_cmd_generate(int argc, char **argv)
{
    if (argc == 0) {
        fputs(generate_help, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        fputs(generate_help, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[0], "keys") == 0) {
        cli_command = "generate keys";
        return generate_keys(argc - 1, argv + 1);
    }
    if (strcmp(argv[0], "queries") == 0) {
        cli_command = "generate queries";
        return generate_queries(argc - 1, argv + 1);
    }
    if (strcmp(argv[0], "ranges") == 0) {
        cli_command = "generate ranges";
        return generate_ranges(argc - 1, argv + 1);
    }
    if (strcmp(argv[0], "ops") == 0) {
        cli_command = "generate ops";
        return generate_ops(argc - 1, argv + 1);
    }
    return cli_usage_error("unknown kind '%s' (keys, queries, ranges or ops)", argv[0]);
}
