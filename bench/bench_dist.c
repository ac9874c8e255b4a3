/* bench_dist.c — the distributed index measured (run under mpirun, one rank per GPU or several ranks
 * sharing one): a build from unsorted pairs, point lookups (uniform and Zipf-skewed), range counts
 * and an update batch, each timed step by step (route, exchange, local engine, return; largest over
 * the ranks) with the bytes moved between ranks, and every kind of result checked on a sample
 * against the model the data comes from. Uses include/harmonia_dist.h only. bench_dist --help. */
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harmonia_dist.h"

/* ---- the model ----------------------------------------------------------------------------------
 * Pair j (0 <= j < N = ranks * pairs_per_rank) is (key(j), j) with key a bijection of the key width
 * (so keys are distinct and spread over the whole domain, in no order); rank r holds pairs
 * r * n .. (r+1) * n - 1. A hit query is key(j) for a drawn j, its answer j. Keys of ids >= N are
 * absent (the update batch inserts some of them). */

static uint32_t key_bits = 64;
static uint64_t seed = 1;

static inline uint64_t mix64(uint64_t x) /* a bijection of 64-bit words (splitmix64's finalizer) */
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline uint32_t mix32(uint32_t x) /* a bijection of 32-bit words */
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    return x ^ (x >> 16);
}

static inline uint64_t key_of(uint64_t j)
{
    return key_bits == 64 ? mix64(j ^ seed) : mix32((uint32_t)j ^ (uint32_t)seed);
}

static inline uint64_t get(const void *a, uint64_t i)
{
    return key_bits == 32 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

static inline void set(void *a, uint64_t i, uint64_t v)
{
    if (key_bits == 32)
        ((uint32_t *)a)[i] = (uint32_t)v;
    else
        ((uint64_t *)a)[i] = v;
}

/* A uniform double in [0, 1) from a counter. */
static inline double unit(uint64_t x)
{
    return (double)(mix64(x) >> 11) * (1.0 / 9007199254740992.0);
}

/* The id of query i of rank r: uniform over [0, N), or Zipf(s) by rank (approximate inverse CDF of
 * 1/k^s over 1..N, then scattered: popular ids are spread over the key domain and the shards). */
static inline uint64_t query_id(int r, uint64_t i, uint64_t N, double s, int kind)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + ((uint64_t)r << 40) + i + ((uint64_t)kind << 62);
    if (s <= 0.0)
        return (uint64_t)(unit(x) * (double)N) % N;
    double u = unit(x);
    double k;
    if (fabs(s - 1.0) < 1e-9)
        k = exp(u * log((double)N));
    else
        k = pow(1.0 + u * (pow((double)N, 1.0 - s) - 1.0), 1.0 / (1.0 - s));
    uint64_t rank = (uint64_t)k;
    if (rank < 1)
        rank = 1;
    if (rank > N)
        rank = N;
    return (mix64(rank) ^ seed) % N; /* rank 1 -> some id: popular ids anywhere */
}

/* ---- options ---------------------------------------------------------------------------------- */

typedef struct options {
    uint64_t pairs, lookups, ranges, range_length, update_ops, samples;
    int runs, warmup, threads, backend;
    double skew;
    const char *csv, *label, *save;
} options;

static int rank_id, ranks;

static void usage(void)
{
    if (rank_id == 0)
        printf("Usage: mpirun -np N bench_dist [options]\n"
               "  --pairs-per-rank N     pairs each rank builds from (default 2^22)\n"
               "  --lookups-per-rank N   point lookups per rank and kind (default 2^22)\n"
               "  --ranges-per-rank N    range counts per rank (default 2^20)\n"
               "  --range-length L       keys per range, expected (default 64)\n"
               "  --update-ops-per-rank N operations each rank adds to the batch (default 2^20)\n"
               "  --skew S               Zipf exponent of the skewed lookups (default 0.99)\n"
               "  --runs R               timed runs of each query step, the median kept (default 3)\n"
               "  --warmup W             untimed runs before them (default 1: the GPU upload)\n"
               "  --samples S            results checked per rank and step (default 65536)\n"
               "  --bits 32|64           key width (default 64)\n"
               "  --backend auto|cpu|gpu the shards' engine (default auto: the GPU when usable)\n"
               "  --threads T            OpenMP threads per rank (default: cores / ranks on the node)\n"
               "  --seed S               data seed (default 1)\n"
               "  --label TEXT           a label for the CSV lines\n"
               "  --csv FILE             append one line per step to FILE (rank 0)\n"
               "  --save MANIFEST        also save the built index there (timed)\n"
               "Numbers may be written 2^K.\n");
}

static uint64_t number(const char *text)
{
    if (text[0] == '2' && text[1] == '^')
        return (uint64_t)1 << strtoul(text + 2, NULL, 10);
    return strtoull(text, NULL, 0);
}

static int parse(int argc, char **argv, options *o)
{
    o->pairs = 1u << 22;
    o->lookups = 1u << 22;
    o->ranges = 1u << 20;
    o->range_length = 64;
    o->update_ops = 1u << 20;
    o->samples = 65536;
    o->runs = 3;
    o->warmup = 1;
    o->threads = 0;
    o->backend = 0;
    o->skew = 0.99;
    o->csv = o->label = o->save = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v != NULL && ++i)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 1;
        } else if (OPT("--pairs-per-rank")) o->pairs = number(v);
        else if (OPT("--lookups-per-rank")) o->lookups = number(v);
        else if (OPT("--ranges-per-rank")) o->ranges = number(v);
        else if (OPT("--range-length")) o->range_length = number(v);
        else if (OPT("--update-ops-per-rank")) o->update_ops = number(v);
        else if (OPT("--skew")) o->skew = atof(v);
        else if (OPT("--runs")) o->runs = atoi(v);
        else if (OPT("--warmup")) o->warmup = atoi(v);
        else if (OPT("--samples")) o->samples = number(v);
        else if (OPT("--bits")) key_bits = (uint32_t)atoi(v);
        else if (OPT("--backend")) o->backend = strcmp(v, "cpu") == 0 ? 1 : strcmp(v, "gpu") == 0 ? 2 : 0;
        else if (OPT("--threads")) o->threads = atoi(v);
        else if (OPT("--seed")) seed = number(v);
        else if (OPT("--label")) o->label = v;
        else if (OPT("--csv")) o->csv = v;
        else if (OPT("--save")) o->save = v;
        else {
            if (rank_id == 0)
                fprintf(stderr, "bench_dist: unknown or incomplete option '%s'\n", a);
            usage();
            return 2;
        }
#undef OPT
    }
    if ((key_bits != 32 && key_bits != 64) || o->runs < 1 || o->pairs == 0) {
        if (rank_id == 0)
            fprintf(stderr, "bench_dist: bad --bits, --runs or --pairs-per-rank\n");
        return 2;
    }
    return 0;
}

/* ---- reporting -------------------------------------------------------------------------------- */

static double max_over_ranks(double x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return x;
}

static uint64_t sum_over_ranks(uint64_t x)
{
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return x;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct step_result {
    double seconds, route, exchange, local, back; /* median run; phases largest over the ranks */
    uint64_t queries, bytes;                      /* all ranks */
    uint64_t checked, wrong;
} step_result;

static FILE *csv_file;
static const options *opts;
static char device_name[256] = "none";

static void report(const char *step, const step_result *r)
{
    if (rank_id != 0)
        return;
    double rate = r->seconds > 0 ? (double)r->queries / r->seconds : 0.0;
    printf("%-18s %11" PRIu64 " %9.4f s %10.1f M/s | route %.4f exch %.4f local %.4f return %.4f | %6.2f B/q | "
           "checked %" PRIu64 ", wrong %" PRIu64 "\n",
           step, r->queries, r->seconds, rate / 1e6, r->route, r->exchange, r->local, r->back,
           r->queries ? (double)r->bytes / (double)r->queries : 0.0, r->checked, r->wrong);
    if (csv_file != NULL) {
        fprintf(csv_file, "%s,%d,%s,%u,%" PRIu64 ",%s,%" PRIu64 ",%.6f,%.1f,%.6f,%.6f,%.6f,%.6f,%.3f,%" PRIu64
                ",%" PRIu64 "\n", opts->label ? opts->label : "", ranks, device_name, key_bits, opts->pairs,
                step, r->queries, r->seconds, rate, r->route, r->exchange, r->local, r->back,
                r->queries ? (double)r->bytes / (double)r->queries : 0.0, r->checked, r->wrong);
        fflush(csv_file);
    }
}

/* Times `runs` runs of a query step (every rank together, barrier before), the median run kept. */
#define TIMED_RUNS(result, call, stats)                                                           \
    do {                                                                                          \
        double times_[64], route_[64], exch_[64], local_[64], back_[64];                          \
        int runs_ = opts->runs < 64 ? opts->runs : 64;                                            \
        for (int w_ = 0; w_ < opts->warmup; w_++) { /* untimed: uploads, first-touch */          \
            MPI_Barrier(MPI_COMM_WORLD);                                                          \
            if ((call) != HARMONIA_OK)                                                            \
                MPI_Abort(MPI_COMM_WORLD, 1);                                                     \
        }                                                                                         \
        for (int k_ = 0; k_ < runs_; k_++) {                                                      \
            MPI_Barrier(MPI_COMM_WORLD);                                                          \
            double t0_ = MPI_Wtime();                                                             \
            harmonia_status s_ = (call);                                                          \
            double t_ = MPI_Wtime() - t0_;                                                        \
            if (s_ != HARMONIA_OK) {                                                              \
                if (rank_id == 0)                                                                 \
                    fprintf(stderr, "bench_dist: %s\n", harmonia_dist_last_error(dist));          \
                MPI_Abort(MPI_COMM_WORLD, 1);                                                     \
            }                                                                                     \
            times_[k_] = max_over_ranks(t_);                                                      \
            route_[k_] = max_over_ranks((stats).route_seconds);                                   \
            exch_[k_] = max_over_ranks((stats).exchange_seconds);                                 \
            local_[k_] = max_over_ranks((stats).local_seconds);                                   \
            back_[k_] = max_over_ranks((stats).return_seconds);                                   \
        }                                                                                         \
        int mid_ = 0; /* the run of the median time */                                            \
        double sorted_[64];                                                                       \
        memcpy(sorted_, times_, sizeof(double) * (size_t)runs_);                                  \
        qsort(sorted_, (size_t)runs_, sizeof(double), compare_double);                            \
        for (int k_ = 0; k_ < runs_; k_++)                                                        \
            if (times_[k_] == sorted_[runs_ / 2])                                                 \
                mid_ = k_;                                                                        \
        (result).seconds = times_[mid_];                                                          \
        (result).route = route_[mid_];                                                            \
        (result).exchange = exch_[mid_];                                                          \
        (result).local = local_[mid_];                                                            \
        (result).back = back_[mid_];                                                              \
        (result).bytes = sum_over_ranks((stats).bytes_sent);                                      \
    } while (0)

/* ---- main ------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_id);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    options o;
    int status = parse(argc, argv, &o);
    if (status != 0) {
        MPI_Finalize();
        return status == 1 ? 0 : status;
    }
    opts = &o;
    const size_t width = key_bits / 8;
    const uint64_t n = o.pairs, N = (uint64_t)ranks * n;
    if (key_bits == 32 && N + (uint64_t)ranks * o.update_ops >= ((uint64_t)1 << 32)) {
        if (rank_id == 0)
            fprintf(stderr, "bench_dist: too many pairs for 32-bit keys\n");
        MPI_Finalize();
        return 2;
    }
    if (rank_id == 0 && o.csv != NULL) {
        csv_file = fopen(o.csv, "a");
        if (csv_file != NULL && ftell(csv_file) == 0)
            fprintf(csv_file, "label,ranks,device,key_bits,pairs_per_rank,step,queries,seconds,per_second,"
                              "route_s,exchange_s,local_s,return_s,bytes_per_query,checked,wrong\n");
    }

    /* the pairs of this rank, unsorted */
    void *keys = malloc(n * width), *values = malloc(n * width);
    if (keys == NULL || values == NULL) {
        fprintf(stderr, "bench_dist: rank %d: out of memory for %" PRIu64 " pairs\n", rank_id, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++) {
        uint64_t j = (uint64_t)rank_id * n + i;
        set(keys, i, key_of(j));
        set(values, i, j);
    }

    /* the build */
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    config.build.key_bits = key_bits;
    config.build.threads = o.threads;
    harmonia_dist *dist = NULL;
    harmonia_dist_build_stats bs;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    harmonia_status hs = harmonia_dist_build(MPI_COMM_WORLD, &config, keys, values, n, &dist, &bs);
    double build_seconds = max_over_ranks(MPI_Wtime() - t0);
    if (hs != HARMONIA_OK) {
        if (rank_id == 0)
            fprintf(stderr, "bench_dist: build: %s\n", harmonia_dist_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(keys);
    free(values);
    harmonia_dist_info info;
    harmonia_dist_get_info(dist, &info);
    int threads = o.threads > 0 ? o.threads : omp_get_num_procs() / (info.local_ranks > 0 ? info.local_ranks : 1);
    if (threads < 1)
        threads = 1;
    harmonia_device_info dev;
    if (harmonia_device_probe(&dev) == HARMONIA_OK && info.device >= 0)
        snprintf(device_name, sizeof device_name, "%s", dev.name);
    for (char *c = device_name; *c; c++)
        if (*c == ',')
            *c = ' ';
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    int mpi_version_length;
    MPI_Get_library_version(mpi_version, &mpi_version_length);
    char *nl = strchr(mpi_version, '\n');
    if (nl != NULL)
        *nl = '\0';
    /* every rank takes part in the same reductions, in the same order */
    const double b_sample = max_over_ranks(bs.sample_seconds), b_route = max_over_ranks(bs.route_seconds),
                 b_exchange = max_over_ranks(bs.exchange_seconds), b_local = max_over_ranks(bs.local_seconds),
                 b_rebalance = max_over_ranks(bs.rebalance_seconds);
    const uint64_t b_bytes = sum_over_ranks(bs.bytes_sent);
    int any_rebalanced = bs.rebalanced;
    MPI_Allreduce(MPI_IN_PLACE, &any_rebalanced, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank_id == 0) {
        printf("bench_dist: %d ranks (%d on rank 0's node), GPU of rank 0: %s (device %d), %u-bit keys, %"
               PRIu64 " pairs per rank (%" PRIu64 " in all), %d threads per rank\n", ranks, info.local_ranks,
               device_name, info.device, key_bits, n, N, threads);
        printf("MPI: %s; exchange path: host memory (MPI_Alltoallv); the shards' queries: host arrays "
               "through the engine's staging\n", mpi_version);
        printf("%-18s %11s %11s %12s | %s\n", "step", "queries", "time", "rate",
               "phases, largest over the ranks (s) | bytes between ranks per query | verified sample");
        printf("build              %11" PRIu64 " %9.4f s %10.1f M/s | sample %.4f route %.4f exch %.4f local %.4f "
               "rebalance %.4f | %.2f B/pair | shards %" PRIu64 "..%" PRIu64 " keys%s\n", N,
               build_seconds, (double)N / build_seconds / 1e6, b_sample, b_route, b_exchange, b_local,
               b_rebalance, (double)b_bytes / (double)N, info.smallest_shard, info.largest_shard,
               any_rebalanced ? " (rebalanced)" : "");
    }
    if (csv_file != NULL) {
        fprintf(csv_file, "%s,%d,%s,%u,%" PRIu64 ",build,%" PRIu64 ",%.6f,%.1f,,,,,%.3f,%" PRIu64 ",0\n",
                o.label ? o.label : "", ranks, device_name, key_bits, n, N, build_seconds,
                (double)N / build_seconds, 0.0, info.keys);
        fflush(csv_file);
    }
    uint64_t wrong_keys = info.keys != N;
    if (wrong_keys && rank_id == 0)
        printf("WRONG: the index holds %" PRIu64 " keys, not %" PRIu64 "\n", info.keys, N);
    if (harmonia_dist_check(dist) != HARMONIA_OK) {
        if (rank_id == 0)
            printf("WRONG: check: %s\n", harmonia_dist_last_error(dist));
        wrong_keys++;
    }
    if (o.save != NULL) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s0 = MPI_Wtime();
        hs = harmonia_dist_save(dist, o.save);
        double save_seconds = max_over_ranks(MPI_Wtime() - s0);
        if (rank_id == 0)
            printf("save               %9.4f s (%s)\n", save_seconds,
                   hs == HARMONIA_OK ? o.save : harmonia_dist_last_error(dist));
    }

    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = o.backend == 1 ? HARMONIA_BACKEND_CPU : o.backend == 2 ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_AUTO;
    qc.threads = threads;
    uint64_t total_wrong = wrong_keys;

    /* point lookups, uniform then skewed */
    const uint64_t m = o.lookups;
    void *queries = malloc(m * width + 8), *found_values = malloc(m * width + 8);
    uint8_t *found = malloc(m + 1);
    if (queries == NULL || found_values == NULL || found == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const uint64_t sample_step = o.samples > 0 && m > o.samples ? m / o.samples : 1;
    for (int kind = 0; kind < 2; kind++) {
        const double s = kind == 0 ? 0.0 : o.skew;
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < m; i++)
            set(queries, i, key_of(query_id(rank_id, i, N, s, kind)));
        step_result r;
        memset(&r, 0, sizeof r);
        harmonia_dist_query_stats st;
        TIMED_RUNS(r, harmonia_dist_lookup(dist, &qc, queries, m, found_values, found, &st), st);
        r.queries = sum_over_ranks(m);
        uint64_t checked = 0, wrong = 0;
        for (uint64_t i = 0; o.samples > 0 && i < m; i += sample_step) {
            uint64_t j = query_id(rank_id, i, N, s, kind);
            checked++;
            wrong += !found[i] || get(found_values, i) != (key_bits == 32 ? (uint32_t)j : j);
        }
        r.checked = sum_over_ranks(checked);
        r.wrong = sum_over_ranks(wrong);
        total_wrong += r.wrong;
        report(kind == 0 ? "lookup uniform" : "lookup skewed", &r);
    }

    /* lower bounds of uniform keys (the exact answer is checked on a sample by a local scan is too
     * costly; checked: a hit's lower bound is itself) */
    {
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < m; i++)
            set(queries, i, key_of(query_id(rank_id, i, N, 0.0, 2)));
        void *lb_keys = malloc(m * width + 8);
        step_result r;
        memset(&r, 0, sizeof r);
        harmonia_dist_query_stats st;
        TIMED_RUNS(r, harmonia_dist_lower_bound(dist, &qc, queries, m, lb_keys, found_values, found, &st), st);
        r.queries = sum_over_ranks(m);
        uint64_t checked = 0, wrong = 0;
        for (uint64_t i = 0; o.samples > 0 && i < m; i += sample_step) {
            uint64_t j = query_id(rank_id, i, N, 0.0, 2);
            checked++;
            wrong += !found[i] || get(lb_keys, i) != get(queries, i) ||
                     get(found_values, i) != (key_bits == 32 ? (uint32_t)j : j);
        }
        r.checked = sum_over_ranks(checked);
        r.wrong = sum_over_ranks(wrong);
        total_wrong += r.wrong;
        report("lower bound", &r);
        free(lb_keys);
    }
    free(queries);
    free(found_values);
    free(found);

    /* range counts of about range_length keys: [key(j), key(j) + width), width = length * domain / N;
     * a sample of them counted by brute force over every rank's pairs (the model) */
    if (o.ranges > 0) {
        const uint64_t q = o.ranges;
        const double domain = key_bits == 64 ? 18446744073709551616.0 : 4294967296.0;
        const uint64_t span = (uint64_t)((double)o.range_length * domain / (double)N);
        void *lo = malloc(q * width + 8), *hi = malloc(q * width + 8);
        uint64_t *counts = malloc(q * 8 + 8);
        if (lo == NULL || hi == NULL || counts == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        const uint64_t max_key = key_bits == 64 ? UINT64_MAX : UINT32_MAX;
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < q; i++) {
            uint64_t l = key_of(query_id(rank_id, i, N, 0.0, 3));
            set(lo, i, l);
            set(hi, i, l > max_key - span ? max_key : l + span - 1);
        }
        step_result r;
        memset(&r, 0, sizeof r);
        harmonia_dist_query_stats st;
        TIMED_RUNS(r, harmonia_dist_range_count(dist, &qc, lo, hi, q, counts, &st), st);
        r.queries = sum_over_ranks(q);
        /* the check: every rank's sample ranges, gathered; every rank counts its own pairs in them */
        const int per_rank = 64;
        uint64_t mine[2 * 64], all_counts[64];
        int have = q < (uint64_t)per_rank ? (int)q : per_rank;
        for (int k = 0; k < per_rank; k++) {
            uint64_t i = k < have ? (uint64_t)k * (q / (uint64_t)have) : 0;
            mine[2 * k] = k < have ? get(lo, i) : 1;
            mine[2 * k + 1] = k < have ? get(hi, i) : 0; /* empty */
        }
        uint64_t *every = malloc((size_t)ranks * 2 * per_rank * sizeof(uint64_t));
        uint64_t *tally = calloc((size_t)ranks * per_rank, sizeof(uint64_t));
        MPI_Allgather(mine, 2 * per_rank, MPI_UINT64_T, every, 2 * per_rank, MPI_UINT64_T, MPI_COMM_WORLD);
        const int total_ranges = ranks * per_rank;
        /* key k lies in [l, min(l + span - 1, max)] exactly when k - span + 1 <= l <= k: with the lows
         * sorted, two binary searches per key and a difference array */
        typedef struct low {
            uint64_t lo;
            int index;
        } low;
        low *lows = malloc((size_t)total_ranges * sizeof *lows);
        int valid = 0;
        for (int k = 0; k < total_ranges; k++)
            if (every[2 * k] <= every[2 * k + 1])
                lows[valid++] = (low){every[2 * k], k};
        for (int a = 1; a < valid; a++) /* insertion sort: a few hundred */
            for (int b = a; b > 0 && lows[b - 1].lo > lows[b].lo; b--) {
                low t = lows[b];
                lows[b] = lows[b - 1];
                lows[b - 1] = t;
            }
        uint64_t *sorted_tally = calloc((size_t)valid + 1, sizeof(uint64_t));
#pragma omp parallel
        {
            int64_t *diff = calloc((size_t)valid + 1, sizeof(int64_t));
#pragma omp for schedule(static)
            for (uint64_t i = 0; i < n; i++) {
                uint64_t key = key_of((uint64_t)rank_id * n + i);
                uint64_t from = key >= span - 1 ? key - (span - 1) : 0;
                int a = 0, b = valid; /* first low >= from */
                while (a < b) {
                    int mid = (a + b) / 2;
                    if (lows[mid].lo < from)
                        a = mid + 1;
                    else
                        b = mid;
                }
                int c = a, d = valid; /* first low > key */
                while (c < d) {
                    int mid = (c + d) / 2;
                    if (lows[mid].lo <= key)
                        c = mid + 1;
                    else
                        d = mid;
                }
                if (a < c) {
                    diff[a]++;
                    diff[c]--;
                }
            }
#pragma omp critical
            {
                int64_t running = 0;
                for (int k = 0; k < valid; k++) {
                    running += diff[k];
                    sorted_tally[k] += (uint64_t)running;
                }
            }
            free(diff);
        }
        for (int k = 0; k < valid; k++)
            tally[lows[k].index] = sorted_tally[k];
        free(sorted_tally);
        free(lows);
        MPI_Allreduce(MPI_IN_PLACE, tally, total_ranges, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        uint64_t checked = 0, wrong = 0;
        for (int k = 0; k < have; k++) {
            all_counts[k] = tally[rank_id * per_rank + k];
            checked++;
            wrong += counts[(uint64_t)k * (q / (uint64_t)have)] != all_counts[k];
        }
        r.checked = sum_over_ranks(checked);
        r.wrong = sum_over_ranks(wrong);
        total_wrong += r.wrong;
        char name[32];
        snprintf(name, sizeof name, "range count %" PRIu64, o.range_length);
        report(name, &r);
        free(every);
        free(tally);
        free(lo);
        free(hi);
        free(counts);
    }

    /* one update batch: per rank, 1/2 updates of its own ids, 1/4 deletes of its own ids, 1/4
     * inserts of new ids; then a sample of every kind looked up */
    if (o.update_ops > 0) {
        const uint64_t u = o.update_ops < n ? o.update_ops : n;
        uint8_t *kinds = malloc(u);
        void *op_keys = malloc(u * width), *op_values = malloc(u * width);
        if (kinds == NULL || op_keys == NULL || op_values == NULL)
            MPI_Abort(MPI_COMM_WORLD, 1);
        uint64_t stride = 0x9E3779B97F4A7C15ull % n | 1;
        while (n % 2 == 0 && stride % 2 == 0)
            stride++;
        /* distinct existing ids of this rank: (i * stride) mod n with gcd(stride, n) = 1 */
        for (uint64_t g = stride, b = n; ; ) {
            while (b != 0) {
                uint64_t t = g % b;
                g = b;
                b = t;
            }
            if (g == 1)
                break;
            stride += 2;
            g = stride;
            b = n;
        }
#define OP_ID(i) ((i) % 4 == 3 ? N + (uint64_t)rank_id * u + (i) : (uint64_t)rank_id * n + (uint64_t)(((unsigned __int128)(i) * stride) % n))
#define OP_VALUE(i) ((OP_ID(i) + 0x5a5a5a) & (key_bits == 32 ? UINT32_MAX : UINT64_MAX))
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < u; i++) {
            kinds[i] = i % 4 == 3 ? HARMONIA_OP_INSERT : i % 4 == 2 ? HARMONIA_OP_DELETE : HARMONIA_OP_UPDATE;
            set(op_keys, i, key_of(OP_ID(i)));
            set(op_values, i, OP_VALUE(i));
        }
        harmonia_dist_update_stats us;
        MPI_Barrier(MPI_COMM_WORLD);
        double u0 = MPI_Wtime();
        hs = harmonia_dist_update(dist, NULL, kinds, op_keys, op_values, u, &us);
        double update_seconds = max_over_ranks(MPI_Wtime() - u0);
        if (hs != HARMONIA_OK) {
            if (rank_id == 0)
                fprintf(stderr, "bench_dist: update: %s\n", harmonia_dist_last_error(dist));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        step_result r;
        memset(&r, 0, sizeof r);
        r.seconds = update_seconds;
        r.route = max_over_ranks(us.route_seconds);
        r.exchange = max_over_ranks(us.exchange_seconds);
        r.local = max_over_ranks(us.validate_seconds + us.commit_seconds);
        r.back = 0.0;
        r.queries = sum_over_ranks(u);
        r.bytes = sum_over_ranks(us.bytes_sent);
        /* a sample of the operations' keys, looked up */
        const uint64_t k = o.samples < u ? o.samples : u, step = u / (k > 0 ? k : 1);
        void *probe = malloc(k * width + 8), *got = malloc(k * width + 8);
        uint8_t *hit = malloc(k + 1);
        for (uint64_t s = 0; s < k; s++)
            set(probe, s, get(op_keys, s * step));
        hs = harmonia_dist_lookup(dist, &qc, probe, k, got, hit, NULL);
        uint64_t checked = 0, wrong = hs != HARMONIA_OK;
        for (uint64_t s = 0; hs == HARMONIA_OK && s < k; s++) {
            uint64_t i = s * step;
            checked++;
            if (kinds[i] == HARMONIA_OP_DELETE)
                wrong += hit[s] != 0;
            else
                wrong += !hit[s] || get(got, s) != OP_VALUE(i);
        }
        r.checked = sum_over_ranks(checked);
        r.wrong = sum_over_ranks(wrong);
        total_wrong += r.wrong;
        const double validate = max_over_ranks(us.validate_seconds), commit = max_over_ranks(us.commit_seconds);
        if (rank_id == 0)
            printf("update batch: %" PRIu64 " operations (%" PRIu64 " applied: %" PRIu64 " inserted, %" PRIu64
                   " updated, %" PRIu64 " deleted); validate %.4f s, commit %.4f s (largest over the ranks)\n",
                   us.total.operations, us.total.applied, us.total.inserted, us.total.updated, us.total.deleted,
                   validate, commit);
        report("update", &r);
        /* the keys: N, plus the inserts (i % 4 == 3), minus the deletes (i % 4 == 2) of every rank */
        const uint64_t expected = N + (uint64_t)ranks * (u / 4) - (uint64_t)ranks * ((u + 1) / 4);
        harmonia_dist_get_info(dist, &info);
        if (info.keys != expected) {
            if (rank_id == 0)
                printf("WRONG: %" PRIu64 " keys after the update, expected %" PRIu64 "\n", info.keys, expected);
            total_wrong++;
        }
        free(probe);
        free(got);
        free(hit);
        free(kinds);
        free(op_keys);
        free(op_values);
#undef OP_ID
#undef OP_VALUE
    }
    if (harmonia_dist_check(dist) != HARMONIA_OK) {
        if (rank_id == 0)
            printf("WRONG: check after the update: %s\n", harmonia_dist_last_error(dist));
        total_wrong++;
    }
    if (rank_id == 0)
        printf("%s: %" PRIu64 " wrong results\n", total_wrong == 0 ? "OK" : "FAILED", total_wrong);
    if (csv_file != NULL)
        fclose(csv_file);
    harmonia_dist_free(dist);
    MPI_Finalize();
    return total_wrong == 0 ? 0 : 1;
}
