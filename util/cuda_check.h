/* util/cuda_check.h — the CUDA error check of the programs around the library (benchmarks, tests):
 * a failing call prints what failed, where, and exits — or calls the program's own handler, when it
 * defines UTIL_CUDA_ON_FAILURE(what, error, file, line) before including this. The library itself
 * never exits: it turns a CUDA error into a status (HM_CUDA, harmonia/gpu_engine.h). Header-only;
 * include after <cuda_runtime.h>. */
#ifndef HARMONIA_UTIL_CUDA_CHECK_H
#define HARMONIA_UTIL_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#ifndef UTIL_CUDA_ON_FAILURE
#define UTIL_CUDA_ON_FAILURE(what, error, file, line)                                             \
    (fprintf(stderr, "%s:%d: %s: %s\n", (file), (line), (what), cudaGetErrorString(error)), exit(1))
#endif

#define UTIL_CUDA_CHECK(call)                                                                     \
    do {                                                                                          \
        cudaError_t util_e_ = (call);                                                             \
        if (util_e_ != cudaSuccess)                                                               \
            UTIL_CUDA_ON_FAILURE(#call, util_e_, __FILE__, __LINE__);                             \
    } while (0)

#endif /* HARMONIA_UTIL_CUDA_CHECK_H */
