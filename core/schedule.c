/* Perturbation, visiting orders and adaptive refinement of size schedules. */
#include "schedule.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int vs_sizes_perturb(vs_sizes_t *s, uint64_t k)
{
    if (!k || !s->n)
        return 0;
    size_t *v = malloc(3 * s->n * sizeof *v);
    if (!v)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t x = s->v[i];
        if (x >= k)
            v[n++] = (size_t)(x - k);
        v[n++] = (size_t)x;
        if (x + k <= VS_SIZE_MAX_BYTES)
            v[n++] = (size_t)(x + k);
    }
    qsort(v, n, sizeof *v, cmp_size);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != v[i])
            v[m++] = v[i];
    if (m > VS_SIZES_MAX_COUNT) {
        free(v);
        return -E2BIG;
    }
    free(s->v);
    s->v = v;
    s->n = m;
    return 0;
}

void vs_schedule_order(size_t *idx, size_t n, int shuffle, uint64_t seed, int pass, long round)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    if (!shuffle || n < 2)
        return;
    uint64_t st = vs_prng_seed(seed ^ vs_prng_seed(((uint64_t)(unsigned)pass << 40) ^ (uint64_t)round));
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(vs_prng_next(&st) % (uint64_t)(i + 1));
        size_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

typedef struct cand {
    size_t bytes;
    double dev;
} cand_t;

static int cmp_cand_dev(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? 1 : -1;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int cmp_cand_bytes(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* The midpoint of (a, b) when both halves keep the minimum spacing, else 0. */
static size_t bisect(size_t a, size_t b, const vs_adaptive_req_t *q)
{
    if (b <= a + 1)
        return 0;
    size_t m = a + (b - a) / 2;
    double gap = fmax((double)q->gap_b, q->gap_frac * (double)m);
    if (gap < 1)
        gap = 1;
    if ((double)(m - a) < gap || (double)(b - m) < gap)
        return 0;
    return m;
}

/* Relative departure of point i from the line between its neighbours. */
static double departure(const vs_point_t *pts, size_t n, size_t i)
{
    if (i == 0 || i + 1 >= n)
        return 0;
    const vs_point_t *a = &pts[i - 1], *m = &pts[i], *b = &pts[i + 1];
    double f = (double)(m->bytes - a->bytes) / (double)(b->bytes - a->bytes);
    double line = a->t + (b->t - a->t) * f;
    if (!(line > 0) || !isfinite(m->t))
        return 0;
    return fabs(m->t - line) / line;
}

long vs_adaptive_next(const vs_point_t *pts, size_t n, int next_pass, const vs_adaptive_req_t *q, size_t *out,
                      double *out_dev, size_t out_cap)
{
    if (n < 2 || q->budget <= 0)
        return 0;
    cand_t *c = malloc(2 * n * sizeof *c);
    if (!c)
        return -ENOMEM;
    size_t nc = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        size_t m;
        if (next_pass == 1) {
            /* pass 1: every interval of the schedule, in order */
            if ((m = bisect(pts[i].bytes, pts[i + 1].bytes, q)))
                c[nc++] = (cand_t){m, 0};
            continue;
        }
        /* later passes: around each point the previous pass added that
         * departs from its neighbours' line */
        if (pts[i].pass != next_pass - 1 || i == 0)
            continue;
        double dev = departure(pts, n, i);
        if (!(dev > q->tol))
            continue;
        if ((m = bisect(pts[i - 1].bytes, pts[i].bytes, q)))
            c[nc++] = (cand_t){m, dev};
        if ((m = bisect(pts[i].bytes, pts[i + 1].bytes, q)))
            c[nc++] = (cand_t){m, dev};
    }
    /* the last point of the list has no right neighbour: never departing */
    qsort(c, nc, sizeof *c, cmp_cand_bytes);
    size_t k = 0;
    for (size_t i = 0; i < nc; i++) {
        if (k && c[k - 1].bytes == c[i].bytes) {
            if (c[i].dev > c[k - 1].dev)
                c[k - 1].dev = c[i].dev;
            continue;
        }
        c[k++] = c[i];
    }
    nc = k;
    if (next_pass > 1)
        qsort(c, nc, sizeof *c, cmp_cand_dev); /* most departing first */
    if (nc > (size_t)q->budget)
        nc = (size_t)q->budget;
    if (nc > out_cap)
        nc = out_cap;
    qsort(c, nc, sizeof *c, cmp_cand_bytes);
    for (size_t i = 0; i < nc; i++) {
        out[i] = c[i].bytes;
        if (out_dev)
            out_dev[i] = c[i].dev;
    }
    free(c);
    return (long)nc;
}

