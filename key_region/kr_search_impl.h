/* kr_search_impl.h — the CPU search engine's body for one key width, included by kr_search.c once
 * per width with KR_T (the key type) and KR_FN(name) (the name suffix) defined. Not a header. */

/* Number of slots in a sorted node of `slots` keys (a power of two) that are <= q: a branchless
 * binary search. Padding slots hold the maximum key, so they count only when q is the maximum. */
static inline uint32_t KR_FN(count_le)(const KR_T *node, uint32_t slots, KR_T q)
{
    uint32_t pos = 0;
    for (uint32_t step = slots / 2; step > 0; step >>= 1)
        pos += (node[pos + step - 1] <= q) ? step : 0;
    return pos + (node[pos] <= q);
}

/* Number of slots < q (padding never counts). */
static inline uint32_t KR_FN(count_lt)(const KR_T *node, uint32_t slots, KR_T q)
{
    uint32_t pos = 0;
    for (uint32_t step = slots / 2; step > 0; step >>= 1)
        pos += (node[pos + step - 1] < q) ? step : 0;
    return pos + (node[pos] < q);
}

/* One level of the descent: the child of internal node `node` that q goes to. */
static inline uint64_t KR_FN(child_of)(const kr_tree *t, const KR_T *keys, uint64_t node, KR_T q)
{
    const uint32_t *fc = t->first_child;
    uint32_t first = fc[node];
    uint32_t last_child = fc[node + 1] - first - 1;
    uint32_t j = KR_FN(count_le)(keys + node * t->fanout, t->fanout, q);
    return first + (j < last_child ? j : last_child);
}

/* Descends SEARCH_GROUP queries level by level, prefetching each next node, so that the memory
 * latencies of the group overlap. leaf_out[k] gets the leaf number (0-based) of query k. */
static void KR_FN(descend_group)(const kr_tree *t, const KR_T *queries, uint32_t n,
                                 uint64_t *leaf_out)
{
    const KR_T *keys = (const KR_T *)t->keys;
    uint64_t node[SEARCH_GROUP];
    for (uint32_t k = 0; k < n; k++)
        node[k] = 0;
    for (uint32_t level = 0; level + 1 < t->height; level++) {
        for (uint32_t k = 0; k < n; k++) {
            node[k] = KR_FN(child_of)(t, keys, node[k], queries[k]);
            const KR_T *next = keys + kr_node_key_offset(t, node[k]);
            __builtin_prefetch(next);
            __builtin_prefetch((const char *)next + 64);
        }
    }
    for (uint32_t k = 0; k < n; k++)
        leaf_out[k] = node[k] - t->n_internal;
}

static void KR_FN(lookup_batch)(const kr_tree *t, const KR_T *queries, uint64_t count,
                                KR_T *values_out, uint8_t *found_out, int threads)
{
    const KR_T *keys = (const KR_T *)t->keys;
    const KR_T *leaf_values = (const KR_T *)t->leaf_values;
    const KR_T max_key = (KR_T)kr_max_key(t->key_bits);
    const bool max_present = kr_max_key_present(t);
    const uint64_t leaf_base = t->n_internal * t->fanout;
    const uint32_t L = t->leaf_size;
    uint64_t groups = (count + SEARCH_GROUP - 1) / SEARCH_GROUP;
#pragma omp parallel for schedule(static) num_threads(threads) if (count > KR_PARALLEL_MIN)
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t first = g * SEARCH_GROUP;
        uint32_t n = (uint32_t)(count - first < SEARCH_GROUP ? count - first : SEARCH_GROUP);
        uint64_t leaf[SEARCH_GROUP];
        KR_FN(descend_group)(t, queries + first, n, leaf);
        for (uint32_t k = 0; k < n; k++) {
            KR_T q = queries[first + k];
            const KR_T *leaf_keys = keys + leaf_base + leaf[k] * L;
            uint32_t pos = KR_FN(count_lt)(leaf_keys, L, q);
            bool found = pos < L && leaf_keys[pos] == q && (q != max_key || max_present);
            found_out[first + k] = found;
            values_out[first + k] = found ? leaf_values[leaf[k] * L + pos] : 0;
        }
    }
}

/* Leaf and slot of the first key >= q (slot may equal the leaf's key count). */
static inline void KR_FN(locate)(const kr_tree *t, KR_T q, uint64_t *leaf_out, uint32_t *slot_out)
{
    const KR_T *keys = (const KR_T *)t->keys;
    uint64_t node = 0;
    for (uint32_t level = 0; level + 1 < t->height; level++)
        node = KR_FN(child_of)(t, keys, node, q);
    uint64_t leaf = node - t->n_internal;
    *leaf_out = leaf;
    *slot_out = KR_FN(count_lt)(keys + kr_leaf_key_offset(t, leaf), t->leaf_size, q);
}

static void KR_FN(lower_bound_batch)(const kr_tree *t, const KR_T *queries, uint64_t count,
                                     KR_T *keys_out, KR_T *values_out, uint8_t *found_out,
                                     int threads)
{
    const KR_T *keys = (const KR_T *)t->keys;
    const KR_T *leaf_values = (const KR_T *)t->leaf_values;
    const uint32_t L = t->leaf_size;
    uint64_t groups = (count + SEARCH_GROUP - 1) / SEARCH_GROUP;
#pragma omp parallel for schedule(static) num_threads(threads) if (count > KR_PARALLEL_MIN)
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t first = g * SEARCH_GROUP;
        uint32_t n = (uint32_t)(count - first < SEARCH_GROUP ? count - first : SEARCH_GROUP);
        uint64_t leaf[SEARCH_GROUP];
        KR_FN(descend_group)(t, queries + first, n, leaf);
        for (uint32_t k = 0; k < n; k++) {
            KR_T q = queries[first + k];
            uint64_t li = leaf[k];
            uint32_t pos = KR_FN(count_lt)(keys + kr_leaf_key_offset(t, li), L, q);
            uint64_t in_leaf = t->leaf_rank[li + 1] - t->leaf_rank[li];
            /* pos > in_leaf only in a damaged leaf (padding below the maximum key) of a tree
             * loaded without verification: treated as the leaf's end, never read past it */
            if (pos >= in_leaf) { /* the answer, if any, is the next leaf's first key */
                li++;
                pos = 0;
            }
            bool found = li < t->n_leaves && t->leaf_rank[li + 1] > t->leaf_rank[li];
            found_out[first + k] = found;
            if (keys_out)
                keys_out[first + k] = found ? keys[kr_leaf_key_offset(t, li) + pos] : 0;
            if (values_out)
                values_out[first + k] = found ? leaf_values[li * L + pos] : 0;
        }
    }
}

static void KR_FN(range_count_batch)(const kr_tree *t, const KR_T *lo, const KR_T *hi,
                                     uint64_t count, uint64_t *counts_out, int threads)
{
    const KR_T *keys = (const KR_T *)t->keys;
    const KR_T max_key = (KR_T)kr_max_key(t->key_bits);
    const uint32_t L = t->leaf_size;
    uint64_t groups = (count + SEARCH_GROUP - 1) / SEARCH_GROUP;
#pragma omp parallel for schedule(static) num_threads(threads) if (count > KR_PARALLEL_MIN / 4)
    for (uint64_t g = 0; g < groups; g++) {
        /* both ends of SEARCH_GROUP ranges descend together: rank(lo) and rank(hi + 1) */
        uint64_t first = g * SEARCH_GROUP;
        uint32_t n = (uint32_t)(count - first < SEARCH_GROUP ? count - first : SEARCH_GROUP);
        KR_T after_hi[SEARCH_GROUP];
        uint64_t lo_leaf[SEARCH_GROUP], hi_leaf[SEARCH_GROUP];
        for (uint32_t k = 0; k < n; k++)
            after_hi[k] = hi[first + k] == max_key ? max_key : hi[first + k] + 1;
        KR_FN(descend_group)(t, lo + first, n, lo_leaf);
        KR_FN(descend_group)(t, after_hi, n, hi_leaf);
        for (uint32_t k = 0; k < n; k++) {
            KR_T a = lo[first + k], b = hi[first + k];
            if (a > b) {
                counts_out[first + k] = 0;
                continue;
            }
            uint64_t below_lo = t->leaf_rank[lo_leaf[k]] +
                                KR_FN(count_lt)(keys + kr_leaf_key_offset(t, lo_leaf[k]), L, a);
            uint64_t up_to_hi = b == max_key ? t->n_keys
                                             : t->leaf_rank[hi_leaf[k]] +
                                                   KR_FN(count_lt)(keys + kr_leaf_key_offset(t, hi_leaf[k]), L, after_hi[k]);
            /* keys out of order (a tree loaded without verification) could put rank(lo) above
             * rank(hi + 1): a count, never a wrapped-around one */
            uint64_t c = up_to_hi > below_lo ? up_to_hi - below_lo : 0;
            counts_out[first + k] = c < t->n_keys ? c : t->n_keys;
        }
    }
}

static void KR_FN(range_collect_batch)(const kr_tree *t, const KR_T *lo, const KR_T *hi,
                                       uint64_t count, const uint64_t *offsets, KR_T *keys_out,
                                       KR_T *values_out, int threads)
{
    const KR_T *keys = (const KR_T *)t->keys;
    const KR_T *leaf_values = (const KR_T *)t->leaf_values;
    const uint32_t L = t->leaf_size;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (count > KR_PARALLEL_MIN / 16)
    for (uint64_t i = 0; i < count; i++) {
        uint64_t remaining = offsets[i + 1] - offsets[i];
        if (remaining == 0)
            continue;
        uint64_t leaf;
        uint32_t slot;
        KR_FN(locate)(t, lo[i], &leaf, &slot);
        uint64_t out = offsets[i];
        while (remaining > 0 && leaf < t->n_leaves) {
            uint64_t in_leaf = t->leaf_rank[leaf + 1] - t->leaf_rank[leaf];
            if (slot > in_leaf) /* a damaged leaf of an unverified tree: see lower_bound_batch */
                slot = (uint32_t)in_leaf;
            uint64_t take = in_leaf - slot < remaining ? in_leaf - slot : remaining;
            const KR_T *src_keys = keys + kr_leaf_key_offset(t, leaf) + slot;
            const KR_T *src_values = leaf_values + leaf * L + slot;
            if (keys_out)
                memcpy(keys_out + out, src_keys, take * sizeof(KR_T));
            if (values_out)
                memcpy(values_out + out, src_values, take * sizeof(KR_T));
            out += take;
            remaining -= take;
            leaf++;
            slot = 0;
        }
    }
}
