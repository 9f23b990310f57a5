/* One-sided patterns (transport interface 5), written once for every module
 * that has the operations.  Rank 0 is the origin, rank 1 the target; each
 * rank exposes one buffer to the other (rma.c) and keeps a local one, the
 * origin's side of a put or a get.  docs/patterns.md
 *
 * put, get (as osu_put_latency / osu_get_latency and osu_put_bw / osu_get_bw
 * with passive-target lock + flush):
 *   latency    origin: BEGIN, one put (get), wait, END per unit; the target
 *              calls BEGIN and END.  One unit = one operation completed at
 *              the target (END flushes it): the sample is the latency.
 *   bandwidth  origin: BEGIN, --window W operations, wait for all, END.  One
 *              unit = one window; bandwidth = W x size / window time.
 * atomic (8 bytes, the target's first word):
 *   fadd       BEGIN, fetch-and-add 1, wait, END; the sample is one atomic.
 *   cswap      the same with compare-and-swap (compare: the word as last
 *              seen, swap in that plus one: it succeeds in the steady state).
 * putnotify (the one-sided ping-pong): rank 0 puts the payload, then an
 *   8-byte flag word right after it (at the size rounded up to 8) into rank
 *   1's buffer, and ends the epoch; rank 1 polls its own buffer's flag word
 *   (progress and rma_sync in the loop), then answers the same way.  One unit
 *   = one round trip, as pingpong's: one-way = round trip / 2.  The flag
 *   counts the round trips, so a stale one never matches.  Variant ordered
 *   counts on the two puts landing in order (a memory copy does; the RDMA
 *   libraries do to one peer in practice, and --validate checks it); variant
 *   flush ends the epoch between them (the payload is complete at the target
 *   before the flag is written).  The target opens no epoch: its buffer is
 *   written while it polls (passive target).
 *
 * --validate: each pattern's own transfer, outside the timed loops, of a
 * payload made from (size, phase, round, sender), compared where it arrived:
 * put at the target, get at the origin, atomics' old values at the origin
 * and the final word at the target, putnotify at both ends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "pattern.h"
#include "pattern_params.h"
#include "rma.h"
#include "table_layout.h"
#include "validate.h"

enum { RMA_PUT, RMA_GET, RMA_FADD, RMA_CSWAP, RMA_NOTIFY };
enum { CHECK_OPS = 4, FLAG_BYTES = 8 };

typedef struct rma {
    vs_rma_buf_t win;     /* this rank's exposed buffer; win.peer: the partner's */
    vs_mem_t loc;         /* the origin's side of a put or get, the source of putnotify */
    vs_req_t *req;        /* one per operation of a window */
    long window;          /* operations per unit: 1, or --window for bandwidth */
    int kind;             /* RMA_* */
    int flush;            /* putnotify: end the epoch between payload and flag */
    uint64_t word;        /* cswap: the target's word as last seen */
    uint64_t result;      /* the last atomic's old word */
    uint64_t results[CHECK_OPS];
    uint64_t seq;         /* putnotify: round trips so far (the flag's value) */
    unsigned char *want;  /* host bytes: zeros at setup, then what --validate expects */
    size_t cap;
} rma_t;

#define RMA_UNIT static inline __attribute__((always_inline)) int

static inline __attribute__((always_inline)) int wait_all(vs_run_t *r, vs_req_t *req, long n)
{
    for (long i = 0; i < n; i++) {
        int rc = r->ops->wait(r->t, &req[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static inline __attribute__((always_inline)) int epoch(vs_run_t *r, int role, int phase)
{
    return r->ops->rma_epoch(r->t, r->peer, role, phase);
}

/* put and get, origin: one epoch of `window` operations. */
RMA_UNIT put_window(vs_run_t *r, void *state, size_t len)
{
    rma_t *p = state;
    int rc;
    if ((rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN)))
        return rc;
    for (long i = 0; i < p->window; i++)
        if ((rc = r->ops->put(r->t, &p->loc, 0, len, r->peer, &p->win.peer, 0, &p->req[i])))
            return rc;
    if ((rc = wait_all(r, p->req, p->window)))
        return rc;
    return epoch(r, VS_RMA_ORIGIN, VS_RMA_END);
}

RMA_UNIT get_window(vs_run_t *r, void *state, size_t len)
{
    rma_t *p = state;
    int rc;
    if ((rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN)))
        return rc;
    for (long i = 0; i < p->window; i++)
        if ((rc = r->ops->get(r->t, &p->loc, 0, len, r->peer, &p->win.peer, 0, &p->req[i])))
            return rc;
    if ((rc = wait_all(r, p->req, p->window)))
        return rc;
    return epoch(r, VS_RMA_ORIGIN, VS_RMA_END);
}

/* The target of put, get and atomic: the epoch's two calls. */
RMA_UNIT target_epoch(vs_run_t *r, void *state, size_t len)
{
    (void)state, (void)len;
    int rc = epoch(r, VS_RMA_TARGET, VS_RMA_BEGIN);
    return rc ? rc : epoch(r, VS_RMA_TARGET, VS_RMA_END);
}

static inline __attribute__((always_inline)) int amo(vs_run_t *r, rma_t *p, int op, uint64_t operand,
                                                     uint64_t compare, uint64_t *result)
{
    int rc;
    if ((rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN)) ||
        (rc = r->ops->atomic(r->t, op, operand, compare, result, r->peer, &p->win.peer, 0, &p->req[0])) ||
        (rc = r->ops->wait(r->t, &p->req[0])))
        return rc;
    return epoch(r, VS_RMA_ORIGIN, VS_RMA_END);
}

RMA_UNIT fadd_unit(vs_run_t *r, void *state, size_t len)
{
    (void)len;
    rma_t *p = state;
    return amo(r, p, VS_AMO_FADD, 1, 0, &p->result);
}

RMA_UNIT cswap_unit(vs_run_t *r, void *state, size_t len)
{
    (void)len;
    rma_t *p = state;
    int rc = amo(r, p, VS_AMO_CSWAP, p->word + 1, p->word, &p->result);
    p->word = p->result == p->word ? p->word + 1 : p->result;
    return rc;
}

static inline size_t flag_off(size_t len)
{
    return (len + FLAG_BYTES - 1) / FLAG_BYTES * FLAG_BYTES;
}

/* putnotify: the payload, then the flag holding p->seq, into the partner's buffer. */
static inline __attribute__((always_inline)) int notify(vs_run_t *r, rma_t *p, size_t len)
{
    size_t off = flag_off(len);
    __atomic_store_n((uint64_t *)((unsigned char *)p->loc.addr + off), p->seq, __ATOMIC_RELAXED);
    int rc, n = 0;
    if ((rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN)))
        return rc;
    if (len && (rc = r->ops->put(r->t, &p->loc, 0, len, r->peer, &p->win.peer, 0, &p->req[n++])))
        return rc;
    if (p->flush && len) {
        if ((rc = wait_all(r, p->req, n)) || (rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_END)) ||
            (rc = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN)))
            return rc;
        n = 0;
    }
    if ((rc = r->ops->put(r->t, &p->loc, off, FLAG_BYTES, r->peer, &p->win.peer, off, &p->req[n++])) ||
        (rc = wait_all(r, p->req, n)))
        return rc;
    return epoch(r, VS_RMA_ORIGIN, VS_RMA_END);
}

/* putnotify: poll this rank's own buffer until the partner's flag says p->seq. */
static inline __attribute__((always_inline)) int await_flag(vs_run_t *r, rma_t *p, size_t len)
{
    const uint64_t *flag = (const uint64_t *)((const unsigned char *)p->win.mem.addr + flag_off(len));
    for (;;) {
        int rc;
        if (r->ops->progress && (rc = r->ops->progress(r->t)))
            return rc;
        if (r->ops->rma_sync && (rc = r->ops->rma_sync(r->t, &p->win.mem)))
            return rc;
        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == p->seq)
            return 0;
    }
}

RMA_UNIT notify_ping(vs_run_t *r, void *state, size_t len)
{
    rma_t *p = state;
    p->seq++;
    int rc = notify(r, p, len);
    return rc ? rc : await_flag(r, p, len);
}

RMA_UNIT notify_echo(vs_run_t *r, void *state, size_t len)
{
    rma_t *p = state;
    p->seq++;
    int rc = await_flag(r, p, len);
    return rc ? rc : notify(r, p, len);
}

/* call(r, <this rank's unit>, args...), chosen once per size: the timed loop
 * has no branch on the pattern, the variant or the role. */
#define RMA_BY_ROLE(call, r, p, ...)                                                                  \
    ((p)->kind == RMA_NOTIFY ? ((r)->leader ? call(r, notify_ping, p, __VA_ARGS__)                  \
                                            : call(r, notify_echo, p, __VA_ARGS__))                 \
     : !(r)->leader          ? call(r, target_epoch, p, __VA_ARGS__)                                \
     : (p)->kind == RMA_PUT  ? call(r, put_window, p, __VA_ARGS__)                                  \
     : (p)->kind == RMA_GET  ? call(r, get_window, p, __VA_ARGS__)                                  \
     : (p)->kind == RMA_FADD ? call(r, fadd_unit, p, __VA_ARGS__)                                   \
                             : call(r, cswap_unit, p, __VA_ARGS__))

static const char *what(const rma_t *p)
{
    static const char *const names[] = {
        [RMA_PUT] = "put", [RMA_GET] = "get", [RMA_FADD] = "fetch-and-add", [RMA_CSWAP] = "compare-and-swap",
        [RMA_NOTIFY] = "put-with-notification round trip"};
    return p->window > 1 ? (p->kind == RMA_PUT ? "window of puts" : "window of gets") : names[p->kind];
}

static int rma_warmup(vs_run_t *r, void *state, size_t bytes, long n, int64_t *probe, double *unit_ns)
{
    rma_t *p = state;
    return RMA_BY_ROLE(vs_run_warm_units, r, p, bytes, n, probe, unit_ns, what(p));
}

static int rma_measure(vs_run_t *r, void *state, size_t bytes, long batch, long n, int64_t *const *series)
{
    rma_t *p = state;
    return RMA_BY_ROLE(vs_run_time_units, r, p, bytes, batch, n, series[0], what(p));
}

static int barrier(vs_run_t *r)
{
    int rc = r->bs->barrier(r->bs);
    return rc ? vs_run_fail(r, rc, "bootstrap barrier failed") : 0;
}

static int setup(vs_run_t *r, size_t max_bytes, void **state, int kind)
{
    rma_t *p = calloc(1, sizeof *p);
    if (!p)
        return vs_run_fail(r, -ENOMEM, "cannot allocate pattern state");
    *state = p;
    p->kind = kind;
    p->flush = kind == RMA_NOTIFY && !strcmp(r->opt->variant, "flush");
    p->window = vs_pattern_rma_windowed(r->opt) ? vs_pattern_window(r->opt) : 1;
    /* putnotify has two requests out at once, the others one per operation of a window */
    if (!(p->req = calloc((size_t)(p->window > 2 ? p->window : 2), sizeof *p->req)))
        return vs_run_fail(r, -ENOMEM, "cannot allocate %ld requests", p->window);
    /* room for the flag word after the largest payload (and for the atomics' word) */
    p->cap = flag_off(max_bytes) + FLAG_BYTES;
    if (!(p->want = calloc(1, p->cap)))
        return vs_run_fail(r, -ENOMEM, "cannot allocate the payload checker");
    int rc = vs_run_buffer_alloc(r, &p->loc, p->cap);
    if (rc || (rc = vs_rma_buffers(r, &p->win, 1, p->cap)))
        return rc;
    /* putnotify's flags start at 0 (round trips count from 1), as does the atomics' word */
    if ((rc = vs_mem_fill(r->ops, r->t, &p->win.mem, p->want, p->cap)) ||
        (rc = vs_mem_fill(r->ops, r->t, &p->loc, p->want, p->cap)))
        return vs_run_fail(r, rc, "cannot clear the buffers");
    /* both ranks' buffers are in their first state before any rank writes into the other's */
    return barrier(r);
}

static int put_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    return setup(r, max_bytes, state, RMA_PUT);
}

static int get_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    return setup(r, max_bytes, state, RMA_GET);
}

/* One atomic of the variant before anything is measured, that leaves the word
 * as it is (add 0; swap only if the word were all ones), and every rank learns
 * its outcome: a library that has the one-sided operations but not this atomic
 * here refuses on the origin's first call, and the target, waiting in its
 * epochs, would otherwise learn it only from --timeout. */
static int atomic_probe(vs_run_t *r, rma_t *p)
{
    int mine = 0;
    if (r->peer >= 0 && r->leader) {
        int cswap = p->kind == RMA_CSWAP;
        if (!(mine = epoch(r, VS_RMA_ORIGIN, VS_RMA_BEGIN))) {
            mine = r->ops->atomic(r->t, cswap ? VS_AMO_CSWAP : VS_AMO_FADD, cswap ? UINT64_MAX : 0,
                                  cswap ? UINT64_MAX : 0, &p->result, r->peer, &p->win.peer, 0, &p->req[0]);
            if (!mine)
                mine = r->ops->wait(r->t, &p->req[0]);
            int end = epoch(r, VS_RMA_ORIGIN, VS_RMA_END);
            if (!mine)
                mine = end;
            else if (mine > 0)
                mine = -mine;
        }
        if (mine)
            vs_run_fail(r, mine, "the first %s atomic on rank %d's word failed", cswap ? "compare-and-swap" :
                        "fetch-and-add", r->peer);
    } else if (r->peer >= 0) {
        mine = target_epoch(r, p, 8);
    }
    return vs_rma_agree(r, mine, "run this atomic");
}

static int atomic_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    int rc = setup(r, max_bytes, state, strcmp(r->opt->variant, "cswap") ? RMA_FADD : RMA_CSWAP);
    return rc ? rc : atomic_probe(r, *state);
}

static int notify_setup(vs_run_t *r, size_t max_bytes, void **state)
{
    return setup(r, max_bytes, state, RMA_NOTIFY);
}

static void rma_teardown(vs_run_t *r, void *state)
{
    rma_t *p = state;
    if (!p)
        return;
    vs_rma_buffers_free(r, &p->win, 1);
    vs_run_buffer_free(r, &p->loc);
    free(p->req);
    free(p->want);
    free(p);
}

/* ---- --validate: the pattern's own transfer, outside the timed loops */

/* Every rank is done with what came before (the timed loop: settling with a
 * token does not prove that a module delivered every operation, and a fake
 * one delivers nothing) before any rank writes the bytes of a check. */
static int begin_check(vs_run_t *r)
{
    return barrier(r);
}

static int fill(vs_run_t *r, vs_mem_t *m, const unsigned char *src, size_t len)
{
    int rc = vs_mem_fill(r->ops, r->t, m, src, len);
    return rc ? vs_run_fail(r, rc, "payload check: cannot fill a %zu-byte buffer", len) : 0;
}

static int compare(vs_run_t *r, const vs_mem_t *m, const unsigned char *want, size_t len, vs_check_t *out)
{
    int rc = vs_mem_compare(r->ops, r->t, m, want, len, &out->diff);
    out->checked = 1;
    return rc ? vs_run_fail(r, rc, "payload check: cannot compare a %zu-byte buffer", len) : 0;
}

/* put: the origin's payload lands in the target's exposed buffer, over stale bytes. */
static int put_check(vs_run_t *r, void *state, size_t bytes, int phase, int round, vs_check_t *out)
{
    rma_t *p = state;
    int rc = begin_check(r), origin = r->leader;
    if (rc)
        return rc;
    if (origin)
        vs_validate_payload(p->want, bytes, phase, round, r->rank);
    else
        memset(p->want, 0x3c, bytes);
    if ((rc = fill(r, origin ? &p->loc : &p->win.mem, p->want, bytes)) || (rc = barrier(r)))
        return rc;
    if (origin) {
        long w = p->window;
        p->window = 1;
        rc = put_window(r, p, bytes);
        p->window = w;
    } else {
        rc = target_epoch(r, p, bytes);
    }
    if (rc)
        return vs_run_fail(r, rc, "payload check: a %zu-byte put failed", bytes);
    if ((rc = barrier(r)) || origin)
        return rc;
    if (r->ops->rma_sync && (rc = r->ops->rma_sync(r->t, &p->win.mem)))
        return vs_run_fail(r, rc, "payload check: rma_sync failed");
    vs_validate_expect(r, p->want, bytes, phase, round, r->peer);
    return compare(r, &p->win.mem, p->want, bytes, out);
}

/* get: the target's exposed bytes arrive in the origin's local buffer, over stale bytes. */
static int get_check(vs_run_t *r, void *state, size_t bytes, int phase, int round, vs_check_t *out)
{
    rma_t *p = state;
    int rc = begin_check(r), origin = r->leader;
    if (rc)
        return rc;
    if (origin)
        memset(p->want, 0xc3, bytes);
    else
        vs_validate_payload(p->want, bytes, phase, round, r->rank);
    if ((rc = fill(r, origin ? &p->loc : &p->win.mem, p->want, bytes)) || (rc = barrier(r)))
        return rc;
    if (origin) {
        long w = p->window;
        p->window = 1;
        rc = get_window(r, p, bytes);
        p->window = w;
    } else {
        rc = target_epoch(r, p, bytes);
    }
    if (rc)
        return vs_run_fail(r, rc, "payload check: a %zu-byte get failed", bytes);
    if ((rc = barrier(r)) || !origin)
        return rc;
    vs_validate_expect(r, p->want, bytes, phase, round, r->peer);
    return compare(r, &p->loc, p->want, bytes, out);
}

/* atomic: from a start word the target sets, CHECK_OPS atomics whose old
 * values the origin compares, and the final word the target compares.
 *   fadd:  adds a[0..3]: old values w, w+a0, w+a0+a1, ...; final w+a0+..+a3
 *   cswap: (w -> a0) succeeds, (a0+1 -> a1) fails, (a0 -> a2) and (a2 -> a3)
 *          succeed: old values w, a0, a0, a2; final a3 */
static int atomic_check(vs_run_t *r, void *state, size_t bytes, int phase, int round, vs_check_t *out)
{
    rma_t *p = state;
    int rc = begin_check(r), origin = r->leader, cswap = p->kind == RMA_CSWAP;
    if (rc)
        return rc;
    uint64_t w, a[CHECK_OPS], old[CHECK_OPS], final;
    vs_validate_payload((unsigned char *)&w, sizeof w, phase, round, 1);
    vs_validate_payload((unsigned char *)a, sizeof a, phase, round, 0);
    if (cswap) {
        old[0] = w, old[1] = a[0], old[2] = a[0], old[3] = a[2];
        final = a[3];
    } else {
        final = w;
        for (int i = 0; i < CHECK_OPS; i++) {
            old[i] = final;
            final += a[i];
        }
    }
    if ((!origin && (rc = fill(r, &p->win.mem, (const unsigned char *)&w, sizeof w))) || (rc = barrier(r)))
        return rc;
    memset(p->results, 0, sizeof p->results);
    for (int i = 0; i < CHECK_OPS && !rc; i++) {
        if (!origin)
            rc = target_epoch(r, p, bytes);
        else if (!cswap)
            rc = amo(r, p, VS_AMO_FADD, a[i], 0, &p->results[i]);
        else
            rc = amo(r, p, VS_AMO_CSWAP, a[i], i == 0 ? w : i == 1 ? a[0] + 1 : i == 2 ? a[0] : a[2],
                     &p->results[i]);
    }
    if (rc)
        return vs_run_fail(r, rc, "payload check: an atomic failed");
    if ((rc = barrier(r)))
        return rc;
    if (origin) {
        p->word = p->results[CHECK_OPS - 1]; /* cswap's timed loop finds its way from any word */
        out->checked = 1;
        vs_mem_diff_bytes(p->results, old, sizeof old, &out->diff);
        return 0;
    }
    if (r->ops->rma_sync && (rc = r->ops->rma_sync(r->t, &p->win.mem)))
        return vs_run_fail(r, rc, "payload check: rma_sync failed");
    memcpy(p->want, &final, sizeof final);
    vs_validate_fault(r, p->want, sizeof final, phase, round);
    return compare(r, &p->win.mem, p->want, sizeof final, out);
}

/* putnotify: one round trip of the pattern itself, each side comparing the
 * payload it finds when the flag arrives. */
static int notify_check(vs_run_t *r, void *state, size_t bytes, int phase, int round, vs_check_t *out)
{
    rma_t *p = state;
    int rc = begin_check(r);
    if (rc)
        return rc;
    vs_validate_payload(p->want, bytes, phase, round, r->rank);
    memcpy(p->loc.addr, p->want, bytes);
    memset(p->win.mem.addr, r->rank ? 0x3c : 0xc3, bytes);
    if ((rc = barrier(r)))
        return rc;
    p->seq++;
    if (r->leader && (rc = notify(r, p, bytes)))
        return vs_run_fail(r, rc, "payload check: a %zu-byte put with notification failed", bytes);
    if ((rc = await_flag(r, p, bytes)))
        return vs_run_fail(r, rc, "payload check: waiting for a %zu-byte put's notification failed", bytes);
    vs_validate_expect(r, p->want, bytes, phase, round, r->peer);
    out->checked = 1;
    vs_mem_diff_bytes(p->win.mem.addr, p->want, bytes, &out->diff);
    if (!r->leader && (rc = notify(r, p, bytes)))
        return vs_run_fail(r, rc, "payload check: a %zu-byte put with notification failed", bytes);
    return barrier(r);
}

/* ---- tables */

static const vs_table_layout_t lat_layout = {
    .legend = "latency = one operation completed at the target (flushed), median and fastest sample; "
              "bandwidth = size / median latency (1 MB = 1e6 B)",
    .ncol = 3,
    .head = {"Latency [us]", "Min [us]", "Bandwidth [MB/s]"},
    .decimals = {2, 2, 2},
};

static const vs_table_layout_t bw_layout = {
    .legend = "bandwidth = W x size / median window time, rate = W / median window time (1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Bandwidth [MB/s]", "Rate [op/s]", "Window med [us]", "Window min [us]"},
    .decimals = {2, 0, 2, 2},
};

static const vs_table_layout_t amo_layout = {
    .legend = "latency = one 64-bit atomic completed (old value back), median and fastest sample; rate = 1 / median",
    .ncol = 3,
    .head = {"Latency [us]", "Min [us]", "Rate [op/s]"},
    .decimals = {2, 2, 0},
};

static int rma_summarise(vs_run_t *r, size_t bytes, int64_t *const *series, long n)
{
    double med = vs_series_median(series[0], n), min = vs_series_min(series[0], n);
    if (vs_pattern_rma_windowed(r->opt)) {
        double w = (double)vs_pattern_window(r->opt), s = med / 1e9;
        double col[4] = {s > 0 ? w * (double)bytes / s / 1e6 : 0, s > 0 ? w / s : 0, med / 1e3, min / 1e3};
        return vs_table_add_row(r->table, &bw_layout, bytes, col);
    }
    if (!strcmp(r->opt->pattern, "atomic")) {
        double col[3] = {med / 1e3, min / 1e3, med > 0 ? 1e9 / med : 0};
        return vs_table_add_row(r->table, &amo_layout, bytes, col);
    }
    double col[3] = {med / 1e3, min / 1e3, med > 0 ? (double)bytes / med * 1e3 : 0};
    return vs_table_add_row(r->table, &lat_layout, bytes, col);
}

const vs_pattern_t vs_pattern_put = {
    .name = "put",
    .summary = "one-sided put, rank 0 into rank 1's exposed buffer (variants: latency, bandwidth with --window W)",
    .variants = {"latency", "bandwidth", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "put",
    .setup = put_setup,
    .warmup = rma_warmup,
    .measure = rma_measure,
    .teardown = rma_teardown,
    .summarise = rma_summarise,
    .needs = VS_NEEDS_RMA,
    .check = put_check,
};

const vs_pattern_t vs_pattern_get = {
    .name = "get",
    .summary = "one-sided get, rank 0 from rank 1's exposed buffer (variants: latency, bandwidth with --window W)",
    .variants = {"latency", "bandwidth", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "get",
    .setup = get_setup,
    .warmup = rma_warmup,
    .measure = rma_measure,
    .teardown = rma_teardown,
    .summarise = rma_summarise,
    .needs = VS_NEEDS_RMA,
    .check = get_check,
};

const vs_pattern_t vs_pattern_atomic = {
    .name = "atomic",
    .summary = "one-sided 64-bit atomic on rank 1's word, latency per operation (variants: fadd, cswap; size 8)",
    .variants = {"fadd", "cswap", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "atomic",
    .setup = atomic_setup,
    .warmup = rma_warmup,
    .measure = rma_measure,
    .teardown = rma_teardown,
    .summarise = rma_summarise,
    .needs = VS_NEEDS_RMA | VS_NEEDS_ATOMICS,
    .check = atomic_check,
};

const vs_pattern_t vs_pattern_putnotify = {
    .name = "putnotify",
    .summary = "one-sided ping-pong: put the payload and a flag word, the peer polls it and answers "
               "(variants: ordered, flush)",
    .variants = {"ordered", "flush", NULL},
    .min_ranks = 2,
    .series = {"samples_ns", NULL},
    .unit = "round trip",
    .setup = notify_setup,
    .warmup = rma_warmup,
    .measure = rma_measure,
    .teardown = rma_teardown,
    .needs = VS_NEEDS_RMA | VS_NEEDS_HOST,
    .check = notify_check,
};
