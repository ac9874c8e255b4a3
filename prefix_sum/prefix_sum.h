/* prefix_sum.h — the prefix-sum child array (first_child) of a Harmonia tree: its invariant, its
 * build from the level shape, its checker, and the cut of its top part that the GPU keeps in
 * constant memory. The bottom of the component stack: it depends on nothing but the shape of the
 * levels (level_start), so the key region (key_region/, which owns the keys and calls this to build
 * and check the array) and the GPU kernels (ntg/, which read the cut) both sit above it.
 *
 * THE SHAPE. Nodes are numbered breadth-first, root = node 0, leaves last (key_region.h has the
 *   picture). level_start[l] is the first node of level l (l = 0 .. height - 1) and
 *   level_start[height] = n_nodes; the last level holds the leaves, so n_internal =
 *   level_start[height - 1].
 *
 * INVARIANT. For the n_internal internal nodes:
 *   first_child[0] = 1 (the root's children start at node 1) when n_internal > 0;
 *   first_child[i+1] - first_child[i] = the child count of node i, in [2, F];
 *   first_child[level_start[l]] = level_start[l+1] for every internal level l (the children of
 *   level l are exactly level l+1, in order);
 *   first_child[n_internal] = n_nodes;
 *   THE EVEN SHARE: level l's P nodes share level l+1's C nodes as evenly as possible, in order,
 *   the earlier ones taking the extra children (ps_even_share; every layout is built by ps_build):
 *   node level_start[l] + p has share + (p < extra) children, share = C / P, extra = C % P, so
 *     first_child[level_start[l] + p] = level_start[l+1] + p * share + min(p, extra).
 * So the array is strictly increasing, child j of node i is node first_child[i] + j, and the whole
 * array costs 4 bytes per internal node (about n_keys / (L*F/2) entries), small enough that its top
 * levels fit in the GPU's constant bank. The even share gives each level a closed form (ps_level,
 * three words): the GPU kernels compute a node's children from it instead of reading the array, so
 * a level of a descent is one memory access (the node's keys), not two. ps_check checks every entry
 * of the array against it, so the closed form and the array never disagree in a checked tree.
 *
 * THE TOP CUT. The GPU kernels read first_child[0 .. entries) from constant memory and the rest
 * through the read-only cache. The cut is whole levels plus one sentinel entry after them (so that
 * every node of those levels finds its child count there too), at most PS_TOP_MAX_ENTRIES entries:
 * ntg/ passes them by value, as a kernel parameter of their own (the constant bank), to the point
 * lookups and lower bounds (ntg.h, ntg_top_cut), so the budget is part of those kernels' parameter
 * size.
 */
#ifndef HARMONIA_PREFIX_SUM_H
#define HARMONIA_PREFIX_SUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most first-child entries a device copy keeps in constant memory (2 KiB of kernel
 * parameters; the classic 4 KiB parameter limit leaves room for the view beside it). */
#define PS_TOP_MAX_ENTRIES 512u

/* Child count of parent p when n_parents share n_children as evenly as possible (the earlier
 * parents take the extra ones). The build of the level plan and of first_child share it. */
static inline uint64_t ps_even_share(uint64_t n_children, uint64_t n_parents, uint64_t p)
{
    return n_children / n_parents + (p < n_children % n_parents ? 1 : 0);
}

/* The closed form of one internal level (THE EVEN SHARE above), in three words for the kernels'
 * chain: node i (i = start + p) of the level has share + (i < extra_end) children, the first being
 *   first_child[i] = next + p * share + min(p, extra) = base + i * share + min(i, extra_end)
 * with extra_end = start + extra and base = next - start * (share + 1), both in arithmetic modulo
 * 2^32 (the result is a node number, below 2^32). */
typedef struct ps_level {
    uint32_t base, share, extra_end;
} ps_level;

#if defined(__CUDACC__)
#define PS_HD __host__ __device__ __forceinline__
#else
#define PS_HD static inline
#endif

/* The children of node (a node of the level lv describes): the first, and the last's offset from
 * it (child count - 1). Integer only, the same on the host and the device. */
PS_HD uint32_t ps_level_children(const ps_level *lv, uint32_t node, uint32_t *last_offset)
{
    const uint32_t more = node < lv->extra_end ? node : lv->extra_end;
    *last_offset = lv->share - (node < lv->extra_end ? 0u : 1u);
    return lv->base + node * lv->share + more;
}

/* levels[l] for the internal levels l = 0 .. height - 2 of the shape (none for height 1). */
void ps_levels(const uint64_t *level_start, uint32_t height, ps_level *levels);

/* Fills first_child[0 .. level_start[height - 1]] for the shape: each level's nodes share the next
 * level's nodes evenly, in order (ps_even_share). */
void ps_build(uint32_t *first_child, const uint64_t *level_start, uint32_t height);

/* Checks the invariant above (the even share included, entry by entry) for a tree of the shape and
 * fanout. Returns true when it holds;
 * otherwise false with the first broken sentence in message (message_bytes bytes, may be 0). */
bool ps_check(const uint32_t *first_child, const uint64_t *level_start, uint32_t height,
              uint32_t fanout, char *message, size_t message_bytes);

/* The top cut: the first-child entries of the whole internal levels, root first, that fit in
 * max_entries entries (capped at PS_TOP_MAX_ENTRIES) together with the sentinel entry after them;
 * 0 when not even the root level fits or there are no internal levels. *levels_out (may be NULL)
 * gets the number of levels covered. */
uint64_t ps_top_entries(const uint64_t *level_start, uint32_t height, uint64_t max_entries,
                        uint32_t *levels_out);

#endif /* HARMONIA_PREFIX_SUM_H */
