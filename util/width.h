/* util/width.h — width-generic access to arrays of 32- or 64-bit unsigned integers (keys and
 * values of a tree are one width, chosen per tree). The one copy for the library, the tool, the
 * tests and the benchmarks; header-only, no dependency. */
#ifndef HARMONIA_UTIL_WIDTH_H
#define HARMONIA_UTIL_WIDTH_H

#include <assert.h>
#include <stdint.h>

/* Element i of an array of key_bits-wide (32 or 64) unsigned integers, widened to 64 bits. */
static inline uint64_t util_load_width(const void *array, uint32_t key_bits, uint64_t i)
{
    assert(key_bits == 32 || key_bits == 64);
    return key_bits == 32 ? ((const uint32_t *)array)[i] : ((const uint64_t *)array)[i];
}

/* Stores value (truncated to 32 bits for a 32-bit array) as element i. */
static inline void util_store_width(void *array, uint32_t key_bits, uint64_t i, uint64_t value)
{
    assert(key_bits == 32 || key_bits == 64);
    if (key_bits == 32)
        ((uint32_t *)array)[i] = (uint32_t)value;
    else
        ((uint64_t *)array)[i] = value;
}

/* The largest value of the width. */
static inline uint64_t util_max_of_width(uint32_t key_bits)
{
    return key_bits == 32 ? UINT32_MAX : UINT64_MAX;
}

#endif /* HARMONIA_UTIL_WIDTH_H */
