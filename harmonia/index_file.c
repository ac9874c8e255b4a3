/* index_file.c — the index file: harmonia_save (an atomic write of the format in index_file.h),
 * harmonia_load (validate every header field, map the file read-only, verify the checksums and
 * run the integrity checker) and harmonia_load_config_init. The tree layout and its checker are
 * key_region/'s; the handle's life cycle is tree.c's. */
#include "harmonia/index_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "harmonia/safe_file.h"
#include "harmonia/tree_internal.h"
#include "key_region/key_region.h"

/* Bytes hashed or written per step: bounds each write() call (Linux moves at most ~2 GiB per
 * call) and sets the granularity of the load progress reports. */
#define IX_CHUNK_BYTES ((uint64_t)256 << 20)

/* ------------------------------------------------------------------------------------------- */
/* Little-endian fields and checked arithmetic                                                 */
/* ------------------------------------------------------------------------------------------- */

/* The sections are the in-memory arrays byte for byte, so the host must be little-endian like the
 * format. Header fields are encoded byte by byte and would not need it. */
static bool ix_host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static void ix_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void ix_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t ix_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t ix_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* a + b and a * b into *out; false on uint64 overflow. */
static bool ix_add(uint64_t a, uint64_t b, uint64_t *out)
{
    *out = a + b;
    return *out >= a;
}

static bool ix_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* v rounded up to a multiple of IX_ALIGN; false on overflow. */
static bool ix_align_up(uint64_t v, uint64_t *out)
{
    if (!ix_add(v, IX_ALIGN - 1, out))
        return false;
    *out &= ~(uint64_t)(IX_ALIGN - 1);
    return true;
}

static bool ix_is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* ------------------------------------------------------------------------------------------- */
/* The header in memory                                                                        */
/* ------------------------------------------------------------------------------------------- */

typedef struct ix_section {
    uint32_t id;
    uint32_t reserved;
    uint64_t offset;
    uint64_t size;
    uint64_t checksum;
} ix_section;

typedef struct ix_header {
    uint32_t format_version;
    uint32_t header_bytes;
    uint64_t file_bytes;
    uint32_t key_bits, fanout, leaf_size, height;
    uint64_t n_keys, n_internal, n_leaves, n_nodes;
    uint64_t level_start[IX_LEVEL_ENTRIES];
    uint64_t tree_version;
    uint32_t ntg_group_size;
    uint32_t flags;
    uint32_t section_count;
    uint32_t reserved;
    ix_section sections[IX_SECTION_COUNT];
    uint64_t header_checksum;
} ix_header;

/* Where the counts say each section lies (the PLACEMENT of index_file.h). */
typedef struct ix_layout {
    uint64_t offset[IX_SECTION_COUNT];
    uint64_t size[IX_SECTION_COUNT];
    uint64_t file_bytes;
} ix_layout;

const char *ix_section_name(uint32_t id)
{
    switch (id) {
    case IX_SECTION_KEY_REGION: return "key region";
    case IX_SECTION_LEAF_VALUES: return "leaf values";
    case IX_SECTION_FIRST_CHILD: return "first child";
    case IX_SECTION_LEAF_RANK: return "leaf rank";
    default: return "unknown";
    }
}

uint64_t ix_header_checksum(const unsigned char *header)
{
    return XXH3_64bits(header, IX_OFF_HEADER_CHECKSUM);
}

static void ix_encode_header(const ix_header *h, unsigned char *buf)
{
    memset(buf, 0, IX_HEADER_BYTES);
    memcpy(buf + IX_OFF_MAGIC, IX_MAGIC, IX_MAGIC_BYTES);
    ix_put_u32(buf + IX_OFF_FORMAT_VERSION, h->format_version);
    ix_put_u32(buf + IX_OFF_HEADER_BYTES, h->header_bytes);
    ix_put_u64(buf + IX_OFF_FILE_BYTES, h->file_bytes);
    ix_put_u32(buf + IX_OFF_KEY_BITS, h->key_bits);
    ix_put_u32(buf + IX_OFF_FANOUT, h->fanout);
    ix_put_u32(buf + IX_OFF_LEAF_SIZE, h->leaf_size);
    ix_put_u32(buf + IX_OFF_HEIGHT, h->height);
    ix_put_u64(buf + IX_OFF_N_KEYS, h->n_keys);
    ix_put_u64(buf + IX_OFF_N_INTERNAL, h->n_internal);
    ix_put_u64(buf + IX_OFF_N_LEAVES, h->n_leaves);
    ix_put_u64(buf + IX_OFF_N_NODES, h->n_nodes);
    for (unsigned l = 0; l < IX_LEVEL_ENTRIES; l++)
        ix_put_u64(buf + IX_OFF_LEVEL_START + 8 * l, h->level_start[l]);
    ix_put_u64(buf + IX_OFF_TREE_VERSION, h->tree_version);
    ix_put_u32(buf + IX_OFF_NTG_GROUP_SIZE, h->ntg_group_size);
    ix_put_u32(buf + IX_OFF_FLAGS, h->flags);
    ix_put_u32(buf + IX_OFF_SECTION_COUNT, h->section_count);
    ix_put_u32(buf + IX_OFF_RESERVED, h->reserved);
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        unsigned char *e = buf + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * i;
        ix_put_u32(e + IX_SEC_OFF_ID, h->sections[i].id);
        ix_put_u32(e + IX_SEC_OFF_RESERVED, h->sections[i].reserved);
        ix_put_u64(e + IX_SEC_OFF_OFFSET, h->sections[i].offset);
        ix_put_u64(e + IX_SEC_OFF_SIZE, h->sections[i].size);
        ix_put_u64(e + IX_SEC_OFF_CHECKSUM, h->sections[i].checksum);
    }
    ix_put_u64(buf + IX_OFF_HEADER_CHECKSUM, ix_header_checksum(buf));
}

static void ix_decode_header(const unsigned char *buf, ix_header *h)
{
    memset(h, 0, sizeof *h);
    h->format_version = ix_get_u32(buf + IX_OFF_FORMAT_VERSION);
    h->header_bytes = ix_get_u32(buf + IX_OFF_HEADER_BYTES);
    h->file_bytes = ix_get_u64(buf + IX_OFF_FILE_BYTES);
    h->key_bits = ix_get_u32(buf + IX_OFF_KEY_BITS);
    h->fanout = ix_get_u32(buf + IX_OFF_FANOUT);
    h->leaf_size = ix_get_u32(buf + IX_OFF_LEAF_SIZE);
    h->height = ix_get_u32(buf + IX_OFF_HEIGHT);
    h->n_keys = ix_get_u64(buf + IX_OFF_N_KEYS);
    h->n_internal = ix_get_u64(buf + IX_OFF_N_INTERNAL);
    h->n_leaves = ix_get_u64(buf + IX_OFF_N_LEAVES);
    h->n_nodes = ix_get_u64(buf + IX_OFF_N_NODES);
    for (unsigned l = 0; l < IX_LEVEL_ENTRIES; l++)
        h->level_start[l] = ix_get_u64(buf + IX_OFF_LEVEL_START + 8 * l);
    h->tree_version = ix_get_u64(buf + IX_OFF_TREE_VERSION);
    h->ntg_group_size = ix_get_u32(buf + IX_OFF_NTG_GROUP_SIZE);
    h->flags = ix_get_u32(buf + IX_OFF_FLAGS);
    h->section_count = ix_get_u32(buf + IX_OFF_SECTION_COUNT);
    h->reserved = ix_get_u32(buf + IX_OFF_RESERVED);
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        const unsigned char *e = buf + IX_OFF_SECTIONS + IX_SECTION_ENTRY_BYTES * i;
        h->sections[i].id = ix_get_u32(e + IX_SEC_OFF_ID);
        h->sections[i].reserved = ix_get_u32(e + IX_SEC_OFF_RESERVED);
        h->sections[i].offset = ix_get_u64(e + IX_SEC_OFF_OFFSET);
        h->sections[i].size = ix_get_u64(e + IX_SEC_OFF_SIZE);
        h->sections[i].checksum = ix_get_u64(e + IX_SEC_OFF_CHECKSUM);
    }
    h->header_checksum = ix_get_u64(buf + IX_OFF_HEADER_CHECKSUM);
}

/* ------------------------------------------------------------------------------------------- */
/* Validation shared by save and load                                                          */
/* ------------------------------------------------------------------------------------------- */

/* Checks the shape fields of a header (step 4 of index_file.h): widths, node sizes, height,
 * counts, level_start, NTG choice, flags and reserved fields. Writes the broken rule to why and
 * returns CORRUPT or UNSUPPORTED; OK when all hold. */
static harmonia_status ix_check_shape(const ix_header *h, char *why, size_t why_size)
{
    if (h->key_bits != 32 && h->key_bits != 64) {
        snprintf(why, why_size, "key width %" PRIu32 " bits is not supported (32 or 64)",
                 h->key_bits);
        return HARMONIA_ERR_UNSUPPORTED;
    }
    if (h->flags != 0) {
        snprintf(why, why_size, "unknown flags 0x%" PRIx32 " (format version %u defines none)",
                 h->flags, IX_FORMAT_VERSION);
        return HARMONIA_ERR_UNSUPPORTED;
    }
    if (!kr_valid_node_size(h->fanout)) {
        snprintf(why, why_size, "fanout F = %" PRIu32 " is not a power of two in [%d, %d]",
                 h->fanout, KR_MIN_NODE, KR_MAX_NODE);
        return HARMONIA_ERR_CORRUPT;
    }
    if (!kr_valid_node_size(h->leaf_size)) {
        snprintf(why, why_size, "leaf size L = %" PRIu32 " is not a power of two in [%d, %d]",
                 h->leaf_size, KR_MIN_NODE, KR_MAX_NODE);
        return HARMONIA_ERR_CORRUPT;
    }
    if (h->height < 1 || h->height > HARMONIA_MAX_LEVELS) {
        snprintf(why, why_size, "height %" PRIu32 " is not in [1, %d]", h->height,
                 HARMONIA_MAX_LEVELS);
        return HARMONIA_ERR_CORRUPT;
    }
    if (h->n_leaves < 1) {
        snprintf(why, why_size, "the tree has no leaf (n_leaves = 0)");
        return HARMONIA_ERR_CORRUPT;
    }
    uint64_t n_nodes;
    if (!ix_add(h->n_internal, h->n_leaves, &n_nodes) || n_nodes != h->n_nodes) {
        snprintf(why, why_size,
                 "n_nodes = %" PRIu64 " is not n_internal + n_leaves = %" PRIu64 " + %" PRIu64,
                 h->n_nodes, h->n_internal, h->n_leaves);
        return HARMONIA_ERR_CORRUPT;
    }
    if (h->n_nodes >= ((uint64_t)1 << 32)) {
        snprintf(why, why_size, "n_nodes = %" PRIu64 " is not below 2^32", h->n_nodes);
        return HARMONIA_ERR_CORRUPT;
    }
    uint64_t capacity = h->n_leaves * h->leaf_size; /* < 2^32 * 2^7: no overflow */
    if (h->n_keys > capacity) {
        snprintf(why, why_size,
                 "n_keys = %" PRIu64 " exceeds the %" PRIu64 " leaf slots (%" PRIu64
                 " leaves of %" PRIu32 ")",
                 h->n_keys, capacity, h->n_leaves, h->leaf_size);
        return HARMONIA_ERR_CORRUPT;
    }
    const uint64_t *ls = h->level_start;
    if (ls[0] != 0 || ls[1] != 1) {
        snprintf(why, why_size,
                 "level_start[0] = %" PRIu64 " and level_start[1] = %" PRIu64
                 ": the root level must be node 0 alone",
                 ls[0], ls[1]);
        return HARMONIA_ERR_CORRUPT;
    }
    for (uint32_t l = 0; l < h->height; l++) {
        if (ls[l + 1] <= ls[l]) {
            snprintf(why, why_size,
                     "level_start is not increasing: level_start[%" PRIu32 "] = %" PRIu64
                     ", level_start[%" PRIu32 "] = %" PRIu64,
                     l, ls[l], l + 1, ls[l + 1]);
            return HARMONIA_ERR_CORRUPT;
        }
    }
    if (ls[h->height] != h->n_nodes || ls[h->height - 1] != h->n_internal) {
        snprintf(why, why_size,
                 "level_start[%" PRIu32 "] = %" PRIu64 " and level_start[%" PRIu32 "] = %" PRIu64
                 " do not match n_internal = %" PRIu64 " and n_nodes = %" PRIu64,
                 h->height - 1, ls[h->height - 1], h->height, ls[h->height], h->n_internal,
                 h->n_nodes);
        return HARMONIA_ERR_CORRUPT;
    }
    for (uint32_t l = h->height + 1; l < IX_LEVEL_ENTRIES; l++) {
        if (ls[l] != 0) {
            snprintf(why, why_size,
                     "level_start[%" PRIu32 "] = %" PRIu64 " is not 0 beyond the height %" PRIu32,
                     l, ls[l], h->height);
            return HARMONIA_ERR_CORRUPT;
        }
    }
    if (h->ntg_group_size != 0 && (!ix_is_power_of_two(h->ntg_group_size) || h->ntg_group_size > 32 ||
                                   h->ntg_group_size > h->fanout)) {
        snprintf(why, why_size,
                 "NTG group size %" PRIu32 " is neither 0 nor a power of two up to 32 and the fanout %" PRIu32,
                 h->ntg_group_size, h->fanout);
        return HARMONIA_ERR_CORRUPT;
    }
    if (h->section_count != IX_SECTION_COUNT || h->reserved != 0) {
        snprintf(why, why_size, "section count %" PRIu32 " (expected %u) or reserved field 0x%" PRIx32
                 " (expected 0) is wrong",
                 h->section_count, IX_SECTION_COUNT, h->reserved);
        return HARMONIA_ERR_CORRUPT;
    }
    return HARMONIA_OK;
}

/* The sizes and placement of the sections implied by a header whose shape passed
 * ix_check_shape. False on overflow (impossible after ix_check_shape; checked anyway). */
static bool ix_compute_layout(const ix_header *h, ix_layout *layout)
{
    uint64_t key_bytes = h->key_bits / 8, slots_internal, slots_leaf, slots, entries;
    bool ok = ix_mul(h->n_internal, h->fanout, &slots_internal) &&
              ix_mul(h->n_leaves, h->leaf_size, &slots_leaf) &&
              ix_add(slots_internal, slots_leaf, &slots) &&
              ix_mul(slots, key_bytes, &layout->size[0]) &&
              ix_mul(slots_leaf, key_bytes, &layout->size[1]) &&
              ix_add(h->n_internal, 1, &entries) && ix_mul(entries, 4, &layout->size[2]) &&
              ix_add(h->n_leaves, 1, &entries) && ix_mul(entries, 8, &layout->size[3]);
    uint64_t position = IX_ALIGN;
    for (unsigned i = 0; ok && i < IX_SECTION_COUNT; i++) {
        layout->offset[i] = position;
        uint64_t end;
        ok = ix_add(position, layout->size[i], &end) && ix_align_up(end, &position);
    }
    layout->file_bytes = position;
    return ok;
}

/* ------------------------------------------------------------------------------------------- */
/* Checksums                                                                                   */
/* ------------------------------------------------------------------------------------------- */

typedef struct ix_progress {
    harmonia_progress_fn fn;
    void *arg;
    const char *phase;
    uint64_t done, total;
} ix_progress;

static void ix_progress_report(ix_progress *p)
{
    if (p && p->fn)
        p->fn(p->arg, p->phase, p->total ? (double)p->done / (double)p->total : 1.0);
}

/* XXH3_64bits of size bytes, in chunks so that progress can be reported; same value as the
 * one-shot call. false when the hash state cannot be allocated. */
static bool ix_checksum(const void *data, uint64_t size, ix_progress *progress, uint64_t *out)
{
    if (size <= IX_CHUNK_BYTES || progress == NULL || progress->fn == NULL) {
        *out = XXH3_64bits(data, (size_t)size);
        if (progress) {
            progress->done += size;
            ix_progress_report(progress);
        }
        return true;
    }
    XXH3_state_t *state = XXH3_createState();
    if (state == NULL)
        return false;
    XXH3_64bits_reset(state);
    const unsigned char *bytes = data;
    for (uint64_t at = 0; at < size; at += IX_CHUNK_BYTES) {
        uint64_t n = size - at < IX_CHUNK_BYTES ? size - at : IX_CHUNK_BYTES;
        XXH3_64bits_update(state, bytes + at, (size_t)n);
        progress->done += n;
        ix_progress_report(progress);
    }
    *out = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return true;
}

/* ------------------------------------------------------------------------------------------- */
/* Saving                                                                                      */
/* ------------------------------------------------------------------------------------------- */

static const unsigned char ix_zero_page[IX_ALIGN];

static bool ix_write_zeros(int fd, uint64_t n)
{
    while (n > 0) {
        uint64_t step = n < IX_ALIGN ? n : IX_ALIGN;
        if (!hm_write_all(fd, ix_zero_page, step))
            return false;
        n -= step;
    }
    return true;
}

/* The tree's header (in h) from its layout; shared by the save and the deferred verification. */
static void ix_header_of_tree(const harmonia_tree *tree, ix_header *h)
{
    const kr_tree *kr = &tree->kr;
    memset(h, 0, sizeof *h);
    h->format_version = IX_FORMAT_VERSION;
    h->header_bytes = IX_HEADER_BYTES;
    h->key_bits = kr->key_bits;
    h->fanout = kr->fanout;
    h->leaf_size = kr->leaf_size;
    h->height = kr->height;
    h->n_keys = kr->n_keys;
    h->n_internal = kr->n_internal;
    h->n_leaves = kr->n_leaves;
    h->n_nodes = kr->n_nodes;
    for (unsigned l = 0; l < IX_LEVEL_ENTRIES; l++)
        h->level_start[l] = l <= kr->height ? kr->level_start[l] : 0;
    h->tree_version = tree->version;
    h->ntg_group_size = tree->ntg_group_size;
    h->section_count = IX_SECTION_COUNT;
}

/* realpath(path), or a copy of path when it cannot be resolved; NULL only without memory. */
static char *ix_canonical(const char *path)
{
    char *real = realpath(path, NULL);
    return real != NULL ? real : strdup(path);
}

/* The file part of harmonia_save: lock the file being replaced (unless the tree holds its lock),
 * check that it is the one the tree was loaded from or last saved to, write the image through
 * hm_output (safe_file.h) and record the new file as the tree's source (moving the tree's lock
 * to it when it held the old file's). */
static harmonia_status ix_write_file(harmonia_tree *tree, const char *path,
                                     const unsigned char *header, const ix_layout *layout,
                                     const void *const *data)
{
    char why[PATH_MAX + 512];
    char *real = NULL;
    bool exists = false;
    struct stat st;
    harmonia_status status = hm_resolve_output(path, &real, &exists, &st, why, sizeof why);
    if (status != HARMONIA_OK)
        return hm_fail(tree, status, "%s", why);

    int own_lock = -1; /* the lock this save takes on the file it replaces */
    bool held = false; /* the tree's own lock is on that file */
    if (exists && tree->lock_fd >= 0) {
        struct stat locked;
        held = fstat(tree->lock_fd, &locked) == 0 && locked.st_dev == st.st_dev &&
               locked.st_ino == st.st_ino;
    }
    if (exists && !held) {
        status = hm_lock_existing(path, false, &own_lock, &st, why, sizeof why);
        if (status != HARMONIA_OK) {
            free(real);
            return hm_fail(tree, status, "%s", why);
        }
        exists = own_lock >= 0;
    }
    /* the file replaced must be the one the tree came from, unchanged */
    if (exists && tree->source_path != NULL) {
        hm_file_id now;
        hm_file_id_of(&st, &now);
        char *canonical = ix_canonical(real);
        bool same_name = canonical != NULL && strcmp(canonical, tree->source_path) == 0;
        free(canonical);
        const char *problem = NULL;
        if (hm_file_id_same_file(&now, &tree->source_id)) {
            if (!hm_file_id_equal(&now, &tree->source_id))
                problem = "was changed since the tree was loaded from it (its size or modification "
                          "time differ): another process wrote it";
        } else if (same_name) {
            problem = "was replaced by another file since the tree was loaded from it (another "
                      "process saved it)";
        }
        if (problem != NULL) {
            if (own_lock >= 0)
                close(own_lock);
            free(real);
            return hm_fail(tree, HARMONIA_ERR_CONFLICT,
                           "%s %s; nothing was written (load it again and repeat the change)",
                           path, problem);
        }
    }

    hm_output out;
    status = hm_output_open(&out, path, why, sizeof why);
    if (status != HARMONIA_OK) {
        if (own_lock >= 0)
            close(own_lock);
        free(real);
        return hm_fail(tree, status, "%s", why);
    }
    out.check_unchanged = true;
    bool ok = hm_write_all(out.fd, header, IX_HEADER_BYTES) &&
              ix_write_zeros(out.fd, IX_ALIGN - IX_HEADER_BYTES);
    for (unsigned i = 0; ok && i < IX_SECTION_COUNT; i++) {
        uint64_t next = i + 1 < IX_SECTION_COUNT ? layout->offset[i + 1] : layout->file_bytes;
        ok = hm_write_all(out.fd, data[i], layout->size[i]) &&
             ix_write_zeros(out.fd, next - layout->offset[i] - layout->size[i]);
    }
    if (!ok) {
        int saved = errno;
        status = hm_fail(tree, HARMONIA_ERR_IO,
                         "%s: cannot save (writing the temporary file beside it failed): %s; %s is "
                         "unchanged",
                         path, strerror(saved), path);
        hm_output_abort(&out);
        if (own_lock >= 0)
            close(own_lock);
        free(real);
        return status;
    }
    status = hm_output_commit(&out, true, why, sizeof why);
    if (status != HARMONIA_OK)
        hm_fail(tree, status, "%s", why);
    if (out.fd >= 0) { /* renamed into place (even when only the folder sync failed) */
        struct stat written;
        if (fstat(out.fd, &written) == 0) {
            char *canonical = ix_canonical(real);
            if (canonical != NULL) {
                free(tree->source_path);
                tree->source_path = canonical;
                hm_file_id_of(&written, &tree->source_id);
            }
        }
        if (held) { /* the tree's lock moves to the new file (locked since its creation) */
            close(tree->lock_fd);
            tree->lock_fd = out.fd;
        } else {
            close(out.fd);
        }
    }
    if (own_lock >= 0)
        close(own_lock);
    free(real);
    return status;
}

harmonia_status hm_verify_loaded(harmonia_tree *tree, const char *consequence)
{
    if (!tree->unverified)
        return HARMONIA_OK;
    const char *source = tree->source_path != NULL ? tree->source_path : "the index file";
    const char *sep = consequence != NULL ? "; " : "";
    if (consequence == NULL)
        consequence = "";
    ix_header h;
    ix_layout layout;
    ix_header_of_tree(tree, &h);
    if (tree->mapping == NULL || !ix_compute_layout(&h, &layout))
        return hm_fail(tree, HARMONIA_ERR_CORRUPT,
                       "%s: loaded without verification and can no longer be verified%s%s", source,
                       sep, consequence);
    const kr_tree *kr = &tree->kr;
    const void *data[IX_SECTION_COUNT] = {kr->keys, kr->leaf_values, kr->first_child, kr->leaf_rank};
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        uint64_t computed;
        if (!ix_checksum(data[i], layout.size[i], NULL, &computed))
            return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "%s: out of memory%s%s", source, sep,
                           consequence);
        if (computed != tree->loaded_checksums[i])
            return hm_fail(tree, HARMONIA_ERR_CORRUPT,
                           "%s: loaded without verification, and the file is damaged: section '%s' "
                           "checksum mismatch (stored 0x%016" PRIx64 ", computed 0x%016" PRIx64 ")%s%s",
                           source, ix_section_name(i + 1), tree->loaded_checksums[i], computed, sep,
                           consequence);
    }
    kr_error err;
    err.message[0] = '\0';
    if (kr_check_tree(kr, &err) != HARMONIA_OK)
        return hm_fail(tree, HARMONIA_ERR_CORRUPT,
                       "%s: loaded without verification, and the tree fails the integrity check: "
                       "%s%s%s",
                       source, err.message[0] ? err.message : "(no message)", sep, consequence);
    tree->unverified = false;
    return HARMONIA_OK;
}

harmonia_status harmonia_save(harmonia_tree *tree, const char *path)
{
    if (tree == NULL)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_save: tree is NULL");
    if (path == NULL || path[0] == '\0')
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_save: path is NULL or empty");
    if (!ix_host_is_little_endian())
        return hm_fail(tree, HARMONIA_ERR_UNSUPPORTED,
                       "%s: index files are little-endian and this host is not", path);
    /* fresh checksums over damage would hide it: an unverified tree is verified first */
    char what[PATH_MAX + 32];
    snprintf(what, sizeof what, "not saved to %s", path);
    harmonia_status verified = hm_verify_loaded(tree, what);
    if (verified != HARMONIA_OK)
        return verified;
    const kr_tree *kr = &tree->kr;
    ix_header h;
    ix_header_of_tree(tree, &h);

    /* A tree this library would refuse to load is not written. */
    char why[320];
    ix_layout layout;
    if (ix_check_shape(&h, why, sizeof why) != HARMONIA_OK)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: cannot save: the tree's shape is invalid: %s",
                       path, why);
    if (!ix_compute_layout(&h, &layout))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: cannot save: the tree's sizes overflow",
                       path);
    const void *data[IX_SECTION_COUNT] = {kr->keys, kr->leaf_values, kr->first_child,
                                          kr->leaf_rank};
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        if (data[i] == NULL)
            return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: cannot save: the tree has no %s array",
                           path, ix_section_name(i + 1));
        h.sections[i].id = i + 1;
        h.sections[i].offset = layout.offset[i];
        h.sections[i].size = layout.size[i];
        if (!ix_checksum(data[i], layout.size[i], NULL, &h.sections[i].checksum))
            return hm_fail(tree, HARMONIA_ERR_NO_MEMORY, "%s: cannot save: out of memory", path);
    }
    h.file_bytes = layout.file_bytes;
    unsigned char header[IX_HEADER_BYTES];
    ix_encode_header(&h, header);

    return ix_write_file(tree, path, header, &layout, data);
}

/* ------------------------------------------------------------------------------------------- */
/* Loading                                                                                     */
/* ------------------------------------------------------------------------------------------- */

static harmonia_load_config load_defaults(void)
{
    harmonia_load_config d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.verify = true;
    d.lock = HARMONIA_LOCK_NONE;
    d.device = HARMONIA_DEVICE_CURRENT;
    return d;
}

void harmonia_load_config_init_sized(harmonia_load_config *config, size_t size)
{
    if (config == NULL)
        return;
    const harmonia_load_config d = load_defaults();
    hm_config_init(config, size, &d, sizeof d);
}

/* Reads up to n bytes at offset 0, retrying short reads and EINTR. Returns the bytes read, or -1
 * with errno set. */
static ssize_t ix_read_prefix(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The first non-zero byte in [begin, end) of the mapping, or end. */
static uint64_t ix_first_nonzero(const unsigned char *map, uint64_t begin, uint64_t end)
{
    for (uint64_t at = begin; at < end; at++)
        if (map[at] != 0)
            return at;
    return end;
}

/* Steps 2-6 of the loader on a header read from a file of file_size bytes (at least
 * IX_HEADER_BYTES): fills *h and *layout or fails with the path in the message. */
static harmonia_status ix_validate_header(const char *path, const unsigned char *buf,
                                         uint64_t file_size, ix_header *h, ix_layout *layout)
{
    ix_decode_header(buf, h);
    if (h->header_bytes != IX_HEADER_BYTES)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                       "%s: header size %" PRIu32 ", format version %u has %d-byte headers", path,
                       h->header_bytes, IX_FORMAT_VERSION, IX_HEADER_BYTES);
    uint64_t computed = ix_header_checksum(buf);
    if (computed != h->header_checksum)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                       "%s: header checksum mismatch (stored 0x%016" PRIx64 ", computed 0x%016" PRIx64
                       ")",
                       path, h->header_checksum, computed);
    char why[320];
    harmonia_status status = ix_check_shape(h, why, sizeof why);
    if (status != HARMONIA_OK)
        return hm_fail(NULL, status, "%s: %s", path, why);
    if (!ix_compute_layout(h, layout))
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT, "%s: the section sizes overflow", path);

    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        const ix_section *s = &h->sections[i];
        const char *name = ix_section_name(i + 1);
        uint64_t end;
        if (s->id != i + 1 || s->reserved != 0)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section table entry %u has id %" PRIu32 " and reserved 0x%" PRIx32
                           ", expected id %u ('%s') and 0",
                           path, i, s->id, s->reserved, i + 1, name);
        if (s->offset % IX_ALIGN != 0)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section '%s' offset %" PRIu64 " is not a multiple of %u", path,
                           name, s->offset, IX_ALIGN);
        if (!ix_add(s->offset, s->size, &end))
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section '%s' offset %" PRIu64 " + size %" PRIu64
                           " overflows 64 bits",
                           path, name, s->offset, s->size);
        if (s->size != layout->size[i])
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section '%s' holds %" PRIu64 " bytes but the counts imply %" PRIu64,
                           path, name, s->size, layout->size[i]);
        if (end > file_size)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: file truncated: section '%s' ends at byte %" PRIu64
                           " but the file has %" PRIu64 " bytes",
                           path, name, end, file_size);
        if (s->offset != layout->offset[i])
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section '%s' starts at byte %" PRIu64 ", expected %" PRIu64
                           " (each section starts at the first %u-byte boundary after the previous)",
                           path, name, s->offset, layout->offset[i], IX_ALIGN);
    }
    if (h->file_bytes != layout->file_bytes)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                       "%s: the header gives the file size as %" PRIu64
                       " bytes but its sections end at %" PRIu64,
                       path, h->file_bytes, layout->file_bytes);
    if (file_size < h->file_bytes)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                       "%s: file truncated: %" PRIu64 " bytes, the header says %" PRIu64, path,
                       file_size, h->file_bytes);
    if (file_size > h->file_bytes)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                       "%s: %" PRIu64 " unexpected bytes after the end of the index (byte %" PRIu64
                       ")",
                       path, file_size - h->file_bytes, h->file_bytes);
    return HARMONIA_OK;
}

/* Steps 7 and the verification on the mapped file; fills *kr with arrays in the mapping. */
static harmonia_status ix_validate_mapping(const char *path, const unsigned char *map,
                                           const ix_header *h, const ix_layout *layout,
                                           const harmonia_load_config *config, kr_tree *kr)
{
    uint64_t gap_begin = IX_HEADER_BYTES;
    for (unsigned i = 0; i <= IX_SECTION_COUNT; i++) {
        uint64_t gap_end = i < IX_SECTION_COUNT ? layout->offset[i] : layout->file_bytes;
        uint64_t at = ix_first_nonzero(map, gap_begin, gap_end);
        if (at != gap_end)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: byte %" PRIu64 " is 0x%02x in the padding %s, where only zeros "
                           "belong",
                           path, at, map[at],
                           i == 0 ? "after the header"
                                  : i == 1 ? "after section 'key region'"
                                  : i == 2 ? "after section 'leaf values'"
                                  : i == 3 ? "after section 'first child'"
                                           : "after section 'leaf rank'");
        if (i < IX_SECTION_COUNT)
            gap_begin = layout->offset[i] + layout->size[i];
    }

    memset(kr, 0, sizeof *kr);
    kr->key_bits = h->key_bits;
    kr->fanout = h->fanout;
    kr->leaf_size = h->leaf_size;
    kr->height = h->height;
    kr->n_keys = h->n_keys;
    kr->n_internal = h->n_internal;
    kr->n_leaves = h->n_leaves;
    kr->n_nodes = h->n_nodes;
    for (unsigned l = 0; l < IX_LEVEL_ENTRIES; l++)
        kr->level_start[l] = h->level_start[l];
    /* The mapping is PROT_READ: the arrays are read-only although kr_tree's pointers are not
     * const (a write faults; the updater copies before it changes anything). */
    kr->keys = (void *)(map + layout->offset[0]);
    kr->leaf_values = (void *)(map + layout->offset[1]);
    kr->first_child = (uint32_t *)(void *)(map + layout->offset[2]);
    kr->leaf_rank = (uint64_t *)(void *)(map + layout->offset[3]);

    kr_error err;
    err.message[0] = '\0';
    if (!config->verify) {
        /* the O(nodes) structure checks run whatever the caller asked: they keep every reader
         * inside the arrays (key_region.h, kr_check_structure) */
        if (kr_check_structure(kr, &err) != HARMONIA_OK)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: integrity check failed: %s (the structure checks run even without "
                           "verification)",
                           path, err.message[0] ? err.message : "(no message)");
        return HARMONIA_OK;
    }
    ix_progress progress = {config->progress, config->progress_arg, "load: checksums", 0, 0};
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++)
        progress.total += layout->size[i];
    ix_progress_report(&progress);
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++) {
        uint64_t computed;
        if (!ix_checksum(map + layout->offset[i], layout->size[i], &progress, &computed))
            return hm_fail(NULL, HARMONIA_ERR_NO_MEMORY, "%s: out of memory", path);
        if (computed != h->sections[i].checksum)
            return hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                           "%s: section '%s' checksum mismatch (stored 0x%016" PRIx64
                           ", computed 0x%016" PRIx64 ")",
                           path, ix_section_name(i + 1), h->sections[i].checksum, computed);
    }
    ix_progress check = {config->progress, config->progress_arg, "load: integrity check", 0, 1};
    ix_progress_report(&check);
    harmonia_status status = kr_check_tree(kr, &err);
    if (status != HARMONIA_OK)
        return hm_fail(NULL, HARMONIA_ERR_CORRUPT, "%s: integrity check failed: %s", path,
                       err.message[0] ? err.message : "(no message)");
    check.done = 1;
    ix_progress_report(&check);
    return HARMONIA_OK;
}

harmonia_status harmonia_load(const char *path, const harmonia_load_config *given,
                              harmonia_tree **tree_out)
{
    if (tree_out != NULL)
        *tree_out = NULL;
    if (path == NULL || tree_out == NULL)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_load: %s is NULL",
                       path == NULL ? "path" : "tree_out");
    harmonia_load_config own = load_defaults();
    if (given != NULL) {
        harmonia_status read = hm_config_read(NULL, "harmonia_load_config", &own, sizeof own, sizeof own, given);
        if (read != HARMONIA_OK)
            return read;
    }
    const harmonia_load_config *config = &own;
    if (!ix_host_is_little_endian())
        return hm_fail(NULL, HARMONIA_ERR_UNSUPPORTED,
                       "%s: index files are little-endian and this host is not", path);

    /* O_NONBLOCK: opening a FIFO must not hang; it is rejected below as not a regular file. */
    int fd = -1;
    if (config->lock != HARMONIA_LOCK_NONE) {
        /* the lock first, then the contents: what is read is what no other locker changes */
        char why[PATH_MAX + 256];
        struct stat locked;
        harmonia_status locking = hm_lock_existing(path, config->lock == HARMONIA_LOCK_WAIT, &fd,
                                                   &locked, why, sizeof why);
        if (locking != HARMONIA_OK)
            return hm_fail(NULL, locking, "%s", why);
        if (fd < 0)
            return hm_fail(NULL, HARMONIA_ERR_IO, "%s: cannot open: %s", path, strerror(ENOENT));
    } else {
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            return hm_fail(NULL, HARMONIA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int saved = errno;
        close(fd);
        return hm_fail(NULL, HARMONIA_ERR_IO, "%s: cannot stat: %s", path, strerror(saved));
    }
    harmonia_status status = HARMONIA_OK;
    if (S_ISDIR(st.st_mode))
        status = hm_fail(NULL, HARMONIA_ERR_IO, "%s: is a folder, not an index file", path);
    else if (!S_ISREG(st.st_mode))
        status = hm_fail(NULL, HARMONIA_ERR_IO, "%s: not a regular file", path);
    else if (st.st_size == 0)
        status = hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                         "%s: empty file (0 bytes), not a Harmonia index file", path);
    else if ((uint64_t)st.st_size > SIZE_MAX)
        status = hm_fail(NULL, HARMONIA_ERR_IO, "%s: %" PRIu64 " bytes do not fit in memory",
                         path, (uint64_t)st.st_size);
    if (status != HARMONIA_OK) {
        close(fd);
        return status;
    }
    uint64_t file_size = (uint64_t)st.st_size;

    /* Steps 1-6 on a copy of the header, before anything is mapped. */
    unsigned char header[IX_HEADER_BYTES];
    ssize_t got = ix_read_prefix(fd, header, IX_HEADER_BYTES);
    if (got < 0) {
        int saved = errno;
        close(fd);
        return hm_fail(NULL, HARMONIA_ERR_IO, "%s: cannot read: %s", path, strerror(saved));
    }
    size_t magic_bytes = (size_t)got < IX_MAGIC_BYTES ? (size_t)got : IX_MAGIC_BYTES;
    if (memcmp(header, IX_MAGIC, magic_bytes) != 0)
        status = hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                         "%s: not a Harmonia index file (the first bytes are not \"%s\")", path,
                         IX_MAGIC);
    else if ((size_t)got < IX_OFF_FORMAT_VERSION + 4)
        status = hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                         "%s: file truncated: %zd bytes, too short for the header", path, got);
    else if (ix_get_u32(header + IX_OFF_FORMAT_VERSION) != IX_FORMAT_VERSION)
        status = hm_fail(NULL, HARMONIA_ERR_UNSUPPORTED,
                         "%s: index file format version %" PRIu32
                         ", but this library reads version %u",
                         path, ix_get_u32(header + IX_OFF_FORMAT_VERSION), IX_FORMAT_VERSION);
    else if ((size_t)got < IX_HEADER_BYTES)
        status = hm_fail(NULL, HARMONIA_ERR_CORRUPT,
                         "%s: file truncated: %zd bytes, shorter than the %d-byte header", path,
                         got, IX_HEADER_BYTES);
    ix_header h;
    ix_layout layout;
    if (status == HARMONIA_OK)
        status = ix_validate_header(path, header, file_size, &h, &layout);
    if (status != HARMONIA_OK) {
        close(fd);
        return status;
    }

    void *map = mmap(NULL, (size_t)file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int saved = errno;
    if (map == MAP_FAILED) {
        close(fd);
        return hm_fail(NULL, saved == ENOMEM ? HARMONIA_ERR_NO_MEMORY : HARMONIA_ERR_IO,
                       "%s: cannot map %" PRIu64 " bytes: %s", path, file_size, strerror(saved));
    }
    /* The mapping may differ from the header read above if the file changed in between: check
     * that it still holds the same header, then use only what was validated. */
    kr_tree kr;
    if (memcmp(map, header, IX_HEADER_BYTES) != 0)
        status = hm_fail(NULL, HARMONIA_ERR_IO, "%s: the file changed while it was being loaded",
                         path);
    else
        status = ix_validate_mapping(path, map, &h, &layout, config, &kr);
    harmonia_tree *tree = NULL;
    char *source_path = NULL;
    if (status == HARMONIA_OK) {
        tree = hm_tree_new();
        source_path = ix_canonical(path);
        if (tree == NULL || source_path == NULL)
            status = hm_fail(NULL, HARMONIA_ERR_NO_MEMORY, "%s: out of memory", path);
        else if ((status = hm_set_placement(tree, config->device, config->allocator)) != HARMONIA_OK)
            hm_fail(NULL, status, "harmonia_load: %s", tree->last_error);
    }
    if (status != HARMONIA_OK) {
        if (tree != NULL)
            hm_tree_delete_handle(tree);
        free(source_path);
        munmap(map, (size_t)file_size);
        close(fd);
        return status;
    }
    tree->kr = kr;
    tree->version = h.tree_version;
    tree->ntg_group_size = h.ntg_group_size;
    tree->mapping = map;
    tree->mapping_bytes = (size_t)file_size;
    tree->source_path = source_path;
    hm_file_id_of(&st, &tree->source_id);
    tree->unverified = !config->verify;
    for (unsigned i = 0; i < IX_SECTION_COUNT; i++)
        tree->loaded_checksums[i] = h.sections[i].checksum;
    if (config->lock != HARMONIA_LOCK_NONE)
        tree->lock_fd = fd; /* the lock lives as long as the tree */
    else
        close(fd);
    *tree_out = tree;
    return HARMONIA_OK;
}
