/* ntg_partitioned.cu — point lookups and lower bounds of a window that PSA partitioned by bucket
 * (psa.h): each block takes a tile of consecutive slots, whose queries fall in a few neighbouring
 * buckets, hence in a short run of leaves that the bucket table names; it copies those leaves into
 * shared memory with 16-byte loads and answers every query there (a binary search over the
 * leaves' first keys, then one inside the leaf); only the values come from global memory. A tile
 * whose leaves do not fit is searched in smaller chunks, and what still does not fit (or is too
 * sparse to stage) descends the tree, one thread per query. Also builds the bucket table. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "ntg/ntg_device.cuh"
#include "ntg/ntg_policy.h"

namespace {

/* table[u] = the last leaf whose first key is <= psa_bucket_start(u) (0 if none), u < 2^bits;
 * table[2^bits] = the last leaf. Every query q of bucket u then searches leaves
 * table[u] .. table[u + 1] (the leaf of q is the last leaf whose first key is <= q). */
template <typename K>
__global__ void table_kernel(const ntg_view v, psa_plan plan, uint32_t *__restrict__ table, uint32_t entries)
{
    const K *first_keys = static_cast<const K *>(v.keys) + v.leaf_key_base;
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < entries; u += gridDim.x * blockDim.x) {
        if (u + 1 == entries) {
            table[u] = (uint32_t)(v.n_leaves - 1);
            continue;
        }
        const K start = (K)psa_bucket_start(&plan, u);
        uint64_t lo = 0, hi = v.n_leaves; /* lo = leaves whose first key is <= start */
        while (lo < hi) {
            const uint64_t mid = (lo + hi) / 2;
            if (__ldg(first_keys + mid * v.leaf_size) <= start)
                lo = mid + 1;
            else
                hi = mid;
        }
        table[u] = (uint32_t)(lo ? lo - 1 : 0);
    }
}

#define NO_VALUE UINT64_MAX

/* Leaves hold at least this many slots (KR_MIN_NODE): a staged row is at least 9 keys long. */
#define NTG_PS_MIN_LEAF 8

template <typename K> struct stage_shape {
    static constexpr uint32_t keys = NTG_PS_STAGE_BYTES / sizeof(K);
    static constexpr uint32_t firsts = keys / (NTG_PS_MIN_LEAF + 1) + 1;
};


/* Unordered results of the tile's slots from `first` on, which hold queries outside the span: not
 * found (their positions the partition wrote). */
template <typename K>
__device__ __forceinline__ void outside_slots(uint64_t first, uint64_t end, K *__restrict__ values_out,
                                              uint8_t *__restrict__ found_out)
{
    for (uint64_t j = first + threadIdx.x; j < end; j += NTG_PS_THREADS) {
        if (values_out)
            values_out[j] = 0;
        found_out[j] = 0;
    }
}

/* The leaves a run of partitioned slots can fall in: those of its first and last bucket and all
 * between (one more for lower bounds, whose answer may be the next leaf's first key). */
template <typename K, bool LOWER_BOUND>
__device__ __forceinline__ void leaves_of(const ntg_view &v, const psa_plan &plan, const uint32_t *table, K first_q,
                                          K last_q, uint32_t *l0, uint32_t *l1)
{
    *l0 = __ldg(table + psa_bucket(&plan, first_q));
    uint32_t last = __ldg(table + psa_bucket(&plan, last_q) + 1);
    if (LOWER_BOUND && last + 1 < v.n_leaves)
        last++;
    *l1 = last;
}

/* Stages leaves l0 .. l0 + rows - 1 (leaf r's L keys at stage[r * (L + 1) ..], its first key at
 * firsts[r]) and answers items k0 .. k1 - 1 of each thread there; ALL: every item (no predicates).
 * Ends with the block synchronised, the stage free again. */
template <typename K, bool LOWER_BOUND, bool ALL, int ITEMS>
__device__ __forceinline__ void stage_and_search(const ntg_view &v, const K (&q)[ITEMS], uint32_t k0, uint32_t k1,
                                                 uint32_t l0, uint32_t rows, K *stage, K *firsts,
                                                 uint64_t (&value_at)[ITEMS], K (&key)[ITEMS])
{
    const K *leaf_level = static_cast<const K *>(v.keys) + v.leaf_key_base;
    const K max_key = max_key_of<K>();
    const uint32_t L = v.leaf_size, row = L + 1;
    const uint32_t per_vec = 16 / sizeof(K), vecs_per_row = L / per_vec;
    const uint32_t row_shift = __ffs(vecs_per_row) - 1;
    const uint4 *src = reinterpret_cast<const uint4 *>(leaf_level + (uint64_t)l0 * L);
    for (uint32_t x = threadIdx.x; x < rows * vecs_per_row; x += NTG_PS_THREADS) {
        const uint32_t r = x >> row_shift, col = x & (vecs_per_row - 1);
        const uint4 word = __ldg(src + x);
        K part[16 / sizeof(K)];
        memcpy(part, &word, 16);
        K *dst = stage + r * row + col * per_vec;
#pragma unroll
        for (int e = 0; e < (int)(16 / sizeof(K)); e++)
            dst[e] = part[e];
        if (col == 0)
            firsts[r] = part[0];
    }
    __syncthreads();
#define PS_MINE(k) (ALL || ((uint32_t)(k) >= k0 && (uint32_t)(k) < k1))
    /* the leaf: the last row whose first key is <= q (row 0 when none is) */
    uint32_t r[ITEMS], sl[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        r[k] = sl[k] = 0;
    for (uint32_t len = rows; len > 1;) {
        const uint32_t half = len >> 1;
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            if (PS_MINE(k))
                r[k] = firsts[r[k] + half] <= q[k] ? r[k] + half : r[k];
        len -= half;
    }
    /* the slot: the number of the leaf's keys < q (padding is the maximum key, never < q) */
    for (uint32_t step = L >> 1; step > 0; step >>= 1) {
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            if (PS_MINE(k))
                sl[k] = stage[r[k] * row + sl[k] + step - 1] < q[k] ? sl[k] + step : sl[k];
    }
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        if (!PS_MINE(k))
            continue;
        const K *rp = stage + r[k] * row;
        sl[k] += rp[sl[k]] < q[k];
        const uint64_t leaf = l0 + r[k];
        const K at = sl[k] < L ? rp[sl[k]] : max_key;
        if (LOWER_BOUND) {
            /* past the leaf's keys: slot L, or padding (the maximum key, real only as the last key
             * of the last leaf of a tree that holds it) */
            const bool real_max = v.max_key_present && leaf + 1 == v.n_leaves;
            if (sl[k] < L && (at != max_key || real_max)) {
                value_at[k] = leaf * L + sl[k];
                key[k] = at;
            } else if (leaf + 1 < v.n_leaves) {
                value_at[k] = (leaf + 1) * L;
                key[k] = r[k] + 1 < rows ? firsts[r[k] + 1] : __ldg(leaf_level + (leaf + 1) * L);
            } else {
                value_at[k] = NO_VALUE;
                key[k] = 0;
            }
        } else {
            const bool found = at == q[k] && sl[k] < L && (q[k] != max_key || v.max_key_present);
            value_at[k] = found ? leaf * L + sl[k] : NO_VALUE;
        }
    }
#undef PS_MINE
    __syncthreads(); /* every thread is done with the stage before it is filled again */
}

/* The items k of each thread whose bit is set in `items`, one thread per query down the tree (all
 * in one loop): the chunks that are not staged (their leaves do not fit, or a dense window's chunk
 * has too few queries a leaf). */
template <typename K, bool LOWER_BOUND, int ITEMS>
__device__ __forceinline__ void descend_each(const ntg_view &v, const K (&q)[ITEMS], uint32_t items,
                                             uint64_t (&value_at)[ITEMS], K (&key)[ITEMS])
{
    const K *leaf_level = static_cast<const K *>(v.keys) + v.leaf_key_base;
    const K max_key = max_key_of<K>();
    const uint32_t L = v.leaf_size;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        if (!((items >> k) & 1u))
            continue;
        const uint64_t leaf = descend<K, 1, true>(v, q[k], 0, 0, ntg_children_closed());
        const K *leaf_keys = leaf_level + leaf * L;
        const uint32_t sl = group_count<K, 1, true, true>(leaf_keys, L, q[k], 0, 0);
        const K at = sl < L ? __ldg(leaf_keys + sl) : max_key;
        if (LOWER_BOUND) {
            const uint64_t in_leaf = __ldg(v.leaf_rank + leaf + 1) - __ldg(v.leaf_rank + leaf);
            if (sl < in_leaf) {
                value_at[k] = leaf * L + sl;
                key[k] = at;
            } else if (leaf + 1 < v.n_leaves) {
                value_at[k] = (leaf + 1) * L;
                key[k] = __ldg(leaf_level + (leaf + 1) * L);
            } else {
                value_at[k] = NO_VALUE;
                key[k] = 0;
            }
        } else {
            const bool found = sl < L && at == q[k] && (q[k] != max_key || v.max_key_present);
            value_at[k] = found ? leaf * L + sl : NO_VALUE;
        }
    }
}

/* A tile whose leaves do not fit the stage at once (the caller tried it whole) is searched in
 * chunks: *m_out = the largest chunk below the tile (items per thread, a power of two) whose every
 * chunk fits, else 1; returns the items (a bit each) of the chunks to stage: those that fit and
 * hold at least min_queries_per_leaf queries a leaf (slots counted whole: a last chunk's padding
 * too); the others descend. Block-uniform. */
template <int ITEMS>
__device__ __forceinline__ uint32_t chunks_to_stage(uint32_t used, const uint32_t *sub_l0, const uint32_t *sub_l1,
                                                    uint32_t max_rows, uint32_t min_queries_per_leaf, uint32_t *m_out)
{
    static_assert(ITEMS >= 2, "a tile of at least two chunks");
    static_assert(ITEMS < 32, "an item a bit");
    uint32_t m = ITEMS / 2;
    for (; m > 1; m >>= 1) {
        bool fits = true;
        for (uint32_t c = 0; c < used; c += m) {
            const uint32_t end = c + m < used ? c + m : used;
            fits = fits && sub_l1[end - 1] - sub_l0[c] + 1 <= max_rows;
        }
        if (fits)
            break;
    }
    uint32_t staged = 0;
    for (uint32_t c = 0; c < used; c += m) {
        const uint32_t k1 = c + m < used ? c + m : used, rows = sub_l1[k1 - 1] - sub_l0[c] + 1;
        if (rows <= max_rows && rows * min_queries_per_leaf <= (k1 - c) * NTG_PS_THREADS)
            staged |= ((1u << (k1 - c)) - 1u) << c;
    }
    *m_out = m;
    return staged;
}

/* The value lines of leaves l0 .. l0 + rows - 1 into the L2 (prefetch.global.L2, one 128-byte line a
 * thread at a time), where the tile holds at least NTG_PS_PREFETCH_MIN_QUERIES_PER_LEAF queries a
 * leaf on average (at 1: every tile staged whole but partial and very sparse ones): the tile's value
 * loads, random inside the run, then hit the L2, and the DRAM reads the run whole and in order while
 * the leaves are staged and searched (ntg_policy.h). Every address prefetched lies inside the run
 * (the first is its start, the others the lines that begin after it), so an allocator's array that
 * does not start on a line needs nothing before it. */
template <typename K>
__device__ __forceinline__ void prefetch_values(const ntg_view &v, uint32_t l0, uint32_t rows, uint32_t in_tile)
{
    if ((uint64_t)rows * NTG_PS_PREFETCH_MIN_QUERIES_PER_LEAF > in_tile)
        return; /* block-uniform */
    const uintptr_t begin = (uintptr_t)(static_cast<const K *>(v.leaf_values) + (uint64_t)l0 * v.leaf_size);
    const uintptr_t end = begin + rows * v.leaf_size * sizeof(K);
    for (uintptr_t a = (begin & ~(uintptr_t)127) + 128u * threadIdx.x; a < end; a += 128u * NTG_PS_THREADS)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(a > begin ? a : begin));
}

/* A thread's items, for chunked_search. */
template <typename K, int ITEMS> struct chunk_io {
    K q[ITEMS];
    uint64_t value_at[ITEMS];
    K key[ITEMS];
};

/* The chunks of m items a thread of a tile (chunks_to_stage): those of `staged` staged and searched
 * in turn, then the other used items down the tree together. Block-uniform. */
template <typename K, bool LOWER_BOUND, int ITEMS>
__device__ __forceinline__ void search_chunks(const ntg_view &v, const K (&q)[ITEMS], uint32_t used, uint32_t m,
                                              uint32_t staged, const uint32_t *sub_l0, const uint32_t *sub_l1,
                                              K *stage, K *firsts, uint64_t (&value_at)[ITEMS], K (&key)[ITEMS])
{
    for (uint32_t c = 0; c < used; c += m) {
        const uint32_t k1 = c + m < used ? c + m : used; /* this chunk's items: c .. k1 - 1 */
        if ((staged >> c) & 1u)
            stage_and_search<K, LOWER_BOUND, false, ITEMS>(v, q, c, k1, sub_l0[c], sub_l1[k1 - 1] - sub_l0[c] + 1,
                                                           stage, firsts, value_at, key);
    }
    const uint32_t descending = ((1u << used) - 1u) & ~staged;
    if (descending)
        descend_each<K, LOWER_BOUND, ITEMS>(v, q, descending, value_at, key);
}

/* search_chunks as a function of its own (not inlined), for the dense kernel, so that its registers
 * are not the kernel's; it sees the view through a pointer, so its descents read the closed forms
 * from memory — the kernel descends itself where no chunk is staged. */
template <typename K, bool LOWER_BOUND, int ITEMS>
__device__ __noinline__ void chunked_search(const ntg_view &v, chunk_io<K, ITEMS> &io, uint32_t used, uint32_t m,
                                            uint32_t staged, const uint32_t *sub_l0, const uint32_t *sub_l1, K *stage,
                                            K *firsts)
{
    search_chunks<K, LOWER_BOUND, ITEMS>(v, io.q, used, m, staged, sub_l0, sub_l1, stage, firsts, io.value_at, io.key);
}

/* A block's tile is ITEMS slots a thread, searched in chunks of NTG_PS_THREADS * m slots (m items
 * per thread) — the whole tile when its leaves fit the stage, else halves, quarters ... down to one
 * item per thread — and a chunk whose leaves still do not fit descends the tree one thread per
 * query; each leaf is still read whole and coalesced. CHUNKED: a sparse window's kernel (fewer
 * items a thread, more blocks resident), which stages every chunk that fits; the dense one has
 * NTG_PS_ITEMS and stages a chunk only from NTG_PS_STAGE_MIN_QUERIES_PER_LEAF queries a leaf. */
template <typename K, bool LOWER_BOUND, int ITEMS, bool CHUNKED>
__global__ void __launch_bounds__(NTG_PS_THREADS, CHUNKED ? NTG_PS_SPARSE_MIN_BLOCKS : NTG_PS_MIN_BLOCKS)
search_kernel(const __grid_constant__ ntg_view v, psa_plan plan, const uint32_t *__restrict__ table, const K *__restrict__ queries,
              uint32_t n, const uint32_t *__restrict__ in_span, K *__restrict__ values_out, K *__restrict__ keys_out,
              uint8_t *__restrict__ found_out, bool unordered)
{
    __shared__ __align__(16) K stage[stage_shape<K>::keys];
    __shared__ K firsts[stage_shape<K>::firsts];
    __shared__ uint32_t sub_l0[ITEMS], sub_l1[ITEMS];
    const K *values = static_cast<const K *>(v.leaf_values);
    const uint32_t max_rows = stage_shape<K>::keys / (v.leaf_size + 1);
    const uint64_t tile = (uint64_t)blockIdx.x * (NTG_PS_THREADS * ITEMS);
    /* slots from *in_span on hold queries outside the span: only unordered results need them */
    const uint32_t searched = in_span ? *in_span : n;
    const uint64_t tile_end = n - tile < (NTG_PS_THREADS * ITEMS) ? n : tile + (NTG_PS_THREADS * ITEMS);
    if (unordered && tile_end > searched)
        outside_slots<K>(tile > searched ? tile : searched, tile_end, values_out, found_out);
    if (tile >= searched)
        return; /* block-uniform */
    const uint32_t in_tile = searched - tile < (NTG_PS_THREADS * ITEMS) ? (uint32_t)(searched - tile) : (NTG_PS_THREADS * ITEMS);

    K q[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const uint32_t at = (uint32_t)k * NTG_PS_THREADS + threadIdx.x;
        q[k] = at < in_tile ? queries[tile + at] : queries[tile + in_tile - 1];
    }
    /* the leaves of each finest chunk (slots in bucket order: a chunk's leaves run from its first
     * slot's to its last slot's) */
    if (threadIdx.x < ITEMS) {
        const uint32_t first = threadIdx.x * NTG_PS_THREADS;
        if (first < in_tile) {
            const uint32_t last = first + NTG_PS_THREADS < in_tile ? first + NTG_PS_THREADS - 1 : in_tile - 1;
            leaves_of<K, LOWER_BOUND>(v, plan, table, queries[tile + first], queries[tile + last],
                                      &sub_l0[threadIdx.x], &sub_l1[threadIdx.x]);
        } else {
            sub_l0[threadIdx.x] = sub_l1[threadIdx.x] = 0;
        }
    }
    __syncthreads();
    const uint32_t used = (in_tile + NTG_PS_THREADS - 1) / NTG_PS_THREADS; /* finest chunks in use */

    /* per query: where its value is (NO_VALUE: not found) and, for lower bounds, the key */
    uint64_t value_at[ITEMS];
    K key[ITEMS];
    const uint32_t whole = sub_l1[used - 1] - sub_l0[0] + 1;
    if (whole <= max_rows) { /* block-uniform: the whole tile at once (slots past in_tile repeat the last query) */
        if (NTG_PS_PREFETCH_VALUES && values_out)
            prefetch_values<K>(v, sub_l0[0], whole, in_tile);
        stage_and_search<K, LOWER_BOUND, true, ITEMS>(v, q, 0, ITEMS, sub_l0[0], whole, stage, firsts, value_at, key);
    } else if constexpr (CHUNKED) {
        /* a sparse window's tile: every chunk that fits is staged (at one query a leaf too: the
         * windows of 2^24 queries over 2^24 leaves are 14 % faster so, bench/NOTES.md "Zipf queries
         * of 32-bit keys"), the others descend; inline (its two items a thread leave room) */
        uint32_t m = 1;
        const uint32_t staged = chunks_to_stage<ITEMS>(used, sub_l0, sub_l1, max_rows, 0, &m);
        search_chunks<K, LOWER_BOUND, ITEMS>(v, q, used, m, staged, sub_l0, sub_l1, stage, firsts, value_at, key);
    } else {
        /* a dense window's tile whose queries are not spread as the window's mean says (a Zipf
         * window's rare keys, a window mostly outside the keys' span): in chunks, staged from
         * NTG_PS_STAGE_MIN_QUERIES_PER_LEAF queries a leaf (before, such a tile descended whole,
         * one thread per query; bench/NOTES.md, "Zipf queries of 32-bit keys") */
        uint32_t m = 1;
        const uint32_t staged =
            chunks_to_stage<ITEMS>(used, sub_l0, sub_l1, max_rows, NTG_PS_STAGE_MIN_QUERIES_PER_LEAF, &m);
        if (!staged) { /* every chunk descends: here, reading the closed forms from the parameter bank */
            descend_each<K, LOWER_BOUND, ITEMS>(v, q, (1u << used) - 1u, value_at, key);
        } else { /* through memory of the thread's own, so that the whole-tile path keeps its registers */
            chunk_io<K, ITEMS> io;
#pragma unroll
            for (int k = 0; k < ITEMS; k++)
                io.q[k] = q[k];
            chunked_search<K, LOWER_BOUND, ITEMS>(v, io, used, m, staged, sub_l0, sub_l1, stage, firsts);
#pragma unroll
            for (int k = 0; k < ITEMS; k++) {
                value_at[k] = io.value_at[k];
                key[k] = io.key[k];
            }
        }
    }

    /* results, in slot order: every value load first, then the stores */
    K value[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        value[k] = (uint32_t)k < used && value_at[k] != NO_VALUE && values_out ? __ldg(values + value_at[k]) : (K)0;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const uint32_t at = (uint32_t)k * NTG_PS_THREADS + threadIdx.x;
        if (at >= in_tile)
            continue;
        const uint64_t j = tile + at;
        if (values_out)
            values_out[j] = value[k];
        if (LOWER_BOUND && keys_out)
            keys_out[j] = key[k];
        found_out[j] = value_at[k] != NO_VALUE;
    }
}

unsigned blocks_for(uint64_t items, uint64_t per_block)
{
    const uint64_t b = (items + per_block - 1) / per_block;
    return b ? (unsigned)b : 1u;
}

} /* namespace */

extern "C" cudaError_t ntg_build_bucket_table(const ntg_view *v, const psa_plan *plan, uint32_t *table,
                                              cudaStream_t stream)
{
    if (v->n_leaves == 0 || plan->bits > 31)
        return cudaErrorInvalidValue;
    const uint32_t entries = (1u << plan->bits) + 1;
    const unsigned blocks = blocks_for(entries, 256) < 4096 ? blocks_for(entries, 256) : 4096;
    if (v->key_bits == 32)
        table_kernel<uint32_t><<<blocks, 256, 0, stream>>>(*v, *plan, table, entries);
    else
        table_kernel<uint64_t><<<blocks, 256, 0, stream>>>(*v, *plan, table, entries);
    return cudaGetLastError();
}

extern "C" cudaError_t ntg_launch_search_partitioned(const ntg_view *v, const psa_plan *plan, const uint32_t *table,
                                                     bool lower_bound, const void *queries, uint32_t n,
                                                     const uint32_t *in_span, void *values_out, void *keys_out,
                                                     uint8_t *found_out, bool unordered, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!found_out || v->n_keys == 0)
        return cudaErrorInvalidValue;
    /* dense windows: tiles of NTG_PS_ITEMS slots a thread; sparse ones: small tiles of
     * NTG_PS_SPARSE_ITEMS (ntg_policy.h); both search a tile that does not fit in chunks */
    const uint64_t stage_rows = NTG_PS_STAGE_BYTES / (v->key_bits / 8) / (v->leaf_size + 1);
    const bool dense = (uint64_t)n * stage_rows * 2 >= (uint64_t)NTG_PS_DENSE_TILE_SPAN * NTG_PS_TILE * v->n_leaves;
    const unsigned blocks = blocks_for(n, (uint64_t)NTG_PS_THREADS * (dense ? NTG_PS_ITEMS : NTG_PS_SPARSE_ITEMS));
#define PS_LAUNCH(K, LB)                                                                                        \
    do {                                                                                                        \
        if (dense)                                                                                              \
            search_kernel<K, LB, NTG_PS_ITEMS, false><<<blocks, NTG_PS_THREADS, 0, stream>>>(                   \
                *v, *plan, table, (const K *)queries, n, in_span, (K *)values_out, LB ? (K *)keys_out : NULL,     \
                found_out, unordered);                                                                          \
        else                                                                                                    \
            search_kernel<K, LB, NTG_PS_SPARSE_ITEMS, true><<<blocks, NTG_PS_THREADS, 0, stream>>>(             \
                *v, *plan, table, (const K *)queries, n, in_span, (K *)values_out, LB ? (K *)keys_out : NULL,     \
                found_out, unordered);                                                                          \
    } while (0)
    if (v->key_bits == 32) {
        if (lower_bound)
            PS_LAUNCH(uint32_t, true);
        else
            PS_LAUNCH(uint32_t, false);
    } else {
        if (lower_bound)
            PS_LAUNCH(uint64_t, true);
        else
            PS_LAUNCH(uint64_t, false);
    }
#undef PS_LAUNCH
    return cudaGetLastError();
}
