/* The all-pairs scan (scan.c): every pair of ranks once, round by round. */
#ifndef VS_SCAN_H
#define VS_SCAN_H

#include <stdio.h>

#include "pairing.h"
#include "pattern.h"

#define VS_SCAN_SLOWEST 5

typedef struct vs_scan_pair {
    int ranks[2];
    long round;
    double median_ns;
} vs_scan_pair_t;

/* Per scan size (rank 0): pairs measured and the slowest few by median. */
typedef struct vs_scan_slowest {
    size_t bytes;
    long pairs;
    int n;
    vs_scan_pair_t worst[VS_SCAN_SLOWEST];
} vs_scan_slowest_t;

/* Run the scan over pg's rounds with pattern p (collective).  On rank 0
 * *slowest gets an array of r->opt->sizes.n entries (free() it). */
int vs_scan_run(vs_run_t *r, const vs_pattern_t *p, const vs_pairing_t *pg, int serial, vs_scan_slowest_t **slowest);

/* The table of the slowest pairs per size (rank 0). */
void vs_scan_print(const vs_run_t *r, const vs_scan_slowest_t *slow, size_t n, const char *title, FILE *out);

#endif
