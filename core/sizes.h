/* Size schedules: "8,64,1K", "0:4M" (0 then powers of two), "1:10000:+1" (linear). */
#ifndef VS_SIZES_H
#define VS_SIZES_H

#include <stddef.h>
#include <stdint.h>

#define VS_SIZE_MAX_BYTES (1ULL << 30)   /* largest message: 1 GiB */
#define VS_SIZES_MAX_COUNT 1000000       /* most sizes in one schedule */

typedef struct vs_sizes {
    size_t *v;
    size_t n;
} vs_sizes_t;

/* Parse a byte count with an optional binary suffix K, M, G (also KiB, MiB,
 * GiB; case-insensitive).  Returns 0 or -EINVAL. */
int vs_bytes_parse(const char *s, uint64_t *out);

/* Parse a schedule: comma-separated items, each one of
 *   N            one size
 *   MIN:MAX      powers of two in [MIN, MAX], and 0 when MIN is 0
 *   MIN:MAX:+S   MIN, MIN+S, MIN+2S, ... <= MAX
 * The result is sorted ascending without duplicates.  Returns 0, or -EINVAL
 * with the reason in err. */
int vs_sizes_parse(const char *spec, vs_sizes_t *out, char *err, size_t errlen);
void vs_sizes_free(vs_sizes_t *s);

#endif
