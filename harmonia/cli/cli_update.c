/* cli_update.c — `harmonia update`: loads an index, reads an operations file (formats in
 * cli_io.h), applies it as one batch with harmonia_update, runs the integrity checker and saves
 * the index atomically. A rejected batch is reported at the file line of the failing operation
 * and leaves the index file untouched. The updating itself is the library's. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_io.h"


/* Reports a batch the library rejected; the index file is untouched. A strict-policy failure is
 * placed at the file line (or binary record) of the failing operation. Returns
 * CLI_EXIT_FAIL. */
static int report_rejected_batch(harmonia_tree *tree, harmonia_status hs, const harmonia_update_stats *stats,
                                 const char *ops_path, const cli_ops *ops, const char *index_path)
{
    const char *message = harmonia_last_error(tree);
    if (message[0] == '\0')
        message = harmonia_strerror(hs);
    if (hs == HARMONIA_ERR_CORRUPT) /* the index, loaded with --no-verify, failed verification */
        return cli_error("%s (%s); %s is unchanged", message, harmonia_strerror(hs), index_path);
    if (hs != HARMONIA_ERR_KEY_EXISTS && hs != HARMONIA_ERR_KEY_MISSING)
        return cli_error("%s: %s (%s); nothing was applied and %s is unchanged", ops_path,
                         message, harmonia_strerror(hs), index_path);
    const char *hint = hs == HARMONIA_ERR_KEY_EXISTS
                           ? "--insert-existing upsert makes such inserts updates"
                           : "--update-missing skip skips updates of missing keys";
    char where[1024];
    if (stats->failed_operation < ops->count)
        cli_op_location(ops_path, ops, stats->failed_operation, where, sizeof where);
    else
        snprintf(where, sizeof where, "%s", ops_path);
    return cli_error("%s: %s (%s; %s); %s is unchanged", where, message, harmonia_strerror(hs),
                     hint, index_path);
}

/* ---- the summary --------------------------------------------------------------------------- */

typedef struct update_times {
    double load, read, update, check, save;
} update_times;

static void print_json(const char *index_path, const char *ops_path, const char *target,
                       const harmonia_update_stats *s, const harmonia_tree_info *before,
                       const harmonia_tree_info *after, const update_times *t)
{
    printf("{\"command\":\"update\",\"index\":");
    cli_json_string(stdout, index_path);
    printf(",\"ops\":");
    cli_json_string(stdout, ops_path);
    printf(",\"out\":");
    cli_json_string(stdout, target);
    printf(",\"key_bits\":%u,\"operations\":%llu,\"applied\":%llu,\"inserted\":%llu,"
           "\"updated\":%llu,\"deleted\":%llu,\"missing\":%llu,\"duplicates\":%llu,"
           "\"leaves_touched\":%llu,\"leaves_split\":%llu,\"leaves_removed\":%llu,"
           "\"auxiliary_nodes\":%llu,\"shape_changed\":%s,\"incremental_upload\":%s,"
           "\"uploaded_bytes\":%llu,\"keys_before\":%llu,\"keys_after\":%llu,"
           "\"leaves_before\":%llu,\"leaves_after\":%llu,\"height_after\":%u,\"version\":%llu,",
           after->key_bits, (unsigned long long)s->operations, (unsigned long long)s->applied,
           (unsigned long long)s->inserted, (unsigned long long)s->updated,
           (unsigned long long)s->deleted, (unsigned long long)s->missing,
           (unsigned long long)s->duplicates, (unsigned long long)s->leaves_touched,
           (unsigned long long)s->leaves_split, (unsigned long long)s->leaves_removed,
           (unsigned long long)s->auxiliary_nodes, s->shape_changed ? "true" : "false",
           s->incremental_upload ? "true" : "false", (unsigned long long)s->uploaded_bytes,
           (unsigned long long)before->key_count, (unsigned long long)after->key_count,
           (unsigned long long)before->leaf_count, (unsigned long long)after->leaf_count,
           after->height, (unsigned long long)after->version);
    printf("\"load_seconds\":%.6f,\"read_seconds\":%.6f,\"update_seconds\":%.6f,"
           "\"sort_seconds\":%.6f,\"apply_seconds\":%.6f,\"relayout_seconds\":%.6f,"
           "\"upload_seconds\":%.6f,\"check_seconds\":%.6f,\"save_seconds\":%.6f}\n",
           t->load, t->read, t->update, s->sort_seconds, s->apply_seconds, s->relayout_seconds,
           s->upload_seconds, t->check, t->save);
}

static void print_table(const char *index_path, const char *ops_path, const char *target,
                        const harmonia_update_stats *s, const harmonia_tree_info *before,
                        const harmonia_tree_info *after, const update_times *t)
{
    printf("updated %s with %s", index_path, ops_path);
    if (strcmp(target, index_path) != 0)
        printf(", saved to %s", target);
    printf("\n");
    printf("operations       %llu\n", (unsigned long long)s->operations);
    printf("applied          %llu\n", (unsigned long long)s->applied);
    printf("  inserted       %llu\n", (unsigned long long)s->inserted);
    printf("  updated        %llu\n", (unsigned long long)s->updated);
    printf("  deleted        %llu\n", (unsigned long long)s->deleted);
    printf("missing          %llu\n", (unsigned long long)s->missing);
    printf("duplicates       %llu\n", (unsigned long long)s->duplicates);
    printf("leaves touched   %llu\n", (unsigned long long)s->leaves_touched);
    printf("leaves split     %llu\n", (unsigned long long)s->leaves_split);
    printf("leaves removed   %llu\n", (unsigned long long)s->leaves_removed);
    printf("auxiliary nodes  %llu\n", (unsigned long long)s->auxiliary_nodes);
    printf("shape changed    %s\n", s->shape_changed ? "yes (layout rebuilt)" : "no");
    printf("keys             %llu -> %llu\n", (unsigned long long)before->key_count,
           (unsigned long long)after->key_count);
    printf("leaves           %llu -> %llu (height %u -> %u)\n",
           (unsigned long long)before->leaf_count, (unsigned long long)after->leaf_count,
           before->height, after->height);
    printf("version          %llu\n", (unsigned long long)after->version);
    printf("load             %.4f s\n", t->load);
    printf("read operations  %.4f s\n", t->read);
    printf("update           %.4f s\n", t->update);
    printf("  sort           %.4f s\n", s->sort_seconds);
    printf("  apply          %.4f s\n", s->apply_seconds);
    printf("  relayout       %.4f s\n", s->relayout_seconds);
    if (s->uploaded_bytes > 0) {
        char bytes[32];
        printf("  upload         %.4f s (%s, %s)\n", s->upload_seconds,
               cli_format_bytes(s->uploaded_bytes, bytes),
               s->incremental_upload ? "dirty leaves only" : "whole tree");
    } else {
        printf("  upload         %.4f s (no device copy)\n", s->upload_seconds);
    }
    printf("check            %.4f s\n", t->check);
    printf("save             %.4f s\n", t->save);
}

/* ---- the command --------------------------------------------------------------------------- */

int cli_cmd_update(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "INDEX", "the index file to update (required)", NULL},
        {"ops", "FILE", "the operations to apply, as one batch (required)", NULL},
        {"out", "INDEX", "save the updated index here (default: over --index)", NULL},
        {"format", "F", "format of the operations file: auto (default), bin or text", NULL},
        CLI_OPT_INSERT_EXISTING,
        CLI_OPT_UPDATE_MISSING,
        {"split-fill", "X", "fill of the nodes an overflowing leaf splits into, in (0, 1] "
                            "(default: library's)", NULL},
        {"threads", "T", "OpenMP threads (default: OpenMP's)", NULL},
        {"json", NULL, "print the statistics as JSON", NULL},
        {"no-verify", NULL, CLI_NO_VERIFY_HELP, NULL},
        {"wait", NULL, "wait while another process updates the index (default: fail at once "
                       "with 'index is being updated by another process')", NULL},
        {"quiet", NULL, "no progress bar, no summary", NULL},
    };
    cli_spec spec = {
        "update", "update --index INDEX --ops FILE [--out INDEX] [options] [--json]",
        "Applies a batch of inserts, updates, upserts and deletes to an index, all or\n"
        "nothing: the operations file is read and checked in full, the batch is applied\n"
        "(operations on one key in file order), the tree is checked and then saved\n"
        "atomically over the index, or to --out. If any line is malformed or the batch\n"
        "fails under the policies, nothing is applied or saved and the error names the\n"
        "file line (or binary record) of the operation. A delete of a missing key is\n"
        "counted, not an error. Prints the batch's statistics and the time of each step.",
        opts, CLI_COUNT_OF(opts),
        "Operations files: text lines '+ key value' (insert), '= key value' (update),\n"
        "'* key value' (upsert), '- key' (delete); numbers decimal or 0x hex, '#' comments\n"
        "and blank lines allowed. Binary files: records kind,key,value of the index's key\n"
        "width, little-endian, kind 0 insert, 1 update, 2 upsert, 3 delete (the value of a\n"
        "delete is ignored). --format auto (the default) reads names ending in\n"
        ".txt/.csv/.tsv as text, others as binary.\n"
        "\n"
        "Example:\n"
        "  harmonia generate ops --keys pairs.bin --count 1e5 --mix paper --out ops.txt\n"
        "  harmonia update --index pairs.idx --ops ops.txt --out pairs-new.idx\n"};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    const char *index_path, *ops_path;
    int format;
    harmonia_insert_policy insert_existing;
    harmonia_update_policy update_missing;
    double split_fill;
    uint64_t threads;
    if ((status = cli_opt_required(&spec, "index", &index_path)) ||
        (status = cli_opt_required(&spec, "ops", &ops_path)) ||
        (status = cli_opt_choice(&spec, "format", cli_format_names, CLI_FORMAT_AUTO, &format)) ||
        (status = cli_opt_insert_existing(&spec, &insert_existing)) ||
        (status = cli_opt_update_missing(&spec, &update_missing)) ||
        (status = cli_opt_double(&spec, "split-fill", 0.0, 0.0, 1.0, &split_fill)) ||
        (status = cli_opt_u64(&spec, "threads", 0, 0, 1u << 16, &threads)))
        return status;
    if (cli_opt_given(&spec, "split-fill") && split_fill <= 0.0)
        return cli_usage_error("--split-fill: must be in (0, 1]");
    const char *target = cli_opt_str(&spec, "out", index_path);
    if (cli_is_stdout(target))
        return cli_usage_error("--out -: an index is saved to a file, not standard output (a file "
                               "named '-' is './-')");
    const cli_named_path inputs[] = {{"--ops", ops_path}};
    if (cli_opt_given(&spec, "out") &&
        (status = cli_check_output("--out", target, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    bool json = cli_opt_given(&spec, "json");
    bool quiet = cli_opt_given(&spec, "quiet");
    update_times times = {0, 0, 0, 0, 0};

    double t0 = cli_now();
    harmonia_tree *tree = NULL;
    /* The update is a read-modify-write of the file: the index's lock is taken before it is read
     * and held until the new file is in place, so that concurrent updates never lose a batch. */
    if ((status = cli_load_index(index_path, !cli_opt_given(&spec, "no-verify"),
                                 cli_opt_given(&spec, "wait") ? HARMONIA_LOCK_WAIT : HARMONIA_LOCK_TRY,
                                 quiet, &tree)) != 0)
        return status;
    harmonia_tree_info before, after;
    harmonia_status hs = harmonia_info(tree, &before);
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, index_path);
        harmonia_free(tree);
        return status;
    }
    double t1 = cli_now();
    times.load = t1 - t0;

    /* Every line is read and checked before the tree is touched. */
    cli_ops ops;
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    status = cli_read_ops(ops_path, (cli_format)format, before.key_bits, &ops, &progress);
    cli_progress_done(&progress);
    if (status != 0) {
        harmonia_free(tree);
        return cli_error("nothing was applied; %s is unchanged", index_path);
    }
    double t2 = cli_now();
    times.read = t2 - t1;

    harmonia_update_config config;
    harmonia_update_config_init(&config);
    config.insert_existing = insert_existing;
    config.update_missing = update_missing;
    if (split_fill > 0.0)
        config.split_fill = split_fill;
    config.threads = (int)threads;
    harmonia_update_stats stats;
    memset(&stats, 0, sizeof stats);
    hs = harmonia_update(tree, &config, ops.kinds, ops.keys, ops.values, ops.count, &stats);
    double t3 = cli_now();
    times.update = t3 - t2;
    if (hs != HARMONIA_OK) {
        status = report_rejected_batch(tree, hs, &stats, ops_path, &ops, index_path);
        goto done;
    }

    hs = harmonia_check(tree);
    double t4 = cli_now();
    times.check = t4 - t3;
    if (hs != HARMONIA_OK) {
        status = cli_error("the updated tree failed the integrity check: %s (%s); nothing was "
                           "saved and %s is unchanged",
                           harmonia_last_error(tree), harmonia_strerror(hs), index_path);
        goto done;
    }
    hs = harmonia_save(tree, target);
    times.save = cli_now() - t4;
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, target);
        goto done;
    }
    hs = harmonia_info(tree, &after);
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, "info");
        goto done;
    }
    if (json)
        print_json(index_path, ops_path, target, &stats, &before, &after, &times);
    else if (!quiet)
        print_table(index_path, ops_path, target, &stats, &before, &after, &times);
done:
    cli_ops_free(&ops);
    harmonia_free(tree);
    return status;
}
