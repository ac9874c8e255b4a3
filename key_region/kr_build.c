/* kr_build.c — bulk build of the key region from pairs: validation of sorted input, the
 * duplicate policy, the even distribution of keys over leaves, the level plan and the internal
 * levels with the first-child array. OpenMP-parallel. The layout itself is in key_region.h. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "key_region/key_region.h"
#include "prefix_sum/prefix_sum.h"

void kr_tree_free_arrays(kr_tree *t)
{
    free(t->keys);
    free(t->leaf_values);
    free(t->first_child);
    free(t->leaf_rank);
    t->keys = t->leaf_values = NULL;
    t->first_child = NULL;
    t->leaf_rank = NULL;
}

/* First of the items given to part p when n items are shared as evenly as possible by n_parts. */
static inline uint64_t even_start(uint64_t n, uint64_t n_parts, uint64_t p)
{
    uint64_t base = n / n_parts, extra = n % n_parts;
    return p * base + (p < extra ? p : extra);
}

harmonia_status kr_plan_levels(kr_tree *t, kr_error *err)
{
    uint64_t sizes[KR_MAX_LEVELS];
    uint32_t levels = 0;
    uint64_t c = t->n_leaves;
    sizes[levels++] = c;
    while (c > 1) {
        if (levels == KR_MAX_LEVELS) {
            kr_set_error(err, "tree would need more than %d levels", KR_MAX_LEVELS);
            return HARMONIA_ERR_CAPACITY;
        }
        c = (c + t->fanout - 1) / t->fanout;
        sizes[levels++] = c;
    }
    t->height = levels;
    uint64_t start = 0;
    for (uint32_t l = 0; l < levels; l++) {
        t->level_start[l] = start;
        start += sizes[levels - 1 - l];
    }
    for (uint32_t l = levels; l <= KR_MAX_LEVELS; l++)
        t->level_start[l] = start;
    t->n_nodes = start;
    t->n_internal = start - t->n_leaves;
    if (t->n_nodes >= UINT32_MAX) {
        kr_set_error(err,
                     "tree would have %" PRIu64 " nodes; the first-child array holds at most %u "
                     "(use larger leaves or a larger fanout)",
                     t->n_nodes, UINT32_MAX - 1);
        return HARMONIA_ERR_CAPACITY;
    }
    return HARMONIA_OK;
}

harmonia_status kr_alloc_arrays(kr_tree *t, kr_error *err)
{
    size_t kb = kr_key_bytes(t);
    t->keys = kr_malloc(kr_key_slots(t) * kb);
    t->leaf_values = kr_malloc(t->n_leaves * t->leaf_size * kb);
    t->first_child = kr_malloc((t->n_internal + 1) * sizeof(uint32_t));
    t->leaf_rank = kr_malloc((t->n_leaves + 1) * sizeof(uint64_t));
    if (!t->keys || !t->leaf_values || !t->first_child || !t->leaf_rank) {
        kr_tree_free_arrays(t);
        kr_set_error(err, "out of memory allocating a tree of %" PRIu64 " nodes", t->n_nodes);
        return HARMONIA_ERR_NO_MEMORY;
    }
    return HARMONIA_OK;
}

/* Key of the smallest key in node's subtree: follow first children down to the leaf level. */
static uint64_t subtree_min_key(const kr_tree *t, uint64_t node)
{
    while (node < t->n_internal)
        node = t->first_child[node];
    return kr_load(t->keys, t->key_bits, kr_node_key_offset(t, node));
}

void kr_build_internal_levels(kr_tree *t, int threads)
{
    const uint64_t F = t->fanout;
    const uint64_t max_key = kr_max_key(t->key_bits);
    /* first_child: level l's nodes share level l+1's nodes evenly, in order (prefix_sum/) */
    ps_build(t->first_child, t->level_start, t->height);
    /* separators: slot j-1 of node p = the smallest key under child j; padding = maximum key */
#pragma omp parallel for schedule(dynamic, 1024) num_threads(kr_resolve_threads(threads)) if (t->n_internal > KR_PARALLEL_MIN / 16)
    for (uint64_t p = 0; p < t->n_internal; p++) {
        uint64_t first = t->first_child[p];
        uint64_t c = t->first_child[p + 1] - first;
        uint64_t base = p * F;
        for (uint64_t j = 1; j < c; j++)
            kr_store(t->keys, t->key_bits, base + j - 1, subtree_min_key(t, first + j));
        for (uint64_t s = c - 1; s < F; s++)
            kr_store(t->keys, t->key_bits, base + s, max_key);
    }
}

harmonia_status kr_build_from_sorted_unique(kr_tree *t, uint32_t key_bits, uint32_t fanout,
                                            uint32_t leaf_size, double leaf_fill,
                                            const void *keys, const void *values, uint64_t count,
                                            int threads, kr_error *err)
{
    memset(t, 0, sizeof *t);
    t->key_bits = key_bits;
    t->fanout = fanout;
    t->leaf_size = leaf_size;
    t->n_keys = count;
    uint64_t per_leaf = (uint64_t)(leaf_size * leaf_fill);
    if (per_leaf < 1)
        per_leaf = 1;
    if (per_leaf > leaf_size)
        per_leaf = leaf_size;
    t->n_leaves = count == 0 ? 1 : (count + per_leaf - 1) / per_leaf;
    harmonia_status st = kr_plan_levels(t, err);
    if (st != HARMONIA_OK)
        return st;
    st = kr_alloc_arrays(t, err);
    if (st != HARMONIA_OK)
        return st;
    const uint64_t L = leaf_size, n_leaves = t->n_leaves;
    const uint64_t max_key = kr_max_key(key_bits);
    const uint64_t leaf_base = t->n_internal * t->fanout;
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(threads)) if (n_leaves > KR_PARALLEL_MIN / 16)
    for (uint64_t li = 0; li < n_leaves; li++) {
        uint64_t begin = even_start(count, n_leaves, li);
        uint64_t end = even_start(count, n_leaves, li + 1);
        t->leaf_rank[li] = begin;
        uint64_t slot = leaf_base + li * L, vslot = li * L;
        for (uint64_t i = begin; i < end; i++, slot++, vslot++) {
            kr_store(t->keys, key_bits, slot, kr_load(keys, key_bits, i));
            kr_store(t->leaf_values, key_bits, vslot, values ? kr_load(values, key_bits, i) : i);
        }
        for (uint64_t s = end - begin; s < L; s++, slot++, vslot++) {
            kr_store(t->keys, key_bits, slot, max_key);
            kr_store(t->leaf_values, key_bits, vslot, 0);
        }
    }
    t->leaf_rank[n_leaves] = count;
    kr_build_internal_levels(t, threads);
    return HARMONIA_OK;
}

/* Index of the first i >= 1 with keys[i] < keys[i-1], or count if none (parallel). */
static uint64_t first_descent(uint32_t key_bits, const void *keys, uint64_t count, int threads)
{
    uint64_t first = count;
#pragma omp parallel for reduction(min : first) schedule(static) num_threads(kr_resolve_threads(threads)) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 1; i < count; i++)
        if (kr_load(keys, key_bits, i) < kr_load(keys, key_bits, i - 1) && i < first)
            first = i;
    return first;
}

/* Index of the first i >= 1 with keys[i] == keys[i-1] in sorted keys, or count if none. */
static uint64_t first_repeat(uint32_t key_bits, const void *keys, uint64_t count, int threads)
{
    uint64_t first = count;
#pragma omp parallel for reduction(min : first) schedule(static) num_threads(kr_resolve_threads(threads)) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 1; i < count; i++)
        if (kr_load(keys, key_bits, i) == kr_load(keys, key_bits, i - 1) && i < first)
            first = i;
    return first;
}

/* Compacts sorted (stable) pairs in place so that each run of equal keys keeps its first or its
 * last pair. Returns the new count. Parallel: per-chunk counts, a prefix sum, then the moves into
 * a second buffer. */
static harmonia_status dedupe_sorted(uint32_t key_bits, void *keys, void *values, uint64_t count,
                                     bool keep_last, int threads, uint64_t *count_out, kr_error *err)
{
    size_t kb = key_bits / 8;
    void *out_keys = kr_malloc(count * kb), *out_values = kr_malloc(count * kb);
    int nt = count > KR_PARALLEL_MIN ? kr_resolve_threads(threads) : 1;
    uint64_t *chunk_start = kr_calloc((size_t)nt + 1, sizeof(uint64_t));
    if (!out_keys || !out_values || !chunk_start) {
        free(out_keys);
        free(out_values);
        free(chunk_start);
        kr_set_error(err, "out of memory removing duplicates of %" PRIu64 " pairs", count);
        return HARMONIA_ERR_NO_MEMORY;
    }
/* keep pair i when it is the first (keep first) or the last (keep last) of its run */
#define KEEP(i)                                                                                   \
    (keep_last ? ((i) + 1 == count || kr_load(keys, key_bits, (i) + 1) != kr_load(keys, key_bits, (i))) \
               : ((i) == 0 || kr_load(keys, key_bits, (i) - 1) != kr_load(keys, key_bits, (i))))
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        uint64_t lo = count * (uint64_t)t / (uint64_t)n, hi = count * (uint64_t)(t + 1) / (uint64_t)n;
        uint64_t kept = 0;
        for (uint64_t i = lo; i < hi; i++)
            kept += KEEP(i);
        chunk_start[t + 1] = kept;
#pragma omp barrier
#pragma omp single
        for (int u = 0; u < n; u++)
            chunk_start[u + 1] += chunk_start[u];
        uint64_t pos = chunk_start[t];
        for (uint64_t i = lo; i < hi; i++)
            if (KEEP(i)) {
                kr_store(out_keys, key_bits, pos, kr_load(keys, key_bits, i));
                kr_store(out_values, key_bits, pos, kr_load(values, key_bits, i));
                pos++;
            }
    }
#undef KEEP
    uint64_t kept_total = 0;
    /* the last thread's end is the total; find it among the used entries */
    for (int u = 0; u <= nt; u++)
        if (chunk_start[u] > kept_total)
            kept_total = chunk_start[u];
    memcpy(keys, out_keys, kept_total * kb);
    memcpy(values, out_values, kept_total * kb);
    free(out_keys);
    free(out_values);
    free(chunk_start);
    *count_out = kept_total;
    return HARMONIA_OK;
}

harmonia_status kr_build(kr_tree *t, const kr_build_params *p, const void *keys,
                         const void *values, uint64_t count, kr_error *err)
{
    const uint32_t kb = p->key_bits / 8;
    if (p->progress)
        p->progress(p->progress_arg, "sort", 0.0);
    if (p->input_sorted) {
        uint64_t bad = first_descent(p->key_bits, keys, count, p->threads);
        if (bad < count) {
            kr_set_error(err,
                         "input promised sorted is not: key %" PRIu64 " at position %" PRIu64
                         " is smaller than key %" PRIu64 " at position %" PRIu64,
                         kr_load(keys, p->key_bits, bad), bad, kr_load(keys, p->key_bits, bad - 1),
                         bad - 1);
            return HARMONIA_ERR_UNSORTED;
        }
        uint64_t rep = first_repeat(p->key_bits, keys, count, p->threads);
        if (rep == count) /* the common case: build straight from the caller's arrays */
            return kr_build_from_sorted_unique(t, p->key_bits, p->fanout, p->leaf_size,
                                               p->leaf_fill, keys, values, count, p->threads, err);
        if (p->duplicates == HARMONIA_DUPLICATES_REJECT) {
            kr_set_error(err, "duplicate key %" PRIu64 " at positions %" PRIu64 " and %" PRIu64,
                         kr_load(keys, p->key_bits, rep), rep - 1, rep);
            return HARMONIA_ERR_DUPLICATE_KEY;
        }
    }
    /* work on copies: sort (stable) and apply the duplicate policy */
    void *work_keys = kr_malloc(count ? count * kb : 1);
    void *work_values = kr_malloc(count ? count * kb : 1);
    if (!work_keys || !work_values) {
        free(work_keys);
        free(work_values);
        kr_set_error(err, "out of memory copying %" PRIu64 " input pairs", count);
        return HARMONIA_ERR_NO_MEMORY;
    }
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(p->threads)) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++) {
        kr_store(work_keys, p->key_bits, i, kr_load(keys, p->key_bits, i));
        kr_store(work_values, p->key_bits, i, values ? kr_load(values, p->key_bits, i) : i);
    }
    harmonia_status st = HARMONIA_OK;
    if (!p->input_sorted)
        st = kr_sort_pairs(p->key_bits, work_keys, work_values, count, p->threads, err);
    if (p->progress)
        p->progress(p->progress_arg, "sort", 1.0);
    uint64_t unique = count;
    if (st == HARMONIA_OK) {
        uint64_t rep = first_repeat(p->key_bits, work_keys, count, p->threads);
        if (rep < count) {
            if (p->duplicates == HARMONIA_DUPLICATES_REJECT) {
                /* values of the sorted copy are the input positions when the caller gave none */
                uint64_t key = kr_load(work_keys, p->key_bits, rep);
                if (!values)
                    kr_set_error(err, "duplicate key %" PRIu64 " at input positions %" PRIu64
                                 " and %" PRIu64, key, kr_load(work_values, p->key_bits, rep - 1),
                                 kr_load(work_values, p->key_bits, rep));
                else
                    kr_set_error(err, "duplicate key %" PRIu64 " (it appears at least twice in the input)",
                                 key);
                st = HARMONIA_ERR_DUPLICATE_KEY;
            } else {
                st = dedupe_sorted(p->key_bits, work_keys, work_values, count,
                                   p->duplicates == HARMONIA_DUPLICATES_KEEP_LAST, p->threads, &unique, err);
            }
        }
    }
    if (st == HARMONIA_OK) {
        if (p->progress)
            p->progress(p->progress_arg, "layout", 0.0);
        st = kr_build_from_sorted_unique(t, p->key_bits, p->fanout, p->leaf_size, p->leaf_fill,
                                         work_keys, work_values, unique, p->threads, err);
        if (p->progress)
            p->progress(p->progress_arg, "layout", 1.0);
    }
    free(work_keys);
    free(work_values);
    return st;
}
