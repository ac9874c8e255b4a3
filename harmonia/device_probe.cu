/* device_probe.cu — the GPU probe (harmonia_device_probe): name, SM count, L2, memory of the calling
 * thread's current device, or the CUDA runtime's reason why there is none. The current device is
 * left as it was. The search kernels live in ntg/. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "harmonia/tree_internal.h"
}

extern "C" harmonia_status harmonia_device_probe(harmonia_device_info *info)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error of a failed init */
        return hm_fail(NULL, HARMONIA_ERR_NO_DEVICE, "%s", cudaGetErrorString(e));
    }
    if (count == 0)
        return hm_fail(NULL, HARMONIA_ERR_NO_DEVICE, "no CUDA-capable device is detected");
    int device = 0;
    e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return hm_fail(NULL, HARMONIA_ERR_DEVICE, "cudaGetDevice: %s", cudaGetErrorString(e));
    cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess)
        return hm_fail(NULL, HARMONIA_ERR_DEVICE, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    size_t free_bytes = 0, total_bytes = 0;
    e = cudaMemGetInfo(&free_bytes, &total_bytes); /* of the current device, the one probed */
    if (e != cudaSuccess)
        return hm_fail(NULL, HARMONIA_ERR_DEVICE, "cudaMemGetInfo: %s", cudaGetErrorString(e));
    if (info) {
        memset(info, 0, sizeof *info);
        snprintf(info->name, sizeof info->name, "%s", prop.name);
        info->device = device;
        info->sm_count = prop.multiProcessorCount;
        info->compute_major = prop.major;
        info->compute_minor = prop.minor;
        info->l2_bytes = (uint64_t)prop.l2CacheSize;
        info->global_memory_bytes = (uint64_t)prop.totalGlobalMem;
        info->free_memory_bytes = (uint64_t)free_bytes;
        info->constant_memory_bytes = (uint64_t)prop.totalConstMem;
    }
    return HARMONIA_OK;
}
