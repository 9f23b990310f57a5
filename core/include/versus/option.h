/* versus — helpers for parsing --transport-opt values inside a module.
 * Header-only: modules link nothing of core's. */
#ifndef VERSUS_OPTION_H
#define VERSUS_OPTION_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

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

#endif
