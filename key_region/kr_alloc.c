/* kr_alloc.c — the allocator of the layout components and the updater, with a failure hook so that
 * tests can make the n-th allocation fail and check that nothing changed (atomic batches). */
#include <stdlib.h>

#include "key_region/key_region.h"

/* Allocations left before one fails; negative = never. Set by tests from one thread. */
static long allocations_before_failure = -1;

void kr_test_fail_allocation_after(long allocations)
{
    allocations_before_failure = allocations;
}

void *kr_malloc(size_t bytes)
{
    if (allocations_before_failure >= 0 && allocations_before_failure-- == 0)
        return NULL;
    return malloc(bytes ? bytes : 1);
}

void *kr_calloc(size_t count, size_t size)
{
    if (allocations_before_failure >= 0 && allocations_before_failure-- == 0)
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}
