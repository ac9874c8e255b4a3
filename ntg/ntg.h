/* ntg.h — the GPU traversal kernels' interface (narrowed thread groups): the plain by-value view of
 * a device tree that kernels receive, the top cut of its first-child array, and one launcher per
 * operation. Kernels exist for G in {1, 2, 4, 8, 16, 32} and both key widths; F and L
 * are read from the view, so every F and L the build offers is served by the same kernels.
 * No global state: every launcher works on the device that is current and the stream it is given,
 * and two trees' launches never share anything. PSA (psa/, below ntg/) gives the bucket function of
 * the partitioned search; the device copy and the pipelines are the front's (harmonia/gpu_*.cu). */
#ifndef HARMONIA_NTG_H
#define HARMONIA_NTG_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "prefix_sum/prefix_sum.h"
#include "psa/psa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most levels a tree has (key_region.h LIMITS; harmonia.h HARMONIA_MAX_LEVELS, checked by the
 * front at compile time). */
#define NTG_MAX_LEVELS 32

/* A device tree as the kernels see it: device pointers and sizes, nothing owned, and each internal
 * level's closed form of the first-child array (prefix_sum.h, THE EVEN SHARE), from which a descent
 * computes a node's children without reading the array (one uniform constant-bank read a level and
 * a few integer operations). The view is passed by value with each launch, so the closed forms live
 * in the kernel-parameter constant bank, per tree and per launch, with no process-wide __constant__
 * symbol to share between trees. It is 504 bytes (64-bit build); the top cut travels apart, and
 * only with the kernels that read it (bench/NOTES.md, "Session 14"). */
typedef struct ntg_view {
    const void *keys;           /* key region (device) */
    const void *leaf_values;    /* leaf values (device) */
    const uint64_t *leaf_rank;  /* n_leaves + 1 entries (device) */
    uint64_t n_internal, n_leaves, n_keys;
    uint64_t leaf_key_base;     /* n_internal * F */
    uint32_t key_bits, fanout, leaf_size, height;
    bool max_key_present;
    ps_level levels[NTG_MAX_LEVELS]; /* levels[l]: internal level l's closed form (l < height - 1) */
    const struct ntg_start_entry *start; /* a start table (below; device), or NULL: from the root. The
                                          * engine keeps two a version (ntg_policy.h) and puts in the
                                          * view of each launch the one its descents want */
    psa_plan start_plan;        /* its buckets (psa_bucket) */
} ntg_view;

/* THE START TABLE (redundant: built from the tree by ntg_build_start_table, rebuilt with every
 * version of the device copy). The descents' shortcut past the levels that every key of a narrow
 * key range walks alike: the top levels of a descent are the same for neighbouring keys, and each
 * costs a dependent memory round trip and ≈ 45 instructions (bench/NOTES.md, "The start table").
 * For each bucket u of start_plan (psa.h: 2^bits equal key ranges of the tree's span, keys below
 * and above the span in the first and the last), entry u says where the descent of any key q of
 * the bucket may begin: at level `level` (internal, or the leaf level height - 1: node numbers
 * count the leaves after the internal nodes), at node `node`, or, when the entry has two
 * candidates, at node + 1 if q >= separator.
 * Invariant (the GPU tests check every entry against descents from the root on the host tree): for
 * every q with psa_bucket(&start_plan, q) == u, the descent of q from the root passes through that
 * node at that level. It holds because a descent is monotone in q (node keys sorted, children in
 * node order): the entry is built from the descents of the bucket's smallest and largest keys (0
 * and the largest key value for the first and last buckets), `level` is the deepest level at
 * which their paths are at most one node apart, and with two nodes apart the separator is the key
 * of their last common node that sent them to different children. */
#define NTG_START_TWO 0x80000000u /* `level` bit: two candidates */
typedef struct ntg_start_entry {
    uint32_t node;
    uint32_t level;     /* the level, | NTG_START_TWO */
    uint64_t separator; /* two candidates: node + 1 from this key on */
} ntg_start_entry;

/* The top cut of the first-child array, first_child[0 .. entries), covering its first `levels`
 * internal levels: the paper's "top levels in constant memory", the tree's constant-levels setting
 * (harmonia_set_constant_levels). Passed by value (the constant bank) to the kernels that read it:
 * a descent takes a cut level's children from it (one constant-bank read a node, serialised when a
 * warp's nodes differ) and the other levels' from their closed form. The readers are the point
 * lookups and lower bounds: the default-shape kernels take a copy of at most NTG_SMALL_CUT_ENTRIES
 * entries (ntg_policy.h: the root's two by default, two levels of the default fanouts fit); a cut
 * of more entries runs the generic kernels (F and L from the view, no small-batch values-with-leaf
 * path), which take it whole. */
typedef struct ntg_top_cut {
    uint32_t levels;            /* internal levels, root first, whose children come from the cut */
    uint32_t entries;           /* first_child entries in first_child (<= PS_TOP_MAX_ENTRIES) */
    uint32_t first_child[PS_TOP_MAX_ENTRIES];
} ntg_top_cut;

/* Group sizes that have kernels. */
static inline bool ntg_valid_group_size(uint32_t g)
{
    return g == 1 || g == 2 || g == 4 || g == 8 || g == 16 || g == 32;
}

/* A launch's completion signal (ntg_launch_lookup, ntg_launch_lower_bound; NULL: none). Every block
 * of the launch, once its threads are done, counts itself in *blocks_done (device memory, 0 before
 * the launch); the last one sets it back to 0 and, after a system-wide fence, writes `sequence` to
 * *flag (host memory the device writes through its mapping), so that the host thread that launched
 * it learns that every result is written — and every read of the tree done — without waiting for
 * the stream (bench/NOTES.md, "Session 28": 0.6-1 us sooner than cudaStreamSynchronize). */
typedef struct ntg_signal {
    unsigned int *blocks_done;
    unsigned int *flag;
    unsigned int sequence;
} ntg_signal;

/* Point lookups of n queries (device arrays). With positions (the window-relative original slots
 * of sorted queries) and no positions_out.out, the result of query slot i goes to output slot
 * positions[i], restoring the original order. With positions_out.out (psa.h: 64- or 32-bit words),
 * results stay in slot i and slot i's position is positions_out.base + (positions ? positions[i] :
 * i). Without either, slot i.
 * For queries in no particular order: on the fixed shape, batches of NTG_L2_HINTS_BATCH queries or
 * more load their leaves and values with an L2 priority (ntg_policy.h, NTG_L2_HINTS; sm_80 and up),
 * which slows queries grouped by key — those go through ntg_launch_lookup_q, which loads plainly. */
/* cut: the tree's top cut (NULL or no levels: every level from its closed form). */
cudaError_t ntg_launch_lookup(const ntg_view *view, const ntg_top_cut *cut, uint32_t group_size, const void *queries,
                              const uint32_t *positions, uint64_t n, void *values_out,
                              uint8_t *found_out, psa_positions positions_out, const ntg_signal *signal,
                              cudaStream_t stream);

/* The same with queries_per_group (Q) queries a group in flight at once (each level's Q node loads
 * issued before any is counted): the default-shape kernels of 64-bit keys for G 2, 4, 8 and Q = 2,
 * batches of at least NTG_VALUES_WITH_LEAF_BATCH (ntg_policy.h); any other width, G, Q or batch runs
 * as Q = 1, with plain loads (for queries grouped by key, e.g. PSA's partitioned windows: no L2
 * priorities, whatever the batch), as does a call with positions_out. */
cudaError_t ntg_launch_lookup_q(const ntg_view *view, const ntg_top_cut *cut, uint32_t group_size,
                                uint32_t queries_per_group, const void *queries, const uint32_t *positions,
                                uint64_t n, void *values_out, uint8_t *found_out, psa_positions positions_out,
                                cudaStream_t stream);

/* Lower bound; keys_out and values_out may be NULL. Output indexing and signal as ntg_launch_lookup. */
cudaError_t ntg_launch_lower_bound(const ntg_view *view, const ntg_top_cut *cut, uint32_t group_size, const void *queries,
                                   const uint32_t *positions, uint64_t n, void *keys_out,
                                   void *values_out, uint8_t *found_out, const ntg_signal *signal,
                                   cudaStream_t stream);

/* Range counts: counts_out[i] = keys in [lo[i], hi[i]]. */
cudaError_t ntg_launch_range_count(const ntg_view *view, uint32_t group_size, const void *lo,
                                   const void *hi, uint64_t n, uint64_t *counts_out,
                                   cudaStream_t stream);

/* Range collect: for range i, skips skip[i] pairs (NULL = none) from the first key >= lo[i], then
 * writes the next offsets[i+1] - offsets[i] pairs at keys_out/values_out + offsets[i] - offset_base
 * (device arrays; either may be NULL). The whole group copies a range's pairs, coalesced. */
cudaError_t ntg_launch_range_collect(const ntg_view *view, uint32_t group_size, const void *lo,
                                     const uint64_t *skip, uint64_t n, const uint64_t *offsets,
                                     uint64_t offset_base, void *keys_out, void *values_out,
                                     cudaStream_t stream);

/* The same for whole ranges (no skip, offset_base 0) with G picked on the device from the ranges'
 * mean length (offsets[n] - offsets[0]) / n by ntg_collect_group_size (ntg_policy.h), short_group
 * the G of short ranges: device offsets are never read back to the host. */
cudaError_t ntg_launch_range_collect_auto(const ntg_view *view, uint32_t short_group, const void *lo,
                                          uint64_t n, const uint64_t *offsets, void *keys_out,
                                          void *values_out, cudaStream_t stream);

/* The start table of the view's tree (above) for the buckets of plan (2^plan->bits entries of
 * table, device memory); view->start is not read (descents from the root). A tree of one level
 * (the root a leaf) or no keys has none. Asynchronous on stream. */
cudaError_t ntg_build_start_table(const ntg_view *view, const psa_plan *plan, ntg_start_entry *table,
                                  cudaStream_t stream);

/* --- the search of a window partitioned by PSA (ntg_partitioned.cu; psa.h) ----------------------
 * The bucket table of a plan: table[u] for u = 0 .. 2^plan->bits (2^bits + 1 entries, device
 * memory) = the last leaf whose first key is <= psa_bucket_start(plan, u) (0 if none), and the last
 * leaf for u = 2^bits. It depends on the leaves' first keys: build it again after the device copy
 * changes. Asynchronous on stream. */
cudaError_t ntg_build_bucket_table(const ntg_view *view, const psa_plan *plan, uint32_t *table,
                                   cudaStream_t stream);

/* Point lookups (lower_bound false) or lower bounds of a partitioned window of n slots (psa.h: keys
 * grouped by bucket in bucket order) of a tree with n_keys > 0. Slots below *in_span (a device
 * word; NULL: all n) are searched, results in slot order: found_out[j], values_out[j] (may be
 * NULL), keys_out[j] (lower bounds; may be NULL). unordered: these are the caller's results (the
 * partition wrote each slot's position), so the slots from *in_span on (queries outside the keys'
 * span) get not found too; otherwise the restore answers them. Asynchronous on stream. */
cudaError_t ntg_launch_search_partitioned(const ntg_view *view, const psa_plan *plan, const uint32_t *table,
                                          bool lower_bound, const void *keys, uint32_t n, const uint32_t *in_span,
                                          void *values_out, void *keys_out, uint8_t *found_out, bool unordered,
                                          cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* HARMONIA_NTG_H */
