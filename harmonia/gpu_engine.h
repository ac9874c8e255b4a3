/* gpu_engine.h — what the front (tree.c) calls of the GPU engine: the device copy's life cycle and
 * the query pipelines. Implemented by gpu_tree.cu and gpu_query.cu where CUDA is built, and by
 * gpu_engine_none.c (every call answers NO_DEVICE) where it is not. Internal. */
#ifndef HARMONIA_GPU_ENGINE_H
#define HARMONIA_GPU_ENGINE_H

#include "harmonia.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a GPU is usable (probed once per process). */
bool hm_gpu_usable(void);

harmonia_status hm_gpu_upload(harmonia_tree *tree);

/* After an update batch: brings the device copy (if any) to the tree's version. With dirty leaves
 * (the shape unchanged), only their keys and values go up, plus the leaf ranks when counts changed;
 * without, the whole tree is uploaded again. *bytes_out gets the bytes sent, *incremental_out
 * whether it was incremental. A tree without a device copy is left without one. */
harmonia_status hm_gpu_sync(harmonia_tree *tree, const uint64_t *dirty_leaves, uint64_t n_dirty,
                            bool ranks_changed, uint64_t *bytes_out, bool *incremental_out);
void hm_gpu_release(harmonia_tree *tree);
void hm_gpu_fill_info(const harmonia_tree *tree, harmonia_tree_info *info);

/* positions_out NULL: results in the queries' order; else in PSA order with positions. */
harmonia_status hm_gpu_lookup(harmonia_tree *tree, const harmonia_query_config *config,
                              const void *queries, uint64_t count, void *values_out,
                              uint8_t *found_out, uint64_t *positions_out);
harmonia_status hm_gpu_lower_bound(harmonia_tree *tree, const harmonia_query_config *config,
                                   const void *queries, uint64_t count, void *keys_out,
                                   void *values_out, uint8_t *found_out);
harmonia_status hm_gpu_range_count(harmonia_tree *tree, const harmonia_query_config *config,
                                   const void *lo, const void *hi, uint64_t count,
                                   uint64_t *counts_out);
/* Phase 1 of range collect: offsets[0 .. count]. */
harmonia_status hm_gpu_range_offsets(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *lo, const void *hi, uint64_t count,
                                     uint64_t *offsets);
/* Phase 2 of range collect. */
harmonia_status hm_gpu_range_collect(harmonia_tree *tree, const harmonia_query_config *config,
                                     const void *lo, uint64_t count, const uint64_t *offsets,
                                     void *keys_out, void *values_out);

#ifdef __cplusplus
}
#endif
#endif /* HARMONIA_GPU_ENGINE_H */
