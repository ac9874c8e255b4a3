/* test_util.h — shared helpers of the cmocka tests: a seeded PRNG, key generators (uniform, dense,
 * clustered, with 0 and the maximum), and the plain sorted-array model every engine is checked
 * against. Header-only so that each test stays a small standalone program. */
#ifndef HARMONIA_TEST_UTIL_H
#define HARMONIA_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harmonia.h"
#include "util/mix.h"
#include "util/width.h"

/* The project's one copy of each: splitmix64 (util/mix.h), width-generic access (util/width.h). */
#define tu_next util_splitmix64
#define tu_mask util_max_of_width
#define tu_get util_load_width
#define tu_set util_store_width

static int tu_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef enum { TU_UNIFORM, TU_DENSE, TU_CLUSTERED, TU_EXTREMES, TU_DIST_COUNT } tu_dist;

/* The sorted-array model: n unique keys ascending, with their values (as uint64_t). */
typedef struct tu_model {
    uint32_t key_bits;
    uint64_t n;
    uint64_t *keys;
    uint64_t *values;
} tu_model;

/* Fills a model with n unique keys of the given distribution (n may come out smaller for tiny
 * domains; never for the sizes the tests use). Values are random. */
static inline void tu_model_make(tu_model *m, uint32_t key_bits, uint64_t n, tu_dist dist, uint64_t *rng)
{
    const uint64_t mask = tu_mask(key_bits);
    uint64_t *keys = malloc((n + 2) * sizeof(uint64_t));
    assert_non_null(keys);
    uint64_t base = tu_next(rng) & mask;
    uint64_t gap = 1 + (tu_next(rng) % 3);
    for (uint64_t i = 0; i < n; i++) {
        switch (dist) {
        case TU_UNIFORM: keys[i] = tu_next(rng) & mask; break;
        case TU_DENSE: keys[i] = (base + i * gap) & mask; break;
        case TU_CLUSTERED: /* a few dense clusters far apart */
            keys[i] = ((tu_next(rng) % 8) * (mask / 8) + (tu_next(rng) % (4 * n + 16))) & mask;
            break;
        default: /* extremes: 0, the maximum and keys near both */
            keys[i] = (i % 2) ? (mask - (tu_next(rng) % (4 * n + 4))) : (tu_next(rng) % (4 * n + 4));
            break;
        }
    }
    if (n >= 2 && dist != TU_DENSE) { /* make sure 0 and the maximum show up often */
        if (tu_next(rng) % 2)
            keys[0] = 0;
        if (tu_next(rng) % 2)
            keys[1] = mask;
    }
    qsort(keys, n, sizeof(uint64_t), tu_cmp_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < n; i++)
        if (u == 0 || keys[i] != keys[u - 1])
            keys[u++] = keys[i];
    m->key_bits = key_bits;
    m->n = u;
    m->keys = keys;
    m->values = malloc((u + 1) * sizeof(uint64_t));
    assert_non_null(m->values);
    for (uint64_t i = 0; i < u; i++)
        m->values[i] = tu_next(rng) & mask;
}

static inline void tu_model_free(tu_model *m)
{
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/* Number of model keys < q. */
static inline uint64_t tu_model_rank(const tu_model *m, uint64_t q)
{
    uint64_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (m->keys[mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline uint64_t tu_model_range_count(const tu_model *m, uint64_t lo, uint64_t hi)
{
    if (lo > hi)
        return 0;
    uint64_t below_lo = tu_model_rank(m, lo);
    uint64_t up_to_hi = hi == tu_mask(m->key_bits) ? m->n : tu_model_rank(m, hi + 1);
    return up_to_hi - below_lo;
}

/* Copies the model into width-typed arrays, shuffled (so the build must sort). */
static inline void tu_model_arrays(const tu_model *m, void **keys_out, void **values_out, int shuffle,
                                   uint64_t *rng)
{
    size_t kb = m->key_bits / 8;
    void *k = malloc(m->n * kb + 8), *v = malloc(m->n * kb + 8);
    assert_non_null(k);
    assert_non_null(v);
    for (uint64_t i = 0; i < m->n; i++) {
        tu_set(k, m->key_bits, i, m->keys[i]);
        tu_set(v, m->key_bits, i, m->values[i]);
    }
    if (shuffle)
        for (uint64_t i = m->n; i > 1; i--) {
            uint64_t j = tu_next(rng) % i;
            uint64_t a = tu_get(k, m->key_bits, i - 1), b = tu_get(v, m->key_bits, i - 1);
            tu_set(k, m->key_bits, i - 1, tu_get(k, m->key_bits, j));
            tu_set(v, m->key_bits, i - 1, tu_get(v, m->key_bits, j));
            tu_set(k, m->key_bits, j, a);
            tu_set(v, m->key_bits, j, b);
        }
    *keys_out = k;
    *values_out = v;
}

/* A query key: a hit, a near miss, below the minimum, above the maximum, 0, the maximum, or random. */
static inline uint64_t tu_query_key(const tu_model *m, uint64_t *rng)
{
    const uint64_t mask = tu_mask(m->key_bits);
    uint64_t r = tu_next(rng);
    switch (r % 8) {
    case 0: case 1: case 2:
        return m->n ? m->keys[tu_next(rng) % m->n] : 0;
    case 3:
        return m->n ? (m->keys[tu_next(rng) % m->n] + 1) & mask : 1;
    case 4:
        return m->n ? (m->keys[tu_next(rng) % m->n] - 1) & mask : mask;
    case 5:
        return m->n && m->keys[0] > 0 ? tu_next(rng) % m->keys[0] : 0;
    case 6:
        return (r >> 8) % 2 ? mask : (m->n && m->keys[m->n - 1] < mask ? m->keys[m->n - 1] + 1 : mask);
    default:
        return tu_next(rng) & mask;
    }
}

#endif
