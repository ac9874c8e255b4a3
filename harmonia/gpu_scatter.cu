/* gpu_scatter.cu — the dirty leaves of an in-place batch to a device copy in one DMA: gathered on
 * the host into the pinned upload staging (leaf indices, keys, values; gpu_upload.cu owns the
 * buffers), sent, and put in place on the device by one kernel. When to use it (leaves scattered
 * thinly over the level) is copy_dirty's decision (gpu_tree.cu); the tuning is gpu_policy.h's. */
#include <assert.h>
#include <omp.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

/* Each gathered leaf i (words_per_leaf 16-byte words of keys, the same of values) to leaf
 * leaf_index[i] of the device level that starts at keys_out / values_out. Grid-stride. */
__global__ void hm_scatter_leaves_kernel(const uint64_t *__restrict__ leaf_index, const uint4 *__restrict__ keys_in,
                                         const uint4 *__restrict__ values_in, uint64_t n, uint32_t words_per_leaf,
                                         uint4 *__restrict__ keys_out, uint4 *__restrict__ values_out)
{
    const uint64_t total = n * words_per_leaf;
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < total;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t i = t / words_per_leaf, w = t - i * words_per_leaf;
        const uint64_t to = leaf_index[i] * words_per_leaf + w;
        keys_out[to] = keys_in[t];
        values_out[to] = values_in[t];
    }
}

static size_t align_16(size_t x) { return (x + 15) & ~(size_t)15; }

cudaError_t hm_scatter_dirty_leaves(hm_gpu *g, const kr_tree *t, void *d_keys, void *d_values,
                                    const uint64_t *dirty_leaves, uint64_t n_dirty, cudaStream_t stream,
                                    uint64_t *bytes, bool *done)
{
    *done = false;
    const size_t kb = t->key_bits / 8, leaf_bytes = (size_t)t->leaf_size * kb;
    const size_t leaf_base_bytes = (size_t)kr_leaf_key_offset(t, 0) * kb;
    /* 16-byte words: leaves of L >= 8 keys of >= 4 bytes, internal nodes likewise */
    if (n_dirty == 0 || leaf_bytes % 16 != 0 || leaf_base_bytes % 16 != 0 || !hm_upload_staging_ready(g))
        return cudaSuccess;
    const size_t per_leaf = 2 * leaf_bytes + sizeof(uint64_t);
    const uint64_t capacity = (HM_UPLOAD_CHUNK - 16) / per_leaf; /* leaves a chunk holds */
    const size_t scratch_bytes = n_dirty < capacity ? 16 + (size_t)n_dirty * per_leaf : HM_UPLOAD_CHUNK;
    void *scratch = NULL;
    if (hm_gpu_alloc_on(g, &scratch, scratch_bytes, stream) != cudaSuccess) {
        cudaGetLastError(); /* no room for the chunk on the device: the caller copies spans */
        return cudaSuccess;
    }
    hm_upload_staging *s = &g->upload;
    const uint32_t words = (uint32_t)(leaf_bytes / 16);
    cudaError_t e = cudaSuccess;
    for (uint64_t first = 0, i = 0; first < n_dirty && e == cudaSuccess; i++) {
        const uint64_t n = n_dirty - first < capacity ? n_dirty - first : capacity;
        const int b = (int)(i % HM_UPLOAD_BUFFERS);
        if (s->recorded[b]) /* its earlier DMA is done */
            e = cudaEventSynchronize(s->reusable[b]);
        if (e != cudaSuccess)
            break;
        char *buffer = (char *)s->buffer[b];
        const size_t keys_at = align_16(n * sizeof(uint64_t)), values_at = keys_at + n * leaf_bytes;
        const size_t used = values_at + n * leaf_bytes;
        assert(used <= scratch_bytes);
        uint64_t *index = (uint64_t *)buffer;
        const uint64_t *leaves = dirty_leaves + first;
        const char *host_keys = (const char *)t->keys + leaf_base_bytes, *host_values = (const char *)t->leaf_values;
#pragma omp parallel for schedule(static) num_threads(kr_resolve_threads(0)) if (n > 4096)
        for (int64_t k = 0; k < (int64_t)n; k++) {
            const uint64_t li = leaves[k];
            index[k] = li;
            memcpy(buffer + keys_at + (size_t)k * leaf_bytes, host_keys + li * leaf_bytes, leaf_bytes);
            memcpy(buffer + values_at + (size_t)k * leaf_bytes, host_values + li * leaf_bytes, leaf_bytes);
        }
        e = cudaMemcpyAsync(scratch, buffer, used, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess) {
            const uint64_t total = n * words;
            uint64_t blocks = (total + HM_SCATTER_BLOCK - 1) / HM_SCATTER_BLOCK;
            blocks = blocks < HM_SCATTER_MAX_BLOCKS ? blocks : HM_SCATTER_MAX_BLOCKS;
            hm_scatter_leaves_kernel<<<(unsigned)blocks, HM_SCATTER_BLOCK, 0, stream>>>(
                (const uint64_t *)scratch, (const uint4 *)((char *)scratch + keys_at),
                (const uint4 *)((char *)scratch + values_at), n, words, (uint4 *)((char *)d_keys + leaf_base_bytes),
                (uint4 *)d_values);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) /* the buffer and (in stream order) the scratch are free after this */
            e = cudaEventRecord(s->reusable[b], stream);
        s->recorded[b] = e == cudaSuccess;
        *bytes += used;
        first += n;
    }
    hm_gpu_free_on(g, scratch, scratch_bytes, stream);
    *done = e == cudaSuccess;
    return e;
}
