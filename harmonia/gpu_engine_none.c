/* gpu_engine_none.c — the GPU engine of a build without CUDA: no device, every call says so. */
#include "harmonia/gpu_engine.h"
#include "harmonia/tree_internal.h"

#define NO_CUDA(tree) hm_fail(tree, HARMONIA_ERR_NO_DEVICE, "this build has no GPU engine (built without CUDA)")

bool hm_gpu_usable(void) { return false; }
harmonia_status hm_gpu_upload(harmonia_tree *tree) { return NO_CUDA(tree); }
void hm_gpu_release(harmonia_tree *tree) { (void)tree; }
void hm_gpu_forget(harmonia_tree *tree) { (void)tree; }
uint64_t hm_gpu_l2_bytes(harmonia_tree *tree) { (void)tree; return 0; }
harmonia_status hm_gpu_start_table(harmonia_tree *tree, bool fine, void *entries_out, uint64_t capacity,
                                   uint64_t *count_out, psa_plan *plan_out)
{
    (void)fine;
    (void)entries_out;
    (void)capacity;
    (void)plan_out;
    *count_out = 0;
    return NO_CUDA(tree);
}
harmonia_status hm_gpu_device_of(harmonia_tree *tree, int *device_out)
{
    (void)device_out;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_sync(harmonia_tree *tree, const kr_tree *next, const uint64_t *dirty_leaves, uint64_t n_dirty,
                            bool ranks_changed, bool skip, void (*publish)(void *context), void *context,
                            uint64_t *bytes_out, bool *incremental_out, bool *blocking_out)
{
    (void)next; (void)dirty_leaves; (void)n_dirty; (void)ranks_changed; (void)skip;
    *bytes_out = 0;
    *incremental_out = false;
    *blocking_out = false;
    pthread_mutex_lock(&tree->gpu_lock); /* never a device copy to bring up to date */
    publish(context);
    pthread_mutex_unlock(&tree->gpu_lock);
    return HARMONIA_OK;
}
void hm_gpu_fill_info(const harmonia_tree *tree, harmonia_tree_info *info) { (void)tree; (void)info; }

harmonia_status hm_gpu_lookup(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                              const void *queries, uint64_t count, void *values_out, uint8_t *found_out,
                              void *positions_out, bool positions32)
{
    (void)config; (void)async; (void)queries; (void)count; (void)values_out; (void)found_out; (void)positions_out;
    (void)positions32;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_lower_bound(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                   const void *queries, uint64_t count, void *keys_out, void *values_out,
                                   uint8_t *found_out)
{
    (void)config; (void)async; (void)queries; (void)count; (void)keys_out; (void)values_out; (void)found_out;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_range_count(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                   const void *lo, const void *hi, uint64_t count, uint64_t *counts_out)
{
    (void)config; (void)async; (void)lo; (void)hi; (void)count; (void)counts_out;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_range_offsets(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                     const void *lo, const void *hi, uint64_t count, uint64_t *offsets)
{
    (void)config; (void)async; (void)lo; (void)hi; (void)count; (void)offsets;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_range_collect(harmonia_tree *tree, const harmonia_query_config *config, bool async,
                                     const void *lo, uint64_t count, const uint64_t *offsets, void *keys_out,
                                     void *values_out)
{
    (void)config; (void)async; (void)lo; (void)count; (void)offsets; (void)keys_out; (void)values_out;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_workspace_bytes(harmonia_tree *tree, const harmonia_query_config *config,
                                       harmonia_query_kind kind, uint64_t count, size_t *device_bytes,
                                       size_t *pinned_bytes)
{
    (void)config; (void)kind; (void)count; (void)device_bytes; (void)pinned_bytes;
    return NO_CUDA(tree);
}

harmonia_status hm_gpu_build(harmonia_tree *tree, const struct kr_build_params *params, const void *keys,
                             const void *values, uint64_t count, bool device_arrays, void *stream,
                             struct kr_error *err)
{
    (void)params; (void)keys; (void)values; (void)count; (void)device_arrays; (void)stream; (void)err;
    return NO_CUDA(tree);
}

bool hm_gpu_is_device_pointer(const void *p, int *device_out)
{
    (void)p;
    *device_out = -1;
    return false;
}
