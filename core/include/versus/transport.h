/* versus — transport module interface.
 *
 * A transport is a shared module loaded by `versus-run --transport NAME`.
 * It exports exactly one symbol, VS_TRANSPORT_ENTRY_SYMBOL, a function that
 * returns a pointer to a const vs_transport_ops_t.  One process loads exactly
 * one transport.
 *
 * Rules for modules:
 *   - every function returns 0 or a negative errno; a library's own error
 *     codes are converted here, and its message handed to host->error();
 *   - no timing, no loops over iterations, no printing to stdout, no exit();
 *   - no mutable globals: state lives in the module's own context.
 *
 * Error conventions that decide the runner's exit code:
 *   -EINVAL   bad option or wrong launcher      -> exit 2 (usage)
 *   -ENOTSUP  cannot run on this machine        -> exit 77 (skip)
 *   -ENODEV   (same as -ENOTSUP)
 *   -ETIMEDOUT a peer did not answer in time    -> exit 1
 *   anything else                               -> exit 1
 */
#ifndef VERSUS_TRANSPORT_H
#define VERSUS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <versus/bootstrap.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VS_TRANSPORT_ABI 5
/* The oldest interface the loader still takes: a module of interface 4 has no
 * one-sided operations (its ops table ends before them), and core refuses the
 * one-sided patterns for it with exit 77. */
#define VS_TRANSPORT_ABI_OLDEST 4
#define VS_TRANSPORT_ENTRY_SYMBOL "vs_transport_entry"

/* Storage for one outstanding operation, owned by core (no allocation in the
 * timed loop).  A module keeps whatever it needs in it (an MPI_Request, a UCX
 * request pointer, a libfabric context, ...). */
#define VS_REQ_BYTES 256
typedef struct vs_req {
    _Alignas(64) unsigned char opaque[VS_REQ_BYTES];
} vs_req_t;

/* A buffer core allocated; desc is filled by mem_reg where the module needs
 * registration (NULL otherwise) and handed back on every post. */
typedef struct vs_mem {
    void *addr;
    size_t len;
    void *desc;
} vs_mem_t;

/* One key=value from --transport-opt, as core reads the command line. */
typedef struct vs_kv {
    const char *key;
    const char *value;
} vs_kv_t;

/* One --transport-opt key a module takes, declared once in a table beside its
 * ops.  Core refuses a key not in the table, a key given twice and a value of
 * the wrong kind or above its limit before open() (exit 2, with the known
 * keys), prints the table in `versus-run --list`, and hands open() every
 * value parsed (vs_opt_value_t): a module never reads the text of a value. */
typedef enum vs_option_kind {
    VS_OPT_TEXT,   /* any non-empty text */
    VS_OPT_BYTES,  /* a byte count with an optional K or M suffix, at most max_bytes */
    VS_OPT_COUNT,  /* a whole number (K and M suffixes too), at most max_bytes */
    VS_OPT_CHOICE, /* one of choices, '|'-separated: "poll|block" */
    VS_OPT_NUMBER, /* a non-negative decimal number ("0.5", "1e3") */
} vs_option_kind_t;

typedef struct vs_option {
    const char *key;
    vs_option_kind_t kind;
    const char *choices;  /* VS_OPT_CHOICE */
    uint64_t max_bytes;   /* VS_OPT_BYTES; 0: no limit */
    const char *def;      /* the default, as a user would write it, or what decides */
    const char *help;     /* one line */
} vs_option_t;

/* What open() gets for one row of the table: opts[i] is options[i].
 * Given with --transport-opt, the value parsed; not given, the default when
 * def is written as a value of the option's kind ("8192", "poll"; never for
 * VS_OPT_TEXT), else all zero: def then says in words what decides ("the
 * system's") and the module decides.  Only the field of the kind is set. */
typedef struct vs_opt_value {
    int given;          /* 1: given on the command line */
    const char *text;   /* as written ("64K", "block"), or def when that is the value; NULL: none */
    uint64_t count;     /* VS_OPT_BYTES, VS_OPT_COUNT: the number, K or M applied */
    unsigned choice;    /* VS_OPT_CHOICE: the value's position in choices, from 0 */
    double number;      /* VS_OPT_NUMBER */
} vs_opt_value_t;

/* Services core offers a module.  Modules report errors through error():
 * the text is printed by core, prefixed with the transport name. */
typedef struct vs_host {
    void *core;
    void (*error)(void *core, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    /* Diagnostics for --verbose, to stderr; never called in a timed loop. */
    void (*debug)(void *core, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
} vs_host_t;

/* A size threshold the library is configured with, so that reports can
 * attribute detected transitions ("eager_limit", "rndv_thresh", "inject_size"). */
#define VS_MAX_THRESHOLDS 8
typedef struct vs_threshold {
    char name[48];
    int64_t bytes; /* -1 when unknown / not applicable */
} vs_threshold_t;

/* Free-form facts for the run record ("tls": "posix,cma", "mode": "poll"). */
#define VS_MAX_ATTRS 16
typedef struct vs_attr {
    char key[48];
    char value[464];
} vs_attr_t;

#define VS_MEDIUM_SHM "shared-memory"
#define VS_MEDIUM_MAY_SHM "shared-memory-allowed"
#define VS_MEDIUM_LOCAL_SOCKET "local-socket"
#define VS_MEDIUM_LOOPBACK "loopback"
#define VS_MEDIUM_NETWORK "network"

typedef struct vs_transport_info {
    char name[32];       /* module name, as in --transport NAME */
    char library[64];    /* e.g. "Open MPI", "UCX", "libfabric" */
    char version[256];   /* the library's own version string */
    char provider[256];  /* provider / transports actually selected, or "" */
    /* What carries the messages between the ranks, as far as the module can tell:
     * VS_MEDIUM_SHM, VS_MEDIUM_MAY_SHM (the library may choose shared memory and
     * does not say), VS_MEDIUM_LOCAL_SOCKET, VS_MEDIUM_LOOPBACK, VS_MEDIUM_NETWORK,
     * or "" when it cannot tell.  Core warns when ranks on different hosts talk
     * through shared memory: that measures one machine, not the network. */
    char medium[32];
    int n_thresholds;
    vs_threshold_t thresholds[VS_MAX_THRESHOLDS];
    int n_attrs;
    vs_attr_t attrs[VS_MAX_ATTRS];
} vs_transport_info_t;

typedef struct vs_transport vs_transport_t; /* a module's own context */
typedef struct vs_rmem vs_rmem_t;           /* a peer's exposed buffer (one-sided, below) */

/* How a module that brings its own bootstrap (MPI) is started, for campaigns
 * and tests; modules that meet through versus-run's launchers leave it NULL. */
typedef struct vs_launcher_hint {
    const char *kind;     /* "mpirun" (Open MPI's command line) or "mpiexec" (Hydra's) */
    const char *program;  /* the command: "mpirun", or an MPI's own versioned one */
    const char *srun_mpi; /* the plugin for `srun --mpi=`, or NULL for srun's default */
} vs_launcher_hint_t;

/* The first differing byte of a compare (mem_compare). */
typedef struct vs_mem_diff {
    int64_t offset;      /* -1 when equal */
    int64_t count;       /* bytes that differ */
    unsigned char expected, got;
} vs_mem_diff_t;

/* A compare of bytes both on the host: what core does for host buffers, and
 * what a module's mem_compare can finish with once its bytes are on the host. */
static inline void vs_mem_diff_bytes(const void *got, const void *want, size_t len, vs_mem_diff_t *diff)
{
    const unsigned char *g = (const unsigned char *)got, *w = (const unsigned char *)want;
    diff->offset = -1;
    diff->count = 0;
    if (!memcmp(g, w, len))
        return;
    for (size_t i = 0; i < len; i++) {
        if (g[i] == w[i])
            continue;
        if (diff->offset < 0) {
            diff->offset = (int64_t)i;
            diff->expected = w[i];
            diff->got = g[i];
        }
        diff->count++;
    }
}

/* One-sided communication (interface 5).
 *
 * A module offers rma_expose, rma_attach, rma_release, put, get and rma_epoch
 * together, or none of them; atomic and rma_sync are optional on top.  Core
 * calls them only for buffers it registered with the module (mem_reg or
 * mem_alloc) and writes every pattern loop itself (core/pattern_rma*.c).
 *
 * Exposure: each rank packs what a peer needs to reach one of its buffers
 * (rma_expose: an address and a remote key, an MR key, a window) into at
 * most VS_RMA_BLOB_BYTES; core carries the blobs over the bootstrap, and the
 * peer unpacks them (rma_attach) into a vs_rmem_t that it names in put, get
 * and atomic.  rma_expose is called on every rank for the same buffers in the
 * same order (a module whose library exposes collectively, as MPI windows
 * are created, relies on it).
 *
 * Completion: put, get and atomic are non-blocking and complete through the
 * ordinary test/wait.  A complete put means its local buffer may be reused,
 * not that its bytes are at the target; a complete get or atomic means the
 * data (the old word) is here.  Remote completion and the access epochs of
 * a library that has them go through rma_epoch, which both sides call around
 * each access, the origin with VS_RMA_ORIGIN and the target with
 * VS_RMA_TARGET:
 *   passive target (lock + flush; UCX, libfabric, shared memory): origin BEGIN does
 *     nothing (or locks), origin END is a flush: every put and atomic it
 *     issued to the peer is complete at the peer; target BEGIN/END do nothing;
 *   fence: BEGIN and END are a fence on both sides;
 *   post-start-complete-wait: origin BEGIN start, END complete; target BEGIN
 *     post, END wait.
 * After the origin's END and the target's rma_sync (MPI_Win_sync, where the
 * library needs one), the target's loads see the bytes.  A target that polls
 * its own exposed memory for a flag calls progress (if any) and rma_sync in
 * the poll loop. */
#define VS_RMA_BLOB_BYTES 1024

struct vs_rmem {     /* vs_rmem_t, declared with vs_transport_t above */
    uint64_t addr;   /* the peer's address of the buffer (what the module packed) */
    size_t len;      /* bytes the peer exposed */
    void *handle;    /* the module's: a UCX rkey, a libfabric MR key, a window */
};

enum vs_rma_role { VS_RMA_ORIGIN = 1, VS_RMA_TARGET = 2 };
enum vs_rma_phase { VS_RMA_BEGIN = 1, VS_RMA_END = 2 };
enum vs_amo { VS_AMO_FADD = 1, VS_AMO_CSWAP = 2 };

typedef struct vs_transport_ops {
    uint32_t abi;         /* VS_TRANSPORT_ABI */
    uint32_t size;        /* sizeof(vs_transport_ops_t) */
    const char *name;     /* module name, unique */
    const char *summary;  /* one line for --list */

    /* Library version, callable without open().  Fills buf (NUL-terminated). */
    int (*library_version)(char *buf, size_t len);

    /* Initialise the library.  opts holds n_options values, one per row of
     * `options` and in its order (NULL when the module takes none), valid
     * until close(); core parsed and range-checked them against the table. */
    int (*open)(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out);
    void (*close)(vs_transport_t *t);

    /* Optional: a module that is started by its own launcher (MPI) provides
     * the bootstrap itself; valid after open() until close(). */
    int (*bootstrap)(vs_transport_t *t, vs_bootstrap_t **out);

    /* What was selected and configured; valid after connect(). */
    int (*query)(vs_transport_t *t, vs_transport_info_t *info);

    /* Exchange addresses with every other rank through the bootstrap. */
    int (*connect)(vs_transport_t *t, vs_bootstrap_t *bs);

    /* Optional registration.  mem->desc may be set by mem_reg. */
    int (*mem_reg)(vs_transport_t *t, vs_mem_t *mem);
    int (*mem_dereg)(vs_transport_t *t, vs_mem_t *mem);

    /* Non-blocking operations.  len <= mem->len; data at mem->addr. */
    int (*post_send)(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer,
                     uint64_t tag, vs_req_t *req);
    int (*post_recv)(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer,
                     uint64_t tag, vs_req_t *req);
    /* *done = 1 when complete (the request is then free to reuse). */
    int (*test)(vs_transport_t *t, vs_req_t *req, int *done);
    /* Block (spin or sleep, the module's choice) until complete. */
    int (*wait)(vs_transport_t *t, vs_req_t *req);
    /* Drive the library once; may be NULL where the library progresses by itself. */
    int (*progress)(vs_transport_t *t);

    /* Optional blocking pair (MPI_Send / MPI_Recv); core falls back to
     * post + wait when NULL. */
    int (*send)(vs_transport_t *t, const vs_mem_t *mem, size_t len, int peer, uint64_t tag);
    int (*recv)(vs_transport_t *t, vs_mem_t *mem, size_t len, int peer, uint64_t tag);

    /* Optional, callable without open(): extra lines for `versus-run --list`
     * (e.g. which providers of the library are usable here), one per line. */
    int (*describe)(char *buf, size_t len);

    /* The --transport-opt keys this module takes (n_options entries; none when 0).
     * A module names its rows with an enum and designated initializers
     * ([MY_OPT_MODE] = {"mode", ...}) so that opts[MY_OPT_MODE] is that row. */
    const vs_option_t *options;
    size_t n_options;

    /* Environment variables that tune the library, recorded with every run:
     * NULL-terminated prefixes ("UCX_"), and among them those the launchers
     * set to wire the job, which are left out ("OMPI_MCA_orte_").  Either NULL. */
    const char *const *env_prefixes;
    const char *const *env_wiring;

    /* Modules with bootstrap(): their launcher.  NULL otherwise. */
    const vs_launcher_hint_t *launcher;

    /* Optional memory: all four, none, or mem_alloc and mem_free alone.
     * Without them core allocates page-aligned host memory, touches every
     * page, and fills and compares buffers itself.  With mem_alloc and
     * mem_free alone the module allocates host memory itself (UCX's own, which
     * its shared-memory transports reach directly; the module touches every
     * page) and core still reads and writes it by address.  A module whose
     * buffers core cannot address (device memory) allocates them (mem_alloc
     * sets addr, len >= len asked, and desc; core then calls mem_reg only if
     * the module wants both), and core reaches their bytes only through these:
     *   mem_fill    copy len host bytes from src into mem at offset off;
     *   mem_compare compare len bytes of mem at off with host bytes want,
     *               *diff says where they first differ (offset -1: equal).
     * Never called in a timed loop.  Patterns that compute on the buffers
     * themselves (doublebuffer) or poll them (putnotify) need memory core can
     * address and refuse a module with mem_fill. */
    int (*mem_alloc)(vs_transport_t *t, size_t len, vs_mem_t *mem);
    void (*mem_free)(vs_transport_t *t, vs_mem_t *mem);
    int (*mem_fill)(vs_transport_t *t, vs_mem_t *mem, size_t off, const void *src, size_t len);
    int (*mem_compare)(vs_transport_t *t, const vs_mem_t *mem, size_t off, const void *want, size_t len,
                       vs_mem_diff_t *diff);

    /* What the module is to the analysis: VS_ROLE_* bits (0 for a library's module),
     * declared by --list --json and recorded with every run (transport.roles). */
    uint32_t roles;

    /* ---- Interface 5: one-sided communication (above), all NULL when the module has none. ---- */
    /* Pack what a peer needs to reach mem into blob (at most *len bytes, VS_RMA_BLOB_BYTES);
     * set *len to the bytes used. */
    int (*rma_expose)(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len);
    /* Unpack the blob peer packed for one of its buffers. */
    int (*rma_attach)(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out);
    void (*rma_release)(vs_transport_t *t, vs_rmem_t *remote);
    /* Write len bytes of local (from loff) into the peer's buffer at roff. */
    int (*put)(vs_transport_t *t, const vs_mem_t *local, size_t loff, size_t len, int peer,
               const vs_rmem_t *remote, size_t roff, vs_req_t *req);
    /* Read len bytes of the peer's buffer at roff into local at loff. */
    int (*get)(vs_transport_t *t, vs_mem_t *local, size_t loff, size_t len, int peer,
               const vs_rmem_t *remote, size_t roff, vs_req_t *req);
    /* Optional: a 64-bit atomic on the peer's word at roff (8-byte aligned): VS_AMO_FADD adds
     * operand, VS_AMO_CSWAP writes operand where the word equals compare; *result receives the
     * word before, once complete.  NULL: the atomic patterns are refused (exit 77). */
    int (*atomic)(vs_transport_t *t, int op, uint64_t operand, uint64_t compare, uint64_t *result,
                  int peer, const vs_rmem_t *remote, size_t roff, vs_req_t *req);
    /* Open (VS_RMA_BEGIN) or close (VS_RMA_END) one access to or from peer, as role. */
    int (*rma_epoch)(vs_transport_t *t, int peer, int role, int phase);
    /* Optional: make what peers wrote into mem visible to this rank's loads. */
    int (*rma_sync)(vs_transport_t *t, vs_mem_t *mem);
} vs_transport_ops_t;

/* The size of an interface-4 ops table: everything before the one-sided operations. */
#define VS_TRANSPORT_OPS_SIZE_4 offsetof(vs_transport_ops_t, rma_expose)
/* True when ops (a table of ops->size bytes) has the one-sided operations. */
#define VS_HAS_RMA(ops) ((ops)->size > offsetof(vs_transport_ops_t, rma_epoch) && (ops)->rma_expose && \
                         (ops)->rma_attach && (ops)->put && (ops)->get && (ops)->rma_epoch)

/* versus's own implementation, no library's: a yardstick that reports keep apart
 * from the libraries they compare. */
#define VS_ROLE_REFERENCE 0x1u
/* The fastest path between two ranks of one node: reports give the others' latency
 * as a multiple of its and their bandwidth as a share of its. */
#define VS_ROLE_FLOOR 0x2u

typedef const vs_transport_ops_t *(*vs_transport_entry_fn)(void);

/* Modules define their entry point with this macro:
 *   VS_TRANSPORT_DEFINE(my_ops)   where my_ops is a static const vs_transport_ops_t */
#define VS_TRANSPORT_DEFINE(ops)                                                     \
    __attribute__((visibility("default"))) const vs_transport_ops_t *vs_transport_entry(void); \
    const vs_transport_ops_t *vs_transport_entry(void) { return &(ops); }

#ifdef __cplusplus
}
#endif

#endif
