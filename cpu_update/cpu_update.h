/* cpu_update.h — the OpenMP batch updater (DESIGN §6): inserts, updates, upserts and deletes applied
 * to the key region as one atomic batch. The front (harmonia/tree.c) checks the arguments, swaps the
 * result in and synchronises the device copy; this component never touches a tree it was not told
 * it may change.
 *
 * THE ALGORITHM
 *  1. sort: records (key, value, operation index and kind), a stable MSD radix sort
 *     (key_region/kr_sort_impl.h); a batch already in key order is only copied. A run = the
 *     operations on one key, in batch order.
 *  2. units: the leaf level is cut into ranges of leaves, each with at most an even share of the
 *     leaves and of the operations (threads x 8 shares of each); a unit's operations are those from
 *     the separator on the left of its first leaf (one binary search), so the units own disjoint
 *     leaves and disjoint operations and need no locks.
 *  3. plan (parallel over units, dynamic schedule): each unit walks its runs in key order along
 *     the leaf level with a finger descent (the path of the previous key; the next key climbs only
 *     as far as its key range ends, so a dense batch reads the leaves' parents once, in order) and,
 *     per touched leaf, finds each run's key by a binary search of the leaf's keys: the key count
 *     after the batch, the statistics and the first operation that fails under a strict policy.
 *     Nothing is written: a failing batch stops here, the tree untouched.
 *  4. each touched leaf becomes 0 nodes (emptied: removed), 1 node, or 1 + k nodes when its keys
 *     overflow L: the leaf is split into itself and k auxiliary nodes, each filled to about
 *     split_fill * L, the keys spread evenly over them.
 *  5. apply: when no leaf is split or removed (and the arrays are writable), every touched leaf is
 *     merged in place (through a leaf of scratch) and the leaf ranks are shifted: the internal
 *     nodes stay valid (a key goes to the leaf its descent reaches, between the separators around
 *     it). Otherwise, the re-layout: the new leaf level is the old one with auxiliary nodes spliced
 *     in and emptied leaves dropped; each unit's first new leaf is a prefix sum over the units'
 *     node counts, so the units write in parallel: runs of untouched leaves as block copies, touched
 *     leaves merged straight into their new node(s); each new leaf's first key is noted as it is
 *     written (kr_levels_note_leaf), so the internal levels and the first-child array are then
 *     built without reading the leaves again (kr_levels_finish). Every allocation happens before
 *     the first write to the tree, so out of memory also changes nothing.
 * UNDERFULL LEAVES: a leaf keeps between 1 and L keys; only emptied leaves are removed, and leaves
 *  are never merged with their neighbours, so after many deletes a leaf may hold a single key. The
 *  height and the lookups stay correct; a rebuild (harmonia_build over the pairs) restores the fill.
 * WHAT CHANGED, for a device copy: in place, the touched leaves (dirty_leaves) and whether any key
 *  count changed (the leaf ranks); after a re-layout, on request, the runs of old leaves copied
 *  unchanged (moves): every other new leaf, the leaf ranks and the internal levels are new.
 */
#ifndef HARMONIA_CPU_UPDATE_H
#define HARMONIA_CPU_UPDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "harmonia.h"
#include "key_region/key_region.h"

typedef struct upd_params {
    harmonia_insert_policy insert_existing;
    harmonia_update_policy update_missing;
    double split_fill;
    bool in_place_allowed; /* false when the arrays are read-only (a mapped file) */
    bool report_moves;     /* after a re-layout, list the runs of leaves copied unchanged */
    kr_tree *spare;        /* NULL, or the arrays of an earlier layout (malloc'd) that a re-layout
                              writes into where they are large enough (kr_alloc_arrays_reusing):
                              no page faults of fresh memory. Taken or freed by a re-layout, left
                              as it is otherwise. Nobody may read them during the call. */
    int threads;           /* OpenMP team size of every parallel region; 0 = the caller's default */
    /* Copy-on-write of in-place batches (queries read the tree during the call): NULL, or where an
     * in-place batch writes instead of the tree's arrays. Before its first write, prepare_target
     * makes *in_place_target a copy of the tree (the same shape and contents, in arrays of its own;
     * NO_MEMORY leaves the tree unchanged); the tree itself is then only read, and
     * result->new_tree is the new version (the tree itself, arrays and all, when the batch touches
     * no leaf). With a target, a mapped (read-only) tree is applied in
     * place too. */
    kr_tree *in_place_target;
    harmonia_status (*prepare_target)(void *context, const kr_tree *tree, kr_tree *target, kr_error *err);
    void *prepare_context;
} upd_params;

/* A run of old leaves copied unchanged (keys and values) by a re-layout: old leaves
 * [old_first, old_first + count) are new leaves [new_first, new_first + count). */
typedef struct upd_leaf_move {
    uint64_t old_first, new_first, count;
} upd_leaf_move;

/* What a batch did, beyond the public statistics. */
typedef struct upd_result {
    bool in_place;            /* the shape unchanged: the tree's own arrays were changed, or with
                                 in_place_target, the target's (then new_tree is the target) */
    kr_tree new_tree;         /* otherwise: the new layout, to be swapped in by the caller */
    uint64_t *dirty_leaves;   /* in place: the touched leaves, ascending (kr_malloc'd; caller frees) */
    uint64_t n_dirty;
    bool ranks_changed;       /* in place: some leaf's key count changed */
    upd_leaf_move *moves;     /* re-layout with report_moves: ascending (kr_malloc'd; caller frees) */
    uint64_t n_moves;
    uint64_t failed_op;       /* on KEY_EXISTS / KEY_MISSING: the index of the first failing op */
} upd_result;

/* Tuning switch for benchmarks (not thread-safe; set before any batch): write the new leaf level
 * with non-temporal stores (true, the default) or plain copies. */
extern bool upd_tuning_streaming;

/* Applies the batch to tree under params. On success either the tree was changed in place
 * (result->in_place) or result->new_tree holds the new layout (the old arrays untouched). On
 * failure nothing was changed and err says why (naming the failing operation's index).
 * Times in stats: sort_seconds the sort; apply_seconds the units and the plan, and in place the
 * merges and the ranks; relayout_seconds the new arrays' allocation, the new leaf level (merges
 * and copies) and the internal levels.
 * Threads: params->threads (num_threads clauses; OpenMP's settings are never changed). */
harmonia_status upd_apply_batch(kr_tree *tree, const upd_params *params, const uint8_t *kinds,
                                const void *keys, const void *values, uint64_t count,
                                harmonia_update_stats *stats, upd_result *result, kr_error *err);

#endif /* HARMONIA_CPU_UPDATE_H */
