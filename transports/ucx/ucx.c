/* versus — UCX transport: UCP tag matching and one-sided operations over
 * whatever UCX selects.
 *
 * One context (features TAG, and RMA and AMO64 when UCX takes them), one
 * single-threaded worker, one endpoint per peer created from worker
 * addresses swapped through the bootstrap.  Sends and receives are
 * ucp_tag_send_nbx / ucp_tag_recv_nbx; a UCX tag is the core's tag shifted
 * left by VS_UCX_RANK_BITS with the sender's rank in the low bits, matched
 * with a full mask, so a receive only ever matches its own peer.  UCX reads
 * UCX_TLS, UCX_NET_DEVICES, UCX_RNDV_THRESH, ... from the environment itself
 * (ucp_config_read).
 *
 * One-sided (interface 5): rma_expose maps the buffer (ucp_mem_map, kept in
 * the module's list until mem_dereg or close) and packs its address, length
 * and remote key; rma_attach unpacks the key on the endpoint to that peer.
 * put/get/atomic are ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx; the
 * origin's END of an access is ucp_ep_flush_nbx to that peer.  Where UCX has
 * no transport that reaches the peer's memory it emulates the operations
 * with active messages, which the target's worker must progress.
 *
 * Requests: UCX's own request objects (its memory pool, so no allocation
 * once warm) are kept by pointer in the core-owned vs_req_t; an operation
 * that completes inside the post call is marked done there.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <versus/info.h>
#include <versus/transport.h>

#include "vs_ucx_config.h"

#define VS_UCX_RANK_BITS 24
#define VS_UCX_RANK_MASK ((UINT64_C(1) << VS_UCX_RANK_BITS) - 1)
#define VS_UCX_TAG_MAX (UINT64_MAX >> VS_UCX_RANK_BITS)
#define VS_UCX_CONNECT_TIMEOUT_S 60.0
#define VS_UCX_CLOSE_TIMEOUT_S 2.0

/* A buffer UCX has mapped: one rma_expose mapped (ucp_mem_map of memory
 * the module did not allocate), unmapped by mem_dereg or close; or, with
 * memory=ucx, one mem_alloc had UCX allocate (owned), unmapped by mem_free. */
typedef struct vs_ucx_map {
    void *addr;
    size_t len;
    ucp_mem_h memh;
    int owned;
    struct vs_ucx_map *next;
} vs_ucx_map_t;

struct vs_transport {
    const vs_host_t *host;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h *eps;          /* by rank; NULL for self */
    int rank;
    int size;
    ucp_err_handling_mode_t err_mode;
    const char *opt_err_mode;   /* err_mode= as written, or its default, for the record */
    int rma;                /* the context has UCP_FEATURE_RMA and UCP_FEATURE_AMO64 */
    char rma_refused[160];  /* why not, when it has not */
    vs_ucx_map_t *maps;     /* buffers exposed or allocated */
    int ucx_memory;         /* memory=ucx: buffers from ucp_mem_map(UCP_MEM_MAP_ALLOCATE) */
    const char *opt_memory; /* memory= as written, or its default, for the record */
};

enum vs_ucx_kind { VS_UCX_SEND, VS_UCX_RECV, VS_UCX_PUT, VS_UCX_GET, VS_UCX_AMO };
static const char *const vs_ucx_kind_name[] = {"send", "receive", "put", "get", "atomic"};

/* What a request slot holds.  ucp is NULL when the operation finished in the
 * post call; status then holds its outcome. */
typedef struct vs_ucx_req {
    void *ucp;
    int kind;           /* enum vs_ucx_kind */
    int status;         /* 0 or negative errno once complete */
    uint64_t operand;   /* an atomic's operand: UCX reads it until the operation completes */
    ucp_tag_recv_info_t info; /* filled by UCX on immediate receive completion */
} vs_ucx_req_t;

_Static_assert(sizeof(vs_ucx_req_t) <= VS_REQ_BYTES, "vs_ucx_req_t fits in vs_req_t");

static int vs_ucx_errno(ucs_status_t st)
{
    switch (st) {
    case UCS_OK: return 0;
    case UCS_ERR_NO_MEMORY: return -ENOMEM;
    case UCS_ERR_INVALID_PARAM: return -EINVAL;
    case UCS_ERR_TIMED_OUT: return -ETIMEDOUT;
    case UCS_ERR_ENDPOINT_TIMEOUT: return -ETIMEDOUT;
    case UCS_ERR_MESSAGE_TRUNCATED: return -EMSGSIZE;
    case UCS_ERR_CANCELED: return -ECANCELED;
    case UCS_ERR_CONNECTION_RESET: return -ECONNRESET;
    case UCS_ERR_REJECTED: return -ECONNREFUSED;
    case UCS_ERR_NO_DEVICE: return -ENODEV;
    case UCS_ERR_UNREACHABLE: return -ENOTSUP;
    case UCS_ERR_UNSUPPORTED: return -ENOTSUP;
    case UCS_ERR_NO_ELEM: return -ENOTSUP;
    case UCS_ERR_NO_RESOURCE: return -EAGAIN;
    case UCS_ERR_BUSY: return -EBUSY;
    default: return -EIO;
    }
}

static int vs_ucx_fail(vs_transport_t *t, const char *what, ucs_status_t st)
{
    t->host->error(t->host->core, "%s: %s", what, ucs_status_string(st));
    return vs_ucx_errno(st);
}

static double vs_ucx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int vs_ucx_library_version(char *buf, size_t len)
{
    if (len == 0)
        return -EINVAL;
    snprintf(buf, len, "%s", ucp_get_version_string());
    return 0;
}

enum { VS_UCX_OPT_ERR_MODE, VS_UCX_OPT_MEMORY, VS_UCX_N_OPTS };

static const vs_option_t vs_ucx_options[VS_UCX_N_OPTS] = {
    /* none (0), peer (1) */
    [VS_UCX_OPT_ERR_MODE] = {"err_mode", VS_OPT_CHOICE, "none|peer", 0, "none",
                             "UCP error handling: peer reports a failed peer (may cost latency on some transports)"},
    /* core (0), ucx (1) */
    [VS_UCX_OPT_MEMORY] = {"memory", VS_OPT_CHOICE, "core|ucx", 0, "core",
                           "who allocates the buffers: core (page-aligned host memory) or UCX (ucp_mem_map with "
                           "UCP_MEM_MAP_ALLOCATE, which its shared-memory transports reach directly)"},
};

static int vs_ucx_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    /* parsed by core against vs_ucx_options: "none" when not given */
    t->err_mode = opts[VS_UCX_OPT_ERR_MODE].choice ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    t->opt_err_mode = opts[VS_UCX_OPT_ERR_MODE].text;
    t->ucx_memory = opts[VS_UCX_OPT_MEMORY].choice == 1;
    t->opt_memory = opts[VS_UCX_OPT_MEMORY].text;

    int rc;
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        rc = vs_ucx_fail(t, "ucp_config_read", st);
        goto free_ctx;
    }
    /* The one-sided features too, so that the same context serves both kinds of
     * pattern; a UCX that refuses them still measures tag matching, and the
     * one-sided operations then say why they cannot run. */
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO64,
        .mt_workers_shared = 0,
    };
    st = ucp_init(&params, config, &t->context);
    t->rma = st == UCS_OK;
    if (st != UCS_OK) {
        snprintf(t->rma_refused, sizeof t->rma_refused,
                 "ucp_init with the RMA and AMO64 features failed (%s)", ucs_status_string(st));
        host->debug(host->core, "%s; tag matching only", t->rma_refused);
        params.features = UCP_FEATURE_TAG;
        st = ucp_init(&params, config, &t->context);
    }
    ucp_config_release(config);
    if (st != UCS_OK) {
        rc = vs_ucx_fail(t, "ucp_init", st);
        goto free_ctx;
    }

    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE,
    };
    st = ucp_worker_create(t->context, &wparams, &t->worker);
    if (st != UCS_OK) {
        rc = vs_ucx_fail(t, "ucp_worker_create", st);
        goto cleanup_context;
    }
    *out = t;
    return 0;

cleanup_context:
    ucp_cleanup(t->context);
free_ctx:
    free(t);
    return rc;
}

/* Drive an operation request of connect/close to completion or deadline.
 * Returns 0, a negative errno, or -ETIMEDOUT (request then still owned by UCX). */
static int vs_ucx_request_drive(vs_transport_t *t, void *req, double timeout_s)
{
    if (req == NULL)
        return 0;
    if (UCS_PTR_IS_ERR(req))
        return vs_ucx_errno(UCS_PTR_STATUS(req));
    double deadline = vs_ucx_now() + timeout_s;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        ucp_worker_progress(t->worker);
        if (vs_ucx_now() > deadline) {
            ucp_request_free(req);
            return -ETIMEDOUT;
        }
    }
    ucp_request_free(req);
    return vs_ucx_errno(st);
}

static void vs_ucx_eps_close(vs_transport_t *t)
{
    if (!t->eps)
        return;
    double deadline = vs_ucx_now() + VS_UCX_CLOSE_TIMEOUT_S;
    for (int r = 0; r < t->size; r++) {
        if (!t->eps[r])
            continue;
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            /* a forced close needs peer error handling on both sides */
            .flags = t->err_mode == UCP_ERR_HANDLING_MODE_PEER ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        };
        void *req = ucp_ep_close_nbx(t->eps[r], &prm);
        double left = deadline - vs_ucx_now();
        int rc = vs_ucx_request_drive(t, req, left > 0 ? left : 0);
        if (rc)
            t->host->debug(t->host->core, "closing the endpoint to rank %d: %s", r, strerror(-rc));
        t->eps[r] = NULL;
    }
    free(t->eps);
    t->eps = NULL;
}

static void vs_ucx_close(vs_transport_t *t)
{
    if (!t)
        return;
    vs_ucx_eps_close(t);
    for (vs_ucx_map_t *m = t->maps, *next; m; m = next) {
        next = m->next;
        ucp_mem_unmap(t->context, m->memh);
        free(m);
    }
    t->maps = NULL;
    ucp_worker_destroy(t->worker);
    ucp_cleanup(t->context);
    free(t);
}

static int vs_ucx_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    if (bs->size < 1 || (uint64_t)bs->size > VS_UCX_RANK_MASK + 1) {
        t->host->error(t->host->core, "%d ranks do not fit in %d tag bits", bs->size,
                       VS_UCX_RANK_BITS);
        return -EINVAL;
    }
    t->rank = bs->rank;
    t->size = bs->size;

    ucp_address_t *addr;
    size_t addr_len;
    ucs_status_t st = ucp_worker_get_address(t->worker, &addr, &addr_len);
    if (st != UCS_OK)
        return vs_ucx_fail(t, "ucp_worker_get_address", st);

    /* Addresses differ in length: swap the lengths first, then fixed slots
     * of the longest one. */
    int rc;
    uint64_t *lens = calloc((size_t)t->size, sizeof *lens);
    unsigned char *slots = NULL, *mine = NULL;
    if (!lens) {
        rc = -ENOMEM;
        goto release_address;
    }
    uint64_t my_len = addr_len;
    rc = bs->exchange(bs, &my_len, lens, sizeof my_len);
    if (rc) {
        t->host->error(t->host->core, "exchanging worker address lengths: %s", strerror(-rc));
        goto free_lens;
    }
    uint64_t slot = 0;
    for (int r = 0; r < t->size; r++)
        slot = lens[r] > slot ? lens[r] : slot;
    if (slot == 0 || slot > (1u << 20)) {
        t->host->error(t->host->core, "implausible worker address length %llu",
                       (unsigned long long)slot);
        rc = -EPROTO;
        goto free_lens;
    }
    mine = calloc(1, slot);
    slots = calloc((size_t)t->size, slot);
    if (!mine || !slots) {
        rc = -ENOMEM;
        goto free_slots;
    }
    memcpy(mine, addr, addr_len);
    rc = bs->exchange(bs, mine, slots, slot);
    if (rc) {
        t->host->error(t->host->core, "exchanging worker addresses: %s", strerror(-rc));
        goto free_slots;
    }

    t->eps = calloc((size_t)t->size, sizeof *t->eps);
    if (!t->eps) {
        rc = -ENOMEM;
        goto free_slots;
    }
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank)
            continue;
        ucp_ep_params_t ep_params = {
            .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
            .address = (const ucp_address_t *)(slots + (size_t)r * slot),
            .err_mode = t->err_mode,
        };
        st = ucp_ep_create(t->worker, &ep_params, &t->eps[r]);
        if (st != UCS_OK) {
            t->eps[r] = NULL;
            char what[64];
            snprintf(what, sizeof what, "ucp_ep_create to rank %d", r);
            rc = vs_ucx_fail(t, what, st);
            goto close_eps;
        }
    }

    /* Finish wire-up before anything is timed: flushing the worker waits for
     * the endpoints to be connected both ways, and needs the peers to
     * progress, which they do in this same call. */
    ucp_request_param_t prm = {.op_attr_mask = 0};
    rc = vs_ucx_request_drive(t, ucp_worker_flush_nbx(t->worker, &prm), VS_UCX_CONNECT_TIMEOUT_S);
    if (rc) {
        t->host->error(t->host->core, "flushing the worker after connecting: %s%s", strerror(-rc),
                       rc == -ETIMEDOUT ? " (a peer did not answer)" : "");
        goto close_eps;
    }
    rc = bs->barrier(bs);
    if (rc) {
        t->host->error(t->host->core, "barrier after connecting: %s", strerror(-rc));
        goto close_eps;
    }
    free(slots);
    free(mine);
    free(lens);
    ucp_worker_release_address(t->worker, addr);
    return 0;

close_eps:
    vs_ucx_eps_close(t);
free_slots:
    free(slots);
    free(mine);
free_lens:
    free(lens);
release_address:
    ucp_worker_release_address(t->worker, addr);
    return rc;
}

/* ---- timed path ---------------------------------------------------------- */

static inline int vs_ucx_peer_ok(const vs_transport_t *t, int peer, uint64_t tag)
{
    return peer >= 0 && peer < t->size && t->eps[peer] != NULL && tag <= VS_UCX_TAG_MAX;
}

static int vs_ucx_bad_args(vs_transport_t *t, int peer, uint64_t tag)
{
    t->host->error(t->host->core, "invalid peer %d or tag %llu (tags up to %llu)", peer,
                   (unsigned long long)tag, (unsigned long long)VS_UCX_TAG_MAX);
    return -EINVAL;
}

static int vs_ucx_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer,
                            uint64_t tag, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (__builtin_expect(!vs_ucx_peer_ok(t, peer, tag), 0))
        return vs_ucx_bad_args(t, peer, tag);
    ucp_request_param_t prm = {.op_attr_mask = 0};
    void *s = ucp_tag_send_nbx(t->eps[peer], mem->addr, len,
                               (tag << VS_UCX_RANK_BITS) | (uint64_t)t->rank, &prm);
    r->kind = VS_UCX_SEND;
    if (__builtin_expect(UCS_PTR_IS_PTR(s), 1)) {
        r->ucp = s;
        return 0;
    }
    r->ucp = NULL;
    r->status = vs_ucx_errno(UCS_PTR_STATUS(s));
    if (r->status)
        return vs_ucx_fail(t, "ucp_tag_send_nbx", UCS_PTR_STATUS(s));
    return 0;
}

static int vs_ucx_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer,
                            uint64_t tag, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (__builtin_expect(!vs_ucx_peer_ok(t, peer, tag), 0))
        return vs_ucx_bad_args(t, peer, tag);
    r->kind = VS_UCX_RECV;
    /* UCX releases without the fix for openucx/ucx#9425 (1.13 among them) leave
     * tag_info untouched on immediate completion: preset it so an unfilled
     * length never reads as stack garbage. */
    r->info.length = len;
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO,
        .recv_info.tag_info = &r->info,
    };
    void *s = ucp_tag_recv_nbx(t->worker, mem->addr, len,
                               (tag << VS_UCX_RANK_BITS) | (uint64_t)peer, UINT64_MAX, &prm);
    if (__builtin_expect(UCS_PTR_IS_PTR(s), 1)) {
        r->ucp = s;
        return 0;
    }
    r->ucp = NULL;
    ucs_status_t st = UCS_PTR_STATUS(s);
    if (st != UCS_OK)
        return r->status = vs_ucx_fail(t, "ucp_tag_recv_nbx", st);
    r->status = 0; /* a message shorter than len completes it (longer ones are truncation errors) */
    return r->status;
}

/* Collect a finished request: 1 when complete (r->status set), 0 when not. */
static inline int vs_ucx_req_collect(vs_transport_t *t, vs_ucx_req_t *r)
{
    ucs_status_t st;
    if (r->kind == VS_UCX_RECV) {
        st = ucp_tag_recv_request_test(r->ucp, &r->info);
        if (st == UCS_INPROGRESS)
            return 0;
        r->status = st == UCS_OK ? 0 : vs_ucx_fail(t, "receive", st);
    } else {
        st = ucp_request_check_status(r->ucp);
        if (st == UCS_INPROGRESS)
            return 0;
        r->status = st == UCS_OK ? 0 : vs_ucx_fail(t, vs_ucx_kind_name[r->kind], st);
    }
    ucp_request_free(r->ucp);
    r->ucp = NULL;
    return 1;
}

static int vs_ucx_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (r->ucp == NULL) {
        *done = 1;
        return r->status;
    }
    ucp_worker_progress(t->worker);
    *done = vs_ucx_req_collect(t, r);
    return *done ? r->status : 0;
}

static int vs_ucx_wait(vs_transport_t *t, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (r->ucp == NULL)
        return r->status;
    while (!vs_ucx_req_collect(t, r))
        ucp_worker_progress(t->worker);
    return r->status;
}

static int vs_ucx_progress(vs_transport_t *t)
{
    ucp_worker_progress(t->worker);
    return 0;
}

/* ---- one-sided (interface 5) ---------------------------------------------- */

/* The blob rma_expose packs: this header, then the packed remote key. */
#define VS_UCX_BLOB_MAGIC 0x76735543u /* "vsUC" */
typedef struct vs_ucx_blob {
    uint64_t addr;
    uint64_t len;
    uint32_t magic;
    uint32_t rkey_len;
} vs_ucx_blob_t;

_Static_assert(sizeof(vs_ucx_blob_t) < VS_RMA_BLOB_BYTES, "the blob header leaves room for a key");

static int vs_ucx_rma_refuse(vs_transport_t *t)
{
    t->host->error(t->host->core, "no one-sided operations: %s", t->rma_refused);
    return -ENOTSUP;
}

static int vs_ucx_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (!t->rma)
        return vs_ucx_rma_refuse(t);
    if (!mem->addr || !mem->len) {
        t->host->error(t->host->core, "rma_expose: an empty buffer");
        return -EINVAL;
    }
    vs_ucx_map_t *m = t->maps;
    while (m && !(m->addr == mem->addr && m->len == mem->len))
        m = m->next;
    if (!m) {
        m = calloc(1, sizeof *m);
        if (!m)
            return -ENOMEM;
        ucp_mem_map_params_t mp = {
            .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
            .address = mem->addr,
            .length = mem->len,
        };
        ucs_status_t st = ucp_mem_map(t->context, &mp, &m->memh);
        if (st != UCS_OK) {
            free(m);
            return vs_ucx_fail(t, "ucp_mem_map of an exposed buffer", st);
        }
        m->addr = mem->addr;
        m->len = mem->len;
        m->next = t->maps;
        t->maps = m;
    }
    void *rkey;
    size_t rkey_len;
    ucs_status_t st = ucp_rkey_pack(t->context, m->memh, &rkey, &rkey_len);
    if (st != UCS_OK)
        return vs_ucx_fail(t, "ucp_rkey_pack", st);
    int rc = 0;
    if (sizeof(vs_ucx_blob_t) + rkey_len > *len) {
        t->host->error(t->host->core,
                       "UCX's remote key is %zu B: with its %zu B header more than the %zu B core carries",
                       rkey_len, sizeof(vs_ucx_blob_t), *len);
        rc = -ENOTSUP;
    } else {
        vs_ucx_blob_t h = {(uint64_t)(uintptr_t)mem->addr, mem->len, VS_UCX_BLOB_MAGIC, (uint32_t)rkey_len};
        memcpy(blob, &h, sizeof h);
        memcpy((unsigned char *)blob + sizeof h, rkey, rkey_len);
        *len = sizeof h + rkey_len;
    }
    ucp_rkey_buffer_release(rkey);
    return rc;
}

static int vs_ucx_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out)
{
    if (!t->rma)
        return vs_ucx_rma_refuse(t);
    if (peer < 0 || peer >= t->size || !t->eps || !t->eps[peer]) {
        t->host->error(t->host->core, "rma_attach: no endpoint to rank %d", peer);
        return -EINVAL;
    }
    vs_ucx_blob_t h;
    if (len < sizeof h) {
        t->host->error(t->host->core, "rma_attach: a %zu B blob from rank %d is shorter than its header",
                       len, peer);
        return -EPROTO;
    }
    memcpy(&h, blob, sizeof h);
    if (h.magic != VS_UCX_BLOB_MAGIC || sizeof h + h.rkey_len > len) {
        t->host->error(t->host->core, "rma_attach: the blob from rank %d is not one rma_expose packed", peer);
        return -EPROTO;
    }
    ucp_rkey_h rkey;
    ucs_status_t st = ucp_ep_rkey_unpack(t->eps[peer], (const unsigned char *)blob + sizeof h, &rkey);
    if (st != UCS_OK) {
        char what[64];
        snprintf(what, sizeof what, "ucp_ep_rkey_unpack of rank %d's key", peer);
        return vs_ucx_fail(t, what, st);
    }
    out->addr = h.addr;
    out->len = (size_t)h.len;
    out->handle = rkey;
    return 0;
}

static void vs_ucx_rma_release(vs_transport_t *t, vs_rmem_t *remote)
{
    (void)t;
    if (remote && remote->handle)
        ucp_rkey_destroy((ucp_rkey_h)remote->handle);
    if (remote)
        remote->handle = NULL;
}

/* Unmap what rma_expose mapped for this buffer (nothing when it was not
 * exposed, or when UCX allocated it: mem_free unmaps that). */
static int vs_ucx_mem_dereg(vs_transport_t *t, vs_mem_t *mem)
{
    for (vs_ucx_map_t **p = &t->maps; *p; p = &(*p)->next) {
        vs_ucx_map_t *m = *p;
        if (m->addr != mem->addr || m->owned)
            continue;
        *p = m->next;
        ucs_status_t st = ucp_mem_unmap(t->context, m->memh);
        free(m);
        return st == UCS_OK ? 0 : vs_ucx_fail(t, "ucp_mem_unmap", st);
    }
    return 0;
}

/* The buffers.  memory=core: what core itself would allocate (page-aligned,
 * every page touched); rma_expose maps it for UCX when a one-sided pattern
 * exposes it.  memory=ucx: ucp_mem_map(UCP_MEM_MAP_ALLOCATE), as ucx_perftest
 * allocates its buffers, so that UCX's shared-memory transports (sysv, posix)
 * reach them with loads and stores; every page touched here too, by this
 * rank, before anything is timed.  Either way host memory that core reads and
 * writes by address (no mem_fill or mem_compare). */
static int vs_ucx_mem_alloc(vs_transport_t *t, size_t len, vs_mem_t *mem)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (len > SIZE_MAX - page)
        return -ENOMEM;
    len = (len + page - 1) / page * page;
    if (!t->ucx_memory) {
        if (posix_memalign(&mem->addr, page, len))
            return -ENOMEM;
        memset(mem->addr, 0xa5, len);
        mem->len = len;
        return 0;
    }
    vs_ucx_map_t *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = NULL,
        .length = len,
        .flags = UCP_MEM_MAP_ALLOCATE,
    };
    ucs_status_t st = ucp_mem_map(t->context, &mp, &m->memh);
    if (st != UCS_OK) {
        free(m);
        return vs_ucx_fail(t, "ucp_mem_map(UCP_MEM_MAP_ALLOCATE)", st);
    }
    ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH};
    st = ucp_mem_query(m->memh, &attr);
    if (st != UCS_OK || !attr.address || attr.length < len) {
        ucp_mem_unmap(t->context, m->memh);
        free(m);
        return st != UCS_OK ? vs_ucx_fail(t, "ucp_mem_query", st) : -EPROTO;
    }
    memset(attr.address, 0xa5, attr.length);
    m->addr = mem->addr = attr.address;
    m->len = mem->len = attr.length;
    m->owned = 1;
    m->next = t->maps;
    t->maps = m;
    return 0;
}

static void vs_ucx_mem_free(vs_transport_t *t, vs_mem_t *mem)
{
    for (vs_ucx_map_t **p = &t->maps; *p; p = &(*p)->next) {
        vs_ucx_map_t *m = *p;
        if (m->addr != mem->addr || !m->owned)
            continue;
        *p = m->next;
        ucs_status_t st = ucp_mem_unmap(t->context, m->memh);
        if (st != UCS_OK)
            t->host->debug(t->host->core, "ucp_mem_unmap of an allocated buffer: %s", ucs_status_string(st));
        free(m);
        return;
    }
    free(mem->addr);
}

static int vs_ucx_rma_bad_args(vs_transport_t *t, const char *op, int peer, size_t off, size_t len,
                               size_t cap)
{
    t->host->error(t->host->core, "%s: invalid peer %d, or %zu B at offset %zu past a %zu B buffer", op, peer,
                   len, off, cap);
    return -EINVAL;
}

static inline int vs_ucx_rma_fits(const vs_transport_t *t, int peer, size_t off, size_t len, size_t cap)
{
    return peer >= 0 && peer < t->size && t->eps[peer] != NULL && off <= cap && len <= cap - off;
}

/* Keep what a one-sided post returned in the request slot. */
static inline int vs_ucx_rma_posted(vs_transport_t *t, vs_ucx_req_t *r, int kind, ucs_status_ptr_t s,
                                    const char *what)
{
    r->kind = kind;
    if (__builtin_expect(UCS_PTR_IS_PTR(s), 1)) {
        r->ucp = s;
        return 0;
    }
    r->ucp = NULL;
    r->status = 0;
    if (UCS_PTR_STATUS(s) != UCS_OK)
        r->status = vs_ucx_fail(t, what, UCS_PTR_STATUS(s));
    return r->status;
}

static int vs_ucx_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer,
                      const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (__builtin_expect(!vs_ucx_rma_fits(t, peer, roff, len, remote->len), 0))
        return vs_ucx_rma_bad_args(t, "put", peer, roff, len, remote->len);
    if (__builtin_expect(loff > local->len || len > local->len - loff, 0))
        return vs_ucx_rma_bad_args(t, "put (local)", peer, loff, len, local->len);
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t s = ucp_put_nbx(t->eps[peer], (const char *)local->addr + loff, len, remote->addr + roff,
                                     (ucp_rkey_h)remote->handle, &prm);
    return vs_ucx_rma_posted(t, r, VS_UCX_PUT, s, "ucp_put_nbx");
}

static int vs_ucx_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer,
                      const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (__builtin_expect(!vs_ucx_rma_fits(t, peer, roff, len, remote->len), 0))
        return vs_ucx_rma_bad_args(t, "get", peer, roff, len, remote->len);
    if (__builtin_expect(loff > local->len || len > local->len - loff, 0))
        return vs_ucx_rma_bad_args(t, "get (local)", peer, loff, len, local->len);
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t s = ucp_get_nbx(t->eps[peer], (char *)local->addr + loff, len, remote->addr + roff,
                                     (ucp_rkey_h)remote->handle, &prm);
    return vs_ucx_rma_posted(t, r, VS_UCX_GET, s, "ucp_get_nbx");
}

/* UCX's compare-and-swap takes the compare value in the operand buffer and the
 * value to write in the reply buffer, which then receives the old word. */
static int vs_ucx_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result,
                         int peer, const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ucx_req_t *r = (vs_ucx_req_t *)req->opaque;
    if (__builtin_expect(!vs_ucx_rma_fits(t, peer, roff, 8, remote->len) || ((remote->addr + roff) & 7), 0))
        return vs_ucx_rma_bad_args(t, "atomic (an aligned 8 B word)", peer, roff, 8, remote->len);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | (result ? UCP_OP_ATTR_FIELD_REPLY_BUFFER : 0),
        .datatype = ucp_dt_make_contig(8),
        .reply_buffer = result,
    };
    ucp_atomic_op_t uop;
    if (op == VS_AMO_FADD) {
        uop = UCP_ATOMIC_OP_ADD;
        r->operand = operand;
    } else if (op == VS_AMO_CSWAP && result) {
        uop = UCP_ATOMIC_OP_CSWAP;
        r->operand = compare;
        *result = operand;
    } else {
        t->host->error(t->host->core, "atomic: operation %d%s is not one of fetch-and-add, compare-and-swap", op,
                       op == VS_AMO_CSWAP ? " without a result word" : "");
        return -EINVAL;
    }
    ucs_status_ptr_t s = ucp_atomic_op_nbx(t->eps[peer], uop, &r->operand, 1, remote->addr + roff,
                                           (ucp_rkey_h)remote->handle, &prm);
    return vs_ucx_rma_posted(t, r, VS_UCX_AMO, s, "ucp_atomic_op_nbx");
}

/* Passive target: the origin's END is a flush of its endpoint to the peer
 * (every put and atomic it issued there is complete at the peer); the rest
 * has nothing to do. */
static int vs_ucx_rma_epoch(vs_transport_t *t, int peer, int role, int phase)
{
    if (peer < 0 || peer >= t->size || !t->eps || !t->eps[peer] ||
        (role != VS_RMA_ORIGIN && role != VS_RMA_TARGET) || (phase != VS_RMA_BEGIN && phase != VS_RMA_END)) {
        t->host->error(t->host->core, "rma_epoch: invalid peer %d, role %d or phase %d", peer, role, phase);
        return -EINVAL;
    }
    if (role != VS_RMA_ORIGIN || phase != VS_RMA_END)
        return 0;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t s = ucp_ep_flush_nbx(t->eps[peer], &prm);
    if (s == NULL)
        return 0;
    if (UCS_PTR_IS_ERR(s))
        return vs_ucx_fail(t, "ucp_ep_flush_nbx", UCS_PTR_STATUS(s));
    ucs_status_t st;
    while ((st = ucp_request_check_status(s)) == UCS_INPROGRESS)
        ucp_worker_progress(t->worker);
    ucp_request_free(s);
    return st == UCS_OK ? 0 : vs_ucx_fail(t, "flushing the endpoint", st);
}

/* ---- query ----------------------------------------------------------------- */

/* Append s to a comma-separated list unless it is already there. */
static void vs_ucx_list_add(char *list, size_t cap, const char *s)
{
    size_t n = strlen(s);
    for (const char *p = list; (p = strstr(p, s)) != NULL; p += n) {
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return;
    }
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%s%s", used ? ", " : "", s);
}

/* Lines of ucp_ep_print_info look like
 *   "#  lane[0]:  3:sysv/memory.0 md[2]  -> md[2]/sysv/sysdev[255] am am_bw#0"
 *   "#  tag_send: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf)"
 * where each number is the first size of the protocol that follows it. */
static void vs_ucx_parse_lane(char *line, char *provider, size_t pcap, char *lanes, size_t lcap,
                              char *am_tl, size_t acap)
{
    char *colon = strstr(line, "]:");
    if (!colon)
        return;
    char *p = colon + 2;
    while (*p == ' ')
        p++;
    char *tl = strchr(p, ':'); /* skip "<resource index>:" */
    if (!tl)
        return;
    tl++;
    size_t n = strcspn(tl, " \n");
    char res[128];
    snprintf(res, sizeof res, "%.*s", (int)n, tl);
    /* "sysv/memory.0" -> "sysv/memory" (the ".0" is the path index) */
    char *dot = strrchr(res, '.');
    char *slash = strchr(res, '/');
    if (dot && slash && dot > slash)
        *dot = '\0';
    vs_ucx_list_add(provider, pcap, res);

    /* usage: the words after "-> md[x]/tl/sysdev[y]" */
    char *arrow = strstr(tl, "-> ");
    char usage[160] = "";
    if (arrow) {
        char *u = strchr(arrow + 3, ' ');
        if (u) {
            while (*u == ' ')
                u++;
            snprintf(usage, sizeof usage, "%.*s", (int)strcspn(u, "\n"), u);
        }
    }
    size_t used = strlen(lanes);
    snprintf(lanes + used, lcap - used, "%s%s%s%s", used ? "; " : "", res, usage[0] ? " " : "",
             usage);
    /* the lane that carries active messages (eager): its transport, "sysv" of "sysv/memory" */
    if (!am_tl[0] && strncmp(usage, "am", 2) == 0 && (usage[2] == ' ' || usage[2] == '\0'))
        snprintf(am_tl, acap, "%.*s", (int)strcspn(res, "/"), res);
}

static void vs_ucx_parse_protos(const char *spec, vs_transport_info_t *info)
{
    /* spec: 0..<egr/short>..93..<egr/bcopy>..8256..<rndv>..(inf) */
    const char *p = spec;
    while ((p = strstr(p, "..")) != NULL) {
        p += 2;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || strncmp(end, "..<", 3) != 0)
            continue;
        const char *proto = end + 3;
        size_t n = strcspn(proto, ">");
        if (n == 4 && strncmp(proto, "rndv", 4) == 0)
            vs_info_threshold(info, "rndv_thresh", v);
        else if (n == 9 && strncmp(proto, "egr/bcopy", 9) == 0)
            vs_info_threshold(info, "bcopy_thresh", v);
        else if (n == 9 && strncmp(proto, "egr/zcopy", 9) == 0)
            vs_info_threshold(info, "zcopy_thresh", v);
        p = end;
    }
}

static void vs_ucx_parse_ep_info(const char *text, vs_transport_info_t *info)
{
    char lanes[sizeof info->attrs[0].value] = "";
    char am_tl[32] = "";
    char *copy = strdup(text);
    if (!copy)
        return;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *body = line + strspn(line, "# ");
        if (strncmp(body, "lane[", 5) == 0) {
            vs_ucx_parse_lane(body, info->provider, sizeof info->provider, lanes, sizeof lanes, am_tl,
                              sizeof am_tl);
        } else if (strncmp(body, "tag_send:", 9) == 0) {
            const char *spec = body + 9 + strspn(body + 9, " ");
            vs_info_attr(info, "tag_send", "%s", spec);
            vs_ucx_parse_protos(spec, info);
        } else if (strncmp(body, "tag_send_nbr:", 13) == 0) {
            vs_info_attr(info, "tag_send_nbr", "%s", body + 13 + strspn(body + 13, " "));
        }
    }
    free(copy);
    if (lanes[0])
        vs_info_attr(info, "lanes", "%s", lanes);
    /* "sysv/memory", "cma/memory": a shared-memory device; "tcp/lo": loopback */
    snprintf(info->medium, sizeof info->medium, "%s",
             strstr(info->provider, "/memory") ? VS_MEDIUM_SHM
             : !info->provider[0]              ? ""
             : strstr(info->provider, "/lo") && !strchr(info->provider, ',') ? VS_MEDIUM_LOOPBACK
                                                                              : VS_MEDIUM_NETWORK);
    if (am_tl[0]) {
        /* eager messages above the segment size go in several fragments */
        char name[48];
        snprintf(name, sizeof name, "%s_seg_size", am_tl);
        vs_ucx_seg_size_threshold(info, am_tl, name);
    }
}

static int vs_ucx_query(vs_transport_t *t, vs_transport_info_t *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "ucx");
    snprintf(info->library, sizeof info->library, "UCX");
    vs_ucx_library_version(info->version, sizeof info->version);

    vs_ucx_config_attrs(info, "");     /* UCX's settings in force, defaults included */
    vs_ucx_print_t pr;
    int rc;

    /* Effective rendezvous threshold: from the endpoint to the first peer
     * (auto-tuned values differ from the configured "auto"). */
    vs_info_threshold(info, "rndv_thresh", -1);
    int peer = -1;
    for (int r = 0; t->eps && r < t->size && peer < 0; r++)
        if (t->eps[r])
            peer = r;
    if (peer >= 0) {
        rc = vs_ucx_print_begin(&pr);
        if (rc)
            return rc;
        ucp_ep_print_info(t->eps[peer], pr.f);
        vs_ucx_parse_ep_info(vs_ucx_print_text(&pr), info);
        vs_ucx_print_end(&pr);
    }
    vs_info_attr(info, "err_mode", "%s", t->opt_err_mode);
    vs_info_attr(info, "memory", "%s", t->opt_memory);
    return 0;
}

static const char *const vs_ucx_ops_env[] = {"UCX_", NULL}; /* recorded with every run */

static const vs_transport_ops_t vs_ucx_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "ucx",
    .summary = "UCX UCP tag matching, put/get/atomics (transports chosen by UCX; UCX_TLS, UCX_NET_DEVICES honoured)",
    .library_version = vs_ucx_library_version,
    .open = vs_ucx_open,
    .close = vs_ucx_close,
    .bootstrap = NULL,
    .query = vs_ucx_query,
    .connect = vs_ucx_connect,
    .mem_reg = NULL,
    .mem_dereg = vs_ucx_mem_dereg, /* unmaps what rma_expose mapped */
    .post_send = vs_ucx_post_send,
    .post_recv = vs_ucx_post_recv,
    .test = vs_ucx_test,
    .wait = vs_ucx_wait,
    .progress = vs_ucx_progress,
    .send = NULL,
    .recv = NULL,
    .options = vs_ucx_options,
    .n_options = sizeof vs_ucx_options / sizeof vs_ucx_options[0],
    .env_prefixes = vs_ucx_ops_env,
    .rma_expose = vs_ucx_rma_expose,
    .rma_attach = vs_ucx_rma_attach,
    .rma_release = vs_ucx_rma_release,
    .put = vs_ucx_put,
    .get = vs_ucx_get,
    .atomic = vs_ucx_atomic,
    .rma_epoch = vs_ucx_rma_epoch,
    .rma_sync = NULL, /* progress drives the worker; nothing to make visible */
    .mem_alloc = vs_ucx_mem_alloc, /* memory=core|ucx; host memory either way */
    .mem_free = vs_ucx_mem_free,
};

VS_TRANSPORT_DEFINE(vs_ucx_ops)
