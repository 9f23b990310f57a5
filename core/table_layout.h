/* Tables for patterns other than ping-pong: each pattern names its columns
 * (a layout) and adds one row of numbers per size. */
#ifndef VS_TABLE_LAYOUT_H
#define VS_TABLE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "table.h"

#define VS_TABLE_COLS 6

typedef struct vs_table_layout {
    const char *legend;                  /* one line: what the columns mean */
    int ncol;
    const char *head[VS_TABLE_COLS];     /* column headings, with units */
    int decimals[VS_TABLE_COLS];
} vs_table_layout_t;

/* Add a row; the first row fixes the table's layout. */
int vs_table_add_row(vs_table_t *t, const vs_table_layout_t *layout, size_t bytes, const double *col);
void vs_table_layout_print(const vs_table_t *t, FILE *out, const char *title);

/* Median of n values, leaving v untouched; 0 when n <= 0. */
double vs_series_median(const int64_t *v, long n);
double vs_series_min(const int64_t *v, long n);

#endif
