/* Repetitions to a precision target: the distribution-free 95 % confidence
 * interval of a median (order statistics) and the decision, after each chunk
 * of samples, whether to go on measuring a size and with how many samples. */
#ifndef VS_PRECISION_H
#define VS_PRECISION_H

#include <stdint.h>

/* 0-based ranks (lo, hi) into n sorted values bounding the median with at
 * least 95 % coverage: lo = l-1, hi = n-l with l the 2.5 % quantile of
 * Binomial(n, 1/2).  Returns 0, or -EDOM when n is too small (n < 6). */
int vs_median_ci_ranks(long n, long *lo, long *hi);

/* Median and its 95 % interval of v[0..n) (v is sorted in place).
 * *rel = max(median - lo, hi - median) / median, or INFINITY when n is too
 * small for an interval or the median is 0. */
void vs_median_ci(int64_t *v, long n, double *median, double *ci_lo, double *ci_hi, double *rel);

typedef enum { VS_STOP_NONE = 0, VS_STOP_PRECISION, VS_STOP_MAX_ITER, VS_STOP_TIME } vs_stop_t;
const char *vs_stop_name(vs_stop_t s); /* "precision", "max-iterations", "time", NULL */

typedef struct vs_precision_req {
    double target;        /* fraction of the median, e.g. 0.01 */
    long min_n, max_n;    /* samples (batches) */
    double max_ns;        /* measuring time budget of the size */
    double min_chunk_ns;  /* a chunk lasts at least this long (out-of-band cost stays negligible) */
} vs_precision_req_t;

/* After n samples taking elapsed_ns in all, whose median interval has the
 * relative half-width rel (INFINITY if none) and whose samples last
 * sample_ns on average: the stop reason, or VS_STOP_NONE and *next samples to measure
 * next (>= 1).  Precision is only accepted from min_n samples on. */
vs_stop_t vs_precision_next(const vs_precision_req_t *q, long n, double rel, double elapsed_ns, double sample_ns,
                            long *next);

#endif
