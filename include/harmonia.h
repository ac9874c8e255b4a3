/* harmonia.h — the public header of libharmonia: types, status codes and every public function
 * with its contract (with harmonia_version.h, which meson generates). Internals (node layout,
 * kernels, file format details) live in the component folders; nothing here exposes them.
 *
 * =================================== THE EMBEDDING CONTRACT ===================================
 * ERRORS. Every function that can fail returns a harmonia_status and records a message in words
 *   (harmonia_last_error). Nothing aborts, nothing prints, nothing exits on bad input.
 * CONFIG STRUCTS GROW WITHOUT BREAKING CALLERS. Every config struct (build, query, update, load,
 *   NTG) begins with `size`, which its init function sets to the sizeof the caller compiled with;
 *   the init functions are the only way to make a config (they are inline: they pass the caller's
 *   sizeof to the library). A library newer than the header reads the fields such a config has and
 *   takes the defaults for those added since; a config whose size is 0 or unknown is INVALID. Output
 *   structs (info, stats, results) end in reserved space that later versions fill: their size does
 *   not change within one soname (libharmonia.so.0).
 * THREADS. Any number of host threads may query trees at once, the same tree included (CPU and
 *   GPU). There is no process-wide lock: a tree's GPU resources are guarded by the tree's own
 *   mutex, so calls on different trees never wait for each other; host-array GPU calls of one tree
 *   share its staging buffers and run one after another.
 * QUERIES DURING AN UPDATE (VERSIONS). harmonia_update may run while other threads query the tree
 *   (every query call, CPU and GPU, synchronous and *_async, host and device arrays) and while
 *   harmonia_info reads it. A tree holds a published version N; an update builds N+1 in other
 *   memory (host arrays, and a second device copy) while queries go on with N, then publishes it at
 *   one point, host and device together. Each query call reads one version for its whole batch,
 *   never a mix: a CPU call the version published when it starts, a GPU call the version published
 *   when its work is queued (an *_async call's work still reads it after the call returns; its
 *   memory is freed only once that work is done: events, no device-wide sync). Calls started after
 *   harmonia_update returns see N+1 or later. A second harmonia_update of the same tree waits for
 *   the first. The other calls that change a tree (set_*, upload, release, save, check, the NTG
 *   calls, free) must not run while other threads use that tree; freeing a tree with queries in
 *   flight (on any thread or stream) is the caller's error. See harmonia_update for the memory.
 * OPENMP. CPU work runs in OpenMP parallel regions with num_threads clauses (the configs' threads;
 *   0 = the calling thread's OpenMP default). The library never changes the caller's OpenMP
 *   settings (omp_set_num_threads and the like are never called).
 * DEVICES. A tree's device copy lives on one GPU: the device in its build or load config, or set by
 *   harmonia_set_device; by default (HARMONIA_DEVICE_CURRENT) the caller's current device when the
 *   copy is made. Every CUDA call of the tree runs on that device and the caller's current device
 *   is restored before the call returns. Device arrays given to a tree must live on its device.
 * STREAMS. No call synchronises the device (cudaDeviceSynchronize) or a stream other than the
 *   caller's and the tree's own. A synchronous device-array call runs on config->stream and waits
 *   for that stream only — lookups and lower bounds of at most 2^16 queries that run as one launch
 *   (no PSA) wait for their kernel instead, whose last block writes a word of the tree's pinned
 *   host memory once every result is written and every read of the tree is done (a completion
 *   signal: 0.6-1 us sooner than the stream, bench/NOTES.md "Session 28"); they return with the
 *   results in place for work on any stream, while the stream may still show the launch pending
 *   for a moment. The wait spins, as the runtime's own does on a device that spins (the default
 *   while a process has fewer contexts than CPUs). These calls wait for the stream instead: on a
 *   device set to block or yield while waiting (cudaDeviceScheduleBlockingSync / Yield when the
 *   tree's copy is made) or without concurrent managed access; on cudaStreamPerThread; when the
 *   tree's 16 slots of calls in flight are all taken; for a tree whose allocator's pinned memory
 *   the device cannot write (or has none); and for good once a signal went wrong (a failed launch)
 *   until the tree's device or allocator is set again. The *_async calls queue their work on the stream they are given and
 *   return at once (device arrays only: host arrays are INVALID, never silently synchronous).
 *   Host-array calls run on the tree's own streams and return with the results in place. Updates,
 *   uploads and releases of a tree are ordered after its queries already queued on any stream (the
 *   tree's stream waits on an event recorded on the call's stream: at once for *_async calls, and
 *   for a synchronous call only if the tree queues such work while the call is in flight), so they
 *   never overwrite or free what a query in flight reads. So a query must not wait (through the caller's events) for work queued
 *   later on the same tree: the first call after an upload, an update or a new PSA plan, or one
 *   that makes the tree's scratch, queues its wait for the tree's stream, which follows the queries
 *   queued before. Streams given to a tree belong to its device. The stream NULL is CUDA's default
 *   stream, with its usual semantics.
 * MEMORY. Host memory comes from malloc. Device and pinned host memory of a tree (its device copy,
 *   the bucket tables, the staging of host-array calls, the staging of uploads (three 32 MiB pinned
 *   buffers, made by the first upload of a tree of more than 16 MiB and kept until the copy is
 *   released), the completion signals' words (1 KiB of pinned host memory, made by the first small
 *   synchronous device-array call and kept until harmonia_free; 64 bytes of counters in the copy)
 *   and the scratch of device-array calls) come
 *   from the allocator in its config (harmonia_allocator; default: cudaMallocAsync / cudaFreeAsync
 *   on the tree's stream, cudaHostAlloc / cudaFreeHost). harmonia_device_bytes says what the device
 *   copy takes, harmonia_query_workspace_bytes what a call of a given size needs; a caller may hand
 *   a device-array call its own workspace (config->workspace, CUB's two-phase style), and the tree
 *   then allocates no scratch for that call (the first small synchronous call of a tree still makes
 *   the completion signals' 1 KiB and 64 bytes, once). Without one, a call may allocate query buffers of the tree
 *   while others are in flight (seen: 4.3 MB for a batch of 3000 queries on a tree of 0.6 MB), so an
 *   engine whose pool is tight hands each stream a workspace (tests/test_gpu_concurrent.c).
 * ============================================================================================== */
#ifndef HARMONIA_H
#define HARMONIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "harmonia_version.h" /* HARMONIA_VERSION_STRING, _MAJOR, _MINOR, _PATCH, _NUMBER */

/* Every function of the library is declared HARMONIA_API: the one thing libharmonia exports (it is
 * built with hidden visibility and a version script; nm -D shows harmonia_* only). */
#if defined(__GNUC__) || defined(__clang__)
#define HARMONIA_API __attribute__((visibility("default")))
#else
#define HARMONIA_API
#endif

/* The deepest tree the library builds (levels, root to leaves). With F >= 8 and at least
 * F/2 children per internal node this is far beyond any tree that fits in memory. */
#define HARMONIA_MAX_LEVELS 32

/* ---------------------------------------------------------------------------------------------
 * Status codes. Every function that can fail returns one; HARMONIA_OK is 0. A failing function
 * also records a message in words (see harmonia_last_error). No function aborts on bad input.
 * ------------------------------------------------------------------------------------------- */
typedef enum harmonia_status {
    HARMONIA_OK = 0,
    HARMONIA_ERR_INVALID = 1,        /* a bad argument: NULL pointer, unsupported F/L/width ... */
    HARMONIA_ERR_NO_MEMORY = 2,      /* a host allocation failed */
    HARMONIA_ERR_IO = 3,             /* a file could not be opened, read, written or synced */
    HARMONIA_ERR_CORRUPT = 4,        /* an index file or a tree failed a check */
    HARMONIA_ERR_UNSUPPORTED = 5,    /* an index file of another format version, key width ... */
    HARMONIA_ERR_DUPLICATE_KEY = 6,  /* build input holds a key twice under the reject policy */
    HARMONIA_ERR_UNSORTED = 7,       /* input promised sorted is not */
    HARMONIA_ERR_CAPACITY = 8,       /* the tree would exceed a size limit of the layout */
    HARMONIA_ERR_NO_DEVICE = 9,      /* the GPU backend was asked for and no GPU is usable */
    HARMONIA_ERR_DEVICE = 10,        /* a CUDA call failed */
    HARMONIA_ERR_DEVICE_MEMORY = 11, /* not enough GPU memory */
    HARMONIA_ERR_KEY_EXISTS = 12,    /* update batch: insert of a present key, strict policy */
    HARMONIA_ERR_KEY_MISSING = 13,   /* update batch: update of a missing key, strict policy */
    HARMONIA_ERR_CONFLICT = 14,      /* an index file is locked by another process's update, or
                                        was changed or replaced since it was loaded */
} harmonia_status;

/* The version of the library linked, "MAJOR.MINOR.PATCH" as the project's meson.build sets it
 * (HARMONIA_VERSION_STRING is that of the headers compiled against). Never NULL. */
HARMONIA_API const char *harmonia_version(void);

/* A constant English description of a status code ("invalid argument", ...). Never NULL. */
HARMONIA_API const char *harmonia_strerror(harmonia_status status);

typedef struct harmonia_tree harmonia_tree;

/* The message of the last failure. With a tree: the last failure of a call on that tree (the
 * empty string if none). With NULL: the last failure in the calling thread of a call that has no
 * tree yet (harmonia_build, harmonia_load) or was given a NULL tree. The pointer stays valid until
 * the next failing call on the same tree / thread. Never NULL. */
HARMONIA_API const char *harmonia_last_error(const harmonia_tree *tree);

/* Progress of long steps (build, load, save): phase names the step, fraction is in [0, 1].
 * Called from the calling thread only. */
typedef void (*harmonia_progress_fn)(void *arg, const char *phase, double fraction);

/* ---------------------------------------------------------------------------------------------
 * Devices and memory (see THE EMBEDDING CONTRACT above).
 * ------------------------------------------------------------------------------------------- */

/* The device of a tree: a CUDA device id, or this: the caller's current device when the device copy
 * is made (its first GPU call or harmonia_device_upload). */
#define HARMONIA_DEVICE_CURRENT (-1)

/* An engine's own memory for a tree: function pointers and their context. The library calls them
 * with the tree's device current, from the thread of the call that needs the memory (so they must
 * be thread-safe when several trees share one). device_alloc returns memory usable on any stream at
 * once (NULL: out of memory, the call fails with DEVICE_MEMORY); stream is the tree's own stream
 * (cudaStream_t), for stream-ordered pools. device_free is called once the memory is no longer used
 * by any work of the tree (the library has waited for it). host_alloc / host_free give pinned host
 * memory (the staging buffers of host-array queries and of uploads, and the completion signals'
 * words, which the device writes: memory the device cannot address turns the signals off; NULL:
 * out of memory, and an upload then copies from pageable memory, slower). Either pair may be NULL:
 * the library's default for that kind. Make one with harmonia_allocator_init, then set the
 * pointers; the library copies the struct. */
typedef struct harmonia_allocator {
    uint32_t size;  /* sizeof(harmonia_allocator): set by harmonia_allocator_init */
    void *context;
    void *(*device_alloc)(void *context, size_t bytes, void *stream);
    void (*device_free)(void *context, void *pointer, size_t bytes, void *stream);
    void *(*host_alloc)(void *context, size_t bytes);
    void (*host_free)(void *context, void *pointer, size_t bytes);
} harmonia_allocator;

static inline void harmonia_allocator_init(harmonia_allocator *allocator)
{
    memset(allocator, 0, sizeof *allocator);
    allocator->size = (uint32_t)sizeof *allocator;
}

/* ---------------------------------------------------------------------------------------------
 * Building.
 * ------------------------------------------------------------------------------------------- */
/* Where a call runs (queries; builds, see harmonia_build_config.backend). */
typedef enum harmonia_backend {
    HARMONIA_BACKEND_AUTO = 0, /* the GPU when one is usable, else the CPU */
    HARMONIA_BACKEND_CPU,      /* the OpenMP CPU engine */
    HARMONIA_BACKEND_GPU,      /* the GPU engine; HARMONIA_ERR_NO_DEVICE when none is usable */
} harmonia_backend;

/* Where the arrays of a call live (query and result arrays of GPU queries; the pairs of a build).
 * The CPU backend takes host memory only. */
typedef enum harmonia_memory {
    HARMONIA_MEMORY_AUTO = 0, /* asked of CUDA per array (cudaPointerGetAttributes) */
    HARMONIA_MEMORY_HOST,     /* host memory (pageable or pinned): streamed through staging buffers */
    HARMONIA_MEMORY_DEVICE,   /* device memory of the tree's GPU: used in place */
} harmonia_memory;

typedef enum harmonia_duplicates {
    HARMONIA_DUPLICATES_REJECT = 0, /* a key present twice is HARMONIA_ERR_DUPLICATE_KEY */
    HARMONIA_DUPLICATES_KEEP_FIRST, /* keep the pair that comes first in the input */
    HARMONIA_DUPLICATES_KEEP_LAST,  /* keep the pair that comes last in the input */
} harmonia_duplicates;

typedef struct harmonia_build_config {
    uint32_t size;         /* set by harmonia_build_config_init (see the contract above) */
    uint32_t key_bits;     /* 32 or 64: the width of keys and of values. Default 64. */
    uint32_t fanout;       /* F, children per internal node: 8, 16, 32, 64 or 128. 0 = default
                            * for the key width, HARMONIA_DEFAULT_FANOUT(key_bits). */
    uint32_t leaf_size;    /* L, key slots per leaf: 8, 16, 32, 64 or 128. 0 = default. */
    double leaf_fill;      /* fraction of L filled by a bulk build, in (0, 1]. 0 = default. */
    harmonia_duplicates duplicates; /* policy for a key present more than once */
    bool input_sorted;     /* the caller promises keys in ascending order; verified, not sorted */
    int threads;           /* OpenMP threads; 0 = OpenMP's default */
    harmonia_progress_fn progress; /* optional */
    void *progress_arg;
    int device;            /* the GPU of the device copy; HARMONIA_DEVICE_CURRENT (default) */
    const harmonia_allocator *allocator; /* device and pinned memory; NULL = the library's */
    harmonia_backend backend; /* where the sort and the layout run: AUTO (default) = the GPU when one
                            * is usable and the input has at least 2^26 pairs (the library's
                            * policy: below it a device copy's setup and pinned staging cost more
                            * than the GPU saves) or lives on the device, else the CPU; a GPU failure (out of GPU
                            * memory, a failing CUDA call) then falls back to the CPU build. GPU =
                            * the GPU or an error (NO_DEVICE, DEVICE_MEMORY, DEVICE); CPU = the
                            * OpenMP build (host arrays only). */
    harmonia_memory memory;   /* where keys and values live: AUTO (default) asks CUDA
                            * (cudaPointerGetAttributes); HOST; DEVICE = device memory of the
                            * tree's device (see harmonia_build_device) */
    void *stream;             /* device arrays: the cudaStream_t on which they are ready (the build
                            * waits for the work queued on it first); NULL = CUDA's default stream */
} harmonia_build_config;


/* The default F: one 128-byte line per internal node (16 64-bit or 32 32-bit keys); the default L.
 * Chosen by measurement (bench/NOTES.md, "Defaults and where they were measured"). */
#define HARMONIA_DEFAULT_FANOUT(key_bits) ((key_bits) == 32 ? 32u : 16u)
#define HARMONIA_DEFAULT_LEAF_SIZE 16
#define HARMONIA_DEFAULT_LEAF_FILL 1.0

/* Fills the first `size` bytes of *config with the defaults (fanout 0: the key width's default,
 * chosen by harmonia_build) and sets config->size = size. Call it through harmonia_build_config_init,
 * which passes the sizeof of the caller's header. */
HARMONIA_API void harmonia_build_config_init_sized(harmonia_build_config *config, size_t size);
static inline void harmonia_build_config_init(harmonia_build_config *config)
{
    harmonia_build_config_init_sized(config, sizeof *config);
}

/* Builds a tree from count pairs (keys[i], values[i]), both arrays of config->key_bits-wide
 * unsigned integers in host memory (or device memory, see config->memory and harmonia_build_device),
 * in any order (unless config->input_sorted). values may be NULL:
 * then each key's value is its position in the input (a row id). Every key value, 0 and the
 * maximum included, is a valid key. Duplicates follow config->duplicates. count may be 0 (an empty
 * tree). The inputs are not modified and may be freed afterwards. Synchronous; OpenMP-parallel.
 * On success *tree_out owns the new tree (free with harmonia_free). On failure *tree_out is NULL and
 * the message (harmonia_last_error(NULL)) names the problem, e.g. the first out-of-order position
 * or the first duplicate key. The tree takes config->device and config->allocator for its device
 * copy.
 * THE GPU BUILD (config->backend, above): the pairs go to the tree's device in pinned chunks (the
 * keys first; the CUB radix sort of keys with their positions runs while the values follow), the
 * duplicate policy is applied there, the leaf level, its values and ranks and each internal level
 * (one kernel per level) are laid out there, and the host tree is filled from that result, which
 * stays as the tree's device copy (harmonia_info's device_resident; no upload on the first GPU
 * query). The tree equals the CPU build's bit for bit, with the same errors and messages. It needs
 * the device copy plus about 24 bytes a pair (64-bit keys; 16 for 32-bit) of GPU memory for the
 * sort, and at most 2^32 - 2 pairs; where that is not to be had, AUTO builds on the CPU. Progress
 * phases: "upload", "sort", "layout", "download" (the CPU build: "sort", "layout").
 * Errors: INVALID (also: a config not made by harmonia_build_config_init; backend CPU with device
 * arrays), UNSUPPORTED (a config of a newer header with options set that this library does not
 * know), NO_MEMORY, DUPLICATE_KEY, UNSORTED, CAPACITY; with the GPU build: NO_DEVICE, DEVICE_MEMORY,
 * DEVICE (backend GPU or device arrays: AUTO with host arrays falls back to the CPU instead). */
HARMONIA_API harmonia_status harmonia_build(const harmonia_build_config *config, const void *keys,
                               const void *values, uint64_t count, harmonia_tree **tree_out);

/* harmonia_build from arrays in device memory of the tree's device (config->device; the current
 * device by default), for engines whose columns live on the GPU: the build reads them in place once
 * config->stream (NULL: CUDA's default stream) reaches this point, builds straight into the tree's
 * device copy and fills the host tree from it. The same as harmonia_build with config->memory =
 * HARMONIA_MEMORY_DEVICE (config may be NULL: the defaults). The arrays are not modified.
 * Synchronous: returns once the tree is built (waits for its own stream and config->stream only).
 * Errors: as harmonia_build's GPU build (never a CPU fallback: NO_DEVICE, DEVICE_MEMORY, DEVICE). */
HARMONIA_API harmonia_status harmonia_build_device(const harmonia_build_config *config, const void *keys,
                                                   const void *values, uint64_t count,
                                                   harmonia_tree **tree_out);

/* Frees a tree and everything it owns (host memory, a mapped file, the device copy: its memory is
 * given back after the tree's queries already queued on any stream). NULL is a no-op. */
HARMONIA_API void harmonia_free(harmonia_tree *tree);

/* ---------------------------------------------------------------------------------------------
 * Queries. Every query function takes arrays of count queries of the tree's key width and writes
 * count results in the same order. count may be 0. A NULL config means the defaults.
 * Queries do not modify the tree; several threads may query one tree at once, on the CPU and on
 * the GPU, also while harmonia_update runs: each call answers from one version of the tree for its
 * whole batch (see THE EMBEDDING CONTRACT, VERSIONS). The calls without _async return with their
 * results in place; the *_async calls (below) return once their work is queued. The two phases of
 * a range collect are two calls: an update published between them makes phase 2 read the newer
 * version, its pairs cut to (or short of) phase 1's counts; keep updates out of that gap when the
 * pairs must match the counts.
 * ------------------------------------------------------------------------------------------- */

typedef struct harmonia_query_config {
    uint32_t size;             /* set by harmonia_query_config_init (see the contract above) */
    harmonia_backend backend;
    int threads;               /* CPU engine: OpenMP threads; 0 = OpenMP's default */
    /* --- GPU engine (ignored by the CPU engine) --- */
    int psa;                   /* partially-sorted aggregation (point lookups and lower bounds):
                                  1 on, 0 off, -1 auto (default). On: each window of queries is
                                  partitioned by the top bits of its keys' place in the span of the
                                  tree's keys (psa/psa.h), searched tile by tile in shared memory,
                                  and its results gathered back into query order. Auto: on for
                                  windows of at least 2^18 queries and 2 queries per leaf, or
                                  of 2^24 queries and 1 a leaf (the policy, psa/psa_policy.h;
                                  measured in bench/NOTES.md); off for
                                  smaller or sparser windows, which the descent kernels serve */
    uint64_t psa_window;       /* queries partitioned together; 0 = device arrays: up to 2^27 (less
                                  when half the free GPU memory cannot hold ~40 bytes a query, and
                                  from 2^23 queries on about 0.2 GB more);
                                  host arrays: sized so that a window's results stay in L2 */
    uint32_t psa_bits;         /* bucket bits of the partition; 0 = buckets of about 8 KiB of leaf keys,
                                  twice as wide (one bit fewer) for unordered lookups of device
                                  arrays on 64-bit trees whose plan has 17 bits or more (at most 19
                                  bits, at most the width of the keys' span) */
    uint32_t group_size;       /* NTG threads per query G in {1,2,4,8,16,32}, G <= F, for the
                                  descent kernels (PSA off, range queries); 0 = the tree's stored
                                  choice, else the default for its F and the batch
                                  (twice the threads below 2^20 queries; range
                                  collect: from the ranges' mean length) */
    harmonia_memory memory;    /* where the arrays of the call live */
    uint32_t pipeline_depth;   /* windows in flight at once (streams), 1 to 3; 0 = 3 */
    void *stream;              /* cudaStream_t of synchronous device-array calls (they queue their
                                  work on it and wait for it alone); NULL = CUDA's default stream.
                                  The *_async calls take their stream as an argument instead */
    void *workspace;           /* device-array calls: device memory of at least workspace_bytes on
                                  the tree's device, for the call's scratch (PSA windows, range
                                  offsets), in place of the tree's own; not used concurrently by
                                  another call. NULL: the tree's scratch, allocated on first need
                                  and kept (harmonia_query_workspace_bytes says how much) */
    size_t workspace_bytes;
} harmonia_query_config;

/* Fills the first `size` bytes of *config with the defaults: backend auto, PSA auto with the
 * default window, G from the tree, memory auto, the default stream, the tree's scratch; sets
 * config->size = size. Call it through harmonia_query_config_init. */
HARMONIA_API void harmonia_query_config_init_sized(harmonia_query_config *config, size_t size);
static inline void harmonia_query_config_init(harmonia_query_config *config)
{
    harmonia_query_config_init_sized(config, sizeof *config);
}

/* Point lookups: for each i, found_out[i] = 1 and values_out[i] = the value of queries[i] if the
 * key is present, else found_out[i] = 0 and values_out[i] = 0. Synchronous.
 * Errors: INVALID (NULL arrays with count > 0), NO_DEVICE, DEVICE, DEVICE_MEMORY. */
HARMONIA_API harmonia_status harmonia_lookup(harmonia_tree *tree, const harmonia_query_config *config,
                                const void *queries, uint64_t count, void *values_out,
                                uint8_t *found_out);

/* Point lookups with results in the engine's order instead of the queries': slot i of
 * values_out/found_out holds the result of query positions_out[i] (positions_out is a permutation
 * of 0 .. count-1). With PSA the order is the partition's (each window grouped by bucket, the
 * queries outside the keys' span last), so a caller that does not need the original order skips the
 * restore step; without it (and on the CPU backend) positions_out[i] = i. Errors as
 * harmonia_lookup. */
HARMONIA_API harmonia_status harmonia_lookup_unordered(harmonia_tree *tree, const harmonia_query_config *config,
                                          const void *queries, uint64_t count, void *values_out,
                                          uint8_t *found_out, uint64_t *positions_out);

/* The same with 32-bit positions: positions_out[i] = the query of slot i, as a 32-bit word — half
 * the bytes the engine writes and the caller reads back, for calls of at most
 * HARMONIA_POSITIONS32_MAX_COUNT (2^32) queries (more: INVALID, nothing written). On the GPU the
 * partition writes them as it writes the 64-bit ones (PSA), so a caller who takes results in the
 * engine's order and maps them back itself (a join, a gather by row id) saves 4 bytes a query of
 * writes (README, "Performance"). Errors as harmonia_lookup_unordered. Its scratch is
 * HARMONIA_QUERY_LOOKUP_UNORDERED's (harmonia_query_workspace_bytes), as the 64-bit call's. */
#define HARMONIA_POSITIONS32_MAX_COUNT ((uint64_t)1 << 32)
HARMONIA_API harmonia_status harmonia_lookup_unordered32(harmonia_tree *tree, const harmonia_query_config *config,
                                                         const void *queries, uint64_t count, void *values_out,
                                                         uint8_t *found_out, uint32_t *positions_out);

/* Lower bound: for each i, the smallest key >= queries[i] and its value, found_out[i] = 1; when no
 * key is >= queries[i], found_out[i] = 0 and keys_out[i] = values_out[i] = 0. keys_out or
 * values_out may be NULL when not wanted; found_out may not. Synchronous. */
HARMONIA_API harmonia_status harmonia_lower_bound(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *queries, uint64_t count, void *keys_out,
                                     void *values_out, uint8_t *found_out);

/* Range count: counts_out[i] = the number of keys k with lo[i] <= k <= hi[i] (inclusive on both
 * ends; lo > hi is an empty range, count 0, not an error). Synchronous. */
HARMONIA_API harmonia_status harmonia_range_count(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *lo, const void *hi, uint64_t count,
                                     uint64_t *counts_out);

/* Range collect, in two phases (as CUB's device calls):
 * phase 1, keys_out == NULL and values_out == NULL: fills offsets[0 .. count] (count + 1 entries)
 *   with the exclusive scan of the range counts; offsets[count] is the total number of pairs.
 * phase 2, keys_out and/or values_out non-NULL with room for offsets[count] entries each: writes
 *   the pairs of range i, ascending by key, to positions offsets[i] .. offsets[i+1]-1. offsets
 *   must be those of phase 1 for the same tree and ranges (they are read, not recomputed). The
 *   CPU engine checks them first (never decreasing, no range above the key count: INVALID); so
 *   does the GPU engine for a tree loaded without verification when config->memory is HOST
 *   (CORRUPT: its damaged keys gave such counts). Device offsets are not read on the host: a
 *   range whose offsets decrease collects nothing there (never a length that wraps around).
 * Synchronous. */
HARMONIA_API harmonia_status harmonia_range_collect(harmonia_tree *tree, const harmonia_query_config *config,
                                       const void *lo, const void *hi, uint64_t count,
                                       uint64_t *offsets, void *keys_out, void *values_out);

/* ---------------------------------------------------------------------------------------------
 * Asynchronous queries on the caller's stream (as cuCollections' *_async calls). The same
 * operations and results as the calls above, for arrays in device memory of the tree's device:
 * the work is queued on `stream` (a cudaStream_t; NULL = CUDA's default stream) and the call
 * returns without waiting for it; the results are in place once the stream reaches that point.
 * The arrays must stay valid, and must not be written, until then. config->stream is not read.
 * The backend is the GPU (CPU in the config: INVALID; no GPU: NO_DEVICE). Arrays in host memory are
 * INVALID, with a message saying so: nothing here ever waits for the GPU. Scratch comes from
 * config->workspace when given (two-phase: harmonia_query_workspace_bytes first), else from the
 * tree's own, which is allocated on the first call that needs it (that call may wait for the
 * allocation) and kept; calls on one tree's own scratch are ordered among themselves by the tree.
 * The first call after an upload, an update or a new PSA plan queues its wait for the tree's stream
 * on `stream`, nothing on the host.
 * Errors: INVALID, NO_DEVICE, DEVICE, DEVICE_MEMORY; an error of the work itself shows on the
 * stream (cudaStreamSynchronize), as with any CUDA work. */
HARMONIA_API harmonia_status harmonia_lookup_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                   const void *queries, uint64_t count, void *values_out,
                                                   uint8_t *found_out, void *stream);
HARMONIA_API harmonia_status harmonia_lookup_unordered_async(harmonia_tree *tree,
                                                             const harmonia_query_config *config,
                                                             const void *queries, uint64_t count,
                                                             void *values_out, uint8_t *found_out,
                                                             uint64_t *positions_out, void *stream);
HARMONIA_API harmonia_status harmonia_lookup_unordered32_async(harmonia_tree *tree,
                                                               const harmonia_query_config *config,
                                                               const void *queries, uint64_t count,
                                                               void *values_out, uint8_t *found_out,
                                                               uint32_t *positions_out, void *stream);
HARMONIA_API harmonia_status harmonia_lower_bound_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                        const void *queries, uint64_t count, void *keys_out,
                                                        void *values_out, uint8_t *found_out, void *stream);
HARMONIA_API harmonia_status harmonia_range_count_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                        const void *lo, const void *hi, uint64_t count,
                                                        uint64_t *counts_out, void *stream);
/* Range collect's two phases as harmonia_range_collect, with device offsets. Phase 2 does not read
 * the offsets on the host: G is config->group_size, else the kernel picks it on the device from
 * the ranges' mean length (offsets[count] - offsets[0]) / count, as the synchronous call does. */
HARMONIA_API harmonia_status harmonia_range_collect_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                          const void *lo, const void *hi, uint64_t count,
                                                          uint64_t *offsets, void *keys_out, void *values_out,
                                                          void *stream);

/* What a query call needs besides its arrays. */
typedef enum harmonia_query_kind {
    HARMONIA_QUERY_LOOKUP = 0,
    HARMONIA_QUERY_LOOKUP_UNORDERED,
    HARMONIA_QUERY_LOWER_BOUND,
    HARMONIA_QUERY_RANGE_COUNT,
    HARMONIA_QUERY_RANGE_OFFSETS, /* range collect, phase 1 */
    HARMONIA_QUERY_RANGE_COLLECT, /* range collect, phase 2 */
} harmonia_query_kind;

/* The memory a GPU call of `count` queries of `kind` with `config` (NULL: the defaults) needs
 * besides the tree's device copy (harmonia_device_bytes) and its arrays. With config->memory
 * DEVICE or AUTO (taken as device arrays): *device_bytes_out = the workspace bytes (0: none; the
 * bytes config->workspace must hold, or what the tree allocates and keeps when it has none) and
 * *pinned_bytes_out = 0. With HOST: the tree's staging buffers for host arrays (device and pinned
 * host memory, allocated on the first host-array call and kept). Either pointer may be NULL.
 * Needs a usable GPU of the tree's device (the scratch depends on it); makes no device copy.
 * Errors: INVALID, NO_DEVICE, DEVICE. */
HARMONIA_API harmonia_status harmonia_query_workspace_bytes(harmonia_tree *tree, const harmonia_query_config *config,
                                                            harmonia_query_kind kind, uint64_t count,
                                                            size_t *device_bytes_out, size_t *pinned_bytes_out);

/* ---------------------------------------------------------------------------------------------
 * Batch updates (CPU, OpenMP), then a sync of the device copy.
 * ------------------------------------------------------------------------------------------- */
typedef enum harmonia_op_kind {
    HARMONIA_OP_INSERT = 0, /* add a key; a present key follows insert_existing */
    HARMONIA_OP_UPDATE = 1, /* change a present key's value; a missing key follows update_missing */
    HARMONIA_OP_UPSERT = 2, /* insert or update */
    HARMONIA_OP_DELETE = 3, /* remove a key; a missing key is counted, not an error */
} harmonia_op_kind;

typedef enum harmonia_insert_policy {
    HARMONIA_INSERT_EXISTING_ERROR = 0,  /* the batch fails with KEY_EXISTS */
    HARMONIA_INSERT_EXISTING_UPSERT = 1, /* the insert updates the value */
} harmonia_insert_policy;

typedef enum harmonia_update_policy {
    HARMONIA_UPDATE_MISSING_ERROR = 0, /* the batch fails with KEY_MISSING */
    HARMONIA_UPDATE_MISSING_SKIP = 1,  /* the update is counted as missing and skipped */
} harmonia_update_policy;

typedef struct harmonia_update_config {
    uint32_t size;       /* set by harmonia_update_config_init (see the contract above) */
    harmonia_insert_policy insert_existing;
    harmonia_update_policy update_missing;
    double split_fill;   /* a leaf that overflows is split into nodes filled to about this
                            fraction of L, in (0, 1]; 0 = default 0.75 */
    int threads;         /* OpenMP threads; 0 = OpenMP's default */
    bool skip_upload;    /* leave the device copy stale (the next GPU query re-uploads it) */
    bool free_previous_layout; /* free the arrays of the version before this batch's (at once, or
                            when the last query reading them returns). By default (false) the tree
                            keeps them and the next batch writes into them (a re-layout where they
                            are large enough; an in-place batch by copy-on-write, see
                            harmonia_update): no page faults of fresh memory, for up to twice the
                            tree's memory between batches (harmonia_free releases both). */
} harmonia_update_config;

typedef struct harmonia_update_stats {
    uint64_t operations;      /* operations in the batch */
    uint64_t applied;         /* operations that changed the tree */
    uint64_t inserted, updated, deleted;
    uint64_t missing;         /* deletes of absent keys and skipped updates of absent keys */
    uint64_t duplicates;      /* operations on a key that an earlier operation of the batch named */
    uint64_t leaves_touched;  /* leaves that received operations */
    uint64_t leaves_split;    /* leaves that overflowed into auxiliary nodes */
    uint64_t auxiliary_nodes; /* nodes made for what overflowed */
    uint64_t leaves_removed;  /* leaves emptied by deletes */
    bool shape_changed;       /* leaves were split or removed: the layout was rebuilt */
    bool incremental_upload;  /* only dirty leaves and values went to the device */
    uint64_t uploaded_bytes;
    double sort_seconds, apply_seconds, relayout_seconds, upload_seconds;
    uint64_t failed_operation; /* KEY_EXISTS / KEY_MISSING / INVALID: the index of the first failing
                                  operation; UINT64_MAX otherwise */
    uint64_t blocking_sync;    /* 1 when the device copy was brought up to date in place, GPU
                                  queries of the tree waiting for the sync: a second copy did not
                                  fit (see harmonia_update), or the copy was older than the tree (a
                                  batch with skip_upload before) and was uploaded again; else 0 */
    uint64_t reserved[7];      /* zero; later versions report more here */
} harmonia_update_stats;

/* Defaults: strict policies, split fill 0.75, OpenMP's default threads, the device copy synced, the
 * previous layout's arrays kept for the next re-layout (free_previous_layout false). */
HARMONIA_API void harmonia_update_config_init_sized(harmonia_update_config *config, size_t size);
static inline void harmonia_update_config_init(harmonia_update_config *config)
{
    harmonia_update_config_init_sized(config, sizeof *config);
}

/* Applies count operations (kinds[i] one of harmonia_op_kind; keys[i] and values[i] of the tree's
 * key width, values ignored for deletes and may be NULL if all are deletes) to the tree, as one
 * atomic batch: operations on the same key apply in batch order; if any operation fails under a
 * strict policy, or memory runs out, the tree is exactly as before (bit for bit) and the message
 * names the first failing operation's index. On success the tree's version is bumped and, when it
 * has a device copy, the copy is synchronised (only dirty leaves sent when the shape did not change)
 * before the call returns: GPU queries queued before the publish read the old version, those after
 * it the new one (the old copy is freed after the tree's queries already queued on any stream).
 * A tree loaded from a file is copied into memory by its first update; one loaded without
 * verification is verified in full first (section checksums and integrity checker: CORRUPT, and
 * nothing applied, when it fails). stats may be NULL; it is
 * filled on failure too (then only operations and failed_operation mean anything).
 * QUERIES DURING THE CALL (see VERSIONS at the top). Other threads may query the tree meanwhile:
 * they read version N until the publish, then N+1. What it costs:
 *   host memory: N+1 is written into the arrays of the version before N, which the tree keeps
 *   between batches (see free_previous_layout): a re-layout writes its new layout there; a batch
 *   that changes no leaf's shape (in place) is copy-on-write: those arrays are first brought up to
 *   N, by the leaves the last batch changed when it was in place too (as much as it wrote), else by
 *   a copy of the whole tree (the first in-place batch after a build, a load, a re-layout or a
 *   free_previous_layout batch), then changed. Before it writes there, the call waits for the
 *   query calls still reading the version before N (calls that began before the last update
 *   returned). Without that kept memory (free_previous_layout), each batch allocates afresh.
 *   device memory: when the tree has a device copy, N+1's copy is made beside N's (from N's on the
 *   device plus the dirty leaves when the shape is unchanged, else from the host), checked first
 *   against the free memory (cudaMemGetInfo) or, with the caller's allocator, by its answer; N's
 *   copy is freed after the GPU queries queued on it. When two copies do not fit, the documented
 *   FALLBACK is blocking, never an error: new GPU queries of the tree wait (on the tree's lock)
 *   while the copy is brought to N+1 in place, after the queries already queued
 *   (stats->blocking_sync = 1). When even one copy of N+1 does not fit, the batch is applied, the
 *   device copy released and DEVICE_MEMORY returned (below). CPU queries never wait for the sync.
 * Synchronous.
 * Errors: INVALID (bad kind, NULL arrays), KEY_EXISTS, KEY_MISSING, NO_MEMORY, CAPACITY, CORRUPT
 * (an unverified tree that fails verification), and the device errors of the sync (then the host
 * tree is updated and the device copy released; the next GPU call uploads it again). */
HARMONIA_API harmonia_status harmonia_update(harmonia_tree *tree, const harmonia_update_config *config,
                                const uint8_t *kinds, const void *keys, const void *values,
                                uint64_t count, harmonia_update_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * Index files.
 * ------------------------------------------------------------------------------------------- */

/* Saves the tree to path atomically: the file at path is either the old one or the complete new
 * one, never a mix, even if the process dies (temporary file "<real path>.tmp.XXXXXX" in the same
 * folder, fsync, rename, fsync of the folder; on any failure the temporary file is removed and the
 * old file is untouched). Only regular files are written: a path naming a folder, FIFO, device or
 * socket fails (IO) and is left alone. A symbolic link is followed and the file it points to is
 * replaced (the link stays). The new file keeps the old one's permission bits, and its owner and
 * group where the process may set them. Stale temporary files of killed saves of the same path
 * (not locked by a live process) are removed.
 * Concurrency: the save takes an exclusive advisory lock (flock) on the file it replaces, unless
 * the tree holds that lock already (harmonia_load_config.lock); a lock held by another process
 * fails with CONFLICT ("index is being updated by another process"), nothing written. When the
 * tree was loaded from (or last saved to) the file it now replaces, that file must be the same
 * one, of the same size and modification time, as then: one changed or replaced by another process
 * meanwhile fails with CONFLICT, nothing written. A tree holding a lock keeps it on the new file.
 * A tree loaded without verification is verified in full first (checksums of the loaded file and
 * the integrity checker): a damaged one fails with CORRUPT and nothing is written, so a save never
 * hides damage behind fresh checksums.
 * Synchronous. Errors: INVALID, IO (with the OS's reason), CONFLICT, CORRUPT, NO_MEMORY. */
HARMONIA_API harmonia_status harmonia_save(harmonia_tree *tree, const char *path);

/* Advisory locking of an index file by harmonia_load (see harmonia_load_config.lock). */
typedef enum harmonia_lock_mode {
    HARMONIA_LOCK_NONE = 0, /* no lock: plain readers (queries, info, check) */
    HARMONIA_LOCK_TRY,      /* take the file's exclusive lock or fail with CONFLICT at once */
    HARMONIA_LOCK_WAIT,     /* take the file's exclusive lock, waiting while another holds it */
} harmonia_lock_mode;

typedef struct harmonia_load_config {
    uint32_t size;                 /* set by harmonia_load_config_init (see the contract above) */
    bool verify;                   /* check checksums and run the integrity checker (default on).
                                      Off, the O(nodes) structure checks still run (first-child
                                      bounds and monotonicity, children per node, level sizes,
                                      leaf ranks and keys per leaf), so every query, info and
                                      update stays inside the arrays; what is skipped is the
                                      O(bytes) checksums and the O(keys) order and separator
                                      checks: a damaged file may then give wrong answers. */
    harmonia_lock_mode lock;       /* NONE (default); TRY or WAIT: the tree holds the file's
                                      exclusive lock (flock) until harmonia_free, so that one
                                      process at a time loads, updates and saves it (the read-
                                      modify-write of an update is then never lost) */
    harmonia_progress_fn progress; /* optional */
    void *progress_arg;
    int device;                    /* the GPU of the device copy; HARMONIA_DEVICE_CURRENT (default) */
    const harmonia_allocator *allocator; /* device and pinned memory; NULL = the library's */
} harmonia_load_config;

/* Defaults: verify, no lock, the current device, the library's allocator. */
HARMONIA_API void harmonia_load_config_init_sized(harmonia_load_config *config, size_t size);
static inline void harmonia_load_config_init(harmonia_load_config *config)
{
    harmonia_load_config_init_sized(config, sizeof *config);
}

/* Loads an index file written by harmonia_save, mapping it into memory (the tree reads the file's
 * pages in place; it stays valid while the tree lives). Sizes, offsets, counts and the tree's
 * structure (first-child array, leaf ranks, level sizes) are always validated; with
 * config->verify (the default), every section's checksum and the whole integrity checker too.
 * A NULL config means the defaults. A damaged file is rejected, never a crash. A tree loaded
 * without verification is verified in full before its first update or save (see harmonia_update,
 * harmonia_save); harmonia_check verifies it too. With config->lock the file's lock is taken
 * before it is read.
 * Errors: INVALID, IO, CORRUPT (what is wrong, in words), UNSUPPORTED (another format version or
 * an unknown key width), NO_MEMORY, CONFLICT (config->lock TRY and another process holds it). */
HARMONIA_API harmonia_status harmonia_load(const char *path, const harmonia_load_config *config,
                              harmonia_tree **tree_out);

/* ---------------------------------------------------------------------------------------------
 * Integrity and information.
 * ------------------------------------------------------------------------------------------- */

/* Walks the whole tree and checks every invariant of the layout (keys strictly increasing within
 * nodes and across the leaves, separators consistent with their children, prefix sums monotone and
 * consistent with the level sizes, counts matching, padding). Returns OK or CORRUPT with the first
 * broken invariant in words in harmonia_last_error(tree). A tree loaded without verification also
 * gets its section checksums checked against the file's (then it counts as verified). Synchronous,
 * read-only. */
HARMONIA_API harmonia_status harmonia_check(harmonia_tree *tree);

typedef struct harmonia_tree_info {
    uint32_t key_bits;
    uint32_t fanout;
    uint32_t leaf_size;
    uint32_t height;            /* levels; 1 = the root is a leaf */
    uint64_t key_count;
    uint64_t internal_nodes;
    uint64_t leaf_count;
    uint64_t level_nodes[HARMONIA_MAX_LEVELS]; /* nodes per level, root first */
    uint64_t key_region_bytes;  /* keys of all nodes */
    uint64_t leaf_value_bytes;
    uint64_t prefix_sum_bytes;  /* the first-child array */
    uint64_t leaf_rank_bytes;   /* keys before each leaf */
    uint64_t total_bytes;
    double leaf_fill;           /* key_count / (leaf_count * leaf_size) */
    uint64_t min_key, max_key;  /* valid when key_count > 0 */
    uint64_t version;           /* bumped by each applied update batch */
    uint32_t ntg_group_size;    /* the stored NTG choice; 0 = none stored */
    bool mapped;                /* the tree reads a mapped index file */
    uint64_t constant_prefix_entries; /* first-child entries the GPU kernels read from constant
                                       * memory (see harmonia_set_constant_levels) */
    uint32_t constant_prefix_levels;  /* the whole internal levels those entries cover */
    bool device_resident;       /* a device copy exists */
    uint64_t device_version;    /* the tree version the device copy holds */
    uint64_t device_bytes;      /* GPU memory held by the device copy and its scratch */
    int device;                 /* the device of the copy; without one, the tree's setting
                                   (HARMONIA_DEVICE_CURRENT or a device id) */
    uint64_t reserved[8];       /* zero; later versions report more here */
} harmonia_tree_info;

HARMONIA_API harmonia_status harmonia_info(const harmonia_tree *tree, harmonia_tree_info *info_out);

/* ---------------------------------------------------------------------------------------------
 * NTG profiling: choosing G, the threads that search one query together on the GPU (narrowed
 * thread groups, Section 4.2 of the Harmonia paper). Two answers to the same question:
 *   the model (harmonia_ntg_model): the paper's Eq. 4 from a CPU traversal of a sample of the
 *     workload over the tree's own layout; needs no GPU. ntg/ntg_model.h defines it exactly
 *     (keys examined per node, steps, counted levels, simulated warps, PSA order, the rule);
 *   the measurement (harmonia_ntg_measure): the GPU lookup timed for every G on the workload.
 * harmonia_ntg_choice picks from them (the measurement when there is one); harmonia_set_group_size
 * keeps the pick with the tree: GPU queries whose config.group_size is 0 use it, harmonia_save
 * writes it to the index file, harmonia_load restores it, harmonia_info reports it.
 * The sizes are G in {1, 2, 4, 8, 16, 32} with G <= F (a group never spans two warps).
 * ------------------------------------------------------------------------------------------- */

/* Group sizes a profile can hold: 1, 2, 4, 8, 16, 32. */
#define HARMONIA_NTG_MAX_SIZES 6
#define HARMONIA_NTG_DEFAULT_SAMPLE 1000
#define HARMONIA_NTG_DEFAULT_LEVELS 2
#define HARMONIA_NTG_DEFAULT_RUNS 5

typedef struct harmonia_ntg_config {
    uint32_t size;     /* set by harmonia_ntg_config_init (see the contract above) */
    const harmonia_query_config *query; /* how the workload runs on the GPU (NULL: the defaults):
                                    psa, psa_window, psa_bits, pipeline_depth. The model simulates
                                    the PSA order they give; the measurement runs with them.
                                    backend, memory, group_size, stream and workspace are the
                                    profiler's (ignored here). */
    bool unordered;    /* the workload takes results in PSA order (the measurement calls
                          harmonia_lookup_unordered32, or harmonia_lookup_unordered above 2^32
                          queries); then psa = -1 (auto) means on, as in the engine; else
                          harmonia_lookup */
    uint64_t sample;   /* model: queries traversed, taken as runs of 32 (one warp at G = 1);
                          0 = HARMONIA_NTG_DEFAULT_SAMPLE (31 runs, 992 queries) */
    uint32_t levels;   /* model: the last levels whose steps count (2 = the leaves' parents and the
                          leaves); 0 = HARMONIA_NTG_DEFAULT_LEVELS; above the height = all */
    uint32_t warmup;   /* measurement: untimed calls per G before the timed ones; 0 = 1 */
    uint32_t runs;     /* measurement: timed calls per G, the median is kept;
                          0 = HARMONIA_NTG_DEFAULT_RUNS */
} harmonia_ntg_config;

/* Fills *config with the defaults: the query defaults (PSA auto, the engine's window), results in
 * query order, a sample of 1000, the last 2 levels, 1 warm-up and 5 timed runs per G. */
HARMONIA_API void harmonia_ntg_config_init_sized(harmonia_ntg_config *config, size_t size);
static inline void harmonia_ntg_config_init(harmonia_ntg_config *config)
{
    harmonia_ntg_config_init_sized(config, sizeof *config);
}

typedef struct harmonia_ntg_model_result {
    uint32_t size_count;                          /* G values modelled: log2(min(F, 32)) + 1 */
    uint32_t group_sizes[HARMONIA_NTG_MAX_SIZES]; /* ascending: 1, 2, 4, ... min(F, 32) */
    double steps[HARMONIA_NTG_MAX_SIZES];         /* S(G): mean comparison steps of a simulated
                                                     warp over the counted levels */
    double ratio[HARMONIA_NTG_MAX_SIZES];         /* Eq. 4 for narrowing from 2G to G:
                                                     S(2G) / S(G) × 2; 0 for the widest G */
    double level_steps[HARMONIA_NTG_MAX_SIZES][HARMONIA_MAX_LEVELS]; /* S(G) of counted level k
                                                     (level first_level + k) alone */
    uint32_t choice;       /* the model's G: halving from the widest while ratio > 1 */
    uint32_t first_level;  /* the counted levels: first_level .. first_level + levels - 1 */
    uint32_t levels;
    uint64_t sample_queries; /* queries traversed */
    uint64_t runs;           /* runs of 32 consecutive queries among them */
    bool psa;                /* the PSA order of the first window was simulated */
    uint32_t psa_begin_bit, psa_end_bit; /* its sort bits [begin, end) */
    uint64_t window;         /* the queries of the window the runs were taken from (PSA off:
                                the whole batch) */
    uint64_t reserved[8];    /* zero; later versions report more here */
} harmonia_ntg_model_result;

typedef struct harmonia_ntg_measurement {
    uint32_t size_count;                          /* as in the model: every valid G */
    uint32_t group_sizes[HARMONIA_NTG_MAX_SIZES]; /* ascending */
    double seconds[HARMONIA_NTG_MAX_SIZES];       /* median time of one call over the batch */
    double queries_per_second[HARMONIA_NTG_MAX_SIZES];
    uint32_t best;        /* the G of the highest throughput (the smaller G on a tie) */
    uint64_t queries;     /* the batch */
    uint64_t found;       /* its hits (the same for every G: checked) */
    bool psa;             /* PSA as the engine resolved it for this workload */
    uint32_t warmup, runs;
    char device[256];     /* the GPU's name (the tree's device) */
    uint64_t reserved[8]; /* zero; later versions report more here */
} harmonia_ntg_measurement;

/* Fills queries_out (count keys of the tree's width, host memory) with keys drawn uniformly, with
 * replacement, from the tree's keys: a workload of hits for profiling when the caller has none.
 * Deterministic for a seed (whatever the thread count). Synchronous; OpenMP-parallel.
 * Errors: INVALID (NULL tree, NULL queries_out with count > 0, an empty tree with count > 0). */
HARMONIA_API harmonia_status harmonia_sample_keys(harmonia_tree *tree, uint64_t count, uint64_t seed,
                                     void *queries_out);

/* The model: traverses a sample of the count queries (host memory, the tree's key width; the
 * workload as it would be given to harmonia_lookup) on the CPU and fills *result. A NULL config
 * means the defaults. With PSA on and no configured window, the window is the one the engine
 * would take on the tree's device (its L2 size; an 8 MiB L2 is assumed without a GPU). Needs no GPU. The tree
 * is not modified. Synchronous.
 * Errors: INVALID (NULL tree, queries or result; count 0), NO_MEMORY. */
HARMONIA_API harmonia_status harmonia_ntg_model(harmonia_tree *tree, const harmonia_ntg_config *config,
                                   const void *queries, uint64_t count,
                                   harmonia_ntg_model_result *result);

/* The measurement: copies the count queries (host memory, the tree's key width) to the GPU once,
 * uploads the tree if needed, and for every valid G runs harmonia_lookup (or _unordered32, or
 * _unordered above 2^32 queries: see config->unordered) with the backend GPU on device arrays,
 * config->query's PSA settings and group_size = G: config->warmup untimed calls, then
 * config->runs calls timed with CUDA events on a stream of its own; keeps the median. The results
 * of every G are compared (hash of values, found flags and positions): a difference is a DEVICE
 * error naming both G. Frees its device arrays before returning. The tree is not modified (its
 * device copy may be created). Synchronous.
 * Errors: INVALID (NULL tree, queries or result; count 0), NO_DEVICE (no usable GPU, or a build
 * without CUDA: harmonia_last_error(tree) says why), DEVICE_MEMORY, DEVICE, NO_MEMORY. */
HARMONIA_API harmonia_status harmonia_ntg_measure(harmonia_tree *tree, const harmonia_ntg_config *config,
                                     const void *queries, uint64_t count,
                                     harmonia_ntg_measurement *result);

/* The G to keep: the measured best when measured is not NULL and holds one (best != 0), else the
 * model's choice; 0 when neither is given. */
HARMONIA_API uint32_t harmonia_ntg_choice(const harmonia_ntg_model_result *model,
                             const harmonia_ntg_measurement *measured);

/* Stores group_size as the tree's NTG choice: from the next call, GPU queries whose
 * config.group_size is 0 use it; harmonia_save writes it into the index file. 0 clears it (the
 * engine's default for F applies). The file is not touched: save to keep it. Not to be called while
 * other threads query the tree. Errors: INVALID (NULL tree; G not in {1, 2, 4, 8, 16, 32} or above
 * the tree's fanout; the message says which). */
HARMONIA_API harmonia_status harmonia_set_group_size(harmonia_tree *tree, uint32_t group_size);

/* ---------------------------------------------------------------------------------------------
 * The GPU.
 * ------------------------------------------------------------------------------------------- */

/* Places the tree's device copy: device is a CUDA device id or HARMONIA_DEVICE_CURRENT (the
 * caller's current device when the copy is made); allocator gives its device and pinned memory
 * (NULL: the library's; the struct is copied). A device copy that exists on another device or
 * with another allocator is released (the next GPU call or harmonia_device_upload makes a new one).
 * Not to be called while other threads use the tree.
 * Errors: INVALID (NULL tree, device below -1, an allocator with one function of a pair, or of an
 * unknown size). */
HARMONIA_API harmonia_status harmonia_set_device(harmonia_tree *tree, int device,
                                                 const harmonia_allocator *allocator);

/* Makes the device copy on the tree's device (key region, leaf values, leaf ranks, first-child
 * array; its top cut and each level's closed form travel with each launch, see
 * harmonia_set_constant_levels), replacing an older
 * copy once the tree's queries already queued have finished. Queries with the GPU backend upload on
 * first use; call this to control when. The device copy records the tree version it holds.
 * Synchronous: returns with the copy in place (waits for the tree's own stream only).
 * Errors: NO_DEVICE, DEVICE_MEMORY (with the bytes needed and free), DEVICE. */
HARMONIA_API harmonia_status harmonia_device_upload(harmonia_tree *tree);

/* Frees the device copy (a no-op without one), after the tree's queries already queued on any
 * stream. The host tree is untouched. */
HARMONIA_API void harmonia_device_release(harmonia_tree *tree);

/* The bytes of GPU memory the tree's device copy takes (key region, leaf values, first-child array,
 * leaf ranks), whether or not it exists yet; its scratch (bucket tables, staging, workspaces) comes
 * on top (harmonia_query_workspace_bytes; harmonia_info's device_bytes has both). Needs no GPU.
 * Errors: INVALID (NULL tree or bytes_out). */
HARMONIA_API harmonia_status harmonia_device_bytes(const harmonia_tree *tree, uint64_t *bytes_out);

/* How many internal levels, root first, the GPU point lookups and lower bounds read from constant
 * memory (their first-child entries travel as kernel parameters, in the constant bank; the other
 * levels' children are computed from each level's closed form, which travels there too: every
 * layout shares a level's children evenly among its nodes; the range count, the collect and the
 * staged search compute every level's, measured faster). With the default fanouts and leaf size a
 * cut of at most 34 entries (two levels always fit) goes to the default-shape kernels and a larger
 * one runs the generic kernels, which read F and L from the tree. The constant cache serves one
 * address per cycle, so
 * a level whose nodes are reached by different queries of a warp is read serially: every level
 * below the root cost time where it was measured (bench/NOTES.md). Hence the default,
 * HARMONIA_CONSTANT_LEVELS_DEFAULT, is the root level; HARMONIA_CONSTANT_LEVELS_ALL keeps as many
 * whole levels as fit in HARMONIA_CONSTANT_ENTRIES_MAX entries (with one sentinel entry); 0 keeps
 * none. A count above what fits is cut to what fits. Takes effect at the next GPU call (without a
 * re-upload); harmonia_info reports it. Not to be called while other threads use the tree.
 * Errors: INVALID (NULL tree, levels below -1). */
#define HARMONIA_CONSTANT_ENTRIES_MAX 512
#define HARMONIA_CONSTANT_LEVELS_DEFAULT 1
#define HARMONIA_CONSTANT_LEVELS_ALL (-1)
HARMONIA_API harmonia_status harmonia_set_constant_levels(harmonia_tree *tree, int32_t levels);

typedef struct harmonia_device_info {
    char name[256];
    int sm_count;
    int compute_major, compute_minor;
    uint64_t l2_bytes;
    uint64_t global_memory_bytes;
    uint64_t free_memory_bytes;
    uint64_t constant_memory_bytes;
    int device;               /* the CUDA device id probed */
    uint64_t reserved[8];     /* zero; later versions report more here */
} harmonia_device_info;

/* Probes the calling thread's current CUDA device (the one a tree with HARMONIA_DEVICE_CURRENT
 * would take; harmonia_info's device says which a tree took). Returns OK and fills *info (may be
 * NULL) when a GPU is usable; otherwise NO_DEVICE with the reason ("built without CUDA", "no
 * CUDA-capable device is detected", ...) in harmonia_last_error(NULL). The current device is left
 * as it was. */
HARMONIA_API harmonia_status harmonia_device_probe(harmonia_device_info *info);

#ifdef __cplusplus
}
#endif
#endif /* HARMONIA_H */
