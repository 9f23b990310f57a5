/* versus — how a --transport-opt value reads for each kind of vs_option_t.
 * Core parses every value with these before a module's open(); they are
 * header-only so that a harness that opens a module without core (the
 * conformance check, a module's own test) hands it values exactly as core
 * does.  A module itself never needs them: it reads vs_opt_value_t fields. */
#ifndef VERSUS_OPTION_H
#define VERSUS_OPTION_H

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <versus/transport.h>

/* A byte count with an optional binary suffix K or M (either case), at most
 * max bytes.  Returns 0, or -EINVAL for anything else. */
static inline int vs_option_bytes(const char *s, size_t max, size_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -EINVAL;
    unsigned long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ULL << 20, end++;
    if (*end || v > (unsigned long long)max / mul)
        return -EINVAL;
    *out = (size_t)(v * mul);
    return 0;
}

/* The position of v among choices ("poll|block": poll 0, block 1).  0, or
 * -EINVAL when v is none of them. */
static inline int vs_option_choice(const char *choices, const char *v, unsigned *index)
{
    size_t n = strlen(v);
    unsigned i = 0;
    for (const char *p = choices; *p; i++) {
        size_t k = strcspn(p, "|");
        if (k == n && strncmp(p, v, n) == 0) {
            *index = i;
            return 0;
        }
        p += k + (p[k] == '|');
    }
    return -EINVAL;
}

/* A finite, non-negative decimal number and nothing after it. */
static inline int vs_option_number(const char *v, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < 0)
        return -EINVAL;
    *out = x;
    return 0;
}

/* text read as a value of op's kind, within its limit, into *v (given).
 * 0, or -EINVAL (an empty text is never a value). */
static inline int vs_option_parse(const vs_option_t *op, const char *text, vs_opt_value_t *v)
{
    vs_opt_value_t r = {.given = 1, .text = text};
    size_t bytes = 0;
    int rc = !text || !*text ? -EINVAL : 0;
    if (!rc && op->kind == VS_OPT_CHOICE)
        rc = vs_option_choice(op->choices ? op->choices : "", text, &r.choice);
    else if (!rc && op->kind == VS_OPT_NUMBER)
        rc = vs_option_number(text, &r.number);
    else if (!rc && (op->kind == VS_OPT_BYTES || op->kind == VS_OPT_COUNT))
        rc = vs_option_bytes(text, op->max_bytes ? (size_t)op->max_bytes : SIZE_MAX, &bytes);
    r.count = bytes;
    if (!rc)
        *v = r;
    return rc;
}

/* *v for an option not given: its default when op->def is a value of its
 * kind (never for VS_OPT_TEXT, whose def describes), else all zero. */
static inline void vs_option_default(const vs_option_t *op, vs_opt_value_t *v)
{
    vs_opt_value_t r = {0};
    if (op->kind == VS_OPT_TEXT || vs_option_parse(op, op->def, &r))
        r = (vs_opt_value_t){0};
    r.given = 0;
    *v = r;
}

#endif
