/* ntg_device.cuh — the device-side building blocks of every NTG kernel, in the layers CUB uses:
 * the group search inside one node (warp scope: coalesced loads, one ballot and one shuffle) and
 * the root-to-leaf traversal (group scope), generic over the reader of a node's children.
 * Included by the kernel files of ntg/ only; the launches live there. */
#ifndef HARMONIA_NTG_DEVICE_CUH
#define HARMONIA_NTG_DEVICE_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "ntg/ntg.h"
}

template <typename K> __device__ __forceinline__ K max_key_of();
template <> __device__ __forceinline__ uint32_t max_key_of<uint32_t>() { return UINT32_MAX; }
template <> __device__ __forceinline__ uint64_t max_key_of<uint64_t>() { return UINT64_MAX; }

/* ------------------------------------------------------------------------------------------------
 * Group search in one node (warp scope).
 * The G threads of a group split the node's `slots` sorted keys into chunks of per = slots / G
 * (at least 1; with slots < G the extra threads hold empty chunks). Each thread counts the keys of
 * its chunk that satisfy the comparison (< q when STRICT, else <= q) with 16-byte loads. Keys are
 * sorted, so the full chunks form a prefix: one ballot counts them (f), and one shuffle fetches the
 * count of chunk f, the only partial one. No early exit.
 * ---------------------------------------------------------------------------------------------- */
template <typename K, bool STRICT>
__device__ __forceinline__ uint32_t count_chunk(const K *chunk, uint32_t per, K q)
{
    uint32_t count = 0;
    if (per * sizeof(K) >= 16) {
        const uint4 *vec = reinterpret_cast<const uint4 *>(chunk);
        const uint32_t n_vec = per * (uint32_t)sizeof(K) / 16;
        for (uint32_t v = 0; v < n_vec; v++) {
            uint4 raw = __ldg(vec + v);
            K part[16 / sizeof(K)];
            memcpy(part, &raw, 16);
#pragma unroll
            for (int k = 0; k < (int)(16 / sizeof(K)); k++)
                count += STRICT ? (part[k] < q) : (part[k] <= q);
        }
    } else {
        for (uint32_t k = 0; k < per; k++) {
            K key = __ldg(chunk + k);
            count += STRICT ? (key < q) : (key <= q);
        }
    }
    return count;
}

/* The fixed-shape search of one node: SLOTS (the node's key slots) known at compile time, so every
 * load, compare and count below is unrolled with constant offsets and the thread's loads issue
 * back to back. PER = SLOTS / G keys a thread (one key each for G >= SLOTS: then only SLOTS lanes
 * hold one). Up to NTG_BALLOT_COUNT_MAX keys a thread, the count is one ballot a key slot of the
 * thread (bit l of ballot k: key PER*l + k of the node satisfies the comparison) and their
 * popcounts: no shuffle in the chain. More keys a thread: the thread counts its chunk and the
 * ballot + shuffle of group_count give the group's total, as there. */
#ifndef NTG_BALLOT_COUNT_MAX
#define NTG_BALLOT_COUNT_MAX 4
#endif

/* L2 eviction priorities of a descent's loads (ntg_policy.h, NTG_L2_HINTS: which kernels use them).
 * HINTS is a mask: NTG_HINT_NODES loads the internal nodes evict_last, NTG_HINT_LEAVES the leaves'
 * keys and values evict_first; 0 plain read-only loads. The same loads and results either way: the
 * SASS differs only in the loads' memory descriptors (createpolicy + ld.global.nc.L2::cache_hint). */
#define NTG_HINT_NODES 1
#define NTG_HINT_LEAVES 2
enum { NTG_PRIORITY_NORMAL, NTG_PRIORITY_LAST, NTG_PRIORITY_FIRST };
/* The priority of a node search's loads: internal nodes (a descent's count of separators <= q) or a
 * leaf (LEAF: the strict count of a leaf search, and the value). */
template <int HINTS, bool LEAF> constexpr int hint_priority()
{
    return LEAF ? ((HINTS & NTG_HINT_LEAVES) ? NTG_PRIORITY_FIRST : NTG_PRIORITY_NORMAL)
                : ((HINTS & NTG_HINT_NODES) ? NTG_PRIORITY_LAST : NTG_PRIORITY_NORMAL);
}
/* (createpolicy and the L2 cache hints need sm_80: older targets load plainly) */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define NTG_HAVE_L2_HINTS 1
#else
#define NTG_HAVE_L2_HINTS 0
#endif
template <int PRIORITY> __device__ __forceinline__ uint64_t l2_policy()
{
    uint64_t policy = 0;
#if NTG_HAVE_L2_HINTS
    if constexpr (PRIORITY == NTG_PRIORITY_LAST)
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    else
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
    return policy;
}
template <int PRIORITY> __device__ __forceinline__ uint4 ld_priority(const uint4 *a)
{
    if constexpr (PRIORITY == NTG_PRIORITY_NORMAL || !NTG_HAVE_L2_HINTS) {
        return __ldg(a);
    } else {
        uint4 r;
        asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
            : "l"(a), "l"(l2_policy<PRIORITY>()));
        return r;
    }
}
template <int PRIORITY> __device__ __forceinline__ uint2 ld_priority(const uint2 *a)
{
    if constexpr (PRIORITY == NTG_PRIORITY_NORMAL || !NTG_HAVE_L2_HINTS) {
        return __ldg(a);
    } else {
        uint2 r;
        asm("ld.global.nc.L2::cache_hint.v2.u32 {%0, %1}, [%2], %3;" : "=r"(r.x), "=r"(r.y)
            : "l"(a), "l"(l2_policy<PRIORITY>()));
        return r;
    }
}
template <int PRIORITY> __device__ __forceinline__ uint32_t ld_priority(const uint32_t *a)
{
    if constexpr (PRIORITY == NTG_PRIORITY_NORMAL || !NTG_HAVE_L2_HINTS) {
        return __ldg(a);
    } else {
        uint32_t r;
        asm("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r) : "l"(a), "l"(l2_policy<PRIORITY>()));
        return r;
    }
}
template <int PRIORITY> __device__ __forceinline__ uint64_t ld_priority(const uint64_t *a)
{
    if constexpr (PRIORITY == NTG_PRIORITY_NORMAL || !NTG_HAVE_L2_HINTS) {
        return __ldg(a);
    } else {
        uint64_t r;
        asm("ld.global.nc.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(r) : "l"(a), "l"(l2_policy<PRIORITY>()));
        return r;
    }
}

template <typename K, int PER, int PRIORITY = NTG_PRIORITY_NORMAL>
__device__ __forceinline__ void load_chunk(const K *chunk, K (&part)[PER])
{
    if constexpr (PER * sizeof(K) % 16 == 0) {
        constexpr int per_vec = 16 / (int)sizeof(K);
        uint4 raw[PER / per_vec];
#pragma unroll
        for (int v = 0; v < PER / per_vec; v++)
            raw[v] = ld_priority<PRIORITY>(reinterpret_cast<const uint4 *>(chunk) + v);
#pragma unroll
        for (int v = 0; v < PER / per_vec; v++)
            memcpy(part + v * per_vec, &raw[v], 16);
    } else if constexpr (PER * sizeof(K) == 8) {
        const uint2 raw = ld_priority<PRIORITY>(reinterpret_cast<const uint2 *>(chunk));
        memcpy(part, &raw, 8);
    } else {
#pragma unroll
        for (int k = 0; k < PER; k++)
            part[k] = ld_priority<PRIORITY>(chunk + k);
    }
}

/* The group's count of the node's keys that satisfy the comparison, from the PER keys a thread
 * holds (has_chunk: whether it holds any). */
template <typename K, int G, int PER, bool STRICT>
__device__ __forceinline__ uint32_t count_held(const K (&part)[PER], bool has_chunk, K q, uint32_t group_shift)
{
    if constexpr (G == 1) {
        uint32_t count = 0;
#pragma unroll
        for (int k = 0; k < PER; k++)
            count += STRICT ? (part[k] < q) : (part[k] <= q);
        return count;
    } else if constexpr (PER <= NTG_BALLOT_COUNT_MAX) {
        const uint32_t group_bits = (G == 32 ? 0xffffffffu : ((1u << G) - 1u)) << group_shift;
        uint32_t count = 0;
#pragma unroll
        for (int k = 0; k < PER; k++)
            count += __popc(__ballot_sync(0xffffffffu, has_chunk && (STRICT ? part[k] < q : part[k] <= q)) & group_bits);
        return count;
    } else { /* PER > 1: every lane of the group holds a chunk */
        uint32_t count = 0;
#pragma unroll
        for (int k = 0; k < PER; k++)
            count += STRICT ? (part[k] < q) : (part[k] <= q);
        const uint32_t group_bits = G == 32 ? 0xffffffffu : ((1u << G) - 1u);
        const uint32_t full = __popc((__ballot_sync(0xffffffffu, count == (uint32_t)PER) >> group_shift) & group_bits);
        const uint32_t partial = __shfl_sync(0xffffffffu, count, full < (uint32_t)G ? full : 0, G);
        return full * PER + (full < (uint32_t)G ? partial : 0);
    }
}

/* Keys a thread of G holds of a node of SLOTS slots, and how many threads hold any. */
template <int G, int SLOTS> struct fixed_split {
    static constexpr int per = SLOTS >= G ? SLOTS / G : 1;
    static constexpr int chunks = SLOTS >= G ? G : SLOTS;
    static_assert(SLOTS % chunks == 0, "slots split evenly");
};

template <typename K, int G, int SLOTS, bool STRICT, int HINTS = 0>
__device__ __forceinline__ uint32_t group_count_fixed(const K *node, K q, uint32_t lane_in_group,
                                                      uint32_t group_shift, bool active = true)
{
    constexpr int PER = fixed_split<G, SLOTS>::per, CHUNKS = fixed_split<G, SLOTS>::chunks;
    const bool has_chunk = (CHUNKS == G || lane_in_group < (uint32_t)CHUNKS) && active;
    K part[PER] = {};
    if (has_chunk)
        load_chunk<K, PER, hint_priority<HINTS, STRICT>()>(node + lane_in_group * PER, part);
    return count_held<K, G, PER, STRICT>(part, has_chunk, q, group_shift);
}

/* A point lookup's leaf search with the leaf's values loaded beside its keys (the fixed shape, L
 * slots): each thread loads its chunk of both at once, so the value costs no second memory round
 * trip after the slot is known — for latency-bound batches; it reads the leaf's whole value line
 * where the two-step search reads one sector. The key and the value at the slot come from the lane
 * holding them (one shuffle each). Group-uniform results. */
template <typename K, int G, int L>
__device__ __forceinline__ void leaf_lookup_fixed(const K *leaf_keys, const K *leaf_values, K q, uint32_t lane_in_group,
                                                  uint32_t group_shift, bool max_key_present, bool *found, K *value)
{
    constexpr int PER = fixed_split<G, L>::per, CHUNKS = fixed_split<G, L>::chunks;
    const bool has_chunk = CHUNKS == G || lane_in_group < (uint32_t)CHUNKS;
    K keys[PER] = {}, vals[PER] = {};
    if (has_chunk) {
        load_chunk<K, PER>(leaf_keys + lane_in_group * PER, keys);
        load_chunk<K, PER>(leaf_values + lane_in_group * PER, vals);
    }
    const uint32_t slot = count_held<K, G, PER, true>(keys, has_chunk, q, group_shift);
    const uint32_t owner = slot < (uint32_t)L ? slot / PER : 0, element = slot % PER;
    K my_key = keys[0], my_value = vals[0];
#pragma unroll
    for (int e = 1; e < PER; e++)
        if (element == (uint32_t)e) {
            my_key = keys[e];
            my_value = vals[e];
        }
    const K at = __shfl_sync(0xffffffffu, my_key, group_shift + owner);
    const K val = __shfl_sync(0xffffffffu, my_value, group_shift + owner);
    *found = slot < (uint32_t)L && at == q && (q != max_key_of<K>() || max_key_present);
    *value = *found ? val : (K)0;
}

/* WARP_UNIFORM: every group of the warp calls this at the same point (the descents: no early exit,
 * dummy queries past the end), so the ballot and the shuffle name the whole warp — a constant mask.
 * Otherwise (the range-count walk, whose loop counts differ between groups) they name the group's
 * lanes only; a mask computed per lane costs a WARPSYNC per call (bench/NOTES.md, "Defaults and
 * where they were measured"). SLOTS: the node's slot count when known at compile time (0: read
 * `slots`); the fixed shape needs WARP_UNIFORM. active false (group-uniform): the group takes part
 * in the warp's ballots and reads nothing; its count is meaningless. */
template <typename K, int G, bool STRICT, bool WARP_UNIFORM, int SLOTS = 0, int HINTS = 0>
__device__ __forceinline__ uint32_t group_count(const K *node, uint32_t slots, K q,
                                                uint32_t lane_in_group, uint32_t group_shift, bool active = true)
{
    if constexpr (SLOTS != 0) {
        static_assert(WARP_UNIFORM, "the fixed shape's ballots name the whole warp");
        return group_count_fixed<K, G, SLOTS, STRICT, HINTS>(node, q, lane_in_group, group_shift, active);
    }
    static_assert(SLOTS != 0 || HINTS == 0, "load priorities on the fixed shape only");
    if (G == 1)
        return active ? count_chunk<K, STRICT>(node, slots, q) : 0u;
    const uint32_t per = slots >= (uint32_t)G ? slots / G : 1;
    const uint32_t chunks = slots >= (uint32_t)G ? (uint32_t)G : slots;
    const bool has_chunk = lane_in_group < chunks && active;
    uint32_t count = has_chunk ? count_chunk<K, STRICT>(node + lane_in_group * per, per, q) : 0;
    const uint32_t group_bits = G == 32 ? 0xffffffffu : ((1u << G) - 1u);
    const uint32_t group_mask = WARP_UNIFORM ? 0xffffffffu : group_bits << group_shift;
    const uint32_t full_mask = (__ballot_sync(group_mask, has_chunk && count == per) >> group_shift) & group_bits;
    const uint32_t full = __popc(full_mask);
    const uint32_t partial = __shfl_sync(group_mask, count, full < chunks ? full : 0, G);
    return full * per + (full < chunks ? partial : 0);
}

/* ------------------------------------------------------------------------------------------------
 * Traversal (group scope).
 * ---------------------------------------------------------------------------------------------- */
/* Children readers: the traversal takes one as a template argument and asks it for the children
 * of `node`, a node of internal level `level` (warp-uniform): the first child, and the last's
 * offset from it (child count - 1). Neither reads the first-child array itself: its even share
 * (prefix_sum.h) gives each level a closed form in the view, and the top cut (ntg.h) is a copy of
 * its first entries; so a level of a descent waits on one memory access, the node's keys. */
struct ntg_children_closed { /* the level's closed form: one uniform constant-bank read a level */
    __device__ __forceinline__ uint32_t operator()(const ntg_view &v, uint32_t level, uint32_t node,
                                                   uint32_t *last) const
    {
        return ps_level_children(&v.levels[level], node, last);
    }
};

/* The point-lookup and lower-bound kernels of ntg_kernels.cu: the top cut's levels from the cut (a
 * kernel parameter of its own, the constant bank: one address a node; CUT: ntg_top_cut or a
 * smaller copy), the others from their closed form. */
template <typename CUT> struct ntg_children_cut {
    const CUT &cut;
    __device__ __forceinline__ uint32_t operator()(const ntg_view &v, uint32_t level, uint32_t node,
                                                   uint32_t *last) const
    {
        if (level < cut.levels) {
            const uint32_t first = cut.first_child[node];
            *last = cut.first_child[node + 1] - first - 1;
            return first;
        }
        return ps_level_children(&v.levels[level], node, last);
    }
};

/* Where the descent of q begins: the start table's node and level for q's bucket (ntg.h), or the
 * root without a table. One 16-byte load (the view's table: the coarse one of ≤ 1 MiB, L2-resident,
 * or the fine one of ≤ 8 MiB; ntg_policy.h), a uniform branch. */
template <typename K>
__device__ __forceinline__ uint32_t start_of(const ntg_view &v, K q, uint32_t *level)
{
    *level = 0;
    if (!v.start)
        return 0;
    const uint4 e = __ldg(reinterpret_cast<const uint4 *>(v.start) + psa_bucket(&v.start_plan, (uint64_t)q));
    const uint64_t separator = (uint64_t)e.z | ((uint64_t)e.w << 32);
    *level = e.y & ~NTG_START_TWO;
    return e.x + ((e.y & NTG_START_TWO) && (uint64_t)q >= separator ? 1u : 0u);
}

/* The smallest of v over the warp (every lane calls it). */
__device__ __forceinline__ uint32_t warp_min(uint32_t v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(0xffffffffu, v);
#else
    for (int d = 16; d > 0; d /= 2) {
        const uint32_t o = __shfl_xor_sync(0xffffffffu, v, d);
        v = o < v ? o : v;
    }
    return v;
#endif
}

/* Leaf number (0-based) where the search for q ends: from where the start table says (the root
 * without one) down. With WARP_UNIFORM and G > 1 the warp's ballots need every group at every
 * level, so the loop runs from the warp's shallowest start and a group takes part, reading
 * nothing, until its own level comes. F: the fanout when known at compile time (0: the view's);
 * HINTS: the load priorities of the fixed shape's node searches (ntg_policy.h, NTG_L2_HINTS). */
template <typename K, int G, bool WARP_UNIFORM, typename CH, int F = 0, int HINTS = 0>
__device__ __forceinline__ uint64_t descend(const ntg_view &v, K q, uint32_t lane_in_group,
                                            uint32_t group_shift, CH children)
{
    const K *keys = static_cast<const K *>(v.keys);
    const uint32_t fanout = F ? (uint32_t)F : v.fanout;
    uint32_t from;
    uint32_t node = start_of<K>(v, q, &from); /* node numbers fit 32 bits (key_region.h, LIMITS) */
    uint32_t level = from;
    if constexpr (WARP_UNIFORM && G > 1)
        level = warp_min(from);
    for (; level + 1 < v.height; level++) {
        const bool active = level >= from;
        uint32_t last;
        const uint32_t first = children(v, level, active ? node : 0u, &last);
        const uint32_t j = group_count<K, G, false, WARP_UNIFORM, F, HINTS>(keys + (uint64_t)node * fanout, fanout,
                                                                             q, lane_in_group, group_shift, active);
        if (active)
            node = first + (j < last ? j : last);
    }
    return (uint64_t)node - v.n_internal;
}

/* The fixed-shape descent of Q queries a group at once (Q independent chains in flight a group
 * instead of one): each level first issues the Q node loads, then counts them, so that a group's
 * memory round trips overlap. The loop runs from the warp's shallowest start (the ballots name the
 * whole warp); a query whose level has not come yet takes part reading nothing. Leaf numbers out
 * (0-based). */
template <typename K, int G, int F, int Q, typename CH>
__device__ __forceinline__ void descend_multi(const ntg_view &v, const K (&q)[Q], uint32_t lane_in_group,
                                              uint32_t group_shift, CH children, uint32_t (&leaf)[Q])
{
    constexpr int PER = fixed_split<G, F>::per, CHUNKS = fixed_split<G, F>::chunks;
    const bool has_chunk = CHUNKS == G || lane_in_group < (uint32_t)CHUNKS;
    const K *keys = static_cast<const K *>(v.keys);
    uint32_t node[Q], from[Q];
    uint32_t level = 0xffffffffu;
#pragma unroll
    for (int k = 0; k < Q; k++) {
        node[k] = start_of<K>(v, q[k], &from[k]);
        level = from[k] < level ? from[k] : level;
    }
    if constexpr (G > 1)
        level = warp_min(level);
    for (; level + 1 < v.height; level++) {
        K part[Q][PER];
        uint32_t first[Q], last[Q];
#pragma unroll
        for (int k = 0; k < Q; k++) {
            const bool active = level >= from[k];
            first[k] = children(v, level, active ? node[k] : 0u, &last[k]);
#pragma unroll
            for (int e = 0; e < PER; e++)
                part[k][e] = 0;
            if (has_chunk && active)
                load_chunk<K, PER>(keys + (uint64_t)node[k] * F + lane_in_group * PER, part[k]);
        }
#pragma unroll
        for (int k = 0; k < Q; k++) {
            const bool active = level >= from[k];
            const uint32_t j = count_held<K, G, PER, false>(part[k], has_chunk && active, q[k], group_shift);
            if (active)
                node[k] = first[k] + (j < last[k] ? j : last[k]);
        }
    }
#pragma unroll
    for (int k = 0; k < Q; k++)
        leaf[k] = node[k] - (uint32_t)v.n_internal;
}

/* Number of keys < q, and where the first key >= q sits (leaf, slot; slot may equal its count).
 * F, L: the fanout and leaf size when known at compile time (0: the view's). */
template <typename K, int G, bool WARP_UNIFORM, typename CH, int F = 0, int L = 0>
__device__ __forceinline__ uint64_t rank_of(const ntg_view &v, K q, uint32_t lane_in_group,
                                            uint32_t group_shift, uint64_t *leaf_out, uint32_t *slot_out,
                                            CH children)
{
    const K *keys = static_cast<const K *>(v.keys);
    const uint32_t leaf_size = L ? (uint32_t)L : v.leaf_size;
    const uint64_t leaf = descend<K, G, WARP_UNIFORM, CH, F>(v, q, lane_in_group, group_shift, children);
    const uint32_t slot = group_count<K, G, true, WARP_UNIFORM, L>(keys + v.leaf_key_base + leaf * leaf_size, leaf_size, q,
                                                  lane_in_group, group_shift);
    *leaf_out = leaf;
    *slot_out = slot;
    return __ldg(v.leaf_rank + leaf) + slot;
}

/* The group's place in its warp. */
struct group_place {
    uint32_t lane_in_group, group_in_warp, group_shift;
    uint64_t warp, warps;
};

template <int G> __device__ __forceinline__ group_place place_of_thread()
{
    group_place p;
    const uint32_t lane = threadIdx.x & 31u;
    p.lane_in_group = lane % G;
    p.group_in_warp = lane / G;
    p.group_shift = p.group_in_warp * G;
    p.warp = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    p.warps = (uint64_t)gridDim.x * blockDim.x / 32u;
    return p;
}

#endif /* HARMONIA_NTG_DEVICE_CUH */
