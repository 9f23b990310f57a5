/* versus tcp transport: per-rank state and the data path's entry points
 * (tcp_path.c), used by the setup code in tcp.c. */
#ifndef VS_TCP_H
#define VS_TCP_H

#include <stddef.h>
#include <netinet/in.h>
#include <stdint.h>

#include <versus/transport.h>

#include <versus/matchq.h>

#define TCP_RXBUF (64 * 1024)
#define TCP_HDR_READ 4096 /* first read when a long receive is posted */
#define TCP_ACCEPT_TIMEOUT_MS 60000

enum { MODE_POLL, MODE_BLOCK }; /* in the order of mode=poll|block in tcp_options */

typedef struct tcp_hdr {
    uint64_t tag;
    uint64_t len;
} tcp_hdr_t;

/* Payloads start at a stream offset that is a multiple of TCP_ALIGN: the
 * header is followed by 0..63 pad bytes.  The kernel's copies in and out of
 * the socket then run cache-line aligned against page-aligned buffers, as
 * they do for a tool that sends bare payloads (NetPIPE); a 16-byte shift
 * cost a third of the 1 MiB bandwidth here.  Both sides derive the pad from
 * the stream position of the header. */
#define TCP_ALIGN 64
static inline size_t tcp_pad_after(uint64_t hdr_pos)
{
    return (size_t)((TCP_ALIGN - (hdr_pos + sizeof(tcp_hdr_t)) % TCP_ALIGN) % TCP_ALIGN);
}

typedef struct tcp_req tcp_req_t;
struct tcp_req {
    vs_matchq_link_t link; /* tag; place in a send queue or among posted receives */
    int done, err, peer;
    unsigned char *buf;
    size_t len;       /* send: message length; recv: capacity */
    size_t off;       /* send: bytes of header + pad + payload written */
    size_t pad;       /* send: pad bytes after the header (set when it starts) */
    int started;      /* send: its first byte went out, pad is fixed */
    tcp_hdr_t hdr;    /* send: the header being written */
};
_Static_assert(sizeof(tcp_req_t) <= VS_REQ_BYTES, "request fits core's storage");
_Static_assert(offsetof(tcp_req_t, link) == 0, "a queued request is its link: no offset to apply");

/* An arrival nobody asked for yet (payload kept here). */
typedef struct tcp_unexp {
    vs_matchq_link_t link; /* tag and place among its peer's arrivals */
    size_t len, got;
    tcp_req_t *req;   /* a receive that matched it while its payload was still arriving */
    int dropped;      /* matched by a receive too short for it: drained, then freed */
    unsigned char data[];
} tcp_unexp_t;

typedef struct tcp_peer {
    int fd;
    vs_matchq_t sendq;          /* tcp_req_t: sends not yet fully written */
    vs_matchq_t posted;         /* tcp_req_t: receives waiting for a message */
    vs_matchq_t unexp;          /* tcp_unexp_t: messages waiting for a receive */
    /* incoming stream */
    uint64_t tx_stream;         /* bytes written to this peer so far */
    uint64_t rx_stream;         /* bytes consumed from this peer so far */
    unsigned char *rx;          /* TCP_ALIGN + TCP_RXBUF bytes, aligned */
    size_t rx_pos, rx_end;
    size_t skip;                /* pad bytes still to drop before the payload */
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
    uint64_t delay_ns;          /* test hook: busy-wait before each send (0: none) */
    char addr[64], iface[16];   /* iface: up to IF_NAMESIZE */
    char listen_ip[INET_ADDRSTRLEN];
    int rank, size;
    int sndbuf, rcvbuf;         /* what the kernel reports on the first connection */
    int mss, mtu;               /* its segment size and its interface's MTU, -1 unknown */
    char path_iface[16];        /* the interface its local address belongs to */
    char congestion[16];        /* the connection's congestion control (TCP_CONGESTION) */
    tcp_peer_t *peers;
};

#define ERR(t, ...) (t)->host->error((t)->host->core, __VA_ARGS__)

/* Data path (tcp_path.c). */
int tcp_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req);
int tcp_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req);
int tcp_test(vs_transport_t *t, vs_req_t *req, int *done);
int tcp_wait(vs_transport_t *t, vs_req_t *req);
int tcp_progress(vs_transport_t *t);
int tcp_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag);
int tcp_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag);

#endif
