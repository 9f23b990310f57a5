/* Pattern parameters: parsing --progress, checking that pattern-only options
 * are given to a pattern that uses them, and recording them in the run record. */
#include "pattern_params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vs_progress_parse(const char *s, vs_options_t *o, char *err, size_t errlen)
{
    if (!strcmp(s, "none")) {
        o->progress = "none";
        o->poll_every = 0;
        return 0;
    }
    if (!strncmp(s, "poll=", 5)) {
        char *end;
        errno = 0;
        long n = strtol(s + 5, &end, 10);
        if (!errno && end != s + 5 && !*end && n >= 1) {
            o->progress = "poll";
            o->poll_every = n;
            return 0;
        }
    }
    snprintf(err, errlen, "--progress expects 'none' or 'poll=N' (N >= 1 elements summed between test calls), got '%s'", s);
    return -EINVAL;
}

int vs_buffers_parse(const char *s, vs_options_t *o, char *err, size_t errlen)
{
    if (!strcmp(s, "separate") || !strcmp(s, "shared")) {
        o->buffers = !strcmp(s, "shared") ? "shared" : "separate";
        return 0;
    }
    snprintf(err, errlen, "--buffers expects 'separate' or 'shared', got '%s'", s);
    return -EINVAL;
}

int vs_pattern_buffers_shared(const vs_options_t *o)
{
    return o->buffers && !strcmp(o->buffers, "shared");
}

int vs_pattern_params_check(const vs_options_t *o, char *err, size_t errlen)
{
    int stream = !strcmp(o->pattern, "stream") || !strcmp(o->pattern, "bistream");
    if (o->window && !stream && !vs_pattern_rma_windowed(o)) {
        snprintf(err, errlen, "--window applies to the stream and bistream patterns and the bandwidth variant of "
                              "put and get, not '%s'%s%s", o->pattern, o->variant ? " " : "",
                 o->variant ? o->variant : "");
        return -EINVAL;
    }
    if (o->progress && strcmp(o->pattern, "doublebuffer")) {
        snprintf(err, errlen, "--progress applies to the doublebuffer pattern, not '%s'", o->pattern);
        return -EINVAL;
    }
    if (o->buffers && strcmp(o->pattern, "pingpong")) {
        snprintf(err, errlen, "--buffers applies to the pingpong pattern, not '%s'", o->pattern);
        return -EINVAL;
    }
    return 0;
}

long vs_pattern_window(const vs_options_t *o)
{
    return o->window ? o->window : VS_DEFAULT_WINDOW;
}


int vs_pattern_rma_windowed(const vs_options_t *o)
{
    return (!strcmp(o->pattern, "put") || !strcmp(o->pattern, "get")) && o->variant &&
           !strcmp(o->variant, "bandwidth");
}
