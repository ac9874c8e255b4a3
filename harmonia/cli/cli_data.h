/* cli_data.h — synthetic data for `harmonia generate` and `harmonia bench`: a seeded xoshiro256**
 * generator, distinct keys of four distributions, queries with a hit rate, ranges of a given
 * length, update batches of four mixes, and a radix sort of keys (with their values). Files are
 * written elsewhere (cli_io). */
#ifndef HARMONIA_CLI_DATA_H
#define HARMONIA_CLI_DATA_H

#include <stdint.h>

#include "cli_progress.h"

typedef struct cli_rng {
    uint64_t state[4];
} cli_rng;

/* Seeds xoshiro256** from splitmix64(seed): every seed, 0 included, gives a good state. */
void cli_rng_seed(cli_rng *rng, uint64_t seed);
uint64_t cli_rng_next(cli_rng *rng);
/* Uniform in [0, bound); bound > 0 (Lemire's multiply-shift with rejection). */
uint64_t cli_rng_below(cli_rng *rng, uint64_t bound);
/* Uniform in [0, 1). */
double cli_rng_unit(cli_rng *rng);

typedef enum cli_key_dist {
    CLI_DIST_UNIFORM = 0, /* uniform over the whole key domain */
    CLI_DIST_DENSE,       /* a random offset + 0 .. count-1 */
    CLI_DIST_NORMAL,      /* clustered around the middle of the domain, sigma ~ 8 x count */
    CLI_DIST_ZIPF,        /* clusters whose sizes follow a Zipf law (s = 1) at random places */
} cli_key_dist;

/* "uniform", "dense", "normal", "zipf", NULL (index = cli_key_dist). */
extern const char *const cli_key_dist_names[];

/* The most keys cli_gen_keys draws for dist at key_bits (the domain must leave room to draw
 * distinct keys in reasonable time). */
uint64_t cli_gen_keys_limit(cli_key_dist dist, uint32_t key_bits);

/* Fills *keys_out (malloc'd, count keys of key_bits width) with count distinct keys of dist, in a
 * random order, deterministic for a seed. Returns 0, or CLI_EXIT_FAIL after a message (out of
 * memory, count above cli_gen_keys_limit). */
int cli_gen_keys(cli_key_dist dist, uint32_t key_bits, uint64_t count, uint64_t seed,
                 void **keys_out, cli_progress *progress);

/* Queries from the n distinct sorted keys: round(hit_rate * count) hits drawn from the keys
 * (uniformly, or with Zipf skew s when zipf_s > 0: popular keys at random places), the rest misses
 * (values not among the keys, drawn within the keys' span when it has room, else the domain), in
 * random order. Returns 0 or CLI_EXIT_FAIL after a message. */
int cli_gen_queries(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                    double hit_rate, double zipf_s, uint64_t seed, void **queries_out);

/* count ranges [lo, hi] over the n sorted keys, each holding exactly min(length, keys from its
 * start to the end) keys; half of them have bounds moved off the keys into the gaps around them.
 * n > 0. Returns 0 or CLI_EXIT_FAIL after a message. */
int cli_gen_ranges(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                   uint64_t length, uint64_t seed, void **lo_out, void **hi_out);

/* Sorts keys ascending (LSD radix sort, stable), moving values (may be NULL) with them. Both of
 * key_bits width. Returns 0, or CLI_EXIT_FAIL after a message when the scratch allocation fails. */
int cli_sort_pairs(void *keys, void *values, uint64_t n, uint32_t key_bits);

/* Shuffles count elements of key_bits width in place (Fisher-Yates). */
void cli_shuffle(void *array, uint64_t count, uint32_t key_bits, cli_rng *rng);

/* Index of the first of the n sorted keys that is >= key (n when none). */
uint64_t cli_lower_bound(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t key);

/* ---- update batches ------------------------------------------------------------------------ */
typedef enum cli_ops_mix {
    CLI_MIX_PAPER = 0, /* 5 % inserts of new keys, 95 % updates of distinct present keys */
    CLI_MIX_INSERT,    /* inserts of distinct new keys */
    CLI_MIX_DELETE,    /* deletes of distinct present keys */
    CLI_MIX_MIXED,     /* all four kinds, present and missing keys, keys repeated in the batch */
} cli_ops_mix;

/* "paper", "insert", "delete", "mixed", NULL (index = cli_ops_mix). */
extern const char *const cli_ops_mix_names[];

struct cli_ops;

/* Fills *out (allocated here; free with cli_ops_free) with count operations against the n
 * distinct sorted keys, in random order, deterministic for a seed. New keys are distinct and
 * absent from the keys (within their span when it has room), so that paper, insert and delete
 * batches apply under the strict policies; mixed batches need --insert-existing upsert and
 * --update-missing skip. Values are random; deletes carry 0. Returns 0, or CLI_EXIT_FAIL after a
 * message (more distinct present keys asked for than there are, no room for new keys, out of
 * memory). */
int cli_gen_ops(const void *sorted_keys, uint64_t n, uint32_t key_bits, uint64_t count,
                cli_ops_mix mix, uint64_t seed, struct cli_ops *out);

#endif /* HARMONIA_CLI_DATA_H */
