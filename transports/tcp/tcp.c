/* versus — TCP reference transport: plain sockets, the floor for TCP-based
 * providers.
 *
 * Every rank listens, the listening addresses go through the bootstrap, and
 * each pair gets one connection (the lower rank connects, then says who it
 * is).  TCP_NODELAY everywhere.  A message is a 16-byte header (tag, length)
 * followed by 0-63 pad bytes (payloads start cache-line aligned in the
 * stream) and the payload; sends write all of it with one sendmsg().
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
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <versus/info.h>

#include "tcp.h"
#include "vs_tcp_path.h"

_Static_assert(IF_NAMESIZE <= 16, "interface names fit");

/* ---- options ---------------------------------------------------------- */

enum { TCP_OPT_MODE, TCP_OPT_SOCKBUF, TCP_OPT_ADDR, TCP_OPT_IFACE, TCP_OPT_DELAY_NS, TCP_N_OPTS };

static const vs_option_t tcp_options[TCP_N_OPTS] = {
    /* the choices in the order of MODE_POLL, MODE_BLOCK */
    [TCP_OPT_MODE] = {"mode", VS_OPT_CHOICE, "poll|block", 0, "poll",
                      "busy-poll non-blocking sockets, or block in recv/send"},
    [TCP_OPT_SOCKBUF] = {"sockbuf", VS_OPT_BYTES, NULL, INT32_MAX / 2, "the system's",
                         "SO_SNDBUF and SO_RCVBUF (below 1G: the kernel doubles it)"},
    [TCP_OPT_ADDR] = {"addr", VS_OPT_TEXT, NULL, 0, "the address the ranks met on",
                      "IPv4 address to listen on for the data"},
    [TCP_OPT_IFACE] = {"iface", VS_OPT_TEXT, NULL, 0, "none",
                       "interface whose IPv4 address to listen on (not with addr)"},
    [TCP_OPT_DELAY_NS] = {"delay_ns", VS_OPT_COUNT, NULL, 1000000000, "0",
                          "test hook: busy-wait this long before each blocking send (an injected slowdown, recorded)"},
};

/* The values, parsed and range-checked by core against tcp_options; what the
 * table cannot say (an IPv4 address, an interface name) is checked here. */
static int tcp_take_opts(vs_transport_t *t, const vs_opt_value_t *o)
{
    const char *addr = o[TCP_OPT_ADDR].text, *iface = o[TCP_OPT_IFACE].text;
    t->mode = (int)o[TCP_OPT_MODE].choice;
    t->sockbuf = o[TCP_OPT_SOCKBUF].count; /* 0 when not given: kernel autotuning */
    t->delay_ns = o[TCP_OPT_DELAY_NS].count;
    struct in_addr a;
    if (addr && (strlen(addr) >= sizeof t->addr || inet_pton(AF_INET, addr, &a) != 1)) {
        ERR(t, "addr=%s: expected an IPv4 address", addr);
        return -EINVAL;
    }
    if (iface && strlen(iface) >= sizeof t->iface) {
        ERR(t, "iface=%s: not an interface name", iface);
        return -EINVAL;
    }
    if (addr && iface) {
        ERR(t, "give addr= or iface=, not both");
        return -EINVAL;
    }
    snprintf(t->addr, sizeof t->addr, "%s", addr ? addr : "");
    snprintf(t->iface, sizeof t->iface, "%s", iface ? iface : "");
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

static int tcp_open(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    int rc = tcp_take_opts(t, opts);
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
        vs_matchq_link_t *l;
        while ((l = vs_matchq_pop(&p->unexp)))
            free(VS_MATCHQ_ENTRY(l, tcp_unexp_t, link));
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
        int is_loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
        if (name ? strcmp(i->ifa_name, name) != 0 : is_loopback != want_loopback)
            continue;
        *out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

/* The path of a connection (vs_tcp_path.h): its segment size, the interface
 * of its local address and that interface's MTU (what the packet steps of a
 * curve follow), and its congestion control. */
static void path_facts(vs_transport_t *t, int fd)
{
    vs_tcp_path_t p;
    vs_tcp_path_of(fd, &p);
    t->mss = p.mss;
    t->mtu = p.mtu;
    snprintf(t->path_iface, sizeof t->path_iface, "%s", p.iface);
    snprintf(t->congestion, sizeof t->congestion, "%s", p.congestion);
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
        if (!(t->peers[r].rx = aligned_alloc(TCP_ALIGN, TCP_ALIGN + TCP_RXBUF)))
            rc = -ENOMEM;
    }
    if (!rc) {
        int fd = t->peers[t->rank == 0 ? 1 : 0].fd;
        socklen_t sl = sizeof t->sndbuf;
        getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &t->sndbuf, &sl);
        sl = sizeof t->rcvbuf;
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &t->rcvbuf, &sl);
        path_facts(t, fd);
    }
out_listen:
    if (lfd >= 0)
        close(lfd);
out_free:
    free(all);
    return rc;
}

static int tcp_query(vs_transport_t *t, vs_transport_info_t *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "tcp");
    snprintf(info->library, sizeof info->library, "versus");
    tcp_library_version(info->version, sizeof info->version);
    const char *mode = t->mode == MODE_BLOCK ? "block" : "poll";
    snprintf(info->provider, sizeof info->provider, "tcp/%s", mode);
    snprintf(info->medium, sizeof info->medium, "%s",
             strncmp(t->listen_ip, "127.", 4) == 0 ? VS_MEDIUM_LOOPBACK : VS_MEDIUM_NETWORK);
    info->n_thresholds = 2;
    snprintf(info->thresholds[0].name, sizeof info->thresholds[0].name, "so_sndbuf");
    info->thresholds[0].bytes = t->sndbuf > 0 ? t->sndbuf : -1;
    snprintf(info->thresholds[1].name, sizeof info->thresholds[1].name, "so_rcvbuf");
    info->thresholds[1].bytes = t->rcvbuf > 0 ? t->rcvbuf : -1;
    /* One message is a 16-byte header and its payload, which starts 64-aligned in the
     * stream: a ping-pong message of n bytes takes ceil64(n + 16) bytes of it, and one
     * segment (MSS, rounded down to 64) holds n up to floor64(MSS) - 16. */
    if (t->mss > 64)
        vs_info_threshold(info, "mss_payload", (int64_t)(t->mss / TCP_ALIGN * TCP_ALIGN) - (int64_t)sizeof(tcp_hdr_t));
    char sockbuf[32];
    if (t->sockbuf)
        snprintf(sockbuf, sizeof sockbuf, "%zu", t->sockbuf);
    else
        snprintf(sockbuf, sizeof sockbuf, "auto");
    char mtu[16] = "", mss[16] = "", delay[24];
    snprintf(delay, sizeof delay, "%llu", (unsigned long long)t->delay_ns);
    if (t->mtu > 0)
        snprintf(mtu, sizeof mtu, "%d", t->mtu);
    if (t->mss > 0)
        snprintf(mss, sizeof mss, "%d", t->mss);
    const char *kv[][2] = {
        {"mode", mode},
        {"sockbuf", sockbuf},
        {"addr", t->listen_ip},
        {"iface", *t->iface ? t->iface : ""},
        {"nodelay", "1"},
        {"header_bytes", "16"},
        {"payload_align", "64"},
        {"tcp_framing", "16 B header per message, payload padded to 64 B"},
        {"wait", t->mode == MODE_BLOCK ? "sleep in recv/send/poll" : "busy-poll"},
        {"path_iface", t->path_iface},
        {"mtu", mtu},
        {"mss", mss},
        {"test_delay_ns", delay},
        {"congestion", t->congestion},
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
    .options = tcp_options,
    .n_options = sizeof tcp_options / sizeof tcp_options[0],
    .roles = VS_ROLE_REFERENCE,
};

VS_TRANSPORT_DEFINE(tcp_ops)
