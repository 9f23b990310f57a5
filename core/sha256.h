/* SHA-256 (FIPS 180-4), used to seal every line of a results file. */
#ifndef VS_SHA256_H
#define VS_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct vs_sha256 {
    uint32_t h[8];
    uint64_t total;      /* bytes absorbed */
    unsigned char block[64];
    size_t used;         /* bytes waiting in block */
} vs_sha256_t;

void vs_sha256_init(vs_sha256_t *s);
void vs_sha256_update(vs_sha256_t *s, const void *data, size_t len);
void vs_sha256_final(vs_sha256_t *s, unsigned char out[32]);
/* The digest of data as 64 lower-case hex digits and a NUL. */
void vs_sha256_hex(const void *data, size_t len, char out[65]);

#endif
