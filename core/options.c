/* versus-run's command line as one table: each option's name, short name,
 * value, kind, field, default, help group and help text are written once in
 * vs_option_table below; the getopt arrays, the defaults and (options_help.c)
 * --help and --help --json are made from it.  The rules between options are
 * the short checks in `rules`. */
#include "options.h"

#include "launch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options_table.h"
#include "pattern.h"
#include "pattern_params.h"

/* ---- parsing one value, by kind */

static int parse_count(const char *opt, const char *s, long min, long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) {
        snprintf(err, errlen, "%s expects an integer >= %ld, got '%s'", opt, min, s);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->field))

static int opt_flag(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)arg, (void)err, (void)errlen;
    *FIELD(o, d, int) = 1;
    return 0;
}

static int opt_text(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *FIELD(o, d, const char *) = arg;
    return 0;
}

static int opt_action(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)arg, (void)err, (void)errlen;
    o->action = (vs_action_t)d->code;
    return 0;
}

/* A whole number within the option's bounds. */
static int count_value(const vs_optdef_t *d, const char *arg, long *v, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "--%s", d->name);
    int rc = parse_count(name, arg, d->min, v, err, errlen);
    if (!rc && d->max && *v > d->max) {
        snprintf(err, errlen, "%s %ld is more than %ld %s", name, *v, d->max, d->unit);
        rc = -EINVAL;
    }
    return rc;
}

static int opt_count(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    return count_value(d, arg, FIELD(o, d, long), err, errlen);
}

static int opt_int_count(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    long v;
    int rc = count_value(d, arg, &v, err, errlen);
    if (!rc)
        *FIELD(o, d, int) = (int)v;
    return rc;
}

static int opt_bytes(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    if (vs_bytes_parse(arg, FIELD(o, d, uint64_t))) {
        snprintf(err, errlen, "--%s expects a size such as 64K, got '%s'", d->name, arg);
        return -EINVAL;
    }
    return 0;
}

static int opt_seconds(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double t = strtod(arg, &end);
    if (errno || end == arg || *end || !(t > 0) || t > 86400) {
        snprintf(err, errlen, "--%s expects seconds in (0, 86400], got '%s'", d->name, arg);
        return -EINVAL;
    }
    *FIELD(o, d, double) = t;
    return 0;
}

/* One of d->choices, stored as its index (an enum in that order). */
static int opt_choice(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    size_t len = strlen(arg);
    int i = 0;
    for (const char *c = d->choices; *c; i++) {
        size_t n = strcspn(c, "|");
        if (n == len && !strncmp(c, arg, n)) {
            *FIELD(o, d, int) = i;
            return 0;
        }
        c += n + (c[n] == '|');
    }
    /* "a, b or c" */
    char list[256] = "";
    size_t at = 0;
    const char *c = d->choices;
    for (int k = 0; *c && at < sizeof list; k++) {
        size_t n = strcspn(c, "|");
        const char *sep = k == 0 ? "" : c[n] ? ", " : " or ";
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%.*s", sep, (int)n, c);
        c += n + (c[n] == '|');
    }
    snprintf(err, errlen, "--%s expects %s, got '%s'", d->name, list, arg);
    return -EINVAL;
}

static int opt_method(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    return vs_method_parse(&o->method, d->code, arg, err, errlen);
}

static int opt_topt(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)d;
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        snprintf(err, errlen, "--transport-opt expects KEY=VALUE, got '%s'", arg);
        return -EINVAL;
    }
    if (o->n_topts == VS_MAX_TOPTS) {
        snprintf(err, errlen, "too many --transport-opt (at most %d)", VS_MAX_TOPTS);
        return -EINVAL;
    }
    char *kv = strdup(arg);
    if (!kv)
        return -ENOMEM;
    kv[eq - arg] = '\0';
    o->topt_storage[o->n_topts] = kv;
    o->topts[o->n_topts].key = kv;
    o->topts[o->n_topts].value = kv + (eq - arg) + 1;
    o->n_topts++;
    return 0;
}

static int opt_batch(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    if (!strcmp(arg, "auto")) {
        o->batch = 0;
        return 0;
    }
    return opt_count(o, d, arg, err, errlen);
}

static int opt_progress(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)d;
    return vs_progress_parse(arg, o, err, errlen);
}

static int opt_buffers(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)d;
    return vs_buffers_parse(arg, o, err, errlen);
}

static int opt_launch(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen)
{
    (void)d;
    o->launch_local = 1;
    if (strcmp(arg, "local")) {
        snprintf(err, errlen, "--launch supports 'local' only (got '%s'); under mpirun, mpiexec or srun no --launch is needed", arg);
        return -EINVAL;
    }
    return 0;
}

/* ---- the table */

#define F(member) .field = offsetof(vs_options_t, member)
#define FLAG(member) .kind = "flag", .parse = opt_flag, F(member)
#define TEXT(member) .kind = "text", .parse = opt_text, F(member)
#define NAMED(member, k) .kind = (k), .parse = opt_text, F(member) /* a name the rules check */
#define COUNT(member, least) .kind = "count", .parse = opt_count, F(member), .min = (least)
#define ACTION(a) .kind = "action", .parse = opt_action, .code = (a)
#define METHOD(c, k) .kind = (k), .parse = opt_method, .code = (c)
#define CHOICE(member, list) .kind = "choice", .parse = opt_choice, F(member), .choices = (list)

const vs_optdef_t vs_option_table[] = {
    {"transport", 't', "NAME", NAMED(transport, "transport"), .group = G_TRANSPORT,
     .help = "transport module, one of those --list names (the modules\n"
             "this installation found, whether they load, their versions)"},
    {"transport-opt", 'o', "K=V", .kind = "key=value", .parse = opt_topt, .repeatable = 1, .group = G_TRANSPORT,
     .help = "option for the module, repeatable (e.g. provider=tcp,\n"
             "mode=block); an unknown key is an error"},
    {"list", 0, NULL, ACTION(VS_ACTION_LIST), .group = G_TRANSPORT,
     .help = "list transport modules, whether they load, library version"},
    {"json", 0, NULL, FLAG(json), .group = G_TRANSPORT, .label = "    --list --json",
     .help = "the same as JSON, with what each module declares: its\n"
             "options, launcher, environment prefixes, memory"},

    {"pattern", 'p', "NAME", NAMED(pattern, "pattern"), .def = "pingpong", .group = G_PATTERN,
     .help = "pattern to run (default %D); see below"},
    {"variant", 'V', "NAME", NAMED(variant, "variant"), .def = "blocking", .def_later = 1, .group = G_PATTERN,
     .help = "pattern variant: %D (default) or nonblocking; overhead also\n"
             "delayed (the receive called once the echo is there: o_r)"},
    {"sizes", 's', "SPEC", TEXT(sizes_spec), .def = "0:4M", .def_later = 1, .group = G_PATTERN,
     .help = "message sizes in bytes (default %D); comma-separated items:\n"
             "  N            one size, e.g. 8, 1K, 4M (K/M/G are binary)\n"
             "  MIN:MAX      powers of two in [MIN,MAX], plus 0 if MIN is 0\n"
             "  MIN:MAX:+S   every S bytes from MIN to MAX, e.g. 4:40000:+4"},
    {"iterations", 'i', "N", COUNT(iterations, 1), .def = "1000", .group = G_PATTERN,
     .help = "samples per size (default %D)"},
    {"iterations-large", 0, "N", COUNT(iterations_large, 1), .def = "100", .group = G_PATTERN,
     .help = "samples per size from --large-from on (default %D)"},
    {"warmup", 'w', "N", COUNT(warmup, 0), .def = "100", .group = G_PATTERN,
     .help = "unrecorded warm-up round trips per size (default %D)"},
    {"warmup-large", 0, "N", COUNT(warmup_large, 0), .def = "10", .group = G_PATTERN,
     .help = "warm-up round trips from --large-from on (default %D)"},
    {"large-from", 0, "BYTES", .kind = "bytes", .parse = opt_bytes, F(large_from), .def = "64K", .group = G_PATTERN,
     .help = "where large-message counts begin (default %D)"},
    {"batch", 'b', "K|auto", .kind = "count|auto", .parse = opt_batch, F(batch), .min = 1, .def = "auto",
     .group = G_PATTERN,
     .help = "round trips per sample; %D (default) picks K per size so\n"
             "the clock's cost stays under 1 % of a sample"},
    {"window", 0, "W", COUNT(window, 1), .max = VS_MAX_WINDOW, .unit = "messages", .def = "64", .def_later = 1,
     .group = G_PATTERN, .help = "stream, bistream, put and get bandwidth: messages per window (default %D)"},
    {"progress", 0, "MODE", .kind = "none|poll=N", .parse = opt_progress, .def = "none", .def_later = 1,
     .group = G_PATTERN,
     .help = "doublebuffer: %D (default; no library call while summing)\n"
             "or poll=N (a test call every N elements summed)"},
    {"buffers", 0, "MODE", .kind = "choice", .parse = opt_buffers, .choices = "separate|shared", .def = "separate",
     .def_later = 1, .group = G_PATTERN,
     .help = "pingpong: %D (default; a send and a receive buffer per\n"
             "rank, as OSU and IMB) or shared (one buffer per rank for\n"
             "both, NetPIPE's default: half the memory footprint)"},
    {"validate", 0, NULL, FLAG(validate), .group = G_PATTERN,
     .help = "check every payload byte in both directions before and\n"
             "after each size (outside the timed loop); a mismatch\n"
             "marks the size invalid and the run exits 1"},

    {"perturb", 0, "K", METHOD(VS_OPT_PERTURB, "bytes"), .group = G_METHOD,
     .help = "also measure every size at -K and +K bytes (NetPIPE style)"},
    {"adaptive", 0, NULL, FLAG(method.adaptive), .group = G_METHOD,
     .help = "after the schedule, add sizes between neighbours where the\n"
             "midpoint departs from their straight line, pass by pass"},
    {"adaptive-tol", 0, "P", METHOD(VS_OPT_ADAPTIVE_TOL, "percent"), .def = "5", .group = G_METHOD,
     .help = "departure that asks for refinement, % (default %D)"},
    {"adaptive-min-gap", 0, "G", METHOD(VS_OPT_ADAPTIVE_GAP, "bytes|percent"), .group = G_METHOD,
     .help = "closest spacing: bytes (e.g. 8) or % of the size (e.g. 1%);\n"
             "default the larger of 8 B and 1 %"},
    {"adaptive-max-sizes", 0, "N", METHOD(VS_OPT_ADAPTIVE_MAX, "count"), .def = "200", .group = G_METHOD,
     .help = "at most N sizes in the whole run (default %D)"},
    {"order", 0, "ORDER", CHOICE(method.order, "sequential|shuffled|interleaved"), .def = "sequential",
     .group = G_METHOD,
     .help = "%D (default: each size in one go, ascending),\n"
             "shuffled (seeded random order), interleaved (every size\n"
             "in R rounds of a few samples each)"},
    {"rounds", 0, "R", METHOD(VS_OPT_ROUNDS, "count"), .def_later = 1, .group = G_METHOD,
     .help = "rounds for interleaved (default 10) or shuffled (default 1)"},
    {"seed", 0, "N", METHOD(VS_OPT_SEED, "count"), .def_later = 1, .group = G_METHOD,
     .help = "seed of the shuffled order (default: drawn, recorded)"},
    {"precision", 0, "P", METHOD(VS_OPT_PRECISION, "percent"), .group = G_METHOD,
     .help = "measure each size until the 95 % confidence interval of its\n"
             "median is within P % of it (instead of --iterations)"},
    {"min-iterations", 0, "N", METHOD(VS_OPT_MIN_ITER, "count"), .def = "100", .group = G_METHOD,
     .help = "with --precision: samples before stopping (default %D)"},
    {"max-iterations", 0, "N", METHOD(VS_OPT_MAX_ITER, "count"), .def = "100000", .group = G_METHOD,
     .help = "with --precision: most samples per size (default %D)"},
    {"max-seconds-per-size", 0, "S", .kind = "seconds", .parse = opt_seconds, F(method.max_seconds), .def = "10",
     .group = G_METHOD, .help = "with --precision: measuring time budget (default %D)"},
    {"clock", 0, "CLOCK", CHOICE(method.clock, "monotonic|tsc"), .def = "monotonic", .group = G_METHOD,
     .help = "%D (default; CLOCK_MONOTONIC) or tsc (the invariant\n"
             "time-stamp counter, calibrated)"},

    {"scan", 0, NULL, FLAG(scan), .group = G_RANKS,
     .help = "all-pairs scan instead: N-1 rounds of N/2 concurrent\n"
             "ping-pongs, every pair once, a \"pair\" record per pair\n"
             "and size (defaults: --sizes 8,1M --iterations 50\n"
             "--iterations-large 10 --warmup 10 --warmup-large 2)"},
    {"serial", 0, NULL, FLAG(serial), .group = G_RANKS,
     .help = "with --scan: one pair at a time, the others waiting"},
    {"shuffle-pairs", 0, NULL, FLAG(shuffle_pairs), .group = G_RANKS,
     .help = "with --scan: shuffle the schedule with --seed"},
    {"passes", 0, "K", COUNT(passes, 1), .def = "2", .def_later = 1, .group = G_RANKS,
     .help = "with --scan: run the whole schedule K times (default %D): a\n"
             "pair slow in one pass only is noise, not a bad link"},

    {"out", 'O', "FILE", TEXT(out), .group = G_OUTPUT,
     .help = "write results as JSON Lines (docs/results-schema.md);\n"
             "each size is flushed as it completes; a FILE that\n"
             "already holds results is refused (exit 2)"},
    {"overwrite", 0, NULL, FLAG(overwrite), .group = G_OUTPUT,
     .help = "replace the results already in --out FILE"},
    {"quiet", 'q', NULL, FLAG(quiet), .group = G_OUTPUT, .help = "no progress on stderr, no table on stdout"},
    {"verbose", 'v', NULL, FLAG(verbose), .group = G_OUTPUT, .help = "diagnostics on stderr"},
    {"launch-id", 0, "N", COUNT(launch_id, 0), .group = G_OUTPUT,
     .help = "index of this launch among repeats of one configuration"},

    {"launch", 'L', "local", .kind = "choice", .parse = opt_launch, .choices = "local", .group = G_LAUNCH,
     .help = "start the ranks on this host (use with -n)"},
    {"np", 'n', "N", .kind = "count", .parse = opt_int_count, F(nprocs), .min = 1, .max = 1024, .unit = "ranks",
     .def = "2", .group = G_LAUNCH, .help = "number of ranks for --launch local (default %D)"},
    {"rendezvous", 0, "H:P", TEXT(rendezvous), .group = G_LAUNCH,
     .help = "meet at this address (rank 0 listens on port P)"},
    {"rendezvous-dir", 0, "DIR", TEXT(rendezvous_dir), .group = G_LAUNCH,
     .help = "directory shared by all ranks for the rendezvous file\n"
             "(default: current directory)"},
    {"timeout", 'T', "SEC", .kind = "seconds", .parse = opt_seconds, F(timeout_s), .def = "60", .group = G_LAUNCH,
     .help = "give up when a peer does not answer for SEC seconds\n"
             "(default %D); results measured so far are kept"},

    {"placement", 0, "POLICY", TEXT(placement), .def = "auto", .group = G_PLACEMENT,
     .help = "%D (default), same-core, same-l2, same-l3, same-package,\n"
             "cross-numa, cross-package, cross-node, none (no binding:\n"
             "the launcher's or the OS's; --scan --serial still pins\n"
             "the measuring pair)"},
    {"cpus", 0, "LIST", TEXT(cpus), .group = G_PLACEMENT, .help = "explicit processing unit per rank, e.g. 0,1"},
    {"topology", 0, NULL, ACTION(VS_ACTION_TOPOLOGY), .group = G_PLACEMENT,
     .help = "print what hwloc sees and which placements are possible"},
    {"cleanup", 0, NULL, ACTION(VS_ACTION_CLEANUP), .group = G_PLACEMENT,
     .help = "remove the shared-memory segments of runs that died\n"
             "(every run also does this as it starts)"},

    {"help", 'h', NULL, ACTION(VS_ACTION_HELP), .group = -1, .help = "this text; with --json, the options as JSON"},
    {"version", 0, NULL, ACTION(VS_ACTION_VERSION), .group = -1, .help = "the version and the revision built"},
};

enum { N_OPTS = sizeof vs_option_table / sizeof vs_option_table[0], OPT_VAL_BASE = 1000 };
const int vs_option_count = N_OPTS;
static const vs_optdef_t *const table = vs_option_table;

static int opt_index(const char *name)
{
    for (int i = 0; i < N_OPTS; i++)
        if (!strcmp(table[i].name, name))
            return i;
    return -1;
}

/* getopt's value of option i, and back. */
static int opt_val(int i) { return table[i].short_name ? table[i].short_name : OPT_VAL_BASE + i; }

static int opt_of_val(int c)
{
    if (c >= OPT_VAL_BASE && c < OPT_VAL_BASE + N_OPTS)
        return c - OPT_VAL_BASE;
    for (int i = 0; i < N_OPTS; i++)
        if (table[i].short_name && table[i].short_name == c)
            return i;
    return -1;
}

static void getopt_tables(struct option *longs, char *shorts)
{
    char *s = shorts;
    *s++ = ':';
    for (int i = 0; i < N_OPTS; i++) {
        longs[i] = (struct option){table[i].name, table[i].value ? required_argument : no_argument, 0, opt_val(i)};
        if (table[i].short_name) {
            *s++ = table[i].short_name;
            if (table[i].value)
                *s++ = ':';
        }
    }
    longs[N_OPTS] = (struct option){0, 0, 0, 0};
    *s = '\0';
}

/* ---- rules between options, in the order they are checked (after every
 * option is read, for a run only).  given[i]: option i was on the command line. */

typedef int (*rule_fn)(vs_options_t *o, const unsigned char *given, char *err, size_t errlen);

static int given_opt(const unsigned char *given, const char *name) { return given[opt_index(name)]; }

/* Apply option name's value as if given (a default decided by other options). */
static int apply(vs_options_t *o, const char *name, const char *value, char *err, size_t errlen)
{
    const vs_optdef_t *d = &table[opt_index(name)];
    return d->parse(o, d, value, err, errlen);
}

static int transport_is_given(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (!o->transport) {
        snprintf(err, errlen, "--transport NAME is required (see --list)");
        return -EINVAL;
    }
    return 0;
}

static int pattern_has_variant(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    const vs_pattern_t *pat = vs_pattern_find(o->pattern);
    if (!pat) {
        snprintf(err, errlen, "unknown pattern '%s' (see --help for the list)", o->pattern);
        return -EINVAL;
    }
    if (!o->variant)
        o->variant = pat->variants[0];
    for (int k = 0; pat->variants[k]; k++)
        if (!strcmp(pat->variants[k], o->variant))
            return 0;
    snprintf(err, errlen, "pattern '%s' has no variant '%s'", pat->name, o->variant);
    return -EINVAL;
}

static int pattern_options_fit_pattern(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    return vs_pattern_params_check(o, err, errlen);
}

static int pair_options_need_scan(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if ((o->serial || o->shuffle_pairs || o->passes) && !o->scan) {
        snprintf(err, errlen, "%s goes with --scan (the all-pairs scan)",
                 o->serial ? "--serial" : o->passes ? "--passes" : "--shuffle-pairs");
        return -EINVAL;
    }
    return 0;
}

/* The scan measures fixed counts of ping-pongs; what it does not take, and its own defaults. */
static int scan_is_fixed_pingpong(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    static const struct {
        const char *name, *value;
    } scan_defaults[] = {
        {"sizes", "8,1M"}, {"iterations", "50"}, {"iterations-large", "10"}, {"warmup", "10"}, {"warmup-large", "2"},
    };
    if (!o->scan)
        return 0;
    const vs_method_t *m = &o->method;
    const char *no = strcmp(o->pattern, "pingpong") ? "a pattern other than pingpong"
                     : o->validate                  ? "--validate"
                     : m->precision > 0             ? "--precision"
                     : m->adaptive                  ? "--adaptive"
                     : m->order != VS_ORDER_SEQUENTIAL ? "--order other than sequential"
                                                       : NULL;
    if (no) {
        snprintf(err, errlen, "--scan measures ping-pong round trips of each pair at fixed counts; it does not "
                              "take %s", no);
        return -EINVAL;
    }
    int rc = given_opt(given, "passes") ? 0 : apply(o, "passes", table[opt_index("passes")].def, err, errlen);
    for (size_t i = 0; !rc && i < sizeof scan_defaults / sizeof scan_defaults[0]; i++)
        if (!given_opt(given, scan_defaults[i].name))
            rc = apply(o, scan_defaults[i].name, scan_defaults[i].value, err, errlen);
    return rc;
}

static int np_needs_launch_local(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    if (!o->launch_local && given_opt(given, "np")) {
        /* -n without --launch local would be silently ignored */
        snprintf(err, errlen, "-n/--np is for --launch local; under mpirun/mpiexec/srun give the rank count to the launcher");
        return -EINVAL;
    }
    return 0;
}

static int rendezvous_is_host_port(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    char host[256];
    int port;
    if (o->rendezvous && vs_launch_addr_parse(o->rendezvous, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "--rendezvous '%s': expected HOST:PORT with a port from 1 to 65535 "
                 "(e.g. node01:47000)", o->rendezvous);
        return -EINVAL;
    }
    return 0;
}

static int rendezvous_not_with_local(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (o->launch_local && o->rendezvous) {
        snprintf(err, errlen, "--rendezvous cannot be combined with --launch local");
        return -EINVAL;
    }
    return 0;
}

static int out_names_a_file(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (o->out && !*o->out) {
        snprintf(err, errlen, "--out needs a file name");
        return -EINVAL;
    }
    return 0;
}

static int overwrite_needs_out(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (o->overwrite && !o->out) {
        snprintf(err, errlen, "--overwrite applies to the file of --out FILE, and no --out was given");
        return -EINVAL;
    }
    return 0;
}

static int sizes_parse(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (!o->sizes_spec)
        o->sizes_spec = !strcmp(o->pattern, "atomic") ? "8" : table[opt_index("sizes")].def;
    return vs_sizes_parse(o->sizes_spec, &o->sizes, err, errlen);
}

/* An atomic works on one 64-bit word: its only size is 8 bytes (the default
 * when --sizes is not given). */
static int atomic_is_one_word(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    if (strcmp(o->pattern, "atomic"))
        return 0;
    if (o->method.perturb) {
        /* it would add 8 - K and 8 + K, sizes no atomic has */
        snprintf(err, errlen, "the atomic pattern works on one 64-bit word (8 bytes): --perturb would measure "
                              "other sizes; leave it out");
        return -EINVAL;
    }
    for (size_t i = 0; i < o->sizes.n; i++)
        if (o->sizes.v[i] != 8) {
            snprintf(err, errlen, "the atomic pattern works on one 64-bit word: --sizes 8 (the default for it), "
                                  "not %zu", o->sizes.v[i]);
            return -EINVAL;
        }
    return 0;
}

static int method_is_consistent(vs_options_t *o, const unsigned char *given, char *err, size_t errlen)
{
    (void)given;
    return vs_method_check(o, err, errlen);
}

static const rule_fn rules[] = {
    transport_is_given,
    pattern_has_variant,
    pattern_options_fit_pattern,
    pair_options_need_scan,
    scan_is_fixed_pingpong,
    np_needs_launch_local,
    rendezvous_is_host_port,
    rendezvous_not_with_local,
    out_names_a_file,
    overwrite_needs_out,
    sizes_parse,
    atomic_is_one_word,
    method_is_consistent,
};

/* ---- the parse */

/* Every option but --transport-opt (a list) is given once: a second value
 * would silently win over the first. */
static int once(int i, unsigned char *given, char *err, size_t errlen)
{
    if (table[i].repeatable)
        return 0;
    if (given[i]) {
        snprintf(err, errlen, "--%s is given twice; give it once (only --transport-opt repeats)", table[i].name);
        return -EINVAL;
    }
    given[i] = 1;
    return 0;
}

static int apply_defaults(vs_options_t *o, char *err, size_t errlen)
{
    for (int i = 0; i < N_OPTS; i++)
        if (table[i].def && !table[i].def_later) {
            int rc = table[i].parse(o, &table[i], table[i].def, err, errlen);
            if (rc)
                return rc;
        }
    return 0;
}

int vs_options_parse(int argc, char **argv, vs_options_t *o, char *err, size_t errlen)
{
    unsigned char given[N_OPTS] = {0};
    struct option longs[N_OPTS + 1];
    char shorts[2 + 2 * N_OPTS];
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    vs_method_defaults(&o->method);
    int c, rc = apply_defaults(o, err, errlen);
    if (rc)
        return rc;
    getopt_tables(longs, shorts);
    optind = 0; /* 0, not 1: glibc then also forgets where it was in the previous argv */
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        int i = opt_of_val(c);
        if (c == ':') {
            snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
            return -EINVAL;
        }
        if (i < 0) {
            snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
            return -EINVAL;
        }
        if ((rc = once(i, given, err, errlen)) || (rc = table[i].parse(o, &table[i], optarg, err, errlen)))
            break;
        if (o->action == VS_ACTION_HELP) {
            /* --help [--json]: the rest of the line is not read */
            for (int k = optind; k < argc; k++)
                o->json |= !strcmp(argv[k], "--json");
            return 0;
        }
        if (o->action == VS_ACTION_VERSION)
            return 0;
    }
    if (rc)
        return rc;
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -EINVAL;
    }
    if (o->json && o->action != VS_ACTION_LIST) {
        snprintf(err, errlen, "--json goes with --list (versus-run --list --json) or --help");
        return -EINVAL;
    }
    if (o->action != VS_ACTION_RUN)
        return 0;
    for (size_t k = 0; !rc && k < sizeof rules / sizeof rules[0]; k++)
        rc = rules[k](o, given, err, errlen);
    return rc;
}

void vs_options_free(vs_options_t *o)
{
    for (size_t i = 0; i < o->n_topts; i++)
        free(o->topt_storage[i]);
    vs_sizes_free(&o->sizes);
}
