/* The CPU's time-stamp counter as a clock: where it is invariant (same rate
 * in every P-state and C-state, constant_tsc + nonstop_tsc), a read costs a
 * fraction of clock_gettime.  Its rate is measured against CLOCK_MONOTONIC. */
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int vs_tsc_invariant(void)
{
#if VS_HAVE_TSC
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[8192];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5))
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break; /* the first processor speaks for all */
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

/* A (monotonic ns, tick) pair read as close together as possible: the
 * tightest of a few brackets of a monotonic read between two tick reads. */
static void pair_read(double *ns, double *ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = vs_tsc_read();
        uint64_t t = vs_now_ns();
        uint64_t b = vs_tsc_read();
        if (b - a < best) {
            best = b - a;
            *ns = (double)t;
            *ticks = (double)a + (double)(b - a) / 2;
        }
    }
}

double vs_tsc_calibrate(int rounds, int window_ms, double *error_ppm)
{
    enum { MAX_ROUNDS = 16 };
    double hz[MAX_ROUNDS], sum = 0;
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    for (int r = 0; r < rounds; r++) {
        double n0 = 0, t0 = 0, n1 = 1, t1 = 0;
        pair_read(&n0, &t0);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)window_ms * 1000000L};
        nanosleep(&ts, NULL);
        pair_read(&n1, &t1);
        hz[r] = (t1 - t0) / (n1 - n0) * 1e9;
        sum += hz[r];
    }
    double mean = sum / rounds, worst = 0;
    for (int r = 0; r < rounds; r++)
        worst = fmax(worst, fabs(hz[r] - mean) / mean);
    *error_ppm = worst * 1e6;
    return mean;
}
