/* fake: a synthetic transport whose operations take a known time.
 *
 * A send or a receive of len bytes completes half a "round trip" after it is
 * posted, where
 *     rtt(len) = base_ns + len * ns_per_byte + (len >= step_at ? step_ns : 0)
 * plus, with noise_pct, a uniform extra of up to noise_pct % of it.  The ranks
 * exchange no data: each spins on its own clock, so a ping-pong measured on
 * rank 0 sees rtt(len).  Options (--transport-opt): base_ns, ns_per_byte,
 * step_at, step_ns, noise_pct, seed, sleep.  Defaults: 1000 ns + 1 ns/B (1 GB/s),
 * +5000 ns from 3000 B on, no noise.  With sleep=1 a blocking wait sleeps to
 * its deadline instead of spinning (the timer's lateness, tens of us, adds to
 * every operation): many more ranks than CPUs then measure at once, so a bench
 * of core's own costs at scale is not a bench of this machine's CPU count.
 *
 * Built a second time as "fakemem" (VS_FAKE_MEMORY): the same, but it owns its
 * buffers through the memory operations, as a device-memory module would.
 * The address it hands core is a PROT_NONE mapping, so core touching a byte
 * of it directly crashes the run; the bytes live in a shadow that only
 * mem_fill and mem_compare reach.  With --verbose it says at close how often
 * each operation was called.
 *
 * One-sided operations (interface 5), fake but moving real bytes: exposing a
 * buffer puts its bytes in a memfd (fake: the buffer's pages moved in place;
 * fakemem: its shadow lives in one from the start), the partner maps that
 * through /proc/PID/fd for reading and writing, and a put or get is a memcpy
 * into or out of the mapping, an atomic the CPU's own on the word.  Each
 * completes half a round trip of its size after it is posted, as a send does,
 * and its bytes land (its old word comes back) only then, in test or wait, as
 * over a wire: the one-sided patterns measure a known time too (put latency =
 * rtt(len) / 2; a put-with-notification round trip = rtt(len)).  Epochs and
 * rma_sync are fences.  With rma=refuse exposing fails with -ENOTSUP, as a
 * module whose library turns out to have no one-sided operations does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <versus/transport.h>

typedef struct vs_transport {
    const vs_host_t *host;
    double base_ns, ns_per_byte, step_ns, noise_pct;
    long step_at;
    int sleep;
    int rma_refused;        /* rma=refuse: exposing fails as over a library without one-sided operations */
    uint64_t rng;
    long allocs, frees, fills, compares;
} fake_t;

#ifndef VS_FAKE_MEMORY
#define VS_FAKE_MEMORY 0
#endif
#ifndef VS_FAKE_ABI4
#define VS_FAKE_ABI4 0
#endif
#define FAKE_NAME (VS_FAKE_MEMORY ? "fakemem" : VS_FAKE_ABI4 ? "fake4" : "fake")

/* A one-sided operation's effect waits in its request until it completes:
 * the bytes land (and the old word comes back) when the operation's time is
 * up, as they would over a wire, not when it is posted. */
enum { FAKE_NONE, FAKE_COPY, FAKE_FADD, FAKE_CSWAP };

typedef struct fake_req {
    uint64_t deadline;
    int effect;                 /* FAKE_*: what completion does, once */
    unsigned char *dst;
    const unsigned char *src;
    size_t len;
    uint64_t *word, operand, compare, *result;
} fake_req_t;
_Static_assert(sizeof(fake_req_t) <= VS_REQ_BYTES, "a request fits core's storage");

static void fake_complete(fake_req_t *r)
{
    switch (r->effect) {
    case FAKE_COPY:
        memcpy(r->dst, r->src, r->len);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        break;
    case FAKE_FADD:
        *r->result = __atomic_fetch_add(r->word, r->operand, __ATOMIC_SEQ_CST);
        break;
    case FAKE_CSWAP: {
        uint64_t old = r->compare;
        __atomic_compare_exchange_n(r->word, &old, r->operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        *r->result = old; /* the word before, swapped or not */
        break;
    }
    default:
        break;
    }
    r->effect = FAKE_NONE;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fake_version(char *buf, size_t len)
{
    snprintf(buf, len, "1.0");
    return 0;
}

enum { OPT_BASE_NS, OPT_NS_PER_BYTE, OPT_STEP_AT, OPT_STEP_NS, OPT_NOISE_PCT, OPT_SEED, OPT_SLEEP, OPT_RMA, N_OPTS };

static const vs_option_t fake_options[N_OPTS] = {
    [OPT_BASE_NS] = {"base_ns", VS_OPT_NUMBER, NULL, 0, "1000", "time of a zero-byte message, ns"},
    [OPT_NS_PER_BYTE] = {"ns_per_byte", VS_OPT_NUMBER, NULL, 0, "1", "time per byte, ns"},
    [OPT_STEP_AT] = {"step_at", VS_OPT_NUMBER, NULL, 0, "3000", "size from which step_ns is added, bytes"},
    [OPT_STEP_NS] = {"step_ns", VS_OPT_NUMBER, NULL, 0, "5000", "the step's height, ns"},
    [OPT_NOISE_PCT] = {"noise_pct", VS_OPT_NUMBER, NULL, 0, "0", "uniform noise, % of the time"},
    [OPT_SEED] = {"seed", VS_OPT_NUMBER, NULL, 0, "fixed", "noise seed"},
    [OPT_SLEEP] = {"sleep", VS_OPT_NUMBER, NULL, 0, "0",
                   "1: a blocking wait sleeps to its deadline instead of spinning"},
    [OPT_RMA] = {"rma", VS_OPT_CHOICE, "yes|refuse", 0, "yes",
                 "refuse: exposing a buffer fails with ENOTSUP, as over a library without one-sided operations"},
};

static int fake_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    fake_t *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    /* parsed by core against fake_options, the defaults included (but seed's) */
    f->host = host;
    f->base_ns = opts[OPT_BASE_NS].number;
    f->ns_per_byte = opts[OPT_NS_PER_BYTE].number;
    f->step_at = (long)opts[OPT_STEP_AT].number;
    f->step_ns = opts[OPT_STEP_NS].number;
    f->noise_pct = opts[OPT_NOISE_PCT].number;
    f->rng = opts[OPT_SEED].given ? (uint64_t)opts[OPT_SEED].number * 2654435761ULL + 1 : 0x9e3779b97f4a7c15ULL;
    f->sleep = opts[OPT_SLEEP].number != 0;
    f->rma_refused = opts[OPT_RMA].choice == 1;
    *out = f;
    return 0;
}

static void fake_close(vs_transport_t *t)
{
    if (VS_FAKE_MEMORY)
        t->host->debug(t->host->core, "memory: %ld allocations, %ld frees, %ld fills, %ld compares", t->allocs,
                       t->frees, t->fills, t->compares);
    free(t);
}

#if VS_FAKE_MEMORY
/* desc points at the shadow: the only place the bytes are */
typedef struct shadow {
    unsigned char *bytes;   /* a shared mapping of fd (one-sided exposure) */
    size_t map_len;
    int fd;
} shadow_t;

static int fake_mem_alloc(vs_transport_t *t, size_t len, vs_mem_t *mem)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), map_len = (len + page - 1) / page * page;
    shadow_t *sh = calloc(1, sizeof *sh);
    void *addr = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd = memfd_create("versus-fakemem", MFD_CLOEXEC);
    void *bytes = fd >= 0 && !ftruncate(fd, (off_t)map_len)
                      ? mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : MAP_FAILED;
    if (!sh || addr == MAP_FAILED || bytes == MAP_FAILED) {
        if (addr != MAP_FAILED)
            munmap(addr, map_len);
        if (bytes != MAP_FAILED)
            munmap(bytes, map_len);
        if (fd >= 0)
            close(fd);
        free(sh);
        return -ENOMEM;
    }
    sh->bytes = bytes;
    sh->fd = fd;
    sh->map_len = map_len;
    mem->addr = addr;
    mem->len = len;
    mem->desc = sh;
    t->allocs++;
    return 0;
}

static void fake_mem_free(vs_transport_t *t, vs_mem_t *mem)
{
    shadow_t *sh = mem->desc;
    munmap(mem->addr, sh->map_len);
    munmap(sh->bytes, sh->map_len);
    close(sh->fd);
    free(sh);
    t->frees++;
}

static int fake_mem_fill(vs_transport_t *t, vs_mem_t *mem, size_t off, const void *src, size_t len)
{
    shadow_t *sh = mem->desc;
    if (off + len > mem->len)
        return -EMSGSIZE;
    memcpy(sh->bytes + off, src, len);
    t->fills++;
    return 0;
}

static int fake_mem_compare(vs_transport_t *t, const vs_mem_t *mem, size_t off, const void *want, size_t len,
                            vs_mem_diff_t *diff)
{
    const shadow_t *sh = mem->desc;
    if (off + len > mem->len)
        return -EMSGSIZE;
    vs_mem_diff_bytes(sh->bytes + off, want, len, diff);
    t->compares++;
    return 0;
}
#endif

static int fake_query(vs_transport_t *t, vs_transport_info_t *info)
{
    snprintf(info->name, sizeof info->name, "%s", FAKE_NAME);
    snprintf(info->library, sizeof info->library, "fake");
    fake_version(info->version, sizeof info->version);
    info->n_thresholds = 1;
    snprintf(info->thresholds[0].name, sizeof info->thresholds[0].name, "step_at");
    info->thresholds[0].bytes = t->step_at;
    return 0;
}

static int fake_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    (void)t;
    return bs->barrier(bs);
}

static uint64_t half_rtt(fake_t *f, size_t len)
{
    double ns = f->base_ns + (double)len * f->ns_per_byte + ((long)len >= f->step_at ? f->step_ns : 0);
    if (f->noise_pct > 0) {
        f->rng ^= f->rng >> 12;
        f->rng ^= f->rng << 25;
        f->rng ^= f->rng >> 27;
        double u = (double)((f->rng * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
        ns += u * f->noise_pct / 100 * ns;
    }
    return (uint64_t)(ns / 2);
}

static int fake_post(vs_transport_t *t, size_t len, vs_req_t *req)
{
    fake_req_t *r = (fake_req_t *)req->opaque;
    r->deadline = now_ns() + half_rtt(t, len);
    r->effect = FAKE_NONE;
    return 0;
}

static int fake_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag, vs_req_t *req)
{
    (void)mem, (void)peer, (void)tag;
    return fake_post(t, len, req);
}

static int fake_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag, vs_req_t *req)
{
    (void)mem, (void)peer, (void)tag;
    return fake_post(t, len, req);
}

static int fake_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    (void)t;
    fake_req_t *r = (fake_req_t *)req->opaque;
    *done = now_ns() >= r->deadline;
    if (*done)
        fake_complete(r);
    return 0;
}

static int fake_wait(vs_transport_t *t, vs_req_t *req)
{
    uint64_t d = ((fake_req_t *)req->opaque)->deadline;
    if (t->sleep) {
        struct timespec ts = {.tv_sec = (time_t)(d / 1000000000u), .tv_nsec = (long)(d % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    while (now_ns() < d)
        ;
    fake_complete((fake_req_t *)req->opaque);
    return 0;
}

/* ---- one-sided operations */

/* The memfd holding an exposed buffer's bytes, and where they are here. */
typedef struct exposure {
    int fd;
    size_t bytes;
} exposure_t;

typedef struct fake_blob {
    int32_t pid, fd;
    uint64_t bytes, addr;
} fake_blob_t;

static int fake_rma_refused(vs_transport_t *t)
{
    if (!t->rma_refused)
        return 0;
    t->host->error(t->host->core, "one-sided operations refused (rma=refuse), as a library without them would");
    return -ENOTSUP;
}

#if VS_FAKE_MEMORY
static unsigned char *local_bytes(const vs_mem_t *mem)
{
    return ((const shadow_t *)mem->desc)->bytes;
}

static int fake_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (fake_rma_refused(t))
        return -ENOTSUP;
    const shadow_t *sh = mem->desc;
    fake_blob_t b = {.pid = (int32_t)getpid(), .fd = sh->fd, .bytes = sh->map_len,
                     .addr = (uint64_t)(uintptr_t)mem->addr};
    if (*len < sizeof b)
        return -EOVERFLOW;
    memcpy(blob, &b, sizeof b);
    *len = sizeof b;
    return 0;
}
#else
static unsigned char *local_bytes(const vs_mem_t *mem)
{
    return mem->addr;
}

/* Registration does nothing; deregistration gives an exposed buffer's range
 * back to its owner as private memory. */
static int fake_mem_reg(vs_transport_t *t, vs_mem_t *mem)
{
    (void)t;
    mem->desc = NULL;
    return 0;
}

static int fake_mem_dereg(vs_transport_t *t, vs_mem_t *mem)
{
    (void)t;
    exposure_t *x = mem->desc;
    if (!x)
        return 0;
    int rc = mmap(mem->addr, x->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
                     MAP_FAILED ? -errno : 0;
    close(x->fd);
    free(x);
    mem->desc = NULL;
    return rc;
}

/* The buffer's pages move into a memfd, in place: same address, same bytes. */
static int fake_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (fake_rma_refused(t))
        return -ENOTSUP;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if ((uintptr_t)mem->addr % page || mem->len % page || *len < sizeof(fake_blob_t)) {
        t->host->error(t->host->core, "fake one-sided: a buffer to expose must be whole pages");
        return -EINVAL;
    }
    exposure_t *x = mem->desc;
    if (!x) {
        int fd = memfd_create("versus-fake-rma", MFD_CLOEXEC);
        void *tmp = fd >= 0 && !ftruncate(fd, (off_t)mem->len)
                        ? mmap(NULL, mem->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                        : MAP_FAILED;
        if (tmp != MAP_FAILED) {
            memcpy(tmp, mem->addr, mem->len);
            munmap(tmp, mem->len);
        }
        if (tmp == MAP_FAILED || !(x = calloc(1, sizeof *x)) ||
            mmap(mem->addr, mem->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            int e = errno ? errno : ENOMEM;
            t->host->error(t->host->core, "fake one-sided: moving a %zu B buffer into a memfd: %s", mem->len,
                           strerror(e));
            free(x);
            if (fd >= 0)
                close(fd);
            return -e;
        }
        *x = (exposure_t){.fd = fd, .bytes = mem->len};
        mem->desc = x;
    }
    fake_blob_t b = {.pid = (int32_t)getpid(), .fd = x->fd, .bytes = x->bytes, .addr = (uint64_t)(uintptr_t)mem->addr};
    memcpy(blob, &b, sizeof b);
    *len = sizeof b;
    return 0;
}
#endif

static int fake_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out)
{
    fake_blob_t b;
    if (len != sizeof b)
        return -EPROTO;
    memcpy(&b, blob, sizeof b);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)b.pid, (int)b.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    void *a = fd >= 0 ? mmap(NULL, b.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (a == MAP_FAILED) {
        t->host->error(t->host->core, "fake one-sided: cannot map rank %d's buffer (%s): %s", peer, path,
                       strerror(e));
        return -ENOTSUP;
    }
    *out = (vs_rmem_t){.addr = b.addr, .len = b.bytes, .handle = a};
    return 0;
}

static void fake_rma_release(vs_transport_t *t, vs_rmem_t *remote)
{
    (void)t;
    if (remote->handle)
        munmap(remote->handle, remote->len);
    remote->handle = NULL;
}

static int fake_range(vs_transport_t *t, const vs_rmem_t *remote, size_t roff, size_t len)
{
    if (roff > remote->len || len > remote->len - roff) {
        t->host->error(t->host->core, "fake one-sided: %zu B at %zu beyond the %zu B exposed", len, roff,
                       remote->len);
        return -EINVAL;
    }
    return 0;
}

/* Post an operation of len bytes whose effect is done at completion. */
static fake_req_t *fake_post_effect(vs_transport_t *t, size_t len, vs_req_t *req, int effect)
{
    fake_post(t, len, req);
    fake_req_t *r = (fake_req_t *)req->opaque;
    r->effect = effect;
    return r;
}

static int fake_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer,
                    const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    (void)peer;
    int rc = fake_range(t, remote, roff, len);
    if (rc)
        return rc;
    fake_req_t *r = fake_post_effect(t, len, req, FAKE_COPY);
    r->dst = (unsigned char *)remote->handle + roff;
    r->src = local_bytes(local) + loff;
    r->len = len;
    return 0;
}

static int fake_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer,
                    const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    (void)peer;
    int rc = fake_range(t, remote, roff, len);
    if (rc)
        return rc;
    fake_req_t *r = fake_post_effect(t, len, req, FAKE_COPY);
    r->dst = local_bytes(local) + loff;
    r->src = (const unsigned char *)remote->handle + roff;
    r->len = len;
    return 0;
}

static int fake_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result, int peer,
                       const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    (void)peer;
    int rc = fake_range(t, remote, roff, sizeof(uint64_t));
    if (rc || roff % sizeof(uint64_t) || (op != VS_AMO_FADD && op != VS_AMO_CSWAP))
        return rc ? rc : -EINVAL;
    fake_req_t *r = fake_post_effect(t, sizeof(uint64_t), req, op == VS_AMO_FADD ? FAKE_FADD : FAKE_CSWAP);
    r->word = (uint64_t *)((unsigned char *)remote->handle + roff);
    r->operand = operand;
    r->compare = compare;
    r->result = result;
    return 0;
}

static int fake_rma_epoch(vs_transport_t *t, int peer, int role, int phase)
{
    (void)t, (void)peer, (void)role, (void)phase;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static int fake_rma_sync(vs_transport_t *t, vs_mem_t *mem)
{
    (void)t, (void)mem;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 0;
}

static const vs_transport_ops_t fake_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = FAKE_NAME,
    .summary = VS_FAKE_MEMORY ? "synthetic transport for tests, owning its buffers (memory operations)"
                              : "synthetic transport for tests: operations spin for a known time",
    .library_version = fake_version,
    .open = fake_open,
    .close = fake_close,
    .query = fake_query,
    .connect = fake_connect,
    .post_send = fake_post_send,
    .post_recv = fake_post_recv,
    .test = fake_test,
    .wait = fake_wait,
    .options = fake_options,
    .n_options = sizeof fake_options / sizeof fake_options[0],
#if VS_FAKE_MEMORY
    .mem_alloc = fake_mem_alloc,
    .mem_free = fake_mem_free,
    .mem_fill = fake_mem_fill,
    .mem_compare = fake_mem_compare,
#else
    .mem_reg = fake_mem_reg,
    .mem_dereg = fake_mem_dereg,
#endif
    .rma_expose = fake_rma_expose,
    .rma_attach = fake_rma_attach,
    .rma_release = fake_rma_release,
    .put = fake_put,
    .get = fake_get,
    .atomic = fake_atomic,
    .rma_epoch = fake_rma_epoch,
    .rma_sync = fake_rma_sync,
};

#if VS_FAKE_ABI4
/* Built as "fake4": a module of interface 4, whose table ends where the
 * one-sided operations begin.  Its table is copied to the very end of a page
 * followed by an inaccessible one, so a runner that read one byte past it
 * would crash instead of finding the one-sided operations above. */
__attribute__((visibility("default"))) const vs_transport_ops_t *vs_transport_entry(void);
const vs_transport_ops_t *vs_transport_entry(void)
{
    static const vs_transport_ops_t *table;
    if (table)
        return table;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = VS_TRANSPORT_OPS_SIZE_4;
    unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    vs_transport_ops_t four = fake_ops;
    four.abi = 4;
    four.size = (uint32_t)len;
    memcpy(map + page - len, &four, len);
    if (mprotect(map + page, page, PROT_NONE) || mprotect(map, page, PROT_READ))
        return NULL;
    table = (const vs_transport_ops_t *)(map + page - len);
    return table;
}
#else
VS_TRANSPORT_DEFINE(fake_ops)
#endif
