/* Command line of versus-run. */
#ifndef VS_OPTIONS_H
#define VS_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <versus/transport.h>

#include "method.h"
#include "sizes.h"

#define VS_MAX_TOPTS 32

typedef enum { VS_ACTION_RUN, VS_ACTION_HELP, VS_ACTION_VERSION, VS_ACTION_LIST, VS_ACTION_TOPOLOGY, VS_ACTION_CLEANUP } vs_action_t;

typedef struct vs_options {
    vs_action_t action;
    int json;               /* --list --json, --help --json */
    const char *transport;
    vs_kv_t topts[VS_MAX_TOPTS];
    size_t n_topts;
    const char *pattern;
    const char *variant;
    const char *sizes_spec;
    vs_sizes_t sizes;
    long iterations, iterations_large, warmup, warmup_large;
    uint64_t large_from;
    long batch;              /* 0 = auto */
    long window;             /* stream, bistream: messages per window (--window) */
    const char *progress;    /* doublebuffer: "none" or "poll" (--progress) */
    const char *buffers;     /* pingpong: NULL/"separate" or "shared" (--buffers) */
    long poll_every;         /* doublebuffer: elements summed between test calls */
    int validate;            /* --validate: payload checks around each size */
    const char *out;         /* JSONL path or NULL */
    int overwrite;           /* --overwrite: out may already hold results */
    double timeout_s;
    int launch_local;        /* --launch local */
    int nprocs;              /* -n */
    const char *rendezvous;
    const char *rendezvous_dir;
    const char *placement;
    const char *cpus;
    long launch_id;
    vs_method_t method;      /* schedule, order, repetitions, clock (method.h) */
    int scan;                /* --scan: every pair of ranks once (scan.c) */
    int serial;              /* --serial: the scan's pairs one at a time */
    int shuffle_pairs;       /* --shuffle-pairs: the scan's schedule shuffled by --seed */
    long passes;             /* --passes: the scan's schedule this many times (default 2) */
    int quiet, verbose;
    int argc;
    char **argv;
    char *topt_storage[VS_MAX_TOPTS];
} vs_options_t;

/* Parse argv.  Returns 0, or -EINVAL with a message in err (exit 2). */
int vs_options_parse(int argc, char **argv, vs_options_t *o, char *err, size_t errlen);
void vs_options_free(vs_options_t *o);
void vs_options_usage(FILE *out);
/* --help --json: every option (name, short name, value, kind, choices, default,
 * group, help) and the patterns with their variants.  0 or -errno. */
int vs_options_usage_json(FILE *out);

#endif
