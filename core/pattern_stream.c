/* stream and bistream: windows of W messages posted back to back.
 *
 * stream (uni-directional, as osu_bw):
 *   rank 0: post W sends, wait for all, receive a 4-byte acknowledgement
 *   rank 1: post W receives, wait for all, send the acknowledgement
 * bistream (bi-directional, as osu_bibw):
 *   ranks 0 and 1 each post W receives and W sends, then wait for all 2W;
 *   the peer's W messages arriving are the window's acknowledgement.
 * One unit = one window, timed on rank 0 from the first post to the end of
 * the window (ack received / all 2W complete).  A sample is one window (the
 * mean of K consecutive windows with --batch K).
 *   bandwidth    = bytes moved / time: W x size per window for stream,
 *                  2 x W x size for bistream (both directions counted)
 *   message rate = messages / time: W per window, 2W for bistream
 * Each rank sends from one buffer and receives all W messages into one
 * buffer, as the OSU benchmarks do.  With more than two ranks every pair
 * runs it at once, its leader in rank 0's part (osu_mbw_mr's figure). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "pattern_params.h"
#include "table_layout.h"

enum { TAG = 1, TAG_ACK = 2, ACK_BYTES = 4 };

typedef struct st {
    vs_mem_t sbuf, rbuf, ack;
    vs_req_t *sreq, *rreq;
    long window;
} st_t;

static int wait_all(vs_run_t *r, vs_req_t *req, long n)
{
    for (long i = 0; i < n; i++) {
        int rc = r->ops->wait(r->t, &req[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* One window, one function per role (chosen once per size, so the timed loop
 * has no branch on the pattern or the rank). */
#define ST_UNIT static inline __attribute__((always_inline)) int

static inline __attribute__((always_inline)) int post_all(vs_run_t *r, int send, vs_mem_t *buf, size_t len, int peer, vs_req_t *req, long w)
{
    for (long i = 0; i < w; i++) {
        int rc = send ? r->ops->post_send(r->t, buf, len, peer, TAG, &req[i])
                      : r->ops->post_recv(r->t, buf, len, peer, TAG, &req[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* bistream, either rank: W receives and W sends posted, all 2W waited for. */
ST_UNIT both_window(vs_run_t *r, void *state, size_t len)
{
    st_t *p = state;
    int peer = r->peer, rc;
    if ((rc = post_all(r, 0, &p->rbuf, len, peer, p->rreq, p->window)) ||
        (rc = post_all(r, 1, &p->sbuf, len, peer, p->sreq, p->window)) || (rc = wait_all(r, p->sreq, p->window)))
        return rc;
    return wait_all(r, p->rreq, p->window);
}

/* stream, rank 0: W sends, then the acknowledgement. */
ST_UNIT send_window(vs_run_t *r, void *state, size_t len)
{
    st_t *p = state;
    int rc;
    if ((rc = post_all(r, 1, &p->sbuf, len, r->peer, p->sreq, p->window)) || (rc = wait_all(r, p->sreq, p->window)))
        return rc;
    return vs_op_recv(r, &p->ack, ACK_BYTES, r->peer, TAG_ACK);
}

/* stream, rank 1: W receives, then the acknowledgement. */
ST_UNIT recv_window(vs_run_t *r, void *state, size_t len)
{
    st_t *p = state;
    int rc;
    if ((rc = post_all(r, 0, &p->rbuf, len, r->peer, p->rreq, p->window)) || (rc = wait_all(r, p->rreq, p->window)))
        return rc;
    return vs_op_send(r, &p->ack, ACK_BYTES, r->peer, TAG_ACK);
}

static int st_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    st_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    *state = p;
    p->window = vs_pattern_window(r->opt);
    if (!(p->sreq = calloc((size_t)p->window, sizeof *p->sreq)) || !(p->rreq = calloc((size_t)p->window, sizeof *p->rreq)))
        return vs_run_fail(r, -ENOMEM, "cannot allocate %ld requests", p->window);
    int rc = vs_run_buffer_alloc(r, &p->sbuf, max_bytes);
    if (!rc)
        rc = vs_run_buffer_alloc(r, &p->rbuf, max_bytes);
    return rc ? rc : vs_run_buffer_alloc(r, &p->ack, ACK_BYTES);
}


#define WHAT "window of messages"

static int st_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    return r->leader ? vs_run_warm_units(r, send_window, state, bytes, n, probe, unit_ns, WHAT)
                        : vs_run_warm_units(r, recv_window, state, bytes, n, probe, unit_ns, WHAT);
}

static int st_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    return r->leader ? vs_run_time_units(r, send_window, state, bytes, batch, n, series[0], WHAT)
                        : vs_run_time_units(r, recv_window, state, bytes, batch, n, series[0], WHAT);
}

static int bi_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    return vs_run_warm_units(r, both_window, state, bytes, n, probe, unit_ns, WHAT);
}

static int bi_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    return vs_run_time_units(r, both_window, state, bytes, batch, n, series[0], WHAT);
}

static void st_teardown(vs_run_t *r, void *state)
{
    st_t *p = state;
    if (!p)
        return;
    vs_run_buffer_free(r, &p->ack);
    vs_run_buffer_free(r, &p->rbuf);
    vs_run_buffer_free(r, &p->sbuf);
    free(p->sreq);
    free(p->rreq);
    free(p);
}

static long st_messages(const vs_options_t *o)
{
    return vs_pattern_window(o);
}

static long bi_messages(const vs_options_t *o)
{
    return 2 * vs_pattern_window(o);
}

static const vs_table_layout_t st_layout = {
    .legend = "bandwidth = W x size / median window time, rate = W / median window time (1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Bandwidth [MB/s]", "Rate [msg/s]", "Window med [us]", "Window min [us]"},
    .decimals = {2, 0, 2, 2},
};

static const vs_table_layout_t bi_layout = {
    .legend = "bandwidth = 2 x W x size / median window time, rate = 2W / median window time (both directions; 1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Bandwidth [MB/s]", "Rate [msg/s]", "Window med [us]", "Window min [us]"},
    .decimals = {2, 0, 2, 2},
};

static int summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n, int bidirectional)
{
    double w = (double)vs_pattern_window(r->opt) * (bidirectional ? 2 : 1);
    /* rates over the median window, the statistic every figure uses (a mean
     * window is dominated by the few a busy host delays) */
    double med_s = vs_series_median(series[0], n) / 1e9;
    double col[4] = {
        med_s > 0 ? w * (double)bytes / med_s / 1e6 : 0,
        med_s > 0 ? w / med_s : 0,
        med_s * 1e6,
        vs_series_min(series[0], n) / 1e3,
    };
    return vs_table_add_row(r->table, bidirectional ? &bi_layout : &st_layout, bytes, col);
}

static int st_summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n)
{
    return summarise(r, bytes, series, n, 0);
}

static int bi_summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n)
{
    return summarise(r, bytes, series, n, 1);
}

const vs_pattern_t vs_pattern_stream = {
    .name = "stream",
    .summary = "uni-directional bandwidth and message rate: windows of --window W sends, one ack each",
    .variants = {"nonblocking", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "window",
    .setup = st_setup,
    .warmup = st_warmup,
    .measure = st_measure,
    .teardown = st_teardown,
    .summarise = st_summarise,
    .messages = st_messages,
};

const vs_pattern_t vs_pattern_bistream = {
    .name = "bistream",
    .summary = "bi-directional bandwidth and message rate: both ranks post W receives and W sends per window",
    .variants = {"nonblocking", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "window",
    .setup = st_setup,
    .warmup = bi_warmup,
    .measure = bi_measure,
    .teardown = st_teardown,
    .summarise = bi_summarise,
    .messages = bi_messages,
};
