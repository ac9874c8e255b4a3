/* gpu_engine.h — what the front (tree.c, ntg_*.c) calls of the GPU engine: the device copy's life
 * cycle and the query pipelines. Implemented by gpu_tree.cu and gpu_query.cu where CUDA is built,
 * and by gpu_engine_none.c (every call answers NO_DEVICE) where it is not. Every function takes the
 * tree's own lock (tree->gpu_lock) as it needs it, runs its CUDA calls on the tree's device and
 * gives the caller's current device back before it returns. Internal. */
#ifndef HARMONIA_GPU_ENGINE_H
#define HARMONIA_GPU_ENGINE_H

#include "harmonia.h"
#include "key_region/key_region.h"
#include "psa/psa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a GPU is usable (probed once per process). */
bool hm_gpu_usable(void);

harmonia_status hm_gpu_upload(harmonia_tree *tree);

/* The publish of an update batch (tree.c): makes `next`, the tree's version N+1 (complete in arrays no
 * query reads), the tree's version, and brings the device copy (if any) to it at the same point.
 * publish(context) swaps the host version in; it is called exactly once, with tree->gpu_lock held,
 * whatever happens (so GPU calls, which read tree->kr under that lock, see N or N+1, never a mix).
 *   Two copies fit (the default): N+1's device arrays are made without the tree's lock, on a stream
 *   of the copy's own for updates, while GPU queries go on with N: from N's device arrays plus
 *   the dirty leaves (and the leaf ranks when ranks_changed) when the shape is unchanged and the
 *   copy holds N, else from the host; then, under the lock, publish and the copy switches to them;
 *   N's arrays are freed after the queries already queued on them (the copy's stream waits for
 *   them), never with a device-wide sync.
 *   Two copies do not fit (free memory, or the caller's allocator refuses): *blocking_out = true;
 *   the lock is taken (new GPU queries wait), publish, then the copy is brought to N+1 in place as
 *   before (the dirty leaves after the queries already queued, or freed and uploaded again).
 *   A copy older than N (skip_upload before): blocking too, uploaded again under the lock.
 *   skip: publish alone; the copy stays at N (a GPU query uploads N+1 on first use).
 * Without a device copy, publish alone. *bytes_out: bytes sent from the host; *incremental_out:
 * only dirty leaves were sent. On a device error the version is published all the same and the
 * error returned (the caller releases the copy). */
harmonia_status hm_gpu_sync(harmonia_tree *tree, const kr_tree *next, const uint64_t *dirty_leaves, uint64_t n_dirty,
                            bool ranks_changed, bool skip, void (*publish)(void *context), void *context,
                            uint64_t *bytes_out, bool *incremental_out, bool *blocking_out);
void hm_gpu_release(harmonia_tree *tree);
/* What the GPU engine keeps for the tree's whole life (the completion signals' host words), freed
 * when the tree handle is (hm_tree_delete_handle). */
void hm_gpu_forget(harmonia_tree *tree);
void hm_gpu_fill_info(const harmonia_tree *tree, harmonia_tree_info *info);

/* The L2 bytes of the tree's device (its copy's, else the current device's); 0 without a GPU. */
uint64_t hm_gpu_l2_bytes(harmonia_tree *tree);

/* The device of the tree's copy, made (uploaded) if it does not exist yet: for the NTG
 * measurement, whose own arrays must live there. */
harmonia_status hm_gpu_device_of(harmonia_tree *tree, int *device_out);

/* For the tests: a start table of the tree's device copy (ntg.h, THE START TABLE; the coarse one, or
 * the fine one when `fine`: ntg_policy.h; the copy made and the tables built as for a query):
 * *count_out entries (0: the tree has none), copied to entries_out (16 bytes each) when they fit
 * in capacity entries, with the plan of its buckets. */
harmonia_status hm_gpu_start_table(harmonia_tree *tree, bool fine, void *entries_out, uint64_t capacity,
                                   uint64_t *count_out, psa_plan *plan_out);

/* The queries. config is resolved (never NULL); async: device arrays only, queued on
 * config->stream without waiting. positions_out NULL: results in the queries' order; else in PSA
 * order with positions, 32-bit words when positions32 (count <= 2^32), else 64-bit. */
harmonia_status hm_gpu_lookup(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                              const void *queries, uint64_t count, void *values_out,
                              uint8_t *found_out, void *positions_out, bool positions32);
harmonia_status hm_gpu_lower_bound(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                   const void *queries, uint64_t count, void *keys_out,
                                   void *values_out, uint8_t *found_out);
harmonia_status hm_gpu_range_count(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                   const void *lo, const void *hi, uint64_t count,
                                   uint64_t *counts_out);
/* Phase 1 of range collect: offsets[0 .. count]. */
harmonia_status hm_gpu_range_offsets(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                     const void *lo, const void *hi, uint64_t count,
                                     uint64_t *offsets);
/* Phase 2 of range collect. */
harmonia_status hm_gpu_range_collect(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                     const void *lo, uint64_t count, const uint64_t *offsets,
                                     void *keys_out, void *values_out);

/* Records a CUDA failure (a cudaError_t, as int: this header needs no CUDA) on the tree as a status:
 * out of memory becomes DEVICE_MEMORY (with the free bytes), no device NO_DEVICE, the rest DEVICE;
 * what names the step. Clears a non-sticky error. gpu_tree.cu. */
harmonia_status hm_gpu_fail(harmonia_tree *tree, int cuda_error, const char *what);

/* The library's CUDA checks (one copy, for .cu and C files alike): on failure, the status of
 * hm_gpu_fail is returned (HM_CUDA) or stored in `status` before a jump to `label`. */
#define HM_CUDA(tree, call)                                                                       \
    do {                                                                                          \
        const int hm_e_ = (int)(call);                                                            \
        if (hm_e_ != 0)                                                                           \
            return hm_gpu_fail((tree), hm_e_, #call);                                             \
    } while (0)
#define HM_CUDA_OR_GOTO(tree, status, call, what, label)                                          \
    do {                                                                                          \
        const int hm_e_ = (int)(call);                                                            \
        if (hm_e_ != 0) {                                                                         \
            (status) = hm_gpu_fail((tree), hm_e_, (what));                                        \
            goto label;                                                                           \
        }                                                                                         \
    } while (0)

/* The GPU bulk build (gpu_build.cu; harmonia.h's harmonia_build says what it does): builds tree->kr
 * (zeroed) from count pairs in host memory, or in device memory of the tree's device when
 * device_arrays (ready on the cudaStream_t `stream`), and keeps the result as the tree's device
 * copy. On failure tree->kr is zeroed and nothing is allocated; DUPLICATE_KEY and UNSORTED put
 * the CPU build's message in err, the other failures (NO_DEVICE, DEVICE_MEMORY, DEVICE, NO_MEMORY,
 * INVALID, CAPACITY) in the tree's last error. Progress phases (params->progress): upload (the
 * sort overlapped with the values' upload), sort (the rest of it, the values' gather, the duplicate
 * policy), layout, download. */
struct kr_build_params;
struct kr_error;
harmonia_status hm_gpu_build(harmonia_tree *tree, const struct kr_build_params *params, const void *keys,
                             const void *values, uint64_t count, bool device_arrays, void *stream,
                             struct kr_error *err);

/* Whether p points to device (or managed) memory; *device_out gets its device. False without CUDA. */
bool hm_gpu_is_device_pointer(const void *p, int *device_out);

/* harmonia_query_workspace_bytes: the scratch of a call (see harmonia.h). */
harmonia_status hm_gpu_workspace_bytes(harmonia_tree *tree, const harmonia_query_config *config,
                                       harmonia_query_kind kind, uint64_t count, size_t *device_bytes,
                                       size_t *pinned_bytes);

#ifdef __cplusplus
}
#endif
#endif /* HARMONIA_GPU_ENGINE_H */
