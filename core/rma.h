/* One-sided plumbing (transport interface 5): buffers each rank exposes to its
 * partner, for the one-sided patterns (pattern_rma.c). */
#ifndef VS_RMA_H
#define VS_RMA_H

#include <stddef.h>

#include <versus/transport.h>

struct vs_run;

/* A buffer of this rank, allocated and registered as the two-sided patterns'
 * are, exposed (rma_expose), and the partner's buffer of the same place in
 * the order, attached (rma_attach). */
typedef struct vs_rma_buf {
    vs_mem_t mem;
    vs_rmem_t peer;
    int attached;
} vs_rma_buf_t;

/* Collective over every rank, the same n in the same order on all: allocate
 * and register n buffers of len bytes, expose each, carry the blobs to every
 * rank over the bootstrap (an all-gather), attach the partner's.  A rank
 * without a partner exposes too (a library may expose collectively) and
 * attaches nothing.  When any rank fails, every rank returns an error. */
int vs_rma_buffers(struct vs_run *r, vs_rma_buf_t *b, int n, size_t len);
/* Collective: every rank gives its status (0 or a negative errno) and gets 0
 * when all are 0; else its own error, or an error naming the first rank that
 * failed (-ENOTSUP when that rank's was, so that every rank exits 77). */
int vs_rma_agree(struct vs_run *r, int mine, const char *what);
/* Release what was attached, then deregister and free (also after a failed
 * vs_rma_buffers). */
void vs_rma_buffers_free(struct vs_run *r, vs_rma_buf_t *b, int n);

#endif
