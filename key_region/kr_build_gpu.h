/* kr_build_gpu.h — the GPU side of the bulk build (kr_build_gpu.cu; only where CUDA is built): the
 * device-wide steps that turn unsorted pairs in device memory into the layout of key_region.h, bit
 * for bit as the CPU build (kr_build.c) writes it. Each step queues its work on the given stream and
 * returns at once; the caller owns every buffer (two-phase scratch, as CUB) and moves data between
 * host and device (harmonia/gpu_build.cu). The steps, in order:
 *   1. positions 0 .. count-1 (kr_gpu_iota32), then the CUB radix sort of (key, position) pairs —
 *      stable, so equal keys keep input order as in the CPU's sort (kr_gpu_sort_pairs);
 *   2. the values in sorted order: the input's at each sorted position, or the position itself when
 *      the caller gave no values (kr_gpu_gather_values);
 *   3. the first descent and the first repeat of a key array (kr_gpu_find_order): the duplicate
 *      policy's check, and the check of an input promised sorted;
 *   4. a duplicate policy that keeps one pair per key (kr_gpu_dedupe): flags, a CUB scan, a scatter;
 *   5. the layout (kr_gpu_layout): the leaf level with its values and ranks from the sorted unique
 *      pairs (kr_plan_even's even spread), then each internal level from the first keys of the level
 *      below, one kernel per level, root last; the first-child array is the host's (ps_build, copied
 *      up by the caller), as the CPU build makes it.
 * Positions are 32-bit: the GPU build takes fewer than 2^32 pairs. */
#ifndef HARMONIA_KR_BUILD_GPU_H
#define HARMONIA_KR_BUILD_GPU_H

#include <cuda_runtime.h>

#include "key_region/key_region.h"

/* CUB scratch of kr_gpu_sort_pairs and kr_gpu_dedupe for count pairs: the larger of the two. */
cudaError_t kr_gpu_temp_bytes(uint32_t key_bits, uint64_t count, size_t *bytes_out);

cudaError_t kr_gpu_iota32(uint32_t *positions, uint64_t count, cudaStream_t stream);

/* Sorts (keys[current], positions[current]) by key over all key_bits bits, stable, using the other
 * buffers as the second half of CUB's double buffer; *current is set to the half holding the result. */
cudaError_t kr_gpu_sort_pairs(uint32_t key_bits, void *keys[2], uint32_t *positions[2], uint64_t count,
                              void *temp, size_t temp_bytes, int *current, cudaStream_t stream);

/* values_out[i] = values_in[positions[i]], or positions[i] (widened) when values_in is NULL. */
cudaError_t kr_gpu_gather_values(uint32_t key_bits, const void *values_in, const uint32_t *positions,
                                 void *values_out, uint64_t count, cudaStream_t stream);

/* result[0] = the first i >= 1 with keys[i] < keys[i-1], result[1] = the first i >= 1 with
 * keys[i] == keys[i-1]; count when there is none. result: 2 device words. */
cudaError_t kr_gpu_find_order(uint32_t key_bits, const void *keys, uint64_t count, unsigned long long *result,
                              cudaStream_t stream);

/* Keeps the first (or, keep_last, the last) pair of each run of equal keys of sorted pairs, in order,
 * into keys_out / values_out; offsets (count + 1 words) is scratch, and offsets[count] ends as the
 * number of pairs kept. */
cudaError_t kr_gpu_dedupe(uint32_t key_bits, const void *keys, const void *values, uint64_t count, bool keep_last,
                          uint32_t *offsets, void *temp, size_t temp_bytes, void *keys_out, void *values_out,
                          cudaStream_t stream);

/* The layout of shape (kr_plan_even of the n_keys sorted unique pairs): the whole key region into
 * keys, leaf_values, leaf_rank, reading first_child (already on the device); node_min is scratch of
 * n_internal words (may be NULL for height 1). */
cudaError_t kr_gpu_layout(const kr_tree *shape, const void *sorted_keys, const void *sorted_values, void *keys,
                          void *leaf_values, const uint32_t *first_child, uint64_t *leaf_rank,
                          uint64_t *node_min, cudaStream_t stream);

#endif /* HARMONIA_KR_BUILD_GPU_H */
