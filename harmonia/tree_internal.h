/* tree_internal.h — the owning host object behind the public harmonia_tree handle, shared by the
 * front (tree.c), the index files (index_file.c) and the updater. Not part of the public API. */
#ifndef HARMONIA_TREE_INTERNAL_H
#define HARMONIA_TREE_INTERNAL_H

#include <stdarg.h>

#include "harmonia.h"
#include "harmonia/safe_file.h"
#include "key_region/key_region.h"

struct harmonia_tree {
    kr_tree kr;               /* the layout; its arrays are malloc'd or point into mapping */
    kr_tree spare;            /* the arrays of the layout before the last re-layout (malloc'd, or
                                 none), which the next re-layout writes into (cpu_update.h) */
    uint64_t version;         /* bumped by each applied update batch */
    uint32_t ntg_group_size;  /* stored NTG choice, 0 = none */
    int32_t constant_levels;  /* harmonia_set_constant_levels: -1 all that fit, else a level count */
    void *mapping;            /* the mapped index file when loaded, else NULL */
    size_t mapping_bytes;
    struct hm_gpu *gpu;       /* the device copy and its pipeline (gpu_tree.cu), NULL if none */
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

/* Allocates a zeroed tree handle with the default settings (NULL on allocation failure). */
harmonia_tree *hm_tree_new(void);

/* First-child entries the next upload keeps in __constant__ memory (whole levels plus the
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
