/* The size loop shared by every pattern: for each size, warm up, choose
 * the batch, measure, write the record, add the table row. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "validate.h"

enum { MAX_BATCH = 100000 };

typedef struct driver {
    vs_run_t *r;
    const vs_pattern_t *p;
    void *state;
    int n_series;
    int64_t *series[VS_MAX_SERIES];
    long capacity;
} driver_t;

static int measure_size(driver_t *d, size_t bytes)
{
    vs_run_t *r = d->r;
    const vs_options_t *o = r->opt;
    int large = bytes >= o->large_from;
    long warm = large ? o->warmup_large : o->warmup;
    long iters = large ? o->iterations_large : o->iterations;
    int rc;

    if ((rc = vs_validate_size(r, bytes, VS_VALIDATE_BEFORE)))
        return rc;
    vs_watchdog_phase(r->wd, "warm-up", bytes);
    if ((rc = r->bs->barrier(r->bs)))
        return vs_run_fail(r, rc, "bootstrap barrier failed");
    double unit_ns = 0;
    if ((rc = d->p->warmup(r, d->state, bytes, warm, d->series[0], &unit_ns)))
        return rc;
    /* batch: fixed, or chosen by rank 0 from the warm-up's typical unit */
    long batch = o->batch;
    if (!batch)
        batch = unit_ns > 0 ? vs_timer_batch_for(&r->timer, unit_ns - r->timer.cost_ns, MAX_BATCH) : 1;
    if ((rc = vs_run_bcast_long(r, &batch)))
        return rc;

    vs_watchdog_phase(r->wd, "measuring", bytes);
    uint64_t start = vs_now_ns();
    if ((rc = d->p->measure(r, d->state, bytes, batch, iters, d->series)))
        return rc;
    uint64_t elapsed = vs_now_ns() - start;
    if ((rc = vs_validate_size(r, bytes, VS_VALIDATE_AFTER)))
        return rc;
    if (r->rank != 0)
        return 0;
    for (int k = 0; k < d->n_series; k++)
        for (long i = 0; i < iters; i++)
            if (d->series[k][i] <= 0)
                d->series[k][i] = 1; /* below the clock's resolution: never report 0 */
    if ((rc = vs_run_write_size(r, d->p, bytes, warm, batch, d->series, iters, elapsed)))
        return rc;
    rc = d->p->summarise ? d->p->summarise(r, bytes, d->series, iters)
                         : vs_table_add_pingpong(r->table, bytes, d->series[0], iters);
    if (rc)
        return vs_run_fail(r, rc, "cannot summarise %zu B", bytes);
    return 0;
}

int vs_driver_run(vs_run_t *r, const vs_pattern_t *p)
{
    const vs_options_t *o = r->opt;
    driver_t d = {.r = r, .p = p};
    size_t max = 0;
    for (size_t i = 0; i < o->sizes.n; i++)
        if (o->sizes.v[i] > max)
            max = o->sizes.v[i];
    long cap = o->iterations;
    const long counts[] = {o->iterations_large, o->warmup, o->warmup_large};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (counts[i] > cap)
            cap = counts[i];
    d.capacity = cap;
    int rc = 0;
    for (d.n_series = 0; d.n_series < VS_MAX_SERIES && p->series[d.n_series]; d.n_series++)
        if (!(d.series[d.n_series] = calloc((size_t)cap, sizeof(int64_t))))
            rc = vs_run_fail(r, -ENOMEM, "cannot allocate sample storage");
    if (!rc)
        rc = p->setup(r, max, &d.state);
    for (size_t i = 0; !rc && i < o->sizes.n; i++)
        rc = measure_size(&d, o->sizes.v[i]);
    if (d.state)
        p->teardown(r, d.state); /* setup sets *state first, so partial setups are undone too */
    vs_validate_free(r);
    for (int k = 0; k < d.n_series; k++)
        free(d.series[k]);
    return rc;
}
