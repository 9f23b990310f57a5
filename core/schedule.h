/* Size schedules beyond the parsed list: NetPIPE-style perturbation, seeded
 * visiting orders, and adaptive refinement (add a size between neighbours
 * where the curve departs from the straight line between them). */
#ifndef VS_SCHEDULE_H
#define VS_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "sizes.h"

/* Where one size record sits in the run: written into it by
 * vs_run_write_size (pattern.c). */
typedef struct vs_visit {
    long round;        /* 0-based round of this size's visits */
    long position;     /* 0-based index of this visit in the run's visiting order */
    int pass;          /* 0: the schedule; >= 1: added by adaptive pass N */
    double precision;  /* relative half-width of the median's 95 % interval over
                        * all samples of the size so far (INFINITY: none) */
    const char *stop;  /* --precision: why the size stopped, on its last record */
} vs_visit_t;

/* Add s - k and s + k for every size s (never below 0, never above the
 * largest size allowed); the result stays sorted without duplicates. */
int vs_sizes_perturb(vs_sizes_t *s, uint64_t k);

/* idx[0..n) = a permutation of 0..n-1: identity, or a Fisher-Yates shuffle
 * seeded by (seed, pass, round) when shuffle is set. */
void vs_schedule_order(size_t *idx, size_t n, int shuffle, uint64_t seed, int pass, long round);

/* One measured point of the curve. */
typedef struct vs_point {
    size_t bytes;
    double t;        /* typical time (median sample), ns */
    int pass;        /* pass that added it (0 = the schedule) */
    double parent_dev; /* relative departure that led to it (pass >= 1) */
} vs_point_t;

typedef struct vs_adaptive_req {
    double tol;          /* relative departure from the line that asks for refinement */
    uint64_t gap_b;      /* minimum spacing: bytes ... */
    double gap_frac;     /* ... or fraction of the size, whichever is larger */
    long budget;         /* sizes that may still be added */
} vs_adaptive_req_t;

/* Sizes to add after pass `pass` (>= 1 is the next pass), given every point
 * measured so far (pts, sorted by bytes).  Pass 1 bisects every interval of
 * the schedule; later passes bisect both halves around each point added by
 * the previous pass whose time departs from the line between its neighbours
 * by more than tol.  An interval is only bisected when both halves keep the
 * minimum spacing.  Most departing first, at most budget sizes; out sorted.
 * Returns the count (0: nothing to add), or -ENOMEM. */
long vs_adaptive_next(const vs_point_t *pts, size_t n, int next_pass, const vs_adaptive_req_t *q, size_t *out,
                      double *out_dev, size_t out_cap);

#endif
