/* gpu_upload.cu — host arrays to a tree's device copy at the pinned rate. A cudaMemcpy from
 * pageable memory goes through the driver's own small staging at 6-7 GB/s on the H100 machine
 * (1.14 GB in 0.16-0.20 s); from pinned memory it runs at 54 GB/s. The tree's arrays are malloc'd
 * (and reused by re-layouts), so an upload copies them through a few pinned buffers of its own:
 * OpenMP threads fill buffer b while the DMA of the buffer before runs, and an event recorded after
 * each buffer's DMA says when it may be refilled. The buffers stay with the tree (hm_gpu.upload,
 * carried across re-uploads), so repeated update batches pay their allocation once. Nothing here
 * waits for anything but this copy's own stream. */
#include <assert.h>
#include <omp.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

/* --- where an array lives ----------------------------------------------------------------------
 * One cudaPointerGetAttributes a pointer: 0.10 us on the H100 machine (bench/NOTES.md, "Where the
 * small call's time does go"; the driver's cuPointerGetAttribute of the memory type alone, 0.07-0.08
 * us, is not worth a second path). Pageable memory the driver does not know reads as host. */
hm_pointer_kind hm_pointer_where(const void *p, int *device_out)
{
    *device_out = -1;
    cudaPointerAttributes a;
    if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return HM_POINTER_HOST;
    }
    switch (a.type) {
    case cudaMemoryTypeManaged:
        *device_out = a.device;
        return HM_POINTER_MANAGED;
    case cudaMemoryTypeDevice:
        *device_out = a.device;
        return HM_POINTER_DEVICE;
    case cudaMemoryTypeHost:
        return HM_POINTER_PINNED_HOST;
    default:
        return HM_POINTER_HOST;
    }
}

bool hm_is_pinned_host(const void *p)
{
    int device;
    return hm_pointer_where(p, &device) == HM_POINTER_PINNED_HOST;
}

void hm_upload_staging_free(hm_gpu *g)
{
    hm_upload_staging *s = &g->upload;
    for (int b = 0; b < HM_UPLOAD_BUFFERS; b++) {
        if (s->recorded[b])
            cudaEventSynchronize(s->reusable[b]);
        hm_gpu_free_pinned(g, s->buffer[b], HM_UPLOAD_CHUNK);
        if (s->reusable[b])
            cudaEventDestroy(s->reusable[b]);
        s->buffer[b] = NULL;
        s->reusable[b] = NULL;
        s->recorded[b] = false;
    }
    cudaGetLastError();
}

/* The buffers, made on first use; false (and pageable copies from then on) when they cannot be. */
static bool have_staging(hm_gpu *g)
{
    hm_upload_staging *s = &g->upload;
    if (s->failed)
        return false;
    if (s->buffer[HM_UPLOAD_BUFFERS - 1])
        return true;
    cudaError_t e = cudaSuccess;
    for (int b = 0; b < HM_UPLOAD_BUFFERS && e == cudaSuccess; b++) {
        e = hm_gpu_alloc_pinned(g, &s->buffer[b], HM_UPLOAD_CHUNK);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&s->reusable[b], cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        hm_upload_staging_free(g);
        s->failed = true;
        return false;
    }
    return true;
}

bool hm_upload_staging_ready(hm_gpu *g)
{
    return have_staging(g);
}

cudaError_t hm_upload(hm_gpu *g, void *dst, const void *src, size_t bytes, cudaStream_t stream, int threads)
{
    if (bytes == 0)
        return cudaSuccess;
    if (bytes < HM_UPLOAD_STAGED_MIN || hm_is_pinned_host(src) || !have_staging(g))
        return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
    hm_upload_staging *s = &g->upload;
    cudaError_t e = cudaSuccess;
    for (size_t off = 0, i = 0; off < bytes && e == cudaSuccess; i++) {
        const size_t n = bytes - off < HM_UPLOAD_CHUNK ? bytes - off : HM_UPLOAD_CHUNK;
        const int b = (int)(i % HM_UPLOAD_BUFFERS);
        if (s->recorded[b]) /* its earlier DMA (of this upload or the one before) is done */
            e = cudaEventSynchronize(s->reusable[b]);
        if (e != cudaSuccess)
            break;
        kr_parallel_copy(s->buffer[b], (const char *)src + off, n, threads);
        e = cudaMemcpyAsync((char *)dst + off, s->buffer[b], n, cudaMemcpyHostToDevice, stream);
        if (e == cudaSuccess)
            e = cudaEventRecord(s->reusable[b], stream);
        s->recorded[b] = e == cudaSuccess;
        off += n;
    }
    return e;
}
