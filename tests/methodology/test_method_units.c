/* Unit tests of the measurement method: median intervals, the stopping
 * rule, perturbation, visiting orders, adaptive refinement, option checks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "precision.h"
#include "schedule.h"
#include "vs_expect.h"

static void test_ci_ranks(void)
{
    /* l = 2.5 % quantile of Binomial(n, 1/2), as scipy.stats.binom.ppf gives it */
    static const struct { long n, l; } want[] = {
        {6, 1}, {10, 2}, {100, 40}, {1000, 469}, {12345, 6064}, {100000, 49690},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        long lo = -1, hi = -1;
        int rc = vs_median_ci_ranks(want[i].n, &lo, &hi);
        EXPECT(rc == 0 && lo == want[i].l - 1 && hi == want[i].n - want[i].l,
               "n=%ld: ranks (%ld, %ld), want (%ld, %ld)", want[i].n, lo, hi, want[i].l - 1, want[i].n - want[i].l);
    }
    long lo, hi;
    EXPECT(vs_median_ci_ranks(5, &lo, &hi) == -EDOM, "n=5 has no 95 %% interval");

    /* 1..101 shuffled: median 51, interval the 41st..61st values */
    int64_t v[101];
    for (int i = 0; i < 101; i++)
        v[i] = (int64_t)((i * 37) % 101) + 1;
    double med, clo, chi, rel;
    vs_median_ci(v, 101, &med, &clo, &chi, &rel);
    long l = -1, h = -1;
    vs_median_ci_ranks(101, &l, &h);
    EXPECT(med == 51 && clo == (double)(l + 1) && chi == (double)(h + 1), "median %g [%g, %g]", med, clo, chi);
    EXPECT(fabs(rel - fmax(med - clo, chi - med) / med) < 1e-12, "relative half-width %g", rel);
}

static void test_stopping(void)
{
    vs_precision_req_t q = {.target = 0.01, .min_n = 100, .max_n = 1000, .max_ns = 1e9, .min_chunk_ns = 5e6};
    long next;
    EXPECT(vs_precision_next(&q, 150, 0.005, 1e6, 1000, &next) == VS_STOP_PRECISION, "precise enough: stop");
    EXPECT(vs_precision_next(&q, 50, 0.001, 1e6, 1000, &next) == VS_STOP_NONE && next >= 50,
           "below --min-iterations: go on to it (next %ld)", next);
    EXPECT(vs_precision_next(&q, 1000, 0.05, 1e6, 1000, &next) == VS_STOP_MAX_ITER, "at --max-iterations: stop");
    EXPECT(vs_precision_next(&q, 500, 0.05, 1.1e9, 1000, &next) == VS_STOP_TIME, "over the time budget: stop");
    EXPECT(vs_precision_next(&q, 200, 0.02, 1e6, 1e5, &next) == VS_STOP_NONE && next == 200,
           "twice the target at n=200: 4x the samples wanted, at most doubled per decision (next %ld)", next);
    EXPECT(vs_precision_next(&q, 200, 0.012, 1e6, 1e5, &next) == VS_STOP_NONE && next >= 100 && next <= 130,
           "1.2x the target at n=200: about 1.6x the samples in all (next %ld)", next);
    EXPECT(vs_precision_next(&q, 500, 0.05, 0.5e9, 1e5, &next) == VS_STOP_NONE && next == 500,
           "far from the time budget: chunk not cut (next %ld)", next);
    EXPECT(vs_precision_next(&q, 500, 0.05, 0.9e9, 1e5, &next) == VS_STOP_NONE && next == 500,
           "0.1 s left: half of it (next %ld)", next);
    EXPECT(vs_precision_next(&q, 200, 0.011, 1e6, 1000, &next) == VS_STOP_NONE && next == 800,
           "a chunk lasts >= 5 ms, bounded by --max-iterations (next %ld)", next);
    EXPECT(vs_precision_next(&q, 200, 0.02, 0.999e9, 1e6, &next) == VS_STOP_NONE && next == 1,
           "the time budget bounds the chunk (next %ld)", next);
    EXPECT(!strcmp(vs_stop_name(VS_STOP_PRECISION), "precision") && !strcmp(vs_stop_name(VS_STOP_MAX_ITER), "max-iterations") &&
           !strcmp(vs_stop_name(VS_STOP_TIME), "time") && !vs_stop_name(VS_STOP_NONE), "stop names as documented");
}

static void test_perturb(void)
{
    vs_sizes_t s;
    char err[256];
    EXPECT(vs_sizes_parse("0,2,1K", &s, err, sizeof err) == 0, "parse");
    EXPECT(vs_sizes_perturb(&s, 3) == 0, "perturb");
    static const size_t want[] = {0, 2, 3, 5, 1021, 1024, 1027};
    EXPECT(s.n == 7, "%zu sizes, want 7 (never below 0)", s.n);
    for (size_t i = 0; i < 7 && i < s.n; i++)
        EXPECT(s.v[i] == want[i], "[%zu] = %zu, want %zu", i, s.v[i], want[i]);
    vs_sizes_free(&s);
    EXPECT(vs_sizes_parse("1G", &s, err, sizeof err) == 0 && vs_sizes_perturb(&s, 1) == 0 && s.n == 2 &&
           s.v[1] == (size_t)VS_SIZE_MAX_BYTES, "never above the largest size");
    vs_sizes_free(&s);
}

static void test_order(void)
{
    enum { N = 50 };
    size_t a[N], b[N], c[N];
    vs_schedule_order(a, N, 0, 1, 0, 0);
    for (size_t i = 0; i < N; i++)
        EXPECT(a[i] == i, "sequential is the identity");
    vs_schedule_order(a, N, 1, 42, 0, 0);
    vs_schedule_order(b, N, 1, 42, 0, 0);
    vs_schedule_order(c, N, 1, 42, 0, 1);
    int seen[N] = {0}, same_ab = 1, same_ac = 1, moved = 0;
    for (size_t i = 0; i < N; i++) {
        seen[a[i]]++;
        same_ab &= a[i] == b[i];
        same_ac &= a[i] == c[i];
        moved += a[i] != i;
    }
    for (size_t i = 0; i < N; i++)
        EXPECT(seen[i] == 1, "shuffle is a permutation (%zu seen %d times)", i, seen[i]);
    EXPECT(same_ab, "same seed, pass and round: same order");
    EXPECT(!same_ac, "another round: another order");
    EXPECT(moved > N / 2, "a shuffle moves most sizes (%d moved)", moved);
}

/* t(n) = 1000 + n, +5000 from 3000 on */
static double truth(size_t n)
{
    return 1000.0 + (double)n + (n >= 3000 ? 5000.0 : 0);
}

static void test_adaptive(void)
{
    vs_point_t pts[512];
    size_t n = 0;
    for (size_t b = 64; b <= 16384; b *= 2)
        pts[n++] = (vs_point_t){.bytes = b, .t = truth(b)};
    vs_adaptive_req_t q = {.tol = 0.05, .gap_b = 8, .gap_frac = 0, .budget = 200};
    size_t out[512];
    int pass;
    for (pass = 1; pass < 40; pass++) {
        long k = vs_adaptive_next(pts, n, pass, &q, out, NULL, 512);
        EXPECT(k >= 0, "adaptive pass %d failed", pass);
        if (k <= 0)
            break;
        for (long i = 0; i < k; i++)
            pts[n++] = (vs_point_t){.bytes = out[i], .t = truth(out[i]), .pass = pass};
        for (size_t i = 1; i < n; i++) /* insertion sort by bytes */
            for (size_t j = i; j > 0 && pts[j - 1].bytes > pts[j].bytes; j--) {
                vs_point_t t = pts[j];
                pts[j] = pts[j - 1];
                pts[j - 1] = t;
            }
        q.budget = 200 - (long)n;
    }
    EXPECT(pass < 40, "refinement ends");
    size_t below = 0, above = SIZE_MAX, near = 0, far = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pts[i].pass)
            continue;
        size_t b = pts[i].bytes;
        if (b < 3000 && b > below)
            below = b;
        if (b >= 3000 && b < above)
            above = b;
        near += b >= 2900 && b <= 3100;
        far += b < 2048 || b > 4096;
        if (i)
            EXPECT(b - pts[i - 1].bytes >= 8, "spacing %zu..%zu below 8 B", pts[i - 1].bytes, b);
    }
    EXPECT(above - below <= 16, "step bracketed within 16 B: %zu..%zu", below, above);
    EXPECT(near >= 4, "dense around the step: %zu sizes within 100 B", near);
    EXPECT(far <= 7, "sparse elsewhere: %zu sizes added outside 2K..4K (pass 1 only)", far);

    /* budget: never more than asked */
    n = 0;
    for (size_t b = 64; b <= 16384; b *= 2)
        pts[n++] = (vs_point_t){.bytes = b, .t = truth(b)};
    q.budget = 3;
    EXPECT(vs_adaptive_next(pts, n, 1, &q, out, NULL, 512) == 3, "budget of 3 sizes");
    /* minimum spacing as a fraction of the size */
    q = (vs_adaptive_req_t){.tol = 0.05, .gap_b = 8, .gap_frac = 0.5, .budget = 100};
    EXPECT(vs_adaptive_next(pts, n, 1, &q, out, NULL, 512) == 0, "50 %% gap: no interval of powers of two splits");
}

static void test_options(void)
{
    char err[512];
    vs_options_t o;
    char *ok[] = {"versus-run", "-t", "shm", "--order", "interleaved", "--sizes", "8,16", "--perturb", "2", NULL};
    EXPECT(vs_options_parse(9, ok, &o, err, sizeof err) == 0, "interleaved parses: %s", err);
    EXPECT(o.method.rounds == 10 && o.sizes.n == 6, "interleaved default 10 rounds (%ld), perturbed sizes %zu", o.method.rounds, o.sizes.n);
    vs_options_free(&o);
    char *bad1[] = {"versus-run", "-t", "shm", "--rounds", "3", NULL};
    EXPECT(vs_options_parse(5, bad1, &o, err, sizeof err) == -EINVAL && strstr(err, "--order"), "--rounds needs an order: %s", err);
    vs_options_free(&o);
    char *bad2[] = {"versus-run", "-t", "shm", "--precision", "0", NULL};
    EXPECT(vs_options_parse(5, bad2, &o, err, sizeof err) == -EINVAL && strstr(err, "percentage"), "--precision 0 refused: %s", err);
    vs_options_free(&o);
    char *bad3[] = {"versus-run", "-t", "shm", "--precision", "1", "--min-iterations", "50", "--max-iterations", "10", NULL};
    EXPECT(vs_options_parse(9, bad3, &o, err, sizeof err) == -EINVAL && strstr(err, "above"), "min above max refused: %s", err);
    vs_options_free(&o);
    char *bad4[] = {"versus-run", "-t", "shm", "--order", "random", NULL};
    EXPECT(vs_options_parse(5, bad4, &o, err, sizeof err) == -EINVAL && strstr(err, "shuffled"), "unknown order refused: %s", err);
    vs_options_free(&o);
    char *gap[] = {"versus-run", "-t", "shm", "--adaptive", "--adaptive-min-gap", "2%", "--adaptive-tol", "3", NULL};
    EXPECT(vs_options_parse(8, gap, &o, err, sizeof err) == 0 && fabs(o.method.adaptive_gap_frac - 0.02) < 1e-12 &&
           fabs(o.method.adaptive_tol - 0.03) < 1e-12, "gap as a percentage: %s", err);
    vs_options_free(&o);
}

int main(void)
{
    test_ci_ranks();
    test_stopping();
    test_perturb();
    test_order();
    test_adaptive();
    test_options();
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("all method unit tests passed\n");
    return 0;
}
