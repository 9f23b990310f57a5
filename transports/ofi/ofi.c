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
 *
 * One-sided (interface 5): the provider chosen for messages is asked again
 * for FI_RMA and FI_ATOMIC (then FI_RMA alone); only an answer from that same
 * provider, domain and fabric is taken, so asking never changes what the
 * two-sided patterns measure.  Where it has none, the one-sided operations
 * return -ENOTSUP with fi_getinfo's answer.  rma_expose registers the buffer
 * for remote access (fi_mr_reg, honouring FI_MR_PROV_KEY, FI_MR_VIRT_ADDR,
 * FI_MR_ENDPOINT and FI_MR_RAW) and packs base address, length and key;
 * put is fi_writemsg with FI_DELIVERY_COMPLETE, so that its completion means
 * the bytes are in the target's memory; get is fi_read; the atomics are
 * fi_fetch_atomic (FI_SUM) and fi_compare_atomic (FI_CSWAP) on FI_UINT64.
 * All complete through the one CQ; the origin's END of an access waits
 * until every operation it issued to that peer has completed.
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
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <versus/info.h>
#include <versus/transport.h>

#define VS_OFI_API FI_VERSION(1, 9)
#define VS_OFI_NAME_MAX 480   /* endpoint name bytes per bootstrap slot */
#define VS_OFI_CQ_BATCH 16    /* completions read per fi_cq_read */
#define VS_OFI_AMO_SLOTS 256  /* atomics' operand and result words, reused in turn */
#define VS_OFI_BLOB_MAGIC 0x76734f46u /* "vsOF" */

/* One rank's contribution to the address all-gather: fixed size on every rank. */
typedef struct vs_ofi_slot {
    uint32_t len;
    uint32_t pad;
    unsigned char name[VS_OFI_NAME_MAX];
} vs_ofi_slot_t;

/* An atomic's words: the provider reads and writes them until it completes
 * (registered once where the provider wants local registration). */
typedef struct vs_ofi_amo {
    uint64_t operand, compare, result;
} vs_ofi_amo_t;

/* What lives inside core's vs_req_t. */
typedef struct vs_ofi_req {
    struct fi_context2 ctx; /* first: op_context of a completion points here */
    int done;
    int err;
    int rma_peer;           /* a one-sided operation to this rank, counted until complete; -1: none */
    const char *what;       /* put, get, atomic: for a completion error */
    vs_ofi_amo_t *amo;      /* an atomic's words, and where its old word goes */
    uint64_t *result;
} vs_ofi_req_t;

/* A buffer rma_expose registered for remote access, until mem_dereg or close. */
typedef struct vs_ofi_xmr {
    struct vs_ofi_xmr *next;
    void *addr;
    size_t len;
    struct fid_mr *mr;
} vs_ofi_xmr_t;

/* The blob rma_expose packs: this header, then a raw key of raw_len bytes (FI_MR_RAW). */
typedef struct vs_ofi_blob {
    uint32_t magic;
    uint32_t raw_len;
    uint64_t base;   /* the buffer's address (FI_MR_VIRT_ADDR), else 0: offsets count from its start */
    uint64_t len;
    uint64_t key;    /* the MR key, when not raw */
    uint64_t vaddr;  /* the buffer's address, for fi_mr_map_raw */
} vs_ofi_blob_t;

_Static_assert(sizeof(vs_ofi_blob_t) < VS_RMA_BLOB_BYTES, "the blob header leaves room for a raw key");

/* What rma_attach keeps for a peer's buffer (vs_rmem_t.handle). */
typedef struct vs_ofi_rkey {
    uint64_t key;
    int mapped;      /* fi_mr_map_raw made the key: fi_mr_unmap_key at release */
} vs_ofi_rkey_t;

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
    int opt_rma;              /* 0: rma=off, messages only */
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
    /* one-sided */
    int rma;                  /* the endpoint has FI_RMA (and the read/write caps) */
    int atomics;              /* and FI_ATOMIC with FI_SUM and FI_CSWAP on FI_UINT64 */
    char rma_refused[320];    /* why not, when it has not */
    char atomics_refused[320];
    uint64_t mr_mode;         /* the domain's FI_MR_* bits */
    vs_ofi_xmr_t *xmrs;
    long *rma_out;            /* per peer: one-sided operations posted, not yet complete */
    vs_ofi_amo_t *amo;        /* VS_OFI_AMO_SLOTS words, used in turn */
    struct fid_mr *amo_mr;    /* their registration, where FI_MR_LOCAL */
    unsigned amo_next;
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
    VS_OFI_OPT_RMA, VS_OFI_N_OPTS
};
enum { VS_OFI_INJECT_AUTO, VS_OFI_INJECT_ON, VS_OFI_INJECT_OFF }; /* the order of inject's choices */
enum { VS_OFI_RMA_AUTO, VS_OFI_RMA_OFF };                         /* the order of rma's choices */

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
    [VS_OFI_OPT_RMA] = {"rma", VS_OPT_CHOICE, "auto|off", 0, "auto",
                        "ask the provider for FI_RMA and FI_ATOMIC too (off: messages only)"},
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
    t->opt_rma = o[VS_OFI_OPT_RMA].choice != VS_OFI_RMA_OFF;
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

/* Ask the provider chosen for messages (same provider, domain and fabric)
 * for the one-sided capabilities too: with FI_ATOMIC, then without.  An
 * answer replaces t->info (the same provider, more capabilities); none
 * leaves it as it is and says why in t->rma_refused. */
#define VS_OFI_RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
static int vs_ofi_select_rma(vs_transport_t *t)
{
    const struct fi_info *two = t->info;
    const char *prov = two->fabric_attr->prov_name;
    const uint64_t base = t->tagged ? FI_TAGGED : FI_MSG;
    const uint64_t tries[2] = {base | VS_OFI_RMA_CAPS | FI_ATOMIC, base | VS_OFI_RMA_CAPS};
    char answer[2][160];
    if (!t->opt_rma) {
        snprintf(t->rma_refused, sizeof t->rma_refused, "provider %s not asked for them (--transport-opt rma=off)",
                 prov);
        snprintf(t->atomics_refused, sizeof t->atomics_refused, "%s", t->rma_refused);
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        struct fi_info *h = vs_ofi_hints(t, tries[k], 0), *list = NULL;
        if (!h)
            return -ENOMEM;
        /* the modes this module honours for remote keys, on top of the two-sided ones */
        h->domain_attr->mr_mode |= FI_MR_ENDPOINT | FI_MR_RAW;
        if (!(h->fabric_attr->prov_name = strdup(prov)) ||
            (two->domain_attr->name && !(h->domain_attr->name = strdup(two->domain_attr->name))) ||
            (two->fabric_attr->name && !(h->fabric_attr->name = strdup(two->fabric_attr->name)))) {
            fi_freeinfo(h);
            return -ENOMEM;
        }
        int rc = fi_getinfo(VS_OFI_API, NULL, NULL, 0, h, &list);
        fi_freeinfo(h);
        snprintf(answer[k], sizeof answer[k], "fi_getinfo: %s", fi_strerror(rc < 0 ? -rc : rc));
        for (struct fi_info *i = rc ? NULL : list; i; i = i->next) {
            const char *dom = i->domain_attr->name ? i->domain_attr->name : "";
            const char *fab = i->fabric_attr->name ? i->fabric_attr->name : "";
            if (strcmp(i->fabric_attr->prov_name, prov) ||
                strcmp(dom, two->domain_attr->name ? two->domain_attr->name : "") ||
                strcmp(fab, two->fabric_attr->name ? two->fabric_attr->name : "") ||
                (i->caps & tries[k]) != tries[k])
                continue;
            struct fi_info *dup = fi_dupinfo(i);
            fi_freeinfo(list);
            if (!dup)
                return -ENOMEM;
            if (dup->tx_attr->inject_size != two->tx_attr->inject_size ||
                dup->ep_attr->max_msg_size != two->ep_attr->max_msg_size)
                t->host->debug(t->host->core, "ofi: with the one-sided capabilities %s offers inject %zu "
                               "(%zu without), max_msg_size %zu (%zu)", prov, dup->tx_attr->inject_size,
                               two->tx_attr->inject_size, dup->ep_attr->max_msg_size,
                               two->ep_attr->max_msg_size);
            fi_freeinfo(t->info);
            t->info = dup;
            t->rma = 1;
            t->atomics = k == 0;
            if (k)
                snprintf(t->atomics_refused, sizeof t->atomics_refused,
                         "provider %s offers FI_RMA but not FI_ATOMIC here (%s)", prov,
                         answer[0]);
            return 0;
        }
        if (!rc) {
            snprintf(answer[k], sizeof answer[k], "fi_getinfo answers only other providers or domains");
            fi_freeinfo(list);
        }
    }
    snprintf(t->rma_refused, sizeof t->rma_refused,
             "provider %s (domain %s) offers no FI_RMA on its reliable-datagram endpoint here (%s)", prov,
             two->domain_attr->name ? two->domain_attr->name : "?", answer[1]);
    snprintf(t->atomics_refused, sizeof t->atomics_refused, "%s", t->rma_refused);
    t->host->debug(t->host->core, "ofi: %s; messages only", t->rma_refused);
    return 0;
}

/* An MR on [addr, addr + len) with access, honouring FI_MR_PROV_KEY (the
 * provider's key, else one of ours) and FI_MR_ENDPOINT (bound and enabled). */
static int vs_ofi_mr_reg(vs_transport_t *t, void *addr, size_t len, uint64_t access, struct fid_mr **out)
{
    struct fid_mr *mr = NULL;
    uint64_t key = (t->mr_mode & FI_MR_PROV_KEY) ? 0 : t->next_mr_key++;
    int rc = fi_mr_reg(t->domain, addr, len, access, 0, key, 0, &mr, NULL);
    if (rc)
        return vs_ofi_fail(t, "fi_mr_reg", rc);
    if (t->mr_mode & FI_MR_ENDPOINT) {
        if ((rc = fi_mr_bind(mr, &t->ep->fid, 0)) || (rc = fi_mr_enable(mr))) {
            fi_close(&mr->fid);
            return vs_ofi_fail(t, "fi_mr_bind / fi_mr_enable (FI_MR_ENDPOINT)", rc);
        }
    }
    *out = mr;
    return 0;
}

/* ---------------------------------------------------------------- open / close */

static void vs_ofi_close(vs_transport_t *t)
{
    if (!t)
        return;
    while (t->xmrs) {
        vs_ofi_xmr_t *x = t->xmrs;
        t->xmrs = x->next;
        fi_close(&x->mr->fid);
        free(x);
    }
    if (t->amo_mr)
        fi_close(&t->amo_mr->fid);
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
    free(t->rma_out);
    free(t->amo);
    free(t);
}

/* The two atomics the patterns use, on this endpoint: the provider says
 * whether it has them (fi_fetch_atomicvalid, fi_compare_atomicvalid); their
 * words, registered where the provider wants local registration. */
static int vs_ofi_atomics_ready(vs_transport_t *t)
{
    size_t n_fadd = 0, n_cswap = 0;
    int rf = fi_fetch_atomicvalid(t->ep, FI_UINT64, FI_SUM, &n_fadd);
    int rc = fi_compare_atomicvalid(t->ep, FI_UINT64, FI_CSWAP, &n_cswap);
    if (rf || rc || !n_fadd || !n_cswap) {
        t->atomics = 0;
        snprintf(t->atomics_refused, sizeof t->atomics_refused,
                 "provider %s has no %s on FI_UINT64 here (fi_%s_atomicvalid: %s)",
                 t->info->fabric_attr->prov_name, rf || !n_fadd ? "fetching FI_SUM" : "FI_CSWAP",
                 rf || !n_fadd ? "fetch" : "compare", fi_strerror(rf ? -rf : rc ? -rc : FI_EOPNOTSUPP));
        return 0;
    }
    if (!(t->amo = calloc(VS_OFI_AMO_SLOTS, sizeof *t->amo)))
        return -ENOMEM;
    if (t->mr_local)
        return vs_ofi_mr_reg(t, t->amo, VS_OFI_AMO_SLOTS * sizeof *t->amo, FI_READ | FI_WRITE, &t->amo_mr);
    return 0;
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
    if (rc || (rc = vs_ofi_select_rma(t)))
        goto close_transport;

    struct fi_info *fi = t->info;
    t->mr_mode = fi->domain_attr->mr_mode;
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
    if (t->atomics && (rc = vs_ofi_atomics_ready(t)))
        goto close_transport;
    host->debug(host->core, "ofi: provider %s, fabric %s, domain %s, %s, inject <= %zu, mr_local %d, "
                "one-sided %s, atomics %s",
                fi->fabric_attr->prov_name, fi->fabric_attr->name, fi->domain_attr->name,
                t->tagged ? "tagged" : "plain messages", t->inject_size, t->mr_local,
                t->rma ? "yes" : t->rma_refused, t->atomics ? "yes" : t->atomics_refused);
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
    t->rma_out = calloc((size_t)bs->size, sizeof(*t->rma_out));
    if (!all || !t->peers || !t->rma_out) {
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

/* A request the CQ named is complete: a one-sided operation leaves its
 * peer's count, an atomic hands its old word to the caller. */
static inline void vs_ofi_complete(vs_transport_t *t, vs_ofi_req_t *r)
{
    if (__builtin_expect(r->rma_peer >= 0, 0)) {
        t->rma_out[r->rma_peer]--;
        r->rma_peer = -1;
        if (r->amo && r->result)
            *r->result = r->amo->result;
    }
    r->done = 1;
}

/* Read the completion queue once and mark the requests it names done. */
static int vs_ofi_progress(vs_transport_t *t)
{
    struct fi_cq_tagged_entry entries[VS_OFI_CQ_BATCH];
    ssize_t n = fi_cq_read(t->cq, entries, VS_OFI_CQ_BATCH);
    if (n > 0) {
        if (t->tagged) {
            for (ssize_t i = 0; i < n; i++)
                vs_ofi_complete(t, entries[i].op_context);
        } else {
            const struct fi_cq_entry *e = (const struct fi_cq_entry *)entries;
            for (ssize_t i = 0; i < n; i++)
                vs_ofi_complete(t, e[i].op_context);
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
    vs_ofi_req_t *r = err.op_context;
    t->host->error(t->host->core, "completion error (%s%s): %s; provider: %s",
                   r && r->rma_peer >= 0 && r->what ? r->what : err.flags & FI_RECV ? "receive" : "send",
                   err.err == FI_ETRUNC ? ", message longer than the posted receive" : "",
                   fi_strerror(err.err), msg ? msg : "no detail");
    if (!r)
        return vs_ofi_errno(err.err ? err.err : FI_EIO);
    vs_ofi_complete(t, r);
    r->err = vs_ofi_errno(err.err ? err.err : FI_EIO);
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
    r->rma_peer = -1;
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
    r->rma_peer = -1;
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
    /* the local side of messages, and of puts and gets where the endpoint has them */
    rc = vs_ofi_mr_reg(t, mem->addr, mem->len, FI_SEND | FI_RECV | (t->rma ? FI_READ | FI_WRITE : 0), &mr);
    if (rc)
        return rc;
    mem->desc = mr;
    return 0;
}

/* Also closes what rma_expose registered for this buffer. */
static int vs_ofi_mem_dereg(vs_transport_t *t, vs_mem_t *mem)
{
    int rc = 0;
    for (vs_ofi_xmr_t **p = &t->xmrs; *p;) {
        vs_ofi_xmr_t *x = *p;
        if (x->addr != mem->addr) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        int c = fi_close(&x->mr->fid);
        free(x);
        if (c && !rc)
            rc = vs_ofi_fail(t, "fi_close(exposed mr)", c);
    }
    if (!mem->desc)
        return rc;
    int c = fi_close(&((struct fid_mr *)mem->desc)->fid);
    mem->desc = NULL;
    return c ? vs_ofi_fail(t, "fi_close(mr)", c) : rc;
}

/* ---------------------------------------------------------------- one-sided */

static int vs_ofi_rma_refuse(vs_transport_t *t, const char *why)
{
    t->host->error(t->host->core, "no one-sided %s: %s", why == t->rma_refused ? "operations" : "atomics", why);
    return -ENOTSUP;
}

static int vs_ofi_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (!t->rma)
        return vs_ofi_rma_refuse(t, t->rma_refused);
    if (!mem->addr || !mem->len) {
        t->host->error(t->host->core, "rma_expose: an empty buffer");
        return -EINVAL;
    }
    vs_ofi_xmr_t *x = t->xmrs;
    while (x && !(x->addr == mem->addr && x->len == mem->len))
        x = x->next;
    if (!x) {
        if (!(x = calloc(1, sizeof *x)))
            return -ENOMEM;
        /* remote access, and the local side of puts and gets from it where FI_MR_LOCAL */
        int rc = vs_ofi_mr_reg(t, mem->addr, mem->len,
                               FI_REMOTE_READ | FI_REMOTE_WRITE | (t->mr_local ? FI_READ | FI_WRITE : 0), &x->mr);
        if (rc) {
            free(x);
            return rc;
        }
        x->addr = mem->addr;
        x->len = mem->len;
        x->next = t->xmrs;
        t->xmrs = x;
    }
    vs_ofi_blob_t h = {
        .magic = VS_OFI_BLOB_MAGIC,
        .base = (t->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)mem->addr : 0,
        .len = mem->len,
        .vaddr = (uint64_t)(uintptr_t)mem->addr,
    };
    size_t raw_len = 0;
    if (t->mr_mode & FI_MR_RAW) {
        uint64_t base = 0;
        raw_len = *len > sizeof h ? *len - sizeof h : 0;
        int rc = fi_mr_raw_attr(x->mr, &base, (uint8_t *)blob + sizeof h, &raw_len, 0);
        if (rc == -FI_ETOOSMALL) {
            t->host->error(t->host->core, "the provider's raw MR key is %zu B: with the %zu B header more than "
                           "the %zu B core carries", raw_len, sizeof h, *len);
            return -ENOTSUP;
        }
        if (rc)
            return vs_ofi_fail(t, "fi_mr_raw_attr", rc);
        h.vaddr = base;
        h.raw_len = (uint32_t)raw_len;
    } else {
        h.key = fi_mr_key(x->mr);
        if (h.key == FI_KEY_NOTAVAIL) {
            t->host->error(t->host->core, "fi_mr_key: no key for an exposed buffer");
            return -EIO;
        }
    }
    if (*len < sizeof h) {
        t->host->error(t->host->core, "rma_expose: %zu B of blob, the header takes %zu B", *len, sizeof h);
        return -ENOBUFS;
    }
    memcpy(blob, &h, sizeof h);
    *len = sizeof h + raw_len;
    return 0;
}

static int vs_ofi_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out)
{
    vs_ofi_blob_t h;
    if (!t->rma)
        return vs_ofi_rma_refuse(t, t->rma_refused);
    if (peer < 0 || peer >= t->n_peers) {
        t->host->error(t->host->core, "rma_attach: no rank %d", peer);
        return -EINVAL;
    }
    if (len < sizeof h) {
        t->host->error(t->host->core, "rma_attach: a %zu B blob from rank %d is shorter than its header", len,
                       peer);
        return -EPROTO;
    }
    memcpy(&h, blob, sizeof h);
    if (h.magic != VS_OFI_BLOB_MAGIC || sizeof h + h.raw_len > len || (h.raw_len > 0) != !!(t->mr_mode & FI_MR_RAW)) {
        t->host->error(t->host->core, "rma_attach: the blob from rank %d is not one rma_expose packed", peer);
        return -EPROTO;
    }
    vs_ofi_rkey_t *k = calloc(1, sizeof *k);
    if (!k)
        return -ENOMEM;
    k->key = h.key;
    if (h.raw_len) {
        int rc = fi_mr_map_raw(t->domain, h.vaddr, (uint8_t *)blob + sizeof h, h.raw_len, &k->key, 0);
        if (rc) {
            free(k);
            return vs_ofi_fail(t, "fi_mr_map_raw of the peer's key", rc);
        }
        k->mapped = 1;
    }
    out->addr = h.base;
    out->len = (size_t)h.len;
    out->handle = k;
    return 0;
}

static void vs_ofi_rma_release(vs_transport_t *t, vs_rmem_t *remote)
{
    if (!remote || !remote->handle)
        return;
    vs_ofi_rkey_t *k = remote->handle;
    if (k->mapped)
        fi_mr_unmap_key(t->domain, k->key);
    free(k);
    remote->handle = NULL;
}

static int vs_ofi_rma_bad_args(vs_transport_t *t, const char *op, int peer, size_t off, size_t len, size_t cap)
{
    t->host->error(t->host->core, "%s: invalid peer %d, or %zu B at offset %zu past a %zu B buffer", op, peer,
                   len, off, cap);
    return -EINVAL;
}

/* The descriptor of a local buffer for a put or get: its registration, or
 * the one rma_expose made for it; NULL where the provider needs none. */
static int vs_ofi_local_desc(vs_transport_t *t, const vs_mem_t *m, void **desc)
{
    *desc = NULL;
    if (!t->mr_local)
        return 0;
    if (m->desc) {
        *desc = fi_mr_desc((struct fid_mr *)m->desc);
        return 0;
    }
    for (const vs_ofi_xmr_t *x = t->xmrs; x; x = x->next)
        if (x->addr == m->addr) {
            *desc = fi_mr_desc(x->mr);
            return 0;
        }
    return vs_ofi_check_registered(t, m, "one-sided");
}

static inline int vs_ofi_rma_fits(const vs_transport_t *t, int peer, size_t off, size_t len, size_t cap)
{
    return peer >= 0 && peer < t->n_peers && off <= cap && len <= cap - off;
}

/* A one-sided operation was posted: count it until its completion (which only
 * this rank's own CQ reads can deliver, so after the post is soon enough). */
static inline void vs_ofi_rma_start(vs_transport_t *t, vs_ofi_req_t *r, int peer, const char *what)
{
    r->done = 0;
    r->err = 0;
    r->rma_peer = peer;
    r->what = what;
    r->amo = NULL;
    r->result = NULL;
    t->rma_out[peer]++;
}

/* What put and get check before posting: one-sided operations here, the range inside the
 * peer's buffer and inside the local one, and the local descriptor. */
static inline int vs_ofi_rma_prep(vs_transport_t *t, const char *what, const char *what_local,
                                  const vs_mem_t *local, size_t loff,
                                  size_t len, int peer, const vs_rmem_t *remote, size_t roff, void **desc)
{
    if (__builtin_expect(!t->rma, 0))
        return vs_ofi_rma_refuse(t, t->rma_refused);
    if (__builtin_expect(!vs_ofi_rma_fits(t, peer, roff, len, remote->len), 0))
        return vs_ofi_rma_bad_args(t, what, peer, roff, len, remote->len);
    if (__builtin_expect(loff > local->len || len > local->len - loff, 0))
        return vs_ofi_rma_bad_args(t, what_local, peer, loff, len, local->len);
    return vs_ofi_local_desc(t, local, desc);
}

/* FI_DELIVERY_COMPLETE: the put completes once its bytes are in the target's
 * memory, so that the origin's END only has to wait for its completions.  A
 * put of 0 B has no bytes to deliver and goes without it (libfabric 1.17's
 * shm never completes an empty put that asks for delivery). */
static int vs_ofi_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer,
                      const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    void *desc;
    ssize_t rc;
    if ((rc = vs_ofi_rma_prep(t, "put", "put (local)", local, loff, len, peer, remote, roff, &desc)))
        return (int)rc;
    struct iovec iov = {(char *)local->addr + loff, len};
    struct fi_rma_iov rma = {remote->addr + roff, len, ((const vs_ofi_rkey_t *)remote->handle)->key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = t->peers[peer],
        .rma_iov = &rma, .rma_iov_count = 1, .context = &r->ctx,
    };
    VS_OFI_POST(t, rc, fi_writemsg(t->ep, &msg, len ? FI_COMPLETION | FI_DELIVERY_COMPLETE : FI_COMPLETION));
    if (rc)
        return vs_ofi_fail(t, "fi_writemsg", rc);
    vs_ofi_rma_start(t, r, peer, "put");
    return 0;
}

static int vs_ofi_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer,
                      const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    void *desc;
    ssize_t rc;
    if ((rc = vs_ofi_rma_prep(t, "get", "get (local)", local, loff, len, peer, remote, roff, &desc)))
        return (int)rc;
    VS_OFI_POST(t, rc, fi_read(t->ep, (char *)local->addr + loff, len, desc, t->peers[peer],
                               remote->addr + roff, ((const vs_ofi_rkey_t *)remote->handle)->key, &r->ctx));
    if (rc)
        return vs_ofi_fail(t, "fi_read", rc);
    vs_ofi_rma_start(t, r, peer, "get");
    return 0;
}

/* Fetch-and-add (FI_SUM) or compare-and-swap (FI_CSWAP) on the peer's 64-bit
 * word; the operand, compare and result words are the module's (registered
 * where FI_MR_LOCAL), the old word is copied to *result on completion. */
static int vs_ofi_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result,
                         int peer, const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    vs_ofi_req_t *r = (vs_ofi_req_t *)req->opaque;
    ssize_t rc;
    if (__builtin_expect(!t->atomics, 0))
        return vs_ofi_rma_refuse(t, t->rma ? t->atomics_refused : t->rma_refused);
    if (__builtin_expect(!vs_ofi_rma_fits(t, peer, roff, 8, remote->len) || ((remote->addr + roff) & 7), 0))
        return vs_ofi_rma_bad_args(t, "atomic (an aligned 8 B word)", peer, roff, 8, remote->len);
    if (op != VS_AMO_FADD && op != VS_AMO_CSWAP) {
        t->host->error(t->host->core, "atomic: operation %d is not one of fetch-and-add, compare-and-swap", op);
        return -EINVAL;
    }
    vs_ofi_amo_t *w = &t->amo[t->amo_next++ % VS_OFI_AMO_SLOTS];
    void *desc = t->amo_mr ? fi_mr_desc(t->amo_mr) : NULL;
    uint64_t addr = remote->addr + roff, key = ((const vs_ofi_rkey_t *)remote->handle)->key;
    w->operand = operand;
    w->compare = compare;
    if (op == VS_AMO_FADD)
        VS_OFI_POST(t, rc, fi_fetch_atomic(t->ep, &w->operand, 1, desc, &w->result, desc, t->peers[peer], addr, key,
                                           FI_UINT64, FI_SUM, &r->ctx));
    else
        VS_OFI_POST(t, rc, fi_compare_atomic(t->ep, &w->operand, 1, desc, &w->compare, desc, &w->result, desc,
                                             t->peers[peer], addr, key, FI_UINT64, FI_CSWAP, &r->ctx));
    if (rc)
        return vs_ofi_fail(t, op == VS_AMO_FADD ? "fi_fetch_atomic" : "fi_compare_atomic", rc);
    vs_ofi_rma_start(t, r, peer, "atomic");
    r->amo = w;
    r->result = result;
    return 0;
}

/* Passive target.  The origin's END drives the CQ until every operation it
 * issued to the peer has completed: puts carry FI_DELIVERY_COMPLETE, gets and
 * fetching atomics complete with the data back, so all are done at the peer.
 * The target's calls drive the CQ once, which a provider of manual progress
 * needs to serve the origin's operations. */
static int vs_ofi_rma_epoch(vs_transport_t *t, int peer, int role, int phase)
{
    if (peer < 0 || peer >= t->n_peers || (role != VS_RMA_ORIGIN && role != VS_RMA_TARGET) ||
        (phase != VS_RMA_BEGIN && phase != VS_RMA_END)) {
        t->host->error(t->host->core, "rma_epoch: invalid peer %d, role %d or phase %d", peer, role, phase);
        return -EINVAL;
    }
    if (!t->rma)
        return vs_ofi_rma_refuse(t, t->rma_refused);
    if (role == VS_RMA_TARGET)
        return vs_ofi_progress(t);
    if (phase == VS_RMA_BEGIN)
        return 0;
    while (t->rma_out[peer] > 0) {
        int rc = vs_ofi_progress(t);
        if (rc)
            return rc;
    }
    return 0;
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
    if (t->rma)
        vs_info_attr(info, "one_sided", "FI_RMA: puts fi_writemsg with FI_DELIVERY_COMPLETE, gets fi_read; "
                     "atomics %s; mr_mode %s", t->atomics ? "FI_SUM and FI_CSWAP on FI_UINT64" : t->atomics_refused,
                     t->mr_mode ? fi_tostr(&t->mr_mode, FI_TYPE_MR_MODE) : "none");
    else
        vs_info_attr(info, "one_sided", "none: %s", t->rma_refused);
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
    .rma_expose = vs_ofi_rma_expose,
    .rma_attach = vs_ofi_rma_attach,
    .rma_release = vs_ofi_rma_release,
    .put = vs_ofi_put,
    .get = vs_ofi_get,
    .atomic = vs_ofi_atomic,
    .rma_epoch = vs_ofi_rma_epoch,
    .rma_sync = NULL, /* the CQ is driven by progress; nothing more to make visible */
};

VS_TRANSPORT_DEFINE(vs_ofi_ops)
