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
 * buffer, as the OSU benchmarks do.  Ranks beyond 1 only synchronise. */
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
    int bidirectional;
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

static inline __attribute__((always_inline)) int window(vs_run_t *r, void *state, size_t len)
{
    st_t *p = state;
    const vs_transport_ops_t *ops = r->ops;
    int peer = 1 - r->rank, rc;
    long w = p->window;
    if (p->bidirectional) {
        for (long i = 0; i < w; i++)
            if ((rc = ops->post_recv(r->t, &p->rbuf, len, peer, TAG, &p->rreq[i])))
                return rc;
        for (long i = 0; i < w; i++)
            if ((rc = ops->post_send(r->t, &p->sbuf, len, peer, TAG, &p->sreq[i])))
                return rc;
        if ((rc = wait_all(r, p->sreq, w)))
            return rc;
        return wait_all(r, p->rreq, w);
    }
    if (r->rank == 0) {
        for (long i = 0; i < w; i++)
            if ((rc = ops->post_send(r->t, &p->sbuf, len, 1, TAG, &p->sreq[i])))
                return rc;
        if ((rc = wait_all(r, p->sreq, w)))
            return rc;
        return vs_op_recv(r, &p->ack, ACK_BYTES, 1, TAG_ACK);
    }
    for (long i = 0; i < w; i++)
        if ((rc = ops->post_recv(r->t, &p->rbuf, len, 0, TAG, &p->rreq[i])))
            return rc;
    if ((rc = wait_all(r, p->rreq, w)))
        return rc;
    return vs_op_send(r, &p->ack, ACK_BYTES, 0, TAG_ACK);
}

static int setup(vs_run_t *r, size_t max_bytes, void **state, int bidirectional)
{
    st_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    *state = p;
    p->bidirectional = bidirectional;
    p->window = vs_pattern_window(r->opt);
    if (!(p->sreq = calloc((size_t)p->window, sizeof *p->sreq)) || !(p->rreq = calloc((size_t)p->window, sizeof *p->rreq)))
        return vs_run_fail(r, -ENOMEM, "cannot allocate %ld requests", p->window);
    int rc = vs_run_buffer_alloc(r, &p->sbuf, max_bytes);
    if (!rc)
        rc = vs_run_buffer_alloc(r, &p->rbuf, max_bytes);
    return rc ? rc : vs_run_buffer_alloc(r, &p->ack, ACK_BYTES);
}

static int st_setup(vs_run_t *r, size_t max_bytes, void **state) { return setup(r, max_bytes, state, 0); }
static int bi_setup(vs_run_t *r, size_t max_bytes, void **state) { return setup(r, max_bytes, state, 1); }

static int st_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    return vs_run_warm_units(r, window, state, bytes, n, probe, unit_ns, "window of messages");
}

static int st_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    return vs_run_time_units(r, window, state, bytes, batch, n, series[0], "window of messages");
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

static const vs_table_layout_t st_layout = {
    .legend = "bandwidth = W x size / window time, rate = W / window time (totals over all windows; 1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Bandwidth [MB/s]", "Rate [msg/s]", "Window med [us]", "Window min [us]"},
    .decimals = {2, 0, 2, 2},
};

static const vs_table_layout_t bi_layout = {
    .legend = "bandwidth = 2 x W x size / window time, rate = 2W / window time (both directions; 1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Bandwidth [MB/s]", "Rate [msg/s]", "Window med [us]", "Window min [us]"},
    .decimals = {2, 0, 2, 2},
};

static int summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n, int bidirectional)
{
    double w = (double)vs_pattern_window(r->opt) * (bidirectional ? 2 : 1);
    double total_s = vs_series_sum(series[0], n) / 1e9; /* per-window means: n windows' worth */
    double col[4] = {
        total_s > 0 ? w * (double)bytes * (double)n / total_s / 1e6 : 0,
        total_s > 0 ? w * (double)n / total_s : 0,
        vs_series_median(series[0], n) / 1e3,
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
};

const vs_pattern_t vs_pattern_bistream = {
    .name = "bistream",
    .summary = "bi-directional bandwidth and message rate: both ranks post W receives and W sends per window",
    .variants = {"nonblocking", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "window",
    .setup = bi_setup,
    .warmup = st_warmup,
    .measure = st_measure,
    .teardown = st_teardown,
    .summarise = bi_summarise,
};
