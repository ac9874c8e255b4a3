/* ntg_start.cu — the build of the start table (ntg.h, THE START TABLE): one thread a bucket descends
 * the bucket's smallest and largest keys from the root, one thread a query and the same node
 * search as every descent (group_count, G = 1; each level's children from its closed form), and
 * keeps the deepest level at which the two paths are at most one node apart. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "ntg/ntg_device.cuh"

static_assert(sizeof(ntg_start_entry) == 16, "an entry is one 16-byte load (ntg_device.cuh, start_of)");

namespace {

/* The path of q from the root: path[l] = its node at level l, l < height (the last a leaf's node
 * number, the leaves counted after the internal nodes). */
template <typename K>
__device__ __forceinline__ void path_of(const ntg_view &v, K q, uint32_t *path)
{
    const K *keys = static_cast<const K *>(v.keys);
    uint32_t node = 0;
    path[0] = 0;
    for (uint32_t level = 0; level + 1 < v.height; level++) {
        uint32_t last;
        const uint32_t first = ps_level_children(&v.levels[level], node, &last);
        const uint32_t j = group_count<K, 1, false, false>(keys + (uint64_t)node * v.fanout, v.fanout, q, 0, 0);
        node = first + (j < last ? j : last);
        path[level + 1] = node;
    }
}

template <typename K>
__global__ void __launch_bounds__(128) start_kernel(const ntg_view v, psa_plan plan, ntg_start_entry *__restrict__ table,
                                                    uint32_t entries)
{
    const K *keys = static_cast<const K *>(v.keys);
    uint32_t lo_path[NTG_MAX_LEVELS], hi_path[NTG_MAX_LEVELS];
    for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < entries; u += gridDim.x * blockDim.x) {
        /* the bucket's keys: [start(u), start(u + 1) - 1]; the first bucket from 0 (keys below the
         * span), the last to the largest key value (keys above it); psa.h, psa_bucket_start */
        const K lo = u == 0 ? (K)0 : (K)psa_bucket_start(&plan, u);
        K hi = u + 1 == entries ? max_key_of<K>() : (K)(psa_bucket_start(&plan, u + 1) - 1);
        if (hi < lo) /* a bucket no key reaches (its start saturated at the span's end) */
            hi = lo;
        path_of<K>(v, lo, lo_path);
        path_of<K>(v, hi, hi_path);
        uint32_t level = v.height - 1;
        while (level > 0 && hi_path[level] - lo_path[level] > 1)
            level--;
        ntg_start_entry e;
        e.node = lo_path[level];
        e.level = level;
        e.separator = 0;
        if (hi_path[level] != lo_path[level]) {
            /* the last common node (level d) sent lo to child j and hi to child j + 1: keys from
             * its key j on take the second path */
            uint32_t d = level - 1;
            while (lo_path[d] != hi_path[d])
                d--;
            uint32_t last;
            const uint32_t first = ps_level_children(&v.levels[d], lo_path[d], &last);
            e.separator = (uint64_t)__ldg(keys + (uint64_t)lo_path[d] * v.fanout + (lo_path[d + 1] - first));
            e.level |= NTG_START_TWO;
        }
        table[u] = e;
    }
}

} // namespace

extern "C" cudaError_t ntg_build_start_table(const ntg_view *view, const psa_plan *plan, ntg_start_entry *table,
                                             cudaStream_t stream)
{
    if (view->n_keys == 0 || view->height < 2 || view->height > NTG_MAX_LEVELS || plan->bits > 31 || !table)
        return cudaErrorInvalidValue;
    ntg_view v = *view;
    v.start = NULL; /* the paths from the root */
    const uint32_t entries = 1u << plan->bits;
    const unsigned blocks = (entries + 127) / 128 < 2048 ? (entries + 127) / 128 : 2048;
    if (v.key_bits == 32)
        start_kernel<uint32_t><<<blocks, 128, 0, stream>>>(v, *plan, table, entries);
    else
        start_kernel<uint64_t><<<blocks, 128, 0, stream>>>(v, *plan, table, entries);
    return cudaGetLastError();
}
