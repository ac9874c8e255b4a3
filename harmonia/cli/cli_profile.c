/* cli_profile.c — `harmonia profile-ntg`: loads an index, reads (or draws from the index's keys) a
 * workload, runs the NTG model and, where a GPU is usable, the measured sweep (the library's
 * harmonia_ntg_model / harmonia_ntg_measure), prints them side by side as a table or JSON, draws
 * the SVG plot, and stores the chosen G in the index file. The chart itself is cli_plot.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_io.h"
#include "cli_plot.h"
#include "cli_progress.h"

int cli_cmd_profile_ntg(int argc, char **argv); /* declared with the other commands in cli.h */


/* Everything one run of the command knows, for the table, the JSON and the plot. */
typedef struct profile_run {
    const char *index_path, *queries_path, *plot_path;
    bool generated, json, quiet, store, model_only;
    uint64_t seed;
    harmonia_tree_info info;
    harmonia_ntg_config config;  /* config.query points at query */
    harmonia_query_config query;
    uint64_t count;
    harmonia_ntg_model_result model;
    harmonia_ntg_measurement measured;
    bool have_measurement;
    char no_measurement[512]; /* why there is none */
    uint32_t choice;
    bool stored;
} profile_run;

static int size_index(const uint32_t *sizes, uint32_t n, uint32_t g)
{
    for (uint32_t s = 0; s < n; s++)
        if (sizes[s] == g)
            return (int)s;
    return -1;
}

static const char *psa_words(const profile_run *run)
{
    int psa = run->query.psa;
    if (psa < 0)
        return run->model.psa ? "PSA auto (on)" : "PSA auto (off)";
    return psa ? "PSA on" : "PSA off";
}

static const char *choice_source(const profile_run *run)
{
    return run->have_measurement ? "the measured best" : "the model's choice";
}

/* ---- the table ------------------------------------------------------------------------------ */

static void print_text(const profile_run *run)
{
    const harmonia_tree_info *info = &run->info;
    const harmonia_ntg_model_result *m = &run->model;
    const harmonia_ntg_measurement *mr = &run->measured;
    printf("profile-ntg: %s: %u-bit keys, F = %u, L = %u, height %u, %llu keys\n", run->index_path,
           info->key_bits, info->fanout, info->leaf_size, info->height, (unsigned long long)info->key_count);
    if (run->generated)
        printf("workload: %llu queries drawn uniformly from the index's keys (seed %llu)\n",
               (unsigned long long)run->count, (unsigned long long)run->seed);
    else
        printf("workload: %llu queries from %s\n", (unsigned long long)run->count, run->queries_path);
    printf("          results %s, %s\n", run->config.unordered ? "in PSA order (unordered)" : "in query order",
           psa_words(run));
    printf("model:    %llu queries in %llu run%s of 32 (one warp at G = 1)\n", (unsigned long long)m->sample_queries,
           (unsigned long long)m->runs, m->runs == 1 ? "" : "s");
    if (m->psa)
        printf("          from the first PSA window (%llu queries sorted on key bits [%u, %u))\n",
               (unsigned long long)m->window, m->psa_begin_bit, m->psa_end_bit);
    printf("          steps of the last %u level%s (levels %u..%u of 0..%u)\n", m->levels, m->levels == 1 ? "" : "s",
           m->first_level, m->first_level + m->levels - 1, info->height - 1);
    if (run->have_measurement)
        printf("measured: %s, median of %u run%s after %u warm-up%s per G; every G gave the same results "
               "(%llu found)\n",
               mr->device, mr->runs, mr->runs == 1 ? "" : "s", mr->warmup, mr->warmup == 1 ? "" : "s",
               (unsigned long long)mr->found);
    else
        printf("measured: %s\n", run->no_measurement);
    printf("\n%5s  %11s  %11s  %11s  %13s  %s\n", "G", "model steps", "Eq. 4 ratio", "measured ms", "G queries/s",
           "choice");
    for (uint32_t k = m->size_count; k-- > 0;) {
        const uint32_t g = m->group_sizes[k];
        char ratio[32] = "-", ms[32] = "-", rate[32] = "-", marks[32] = "";
        if (k + 1 < m->size_count)
            snprintf(ratio, sizeof ratio, "%.3f", m->ratio[k]);
        if (run->have_measurement) {
            snprintf(ms, sizeof ms, "%.3f", mr->seconds[k] * 1e3);
            snprintf(rate, sizeof rate, "%.3f", mr->queries_per_second[k] * 1e-9);
        }
        bool is_model = g == m->choice, is_best = run->have_measurement && g == mr->best;
        snprintf(marks, sizeof marks, "%s%s%s", is_model ? "model" : "", is_model && is_best ? ", " : "",
                 is_best ? "best" : "");
        printf("%5u  %11.3f  %11s  %11s  %13s  %s\n", g, m->steps[k], ratio, ms, rate, marks);
    }
    printf("\n");
    const int c = size_index(m->group_sizes, m->size_count, m->choice);
    if (c > 0)
        printf("model's choice: G = %u (narrowing to G = %u: ratio %.3f, not above 1)\n", m->choice,
               m->group_sizes[c - 1], m->ratio[c - 1]);
    else
        printf("model's choice: G = %u (every narrowing had a ratio above 1)\n", m->choice);
    if (run->have_measurement) {
        const int b = size_index(mr->group_sizes, mr->size_count, mr->best);
        const double best_rate = mr->queries_per_second[b], model_rate = c >= 0 ? mr->queries_per_second[c] : 0;
        if (mr->best == m->choice)
            printf("measured best:  G = %u (%.3f G queries/s): the model agrees\n", mr->best, best_rate * 1e-9);
        else
            printf("measured best:  G = %u (%.3f G queries/s); the model's choice runs at %.3f (%.0f %%)\n", mr->best,
                   best_rate * 1e-9, model_rate * 1e-9, best_rate > 0 ? 100.0 * model_rate / best_rate : 0.0);
    } else {
        printf("measured best:  none (%s)\n", run->no_measurement);
    }
    if (run->stored)
        printf("stored:         G = %u, %s, in %s (lookups use it unless told otherwise)\n", run->choice,
               choice_source(run), run->index_path);
    else
        printf("stored:         nothing (--no-store); the choice would be G = %u, %s\n", run->choice,
               choice_source(run));
    if (run->plot_path)
        printf("plot:           %s\n", run->plot_path);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void print_json(const profile_run *run)
{
    const harmonia_tree_info *info = &run->info;
    const harmonia_ntg_model_result *m = &run->model;
    const harmonia_ntg_measurement *mr = &run->measured;
    printf("{\"command\":\"profile-ntg\",\"index\":");
    cli_json_string(stdout, run->index_path);
    printf(",\"key_bits\":%u,\"fanout\":%u,\"leaf_size\":%u,\"height\":%u,\"keys\":%llu,", info->key_bits,
           info->fanout, info->leaf_size, info->height, (unsigned long long)info->key_count);
    printf("\"workload\":{\"queries\":%llu,", (unsigned long long)run->count);
    if (run->generated) {
        printf("\"source\":\"generated\",\"seed\":%llu}", (unsigned long long)run->seed);
    } else {
        printf("\"source\":\"file\",\"path\":");
        cli_json_string(stdout, run->queries_path);
        printf("}");
    }
    printf(",\"results_order\":\"%s\",\"psa_setting\":\"%s\",", run->config.unordered ? "psa" : "query",
           run->query.psa < 0 ? "auto" : run->query.psa ? "on" : "off");
    printf("\"model\":{\"sample_queries\":%llu,\"runs\":%llu,\"levels\":%u,\"first_level\":%u,\"psa\":%s,",
           (unsigned long long)m->sample_queries, (unsigned long long)m->runs, m->levels, m->first_level,
           m->psa ? "true" : "false");
    if (m->psa)
        printf("\"psa_begin_bit\":%u,\"psa_end_bit\":%u,", m->psa_begin_bit, m->psa_end_bit);
    printf("\"window\":%llu,\"choice\":%u,\"sizes\":[", (unsigned long long)m->window, m->choice);
    for (uint32_t k = 0; k < m->size_count; k++) {
        printf("%s{\"group_size\":%u,\"steps\":%.6f,\"ratio\":", k ? "," : "", m->group_sizes[k], m->steps[k]);
        if (k + 1 < m->size_count)
            printf("%.6f", m->ratio[k]);
        else
            printf("null");
        printf(",\"level_steps\":[");
        for (uint32_t l = 0; l < m->levels; l++)
            printf("%s%.6f", l ? "," : "", m->level_steps[k][l]);
        printf("]}");
    }
    printf("]},\"measurement\":");
    if (run->have_measurement) {
        printf("{\"device\":");
        cli_json_string(stdout, mr->device);
        printf(",\"queries\":%llu,\"found\":%llu,\"psa\":%s,\"warmup\":%u,\"runs\":%u,\"best\":%u,\"sizes\":[",
               (unsigned long long)mr->queries, (unsigned long long)mr->found, mr->psa ? "true" : "false",
               mr->warmup, mr->runs, mr->best);
        for (uint32_t k = 0; k < mr->size_count; k++)
            printf("%s{\"group_size\":%u,\"seconds\":%.9f,\"queries_per_second\":%.1f}", k ? "," : "",
                   mr->group_sizes[k], mr->seconds[k], mr->queries_per_second[k]);
        printf("]}");
    } else {
        printf("null,\"no_measurement_reason\":");
        cli_json_string(stdout, run->no_measurement);
    }
    printf(",\"choice\":%u,\"choice_from\":\"%s\",\"stored\":%s,\"plot\":", run->choice,
           run->have_measurement ? "measurement" : "model", run->stored ? "true" : "false");
    if (run->plot_path)
        cli_json_string(stdout, run->plot_path);
    else
        printf("null");
    printf("}\n");
}

/* ---- the plot ------------------------------------------------------------------------------- */

static int write_plot(const profile_run *run)
{
    const harmonia_ntg_model_result *m = &run->model;
    const harmonia_ntg_measurement *mr = &run->measured;
    char labels[HARMONIA_NTG_MAX_SIZES][8];
    const char *label_ptrs[HARMONIA_NTG_MAX_SIZES];
    double rates[HARMONIA_NTG_MAX_SIZES];
    for (uint32_t k = 0; k < m->size_count; k++) {
        snprintf(labels[k], sizeof labels[k], "%u", m->group_sizes[k]);
        label_ptrs[k] = labels[k];
        rates[k] = run->have_measurement ? mr->queries_per_second[k] * 1e-9 : -1.0;
    }
    char title[160], subtitle[256], model_mark[64], best_mark[64], note[600];
    snprintf(title, sizeof title, "NTG group size: the Eq. 4 model and the measurement (F = %u)", run->info.fanout);
    snprintf(subtitle, sizeof subtitle, "%u-bit keys, %llu keys, L = %u, height %u; %llu queries, %s; model: last %u level%s",
             run->info.key_bits, (unsigned long long)run->info.key_count, run->info.leaf_size, run->info.height,
             (unsigned long long)run->count, psa_words(run), m->levels, m->levels == 1 ? "" : "s");
    snprintf(model_mark, sizeof model_mark, "model's choice G = %u", m->choice);
    snprintf(best_mark, sizeof best_mark, "measured best G = %u", mr->best);
    if (run->have_measurement)
        snprintf(note, sizeof note, "measured on %s; median of %u runs; stored: G = %u (%s)", mr->device, mr->runs,
                 run->choice, choice_source(run));
    else
        snprintf(note, sizeof note, "no measurement: %s", run->no_measurement);
    cli_plot plot = {
        .title = title,
        .subtitle = subtitle,
        .x_title = "G: threads per query (narrowing from right to left)",
        .points = m->size_count,
        .x_labels = label_ptrs,
        .left = {"model: mean warp steps (lower is better)", m->steps, "#1f77b4",
                 size_index(m->group_sizes, m->size_count, m->choice), model_mark},
        .right = {"measured: G queries/s (higher is better)", run->have_measurement ? rates : NULL, "#d95f02",
                  run->have_measurement ? size_index(mr->group_sizes, mr->size_count, mr->best) : -1, best_mark},
        .note = note,
    };
    return cli_plot_write_svg(run->plot_path, &plot);
}

/* ---- the command ---------------------------------------------------------------------------- */

static bool ends_with_svg(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcasecmp(path + n - 4, ".svg") == 0;
}

/* Reads the options into run (and its ntg config). */
static int read_options(const cli_spec *spec, profile_run *run, int *queries_format)
{
    uint64_t count, sample, levels, window, bits, runs, warmup;
    int psa;
    int status;
    if ((status = cli_opt_required(spec, "index", &run->index_path)) ||
        (status = cli_opt_choice(spec, "queries-format", cli_format_names, CLI_FORMAT_AUTO, queries_format)) ||
        (status = cli_opt_u64(spec, "count", (uint64_t)1 << 24, 1, (uint64_t)1 << 32, &count)) ||
        (status = cli_opt_u64(spec, "seed", 1, 0, UINT64_MAX, &run->seed)) ||
        (status = cli_opt_u64(spec, "sample", HARMONIA_NTG_DEFAULT_SAMPLE, 32, (uint64_t)1 << 24, &sample)) ||
        (status = cli_opt_u64(spec, "levels", HARMONIA_NTG_DEFAULT_LEVELS, 1, HARMONIA_MAX_LEVELS, &levels)) ||
        (status = cli_opt_psa(spec, &psa)) ||
        (status = cli_opt_u64(spec, "psa-window", 0, 1024, (uint64_t)1 << 30, &window)) ||
        (status = cli_opt_u64(spec, "psa-bits", 0, 1, 64, &bits)) ||
        (status = cli_opt_u64(spec, "runs", HARMONIA_NTG_DEFAULT_RUNS, 1, 1000, &runs)) ||
        (status = cli_opt_u64(spec, "warmup", 1, 1, 100, &warmup)))
        return status;
    run->queries_path = cli_opt_str(spec, "queries", NULL);
    run->generated = run->queries_path == NULL;
    if (!run->generated && (cli_opt_given(spec, "count") || cli_opt_given(spec, "seed")))
        return cli_usage_error("--count and --seed describe generated queries: not with --queries");
    if (run->generated && cli_opt_given(spec, "queries-format"))
        return cli_usage_error("--queries-format needs --queries");
    run->plot_path = cli_opt_str(spec, "plot", NULL);
    if (run->plot_path && !ends_with_svg(run->plot_path))
        return cli_usage_error("--plot %s: the plot is written as SVG; name the file *.svg", run->plot_path);
    const cli_named_path inputs[] = {{"--index", run->index_path}, {"--queries", run->queries_path}};
    if (run->plot_path && (status = cli_check_output("--plot", run->plot_path, inputs, CLI_COUNT_OF(inputs))) != 0)
        return status;
    run->json = cli_opt_given(spec, "json");
    run->quiet = cli_opt_given(spec, "quiet");
    run->store = !cli_opt_given(spec, "no-store");
    run->model_only = cli_opt_given(spec, "model-only");
    run->count = count;
    harmonia_ntg_config_init(&run->config);
    harmonia_query_config_init(&run->query);
    run->query.psa = psa;
    run->query.psa_window = window;
    run->query.psa_bits = (uint32_t)bits;
    run->config.query = &run->query;
    run->config.unordered = cli_opt_given(spec, "unordered");
    run->config.sample = sample;
    run->config.levels = (uint32_t)levels;
    run->config.runs = (uint32_t)runs;
    run->config.warmup = (uint32_t)warmup;
    return 0;
}

/* The workload: the queries file, or count keys drawn from the index. *queries_out is malloc'd. */
static int load_workload(profile_run *run, harmonia_tree *tree, int queries_format, void **queries_out)
{
    const size_t width = run->info.key_bits / 8;
    if (!run->generated) {
        cli_records records;
        cli_progress progress;
        cli_progress_init(&progress, run->quiet);
        int status = cli_read_records(run->queries_path, (cli_format)queries_format, run->info.key_bits, 1, 1, 1,
                                      "key", CLI_INDEX_WIDTH_HINT(run->info.key_bits), &records, &progress);
        cli_progress_done(&progress);
        if (status != 0)
            return status;
        if (records.count == 0) {
            cli_records_free(&records);
            return cli_error("%s: no queries in the file", run->queries_path);
        }
        run->count = records.count;
        *queries_out = records.column[0]; /* taken over from the records */
        records.column[0] = NULL;
        cli_records_free(&records);
        return 0;
    }
    if (run->info.key_count == 0)
        return cli_error("%s: the index holds no keys to draw queries from: give --queries FILE", run->index_path);
    void *queries = malloc(run->count * width);
    if (!queries)
        return cli_error("out of memory for %llu queries", (unsigned long long)run->count);
    harmonia_status hs = harmonia_sample_keys(tree, run->count, run->seed, queries);
    if (hs != HARMONIA_OK) {
        free(queries);
        return cli_library_error(tree, hs, NULL);
    }
    *queries_out = queries;
    return 0;
}

int cli_cmd_profile_ntg(int argc, char **argv)
{
    cli_opt opts[] = {
        {"index", "INDEX", "the index file (required); the choice is stored in it", NULL},
        {"queries", "FILE", "the workload: one key per record (default: drawn from the index)", NULL},
        {"queries-format", "F", "format of the queries file: auto (default), bin or text", NULL},
        {"count", "N", "queries drawn from the index's keys without --queries (default 2^24)", NULL},
        {"seed", "S", "seed of the drawn queries (default 1)", NULL},
        {"sample", "N", "model: queries traversed, in runs of 32 (default 1000, at least 32)", NULL},
        {"levels", "N", "model: the last levels whose steps count (default 2: leaves and parents)", NULL},
        {"psa", "MODE", "PSA of the workload: auto (default: off in query order), on or off", NULL},
        {"psa-window", "N", "queries per PSA window (default: the engine's, sized to the L2)", NULL},
        {"psa-bits", "B", "bucket bits of the PSA partition (default: the engine's)", NULL},
        {"unordered", NULL, "the workload takes results in PSA order (then PSA auto is on)", NULL},
        {"runs", "R", "measurement: timed runs per G, the median is kept (default 5)", NULL},
        {"warmup", "W", "measurement: untimed runs per G first (default 1)", NULL},
        {"model-only", NULL, "skip the measurement even where a GPU is usable", NULL},
        {"no-store", NULL, "leave the index file as it is", NULL},
        {"plot", "FILE", "draw model steps and measured throughput per G to FILE (.svg)", NULL},
        {"json", NULL, "print JSON instead of the table", NULL},
        {"no-verify", NULL, CLI_NO_VERIFY_HELP, NULL},
        {"quiet", NULL, "no progress bar", NULL},
    };
    cli_spec spec = {
        "profile-ntg", "profile-ntg --index INDEX [--queries FILE] [--sample N] [--json] [--plot FILE.svg]",
        "Profiles the NTG group size G (threads per query on the GPU) for an index and a\n"
        "workload: the Eq. 4 model of the Harmonia paper (a CPU traversal of a sample:\n"
        "mean warp comparison steps per G, narrowing while (S_before / S_after) x 2 > 1)\n"
        "and, where a GPU is usable, the lookup throughput measured for every G. Prints\n"
        "both side by side and stores the chosen G in the index file (the measured best,\n"
        "or the model's choice without a GPU); lookups then use it unless told otherwise.",
        opts, CLI_COUNT_OF(opts),
        "G runs over 1, 2, 4, ... min(F, 32). The model: ntg/ntg_model.h. Without a GPU the\n"
        "model alone decides and the output says why there is no measurement (exit 0).\n"
        "Example:\n"
        "  harmonia profile-ntg --index pairs.idx --plot ntg.svg\n"
        "  harmonia profile-ntg --index pairs.idx --queries queries.bin --no-store --json\n"};
    int status = cli_parse(&spec, argc, argv, NULL, 0, NULL);
    if (status != 0)
        return status == CLI_HELP_SHOWN ? CLI_EXIT_OK : status;
    profile_run run;
    memset(&run, 0, sizeof run);
    int queries_format = CLI_FORMAT_AUTO;
    if ((status = read_options(&spec, &run, &queries_format)) != 0)
        return status;

    harmonia_tree *tree = NULL;
    void *queries = NULL;
    /* storing the choice is a read-modify-write of the index: under its lock, as an update */
    if ((status = cli_load_index(run.index_path, !cli_opt_given(&spec, "no-verify"),
                                 run.store ? HARMONIA_LOCK_TRY : HARMONIA_LOCK_NONE, run.quiet, &tree)) != 0)
        return status;
    harmonia_status hs = harmonia_info(tree, &run.info);
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, run.index_path);
        goto done;
    }
    if ((status = load_workload(&run, tree, queries_format, &queries)) != 0)
        goto done;

    hs = harmonia_ntg_model(tree, &run.config, queries, run.count, &run.model);
    if (hs != HARMONIA_OK) {
        status = cli_library_error(tree, hs, "the model");
        goto done;
    }
    if (run.model_only) {
        snprintf(run.no_measurement, sizeof run.no_measurement, "skipped (--model-only)");
    } else {
        hs = harmonia_ntg_measure(tree, &run.config, queries, run.count, &run.measured);
        if (hs == HARMONIA_ERR_NO_DEVICE) {
            snprintf(run.no_measurement, sizeof run.no_measurement, "no GPU: %s", harmonia_last_error(tree));
        } else if (hs != HARMONIA_OK) {
            status = cli_library_error(tree, hs, "the measurement");
            goto done;
        } else {
            run.have_measurement = true;
        }
    }
    run.choice = harmonia_ntg_choice(&run.model, run.have_measurement ? &run.measured : NULL);

    if (run.plot_path && (status = write_plot(&run)) != 0)
        goto done;
    if (run.store) {
        if ((hs = harmonia_set_group_size(tree, run.choice)) != HARMONIA_OK ||
            (hs = harmonia_save(tree, run.index_path)) != HARMONIA_OK) {
            status = cli_library_error(tree, hs, NULL); /* the save's messages name the file */
            goto done;
        }
        run.stored = true;
    }
    if (run.json)
        print_json(&run);
    else
        print_text(&run);
done:
    free(queries);
    harmonia_free(tree);
    return status;
}
