/* Payload checks (--validate), run outside every timed loop.
 *
 * Per size and phase (before the warm-up, after the measured samples), ranks
 * 0 and 1 run ROUNDS exchanges.  In each, both post a receive, then send a
 * payload generated from (size, phase, round, sender) and wait for both; the
 * receiver regenerates the expected bytes and compares all of them.  Each
 * rank's verdict goes to rank 0 through the bootstrap, so every rank agrees
 * on the size's validity.  Other ranks only take part in that exchange. */
#include "validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "pattern.h"
#include "prng.h"

enum { ROUNDS = 2, TAG = 0x5643 };

/* One rank's finding, sent to rank 0 as plain bytes. */
typedef struct verdict {
    int32_t checked;       /* this rank received and compared payloads */
    int32_t phase, round;  /* first mismatch */
    int64_t offset;        /* first differing byte, -1 when all matched */
    int64_t differing;     /* bytes that differed in that exchange */
    int32_t expected, got;
} verdict_t;

struct vs_validate {
    vs_mem_t sbuf, rbuf;
    unsigned char *want;
    size_t cap;
    size_t bytes;          /* size the verdict below is for */
    verdict_t found;       /* rank 0: first mismatch seen for this size, either direction */
    int from;              /* sender of the mismatching payload */
};

static uint64_t payload_seed(size_t bytes, int phase, int round, int sender)
{
    return ((uint64_t)bytes * 0x100000001b3ULL) ^ ((uint64_t)phase << 56) ^ ((uint64_t)round << 48) ^
           ((uint64_t)sender << 40) ^ 0x7665727375730000ULL;
}

#if VS_FAULT_INJECTION
/* Test builds only: VERSUS_FAULT_CORRUPT=1 flips one byte of what rank 1
 * expects in the first exchange after the measurement (so the payload it
 * received differs there), at every size > 0 or only at
 * VERSUS_FAULT_CORRUPT_SIZE bytes. */
static void fault_corrupt(int rank, unsigned char *buf, size_t bytes, int phase, int round)
{
    const char *on = getenv("VERSUS_FAULT_CORRUPT");
    if (rank != 1 || !on || strcmp(on, "1") || !bytes || phase != VS_VALIDATE_AFTER || round != 0)
        return;
    const char *only = getenv("VERSUS_FAULT_CORRUPT_SIZE");
    if (only && strtoull(only, NULL, 10) != bytes)
        return;
    buf[bytes / 2] ^= 0x01;
}
#endif

void vs_validate_payload(unsigned char *buf, size_t bytes, int phase, int round, int sender)
{
    vs_prng_fill_bytes(buf, bytes, payload_seed(bytes, phase, round, sender));
}

void vs_validate_fault(const vs_run_t *r, unsigned char *want, size_t bytes, int phase, int round)
{
#if VS_FAULT_INJECTION
    fault_corrupt(r->rank, want, bytes, phase, round);
#else
    (void)r, (void)want, (void)bytes, (void)phase, (void)round;
#endif
}

void vs_validate_expect(const vs_run_t *r, unsigned char *want, size_t bytes, int phase, int round, int sender)
{
    vs_validate_payload(want, bytes, phase, round, sender);
    vs_validate_fault(r, want, bytes, phase, round);
}

static int state_get(vs_run_t *r, struct vs_validate **out)
{
    if (r->validate) {
        *out = r->validate;
        return 0;
    }
    struct vs_validate *v = calloc(1, sizeof *v);
    if (!v)
        return vs_run_fail(r, -ENOMEM, "cannot allocate the payload checker");
    r->validate = v;
    for (size_t i = 0; i < r->opt->sizes.n; i++)
        if (r->opt->sizes.v[i] > v->cap)
            v->cap = r->opt->sizes.v[i];
    int rc = 0;
    if (r->rank <= 1 && !(r->pattern && r->pattern->check)) { /* a pattern with its own check has its buffers */
        if (!(v->want = malloc(v->cap ? v->cap : 1)))
            return vs_run_fail(r, -ENOMEM, "cannot allocate the payload checker");
        if ((rc = vs_run_buffer_alloc(r, &v->sbuf, v->cap)) || (rc = vs_run_buffer_alloc(r, &v->rbuf, v->cap)))
            return rc;
    }
    *out = v;
    return 0;
}

/* One exchange in both directions between ranks 0 and 1; fills *mine. */
static int exchange_once(vs_run_t *r, struct vs_validate *v, size_t bytes, int phase, int round, verdict_t *mine)
{
    const vs_transport_ops_t *ops = r->ops;
    int peer = 1 - r->rank;
    vs_req_t rreq, sreq;
    int rc;
    /* the payload and stale bytes that never match by luck, staged in want */
    vs_prng_fill_bytes(v->want, bytes, payload_seed(bytes, phase, round, r->rank));
    if ((rc = vs_mem_fill(ops, r->t, &v->sbuf, v->want, bytes)))
        return vs_run_fail(r, rc, "payload check: cannot fill a %zu-byte send buffer", bytes);
    memset(v->want, r->rank ? 0x3c : 0xc3, bytes);
    if ((rc = vs_mem_fill(ops, r->t, &v->rbuf, v->want, bytes)))
        return vs_run_fail(r, rc, "payload check: cannot fill a %zu-byte receive buffer", bytes);
    if ((rc = ops->post_recv(r->t, &v->rbuf, bytes, peer, TAG, &rreq)))
        return vs_run_fail(r, rc, "payload check: posting a %zu-byte receive failed", bytes);
    if ((rc = ops->post_send(r->t, &v->sbuf, bytes, peer, TAG, &sreq)))
        return vs_run_fail(r, rc, "payload check: posting a %zu-byte send failed", bytes);
    if ((rc = ops->wait(r->t, &sreq)) || (rc = ops->wait(r->t, &rreq)))
        return vs_run_fail(r, rc, "payload check: exchanging %zu bytes failed", bytes);
    vs_prng_fill_bytes(v->want, bytes, payload_seed(bytes, phase, round, peer));
#if VS_FAULT_INJECTION
    fault_corrupt(r->rank, v->want, bytes, phase, round);
#endif
    if (mine->offset >= 0)
        return 0;
    vs_mem_diff_t d;
    if ((rc = vs_mem_compare(ops, r->t, &v->rbuf, v->want, bytes, &d)))
        return vs_run_fail(r, rc, "payload check: cannot compare a %zu-byte receive buffer", bytes);
    if (d.offset < 0)
        return 0;
    mine->phase = phase;
    mine->round = round;
    mine->offset = d.offset;
    mine->differing = d.count;
    mine->expected = d.expected;
    mine->got = d.got;
    return 0;
}

int vs_validate_size(vs_run_t *r, size_t bytes, int phase)
{
    if (!r->opt->validate)
        return 0;
    struct vs_validate *v = NULL;
    int rc = state_get(r, &v);
    if (rc)
        return rc;
    if (phase == VS_VALIDATE_BEFORE || v->bytes != bytes) {
        memset(&v->found, 0, sizeof v->found);
        v->found.offset = -1;
        v->bytes = bytes;
    }
    vs_watchdog_phase(r->wd, "checking payloads", bytes);
    verdict_t mine = {.checked = r->rank <= 1, .offset = -1};
    if (r->rank <= 1 && r->pattern && r->pattern->check) {
        mine.checked = 0;
        for (int k = 0; k < ROUNDS; k++) {
            vs_check_t c = {.diff = {.offset = -1}};
            if ((rc = r->pattern->check(r, r->pattern_state, bytes, phase, k, &c)))
                return rc;
            mine.checked |= c.checked;
            if (c.checked && c.diff.offset >= 0 && mine.offset < 0) {
                mine.phase = phase;
                mine.round = k;
                mine.offset = c.diff.offset;
                mine.differing = c.diff.count;
                mine.expected = c.diff.expected;
                mine.got = c.diff.got;
            }
            vs_watchdog_beat(r->wd);
        }
    } else if (r->rank <= 1) {
        for (int k = 0; k < ROUNDS; k++) {
            if ((rc = exchange_once(r, v, bytes, phase, k, &mine)))
                return rc;
            vs_watchdog_beat(r->wd);
        }
    }
    verdict_t *all = calloc((size_t)r->size, sizeof *all);
    if (!all)
        return vs_run_fail(r, -ENOMEM, "cannot allocate payload verdicts");
    rc = r->bs->exchange(r->bs, &mine, all, sizeof mine);
    if (rc) {
        free(all);
        return vs_run_fail(r, rc, "bootstrap exchange failed");
    }
    int was_valid = v->found.offset < 0;
    for (int k = 0; k < 2 && k < r->size; k++) {
        if (all[k].offset >= 0 && v->found.offset < 0) {
            v->found = all[k];
            v->from = 1 - k; /* rank k received what 1-k sent */
        }
    }
    free(all);
    if (was_valid && v->found.offset >= 0)
        r->invalid_sizes++;
    return 0;
}

int vs_validate_finding(const vs_run_t *r, vs_validate_finding_t *out)
{
    const struct vs_validate *v = r->validate;
    if (!r->opt->validate || !v)
        return 0;
    memset(out, 0, sizeof *out);
    out->valid = v->found.offset < 0;
    if (!out->valid) {
        out->after = v->found.phase == VS_VALIDATE_AFTER;
        out->round = v->found.round;
        out->from = v->from;
        out->offset = v->found.offset;
        out->expected = v->found.expected;
        out->got = v->found.got;
        out->differing = v->found.differing;
    }
    return 1;
}

void vs_validate_free(vs_run_t *r)
{
    struct vs_validate *v = r->validate;
    if (!v)
        return;
    vs_run_buffer_free(r, &v->rbuf);
    vs_run_buffer_free(r, &v->sbuf);
    free(v->want);
    free(v);
    r->validate = NULL;
}
