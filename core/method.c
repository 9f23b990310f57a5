/* Parsing, checking and recording the measurement method options. */
#include "method.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "options.h"
#include "prng.h"
#include "schedule.h"
#include "timer.h"

void vs_method_defaults(vs_method_t *m)
{
    /* the other defaults are in the option table (options.c) */
    *m = (vs_method_t){
        .adaptive_gap_b = 8,
        .adaptive_gap_frac = 0.01,
        .rounds = 1,
    };
}

/* "5" or "5%" -> 0.05, within (0, max_pct]. */
static int parse_pct(const char *opt, const char *s, double max_pct, double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end == '%')
        end++;
    if (errno || end == s || *end || !(v > 0) || v > max_pct) {
        snprintf(err, errlen, "%s expects a percentage in (0, %g], e.g. 5 or 5%%, got '%s'", opt, max_pct, s);
        return -EINVAL;
    }
    *out = v / 100;
    return 0;
}

static int parse_long(const char *opt, const char *s, long min, long max, long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        snprintf(err, errlen, "%s expects an integer in [%ld, %ld], got '%s'", opt, min, max, s);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

int vs_method_parse(vs_method_t *m, int c, const char *arg, char *err, size_t errlen)
{
    long v;
    int rc = 0;
    switch (c) {
    case VS_OPT_PERTURB:
        if (vs_bytes_parse(arg, &m->perturb) || m->perturb > VS_SIZE_MAX_BYTES) {
            snprintf(err, errlen, "--perturb expects a byte count such as 3 or 1K (at most 1G), got '%s'", arg);
            return -EINVAL;
        }
        return 0;
    case VS_OPT_ADAPTIVE_TOL: return parse_pct("--adaptive-tol", arg, 1000, &m->adaptive_tol, err, errlen);
    case VS_OPT_ADAPTIVE_GAP: {
        size_t len = strlen(arg);
        if (len && arg[len - 1] == '%') {
            m->adaptive_gap_b = 1;
            return parse_pct("--adaptive-min-gap", arg, 100, &m->adaptive_gap_frac, err, errlen);
        }
        if (vs_bytes_parse(arg, &m->adaptive_gap_b) || m->adaptive_gap_b < 1 || m->adaptive_gap_b > VS_SIZE_MAX_BYTES) {
            snprintf(err, errlen, "--adaptive-min-gap expects bytes (e.g. 8, 1K) or a percentage of the size (e.g. 1%%), got '%s'", arg);
            return -EINVAL;
        }
        m->adaptive_gap_frac = 0;
        return 0;
    }
    case VS_OPT_ADAPTIVE_MAX:
        return parse_long("--adaptive-max-sizes", arg, 2, VS_SIZES_MAX_COUNT, &m->adaptive_max_sizes, err, errlen);
    case VS_OPT_SEED: {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-') {
            snprintf(err, errlen, "--seed expects a non-negative integer, got '%s'", arg);
            return -EINVAL;
        }
        m->seed = s;
        m->seed_set = 1;
        return 0;
    }
    case VS_OPT_ROUNDS:
        if (!(rc = parse_long("--rounds", arg, 1, 1000000, &v, err, errlen))) {
            m->rounds = v;
            m->rounds_set = 1;
        }
        return rc;
    case VS_OPT_PRECISION: return parse_pct("--precision", arg, 100, &m->precision, err, errlen);
    case VS_OPT_MIN_ITER: return parse_long("--min-iterations", arg, 1, 1000000000, &m->min_iterations, err, errlen);
    case VS_OPT_MAX_ITER: return parse_long("--max-iterations", arg, 1, 1000000000, &m->max_iterations, err, errlen);
    default:
        snprintf(err, errlen, "unknown method option %d", c);
        return -EINVAL;
    }
}

int vs_method_check(struct vs_options *o, char *err, size_t errlen)
{
    vs_method_t *m = &o->method;
    if (m->rounds_set && m->order == VS_ORDER_SEQUENTIAL) {
        snprintf(err, errlen, "--rounds needs --order interleaved or shuffled (sequential measures each size in one go)");
        return -EINVAL;
    }
    if (m->rounds_set && m->precision > 0) {
        snprintf(err, errlen, "--rounds is for fixed repetitions; with --precision each size is visited until it stops");
        return -EINVAL;
    }
    if (!m->rounds_set)
        m->rounds = m->order == VS_ORDER_INTERLEAVED && m->precision == 0 ? 10 : 1;
    if (m->precision == 0) {
        long least = o->iterations < o->iterations_large ? o->iterations : o->iterations_large;
        if (m->rounds > least) {
            snprintf(err, errlen, "--rounds %ld is more than the %ld samples of a size: every round needs one", m->rounds, least);
            return -EINVAL;
        }
    }
    if (m->min_iterations > m->max_iterations) {
        snprintf(err, errlen, "--min-iterations %ld is above --max-iterations %ld", m->min_iterations, m->max_iterations);
        return -EINVAL;
    }
    if (m->clock == VS_CLOCK_TSC) {
        if (!vs_tsc_invariant()) {
            snprintf(err, errlen, "--clock tsc needs an invariant time-stamp counter (constant_tsc and nonstop_tsc in /proc/cpuinfo); use --clock monotonic");
            return -EINVAL;
        }
    }
    if (!m->seed_set) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t s = vs_prng_seed((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid());
        m->seed = s % 1000000000ULL; /* short enough to retype */
    }
    int rc = vs_sizes_perturb(&o->sizes, m->perturb);
    if (rc == -E2BIG) {
        snprintf(err, errlen, "--perturb makes more than %d sizes", VS_SIZES_MAX_COUNT);
        return -EINVAL;
    }
    return rc;
}

