/* The size loop shared by every pattern.  Sizes are visited pass by pass
 * (pass 0: the schedule; then adaptive refinement), round by round, in the
 * order --order asks for.  A visit warms up, chooses the batch (first visit
 * only), measures one or more chunks of samples, and writes a size record;
 * with --precision rank 0 decides after every chunk whether the size goes on.
 * A size's table row is added when it is done.  docs/methodology.md */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hostload.h"
#include "pattern.h"
#include "precision.h"
#include "record.h"
#include "schedule.h"
#include "table_layout.h"
#include "validate.h"

enum { MAX_BATCH = 100000, REWARM_DIV = 10, RESYNC_UNITS = 2 };
/* A precision chunk lasts at least this long, so that the out-of-band
 * decision after it (tens of microseconds) costs a few per cent of wall time
 * at most; it is never inside a timed loop. */
#define MIN_CHUNK_NS 2e6

typedef struct size_state {
    size_t bytes;
    int pass;
    long batch;         /* chosen at the first visit and kept */
    long visits;
    long n, cap;        /* samples so far */
    int64_t *s[VS_MAX_SERIES];
    uint64_t elapsed_ns;
    long next;          /* --precision: samples of the next chunk */
    double median_ns;   /* of series[0], once done (rank 0) */
    int done;
} size_state_t;

typedef struct driver {
    vs_run_t *r;
    const vs_pattern_t *p;
    void *state;
    int n_series;
    int64_t *probe;
    int64_t *scratch;
    long scratch_cap;
    size_state_t *st;
    size_t n_st, cap_st;
    long position;
    vs_precision_req_t preq;
    int warned_turns;   /* the pairs took turns: said once */
} driver_t;

static int grow(driver_t *d, size_state_t *st, long need)
{
    if (need <= st->cap)
        return 0;
    long cap = st->cap ? st->cap : 64;
    while (cap < need)
        cap *= 2;
    for (int k = 0; k < d->n_series; k++) {
        int64_t *v = realloc(st->s[k], (size_t)cap * sizeof *v);
        if (!v)
            return vs_run_fail(d->r, -ENOMEM, "cannot allocate sample storage");
        /* touch the new pages now: a first-touch fault inside the timed loop
         * would land in a sample */
        memset(v + st->cap, 0, (size_t)(cap - st->cap) * sizeof *v);
        st->s[k] = v;
    }
    st->cap = cap;
    return 0;
}

static void release(driver_t *d, size_state_t *st)
{
    for (int k = 0; k < d->n_series; k++) {
        free(st->s[k]);
        st->s[k] = NULL;
    }
    st->cap = 0;
}

/* Median and relative CI half-width of series[0] of st so far (rank 0),
 * computed on a copy: the samples keep their time order. */
static int size_ci(driver_t *d, size_state_t *st, double *median, double *rel)
{
    if (st->n > d->scratch_cap) {
        int64_t *v = realloc(d->scratch, (size_t)st->cap * sizeof *v);
        if (!v)
            return vs_run_fail(d->r, -ENOMEM, "cannot allocate sample storage");
        d->scratch = v;
        d->scratch_cap = st->cap;
    }
    memcpy(d->scratch, st->s[0], (size_t)st->n * sizeof *d->scratch);
    double lo, hi;
    vs_median_ci(d->scratch, st->n, median, &lo, &hi, rel);
    return 0;
}

/* Fixed repetitions: samples of visit v when a size's samples are spread
 * over R rounds. */
static long quota(long iters, long rounds, long v)
{
    return iters / rounds + (v < iters % rounds ? 1 : 0);
}

static int pairs_record(driver_t *d, size_state_t *st, long first, long warm, uint64_t visit_ns,
                        const uint64_t span[2]);

static int visit(driver_t *d, size_state_t *st, long round)
{
    vs_run_t *r = d->r;
    const vs_options_t *o = r->opt;
    const vs_method_t *m = &o->method;
    size_t bytes = st->bytes;
    int large = bytes >= o->large_from;
    long warm = large ? o->warmup_large : o->warmup;
    long iters = large ? o->iterations_large : o->iterations;
    int precise = m->precision > 0;
    int rc;

    if (st->visits > 0)
        warm = (warm + REWARM_DIV - 1) / REWARM_DIV; /* back after other sizes: a short warm-up */
    vs_hostload_snap_t load0;
    if (r->load)
        vs_hostload_take(r->load, &load0);
    if ((rc = vs_validate_size(r, bytes, VS_VALIDATE_BEFORE)))
        return rc;
    vs_watchdog_phase(r->wd, "warm-up", bytes);
    if ((rc = r->bs->barrier(r->bs)))
        return vs_run_fail(r, rc, "bootstrap barrier failed");
    double unit_ns = 0;
    if ((rc = d->p->warmup(r, d->state, bytes, warm, d->probe, &unit_ns)) || (rc = vs_run_settle(r)))
        return rc;
    if (!st->batch) {
        /* batch: fixed, or chosen by rank 0 from the warm-up's typical unit */
        long batch = o->batch;
        if (!batch)
            batch = unit_ns > 0 ? vs_timer_batch_for(&r->timer, unit_ns - r->timer.cost_ns, MAX_BATCH) : 1;
        if ((rc = vs_run_bcast_long(r, &batch)))
            return rc;
        st->batch = batch;
    }

    long first = st->n, chunk = precise ? st->next : quota(iters, m->rounds, st->visits);
    uint64_t visit_ns = 0, span[2] = {0, 0}; /* the visit's first start and last end */
    double median = NAN, rel = INFINITY;
    vs_stop_t stop = VS_STOP_NONE;
    for (;;) {
        if ((rc = grow(d, st, st->n + chunk)))
            return rc;
        int64_t *at[VS_MAX_SERIES];
        for (int k = 0; k < d->n_series; k++)
            at[k] = st->s[k] + st->n;
        /* The out-of-band agreement just before (batch, continue/stop) returns
         * on rank 0 while rank 1 may still be waking from a sleep in the
         * bootstrap: a few untimed units resynchronise the ranks in-band, or
         * the first sample would carry that wake-up (milliseconds on a busy host). */
        double resync_ns;
        if ((rc = d->p->warmup(r, d->state, bytes, RESYNC_UNITS, d->probe, &resync_ns)))
            return rc;
        vs_watchdog_phase(r->wd, "measuring", bytes);
        uint64_t start = vs_now_ns();
        if ((rc = d->p->measure(r, d->state, bytes, st->batch, chunk, at)))
            return rc;
        uint64_t end = vs_now_ns(), elapsed = end - start;
        if ((rc = vs_run_settle(r)))
            return rc;
        if (!span[0])
            span[0] = start;
        span[1] = end;
        if (r->rank == 0)
            for (int k = 0; k < d->n_series; k++)
                for (long i = 0; i < chunk; i++)
                    if (at[k][i] <= 0)
                        at[k][i] = 1; /* below the clock's resolution: never report 0 */
        st->n += chunk;
        st->elapsed_ns += elapsed;
        visit_ns += elapsed;
        if (!precise) {
            st->done = st->visits + 1 >= m->rounds;
            break;
        }
        /* rank 0 decides: > 0 the next chunk's samples, <= 0 stop (-reason) */
        long next = 0;
        if (r->rank == 0) {
            if ((rc = size_ci(d, st, &median, &rel)))
                return rc;
            /* a chunk's duration from the mean sample so far: outliers take time too */
            double mean_ns = (double)st->elapsed_ns / (double)st->n;
            stop = vs_precision_next(&d->preq, st->n, rel, (double)st->elapsed_ns, mean_ns, &next);
            if (stop)
                next = -(long)stop;
        }
        if ((rc = vs_run_bcast_long(r, &next)))
            return rc;
        if (next <= 0) {
            stop = (vs_stop_t)-next;
            st->done = 1;
            break;
        }
        st->next = chunk = next;
        if (m->order != VS_ORDER_SEQUENTIAL)
            break; /* one chunk per visit: the other sizes come in between */
    }
    st->visits++;
    if ((rc = vs_validate_size(r, bytes, VS_VALIDATE_AFTER)))
        return rc;
    if ((rc = vs_run_drift(r)))
        return rc;
    long position = d->position++;
    r->load_others = r->load_steal = r->load_waited = NAN;
    if (r->load) {
        vs_hostload_snap_t load1;
        vs_hostload_span_t span;
        vs_hostload_take(r->load, &load1);
        vs_hostload_between(&load0, &load1, r->load->npid, VS_HOSTLOAD_MIN_TICKS, &span);
        r->load_others = span.others;
        r->load_steal = span.steal;
        r->load_waited = span.waited;
    }
    if (r->rank == 0 && !precise && (rc = size_ci(d, st, &median, &rel)))
        return rc;
    vs_visit_t v = {.round = round, .position = position, .pass = st->pass, .precision = rel,
                    .stop = st->done ? vs_stop_name(stop) : NULL};
    r->visit = &v;
    if (r->npairs > 1) {
        rc = pairs_record(d, st, first, warm, visit_ns, span);
    } else if (r->rank == 0) {
        int64_t *rec[VS_MAX_SERIES];
        for (int k = 0; k < d->n_series; k++)
            rec[k] = st->s[k] + first;
        rc = vs_record_size(r, d->p, bytes, warm, st->batch, rec, st->n - first, visit_ns);
    }
    r->visit = NULL;
    if (rc || r->rank != 0)
        return rc;
    if (!st->done)
        return 0;
    st->median_ns = median;
    rc = d->p->summarise ? d->p->summarise(r, bytes, st->s, st->n)
                         : vs_table_add_pingpong(r->table, bytes, st->s[0], st->n);
    if (rc)
        return vs_run_fail(r, rc, "cannot summarise %zu B", bytes);
    release(d, st); /* only the median is needed from here on */
    return 0;
}

/* The aggregate's running totals per size, in a table row's columns (added over
 * the size's visits; vs_driver_aggregate_table turns them into figures). */
enum { AGG_BYTES, AGG_MESSAGES, AGG_TIME_NS, AGG_MEAN_NS, AGG_SLOWEST_BPS };

static vs_table_row_t *aggregate_row(vs_run_t *r, size_t bytes)
{
    for (size_t i = 0; i < r->agg.n; i++)
        if (r->agg.rows[i].bytes == bytes)
            return &r->agg.rows[i];
    vs_table_row_t *row = vs_table_append(&r->agg, bytes);
    if (row)
        row->col[AGG_SLOWEST_BPS] = INFINITY;
    return row;
}

static const vs_table_layout_t aggregate_layout = {
    .legend = "every pair at once: all pairs' bytes (messages) over the time all of them took (on one host from "
              "the first start to the last end, else the slowest pair's); osu_mbw_mr divides by the mean time "
              "instead (1 MB = 1e6 B)",
    .ncol = 4,
    .head = {"Aggregate [MB/s]", "Rate [msg/s]", "Mean-time [MB/s]", "Slowest pair [MB/s]"},
    .decimals = {2, 0, 2, 2},
};

int vs_driver_aggregate_table(const vs_run_t *r, vs_table_t *out)
{
    for (size_t i = 0; i < r->agg.n; i++) {
        const double *c = r->agg.rows[i].col;
        double col[4] = {c[AGG_BYTES] / c[AGG_TIME_NS] * 1e3, c[AGG_MESSAGES] / c[AGG_TIME_NS] * 1e9,
                         c[AGG_BYTES] / c[AGG_MEAN_NS] * 1e3,
                         isfinite(c[AGG_SLOWEST_BPS]) ? c[AGG_SLOWEST_BPS] / 1e6 : NAN};
        int rc = vs_table_add_row(out, &aggregate_layout, r->agg.rows[i].bytes, col);
        if (rc)
            return rc;
    }
    return 0;
}

/* Were every pair's leader and partner on one host?  Then their clocks are one
 * and the pairs' start and end times can be compared. */
static int one_host(const vs_run_t *r)
{
    for (int k = 1; k < r->size; k++)
        if (strcmp(r->hosts + (size_t)k * r->host_len, r->hosts) != 0)
            return 0;
    return 1;
}

/* More than one pair: every leader's samples of this visit, its measuring time
 * and when it started and ended go to rank 0 (collective), which writes a size
 * record per pair, then the aggregate record of all pairs.  On one host the
 * aggregate is over the span from the first pair's start to the last pair's
 * end, which also says whether the pairs ran at once: with more ranks than
 * free cores they may take turns, each pair fast in its turn, and the sum of
 * their rates over the slowest pair's time would be a rate no moment saw. */
static int pairs_record(driver_t *d, size_state_t *st, long first, long warm, uint64_t visit_ns,
                        const uint64_t span[2])
{
    enum { HEAD = 3 }; /* measuring time, start, end */
    vs_run_t *r = d->r;
    long n = st->n - first;
    size_t count = HEAD + (size_t)d->n_series * (size_t)n;
    int64_t *mine = calloc(count, sizeof *mine);
    if (!mine)
        return vs_run_fail(r, -ENOMEM, "cannot allocate sample storage");
    if (r->leader) {
        mine[0] = (int64_t)visit_ns;
        mine[1] = (int64_t)span[0];
        mine[2] = (int64_t)span[1];
        for (int k = 0; k < d->n_series; k++)
            memcpy(mine + HEAD + (size_t)k * (size_t)n, st->s[k] + first, (size_t)n * sizeof *mine);
    }
    int rc = vs_run_gather(r, mine, count);
    free(mine);
    if (rc || r->rank != 0)
        return rc;
    double units = (double)n * (double)st->batch, msgs = units * (double)d->p->messages(r->opt);
    double max_ns = 0, sum_ns = 0, slowest = INFINITY;
    int64_t first_start = INT64_MAX, last_start = 0, first_end = INT64_MAX, last_end = 0;
    int pairs = 0;
    for (int l = 0; l < r->size && !rc; l++) {
        if (r->partner[l] <= l)
            continue; /* not a leader */
        const int64_t *b = r->gathered + (size_t)l * count;
        int64_t *rec[VS_MAX_SERIES];
        for (int k = 0; k < d->n_series; k++)
            rec[k] = (int64_t *)b + HEAD + (size_t)k * (size_t)n;
        r->pair_ranks[0] = l;
        r->pair_ranks[1] = r->partner[l];
        rc = vs_record_size(r, d->p, st->bytes, warm, st->batch, rec, n, (uint64_t)b[0]);
        double ns = (double)b[0];
        max_ns = ns > max_ns ? ns : max_ns;
        sum_ns += ns;
        if (ns > 0 && msgs * (double)st->bytes / (ns / 1e9) < slowest)
            slowest = msgs * (double)st->bytes / (ns / 1e9);
        first_start = b[1] < first_start ? b[1] : first_start;
        last_start = b[1] > last_start ? b[1] : last_start;
        first_end = b[2] < first_end ? b[2] : first_end;
        last_end = b[2] > last_end ? b[2] : last_end;
        pairs++;
    }
    r->pair_ranks[0] = r->pair_ranks[1] = -1;
    if (rc)
        return rc;
    vs_pairs_timing_t tm = {.max_ns = max_ns, .mean_ns = sum_ns / pairs, .span_ns = NAN, .overlap = NAN};
    if (one_host(r)) {
        tm.span_ns = (double)(last_end - first_start);
        tm.overlap = first_end > last_start && max_ns > 0 ? (double)(first_end - last_start) / max_ns : 0;
        tm.overlap = tm.overlap > 1 ? 1 : tm.overlap;
        if (tm.overlap < 0.5 && !d->warned_turns) {
            d->warned_turns = 1;
            fprintf(stderr, "versus-run: warning: at %zu B the %d pairs ran at once for only %.0f %% of the "
                    "slowest pair's time: they took turns (more ranks than free cores?); the aggregate is "
                    "over the span from the first start to the last end, and each pair's figure is its "
                    "turn's\n", st->bytes, pairs, 100 * tm.overlap);
        }
    }
    vs_table_row_t *a = aggregate_row(r, st->bytes);
    if (!a)
        return vs_run_fail(r, -ENOMEM, "cannot allocate the aggregate table");
    a->col[AGG_BYTES] += msgs * (double)st->bytes * pairs;
    a->col[AGG_MESSAGES] += msgs * pairs;
    a->col[AGG_TIME_NS] += vs_pairs_time(&tm);
    a->col[AGG_MEAN_NS] += sum_ns / pairs;
    if (slowest < a->col[AGG_SLOWEST_BPS])
        a->col[AGG_SLOWEST_BPS] = slowest;
    return vs_record_aggregate(r, st->bytes, pairs, (long)msgs, &tm);
}

static int add_sizes(driver_t *d, const size_t *v, size_t n, int pass)
{
    if (d->n_st + n > d->cap_st) {
        size_t cap = d->cap_st ? d->cap_st : 64;
        while (cap < d->n_st + n)
            cap *= 2;
        size_state_t *st = realloc(d->st, cap * sizeof *st);
        if (!st)
            return vs_run_fail(d->r, -ENOMEM, "cannot allocate the schedule");
        d->st = st;
        d->cap_st = cap;
    }
    for (size_t i = 0; i < n; i++)
        d->st[d->n_st++] = (size_state_t){.bytes = v[i], .pass = pass, .next = d->r->opt->method.min_iterations};
    return 0;
}

/* Visit sizes [from, to) round after round until every one is done. */
static int run_pass(driver_t *d, size_t from, size_t to, int pass)
{
    const vs_method_t *m = &d->r->opt->method;
    size_t n = to - from;
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return vs_run_fail(d->r, -ENOMEM, "cannot allocate the schedule");
    int rc = 0, any = 1;
    for (long round = 0; !rc && any; round++) {
        vs_schedule_order(idx, n, m->order == VS_ORDER_SHUFFLED, m->seed, pass, round);
        any = 0;
        for (size_t i = 0; !rc && i < n; i++) {
            size_state_t *st = &d->st[from + idx[i]];
            if (st->done)
                continue;
            any = 1;
            rc = visit(d, st, round);
        }
    }
    free(idx);
    return rc;
}

static int cmp_point(const void *a, const void *b)
{
    const vs_point_t *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* Rank 0 picks the next pass's sizes; every rank gets them. */
static int adaptive_next(driver_t *d, int pass, size_t **out, long *count)
{
    vs_run_t *r = d->r;
    const vs_method_t *m = &r->opt->method;
    long budget = m->adaptive_max_sizes - (long)d->n_st;
    long n = 0;
    size_t *v = NULL;
    int rc = 0;
    if (r->rank == 0 && budget > 0) {
        vs_point_t *pts = malloc(d->n_st * sizeof *pts);
        v = malloc(2 * d->n_st * sizeof *v);
        if (!pts || !v) {
            free(pts);
            free(v);
            return vs_run_fail(r, -ENOMEM, "cannot allocate the schedule");
        }
        for (size_t i = 0; i < d->n_st; i++)
            pts[i] = (vs_point_t){.bytes = d->st[i].bytes, .t = d->st[i].median_ns, .pass = d->st[i].pass};
        qsort(pts, d->n_st, sizeof *pts, cmp_point);
        vs_adaptive_req_t q = {.tol = m->adaptive_tol, .gap_b = m->adaptive_gap_b, .gap_frac = m->adaptive_gap_frac,
                               .budget = budget};
        n = vs_adaptive_next(pts, d->n_st, pass + 1, &q, v, NULL, 2 * d->n_st);
        free(pts);
        if (n <= 0) {
            n = 0;
            free(v); /* nothing new: the caller gets no vector */
            v = NULL;
        }
    }
    if ((rc = vs_run_bcast_long(r, &n)))
        goto free_sizes;
    if (r->rank != 0 && n > 0 && !(v = malloc((size_t)n * sizeof *v))) {
        rc = vs_run_fail(r, -ENOMEM, "cannot allocate the schedule");
        goto free_sizes;
    }
    for (long i = 0; i < n; i++) {
        long b = r->rank == 0 ? (long)v[i] : 0;
        if ((rc = vs_run_bcast_long(r, &b)))
            goto free_sizes;
        v[i] = (size_t)b;
    }
    *out = v;
    *count = n;
    return 0;
free_sizes:
    free(v);
    return rc;
}

static int cmp_row(const void *a, const void *b)
{
    const vs_table_row_t *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

int vs_driver_run(vs_run_t *r, const vs_pattern_t *p)
{
    const vs_options_t *o = r->opt;
    const vs_method_t *m = &o->method;
    driver_t d = {.r = r, .p = p};
    d.preq = (vs_precision_req_t){.target = m->precision, .min_n = m->min_iterations, .max_n = m->max_iterations,
                                  .max_ns = m->max_seconds * 1e9, .min_chunk_ns = MIN_CHUNK_NS};
    size_t max = 0;
    for (size_t i = 0; i < o->sizes.n; i++)
        if (o->sizes.v[i] > max)
            max = o->sizes.v[i];
    long probe = o->warmup > o->warmup_large ? o->warmup : o->warmup_large;
    int rc = 0;
    for (d.n_series = 0; d.n_series < VS_MAX_SERIES && p->series[d.n_series]; d.n_series++)
        ;
    if (probe < RESYNC_UNITS)
        probe = RESYNC_UNITS;
    if (!(d.probe = calloc((size_t)probe, sizeof *d.probe)))
        rc = vs_run_fail(r, -ENOMEM, "cannot allocate sample storage");
    if (!rc)
        rc = add_sizes(&d, o->sizes.v, o->sizes.n, 0);
    if (!rc)
        rc = p->setup(r, max, &d.state);
    r->pattern = p;
    r->pattern_state = d.state;
    size_t from = 0;
    for (int pass = 0; !rc; pass++) {
        size_t to = d.n_st;
        if ((rc = run_pass(&d, from, to, pass)) || !m->adaptive)
            break;
        size_t *v = NULL;
        long n = 0;
        if ((rc = adaptive_next(&d, pass, &v, &n)) || n == 0)
            break;
        rc = add_sizes(&d, v, (size_t)n, pass + 1);
        free(v);
        r->table->planned += (size_t)n;
        from = to;
    }
    /* rows in size order, whatever the visiting order */
    if (r->rank == 0 && r->table->rows && (m->order != VS_ORDER_SEQUENTIAL || m->adaptive))
        qsort(r->table->rows, r->table->n, sizeof *r->table->rows, cmp_row);
    if (d.state)
        p->teardown(r, d.state); /* setup sets *state first, so partial setups are undone too */
    r->pattern = NULL;
    r->pattern_state = NULL;
    vs_validate_free(r);
    vs_run_settle_free(r);
    for (size_t i = 0; i < d.n_st; i++)
        release(&d, &d.st[i]);
    free(d.st);
    free(d.scratch);
    free(d.probe);
    return rc;
}
