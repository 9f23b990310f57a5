/* Patterns: the measurement loops, written once against the ops table. */
#ifndef VS_PATTERN_H
#define VS_PATTERN_H

#include <stdint.h>
#include <stdio.h>

#include <versus/transport.h>

#include "json.h"
#include "options.h"
#include "table.h"
#include "timer.h"
#include "watchdog.h"
#include "writer.h"

struct vs_pattern;

/* Everything a pattern needs for one run. */
typedef struct vs_run {
    const vs_transport_ops_t *ops;
    vs_transport_t *t;
    vs_bootstrap_t *bs;
    const vs_options_t *opt;
    vs_timer_info_t timer;
    vs_watchdog_t *wd;
    vs_writer_t *writer;   /* rank 0 with --out, else NULL */
    vs_table_t *table;     /* rank 0: what stdout shows at the end */
    struct vs_validate *validate; /* --validate: payload checks (validate.c) */
    long invalid_sizes;    /* sizes whose payload check failed */
    const struct vs_visit *visit; /* the size record's round, position, pass, precision (schedule.h) */
    int rank, size;
    /* Who this rank measures with: its partner's rank, or -1 while it waits
     * (more than two ranks: the pairing decides, pairing.h).  The leader of a
     * pair (its lower rank) times the units and keeps the samples; the other
     * answers.  Two ranks: rank 0 leads, rank 1 answers. */
    int peer, leader;
    int npairs;             /* pairs measuring at once: 1 with two ranks (and in a scan's serial mode) */
    const int *partner;     /* every rank's partner this round (-1: waits), when more than two ranks */
    const char *hosts;      /* host name of every rank, host_len apart (for pair records) */
    size_t host_len;
    int64_t *gathered;      /* rank 0: every rank's block of the last vs_run_gather */
    size_t gathered_cap;
    long pass;              /* the scan's pass over its schedule */
    int pair_ranks[2];      /* the pair a size record is written for; [0] = -1: the run's only pair */
    vs_table_t agg;         /* rank 0, more than one pair: per size totals over the visits (driver.c) */
    struct vs_drift *drift; /* placement drift probe, when ranks 0 and 1 share a host */
    double drift_ns;        /* its last reading (cache-line round trip), NaN if none */
    vs_mem_t settle;        /* the settling token's buffer (vs_run_settle), allocated at first use */
    struct vs_hostload *load; /* rank 0: the host's load besides the run (hostload.h), NULL if unknown */
    double load_others, load_steal, load_waited; /* over the visit being recorded (NaN: unknown) */
    const struct vs_pattern *pattern; /* the pattern being run and its state (driver.c), for --validate */
    void *pattern_state;
    char err[512];         /* why the pattern failed */
} vs_run_t;

/* What one rank found in one round of a pattern's own payload check (check, below). */
typedef struct vs_check {
    int checked;          /* this rank compared bytes that its partner sent, wrote or left */
    vs_mem_diff_t diff;   /* where they first differed (offset -1: equal) */
} vs_check_t;

/* What a pattern needs of the module beyond the two-sided operations. */
enum {
    VS_NEEDS_RMA = 0x1,     /* the one-sided operations (interface 5) */
    VS_NEEDS_ATOMICS = 0x2, /* and atomic */
    VS_NEEDS_HOST = 0x4,    /* buffers core can read and write (no module memory) */
};

/* A pattern measures one message size at a time; the driver (driver.c)
 * owns the size loop: order, warm-up, batch choice, records, table.
 * All ranks call every function collectively. */
#define VS_MAX_SERIES 4
typedef struct vs_pattern {
    const char *name;
    const char *summary;
    const char *variants[4]; /* first is the default; NULL-terminated */
    int min_ranks;
    /* Per-sample series the pattern fills, NULL-terminated; series[0] is
     * written as "samples_ns", the others under their own names. */
    const char *series[VS_MAX_SERIES + 1];
    /* What one unit of series[0] is, for the table: "round trip", ... */
    const char *unit;
    int (*setup)(vs_run_t *r, size_t max_bytes, void **state);
    /* n unrecorded units; *unit_ns = typical (median) time of one unit on
     * rank 0, or 0 when unknown.  probe has room for n values. */
    int (*warmup)(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns);
    /* n samples of `batch` consecutive units each; rank 0 stores per-sample
     * times (ns, batch means) in series[k][0..n). */
    int (*measure)(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series);
    void (*teardown)(vs_run_t *r, void *state);
    /* Optional (rank 0): add this size's row to r->table; NULL = the
     * ping-pong latency row (vs_table_add_pingpong).  May reorder series. */
    int (*summarise)(vs_run_t *r, size_t bytes, int64_t *const *series, long n);
    /* Messages one unit moves, every direction counted (2 for a round trip, W for
     * a stream window); NULL: the pattern measures one pair only (no -n above 2). */
    long (*messages)(const vs_options_t *o);
    /* VS_NEEDS_* bits: a module without them is refused before the ranks start
     * (exit 77, vs_pattern_refusal). */
    unsigned needs;
    /* Optional, for --validate: one round of the pattern's own transfer outside
     * the timed loops (a put, a get, atomics), the payload made by
     * vs_validate_payload and compared where it arrived (vs_validate_expect).
     * NULL: the two-sided exchange of validate.c.  Collective over ranks 0 and 1. */
    int (*check)(vs_run_t *r, void *state, size_t bytes, int phase, int round, vs_check_t *out);
} vs_pattern_t;

/* Why the module cannot run pattern p (exit 77), or NULL when it can. */
const char *vs_pattern_refusal(const vs_pattern_t *p, const vs_transport_ops_t *ops, const char *transport,
                               char *buf, size_t len);

/* Every rank gives `count` int64 values; rank 0 finds rank k's at
 * r->gathered + k * count (out-of-band, through the bootstrap). */
int vs_run_gather(vs_run_t *r, const int64_t *mine, size_t count);

/* Run pattern p over r->opt's schedule (driver.c). */
int vs_driver_run(vs_run_t *r, const vs_pattern_t *p);

/* More than one pair (rank 0): the aggregate per size as a table to print
 * (bandwidth and rate over the slowest pair's time, over the mean time, and the
 * slowest pair's own bandwidth). */
int vs_driver_aggregate_table(const vs_run_t *r, vs_table_t *out);

extern const vs_pattern_t *const vs_patterns[]; /* NULL-terminated */
const vs_pattern_t *vs_pattern_find(const char *name);

/* Shared helpers for patterns (pattern.c). */

/* Page-aligned, touched buffer, registered with the transport when it
 * wants registration. */
int vs_run_buffer_alloc(vs_run_t *r, vs_mem_t *mem, size_t len);
void vs_run_buffer_free(vs_run_t *r, vs_mem_t *mem);

/* Rank 0's value of x, on every rank (out-of-band, through the bootstrap). */
int vs_run_bcast_long(vs_run_t *r, long *x);

/* Write a "size" record (rank 0): the common fields plus each series. */
int vs_run_write_size(vs_run_t *r, const vs_pattern_t *p, size_t bytes, long warmup, long batch,
                      int64_t *const *series, long n, uint64_t elapsed_ns);

/* Probe placement drift after a size (collective; no-op without a probe). */
int vs_run_drift(vs_run_t *r);

/* Settle the transport with this rank's partner before a phase outside it
 * (bootstrap agreements, drift probes, validation, records, the end).  A
 * library may complete a request locally while the message, or the reply
 * the peer's request waits for, still sits in this rank's queues, and push
 * it only when this rank next calls it (MPI's weak progress; UCX, libfabric
 * and the references alike): a rank that left for an out-of-band wait then
 * starves its peer, which waits in the transport for ever.  Both ranks send
 * a token and wait for the peer's (ranks without a partner return at once):
 * each enters the next phase knowing its partner has completed every
 * request of the phase before.  The one leaving first may still hold its
 * own token, so every wait outside the transport also drives it (the idle
 * hooks of the drift probe and the TCP bootstrap, set up in main.c). */
int vs_run_settle(vs_run_t *r);
void vs_run_settle_free(vs_run_t *r);

/* The transport's progress, for the idle hooks (arg is the vs_run_t). */
int vs_run_idle(void *arg);

/* Record why the run failed, with the transport's words where it gave some. */
int vs_run_fail(vs_run_t *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Blocking send/receive through the ops table: the module's own blocking
 * call where it has one, else post + wait. */
static inline int vs_op_send(vs_run_t *r, const vs_mem_t *m, size_t len, int peer, uint64_t tag)
{
    if (r->ops->send)
        return r->ops->send(r->t, m, len, peer, tag);
    vs_req_t req;
    int rc = r->ops->post_send(r->t, m, len, peer, tag, &req);
    return rc ? rc : r->ops->wait(r->t, &req);
}

static inline int vs_op_recv(vs_run_t *r, vs_mem_t *m, size_t len, int peer, uint64_t tag)
{
    if (r->ops->recv)
        return r->ops->recv(r->t, m, len, peer, tag);
    vs_req_t req;
    int rc = r->ops->post_recv(r->t, m, len, peer, tag, &req);
    return rc ? rc : r->ops->wait(r->t, &req);
}

/* The echoing side of a round trip (rank 1 of pingpong and overhead, the
 * second rank of a pair): receive from the partner (blocking, or post + wait),
 * then send back. */
static inline int vs_run_echo(vs_run_t *r, vs_mem_t *rbuf, const vs_mem_t *sbuf, size_t len, int nonblocking,
                              uint64_t tag)
{
    int rc;
    if (nonblocking) {
        vs_req_t req;
        if ((rc = r->ops->post_recv(r->t, rbuf, len, r->peer, tag, &req)) || (rc = r->ops->wait(r->t, &req)))
            return rc;
    } else if ((rc = vs_op_recv(r, rbuf, len, r->peer, tag))) {
        return rc;
    }
    return vs_op_send(r, sbuf, len, r->peer, tag);
}

/* One timed unit of a pattern (a round trip, a window, ...). */
typedef int (*vs_unit_fn)(vs_run_t *r, void *state, size_t len);

/* Warm-up shared by unit patterns: n units, each timed alone into probe; on
 * rank 0 *unit_ns = their lower quartile (foreign load only ever adds delay,
 * so a low quantile estimates one unit better than the median).  Inlined so
 * that `unit` is called directly. */
static inline __attribute__((always_inline)) int vs_run_warm_units(vs_run_t *r, vs_unit_fn unit, void *state,
                                                                   size_t bytes, long n, int64_t *probe,
                                                                   double *unit_ns, const char *what)
{
    *unit_ns = 0;
    if (r->peer < 0)
        return 0;
    for (long i = 0; i < n; i++) {
        uint64_t t0 = vs_timer_read(&r->timer);
        int rc = unit(r, state, bytes);
        if (rc)
            return vs_run_fail(r, rc, "warm-up %s of %zu B failed", what, bytes);
        probe[i] = (int64_t)(vs_timer_read(&r->timer) - t0);
        vs_watchdog_beat(r->wd);
    }
    if (n > 0) {
        vs_median_i64(probe, n); /* sorts */
        *unit_ns = (double)probe[n / 4];
    }
    return 0;
}

/* The timed loop shared by unit patterns: n samples, each the mean time of
 * `batch` consecutive units, one clock read and one store per sample (the
 * division by batch waits until the loop is over). */
static inline __attribute__((always_inline)) int vs_run_time_units(vs_run_t *r, vs_unit_fn unit, void *state,
                                                                   size_t bytes, long batch, long n,
                                                                   int64_t *samples, const char *what)
{
    if (r->peer < 0)
        return 0;
    uint64_t prev = vs_timer_read(&r->timer);
    for (long i = 0; i < n; i++) {
        for (long k = 0; k < batch; k++) {
            int rc = unit(r, state, bytes);
            if (rc)
                return vs_run_fail(r, rc, "%s of %zu B failed", what, bytes);
        }
        uint64_t now = vs_timer_read(&r->timer);
        samples[i] = (int64_t)(now - prev); /* the mean per unit after the loop */
        prev = now;
        vs_watchdog_beat(r->wd);
    }
    if (batch > 1)
        for (long i = 0; i < n; i++)
            samples[i] = (samples[i] + batch / 2) / batch;
    return 0;
}

#endif
