/* One-sided plumbing: expose, exchange over the bootstrap, attach, release.
 * Nothing here is timed; the patterns' loops are in pattern_rma.c. */
#include "rma.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "pattern.h"

/* What each rank hands the others for one buffer. */
typedef struct rma_blob {
    int32_t status;  /* 0, or the negative errno of this rank's allocation or rma_expose */
    uint32_t len;    /* bytes of data used */
    unsigned char data[VS_RMA_BLOB_BYTES];
} rma_blob_t;

/* 0 when every rank's status is 0; else this rank's own error, or, naming the
 * first other rank that failed, -ENOTSUP when that rank found the operation
 * unsupported (so that every rank exits 77, not only the one that asked), else
 * -ECANCELED. */
int vs_rma_agree(vs_run_t *r, int32_t mine, const char *what)
{
    int32_t *all = calloc((size_t)r->size, sizeof *all);
    if (!all)
        return vs_run_fail(r, -ENOMEM, "cannot allocate the one-sided exchange");
    int rc = r->bs->exchange(r->bs, &mine, all, sizeof mine);
    if (rc)
        rc = vs_run_fail(r, rc, "bootstrap exchange of one-sided buffers failed");
    else if (mine)
        rc = mine;
    for (int k = 0; k < r->size && !rc; k++)
        if (all[k] == -ENOTSUP)
            rc = vs_run_fail(r, -ENOTSUP, "rank %d cannot %s here (its own message says why)", k, what);
        else if (all[k])
            rc = vs_run_fail(r, -ECANCELED, "rank %d could not %s", k, what);
    free(all);
    return rc;
}

int vs_rma_buffers(vs_run_t *r, vs_rma_buf_t *b, int n, size_t len)
{
    const vs_transport_ops_t *ops = r->ops;
    memset(b, 0, (size_t)n * sizeof *b);
    rma_blob_t *mine = calloc(1, sizeof *mine), *all = calloc((size_t)r->size, sizeof *all);
    int rc = mine && all ? 0 : vs_run_fail(r, -ENOMEM, "cannot allocate the one-sided exchange");
    for (int i = 0; i < n && !rc; i++) {
        memset(mine, 0, sizeof *mine);
        size_t used = VS_RMA_BLOB_BYTES;
        int st = vs_mem_alloc(ops, r->t, &b[i].mem, len);
        if (st)
            vs_run_fail(r, st, "cannot allocate and register a %zu-byte buffer", len);
        /* every rank has its buffer before any exposes it: a library whose exposure is
         * collective (an MPI window) would wait for ever for a rank that has none */
        if ((rc = vs_rma_agree(r, st > 0 ? -st : st, "allocate and register a one-sided buffer")))
            break;
        if ((mine->status = ops->rma_expose(r->t, &b[i].mem, mine->data, &used)))
            vs_run_fail(r, mine->status, "cannot expose a %zu-byte buffer to the other ranks (rma_expose)", len);
        else if (used > VS_RMA_BLOB_BYTES)
            mine->status = vs_run_fail(r, -EOVERFLOW, "rma_expose used %zu bytes of a %d-byte blob", used,
                                       VS_RMA_BLOB_BYTES);
        if (mine->status > 0)
            mine->status = -mine->status;
        mine->len = mine->status ? 0 : (uint32_t)used;
        /* every rank exchanges, failed or not, so that none waits alone */
        if ((rc = r->bs->exchange(r->bs, mine, all, sizeof *mine))) {
            rc = vs_run_fail(r, rc, "bootstrap exchange of one-sided buffers failed");
            break;
        }
        int32_t status = mine->status;
        for (int k = 0; k < r->size && !status; k++)
            if (all[k].status)
                status = -ECANCELED;
        if (!status && r->peer >= 0) {
            const rma_blob_t *theirs = &all[r->peer];
            if ((status = ops->rma_attach(r->t, r->peer, theirs->data, theirs->len, &b[i].peer)))
                vs_run_fail(r, status, "cannot attach rank %d's %zu-byte buffer (rma_attach)", r->peer, len);
            else
                b[i].attached = 1;
            if (status > 0)
                status = -status;
        }
        rc = vs_rma_agree(r, mine->status ? mine->status : status == -ECANCELED ? 0 : status,
                   "expose or attach a one-sided buffer");
    }
    free(mine);
    free(all);
    return rc;
}

void vs_rma_buffers_free(vs_run_t *r, vs_rma_buf_t *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (b[i].attached && r->ops->rma_release)
            r->ops->rma_release(r->t, &b[i].peer);
        b[i].attached = 0;
        vs_run_buffer_free(r, &b[i].mem);
    }
}
