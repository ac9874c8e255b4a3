/* dist_query.c — queries over the shards: each rank's point lookups, lower bounds, range counts and
 * range collects routed to the shards by the splitters (or answered from the shard table where no
 * shard is needed), answered by each shard's engine, and returned to the submitting rank in its
 * query order. The engine is the single tree's; the exchange is dist_comm.c's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"

#define PAR_MIN 65536

static void local_query_config(const harmonia_query_config *in, harmonia_query_config *out)
{
    if (in != NULL)
        *out = *in;
    else
        harmonia_query_config_init(out);
    out->memory = HARMONIA_MEMORY_HOST; /* what the exchange delivers (synchronous calls) */
}

static void finish_stats(harmonia_dist_query_stats *stats, const harmonia_dist_query_stats *st)
{
    if (stats != NULL)
        *stats = *st;
}

/* ---- lookups and lower bounds --------------------------------------------------------------- */

/* Where query q goes: a shard, or dist->ctx.ranks when the shard table answers it (then *found,
 * *key, *value hold the answer). */
static inline uint32_t point_dest(const harmonia_dist *dist, bool lower_bound, uint64_t q,
                                  uint8_t *found, uint64_t *key, uint64_t *value)
{
    const int P = dist->ctx.ranks;
    const int r = dst_route(dist, q);
    const dst_shard *sh = &dist->shards[r];
    *found = 0;
    *key = *value = 0;
    if (!lower_bound) {
        if (sh->keys == 0 || q < sh->min_key || q > sh->max_key)
            return (uint32_t)P; /* no shard holds it */
        if (q == sh->min_key) {
            *found = 1;
            *key = q;
            *value = sh->min_value;
            return (uint32_t)P;
        }
        return (uint32_t)r;
    }
    if (sh->keys > 0 && q <= sh->max_key) {
        if (q > sh->min_key)
            return (uint32_t)r; /* inside the shard's keys: the shard answers */
        *found = 1;              /* at or below its smallest key: that key */
        *key = sh->min_key;
        *value = sh->min_value;
        return (uint32_t)P;
    }
    /* past the shard's last key: the next non-empty shard's smallest key, if any */
    const int s = dist->next_nonempty[r + 1];
    if (s < P) {
        *found = 1;
        *key = dist->shards[s].min_key;
        *value = dist->shards[s].min_value;
    }
    return (uint32_t)P;
}

static harmonia_status point_queries(harmonia_dist *dist, bool lower_bound,
                                     const harmonia_query_config *config, const void *queries,
                                     uint64_t count, void *keys_out, void *values_out,
                                     uint8_t *found_out, harmonia_dist_query_stats *stats)
{
    harmonia_dist_query_stats st;
    memset(&st, 0, sizeof st);
    st.queries = count;
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK) {
        finish_stats(stats, &st);
        return dist != NULL ? dst_finish(dist, &err) : err.status;
    }
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    harmonia_query_config qc;
    local_query_config(config, &qc);
    dst_plan *plan = &dist->plans[0];
    dst_plan_reset(plan, P);
    dst_traffic traffic = {0, 0};
    uint32_t *dest = NULL;
    uint64_t *pos = NULL;
    void *send = NULL, *recv = NULL, *local_keys = NULL, *local_values = NULL;
    void *ret_keys = NULL, *ret_values = NULL;
    uint8_t *local_found = NULL, *ret_found = NULL;
    double t0 = dst_now();

    if (count > 0 && (queries == NULL || found_out == NULL || (!lower_bound && values_out == NULL)))
        dst_fail(&err, HARMONIA_ERR_INVALID, "%s: NULL arrays with %" PRIu64 " queries",
                 lower_bound ? "harmonia_dist_lower_bound" : "harmonia_dist_lookup", count);
    if (err.status == HARMONIA_OK) {
        dest = dst_alloc(count * sizeof *dest);
        pos = dst_alloc(count * sizeof *pos);
        send = dst_alloc(count * width);
        if (dest == NULL || pos == NULL || send == NULL)
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " queries", count);
    }
    if (err.status == HARMONIA_OK) {
#pragma omp parallel for schedule(static) if (count >= PAR_MIN)
        for (uint64_t i = 0; i < count; i++) {
            uint64_t key, value;
            dest[i] = point_dest(dist, lower_bound, dst_get(queries, bits, i), &found_out[i], &key,
                                 &value);
            if (dest[i] == (uint32_t)P) {
                if (keys_out != NULL)
                    dst_set(keys_out, bits, i, key);
                if (values_out != NULL)
                    dst_set(values_out, bits, i, value);
            }
        }
        if (!dst_partition(dest, count, P, plan->send_counts, pos)) {
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " queries", count);
            dst_plan_reset(plan, P);
        } else {
            dst_pack(queries, pos, count, width, send);
        }
    }
    free(dest);
    dest = NULL;
    double t1 = dst_now();
    st.route_seconds = t1 - t0;

    dst_plan_counts(ctx, plan);
    if (err.status == HARMONIA_OK) {
        const uint64_t n = plan->recv_total, m = plan->send_total;
        recv = dst_alloc(n * width);
        local_values = dst_alloc(n * width);
        local_found = dst_alloc(n);
        ret_values = dst_alloc(m * width);
        ret_found = dst_alloc(m);
        if (lower_bound) {
            local_keys = dst_alloc(n * width);
            ret_keys = dst_alloc(m * width);
        }
        if (!recv || !local_values || !local_found || !ret_values || !ret_found ||
            (lower_bound && (!local_keys || !ret_keys)) || dst_injected(DST_HOOK_RECV_ALLOC, me))
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY,
                     "out of memory for %" PRIu64 " received and %" PRIu64 " returned queries", n, m);
    }
    if (dst_plan_agree(ctx, plan, &err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send, recv, width, &traffic, &err) != HARMONIA_OK)
        goto done;
    double t2 = dst_now();
    st.exchange_seconds = t2 - t1;
    st.pieces_sent = plan->send_total;
    st.answered_here = count - plan->send_total;
    st.pieces_served = plan->recv_total;

    harmonia_status status =
        lower_bound ? harmonia_lower_bound(dist->tree, &qc, recv, plan->recv_total, local_keys,
                                           local_values, local_found)
                    : harmonia_lookup(dist->tree, &qc, recv, plan->recv_total, local_values,
                                      local_found);
    if (status != HARMONIA_OK)
        dst_fail_tree(&err, status, dist->tree, lower_bound ? "lower bounds on the shard"
                                                            : "lookups on the shard");
    /* the local phase ends when every shard has answered (the agreement waits for the slowest) */
    dst_agree(ctx, &err);
    double t3 = dst_now();
    st.local_seconds = t3 - t2;
    if (err.status != HARMONIA_OK ||
        dst_exchange(ctx, plan, true, local_values, ret_values, width, &traffic, &err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, true, local_found, ret_found, 1, &traffic, &err) != HARMONIA_OK ||
        (lower_bound &&
         dst_exchange(ctx, plan, true, local_keys, ret_keys, width, &traffic, &err) != HARMONIA_OK))
        goto done;
    dst_unpack(ret_found, pos, count, 1, found_out);
    if (values_out != NULL)
        dst_unpack(ret_values, pos, count, width, values_out);
    if (lower_bound && keys_out != NULL)
        dst_unpack(ret_keys, pos, count, width, keys_out);
    st.return_seconds = dst_now() - t3;
done:
    st.bytes_sent = traffic.bytes_sent;
    st.bytes_received = traffic.bytes_received;
    free(dest);
    free(pos);
    free(send);
    free(recv);
    free(local_keys);
    free(local_values);
    free(local_found);
    free(ret_keys);
    free(ret_values);
    free(ret_found);
    finish_stats(stats, &st);
    return dst_finish(dist, &err);
}

harmonia_status harmonia_dist_lookup(harmonia_dist *dist, const harmonia_query_config *config,
                                     const void *queries, uint64_t count, void *values_out,
                                     uint8_t *found_out, harmonia_dist_query_stats *stats)
{
    return point_queries(dist, false, config, queries, count, NULL, values_out, found_out, stats);
}

harmonia_status harmonia_dist_lower_bound(harmonia_dist *dist, const harmonia_query_config *config,
                                          const void *queries, uint64_t count, void *keys_out,
                                          void *values_out, uint8_t *found_out,
                                          harmonia_dist_query_stats *stats)
{
    return point_queries(dist, true, config, queries, count, keys_out, values_out, found_out,
                         stats);
}

/* ---- range counts --------------------------------------------------------------------------- */

/* The shards range [lo, hi] needs asked, and what the table answers. A range reaches shards
 * r_lo .. r_hi; those strictly inside count whole (their size), the two ends count whole when the
 * range covers their keys, not at all when it misses them, else they are asked. *dest0 / *dest1
 * are the shards asked (ranks = none); the return is the part counted from the table. */
static inline uint64_t count_pieces(const harmonia_dist *dist, uint64_t lo, uint64_t hi,
                                    uint32_t *dest0, uint32_t *dest1)
{
    const int P = dist->ctx.ranks;
    *dest0 = *dest1 = (uint32_t)P;
    if (lo > hi)
        return 0;
    const int a = dst_route(dist, lo), b = dst_route(dist, hi);
    const dst_shard *sa = &dist->shards[a], *sb = &dist->shards[b];
    uint64_t known = 0;
    if (a == b) {
        if (sa->keys == 0 || lo > sa->max_key || hi < sa->min_key)
            return 0;
        if (lo <= sa->min_key && hi >= sa->max_key)
            return sa->keys;
        *dest0 = (uint32_t)a;
        return 0;
    }
    known = dist->key_prefix[b] - dist->key_prefix[a + 1]; /* the shards inside */
    if (sa->keys > 0 && lo <= sa->max_key) {
        if (lo <= sa->min_key)
            known += sa->keys;
        else
            *dest0 = (uint32_t)a;
    }
    if (sb->keys > 0 && hi >= sb->min_key) {
        if (hi >= sb->max_key)
            known += sb->keys;
        else
            *dest1 = (uint32_t)b;
    }
    return known;
}

/* Range counts into counts_out; the shared first phase of range_count and range_collect. */
static harmonia_status range_counts(harmonia_dist *dist, const harmonia_query_config *qc,
                                    const void *lo, const void *hi, uint64_t count,
                                    uint64_t *counts_out, harmonia_dist_query_stats *st,
                                    dst_err *err)
{
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    const uint64_t slots = 2 * count; /* piece 2i and 2i+1 of range i */
    dst_plan *plan = &dist->plans[0];
    dst_plan_reset(plan, P);
    dst_traffic traffic = {0, 0};
    uint32_t *dest = NULL;
    uint64_t *pos = NULL, *local_counts = NULL, *ret_counts = NULL;
    void *send_lo = NULL, *send_hi = NULL, *recv_lo = NULL, *recv_hi = NULL;
    double t0 = dst_now();

    if (err->status == HARMONIA_OK) {
        dest = dst_alloc(slots * sizeof *dest);
        pos = dst_alloc(slots * sizeof *pos);
        send_lo = dst_alloc(slots * width);
        send_hi = dst_alloc(slots * width);
        if (dest == NULL || pos == NULL || send_lo == NULL || send_hi == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " ranges", count);
    }
    if (err->status == HARMONIA_OK) {
#pragma omp parallel for schedule(static) if (count >= PAR_MIN)
        for (uint64_t i = 0; i < count; i++)
            counts_out[i] = count_pieces(dist, dst_get(lo, bits, i), dst_get(hi, bits, i),
                                         &dest[2 * i], &dest[2 * i + 1]);
        if (!dst_partition(dest, slots, P, plan->send_counts, pos)) {
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " ranges", count);
            dst_plan_reset(plan, P);
        } else {
#pragma omp parallel for schedule(static) if (slots >= PAR_MIN)
            for (uint64_t j = 0; j < slots; j++) {
                if (pos[j] == UINT64_MAX)
                    continue;
                dst_set(send_lo, bits, pos[j], dst_get(lo, bits, j / 2));
                dst_set(send_hi, bits, pos[j], dst_get(hi, bits, j / 2));
            }
        }
    }
    free(dest);
    dest = NULL;
    double t1 = dst_now();
    st->route_seconds += t1 - t0;

    dst_plan_counts(ctx, plan);
    if (err->status == HARMONIA_OK) {
        const uint64_t n = plan->recv_total, m = plan->send_total;
        recv_lo = dst_alloc(n * width);
        recv_hi = dst_alloc(n * width);
        local_counts = dst_alloc(n * sizeof(uint64_t));
        ret_counts = dst_alloc(m * sizeof(uint64_t));
        if (!recv_lo || !recv_hi || !local_counts || !ret_counts ||
            dst_injected(DST_HOOK_RECV_ALLOC, me))
            dst_fail(err, HARMONIA_ERR_NO_MEMORY,
                     "out of memory for %" PRIu64 " received and %" PRIu64 " returned ranges", n, m);
    }
    if (dst_plan_agree(ctx, plan, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_lo, recv_lo, width, &traffic, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_hi, recv_hi, width, &traffic, err) != HARMONIA_OK)
        goto done;
    double t2 = dst_now();
    st->exchange_seconds += t2 - t1;
    st->pieces_sent += plan->send_total;
    st->pieces_served += plan->recv_total;

    harmonia_status status =
        harmonia_range_count(dist->tree, qc, recv_lo, recv_hi, plan->recv_total, local_counts);
    if (status != HARMONIA_OK)
        dst_fail_tree(err, status, dist->tree, "range counts on the shard");
    dst_agree(ctx, err);
    double t3 = dst_now();
    st->local_seconds += t3 - t2;
    if (err->status != HARMONIA_OK ||
        dst_exchange(ctx, plan, true, local_counts, ret_counts, sizeof(uint64_t), &traffic, err) !=
            HARMONIA_OK)
        goto done;
    uint64_t here = 0;
#pragma omp parallel for schedule(static) reduction(+ : here) if (count >= PAR_MIN)
    for (uint64_t i = 0; i < count; i++) {
        const uint64_t a = pos[2 * i], b = pos[2 * i + 1];
        if (a != UINT64_MAX)
            counts_out[i] += ret_counts[a];
        if (b != UINT64_MAX)
            counts_out[i] += ret_counts[b];
        here += a == UINT64_MAX && b == UINT64_MAX;
    }
    st->answered_here += here;
    st->return_seconds += dst_now() - t3;
done:
    st->bytes_sent += traffic.bytes_sent;
    st->bytes_received += traffic.bytes_received;
    free(dest);
    free(pos);
    free(send_lo);
    free(send_hi);
    free(recv_lo);
    free(recv_hi);
    free(local_counts);
    free(ret_counts);
    return err->status;
}

harmonia_status harmonia_dist_range_count(harmonia_dist *dist, const harmonia_query_config *config,
                                          const void *lo, const void *hi, uint64_t count,
                                          uint64_t *counts_out, harmonia_dist_query_stats *stats)
{
    harmonia_dist_query_stats st;
    memset(&st, 0, sizeof st);
    st.queries = count;
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK) {
        finish_stats(stats, &st);
        return dist != NULL ? dst_finish(dist, &err) : err.status;
    }
    harmonia_query_config qc;
    local_query_config(config, &qc);
    if (count > 0 && (lo == NULL || hi == NULL || counts_out == NULL))
        dst_fail(&err, HARMONIA_ERR_INVALID,
                 "harmonia_dist_range_count: NULL arrays with %" PRIu64 " ranges", count);
    range_counts(dist, &qc, lo, hi, count, counts_out, &st, &err);
    finish_stats(stats, &st);
    return dst_finish(dist, &err);
}

/* ---- range collect -------------------------------------------------------------------------- */

/* Phase 2: every non-empty shard a range reaches sends its pairs in the range; they land at the
 * range's offsets in shard order (= key order). */
static harmonia_status collect_pairs(harmonia_dist *dist, const harmonia_query_config *qc,
                                     const void *lo, const void *hi, uint64_t count,
                                     const uint64_t *offsets, void *keys_out, void *values_out,
                                     harmonia_dist_query_stats *st, dst_err *err)
{
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    dst_plan *plan = &dist->plans[0], *pairs_plan = &dist->plans[1];
    dst_plan_reset(plan, P);
    dst_plan_reset(pairs_plan, P);
    dst_traffic traffic = {0, 0};
    uint64_t *piece_start = NULL, *piece_query = NULL, *pos = NULL, *local_offsets = NULL;
    uint64_t *ret_counts = NULL, *ret_start = NULL;
    uint32_t *dest = NULL;
    void *send_lo = NULL, *send_hi = NULL, *recv_lo = NULL, *recv_hi = NULL;
    void *local_keys = NULL, *local_values = NULL, *recv_keys = NULL, *recv_values = NULL;
    uint64_t pieces = 0;
    double t0 = dst_now();

    /* the pieces: range i asks every non-empty shard s in [route(lo), route(hi)] whose keys it
     * meets, in shard order */
    piece_start = dst_alloc((count + 1) * sizeof(uint64_t));
    if (piece_start == NULL)
        dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " ranges", count);
    if (err->status == HARMONIA_OK) {
#pragma omp parallel for schedule(static) if (count >= PAR_MIN)
        for (uint64_t i = 0; i < count; i++) {
            const uint64_t l = dst_get(lo, bits, i), h = dst_get(hi, bits, i);
            uint64_t n = 0;
            if (l <= h) {
                const int a = dst_route(dist, l), b = dst_route(dist, h);
                for (int s = dist->next_nonempty[a]; s <= b; s = dist->next_nonempty[s + 1])
                    n += !((s == a && l > dist->shards[s].max_key) ||
                           (s == b && h < dist->shards[s].min_key));
            }
            piece_start[i + 1] = n;
        }
        piece_start[0] = 0;
        for (uint64_t i = 0; i < count; i++)
            piece_start[i + 1] += piece_start[i];
        pieces = piece_start[count];
        dest = dst_alloc(pieces * sizeof *dest);
        piece_query = dst_alloc(pieces * sizeof *piece_query);
        pos = dst_alloc(pieces * sizeof *pos);
        send_lo = dst_alloc(pieces * width);
        send_hi = dst_alloc(pieces * width);
        if (!dest || !piece_query || !pos || !send_lo || !send_hi)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for %" PRIu64 " range pieces", pieces);
    }
    if (err->status == HARMONIA_OK) {
#pragma omp parallel for schedule(static) if (count >= PAR_MIN)
        for (uint64_t i = 0; i < count; i++) {
            const uint64_t l = dst_get(lo, bits, i), h = dst_get(hi, bits, i);
            uint64_t j = piece_start[i];
            if (l > h)
                continue;
            const int a = dst_route(dist, l), b = dst_route(dist, h);
            for (int s = dist->next_nonempty[a]; s <= b; s = dist->next_nonempty[s + 1]) {
                if ((s == a && l > dist->shards[s].max_key) || (s == b && h < dist->shards[s].min_key))
                    continue;
                dest[j] = (uint32_t)s;
                piece_query[j] = i;
                j++;
            }
        }
        if (!dst_partition(dest, pieces, P, plan->send_counts, pos)) {
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for %" PRIu64 " range pieces", pieces);
            dst_plan_reset(plan, P);
        } else {
#pragma omp parallel for schedule(static) if (pieces >= PAR_MIN)
            for (uint64_t j = 0; j < pieces; j++) {
                dst_set(send_lo, bits, pos[j], dst_get(lo, bits, piece_query[j]));
                dst_set(send_hi, bits, pos[j], dst_get(hi, bits, piece_query[j]));
            }
        }
    }
    free(dest);
    dest = NULL;
    double t1 = dst_now();
    st->route_seconds += t1 - t0;

    /* pieces to the shards */
    dst_plan_counts(ctx, plan);
    const uint64_t n = plan->recv_total, m = plan->send_total;
    if (err->status == HARMONIA_OK) {
        recv_lo = dst_alloc(n * width);
        recv_hi = dst_alloc(n * width);
        local_offsets = dst_alloc((n + 1) * sizeof(uint64_t));
        ret_counts = dst_alloc(m * sizeof(uint64_t));
        ret_start = dst_alloc((m + 1) * sizeof(uint64_t));
        if (!recv_lo || !recv_hi || !local_offsets || !ret_counts || !ret_start ||
            dst_injected(DST_HOOK_RECV_ALLOC, me))
            dst_fail(err, HARMONIA_ERR_NO_MEMORY,
                     "out of memory for %" PRIu64 " received and %" PRIu64 " returned pieces", n, m);
    }
    if (dst_plan_agree(ctx, plan, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_lo, recv_lo, width, &traffic, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, send_hi, recv_hi, width, &traffic, err) != HARMONIA_OK)
        goto done;
    double t2 = dst_now();
    st->exchange_seconds += t2 - t1;
    st->pieces_sent += m;
    st->pieces_served += n;

    /* the shard's pairs of every piece it received, in receive order (by source rank) */
    harmonia_status status =
        harmonia_range_collect(dist->tree, qc, recv_lo, recv_hi, n, local_offsets, NULL, NULL);
    if (status == HARMONIA_OK) {
        local_keys = dst_alloc(local_offsets[n] * width);
        local_values = dst_alloc(local_offsets[n] * width);
        if (local_keys == NULL || local_values == NULL)
            status = dst_fail(err, HARMONIA_ERR_NO_MEMORY,
                              "out of memory for the shard's %" PRIu64 " pairs in the ranges",
                              local_offsets[n]);
        else
            status = harmonia_range_collect(dist->tree, qc, recv_lo, recv_hi, n, local_offsets,
                                            local_keys, local_values);
    }
    if (status != HARMONIA_OK)
        dst_fail_tree(err, status, dist->tree, "range collect on the shard");
    /* each piece's count, back to its range's rank (local_offsets differences, in place) */
    if (err->status == HARMONIA_OK)
        for (uint64_t k = 0; k < n; k++)
            local_offsets[k] = local_offsets[k + 1] - local_offsets[k];
    dst_agree(ctx, err);
    double t3 = dst_now();
    st->local_seconds += t3 - t2;
    if (err->status != HARMONIA_OK ||
        dst_exchange(ctx, plan, true, local_offsets, ret_counts, sizeof(uint64_t), &traffic, err) !=
            HARMONIA_OK)
        goto done;

    /* the pairs: this rank sends to each source the pairs of its pieces (contiguous per source)
     * and receives from each shard the pairs of the pieces it sent there (in packed order) */
    {
        uint64_t sent = 0;
        for (int p = 0; p < P; p++) {
            uint64_t pairs = 0;
            for (uint64_t k = plan->recv_offsets[p]; k < plan->recv_offsets[p + 1]; k++)
                pairs += local_offsets[k];
            pairs_plan->send_counts[p] = pairs;
            sent += pairs;
        }
        (void)sent;
        ret_start[0] = 0;
        for (uint64_t k = 0; k < m; k++)
            ret_start[k + 1] = ret_start[k] + ret_counts[k];
        for (int p = 0; p < P; p++)
            pairs_plan->recv_counts[p] =
                ret_start[plan->send_offsets[p + 1]] - ret_start[plan->send_offsets[p]];
        dst_plan_offsets(ctx, pairs_plan);
    }
    /* the offsets of phase 1 must fit what came back, range by range */
    if (offsets[0] != 0)
        dst_fail(err, HARMONIA_ERR_INVALID,
                 "harmonia_dist_range_collect: offsets[0] is %" PRIu64 ", not 0 (use phase 1's offsets)",
                 offsets[0]);
    for (uint64_t i = 0; i < count && err->status == HARMONIA_OK; i++) {
        uint64_t got = 0;
        for (uint64_t j = piece_start[i]; j < piece_start[i + 1]; j++)
            got += ret_counts[pos[j]];
        if (offsets[i + 1] < offsets[i] || offsets[i + 1] - offsets[i] != got)
            dst_fail(err, HARMONIA_ERR_INVALID,
                     "harmonia_dist_range_collect: range %" PRIu64 " holds %" PRIu64
                     " pairs but its offsets leave room for %" PRIu64
                     " (use phase 1's offsets on an unchanged index)",
                     i, got, offsets[i + 1] >= offsets[i] ? offsets[i + 1] - offsets[i] : 0);
    }
    if (err->status == HARMONIA_OK && pairs_plan->recv_total > 0 && keys_out == NULL &&
        values_out == NULL)
        dst_fail(err, HARMONIA_ERR_INVALID,
                 "harmonia_dist_range_collect: phase 2 with %" PRIu64
                 " pairs to receive but NULL keys_out and values_out", pairs_plan->recv_total);
    if (err->status == HARMONIA_OK) {
        recv_keys = dst_alloc(pairs_plan->recv_total * width);
        recv_values = dst_alloc(pairs_plan->recv_total * width);
        if (recv_keys == NULL || recv_values == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory receiving %" PRIu64 " pairs",
                     pairs_plan->recv_total);
    }
    if (dst_plan_agree(ctx, pairs_plan, err) != HARMONIA_OK ||
        dst_exchange(ctx, pairs_plan, false, local_keys, recv_keys, width, &traffic, err) !=
            HARMONIA_OK ||
        dst_exchange(ctx, pairs_plan, false, local_values, recv_values, width, &traffic, err) !=
            HARMONIA_OK)
        goto done;
    /* placement: range i's pieces in shard order, each at the range's offset plus the pieces
     * before it */
#pragma omp parallel for schedule(dynamic, 1024) if (count >= PAR_MIN)
    for (uint64_t i = 0; i < count; i++) {
        uint64_t at = offsets[i];
        for (uint64_t j = piece_start[i]; j < piece_start[i + 1]; j++) {
            const uint64_t c = ret_counts[pos[j]], from = ret_start[pos[j]];
            if (keys_out != NULL)
                memcpy((char *)keys_out + at * width, (char *)recv_keys + from * width, c * width);
            if (values_out != NULL)
                memcpy((char *)values_out + at * width, (char *)recv_values + from * width,
                       c * width);
            at += c;
        }
    }
    st->return_seconds += dst_now() - t3;
    for (uint64_t i = 0; i < count; i++)
        st->answered_here += piece_start[i + 1] == piece_start[i];
done:
    st->bytes_sent += traffic.bytes_sent;
    st->bytes_received += traffic.bytes_received;
    free(piece_start);
    free(piece_query);
    free(pos);
    free(dest);
    free(send_lo);
    free(send_hi);
    free(recv_lo);
    free(recv_hi);
    free(local_offsets);
    free(ret_counts);
    free(ret_start);
    free(local_keys);
    free(local_values);
    free(recv_keys);
    free(recv_values);
    return err->status;
}

harmonia_status harmonia_dist_range_collect(harmonia_dist *dist,
                                            const harmonia_query_config *config, const void *lo,
                                            const void *hi, uint64_t count, uint64_t *offsets,
                                            void *keys_out, void *values_out,
                                            harmonia_dist_query_stats *stats)
{
    harmonia_dist_query_stats st;
    memset(&st, 0, sizeof st);
    st.queries = count;
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK) {
        finish_stats(stats, &st);
        return dist != NULL ? dst_finish(dist, &err) : err.status;
    }
    harmonia_query_config qc;
    local_query_config(config, &qc);
    if (offsets == NULL || (count > 0 && (lo == NULL || hi == NULL)))
        dst_fail(&err, HARMONIA_ERR_INVALID,
                 "harmonia_dist_range_collect: NULL arrays with %" PRIu64 " ranges", count);
    /* the phase: 2 when any rank passes an output array */
    uint64_t phase2 = keys_out != NULL || values_out != NULL;
    if (dst_agree_max(&dist->ctx, &err, &phase2, 1) == HARMONIA_OK) {
        if (!phase2) {
            if (range_counts(dist, &qc, lo, hi, count, offsets, &st, &err) == HARMONIA_OK) {
                uint64_t sum = 0;
                for (uint64_t i = 0; i < count; i++) {
                    uint64_t c = offsets[i];
                    offsets[i] = sum;
                    sum += c;
                }
                offsets[count] = sum;
            }
        } else {
            collect_pairs(dist, &qc, lo, hi, count, offsets, keys_out, values_out, &st, &err);
        }
    }
    finish_stats(stats, &st);
    return dst_finish(dist, &err);
}
