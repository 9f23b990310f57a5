#include "writer.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct vs_writer {
    int fd;
    char *path;
    pthread_mutex_t lock;
    int ended;
    vs_writer_end_fn format_end;
    vs_writer_end_t end; /* sizes_completed and the numbers to add */
    struct timespec synced; /* when the file was last flushed to the disk */
};

/* A line is in the kernel once write() returns: a runner or a peer that dies loses
 * nothing written.  What only the disk keeps through a crash of the machine is flushed
 * at most once a second and at the end record: a flush per line cost 10-17 ms a size
 * here, 17 s of a 1,000-size sweep whose round trips took 0.7 s. */
#define VS_SYNC_EVERY_NS 1000000000LL

static void sync_now_and_then(vs_writer_t *w, int always)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long gap = (now.tv_sec - w->synced.tv_sec) * 1000000000LL + (now.tv_nsec - w->synced.tv_nsec);
    if (always || gap >= VS_SYNC_EVERY_NS) {
        fdatasync(w->fd);
        clock_gettime(CLOCK_MONOTONIC, &w->synced);
    }
}

void vs_iso8601_now(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}

int vs_writer_holds_results(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    snprintf(err, errlen,
             "--out %s: the file exists and holds %lld bytes (results of an earlier run?); give another "
             "name, move it away, or add --overwrite to replace it",
             path, (long long)st.st_size);
    return 1;
}

vs_writer_t *vs_writer_open(const char *path, int overwrite, vs_writer_end_fn format_end, char *err,
                            size_t errlen)
{
    if (!overwrite && vs_writer_holds_results(path, err, errlen))
        return NULL;
    vs_writer_t *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* Opened without O_TRUNC and locked before anything is cut: two runs given one --out (a job
     * array writing one name, a run started twice) would otherwise both truncate it and interleave
     * their lines.  The lock is held as long as the file is open; a device or FIFO is written as is. */
    w->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        snprintf(err, errlen, "cannot write results to '%s': %s", path, strerror(errno));
        free(w);
        return NULL;
    }
    struct stat st;
    if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const char *why = NULL;
        if (flock(w->fd, LOCK_EX | LOCK_NB) != 0)
            why = errno == EWOULDBLOCK ? "another run is writing it now" : strerror(errno);
        else if (!overwrite && fstat(w->fd, &st) == 0 && st.st_size > 0)
            why = "it filled while this run started (another run wrote it)";
        else if (ftruncate(w->fd, 0) != 0)
            why = strerror(errno);
        if (why) {
            snprintf(err, errlen, "--out %s: %s; give each run its own --out", path, why);
            close(w->fd);
            free(w);
            return NULL;
        }
    }
    w->path = strdup(path);
    w->format_end = format_end;
    pthread_mutex_init(&w->lock, NULL);
    return w;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Every record is sealed: its closing brace is preceded by
 * ,"line_sha256":"<64 hex>" — the SHA-256 of the line's bytes before that key —
 * so a reader catches any byte of the line changed, added or removed. */
static int put_line(vs_writer_t *w, const char *text, size_t len, int sync_always)
{
    if (len < 2 || text[0] != '{' || text[len - 1] != '}')
        return -EINVAL;
    char seal[96], hex[65];
    vs_sha256_hex(text, len - 1, hex);
    int n = snprintf(seal, sizeof seal, ",\"line_sha256\":\"%s\"}\n", hex);
    int rc = write_all(w->fd, text, len - 1);
    if (!rc)
        rc = write_all(w->fd, seal, (size_t)n);
    if (!rc)
        sync_now_and_then(w, sync_always);
    return rc;
}

int vs_writer_record(vs_writer_t *w, const vs_json_t *j, int is_size)
{
    if (j->oom)
        return -ENOMEM;
    pthread_mutex_lock(&w->lock);
    int rc = w->ended ? -ECANCELED : put_line(w, j->buf, j->len, 0);
    if (!rc && is_size)
        w->end.sizes_completed++;
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int vs_writer_end(vs_writer_t *w, const char *status, const char *message)
{
    /* The watchdog may call this while the main thread holds the lock
     * forever (stuck in a write): do not wait for it indefinitely. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    int locked = pthread_mutex_timedlock(&w->lock, &until) == 0;
    int rc = 0;
    if (!w->ended) {
        w->ended = 1;
        w->end.status = status;
        w->end.message = message ? message : "";
        vs_json_t j;
        vs_json_init(&j);
        w->format_end(&j, &w->end);
        rc = j.oom ? -ENOMEM : put_line(w, j.buf, j.len, 1);
        vs_json_free(&j);
    }
    if (locked)
        pthread_mutex_unlock(&w->lock);
    return rc;
}

void vs_writer_end_num(vs_writer_t *w, const char *key, double value)
{
    pthread_mutex_lock(&w->lock);
    if (w->end.n_extra < VS_WRITER_END_EXTRA) {
        w->end.extra_key[w->end.n_extra] = key;
        w->end.extra_val[w->end.n_extra++] = value;
    }
    pthread_mutex_unlock(&w->lock);
}

void vs_writer_abandon(vs_writer_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->ended = 1;
    pthread_mutex_unlock(&w->lock);
    unlink(w->path);
    vs_writer_close(w);
}

void vs_writer_close(vs_writer_t *w)
{
    if (!w)
        return;
    vs_writer_end(w, "error", "the run ended without reporting its status");
    close(w->fd);
    free(w->path);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

const char *vs_writer_path(const vs_writer_t *w) { return w->path; }
