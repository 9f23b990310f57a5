/* versus — bootstrap interface.
 *
 * A bootstrap is the out-of-band control channel between the ranks of one
 * run: who am I, how many are we, wait for everybody, swap some bytes.  It is
 * never used inside a timed loop.  Implementations: MPI (provided by the MPI
 * transport modules), launcher environment + TCP rendezvous, and in-process
 * threads for unit tests.
 *
 * All functions return 0 or a negative errno.
 */
#ifndef VERSUS_BOOTSTRAP_H
#define VERSUS_BOOTSTRAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_bootstrap vs_bootstrap_t;

struct vs_bootstrap {
    const char *name;   /* "mpi", "tcp", "threads", ... (recorded as the launcher's bootstrap) */
    int rank;           /* 0 .. size-1 */
    int size;
    void *ctx;          /* owned by the implementation */

    /* Block until every rank has called barrier(). */
    int (*barrier)(vs_bootstrap_t *bs);

    /* All-gather: every rank contributes len bytes from mine; on return
     * all[r*len .. r*len+len) holds rank r's contribution, on every rank. */
    int (*exchange)(vs_bootstrap_t *bs, const void *mine, void *all, size_t len);

    /* Release resources.  May be NULL. */
    void (*close)(vs_bootstrap_t *bs);

    /* Gather to rank 0: as exchange, but only rank 0's all is written (the
     * others may pass NULL), so a run of N ranks moves N blocks, not N * N.
     * May be NULL: core then uses exchange. */
    int (*gather)(vs_bootstrap_t *bs, const void *mine, void *all, size_t len);
};

#ifdef __cplusplus
}
#endif

#endif
