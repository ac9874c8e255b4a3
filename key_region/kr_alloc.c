/* kr_alloc.c — the allocator of the layout components and the updater, with a failure hook so that
 * tests can make the n-th allocation fail and check that nothing changed (atomic batches); the hook
 * exists only where the file is compiled with HARMONIA_TEST_HOOKS (the tests' build of it). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "key_region/key_region.h"

#ifdef HARMONIA_TEST_HOOKS
/* Allocations left before one fails; negative = never. Set by tests from one thread. Only in the
 * test build of this file (meson: the kr_alloc_test library); the installed library has no hook. */
static long allocations_before_failure = -1;

void kr_test_fail_allocation_after(long allocations)
{
    allocations_before_failure = allocations;
}
#define KR_FAIL_THIS_ALLOCATION() (allocations_before_failure >= 0 && allocations_before_failure-- == 0)
#else
#define KR_FAIL_THIS_ALLOCATION() 0
#endif

/* Arrays of at least this size are aligned to 2 MiB and advised to use transparent huge pages:
 * first-touch page faults of a fresh 1 GiB key region then cost 512 faults instead of 262144. */
#define KR_HUGE_PAGE (2u << 20)
#define KR_LARGE_ALLOCATION (8u << 20)

void *kr_malloc(size_t bytes)
{
    if (KR_FAIL_THIS_ALLOCATION())
        return NULL;
    if (bytes >= KR_LARGE_ALLOCATION) {
        void *p = NULL;
        size_t rounded = (bytes + KR_HUGE_PAGE - 1) / KR_HUGE_PAGE * KR_HUGE_PAGE;
        if (posix_memalign(&p, KR_HUGE_PAGE, rounded) != 0)
            return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
        return p;
    }
    return malloc(bytes ? bytes : 1);
}

void *kr_calloc(size_t count, size_t size)
{
    if (count && size && count > SIZE_MAX / size)
        return NULL;
    size_t bytes = count * size;
    void *p = kr_malloc(bytes);
    if (p && bytes)
        memset(p, 0, bytes);
    return p;
}
