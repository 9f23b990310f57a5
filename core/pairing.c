#include "pairing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prng.h"

static void shuffle(int *v, int n, uint64_t *state)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(vs_prng_next(state) % (uint64_t)(i + 1));
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

int vs_pairing_init(vs_pairing_t *p, vs_pairing_kind_t kind, int n, uint64_t seed, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (n < 2 || n % 2) {
        snprintf(err, errlen, "pairing %s needs an even number of ranks, at least 2 (got %d)",
                 vs_pairing_name(kind), n);
        return -EINVAL;
    }
    p->kind = kind;
    p->n = n;
    p->rounds = kind == VS_PAIRING_FIXED ? 1 : n - 1;
    if (kind == VS_PAIRING_FIXED)
        return 0;
    p->rank_of_slot = malloc((size_t)n * sizeof *p->rank_of_slot);
    p->slot_of_rank = malloc((size_t)n * sizeof *p->slot_of_rank);
    p->round_order = malloc((size_t)(n - 1) * sizeof *p->round_order);
    if (!p->rank_of_slot || !p->slot_of_rank || !p->round_order) {
        vs_pairing_free(p);
        snprintf(err, errlen, "out of memory for the schedule of %d ranks", n);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++)
        p->rank_of_slot[i] = i;
    for (int k = 0; k < n - 1; k++)
        p->round_order[k] = k;
    if (seed) {
        uint64_t state = vs_prng_seed(seed);
        shuffle(p->rank_of_slot, n, &state);
        shuffle(p->round_order, n - 1, &state);
    }
    for (int i = 0; i < n; i++)
        p->slot_of_rank[p->rank_of_slot[i]] = i;
    return 0;
}

/* The circle method: slot n-1 stays; in turn t slot t meets slot n-1 and slot x
 * meets slot (2t - x) mod (n - 1), which pairs the rest symmetrically about t. */
static int circle_partner(int n, int turn, int slot)
{
    int m = n - 1;
    if (slot == m)
        return turn;
    if (slot == turn)
        return m;
    return ((2 * turn - slot) % m + m) % m;
}

int vs_pairing_partner(const vs_pairing_t *p, int round, int rank)
{
    if (p->kind == VS_PAIRING_FIXED)
        return (rank + p->n / 2) % p->n;
    int turn = p->round_order[round];
    return p->rank_of_slot[circle_partner(p->n, turn, p->slot_of_rank[rank])];
}

void vs_pairing_free(vs_pairing_t *p)
{
    free(p->rank_of_slot);
    free(p->slot_of_rank);
    free(p->round_order);
    p->rank_of_slot = p->slot_of_rank = p->round_order = NULL;
}

int vs_pairing_parse(const char *name)
{
    if (strcmp(name, "fixed") == 0)
        return VS_PAIRING_FIXED;
    if (strcmp(name, "round-robin") == 0)
        return VS_PAIRING_ROUND_ROBIN;
    return -1;
}

const char *vs_pairing_name(vs_pairing_kind_t kind)
{
    return kind == VS_PAIRING_FIXED ? "fixed" : "round-robin";
}
