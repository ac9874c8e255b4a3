/* cli_build.c — `harmonia build`: reads a pairs (or keys) file, builds the tree with harmonia_build
 * and saves it with harmonia_save. When the library rejects the input (unsorted, duplicate keys)
 * it finds the offending record again to name its file and line. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_data.h"
#include "cli_io.h"

static const char *const backend_names[] = {"auto", "cpu", "gpu", NULL};

/* The build's steps timed from its progress phases (--verbose): each phase from its first report to
 * its last, in the order they came; the progress bar is fed on. */
#define BUILD_MAX_STEPS 8
typedef struct build_steps {
    cli_progress *progress;
    int count;
    const char *name[BUILD_MAX_STEPS];
    double first[BUILD_MAX_STEPS], last[BUILD_MAX_STEPS];
} build_steps;

static void build_steps_callback(void *arg, const char *phase, double fraction)
{
    build_steps *s = arg;
    const double t = cli_now();
    int i = 0;
    while (i < s->count && strcmp(s->name[i], phase) != 0)
        i++;
    if (i == s->count && s->count < BUILD_MAX_STEPS) {
        s->name[s->count] = phase; /* the library's constant strings */
        s->first[s->count] = t;
        s->count++;
    }
    if (i < s->count)
        s->last[i] = t;
    cli_progress_callback(s->progress, phase, fraction);
}

/* Names the first record whose key is smaller than the one before it. Returns CLI_EXIT_FAIL. */
static int report_unsorted(const char *path, cli_format format, const cli_records *records)
{
    uint32_t bits = records->key_bits;
    for (uint64_t i = 1; i < records->count; i++) {
        uint64_t previous = cli_get(records->column[0], bits, i - 1);
        uint64_t key = cli_get(records->column[0], bits, i);
        if (key < previous) {
            char where[512];
            cli_record_location(path, format, bits, records->fields, i, where, sizeof where);
            return cli_error("%s: key %llu is smaller than the key before it (%llu): the input "
                             "is not sorted, as --sorted promised (record %llu)",
                             where, (unsigned long long)key, (unsigned long long)previous,
                             (unsigned long long)i);
        }
    }
    return CLI_EXIT_FAIL;
}

/* Names the first record whose key appeared before. Returns CLI_EXIT_FAIL, or 0 when no duplicate
 * was found (or there was no memory to look). */
static int report_duplicate(const char *path, cli_format format, const cli_records *records)
{
    uint32_t bits = records->key_bits;
    uint64_t n = records->count;
    size_t width = bits / 8;
    void *keys = malloc(n * width);
    void *positions = malloc(n * width);
    if (keys == NULL || positions == NULL || (bits == 32 && n > UINT32_MAX)) {
        free(keys);
        free(positions);
        return 0;
    }
    memcpy(keys, records->column[0], n * width);
    for (uint64_t i = 0; i < n; i++)
        cli_set(positions, bits, i, i);
    if (cli_sort_pairs(keys, positions, n, bits) != 0) { /* stable: positions ascend per key */
        free(keys);
        free(positions);
        return 0;
    }
    uint64_t best_second = UINT64_MAX, best_first = 0, best_key = 0;
    for (uint64_t i = 1; i < n; i++) {
        if (cli_get(keys, bits, i) == cli_get(keys, bits, i - 1) &&
            (i < 2 || cli_get(keys, bits, i - 2) != cli_get(keys, bits, i))) {
            uint64_t second = cli_get(positions, bits, i);
            if (second < best_second) {
                best_second = second;
                best_first = cli_get(positions, bits, i - 1);
                best_key = cli_get(keys, bits, i);
            }
        }
    }
    free(keys);
    free(positions);
    if (best_second == UINT64_MAX)
        return 0;
    char where[512], first_where[512];
    cli_record_location(path, format, bits, records->fields, best_second, where, sizeof where);
    cli_record_location(path, format, bits, records->fields, best_first, first_where,
                        sizeof first_where);
    return cli_error("%s: duplicate key %llu (first at %s); duplicates are rejected "
                     "(--duplicates first|last keeps one)",
                     where, (unsigned long long)best_key, first_where);
}

int cli_cmd_build(int argc, char **argv)
{
    cli_opt opts[] = {
        {"input", "FILE", "the key,value pairs (or keys) to index (required)", NULL},
        {"out", "INDEX", "the index file to write (required; a regular file, replaced safely; not '-')", NULL},
        CLI_OPT_BITS,
        {"format", "F", "input format: auto (default), bin or text", NULL},
        CLI_OPT_KEYS_ONLY,
        {"fanout", "F", "children per internal node: 8, 16, 32, 64, 128 (default: 16 for 64-bit keys, 32 for 32-bit)",
         NULL},
        CLI_OPT_LEAF_SIZE,
        CLI_OPT_FILL,
        {"sorted", NULL, "the input is in ascending key order (verified, not sorted)", NULL},
        {"duplicates", "P", "a key present twice: reject (default), first or last", NULL},
        {"threads", "T", "OpenMP threads (default: OpenMP's)", NULL},
        {"backend", "B", "where the sort and the layout run: auto (default: the GPU when one is usable and the input has "
                         "2^26 pairs or more, else the CPU), cpu or gpu", NULL},
        {"verbose", NULL, "print the build's steps and their times", NULL},
        {"check", NULL, "run the integrity checker on the tree before saving", NULL},
        {"json", NULL, "print the summary as JSON", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {
        "build", "build --input FILE [options] --out INDEX",
        "Builds a Harmonia tree from key,value pairs and saves it as an index file.\n"
        "Text input lines are 'key,value' or 'key' (then the value is the row id, the\n"
        "key's position in the input); binary input is key,value records of the key\n"
        "width, or keys only with --keys-only.",
        opts, CLI_COUNT_OF(opts),
        "Example:\n"
        "  harmonia generate keys --count 1e6 --out pairs.bin\n"
        "  harmonia build --input pairs.bin --fanout 16 --leaf-size 16 --out pairs.idx\n"};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const char *input, *out;
    int format, backend;
    uint32_t key_bits;
    harmonia_duplicates duplicates;
    uint64_t fanout, leaf_size, threads;
    double fill;
    if ((status = cli_opt_required(&spec, "input", &input)) ||
        (status = cli_opt_required(&spec, "out", &out)) ||
        (status = cli_opt_key_bits(&spec, &key_bits)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_node_size(&spec, "fanout", &fanout)) ||
        (status = cli_opt_node_size(&spec, "leaf-size", &leaf_size)) ||
        (status = cli_opt_double(&spec, "fill", 0.0, 0.0, 1.0, &fill)) ||
        (status = cli_opt_duplicates(&spec, &duplicates)) ||
        (status = cli_opt_choice(&spec, "backend", backend_names, 0, &backend)) ||
        (status = cli_opt_u64(&spec, "threads", 0, 0, 1u << 16, &threads)))
        return status;
    if (cli_opt_given(&spec, "fill") && fill <= 0.0)
        return cli_usage_error("--fill: must be in (0, 1]");
    if (strcmp(out, "-") == 0)
        return cli_usage_error("--out -: an index is saved to a file, not standard output (a file "
                               "named '-' is './-')");
    const cli_named_path inputs[] = {{"--input", input}};
    if ((status = cli_check_output("--out", out, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    bool quiet = cli_opt_given(&spec, "quiet");
    bool json = cli_opt_given(&spec, "json");
    cli_progress progress;
    cli_progress_init(&progress, quiet);

    double t0 = cli_now();
    cli_records records;
    int binary_fields = cli_opt_given(&spec, "keys-only") ? 1 : 2;
    status = cli_read_records(input, (cli_format)format, key_bits, 1, 2, binary_fields,
                              "key or key,value", key_bits == 32 ? " (use --bits 64?)" : NULL,
                              &records, &progress);
    cli_progress_done(&progress);
    if (status != 0)
        return status;

    harmonia_build_config config;
    harmonia_build_config_init(&config);
    config.key_bits = key_bits;
    if (fanout != 0)
        config.fanout = (uint32_t)fanout;
    if (leaf_size != 0)
        config.leaf_size = (uint32_t)leaf_size;
    if (fill > 0.0)
        config.leaf_fill = fill;
    config.duplicates = duplicates;
    config.input_sorted = cli_opt_given(&spec, "sorted");
    config.threads = (int)threads;
    config.backend = backend == 1 ? HARMONIA_BACKEND_CPU : backend == 2 ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_AUTO;
    config.memory = HARMONIA_MEMORY_HOST;
    build_steps steps;
    memset(&steps, 0, sizeof steps);
    steps.progress = &progress;
    config.progress = build_steps_callback;
    config.progress_arg = &steps;

    double t1 = cli_now();
    harmonia_tree *tree = NULL;
    harmonia_status hs = harmonia_build(&config, records.column[0],
                                        records.fields == 2 ? records.column[1] : NULL,
                                        records.count, &tree);
    cli_progress_done(&progress);
    double t2 = cli_now();
    if (hs != HARMONIA_OK) {
        status = 0;
        if (hs == HARMONIA_ERR_UNSORTED)
            status = report_unsorted(input, (cli_format)format, &records);
        else if (hs == HARMONIA_ERR_DUPLICATE_KEY)
            status = report_duplicate(input, (cli_format)format, &records);
        if (status == 0) /* the scan found nothing: the library's own words */
            status = cli_library_error(NULL, hs, input);
        cli_records_free(&records);
        return status;
    }
    cli_records_free(&records);

    if (cli_opt_given(&spec, "check")) {
        hs = harmonia_check(tree);
        if (hs != HARMONIA_OK) {
            status = cli_library_error(tree, hs, "the built tree failed the integrity check");
            harmonia_free(tree);
            return status;
        }
    }
    hs = harmonia_save(tree, out);
    cli_progress_done(&progress);
    double t3 = cli_now();
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, out);
        harmonia_free(tree);
        return status;
    }
    harmonia_tree_info info;
    hs = harmonia_info(tree, &info);
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, "info");
        harmonia_free(tree);
        return status;
    }
    const bool built_on_gpu = info.device_resident; /* the GPU build keeps its device copy */
    const bool verbose = cli_opt_given(&spec, "verbose");
    harmonia_free(tree);
    if (json) {
        printf("{\"command\":\"build\",\"input\":");
        cli_json_string(stdout, input);
        printf(",\"index\":");
        cli_json_string(stdout, out);
        printf(",\"keys\":%llu,\"key_bits\":%u,\"fanout\":%u,\"leaf_size\":%u,\"height\":%u,"
               "\"leaf_fill\":%.6f,\"total_bytes\":%llu,\"read_seconds\":%.6f,"
               "\"build_seconds\":%.6f,\"save_seconds\":%.6f,\"build_engine\":\"%s\"",
               (unsigned long long)info.key_count, info.key_bits, info.fanout, info.leaf_size,
               info.height, info.leaf_fill, (unsigned long long)info.total_bytes, t1 - t0,
               t2 - t1, t3 - t2, built_on_gpu ? "gpu" : "cpu");
        if (verbose) {
            printf(",\"build_steps\":{");
            for (int i = 0; i < steps.count; i++)
                printf("%s\"%s\":%.6f", i ? "," : "", steps.name[i], steps.last[i] - steps.first[i]);
            printf("}");
        }
        printf("}\n");
    } else if (!quiet) {
        char bytes[32];
        printf("built %s: %llu keys, %u-bit, F=%u L=%u, height %u, leaf fill %.3f, %s\n", out,
               (unsigned long long)info.key_count, info.key_bits, info.fanout, info.leaf_size,
               info.height, info.leaf_fill, cli_format_bytes(info.total_bytes, bytes));
        printf("read %.3f s, build %.3f s (%s), save %.3f s, total %.3f s\n", t1 - t0, t2 - t1,
               built_on_gpu ? "GPU" : "CPU", t3 - t2, t3 - t0);
        if (verbose) {
            printf("build steps:");
            for (int i = 0; i < steps.count; i++)
                printf(" %s %.3f s%s", steps.name[i], steps.last[i] - steps.first[i], i + 1 < steps.count ? "," : "\n");
            if (steps.count == 0)
                printf(" none reported\n");
        }
    }
    return CLI_EXIT_OK;
}
