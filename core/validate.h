/* --validate: payload checks around each size's measurement, outside any
 * timed loop.  Ranks 0 and 1 exchange payloads in both directions, filled
 * from a generator seeded by (size, phase, round, direction), and check every
 * byte on receipt.  A pattern with its own check (the one-sided ones:
 * vs_pattern_t.check) runs that instead of the exchange, with the same
 * payloads and verdicts.  A mismatch marks the size invalid; the run goes on
 * and ends with status "invalid". */
#ifndef VS_VALIDATE_H
#define VS_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

struct vs_run;

enum { VS_VALIDATE_BEFORE = 0, VS_VALIDATE_AFTER = 1 };

/* Collective over all ranks; a no-op without --validate.  Returns 0 also when
 * the payload differed (that is a result, recorded for the size); an error
 * only when the exchange itself failed. */
int vs_validate_size(struct vs_run *r, size_t bytes, int phase);
/* What the checks of the size just measured found, for its size record. */
typedef struct vs_validate_finding {
    int valid;          /* every payload matched */
    int after;          /* first mismatch: 0 before the warm-up, 1 after the samples */
    int round, from;    /* its exchange and sender (rank 0 or 1) */
    int64_t offset, differing;
    int expected, got;  /* the first differing byte's values */
} vs_validate_finding_t;

/* 1 with *out filled when the run validates payloads, else 0. */
int vs_validate_finding(const struct vs_run *r, vs_validate_finding_t *out);
void vs_validate_free(struct vs_run *r);

/* For a pattern's own check (vs_pattern_t.check): the payload `sender` sends
 * in this round, and what the receiving rank expects of it (the same bytes,
 * but for the test build's injected fault on rank 1). */
void vs_validate_payload(unsigned char *buf, size_t bytes, int phase, int round, int sender);
void vs_validate_expect(const struct vs_run *r, unsigned char *want, size_t bytes, int phase, int round,
                        int sender);
/* The test build's injected fault alone, on bytes a check computed itself. */
void vs_validate_fault(const struct vs_run *r, unsigned char *want, size_t bytes, int phase, int round);

#endif
