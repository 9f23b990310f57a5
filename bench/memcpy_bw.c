/* Plain memcpy bandwidth of one core, the yardstick for the shm transport's
 * large-message bandwidth.  Usage: memcpy_bw BYTES [REPS [PAIRS]]
 * Copies a BYTES-long buffer into another BYTES-long buffer REPS times after
 * a warm-up, and prints the median and best copy time and GB/s (10^9 B/s).
 * With PAIRS > 1 the copies go round PAIRS source/destination pairs, so the
 * working set is 2 x PAIRS x BYTES (a ping-pong with separate send and
 * receive buffers on two ranks touches 4 x BYTES: PAIRS=2). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BYTES [REPS [PAIRS]]\n", argv[0]);
        return 2;
    }
    size_t len = strtoull(argv[1], NULL, 0);
    long reps = argc > 2 ? atol(argv[2]) : 200;
    long pairs = argc > 3 ? atol(argv[3]) : 1;
    if (!len || reps < 1 || pairs < 1 || pairs > 64) {
        fprintf(stderr, "memcpy_bw: BYTES and REPS must be positive, PAIRS between 1 and 64\n");
        return 2;
    }
    unsigned char *src[64], *dst[64];
    uint64_t *t = calloc((size_t)reps, sizeof *t);
    for (long p = 0; p < pairs; p++) {
        src[p] = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
        dst[p] = aligned_alloc(4096, (len + 4095) / 4096 * 4096);
        if (!src[p] || !dst[p] || !t) {
            fprintf(stderr, "memcpy_bw: out of memory\n");
            return 1;
        }
        memset(src[p], 0x5a, len);
        memset(dst[p], 0, len);
    }
    for (long i = 0; i < reps / 10 + 2; i++)
        memcpy(dst[i % pairs], src[i % pairs], len);
    for (long i = 0; i < reps; i++) {
        unsigned char *d = dst[i % pairs];
        uint64_t t0 = now_ns();
        memcpy(d, src[i % pairs], len);
        __asm__ volatile("" ::"r"(d) : "memory");
        t[i] = now_ns() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_u64);
    double med = (double)t[reps / 2], best = (double)t[0];
    printf("bytes=%zu reps=%ld pairs=%ld median_ns=%.0f best_ns=%.0f median_GBps=%.2f best_GBps=%.2f "
           "check=%d\n", len, reps, pairs, med, best, (double)len / med, (double)len / best, dst[0][len - 1]);
    return 0;
}
