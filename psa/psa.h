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

#endif /* HARMONIA_PSA_H */
