/* dist_device.c — which GPU a rank uses: its node-local rank modulo the GPUs it sees, or the one
 * the caller names, made current for the calling thread with the CUDA runtime (the public API of a
 * single tree has no device field; a tree uses the thread's current GPU). Nothing else of CUDA is
 * used by dist/. */
#include "dist_internal.h"

#ifdef HARMONIA_HAVE_CUDA
#include <cuda_runtime_api.h>

harmonia_status dst_choose_device(int requested, int local_rank, int *device_out, dst_err *err)
{
    *device_out = -1;
    if (requested == -2)
        return HARMONIA_OK;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
        cudaGetLastError(); /* no GPU: the local engine runs on the CPU (backend auto) */
        if (requested >= 0)
            return dst_fail(err, HARMONIA_ERR_NO_DEVICE, "GPU %d was asked for, but no GPU is usable",
                            requested);
        return HARMONIA_OK;
    }
    int device = requested >= 0 ? requested : local_rank % count;
    if (device >= count)
        return dst_fail(err, HARMONIA_ERR_NO_DEVICE, "GPU %d was asked for, but only %d are visible",
                        device, count);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return dst_fail(err, HARMONIA_ERR_DEVICE, "cudaSetDevice(%d): %s", device,
                        cudaGetErrorString(e));
    *device_out = device;
    return HARMONIA_OK;
}

#else

harmonia_status dst_choose_device(int requested, int local_rank, int *device_out, dst_err *err)
{
    (void)local_rank;
    *device_out = -1;
    if (requested >= 0)
        return dst_fail(err, HARMONIA_ERR_NO_DEVICE, "GPU %d was asked for, but this build has no CUDA",
                        requested);
    return HARMONIA_OK;
}

#endif
