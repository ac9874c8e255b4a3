/* upd_apply.c — the OpenMP batch updater: sort, units of the leaf level, plan (with the strict-policy
 * and memory checks before any write), then the in-place apply or the re-layout into new arrays.
 * The algorithm and its invariants are described in cpu_update.h; the per-width work is in
 * upd_impl.h. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_update/cpu_update.h"

/* A unit: a range of old leaves and the sorted operations that go to them; one thread's work. */
typedef struct upd_unit {
    uint64_t leaf_begin, leaf_end; /* old leaves [begin, end) */
    uint64_t rec_begin, rec_end;   /* sorted operations */
    /* the plan */
    uint64_t runs;                 /* distinct keys */
    uint64_t touched;              /* touched leaves, listed at touch[rec_begin ...] */
    uint64_t nodes;                /* leaves of the new layout the unit's leaves become */
    uint64_t moves;                /* runs of untouched leaves */
    int64_t key_delta;             /* keys after - keys before */
    uint64_t inserted, updated, deleted, missing;
    uint64_t leaves_split, auxiliary_nodes, leaves_removed;
    bool shape_changed, count_changed;
    uint64_t first_error; /* smallest failing operation, UINT64_MAX if none */
    harmonia_status error;
    /* prefix sums over the units before */
    uint64_t node_start, key_start, touched_start, move_start;
    int64_t delta_before;
    char pad[64];
} upd_unit;

/* A touched leaf: its operations are records [rec_begin, the next touched leaf's rec_begin or the
 * unit's end). */
typedef struct upd_touch {
    uint64_t leaf, rec_begin, old_count, count;
} upd_touch;

/* Records a failing operation in a unit's plan; the smallest index wins. */
static inline void upd_unit_failure(upd_unit *u, uint64_t op, harmonia_status error)
{
    if (op < u->first_error) {
        u->first_error = op;
        u->error = error;
    }
}

/* Keys of old leaf li. */
static inline uint64_t upd_leaf_count(const kr_tree *t, uint64_t li)
{
    return t->leaf_rank[li + 1] - t->leaf_rank[li];
}

/* First pair of node k when count pairs are spread evenly over `nodes` nodes. */
static inline uint64_t upd_spread_start(uint64_t count, uint64_t nodes, uint64_t k)
{
    return count / nodes * k + (k < count % nodes ? k : count % nodes);
}

/* How the new leaf level is written: non-temporal stores (no read of the destination's old lines)
 * unless a benchmark turned them off to compare (cpu_update.h). */
bool upd_tuning_streaming = true;
#define UPD_STREAM_COPY(dst, src, bytes)                                                           \
    (upd_tuning_streaming ? kr_stream_copy(dst, src, bytes) : (void)memcpy(dst, src, bytes))

#define UPD_T uint32_t
#define UPD_FN(name) name##_u32
#include "cpu_update/upd_impl.h"
#undef UPD_T
#undef UPD_FN
#define UPD_T uint64_t
#define UPD_FN(name) name##_u64
#include "cpu_update/upd_impl.h"
#undef UPD_T
#undef UPD_FN

static double now_seconds(void) { return omp_get_wtime(); }

/* Room a re-layout's fresh arrays keep for growth, so that the next re-layout of a growing tree can
 * write into them (the paper's mix grows the tree by about 5 % a batch). */
#define UPD_LAYOUT_SLACK 0.125

/* Everything the batch allocates, freed in one place. */
typedef struct upd_work {
    void *records;       /* count sorted operation records */
    upd_unit *units;
    upd_touch *touch;    /* count entries; unit u's touched leaves from touch[u.rec_begin] */
    uint64_t *boundaries;
    uint64_t *node_min;  /* the new layout's internal levels (kr_levels_begin) */
} upd_work;

static void free_work(upd_work *w)
{
    free(w->records);
    free(w->units);
    free(w->touch);
    free(w->boundaries);
    free(w->node_min);
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

#define FAIL_NO_MEMORY(what)                                                                      \
    do {                                                                                          \
        kr_set_error(err, "out of memory %s (batch of %" PRIu64 " operations)", what, count);    \
        st = HARMONIA_ERR_NO_MEMORY;                                                              \
        goto done;                                                                                \
    } while (0)

/* Splits the leaf level into units: at most `target` leaves' worth of even shares of the leaves
 * and of the operations each, cut at leaves; each unit's operations from its first leaf's fence. */
static harmonia_status make_units(const kr_tree *t, const void *records, uint64_t count, uint64_t target,
                                  upd_work *w, uint64_t *n_units)
{
    const uint64_t n_leaves = t->n_leaves;
    uint64_t *b = w->boundaries = kr_malloc(2 * target * sizeof(uint64_t));
    if (!b)
        return HARMONIA_ERR_NO_MEMORY;
    uint64_t nb = 0;
    for (uint64_t u = 1; u < target; u++) {
        b[nb++] = n_leaves * u / target;
        uint64_t i = count * u / target;
        if (i < count)
            b[nb++] = t->key_bits == 32 ? leaf_of_u32(t, ((const rec_u32 *)records)[i].key)
                                        : leaf_of_u64(t, ((const rec_u64 *)records)[i].key);
    }
    qsort(b, nb, sizeof *b, compare_u64);
    uint64_t starts = 0; /* unit 0 starts at leaf 0; the others at each distinct boundary inside */
    for (uint64_t k = 0; k < nb; k++)
        if (b[k] > 0 && b[k] < n_leaves && (starts == 0 || b[k] != b[starts - 1]))
            b[starts++] = b[k];
    const uint64_t units = starts + 1;
    w->units = kr_calloc(units, sizeof(upd_unit));
    if (!w->units)
        return HARMONIA_ERR_NO_MEMORY;
    for (uint64_t u = 0; u < units; u++) {
        upd_unit *x = &w->units[u];
        x->leaf_begin = u == 0 ? 0 : b[u - 1];
        x->leaf_end = u + 1 < units ? b[u] : n_leaves;
        x->first_error = UINT64_MAX;
        if (u == 0) {
            x->rec_begin = 0;
        } else if (t->key_bits == 32) {
            uint32_t fence;
            x->rec_begin = lower_fence_u32(t, x->leaf_begin, &fence) ? first_record_from_u32(records, count, fence) : 0;
        } else {
            uint64_t fence;
            x->rec_begin = lower_fence_u64(t, x->leaf_begin, &fence) ? first_record_from_u64(records, count, fence) : 0;
        }
    }
    for (uint64_t u = 0; u < units; u++)
        w->units[u].rec_end = u + 1 < units ? w->units[u + 1].rec_begin : count;
    *n_units = units;
    return HARMONIA_OK;
}

harmonia_status upd_apply_batch(kr_tree *t, const upd_params *p, const uint8_t *kinds, const void *keys,
                                const void *values, uint64_t count, harmonia_update_stats *stats,
                                upd_result *result, kr_error *err)
{
    const uint32_t bits = t->key_bits;
    const uint64_t L = t->leaf_size;
    const int threads = kr_resolve_threads(p->threads); /* every parallel region's num_threads */
    harmonia_status st = HARMONIA_OK;
    upd_work w;
    memset(&w, 0, sizeof w);
    memset(result, 0, sizeof *result);
    const double t0 = now_seconds();

    /* 1. sort: records of (key, value, index and kind), stable */
    const size_t rec_bytes = bits == 32 ? sizeof(rec_u32) : sizeof(rec_u64);
    w.records = kr_malloc((count ? count : 1) * rec_bytes);
    if (!w.records)
        FAIL_NO_MEMORY("sorting the batch");
    st = bits == 32 ? sort_batch_u32(kinds, keys, values, count, w.records, threads)
                    : sort_batch_u64(kinds, keys, values, count, w.records, threads);
    if (st != HARMONIA_OK)
        FAIL_NO_MEMORY("sorting the batch");
    const double t1 = now_seconds();
    stats->sort_seconds = t1 - t0;

    /* 2. units of the leaf level and the plan of each: nothing written */
    const bool parallel = count + t->n_leaves > KR_PARALLEL_MIN && threads > 1;
    uint64_t n_units = 0;
    st = make_units(t, w.records, count, parallel ? (uint64_t)threads * 8 : 1, &w, &n_units);
    if (st != HARMONIA_OK)
        FAIL_NO_MEMORY("dividing the batch");
    w.touch = kr_malloc((count ? count : 1) * sizeof(upd_touch));
    if (!w.touch)
        FAIL_NO_MEMORY("grouping the batch by leaf");
    const uint64_t per_split_node = (uint64_t)(L * p->split_fill) < 1 ? 1 : (uint64_t)(L * p->split_fill);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n_units > 1)
    for (uint64_t u = 0; u < n_units; u++) {
        if (bits == 32)
            plan_unit_u32(t, p, w.records, &w.units[u], w.touch, per_split_node);
        else
            plan_unit_u64(t, p, w.records, &w.units[u], w.touch, per_split_node);
    }
    uint64_t first_error = UINT64_MAX, runs = 0, touched = 0, nodes = 0, moves = 0;
    harmonia_status error = HARMONIA_OK;
    int64_t delta = 0;
    bool shape_changed = false, count_changed = false;
    for (uint64_t u = 0; u < n_units; u++) {
        upd_unit *x = &w.units[u];
        if (x->first_error < first_error) {
            first_error = x->first_error;
            error = x->error;
        }
        x->node_start = nodes;
        x->key_start = (uint64_t)((int64_t)t->leaf_rank[x->leaf_begin] + delta);
        x->touched_start = touched;
        x->move_start = moves;
        x->delta_before = delta;
        runs += x->runs;
        touched += x->touched;
        nodes += x->nodes;
        moves += x->moves;
        delta += x->key_delta;
        shape_changed |= x->shape_changed;
        count_changed |= x->count_changed;
        stats->inserted += x->inserted;
        stats->updated += x->updated;
        stats->deleted += x->deleted;
        stats->missing += x->missing;
        stats->leaves_split += x->leaves_split;
        stats->auxiliary_nodes += x->auxiliary_nodes;
        stats->leaves_removed += x->leaves_removed;
    }
    stats->duplicates = count - runs;
    stats->leaves_touched = touched;
    if (first_error != UINT64_MAX) {
        uint64_t key = kr_load(keys, bits, first_error);
        kr_set_error(err, "operation %" PRIu64 " (%s of key %" PRIu64 "): %s; nothing was applied", first_error,
                     kinds[first_error] == HARMONIA_OP_INSERT ? "insert" : "update", key,
                     error == HARMONIA_ERR_KEY_EXISTS ? "the key is already present"
                                                      : "the key is not present");
        result->failed_op = first_error;
        st = error;
        goto done;
    }
    stats->applied = stats->inserted + stats->updated + stats->deleted;
    stats->shape_changed = shape_changed;
    const uint64_t new_keys = (uint64_t)((int64_t)t->n_keys + delta);
    const double t2 = now_seconds();

    if (!shape_changed && (p->in_place_allowed || p->in_place_target)) {
        /* 3a. in place: each touched leaf merged back into itself, then the leaf ranks shifted; with
         * a target (copy-on-write), into the target made a copy of the tree first */
        uint64_t *dirty = kr_malloc((touched ? touched : 1) * sizeof(uint64_t));
        if (!dirty)
            FAIL_NO_MEMORY("recording dirty leaves");
        kr_tree *d = t;
        if (p->in_place_target && touched > 0) { /* (a batch that touches no leaf writes nothing) */
            st = p->prepare_target(p->prepare_context, t, p->in_place_target, err);
            if (st != HARMONIA_OK) {
                free(dirty);
                goto done;
            }
            d = p->in_place_target;
        }
        /* from here on nothing can fail */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n_units > 1)
        for (uint64_t u = 0; u < n_units; u++) {
            if (bits == 32)
                write_unit_in_place_u32(d, w.records, &w.units[u], w.touch, dirty);
            else
                write_unit_in_place_u64(d, w.records, &w.units[u], w.touch, dirty);
        }
        if (count_changed) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n_units > 1)
            for (uint64_t u = 0; u < n_units; u++) {
                const upd_unit *x = &w.units[u];
                int64_t shift = x->delta_before;
                if (shift == 0 && !x->count_changed)
                    continue;
                const upd_touch *mine = w.touch + x->rec_begin;
                uint64_t k = 0;
                for (uint64_t li = x->leaf_begin; li < x->leaf_end; li++) {
                    d->leaf_rank[li] = (uint64_t)((int64_t)d->leaf_rank[li] + shift);
                    if (k < x->touched && mine[k].leaf == li) {
                        shift += (int64_t)mine[k].count - (int64_t)mine[k].old_count;
                        k++;
                    }
                }
            }
            d->leaf_rank[d->n_leaves] = new_keys;
        }
        d->n_keys = new_keys;
        result->in_place = true;
        if (p->in_place_target)
            result->new_tree = *d;
        result->dirty_leaves = dirty;
        result->n_dirty = touched;
        result->ranks_changed = count_changed;
        stats->apply_seconds = now_seconds() - t1;
        stats->relayout_seconds = 0;
        goto done;
    }
    stats->apply_seconds = t2 - t1; /* units and plan */

    /* 3b. re-layout into new arrays */
    {
        kr_tree *nt = &result->new_tree;
        memset(nt, 0, sizeof *nt);
        nt->key_bits = bits;
        nt->fanout = t->fanout;
        nt->leaf_size = t->leaf_size;
        nt->n_keys = new_keys;
        nt->n_leaves = nodes ? nodes : 1;
        st = kr_plan_levels(nt, err);
        if (st == HARMONIA_OK && p->spare)
            st = kr_alloc_arrays_reusing(nt, p->spare, UPD_LAYOUT_SLACK, err);
        else if (st == HARMONIA_OK)
            st = kr_alloc_arrays(nt, err);
        if (st == HARMONIA_OK) {
            st = kr_levels_begin(nt, &w.node_min, err);
            if (st != HARMONIA_OK)
                kr_tree_free_arrays(nt);
        }
        if (st != HARMONIA_OK) {
            memset(nt, 0, sizeof *nt);
            goto done;
        }
        upd_leaf_move *move_list = NULL;
        if (p->report_moves) {
            move_list = kr_malloc((moves ? moves : 1) * sizeof(upd_leaf_move));
            if (!move_list) {
                kr_tree_free_arrays(nt);
                memset(nt, 0, sizeof *nt);
                FAIL_NO_MEMORY("recording moved leaves");
            }
        }
        /* from here on nothing can fail */
        if (nodes == 0) { /* every key deleted: the empty tree, one empty leaf */
            for (uint64_t s = 0; s < L; s++) {
                kr_store(nt->keys, bits, s, kr_max_key(bits));
                kr_store(nt->leaf_values, bits, s, 0);
            }
            nt->leaf_rank[0] = 0;
        } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (n_units > 1)
            for (uint64_t u = 0; u < n_units; u++) {
                if (bits == 32)
                    write_unit_relayout_u32(t, nt, w.node_min, w.records, &w.units[u], w.touch, per_split_node,
                                            move_list);
                else
                    write_unit_relayout_u64(t, nt, w.node_min, w.records, &w.units[u], w.touch, per_split_node,
                                            move_list);
            }
        }
        nt->leaf_rank[nt->n_leaves] = new_keys;
        kr_levels_finish(nt, w.node_min, threads);
        result->moves = move_list;
        result->n_moves = move_list ? moves : 0;
        stats->relayout_seconds = now_seconds() - t2;
    }

done:
    free_work(&w);
    return st;
}
