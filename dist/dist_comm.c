/* dist_comm.c — the collective plumbing of dist/: errors and their agreement over the ranks, the
 * exchange plans and MPI_Alltoallv in rounds that respect MPI's int counts, and packing items by
 * shard. It knows nothing of trees, queries or files. */
#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist_internal.h"

/* ---- errors --------------------------------------------------------------------------------- */

void dst_err_clear(dst_err *err)
{
    err->status = HARMONIA_OK;
    err->rank = -1;
    err->message[0] = '\0';
}

harmonia_status dst_fail(dst_err *err, harmonia_status status, const char *fmt, ...)
{
    if (err->status != HARMONIA_OK || status == HARMONIA_OK)
        return err->status;
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

harmonia_status dst_fail_tree(dst_err *err, harmonia_status status, const harmonia_tree *tree,
                              const char *what)
{
    const char *message = harmonia_last_error(tree);
    if (message[0] == '\0')
        message = harmonia_strerror(status);
    return dst_fail(err, status, "%s: %s", what, message);
}

/* The failing rank's status and message travel in one broadcast. */
typedef struct agreed_failure {
    int32_t status;
    char message[DST_MESSAGE_BYTES];
} agreed_failure;

harmonia_status dst_agree_max(const dst_ctx *ctx, dst_err *err, uint64_t *values, int n)
{
    /* word 0: ranks - (lowest failing rank), so that the maximum names the lowest one; 0 = none */
    uint64_t words[32];
    if (n > 31)
        n = 31;
    words[0] = err->status != HARMONIA_OK ? (uint64_t)(ctx->ranks - ctx->rank) : 0;
    for (int i = 0; i < n; i++)
        words[1 + i] = values[i];
    MPI_Allreduce(MPI_IN_PLACE, words, 1 + n, MPI_UINT64_T, MPI_MAX, ctx->comm);
    for (int i = 0; i < n; i++)
        values[i] = words[1 + i];
    if (words[0] == 0) {
        dst_err_clear(err);
        return HARMONIA_OK;
    }
    int root = ctx->ranks - (int)words[0];
    agreed_failure failure;
    memset(&failure, 0, sizeof failure);
    if (ctx->rank == root) {
        failure.status = (int32_t)err->status;
        snprintf(failure.message, sizeof failure.message, "%s", err->message);
    }
    MPI_Bcast(&failure, (int)sizeof failure, MPI_BYTE, root, ctx->comm);
    err->status = (harmonia_status)failure.status;
    err->rank = root;
    char *named = err->message;
    int prefix = snprintf(named, sizeof err->message, "rank %d: ", root);
    snprintf(named + prefix, sizeof err->message - (size_t)prefix, "%s", failure.message);
    return err->status;
}

harmonia_status dst_agree(const dst_ctx *ctx, dst_err *err)
{
    return dst_agree_max(ctx, err, NULL, 0);
}

/* ---- test hooks ----------------------------------------------------------------------------- */
#ifdef HARMONIA_DIST_TEST_HOOKS
static int hook_rank[DST_HOOK_COUNT] = {-1, -1, -1, -1};

void dst_test_inject(dst_hook hook, int rank)
{
    hook_rank[hook] = rank;
}

bool dst_injected(dst_hook hook, int rank)
{
    if (hook_rank[hook] != rank)
        return false;
    hook_rank[hook] = -1; /* once */
    return true;
}
#endif

/* ---- small things --------------------------------------------------------------------------- */

void *dst_alloc(uint64_t bytes)
{
    if (bytes > SIZE_MAX)
        return NULL;
    return malloc(bytes > 0 ? (size_t)bytes : 1);
}

double dst_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- packing by shard ----------------------------------------------------------------------- */

#define DST_PARALLEL_MIN 65536

bool dst_partition(const uint32_t *dest, uint64_t count, int ranks, uint64_t *counts,
                   uint64_t *pos)
{
    const int threads = count >= DST_PARALLEL_MIN ? omp_get_max_threads() : 1;
    const size_t stride = (size_t)ranks + 1;
    uint64_t *hist = calloc((size_t)threads * stride, sizeof *hist);
    if (hist == NULL)
        return false;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const uint64_t begin = count * (uint64_t)t / (uint64_t)nt;
        const uint64_t end = count * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t *h = hist + (size_t)t * stride;
        for (uint64_t i = begin; i < end; i++)
            h[dest[i]]++;
#pragma omp barrier
#pragma omp single
        {
            /* start of (shard d, thread t) = items of shards < d + items of shard d in threads < t */
            uint64_t running = 0;
            for (int d = 0; d < ranks; d++) {
                counts[d] = 0;
                for (int u = 0; u < nt; u++) {
                    uint64_t n = hist[(size_t)u * stride + (size_t)d];
                    hist[(size_t)u * stride + (size_t)d] = running;
                    running += n;
                    counts[d] += n;
                }
            }
        }
        for (uint64_t i = begin; i < end; i++) {
            uint32_t d = dest[i];
            pos[i] = d < (uint32_t)ranks ? h[d]++ : UINT64_MAX;
        }
    }
    free(hist);
    return true;
}

void dst_pack(const void *items, const uint64_t *pos, uint64_t count, size_t width, void *packed)
{
    const unsigned char *in = items;
    unsigned char *out = packed;
    if (width == 8) {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                ((uint64_t *)packed)[pos[i]] = ((const uint64_t *)items)[i];
    } else if (width == 4) {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                ((uint32_t *)packed)[pos[i]] = ((const uint32_t *)items)[i];
    } else {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                memcpy(out + pos[i] * width, in + i * width, width);
    }
}

void dst_unpack(const void *packed, const uint64_t *pos, uint64_t count, size_t width, void *items)
{
    const unsigned char *in = packed;
    unsigned char *out = items;
    if (width == 8) {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                ((uint64_t *)items)[i] = ((const uint64_t *)packed)[pos[i]];
    } else if (width == 4) {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                ((uint32_t *)items)[i] = ((const uint32_t *)packed)[pos[i]];
    } else {
#pragma omp parallel for schedule(static) if (count >= DST_PARALLEL_MIN)
        for (uint64_t i = 0; i < count; i++)
            if (pos[i] != UINT64_MAX)
                memcpy(out + i * width, in + pos[i] * width, width);
    }
}

/* ---- exchange plans ------------------------------------------------------------------------- */

bool dst_plan_init(dst_plan *plan, int ranks)
{
    memset(plan, 0, sizeof *plan);
    plan->send_counts = calloc((size_t)ranks, sizeof(uint64_t));
    plan->recv_counts = calloc((size_t)ranks, sizeof(uint64_t));
    plan->send_offsets = calloc((size_t)ranks + 1, sizeof(uint64_t));
    plan->recv_offsets = calloc((size_t)ranks + 1, sizeof(uint64_t));
    plan->mpi_counts = calloc(4 * (size_t)ranks, sizeof(int));
    if (!plan->send_counts || !plan->recv_counts || !plan->send_offsets || !plan->recv_offsets ||
        !plan->mpi_counts) {
        dst_plan_free(plan);
        return false;
    }
    return true;
}

void dst_plan_free(dst_plan *plan)
{
    free(plan->send_counts);
    free(plan->recv_counts);
    free(plan->send_offsets);
    free(plan->recv_offsets);
    free(plan->mpi_counts);
    memset(plan, 0, sizeof *plan);
}

void dst_plan_reset(dst_plan *plan, int ranks)
{
    memset(plan->send_counts, 0, (size_t)ranks * sizeof(uint64_t));
    memset(plan->recv_counts, 0, (size_t)ranks * sizeof(uint64_t));
    memset(plan->send_offsets, 0, ((size_t)ranks + 1) * sizeof(uint64_t));
    memset(plan->recv_offsets, 0, ((size_t)ranks + 1) * sizeof(uint64_t));
    plan->send_total = plan->recv_total = plan->max_total = plan->max_count = 0;
}

void dst_plan_offsets(const dst_ctx *ctx, dst_plan *plan)
{
    plan->send_offsets[0] = plan->recv_offsets[0] = 0;
    for (int p = 0; p < ctx->ranks; p++) {
        plan->send_offsets[p + 1] = plan->send_offsets[p] + plan->send_counts[p];
        plan->recv_offsets[p + 1] = plan->recv_offsets[p] + plan->recv_counts[p];
    }
    plan->send_total = plan->send_offsets[ctx->ranks];
    plan->recv_total = plan->recv_offsets[ctx->ranks];
}

void dst_plan_counts(const dst_ctx *ctx, dst_plan *plan)
{
    MPI_Alltoall(plan->send_counts, 1, MPI_UINT64_T, plan->recv_counts, 1, MPI_UINT64_T,
                 ctx->comm);
    dst_plan_offsets(ctx, plan);
}

harmonia_status dst_plan_agree(const dst_ctx *ctx, dst_plan *plan, dst_err *err)
{
    uint64_t total = plan->send_total > plan->recv_total ? plan->send_total : plan->recv_total;
    uint64_t largest = 0;
    for (int p = 0; p < ctx->ranks; p++) {
        if (p == ctx->rank)
            continue; /* the rank's own block is copied, not sent */
        if (plan->send_counts[p] > largest)
            largest = plan->send_counts[p];
        if (plan->recv_counts[p] > largest)
            largest = plan->recv_counts[p];
    }
    uint64_t values[2] = {total, largest};
    harmonia_status status = dst_agree_max(ctx, err, values, 2);
    plan->max_total = values[0];
    plan->max_count = values[1];
    return status;
}

/* Above this many bytes to one peer an exchange goes in rounds (very large messages are where MPI
 * implementations have had their bugs, and int counts end at 2^31 - 1). */
#define DST_MESSAGE_LIMIT ((uint64_t)1 << 30)
/* The rounds' staging: at most this many bytes per rank and round, each way. */
#define DST_DEFAULT_CHUNK_BYTES ((uint64_t)1 << 28)

/* One MPI_Alltoallv of elements of `type` (contiguous bytes of one element) for counts and
 * offsets that fit an int; the rank's block to itself is left out (copied by the caller). */
static void alltoallv_elements(const dst_ctx *ctx, const void *send, const uint64_t *send_counts,
                               const uint64_t *send_offsets, void *recv,
                               const uint64_t *recv_counts, const uint64_t *recv_offsets,
                               MPI_Datatype type, int *scratch)
{
    const int P = ctx->ranks;
    int *sc = scratch, *sd = scratch + P, *rc = scratch + 2 * P, *rd = scratch + 3 * P;
    for (int p = 0; p < P; p++) {
        sc[p] = p == ctx->rank ? 0 : (int)send_counts[p];
        sd[p] = (int)send_offsets[p];
        rc[p] = p == ctx->rank ? 0 : (int)recv_counts[p];
        rd[p] = (int)recv_offsets[p];
    }
    MPI_Alltoallv(send, sc, sd, type, recv, rc, rd, type, ctx->comm);
}

/* memcpy, OpenMP-parallel for large copies. */
static void copy_parallel(void *dst, const void *src, uint64_t bytes)
{
    const uint64_t chunk = (uint64_t)1 << 22;
    if (bytes < 4 * chunk) {
        memcpy(dst, src, (size_t)bytes);
        return;
    }
    const int64_t chunks = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < chunks; i++) {
        uint64_t at = (uint64_t)i * chunk;
        memcpy((char *)dst + at, (const char *)src + at, (size_t)(bytes - at < chunk ? bytes - at : chunk));
    }
}

harmonia_status dst_exchange(const dst_ctx *ctx, const dst_plan *plan, bool backward,
                             const void *send, void *recv, size_t width, dst_traffic *traffic,
                             dst_err *err)
{
    const int P = ctx->ranks;
    const uint64_t *sc = backward ? plan->recv_counts : plan->send_counts;
    const uint64_t *so = backward ? plan->recv_offsets : plan->send_offsets;
    const uint64_t *rc = backward ? plan->send_counts : plan->recv_counts;
    const uint64_t *ro = backward ? plan->send_offsets : plan->recv_offsets;
    if (traffic != NULL) {
        for (int p = 0; p < P; p++) {
            if (p == ctx->rank)
                continue;
            traffic->bytes_sent += sc[p] * width;
            traffic->bytes_received += rc[p] * width;
        }
    }
    if (plan->max_total == 0)
        return HARMONIA_OK; /* nothing moves anywhere: every rank knows it */
    /* the rank's own block: a copy, never through MPI */
    if (sc[ctx->rank] > 0)
        copy_parallel((char *)recv + ro[ctx->rank] * width, (const char *)send + so[ctx->rank] * width,
                      sc[ctx->rank] * width);
    if (plan->max_count == 0)
        return HARMONIA_OK; /* no rank sends another anything */
    MPI_Datatype type;
    MPI_Type_contiguous((int)width, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    harmonia_status status = HARMONIA_OK;
    /* every rank takes the same branch: max_total and max_count are agreed. One call when every
     * count and offset fits an int and no message exceeds the chunk (very large messages are
     * where MPI implementations have had their bugs), else rounds. */
    if (ctx->chunk_bytes == 0 && plan->max_total <= INT_MAX &&
        plan->max_count * width <= DST_MESSAGE_LIMIT) {
        alltoallv_elements(ctx, send, sc, so, recv, rc, ro, type, plan->mpi_counts);
        MPI_Type_free(&type);
        return HARMONIA_OK;
    }
    /* rounds: per round at most per_peer elements to and from each peer, so that each round's
     * counts and offsets (in elements, within staging buffers of P * per_peer elements) fit an
     * int and each staging buffer holds at most chunk bytes */
    const uint64_t chunk = ctx->chunk_bytes != 0 ? ctx->chunk_bytes : DST_DEFAULT_CHUNK_BYTES;
    uint64_t per_peer = chunk / ((uint64_t)P * width);
    if (per_peer == 0)
        per_peer = 1;
    if ((uint64_t)P * per_peer > INT_MAX)
        per_peer = INT_MAX / (uint64_t)P;
    const uint64_t stage_bytes = (uint64_t)P * per_peer * width;
    unsigned char *send_stage = dst_alloc(stage_bytes), *recv_stage = dst_alloc(stage_bytes);
    uint64_t *round_counts = malloc(4 * ((size_t)P + 1) * sizeof(uint64_t));
    dst_err local;
    dst_err_clear(&local);
    if (send_stage == NULL || recv_stage == NULL || round_counts == NULL)
        dst_fail(&local, HARMONIA_ERR_NO_MEMORY,
                 "out of memory for the staging buffers of an exchange (2 x %llu bytes)",
                 (unsigned long long)stage_bytes);
    status = dst_agree(ctx, &local);
    if (status != HARMONIA_OK) {
        dst_fail(err, status, "%s", local.message);
    } else {
        uint64_t *r_sc = round_counts, *r_so = r_sc + (P + 1), *r_rc = r_so + (P + 1),
                 *r_ro = r_rc + (P + 1);
        const unsigned char *in = send;
        unsigned char *out = recv;
        const uint64_t rounds = (plan->max_count + per_peer - 1) / per_peer;
        for (uint64_t round = 0; round < rounds; round++) {
            const uint64_t first = round * per_peer;
            r_so[0] = r_ro[0] = 0;
            for (int p = 0; p < P; p++) {
                r_sc[p] = p == ctx->rank ? 0 : sc[p] > first ? (sc[p] - first < per_peer ? sc[p] - first : per_peer) : 0;
                r_rc[p] = p == ctx->rank ? 0 : rc[p] > first ? (rc[p] - first < per_peer ? rc[p] - first : per_peer) : 0;
                r_so[p + 1] = r_so[p] + r_sc[p];
                r_ro[p + 1] = r_ro[p] + r_rc[p];
            }
            for (int p = 0; p < P; p++)
                if (r_sc[p] > 0)
                    memcpy(send_stage + r_so[p] * width, in + (so[p] + first) * width,
                           r_sc[p] * width);
            alltoallv_elements(ctx, send_stage, r_sc, r_so, recv_stage, r_rc, r_ro, type,
                               plan->mpi_counts);
            for (int p = 0; p < P; p++)
                if (r_rc[p] > 0)
                    memcpy(out + (ro[p] + first) * width, recv_stage + r_ro[p] * width,
                           r_rc[p] * width);
        }
    }
    free(round_counts);
    free(send_stage);
    free(recv_stage);
    MPI_Type_free(&type);
    return status;
}
