/* Options that belong to one pattern (--window, --progress) and the run
 * record's "pattern_params" and "validate" fields. */
#ifndef VS_PATTERN_PARAMS_H
#define VS_PATTERN_PARAMS_H

#include <stddef.h>

#include "options.h"

enum { VS_DEFAULT_WINDOW = 64, VS_MAX_WINDOW = 4096 };

/* --progress none | poll=N  ->  o->progress, o->poll_every.  -EINVAL + err. */
int vs_progress_parse(const char *s, vs_options_t *o, char *err, size_t errlen);
/* A pattern-only option given to another pattern is a usage error. */
/* --buffers separate|shared (pingpong). */
int vs_buffers_parse(const char *s, vs_options_t *o, char *err, size_t errlen);
/* 1 when the ping-pong sends and receives through one buffer per rank. */
int vs_pattern_buffers_shared(const vs_options_t *o);
int vs_pattern_params_check(const vs_options_t *o, char *err, size_t errlen);
/* put or get, variant bandwidth: windows of --window operations. */
int vs_pattern_rma_windowed(const vs_options_t *o);
/* --window, or the default. */
long vs_pattern_window(const vs_options_t *o);

#endif
