#include "options.h"

#include "launch.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "pattern_params.h"

void vs_options_usage(FILE *out)
{
    fputs(
"Usage: versus-run --transport NAME [options]\n"
"       versus-run --list [--json] | --topology | --help | --version\n"
"\n"
"Measures point-to-point communication between two processes the same way over\n"
"every transport, writes raw samples as JSON Lines and prints an OSU-style table.\n"
"\n"
"Transport\n"
"  -t, --transport NAME      transport module: openmpi, mpich, ucx, ofi, shm, tcp\n"
"                            (see --list for the modules found and their versions)\n"
"  -o, --transport-opt K=V   option for the module, repeatable (e.g. provider=tcp,\n"
"                            mode=block); an unknown key is an error\n"
"      --list                list transport modules, whether they load, library version\n"
"      --list --json         the same as JSON, with what each module declares: its\n"
"                            options, launcher, environment prefixes, memory\n"
"\n"
"Pattern\n"
"  -p, --pattern NAME        pattern to run (default pingpong); see below\n"
"  -V, --variant NAME        pattern variant: blocking (default) or nonblocking\n"
"  -s, --sizes SPEC          message sizes in bytes (default 0:4M); comma-separated items:\n"
"                              N            one size, e.g. 8, 1K, 4M (K/M/G are binary)\n"
"                              MIN:MAX      powers of two in [MIN,MAX], plus 0 if MIN is 0\n"
"                              MIN:MAX:+S   every S bytes from MIN to MAX, e.g. 4:40000:+4\n"
"  -i, --iterations N        samples per size (default 1000)\n"
"      --iterations-large N  samples per size from --large-from on (default 100)\n"
"  -w, --warmup N            unrecorded warm-up round trips per size (default 100)\n"
"      --warmup-large N      warm-up round trips from --large-from on (default 10)\n"
"      --large-from BYTES    where large-message counts begin (default 64K)\n"
"  -b, --batch K|auto        round trips per sample; auto (default) picks K per size so\n"
"                            the clock's cost stays under 1 % of a sample\n"
"      --window W            stream, bistream: messages per window (default 64)\n"
"      --progress MODE       doublebuffer: none (default; no library call while summing)\n"
"                            or poll=N (a test call every N elements summed)\n"
"      --buffers MODE        pingpong: separate (default; a send and a receive buffer per\n"
"                            rank, as OSU and IMB) or shared (one buffer per rank for\n"
"                            both, NetPIPE's default: half the memory footprint)\n"
"      --validate            check every payload byte in both directions before and\n"
"                            after each size (outside the timed loop); a mismatch\n"
"                            marks the size invalid and the run exits 1\n"
"\n"
"Method (docs/methodology.md)\n"
"      --perturb K           also measure every size at -K and +K bytes (NetPIPE style)\n"
"      --adaptive            after the schedule, add sizes between neighbours where the\n"
"                            midpoint departs from their straight line, pass by pass\n"
"      --adaptive-tol P      departure that asks for refinement, % (default 5)\n"
"      --adaptive-min-gap G  closest spacing: bytes (e.g. 8) or % of the size (e.g. 1%);\n"
"                            default the larger of 8 B and 1 %\n"
"      --adaptive-max-sizes N  at most N sizes in the whole run (default 200)\n"
"      --order ORDER         sequential (default: each size in one go, ascending),\n"
"                            shuffled (seeded random order), interleaved (every size\n"
"                            in R rounds of a few samples each)\n"
"      --rounds R            rounds for interleaved (default 10) or shuffled (default 1)\n"
"      --seed N              seed of the shuffled order (default: drawn, recorded)\n"
"      --precision P         measure each size until the 95 % confidence interval of its\n"
"                            median is within P % of it (instead of --iterations)\n"
"      --min-iterations N    with --precision: samples before stopping (default 100)\n"
"      --max-iterations N    with --precision: most samples per size (default 100000)\n"
"      --max-seconds-per-size S  with --precision: measuring time budget (default 10)\n"
"      --clock CLOCK         monotonic (default; CLOCK_MONOTONIC) or tsc (the invariant\n"
"                            time-stamp counter, calibrated)\n"
"\n"
"More than two ranks (docs/patterns.md)\n"
"  With N > 2 ranks (N even) pingpong, stream and bistream run on every pair at\n"
"  once, rank i with rank i + N/2 (osu_mbw_mr's pairing): a size record per pair\n"
"  and an aggregate record (bandwidth, message rate) per size.\n"
"      --scan                all-pairs scan instead: N-1 rounds of N/2 concurrent\n"
"                            ping-pongs, every pair once, a \"pair\" record per pair\n"
"                            and size (defaults: --sizes 8,1M --iterations 50\n"
"                            --iterations-large 10 --warmup 10 --warmup-large 2)\n"
"      --serial              with --scan: one pair at a time, the others waiting\n"
"      --shuffle-pairs       with --scan: shuffle the schedule with --seed\n"
"      --passes K            with --scan: run the whole schedule K times (default 2): a\n"
"                            pair slow in one pass only is noise, not a bad link\n"
"\n"
"Output\n"
"  -O, --out FILE            write results as JSON Lines (docs/results-schema.md);\n"
"                            each size is flushed as it completes; a FILE that\n"
"                            already holds results is refused (exit 2)\n"
"      --overwrite           replace the results already in --out FILE\n"
"  -q, --quiet               no progress on stderr, no table on stdout\n"
"  -v, --verbose             diagnostics on stderr\n"
"      --launch-id N         index of this launch among repeats of one configuration\n"
"\n"
"Launching (transports that are not MPI)\n"
"  -L, --launch local        start the ranks on this host (use with -n)\n"
"  -n, --np N                number of ranks for --launch local (default 2)\n"
"      --rendezvous H:P      meet at this address (rank 0 listens on port P)\n"
"      --rendezvous-dir DIR  directory shared by all ranks for the rendezvous file\n"
"                            (default: current directory)\n"
"  -T, --timeout SEC         give up when a peer does not answer for SEC seconds\n"
"                            (default 60); results measured so far are kept\n"
"  Under mpirun/mpiexec/srun the rank is read from the launcher's environment.\n"
"  The openmpi and mpich transports are started by their own launcher:\n"
"    mpirun.openmpi -np 2 versus-run --transport openmpi\n"
"    mpiexec.mpich -n 2 versus-run --transport mpich\n"
"\n"
"Placement\n"
"      --placement POLICY    auto (default), same-core, same-l2, same-l3, same-package,\n"
"                            cross-numa, cross-package, cross-node, none (no binding:\n"
"                            the launcher's or the OS's; --scan --serial still pins\n"
"                            the measuring pair)\n"
"      --cpus LIST           explicit processing unit per rank, e.g. 0,1\n"
"      --topology            print what hwloc sees and which placements are possible\n"
"      --cleanup             remove the shared-memory segments of runs that died\n"
"                            (every run also does this as it starts)\n"
"\n"
"Environment (the manual page versus-run(1) lists every variable read)\n"
"  VERSUS_MODULE_PATH DIRS   colon-separated directories searched for transport modules\n"
"                            before the installed ones (an installation, even a moved\n"
"                            one, finds its own without it)\n"
"  The rank and size come from the launcher: VERSUS_RANK and VERSUS_SIZE (--launch\n"
"  local, or set by hand), OMPI_COMM_WORLD_*, PMI_* (hydra), SLURM_* (srun).\n"
"  Variables named VERSUS_* or with the transport's prefixes (--list --json) are\n"
"  written into the run record.\n"
"\n"
"Exit status: 0 ok, 1 run failed, 2 bad usage or input, 77 transport cannot run here.\n",
        out);
    fputs("\nPatterns\n", out);
    for (const vs_pattern_t *const *p = vs_patterns; *p; p++)
        fprintf(out, "  %-12s %s\n", (*p)->name, (*p)->summary);
}

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

enum {
    OPT_LIST = 1000, OPT_JSON, OPT_TOPOLOGY, OPT_ITER_LARGE, OPT_WARM_LARGE, OPT_LARGE_FROM, OPT_RDV,
    OPT_RDV_DIR, OPT_PLACEMENT, OPT_CPUS, OPT_VERSION, OPT_LAUNCH_ID,
    OPT_WINDOW, OPT_PROGRESS, OPT_VALIDATE, OPT_BUFFERS, OPT_SCAN, OPT_SERIAL, OPT_SHUFFLE_PAIRS, OPT_PASSES, OPT_CLEANUP, OPT_OVERWRITE,
};

static const struct option long_opts[] = {
    {"transport", required_argument, 0, 't'},
    {"transport-opt", required_argument, 0, 'o'},
    {"list", no_argument, 0, OPT_LIST},
    {"json", no_argument, 0, OPT_JSON},
    {"pattern", required_argument, 0, 'p'},
    {"variant", required_argument, 0, 'V'},
    {"sizes", required_argument, 0, 's'},
    {"iterations", required_argument, 0, 'i'},
    {"iterations-large", required_argument, 0, OPT_ITER_LARGE},
    {"warmup", required_argument, 0, 'w'},
    {"warmup-large", required_argument, 0, OPT_WARM_LARGE},
    {"large-from", required_argument, 0, OPT_LARGE_FROM},
    {"batch", required_argument, 0, 'b'},
    {"window", required_argument, 0, OPT_WINDOW},
    {"progress", required_argument, 0, OPT_PROGRESS},
    {"validate", no_argument, 0, OPT_VALIDATE},
    {"buffers", required_argument, 0, OPT_BUFFERS},
    {"scan", no_argument, 0, OPT_SCAN},
    {"serial", no_argument, 0, OPT_SERIAL},
    {"shuffle-pairs", no_argument, 0, OPT_SHUFFLE_PAIRS},
    {"passes", required_argument, 0, OPT_PASSES},
    {"out", required_argument, 0, 'O'},
    {"overwrite", no_argument, 0, OPT_OVERWRITE},
    {"quiet", no_argument, 0, 'q'},
    {"verbose", no_argument, 0, 'v'},
    {"launch-id", required_argument, 0, OPT_LAUNCH_ID},
    {"launch", required_argument, 0, 'L'},
    {"np", required_argument, 0, 'n'},
    {"rendezvous", required_argument, 0, OPT_RDV},
    {"rendezvous-dir", required_argument, 0, OPT_RDV_DIR},
    {"timeout", required_argument, 0, 'T'},
    {"placement", required_argument, 0, OPT_PLACEMENT},
    {"cpus", required_argument, 0, OPT_CPUS},
    {"topology", no_argument, 0, OPT_TOPOLOGY},
    VS_METHOD_LONG_OPTS,
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION},
    {"cleanup", no_argument, 0, OPT_CLEANUP},
    {0, 0, 0, 0},
};

/* An option's name as the user would write it, for messages. */
static void option_name(int c, char *buf, size_t len)
{
    for (const struct option *l = long_opts; l->name; l++)
        if (l->val == c) {
            snprintf(buf, len, "--%s", l->name);
            return;
        }
    snprintf(buf, len, "-%c", c);
}

/* Every option but --transport-opt (a list) is given once: a second value
 * would silently win over the first. */
static int once(int c, int *seen, int *n_seen, char *err, size_t errlen)
{
    if (c == 'o' || c == ':' || c == '?')
        return 0;
    for (int i = 0; i < *n_seen; i++)
        if (seen[i] == c) {
            char name[64];
            option_name(c, name, sizeof name);
            snprintf(err, errlen, "%s is given twice; give it once (only --transport-opt repeats)", name);
            return -EINVAL;
        }
    if (*n_seen < 128)
        seen[(*n_seen)++] = c;
    return 0;
}

int vs_options_parse(int argc, char **argv, vs_options_t *o, char *err, size_t errlen)
{
    int seen[128], n_seen = 0;
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    o->pattern = "pingpong";
    o->sizes_spec = NULL; /* 0:4M, or 8,1M for --scan */
    o->iterations = 1000;
    o->iterations_large = 100;
    o->warmup = 100;
    o->warmup_large = 10;
    o->large_from = 64 * 1024;
    o->timeout_s = 60;
    o->nprocs = 2;
    o->placement = "auto";
    vs_method_defaults(&o->method);
    long v;
    int c, rc = 0, counts_set = 0;
    optind = 0; /* 0, not 1: glibc then also forgets where it was in the previous argv */
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":t:o:p:V:s:i:w:b:O:qvL:n:T:h", long_opts, NULL)) != -1) {
        if ((rc = once(c, seen, &n_seen, err, errlen)))
            break;
        switch (c) {
        case 't': o->transport = optarg; break;
        case 'o': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                snprintf(err, errlen, "--transport-opt expects KEY=VALUE, got '%s'", optarg);
                rc = -EINVAL;
                break;
            }
            if (o->n_topts == VS_MAX_TOPTS) {
                snprintf(err, errlen, "too many --transport-opt (at most %d)", VS_MAX_TOPTS);
                rc = -EINVAL;
                break;
            }
            char *kv = strdup(optarg);
            if (!kv)
                return -ENOMEM;
            kv[eq - optarg] = '\0';
            o->topt_storage[o->n_topts] = kv;
            o->topts[o->n_topts].key = kv;
            o->topts[o->n_topts].value = kv + (eq - optarg) + 1;
            o->n_topts++;
            break;
        }
        case OPT_LIST: o->action = VS_ACTION_LIST; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_TOPOLOGY: o->action = VS_ACTION_TOPOLOGY; break;
        case 'p': o->pattern = optarg; break;
        case 'V': o->variant = optarg; break;
        case 's': o->sizes_spec = optarg; break;
        case 'i': rc = parse_count("--iterations", optarg, 1, &o->iterations, err, errlen); counts_set |= 1; break;
        case OPT_ITER_LARGE:
            rc = parse_count("--iterations-large", optarg, 1, &o->iterations_large, err, errlen);
            counts_set |= 2;
            break;
        case 'w': rc = parse_count("--warmup", optarg, 0, &o->warmup, err, errlen); counts_set |= 4; break;
        case OPT_WARM_LARGE:
            rc = parse_count("--warmup-large", optarg, 0, &o->warmup_large, err, errlen);
            counts_set |= 8;
            break;
        case OPT_LARGE_FROM:
            if (vs_bytes_parse(optarg, &o->large_from)) {
                snprintf(err, errlen, "--large-from expects a size such as 64K, got '%s'", optarg);
                rc = -EINVAL;
            }
            break;
        case 'b':
            if (!strcmp(optarg, "auto"))
                o->batch = 0;
            else if (!(rc = parse_count("--batch", optarg, 1, &v, err, errlen)))
                o->batch = v;
            break;
        case OPT_WINDOW:
            if (!(rc = parse_count("--window", optarg, 1, &o->window, err, errlen)) && o->window > VS_MAX_WINDOW) {
                snprintf(err, errlen, "--window %ld is more than %d messages", o->window, VS_MAX_WINDOW);
                rc = -EINVAL;
            }
            break;
        case OPT_PROGRESS: rc = vs_progress_parse(optarg, o, err, errlen); break;
        case OPT_VALIDATE: o->validate = 1; break;
        case OPT_BUFFERS: rc = vs_buffers_parse(optarg, o, err, errlen); break;
        case OPT_SCAN: o->scan = 1; break;
        case OPT_SERIAL: o->serial = 1; break;
        case OPT_SHUFFLE_PAIRS: o->shuffle_pairs = 1; break;
        case OPT_PASSES: rc = parse_count("--passes", optarg, 1, &o->passes, err, errlen); break;
        case 'O': o->out = optarg; break;
        case OPT_OVERWRITE: o->overwrite = 1; break;
        case 'q': o->quiet = 1; break;
        case 'v': o->verbose = 1; break;
        case OPT_LAUNCH_ID: rc = parse_count("--launch-id", optarg, 0, &o->launch_id, err, errlen); break;
        case 'L':
            if (strcmp(optarg, "local")) {
                snprintf(err, errlen, "--launch supports 'local' only (got '%s'); under mpirun, mpiexec or srun no --launch is needed", optarg);
                rc = -EINVAL;
            }
            o->launch_local = 1;
            break;
        case 'n':
            if (!(rc = parse_count("--np", optarg, 1, &v, err, errlen))) {
                if (v > 1024) {
                    snprintf(err, errlen, "--np %ld is more than 1024 ranks", v);
                    rc = -EINVAL;
                }
                o->nprocs = (int)v;
                o->nprocs_set = 1;
            }
            break;
        case OPT_RDV: o->rendezvous = optarg; break;
        case OPT_RDV_DIR: o->rendezvous_dir = optarg; break;
        case 'T': {
            char *end;
            errno = 0;
            double t = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(t > 0) || t > 86400) {
                snprintf(err, errlen, "--timeout expects seconds in (0, 86400], got '%s'", optarg);
                rc = -EINVAL;
            }
            o->timeout_s = t;
            break;
        }
        case OPT_PLACEMENT: o->placement = optarg; break;
        case OPT_CPUS: o->cpus = optarg; break;
        case VS_OPT_METHOD_FIRST ... VS_OPT_METHOD_LAST: rc = vs_method_parse(&o->method, c, optarg, err, errlen); break;
        case 'h': o->action = VS_ACTION_HELP; return 0;
        case OPT_VERSION: o->action = VS_ACTION_VERSION; return 0;
        case OPT_CLEANUP: o->action = VS_ACTION_CLEANUP; break;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
            rc = -EINVAL;
            break;
        default:
            snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
            rc = -EINVAL;
        }
    }
    if (rc)
        return rc;
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -EINVAL;
    }
    if (o->json && o->action != VS_ACTION_LIST) {
        snprintf(err, errlen, "--json goes with --list (versus-run --list --json)");
        return -EINVAL;
    }
    if (o->action != VS_ACTION_RUN)
        return 0;
    if (!o->transport) {
        snprintf(err, errlen, "--transport NAME is required (see --list)");
        return -EINVAL;
    }
    const vs_pattern_t *pat = vs_pattern_find(o->pattern);
    if (!pat) {
        snprintf(err, errlen, "unknown pattern '%s' (see --help for the list)", o->pattern);
        return -EINVAL;
    }
    if (!o->variant)
        o->variant = pat->variants[0];
    int ok = 0;
    for (int k = 0; pat->variants[k]; k++)
        ok |= !strcmp(pat->variants[k], o->variant);
    if (!ok) {
        snprintf(err, errlen, "pattern '%s' has no variant '%s'", pat->name, o->variant);
        return -EINVAL;
    }
    if ((rc = vs_pattern_params_check(o, err, errlen)))
        return rc;
    if ((o->serial || o->shuffle_pairs || o->passes) && !o->scan) {
        snprintf(err, errlen, "%s goes with --scan (the all-pairs scan)",
                 o->serial ? "--serial" : o->passes ? "--passes" : "--shuffle-pairs");
        return -EINVAL;
    }
    if (o->scan) {
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
        if (!o->sizes_spec)
            o->sizes_spec = "8,1M";
        if (!o->passes)
            o->passes = 2;
        o->iterations = counts_set & 1 ? o->iterations : 50;
        o->iterations_large = counts_set & 2 ? o->iterations_large : 10;
        o->warmup = counts_set & 4 ? o->warmup : 10;
        o->warmup_large = counts_set & 8 ? o->warmup_large : 2;
    }
    if (!o->sizes_spec)
        o->sizes_spec = "0:4M";
    if (!o->launch_local && o->nprocs_set) {
        /* -n without --launch local would be silently ignored */
        snprintf(err, errlen, "-n/--np is for --launch local; under mpirun/mpiexec/srun give the rank count to the launcher");
        return -EINVAL;
    }
    if (o->rendezvous) {
        char host[256];
        int port;
        if (vs_launch_addr_parse(o->rendezvous, host, sizeof host, &port) < 0) {
            snprintf(err, errlen, "--rendezvous '%s': expected HOST:PORT with a port from 1 to 65535 "
                     "(e.g. node01:47000)", o->rendezvous);
            return -EINVAL;
        }
    }
    if (o->launch_local && o->rendezvous) {
        snprintf(err, errlen, "--rendezvous cannot be combined with --launch local");
        return -EINVAL;
    }
    if (o->out && !*o->out) {
        snprintf(err, errlen, "--out needs a file name");
        return -EINVAL;
    }
    if (o->overwrite && !o->out) {
        snprintf(err, errlen, "--overwrite applies to the file of --out FILE, and no --out was given");
        return -EINVAL;
    }
    if ((rc = vs_sizes_parse(o->sizes_spec, &o->sizes, err, errlen)))
        return rc;
    return vs_method_check(o, err, errlen);
}

void vs_options_free(vs_options_t *o)
{
    for (size_t i = 0; i < o->n_topts; i++)
        free(o->topt_storage[i]);
    vs_sizes_free(&o->sizes);
}
