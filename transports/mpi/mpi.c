/* MPI transport: one source built twice, against Open MPI ("openmpi") and
 * against MPICH ("mpich").  The module also provides the bootstrap, since an
 * MPI job is started by its own launcher. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include <versus/info.h>
#include <versus/transport.h>

#include <dirent.h>
#include <sys/stat.h>

#include "vs_tcp_path.h"
#ifdef VS_MPI_UCX
#include "vs_ucx_config.h"
#endif

#ifndef VS_MPI_FLAVOUR
#error "VS_MPI_FLAVOUR must be \"openmpi\" or \"mpich\""
#endif

#define IS_OPENMPI (VS_MPI_FLAVOUR[0] == 'o')

/* One-sided synchronisation (--transport-opt sync=...): how rma_epoch maps onto MPI. */
enum { SYNC_LOCK, SYNC_FENCE, SYNC_PSCW };
static const char *const sync_names[] = {"lock", "fence", "pscw"};

/* One window per exposed buffer, created on every rank in the same order
 * (rma_expose's contract), so that its index names the same window on both. */
typedef struct mpi_win {
    MPI_Win win;
    MPI_Group group;     /* pscw: the peer alone */
    const void *base;
    size_t len;
    uint32_t index;
    int peer;            /* attached: the rank whose blob named this window, else -1 */
    int freed;
    int checked;         /* fence, pscw: both sides agreed that they open epochs */
    uint64_t issued;     /* lock: operations issued on the window */
    uint64_t flushed;    /* lock: `issued` at the last MPI_Win_flush */
} mpi_win_t;

struct vs_transport {
    const vs_host_t *host;
    vs_bootstrap_t bs;
    int rank, size;
    int all_local;          /* every rank on this host */
    int initialized_here;
    int sync;               /* SYNC_* */
    MPI_Comm rma_comm;      /* the windows' first-access handshake (MPI_COMM_NULL until needed) */
    mpi_win_t **wins;
    uint32_t n_wins, cap_wins;
};

/* What a vs_req_t holds: a point-to-point request, or a one-sided operation
 * that completes with the window's next flush (lock) or at the end of its
 * epoch (fence, pscw: MPI has no request for active-target operations). */
enum { REQ_P2P = 0, REQ_FLUSH = 1, REQ_EPOCH = 2 };
typedef struct mpi_req {
    MPI_Request r;
    int kind;
    mpi_win_t *w;
    uint64_t seq;                 /* REQ_FLUSH: done once w->flushed reaches it */
    uint64_t operand, compare;    /* an atomic's origin words, alive until it completes */
} mpi_req_t;
_Static_assert(sizeof(mpi_req_t) <= VS_REQ_BYTES, "the MPI request must fit in vs_req_t");

/* Convert an MPI error code, keeping MPI's message. */
static int mpi_fail(vs_transport_t *t, int code, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", code);
    t->host->error(t->host->core, "%s: %s", what, msg);
    int cls = 0;
    if (MPI_Error_class(code, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE)
        return -EMSGSIZE; /* a receive shorter than its message */
    return -EIO;
}

static int mpi_library_version(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) != MPI_SUCCESS)
        return -EIO;
    /* first line only; the rest is build configuration */
    char *nl = strchr(v, '\n');
    if (nl)
        *nl = '\0';
    for (char *p = v; *p; p++)
        if (*p == '\t')
            *p = ' ';
    snprintf(buf, len, "%s", v);
    return 0;
}

/* Which launcher started us, judged from the environment, before MPI_Init
 * can misbehave (an Open MPI process under hydra, or the reverse, would
 * start as a singleton and wait for a peer that never comes). */
static const char *launcher_seen(void)
{
    if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK"))
        return "openmpi";
    if (getenv("PMI_RANK") || getenv("PMI_FD") || getenv("PMI_PORT") || getenv("HYDI_CONTROL_FD"))
        return "mpich";
    return NULL;
}

#ifndef VS_MPI_SRUN
#error "VS_MPI_SRUN comes from meson.build"
#endif

static int check_launcher(const vs_host_t *host)
{
    const char *seen = launcher_seen();
    const char *want_cmd = IS_OPENMPI ? "mpirun.openmpi -np 2 versus-run --transport openmpi ... (or srun --mpi=pmix)"
                                      : "mpiexec.mpich -n 2 versus-run --transport mpich ... (or srun --mpi=pmi2)";
    if (getenv("SLURM_STEP_ID") && (!seen || strcmp(seen, VS_MPI_FLAVOUR))) {
        host->error(host->core, "srun gave it %s, which %s cannot use (each task would run alone); start it "
                                "with srun --mpi=%s", seen ? (strcmp(seen, "openmpi") ? "PMI-2" : "PMIx")
                                                           : "no process-manager interface (--mpi=none)",
                    IS_OPENMPI ? "Open MPI" : "MPICH", VS_MPI_SRUN);
        return -EINVAL;
    }
    if (!seen) {
        host->error(host->core, "not started by an MPI launcher; start it with %s", want_cmd);
        return -EINVAL;
    }
    if (strcmp(seen, VS_MPI_FLAVOUR)) {
        host->error(host->core, "started by %s's launcher, but this module is built against %s; start it with %s",
                    IS_OPENMPI ? "MPICH" : "Open MPI", IS_OPENMPI ? "Open MPI" : "MPICH", want_cmd);
        return -EINVAL;
    }
    return 0;
}

/* A barrier that sleeps while it waits long: ranks that wait for others (a
 * scan's pairs one at a time) must not take the CPU from the pair measuring,
 * and MPI_Barrier polls.  The first millisecond polls, as MPI_Barrier would. */
static int bs_barrier(vs_bootstrap_t *bs)
{
    (void)bs;
    MPI_Request req;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -EIO;
    double t0 = MPI_Wtime();
    for (;;) {
        int done = 0;
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -EIO;
        if (done)
            return 0;
        if (MPI_Wtime() - t0 > 1e-3)
            nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
    }
}

static int bs_exchange(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    (void)bs;
    if (len > (size_t)0x7fffffff)
        return -EINVAL;
    return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -EIO;
}

static int bs_gather(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    (void)bs;
    if (len > (size_t)0x7fffffff)
        return -EINVAL;
    return MPI_Gather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -EIO;
}

enum { MPI_OPT_SYNC, MPI_N_OPTS };
static const vs_option_t mpi_options[MPI_N_OPTS] = {
    /* the library itself is tuned with OMPI_MCA_*, MPIR_CVAR_*, UCX_* */
    [MPI_OPT_SYNC] = {"sync", VS_OPT_CHOICE, "lock|fence|pscw", 0, "lock",
                      "one-sided epochs: lock (lock_all once, MPI_Win_flush per access), fence "
                      "(MPI_Win_fence around each access) or pscw (start/complete, post/wait)"},
};

static int mpi_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    int rc = check_launcher(host);
    if (rc)
        return rc;
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    /* parsed by core against mpi_options: "lock" when not given */
    t->sync = opts ? (int)opts[MPI_OPT_SYNC].choice : SYNC_LOCK;
    t->rma_comm = MPI_COMM_NULL;
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        int provided;
        if ((rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided)) != MPI_SUCCESS) {
            host->error(host->core, "MPI_Init failed (code %d)", rc);
            free(t);
            return -EIO;
        }
        t->initialized_here = 1;
    }
    /* errors come back as codes, not aborts, so they can be reported */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        int n = 0;
        MPI_Comm_size(node, &n);
        t->all_local = n == t->size;
        MPI_Comm_free(&node);
    }
    t->bs = (vs_bootstrap_t){
        .name = "mpi", .rank = t->rank, .size = t->size, .ctx = t,
        .barrier = bs_barrier, .exchange = bs_exchange, .close = NULL,
        .gather = bs_gather,
    };
    *out = t;
    return 0;
}

static void win_free(vs_transport_t *t, mpi_win_t *w);

static void mpi_close(vs_transport_t *t)
{
    /* windows rma_release left (more than two ranks: see there), in creation order on every rank */
    for (uint32_t i = 0; i < t->n_wins; i++)
        if (!t->wins[i]->freed)
            win_free(t, t->wins[i]);
    for (uint32_t i = 0; i < t->n_wins; i++)
        free(t->wins[i]);
    free(t->wins);
    if (t->rma_comm != MPI_COMM_NULL)
        MPI_Comm_free(&t->rma_comm);
    /* Into MPI_Finalize together, from a barrier that polls: MPICH 4.0 over UCX closes its
     * endpoints and then waits in the PMI barrier without driving UCX, so a rank that arrives
     * late (the sleeping barrier above can let one wake a scheduler tick after the other) may
     * find its peer no longer answering its close.  This narrows that window; it cannot close
     * it (docs/launching.md). */
    if (t->initialized_here) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
    free(t);
}

static int mpi_bootstrap(vs_transport_t *t, vs_bootstrap_t **out)
{
    *out = &t->bs;
    return 0;
}

static int mpi_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    (void)t; (void)bs;
    return 0; /* MPI_Init connected everyone */
}

/* Whether an MPICH built for `device` ("ch4:ucx", "ch3:nemesis", ...) reads a
 * control variable: MPICH lists every CVAR of its source, whatever device was
 * built, so a ch4 build still shows ch3's eager limit, which it never reads.
 * A CVAR named for a device (CH3, NEMESIS, CH4) or a ch4 netmod (OFI, UCX) is
 * read only by that one; GPU and XPMEM paths do not carry host messages here. */
static int mpich_cvar_read(const char *name, const char *device)
{
    int ch4 = strncmp(device, "ch4", 3) == 0;
    const char *netmod = strchr(device, ':');
    netmod = netmod ? netmod + 1 : "";
    if (strstr(name, "_CH3_") || strstr(name, "_NEMESIS_"))
        return !ch4;
    if (strstr(name, "_CH4_OFI_"))
        return ch4 && strncmp(netmod, "ofi", 3) == 0;
    if (strstr(name, "_CH4_UCX_"))
        return ch4 && strncmp(netmod, "ucx", 3) == 0;
    if (strstr(name, "_GPU_") || strstr(name, "_XPMEM_"))
        return 0;
    if (strstr(name, "_CH4_"))
        return ch4;
    return 1;
}

/* Read integer-valued MPI_T control variables whose names speak of
 * thresholds, so reports can attribute protocol transitions.  device: MPICH's
 * device ("ch4:ucx"), or NULL for Open MPI. */
static void add_cvar_thresholds(vs_transport_info_t *info, const char *device)
{
    int provided, n = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n && info->n_thresholds < VS_MAX_THRESHOLDS; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len, &bind, &scope) != MPI_SUCCESS)
            continue;
        if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        if (!strstr(name, "eager_limit") && !strstr(name, "EAGER_LIMIT") && !strstr(name, "rndv_thresh") &&
            !strstr(name, "RNDV_THRESH") && !strstr(name, "EAGER_MAX_MSG_SIZE"))
            continue;
        /* btl_self carries only messages a process sends to itself: never between two ranks */
        if (IS_OPENMPI && !strstr(name, "btl_vader") && !strstr(name, "btl_tcp") && !strstr(name, "pml_ob1"))
            continue;
        if (!IS_OPENMPI && device && !mpich_cvar_read(name, device))
            continue;
        MPI_T_cvar_handle h;
        int count = 0;
        if (MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
            continue;
        long long v = -1;
        if (count == 1) {
            if (dt == MPI_INT || dt == MPI_UNSIGNED) {
                int x;
                if (MPI_T_cvar_read(h, &x) == MPI_SUCCESS)
                    v = x;
            } else if (dt == MPI_UNSIGNED_LONG || dt == MPI_LONG || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_LONG_LONG) {
                long long x;
                if (MPI_T_cvar_read(h, &x) == MPI_SUCCESS)
                    v = x;
            }
        }
        MPI_T_cvar_handle_free(&h);
        if (v < 0)
            continue;
        vs_threshold_t *th = &info->thresholds[info->n_thresholds++];
        snprintf(th->name, sizeof th->name, "%s", name);
        th->bytes = v;
    }
    MPI_T_finalize();
}

/* MPICH over UCX (ch4:ucx) moves every message, same host included, through
 * UCP, which reads its settings from the UCX_* environment as the ucx module
 * does.  Record those in force (ucx_tls, ucx_rndv_thresh, ...; vs_ucx_config.h)
 * and, when the rendezvous threshold is a size rather than "auto", the
 * threshold under the name of the variable that sets it. */
#ifdef VS_MPI_UCX
/* Whether UCX_TLS ("all", "sm", "^tcp", "sysv,cma", ...) lets UCX use the shared-memory
 * transport `tl` ("sysv", "posix"); the aliases "sm" and "shm" name them all. */
static int ucx_tls_allows(const char *tls, const char *tl)
{
    int negate = tls[0] == '^';
    const char *p = tls + negate;
    int listed = strcmp(p, "all") == 0;
    while (*p && !listed) {
        size_t n = strcspn(p, ",");
        listed = (n == strlen(tl) && strncmp(p, tl, n) == 0) || (n == 2 && strncmp(p, "sm", 2) == 0) ||
                 (n == 3 && strncmp(p, "shm", 3) == 0);
        p += n + (p[n] == ',');
    }
    return negate ? !listed : listed;
}
#endif

static void add_ucx_config(vs_transport_t *t, vs_transport_info_t *info)
{
#ifdef VS_MPI_UCX
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    vs_info_attr(info, "ucx_version", "%u.%u.%u", major, minor, release);
    long long rndv = vs_ucx_config_attrs(info, "ucx_");
    if (rndv >= 0)
        vs_info_threshold(info, "UCX_RNDV_THRESH", rndv);
    /* Ranks on one host talk through one of UCX's shared-memory transports (which
     * one is UCX's choice, not visible from here): eager messages above its segment
     * size go in several fragments. */
    const char *tls = "all";
    for (int i = 0; i < info->n_attrs; i++)
        if (strcmp(info->attrs[i].key, "ucx_tls") == 0)
            tls = info->attrs[i].value;
    /* UCX decides per peer (it finds shared memory wherever the memory really is shared,
     * which MPICH's view of the hosts does not change) and does not say */
    snprintf(info->medium, sizeof info->medium, "%s",
             ucx_tls_allows(tls, "sysv") || ucx_tls_allows(tls, "posix") || ucx_tls_allows(tls, "cma")
                 ? VS_MEDIUM_MAY_SHM : VS_MEDIUM_NETWORK);
    for (int k = 0; t->all_local && k < 2; k++) {
        const char *tl = k ? "posix" : "sysv";
        if (ucx_tls_allows(tls, tl))
            vs_ucx_seg_size_threshold(info, tl, k ? "UCX_POSIX_SEG_SIZE" : "UCX_SYSV_SEG_SIZE");
    }
#else
    (void)t;
    vs_info_attr(info, "ucx_config", "not read: the module was built without UCX's headers");
#endif
}

/* Open MPI's ob1 over its TCP BTL frames each eager message with the BTL's
 * header (8 B) and ob1's match header (16 B), sent with the payload in one
 * write: a message needs a second segment from MSS - 24 B of payload on
 * (measured with Open MPI 4.1: the step sits between 1424 and 1428 B at MSS
 * 1448).  The BTL's sockets are the process's connected IPv4 stream sockets
 * to another address (Open MPI's other channels are Unix sockets); by the time
 * the run is described, the bootstrap's barriers have opened them. */
#define OMPI_TCP_FRAMING 24

static void add_tcp_path(vs_transport_info_t *info)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    vs_tcp_path_t p = {.mss = -1};
    struct dirent *e;
    while ((e = readdir(d)) && p.mss < 0) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        struct stat st;
        struct sockaddr_in peer;
        socklen_t sl = sizeof peer;
        int type = 0;
        socklen_t tl = sizeof type;
        if (*end || fd == dirfd(d) || fstat((int)fd, &st) || !S_ISSOCK(st.st_mode) ||
            getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_STREAM ||
            getpeername((int)fd, (struct sockaddr *)&peer, &sl) || peer.sin_family != AF_INET ||
            ntohl(peer.sin_addr.s_addr) >> 24 == 127)
            continue;
        vs_tcp_path_of((int)fd, &p);
    }
    closedir(d);
    if (p.mss < 0)
        return;
    vs_info_attr(info, "path_iface", "%s", p.iface);
    vs_info_attr(info, "mtu", "%d", p.mtu);
    vs_info_attr(info, "mss", "%d", p.mss);
    vs_info_attr(info, "tcp_framing", "%d B per message (TCP BTL header 8 + ob1 match header 16)", OMPI_TCP_FRAMING);
    vs_info_threshold(info, "mss_payload", p.mss - OMPI_TCP_FRAMING);
    vs_info_attr(info, "congestion", "%s", p.congestion);   /* last: dropped first when attrs is full */
}

static int mpi_query(vs_transport_t *t, vs_transport_info_t *info)
{
    snprintf(info->name, sizeof info->name, "%s", VS_MPI_FLAVOUR);
    snprintf(info->library, sizeof info->library, "%s", IS_OPENMPI ? "Open MPI" : "MPICH");
    mpi_library_version(info->version, sizeof info->version);
    int major, minor;
    MPI_Get_version(&major, &minor);
    info->n_attrs = 0;
    vs_info_attr(info, "mpi_standard", "%d.%d", major, minor);
    vs_info_attr(info, "rma_sync", "%s", sync_names[t->sync]);
    if (IS_OPENMPI) {
        const char *pml = getenv("OMPI_MCA_pml"), *btl = getenv("OMPI_MCA_btl");
        snprintf(info->provider, sizeof info->provider, "pml=%s btl=%s", pml ? pml : "default", btl ? btl : "default");
        /* ob1 takes its shared-memory BTL (vader) only between ranks it sees on one host
         * (by host name); UCX (pml ucx) finds shared memory wherever it is really shared */
        if (pml && strstr(pml, "ucx"))
            snprintf(info->medium, sizeof info->medium, VS_MEDIUM_MAY_SHM);
        else if (!t->all_local) {
            snprintf(info->medium, sizeof info->medium, VS_MEDIUM_NETWORK);
            add_tcp_path(info);
        }
    } else {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int n = 0;
        MPI_Get_library_version(v, &n);
        const char *dev = strstr(v, "MPICH Device:");
        if (dev) {
            dev += strlen("MPICH Device:");
            while (*dev == ' ' || *dev == '\t')
                dev++;
            snprintf(info->provider, sizeof info->provider, "%.*s", (int)strcspn(dev, "\n"), dev);
        }
        /* "ch4:ucx": the device and its network module, each an attribute */
        size_t dl = strcspn(info->provider, ":");
        vs_info_attr(info, "device", "%.*s", (int)dl, info->provider);
        if (info->provider[dl] == ':')
            vs_info_attr(info, "netmod", "%s", info->provider + dl + 1);
        if (strcmp(info->provider, "ch4:ucx") == 0)
            add_ucx_config(t, info);
    }
    add_cvar_thresholds(info, IS_OPENMPI ? NULL : info->provider);
    return 0;
}

static inline mpi_req_t *mreq(vs_req_t *r) { return (mpi_req_t *)r->opaque; }
static inline MPI_Request *req_of(vs_req_t *r) { return &mreq(r)->r; }

static int mpi_post_send(vs_transport_t *t, const vs_mem_t *m, size_t len, int peer, uint64_t tag, vs_req_t *req)
{
    mreq(req)->kind = REQ_P2P;
    int rc = MPI_Isend(m->addr, (int)len, MPI_BYTE, peer, (int)tag, MPI_COMM_WORLD, req_of(req));
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Isend");
}

static int mpi_post_recv(vs_transport_t *t, vs_mem_t *m, size_t len, int peer, uint64_t tag, vs_req_t *req)
{
    mreq(req)->kind = REQ_P2P;
    int rc = MPI_Irecv(m->addr, (int)len, MPI_BYTE, peer, (int)tag, MPI_COMM_WORLD, req_of(req));
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Irecv");
}

static int rma_complete(vs_transport_t *t, mpi_req_t *q);

static int mpi_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    if (mreq(req)->kind != REQ_P2P) {
        *done = 1;
        return rma_complete(t, mreq(req));
    }
    int rc = MPI_Test(req_of(req), done, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Test");
}

static int mpi_wait(vs_transport_t *t, vs_req_t *req)
{
    if (mreq(req)->kind != REQ_P2P)
        return rma_complete(t, mreq(req));
    int rc = MPI_Wait(req_of(req), MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Wait");
}

static int mpi_progress(vs_transport_t *t)
{
    int flag;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Iprobe");
}

static int mpi_send(vs_transport_t *t, const vs_mem_t *m, size_t len, int peer, uint64_t tag)
{
    int rc = MPI_Send(m->addr, (int)len, MPI_BYTE, peer, (int)tag, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Send");
}

static int mpi_recv(vs_transport_t *t, vs_mem_t *m, size_t len, int peer, uint64_t tag)
{
    int rc = MPI_Recv(m->addr, (int)len, MPI_BYTE, peer, (int)tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Recv");
}

/* ---- One-sided (interface 5): MPI windows.
 *
 * rma_expose creates a window over the buffer core allocated (MPI_Win_create
 * on MPI_COMM_WORLD: every rank exposes the same buffers in the same order,
 * so the collective creation matches up), the blob carries its index, and
 * rma_attach finds the same window by it.  The synchronisation is the sync
 * option:
 *   lock   MPI_Win_lock_all once at expose; an operation completes with
 *          MPI_Win_flush to its peer (test/wait), origin END flushes what is
 *          still unflushed, the target does nothing but MPI_Win_sync
 *          (rma_sync); as osu_*_latency with -s flush;
 *   fence  MPI_Win_fence at origin and target BEGIN and END;
 *   pscw   origin MPI_Win_start/MPI_Win_complete, target MPI_Win_post/
 *          MPI_Win_wait, on a group of the peer alone.
 * In fence and pscw an operation completes only when its epoch ends (MPI has
 * no request for them, nor a flush): test and wait return at once, and its
 * data (a get's bytes, an atomic's old word) is there after origin END. */

typedef struct mpi_blob {
    char magic[4];       /* "VSWN" */
    uint32_t index;      /* the window's place in the creation order */
    uint64_t len;        /* bytes exposed */
    int32_t disp_unit;   /* displacements are in bytes */
    int32_t sync;        /* SYNC_*: both sides run the same mode */
} mpi_blob_t;

#define RMA_TAG_CHECK 0x5653 /* on rma_comm, a duplicate of MPI_COMM_WORLD core never sees */

static void win_free(vs_transport_t *t, mpi_win_t *w)
{
    if (w->freed)
        return;
    if (t->sync == SYNC_LOCK)
        MPI_Win_unlock_all(w->win);
    MPI_Win_free(&w->win);
    if (w->group != MPI_GROUP_NULL)
        MPI_Group_free(&w->group);
    w->freed = 1;
}

static int mpi_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (*len < sizeof(mpi_blob_t))
        return -EOVERFLOW;
    if (t->sync == SYNC_FENCE && t->size != 2) {
        /* every rank takes the same branch: none creates the window */
        t->host->error(t->host->core, "sync=fence fences every rank of the window's communicator "
                                      "(MPI_COMM_WORLD, %d ranks), which the one-sided patterns do not do "
                                      "with more than 2 ranks; use sync=lock or sync=pscw", t->size);
        return -ENOTSUP;
    }
    if (t->n_wins == t->cap_wins) {
        uint32_t cap = t->cap_wins ? 2 * t->cap_wins : 4;
        mpi_win_t **w = realloc(t->wins, cap * sizeof *w);
        if (!w)
            return -ENOMEM;
        t->wins = w;
        t->cap_wins = cap;
    }
    mpi_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->group = MPI_GROUP_NULL;
    w->base = mem->addr;
    w->len = mem->len;
    w->index = t->n_wins;
    w->peer = -1;
    int rc;
    if (t->rma_comm == MPI_COMM_NULL && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &t->rma_comm)) != MPI_SUCCESS) {
        free(w);
        return mpi_fail(t, rc, "MPI_Comm_dup");
    }
    if ((rc = MPI_Win_create(mem->addr, (MPI_Aint)mem->len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win)) !=
        MPI_SUCCESS) {
        free(w);
        return mpi_fail(t, rc, "MPI_Win_create");
    }
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    if (t->sync == SYNC_LOCK && (rc = MPI_Win_lock_all(0, w->win)) != MPI_SUCCESS) {
        MPI_Win_free(&w->win);
        free(w);
        return mpi_fail(t, rc, "MPI_Win_lock_all");
    }
    t->wins[t->n_wins++] = w;
    mpi_blob_t b = {.magic = {'V', 'S', 'W', 'N'}, .index = w->index, .len = mem->len, .disp_unit = 1,
                    .sync = t->sync};
    memcpy(blob, &b, sizeof b);
    *len = sizeof b;
    return 0;
}

static int mpi_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out)
{
    mpi_blob_t b;
    if (len != sizeof b)
        return -EINVAL;
    memcpy(&b, blob, sizeof b);
    if (memcmp(b.magic, "VSWN", 4) || b.index >= t->n_wins || t->wins[b.index]->freed || b.disp_unit != 1) {
        t->host->error(t->host->core, "rank %d's blob names no window of this rank", peer);
        return -EINVAL;
    }
    if (b.sync != t->sync) {
        t->host->error(t->host->core, "rank %d runs sync=%s, this rank sync=%s", peer,
                       b.sync >= 0 && b.sync <= SYNC_PSCW ? sync_names[b.sync] : "?", sync_names[t->sync]);
        return -EINVAL;
    }
    mpi_win_t *w = t->wins[b.index];
    if (t->sync == SYNC_PSCW && w->group == MPI_GROUP_NULL) {
        MPI_Group world;
        int rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Group_incl(world, 1, &peer, &w->group);
            MPI_Group_free(&world);
        }
        if (rc != MPI_SUCCESS)
            return mpi_fail(t, rc, "MPI_Group_incl");
    }
    w->peer = peer;
    *out = (vs_rmem_t){.addr = 0, .len = (size_t)b.len, .handle = w};
    return 0;
}

/* MPI_Win_free is collective.  With two ranks both attach each other's
 * window and core releases on both in the same order, so it is freed here;
 * with more, a rank without a partner never attaches nor releases, so every
 * window waits for close(), which every rank reaches. */
static void mpi_rma_release(vs_transport_t *t, vs_rmem_t *remote)
{
    mpi_win_t *w = remote->handle;
    if (w && t->size == 2)
        win_free(t, w);
    remote->handle = NULL;
}

/* lock: complete every operation issued on w (remote completion, which
 * implies the local one). */
static inline int win_flush(vs_transport_t *t, mpi_win_t *w)
{
    int rc = MPI_Win_flush(w->peer, w->win);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "MPI_Win_flush");
    w->flushed = w->issued;
    return 0;
}

static int rma_complete(vs_transport_t *t, mpi_req_t *q)
{
    if (q->kind == REQ_EPOCH || q->w->flushed >= q->seq)
        return 0;
    return win_flush(t, q->w);
}

/* The operation just issued on w completes with the next flush (lock) or
 * the epoch's end. */
static inline void issued(vs_transport_t *t, mpi_win_t *w, vs_req_t *req)
{
    mpi_req_t *q = mreq(req);
    q->w = w;
    if (t->sync == SYNC_LOCK) {
        q->kind = REQ_FLUSH;
        q->seq = ++w->issued;
    } else {
        q->kind = REQ_EPOCH;
    }
}

static int mpi_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer,
                   const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    mpi_win_t *w = remote->handle;
    if (len > 0x7fffffff)
        return -EINVAL;
    int rc = MPI_Put((const char *)local->addr + loff, (int)len, MPI_BYTE, peer, (MPI_Aint)roff, (int)len,
                     MPI_BYTE, w->win);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "MPI_Put");
    issued(t, w, req);
    return 0;
}

static int mpi_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer,
                   const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    mpi_win_t *w = remote->handle;
    if (len > 0x7fffffff)
        return -EINVAL;
    int rc = MPI_Get((char *)local->addr + loff, (int)len, MPI_BYTE, peer, (MPI_Aint)roff, (int)len, MPI_BYTE,
                     w->win);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "MPI_Get");
    issued(t, w, req);
    return 0;
}

static int mpi_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result, int peer,
                      const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    mpi_win_t *w = remote->handle;
    mpi_req_t *q = mreq(req);
    q->operand = operand;
    q->compare = compare;
    int rc;
    if (op == VS_AMO_FADD)
        rc = MPI_Fetch_and_op(&q->operand, result, MPI_UINT64_T, peer, (MPI_Aint)roff, MPI_SUM, w->win);
    else if (op == VS_AMO_CSWAP)
        rc = MPI_Compare_and_swap(&q->operand, &q->compare, result, MPI_UINT64_T, peer, (MPI_Aint)roff, w->win);
    else
        return -EINVAL;
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, op == VS_AMO_FADD ? "MPI_Fetch_and_op" : "MPI_Compare_and_swap");
    issued(t, w, req);
    return 0;
}

/* fence and pscw need both sides to open each epoch: the first call on a
 * new window (origin BEGIN, target BEGIN, or a target's rma_sync while it
 * polls) says which, to the peer.  A side that polls without an epoch
 * (putnotify's) would leave the other in MPI_Win_fence or MPI_Win_start for
 * ever: both refuse instead.  Once per window, outside the timed loops'
 * steady state. */
enum { FIRST_EPOCH = 1, FIRST_POLL = 2 };

static int first_access(vs_transport_t *t, int peer, int kind)
{
    int pending = 0;
    for (uint32_t i = 0; i < t->n_wins; i++)
        if (!t->wins[i]->freed && t->wins[i]->peer == peer && !t->wins[i]->checked)
            pending = 1;
    if (!pending)
        return 0;
    for (uint32_t i = 0; i < t->n_wins; i++)
        if (!t->wins[i]->freed && t->wins[i]->peer == peer)
            t->wins[i]->checked = 1;
    int theirs = 0;
    int rc = MPI_Sendrecv(&kind, 1, MPI_INT, peer, RMA_TAG_CHECK, &theirs, 1, MPI_INT, peer, RMA_TAG_CHECK,
                          t->rma_comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "MPI_Sendrecv (first one-sided access)");
    if (kind == FIRST_POLL || theirs == FIRST_POLL) {
        t->host->error(t->host->core, "sync=%s needs both sides to open each access (MPI_Win_%s), but rank %d "
                                      "waits for the peer's writes without one (a pattern that polls its "
                                      "buffer, as putnotify does, needs passive target); use sync=lock",
                       sync_names[t->sync], t->sync == SYNC_FENCE ? "fence" : "post/start",
                       kind == FIRST_POLL ? t->rank : peer);
        return -ENOTSUP;
    }
    return 0;
}

static int mpi_rma_epoch(vs_transport_t *t, int peer, int role, int phase)
{
    int rc;
    if (t->sync == SYNC_LOCK) {
        if (role != VS_RMA_ORIGIN || phase != VS_RMA_END)
            return 0;
        for (uint32_t i = 0; i < t->n_wins; i++) {
            mpi_win_t *w = t->wins[i];
            if (!w->freed && w->peer == peer && w->flushed < w->issued && (rc = win_flush(t, w)))
                return rc;
        }
        return 0;
    }
    if ((rc = first_access(t, peer, FIRST_EPOCH)))
        return rc;
    for (uint32_t i = 0; i < t->n_wins; i++) {
        mpi_win_t *w = t->wins[i];
        if (w->freed || w->peer != peer)
            continue;
        const char *what;
        if (t->sync == SYNC_FENCE) {
            what = "MPI_Win_fence";
            rc = MPI_Win_fence(0, w->win);
        } else if (role == VS_RMA_ORIGIN) {
            what = phase == VS_RMA_BEGIN ? "MPI_Win_start" : "MPI_Win_complete";
            rc = phase == VS_RMA_BEGIN ? MPI_Win_start(w->group, 0, w->win) : MPI_Win_complete(w->win);
        } else {
            what = phase == VS_RMA_BEGIN ? "MPI_Win_post" : "MPI_Win_wait";
            rc = phase == VS_RMA_BEGIN ? MPI_Win_post(w->group, 0, w->win) : MPI_Win_wait(w->win);
        }
        if (rc != MPI_SUCCESS)
            return mpi_fail(t, rc, what);
    }
    return 0;
}

static int mpi_rma_sync(vs_transport_t *t, vs_mem_t *mem)
{
    mpi_win_t *w = NULL;
    for (uint32_t i = 0; i < t->n_wins && !w; i++)
        if (!t->wins[i]->freed && t->wins[i]->base == mem->addr)
            w = t->wins[i];
    if (!w)
        return 0;
    if (t->sync != SYNC_LOCK) {
        /* the epoch's end made the window's copies one; a poller is refused */
        int rc = w->peer >= 0 ? first_access(t, w->peer, FIRST_POLL) : 0;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return rc;
    }
    int rc = MPI_Win_sync(w->win);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Win_sync");
}

#if !defined(VS_MPI_LAUNCHER_KIND) || !defined(VS_MPI_LAUNCHER) || !defined(VS_MPI_ENV)
#error "VS_MPI_LAUNCHER_KIND, VS_MPI_LAUNCHER and VS_MPI_ENV come from meson.build"
#endif

/* What tunes each library, and what its launcher sets to wire the job. */
static const char *const mpi_env[] = {VS_MPI_ENV, NULL};
static const char *const mpi_wiring[] = {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir", NULL};
static const vs_launcher_hint_t mpi_launcher = {VS_MPI_LAUNCHER_KIND, VS_MPI_LAUNCHER, VS_MPI_SRUN};

static const vs_transport_ops_t mpi_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = VS_MPI_FLAVOUR,
    .summary = "MPI point-to-point (MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv) and one-sided (MPI_Put/MPI_Get, windows)",
    .library_version = mpi_library_version,
    .open = mpi_open,
    .close = mpi_close,
    .bootstrap = mpi_bootstrap,
    .query = mpi_query,
    .connect = mpi_connect,
    .post_send = mpi_post_send,
    .post_recv = mpi_post_recv,
    .test = mpi_test,
    .wait = mpi_wait,
    .progress = mpi_progress,
    .send = mpi_send,
    .recv = mpi_recv,
    .env_prefixes = mpi_env,
    .env_wiring = mpi_wiring,
    .launcher = &mpi_launcher,
    .options = mpi_options,
    .n_options = MPI_N_OPTS,
    .rma_expose = mpi_rma_expose,
    .rma_attach = mpi_rma_attach,
    .rma_release = mpi_rma_release,
    .put = mpi_put,
    .get = mpi_get,
    .atomic = mpi_atomic,
    .rma_epoch = mpi_rma_epoch,
    .rma_sync = mpi_rma_sync,
};

VS_TRANSPORT_DEFINE(mpi_ops)
