/* tree.c — the library's front: status strings and last-error messages, configuration defaults,
 * the tree handle's life cycle (build, free), argument checking and backend choice for queries,
 * check and info. The layout and the engines live in their component folders. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <omp.h>

#include "harmonia/gpu_engine.h"
#include "harmonia/tree_internal.h"
#include "cpu_update/cpu_update.h"
#include "prefix_sum/prefix_sum.h"

static _Thread_local char thread_last_error[512];

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
    if (tree) {
        tree->constant_levels = HARMONIA_CONSTANT_LEVELS_DEFAULT;
        tree->lock_fd = -1;
    }
    return tree;
}

uint64_t hm_constant_entries(const harmonia_tree *tree, uint32_t *levels_out)
{
    const kr_tree *t = &tree->kr;
    if (tree->constant_levels < 0)
        return ps_constant_entries(t, levels_out);
    /* the entries of the first constant_levels levels and the sentinel, when they fit */
    const uint32_t internal_levels = t->height > 0 ? t->height - 1 : 0;
    const uint32_t want = (uint32_t)tree->constant_levels < internal_levels ? (uint32_t)tree->constant_levels
                                                                          : internal_levels;
    const uint64_t cap = want == 0 ? 0 : t->level_start[want] + 1;
    return ps_constant_entries_capped(t, cap, levels_out);
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
    kr_tree_free_arrays(&tree->spare);
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
    free(tree);
}

/* --- building --------------------------------------------------------------------------------- */

void harmonia_build_config_init(harmonia_build_config *config)
{
    memset(config, 0, sizeof *config);
    config->key_bits = 64;
    config->fanout = 0; /* HARMONIA_DEFAULT_FANOUT(key_bits), once the key width is known */
    config->leaf_size = HARMONIA_DEFAULT_LEAF_SIZE;
    config->leaf_fill = HARMONIA_DEFAULT_LEAF_FILL;
    config->duplicates = HARMONIA_DUPLICATES_REJECT;
}

harmonia_status harmonia_build(const harmonia_build_config *config, const void *keys,
                               const void *values, uint64_t count, harmonia_tree **tree_out)
{
    if (!tree_out)
        return hm_fail(NULL, HARMONIA_ERR_INVALID, "harmonia_build: tree_out is NULL");
    *tree_out = NULL;
    harmonia_build_config defaults;
    if (!config) {
        harmonia_build_config_init(&defaults);
        config = &defaults;
    }
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
    harmonia_tree *tree = hm_tree_new();
    if (!tree)
        return hm_fail(NULL, HARMONIA_ERR_NO_MEMORY, "out of memory allocating a tree handle");
    kr_error err = {{0}};
    /* the build's parallel regions follow the calling thread's OpenMP setting, restored after */
    int saved_threads = omp_get_max_threads();
    if (config->threads > 0)
        omp_set_num_threads(config->threads);
    harmonia_status st = kr_build(&tree->kr, &p, keys, values, count, &err);
    omp_set_num_threads(saved_threads);
    if (st != HARMONIA_OK) {
        free(tree);
        return hm_fail(NULL, st, "%s", err.message);
    }
    *tree_out = tree;
    return HARMONIA_OK;
}

/* --- queries ---------------------------------------------------------------------------------- */

void harmonia_query_config_init(harmonia_query_config *config)
{
    memset(config, 0, sizeof *config);
    config->backend = HARMONIA_BACKEND_AUTO;
    config->psa = -1;
    config->memory = HARMONIA_MEMORY_AUTO;
}

/* Resolves the backend of a query call: auto takes the GPU when one is usable. The CPU engine
 * reads host memory only. */
static harmonia_status choose_backend(harmonia_tree *tree, const harmonia_query_config *config,
                                      harmonia_backend *backend_out)
{
    harmonia_backend b = config ? config->backend : HARMONIA_BACKEND_AUTO;
    if ((unsigned)b > HARMONIA_BACKEND_GPU)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "unknown backend %d", (int)b);
    if (b == HARMONIA_BACKEND_AUTO)
        b = hm_gpu_usable() ? HARMONIA_BACKEND_GPU : HARMONIA_BACKEND_CPU;
    if (b == HARMONIA_BACKEND_GPU && !hm_gpu_usable()) {
        if (harmonia_device_probe(NULL) == HARMONIA_OK)
            return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "the GPU backend was asked for, but this build has no GPU engine");
        return hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "the GPU backend was asked for, but no GPU is usable: %s",
                       harmonia_last_error(NULL));
    }
    if (b == HARMONIA_BACKEND_CPU && config && config->memory == HARMONIA_MEMORY_DEVICE)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "the CPU backend cannot read device memory");
    *backend_out = b;
    return HARMONIA_OK;
}

static int query_threads(const harmonia_query_config *config)
{
    return config ? config->threads : 0;
}

#define REQUIRE_TREE(tree, fn)                                                                    \
    do {                                                                                          \
        if (!(tree))                                                                              \
            return hm_fail(NULL, HARMONIA_ERR_INVALID, fn ": tree is NULL");                      \
    } while (0)

harmonia_status harmonia_lookup(harmonia_tree *tree, const harmonia_query_config *config,
                                const void *queries, uint64_t count, void *values_out,
                                uint8_t *found_out)
{
    REQUIRE_TREE(tree, "harmonia_lookup");
    if (count > 0 && (!queries || !values_out || !found_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_lookup: NULL queries, values_out or found_out");
    harmonia_backend backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = choose_backend(tree, config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_lookup(tree, config, queries, count, values_out, found_out, NULL);
    kr_lookup_batch(&tree->kr, queries, count, values_out, found_out, query_threads(config));
    return HARMONIA_OK;
}

harmonia_status harmonia_lookup_unordered(harmonia_tree *tree, const harmonia_query_config *config,
                                          const void *queries, uint64_t count, void *values_out,
                                          uint8_t *found_out, uint64_t *positions_out)
{
    REQUIRE_TREE(tree, "harmonia_lookup_unordered");
    if (count > 0 && (!queries || !values_out || !found_out || !positions_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID,
                       "harmonia_lookup_unordered: NULL queries, values_out, found_out or positions_out");
    harmonia_backend backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = choose_backend(tree, config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_lookup(tree, config, queries, count, values_out, found_out, positions_out);
    kr_lookup_batch(&tree->kr, queries, count, values_out, found_out, query_threads(config));
#pragma omp parallel for schedule(static) if (count > KR_PARALLEL_MIN)
    for (uint64_t i = 0; i < count; i++)
        positions_out[i] = i;
    return HARMONIA_OK;
}

harmonia_status harmonia_lower_bound(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *queries, uint64_t count, void *keys_out,
                                     void *values_out, uint8_t *found_out)
{
    REQUIRE_TREE(tree, "harmonia_lower_bound");
    if (count > 0 && (!queries || !found_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_lower_bound: NULL queries or found_out");
    harmonia_backend backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = choose_backend(tree, config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_lower_bound(tree, config, queries, count, keys_out, values_out, found_out);
    kr_lower_bound_batch(&tree->kr, queries, count, keys_out, values_out, found_out,
                         query_threads(config));
    return HARMONIA_OK;
}

harmonia_status harmonia_range_count(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *lo, const void *hi, uint64_t count,
                                     uint64_t *counts_out)
{
    REQUIRE_TREE(tree, "harmonia_range_count");
    if (count > 0 && (!lo || !hi || !counts_out))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_range_count: NULL lo, hi or counts_out");
    harmonia_backend backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = choose_backend(tree, config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_range_count(tree, config, lo, hi, count, counts_out);
    kr_range_count_batch(&tree->kr, lo, hi, count, counts_out, query_threads(config));
    return HARMONIA_OK;
}

harmonia_status harmonia_range_collect(harmonia_tree *tree, const harmonia_query_config *config,
                                       const void *lo, const void *hi, uint64_t count,
                                       uint64_t *offsets, void *keys_out, void *values_out)
{
    REQUIRE_TREE(tree, "harmonia_range_collect");
    if (!offsets || (count > 0 && (!lo || !hi)))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_range_collect: NULL lo, hi or offsets");
    harmonia_backend backend = HARMONIA_BACKEND_CPU;
    harmonia_status st = choose_backend(tree, config, &backend);
    if (st != HARMONIA_OK)
        return st;
    if (!keys_out && !values_out) {
        if (backend == HARMONIA_BACKEND_GPU)
            return hm_gpu_range_offsets(tree, config, lo, hi, count, offsets);
        kr_range_offsets(&tree->kr, lo, hi, count, offsets, query_threads(config));
        return HARMONIA_OK;
    }
    /* Offsets in host memory are checked before anything is written through them (the CPU
     * engine always; the GPU engine for a tree loaded without verification, whose phase 1 may
     * have counted garbage: a count above the key count or a decrease would write past the
     * caller's arrays). Device offsets are the caller's to get right. */
    const bool host_offsets = backend == HARMONIA_BACKEND_CPU ||
                              (config && config->memory == HARMONIA_MEMORY_HOST);
    if (host_offsets && (backend == HARMONIA_BACKEND_CPU || tree->unverified)) {
        for (uint64_t i = 0; i < count; i++) {
            if (offsets[i + 1] < offsets[i])
                return hm_fail(tree, HARMONIA_ERR_INVALID,
                               "harmonia_range_collect: offsets decrease at %" PRIu64 " (not from phase 1?)", i);
            if (offsets[i + 1] - offsets[i] > tree->kr.n_keys)
                return hm_fail(tree, tree->unverified ? HARMONIA_ERR_CORRUPT : HARMONIA_ERR_INVALID,
                               "harmonia_range_collect: range %" PRIu64 " holds %" PRIu64
                               " pairs by its offsets, more than the tree's %" PRIu64 " keys%s", i,
                               offsets[i + 1] - offsets[i], tree->kr.n_keys,
                               tree->unverified ? " (the tree was loaded without verification and "
                                                  "its keys are out of order: run harmonia_check)"
                                                : " (not from phase 1?)");
        }
    }
    if (backend == HARMONIA_BACKEND_GPU)
        return hm_gpu_range_collect(tree, config, lo, count, offsets, keys_out, values_out);
    kr_range_collect_batch(&tree->kr, lo, hi, count, offsets, keys_out, values_out,
                           query_threads(config));
    return HARMONIA_OK;
}

/* --- batch updates ----------------------------------------------------------------------------- */

void harmonia_update_config_init(harmonia_update_config *config)
{
    memset(config, 0, sizeof *config);
    config->insert_existing = HARMONIA_INSERT_EXISTING_ERROR;
    config->update_missing = HARMONIA_UPDATE_MISSING_ERROR;
    config->split_fill = 0.75;
}

harmonia_status harmonia_update(harmonia_tree *tree, const harmonia_update_config *config,
                                const uint8_t *kinds, const void *keys, const void *values,
                                uint64_t count, harmonia_update_stats *stats_out)
{
    REQUIRE_TREE(tree, "harmonia_update");
    harmonia_update_config defaults;
    if (!config) {
        harmonia_update_config_init(&defaults);
        config = &defaults;
    }
    if (count > 0 && (!kinds || !keys))
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_update: NULL kinds or keys with %" PRIu64 " operations", count);
    if ((unsigned)config->insert_existing > HARMONIA_INSERT_EXISTING_UPSERT ||
        (unsigned)config->update_missing > HARMONIA_UPDATE_MISSING_SKIP)
        return hm_fail(tree, HARMONIA_ERR_INVALID, "harmonia_update: unknown policy");
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
    upd_params p = {
        .insert_existing = config->insert_existing,
        .update_missing = config->update_missing,
        .split_fill = split_fill,
        .in_place_allowed = tree->mapping == NULL,
        .spare = config->free_previous_layout ? NULL : &tree->spare,
    };
    upd_result result;
    kr_error err = {{0}};
    int saved_threads = omp_get_max_threads();
    if (config->threads > 0)
        omp_set_num_threads(config->threads);
    st = upd_apply_batch(&tree->kr, &p, kinds, keys, values, count, &stats, &result, &err);
    omp_set_num_threads(saved_threads);
    if (st != HARMONIA_OK) {
        if (stats_out)
            stats_out->failed_operation =
                st == HARMONIA_ERR_KEY_EXISTS || st == HARMONIA_ERR_KEY_MISSING ? result.failed_op : UINT64_MAX;
        return hm_fail(tree, st, "%s", err.message);
    }
    if (!result.in_place) {
        if (tree->mapping || config->free_previous_layout) {
            hm_tree_release_storage(tree);
        } else { /* the old arrays are the next re-layout's destination */
            kr_tree_free_arrays(&tree->spare);
            tree->spare = tree->kr;
        }
        tree->kr = result.new_tree;
    }
    tree->version++;
    if (!config->skip_upload) {
        double t0 = omp_get_wtime();
        st = hm_gpu_sync(tree, result.in_place ? result.dirty_leaves : NULL, result.n_dirty,
                         result.ranks_changed, &stats.uploaded_bytes, &stats.incremental_upload);
        stats.upload_seconds = omp_get_wtime() - t0;
        if (st != HARMONIA_OK) {
            char message[sizeof tree->last_error];
            snprintf(message, sizeof message, "%s", tree->last_error);
            hm_gpu_release(tree);
            hm_fail(tree, st, "the batch was applied, but the device copy could not be synchronised (%s); "
                    "it was released and the next GPU query uploads the tree again", message);
        }
    }
    free(result.dirty_leaves);
    free(result.moves);
    if (stats_out)
        *stats_out = stats;
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
    hm_gpu_fill_info(tree, info);
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
