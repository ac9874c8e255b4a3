/* stage_probe.h — session 27 measurement only (never in the library): host time between stages of a call. */
#ifndef HM_STAGE_PROBE_H
#define HM_STAGE_PROBE_H
#include <time.h>
#ifdef __cplusplus
extern "C" {
#endif
extern double hm_probe_acc[16];
extern unsigned long long hm_probe_hits[16];
extern __thread double hm_probe_last;
static inline double hm_probe_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}
static inline void hm_stage(int k)
{
    const double t = hm_probe_now();
    if (k > 0) {
        hm_probe_acc[k] += t - hm_probe_last;
        hm_probe_hits[k]++;
    }
    hm_probe_last = hm_probe_now();
}
#ifdef __cplusplus
}
#endif
#endif
