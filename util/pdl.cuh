/* util/pdl.cuh — programmatic dependent launch (sm_90 and up): a kernel launched with
 * util_pdl_launch may be scheduled while the kernel before it in the stream is still running, once
 * every block of that kernel has called util_pdl_trigger (or exited); it must call util_pdl_wait
 * before it touches any memory that earlier work in the stream writes or reads, and the wait
 * returns once that work has completed and its writes are visible. What this buys: the launch and
 * the first wave's scheduling overlap the last wave of the kernel before, instead of following it
 * (a few microseconds a boundary in a chain of kernels; bench/NOTES.md, "Session 32").
 *
 * Rules, for every kernel that calls these:
 * - util_pdl_wait first, before any global or constant-memory access that depends on earlier work
 *   (the kernel is then correct however it was launched: without a programmatic dependency the wait
 *   returns at once);
 * - util_pdl_trigger anywhere (here: right after the wait); a kernel that never calls it triggers
 *   when it exits. Triggering early never lets a dependent read unfinished results: the dependent's
 *   wait is for the whole grid's completion, not for the trigger.
 * Older architectures compile both to nothing, and util_pdl_launch launches plainly on devices
 * below compute capability 9.0. The one copy for the library's kernels (psa/, ntg/). Header-only,
 * CUDA C++ only. HARMONIA_PDL = 0 (an A/B build) launches everything plainly. */
#ifndef HARMONIA_UTIL_PDL_CUH
#define HARMONIA_UTIL_PDL_CUH

#include <cuda_runtime.h>

#include <utility>

#ifndef HARMONIA_PDL
#define HARMONIA_PDL 1
#endif

__device__ __forceinline__ void util_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void util_pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Whether the current device runs programmatic dependent launches (compute capability 9.0 and up;
 * false where the query fails, which then launches plainly). */
static inline bool util_pdl_supported()
{
    int device = 0, major = 0;
    if (!HARMONIA_PDL || cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return major >= 9;
}

/* kernel<<<grid, block, shared_bytes, stream>>>(args...), allowed to start before the previous
 * kernel of the stream ends (see above; the kernel must call util_pdl_wait first). Returns the
 * launch's error, which cudaGetLastError also reports. */
template <typename... Params, typename... Args>
static cudaError_t util_pdl_launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                                   cudaStream_t stream, Args &&...args)
{
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = util_pdl_supported() ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

#endif /* HARMONIA_UTIL_PDL_CUH */
