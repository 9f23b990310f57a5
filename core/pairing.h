/* versus — who talks to whom when more than two ranks run: pairings as data.
 *
 *   fixed        one round: rank i with rank i + N/2 (the pairing of osu_mbw_mr)
 *   round-robin  every pair exactly once, in N - 1 rounds of N/2 concurrent pairs
 *                (a round-robin tournament by the circle method: one slot stays,
 *                the others turn by one place a round)
 *
 * A seed shuffles the round-robin schedule: which rank sits in which slot and the
 * order of the rounds (both uniform permutations from the seed).  Any rank's
 * partner in any round is computed in O(1) from O(N) state: nobody holds the
 * N x N matrix, and a rank needs nothing from the others to know its schedule.
 */
#ifndef VS_PAIRING_H
#define VS_PAIRING_H

#include <stddef.h>
#include <stdint.h>

typedef enum { VS_PAIRING_FIXED, VS_PAIRING_ROUND_ROBIN } vs_pairing_kind_t;

typedef struct vs_pairing {
    vs_pairing_kind_t kind;
    int n;               /* ranks (even, >= 2) */
    int rounds;          /* 1 (fixed) or n - 1 (round-robin) */
    int *rank_of_slot;   /* round-robin: the rank sitting in each slot */
    int *slot_of_rank;
    int *round_order;    /* round k is the circle's turn round_order[k] */
} vs_pairing_t;

/* seed 0: the schedule in its natural order.  Returns 0, or -EINVAL (n odd or
 * below 2; err says so) or -ENOMEM. */
int vs_pairing_init(vs_pairing_t *p, vs_pairing_kind_t kind, int n, uint64_t seed, char *err, size_t errlen);

/* The rank `rank` talks to in round `round` (0 <= round < p->rounds). */
int vs_pairing_partner(const vs_pairing_t *p, int round, int rank);

void vs_pairing_free(vs_pairing_t *p);

/* "fixed" / "round-robin" <-> kind; -1 for an unknown name. */
int vs_pairing_parse(const char *name);
const char *vs_pairing_name(vs_pairing_kind_t kind);

#endif
