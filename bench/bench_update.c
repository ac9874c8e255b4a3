/* bench_update.c — the CPU update and build benchmark (issues 4 and 15): a tree of 2^K random 64-bit
 * keys built from unsorted pairs (its steps timed: the full rebuild the batches are compared with);
 * batches of the paper's mix (5 % inserts of new keys, 95 % updates of present keys), the first
 * into fresh arrays and the next ones reusing the previous layout's (and one with
 * free_previous_layout); insert-only, delete-only and mixed batches of several sizes; then a bulk
 * build of 2^B pairs from unsorted input, its steps timed. Every step is verified before the next:
 * the integrity checker and lookups of a sample of the batch's keys and of random keys against a
 * model (each key's presence and the batch that last wrote it); the first failure stops the
 * program (exit 1). Prints markdown tables. bench_update --help. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "harmonia.h"
#include "cpu_update/cpu_update.h"
#include "key_region/key_region.h"
#include "util/mix.h"

#define mix64 util_mix64

/* Key i of the universe: a bijection, so distinct indexes are distinct keys. */
static uint64_t key_of(uint64_t i) { return mix64(i + 0x1234567ull); }

/* The value the batch of version v writes to key i (version 1: the initial tree). */
static uint64_t value_of(uint64_t i, uint8_t v) { return mix64(i * 0x9E3779B97F4A7C15ull + v); }

static double now(void) { return omp_get_wtime(); }

static int fail(const char *what)
{
    fprintf(stderr, "bench_update: FAILED: %s\n", what);
    return 1;
}

/* The model: for each universe index, 0 = absent, else the version of the batch that last wrote it. */
typedef struct model {
    uint8_t *version;
    uint64_t size, cap, present;
    uint64_t rng;
} model;

static uint64_t next_random(model *m) { return mix64(m->rng++); }

/* A present index, at random. */
static uint64_t pick_present(model *m)
{
    for (;;) {
        uint64_t i = next_random(m) % m->size;
        if (m->version[i])
            return i;
    }
}

typedef enum { MIX_PAPER, MIX_INSERT, MIX_DELETE, MIX_MIXED } batch_mix;

/* A batch of `ops` operations of the mix, applied to the model as generated (so that every
 * operation is valid under the strict policies in batch order). */
static int make_batch(model *m, batch_mix mix, uint64_t ops, uint8_t version, uint8_t *kinds, uint64_t *keys,
                      uint64_t *values)
{
    for (uint64_t k = 0; k < ops; k++) {
        uint64_t r = next_random(m) % 100, i;
        int kind;
        switch (mix) {
        case MIX_PAPER: kind = r < 5 ? HARMONIA_OP_INSERT : HARMONIA_OP_UPDATE; break;
        case MIX_INSERT: kind = HARMONIA_OP_INSERT; break;
        case MIX_DELETE: kind = HARMONIA_OP_DELETE; break;
        default: kind = r < 25 ? HARMONIA_OP_INSERT : r < 50 ? HARMONIA_OP_DELETE : HARMONIA_OP_UPDATE; break;
        }
        if ((kind != HARMONIA_OP_INSERT && m->present == 0) || (kind == HARMONIA_OP_INSERT && m->size == m->cap))
            return fail("the model ran out of keys (use fewer operations)");
        if (kind == HARMONIA_OP_INSERT) {
            i = m->size++;
            m->version[i] = version;
            m->present++;
        } else {
            i = pick_present(m);
            if (kind == HARMONIA_OP_DELETE) {
                m->version[i] = 0;
                m->present--;
            } else {
                m->version[i] = version;
            }
        }
        kinds[k] = (uint8_t)kind;
        keys[k] = key_of(i);
        values[k] = value_of(i, version);
    }
    return 0;
}

/* The checker, then lookups of `sample` random universe indexes (present or not) against the model. */
static int verify(harmonia_tree *t, model *m, uint64_t sample, double *seconds)
{
    double t0 = now();
    if (harmonia_check(t) != HARMONIA_OK) {
        fprintf(stderr, "bench_update: check: %s\n", harmonia_last_error(t));
        return fail("the integrity checker");
    }
    harmonia_tree_info info;
    harmonia_info(t, &info);
    if (info.key_count != m->present) {
        fprintf(stderr, "bench_update: the tree holds %" PRIu64 " keys, the model %" PRIu64 "\n", info.key_count,
                m->present);
        return fail("key count");
    }
    uint64_t *index = malloc(sample * 8), *q = malloc(sample * 8), *v = malloc(sample * 8);
    uint8_t *found = malloc(sample);
    for (uint64_t s = 0; s < sample; s++) {
        index[s] = next_random(m) % m->size;
        q[s] = key_of(index[s]);
    }
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_CPU;
    int bad = harmonia_lookup(t, &qc, q, sample, v, found) != HARMONIA_OK;
    uint64_t wrong = 0;
    for (uint64_t s = 0; s < sample && !bad; s++) {
        uint8_t ver = m->version[index[s]];
        if (found[s] != (ver != 0) || (found[s] && v[s] != value_of(index[s], ver)))
            wrong++;
    }
    free(index);
    free(q);
    free(v);
    free(found);
    if (bad || wrong) {
        fprintf(stderr, "bench_update: %" PRIu64 " of %" PRIu64 " sampled keys disagree with the model\n", wrong, sample);
        return fail("lookups against the model");
    }
    *seconds = now() - t0;
    return 0;
}

/* Copy bandwidth of this machine with every thread (memcpy of `bytes`, best of 3): the yardstick. */
static double copy_bandwidth(size_t bytes)
{
    char *a = kr_malloc(bytes), *b = kr_malloc(bytes);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    double best = 1e30;
    for (int r = 0; r < 4; r++) {
        double t0 = now();
#pragma omp parallel
        {
            size_t n = (size_t)omp_get_num_threads(), i = (size_t)omp_get_thread_num();
            size_t lo = bytes / n * i, hi = i + 1 == n ? bytes : bytes / n * (i + 1);
            if (r == 0)
                memset(a + lo, (int)i, hi - lo); /* first touch */
            else
                memcpy(b + lo, a + lo, hi - lo);
        }
        double t = now() - t0;
        if (r > 0 && t < best)
            best = t;
        if (r == 0) { /* and b's pages */
#pragma omp parallel for
            for (size_t k = 0; k < bytes; k += 4096)
                b[k] = 0;
        }
    }
    free(a);
    free(b);
    return 2.0 * (double)bytes / best / 1e9; /* bytes read + written */
}

/* First touch of `bytes` of fresh memory, three ways, twice each (seconds into *out[6]): 4 KiB pages
 * written by every thread; pages advised huge (as kr_malloc advises arrays of 8 MiB and more)
 * written by every thread; MAP_POPULATE (the kernel fills them in the calling thread). Each mapping
 * is released before the next. Returns the seconds of rewriting the last one's pages (for scale). */
static double first_touch(size_t bytes, double *out)
{
    double rewrite = 0;
    for (int k = 0; k < 6; k++) {
        const int way = k % 3;
        double t0 = now();
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | (way == 2 ? MAP_POPULATE : 0), -1, 0);
        if (p == MAP_FAILED) {
            out[k] = 0;
            continue;
        }
#ifdef MADV_HUGEPAGE
        if (way == 1)
            madvise(p, bytes, MADV_HUGEPAGE);
#endif
        if (way < 2) {
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < bytes; i += 4096)
                p[i] = 1;
        }
        out[k] = now() - t0;
        if (k == 5) {
            double r0 = now();
            memset(p, 2, bytes);
            rewrite = now() - r0;
        }
        munmap(p, bytes);
    }
    return rewrite;
}

static void usage(void)
{
    printf("usage: bench_update [--keys-log2 K] [--paper-ops N] [--paper-batches B] [--sizes a,b,c]\n"
           "                    [--fill F] [--build-log2 B] [--sample S] [--bandwidth-mib M] [--no-streaming]\n"
           "                    [--quick]\n"
           "  --keys-log2 K     tree of 2^K 64-bit keys (default 26)\n"
           "  --paper-ops N     operations per paper-mix batch (default 4194304)\n"
           "  --paper-batches B paper-mix batches (default 3: the first writes fresh arrays)\n"
           "  --sizes a,b,c     log2 sizes of the insert-only, delete-only and mixed batches (default 16,20,24;\n"
           "                    0 = none)\n"
           "  --fill F          leaf fill of the tree (default 1.0, full leaves)\n"
           "  --build-log2 B    the bulk build from unsorted pairs: 2^B pairs (default 28; 0 = skip)\n"
           "  --sample S        lookups checked against the model after each step (default 262144)\n"
           "  --bandwidth-mib M the machine's copy bandwidth measured on M MiB first (default 1024; 0 = skip)\n"
           "  --first-touch-mib M  first, the cost of first touch of M MiB of fresh memory: 4 KiB pages,\n"
           "                    huge pages (advised), MAP_POPULATE (default 0 = skip)\n"
           "  --no-streaming    the updater writes the new leaf level with plain copies (to compare)\n"
           "  --quick           --keys-log2 20 --paper-ops 65536 --sizes 10,14 --build-log2 22\n"
           "Threads: OMP_NUM_THREADS. Exit 1 at the first failure.\n");
}

/* The bulk build of 2^bits pairs from unsorted input, through the key_region component (for its
 * steps), verified by the checker and lookups of a sample. */
static int bench_build(uint32_t log2_pairs, uint64_t sample)
{
    const uint64_t n = 1ull << log2_pairs;
    uint64_t *keys = kr_malloc(n * 8), *values = kr_malloc(n * 8);
    if (!keys || !values)
        return fail("out of memory for the build's input");
    double g0 = now();
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        keys[i] = key_of(i);
        values[i] = i * 7 + 3;
    }
    double generate = now() - g0;
    printf("\n## Bulk build of 2^%u 64-bit pairs from unsorted input (F = 16, L = 16, fill 1.0)\n\n", log2_pairs);
    printf("Input generated in %.3f s (%.2f GB of keys and values).\n\n", generate, n * 16 / 1e9);
    printf("| run | partition s | buckets + leaves s | levels s | total s | M pairs/s | check s |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int run = 0; run < 2; run++) {
        kr_build_params p;
        memset(&p, 0, sizeof p);
        p.key_bits = 64;
        p.fanout = 16;
        p.leaf_size = 16;
        p.leaf_fill = 1.0;
        p.duplicates = HARMONIA_DUPLICATES_REJECT;
        double steps[3] = {0, 0, 0};
        p.step_seconds = steps;
        kr_tree t;
        memset(&t, 0, sizeof t);
        kr_error err = {{0}};
        double t0 = now();
        harmonia_status st = kr_build(&t, &p, keys, values, n, &err);
        double total = now() - t0;
        if (st != HARMONIA_OK) {
            fprintf(stderr, "bench_update: build: %s\n", err.message);
            return fail("the bulk build");
        }
        double c0 = now();
        if (kr_check_tree(&t, &err) != HARMONIA_OK) {
            fprintf(stderr, "bench_update: build check: %s\n", err.message);
            return fail("the built tree's integrity");
        }
        uint64_t *q = malloc(sample * 8), *idx = malloc(sample * 8), *v = malloc(sample * 8);
        uint8_t *f = malloc(sample);
        for (uint64_t s = 0; s < sample; s++) {
            idx[s] = mix64(s * 31 + (uint64_t)run) % (n + n / 8); /* an eighth absent */
            q[s] = key_of(idx[s]);
        }
        kr_lookup_batch(&t, q, sample, v, f, 0);
        uint64_t wrong = 0;
        for (uint64_t s = 0; s < sample; s++)
            if (f[s] != (idx[s] < n) || (f[s] && v[s] != idx[s] * 7 + 3))
                wrong++;
        free(q);
        free(idx);
        free(v);
        free(f);
        if (wrong || t.n_keys != n) {
            fprintf(stderr, "bench_update: %" PRIu64 " of %" PRIu64 " lookups wrong in the built tree\n", wrong, sample);
            return fail("lookups in the built tree");
        }
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %.0f | %.2f |\n", run == 0 ? "first" : "second", steps[0],
               steps[1], steps[2], total, n / total / 1e6, now() - c0);
        fflush(stdout);
        kr_tree_free_arrays(&t);
    }
    free(keys);
    free(values);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t keys_log2 = 26, build_log2 = 28, paper_batches = 3, bandwidth_mib = 1024, first_touch_mib = 0;
    uint64_t paper_ops = 4194304, sample = 262144;
    uint32_t sizes[8] = {16, 20, 24};
    int n_sizes = 3;
    double fill = 1.0;
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage();
            return 0;
        } else if (!strcmp(o, "--quick")) {
            keys_log2 = 20, paper_ops = 65536, build_log2 = 22, n_sizes = 2, sizes[0] = 10, sizes[1] = 14;
            sample = 65536;
        } else if (v && !strcmp(o, "--keys-log2")) {
            keys_log2 = (uint32_t)atoi(v), a++;
        } else if (v && !strcmp(o, "--paper-ops")) {
            paper_ops = strtoull(v, NULL, 0), a++;
        } else if (v && !strcmp(o, "--paper-batches")) {
            paper_batches = (uint32_t)atoi(v), a++;
        } else if (v && !strcmp(o, "--fill")) {
            fill = atof(v), a++;
        } else if (v && !strcmp(o, "--build-log2")) {
            build_log2 = (uint32_t)atoi(v), a++;
        } else if (!strcmp(o, "--no-streaming")) {
            upd_tuning_streaming = false;
        } else if (v && !strcmp(o, "--first-touch-mib")) {
            first_touch_mib = (uint32_t)atoi(v), a++;
        } else if (v && !strcmp(o, "--bandwidth-mib")) {
            bandwidth_mib = (uint32_t)atoi(v), a++;
        } else if (v && !strcmp(o, "--sample")) {
            sample = strtoull(v, NULL, 0), a++;
        } else if (v && !strcmp(o, "--sizes")) {
            n_sizes = 0;
            for (char *s = argv[++a]; *s && n_sizes < 8; s++) {
                sizes[n_sizes] = (uint32_t)strtoul(s, &s, 10);
                n_sizes += sizes[n_sizes] > 0; /* 0: none */
                if (!*s)
                    break;
            }
        } else {
            usage();
            return 2;
        }
    }
    const uint64_t n = 1ull << keys_log2;
    const int threads = omp_get_max_threads();
    if (first_touch_mib) { /* before anything else: the process's first fresh memory */
        double ft[6], bytes = (double)((size_t)first_touch_mib << 20);
        double rewrite = first_touch((size_t)first_touch_mib << 20, ft);
        printf("## First touch of %u MiB of fresh memory, %d threads (GB/s; two rounds)\n\n"
               "| 4 KiB pages, every thread | huge pages advised, every thread | MAP_POPULATE, one thread |"
               " rewrite of touched pages |\n| --- | --- | --- | --- |\n"
               "| %.2f, %.2f | %.2f, %.2f | %.2f, %.2f | %.1f |\n\n",
               first_touch_mib, threads, bytes / ft[0] / 1e9, bytes / ft[3] / 1e9, bytes / ft[1] / 1e9,
               bytes / ft[4] / 1e9, bytes / ft[2] / 1e9, bytes / ft[5] / 1e9, bytes / rewrite / 1e9);
    }
    printf("# bench_update: %d threads, new leaf level %s", threads,
           upd_tuning_streaming ? "streamed (non-temporal stores)" : "copied (plain stores)");
    if (bandwidth_mib)
        printf("; copy bandwidth %.1f GB/s (memcpy of %u MiB by every thread, bytes read + written)",
               copy_bandwidth((size_t)bandwidth_mib << 20), bandwidth_mib);
    printf("\n");
    /* the model's universe: the tree's keys, then every insert the batches make */
    uint64_t inserts = (uint64_t)(paper_batches + 1) * (paper_ops / 16 + 1024) + 1024;
    for (int s = 0; s < n_sizes; s++)
        inserts += (1ull << sizes[s]) + (1ull << sizes[s]) / 2;
    model m = {calloc(n + inserts, 1), n, n + inserts, n, 1};
    uint64_t *keys = kr_malloc(n * 8), *values = kr_malloc(n * 8);
    if (!m.version || !keys || !values)
        return fail("out of memory for the model");
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        m.version[i] = 1;
        keys[i] = key_of(i);
        values[i] = value_of(i, 1);
    }
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.leaf_fill = fill;
    harmonia_tree *tree = NULL;
    double t0 = now();
    if (harmonia_build(&bc, keys, values, n, &tree) != HARMONIA_OK) {
        fprintf(stderr, "bench_update: %s\n", harmonia_last_error(NULL));
        return fail("the tree's build");
    }
    double rebuild = now() - t0;
    free(keys);
    free(values);
    int gpu = harmonia_device_upload(tree) == HARMONIA_OK;
    harmonia_tree_info info;
    harmonia_info(tree, &info);
    double check_seconds;
    if (verify(tree, &m, sample, &check_seconds))
        return 1;
    printf("# tree: 2^%u 64-bit keys (F = %u, L = %u, leaf fill %.3f, %" PRIu64 " leaves, %.2f GB); full build from "
           "unsorted pairs %.3f s; device copy: %s\n\n",
           keys_log2, info.fanout, info.leaf_size, fill, info.leaf_count, info.total_bytes / 1e9, rebuild,
           gpu ? "yes" : "no");
    printf("Times in seconds. sort: the batch sorted by key; apply: the units, the plan, and in place the merges; "
           "re-layout: the new leaf level (merges and block copies) and the internal levels; upload: the device "
           "sync. Every batch verified (checker, %" PRIu64 " lookups against the model; the check column).\n\n",
           sample);
    printf("| batch | ops | sort | apply | re-layout | upload | total | M ops/s | vs rebuild | touched | split | path | check |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    fflush(stdout);
    uint8_t version = 1;
    struct step {
        batch_mix mix;
        uint64_t ops;
        const char *name;
        bool free_previous;
    } plan[32];
    int steps = 0;
    for (uint32_t b = 0; b < paper_batches && steps < 30; b++)
        plan[steps++] = (struct step){MIX_PAPER, paper_ops, b == 0 ? "paper mix (fresh arrays)" : "paper mix (reused arrays)", false};
    if (paper_batches > 0 && steps < 30)
        plan[steps++] = (struct step){MIX_PAPER, paper_ops, "paper mix (free_previous_layout)", true};
    static const char *names[] = {"", "insert-only", "delete-only", "mixed 25/25/50"};
    for (int s = 0; s < n_sizes; s++)
        for (int mix = MIX_INSERT; mix <= MIX_MIXED && steps < 32; mix++)
            plan[steps++] = (struct step){(batch_mix)mix, 1ull << sizes[s], names[mix], false};
    for (int s = 0; s < steps; s++) {
        const uint64_t ops = plan[s].ops;
        uint8_t *kinds = malloc(ops);
        uint64_t *op_keys = malloc(ops * 8), *op_values = malloc(ops * 8);
        if (!kinds || !op_keys || !op_values)
            return fail("out of memory for a batch");
        if (make_batch(&m, plan[s].mix, ops, ++version, kinds, op_keys, op_values))
            return 1;
        harmonia_update_config uc;
        harmonia_update_config_init(&uc);
        uc.free_previous_layout = plan[s].free_previous;
        harmonia_update_stats st;
        double b0 = now();
        harmonia_status status = harmonia_update(tree, &uc, kinds, op_keys, op_values, ops, &st);
        double total = now() - b0;
        if (status != HARMONIA_OK) {
            fprintf(stderr, "bench_update: %s\n", harmonia_last_error(tree));
            return fail("an update batch");
        }
        if (verify(tree, &m, sample, &check_seconds))
            return 1;
        printf("| %s | %" PRIu64 " | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.3f | %" PRIu64 " | %" PRIu64
               " | %s | %.2f |\n",
               plan[s].name, ops, st.sort_seconds, st.apply_seconds, st.relayout_seconds, st.upload_seconds, total,
               ops / total / 1e6, total / rebuild, st.leaves_touched, st.leaves_split,
               st.shape_changed ? "re-layout" : "in place", check_seconds);
        fflush(stdout);
        free(kinds);
        free(op_keys);
        free(op_values);
    }
    harmonia_free(tree);
    free(m.version);
    if (build_log2 > 0 && bench_build(build_log2, sample))
        return 1;
    printf("\nbench_update: all verified\n");
    return 0;
}
