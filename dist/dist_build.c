/* dist_build.c — building the distributed index: the splitters from a weighted sample of every
 * rank's keys, the pairs sent to their shards with MPI_Alltoallv, each rank's tree built with
 * harmonia_build, and the exact rebalance that moves keys between neighbouring shards when the
 * shards came out uneven (duplicate-heavy input, or after updates). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"

#define DST_MAX_TOTAL_SAMPLES ((uint64_t)1 << 22)

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- configuration agreed between ranks ------------------------------------------------------ */

/* The fields that must be the same on every rank, as numbers. */
#define CONFIG_FIELDS 8
static const char *const config_field_names[CONFIG_FIELDS] = {
    "build.key_bits", "build.fanout", "build.leaf_size", "build.duplicates", "build.leaf_fill",
    "samples_per_rank", "balance_tolerance", "exchange_chunk_bytes"};

static void config_fields(const harmonia_dist_config *c, uint64_t fields[CONFIG_FIELDS])
{
    uint64_t fill_bits, balance_bits;
    memcpy(&fill_bits, &c->build.leaf_fill, sizeof fill_bits);
    memcpy(&balance_bits, &c->balance_tolerance, sizeof balance_bits);
    fields[0] = c->build.key_bits;
    fields[1] = c->build.fanout;
    fields[2] = c->build.leaf_size;
    fields[3] = (uint64_t)c->build.duplicates;
    fields[4] = fill_bits;
    fields[5] = c->samples_per_rank;
    fields[6] = balance_bits;
    fields[7] = c->exchange_chunk_bytes;
}

/* Collective: err gets INVALID when a field differs between ranks (agreed by the caller). The
 * reduction also agrees on err as it stands. */
static harmonia_status agree_config(const dst_ctx *ctx, const harmonia_dist_config *config,
                                    dst_err *err)
{
    uint64_t fields[CONFIG_FIELDS], words[2 * CONFIG_FIELDS];
    config_fields(config, fields);
    for (int f = 0; f < CONFIG_FIELDS; f++) {
        words[2 * f] = fields[f];
        words[2 * f + 1] = ~fields[f];
    }
    /* dst_agree_max reduces at most 31 values */
    harmonia_status status = dst_agree_max(ctx, err, words, 2 * CONFIG_FIELDS);
    if (status != HARMONIA_OK)
        return status;
    for (int f = 0; f < CONFIG_FIELDS; f++) {
        uint64_t largest = words[2 * f], smallest = ~words[2 * f + 1];
        if (largest != smallest) {
            /* the same conclusion on every rank: no further agreement needed */
            err->status = HARMONIA_ERR_INVALID;
            if (f == 4 || f == 6) {
                double a, b;
                memcpy(&a, &smallest, sizeof a);
                memcpy(&b, &largest, sizeof b);
                snprintf(err->message, sizeof err->message,
                         "harmonia_dist_build: %s differs between ranks (%g and %g); pass the same "
                         "configuration on every rank", config_field_names[f], a, b);
            } else {
                snprintf(err->message, sizeof err->message,
                         "harmonia_dist_build: %s differs between ranks (%" PRIu64 " and %" PRIu64
                         "); pass the same configuration on every rank", config_field_names[f],
                         smallest, largest);
            }
            return err->status;
        }
    }
    return HARMONIA_OK;
}

/* ---- splitters -------------------------------------------------------------------------------- */

typedef struct weighted_key {
    uint64_t key;
    double weight; /* input pairs this sample stands for */
} weighted_key;

static int compare_weighted(const void *a, const void *b)
{
    const weighted_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->weight < y->weight ? -1 : x->weight > y->weight;
}

/* Collective. Every rank draws up to `per_rank` of its keys at random (all of them when it has
 * fewer), each standing for count / drawn of its pairs; rank 0 sorts the gathered sample and puts
 * splitter j where the weight before it reaches j/P of all pairs; the splitters are broadcast into
 * dist->lower. counts[r] = rank r's input pairs (every rank's, known to all). */
static harmonia_status choose_splitters(harmonia_dist *dist, const void *keys, uint64_t count,
                                        const uint64_t *counts, uint64_t per_rank, dst_err *err)
{
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint64_t drawn = count < per_rank ? count : per_rank;
    uint64_t *sample = dst_alloc(drawn * sizeof(uint64_t));
    int *sizes = NULL, *displs = NULL;
    weighted_key *all = NULL;
    uint64_t *gathered = NULL;
    if (sample == NULL) {
        dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for %" PRIu64 " sample keys", drawn);
    } else if (drawn == count) {
        for (uint64_t i = 0; i < count; i++)
            sample[i] = dst_get(keys, dist->key_bits, i);
    } else {
        uint64_t state = 0x5EED0000ull + (uint64_t)me * 0x9E3779B97F4A7C15ull + count;
        for (uint64_t i = 0; i < drawn; i++)
            sample[i] = dst_get(keys, dist->key_bits, splitmix(&state) % count);
    }
    if (me == 0) {
        sizes = calloc((size_t)P, sizeof(int));
        displs = calloc((size_t)P + 1, sizeof(int));
        if (sizes == NULL || displs == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for the sample sizes");
    }
    if (dst_agree(ctx, err) != HARMONIA_OK)
        goto done;
    int mine = (int)drawn; /* drawn <= 2^22 / P */
    MPI_Gather(&mine, 1, MPI_INT, sizes, 1, MPI_INT, 0, ctx->comm);
    uint64_t total = 0;
    if (me == 0) {
        for (int r = 0; r < P; r++) {
            displs[r] = (int)total;
            total += (uint64_t)sizes[r];
        }
        gathered = dst_alloc(total * sizeof(uint64_t));
        all = dst_alloc(total * sizeof(weighted_key));
        if (gathered == NULL || all == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory for %" PRIu64 " sample keys", total);
    }
    if (dst_agree(ctx, err) != HARMONIA_OK)
        goto done;
    MPI_Gatherv(sample, mine, MPI_UINT64_T, gathered, sizes, displs, MPI_UINT64_T, 0, ctx->comm);
    if (me == 0) {
        double pairs = 0.0;
        uint64_t k = 0;
        for (int r = 0; r < P; r++) {
            double weight = sizes[r] > 0 ? (double)counts[r] / sizes[r] : 0.0;
            pairs += (double)counts[r];
            for (int i = 0; i < sizes[r]; i++, k++) {
                all[k].key = gathered[k];
                all[k].weight = weight;
            }
        }
        qsort(all, total, sizeof *all, compare_weighted);
        /* splitter j: the first sample whose weight, with the samples before it, passes j/P of the
         * pairs; a key is never split (equal samples give equal splitters: an empty shard) */
        dist->lower[0] = 0;
        double before = 0.0;
        uint64_t i = 0;
        for (int j = 1; j < P; j++) {
            double target = pairs * j / P;
            while (i < total && before + all[i].weight <= target) {
                before += all[i].weight;
                i++;
            }
            dist->lower[j] = i < total ? all[i].key : (total > 0 ? all[total - 1].key : 0);
            if (dist->lower[j] < dist->lower[j - 1])
                dist->lower[j] = dist->lower[j - 1];
        }
    }
    MPI_Bcast(dist->lower, P, MPI_UINT64_T, 0, ctx->comm);
done:
    free(sample);
    free(sizes);
    free(displs);
    free(gathered);
    free(all);
    return err->status;
}

/* ---- routing the pairs ---------------------------------------------------------------------- */

static void route_keys(const harmonia_dist *dist, const void *keys, uint64_t count, uint32_t *dest)
{
    if (dist->key_bits == 32) {
#pragma omp parallel for schedule(static) if (count >= 65536)
        for (uint64_t i = 0; i < count; i++)
            dest[i] = (uint32_t)dst_route(dist, ((const uint32_t *)keys)[i]);
    } else {
#pragma omp parallel for schedule(static) if (count >= 65536)
        for (uint64_t i = 0; i < count; i++)
            dest[i] = (uint32_t)dst_route(dist, ((const uint64_t *)keys)[i]);
    }
}

/* ---- the rebalance ---------------------------------------------------------------------------- */

static bool needs_rebalance(const harmonia_dist *dist, double tolerance)
{
    if (tolerance < 0.0 || dist->total_keys == 0)
        return false;
    const double mean = (double)dist->total_keys / dist->ctx.ranks;
    for (int r = 0; r < dist->ctx.ranks; r++)
        if (fabs((double)dist->shards[r].keys - mean) > tolerance * mean + 1.0)
            return true;
    return false;
}

/* floor(d * n / P) without overflow */
static uint64_t share_start(int d, uint64_t n, int P)
{
    return (uint64_t)(((unsigned __int128)d * n) / (unsigned)P);
}

/* Collective. Every shard's pairs, in key order, are cut at positions floor(d * N / P) of the
 * whole index: shard d gets positions [floor(dN/P), floor((d+1)N/P)). Each rank collects its pairs
 * (the CPU engine), sends the parts that now belong elsewhere, builds its new tree from what it
 * receives (already sorted and unique) and, once every rank has, swaps it in with the new
 * splitters. On failure nothing changes anywhere. */
static harmonia_status rebalance(harmonia_dist *dist, uint64_t *moved, dst_err *err)
{
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = dist->key_bits;
    const size_t width = bits / 8;
    const uint64_t N = dist->total_keys, mine = dist->shards[me].keys;
    const uint64_t first = dist->key_prefix[me]; /* my first key's position in the index */
    void *keys = NULL, *values = NULL, *recv_keys = NULL, *recv_values = NULL;
    harmonia_tree *fresh = NULL;
    struct head {
        uint64_t nonempty, first_key;
    } *heads = NULL;
    dst_plan *plan = &dist->plans[0];
    dst_plan_reset(plan, P);
    *moved = 0;
    /* my pairs in key order */
    keys = dst_alloc(mine * width);
    values = dst_alloc(mine * width);
    if (keys == NULL || values == NULL) {
        dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory collecting the shard's %" PRIu64 " pairs",
                 mine);
    } else if (mine > 0) {
        harmonia_query_config qc;
        harmonia_query_config_init(&qc);
        qc.backend = HARMONIA_BACKEND_CPU;
        qc.threads = dist->build.threads;
        uint64_t lo = 0, hi = dst_max_key(bits), offsets[2];
        uint32_t lo32 = 0, hi32 = UINT32_MAX;
        const void *plo = bits == 32 ? (const void *)&lo32 : (const void *)&lo;
        const void *phi = bits == 32 ? (const void *)&hi32 : (const void *)&hi;
        harmonia_status status = harmonia_range_collect(dist->tree, &qc, plo, phi, 1, offsets, NULL, NULL);
        if (status == HARMONIA_OK && offsets[1] != mine)
            status = dst_fail(err, HARMONIA_ERR_CORRUPT,
                              "the shard holds %" PRIu64 " pairs, its table says %" PRIu64,
                              offsets[1], mine);
        if (status == HARMONIA_OK)
            status = harmonia_range_collect(dist->tree, &qc, plo, phi, 1, offsets, keys, values);
        if (status != HARMONIA_OK)
            dst_fail_tree(err, status, dist->tree, "collecting the shard's pairs");
    }
    for (int d = 0; d < P && err->status == HARMONIA_OK; d++) {
        uint64_t begin = share_start(d, N, P), end = share_start(d + 1, N, P);
        uint64_t lo = begin > first ? begin : first;
        uint64_t hi = end < first + mine ? end : first + mine;
        plan->send_counts[d] = hi > lo ? hi - lo : 0;
        if (d != me)
            *moved += plan->send_counts[d];
    }
    if (err->status != HARMONIA_OK)
        dst_plan_reset(plan, P); /* take part in the counts with nothing; the agreement fails */
    dst_plan_counts(ctx, plan);
    if (err->status == HARMONIA_OK) {
        recv_keys = dst_alloc(plan->recv_total * width);
        recv_values = dst_alloc(plan->recv_total * width);
        heads = malloc((size_t)P * sizeof *heads);
        if (recv_keys == NULL || recv_values == NULL || heads == NULL)
            dst_fail(err, HARMONIA_ERR_NO_MEMORY, "out of memory receiving %" PRIu64 " pairs",
                     plan->recv_total);
    }
    if (dst_plan_agree(ctx, plan, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, keys, recv_keys, width, NULL, err) != HARMONIA_OK ||
        dst_exchange(ctx, plan, false, values, recv_values, width, NULL, err) != HARMONIA_OK)
        goto done;
    free(keys);
    free(values);
    keys = values = NULL;
    harmonia_build_config bc = dist->build;
    bc.key_bits = bits;
    bc.input_sorted = true;
    bc.duplicates = HARMONIA_DUPLICATES_REJECT;
    harmonia_status status = harmonia_build(&bc, recv_keys, recv_values, plan->recv_total, &fresh);
    if (status != HARMONIA_OK)
        dst_fail_tree(err, status, NULL, "rebuilding the rebalanced shard");
    if (dst_agree(ctx, err) != HARMONIA_OK)
        goto done;
    /* every rank has its new tree: swap, keeping the tuned group size */
    harmonia_tree_info old_info;
    if (harmonia_info(dist->tree, &old_info) == HARMONIA_OK && old_info.ntg_group_size != 0)
        harmonia_set_group_size(fresh, old_info.ntg_group_size);
    harmonia_free(dist->tree);
    dist->tree = fresh;
    fresh = NULL;
    /* splitter d = the first key of shard d (position floor(dN/P), which N >= 1 keeps below N for
     * the last shard); an empty shard takes the next one's splitter */
    struct head mine_head = {plan->recv_total > 0,
                             plan->recv_total > 0 ? dst_get(recv_keys, bits, 0) : 0};
    MPI_Allgather(&mine_head, 2, MPI_UINT64_T, heads, 2, MPI_UINT64_T, ctx->comm);
    for (int d = P - 1; d >= 1; d--)
        dist->lower[d] = heads[d].nonempty ? heads[d].first_key
                                           : (d + 1 < P ? dist->lower[d + 1] : dist->lower[d]);
    dist->lower[0] = 0;
    dst_refresh_table(dist, err);
    dst_agree(ctx, err);
done:
    harmonia_free(fresh);
    free(heads);
    free(keys);
    free(values);
    free(recv_keys);
    free(recv_values);
    return err->status;
}

harmonia_status harmonia_dist_rebalance(harmonia_dist *dist, double tolerance, uint64_t *moved_out)
{
    dst_err err;
    dst_err_clear(&err);
    uint64_t moved = 0;
    if (dst_check_usable(dist, &err) != HARMONIA_OK)
        return err.status;
    if (needs_rebalance(dist, tolerance)) /* the same answer on every rank: the same table */
        rebalance(dist, &moved, &err);
    if (moved_out != NULL)
        *moved_out = moved;
    return dst_finish(dist, &err);
}

/* ---- the build -------------------------------------------------------------------------------- */

harmonia_status harmonia_dist_build(MPI_Comm comm, const harmonia_dist_config *config_in,
                                    const void *keys, const void *values, uint64_t count,
                                    harmonia_dist **dist_out, harmonia_dist_build_stats *stats)
{
    harmonia_dist_config config;
    if (config_in != NULL)
        config = *config_in;
    else
        harmonia_dist_config_init(&config);
    harmonia_dist_build_stats st;
    memset(&st, 0, sizeof st);
    st.input_pairs = count;
    dst_err err;
    dst_err_clear(&err);
    if (dist_out != NULL)
        *dist_out = NULL;
    double t0 = dst_now();

    /* until the index has its communicator, agree on the caller's */
    harmonia_dist *dist = dst_new(comm, &config);
    dst_ctx caller = {comm, 0, 0, 0};
    MPI_Comm_rank(comm, &caller.rank);
    MPI_Comm_size(comm, &caller.ranks);
    if (dist == NULL)
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory for the index object");
    else if (dist_out == NULL)
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_build: NULL dist_out");
    if (dst_agree(&caller, &err) != HARMONIA_OK) {
        dst_delete(dist); /* not attached: no communicator to free */
        return dst_finish_global(&err);
    }
    dst_attach(dist, comm);
    const dst_ctx *ctx = &dist->ctx;
    const int P = ctx->ranks, me = ctx->rank;
    const uint32_t bits = config.build.key_bits;
    const size_t width = bits / 8;
    uint64_t *counts = NULL;
    uint32_t *dest = NULL;
    uint64_t *pos = NULL;
    void *send_keys = NULL, *send_values = NULL, *recv_keys = NULL, *recv_values = NULL;
    dst_plan *plan = &dist->plans[0];
    dst_traffic traffic = {0, 0};

    /* arguments, and a configuration that is the same everywhere */
    if (bits != 32 && bits != 64)
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_build: key_bits %u (use 32 or 64)", bits);
    else if (count > 0 && keys == NULL)
        dst_fail(&err, HARMONIA_ERR_INVALID, "harmonia_dist_build: NULL keys with %" PRIu64 " pairs",
                 count);
    if (agree_config(ctx, &config, &err) != HARMONIA_OK)
        goto fail;
    dst_choose_device(config.device, dist->local_rank, &dist->device, &err);
    counts = calloc((size_t)P, sizeof *counts);
    if (counts == NULL)
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory");
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;
    MPI_Allgather(&count, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, ctx->comm);
    uint64_t base = 0; /* my first pair's global position */
    for (int r = 0; r < me; r++)
        base += counts[r];
    if (values == NULL && bits == 32 && count > 0 && base + count - 1 > UINT32_MAX)
        dst_fail(&err, HARMONIA_ERR_INVALID,
                 "values are row ids (NULL values) but positions up to %" PRIu64
                 " do not fit 32-bit values", base + count - 1);

    /* splitters */
    uint64_t per_rank = config.samples_per_rank != 0 ? config.samples_per_rank
                                                     : HARMONIA_DIST_DEFAULT_SAMPLES;
    if (per_rank > DST_MAX_TOTAL_SAMPLES / (uint64_t)P)
        per_rank = DST_MAX_TOTAL_SAMPLES / (uint64_t)P;
    if (per_rank == 0)
        per_rank = 1;
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;
    if (P > 1 && choose_splitters(dist, keys, count, counts, per_rank, &err) != HARMONIA_OK)
        goto fail;
    double t1 = dst_now();
    st.sample_seconds = t1 - t0;

    /* route and pack; a rank that fails here sends nothing and the plan's agreement fails */
    dst_plan_reset(plan, P);
    dest = dst_alloc(count * sizeof(uint32_t));
    pos = dst_alloc(count * sizeof(uint64_t));
    send_keys = dst_alloc(count * width);
    send_values = dst_alloc(count * width);
    if (!dest || !pos || !send_keys || !send_values) {
        dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " pairs", count);
    } else {
        route_keys(dist, keys, count, dest);
        if (!dst_partition(dest, count, P, plan->send_counts, pos)) {
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory routing %" PRIu64 " pairs", count);
            dst_plan_reset(plan, P);
        } else {
            dst_pack(keys, pos, count, width, send_keys);
            if (values != NULL) {
                dst_pack(values, pos, count, width, send_values);
            } else {
#pragma omp parallel for schedule(static) if (count >= 65536)
                for (uint64_t i = 0; i < count; i++)
                    dst_set(send_values, bits, pos[i], base + i);
            }
        }
    }
    free(dest);
    free(pos);
    dest = NULL;
    pos = NULL;
    double t2 = dst_now();
    st.route_seconds = t2 - t1;

    /* exchange */
    dst_plan_counts(ctx, plan);
    if (err.status == HARMONIA_OK) {
        recv_keys = dst_alloc(plan->recv_total * width);
        recv_values = dst_alloc(plan->recv_total * width);
        if (recv_keys == NULL || recv_values == NULL || dst_injected(DST_HOOK_RECV_ALLOC, me))
            dst_fail(&err, HARMONIA_ERR_NO_MEMORY, "out of memory receiving %" PRIu64 " pairs",
                     plan->recv_total);
    }
    if (dst_plan_agree(ctx, plan, &err) == HARMONIA_OK &&
        dst_exchange(ctx, plan, false, send_keys, recv_keys, width, &traffic, &err) == HARMONIA_OK)
        dst_exchange(ctx, plan, false, send_values, recv_values, width, &traffic, &err);
    free(send_keys);
    free(send_values);
    send_keys = send_values = NULL;
    double t3 = dst_now();
    st.exchange_seconds = t3 - t2;
    if (err.status != HARMONIA_OK)
        goto fail;

    /* the local tree: what arrived is in global order (by source rank, then index), so the
     * duplicate policies keep the first or last pair of that order */
    harmonia_build_config bc = dist->build;
    harmonia_status status = harmonia_build(&bc, recv_keys, recv_values, plan->recv_total, &dist->tree);
    if (status != HARMONIA_OK)
        dst_fail_tree(&err, status, NULL, "building the shard");
    free(recv_keys);
    free(recv_values);
    recv_keys = recv_values = NULL;
    double t4 = dst_now();
    st.local_seconds = t4 - t3;
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;
    dst_refresh_table(dist, &err);
    if (dst_agree(ctx, &err) != HARMONIA_OK)
        goto fail;

    /* shards even enough? (the same answer on every rank: the same table) */
    double tolerance = config.balance_tolerance != 0.0 ? config.balance_tolerance
                                                       : HARMONIA_DIST_DEFAULT_BALANCE;
    if (needs_rebalance(dist, tolerance)) {
        uint64_t moved = 0;
        st.rebalanced = true;
        if (rebalance(dist, &moved, &err) != HARMONIA_OK)
            goto fail;
        st.rebalance_seconds = dst_now() - t4;
    }
    st.bytes_sent = traffic.bytes_sent;
    st.bytes_received = traffic.bytes_received;
    st.shard_keys = dist->shards[me].keys;
    free(counts);
    if (stats != NULL)
        *stats = st;
    *dist_out = dist;
    return HARMONIA_OK;

fail:
    /* every rank comes here together: each failure above was agreed */
    free(counts);
    free(dest);
    free(pos);
    free(send_keys);
    free(send_values);
    free(recv_keys);
    free(recv_values);
    if (stats != NULL)
        *stats = st;
    dst_finish_global(&err);
    dst_delete(dist);
    return err.status;
}
