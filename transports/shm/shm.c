/* versus — shared-memory reference transport: the intra-node floor.
 *
 * The ranks of one host map one POSIX shared-memory segment.  Rank 0 creates
 * it under a name built from a random token, the bootstrap hands the name to
 * the others, they map it, and rank 0 unlinks the name as soon as everybody
 * has it mapped (or as soon as anything failed), so no segment outlives the
 * run by more than that window.
 *
 * Every directed pair (src -> dst) owns a channel:
 *   - a ring of 64-byte lines.  A record starts on a line whose first word
 *     is a flag: the record's line position, scrambled with a per-segment
 *     random key so that stale payload bytes never look like a fresh flag.
 *     The sender writes payload and header fields, then the flag (release);
 *     the receiver spins on the flag of the next position (acquire).  An
 *     eager message's payload starts 32 bytes into its header line and runs
 *     contiguously over the following lines, so each side does one memcpy.
 *     The receiver publishes how many lines it consumed; sends complete as
 *     soon as their record is in the ring.
 *   - a staging area of `chunks` slots of `chunk` bytes for messages above
 *     eager_limit: the ring carries only a header, the payload streams
 *     through the slots, sender and receiver copying concurrently (two
 *     counters, chunks filled and chunks drained).  chunks=1 with a chunk as
 *     large as the message is the "copy in, then copy out" variant.
 *
 * Matching is by (peer, tag) in arrival order; early arrivals are kept on an
 * unexpected list (eager payloads copied, large ones left in staging until
 * their receive is posted or a later large message needs the staging area).
 *
 * A dead peer: progress checks every peer's pid (kill(pid, 0), and
 * /proc/PID/stat for an unreaped zombie) every 2^22 polls, tens of
 * milliseconds of spinning, and fails with -ECONNRESET; a peer that is alive
 * but stuck is left to core's watchdog and its deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <versus/transport.h>

#ifndef VS_SHM_VERSION
#define VS_SHM_VERSION "1"
#endif

#define SHM_LINE 64
#define SHM_HDR 32
#define SHM_INLINE (SHM_LINE - SHM_HDR)
#define SHM_PAGE 4096
#define SHM_MAGIC 0x7665727375736d31ULL /* "versusm1" */
#define SHM_LIVENESS_MASK ((1UL << 22) - 1)

enum { REC_EAGER = 1, REC_LARGE = 2, REC_WRAP = 3 };
enum { REQ_SEND = 1, REQ_RECV = 2 };

typedef struct shm_line {
    uint64_t flag;   /* scrambled position, written last */
    uint64_t tag;
    uint64_t len;
    uint32_t kind;
    uint32_t nlines;
    unsigned char data[SHM_INLINE];
} shm_line_t;
_Static_assert(sizeof(shm_line_t) == SHM_LINE, "a ring record header is one cache line");

/* Counters of one channel, each on its own line (one writer each). */
typedef struct shm_ctrl {
    _Alignas(SHM_LINE) uint64_t ring_head;     /* lines consumed (receiver) */
    _Alignas(SHM_LINE) uint64_t stage_filled;  /* chunks written (sender) */
    _Alignas(SHM_LINE) uint64_t stage_drained; /* chunks read (receiver) */
} shm_ctrl_t;

typedef struct shm_seg_hdr {
    uint64_t magic;
    uint64_t key;
    uint64_t nranks, ring_lines, chunk, nchunks, eager_limit, chan_bytes;
} shm_seg_hdr_t;

typedef struct shm_req shm_req_t;

/* A large message in staging order (the staging area is one stream). */
typedef struct shm_large {
    struct shm_large *next;
    shm_req_t *req;        /* receiver, or NULL while unexpected */
    unsigned char *buf;    /* where the payload goes when req is NULL (buffered) */
    uint64_t tag;
    size_t len, done;
    int buffering;         /* unexpected and drained into buf */
    int discard;           /* its receive was too short: drained and dropped */
} shm_large_t;

/* An arrival nobody asked for yet. */
typedef struct shm_unexp {
    struct shm_unexp *next;
    uint64_t tag;
    size_t len;
    shm_large_t *large;    /* large message: its staging entry; else payload below */
    unsigned char data[];
} shm_unexp_t;

struct shm_req {
    int kind, done, err, peer;
    uint64_t tag;
    unsigned char *buf;
    size_t len;            /* send: message length; recv: capacity */
    size_t off;            /* send: payload bytes in staging */
    int hdr_sent;          /* large send: header is in the ring */
    shm_req_t *next;
    shm_large_t large;     /* large receive matched on arrival */
};
_Static_assert(sizeof(shm_req_t) <= VS_REQ_BYTES, "request fits core's storage");

typedef struct shm_peer {
    pid_t pid;
    /* me -> peer */
    shm_ctrl_t *tx_ctrl;
    shm_line_t *tx_ring;
    unsigned char *tx_stage;
    uint64_t tx_tail, tx_head_seen, tx_filled, tx_drained_seen;
    shm_req_t *sendq, *sendq_tail;
    /* peer -> me */
    shm_ctrl_t *rx_ctrl;
    shm_line_t *rx_ring;
    const unsigned char *rx_stage;
    uint64_t rx_head, rx_drained, rx_filled_seen;
    shm_req_t *posted, *posted_tail;
    shm_unexp_t *unexp, *unexp_tail;
    shm_large_t *large, *large_tail;
} shm_peer_t;

struct vs_transport {
    const vs_host_t *host;
    size_t eager_limit, chunk, nchunks, ring_lines;
    int rank, size;
    char name[64];          /* segment name while it exists */
    int named;              /* this rank created it and has not unlinked it yet */
    void *seg;
    size_t seg_bytes;
    uint64_t key;
    unsigned long polls;
    shm_peer_t *peers;
};

#define ERR(t, ...) (t)->host->error((t)->host->core, __VA_ARGS__)

static inline uint64_t flag_of(const vs_transport_t *t, uint64_t pos)
{
    return (pos + 1) ^ t->key;
}

static inline size_t lines_for(size_t len)
{
    return len <= SHM_INLINE ? 1 : 1 + (len - SHM_INLINE + SHM_LINE - 1) / SHM_LINE;
}

/* ---- options ---------------------------------------------------------- */

static int parse_bytes(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -EINVAL;
    unsigned long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ULL << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ULL << 20, end++;
    if (*end || v > (1ULL << 40) / mul)
        return -EINVAL;
    *out = (size_t)(v * mul);
    return 0;
}

static int shm_open_opts(vs_transport_t *t, const vs_kv_t *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t v;
        size_t *dst = !strcmp(opts[i].key, "eager_limit") ? &t->eager_limit
                      : !strcmp(opts[i].key, "chunk")     ? &t->chunk
                      : !strcmp(opts[i].key, "chunks")    ? &t->nchunks
                      : !strcmp(opts[i].key, "ring")      ? &t->ring_lines
                                                          : NULL;
        if (!dst) {
            ERR(t, "unknown option '%s' (known: eager_limit, chunk, chunks, ring)", opts[i].key);
            return -EINVAL;
        }
        if (parse_bytes(opts[i].value, &v)) {
            ERR(t, "option %s=%s: not a size (digits with an optional K or M)", opts[i].key,
                opts[i].value);
            return -EINVAL;
        }
        *dst = v;
    }
    if (t->chunk < SHM_LINE || t->chunk % SHM_LINE || t->nchunks < 1 || t->nchunks > 4096 ||
        t->chunk > (1UL << 30)) {
        ERR(t, "chunk must be a multiple of %d B (up to 1 GiB) and chunks between 1 and 4096",
            SHM_LINE);
        return -EINVAL;
    }
    if (t->ring_lines < 16 || (t->ring_lines & (t->ring_lines - 1)) || t->ring_lines > (1UL << 24)) {
        ERR(t, "ring must be a power of two between 16 and 16M lines");
        return -EINVAL;
    }
    if (lines_for(t->eager_limit) + 1 > t->ring_lines / 2) {
        ERR(t, "eager_limit=%zu needs a ring of more than %zu lines", t->eager_limit, t->ring_lines);
        return -EINVAL;
    }
    return 0;
}

static int shm_library_version(char *buf, size_t len)
{
    snprintf(buf, len, "%s", VS_SHM_VERSION);
    return 0;
}

static int shm_topen(const vs_host_t *host, const vs_kv_t *opts, size_t n_opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    t->eager_limit = 8192;
    t->chunk = 32768;
    t->nchunks = 16;
    t->ring_lines = 4096;
    int rc = shm_open_opts(t, opts, n_opts);
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void free_lists(shm_peer_t *p)
{
    while (p->unexp) {
        shm_unexp_t *u = p->unexp;
        p->unexp = u->next;
        if (u->large && u->large->buffering && u->large->done == u->large->len) {
            free(u->large->buf); /* buffered completely: no longer in the staging list */
            free(u->large);
        }
        free(u);
    }
    while (p->large) {
        shm_large_t *l = p->large;
        p->large = l->next;
        if (!l->req) {
            free(l->buf);
            free(l);
        }
    }
}

static void shm_close(vs_transport_t *t)
{
    if (!t)
        return;
    if (t->named)
        shm_unlink(t->name);
    for (int i = 0; t->peers && i < t->size; i++)
        free_lists(&t->peers[i]);
    if (t->seg)
        munmap(t->seg, t->seg_bytes);
    free(t->peers);
    free(t);
}

/* ---- connect: one segment, named only while the ranks map it ---------- */

typedef struct shm_hello {
    int32_t status; /* 0 or -errno */
    int32_t pid;
    char name[64];
    uint64_t eager_limit, chunk, nchunks, ring_lines;
} shm_hello_t;

static size_t chan_bytes(const vs_transport_t *t)
{
    size_t b = SHM_PAGE + t->ring_lines * SHM_LINE + t->chunk * t->nchunks;
    return (b + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
}

static unsigned char *chan_at(vs_transport_t *t, int src, int dst)
{
    size_t idx = (size_t)src * (size_t)(t->size - 1) + (size_t)(dst < src ? dst : dst - 1);
    return (unsigned char *)t->seg + SHM_PAGE + idx * chan_bytes(t);
}

static int seg_map(vs_transport_t *t, int fd)
{
    void *p = mmap(NULL, t->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        ERR(t, "mmap of %zu B shared segment %s: %s", t->seg_bytes, t->name, strerror(e));
        return -e;
    }
    t->seg = p;
    return 0;
}

static int seg_create(vs_transport_t *t)
{
    unsigned char tok[12];
    uint64_t key;
    if (getrandom(tok, sizeof tok, 0) != (ssize_t)sizeof tok ||
        getrandom(&key, sizeof key, 0) != (ssize_t)sizeof key) {
        int e = errno ? errno : EIO;
        ERR(t, "getrandom: %s", strerror(e));
        return -e;
    }
    int n = snprintf(t->name, sizeof t->name, "/versus-shm-%d-", (int)getpid());
    for (size_t i = 0; i < sizeof tok; i++)
        n += snprintf(t->name + n, sizeof t->name - (size_t)n, "%02x", tok[i]);
    int fd = shm_open(t->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        int e = errno;
        ERR(t, "shm_open(%s): %s", t->name, strerror(e));
        return -e;
    }
    t->named = 1;
    int rc = 0;
    if (ftruncate(fd, (off_t)t->seg_bytes)) {
        rc = -errno;
        ERR(t, "ftruncate(%s, %zu): %s", t->name, t->seg_bytes, strerror(-rc));
    }
    if (!rc)
        rc = seg_map(t, fd);
    close(fd);
    if (rc)
        return rc;
    shm_seg_hdr_t *h = t->seg;
    *h = (shm_seg_hdr_t){.magic = SHM_MAGIC, .key = key | (1ULL << 63), .nranks = (uint64_t)t->size,
                         .ring_lines = t->ring_lines, .chunk = t->chunk, .nchunks = t->nchunks,
                         .eager_limit = t->eager_limit, .chan_bytes = chan_bytes(t)};
    return 0;
}

static int seg_attach(vs_transport_t *t, const shm_hello_t *h0)
{
    if (h0->eager_limit != t->eager_limit || h0->chunk != t->chunk ||
        h0->nchunks != t->nchunks || h0->ring_lines != t->ring_lines) {
        ERR(t, "rank %d has other shm options than rank 0 (eager_limit, chunk, chunks, ring)", t->rank);
        return -EINVAL;
    }
    memcpy(t->name, h0->name, sizeof t->name);
    t->name[sizeof t->name - 1] = '\0';
    int fd = shm_open(t->name, O_RDWR, 0);
    if (fd < 0) {
        int e = errno;
        ERR(t, "shm_open(%s) created by rank 0: %s", t->name, strerror(e));
        return -e;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) || (size_t)st.st_size != t->seg_bytes) {
        ERR(t, "shared segment %s has the wrong size", t->name);
        rc = -EPROTO;
    }
    if (!rc)
        rc = seg_map(t, fd);
    close(fd);
    if (!rc && ((shm_seg_hdr_t *)t->seg)->magic != SHM_MAGIC) {
        ERR(t, "shared segment %s is not a versus segment", t->name);
        rc = -EPROTO;
    }
    return rc;
}

/* Everyone's status after an exchange: the first failure, and who had it. */
static int first_failure(const shm_hello_t *all, int n, int *who)
{
    for (int r = 0; r < n; r++)
        if (all[r].status) {
            *who = r;
            return all[r].status;
        }
    return 0;
}

static void peers_setup(vs_transport_t *t, const shm_hello_t *all)
{
    t->key = ((shm_seg_hdr_t *)t->seg)->key;
    for (int r = 0; r < t->size; r++) {
        shm_peer_t *p = &t->peers[r];
        p->pid = all[r].pid;
        if (r == t->rank)
            continue;
        unsigned char *tx = chan_at(t, t->rank, r), *rx = chan_at(t, r, t->rank);
        p->tx_ctrl = (shm_ctrl_t *)tx;
        p->tx_ring = (shm_line_t *)(tx + SHM_PAGE);
        p->tx_stage = tx + SHM_PAGE + t->ring_lines * SHM_LINE;
        p->rx_ctrl = (shm_ctrl_t *)rx;
        p->rx_ring = (shm_line_t *)(rx + SHM_PAGE);
        p->rx_stage = rx + SHM_PAGE + t->ring_lines * SHM_LINE;
    }
}

static int shm_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    t->rank = bs->rank;
    t->size = bs->size;
    if (t->size < 2) {
        ERR(t, "needs at least 2 ranks on one host");
        return -EINVAL;
    }
    t->peers = calloc((size_t)t->size, sizeof *t->peers);
    shm_hello_t *all = calloc((size_t)t->size, sizeof *all);
    if (!t->peers || !all) {
        free(all);
        return -ENOMEM;
    }
    t->seg_bytes = SHM_PAGE + (size_t)t->size * (size_t)(t->size - 1) * chan_bytes(t);

    shm_hello_t me = {.pid = (int32_t)getpid(), .eager_limit = t->eager_limit, .chunk = t->chunk,
                      .nchunks = t->nchunks, .ring_lines = t->ring_lines};
    if (t->rank == 0) {
        me.status = seg_create(t);
        memcpy(me.name, t->name, sizeof me.name);
    }
    int who = 0, rc = bs->exchange(bs, &me, all, sizeof me);
    if (rc) {
        ERR(t, "bootstrap exchange of the segment name failed");
        goto out_unlink;
    }
    if ((rc = first_failure(all, t->size, &who))) {
        if (who != t->rank)
            ERR(t, "rank %d could not create the shared segment", who);
        goto out_unlink;
    }
    if (t->rank != 0)
        me.status = seg_attach(t, &all[0]);
    rc = bs->exchange(bs, &me, all, sizeof me);
    if (rc) {
        ERR(t, "bootstrap exchange after mapping failed");
        goto out_unlink;
    }
    if ((rc = first_failure(all, t->size, &who))) {
        if (who != t->rank)
            ERR(t, "rank %d could not map the shared segment", who);
        goto out_unlink;
    }
    peers_setup(t, all);
out_unlink:
    if (t->named) {
        shm_unlink(t->name);
        t->named = 0;
    }
    free(all);
    return rc;
}

/* ---- sending ------------------------------------------------------------ */

/* Room for n lines at the tail, refreshing the receiver's head only when the
 * cached one says no. */
static inline int ring_room(shm_peer_t *p, size_t ring, size_t n)
{
    if (p->tx_tail + n - p->tx_head_seen <= ring)
        return 1;
    p->tx_head_seen = __atomic_load_n(&p->tx_ctrl->ring_head, __ATOMIC_ACQUIRE);
    return p->tx_tail + n - p->tx_head_seen <= ring;
}

/* Reserve n contiguous lines (wrapping with a filler record when the ring's
 * end is too close); NULL when the receiver has not freed enough. */
static shm_line_t *ring_reserve(vs_transport_t *t, shm_peer_t *p, size_t n)
{
    size_t idx = p->tx_tail & (t->ring_lines - 1);
    if (idx + n > t->ring_lines) {
        size_t fill = t->ring_lines - idx;
        if (!ring_room(p, t->ring_lines, fill))
            return NULL;
        shm_line_t *w = &p->tx_ring[idx];
        w->kind = REC_WRAP;
        w->nlines = (uint32_t)fill;
        __atomic_store_n(&w->flag, flag_of(t, p->tx_tail), __ATOMIC_RELEASE);
        p->tx_tail += fill;
        idx = 0;
    }
    if (!ring_room(p, t->ring_lines, n))
        return NULL;
    return &p->tx_ring[idx];
}

static inline void ring_publish(vs_transport_t *t, shm_peer_t *p, shm_line_t *l, int kind,
                                uint64_t tag, size_t len, size_t n)
{
    l->tag = tag;
    l->len = len;
    l->kind = (uint32_t)kind;
    l->nlines = (uint32_t)n;
    __atomic_store_n(&l->flag, flag_of(t, p->tx_tail), __ATOMIC_RELEASE);
    p->tx_tail += n;
}

/* Move a send forward; returns 1 when it is complete. */
static int send_step(vs_transport_t *t, shm_peer_t *p, shm_req_t *r)
{
    if (r->len <= t->eager_limit) {
        size_t n = lines_for(r->len);
        shm_line_t *l = ring_reserve(t, p, n);
        if (!l)
            return 0;
        memcpy(l->data, r->buf, r->len);
        ring_publish(t, p, l, REC_EAGER, r->tag, r->len, n);
        return 1;
    }
    if (!r->hdr_sent) {
        shm_line_t *l = ring_reserve(t, p, 1);
        if (!l)
            return 0;
        ring_publish(t, p, l, REC_LARGE, r->tag, r->len, 1);
        r->hdr_sent = 1;
    }
    while (r->off < r->len) {
        if (p->tx_filled - p->tx_drained_seen >= t->nchunks) {
            p->tx_drained_seen = __atomic_load_n(&p->tx_ctrl->stage_drained, __ATOMIC_ACQUIRE);
            if (p->tx_filled - p->tx_drained_seen >= t->nchunks)
                return 0;
        }
        size_t c = r->len - r->off < t->chunk ? r->len - r->off : t->chunk;
        memcpy(p->tx_stage + (p->tx_filled % t->nchunks) * t->chunk, r->buf + r->off, c);
        r->off += c;
        p->tx_filled++;
        __atomic_store_n(&p->tx_ctrl->stage_filled, p->tx_filled, __ATOMIC_RELEASE);
    }
    return 1;
}

static void send_queue_progress(vs_transport_t *t, shm_peer_t *p)
{
    while (p->sendq && send_step(t, p, p->sendq)) {
        shm_req_t *r = p->sendq;
        p->sendq = r->next;
        r->done = 1;
    }
}

static int check_peer(vs_transport_t *t, int peer, size_t len)
{
    if (peer < 0 || peer >= t->size || peer == t->rank || !t->peers) {
        ERR(t, "peer %d is not another rank (size %d, rank %d)", peer, t->size, t->rank);
        return -EINVAL;
    }
    if (len > (size_t)UINT32_MAX * 1024) {
        ERR(t, "message of %zu B is too large", len);
        return -EMSGSIZE;
    }
    return 0;
}

static int shm_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                         vs_req_t *req)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_req_t *r = (shm_req_t *)req->opaque;
    *r = (shm_req_t){.kind = REQ_SEND, .peer = peer, .tag = tag, .buf = mem->addr, .len = len};
    shm_peer_t *p = &t->peers[peer];
    if (!p->sendq && send_step(t, p, r)) {
        r->done = 1;
        return 0;
    }
    if (p->sendq)
        p->sendq_tail->next = r;
    else
        p->sendq = r;
    p->sendq_tail = r;
    return 0;
}

/* ---- receiving ---------------------------------------------------------- */

/* A receive shorter than its message fails with -EMSGSIZE (at test/wait). */
static void recv_too_short(vs_transport_t *t, shm_req_t *r, int peer, uint64_t tag, size_t len)
{
    ERR(t, "rank %d: a %zu B message from rank %d (tag %" PRIu64 ") does not fit the %zu B receive",
        t->rank, len, peer, tag, r->len);
    r->err = -EMSGSIZE;
    r->done = 1;
}

static shm_req_t *posted_take(shm_peer_t *p, uint64_t tag)
{
    shm_req_t *prev = NULL;
    for (shm_req_t *r = p->posted; r; prev = r, r = r->next) {
        if (r->tag != tag)
            continue;
        if (prev)
            prev->next = r->next;
        else
            p->posted = r->next;
        if (p->posted_tail == r)
            p->posted_tail = prev;
        r->next = NULL;
        return r;
    }
    return NULL;
}

static int unexp_add(shm_peer_t *p, uint64_t tag, size_t len, const void *data, shm_large_t *large)
{
    shm_unexp_t *u = malloc(sizeof *u + (large ? 0 : len));
    if (!u)
        return -ENOMEM;
    *u = (shm_unexp_t){.tag = tag, .len = len, .large = large};
    if (!large)
        memcpy(u->data, data, len);
    if (p->unexp)
        p->unexp_tail->next = u;
    else
        p->unexp = u;
    p->unexp_tail = u;
    return 0;
}

static void large_append(shm_peer_t *p, shm_large_t *l)
{
    l->next = NULL;
    if (p->large)
        p->large_tail->next = l;
    else
        p->large = l;
    p->large_tail = l;
}

/* Read what the peer put in the ring. */
static int ring_progress(vs_transport_t *t, int peer, shm_peer_t *p)
{
    for (;;) {
        shm_line_t *l = &p->rx_ring[p->rx_head & (t->ring_lines - 1)];
        if (__atomic_load_n(&l->flag, __ATOMIC_ACQUIRE) != flag_of(t, p->rx_head))
            return 0;
        size_t len = l->len;
        if (l->kind == REC_EAGER) {
            shm_req_t *r = posted_take(p, l->tag);
            if (r && len <= r->len) {
                if (len)
                    memcpy(r->buf, l->data, len);
                r->done = 1;
            } else if (r) {
                recv_too_short(t, r, peer, l->tag, len);
            } else if (unexp_add(p, l->tag, len, l->data, NULL)) {
                ERR(t, "out of memory for an unexpected %zu B message", len);
                return -ENOMEM;
            }
        } else if (l->kind == REC_LARGE) {
            shm_req_t *r = posted_take(p, l->tag);
            int fits = r && len <= r->len;
            shm_large_t *lg = fits ? &r->large : calloc(1, sizeof *lg);
            if (!lg)
                return -ENOMEM;
            *lg = (shm_large_t){.req = fits ? r : NULL, .tag = l->tag, .len = len, .discard = r && !fits};
            if (r && !fits)
                recv_too_short(t, r, peer, l->tag, len); /* fails now; the payload is dropped */
            if (!r && unexp_add(p, l->tag, len, NULL, lg)) {
                free(lg);
                return -ENOMEM;
            }
            large_append(p, lg);
        } else if (l->kind != REC_WRAP) {
            ERR(t, "corrupt record in the ring from rank %d", peer);
            return -EPROTO;
        }
        p->rx_head += l->nlines;
        __atomic_store_n(&p->rx_ctrl->ring_head, p->rx_head, __ATOMIC_RELEASE);
    }
}

/* The staging stream is in order; an unexpected head message stays in the
 * slots unless a later one is already wanted, then it is buffered. */
static int staging_progress(vs_transport_t *t, shm_peer_t *p)
{
    while (p->large) {
        shm_large_t *l = p->large;
        if (!l->req && !l->buffering && !l->discard) {
            int wanted = 0;
            for (shm_large_t *q = l->next; q && !wanted; q = q->next)
                wanted = q->req != NULL;
            if (!wanted)
                return 0;
            if (!(l->buf = malloc(l->len ? l->len : 1)))
                return -ENOMEM;
            l->buffering = 1;
        }
        unsigned char *dst = l->req ? l->req->buf : l->buf; /* NULL: discard */
        while (l->done < l->len) {
            if (p->rx_drained == p->rx_filled_seen) {
                p->rx_filled_seen = __atomic_load_n(&p->rx_ctrl->stage_filled, __ATOMIC_ACQUIRE);
                if (p->rx_drained == p->rx_filled_seen)
                    return 0;
            }
            size_t c = l->len - l->done < t->chunk ? l->len - l->done : t->chunk;
            if (dst)
                memcpy(dst + l->done, p->rx_stage + (p->rx_drained % t->nchunks) * t->chunk, c);
            l->done += c;
            p->rx_drained++;
            __atomic_store_n(&p->rx_ctrl->stage_drained, p->rx_drained, __ATOMIC_RELEASE);
        }
        p->large = l->next;
        if (l->req)
            l->req->done = 1;
        else if (l->discard)
            free(l);
        /* a buffered one stays reachable from its unexpected entry */
    }
    return 0;
}

/* Gone: no such process, or a zombie its parent has not reaped yet. */
static int pid_gone(pid_t pid)
{
    if (kill(pid, 0) && errno == ESRCH)
        return 1;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static int check_liveness(vs_transport_t *t)
{
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank || t->peers[r].pid <= 0)
            continue;
        if (pid_gone(t->peers[r].pid)) {
            ERR(t, "rank %d (pid %d) has exited", r, (int)t->peers[r].pid);
            return -ECONNRESET;
        }
    }
    return 0;
}

static int shm_progress(vs_transport_t *t)
{
    if (!t->peers)
        return -ENOTCONN;
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank)
            continue;
        shm_peer_t *p = &t->peers[r];
        int rc = ring_progress(t, r, p);
        if (!rc && p->large)
            rc = staging_progress(t, p);
        if (rc)
            return rc;
        if (p->sendq)
            send_queue_progress(t, p);
    }
    if ((++t->polls & SHM_LIVENESS_MASK) == 0)
        return check_liveness(t);
    return 0;
}

static int shm_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                         vs_req_t *req)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_req_t *r = (shm_req_t *)req->opaque;
    *r = (shm_req_t){.kind = REQ_RECV, .peer = peer, .tag = tag, .buf = mem->addr, .len = len};
    shm_peer_t *p = &t->peers[peer];
    shm_unexp_t *prev = NULL, *u = p->unexp;
    for (; u && u->tag != tag; prev = u, u = u->next)
        ;
    if (u) {
        if (prev)
            prev->next = u->next;
        else
            p->unexp = u->next;
        if (p->unexp_tail == u)
            p->unexp_tail = prev;
        shm_large_t *l = u->large;
        size_t mlen = l ? l->len : u->len;
        if (mlen > len) {
            recv_too_short(t, r, peer, tag, mlen); /* -EMSGSIZE, reported by test/wait */
            if (l && l->buffering && l->done == l->len) {
                free(l->buf);
                free(l);
            } else if (l) {
                free(l->buf);
                *l = (shm_large_t){.next = l->next, .tag = l->tag, .len = l->len, .done = l->done,
                                   .discard = 1};
            }
        } else if (!l) {
            if (mlen)
                memcpy(r->buf, u->data, mlen);
            r->done = 1;
        } else if (l->buffering && l->done == l->len) {
            memcpy(r->buf, l->buf, mlen);
            r->done = 1;
            free(l->buf);
            free(l);
        } else {
            /* still in the staging stream (maybe partly buffered): take it over */
            if (l->buffering)
                memcpy(r->buf, l->buf, l->done);
            free(l->buf);
            l->buf = NULL;
            l->buffering = 0;
            l->req = r;
        }
        free(u);
        return r->done ? 0 : staging_progress(t, p);
    }
    if (p->posted)
        p->posted_tail->next = r;
    else
        p->posted = r;
    p->posted_tail = r;
    return ring_progress(t, peer, p);
}

static int shm_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    shm_req_t *r = (shm_req_t *)req->opaque;
    int rc = 0;
    if (!r->done)
        rc = shm_progress(t);
    *done = r->done;
    return rc ? rc : (r->done ? r->err : 0);
}

static int shm_wait(vs_transport_t *t, vs_req_t *req)
{
    shm_req_t *r = (shm_req_t *)req->opaque;
    while (!r->done) {
        int rc = shm_progress(t);
        if (rc)
            return rc;
    }
    return r->err;
}

static int shm_query(vs_transport_t *t, vs_transport_info_t *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "shm");
    snprintf(info->library, sizeof info->library, "versus");
    shm_library_version(info->version, sizeof info->version);
    snprintf(info->provider, sizeof info->provider, "shm/cacheline+%s",
             t->nchunks > 1 ? "pipeline" : "copy");
    info->n_thresholds = 1;
    snprintf(info->thresholds[0].name, sizeof info->thresholds[0].name, "eager_limit");
    info->thresholds[0].bytes = (int64_t)t->eager_limit;
    const struct { const char *k; char v[64]; } a[] = {
        {"mode", ""}, {"slot_bytes", ""}, {"ring_slots", ""}, {"chunk_bytes", ""}, {"chunks", ""},
        {"peer_check", "pid liveness (kill 0, /proc zombie) every 4194304 polls"},
    };
    info->n_attrs = (int)(sizeof a / sizeof a[0]);
    for (int i = 0; i < info->n_attrs; i++) {
        snprintf(info->attrs[i].key, sizeof info->attrs[i].key, "%s", a[i].k);
        snprintf(info->attrs[i].value, sizeof info->attrs[i].value, "%s", a[i].v);
    }
    snprintf(info->attrs[0].value, sizeof info->attrs[0].value, "%s",
             t->nchunks > 1 ? "cacheline+pipeline" : "cacheline+copy");
    snprintf(info->attrs[1].value, sizeof info->attrs[1].value, "%d", SHM_LINE);
    snprintf(info->attrs[2].value, sizeof info->attrs[2].value, "%zu", t->ring_lines);
    snprintf(info->attrs[3].value, sizeof info->attrs[3].value, "%zu", t->chunk);
    snprintf(info->attrs[4].value, sizeof info->attrs[4].value, "%zu", t->nchunks);
    return 0;
}

static const vs_transport_ops_t shm_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "shm",
    .summary = "shared-memory reference: cache-line ring + pipelined staging copy (intra-node floor)",
    .library_version = shm_library_version,
    .open = shm_topen,
    .close = shm_close,
    .query = shm_query,
    .connect = shm_connect,
    .post_send = shm_post_send,
    .post_recv = shm_post_recv,
    .test = shm_test,
    .wait = shm_wait,
    .progress = shm_progress,
};

VS_TRANSPORT_DEFINE(shm_ops)
