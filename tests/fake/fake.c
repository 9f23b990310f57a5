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
 * each operation was called. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <versus/transport.h>

typedef struct vs_transport {
    const vs_host_t *host;
    double base_ns, ns_per_byte, step_ns, noise_pct;
    long step_at;
    int sleep;
    uint64_t rng;
    long allocs, frees, fills, compares;
} fake_t;

#ifndef VS_FAKE_MEMORY
#define VS_FAKE_MEMORY 0
#endif
#define FAKE_NAME (VS_FAKE_MEMORY ? "fakemem" : "fake")

typedef struct fake_req {
    uint64_t deadline;
} fake_req_t;

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

enum { OPT_BASE_NS, OPT_NS_PER_BYTE, OPT_STEP_AT, OPT_STEP_NS, OPT_NOISE_PCT, OPT_SEED, OPT_SLEEP, N_OPTS };

static const vs_option_t fake_options[N_OPTS] = {
    [OPT_BASE_NS] = {"base_ns", VS_OPT_NUMBER, NULL, 0, "1000", "time of a zero-byte message, ns"},
    [OPT_NS_PER_BYTE] = {"ns_per_byte", VS_OPT_NUMBER, NULL, 0, "1", "time per byte, ns"},
    [OPT_STEP_AT] = {"step_at", VS_OPT_NUMBER, NULL, 0, "3000", "size from which step_ns is added, bytes"},
    [OPT_STEP_NS] = {"step_ns", VS_OPT_NUMBER, NULL, 0, "5000", "the step's height, ns"},
    [OPT_NOISE_PCT] = {"noise_pct", VS_OPT_NUMBER, NULL, 0, "0", "uniform noise, % of the time"},
    [OPT_SEED] = {"seed", VS_OPT_NUMBER, NULL, 0, "fixed", "noise seed"},
    [OPT_SLEEP] = {"sleep", VS_OPT_NUMBER, NULL, 0, "0",
                   "1: a blocking wait sleeps to its deadline instead of spinning"},
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
    unsigned char *bytes;
    size_t map_len;
} shadow_t;

static int fake_mem_alloc(vs_transport_t *t, size_t len, vs_mem_t *mem)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), map_len = (len + page - 1) / page * page;
    shadow_t *sh = calloc(1, sizeof *sh);
    void *addr = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!sh || addr == MAP_FAILED || !(sh->bytes = calloc(1, len))) {
        if (addr != MAP_FAILED)
            munmap(addr, map_len);
        free(sh);
        return -ENOMEM;
    }
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
    free(sh->bytes);
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
    *done = now_ns() >= ((fake_req_t *)req->opaque)->deadline;
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
#endif
};

VS_TRANSPORT_DEFINE(fake_ops)
