/* gpu_internal.h — the device copy of a tree and its pipeline lanes, shared by gpu_tree.cu (life
 * cycle, buffers, __constant__ ownership) and gpu_query.cu (the query pipelines). CUDA-only,
 * internal. */
#ifndef HARMONIA_GPU_INTERNAL_H
#define HARMONIA_GPU_INTERNAL_H

#include <cuda_runtime.h>

extern "C" {
#include "harmonia/gpu_engine.h"
#include "harmonia/tree_internal.h"
#include "ntg/ntg.h"
#include "psa/psa_gpu.h"
}

/* Pipeline lanes: each has a stream and the buffers of one window, so that one window's copies,
 * sort and search overlap another's. */
#define HM_LANES 3
/* Device buffers of a lane, each window * 8 bytes (the widest element). */
#define HM_LANE_IN 2   /* query keys, or lo and hi */
#define HM_LANE_OUT 4  /* values / keys / found / positions or counts */

typedef struct hm_lane {
    cudaStream_t stream;
    cudaEvent_t done;          /* recorded after the lane's last window */
    bool pending;              /* a host-mode window awaits its copy-out */
    uint64_t pending_start, pending_count;
    void *d_in[HM_LANE_IN];    /* host mode: the device side of the staging, window * 8 bytes each */
    void *d_out[HM_LANE_OUT];
    void *h_in[HM_LANE_IN];    /* pinned staging (host mode only) */
    void *h_out[HM_LANE_OUT];
    void *psa_workspace;       /* PSA by partition: its scratch (psa_workspace_bytes) and the */
    size_t psa_workspace_bytes;/* results in slot order before the restore */
    void *d_slot_values, *d_slot_keys;
    uint8_t *d_slot_found;
} hm_lane;

typedef struct hm_gpu {
    ntg_view view;
    void *d_keys, *d_values;
    uint32_t *d_first_child;
    uint64_t *d_leaf_rank;
    uint32_t *h_constant;      /* the __constant__ part, kept to re-upload when another tree took it */
    uint32_t constant_entries;
    uint64_t tree_bytes;       /* the device copy */
    uint64_t version;          /* the tree version it holds */
    uint64_t upload_id;        /* unique per upload: who owns __constant__ memory */
    psa_plan plan;             /* PSA by partition: the tree's default plan (psa_make_plan) */
    uint64_t min_value;        /* the value of the smallest key (lower bounds below the span) */
    uint32_t *d_bucket_table;  /* ntg_build_bucket_table of table_plan; stale after any change */
    psa_plan table_plan;
    bool table_valid;
    uint64_t table_bytes;
    /* pipeline resources, allocated on first use and kept */
    uint32_t window;           /* queries per window the lanes are sized for; 0 = none yet */
    bool lanes_staging;        /* the lanes have host-mode buffers */
    bool lanes_psa;            /* the lanes have PSA buffers */
    hm_lane lanes[HM_LANES];
    uint64_t work_bytes;       /* device bytes of the lanes */
    void *scan_temp;           /* range offsets on device arrays: CUB scan scratch and the counts */
    size_t scan_temp_bytes;
    uint64_t *scan_counts;
    uint64_t scan_capacity;    /* ranges the two hold */
    cudaEvent_t fork;          /* the caller's stream, recorded for the lanes to wait on */
} hm_gpu;

/* Records a CUDA failure on the tree: out-of-memory becomes DEVICE_MEMORY, the rest DEVICE. */
harmonia_status hm_gpu_fail(harmonia_tree *tree, cudaError_t e, const char *what);

#define HM_CUDA(tree, call)                                                                       \
    do {                                                                                          \
        cudaError_t hm_e_ = (call);                                                               \
        if (hm_e_ != cudaSuccess)                                                                 \
            return hm_gpu_fail((tree), hm_e_, #call);                                             \
    } while (0)

/* Makes sure the tree has a current device copy whose __constant__ part is loaded; takes the
 * process-wide GPU lock (released by hm_gpu_leave). */
harmonia_status hm_gpu_enter(harmonia_tree *tree);
void hm_gpu_leave(void);

/* Makes lanes 0 .. lanes-1 ready for windows of `window` queries: with host-mode staging buffers
 * (device and pinned) when host_staging, with PSA buffers when psa. Buffers only grow: a larger
 * window frees and reallocates them all. */
harmonia_status hm_gpu_prepare_lanes(harmonia_tree *tree, uint32_t window, bool host_staging, bool psa,
                                     uint32_t lanes);

/* The bucket table of plan, built on the device copy if it has none for this plan (on stream). */
harmonia_status hm_gpu_prepare_table(harmonia_tree *tree, const psa_plan *plan, cudaStream_t stream);

/* Default window of host-array queries: the largest power of two whose results (value + found
 * flag) fit in half the L2. */
uint32_t hm_gpu_default_window(uint32_t key_bits);

#endif /* HARMONIA_GPU_INTERNAL_H */
