/* The yardstick of the one-sided truth test: what a window of puts over shm
 * does, minus the transport.  Copies one BYTES-long source into one
 * BYTES-long destination WINDOW times per sample, SAMPLES samples after a
 * warm-up of WARMUP windows, timing each window with CLOCK_MONOTONIC as
 * versus-run times one (bench/memcpy_bw.c times single copies instead).
 * Both buffers are page-aligned and touched first, as core's are.
 * Prints: median_ns=... p10_ns=... best_ns=... (per window; p10: the 10th percentile).
 * Usage: memcpy_window BYTES WINDOW SAMPLES WARMUP */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../bench/bench_util.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s BYTES WINDOW SAMPLES WARMUP\n", argv[0]);
        return 2;
    }
    size_t len = strtoull(argv[1], NULL, 0);
    long window = atol(argv[2]), samples = atol(argv[3]), warmup = atol(argv[4]);
    if (!len || window < 1 || samples < 1 || warmup < 0) {
        fprintf(stderr, "memcpy_window: BYTES, WINDOW and SAMPLES must be positive\n");
        return 2;
    }
    size_t alloc = (len + 4095) / 4096 * 4096;
    unsigned char *src = aligned_alloc(4096, alloc), *dst = aligned_alloc(4096, alloc);
    uint64_t *t = calloc((size_t)samples, sizeof *t);
    if (!src || !dst || !t) {
        fprintf(stderr, "memcpy_window: out of memory\n");
        return 1;
    }
    memset(src, 0xa5, alloc);
    memset(dst, 0xa5, alloc);
    for (long i = 0; i < warmup * window; i++) {
        memcpy(dst, src, len);
        __asm__ volatile("" ::"r"(dst) : "memory");
    }
    for (long s = 0; s < samples; s++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < window; i++) {
            memcpy(dst, src, len);
            __asm__ volatile("" ::"r"(dst) : "memory");
        }
        t[s] = now_ns() - t0;
    }
    qsort(t, (size_t)samples, sizeof *t, cmp_u64);
    printf("median_ns=%llu p10_ns=%llu best_ns=%llu\n", (unsigned long long)t[samples / 2],
           (unsigned long long)t[samples / 10], (unsigned long long)t[0]);
    free(t);
    free(dst);
    free(src);
    return 0;
}
