/* Distribution-free interval of a median and the stopping rule of
 * --precision (docs/methodology.md, "Repetitions"). */
#include "precision.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int vs_median_ci_ranks(long n, long *lo, long *hi)
{
    if (n < 1)
        return -EDOM;
    /* l = smallest k with P(B <= k) >= 2.5 %, B ~ Binomial(n, 1/2).  The
     * sum starts 12 standard deviations below n/2, where the tail is far
     * below double precision, so large n costs O(sqrt n). */
    const double alpha = 0.025;
    double sd = sqrt((double)n) / 2;
    long k0 = (long)floor((double)n / 2 - 24 * sd);
    if (k0 < 0)
        k0 = 0;
    double lp = lgamma((double)n + 1) - lgamma((double)k0 + 1) - lgamma((double)(n - k0) + 1) - (double)n * M_LN2;
    double cdf = 0;
    long l = -1;
    for (long k = k0; k <= n; k++) {
        cdf += exp(lp);
        if (cdf >= alpha * (1 - 1e-12)) {
            l = k;
            break;
        }
        lp += log((double)(n - k)) - log((double)(k + 1));
    }
    if (l < 1)
        return -EDOM;
    *lo = l - 1;
    *hi = n - l;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void vs_median_ci(int64_t *v, long n, double *median, double *ci_lo, double *ci_hi, double *rel)
{
    *median = *ci_lo = *ci_hi = NAN;
    *rel = INFINITY;
    if (n <= 0)
        return;
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    *median = (n % 2) ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
    long lo, hi;
    if (vs_median_ci_ranks(n, &lo, &hi))
        return;
    *ci_lo = (double)v[lo];
    *ci_hi = (double)v[hi];
    if (*median > 0)
        *rel = fmax(*median - *ci_lo, *ci_hi - *median) / *median;
}

const char *vs_stop_name(vs_stop_t s)
{
    switch (s) {
    case VS_STOP_PRECISION: return "precision";
    case VS_STOP_MAX_ITER: return "max-iterations";
    case VS_STOP_TIME: return "time";
    default: return NULL;
    }
}

vs_stop_t vs_precision_next(const vs_precision_req_t *q, long n, double rel, double elapsed_ns, double sample_ns,
                            long *next)
{
    *next = 0;
    if (n >= q->min_n && rel <= q->target)
        return VS_STOP_PRECISION;
    if (n >= q->max_n)
        return VS_STOP_MAX_ITER;
    if (q->max_ns > 0 && elapsed_ns >= q->max_ns)
        return VS_STOP_TIME;
    /* the half-width shrinks like 1/sqrt(n): aim a little past the estimate */
    double want;
    if (n < q->min_n)
        want = (double)q->min_n;
    else if (isfinite(rel) && rel > 0)
        want = (double)n * (rel / q->target) * (rel / q->target) * 1.1;
    else
        want = 2.0 * (double)n;
    double chunk = want - (double)n;
    if (chunk < (double)n / 8)
        chunk = (double)n / 8; /* a few decisions per doubling at most */
    if (chunk > (double)n && n >= q->min_n)
        chunk = (double)n;     /* at most double: the estimate is only an estimate */
    if (sample_ns > 0 && chunk * sample_ns < q->min_chunk_ns)
        chunk = ceil(q->min_chunk_ns / sample_ns);
    if (chunk < 8)
        chunk = 8;
    if (chunk > (double)(q->max_n - n))
        chunk = (double)(q->max_n - n);
    if (q->max_ns > 0 && sample_ns > 0) {
        /* approach the time budget by halves, then finish it: one slow
         * chunk cannot overrun it by much */
        double left_ns = q->max_ns - elapsed_ns;
        if (chunk * sample_ns > left_ns / 2 && left_ns > 4 * q->min_chunk_ns)
            chunk = ceil(left_ns / 2 / sample_ns);
        else if (chunk * sample_ns > left_ns)
            chunk = ceil(left_ns / sample_ns);
        if (chunk < 1)
            chunk = 1;
    }
    *next = (long)chunk;
    return VS_STOP_NONE;
}
