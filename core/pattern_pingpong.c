/* pingpong: rank 0 sends, rank 1 echoes (with more ranks, each pair's leader
 * sends and its partner echoes).  One unit = one round trip.
 *   blocking:    send; receive (the module's blocking receive, or post+wait)
 *   nonblocking: post the receive first, then send, then wait for it
 * --buffers shared sends and receives through one buffer per rank (NetPIPE's
 * cache mode); the default keeps two, as OSU and IMB do.
 * Ranks without a partner only take part in the out-of-band synchronisation. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "pattern_params.h"

enum { TAG = 1 };

typedef struct pp {
    vs_mem_t sbuf, rbuf;   /* --buffers shared: rbuf is sbuf */
    int nonblocking, shared;
} pp_t;

/* One round trip, one function per role and variant: the role and variant are
 * chosen once per size (PP_BY_ROLE), so the timed loop has no branch on them. */
#define PP_UNIT static inline __attribute__((always_inline)) int

PP_UNIT ping_blocking(vs_run_t *r, void *state, size_t len)
{
    pp_t *p = state;
    int rc = vs_op_send(r, &p->sbuf, len, r->peer, TAG);
    return rc ? rc : vs_op_recv(r, &p->rbuf, len, r->peer, TAG);
}

PP_UNIT ping_nonblocking(vs_run_t *r, void *state, size_t len)
{
    pp_t *p = state;
    vs_req_t req;
    int rc;
    if ((rc = r->ops->post_recv(r->t, &p->rbuf, len, r->peer, TAG, &req)) ||
        (rc = vs_op_send(r, &p->sbuf, len, r->peer, TAG)))
        return rc;
    return r->ops->wait(r->t, &req);
}

PP_UNIT echo_blocking(vs_run_t *r, void *state, size_t len)
{
    pp_t *p = state;
    return vs_run_echo(r, &p->rbuf, &p->sbuf, len, 0, TAG);
}

PP_UNIT echo_nonblocking(vs_run_t *r, void *state, size_t len)
{
    pp_t *p = state;
    return vs_run_echo(r, &p->rbuf, &p->sbuf, len, 1, TAG);
}

/* call(r, <this rank's unit>, args...): the leader pings, its partner echoes
 * (a rank without a partner returns at once inside the shared loops). */
#define PP_BY_ROLE(call, r, p, ...)                                                                    \
    ((r)->leader ? ((p)->nonblocking ? call(r, ping_nonblocking, p, __VA_ARGS__)                    \
                                        : call(r, ping_blocking, p, __VA_ARGS__))                      \
                    : ((p)->nonblocking ? call(r, echo_nonblocking, p, __VA_ARGS__)                    \
                                        : call(r, echo_blocking, p, __VA_ARGS__)))

static int pp_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    pp_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    p->nonblocking = !strcmp(r->opt->variant, "nonblocking");
    p->shared = vs_pattern_buffers_shared(r->opt);
    *state = p;
    int rc = vs_run_buffer_alloc(r, &p->sbuf, max_bytes);
    if (rc || !p->shared)
        return rc ? rc : vs_run_buffer_alloc(r, &p->rbuf, max_bytes);
    p->rbuf = p->sbuf;
    return 0;
}

static int pp_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    pp_t *p = state;
    return PP_BY_ROLE(vs_run_warm_units, r, p, bytes, n, probe, unit_ns, "round trip");
}

static int pp_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    pp_t *p = state;
    return PP_BY_ROLE(vs_run_time_units, r, p, bytes, batch, n, series[0], "round trip");
}

static long pp_messages(const vs_options_t *o)
{
    (void)o;
    return 2;
}

static void pp_teardown(vs_run_t *r, void *state)
{
    pp_t *p = state;
    if (!p)
        return;
    if (!p->shared)
        vs_run_buffer_free(r, &p->rbuf);
    vs_run_buffer_free(r, &p->sbuf);
    free(p);
}

const vs_pattern_t vs_pattern_pingpong = {
    .name = "pingpong",
    .summary = "round trips between ranks 0 and 1, or every pair at once (variants: blocking, nonblocking receive)",
    .variants = {"blocking", "nonblocking", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "round trip",
    .setup = pp_setup,
    .warmup = pp_warmup,
    .measure = pp_measure,
    .teardown = pp_teardown,
    .messages = pp_messages,
};
