/* versus shm transport: shared layout, per-rank state and the data path's
 * entry points (shm_path.c), used by the setup code in shm.c. */
#ifndef VS_SHM_H
#define VS_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <versus/transport.h>

#include <versus/matchq.h>

#ifndef VS_SHM_VERSION
#define VS_SHM_VERSION "1"
#endif

#define SHM_LINE 64
#define SHM_HDR 32
#define SHM_INLINE (SHM_LINE - SHM_HDR)
#define SHM_PAGE 4096
#define SHM_MAGIC 0x7665727375736d31ULL /* "versusm1" */
#define SHM_LIVENESS_MASK ((1UL << 22) - 1)
#define SHM_YIELD_POLLS 1024
/* The same span of time in polls that pause (SHM_RELAX): about 12 us on the
 * 2-vCPU test machine, where a same-CPU ping-pong waits that long per turn. */
#define SHM_PAUSED_POLLS 256
#define SHM_MAX_RANKS 63 /* one line each for the published CPU in the first page */
#define SHM_ACKS 256     /* single-copy sends in flight per channel */
#define SHM_MAPS 16      /* peer buffers kept mapped per peer */

/* One poll of a spin: let the writer's request for the line through. */
#if defined(__x86_64__) || defined(__i386__)
#define SHM_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define SHM_RELAX() __asm__ volatile("yield")
#else
#define SHM_RELAX() ((void)0)
#endif

enum { REC_EAGER = 1, REC_LARGE = 2, REC_WRAP = 3, REC_MAP = 4 };

typedef struct shm_line {
    uint64_t flag;   /* scrambled position, written last */
    uint64_t tag;
    uint64_t len;
    uint32_t kind : 8;
    uint32_t nlines : 24; /* a record spans fewer than 2^24 lines (the ring's maximum) */
    uint32_t box_ack;     /* the writer's box_read of the reverse channel (low 32 bits) */
    unsigned char data[SHM_INLINE];
} shm_line_t;
_Static_assert(sizeof(shm_line_t) == SHM_LINE, "a ring record header is one cache line");

/* The channel's box: one line the sender rewrites in place for a message of
 * up to SHM_BOX_DATA bytes while the ring is empty, so that a small-message
 * ping-pong moves the same two lines back and forth, as a bare cache-line
 * ping-pong does, instead of a fresh ring line each time. */
#define SHM_BOX_DATA 32
typedef struct shm_box {
    uint64_t flag;     /* scrambled box sequence number, written last */
    uint64_t tag;
    uint32_t len;
    uint32_t box_ack;  /* the writer's box_read of the reverse channel (low 32 bits) */
    uint32_t ring_ack; /* the writer's rx_head of the reverse channel (low 32 bits) */
    uint32_t unused;
    unsigned char data[SHM_BOX_DATA];
} shm_box_t;
_Static_assert(sizeof(shm_box_t) == SHM_LINE, "the box is one cache line");

/* Counters of one channel, each on its own line (one writer each). */
typedef struct shm_ctrl {
    _Alignas(SHM_LINE) uint64_t ring_head;     /* lines consumed (receiver) */
    _Alignas(SHM_LINE) uint64_t stage_filled;  /* chunks written (sender) */
    _Alignas(SHM_LINE) uint64_t stage_drained; /* chunks read (receiver) */
    /* single copy: acks[seq % SHM_ACKS] = seq + 1 once the receiver has
     * copied message seq out of the sender's buffer (receiver) */
    _Alignas(SHM_LINE) uint64_t acks[SHM_ACKS];
    _Alignas(SHM_LINE) shm_box_t box; /* (sender) */
} shm_ctrl_t;
_Static_assert(sizeof(shm_ctrl_t) <= SHM_PAGE, "a channel's counters fit its first page");

/* What a REC_MAP record carries in its inline bytes: which registered buffer
 * of the sender holds the payload (at its start). */
typedef struct shm_map_ref {
    uint64_t id;    /* the sender's registration number, never reused */
    uint64_t seq;   /* the sender's single-copy sequence number on this channel */
    uint64_t bytes; /* length of the registered buffer */
    int32_t fd;     /* its memfd in the sender's fd table */
    int32_t unused;
} shm_map_ref_t;
_Static_assert(sizeof(shm_map_ref_t) <= SHM_INLINE, "a buffer reference fits a record's inline bytes");

/* A registered buffer (vs_mem_t.desc): its pages now live in a memfd the
 * peers can map. */
typedef struct shm_reg {
    uint64_t id;
    int fd;
    size_t bytes;
} shm_reg_t;

/* A peer's buffer mapped here. */
typedef struct shm_map {
    uint64_t id;
    const unsigned char *addr;
    size_t bytes;
} shm_map_t;

typedef struct shm_seg_hdr {
    uint64_t magic;
    uint64_t key;
    uint64_t nranks, ring_lines, chunk, nchunks, eager_limit, chan_bytes;
} shm_seg_hdr_t;

/* The CPU a rank last waited on (-1 unknown), written by that rank only. */
typedef struct shm_cpu {
    _Alignas(SHM_LINE) int32_t cpu;
} shm_cpu_t;

typedef struct shm_req shm_req_t;

/* A large message in staging order (the staging area is one stream). */
typedef struct shm_large {
    vs_matchq_link_t link; /* in its peer's staging-order queue */
    shm_req_t *req;        /* receiver, or NULL while unexpected */
    unsigned char *buf;    /* where the payload goes when req is NULL (buffered) */
    size_t len, done;
    int buffering;         /* unexpected and drained into buf */
    int discard;           /* its receive was too short: drained and dropped */
    int heap;              /* allocated here (else embedded in its request) */
} shm_large_t;

/* An arrival nobody asked for yet. */
typedef struct shm_unexp {
    vs_matchq_link_t link; /* tag and place among its peer's arrivals */
    size_t len;
    shm_large_t *large;    /* large message: its staging entry; else payload below */
    int mapped;            /* single copy: the payload is in the sender's buffer `ref` */
    shm_map_ref_t ref;
    unsigned char data[];
} shm_unexp_t;

struct shm_req {
    vs_matchq_link_t link; /* tag; place in a send queue or among posted receives */
    int done, err, peer;
    int recv;              /* a receive (else a send or a one-sided operation) */
    unsigned char *buf;
    size_t len;            /* send: message length; recv: capacity */
    size_t off;            /* send: payload bytes in staging */
    int hdr_sent;          /* large send: header is in the ring */
    const shm_reg_t *reg;  /* send: single copy out of this registered buffer */
    uint64_t ack;          /* single-copy send: seq + 1, complete when acks[] holds it */
    shm_large_t large;     /* large receive matched on arrival */
};
_Static_assert(sizeof(shm_req_t) <= VS_REQ_BYTES, "request fits core's storage");
_Static_assert(offsetof(shm_req_t, link) == 0, "a queued request is its link: no offset to apply");

typedef struct shm_peer {
    pid_t pid;
    /* me -> peer */
    shm_ctrl_t *tx_ctrl;
    shm_line_t *tx_ring;
    unsigned char *tx_stage;
    uint64_t tx_tail, tx_head_seen, tx_filled, tx_drained_seen;
    uint64_t tx_box, tx_box_acked; /* box messages sent, known read by the peer */
    vs_matchq_t sendq;     /* shm_req_t: sends not yet fully written */
    /* peer -> me */
    shm_ctrl_t *rx_ctrl;
    shm_line_t *rx_ring;
    const unsigned char *rx_stage;
    uint64_t rx_head, rx_drained, rx_filled_seen;
    uint64_t rx_box;       /* box messages read */
    vs_matchq_t posted;    /* shm_req_t: receives waiting for a message */
    vs_matchq_t unexp;     /* shm_unexp_t: messages waiting for a receive */
    vs_matchq_t large;     /* shm_large_t: large messages in staging order */
    uint64_t tx_mseq;      /* single-copy sends posted to this peer */
    shm_map_t maps[SHM_MAPS]; /* this peer's buffers mapped here */
    unsigned next_map;     /* the slot replaced next */
} shm_peer_t;

struct vs_transport {
    const vs_host_t *host;
    size_t eager_limit, chunk, nchunks, ring_lines;
    size_t single;          /* single copy from this size on (0: never) */
    size_t single_min;      /* single copy from this size on; SIZE_MAX: off (set at connect) */
    char single_why[96];    /* why single copy is off, when it is */
    uint64_t next_reg;      /* registration numbers */
    int rank, size;
    char name[64];          /* segment name while it exists */
    int named;              /* this rank created it and has not unlinked it yet */
    void *seg;
    size_t seg_bytes;
    uint64_t key;
    unsigned long polls;
    unsigned long next_liveness; /* polls at which the peers' pids are checked next */
    shm_cpu_t *cpu_of;      /* per rank, in the segment's first page */
    int my_cpu;             /* last value this rank published */
    shm_peer_t *peers;
};

#define ERR(t, ...) (t)->host->error((t)->host->core, __VA_ARGS__)

static inline uint64_t flag_of(const vs_transport_t *t, uint64_t pos)
{
    return (pos + 1) ^ t->key;
}

/* The box's flag for its n-th message (n from 0): never the ring's. */
static inline uint64_t box_flag_of(const vs_transport_t *t, uint64_t n)
{
    return (n + 1) ^ t->key ^ (1ULL << 62);
}

static inline size_t lines_for(size_t len)
{
    return len <= SHM_INLINE ? 1 : 1 + (len - SHM_INLINE + SHM_LINE - 1) / SHM_LINE;
}

/* Data path (shm_path.c). */
int shm_post_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req);
int shm_post_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag,
                  vs_req_t *req);
int shm_test(vs_transport_t *t, vs_req_t *req, int *done);
int shm_wait(vs_transport_t *t, vs_req_t *req);
int shm_send(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag);
int shm_recv(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag);
int shm_progress(vs_transport_t *t);
/* Frees what a peer's queues own (unexpected messages, buffered payloads). */
void shm_peer_lists_free(shm_peer_t *p);

/* Single copy (shm_map.c): buffers registered into memfds, peers' buffers
 * mapped on first use. */
int shm_mem_reg(vs_transport_t *t, vs_mem_t *mem);
int shm_mem_dereg(vs_transport_t *t, vs_mem_t *mem);
/* The address of `ref`'s buffer of `peer`, mapped here; NULL after ERR. */
const unsigned char *shm_map_peer(vs_transport_t *t, int peer, const shm_map_ref_t *ref);
void shm_maps_free(shm_peer_t *p);

/* One-sided operations: exposure and mapping (shm_map.c), the operations (shm_path.c). */
int shm_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len);
int shm_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out);
void shm_rma_release(vs_transport_t *t, vs_rmem_t *remote);
int shm_put(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer, const vs_rmem_t *remote,
            size_t roff, vs_req_t *req);
int shm_get(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer, const vs_rmem_t *remote,
            size_t roff, vs_req_t *req);
int shm_atomic(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result, int peer,
               const vs_rmem_t *remote, size_t roff, vs_req_t *req);
int shm_rma_epoch(vs_transport_t *t, int peer, int role, int phase);
int shm_rma_sync(vs_transport_t *t, vs_mem_t *mem);
/* Connect-time check that every rank can map the others' memfds; sets
 * single_min (and single_why when single copy is off). */
int shm_single_probe(vs_transport_t *t, vs_bootstrap_t *bs);

#endif
