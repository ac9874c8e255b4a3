/* kr_check.c — the integrity checker: walks the shape, the first-child array, the leaf ranks, every
 * leaf and every internal node, and reports the first broken invariant of key_region.h in words.
 * It serves the tests, `harmonia check` and the loader; it never trusts a count before checking it. */
#include <inttypes.h>

#include "key_region/key_region.h"
#include "prefix_sum/prefix_sum.h"

static harmonia_status check_shape(const kr_tree *t, kr_error *err)
{
    if (t->key_bits != 32 && t->key_bits != 64) {
        kr_set_error(err, "key width is %" PRIu32 " bits, not 32 or 64", t->key_bits);
        return HARMONIA_ERR_CORRUPT;
    }
    if (!kr_valid_node_size(t->fanout) || !kr_valid_node_size(t->leaf_size)) {
        kr_set_error(err, "fanout %" PRIu32 " / leaf size %" PRIu32 " is not a power of two in [%d, %d]",
                     t->fanout, t->leaf_size, KR_MIN_NODE, KR_MAX_NODE);
        return HARMONIA_ERR_CORRUPT;
    }
    if (t->height < 1 || t->height > KR_MAX_LEVELS) {
        kr_set_error(err, "height %" PRIu32 " is not in [1, %d]", t->height, KR_MAX_LEVELS);
        return HARMONIA_ERR_CORRUPT;
    }
    if (t->n_leaves < 1 || t->n_nodes != t->n_internal + t->n_leaves || t->n_nodes >= UINT32_MAX) {
        kr_set_error(err, "node counts disagree: %" PRIu64 " internal + %" PRIu64 " leaves != %" PRIu64
                     " nodes (or no leaf, or too many nodes)", t->n_internal, t->n_leaves, t->n_nodes);
        return HARMONIA_ERR_CORRUPT;
    }
    if (t->level_start[0] != 0 || t->level_start[t->height] != t->n_nodes ||
        t->level_start[t->height - 1] != t->n_internal) {
        kr_set_error(err, "level starts disagree with the node counts (level 0 at %" PRIu64
                     ", leaves at %" PRIu64 " for %" PRIu64 " internal nodes, end %" PRIu64 " for %" PRIu64 " nodes)",
                     t->level_start[0], t->level_start[t->height - 1], t->n_internal,
                     t->level_start[t->height], t->n_nodes);
        return HARMONIA_ERR_CORRUPT;
    }
    for (uint32_t l = 0; l < t->height; l++)
        if (t->level_start[l + 1] <= t->level_start[l]) {
            kr_set_error(err, "level %" PRIu32 " is empty (level starts %" PRIu64 ", %" PRIu64 ")", l,
                         t->level_start[l], t->level_start[l + 1]);
            return HARMONIA_ERR_CORRUPT;
        }
    if (t->level_start[1] != 1) {
        kr_set_error(err, "the root level has %" PRIu64 " nodes, not 1", t->level_start[1]);
        return HARMONIA_ERR_CORRUPT;
    }
    return HARMONIA_OK;
}

static harmonia_status check_leaf_ranks(const kr_tree *t, kr_error *err)
{
    const uint64_t *r = t->leaf_rank;
    if (r[0] != 0 || r[t->n_leaves] != t->n_keys) {
        kr_set_error(err, "leaf ranks run from %" PRIu64 " to %" PRIu64 ", not from 0 to the key count %" PRIu64,
                     r[0], r[t->n_leaves], t->n_keys);
        return HARMONIA_ERR_CORRUPT;
    }
    if (t->n_keys == 0)
        return t->n_leaves == 1 ? HARMONIA_OK
                                : (kr_set_error(err, "an empty tree has %" PRIu64 " leaves, not 1", t->n_leaves),
                                   HARMONIA_ERR_CORRUPT);
    for (uint64_t li = 0; li < t->n_leaves; li++) {
        if (r[li + 1] <= r[li] || r[li + 1] - r[li] > t->leaf_size) {
            kr_set_error(err, "leaf %" PRIu64 " holds %" PRId64 " keys (ranks %" PRIu64 " -> %" PRIu64
                         "), not in [1, %" PRIu32 "]", li, (int64_t)(r[li + 1] - r[li]), r[li], r[li + 1],
                         t->leaf_size);
            return HARMONIA_ERR_CORRUPT;
        }
    }
    return HARMONIA_OK;
}

/* Keys strictly increasing in the leaf and after the previous leaf, padding maximum keys and zero
 * values. err may be NULL (only the verdict is wanted). */
static bool leaf_ok(const kr_tree *t, uint64_t li, kr_error *err)
{
    const uint64_t max_key = kr_max_key(t->key_bits);
    const uint64_t n = t->leaf_rank[li + 1] - t->leaf_rank[li];
    const uint64_t base = kr_leaf_key_offset(t, li), vbase = li * t->leaf_size;
    for (uint64_t s = 0; s < t->leaf_size; s++) {
        uint64_t k = kr_load(t->keys, t->key_bits, base + s);
        if (s < n) {
            if (s > 0 && k <= kr_load(t->keys, t->key_bits, base + s - 1)) {
                kr_set_error(err, "leaf %" PRIu64 ": key %" PRIu64 " in slot %" PRIu64
                             " does not exceed the key before it", li, k, s);
                return false;
            }
        } else if (k != max_key || kr_load(t->leaf_values, t->key_bits, vbase + s) != 0) {
            kr_set_error(err, "leaf %" PRIu64 ": padding slot %" PRIu64 " holds key %" PRIu64
                         " / value %" PRIu64 ", not the maximum key / 0", li, s, k,
                         kr_load(t->leaf_values, t->key_bits, vbase + s));
            return false;
        }
    }
    if (li > 0 && n > 0) {
        uint64_t prev_n = t->leaf_rank[li] - t->leaf_rank[li - 1];
        uint64_t prev_last = kr_load(t->keys, t->key_bits, kr_leaf_key_offset(t, li - 1) + prev_n - 1);
        uint64_t first = kr_load(t->keys, t->key_bits, base);
        if (first <= prev_last) {
            kr_set_error(err, "leaf %" PRIu64 " starts with key %" PRIu64
                         ", not above the last key %" PRIu64 " of the leaf before it", li, first, prev_last);
            return false;
        }
    }
    return true;
}

static uint64_t subtree_min(const kr_tree *t, uint64_t node)
{
    while (node < t->n_internal)
        node = t->first_child[node];
    return kr_load(t->keys, t->key_bits, kr_node_key_offset(t, node));
}

static uint64_t subtree_max(const kr_tree *t, uint64_t node)
{
    while (node < t->n_internal)
        node = t->first_child[node + 1] - 1;
    uint64_t li = node - t->n_internal;
    uint64_t n = t->leaf_rank[li + 1] - t->leaf_rank[li];
    return kr_load(t->keys, t->key_bits, kr_node_key_offset(t, node) + n - 1);
}

/* Separators increasing, padding maximum keys, and each separator between its two children. */
static bool internal_ok(const kr_tree *t, uint64_t node, kr_error *err)
{
    const uint64_t max_key = kr_max_key(t->key_bits);
    const uint64_t first = t->first_child[node];
    const uint64_t c = t->first_child[node + 1] - first;
    const uint64_t base = node * t->fanout;
    for (uint64_t s = 0; s < t->fanout; s++) {
        uint64_t k = kr_load(t->keys, t->key_bits, base + s);
        if (s + 1 < c) {
            if (s > 0 && k <= kr_load(t->keys, t->key_bits, base + s - 1)) {
                kr_set_error(err, "internal node %" PRIu64 ": separator %" PRIu64 " in slot %" PRIu64
                             " does not exceed the one before it", node, k, s);
                return false;
            }
            uint64_t left_max = subtree_max(t, first + s), right_min = subtree_min(t, first + s + 1);
            if (!(left_max < k && k <= right_min)) {
                kr_set_error(err, "internal node %" PRIu64 ": separator %" PRIu64 " in slot %" PRIu64
                             " does not lie between child %" PRIu64 " (largest key %" PRIu64
                             ") and child %" PRIu64 " (smallest key %" PRIu64 ")",
                             node, k, s, first + s, left_max, first + s + 1, right_min);
                return false;
            }
        } else if (k != max_key) {
            kr_set_error(err, "internal node %" PRIu64 ": padding slot %" PRIu64 " holds %" PRIu64
                         ", not the maximum key", node, s, k);
            return false;
        }
    }
    return true;
}

harmonia_status kr_check_structure(const kr_tree *t, kr_error *err)
{
    harmonia_status st = check_shape(t, err);
    if (st == HARMONIA_OK)
        st = ps_check(t->first_child, t->level_start, t->height, t->fanout, err ? err->message : NULL,
                      err ? sizeof err->message : 0)
                 ? HARMONIA_OK
                 : HARMONIA_ERR_CORRUPT;
    if (st == HARMONIA_OK)
        st = check_leaf_ranks(t, err);
    return st;
}

harmonia_status kr_check_tree(const kr_tree *t, kr_error *err)
{
    harmonia_status st = kr_check_structure(t, err);
    if (st != HARMONIA_OK)
        return st;
    /* every count is now trusted; find the first bad leaf and node in parallel, then say why */
    uint64_t bad_leaf = t->n_leaves;
#pragma omp parallel for reduction(min : bad_leaf) schedule(dynamic, 4096) if (t->n_leaves > KR_PARALLEL_MIN / 16)
    for (uint64_t li = 0; li < t->n_leaves; li++)
        if (li < bad_leaf && !leaf_ok(t, li, NULL))
            bad_leaf = li;
    if (bad_leaf < t->n_leaves) {
        leaf_ok(t, bad_leaf, err);
        return HARMONIA_ERR_CORRUPT;
    }
    uint64_t bad_node = t->n_internal;
#pragma omp parallel for reduction(min : bad_node) schedule(dynamic, 1024) if (t->n_internal > KR_PARALLEL_MIN / 16)
    for (uint64_t node = 0; node < t->n_internal; node++)
        if (node < bad_node && !internal_ok(t, node, NULL))
            bad_node = node;
    if (bad_node < t->n_internal) {
        internal_ok(t, bad_node, err);
        return HARMONIA_ERR_CORRUPT;
    }
    return HARMONIA_OK;
}
