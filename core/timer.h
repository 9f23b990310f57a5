/* The clock every pattern times with, and what it costs. */
#ifndef VS_TIMER_H
#define VS_TIMER_H

#include <stdint.h>
#include <time.h>


#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define VS_HAVE_TSC 1
#else
#define VS_HAVE_TSC 0
#endif

typedef struct vs_timer_info {
    const char *clock;     /* "CLOCK_MONOTONIC" or "tsc" */
    double resolution_ns;  /* smallest non-zero step observed */
    double cost_ns;        /* mean cost of one read */
    int use_tsc;           /* vs_timer_read reads the time-stamp counter */
    int tsc_invariant;     /* the CPU says constant_tsc and nonstop_tsc */
    double tsc_hz;         /* calibrated against CLOCK_MONOTONIC (0 when not) */
    double tsc_error_ppm;  /* spread of the calibrations, parts per million */
    double ns_per_tick;
    uint64_t tsc_base;     /* tick of vs_timer_read's zero */
} vs_timer_info_t;

static inline uint64_t vs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if VS_HAVE_TSC
static inline uint64_t vs_tsc_read(void)
{
    _mm_lfence(); /* earlier instructions finish before the counter is read */
    return __rdtsc();
}
#else
static inline uint64_t vs_tsc_read(void) { return 0; }
#endif

/* The run's clock (--clock): CLOCK_MONOTONIC, or the invariant time-stamp
 * counter scaled to ns.  Only differences between two reads mean anything. */
static inline uint64_t vs_timer_read(const vs_timer_info_t *t)
{
    if (t->use_tsc)
        return (uint64_t)((double)(vs_tsc_read() - t->tsc_base) * t->ns_per_tick);
    return vs_now_ns();
}

/* Measure resolution and cost of the clock (a few tens of milliseconds).
 * use_tsc selects the time-stamp counter, which must be invariant
 * (vs_tsc_invariant); it is calibrated against CLOCK_MONOTONIC. */
void vs_timer_calibrate(vs_timer_info_t *info, int use_tsc);

/* 1 when /proc/cpuinfo lists constant_tsc and nonstop_tsc (x86 only). */
int vs_tsc_invariant(void);
/* Ticks per second against CLOCK_MONOTONIC over `rounds` windows of
 * window_ms each; *error_ppm = largest departure of one window from the mean. */
double vs_tsc_calibrate(int rounds, int window_ms, double *error_ppm);

/* Round trips per sample so that one clock read costs under 1 % of a
 * sample, given an estimated round-trip time; at least 1, at most max_k. */
long vs_timer_batch_for(const vs_timer_info_t *info, double rtt_ns, long max_k);

#endif
