/* prefix_sum.h — the prefix-sum child array (first_child) of a Harmonia tree: its invariant (built
 * by kr_build_internal_levels), its checker, and the cut of its top part that goes to __constant__
 * memory. The key region it indexes is described in key_region/key_region.h.
 *
 * INVARIANT. For the n_internal internal nodes, numbered breadth-first:
 *   first_child[0] = 1 (the root's children start at node 1) when n_internal > 0;
 *   first_child[i+1] - first_child[i] = the child count of node i, in [2, F];
 *   first_child[level_start[l]] = level_start[l+1] for every internal level l (the children of
 *   level l are exactly level l+1, in order);
 *   first_child[n_internal] = n_nodes.
 * So the array is strictly increasing, child j of node i is node first_child[i] + j, and the whole
 * array costs 4 bytes per internal node (about n_keys / (L*F/2) entries), small enough that its top
 * levels fit in the 64 KiB of __constant__ memory.
 *
 * CONSTANT CUT. The GPU keeps first_child[0 .. ps_constant_entries) in __constant__ memory, the
 * whole levels that fit in PS_CONSTANT_BUDGET_BYTES (plus the one sentinel entry after them); the
 * rest is read through the read-only cache.
 */
#ifndef HARMONIA_PREFIX_SUM_H
#define HARMONIA_PREFIX_SUM_H

#include <stdint.h>

#include "key_region/key_region.h"

/* Bytes of __constant__ memory given to the top of the first-child array (the rest of the 64 KiB
 * is left to kernel parameters and other constants). */
#define PS_CONSTANT_BUDGET_BYTES (48u * 1024u)
#define PS_CONSTANT_MAX_ENTRIES (PS_CONSTANT_BUDGET_BYTES / 4u)

/* Number of first_child entries that fit in __constant__ memory: the entries of the levels that fit
 * whole in the budget, plus one sentinel entry so that every node of those levels finds its child
 * count there too. *levels_out gets the number of such levels. This is the most a device copy may
 * keep there (HARMONIA_CONSTANT_LEVELS_ALL); by default it keeps the root level only, see
 * harmonia_set_constant_levels and hm_constant_entries (harmonia/tree.c) for why. */
uint64_t ps_constant_entries(const kr_tree *tree, uint32_t *levels_out);

/* The same with at most max_entries entries (whole levels plus the sentinel; 0 when not even the
 * root fits). */
uint64_t ps_constant_entries_capped(const kr_tree *tree, uint64_t max_entries, uint32_t *levels_out);

/* Checks the invariant above for tree->first_child. HARMONIA_OK or HARMONIA_ERR_CORRUPT with the
 * first broken sentence in err. */
harmonia_status ps_check(const kr_tree *tree, kr_error *err);

#endif /* HARMONIA_PREFIX_SUM_H */
