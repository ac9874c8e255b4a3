/* gpu_upload.cu — host arrays to a tree's device copy at the pinned rate. A cudaMemcpy from
 * pageable memory goes through the driver's own small staging at 6-7 GB/s on the H100 machine
 * (1.14 GB in 0.16-0.20 s); from pinned memory it runs at 54 GB/s. The tree's arrays are malloc'd
 * (and reused by re-layouts), so an upload copies them through a few pinned buffers of its own:
 * OpenMP threads fill buffer b while the DMA of the buffer before runs, and an event recorded after
 * each buffer's DMA says when it may be refilled. The buffers stay with the tree (hm_gpu.upload,
 * carried across re-uploads), so repeated update batches pay their allocation once. Nothing here
 * waits for anything but this copy's own stream. */
#include <assert.h>
#include <cuda.h> /* the driver's types, for the entry point of cuPointerGetAttributes */
#include <omp.h>
#include <pthread.h>
#include <string.h>

#include "harmonia/gpu_internal.h"

/* --- where an array lives ----------------------------------------------------------------------
 * One driver query a pointer: cuPointerGetAttributes (memory type, managed, device ordinal), found
 * once through the runtime's driver entry points (no link to libcuda), 0.07-0.08 us on the H100
 * machine against 0.17-0.18 for the runtime's cudaPointerGetAttributes (bench/NOTES.md, "What a
 * small batch's classification costs" and "The start table"): a call with arrays of unknown kind
 * asks three times. The driver answers for UVA pointers whatever the current context, but a
 * thread with none current, a driver without the entry points, or an answer outside the four
 * kinds takes the runtime's query, as before. Pageable memory the driver does not know reads as
 * host. */
typedef CUresult (*hm_pointer_attributes_fn)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
typedef CUresult (*hm_current_context_fn)(CUcontext *);
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static hm_pointer_attributes_fn driver_attributes;
static hm_current_context_fn driver_current;

static void find_driver_entry_points(void)
{
#if CUDART_VERSION >= 12050 /* cudaGetDriverEntryPointByVersion; older toolkits ask the runtime */
    void *attributes = NULL, *current = NULL;
    cudaDriverEntryPointQueryResult found_a = cudaDriverEntryPointSymbolNotFound, found_c = found_a;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttributes", &attributes, 12000, cudaEnableDefault, &found_a) ==
            cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &current, 12000, cudaEnableDefault, &found_c) ==
            cudaSuccess &&
        found_a == cudaDriverEntryPointSuccess && found_c == cudaDriverEntryPointSuccess && attributes && current) {
        driver_current = (hm_current_context_fn)current;
        driver_attributes = (hm_pointer_attributes_fn)attributes;
    }
    cudaGetLastError(); /* (a lookup that failed leaves no error behind; a sticky one stays) */
#endif
}

/* The driver's answer, or false where the runtime must be asked. */
static bool where_by_driver(const void *p, hm_pointer_kind *kind, int *device_out)
{
    pthread_once(&driver_once, find_driver_entry_points);
    CUcontext context = NULL;
    if (!driver_attributes || driver_current(&context) != CUDA_SUCCESS || !context)
        return false;
    unsigned int type = 0;
    int ordinal = -1;
    unsigned int managed = 0; /* the driver's boolean: zeroed whole, whatever width it writes */
    CUpointer_attribute what[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[3] = {&type, &managed, &ordinal};
    if (driver_attributes(3, what, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return false;
    if (managed) {
        *kind = HM_POINTER_MANAGED;
        *device_out = ordinal;
    } else if (type == CU_MEMORYTYPE_DEVICE) {
        *kind = HM_POINTER_DEVICE;
        *device_out = ordinal;
    } else if (type == CU_MEMORYTYPE_HOST) {
        *kind = HM_POINTER_PINNED_HOST;
    } else if (type == 0) {
        *kind = HM_POINTER_HOST; /* not a pointer the driver knows */
    } else {
        return false;
    }
    return true;
}

hm_pointer_kind hm_pointer_where(const void *p, int *device_out)
{
    *device_out = -1;
    hm_pointer_kind kind;
    if (p && where_by_driver(p, &kind, device_out))
        return kind;
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
