/* Placement drift probe.
 *
 * On virtual machines the host moves virtual CPUs under a bound process: the
 * cache-line round trip between the same two bound cores can read ~60 ns at
 * one moment and several times that at another.  The probe measures that
 * round trip between ranks 0 and 1 (their bound cores) through a small shared
 * memory segment, so a run can record it at the start, between message sizes
 * and at the end, and a report can tell a slow transport from a moved core.
 *
 * All calls are collective over the bootstrap (every rank calls them, ranks
 * other than 0 and 1 only take part in the exchanges) and must run on the
 * bound, measuring thread.  Never inside a timed loop.
 */
#ifndef VS_DRIFT_H
#define VS_DRIFT_H

#include <stddef.h>

#include <versus/bootstrap.h>

#include "idle.h"

typedef struct vs_drift vs_drift_t;

/* Map the segment: rank 0 creates it (shm_open + mmap), its name travels via
 * bs->exchange, rank 1 maps it, and it is unlinked as soon as both hold it.
 * Returns 0; -ENOTSUP (with err) when ranks 0 and 1 are on different hosts
 * or there is only one rank: the caller records no drift then. */
int vs_drift_open(vs_bootstrap_t *bs, vs_drift_t **out, char *err, size_t errlen);

/* One probe: round_trips cache-line round trips (a few thousand is ~1 ms),
 * timed in batches of 16; *rtt_ns gets the median batch mean in ns, on ranks
 * 0 and 1 (NaN on other ranks).  A peer that does not answer within
 * timeout_s gives -ETIMEDOUT and leaves the handle unusable. */
int vs_drift_probe(vs_drift_t *d, int round_trips, double timeout_s, double *rtt_ns);

/* While a probe waits for its peer much longer than a cache-line round trip
 * (a peer still in its transport, or descheduled), call idle now and then:
 * the transport's progress, which that peer may need from this rank. */
void vs_drift_set_idle(vs_drift_t *d, vs_idle_t idle);

/* Unmap; not collective.  NULL is fine. */
void vs_drift_close(vs_drift_t *d);

/* open + probe + close in one call, for a single measurement. */
int vs_drift_measure(vs_bootstrap_t *bs, int round_trips, double timeout_s, double *rtt_ns,
                     char *err, size_t errlen);

#endif
