/* What the bench's C yardsticks share (and the one-sided truth test's
 * memcpy_window): the clock they time with, the order they sort samples in,
 * and pinning the calling process to one CPU. */
#ifndef VERSUS_BENCH_UTIL_H
#define VERSUS_BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* qsort order of uint64_t samples, smallest first */
static inline int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Pin the calling process to `cpu`; -1 after saying why, as `who`. */
static inline int pin_cpu(int cpu, const char *who)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        fprintf(stderr, "%s: cannot run on CPU %d: ", who, cpu);
        perror("sched_setaffinity");
        return -1;
    }
    return 0;
}

/* Both CPUs usable by this process?  (Checked before forking, so that
 * neither process waits for a partner that could not start.)  Leaves the
 * caller on cpu0. */
static inline int pin_both(int cpu0, int cpu1, const char *who)
{
    return pin_cpu(cpu1, who) || pin_cpu(cpu0, who) ? -1 : 0;
}

/* The partner of a two-process yardstick: the child the parent forked, or
 * the parent the child was forked by. */
static pid_t bench_child __attribute__((unused)), bench_parent __attribute__((unused));

/* Called every so many polls of a spin: ends this process, saying so, when
 * its partner is gone (it would otherwise spin for ever). */
static inline void bench_partner_check(const char *who)
{
    int gone = bench_child ? waitpid(bench_child, NULL, WNOHANG) != 0 : getppid() != bench_parent;
    if (gone) {
        fprintf(stderr, "%s: the %s process exited\n", who, bench_child ? "second" : "first");
        _exit(1);
    }
}

#endif
