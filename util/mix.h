/* util/mix.h — the integer mixers every seeded generator of the project uses: splitmix64 (its
 * step and its finalizer, a bijection on 64-bit integers), murmur3's fmix32 (a bijection on 32-bit
 * integers) and the counter-based draw (draw i of a seed, the same whatever thread draws it).
 * The one copy for the library, the tool, the tests and the benchmarks; header-only; also usable in
 * CUDA device code. */
#ifndef HARMONIA_UTIL_MIX_H
#define HARMONIA_UTIL_MIX_H

#include <stdint.h>

#if defined(__CUDACC__)
#define UTIL_HD __host__ __device__ __forceinline__
#else
#define UTIL_HD static inline
#endif

#define UTIL_GOLDEN_GAMMA 0x9E3779B97F4A7C15ull

/* splitmix64's finalizer: a bijection on 64-bit integers with full avalanche. */
UTIL_HD uint64_t util_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* murmur3's fmix32: a bijection on 32-bit integers. */
UTIL_HD uint32_t util_mix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* One step of the splitmix64 generator: advances *state and returns the next number. */
UTIL_HD uint64_t util_splitmix64(uint64_t *state)
{
    *state += UTIL_GOLDEN_GAMMA;
    return util_mix64(*state);
}

/* Draw i of a seed: splitmix64 of a counter, so that any thread can draw any i. */
UTIL_HD uint64_t util_draw(uint64_t seed, uint64_t i)
{
    return util_mix64(seed + (i + 1) * UTIL_GOLDEN_GAMMA);
}

#endif /* HARMONIA_UTIL_MIX_H */
