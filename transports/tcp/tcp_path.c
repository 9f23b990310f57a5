/* versus tcp transport: the data path.  Sends write header and payload with
 * one sendmsg(); receives match (peer, tag) in arrival order through a
 * per-peer buffer, reading long payloads straight into place; see tcp.c. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <time.h>

#include "tcp.h"

#define REQ_OF(l) VS_MATCHQ_ENTRY(l, tcp_req_t, link)
#define UNEXP_OF(l) VS_MATCHQ_ENTRY(l, tcp_unexp_t, link)

/* A socket call to or from `peer` failed for good: log why, return -errno. */
__attribute__((cold)) static int sock_error(vs_transport_t *t, int peer, const char *what, int e)
{
    if (e == EPIPE || e == ECONNRESET) {
        ERR(t, "rank %d closed the connection%s", peer, e == ECONNRESET ? " (reset)" : "");
        return -ECONNRESET;
    }
    ERR(t, "%s rank %d: %s", what, peer, strerror(e));
    return -e;
}

/* After a socket call to or from `peer` failed: 1 when a signal interrupted
 * it (call again), 0 when it would block (the polling path), else as
 * sock_error. */
static inline int sock_failed(vs_transport_t *t, int peer, const char *what)
{
    int e = errno;
    if (e == EINTR)
        return 1;
    if (e == EAGAIN || e == EWOULDBLOCK)
        return 0;
    return sock_error(t, peer, what, e);
}

/* ---- sending ------------------------------------------------------------ */

static const unsigned char tcp_zeros[TCP_ALIGN];

/* Write what the socket takes; 1 when the whole message is out. */
static int send_step(vs_transport_t *t, tcp_peer_t *p, tcp_req_t *r, int flags)
{
    if (!r->started) {
        r->pad = tcp_pad_after(p->tx_stream);
        r->started = 1;
    }
    const size_t hl = sizeof r->hdr, pend = hl + r->pad, total = pend + r->len;
    while (r->off < total) {
        struct iovec iov[3];
        int n = 0;
        if (r->off < hl)
            iov[n++] = (struct iovec){(char *)&r->hdr + r->off, hl - r->off};
        if (r->off < pend && r->pad) {
            size_t from = r->off > hl ? r->off - hl : 0;
            iov[n++] = (struct iovec){(void *)(tcp_zeros + from), r->pad - from};
        }
        size_t poff = r->off < pend ? 0 : r->off - pend;
        if (r->len > poff)
            iov[n++] = (struct iovec){r->buf + poff, r->len - poff};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t k = sendmsg(p->fd, &mh, flags | MSG_NOSIGNAL);
        if (k < 0) {
            int rc = sock_failed(t, r->peer, "send to");
            if (rc > 0)
                continue;
            return rc;
        }
        r->off += (size_t)k;
        p->tx_stream += (uint64_t)k;
    }
    return 1;
}

static int send_queue_progress(vs_transport_t *t, tcp_peer_t *p)
{
    while (p->sendq.head) {
        tcp_req_t *r = REQ_OF(p->sendq.head);
        int rc = send_step(t, p, r, MSG_DONTWAIT);
        if (rc <= 0)
            return rc;
        vs_matchq_pop(&p->sendq);
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
    *r = (tcp_req_t){.link.tag = tag, .peer = peer, .buf = mem->addr, .len = len,
                     .hdr = {.tag = tag, .len = len}};
}

int tcp_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req)
{
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    tcp_req_t *r = (tcp_req_t *)req->opaque;
    send_init(r, mem, len, peer, tag);
    tcp_peer_t *p = &t->peers[peer];
    if (!p->sendq.head) {
        rc = send_step(t, p, r, MSG_DONTWAIT);
        if (rc < 0)
            return rc;
        if (rc) {
            r->done = 1;
            return 0;
        }
    }
    vs_matchq_push(&p->sendq, &r->link);
    return 0;
}

/* ---- receiving ---------------------------------------------------------- */

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
    tcp_req_t *r = REQ_OF(vs_matchq_take(&p->posted, p->hdr.tag));
    p->in_payload = 1;
    p->skip = tcp_pad_after(p->rx_stream - sizeof p->hdr);
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
        *u = (tcp_unexp_t){.link.tag = p->hdr.tag, .len = p->hdr.len};
        vs_matchq_push(&p->unexp, &u->link);
        p->dst = u->data;
        p->dst_unexp = u;
    }
    return 0;
}

static void unexp_remove(tcp_peer_t *p, tcp_unexp_t *u)
{
    vs_matchq_remove(&p->unexp, &u->link);
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
    while (p->rx_pos < p->rx_end || (p->in_payload && !p->skip && p->got == p->need)) {
        size_t avail = p->rx_end - p->rx_pos;
        if (!p->in_payload) {
            size_t c = sizeof p->hdr - p->hdr_got < avail ? sizeof p->hdr - p->hdr_got : avail;
            memcpy((unsigned char *)&p->hdr + p->hdr_got, p->rx + p->rx_pos, c);
            p->hdr_got += c;
            p->rx_pos += c;
            p->rx_stream += c;
            if (p->hdr_got == sizeof p->hdr) {
                int rc = on_header(t, p);
                if (rc)
                    return rc;
            }
            continue;
        }
        if (p->skip) {
            size_t c = p->skip < avail ? p->skip : avail;
            p->skip -= c;
            p->rx_pos += c;
            p->rx_stream += c;
            continue;
        }
        size_t c = p->need - p->got < avail ? p->need - p->got : avail;
        if (p->dst && c)
            memcpy(p->dst + p->got, p->rx + p->rx_pos, c);
        p->got += c;
        p->rx_pos += c;
        p->rx_stream += c;
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
        int direct = p->in_payload && !p->skip && p->dst && p->need - p->got >= TCP_RXBUF / 2;
        if (direct) {
            want = p->need - p->got;
            k = recv(p->fd, p->dst + p->got, want, flags | (blocking ? MSG_WAITALL : 0));
        } else {
            /* land bytes at their stream offset modulo TCP_ALIGN: aligned copies */
            p->rx_pos = p->rx_end = (size_t)(p->rx_stream % TCP_ALIGN);
            want = TCP_RXBUF;
            if (!p->in_payload && p->posted.head && REQ_OF(p->posted.head)->len >= TCP_RXBUF)
                want = TCP_HDR_READ; /* a long receive waits: take its header, then read in place */
            k = recv(p->fd, p->rx + p->rx_pos, want, flags);
        }
        if (k == 0) {
            ERR(t, "rank %d closed the connection", peer);
            return -ECONNRESET;
        }
        if (k < 0) {
            if ((rc = sock_failed(t, peer, "receive from")) > 0)
                continue;
            return rc;
        }
        if (direct) {
            p->got += (size_t)k;
            p->rx_stream += (uint64_t)k;
            if (p->got == p->need)
                payload_done(p);
        } else {
            p->rx_end += (size_t)k;
        }
        if (!blocking && (size_t)k < want)
            return rx_consume(t, p); /* socket drained: hand the bytes over */
    }
}

int tcp_progress(vs_transport_t *t)
{
    if (!t->peers)
        return -ENOTCONN;
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank)
            continue;
        tcp_peer_t *p = &t->peers[r];
        int rc = p->sendq.head ? send_queue_progress(t, p) : 0;
        if (!rc)
            rc = rx_progress(t, r, p, NULL);
        if (rc)
            return rc;
    }
    return 0;
}

static int recv_init(vs_transport_t *t, tcp_req_t *r, vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    *r = (tcp_req_t){.link.tag = tag, .peer = peer, .buf = mem->addr, .len = len};
    tcp_peer_t *p = &t->peers[peer];
    tcp_unexp_t *u = UNEXP_OF(p->unexp.head);
    for (; u && (u->link.tag != tag || u->req || u->dropped); u = UNEXP_OF(u->link.next))
        ;
    if (!u) {
        vs_matchq_push(&p->posted, &r->link);
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

int tcp_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
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

int tcp_test(vs_transport_t *t, vs_req_t *req, int *done)
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
        pf[n++] = (struct pollfd){.fd = p->fd, .events = (short)(POLLIN | (p->sendq.head ? POLLOUT : 0))};
    }
    if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR) {
        int e = errno;
        ERR(t, "poll: %s", strerror(e));
        return -e;
    }
    return 0;
}

int tcp_wait(vs_transport_t *t, vs_req_t *req)
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
        if (r != t->rank && t->peers[r].sendq.head)
            return 1;
    return 0;
}

/* Blocking pair.  Poll mode: post + busy wait.  Block mode: sleep in the
 * socket calls themselves, unless earlier non-blocking operations are in
 * flight, which must keep moving (then post + wait). */
/* The delay_ns test hook: a known slowdown for the regression check's truth test. */
static void injected_delay(const vs_transport_t *t)
{
    if (!t->delay_ns)
        return;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) < t->delay_ns);
}

int tcp_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    vs_req_t req;
    int rc = check_peer(t, peer);
    if (rc)
        return rc;
    injected_delay(t);
    if (t->mode == MODE_POLL || t->peers[peer].sendq.head) {
        if ((rc = tcp_post_send(t, mem, len, peer, tag, &req)))
            return rc;
        return tcp_wait(t, &req);
    }
    tcp_req_t *r = (tcp_req_t *)req.opaque;
    send_init(r, mem, len, peer, tag);
    rc = send_step(t, &t->peers[peer], r, 0);
    return rc < 0 ? rc : 0;
}

int tcp_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag)
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
