/* The all-pairs scan: every pair of ranks measured once, to find the slow
 * link or the slow host.  The round-robin schedule (pairing.h) has N - 1
 * rounds of N/2 pairs; in each round every pair runs a short ping-pong at each
 * scan size at once (--serial: one pair after the other, the others waiting
 * in the bootstrap).  After each size of each round (or pair) the leaders'
 * samples go to rank 0, which writes one "pair" record per pair and keeps
 * nothing but the slowest few pairs per size for the table: no rank holds the
 * N x N matrix, and a crash keeps every finished round on disk.  Written with
 * the pattern's own warm-up and timed loop (pingpong), batch 1. */
#include <errno.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairing.h"
#include "pattern.h"
#include "record.h"
#include "table_layout.h"
#include "scan.h"
#include "timer.h"

typedef struct scan {
    vs_run_t *r;
    const vs_pattern_t *p;
    void *state;
    int *full;        /* every rank's partner in the current round */
    int *partner;     /* ... of those measuring now (-1: waits) */
    int64_t *probe, *samples, *block;
    long max_n, max_warm;
    vs_scan_slowest_t *slow; /* per size: the slowest pairs so far (rank 0) */
} scan_t;

/* Keep the pair among the VS_SCAN_SLOWEST slowest medians of its size. */
static void keep_slowest(vs_scan_slowest_t *s, int a, int b, long round, double median_ns)
{
    s->pairs++;
    int at;
    if (s->n < VS_SCAN_SLOWEST)
        at = s->n++;
    else if (median_ns > s->worst[VS_SCAN_SLOWEST - 1].median_ns)
        at = VS_SCAN_SLOWEST - 1;
    else
        return;
    s->worst[at] = (vs_scan_pair_t){.ranks = {a, b}, .round = round, .median_ns = median_ns};
    for (int i = at; i > 0 && s->worst[i].median_ns > s->worst[i - 1].median_ns; i--) {
        vs_scan_pair_t t = s->worst[i];
        s->worst[i] = s->worst[i - 1];
        s->worst[i - 1] = t;
    }
}

/* One size for the pairs measuring now (collective). */
static int scan_size(scan_t *c, size_t si, long round, long slot)
{
    vs_run_t *r = c->r;
    const vs_options_t *o = r->opt;
    size_t bytes = o->sizes.v[si];
    int large = bytes >= o->large_from;
    long warm = large ? o->warmup_large : o->warmup, n = large ? o->iterations_large : o->iterations;
    double unit_ns;
    int rc;
    vs_watchdog_phase(r->wd, "scanning", bytes);
    if ((rc = r->bs->barrier(r->bs)))
        return vs_run_fail(r, rc, "bootstrap barrier failed");
    if ((rc = c->p->warmup(r, c->state, bytes, warm, c->probe, &unit_ns)))
        return rc;
    int64_t *series[VS_MAX_SERIES] = {c->samples};
    uint64_t t0 = vs_now_ns();
    if ((rc = c->p->measure(r, c->state, bytes, 1, n, series)))
        return rc;
    uint64_t elapsed = vs_now_ns() - t0;
    if ((rc = vs_run_settle(r)))
        return rc;
    size_t count = 1 + (size_t)n;
    memset(c->block, 0, count * sizeof *c->block);
    if (r->leader) {
        c->block[0] = (int64_t)elapsed;
        for (long i = 0; i < n; i++)
            c->block[1 + i] = c->samples[i] > 0 ? c->samples[i] : 1;
    }
    if ((rc = vs_run_gather(r, c->block, count)) || r->rank != 0)
        return rc;
    for (int l = 0; l < r->size && !rc; l++) {
        int b = c->partner[l];
        if (b <= l)
            continue;
        const int64_t *blk = r->gathered + (size_t)l * count;
        rc = vs_record_pair(r, r->pass, round, slot, l, b, bytes, warm, blk + 1, n, (uint64_t)blk[0]);
        keep_slowest(&c->slow[si], l, b, round, vs_series_median(blk + 1, n));
    }
    return rc;
}

/* --serial with more ranks than CPUs: the pair measuring takes two different
 * CPUs of what the rank may use (the leader the first, its partner the last),
 * or the scheduler may put both on one and the pair looks slow. */
static void pin_for_pair(const cpu_set_t *own, int leader)
{
    int pick = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, own) && (pick < 0 || !leader))
            pick = cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(pick, &one);
    sched_setaffinity(0, sizeof one, &one);
}

int vs_scan_run(vs_run_t *r, const vs_pattern_t *p, const vs_pairing_t *pg, int serial, vs_scan_slowest_t **slowest)
{
    const vs_options_t *o = r->opt;
    scan_t c = {.r = r, .p = p};
    size_t max = 0;
    int rc = 0;
    for (size_t i = 0; i < o->sizes.n; i++)
        max = o->sizes.v[i] > max ? o->sizes.v[i] : max;
    c.max_n = o->iterations > o->iterations_large ? o->iterations : o->iterations_large;
    c.max_warm = o->warmup > o->warmup_large ? o->warmup : o->warmup_large;
    c.full = calloc((size_t)r->size, sizeof *c.full);
    c.partner = calloc((size_t)r->size, sizeof *c.partner);
    c.probe = calloc((size_t)(c.max_warm > 0 ? c.max_warm : 1), sizeof *c.probe);
    c.samples = calloc((size_t)c.max_n, sizeof *c.samples);
    c.block = calloc((size_t)c.max_n + 1, sizeof *c.block);
    c.slow = calloc(o->sizes.n ? o->sizes.n : 1, sizeof *c.slow);
    if (!c.full || !c.partner || !c.probe || !c.samples || !c.block || !c.slow)
        rc = vs_run_fail(r, -ENOMEM, "cannot allocate the scan's state");
    for (size_t i = 0; !rc && i < o->sizes.n; i++)
        c.slow[i].bytes = o->sizes.v[i];
    r->partner = c.partner;
    if (!rc)
        rc = p->setup(r, max, &c.state);
    /* slots of a round: its pairs one at a time (--serial) or all at once */
    long slots = serial ? r->size / 2 : 1;
    cpu_set_t own;
    int pinned = serial && sched_getaffinity(0, sizeof own, &own) == 0 && CPU_COUNT(&own) >= 2;
    for (long pass = 0; !rc && pass < o->passes; pass++)
    for (long round = 0; !rc && round < pg->rounds; round++) {
        for (int k = 0; k < r->size; k++)
            c.full[k] = vs_pairing_partner(pg, (int)round, k);
        for (long slot = 0; !rc && slot < slots; slot++) {
            /* --serial: the slot-th pair of the round, by its leader's rank */
            long seen = 0;
            for (int k = 0; k < r->size; k++) {
                int on = !serial;
                if (serial && c.full[k] > k)
                    on = seen++ == slot;
                c.partner[k] = on ? c.full[k] : -1;
            }
            if (serial)
                for (int k = 0; k < r->size; k++)
                    if (c.full[k] < k && c.partner[c.full[k]] == k)
                        c.partner[k] = c.full[k];
            r->peer = c.partner[r->rank];
            r->leader = r->peer > r->rank;
            if (pinned && r->peer >= 0)
                pin_for_pair(&own, r->leader);
            r->pass = pass;
            for (size_t si = 0; !rc && si < o->sizes.n; si++)
                rc = scan_size(&c, si, round, serial ? slot : -1);
        }
    }
    if (pinned)
        sched_setaffinity(0, sizeof own, &own);
    if (c.state)
        p->teardown(r, c.state);
    vs_run_settle_free(r);
    r->partner = NULL;
    r->peer = -1;
    free(c.full);
    free(c.partner);
    free(c.probe);
    free(c.samples);
    free(c.block);
    if (r->rank == 0 && !rc && slowest)
        *slowest = c.slow;
    else
        free(c.slow);
    return rc;
}

void vs_scan_print(const vs_run_t *r, const vs_scan_slowest_t *slow, size_t n, const char *title, FILE *out)
{
    fprintf(out, "# %s\n", title);
    fprintf(out, "# all-pairs scan: %d ranks, %d rounds; per size the slowest pairs by median round trip\n",
            r->size, r->size - 1);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "# %zu B: %ld pairs measured\n", slow[i].bytes, slow[i].pairs);
        fprintf(out, "%-12s %-34s %8s %16s\n", "# Pair", "Hosts", "Round", "Round trip [us]");
        for (int k = 0; k < slow[i].n; k++) {
            const vs_scan_pair_t *w = &slow[i].worst[k];
            char pair[32], hosts[300];
            snprintf(pair, sizeof pair, "%d-%d", w->ranks[0], w->ranks[1]);
            if (r->hosts)
                snprintf(hosts, sizeof hosts, "%s-%s", r->hosts + (size_t)w->ranks[0] * r->host_len,
                         r->hosts + (size_t)w->ranks[1] * r->host_len);
            else
                snprintf(hosts, sizeof hosts, "?");
            fprintf(out, "%-12s %-34s %8ld %16.2f\n", pair, hosts, w->round, w->median_ns / 1e3);
        }
    }
}
