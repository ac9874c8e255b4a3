/* test_dist.c — the distributed index (dist/) under mpirun -np 1..4, against one Harmonia tree built
 * from the concatenation of every rank's input (each rank regenerates every rank's input from the
 * seed): builds on uniform, skewed, clustered, dense and duplicate-heavy keys (and shard balance),
 * lookups, lower bounds, range counts and collects over several shards, keys 0 and the maximum,
 * empty ranks and an empty index, 32-bit keys, exchanges in rounds, update batches (strict
 * failures, a commit failure rolled back, a failed rollback), save and load (wrong rank count,
 * missing, damaged and swapped shards, damaged manifests), and collective errors. Every check is
 * agreed over the ranks, so a failure on one rank fails the test on all (never a hang). */
#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "dist/dist_internal.h" /* dst_test_inject: the failure hooks of the test library */
#include "harmonia_dist.h"

static int world_rank, world_size;
static char tmp_dir[256];

/* ---- checks agreed over the ranks ----------------------------------------------------------- */

static char first_failure[512];

#define EXPECT(cond, ...)                                                                         \
    do {                                                                                          \
        if (!(cond) && first_failure[0] == '\0') {                                                \
            int n_ = snprintf(first_failure, sizeof first_failure, "%s:%d: ", __FILE__, __LINE__);\
            snprintf(first_failure + n_, sizeof first_failure - (size_t)n_, __VA_ARGS__);         \
        }                                                                                         \
    } while (0)

/* Fails the test on every rank when any rank's EXPECT failed, with the lowest such rank's words. */
static void agree_checks(void)
{
    int failing = first_failure[0] != '\0' ? world_rank : world_size;
    MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (failing == world_size)
        return;
    char message[512];
    memcpy(message, first_failure, sizeof message);
    MPI_Bcast(message, sizeof message, MPI_CHAR, failing, MPI_COMM_WORLD);
    first_failure[0] = '\0';
    fail_msg("rank %d of %d: %s", failing, world_size, message);
}

/* status must be `expected` on this rank; agreed. */
#define EXPECT_STATUS(status, expected, dist)                                                     \
    EXPECT((status) == (expected), "status %d (%s), expected %d: %s", (int)(status),              \
           harmonia_strerror(status), (int)(expected), harmonia_dist_last_error(dist))

/* ---- inputs ------------------------------------------------------------------------------------ */

typedef enum { D_UNIFORM, D_SKEWED, D_CLUSTERED, D_DENSE, D_DUPLICATES, D_EXTREMES, D_SKEWED_DISTINCT } dist_kind;

typedef struct input {
    uint32_t bits;
    uint64_t count;
    void *keys, *values;
} input;

static void input_free(input *in)
{
    free(in->keys);
    free(in->values);
    memset(in, 0, sizeof *in);
}

/* Rank r's pairs for a seed, the same wherever it is generated. */
static void make_input(input *in, uint32_t bits, dist_kind kind, uint64_t count, int r, uint64_t seed)
{
    const uint64_t mask = tu_mask(bits);
    uint64_t rng = seed * 1000003u + (uint64_t)r * 7919u + 17;
    in->bits = bits;
    in->count = count;
    in->keys = malloc(count * (bits / 8) + 8);
    in->values = malloc(count * (bits / 8) + 8);
    assert_non_null(in->keys);
    assert_non_null(in->values);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t k;
        uint64_t x = tu_next(&rng);
        switch (kind) {
        case D_UNIFORM: k = x & mask; break;
        case D_SKEWED: { /* Zipf-like: cluster c with probability ~ 1/(c+1), 64 clusters */
            double u = (double)(x >> 11) / 9007199254740992.0;
            uint64_t c = (uint64_t)(64.0 * u * u * u * u);
            k = ((c * 0x9E3779B97F4A7C15ull) & mask & ~(uint64_t)0xffffff) + (tu_next(&rng) % 4096);
            k &= mask;
            break;
        }
        case D_CLUSTERED: k = ((x % 4) * (mask / 4) + tu_next(&rng) % 100000) & mask; break;
        case D_DENSE: k = (1000 + (uint64_t)r * count + i) & mask; break;
        case D_DUPLICATES: k = (x % 7 == 0) ? 42 : (tu_next(&rng) % 3000) * 1000003u & mask; break;
        case D_SKEWED_DISTINCT: { /* the Zipf-like clusters, every key distinct */
            double u = (double)(x >> 11) / 9007199254740992.0;
            uint64_t c = (uint64_t)(64.0 * u * u * u * u);
            k = ((c * 0x9E3779B97F4A7C15ull) & mask & ~(uint64_t)0xffffff) + (uint64_t)r * count + i;
            k &= mask;
            break;
        }
        default: /* extremes */
            k = (x % 4 == 0) ? 0 : (x % 4 == 1) ? mask : (x % 4 == 2) ? x % 1000 : mask - x % 1000;
            break;
        }
        tu_set(in->keys, bits, i, k);
        tu_set(in->values, bits, i, tu_next(&rng) & mask);
    }
}

/* The concatenation of every rank's input, in rank order. */
static void make_union(input *all, uint32_t bits, dist_kind kind, const uint64_t *counts, uint64_t seed)
{
    uint64_t total = 0;
    for (int r = 0; r < world_size; r++)
        total += counts[r];
    size_t w = bits / 8;
    all->bits = bits;
    all->count = total;
    all->keys = malloc(total * w + 8);
    all->values = malloc(total * w + 8);
    assert_non_null(all->keys);
    assert_non_null(all->values);
    uint64_t at = 0;
    for (int r = 0; r < world_size; r++) {
        input part;
        make_input(&part, bits, kind, counts[r], r, seed);
        memcpy((char *)all->keys + at * w, part.keys, counts[r] * w);
        memcpy((char *)all->values + at * w, part.values, counts[r] * w);
        at += counts[r];
        input_free(&part);
    }
}

/* ---- comparing with the reference tree ----------------------------------------------------- */

static harmonia_query_config cpu_config(void)
{
    harmonia_query_config qc;
    harmonia_query_config_init(&qc);
    qc.backend = HARMONIA_BACKEND_CPU;
    return qc;
}

/* The shards' engine: the CPU, or with DIST_TEST_BACKEND=gpu|auto the GPU (bench/run-dist.sh sets
 * it on the GPU machine); the reference tree always answers on the CPU. */
static harmonia_query_config shard_config(void)
{
    harmonia_query_config qc = cpu_config();
    const char *backend = getenv("DIST_TEST_BACKEND");
    if (backend != NULL && strcmp(backend, "gpu") == 0)
        qc.backend = HARMONIA_BACKEND_GPU;
    else if (backend != NULL && strcmp(backend, "auto") == 0)
        qc.backend = HARMONIA_BACKEND_AUTO;
    return qc;
}

/* Every pair of the index, in key order (collected by rank 0; the others ask nothing). */
static void all_pairs(harmonia_dist *d, uint32_t bits, uint64_t *n_out, void **keys, void **values)
{
    harmonia_query_config qc = shard_config();
    uint64_t lo = 0, hi = tu_mask(bits), offsets[2] = {0, 0};
    uint32_t lo32 = 0, hi32 = UINT32_MAX;
    const void *plo = bits == 32 ? (void *)&lo32 : (void *)&lo, *phi = bits == 32 ? (void *)&hi32 : (void *)&hi;
    uint64_t n = world_rank == 0 ? 1 : 0;
    harmonia_status s = harmonia_dist_range_collect(d, &qc, plo, phi, n, offsets, NULL, NULL, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    *n_out = offsets[n];
    *keys = malloc(offsets[n] * (bits / 8) + 8);
    *values = malloc(offsets[n] * (bits / 8) + 8);
    s = harmonia_dist_range_collect(d, &qc, plo, phi, n, offsets, *keys, *values, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
}

/* The index holds exactly the reference's pairs (checked on rank 0). */
static void expect_same_pairs(harmonia_dist *d, harmonia_tree *ref, uint32_t bits)
{
    uint64_t n;
    void *k, *v;
    all_pairs(d, bits, &n, &k, &v);
    if (world_rank == 0) {
        harmonia_query_config qc = cpu_config();
        uint64_t lo = 0, hi = tu_mask(bits), off[2];
        uint32_t lo32 = 0, hi32 = UINT32_MAX;
        const void *plo = bits == 32 ? (void *)&lo32 : (void *)&lo, *phi = bits == 32 ? (void *)&hi32 : (void *)&hi;
        assert_int_equal(harmonia_range_collect(ref, &qc, plo, phi, 1, off, NULL, NULL), HARMONIA_OK);
        void *rk = malloc(off[1] * (bits / 8) + 8), *rv = malloc(off[1] * (bits / 8) + 8);
        assert_int_equal(harmonia_range_collect(ref, &qc, plo, phi, 1, off, rk, rv), HARMONIA_OK);
        EXPECT(off[1] == n, "the index holds %llu pairs, the reference %llu", (unsigned long long)n,
               (unsigned long long)off[1]);
        for (uint64_t i = 0; i < n && i < off[1]; i++) {
            EXPECT(tu_get(k, bits, i) == tu_get(rk, bits, i) && tu_get(v, bits, i) == tu_get(rv, bits, i),
                   "pair %llu: (%llu, %llu), reference (%llu, %llu)", (unsigned long long)i,
                   (unsigned long long)tu_get(k, bits, i), (unsigned long long)tu_get(v, bits, i),
                   (unsigned long long)tu_get(rk, bits, i), (unsigned long long)tu_get(rv, bits, i));
        }
        free(rk);
        free(rv);
    }
    free(k);
    free(v);
    agree_checks();
}

/* A query near something interesting: the union's keys, shard boundaries, 0, the maximum. */
static uint64_t query_key(const input *all, harmonia_dist *d, uint64_t *rng)
{
    const uint64_t mask = tu_mask(all->bits);
    uint64_t x = tu_next(rng);
    uint64_t k = all->count ? tu_get(all->keys, all->bits, tu_next(rng) % all->count) : 0;
    switch (x % 8) {
    case 0: case 1: case 2: return k;
    case 3: return (k + 1) & mask;
    case 4: return (k - 1) & mask;
    case 5: {
        harmonia_dist_shard_info sh;
        harmonia_dist_shard(d, (int)(tu_next(rng) % (uint64_t)world_size), &sh);
        uint64_t pick = tu_next(rng) % 6;
        return pick == 0 ? sh.lower : pick == 1 ? (sh.lower - 1) & mask : pick == 2 ? sh.upper
             : pick == 3 ? (sh.upper + 1) & mask : pick == 4 ? sh.min_key : sh.max_key;
    }
    case 6: return (x >> 8) % 2 ? mask : 0;
    default: return tu_next(rng) & mask;
    }
}

/* Lookups, lower bounds, range counts and range collects of this rank's own batch against the
 * reference tree. n_queries may be 0 on some ranks. */
static void expect_same_answers(harmonia_dist *d, harmonia_tree *ref, const input *all,
                                uint64_t n_queries, uint64_t seed)
{
    const uint32_t bits = all->bits;
    const size_t w = bits / 8;
    const uint64_t mask = tu_mask(bits);
    uint64_t rng = seed * 31 + (uint64_t)world_rank * 101 + 5;
    harmonia_query_config qc = shard_config(), rc = cpu_config();
    void *q = malloc(n_queries * w + 8), *lo = malloc(n_queries * w + 8), *hi = malloc(n_queries * w + 8);
    for (uint64_t i = 0; i < n_queries; i++) {
        tu_set(q, bits, i, query_key(all, d, &rng));
        uint64_t a = query_key(all, d, &rng), b;
        switch (tu_next(&rng) % 5) {
        case 0: b = a + tu_next(&rng) % 64; break;                 /* short */
        case 1: b = query_key(all, d, &rng); break;                /* long, either way round */
        case 2: a = 0; b = mask; break;                             /* everything */
        case 3: b = a; break;                                       /* one key */
        default: b = a > 0 ? a - 1 : a; break;                      /* lo > hi: empty */
        }
        tu_set(lo, bits, i, a & mask);
        tu_set(hi, bits, i, (b < a && tu_next(&rng) % 2 == 0) ? a : b & mask);
    }
    void *values = malloc(n_queries * w + 8), *rvalues = malloc(n_queries * w + 8);
    void *keys = malloc(n_queries * w + 8), *rkeys = malloc(n_queries * w + 8);
    uint8_t *found = malloc(n_queries + 1), *rfound = malloc(n_queries + 1);
    uint64_t *counts = malloc((n_queries + 1) * 8), *rcounts = malloc((n_queries + 1) * 8);
    harmonia_dist_query_stats st;

    /* lookups (a rank without queries passes NULL arrays) */
    harmonia_status s = harmonia_dist_lookup(d, &qc, n_queries ? q : NULL, n_queries,
                                             n_queries ? values : NULL, n_queries ? found : NULL, &st);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    assert_int_equal(harmonia_lookup(ref, &rc, q, n_queries, rvalues, rfound), HARMONIA_OK);
    for (uint64_t i = 0; i < n_queries && s == HARMONIA_OK; i++)
        EXPECT(found[i] == rfound[i] && (!found[i] || tu_get(values, bits, i) == tu_get(rvalues, bits, i)),
               "lookup %llu of key %llu: found %d value %llu, reference %d %llu", (unsigned long long)i,
               (unsigned long long)tu_get(q, bits, i), found[i], (unsigned long long)tu_get(values, bits, i),
               rfound[i], (unsigned long long)tu_get(rvalues, bits, i));
    EXPECT(st.queries == n_queries && st.pieces_sent + st.answered_here == n_queries,
           "lookup stats: %llu queries, %llu sent, %llu answered here", (unsigned long long)st.queries,
           (unsigned long long)st.pieces_sent, (unsigned long long)st.answered_here);
    agree_checks();

    /* lower bounds */
    s = harmonia_dist_lower_bound(d, &qc, q, n_queries, keys, values, found, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    assert_int_equal(harmonia_lower_bound(ref, &rc, q, n_queries, rkeys, rvalues, rfound), HARMONIA_OK);
    for (uint64_t i = 0; i < n_queries && s == HARMONIA_OK; i++)
        EXPECT(found[i] == rfound[i] && (!found[i] || (tu_get(keys, bits, i) == tu_get(rkeys, bits, i) &&
                                                       tu_get(values, bits, i) == tu_get(rvalues, bits, i))),
               "lower bound %llu of %llu: %d (%llu, %llu), reference %d (%llu, %llu)", (unsigned long long)i,
               (unsigned long long)tu_get(q, bits, i), found[i], (unsigned long long)tu_get(keys, bits, i),
               (unsigned long long)tu_get(values, bits, i), rfound[i],
               (unsigned long long)tu_get(rkeys, bits, i), (unsigned long long)tu_get(rvalues, bits, i));
    agree_checks();

    /* range counts */
    s = harmonia_dist_range_count(d, &qc, lo, hi, n_queries, counts, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    assert_int_equal(harmonia_range_count(ref, &rc, lo, hi, n_queries, rcounts), HARMONIA_OK);
    for (uint64_t i = 0; i < n_queries && s == HARMONIA_OK; i++)
        EXPECT(counts[i] == rcounts[i], "range %llu [%llu, %llu]: %llu keys, reference %llu",
               (unsigned long long)i, (unsigned long long)tu_get(lo, bits, i),
               (unsigned long long)tu_get(hi, bits, i), (unsigned long long)counts[i],
               (unsigned long long)rcounts[i]);
    agree_checks();

    /* range collects, two phases */
    s = harmonia_dist_range_collect(d, &qc, lo, hi, n_queries, counts, NULL, NULL, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    assert_int_equal(harmonia_range_collect(ref, &rc, lo, hi, n_queries, rcounts, NULL, NULL), HARMONIA_OK);
    for (uint64_t i = 0; i <= n_queries && s == HARMONIA_OK; i++)
        EXPECT(counts[i] == rcounts[i], "collect offset %llu: %llu, reference %llu", (unsigned long long)i,
               (unsigned long long)counts[i], (unsigned long long)rcounts[i]);
    uint64_t total = counts[n_queries];
    void *pk = malloc(total * w + 8), *pv = malloc(total * w + 8);
    void *rk = malloc(total * w + 8), *rv = malloc(total * w + 8);
    s = harmonia_dist_range_collect(d, &qc, lo, hi, n_queries, counts, pk, pv, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    assert_int_equal(harmonia_range_collect(ref, &rc, lo, hi, n_queries, counts, rk, rv), HARMONIA_OK);
    for (uint64_t i = 0; i < total && s == HARMONIA_OK; i++)
        EXPECT(tu_get(pk, bits, i) == tu_get(rk, bits, i) && tu_get(pv, bits, i) == tu_get(rv, bits, i),
               "collected pair %llu: (%llu, %llu), reference (%llu, %llu)", (unsigned long long)i,
               (unsigned long long)tu_get(pk, bits, i), (unsigned long long)tu_get(pv, bits, i),
               (unsigned long long)tu_get(rk, bits, i), (unsigned long long)tu_get(rv, bits, i));
    agree_checks();
    free(pk); free(pv); free(rk); free(rv);
    free(q); free(lo); free(hi); free(values); free(rvalues); free(keys); free(rkeys);
    free(found); free(rfound); free(counts); free(rcounts);
}

/* Builds the index from every rank's input (counts[r] pairs on rank r) and the reference tree from
 * their concatenation; checks balance (when balance_check) and the answers. */
static void build_and_compare(uint32_t bits, dist_kind kind, const uint64_t *counts,
                              harmonia_duplicates duplicates, bool null_values, uint64_t chunk,
                              bool balance_check, uint64_t seed)
{
    input mine, all;
    make_input(&mine, bits, kind, counts[world_rank], world_rank, seed);
    make_union(&all, bits, kind, counts, seed);
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    config.build.key_bits = bits;
    config.build.duplicates = duplicates;
    config.exchange_chunk_bytes = chunk;
    harmonia_dist *d = NULL;
    harmonia_dist_build_stats bs;
    harmonia_status s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine.count ? mine.keys : NULL,
                                            null_values || !mine.count ? NULL : mine.values, mine.count,
                                            &d, &bs);
    EXPECT_STATUS(s, HARMONIA_OK, NULL);
    agree_checks();
    EXPECT_STATUS(harmonia_dist_check(d), HARMONIA_OK, d);
    agree_checks();

    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.key_bits = bits;
    bc.duplicates = duplicates;
    harmonia_tree *ref = NULL;
    assert_int_equal(harmonia_build(&bc, all.keys, null_values ? NULL : all.values, all.count, &ref),
                     HARMONIA_OK);
    harmonia_tree_info ri;
    harmonia_info(ref, &ri);
    harmonia_dist_info di;
    assert_int_equal(harmonia_dist_get_info(d, &di), HARMONIA_OK);
    EXPECT(di.keys == ri.key_count, "the index holds %llu keys, the reference %llu",
           (unsigned long long)di.keys, (unsigned long long)ri.key_count);
    int rebalanced = bs.rebalanced;
    MPI_Allreduce(MPI_IN_PLACE, &rebalanced, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    print_message("  %u-bit %s keys on %d ranks: %llu keys, shards of %llu to %llu%s%s\n", bits,
                  (const char *[]){"uniform", "skewed", "clustered", "dense", "duplicate-heavy",
                                   "extreme", "skewed distinct"}[kind], world_size, (unsigned long long)di.keys,
                  (unsigned long long)di.smallest_shard, (unsigned long long)di.largest_shard,
                  rebalanced ? ", rebalanced" : "", chunk ? ", exchanged in rounds" : "");
    if (balance_check && di.keys > 0) {
        double mean = (double)di.keys / world_size;
        EXPECT((double)di.largest_shard <= mean * 1.05 + 1 && (double)di.smallest_shard >= mean * 0.95 - 1,
               "shards of %llu to %llu keys, mean %.1f (kind %d)", (unsigned long long)di.smallest_shard,
               (unsigned long long)di.largest_shard, mean, (int)kind);
    }
    agree_checks();
    expect_same_pairs(d, ref, bits);
    expect_same_answers(d, ref, &all, world_rank == 1 ? 0 : 500, seed);
    harmonia_free(ref);
    harmonia_dist_free(d);
    input_free(&mine);
    input_free(&all);
}

/* ---- the tests --------------------------------------------------------------------------------- */

static void equal_counts(uint64_t *counts, uint64_t n)
{
    for (int r = 0; r < world_size; r++)
        counts[r] = n;
}

static void test_uniform_and_skewed(void **state)
{
    (void)state;
    uint64_t counts[64];
    for (int r = 0; r < world_size; r++)
        counts[r] = 2000 + 800 * (uint64_t)r; /* unequal ranks */
    build_and_compare(64, D_UNIFORM, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 0, true, 1);
    build_and_compare(64, D_SKEWED, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 0, true, 2);
    build_and_compare(64, D_CLUSTERED, counts, HARMONIA_DUPLICATES_KEEP_LAST, false, 0, true, 3);
    build_and_compare(64, D_DENSE, counts, HARMONIA_DUPLICATES_REJECT, true, 0, true, 4);
}

/* The splitters alone (no rebalance), from a real sample (more pairs than samples per rank):
 * shards within 5 % of the mean on uniform and on skewed distinct keys. */
static void test_sampled_balance(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        dist_kind kind = k == 0 ? D_UNIFORM : D_SKEWED_DISTINCT;
        input mine;
        make_input(&mine, 64, kind, 20000 + 1000 * (uint64_t)world_rank, world_rank, 60 + (uint64_t)k);
        harmonia_dist_config config;
        harmonia_dist_config_init(&config);
        config.balance_tolerance = -1.0; /* never rebalance */
        harmonia_dist *d = NULL;
        harmonia_dist_build_stats bs;
        EXPECT_STATUS(harmonia_dist_build(MPI_COMM_WORLD, &config, mine.keys, mine.values, mine.count, &d, &bs),
                      HARMONIA_OK, NULL);
        agree_checks();
        harmonia_dist_info di;
        harmonia_dist_get_info(d, &di);
        double mean = (double)di.keys / world_size;
        print_message("  sampled splitters, %s keys on %d ranks: shards of %llu to %llu keys (mean %.0f)\n",
                      k == 0 ? "uniform" : "skewed distinct", world_size,
                      (unsigned long long)di.smallest_shard, (unsigned long long)di.largest_shard, mean);
        EXPECT(!bs.rebalanced, "rebalanced although told not to");
        EXPECT((double)di.largest_shard <= mean * 1.05 && (double)di.smallest_shard >= mean * 0.95,
               "%s: shards of %llu to %llu keys, mean %.1f", k == 0 ? "uniform" : "skewed",
               (unsigned long long)di.smallest_shard, (unsigned long long)di.largest_shard, mean);
        agree_checks();
        harmonia_dist_free(d);
        input_free(&mine);
    }
}

static void test_duplicates_and_extremes(void **state)
{
    (void)state;
    uint64_t counts[64];
    equal_counts(counts, 2500);
    /* duplicate-heavy: one key in 7 is 42, the rest from 3000 values; first/last by (rank, index) */
    build_and_compare(64, D_DUPLICATES, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 0, true, 5);
    build_and_compare(64, D_DUPLICATES, counts, HARMONIA_DUPLICATES_KEEP_LAST, true, 0, true, 6);
    /* 0, the maximum and their neighbours, in both widths */
    build_and_compare(64, D_EXTREMES, counts, HARMONIA_DUPLICATES_KEEP_LAST, false, 0, false, 7);
    build_and_compare(32, D_EXTREMES, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 0, false, 8);
    build_and_compare(32, D_UNIFORM, counts, HARMONIA_DUPLICATES_KEEP_FIRST, true, 0, true, 9);
}

static void test_empty_ranks_and_rounds(void **state)
{
    (void)state;
    uint64_t counts[64];
    /* rank 1 (and every odd rank) holds nothing */
    for (int r = 0; r < world_size; r++)
        counts[r] = r % 2 ? 0 : 3000;
    build_and_compare(64, D_UNIFORM, counts, HARMONIA_DUPLICATES_REJECT, false, 0, true, 10);
    /* an empty index */
    equal_counts(counts, 0);
    build_and_compare(64, D_UNIFORM, counts, HARMONIA_DUPLICATES_REJECT, false, 0, false, 11);
    /* a tiny index: fewer keys than ranks, so some shards stay empty */
    equal_counts(counts, 0);
    counts[world_size - 1] = 2;
    build_and_compare(64, D_EXTREMES, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 0, false, 12);
    /* exchanges in rounds of at most 200 bytes per rank (the path of transfers above 2^31) */
    equal_counts(counts, 2000);
    build_and_compare(64, D_SKEWED, counts, HARMONIA_DUPLICATES_KEEP_FIRST, false, 200, true, 13);
    build_and_compare(32, D_CLUSTERED, counts, HARMONIA_DUPLICATES_KEEP_LAST, false, 96, true, 14);
}

static void test_collective_errors(void **state)
{
    (void)state;
    input mine;
    make_input(&mine, 64, D_UNIFORM, 1000, world_rank, 20);
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    harmonia_dist *d = (harmonia_dist *)1;
    const int last = world_size - 1;

    /* NULL keys on the last rank: every rank fails the same way, naming it */
    harmonia_status s = harmonia_dist_build(MPI_COMM_WORLD, &config, world_rank == last ? NULL : mine.keys,
                                            mine.values, mine.count, &d, NULL);
    EXPECT_STATUS(s, HARMONIA_ERR_INVALID, NULL);
    EXPECT(d == NULL, "a failed build left an index");
    char expected[64];
    snprintf(expected, sizeof expected, "rank %d: ", last);
    EXPECT(strncmp(harmonia_dist_last_error(NULL), expected, strlen(expected)) == 0,
           "message '%s' does not name rank %d", harmonia_dist_last_error(NULL), last);
    agree_checks();

    /* key widths that differ between ranks */
    if (world_size > 1) {
        config.build.key_bits = world_rank == 0 ? 32 : 64;
        s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine.keys, mine.values, world_rank == 0 ? 0 : mine.count,
                                &d, NULL);
        EXPECT_STATUS(s, HARMONIA_ERR_INVALID, NULL);
        EXPECT(strstr(harmonia_dist_last_error(NULL), "key_bits differs") != NULL, "message: %s",
               harmonia_dist_last_error(NULL));
        config.build.key_bits = 64;
        agree_checks();
    }

    /* a duplicate across ranks under the reject policy */
    tu_set(mine.keys, 64, 0, 77); /* every rank has key 77 */
    s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine.keys, mine.values, mine.count, &d, NULL);
    EXPECT_STATUS(s, world_size > 1 ? HARMONIA_ERR_DUPLICATE_KEY : HARMONIA_OK, NULL);
    if (world_size > 1)
        EXPECT(strstr(harmonia_dist_last_error(NULL), "duplicate key 77") != NULL, "message: %s",
               harmonia_dist_last_error(NULL));
    else
        harmonia_dist_free(d);
    agree_checks();

    /* an allocation failing on one rank in the middle of a build, and of a lookup */
    dst_test_inject(DST_HOOK_RECV_ALLOC, last);
    tu_set(mine.keys, 64, 0, 77 + (uint64_t)world_rank);
    s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine.keys, mine.values, mine.count, &d, NULL);
    EXPECT_STATUS(s, HARMONIA_ERR_NO_MEMORY, NULL);
    agree_checks();
    s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine.keys, mine.values, mine.count, &d, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, NULL);
    agree_checks();
    void *values = malloc(mine.count * 8);
    uint8_t *found = malloc(mine.count);
    dst_test_inject(DST_HOOK_RECV_ALLOC, 0);
    s = harmonia_dist_lookup(d, NULL, mine.keys, mine.count, values, found, NULL);
    EXPECT_STATUS(s, HARMONIA_ERR_NO_MEMORY, d);
    EXPECT(strncmp(harmonia_dist_last_error(d), "rank 0: ", 8) == 0, "message: %s", harmonia_dist_last_error(d));
    /* NULL arrays on one rank */
    s = harmonia_dist_lookup(d, NULL, world_rank == last ? NULL : mine.keys, mine.count, values, found, NULL);
    EXPECT_STATUS(s, HARMONIA_ERR_INVALID, d);
    /* and everything works again after */
    s = harmonia_dist_lookup(d, NULL, mine.keys, mine.count, values, found, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    for (uint64_t i = 0; i < mine.count && s == HARMONIA_OK; i++)
        EXPECT(found[i] && tu_get(values, 64, i) == tu_get(mine.values, 64, i), "lookup %llu", (unsigned long long)i);
    agree_checks();
    free(values);
    free(found);
    harmonia_dist_free(d);
    input_free(&mine);
}

/* ---- updates ----------------------------------------------------------------------------------- */

typedef struct batch {
    uint64_t count;
    uint8_t *kinds;
    uint64_t *keys, *values;
} batch;

/* Rank r's batch: updates/upserts/deletes of keys of the union, inserts of new keys, and keys that
 * every rank names (so the global order decides). Valid under upsert/skip policies. */
static void make_batch(batch *b, const input *all, int r, uint64_t n, uint64_t seed)
{
    uint64_t rng = seed * 77 + (uint64_t)r * 13 + 1;
    b->count = n;
    b->kinds = malloc(n + 1);
    b->keys = malloc(n * 8 + 8);
    b->values = malloc(n * 8 + 8);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = tu_next(&rng);
        b->kinds[i] = (uint8_t)(x % 4);
        if (x % 5 == 0)
            b->keys[i] = 1000 + (x >> 8) % 8; /* shared by all ranks */
        else if (x % 5 == 1 || all->count == 0)
            b->keys[i] = tu_next(&rng); /* new */
        else
            b->keys[i] = tu_get(all->keys, 64, tu_next(&rng) % all->count);
        b->values[i] = tu_next(&rng);
    }
}

static void batch_free(batch *b)
{
    free(b->kinds);
    free(b->keys);
    free(b->values);
}

static harmonia_dist *build_index(const input *mine, harmonia_duplicates dup)
{
    harmonia_dist_config config;
    harmonia_dist_config_init(&config);
    config.build.duplicates = dup;
    harmonia_dist *d = NULL;
    harmonia_status s = harmonia_dist_build(MPI_COMM_WORLD, &config, mine->keys, mine->values, mine->count, &d, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, NULL);
    agree_checks();
    return d;
}

static void test_updates(void **state)
{
    (void)state;
    uint64_t counts[64];
    equal_counts(counts, 2500);
    input mine, all;
    make_input(&mine, 64, D_UNIFORM, counts[world_rank], world_rank, 30);
    make_union(&all, 64, D_UNIFORM, counts, 30);
    harmonia_dist *d = build_index(&mine, HARMONIA_DUPLICATES_KEEP_FIRST);
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.duplicates = HARMONIA_DUPLICATES_KEEP_FIRST;
    harmonia_tree *ref;
    assert_int_equal(harmonia_build(&bc, all.keys, all.values, all.count, &ref), HARMONIA_OK);

    /* three permissive batches, every rank's own (the last rank's empty in the second) */
    harmonia_update_config uc;
    harmonia_update_config_init(&uc);
    uc.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
    uc.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
    for (int round = 0; round < 3; round++) {
        batch mine_b, all_b = {0, malloc(1), malloc(8), malloc(8)};
        for (int r = 0; r < world_size; r++) {
            batch b;
            make_batch(&b, &all, r, round == 1 && r == world_size - 1 ? 0 : 400, 31 + (uint64_t)round);
            all_b.kinds = realloc(all_b.kinds, all_b.count + b.count + 1);
            all_b.keys = realloc(all_b.keys, (all_b.count + b.count + 1) * 8);
            all_b.values = realloc(all_b.values, (all_b.count + b.count + 1) * 8);
            memcpy(all_b.kinds + all_b.count, b.kinds, b.count);
            memcpy(all_b.keys + all_b.count, b.keys, b.count * 8);
            memcpy(all_b.values + all_b.count, b.values, b.count * 8);
            all_b.count += b.count;
            batch_free(&b);
        }
        make_batch(&mine_b, &all, world_rank, round == 1 && world_rank == world_size - 1 ? 0 : 400,
                   31 + (uint64_t)round);
        harmonia_dist_update_stats st;
        harmonia_status s = harmonia_dist_update(d, &uc, mine_b.kinds, mine_b.keys, mine_b.values,
                                                 mine_b.count, &st);
        EXPECT_STATUS(s, HARMONIA_OK, d);
        harmonia_update_stats rst;
        assert_int_equal(harmonia_update(ref, &uc, all_b.kinds, all_b.keys, all_b.values, all_b.count, &rst),
                         HARMONIA_OK);
        EXPECT(st.total.operations == rst.operations && st.total.applied == rst.applied &&
                   st.total.inserted == rst.inserted && st.total.deleted == rst.deleted &&
                   st.total.missing == rst.missing,
               "update stats: %llu ops %llu applied %llu inserted %llu deleted %llu missing; reference %llu "
               "%llu %llu %llu %llu", (unsigned long long)st.total.operations,
               (unsigned long long)st.total.applied, (unsigned long long)st.total.inserted,
               (unsigned long long)st.total.deleted, (unsigned long long)st.total.missing,
               (unsigned long long)rst.operations, (unsigned long long)rst.applied,
               (unsigned long long)rst.inserted, (unsigned long long)rst.deleted, (unsigned long long)rst.missing);
        agree_checks();
        EXPECT_STATUS(harmonia_dist_check(d), HARMONIA_OK, d);
        agree_checks();
        expect_same_pairs(d, ref, 64);
        batch_free(&mine_b);
        batch_free(&all_b);
    }
    expect_same_answers(d, ref, &all, 300, 32);

    /* a strict batch that fails on the last rank's operation 5: nothing applied anywhere */
    uint64_t before_n;
    void *before_k, *before_v;
    all_pairs(d, 64, &before_n, &before_k, &before_v);
    harmonia_update_config strict;
    harmonia_update_config_init(&strict);
    uint8_t kinds[8];
    uint64_t keys[8], values[8];
    for (int i = 0; i < 8; i++) {
        kinds[i] = HARMONIA_OP_INSERT;
        keys[i] = 0x7000000000000000ull + (uint64_t)world_rank * 100 + (uint64_t)i; /* new keys */
        values[i] = (uint64_t)i;
    }
    if (world_rank == world_size - 1)
        keys[5] = tu_get(mine.keys, 64, 3); /* present (unless updated away: pick a key never deleted?) */
    /* make it surely present: upsert it first in a batch of its own */
    uint8_t up = HARMONIA_OP_UPSERT;
    uint64_t present = tu_get(mine.keys, 64, 3), pv = 99;
    harmonia_status s = harmonia_dist_update(d, &uc, &up, world_rank == world_size - 1 ? &present : NULL,
                                             &pv, world_rank == world_size - 1 ? 1 : 0, NULL);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    agree_checks();
    uint8_t rup = HARMONIA_OP_UPSERT;
    uint64_t rpresent;
    /* the reference gets the same upsert (the last rank's key 3 of its input) */
    {
        input last;
        make_input(&last, 64, D_UNIFORM, counts[world_size - 1], world_size - 1, 30);
        rpresent = tu_get(last.keys, 64, 3);
        input_free(&last);
        assert_int_equal(harmonia_update(ref, &uc, &rup, &rpresent, &pv, 1, NULL), HARMONIA_OK);
    }
    free(before_k);
    free(before_v);
    all_pairs(d, 64, &before_n, &before_k, &before_v);
    harmonia_dist_update_stats st;
    s = harmonia_dist_update(d, &strict, kinds, keys, values, 8, &st);
    EXPECT_STATUS(s, HARMONIA_ERR_KEY_EXISTS, d);
    EXPECT(st.failed_rank == world_size - 1 && st.total.failed_operation == 5,
           "failed rank %d operation %llu", st.failed_rank, (unsigned long long)st.total.failed_operation);
    char expected[64];
    snprintf(expected, sizeof expected, "rank %d: operation 5 (insert", world_size - 1);
    EXPECT(strstr(harmonia_dist_last_error(d), expected) != NULL, "message: %s", harmonia_dist_last_error(d));
    agree_checks();
    expect_same_pairs(d, ref, 64);

    /* an invalid kind on rank 0 */
    kinds[2] = 9;
    s = harmonia_dist_update(d, &strict, kinds, keys, values, world_rank == 0 ? 8 : 0, &st);
    EXPECT_STATUS(s, HARMONIA_ERR_INVALID, d);
    EXPECT(st.failed_rank == 0 && st.total.failed_operation == 2, "invalid kind: rank %d op %llu",
           st.failed_rank, (unsigned long long)st.total.failed_operation);
    kinds[2] = HARMONIA_OP_INSERT;
    agree_checks();

    /* a commit that fails on the last rank after validation: the others undo theirs */
    if (world_rank == world_size - 1)
        keys[5] = 0x7100000000000000ull;
    dst_test_inject(DST_HOOK_COMMIT, world_size - 1);
    s = harmonia_dist_update(d, &strict, kinds, keys, values, 8, &st);
    EXPECT_STATUS(s, HARMONIA_ERR_NO_MEMORY, d);
    EXPECT(st.rolled_back, "the batch was not rolled back");
    EXPECT(strstr(harmonia_dist_last_error(d), "undid it") != NULL, "message: %s", harmonia_dist_last_error(d));
    agree_checks();
    EXPECT_STATUS(harmonia_dist_check(d), HARMONIA_OK, d);
    agree_checks();
    expect_same_pairs(d, ref, 64);
    /* the same batch then applies */
    s = harmonia_dist_update(d, &strict, kinds, keys, values, 8, &st);
    EXPECT_STATUS(s, HARMONIA_OK, d);
    agree_checks();

    /* a failed rollback damages the index: every later call says so */
    if (world_size > 1) {
        for (int i = 0; i < 8; i++)
            keys[i] += 0x100000;
        dst_test_inject(DST_HOOK_COMMIT, 0);
        dst_test_inject(DST_HOOK_UNDO, 1);
        s = harmonia_dist_update(d, &strict, kinds, keys, values, 8, &st);
        EXPECT_STATUS(s, HARMONIA_ERR_CORRUPT, d);
        agree_checks();
        uint8_t f;
        uint64_t v;
        s = harmonia_dist_lookup(d, NULL, keys, 1, &v, &f, NULL);
        EXPECT_STATUS(s, HARMONIA_ERR_CORRUPT, d);
        EXPECT(strstr(harmonia_dist_last_error(d), "damaged") != NULL, "message: %s", harmonia_dist_last_error(d));
        agree_checks();
    }
    free(before_k);
    free(before_v);
    harmonia_free(ref);
    harmonia_dist_free(d);
    input_free(&mine);
    input_free(&all);
}

/* ---- save and load ----------------------------------------------------------------------------- */

static void corrupt_byte(const char *path, long offset)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, offset, offset < 0 ? SEEK_END : SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ 0x20, f);
    fclose(f);
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        fwrite(buf, 1, n, b);
    fclose(a);
    fclose(b);
}

/* The shard file of rank r named by the manifest. */
static void shard_path(const char *manifest, int r, char *out, size_t size)
    __attribute__((unused));
static void shard_path(const char *manifest, int r, char *out, size_t size)
{
    FILE *f = fopen(manifest, "r");
    assert_non_null(f);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        int s;
        char name[512];
        if (sscanf(line, "shard %d %*s %*s %*s %511s", &s, name) == 2 && s == r) {
            snprintf(out, size, "%s/%s", tmp_dir, name);
            fclose(f);
            return;
        }
    }
    fclose(f);
    fail_msg("no shard %d in %s", r, manifest);
}

static harmonia_status try_load(const char *manifest, harmonia_dist **d)
{
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0's damage is done */
    return harmonia_dist_load(MPI_COMM_WORLD, manifest, NULL, d);
}

static void test_save_and_load(void **state)
{
    (void)state;
    uint64_t counts[64];
    equal_counts(counts, 2000);
    input mine, all;
    make_input(&mine, 64, D_CLUSTERED, counts[world_rank], world_rank, 40);
    make_union(&all, 64, D_CLUSTERED, counts, 40);
    harmonia_dist *d = build_index(&mine, HARMONIA_DUPLICATES_KEEP_LAST);
    harmonia_build_config bc;
    harmonia_build_config_init(&bc);
    bc.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
    harmonia_tree *ref;
    assert_int_equal(harmonia_build(&bc, all.keys, all.values, all.count, &ref), HARMONIA_OK);
    char manifest[512], spare[512], shard[1024], shard2[1100];
    snprintf(manifest, sizeof manifest, "%s/index.hdm", tmp_dir);
    snprintf(spare, sizeof spare, "%s/spare.hdm", tmp_dir);

    /* save, save again over it (the first save's shards are removed), load, compare */
    EXPECT_STATUS(harmonia_dist_save(d, manifest), HARMONIA_OK, d);
    agree_checks();
    char first_shard[1024] = "";
    if (world_rank == 0)
        shard_path(manifest, 0, first_shard, sizeof first_shard);
    EXPECT_STATUS(harmonia_dist_save(d, manifest), HARMONIA_OK, d);
    agree_checks();
    if (world_rank == 0)
        EXPECT(access(first_shard, F_OK) != 0, "the replaced save's shard %s is still there", first_shard);
    agree_checks();
    /* a save whose manifest write fails leaves the saved index as it was */
    dst_test_inject(DST_HOOK_MANIFEST, 0);
    EXPECT_STATUS(harmonia_dist_save(d, manifest), HARMONIA_ERR_IO, d);
    agree_checks();
    harmonia_dist_free(d);
    d = NULL;
    harmonia_status s = try_load(manifest, &d);
    EXPECT_STATUS(s, HARMONIA_OK, NULL);
    agree_checks();
    EXPECT_STATUS(harmonia_dist_check(d), HARMONIA_OK, d);
    agree_checks();
    expect_same_pairs(d, ref, 64);
    expect_same_answers(d, ref, &all, 400, 41);
    harmonia_dist_free(d);

    /* a manifest for another number of ranks (saved by a communicator of the first rank alone) */
    if (world_size > 1) {
        MPI_Comm alone;
        MPI_Comm_split(MPI_COMM_WORLD, world_rank == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
        if (world_rank == 0) {
            /* local checks only: the other ranks wait at the load below */
            harmonia_dist_config one_config;
            harmonia_dist_config_init(&one_config);
            one_config.build.duplicates = HARMONIA_DUPLICATES_KEEP_LAST;
            harmonia_dist *one = NULL;
            s = harmonia_dist_build(alone, &one_config, mine.keys, mine.values, mine.count, &one, NULL);
            EXPECT_STATUS(s, HARMONIA_OK, NULL);
            char small[512];
            snprintf(small, sizeof small, "%s/one.hdm", tmp_dir);
            if (s == HARMONIA_OK)
                EXPECT_STATUS(harmonia_dist_save(one, small), HARMONIA_OK, one);
            harmonia_dist_free(one);
            MPI_Comm_free(&alone);
        }
        char small[512];
        snprintf(small, sizeof small, "%s/one.hdm", tmp_dir);
        s = try_load(small, &d);
        EXPECT_STATUS(s, HARMONIA_ERR_INVALID, NULL);
        EXPECT(strstr(harmonia_dist_last_error(NULL), "has 1 shard; load it on 1 rank") != NULL, "message: %s",
               harmonia_dist_last_error(NULL));
        agree_checks();
    }

    /* damaged manifests: a flipped byte, a cut end, another version; each copy from the good one */
    const char *what[3] = {"flipped", "truncated", "version"};
    for (int k = 0; k < 3; k++) {
        if (world_rank == 0) {
            copy_file(manifest, spare);
            if (k == 0) {
                corrupt_byte(spare, 40);
            } else if (k == 1) {
                struct stat st;
                stat(spare, &st);
                assert_int_equal(truncate(spare, st.st_size - 10), 0);
            } else {
                corrupt_byte(spare, 23); /* '1' -> '\x11' is malformed; use an explicit rewrite */
                FILE *f = fopen(spare, "r+b");
                fseek(f, 23, SEEK_SET);
                fputc('2', f);
                fclose(f);
            }
        }
        s = try_load(spare, &d);
        EXPECT_STATUS(s, k == 2 ? HARMONIA_ERR_UNSUPPORTED : HARMONIA_ERR_CORRUPT, NULL);
        EXPECT(strstr(harmonia_dist_last_error(NULL), "spare.hdm") != NULL, "%s manifest: %s", what[k],
               harmonia_dist_last_error(NULL));
        agree_checks();
    }

    /* a missing manifest; a missing, a damaged and a swapped shard file (then restored) */
    s = try_load("/nonexistent/x.hdm", &d);
    EXPECT_STATUS(s, HARMONIA_ERR_IO, NULL);
    agree_checks();
    const int last = world_size - 1;
    if (world_rank == 0) {
        shard_path(manifest, last, shard, sizeof shard);
        snprintf(shard2, sizeof shard2, "%s.moved", shard);
        assert_int_equal(rename(shard, shard2), 0);
    }
    s = try_load(manifest, &d);
    EXPECT_STATUS(s, HARMONIA_ERR_IO, NULL);
    char expected[64];
    snprintf(expected, sizeof expected, "rank %d: shard file", last);
    EXPECT(strncmp(harmonia_dist_last_error(NULL), expected, strlen(expected)) == 0, "missing shard: %s",
           harmonia_dist_last_error(NULL));
    agree_checks();
    if (world_rank == 0) {
        copy_file(shard2, shard);
        corrupt_byte(shard, 5000);
    }
    s = try_load(manifest, &d);
    EXPECT_STATUS(s, HARMONIA_ERR_CORRUPT, NULL);
    EXPECT(strstr(harmonia_dist_last_error(NULL), "checksum") != NULL, "damaged shard: %s",
           harmonia_dist_last_error(NULL));
    agree_checks();
    if (world_rank == 0)
        copy_file(shard2, shard);
    if (world_size > 1) {
        char other[1024], keep[1100];
        if (world_rank == 0) {
            shard_path(manifest, 0, other, sizeof other);
            snprintf(keep, sizeof keep, "%s.keep", other);
            copy_file(other, keep);
            copy_file(shard, other); /* shard 0's file now holds the last shard */
        }
        s = try_load(manifest, &d);
        EXPECT_STATUS(s, HARMONIA_ERR_CORRUPT, NULL);
        agree_checks();
        if (world_rank == 0)
            copy_file(keep, other);
    }
    s = try_load(manifest, &d);
    EXPECT_STATUS(s, HARMONIA_OK, NULL);
    agree_checks();
    expect_same_pairs(d, ref, 64);
    harmonia_dist_free(d);
    harmonia_free(ref);
    input_free(&mine);
    input_free(&all);
}

/* ---- the rebalance after updates ---------------------------------------------------------------- */

static void test_rebalance(void **state)
{
    (void)state;
    input mine;
    make_input(&mine, 64, D_DENSE, 2000, world_rank, 50);
    harmonia_dist *d = build_index(&mine, HARMONIA_DUPLICATES_REJECT);
    /* every rank inserts 3000 keys above everything: they all go to the last shard */
    uint64_t n = 3000;
    uint8_t *kinds = malloc(n);
    uint64_t *keys = malloc(n * 8), *values = malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) {
        kinds[i] = HARMONIA_OP_INSERT;
        keys[i] = 0x4000000000000000ull + (uint64_t)world_rank * n + i;
        values[i] = i;
    }
    EXPECT_STATUS(harmonia_dist_update(d, NULL, kinds, keys, values, n, NULL), HARMONIA_OK, d);
    agree_checks();
    uint64_t moved = 0;
    EXPECT_STATUS(harmonia_dist_rebalance(d, 0.05, &moved), HARMONIA_OK, d);
    agree_checks();
    harmonia_dist_info info;
    harmonia_dist_get_info(d, &info);
    double mean = (double)info.keys / world_size;
    EXPECT(info.largest_shard <= (uint64_t)(mean + 1) && info.smallest_shard + 1 >= (uint64_t)mean,
           "after the rebalance: shards of %llu to %llu keys, mean %.1f", (unsigned long long)info.smallest_shard,
           (unsigned long long)info.largest_shard, mean);
    EXPECT_STATUS(harmonia_dist_check(d), HARMONIA_OK, d);
    uint8_t *found = malloc(n);
    uint64_t *got = malloc(n * 8);
    EXPECT_STATUS(harmonia_dist_lookup(d, NULL, keys, n, got, found, NULL), HARMONIA_OK, d);
    for (uint64_t i = 0; i < n; i++)
        EXPECT(found[i] && got[i] == values[i], "key %llu after the rebalance", (unsigned long long)keys[i]);
    agree_checks();
    free(found);
    free(got);
    free(kinds);
    free(keys);
    free(values);
    harmonia_dist_free(d);
    input_free(&mine);
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LSAN_DISABLE() __lsan_disable()
#define LSAN_ENABLE() __lsan_enable()
#else
#define LSAN_DISABLE() ((void)0)
#define LSAN_ENABLE() ((void)0)
#endif

int main(int argc, char **argv)
{
    int provided;
    /* Open MPI's start and end leave allocations LeakSanitizer would report (not this code's) */
    LSAN_DISABLE();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    LSAN_ENABLE();
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size > 64) {
        if (world_rank == 0)
            printf("SKIP: at most 64 ranks\n");
        MPI_Finalize();
        return 77;
    }
    /* one temporary folder for all ranks (rank 0 makes it), cmocka's report from rank 0 only */
    if (world_rank == 0) {
        snprintf(tmp_dir, sizeof tmp_dir, "/tmp/harmonia-dist-test-XXXXXX");
        if (mkdtemp(tmp_dir) == NULL) {
            perror("mkdtemp");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Bcast(tmp_dir, sizeof tmp_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (world_rank != 0 && freopen("/dev/null", "w", stdout) == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_and_skewed),
        cmocka_unit_test(test_sampled_balance),
        cmocka_unit_test(test_duplicates_and_extremes),
        cmocka_unit_test(test_empty_ranks_and_rounds),
        cmocka_unit_test(test_collective_errors),
        cmocka_unit_test(test_updates),
        cmocka_unit_test(test_save_and_load),
        cmocka_unit_test(test_rebalance),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank == 0) {
        char command[512];
        snprintf(command, sizeof command, "rm -rf '%s'", tmp_dir);
        if (system(command) != 0)
            fprintf(stderr, "could not remove %s\n", tmp_dir);
    }
    LSAN_DISABLE();
    MPI_Finalize();
    LSAN_ENABLE();
    return failed;
}
