/* upd_impl.h — the updater's work for one key width: the operation records and their sort, the
 * finger descent that walks a unit's sorted operations along the leaf level, the plan of a unit
 * (counts, statistics, the first failure; nothing written) and its two writers (in place, or into
 * the new layout). Included by upd_apply.c with UPD_T (the key type) and UPD_FN(name) (the name
 * suffix) defined, after upd_unit, upd_touch and upd_leaf_move. Not a header. */

/* One operation as the sort moves it: meta = index << 2 | kind. */
typedef struct UPD_FN(rec) {
    UPD_T key, value;
    uint64_t meta;
} UPD_FN(rec);

typedef struct UPD_FN(src) {
    const uint8_t *kinds;
    const UPD_T *keys, *values; /* values NULL: every operation is a delete */
} UPD_FN(src);

#define KS_REC UPD_FN(rec)
#define KS_KEY_T UPD_T
#define KS_SRC UPD_FN(src)
#define KS_SRC_KEY(s, i) ((s)->keys[i])
#define KS_SRC_REC(s, i) ((UPD_FN(rec)){(s)->keys[i], (s)->values ? (s)->values[i] : 0, (uint64_t)(i) << 2 | (s)->kinds[i]})
#define KS_FN(name) UPD_FN(ks_##name)
#define KS_LOCAL ((1u << 19) / sizeof(UPD_FN(rec)))
#include "key_region/kr_sort_impl.h"
#undef KS_REC
#undef KS_KEY_T
#undef KS_SRC
#undef KS_SRC_KEY
#undef KS_SRC_REC
#undef KS_FN
#undef KS_LOCAL
#undef KS_SMALL
#undef KS_MAX_DIGIT
#undef KS_LOCAL_DIGIT
#undef KS_THREAD_BUCKET

/* The sort's visitor: each sorted bucket into its place of the records array (where the sort left it,
 * but for the pieces a nested level sorted in its other buffer). */
static void UPD_FN(place_sorted)(void *arg, uint64_t begin, const void *sorted, uint64_t count, int thread)
{
    UPD_FN(rec) *records = (UPD_FN(rec) *)arg + begin;
    if ((const void *)records != sorted)
        memcpy(records, sorted, count * sizeof(UPD_FN(rec)));
}

/* records[0..count): the batch sorted by key, stable (operations on one key in batch order). A
 * batch already in key order is only copied. */
static harmonia_status UPD_FN(sort_batch)(const uint8_t *kinds, const UPD_T *keys, const UPD_T *values,
                                          uint64_t count, UPD_FN(rec) *records, int threads)
{
    const bool parallel = count > KR_PARALLEL_MIN;
    uint64_t first_descent = count;
#pragma omp parallel for reduction(min : first_descent) schedule(static) num_threads(threads) if (parallel)
    for (uint64_t i = 1; i < count; i++)
        if (keys[i] < keys[i - 1] && i < first_descent)
            first_descent = i;
    UPD_FN(src) src = {kinds, keys, values};
    if (first_descent == count) {
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
        for (uint64_t i = 0; i < count; i++)
            records[i] = (UPD_FN(rec)){keys[i], values ? values[i] : 0, (uint64_t)i << 2 | kinds[i]};
        return HARMONIA_OK;
    }
    const int team = parallel ? threads : 1;
    const uint64_t local = (1u << 19) / sizeof(UPD_FN(rec));
    UPD_FN(rec) *scratch = kr_malloc((size_t)team * (count < local ? count : local) * sizeof(UPD_FN(rec)));
    if (!scratch)
        return HARMONIA_ERR_NO_MEMORY;
    UPD_FN(ks_ctx) c = {scratch, team, UPD_FN(place_sorted), records, true};
    harmonia_status st =
        UPD_FN(ks_partition)(&c, &src, NULL, count, (unsigned)(8 * sizeof(UPD_T)), records, NULL, 0);
    free(scratch);
    return st;
}

/* Slots of a node of `slots` keys (a power of two, padded with the maximum key) that are <= q. */
static inline uint32_t UPD_FN(count_le)(const UPD_T *node, uint32_t slots, UPD_T q)
{
    uint32_t pos = 0;
    for (uint32_t step = slots / 2; step > 0; step >>= 1)
        pos += (node[pos + step - 1] <= q) ? step : 0;
    return pos + (node[pos] <= q);
}

/* Slots of a leaf of L slots (a power of two) holding keys below q: its keys are sorted and its
 * padding is the maximum key, which is never below q. */
static inline __attribute__((always_inline)) uint32_t UPD_FN(count_lt_n)(const UPD_T *leaf, const uint32_t L, UPD_T q)
{
    uint32_t pos = 0;
    for (uint32_t step = L / 2; step > 0; step >>= 1)
        pos += (leaf[pos + step - 1] < q) ? step : 0;
    return pos + (leaf[pos] < q);
}

/* The same with the leaf size a constant of each case (the steps unrolled). */
static inline uint32_t UPD_FN(count_lt)(const UPD_T *leaf, uint32_t L, UPD_T q)
{
    switch (L) {
    case 8: return UPD_FN(count_lt_n)(leaf, 8, q);
    case 16: return UPD_FN(count_lt_n)(leaf, 16, q);
    case 32: return UPD_FN(count_lt_n)(leaf, 32, q);
    case 64: return UPD_FN(count_lt_n)(leaf, 64, q);
    default: return UPD_FN(count_lt_n)(leaf, L, q);
    }
}

/* The path of the last descent: at each level the node and the key its subtree stays below (none
 * for the rightmost path). The next key, never smaller, climbs only as far as it must. */
typedef struct UPD_FN(finger) {
    uint64_t node[KR_MAX_LEVELS];
    UPD_T upper[KR_MAX_LEVELS];
    bool bounded[KR_MAX_LEVELS];
} UPD_FN(finger);

static inline void UPD_FN(descend_from)(const kr_tree *t, UPD_FN(finger) *f, uint32_t level, UPD_T key)
{
    const UPD_T *keys = (const UPD_T *)t->keys;
    const uint32_t *fc = t->first_child;
    for (uint32_t l = level; l + 1 < t->height; l++) {
        const uint64_t n = f->node[l];
        const uint32_t first = fc[n], last = fc[n + 1] - first - 1;
        uint32_t j = UPD_FN(count_le)(keys + n * t->fanout, t->fanout, key);
        j = j < last ? j : last;
        f->node[l + 1] = first + j;
        if (j < last) {
            f->upper[l + 1] = keys[n * t->fanout + j];
            f->bounded[l + 1] = true;
        } else {
            f->upper[l + 1] = f->upper[l];
            f->bounded[l + 1] = f->bounded[l];
        }
    }
}

static inline void UPD_FN(finger_start)(const kr_tree *t, UPD_FN(finger) *f, UPD_T key)
{
    f->node[0] = 0;
    f->bounded[0] = false;
    f->upper[0] = 0;
    UPD_FN(descend_from)(t, f, 0, key);
}

/* The leaf (0-based) a key >= the previous one belongs to. */
static inline uint64_t UPD_FN(finger_seek)(const kr_tree *t, UPD_FN(finger) *f, UPD_T key)
{
    uint32_t l = t->height - 1;
    while (l > 0 && f->bounded[l] && key >= f->upper[l])
        l--;
    if (l + 1 < t->height)
        UPD_FN(descend_from)(t, f, l, key);
    return f->node[t->height - 1] - t->n_internal;
}

static uint64_t UPD_FN(leaf_of)(const kr_tree *t, UPD_T key)
{
    UPD_FN(finger) f;
    UPD_FN(finger_start)(t, &f, key);
    return f.node[t->height - 1] - t->n_internal;
}

/* The smallest key leaf li may hold (its separator on the left); false for the first leaf. */
static bool UPD_FN(lower_fence)(const kr_tree *t, uint64_t li, UPD_T *fence)
{
    const UPD_T *keys = (const UPD_T *)t->keys;
    uint64_t node = t->n_internal + li;
    for (uint32_t l = t->height - 1; l > 0; l--) {
        /* the parent: the last node of level l - 1 whose first child is <= node */
        uint64_t lo = t->level_start[l - 1], hi = t->level_start[l];
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (t->first_child[mid] <= node)
                lo = mid;
            else
                hi = mid;
        }
        uint64_t j = node - t->first_child[lo];
        if (j > 0) {
            *fence = keys[lo * t->fanout + j - 1];
            return true;
        }
        node = lo;
    }
    return false;
}

/* First record with key >= q. */
static uint64_t UPD_FN(first_record_from)(const UPD_FN(rec) *r, uint64_t count, UPD_T q)
{
    uint64_t lo = 0, n = count;
    while (n > 0) {
        uint64_t half = n / 2;
        if (r[lo + half].key < q) {
            lo += half + 1;
            n -= half + 1;
        } else {
            n = half;
        }
    }
    return lo;
}

/* The plan of one unit: walks its runs (the operations on one key) along the leaf level, lists
 * the touched leaves in touch[] with their key counts after the batch, and sums what the unit's
 * leaves become. Writes nothing to the tree. */
static void UPD_FN(plan_unit)(const kr_tree *t, const upd_params *p, const UPD_FN(rec) *r, upd_unit *u,
                              upd_touch *touch, uint64_t per_split_node)
{
    const UPD_T *keys = (const UPD_T *)t->keys;
    const uint64_t leaf_base = t->n_internal * t->fanout, L = t->leaf_size;
    upd_touch *mine = touch + u->rec_begin;
    uint64_t touched = 0, nodes_of_touched = 0;
    int64_t delta = 0;
    UPD_FN(finger) f;
    if (u->rec_begin < u->rec_end)
        UPD_FN(finger_start)(t, &f, r[u->rec_begin].key);
    uint64_t leaf = UINT64_MAX, n_old = 0;
    const UPD_T *old_keys = NULL;
    int64_t leaf_delta = 0;
    uint64_t prev_leaf = u->leaf_begin; /* for counting the runs of untouched leaves */
    u->moves = 0;
#define CLOSE_LEAF()                                                                               \
    do {                                                                                           \
        uint64_t count = (uint64_t)((int64_t)n_old + leaf_delta);                                  \
        mine[touched - 1].count = count;                                                           \
        uint64_t nodes = count == 0 ? 0 : count <= L ? 1 : (count + per_split_node - 1) / per_split_node; \
        if (nodes == 0 && t->n_leaves == 1)                                                        \
            nodes = 1; /* the only leaf stays, empty: the empty tree keeps its shape */            \
        if (nodes != 1)                                                                            \
            u->shape_changed = true;                                                               \
        if (leaf_delta != 0)                                                                       \
            u->count_changed = true;                                                               \
        if (nodes == 0)                                                                            \
            u->leaves_removed++;                                                                   \
        if (nodes > 1) {                                                                           \
            u->leaves_split++;                                                                     \
            u->auxiliary_nodes += nodes - 1;                                                       \
        }                                                                                          \
        nodes_of_touched += nodes;                                                                 \
        delta += leaf_delta;                                                                       \
    } while (0)
    for (uint64_t s = u->rec_begin; s < u->rec_end;) {
        const UPD_T key = r[s].key;
        uint64_t e = s + 1;
        while (e < u->rec_end && r[e].key == key)
            e++;
        u->runs++;
        uint64_t li = UPD_FN(finger_seek)(t, &f, key);
        if (li != leaf) {
            if (touched)
                CLOSE_LEAF();
            if (li > prev_leaf)
                u->moves++; /* untouched leaves before this one */
            prev_leaf = li + 1;
            leaf = li;
            n_old = upd_leaf_count(t, li);
            mine[touched].leaf = li;
            mine[touched].rec_begin = s;
            mine[touched].old_count = n_old;
            touched++;
            old_keys = keys + leaf_base + li * L;
            /* the next leaves' keys: a dense batch touches most of them next */
            __builtin_prefetch(old_keys + 2 * L);
            __builtin_prefetch(old_keys + 3 * L);
            leaf_delta = 0;
        }
        uint64_t pos = UPD_FN(count_lt)(old_keys, (uint32_t)L, key);
        const bool was_present = pos < n_old && old_keys[pos] == key;
        bool present = was_present;
        for (uint64_t k = s; k < e; k++) {
            const uint64_t op = r[k].meta >> 2;
            switch ((harmonia_op_kind)(r[k].meta & 3)) {
            case HARMONIA_OP_INSERT:
                if (present && p->insert_existing == HARMONIA_INSERT_EXISTING_ERROR) {
                    upd_unit_failure(u, op, HARMONIA_ERR_KEY_EXISTS);
                    k = e; /* later operations on this key come after the failure */
                    continue;
                }
                if (present)
                    u->updated++;
                else
                    u->inserted++;
                present = true;
                break;
            case HARMONIA_OP_UPDATE:
                if (!present) {
                    if (p->update_missing == HARMONIA_UPDATE_MISSING_ERROR) {
                        upd_unit_failure(u, op, HARMONIA_ERR_KEY_MISSING);
                        k = e;
                        continue;
                    }
                    u->missing++;
                    break;
                }
                u->updated++;
                break;
            case HARMONIA_OP_UPSERT:
                if (present)
                    u->updated++;
                else
                    u->inserted++;
                present = true;
                break;
            default: /* delete */
                if (present)
                    u->deleted++;
                else
                    u->missing++;
                present = false;
                break;
            }
        }
        leaf_delta += (int64_t)present - (int64_t)was_present;
        s = e;
    }
    if (touched)
        CLOSE_LEAF();
#undef CLOSE_LEAF
    if (u->leaf_end > prev_leaf)
        u->moves++;
    u->touched = touched;
    u->key_delta = delta;
    u->nodes = (u->leaf_end - u->leaf_begin - touched) + nodes_of_touched;
}

/* Copies n pairs. Plain loops: a tiny block costs less than a call (no restrict, so that the
 * compiler does not turn them into memcpy calls). */
static inline void UPD_FN(copy_pairs)(UPD_T *keys, UPD_T *values, const UPD_T *from_keys, const UPD_T *from_values,
                                      uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        keys[k] = from_keys[k];
        values[k] = from_values[k];
    }
}

/* The merge of old leaf li with the runs of records [s, e) (the plan found no failure), emitting
 * blocks of old pairs and single merged pairs through EMIT_BLOCK(keys, values, n) and
 * EMIT_ONE(key, value). */
#define UPD_MERGE_BODY(EMIT_BLOCK, EMIT_ONE)                                                        \
    const uint64_t L = t->leaf_size, n_old = upd_leaf_count(t, li);                                 \
    const UPD_T *old_keys = (const UPD_T *)t->keys + t->n_internal * t->fanout + li * L;            \
    const UPD_T *old_values = (const UPD_T *)t->leaf_values + li * L;                               \
    uint64_t i = 0;                                                                                 \
    while (s < e) {                                                                                 \
        const UPD_T key = r[s].key;                                                                 \
        uint64_t pos = UPD_FN(count_lt)(old_keys, (uint32_t)L, key);                                \
        EMIT_BLOCK(old_keys + i, old_values + i, pos - i);                                          \
        bool present = pos < n_old && old_keys[pos] == key;                                         \
        UPD_T value = present ? old_values[pos] : 0;                                                \
        pos += present;                                                                             \
        for (; s < e && r[s].key == key; s++) {                                                     \
            switch ((harmonia_op_kind)(r[s].meta & 3)) {                                            \
            case HARMONIA_OP_UPDATE: /* of a missing key: skipped (or the batch failed) */          \
                if (present)                                                                        \
                    value = r[s].value;                                                             \
                break;                                                                              \
            case HARMONIA_OP_DELETE:                                                                \
                present = false;                                                                    \
                break;                                                                              \
            default: /* insert (of a missing key, or an upsert by policy), upsert */                \
                present = true;                                                                     \
                value = r[s].value;                                                                 \
                break;                                                                              \
            }                                                                                       \
        }                                                                                           \
        if (present)                                                                                \
            EMIT_ONE(key, value);                                                                   \
        i = pos;                                                                                    \
    }                                                                                               \
    EMIT_BLOCK(old_keys + i, old_values + i, n_old - i);

/* Into one leaf's slots (keys, values); returns the pairs written. */
static uint64_t UPD_FN(merge_into)(const kr_tree *t, uint64_t li, const UPD_FN(rec) *r, uint64_t s, uint64_t e,
                                   UPD_T *keys, UPD_T *values)
{
    uint64_t out = 0;
#define EMIT_BLOCK(k, v, n)                                                                         \
    do {                                                                                            \
        UPD_FN(copy_pairs)(keys + out, values + out, k, v, n);                                      \
        out += n;                                                                                   \
    } while (0)
#define EMIT_ONE(k, v)                                                                              \
    do {                                                                                            \
        keys[out] = k;                                                                              \
        values[out++] = v;                                                                          \
    } while (0)
    UPD_MERGE_BODY(EMIT_BLOCK, EMIT_ONE)
#undef EMIT_BLOCK
#undef EMIT_ONE
    return out;
}

/* Where the merged pairs of a leaf that overflows go: `nodes` consecutive leaves from keys / values
 * (L slots apart), `count` pairs spread evenly (node k gets [count/nodes*k + min(k, count%nodes),
 * ...)). */
typedef struct UPD_FN(sink) {
    UPD_T *keys, *values;
    uint64_t L, nodes, count;
    uint64_t out;      /* pairs written */
    uint64_t node;     /* the node being filled */
    uint64_t node_end; /* its last pair + 1 */
    uint64_t slot;     /* next slot in it */
} UPD_FN(sink);

static inline void UPD_FN(sink_block)(UPD_FN(sink) *s, const UPD_T *keys, const UPD_T *values, uint64_t n)
{
    while (n > 0) {
        if (s->out == s->node_end) {
            s->node++;
            s->node_end = upd_spread_start(s->count, s->nodes, s->node + 1);
            s->slot = 0;
        }
        uint64_t take = s->node_end - s->out < n ? s->node_end - s->out : n;
        UPD_FN(copy_pairs)(s->keys + s->node * s->L + s->slot, s->values + s->node * s->L + s->slot, keys, values,
                           take);
        s->slot += take;
        s->out += take;
        keys += take;
        values += take;
        n -= take;
    }
}

static inline void UPD_FN(sink_one)(UPD_FN(sink) *s, UPD_T key, UPD_T value)
{
    UPD_FN(sink_block)(s, &key, &value, 1);
}

/* Into `nodes` consecutive leaves, spread evenly. */
static void UPD_FN(merge_spread)(const kr_tree *t, uint64_t li, const UPD_FN(rec) *r, uint64_t s, uint64_t e,
                                 UPD_T *keys, UPD_T *values, uint64_t nodes, uint64_t count)
{
    UPD_FN(sink) sink = {keys, values, t->leaf_size, nodes, count, 0, 0, upd_spread_start(count, nodes, 1), 0};
#define EMIT_BLOCK(k, v, n) UPD_FN(sink_block)(&sink, k, v, n)
#define EMIT_ONE(k, v) UPD_FN(sink_one)(&sink, k, v)
    UPD_MERGE_BODY(EMIT_BLOCK, EMIT_ONE)
#undef EMIT_BLOCK
#undef EMIT_ONE
}

/* In place: each touched leaf merged through a scratch leaf and written back, padded. */
static void UPD_FN(write_unit_in_place)(kr_tree *t, const UPD_FN(rec) *r, const upd_unit *u, const upd_touch *touch,
                                        uint64_t *dirty)
{
    const uint64_t L = t->leaf_size;
    const UPD_T max_key = (UPD_T)kr_max_key(t->key_bits);
    UPD_T scratch_keys[KR_MAX_NODE], scratch_values[KR_MAX_NODE];
    const upd_touch *mine = touch + u->rec_begin;
    for (uint64_t k = 0; k < u->touched; k++) {
        const uint64_t li = mine[k].leaf, end = k + 1 < u->touched ? mine[k + 1].rec_begin : u->rec_end;
        UPD_FN(merge_into)(t, li, r, mine[k].rec_begin, end, scratch_keys, scratch_values);
        UPD_T *keys = (UPD_T *)t->keys + t->n_internal * t->fanout + li * L;
        UPD_T *values = (UPD_T *)t->leaf_values + li * L;
        const uint64_t n = mine[k].count, n_old = mine[k].old_count;
        UPD_FN(copy_pairs)(keys, values, scratch_keys, scratch_values, n);
        for (uint64_t s = n; s < n_old; s++) { /* slots that were keys become padding */
            keys[s] = max_key;
            values[s] = 0;
        }
        dirty[u->touched_start + k] = li;
    }
}

/* The new layout: the unit's old leaves become nodes [u->node_start, ...) of nt: runs of untouched
 * leaves copied as blocks, touched leaves merged straight into their node(s); each new leaf's rank
 * and first key (for the internal levels) noted as it is written. */
static void UPD_FN(write_unit_relayout)(const kr_tree *t, kr_tree *nt, uint64_t *node_min, const UPD_FN(rec) *r,
                                        const upd_unit *u, const upd_touch *touch, uint64_t per_split_node,
                                        upd_leaf_move *moves)
{
    const uint64_t L = t->leaf_size;
    const UPD_T max_key = (UPD_T)kr_max_key(t->key_bits);
    const UPD_T *old_keys = (const UPD_T *)t->keys + t->n_internal * t->fanout;
    const UPD_T *old_values = (const UPD_T *)t->leaf_values;
    UPD_T *new_keys = (UPD_T *)nt->keys + nt->n_internal * nt->fanout;
    UPD_T *new_values = (UPD_T *)nt->leaf_values;
    const uint64_t *old_rank = t->leaf_rank;
    uint64_t *new_rank = nt->leaf_rank;
    const upd_touch *mine = touch + u->rec_begin;
    uint64_t dest = u->node_start, rank = u->key_start, li = u->leaf_begin, move = u->move_start;
    kr_leaf_cursor cursor;
    kr_leaf_cursor_init(nt, &cursor, dest);
    UPD_T scratch_keys[KR_MAX_NODE] __attribute__((aligned(64))), scratch_values[KR_MAX_NODE] __attribute__((aligned(64)));
    for (uint64_t k = 0; k <= u->touched; k++) {
        /* the untouched leaves before touched leaf k (or before the unit's end) */
        const uint64_t gap_end = k < u->touched ? mine[k].leaf : u->leaf_end;
        if (gap_end > li) {
            const uint64_t m = gap_end - li;
            UPD_STREAM_COPY(new_keys + dest * L, old_keys + li * L, m * L * sizeof(UPD_T));
            UPD_STREAM_COPY(new_values + dest * L, old_values + li * L, m * L * sizeof(UPD_T));
            const int64_t shift = (int64_t)rank - (int64_t)old_rank[li];
            for (uint64_t x = 0; x < m; x++) {
                new_rank[dest + x] = (uint64_t)((int64_t)old_rank[li + x] + shift);
                kr_leaf_cursor_note(nt, &cursor, node_min, old_keys[(li + x) * L]);
            }
            rank = (uint64_t)((int64_t)old_rank[gap_end] + shift);
            if (moves)
                moves[move++] = (upd_leaf_move){li, dest, m};
            dest += m;
        }
        if (k == u->touched)
            break;
        if (k + 4 < u->touched) { /* a touched leaf further on: its keys and values */
            __builtin_prefetch(old_keys + mine[k + 4].leaf * L);
            __builtin_prefetch(old_values + mine[k + 4].leaf * L);
            __builtin_prefetch(old_keys + mine[k + 4].leaf * L + L - 1);
            __builtin_prefetch(old_values + mine[k + 4].leaf * L + L - 1);
        }
        const uint64_t count = mine[k].count, end = k + 1 < u->touched ? mine[k + 1].rec_begin : u->rec_end;
        uint64_t nodes = count == 0 ? 0 : count <= L ? 1 : (count + per_split_node - 1) / per_split_node;
        if (nodes == 0 && t->n_leaves == 1)
            nodes = 1;
        if (nodes == 1) { /* merged in a scratch leaf, then streamed out whole */
            UPD_FN(merge_into)(t, mine[k].leaf, r, mine[k].rec_begin, end, scratch_keys, scratch_values);
            for (uint64_t s = count; s < L; s++) {
                scratch_keys[s] = max_key;
                scratch_values[s] = 0;
            }
            UPD_STREAM_COPY(new_keys + dest * L, scratch_keys, L * sizeof(UPD_T));
            UPD_STREAM_COPY(new_values + dest * L, scratch_values, L * sizeof(UPD_T));
            new_rank[dest] = rank;
            rank += count;
            kr_leaf_cursor_note(nt, &cursor, node_min, scratch_keys[0]);
            dest++;
        } else if (nodes > 1) {
            UPD_FN(merge_spread)(t, mine[k].leaf, r, mine[k].rec_begin, end, new_keys + dest * L,
                                 new_values + dest * L, nodes, count);
            for (uint64_t x = 0; x < nodes; x++) {
                const uint64_t n = upd_spread_start(count, nodes, x + 1) - upd_spread_start(count, nodes, x);
                UPD_T *keys = new_keys + (dest + x) * L, *values = new_values + (dest + x) * L;
                for (uint64_t s = n; s < L; s++) {
                    keys[s] = max_key;
                    values[s] = 0;
                }
                new_rank[dest + x] = rank;
                rank += n;
                kr_leaf_cursor_note(nt, &cursor, node_min, keys[0]);
            }
            dest += nodes;
        }
        li = mine[k].leaf + 1;
    }
    kr_stream_fence();
}
