/* versus — libfabric transport.
 *
 * One reliable-datagram endpoint (FI_EP_RDM) per rank, an address vector
 * (FI_AV_TABLE) filled from the bootstrap all-gather, and one completion
 * queue for both directions, polled by the caller (no wait object).  Tagged
 * messages (FI_TAGGED) when the provider offers them, plain messages
 * (FI_MSG) otherwise; which one is used is recorded.
 *
 * A request is core's vs_req_t: its first bytes hold the fi_context2 handed
 * to the provider, so a completion's op_context is the request itself.
 *
 * Sends no longer than the provider's inject size go out with fi_(t)inject
 * (as fi_pingpong does): the buffer is reusable on return and the provider
 * raises no completion, so the request is complete as soon as it is posted.
 * `--transport-opt inject=off` measures the plain send path instead.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <versus/info.h>
#include <versus/transport.h>

#define VS_OFI_API FI_VERSION(1, 9)
#define VS_OFI_NAME_MAX 480   /* endpoint name bytes per bootstrap slot */
#define VS_OFI_CQ_BATCH 16    /* completions read per fi_cq_read */

/* One rank's contribution to the address all-gather: fixed size on every rank. */
typedef struct vs_ofi_slot {
    uint32_t len;
    uint32_t pad;
    unsigned char name[VS_OFI_NAME_MAX];
} vs_ofi_slot_t;

/* What lives inside core's vs_req_t. */
typedef struct vs_ofi_req {
    struct fi_context2 ctx; /* first: op_context of a completion points here */
    int done;
    int err;
} vs_ofi_req_t;

_Static_assert(sizeof(vs_ofi_req_t) <= VS_REQ_BYTES, "vs_ofi_req_t must fit in vs_req_t");
_Static_assert(offsetof(vs_ofi_req_t, ctx) == 0, "fi_context2 must start the request");

enum vs_ofi_api_choice { VS_OFI_API_AUTO, VS_OFI_API_TAGGED, VS_OFI_API_PLAIN };

struct vs_transport {
    const vs_host_t *host;
    /* options */
    const char *opt_provider; /* NULL: fi_getinfo's first usable answer */
    const char *opt_domain;
    const char *opt_fabric;
    int opt_inject;           /* 1: inject sends up to inject_size, 0: never */
    enum vs_ofi_api_choice opt_api;
    /* libfabric objects */
    struct fi_info *info;     /* the one entry selected (owned) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    /* derived */
    int tagged;
    int mr_local;
    int directed_recv;
    size_t inject_size;       /* what inject is used up to; 0 when off */
    uint64_t next_mr_key;
    fi_addr_t *peers;
    int n_peers;
};

/* Providers that fi_info lists here but that this module refuses, and why. */
typedef struct vs_ofi_refusal {
    const char *prov;
    const char *why;
} vs_ofi_refusal_t;

static const vs_ofi_refusal_t vs_ofi_refused[] = {
    {"sockets", "the sockets provider is deprecated upstream and takes milliseconds per "
                "message on this kind of host; use provider=tcp"},
};

/* Well-known provider names that this libfabric build may simply not contain. */
static const char *const vs_ofi_hw_providers[] = {
    "verbs", "psm", "psm2", "psm3", "opx", "efa", "cxi", "usnic", "gni", "bgq", "ucx", "lnx",
};

/* ---------------------------------------------------------------- errors */

/* libfabric error (positive or negative FI_E*) -> negative errno. */
static int vs_ofi_errno(long fi_err)
{
    long e = fi_err < 0 ? -fi_err : fi_err;
    if (e == 0)
        return 0;
    if (e < FI_ERRNO_OFFSET)
        return (int)-e; /* FI_E* below the offset are errno values */
    switch (e) {
    case FI_ETRUNC: return -EMSGSIZE;
    case FI_ETOOSMALL: return -ENOBUFS;
    case FI_EOVERRUN: return -EOVERFLOW;
    case FI_ENOCQ: case FI_ENOEQ: case FI_ENOAV: case FI_EDOMAIN: return -EINVAL;
    case FI_EBADFLAGS: return -EINVAL;
    case FI_EOPBADSTATE: return -EPROTO;
    default: return -EIO;
    }
}

static int vs_ofi_fail(const vs_transport_t *t, const char *call, long fi_err)
{
    t->host->error(t->host->core, "%s: %s", call, fi_strerror((int)(fi_err < 0 ? -fi_err : fi_err)));
    return vs_ofi_errno(fi_err);
}

/* ---------------------------------------------------------------- options */

enum {
    VS_OFI_OPT_PROVIDER, VS_OFI_OPT_DOMAIN, VS_OFI_OPT_IFACE, VS_OFI_OPT_FABRIC, VS_OFI_OPT_INJECT, VS_OFI_OPT_API,
    VS_OFI_N_OPTS
};
enum { VS_OFI_INJECT_AUTO, VS_OFI_INJECT_ON, VS_OFI_INJECT_OFF }; /* the order of inject's choices */

static const vs_option_t vs_ofi_options[VS_OFI_N_OPTS] = {
    [VS_OFI_OPT_PROVIDER] = {"provider", VS_OPT_TEXT, NULL, 0, "libfabric's first usable",
                             "provider, as fi_info names it (tcp;ofi_rxm, shm, ...)"},
    [VS_OFI_OPT_DOMAIN] = {"domain", VS_OPT_TEXT, NULL, 0, "any", "domain (for tcp and verbs: the interface)"},
    [VS_OFI_OPT_IFACE] = {"iface", VS_OPT_TEXT, NULL, 0, "any", "another name for domain"},
    [VS_OFI_OPT_FABRIC] = {"fabric", VS_OPT_TEXT, NULL, 0, "any", "fabric name"},
    [VS_OFI_OPT_INJECT] = {"inject", VS_OPT_CHOICE, "auto|on|off", 0, "auto",
                           "send small messages with fi_inject when the provider allows"},
    /* the choices in the order of enum vs_ofi_api_choice */
    [VS_OFI_OPT_API] = {"api", VS_OPT_CHOICE, "auto|tagged|msg", 0, "auto",
                        "tagged messages where offered, else plain messages"},
};

/* The values, parsed by core against vs_ofi_options (NULL text: not given). */
static int vs_ofi_take_opts(vs_transport_t *t, const vs_opt_value_t *o)
{
    if (o[VS_OFI_OPT_DOMAIN].text && o[VS_OFI_OPT_IFACE].text) {
        t->host->error(t->host->core, "iface= is another name for domain=: give one of them");
        return -EINVAL;
    }
    t->opt_provider = o[VS_OFI_OPT_PROVIDER].text;
    t->opt_domain = o[VS_OFI_OPT_DOMAIN].text ? o[VS_OFI_OPT_DOMAIN].text : o[VS_OFI_OPT_IFACE].text;
    t->opt_fabric = o[VS_OFI_OPT_FABRIC].text;
    t->opt_inject = o[VS_OFI_OPT_INJECT].choice != VS_OFI_INJECT_OFF;
    t->opt_api = (enum vs_ofi_api_choice)o[VS_OFI_OPT_API].choice;
    return 0;
}

/* ---------------------------------------------------------------- provider choice */

/* The refusal reason for a provider string such as "sockets" or
 * "tcp;ofi_rxm" (its core provider is the first component), or NULL. */
static const char *vs_ofi_refusal(const char *prov)
{
    size_t core_len = strcspn(prov, ";");
    for (size_t i = 0; i < sizeof(vs_ofi_refused) / sizeof(vs_ofi_refused[0]); i++) {
        if (strlen(vs_ofi_refused[i].prov) == core_len &&
            !strncmp(prov, vs_ofi_refused[i].prov, core_len))
            return vs_ofi_refused[i].why;
    }
    return NULL;
}

static struct fi_info *vs_ofi_hints(const vs_transport_t *t, uint64_t caps, int with_names)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->addr_format = FI_FORMAT_UNSPEC;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->av_type = FI_AV_TABLE;
    if (with_names) {
        if (t->opt_provider && !(h->fabric_attr->prov_name = strdup(t->opt_provider)))
            goto free_hints;
        if (t->opt_domain && !(h->domain_attr->name = strdup(t->opt_domain)))
            goto free_hints;
        if (t->opt_fabric && !(h->fabric_attr->name = strdup(t->opt_fabric)))
            goto free_hints;
    }
    return h;
free_hints:
    fi_freeinfo(h);
    return NULL;
}

/* Append to buf the distinct providers offering RDM endpoints here that this
 * module accepts ("tcp;ofi_rxm, shm, ..."). */
static void vs_ofi_usable_list(const vs_transport_t *t, char *buf, size_t len)
{
    struct fi_info *h = vs_ofi_hints(t, FI_MSG, 0), *list = NULL;
    size_t used = 0;
    buf[0] = '\0';
    if (!h)
        return;
    if (fi_getinfo(VS_OFI_API, NULL, NULL, 0, h, &list) == 0) {
        for (struct fi_info *i = list; i; i = i->next) {
            const char *p = i->fabric_attr->prov_name;
            if (!p || vs_ofi_refusal(p))
                continue;
            int seen = 0;
            for (struct fi_info *j = list; j != i; j = j->next)
                seen |= !strcmp(j->fabric_attr->prov_name, p);
            if (seen)
                continue;
            int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p);
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
        }
        fi_freeinfo(list);
    }
    fi_freeinfo(h);
    if (!used)
        snprintf(buf, len, "none");
}

/* Is `name` a provider this libfabric knows (loaded, or a well-known
 * hardware provider that this build may lack)? */
static int vs_ofi_name_known(const char *name)
{
    struct fi_info *list = NULL;
    size_t core_len = strcspn(name, ";");
    int known = 0;
    for (size_t i = 0; i < sizeof(vs_ofi_hw_providers) / sizeof(vs_ofi_hw_providers[0]); i++)
        known |= strlen(vs_ofi_hw_providers[i]) == core_len &&
                 !strncmp(name, vs_ofi_hw_providers[i], core_len);
    if (known)
        return 1;
    if (fi_getinfo(VS_OFI_API, NULL, NULL, FI_PROV_ATTR_ONLY, NULL, &list) != 0)
        return 0;
    for (struct fi_info *i = list; i && !known; i = i->next) {
        const char *p = i->fabric_attr->prov_name;
        known = p && strlen(p) == core_len && !strncmp(p, name, core_len);
    }
    fi_freeinfo(list);
    return known;
}

/* Pick the first entry fi_getinfo ranks for our hints that is not refused.
 * Sets t->info and t->tagged. */
static int vs_ofi_select(vs_transport_t *t)
{
    static const uint64_t caps_by_try[2] = {FI_TAGGED, FI_MSG};
    int first = t->opt_api == VS_OFI_API_PLAIN ? 1 : 0;
    int last = t->opt_api == VS_OFI_API_TAGGED ? 0 : 1;
    const char *refused_why = NULL;
    char refused_name[64] = "", offered[256] = "", usable[512];
    size_t offered_used = 0;
    int rc = -FI_ENODATA, matched = 0;

    if (t->opt_provider && (refused_why = vs_ofi_refusal(t->opt_provider)) != NULL) {
        vs_ofi_usable_list(t, usable, sizeof(usable));
        t->host->error(t->host->core, "provider '%s' refused: %s (usable here: %s)",
                       t->opt_provider, refused_why, usable);
        return -ENOTSUP;
    }
    for (int k = first; k <= last; k++) {
        struct fi_info *h = vs_ofi_hints(t, caps_by_try[k], 1), *list = NULL;
        if (!h)
            return -ENOMEM;
        rc = fi_getinfo(VS_OFI_API, NULL, NULL, 0, h, &list);
        fi_freeinfo(h);
        if (rc == -FI_ENODATA)
            continue;
        if (rc != 0)
            return vs_ofi_fail(t, "fi_getinfo", rc);
        for (struct fi_info *i = list; i; i = i->next) {
            /* Some utility providers (rxm) do not filter on these hints. */
            const char *dom = i->domain_attr->name ? i->domain_attr->name : "";
            const char *fab = i->fabric_attr->name ? i->fabric_attr->name : "";
            if ((t->opt_domain && strcmp(dom, t->opt_domain)) ||
                (t->opt_fabric && strcmp(fab, t->opt_fabric))) {
                char one[128];
                snprintf(one, sizeof(one), "domain=%s fabric=%s", dom, fab);
                if (!strstr(offered, one) && offered_used + strlen(one) + 3 < sizeof(offered))
                    offered_used += (size_t)snprintf(offered + offered_used, sizeof(offered) - offered_used,
                                                     "%s%s", offered_used ? ", " : "", one);
                continue;
            }
            matched = 1;
            const char *why = vs_ofi_refusal(i->fabric_attr->prov_name);
            if (why) {
                refused_why = why;
                snprintf(refused_name, sizeof(refused_name), "%s", i->fabric_attr->prov_name);
                continue;
            }
            t->info = fi_dupinfo(i);
            fi_freeinfo(list);
            if (!t->info)
                return -ENOMEM;
            t->tagged = caps_by_try[k] == FI_TAGGED;
            return 0;
        }
        fi_freeinfo(list);
    }

    vs_ofi_usable_list(t, usable, sizeof(usable));
    if (refused_why) {
        t->host->error(t->host->core, "provider '%s' refused: %s (usable here: %s)",
                       refused_name, refused_why, usable);
        return -ENOTSUP;
    }
    if (!matched && offered_used) {
        t->host->error(t->host->core, "provider '%s' offers no %s%s%s%s here (offered: %s)",
                       t->opt_provider ? t->opt_provider : "any",
                       t->opt_domain ? "domain " : "", t->opt_domain ? t->opt_domain : "",
                       t->opt_domain && t->opt_fabric ? " in fabric " : t->opt_fabric ? "fabric " : "",
                       t->opt_fabric ? t->opt_fabric : "", offered);
        return -EINVAL;
    }
    if (t->opt_provider && !vs_ofi_name_known(t->opt_provider)) {
        t->host->error(t->host->core, "unknown libfabric provider '%s' (usable here: %s)",
                       t->opt_provider, usable);
        return -EINVAL;
    }
    t->host->error(t->host->core,
                   "no reliable-datagram endpoint (FI_EP_RDM, %s) from provider '%s'%s%s%s%s "
                   "on this machine: fi_getinfo: %s (no such hardware, not in this build, or not a "
                   "standalone provider; "
                   "usable here: %s)",
                   t->opt_api == VS_OFI_API_PLAIN ? "FI_MSG"
                   : t->opt_api == VS_OFI_API_TAGGED ? "FI_TAGGED" : "FI_TAGGED or FI_MSG",
                   t->opt_provider ? t->opt_provider : "any",
                   t->opt_domain ? ", domain " : "", t->opt_domain ? t->opt_domain : "",
                   t->opt_fabric ? ", fabric " : "", t->opt_fabric ? t->opt_fabric : "",
                   fi_strerror(FI_ENODATA), usable);
    return -ENODEV;
}

/* ---------------------------------------------------------------- open / close */

static void vs_ofi_close(vs_transport_t *t)
{
    if (!t)
        return;
    if (t->ep)
        fi_close(&t->ep->fid);
    if (t->av)
        fi_close(&t->av->fid);
    if (t->cq)
        fi_close(&t->cq->fid);
    if (t->domain)
        fi_close(&t->domain->fid);
    if (t->fabric)
        fi_close(&t->fabric->fid);
    if (t->info)
        fi_freeinfo(t->info);
    free(t->peers);
    free(t);
}

static int vs_ofi_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof(*t));
    int rc;
    if (!t)
        return -ENOMEM;
    t->host = host;
    rc = vs_ofi_take_opts(t, opts);
    if (rc)
        goto close_transport;
    rc = vs_ofi_select(t);
    if (rc)
        goto close_transport;

    struct fi_info *fi = t->info;
    t->mr_local = (fi->domain_attr->mr_mode & FI_MR_LOCAL) || (fi->mode & FI_LOCAL_MR);
    t->directed_recv = (fi->caps & FI_DIRECTED_RECV) != 0;
    t->inject_size = t->opt_inject ? fi->tx_attr->inject_size : 0;
    t->next_mr_key = 1;

    rc = fi_fabric(fi->fabric_attr, &t->fabric, NULL);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_fabric", rc);
        goto close_transport;
    }
    rc = fi_domain(t->fabric, fi, &t->domain, NULL);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_domain", rc);
        goto close_transport;
    }
    struct fi_cq_attr cq_attr = {
        .format = t->tagged ? FI_CQ_FORMAT_TAGGED : FI_CQ_FORMAT_CONTEXT,
        .wait_obj = FI_WAIT_NONE,
    };
    rc = fi_cq_open(t->domain, &cq_attr, &t->cq, NULL);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_cq_open", rc);
        goto close_transport;
    }
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    rc = fi_av_open(t->domain, &av_attr, &t->av, NULL);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_av_open", rc);
        goto close_transport;
    }
    rc = fi_endpoint(t->domain, fi, &t->ep, NULL);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_endpoint", rc);
        goto close_transport;
    }
    rc = fi_ep_bind(t->ep, &t->av->fid, 0);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_ep_bind(av)", rc);
        goto close_transport;
    }
    rc = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_ep_bind(cq)", rc);
        goto close_transport;
    }
    rc = fi_enable(t->ep);
    if (rc) {
        rc = vs_ofi_fail(t, "fi_enable", rc);
        goto close_transport;
    }
    host->debug(host->core, "ofi: provider %s, fabric %s, domain %s, %s, inject <= %zu, mr_local %d",
                fi->fabric_attr->prov_name, fi->fabric_attr->name, fi->domain_attr->name,
                t->tagged ? "tagged" : "plain messages", t->inject_size, t->mr_local);
    *out = t;
    return 0;

close_transport:
    vs_ofi_close(t);
    return rc;
}

/* ---------------------------------------------------------------- connect */

static int vs_ofi_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    vs_ofi_slot_t mine;
    vs_ofi_slot_t *all;
    size_t len = sizeof(mine.name);
    int rc;

    memset(&mine, 0, sizeof(mine));
    rc = fi_getname(&t->ep->fid, mine.name, &len);
    if (rc == -FI_ETOOSMALL) {
        t->host->error(t->host->core, "fi_getname: endpoint name of %zu bytes exceeds the %d-byte slot",
                       len, VS_OFI_NAME_MAX);
        return -ENOBUFS;
    }
    if (rc)
        return vs_ofi_fail(t, "fi_getname", rc);
    mine.len = (uint32_t)len;

    all = calloc((size_t)bs->size, sizeof(*all));
    t->peers = calloc((size_t)bs->size, sizeof(*t->peers));
    if (!all || !t->peers) {
        rc = -ENOMEM;
        goto free_slots;
    }
    rc = bs->exchange(bs, &mine, all, sizeof(mine));
    if (rc) {
        t->host->error(t->host->core, "bootstrap exchange of endpoint names failed: %s", strerror(-rc));
        goto free_slots;
    }
    for (int r = 0; r < bs->size; r++) {
        if (all[r].len == 0 || all[r].len > VS_OFI_NAME_MAX) {
            t->host->error(t->host->core, "rank %d sent a malformed endpoint name (%u bytes)", r,
                           all[r].len);
            rc = -EPROTO;
            goto free_slots;
        }
        int n = fi_av_insert(t->av, all[r].name, 1, &t->peers[r], 0, NULL);
        if (n != 1) {
            rc = n < 0 ? vs_ofi_fail(t, "fi_av_insert", n) : -EINVAL;
            if (n >= 0)
                t->host->error(t->host->core, "fi_av_insert: address of rank %d was not inserted", r);
            goto free_slots;
        }
    }
    t->n_peers = bs->size;
    rc = 0;
free_slots:
    free(all);
    return rc;
}

/* ---------------------------------------------------------------- completions */

/* Read the completion queue once and mark the requests it names done. */
static int vs_ofi_progress(vs_transport_t *t)
{
    struct fi_cq_tagged_entry entries[VS_OFI_CQ_BATCH];
    ssize_t n = fi_cq_read(t->cq, entries, VS_OFI_CQ_BATCH);
    if (n > 0) {
        if (t->tagged) {
            for (ssize_t i = 0; i < n; i++)
                ((vs_ofi_req_t *)entries[i].op_context)->done = 1;
        } else {
            const struct fi_cq_entry *e = (const struct fi_cq_entry *)entries;
            for (ssize_t i = 0; i < n; i++)
                ((vs_ofi_req_t *)e[i].op_context)->done = 1;
        }
        return 0;
    }
    if (n == -FI_EAGAIN)
        return 0;
    if (n != -FI_EAVAIL)
        return vs_ofi_fail(t, "fi_cq_read", n);

    struct fi_cq_err_entry err;
    char buf[256];
    memset(&err, 0, sizeof(err));
    n = fi_cq_readerr(t->cq, &err, 0);
    if (n < 0)
        return vs_ofi_fail(t, "fi_cq_readerr", n);
    const char *msg = fi_cq_strerror(t->cq, err.prov_errno, err.err_data, buf, sizeof(buf));
    t->host->error(t->host->core, "completion error (%s%s): %s; provider: %s",
                   err.flags & FI_RECV ? "receive" : "send",
                   err.err == FI_ETRUNC ? ", message longer than the posted receive" : "",
                   fi_strerror(err.err), msg ? msg : "no detail");
    if (!err.op_context)
        return vs_ofi_errno(err.err ? err.err : FI_EIO);
    vs_ofi_req_t *r = err.op_context;
    r->err = vs_ofi_errno(err.err ? err.err : FI_EIO);
    r->done = 1;
    return 0;
}

static int vs_ofi_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    if (!r->done) {
        int rc = vs_ofi_progress(t);
        if (rc)
            return rc;
    }
    *done = r->done;
    return r->done ? r->err : 0;
}

static int vs_ofi_wait(vs_transport_t *t, vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    while (!r->done) {
        int rc = vs_ofi_progress(t);
        if (rc)
            return rc;
    }
    return r->err;
}

/* ---------------------------------------------------------------- data path */

/* Post with `call`, driving the completion queue while the provider answers
 * -FI_EAGAIN (its queues are full); a progress error ends the post. */
#define VS_OFI_POST(t, rc, call)                  \
    do {                                          \
        while (((rc) = (call)) == -FI_EAGAIN) {   \
            int prc_ = vs_ofi_progress(t);        \
            if (prc_)                             \
                return prc_;                      \
        }                                         \
    } while (0)

/* A provider that needs FI_MR_LOCAL gets only registered buffers. */
static int vs_ofi_check_registered(const vs_transport_t *t, const vs_mem_t *mem, const char *what)
{
    if (!t->mr_local || mem->desc)
        return 0;
    t->host->error(t->host->core, "provider needs registered memory (FI_MR_LOCAL) but the %s buffer "
                   "was not registered", what);
    return -EINVAL;
}

static inline void *vs_ofi_desc(const vs_mem_t *mem)
{
    return mem->desc ? fi_mr_desc((struct fid_mr *)mem->desc) : NULL;
}

static int vs_ofi_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer,
                            uint64_t tag, vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    fi_addr_t dest;
    ssize_t rc;

    if (peer < 0 || peer >= t->n_peers)
        return -EINVAL;
    dest = t->peers[peer];
    r->done = 0;
    r->err = 0;
    if (len <= t->inject_size) {
        VS_OFI_POST(t, rc, t->tagged ? fi_tinject(t->ep, mem->addr, len, dest, tag)
                                     : fi_inject(t->ep, mem->addr, len, dest));
        if (rc)
            return vs_ofi_fail(t, t->tagged ? "fi_tinject" : "fi_inject", rc);
        r->done = 1; /* no completion follows an inject */
        return 0;
    }
    if ((rc = vs_ofi_check_registered(t, mem, "send")))
        return (int)rc;
    VS_OFI_POST(t, rc, t->tagged ? fi_tsend(t->ep, mem->addr, len, vs_ofi_desc(mem), dest, tag, &r->ctx)
                                 : fi_send(t->ep, mem->addr, len, vs_ofi_desc(mem), dest, &r->ctx));
    if (rc)
        return vs_ofi_fail(t, t->tagged ? "fi_tsend" : "fi_send", rc);
    return 0;
}

static int vs_ofi_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                            vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    fi_addr_t src;
    ssize_t rc;

    if (peer < 0 || peer >= t->n_peers)
        return -EINVAL;
    if ((rc = vs_ofi_check_registered(t, mem, "receive")))
        return (int)rc;
    src = t->directed_recv ? t->peers[peer] : FI_ADDR_UNSPEC;
    r->done = 0;
    r->err = 0;
    VS_OFI_POST(t, rc, t->tagged ? fi_trecv(t->ep, mem->addr, len, vs_ofi_desc(mem), src, tag, 0, &r->ctx)
                                 : fi_recv(t->ep, mem->addr, len, vs_ofi_desc(mem), src, &r->ctx));
    if (rc)
        return vs_ofi_fail(t, t->tagged ? "fi_trecv" : "fi_recv", rc);
    return 0;
}

/* ---------------------------------------------------------------- registration */

static int vs_ofi_mem_reg(vs_transport_t *t, vs_mem_t *mem)
{
    struct fid_mr *mr = NULL;
    int rc;
    if (!t->mr_local)
        return 0;
    rc = fi_mr_reg(t->domain, mem->addr, mem->len, FI_SEND | FI_RECV, 0, t->next_mr_key++, 0, &mr,
                   NULL);
    if (rc)
        return vs_ofi_fail(t, "fi_mr_reg", rc);
    mem->desc = mr;
    return 0;
}

static int vs_ofi_mem_dereg(vs_transport_t *t, vs_mem_t *mem)
{
    int rc;
    if (!mem->desc)
        return 0;
    rc = fi_close(&((struct fid_mr *)mem->desc)->fid);
    mem->desc = NULL;
    return rc ? vs_ofi_fail(t, "fi_close(mr)", rc) : 0;
}

/* ---------------------------------------------------------------- query */


/* A size from the environment, or dflt when unset; -1 when unparsable. */
static int64_t vs_ofi_env_size(const char *name, int64_t dflt, int *from_env)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v) {
        return dflt;
    }
    *from_env = 1;
    unsigned long long x = strtoull(v, &end, 0);
    return (*end || x > INT64_MAX) ? -1 : (int64_t)x;
}

static int vs_ofi_library_version(char *buf, size_t len)
{
    uint32_t v = fi_version();
    snprintf(buf, len, "%u.%u (built against %d.%d.%d)", FI_MAJOR(v), FI_MINOR(v),
             FI_MAJOR_VERSION, FI_MINOR_VERSION, FI_REVISION_VERSION);
    return 0;
}

static int vs_ofi_query(vs_transport_t *t, vs_transport_info_t *info)
{
    const struct fi_info *fi = t->info;
    const char *prov = fi->fabric_attr->prov_name;
    uint32_t pv = fi->fabric_attr->prov_version;
    char lib[128];
    int from_env = 0;

    memset(info, 0, sizeof(*info));
    snprintf(info->name, sizeof(info->name), "ofi");
    snprintf(info->library, sizeof(info->library), "libfabric");
    vs_ofi_library_version(lib, sizeof(lib));
    snprintf(info->version, sizeof(info->version), "%s; provider %s %u.%u", lib, prov, FI_MAJOR(pv),
             FI_MINOR(pv));
    snprintf(info->provider, sizeof(info->provider), "%s", prov);
    const char *dom = fi->domain_attr && fi->domain_attr->name ? fi->domain_attr->name : "";
    snprintf(info->medium, sizeof(info->medium), "%s",
             strncmp(prov, "shm", 3) == 0                        ? VS_MEDIUM_SHM
             : strcmp(dom, "lo") == 0                            ? VS_MEDIUM_LOOPBACK
             : strstr(prov, "tcp") || strstr(prov, "udp") || strstr(prov, "verbs") ? VS_MEDIUM_NETWORK
                                                                 : "");

    vs_info_threshold(info, "inject_size", (int64_t)fi->tx_attr->inject_size);
    if (fi->ep_attr->max_msg_size < (size_t)INT64_MAX)
        vs_info_threshold(info, "max_msg_size", (int64_t)fi->ep_attr->max_msg_size);
    if (strstr(prov, "ofi_rxm")) {
        /* rxm: buffer size is its inject/eager bounce buffer; messages up to
         * eager_limit go eagerly, up to sar_limit segmented, beyond by rendezvous. */
        int64_t buf = vs_ofi_env_size("FI_OFI_RXM_BUFFER_SIZE", 16384, &from_env);
        vs_info_threshold(info, "rxm_buffer_size", buf);
        vs_info_threshold(info, "eager_limit", vs_ofi_env_size("FI_OFI_RXM_EAGER_LIMIT", buf, &from_env));
        vs_info_threshold(info, "sar_limit", vs_ofi_env_size("FI_OFI_RXM_SAR_LIMIT", 131072, &from_env));
    } else if (!strncmp(prov, "shm", 3)) {
        /* shm: up to its inject size data is copied through the shared
         * region; above it, single copy through CMA (or segmented copies). */
        vs_info_threshold(info, "eager_limit", (int64_t)fi->tx_attr->inject_size);
        vs_info_attr(info, "large_messages", "%s",
                    getenv("FI_SHM_DISABLE_CMA") ? "FI_SHM_DISABLE_CMA set: segmented copies"
                                                 : "CMA single copy when the kernel allows it");
        if (getenv("FI_SHM_SAR_THRESHOLD"))
            vs_info_threshold(info, "sar_threshold",
                             vs_ofi_env_size("FI_SHM_SAR_THRESHOLD", -1, &from_env));
    }
    if (!strncmp(prov, "tcp", 3)) {
        /* tcp: a message that does not fit the receive prefetch buffer (with its
         * header) is read from the socket in a second call: a step of ~1 us on
         * loopback just below it.  9000 is the default of libfabric 1.17's tcp
         * provider; FI_TCP_PREFETCH_RBUF_SIZE=5000 moves the step to 4750-5000 B. */
        int64_t rbuf = vs_ofi_env_size("FI_TCP_PREFETCH_RBUF_SIZE", 9000, &from_env);
        if (rbuf > 0)
            vs_info_threshold(info, "prefetch_rbuf_size", rbuf);
    }
    if (!strncmp(prov, "tcp", 3) && getenv("FI_TCP_ZEROCOPY_SIZE"))
        vs_info_threshold(info, "zerocopy_size", vs_ofi_env_size("FI_TCP_ZEROCOPY_SIZE", -1, &from_env));
    if (from_env)
        vs_info_attr(info, "thresholds_from", "environment (FI_* variables) where set, else provider defaults");

    vs_info_attr(info, "fabric", "%s", fi->fabric_attr->name ? fi->fabric_attr->name : "");
    vs_info_attr(info, "domain", "%s", fi->domain_attr->name ? fi->domain_attr->name : "");
    vs_info_attr(info, "endpoint", "FI_EP_RDM");
    vs_info_attr(info, "messages", "%s", t->tagged ? "tagged" : "plain");
    if (t->inject_size)
        vs_info_attr(info, "inject", "sends of <= %zu bytes use fi_%sinject", t->inject_size,
                    t->tagged ? "t" : "");
    else
        vs_info_attr(info, "inject", "off");
    vs_info_attr(info, "mr_local", "%s", t->mr_local ? "yes" : "no");
    vs_info_attr(info, "progress", "data %s, control %s",
                fi_tostr(&fi->domain_attr->data_progress, FI_TYPE_PROGRESS),
                fi_tostr(&fi->domain_attr->control_progress, FI_TYPE_PROGRESS));
    vs_info_attr(info, "completion", "one CQ (%s), polled, no wait object",
                t->tagged ? "FI_CQ_FORMAT_TAGGED" : "FI_CQ_FORMAT_CONTEXT");
    return 0;
}

/* For `versus-run --list`: which providers can be used here. */
static int vs_ofi_describe(char *buf, size_t len)
{
    vs_transport_t none;
    char usable[512];
    memset(&none, 0, sizeof none);
    vs_ofi_usable_list(&none, usable, sizeof usable);
    snprintf(buf, len, "providers usable here (--transport-opt provider=NAME): %s", usable);
    return 0;
}

static const char *const vs_ofi_ops_env[] = {"FI_", NULL}; /* recorded with every run */

static const vs_transport_ops_t vs_ofi_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "ofi",
    .summary = "libfabric reliable-datagram endpoints (tagged where offered), polled CQ",
    .library_version = vs_ofi_library_version,
    .open = vs_ofi_open,
    .close = vs_ofi_close,
    .bootstrap = NULL,
    .query = vs_ofi_query,
    .connect = vs_ofi_connect,
    .mem_reg = vs_ofi_mem_reg,
    .mem_dereg = vs_ofi_mem_dereg,
    .post_send = vs_ofi_post_send,
    .post_recv = vs_ofi_post_recv,
    .test = vs_ofi_test,
    .wait = vs_ofi_wait,
    .progress = vs_ofi_progress,
    .send = NULL,
    .recv = NULL,
    .describe = vs_ofi_describe,
    .options = vs_ofi_options,
    .n_options = sizeof vs_ofi_options / sizeof vs_ofi_options[0],
    .env_prefixes = vs_ofi_ops_env,
};

VS_TRANSPORT_DEFINE(vs_ofi_ops)
