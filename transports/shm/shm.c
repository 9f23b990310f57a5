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
 *   - a box: one more line, in the channel's counter page, that the sender
 *     rewrites in place for a message of up to 32 bytes when the receiver
 *     has read the box's previous message and every ring record (so the box
 *     always holds the oldest unread message: the receiver reads the box
 *     first, and looks at it again after it has seen a ring record's flag).
 *     The sender learns what the receiver has read from the receiver's own
 *     records (each carries its writer's count of box messages read, and a
 *     box message its ring position too), so nothing is read across cores
 *     to decide.  A ring line is a different line for every message: in an
 *     interleaved run on two cores a bare ping-pong over a ring of lines took
 *     1.05-1.25x the one over one line per direction, and the box is that
 *     one line.  A stream with no replies stays in the ring.
 *   - a staging area of `chunks` slots of `chunk` bytes for messages above
 *     eager_limit whose buffer is not registered: the ring carries only a
 *     header, the payload streams through the slots, sender and receiver
 *     copying concurrently (two counters, chunks filled and chunks drained).
 *     chunks=1 with a chunk as large as the message is the "copy in, then
 *     copy out" variant.  Defaults (eager_limit 8 KiB, 16 x 32 KiB: the
 *     staging fits one L2) were the fastest of a chunk sweep.
 *   - single copy (shm_map.c) for messages of at least `single` bytes (16 KiB
 *     by default, never at or below eager_limit) sent out of a buffer core
 *     registered: the receiver copies straight from the sender's pages and
 *     acknowledges in the channel's ack slots.  Against the pipeline, in one
 *     interleaved sweep on a 2-core VM: 1.3-2.4x the ping-pong bandwidth from
 *     16 KiB to 4 MiB with separate send and receive buffers, 1.2-1.8x for
 *     stream and bistream, but 0.7-0.9x between 32 and 256 KiB when each rank
 *     sends back the buffer it just received (--buffers shared: every line
 *     crosses cores and one core copies where the pipeline has two).  A
 *     kernel copy with process_vm_readv was measured too, at 7-8 GB/s for
 *     4 MiB against a 24 GB/s memcpy (page pinning dominates), so it is not
 *     used.
 *
 * One-sided operations (interface 5): exposing a buffer moves its pages into
 * a memfd as registration does (whatever its size), and the partner maps it
 * for reading and writing.  A put is a memcpy into that mapping, a get a
 * memcpy out of it, an atomic the CPU's own on the word; each is complete
 * when posted.  An origin's epoch ends with a release fence, rma_sync is an
 * acquire fence (shm_path.c, shm_map.c).
 *
 * Matching is by (peer, tag) in arrival order; early arrivals are kept on an
 * unexpected list (eager payloads copied, large ones left in staging until
 * their receive is posted or a later large message needs the staging area,
 * single-copy ones left in the sender's buffer, whose send stays incomplete).
 *
 * A dead peer: progress checks every peer's pid (kill(pid, 0), and
 * /proc/PID/stat for an unreaped zombie) every 2^22 polls, tens to hundreds
 * of milliseconds of spinning, and fails with -ECONNRESET; a peer that is alive
 * but stuck is left to core's watchdog and its deadline.
 *
 * The blocking send and receive (the ops table's pair) skip the request:
 * a receive with nothing of its peer queued spins on that peer's box and
 * next ring line alone, with a pause instruction per poll (on x86: the
 * writer's request for the line is not held up by a flood of loads), and
 * copies the payload out itself when the record is the eager message it
 * wants; every 256 polls (as long as 1024 without a pause) it runs the full
 * progress (and yields when the peer waits on this CPU); anything else is
 * post + wait.  wait on a receive likewise progresses with that receive's
 * peer alone (its box, ring, staging and queued sends), with a pause per
 * poll, and with every peer every 256 polls.
 *
 * wait spins on progress.  Each rank publishes the CPU it waits on; a rank
 * that finds its peer on its own CPU (same-core placement, or the host
 * moved one) calls sched_yield() every 1024 fruitless polls (256 where each pauses) so the peer can
 * run.  Ranks on different CPUs never yield: yielding on a busy host hands
 * the CPU away for a whole time slice.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <versus/info.h>

#include "shm.h"

/* ---- options ---------------------------------------------------------- */

enum { SHM_OPT_EAGER_LIMIT, SHM_OPT_RING, SHM_OPT_SINGLE, SHM_OPT_CHUNK, SHM_OPT_CHUNKS, SHM_N_OPTS };

static const vs_option_t shm_options[SHM_N_OPTS] = {
    [SHM_OPT_EAGER_LIMIT] = {"eager_limit", VS_OPT_BYTES, NULL, 1ULL << 40, "8192",
                             "largest message sent through the cache-line ring"},
    [SHM_OPT_RING] = {"ring", VS_OPT_COUNT, NULL, 1ULL << 24, "4096",
                      "ring size in lines of 64 B (a power of two, 16 to 16M)"},
    [SHM_OPT_SINGLE] = {"single", VS_OPT_BYTES, NULL, 1ULL << 40, "16384",
                        "from this size on the receiver copies straight from the sender's pages (0: never)"},
    [SHM_OPT_CHUNK] = {"chunk", VS_OPT_BYTES, NULL, 1ULL << 30, "32768",
                       "staging slot for messages above eager_limit without single copy (a multiple of 64 B)"},
    [SHM_OPT_CHUNKS] = {"chunks", VS_OPT_COUNT, NULL, 4096, "16", "staging slots (1 to 4096)"},
};

/* The values, parsed and range-checked by core against shm_options (each one
 * its default when not given); what a table cannot say is checked here. */
static int shm_take_opts(vs_transport_t *t, const vs_opt_value_t *o)
{
    t->eager_limit = o[SHM_OPT_EAGER_LIMIT].count;
    t->ring_lines = o[SHM_OPT_RING].count;
    t->single = o[SHM_OPT_SINGLE].count;
    t->chunk = o[SHM_OPT_CHUNK].count;
    t->nchunks = o[SHM_OPT_CHUNKS].count;
    if (t->chunk < SHM_LINE || t->chunk % SHM_LINE || t->nchunks < 1) {
        ERR(t, "chunk must be a multiple of %d B and chunks at least 1", SHM_LINE);
        return -EINVAL;
    }
    if (t->ring_lines < 16 || (t->ring_lines & (t->ring_lines - 1))) {
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

static int shm_topen(const vs_host_t *host, const vs_opt_value_t *opts, vs_transport_t **out)
{
    vs_transport_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    t->host = host;
    t->single_min = SIZE_MAX; /* until connect's probe */
    t->next_liveness = SHM_LIVENESS_MASK + 1;
    int rc = shm_take_opts(t, opts);
    if (rc) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

static void shm_close(vs_transport_t *t)
{
    if (!t)
        return;
    if (t->named)
        shm_unlink(t->name);
    for (int i = 0; t->peers && i < t->size; i++)
        shm_peer_lists_free(&t->peers[i]);
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
    shm_cpu_t *cpus = (shm_cpu_t *)((unsigned char *)t->seg + SHM_LINE);
    for (int r = 0; r < t->size; r++)
        cpus[r].cpu = -1;
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

/* Every rank tells the others how its `step` ("create", "map") of the
 * segment went; returns the first failure, named when another rank had it. */
static int exchange_status(vs_transport_t *t, vs_bootstrap_t *bs, const shm_hello_t *me,
                           shm_hello_t *all, const char *step)
{
    int rc = bs->exchange(bs, me, all, sizeof *me);
    if (rc) {
        ERR(t, "bootstrap exchange after the step '%s the shared segment' failed", step);
        return rc;
    }
    for (int r = 0; r < t->size; r++)
        if (all[r].status) {
            if (r != t->rank)
                ERR(t, "rank %d could not %s the shared segment", r, step);
            return all[r].status;
        }
    return 0;
}

static void peers_setup(vs_transport_t *t, const shm_hello_t *all)
{
    t->key = ((shm_seg_hdr_t *)t->seg)->key;
    t->cpu_of = (shm_cpu_t *)((unsigned char *)t->seg + SHM_LINE);
    t->my_cpu = -1;
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
    if (t->size < 2 || t->size > SHM_MAX_RANKS) {
        ERR(t, "needs 2 to %d ranks on one host", SHM_MAX_RANKS);
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
    int rc = exchange_status(t, bs, &me, all, "create"); /* rank 0 names the segment */
    if (rc)
        goto out_unlink;
    if (t->rank != 0)
        me.status = seg_attach(t, &all[0]);
    if ((rc = exchange_status(t, bs, &me, all, "map")))
        goto out_unlink;
    peers_setup(t, all);
    rc = shm_single_probe(t, bs);
out_unlink:
    if (t->named) {
        shm_unlink(t->name);
        t->named = 0;
    }
    free(all);
    return rc;
}

static int shm_query(vs_transport_t *t, vs_transport_info_t *info)
{
    memset(info, 0, sizeof *info);
    const char *staging = t->nchunks > 1 ? "pipeline" : "copy";
    int single = t->single_min != SIZE_MAX;
    snprintf(info->name, sizeof info->name, "shm");
    snprintf(info->library, sizeof info->library, "versus");
    snprintf(info->medium, sizeof info->medium, VS_MEDIUM_SHM);
    shm_library_version(info->version, sizeof info->version);
    snprintf(info->provider, sizeof info->provider, "shm/cacheline+%s%s", staging,
             single ? "+single" : "");
    vs_info_threshold(info, "eager_limit", (int64_t)t->eager_limit);
    if (single)
        vs_info_threshold(info, "single_copy", (int64_t)t->single_min);
    vs_info_attr(info, "mode", "cacheline+%s", staging);
    vs_info_attr(info, "slot_bytes", "%d", SHM_LINE);
    vs_info_attr(info, "ring_slots", "%zu", t->ring_lines);
    vs_info_attr(info, "chunk_bytes", "%zu", t->chunk);
    vs_info_attr(info, "chunks", "%zu", t->nchunks);
    if (single)
        vs_info_attr(info, "single_copy", "from %zu B out of registered buffers: the receiver copies from the "
             "sender's pages (memfd mapped through /proc)", t->single_min);
    else
        vs_info_attr(info, "single_copy", "%s", t->single_why);
    vs_info_attr(info, "peer_check", "pid liveness (kill 0, /proc zombie) every 4194304 polls");
    vs_info_attr(info, "wait", "spin; sched_yield every 1024 polls (256 pausing ones) if the peer is on this CPU");
    vs_info_attr(info, "small", "up to %d B through the channel's box line while the ring is empty; blocking "
                 "receive spins on box and ring with a pause per poll", SHM_BOX_DATA);
    vs_info_attr(info, "one_sided", "put/get: memcpy into/out of the peer's exposed buffer (its memfd mapped "
                 "through /proc); atomics: the CPU's; origin epoch end: release fence; rma_sync: acquire fence");
    return 0;
}

static const vs_transport_ops_t shm_ops = {
    .abi = VS_TRANSPORT_ABI,
    .size = sizeof(vs_transport_ops_t),
    .name = "shm",
    .summary = "shared-memory reference: cache-line ring, pipelined staging or single copy (intra-node floor)",
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
    .send = shm_send,
    .recv = shm_recv,
    .mem_reg = shm_mem_reg,
    .mem_dereg = shm_mem_dereg,
    .options = shm_options,
    .n_options = sizeof shm_options / sizeof shm_options[0],
    .roles = VS_ROLE_REFERENCE | VS_ROLE_FLOOR,
    .rma_expose = shm_rma_expose,
    .rma_attach = shm_rma_attach,
    .rma_release = shm_rma_release,
    .put = shm_put,
    .get = shm_get,
    .atomic = shm_atomic,
    .rma_epoch = shm_rma_epoch,
    .rma_sync = shm_rma_sync,
};

VS_TRANSPORT_DEFINE(shm_ops)
