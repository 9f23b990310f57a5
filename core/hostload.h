/* What the host did besides the run, read from /proc on rank 0's host.
 *
 * The measuring CPUs are those the ranks on rank 0's host are bound to (all
 * CPUs rank 0 may use when versus did not bind).  Between two snapshots:
 *   others = CPU time spent on the measuring CPUs by anything but this
 *            run's ranks on the host, over the time those CPUs were there
 *            (busy ticks of /proc/stat minus the ranks' utime + stime from
 *            /proc/PID/stat, over all ticks): 0 on a quiet host, 0.5 when
 *            every rank shares its CPU with one CPU-bound process;
 *   steal  = steal ticks over all ticks (a virtual machine's CPUs taken by
 *            the hypervisor);
 *   waited = the time the ranks were ready to run but had no CPU, over
 *            their number times the wall time (/proc/PID/schedstat, in ns):
 *            0 when each rank has its CPU, 0.5 when each shares it with one
 *            CPU-bound process.
 * others and steal count USER_HZ ticks (10 ms): they are given only over
 * VS_HOSTLOAD_MIN_TICKS or more (a visit of a few milliseconds would read 0
 * or 1); waited is exact at any span.  Snapshots cost one read of
 * /proc/stat and two of each rank's /proc/PID, never in a timed loop. */
#ifndef VS_HOSTLOAD_H
#define VS_HOSTLOAD_H

#include <stddef.h>
#include <stdint.h>

#define VS_HOSTLOAD_MAX 64 /* measuring CPUs and local ranks followed (more are left out) */
#define VS_HOSTLOAD_MIN_TICKS 100 /* ticks over all measuring CPUs (1 s of CPU time at USER_HZ 100) */
#define VS_HOSTLOAD_RUN_TICKS 10  /* the same for a whole run's figure */

typedef struct vs_hostload_snap {
    uint64_t busy, steal, total; /* ticks over the measuring CPUs */
    uint64_t ours;               /* ticks of this run's ranks on the host */
    uint64_t wait_ns;            /* the ranks' time runnable without a CPU (schedstat) */
    uint64_t t_ns;               /* CLOCK_MONOTONIC */
    int ok, waits_ok;
} vs_hostload_snap_t;

typedef struct vs_hostload {
    int ncpu, cpus[VS_HOSTLOAD_MAX];
    int npid, pids[VS_HOSTLOAD_MAX];
    vs_hostload_snap_t start;
    double loadavg[3];           /* at the start */
    int running, ncpu_online;    /* runnable tasks (from /proc/loadavg) and online CPUs at the start */
} vs_hostload_t;

/* Follow cpus (the measuring CPUs) and pids (this run's ranks on the host);
 * takes the start snapshot and load averages.  Returns 0, or -ENOENT when
 * /proc/stat could not be read (the run records no load then). */
int vs_hostload_init(vs_hostload_t *h, const int *cpus, int ncpu, const int *pids, int npid);

void vs_hostload_take(const vs_hostload_t *h, vs_hostload_snap_t *s);

typedef struct vs_hostload_span {
    double others, steal, waited; /* NaN: unknown, or others and steal over too few ticks */
} vs_hostload_span_t;

/* The load between a and b, npid ranks followed; others and steal only over
 * min_ticks or more (VS_HOSTLOAD_MIN_TICKS for a visit; a whole run may take fewer). */
void vs_hostload_between(const vs_hostload_snap_t *a, const vs_hostload_snap_t *b, int npid, uint64_t min_ticks,
                         vs_hostload_span_t *out);

/* The fields of /proc/PID/stat after the command name (field 3, the state, on): buf
 * holds the file, the return points into it; NULL when the process is gone.  The
 * name in parentheses may hold anything, so the fields start after its last ')'. */
const char *vs_proc_stat_fields(int pid, char *buf, size_t len);

/* 1-, 5- and 15-minute load averages and runnable tasks now; -errno without /proc. */
int vs_hostload_loadavg(double la[3], int *running);

#endif
