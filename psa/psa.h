/* psa.h — partially-sorted aggregation: the choice of the radix-sort bits (the paper's Eq. 2,
 * adapted to the keys the tree actually holds). The CUB window sort and the order restore are GPU
 * code that lives beside it (the .cu files of psa/) once the GPU engine is built. */
#ifndef HARMONIA_PSA_H
#define HARMONIA_PSA_H

#include <stdint.h>

/* Bits [begin_bit, end_bit) of a key that PSA sorts queries on.
 * Eq. 2 of the paper: N = log2(T / K) bits for T keys and K keys per 128-byte cache line, taken as
 * the most significant bits of the domain. Real keys rarely span the domain (dense ids,
 * timestamps), so the N bits are taken below the highest bit in which the tree's smallest and
 * largest keys differ: queries inside the tree's span then spread over all 2^N buckets.
 * N is at least 1 and at most the span's width; an empty or one-key tree gives begin = end = 0
 * (nothing to sort). */
typedef struct psa_bits {
    uint32_t begin_bit, end_bit;
} psa_bits;

psa_bits psa_choose_bits(uint64_t n_keys, uint32_t key_bits, uint64_t min_key, uint64_t max_key);

/* The default PSA window: the largest power of two in [2^16, 2^24] whose results (value + found
 * flag) fit in half of an L2 cache of l2_bytes. */
uint64_t psa_default_window(uint32_t key_bits, uint64_t l2_bytes);

#ifdef HARMONIA_PSA_CUDA
/* --- the window sort (psa_sort.cu; only where CUDA is built) ------------------------------------
 * A window of n queries is sorted as (key, position) pairs on bits [begin_bit, end_bit) with CUB's
 * radix sort; positions_in is 0, 1, ..., n-1 (psa_fill_iota). Two-phase temporary storage as CUB:
 * psa_sort_temp_bytes gives the bytes for windows of up to max_window queries. */
#include <cuda_runtime.h>

cudaError_t psa_sort_temp_bytes(uint32_t key_bits, uint32_t max_window, size_t *bytes_out);

cudaError_t psa_sort_window(uint32_t key_bits, void *temp, size_t temp_bytes, const void *keys_in,
                            void *keys_out, const uint32_t *positions_in, uint32_t *positions_out,
                            uint32_t n, psa_bits bits, cudaStream_t stream);

cudaError_t psa_fill_iota(uint32_t *positions, uint32_t n, cudaStream_t stream);

/* The restore of a large window, in two steps instead of one random scatter over the window:
 * the search leaves its results in sorted order as (packed = position << 1 | found, value) pairs;
 * psa_restore_sort sorts them by the position's bits above the lowest PSA_RESTORE_LOCAL_BITS (CUB,
 * two passes for windows up to 2^27), so that psa_restore_scatter's writes of each warp land in a
 * span of 2^PSA_RESTORE_LOCAL_BITS positions that stays in L2 until its lines are whole. */
#define PSA_RESTORE_LOCAL_BITS 12
cudaError_t psa_restore_temp_bytes(uint32_t key_bits, uint32_t max_window, size_t *bytes_out);
cudaError_t psa_restore_sort(uint32_t key_bits, void *temp, size_t temp_bytes, const uint32_t *packed_in,
                             uint32_t *packed_out, const void *values_in, void *values_out, uint32_t n,
                             cudaStream_t stream);
cudaError_t psa_restore_scatter(uint32_t key_bits, const uint32_t *packed, const void *values, uint32_t n,
                                void *values_out, uint8_t *found_out, cudaStream_t stream);

/* Exclusive scan of n counts into offsets[0 .. n] (offsets[n] = total), with CUB. */
cudaError_t psa_scan_temp_bytes(uint64_t max_n, size_t *bytes_out);
cudaError_t psa_exclusive_scan(void *temp, size_t temp_bytes, const uint64_t *counts, uint64_t *offsets,
                               uint64_t n, cudaStream_t stream);
#endif

#endif /* HARMONIA_PSA_H */
