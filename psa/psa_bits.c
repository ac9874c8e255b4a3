/* psa_bits.c — Eq. 2 of the Harmonia paper, adapted to the span of the tree's keys: how many and
 * which key bits the PSA radix sort uses. Pure host code, shared by the GPU engine and the tests. */
#include "psa/psa.h"

static uint32_t bit_width(uint64_t x)
{
    return x ? 64u - (uint32_t)__builtin_clzll(x) : 0u;
}

psa_bits psa_choose_bits(uint64_t n_keys, uint32_t key_bits, uint64_t min_key, uint64_t max_key)
{
    psa_bits bits = {0, 0};
    uint32_t span = bit_width(min_key ^ max_key); /* bits in which the tree's keys differ */
    if (n_keys < 2 || span == 0)
        return bits;
    uint64_t keys_per_line = 128u / (key_bits / 8u);
    /* N = ceil(log2(T / K)), at least 1 */
    uint64_t lines = (n_keys + keys_per_line - 1) / keys_per_line;
    uint32_t n = bit_width(lines - 1);
    if (n < 1)
        n = 1;
    if (n > span)
        n = span;
    bits.end_bit = span;
    bits.begin_bit = span - n;
    return bits;
}

uint64_t psa_default_window(uint32_t key_bits, uint64_t l2_bytes)
{
    const uint64_t per_query = key_bits / 8 + 1;
    uint64_t w = (uint64_t)1 << 16;
    while (w * 2 * per_query <= l2_bytes / 2 && w < ((uint64_t)1 << 24))
        w *= 2;
    return w;
}
