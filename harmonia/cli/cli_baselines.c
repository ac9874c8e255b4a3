/* cli_baselines.c — binary search over a sorted array, one query per iteration, OpenMP over the
 * queries: the baseline of `harmonia bench` and its check of every Harmonia result. The search is
 * the branch-free lower bound (a conditional move per step), the strong form of binary search. */
#include <omp.h>
#include <stddef.h>

#include "harmonia/cli/cli_baselines.h"

/* Index of the first key >= q among n sorted keys (n when none). */
#define DEFINE_LOWER_BOUND(NAME, TYPE)                                                          \
    static inline uint64_t NAME(const TYPE *keys, uint64_t n, TYPE q)                           \
    {                                                                                          \
        if (n == 0)                                                                            \
            return 0;                                                                          \
        const TYPE *base = keys;                                                               \
        uint64_t len = n;                                                                      \
        while (len > 1) {                                                                      \
            uint64_t half = len / 2;                                                           \
            base = base[half] < q ? base + half : base;                                        \
            len -= half;                                                                       \
        }                                                                                      \
        return (uint64_t)(base - keys) + (*base < q);                                          \
    }

DEFINE_LOWER_BOUND(lower_bound32, uint32_t)
DEFINE_LOWER_BOUND(lower_bound64, uint64_t)

static int thread_count(int threads)
{
    return threads > 0 ? threads : omp_get_max_threads();
}

#define DEFINE_LOOKUP(NAME, TYPE, LOWER_BOUND)                                                  \
    static void NAME(const TYPE *keys, const TYPE *values, uint64_t n, const TYPE *queries,     \
                     uint64_t count, TYPE *values_out, uint8_t *found_out, int threads)        \
    {                                                                                          \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                      \
        for (uint64_t i = 0; i < count; i++) {                                                 \
            TYPE q = queries[i];                                                               \
            uint64_t at = LOWER_BOUND(keys, n, q);                                             \
            int hit = at < n && keys[at] == q;                                                 \
            found_out[i] = (uint8_t)hit;                                                       \
            values_out[i] = hit ? values[at] : 0;                                              \
        }                                                                                      \
    }

DEFINE_LOOKUP(lookup32, uint32_t, lower_bound32)
DEFINE_LOOKUP(lookup64, uint64_t, lower_bound64)

void bl_lookup(uint32_t key_bits, const void *sorted_keys, const void *sorted_values, uint64_t n,
               const void *queries, uint64_t count, void *values_out, uint8_t *found_out,
               int threads)
{
    int t = thread_count(threads);
    if (key_bits == 32)
        lookup32(sorted_keys, sorted_values, n, queries, count, values_out, found_out, t);
    else
        lookup64(sorted_keys, sorted_values, n, queries, count, values_out, found_out, t);
}

#define DEFINE_LOWER_BOUND_BATCH(NAME, TYPE, LOWER_BOUND)                                      \
    static void NAME(const TYPE *keys, const TYPE *values, uint64_t n, const TYPE *queries,    \
                     uint64_t count, TYPE *keys_out, TYPE *values_out, uint8_t *found_out,     \
                     int threads)                                                              \
    {                                                                                          \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                      \
        for (uint64_t i = 0; i < count; i++) {                                                 \
            uint64_t at = LOWER_BOUND(keys, n, queries[i]);                                    \
            int hit = at < n;                                                                  \
            found_out[i] = (uint8_t)hit;                                                       \
            if (keys_out != NULL)                                                              \
                keys_out[i] = hit ? keys[at] : 0;                                              \
            if (values_out != NULL)                                                            \
                values_out[i] = hit ? values[at] : 0;                                          \
        }                                                                                      \
    }

DEFINE_LOWER_BOUND_BATCH(lower_bound_batch32, uint32_t, lower_bound32)
DEFINE_LOWER_BOUND_BATCH(lower_bound_batch64, uint64_t, lower_bound64)

void bl_lower_bound(uint32_t key_bits, const void *sorted_keys, const void *sorted_values,
                    uint64_t n, const void *queries, uint64_t count, void *keys_out,
                    void *values_out, uint8_t *found_out, int threads)
{
    int t = thread_count(threads);
    if (key_bits == 32)
        lower_bound_batch32(sorted_keys, sorted_values, n, queries, count, keys_out, values_out,
                            found_out, t);
    else
        lower_bound_batch64(sorted_keys, sorted_values, n, queries, count, keys_out, values_out,
                            found_out, t);
}

#define DEFINE_RANGE_COUNT(NAME, TYPE, LOWER_BOUND)                                            \
    static void NAME(const TYPE *keys, uint64_t n, const TYPE *lo, const TYPE *hi,             \
                     uint64_t count, uint64_t *counts_out, int threads)                        \
    {                                                                                          \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                      \
        for (uint64_t i = 0; i < count; i++) {                                                 \
            if (lo[i] > hi[i]) {                                                               \
                counts_out[i] = 0;                                                             \
                continue;                                                                      \
            }                                                                                  \
            uint64_t first = LOWER_BOUND(keys, n, lo[i]);                                      \
            uint64_t end = hi[i] == (TYPE)-1 ? n : LOWER_BOUND(keys, n, (TYPE)(hi[i] + 1));    \
            counts_out[i] = end - first;                                                       \
        }                                                                                      \
    }

DEFINE_RANGE_COUNT(range_count32, uint32_t, lower_bound32)
DEFINE_RANGE_COUNT(range_count64, uint64_t, lower_bound64)

void bl_range_count(uint32_t key_bits, const void *sorted_keys, uint64_t n, const void *lo,
                    const void *hi, uint64_t count, uint64_t *counts_out, int threads)
{
    int t = thread_count(threads);
    if (key_bits == 32)
        range_count32(sorted_keys, n, lo, hi, count, counts_out, t);
    else
        range_count64(sorted_keys, n, lo, hi, count, counts_out, t);
}
