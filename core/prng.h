/* A cheap deterministic generator for payloads (xorshift64*), shared by the
 * payload checks and the double-buffer pattern's random fill. */
#ifndef VS_PRNG_H
#define VS_PRNG_H

#include <stddef.h>
#include <stdint.h>

/* A well-mixed non-zero state from any seed (splitmix64 finaliser). */
static inline uint64_t vs_prng_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z ? z : 0x2545f4914f6cdd1dULL;
}

static inline uint64_t vs_prng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

/* Fill len bytes from the generator seeded with seed. */
static inline void vs_prng_fill_bytes(void *buf, size_t len, uint64_t seed)
{
    uint64_t s = vs_prng_seed(seed);
    unsigned char *p = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = vs_prng_next(&s);
        for (int k = 0; k < 8; k++)
            p[i + (size_t)k] = (unsigned char)(v >> (8 * k));
    }
    if (i < len) {
        uint64_t v = vs_prng_next(&s);
        for (int k = 0; i < len; i++, k++)
            p[i] = (unsigned char)(v >> (8 * k));
    }
}

#endif
