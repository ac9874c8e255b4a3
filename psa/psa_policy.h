/* psa_policy.h — the tuning numbers of PSA by partition, apart from the algorithm (as CUB's
 * policies): tile shapes of the passes, how fine the buckets are, how large a window is. Chosen by
 * measurement on the H100 (bench/NOTES.md, "PSA by partition"); nothing here changes a result. */
#ifndef HARMONIA_PSA_POLICY_H
#define HARMONIA_PSA_POLICY_H

/* Threads and items per thread of the histogram and partition passes: a tile of
 * THREADS * ITEMS queries reserves its slots with one atomic add per non-empty bin. */
#define PSA_THREADS 512
#define PSA_ITEMS 8
#define PSA_TILE (PSA_THREADS * PSA_ITEMS)
/* Blocks of a partition pass or restore step resident per SM (their register budget follows; their
 * tile in shared memory takes 60 to 104 KiB). */
#define PSA_MIN_BLOCKS 2
/* The same for a restore step (36 to 72 KiB of shared memory a block). */
#define PSA_RESTORE_MIN_BLOCKS 3

/* Bins of one pass live in shared memory: at most 2^PSA_MAX_PASS_BITS per pass; pass 1 at most
 * 2^PSA_MAX_PASS1_BITS, plus one bin for queries outside the keys' span. A plan of more than
 * PSA_MAX_PASS1_BITS bits takes two passes, the bits split evenly, the odd one to pass 2. */
#define PSA_MAX_PASS_BITS 10
#define PSA_MAX_PASS1_BITS 9
#define PSA_MAX_BITS (PSA_MAX_PASS1_BITS + PSA_MAX_PASS_BITS)

/* Buckets are made about this many leaves wide: a search tile of consecutive slots then spans a
 * few buckets, whose leaves fit the search kernel's shared-memory stage (ntg_policy.h). */
#define PSA_LEAVES_PER_BUCKET 32

/* The largest window partitioned at once (its scratch is about 40 bytes per query). */
#define PSA_MAX_WINDOW (1u << 27)

#endif /* HARMONIA_PSA_POLICY_H */
