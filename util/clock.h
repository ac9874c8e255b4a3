/* util/clock.h — the monotonic clock of the project's host code (the library's waits, the tool's
 * timings): seconds as a double. The one copy; header-only. */
#ifndef HARMONIA_UTIL_CLOCK_H
#define HARMONIA_UTIL_CLOCK_H

#include <time.h>

static inline double util_now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif /* HARMONIA_UTIL_CLOCK_H */
