/* kr_sort.c — the OpenMP-parallel, stable LSD radix sort of (key, value) pairs used by the bulk
 * build (and the updater's batch sort). Digits where every key agrees are skipped, so dense or
 * narrow key ranges cost fewer passes. Not a general sort API. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "key_region/key_region.h"

#define SORT_DIGIT_BITS 11
#define SORT_BUCKETS (1u << SORT_DIGIT_BITS)

/* One template per width: KEY_T is the key and value type. */
#define DEFINE_RADIX_SORT(KEY_T, NAME)                                                            \
    static harmonia_status NAME(KEY_T *keys, KEY_T *values, uint64_t count, int threads, kr_error *err) \
    {                                                                                             \
        if (count < 2)                                                                            \
            return HARMONIA_OK;                                                                   \
        int max_threads = kr_resolve_threads(threads);                                            \
        if (count < 65536)                                                                        \
            max_threads = 1;                                                                      \
        KEY_T differing = 0;                                                                      \
        const KEY_T first = keys[0];                                                              \
        _Pragma("omp parallel for reduction(|:differing) schedule(static) num_threads(max_threads)") \
        for (uint64_t i = 0; i < count; i++)                                                      \
            differing |= keys[i] ^ first;                                                         \
        if (differing == 0)                                                                       \
            return HARMONIA_OK;                                                                   \
        KEY_T *key_tmp = kr_malloc(count * sizeof(KEY_T));                                           \
        KEY_T *value_tmp = kr_malloc(count * sizeof(KEY_T));                                         \
        uint64_t *offsets = kr_malloc((size_t)max_threads * SORT_BUCKETS * sizeof(uint64_t));       \
        if (!key_tmp || !value_tmp || !offsets) {                                                 \
            free(key_tmp);                                                                        \
            free(value_tmp);                                                                      \
            free(offsets);                                                                        \
            kr_set_error(err, "out of memory sorting %llu pairs", (unsigned long long)count);    \
            return HARMONIA_ERR_NO_MEMORY;                                                        \
        }                                                                                         \
        KEY_T *src_k = keys, *src_v = values, *dst_k = key_tmp, *dst_v = value_tmp;               \
        for (unsigned shift = 0; shift < sizeof(KEY_T) * 8; shift += SORT_DIGIT_BITS) {           \
            if (((differing >> shift) & (SORT_BUCKETS - 1)) == 0)                                 \
                continue;                                                                         \
            _Pragma("omp parallel num_threads(max_threads)")                                      \
            {                                                                                     \
                int nt = omp_get_num_threads(), t = omp_get_thread_num();                         \
                uint64_t lo = count * (uint64_t)t / (uint64_t)nt;                                 \
                uint64_t hi = count * (uint64_t)(t + 1) / (uint64_t)nt;                           \
                uint64_t *mine = offsets + (size_t)t * SORT_BUCKETS;                              \
                memset(mine, 0, SORT_BUCKETS * sizeof(uint64_t));                                 \
                for (uint64_t i = lo; i < hi; i++)                                                \
                    mine[(src_k[i] >> shift) & (SORT_BUCKETS - 1)]++;                             \
                _Pragma("omp barrier")                                                            \
                _Pragma("omp single")                                                             \
                {                                                                                 \
                    uint64_t sum = 0;                                                             \
                    for (unsigned b = 0; b < SORT_BUCKETS; b++)                                   \
                        for (int u = 0; u < nt; u++) {                                            \
                            uint64_t c = offsets[(size_t)u * SORT_BUCKETS + b];                   \
                            offsets[(size_t)u * SORT_BUCKETS + b] = sum;                          \
                            sum += c;                                                             \
                        }                                                                         \
                }                                                                                 \
                for (uint64_t i = lo; i < hi; i++) {                                              \
                    uint64_t pos = mine[(src_k[i] >> shift) & (SORT_BUCKETS - 1)]++;              \
                    dst_k[pos] = src_k[i];                                                        \
                    dst_v[pos] = src_v[i];                                                        \
                }                                                                                 \
            }                                                                                     \
            KEY_T *swap = src_k;                                                                  \
            src_k = dst_k;                                                                        \
            dst_k = swap;                                                                         \
            swap = src_v;                                                                         \
            src_v = dst_v;                                                                        \
            dst_v = swap;                                                                         \
        }                                                                                         \
        if (src_k != keys) {                                                                      \
            memcpy(keys, src_k, count * sizeof(KEY_T));                                           \
            memcpy(values, src_v, count * sizeof(KEY_T));                                         \
        }                                                                                         \
        free(key_tmp);                                                                            \
        free(value_tmp);                                                                          \
        free(offsets);                                                                            \
        return HARMONIA_OK;                                                                       \
    }

DEFINE_RADIX_SORT(uint32_t, radix_sort_u32)
DEFINE_RADIX_SORT(uint64_t, radix_sort_u64)

harmonia_status kr_sort_pairs(uint32_t key_bits, void *keys, void *values, uint64_t count,
                              int threads, kr_error *err)
{
    return key_bits == 32 ? radix_sort_u32(keys, values, count, threads, err)
                          : radix_sort_u64(keys, values, count, threads, err);
}
