/* ntg_policy.h — the tuning numbers of the NTG kernels, apart from the algorithms (as CUB's
 * policies): block shapes, the shared-memory stage of the partitioned search, range walks, the
 * default group size G. One table serves every architecture the build targets: the values were
 * measured on sm_90 (bench/NOTES.md, "Defaults and where they were measured"); an architecture
 * measured otherwise gets its own block here under #if HARMONIA_TUNING_SM == NN (meson defines it:
 * the highest of -Dgpu_arch). Nothing here changes a result. */
#ifndef HARMONIA_NTG_POLICY_H
#define HARMONIA_NTG_POLICY_H

/* The descent kernels: threads per block, and the cap on blocks (they loop grid-stride). */
#define NTG_BLOCK_THREADS 256
#define NTG_MAX_BLOCKS (1u << 20)

/* The default G of a tree (no G in the query config, none stored with the tree): 64 bytes of a
 * node per thread (G = 2 for 64-bit keys at F = 16 and for 32-bit keys at F = 32), 32 bytes for
 * batches below NTG_SMALL_BATCH queries, at least 2 threads, at most a warp and the fanout. Small
 * batches are latency-bound (a few warps on a few SMs, each waiting on its chain of levels), so more
 * threads a query and fewer loads and compares a thread pay there; large ones are throughput-bound,
 * where fewer threads a query spend fewer instructions. Measured on the H100 (bench/NOTES.md,
 * "Small batches in session 7"): bench_versus at 2^14 / 2^18 queries 0.82 → 0.95 / 4.10 → 4.08 G/s
 * (64-bit, 2^26 keys), 0.84 → 0.89 / 4.24 → 4.64 (32-bit, 2^28 keys), rows that move ±10 % between
 * runs; profile-ntg put G = 2 ahead from 2^19 queries on (by 15-20 % at 2^22).
 * `harmonia profile-ntg` measures and stores a better one per tree (then used for every batch). */
#define NTG_SMALL_BATCH (1u << 20)
static inline unsigned ntg_default_group_size(unsigned fanout, unsigned key_bits, unsigned long long batch)
{
    const unsigned bytes_per_thread = batch < NTG_SMALL_BATCH ? 32u : 64u;
    const unsigned g = fanout * (key_bits / 8) / bytes_per_thread;
    const unsigned most = fanout < 32u ? fanout : 32u;
    return g < 2 ? 2u : g > most ? most : g;
}

/* Leaves a range-count walks forward from the lower bound's leaf before it descends again. */
#define NTG_RANGE_WALK_LEAVES 2
/* Ranges longer than this are copied by the whole warp, shorter ones by their group. */
#define NTG_WARP_COPY_MIN 64
/* The group size of a range collect, from the ranges' mean length (pairs): long ranges want one
 * range per warp (as many warps copying as there are ranges), short ones the tree's G. */
static inline unsigned ntg_collect_group_size(double mean_length, unsigned tree_group)
{
    return mean_length >= 512 ? 32u : mean_length >= 32 ? 8u : tree_group;
}

/* The search of a partitioned window (ntg_partitioned.cu): a block takes a tile of
 * NTG_PS_THREADS * NTG_PS_ITEMS consecutive slots, stages the leaves they can fall in into
 * NTG_PS_STAGE_BYTES of shared memory (rows of L + 1 keys, so that rows start on different banks)
 * and searches there; a tile whose leaves do not fit descends the tree instead. A window is dense
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
/* Blocks of the partitioned search resident per SM (the register budget follows). */
#define NTG_PS_MIN_BLOCKS 4
#define NTG_PS_SPARSE_MIN_BLOCKS 5

#endif /* HARMONIA_NTG_POLICY_H */
