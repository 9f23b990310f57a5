/* versus — TCP reference transport: plain sockets, the floor for TCP-based
 * providers.
 *
 * Every rank listens, the listening addresses go through the bootstrap, and
 * each pair gets one connection (the lower rank connects, then says who it
 * is).  TCP_NODELAY everywhere.  A message is a 16-byte header (tag, length)
 * followed by the payload; sends write both with one sendmsg().
 *
 * Two modes (transport option mode=):
 *   poll  (default) post_send/post_recv move as far as the socket allows
 *         without blocking and finish in test/progress; wait busy-polls
 *         (the UCX and libfabric TCP paths work this way);
 *   block the blocking send/recv ops sleep in sendmsg()/recv() like NetPIPE,
 *         and wait sleeps in poll() between attempts.
 * Incoming bytes go through a per-peer buffer; a payload larger than what
 * is buffered is read straight into the receive buffer.  A closed or reset
 * connection is -ECONNRESET with the peer's rank in the message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <versus/transport.h>

#define TCP_RXBUF (64 * 1024)
#define TCP_ACCEPT_TIMEOUT_MS 60000

enum { MODE_POLL, MODE_BLOCK };
enum { REQ_SEND = 1, REQ_RECV = 2 };

typedef struct tcp_hdr {
    uint64_t tag;
    uint64_t len;
} tcp_hdr_t;

typedef struct tcp_req tcp_req_t;
struct tcp_req {
    int kind, done, err, peer;
    uint64_t tag;
    unsigned char *buf;
    size_t len;       /* send: message length; recv: capacity */
    size_t off;       /* send: bytes of header + payload written */
    tcp_hdr_t hdr;    /* send: the header being written */
    tcp_req_t *next;
};
_Static_assert(sizeof(tcp_req_t) <= VS_REQ_BYTES, "request fits core's storage");

/* An arrival nobody asked for yet (payload kept here). */
typedef struct tcp_unexp {
    struct tcp_unexp *next;
    uint64_t tag;
    size_t len, got;
    tcp_req_t *req;   /* a receive that matched it while its payload was still arriving */
    int dropped;      /* matched by a receive too short for it: drained, then freed */
    unsigned char data[];
} tcp_unexp_t;

typedef struct tcp_peer {
    int fd;
    tcp_req_t *sendq, *sendq_tail;
    tcp_req_t *posted, *posted_tail;
    tcp_unexp_t *unexp, *unexp_tail;
    /* incoming stream */
    unsigned char *rx;          /* TCP_RXBUF bytes */
    size_t rx_pos, rx_end;
    tcp_hdr_t hdr;
    size_t hdr_got;
    int in_payload;
    unsigned char *dst;         /* payload destination, NULL to drop */
    size_t need, got;
    tcp_req_t *dst_req;         /* receive completed by this payload */
    tcp_unexp_t *dst_unexp;     /* or the unexpected entry it fills */
} tcp_peer_t;

struct vs_transport {
    const vs_host_t *host;
    int mode;
    size_t sockbuf;             /* 0: kernel autotuning */
    char addr[64], iface[IF_NAMESIZE];
    char listen_ip[INET_ADDRSTRLEN];
    int rank, size;
    int sndbuf, rcvbuf;         /* what the kernel reports on the first connection */
    tcp_peer_t *peers;
};

#define ERR(t, ...) (t)->host->error((t)->host->core, __VA_ARGS__)

/* ---- options ---------------------------------------------------------- */

static int parse_size(const char *s, size_t *out)
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
    if (*end || v > (1ULL << 30) / mul)
        return -EINVAL;
    *out = (size_t)(v * mul);
    return 0;
}

static int tcp_parse_opts(vs_transport_t *t, const vs_kv_t *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *k = opts[i].key, *v = opts[i].value;
        if (!strcmp(k, "mode")) {
            if (!strcmp(v, "poll"))
                t->mode = MODE_POLL;
            else if (!strcmp(v, "block"))
                t->mode = MODE_BLOCK;
            else {
                ERR(t, "mode=%s: expected poll or block", v);
                return -EINVAL;
            }
        } else if (!strcmp(k, "sockbuf")) {
            if (parse_size(v, &t->sockbuf) || t->sockbuf > INT32_MAX / 2) {
                ERR(t, "sockbuf=%s: expected a byte count (K/M suffix allowed, up to 1G)", v);
                return -EINVAL;
            }
        } else if (!strcmp(k, "addr")) {
            struct in_addr a;
            if (strlen(v) >= sizeof t->addr || inet_pton(AF_INET, v, &a) != 1) {
                ERR(t, "addr=%s: expected an IPv4 address", v);
                return -EINVAL;
            }
            snprintf(t->addr, sizeof t->addr, "%s", v);
        } else if (!strcmp(k, "iface")) {
            if (strlen(v) >= sizeof t->iface || !*v) {
                ERR(t, "iface=%s: not an interface name", v);
                return -EINVAL;
            }
            snprintf(t->iface, sizeof t->iface, "%s", v);
        } else {
            ERR(t, "unknown option '%s' (known: mode, sockbuf, addr, iface)", k);
            return -EINVAL;
        }
    }
    if (*t->addr && *t->iface) {
        ERR(t, "give addr= or iface=, not both");
        return -EINVAL;
    }
    return 0;
}

static int tcp_library_version(char *buf, size_t len)
{
#ifdef VS_TCP_VERSION
    snprintf(buf, len, "%s", VS_TCP_VERSION);
#else
    struct utsname u;
    snprintf(buf, len, "%s", uname(&u) ? "1" : u.release);
#endif
    return 0;
}

static int tcp_open(const vs_host_t *host, const vs_kv_t *opts, size_t n_opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    t->mode = MODE_POLL;
    int rc = tcp_parse_opts(t, opts, n_opts);
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void tcp_close(vs_transport_t *t)
{
    if (!t)
        return;
    for (int r = 0; t->peers && r < t->size; r++) {
        tcp_peer_t *p = &t->peers[r];
        if (p->fd >= 0)
            close(p->fd);
        while (p->unexp) {
            tcp_unexp_t *u = p->unexp;
            p->unexp = u->next;
            free(u);
        }
        free(p->rx);
    }
    free(t->peers);
    free(t);
}

/* ---- connect ------------------------------------------------------------ */

typedef struct tcp_hello {
    char host[64];
    struct in_addr ip; /* 0.0.0.0 until the address is chosen */
    uint16_t port;     /* network order */
    int32_t status;
} tcp_hello_t;

static int iface_ip(vs_transport_t *t, const char *name, int want_loopback, struct in_addr *out)
{
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs)) {
        int e = errno;
        ERR(t, "getifaddrs: %s", strerror(e));
        return -e;
    }
    int rc = -ENODEV;
    for (i = ifs; i && rc; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
            continue;
        if (name ? strcmp(i->ifa_name, name) : (!(i->ifa_flags & IFF_LOOPBACK) == !want_loopback) == 0)
            continue;
        *out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

static int set_sockopts(vs_transport_t *t, int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) {
        int e = errno;
        ERR(t, "setsockopt(TCP_NODELAY): %s", strerror(e));
        return -e;
    }
    if (t->sockbuf) {
        int v = (int)t->sockbuf;
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v) ||
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v)) {
            int e = errno;
            ERR(t, "setsockopt(SO_SNDBUF/SO_RCVBUF, %d): %s", v, strerror(e));
            return -e;
        }
    }
    return 0;
}

/* Listen on the chosen address, port chosen by the kernel. */
static int listen_on(vs_transport_t *t, struct in_addr ip, int *lfd, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        ERR(t, "socket: %s", strerror(e));
        return -e;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = ip};
    socklen_t sl = sizeof sa;
    int rc = set_sockopts(t, fd); /* inherited by accepted sockets, before the handshake */
    if (!rc && (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 128) ||
                getsockname(fd, (struct sockaddr *)&sa, &sl))) {
        rc = -errno;
        ERR(t, "listening on %s: %s", inet_ntoa(ip), strerror(-rc));
    }
    if (rc) {
        close(fd);
        return rc;
    }
    *lfd = fd;
    *port = sa.sin_port;
    return 0;
}

static int connect_to(vs_transport_t *t, int peer, const tcp_hello_t *h)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        ERR(t, "socket: %s", strerror(e));
        return -e;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = h->ip, .sin_port = h->port};
    int32_t me = t->rank;
    int rc = set_sockopts(t, fd);
    if (!rc && connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
        rc = -errno;
        ERR(t, "connecting to rank %d at %s:%u: %s", peer, inet_ntoa(h->ip), ntohs(h->port),
            strerror(-rc));
    }
    if (!rc && send(fd, &me, sizeof me, MSG_NOSIGNAL) != (ssize_t)sizeof me) {
        rc = -ECONNRESET;
        ERR(t, "rank %d dropped the connection during the handshake", peer);
    }
    if (rc) {
        close(fd);
        return rc;
    }
    t->peers[peer].fd = fd;
    return 0;
}

static int accept_from_lower(vs_transport_t *t, int lfd)
{
    for (int left = t->rank; left > 0; left--) {
        struct pollfd pf = {.fd = lfd, .events = POLLIN};
        int n = poll(&pf, 1, TCP_ACCEPT_TIMEOUT_MS);
        if (n <= 0) {
            ERR(t, "rank %d: %d lower rank(s) did not connect within %d s", t->rank, left,
                TCP_ACCEPT_TIMEOUT_MS / 1000);
            return n ? -errno : -ETIMEDOUT;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            ERR(t, "accept: %s", strerror(e));
            return -e;
        }
        int32_t who = -1;
        struct timeval tv = {.tv_sec = TCP_ACCEPT_TIMEOUT_MS / 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (recv(fd, &who, sizeof who, MSG_WAITALL) != (ssize_t)sizeof who || who < 0 ||
            who >= t->rank || t->peers[who].fd >= 0) {
            ERR(t, "a connection on the listening port did not introduce itself as a lower rank");
            close(fd);
            return -EPROTO;
        }
        tv.tv_sec = 0;
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        t->peers[who].fd = fd;
    }
    return 0;
}

/* The address to publish: addr=, iface=, loopback when every rank is on
 * this host, else this host's first non-loopback IPv4 address. */
static int choose_ip(vs_transport_t *t, const tcp_hello_t *all, struct in_addr *ip)
{
    int rc;
    if (*t->addr)
        return inet_pton(AF_INET, t->addr, ip) == 1 ? 0 : -EINVAL;
    if (*t->iface) {
        if ((rc = iface_ip(t, t->iface, 0, ip)))
            ERR(t, "interface %s has no IPv4 address that is up", t->iface);
        return rc;
    }
    int one_host = 1;
    for (int r = 1; r < t->size; r++)
        one_host &= !strcmp(all[r].host, all[0].host);
    if (one_host) {
        ip->s_addr = htonl(INADDR_LOOPBACK);
        return 0;
    }
    if ((rc = iface_ip(t, NULL, 0, ip)))
        ERR(t, "ranks span several hosts and this one has no non-loopback IPv4 address; give iface= or addr=");
    return rc;
}

static int tcp_connect(vs_transport_t *t, vs_bootstrap_t *bs)
{
    t->rank = bs->rank;
    t->size = bs->size;
    if (t->size < 2) {
        ERR(t, "needs at least 2 ranks");
        return -EINVAL;
    }
    t->peers = calloc((size_t)t->size, sizeof *t->peers);
    tcp_hello_t *all = calloc((size_t)t->size, sizeof *all);
    if (!t->peers || !all) {
        free(all);
        return -ENOMEM;
    }
    for (int r = 0; r < t->size; r++)
        t->peers[r].fd = -1;
    int lfd = -1, who = -1;
    struct in_addr ip = {0};
    tcp_hello_t me = {.status = 0};
    gethostname(me.host, sizeof me.host - 1);
    int rc = bs->exchange(bs, &me, all, sizeof me);
    if (rc) {
        ERR(t, "bootstrap exchange of host names failed");
        goto out_free;
    }
    me.status = choose_ip(t, all, &ip);
    if (!me.status)
        me.status = listen_on(t, ip, &lfd, &me.port);
    me.ip = ip;
    inet_ntop(AF_INET, &ip, t->listen_ip, sizeof t->listen_ip);
    rc = bs->exchange(bs, &me, all, sizeof me);
    if (rc) {
        ERR(t, "bootstrap exchange of listening addresses failed");
        goto out_listen;
    }
    for (int r = 0; r < t->size && !rc; r++)
        if (all[r].status)
            rc = all[r].status, who = r;
    if (rc) {
        if (who != t->rank)
            ERR(t, "rank %d could not open its listening socket", who);
        goto out_listen;
    }
    for (int r = t->rank + 1; r < t->size && !rc; r++)
        rc = connect_to(t, r, &all[r]);
    if (!rc)
        rc = accept_from_lower(t, lfd);
    for (int r = 0; r < t->size && !rc; r++) {
        if (r == t->rank)
            continue;
        if (!(t->peers[r].rx = malloc(TCP_RXBUF)))
            rc = -ENOMEM;
    }
    if (!rc) {
        int fd = t->peers[t->rank == 0 ? 1 : 0].fd;
        socklen_t sl = sizeof t->sndbuf;
        getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &t->sndbuf, &sl);
        sl = sizeof t->rcvbuf;
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t->rcvbuf, &sl);
    }
out_listen:
    if (lfd >= 0)
        close(lfd);
out_free:
    free(all);
    return rc;
}

/* ---- sending ------------------------------------------------------------ */

/* Write what the socket takes; 1 when the whole message is out. */
static int send_step(vs_transport_t *t, tcp_peer_t *p, tcp_req_t *r, int flags)
{
    const size_t total = sizeof r->hdr + r->len;
    while (r->off < total) {
        struct iovec iov[2];
        int n = 0;
        if (r->off < sizeof r->hdr)
            iov[n++] = (struct iovec){(char *)&r->hdr + r->off, sizeof r->hdr - r->off};
        size_t poff = r->off < sizeof r->hdr ? 0 : r->off - sizeof r->hdr;
        if (r->len > poff)
            iov[n++] = (struct iovec){r->buf + poff, r->len - poff};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(p->fd, &mh, flags | MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            int e = errno;
            if (e == EPIPE || e == ECONNRESET) {
                ERR(t, "rank %d closed the connection", r->peer);
                return -ECONNRESET;
            }
            ERR(t, "send to rank %d: %s", r->peer, strerror(e));
            return -e;
        }
        r->off += (size_t)k;
    }
    return 1;
}

static int send_queue_progress(vs_transport_t *t, tcp_peer_t *p)
{
    while (p->sendq) {
        tcp_req_t *r = p->sendq;
        int rc = send_step(t, p, r, MSG_DONTWAIT);
        if (rc <= 0)
            return rc;
        p->sendq = r->next;
        r->done = 1;
    }
    return 0;
}

static int check_peer(vs_transport_t *t, int peer)
{
    if (peer < 0 || peer >= t->size || peer == t->rank || !t->peers) {
        ERR(t, "peer %d is not another rank (size %d, rank %d)", peer, t->size, t->rank);
        return -EINVAL;
    }
    return 0;
}

static void send_init(tcp_req_t *r, const vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    *r = (tcp_req_t){.kind = REQ_SEND, .peer = peer, .tag = tag, .buf = mem->addr, .len = len,
                     .hdr = {.tag = tag, .len = len}};
}

static int tcp_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                         vs_req_t *req)
{
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    tcp_req_t *r = (tcp_req_t *)req->opaque;
    send_init(r, mem, len, peer, tag);
    tcp_peer_t *p = &t->peers[peer];
    if (!p->sendq) {
        rc = send_step(t, p, r, MSG_DONTWAIT);
        if (rc < 0)
            return rc;
        if (rc) {
            r->done = 1;
            return 0;
        }
    }
    if (p->sendq)
        p->sendq_tail->next = r;
    else
        p->sendq = r;
    p->sendq_tail = r;
    return 0;
}

/* ---- receiving ---------------------------------------------------------- */

static tcp_req_t *posted_take(tcp_peer_t *p, uint64_t tag)
{
    tcp_req_t *prev = NULL;
    for (tcp_req_t *r = p->posted; r; prev = r, r = r->next) {
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

static void too_short(vs_transport_t *t, tcp_req_t *r, uint64_t tag, size_t len)
{
    ERR(t, "rank %d: a %zu B message from rank %d (tag %" PRIu64 ") does not fit the %zu B receive",
        t->rank, len, r->peer, tag, r->len);
    r->err = -EMSGSIZE;
    r->done = 1;
}

/* A header is complete: decide where its payload goes. */
static int on_header(vs_transport_t *t, tcp_peer_t *p)
{
    tcp_req_t *r = posted_take(p, p->hdr.tag);
    p->in_payload = 1;
    p->need = p->hdr.len;
    p->got = 0;
    p->dst = NULL;
    p->dst_req = NULL;
    p->dst_unexp = NULL;
    if (r && p->hdr.len > r->len) {
        too_short(t, r, p->hdr.tag, p->hdr.len); /* payload dropped */
    } else if (r) {
        p->dst = r->buf;
        p->dst_req = r;
    } else {
        if (p->hdr.len > (1ULL << 40)) {
            ERR(t, "corrupt header from rank (length %" PRIu64 ")", p->hdr.len);
            return -EPROTO;
        }
        tcp_unexp_t *u = malloc(sizeof *u + p->hdr.len);
        if (!u) {
            ERR(t, "out of memory for an unexpected %" PRIu64 " B message", p->hdr.len);
            return -ENOMEM;
        }
        *u = (tcp_unexp_t){.tag = p->hdr.tag, .len = p->hdr.len};
        if (p->unexp)
            p->unexp_tail->next = u;
        else
            p->unexp = u;
        p->unexp_tail = u;
        p->dst = u->data;
        p->dst_unexp = u;
    }
    return 0;
}

static void unexp_remove(tcp_peer_t *p, tcp_unexp_t *u)
{
    tcp_unexp_t *prev = NULL;
    for (tcp_unexp_t *q = p->unexp; q && q != u; q = q->next)
        prev = q;
    if (prev)
        prev->next = u->next;
    else
        p->unexp = u->next;
    if (p->unexp_tail == u)
        p->unexp_tail = prev;
    free(u);
}

static void payload_done(tcp_peer_t *p)
{
    p->in_payload = 0;
    p->hdr_got = 0;
    if (p->dst_req) {
        p->dst_req->done = 1;
    } else if (p->dst_unexp) {
        tcp_unexp_t *u = p->dst_unexp;
        u->got = u->len;
        if (u->req) { /* matched while arriving: deliver */
            if (u->len)
                memcpy(u->req->buf, u->data, u->len);
            u->req->done = 1;
        }
        if (u->req || u->dropped)
            unexp_remove(p, u);
    }
}

/* Consume buffered bytes; returns 0 or a negative errno. */
static int rx_consume(vs_transport_t *t, tcp_peer_t *p)
{
    while (p->rx_pos < p->rx_end || (p->in_payload && p->got == p->need)) {
        size_t avail = p->rx_end - p->rx_pos;
        if (!p->in_payload) {
            size_t c = sizeof p->hdr - p->hdr_got < avail ? sizeof p->hdr - p->hdr_got : avail;
            memcpy((unsigned char *)&p->hdr + p->hdr_got, p->rx + p->rx_pos, c);
            p->hdr_got += c;
            p->rx_pos += c;
            if (p->hdr_got == sizeof p->hdr) {
                int rc = on_header(t, p);
                if (rc)
                    return rc;
            }
            continue;
        }
        size_t c = p->need - p->got < avail ? p->need - p->got : avail;
        if (p->dst && c)
            memcpy(p->dst + p->got, p->rx + p->rx_pos, c);
        p->got += c;
        p->rx_pos += c;
        if (p->got == p->need)
            payload_done(p);
    }
    return 0;
}

/* Non-blocking (until == NULL): read until the socket has nothing more.
 * Blocking: sleep in recv() until *until becomes true.  A long payload is
 * read straight into its destination. */
static int rx_progress(vs_transport_t *t, int peer, tcp_peer_t *p, const int *until)
{
    const int blocking = until != NULL;
    int rc;
    for (;;) {
        if ((rc = rx_consume(t, p)))
            return rc;
        if (blocking && *until)
            return 0;
        ssize_t k;
        size_t want;
        int flags = blocking ? 0 : MSG_DONTWAIT;
        int direct = p->in_payload && p->dst && p->need - p->got >= TCP_RXBUF / 2;
        if (direct) {
            want = p->need - p->got;
            k = recv(p->fd, p->dst + p->got, want, flags | (blocking ? MSG_WAITALL : 0));
        } else {
            p->rx_pos = p->rx_end = 0;
            want = TCP_RXBUF;
            k = recv(p->fd, p->rx, want, flags);
        }
        if (k == 0) {
            ERR(t, "rank %d closed the connection", peer);
            return -ECONNRESET;
        }
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            int e = errno;
            if (e == ECONNRESET) {
                ERR(t, "rank %d closed the connection (reset)", peer);
                return -ECONNRESET;
            }
            ERR(t, "receive from rank %d: %s", peer, strerror(e));
            return -e;
        }
        if (direct) {
            p->got += (size_t)k;
            if (p->got == p->need)
                payload_done(p);
        } else {
            p->rx_end = (size_t)k;
        }
        if (!blocking && (size_t)k < want)
            return rx_consume(t, p); /* socket drained: hand the bytes over */
    }
}

static int tcp_progress(vs_transport_t *t)
{
    if (!t->peers)
        return -ENOTCONN;
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank)
            continue;
        tcp_peer_t *p = &t->peers[r];
        int rc = p->sendq ? send_queue_progress(t, p) : 0;
        if (!rc)
            rc = rx_progress(t, r, p, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

static int recv_init(vs_transport_t *t, tcp_req_t *r, vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    *r = (tcp_req_t){.kind = REQ_RECV, .peer = peer, .tag = tag, .buf = mem->addr, .len = len};
    tcp_peer_t *p = &t->peers[peer];
    tcp_unexp_t *u = p->unexp;
    for (; u && (u->tag != tag || u->req || u->dropped); u = u->next)
        ;
    if (!u) {
        if (p->posted)
            p->posted_tail->next = r;
        else
            p->posted = r;
        p->posted_tail = r;
        return 0;
    }
    if (u->len > len) {
        too_short(t, r, tag, u->len);
        if (u->got < u->len) {
            u->dropped = 1; /* still arriving: let it finish, then free it */
            return 0;
        }
    } else if (u->got < u->len) {
        u->req = r; /* completes when the rest of its payload arrives */
        return 0;
    } else {
        if (u->len)
            memcpy(r->buf, u->data, u->len);
        r->done = 1;
    }
    unexp_remove(p, u);
    return 0;
}

static int tcp_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                         vs_req_t *req)
{
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    tcp_req_t *r = (tcp_req_t *)req->opaque;
    if ((rc = recv_init(t, r, mem, len, peer, tag)) || r->done)
        return rc;
    return rx_progress(t, peer, &t->peers[peer], NULL);
}

static int tcp_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    tcp_req_t *r = (tcp_req_t *)req->opaque;
    int rc = 0;
    if (!r->done)
        rc = tcp_progress(t);
    *done = r->done;
    return rc ? rc : (r->done ? r->err : 0);
}

/* Block mode: sleep until a socket with work is ready. */
static int wait_ready(vs_transport_t *t)
{
    struct pollfd pf[64];
    int n = 0;
    for (int r = 0; r < t->size && n < 64; r++) {
        if (r == t->rank)
            continue;
        tcp_peer_t *p = &t->peers[r];
        pf[n++] = (struct pollfd){.fd = p->fd, .events = (short)(POLLIN | (p->sendq ? POLLOUT : 0))};
    }
    if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR) {
        int e = errno;
        ERR(t, "poll: %s", strerror(e));
        return -e;
    }
    return 0;
}

static int tcp_wait(vs_transport_t *t, vs_req_t *req)
{
    int done = 0, rc;
    while (!(rc = tcp_test(t, req, &done)) && !done)
        if (t->mode == MODE_BLOCK && (rc = wait_ready(t)))
            return rc;
    return rc;
}

static int any_send_pending(vs_transport_t *t)
{
    for (int r = 0; r < t->size; r++)
        if (r != t->rank && t->peers[r].sendq)
            return 1;
    return 0;
}

/* Blocking pair.  Poll mode: post + busy wait.  Block mode: sleep in the
 * socket calls themselves, unless earlier non-blocking operations are in
 * flight, which must keep moving (then post + wait). */
static int tcp_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    vs_req_t req;
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    if (t->mode == MODE_POLL || t->peers[peer].sendq) {
        if ((rc = tcp_post_send(t, mem, len, peer, tag, &req)))
            return rc;
        return tcp_wait(t, &req);
    }
    tcp_req_t *r = (tcp_req_t *)req.opaque;
    send_init(r, mem, len, peer, tag);
    rc = send_step(t, &t->peers[peer], r, 0);
    return rc < 0 ? rc : 0;
}

static int tcp_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    vs_req_t req;
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    tcp_req_t *r = (tcp_req_t *)req.opaque;
    if (t->mode == MODE_POLL || any_send_pending(t)) {
        if ((rc = tcp_post_recv(t, mem, len, peer, tag, &req)))
            return rc;
        return tcp_wait(t, &req);
    }
    if ((rc = recv_init(t, r, mem, len, peer, tag)))
        return rc;
    tcp_peer_t *p = &t->peers[peer];
    while (!r->done && !(rc = rx_progress(t, peer, p, &r->done)))
        ;
    return rc ? rc : r->err;
}

static int tcp_query(vs_transport_t *t, vs_transport_info_t *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "tcp");
    snprintf(info->library, sizeof info->library, "versus");
    tcp_library_version(info->version, sizeof info->version);
    const char *mode = t->mode == MODE_BLOCK ? "block" : "poll";
    snprintf(info->provider, sizeof info->provider, "tcp/%s", mode);
    info->n_thresholds = 2;
    snprintf(info->thresholds[0].name, sizeof info->thresholds[0].name, "so_sndbuf");
    info->thresholds[0].bytes = t->sndbuf > 0 ? t->sndbuf : -1;
    snprintf(info->thresholds[1].name, sizeof info->thresholds[1].name, "so_rcvbuf");
    info->thresholds[1].bytes = t->rcvbuf > 0 ? t->rcvbuf : -1;
    char sockbuf[32];
    if (t->sockbuf)
        snprintf(sockbuf, sizeof sockbuf, "%zu", t->sockbuf);
    else
        snprintf(sockbuf, sizeof sockbuf, "auto");
    const char *kv[][2] = {
        {"mode", mode},
        {"sockbuf", sockbuf},
        {"addr", t->listen_ip},
        {"iface", *t->iface ? t->iface : ""},
        {"nodelay", "1"},
        {"header_bytes", "16"},
    };
    info->n_attrs = (int)(sizeof kv / sizeof kv[0]);
    for (int i = 0; i < info->n_attrs; i++) {
        snprintf(info->attrs[i].key, sizeof info->attrs[i].key, "%s", kv[i][0]);
        snprintf(info->attrs[i].value, sizeof info->attrs[i].value, "%s", kv[i][1]);
    }
    return 0;
}

static const vs_transport_ops_t tcp_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "tcp",
    .summary = "TCP reference: plain sockets with TCP_NODELAY, busy-polling or blocking (mode=)",
    .library_version = tcp_library_version,
    .open = tcp_open,
    .close = tcp_close,
    .query = tcp_query,
    .connect = tcp_connect,
    .post_send = tcp_post_send,
    .post_recv = tcp_post_recv,
    .test = tcp_test,
    .wait = tcp_wait,
    .progress = tcp_progress,
    .send = tcp_send,
    .recv = tcp_recv,
};

VS_TRANSPORT_DEFINE(tcp_ops)
