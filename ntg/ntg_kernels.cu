/* ntg_kernels.cu — the GPU traversal kernels with narrowed thread groups (NTG), in three layers as
 * CUB does: the group search inside one node (warp scope: coalesced loads, one ballot and one
 * shuffle), the root-to-leaf traversal (group scope: a node's children from the tree's top cut of
 * the first-child array or its level's closed form, both in the kernel-parameter constant bank), and
 * the launches (device scope). The search of partitioned windows is ntg_partitioned.cu; the PSA
 * partition is psa/; the pipelines are harmonia/gpu_query.cu. */
#include <assert.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "ntg/ntg_device.cuh"
#include "ntg/ntg_policy.h"

/* The children readers (ntg_device.cuh): the point-lookup and lower-bound kernels take the tree's
 * top cut as a parameter of its own and read its levels from it — the generic kernels (F = 0) the
 * whole cut (up to PS_TOP_MAX_ENTRIES entries), the fixed-shape ones a copy of at most
 * NTG_SMALL_CUT_ENTRIES (the root's two by default; two levels of the fixed fanouts fit), so that
 * their launches carry ≈ 0.6 KiB of parameters instead of ≈ 2.5 (no measurable change in a small
 * call's time on the H100, bench/NOTES.md "Session 14"); a larger cut runs the generic kernels.
 * Every other kernel computes each level from its closed form and takes no cut. Parameters are
 * __grid_constant__: indexing the cut and the levels reads the parameter bank in place (no copy to
 * local memory). */
struct ntg_small_cut {
    uint32_t levels, entries;
    uint32_t first_child[NTG_SMALL_CUT_ENTRIES];
};
static_assert(1 + NTG_FIXED_FANOUT_32 + 1 <= NTG_SMALL_CUT_ENTRIES && 1 + NTG_FIXED_FANOUT_64 + 1 <= NTG_SMALL_CUT_ENTRIES,
              "two levels of the fixed fanouts fit the small cut");
template <int F> using cut_param = typename std::conditional<F == 0, ntg_top_cut, ntg_small_cut>::type;

/* The end of a signalled launch (ntg_signal, ntg.h), as cooperative groups' grid barrier arrives:
 * the block's threads meet at a barrier, then its first thread fences at device scope (ordering
 * every write of the block before it) and counts the block; the last block's, after a system-wide
 * fence, resets the counter and writes the sequence number to the host's word. Every thread
 * reaches it (the kernels' loops are warp-uniform, with no early exit). A fence in every thread
 * instead cost the 2^18- and 2^20-query calls 12-20 % (many short blocks each retire later:
 * bench/NOTES.md, "Session 28", call 2). */
__device__ __forceinline__ void signal_done(const ntg_signal &s)
{
    if (!s.flag)
        return;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(s.blocks_done, 1u) == gridDim.x - 1) {
            atomicExch(s.blocks_done, 0u);
            __threadfence_system();
            *(volatile unsigned int *)s.flag = s.sequence;
        }
    }
}
static const ntg_signal no_signal = {NULL, NULL, 0};

/* ------------------------------------------------------------------------------------------------
 * Kernels (device scope). Every warp loops over its share of queries in steps of 32 / G queries;
 * groups past the end follow along with a dummy query (the loops stay warp-uniform, so that the
 * warp-wide copies of long ranges can run).
 * ---------------------------------------------------------------------------------------------- */

/* F, L: the tree's fanout and leaf size when the kernel is compiled for them (NTG_FIXED_*; the
 * node searches unrolled with constant offsets), 0 when read from the view. VALUES_WITH_LEAF (fixed
 * shape only): the leaf's values loaded beside its keys (leaf_lookup_fixed), for small batches.
 * HINTS (fixed shape only): the loads' L2 priorities (ntg_device.cuh; ntg_policy.h, NTG_L2_HINTS). */
template <typename K, int G, int F = 0, int L = 0, bool VALUES_WITH_LEAF = false, int HINTS = 0>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS)
lookup_kernel(const __grid_constant__ ntg_view v, const __grid_constant__ cut_param<F> cut,
              const K *__restrict__ queries, const uint32_t *__restrict__ positions,
              uint64_t n, K *__restrict__ values_out, uint8_t *__restrict__ found_out,
              const psa_positions positions_out, const ntg_signal signal)
{
    const group_place p = place_of_thread<G>();
    const uint64_t per_warp = 32 / G;
    const K *keys = static_cast<const K *>(v.keys);
    const K *values = static_cast<const K *>(v.leaf_values);
    for (uint64_t base = p.warp * per_warp; base < n; base += p.warps * per_warp) {
        const uint64_t i = base + p.group_in_warp;
        const bool active = i < n;
        const K q = active ? queries[i] : queries[base];
        const uint32_t leaf_size = L ? (uint32_t)L : v.leaf_size;
        const ntg_children_cut<cut_param<F>> children{cut};
        const uint64_t leaf =
            descend<K, G, true, decltype(children), F, HINTS>(v, q, p.lane_in_group, p.group_shift, children);
        const K *leaf_keys = keys + v.leaf_key_base + leaf * leaf_size;
        bool found = false;
        K value = 0;
        uint32_t slot = 0;
        if constexpr (VALUES_WITH_LEAF) {
            static_assert(L != 0, "the fixed shape");
            leaf_lookup_fixed<K, G, L>(leaf_keys, values + leaf * L, q, p.lane_in_group, p.group_shift,
                                       v.max_key_present, &found, &value);
        } else {
            slot = group_count<K, G, true, true, L, HINTS>(leaf_keys, leaf_size, q, p.lane_in_group, p.group_shift);
        }
        if (active && p.lane_in_group == 0) {
            if constexpr (!VALUES_WITH_LEAF) {
                found = slot < leaf_size && __ldg(leaf_keys + slot) == q && (q != max_key_of<K>() || v.max_key_present);
                value = found ? ld_priority<hint_priority<HINTS, true>()>(values + leaf * leaf_size + slot) : (K)0;
            }
            uint64_t out = i;
            if (positions_out.out)
                psa_put_position(positions_out, i, positions ? positions[i] : i);
            else if (positions)
                out = positions[i];
            values_out[out] = value;
            found_out[out] = found;
        }
    }
    signal_done(signal);
}

/* Point lookups with Q queries a group in flight (descend_multi, ntg_device.cuh): the fixed shape
 * (F, L), the value loaded once the slot is known. A warp takes Q * 32 / G consecutive queries a
 * step, its groups the k-th run of 32 / G for k < Q, so each k's stores stay coalesced; the key at
 * the slot comes from the lane that holds it (one shuffle), not from a second load. Output indexing
 * as lookup_kernel's without positions_out (it never writes positions: launch_lookup_multi leaves
 * such calls to lookup_kernel — the width's branch and the base took 32 → 37 registers at G = 4,
 * eight blocks an SM → six, and the descent path's rows 8-10 % on the H200, session 31). */
template <typename K, int G, int F, int L, int Q>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS)
lookup_multi_kernel(const __grid_constant__ ntg_view v, const __grid_constant__ ntg_small_cut cut,
                    const K *__restrict__ queries, const uint32_t *__restrict__ positions, uint64_t n,
                    K *__restrict__ values_out, uint8_t *__restrict__ found_out)
{
    const group_place p = place_of_thread<G>();
    constexpr uint64_t per_warp = 32 / G;
    constexpr int PER = fixed_split<G, L>::per, CHUNKS = fixed_split<G, L>::chunks;
    const bool has_chunk = CHUNKS == G || p.lane_in_group < (uint32_t)CHUNKS;
    const K *keys = static_cast<const K *>(v.keys);
    const K *values = static_cast<const K *>(v.leaf_values);
    const ntg_children_cut<ntg_small_cut> children{cut};
    for (uint64_t base = p.warp * per_warp * Q; base < n; base += p.warps * per_warp * Q) {
        uint64_t idx[Q];
        K q[Q];
#pragma unroll
        for (int k = 0; k < Q; k++) {
            idx[k] = base + k * per_warp + p.group_in_warp;
            q[k] = idx[k] < n ? queries[idx[k]] : queries[base];
        }
        uint32_t leaf[Q];
        descend_multi<K, G, F, Q>(v, q, p.lane_in_group, p.group_shift, children, leaf);
        K part[Q][PER];
#pragma unroll
        for (int k = 0; k < Q; k++) {
#pragma unroll
            for (int e = 0; e < PER; e++)
                part[k][e] = 0;
            if (has_chunk)
                load_chunk<K, PER>(keys + v.leaf_key_base + (uint64_t)leaf[k] * L + p.lane_in_group * PER, part[k]);
        }
        bool found[Q];
        uint32_t slot[Q];
#pragma unroll
        for (int k = 0; k < Q; k++) {
            slot[k] = count_held<K, G, PER, true>(part[k], has_chunk, q[k], p.group_shift);
            const uint32_t owner = slot[k] < (uint32_t)L ? slot[k] / PER : 0, element = slot[k] % PER;
            K mine = part[k][0];
#pragma unroll
            for (int e = 1; e < PER; e++)
                if (element == (uint32_t)e)
                    mine = part[k][e];
            const K at = __shfl_sync(0xffffffffu, mine, p.group_shift + owner);
            found[k] = idx[k] < n && slot[k] < (uint32_t)L && at == q[k] && (q[k] != max_key_of<K>() || v.max_key_present);
        }
        if (p.lane_in_group == 0) {
            K value[Q];
#pragma unroll
            for (int k = 0; k < Q; k++)
                value[k] = found[k] ? __ldg(values + (uint64_t)leaf[k] * L + slot[k]) : (K)0;
#pragma unroll
            for (int k = 0; k < Q; k++) {
                if (idx[k] >= n)
                    continue;
                const uint64_t out = positions ? positions[idx[k]] : idx[k];
                values_out[out] = value[k];
                found_out[out] = found[k];
            }
        }
    }
}

template <typename K, int G, int F = 0, int L = 0>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS)
lower_bound_kernel(const __grid_constant__ ntg_view v, const __grid_constant__ cut_param<F> cut,
                   const K *__restrict__ queries, const uint32_t *__restrict__ positions,
                   uint64_t n, K *__restrict__ keys_out, K *__restrict__ values_out, uint8_t *__restrict__ found_out,
                   const ntg_signal signal)
{
    const group_place p = place_of_thread<G>();
    const uint64_t per_warp = 32 / G;
    const K *keys = static_cast<const K *>(v.keys);
    const K *values = static_cast<const K *>(v.leaf_values);
    for (uint64_t base = p.warp * per_warp; base < n; base += p.warps * per_warp) {
        const uint64_t i = base + p.group_in_warp;
        const bool active = i < n;
        const K q = active ? queries[i] : queries[base];
        uint64_t leaf;
        uint32_t slot;
        const ntg_children_cut<cut_param<F>> children{cut};
        rank_of<K, G, true, decltype(children), F, L>(v, q, p.lane_in_group, p.group_shift, &leaf, &slot, children);
        const uint32_t leaf_size = L ? (uint32_t)L : v.leaf_size;
        if (active && p.lane_in_group == 0) {
            const uint64_t in_leaf = __ldg(v.leaf_rank + leaf + 1) - __ldg(v.leaf_rank + leaf);
            if (slot >= in_leaf) { /* the answer, if any, is the next leaf's first key (>=: a damaged
                                      leaf rank of an unverified tree must not read past the leaves) */
                leaf++;
                slot = 0;
            }
            const bool found = leaf < v.n_leaves && v.n_keys > 0;
            const uint64_t out = positions ? positions[i] : i;
            if (keys_out)
                keys_out[out] = found ? __ldg(keys + v.leaf_key_base + leaf * leaf_size + slot) : (K)0;
            if (values_out)
                values_out[out] = found ? __ldg(values + leaf * leaf_size + slot) : (K)0;
            found_out[out] = found;
        }
    }
    signal_done(signal);
}

/* The range count takes every level's children from its closed form, the cut's levels too: with
 * the cut's branch in its two descents the count ran 5 % slower than with the first-child array,
 * without it 5 % faster (H100, bench/NOTES.md, "Each level's children from its closed form"). */
template <typename K, int G>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS)
range_count_kernel(const __grid_constant__ ntg_view v, const K *__restrict__ lo, const K *__restrict__ hi, uint64_t n,
                   uint64_t *__restrict__ counts_out)
{
    const group_place p = place_of_thread<G>();
    const uint64_t per_warp = 32 / G;
    for (uint64_t base = p.warp * per_warp; base < n; base += p.warps * per_warp) {
        const uint64_t i = base + p.group_in_warp;
        const bool active = i < n;
        const K a = active ? lo[i] : lo[base], b = active ? hi[i] : hi[base];
        uint64_t leaf;
        uint32_t slot;
        const uint64_t below_lo = rank_of<K, G, true>(v, a, p.lane_in_group, p.group_shift, &leaf, &slot, ntg_children_closed());
        /* keys <= b: all when b is the maximum, else the rank of b + 1: walk forward from the lower
         * bound's leaf while every key of the leaf is < b + 1 (a short range ends there), and
         * descend again only when the walk is too long */
        uint64_t up_to_b = v.n_keys;
        if (b != max_key_of<K>()) {
            const K after_b = (K)(b + 1);
            const K *keys = static_cast<const K *>(v.keys);
            bool found = false;
            uint64_t j = leaf;
            for (int step = 0; step < NTG_RANGE_WALK_LEAVES && !found; step++, j++) {
                const uint64_t rank_j = __ldg(v.leaf_rank + j), in_leaf = __ldg(v.leaf_rank + j + 1) - rank_j;
                const uint32_t below = group_count<K, G, true, false>(keys + v.leaf_key_base + j * v.leaf_size, v.leaf_size,
                                                               after_b, p.lane_in_group, p.group_shift);
                if (below < in_leaf || j + 1 == v.n_leaves) {
                    up_to_b = rank_j + below;
                    found = true;
                }
            }
            if (!found)
                up_to_b = rank_of<K, G, false>(v, after_b, p.lane_in_group, p.group_shift, &leaf, &slot, ntg_children_closed());
        }
        if (active && p.lane_in_group == 0)
            counts_out[i] = a > b || up_to_b < below_lo ? 0 : up_to_b - below_lo; /* no wrap on damaged ranks */
    }
}

/* The leaf holding global rank r (r < n_keys): the last leaf whose rank is <= r. */
__device__ __forceinline__ uint64_t leaf_of_rank(const ntg_view &v, uint64_t r)
{
    uint64_t lo = 0, hi = v.n_leaves;
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (__ldg(v.leaf_rank + mid) <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Copies `remaining` pairs from (leaf, slot) on, leaf by leaf, to out: thread `lane` of `width`
 * threads takes every width-th pair, so each leaf's run is read and written coalesced. */
template <typename K>
__device__ __forceinline__ void copy_range(const ntg_view &v, const K *keys, const K *values, uint64_t leaf,
                                           uint32_t slot, uint64_t remaining, uint64_t out, uint32_t lane,
                                           uint32_t width, K *keys_out, K *values_out)
{
    /* leaves all full from (leaf, slot) to the range's end: the pairs lie consecutive in the leaf
     * level (full leaves have no padding), one flat coalesced copy */
    if (remaining > 0 && slot < v.leaf_size) {
        const uint64_t last = leaf + (slot + remaining - 1) / v.leaf_size;
        if (last < v.n_leaves &&
            __ldg(v.leaf_rank + last + 1) - __ldg(v.leaf_rank + leaf) == (last + 1 - leaf) * v.leaf_size) {
            const uint64_t first = leaf * v.leaf_size + slot;
            const K *src_keys = keys + v.leaf_key_base + first, *src_values = values + first;
            /* four elements per lane per step, loads first: more bytes in flight per warp */
            uint64_t k = lane;
            for (; k + 3 * width < remaining; k += 4 * width) {
                K a[4], b[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    a[u] = keys_out ? __ldg(src_keys + k + u * width) : (K)0;
                    b[u] = values_out ? __ldg(src_values + k + u * width) : (K)0;
                }
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    if (keys_out)
                        keys_out[out + k + u * width] = a[u];
                    if (values_out)
                        values_out[out + k + u * width] = b[u];
                }
            }
            for (; k < remaining; k += width) {
                if (keys_out)
                    keys_out[out + k] = __ldg(src_keys + k);
                if (values_out)
                    values_out[out + k] = __ldg(src_values + k);
            }
            return;
        }
    }
    while (remaining > 0 && leaf < v.n_leaves) { /* offsets of another tree version end the walk */
        const uint64_t in_leaf = __ldg(v.leaf_rank + leaf + 1) - __ldg(v.leaf_rank + leaf);
        if (slot >= in_leaf) {
            leaf++;
            slot = 0;
            continue;
        }
        const uint64_t take = in_leaf - slot < remaining ? in_leaf - slot : remaining;
        const K *src_keys = keys + v.leaf_key_base + leaf * v.leaf_size + slot;
        const K *src_values = values + leaf * v.leaf_size + slot;
        for (uint64_t k = lane; k < take; k += width) {
            if (keys_out)
                keys_out[out + k] = __ldg(src_keys + k);
            if (values_out)
                values_out[out + k] = __ldg(src_values + k);
        }
        out += take;
        remaining -= take;
        leaf++;
        slot = 0;
    }
}

/* The collect of ranges by groups of G threads (one range a group, warps striding over the grid). */
template <typename K, int G>
__device__ __forceinline__ void collect_ranges(const ntg_view &v, const K *__restrict__ lo,
                                               const uint64_t *__restrict__ skip, uint64_t n,
                                               const uint64_t *__restrict__ offsets, uint64_t offset_base,
                                               K *__restrict__ keys_out, K *__restrict__ values_out)
{
    const group_place p = place_of_thread<G>();
    const uint64_t per_warp = 32 / G;
    const K *keys = static_cast<const K *>(v.keys);
    const K *values = static_cast<const K *>(v.leaf_values);
    for (uint64_t base = p.warp * per_warp; base < n; base += p.warps * per_warp) {
        const uint64_t i = base + p.group_in_warp;
        const bool active = i < n;
        const K a = active ? lo[i] : lo[base];
        uint64_t leaf;
        uint32_t slot;
        const uint64_t start_rank = rank_of<K, G, true>(v, a, p.lane_in_group, p.group_shift, &leaf, &slot, ntg_children_closed());
        /* offsets that decrease (not phase 1's: a caller's mistake) give an empty range, never an
         * underflowed length written far past the outputs */
        const uint64_t at = active ? offsets[i] : 0, end = active ? offsets[i + 1] : 0;
        uint64_t remaining = end > at ? end - at : 0;
        uint64_t out = active ? at - offset_base : 0;
        const uint64_t skipped = active && skip ? skip[i] : 0;
        if (skipped > 0 && remaining > 0) { /* a piece of a long range: jump to its rank */
            leaf = leaf_of_rank(v, start_rank + skipped);
            slot = (uint32_t)(start_rank + skipped - __ldg(v.leaf_rank + leaf));
        }
        /* short ranges: the group copies, leaf by leaf, its threads on consecutive slots */
        if (remaining <= NTG_WARP_COPY_MIN) {
            copy_range<K>(v, keys, values, leaf, slot, remaining, out, p.lane_in_group, G, keys_out, values_out);
            remaining = 0;
        }
        /* long ranges: the whole warp copies each in turn (the loop and the broadcasts are uniform) */
        __syncwarp();
        for (uint32_t k = 0; k < 32 / G; k++) {
            const uint32_t leader = k * G;
            const uint64_t r = __shfl_sync(0xffffffffu, remaining, leader);
            if (r == 0)
                continue;
            copy_range<K>(v, keys, values, __shfl_sync(0xffffffffu, leaf, leader),
                          __shfl_sync(0xffffffffu, slot, leader), r, __shfl_sync(0xffffffffu, out, leader),
                          threadIdx.x & 31u, 32, keys_out, values_out);
        }
    }
}

template <typename K, int G>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS)
range_collect_kernel(const __grid_constant__ ntg_view v, const K *__restrict__ lo, const uint64_t *__restrict__ skip,
                     uint64_t n, const uint64_t *__restrict__ offsets, uint64_t offset_base,
                     K *__restrict__ keys_out, K *__restrict__ values_out)
{
    collect_ranges<K, G>(v, lo, skip, n, offsets, offset_base, keys_out, values_out);
}

/* One G's collect as a function of its own: the kernel below holds six of them, and inlined
 * together they take far more registers than each alone. */
template <typename K, int G>
__device__ __noinline__ void collect_ranges_call(const ntg_view &v, const K *__restrict__ lo, uint64_t n,
                                                 const uint64_t *__restrict__ offsets, K *__restrict__ keys_out,
                                                 K *__restrict__ values_out)
{
    collect_ranges<K, G>(v, lo, NULL, n, offsets, 0, keys_out, values_out);
}

/* The same with G picked here from the ranges' mean length (offsets[n] - offsets[0]) / n, as the
 * host would pick it (ntg_collect_group_size), so that device offsets are never read back: every
 * thread reads the two words (L2 hits after the first) and takes the same branch. */
template <typename K>
__global__ void __launch_bounds__(NTG_BLOCK_THREADS, NTG_COLLECT_AUTO_MIN_BLOCKS)
range_collect_auto_kernel(const __grid_constant__ ntg_view v, const K *__restrict__ lo, uint64_t n,
                          const uint64_t *__restrict__ offsets, uint32_t short_group, K *__restrict__ keys_out,
                          K *__restrict__ values_out)
{
    const uint64_t first = __ldg(offsets), last = __ldg(offsets + n);
    switch (ntg_collect_group_size(last >= first ? last - first : 0, n, short_group, v.fanout)) {
    case 1: collect_ranges_call<K, 1>(v, lo, n, offsets, keys_out, values_out); break;
    case 2: collect_ranges_call<K, 2>(v, lo, n, offsets, keys_out, values_out); break;
    case 4: collect_ranges_call<K, 4>(v, lo, n, offsets, keys_out, values_out); break;
    case 8: collect_ranges_call<K, 8>(v, lo, n, offsets, keys_out, values_out); break;
    case 16: collect_ranges_call<K, 16>(v, lo, n, offsets, keys_out, values_out); break;
    default: collect_ranges_call<K, 32>(v, lo, n, offsets, keys_out, values_out); break;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Launchers: pick the instantiation for (key width, G; the fixed shape and small batches for point
 * lookups and lower bounds).
 * ---------------------------------------------------------------------------------------------- */
/* The launchers' preconditions on a view (internal invariants: the front builds views). */
static void assert_view(const ntg_view *v)
{
    assert(v->key_bits == 32 || v->key_bits == 64);
    assert(v->height <= NTG_MAX_LEVELS);
    assert(v->n_leaves >= 1 && v->height >= 1);
    (void)v;
}

/* ... and on a cut (NULL: none). */
static void assert_cut(const ntg_view *v, const ntg_top_cut *cut)
{
    assert(!cut || (cut->entries <= PS_TOP_MAX_ENTRIES && cut->entries <= v->n_internal + 1));
    assert(!cut || cut->levels == 0 || cut->levels < v->height);
    (void)v;
    (void)cut;
}

/* The cut a generic kernel takes: the tree's, or none (no levels). */
static const ntg_top_cut no_cut = {0, 0, {0}};

/* The fixed-shape kernels' copy of a cut; false when it does not fit (then the generic kernels run). */
static bool small_cut(const ntg_top_cut *cut, ntg_small_cut *out)
{
    memset(out, 0, sizeof *out);
    if (!cut || cut->levels == 0)
        return true;
    if (cut->entries > NTG_SMALL_CUT_ENTRIES)
        return false;
    out->levels = cut->levels;
    out->entries = cut->entries;
    memcpy(out->first_child, cut->first_child, cut->entries * sizeof(uint32_t));
    return true;
}

static unsigned grid_for(uint64_t n, uint32_t group_size)
{
    const uint64_t queries_per_block = NTG_BLOCK_THREADS / group_size;
    uint64_t blocks = (n + queries_per_block - 1) / queries_per_block;
    if (blocks > NTG_MAX_BLOCKS)
        blocks = NTG_MAX_BLOCKS;
    return blocks ? (unsigned)blocks : 1u;
}

/* The one switch from a runtime G to the kernels' template argument: calls launch with
 * std::integral_constant<int, G> (G is one of ntg_valid_group_size's; the launchers check it). */
template <typename LAUNCH> static void with_group_size(uint32_t g, LAUNCH &&launch)
{
    switch (g) {
    case 1: launch(std::integral_constant<int, 1>()); break;
    case 2: launch(std::integral_constant<int, 2>()); break;
    case 4: launch(std::integral_constant<int, 4>()); break;
    case 8: launch(std::integral_constant<int, 8>()); break;
    case 16: launch(std::integral_constant<int, 16>()); break;
    default: launch(std::integral_constant<int, 32>()); break;
    }
}

/* The fanout of the fixed-shape kernels of key type K. */
template <typename K> constexpr int fixed_fanout() { return sizeof(K) == 4 ? NTG_FIXED_FANOUT_32 : NTG_FIXED_FANOUT_64; }

/* The multi-query kernel at (G, Q) when it has an instantiation; false: none. Only what the policy
 * can pick is compiled (ntg_policy.h: Q = 2 for 64-bit keys, at the policy's G = 4 or a config's
 * G = 2 or 8): Q = 4 (64 registers at 64-bit G = 4) and 32-bit keys at Q = 2 measured slower
 * (bench/NOTES.md, "Session 20"; multi_probe measured them at 3694627). */
template <typename K, int F, int L>
static bool launch_lookup_multi(const ntg_view *v, const ntg_small_cut &cut, uint32_t g, uint32_t q,
                                const K *queries, const uint32_t *positions, uint64_t n, K *values_out,
                                uint8_t *found_out, psa_positions positions_out, cudaStream_t stream)
{
    if (sizeof(K) != 8 || q != 2 || (g != 2 && g != 4 && g != 8) || positions_out.out)
        return false;
    const unsigned grid = grid_for((n + q - 1) / q, g);
    with_group_size(g, [&](auto group) {
        constexpr int G = decltype(group)::value;
        if constexpr (sizeof(K) == 8 && (G == 2 || G == 4 || G == 8))
            lookup_multi_kernel<K, G, F, L, 2><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, cut, queries, positions, n, values_out, found_out);
    });
    return true;
}

/* scattered: queries in no particular order (ntg_launch_lookup), whose large batches read each
 * leaf once and the internal levels in every lookup: their launches take the load priorities
 * (ntg_policy.h, NTG_L2_HINTS); grouped queries (ntg_launch_lookup_q: PSA's descent path, whose
 * neighbours share leaves) keep plain loads. */
template <typename K>
static void launch_lookup(const ntg_view *v, const ntg_top_cut *cut, uint32_t g, uint32_t q_per_group,
                          bool scattered, const K *queries, const uint32_t *positions, uint64_t n, K *values_out,
                          uint8_t *found_out, psa_positions positions_out, const ntg_signal *signal,
                          cudaStream_t stream)
{
    constexpr int F = fixed_fanout<K>(), L = NTG_FIXED_LEAF;
    ntg_small_cut small_copy;
    const bool fixed = ntg_fixed_shape(v->fanout, v->leaf_size, v->key_bits) && small_cut(cut, &small_copy);
    const bool small = n < NTG_VALUES_WITH_LEAF_BATCH;
    const bool hinted = NTG_L2_HINTS != 0 && scattered && n >= NTG_L2_HINTS_BATCH;
    const ntg_signal sig = signal ? *signal : no_signal;
    if (fixed && !small && q_per_group > 1 && !signal &&
        launch_lookup_multi<K, F, L>(v, small_copy, g, q_per_group, queries, positions, n, values_out, found_out,
                                     positions_out, stream))
        return;
    const unsigned grid = grid_for(n, g);
    with_group_size(g, [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (fixed && small)
            lookup_kernel<K, G, F, L, true><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, small_copy, queries, positions, n, values_out, found_out, positions_out, sig);
        else if (fixed && hinted)
            lookup_kernel<K, G, F, L, false, NTG_L2_HINTS><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, small_copy, queries, positions, n, values_out, found_out, positions_out, sig);
        else if (fixed)
            lookup_kernel<K, G, F, L><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, small_copy, queries, positions, n, values_out, found_out, positions_out, sig);
        else
            lookup_kernel<K, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(*v, cut ? *cut : no_cut, queries, positions, n,
                                                                         values_out, found_out, positions_out,
                                                                         sig);
    });
}

template <typename K>
static void launch_lower_bound(const ntg_view *v, const ntg_top_cut *cut, uint32_t g, const K *queries,
                               const uint32_t *positions, uint64_t n, K *keys_out, K *values_out, uint8_t *found_out,
                               const ntg_signal *signal, cudaStream_t stream)
{
    const ntg_signal sig = signal ? *signal : no_signal;
    constexpr int F = fixed_fanout<K>(), L = NTG_FIXED_LEAF;
    ntg_small_cut small_copy;
    const bool fixed = ntg_fixed_shape(v->fanout, v->leaf_size, v->key_bits) && small_cut(cut, &small_copy);
    const unsigned grid = grid_for(n, g);
    with_group_size(g, [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (fixed)
            lower_bound_kernel<K, G, F, L><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(*v, small_copy, queries, positions, n,
                                                                                   keys_out, values_out, found_out, sig);
        else
            lower_bound_kernel<K, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(*v, cut ? *cut : no_cut, queries,
                                                                             positions, n, keys_out, values_out,
                                                                             found_out, sig);
    });
}

static cudaError_t launch_lookup_any(const ntg_view *v, const ntg_top_cut *cut, uint32_t g,
                                     uint32_t queries_per_group, bool scattered, const void *queries,
                                     const uint32_t *positions, uint64_t n, void *values_out, uint8_t *found_out,
                                     psa_positions positions_out, const ntg_signal *signal, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!ntg_valid_group_size(g) || queries_per_group == 0)
        return cudaErrorInvalidValue;
    assert_view(v);
    assert_cut(v, cut);
    if (v->key_bits == 32)
        launch_lookup<uint32_t>(v, cut, g, queries_per_group, scattered, (const uint32_t *)queries, positions, n,
                                (uint32_t *)values_out, found_out, positions_out, signal, stream);
    else
        launch_lookup<uint64_t>(v, cut, g, queries_per_group, scattered, (const uint64_t *)queries, positions, n,
                                (uint64_t *)values_out, found_out, positions_out, signal, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_lookup_q(const ntg_view *v, const ntg_top_cut *cut, uint32_t g,
                                           uint32_t queries_per_group, const void *queries,
                                           const uint32_t *positions, uint64_t n, void *values_out,
                                           uint8_t *found_out, psa_positions positions_out, cudaStream_t stream)
{
    return launch_lookup_any(v, cut, g, queries_per_group, false, queries, positions, n, values_out, found_out,
                             positions_out, NULL, stream);
}

extern "C" cudaError_t ntg_launch_lookup(const ntg_view *v, const ntg_top_cut *cut, uint32_t g, const void *queries,
                                         const uint32_t *positions, uint64_t n, void *values_out,
                                         uint8_t *found_out, psa_positions positions_out, const ntg_signal *signal,
                                         cudaStream_t stream)
{
    return launch_lookup_any(v, cut, g, 1, true, queries, positions, n, values_out, found_out, positions_out,
                             signal, stream);
}

extern "C" cudaError_t ntg_launch_lower_bound(const ntg_view *v, const ntg_top_cut *cut, uint32_t g,
                                              const void *queries, const uint32_t *positions, uint64_t n,
                                              void *keys_out, void *values_out, uint8_t *found_out,
                                              const ntg_signal *signal, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!ntg_valid_group_size(g))
        return cudaErrorInvalidValue;
    assert_view(v);
    assert_cut(v, cut);
    if (v->key_bits == 32)
        launch_lower_bound<uint32_t>(v, cut, g, (const uint32_t *)queries, positions, n, (uint32_t *)keys_out,
                                     (uint32_t *)values_out, found_out, signal, stream);
    else
        launch_lower_bound<uint64_t>(v, cut, g, (const uint64_t *)queries, positions, n, (uint64_t *)keys_out,
                                     (uint64_t *)values_out, found_out, signal, stream);
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_range_count(const ntg_view *v, uint32_t g, const void *lo, const void *hi,
                                              uint64_t n, uint64_t *counts_out, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!ntg_valid_group_size(g))
        return cudaErrorInvalidValue;
    assert_view(v);
    const unsigned grid = grid_for(n, g);
    with_group_size(g, [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (v->key_bits == 32)
            range_count_kernel<uint32_t, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, (const uint32_t *)lo, (const uint32_t *)hi, n, counts_out);
        else
            range_count_kernel<uint64_t, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, (const uint64_t *)lo, (const uint64_t *)hi, n, counts_out);
    });
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_range_collect(const ntg_view *v, uint32_t g, const void *lo,
                                                const uint64_t *skip, uint64_t n, const uint64_t *offsets,
                                                uint64_t offset_base, void *keys_out, void *values_out,
                                                cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!ntg_valid_group_size(g))
        return cudaErrorInvalidValue;
    assert_view(v);
    const unsigned grid = grid_for(n, g);
    with_group_size(g, [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (v->key_bits == 32)
            range_collect_kernel<uint32_t, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, (const uint32_t *)lo, skip, n, offsets, offset_base, (uint32_t *)keys_out, (uint32_t *)values_out);
        else
            range_collect_kernel<uint64_t, G><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
                *v, (const uint64_t *)lo, skip, n, offsets, offset_base, (uint64_t *)keys_out, (uint64_t *)values_out);
    });
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_range_collect_auto(const ntg_view *v, uint32_t short_group, const void *lo,
                                                     uint64_t n, const uint64_t *offsets, void *keys_out,
                                                     void *values_out, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!ntg_valid_group_size(short_group))
        return cudaErrorInvalidValue;
    assert_view(v);
    /* the smallest and largest G the kernel can pick: blocks for the smallest, and for the largest
     * up to the fill */
    const uint32_t g_max = ntg_collect_group_size(512, 1, short_group, v->fanout);
    const uint32_t g_mid = ntg_collect_group_size(32, 1, short_group, v->fanout);
    const uint32_t g_min = short_group < g_mid ? short_group : g_mid;
    unsigned grid = grid_for(n, g_max);
    if (grid > NTG_COLLECT_FILL_BLOCKS)
        grid = NTG_COLLECT_FILL_BLOCKS;
    if (grid < grid_for(n, g_min))
        grid = grid_for(n, g_min);
    if (v->key_bits == 32)
        range_collect_auto_kernel<uint32_t><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
            *v, (const uint32_t *)lo, n, offsets, short_group, (uint32_t *)keys_out, (uint32_t *)values_out);
    else
        range_collect_auto_kernel<uint64_t><<<grid, NTG_BLOCK_THREADS, 0, stream>>>(
            *v, (const uint64_t *)lo, n, offsets, short_group, (uint64_t *)keys_out, (uint64_t *)values_out);
    return cudaGetLastError();
}
