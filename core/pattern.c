#include "pattern.h"

#include <math.h>

#include "drift.h"
#include "loader.h"
#include "memory.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const vs_pattern_t vs_pattern_pingpong;
extern const vs_pattern_t vs_pattern_overhead;
extern const vs_pattern_t vs_pattern_stream;
extern const vs_pattern_t vs_pattern_bistream;
extern const vs_pattern_t vs_pattern_doublebuffer;
extern const vs_pattern_t vs_pattern_put;
extern const vs_pattern_t vs_pattern_get;
extern const vs_pattern_t vs_pattern_atomic;
extern const vs_pattern_t vs_pattern_putnotify;

const vs_pattern_t *const vs_patterns[] = {
    &vs_pattern_pingpong,
    &vs_pattern_overhead,
    &vs_pattern_stream,
    &vs_pattern_bistream,
    &vs_pattern_doublebuffer,
    &vs_pattern_put,
    &vs_pattern_get,
    &vs_pattern_atomic,
    &vs_pattern_putnotify,
    NULL,
};

const vs_pattern_t *vs_pattern_find(const char *name)
{
    for (const vs_pattern_t *const *p = vs_patterns; *p; p++)
        if (!strcmp((*p)->name, name))
            return *p;
    return NULL;
}

const char *vs_pattern_refusal(const vs_pattern_t *p, const vs_transport_ops_t *ops, const char *transport,
                               char *buf, size_t len)
{
    if ((p->needs & (VS_NEEDS_RMA | VS_NEEDS_ATOMICS)) && !vs_module_has_rma(ops))
        snprintf(buf, len, "transport %s has no one-sided operations (interface 4 module, or the library "
                 "offers none): pattern %s needs them", transport, p->name);
    else if ((p->needs & VS_NEEDS_ATOMICS) && !vs_module_has_atomics(ops))
        snprintf(buf, len, "transport %s has no one-sided atomics (its module has no atomic operation): pattern "
                 "%s needs them", transport, p->name);
    else if ((p->needs & VS_NEEDS_HOST) && !vs_mem_host(ops))
        snprintf(buf, len, "transport %s keeps its buffers where core cannot read them (module memory), and "
                 "pattern %s polls its buffer from the host", transport, p->name);
    else
        return NULL;
    return buf;
}

int vs_run_buffer_alloc(vs_run_t *r, vs_mem_t *mem, size_t len)
{
    int rc = vs_mem_alloc(r->ops, r->t, mem, len);
    return rc ? vs_run_fail(r, rc, "cannot allocate and register a %zu-byte buffer", len) : 0;
}

void vs_run_buffer_free(vs_run_t *r, vs_mem_t *mem)
{
    vs_mem_release(r->ops, r->t, mem);
}

int vs_run_bcast_long(vs_run_t *r, long *x)
{
    long *all = calloc((size_t)r->size, sizeof *all);
    if (!all)
        return -ENOMEM;
    int rc = r->bs->exchange(r->bs, x, all, sizeof *x);
    if (!rc)
        *x = all[0];
    free(all);
    return rc ? vs_run_fail(r, rc, "bootstrap exchange failed") : 0;
}

int vs_run_gather(vs_run_t *r, const int64_t *mine, size_t count)
{
    size_t need = r->rank == 0 || !r->bs->gather ? (size_t)r->size * count : 0;
    int64_t *all = r->gathered;
    if (need > r->gathered_cap) {
        if (!(all = realloc(r->gathered, need * sizeof *all)))
            return vs_run_fail(r, -ENOMEM, "cannot allocate %zu gathered values", need);
        r->gathered = all;
        r->gathered_cap = need;
    }
    /* only rank 0 reads the blocks: the bootstrap's gather where it has one, else its all-gather */
    int rc = r->bs->gather ? r->bs->gather(r->bs, mine, all, count * sizeof *mine)
                           : r->bs->exchange(r->bs, mine, all, count * sizeof *mine);
    return rc ? vs_run_fail(r, rc, "bootstrap exchange failed") : 0;
}

int vs_run_drift(vs_run_t *r)
{
    if (!r->drift)
        return 0;
    int rc = vs_drift_probe(r->drift, 400, r->opt->timeout_s, &r->drift_ns);
    return rc ? vs_run_fail(r, rc, "placement drift probe failed") : 0;
}

enum { SETTLE_TAG = 0x5653, SETTLE_BYTES = 8 };

int vs_run_settle(vs_run_t *r)
{
    if (r->peer < 0)
        return 0;
    int rc;
    if (!r->settle.addr && (rc = vs_run_buffer_alloc(r, &r->settle, SETTLE_BYTES)))
        return rc;
    vs_req_t rreq, sreq;
    if ((rc = r->ops->post_recv(r->t, &r->settle, SETTLE_BYTES, r->peer, SETTLE_TAG, &rreq)))
        return vs_run_fail(r, rc, "settling with rank %d: posting the receive failed", r->peer);
    if ((rc = r->ops->post_send(r->t, &r->settle, SETTLE_BYTES, r->peer, SETTLE_TAG, &sreq)) ||
        (rc = r->ops->wait(r->t, &sreq)))
        return vs_run_fail(r, rc, "settling with rank %d: the send failed", r->peer);
    if ((rc = r->ops->wait(r->t, &rreq)))
        return vs_run_fail(r, rc, "settling with rank %d: the receive failed", r->peer);
    return 0;
}

void vs_run_settle_free(vs_run_t *r)
{
    if (r->settle.addr)
        vs_run_buffer_free(r, &r->settle);
    memset(&r->settle, 0, sizeof r->settle);
}

int vs_run_idle(void *arg)
{
    vs_run_t *r = arg;
    return r->ops->progress ? r->ops->progress(r->t) : 0;
}

int vs_run_fail(vs_run_t *r, int rc, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "%s: %s", what, strerror(rc < 0 ? -rc : rc));
    return rc < 0 ? rc : -rc;
}
