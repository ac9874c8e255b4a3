/* psa.h — partially-sorted aggregation (PSA): which bits of a query key group queries together,
 * and the GPU partition of a query window on those bits with the restore of the results' order.
 * Pure host code here (the plan, Eq. 2); the partition and the restore are psa_gpu.h, built only
 * with CUDA. The search of a partitioned window is ntg/ (ntg_launch_search_partitioned).
 *
 * ================================ PSA BY PARTITION (read first) ================================
 *
 * The paper sorts each window of queries on its top bits with a radix sort, searches the sorted
 * queries and scatters the results back. Here a window of n queries is *partitioned*, not sorted:
 *
 *   bucket(q)  = 0 for q <= key_min, 2^bits - 1 for q >= key_max, else (q - key_min) >> shift
 *                (key_min, key_max = the tree's smallest and largest keys; shift = the width of
 *                key_max - key_min minus bits), so buckets split the span of the tree's keys into
 *                2^bits equal key ranges, in key order;
 *   pass 1     : queries grouped by the top bits1 bits of their bucket (coarse bins), each pass
 *                reserving, per tile of queries and per bin, a run of slots with one atomic add;
 *   pass 2     : inside each coarse bin, grouped by the low bits2 bits (bits = bits1 + bits2; with
 *                bits2 = 0 there is one pass).
 *
 * Large windows (psa_pass1_chunked) run pass 1 of a two-pass plan without counting its bins first:
 * each bin fills chunks of one tile's slots taken in turn from a global counter, and pass 2 takes
 * each bin's chunks in order as its tiles (psa_partition.cu, "Pass 1 into chunks").
 *
 * After the passes the keys are grouped by bucket in increasing bucket order (the order inside a
 * bucket is arbitrary), which is all the search needs: a tile of consecutive slots covers a few
 * neighbouring buckets, hence a short run of leaves (ntg/).
 *
 * Each pass works on tiles of PSA_THREADS * psa_pass_items items (pass 2's tiles never cross a
 * coarse bin) and groups a tile by bin in shared memory before it writes, as CUB's onesweep does:
 * a tile's items of one bin
 * get one run of consecutive slots (one atomic add per bin reserves it) and the run is written
 * whole. For ordered results the pass records, for each grouped position p of a tile, the slot it
 * wrote (slots[p]) and the item's place in the tile (sources[p]). The restore runs the passes
 * backwards over the same tiles: position p reads the results at slots[p] — whole runs again — and
 * puts them at sources[p]; the tile then leaves in query order. Every global access is a run:
 * single scattered 8-byte words run at the L2's random-access rate (bench/NOTES.md, "Defaults and
 * where they were measured"), which would cost more than the search. Unordered results skip the
 * restore: the passes carry each query's index to the slot instead (positions).
 *
 * Lookups of sparse windows (psa_descent_pays: unordered fewer than 2 queries a leaf, 64-bit keys 4;
 * in query order 32-bit keys below 2.5 a leaf, 64-bit keys 4.5; lower bounds of 32-bit keys below
 * 1.5 a leaf: psa_descent_lower_bound_pays) take PSA's descent path: one pass on a coarse plan
 * (psa_descent_plan, psa_descent_bits: 7 bits for 64-bit keys, 8 for 32-bit; unordered, it writes
 * the positions), then the plain descent (ntg/) over the slots in order — neighbouring slots lie in
 * one bucket, so a warp's descents share their upper levels in L1 — instead of the staged search,
 * whose staged leaves would each serve one query or none; results in query order then go back
 * through psa_restore. One-pass partitions write the keys of the queries outside the span too, so
 * that the descent reads a key at every slot.
 *
 * Queries outside [key_min, key_max] need no search: pass 1 puts them in a bin of their own, after
 * every slot of the span (*in_span .. n - 1), and ordered windows record a code for them instead of
 * a slot, which the restore answers (below the span: not found, a lower bound the smallest key;
 * above: not found). With plan.edges the queries equal to key_min or key_max go there too (their
 * answers are the smallest and largest keys themselves): clamped queries, which pile onto the two
 * edge keys, then cost pass 1 and the restore only (bench/NOTES.md, "Session 22").
 *
 * Invariants (checked by the GPU tests: every result against the CPU engine, every permutation
 * complete): after psa_partition every query of the window sits at exactly one slot, with its key;
 * slots of bucket u precede slots of bucket u + 1; psa_restore returns each query's result to its
 * place.
 * ============================================================================================ */
#ifndef HARMONIA_PSA_H
#define HARMONIA_PSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "psa/psa_policy.h"

#if defined(__CUDACC__)
#define PSA_HD __host__ __device__ __forceinline__
#else
#define PSA_HD static inline
#endif

/* Bits [begin_bit, end_bit) of a key that the paper's PSA radix sort would use.
 * Eq. 2 of the paper: N = log2(T / K) bits for T keys and K keys per 128-byte cache line, taken as
 * the most significant bits of the domain. Real keys rarely span the domain (dense ids,
 * timestamps), so the N bits are taken below the highest bit in which the tree's smallest and
 * largest keys differ: queries inside the tree's span then spread over all 2^N buckets.
 * N is at least 1 and at most the span's width; an empty or one-key tree gives begin = end = 0
 * (nothing to sort). The NTG model (ntg/) groups its sample by these bits. */
typedef struct psa_bits {
    uint32_t begin_bit, end_bit;
} psa_bits;

psa_bits psa_choose_bits(uint64_t n_keys, uint32_t key_bits, uint64_t min_key, uint64_t max_key);

/* The window whose results (value + found flag) fit in half of an L2 cache of l2_bytes: the
 * largest power of two in [2^16, 2^24] (the NTG model's notion of a window). */
uint64_t psa_default_window(uint32_t key_bits, uint64_t l2_bytes);

/* How a window is partitioned: see the block comment above. bits = 0: one bucket (no partition).
 * bits <= span width of the keys, so shift >= 0 and the 2^bits buckets tile the span. */
typedef struct psa_plan {
    uint64_t key_min, key_max; /* the tree's smallest and largest keys */
    uint32_t shift;            /* bucket = (q - key_min) >> shift inside the span */
    uint32_t bits;             /* 2^bits buckets */
    uint32_t bits1, bits2;     /* pass 1 on the top bits1 bits of the bucket, pass 2 on the rest */
    /* 1: queries equal to key_min or key_max go with those outside the span (pass 1's outside bin,
     * past *in_span, never searched): their answers are known (the smallest and largest keys'
     * values), and psa_restore gives them. Only for windows whose results go back through
     * psa_restore (in query order); psa_make_plan leaves it 0, a call sets it. */
    uint32_t edges;
} psa_plan;

/* The plan for a tree whose keys span [key_min, key_max] over n_leaves leaves of leaf_bytes bytes of
 * keys each (leaf size times key width): buckets of about PSA_BUCKET_BYTES of leaf keys, at least
 * one leaf (fewer bits when the span is narrower), at most PSA_MAX_BITS bits; wanted_bits > 0 asks
 * for that many bits instead (capped the same way). */
psa_plan psa_make_plan(uint64_t key_min, uint64_t key_max, uint64_t n_leaves, uint32_t leaf_bytes,
                       uint32_t wanted_bits);

/* Whether two plans put every key in the same bucket (what a bucket table built for one serves the
 * other; the passes' split and the edges do not matter to it). */
static inline bool psa_same_buckets(const psa_plan *a, const psa_plan *b)
{
    return a->key_min == b->key_min && a->key_max == b->key_max && a->shift == b->shift && a->bits == b->bits;
}

/* Whether partitioning pays for a window of `window` queries over a tree of n_leaves leaves (the
 * auto policy: psa_policy.h). */
static inline bool psa_pays(uint64_t window, uint64_t n_leaves)
{
    return window >= PSA_MIN_QUERIES &&
           (window >= PSA_MIN_QUERIES_PER_LEAF * n_leaves || (window >= PSA_LARGE_WINDOW && window >= n_leaves));
}

/* A window large enough for PSA's descent path and sparser than max_halves_per_leaf / 2 queries a
 * leaf (the bounds below). */
static inline bool psa_descent_window(uint64_t window, uint64_t n_leaves, unsigned max_halves_per_leaf)
{
    return window >= PSA_DESCENT_MIN_WINDOW && 2 * window < (uint64_t)max_halves_per_leaf * n_leaves;
}

/* Whether a window of lookups in device memory of key_bits-bit keys takes PSA's descent path
 * (partitioned in one pass on psa_descent_bits bits, then the plain descent over its slots:
 * psa_descent_plan; results in query order restored from the slots) rather than the staged search
 * of a full plan or the descent in query order (the auto policy: psa_policy.h): large, and sparser
 * than psa_descent_max_halves_per_leaf / 2 queries a leaf (the staged search wants denser windows;
 * 64-bit keys take the descent a little further, in both orders; 32-bit keys in query order a
 * little further too). */
static inline bool psa_descent_pays(uint64_t window, uint64_t n_leaves, unsigned key_bits, bool unordered)
{
    return psa_descent_window(window, n_leaves, psa_descent_max_halves_per_leaf(key_bits, unordered));
}

/* The same for a window of lower bounds (results in query order): 32-bit keys below
 * PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32 / 2 queries a leaf (psa_descent_lower_bound),
 * 64-bit keys never. */
static inline bool psa_descent_lower_bound_pays(uint64_t window, uint64_t n_leaves, unsigned key_bits)
{
    return psa_descent_lower_bound(key_bits) &&
           psa_descent_window(window, n_leaves, PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32);
}

/* The descent path's bucket bits for key_bits-bit keys (psa_policy.h). */
static inline uint32_t psa_descent_bits(uint32_t key_bits)
{
    return key_bits == 64 ? PSA_DESCENT_BITS_64 : PSA_DESCENT_BITS_32;
}

/* The one-pass plan of the descent path: psa_descent_bits(key_bits) bits of plan's span (fewer where
 * the span is narrower). */
static inline psa_plan psa_descent_plan(const psa_plan *plan, uint32_t key_bits, uint64_t n_leaves,
                                        uint32_t leaf_bytes)
{
    return psa_make_plan(plan->key_min, plan->key_max, n_leaves, leaf_bytes, psa_descent_bits(key_bits));
}

/* The plan of unordered lookups of device arrays on a tree whose plan is `plan` (key_bits-bit keys,
 * n_leaves leaves of leaf_bytes bytes): one bit fewer where psa_unordered_wider says (psa_policy.h:
 * large 64-bit trees, whose unordered passes pay more for their bins than the staged search for
 * wider buckets), else the same plan. */
static inline psa_plan psa_unordered_plan(const psa_plan *plan, uint32_t key_bits, uint64_t n_leaves,
                                          uint32_t leaf_bytes)
{
    if (!psa_unordered_wider(key_bits, plan->bits))
        return *plan;
    return psa_make_plan(plan->key_min, plan->key_max, n_leaves, leaf_bytes, plan->bits - 1);
}

/* Where the positions of an unordered lookup go (harmonia_lookup_unordered, _unordered32): slot i of
 * the window gets base + the index of its query in the window, as a 64-bit word (wide) or a 32-bit
 * one (the call has at most 2^32 queries, so every position fits). out NULL: results in query order,
 * no positions. Written by PSA's passes (psa_partition) or by the descent kernels (ntg/). */
typedef struct psa_positions {
    void *out;
    uint64_t base;
    bool wide;
} psa_positions;

#if defined(__CUDACC__)
/* Slot `slot`'s position: base + index (p.out non-NULL). */
__device__ __forceinline__ void psa_put_position(const psa_positions &p, uint64_t slot, uint64_t index)
{
    if (p.wide)
        static_cast<uint64_t *>(p.out)[slot] = p.base + index;
    else
        static_cast<uint32_t *>(p.out)[slot] = (uint32_t)(p.base + index);
}
#endif

/* The bucket of key q (host and device). */
PSA_HD uint32_t psa_bucket(const psa_plan *plan, uint64_t q)
{
    if (plan->bits == 0 || q <= plan->key_min)
        return 0;
    const uint64_t top = ((uint64_t)1 << plan->bits) - 1u;
    if (q >= plan->key_max)
        return (uint32_t)top;
    const uint64_t u = (q - plan->key_min) >> plan->shift; /* shift < 64 when bits >= 1 */
    return (uint32_t)(u < top ? u : top);
}

/* The smallest key of bucket u (u <= 2^bits; saturates at key_max): every q with
 * psa_bucket(q) >= u is >= it, and every q with psa_bucket(q) < u is < it unless it saturated
 * (then q < key_max and its bucket is below u anyway). */
PSA_HD uint64_t psa_bucket_start(const psa_plan *plan, uint64_t u)
{
    if (u == 0)
        return plan->key_min;
    if (plan->bits == 0 || u >= ((uint64_t)1 << plan->bits))
        return plan->key_max;
    const uint64_t offset = u << plan->shift; /* u < 2^bits and shift = width - bits: no overflow */
    return offset > plan->key_max - plan->key_min ? plan->key_max : plan->key_min + offset;
}

#endif /* HARMONIA_PSA_H */
