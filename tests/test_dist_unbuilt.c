/* test_dist_unbuilt.c — stands for the distributed-index tests in a build without MPI: skipped (77). */
#include <stdio.h>

int main(void)
{
    printf("SKIP: the distributed index needs MPI (install openmpi-bin and libopenmpi-dev, or -Dmpi=enabled)\n");
    return 77;
}
