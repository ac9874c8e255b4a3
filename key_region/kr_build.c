/* kr_build.c — bulk build of the key region from pairs: validation of sorted input, the
 * duplicate policy, the even distribution of keys over leaves, the level plan and the internal
 * levels with the first-child array. OpenMP-parallel. The layout itself is in key_region.h. */
#include <inttypes.h>
#include <malloc.h>
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

/* One array of at least `bytes`: the spare's when it is large enough (taken: *spare_array NULL),
 * else a fresh one of bytes * (1 + slack) (the spare's freed first). */
static void *take_or_allocate(void **spare_array, size_t bytes, double slack)
{
    void *p = *spare_array;
    *spare_array = NULL;
    if (p && malloc_usable_size(p) >= bytes)
        return p;
    free(p);
    return kr_malloc(bytes + (size_t)((double)bytes * slack));
}

harmonia_status kr_alloc_arrays_reusing(kr_tree *t, kr_tree *spare, double slack, kr_error *err)
{
    size_t kb = kr_key_bytes(t);
    t->keys = take_or_allocate(&spare->keys, kr_key_slots(t) * kb, slack);
    t->leaf_values = take_or_allocate(&spare->leaf_values, t->n_leaves * t->leaf_size * kb, slack);
    t->first_child = take_or_allocate((void **)&spare->first_child, (t->n_internal + 1) * sizeof(uint32_t), slack);
    t->leaf_rank = take_or_allocate((void **)&spare->leaf_rank, (t->n_leaves + 1) * sizeof(uint64_t), slack);
    memset(spare, 0, sizeof *spare);
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

harmonia_status kr_levels_begin(const kr_tree *t, uint64_t **node_min, kr_error *err)
{
    *node_min = kr_malloc((t->n_internal ? t->n_internal : 1) * sizeof(uint64_t));
    if (!*node_min) {
        kr_set_error(err, "out of memory planning %" PRIu64 " internal nodes", t->n_internal);
        return HARMONIA_ERR_NO_MEMORY;
    }
    return HARMONIA_OK;
}

void kr_levels_finish(kr_tree *t, uint64_t *node_min, int threads)
{
    const uint64_t F = t->fanout;
    const uint64_t max_key = kr_max_key(t->key_bits);
    const int team = kr_resolve_threads(threads);
    /* first_child: level l's nodes share level l+1's nodes evenly, in order (prefix_sum/) */
    ps_build(t->first_child, t->level_start, t->height);
    if (t->height < 2)
        return;
    /* the last internal level: its separators were written with the leaves; the padding */
    {
        const uint32_t l = t->height - 2;
        const uint64_t first = t->level_start[l], end = t->level_start[l + 1];
#pragma omp parallel for schedule(static) num_threads(team) if (end - first > KR_PARALLEL_MIN / 4)
        for (uint64_t p = first; p < end; p++) {
            uint64_t c = t->first_child[p + 1] - t->first_child[p];
            for (uint64_t s = c - 1; s < F; s++)
                kr_store(t->keys, t->key_bits, p * F + s, max_key);
        }
    }
    /* the levels above, from their children's smallest keys */
    for (uint32_t l = t->height - 2; l-- > 0;) {
        const uint64_t first = t->level_start[l], end = t->level_start[l + 1];
#pragma omp parallel for schedule(static) num_threads(team) if (end - first > KR_PARALLEL_MIN / 4)
        for (uint64_t p = first; p < end; p++) {
            uint64_t child = t->first_child[p], c = t->first_child[p + 1] - child;
            for (uint64_t j = 1; j < c; j++)
                kr_store(t->keys, t->key_bits, p * F + j - 1, node_min[child + j]);
            for (uint64_t s = c - 1; s < F; s++)
                kr_store(t->keys, t->key_bits, p * F + s, max_key);
            node_min[p] = node_min[child];
        }
    }
}

void kr_build_internal_levels(kr_tree *t, int threads)
{
    uint64_t *node_min = NULL;
    kr_error ignored;
    if (kr_levels_begin(t, &node_min, &ignored) == HARMONIA_OK) {
        const uint64_t leaf_base = t->n_internal * t->fanout;
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(threads)) if (t->n_leaves > KR_PARALLEL_MIN)
        for (uint64_t li = 0; li < t->n_leaves; li++)
            kr_levels_note_leaf(t, node_min, li, kr_load(t->keys, t->key_bits, leaf_base + li * t->leaf_size));
        kr_levels_finish(t, node_min, threads);
        free(node_min);
        return;
    }
    /* out of memory for the minimums: each separator from a descent to its subtree's first leaf */
    ps_build(t->first_child, t->level_start, t->height);
    const uint64_t F = t->fanout;
    const uint64_t max_key = kr_max_key(t->key_bits);
    for (uint64_t p = 0; p < t->n_internal; p++) {
        uint64_t first = t->first_child[p], c = t->first_child[p + 1] - first;
        for (uint64_t j = 1; j < c; j++)
            kr_store(t->keys, t->key_bits, p * F + j - 1, subtree_min_key(t, first + j));
        for (uint64_t s = c - 1; s < F; s++)
            kr_store(t->keys, t->key_bits, p * F + s, max_key);
    }
}

/* Writes the sorted pairs of ranks [begin, begin + count) (keys_at / values_at: element i) into the
 * leaves of t (whole leaves streamed out with non-temporal stores), whose n_keys keys are spread evenly over its leaves: slots, the padding of each leaf
 * whose last key is among them, the leaf rank and the parent's separator (or node_min) of each leaf
 * whose first key is. Ranges of different calls may share a leaf, never a slot. */
#define WRITE_RANKS_BODY(KEY_T, KEY_AT, VALUE_AT)                                                     \
    const uint64_t L = t->leaf_size, n_leaves = t->n_leaves, n = t->n_keys;                           \
    const uint64_t base = n / n_leaves, extra = n % n_leaves, boundary = extra * (base + 1);          \
    KEY_T *leaf_keys = (KEY_T *)t->keys + t->n_internal * t->fanout;                                  \
    KEY_T *leaf_values = (KEY_T *)t->leaf_values;                                                     \
    const KEY_T max_key = (KEY_T)kr_max_key(t->key_bits);                                             \
    uint64_t r = begin, li, slot;                                                                     \
    if (r < boundary) {                                                                               \
        li = r / (base + 1);                                                                          \
        slot = r % (base + 1);                                                                        \
    } else {                                                                                          \
        li = extra + (r - boundary) / base;                                                           \
        slot = (r - boundary) % base;                                                                 \
    }                                                                                                 \
    uint64_t i = 0;                                                                                   \
    kr_leaf_cursor cursor;                                                                            \
    bool cursor_ready = false;                                                                        \
    while (i < count) {                                                                               \
        const uint64_t in_leaf = li < extra ? base + 1 : base;                                        \
        uint64_t take = in_leaf - slot < count - i ? in_leaf - slot : count - i;                      \
        if (slot == 0 && take == in_leaf) { /* a whole leaf: assembled, then streamed out */          \
            KEY_T lk[KR_MAX_NODE] __attribute__((aligned(64)));                                       \
            KEY_T lv[KR_MAX_NODE] __attribute__((aligned(64)));                                       \
            for (uint64_t k = 0; k < in_leaf; k++) {                                                  \
                lk[k] = KEY_AT(i + k);                                                                \
                lv[k] = VALUE_AT(i + k);                                                              \
            }                                                                                         \
            for (uint64_t s = in_leaf; s < L; s++) {                                                  \
                lk[s] = max_key;                                                                      \
                lv[s] = 0;                                                                            \
            }                                                                                         \
            kr_stream_copy(leaf_keys + li * L, lk, L * sizeof(KEY_T));                                \
            kr_stream_copy(leaf_values + li * L, lv, L * sizeof(KEY_T));                              \
            t->leaf_rank[li] = r;                                                                     \
            if (!cursor_ready) {                                                                      \
                kr_leaf_cursor_init(t, &cursor, li);                                                  \
                cursor_ready = true;                                                                  \
            }                                                                                         \
            kr_leaf_cursor_note(t, &cursor, node_min, lk[0]);                                         \
            i += take;                                                                                \
            r += take;                                                                                \
            li++;                                                                                     \
            continue;                                                                                 \
        }                                                                                             \
        KEY_T *dk = leaf_keys + li * L + slot, *dv = leaf_values + li * L + slot;                     \
        if (slot == 0) {                                                                              \
            t->leaf_rank[li] = r;                                                                     \
            if (!cursor_ready) {                                                                      \
                kr_leaf_cursor_init(t, &cursor, li);                                                  \
                cursor_ready = true;                                                                  \
            }                                                                                         \
            kr_leaf_cursor_note(t, &cursor, node_min, KEY_AT(i));                                     \
        }                                                                                             \
        for (uint64_t k = 0; k < take; k++) {                                                         \
            dk[k] = KEY_AT(i + k);                                                                    \
            dv[k] = VALUE_AT(i + k);                                                                  \
        }                                                                                             \
        slot += take;                                                                                 \
        i += take;                                                                                    \
        r += take;                                                                                    \
        if (slot == in_leaf) {                                                                        \
            for (uint64_t s = in_leaf; s < L; s++) {                                                  \
                leaf_keys[li * L + s] = max_key;                                                      \
                leaf_values[li * L + s] = 0;                                                          \
            }                                                                                         \
            li++;                                                                                     \
            slot = 0;                                                                                 \
        }                                                                                             \
    }                                                                                                 \
    kr_stream_fence();

static void write_ranks_pairs64(kr_tree *t, uint64_t *node_min, uint64_t begin, const kr_pair64 *pairs,
                                uint64_t count)
{
#define KEY_AT(i) pairs[i].key
#define VALUE_AT(i) pairs[i].value
    WRITE_RANKS_BODY(uint64_t, KEY_AT, VALUE_AT)
#undef KEY_AT
#undef VALUE_AT
}

static void write_ranks_pairs32(kr_tree *t, uint64_t *node_min, uint64_t begin, const kr_pair32 *pairs,
                                uint64_t count)
{
#define KEY_AT(i) pairs[i].key
#define VALUE_AT(i) pairs[i].value
    WRITE_RANKS_BODY(uint32_t, KEY_AT, VALUE_AT)
#undef KEY_AT
#undef VALUE_AT
}

/* The same from two arrays (values NULL: the positions). */
static void write_ranks_arrays64(kr_tree *t, uint64_t *node_min, uint64_t begin, const uint64_t *keys,
                                 const uint64_t *values, uint64_t count)
{
#define KEY_AT(i) keys[i]
#define VALUE_AT(i) (values ? values[i] : begin + (i))
    WRITE_RANKS_BODY(uint64_t, KEY_AT, VALUE_AT)
#undef KEY_AT
#undef VALUE_AT
}

static void write_ranks_arrays32(kr_tree *t, uint64_t *node_min, uint64_t begin, const uint32_t *keys,
                                 const uint32_t *values, uint64_t count)
{
#define KEY_AT(i) keys[i]
#define VALUE_AT(i) (values ? values[i] : (uint32_t)(begin + (i)))
    WRITE_RANKS_BODY(uint32_t, KEY_AT, VALUE_AT)
#undef KEY_AT
#undef VALUE_AT
}

/* The room a built tree's large arrays keep beyond its size: an update batch that re-lays the tree
 * out writes into a second set of arrays and keeps the first for the next batch (cpu_update.h); a
 * tree that grew a little still fits them. Pages never written are never backed by memory. */
#define KR_BUILD_SLACK 0.125

void kr_error_unsorted(kr_error *err, uint64_t key, uint64_t position, uint64_t previous_key)
{
    kr_set_error(err,
                 "input promised sorted is not: key %" PRIu64 " at position %" PRIu64
                 " is smaller than key %" PRIu64 " at position %" PRIu64,
                 key, position, previous_key, position - 1);
}

void kr_error_duplicate(kr_error *err, uint64_t key, bool sorted_input, bool values_given, uint64_t first,
                        uint64_t second)
{
    if (sorted_input)
        kr_set_error(err, "duplicate key %" PRIu64 " at positions %" PRIu64 " and %" PRIu64, key, first, second);
    else if (!values_given)
        kr_set_error(err, "duplicate key %" PRIu64 " at input positions %" PRIu64 " and %" PRIu64, key, first,
                     second);
    else
        kr_set_error(err, "duplicate key %" PRIu64 " (it appears at least twice in the input)", key);
}

harmonia_status kr_plan_even(kr_tree *t, uint32_t key_bits, uint32_t fanout, uint32_t leaf_size, double leaf_fill,
                             uint64_t count, kr_error *err)
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
    return kr_plan_levels(t, err);
}

harmonia_status kr_alloc_built_arrays(kr_tree *t, kr_error *err)
{
    kr_tree none; /* with room to grow: address space only until an update uses it */
    memset(&none, 0, sizeof none);
    return kr_alloc_arrays_reusing(t, &none, KR_BUILD_SLACK, err);
}

/* Plans and allocates a tree of count keys spread evenly over ceil(count / (L * leaf_fill)) leaves. */
static harmonia_status plan_even_tree(kr_tree *t, uint32_t key_bits, uint32_t fanout, uint32_t leaf_size,
                                      double leaf_fill, uint64_t count, uint64_t **node_min, kr_error *err)
{
    harmonia_status st = kr_plan_even(t, key_bits, fanout, leaf_size, leaf_fill, count, err);
    if (st == HARMONIA_OK)
        st = kr_alloc_built_arrays(t, err);
    if (st == HARMONIA_OK) {
        st = kr_levels_begin(t, node_min, err);
        if (st != HARMONIA_OK)
            kr_tree_free_arrays(t);
    }
    return st;
}

harmonia_status kr_build_from_sorted_unique(kr_tree *t, uint32_t key_bits, uint32_t fanout,
                                            uint32_t leaf_size, double leaf_fill,
                                            const void *keys, const void *values, uint64_t count,
                                            int threads, kr_error *err)
{
    uint64_t *node_min = NULL;
    harmonia_status st = plan_even_tree(t, key_bits, fanout, leaf_size, leaf_fill, count, &node_min, err);
    if (st != HARMONIA_OK)
        return st;
    if (count == 0) { /* the empty tree: one leaf of padding */
        for (uint64_t s = 0; s < leaf_size; s++) {
            kr_store(t->keys, key_bits, s, kr_max_key(key_bits));
            kr_store(t->leaf_values, key_bits, s, 0);
        }
        t->leaf_rank[0] = 0;
    } else {
        /* chunks of whole leaves' worth of ranks, in parallel */
        const uint64_t chunk = 1u << 16;
        const uint64_t chunks = (count + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(threads)) if (count > KR_PARALLEL_MIN)
        for (uint64_t c = 0; c < chunks; c++) {
            uint64_t begin = c * chunk, n = count - begin < chunk ? count - begin : chunk;
            if (key_bits == 32)
                write_ranks_arrays32(t, node_min, begin, (const uint32_t *)keys + begin,
                                     values ? (const uint32_t *)values + begin : NULL, n);
            else
                write_ranks_arrays64(t, node_min, begin, (const uint64_t *)keys + begin,
                                     values ? (const uint64_t *)values + begin : NULL, n);
        }
    }
    t->leaf_rank[t->n_leaves] = count;
    kr_levels_finish(t, node_min, threads);
    free(node_min);
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

/* The fused path's state: the tree being written, and per thread the smallest duplicated key seen
 * (with the two sorted positions' values, the input positions when the caller gave no values). */
typedef struct fused_build {
    kr_tree *tree;
    uint64_t *node_min;
    struct fused_duplicate { /* per thread (its own line) */
        bool found;
        uint64_t key, first_value, second_value;
        double first_visit; /* when the thread visited its first bucket (the partition pass before) */
        char pad[64 - 5 * sizeof(uint64_t)];
    } *duplicate;
} fused_build;

/* Each sorted bucket: checked for duplicates (equal keys are never in two buckets), then written
 * into its leaves at its ranks. */
static void fused_visit(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread)
{
    fused_build *f = arg;
    struct fused_duplicate *dup = &f->duplicate[thread];
    if (dup->first_visit == 0.0)
        dup->first_visit = omp_get_wtime();
    if (f->tree->key_bits == 32) {
        const kr_pair32 *p = sorted;
        for (uint64_t i = 1; i < count; i++)
            if (p[i].key == p[i - 1].key) {
                if (!dup->found || p[i].key < dup->key)
                    dup->found = true, dup->key = p[i].key, dup->first_value = p[i - 1].value,
                    dup->second_value = p[i].value;
                return;
            }
        write_ranks_pairs32(f->tree, f->node_min, begin, p, count);
    } else {
        const kr_pair64 *p = sorted;
        for (uint64_t i = 1; i < count; i++)
            if (p[i].key == p[i - 1].key) {
                if (!dup->found || p[i].key < dup->key)
                    dup->found = true, dup->key = p[i].key, dup->first_value = p[i - 1].value,
                    dup->second_value = p[i].value;
                return;
            }
        write_ranks_pairs64(f->tree, f->node_min, begin, p, count);
    }
}

/* Unsorted input, duplicates rejected: one sort whose buckets are written into the leaves while
 * they are in cache (the sorted pairs never go back to memory as an array). */
static harmonia_status build_fused(kr_tree *t, const kr_build_params *p, const void *keys, const void *values,
                                   uint64_t count, kr_error *err)
{
    const double t0 = omp_get_wtime();
    uint64_t *node_min = NULL;
    harmonia_status st = plan_even_tree(t, p->key_bits, p->fanout, p->leaf_size, p->leaf_fill, count, &node_min,
                                        err);
    if (st != HARMONIA_OK)
        return st;
    const int threads = count > KR_PARALLEL_MIN ? kr_resolve_threads(p->threads) : 1;
    void *records = kr_malloc(count * (p->key_bits == 32 ? sizeof(kr_pair32) : sizeof(kr_pair64)));
    fused_build f = {t, node_min, kr_calloc((size_t)threads, sizeof(struct fused_duplicate))};
    if (!records || !f.duplicate) {
        kr_set_error(err, "out of memory sorting %" PRIu64 " input pairs", count);
        st = HARMONIA_ERR_NO_MEMORY;
    }
    if (st == HARMONIA_OK)
        st = kr_sort_pairs_visit(p->key_bits, keys, values, count, records, fused_visit, &f, threads, err);
    free(records);
    const double t1 = omp_get_wtime();
    double first_visit = t1;
    for (int u = 0; f.duplicate && u < threads; u++)
        if (f.duplicate[u].first_visit > 0.0 && f.duplicate[u].first_visit < first_visit)
            first_visit = f.duplicate[u].first_visit;
    if (st == HARMONIA_OK) {
        int worst = -1;
        for (int u = 0; u < threads; u++)
            if (f.duplicate[u].found && (worst < 0 || f.duplicate[u].key < f.duplicate[worst].key))
                worst = u;
        if (worst >= 0) {
            const struct fused_duplicate *d = &f.duplicate[worst];
            kr_error_duplicate(err, d->key, false, values != NULL, d->first_value, d->second_value);
            st = HARMONIA_ERR_DUPLICATE_KEY;
        }
    }
    if (st == HARMONIA_OK) {
        if (p->progress) {
            p->progress(p->progress_arg, "sort", 1.0);
            p->progress(p->progress_arg, "layout", 0.0);
        }
        t->leaf_rank[t->n_leaves] = count;
        kr_levels_finish(t, node_min, p->threads);
    } else {
        kr_tree_free_arrays(t);
        memset(t, 0, sizeof *t);
    }
    free(node_min);
    free(f.duplicate);
    if (p->step_seconds) {
        p->step_seconds[0] = first_visit - t0;        /* plan, allocation, the partition pass */
        p->step_seconds[1] = t1 - first_visit;        /* buckets sorted in cache, leaves written */
        p->step_seconds[2] = omp_get_wtime() - t1;    /* internal levels */
    }
    return st;
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
            kr_error_unsorted(err, kr_load(keys, p->key_bits, bad), bad, kr_load(keys, p->key_bits, bad - 1));
            return HARMONIA_ERR_UNSORTED;
        }
        uint64_t rep = first_repeat(p->key_bits, keys, count, p->threads);
        if (rep == count) /* the common case: build straight from the caller's arrays */
            return kr_build_from_sorted_unique(t, p->key_bits, p->fanout, p->leaf_size,
                                               p->leaf_fill, keys, values, count, p->threads, err);
        if (p->duplicates == HARMONIA_DUPLICATES_REJECT) {
            kr_error_duplicate(err, kr_load(keys, p->key_bits, rep), true, values != NULL, rep - 1, rep);
            return HARMONIA_ERR_DUPLICATE_KEY;
        }
    } else if (p->duplicates == HARMONIA_DUPLICATES_REJECT && count > 0) {
        harmonia_status st = build_fused(t, p, keys, values, count, err);
        if (p->progress && st == HARMONIA_OK)
            p->progress(p->progress_arg, "layout", 1.0);
        return st;
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
    harmonia_status st = HARMONIA_OK;
    if (!p->input_sorted) {
        /* sorted straight from the caller's arrays into the copies */
        st = kr_sort_pairs_into(p->key_bits, keys, values, count, work_keys, work_values, p->threads, err);
    } else {
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(p->threads)) if (count > KR_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++) {
            kr_store(work_keys, p->key_bits, i, kr_load(keys, p->key_bits, i));
            kr_store(work_values, p->key_bits, i, values ? kr_load(values, p->key_bits, i) : i);
        }
    }
    if (p->progress)
        p->progress(p->progress_arg, "sort", 1.0);
    uint64_t unique = count;
    if (st == HARMONIA_OK) {
        uint64_t rep = first_repeat(p->key_bits, work_keys, count, p->threads);
        if (rep < count) {
            if (p->duplicates == HARMONIA_DUPLICATES_REJECT) {
                /* values of the sorted copy are the input positions when the caller gave none */
                uint64_t key = kr_load(work_keys, p->key_bits, rep);
                kr_error_duplicate(err, key, false, values != NULL, kr_load(work_values, p->key_bits, rep - 1),
                                   kr_load(work_values, p->key_bits, rep));
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
