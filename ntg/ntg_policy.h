/* ntg_policy.h — the tuning numbers of the NTG kernels, apart from the algorithms (as CUB's
 * policies): block shapes, the shared-memory stage of the partitioned search, range walks. Chosen
 * by measurement on the H100 (bench/NOTES.md); nothing here changes a result. */
#ifndef HARMONIA_NTG_POLICY_H
#define HARMONIA_NTG_POLICY_H

/* The descent kernels: threads per block, and the cap on blocks (they loop grid-stride). */
#define NTG_BLOCK_THREADS 256
#define NTG_MAX_BLOCKS (1u << 20)

/* Leaves a range-count walks forward from the lower bound's leaf before it descends again. */
#define NTG_RANGE_WALK_LEAVES 2
/* Ranges longer than this are copied by the whole warp, shorter ones by their group. */
#define NTG_WARP_COPY_MIN 64

/* The search of a partitioned window (ntg_partitioned.cu): a block takes a tile of
 * NTG_PS_THREADS * NTG_PS_ITEMS consecutive slots, stages the leaves they can fall in into
 * NTG_PS_STAGE_BYTES of shared memory (rows of L + 1 keys, so that rows start on different banks)
 * and searches there; a tile whose leaves do not fit descends the tree instead. */
#define NTG_PS_THREADS 256
#define NTG_PS_ITEMS 8
#define NTG_PS_TILE (NTG_PS_THREADS * NTG_PS_ITEMS)
#define NTG_PS_STAGE_BYTES (36u * 1024u)
/* Blocks of the partitioned search resident per SM (its register budget follows). */
#define NTG_PS_MIN_BLOCKS 4

#endif /* HARMONIA_NTG_POLICY_H */
