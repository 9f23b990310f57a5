/* versus shm transport: single copy for large messages.
 *
 * Registration moves a buffer's pages into a memfd, in place (the content is
 * kept and the address does not change), so that a peer can map the same
 * pages: it opens the memfd through /proc/PID/fd/N of the owner and maps it
 * read-only.  A large send from a registered buffer then puts only a
 * reference in the ring (REC_MAP); the receiver copies the payload straight
 * from the sender's pages into its receive buffer and acknowledges it in the
 * channel's ack slots, which completes the send.  One copy instead of two
 * through the staging slots, and no staging area in the working set.
 *
 * Whether the ranks can map each other's memfds (same user, /proc mounted,
 * no policy in the way) is probed once at connect; when any rank cannot,
 * every rank keeps the staging path and the run record says why. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm.h"

static long page_bytes(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? p : 4096;
}

/* Move mem's pages into a memfd, in place; mem->desc then holds it. */
static int reg_move(vs_transport_t *t, vs_mem_t *mem)
{
    shm_reg_t *reg = calloc(1, sizeof *reg);
    if (!reg)
        return -ENOMEM;
    int fd = memfd_create("versus-shm-buffer", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)mem->len)) {
        int e = errno;
        ERR(t, "single copy: a %zu B memfd for a buffer: %s", mem->len, strerror(e));
        if (fd >= 0)
            close(fd);
        free(reg);
        return -e;
    }
    void *tmp = mmap(NULL, mem->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (tmp != MAP_FAILED) {
        memcpy(tmp, mem->addr, mem->len);
        munmap(tmp, mem->len);
    }
    if (tmp == MAP_FAILED || mmap(mem->addr, mem->len, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED) {
        int e = errno;
        ERR(t, "single copy: mapping a %zu B buffer onto its memfd: %s", mem->len, strerror(e));
        close(fd);
        free(reg);
        return -e;
    }
    *reg = (shm_reg_t){.id = ++t->next_reg, .fd = fd, .bytes = mem->len};
    mem->desc = reg;
    return 0;
}

static int whole_pages(const vs_mem_t *mem)
{
    size_t page = (size_t)page_bytes();
    return (uintptr_t)mem->addr % page == 0 && mem->len % page == 0;
}

int shm_mem_reg(vs_transport_t *t, vs_mem_t *mem)
{
    mem->desc = NULL;
    /* only whole pages can be moved, and only buffers that can hold a
     * single-copy message are worth it (one-sided exposure moves the others) */
    if (mem->len < t->single_min || !whole_pages(mem))
        return 0;
    return reg_move(t, mem);
}

int shm_mem_dereg(vs_transport_t *t, vs_mem_t *mem)
{
    shm_reg_t *reg = mem->desc;
    if (!reg)
        return 0;
    /* give the range back to its owner as private anonymous memory */
    int rc = 0;
    if (mmap(mem->addr, reg->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
             -1, 0) == MAP_FAILED) {
        rc = -errno;
        ERR(t, "single copy: unmapping a %zu B buffer from its memfd: %s", reg->bytes, strerror(-rc));
    }
    close(reg->fd);
    free(reg);
    mem->desc = NULL;
    return rc;
}

/* Map `bytes` of the memfd `fd` of process `pid`, read-only or (rw) for
 * reading and writing; MAP_FAILED with errno set when it cannot. */
static void *map_foreign_as(pid_t pid, int fd, size_t bytes, int rw)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    int f = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (f < 0)
        return MAP_FAILED;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(f, &st))
        goto out;
    if ((size_t)st.st_size < bytes) {
        errno = EPROTO;
        goto out;
    }
    p = mmap(NULL, bytes, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED | MAP_POPULATE, f, 0);
out:;
    int e = errno;
    close(f);
    errno = e;
    return p;
}

static void *map_foreign(pid_t pid, int fd, size_t bytes)
{
    return map_foreign_as(pid, fd, bytes, 0);
}

/* ---- one-sided operations: the partner's exposed buffer mapped here for
 * reading and writing, every operation a plain copy or a CPU atomic on it. */

/* What a peer needs to map one exposed buffer. */
typedef struct shm_rma_blob {
    uint64_t id, bytes, addr;
    int32_t fd, unused;
} shm_rma_blob_t;

int shm_rma_expose(vs_transport_t *t, vs_mem_t *mem, void *blob, size_t *len)
{
    if (*len < sizeof(shm_rma_blob_t))
        return -EOVERFLOW;
    if (!mem->desc) {
        if (!whole_pages(mem)) {
            ERR(t, "one-sided: a buffer to expose must be whole pages (%zu B at %p)", mem->len, mem->addr);
            return -EINVAL;
        }
        int rc = reg_move(t, mem);
        if (rc)
            return rc;
    }
    const shm_reg_t *reg = mem->desc;
    shm_rma_blob_t b = {.id = reg->id, .bytes = reg->bytes, .addr = (uint64_t)(uintptr_t)mem->addr, .fd = reg->fd};
    memcpy(blob, &b, sizeof b);
    *len = sizeof b;
    return 0;
}

int shm_rma_attach(vs_transport_t *t, int peer, const void *blob, size_t len, vs_rmem_t *out)
{
    shm_rma_blob_t b;
    if (len != sizeof b || peer < 0 || peer >= t->size || peer == t->rank) {
        ERR(t, "one-sided: rank %d's blob has %zu bytes, not %zu (or it is no peer)", peer, len, sizeof b);
        return -EPROTO;
    }
    memcpy(&b, blob, sizeof b);
    void *a = map_foreign_as(t->peers[peer].pid, b.fd, b.bytes, 1);
    if (a == MAP_FAILED) {
        int e = errno;
        ERR(t, "one-sided: cannot map rank %d's %" PRIu64 " B buffer for writing (pid %d, fd %d): %s", peer,
            b.bytes, (int)t->peers[peer].pid, b.fd, strerror(e));
        return e == EACCES || e == EPERM || e == ENOENT ? -ENOTSUP : -e;
    }
    *out = (vs_rmem_t){.addr = b.addr, .len = b.bytes, .handle = a};
    return 0;
}

void shm_rma_release(vs_transport_t *t, vs_rmem_t *remote)
{
    (void)t;
    if (remote->handle)
        munmap(remote->handle, remote->len);
    remote->handle = NULL;
}

const unsigned char *shm_map_peer(vs_transport_t *t, int peer, const shm_map_ref_t *ref)
{
    shm_peer_t *p = &t->peers[peer];
    for (int i = 0; i < SHM_MAPS; i++)
        if (p->maps[i].addr && p->maps[i].id == ref->id)
            return p->maps[i].addr;
    void *a = map_foreign(p->pid, ref->fd, ref->bytes);
    if (a == MAP_FAILED) {
        ERR(t, "single copy: cannot map rank %d's %" PRIu64 " B buffer (pid %d, fd %d): %s "
               "(--transport-opt single=0 uses the staging copy)",
            peer, ref->bytes, (int)p->pid, ref->fd, strerror(errno));
        return NULL;
    }
    shm_map_t *m = &p->maps[p->next_map++ % SHM_MAPS];
    if (m->addr)
        munmap((void *)m->addr, m->bytes);
    *m = (shm_map_t){.id = ref->id, .addr = a, .bytes = ref->bytes};
    return a;
}

void shm_maps_free(shm_peer_t *p)
{
    for (int i = 0; i < SHM_MAPS; i++)
        if (p->maps[i].addr) {
            munmap((void *)p->maps[i].addr, p->maps[i].bytes);
            p->maps[i] = (shm_map_t){0};
        }
}

typedef struct shm_probe {
    int32_t fd; /* -1: could not make one */
    int32_t ok; /* could map every other rank's probe */
} shm_probe_t;

int shm_single_probe(vs_transport_t *t, vs_bootstrap_t *bs)
{
    /* every rank takes part, whatever its own `single`, so the exchanges pair up */
    t->single_min = SIZE_MAX;
    size_t page = (size_t)page_bytes();
    uint64_t mark = t->key ^ (uint64_t)t->rank;
    shm_probe_t me = {.fd = memfd_create("versus-shm-probe", MFD_CLOEXEC), .ok = 1};
    if (me.fd >= 0 && (ftruncate(me.fd, (off_t)page) || pwrite(me.fd, &mark, sizeof mark, 0) != sizeof mark)) {
        close(me.fd);
        me.fd = -1;
    }
    shm_probe_t *all = calloc((size_t)t->size, sizeof *all);
    if (!all) {
        if (me.fd >= 0)
            close(me.fd);
        return -ENOMEM;
    }
    int rc = bs->exchange(bs, &me, all, sizeof me);
    int e = 0;
    for (int r = 0; !rc && r < t->size; r++) {
        if (r == t->rank)
            continue;
        void *a = all[r].fd >= 0 ? map_foreign(t->peers[r].pid, all[r].fd, page) : MAP_FAILED;
        if (a == MAP_FAILED) {
            e = all[r].fd >= 0 ? errno : ENOSYS;
            me.ok = 0;
            continue;
        }
        if (*(const uint64_t *)a != (t->key ^ (uint64_t)r)) {
            e = EPROTO;
            me.ok = 0;
        }
        munmap(a, page);
    }
    /* the probes stay open until everybody has looked at them */
    if (!rc)
        rc = bs->exchange(bs, &me, all, sizeof me);
    if (me.fd >= 0)
        close(me.fd);
    if (rc) {
        ERR(t, "bootstrap exchange while probing single copy failed");
        free(all);
        return rc;
    }
    int ok = 1;
    for (int r = 0; r < t->size; r++)
        ok &= all[r].ok;
    free(all);
    if (ok && t->single)
        t->single_min = t->single > t->eager_limit ? t->single : t->eager_limit + 1;
    else if (!t->single)
        snprintf(t->single_why, sizeof t->single_why, "off (single=0)");
    else
        snprintf(t->single_why, sizeof t->single_why, "off: buffers cannot be mapped across ranks (%s)",
                 e ? strerror(e) : "another rank could not");
    return 0;
}
