/* --validate: payload checks around each size's measurement, outside any
 * timed loop.  Ranks 0 and 1 exchange payloads in both directions, filled
 * from a generator seeded by (size, phase, round, direction), and check every
 * byte on receipt.  A mismatch marks the size invalid; the run goes on and
 * ends with status "invalid". */
#ifndef VS_VALIDATE_H
#define VS_VALIDATE_H

#include <stddef.h>

#include "json.h"

struct vs_run;

enum { VS_VALIDATE_BEFORE = 0, VS_VALIDATE_AFTER = 1 };

/* Collective over all ranks; a no-op without --validate.  Returns 0 also when
 * the payload differed (that is a result, recorded for the size); an error
 * only when the exchange itself failed. */
int vs_validate_size(struct vs_run *r, size_t bytes, int phase);
/* Size-record fields ("valid", "validation") for the size just checked;
 * nothing without --validate. */
void vs_validate_json(struct vs_run *r, vs_json_t *j);
void vs_validate_free(struct vs_run *r);

#endif
