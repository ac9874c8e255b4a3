/* psa_bits.c — which key bits group queries: Eq. 2 of the Harmonia paper adapted to the span of
 * the tree's keys (psa_choose_bits, used by the NTG model), and the plan of PSA by partition
 * (psa_make_plan). Pure host code, shared by the GPU engine and the tests. */
#include "psa/psa.h"

#include <assert.h>

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

psa_plan psa_make_plan(uint64_t key_min, uint64_t key_max, uint64_t n_leaves, uint32_t leaf_bytes,
                       uint32_t wanted_bits)
{
    psa_plan plan = {key_min, key_max, 0, 0, 0, 0, 0};
    if (key_max <= key_min)
        return plan;
    const uint32_t width = bit_width(key_max - key_min);
    uint32_t bits = wanted_bits;
    if (bits == 0) { /* buckets of about PSA_BUCKET_BYTES of leaf keys: ceil(log2(leaves / per bucket)) */
        const uint64_t per_bucket = leaf_bytes && leaf_bytes < PSA_BUCKET_BYTES ? PSA_BUCKET_BYTES / leaf_bytes : 1;
        const uint64_t buckets = (n_leaves + per_bucket - 1) / per_bucket;
        bits = buckets > 1 ? bit_width(buckets - 1) : 1;
    }
    if (bits > PSA_MAX_BITS)
        bits = PSA_MAX_BITS;
    if (bits > width)
        bits = width;
    plan.bits = bits;
    plan.shift = width - bits;
    assert(bits <= width && bits <= PSA_MAX_BITS);
    if (bits <= PSA_MAX_PASS1_BITS) {
        plan.bits1 = bits;
        plan.bits2 = 0;
    } else { /* two passes, the bits split evenly (fewer bins per pass: longer runs per tile), the
                odd bit where PSA_ODD_BIT_PASS says (psa_policy.h) */
        plan.bits1 = PSA_ODD_BIT_PASS == 1 && bits - bits / 2 <= PSA_MAX_PASS1_BITS ? bits - bits / 2 : bits / 2;
        plan.bits2 = bits - plan.bits1;
    }
    return plan;
}
