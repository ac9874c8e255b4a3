/* psa_policy.h — the tuning numbers of PSA by partition, apart from the algorithm (as CUB's
 * policies): tile shapes of the passes, how fine the buckets are, how large a window is, and when a
 * window is worth partitioning at all. One table serves every architecture the build targets: the
 * values were measured on sm_90 (bench/NOTES.md, "Session 4" and "Defaults and where they were
 * measured"); an architecture measured otherwise gets its own block here under
 * #if HARMONIA_TUNING_SM == NN (meson defines it: the highest of -Dgpu_arch). Nothing here changes
 * a result. */
#ifndef HARMONIA_PSA_POLICY_H
#define HARMONIA_PSA_POLICY_H

/* Threads and items per thread of the histogram and partition passes: a tile of
 * THREADS * ITEMS queries reserves its slots with one atomic add per non-empty bin. (The #ifndef
 * lets an experiment build override a shape with -D; the library's build never does.) */
#ifndef PSA_THREADS
#define PSA_THREADS 512
#endif
#ifndef PSA_ITEMS
#define PSA_ITEMS 8
#endif
#define PSA_TILE (PSA_THREADS * PSA_ITEMS)
/* Windows of 32-bit keys of PSA_ITEMS_LARGE_WINDOW queries or more take tiles of PSA_ITEMS_LARGE
 * items a thread (twice the runs a bin, half the atomic adds; fewer tiles, so not for smaller
 * windows, whose tiles would no longer fill the GPU). Measured on the H100 (bench/NOTES.md, "The
 * partition's bucket width", session 9), 2^27 queries on 32-bit 2^28 keys, 17 bucket bits: sorted
 * results 5.84 -> 5.56 ms, query order 6.64 -> 6.41; 64-bit keys gained nothing (4.63 -> 4.61 ms for
 * the partition at 17 bits), so they keep PSA_ITEMS. */
#define PSA_ITEMS_LARGE 16
#define PSA_ITEMS_LARGE_WINDOW (1u << 22)
static inline unsigned psa_pass_items(unsigned key_bits, unsigned window)
{
    return key_bits == 32 && window >= PSA_ITEMS_LARGE_WINDOW ? PSA_ITEMS_LARGE : PSA_ITEMS;
}
/* Bytes of queries each thread of pass 1's count (hist1_kernel: the one-pass plans of PSA's
 * descent path and the two-pass plans of smaller windows) loads before it bins any: 64 bytes, 8
 * 64-bit or 16 32-bit keys. One key a thread (8 or 4 bytes: what the count did before session 30)
 * kept one load in flight a thread and read at the latency's rate (2^23 64-bit queries: 31 us for
 * 64 MiB, 2.1 TB/s on the H200; bench/NOTES.md, "Session 30"). */
#ifndef PSA_HIST1_BYTES
#define PSA_HIST1_BYTES 64
#endif
/* Blocks of the count a streaming multiprocessor at most (the grid: this many an SM, each block
 * striding over tiles of PSA_THREADS * PSA_HIST1_BYTES bytes; fewer for a small window): 8, four
 * waves of the two blocks an SM that its registers allow at 64 bytes a thread. A/B-overridable
 * (session 31: 2, one resident wave, each block's 257 global adds once). */
#ifndef PSA_HIST1_BLOCKS_PER_SM
#define PSA_HIST1_BLOCKS_PER_SM 8
#endif
/* Two-pass plans of windows of PSA_CHUNKED_MIN_WINDOW queries or more run pass 1 without a count of
 * its bins first: each coarse bin fills chunks of one tile's size taken in turn from a global
 * counter (psa_partition.cu, "Pass 1 into chunks"), and pass 2's tiles are those chunks. It saves
 * the count's read of the window (a quarter of the passes' reads) at the price of (2^PSA_MAX_PASS1_BITS)
 * tiles of slack in pass 1's arrays, which smaller windows would feel. Not below
 * PSA_ITEMS_LARGE_WINDOW: a chunked window's tile size is then that of every window at least as
 * large (the workspace layout depends on it). */
#ifndef PSA_CHUNKED_MIN_WINDOW
#define PSA_CHUNKED_MIN_WINDOW (1u << 23)
#endif
static inline int psa_pass1_chunked(unsigned window, unsigned bits2)
{
    return bits2 > 0 && window >= PSA_CHUNKED_MIN_WINDOW;
}
/* Pass 2's count reads the fine bin of each query (its bucket's low bits2 bits) that pass 1 wrote
 * beside the key — 1 byte up to 8 fine bits, else 2 — instead of re-reading the keys, where that
 * moves fewer bytes (2 x the fine bin's bytes, written and read, below the key's). (bench/NOTES.md,
 * "Pass 2's count from pass 1's fine bins"; the #ifndef lets an A/B build turn it off.) */
#ifndef PSA_FINE_BINS
#define PSA_FINE_BINS 1
#endif
static inline unsigned psa_fine_bytes(unsigned key_bits, unsigned bits2)
{
    const unsigned bytes = bits2 <= 8 ? 1u : 2u;
    return PSA_FINE_BINS && bits2 > 0 && 2 * bytes < key_bits / 8 ? bytes : 0;
}
/* Pass 1 of 64-bit keys ranks the items of a warp that fall outside the keys' span with one
 * shared-memory atomic add for all of them (psa_partition.cu, rank_add), where a warp has any:
 * measured on the H100 (bench/NOTES.md, "Session 21", call 2), 2^27 queries 90 % outside the span
 * of 2^26 keys, 3.20-3.23 -> 2.94 ms unordered, 3.67-3.71 -> 3.41 in query order, uniform
 * windows unchanged. 32-bit keys gained nothing then (their "outside" window of bench_versus has
 * half its queries on the smallest key, which joined the outside bin only with session 22's edges)
 * and may lose a little (a 2^20-key tree's one-pass windows, the pass most of the call: −4.5 % in
 * one run), so they keep one add a lane (PSA_RANK_AGGREGATE_32, below).
 * Aggregating every bin (the first lane's, or each group with __match_any_sync) cost 32-bit uniform
 * windows 7 % (call 1, H200: pass 1 +7 %, pass 2's count +38 %). 0 turns it off (the #ifndef lets
 * an A/B build do that). */
#ifndef PSA_RANK_AGGREGATE
#define PSA_RANK_AGGREGATE 1
#endif
/* The same for 32-bit keys: 1 aggregates their outside bin too. Measured on the H100 (bench/NOTES.md,
 * "Session 22", call 2): the 32-bit "outside" window in query order, whose edge queries now join
 * the outside bin (90 % of it), 3.22-3.24 -> 2.90-2.93 ms, but uniform windows +1 % and the one-pass
 * windows of a 2^20-key tree 6 % slower (sorted results 1.50 -> 1.42x the baseline): the default
 * path stays as it was. */
#ifndef PSA_RANK_AGGREGATE_32
#define PSA_RANK_AGGREGATE_32 0
#endif
/* Blocks of a partition pass or restore step resident per SM (their register budget follows; their
 * tile in shared memory takes 60 to 104 KiB). */
#ifndef PSA_MIN_BLOCKS
#define PSA_MIN_BLOCKS 2
#endif
/* The same for a restore step (36 to 72 KiB of shared memory a block). */
#ifndef PSA_RESTORE_MIN_BLOCKS
#define PSA_RESTORE_MIN_BLOCKS 3
#endif

/* Bins of one pass live in shared memory: at most 2^PSA_MAX_PASS_BITS per pass; pass 1 at most
 * 2^PSA_MAX_PASS1_BITS, plus one bin for queries outside the keys' span. A plan of more than
 * PSA_MAX_PASS1_BITS bits takes two passes, the bits split evenly, the odd one to pass 2. */
#define PSA_MAX_PASS_BITS 10
#define PSA_MAX_PASS1_BITS 9
#define PSA_MAX_BITS (PSA_MAX_PASS1_BITS + PSA_MAX_PASS_BITS)
/* Which pass takes the odd bit of a two-pass plan (1 or 2; pass 1 only while it stays within
 * PSA_MAX_PASS1_BITS). Measured in session 4 with pass 2's count reading the keys: 8 + 9 beat 9 + 8. */
#ifndef PSA_ODD_BIT_PASS
#define PSA_ODD_BIT_PASS 2
#endif

/* Buckets are made about this many bytes of leaf keys wide (64 leaves of 16 64-bit keys, 128 of 16
 * 32-bit keys): a search tile of consecutive slots then spans a few buckets, whose leaves fit the
 * search kernel's shared-memory stage (ntg_policy.h). Measured on the H100 (bench/NOTES.md, "The
 * partition's bucket width", session 9): 2^27 queries, sorted results, 64-bit 2^26 keys 6.60 ms at
 * 32 leaves a bucket, 6.28 at 64, 6.33 at 128; 32-bit 2^28 keys 6.28 ms at 32, 5.96 at 64, 5.84 at
 * 128 and 256; results in query order no slower. */
#ifndef PSA_BUCKET_BYTES /* (an A/B build may change it; the library's never does) */
#define PSA_BUCKET_BYTES 8192u
#endif

/* Unordered lookups of device arrays (harmonia_lookup_unordered: results in slot order) on 64-bit
 * trees whose plan has PSA_UNORDERED_WIDER_MIN_BITS bits or more partition on a plan of one bit
 * fewer (buckets twice as wide: pass 1, or for odd plans pass 2, at half its bins); results in
 * query order keep the tree's plan (psa_unordered_plan, psa.h). Measured on the H100 (bench/NOTES.md,
 * "Session 27", calls 8-9; 2^27 queries, the plan one bit fewer for every call): 64-bit 2^26 keys
 * (16 -> 15 bits) sorted results 1.41-1.42x -> 1.47x the baseline (24.8-25.0 -> 25.8 G/s), 2^27 keys
 * (17 -> 16) 1.30-1.32x -> 1.40-1.41x; kernel times, 2^26 keys: pass 1 1.78 -> 1.31 ms, pass 2 1.74
 * -> 1.81, the staged search 1.79 -> 2.14 (a tile stages its buckets' leaves whole); 2^27 keys: pass
 * 2 at 2^9 bins 2.39 -> 1.74 ms at 2^8, the search 1.73 -> 2.32. Not for results in query order
 * (their passes carry no positions and gain less: 0 to -3 %), smaller trees (64-bit 2^23 keys,
 * 13 -> 12 bits: sorted -4.5 %) or 32-bit keys (2^28 keys, 17 -> 16: sorted level, query order -3 %).
 * Host arrays keep the tree's plan (their calls are bound by the copies; not measured). Since the
 * staged search prefetches its values (ntg_policy.h, NTG_PS_PREFETCH_VALUES) the bound is 17 bits:
 * measured on the H200 (bench/NOTES.md, "Session 29", calls 3-4), 64-bit 2^26 keys (16 bits) now
 * gain from the tree's own plan — sorted results of 2^24 queries 1.20x -> 1.26-1.27x, of 2^26 1.49x
 * -> 1.54x, of 2^27 level (1.51x) — while 2^27 keys (17 bits) keep the wider plan's lead (1.49-1.50x
 * against 1.45-1.46x on the tree's plan). 0 turns it off (the #ifndef lets an A/B build change it). */
#ifndef PSA_UNORDERED_WIDER_MIN_BITS
#define PSA_UNORDERED_WIDER_MIN_BITS 17
#endif
static inline int psa_unordered_wider(unsigned key_bits, unsigned plan_bits)
{
    return PSA_UNORDERED_WIDER_MIN_BITS > 0 && key_bits == 64 && plan_bits >= PSA_UNORDERED_WIDER_MIN_BITS;
}

/* The largest window partitioned at once (its scratch is about 40 bytes per query; windows of
 * PSA_CHUNKED_MIN_WINDOW or more add the chunks' slack and table, about 0.2 GB). */
#define PSA_MAX_WINDOW (1u << 27)
/* The smallest window buffers a call sizes (smaller batches still get buffers of this many). */
#define PSA_MIN_WINDOW 1024u

/* When a window goes through PSA (query config psa = -1, auto): it is large, PSA_MIN_QUERIES or
 * more (below it the launches of the passes cost more than the search saves), and dense enough that
 * its search tiles stage leaves rather than descend, PSA_MIN_QUERIES_PER_LEAF queries a leaf or more
 * (one a leaf from PSA_LARGE_WINDOW queries on; psa_pays in psa.h). */
#define PSA_MIN_QUERIES (1u << 18)
#define PSA_MIN_QUERIES_PER_LEAF 2
/* Windows of PSA_LARGE_WINDOW queries or more go through PSA from one query a leaf: measured on the
 * H100 (bench/NOTES.md, "Sparse windows", session 6), 2^24 queries over the 2^24 leaves of a 32-bit
 * 2^28-key tree took 1.53 ms in query order and 1.47 sorted with PSA, 2.04 / 2.07 without; smaller
 * windows at one a leaf (2^22 queries over 2^22 leaves: 0.72 / 0.67 ms with, 0.57 / 0.58 without)
 * and sparser ones (2^22 over 2^24 leaves) stay faster without. */
#define PSA_LARGE_WINDOW (1u << 24)
/* PSA's descent path (psa.h, psa_descent_pays): unordered lookups of device-array windows of
 * PSA_DESCENT_MIN_WINDOW queries or more with fewer than PSA_MIN_QUERIES_PER_LEAF queries a leaf
 * (64-bit keys: fewer than PSA_DESCENT_MAX_HALVES_PER_LEAF_64 / 2, below; also where psa_pays takes
 * a large window from one a leaf) are partitioned in one pass on PSA_DESCENT_BITS_64 / _32 bits (the pass
 * writes the caller's positions), then searched slot by slot by the plain descent from the fine
 * start table (its G and its queries a group: ntg_policy.h, NTG_SORTED_*), which reads only the keys and writes only
 * the values and flags. Measured on the H100 (bench/NOTES.md, "Session 19", sort_sweep `part`),
 * sorted results, ms, against the CUB radix sort this path replaced (8 bits for 64-bit keys, 16 for
 * 32-bit, then the descent with the sort's positions) in one process: 64-bit 2^26 keys, 2^22
 * queries 0.381 against 0.408, 2^23 queries 0.662 against 0.664 (G = 2; 0.651 at G = 4); 32-bit 2^28
 * keys, 2^22 queries 0.342 against 0.381, 2^24 queries 1.072 against 1.076; 9 bits (one pass) and
 * 12 or 16 (two) were slower at every size. At 2^20 queries the pipeline by hand beat the descent
 * in query order (sort_sweep `part-small`: 64-bit 2^26 keys 0.139 ms against 0.144, 32-bit 2^28
 * keys 0.130 against 0.136), but the library's call did not (bench_versus, call 3 of session 19,
 * sorted results at 2^20 queries: 1.28 -> 1.25x and 1.32 -> 1.26x the baseline with the path taken
 * from 2^20): hence 2^21. */
#define PSA_DESCENT_MIN_WINDOW (1u << 21)
/* The descent path's bits by key width (A/B-overridable). 64-bit keys: 7 since session 31 (H200,
 * bench_versus call 2, 64-bit 2^26 keys, against 8 bits in alternating processes: 2^23 queries
 * sorted 17.14-17.27 G/s against 16.45-16.62, query order 15.13-15.23 against 14.59-14.79; 2^22 and
 * 2^24 level within ±1.5 %; 9 bits −1 to −3 %): the pass's 129 bins make runs twice as long, and a
 * bucket's leaves still stay in the L2 while its queries come. 32-bit keys: 8 (7 level, 9 −2 to −3 %). */
#ifndef PSA_DESCENT_BITS_64
#define PSA_DESCENT_BITS_64 7
#endif
#ifndef PSA_DESCENT_BITS_32
#define PSA_DESCENT_BITS_32 8
#endif
/* ... and of 64-bit keys up to PSA_DESCENT_MAX_HALVES_PER_LEAF_64 / 2 queries a leaf, where the
 * partition's staged search would take them (from PSA_MIN_QUERIES_PER_LEAF): measured on the H100
 * (bench/NOTES.md, "Session 18", sort_sweep's dense modes, with the radix sort in front of the
 * descent), sorted results over 2^26 64-bit keys, against the staged search: 2 queries a leaf 0.662
 * against 0.728 ms, 2.5 a leaf 0.809 / 0.807, 3 a leaf 0.930 / 0.887, 4 a leaf 1.162 / 1.030 (and
 * session 19, the partition in front: 4 a leaf 1.155); 32-bit keys over 2^28: 2 a leaf 1.872 / 1.889
 * (session 19, the partition in front: 1.984 / 1.880), 2.5 a leaf 2.416 / 2.195 — so 32-bit windows
 * keep the staged search from PSA_MIN_QUERIES_PER_LEAF. In halves, so that the bound stays an
 * integer. */
#ifndef PSA_DESCENT_MAX_HALVES_PER_LEAF_64 /* (an A/B build may move it; the library's never does) */
#define PSA_DESCENT_MAX_HALVES_PER_LEAF_64 8
#endif
/* 32-bit keys: below PSA_MIN_QUERIES_PER_LEAF, where the staged search takes over (above). */
#ifndef PSA_DESCENT_MAX_HALVES_PER_LEAF_32 /* (an A/B build may move it; the library's never does) */
#define PSA_DESCENT_MAX_HALVES_PER_LEAF_32 (2 * PSA_MIN_QUERIES_PER_LEAF)
#endif
/* (5, below 2.5 a leaf, until session 20; with two queries a group on the path, measured on the H100
 * (bench/NOTES.md, "Session 20", question 2, multi_probe `dense`), sorted results over 2^26 64-bit
 * keys, ms, the staged search against the partition + the descent (G = 4, Q = 2): 2.5 a leaf
 * 0.815-0.832 / 0.725-0.728, 3 0.885-0.895 / 0.803-0.810, 3.5 0.956-0.971 / 0.931-0.933, 4
 * 1.026-1.029 / 1.027-1.043: below 4 a leaf.) */
/* Lookups with results in query order take the descent path too, its results restored to query
 * order from the slots (psa_restore), for 32-bit keys below PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_32
 * / 2 queries a leaf (64-bit keys: below). Measured on the H100
 * (bench/NOTES.md, "Session 19", sort_sweep `part-q`), ms, the library's call (the descent in query
 * order; from 2^24 queries and one a leaf the staged search) against the partition at 8 bits + the
 * descent (G = 2) + the restore: 32-bit 2^28 keys, 2^22 queries (0.25 a leaf) 0.480 / 0.403, 2^23
 * (0.5) 0.960 / 0.752, 2^24 (one a leaf: the staged search) 1.500 / 1.442, 2^25 2.206 / 2.760; 64-bit
 * 2^26 keys, 2^21 queries 0.269 / 0.275 (G = 4: 0.264), 2^22 0.508 / 0.498 (0.479), 2^23 0.865 /
 * 0.979 — within the few per cent that the library's call adds to a pipeline by hand (2^20 queries,
 * unordered, above) for 64-bit keys up to one a leaf, behind from two (with one query a group). */
#ifndef PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_32 /* (an A/B build may move it; the library's never does) */
#define PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_32 5
#endif
/* (2, below one a leaf, until session 21; then, with one query a group as ever for 32-bit keys,
 * measured on the H100 (bench/NOTES.md, "Session 21", call 3, multi_probe `ordered32`), 32-bit 2^28
 * keys (16 i + (mix & 15)), query order, ms, the library's call (the staged search from one a leaf)
 * against the partition at 8 bits + the descent (G = 2) + the restore: one a leaf 1.504-1.506 /
 * 1.137-1.138, two a leaf 2.184-2.203 / 2.128-2.140 (session 19's harness had the staged search
 * ahead at two a leaf, 2.206 against 2.760, before the start tables of session 17 reached the
 * descent path); call 4: 1.5 a leaf 1.869-1.871 / 1.636-1.639, 2.5 a leaf 2.584-2.588 / 2.631-2.632,
 * 3 a leaf 2.961-2.968 / 3.100-3.102 — the crossing near 2.3 a leaf. Below PSA_LARGE_WINDOW too
 * (call 7, `ordered32small`, 2^26 keys: one a leaf, where the descent in query order ran, 0.406 ->
 * 0.306-0.308 ms; two a leaf, where the staged search ran, 0.594-0.598 -> 0.541-0.542).) */
/* ... and of 64-bit keys below PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_64 / 2 a leaf, since the
 * descent path's kernel carries two queries a group (ntg_policy.h, NTG_SORTED_QUERIES_PER_GROUP_64):
 * measured on an H200 (bench/NOTES.md, "Session 20", multi_probe, call 2), ms, 64-bit 2^26 keys, the
 * descent in query order (G = 4, the library's call) against the partition at 8 bits + the descent
 * (G = 4, Q = 2) + the restore: 2^22 queries 0.381 / 0.319, 2^23 (two a leaf) 0.747 / 0.579; in the
 * library on the H100 (call 3, bench_versus): 2^22 queries 1.34 -> 1.75-1.78x the baseline, 2^23
 * 1.42 -> 1.85-1.86x. */
#define PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_64 9
/* (5 in session 20's first change; then, measured on the H100 (question 2, multi_probe `dense`),
 * query order, ms, the staged search + its restore against the partition + the descent (G = 4,
 * Q = 2) + the restore: 2.5 a leaf 0.976-0.979 / 0.799-0.800, 3 1.072-1.074 / 0.898-0.903, 3.5
 * 1.199-1.201 / 1.034-1.044, 4 1.279-1.284 / 1.157-1.159: ahead by 18, 16, 13.5 and 10 %; up to 4 a
 * leaf measured, below 4.5 taken on the trend.) */
/* Lower bounds of 32-bit keys take it below PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32 / 2
 * queries a leaf (measured: "Session 20", lb_probe on an H200, 2^28 keys, 2^21 / 2^22 / 2^23 queries
 * 0.257 / 0.492 / 0.962 ms -> 0.221 / 0.374 / 0.671; "Session 21", call 5, lb_probe `dense32` on the
 * H100, the staged search against the path: one a leaf 1.690-1.706 / 1.428-1.443, two a leaf
 * 2.567-2.570 / 2.691-2.703 — the lower-bound kernel, which reads the next leaf's first key past a
 * leaf's end, crosses earlier than the lookups' (near 2.3): below 1.5 a leaf), those of 64-bit
 * keys keep the descent in query order (its lower-bound kernel carries one query a group: not
 * measured on the path); PSA_DESCENT_LOWER_BOUND 0 turns it off (the #ifndefs let an A/B build do
 * that or move the bound; the library's build never does). */
#ifndef PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32
#define PSA_DESCENT_LOWER_BOUND_MAX_HALVES_PER_LEAF_32 3
#endif
#ifndef PSA_DESCENT_LOWER_BOUND
#define PSA_DESCENT_LOWER_BOUND 1
#endif
static inline int psa_descent_lower_bound(unsigned key_bits)
{
    return PSA_DESCENT_LOWER_BOUND && key_bits == 32;
}
static inline unsigned psa_descent_max_halves_per_leaf(unsigned key_bits, int unordered)
{
    if (!unordered)
        return key_bits == 32 ? PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_32 : PSA_DESCENT_ORDERED_MAX_HALVES_PER_LEAF_64;
    return key_bits == 64 ? PSA_DESCENT_MAX_HALVES_PER_LEAF_64 : PSA_DESCENT_MAX_HALVES_PER_LEAF_32;
}

/* Device-array windows take at most 1 / PSA_DEVICE_MEMORY_SHARE of the free GPU memory for their
 * scratch, halving the window down to PSA_MIN_DEVICE_WINDOW queries before giving up on PSA. */
#define PSA_DEVICE_MEMORY_SHARE 2
#define PSA_MIN_DEVICE_WINDOW (1u << 20)

#endif /* HARMONIA_PSA_POLICY_H */
