/* The ops-table conformance check, for every transport module: two real
 * processes drive the module directly through its ops table and check what versus-run cannot see:
 * payloads arrive intact at every size (odd ones included), tags match in
 * order with early arrivals, messages sharing a tag are received in the
 * order sent, a too-short receive fails with -EMSGSIZE and
 * the stream stays usable, and a peer that dies is reported, never waited
 * for forever.
 *
 * usage: transport_check MODULE.so [--max BYTES] [--peer-death] [--register]
 *                        [--expect-shm-mapping] [--truncation-ends-stream] [--rma] [KEY=VALUE]...
 * --register allocates every buffer as versus-run does (whole pages) and
 * registers it with the module (mem_reg); --expect-shm-mapping then also
 * demands that each rank hold a read-only mapping of a peer's buffer named
 * versus-shm-buffer (/proc/self/maps): shm's single copy.
 * --truncation-ends-stream checks one short receive, last, and not what
 * follows it: for a library whose stream from that peer stops after a
 * truncation (the backend says why in its meson.build).
 * --rma checks the one-sided operations instead (interface 5): each rank
 * exposes two buffers and attaches the peer's; each way, puts of 0 B to 4 MiB
 * (offsets 0 and odd) are checked at the target after the origin's END and
 * the source is reused as soon as a put completes, gets are checked at the
 * origin as soon as they complete, and fetch-and-add and compare-and-swap
 * return the word before.  A module without them (VS_HAS_RMA), or one that
 * refuses them here (-ENOTSUP from rma_expose, its reason through
 * host->error), exits 77 with a SKIP line.  A parent forks
 * both ranks (as versus-run's local launcher does) and reaps them; the ranks
 * meet through a socketpair bootstrap.  A module that brings its own
 * bootstrap (MPI) is started by its launcher instead, one process per rank.  Exit 0 when
 * every claim held, 1 otherwise; an alarm turns a hang into a failure. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <versus/option.h>
#include <versus/transport.h>

#define TAG_PP 1
#define HANG_LIMIT_S 120

typedef struct check {
    const vs_transport_ops_t *ops;
    vs_transport_t *t;
    vs_bootstrap_t *bs;   /* the pair below, or the module's own (MPI) */
    vs_bootstrap_t pair;
    int fd;
    int rank;
    vs_mem_t sbuf, rbuf;
    int last_error_seen;
    int reg;         /* --register */
    int connected;   /* connect returned: the pair bootstrap drives progress while it waits */
} check_t;

static int io_full(int fd, void *buf, size_t n, int writing)
{
    for (size_t o = 0; o < n;) {
        ssize_t k = writing ? write(fd, (char *)buf + o, n - o) : read(fd, (char *)buf + o, n - o);
        if (k <= 0)
            return -EIO;
        o += (size_t)k;
    }
    return 0;
}

/* Until the peer's bytes are there, drive the module's progress as versus-run's
 * bootstrap does while it waits (core/idle.h): often at first, then between
 * sleeps of 1, 2, 4 ... 64 ms.  A library may still have work of a completed
 * operation queued for the peer (a rendezvous acknowledgement that found its
 * queue full), which only progress sends; a rank blocked in read() would hold it
 * back, and the peer would wait for it for ever. */
static int wait_readable(check_t *c)
{
    int ms = 0;
    for (long spins = 0;; spins++) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int k = poll(&p, 1, ms);
        if (k > 0)
            return 0;
        if (k < 0 && errno != EINTR)
            return -EIO;
        if (c->connected && c->ops->progress)
            c->ops->progress(c->t);
        if (spins >= 1000)
            ms = ms ? (ms < 64 ? ms * 2 : 64) : 1;
    }
}

static int pair_exchange(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    check_t *c = bs->ctx;
    memcpy((char *)all + (size_t)bs->rank * len, mine, len);
    if (io_full(c->fd, (void *)mine, len, 1) || wait_readable(c))
        return -EIO;
    return io_full(c->fd, (char *)all + (size_t)(1 - bs->rank) * len, len, 0);
}

static int pair_barrier(vs_bootstrap_t *bs)
{
    char a = 0, b[2];
    return pair_exchange(bs, &a, b, 1);
}

static void host_error(void *core, const char *fmt, ...)
{
    check_t *c = core;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: module says: ", c->rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    c->last_error_seen = 1;
}

static void host_debug(void *core, const char *fmt, ...)
{
    (void)core;
    (void)fmt;
}

/* Peer buffers mapped into this process: shm maps them read-only and shared
 * from the owner's memfd (its own registered buffers are read-write). */
static int peer_buffers_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, " r--s ") && strstr(line, "versus-shm-buffer");
    if (f)
        fclose(f);
    return n;
}

/* A buffer of at least len bytes: malloc'd, or whole pages registered with
 * the module under --register. */
static vs_mem_t buf_new(check_t *c, size_t len)
{
    if (!c->reg)
        return (vs_mem_t){malloc(len ? len : 1), len, NULL};
    size_t bytes = (len + 4096) / 4096 * 4096;
    vs_mem_t m = {aligned_alloc(4096, bytes), bytes, NULL};
    if (m.addr && c->ops->mem_reg && c->ops->mem_reg(c->t, &m)) {
        free(m.addr);
        m.addr = NULL;
    }
    m.len = len;
    return m;
}

static void buf_free(check_t *c, vs_mem_t *m)
{
    if (c->reg && m->addr && c->ops->mem_dereg) {
        m->len = (m->len + 4096) / 4096 * 4096;
        c->ops->mem_dereg(c->t, m);
    }
    free(m->addr);
    m->addr = NULL;
}

#define FAIL(c, ...)                                                                          \
    do {                                                                                      \
        fprintf(stderr, "FAIL rank %d: ", (c)->rank);                                         \
        fprintf(stderr, __VA_ARGS__);                                                         \
        fputc('\n', stderr);                                                                  \
        return 1;                                                                             \
    } while (0)

static unsigned char pattern_byte(size_t i, int from, size_t len)
{
    return (unsigned char)(i * 131 + (size_t)from * 17 + len * 7 + (i >> 12));
}

static void fill(unsigned char *b, size_t len, int from)
{
    for (size_t i = 0; i < len; i++)
        b[i] = pattern_byte(i, from, len);
}

static int verify(check_t *c, const unsigned char *b, size_t len, int from, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pattern_byte(i, from, len))
            FAIL(c, "%s: %zu B message corrupt at byte %zu", what, len, i);
    return 0;
}

static int send_wait(check_t *c, size_t len, int peer, uint64_t tag)
{
    vs_req_t req;
    int rc = c->ops->post_send(c->t, &c->sbuf, len, peer, tag, &req);
    return rc ? rc : c->ops->wait(c->t, &req);
}

static int recv_wait(check_t *c, vs_mem_t *m, size_t len, int peer, uint64_t tag)
{
    vs_req_t req;
    int rc = c->ops->post_recv(c->t, m, len, peer, tag, &req);
    return rc ? rc : c->ops->wait(c->t, &req);
}

/* One round trip, blocking (module's send/recv where it has them) or
 * nonblocking (receive posted before the send, completion by test). */
static int round_trip(check_t *c, size_t len, int nonblocking)
{
    const vs_transport_ops_t *o = c->ops;
    int peer = 1 - c->rank, rc, done = 0;
    memset(c->rbuf.addr, 0xee, len + 1);
    if (nonblocking) {
        vs_req_t rreq;
        if ((rc = o->post_recv(c->t, &c->rbuf, len, peer, TAG_PP, &rreq)))
            return rc;
        if (c->rank == 0 && (rc = send_wait(c, len, peer, TAG_PP)))
            return rc;
        while (!rc && !done)
            rc = o->test(c->t, &rreq, &done);
        if (rc)
            return rc;
        if (c->rank == 1 && (rc = send_wait(c, len, peer, TAG_PP)))
            return rc;
    } else if (c->rank == 0) {
        if ((rc = o->send ? o->send(c->t, &c->sbuf, len, peer, TAG_PP) : send_wait(c, len, peer, TAG_PP)))
            return rc;
        if ((rc = o->recv ? o->recv(c->t, &c->rbuf, len, peer, TAG_PP) : recv_wait(c, &c->rbuf, len, peer, TAG_PP)))
            return rc;
    } else {
        if ((rc = o->recv ? o->recv(c->t, &c->rbuf, len, peer, TAG_PP) : recv_wait(c, &c->rbuf, len, peer, TAG_PP)))
            return rc;
        if ((rc = o->send ? o->send(c->t, &c->sbuf, len, peer, TAG_PP) : send_wait(c, len, peer, TAG_PP)))
            return rc;
    }
    if (((unsigned char *)c->rbuf.addr)[len] != 0xee)
        return -EOVERFLOW; /* wrote past the message */
    return verify(c, c->rbuf.addr, len, peer, nonblocking ? "nonblocking" : "blocking") ? -EBADMSG : 0;
}

static int check_sizes(check_t *c, size_t max)
{
    static const size_t base[] = {0, 1, 3, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1000, 4095, 4096, 4097,
                                  8191, 8192, 8193, 12345, 65535, 65536, 65537, 100003, 1048579,
                                  4194304, 4194305, 67108864 + 5};
    for (size_t i = 0; i < sizeof base / sizeof base[0] && base[i] <= max; i++) {
        size_t len = base[i];
        fill(c->sbuf.addr, len, c->rank);
        for (int nb = 0; nb < 2; nb++)
            for (int rep = 0; rep < 3; rep++) {
                int rc = round_trip(c, len, nb);
                if (rc)
                    FAIL(c, "%s round trip of %zu B: %s", nb ? "nonblocking" : "blocking", len,
                         strerror(-rc));
            }
    }
    printf("rank %d: ok: payloads intact from 0 B to %zu B, blocking and nonblocking\n", c->rank, max);
    return 0;
}

/* Rank 1 sends tag 7 then tag 8 before rank 0 posts anything; rank 0
 * receives tag 8 first.  Each message must land in the receive of its tag. */
static int check_early_arrivals(check_t *c, size_t len7, size_t len8)
{
    vs_mem_t r7 = buf_new(c, len7 + 1), r8 = buf_new(c, len8 + 1), m8 = buf_new(c, len8);
    int rc = 0;
    if (!r7.addr || !r8.addr || !m8.addr)
        FAIL(c, "out of memory");
    if (c->rank == 1) {
        vs_req_t q7, q8;
        fill(c->sbuf.addr, len7, 7);
        fill(m8.addr, len8, 8);
        if ((rc = c->ops->post_send(c->t, &c->sbuf, len7, 0, 7, &q7)) ||
            (rc = c->ops->post_send(c->t, &m8, len8, 0, 8, &q8)))
            FAIL(c, "posting early sends: %s", strerror(-rc));
        if ((rc = c->bs->barrier(c->bs)))
            FAIL(c, "barrier");
        if ((rc = c->ops->wait(c->t, &q7)) || (rc = c->ops->wait(c->t, &q8)))
            FAIL(c, "early sends: %s", strerror(-rc));
    } else {
        if ((rc = c->bs->barrier(c->bs)))
            FAIL(c, "barrier");
        usleep(20000); /* let them arrive before anything is posted */
        vs_req_t q7, q8;
        if ((rc = c->ops->post_recv(c->t, &r8, len8, 1, 8, &q8)) ||
            (rc = c->ops->post_recv(c->t, &r7, len7, 1, 7, &q7)) ||
            (rc = c->ops->wait(c->t, &q8)) || (rc = c->ops->wait(c->t, &q7)))
            FAIL(c, "receiving early arrivals %zu B / %zu B in reverse tag order: %s", len7, len8,
                 strerror(-rc));
        if (verify(c, r7.addr, len7, 7, "tag 7") || verify(c, r8.addr, len8, 8, "tag 8"))
            return 1;
    }
    buf_free(c, &r7);
    buf_free(c, &r8);
    buf_free(c, &m8);
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: early arrivals of %zu B and %zu B matched by tag in reverse order\n", c->rank,
           len7, len8);
    return 0;
}

/* Three messages with one tag, eager and staged sizes mixed, land in the
 * receives of that tag in the order they were sent: when they arrive before
 * any receive (unexpected queue) and when the receives wait for them
 * (posted queue). */
static int check_same_tag_order(check_t *c, int posted_first)
{
    static const size_t len[3] = {100, 200000, 37};
    const size_t cap = 200001;
    const uint64_t tag = posted_first ? 6 : 5;
    vs_mem_t s[3], r[3];
    vs_req_t q[3];
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        s[i] = buf_new(c, len[i]);
        r[i] = buf_new(c, cap);
        if (!s[i].addr || !r[i].addr)
            FAIL(c, "out of memory");
        fill(s[i].addr, len[i], 50 + i);
    }
    if (c->rank == 1) {
        if (posted_first && c->bs->barrier(c->bs))
            FAIL(c, "barrier");
        for (int i = 0; i < 3 && !rc; i++)
            rc = c->ops->post_send(c->t, &s[i], len[i], 0, tag, &q[i]);
        if (rc)
            FAIL(c, "posting sends with one tag: %s", strerror(-rc));
        if (!posted_first && c->bs->barrier(c->bs))
            FAIL(c, "barrier");
        for (int i = 0; i < 3 && !rc; i++)
            rc = c->ops->wait(c->t, &q[i]);
        if (rc)
            FAIL(c, "sends with one tag: %s", strerror(-rc));
    } else {
        if (!posted_first) {
            if (c->bs->barrier(c->bs))
                FAIL(c, "barrier");
            usleep(20000); /* let them arrive before anything is posted */
        }
        for (int i = 0; i < 3 && !rc; i++)
            rc = c->ops->post_recv(c->t, &r[i], cap, 1, tag, &q[i]);
        if (rc)
            FAIL(c, "posting receives with one tag: %s", strerror(-rc));
        if (posted_first && c->bs->barrier(c->bs))
            FAIL(c, "barrier");
        for (int i = 0; i < 3 && !rc; i++)
            rc = c->ops->wait(c->t, &q[i]);
        if (rc)
            FAIL(c, "receives with one tag: %s", strerror(-rc));
        for (int i = 0; i < 3; i++)
            if (verify(c, r[i].addr, len[i], 50 + i, posted_first ? "posted, one tag" : "early, one tag"))
                return 1;
    }
    for (int i = 0; i < 3; i++) {
        buf_free(c, &s[i]);
        buf_free(c, &r[i]);
    }
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: messages with one tag matched in the order sent (%s)\n", c->rank,
           posted_first ? "receives posted first" : "early arrivals");
    return 0;
}

/* A blocking send (send = 1) or receive through the module's own pair when
 * it has one, else post + wait. */
static int xfer_now(check_t *c, vs_mem_t *m, size_t len, int peer, uint64_t tag, int send)
{
    if (send && c->ops->send)
        return c->ops->send(c->t, m, len, peer, tag);
    if (!send && c->ops->recv)
        return c->ops->recv(c->t, m, len, peer, tag);
    vs_req_t q;
    int rc = send ? c->ops->post_send(c->t, m, len, peer, tag, &q) : c->ops->post_recv(c->t, m, len, peer, tag, &q);
    return rc ? rc : c->ops->wait(c->t, &q);
}

/* Tiny and larger messages of one tag, interleaved, in bursts of 1 to 6
 * sent before the receiver looks, each burst answered by a short reply:
 * a module that sends what fits a line by another route than the rest
 * (and learns from the replies when that route is free again) must still
 * deliver them in the order sent.  Blocking calls (the module's own pair
 * where it has one) in odd rounds, post + wait in even ones. */
static int check_mixed_order(check_t *c)
{
    static const size_t sizes[] = {8, 0, 33, 16, 1000, 32, 31, 9000, 1, 24, 64, 7, 40000, 2};
    enum { NS = sizeof sizes / sizeof sizes[0], ROUNDS = 60, BURST = 6, TAG = 9 };
    const size_t cap = 40000;
    vs_mem_t s[BURST], r[BURST], ack = buf_new(c, 8);
    vs_req_t q[BURST];
    int rc = 0, k = 0;
    for (int i = 0; i < BURST; i++) {
        s[i] = buf_new(c, cap);
        r[i] = buf_new(c, cap);
        if (!s[i].addr || !r[i].addr || !ack.addr)
            FAIL(c, "out of memory");
    }
    for (int round = 0; round < ROUNDS && c->rank < 2; round++) {
        int n = 1 + round % BURST, blocking = round % 2;
        if (c->rank == 1) {
            for (int i = 0; i < n && !rc; i++, k++) {
                fill(s[i].addr, sizes[k % NS], 70 + k % 50);
                rc = blocking ? xfer_now(c, &s[i], sizes[k % NS], 0, TAG, 1)
                              : c->ops->post_send(c->t, &s[i], sizes[k % NS], 0, TAG, &q[i]);
            }
            for (int i = 0; i < n && !rc && !blocking; i++)
                rc = c->ops->wait(c->t, &q[i]);
            if (!rc)
                rc = xfer_now(c, &ack, 8, 0, TAG, 0);
            if (rc)
                FAIL(c, "mixed sizes, round %d: %s", round, strerror(-rc));
        } else {
            for (int i = 0; i < n && !rc; i++)
                rc = blocking ? xfer_now(c, &r[i], cap, 1, TAG, 0)
                              : c->ops->post_recv(c->t, &r[i], cap, 1, TAG, &q[i]);
            for (int i = 0; i < n && !rc && !blocking; i++)
                rc = c->ops->wait(c->t, &q[i]);
            if (rc)
                FAIL(c, "mixed sizes, round %d: %s", round, strerror(-rc));
            for (int i = 0; i < n; i++, k++)
                if (verify(c, r[i].addr, sizes[k % NS], 70 + k % 50, "mixed sizes, in the order sent"))
                    return 1;
            fill(ack.addr, 8, round);
            if ((rc = xfer_now(c, &ack, 8, 1, TAG, 1)))
                FAIL(c, "mixed sizes, reply of round %d: %s", round, strerror(-rc));
        }
    }
    for (int i = 0; i < BURST; i++) {
        buf_free(c, &s[i]);
        buf_free(c, &r[i]);
    }
    buf_free(c, &ack);
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: tiny and larger messages of one tag, interleaved in bursts, matched in the order sent\n",
           c->rank);
    return 0;
}

/* A receive shorter than the message fails with -EMSGSIZE, and the next
 * message on the same pair still arrives intact. */
static int check_too_short(check_t *c, size_t len, int trunc_ends)
{
    int rc;
    if (c->rank == 1) {
        fill(c->sbuf.addr, len, 1);
        if ((rc = send_wait(c, len, 0, 3)) || (!trunc_ends && (rc = send_wait(c, len, 0, 4))))
            FAIL(c, "sending: %s", strerror(-rc));
    } else {
        c->last_error_seen = 0;
        rc = recv_wait(c, &c->rbuf, len / 2, 1, 3);
        if (rc != -EMSGSIZE)
            FAIL(c, "a %zu B message into a %zu B receive gave %d, not -EMSGSIZE", len, len / 2, rc);
        if (!c->last_error_seen)
            FAIL(c, "-EMSGSIZE came without a message through host->error");
        if (!trunc_ends && (rc = recv_wait(c, &c->rbuf, len, 1, 4)))
            FAIL(c, "the message after a failed receive: %s", strerror(-rc));
        if (!trunc_ends && verify(c, c->rbuf.addr, len, 1, "after -EMSGSIZE"))
            return 1;
    }
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: %zu B into a %zu B receive is -EMSGSIZE; %s\n", c->rank, len, len / 2,
           trunc_ends ? "the stream after it is not checked (--truncation-ends-stream)" : "the stream goes on");
    return 0;
}

/* Rank 1 posts n sends of one buffer before waiting for any, then waits for
 * the last first and the first last: every send must complete, however many
 * of them were in flight at once (shm single copy has 256 ack slots). */
static int check_many_in_flight(check_t *c, int n, size_t len)
{
    vs_req_t *q = calloc((size_t)n, sizeof *q);
    unsigned char *area = malloc((size_t)n * len);
    int rc = 0;
    if (!q || !area)
        FAIL(c, "out of memory");
    if (c->rank == 1) {
        fill(c->sbuf.addr, len, 1);
        for (int i = 0; i < n && !rc; i++)
            rc = c->ops->post_send(c->t, &c->sbuf, len, 0, 11, &q[i]);
        for (int i = n - 1; i >= 0 && !rc; i--)
            rc = c->ops->wait(c->t, &q[i]);
        if (rc)
            FAIL(c, "%d sends of %zu B in flight: %s", n, len, strerror(-rc));
    } else {
        for (int i = 0; i < n && !rc; i++) {
            vs_mem_t m = {area + (size_t)i * len, len, NULL};
            rc = c->ops->post_recv(c->t, &m, len, 1, 11, &q[i]);
        }
        for (int i = 0; i < n && !rc; i++)
            rc = c->ops->wait(c->t, &q[i]);
        if (rc)
            FAIL(c, "%d receives of %zu B: %s", n, len, strerror(-rc));
        for (int i = 0; i < n; i++)
            if (verify(c, area + (size_t)i * len, len, 1, "many in flight"))
                return 1;
    }
    free(q);
    free(area);
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: %d sends of %zu B in flight at once all complete, waited for in reverse\n",
           c->rank, n, len);
    return 0;
}

/* Rank 1 exits without a word; rank 0's pending receive must fail. */
static int check_peer_death(check_t *c)
{
    if (c->rank == 1)
        _exit(0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = recv_wait(c, &c->rbuf, 8, 1, 9);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (rc != -ECONNRESET)
        FAIL(c, "waiting on a dead peer gave %d (%s), not -ECONNRESET", rc, strerror(-rc));
    printf("rank 0: ok: a vanished peer is -ECONNRESET after %.2f s\n", s);
    return 0;
}

/* ---- one-sided (--rma) ------------------------------------------------------ */

#define RMA_WIN (4194304 + 4096) /* the largest put (4 MiB) at an odd offset, with room */
#define RMA_TAG_DONE 21
#define RMA_WORD_OFF 16          /* the atomics' word in the second exposed buffer */

typedef struct rma_blob {
    int32_t rc;      /* rma_expose's: both ranks skip when either was refused */
    uint32_t len;
    unsigned char blob[VS_RMA_BLOB_BYTES];
} rma_blob_t;

/* Whole pages, as core allocates them. */
static vs_mem_t rma_buf(size_t len)
{
    size_t bytes = (len + 4095) / 4096 * 4096;
    vs_mem_t m = {aligned_alloc(4096, bytes), bytes, NULL};
    if (m.addr)
        memset(m.addr, 0xee, bytes);
    return m;
}

static void rma_buf_free(check_t *c, vs_mem_t *m)
{
    if (m->addr && c->ops->mem_dereg)
        c->ops->mem_dereg(c->t, m);
    free(m->addr);
    m->addr = NULL;
}

/* The target waits for the origin's word that the access is over: through
 * the module's own receive, so that a library which emulates one-sided
 * operations with messages is progressed meanwhile. */
static int rma_done(check_t *c, int origin)
{
    unsigned char b[8] = {1};
    vs_mem_t tok = {b, sizeof b, NULL};
    if (c->rank != origin)
        return recv_wait(c, &tok, 1, 1 - c->rank, RMA_TAG_DONE);
    vs_req_t req;
    int rc = c->ops->post_send(c->t, &tok, 1, 1 - c->rank, RMA_TAG_DONE, &req);
    return rc ? rc : c->ops->wait(c->t, &req);
}

/* The first byte of [from, to) that is not 0xee, or to. */
static size_t first_touched(const unsigned char *b, size_t from, size_t to)
{
    while (from < to && b[from] == 0xee)
        from++;
    return from;
}

static int rma_epoch(check_t *c, int origin, int phase)
{
    return c->ops->rma_epoch(c->t, 1 - c->rank, c->rank == origin ? VS_RMA_ORIGIN : VS_RMA_TARGET, phase);
}

/* The target's side of one access: open and close it, wait for the origin's
 * word, make the bytes visible. */
static int rma_target_side(check_t *c, int origin, vs_mem_t *exposed)
{
    int rc;
    if ((rc = rma_epoch(c, origin, VS_RMA_BEGIN)) || (rc = rma_epoch(c, origin, VS_RMA_END)) ||
        (rc = rma_done(c, origin)) || (c->ops->rma_sync && (rc = c->ops->rma_sync(c->t, exposed))))
        return rc;
    return 0;
}

static int rma_wait(check_t *c, vs_req_t *req, int nonblocking)
{
    int rc = 0, done = 0;
    if (!nonblocking)
        return c->ops->wait(c->t, req);
    while (!rc && !done)
        rc = c->ops->test(c->t, req, &done);
    return rc;
}

static const size_t rma_sizes[] = {0, 1, 3, 7, 8, 63, 64, 65, 4095, 4096, 4097, 65536, 65537, 1048579, 4194304};

/* Put of every size from origin into the target's window, at offset 0 and at
 * odd offsets on both sides, checked at the target after the origin's END:
 * the bytes, and the bytes around them untouched.  The source is overwritten
 * as soon as the put is complete (a complete put may reuse its buffer). */
static int check_rma_put(check_t *c, int origin, vs_mem_t *win, vs_mem_t *src, const vs_rmem_t *rwin)
{
    const int peer = 1 - c->rank;
    int rc;
    for (size_t i = 0; i < sizeof rma_sizes / sizeof rma_sizes[0]; i++) {
        for (int odd = 0; odd < 2; odd++) {
            size_t len = rma_sizes[i], loff = odd ? 3 : 0, roff = odd ? 4096 - 5 : 0;
            if (c->rank != origin)
                memset(win->addr, 0xee, win->len);
            else
                fill((unsigned char *)src->addr + loff, len, origin);
            if ((rc = c->bs->barrier(c->bs)))
                FAIL(c, "barrier");
            if (c->rank == origin) {
                vs_req_t req;
                if ((rc = rma_epoch(c, origin, VS_RMA_BEGIN)) ||
                    (rc = c->ops->put(c->t, src, loff, len, peer, rwin, roff, &req)) ||
                    (rc = rma_wait(c, &req, (int)(i & 1))))
                    FAIL(c, "put of %zu B at offsets %zu/%zu: %s", len, loff, roff, strerror(-rc));
                memset(src->addr, 0x55, len + loff); /* complete: the buffer is the origin's again */
                if ((rc = rma_epoch(c, origin, VS_RMA_END)) || (rc = rma_done(c, origin)))
                    FAIL(c, "ending the access of a %zu B put: %s", len, strerror(-rc));
            } else {
                if ((rc = rma_target_side(c, origin, win)))
                    FAIL(c, "target of a %zu B put: %s", len, strerror(-rc));
                const unsigned char *w = win->addr;
                if (verify(c, w + roff, len, origin, "put, at the target after the origin's END"))
                    return 1;
                size_t before = first_touched(w, 0, roff), after = first_touched(w, roff + len, win->len);
                if (before < roff || after < win->len)
                    FAIL(c, "a %zu B put at offset %zu wrote byte %zu outside it", len, roff,
                         before < roff ? before : after);
            }
        }
    }
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: puts from rank %d of 0 B to 4 MiB (offsets 0 and odd) intact at the target after END, "
           "nothing around them touched\n", c->rank, origin);
    return 0;
}

/* Get of every size from the target's window, checked at the origin as soon
 * as the get is complete (before its END). */
static int check_rma_get(check_t *c, int origin, vs_mem_t *win, vs_mem_t *dst, const vs_rmem_t *rwin)
{
    const int peer = 1 - c->rank;
    int rc;
    for (size_t i = 0; i < sizeof rma_sizes / sizeof rma_sizes[0]; i++) {
        for (int odd = 0; odd < 2; odd++) {
            size_t len = rma_sizes[i], loff = odd ? 4096 - 5 : 0, roff = odd ? 3 : 0;
            if (c->rank != origin)
                fill((unsigned char *)win->addr + roff, len, c->rank);
            else
                memset(dst->addr, 0xee, dst->len);
            if ((rc = c->bs->barrier(c->bs)))
                FAIL(c, "barrier");
            if (c->rank == origin) {
                vs_req_t req;
                if ((rc = rma_epoch(c, origin, VS_RMA_BEGIN)) ||
                    (rc = c->ops->get(c->t, dst, loff, len, peer, rwin, roff, &req)) ||
                    (rc = rma_wait(c, &req, (int)(i & 1))))
                    FAIL(c, "get of %zu B at offsets %zu/%zu: %s", len, loff, roff, strerror(-rc));
                const unsigned char *d = dst->addr;
                if (verify(c, d + loff, len, peer, "get, at the origin once complete"))
                    return 1;
                if ((loff && d[loff - 1] != 0xee) || d[loff + len] != 0xee)
                    FAIL(c, "a %zu B get at offset %zu wrote past its bytes", len, loff);
                if ((rc = rma_epoch(c, origin, VS_RMA_END)) || (rc = rma_done(c, origin)))
                    FAIL(c, "ending the access of a %zu B get: %s", len, strerror(-rc));
            } else if ((rc = rma_target_side(c, origin, win))) {
                FAIL(c, "target of a %zu B get: %s", len, strerror(-rc));
            }
        }
    }
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: gets by rank %d of 0 B to 4 MiB (offsets 0 and odd) intact at the origin once "
           "complete\n", c->rank, origin);
    return 0;
}

/* Fetch-and-add and compare-and-swap on one word of the target: each result
 * is the word before, a failed compare leaves the word, a carry crosses 32
 * bits, and the words beside it are untouched. */
static int check_rma_atomics(check_t *c, int origin, vs_mem_t *amo, const vs_rmem_t *ramo)
{
    const int peer = 1 - c->rank;
    uint64_t *w = (uint64_t *)((unsigned char *)amo->addr + RMA_WORD_OFF);
    const uint64_t start = UINT64_C(0xffffffff) + (uint64_t)origin, beside = UINT64_C(0x0123456789abcdef);
    int rc;
    if (!c->ops->atomic) {
        printf("rank %d: ok: no atomic operation offered (atomic is NULL): the atomic patterns refuse "
               "this module\n", c->rank);
        return 0;
    }
    if (c->rank != origin) {
        w[-1] = beside;
        w[0] = start;
        w[1] = ~beside;
    }
    if ((rc = c->bs->barrier(c->bs)))
        FAIL(c, "barrier");
    if (c->rank == origin) {
        static const struct {
            int op;
            uint64_t operand, compare;
        } steps[] = {
            {VS_AMO_FADD, 1, 0},                     /* start + 1: a carry past 32 bits */
            {VS_AMO_FADD, UINT64_C(0x100000000), 0}, /* + 2^32 */
            {VS_AMO_CSWAP, 42, 7},                   /* the compare fails: the word stays */
            {VS_AMO_CSWAP, 42, 0},                   /* the compare (the word, below) holds: 42 */
            {VS_AMO_FADD, (uint64_t)-2, 0},          /* 42 - 2, wrapping */
        };
        uint64_t word = start;
        if ((rc = rma_epoch(c, origin, VS_RMA_BEGIN)))
            FAIL(c, "opening the atomics' access: %s", strerror(-rc));
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            uint64_t compare = steps[s].op == VS_AMO_CSWAP && s == 3 ? word : steps[s].compare;
            uint64_t result = UINT64_C(0xdeadbeefdeadbeef);
            vs_req_t req;
            if ((rc = c->ops->atomic(c->t, steps[s].op, steps[s].operand, compare, &result, peer, ramo,
                                     RMA_WORD_OFF, &req)) ||
                (rc = rma_wait(c, &req, (int)(s & 1))))
                FAIL(c, "atomic step %zu (%s): %s", s, steps[s].op == VS_AMO_FADD ? "fetch-and-add" : "compare-and-swap",
                     strerror(-rc));
            if (result != word)
                FAIL(c, "%s step %zu returned %#llx, the word was %#llx",
                     steps[s].op == VS_AMO_FADD ? "fetch-and-add" : "compare-and-swap", s,
                     (unsigned long long)result, (unsigned long long)word);
            if (steps[s].op == VS_AMO_FADD)
                word += steps[s].operand;
            else if (compare == word)
                word = steps[s].operand;
        }
        if ((rc = rma_epoch(c, origin, VS_RMA_END)) || (rc = rma_done(c, origin)))
            FAIL(c, "ending the atomics' access: %s", strerror(-rc));
    } else {
        if ((rc = rma_target_side(c, origin, amo)))
            FAIL(c, "target of the atomics: %s", strerror(-rc));
        if (w[0] != 40 || w[-1] != beside || w[1] != ~beside)
            FAIL(c, "after the atomics the word is %#llx (want 0x28), beside it %#llx and %#llx (untouched: %#llx, %#llx)",
                 (unsigned long long)w[0], (unsigned long long)w[-1], (unsigned long long)w[1],
                 (unsigned long long)beside, (unsigned long long)~beside);
    }
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: fetch-and-add and compare-and-swap by rank %d return the word before, a failed "
           "compare leaves it, 64-bit carries, the words beside untouched\n", c->rank, origin);
    return 0;
}

/* Expose a window and the atomics' buffer on both ranks, attach the peer's,
 * then put, get and atomics each way.  77 when the module refuses (its reason
 * came through host->error). */
static int check_rma(check_t *c)
{
    const int peer = 1 - c->rank;
    vs_mem_t win = rma_buf(RMA_WIN), amo = rma_buf(4096), loc = rma_buf(RMA_WIN);
    if (!win.addr || !amo.addr || !loc.addr)
        FAIL(c, "out of memory");
    vs_mem_t *exposed[2] = {&win, &amo};
    vs_rmem_t remote[2];
    rma_blob_t *mine = calloc(1, sizeof *mine), *all = calloc(2, sizeof *all);
    if (!mine || !all)
        FAIL(c, "out of memory");
    for (int b = 0; b < 2; b++) {
        size_t len = VS_RMA_BLOB_BYTES;
        memset(mine, 0, sizeof *mine);
        mine->rc = c->ops->rma_expose(c->t, exposed[b], mine->blob, &len);
        if (!mine->rc && (len == 0 || len > VS_RMA_BLOB_BYTES))
            FAIL(c, "rma_expose used %zu B of a %d B blob", len, VS_RMA_BLOB_BYTES);
        mine->len = (uint32_t)len;
        if (c->bs->exchange(c->bs, mine, all, sizeof *mine))
            FAIL(c, "exchanging the blobs");
        int theirs = all[peer].rc;
        if (mine->rc == -ENOTSUP || mine->rc == -ENODEV || theirs == -ENOTSUP || theirs == -ENODEV) {
            printf("SKIP rank %d: %s refuses one-sided operations here (%s on rank %d; the module's reason "
                   "is above)\n", c->rank, c->ops->name, strerror(-(mine->rc ? mine->rc : theirs)),
                   mine->rc ? c->rank : peer);
            fflush(stdout);
            return 77;
        }
        if (mine->rc || theirs)
            FAIL(c, "rma_expose: %s (rank %d)", strerror(-(mine->rc ? mine->rc : theirs)), mine->rc ? c->rank : peer);
        int rc = c->ops->rma_attach(c->t, peer, all[peer].blob, all[peer].len, &remote[b]);
        if (rc)
            FAIL(c, "rma_attach of rank %d's blob: %s", peer, strerror(-rc));
        if (remote[b].len < exposed[b]->len)
            FAIL(c, "rma_attach: the peer exposed %zu B, the blob says %zu B", exposed[b]->len, remote[b].len);
    }
    free(mine);
    free(all);
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    printf("rank %d: ok: two buffers exposed and the peer's attached (blobs of at most %d B)\n", c->rank,
           VS_RMA_BLOB_BYTES);
    for (int origin = 0; origin < 2; origin++)
        if (check_rma_put(c, origin, &win, &loc, &remote[0]) || check_rma_get(c, origin, &win, &loc, &remote[0]) ||
            check_rma_atomics(c, origin, &amo, &remote[1]))
            return 1;
    if (c->ops->rma_release)
        for (int b = 0; b < 2; b++)
            c->ops->rma_release(c->t, &remote[b]);
    if (c->bs->barrier(c->bs))
        FAIL(c, "barrier");
    rma_buf_free(c, &win);
    rma_buf_free(c, &amo);
    rma_buf_free(c, &loc);
    return 0;
}

static int rank_main(const vs_transport_ops_t *ops, int rank, int fd, size_t max, int peer_death, int reg, int expect_map,
                     int trunc_ends, int rma, const vs_opt_value_t *opts)
{
    check_t c = {.ops = ops, .fd = fd, .rank = rank, .reg = reg};
    vs_host_t host = {.core = &c, .error = host_error, .debug = host_debug};
    c.pair = (vs_bootstrap_t){.name = "pair", .rank = rank, .size = 2, .ctx = &c,
                              .barrier = pair_barrier, .exchange = pair_exchange};
    c.bs = &c.pair;
    int rc = c.ops->open(&host, c.ops->n_options ? opts : NULL, &c.t);
    if (rc)
        FAIL(&c, "open: %s", strerror(-rc));
    if (c.ops->bootstrap) {
        /* started by the module's launcher: its bootstrap says who is who */
        if ((rc = c.ops->bootstrap(c.t, &c.bs)))
            FAIL(&c, "bootstrap: %s", strerror(-rc));
        c.rank = c.bs->rank;
        if (c.bs->size != 2)
            FAIL(&c, "the launcher started %d ranks, the check needs 2", c.bs->size);
    }
    if ((rc = c.ops->connect(c.t, c.bs)))
        FAIL(&c, "connect: %s", strerror(-rc));
    c.connected = 1;
    if (rma) {
        rc = check_rma(&c);
        if (rc != 1)
            c.ops->close(c.t);
        return rc;
    }
    c.sbuf = buf_new(&c, max + 1);
    c.rbuf = buf_new(&c, max + 1);
    if (!c.sbuf.addr || !c.rbuf.addr)
        FAIL(&c, "out of memory for %zu B buffers", max);
    if (peer_death)
        return check_peer_death(&c);
    /* the short receives last: after one, some libraries stop the stream */
    if (check_sizes(&c, max) || check_early_arrivals(&c, 100, 37) ||
        check_early_arrivals(&c, 200000, 100) || check_early_arrivals(&c, 300001, 150001) ||
        check_early_arrivals(&c, 0, 70000) || check_same_tag_order(&c, 0) ||
        check_same_tag_order(&c, 1) || check_mixed_order(&c) || check_many_in_flight(&c, 600, 20000) ||
        check_too_short(&c, 1000, trunc_ends) || (!trunc_ends && check_too_short(&c, 300000, 0)))
        return 1;
    int mapped = peer_buffers_mapped();
    if (expect_map && !mapped)
        FAIL(&c, "--expect-shm-mapping: no peer buffer is mapped here (no single copy took place)");
    if (expect_map)
        printf("rank %d: ok: single copy out of %d mapped peer buffer(s)\n", rank, mapped);
    buf_free(&c, &c.sbuf);
    buf_free(&c, &c.rbuf);
    c.ops->close(c.t);
    return 0;
}

/* The module's ops table (loaded once, before any rank is forked, as versus-run does): of
 * an interface from VS_TRANSPORT_ABI_OLDEST to VS_TRANSPORT_ABI, whose table is at least as
 * long as that interface's (an interface-4 table ends before the one-sided operations). */
static const vs_transport_ops_t *load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    vs_transport_entry_fn entry = h ? (vs_transport_entry_fn)dlsym(h, VS_TRANSPORT_ENTRY_SYMBOL) : NULL;
    const vs_transport_ops_t *ops = entry ? entry() : NULL;
    if (!ops || ops->abi < VS_TRANSPORT_ABI_OLDEST || ops->abi > VS_TRANSPORT_ABI ||
        ops->size < (ops->abi == VS_TRANSPORT_ABI ? sizeof *ops : VS_TRANSPORT_OPS_SIZE_4)) {
        fprintf(stderr, "FAIL: %s is not a versus transport module of interface %d to %d%s%s\n", path,
                VS_TRANSPORT_ABI_OLDEST, VS_TRANSPORT_ABI, h ? "" : ": ", h ? "" : dlerror());
        return NULL;
    }
    return ops;
}

/* KEY=VALUE arguments as versus-run hands them to open(): each parsed against
 * the module's table (vs_option_parse), the options not given at their
 * defaults.  NULL, with a message, for a key the module lacks or a bad value. */
static vs_opt_value_t *option_values(const vs_transport_ops_t *ops, const vs_kv_t *kv, size_t nkv)
{
    vs_opt_value_t *v = calloc(ops->n_options + 1, sizeof *v);
    for (size_t i = 0; v && i < ops->n_options; i++)
        vs_option_default(&ops->options[i], &v[i]);
    for (size_t k = 0; v && k < nkv; k++) {
        size_t i = 0;
        while (i < ops->n_options && strcmp(ops->options[i].key, kv[k].key))
            i++;
        if (i == ops->n_options || vs_option_parse(&ops->options[i], kv[k].value, &v[i])) {
            fprintf(stderr, "%s takes no option %s=%s\n", ops->name, kv[k].key, kv[k].value);
            free(v);
            return NULL;
        }
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODULE.so [--max BYTES] [--peer-death] [--register] [--expect-shm-mapping] [--truncation-ends-stream] [--rma] [KEY=VALUE]...\n",
                argv[0]);
        return 2;
    }
    size_t max = 4194305, nkv = 0;
    int peer_death = 0, reg = 0, expect_map = 0, trunc_ends = 0, rma = 0;
    vs_kv_t kv[16];
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--peer-death"))
            peer_death = 1;
        else if (!strcmp(argv[i], "--register"))
            reg = 1;
        else if (!strcmp(argv[i], "--expect-shm-mapping"))
            expect_map = reg = 1;
        else if (!strcmp(argv[i], "--truncation-ends-stream"))
            trunc_ends = 1;
        else if (!strcmp(argv[i], "--rma"))
            rma = 1;
        else if (eq && nkv < 16) {
            *eq = '\0';
            kv[nkv++] = (vs_kv_t){argv[i], eq + 1};
        } else {
            fprintf(stderr, "bad argument: %s\n", argv[i]);
            return 2;
        }
    }
    const vs_transport_ops_t *ops = load(argv[1]);
    if (!ops)
        return 1;
    if (rma && !VS_HAS_RMA(ops)) {
        printf("SKIP: %s has no one-sided operations (interface %u, an ops table of %u B%s): the one-sided "
               "patterns refuse it\n", ops->name, (unsigned)ops->abi, (unsigned)ops->size,
               ops->size > offsetof(vs_transport_ops_t, rma_epoch) ? ", rma_expose/attach, put, get or rma_epoch NULL"
                                                                    : ", ending before them");
        return 77;
    }
    vs_opt_value_t *opts = option_values(ops, kv, nkv);
    if (!opts)
        return 2;
    if (ops->bootstrap) {
        /* this process is one rank of the module's launcher */
        alarm(HANG_LIMIT_S);
        int rc = rank_main(ops, -1, -1, max, peer_death, reg, expect_map, trunc_ends, rma, opts);
        fflush(stdout);
        free(opts);
        return rc;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        free(opts);
        return 1;
    }
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        if ((pid[r] = fork()) < 0) {
            free(opts);
            return 1;
        }
        if (pid[r] == 0) {
            close(sv[1 - r]);
            alarm(HANG_LIMIT_S);
            fflush(stdout);
            int rc = rank_main(ops, r, sv[r], max, peer_death, reg, expect_map, trunc_ends, rma, opts);
            fflush(stdout);
            _exit(rc);
        }
    }
    close(sv[0]);
    close(sv[1]);
    int worst = 0, skipped = 0;
    for (int n = 0; n < 2; n++) {
        int st;
        pid_t who = wait(&st);
        int r = who == pid[0] ? 0 : 1;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code == 77 && rma) {
            skipped++;
        } else if (code) {
            fprintf(stderr, "rank %d %s %d\n", r, WIFEXITED(st) ? "exited with" : "killed by signal",
                    WIFEXITED(st) ? code : WTERMSIG(st));
            if (code == 128 + SIGALRM)
                fprintf(stderr, "FAIL: rank %d hung for %d s\n", r, HANG_LIMIT_S);
            /* one-sided: the other rank waits for a word that will not come */
            if (rma && !worst && n == 0)
                kill(pid[1 - r], SIGKILL);
            worst = 1;
        }
    }
    free(opts);
    return worst ? worst : skipped == 2 ? 77 : skipped ? 1 : 0;
}
