#include "timer.h"

#include <math.h>

void vs_timer_calibrate(vs_timer_info_t *info, int use_tsc)
{
    *info = (vs_timer_info_t){.clock = "CLOCK_MONOTONIC", .tsc_invariant = vs_tsc_invariant()};
    if (use_tsc && info->tsc_invariant) {
        info->tsc_hz = vs_tsc_calibrate(5, 10, &info->tsc_error_ppm);
        info->ns_per_tick = 1e9 / info->tsc_hz;
        info->tsc_base = vs_tsc_read();
        info->use_tsc = 1;
        info->clock = "tsc";
    }
    /* cost: best of several blocks of back-to-back reads (the machine is noisy) */
    enum { BLOCK = 20000, BLOCKS = 7 };
    double best = INFINITY;
    for (int b = 0; b < BLOCKS; b++) {
        uint64_t t0 = vs_timer_read(info), t = t0;
        for (int i = 0; i < BLOCK; i++)
            t = vs_timer_read(info);
        double per = (double)(t - t0) / BLOCK;
        if (per < best)
            best = per;
    }
    info->cost_ns = best;
    /* resolution: smallest non-zero difference between consecutive reads */
    uint64_t step = UINT64_MAX;
    for (int i = 0; i < 200000 && step > 1; i++) {
        uint64_t a = vs_timer_read(info), b;
        while ((b = vs_timer_read(info)) == a)
            ;
        if (b - a < step)
            step = b - a;
    }
    info->resolution_ns = (double)step;
}

long vs_timer_batch_for(const vs_timer_info_t *info, double rtt_ns, long max_k)
{
    /* one read per sample: cost / (K * rtt) < 1 %  <=>  K > 100 * cost / rtt */
    double floor_ns = info->cost_ns > info->resolution_ns ? info->cost_ns : info->resolution_ns;
    if (!(rtt_ns > 0))
        return max_k;
    double k = ceil(100.0 * floor_ns / rtt_ns);
    if (k < 1)
        k = 1;
    if (k > (double)max_k)
        k = (double)max_k;
    return (long)k;
}

