/* tree_internal.h — the owning host object behind the public harmonia_tree handle, shared by the
 * front (tree.c), the index files (index_file.c) and the updater. Not part of the public API. */
#ifndef HARMONIA_TREE_INTERNAL_H
#define HARMONIA_TREE_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>

#include "harmonia.h"
#include "harmonia/safe_file.h"
#include "key_region/key_region.h"

/* VERSIONS (harmonia_update during queries; tree.c). The published version is tree->kr with
 * tree->version; its arrays are never written while published. An update builds version N+1 into
 * other arrays (a re-layout into the spare's, an in-place batch into a copy of N: the spare brought
 * up to N by the leaves the last batch changed, copy-on-write), then publishes it with the device
 * copy at one point (hm_gpu_sync: under gpu_lock, then version_lock). N's arrays become the spare.
 *   CPU query calls pin the published version for their whole batch (hm_pin: a copy of tree->kr and
 *   pins[version & 1] + 1 under version_lock; hm_unpin gives it back). Only two versions can be
 *   pinned: the published one and the one before it, whose arrays are the spare; the next update
 *   waits for that slot's pins to reach 0 (drained) before it writes into the spare, so a reader
 *   never sees its arrays change.
 *   GPU query calls read tree->kr and tree->version under gpu_lock only, which the publish holds.
 * Lock order: update_lock, gpu_lock, version_lock; gpu_lock, calls_lock. */

/* The synchronous device-array calls of a tree that skip their ordering event (gpu_tree.cu, "calls
 * in flight") at once; more take the event. A capacity, not a tuning number. */
#define HM_CALLS_IN_FLIGHT 16
struct harmonia_tree {
    kr_tree kr;               /* the published layout; its arrays are malloc'd or point into
                                 mapping. Written by the publish under gpu_lock and version_lock */
    kr_tree spare;            /* the arrays of the version before the published one (malloc'd, or
                                 none), which the next batch writes into (cpu_update.h); readers of
                                 that version may still read them until pins[(version + 1) & 1] = 0 */
    bool spare_delta;         /* the spare holds the version before with the published shape, and
                                 differs from the published one by spare_dirty's leaves alone (and
                                 the leaf ranks when spare_ranks): what an in-place batch copies */
    bool spare_ranks;
    uint64_t *spare_dirty;    /* ascending leaf numbers (malloc'd) */
    uint64_t spare_n_dirty;
    bool spare_discard;       /* free the spare (or unmap spare_mapping) once its readers drain */
    void *spare_mapping;      /* a mapped file's pages the version before still reads, else NULL */
    size_t spare_mapping_bytes;
    uint64_t pins[2];         /* CPU query calls reading version v: pins[v & 1] */
    pthread_mutex_t version_lock; /* guards kr (its writes), version (its writes), pins, spare_* */
    pthread_cond_t drained;   /* signalled when a pins slot reaches 0 */
    pthread_mutex_t update_lock; /* one harmonia_update at a time per tree */
    uint64_t version;         /* bumped by each applied update batch */
    uint32_t ntg_group_size;  /* stored NTG choice, 0 = none */
    int32_t constant_levels;  /* harmonia_set_constant_levels: -1 all that fit, else a level count */
    void *mapping;            /* the mapped index file when loaded, else NULL */
    size_t mapping_bytes;
    struct hm_gpu *gpu;       /* the device copy and its pipeline (gpu_tree.cu), NULL if none */
    pthread_mutex_t gpu_lock; /* guards gpu and everything it holds (lanes, scratch, tables): the
                                 tree's own lock, never held while waiting for a caller's stream */
    /* Synchronous device-array calls queued and not yet waited for (gpu_tree.cu, "calls in
     * flight"): the streams the device copy's stream must be ordered after before anything those
     * calls must precede is queued on it. Guarded by calls_lock (after gpu_lock in the lock order:
     * a call leaves its slot without gpu_lock). */
    pthread_mutex_t calls_lock;
    void *call_stream[HM_CALLS_IN_FLIGHT];   /* the call's cudaStream_t */
    bool call_busy[HM_CALLS_IN_FLIGHT];      /* the slot holds a call in flight */
    void *call_ordered_by[HM_CALLS_IN_FLIGHT]; /* the copy (hm_gpu) whose stream already waits for it */
    /* Completion signals of synchronous one-launch calls (gpu_tree.cu, "completion signals"): a
     * word of host memory the device writes a call slot (HM_SIGNAL_STRIDE words apart), made by
     * the first such call (under gpu_lock) with the tree's allocator (else cudaHostAlloc) and kept
     * until the tree is freed or its allocator or device changes (hm_set_placement frees them
     * first, so the tree's allocator is always the one that made them); the sequence number slot
     * i's last call asked for. A slot's word and sequence are used by that slot's holder alone.
     * signals_off (atomic): a signal went wrong once, or none could be made — the tree's calls
     * wait for their streams. */
    unsigned int *call_flags;        /* the host's address (NULL: none yet) */
    unsigned int *call_flags_device; /* the device's address of the same words */
    unsigned int call_sequence[HM_CALLS_IN_FLIGHT];
    bool signals_off;
    int device;               /* where the device copy goes: a device id or HARMONIA_DEVICE_CURRENT */
    bool has_allocator;       /* allocator holds the caller's functions (else the library's) */
    harmonia_allocator allocator;
    char last_error[512];
    /* --- the file behind the tree (index_file.c) --- */
    char *source_path;        /* the real path it was loaded from or last saved to, else NULL */
    hm_file_id source_id;     /* that file's identity then: a save over it checks it is unchanged */
    int lock_fd;              /* holds the exclusive flock of the index file (load with a lock),
                                 -1 when none */
    bool unverified;          /* loaded without verification: the mapping's checksums and the
                                 integrity checker have not run (index_file.c verifies it before
                                 an update or a save) */
    uint64_t loaded_checksums[4]; /* the section checksums of the loaded file (when unverified) */
};

/* Records a message as the tree's last error (or the thread's when tree is NULL) and returns
 * status, so that failing paths read `return hm_fail(tree, STATUS, "...", ...)`. */
harmonia_status hm_fail(harmonia_tree *tree, harmonia_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Allocates a zeroed tree handle with the default settings (NULL on allocation failure);
 * hm_tree_delete_handle frees such a handle (its locks), nothing it points to. */
harmonia_tree *hm_tree_new(void);
void hm_tree_delete_handle(harmonia_tree *tree);

/* A CPU query call's version: a copy of the published layout, pinned until hm_unpin (see VERSIONS
 * above); the arrays it points to do not change meanwhile. Returns the pin's slot. */
unsigned hm_pin(harmonia_tree *tree, kr_tree *snapshot);
void hm_unpin(harmonia_tree *tree, unsigned slot);

/* Configs of any header version (tree.c): hm_config_read copies the fields of the caller's config
 * `given` (its size field first) over `own`, which holds this library's defaults; a size below
 * oldest_bytes is INVALID, unknown non-zero fields of a newer header UNSUPPORTED (the message names
 * the config). hm_config_init fills the first `size` bytes of a caller's config from defaults and
 * sets its size (the *_init_sized functions). */
harmonia_status hm_config_read(harmonia_tree *tree, const char *name, void *own, size_t own_bytes,
                               size_t oldest_bytes, const void *given);
void hm_config_init(void *config, size_t size, const void *defaults, size_t own_bytes);
/* A query config resolved: the defaults when given is NULL. */
harmonia_status hm_query_config(harmonia_tree *tree, const harmonia_query_config *given,
                                harmonia_query_config *out);

/* An NTG config resolved, with its query config (given->query, or the defaults) copied into
 * *query_out and out->query pointing at it (ntg_choice.c). */
harmonia_status hm_ntg_config(harmonia_tree *tree, const harmonia_ntg_config *given, harmonia_ntg_config *out,
                              harmonia_query_config *query_out);

/* Sets the tree's device and allocator (checked; a device copy made otherwise is released). */
harmonia_status hm_set_placement(harmonia_tree *tree, int device, const harmonia_allocator *allocator);

/* The bytes of the device copy of a layout (key region, leaf values, first child, leaf ranks). */
uint64_t hm_device_copy_bytes(const kr_tree *t);

/* First-child entries the GPU kernels read from constant memory (whole levels plus the
 * sentinel, by the tree's constant_levels setting); *levels_out gets the levels they cover. */
uint64_t hm_constant_entries(const harmonia_tree *tree, uint32_t *levels_out);

/* Frees the layout arrays (or unmaps the file) of a tree, leaving the handle itself. */
void hm_tree_release_storage(harmonia_tree *tree);

/* For a tree loaded without verification: checks its mapped sections against the checksums of
 * the file and runs the integrity checker; on success the tree counts as verified. OK at once for
 * a verified tree. CORRUPT otherwise, with the message in the tree's last error: the file, what is
 * wrong, then "; <consequence>" ("nothing was applied"; NULL for none). index_file.c. */
harmonia_status hm_verify_loaded(harmonia_tree *tree, const char *consequence);

#endif /* HARMONIA_TREE_INTERNAL_H */
