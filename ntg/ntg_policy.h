/* ntg_policy.h — the tuning numbers of the NTG kernels, apart from the algorithms (as CUB's
 * policies): block shapes, the shared-memory stage of the partitioned search, range walks, the
 * default group size G. One table serves every architecture the build targets: the values were
 * measured on sm_90 (bench/NOTES.md, "Defaults and where they were measured"); an architecture
 * measured otherwise gets its own block here under #if HARMONIA_TUNING_SM == NN (meson defines it:
 * the highest of -Dgpu_arch). Nothing here changes a result. */
#ifndef HARMONIA_NTG_POLICY_H
#define HARMONIA_NTG_POLICY_H

#include <stdint.h>

/* The descent kernels: threads per block, and the cap on blocks (they loop grid-stride). */
#define NTG_BLOCK_THREADS 256
#define NTG_MAX_BLOCKS (1u << 20)

/* The tree shape the point-lookup and lower-bound kernels are also compiled for, per key width:
 * the library's default fanout (HARMONIA_DEFAULT_FANOUT) and leaf size (HARMONIA_DEFAULT_LEAF_SIZE;
 * the front checks at compile time that they agree). A tree of this shape gets kernels whose node
 * searches are unrolled with constant offsets (ntg_device.cuh, group_count_fixed); other shapes
 * read F and L from the view. */
#define NTG_FIXED_FANOUT_64 16
#define NTG_FIXED_FANOUT_32 32
/* (The #ifndef lets an A/B build compile the kernels for another leaf size; it must then also drop
 * gpu_query.cu's assertion that this is the library's default shape: bench/NOTES.md, "Session 23",
 * call 9.) */
#ifndef NTG_FIXED_LEAF
#define NTG_FIXED_LEAF 16
#endif
/* The entries of the top cut that the fixed-shape kernels take as a parameter (ntg_kernels.cu): two
 * levels of the fixed fanouts fit (1 + F + the sentinel); a cut of more entries runs the generic
 * kernels (a small tree's third level may still fit: the switch is by entries, not levels). */
#define NTG_SMALL_CUT_ENTRIES 34
static inline int ntg_fixed_shape(unsigned fanout, unsigned leaf_size, unsigned key_bits)
{
    return leaf_size == NTG_FIXED_LEAF && fanout == (key_bits == 32 ? NTG_FIXED_FANOUT_32 : NTG_FIXED_FANOUT_64);
}

/* The default G of a tree (no G in the query config, none stored with the tree), as bytes of a node
 * per thread, from the batch size: at least 2 threads, at most a warp and the fanout. Small batches
 * are latency-bound (a few warps on a few SMs, each waiting on its chain of levels), so more threads
 * a query and fewer loads and compares a thread pay there; large ones are throughput-bound, where
 * fewer threads a query spend fewer instructions.
 * - The fixed-shape kernels (point lookups and lower bounds of the default F and L): 16 bytes a thread below NTG_FIXED_SMALL_BATCH
 *   queries (G = 8 at both widths' default fanouts), 32 bytes from there on (G = 4). Measured on
 *   the H100 with profile-ntg (bench/NOTES.md, "The fixed-shape descent"): G = 8 ahead at 2^10 and
 *   2^14 queries, G = 4 ahead from 2^18 on (by 13-20 % over G = 2 at 2^20-2^22).
 * - Other kernels (other shapes, and the range kernels, which read F and L from the view): 32 bytes below NTG_SMALL_BATCH, 64 from
 *   there on (G = 2 at F = 16, 64-bit; "Small batches in session 7").
 * `harmonia profile-ntg` measures and stores a better one per tree (then used for every batch). */
/* - Queries that arrive grouped on their top bits (PSA's descent path, psa_descent_pays; `sorted`):
 *   neighbouring groups share paths and their loads hit L1, and with 64-bit keys each group carries
 *   NTG_SORTED_QUERIES_PER_GROUP_64 queries at once (below): NTG_SORTED_BYTES_64 a thread for 64-bit
 *   keys (G = 4), NTG_SORTED_BYTES_32 for 32-bit (G = 2). With one query a group G = 2 was best at
 *   both widths (session 8, sort_descend; session 16, 0.424 ms against 0.440 at G = 4, 2^22 queries
 *   of 2^26 64-bit keys; session 19 behind the one-pass partition: 64-bit 2^22 queries 0.381 / 0.387
 *   ms, 2^23 0.662 / 0.651, 32-bit 2^22 0.342 / 0.369); with two, G = 4 is best for 64-bit keys
 *   (session 20, multi_probe on an H200, the partition + the descent, sorted results: 2^22 queries
 *   G = 2 0.334 / 0.317 ms at Q = 1 / 2, G = 4 0.340 / 0.296; 2^23 0.597 / 0.562, 0.594 / 0.528) and
 *   G = 2 for 32-bit (2^28 keys, 2^23 queries G = 2 0.509 / 0.497, G = 4 0.586 / 0.540). */
#define NTG_FIXED_SMALL_BATCH (1u << 16)
#define NTG_SMALL_BATCH (1u << 20)
#ifndef NTG_SORTED_BYTES_64 /* (an A/B build may move these; the library's never does) */
#define NTG_SORTED_BYTES_64 32u
#endif
#ifndef NTG_SORTED_BYTES_32
#define NTG_SORTED_BYTES_32 64u
#endif
static inline unsigned ntg_default_group_size(unsigned fanout, unsigned key_bits, unsigned long long batch,
                                              int fixed_kernel, int sorted)
{
    const unsigned bytes_per_thread = sorted         ? (key_bits == 64 ? NTG_SORTED_BYTES_64 : NTG_SORTED_BYTES_32)
                                      : fixed_kernel ? (batch < NTG_FIXED_SMALL_BATCH ? 16u : 32u)
                                                     : (batch < NTG_SMALL_BATCH ? 32u : 64u);
    const unsigned g = fanout * (key_bits / 8) / bytes_per_thread;
    const unsigned most = fanout < 32u ? fanout : 32u;
    return g < 2 ? 2u : g > most ? most : g;
}

/* Queries a group carries at once (ntg_launch_lookup_q: each level's loads of all of them issued
 * before any is counted) in the point lookups of PSA's descent path (`sorted`) of 64-bit keys: 2.
 * Measured on an H200 (bench/NOTES.md, "Session 20", multi_probe, calls 1-2), Q = 1 / 2 / 4 at the G
 * above, ms: 64-bit 2^26 keys, sorted results, 2^22 queries 0.340 / 0.296 / 0.333, 2^23 0.594 / 0.528
 * / 0.620; and in the library on the H100 (call 3, bench_versus): sorted 64-bit 2^23 queries 1.03 ->
 * 1.14x the baseline, 2^22 1.17 -> 1.29x. 32-bit keys keep one: on the H200 Q = 2 gained 0-2.5 %
 * (2^23 queries 0.509 / 0.497 ms, 2^24 0.938 / 0.920), on the H100 the library's 32-bit 2^22 rows
 * lost 2-3 % with it (call 3). The descent in query order of unsorted batches keeps one too (64-bit
 * G = 4, Q = 1 / 2: 2^18 queries 0.0322 / 0.0331 ms, 2^20 0.0993 / 0.0974; 32-bit 2^18 0.0317 /
 * 0.0337). */
#define NTG_SORTED_QUERIES_PER_GROUP_64 2u
static inline unsigned ntg_default_queries_per_group(unsigned key_bits, int sorted)
{
    return sorted && key_bits == 64 ? NTG_SORTED_QUERIES_PER_GROUP_64 : 1u;
}

/* Point lookups of fewer than NTG_VALUES_WITH_LEAF_BATCH queries on the fixed shape load each leaf's
 * values beside its keys (one memory round trip less a lookup, a whole value line read instead of a
 * sector): small batches are latency-bound (bench/NOTES.md, "The fixed-shape descent"). Not further:
 * a random load costs a 64-byte DRAM burst, and a 64-bit leaf's value line is two, so at 2^16 and
 * 2^18 queries it cost 64-bit lookups 8-13 % (32-bit keys, one burst either way: inside the noise;
 * bench/NOTES.md, "Session 23"). */
#ifndef NTG_VALUES_WITH_LEAF_BATCH
#define NTG_VALUES_WITH_LEAF_BATCH (1u << 16)
#endif

/* L2 eviction priorities of the scattered point lookups (ntg_launch_lookup: queries in no
 * particular order, no PSA) of NTG_L2_HINTS_BATCH queries or more, on the fixed shape: a mask of
 * ntg_device.cuh's NTG_HINT_LEAVES (leaf keys and values loaded evict_first) and NTG_HINT_NODES
 * (internal nodes evict_last); 0 off. Such a batch reads each leaf and value line once and the
 * level above the leaves (64-bit 2^26 keys: 32 MiB, which would fit the L2) in most lookups, yet the
 * leaves' lines streaming through the L2 evicted it. Measured on the H100 (bench/NOTES.md, "Session
 * 26", calls 2-3; ratios to the Eytzinger baseline of the same process): leaves evict_first, 64-bit
 * 2^18 queries 1.18-1.20x -> 1.39-1.40x, 2^20 1.30x -> 1.48-1.49x, 32-bit 2^18 1.22-1.24x ->
 * 1.28-1.32x, 2^20 1.33-1.34x -> 1.38-1.40x; the nodes evict_last as well: the same within the
 * noise; the nodes alone: level. Where they lost: 2^16 batches (their leaf lines stay in the L2
 * between repeated calls; call 5, the leaves alone: 64-bit -12 to -15 %, 32-bit 0 to -6 %) and PSA's
 * grouped descents (neighbours share leaves; call 2, with the nodes evict_last as well: -4 to -8 %):
 * hence the bound and the scattered launches only. No device-wide setting (no persisting carve-out),
 * and no line kept above normal priority after the call: the priorities are the loads' own. Builds
 * for sm_80 and up only (createpolicy); older targets load plainly. The #ifndef lets an A/B build
 * change it. */
#ifndef NTG_L2_HINTS
#define NTG_L2_HINTS 2
#endif
#ifndef NTG_L2_HINTS_BATCH
#define NTG_L2_HINTS_BATCH (1u << 17)
#endif

/* The start tables (ntg.h): buckets of about half a leaf's key range (two a leaf: most buckets then
 * lie in one leaf or two, and a descent goes straight to its leaf), at most 2^max_bits. Two tables
 * a version where the tree is large enough to tell them apart:
 * - the coarse one, at most 2^NTG_START_MAX_BITS buckets (16-byte entries: 1 MiB, L2-resident),
 *   for the descents of large unsorted batches, whose loads of the table are scattered: a tree of
 *   2^20 64-bit keys gets 2^17 buckets capped to 2^16 (one leaf a bucket: the leaf level); 2^26
 *   keys 2^16 buckets of 64 leaves (two levels above the leaves);
 * - the fine one, at most 2^NTG_START_FINE_MAX_BITS buckets (8 MiB; the most a psa_plan has,
 *   PSA_MAX_BITS), for the descents of grouped queries (PSA's descent path: neighbouring queries
 *   read neighbouring entries) and of windows of fewer than NTG_START_FINE_BATCH queries searched
 *   without PSA (latency-bound: each level skipped is a round trip): 2^26 64-bit keys get 2^19
 *   buckets of 8 leaves, 2^28 32-bit keys 2^19 of 32 leaves (both one level above the leaves).
 * Measured on the H100 (bench/NOTES.md, "Session 17"): the fine table alone took 7-9 % off the
 * 2^22-query unsorted batches (its 8 MiB of scattered loads against the L2) and added 4-8 % to the
 * sorted descents; hence two. The bound between them (session 23, five runs of each build, ratios
 * to the K-ary Eytzinger baseline of the same process): 2^16 queries gain 2-4 % with the fine
 * table (64-bit 1.25 -> 1.29x, 32-bit 1.20 -> 1.24x on average), 2^18 lose 1.5 %: fine below 2^17. */
#define NTG_START_MAX_BITS 16u
#define NTG_START_FINE_MAX_BITS 19u
#ifndef NTG_START_FINE_BATCH
#define NTG_START_FINE_BATCH (1u << 17)
#endif
static inline unsigned ntg_start_bits(unsigned long long n_leaves, unsigned max_bits)
{
    unsigned bits = 1;
    while (bits < max_bits && (1ull << (bits - 1)) < n_leaves)
        bits++;
    return bits;
}

/* Leaves a range-count walks forward from the lower bound's leaf before it descends again. */
#define NTG_RANGE_WALK_LEAVES 2
/* Ranges longer than this are copied by the whole warp, shorter ones by their group. */
#define NTG_WARP_COPY_MIN 64
/* The group size of a range collect, from its ranges' total pairs and number (the mean length):
 * long ranges want one range per warp (as many warps copying as there are ranges), short ones the
 * tree's G; at most the fanout (G threads search a node) and 32. The host picks it for offsets in
 * host memory; the device-array collect picks it in the kernel from offsets[0] and offsets[n], with
 * no read-back (ntg_launch_range_collect_auto). */
#ifdef __CUDACC__
#define NTG_HOST_DEVICE __host__ __device__
#else
#define NTG_HOST_DEVICE
#endif
static inline NTG_HOST_DEVICE unsigned ntg_collect_group_size(uint64_t pairs, uint64_t ranges, unsigned tree_group,
                                                              unsigned fanout)
{
    const uint64_t mean = ranges ? pairs / ranges : 0;
    const unsigned g = mean >= 512 ? 32u : mean >= 32 ? 8u : tree_group;
    return g <= fanout ? g : fanout < 32 ? fanout : 32u;
}
/* The device-array collect's grid when G is picked on the device: enough blocks for the smallest
 * G it can pick, and for the largest up to NTG_COLLECT_FILL_BLOCKS (about four waves of the H100's
 * 132 SMs; the kernel loops grid-stride beyond), so that long ranges still fill the GPU while short
 * ones launch at most that many blocks with nothing to do (a few microseconds). */
#define NTG_COLLECT_FILL_BLOCKS 4096
/* Blocks an SM the register allocator must leave room for in that kernel, which holds every G's
 * code (each G a function of its own). ptxas on sm_90, 64-bit keys: with no bound 78 registers a
 * thread (3 blocks an SM; the six G inlined: 79); 4: 64 registers, no spills; 5: 48 registers and
 * 12-52 bytes of spills in each G's function. */
#ifndef NTG_COLLECT_AUTO_MIN_BLOCKS
#define NTG_COLLECT_AUTO_MIN_BLOCKS 4
#endif

/* The search of a partitioned window (ntg_partitioned.cu): a block takes a tile of
 * NTG_PS_THREADS * NTG_PS_ITEMS consecutive slots, stages the leaves they can fall in into
 * NTG_PS_STAGE_BYTES of shared memory (rows of L + 1 keys, so that rows start on different banks)
 * and searches there; a tile whose leaves do not fit is searched in chunks (those still too wide,
 * or a dense window's chunks of too few queries a leaf, descend the tree). A window is dense
 * when a tile's expected leaves (NTG_PS_TILE slots at the window's queries per leaf) times
 * NTG_PS_DENSE_TILE_SPAN / 2 (room for tiles that straddle buckets) fit the stage; sparser windows
 * take tiles of NTG_PS_SPARSE_ITEMS slots a thread, searched in chunks whose leaves fit (more
 * blocks in flight, each staging less). */
#define NTG_PS_THREADS 256
#define NTG_PS_ITEMS 8
#define NTG_PS_TILE (NTG_PS_THREADS * NTG_PS_ITEMS)
#define NTG_PS_SPARSE_ITEMS 2
#define NTG_PS_DENSE_TILE_SPAN 3
#define NTG_PS_STAGE_BYTES (36u * 1024u)
/* A dense window's tile that does not fit at once is searched in chunks, each staged only where it
 * has at least this many queries for each leaf it would stage, else descending (a sparse window's
 * chunks are staged wherever they fit). Measured on the H100 (bench/NOTES.md, "Zipf queries of
 * 32-bit keys"): a dense window whose in-span queries are 0.8 a leaf lost 3-7 % end to end with its
 * chunks staged (all, or those of one query a leaf and more); the chunks of 32-bit Zipf windows
 * (≈ 2.5 a leaf) and 64-bit windows mostly outside the span (≈ 3.2) gained 8-12 % staged. */
#define NTG_PS_STAGE_MIN_QUERIES_PER_LEAF 2u
/* A tile staged whole whose leaves hold NTG_PS_PREFETCH_MIN_QUERIES_PER_LEAF of its queries or
 * more each on average first asks the L2 for those leaves' value lines, one prefetch a line, before
 * it stages the keys: the values are then read whole and in order, where each query's value load would be a
 * random read of the DRAM. Measured on the H200 (bench/NOTES.md, "Session 29", calls 1-2; against
 * the same build without it, alternating): sorted results of 2^24 queries over 64-bit 2^26 keys
 * (the sparse kernel, about four a leaf) 1.12-1.13x -> 1.19-1.21x the strongest ordered baseline
 * (the kernel 518 -> 465 us; its L2 then 93 % busy), 32-bit 2^26 queries over 2^28 keys +3-4 % in
 * both orders, denser windows (16-32 a leaf) level. 0 turns it off (the #ifndef lets an A/B build
 * do that). */
#ifndef NTG_PS_PREFETCH_VALUES
#define NTG_PS_PREFETCH_VALUES 1
#endif
#define NTG_PS_PREFETCH_MIN_QUERIES_PER_LEAF 1u
/* Blocks of the partitioned search resident per SM (the register budget follows). */
#define NTG_PS_MIN_BLOCKS 4
#define NTG_PS_SPARSE_MIN_BLOCKS 5

#endif /* HARMONIA_NTG_POLICY_H */
