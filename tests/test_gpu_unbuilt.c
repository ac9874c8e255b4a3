/* test_gpu_unbuilt.c — stands for the GPU tests in a build without CUDA: always skipped (77). */
#include <stdio.h>

int main(void)
{
    printf("SKIP: the GPU tests need a build with CUDA (nvcc not found or -Dcuda=disabled)\n");
    return 77;
}
