/* doublebuffer: seed 002's double-buffer experiment.
 *
 * Rank 1 (support) fills buffer A with random doubles, sends it non-blocking,
 * fills buffer B while A is in flight, sends B, then refills A as soon as
 * A's send completed, and so on.  Rank 0 (timing) keeps a receive posted for
 * each buffer: it waits for A, sums A while B arrives, re-posts A, waits for
 * B, sums B while the next A arrives, re-posts B.  One unit = receiving and
 * summing both buffers.
 *
 * Flow control: rank 1 sends a buffer only after rank 0 said (a 4-byte
 * credit message, sent right after the re-post) that its receive is posted,
 * so every data message meets a posted receive and at most one message per
 * buffer is in flight.  The credits are library calls between the sums,
 * never during them.
 *
 * --progress none:   no library call while summing: a transfer that needs
 *                    the receiver's attention (rendezvous) only moves when
 *                    rank 0 next enters the library, unless the library
 *                    progresses on its own ("application bypass").
 * --progress poll=N: a test call on the other buffer's outstanding request
 *                    every N doubles summed (rank 0: its receive) or filled
 *                    (rank 1: its send).
 *
 * Per size, after the samples (series samples_ns, one pair per sample or the
 * mean of K pairs with --batch K), the same number of samples of
 *   compute_ns: rank 0 sums both buffers, no communication (mean of as many
 *               repetitions as make at least a microsecond);
 *   comm_ns:    the same exchange, rank 1 unchanged (it fills and sends as
 *               always), rank 0 only receiving: the arrival stream alone.
 * overlap = (compute + comm - total) / min(compute, comm), from medians, is
 * 1 when the shorter of the two is hidden entirely and 0 when they add up;
 * CPU availability = compute / total. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "pattern.h"
#include "pattern_params.h"
#include "prng.h"
#include "table_layout.h"

enum { TAG_A = 1, TAG_B = 2, TAG_CREDIT_A = 3, TAG_CREDIT_B = 4, CREDIT_BYTES = 4 };
enum { MIN_COMPUTE_NS = 1000, MAX_COMPUTE_REPS = 100000, MIN_RATIO_NS = 10000 };

typedef struct db {
    vs_mem_t buf[2], credit[2];
    vs_req_t req[2];      /* rank 0: receives; rank 1: sends */
    vs_req_t creq[2];     /* rank 1: credit receives */
    int pend[2];          /* req[x] outstanding */
    long poll_every;      /* 0: no library call while summing */
    uint64_t stream;      /* rank 1: fill seed counter */
    volatile double sink; /* keeps the sums alive */
} db_t;

/* Random doubles in [0, 1) into d[from, to): four interleaved generators, so
 * the fill is not one long dependency chain. */
static void fill_doubles(double *d, size_t from, size_t to, uint64_t s[4])
{
    size_t i = from;
    for (; i + 4 <= to; i += 4)
        for (int k = 0; k < 4; k++)
            d[i + (size_t)k] = (double)(vs_prng_next(&s[k]) >> 11) * 0x1.0p-53;
    for (; i < to; i++)
        d[i] = (double)(vs_prng_next(&s[0]) >> 11) * 0x1.0p-53;
}

static double sum_doubles(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Test the other buffer's outstanding request (a receive on rank 0, a send
 * on rank 1): the "library call during compute" of --progress poll=N. */
static int poll_other(vs_run_t *r, db_t *p, int y)
{
    if (!p->pend[y])
        return 0;
    int done = 0, rc = r->ops->test(r->t, &p->req[y], &done);
    if (!rc && done)
        p->pend[y] = 0;
    return rc;
}

/* Fill buffer x; with polling, test the other buffer's send every
 * poll_every elements while it is outstanding. */
static int fill_buffer(vs_run_t *r, db_t *p, int x, size_t bytes, uint64_t seed, int poll)
{
    uint64_t s[4];
    for (int k = 0; k < 4; k++)
        s[k] = vs_prng_seed(seed * 4 + (uint64_t)k);
    double *d = p->buf[x].addr;
    size_t n = bytes / sizeof(double);
    size_t step = poll && p->poll_every ? (size_t)p->poll_every : n;
    for (size_t i = 0; i < n; i += step) {
        fill_doubles(d, i, n - i < step ? n : i + step, s);
        int rc = poll && p->poll_every ? poll_other(r, p, 1 - x) : 0;
        if (rc)
            return rc;
    }
    unsigned char *tail = (unsigned char *)p->buf[x].addr + n * sizeof(double);
    for (size_t b = 0; b < bytes % sizeof(double); b++)
        tail[b] = (unsigned char)vs_prng_next(&s[1]);
    return 0;
}

/* Sum one buffer; with polling, test the other buffer's receive every
 * poll_every elements while it is outstanding. */
static int sum_buffer(vs_run_t *r, db_t *p, int x, size_t bytes, int poll)
{
    const double *v = p->buf[x].addr;
    size_t n = bytes / sizeof(double);
    size_t step = poll && p->poll_every ? (size_t)p->poll_every : n;
    double s = 0;
    const int y = 1 - x;
    for (size_t i = 0; i < n; i += step) {
        size_t m = n - i < step ? n - i : step;
        s += sum_doubles(v + i, m);
        int rc = poll && p->poll_every ? poll_other(r, p, y) : 0;
        if (rc)
            return rc;
    }
    const unsigned char *tail = (const unsigned char *)p->buf[x].addr + n * sizeof(double);
    for (size_t b = 0; b < bytes % sizeof(double); b++)
        s += tail[b];
    p->sink = s;
    return 0;
}

/* Rank 0: `pairs` units; with compute, sums (and polls).  Stores per-sample
 * times (mean of batch pairs) in out.  Inlined with a constant `compute`
 * (exchange), so the timed loop has no branch on it. */
static inline __attribute__((always_inline)) int timing_rank(vs_run_t *r, db_t *p, size_t bytes, long n, long batch,
                                                             const int compute, int64_t *out)
{
    const vs_transport_ops_t *ops = r->ops;
    const uint64_t tag[2] = {TAG_A, TAG_B}, ctag[2] = {TAG_CREDIT_A, TAG_CREDIT_B};
    int rc;
    for (int x = 0; x < 2; x++) {
        if ((rc = ops->post_recv(r->t, &p->buf[x], bytes, 1, tag[x], &p->req[x])))
            return rc;
        p->pend[x] = 1;
    }
    for (int x = 0; x < 2; x++)
        if ((rc = vs_op_send(r, &p->credit[x], CREDIT_BYTES, 1, ctag[x])))
            return rc;
    uint64_t prev = vs_timer_read(&r->timer);
    for (long s = 0; s < n; s++) {
        for (long k = 0; k < batch; k++) {
            int last = s == n - 1 && k == batch - 1;
            for (int x = 0; x < 2; x++) {
                if (p->pend[x]) {
                    if ((rc = ops->wait(r->t, &p->req[x])))
                        return rc;
                    p->pend[x] = 0;
                }
                if (compute && (rc = sum_buffer(r, p, x, bytes, 1)))
                    return rc;
                if (last)
                    continue;
                if ((rc = ops->post_recv(r->t, &p->buf[x], bytes, 1, tag[x], &p->req[x])))
                    return rc;
                p->pend[x] = 1;
                if ((rc = vs_op_send(r, &p->credit[x], CREDIT_BYTES, 1, ctag[x])))
                    return rc;
            }
        }
        uint64_t now = vs_timer_read(&r->timer);
        out[s] = (int64_t)((now - prev + (uint64_t)batch / 2) / (uint64_t)batch);
        prev = now;
        vs_watchdog_beat(r->wd);
    }
    return 0;
}

/* Rank 1: the same number of pairs, each buffer filled before its send
 * (rank 1 does the same whether or not rank 0 sums). */
static int support_rank(vs_run_t *r, db_t *p, size_t bytes, long pairs)
{
    const vs_transport_ops_t *ops = r->ops;
    const uint64_t tag[2] = {TAG_A, TAG_B}, ctag[2] = {TAG_CREDIT_A, TAG_CREDIT_B};
    int rc;
    for (int x = 0; x < 2; x++)
        if ((rc = ops->post_recv(r->t, &p->credit[x], CREDIT_BYTES, 0, ctag[x], &p->creq[x])))
            return rc;
    p->pend[0] = p->pend[1] = 0;
    for (long i = 0; i < pairs; i++) {
        for (int x = 0; x < 2; x++) {
            if (p->pend[x]) {
                if ((rc = ops->wait(r->t, &p->req[x])))
                    return rc;
                p->pend[x] = 0;
            }
            if ((rc = fill_buffer(r, p, x, bytes, p->stream++, 1)))
                return rc;
            if ((rc = ops->wait(r->t, &p->creq[x])))
                return rc;
            if (i < pairs - 1 && (rc = ops->post_recv(r->t, &p->credit[x], CREDIT_BYTES, 0, ctag[x], &p->creq[x])))
                return rc;
            if ((rc = ops->post_send(r->t, &p->buf[x], bytes, 0, tag[x], &p->req[x])))
                return rc;
            p->pend[x] = 1;
        }
        vs_watchdog_beat(r->wd);
    }
    for (int x = 0; x < 2; x++)
        if (p->pend[x] && (rc = ops->wait(r->t, &p->req[x])))
            return rc;
    p->pend[0] = p->pend[1] = 0;
    return 0;
}

/* With sum = 0, rank 0 only receives: the communication-only reference. */
static int exchange(vs_run_t *r, db_t *p, size_t bytes, long n, long batch, int sum, int64_t *out)
{
    if (n <= 0)
        return 0;
    if (r->rank == 0)
        return sum ? timing_rank(r, p, bytes, n, batch, 1, out) : timing_rank(r, p, bytes, n, batch, 0, out);
    if (r->rank == 1)
        return support_rank(r, p, bytes, n * batch);
    return 0;
}

/* Rank 0: n samples of summing both buffers, no communication. */
static int compute_only(vs_run_t *r, db_t *p, size_t bytes, long n, long batch, int64_t *out)
{
    uint64_t t0 = vs_timer_read(&r->timer);
    for (int x = 0; x < 2; x++)
        sum_buffer(r, p, x, bytes, 0);
    uint64_t one = vs_timer_read(&r->timer) - t0;
    long reps = batch;
    if (one > 0 && (double)one * (double)reps < MIN_COMPUTE_NS)
        reps = (long)(MIN_COMPUTE_NS / (double)one) + 1;
    if (one == 0)
        reps = MAX_COMPUTE_REPS;
    if (reps > MAX_COMPUTE_REPS)
        reps = MAX_COMPUTE_REPS;
    for (long s = 0; s < n; s++) {
        uint64_t a = vs_timer_read(&r->timer);
        for (long k = 0; k < reps; k++)
            for (int x = 0; x < 2; x++)
                sum_buffer(r, p, x, bytes, 0);
        out[s] = (int64_t)((vs_timer_read(&r->timer) - a + (uint64_t)reps / 2) / (uint64_t)reps);
        vs_watchdog_beat(r->wd);
    }
    return 0;
}

static int db_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    if (!vs_mem_host(r->ops))
        return vs_run_fail(r, -EINVAL, "doublebuffer computes on its buffers in host memory; transport %s keeps "
                                        "its own (memory operations)", r->ops->name);
    db_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    *state = p;
    p->poll_every = r->opt->poll_every;
    int rc = 0;
    for (int x = 0; x < 2 && !rc; x++) {
        rc = vs_run_buffer_alloc(r, &p->buf[x], max_bytes);
        if (!rc)
            rc = vs_run_buffer_alloc(r, &p->credit[x], CREDIT_BYTES);
    }
    if (!rc && r->rank == 1)
        for (int x = 0; x < 2; x++)
            fill_buffer(r, p, x, max_bytes, p->stream++, 0);
    return rc;
}

static int db_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    *unit_ns = 0;
    int rc = exchange(r, state, bytes, n, 1, 1, probe);
    if (rc)
        return vs_run_fail(r, rc, "warm-up of %zu B buffers failed", bytes);
    if (r->rank == 0 && n > 0)
        *unit_ns = vs_median_i64(probe, n);
    return 0;
}

static int db_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    db_t *p = state;
    int rc = exchange(r, p, bytes, n, batch, 1, series[0]);
    if (rc)
        return vs_run_fail(r, rc, "double-buffer exchange of %zu B failed", bytes);
    if (r->rank == 0)
        compute_only(r, p, bytes, n, batch, series[1]);
    if ((rc = exchange(r, p, bytes, n, batch, 0, series[2])))
        return vs_run_fail(r, rc, "communication-only exchange of %zu B failed", bytes);
    return 0;
}

static void db_teardown(vs_run_t *r, void *state)
{
    db_t *p = state;
    if (!p)
        return;
    for (int x = 0; x < 2; x++) {
        vs_run_buffer_free(r, &p->credit[x]);
        vs_run_buffer_free(r, &p->buf[x]);
    }
    free(p);
}

static const vs_table_layout_t db_layout = {
    .legend = "one sample = receive and sum two buffers; overlap = (compute + comm - total) / min(compute, comm); "
              "CPU avail. = compute / total (medians)",
    .ncol = 5,
    .head = {"Total [us]", "Compute [us]", "Comm [us]", "Overlap [%]", "CPU avail. [%]"},
    .decimals = {2, 2, 2, 1, 1},
};

static int db_summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n)
{
    double total = vs_series_median(series[0], n), compute = vs_series_median(series[1], n);
    double comm = vs_series_median(series[2], n);
    double shorter = compute < comm ? compute : comm;
    /* below ~10 us the ratios compare clock noise: the table shows "-" */
    int meaningful = shorter >= MIN_RATIO_NS;
    double col[5] = {
        total / 1e3, compute / 1e3, comm / 1e3,
        meaningful ? 100 * (compute + comm - total) / shorter : NAN,
        meaningful && total > 0 ? 100 * compute / total : NAN,
    };
    return vs_table_add_row(r->table, &db_layout, bytes, col);
}

const vs_pattern_t vs_pattern_doublebuffer = {
    .name = "doublebuffer",
    .summary = "receive and sum two buffers while the next arrives (seed 002; --progress none|poll=N)",
    .variants = {"nonblocking", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", "compute_ns", "comm_ns", NULL},
    .unit = "buffer pair",
    .setup = db_setup,
    .warmup = db_warmup,
    .measure = db_measure,
    .teardown = db_teardown,
    .summarise = db_summarise,
};
