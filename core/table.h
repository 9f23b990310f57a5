/* The OSU-style table rank 0 prints at the end, and progress on stderr. */
#ifndef VS_TABLE_H
#define VS_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct vs_table_row {
    size_t bytes;
    double median_us, min_us, p99_us; /* one-way latency */
    double mbps;                      /* MB/s, 1e6 bytes per second */
    double col[6];                    /* other patterns' columns (table_layout.c) */
} vs_table_row_t;

struct vs_table_layout;

typedef struct vs_table {
    vs_table_row_t *rows;
    size_t n, cap;
    size_t planned;    /* sizes in the schedule, for progress */
    int progress;      /* print progress on stderr */
    const struct vs_table_layout *layout; /* NULL: ping-pong latency table */
} vs_table_t;

/* Add a row from round-trip samples (ns; one sample = batch mean).  One-way
 * latency is half a round trip; bandwidth = bytes moved one way / half the
 * total time. */
/* A new zeroed row for `bytes` at the end of t, or NULL when out of memory. */
vs_table_row_t *vs_table_append(vs_table_t *t, size_t bytes);
int vs_table_add_pingpong(vs_table_t *t, size_t bytes, const int64_t *rtt_ns, long n);
/* Median of n values; reorders v. */
double vs_median_i64(int64_t *v, long n);

void vs_table_print(const vs_table_t *t, FILE *out, const char *title);
void vs_table_free(vs_table_t *t);

#endif
