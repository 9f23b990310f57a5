/* Deadline for a run: a thread that ends the process with a clear error
 * (and the end record written) when the measurement stops making progress,
 * or when SIGINT/SIGTERM arrives. */
#ifndef VS_WATCHDOG_H
#define VS_WATCHDOG_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "writer.h"

typedef struct vs_watchdog {
    _Atomic uint64_t beat;  /* bumped by the measuring thread */
    _Atomic(const char *) phase; /* what is going on, for the message (static strings) */
    _Atomic uint64_t phase_bytes; /* message size in flight, or UINT64_MAX */
    _Atomic(vs_writer_t *) writer; /* rank 0's results file, or NULL */
    double timeout_s;
    int rank;
    /* the thread, and how the run stops it: stop set under lock, cond wakes it */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop, running;
} vs_watchdog_t;

/* The local launcher tells a rank that another ended badly with this signal,
 * the rank in its value (sigqueue). */
#define VS_PEER_ENDED_SIGNAL SIGUSR1

/* Catch SIGINT, SIGTERM and VS_PEER_ENDED_SIGNAL (noted for the watchdog):
 * before the local launcher forks, so that no rank meets them unprepared. */
void vs_watchdog_catch(void);

/* The SIGINT or SIGTERM caught so far, or 0: a run that fails because its peer was
 * interrupted first (Ctrl-C reaches every rank) ends as interrupted, not as an error. */
int vs_watchdog_caught(void);

/* Start the thread and install SIGINT/SIGTERM handling.  Returns 0 or -errno. */
int vs_watchdog_start(vs_watchdog_t *wd, double timeout_s, int rank);

/* Stop the thread and wait for it (on every path out of a run that started
 * it; harmless when it did not start).  Signals are then left to their
 * defaults again. */
void vs_watchdog_stop(vs_watchdog_t *wd);

static inline void vs_watchdog_beat(vs_watchdog_t *wd)
{
    /* one writer (the measuring thread): a plain load and store, no locked
     * read-modify-write in the timed loop */
    atomic_store_explicit(&wd->beat, atomic_load_explicit(&wd->beat, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void vs_watchdog_phase(vs_watchdog_t *wd, const char *phase, uint64_t bytes);

#endif
