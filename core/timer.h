/* The clock every pattern times with, and what it costs. */
#ifndef VS_TIMER_H
#define VS_TIMER_H

#include <stdint.h>
#include <time.h>

typedef struct vs_timer_info {
    const char *clock;     /* "CLOCK_MONOTONIC" */
    double resolution_ns;  /* smallest non-zero step observed */
    double cost_ns;        /* mean cost of one read */
} vs_timer_info_t;

static inline uint64_t vs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Measure resolution and cost of vs_now_ns (a few milliseconds). */
void vs_timer_calibrate(vs_timer_info_t *info);

/* Round trips per sample so that one clock read costs under 1 % of a
 * sample, given an estimated round-trip time; at least 1, at most max_k. */
long vs_timer_batch_for(const vs_timer_info_t *info, double rtt_ns, long max_k);

#endif
