/* overhead: the time spent inside the send call and inside the receive call,
 * seen by rank 0 over a ping-pong with rank 1 (seed 000's send and receive
 * times).  Per iteration rank 0 reads the clock around its own calls:
 *   blocking:    t0 send t1 receive t2          send = t1-t0, recv = t2-t1
 *   nonblocking: t0 post_recv t1 send t2 wait t3
 *                                               send = t2-t1, recv = (t1-t0)+(t3-t2)
 * and the round trip t_end - t_start.  Rank 1 receives and echoes, exactly as
 * in pingpong.  The receive time therefore includes waiting for the echo: it
 * is the "receive latency" of seed 000, and send + recv = the round trip minus
 * the clock reads.  The send time stays flat while the library completes a
 * send locally (eager) and grows once the send waits for the receiver
 * (rendezvous): the size where it starts to grow is seed 000's buffer size.
 * Samples are per iteration (batch K > 1 only when asked for: means of K).
 *
 *   delayed:     t0 send t1 (spin d) t2 receive t3
 *                                               send = t1-t0, recv = t3-t2
 * the receive is called only once the echo has had time to arrive (d = twice
 * the median round trip of the size's warm-up -- with none, of the driver's
 * resynchronising units -- at least 1 us), so the receive time is the cost of
 * taking in a message that is already there: LogGP's receive overhead o_r
 * (Netgauge's and the LogP paper's way).  The sample is the whole iteration, the delay included. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "table_layout.h"

enum { TAG = 1 };

typedef struct oh {
    vs_mem_t sbuf, rbuf;
    int nonblocking, delayed;
    uint64_t delay_ns; /* delayed: the spin before the receive (set by the warm-up) */
    size_t delay_bytes; /* ... for this size */
} oh_t;

enum { DELAY_MIN_NS = 1000, DELAY_DEFAULT_NS = 100000 };

/* One iteration on rank 0, one function per variant (chosen once per size, so
 * the timed loop has no branch on it); adds its call times (ns) to acc[0..2]. */
typedef int (*oh_iter_fn)(vs_run_t *r, oh_t *p, size_t len, uint64_t *acc);

static inline __attribute__((always_inline)) int iter_nonblocking(vs_run_t *r, oh_t *p, size_t len, uint64_t *acc)
{
    vs_req_t req;
    int rc;
    uint64_t t0 = vs_timer_read(&r->timer);
    if ((rc = r->ops->post_recv(r->t, &p->rbuf, len, 1, TAG, &req)))
        return rc;
    uint64_t t1 = vs_timer_read(&r->timer);
    if ((rc = vs_op_send(r, &p->sbuf, len, 1, TAG)))
        return rc;
    uint64_t t2 = vs_timer_read(&r->timer);
    if ((rc = r->ops->wait(r->t, &req)))
        return rc;
    uint64_t t3 = vs_timer_read(&r->timer);
    acc[0] += t3 - t0;
    acc[1] += t2 - t1;
    acc[2] += (t1 - t0) + (t3 - t2);
    return 0;
}

static inline __attribute__((always_inline)) int iter_delayed(vs_run_t *r, oh_t *p, size_t len, uint64_t *acc)
{
    int rc;
    uint64_t t0 = vs_timer_read(&r->timer);
    if ((rc = vs_op_send(r, &p->sbuf, len, 1, TAG)))
        return rc;
    uint64_t t1 = vs_timer_read(&r->timer), t2;
    do /* no library call: the echo arrives (or waits in the library) on its own */
        t2 = vs_timer_read(&r->timer);
    while (t2 - t1 < p->delay_ns);
    if ((rc = vs_op_recv(r, &p->rbuf, len, 1, TAG)))
        return rc;
    uint64_t t3 = vs_timer_read(&r->timer);
    acc[0] += t3 - t0;
    acc[1] += t1 - t0;
    acc[2] += t3 - t2;
    return 0;
}

static inline __attribute__((always_inline)) int iter_blocking(vs_run_t *r, oh_t *p, size_t len, uint64_t *acc)
{
    int rc;
    uint64_t t0 = vs_timer_read(&r->timer);
    if ((rc = vs_op_send(r, &p->sbuf, len, 1, TAG)))
        return rc;
    uint64_t t1 = vs_timer_read(&r->timer);
    if ((rc = vs_op_recv(r, &p->rbuf, len, 1, TAG)))
        return rc;
    uint64_t t2 = vs_timer_read(&r->timer);
    acc[0] += t2 - t0;
    acc[1] += t1 - t0;
    acc[2] += t2 - t1;
    return 0;
}

/* Rank 1's side: receive and echo, exactly as in pingpong (a unit for the
 * shared loops of pattern.h, which time nothing on rank 1 that is kept). */
static inline __attribute__((always_inline)) int echo_blocking(vs_run_t *r, void *state, size_t len)
{
    oh_t *p = state;
    return vs_run_echo(r, &p->rbuf, &p->sbuf, len, 0, TAG);
}

static inline __attribute__((always_inline)) int echo_nonblocking(vs_run_t *r, void *state, size_t len)
{
    oh_t *p = state;
    return vs_run_echo(r, &p->rbuf, &p->sbuf, len, 1, TAG);
}

/* Rank 0: n samples of `batch` iterations; out[s] (when given) gets each
 * sample's mean call times.  batch = 1 and out = NULL for the warm-up. */
static inline __attribute__((always_inline)) int oh_loop(vs_run_t *r, oh_iter_fn iter, oh_t *p, size_t bytes,
                                                         long batch, long n, int64_t *const *out, const char *what)
{
    for (long i = 0; i < n; i++) {
        uint64_t acc[3] = {0};
        for (long k = 0; k < batch; k++) {
            int rc = iter(r, p, bytes, acc);
            if (rc)
                return vs_run_fail(r, rc, "%s of %zu B failed", what, bytes);
        }
        if (out)
            for (int s = 0; s < 3; s++)
                out[s][i] = (int64_t)((acc[s] + (uint64_t)batch / 2) / (uint64_t)batch);
        vs_watchdog_beat(r->wd);
    }
    return 0;
}

static int oh_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    oh_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    p->nonblocking = !strcmp(r->opt->variant, "nonblocking");
    p->delayed = !strcmp(r->opt->variant, "delayed");
    p->delay_ns = DELAY_DEFAULT_NS;
    p->delay_bytes = (size_t)-1;
    *state = p;
    int rc = vs_run_buffer_alloc(r, &p->sbuf, max_bytes);
    return rc ? rc : vs_run_buffer_alloc(r, &p->rbuf, max_bytes);
}

static int oh_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    oh_t *p = state;
    *unit_ns = 0; /* every call is timed on its own: auto batch stays 1 */
    if (r->rank == 0 && p->delayed) {
        /* blocking iterations, each timed: the delay is twice their median round trip */
        for (long i = 0; i < n; i++) {
            uint64_t acc[3] = {0};
            int rc = iter_blocking(r, p, bytes, acc);
            if (rc)
                return vs_run_fail(r, rc, "warm-up iteration of %zu B failed", bytes);
            probe[i] = (int64_t)acc[0];
            vs_watchdog_beat(r->wd);
        }
        /* the size's warm-up sets it; the driver's two-unit resynchronisation before
         * each chunk (which may carry a wake-up) leaves the size's delay as it was */
        if (n > 0 && (n > 2 || p->delay_bytes != bytes)) {
            double med = vs_median_i64(probe, n); /* sorts */
            p->delay_bytes = bytes;
            p->delay_ns = med * 2 > DELAY_MIN_NS ? (uint64_t)(med * 2) : DELAY_MIN_NS;
        }
        return 0;
    }
    if (r->rank == 0)
        return p->nonblocking ? oh_loop(r, iter_nonblocking, p, bytes, 1, n, NULL, "warm-up iteration")
                              : oh_loop(r, iter_blocking, p, bytes, 1, n, NULL, "warm-up iteration");
    double unused;
    return p->nonblocking ? vs_run_warm_units(r, echo_nonblocking, p, bytes, n, probe, &unused, "warm-up echo")
                          : vs_run_warm_units(r, echo_blocking, p, bytes, n, probe, &unused, "warm-up echo");
}

static int oh_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    oh_t *p = state;
    if (r->rank == 0 && p->delayed)
        return oh_loop(r, iter_delayed, p, bytes, batch, n, series, "iteration");
    if (r->rank == 0)
        return p->nonblocking ? oh_loop(r, iter_nonblocking, p, bytes, batch, n, series, "iteration")
                              : oh_loop(r, iter_blocking, p, bytes, batch, n, series, "iteration");
    return p->nonblocking ? vs_run_time_units(r, echo_nonblocking, p, bytes, batch, n, series[0], "echo")
                          : vs_run_time_units(r, echo_blocking, p, bytes, batch, n, series[0], "echo");
}

static void oh_teardown(vs_run_t *r, void *state)
{
    oh_t *p = state;
    if (!p)
        return;
    vs_run_buffer_free(r, &p->rbuf);
    vs_run_buffer_free(r, &p->sbuf);
    free(p);
}

static const vs_table_layout_t oh_layout = {
    .legend = "time inside rank 0's send and receive calls (receive waits for the echo); round trip = whole iteration",
    .ncol = 5,
    .head = {"Send [us]", "Recv [us]", "Round trip [us]", "Send P99 [us]", "Recv P99 [us]"},
    .decimals = {2, 2, 2, 2, 2},
};

static const vs_table_layout_t oh_delayed_layout = {
    .legend = "time inside rank 0's send and receive calls (receive called after a delay past the round trip: "
              "the echo is there); round trip = whole iteration, delay included",
    .ncol = 5,
    .head = {"Send [us]", "Recv [us]", "Round trip [us]", "Send P99 [us]", "Recv P99 [us]"},
    .decimals = {2, 2, 2, 2, 2},
};

static double p99(const int64_t *v, long n)
{
    int64_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return 0;
    memcpy(s, v, (size_t)n * sizeof *s);
    vs_median_i64(s, n); /* sorts */
    double x = (double)s[(long)(0.99 * (double)(n - 1) + 0.5)];
    free(s);
    return x;
}

static int oh_summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n)
{
    double col[5] = {
        vs_series_median(series[1], n) / 1e3, vs_series_median(series[2], n) / 1e3,
        vs_series_median(series[0], n) / 1e3, p99(series[1], n) / 1e3, p99(series[2], n) / 1e3,
    };
    return vs_table_add_row(r->table, strcmp(r->opt->variant, "delayed") ? &oh_layout : &oh_delayed_layout, bytes, col);
}

const vs_pattern_t vs_pattern_overhead = {
    .name = "overhead",
    .summary = "time inside the send and the receive call on rank 0 (variants: blocking, nonblocking receive, "
               "delayed: the receive called once the echo is there)",
    .variants = {"blocking", "nonblocking", "delayed", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", "send_ns", "recv_ns", NULL},
    .unit = "iteration",
    .setup = oh_setup,
    .warmup = oh_warmup,
    .measure = oh_measure,
    .teardown = oh_teardown,
    .summarise = oh_summarise,
};
