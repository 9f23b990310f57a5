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
    struct vs_drift *drift; /* placement drift probe, when ranks 0 and 1 share a host */
    double drift_ns;        /* its last reading (cache-line round trip), NaN if none */
    char err[512];         /* why the pattern failed */
} vs_run_t;

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
} vs_pattern_t;

/* Run pattern p over r->opt's schedule (driver.c). */
int vs_driver_run(vs_run_t *r, const vs_pattern_t *p);

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

#endif
