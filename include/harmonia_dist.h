/* harmonia_dist.h — the public header of the range-sharded Harmonia index over MPI (libharmonia_dist,
 * built where MPI is found): one shard per rank, one rank per GPU, over a communicator the caller
 * passes. Built on include/harmonia.h alone; how it routes and exchanges lives in dist/. */
#ifndef HARMONIA_DIST_H
#define HARMONIA_DIST_H

#include <mpi.h>

#include "harmonia.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * The model.
 *
 * SHARDS. An index of N keys over P ranks is P Harmonia trees, one per rank: rank r holds exactly
 * the keys k with lower(r) <= k < lower(r+1), where lower(0) = 0, lower(P) = 2^key_bits (past the
 * maximum) and lower(1) <= ... <= lower(P-1) are the P-1 splitters, the same on every rank. A
 * shard may be empty (two equal splitters). Every key value, 0 and the maximum included, is a valid
 * key, as in a single tree.
 *
 * COLLECTIVE CALLS. Every function below that takes a harmonia_dist or a communicator is
 * collective: every rank of the communicator calls it, in the same order, each with its own
 * arguments (its own pairs, queries or operations; counts may differ, 0 included). A call fails on
 * every rank or on none: with the same status everywhere and the same message, which names the
 * rank that failed first ("rank 2: duplicate key 17 ..."). No call returns on one rank while
 * another waits in it: every rank agrees on the status before any exchange that depends on it.
 * Only MPI errors themselves are left to MPI's error handler (MPI_ERRORS_ARE_FATAL by default).
 * Calls of one index are not thread-safe; MPI needs at least MPI_THREAD_FUNNELED, and only the
 * thread that calls these functions calls MPI (the OpenMP threads of the local engine never do).
 *
 * GLOBAL ORDER. Where a single tree speaks of "input order" or "batch order", the distributed
 * index uses (rank, index): every pair (operation) of rank 0 in its order, then those of rank 1,
 * and so on — the order of the concatenation of the ranks' arrays. So a build with KEEP_FIRST keeps,
 * of equal keys, the pair of the lowest rank (the lowest index within it), and values == NULL
 * gives each key its position in that concatenation; an update batch applies operations on one
 * key in that order. The results equal those of one tree built from (or updated with) the
 * concatenation.
 *
 * RESULT ORDER. Each rank gets the results of its own queries, in its own query order.
 *
 * THE GPU. Each rank's shard is an ordinary harmonia_tree queried with the caller's
 * harmonia_query_config (backend auto: the GPU when one is usable, else the CPU engine). A rank
 * picks its GPU with harmonia_dist_config.device (default: its node-local rank modulo the GPUs it
 * sees) by making that GPU current for the calling thread (cudaSetDevice), because the public API
 * of a single tree has no device field: the tree uses the calling thread's current GPU.
 * Query and result arrays are host memory; the exchange goes through host memory (MPI).
 * ------------------------------------------------------------------------------------------- */

typedef struct harmonia_dist harmonia_dist;

/* The version of the manifest format that harmonia_dist_save writes and harmonia_dist_load reads. */
#define HARMONIA_DIST_MANIFEST_VERSION 1

typedef struct harmonia_dist_config {
    /* The local trees: key_bits (the same on every rank), fanout, leaf_size, leaf_fill, threads
     * and duplicates (applied over the global order, see above). input_sorted and progress are
     * ignored (each rank's input is only a part; the local build sorts what it receives). */
    harmonia_build_config build;
    /* The GPU of this rank: -1 (default) = the node-local rank modulo the GPUs visible to the
     * process; >= 0 = that GPU; -2 = leave the thread's current GPU as it is. Ignored without a
     * GPU (or in a build without CUDA). */
    int device;
    /* Splitters: keys sampled per rank (weighted by each rank's count); 0 = default,
     * HARMONIA_DIST_DEFAULT_SAMPLES, cut so that at most 2^22 samples are gathered in all. */
    uint64_t samples_per_rank;
    /* After the build the shards are rebalanced (exactly, by key count, one more exchange and a
     * sorted local rebuild) when one differs from the mean by more than this fraction (plus one
     * key); 0 = default 0.05; a negative value never rebalances. */
    double balance_tolerance;
    /* Exchanges move at most this many bytes per rank per MPI_Alltoallv round; 0 = automatic: one
     * call when every count and offset fits MPI's int and no rank sends another more than 1 GiB,
     * else rounds of 256 MiB. (MPI counts are int: the rounds make transfers above 2^31 bytes work
     * with any MPI.) */
    uint64_t exchange_chunk_bytes;
    /* harmonia_dist_load: verify each shard's whole-file checksum against the manifest, and load
     * each shard with its checksums and the integrity checker (default on). */
    bool verify;
} harmonia_dist_config;

#define HARMONIA_DIST_DEFAULT_SAMPLES 16384
#define HARMONIA_DIST_DEFAULT_BALANCE 0.05

/* Fills *config with the defaults: harmonia_build_config_init's, device -1, the default samples
 * and balance, automatic exchange rounds, verify on. Not collective. */
void harmonia_dist_config_init(harmonia_dist_config *config);

/* The message of the last failure: with an index, of the last failing call on it (the empty string
 * if none); with NULL, of the last failing harmonia_dist_build / harmonia_dist_load in the calling
 * thread. The same text on every rank ("rank R: ..."). Never NULL. Not collective. */
const char *harmonia_dist_last_error(const harmonia_dist *dist);

/* ---------------------------------------------------------------------------------------------
 * Building.
 * ------------------------------------------------------------------------------------------- */

typedef struct harmonia_dist_build_stats {
    double sample_seconds;    /* sampling and choosing the splitters */
    double route_seconds;     /* each pair's shard, pairs packed by shard */
    double exchange_seconds;  /* MPI_Alltoallv of the pairs */
    double local_seconds;     /* harmonia_build of the shard */
    double rebalance_seconds; /* 0 when the shards were balanced already */
    uint64_t bytes_sent;      /* to other ranks (all exchanges of the call) */
    uint64_t bytes_received;  /* from other ranks */
    uint64_t input_pairs;     /* this rank's input */
    uint64_t shard_keys;      /* this rank's shard after the build */
    bool rebalanced;          /* the rebalance ran */
} harmonia_dist_build_stats;

/* Builds the index from each rank's count pairs (keys[i], values[i]) in host memory, of
 * config->build.key_bits width, in any order; values may be NULL on a rank (then each of its keys'
 * value is its global position, see GLOBAL ORDER). Splitters come from a sample of the keys;
 * the pairs go to their shards by MPI_Alltoallv; each rank builds its tree with harmonia_build;
 * the shards are then rebalanced when one is off the mean by more than config->balance_tolerance.
 * The inputs are not modified. A NULL config means the defaults (on every rank).
 * On success *dist_out owns this rank's part (free with harmonia_dist_free); on failure it is NULL
 * on every rank and harmonia_dist_last_error(NULL) says why, on every rank.
 * stats may be NULL; they are this rank's.
 * Errors: INVALID (NULL arrays with count > 0, a key width other than 32 or 64 or not the same on
 * every rank, other configuration fields that differ between ranks), NO_MEMORY, DUPLICATE_KEY,
 * CAPACITY, the errors of harmonia_build, NO_DEVICE / DEVICE (config->device names a GPU that cannot
 * be made current). */
harmonia_status harmonia_dist_build(MPI_Comm comm, const harmonia_dist_config *config,
                                    const void *keys, const void *values, uint64_t count,
                                    harmonia_dist **dist_out, harmonia_dist_build_stats *stats);

/* Frees this rank's part of the index (its tree, its copy of the communicator). Collective (it
 * frees a communicator). NULL is a no-op (then not collective). */
void harmonia_dist_free(harmonia_dist *dist);

/* ---------------------------------------------------------------------------------------------
 * Queries. Each rank passes its own count queries (host memory, the index's key width) and gets
 * its own results in its query order. config is the local engine's (NULL = defaults); its memory
 * field is taken as host memory and async as false. stats may be NULL.
 * ------------------------------------------------------------------------------------------- */

typedef struct harmonia_dist_query_stats {
    double route_seconds;    /* each query's shard(s), queries packed by shard */
    double exchange_seconds; /* counts and queries to their shards (MPI_Alltoall[v]) */
    double local_seconds;    /* the shard's engine on what it received */
    double return_seconds;   /* results back (MPI_Alltoallv) and into query order */
    uint64_t queries;        /* this rank's queries */
    uint64_t pieces_sent;    /* (sub-)queries sent to shards, this rank's own shard included */
    uint64_t answered_here;  /* queries answered from the shard table without any shard (a key
                                outside every shard's [min, max], a range fully inside shards) */
    uint64_t pieces_served;  /* (sub-)queries this rank's shard answered */
    uint64_t bytes_sent;     /* to other ranks, every exchange of the call */
    uint64_t bytes_received; /* from other ranks */
} harmonia_dist_query_stats;

/* Point lookups, as harmonia_lookup: found_out[i] = 1 and values_out[i] = the value of queries[i],
 * or 0 and 0. Each query goes to the one shard that may hold it.
 * Errors: INVALID (NULL arrays with count > 0), the errors of harmonia_lookup on any shard. */
harmonia_status harmonia_dist_lookup(harmonia_dist *dist, const harmonia_query_config *config,
                                     const void *queries, uint64_t count, void *values_out,
                                     uint8_t *found_out, harmonia_dist_query_stats *stats);

/* Lower bounds, as harmonia_lower_bound: the smallest key >= queries[i] of the whole index. A query
 * past the last key of its shard continues on the next non-empty shard (answered from the shard
 * table every rank holds: that shard's smallest key and its value). keys_out or values_out may
 * be NULL; found_out may not. */
harmonia_status harmonia_dist_lower_bound(harmonia_dist *dist, const harmonia_query_config *config,
                                          const void *queries, uint64_t count, void *keys_out,
                                          void *values_out, uint8_t *found_out,
                                          harmonia_dist_query_stats *stats);

/* Range counts, as harmonia_range_count ([lo, hi] inclusive; lo > hi is empty). A range over
 * several shards is split: the shards at its two ends count their part, the shards wholly inside
 * it count with their size (from the shard table), and the parts are summed. */
harmonia_status harmonia_dist_range_count(harmonia_dist *dist, const harmonia_query_config *config,
                                          const void *lo, const void *hi, uint64_t count,
                                          uint64_t *counts_out, harmonia_dist_query_stats *stats);

/* Range collect in two phases, as harmonia_range_collect:
 * phase 1 (keys_out and values_out NULL on every rank): offsets[0 .. count] = the exclusive scan of
 *   this rank's range counts;
 * phase 2 (keys_out and/or values_out non-NULL on some rank): every shard a range reaches sends its
 *   pairs in it, and the pairs of range i land at offsets[i] .. offsets[i+1]-1 in key order (the
 *   shards' parts concatenated in shard order). offsets must be phase 1's for the same ranges on
 *   an unchanged index (read, not recomputed); a shard part that does not fit them is INVALID. A
 *   rank with no pairs to receive (offsets[count] == 0) may pass NULL outputs in phase 2; a rank
 *   with pairs to receive must pass room for them.
 * Errors: INVALID (NULL arrays, offsets that do not match), NO_MEMORY, the shards' errors. */
harmonia_status harmonia_dist_range_collect(harmonia_dist *dist,
                                            const harmonia_query_config *config, const void *lo,
                                            const void *hi, uint64_t count, uint64_t *offsets,
                                            void *keys_out, void *values_out,
                                            harmonia_dist_query_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * Batch updates.
 * ------------------------------------------------------------------------------------------- */

typedef struct harmonia_dist_update_stats {
    /* The batch over every rank: the counters of harmonia_update_stats summed over the shards
     * (operations = every rank's operations), the times the largest over the shards.
     * total.failed_operation is the failing operation's index in the batch of the rank
     * failed_rank (the same on every rank), UINT64_MAX when no single operation failed. */
    harmonia_update_stats total;
    int failed_rank;           /* the rank whose operation failed; -1 when none did */
    bool rolled_back;          /* a commit failed on a shard after the others had applied their
                                  part: they undid it (the index holds the same pairs as before) */
    double route_seconds;      /* this rank: each operation's shard, operations packed */
    double exchange_seconds;   /* this rank: operations to their shards */
    double validate_seconds;   /* this rank: its shard's part checked against the shard, unchanged */
    double commit_seconds;     /* this rank: harmonia_update of its shard's part */
    uint64_t bytes_sent, bytes_received; /* this rank, to and from other ranks */
} harmonia_dist_update_stats;

/* Applies a batch of operations (as harmonia_update: kinds[i], keys[i], values[i]; values may be
 * NULL on a rank whose operations are all deletes) from every rank as ONE atomic batch: each
 * operation goes to its key's shard; operations on one key apply in global order (rank, then
 * index). Atomic across ranks: every shard first checks its part against its tree without
 * changing it (a strict-policy failure, an invalid operation), the ranks agree, and only then does
 * every shard apply its part. If a shard's apply still fails (out of memory, CAPACITY), the
 * shards that had applied theirs apply the exact inverse (the prior value of every touched key
 * restored, keys that were absent deleted), so that every shard holds the same pairs as before;
 * stats->rolled_back says so. Should the inverse fail too, the index is marked damaged: every
 * later call fails with CORRUPT and says to load it again from its files. The device copies are
 * synchronised after all shards committed (config->skip_upload leaves them stale). config is the
 * same on every rank (NULL = defaults). stats may be NULL.
 * Errors: INVALID (a bad kind, NULL arrays, policies that differ between ranks), KEY_EXISTS,
 * KEY_MISSING (with the failing rank and operation index, the same on every rank), NO_MEMORY,
 * CAPACITY, CORRUPT (the index is damaged). */
harmonia_status harmonia_dist_update(harmonia_dist *dist, const harmonia_update_config *config,
                                     const uint8_t *kinds, const void *keys, const void *values,
                                     uint64_t count, harmonia_dist_update_stats *stats);

/* Moves keys between neighbouring shards so that every shard holds floor or ceil of N/P keys
 * (exactly, by position in key order), when one shard differs from the mean by more than
 * tolerance (a fraction; plus one key) — e.g. after update batches that grew one key range.
 * Atomic: on failure every shard is as before. *moved_out (may be NULL) = the keys this rank sent
 * away. Errors: INVALID, NO_MEMORY, the errors of harmonia_build and of the range collect. */
harmonia_status harmonia_dist_rebalance(harmonia_dist *dist, double tolerance,
                                        uint64_t *moved_out);

/* ---------------------------------------------------------------------------------------------
 * Files: one index file per shard (harmonia_save's format) and a manifest.
 *
 * harmonia_dist_save(dist, "col.hdm") writes shard r to "col.hdm.<generation>.<r>-of-<P>" in the
 * manifest's folder (each with harmonia_save: temporary file, fsync, rename, fsync of the folder),
 * then the manifest "col.hdm" (the same way, by rank 0), then removes the shard files of the
 * manifest it replaced. The generation is a fresh random 64-bit number per save, so a crash at any
 * point leaves either the old manifest with its old shards or the new one with its new shards.
 * Each rank writes its own shard file, so the folder may be shared or local to each host (then
 * the manifest is on rank 0's host; the load reads it there).
 *
 * The manifest is text, one field per line, in this order (README, "The distributed index"):
 *   harmonia-dist-manifest 1
 *   library <version>
 *   ranks <P>
 *   key_bits <32|64>
 *   keys <N>
 *   generation <16 hex digits>
 *   splitter <r> <lower(r)>                                  for r = 1 .. P-1
 *   shard <r> <keys> <file bytes> <xxh3 of the whole file, 16 hex digits> <file name>   r = 0 .. P-1
 *   checksum <xxh3 of every byte before this line, 16 hex digits>
 * ------------------------------------------------------------------------------------------- */

/* Saves the index. Errors: INVALID, IO (with the OS's reason and the rank). On failure the files
 * named by an older manifest at path are untouched, and the new shard files are removed. */
harmonia_status harmonia_dist_save(harmonia_dist *dist, const char *manifest_path);

/* Loads an index saved by harmonia_dist_save, on the same number of ranks: rank 0 reads the
 * manifest and sends it to all; rank r loads shard r (harmonia_load; with config->verify its
 * whole-file checksum first, and the loader's checksums and integrity checker) and checks it
 * against the manifest (key width, key count, every key inside its splitters). config (NULL =
 * defaults) gives device, exchange_chunk_bytes and verify; its build fields are ignored.
 * Errors: INVALID (another number of ranks than the manifest's), IO (a missing or unreadable
 * manifest or shard, with its name and rank), CORRUPT (a damaged manifest, a shard that does not
 * match its checksum or the manifest), UNSUPPORTED (another manifest version). */
harmonia_status harmonia_dist_load(MPI_Comm comm, const char *manifest_path,
                                   const harmonia_dist_config *config, harmonia_dist **dist_out);

/* ---------------------------------------------------------------------------------------------
 * Integrity and information.
 * ------------------------------------------------------------------------------------------- */

/* harmonia_check on every shard, and that each shard holds only keys inside its splitters and
 * matches the shard table. Returns OK or CORRUPT (the first broken rule, with the rank). */
harmonia_status harmonia_dist_check(harmonia_dist *dist);

typedef struct harmonia_dist_info {
    int ranks;                  /* P */
    int rank;                   /* this rank */
    int local_rank, local_ranks; /* this rank among the ranks of its node (shared memory) */
    int device;                 /* the GPU this rank made current, -1 when none */
    uint32_t key_bits;
    uint64_t keys;              /* N, over all shards */
    uint64_t smallest_shard, largest_shard; /* keys */
    double imbalance;           /* largest shard / mean - 1 (0 for an empty index) */
    uint64_t version;           /* update batches applied to this index object */
    harmonia_tree_info local;   /* this rank's tree */
} harmonia_dist_info;

/* Fills *info (not collective: from the shard table every rank holds). */
harmonia_status harmonia_dist_get_info(const harmonia_dist *dist, harmonia_dist_info *info);

typedef struct harmonia_dist_shard_info {
    uint64_t keys;
    uint64_t lower;       /* lower(r): the smallest key this shard may hold */
    uint64_t upper;       /* the largest key this shard may hold: lower(r+1) - 1, or the maximum
                             key for the last shard (meaningless when empty_range) */
    bool empty_range;     /* lower(r) == lower(r+1): no key can go to this shard */
    uint64_t min_key, max_key; /* valid when keys > 0 */
} harmonia_dist_shard_info;

/* Fills *shard_out for shard rank (not collective). Errors: INVALID (rank out of range). */
harmonia_status harmonia_dist_shard(const harmonia_dist *dist, int rank,
                                    harmonia_dist_shard_info *shard_out);

/* This rank's tree, to tune or inspect it (harmonia_info, harmonia_set_group_size, NTG
 * profiling, harmonia_device_upload). Do not update or free it: the shard table would no longer
 * match. Not collective. */
harmonia_tree *harmonia_dist_local_tree(harmonia_dist *dist);

#ifdef __cplusplus
}
#endif
#endif /* HARMONIA_DIST_H */
