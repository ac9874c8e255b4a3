/* tree.c — the library's front: status strings and last-error messages, configuration defaults and
 * the reading of configs of any header version, the tree handle's life cycle (build, free), its
 * device and allocator, argument checking and backend choice for queries (synchronous and
 * asynchronous), updates, check and info. The layout and the engines live in their component
 * folders. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <omp.h>

#include "harmonia/gpu_engine.h"
#include "harmonia/gpu_policy.h"
#include "harmonia/tree_internal.h"
#include "cpu_update/cpu_update.h"
#include "prefix_sum/prefix_sum.h"

/* the top cut the kernels take as parameters (ntg.h) is the public header's budget */
_Static_assert(PS_TOP_MAX_ENTRIES == HARMONIA_CONSTANT_ENTRIES_MAX, "prefix_sum.h and harmonia.h disagree");

static _Thread_local char thread_last_error[512];

const char *harmonia_version(void)
{
    return HARMONIA_VERSION_STRING; /* the library's own build of include/harmonia_version.h */
}

const char *harmonia_strerror(harmonia_status status)
{
    switch (status) {
    case HARMONIA_OK: return "success";
    case HARMONIA_ERR_INVALID: return "invalid argument";
    case HARMONIA_ERR_NO_MEMORY: return "out of memory";
    case HARMONIA_ERR_IO: return "input/output error";
    case HARMONIA_ERR_CORRUPT: return "corrupt index or tree";
    case HARMONIA_ERR_UNSUPPORTED: return "unsupported format";
    case HARMONIA_ERR_DUPLICATE_KEY: return "duplicate key";
    case HARMONIA_ERR_UNSORTED: return "input not sorted";
    case HARMONIA_ERR_CAPACITY: return "tree too large";
    case HARMONIA_ERR_NO_DEVICE: return "no usable GPU";
    case HARMONIA_ERR_DEVICE: return "GPU error";
    case HARMONIA_ERR_DEVICE_MEMORY: return "out of GPU memory";
    case HARMONIA_ERR_KEY_EXISTS: return "key already present";
    case HARMONIA_ERR_KEY_MISSING: return "key not present";
    case HARMONIA_ERR_CONFLICT: return "index file in use or changed by another process";
    }
    return "unknown status";
}

const char *harmonia_last_error(const harmonia_tree *tree)
{
    return tree ? tree->last_error : thread_last_error;
}

harmonia_status hm_fail(harmonia_tree *tree, harmonia_status status, const char *fmt, ...)
{
    char *buffer = tree ? tree->last_error : thread_last_error;
    size_t size = tree ? sizeof tree->last_error : sizeof thread_last_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buffer, size, fmt, ap);
    va_end(ap);
    return status;
}

harmonia_tree *hm_tree_new(void)
{
    harmonia_tree *tree = calloc(1, sizeof(harmonia_tree));
    if (!tree)
        return NULL;
    int made = 0;
    if (pthread_mutex_init(&tree->gpu_lock, NULL) == 0 && ++made && pthread_mutex_init(&tree->version_lock, NULL) == 0 &&
        ++made && pthread_cond_init(&tree->drained, NULL) == 0 && ++made &&
        pthread_mutex_init(&tree->update_lock, NULL) == 0 && ++made && pthread_mutex_init(&tree->calls_lock, NULL) == 0)
        made = 5;
    if (made < 5) {
        if (made > 3)
            pthread_mutex_destroy(&tree->update_lock);
        if (made > 2)
            pthread_cond_destroy(&tree->drained);
        if (made > 1)
            pthread_mutex_destroy(&tree->version_lock);
        if (made > 0)
            pthread_mutex_destroy(&tree->gpu_lock);
        free(tree);
        return NULL;
    }
    tree->constant_levels = HARMONIA_CONSTANT_LEVELS_DEFAULT;
    tree->lock_fd = -1;
    tree->device = HARMONIA_DEVICE_CURRENT;
    return tree;
}

void hm_tree_delete_handle(harmonia_tree *tree)
{
    hm_gpu_forget(tree);
    pthread_mutex_destroy(&tree->calls_lock);
    pthread_mutex_destroy(&tree->update_lock);
    pthread_cond_destroy(&tree->drained);
    pthread_mutex_destroy(&tree->version_lock);
    pthread_mutex_destroy(&tree->gpu_lock);
    free(tree);
}

/* --- versions (tree_internal.h, VERSIONS) -------------------------------------------------------- */

/* What the spare holds once its readers are gone, when it is to be freed: taken under
 * version_lock, freed (or unmapped) after it is released. */
typedef struct spare_storage {
    kr_tree arrays;
    void *mapping;
    size_t mapping_bytes;
} spare_storage;

/* Under version_lock: takes the spare out of the tree when it is marked for discarding and no
 * reader of its version is left. */
static void take_discarded_spare(harmonia_tree *tree, spare_storage *out)
{
    memset(out, 0, sizeof *out);
    if (!tree->spare_discard || tree->pins[(tree->version + 1) & 1] != 0)
        return;
    if (tree->spare_mapping) { /* the arrays point into the mapping */
        out->mapping = tree->spare_mapping;
        out->mapping_bytes = tree->spare_mapping_bytes;
    } else {
        out->arrays = tree->spare;
    }
    memset(&tree->spare, 0, sizeof tree->spare);
    tree->spare_mapping = NULL;
    tree->spare_mapping_bytes = 0;
    tree->spare_discard = false;
    tree->spare_delta = false;
}

static void free_spare_storage(spare_storage *storage)
{
    if (storage->mapping)
        munmap(storage->mapping, storage->mapping_bytes);
    kr_tree_free_arrays(&storage->arrays);
}

unsigned hm_pin(harmonia_tree *tree, kr_tree *snapshot)
{
    pthread_mutex_lock(&tree->version_lock);
    const unsigned slot = (unsigned)(tree->version & 1);
    tree->pins[slot]++;
    *snapshot = tree->kr;
    pthread_mutex_unlock(&tree->version_lock);
    return slot;
}

void hm_unpin(harmonia_tree *tree, unsigned slot)
{
    spare_storage discarded;
    pthread_mutex_lock(&tree->version_lock);
    assert(tree->pins[slot] > 0);
    if (--tree->pins[slot] == 0)
        pthread_cond_broadcast(&tree->drained);
    take_discarded_spare(tree, &discarded); /* the last reader of a discarded version frees it */
    pthread_mutex_unlock(&tree->version_lock);
    free_spare_storage(&discarded);
}

/* The updater, before it writes into the spare: waits until no query reads the version the spare
 * holds (query calls that began before the last publish), then frees it if it was to be. */
static void wait_spare_drained(harmonia_tree *tree)
{
    spare_storage discarded;
    pthread_mutex_lock(&tree->version_lock);
    while (tree->pins[(tree->version + 1) & 1] != 0)
        pthread_cond_wait(&tree->drained, &tree->version_lock);
    take_discarded_spare(tree, &discarded);
    pthread_mutex_unlock(&tree->version_lock);
    free_spare_storage(&discarded);
}

/* --- configs of any header version ------------------------------------------------------------
 * A config begins with its size (set by the inline init function to the caller's sizeof). The
 * library reads the fields the caller's struct has over its own defaults: an older, smaller struct
 * gets the defaults of the fields added since; a newer, larger one is accepted when the fields this
 * library does not know are zero (their defaults), else UNSUPPORTED. Every config of this first
 * sized version (0.1) has all its fields, so a size below sizeof is not from an init function. */

harmonia_status hm_config_read(harmonia_tree *tree, const char *name, void *own, size_t own_bytes,
                               size_t oldest_bytes, const void *given)
{
    uint32_t size;
    memcpy(&size, given, sizeof size);
    if (size < oldest_bytes)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "the %s was not made by %s_init (its size field is %" PRIu32 ", this library takes %zu "
                       "or more)", name, name, size, oldest_bytes);
    for (size_t i = own_bytes; i < size; i++)
        if (((const unsigned char *)given)[i] != 0)
            return hm_fail(tree, HARMONIA_ERR_UNSUPPORTED,
                           "the %s comes from a newer header (%" PRIu32 " bytes) and sets options this "
                           "library (%s, %zu bytes) does not have", name, size, HARMONIA_VERSION_STRING, own_bytes);
    memcpy((char *)own + sizeof size, (const char *)given + sizeof size,
           (size < own_bytes ? size : own_bytes) - sizeof size);
    return HARMONIA_OK;
}

void hm_config_init(void *config, size_t size, const void *defaults, size_t own_bytes)
{
    if (size > own_bytes)
        memset((char *)config + own_bytes, 0, size - own_bytes);
    memcpy(config, defaults, size < own_bytes ? size : own_bytes);
    if (size >= sizeof(uint32_t)) {
        const uint32_t size32 = (uint32_t)size;
        memcpy(config, &size32, sizeof size32);
    }
}

static harmonia_query_config query_defaults(void)
{
    harmonia_query_config d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.backend = HARMONIA_BACKEND_AUTO;
    d.psa = -1;
    d.memory = HARMONIA_MEMORY_AUTO;
    return d;
}

void harmonia_query_config_init_sized(harmonia_query_config *config, size_t size)
{
    const harmonia_query_config d = query_defaults();
    hm_config_init(config, size, &d, sizeof d);
}

harmonia_status hm_query_config(harmonia_tree *tree, const harmonia_query_config *given,
                                harmonia_query_config *out)
{
    *out = query_defaults();
    if (!given)
        return HARMONIA_OK;
    return hm_config_read(tree, "harmonia_query_config", out, sizeof *out, sizeof *out, given);
}

/* --- the device and the allocator ---------------------------------------------------------------- */

harmonia_status hm_set_placement(harmonia_tree *tree, int device, const harmonia_allocator *allocator)
{
    if (device < HARMONIA_DEVICE_CURRENT)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "device %d: use a CUDA device id or HARMONIA_DEVICE_CURRENT (-1)",
                       device);
    harmonia_allocator chosen;
    memset(&chosen, 0, sizeof chosen);
    if (allocator) {
        if (allocator->size < sizeof chosen)
            return hm_fail(tree, HARMONIA_ERR_INVALID,
                           "the harmonia_allocator was not made by harmonia_allocator_init (size %" PRIu32 ")",
                           allocator->size);
        for (size_t i = sizeof chosen; i < allocator->size; i++)
            if (((const unsigned char *)allocator)[i] != 0)
                return hm_fail(tree, HARMONIA_ERR_UNSUPPORTED,
                               "the harmonia_allocator comes from a newer header and sets functions this library "
                               "does not have");
        memcpy(&chosen, allocator, sizeof chosen);
        if (!chosen.device_alloc != !chosen.device_free || !chosen.host_alloc != !chosen.host_free)
            return hm_fail(tree, HARMONIA_ERR_INVALID,
                           "the allocator gives only one function of a pair: set both device_alloc and "
                           "device_free (or neither), both host_alloc and host_free (or neither)");
    }
    const bool has = allocator && (chosen.device_alloc || chosen.host_alloc);
    const bool same = tree->device == device && tree->has_allocator == has &&
                      (!has || memcmp(&tree->allocator, &chosen, sizeof chosen) == 0);
    if (!same) {
        hm_gpu_release(tree); /* the next GPU call makes the copy where and how it is now asked */
        hm_gpu_forget(tree);  /* and its completion signals' words, from the new allocator */
    }
    tree->device = device;
    tree->has_allocator = has;
    tree->allocator = chosen;
    tree->allocator.size = sizeof chosen;
    return HARMONIA_OK;
}

harmonia_status harmonia_set_device(harmonia_tree *tree, int device, const harmonia_allocator *allocator)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_set_device: tree is NULL");
    return hm_set_placement(tree, device, allocator);
}

harmonia_status harmonia_device_bytes(const harmonia_tree *tree, uint64_t *bytes_out)
{
    if (!tree || !bytes_out)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_device_bytes: NULL tree or bytes_out");
    *bytes_out = hm_device_copy_bytes(&tree->kr);
    return HARMONIA_OK;
}

uint64_t hm_device_copy_bytes(const kr_tree *t)
{
    const uint64_t kb = t->key_bits / 8;
    return kr_key_slots(t) * kb + t->n_leaves * t->leaf_size * kb + (t->n_internal + 1) * sizeof(uint32_t) +
           (t->n_leaves + 1) * sizeof(uint64_t);
}

uint64_t hm_constant_entries(const harmonia_tree *tree, uint32_t *levels_out)
{
    const kr_tree *t = &tree->kr;
    if (tree->constant_levels < 0)
        return ps_top_entries(t->level_start, t->height, PS_TOP_MAX_ENTRIES, levels_out);
    /* the entries of the first constant_levels levels and the sentinel, when they fit */
    const uint32_t internal_levels = t->height > 0 ? t->height - 1 : 0;
    const uint32_t want = (uint32_t)tree->constant_levels < internal_levels ? (uint32_t)tree->constant_levels
                                                                          : internal_levels;
    const uint64_t cap = want == 0 ? 0 : t->level_start[want] + 1;
    return ps_top_entries(t->level_start, t->height, cap, levels_out);
}

harmonia_status harmonia_set_constant_levels(harmonia_tree *tree, int32_t levels)
{
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_set_constant_levels: tree is NULL");
    if (levels < HARMONIA_CONSTANT_LEVELS_ALL)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "constant levels must be -1 (all that fit) or a count of levels, not %" PRId32, levels);
    tree->constant_levels = levels;
    return HARMONIA_OK;
}

void hm_tree_release_storage(harmonia_tree *tree)
{
    if (tree->mapping) {
        munmap(tree->mapping, tree->mapping_bytes);
        tree->mapping = NULL;
        tree->mapping_bytes = 0;
        tree->kr.keys = tree->kr.leaf_values = NULL;
        tree->kr.first_child = NULL;
        tree->kr.leaf_rank = NULL;
    } else {
        kr_tree_free_arrays(&tree->kr);
    }
    if (tree->spare_mapping) {
        munmap(tree->spare_mapping, tree->spare_mapping_bytes);
        memset(&tree->spare, 0, sizeof tree->spare);
        tree->spare_mapping = NULL;
    }
    kr_tree_free_arrays(&tree->spare);
    free(tree->spare_dirty);
    tree->spare_dirty = NULL;
    tree->spare_n_dirty = 0;
    tree->spare_delta = tree->spare_discard = false;
}

void harmonia_free(harmonia_tree *tree)
{
    if (!tree)
        return;
    hm_gpu_release(tree);
    hm_tree_release_storage(tree);
    if (tree->lock_fd >= 0)
        close(tree->lock_fd); /* releases the index file's lock */
    free(tree->source_path);
    hm_tree_delete_handle(tree);
}

/* --- building --------------------------------------------------------------------------------- */

static harmonia_build_config build_defaults(void)
{
    harmonia_build_config d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.key_bits = 64;
    d.fanout = 0; /* HARMONIA_DEFAULT_FANOUT(key_bits), once the key width is known */
    d.leaf_size = HARMONIA_DEFAULT_LEAF_SIZE;
    d.leaf_fill = HARMONIA_DEFAULT_LEAF_FILL;
    d.duplicates = HARMONIA_DUPLICATES_REJECT;
    d.device = HARMONIA_DEVICE_CURRENT;
    return d;
}

void harmonia_build_config_init_sized(harmonia_build_config *config, size_t size)
{
    const harmonia_build_config d = build_defaults();
    hm_config_init(config, size, &d, sizeof d);
}

static harmonia_status build_tree(const harmonia_build_config *given, const void *keys, const void *values,
                                  uint64_t count, harmonia_tree **tree_out, bool device_call)
{
    if (!tree_out)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: tree_out is NULL");
    *tree_out = NULL;
    harmonia_build_config own = build_defaults();
    if (given) {
        harmonia_status st = hm_config_read(NULL, "harmonia_build_config", &own, sizeof own, sizeof own, given);
        if (st != HARMONIA_OK)
            return st;
    }
    const harmonia_build_config *config = &own;
    const uint32_t key_bits = config->key_bits ? config->key_bits : 64;
    kr_build_params p = {
        .key_bits = key_bits,
        .fanout = config->fanout ? config->fanout : HARMONIA_DEFAULT_FANOUT(key_bits),
        .leaf_size = config->leaf_size ? config->leaf_size : HARMONIA_DEFAULT_LEAF_SIZE,
        .leaf_fill = config->leaf_fill != 0.0 ? config->leaf_fill : HARMONIA_DEFAULT_LEAF_FILL,
        .duplicates = config->duplicates,
        .input_sorted = config->input_sorted,
        .progress = config->progress,
        .progress_arg = config->progress_arg,
        .threads = config->threads,
    };
    if (p.key_bits != 32 && p.key_bits != 64)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "key width %" PRIu32 " bits: use 32 or 64", p.key_bits);
    if (!kr_valid_node_size(p.fanout))
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "fanout %" PRIu32 ": use 8, 16, 32, 64 or 128", p.fanout);
    if (!kr_valid_node_size(p.leaf_size))
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "leaf size %" PRIu32 ": use 8, 16, 32, 64 or 128",
                       p.leaf_size);
    if (!(p.leaf_fill > 0.0 && p.leaf_fill <= 1.0))
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "leaf fill %g: use a fraction in (0, 1]", p.leaf_fill);
    if ((unsigned)p.duplicates > HARMONIA_DUPLICATES_KEEP_LAST)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "unknown duplicate policy %d", (int)p.duplicates);
    if (count > 0 && !keys)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: keys is NULL with %" PRIu64 " pairs", count);
    if (config->threads < 0)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: threads %d: use 0 (OpenMP's default) or more",
                       config->threads);
    if ((unsigned)config->backend > HARMONIA_BACKEND_GPU)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: unknown backend %d", (int)config->backend);
    if ((unsigned)config->memory > HARMONIA_MEMORY_DEVICE)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: unknown memory kind %d", (int)config->memory);
    /* where the pairs live, and where the build runs (harmonia.h: harmonia_build_config.backend) */
    bool device_arrays = device_call || config->memory == HARMONIA_MEMORY_DEVICE;
    int where = -1;
    if (!device_call && config->memory == HARMONIA_MEMORY_AUTO && count > 0)
        device_arrays = hm_gpu_is_device_pointer(keys, &where); /* its device is checked by the build */
    if (device_arrays && config->backend == HARMONIA_BACKEND_CPU)
        return hm_fail(NULL, HARMONIA_ERR_INVALID,
                       "harmonia_build: the pairs are in device memory, which the CPU build (backend CPU) cannot read");
    const bool use_gpu = device_arrays || config->backend == HARMONIA_BACKEND_GPU ||
                         (config->backend == HARMONIA_BACKEND_AUTO && count >= HM_GPU_BUILD_MIN_PAIRS &&
                          count <= KR_GPU_MAX_PAIRS && hm_gpu_usable());
    harmonia_tree *tree = hm_tree_new();
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_NO_MEMORY, "out of memory allocating a tree handle");
    harmonia_status st = hm_set_placement(tree, config->device, config->allocator);
    if (st != HARMONIA_OK) {
        hm_fail(NULL, st, "harmonia_build: %s", tree->last_error);
        harmonia_free(tree);
        return st;
    }
    kr_error err = {{0}};
    if (use_gpu) {
        st = hm_gpu_build(tree, &p, keys, values, count, device_arrays, config->stream, &err);
        if (st == HARMONIA_OK) {
            *tree_out = tree;
            return HARMONIA_OK;
        }
        const bool fall_back = !device_arrays && config->backend == HARMONIA_BACKEND_AUTO &&
                               (st == HARMONIA_ERR_DEVICE_MEMORY || st == HARMONIA_ERR_DEVICE ||
                                st == HARMONIA_ERR_NO_DEVICE);
        if (!fall_back) {
            char message[sizeof err.message];
            snprintf(message, sizeof message, "%s", err.message[0] ? err.message : tree->last_error);
            harmonia_free(tree);
            return hm_fail(NULL, st, "%s", message);
        }
        /* AUTO with host arrays: the CPU build instead (harmonia.h) */
        err.message[0] = '\0';
        tree->last_error[0] = '\0';
    }
    st = kr_build(&tree->kr, &p, keys, values, count, &err); /* num_threads(p.threads) inside */
    if (st != HARMONIA_OK) {
        harmonia_free(tree);
        return hm_fail(NULL, st, "%s", err.message);
    }
    *tree_out = tree;
    return HARMONIA_OK;
}

harmonia_status harmonia_build(const harmonia_build_config *config, const void *keys, const void *values,
                               uint64_t count, harmonia_tree **tree_out)
{
    return build_tree(config, keys, values, count, tree_out, false);
}

harmonia_status harmonia_build_device(const harmonia_build_config *config, const void *keys, const void *values,
                                      uint64_t count, harmonia_tree **tree_out)
{
    return build_tree(config, keys, values, count, tree_out, true);
}

/* --- queries ---------------------------------------------------------------------------------- */

/* Resolves the backend of a synchronous query call: auto takes the GPU when one is usable. The
 * CPU engine reads host memory only. */
static harmonia_status choose_backend(harmonia_tree *tree, const harmonia_query_config *config,
                                      harmonia_backend *backend_out)
{
    harmonia_backend b = config->backend;
    if ((unsigned)b > HARMONIA_BACKEND_GPU)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown backend %d", (int)b);
    if (config->threads < 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "threads %d: use 0 (OpenMP's default) or more", config->threads);
    if (b == HARMONIA_BACKEND_AUTO)
        b = hm_gpu_usable() ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_CPU;
    if (b == HARMONIA_BACKEND_GPU && !hm_gpu_usable()) {
        if (harmonia_device_probe(NULL) == HARMONIA_OK)
            return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "the GPU backend was asked for, but this build has no GPU engine");
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "the GPU backend was asked for, but no GPU is usable: %s",
                       harmonia_last_error(NULL));
    }
    if (b == HARMONIA_BACKEND_CPU && config->memory == HARMONIA_MEMORY_DEVICE)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "the CPU backend cannot read device memory");
    *backend_out = b;
    return HARMONIA_OK;
}

/* An asynchronous call: the GPU on device arrays, on the given stream. */
static harmonia_status async_setup(harmonia_tree *tree, const char *fn, const harmonia_query_config *given,
                                   void *stream, harmonia_query_config *config)
{
    harmonia_status st = hm_query_config(tree, given, config);
    if (st != HARMONIA_OK)
        return st;
    if (config->backend == HARMONIA_BACKEND_CPU)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s runs on the GPU: the CPU backend answers the synchronous "
                       "calls only", fn);
    if ((unsigned)config->backend > HARMONIA_BACKEND_GPU)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown backend %d", (int)config->backend);
    if (config->memory == HARMONIA_MEMORY_HOST)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s takes device arrays (memory HOST was given); host arrays "
                       "need the synchronous call, which stages them", fn);
    if (!hm_gpu_usable()) {
        if (harmonia_device_probe(NULL) == HARMONIA_OK)
            return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "%s: this build has no GPU engine", fn);
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "%s: no GPU is usable: %s", fn, harmonia_last_error(NULL));
    }
    config->backend = HARMONIA_BACKEND_GPU;
    config->stream = stream;
    return HARMONIA_OK;
}

#define REQUIRE_TREE(tree, fn)                                                                    \
    do {                                                                                          \
        if (!(tree))                                                                              \
            return hm_fail(NULL, HARMONIA_ERR_INVALID, fn ": tree is NULL");                      \
    } while (0)

/* The body of the point lookups: unordered (positions_out: 64-bit words, or 32-bit ones when
 * positions32) or in query order. */
static harmonia_status lookup(harmonia_tree *tree, const char *fn, const harmonia_query_config *given,
                              const void *queries, uint64_t count, void *values_out, uint8_t *found_out,
                              void *positions_out, bool unordered, bool positions32, bool async, void *stream)
{
    REQUIRE_TREE(tree, "harmonia_lookup");
    if (count > 0 && (!queries || !values_out || !found_out || (unordered && !positions_out)))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: NULL queries, values_out, found_out%s", fn,
                       unordered ? " or positions_out" : "");
    if (positions32 && count > HARMONIA_POSITIONS32_MAX_COUNT)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "%s: %" PRIu64 " queries: 32-bit positions number at most 2^32 queries "
                       "(harmonia_lookup_unordered writes 64-bit ones)", fn, count);
    harmonia_query_config config;
    harmonia_backend backend = HARMONIA_BACKEND_GPU;
    harmonia_status st = async ? async_setup(tree, fn, given, stream, &config) : hm_query_config(tree, given, &config);
    if (st == HARMONIA_OK && !async)
        st = choose_backend(tree, &config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_lookup(tree, &config, async, queries, count, values_out, found_out,
                             unordered ? positions_out : NULL, positions32);
    kr_tree version;
    const unsigned pin = hm_pin(tree, &version); /* one version for the whole batch */
    kr_lookup_batch(&version, queries, count, values_out, found_out, config.threads);
    hm_unpin(tree, pin);
    if (unordered) {
        const int team = kr_resolve_threads(config.threads);
        if (positions32) {
            uint32_t *narrow = positions_out;
#pragma omp parallel for schedule(static) num_threads(team) if (count > KR_PARALLEL_MIN)
            for (uint64_t i = 0; i < count; i++)
                narrow[i] = (uint32_t)i;
        } else {
            uint64_t *wide = positions_out;
#pragma omp parallel for schedule(static) num_threads(team) if (count > KR_PARALLEL_MIN)
            for (uint64_t i = 0; i < count; i++)
                wide[i] = i;
        }
    }
    return HARMONIA_OK;
}

harmonia_status harmonia_lookup(harmonia_tree *tree, const harmonia_query_config *config, const void *queries,
                                uint64_t count, void *values_out, uint8_t *found_out)
{
    return lookup(tree, "harmonia_lookup", config, queries, count, values_out, found_out, NULL, false, false, false,
                  NULL);
}

harmonia_status harmonia_lookup_async(harmonia_tree *tree, const harmonia_query_config *config, const void *queries,
                                      uint64_t count, void *values_out, uint8_t *found_out, void *stream)
{
    return lookup(tree, "harmonia_lookup_async", config, queries, count, values_out, found_out, NULL, false, false,
                  true, stream);
}

harmonia_status harmonia_lookup_unordered(harmonia_tree *tree, const harmonia_query_config *config,
                                          const void *queries, uint64_t count, void *values_out,
                                          uint8_t *found_out, uint64_t *positions_out)
{
    return lookup(tree, "harmonia_lookup_unordered", config, queries, count, values_out, found_out, positions_out,
                  true, false, false, NULL);
}

harmonia_status harmonia_lookup_unordered_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                const void *queries, uint64_t count, void *values_out,
                                                uint8_t *found_out, uint64_t *positions_out, void *stream)
{
    return lookup(tree, "harmonia_lookup_unordered_async", config, queries, count, values_out, found_out,
                  positions_out, true, false, true, stream);
}

harmonia_status harmonia_lookup_unordered32(harmonia_tree *tree, const harmonia_query_config *config,
                                            const void *queries, uint64_t count, void *values_out,
                                            uint8_t *found_out, uint32_t *positions_out)
{
    return lookup(tree, "harmonia_lookup_unordered32", config, queries, count, values_out, found_out, positions_out,
                  true, true, false, NULL);
}

harmonia_status harmonia_lookup_unordered32_async(harmonia_tree *tree, const harmonia_query_config *config,
                                                  const void *queries, uint64_t count, void *values_out,
                                                  uint8_t *found_out, uint32_t *positions_out, void *stream)
{
    return lookup(tree, "harmonia_lookup_unordered32_async", config, queries, count, values_out, found_out,
                  positions_out, true, true, true, stream);
}

static harmonia_status lower_bound(harmonia_tree *tree, const char *fn, const harmonia_query_config *given,
                                   const void *queries, uint64_t count, void *keys_out, void *values_out,
                                   uint8_t *found_out, bool async, void *stream)
{
    REQUIRE_TREE(tree, "harmonia_lower_bound");
    if (count > 0 && (!queries || !found_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: NULL queries or found_out", fn);
    harmonia_query_config config;
    harmonia_backend backend = HARMONIA_BACKEND_GPU;
    harmonia_status st = async ? async_setup(tree, fn, given, stream, &config) : hm_query_config(tree, given, &config);
    if (st == HARMONIA_OK && !async)
        st = choose_backend(tree, &config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_lower_bound(tree, &config, async, queries, count, keys_out, values_out, found_out);
    kr_tree version;
    const unsigned pin = hm_pin(tree, &version); /* one version for the whole batch */
    kr_lower_bound_batch(&version, queries, count, keys_out, values_out, found_out, config.threads);
    hm_unpin(tree, pin);
    return HARMONIA_OK;
}

harmonia_status harmonia_lower_bound(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *queries, uint64_t count, void *keys_out,
                                     void *values_out, uint8_t *found_out)
{
    return lower_bound(tree, "harmonia_lower_bound", config, queries, count, keys_out, values_out, found_out, false,
                       NULL);
}

harmonia_status harmonia_lower_bound_async(harmonia_tree *tree, const harmonia_query_config *config,
                                           const void *queries, uint64_t count, void *keys_out,
                                           void *values_out, uint8_t *found_out, void *stream)
{
    return lower_bound(tree, "harmonia_lower_bound_async", config, queries, count, keys_out, values_out, found_out,
                       true, stream);
}

static harmonia_status range_count(harmonia_tree *tree, const char *fn, const harmonia_query_config *given,
                                   const void *lo, const void *hi, uint64_t count, uint64_t *counts_out, bool async,
                                   void *stream)
{
    REQUIRE_TREE(tree, "harmonia_range_count");
    if (count > 0 && (!lo || !hi || !counts_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: NULL lo, hi or counts_out", fn);
    harmonia_query_config config;
    harmonia_backend backend = HARMONIA_BACKEND_GPU;
    harmonia_status st = async ? async_setup(tree, fn, given, stream, &config) : hm_query_config(tree, given, &config);
    if (st == HARMONIA_OK && !async)
        st = choose_backend(tree, &config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_range_count(tree, &config, async, lo, hi, count, counts_out);
    kr_tree version;
    const unsigned pin = hm_pin(tree, &version); /* one version for the whole batch */
    kr_range_count_batch(&version, lo, hi, count, counts_out, config.threads);
    hm_unpin(tree, pin);
    return HARMONIA_OK;
}

harmonia_status harmonia_range_count(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *lo, const void *hi, uint64_t count,
                                     uint64_t *counts_out)
{
    return range_count(tree, "harmonia_range_count", config, lo, hi, count, counts_out, false, NULL);
}

harmonia_status harmonia_range_count_async(harmonia_tree *tree, const harmonia_query_config *config,
                                           const void *lo, const void *hi, uint64_t count,
                                           uint64_t *counts_out, void *stream)
{
    return range_count(tree, "harmonia_range_count_async", config, lo, hi, count, counts_out, true, stream);
}

static harmonia_status range_collect(harmonia_tree *tree, const char *fn, const harmonia_query_config *given,
                                     const void *lo, const void *hi, uint64_t count, uint64_t *offsets,
                                     void *keys_out, void *values_out, bool async, void *stream)
{
    REQUIRE_TREE(tree, "harmonia_range_collect");
    if (!offsets || (count > 0 && (!lo || !hi)))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: NULL lo, hi or offsets", fn);
    harmonia_query_config config;
    harmonia_backend backend = HARMONIA_BACKEND_GPU;
    harmonia_status st = async ? async_setup(tree, fn, given, stream, &config) : hm_query_config(tree, given, &config);
    if (st == HARMONIA_OK && !async)
        st = choose_backend(tree, &config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (!keys_out && !values_out) {
        if (backend == HARMONIA_BACKEND_GPU)
            return hm_gpu_range_offsets(tree, &config, async, lo, hi, count, offsets);
        kr_tree version;
        const unsigned pin = hm_pin(tree, &version); /* one version for the whole batch */
        kr_range_offsets(&version, lo, hi, count, offsets, config.threads);
        hm_unpin(tree, pin);
        return HARMONIA_OK;
    }
    /* Offsets in host memory are checked before anything is written through them (the CPU
     * engine always; the GPU engine for a tree loaded without verification, whose phase 1 may
     * have counted garbage: a count above the key count or a decrease would write past the
     * caller's arrays). Device offsets are the caller's to get right. */
    const bool host_offsets = backend == HARMONIA_BACKEND_CPU || config.memory == HARMONIA_MEMORY_HOST;
    kr_tree version;
    const unsigned pin = hm_pin(tree, &version); /* one version for the checks and the whole batch */
    if (host_offsets && (backend == HARMONIA_BACKEND_CPU || tree->unverified)) {
        for (uint64_t i = 0; i < count; i++) {
            if (offsets[i + 1] < offsets[i]) {
                hm_unpin(tree, pin);
                return hm_fail(tree, HARMONIA_ERR_INVALID, "%s: offsets decrease at %" PRIu64 " (not from phase 1?)",
                               fn, i);
            }
            if (offsets[i + 1] - offsets[i] > version.n_keys) {
                hm_unpin(tree, pin);
                return hm_fail(tree, tree->unverified ? HARMONIA_ERR_CORRUPT : HARMONIA_ERR_INVALID,
                               "%s: range %" PRIu64 " holds %" PRIu64
                               " pairs by its offsets, more than the tree's %" PRIu64 " keys%s", fn, i,
                               offsets[i + 1] - offsets[i], version.n_keys,
                               tree->unverified ? " (the tree was loaded without verification and "
                                                  "its keys are out of order: run harmonia_check)"
                                                : " (not from phase 1?)");
            }
        }
    }
    if (backend == HARMONIA_BACKEND_GPU) { /* the GPU engine takes its version under the tree's lock */
        hm_unpin(tree, pin);
        return hm_gpu_range_collect(tree, &config, async, lo, count, offsets, keys_out, values_out);
    }
    kr_range_collect_batch(&version, lo, hi, count, offsets, keys_out, values_out, config.threads);
    hm_unpin(tree, pin);
    return HARMONIA_OK;
}

harmonia_status harmonia_range_collect(harmonia_tree *tree, const harmonia_query_config *config,
                                       const void *lo, const void *hi, uint64_t count,
                                       uint64_t *offsets, void *keys_out, void *values_out)
{
    return range_collect(tree, "harmonia_range_collect", config, lo, hi, count, offsets, keys_out, values_out,
                         false, NULL);
}

harmonia_status harmonia_range_collect_async(harmonia_tree *tree, const harmonia_query_config *config,
                                             const void *lo, const void *hi, uint64_t count, uint64_t *offsets,
                                             void *keys_out, void *values_out, void *stream)
{
    return range_collect(tree, "harmonia_range_collect_async", config, lo, hi, count, offsets, keys_out,
                         values_out, true, stream);
}

harmonia_status harmonia_query_workspace_bytes(harmonia_tree *tree, const harmonia_query_config *given,
                                               harmonia_query_kind kind, uint64_t count, size_t *device_bytes_out,
                                               size_t *pinned_bytes_out)
{
    REQUIRE_TREE(tree, "harmonia_query_workspace_bytes");
    if ((unsigned)kind > HARMONIA_QUERY_RANGE_COLLECT)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_query_workspace_bytes: unknown query kind %d", (int)kind);
    harmonia_query_config config;
    harmonia_status st = hm_query_config(tree, given, &config);
    if (st != HARMONIA_OK)
        return st;
    size_t device_bytes = 0, pinned_bytes = 0;
    st = hm_gpu_workspace_bytes(tree, &config, kind, count, &device_bytes, &pinned_bytes);
    if (st != HARMONIA_OK)
        return st;
    if (device_bytes_out)
        *device_bytes_out = device_bytes;
    if (pinned_bytes_out)
        *pinned_bytes_out = pinned_bytes;
    return HARMONIA_OK;
}

/* --- batch updates ----------------------------------------------------------------------------- */

static harmonia_update_config update_defaults(void)
{
    harmonia_update_config d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.insert_existing = HARMONIA_INSERT_EXISTING_ERROR;
    d.update_missing = HARMONIA_UPDATE_MISSING_ERROR;
    d.split_fill = 0.75;
    d.free_previous_layout = false; /* the old arrays kept for the next re-layout */
    return d;
}

void harmonia_update_config_init_sized(harmonia_update_config *config, size_t size)
{
    const harmonia_update_config d = update_defaults();
    hm_config_init(config, size, &d, sizeof d);
}

/* What the copy-on-write of an in-place batch works with. */
typedef struct prepare_context {
    harmonia_tree *tree;
    int threads; /* the update's OpenMP team */
} prepare_context;

/* The copy-on-write of an in-place batch (upd_params.prepare_target): makes *target a copy of the
 * published version t in arrays no query reads. The spare, when it holds the version before with
 * the same shape (spare_delta), is brought up to t by the leaves the last batch changed (and the
 * leaf ranks if they changed): as much as that batch wrote. Otherwise every array is copied, into
 * the spare's arrays where they are large enough. The spare was drained by the caller. */
static harmonia_status prepare_copy(void *context, const kr_tree *t, kr_tree *target, kr_error *err)
{
    harmonia_tree *tree = ((prepare_context *)context)->tree;
    const int threads = ((prepare_context *)context)->threads;
    kr_tree *spare = &tree->spare;
    const size_t kb = kr_key_bytes(t), leaf_bytes = (size_t)t->leaf_size * kb;
    if (tree->spare_delta && spare->keys && spare->n_leaves == t->n_leaves && spare->n_internal == t->n_internal &&
        spare->height == t->height) {
        const uint64_t *dirty = tree->spare_dirty;
        const int64_t n = (int64_t)tree->spare_n_dirty;
        const uint64_t leaf_base = kr_leaf_key_offset(t, 0);
        const int team = kr_resolve_threads(threads);
#pragma omp parallel for schedule(static) num_threads(team) if (n > 4096)
        for (int64_t i = 0; i < n; i++) {
            const uint64_t li = dirty[i];
            memcpy((char *)spare->keys + (leaf_base + li * t->leaf_size) * kb,
                   (const char *)t->keys + (leaf_base + li * t->leaf_size) * kb, leaf_bytes);
            memcpy((char *)spare->leaf_values + li * leaf_bytes, (const char *)t->leaf_values + li * leaf_bytes,
                   leaf_bytes);
        }
        if (tree->spare_ranks)
            kr_parallel_copy(spare->leaf_rank, t->leaf_rank, (t->n_leaves + 1) * sizeof(uint64_t), threads);
        *target = *t;
        target->keys = spare->keys;
        target->leaf_values = spare->leaf_values;
        target->first_child = spare->first_child;
        target->leaf_rank = spare->leaf_rank;
        memset(spare, 0, sizeof *spare);
        tree->spare_delta = false;
        return HARMONIA_OK;
    }
    *target = *t;
    target->keys = target->leaf_values = NULL;
    target->first_child = NULL;
    target->leaf_rank = NULL;
    tree->spare_delta = false;
    harmonia_status st = kr_alloc_arrays_reusing(target, spare, 0.125, err);
    if (st != HARMONIA_OK)
        return st;
    kr_parallel_copy(target->keys, t->keys, kr_key_slots(t) * kb, threads);
    kr_parallel_copy(target->leaf_values, t->leaf_values, t->n_leaves * leaf_bytes, threads);
    kr_parallel_copy(target->first_child, t->first_child, (t->n_internal + 1) * sizeof(uint32_t), threads);
    kr_parallel_copy(target->leaf_rank, t->leaf_rank, (t->n_leaves + 1) * sizeof(uint64_t), threads);
    return HARMONIA_OK;
}

/* The publish of an update (hm_gpu_sync calls it once, holding gpu_lock): version N+1 becomes the
 * tree's, N's arrays its spare (freed once N's readers are gone when discard, or when they are a
 * mapped file's). */
typedef struct publish_context {
    harmonia_tree *tree;
    const kr_tree *next;
    bool in_place;            /* N+1 was N copied and changed in place: N differs by dirty alone */
    uint64_t *dirty;
    uint64_t n_dirty;
    bool ranks_changed;
    bool discard;             /* free_previous_layout */
    bool published, kept_dirty;
    spare_storage discarded;  /* freed by the caller, outside the locks */
} publish_context;

static void publish_version(void *context)
{
    publish_context *pc = context;
    harmonia_tree *tree = pc->tree;
    const kr_tree *next = pc->next;
    pthread_mutex_lock(&tree->version_lock);
    if (next->keys == tree->kr.keys) { /* a batch that changed nothing: N+1 is N's arrays, the spare
                                          stays the version before them */
        tree->version++;
        assert(tree->pins[tree->version & 1] == 0);
        pc->published = true;
        pthread_mutex_unlock(&tree->version_lock);
        return;
    }
    const kr_tree old = tree->kr;
    /* the fields a batch changes (the widths and node sizes never do: GPU calls read them unlocked) */
    tree->kr.height = next->height;
    tree->kr.n_keys = next->n_keys;
    tree->kr.n_internal = next->n_internal;
    tree->kr.n_leaves = next->n_leaves;
    tree->kr.n_nodes = next->n_nodes;
    memcpy(tree->kr.level_start, next->level_start, sizeof next->level_start);
    tree->kr.keys = next->keys;
    tree->kr.leaf_values = next->leaf_values;
    tree->kr.first_child = next->first_child;
    tree->kr.leaf_rank = next->leaf_rank;
    tree->version++;
    assert(tree->pins[tree->version & 1] == 0); /* the version before N was drained */
    assert(!tree->spare.keys && !tree->spare_mapping);
    kr_tree_free_arrays(&tree->spare); /* none: a batch takes the spare or leaves it empty */
    tree->spare = old;
    tree->spare_discard = pc->discard;
    if (tree->mapping) { /* N read the mapped file: unmapped once its readers are gone */
        tree->spare_mapping = tree->mapping;
        tree->spare_mapping_bytes = tree->mapping_bytes;
        tree->mapping = NULL;
        tree->mapping_bytes = 0;
        tree->spare_discard = true;
    }
    free(tree->spare_dirty);
    tree->spare_dirty = NULL;
    tree->spare_n_dirty = 0;
    tree->spare_delta = pc->in_place && !tree->spare_discard;
    if (tree->spare_delta) {
        tree->spare_dirty = pc->dirty;
        tree->spare_n_dirty = pc->n_dirty;
        tree->spare_ranks = pc->ranks_changed;
        pc->kept_dirty = true;
    }
    take_discarded_spare(tree, &pc->discarded);
    pc->published = true;
    pthread_mutex_unlock(&tree->version_lock);
}

static harmonia_status update_locked(harmonia_tree *tree, const harmonia_update_config *given,
                                     const uint8_t *kinds, const void *keys, const void *values,
                                     uint64_t count, harmonia_update_stats *stats_out)
{
    harmonia_update_config own = update_defaults();
    if (given) {
        harmonia_status st = hm_config_read(tree, "harmonia_update_config", &own, sizeof own, sizeof own, given);
        if (st != HARMONIA_OK)
            return st;
    }
    const harmonia_update_config *config = &own;
    if (count > 0 && (!kinds || !keys))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_update: NULL kinds or keys with %" PRIu64 " operations", count);
    if ((unsigned)config->insert_existing > HARMONIA_INSERT_EXISTING_UPSERT ||
        (unsigned)config->update_missing > HARMONIA_UPDATE_MISSING_SKIP)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_update: unknown policy");
    if (config->threads < 0)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_update: threads %d: use 0 (OpenMP's default) or more",
                       config->threads);
    double split_fill = config->split_fill != 0.0 ? config->split_fill : 0.75;
    if (!(split_fill > 0.0 && split_fill <= 1.0))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "split fill %g: use a fraction in (0, 1]", split_fill);
    if (tree->kr.key_bits == 32 && count > UINT32_MAX)
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "a batch of %" PRIu64 " operations on a 32-bit tree: split it into batches below 2^32", count);
    /* A tree loaded without verification is verified before anything changes: the update
     * rewrites every checksum on save, so damage must be found now or never. */
    harmonia_status st = hm_verify_loaded(tree, "nothing was applied");
    if (st != HARMONIA_OK) {
        if (stats_out) {
            memset(stats_out, 0, sizeof *stats_out);
            stats_out->operations = count;
            stats_out->failed_operation = UINT64_MAX;
        }
        return st;
    }
    harmonia_update_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.operations = count;
    stats.failed_operation = UINT64_MAX;
    if (stats_out)
        *stats_out = stats;
    for (uint64_t i = 0; i < count; i++) {
        if (kinds[i] > HARMONIA_OP_DELETE || (kinds[i] != HARMONIA_OP_DELETE && !values)) {
            if (stats_out)
                stats_out->failed_operation = i;
            if (kinds[i] > HARMONIA_OP_DELETE)
                return hm_fail(tree, HARMONIA_ERR_INVALID, "operation %" PRIu64 " has kind %u; kinds are 0 insert, "
                               "1 update, 2 upsert, 3 delete; nothing was applied", i, kinds[i]);
            return hm_fail(tree, HARMONIA_ERR_INVALID, "operation %" PRIu64 " needs a value but values is NULL", i);
        }
    }
    /* the spare is written below: the queries still reading the version it holds finish first */
    if (config->free_previous_layout && (tree->spare.keys || tree->spare_mapping)) {
        pthread_mutex_lock(&tree->version_lock);
        tree->spare_discard = true;
        pthread_mutex_unlock(&tree->version_lock);
    }
    wait_spare_drained(tree);
    kr_tree target;
    memset(&target, 0, sizeof target);
    prepare_context prepare = {tree, config->threads};
    upd_params p = {
        .insert_existing = config->insert_existing,
        .update_missing = config->update_missing,
        .split_fill = split_fill,
        .in_place_allowed = false, /* copy-on-write: queries read the published arrays meanwhile */
        .spare = config->free_previous_layout ? NULL : &tree->spare,
        .threads = config->threads,
        .in_place_target = &target,
        .prepare_target = prepare_copy,
        .prepare_context = &prepare,
    };
    upd_result result;
    kr_error err = {{0}};
    st = upd_apply_batch(&tree->kr, &p, kinds, keys, values, count, &stats, &result, &err);
    if (st != HARMONIA_OK) {
        if (stats_out)
            stats_out->failed_operation =
                st == HARMONIA_ERR_KEY_EXISTS || st == HARMONIA_ERR_KEY_MISSING ? result.failed_op : UINT64_MAX;
        return hm_fail(tree, st, "%s", err.message);
    }
    /* version N+1 is complete in arrays no query reads: publish it with the device copy */
    publish_context pc = {
        .tree = tree,
        .next = &result.new_tree,
        .in_place = result.in_place,
        .dirty = result.dirty_leaves,
        .n_dirty = result.n_dirty,
        .ranks_changed = result.ranks_changed,
        .discard = config->free_previous_layout,
    };
    double t0 = omp_get_wtime();
    bool blocking = false;
    st = hm_gpu_sync(tree, &result.new_tree, result.in_place ? result.dirty_leaves : NULL, result.n_dirty,
                     result.ranks_changed, config->skip_upload, publish_version, &pc, &stats.uploaded_bytes,
                     &stats.incremental_upload, &blocking);
    if (!config->skip_upload)
        stats.upload_seconds = omp_get_wtime() - t0;
    stats.blocking_sync = blocking;
    assert(pc.published);
    free_spare_storage(&pc.discarded);
    if (st != HARMONIA_OK) {
        char message[sizeof tree->last_error];
        snprintf(message, sizeof message, "%s", tree->last_error);
        hm_gpu_release(tree);
        hm_fail(tree, st, "the batch was applied, but the device copy could not be synchronised (%s); "
                "it was released and the next GPU query uploads the tree again", message);
    }
    if (!pc.kept_dirty)
        free(result.dirty_leaves);
    free(result.moves);
    if (stats_out)
        *stats_out = stats;
    return st;
}

harmonia_status harmonia_update(harmonia_tree *tree, const harmonia_update_config *given,
                                const uint8_t *kinds, const void *keys, const void *values,
                                uint64_t count, harmonia_update_stats *stats_out)
{
    REQUIRE_TREE(tree, "harmonia_update");
    pthread_mutex_lock(&tree->update_lock); /* a second update of the tree waits for this one */
    harmonia_status st = update_locked(tree, given, kinds, keys, values, count, stats_out);
    pthread_mutex_unlock(&tree->update_lock);
    return st;
}

/* --- integrity and information ---------------------------------------------------------------- */

harmonia_status harmonia_check(harmonia_tree *tree)
{
    REQUIRE_TREE(tree, "harmonia_check");
    if (tree->unverified) { /* the checksums of the file too, then the checker */
        harmonia_status st = hm_verify_loaded(tree, NULL);
        if (st == HARMONIA_OK)
            tree->last_error[0] = 0;
        return st;
    }
    kr_error err = {{0}};
    harmonia_status st = kr_check_tree(&tree->kr, &err);
    if (st != HARMONIA_OK)
        return hm_fail(tree, st, "%s", err.message);
    tree->last_error[0] = 0;
    return HARMONIA_OK;
}

harmonia_status harmonia_info(const harmonia_tree *tree, harmonia_tree_info *info)
{
    if (!tree || !info)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_info: NULL tree or info");
    harmonia_tree *locked = (harmonia_tree *)tree; /* the lock is the tree's, not part of its value */
    pthread_mutex_lock(&locked->version_lock);       /* one version, also during an update */
    const kr_tree *t = &tree->kr;
    memset(info, 0, sizeof *info);
    info->key_bits = t->key_bits;
    info->fanout = t->fanout;
    info->leaf_size = t->leaf_size;
    info->height = t->height;
    info->key_count = t->n_keys;
    info->internal_nodes = t->n_internal;
    info->leaf_count = t->n_leaves;
    for (uint32_t l = 0; l < t->height && l < HARMONIA_MAX_LEVELS; l++)
        info->level_nodes[l] = t->level_start[l + 1] - t->level_start[l];
    info->key_region_bytes = kr_key_slots(t) * kr_key_bytes(t);
    info->leaf_value_bytes = t->n_leaves * t->leaf_size * kr_key_bytes(t);
    info->prefix_sum_bytes = (t->n_internal + 1) * sizeof(uint32_t);
    info->leaf_rank_bytes = (t->n_leaves + 1) * sizeof(uint64_t);
    info->total_bytes = info->key_region_bytes + info->leaf_value_bytes + info->prefix_sum_bytes +
                        info->leaf_rank_bytes;
    info->leaf_fill = (double)t->n_keys / ((double)t->n_leaves * t->leaf_size);
    if (t->n_keys > 0) {
        uint64_t ignored;
        kr_at_rank(t, 0, &info->min_key, &ignored);
        kr_at_rank(t, t->n_keys - 1, &info->max_key, &ignored);
    }
    info->version = tree->version;
    info->ntg_group_size = tree->ntg_group_size;
    info->mapped = tree->mapping != NULL;
    uint32_t constant_levels = 0;
    info->constant_prefix_entries = hm_constant_entries(tree, &constant_levels);
    info->constant_prefix_levels = constant_levels;
    info->device = tree->device;
    pthread_mutex_unlock(&locked->version_lock);
    hm_gpu_fill_info(tree, info); /* the device copy's device, version and bytes, if it exists */
    return HARMONIA_OK;
}

harmonia_status harmonia_device_upload(harmonia_tree *tree)
{
    REQUIRE_TREE(tree, "harmonia_device_upload");
    return hm_gpu_upload(tree);
}

void harmonia_device_release(harmonia_tree *tree)
{
    if (tree)
        hm_gpu_release(tree);
}
