/* kr_sort.c — the OpenMP-parallel, stable radix sort of (key, value) pairs used by the bulk build
 * (kr_sort_pairs_visit: each sorted bucket handed to the caller while it is in cache) and by
 * kr_sort_pairs (sorted in place). The algorithm, an MSD pass over DRAM then in-cache passes per
 * bucket, is kr_sort_impl.h's. Not a general sort API. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "key_region/key_region.h"

typedef struct pair_src64 {
    const uint64_t *keys, *values; /* values NULL: the positions */
} pair_src64;

typedef struct pair_src32 {
    const uint32_t *keys, *values;
} pair_src32;

#define KS_REC kr_pair64
#define KS_KEY_T uint64_t
#define KS_SRC pair_src64
#define KS_SRC_KEY(s, i) ((s)->keys[i])
#define KS_SRC_REC(s, i) ((kr_pair64){(s)->keys[i], (s)->values ? (s)->values[i] : (uint64_t)(i)})
#define KS_FN(name) ks64_##name
#define KS_LOCAL KR_SORT_LOCAL_PAIRS64
#include "key_region/kr_sort_impl.h"
#undef KS_REC
#undef KS_KEY_T
#undef KS_SRC
#undef KS_SRC_KEY
#undef KS_SRC_REC
#undef KS_FN
#undef KS_LOCAL
#undef KS_SMALL
#undef KS_MAX_DIGIT
#undef KS_LOCAL_DIGIT
#undef KS_THREAD_BUCKET

#define KS_REC kr_pair32
#define KS_KEY_T uint32_t
#define KS_SRC pair_src32
#define KS_SRC_KEY(s, i) ((s)->keys[i])
#define KS_SRC_REC(s, i) ((kr_pair32){(s)->keys[i], (s)->values ? (s)->values[i] : (uint32_t)(i)})
#define KS_FN(name) ks32_##name
#define KS_LOCAL KR_SORT_LOCAL_PAIRS32
#include "key_region/kr_sort_impl.h"

harmonia_status kr_sort_pairs_visit(uint32_t key_bits, const void *keys, const void *values, uint64_t count,
                                    void *records, kr_sort_visit_fn visit, void *arg, int threads, kr_error *err)
{
    threads = count > KR_PARALLEL_MIN ? kr_resolve_threads(threads) : 1;
    const size_t rec_bytes = key_bits == 32 ? sizeof(kr_pair32) : sizeof(kr_pair64);
    const size_t local = key_bits == 32 ? KR_SORT_LOCAL_PAIRS32 : KR_SORT_LOCAL_PAIRS64;
    const uint64_t per_thread = count < local ? (count ? count : 1) : local;
    void *scratch = kr_malloc((size_t)threads * per_thread * rec_bytes);
    if (!scratch) {
        kr_set_error(err, "out of memory sorting %llu pairs", (unsigned long long)count);
        return HARMONIA_ERR_NO_MEMORY;
    }
    harmonia_status st;
    if (key_bits == 32) {
        pair_src32 src = {keys, values};
        ks32_ctx c = {scratch, threads, visit, arg, false};
        st = ks32_partition(&c, &src, NULL, count, 32, records, NULL, 0);
    } else {
        pair_src64 src = {keys, values};
        ks64_ctx c = {scratch, threads, visit, arg, false};
        st = ks64_partition(&c, &src, NULL, count, 64, records, NULL, 0);
    }
    free(scratch);
    if (st != HARMONIA_OK)
        kr_set_error(err, "out of memory sorting %llu pairs", (unsigned long long)count);
    return st;
}

/* kr_sort_pairs' visitor: each sorted bucket back into the caller's two arrays. */
typedef struct unpack_arg {
    void *keys, *values;
} unpack_arg;

static void unpack64(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread)
{
    const unpack_arg *a = arg;
    const kr_pair64 *p = sorted;
    uint64_t *k = (uint64_t *)a->keys + begin, *v = (uint64_t *)a->values + begin;
    for (uint64_t i = 0; i < count; i++) {
        k[i] = p[i].key;
        v[i] = p[i].value;
    }
}

static void unpack32(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread)
{
    const unpack_arg *a = arg;
    const kr_pair32 *p = sorted;
    uint32_t *k = (uint32_t *)a->keys + begin, *v = (uint32_t *)a->values + begin;
    for (uint64_t i = 0; i < count; i++) {
        k[i] = p[i].key;
        v[i] = p[i].value;
    }
}

harmonia_status kr_sort_pairs_into(uint32_t key_bits, const void *keys, const void *values, uint64_t count,
                                   void *keys_out, void *values_out, int threads, kr_error *err)
{
    if (count == 0)
        return HARMONIA_OK;
    void *records = kr_malloc(count * (key_bits == 32 ? sizeof(kr_pair32) : sizeof(kr_pair64)));
    if (!records) {
        kr_set_error(err, "out of memory sorting %llu pairs", (unsigned long long)count);
        return HARMONIA_ERR_NO_MEMORY;
    }
    unpack_arg a = {keys_out, values_out};
    /* the first pass reads every pair before any bucket is visited, so the output may be the input */
    harmonia_status st = kr_sort_pairs_visit(key_bits, keys, values, count, records,
                                             key_bits == 32 ? unpack32 : unpack64, &a, threads, err);
    free(records);
    return st;
}

harmonia_status kr_sort_pairs(uint32_t key_bits, void *keys, void *values, uint64_t count,
                              int threads, kr_error *err)
{
    return kr_sort_pairs_into(key_bits, keys, values, count, keys, values, threads, err);
}
