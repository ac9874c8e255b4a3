/* prefix_sum.c — builds and checks the first-child array and computes its __constant__ cut.
 * The device upload lives with the GPU engine (ntg/), which owns the __constant__ symbol. */
#include "prefix_sum/prefix_sum.h"

#include <inttypes.h>

/* the GPU kernels size their __constant__ array with the same number (ntg/ntg.h) */
_Static_assert(PS_CONSTANT_MAX_ENTRIES == 12288u, "keep NTG_CONSTANT_ENTRIES in ntg/ntg.h equal");

uint64_t ps_constant_entries(const kr_tree *tree, uint32_t *levels_out)
{
    return ps_constant_entries_capped(tree, PS_CONSTANT_MAX_ENTRIES, levels_out);
}

uint64_t ps_constant_entries_capped(const kr_tree *tree, uint64_t max_entries, uint32_t *levels_out)
{
    if (max_entries > PS_CONSTANT_MAX_ENTRIES)
        max_entries = PS_CONSTANT_MAX_ENTRIES;
    uint32_t levels = 0;
    uint64_t entries = 0;
    /* internal levels are 0 .. height-2; a level fits when its entries plus the sentinel do */
    for (uint32_t l = 0; l + 1 < tree->height; l++) {
        uint64_t end = tree->level_start[l + 1];
        if (end + 1 > max_entries)
            break;
        entries = end + 1;
        levels = l + 1;
    }
    if (levels_out)
        *levels_out = levels;
    return entries;
}

harmonia_status ps_check(const kr_tree *t, kr_error *err)
{
    if (t->n_internal == 0)
        return HARMONIA_OK;
    const uint32_t *fc = t->first_child;
    if (fc[0] != 1) {
        kr_set_error(err, "prefix sums: first_child[0] is %" PRIu32 ", not 1", fc[0]);
        return HARMONIA_ERR_CORRUPT;
    }
    for (uint64_t i = 0; i < t->n_internal; i++) {
        uint64_t c = (uint64_t)fc[i + 1] - fc[i];
        if (fc[i + 1] <= fc[i] || c < 2 || c > t->fanout) {
            kr_set_error(err,
                         "prefix sums: internal node %" PRIu64 " has %" PRId64
                         " children (first_child %" PRIu32 " -> %" PRIu32 "), not in [2, %" PRIu32 "]",
                         i, (int64_t)fc[i + 1] - (int64_t)fc[i], fc[i], fc[i + 1], t->fanout);
            return HARMONIA_ERR_CORRUPT;
        }
    }
    for (uint32_t l = 0; l + 1 < t->height; l++) {
        if (fc[t->level_start[l]] != t->level_start[l + 1]) {
            kr_set_error(err,
                         "prefix sums: the first child of level %" PRIu32 " is node %" PRIu32
                         ", but level %" PRIu32 " starts at node %" PRIu64,
                         l, fc[t->level_start[l]], l + 1, t->level_start[l + 1]);
            return HARMONIA_ERR_CORRUPT;
        }
    }
    if (fc[t->n_internal] != t->n_nodes) {
        kr_set_error(err, "prefix sums: first_child[n_internal] is %" PRIu32 ", not n_nodes %" PRIu64,
                     fc[t->n_internal], t->n_nodes);
        return HARMONIA_ERR_CORRUPT;
    }
    return HARMONIA_OK;
}
