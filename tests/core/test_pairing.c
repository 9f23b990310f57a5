/* Pairings: fixed pairs rank i with i + N/2; round-robin puts every rank in exactly one pair
 * per round and every pair in exactly one round of N - 1, in natural order and shuffled by a
 * seed (the same seed, the same schedule); odd or too small N is refused. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairing.h"
#include "vs_expect.h"

static void check_round_robin(int n, uint64_t seed)
{
    vs_pairing_t p;
    char err[128] = "";
    int rc = vs_pairing_init(&p, VS_PAIRING_ROUND_ROBIN, n, seed, err, sizeof err);
    EXPECT(rc == 0 && p.rounds == n - 1, "n=%d seed=%llu: init %d (%s), %d rounds", n,
           (unsigned long long)seed, rc, err, rc ? 0 : p.rounds);
    if (rc)
        return;
    unsigned char *met = calloc((size_t)n * (size_t)n, 1);
    int bad = 0;
    for (int r = 0; r < p.rounds; r++)
        for (int x = 0; x < n; x++) {
            int y = vs_pairing_partner(&p, r, x);
            if (y < 0 || y >= n || y == x || vs_pairing_partner(&p, r, y) != x)
                bad++;
            else if (x < y)
                met[(size_t)x * (size_t)n + (size_t)y]++;
        }
    EXPECT(bad == 0, "n=%d seed=%llu: %d partners are not a perfect matching of their round", n,
           (unsigned long long)seed, bad);
    int twice = 0, never = 0;
    for (int x = 0; x < n; x++)
        for (int y = x + 1; y < n; y++) {
            unsigned char m = met[(size_t)x * (size_t)n + (size_t)y];
            twice += m > 1;
            never += m == 0;
        }
    EXPECT(twice == 0 && never == 0, "n=%d seed=%llu: %d pairs met twice, %d never", n,
           (unsigned long long)seed, twice, never);
    free(met);
    vs_pairing_free(&p);
}

int main(void)
{
    int sizes[] = {2, 4, 6, 8, 10, 32, 128, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        check_round_robin(sizes[i], 0);
        check_round_robin(sizes[i], 7);
        check_round_robin(sizes[i], 12345);
    }

    /* the same seed gives the same schedule; another seed another one */
    vs_pairing_t a, b, c;
    char err[128];
    vs_pairing_init(&a, VS_PAIRING_ROUND_ROBIN, 16, 42, err, sizeof err);
    vs_pairing_init(&b, VS_PAIRING_ROUND_ROBIN, 16, 42, err, sizeof err);
    vs_pairing_init(&c, VS_PAIRING_ROUND_ROBIN, 16, 43, err, sizeof err);
    int same = 1, differs = 0;
    for (int r = 0; r < 15; r++)
        for (int x = 0; x < 16; x++) {
            same &= vs_pairing_partner(&a, r, x) == vs_pairing_partner(&b, r, x);
            differs |= vs_pairing_partner(&a, r, x) != vs_pairing_partner(&c, r, x);
        }
    EXPECT(same && differs, "seed 42 twice: same schedule (%d); seed 43: another (%d)", same, differs);
    vs_pairing_free(&a);
    vs_pairing_free(&b);
    vs_pairing_free(&c);

    /* fixed: osu_mbw_mr's pairs, one round */
    vs_pairing_t f;
    EXPECT(vs_pairing_init(&f, VS_PAIRING_FIXED, 8, 0, err, sizeof err) == 0 && f.rounds == 1, "fixed 8 inits");
    for (int x = 0; x < 8; x++)
        EXPECT(vs_pairing_partner(&f, 0, x) == (x + 4) % 8, "fixed: rank %d with %d", x, vs_pairing_partner(&f, 0, x));
    vs_pairing_free(&f);

    int bad_n[] = {0, 1, 3, 7, -2};
    for (size_t i = 0; i < sizeof bad_n / sizeof *bad_n; i++) {
        err[0] = '\0';
        EXPECT(vs_pairing_init(&f, VS_PAIRING_ROUND_ROBIN, bad_n[i], 1, err, sizeof err) == -EINVAL &&
               strstr(err, "even number of ranks"), "n=%d refused with a reason (%s)", bad_n[i], err);
    }
    EXPECT(vs_pairing_parse("fixed") == VS_PAIRING_FIXED && vs_pairing_parse("round-robin") == VS_PAIRING_ROUND_ROBIN
           && vs_pairing_parse("ring") == -1, "pairing names parse");
    return failures ? 1 : 0;
}
