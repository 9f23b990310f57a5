/* Every record versus-run writes, and every key in them, is built here and
 * only here: the run record, one size record per visit of a size, and the end
 * record.  docs/results-schema.md describes the same fields; change both
 * together.  The file itself (one line per record, flushed, thread-safe, the
 * end record written once) is writer.c's. */
#ifndef VS_RECORD_H
#define VS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include <versus/transport.h>

#include "json.h"
#include "launch.h"
#include "pattern.h"
#include "placement.h"
#include "writer.h"

#define VS_RECORD_SCHEMA 1

/* What the run record says beyond the options and the run's state. */
typedef struct vs_record_run {
    const vs_transport_info_t *info; /* after connect() */
    const vs_launch_env_t *launch;
    const char *hosts;               /* size x host_len, rank order */
    size_t host_len;
    const vs_placement_t *placement; /* NULL: none */
    double drift_start_ns;           /* NaN: not probed */
    const char *warning;             /* about the whole run, or "" / NULL */
} vs_record_run_t;

/* The first record of the file (rank 0). */
int vs_record_run(const vs_run_t *r, const vs_record_run_t *facts);

/* The run record's "placement" and "topology" values (null without one);
 * also for tests of placement. */
void vs_record_placement(const vs_placement_t *p, vs_json_t *j);
void vs_record_topology(const vs_placement_t *p, vs_json_t *j);

/* One visit of one size: its samples (series[k][0..n) per the pattern's
 * series), validation, drift and place in the schedule.  No-op without a
 * results file; an error is set in r->err. */
int vs_record_size(vs_run_t *r, const vs_pattern_t *p, size_t bytes, long warmup, long batch,
                   int64_t *const *series, long n, uint64_t elapsed_ns);

/* The aggregate of all pairs at one visit of a size (rank 0, more than one
 * pair): bandwidth and message rate of every pair's bytes over the slowest
 * pair's time, and over the mean time (osu_mbw_mr's figure). */
/* One pair of an all-pairs scan at one size (rank 0): the "pair" record.
 * slot: the pair's turn within its round with --serial, else -1. */
int vs_record_pair(vs_run_t *r, long pass, long round, long slot, int a, int b, size_t bytes, long warmup,
                   const int64_t *samples, long n, uint64_t elapsed_ns);

/* The pairs' times at one visit: the slowest pair's and the mean measuring
 * time; on one host also the span from the first start to the last end and the
 * share of the slowest pair's time during which all pairs ran (else NAN). */
typedef struct vs_pairs_timing {
    double max_ns, mean_ns, span_ns, overlap;
} vs_pairs_timing_t;

/* What all pairs moved while all of them ran is over this time: the span on
 * one host (never shorter than the slowest pair), else the slowest pair's. */
static inline double vs_pairs_time(const vs_pairs_timing_t *t)
{
    return t->span_ns == t->span_ns && t->span_ns > t->max_ns ? t->span_ns : t->max_ns;
}

int vs_record_aggregate(vs_run_t *r, size_t bytes, int pairs, long messages_per_pair, const vs_pairs_timing_t *t);

/* The last record: how the run ended (the writer's vs_writer_end_fn). */
void vs_record_end(vs_json_t *j, const vs_writer_end_t *end);

#endif
