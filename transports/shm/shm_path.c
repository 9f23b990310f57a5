/* versus shm transport: the data path.  Sends write ring records or stream
 * through the staging slots; receives match (peer, tag) in arrival order;
 * progress reads rings, drains staging and checks that peers are alive.
 * The layout and protocol are described at the top of shm.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm.h"

#define REQ_OF(l) VS_MATCHQ_ENTRY(l, shm_req_t, link)
#define UNEXP_OF(l) VS_MATCHQ_ENTRY(l, shm_unexp_t, link)
#define LARGE_OF(l) VS_MATCHQ_ENTRY(l, shm_large_t, link)

void shm_peer_lists_free(shm_peer_t *p)
{
    shm_unexp_t *u;
    while ((u = UNEXP_OF(vs_matchq_pop(&p->unexp)))) {
        if (u->large && u->large->buffering && u->large->done == u->large->len) {
            free(u->large->buf); /* buffered completely: no longer in the staging list */
            free(u->large);
        }
        free(u);
    }
    shm_maps_free(p);
    shm_large_t *l;
    while ((l = LARGE_OF(vs_matchq_pop(&p->large)))) {
        if (l->heap) {
            free(l->buf);
            free(l);
        }
    }
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
        w->box_ack = (uint32_t)p->rx_box;
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
    l->box_ack = (uint32_t)p->rx_box;
    __atomic_store_n(&l->flag, flag_of(t, p->tx_tail), __ATOMIC_RELEASE);
    p->tx_tail += n;
}

/* Up to SHM_BOX_DATA bytes, inlined: the payloads of the box and of a
 * one-line record are too short for a call to pay. */
static inline void copy_small(unsigned char *d, const unsigned char *s, size_t n)
{
    if (n >= 16) {
        __builtin_memcpy(d, s, 16);
        __builtin_memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        __builtin_memcpy(d, s, 8);
        __builtin_memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        __builtin_memcpy(d, s, 4);
        __builtin_memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

/* What a record from the peer says the peer has read of this rank's box
 * and ring (the low 32 bits of each counter; neither runs more than 2^32
 * ahead of what the peer has read). */
static inline void learn_box(shm_peer_t *p, uint32_t box_ack)
{
    uint64_t acked = p->tx_box - (uint32_t)((uint32_t)p->tx_box - box_ack);
    if (acked > p->tx_box_acked)
        p->tx_box_acked = acked;
}

static inline void learn_ring(vs_transport_t *t, shm_peer_t *p, uint32_t ring_ack)
{
    uint64_t head = p->tx_tail - (uint32_t)((uint32_t)p->tx_tail - ring_ack);
    if (head > p->tx_head_seen && p->tx_tail - head <= t->ring_lines)
        p->tx_head_seen = head;
}

/* Send through the box when it may be used: the peer has read the box's
 * last message and every ring record (so the box's message is the oldest
 * unread one, which is the order the receiver reads in: box first).
 * Returns 1 when sent. */
static inline int box_send(vs_transport_t *t, shm_peer_t *p, const unsigned char *buf, size_t len, uint64_t tag)
{
    if (len > SHM_BOX_DATA || p->tx_box != p->tx_box_acked)
        return 0;
    if (p->tx_tail != p->tx_head_seen) {
        p->tx_head_seen = __atomic_load_n(&p->tx_ctrl->ring_head, __ATOMIC_ACQUIRE);
        if (p->tx_tail != p->tx_head_seen)
            return 0;
    }
    shm_box_t *b = &p->tx_ctrl->box;
    copy_small(b->data, buf, len);
    b->tag = tag;
    b->len = (uint32_t)len;
    b->box_ack = (uint32_t)p->rx_box;
    b->ring_ack = (uint32_t)p->rx_head;
    __atomic_store_n(&b->flag, box_flag_of(t, p->tx_box), __ATOMIC_RELEASE);
    p->tx_box++;
    return 1;
}

/* The peer's box holds a message this rank has not read (acquire). */
static inline int box_ready(const vs_transport_t *t, const shm_peer_t *p)
{
    return __atomic_load_n(&p->rx_ctrl->box.flag, __ATOMIC_ACQUIRE) == box_flag_of(t, p->rx_box);
}

/* The box's message has been copied out: learn what it acknowledges and
 * count it read (the peer learns that from this rank's next record). */
static inline void box_consumed(vs_transport_t *t, shm_peer_t *p)
{
    const shm_box_t *b = &p->rx_ctrl->box;
    learn_box(p, b->box_ack);
    learn_ring(t, p, b->ring_ack);
    p->rx_box++;
}

/* Has the receiver copied single-copy message ack - 1 (ack = seq + 1; 0 or
 * less: a slot never used)?  A slot only grows (seq + SHM_ACKS is sent only
 * once seq is acked), so a later message's ack in it counts too. */
static inline int acked(shm_peer_t *p, uint64_t ack)
{
    return (int64_t)ack <= 0 ||
           __atomic_load_n(&p->tx_ctrl->acks[(ack - 1) % SHM_ACKS], __ATOMIC_ACQUIRE) >= ack;
}

/* An eager message (len <= eager_limit) into the box or the ring; 1 when
 * written, 0 when the ring has no room yet. */
static inline int eager_write(vs_transport_t *t, shm_peer_t *p, const unsigned char *buf, size_t len, uint64_t tag)
{
    if (box_send(t, p, buf, len, tag))
        return 1;
    size_t n = lines_for(len);
    shm_line_t *l = ring_reserve(t, p, n);
    if (!l)
        return 0;
    memcpy(l->data, buf, len);
    ring_publish(t, p, l, REC_EAGER, tag, len, n);
    return 1;
}

/* Move a send forward; returns 1 when it is complete. */
static int send_step(vs_transport_t *t, shm_peer_t *p, shm_req_t *r)
{
    if (r->len <= t->eager_limit)
        return eager_write(t, p, r->buf, r->len, r->link.tag);
    if (r->reg) {
        /* single copy: a reference in the ring; the ack completes the send */
        uint64_t seq = p->tx_mseq;
        if (!acked(p, seq - SHM_ACKS + 1))
            return 0; /* the slot's previous message is still being copied */
        shm_line_t *l = ring_reserve(t, p, 1);
        if (!l)
            return 0;
        shm_map_ref_t ref = {.id = r->reg->id, .seq = seq, .bytes = r->reg->bytes, .fd = r->reg->fd};
        memcpy(l->data, &ref, sizeof ref);
        ring_publish(t, p, l, REC_MAP, r->link.tag, r->len, 1);
        p->tx_mseq++;
        r->ack = seq + 1;
        return 1;
    }
    if (!r->hdr_sent) {
        shm_line_t *l = ring_reserve(t, p, 1);
        if (!l)
            return 0;
        ring_publish(t, p, l, REC_LARGE, r->link.tag, r->len, 1);
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

/* A send whose step is over: complete, unless a single copy still waits for
 * its ack (see req_done). */
static inline void send_stepped(shm_req_t *r)
{
    r->done = !r->ack;
}

static void send_queue_progress(vs_transport_t *t, shm_peer_t *p)
{
    while (p->sendq.head && send_step(t, p, REQ_OF(p->sendq.head)))
        send_stepped(REQ_OF(vs_matchq_pop(&p->sendq)));
}

/* Complete?  A single-copy send is once the receiver acknowledged its copy. */
static inline int req_done(vs_transport_t *t, shm_req_t *r)
{
    if (!r->done && r->ack && acked(&t->peers[r->peer], r->ack))
        r->done = 1;
    return r->done;
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

int shm_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_req_t *r = (shm_req_t *)req->opaque;
    *r = (shm_req_t){.link.tag = tag, .peer = peer, .buf = mem->addr, .len = len};
    if (mem->desc && len >= t->single_min)
        r->reg = mem->desc; /* registered: single copy is on */
    shm_peer_t *p = &t->peers[peer];
    if (!p->sendq.head && send_step(t, p, r)) {
        send_stepped(r);
        return 0;
    }
    vs_matchq_push(&p->sendq, &r->link);
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

/* An early arrival, one of: an eager payload (data, copied), a large message
 * in staging (large) or a single-copy message still in the sender's buffer (ref). */
static int unexp_add(shm_peer_t *p, uint64_t tag, size_t len, const void *data, shm_large_t *large,
                     const shm_map_ref_t *ref)
{
    shm_unexp_t *u = malloc(sizeof *u + (data ? len : 0));
    if (!u)
        return -ENOMEM;
    *u = (shm_unexp_t){.link.tag = tag, .len = len, .large = large, .mapped = ref != NULL};
    if (ref)
        u->ref = *ref;
    if (data)
        memcpy(u->data, data, len);
    vs_matchq_push(&p->unexp, &u->link);
    return 0;
}

/* A single-copy message meets its receive r: the payload goes straight from
 * the sender's buffer into r's (or r fails with -EMSGSIZE when it is too
 * short and the payload is dropped), then the ack completes the send. */
static int map_deliver(vs_transport_t *t, int peer, shm_peer_t *p, shm_req_t *r, uint64_t tag,
                       size_t len, const shm_map_ref_t *ref)
{
    if (len > r->len) {
        recv_too_short(t, r, peer, tag, len);
    } else if (len) {
        const unsigned char *src = shm_map_peer(t, peer, ref);
        if (!src)
            return r->err = -EPROTO;
        memcpy(r->buf, src, len);
    }
    r->done = 1;
    __atomic_store_n(&p->rx_ctrl->acks[ref->seq % SHM_ACKS], ref->seq + 1, __ATOMIC_RELEASE);
    return 0;
}

/* An eager payload (a ring record's or the box's) to the first posted
 * receive of its tag, or to the unexpected list. */
static int eager_deliver(vs_transport_t *t, int peer, shm_peer_t *p, uint64_t tag, size_t len,
                         const unsigned char *data)
{
    shm_req_t *r = REQ_OF(vs_matchq_take(&p->posted, tag));
    if (r && len <= r->len) {
        if (len)
            memcpy(r->buf, data, len);
        r->done = 1;
    } else if (r) {
        recv_too_short(t, r, peer, tag, len);
    } else if (unexp_add(p, tag, len, data, NULL, NULL)) {
        ERR(t, "out of memory for an unexpected %zu B message", len);
        return -ENOMEM;
    }
    return 0;
}

/* A ring record of n lines has been read: tell the sender. */
static inline void ring_consumed(shm_peer_t *p, const shm_line_t *l)
{
    p->rx_head += l->nlines;
    __atomic_store_n(&p->rx_ctrl->ring_head, p->rx_head, __ATOMIC_RELEASE);
}

/* Read what the peer put in the ring. */
static int ring_progress(vs_transport_t *t, int peer, shm_peer_t *p)
{
    for (;;) {
        shm_line_t *l = &p->rx_ring[p->rx_head & (t->ring_lines - 1)];
        /* the ring's flag first, then the box's: a box message written
         * before this record is seen, and read first */
        int ring_ready = __atomic_load_n(&l->flag, __ATOMIC_ACQUIRE) == flag_of(t, p->rx_head);
        if (box_ready(t, p)) {
            const shm_box_t *b = &p->rx_ctrl->box;
            int rc = eager_deliver(t, peer, p, b->tag, b->len, b->data);
            if (rc)
                return rc;
            box_consumed(t, p);
            continue;
        }
        if (!ring_ready)
            return 0;
        learn_box(p, l->box_ack);
        size_t len = l->len;
        if (l->kind == REC_EAGER) {
            int rc = eager_deliver(t, peer, p, l->tag, len, l->data);
            if (rc)
                return rc;
        } else if (l->kind == REC_LARGE) {
            shm_req_t *r = REQ_OF(vs_matchq_take(&p->posted, l->tag));
            int fits = r && len <= r->len;
            shm_large_t *lg = fits ? &r->large : calloc(1, sizeof *lg);
            if (!lg)
                return -ENOMEM;
            *lg = (shm_large_t){.link.tag = l->tag, .req = fits ? r : NULL, .len = len,
                                .discard = r && !fits, .heap = !fits};
            if (r && !fits)
                recv_too_short(t, r, peer, l->tag, len); /* fails now; the payload is dropped */
            if (!r && unexp_add(p, l->tag, len, NULL, lg, NULL)) {
                free(lg);
                return -ENOMEM;
            }
            vs_matchq_push(&p->large, &lg->link);
        } else if (l->kind == REC_MAP) {
            shm_map_ref_t ref;
            memcpy(&ref, l->data, sizeof ref);
            shm_req_t *r = REQ_OF(vs_matchq_take(&p->posted, l->tag));
            int rc = r ? map_deliver(t, peer, p, r, l->tag, len, &ref)
                       : unexp_add(p, l->tag, len, NULL, NULL, &ref);
            if (rc)
                return rc;
        } else if (l->kind != REC_WRAP) {
            ERR(t, "corrupt record in the ring from rank %d", peer);
            return -EPROTO;
        }
        ring_consumed(p, l);
    }
}

/* The staging stream is in order; an unexpected head message stays in the
 * slots unless a later one is already wanted, then it is buffered. */
static int staging_progress(vs_transport_t *t, shm_peer_t *p)
{
    while (p->large.head) {
        shm_large_t *l = LARGE_OF(p->large.head);
        if (!l->req && !l->buffering && !l->discard) {
            int wanted = 0;
            for (vs_matchq_link_t *q = l->link.next; q && !wanted; q = q->next)
                wanted = LARGE_OF(q)->req != NULL;
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
        vs_matchq_pop(&p->large);
        if (l->req)
            l->req->done = 1;
        if (l->discard || (l->req && l->heap))
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

/* What one peer sent, and what this rank still has to send it. */
static inline int peer_progress(vs_transport_t *t, int r, shm_peer_t *p)
{
    int rc = ring_progress(t, r, p);
    if (!rc && p->large.head)
        rc = staging_progress(t, p);
    if (rc)
        return rc;
    if (p->sendq.head)
        send_queue_progress(t, p);
    return 0;
}

int shm_progress(vs_transport_t *t)
{
    if (!t->peers)
        return -ENOTCONN;
    for (int r = 0; r < t->size; r++) {
        if (r == t->rank)
            continue;
        int rc = peer_progress(t, r, &t->peers[r]);
        if (rc)
            return rc;
    }
    if (++t->polls >= t->next_liveness) {
        t->next_liveness = t->polls + SHM_LIVENESS_MASK + 1;
        return check_liveness(t);
    }
    return 0;
}

int shm_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_req_t *r = (shm_req_t *)req->opaque;
    *r = (shm_req_t){.link.tag = tag, .peer = peer, .buf = mem->addr, .len = len, .recv = 1};
    shm_peer_t *p = &t->peers[peer];
    shm_unexp_t *u = UNEXP_OF(vs_matchq_take(&p->unexp, tag));
    if (u && u->mapped) {
        rc = map_deliver(t, peer, p, r, tag, u->len, &u->ref);
        free(u);
        return rc;
    }
    if (u) {
        shm_large_t *l = u->large;
        size_t mlen = l ? l->len : u->len;
        if (mlen > len) {
            recv_too_short(t, r, peer, tag, mlen); /* -EMSGSIZE, reported by test/wait */
            if (l && l->buffering && l->done == l->len) {
                free(l->buf);
                free(l);
            } else if (l) {
                free(l->buf);
                *l = (shm_large_t){.link = l->link, .len = l->len, .done = l->done, .discard = 1,
                                   .heap = 1};
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
    vs_matchq_push(&p->posted, &r->link);
    return ring_progress(t, peer, p);
}

int shm_test(vs_transport_t *t, vs_req_t *req, int *done)
{
    shm_req_t *r = (shm_req_t *)req->opaque;
    int rc = 0;
    if (!req_done(t, r))
        rc = shm_progress(t);
    *done = req_done(t, r);
    return rc ? rc : (*done ? r->err : 0);
}

/* The CPU this rank waits on, published for its peers; returned. */
static inline int publish_cpu(vs_transport_t *t)
{
    int cpu = sched_getcpu();
    if (cpu != t->my_cpu) {
        t->my_cpu = cpu;
        __atomic_store_n(&t->cpu_of[t->rank].cpu, cpu, __ATOMIC_RELAXED);
    }
    return cpu;
}

/* Every SHM_YIELD_POLLS fruitless polls: hand the CPU over when the peer
 * waits on it too (it needs this CPU to answer). */
static inline void maybe_yield(vs_transport_t *t, int peer, int cpu)
{
    if (__atomic_load_n(&t->cpu_of[peer].cpu, __ATOMIC_RELAXED) == cpu)
        sched_yield();
}

/* One poll of a spin that waits on one peer: a pause, and every
 * SHM_PAUSED_POLLS polls (as long as SHM_YIELD_POLLS without a pause) the
 * full progress, counted as that many polls toward the liveness check, and
 * the yield to a peer on this CPU. */
static inline int paused_poll(vs_transport_t *t, int peer, int cpu, unsigned long polls)
{
    SHM_RELAX();
    if (polls % SHM_PAUSED_POLLS)
        return 0;
    t->polls += SHM_YIELD_POLLS - 1;
    int rc = shm_progress(t);
    if (!rc)
        maybe_yield(t, peer, cpu);
    return rc;
}

int shm_wait(vs_transport_t *t, vs_req_t *req)
{
    shm_req_t *r = (shm_req_t *)req->opaque;
    int cpu = publish_cpu(t);
    if (r->recv && !r->done) {
        /* a receive: progress with its peer alone, with a pause per poll
         * as the blocking receive does, the full progress every
         * SHM_PAUSED_POLLS polls */
        shm_peer_t *p = &t->peers[r->peer];
        for (unsigned long polls = 1; !r->done; polls++) {
            int rc = peer_progress(t, r->peer, p);
            if (!rc && !r->done)
                rc = paused_poll(t, r->peer, cpu, polls);
            if (rc)
                return rc;
        }
        return r->err;
    }
    for (unsigned long polls = 1; !req_done(t, r); polls++) {
        int rc = shm_progress(t);
        if (rc)
            return rc;
        if (polls % SHM_YIELD_POLLS == 0)
            maybe_yield(t, r->peer, cpu);
    }
    return r->err;
}

/* Blocking send: an eager message that finds room in the ring is written
 * and complete at once, with no request to set up and no wait; anything
 * else is post + wait. */
int shm_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_peer_t *p = &t->peers[peer];
    if (len <= t->eager_limit && !p->sendq.head && eager_write(t, p, mem->addr, len, tag))
        return 0;
    vs_req_t req;
    if ((rc = shm_post_send(t, mem, len, peer, tag, &req)))
        return rc;
    return shm_wait(t, &req);
}

/* Blocking receive.  When nothing from `peer` is queued here (no unexpected
 * arrival, no posted receive, no large message in staging) and nothing for
 * it either (a send streaming through staging moves at every poll of
 * post + wait, here only with the full progress), the next record
 * in its ring is the message this receive matches if its tag is `tag`: spin
 * on that record's flag alone and, for an eager record of this tag that fits,
 * copy the payload straight out of the ring.  Every SHM_PAUSED_POLLS polls the
 * full progress runs (the other peers, queued sends, the liveness check),
 * which may move the record into the unexpected list; then, and for any other
 * record, the receive is post + wait. */
int shm_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag)
{
    int rc = check_peer(t, peer, len);
    if (rc)
        return rc;
    shm_peer_t *p = &t->peers[peer];
    if (!p->unexp.head && !p->posted.head && !p->large.head && !p->sendq.head) {
        int cpu = publish_cpu(t);
        const shm_box_t *b = &p->rx_ctrl->box;
        for (unsigned long polls = 1;; polls++) {
            shm_line_t *l = &p->rx_ring[p->rx_head & (t->ring_lines - 1)];
            int ring_ready = __atomic_load_n(&l->flag, __ATOMIC_ACQUIRE) == flag_of(t, p->rx_head);
            if (box_ready(t, p)) {
                if (b->tag != tag || b->len > len)
                    break;
                copy_small(mem->addr, b->data, b->len);
                box_consumed(t, p);
                return 0;
            }
            if (ring_ready) {
                if (l->kind != REC_EAGER || l->tag != tag || l->len > len)
                    break;
                learn_box(p, l->box_ack);
                if (l->len)
                    memcpy(mem->addr, l->data, l->len);
                ring_consumed(p, l);
                return 0;
            }
            if ((rc = paused_poll(t, peer, cpu, polls)))
                return rc;
            if (p->unexp.head || p->large.head)
                break; /* the full progress took the record: match it the general way */
        }
    }
    vs_req_t req;
    if ((rc = shm_post_recv(t, mem, len, peer, tag, &req)))
        return rc;
    return shm_wait(t, &req);
}

/* ---- one-sided operations (shm_map.c maps the partner's exposed buffer):
 * put and get are a memcpy into or out of that mapping, an atomic is the
 * CPU's own on its word, so each is complete when posted.  The end of an
 * origin's epoch is a release fence (its stores are visible to any core that
 * then reads the flag it wrote last), rma_sync an acquire fence. */

static inline int rma_done(vs_req_t *req, int peer)
{
    shm_req_t *r = (shm_req_t *)req->opaque;
    r->done = 1;
    r->err = 0;
    r->ack = 0;
    r->peer = peer;
    return 0;
}

static inline int rma_range(vs_transport_t *t, const vs_rmem_t *remote, size_t roff, size_t len)
{
    if (roff > remote->len || len > remote->len - roff) {
        ERR(t, "one-sided: %zu B at offset %zu is beyond the %zu B the peer exposed", len, roff, remote->len);
        return -EINVAL;
    }
    return 0;
}

int shm_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer, const vs_rmem_t *remote,
            size_t roff, vs_req_t *req)
{
    int rc = rma_range(t, remote, roff, len);
    if (rc)
        return rc;
    memcpy((unsigned char *)remote->handle + roff, (const unsigned char *)local->addr + loff, len);
    return rma_done(req, peer);
}

int shm_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer, const vs_rmem_t *remote,
            size_t roff, vs_req_t *req)
{
    int rc = rma_range(t, remote, roff, len);
    if (rc)
        return rc;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy((unsigned char *)local->addr + loff, (const unsigned char *)remote->handle + roff, len);
    return rma_done(req, peer);
}

int shm_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result, int peer,
               const vs_rmem_t *remote, size_t roff, vs_req_t *req)
{
    int rc = rma_range(t, remote, roff, sizeof(uint64_t));
    if (rc)
        return rc;
    uint64_t *word = (uint64_t *)((unsigned char *)remote->handle + roff);
    if ((uintptr_t)word % sizeof *word) {
        ERR(t, "one-sided: an atomic's word must be 8-byte aligned (offset %zu)", roff);
        return -EINVAL;
    }
    if (op == VS_AMO_FADD) {
        *result = __atomic_fetch_add(word, operand, __ATOMIC_SEQ_CST);
    } else if (op == VS_AMO_CSWAP) {
        uint64_t old = compare;
        __atomic_compare_exchange_n(word, &old, operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        *result = old; /* the word before, whether it was swapped or not */
    } else {
        ERR(t, "one-sided: unknown atomic operation %d", op);
        return -EINVAL;
    }
    return rma_done(req, peer);
}

int shm_rma_epoch(vs_transport_t *t, int peer, int role, int phase)
{
    (void)t, (void)peer;
    if (role == VS_RMA_ORIGIN && phase == VS_RMA_END)
        __atomic_thread_fence(__ATOMIC_RELEASE);
    return 0;
}

int shm_rma_sync(vs_transport_t *t, vs_mem_t *mem)
{
    (void)t, (void)mem;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 0;
}
