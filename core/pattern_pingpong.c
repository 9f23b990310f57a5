/* pingpong: rank 0 sends, rank 1 echoes.  One sample = mean round-trip time
 * of K consecutive round trips (K = batch).
 *   blocking:    send; receive (the module's blocking receive, or post+wait)
 *   nonblocking: post the receive first, then send, then wait for it
 * Ranks beyond 1 only take part in the out-of-band synchronisation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

enum { TAG = 1, MAX_BATCH = 100000 };

typedef struct pp {
    vs_run_t *r;
    vs_mem_t sbuf, rbuf;
    int nonblocking;
} pp_t;

/* One round trip seen from `rank`.  Kept small and branch-light: it is the
 * timed loop's body. */
static inline int round_trip(pp_t *p, size_t len)
{
    vs_run_t *r = p->r;
    const vs_transport_ops_t *ops = r->ops;
    int rc;
    if (r->rank == 0) {
        if (p->nonblocking) {
            vs_req_t req;
            if ((rc = ops->post_recv(r->t, &p->rbuf, len, 1, TAG, &req)))
                return rc;
            if ((rc = vs_op_send(r, &p->sbuf, len, 1, TAG)))
                return rc;
            return ops->wait(r->t, &req);
        }
        if ((rc = vs_op_send(r, &p->sbuf, len, 1, TAG)))
            return rc;
        return vs_op_recv(r, &p->rbuf, len, 1, TAG);
    }
    if (p->nonblocking) {
        vs_req_t req;
        if ((rc = ops->post_recv(r->t, &p->rbuf, len, 0, TAG, &req)))
            return rc;
        if ((rc = ops->wait(r->t, &req)))
            return rc;
    } else if ((rc = vs_op_recv(r, &p->rbuf, len, 0, TAG))) {
        return rc;
    }
    return vs_op_send(r, &p->sbuf, len, 0, TAG);
}

static int run_size(pp_t *p, size_t len, int64_t *samples)
{
    vs_run_t *r = p->r;
    const vs_options_t *o = r->opt;
    int large = len >= o->large_from;
    long warm = large ? o->warmup_large : o->warmup;
    long iters = large ? o->iterations_large : o->iterations;
    int rc;

    vs_watchdog_phase(r->wd, "warm-up", len);
    if ((rc = r->bs->barrier(r->bs)))
        return vs_run_fail(r, rc, "bootstrap barrier failed");
    int active = r->rank < 2;
    /* each warm-up round trip is timed alone: their median, less one clock
     * read, estimates the round-trip time from which auto batching picks K */
    int64_t *probe = samples;
    for (long i = 0; active && i < warm; i++) {
        uint64_t t0 = vs_now_ns();
        if ((rc = round_trip(p, len)))
            return vs_run_fail(r, rc, "warm-up round trip of %zu B failed", len);
        probe[i] = (int64_t)(vs_now_ns() - t0);
        vs_watchdog_beat(r->wd);
    }
    long batch = o->batch;
    if (!batch) {
        double rtt = warm > 0 ? (double)vs_median_i64(probe, warm) - r->timer.cost_ns : 0;
        batch = warm > 0 ? vs_timer_batch_for(&r->timer, rtt, MAX_BATCH) : 1;
    }
    if ((rc = vs_run_bcast_long(r, &batch)))
        return rc;

    vs_watchdog_phase(r->wd, "measuring", len);
    uint64_t start = vs_now_ns(), prev = start;
    for (long i = 0; active && i < iters; i++) {
        for (long k = 0; k < batch; k++)
            if ((rc = round_trip(p, len)))
                return vs_run_fail(r, rc, "round trip of %zu B failed", len);
        uint64_t now = vs_now_ns();
        samples[i] = (int64_t)((now - prev + (uint64_t)batch / 2) / (uint64_t)batch);
        prev = now;
        vs_watchdog_beat(r->wd);
    }
    uint64_t elapsed = prev - start;
    if (r->rank != 0)
        return 0;
    for (long i = 0; i < iters; i++)
        if (samples[i] <= 0)
            samples[i] = 1; /* below the clock's resolution: never report 0 */
    if ((rc = vs_run_write_size(r, len, warm, batch, samples, iters, elapsed)))
        return rc;
    if ((rc = vs_table_add_pingpong(r->table, len, samples, iters)))
        return vs_run_fail(r, rc, "cannot summarise %zu B", len);
    return 0;
}

static int pingpong_run(vs_run_t *r)
{
    const vs_options_t *o = r->opt;
    pp_t p = {.r = r, .nonblocking = !strcmp(o->variant, "nonblocking")};
    size_t max = 0;
    for (size_t i = 0; i < o->sizes.n; i++)
        if (o->sizes.v[i] > max)
            max = o->sizes.v[i];
    long most = o->iterations > o->iterations_large ? o->iterations : o->iterations_large;
    if (o->warmup > most)
        most = o->warmup;
    if (o->warmup_large > most)
        most = o->warmup_large;
    int64_t *samples = calloc((size_t)most, sizeof *samples);
    int rc = samples ? 0 : vs_run_fail(r, -ENOMEM, "cannot allocate sample storage");
    if (!rc)
        rc = vs_run_buffer_alloc(r, &p.sbuf, max);
    if (!rc)
        rc = vs_run_buffer_alloc(r, &p.rbuf, max);
    for (size_t i = 0; !rc && i < o->sizes.n; i++)
        rc = run_size(&p, o->sizes.v[i], samples);
    vs_run_buffer_free(r, &p.rbuf);
    vs_run_buffer_free(r, &p.sbuf);
    free(samples);
    return rc;
}

const vs_pattern_t vs_pattern_pingpong = {
    .name = "pingpong",
    .summary = "round trips between ranks 0 and 1 (variants: blocking, nonblocking receive)",
    .variants = {"blocking", "nonblocking", NULL},
    .min_ranks = 2,
    .run = pingpong_run,
};
