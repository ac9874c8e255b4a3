/* gpu_internal.h — the device copy of a tree and its pipeline lanes, shared by gpu_tree.cu (life
 * cycle, memory, ordering against queries, the device scope) and gpu_query.cu (the query
 * pipelines). CUDA-only, internal.
 *
 * ORDERING WITHOUT GLOBAL STATE. Everything here belongs to one tree and is guarded by that tree's
 * mutex (tree->gpu_lock); no lock, stream or symbol is shared between trees. A device copy owns a
 * stream of its own (`stream`), on which its uploads, syncs, bucket tables and frees are queued:
 *   - every asynchronous device-array query call records `query_done` on the caller's stream when
 *     its work is queued and makes `stream` wait for it, so whatever is queued on `stream` later
 *     (an incremental sync overwriting leaves, a table rebuilt in place, memory freed) runs after
 *     the queries already queued on any stream; a synchronous one, which waits for its stream
 *     before it returns, leaves its stream in a slot of the tree's calls in flight instead, and
 *     whoever queues such work on `stream` first makes that ordering for the calls still in flight
 *     (hm_gpu_order_after_calls: the cost moves from every small call to the rare writer);
 *   - whatever a query needs from `stream` (a new bucket table, memory just allocated in stream
 *     order) is announced by `ready`, recorded on `stream`: a query call makes its stream wait for
 *     it until it has been seen complete once (ready_done).
 * Host-array calls hold the mutex for their whole run (they share the lanes' staging buffers) and
 * return with their work finished. Nothing here calls cudaDeviceSynchronize. */
#ifndef HARMONIA_GPU_INTERNAL_H
#define HARMONIA_GPU_INTERNAL_H

#include <cuda_runtime.h>

extern "C" {
#include "harmonia/gpu_engine.h"
#include "harmonia/gpu_policy.h"
#include "harmonia/tree_internal.h"
#include "ntg/ntg.h"
#include "psa/psa_gpu.h"
}

/* Device buffers of a lane, each window * 8 bytes (the widest element). */
#define HM_LANE_IN 2   /* query keys, or lo and hi */
#define HM_LANE_OUT 4  /* values / keys / found / positions or counts */

/* A lane: a stream and the buffers of one window, so that one window's copies, partition and search
 * overlap another's. */
typedef struct hm_lane {
    cudaStream_t stream;
    cudaEvent_t done;          /* recorded after the lane's last window */
    bool pending;              /* a host-mode window awaits its copy-out */
    uint64_t pending_start, pending_count;
    void *d_in[HM_LANE_IN];    /* host mode: the device side of the staging, window * 8 bytes each */
    void *d_out[HM_LANE_OUT];
    void *h_in[HM_LANE_IN];    /* pinned staging (host mode only) */
    void *h_out[HM_LANE_OUT];
    void *psa_scratch;         /* PSA: one block of psa_scratch_bytes (the workspace of */
    size_t psa_scratch_bytes;  /* psa_partition and the results in slot order; psa_scratch_carve) */
} hm_lane;

/* The pinned staging of uploads (gpu_upload.cu), allocated on the first large upload from pageable
 * memory and kept with the tree across re-uploads (upload_locked carries it to the new copy):
 * buffer b may be refilled once `reusable[b]` (recorded after its DMA) has completed. */
typedef struct hm_upload_staging {
    void *buffer[HM_UPLOAD_BUFFERS];
    cudaEvent_t reusable[HM_UPLOAD_BUFFERS];
    bool recorded[HM_UPLOAD_BUFFERS];
    bool failed; /* the buffers could not be had: pageable copies from then on */
} hm_upload_staging;

/* A bucket table of the staged search (ntg_build_bucket_table of `plan`), kept for the plan's
 * calls: the tree's plan and its unordered calls' (which differ on large 64-bit trees) each keep
 * theirs, so that calls of both orders do not rebuild them in turn. */
#define HM_BUCKET_TABLES 2
typedef struct hm_bucket_table {
    uint32_t *d;
    uint64_t bytes;
    psa_plan plan;
    bool valid;                /* built for this version: its work queued on the copy's stream */
} hm_bucket_table;

typedef struct hm_gpu {
    struct harmonia_tree *owner; /* the tree that adopted the copy (hm_gpu_adopt_copy), else NULL */
    int device;                /* the device of the copy */
    bool stream_ordered;       /* default allocator: cudaMallocAsync / cudaFreeAsync on `stream` */
    harmonia_allocator allocator; /* the caller's functions (has_allocator), else unused */
    bool has_allocator;
    uint64_t l2_bytes;         /* of the device */
    cudaStream_t stream;       /* the copy's own stream (see the top of this file) */
    cudaEvent_t query_done;    /* recorded on a caller's stream after each device-array call */
    cudaEvent_t ready;         /* recorded on `stream` after work queries must wait for */
    bool ready_done;           /* the last `ready` was seen complete: no need to wait for it */
    ntg_view view;             /* pointers, sizes and closed forms: what every launch passes */
    ntg_top_cut cut;           /* the top cut, for the kernels that read it (ntg.h) */
    void *d_keys, *d_values;
    uint32_t *d_first_child;
    uint64_t *d_leaf_rank;
    uint64_t key_bytes, value_bytes, first_child_bytes, rank_bytes;
    uint64_t tree_bytes;       /* the device copy */
    uint64_t version;          /* the tree version it holds */
    psa_plan plan;             /* PSA by partition: the tree's default plan (psa_make_plan) */
    psa_plan plan_unordered;   /* the unordered device-array lookups' (psa_unordered_plan): plan, or one
                                  bit fewer on large 64-bit trees */
    uint64_t min_value;        /* the value of the smallest key (lower bounds below the span, and
                                  queries equal to it: psa_known_answers) */
    uint64_t max_value;        /* the value of the largest key (queries equal to it) */
    hm_bucket_table tables[HM_BUCKET_TABLES]; /* the staged search's bucket tables of the plans in use
                                  (the tree's two, or a config's psa_bits); stale after any change */
    uint32_t table_next;       /* the table a new plan takes when none is free (the one built longest ago) */
    ntg_start_entry *d_start;  /* the coarse start table of this version (ntg.h), once built: view.start */
    uint64_t start_bytes;
    ntg_start_entry *d_start_fine; /* the fine one (ntg_policy.h), once built: start_fine */
    uint64_t start_fine_bytes;
    const ntg_start_entry *start_fine; /* NULL: none this version (a tree too small for two, no memory) */
    psa_plan start_fine_plan;
    bool start_done;           /* built for this version, or left out (too small a tree, no memory) */
    /* pipeline resources, allocated on first use and kept */
    uint32_t window;           /* queries per window the lanes are sized for; 0 = none yet */
    bool lanes_staging;        /* the lanes have host-mode buffers */
    bool lanes_psa;            /* the lanes have PSA buffers */
    hm_lane lanes[HM_LANES];
    uint64_t lane_bytes;       /* device bytes of the lanes */
    uint64_t pinned_bytes;     /* pinned host bytes of the lanes */
    hm_upload_staging upload;  /* pinned staging of uploads (gpu_upload.cu) */
    void *scan_scratch;        /* range offsets on device arrays without a workspace: the counts */
    size_t scan_scratch_bytes; /* and CUB's scan scratch (hm_scan_carve) */
    uint64_t scan_capacity;    /* ranges it holds */
    cudaEvent_t scan_done;     /* recorded after each use of the scan scratch: the next user, on any
                                  stream, waits for it */
    bool scan_used;
    cudaEvent_t fork;          /* the caller's stream, recorded for the lanes to wait on */
    cudaStream_t update_stream; /* where an update makes the next version's arrays while queries run
                                  on these (hm_gpu_sync; used by the updater alone) */
    cudaEvent_t retired;       /* recorded on `stream` after the queries of a replaced version */
    bool signals;              /* the device waits by spinning (its schedule flags): synchronous
                                  one-launch calls may wait for a completion signal (gpu_tree.cu) */
    unsigned int *d_blocks_done; /* the signals' block counters, one a call slot (0 between launches),
                                  made by the first signalled call */
} hm_gpu;

/* The device scope of an entry point: the tree's device made current, the caller's given back. */
typedef struct hm_device_scope {
    int saved;
    bool switched;
} hm_device_scope;
cudaError_t hm_device_enter(hm_device_scope *scope, int device);
void hm_device_leave(const hm_device_scope *scope);

/* Queues the copy of `bytes` host bytes at src to dst (on the copy's device) on `stream`: directly
 * when src is pinned or the array is small, else through the copy's staging (filled by `threads`
 * OpenMP threads, overlapped with the DMA). Returns with the last chunk queued (the caller
 * synchronises the stream before src changes); a staging buffer is refilled only after its earlier
 * DMA completed, on whatever stream that ran. One user at a time: the tree's lock holder, or the
 * updater (uploads do not run during an update). Without pinned memory (the allocator fails) it
 * falls back to a pageable copy: slower, the same bytes. */
cudaError_t hm_upload(hm_gpu *g, void *dst, const void *src, size_t bytes, cudaStream_t stream, int threads);

/* Where an array lives, for the calls that take host or device arrays (gpu_upload.cu): the one
 * pointer classification of the engine (one driver or runtime query). device_out: the device
 * DEVICE or MANAGED memory was allocated on, else -1.
 * A NULL pointer, or one the driver does not know, is pageable host memory. */
typedef enum hm_pointer_kind {
    HM_POINTER_HOST,        /* pageable host memory */
    HM_POINTER_PINNED_HOST, /* page-locked or registered host memory */
    HM_POINTER_DEVICE,      /* device memory of *device_out */
    HM_POINTER_MANAGED      /* managed memory (usable from every device; allocated on *device_out) */
} hm_pointer_kind;
hm_pointer_kind hm_pointer_where(const void *p, int *device_out);

/* Whether p is pinned (page-locked or registered) host memory: such arrays are copied directly,
 * without staging (the uploads, the query pipelines and the GPU build ask it). */
bool hm_is_pinned_host(const void *p);

/* Whether the pinned staging exists or could be made now (false: pageable copies). */
bool hm_upload_staging_ready(hm_gpu *g);

/* The dirty leaves (ascending leaf indices of t) of an in-place batch, keys and values, to device
 * arrays of t's shape on `stream` (gpu_scatter.cu): gathered into the pinned staging with their
 * indices, one DMA a staging chunk, put in place by a kernel. *done false (and cudaSuccess) when it
 * could not run (no staging, no device room for a chunk, odd sizes): nothing was queued, the caller
 * copies spans instead. Returns with the work queued; the caller synchronises `stream` before the
 * host arrays change. *bytes grows by what was sent. */
cudaError_t hm_scatter_dirty_leaves(hm_gpu *g, const kr_tree *t, void *d_keys, void *d_values,
                                    const uint64_t *dirty_leaves, uint64_t n_dirty, cudaStream_t stream,
                                    uint64_t *bytes, bool *done);

/* Device memory of a copy usable on any stream once `stream` reaches this point, and its free after
 * the work queued on `stream` (waiting for it where the allocator's free is immediate). */
cudaError_t hm_gpu_alloc_on(hm_gpu *g, void **pointer, size_t bytes, cudaStream_t stream);
void hm_gpu_free_on(hm_gpu *g, void *pointer, size_t bytes, cudaStream_t stream);

/* Frees the staging (after the copy's stream is idle). */
void hm_upload_staging_free(hm_gpu *g);

/* Locks the tree and makes sure it has a current device copy (uploaded when missing or stale, the
 * top cut as harmonia_set_constant_levels says) on its device, which is made current. On success
 * the caller holds tree->gpu_lock and the scope, and gives both back with hm_gpu_leave. */
harmonia_status hm_gpu_enter(harmonia_tree *tree, hm_device_scope *scope);
void hm_gpu_leave(harmonia_tree *tree, const hm_device_scope *scope);

/* A new device copy of the tree's current layout (tree->kr's shape) on `device` (current, the tree's
 * lock held): the tree's old copy released first, the memory checked (DEVICE_MEMORY names the bytes
 * needed and free, after `what`), its stream, events and arrays made (allocated, not filled). The caller fills the
 * arrays on g->stream (an upload, or the GPU build), waits for that stream, then hands the copy to
 * the tree with hm_gpu_adopt_copy (which reads the host tree for the view: its arrays must be
 * filled), or frees it with hm_gpu_discard_copy. */
harmonia_status hm_gpu_new_copy(harmonia_tree *tree, int device, const char *what, hm_gpu **copy_out);
void hm_gpu_adopt_copy(harmonia_tree *tree, hm_gpu *g);
void hm_gpu_discard_copy(hm_gpu *g);

/* Device and pinned memory of a copy, from its allocator (under the tree's lock, its device
 * current). Device memory from the default allocator is stream-ordered on g->stream: after
 * allocating, announce it with hm_gpu_announce before a query uses it. Frees happen after the work
 * queued on g->stream (hence after the queries already queued on any stream). */
cudaError_t hm_gpu_alloc(hm_gpu *g, void **pointer, size_t bytes);
void hm_gpu_free(hm_gpu *g, void *pointer, size_t bytes);
cudaError_t hm_gpu_alloc_pinned(hm_gpu *g, void **pointer, size_t bytes);
void hm_gpu_free_pinned(hm_gpu *g, void *pointer, size_t bytes);
/* Records `ready` on g->stream: queries queued from now on wait for what was queued there. */
cudaError_t hm_gpu_announce(hm_gpu *g);
/* Makes `stream` wait for the last announcement unless it was seen complete. */
cudaError_t hm_gpu_wait_ready(hm_gpu *g, cudaStream_t stream);
/* Completion signals (gpu_tree.cu, "completion signals"): for a synchronous one-launch call on
 * `stream` (the tree's lock held, before the launch), a slot of the calls in flight and its signal
 * for the launch (ntg_signal). false: none (signals off, the memory could not be made, or no slot
 * free) — the call waits for its stream as any other. On true the caller launches with *signal,
 * gives the lock back, waits with hm_gpu_signal_wait (or, on an error, calls hm_gpu_signals_off)
 * and leaves the slot with hm_gpu_call_end. */
bool hm_gpu_signal_begin(harmonia_tree *tree, cudaStream_t stream, int *slot_out, ntg_signal *signal);
/* Spins until the signal of slot's launch arrives (checking `stream` every HM_SIGNAL_CHECK_US: a
 * launch that failed returns its error; a stream done with no signal is done, and turns signals off). */
cudaError_t hm_gpu_signal_wait(harmonia_tree *tree, cudaStream_t stream, int slot, const ntg_signal *signal);
void hm_gpu_signals_off(harmonia_tree *tree);
/* After a device-array call's work is queued on `stream`: g->stream waits for it. */
cudaError_t hm_gpu_order_after(hm_gpu *g, cudaStream_t stream);

/* Calls in flight (gpu_tree.cu): a synchronous device-array call, its work queued, takes a slot
 * with its stream instead of hm_gpu_order_after (under gpu_lock; -1: no slot, or a stream another
 * thread cannot record on: order it now) and leaves it once it has waited for its stream (without
 * gpu_lock). Before queuing on g->stream anything queries must precede (frees, copies over the
 * copy's arrays, a table rebuilt in place), hm_gpu_order_after_calls orders g->stream after the
 * calls still in flight (hm_gpu_free and free_device_copy call it themselves). */
int hm_gpu_call_begin(harmonia_tree *tree, cudaStream_t stream);
void hm_gpu_call_end(harmonia_tree *tree, int slot);
void hm_gpu_order_after_calls(hm_gpu *g);

/* Makes lanes 0 .. lanes-1 ready for windows of `window` queries: with host-mode staging buffers
 * (device and pinned) when host_staging, with PSA buffers when psa. Buffers only grow: a larger
 * window frees and reallocates them all. The lanes' streams wait for the allocations. */
harmonia_status hm_gpu_prepare_lanes(harmonia_tree *tree, uint32_t window, bool host_staging, bool psa,
                                     uint32_t lanes);

/* The bucket table of plan in *table_out: one of the copy's (g->tables), built on g->stream if none
 * holds this plan's buckets (into a free one, else the one built longest ago, after the calls that
 * may still read it; announced). */
harmonia_status hm_gpu_prepare_table(harmonia_tree *tree, const psa_plan *plan, const uint32_t **table_out);

/* The tree's scan scratch for range offsets of `count` ranges on device arrays, grown as needed
 * (announced). */
harmonia_status hm_gpu_prepare_scan(harmonia_tree *tree, uint64_t count);

/* The scratch of range offsets on device arrays: count + 1 counts, then CUB's scan scratch. */
cudaError_t hm_scan_scratch_bytes(uint64_t count, size_t *bytes_out, size_t *scan_bytes_out);

/* Default window of host-array queries on the copy's device: the largest power of two whose
 * results (value + found flag) fit in half the L2. */
uint32_t hm_gpu_default_window(const hm_gpu *g, uint32_t key_bits);

#endif /* HARMONIA_GPU_INTERNAL_H */
