/* bench_nightly.c — the nightly job of DESIGN.md §1 as one flow, every step timed and verified (issue
 * 15, item 4): bulk build of 2^K unsorted 64-bit pairs -> apply a 2^M-operation batch (5 % inserts of
 * new keys, 90 % updates, 5 % deletes, each on its own key) -> save the index to a file -> load it
 * (verified: checksums and the integrity checker) -> a batch of 2^Q lookups (half hits, half
 * misses). After the build and the batch: the integrity checker and lookups of a sample against the
 * model; after the load: the checker again (the loader ran it) and the whole lookup batch against the
 * model. The build runs on the backend asked for (--backend auto|cpu|gpu); its steps (the library's
 * progress phases) are timed too. Public API only. The first failure stops the program (exit 1).
 * Prints a markdown table and "bench_nightly: all verified". bench_nightly --help. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harmonia.h"
#include "util/mix.h"

/* Key of universe index i (a bijection: distinct indexes, distinct keys) and its values. */
static uint64_t key_of(uint64_t i) { return util_mix64(i + 0x5EED5EEDull); }
static uint64_t first_value(uint64_t i) { return util_mix64(i ^ 0x1111111111111111ull); }
static uint64_t second_value(uint64_t i) { return util_mix64(i ^ 0x2222222222222222ull); }

/* The model: state[i] for universe index i: 0 absent, 1 its first value, 2 its second value. */
enum { ABSENT = 0, FIRST = 1, SECOND = 2 };

static double now(void) { return omp_get_wtime(); }

static int fail(const char *what, harmonia_tree *tree)
{
    fprintf(stderr, "bench_nightly: FAILED: %s: %s\n", what, harmonia_last_error(tree));
    return 1;
}

/* The build's progress phases, timed from their first report to their last. */
typedef struct steps {
    int count;
    const char *name[8];
    double first[8], last[8];
} steps;

static void on_progress(void *arg, const char *phase, double fraction)
{
    (void)fraction;
    steps *s = arg;
    const double t = now();
    int i = 0;
    while (i < s->count && strcmp(s->name[i], phase) != 0)
        i++;
    if (i == s->count && s->count < 8) {
        s->name[i] = phase;
        s->first[i] = t;
        s->count++;
    }
    if (i < s->count)
        s->last[i] = t;
}

/* Lookups of count universe indexes (the queries) on the tree; every answer checked against the
 * model. Returns the seconds of the lookup call, or -1 on a failure (reported). */
static double lookup_and_verify(harmonia_tree *tree, const harmonia_query_config *qc, const uint8_t *state,
                                uint64_t universe, const uint64_t *indexes, uint64_t count, uint64_t *hits_out)
{
    uint64_t *queries = malloc(count * 8), *values = malloc(count * 8);
    uint8_t *found = malloc(count);
    if (!queries || !values || !found) {
        fprintf(stderr, "bench_nightly: FAILED: out of memory for %" PRIu64 " lookups\n", count);
        free(queries), free(values), free(found);
        return -1.0;
    }
#pragma omp parallel for schedule(static)
    for (uint64_t q = 0; q < count; q++)
        queries[q] = key_of(indexes[q]);
    double t0 = now();
    harmonia_status st = harmonia_lookup(tree, qc, queries, count, values, found);
    double seconds = now() - t0;
    uint64_t wrong = UINT64_MAX, hits = 0;
    if (st == HARMONIA_OK) {
#pragma omp parallel for schedule(static) reduction(min : wrong) reduction(+ : hits)
        for (uint64_t q = 0; q < count; q++) {
            const uint64_t i = indexes[q];
            const uint8_t s = i < universe ? state[i] : ABSENT;
            const uint64_t want = s == FIRST ? first_value(i) : s == SECOND ? second_value(i) : 0;
            hits += found[q];
            if (found[q] != (s != ABSENT) || values[q] != want)
                wrong = q < wrong ? q : wrong;
        }
    }
    free(queries), free(values), free(found);
    if (st != HARMONIA_OK) {
        fail("lookup", tree);
        return -1.0;
    }
    if (wrong != UINT64_MAX) {
        fprintf(stderr, "bench_nightly: FAILED: lookup %" PRIu64 " (universe index %" PRIu64 ") disagrees with the model\n",
                wrong, indexes[wrong]);
        return -1.0;
    }
    *hits_out = hits;
    return seconds;
}

/* count indexes: half drawn from the present range [0, universe), half beyond it (misses). */
static uint64_t *make_indexes(uint64_t count, uint64_t universe, uint64_t seed)
{
    uint64_t *ix = malloc(count * 8);
    if (!ix)
        return NULL;
#pragma omp parallel for schedule(static)
    for (uint64_t q = 0; q < count; q++) {
        const uint64_t r = util_mix64(q + seed);
        ix[q] = (q & 1) ? universe + r % universe : r % universe;
    }
    return ix;
}

static void usage(void)
{
    printf("usage: bench_nightly [--log2-keys K (28)] [--log2-ops M (24)] [--log2-queries Q (24)]\n"
           "                     [--backend auto|cpu|gpu] [--dir DIR (/tmp)] [--threads T] [--quick]\n"
           "The nightly flow: build 2^K unsorted 64-bit pairs, apply a 2^M-operation batch, save the index\n"
           "to DIR, load it, look up 2^Q keys; every step timed and verified. --quick: K=18, M=14, Q=16.\n");
}

int main(int argc, char **argv)
{
    uint32_t log2_keys = 28, log2_ops = 24, log2_queries = 24;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *backend_name = "auto";
    int threads = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--quick"))
            log2_keys = 18, log2_ops = 14, log2_queries = 16;
        else if (!strcmp(argv[a], "--log2-keys") && a + 1 < argc)
            log2_keys = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--log2-ops") && a + 1 < argc)
            log2_ops = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--log2-queries") && a + 1 < argc)
            log2_queries = (uint32_t)atoi(argv[++a]);
        else if (!strcmp(argv[a], "--backend") && a + 1 < argc)
            backend_name = argv[++a];
        else if (!strcmp(argv[a], "--dir") && a + 1 < argc)
            dir = argv[++a];
        else if (!strcmp(argv[a], "--threads") && a + 1 < argc)
            threads = atoi(argv[++a]);
        else {
            usage();
            return strcmp(argv[a], "--help") == 0 ? 0 : 2;
        }
    }
    harmonia_backend backend = !strcmp(backend_name, "cpu")   ? HARMONIA_BACKEND_CPU
                               : !strcmp(backend_name, "gpu") ? HARMONIA_BACKEND_GPU
                                                              : HARMONIA_BACKEND_AUTO;
    if (log2_keys < 8 || log2_keys > 32 || log2_ops >= log2_keys || log2_queries > 30) {
        usage();
        return 2;
    }
    const uint64_t n = 1ull << log2_keys, ops = 1ull << log2_ops, n_queries = 1ull << log2_queries;
    const uint64_t universe = n + ops; /* inserts take the indexes n .. n + inserts - 1 */
    harmonia_device_info device;
    const bool gpu = harmonia_device_probe(&device) == HARMONIA_OK;
    printf("# nightly flow: 2^%u pairs, 2^%u operations, 2^%u lookups; build backend %s; %s; %d threads\n\n",
           log2_keys, log2_ops, log2_queries, backend_name, gpu ? device.name : "no GPU",
           threads ? threads : omp_get_max_threads());

    /* the input: pairs (key_of(i), first_value(i)), i = 0 .. n-1, unsorted (the mix scatters them) */
    uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
    uint8_t *state = calloc(universe, 1);
    if (!keys || !values || !state)
        return fail("out of memory for the input", NULL);
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = key_of(i);
        values[i] = first_value(i);
        state[i] = FIRST;
    }
    uint64_t *sample = make_indexes(1u << 20 < n ? 1u << 20 : n, n, 1);
    const uint64_t sample_count = 1u << 20 < n ? 1u << 20 : n;
    const double flow_start = now();
    double seconds[6] = {0};
    uint64_t hits = 0;

    /* 1. build */
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.backend = backend;
    bc.threads = threads;
    steps build_steps;
    memset(&build_steps, 0, sizeof build_steps);
    bc.progress = on_progress;
    bc.progress_arg = &build_steps;
    harmonia_tree *tree = NULL;
    double t0 = now();
    if (harmonia_build(&bc, keys, values, n, &tree) != HARMONIA_OK)
        return fail("build", NULL);
    seconds[0] = now() - t0;
    free(keys);
    free(values);
    harmonia_tree_info info;
    harmonia_info(tree, &info);
    const bool built_on_gpu = info.device_resident;
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.threads = threads;
    if (harmonia_check(tree) != HARMONIA_OK)
        return fail("integrity check after the build", tree);
    if (lookup_and_verify(tree, &qc, state, universe, sample, sample_count, &hits) < 0)
        return 1;

    /* 2. the batch: op j on universe index (j * stride) mod n (a bijection: one op per key); every
     *    20th an insert of the new index n + j, every 20th (offset 10) a delete, the rest updates */
    uint8_t *kinds = malloc(ops);
    uint64_t *op_keys = malloc(ops * 8), *op_values = malloc(ops * 8);
    if (!kinds || !op_keys || !op_values)
        return fail("out of memory for the batch", tree);
    const uint64_t stride = 0x9E3779B97F4A7C15ull | 1;
#pragma omp parallel for schedule(static)
    for (uint64_t j = 0; j < ops; j++) {
        const uint64_t i = (j * stride) & (n - 1);
        if (j % 20 == 0) {
            kinds[j] = HARMONIA_OP_INSERT;
            op_keys[j] = key_of(n + j);
            op_values[j] = second_value(n + j);
            state[n + j] = SECOND;
        } else if (j % 20 == 10) {
            kinds[j] = HARMONIA_OP_DELETE;
            op_keys[j] = key_of(i);
            op_values[j] = 0;
            state[i] = ABSENT;
        } else {
            kinds[j] = HARMONIA_OP_UPDATE;
            op_keys[j] = key_of(i);
            op_values[j] = second_value(i);
            state[i] = SECOND;
        }
    }
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.threads = threads;
    harmonia_update_stats us;
    t0 = now();
    if (harmonia_update(tree, &uc, kinds, op_keys, op_values, ops, &us) != HARMONIA_OK)
        return fail("update batch", tree);
    seconds[1] = now() - t0;
    free(kinds);
    free(op_keys);
    free(op_values);
    if (harmonia_check(tree) != HARMONIA_OK)
        return fail("integrity check after the batch", tree);
    if (lookup_and_verify(tree, &qc, state, universe, sample, sample_count, &hits) < 0)
        return 1;
    /* the batch's own keys: a sample of them */
    for (uint64_t s = 0; s < sample_count; s++)
        sample[s] = (s & 1) ? n + (util_mix64(s) % ops) : ((util_mix64(s) % ops) * stride) & (n - 1);
    if (lookup_and_verify(tree, &qc, state, universe, sample, sample_count, &hits) < 0)
        return 1;

    /* 3. save */
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_nightly.%d.idx", dir, (int)getpid());
    t0 = now();
    if (harmonia_save(tree, path) != HARMONIA_OK)
        return fail("save", tree);
    seconds[2] = now() - t0;
    harmonia_info(tree, &info);
    const uint64_t tree_bytes = info.total_bytes, key_count = info.key_count;
    harmonia_free(tree);
    tree = NULL;

    /* 4. load (verified: checksums, the integrity checker) */
    harmonia_load_config lc;
    harmonia_load_config_init(&lc);
    t0 = now();
    if (harmonia_load(path, &lc, &tree) != HARMONIA_OK)
        return fail("load", NULL);
    seconds[3] = now() - t0;
    harmonia_info(tree, &info);
    if (info.key_count != key_count)
        return fail("the loaded tree's key count differs from the saved one's", tree);

    /* 5. the lookups: the device copy made first where there is a GPU (timed apart) */
    if (gpu) {
        t0 = now();
        if (harmonia_device_upload(tree) != HARMONIA_OK)
            return fail("upload", tree);
        seconds[4] = now() - t0;
    }
    uint64_t *queries = make_indexes(n_queries, universe, 7);
    if (!queries)
        return fail("out of memory for the lookups", tree);
    seconds[5] = lookup_and_verify(tree, &qc, state, universe, queries, n_queries, &hits);
    if (seconds[5] < 0)
        return 1;
    const double flow = now() - flow_start;
    harmonia_free(tree);
    unlink(path);
    free(queries);
    free(sample);
    free(state);

    printf("| step | seconds | rate | notes |\n| --- | ---: | ---: | --- |\n");
    printf("| build 2^%u pairs (%s) | %.3f | %.1f M pairs/s | steps:", log2_keys, built_on_gpu ? "GPU" : "CPU",
           seconds[0], n / seconds[0] / 1e6);
    for (int i = 0; i < build_steps.count; i++)
        printf(" %s %.3f s%s", build_steps.name[i], build_steps.last[i] - build_steps.first[i],
               i + 1 < build_steps.count ? "," : "");
    printf(" |\n");
    printf("| update 2^%u ops | %.3f | %.1f M ops/s | sort %.3f, apply %.3f, re-layout %.3f, upload %.3f s; %" PRIu64
           " inserted, %" PRIu64 " updated, %" PRIu64 " deleted%s |\n",
           log2_ops, seconds[1], ops / seconds[1] / 1e6, us.sort_seconds, us.apply_seconds, us.relayout_seconds,
           us.upload_seconds, us.inserted, us.updated, us.deleted, us.shape_changed ? ", shape changed" : "");
    printf("| save | %.3f | %.2f GB/s | %.2f GB |\n", seconds[2], tree_bytes / seconds[2] / 1e9, tree_bytes / 1e9);
    printf("| load (verified) | %.3f | %.2f GB/s | checksums and the integrity checker |\n", seconds[3],
           tree_bytes / seconds[3] / 1e9);
    if (gpu)
        printf("| device upload | %.3f | %.2f GB/s | |\n", seconds[4], tree_bytes / seconds[4] / 1e9);
    printf("| lookups 2^%u (%s) | %.3f | %.1f M/s | %" PRIu64 " hits, every answer checked |\n", log2_queries,
           gpu ? "GPU" : "CPU", seconds[5], n_queries / seconds[5] / 1e6, hits);
    printf("| **flow** | **%.3f** | | the steps above plus the checks between them |\n", flow);
    printf("\nbench_nightly: all verified\n");
    return 0;
}
