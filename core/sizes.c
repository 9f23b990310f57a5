#include "sizes.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int vs_bytes_parse(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -EINVAL;
    uint64_t mul = 1;
    if (*end) {
        static const struct { const char *suffix; uint64_t mul; } units[] = {
            {"K", 1ULL << 10}, {"KiB", 1ULL << 10}, {"M", 1ULL << 20}, {"MiB", 1ULL << 20},
            {"G", 1ULL << 30}, {"GiB", 1ULL << 30}, {"B", 1},
        };
        mul = 0;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
            if (!strcasecmp(end, units[i].suffix))
                mul = units[i].mul;
        if (!mul)
            return -EINVAL;
    }
    if (v > UINT64_MAX / mul)
        return -EINVAL;
    *out = v * mul;
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    size_t *v;
    size_t n, cap;
} list_t;

static int push(list_t *l, uint64_t v)
{
    if (l->n >= VS_SIZES_MAX_COUNT)
        return -E2BIG;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        size_t *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = (size_t)v;
    return 0;
}

static int parse_bound(const char *txt, uint64_t *v, const char *item, char *err, size_t errlen)
{
    if (vs_bytes_parse(txt, v)) {
        snprintf(err, errlen, "bad size '%s' in '%s' (expected a non-negative number with an optional K, M or G suffix)", txt, item);
        return -EINVAL;
    }
    if (*v > VS_SIZE_MAX_BYTES) {
        snprintf(err, errlen, "size '%s' in '%s' is larger than the maximum of 1G", txt, item);
        return -EINVAL;
    }
    return 0;
}

static int parse_item(char *item, list_t *l, char *err, size_t errlen)
{
    char *f[3] = {item, NULL, NULL};
    int nf = 1;
    for (char *p = item; *p; p++) {
        if (*p == ':') {
            if (nf == 3) {
                snprintf(err, errlen, "too many ':' in size item '%s'", item);
                return -EINVAL;
            }
            *p = '\0';
            f[nf++] = p + 1;
        }
    }
    char shown[128];
    snprintf(shown, sizeof shown, "%s%s%s%s%s", f[0], nf > 1 ? ":" : "", nf > 1 ? f[1] : "",
             nf > 2 ? ":" : "", nf > 2 ? f[2] : "");
    uint64_t lo, hi, step = 0;
    int rc = parse_bound(f[0], &lo, shown, err, errlen);
    if (rc)
        return rc;
    if (nf == 1)
        return push(l, lo);
    if ((rc = parse_bound(f[1], &hi, shown, err, errlen)))
        return rc;
    if (hi < lo) {
        snprintf(err, errlen, "range '%s' ends below its start", shown);
        return -EINVAL;
    }
    if (nf == 3) {
        if (f[2][0] != '+' || vs_bytes_parse(f[2] + 1, &step) || step == 0) {
            snprintf(err, errlen, "bad step in '%s' (expected MIN:MAX:+STEP with STEP > 0)", shown);
            return -EINVAL;
        }
        if ((hi - lo) / step + 1 > VS_SIZES_MAX_COUNT) {
            snprintf(err, errlen, "range '%s' has more than %d sizes", shown, VS_SIZES_MAX_COUNT);
            return -EINVAL;
        }
        for (uint64_t v = lo; v <= hi; v += step)
            if ((rc = push(l, v)))
                return rc;
        return 0;
    }
    if (lo == 0 && (rc = push(l, 0)))
        return rc;
    for (uint64_t v = 1; v <= hi; v <<= 1)
        if (v >= lo && (rc = push(l, v)))
            return rc;
    return 0;
}

int vs_sizes_parse(const char *spec, vs_sizes_t *out, char *err, size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    if (!spec || !*spec) {
        snprintf(err, errlen, "empty size schedule");
        return -EINVAL;
    }
    size_t len = strlen(spec);
    if (len == 0 || spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,")) {
        snprintf(err, errlen, "size schedule '%s' has an empty item (sizes are separated by single commas)", spec);
        return -EINVAL;
    }
    char *copy = strdup(spec);
    if (!copy)
        return -ENOMEM;
    list_t l = {0};
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if ((rc = parse_item(item, &l, err, errlen)))
            break;
    }
    if (!rc && l.n == 0) {
        snprintf(err, errlen, "size schedule '%s' selects no sizes", spec);
        rc = -EINVAL;
    }
    if (rc == -E2BIG) {
        snprintf(err, errlen, "size schedule '%s' has more than %d sizes", spec, VS_SIZES_MAX_COUNT);
        rc = -EINVAL;
    }
    free(copy);
    if (rc) {
        free(l.v);
        return rc;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_size);
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++)
        if (k == 0 || l.v[k - 1] != l.v[i])
            l.v[k++] = l.v[i];
    out->v = l.v;
    out->n = k;
    return 0;
}

void vs_sizes_free(vs_sizes_t *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
