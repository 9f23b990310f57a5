#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "timer.h"

/* The one piece of process-wide state: signal numbers arrive through a
 * handler, which can only reach static storage.  The handler runs on whichever
 * thread the signal lands on and the watchdog thread reads them: lock-free
 * atomics (a volatile sig_atomic_t is only good within one thread; ThreadSanitizer
 * reported it as a race on Ctrl-C). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a signal handler may only touch lock-free atomics");
static atomic_int vs_caught_signal;
static atomic_int vs_peer_ended; /* 1 + the rank the local launcher saw end badly */

static void on_signal(int sig) { atomic_store(&vs_caught_signal, sig); }

static void on_peer_ended(int sig, siginfo_t *info, void *ctx)
{
    (void)sig, (void)ctx;
    if (info->si_code == SI_QUEUE)
        atomic_store(&vs_peer_ended, 1 + info->si_value.sival_int);
}

int vs_watchdog_caught(void) { return atomic_load(&vs_caught_signal); }

void vs_watchdog_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = NULL;
    sa.sa_sigaction = on_peer_ended;
    sa.sa_flags = SA_SIGINFO;
    sigaction(VS_PEER_ENDED_SIGNAL, &sa, NULL);
}

void vs_watchdog_phase(vs_watchdog_t *wd, const char *phase, uint64_t bytes)
{
    atomic_store(&wd->phase, phase);
    atomic_store(&wd->phase_bytes, bytes);
    vs_watchdog_beat(wd);
}

static void describe(vs_watchdog_t *wd, char *buf, size_t len)
{
    uint64_t b = atomic_load(&wd->phase_bytes);
    const char *ph = atomic_load(&wd->phase);
    if (b == UINT64_MAX)
        snprintf(buf, len, "%s", ph ? ph : "starting");
    else
        snprintf(buf, len, "%s, message size %llu B", ph ? ph : "measuring", (unsigned long long)b);
}

static void finish(vs_watchdog_t *wd, const char *status, const char *msg, int code)
{
    fprintf(stderr, "versus-run: rank %d: %s\n", wd->rank, msg);
    vs_writer_t *w = atomic_exchange(&wd->writer, NULL); /* ours now: the run no longer closes it */
    if (w) {
        vs_writer_end(w, status, msg);
        fprintf(stderr, "versus-run: results measured so far are in %s\n", vs_writer_path(w));
    }
    fflush(stderr);
    _exit(code);
}

/* While the ranks meet, the bootstrap's own bounded waits (same timeout) end
 * the run with a more precise message: give them a moment before stepping in. */
static uint64_t startup_grace_ns(vs_watchdog_t *wd)
{
    const char *ph = atomic_load(&wd->phase);
    return ph && strcmp(ph, "starting the transport") == 0 ? 2000000000ull : 0;
}

static void *watch(void *arg)
{
    vs_watchdog_t *wd = arg;
    uint64_t last = atomic_load(&wd->beat);
    uint64_t since = vs_now_ns();
    const uint64_t limit = (uint64_t)(wd->timeout_s * 1e9);
    char what[160], msg[512];
    for (;;) {
        /* a tick of 200 ms, cut short by vs_watchdog_stop */
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += 200 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&wd->lock);
        while (!wd->stop && pthread_cond_timedwait(&wd->wake, &wd->lock, &until) == 0)
            ;
        int stop = wd->stop;
        pthread_mutex_unlock(&wd->lock);
        if (stop)
            return NULL;
        int peer = atomic_load(&vs_peer_ended), sig = atomic_load(&vs_caught_signal);
        /* Ctrl-C reaches every rank and the launcher: a peer that ended of it first is
         * news of the same interrupt, and the run ends as interrupted */
        if (sig) {
            describe(wd, what, sizeof what);
            snprintf(msg, sizeof msg, "interrupted by signal %d (%s) during %s", sig, strsignal(sig), what);
            finish(wd, "interrupted", msg, 1);
        }
        if (peer) {
            describe(wd, what, sizeof what);
            snprintf(msg, sizeof msg, "rank %d ended abnormally (the local launcher says so) during %s; "
                     "this rank stops too", peer - 1, what);
            finish(wd, "error", msg, 1);
        }
        uint64_t b = atomic_load_explicit(&wd->beat, memory_order_relaxed), now = vs_now_ns();
        if (b != last) {
            last = b;
            since = now;
        } else if (now - since > limit + startup_grace_ns(wd)) {
            describe(wd, what, sizeof what);
            snprintf(msg, sizeof msg,
                     "timeout: no progress for %.0f s during %s; the peer may have died or hung "
                     "(raise --timeout for very slow transports)", wd->timeout_s, what);
            finish(wd, "timeout", msg, 1);
        }
    }
    return NULL;
}

int vs_watchdog_start(vs_watchdog_t *wd, double timeout_s, int rank)
{
    wd->timeout_s = timeout_s;
    wd->rank = rank;
    wd->stop = 0;
    atomic_store(&wd->phase_bytes, UINT64_MAX);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&wd->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc)
        return -rc;
    if ((rc = pthread_mutex_init(&wd->lock, NULL))) {
        pthread_cond_destroy(&wd->wake);
        return -rc;
    }
    vs_watchdog_catch(); /* the watchdog acts on them, the measuring thread never does */
    if ((rc = pthread_create(&wd->thread, NULL, watch, wd))) {
        pthread_mutex_destroy(&wd->lock);
        pthread_cond_destroy(&wd->wake);
        return -rc;
    }
    wd->running = 1;
    return 0;
}

void vs_watchdog_stop(vs_watchdog_t *wd)
{
    if (!wd->running)
        return;
    pthread_mutex_lock(&wd->lock);
    wd->stop = 1;
    pthread_cond_signal(&wd->wake);
    pthread_mutex_unlock(&wd->lock);
    pthread_join(wd->thread, NULL);
    wd->running = 0;
    pthread_mutex_destroy(&wd->lock);
    pthread_cond_destroy(&wd->wake);
    /* a signal from now on ends the process as it would without us, unless
     * one arrived while stopping: the run ends with its own status anyway */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(VS_PEER_ENDED_SIGNAL, SIG_IGN);
}
