#include "table.h"
#include "table_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double vs_median_i64(int64_t *v, long n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return (n % 2) ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

vs_table_row_t *vs_table_append(vs_table_t *t, size_t bytes)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        vs_table_row_t *nr = realloc(t->rows, cap * sizeof *nr);
        if (!nr)
            return NULL;
        t->rows = nr;
        t->cap = cap;
    }
    vs_table_row_t *row = &t->rows[t->n++];
    memset(row, 0, sizeof *row);
    row->bytes = bytes;
    return row;
}

int vs_table_add_pingpong(vs_table_t *t, size_t bytes, const int64_t *rtt_ns, long n)
{
    if (n <= 0)
        return -EINVAL;
    int64_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -ENOMEM;
    memcpy(s, rtt_ns, (size_t)n * sizeof *s);
    double med = vs_median_i64(s, n);
    long i99 = (long)(0.99 * (double)(n - 1) + 0.5);
    vs_table_row_t *row = vs_table_append(t, bytes);
    if (!row) {
        free(s);
        return -ENOMEM;
    }
    row->median_us = med / 2 / 1e3;
    row->min_us = (double)s[0] / 2 / 1e3;
    row->p99_us = (double)s[i99] / 2 / 1e3;
    /* the one statistic of every figure: bytes over the median one-way time (a
     * mean would be dominated by the few samples a busy host delays) */
    row->mbps = med > 0 ? (double)bytes / (med / 2 / 1e9) / 1e6 : 0;
    free(s);
    if (t->progress) {
        fprintf(stderr, "\r  %zu/%zu sizes  %10zu B  %10.2f us  %10.2f MB/s   ",
                t->n, t->planned, bytes, row->median_us, row->mbps);
        if (t->n == t->planned)
            fputc('\n', stderr);
        fflush(stderr);
    }
    return 0;
}

void vs_table_print(const vs_table_t *t, FILE *out, const char *title)
{
    if (t->layout) {
        vs_table_layout_print(t, out, title);
        return;
    }
    fprintf(out, "# %s\n", title);
    fprintf(out, "# one-way latency = round trip / 2; bandwidth = bytes / median one-way time (1 MB = 1e6 B)\n");
    fprintf(out, "%-12s %14s %14s %14s %16s\n", "# Size [B]", "Median [us]", "Min [us]", "P99 [us]", "Bandwidth [MB/s]");
    for (size_t i = 0; i < t->n; i++) {
        const vs_table_row_t *r = &t->rows[i];
        fprintf(out, "%-12zu %14.2f %14.2f %14.2f %16.2f\n", r->bytes, r->median_us, r->min_us, r->p99_us, r->mbps);
    }
    fflush(out);
}

void vs_table_free(vs_table_t *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
