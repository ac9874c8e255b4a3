/* cli_data.c — synthetic keys, queries, ranges and update batches for `generate` and `bench`,
 * the seeded generator behind them, and the sort of keys with their values (key_region's radix
 * sort, the one copy). No file handling here. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_data.h"
#include "cli_io.h"
#include "key_region/key_region.h"
#include "util/mix.h"

const char *const cli_key_dist_names[] = {"uniform", "dense", "normal", "zipf", NULL};

/* ---- the generator ------------------------------------------------------------------------- */

void cli_rng_seed(cli_rng *rng, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        rng->state[i] = util_splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cli_rng_next(cli_rng *rng)
{
    uint64_t *s = rng->state;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t cli_rng_below(cli_rng *rng, uint64_t bound)
{
    unsigned __int128 m = (unsigned __int128)cli_rng_next(rng) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (unsigned __int128)cli_rng_next(rng) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double cli_rng_unit(cli_rng *rng)
{
    return (double)(cli_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi], lo <= hi, the full 64-bit range included. */
static uint64_t rng_between(cli_rng *rng, uint64_t lo, uint64_t hi)
{
    if (hi - lo == UINT64_MAX)
        return cli_rng_next(rng);
    return lo + cli_rng_below(rng, hi - lo + 1);
}

/* A standard normal deviate (Box-Muller; one of the pair is dropped for simplicity). */
static double rng_normal(cli_rng *rng)
{
    double u1 = 1.0 - cli_rng_unit(rng); /* (0, 1] */
    double u2 = cli_rng_unit(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Zipf rank in [0, n) with exponent s > 0, by inverting the continuous approximation of the
 * generalized harmonic number. */
static uint64_t rng_zipf(cli_rng *rng, uint64_t n, double s)
{
    double u = cli_rng_unit(rng);
    double x;
    double top = (double)n + 1.0;
    if (fabs(s - 1.0) < 1e-9) {
        x = exp(u * log(top));
    } else {
        double h = (pow(top, 1.0 - s) - 1.0) / (1.0 - s);
        x = pow(1.0 + u * h * (1.0 - s), 1.0 / (1.0 - s));
    }
    uint64_t rank = x < 1.0 ? 0 : (uint64_t)x - 1;
    return rank >= n ? n - 1 : rank;
}

/* ---- sorting ------------------------------------------------------------------------------- */

int cli_sort_pairs(void *keys, void *values, uint64_t n, uint32_t key_bits)
{
    if (n < 2)
        return 0;
    /* keys alone: positions ride along as the values (the sort moves pairs) */
    void *scratch = values ? NULL : malloc(n * (key_bits / 8));
    if (!values && !scratch)
        return cli_error("out of memory sorting %llu keys", (unsigned long long)n);
    kr_error err;
    harmonia_status st = kr_sort_pairs(key_bits, keys, values ? values : scratch, n, 0, &err);
    free(scratch);
    if (st != HARMONIA_OK)
        return cli_error("%s", err.message);
    return 0;
}

void cli_shuffle(void *array, uint64_t count, uint32_t key_bits, cli_rng *rng)
{
    for (uint64_t i = count; i > 1; i--) {
        uint64_t j = cli_rng_below(rng, i);
        uint64_t a = cli_get(array, key_bits, i - 1);
        cli_set(array, key_bits, i - 1, cli_get(array, key_bits, j));
        cli_set(array, key_bits, j, a);
    }
}

uint64_t cli_lower_bound(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t key)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cli_get(sorted_keys, key_bits, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorts the first n keys and removes repeats; returns the number left. */
static uint64_t sort_unique(void *keys, uint64_t n, uint32_t key_bits)
{
    if (cli_sort_pairs(keys, NULL, n, key_bits) != 0)
        return UINT64_MAX;
    uint64_t unique = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = cli_get(keys, key_bits, i);
        if (unique == 0 || cli_get(keys, key_bits, unique - 1) != k)
            cli_set(keys, key_bits, unique++, k);
    }
    return unique;
}

/* ---- keys ---------------------------------------------------------------------------------- */

uint64_t cli_gen_keys_limit(cli_key_dist dist, uint32_t key_bits)
{
    if (key_bits == 64)
        return (uint64_t)1 << 40; /* far beyond memory anyway */
    switch (dist) {
    case CLI_DIST_DENSE: return (uint64_t)1 << 32;
    case CLI_DIST_UNIFORM: return (uint64_t)1 << 31;
    default: return (uint64_t)1 << 28;
    }
}

typedef struct zipf_clusters {
    uint64_t count;
    double *cumulative; /* cumulative[c] = weight of clusters 0 .. c, normalised to 1 */
    uint64_t *base;
    uint64_t *span;
} zipf_clusters;

static int zipf_clusters_init(zipf_clusters *z, uint64_t count, uint32_t key_bits, cli_rng *rng)
{
    uint64_t max = cli_max_key(key_bits);
    uint64_t clusters = count / 256;
    if (clusters < 1)
        clusters = 1;
    if (clusters > 4096)
        clusters = 4096;
    z->count = clusters;
    z->cumulative = malloc(clusters * sizeof *z->cumulative);
    z->base = malloc(clusters * sizeof *z->base);
    z->span = malloc(clusters * sizeof *z->span);
    if (z->cumulative == NULL || z->base == NULL || z->span == NULL)
        return cli_error("out of memory");
    double total = 0.0;
    for (uint64_t c = 0; c < clusters; c++)
        total += 1.0 / (double)(c + 1);
    double sum = 0.0;
    for (uint64_t c = 0; c < clusters; c++) {
        double weight = 1.0 / (double)(c + 1) / total;
        sum += weight;
        z->cumulative[c] = sum;
        /* about 4 slots per expected key, so that a cluster is dense but draws still find room */
        double span = ceil(4.0 * (double)count * weight);
        uint64_t s = span < 64.0 ? 64 : (uint64_t)span;
        if (s > max / 4)
            s = max / 4;
        z->span[c] = s;
        z->base[c] = rng_between(rng, 0, max - s);
    }
    z->cumulative[clusters - 1] = 1.0;
    return 0;
}

static void zipf_clusters_free(zipf_clusters *z)
{
    free(z->cumulative);
    free(z->base);
    free(z->span);
}

static uint64_t zipf_clusters_draw(const zipf_clusters *z, cli_rng *rng)
{
    double u = cli_rng_unit(rng);
    uint64_t lo = 0, hi = z->count - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (z->cumulative[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return z->base[lo] + cli_rng_below(rng, z->span[lo]);
}

static uint64_t normal_draw(cli_rng *rng, uint32_t key_bits, uint64_t count)
{
    uint64_t max = cli_max_key(key_bits);
    uint64_t center = max / 2;
    double sigma = 8.0 * (double)count;
    if (sigma < 64.0)
        sigma = 64.0;
    if (sigma > (double)(max / 8))
        sigma = (double)(max / 8);
    for (;;) {
        double offset = rng_normal(rng) * sigma;
        if (fabs(offset) >= (double)(max / 2))
            continue; /* outside the domain: draw again */
        int64_t delta = (int64_t)llround(offset);
        return delta >= 0 ? center + (uint64_t)delta : center - (uint64_t)(-delta);
    }
}

int cli_gen_keys(cli_key_dist dist, uint32_t key_bits, uint64_t count, uint64_t seed,
                 void **keys_out, cli_progress *progress)
{
    *keys_out = NULL;
    uint64_t limit = cli_gen_keys_limit(dist, key_bits);
    if (count > limit)
        return cli_error("%llu %s keys of %u bits are more than this generator draws (at most "
                         "%llu)", (unsigned long long)count, cli_key_dist_names[dist], key_bits,
                         (unsigned long long)limit);
    size_t width = key_bits / 8;
    void *keys = malloc(count > 0 ? count * width : width);
    if (keys == NULL)
        return cli_error("out of memory for %llu keys", (unsigned long long)count);
    cli_rng rng;
    cli_rng_seed(&rng, seed);
    uint64_t max = cli_max_key(key_bits);

    if (dist == CLI_DIST_DENSE) {
        uint64_t offset = count == 0 ? 0 : rng_between(&rng, 0, max - (count - 1));
        for (uint64_t i = 0; i < count; i++)
            cli_set(keys, key_bits, i, offset + i);
        cli_shuffle(keys, count, key_bits, &rng);
        *keys_out = keys;
        return 0;
    }

    zipf_clusters clusters = {0, NULL, NULL, NULL};
    if (dist == CLI_DIST_ZIPF && count > 0 &&
        zipf_clusters_init(&clusters, count, key_bits, &rng) != 0) {
        zipf_clusters_free(&clusters);
        free(keys);
        return CLI_EXIT_FAIL;
    }
    /* Draw, sort, drop repeats, draw what is missing, until count distinct keys. */
    uint64_t have = 0;
    int rounds = 0;
    while (have < count) {
        if (++rounds > 200) {
            zipf_clusters_free(&clusters);
            free(keys);
            return cli_error("could not draw %llu distinct %s keys", (unsigned long long)count,
                             cli_key_dist_names[dist]);
        }
        for (uint64_t i = have; i < count; i++) {
            uint64_t k;
            if (dist == CLI_DIST_UNIFORM)
                k = cli_rng_next(&rng) & max;
            else if (dist == CLI_DIST_NORMAL)
                k = normal_draw(&rng, key_bits, count);
            else
                k = zipf_clusters_draw(&clusters, &rng);
            cli_set(keys, key_bits, i, k);
            if ((i & 0xfffff) == 0)
                cli_progress_update(progress, "generating", (double)i / (double)count);
        }
        /* In the first round, sort a copy: when the draws hold no repeat (the usual case for
         * 64-bit keys) they are kept in the order drawn, which is already random. */
        void *sorted = rounds == 1 ? malloc(count * width) : NULL;
        if (sorted != NULL)
            memcpy(sorted, keys, count * width);
        have = sort_unique(sorted != NULL ? sorted : keys, count, key_bits);
        if (have == UINT64_MAX) {
            zipf_clusters_free(&clusters);
            free(keys);
            free(sorted);
            return CLI_EXIT_FAIL;
        }
        if (sorted != NULL && have == count) {
            free(sorted);
            zipf_clusters_free(&clusters);
            cli_progress_update(progress, "generating", 1.0);
            *keys_out = keys;
            return 0;
        }
        if (sorted != NULL) {
            free(keys);
            keys = sorted;
        }
    }
    zipf_clusters_free(&clusters);
    cli_shuffle(keys, count, key_bits, &rng);
    cli_progress_update(progress, "generating", 1.0);
    *keys_out = keys;
    return 0;
}

/* ---- queries and ranges -------------------------------------------------------------------- */

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int cli_gen_queries(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                    double hit_rate, double zipf_s, uint64_t seed, void **queries_out)
{
    *queries_out = NULL;
    uint64_t hits = (uint64_t)llround(hit_rate * (double)count);
    if (hits > count)
        hits = count;
    uint64_t misses = count - hits;
    uint64_t max = cli_max_key(key_bits);
    if (hits > 0 && n == 0)
        return cli_error("the key file is empty: no key to hit (use --hit-rate 0)");
    if (misses > 0 && n > 0 && n - 1 == max)
        return cli_error("the key file holds every %u-bit key: no key to miss (use --hit-rate 1)",
                         key_bits);
    size_t width = key_bits / 8;
    void *queries = malloc(count > 0 ? count * width : width);
    if (queries == NULL)
        return cli_error("out of memory for %llu queries", (unsigned long long)count);
    cli_rng rng;
    cli_rng_seed(&rng, seed);

    /* Hits: rank r (uniform or Zipf) through a random bijection of [0, n), so that popular keys
     * are spread over the key space. */
    uint64_t multiplier = 1, shift = 0;
    if (n > 1) {
        do
            multiplier = cli_rng_below(&rng, n - 1) + 1;
        while (gcd_u64(multiplier, n) != 1);
        shift = cli_rng_below(&rng, n);
    }
    for (uint64_t i = 0; i < hits; i++) {
        uint64_t rank = zipf_s > 0.0 ? rng_zipf(&rng, n, zipf_s) : cli_rng_below(&rng, n);
        uint64_t index = (uint64_t)(((unsigned __int128)rank * multiplier + shift) % n);
        cli_set(queries, key_bits, i, cli_get(sorted_keys, key_bits, index));
    }

    /* Misses: inside the keys' span when at least 1 % of it is free, else anywhere. */
    uint64_t lo = 0, hi = max;
    if (n > 0) {
        uint64_t first = cli_get(sorted_keys, key_bits, 0);
        uint64_t last = cli_get(sorted_keys, key_bits, n - 1);
        uint64_t free_slots = last - first - (n - 1);
        if (free_slots > 0 && (double)free_slots >= 0.01 * ((double)(last - first) + 1.0)) {
            lo = first;
            hi = last;
        }
    }
    for (uint64_t i = hits; i < count; i++) {
        uint64_t candidate;
        uint64_t tries = 0;
        for (;;) {
            candidate = rng_between(&rng, lo, hi);
            uint64_t at = cli_lower_bound(sorted_keys, n, key_bits, candidate);
            if (at == n || cli_get(sorted_keys, key_bits, at) != candidate)
                break;
            if (++tries == 100000) {
                free(queries);
                return cli_error("could not find keys missing from the key file (it is "
                                 "nearly full); use a higher --hit-rate");
            }
        }
        cli_set(queries, key_bits, i, candidate);
    }
    cli_shuffle(queries, count, key_bits, &rng);
    *queries_out = queries;
    return 0;
}

int cli_gen_ranges(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                   uint64_t length, uint64_t seed, void **lo_out, void **hi_out)
{
    *lo_out = *hi_out = NULL;
    if (n == 0 && count > 0)
        return cli_error("the key file is empty: no key to start a range at");
    if (length == 0)
        length = 1;
    size_t width = key_bits / 8;
    void *lo = malloc(count > 0 ? count * width : width);
    void *hi = malloc(count > 0 ? count * width : width);
    if (lo == NULL || hi == NULL) {
        free(lo);
        free(hi);
        return cli_error("out of memory for %llu ranges", (unsigned long long)count);
    }
    cli_rng rng;
    cli_rng_seed(&rng, seed);
    uint64_t max = cli_max_key(key_bits);
    for (uint64_t r = 0; r < count; r++) {
        uint64_t first = cli_rng_below(&rng, n);
        uint64_t last = first + length - 1; /* length >= 1 */
        if (last >= n || last < first)
            last = n - 1;
        uint64_t lo_key = cli_get(sorted_keys, key_bits, first);
        uint64_t hi_key = cli_get(sorted_keys, key_bits, last);
        if (cli_rng_next(&rng) & 1) {
            /* move lo down into the gap before the first key and hi up into the gap after the
             * last, keeping the same keys inside */
            uint64_t before = first > 0 ? cli_get(sorted_keys, key_bits, first - 1) + 1 : 0;
            uint64_t after = last + 1 < n ? cli_get(sorted_keys, key_bits, last + 1) - 1 : max;
            lo_key = rng_between(&rng, before, lo_key);
            hi_key = rng_between(&rng, hi_key, after);
        }
        cli_set(lo, key_bits, r, lo_key);
        cli_set(hi, key_bits, r, hi_key);
    }
    *lo_out = lo;
    *hi_out = hi;
    return 0;
}

/* ---- update operations --------------------------------------------------------------------- */

const char *const cli_ops_mix_names[] = {"paper", "insert", "delete", "mixed", NULL};

/* Fills out[0 .. m) with m distinct keys that are not among the n sorted keys, in ascending
 * order: drawn within the keys' span when it has room to spare, else over the whole domain.
 * Returns 0 or CLI_EXIT_FAIL after a message. */
static int draw_new_keys(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t m,
                         cli_rng *rng, void *out)
{
    uint64_t max = cli_max_key(key_bits);
    uint64_t free_total = n == 0 ? max : max - (n - 1); /* one short for an empty 64-bit file */
    if (m > free_total)
        return cli_error("%llu new keys are more than the %llu that the key file leaves free",
                         (unsigned long long)m, (unsigned long long)free_total);
    uint64_t lo = 0, hi = max;
    if (n > 0) {
        uint64_t first = cli_get(sorted_keys, key_bits, 0);
        uint64_t last = cli_get(sorted_keys, key_bits, n - 1);
        uint64_t free_in_span = last - first - (n - 1);
        if (m <= free_in_span / 2 &&
            (double)free_in_span >= 0.01 * ((double)(last - first) + 1.0)) {
            lo = first;
            hi = last;
        }
    }
    uint64_t have = 0;
    for (int rounds = 0; have < m; rounds++) {
        if (rounds == 200)
            return cli_error("could not draw %llu distinct keys missing from the key file",
                             (unsigned long long)m);
        for (uint64_t i = have; i < m; i++) {
            uint64_t candidate;
            for (uint64_t tries = 0;; tries++) {
                if (tries == 1000000)
                    return cli_error("could not find keys missing from the key file (it is "
                                     "nearly full)");
                candidate = rng_between(rng, lo, hi);
                uint64_t at = cli_lower_bound(sorted_keys, n, key_bits, candidate);
                if (at == n || cli_get(sorted_keys, key_bits, at) != candidate)
                    break;
            }
            cli_set(out, key_bits, i, candidate);
        }
        have = sort_unique(out, m, key_bits);
        if (have == UINT64_MAX)
            return CLI_EXIT_FAIL;
    }
    return 0;
}

/* Fills out[0 .. m) with m distinct keys of the n sorted keys, chosen at random (a partial
 * Fisher-Yates shuffle of a copy). m <= n. Returns 0 or CLI_EXIT_FAIL after a message. */
static int pick_existing_keys(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t m,
                              cli_rng *rng, void *out)
{
    size_t width = key_bits / 8;
    void *copy = malloc(n > 0 ? n * width : width);
    if (copy == NULL)
        return cli_error("out of memory for %llu keys", (unsigned long long)n);
    memcpy(copy, sorted_keys, n * width);
    for (uint64_t i = 0; i < m; i++) {
        uint64_t j = i + cli_rng_below(rng, n - i);
        uint64_t picked = cli_get(copy, key_bits, j);
        cli_set(copy, key_bits, j, cli_get(copy, key_bits, i));
        cli_set(out, key_bits, i, picked);
    }
    free(copy);
    return 0;
}

int cli_gen_ops(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                cli_ops_mix mix, uint64_t seed, cli_ops *out)
{
    memset(out, 0, sizeof *out);
    size_t width = key_bits / 8;
    uint64_t max = cli_max_key(key_bits);
    uint64_t inserts = 0, existing = 0; /* for paper, insert, delete: new keys, existing keys */
    switch (mix) {
    case CLI_MIX_PAPER:
        inserts = (uint64_t)llround(0.05 * (double)count);
        existing = count - inserts;
        if (existing > n)
            return cli_error("--mix paper: %llu updates of distinct keys need as many keys; the "
                             "key file has %llu", (unsigned long long)existing,
                             (unsigned long long)n);
        break;
    case CLI_MIX_INSERT: inserts = count; break;
    case CLI_MIX_DELETE:
        existing = count;
        if (existing > n)
            return cli_error("--mix delete: %llu deletes of distinct keys need as many keys; the "
                             "key file has %llu", (unsigned long long)existing,
                             (unsigned long long)n);
        break;
    case CLI_MIX_MIXED: /* a pool of new keys for about a quarter of the operations */
        inserts = count == 0 ? 0 : count / 4 + 1;
        break;
    }
    out->key_bits = key_bits;
    out->count = count;
    out->kinds = malloc(count > 0 ? count : 1);
    out->keys = malloc(count > 0 ? count * width : width);
    out->values = malloc(count > 0 ? count * width : width);
    void *new_keys = malloc(inserts > 0 ? inserts * width : width);
    if (out->kinds == NULL || out->keys == NULL || out->values == NULL || new_keys == NULL) {
        free(new_keys);
        cli_ops_free(out);
        return cli_error("out of memory for %llu operations", (unsigned long long)count);
    }
    cli_rng rng;
    cli_rng_seed(&rng, seed);
    int status = draw_new_keys(sorted_keys, n, key_bits, inserts, &rng, new_keys);
    if (status == 0 && mix != CLI_MIX_MIXED) {
        /* new keys first (inserts), then existing ones (updates or deletes); shuffled below */
        memcpy(out->keys, new_keys, inserts * width);
        memset(out->kinds, HARMONIA_OP_INSERT, inserts);
        memset(out->kinds + inserts,
               mix == CLI_MIX_DELETE ? HARMONIA_OP_DELETE : HARMONIA_OP_UPDATE, existing);
        status = pick_existing_keys(sorted_keys, n, key_bits, existing, &rng,
                                    (char *)out->keys + inserts * width);
    } else if (status == 0) {
        /* mixed: 25 % inserts, 25 % updates, 20 % upserts, 30 % deletes; 10 % of the operations
         * name the key of another operation of the batch, half of the rest a key of the file and
         * the rest a new key (so inserts meet present keys and updates and deletes missing ones) */
        for (uint64_t i = 0; i < count; i++) {
            uint64_t r = cli_rng_below(&rng, 100);
            out->kinds[i] = r < 25   ? HARMONIA_OP_INSERT
                            : r < 50 ? HARMONIA_OP_UPDATE
                            : r < 70 ? HARMONIA_OP_UPSERT
                                     : HARMONIA_OP_DELETE;
            uint64_t source = cli_rng_below(&rng, 100);
            uint64_t key;
            if (i > 0 && source < 10)
                key = cli_get(out->keys, key_bits, cli_rng_below(&rng, i));
            else if (n > 0 && source < 55)
                key = cli_get(sorted_keys, key_bits, cli_rng_below(&rng, n));
            else
                key = cli_get(new_keys, key_bits, cli_rng_below(&rng, inserts));
            cli_set(out->keys, key_bits, i, key);
        }
    }
    free(new_keys);
    if (status != 0) {
        cli_ops_free(out);
        return status;
    }
    for (uint64_t i = 0; i < count; i++)
        cli_set(out->values, key_bits, i,
                out->kinds[i] == HARMONIA_OP_DELETE ? 0 : cli_rng_next(&rng) & max);
    /* random order: Fisher-Yates over the three arrays together */
    for (uint64_t i = count; i > 1; i--) {
        uint64_t j = cli_rng_below(&rng, i);
        uint8_t kind = out->kinds[i - 1];
        out->kinds[i - 1] = out->kinds[j];
        out->kinds[j] = kind;
        for (int column = 0; column < 2; column++) {
            void *array = column == 0 ? out->keys : out->values;
            uint64_t a = cli_get(array, key_bits, i - 1);
            cli_set(array, key_bits, i - 1, cli_get(array, key_bits, j));
            cli_set(array, key_bits, j, a);
        }
    }
    return 0;
}
