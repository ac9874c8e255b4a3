/* cli_baselines.h — the baselines Harmonia is measured against on the CPU: a sorted array of
 * keys (with their values beside it) searched by a plain binary search per query, OpenMP-parallel
 * over the queries. They share no code with the library, so they double as its oracle in bench. */
#ifndef HARMONIA_CLI_BASELINES_H
#define HARMONIA_CLI_BASELINES_H

#include <stdint.h>

/* All arrays are of key_bits width (32 or 64) except found flags (bytes) and counts (64-bit).
 * sorted_keys holds n strictly increasing keys, sorted_values their values. threads = 0 means
 * OpenMP's default. Results follow the contracts of the public calls of the same names. */

/* Point lookup: found_out[i] = 1 and values_out[i] = the value when queries[i] is a key, else
 * found_out[i] = 0 and values_out[i] = 0. */
void bl_lookup(uint32_t key_bits, const void *sorted_keys, const void *sorted_values, uint64_t n,
               const void *queries, uint64_t count, void *values_out, uint8_t *found_out,
               int threads);

/* Lower bound: the smallest key >= queries[i] and its value (found 1), or found 0 and zeros.
 * keys_out and values_out may be NULL. */
void bl_lower_bound(uint32_t key_bits, const void *sorted_keys, const void *sorted_values,
                    uint64_t n, const void *queries, uint64_t count, void *keys_out,
                    void *values_out, uint8_t *found_out, int threads);

/* Range count: the number of keys k with lo[i] <= k <= hi[i] (0 when lo[i] > hi[i]). */
void bl_range_count(uint32_t key_bits, const void *sorted_keys, uint64_t n, const void *lo,
                    const void *hi, uint64_t count, uint64_t *counts_out, int threads);

#endif /* HARMONIA_CLI_BASELINES_H */
