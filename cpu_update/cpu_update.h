/* cpu_update.h — the OpenMP batch updater (DESIGN §6): inserts, updates, upserts and deletes applied
 * to the key region as one atomic batch. The front (harmonia/tree.c) checks the arguments, swaps the
 * result in and synchronises the device copy; this component never touches a tree it was not told
 * it may change.
 *
 * THE ALGORITHM
 *  1. sort: (key, operation index) pairs, stable radix sort; a run = the operations on one key, in
 *     batch order.
 *  2. target leaves: one descent per run (parallel); runs are sorted, so each touched leaf owns a
 *     contiguous group of runs and the leaves can be worked on independently, without locks.
 *  3. plan (parallel, one thread per touched leaf, dynamic schedule): merge the leaf's keys with its
 *     runs without writing anything: the final key count, the statistics and the first operation
 *     that fails under a strict policy. A failing batch stops here, the tree untouched.
 *  4. each touched leaf becomes 0 nodes (emptied: removed), 1 node, or 1 + k nodes when the merge
 *     overflows L: the leaf is split and the overflow goes to k auxiliary nodes attached to it, each
 *     filled to about split_fill * L, the keys spread evenly over the leaf and its auxiliary nodes.
 *  5. apply: when no leaf is split or removed (and the arrays are writable), every touched leaf is
 *     merged in place and the leaf ranks are shifted: the internal nodes stay valid (a key goes to the
 *     leaf its descent reaches, between the separators around it). Otherwise, the re-layout: the new
 *     leaf level is the old one with auxiliary nodes spliced in and emptied leaves dropped; each old
 *     leaf's new place is a prefix sum over the node counts, so every move is known in advance and
 *     the moves run in parallel (untouched spans as block copies); then the internal levels and the
 *     first-child array are rebuilt bottom-up (kr_build_internal_levels) into new arrays. Every
 *     allocation happens before the first write to the tree, so out of memory also changes nothing.
 * UNDERFULL LEAVES: a leaf keeps between 1 and L keys; only emptied leaves are removed, and leaves
 *  are never merged with their neighbours, so after many deletes a leaf may hold a single key. The
 *  height and the lookups stay correct; a rebuild (harmonia_build over the pairs) restores the fill.
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
    int threads;           /* OpenMP team size of every parallel region; 0 = the caller's default */
} upd_params;

/* What a batch did, beyond the public statistics. */
typedef struct upd_result {
    bool in_place;            /* the tree's own arrays were changed (shape unchanged) */
    kr_tree new_tree;         /* otherwise: the new layout, to be swapped in by the caller */
    uint64_t *dirty_leaves;   /* in place: the touched leaves, ascending (kr_malloc'd; caller frees) */
    uint64_t n_dirty;
    bool ranks_changed;       /* in place: some leaf's key count changed */
    uint64_t failed_op;       /* on KEY_EXISTS / KEY_MISSING: the index of the first failing op */
} upd_result;

/* Applies the batch to tree under params. On success either the tree was changed in place
 * (result->in_place) or result->new_tree holds the new layout (the old arrays untouched). On
 * failure nothing was changed and err says why (naming the failing operation's index).
 * Threads: params->threads (num_threads clauses; OpenMP's settings are never changed). */
harmonia_status upd_apply_batch(kr_tree *tree, const upd_params *params, const uint8_t *kinds,
                                const void *keys, const void *values, uint64_t count,
                                harmonia_update_stats *stats, upd_result *result, kr_error *err);

#endif /* HARMONIA_CPU_UPDATE_H */
