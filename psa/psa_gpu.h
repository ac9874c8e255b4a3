/* psa_gpu.h — the GPU side of PSA by partition (psa_partition.cu; only where CUDA is built): the
 * partition of a query window and the restore of its results' order, as psa.h describes them, and
 * the CUB exclusive scan of the range-collect pipeline. */
#ifndef HARMONIA_PSA_GPU_H
#define HARMONIA_PSA_GPU_H

#include "psa/psa.h"

#include <cuda_runtime.h>

/* Every part of a PSA workspace starts on PSA_ALIGN bytes. */
#define PSA_ALIGN 256u
static inline size_t psa_align_up(size_t x) { return (x + PSA_ALIGN - 1) & ~(size_t)(PSA_ALIGN - 1); }

/* Scratch: two-phase as CUB. psa_workspace_bytes gives the bytes for windows of up to `capacity`
 * queries under `plan` (key arrays, maps, bin counters, CUB scan scratch), carved from one buffer. */
cudaError_t psa_workspace_bytes(uint32_t key_bits, uint32_t capacity, const psa_plan *plan, size_t *bytes_out);

/* Where a partitioned window is: keys in bucket order, and what the restore reads (ordered windows:
 * per pass, for each grouped tile position, its slot and its item's place in the tile; slots2 ==
 * NULL after one pass; unordered windows have their positions in the caller's array already). The
 * pointers point into the workspace and stay valid until it is used again; psa_restore needs the
 * rest. */
typedef struct psa_partitioned {
    const void *keys;
    const uint32_t *in_span;         /* device: the queries inside [key_min, key_max] (with
                                        plan.edges: strictly between them), at slots 0 .. *in_span
                                        - 1; the others follow, unsearched */
    const uint32_t *slots1, *slots2; /* ordered windows (NULL for unordered ones) */
    /* for psa_restore */
    psa_plan plan;
    uint32_t n;
    uint32_t tile_items; /* items a thread of the passes' tiles (psa_pass_items): the restore's too */
    void *workspace;
} psa_partitioned;

/* The scratch of a window of up to `window` queries as the search pipeline uses it, carved from one
 * block of device memory (the caller's workspace, or a pipeline lane's): the workspace of
 * psa_partition, then the search's results in slot order, which psa_restore reads. bytes includes
 * 255 bytes of slack, so that the block need not be aligned. */
typedef struct psa_scratch {
    void *workspace;
    size_t workspace_bytes;
    void *slot_values, *slot_keys;
    uint8_t *slot_found;
} psa_scratch;
cudaError_t psa_scratch_bytes(uint32_t key_bits, uint32_t window, size_t *bytes_out);
/* The scratch of windows of up to `window` queries in a block of block_bytes (psa_scratch_bytes
 * for that window, or more: the workspace takes what the slot arrays leave). No CUDA call. */
psa_scratch psa_scratch_carve(void *block, size_t block_bytes, uint32_t key_bits, uint32_t window);

/* Partitions n queries (device array of the key width) under plan, on stream. Ordered windows
 * (positions_out.out NULL) record the maps the restore reads. Unordered windows (positions_out: the
 * caller's array of n 64- or 32-bit words, psa.h) carry each query's index through the passes
 * instead, and the pass that makes a slot final writes slot's position = positions_out.base + the
 * query's index in the window (every slot, those outside the span included): the search then
 * writes values and found flags only (ntg_launch_search_partitioned, unordered). One-pass plans
 * also write the keys of the queries outside the span (slots *in_span .. n - 1), so that out->keys
 * holds every query at slots 0 .. n - 1 (PSA's descent path searches them all). A plan with edges is for ordered windows only
 * (the unordered search answers the region past *in_span as outside the span): cudaErrorInvalidValue
 * with positions_out. Asynchronous; errors are launch errors. */
cudaError_t psa_partition(uint32_t key_bits, const psa_plan *plan, const void *queries, uint32_t n,
                          psa_positions positions_out, void *workspace, size_t workspace_bytes,
                          psa_partitioned *out, cudaStream_t stream);

/* One known answer: the key and value given back, and whether it counts as found. */
typedef struct psa_answer {
    uint64_t key, value;
    bool found;
} psa_answer;

/* The answers to the queries that pass 1 sets apart (psa.h): above key_max nothing is found; below
 * key_min `below` (a lookup finds nothing, a lower bound the smallest key); with plan.edges, a query
 * equal to key_min gets `at_min` and one equal to key_max `at_max` (the smallest and largest keys
 * with their values, found, for lookups and lower bounds alike). */
typedef struct psa_known_answers {
    psa_answer below, at_min, at_max;
} psa_known_answers;

/* The restore: for each query i of the window inside the span, values_out[i] = values[slot(i)],
 * keys_out[i] = keys[slot(i)] (when both are non-NULL) and found_out[i] = found[slot(i)], slot from
 * what part recorded; the queries set apart get their answers from *known (NULL: below the span not
 * found; refused, cudaErrorInvalidValue, for a plan with edges, whose answers only the caller has).
 * Uses part's workspace (the partitioned keys are overwritten). Asynchronous. */
cudaError_t psa_restore(uint32_t key_bits, const psa_partitioned *part, const void *values, const void *keys,
                        const uint8_t *found, void *values_out, void *keys_out, uint8_t *found_out,
                        const psa_known_answers *known, cudaStream_t stream);

/* Exclusive scan of n counts into offsets[0 .. n] (offsets[n] = total), with CUB. */
cudaError_t psa_scan_temp_bytes(uint64_t max_n, size_t *bytes_out);
cudaError_t psa_exclusive_scan(void *temp, size_t temp_bytes, const uint64_t *counts, uint64_t *offsets,
                               uint64_t n, cudaStream_t stream);

#endif /* HARMONIA_PSA_GPU_H */
