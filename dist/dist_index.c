/* dist_index.c — the index object of dist/: its life cycle, configuration defaults, last errors,
 * the shard table every rank holds (refreshed after each change), information and the integrity
 * check across shards. Building, queries, updates and files are in their own files. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"

static _Thread_local char thread_error[DST_MESSAGE_BYTES];

void harmonia_dist_config_init(harmonia_dist_config *config)
{
    memset(config, 0, sizeof *config);
    harmonia_build_config_init(&config->build);
    config->device = -1;
    config->samples_per_rank = 0;
    config->balance_tolerance = 0.0;
    config->exchange_chunk_bytes = 0;
    config->verify = true;
}

const char *harmonia_dist_last_error(const harmonia_dist *dist)
{
    return dist != NULL ? dist->message : thread_error;
}

harmonia_status dst_finish(harmonia_dist *dist, const dst_err *err)
{
    if (err->status != HARMONIA_OK)
        snprintf(dist->message, sizeof dist->message, "%s", err->message);
    return err->status;
}

harmonia_status dst_finish_global(const dst_err *err)
{
    if (err->status != HARMONIA_OK)
        snprintf(thread_error, sizeof thread_error, "%s", err->message);
    return err->status;
}

harmonia_status dst_check_usable(harmonia_dist *dist, dst_err *err)
{
    if (dist == NULL)
        return dst_fail(err, HARMONIA_ERR_INVALID, "NULL index");
    if (dist->damaged)
        return dst_fail(err, HARMONIA_ERR_CORRUPT, "%s", dist->damage);
    return HARMONIA_OK;
}

harmonia_dist *dst_new(MPI_Comm comm, const harmonia_dist_config *config)
{
    int ranks;
    MPI_Comm_size(comm, &ranks);
    harmonia_dist *dist = calloc(1, sizeof *dist);
    if (dist == NULL)
        return NULL;
    dist->ctx.comm = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &dist->ctx.rank);
    dist->ctx.ranks = ranks;
    dist->ctx.chunk_bytes = config->exchange_chunk_bytes;
    dist->device = -1;
    dist->build = config->build;
    dist->build.input_sorted = false;
    dist->build.progress = NULL;
    dist->build.progress_arg = NULL;
    dist->key_bits = config->build.key_bits;
    dist->lower = calloc((size_t)ranks, sizeof *dist->lower);
    dist->shards = calloc((size_t)ranks, sizeof *dist->shards);
    dist->key_prefix = calloc((size_t)ranks + 1, sizeof *dist->key_prefix);
    dist->next_nonempty = calloc((size_t)ranks + 1, sizeof *dist->next_nonempty);
    bool planned = dst_plan_init(&dist->plans[0], ranks);
    planned = dst_plan_init(&dist->plans[1], ranks) && planned;
    if (!dist->lower || !dist->shards || !dist->key_prefix || !dist->next_nonempty || !planned) {
        dst_delete(dist);
        return NULL;
    }
    return dist;
}

void dst_attach(harmonia_dist *dist, MPI_Comm comm)
{
    MPI_Comm node;
    MPI_Comm_dup(comm, &dist->ctx.comm);
    MPI_Comm_split_type(dist->ctx.comm, MPI_COMM_TYPE_SHARED, dist->ctx.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &dist->local_rank);
    MPI_Comm_size(node, &dist->local_ranks);
    MPI_Comm_free(&node);
}

void dst_delete(harmonia_dist *dist)
{
    if (dist == NULL)
        return;
    harmonia_free(dist->tree);
    free(dist->lower);
    free(dist->shards);
    free(dist->key_prefix);
    free(dist->next_nonempty);
    dst_plan_free(&dist->plans[0]);
    dst_plan_free(&dist->plans[1]);
    if (dist->ctx.comm != MPI_COMM_NULL)
        MPI_Comm_free(&dist->ctx.comm);
    free(dist);
}

void harmonia_dist_free(harmonia_dist *dist)
{
    dst_delete(dist);
}

/* ---- the shard table ------------------------------------------------------------------------ */

harmonia_status dst_refresh_table(harmonia_dist *dist, dst_err *err)
{
    dst_shard mine = {0, 0, 0, 0};
    harmonia_tree_info info;
    harmonia_status status = harmonia_info(dist->tree, &info);
    if (status != HARMONIA_OK) {
        dst_fail_tree(err, status, dist->tree, "reading the shard's information");
    } else if (info.key_count > 0) {
        mine.keys = info.key_count;
        mine.min_key = info.min_key;
        mine.max_key = info.max_key;
        /* the smallest key's value: a lower bound of 0 on the CPU engine (never a GPU upload) */
        harmonia_query_config qc;
        harmonia_query_config_init(&qc);
        qc.backend = HARMONIA_BACKEND_CPU;
        qc.threads = 1;
        uint64_t query = 0, key = 0, value = 0;
        uint8_t found = 0;
        if (dist->key_bits == 32) {
            uint32_t q32 = 0, k32 = 0, v32 = 0;
            status = harmonia_lower_bound(dist->tree, &qc, &q32, 1, &k32, &v32, &found);
            key = k32;
            value = v32;
        } else {
            status = harmonia_lower_bound(dist->tree, &qc, &query, 1, &key, &value, &found);
        }
        if (status != HARMONIA_OK || !found || key != mine.min_key)
            dst_fail(err, status != HARMONIA_OK ? status : HARMONIA_ERR_CORRUPT,
                     "the shard's smallest key %" PRIu64 " cannot be found in it", mine.min_key);
        mine.min_value = value;
    }
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, dist->shards, (int)sizeof mine, MPI_BYTE,
                  dist->ctx.comm);
    const int P = dist->ctx.ranks;
    dist->key_prefix[0] = 0;
    for (int r = 0; r < P; r++)
        dist->key_prefix[r + 1] = dist->key_prefix[r] + dist->shards[r].keys;
    dist->total_keys = dist->key_prefix[P];
    dist->next_nonempty[P] = P;
    for (int r = P - 1; r >= 0; r--)
        dist->next_nonempty[r] = dist->shards[r].keys > 0 ? r : dist->next_nonempty[r + 1];
    return err->status;
}

/* ---- information ---------------------------------------------------------------------------- */

harmonia_status harmonia_dist_get_info(const harmonia_dist *dist, harmonia_dist_info *info)
{
    if (dist == NULL || info == NULL)
        return HARMONIA_ERR_INVALID;
    memset(info, 0, sizeof *info);
    info->ranks = dist->ctx.ranks;
    info->rank = dist->ctx.rank;
    info->local_rank = dist->local_rank;
    info->local_ranks = dist->local_ranks;
    info->device = dist->device;
    info->key_bits = dist->key_bits;
    info->keys = dist->total_keys;
    info->version = dist->version;
    info->smallest_shard = UINT64_MAX;
    for (int r = 0; r < dist->ctx.ranks; r++) {
        uint64_t n = dist->shards[r].keys;
        if (n < info->smallest_shard)
            info->smallest_shard = n;
        if (n > info->largest_shard)
            info->largest_shard = n;
    }
    if (dist->total_keys > 0) {
        double mean = (double)dist->total_keys / dist->ctx.ranks;
        info->imbalance = (double)info->largest_shard / mean - 1.0;
    }
    return harmonia_info(dist->tree, &info->local);
}

harmonia_status harmonia_dist_shard(const harmonia_dist *dist, int rank,
                                    harmonia_dist_shard_info *shard_out)
{
    if (dist == NULL || shard_out == NULL || rank < 0 || rank >= dist->ctx.ranks)
        return HARMONIA_ERR_INVALID;
    memset(shard_out, 0, sizeof *shard_out);
    const dst_shard *s = &dist->shards[rank];
    shard_out->keys = s->keys;
    shard_out->min_key = s->min_key;
    shard_out->max_key = s->max_key;
    shard_out->lower = dist->lower[rank];
    if (rank + 1 < dist->ctx.ranks) {
        shard_out->empty_range = dist->lower[rank + 1] == dist->lower[rank];
        shard_out->upper = dist->lower[rank + 1] - 1;
    } else {
        shard_out->upper = dst_max_key(dist->key_bits);
    }
    return HARMONIA_OK;
}

harmonia_tree *harmonia_dist_local_tree(harmonia_dist *dist)
{
    return dist != NULL ? dist->tree : NULL;
}

/* ---- integrity ------------------------------------------------------------------------------ */

harmonia_status harmonia_dist_check(harmonia_dist *dist)
{
    dst_err err;
    dst_err_clear(&err);
    if (dst_check_usable(dist, &err) != HARMONIA_OK)
        return err.status; /* every rank passes its index: a NULL one fails where it is */
    const int r = dist->ctx.rank, P = dist->ctx.ranks;
    harmonia_status status = harmonia_check(dist->tree);
    if (status != HARMONIA_OK)
        dst_fail_tree(&err, status, dist->tree, "integrity check of the shard");
    for (int s = 1; s < P && err.status == HARMONIA_OK; s++)
        if (dist->lower[s] < dist->lower[s - 1])
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "splitter %d (%" PRIu64 ") is smaller than splitter %d (%" PRIu64 ")", s,
                     dist->lower[s], s - 1, dist->lower[s - 1]);
    harmonia_tree_info info;
    if (err.status == HARMONIA_OK && (status = harmonia_info(dist->tree, &info)) != HARMONIA_OK)
        dst_fail_tree(&err, status, dist->tree, "reading the shard's information");
    if (err.status == HARMONIA_OK) {
        const dst_shard *mine = &dist->shards[r];
        if (info.key_count != mine->keys)
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "the shard holds %" PRIu64 " keys, the shard table says %" PRIu64,
                     info.key_count, mine->keys);
        else if (info.key_count > 0 &&
                 (info.min_key != mine->min_key || info.max_key != mine->max_key))
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "the shard's keys span [%" PRIu64 ", %" PRIu64 "], the shard table says [%"
                     PRIu64 ", %" PRIu64 "]", info.min_key, info.max_key, mine->min_key,
                     mine->max_key);
        else if (info.key_count > 0 && info.min_key < dist->lower[r])
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "the shard holds key %" PRIu64 ", below its splitter %" PRIu64,
                     info.min_key, dist->lower[r]);
        else if (info.key_count > 0 && r + 1 < P && info.max_key >= dist->lower[r + 1])
            dst_fail(&err, HARMONIA_ERR_CORRUPT,
                     "the shard holds key %" PRIu64 ", at or above the next shard's splitter %"
                     PRIu64, info.max_key, dist->lower[r + 1]);
    }
    /* every rank must hold the same table: compare a checksum of it */
    uint64_t sum = 0x9E3779B97F4A7C15ull;
    for (int s = 0; s < P; s++) {
        const uint64_t words[5] = {dist->lower[s], dist->shards[s].keys, dist->shards[s].min_key,
                                   dist->shards[s].max_key, dist->shards[s].min_value};
        for (int w = 0; w < 5; w++) {
            sum ^= words[w] + 0x9E3779B97F4A7C15ull + (sum << 6) + (sum >> 2);
        }
    }
    uint64_t sums[2] = {sum, ~sum}; /* max of sum and of ~sum: equal everywhere iff min == max */
    dst_agree_max(&dist->ctx, &err, sums, 2);
    if (err.status == HARMONIA_OK && (sums[0] != sum || ~sums[1] != sum)) {
        err.status = HARMONIA_ERR_CORRUPT;
        snprintf(err.message, sizeof err.message, "the ranks hold different shard tables");
    }
    return dst_finish(dist, &err);
}
