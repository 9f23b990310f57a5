/* Placement drift probe (see drift.h). */
#include "drift.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define VS_DRIFT_BATCH 16

/* Each flag on its own cache line, so only the intended line bounces. */
typedef struct vs_drift_seg {
    _Alignas(64) uint64_t ping;   /* written by rank 0 */
    _Alignas(64) uint64_t pong;   /* written by rank 1 */
    _Alignas(64) uint64_t result_seq; /* rank 0 publishes the median for rank 1 */
    double result_ns;
} vs_drift_seg_t;

struct vs_drift {
    int rank;
    vs_drift_seg_t *seg;
    uint64_t seq;
    int broken;
    vs_idle_t idle;
};

/* A wait this long is no cache-line round trip (tens to hundreds of ns): the
 * peer is elsewhere, and may need this rank's transport to get here. */
#define VS_DRIFT_IDLE_AFTER_NS 20000u

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct drift_hello {
    int32_t status;
    char host[64];
    char name[60];
} drift_hello_t;

int vs_drift_open(vs_bootstrap_t *bs, vs_drift_t **out, char *err, size_t errlen)
{
    drift_hello_t mine, *all;
    int rc = 0, fd = -1;
    vs_drift_t *d = calloc(1, sizeof *d);
    all = calloc((size_t)bs->size, sizeof *all);
    if (!d || !all) {
        free(d);
        free(all);
        return -ENOMEM;
    }
    d->rank = bs->rank;
    memset(&mine, 0, sizeof mine);
    if (gethostname(mine.host, sizeof mine.host - 1) != 0)
        snprintf(mine.host, sizeof mine.host, "unknown");
    if (bs->rank == 0 && bs->size >= 2) {
        snprintf(mine.name, sizeof mine.name, "/versus-drift-%ld-%llu", (long)getpid(),
                 (unsigned long long)(now_ns() % 1000000007u));
        fd = shm_open(mine.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, sizeof(vs_drift_seg_t)) != 0)
            mine.status = -errno;
    }
    /* first exchange: hosts, segment name, rank 0's status */
    rc = bs->exchange(bs, &mine, all, sizeof mine);
    if (rc < 0) {
        snprintf(err, errlen, "drift probe: exchange failed: %s", strerror(-rc));
        goto close_fd;
    }
    if (bs->size < 2 || strcmp(all[0].host, all[1].host) != 0) {
        snprintf(err, errlen, "drift probe needs ranks 0 and 1 on one host");
        rc = -ENOTSUP;
        goto close_fd;
    }
    if (all[0].status < 0) {
        rc = all[0].status;
        snprintf(err, errlen, "drift probe: rank 0 could not create shared memory %s: %s",
                 all[0].name, strerror(-rc));
        goto close_fd;
    }
    if (bs->rank == 1) {
        fd = shm_open(all[0].name, O_RDWR, 0600);
        if (fd < 0)
            mine.status = -errno;
    }
    if (fd >= 0 && (bs->rank == 0 || bs->rank == 1)) {
        void *m = mmap(NULL, sizeof(vs_drift_seg_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            mine.status = -errno;
        else
            d->seg = m;
    }
    /* second exchange: everyone mapped (or not); then the name can go */
    rc = bs->exchange(bs, &mine, all, sizeof mine);
    if (bs->rank == 0)
        shm_unlink(mine.name);
    if (rc < 0) {
        snprintf(err, errlen, "drift probe: exchange failed: %s", strerror(-rc));
        goto unmap;
    }
    for (int r = 0; r < 2; r++)
        if (all[r].status < 0) {
            rc = all[r].status;
            snprintf(err, errlen, "drift probe: rank %d could not map the shared segment: %s", r,
                     strerror(-rc));
            goto unmap;
        }
    if (fd >= 0)
        close(fd);
    free(all);
    *out = d;
    return 0;

unmap:
    if (d->seg)
        munmap(d->seg, sizeof(vs_drift_seg_t));
close_fd:
    if (fd >= 0)
        close(fd);
    if (bs->rank == 0 && mine.name[0])
        shm_unlink(mine.name); /* harmless if already gone */
    free(all);
    free(d);
    return rc;
}

/* Spin until *flag == want; check the clock every 1024 polls, and once the
 * wait is long, drive the transport at each check. */
static int wait_for(const vs_drift_t *d, const uint64_t *flag, uint64_t want, uint64_t deadline)
{
    uint64_t since = 0;
    for (unsigned n = 1;; n++) {
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want)
            return 0;
        if ((n & 1023) == 0) {
            uint64_t t = now_ns();
            if (t > deadline)
                return -ETIMEDOUT;
            if (!since)
                since = t;
            else if (d->idle.fn && t - since > VS_DRIFT_IDLE_AFTER_NS) {
                int rc = d->idle.fn(d->idle.arg);
                if (rc < 0)
                    return rc;
            }
        }
    }
}

void vs_drift_set_idle(vs_drift_t *d, vs_idle_t idle)
{
    if (d)
        d->idle = idle;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int vs_drift_probe(vs_drift_t *d, int round_trips, double timeout_s, double *rtt_ns)
{
    *rtt_ns = NAN;
    if (d->rank > 1)
        return 0;
    if (d->broken || !d->seg)
        return -EPIPE;
    int nbatch = round_trips < VS_DRIFT_BATCH ? 1 : round_trips / VS_DRIFT_BATCH;
    uint64_t deadline = now_ns() + (uint64_t)(timeout_s * 1e9);
    vs_drift_seg_t *s = d->seg;
    int rc = 0;
    if (d->rank == 0) {
        double *batch = malloc(sizeof *batch * (size_t)nbatch);
        if (!batch)
            return -ENOMEM; /* rank 1 times out: acceptable for an allocation failure */
        for (int b = 0; b < nbatch && rc == 0; b++) {
            uint64_t t0 = now_ns();
            for (int k = 0; k < VS_DRIFT_BATCH && rc == 0; k++) {
                d->seq++;
                __atomic_store_n(&s->ping, d->seq, __ATOMIC_RELEASE);
                rc = wait_for(d, &s->pong, d->seq, deadline);
            }
            batch[b] = (double)(now_ns() - t0) / VS_DRIFT_BATCH;
        }
        if (rc == 0) {
            qsort(batch, (size_t)nbatch, sizeof *batch, cmp_double);
            *rtt_ns = nbatch % 2 ? batch[nbatch / 2] : 0.5 * (batch[nbatch / 2 - 1] + batch[nbatch / 2]);
            s->result_ns = *rtt_ns;
            __atomic_store_n(&s->result_seq, d->seq, __ATOMIC_RELEASE);
        }
        free(batch);
    } else {
        for (int i = 0; i < nbatch * VS_DRIFT_BATCH && rc == 0; i++) {
            d->seq++;
            rc = wait_for(d, &s->ping, d->seq, deadline);
            if (rc == 0)
                __atomic_store_n(&s->pong, d->seq, __ATOMIC_RELEASE);
        }
        if (rc == 0)
            rc = wait_for(d, &s->result_seq, d->seq, deadline);
        if (rc == 0)
            *rtt_ns = s->result_ns;
    }
    if (rc < 0)
        d->broken = 1;
    return rc;
}

void vs_drift_close(vs_drift_t *d)
{
    if (!d)
        return;
    if (d->seg)
        munmap(d->seg, sizeof(vs_drift_seg_t));
    free(d);
}

int vs_drift_measure(vs_bootstrap_t *bs, int round_trips, double timeout_s, double *rtt_ns,
                     char *err, size_t errlen)
{
    vs_drift_t *d;
    *rtt_ns = NAN;
    int rc = vs_drift_open(bs, &d, err, errlen);
    if (rc < 0)
        return rc;
    rc = vs_drift_probe(d, round_trips, timeout_s, rtt_ns);
    if (rc < 0)
        snprintf(err, errlen, "drift probe: %s", strerror(-rc));
    vs_drift_close(d);
    return rc;
}
