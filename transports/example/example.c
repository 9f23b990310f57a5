/* example: the smallest complete versus transport, to copy when adding one.
 *
 * It moves messages between the ranks of one host over UNIX stream sockets,
 * one connection per pair of ranks, and passes the ops-table conformance
 * check (tests/transport).  It is written for reading, not for speed: sends
 * are written in order from the caller's buffer, each complete once its last
 * byte is in the socket, and every arriving message is read whole into a
 * buffer of its own before it is matched.  docs/writing-a-transport.md walks through it.
 *
 * The rules every module follows (versus/transport.h): return 0 or a
 * negative errno, hand the reason to host->error(), never print, never exit,
 * never time anything, keep all state in the context. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <versus/matchq.h>
#include <versus/transport.h>

#define EXAMPLE_VERSION "1.0"
#define ACCEPT_TIMEOUT_MS 60000

/* ---------------------------------------------------------------- state */

/* What goes on the wire before each payload. */
typedef struct wire_hdr {
    uint64_t tag, len;
} wire_hdr_t;

/* A message as it arrives: kept whole until a receive asks for it. */
typedef struct chunk {
    vs_matchq_link_t link;    /* first: the entry is its link */
    size_t len, done;         /* payload bytes, and those read so far */
    unsigned char data[];
} chunk_t;

/* A request lives in core's vs_req_t storage: no allocation per message. */
typedef struct ex_req {
    vs_matchq_link_t link;    /* first; among a peer's sends to write, or its posted receives */
    int done, err;
    void *buf;
    size_t cap;               /* send: payload length; receive: the most it takes */
    wire_hdr_t hdr;           /* send: its header */
    size_t off;               /* send: bytes of header + payload written */
} ex_req_t;
_Static_assert(sizeof(ex_req_t) <= VS_REQ_BYTES, "a request fits core's storage");

typedef struct peer {
    int fd;                   /* -1 for oneself */
    vs_matchq_t out;          /* ex_req_t: sends not yet fully written, in order */
    vs_matchq_t unexp;        /* chunk_t: arrived, not yet asked for, in order */
    vs_matchq_t posted;       /* ex_req_t: receives waiting, in order */
    wire_hdr_t hdr;           /* the message being read */
    size_t hdr_got;
    chunk_t *in;              /* its payload, once the header is complete */
    int dead;
} peer_t;

struct vs_transport {
    const vs_host_t *host;
    int rank, size, listen_fd;
    char path[108];           /* abstract socket name of our listener */
    peer_t *peers;
};

/* ---------------------------------------------------------------- setup */

static int example_version(char *buf, size_t len)
{
    snprintf(buf, len, "versus example transport %s", EXAMPLE_VERSION);
    return 0;
}

/* opts holds one parsed value per row of the ops table's `options` (none
 * here: core refuses any key); a module with options reads them here, as
 * fields, never as text (docs/writing-a-transport.md, "Options"). */
static int example_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    (void)opts;
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    t->listen_fd = -1;
    *out = t;
    return 0;
}

static void example_close(vs_transport_t *t)
{
    for (int r = 0; t->peers && r < t->size; r++) {
        peer_t *p = &t->peers[r];
        if (p->fd >= 0)
            close(p->fd);
        for (vs_matchq_link_t *c = p->unexp.head, *n; c; c = n)
            n = c->next, free(c);
        free(p->in);
    }
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    free(t->peers);
    free(t);
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(name);
    memcpy(a->sun_path + 1, name, n); /* sun_path[0] == 0: the abstract namespace, no file */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Every rank listens; rank j connects to every i < j and says who it is. */
static int example_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    t->rank = bs->rank;
    t->size = bs->size;
    if (!(t->peers = calloc((size_t)t->size, sizeof *t->peers)))
        return -ENOMEM;
    for (int r = 0; r < t->size; r++)
        t->peers[r].fd = -1;
    snprintf(t->path, sizeof t->path, "versus-example-%ld-%d", (long)getpid(), t->rank);
    struct sockaddr_un a;
    socklen_t alen = abstract_addr(&a, t->path);
    t->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (t->listen_fd < 0 || bind(t->listen_fd, (struct sockaddr *)&a, alen) || listen(t->listen_fd, t->size)) {
        t->host->error(t->host->core, "cannot listen on a local socket: %s", strerror(errno));
        return -errno;
    }
    char *names = calloc((size_t)t->size, sizeof t->path);
    if (!names)
        return -ENOMEM;
    int rc = bs->exchange(bs, t->path, names, sizeof t->path);
    for (int r = 0; !rc && r < t->rank; r++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        alen = abstract_addr(&a, names + (size_t)r * sizeof t->path);
        int32_t me = t->rank;
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, alen) || write(fd, &me, sizeof me) != sizeof me) {
            t->host->error(t->host->core, "cannot reach rank %d (is it on this host?): %s", r, strerror(errno));
            rc = -ECONNREFUSED;
            if (fd >= 0)
                close(fd);
            break;
        }
        t->peers[r].fd = fd;
    }
    free(names);
    for (int n = t->rank + 1; !rc && n < t->size; n++) {
        struct pollfd pfd = {.fd = t->listen_fd, .events = POLLIN};
        int32_t who = -1;
        int fd = poll(&pfd, 1, ACCEPT_TIMEOUT_MS) == 1 ? accept4(t->listen_fd, NULL, NULL, SOCK_CLOEXEC) : -1;
        if (fd < 0 || read(fd, &who, sizeof who) != sizeof who || who <= t->rank || who >= t->size ||
            t->peers[who].fd >= 0) {
            t->host->error(t->host->core, "a rank did not connect within %d s", ACCEPT_TIMEOUT_MS / 1000);
            rc = -ETIMEDOUT;
            if (fd >= 0)
                close(fd);
            break;
        }
        t->peers[who].fd = fd;
    }
    return rc ? rc : bs->barrier(bs);
}

static int example_query(vs_transport_t *t, vs_transport_info_t *info)
{
    (void)t;
    snprintf(info->name, sizeof info->name, "example");
    snprintf(info->library, sizeof info->library, "versus example");
    example_version(info->version, sizeof info->version);
    snprintf(info->provider, sizeof info->provider, "unix stream sockets");
    snprintf(info->medium, sizeof info->medium, VS_MEDIUM_LOCAL_SOCKET);
    return 0;
}

/* ---------------------------------------------------------------- data path */

/* A receive meets its message: copy it (or fail: too long), free it. */
static void complete(vs_transport_t *t, int from, ex_req_t *r, chunk_t *m)
{
    if (m->len > r->cap) {
        t->host->error(t->host->core, "a %zu-byte message from rank %d does not fit a %zu-byte receive",
                       m->len, from, r->cap);
        r->err = -EMSGSIZE;
    } else {
        memcpy(r->buf, m->data, m->len);
    }
    r->done = 1;
    free(m);
}

/* Deliver an arrived message: to the oldest receive of its tag, else queue it. */
static void deliver(vs_transport_t *t, int from, chunk_t *m)
{
    peer_t *p = &t->peers[from];
    ex_req_t *r = (ex_req_t *)vs_matchq_take(&p->posted, m->link.tag);
    if (r)
        complete(t, from, r, m);
    else
        vs_matchq_push(&p->unexp, &m->link);
}

/* Read what a peer sent, without blocking. */
static int read_peer(vs_transport_t *t, int from)
{
    peer_t *p = &t->peers[from];
    for (;;) {
        void *dst = p->in ? (void *)(p->in->data + p->in->done) : (void *)((char *)&p->hdr + p->hdr_got);
        size_t want = p->in ? p->in->len - p->in->done : sizeof p->hdr - p->hdr_got;
        ssize_t k = want ? recv(p->fd, dst, want, MSG_DONTWAIT) : 0;
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        if (k == 0 && want) {
            p->dead = 1;
            return -ECONNRESET;
        }
        if (!p->in) {
            if ((p->hdr_got += (size_t)k) < sizeof p->hdr)
                continue;
            if (!(p->in = malloc(sizeof *p->in + p->hdr.len)))
                return -ENOMEM;
            *p->in = (chunk_t){.link.tag = p->hdr.tag, .len = p->hdr.len};
            p->hdr_got = 0;
        } else {
            p->in->done += (size_t)k;
        }
        if (p->in->done == p->in->len) {
            chunk_t *m = p->in;
            p->in = NULL;
            deliver(t, from, m);
        }
    }
}

/* Write the queued sends to a peer, oldest first, without blocking. */
static int write_peer(peer_t *p)
{
    while (p->out.head) {
        ex_req_t *r = (ex_req_t *)p->out.head;
        size_t total = sizeof r->hdr + r->cap;
        const char *src = r->off < sizeof r->hdr ? (const char *)&r->hdr + r->off
                                                 : (const char *)r->buf + (r->off - sizeof r->hdr);
        size_t n = r->off < sizeof r->hdr ? sizeof r->hdr - r->off : total - r->off;
        ssize_t k = n ? send(p->fd, src, n, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
        if (k < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        if ((r->off += (size_t)k) < total)
            continue;
        r->done = 1; /* the caller's buffer is free again */
        vs_matchq_pop(&p->out);
    }
    return 0;
}

static int example_progress(vs_transport_t *t)
{
    for (int r = 0; r < t->size; r++) {
        peer_t *p = &t->peers[r];
        if (p->fd < 0 || p->dead)
            continue;
        int rc = write_peer(p);
        if (!rc)
            rc = read_peer(t, r);
        if (rc) {
            t->host->error(t->host->core, "connection to rank %d: %s", r,
                           rc == -ECONNRESET ? "closed by the peer" : strerror(-rc));
            return rc == -EPIPE ? -ECONNRESET : rc;
        }
    }
    return 0;
}

static int example_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                             vs_req_t *req)
{
    peer_t *p = &t->peers[peer];
    if (p->dead)
        return -ECONNRESET;
    ex_req_t *r = (ex_req_t *)req->opaque;
    *r = (ex_req_t){.link.tag = tag, .buf = mem->addr, .cap = len, .hdr = {tag, len}};
    vs_matchq_push(&p->out, &r->link);
    return example_progress(t);
}

static int example_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                             vs_req_t *req)
{
    peer_t *p = &t->peers[peer];
    ex_req_t *r = (ex_req_t *)req->opaque;
    *r = (ex_req_t){.link.tag = tag, .buf = mem->addr, .cap = len};
    chunk_t *m = (chunk_t *)vs_matchq_take(&p->unexp, tag);
    if (m) { /* it arrived before we asked */
        complete(t, peer, r, m);
        return 0;
    }
    if (p->dead)
        return -ECONNRESET;
    vs_matchq_push(&p->posted, &r->link);
    return 0;
}

static int example_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    ex_req_t *r = (ex_req_t *)req->opaque;
    int rc = r->done ? 0 : example_progress(t);
    *done = r->done;
    return r->done ? r->err : rc;
}

static int example_wait(vs_transport_t *t, vs_req_t *req)
{
    ex_req_t *r = (ex_req_t *)req->opaque;
    while (!r->done) {
        int rc = example_progress(t);
        if (rc)
            return rc;
    }
    return r->err;
}

/* ---------------------------------------------------------------- the ops table */

static const vs_transport_ops_t example_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "example",
    .summary = "the template transport: local UNIX stream sockets, one connection per pair",
    .library_version = example_version,
    .open = example_open,
    .close = example_close,
    .query = example_query,
    .connect = example_connect,
    .post_send = example_post_send,
    .post_recv = example_post_recv,
    .test = example_test,
    .wait = example_wait,
    .progress = example_progress,
};

VS_TRANSPORT_DEFINE(example_ops)
