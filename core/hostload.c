/* Host load from /proc (see hostload.h). */
#include "hostload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int follows(const vs_hostload_t *h, int cpu)
{
    for (int i = 0; i < h->ncpu; i++)
        if (h->cpus[i] == cpu)
            return 1;
    return 0;
}

const char *vs_proc_stat_fields(int pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p ? p + 1 : NULL;
}

/* utime + stime of pid (fields 14 and 15 of /proc/PID/stat), 0 when gone. */
static uint64_t pid_ticks(int pid)
{
    char buf[1024];
    const char *p = vs_proc_stat_fields(pid, buf, sizeof buf);
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (uint64_t)(ut + st);
}

/* Run and wait time of pid in ns (/proc/PID/schedstat): 0 or -1 without it. */
static int pid_wait_ns(int pid, uint64_t *wait_ns)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long run = 0, wait = 0;
    int got = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    if (got != 2)
        return -1;
    *wait_ns = (uint64_t)wait;
    return 0;
}

void vs_hostload_take(const vs_hostload_t *h, vs_hostload_snap_t *s)
{
    memset(s, 0, sizeof *s);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s->t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    s->waits_ok = h->npid > 0;
    for (int i = 0; i < h->npid; i++) {
        uint64_t w = 0;
        if (pid_wait_ns(h->pids[i], &w) < 0)
            s->waits_ok = 0;
        s->wait_ns += w;
    }
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    char line[512];
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        int cpu;
        unsigned long long v[10] = {0};
        if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
            continue;
        int got = sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
                         &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        if (got < 5 || !follows(h, cpu))
            continue;
        /* user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user */
        uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6];
        s->busy += busy;
        s->steal += v[7];
        s->total += busy + v[3] + v[4] + v[7];
        seen++;
    }
    fclose(f);
    for (int i = 0; i < h->npid; i++)
        s->ours += pid_ticks(h->pids[i]);
    s->ok = seen > 0;
}

void vs_hostload_between(const vs_hostload_snap_t *a, const vs_hostload_snap_t *b, int npid, uint64_t min_ticks,
                         vs_hostload_span_t *out)
{
    out->others = out->steal = out->waited = NAN;
    if (a->waits_ok && b->waits_ok && npid > 0 && b->t_ns > a->t_ns && b->wait_ns >= a->wait_ns) {
        double w = (double)(b->wait_ns - a->wait_ns) / ((double)(b->t_ns - a->t_ns) * npid);
        out->waited = w > 1 ? 1 : w;
    }
    if (!a->ok || !b->ok || b->total < a->total + min_ticks)
        return;
    double total = (double)(b->total - a->total);
    double busy = (double)(b->busy - a->busy), ours = (double)(b->ours - a->ours);
    double o = (busy - ours) / total;
    out->others = o < 0 ? 0 : o > 1 ? 1 : o;
    out->steal = (double)(b->steal - a->steal) / total;
}

int vs_hostload_loadavg(double la[3], int *running)
{
    la[0] = la[1] = la[2] = NAN;
    *running = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return -errno;
    int r = 0, all = 0;
    int got = fscanf(f, "%lf %lf %lf %d/%d", &la[0], &la[1], &la[2], &r, &all);
    fclose(f);
    if (got < 3)
        return -EINVAL;
    if (got >= 4)
        *running = r;
    return 0;
}

int vs_hostload_init(vs_hostload_t *h, const int *cpus, int ncpu, const int *pids, int npid)
{
    memset(h, 0, sizeof *h);
    for (int i = 0; i < ncpu && h->ncpu < VS_HOSTLOAD_MAX; i++)
        if (cpus[i] >= 0 && !follows(h, cpus[i]))
            h->cpus[h->ncpu++] = cpus[i];
    for (int i = 0; i < npid && h->npid < VS_HOSTLOAD_MAX; i++)
        if (pids[i] > 0)
            h->pids[h->npid++] = pids[i];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    h->ncpu_online = online > 0 ? (int)online : -1;
    vs_hostload_loadavg(h->loadavg, &h->running); /* NaN and -1 when /proc/loadavg is unreadable */
    vs_hostload_take(h, &h->start);
    return h->start.ok ? 0 : -ENOENT;
}
