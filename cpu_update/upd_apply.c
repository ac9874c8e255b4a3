/* upd_apply.c — the OpenMP batch updater: sort, target leaves, plan (with the strict-policy and
 * memory checks before any write), then the in-place apply or the re-layout into new arrays. The
 * algorithm and its invariants are described in cpu_update.h. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_update/cpu_update.h"

/* The sorted batch: keys ascending with each operation's index, stable; runs of equal keys. */
typedef struct upd_ops {
    void *sorted_keys;    /* count keys */
    void *sorted_index;   /* count operation indexes (key width) */
    uint8_t *sorted_kinds;/* the kinds and values gathered into sorted order once, so that the */
    void *sorted_values;  /* merges read them sequentially (NULL when the batch has no values) */
    uint64_t *run_start;  /* n_runs + 1 */
    uint64_t n_runs;
} upd_ops;

typedef struct upd_leaf_plan {
    uint64_t count;       /* keys after the merge */
    uint64_t inserted, updated, deleted, missing;
    uint64_t first_error; /* smallest failing operation, UINT64_MAX if none */
    harmonia_status error;
} upd_leaf_plan;

/* Records a failing operation in a leaf's plan; the smallest index wins. */
static inline void plan_failure(upd_leaf_plan *plan, uint64_t op, harmonia_status error)
{
    if (op < plan->first_error) {
        plan->first_error = op;
        plan->error = error;
    }
}

#define UPD_T uint32_t
#define UPD_FN(name) name##_u32
#include "cpu_update/upd_merge_impl.h"
#undef UPD_T
#undef UPD_FN
#define UPD_T uint64_t
#define UPD_FN(name) name##_u64
#include "cpu_update/upd_merge_impl.h"
#undef UPD_T
#undef UPD_FN

static void merge_leaf(const kr_tree *t, uint64_t leaf, const upd_ops *ops, uint64_t r_begin, uint64_t r_end,
                       const upd_params *p, void *out_keys, void *out_values, upd_leaf_plan *plan)
{
    if (t->key_bits == 32)
        merge_leaf_u32(t, leaf, ops, r_begin, r_end, p, out_keys, out_values, plan);
    else
        merge_leaf_u64(t, leaf, ops, r_begin, r_end, p, out_keys, out_values, plan);
}

static void spread(kr_tree *dst, uint64_t first_leaf, uint64_t nodes, const void *keys, const void *values,
                   uint64_t count, uint64_t *counts_out)
{
    if (dst->key_bits == 32)
        spread_u32(dst, first_leaf, nodes, keys, values, count, counts_out);
    else
        spread_u64(dst, first_leaf, nodes, keys, values, count, counts_out);
}

static double now_seconds(void) { return omp_get_wtime(); }

/* Nodes a touched leaf becomes: 0 when emptied, 1 when it fits, else itself + auxiliary nodes. */
static uint64_t nodes_for(uint64_t count, uint64_t leaf_size, uint64_t per_split_node)
{
    if (count == 0)
        return 0;
    if (count <= leaf_size)
        return 1;
    return (count + per_split_node - 1) / per_split_node;
}

/* Everything the batch allocates, freed in one place. */
typedef struct upd_work {
    upd_ops ops;
    uint64_t *run_leaf;
    uint64_t *touched_leaf, *touched_run_start; /* T, T + 1 */
    upd_leaf_plan *plans;                       /* T */
    uint64_t *node_start;                       /* T + 1: new-leaf offset of each touched leaf's nodes */
    void *scratch;                              /* per thread: L keys then L values */
    void *aux_keys, *aux_values;                /* the auxiliary nodes' pool: the merged pairs of
                                                   leaves that overflow, at aux_start offsets */
    uint64_t *aux_start;                        /* T: offset in the pool, or UINT64_MAX */
} upd_work;

static void free_work(upd_work *w)
{
    free(w->ops.sorted_keys);
    free(w->ops.sorted_index);
    free(w->ops.sorted_kinds);
    free(w->ops.sorted_values);
    free(w->ops.run_start);
    free(w->run_leaf);
    free(w->touched_leaf);
    free(w->touched_run_start);
    free(w->plans);
    free(w->node_start);
    free(w->scratch);
    free(w->aux_keys);
    free(w->aux_values);
    free(w->aux_start);
}

#define FAIL_NO_MEMORY(what)                                                                      \
    do {                                                                                          \
        kr_set_error(err, "out of memory %s (batch of %" PRIu64 " operations)", what, count);    \
        st = HARMONIA_ERR_NO_MEMORY;                                                              \
        goto done;                                                                                \
    } while (0)

harmonia_status upd_apply_batch(kr_tree *t, const upd_params *p, const uint8_t *kinds, const void *keys,
                                const void *values, uint64_t count, harmonia_update_stats *stats,
                                upd_result *result, kr_error *err)
{
    const uint32_t bits = t->key_bits;
    const size_t kb = bits / 8;
    const uint64_t L = t->leaf_size;
    const int team = kr_resolve_threads(p->threads); /* every parallel region's num_threads */
    harmonia_status st = HARMONIA_OK;
    upd_work w;
    memset(&w, 0, sizeof w);
    memset(result, 0, sizeof *result);
    double t0 = now_seconds();

    /* 1. sort (key, operation index), stable: each key's operations stay in batch order */
    w.ops.sorted_keys = kr_malloc(count * kb);
    w.ops.sorted_index = kr_malloc(count * kb);
    if (!w.ops.sorted_keys || !w.ops.sorted_index)
        FAIL_NO_MEMORY("sorting the batch");
#pragma omp parallel for schedule(static) num_threads(team) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++) {
        kr_store(w.ops.sorted_keys, bits, i, kr_load(keys, bits, i));
        kr_store(w.ops.sorted_index, bits, i, i);
    }
    st = kr_sort_pairs(bits, w.ops.sorted_keys, w.ops.sorted_index, count, team, err);
    if (st != HARMONIA_OK)
        goto done;
    w.ops.sorted_kinds = kr_malloc(count);
    w.ops.sorted_values = values ? kr_malloc(count * kb) : NULL;
    if (!w.ops.sorted_kinds || (values && !w.ops.sorted_values))
        FAIL_NO_MEMORY("gathering the sorted batch");
#pragma omp parallel for schedule(static) num_threads(team) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++) {
        uint64_t op = kr_load(w.ops.sorted_index, bits, i);
        w.ops.sorted_kinds[i] = kinds[op];
        if (values)
            kr_store(w.ops.sorted_values, bits, i, kr_load(values, bits, op));
    }
    /* runs: positions where the key changes */
    w.ops.run_start = kr_malloc((count + 1) * sizeof(uint64_t));
    if (!w.ops.run_start)
        FAIL_NO_MEMORY("finding runs");
    {
        uint64_t runs = 0;
        for (uint64_t i = 0; i < count; i++)
            if (i == 0 || kr_load(w.ops.sorted_keys, bits, i) != kr_load(w.ops.sorted_keys, bits, i - 1))
                w.ops.run_start[runs++] = i;
        w.ops.run_start[runs] = count;
        w.ops.n_runs = runs;
    }
    const uint64_t R = w.ops.n_runs;
    stats->duplicates = count - R;
    double t1 = now_seconds();
    stats->sort_seconds = t1 - t0;

    /* 2. target leaf of each run (runs ascending, so leaves are non-decreasing) */
    w.run_leaf = kr_malloc((R ? R : 1) * sizeof(uint64_t));
    void *run_keys = kr_malloc((R ? R : 1) * kb);
    if (!w.run_leaf || !run_keys) {
        free(run_keys);
        FAIL_NO_MEMORY("finding target leaves");
    }
#pragma omp parallel for schedule(static) num_threads(team) if (R > KR_PARALLEL_MIN)
    for (uint64_t r = 0; r < R; r++)
        kr_store(run_keys, bits, r, kr_load(w.ops.sorted_keys, bits, w.ops.run_start[r]));
    kr_leaf_batch(t, run_keys, R, w.run_leaf, team);
    free(run_keys);
    uint64_t T = 0;
    for (uint64_t r = 0; r < R; r++)
        T += r == 0 || w.run_leaf[r] != w.run_leaf[r - 1];
    w.touched_leaf = kr_malloc((T ? T : 1) * sizeof(uint64_t));
    w.touched_run_start = kr_malloc((T + 1) * sizeof(uint64_t));
    w.plans = kr_malloc((T ? T : 1) * sizeof(upd_leaf_plan));
    w.node_start = kr_malloc((T + 1) * sizeof(uint64_t));
    if (!w.touched_leaf || !w.touched_run_start || !w.plans || !w.node_start)
        FAIL_NO_MEMORY("grouping the batch by leaf");
    {
        uint64_t j = 0;
        for (uint64_t r = 0; r < R; r++)
            if (r == 0 || w.run_leaf[r] != w.run_leaf[r - 1]) {
                w.touched_leaf[j] = w.run_leaf[r];
                w.touched_run_start[j++] = r;
            }
        w.touched_run_start[T] = R;
    }
    stats->leaves_touched = T;

    /* 3. plan: merge without writing, per touched leaf */
#pragma omp parallel for schedule(dynamic, 64) num_threads(team) if (T > 256)
    for (uint64_t j = 0; j < T; j++)
        merge_leaf(t, w.touched_leaf[j], &w.ops, w.touched_run_start[j], w.touched_run_start[j + 1], p, NULL, NULL,
                   &w.plans[j]);
    uint64_t first_error = UINT64_MAX, aux_pairs = 0, new_keys = t->n_keys;
    harmonia_status error = HARMONIA_OK;
    const uint64_t per_split_node = (uint64_t)(L * p->split_fill) < 1 ? 1 : (uint64_t)(L * p->split_fill);
    bool shape_changed = false;
    w.node_start[0] = 0;
    w.aux_start = kr_malloc((T ? T : 1) * sizeof(uint64_t));
    if (!w.aux_start)
        FAIL_NO_MEMORY("planning auxiliary nodes");
    for (uint64_t j = 0; j < T; j++) {
        const upd_leaf_plan *pl = &w.plans[j];
        if (pl->first_error < first_error) {
            first_error = pl->first_error;
            error = pl->error;
        }
        stats->inserted += pl->inserted;
        stats->updated += pl->updated;
        stats->deleted += pl->deleted;
        stats->missing += pl->missing;
        uint64_t old = t->leaf_rank[w.touched_leaf[j] + 1] - t->leaf_rank[w.touched_leaf[j]];
        new_keys = new_keys - old + pl->count;
        uint64_t nodes = nodes_for(pl->count, L, per_split_node);
        if (nodes == 0 && t->n_leaves == 1)
            nodes = 1; /* the only leaf stays, empty: the empty tree keeps its shape */
        /* a leaf that overflows merges into the auxiliary pool, the others into L-pair scratch */
        w.aux_start[j] = pl->count > L ? aux_pairs : UINT64_MAX;
        if (pl->count > L)
            aux_pairs += pl->count;
        if (nodes != 1)
            shape_changed = true;
        if (nodes == 0)
            stats->leaves_removed++;
        if (nodes > 1) {
            stats->leaves_split++;
            stats->auxiliary_nodes += nodes - 1;
        }
        w.node_start[j + 1] = w.node_start[j] + nodes;
    }
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

    double apply_seconds = now_seconds() - t1; /* target leaves and plan so far */

    /* merge buffers: per thread L pairs for leaves that fit, and the auxiliary pool for the merged
     * pairs of leaves that overflow (each its own range: no thread shares one) */
    const int threads = team;
    const size_t scratch_pairs = L;
    w.scratch = kr_malloc((size_t)threads * scratch_pairs * 2 * kb);
    if (aux_pairs) {
        w.aux_keys = kr_malloc(aux_pairs * kb);
        w.aux_values = kr_malloc(aux_pairs * kb);
    }
    if (!w.scratch || (aux_pairs && (!w.aux_keys || !w.aux_values)))
        FAIL_NO_MEMORY("allocating merge buffers");
    double t2 = now_seconds();

    if (!shape_changed && p->in_place_allowed) {
        /* 5a. in place: merge each touched leaf back into itself, then shift the leaf ranks */
        uint64_t *dirty = kr_malloc((T ? T : 1) * sizeof(uint64_t));
        int64_t *shift = kr_malloc((T + 1) * sizeof(int64_t));
        if (!dirty || !shift) {
            free(dirty);
            free(shift);
            FAIL_NO_MEMORY("recording dirty leaves");
        }
        /* from here on nothing can fail */
        shift[0] = 0;
        for (uint64_t j = 0; j < T; j++) {
            uint64_t leaf = w.touched_leaf[j];
            int64_t old = (int64_t)(t->leaf_rank[leaf + 1] - t->leaf_rank[leaf]);
            shift[j + 1] = shift[j] + (int64_t)w.plans[j].count - old;
            dirty[j] = leaf;
        }
#pragma omp parallel num_threads(threads) if (T > 256)
        {
            char *mine = (char *)w.scratch + (size_t)omp_get_thread_num() * scratch_pairs * 2 * kb;
            void *sk = mine, *sv = mine + scratch_pairs * kb;
#pragma omp for schedule(dynamic, 64)
            for (uint64_t j = 0; j < T; j++) {
                upd_leaf_plan plan;
                uint64_t leaf = w.touched_leaf[j], n_count;
                merge_leaf(t, leaf, &w.ops, w.touched_run_start[j], w.touched_run_start[j + 1], p, sk, sv, &plan);
                spread(t, leaf, 1, sk, sv, plan.count, &n_count);
            }
        }
        /* ranks: leaves after touched leaf j (up to the next touched one) move by shift[j + 1] */
#pragma omp parallel for schedule(dynamic, 64) num_threads(team) if (T > 256)
        for (uint64_t j = 0; j < T; j++) {
            uint64_t end = j + 1 < T ? w.touched_leaf[j + 1] : t->n_leaves;
            for (uint64_t li = w.touched_leaf[j] + 1; li <= end; li++)
                t->leaf_rank[li] = (uint64_t)((int64_t)t->leaf_rank[li] + shift[j + 1]);
        }
        result->ranks_changed = false;
        for (uint64_t j = 0; j < T; j++)
            if (shift[j + 1] != shift[j])
                result->ranks_changed = true;
        t->n_keys = new_keys;
        free(shift);
        result->in_place = true;
        result->dirty_leaves = dirty;
        result->n_dirty = T;
        stats->apply_seconds = apply_seconds + (now_seconds() - t2);
        stats->relayout_seconds = 0;
        goto done;
    }

    /* 5b. re-layout into new arrays */
    {
        kr_tree *nt = &result->new_tree;
        memset(nt, 0, sizeof *nt);
        nt->key_bits = bits;
        nt->fanout = t->fanout;
        nt->leaf_size = t->leaf_size;
        nt->n_keys = new_keys;
        uint64_t new_leaves = t->n_leaves - T + w.node_start[T];
        nt->n_leaves = new_leaves ? new_leaves : 1;
        st = kr_plan_levels(nt, err);
        if (st == HARMONIA_OK)
            st = kr_alloc_arrays(nt, err);
        if (st != HARMONIA_OK)
            goto done;
        /* from here on nothing can fail */
        double t3 = now_seconds();
        uint64_t *counts = nt->leaf_rank + 1; /* per-leaf key counts, scanned into ranks below */
        if (new_leaves == 0) { /* every key deleted: the empty tree, one empty leaf */
            spread(nt, 0, 1, w.scratch, w.scratch, 0, counts);
        }
        /* touched leaves: merged and spread over their nodes */
#pragma omp parallel num_threads(threads) if (T > 256)
        {
            char *mine = (char *)w.scratch + (size_t)omp_get_thread_num() * scratch_pairs * 2 * kb;
            void *sk = mine, *sv = mine + scratch_pairs * kb;
#pragma omp for schedule(dynamic, 64)
            for (uint64_t j = 0; j < T; j++) {
                upd_leaf_plan plan;
                uint64_t leaf = w.touched_leaf[j];
                uint64_t nodes = w.node_start[j + 1] - w.node_start[j];
                if (nodes == 0)
                    continue;
                /* new place: old leaves before it, less the touched ones, plus their nodes */
                uint64_t first_new = leaf - j + w.node_start[j];
                void *mk = sk, *mv = sv;
                if (w.aux_start[j] != UINT64_MAX) {
                    mk = (char *)w.aux_keys + w.aux_start[j] * kb;
                    mv = (char *)w.aux_values + w.aux_start[j] * kb;
                }
                merge_leaf(t, leaf, &w.ops, w.touched_run_start[j], w.touched_run_start[j + 1], p, mk, mv, &plan);
                spread(nt, first_new, nodes, mk, mv, plan.count, counts + first_new);
            }
        }
        double t4 = now_seconds();
        stats->apply_seconds = apply_seconds + (t4 - t2);
        /* untouched leaves: old leaf li moves to li - (touched leaves before it) + (their nodes);
         * chunks of old leaves, each copying its runs of untouched leaves as blocks */
        const uint64_t chunk = 4096, chunks = (t->n_leaves + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (chunks > 1)
        for (uint64_t c = 0; c < chunks; c++) {
            uint64_t li = c * chunk, end = li + chunk < t->n_leaves ? li + chunk : t->n_leaves;
            /* j = touched leaves before li (binary search, then advanced along the chunk) */
            uint64_t lo = 0, hi = T;
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (w.touched_leaf[mid] < li)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            uint64_t j = lo;
            while (li < end) {
                if (j < T && w.touched_leaf[j] == li) {
                    li++;
                    j++;
                    continue;
                }
                uint64_t run_end = j < T && w.touched_leaf[j] < end ? w.touched_leaf[j] : end;
                uint64_t n = run_end - li, to = li - j + w.node_start[j];
                memcpy((char *)nt->keys + kr_leaf_key_offset(nt, to) * kb,
                       (const char *)t->keys + kr_leaf_key_offset(t, li) * kb, n * L * kb);
                memcpy((char *)nt->leaf_values + to * L * kb, (const char *)t->leaf_values + li * L * kb, n * L * kb);
                for (uint64_t k = 0; k < n; k++)
                    counts[to + k] = t->leaf_rank[li + k + 1] - t->leaf_rank[li + k];
                li = run_end;
            }
        }
        nt->leaf_rank[0] = 0;
        kr_inclusive_scan(nt->leaf_rank + 1, nt->n_leaves, team);
        kr_build_internal_levels(nt, team);
        stats->relayout_seconds = (now_seconds() - t4) + (t3 - t2); /* copies, ranks, levels; the allocation */
    }

done:
    free_work(&w);
    return st;
}
