/* TCP rendezvous bootstrap: the ranks of a non-MPI run meet through rank 0.
 *
 * Star topology: every other rank holds one connection to rank 0; exchange
 * gathers to rank 0 and broadcasts the result; barrier is an empty exchange.
 * Wire format (network byte order):
 *   hello (rank r -> 0): magic, version, rank, size, job key (128 bytes)
 *   reply (0 -> rank r): magic, status
 *   frame (both ways):   magic, sequence number, payload length (64 bit), payload
 */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define VS_RDV_MAGIC 0x56534231u   /* "VSB1" */
#define VS_RDV_VERSION 1u
#define VS_RDV_POLL_MS 100         /* retry period for connect and for the address file */
#define VS_RDV_HELLO_S 5.0         /* a new connection must say hello within this */
#define VS_RDV_KEYLEN 128

enum { VS_RDV_OK = 0, VS_RDV_WRONG_JOB = 1, VS_RDV_WRONG_SIZE = 2, VS_RDV_BAD_RANK = 3 };

typedef struct vs_rdv_hello {
    uint32_t magic, version, rank, size;
    char key[VS_RDV_KEYLEN];
} vs_rdv_hello_t;

typedef struct vs_rdv_frame {
    uint32_t magic, seq;
    uint32_t len_hi, len_lo;
} vs_rdv_frame_t;

typedef struct vs_tcp_bs {
    vs_bootstrap_t pub;
    int *fds;                /* rank 0: fds[r] for r >= 1; other ranks: fds[0] leads to rank 0 */
    double timeout_s;
    uint32_t seq;            /* collective calls made so far */
    char where[300];         /* "HOST:PORT" of rank 0, for messages */
    char addr_file[PATH_MAX]; /* rank 0 published its address here ("" when not) */
    vs_idle_t idle;          /* driven while a collective waits (vs_bootstrap_tcp_set_idle) */
} vs_tcp_bs_t;

/* ------------------------------------------------------------------ time */

static double vs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* timeout_s <= 0: no deadline (returned as 0) */
static double vs_deadline(double timeout_s)
{
    return timeout_s > 0 ? vs_now() + timeout_s : 0;
}

static int vs_remaining_ms(double deadline)
{
    if (deadline <= 0)
        return -1;
    double left = deadline - vs_now();
    if (left <= 0)
        return 0;
    return left > INT_MAX / 1000 ? INT_MAX : (int)(left * 1000.0) + 1;
}

static int vs_expired(double deadline)
{
    return deadline > 0 && vs_now() >= deadline;
}

static void vs_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------------ socket I/O */

/* A rank waiting in a collective drives its transport (idle.h): first at
 * every poll for this many polls (a peer that needs it, needs it now), then
 * sleeping in poll between calls, 1 ms at first and twice as long each time
 * up to VS_IDLE_SLEEP_MAX_MS: a rank that waits out other pairs' measurements
 * (a scan, --serial) wakes a few times per measurement, not every millisecond
 * on the CPUs those pairs measure on. */
#define VS_IDLE_SPINS 2000
#define VS_IDLE_SLEEP_MAX_MS 64

/* Wait for events on fd until deadline: 0, -ETIMEDOUT or -errno.  With an
 * idle hook, call it while waiting. */
static int vs_fd_wait(int fd, short events, double deadline, const vs_idle_t *idle)
{
    int sleep_ms = 1;
    for (long polls = 0;; polls++) {
        int ms = vs_remaining_ms(deadline);
        if (idle && idle->fn) {
            int rc = idle->fn(idle->arg);
            if (rc < 0)
                return rc;
            int cap = 0;
            if (polls >= VS_IDLE_SPINS) {
                cap = sleep_ms;
                sleep_ms = sleep_ms * 2 > VS_IDLE_SLEEP_MAX_MS ? VS_IDLE_SLEEP_MAX_MS : sleep_ms * 2;
            }
            if (ms < 0 || ms > cap)
                ms = cap;
        }
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll(&p, 1, ms);
        if (rc > 0)
            return 0;
        if (rc == 0) {
            if (idle && idle->fn && !vs_expired(deadline))
                continue;
            return -ETIMEDOUT;
        }
        if (errno != EINTR)
            return -errno;
    }
}

/* Read exactly len bytes: 0, -ETIMEDOUT, -ECONNRESET (EOF or reset) or -errno. */
static int vs_fd_read(int fd, void *buf, size_t len, double deadline, const vs_idle_t *idle)
{
    char *p = buf;
    while (len > 0) {
        ssize_t got = recv(fd, p, len, MSG_DONTWAIT);
        if (got > 0) {
            p += got;
            len -= (size_t)got;
            continue;
        }
        if (got == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = vs_fd_wait(fd, POLLIN, deadline, idle);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int vs_fd_write(int fd, const void *buf, size_t len, double deadline, const vs_idle_t *idle)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t put = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (put > 0) {
            p += put;
            len -= (size_t)put;
            continue;
        }
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == EPIPE ? -ECONNRESET : -errno;
        int rc = vs_fd_wait(fd, POLLOUT, deadline, idle);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void vs_fd_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ------------------------------------------------ hydra's job name (PMI) */

/* One PMI-1 request/response line over PMI_FD. */
static int vs_pmi_call(int fd, const char *req, char *resp, size_t resplen, double deadline)
{
    int rc = vs_fd_write(fd, req, strlen(req), deadline, NULL);
    if (rc < 0)
        return rc;
    size_t n = 0;
    while (n + 1 < resplen) {
        if ((rc = vs_fd_read(fd, resp + n, 1, deadline, NULL)) < 0)
            return rc;
        if (resp[n++] == '\n')
            break;
    }
    resp[n] = '\0';
    return 0;
}

/* MPICH's hydra puts no job name in the environment: ask its PMI server for
 * the KVS name (init, get_my_kvsname, finalize; a process that inits PMI
 * must finalize it or hydra kills the job).  Only the TCP bootstrap does
 * this, so an MPI library in the same process never sees PMI used twice. */
static int vs_pmi_kvsname(char *key, size_t keylen)
{
    const char *s = getenv("PMI_FD");
    char *end;
    long fd = s ? strtol(s, &end, 10) : -1;
    if (!s || *end != '\0' || fd < 0 || fd > INT_MAX)
        return -ENOENT;
    double deadline = vs_deadline(5.0);
    char resp[512], *name;
    int rc;
    if ((rc = vs_pmi_call((int)fd, "cmd=init pmi_version=1 pmi_subversion=1\n", resp, sizeof resp, deadline)) < 0)
        return rc;
    if (!strstr(resp, "rc=0"))
        return -EPROTO;
    rc = vs_pmi_call((int)fd, "cmd=get_my_kvsname\n", resp, sizeof resp, deadline);
    if (rc == 0 && (name = strstr(resp, "kvsname=")) != NULL) {
        name += strlen("kvsname=");
        name[strcspn(name, " \n")] = '\0';
        snprintf(key, keylen, "pmi-%s", name);
        for (char *p = key; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
                *p = '_';
    } else if (rc == 0) {
        rc = -EPROTO;
    }
    int frc = vs_pmi_call((int)fd, "cmd=finalize\n", resp, sizeof resp, deadline);
    return rc < 0 ? rc : frc;
}

/* ------------------------------------------------------------- rank 0 */

/* A non-loopback IPv4 address of this host, else 127.0.0.1. */
static void vs_host_address(char *buf, size_t len)
{
    struct ifaddrs *ifs, *i;
    snprintf(buf, len, "127.0.0.1");
    if (getifaddrs(&ifs) < 0)
        return;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, (socklen_t)len);
        break;
    }
    freeifaddrs(ifs);
}

static int vs_listen_any(int port, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -errno;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "rank 0 cannot listen on port %d: %s", port, strerror(errno));
        close(fd);
        return rc;
    }
    return fd;
}

static int vs_bound_port(int fd)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 || sa.sin_family != AF_INET)
        return -1;
    return ntohs(sa.sin_port);
}

/* Publish "HOST:PORT" atomically: a reader sees the whole line or no file. */
static int vs_addr_publish(const char *path, const char *addr, char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write the rendezvous file %s: %s", tmp, strerror(errno));
        return -errno;
    }
    int ok = fprintf(f, "%s\n", addr) > 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) < 0) {
        int rc = errno ? -errno : -EIO;
        snprintf(err, errlen, "cannot publish the rendezvous file %s: %s", path, strerror(-rc));
        unlink(tmp);
        return rc;
    }
    return 0;
}

static void vs_missing_ranks(const int *fds, int size, char *buf, size_t len)
{
    size_t n = 0;
    int count = 0;
    buf[0] = '\0';
    for (int r = 1; r < size; r++) {
        if (fds[r] >= 0)
            continue;
        if (n + 16 < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", count ? ", " : "", r);
        count++;
    }
}

/* Accept size-1 peers on lfd, checking each one's hello. */
static int vs_rank0_accept(vs_tcp_bs_t *t, int lfd, const char *key, double deadline,
                           char *err, size_t errlen)
{
    int size = t->pub.size, waiting = size - 1;
    while (waiting > 0) {
        int rc = vs_fd_wait(lfd, POLLIN, deadline, NULL);
        if (rc == -ETIMEDOUT) {
            char missing[256];
            vs_missing_ranks(t->fds, size, missing, sizeof missing);
            snprintf(err, errlen, "rank%s %s did not connect within %g s (rendezvous %s)",
                     waiting > 1 ? "s" : "", missing, t->timeout_s, t->where);
            return rc;
        }
        if (rc < 0) {
            snprintf(err, errlen, "waiting for connections on %s: %s", t->where, strerror(-rc));
            return rc;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            snprintf(err, errlen, "accept on %s: %s", t->where, strerror(errno));
            return -errno;
        }
        vs_fd_nodelay(fd);
        vs_rdv_hello_t h;
        double hello_by = vs_now() + VS_RDV_HELLO_S;
        if (deadline > 0 && deadline < hello_by)
            hello_by = deadline;
        if (vs_fd_read(fd, &h, sizeof h, hello_by, NULL) < 0 || ntohl(h.magic) != VS_RDV_MAGIC ||
            ntohl(h.version) != VS_RDV_VERSION) {
            fprintf(stderr, "versus-run: rank 0: ignored a connection on %s that is not a versus rank\n",
                    t->where);
            close(fd);
            continue;
        }
        h.key[VS_RDV_KEYLEN - 1] = '\0';
        uint32_t r = ntohl(h.rank), hsize = ntohl(h.size), status = VS_RDV_OK;
        if (strcmp(h.key, key) != 0)
            status = VS_RDV_WRONG_JOB;
        else if (hsize != (uint32_t)size)
            status = VS_RDV_WRONG_SIZE;
        else if (r == 0 || r >= (uint32_t)size || t->fds[r] >= 0)
            status = VS_RDV_BAD_RANK;
        uint32_t reply[2] = { htonl(VS_RDV_MAGIC), htonl(status) };
        rc = vs_fd_write(fd, reply, sizeof reply, hello_by, NULL);
        if (status == VS_RDV_WRONG_JOB) {
            fprintf(stderr, "versus-run: rank 0: turned away rank %u of another job (%s, not %s)\n",
                    r, h.key, key);
            close(fd);
            continue;
        }
        if (status != VS_RDV_OK) {
            snprintf(err, errlen, "a rank of this job says it is rank %u of %u; this job has %d ranks%s",
                     r, hsize, size, status == VS_RDV_BAD_RANK ? " and that rank is taken or invalid" : "");
            close(fd);
            return -EPROTO;
        }
        if (rc < 0) {
            close(fd);
            continue;   /* it went away during the handshake: it may retry */
        }
        t->fds[r] = fd;
        waiting--;
    }
    return 0;
}

static int vs_rank0_setup(vs_tcp_bs_t *t, const vs_launch_env_t *env, const char *rdv,
                          const char *rdv_dir, const char *key, double deadline,
                          char *err, size_t errlen)
{
    int lfd, port, rc;
    char host[256];
    if (env->listen_fd >= 0) {
        lfd = env->listen_fd;   /* handed down by the local launcher; ours now */
        snprintf(t->where, sizeof t->where, "127.0.0.1:%d", vs_bound_port(lfd));
    } else if (rdv) {
        if (vs_launch_addr_parse(rdv, host, sizeof host, &port) < 0) {
            snprintf(err, errlen, "--rendezvous '%s' is not HOST:PORT", rdv);
            return -EINVAL;
        }
        if ((lfd = vs_listen_any(port, err, errlen)) < 0)
            return lfd;
        snprintf(t->where, sizeof t->where, "%s", rdv);
    } else {
        if ((lfd = vs_listen_any(0, err, errlen)) < 0)
            return lfd;
        vs_host_address(host, sizeof host);
        snprintf(t->where, sizeof t->where, "%s:%d", host, vs_bound_port(lfd));
        snprintf(t->addr_file, sizeof t->addr_file, "%s/versus-%s.addr", rdv_dir, key);
        if ((rc = vs_addr_publish(t->addr_file, t->where, err, errlen)) < 0) {
            t->addr_file[0] = '\0';
            close(lfd);
            return rc;
        }
    }
    rc = vs_rank0_accept(t, lfd, key, deadline, err, errlen);
    close(lfd);
    if (t->addr_file[0]) {
        unlink(t->addr_file);   /* everybody is in: nobody needs it any more */
        t->addr_file[0] = '\0';
    }
    return rc;
}

/* ------------------------------------------------------- other ranks */

/* One connection attempt, bounded by deadline: fd, or -errno. */
static int vs_connect_once(const char *host, int port, double deadline)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int gai = getaddrinfo(host, service, &hints, &ai);
    if (gai != 0)
        return gai == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), rc = 0;
    if (fd < 0) {
        rc = -errno;
    } else if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        rc = errno == EINPROGRESS ? vs_fd_wait(fd, POLLOUT, deadline, NULL) : -errno;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr)
            rc = -soerr;
    }
    freeaddrinfo(ai);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    vs_fd_nodelay(fd);
    return fd;
}

static int vs_addr_file_read(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -ENOENT;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

static int vs_peer_connect(vs_tcp_bs_t *t, const char *rdv, const char *rdv_dir, const char *key,
                           double deadline, char *err, size_t errlen)
{
    char path[PATH_MAX] = "", addr[300] = "", host[256];
    int port, rc = -ETIMEDOUT, fd = -1, rank = t->pub.rank;
    if (rdv) {
        snprintf(addr, sizeof addr, "%s", rdv);
        if (vs_launch_addr_parse(addr, host, sizeof host, &port) < 0) {
            snprintf(err, errlen, "--rendezvous '%s' is not HOST:PORT", rdv);
            return -EINVAL;
        }
    } else {
        snprintf(path, sizeof path, "%s/versus-%s.addr", rdv_dir, key);
    }
    for (;;) {
        if (path[0]) {
            if (vs_addr_file_read(path, addr, sizeof addr) < 0 ||
                vs_launch_addr_parse(addr, host, sizeof host, &port) < 0)
                addr[0] = '\0';
        }
        if (addr[0]) {
            double attempt = vs_now() + 2.0;
            if (deadline > 0 && deadline < attempt)
                attempt = deadline;
            fd = vs_connect_once(host, port, attempt);
            if (fd >= 0)
                break;
            rc = fd;
        }
        if (vs_expired(deadline)) {
            if (!addr[0])
                snprintf(err, errlen, "rank %d found no rendezvous file %s within %g s (rank 0 "
                         "writes it; the directory must be shared by all ranks: see --rendezvous-dir)",
                         rank, path, t->timeout_s);
            else
                snprintf(err, errlen, "rank %d could not connect to rank 0 at %s within %g s (%s)",
                         rank, addr, t->timeout_s, strerror(-rc));
            return -ETIMEDOUT;
        }
        int left = vs_remaining_ms(deadline);
        vs_sleep_ms(left >= 0 && left < VS_RDV_POLL_MS ? left : VS_RDV_POLL_MS);
    }
    snprintf(t->where, sizeof t->where, "%s", addr);

    vs_rdv_hello_t h = { htonl(VS_RDV_MAGIC), htonl(VS_RDV_VERSION), htonl((uint32_t)rank),
                         htonl((uint32_t)t->pub.size), { 0 } };
    snprintf(h.key, sizeof h.key, "%s", key);
    uint32_t reply[2];
    if ((rc = vs_fd_write(fd, &h, sizeof h, deadline, NULL)) < 0 ||
        (rc = vs_fd_read(fd, reply, sizeof reply, deadline, NULL)) < 0) {
        snprintf(err, errlen, "rank %d: handshake with rank 0 at %s failed: %s", rank, addr,
                 rc == -ECONNRESET ? "connection closed" : strerror(-rc));
        close(fd);
        return rc;
    }
    uint32_t status = ntohl(reply[1]);
    if (ntohl(reply[0]) != VS_RDV_MAGIC || status != VS_RDV_OK) {
        snprintf(err, errlen, "rank %d: rank 0 at %s refused the handshake (%s)", rank, addr,
                 ntohl(reply[0]) != VS_RDV_MAGIC ? "not a versus rank" :
                 status == VS_RDV_WRONG_JOB ? "it belongs to another job" :
                 status == VS_RDV_WRONG_SIZE ? "different number of ranks" : "rank taken or invalid");
        close(fd);
        return -EPROTO;
    }
    t->fds[0] = fd;
    return 0;
}

/* ----------------------------------------------------- collectives */

static int vs_tcp_report(vs_tcp_bs_t *t, int peer, int rc, const char *what)
{
    if (rc == -ECONNRESET)
        fprintf(stderr, "versus-run: rank %d: rank %d closed the rendezvous connection (%s #%u)\n",
                t->pub.rank, peer, what, t->seq);
    else if (rc == -ETIMEDOUT)
        fprintf(stderr, "versus-run: rank %d: rank %d did not answer within %g s (%s #%u, rendezvous %s)\n",
                t->pub.rank, peer, t->timeout_s, what, t->seq, t->where);
    else if (rc == -EPROTO)
        fprintf(stderr, "versus-run: rank %d: rank %d is out of step (%s #%u): the ranks did not make "
                "the same calls\n", t->pub.rank, peer, what, t->seq);
    else
        fprintf(stderr, "versus-run: rank %d: %s #%u with rank %d: %s\n", t->pub.rank, what, t->seq,
                peer, strerror(-rc));
    return rc;
}

static int vs_frame_send(int fd, uint32_t seq, const void *data, uint64_t len, double deadline,
                         const vs_idle_t *idle)
{
    vs_rdv_frame_t f = { htonl(VS_RDV_MAGIC), htonl(seq), htonl((uint32_t)(len >> 32)),
                         htonl((uint32_t)len) };
    int rc = vs_fd_write(fd, &f, sizeof f, deadline, idle);
    return rc < 0 || len == 0 ? rc : vs_fd_write(fd, data, (size_t)len, deadline, idle);
}

static int vs_frame_recv(int fd, uint32_t seq, void *data, uint64_t len, double deadline, const vs_idle_t *idle)
{
    vs_rdv_frame_t f;
    int rc = vs_fd_read(fd, &f, sizeof f, deadline, idle);
    if (rc < 0)
        return rc;
    uint64_t got = ((uint64_t)ntohl(f.len_hi) << 32) | ntohl(f.len_lo);
    if (ntohl(f.magic) != VS_RDV_MAGIC || ntohl(f.seq) != seq || got != len)
        return -EPROTO;
    return len == 0 ? 0 : vs_fd_read(fd, data, (size_t)len, deadline, idle);
}

/* Every block to rank 0; with bcast, rank 0 then sends the whole to everyone. */
static int vs_tcp_allgather(vs_bootstrap_t *bs, const void *mine, void *all, size_t len, int bcast,
                            const char *what)
{
    vs_tcp_bs_t *t = bs->ctx;
    double deadline = vs_deadline(t->timeout_s);
    uint32_t seq = ++t->seq;
    int rc;
    const vs_idle_t *idle = &t->idle;
    if (bs->rank != 0) {
        if ((rc = vs_frame_send(t->fds[0], seq, mine, len, deadline, idle)) < 0 ||
            (bcast &&
             (rc = vs_frame_recv(t->fds[0], seq, all, (uint64_t)len * (uint64_t)bs->size, deadline, idle)) < 0))
            return vs_tcp_report(t, 0, rc, what);
        return 0;
    }
    if (len)
        memcpy(all, mine, len);
    for (int r = 1; r < bs->size; r++)
        if ((rc = vs_frame_recv(t->fds[r], seq, len ? (char *)all + (size_t)r * len : NULL, len, deadline, idle)) < 0)
            return vs_tcp_report(t, r, rc, what);
    for (int r = 1; bcast && r < bs->size; r++)
        if ((rc = vs_frame_send(t->fds[r], seq, all, (uint64_t)len * (uint64_t)bs->size, deadline, idle)) < 0)
            return vs_tcp_report(t, r, rc, what);
    return 0;
}

static int vs_tcp_exchange(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    return vs_tcp_allgather(bs, mine, all, len, 1, "exchange");
}

static int vs_tcp_gather(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    return vs_tcp_allgather(bs, mine, all, len, 0, "gather");
}

static int vs_tcp_barrier(vs_bootstrap_t *bs)
{
    return vs_tcp_allgather(bs, NULL, NULL, 0, 1, "barrier");
}

void vs_bootstrap_tcp_set_idle(vs_bootstrap_t *bs, vs_idle_t idle)
{
    vs_tcp_bs_t *t = bs->ctx;
    t->idle = idle;
}

static void vs_tcp_close(vs_bootstrap_t *bs)
{
    if (!bs)
        return;
    vs_tcp_bs_t *t = bs->ctx;
    for (int r = 0; r < bs->size; r++)
        if (t->fds[r] >= 0)
            close(t->fds[r]);
    if (t->addr_file[0])
        unlink(t->addr_file);
    free(t->fds);
    free(t);
}

int vs_bootstrap_tcp_create(const vs_launch_env_t *env, const char *rendezvous,
                            const char *rdv_dir, double timeout_s,
                            vs_bootstrap_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (env->size < 1 || env->rank < 0 || env->rank >= env->size) {
        snprintf(err, errlen, "invalid rank %d of %d", env->rank, env->size);
        return -EINVAL;
    }
    const char *rdv = rendezvous && *rendezvous ? rendezvous :
                      env->rendezvous[0] ? env->rendezvous : NULL;
    if (!rdv_dir || !*rdv_dir)
        rdv_dir = ".";

    vs_tcp_bs_t *t = calloc(1, sizeof *t);
    if (!t || !(t->fds = malloc((size_t)env->size * sizeof *t->fds))) {
        free(t);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int r = 0; r < env->size; r++)
        t->fds[r] = -1;
    t->timeout_s = timeout_s;
    t->pub = (vs_bootstrap_t){ .name = "tcp", .rank = env->rank, .size = env->size, .ctx = t,
                               .barrier = vs_tcp_barrier, .exchange = vs_tcp_exchange,
                               .gather = vs_tcp_gather,
                               .close = vs_tcp_close };

    /* hydra names no job in the environment: ask it, when a file needs the name */
    char key[VS_RDV_KEYLEN];
    snprintf(key, sizeof key, "%s", env->job_key[0] ? env->job_key : "versus");
    if (!rdv && env->listen_fd < 0 && env->size > 1 && strncmp(key, "hydra-", 6) == 0)
        vs_pmi_kvsname(key, sizeof key);

    int rc = 0;
    double deadline = vs_deadline(timeout_s);
    if (env->size == 1) {
        if (env->listen_fd >= 0)
            close(env->listen_fd);
    } else if (env->rank == 0) {
        rc = vs_rank0_setup(t, env, rdv, rdv_dir, key, deadline, err, errlen);
    } else {
        rc = vs_peer_connect(t, rdv, rdv_dir, key, deadline, err, errlen);
    }
    if (rc < 0) {
        vs_tcp_close(&t->pub);
        return rc;
    }
    *out = &t->pub;
    return 0;
}
