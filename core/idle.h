/* What a rank does while it waits outside its transport.
 *
 * A library may hold a message, or the reply its peer's request waits for,
 * in this rank's queues until this rank calls it again.  Every wait outside
 * the transport (the TCP bootstrap's, the drift probe's) therefore calls
 * fn(arg), the transport's progress, now and then, so that a peer still in
 * the transport is never starved.  fn == NULL: nothing to drive. */
#ifndef VS_IDLE_H
#define VS_IDLE_H

typedef struct vs_idle {
    int (*fn)(void *arg); /* 0 or a negative errno, which ends the wait */
    void *arg;
} vs_idle_t;

#endif
