/* psa_partition.cu — PSA by partition on the GPU (psa.h says what and why): the bin counts, the
 * one or two partition passes that group a window of queries by bucket and record where each query
 * went, and the restore that brings results back into query order. Also the CUB exclusive scan of
 * the range-collect pipeline. The search of a partitioned window is in ntg/.
 *
 * Every pass and every restore step works on tiles of PSA_THREADS * items (psa_pass_items) and groups each tile by bin in
 * shared memory before it touches the scattered side (as CUB's onesweep does): a tile's items of
 * one bin occupy one run of consecutive slots, so the tile writes (and the restore reads) those runs
 * whole instead of one 8-byte word per lane — measured on the H100, single scattered words ran at
 * the L2's random-access rate (about 68 G words/s) and cost more than the search itself. */
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <string.h>

#include <atomic>

extern "C" {
#include "psa/psa_gpu.h"
}

#define PSA_MAX_BINS (1u << PSA_MAX_PASS_BITS)
/* pass 1 has one more bin: queries outside [key_min, key_max], which skip pass 2 and the search */
#define PSA_MAX_BINS1 ((1u << PSA_MAX_PASS1_BITS) + 1)
#define BINS_PER_THREAD ((PSA_MAX_BINS + PSA_THREADS - 1) / PSA_THREADS)
static_assert(PSA_MAX_BINS1 <= PSA_MAX_BINS, "pass 1's bins (with the outside bin) fit the bin arrays");
/* the slot the pass-1 restore reads for a query set apart by pass 1: none, the answer is known
 * (psa_known_answers); real slots stay below SLOT_KNOWN (windows of at most PSA_MAX_WINDOW queries
 * and the chunks' slack) */
#define SLOT_ABOVE 0xFFFFFFFFu /* q > key_max */
#define SLOT_BELOW 0xFFFFFFFEu /* q < key_min */
#define SLOT_AT_MAX 0xFFFFFFFDu /* q == key_max (plan.edges) */
#define SLOT_AT_MIN 0xFFFFFFFCu /* q == key_min (plan.edges) */
#define SLOT_KNOWN SLOT_AT_MIN
static_assert((uint64_t)PSA_MAX_WINDOW * 2 < SLOT_KNOWN, "real slots stay below the codes of known answers");

namespace {

/* Where each part of the workspace sits, for windows of up to `capacity` queries; sized for the
 * largest plan so that one allocation serves every plan. sources2 (pass 2's item places, indexed by
 * pass-1 slot) carries the fine bins from pass 1 to pass 2's count first (psa_fine_bytes). */
struct layout {
    size_t keys1, keys2, slots1, slots2, sources1, sources2, found_tmp, hist1, offsets1, cursor1, tile_start, hist2, cursor2,
        scan_temp, scan_bytes, total;
    /* pass 1 into chunks (windows of PSA_CHUNKED_MIN_WINDOW or more; zero otherwise): the chunks'
     * slack of every array indexed by pass-1 slot, the chunks of a bin at most (max_j), and where
     * the chunk state (chunks taken, each bin's items, each bin's chunk table) is */
    size_t slack, max_j, chunk_state;
};

/* The chunk state's words: chunks taken, then each pass-1 bin's items (2^PSA_MAX_PASS1_BITS + 1),
 * then the bins' chunk tables (max_j words a bin). */
#define CHUNK_ITEMS_AT 1u
#define CHUNK_TABLES_AT (CHUNK_ITEMS_AT + (1u << PSA_MAX_PASS1_BITS) + 1u)

/* CUB's scratch for the scan of the 2^PSA_MAX_BITS + 1 bucket counts (a fixed count: its size
 * depends only on the device's architecture). Asked of CUB once a device and kept: a query costs
 * 0.5-0.6 µs on the H100 (bench/NOTES.md, "The size queries of a PSA call"), and every partition
 * and restore lays the workspace out. */
#define SCAN_MEMO_DEVICES 64
static std::atomic<size_t> scan_memo[SCAN_MEMO_DEVICES]; /* 0: not known yet */

static cudaError_t bucket_scan_bytes(size_t *bytes)
{
    const int count = (int)((size_t)1 << PSA_MAX_BITS) + 1;
    int device = -1;
    const cudaError_t got = cudaGetDevice(&device);
    if (got != cudaSuccess) /* leaves nothing behind: CUB asks again below and says what is wrong */
        cudaGetLastError();
    const bool memo = got == cudaSuccess && device >= 0 && device < SCAN_MEMO_DEVICES;
    if (memo && (*bytes = scan_memo[device].load(std::memory_order_relaxed)) != 0)
        return cudaSuccess;
    *bytes = 0;
    cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, *bytes, (const uint32_t *)NULL, (uint32_t *)NULL, count);
    if (e == cudaSuccess && memo && *bytes != 0)
        scan_memo[device].store(*bytes, std::memory_order_relaxed);
    return e;
}

cudaError_t layout_of(uint32_t key_bits, uint32_t capacity, layout *l)
{
    const size_t kb = key_bits / 8, buckets = (size_t)1 << PSA_MAX_BITS;
    const size_t tile = (size_t)PSA_THREADS * psa_pass_items(key_bits, capacity);
    const bool chunked = capacity >= PSA_CHUNKED_MIN_WINDOW;
    /* a bin's chunks: j <= ceil(n / tile) (one taken ahead) */
    l->max_j = chunked ? (capacity + tile - 1) / tile + 1 : 0;
    /* chunks of a pass-1 window: at most one partly filled and one empty (taken ahead) a bin, so
     * they end before slot in_span + 2 * 2^PSA_MAX_PASS1_BITS * tile; the outside bin's region ends
     * at slack + n */
    l->slack = chunked ? ((size_t)2 << PSA_MAX_PASS1_BITS) * tile : 0;
    const size_t spread = capacity + l->slack;
    size_t at = 0;
    l->keys1 = at, at = psa_align_up(at + spread * kb);
    l->keys2 = at, at = psa_align_up(at + spread * kb);
    l->slots1 = at, at = psa_align_up(at + spread * 4);
    l->slots2 = at, at = psa_align_up(at + spread * 4);
    l->sources1 = at, at = psa_align_up(at + (size_t)capacity * 2);
    l->sources2 = at, at = psa_align_up(at + spread * 2);
    l->found_tmp = at, at = psa_align_up(at + spread);
    l->chunk_state = at, at = psa_align_up(at + (CHUNK_TABLES_AT + ((size_t)1 << PSA_MAX_PASS1_BITS) * l->max_j) * 4);
    l->hist1 = at, at = psa_align_up(at + PSA_MAX_BINS1 * 4);
    l->offsets1 = at, at = psa_align_up(at + (PSA_MAX_BINS1 + 1) * 4);
    l->cursor1 = at, at = psa_align_up(at + PSA_MAX_BINS1 * 4);
    l->tile_start = at, at = psa_align_up(at + (PSA_MAX_BINS + 1) * 4);
    l->hist2 = at, at = psa_align_up(at + (buckets + 1) * 4);
    l->cursor2 = at, at = psa_align_up(at + (buckets + 1) * 4);
    l->scan_bytes = 0;
    cudaError_t e = bucket_scan_bytes(&l->scan_bytes); /* the scan of buckets + 1 counts */
    l->scan_temp = at, at = psa_align_up(at + l->scan_bytes);
    l->total = at;
    return e;
}

template <typename K> constexpr unsigned key_bits_of() { return (unsigned)sizeof(K) * 8u; }

/* Whether pass 1 sets q apart (its bin of queries with known answers): outside [key_min, key_max],
 * or with plan.edges on either edge. */
template <typename K> __device__ __forceinline__ bool outside(const psa_plan &plan, K q)
{
    return plan.edges ? (uint64_t)q <= plan.key_min || (uint64_t)q >= plan.key_max
                      : (uint64_t)q < plan.key_min || (uint64_t)q > plan.key_max;
}

/* The code an ordered pass 1 records for a query set apart (outside(plan, q)). */
static_assert(SLOT_AT_MAX == SLOT_AT_MIN + 1 && SLOT_BELOW == SLOT_AT_MIN + 2 && SLOT_ABOVE == SLOT_AT_MIN + 3,
              "known_slot counts the codes up from SLOT_AT_MIN");
template <typename K> __device__ __forceinline__ uint32_t known_slot(const psa_plan &plan, K q)
{
    /* q == key_min: + 0; q == key_max (> key_min): + 1; below: 1 + 1; above: 1 + 2 */
    return SLOT_AT_MIN + ((uint64_t)q != plan.key_min) + ((uint64_t)q < plan.key_min) +
           2u * ((uint64_t)q > plan.key_max);
}

/* The pass-1 bin: the coarse bin of the bucket, or 2^bits1 for a query set apart (outside the span,
 * or on its edges with plan.edges); with `fine`, the bucket's low bits2 bits too (pass 2's bin, 0
 * for a query set apart). */
template <typename K>
__device__ __forceinline__ uint32_t coarse_bin(const psa_plan &plan, K q, uint32_t *fine = nullptr)
{
    if (outside<K>(plan, q)) {
        if (fine)
            *fine = 0;
        return 1u << plan.bits1;
    }
    const uint32_t bucket = psa_bucket(&plan, (uint64_t)q);
    if (fine)
        *fine = bucket & ((1u << plan.bits2) - 1u);
    return bucket >> plan.bits2;
}

template <typename K> __device__ __forceinline__ uint32_t fine_bin(const psa_plan &plan, K q)
{
    return psa_bucket(&plan, (uint64_t)q) & ((1u << plan.bits2) - 1u);
}

/* ------------------------------------------------------------------------------------------------
 * Tiles. Pass 1 and its restore step cut the window into tiles of `tile` items (PSA_THREADS times
 * psa_pass_items, the kernels' ITEMS); pass 2 and its restore step cut each coarse bin into tiles
 * of that many items (tile_start numbers each bin's
 * tiles), so a pass-2 tile's items share one coarse bin.
 * ---------------------------------------------------------------------------------------------- */
struct tile_place {
    uint32_t begin, end;
    uint32_t coarse; /* pass 2: the tiles' coarse bin */
};

/* Where pass 2's tiles are: coarse bin c has items offsets1[c] .. offsets1[c + 1] (counted, or
 * after a chunked pass 1 counted by it) cut in tiles numbered from tile_start[c], in bin order (the
 * tiles that run at once then write to the fine bins of one or two coarse bins: few write fronts,
 * whose sectors the L2 completes before it writes them back). After a counted pass 1 a bin's items
 * are its slots; after a chunked one (chunk_of != NULL) tile j of bin c is its chunk j, at slots
 * (chunk_of[c * max_j + j] - 1) * tile .. */
struct pass2_tiles {
    const uint32_t *tile_start, *offsets1;
    const uint32_t *chunk_of;
    uint32_t max_j, bins1;
};

/* Tile `id` of pass 2 (empty past the last), found by the 32 lanes of one warp together, converged
 * (every lane returns it): the last coarse bin c with tile_start[c] <= id in two rounds of loads —
 * a ballot over every step-th bin, then over the step bins of the segment it names — and c's items
 * in a third. One thread's binary search took log2(bins1) dependent loads while the block waited at
 * its barrier (bench/NOTES.md, "Session 25": 18.5 % of pass 2's stall samples). tile_start is
 * non-decreasing with tile_start[0] = 0, so "tile_start[c] <= id" holds for a prefix of the bins. */
static_assert(PSA_MAX_BINS1 - 1 <= 32 * 32, "pass2_tile's two ballots cover every pass-1 bin");
__device__ __forceinline__ tile_place pass2_tile(const pass2_tiles &m, uint32_t tile, uint32_t id)
{
    tile_place t = {0, 0, 0};
    const uint32_t lane = threadIdx.x & 31u, bins = m.bins1; /* a power of two, at most 2^PSA_MAX_PASS1_BITS */
    const uint32_t step = bins > 32u ? bins / 32u : 1u;
    const uint32_t total = m.tile_start[bins];
    const uint32_t probe = lane * step;
    const uint32_t v1 = probe < bins ? m.tile_start[probe] : UINT32_MAX;
    if (id >= total)
        return t; /* (warp-uniform) */
    const unsigned le1 = __ballot_sync(0xffffffffu, v1 <= id); /* bit 0 set: tile_start[0] = 0 */
    const uint32_t seg_lane = 31u - (uint32_t)__clz((int)le1);
    uint32_t c = seg_lane, start = __shfl_sync(0xffffffffu, v1, (int)seg_lane);
    if (step > 1u) { /* (warp-uniform) */
        const uint32_t first = seg_lane * step;
        const uint32_t v2 = lane < step ? m.tile_start[first + lane] : UINT32_MAX;
        const unsigned le2 = __ballot_sync(0xffffffffu, v2 <= id); /* bit 0 set: v1 of seg_lane */
        const uint32_t at = 31u - (uint32_t)__clz((int)le2);
        c = first + at;
        start = __shfl_sync(0xffffffffu, v2, (int)at);
    }
    t.coarse = c;
    const uint32_t j = id - start;
    const uint32_t bin_begin = m.offsets1[c], bin_end = m.offsets1[c + 1];
    const uint32_t chunk = m.chunk_of ? m.chunk_of[(size_t)c * m.max_j + j] - 1u : 0u;
    t.begin = bin_begin + j * tile;
    t.end = bin_end - t.begin < tile ? bin_end : t.begin + tile;
    if (m.chunk_of) { /* the same items, in their chunk */
        t.end = chunk * tile + (t.end - t.begin);
        t.begin = chunk * tile;
    }
    return t;
}

/* Pass 2's tile `id` into *place (shared memory), found by the block's first warp (converged: the
 * blocks are whole warps); the caller synchronises before reading it. */
__device__ __forceinline__ void pass2_tile_to(const pass2_tiles &m, uint32_t tile, uint32_t id, tile_place *place)
{
    if (threadIdx.x < 32) {
        const tile_place p = pass2_tile(m, tile, id);
        if (threadIdx.x == 0)
            *place = p;
    }
}

/* The tile of this block, broadcast through shared memory (block-uniform). */
__device__ __forceinline__ tile_place block_tile(bool second, uint32_t n, const pass2_tiles &m, uint32_t tile,
                                                 tile_place *shared_place)
{
    if (second) {
        pass2_tile_to(m, tile, blockIdx.x, shared_place);
    } else if (threadIdx.x == 0) {
        const uint64_t begin = (uint64_t)blockIdx.x * tile;
        shared_place->begin = (uint32_t)begin;
        shared_place->end = (uint32_t)(n - begin < tile ? n : begin + tile);
        shared_place->coarse = 0;
    }
    __syncthreads();
    return *shared_place;
}

/* ------------------------------------------------------------------------------------------------
 * Pass 1 into chunks (two-pass plans of large windows, psa_pass1_chunked). Pass 1 then runs without
 * a count of its bins: a bin's items get *virtual* positions 0, 1, .. (one atomic add a tile and
 * bin on bin_items[b], as the counted pass's cursor) and live in chunks of `tile` slots taken in
 * turn from the counter `taken`: virtual position v of bin b sits at slot
 * chunk(b, v / tile) * tile + v % tile, with of[b * max_j + j] = 1 + chunk(b, j) (0: not taken
 * yet). The run whose positions contain j * tile takes chunk j + 1 and publishes it (the run
 * holding position 0 takes chunk 0 too): a chunk is then published a chunk's worth of reservations
 * before a run needs it, and runs almost never wait (measured: taking chunk j itself, runs waited,
 * 5.76 against 5.65 ms of sorted results, 64-bit 2^26 keys, 2^27 queries). No wait can deadlock:
 * the run that owes chunk j (the one holding position (j - 1) * tile, or 0) did its atomic add
 * before the waiter's (it got the smaller positions), so its block is resident, and it publishes
 * right after that add, before waiting for anything itself. A run spans at most two chunks (it has at most `tile` items). Each bin has at most one
 * chunk partly filled and one empty, so the chunks end before slot in_span + 2 * 2^bits1 * tile;
 * the queries outside the span fill a contiguous region that ends at
 * slot outside_end (slack + n) and grows down, so that slots outside_end - n + in_span .. are theirs.
 * Then scan1 makes offsets1 and tile_start of the bins' items (bin_items) as after a count, and
 * pass 2 takes each bin's chunks in order as its tiles (pass2_tiles). Invariants (test_gpu's
 * test_psa_chunked: every permutation complete, every result against the CPU engine): every
 * position below bin_items[b] of a bin is in a published chunk, each chunk holds one bin's items.
 * ---------------------------------------------------------------------------------------------- */
struct pass1_chunks {
    uint32_t *taken, *bin_items, *of;
    uint32_t max_j, outside_end;
};

__device__ __forceinline__ uint32_t take_chunk(const pass1_chunks &ch, uint32_t bin, uint32_t j)
{
    const uint32_t c = atomicAdd(ch.taken, 1u);
    atomicExch(ch.of + (size_t)bin * ch.max_j + j, c + 1u);
    return c;
}

__device__ __forceinline__ uint32_t wait_chunk(const pass1_chunks &ch, uint32_t bin, uint32_t j)
{
    const volatile uint32_t *entry = ch.of + (size_t)bin * ch.max_j + j;
    uint32_t c;
    while ((c = *entry) == 0)
        __nanosleep(64);
    return c - 1u;
}

/* A tile's run of `count` items of pass-1 bin `bin`: its first `*split` items at slots *base ..,
 * the rest at *base2 .. */
__device__ __forceinline__ void reserve_chunked(const pass1_chunks &ch, uint32_t bin, uint32_t count,
                                                uint32_t outside_bin, uint32_t tile, uint32_t *base,
                                                uint32_t *split, uint32_t *base2)
{
    const uint32_t v = atomicAdd(ch.bin_items + bin, count);
    *split = count;
    *base2 = 0;
    if (bin == outside_bin) {
        *base = ch.outside_end - v - count;
        return;
    }
    const uint32_t j = v / tile, off = v - j * tile, first = tile - off;
    const bool crosses = count > first; /* holds position (j + 1) * tile */
    /* publish what this run owes before waiting for anything */
    if (off == 0 && j == 0)
        take_chunk(ch, bin, 0);
    if (off == 0 || crosses)
        take_chunk(ch, bin, off == 0 ? j + 1 : j + 2);
    if (crosses) {
        *split = first;
        *base2 = wait_chunk(ch, bin, j + 1) * tile;
    }
    *base = wait_chunk(ch, bin, j) * tile + off;
}

/* counts[bin] += 1 for each lane with `valid` (every lane of the warp calls, converged: the blocks
 * are whole warps), returning what counts[bin] held before the lane's add: its rank among the
 * tile's items of that bin (meaningless for an invalid lane, which adds nothing). A warp's lanes
 * whose items are in bin `hot` (pass 1 of 64-bit keys: the bin of the queries set apart, outside
 * the keys' span or on its edges) add once for all of them, where there are any (a ballot an item,
 * and a shuffle where the warp has some): a window mostly outside the span puts most of a warp's
 * items there, and the shared-memory atomic adds of one instruction to one address are served one
 * lane at a time (bench/NOTES.md, "Session 21": 2^27 queries 90 % outside the span of 2^26 64-bit
 * keys, the call −8 to −9 % on the H100). Ranks within a bin are in no particular order either
 * way. hot = UINT32_MAX (pass 2, 32-bit keys: hot_bin, PSA_RANK_AGGREGATE): every lane adds alone. */
static_assert(PSA_THREADS % 32 == 0, "rank_add's full-warp ballots and shuffle: blocks of whole warps");
__device__ __forceinline__ uint32_t rank_add(uint32_t *counts, uint32_t bin, bool valid, uint32_t hot)
{
    if (hot != UINT32_MAX) { /* (block-uniform) */
        const unsigned peers = __ballot_sync(0xffffffffu, valid && bin == hot);
        if (peers) { /* (warp-uniform) */
            const unsigned lane = threadIdx.x & 31u;
            const int first = __ffs(peers) - 1;
            uint32_t r = 0;
            if ((int)lane == first)
                r = atomicAdd(&counts[hot], (uint32_t)__popc(peers));
            else if (valid && bin != hot)
                r = atomicAdd(&counts[bin], 1u);
            const uint32_t base = __shfl_sync(0xffffffffu, r, first);
            return bin == hot ? base + (uint32_t)__popc(peers & ((1u << lane) - 1u)) : r;
        }
    }
    return valid ? atomicAdd(&counts[bin], 1u) : 0u;
}

/* The bin whose ranks pass 1 aggregates (rank_add): the outside bin, for 64-bit keys (32-bit keys
 * too with PSA_RANK_AGGREGATE_32, off by default: psa_policy.h). */
template <typename K> __device__ __forceinline__ uint32_t hot_bin(const psa_plan &plan)
{
    return PSA_RANK_AGGREGATE && (sizeof(K) == 8 || PSA_RANK_AGGREGATE_32) ? 1u << plan.bits1 : UINT32_MAX;
}

/* Groups a tile's items by bin: rank[k] = the item's rank among the tile's items of its bin, then
 * offsets[b] = the tile's items in bins below b (so item k goes to tile position
 * offsets[bin[k]] + rank[k]); counts[b] = the tile's items of bin b. */
typedef cub::BlockScan<uint32_t, PSA_THREADS> bin_scan;

template <int ITEMS>
__device__ __forceinline__ void group_tile(const uint32_t (&bin)[ITEMS], const bool (&valid)[ITEMS], uint32_t bins,
                                           uint32_t hot, uint32_t *counts, uint32_t *offsets,
                                           typename bin_scan::TempStorage &scan_temp, uint32_t (&rank)[ITEMS])
{
    for (uint32_t b = threadIdx.x; b < bins; b += PSA_THREADS)
        counts[b] = 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        rank[k] = rank_add(counts, bin[k], valid[k], hot);
    __syncthreads();
    uint32_t c[BINS_PER_THREAD], o[BINS_PER_THREAD];
#pragma unroll
    for (int j = 0; j < (int)BINS_PER_THREAD; j++) {
        const uint32_t b = threadIdx.x * BINS_PER_THREAD + j;
        c[j] = b < bins ? counts[b] : 0;
    }
    bin_scan(scan_temp).ExclusiveSum(c, o);
#pragma unroll
    for (int j = 0; j < (int)BINS_PER_THREAD; j++) {
        const uint32_t b = threadIdx.x * BINS_PER_THREAD + j;
        if (b < bins)
            offsets[b] = o[j];
    }
    __syncthreads();
}

/* Pass-1 bin counts: hist1[b] += queries whose coarse bin is b. A block takes tiles of
 * PSA_THREADS * HIST1_ITEMS consecutive queries, each thread HIST1_ITEMS of them (lanes
 * adjacent, coalesced), and issues the tile's loads before it bins any of them (a query past the
 * end loads the tile's first one and adds nothing): a loop of one load, one bin and one add a
 * query kept one load in flight a thread, which bounds the read at the latency (64 bytes of queries
 * a thread in flight instead of 8 or 4: psa_policy.h, PSA_HIST1_BYTES). */
#define HIST1_ITEMS(K) (PSA_HIST1_BYTES >= (int)sizeof(K) ? PSA_HIST1_BYTES / (int)sizeof(K) : 1)
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) hist1_kernel(const K *__restrict__ queries, uint32_t n, psa_plan plan,
                                                            uint32_t *__restrict__ hist1)
{
    constexpr int ITEMS = HIST1_ITEMS(K);
    __shared__ uint32_t counts[PSA_MAX_BINS1];
    const uint32_t bins = (1u << plan.bits1) + 1;
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        counts[b] = 0;
    __syncthreads();
    const uint32_t hot = hot_bin<K>(plan);
    const uint64_t tile = (uint64_t)PSA_THREADS * ITEMS;
    /* (`first` is the block's: every lane of a warp calls rank_add, converged) */
    for (uint64_t first = (uint64_t)blockIdx.x * tile; first < n; first += (uint64_t)gridDim.x * tile) {
        K key[ITEMS];
        bool valid[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint64_t i = first + (uint64_t)k * PSA_THREADS + threadIdx.x;
            valid[k] = i < n;
            key[k] = queries[valid[k] ? i : first];
        }
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t bin = coarse_bin<K>(plan, key[k]);
            if (hot == UINT32_MAX) {
                if (valid[k])
                    atomicAdd(&counts[bin], 1u);
            } else {
                (void)rank_add(counts, bin, valid[k], hot);
            }
        }
    }
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (counts[b])
            atomicAdd(&hist1[b], counts[b]);
}

/* One block: offsets1 = exclusive scan of hist1 over the 2^bits1 coarse bins and the outside bin
 * (offsets1[bins1] = the queries inside the span, offsets1[bins1 + 1] = n), cursor1 = offsets1, and
 * tile_start = exclusive scan of each coarse bin's pass-2 tile count (the outside bin has none). */
#define SCAN1_THREADS 1024
#define SCAN1_ITEMS ((PSA_MAX_BINS1 + SCAN1_THREADS - 1) / SCAN1_THREADS)
__global__ void __launch_bounds__(SCAN1_THREADS) scan1_kernel(const uint32_t *__restrict__ hist1, uint32_t bins1,
                                                              uint32_t *__restrict__ offsets1,
                                                              uint32_t *__restrict__ cursor1,
                                                              uint32_t *__restrict__ tile_start, uint32_t tile_size)
{
    typedef cub::BlockScan<uint32_t, SCAN1_THREADS> scan;
    __shared__ typename scan::TempStorage temp;
    uint32_t count[SCAN1_ITEMS], offset[SCAN1_ITEMS], tiles[SCAN1_ITEMS], tile[SCAN1_ITEMS];
#pragma unroll
    for (int j = 0; j < (int)SCAN1_ITEMS; j++) {
        const uint32_t b = threadIdx.x * SCAN1_ITEMS + j;
        count[j] = b <= bins1 ? hist1[b] : 0;
        tiles[j] = b < bins1 ? (count[j] + tile_size - 1) / tile_size : 0;
    }
    uint32_t total, tiles_total;
    scan(temp).ExclusiveSum(count, offset, total);
    __syncthreads();
    scan(temp).ExclusiveSum(tiles, tile, tiles_total);
#pragma unroll
    for (int j = 0; j < (int)SCAN1_ITEMS; j++) {
        const uint32_t b = threadIdx.x * SCAN1_ITEMS + j;
        if (b <= bins1) {
            offsets1[b] = offset[j];
            cursor1[b] = offset[j];
        }
        if (b < bins1)
            tile_start[b] = tile[j];
    }
    if (threadIdx.x == 0) {
        offsets1[bins1 + 1] = total;
        tile_start[bins1] = tiles_total;
    }
}

/* Pass-2 bin counts: hist2[c << bits2 | f] += items of coarse bin c with fine bin f. */
template <typename K>
__global__ void __launch_bounds__(PSA_THREADS) hist2_kernel(const K *__restrict__ keys1, psa_plan plan, pass2_tiles m,
                                                            uint32_t tile, uint32_t *__restrict__ hist2)
{
    __shared__ uint32_t counts[PSA_MAX_BINS];
    __shared__ tile_place place;
    const uint32_t bins = 1u << plan.bits2;
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        counts[b] = 0;
    const tile_place t = block_tile(true, 0, m, tile, &place);
    if (t.begin == t.end)
        return; /* block-uniform */
    for (uint32_t s = t.begin + threadIdx.x; s < t.end; s += blockDim.x)
        atomicAdd(&counts[fine_bin<K>(plan, keys1[s])], 1u);
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += blockDim.x)
        if (counts[b])
            atomicAdd(&hist2[(t.coarse << plan.bits2) | b], counts[b]);
}

/* Pass-2 bin counts from the fine bins that pass 1 wrote beside its keys (fine[slot], F = uint8_t
 * or uint16_t: psa_fine_bytes), not from the keys: 1 or 2 bytes a query read instead of 8 (bench/
 * NOTES.md, "Pass 2's count from pass 1's fine bins"). Each block counts HIST2_TILES consecutive
 * pass-2 tiles of HIST2_THREADS threads, each thread one run of consecutive fine bins, loaded in
 * 16-byte vectors where the tile is aligned (a chunked pass 1's tiles are); the block adds its
 * counts to hist2 once per coarse bin it met, not once a tile (the tile's 2^bits2 atomic adds,
 * 2^8 a tile, would otherwise cost as much as the reads). */
#define HIST2_THREADS 256
#define HIST2_TILES 4
#define HIST2_MAX_VECS 4 /* a thread's run: tile / HIST2_THREADS bins, at most 64 bytes */
static_assert(HIST2_THREADS % 32 == 0, "pass2_tile_to's full-warp ballots: blocks of whole warps");

__device__ __forceinline__ void hist2_flush(uint32_t *counts, uint32_t bins, uint32_t coarse, uint32_t bits2,
                                            uint32_t *__restrict__ hist2)
{
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += HIST2_THREADS) {
        if (counts[b])
            atomicAdd(&hist2[(coarse << bits2) | b], counts[b]);
        counts[b] = 0;
    }
    __syncthreads();
}

template <typename F>
__global__ void __launch_bounds__(HIST2_THREADS) hist2_fine_kernel(const F *__restrict__ fine, psa_plan plan,
                                                                   pass2_tiles m, uint32_t tile,
                                                                   uint32_t *__restrict__ hist2)
{
    __shared__ uint32_t counts[PSA_MAX_BINS];
    __shared__ tile_place place;
    constexpr uint32_t per_vec = 16 / sizeof(F);
    const uint32_t bins = 1u << plan.bits2;
    const uint32_t run = tile / HIST2_THREADS; /* bins a thread (16 or 32), a multiple of per_vec */
    for (uint32_t b = threadIdx.x; b < bins; b += HIST2_THREADS)
        counts[b] = 0;
    uint32_t coarse = UINT32_MAX; /* block-uniform: the coarse bin whose counts the block holds */
    for (uint32_t k = 0; k < HIST2_TILES; k++) {
        __syncthreads(); /* every thread has read the previous place */
        pass2_tile_to(m, tile, blockIdx.x * HIST2_TILES + k, &place);
        __syncthreads();
        const tile_place t = place;
        if (t.begin == t.end)
            break; /* block-uniform; tiles are numbered in bin order, so the rest are empty too */
        if (t.coarse != coarse) {
            if (coarse != UINT32_MAX)
                hist2_flush(counts, bins, coarse, plan.bits2, hist2);
            coarse = t.coarse;
        }
        const uint32_t first = t.begin + threadIdx.x * run;
        if (t.end - t.begin == tile && (reinterpret_cast<uintptr_t>(fine + t.begin) & 15u) == 0) {
            /* a whole tile, aligned (then every thread's run is: run * sizeof(F) is 16 or more) */
            uint4 raw[HIST2_MAX_VECS];
            const uint32_t vecs = run / per_vec;
#pragma unroll
            for (uint32_t v = 0; v < HIST2_MAX_VECS; v++)
                if (v < vecs)
                    raw[v] = __ldg(reinterpret_cast<const uint4 *>(fine + first) + v);
#pragma unroll
            for (uint32_t v = 0; v < HIST2_MAX_VECS; v++)
                if (v < vecs) {
                    F part[per_vec];
                    memcpy(part, &raw[v], 16);
#pragma unroll
                    for (uint32_t e = 0; e < per_vec; e++)
                        atomicAdd(&counts[part[e]], 1u);
                }
        } else {
            for (uint32_t s = t.begin + threadIdx.x; s < t.end; s += HIST2_THREADS)
                atomicAdd(&counts[__ldg(fine + s)], 1u);
        }
    }
    if (coarse != UINT32_MAX)
        hist2_flush(counts, bins, coarse, plan.bits2, hist2);
}

/* Shared memory of a partition pass: the tile grouped by bin (keys, and per position the query
 * index of unordered windows or the item's place in the tile), and per bin its count, its offset in
 * the tile and its reserved run in the output. */
template <typename K, int ITEMS> struct pass_shared {
    typename bin_scan::TempStorage scan_temp;
    tile_place place;
    /* counts[b]: the tile's items of bin b, then how many of them go to base[b] ..; the rest go to
     * base2[b] .. (a chunked pass 1's run that crosses a chunk) */
    uint32_t counts[PSA_MAX_BINS], offsets[PSA_MAX_BINS], base[PSA_MAX_BINS], base2[PSA_MAX_BINS];
    K keys[PSA_THREADS * ITEMS];
    uint32_t source[PSA_THREADS * ITEMS];
};

/* Where an unordered window's final positions go (the caller's positions, psa_partition's
 * positions_out, 64- or 32-bit words): slot - outside_shift gets base + the query index for the
 * queries outside the span (outside_shift: where their region starts, less *in_span), and slot for
 * the others in the pass that makes the final layout (in_span_final); an earlier pass carries the
 * index to pass 2 in its own positions_out[slot] (32 bits). */
struct final_positions {
    psa_positions out;
    uint32_t outside_shift;
    bool in_span_final;
};

/* A partition pass over one tile. Pass 1 reads the queries in query order; pass 2 reads the keys of
 * one coarse bin. Each item gets slot base[bin] + rank, one global atomic add per non-empty bin
 * reserving the tile's run. The tile leaves grouped by bin through shared memory, so each bin's run
 * is written whole: keys_out[slot] = key, and for each grouped position p of the tile (t.begin + p)
 * an ordered window records slots[p] = the slot and sources[p] = the item's index in the tile (what
 * the restore step reads back, coalesced), an unordered one carries the query index to
 * positions_out[slot] for pass 2, or where the slot is final, to the caller's positions (fin). */
template <typename K, bool UNORDERED, int ITEMS>
__global__ void __launch_bounds__(PSA_THREADS, PSA_MIN_BLOCKS)
pass_kernel(bool second, const K *__restrict__ keys_in, uint32_t n, psa_plan plan, pass2_tiles m,
            pass1_chunks chunks, uint32_t *__restrict__ cursor, K *__restrict__ keys_out,
            uint32_t *__restrict__ slots, uint16_t *__restrict__ sources, const uint32_t *__restrict__ positions_in,
            uint32_t *__restrict__ positions_out, final_positions fin, void *__restrict__ fine_out,
            uint32_t fine_bytes)
{
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    pass_shared<K, ITEMS> &sh = *reinterpret_cast<pass_shared<K, ITEMS> *>(shared_bytes);
    const tile_place t = block_tile(second, n, m, PSA_THREADS * ITEMS, &sh.place);
    if (t.begin == t.end)
        return; /* block-uniform */
    const uint32_t bins = second ? 1u << plan.bits2 : (1u << plan.bits1) + 1;
    uint32_t *bin_cursor = second ? cursor + ((size_t)t.coarse << plan.bits2) : cursor;
    /* (pass 2 of an unordered window loads its query indices in the scatter below: loaded with the
     * keys instead, they cost registers — measured with the positions written by the passes, 64-bit
     * keys: sorted results 5.54 ms against 5.41, bench/NOTES.md "The positions written by the passes";
     * again in session 25, call 3: 64-bit sorted rows −4 to −5 % against the same build without it) */
    K key[ITEMS];
    bool valid[ITEMS];
    uint32_t bin[ITEMS], rank[ITEMS];
    /* every load of the tile issued before any key is used: an invalid item (past the end of a
     * partial tile) loads the tile's first key, so that no load sits in a branch — loads in
     * branches, each used by its bin before the next was issued, made a thread's ITEMS loads ITEMS
     * round trips one after another (bench/NOTES.md, "Session 25": 38 % of pass 1's stall samples) */
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const uint32_t s = t.begin + (uint32_t)k * PSA_THREADS + threadIdx.x;
        valid[k] = s < t.end;
        key[k] = keys_in[valid[k] ? s : t.begin];
    }
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        bin[k] = second ? fine_bin<K>(plan, key[k]) : coarse_bin<K>(plan, key[k]);
    group_tile(bin, valid, bins, second ? UINT32_MAX : hot_bin<K>(plan), sh.counts, sh.offsets, sh.scan_temp, rank);
    for (uint32_t b = threadIdx.x; b < bins; b += PSA_THREADS)
        if (sh.counts[b]) {
            if (!second && chunks.taken)
                reserve_chunked(chunks, b, sh.counts[b], 1u << plan.bits1, PSA_THREADS * ITEMS, &sh.base[b],
                                &sh.counts[b], &sh.base2[b]);
            else
                sh.base[b] = atomicAdd(&bin_cursor[b], sh.counts[b]);
        }
#pragma unroll
    for (int k = 0; k < ITEMS; k++)
        if (valid[k]) {
            const uint32_t at = sh.offsets[bin[k]] + rank[k];
            const uint32_t local = (uint32_t)k * PSA_THREADS + threadIdx.x;
            sh.keys[at] = key[k];
            sh.source[at] = UNORDERED ? (second ? positions_in[t.begin + local] : t.begin + local) : local;
        }
    __syncthreads();
    const uint32_t count = t.end - t.begin;
    for (uint32_t at = threadIdx.x; at < count; at += PSA_THREADS) {
        const K q = sh.keys[at];
        uint32_t fine = 0;
        const uint32_t b = second ? fine_bin<K>(plan, q) : coarse_bin<K>(plan, q, &fine);
        const uint32_t r = at - sh.offsets[b], first = sh.counts[b];
        const uint32_t slot = r < first ? sh.base[b] + r : sh.base2[b] + (r - first);
        const bool out_of_span = !second && b == (1u << plan.bits1);
        /* a query outside the span is not searched by the staged search: its key is needed only by
         * the descent over every slot of a one-pass plan (PSA's descent path), where the outside
         * region is slots *in_span .. n - 1 (fin.in_span_final: pass 1 of a one-pass plan) */
        if (!out_of_span || fin.in_span_final) {
            keys_out[slot] = q;
            /* pass 1 of a two-pass plan: the fine bin beside the key, for pass 2's count */
            if (fine_bytes == 1)
                static_cast<uint8_t *>(fine_out)[slot] = (uint8_t)fine;
            else if (fine_bytes == 2)
                static_cast<uint16_t *>(fine_out)[slot] = (uint16_t)fine;
        }
        if (UNORDERED) {
            const uint32_t query = sh.source[at];
            if (out_of_span || fin.in_span_final)
                psa_put_position(fin.out, out_of_span ? slot - fin.outside_shift : slot, query);
            else
                positions_out[slot] = query;
        } else {
            slots[t.begin + at] = out_of_span ? known_slot<K>(plan, q) : slot;
            sources[t.begin + at] = (uint16_t)sh.source[at];
        }
    }
}

/* Gathers in flight per thread in a restore step. */
#define RESTORE_BATCH 4

/* Shared memory of a restore step: the tile's results in input order. */
template <typename K, bool KEYS, int ITEMS> struct restore_shared {
    tile_place place;
    K values[PSA_THREADS * ITEMS];
    K keys[KEYS ? PSA_THREADS * ITEMS : 1];
    uint8_t found[PSA_THREADS * ITEMS];
};

/* One restore step, the inverse of one pass over the same tiles: grouped position p of the tile
 * reads its results at slots[p] — each bin's run of slots read whole, coalesced — and puts them at
 * the item's place sources[p]; the tile then leaves in input order, coalesced. */
template <typename K, bool KEYS, int ITEMS>
__global__ void __launch_bounds__(PSA_THREADS, PSA_RESTORE_MIN_BLOCKS)
restore_kernel(bool second, uint32_t n, pass2_tiles m, const uint32_t *__restrict__ slots,
               const uint16_t *__restrict__ sources, const K *__restrict__ values, const K *__restrict__ keys,
               const uint8_t *__restrict__ found, K *__restrict__ values_out, K *__restrict__ keys_out,
               uint8_t *__restrict__ found_out, psa_known_answers known)
{
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    restore_shared<K, KEYS, ITEMS> &sh = *reinterpret_cast<restore_shared<K, KEYS, ITEMS> *>(shared_bytes);
    const tile_place t = block_tile(second, n, m, PSA_THREADS * ITEMS, &sh.place);
    if (t.begin == t.end)
        return; /* block-uniform */
    const uint32_t count = t.end - t.begin;
    /* a thread's loads in batches of RESTORE_BATCH, each batch's gathers in flight at once (the
     * batch bounds the registers, hence the blocks resident per SM) */
#pragma unroll 1
    for (int first = 0; first < ITEMS; first += RESTORE_BATCH) {
        uint32_t s[RESTORE_BATCH], d[RESTORE_BATCH];
#pragma unroll
        for (int k = 0; k < RESTORE_BATCH; k++) {
            const uint32_t at = (uint32_t)(first + k) * PSA_THREADS + threadIdx.x;
            s[k] = at < count ? __ldg(slots + t.begin + at) : 0;
            d[k] = at < count ? __ldg(sources + t.begin + at) : 0;
        }
        K v[RESTORE_BATCH], kv[RESTORE_BATCH];
        uint8_t f[RESTORE_BATCH];
#pragma unroll
        for (int k = 0; k < RESTORE_BATCH; k++) {
            const bool here = (uint32_t)(first + k) * PSA_THREADS + threadIdx.x < count;
            if (here && s[k] >= SLOT_KNOWN) { /* set apart by pass 1: the answer is known */
                /* (picked field by field: a reference to one of the answers would put the kernel's
                 * parameters on the stack, 72 bytes of local memory a thread) */
                const bool below = s[k] == SLOT_BELOW, at_min = s[k] == SLOT_AT_MIN;
                const bool hit = s[k] == SLOT_ABOVE ? false
                               : below              ? known.below.found
                               : at_min             ? known.at_min.found
                                                    : known.at_max.found;
                const uint64_t value = below ? known.below.value : at_min ? known.at_min.value : known.at_max.value;
                const uint64_t key = below ? known.below.key : at_min ? known.at_min.key : known.at_max.key;
                v[k] = hit ? (K)value : (K)0;
                kv[k] = hit ? (K)key : (K)0;
                f[k] = hit;
                continue;
            }
            v[k] = here && values_out ? __ldg(values + s[k]) : (K)0;
            kv[k] = here && KEYS ? __ldg(keys + s[k]) : (K)0;
            f[k] = here ? __ldg(found + s[k]) : 0;
        }
#pragma unroll
        for (int k = 0; k < RESTORE_BATCH; k++)
            if ((uint32_t)(first + k) * PSA_THREADS + threadIdx.x < count) {
                sh.values[d[k]] = v[k];
                if (KEYS)
                    sh.keys[d[k]] = kv[k];
                sh.found[d[k]] = f[k];
            }
    }
    __syncthreads();
    for (uint32_t d = threadIdx.x; d < count; d += PSA_THREADS) {
        if (values_out)
            values_out[t.begin + d] = sh.values[d];
        if (KEYS)
            keys_out[t.begin + d] = sh.keys[d];
        found_out[t.begin + d] = sh.found[d];
    }
}

unsigned blocks_for(uint64_t items, uint64_t per_block)
{
    uint64_t b = (items + per_block - 1) / per_block;
    return b ? (unsigned)b : 1u;
}

int sm_count()
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        return 80;
    }
    return sms;
}

/* Kernels with more than 48 KiB of dynamic shared memory must say so once (per device; setting it
 * again is harmless). */
template <typename F> cudaError_t allow_shared(F kernel, size_t bytes)
{
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

struct parts {
    char *ws;
    layout l;
    template <typename T> T *at(size_t offset) const { return reinterpret_cast<T *>(ws + offset); }
};

/* Pass 2's tiles of a window of n queries under plan (pass2_tiles): the chunks where pass 1 ran
 * into chunks, else the counted bins' tiles. */
pass2_tiles tiles_of(const parts &w, const psa_plan &plan, uint32_t n)
{
    pass2_tiles m;
    m.bins1 = 1u << plan.bits1;
    m.tile_start = w.at<uint32_t>(w.l.tile_start);
    m.offsets1 = w.at<uint32_t>(w.l.offsets1);
    m.chunk_of = psa_pass1_chunked(n, plan.bits2) ? w.at<uint32_t>(w.l.chunk_state) + CHUNK_TABLES_AT : NULL;
    m.max_j = (uint32_t)w.l.max_j;
    return m;
}

template <typename K, int ITEMS>
cudaError_t partition_typed(const psa_plan &plan, const K *queries, uint32_t n, psa_positions positions_out,
                            const parts &w, psa_partitioned *out, cudaStream_t stream)
{
    const layout &l = w.l;
    K *keys1 = w.at<K>(l.keys1), *keys2 = w.at<K>(l.keys2);
    uint32_t *slots1 = w.at<uint32_t>(l.slots1), *slots2 = w.at<uint32_t>(l.slots2);
    uint16_t *sources1 = w.at<uint16_t>(l.sources1), *sources2 = w.at<uint16_t>(l.sources2);
    uint32_t *hist1 = w.at<uint32_t>(l.hist1), *offsets1 = w.at<uint32_t>(l.offsets1);
    uint32_t *cursor1 = w.at<uint32_t>(l.cursor1), *tile_start = w.at<uint32_t>(l.tile_start);
    uint32_t *hist2 = w.at<uint32_t>(l.hist2), *cursor2 = w.at<uint32_t>(l.cursor2);
    const uint32_t bins1 = 1u << plan.bits1;
    const bool two_passes = plan.bits2 > 0;
    const uint32_t tile = PSA_THREADS * ITEMS;
    const size_t pass_bytes = sizeof(pass_shared<K, ITEMS>);
    const pass2_tiles m = tiles_of(w, plan, n);
    pass1_chunks chunks = {NULL, NULL, NULL, 0, 0};
    /* unordered: the caller's positions, written by the passes: pass 1 writes the outside queries'
     * (their region starts at slot slack + *in_span after a chunked pass 1) and, for one-pass plans,
     * every one; pass 2 the others */
    const bool unordered = positions_out.out != NULL;
    const final_positions fin1 = {positions_out, (uint32_t)(m.chunk_of ? l.slack : 0), !two_passes};
    const final_positions fin2 = {positions_out, 0, true};
    /* pass 1 of a two-pass plan writes each query's fine bin into sources2 (pass 2's, unused until
     * pass 2) for pass 2's count; 0: the count reads the keys */
    const uint32_t fine_bytes = psa_fine_bytes(key_bits_of<K>(), plan.bits2);
    void *fine = fine_bytes ? (void *)sources2 : NULL;
    cudaError_t e;
    if ((e = allow_shared(pass_kernel<K, false, ITEMS>, pass_bytes)) != cudaSuccess ||
        (e = allow_shared(pass_kernel<K, true, ITEMS>, pass_bytes)) != cudaSuccess)
        return e;

    if (m.chunk_of) { /* pass 1 into chunks: no count; the chunk state starts at zero */
        uint32_t *state = w.at<uint32_t>(l.chunk_state);
        chunks.taken = state;
        chunks.bin_items = state + CHUNK_ITEMS_AT;
        chunks.of = state + CHUNK_TABLES_AT;
        chunks.max_j = (uint32_t)l.max_j;
        chunks.outside_end = (uint32_t)(l.slack + n);
        if ((e = cudaMemsetAsync(state, 0, (CHUNK_TABLES_AT + (size_t)bins1 * l.max_j) * 4, stream)) != cudaSuccess)
            return e;
    } else {
        if ((e = cudaMemsetAsync(hist1, 0, (bins1 + 1) * 4, stream)) != cudaSuccess)
            return e;
        const unsigned hist_blocks =
            (unsigned)std::min<uint64_t>(blocks_for(n, (uint64_t)PSA_THREADS * HIST1_ITEMS(K)),
                                         (uint64_t)PSA_HIST1_BLOCKS_PER_SM * sm_count());
        hist1_kernel<K><<<hist_blocks, PSA_THREADS, 0, stream>>>(queries, n, plan, hist1);
        scan1_kernel<<<1, SCAN1_THREADS, 0, stream>>>(hist1, bins1, offsets1, cursor1, tile_start, tile);
    }
    if (unordered)
        pass_kernel<K, true, ITEMS><<<blocks_for(n, tile), PSA_THREADS, pass_bytes, stream>>>(
            false, queries, n, plan, m, chunks, cursor1, keys1, NULL, NULL, NULL, slots1, fin1, fine, fine_bytes);
    else
        pass_kernel<K, false, ITEMS><<<blocks_for(n, tile), PSA_THREADS, pass_bytes, stream>>>(
            false, queries, n, plan, m, chunks, cursor1, keys1, slots1, sources1, NULL, NULL, fin1, fine, fine_bytes);
    if (m.chunk_of) /* the bins' offsets and pass-2 tiles from what pass 1 put in each */
        scan1_kernel<<<1, SCAN1_THREADS, 0, stream>>>(chunks.bin_items, bins1, offsets1, cursor1, tile_start, tile);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    out->in_span = offsets1 + bins1;
    out->keys = keys1;
    out->slots1 = unordered ? NULL : slots1;
    out->slots2 = NULL;
    if (!two_passes)
        return cudaSuccess;

    const size_t buckets = (size_t)1 << plan.bits;
    /* hist2 has one more entry, zero, so that the scan gives cursor2[buckets] = n */
    if ((e = cudaMemsetAsync(hist2, 0, (buckets + 1) * 4, stream)) != cudaSuccess)
        return e;
    const unsigned tiles = blocks_for(n, tile) + bins1; /* at most one partial tile per coarse bin */
    const unsigned fine_blocks = (unsigned)((tiles + HIST2_TILES - 1) / HIST2_TILES);
    if (fine_bytes == 1)
        hist2_fine_kernel<uint8_t><<<fine_blocks, HIST2_THREADS, 0, stream>>>((const uint8_t *)fine, plan, m, tile,
                                                                              hist2);
    else if (fine_bytes == 2)
        hist2_fine_kernel<uint16_t><<<fine_blocks, HIST2_THREADS, 0, stream>>>((const uint16_t *)fine, plan, m,
                                                                               tile, hist2);
    else
        hist2_kernel<K><<<tiles, PSA_THREADS, 0, stream>>>(keys1, plan, m, tile, hist2);
    size_t scan_bytes = l.scan_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(w.ws + l.scan_temp, scan_bytes, hist2, cursor2, (int)(buckets + 1),
                                           stream)) != cudaSuccess)
        return e;
    if (unordered)
        pass_kernel<K, true, ITEMS><<<tiles, PSA_THREADS, pass_bytes, stream>>>(
            true, keys1, n, plan, m, chunks, cursor2, keys2, NULL, NULL, slots1, slots2, fin2, NULL, 0);
    else
        pass_kernel<K, false, ITEMS><<<tiles, PSA_THREADS, pass_bytes, stream>>>(
            true, keys1, n, plan, m, chunks, cursor2, keys2, slots2, sources2, NULL, NULL, fin2, NULL, 0);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    out->keys = keys2;
    out->slots2 = unordered ? NULL : slots2;
    return cudaSuccess;
}

template <typename K, bool KEYS, int ITEMS>
cudaError_t restore_typed_items(const psa_partitioned *part, const parts &w, const K *values, const K *keys,
                          const uint8_t *found, K *values_out, K *keys_out, uint8_t *found_out,
                          psa_known_answers known, cudaStream_t stream)
{
    const layout &l = w.l;
    const psa_plan &plan = part->plan;
    const uint32_t n = part->n;
    const uint32_t tile = PSA_THREADS * ITEMS;
    const size_t bytes = sizeof(restore_shared<K, KEYS, ITEMS>);
    cudaError_t e = allow_shared(restore_kernel<K, KEYS, ITEMS>, bytes);
    if (e != cudaSuccess)
        return e;
    const pass2_tiles m = tiles_of(w, plan, n);
    if (part->slots2) {
        /* the step of pass 2 first: results of final slots into pass-1 slot order (the pass-2 keys'
         * buffer takes the values, the pass-1 keys' the keys), then the pass 1 step reads them */
        K *mid_values = w.at<K>(l.keys2), *mid_keys = w.at<K>(l.keys1);
        uint8_t *mid_found = w.at<uint8_t>(l.found_tmp);
        const unsigned tiles = blocks_for(n, tile) + (1u << plan.bits1);
        restore_kernel<K, KEYS, ITEMS><<<tiles, PSA_THREADS, bytes, stream>>>(
            true, n, m, part->slots2, w.at<uint16_t>(l.sources2), values, keys, found,
            values_out ? mid_values : NULL, mid_keys, mid_found, known);
        values = mid_values;
        keys = mid_keys;
        found = mid_found;
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    restore_kernel<K, KEYS, ITEMS><<<blocks_for(n, tile), PSA_THREADS, bytes, stream>>>(
        false, n, m, part->slots1, w.at<uint16_t>(l.sources1), values, keys, found, values_out,
        keys_out, found_out, known);
    return cudaGetLastError();
}

/* The restore with the tile shape its partition used. */
template <typename K, bool KEYS>
cudaError_t restore_typed(const psa_partitioned *part, const parts &w, const K *values, const K *keys,
                          const uint8_t *found, K *values_out, K *keys_out, uint8_t *found_out,
                          psa_known_answers known, cudaStream_t stream)
{
    if constexpr (sizeof(K) == 4) /* psa_pass_items: only 32-bit keys take the large tiles */
        if (part->tile_items == PSA_ITEMS_LARGE)
            return restore_typed_items<K, KEYS, PSA_ITEMS_LARGE>(part, w, values, keys, found, values_out, keys_out,
                                                                 found_out, known, stream);
    if (part->tile_items != PSA_ITEMS)
        return cudaErrorInvalidValue;
    return restore_typed_items<K, KEYS, PSA_ITEMS>(part, w, values, keys, found, values_out, keys_out, found_out,
                                                   known, stream);
}

} /* namespace */

extern "C" cudaError_t psa_workspace_bytes(uint32_t key_bits, uint32_t capacity, const psa_plan *plan,
                                           size_t *bytes_out)
{
    (void)plan; /* the layout serves every plan */
    layout l;
    cudaError_t e = layout_of(key_bits, capacity, &l);
    *bytes_out = l.total;
    return e;
}

extern "C" cudaError_t psa_partition(uint32_t key_bits, const psa_plan *plan, const void *queries, uint32_t n,
                                     psa_positions positions_out, void *workspace, size_t workspace_bytes,
                                     psa_partitioned *out, cudaStream_t stream)
{
    if (plan->bits1 > PSA_MAX_PASS1_BITS || plan->bits2 > PSA_MAX_PASS_BITS || plan->bits != plan->bits1 + plan->bits2)
        return cudaErrorInvalidValue;
    if (plan->edges && positions_out.out) /* edges: ordered windows only (psa_gpu.h) */
        return cudaErrorInvalidValue;
    parts w;
    w.ws = (char *)workspace;
    cudaError_t e = layout_of(key_bits, n, &w.l); /* no larger than the capacity's layout */
    if (e != cudaSuccess)
        return e;
    if (w.l.total > workspace_bytes)
        return cudaErrorInvalidValue;
    out->plan = *plan;
    out->n = n;
    out->tile_items = psa_pass_items(key_bits, n);
    out->workspace = workspace;
    if (n == 0) {
        out->keys = queries;
        out->in_span = NULL;
        out->slots1 = out->slots2 = NULL;
        return cudaSuccess;
    }
    if (key_bits == 32) /* (psa_pass_items gives PSA_ITEMS_LARGE to 32-bit keys only) */
        return out->tile_items == PSA_ITEMS_LARGE
                   ? partition_typed<uint32_t, PSA_ITEMS_LARGE>(*plan, (const uint32_t *)queries, n, positions_out,
                                                                w, out, stream)
                   : partition_typed<uint32_t, PSA_ITEMS>(*plan, (const uint32_t *)queries, n, positions_out,
                                                          w, out, stream);
    return partition_typed<uint64_t, PSA_ITEMS>(*plan, (const uint64_t *)queries, n, positions_out, w, out,
                                                stream);
}

extern "C" cudaError_t psa_restore(uint32_t key_bits, const psa_partitioned *part, const void *values,
                                   const void *keys, const uint8_t *found, void *values_out, void *keys_out,
                                   uint8_t *found_out, const psa_known_answers *known_answers,
                                   cudaStream_t stream)
{
    psa_known_answers known;
    memset(&known, 0, sizeof known); /* below the span: not found */
    if (known_answers)
        known = *known_answers;
    if (part->n == 0)
        return cudaSuccess;
    if (!part->slots1 || !found || !found_out || (part->plan.edges && !known_answers))
        return cudaErrorInvalidValue;
    parts w;
    w.ws = (char *)part->workspace;
    cudaError_t e = layout_of(key_bits, part->n, &w.l);
    if (e != cudaSuccess)
        return e;
    const bool with_keys = keys && keys_out;
    if (key_bits == 32)
        return with_keys ? restore_typed<uint32_t, true>(part, w, (const uint32_t *)values, (const uint32_t *)keys,
                                                         found, (uint32_t *)values_out, (uint32_t *)keys_out,
                                                         found_out, known, stream)
                         : restore_typed<uint32_t, false>(part, w, (const uint32_t *)values, NULL, found,
                                                          (uint32_t *)values_out, NULL, found_out, known, stream);
    return with_keys ? restore_typed<uint64_t, true>(part, w, (const uint64_t *)values, (const uint64_t *)keys, found,
                                                     (uint64_t *)values_out, (uint64_t *)keys_out, found_out, known,
                                                     stream)
                     : restore_typed<uint64_t, false>(part, w, (const uint64_t *)values, NULL, found,
                                                      (uint64_t *)values_out, NULL, found_out, known, stream);
}

extern "C" cudaError_t psa_scan_temp_bytes(uint64_t max_n, size_t *bytes_out)
{
    *bytes_out = 0;
    return cub::DeviceScan::ExclusiveSum(NULL, *bytes_out, (const uint64_t *)NULL, (uint64_t *)NULL,
                                         (int64_t)(max_n + 1), 0);
}

/* counts has n entries; the scan runs over n + 1 items whose last is a zero, so offsets[n] is the
 * total: the caller's counts array must have room for that extra zero (count[n] = 0). */
extern "C" cudaError_t psa_exclusive_scan(void *temp, size_t temp_bytes, const uint64_t *counts,
                                          uint64_t *offsets, uint64_t n, cudaStream_t stream)
{
    return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, offsets, (int64_t)(n + 1), stream);
}

/* --- the scratch of a window of the search pipeline -------------------------------------------- */

extern "C" cudaError_t psa_scratch_bytes(uint32_t key_bits, uint32_t window, size_t *bytes_out)
{
    size_t workspace = 0; /* the partition's workspace (every plan's) */
    cudaError_t e = psa_workspace_bytes(key_bits, window, NULL, &workspace);
    if (e != cudaSuccess)
        return e;
    const size_t kb = key_bits / 8;
    /* 255 bytes of slack: a caller's workspace need not be aligned */
    *bytes_out = 255 + psa_align_up(workspace) + 2 * psa_align_up((size_t)window * kb) + psa_align_up(window);
    return cudaSuccess;
}

extern "C" psa_scratch psa_scratch_carve(void *block, size_t block_bytes, uint32_t key_bits, uint32_t window)
{
    psa_scratch s;
    const size_t kb = key_bits / 8;
    char *at = (char *)(((uintptr_t)block + 255) & ~(uintptr_t)255);
    /* the workspace: what the block holds before the slot arrays (at least what psa_scratch_bytes
     * counted for the window when the block came from it; the partition checks) */
    const size_t slots = 2 * psa_align_up((size_t)window * kb) + psa_align_up(window);
    const size_t usable = block_bytes - (size_t)(at - (char *)block);
    s.workspace = at;
    s.workspace_bytes = block_bytes >= (size_t)(at - (char *)block) && usable > slots
                            ? (usable - slots) & ~(size_t)(PSA_ALIGN - 1)
                            : 0;
    at += s.workspace_bytes;
    s.slot_values = at;
    at += psa_align_up((size_t)window * kb);
    s.slot_keys = at;
    at += psa_align_up((size_t)window * kb);
    s.slot_found = (uint8_t *)at;
    return s;
}
