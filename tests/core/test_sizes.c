/* Size schedules parse as documented, and malformed ones are refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "sizes.h"
#include "vs_expect.h"

static void expect_sizes(const char *spec, const size_t *want, size_t n)
{
    vs_sizes_t s;
    char err[256] = "";
    int rc = vs_sizes_parse(spec, &s, err, sizeof err);
    EXPECT(rc == 0, "'%s' should parse, got %d (%s)", spec, rc, err);
    if (rc)
        return;
    EXPECT(s.n == n, "'%s': %zu sizes, want %zu", spec, s.n, n);
    for (size_t i = 0; i < n && i < s.n; i++)
        EXPECT(s.v[i] == want[i], "'%s'[%zu] = %zu, want %zu", spec, i, s.v[i], want[i]);
    vs_sizes_free(&s);
}

static void expect_bad(const char *spec, const char *why_contains)
{
    vs_sizes_t s;
    char err[256] = "";
    int rc = vs_sizes_parse(spec, &s, err, sizeof err);
    EXPECT(rc == -EINVAL, "'%s' should be refused, got %d", spec, rc);
    EXPECT(strstr(err, why_contains) != NULL, "'%s': message '%s' lacks '%s'", spec, err, why_contains);
}

static void expect_count(const char *spec, size_t n, size_t first, size_t last)
{
    vs_sizes_t s;
    char err[256] = "";
    int rc = vs_sizes_parse(spec, &s, err, sizeof err);
    EXPECT(rc == 0 && s.n == n && s.v[0] == first && s.v[s.n - 1] == last,
           "'%s': want %zu sizes %zu..%zu, got rc=%d n=%zu", spec, n, first, last, rc, rc ? 0 : s.n);
    if (!rc)
        vs_sizes_free(&s);
}

static void expect_opts_bad(int argc, char **argv, const char *why_contains)
{
    vs_options_t o;
    char err[512] = "";
    int rc = vs_options_parse(argc, argv, &o, err, sizeof err);
    EXPECT(rc == -EINVAL, "options '%s ...' should be refused", argv[1]);
    EXPECT(strstr(err, why_contains) != NULL, "options message '%s' lacks '%s'", err, why_contains);
    vs_options_free(&o);
}

int main(void)
{
    expect_sizes("8", (size_t[]){8}, 1);
    expect_sizes("0:8", (size_t[]){0, 1, 2, 4, 8}, 5);
    expect_sizes("3:20", (size_t[]){4, 8, 16}, 3);
    expect_sizes("1K,8,64,8", (size_t[]){8, 64, 1024}, 3);
    expect_sizes("1:10:+3", (size_t[]){1, 4, 7, 10}, 4);
    expect_sizes("0", (size_t[]){0}, 1);
    expect_sizes("2M", (size_t[]){2u << 20}, 1);
    expect_sizes("1KiB,1g", (size_t[]){1024, 1u << 30}, 2);
    expect_sizes("4:12:+4,0:4", (size_t[]){0, 1, 2, 4, 8, 12}, 6);
    expect_count("4:40000:+4", 10000, 4, 40000);   /* seed 004: 1..10000 ints */
    expect_count("0:4M", 24, 0, 4u << 20);

    expect_bad("", "empty");
    expect_bad("abc", "bad size");
    expect_bad("-8", "bad size");
    expect_bad("8:4", "ends below");
    expect_bad("1:10:+0", "bad step");
    expect_bad("1:10:3", "bad step");
    expect_bad("1:2:3:4", "too many");
    expect_bad("2G", "larger than the maximum");
    expect_bad("10X", "bad size");
    expect_bad("0:1G:+1", "more than");
    expect_bad(",,", "empty item");
    expect_bad("8,,16", "empty item");
    expect_bad("8,", "empty item");

    {
        char *a[] = {"versus-run", "--transport", "x", "--iterations", "-3", NULL};
        expect_opts_bad(5, a, "--iterations expects an integer >= 1");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "--warmup", "many", NULL};
        expect_opts_bad(5, a, "--warmup expects");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "--variant", "sideways", NULL};
        expect_opts_bad(5, a, "no variant 'sideways'");
    }
    {
        char *a[] = {"versus-run", "--sizes", "8", NULL};
        expect_opts_bad(3, a, "--transport NAME is required");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "--bogus", NULL};
        expect_opts_bad(4, a, "unknown option '--bogus'");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "--transport-opt", "novalue", NULL};
        expect_opts_bad(5, a, "KEY=VALUE");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "--timeout", "0", NULL};
        expect_opts_bad(5, a, "--timeout expects");
    }
    {
        char *a[] = {"versus-run", "--transport", "x", "-n", "4", NULL};
        expect_opts_bad(5, a, "-n/--np is for --launch local");
    }
    {
        vs_options_t o;
        char err[256] = "";
        char *a[] = {"versus-run", "--transport", "tcp", "-o", "mode=block", "--sizes", "0:1K", "--batch", "4", NULL};
        int rc = vs_options_parse(9, a, &o, err, sizeof err);
        EXPECT(rc == 0, "valid options refused: %s", err);
        EXPECT(rc || (o.n_topts == 1 && !strcmp(o.topts[0].key, "mode") && !strcmp(o.topts[0].value, "block")),
               "transport option parsed");
        EXPECT(rc || (o.batch == 4 && o.sizes.n == 12 && !strcmp(o.variant, "blocking")), "batch, sizes, default variant");
        vs_options_free(&o);
    }
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("all size-schedule and option checks passed\n");
    return failures ? 1 : 0;
}
