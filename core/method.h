/* Measurement method options: schedule refinement (--perturb, --adaptive),
 * visiting order (--order, --seed, --rounds), repetitions to a precision
 * target (--precision and its bounds) and the clock (--clock).  Parsed here
 * so that options.c only routes them (docs/methodology.md). */
#ifndef VS_METHOD_H
#define VS_METHOD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>


typedef enum { VS_ORDER_SEQUENTIAL, VS_ORDER_SHUFFLED, VS_ORDER_INTERLEAVED } vs_order_t;
typedef enum { VS_CLOCK_MONOTONIC, VS_CLOCK_TSC } vs_clock_t;

typedef struct vs_method {
    uint64_t perturb;          /* --perturb K: also measure each size at +-K bytes */
    int adaptive;              /* --adaptive */
    double adaptive_tol;       /* fraction: departure from the line that triggers refinement */
    uint64_t adaptive_gap_b;   /* minimum spacing in bytes ... */
    double adaptive_gap_frac;  /* ... or as a fraction of the size, whichever is larger */
    long adaptive_max_sizes;   /* budget: sizes in the whole run */
    vs_order_t order;
    uint64_t seed;
    int seed_set;
    long rounds;               /* visits per size (fixed repetitions) */
    int rounds_set;
    double precision;          /* fraction; 0 = fixed repetitions */
    long min_iterations, max_iterations;
    double max_seconds;        /* per size, measuring time */
    vs_clock_t clock;
} vs_method_t;

/* The method options vs_method_parse reads (options.c's table routes them
 * here; --adaptive, --order, --clock and --max-seconds-per-size it sets itself). */
enum {
    VS_OPT_PERTURB = 1, VS_OPT_ADAPTIVE_TOL, VS_OPT_ADAPTIVE_GAP, VS_OPT_ADAPTIVE_MAX, VS_OPT_SEED, VS_OPT_ROUNDS,
    VS_OPT_PRECISION, VS_OPT_MIN_ITER, VS_OPT_MAX_ITER,
};

struct vs_options;

void vs_method_defaults(vs_method_t *m);
/* One method option (c: VS_OPT_PERTURB ...).  0 or -EINVAL + err. */
int vs_method_parse(vs_method_t *m, int c, const char *arg, char *err, size_t errlen);
/* After all options: consistency checks, --perturb applied to o->sizes, the
 * seed chosen.  0 or -EINVAL + err. */
int vs_method_check(struct vs_options *o, char *err, size_t errlen);

#endif
