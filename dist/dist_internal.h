/* dist_internal.h — what the files of dist/ share: the index object with its shard table and their
 * invariants, collective agreement on a status, the exchange plans over MPI_Alltoallv, routing and
 * packing by shard. Internal prefix dst_. dist/ uses include/harmonia.h only (never a component's
 * header): a shard is an ordinary harmonia_tree. */
#ifndef HARMONIA_DIST_INTERNAL_H
#define HARMONIA_DIST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harmonia_dist.h"

#define DST_MESSAGE_BYTES 768

/* ---- errors --------------------------------------------------------------------------------
 * A step's outcome on one rank: the first failure recorded wins (later ones are dropped), so the
 * message names the cause, not a consequence. dst_agree turns the ranks' outcomes into one. */
typedef struct dst_err {
    harmonia_status status;
    int rank; /* after dst_agree: the rank whose failure it is (-1 when none) */
    char message[DST_MESSAGE_BYTES];
} dst_err;

void dst_err_clear(dst_err *err);
/* Records a failure unless one is recorded already; returns the status now recorded. */
harmonia_status dst_fail(dst_err *err, harmonia_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records status with the message of a failed single-tree call (harmonia_last_error(tree)). */
harmonia_status dst_fail_tree(dst_err *err, harmonia_status status, const harmonia_tree *tree,
                              const char *what);

/* The communicator of an index (or of a call that has none yet) and what the exchanges need. */
typedef struct dst_ctx {
    MPI_Comm comm;
    int rank, ranks;
    uint64_t chunk_bytes; /* harmonia_dist_config.exchange_chunk_bytes (0 = automatic) */
} dst_ctx;

/* Collective. Every rank passes its err; on return err holds, on every rank, the status of the
 * lowest rank that failed and its message prefixed with "rank R: " (or OK and ""), and that
 * status is returned. values (n of them, may be 0) are replaced by their maximum over the ranks,
 * in the same reduction. */
harmonia_status dst_agree_max(const dst_ctx *ctx, dst_err *err, uint64_t *values, int n);
harmonia_status dst_agree(const dst_ctx *ctx, dst_err *err);

/* ---- test hooks (built into the test library only) ------------------------------------------ */
typedef enum dst_hook {
    DST_HOOK_RECV_ALLOC = 0, /* the receive buffers of an exchange plan: NO_MEMORY */
    DST_HOOK_COMMIT,         /* harmonia_update of an update batch: NO_MEMORY, tree untouched */
    DST_HOOK_UNDO,           /* the inverse batch after a failed commit elsewhere: NO_MEMORY */
    DST_HOOK_MANIFEST,       /* writing the manifest (rank 0): IO */
    DST_HOOK_COUNT
} dst_hook;
#ifdef HARMONIA_DIST_TEST_HOOKS
/* Makes hook fail on rank (the rank in the index's communicator), once; rank -1 clears it. */
void dst_test_inject(dst_hook hook, int rank);
bool dst_injected(dst_hook hook, int rank);
#else
static inline bool dst_injected(dst_hook hook, int rank)
{
    (void)hook;
    (void)rank;
    return false;
}
#endif

/* ---- exchange plans ------------------------------------------------------------------------
 * A plan is the counts of one all-to-all pattern (elements per peer, both ways) agreed on by every
 * rank; several exchanges of different element widths may follow it (forward: send -> recv
 * counts; backward, for results: recv -> send counts). */
typedef struct dst_plan {
    uint64_t *send_counts, *recv_counts;   /* ranks entries each */
    uint64_t *send_offsets, *recv_offsets; /* ranks + 1 entries: exclusive prefix sums */
    uint64_t send_total, recv_total;
    uint64_t max_total; /* over every rank: the largest send or receive total (elements) */
    uint64_t max_count; /* over every rank: the largest count to or from another rank (a rank's
                           block to itself is copied, never sent) */
    int *mpi_counts;    /* 4 * ranks: the int counts and offsets of one MPI_Alltoallv */
} dst_plan;

/* ---- the index ------------------------------------------------------------------------------ */

/* One row of the shard table (the same on every rank). */
typedef struct dst_shard {
    uint64_t keys;
    uint64_t min_key, max_key; /* valid when keys > 0 */
    uint64_t min_value;        /* the value of min_key: lower bounds past a shard's end get it */
} dst_shard;

/* The index, as each rank holds it.
 * Invariants (checked by harmonia_dist_check):
 *   lower[0] = 0 and lower[0] <= lower[1] <= ... <= lower[ranks-1] (the splitters);
 *   the tree of rank r holds exactly the keys k with lower[r] <= k and (r == ranks-1 or
 *     k < lower[r+1]); so equal neighbours make an empty shard;
 *   shards[r] describes the tree of rank r (count, smallest and largest key, the smallest key's
 *     value) and is the same on every rank, as are lower[], key_prefix[] and next_nonempty[];
 *   key_prefix[r] = keys of shards 0 .. r-1 (ranks + 1 entries); next_nonempty[r] = the smallest
 *     s >= r with shards[s].keys > 0, or ranks (ranks + 1 entries);
 *   damaged: a failed rollback left shards out of step; every call then fails (CORRUPT). */
struct harmonia_dist {
    dst_ctx ctx;              /* ctx.comm is a duplicate of the caller's, freed with the index */
    int local_rank, local_ranks;
    int device;               /* the GPU made current, -1 none */
    uint32_t key_bits;
    harmonia_tree *tree;      /* this rank's shard; never NULL (an empty shard is an empty tree) */
    uint64_t *lower;          /* ranks entries */
    dst_shard *shards;        /* ranks entries */
    uint64_t *key_prefix;     /* ranks + 1 entries */
    int *next_nonempty;       /* ranks + 1 entries */
    uint64_t total_keys;
    harmonia_build_config build; /* how local trees are (re)built: key_bits, F, L, fill, threads */
    dst_plan plans[2];        /* the exchange plans of one call (allocated once: a call's counts
                                 never wait on an allocation that could fail on one rank only) */
    uint64_t version;         /* update batches applied */
    bool damaged;
    char damage[DST_MESSAGE_BYTES];
    char message[DST_MESSAGE_BYTES]; /* harmonia_dist_last_error */
};

/* Allocates an index object for the ranks of comm (its tables and exchange plans), with no tree
 * and no communicator yet. Not collective; NULL on no memory (callers agree on it). */
harmonia_dist *dst_new(MPI_Comm comm, const harmonia_dist_config *config);
/* Collective: gives the index a duplicate of comm and finds its node-local rank. */
void dst_attach(harmonia_dist *dist, MPI_Comm comm);
/* Frees what dst_new and dst_attach made (collective once attached: frees the communicator). */
void dst_delete(harmonia_dist *dist);

/* Collective: refreshes shards[], key_prefix[], next_nonempty[], total_keys from every rank's
 * tree (an MPI_Allgather). err gets a failure of this rank's reading of its tree. */
harmonia_status dst_refresh_table(harmonia_dist *dist, dst_err *err);

/* Returns status after storing err's message as the index's last error. */
harmonia_status dst_finish(harmonia_dist *dist, const dst_err *err);
/* The thread's last error of calls without an index (harmonia_dist_build / _load). */
harmonia_status dst_finish_global(const dst_err *err);

/* Collective guard at the start of every call on an index: INVALID for NULL (on this rank; every
 * rank must pass its index), CORRUPT for a damaged index. */
harmonia_status dst_check_usable(harmonia_dist *dist, dst_err *err);

/* Makes the GPU for this rank current (dist_device.c). requested as harmonia_dist_config.device.
 * *device_out = the GPU made current, or -1 (no GPU, a build without CUDA, -2). */
harmonia_status dst_choose_device(int requested, int local_rank, int *device_out, dst_err *err);

/* ---- keys of either width ------------------------------------------------------------------ */
static inline uint64_t dst_get(const void *a, uint32_t key_bits, uint64_t i)
{
    return key_bits == 32 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

static inline void dst_set(void *a, uint32_t key_bits, uint64_t i, uint64_t v)
{
    if (key_bits == 32)
        ((uint32_t *)a)[i] = (uint32_t)v;
    else
        ((uint64_t *)a)[i] = v;
}

static inline uint64_t dst_max_key(uint32_t key_bits)
{
    return key_bits == 32 ? UINT32_MAX : UINT64_MAX;
}

/* malloc that never returns NULL for 0 bytes (so NULL means out of memory). */
void *dst_alloc(uint64_t bytes);

/* The shard of key: the number of splitters lower[1 .. ranks-1] that are <= key. */
static inline int dst_route(const harmonia_dist *dist, uint64_t key)
{
    int lo = 1, hi = dist->ctx.ranks; /* answer in [lo - 1, hi - 1] */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (dist->lower[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* ---- packing by shard ----------------------------------------------------------------------
 * dest[i] in [0, ranks] for count items; ranks means "sent nowhere". dst_partition fills
 * counts[0 .. ranks-1] (items per shard) and pos[i] = the position of item i in the packed
 * order: the items of shard 0 first, then of shard 1, ..., each shard's in item order (stable);
 * items sent nowhere get UINT64_MAX. OpenMP-parallel. Returns false on no memory. */
bool dst_partition(const uint32_t *dest, uint64_t count, int ranks, uint64_t *counts,
                   uint64_t *pos);
/* packed[pos[i]] = items[i] for every item with pos[i] != UINT64_MAX (elements of width bytes). */
void dst_pack(const void *items, const uint64_t *pos, uint64_t count, size_t width, void *packed);
/* items[i] = packed[pos[i]] for every item with pos[i] != UINT64_MAX. */
void dst_unpack(const void *packed, const uint64_t *pos, uint64_t count, size_t width, void *items);

/* Allocates a plan's arrays (zero counts). false on no memory (this rank only). */
bool dst_plan_init(dst_plan *plan, int ranks);
void dst_plan_free(dst_plan *plan);
/* Zeroes the counts of a plan for a new exchange pattern. */
void dst_plan_reset(dst_plan *plan, int ranks);
/* Collective (MPI_Alltoall): recv_counts from every rank's send_counts; fills the offsets and
 * totals. Does not agree on anything. */
void dst_plan_counts(const dst_ctx *ctx, dst_plan *plan);
/* Fills offsets and totals from send_counts and recv_counts set by the caller. */
void dst_plan_offsets(const dst_ctx *ctx, dst_plan *plan);
/* Collective: agrees on err (the caller's outcome so far, e.g. the allocation of the receive
 * buffers) and on max_total / max_count. Returns the agreed status. */
harmonia_status dst_plan_agree(const dst_ctx *ctx, dst_plan *plan, dst_err *err);

typedef struct dst_traffic {
    uint64_t bytes_sent, bytes_received; /* to / from other ranks */
} dst_traffic;

/* Collective: exchanges elements of width bytes along an agreed plan, forward (send ->
 * recv) or backward (recv -> send). send holds the elements for peer p at its plan offset, recv
 * gets those from peer p at its offset. One MPI_Alltoallv (of a contiguous type of width bytes, so
 * counts are in elements) when every count and offset fits an int, no message to another rank
 * exceeds 1 GiB and ctx->chunk_bytes is 0: no other collective. Else rounds of at most chunk_bytes
 * (256 MiB by default) per rank through staging buffers, whose allocation is agreed on. A rank's
 * block to itself is copied directly. Adds to traffic (may be NULL). */
harmonia_status dst_exchange(const dst_ctx *ctx, const dst_plan *plan, bool backward,
                             const void *send, void *recv, size_t width, dst_traffic *traffic,
                             dst_err *err);

double dst_now(void);

#endif /* HARMONIA_DIST_INTERNAL_H */
