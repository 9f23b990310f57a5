#include "table_layout.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int vs_table_add_row(vs_table_t *t, const vs_table_layout_t *layout, size_t bytes, const double *col)
{
    vs_table_row_t *row = vs_table_append(t, bytes);
    if (!row)
        return -ENOMEM;
    t->layout = layout;
    for (int k = 0; k < layout->ncol && k < VS_TABLE_COLS; k++)
        row->col[k] = col[k];
    if (t->progress) {
        fprintf(stderr, "\r  %zu/%zu sizes  %10zu B", t->n, t->planned, bytes);
        for (int k = 0; k < 2 && k < layout->ncol; k++)
            fprintf(stderr, "  %s %.*f", layout->head[k], layout->decimals[k], col[k]);
        fputs("   ", stderr);
        if (t->n == t->planned)
            fputc('\n', stderr);
        fflush(stderr);
    }
    return 0;
}

void vs_table_layout_print(const vs_table_t *t, FILE *out, const char *title)
{
    const vs_table_layout_t *l = t->layout;
    fprintf(out, "# %s\n# %s\n%-12s", title, l->legend, "# Size [B]");
    for (int k = 0; k < l->ncol; k++)
        fprintf(out, " %18s", l->head[k]);
    fputc('\n', out);
    for (size_t i = 0; i < t->n; i++) {
        fprintf(out, "%-12zu", t->rows[i].bytes);
        for (int k = 0; k < l->ncol; k++) {
            if (isnan(t->rows[i].col[k]))
                fprintf(out, " %18s", "-"); /* not meaningful at this size */
            else
                fprintf(out, " %18.*f", l->decimals[k], t->rows[i].col[k]);
        }
        fputc('\n', out);
    }
    fflush(out);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double vs_series_median(const int64_t *v, long n)
{
    if (n <= 0)
        return 0;
    int64_t *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return 0;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_i64);
    double m = (n % 2) ? (double)s[n / 2] : 0.5 * ((double)s[n / 2 - 1] + (double)s[n / 2]);
    free(s);
    return m;
}

double vs_series_min(const int64_t *v, long n)
{
    double m = n > 0 ? (double)v[0] : 0;
    for (long i = 1; i < n; i++)
        if ((double)v[i] < m)
            m = (double)v[i];
    return m;
}
