/* key_region.h — the node format and the breadth-first key region of a Harmonia tree, with the
 * leaf values and leaf ranks beside it: the layout, its invariants, bulk build, the CPU search
 * engine and the integrity checker. The first-child array is owned by prefix_sum/.
 *
 * ============================== THE LAYOUT (read before any code) ==============================
 *
 * Nodes are numbered breadth-first, root = node 0, level by level, leaves last:
 *
 *     level 0          [ 0 ]                       level_start[0] = 0
 *     level 1       [ 1 ][ 2 ][ 3 ]                level_start[1] = 1
 *     level 2 (leaves) [4][5][6][7][8][9][10]      level_start[2] = 4 = n_internal
 *                                                  level_start[3] = 11 = n_nodes
 *
 * KEY REGION (keys): one array of key_bits-wide unsigned keys. Internal node i (i < n_internal)
 *   owns the F slots keys[i*F .. i*F+F-1]; leaf node i owns the L slots starting at
 *   n_internal*F + (i - n_internal)*L. (kr_node_key_offset computes it.)
 * INTERNAL NODE i with c = first_child[i+1] - first_child[i] children (2 <= c <= F; the root of a
 *   tree of height >= 2 too): slots 0 .. c-2 hold the separators s_0 < s_1 < ... < s_{c-2};
 *   slots c-1 .. F-1 hold the maximum key (padding). Child j (0 <= j < c) is node
 *   first_child[i] + j and holds exactly the keys k of the subtree with s_{j-1} <= k < s_j
 *   (s_{-1} = -inf, s_{c-1} = +inf). A search for q goes to child j = the number of separators
 *   <= q; counting over all F slots and clamping to c-1 gives the same child, because padding only
 *   counts when q is the maximum key, and then every separator counts too.
 *   A bulk build and the updater's re-layout set s_{j-1} = the smallest key of child j's subtree;
 *   an in-place update batch may then leave s_{j-1} below it (a leaf's first key deleted) — the
 *   invariant, and what the search needs, is only s_{j-1} <= every key of child j.
 * LEAF i (leaf index li = i - n_internal): n = leaf_rank[li+1] - leaf_rank[li] keys, strictly
 *   increasing, in slots 0 .. n-1; slots n .. L-1 hold the maximum key. 1 <= n <= L, except in the
 *   empty tree (one leaf, n = 0). Keys strictly increase across the whole leaf level.
 *   So a key equal to the maximum found in a leaf slot is real only if the tree holds the maximum
 *   key (max_key_present), and then it is the last key of the last leaf: the GPU point lookup needs
 *   no count.
 * LEAF VALUES (leaf_values): the value of the key in leaf slot s of leaf li is
 *   leaf_values[li*L + s]; padding slots hold 0.
 * LEAF RANKS (leaf_rank, n_leaves + 1 entries): leaf_rank[li] = the number of keys in leaves
 *   before li; leaf_rank[0] = 0, leaf_rank[n_leaves] = n_keys. The global rank of leaf slot s is
 *   leaf_rank[li] + s, so a range count is two descents and no scan.
 * FIRST-CHILD ARRAY (prefix_sum/, first_child, n_internal + 1 entries of uint32_t): see
 *   prefix_sum.h. first_child[i] is the node number of internal node i's first child;
 *   first_child[n_internal] = n_nodes.
 * LEVELS: level_start[l] is the first node of level l, level_start[height] = n_nodes. The root is
 *   level 0, the leaves are level height-1. A tree of height 1 is a single leaf (no internal
 *   nodes). All leaves are at the same depth.
 * LIMITS: n_nodes < 2^32 (first_child is 32-bit); height <= HARMONIA_MAX_LEVELS.
 *
 * kr_check_tree verifies every sentence above and reports the first one broken, in words.
 * ============================================================================================ */
#ifndef HARMONIA_KEY_REGION_H
#define HARMONIA_KEY_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "harmonia.h"
#include "util/width.h"

#define KR_MAX_LEVELS HARMONIA_MAX_LEVELS

/* Below this many items a loop runs on the calling thread: an OpenMP team costs more than the
 * work, and oversubscribed teams (several processes on few cores) spin badly. */
#define KR_PARALLEL_MIN 32768

/* Node sizes the build offers (powers of two). */
#define KR_MIN_NODE 8
#define KR_MAX_NODE 128

typedef struct kr_tree {
    uint32_t key_bits;   /* 32 or 64: keys and values */
    uint32_t fanout;     /* F */
    uint32_t leaf_size;  /* L */
    uint32_t height;     /* levels */
    uint64_t n_keys;
    uint64_t n_internal;
    uint64_t n_leaves;
    uint64_t n_nodes;
    uint64_t level_start[KR_MAX_LEVELS + 1];
    void *keys;            /* key region: n_internal*F + n_leaves*L keys */
    void *leaf_values;     /* n_leaves*L values */
    uint32_t *first_child; /* n_internal + 1 entries */
    uint64_t *leaf_rank;   /* n_leaves + 1 entries */
} kr_tree;

static inline uint64_t kr_max_key(uint32_t key_bits) { return util_max_of_width(key_bits); }

static inline size_t kr_key_bytes(const kr_tree *t) { return t->key_bits / 8; }

/* Number of key slots in the key region. */
static inline uint64_t kr_key_slots(const kr_tree *t)
{
    return t->n_internal * t->fanout + t->n_leaves * t->leaf_size;
}

/* Slot index of node i's first key in the key region. */
static inline uint64_t kr_node_key_offset(const kr_tree *t, uint64_t node)
{
    return node < t->n_internal
               ? node * t->fanout
               : t->n_internal * t->fanout + (node - t->n_internal) * t->leaf_size;
}

/* Slot index of the first key of leaf li (0-based leaf number) in the key region. */
static inline uint64_t kr_leaf_key_offset(const kr_tree *t, uint64_t leaf)
{
    return t->n_internal * t->fanout + leaf * t->leaf_size;
}

/* Key or value at slot s of a width-generic array: util/width.h's accessors under the names the
 * layout code uses (one implementation). */
#define kr_load util_load_width
#define kr_store util_store_width

/* Copies bytes (a multiple of 16; dst 16-byte aligned) with non-temporal stores where the CPU has
 * them: a destination written whole and not read soon (a new leaf level) then costs no read of
 * its old contents. kr_stream_fence() makes a thread's streamed writes visible to the others;
 * call it before the end of the parallel region that streamed. */
static inline void kr_stream_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__) && !defined(KR_NO_STREAMING)
    __m128i *d = (__m128i *)dst;
    const __m128i *s = (const __m128i *)src;
    for (size_t k = 0; k < bytes / 16; k++)
        _mm_stream_si128(d + k, _mm_loadu_si128(s + k));
#else
    memcpy(dst, src, bytes);
#endif
}

static inline void kr_stream_fence(void)
{
#if defined(__SSE2__) && !defined(KR_NO_STREAMING)
    _mm_sfence();
#endif
}

/* Whether the tree holds the maximum key (then it is the last key of the last leaf). */
static inline bool kr_max_key_present(const kr_tree *t)
{
    if (t->n_keys == 0)
        return false;
    uint64_t last_leaf = t->n_leaves - 1;
    uint64_t in_last = t->leaf_rank[t->n_leaves] - t->leaf_rank[last_leaf];
    return kr_load(t->keys, t->key_bits, kr_leaf_key_offset(t, last_leaf) + in_last - 1) ==
           kr_max_key(t->key_bits);
}

static inline bool kr_valid_node_size(uint32_t s)
{
    return s >= KR_MIN_NODE && s <= KR_MAX_NODE && (s & (s - 1)) == 0;
}

/* Message buffer used by the component functions to report a failure in words. */
typedef struct kr_error {
    char message[512];
} kr_error;

void kr_set_error(kr_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* --- allocation (kr_alloc.c) ------------------------------------------------------------------
 * Every allocation of the build and the updater goes through kr_malloc / kr_calloc (freed with
 * free). In test builds (HARMONIA_TEST_HOOKS), kr_test_fail_allocation_after(n) makes the allocation
 * after the next n fail (once), so that tests can check that a failing batch changes nothing; -1
 * turns it off. Not thread-safe: the
 * components allocate only from the calling thread, outside parallel regions. */
void *kr_malloc(size_t bytes);
void *kr_calloc(size_t count, size_t size);
#ifdef HARMONIA_TEST_HOOKS /* the tests' build only (kr_alloc_test in key_region/meson.build) */
void kr_test_fail_allocation_after(long allocations);
#endif

/* --- bulk build (kr_build.c) ------------------------------------------------------------------ */

/* --- OpenMP teams ----------------------------------------------------------------------------
 * Every parallel region of the components names its team size in a num_threads clause, from the
 * threads the call was given: kr_resolve_threads(0) is the calling thread's OpenMP default
 * (omp_get_max_threads), anything else is taken as it is. No component changes OpenMP's settings. */
int kr_resolve_threads(int threads);

/* Copies bytes between host arrays on kr_resolve_threads(threads) OpenMP threads: copies of
 * KR_PARALLEL_COPY_MIN bytes and more in chunks of KR_PARALLEL_COPY_CHUNK bytes, smaller ones by
 * one memcpy (the copy-on-write of an update, the GPU engine's pinned staging). */
#define KR_PARALLEL_COPY_CHUNK ((size_t)1 << 20)
#define KR_PARALLEL_COPY_MIN (4 * KR_PARALLEL_COPY_CHUNK)
void kr_parallel_copy(void *dst, const void *src, size_t bytes, int threads);

typedef struct kr_build_params {
    uint32_t key_bits, fanout, leaf_size;
    double leaf_fill;
    harmonia_duplicates duplicates;
    int threads;           /* OpenMP team size; 0 = the calling thread's default */
    bool input_sorted;
    harmonia_progress_fn progress;
    void *progress_arg;
    double *step_seconds; /* NULL, or 3 entries the unsorted build fills with its steps' times
                             (benchmarks): sort partition pass, buckets sorted and written into
                             the leaves, internal levels */
} kr_build_params;

/* Builds *tree (zeroed by the caller) from count pairs; values NULL = positions. Allocates every
 * array with malloc; on failure frees what it allocated and leaves *tree zeroed. */
harmonia_status kr_build(kr_tree *tree, const kr_build_params *params, const void *keys,
                         const void *values, uint64_t count, kr_error *err);

/* The shape of a bulk-built tree of count unique keys (zeroes *tree first): the widths, n_keys,
 * ceil(count / (L * leaf_fill)) leaves (1 for the empty tree) and kr_plan_levels' levels. The keys are
 * spread over the leaves as evenly as possible, the earlier leaves taking the extra ones: leaf li holds
 * count / n_leaves keys, plus one when li < count % n_leaves, from rank li * (count / n_leaves) +
 * min(li, count % n_leaves). The CPU build and the GPU build (kr_build_gpu.h) both lay out this shape.
 * CAPACITY if the tree would be too large. */
harmonia_status kr_plan_even(kr_tree *tree, uint32_t key_bits, uint32_t fanout, uint32_t leaf_size,
                             double leaf_fill, uint64_t count, kr_error *err);

/* The arrays of a planned bulk-built tree (kr_alloc_arrays with the build's room to grow: an update's
 * re-layout reuses them). NO_MEMORY with nothing allocated. */
harmonia_status kr_alloc_built_arrays(kr_tree *tree, kr_error *err);

/* The most pairs the GPU build (kr_build_gpu.h) takes: its positions and offsets are 32-bit. */
#define KR_GPU_MAX_PAIRS 0xFFFFFFFEull

/* The build's messages, one wording for the CPU and the GPU build: a sorted input that descends at
 * position (key below previous_key at position - 1); a duplicate key, named with its positions in a
 * sorted input (first, second), with its input positions when the caller gave no values (the first
 * two occurrences), or alone when values were given. */
void kr_error_unsorted(kr_error *err, uint64_t key, uint64_t position, uint64_t previous_key);
void kr_error_duplicate(kr_error *err, uint64_t key, bool sorted_input, bool values_given, uint64_t first,
                        uint64_t second);

/* Builds *tree (zeroed by the caller) from count pairs with strictly increasing keys (the caller
 * guarantees it): ceil(count / (L * leaf_fill)) leaves with key counts as even as possible, then the
 * internal levels. values NULL = positions. Used by kr_build and by full rebuilds. */
harmonia_status kr_build_from_sorted_unique(kr_tree *tree, uint32_t key_bits, uint32_t fanout,
                                            uint32_t leaf_size, double leaf_fill,
                                            const void *keys, const void *values, uint64_t count,
                                            int threads, kr_error *err);

/* Plans the levels above tree->n_leaves leaves with tree->fanout: sets height, level_start,
 * n_internal and n_nodes. Every level's nodes get child counts as even as possible, so each internal
 * node has between 2 and F children. CAPACITY if the tree would be too large. */
harmonia_status kr_plan_levels(kr_tree *tree, kr_error *err);

/* Allocates keys (the full key region), leaf_values, leaf_rank and first_child for the planned
 * shape. NO_MEMORY on failure, with nothing left allocated. */
harmonia_status kr_alloc_arrays(kr_tree *tree, kr_error *err);

/* kr_alloc_arrays, taking each array from spare (the arrays of an earlier layout, malloc'd) where
 * it is large enough (malloc_usable_size) and allocating the others with room for slack more
 * (0.125: an eighth) so that a later layout of a grown tree fits them too. The spare's arrays are
 * taken or freed: *spare is zeroed either way. NO_MEMORY with nothing left allocated. */
harmonia_status kr_alloc_arrays_reusing(kr_tree *tree, kr_tree *spare, double slack, kr_error *err);

/* With the shape planned, the arrays allocated and the leaf level filled (its key slots, leaf_values,
 * leaf_rank, n_keys), fills the internal nodes' separators and padding and the first-child array
 * (separator j-1 of a node = the smallest key under its child j). Reads every leaf's first key;
 * writers of the leaf level use the three steps below instead, which need no second pass. */
void kr_build_internal_levels(kr_tree *tree, int threads);

/* The internal levels written while the leaf level is: kr_levels_begin allocates node_min (one
 * entry per internal node: the smallest key of its subtree), each writer of a leaf's first key
 * calls kr_levels_note_leaf (from any thread: every leaf touches its own separator slot or its own
 * node_min entry), and kr_levels_finish writes the first-child array, the padding and the levels
 * above the leaves' parents. The result equals kr_build_internal_levels' bit for bit. */
harmonia_status kr_levels_begin(const kr_tree *tree, uint64_t **node_min, kr_error *err);
void kr_levels_finish(kr_tree *tree, uint64_t *node_min, int threads);

/* The parent (node number) of leaf li, and li's place among its children: the leaves' parents
 * share them evenly, in order (as kr_plan_levels' levels do). Height >= 2. */
static inline uint64_t kr_leaf_parent(const kr_tree *t, uint64_t li, uint64_t *child_index)
{
    const uint64_t first = t->level_start[t->height - 2];
    const uint64_t parents = t->level_start[t->height - 1] - first, children = t->n_leaves;
    const uint64_t base = children / parents, extra = children % parents, boundary = extra * (base + 1);
    if (li < boundary) {
        *child_index = li % (base + 1);
        return first + li / (base + 1);
    }
    *child_index = (li - boundary) % base;
    return first + extra + (li - boundary) / base;
}

/* The same for consecutive leaves written in order, without a division per leaf: a cursor on the
 * next leaf's parent. */
typedef struct kr_leaf_cursor {
    uint64_t parent;   /* node number of the next leaf's parent */
    uint64_t child;    /* the next leaf's place among its children */
    uint64_t children; /* the parent's child count */
    uint64_t base, extra_end; /* parents before node extra_end have base + 1 children, the others base */
} kr_leaf_cursor;

static inline void kr_leaf_cursor_init(const kr_tree *t, kr_leaf_cursor *c, uint64_t li)
{
    memset(c, 0, sizeof *c);
    if (t->height < 2 || li >= t->n_leaves)
        return;
    const uint64_t first = t->level_start[t->height - 2];
    const uint64_t parents = t->level_start[t->height - 1] - first;
    c->base = t->n_leaves / parents;
    c->extra_end = first + t->n_leaves % parents;
    c->parent = kr_leaf_parent(t, li, &c->child);
    c->children = c->parent < c->extra_end ? c->base + 1 : c->base;
}

static inline void kr_leaf_cursor_note(kr_tree *t, kr_leaf_cursor *c, uint64_t *node_min, uint64_t first_key)
{
    if (c->children == 0) /* height 1: no parents */
        return;
    if (c->child > 0)
        kr_store(t->keys, t->key_bits, c->parent * t->fanout + c->child - 1, first_key);
    else
        node_min[c->parent] = first_key;
    if (++c->child == c->children) {
        c->parent++;
        c->child = 0;
        c->children = c->parent < c->extra_end ? c->base + 1 : c->base;
    }
}

static inline void kr_levels_note_leaf(kr_tree *t, uint64_t *node_min, uint64_t li, uint64_t first_key)
{
    if (t->height < 2)
        return;
    uint64_t j, parent = kr_leaf_parent(t, li, &j);
    if (j > 0)
        kr_store(t->keys, t->key_bits, parent * t->fanout + j - 1, first_key);
    else
        node_min[parent] = first_key;
}

/* --- sorting (kr_sort.c, kr_sort_impl.h) ----------------------------------------------------- */

/* A (key, value) pair as the sort moves it. */
typedef struct kr_pair64 {
    uint64_t key, value;
} kr_pair64;
typedef struct kr_pair32 {
    uint32_t key, value;
} kr_pair32;

/* Records a bucket sorted in cache may hold (and each thread's scratch): 512 KiB of them. */
#define KR_SORT_LOCAL_PAIRS64 ((1u << 19) / sizeof(kr_pair64))
#define KR_SORT_LOCAL_PAIRS32 ((1u << 19) / sizeof(kr_pair32))

/* Called once per sorted bucket, from any thread of the sort's team (thread = its number): the
 * bucket's first position in the sorted order, its sorted records (kr_pair32 or kr_pair64, valid
 * only during the call) and their count. Buckets cover [0, count) without overlap, in no
 * particular order; equal keys are always in one bucket. */
typedef void (*kr_sort_visit_fn)(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread);

/* Sorts count pairs (keys, values of key_bits width; values NULL = the positions 0, 1, ...) by
 * key, stable (equal keys keep input order), and hands the result to visit bucket by bucket.
 * records: count records of scratch (their contents afterwards are unspecified). The input is
 * read in full before the first visit. OpenMP-parallel above KR_PARALLEL_MIN pairs, on a team of
 * kr_resolve_threads(threads) (thread numbers below it). NO_MEMORY is the only failure (then some
 * buckets may have been visited). */
harmonia_status kr_sort_pairs_visit(uint32_t key_bits, const void *keys, const void *values, uint64_t count,
                                    void *records, kr_sort_visit_fn visit, void *arg, int threads,
                                    kr_error *err);

/* Sorts count pairs (values NULL = the positions) by key, stable, into keys_out / values_out (which
 * may be the input arrays). */
harmonia_status kr_sort_pairs_into(uint32_t key_bits, const void *keys, const void *values, uint64_t count,
                                   void *keys_out, void *values_out, int threads, kr_error *err);

/* Sorts count (key, value) pairs ascending by key, stable (equal keys keep input order), in
 * place; keys/values arrays of key_bits width. */
harmonia_status kr_sort_pairs(uint32_t key_bits, void *keys, void *values, uint64_t count,
                              int threads, kr_error *err);

void kr_tree_free_arrays(kr_tree *tree);

/* --- CPU engine (kr_search.c) ----------------------------------------------------------------- */

/* For count queries (key width), the leaf number (0-based, not the node number) where each search
 * ends; grouped descents with prefetching, OpenMP-parallel. */
void kr_leaf_batch(const kr_tree *t, const void *queries, uint64_t count, uint64_t *leaf_out, int threads);

void kr_lookup_batch(const kr_tree *t, const void *queries, uint64_t count, void *values_out,
                     uint8_t *found_out, int threads);
void kr_lower_bound_batch(const kr_tree *t, const void *queries, uint64_t count, void *keys_out,
                          void *values_out, uint8_t *found_out, int threads);
void kr_range_count_batch(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                          uint64_t *counts_out, int threads);
/* Writes offsets[0..count] (exclusive scan of the counts). */
void kr_range_offsets(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                      uint64_t *offsets, int threads);
void kr_range_collect_batch(const kr_tree *t, const void *lo, const void *hi, uint64_t count,
                            const uint64_t *offsets, void *keys_out, void *values_out,
                            int threads);

/* In-place inclusive prefix sum of n counts, OpenMP-parallel (two passes over per-thread blocks). */
void kr_inclusive_scan(uint64_t *values, uint64_t n, int threads);

/* Key and value of the key with global rank r (r < n_keys). */
void kr_at_rank(const kr_tree *t, uint64_t r, uint64_t *key, uint64_t *value);

/* --- integrity checker (kr_check.c) ----------------------------------------------------------- */

/* Checks every invariant of the layout above. Returns HARMONIA_OK or HARMONIA_ERR_CORRUPT with the
 * first broken invariant in err. Safe on any contents as long as the array sizes implied by the
 * counts are allocated (the loader validates those sizes first). */
harmonia_status kr_check_tree(const kr_tree *tree, kr_error *err);

/* The O(nodes) part of kr_check_tree: the shape and counts, the first-child array (bounds,
 * monotone, 2..F children per node, each level's children exactly the next level) and the leaf
 * ranks (0 .. n_keys, 1..L keys per leaf). What it guarantees is what every reader needs to stay
 * inside the arrays: a descent from the root visits one node per level and ends in a leaf, and a
 * leaf's key count is in [1, L] (0 only for the empty tree). It does not read the key region: keys
 * out of order, bad separators or padding give wrong answers, never reads outside the arrays (the
 * search engine clamps what such keys could make it compute). The loader runs it on every file,
 * verified or not. */
harmonia_status kr_check_structure(const kr_tree *tree, kr_error *err);

#endif /* HARMONIA_KEY_REGION_H */
