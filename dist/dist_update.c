/* dist_update.c — update batches across the shards, atomically: the operations of every rank are
 * routed to their keys' shards (arriving in global order, by rank then index), each shard checks
 * its part against its tree without changing it, the ranks agree, every shard applies its part
 * with harmonia_update, and a shard whose apply fails makes the others apply the exact inverse.
 * Updating a tree is the library's; the order, the check and the undo are here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"

static const char *const op_names[] = {"insert", "update", "upsert", "delete"};

/* ---- the check -------------------------------------------------------------------------------
 * A shard's part, in global order, against its tree: the strict policies of harmonia_update
 * replayed per key (present or not before the batch, from a lookup of every operation's key, then
 * changed by each operation in order). The first failing operation in that order is the shard's;
 * the first over all shards (by source rank, then index) is the batch's, as a single tree over the
 * concatenated batch would report. Each distinct key's state before the batch is kept for the
 * inverse batch. */

typedef struct key_state {
    uint64_t key;
    uint64_t first;  /* the first operation (in the part) on this key; UINT64_MAX = empty slot */
    bool present;    /* as the operations so far leave it */
} key_state;

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

typedef struct check_result {
    uint64_t failed;          /* index in the part of the first failing operation; UINT64_MAX */
    harmonia_status status;   /* KEY_EXISTS / KEY_MISSING */
    key_state *table;         /* distinct keys and their first operation */
    uint64_t table_size;      /* a power of two */
    uint64_t distinct;
} check_result;

static harmonia_status check_part(uint32_t bits, const harmonia_update_config *uc,
                                  const uint8_t *kinds, const void *keys, uint64_t n,
                                  const uint8_t *found_before, check_result *out, dst_err *err)
{
    out->failed = UINT64_MAX;
    out->status = HARMONIA_OK;
    out->distinct = 0;
    uint64_t size = 16;
    while (size < 2 * n)
        size *= 2;
    out->table_size = size;
    out->table = malloc(size * sizeof *out->table);
    if (out->table == NULL)
        return dst_fail(err, HARMONIA_ERR_NO_MEMORY,
                        "out of memory checking %" PRIu64 " operations", n);
    for (uint64_t s = 0; s < size; s++)
        out->table[s].first = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t key = dst_get(keys, bits, i);
        uint64_t s = mix(key) & (size - 1);
        while (out->table[s].first != UINT64_MAX && out->table[s].key != key)
            s = (s + 1) & (size - 1);
        key_state *k = &out->table[s];
        if (k->first == UINT64_MAX) {
            k->key = key;
            k->first = i;
            k->present = found_before[i] != 0;
            out->distinct++;
        }
        switch (kinds[i]) {
        case HARMONIA_OP_INSERT:
            if (k->present && uc->insert_existing == HARMONIA_INSERT_EXISTING_ERROR) {
                out->failed = i;
                out->status = HARMONIA_ERR_KEY_EXISTS;
                return HARMONIA_OK;
            }
            k->present = true;
            break;
        case HARMONIA_OP_UPDATE:
            if (!k->present && uc->update_missing == HARMONIA_UPDATE_MISSING_ERROR) {
                out->failed = i;
                out->status = HARMONIA_ERR_KEY_MISSING;
                return HARMONIA_OK;
            }
            break;
        case HARMONIA_OP_UPSERT:
            k->present = true;
            break;
        default: /* delete (kinds were checked at the source) */
            k->present = false;
            break;
        }
    }
    return HARMONIA_OK;
}

/* The inverse of a part that was applied: every key it touched back to its state before (its
 * value then upserted, or deleted when it was absent). */
static harmonia_status undo_part(harmonia_dist *dist, const check_result *check,
                                 const uint8_t *found_before, const void *values_before,
                                 dst_err *err)
{
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    const uint64_t n = check->distinct;
    uint8_t *kinds = dst_alloc(n);
    void *keys = dst_alloc(n * width), *values = dst_alloc(n * width);
    harmonia_status status = HARMONIA_OK;
    if (kinds == NULL || keys == NULL || values == NULL ||
        dst_injected(DST_HOOK_UNDO, dist->ctx.rank)) {
        status = dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory undoing %" PRIu64 " keys", n);
    } else {
        uint64_t k = 0;
        for (uint64_t s = 0; s < check->table_size; s++) {
            const key_state *e = &check->table[s];
            if (e->first == UINT64_MAX)
                continue;
            const bool was = found_before[e->first] != 0;
            kinds[k] = was ? HARMONIA_OP_UPSERT : HARMONIA_OP_DELETE;
            dst_set(keys, bits, k, e->key);
            dst_set(values, bits, k, was ? dst_get(values_before, bits, e->first) : 0);
            k++;
        }
        harmonia_update_config uc;
        harmonia_update_config_init(&uc);
        uc.insert_existing = HARMONIA_INSERT_EXISTING_UPSERT;
        uc.update_missing = HARMONIA_UPDATE_MISSING_SKIP;
        uc.skip_upload = true;
        uc.threads = dist->build.threads;
        status = harmonia_update(dist->tree, &uc, kinds, keys, values, k, NULL);
        if (status != HARMONIA_OK)
            dst_fail_tree(err, status, dist->tree, "undoing the applied part");
    }
    free(kinds);
    free(keys);
    free(values);
    return status;
}

/* The first failing operation of each shard's part, gathered so every rank picks the same. */
typedef struct part_failure {
    int32_t has;      /* 0 / 1 */
    int32_t status;
    int32_t src_rank; /* the rank that submitted the operation */
    int32_t kind;
    uint64_t src_index;
    uint64_t key;
} part_failure;

harmonia_status harmonia_dist_update(harmonia_dist *dist, const harmonia_update_config *config,
                                     const uint8_t *kinds, const void *keys, const void *values,
                                     uint64_t count, harmonia_dist_update_stats *stats)
{
    harmonia_dist_update_stats st;
    memset(&st, 0, sizeof st);
    st.failed_rank = -1;
    st.total.failed_operation = UINT64_MAX;
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK) {
        if (stats != NULL)
            *stats = st;
        return dist != NULL ? dst_finish(dist, &err) : err.status;
    }
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    harmonia_update_config uc;
    if (config != NULL)
        uc = *config;
    else
        harmonia_update_config_init(&uc);
    const bool upload = !uc.skip_upload;
    uc.skip_upload = true; /* the device copies follow once every shard committed */
    dst_plan *plan = &dist->plans[0];
    dst_plan_reset(plan, P);
    dst_traffic traffic = {0, 0};
    uint32_t *dest = NULL;
    uint64_t *pos = NULL, *send_index = NULL, *recv_index = NULL;
    uint8_t *send_kinds = NULL, *recv_kinds = NULL, *found_before = NULL;
    void *send_keys = NULL, *send_values = NULL, *recv_keys = NULL, *recv_values = NULL;
    void *values_before = NULL;
    part_failure *failures = NULL;
    check_result check = {UINT64_MAX, HARMONIA_OK, NULL, 0, 0};
    bool committed = false;
    double t0 = dst_now();

    /* arguments, and policies that are the same everywhere */
    if (count > 0 && (kinds == NULL || keys == NULL))
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_update: NULL kinds or keys with %" PRIu64
                 " operations", count);
    for (uint64_t i = 0; i < count && err.status == HARMONIA_OK; i++) {
        if (kinds[i] > HARMONIA_OP_DELETE) {
            dst_fail(&err, HARMONIA_ERR_INVALID, "operation %" PRIu64 " has kind %u; kinds are 0 "
                     "insert, 1 update, 2 upsert, 3 delete; nothing was applied", i, kinds[i]);
            st.failed_rank = me;
            st.total.failed_operation = i;
        } else if (kinds[i] != HARMONIA_OP_DELETE && values == NULL) {
            dst_fail(&err, HARMONIA_ERR_INVALID,
                     "operation %" PRIu64 " (%s) needs a value but values is NULL", i,
                     op_names[kinds[i]]);
            st.failed_rank = me;
            st.total.failed_operation = i;
        }
    }
    if ((unsigned)uc.insert_existing > HARMONIA_INSERT_EXISTING_UPSERT ||
        (unsigned)uc.update_missing > HARMONIA_UPDATE_MISSING_SKIP)
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_update: unknown policy");
    uint64_t policy[4] = {(uint64_t)uc.insert_existing, ~(uint64_t)uc.insert_existing,
                          (uint64_t)uc.update_missing, ~(uint64_t)uc.update_missing};
    if (dst_agree_max(ctx, &err, policy, 4) != HARMONIA_OK) {
        /* an invalid operation: its rank and index, the same on every rank */
        uint64_t index = st.total.failed_operation;
        MPI_Bcast(&index, 1, MPI_UINT64_T, err.rank, ctx->comm);
        st.failed_rank = index != UINT64_MAX ? err.rank : -1;
        st.total.failed_operation = index;
        goto done;
    }
    if (policy[0] != ~policy[1] || policy[2] != ~policy[3]) {
        err.status = HARMONIA_ERR_INVALID;
        snprintf(err.message, sizeof err.message,
                 "harmonia_dist_update: the update policies differ between ranks; pass the same "
                 "configuration on every rank");
        goto done;
    }

    /* route and pack: kinds, keys, values and each operation's index in its rank's batch */
    dest = dst_alloc(count * sizeof *dest);
    pos = dst_alloc(count * sizeof *pos);
    send_index = dst_alloc(count * sizeof *send_index);
    send_kinds = dst_alloc(count);
    send_keys = dst_alloc(count * width);
    send_values = dst_alloc(count * width);
    if (!dest || !pos || !send_index || !send_kinds || !send_keys || !send_values) {
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " operations", count);
    } else {
#pragma omp parallel for schedule(static) if (count >= 65536)
        for (uint64_t i = 0; i < count; i++)
            dest[i] = (uint32_t)dst_route(dist, dst_get(keys, bits, i));
        if (!dst_partition(dest, count, P, plan->send_counts, pos)) {
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " operations",
                     count);
            dst_plan_reset(plan, P);
        } else {
            dst_pack(kinds, pos, count, 1, send_kinds);
            dst_pack(keys, pos, count, width, send_keys);
#pragma omp parallel for schedule(static) if (count >= 65536)
            for (uint64_t i = 0; i < count; i++)
                send_index[pos[i]] = i;
            if (values != NULL)
                dst_pack(values, pos, count, width, send_values);
            else
                memset(send_values, 0, count * width);
        }
    }
    free(dest);
    dest = NULL;
    double t1 = dst_now();
    st.route_seconds = t1 - t0;

    dst_plan_counts(ctx, plan);
    const uint64_t n = plan->recv_total;
    if (err.status == HARMONIA_OK) {
        recv_kinds = dst_alloc(n);
        recv_keys = dst_alloc(n * width);
        recv_values = dst_alloc(n * width);
        recv_index = dst_alloc(n * sizeof(uint64_t));
        found_before = dst_alloc(n);
        values_before = dst_alloc(n * width);
        failures = malloc((size_t)P * sizeof *failures);
        if (!recv_kinds || !recv_keys || !recv_values || !recv_index || !found_before ||
            !values_before || !failures || dst_injected(DST_HOOK_RECV_ALLOC, me))
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory receiving %" PRIu64 " operations",
                     n);
    }
    if (dst_plan_agree(ctx, plan, &err) != HARMONIA_OK)
        goto done;
    if (dst_exchange(ctx, plan, false, send_kinds, recv_kinds, 1, &traffic, &err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_keys, recv_keys, width, &traffic, &err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_values, recv_values, width, &traffic, &err) !=
            HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_index, recv_index, sizeof(uint64_t), &traffic, &err) !=
            HARMONIA_OK)
        goto done;
    double t2 = dst_now();
    st.exchange_seconds = t2 - t1;

    /* the check, against the unchanged shard */
    {
        harmonia_query_config qc;
        harmonia_query_config_init(&qc);
        qc.memory = HARMONIA_MEMORY_HOST;
        qc.threads = uc.threads;
        harmonia_status status =
            harmonia_lookup(dist->tree, &qc, recv_keys, n, values_before, found_before);
        if (status != HARMONIA_OK)
            dst_fail_tree(&err, status, dist->tree, "looking up the batch's keys on the shard");
        else
            check_part(bits, &uc, recv_kinds, recv_keys, n, found_before, &check, &err);
    }
    part_failure mine;
    memset(&mine, 0, sizeof mine);
    if (err.status == HARMONIA_OK && check.failed != UINT64_MAX) {
        /* which source rank sent operation check.failed: the receive blocks are in rank order */
        int src = 0;
        while (plan->recv_offsets[src + 1] <= check.failed)
            src++;
        mine.has = 1;
        mine.status = (int32_t)check.status;
        mine.src_rank = src;
        mine.kind = recv_kinds[check.failed];
        mine.src_index = recv_index[check.failed];
        mine.key = dst_get(recv_keys, bits, check.failed);
    }
    st.validate_seconds = dst_now() - t2;
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto done;
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, failures, (int)sizeof mine, MPI_BYTE, ctx->comm);
    {
        int first = -1;
        for (int r = 0; r < P; r++) {
            if (!failures[r].has)
                continue;
            if (first < 0 || failures[r].src_rank < failures[first].src_rank ||
                (failures[r].src_rank == failures[first].src_rank &&
                 failures[r].src_index < failures[first].src_index))
                first = r;
        }
        if (first >= 0) {
            const part_failure *f = &failures[first];
            err.status = (harmonia_status)f->status;
            st.failed_rank = f->src_rank;
            st.total.failed_operation = f->src_index;
            snprintf(err.message, sizeof err.message,
                     "rank %d: operation %" PRIu64 " (%s of key %" PRIu64 "): %s (on the shard of "
                     "rank %d); nothing was applied", f->src_rank, f->src_index,
                     op_names[f->kind & 3], f->key,
                     f->status == HARMONIA_ERR_KEY_EXISTS ? "the key is already present"
                                                          : "the key is not present", first);
            goto done;
        }
    }

    /* commit: every shard applies its part */
    double t3 = dst_now();
    harmonia_update_stats part;
    memset(&part, 0, sizeof part);
    harmonia_status status;
    if (dst_injected(DST_HOOK_COMMIT, me)) {
        status = dst_fail(&err, HARMONIA_ERR_NO_MEMORY,
                          "applying the shard's part: out of memory (injected)");
    } else {
        status = harmonia_update(dist->tree, &uc, recv_kinds, recv_keys, recv_values, n, &part);
        if (status != HARMONIA_OK)
            dst_fail_tree(&err, status, dist->tree, "applying the shard's part");
    }
    committed = status == HARMONIA_OK;
    st.commit_seconds = dst_now() - t3;
    if (dst_agree(ctx, &err) != HARMONIA_OK) {
        /* a shard failed to apply its part: those that did undo theirs */
        dst_err undo;
        dst_err_clear(&undo);
        if (committed)
            undo_part(dist, &check, found_before, values_before, &undo);
        st.rolled_back = true;
        if (dst_agree(ctx, &undo) != HARMONIA_OK) {
            dist->damaged = true;
            snprintf(dist->damage, sizeof dist->damage,
                     "the index is damaged: an update batch failed (%.300s) and undoing it failed "
                     "(%.300s); load it again from its files", err.message, undo.message);
            err.status = HARMONIA_ERR_CORRUPT;
            snprintf(err.message, sizeof err.message, "%s", dist->damage);
        } else {
            size_t used = strlen(err.message);
            snprintf(err.message + used, sizeof err.message - used,
                     "; the shards that had applied their part undid it: the index is unchanged");
        }
        dst_err refresh;
        dst_err_clear(&refresh);
        dst_refresh_table(dist, &refresh);
        goto done;
    }

    /* every shard committed: the device copies, the table, the statistics */
    if (upload) {
        harmonia_tree_info info;
        if (harmonia_info(dist->tree, &info) == HARMONIA_OK && info.device_resident &&
            info.device_version != info.version) {
            double u0 = dst_now();
            if (harmonia_device_upload(dist->tree) != HARMONIA_OK)
                harmonia_device_release(dist->tree); /* the next GPU query uploads and reports */
            part.upload_seconds = dst_now() - u0;
        }
    }
    dist->version++;
    dst_refresh_table(dist, &err);
    {
        uint64_t sums[10] = {part.operations, part.applied, part.inserted, part.updated,
                             part.deleted, part.missing, part.duplicates, part.leaves_touched,
                             part.leaves_split, part.auxiliary_nodes};
        uint64_t more[3] = {part.leaves_removed, part.uploaded_bytes, part.shape_changed};
        MPI_Allreduce(MPI_IN_PLACE, sums, 10, MPI_UINT64_T, MPI_SUM, ctx->comm);
        MPI_Allreduce(MPI_IN_PLACE, more, 3, MPI_UINT64_T, MPI_SUM, ctx->comm);
        double times[5] = {part.sort_seconds, part.apply_seconds, part.relayout_seconds,
                           part.upload_seconds, 0.0};
        MPI_Allreduce(MPI_IN_PLACE, times, 5, MPI_DOUBLE, MPI_MAX, ctx->comm);
        st.total.operations = sums[0];
        st.total.applied = sums[1];
        st.total.inserted = sums[2];
        st.total.updated = sums[3];
        st.total.deleted = sums[4];
        st.total.missing = sums[5];
        st.total.duplicates = sums[6];
        st.total.leaves_touched = sums[7];
        st.total.leaves_split = sums[8];
        st.total.auxiliary_nodes = sums[9];
        st.total.leaves_removed = more[0];
        st.total.uploaded_bytes = more[1];
        st.total.shape_changed = more[2] > 0;
        st.total.incremental_upload = false;
        st.total.sort_seconds = times[0];
        st.total.apply_seconds = times[1];
        st.total.relayout_seconds = times[2];
        st.total.upload_seconds = times[3];
    }
    dst_agree(ctx, &err);
done:
    st.bytes_sent = traffic.bytes_sent;
    st.bytes_received = traffic.bytes_received;
    free(dest);
    free(pos);
    free(send_index);
    free(recv_index);
    free(send_kinds);
    free(recv_kinds);
    free(found_before);
    free(send_keys);
    free(send_values);
    free(recv_keys);
    free(recv_values);
    free(values_before);
    free(failures);
    free(check.table);
    if (stats != NULL)
        *stats = st;
    return dst_finish(dist, &err);
}
