/* versus-run: load one transport, meet the peers, run one pattern over a
 * size schedule, write raw samples as JSON Lines and print a table. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <versus/transport.h>

#include "json.h"
#include "launch.h"
#include "loader.h"
#include "options.h"
#include "pattern.h"
#include "pattern_params.h"
#include "drift.h"
#include "hostload.h"
#include "placement.h"
#include "topo.h"
#include "provenance.h"
#include "scan.h"
#include "record.h"
#include "table.h"
#include "timer.h"
#include "topts.h"
#include "version.h"
#include "sweep.h"
#include "watchdog.h"
#include "writer.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_SKIP = 77 };

typedef struct core {
    const vs_options_t *opt;
    const char *transport;
    int rank;
    char last_error[1024];
} core_t;

static void host_error(void *c, const char *fmt, ...)
{
    core_t *core = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(core->last_error, sizeof core->last_error, fmt, ap);
    va_end(ap);
}

static void host_debug(void *c, const char *fmt, ...)
{
    core_t *core = c;
    if (!core->opt->verbose)
        return;
    /* one write per line: the ranks share stderr, and three writes interleave with theirs */
    char line[1024];
    int n = snprintf(line, sizeof line, "versus-run: rank %d: %s: ", core->rank, core->transport);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof line - 1)
        vsnprintf(line + n, sizeof line - 1 - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

static int exit_code_for(int rc)
{
    switch (rc) {
    case 0: return EXIT_OK;
    case -EINVAL: return EXIT_USAGE;
    case -ENOTSUP: case -ENODEV: return EXIT_SKIP;
    default: return EXIT_FAIL;
    }
}

/* Print why a transport call failed: the module's words, else errno's. */
static int report(core_t *core, int rc, const char *what)
{
    char who[32] = "";
    if (core->rank >= 0)
        snprintf(who, sizeof who, "rank %d: ", core->rank);
    fprintf(stderr, "versus-run: %s%s: %s failed: %s\n", who, core->transport, what,
            core->last_error[0] ? core->last_error : strerror(-rc));
    core->last_error[0] = '\0';
    return exit_code_for(rc);
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "versus-run: %s\nTry 'versus-run --help'.\n", msg);
    return EXIT_USAGE;
}

/* One run's state, from loading the module to tearing it down.  It lives as
 * long as the process: the watchdog thread reads it until the very end. */
typedef struct session {
    const vs_options_t *o;
    core_t core;
    vs_host_t host;
    vs_module_t mod;
    vs_launch_env_t lenv;
    vs_watchdog_t wd;
    vs_opt_value_t *topts;  /* the module's option values, one per row of its table */
    vs_transport_t *t;
    vs_bootstrap_t *bs;
    vs_writer_t *writer;
    int writer_handed; /* the watchdog may end it (wd.writer) */
    vs_placement_t *pl;
    vs_table_t table;
    vs_run_t r;
    vs_transport_info_t info;
    char *hosts;
    vs_pairing_t pairing;   /* more than two ranks: who measures with whom */
    int *partner;           /* every rank's partner (fixed pairing) */
    vs_scan_slowest_t *slow; /* rank 0 after a scan: the slowest pairs per size */
    double drift_start;
    vs_hostload_t load;     /* rank 0: the host's load besides the run */
    char warning[1024];     /* for the run record, "" when none */
} session_t;

enum { HOST_LEN = 256 };

/* Rank 0: follow the load on the CPUs its host's ranks run on (hostload.h). */
static void hostload_start(session_t *s)
{
    vs_run_t *r = &s->r;
    r->load = NULL;
    r->load_others = r->load_steal = r->load_waited = NAN;
    if (r->rank != 0 || !s->pl || !s->hosts)
        return;
    int cpus[VS_HOSTLOAD_MAX], pids[VS_HOSTLOAD_MAX], nc = 0, np = 0;
    for (int k = 0; k < r->size && np < VS_HOSTLOAD_MAX; k++) {
        if (strcmp(s->hosts + (size_t)k * HOST_LEN, s->hosts) != 0)
            continue;
        const vs_rank_place_t *p = &s->pl->ranks[k];
        pids[np++] = p->pid;
        cpu_set_t set;
        if (vs_cpuset_parse(p->cpus_after, &set) < 0)
            continue;
        for (int c = 0; c < CPU_SETSIZE && nc < VS_HOSTLOAD_MAX; c++)
            if (CPU_ISSET(c, &set))
                cpus[nc++] = c;
    }
    if (vs_hostload_init(&s->load, cpus, nc, pids, np) == 0)
        r->load = &s->load;
}

/* The one place a transport is opened: its options were checked and parsed
 * against the module's table (vs_topts_parse) before any rank started. */
static int open_transport(session_t *s)
{
    return s->mod.ops->open(&s->host, s->mod.ops->n_options ? s->topts : NULL, &s->t);
}

/* Phase 1, load: the module, its options checked; with --launch local the
 * ranks are started here (the launcher's own process returns 1 with *code). */
static int load(session_t *s, int *code)
{
    const vs_options_t *o = s->o;
    char err[1024] = "";
    if (vs_placement_check_args(&(vs_placement_req_t){o->placement, o->cpus}, err, sizeof err))
        return *code = usage_error(err), 1;
    if (vs_module_load(o->transport, &s->mod, err, sizeof err)) {
        fprintf(stderr, "versus-run: %s\n", err);
        return *code = EXIT_USAGE, 1;
    }
    if (!(s->topts = calloc(s->mod.ops->n_options + 1, sizeof *s->topts)))
        return *code = report(&s->core, -ENOMEM, "options"), 1;
    if (vs_topts_parse(s->mod.ops, o->topts, o->n_topts, s->topts, err, sizeof err))
        return *code = usage_error(err), 1;
    /* a pattern the module cannot run (one-sided operations): a skip, before any rank starts */
    if (vs_pattern_refusal(vs_pattern_find(o->pattern), s->mod.ops, o->transport, err, sizeof err)) {
        fprintf(stderr, "versus-run: %s\n", err);
        return *code = EXIT_SKIP, 1;
    }
    if (o->launch_local && s->mod.ops->bootstrap) {
        /* started by its own launcher: opening it here makes it say which */
        int rc = open_transport(s);
        if (!rc) {
            s->mod.ops->close(s->t);
            s->t = NULL;
            return *code = usage_error("this transport is started by its MPI launcher, not by --launch local"), 1;
        }
        return *code = report(&s->core, rc, "--launch local"), 1;
    }
    if (o->launch_local && vs_launch_local_fits(o->nprocs, err, sizeof err))
        return *code = usage_error(err), 1;
    if (o->launch_local) {
        int rc = vs_launch_local(o->nprocs, o->timeout_s, &s->lenv, code);
        if (rc == 1)
            return 1; /* the launcher's own process: the ranks are done */
        if (rc < 0) {
            fprintf(stderr, "versus-run: cannot start %d local ranks: %s\n", o->nprocs, strerror(-rc));
            return *code = EXIT_FAIL, 1;
        }
    }
    return 0;
}

/* A library that did not get the job's process manager starts as a world of
 * one in each task (MPICH under srun --mpi=pmix or none) and exits 0: compare
 * the world with the tasks srun started. */
static int world_check(session_t *s)
{
    const char *tasks = getenv("SLURM_STEP_NUM_TASKS");
    if (!tasks)
        tasks = getenv("SLURM_NTASKS");
    long n = tasks ? strtol(tasks, NULL, 10) : 0;
    if (n <= 0 || n == s->bs->size || !getenv("SLURM_STEP_ID"))
        return EXIT_OK;
    const vs_launcher_hint_t *h = s->mod.ops->launcher;
    if (s->bs->rank == 0)
        fprintf(stderr, "versus-run: srun started %ld tasks but %s sees a world of %d: each task runs alone, "
                        "the library did not reach Slurm's process manager; start it with srun --mpi=%s\n",
                n, s->o->transport, s->bs->size, h && h->srun_mpi ? h->srun_mpi : "<the plugin your MPI was built for>");
    return EXIT_USAGE;
}

/* Every rank takes rank 0's seed: a drawn one differs per process when the
 * launcher started them (each parsed its own options), and a shuffled order or
 * schedule must be the same on all. */
static int agree_on_seed(session_t *s)
{
    long seed = (long)s->o->method.seed;
    if (vs_run_bcast_long(&s->r, &seed))
        return EXIT_FAIL;
    ((vs_options_t *)s->o)->method.seed = (uint64_t)seed; /* the options are this process's own */
    return EXIT_OK;
}

/* Who measures with whom (pairing.h): every pair at once, rank i with i + N/2
 * (two ranks: 0 leads, 1 answers), or the scan's rounds (scan.c sets the
 * partners round by round). */
static int pair_up(session_t *s, const vs_pattern_t *pat)
{
    const vs_options_t *o = s->o;
    vs_run_t *r = &s->r;
    char err[256] = "";
    const char *refuse = r->size % 2 ? "pairs need an even number of ranks (each rank in one pair)"
                         : o->scan || r->size == 2 ? NULL
                         : !pat->messages ? "this pattern measures one pair of ranks; run it with 2 ranks, or use "
                                            "pingpong, stream or bistream for every pair at once"
                         : o->validate    ? "--validate checks one pair of ranks; run it with 2 ranks"
                                          : NULL;
    if (refuse) {
        if (r->rank == 0)
            fprintf(stderr, "versus-run: %s with %d ranks: %s\n", pat->name, r->size, refuse);
        return EXIT_USAGE;
    }
    r->pair_ranks[0] = r->pair_ranks[1] = -1;
    vs_pairing_kind_t kind = o->scan ? VS_PAIRING_ROUND_ROBIN : VS_PAIRING_FIXED;
    if (vs_pairing_init(&s->pairing, kind, r->size, o->scan && o->shuffle_pairs ? o->method.seed : 0, err,
                        sizeof err)) {
        fprintf(stderr, "versus-run: rank %d: %s\n", r->rank, err[0] ? err : "cannot set up the pairs");
        return EXIT_USAGE;
    }
    r->npairs = 1;
    r->peer = -1;
    if (o->scan)
        return EXIT_OK;
    if (!(s->partner = calloc((size_t)r->size, sizeof *s->partner)))
        return EXIT_FAIL;
    for (int k = 0; k < r->size; k++)
        s->partner[k] = vs_pairing_partner(&s->pairing, 0, k);
    r->partner = s->partner;
    r->peer = s->partner[r->rank];
    r->leader = r->rank < r->peer;
    r->npairs = r->size / 2;
    return EXIT_OK;
}

/* Phase 2, meet: the other ranks, and the transport opened.  The MPI modules
 * bring their own bootstrap (and must be opened first); the others use the
 * launcher's environment + TCP. */
static int meet(session_t *s)
{
    const vs_options_t *o = s->o;
    const vs_transport_ops_t *ops = s->mod.ops;
    int rc;
    vs_watchdog_phase(&s->wd, "starting the transport", UINT64_MAX);
    if (ops->bootstrap) {
        if ((rc = open_transport(s)))
            return report(&s->core, rc, "open");
        if ((rc = ops->bootstrap(s->t, &s->bs)))
            return report(&s->core, rc, "bootstrap");
        vs_launch_env_detect(&s->lenv); /* only for the launcher's name */
        s->lenv.rank = s->bs->rank;
        s->lenv.size = s->bs->size;
        if ((rc = world_check(s)))
            return rc;
    } else {
        if (!o->launch_local) {
            rc = vs_launch_env_detect(&s->lenv);
            if (rc == -ENOENT && !o->rendezvous) {
                fprintf(stderr, "versus-run: transport '%s' needs its peers: start it with "
                                "'versus-run --launch local -n 2 --transport %s ...', under mpirun/mpiexec/srun, "
                                "or by hand on every rank with VERSUS_RANK=R VERSUS_SIZE=N set and "
                                "--rendezvous HOST:PORT (see docs/launching.md)\n", o->transport, o->transport);
                return EXIT_USAGE;
            }
            if (rc && rc != -ENOENT) {
                fprintf(stderr, "versus-run: cannot read the launcher's environment\n");
                return EXIT_USAGE;
            }
        }
        char err[512] = "";
        rc = vs_bootstrap_tcp_create(&s->lenv, o->rendezvous, o->rendezvous_dir, o->timeout_s, &s->bs, err, sizeof err);
        if (rc) {
            fprintf(stderr, "versus-run: rank %d: cannot meet the other ranks: %s\n", s->lenv.rank,
                    err[0] ? err : strerror(-rc));
            return rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
        }
        s->core.rank = s->bs->rank;
        if ((rc = open_transport(s)))
            return report(&s->core, rc, "open");
    }
    vs_run_t *r = &s->r;
    r->t = s->t;
    r->bs = s->bs;
    r->rank = s->core.rank = s->wd.rank = s->bs->rank;
    r->size = s->bs->size;
    const vs_pattern_t *pat = vs_pattern_find(o->pattern);
    if (r->size < pat->min_ranks) {
        fprintf(stderr, "versus-run: pattern %s needs at least %d ranks, this run has %d "
                        "(e.g. mpirun -np 2, mpiexec -n 2, srun -n 2, or --launch local -n 2)\n",
                pat->name, pat->min_ranks, r->size);
        return EXIT_USAGE;
    }
    int code = agree_on_seed(s);
    return code ? code : pair_up(s, pat);
}

/* Ranks 0 and 1 on different hosts that talk through shared memory measure one
 * machine, not the network between them (network namespaces share memory). */
static void medium_check(session_t *s)
{
    const char *h0 = s->hosts, *h1 = s->hosts + HOST_LEN, *m = s->info.medium;
    int shared = !strcmp(m, VS_MEDIUM_SHM), may = !strcmp(m, VS_MEDIUM_MAY_SHM);
    if (s->r.size < 2 || !strcmp(h0, h1) || !(shared || may))
        return;
    snprintf(s->warning, sizeof s->warning,
             "ranks 0 and 1 run on different hosts ('%s', '%s') but %s %s shared memory%s%s%s: the figures "
             "are those of one machine, not of the network between the hosts; restrict the library to its "
             "network transports",
             h0, h1, s->o->transport, shared ? "moves the messages through" : "is allowed to use",
             s->info.provider[0] ? " (" : "", s->info.provider, s->info.provider[0] ? ")" : "");
    if (s->r.rank == 0)
        fprintf(stderr, "versus-run: warning: %s\n", s->warning);
}

/* Phase 3, prepare: results file, placement, connection, host names, timer,
 * drift, and the run record.  A failure before the run record leaves no file. */
static int prepare(session_t *s)
{
    const vs_options_t *o = s->o;
    vs_run_t *r = &s->r;
    char err[1024] = "";
    int rc;
    {
        /* Rank 0 opens the file and every rank learns whether it could, so a refused
         * --out ends all ranks at once under any launcher (none waits for a peer that left).
         * Every rank takes part, whether or not it was given --out (only rank 0 needs it). */
        int32_t opened = 1, *all = calloc((size_t)r->size, sizeof *all);
        if (r->rank == 0 && o->out && !(s->writer = vs_writer_open(o->out, o->overwrite, vs_record_end, err, sizeof err))) {
            fprintf(stderr, "versus-run: %s\n", err);
            opened = 0;
        }
        r->writer = s->writer;
        rc = all ? s->bs->exchange(s->bs, &opened, all, sizeof opened) : -ENOMEM;
        opened = rc == 0 && all[0];
        free(all);
        if (rc) {
            vs_writer_abandon(s->writer);
            s->writer = r->writer = NULL;
            return report(&s->core, rc, "exchanging whether the results file opened");
        }
        if (!opened)
            return EXIT_USAGE;
    }
    vs_watchdog_phase(&s->wd, "placing the ranks", UINT64_MAX);
    if ((rc = vs_placement_apply(&(vs_placement_req_t){o->placement, o->cpus}, s->bs, &s->pl, err, sizeof err))) {
        fprintf(stderr, "versus-run: rank %d: placement: %s\n", r->rank, err[0] ? err : strerror(-rc));
        vs_writer_abandon(s->writer); /* nothing measured, no run record: leave no file */
        s->writer = r->writer = NULL;
        return exit_code_for(rc);
    }
    vs_watchdog_phase(&s->wd, "connecting", UINT64_MAX);
    if ((rc = s->mod.ops->connect(s->t, s->bs))) {
        vs_writer_abandon(s->writer);
        s->writer = r->writer = NULL;
        return report(&s->core, rc, "connect");
    }
    if ((rc = s->mod.ops->query(s->t, &s->info)))
        return report(&s->core, rc, "query");
    /* connected: from here on every wait outside the transport drives it (idle.h) */
    vs_idle_t idle = {.fn = vs_run_idle, .arg = r};
    if (!s->mod.ops->bootstrap)
        vs_bootstrap_tcp_set_idle(s->bs, idle);

    char myhost[HOST_LEN] = "";
    gethostname(myhost, sizeof myhost - 1);
    if (!(s->hosts = calloc((size_t)r->size, HOST_LEN)) || s->bs->exchange(s->bs, myhost, s->hosts, HOST_LEN)) {
        fprintf(stderr, "versus-run: rank %d: cannot exchange host names\n", r->rank);
        return EXIT_FAIL;
    }
    medium_check(s);
    r->hosts = s->hosts;
    r->host_len = HOST_LEN;
    hostload_start(s);
    vs_timer_calibrate(&r->timer, o->method.clock == VS_CLOCK_TSC);
    /* placement drift: a cache-line round trip between the bound cores, at
     * the start, after every size and at the end */
    r->drift_ns = NAN;
    s->drift_start = NAN;
    vs_watchdog_phase(&s->wd, "probing placement drift", UINT64_MAX);
    /* more than two ranks: ranks 0 and 1 need not be a pair, and the others would wait */
    if (r->size == 2 && vs_drift_open(s->bs, &r->drift, err, sizeof err) == 0) {
        vs_drift_set_idle(r->drift, idle);
        if (vs_drift_probe(r->drift, 2000, o->timeout_s, &s->drift_start)) {
            fprintf(stderr, "versus-run: rank %d: placement drift probe failed\n", r->rank);
            return EXIT_FAIL;
        }
    } else {
        r->drift = NULL;
    }
    if (s->writer) {
        vs_record_run_t facts = {.info = &s->info, .launch = &s->lenv, .hosts = s->hosts, .host_len = HOST_LEN,
                                 .placement = s->pl, .drift_start_ns = s->drift_start,
                                 .warning = s->warning};
        if ((rc = vs_record_run(r, &facts))) {
            fprintf(stderr, "versus-run: cannot write %s: %s\n", o->out, strerror(-rc));
            return EXIT_FAIL;
        }
        atomic_store(&s->wd.writer, s->writer);
        s->writer_handed = 1;
    }
    return EXIT_OK;
}

/* Phase 4, measure: the pattern over the schedule, the end record, the table. */
static int measure(session_t *s)
{
    const vs_options_t *o = s->o;
    vs_run_t *r = &s->r;
    int code;
    s->table.planned = o->sizes.n;
    s->table.progress = r->rank == 0 && !o->quiet && isatty(STDERR_FILENO);
    int rc = o->scan ? vs_scan_run(r, vs_pattern_find(o->pattern), &s->pairing, o->serial, &s->slow)
                     : vs_driver_run(r, vs_pattern_find(o->pattern));
    double drift_end = NAN;
    if (!rc && r->drift && vs_drift_probe(r->drift, 2000, o->timeout_s, &drift_end))
        fprintf(stderr, "versus-run: rank %d: final placement drift probe failed\n", r->rank);
    if (s->writer)
        vs_writer_end_num(s->writer, "drift_end_ns", drift_end);
    if (s->writer && r->load) {
        vs_hostload_snap_t end;
        vs_hostload_span_t span;
        double la[3];
        int running;
        vs_hostload_take(r->load, &end);
        vs_hostload_between(&r->load->start, &end, r->load->npid, VS_HOSTLOAD_RUN_TICKS, &span);
        vs_writer_end_num(s->writer, "host_load_waited", span.waited);
        vs_writer_end_num(s->writer, "host_load_others", span.others);
        vs_writer_end_num(s->writer, "host_load_steal", span.steal);
        if (vs_hostload_loadavg(la, &running) == 0)
            vs_writer_end_num(s->writer, "host_loadavg_end", la[0]);
    }
    const char *nl = s->table.progress ? "\n" : "";
    if (rc) {
        char msg[1200];
        const char *why = s->core.last_error[0] ? s->core.last_error : "";
        snprintf(msg, sizeof msg, "%s%s%s", r->err, why[0] ? ": " : "", why);
        int sig = vs_watchdog_caught();
        if (sig) { /* Ctrl-C ended a peer first and this rank saw it go */
            char failed[1200];
            snprintf(failed, sizeof failed, "%s", msg);
            snprintf(msg, sizeof msg, "interrupted by signal %d (%s); then %s", sig, strsignal(sig), failed);
        }
        fprintf(stderr, "%sversus-run: rank %d: %s: %s\n", nl, r->rank, o->transport, msg);
        /* a wait bounded by --timeout that ran out (the bootstrap's, between sizes) is the
         * watchdog's timeout reached by another road: the same status */
        if (s->writer)
            vs_writer_end(s->writer, sig ? "interrupted" : rc == -ETIMEDOUT ? "timeout" : "error", msg);
        /* a usage error, or what cannot run here (a library without one-sided operations after all) */
        code = exit_code_for(rc) == EXIT_USAGE || exit_code_for(rc) == EXIT_SKIP ? exit_code_for(rc) : EXIT_FAIL;
    } else if (r->invalid_sizes) {
        char msg[200];
        snprintf(msg, sizeof msg, "payload check failed at %ld size(s); see \"validation\" in their size records",
                 r->invalid_sizes);
        fprintf(stderr, "%sversus-run: rank %d: %s: %s\n", nl, r->rank, o->transport, msg);
        if (s->writer)
            vs_writer_end(s->writer, "invalid", msg);
        code = EXIT_FAIL;
    } else {
        if (s->writer)
            vs_writer_end(s->writer, "ok", "");
        code = EXIT_OK;
    }
    if (r->rank == 0 && !o->quiet) {
        char title[600];
        snprintf(title, sizeof title, "versus %s (%s) over %s: %s %s", o->pattern, o->variant, o->transport,
                 s->info.library, s->info.version);
        for (char *p = title; *p; p++)
            if (*p == '\n')
                *p = ' ';
        if (o->scan && s->slow)
            vs_scan_print(r, s->slow, o->sizes.n, title, stdout);
        else if (!o->scan)
            vs_table_print(&s->table, stdout, title);
        vs_table_t agg = {0};
        if (r->npairs > 1 && !vs_driver_aggregate_table(r, &agg))
            vs_table_print(&agg, stdout, "all pairs at once");
        vs_table_free(&agg);
        if (!o->out)
            fprintf(stderr, "versus-run: raw samples not saved (use --out FILE.jsonl)\n");
    }
    if (!code || r->invalid_sizes)
        s->bs->barrier(s->bs); /* nobody tears down while a peer still talks */
    return code;
}

/* Phase 5, finish: everything torn down in reverse, whatever phase failed. */
static void finish(session_t *s)
{
    const vs_transport_ops_t *ops = s->mod.ops;
    if (s->writer_handed && !atomic_exchange(&s->wd.writer, NULL)) {
        /* the watchdog took the results file to end the run (a timeout, a signal, a peer
         * that died) and exits the process once the end record is written: closing the
         * file under it would free what it is writing (ThreadSanitizer found that) */
        for (;;)
            pause();
    }
    vs_watchdog_phase(&s->wd, "shutting down", UINT64_MAX);
    free(s->hosts);
    free(s->partner);
    free(s->slow);
    free(s->r.gathered);
    vs_table_free(&s->r.agg);
    vs_pairing_free(&s->pairing);
    vs_table_free(&s->table);
    vs_writer_close(s->writer);
    vs_drift_close(s->r.drift);
    if (s->pl)
        vs_placement_free(s->pl);
    if (s->t)
        ops->close(s->t); /* for MPI this finalises, which ends the MPI bootstrap too */
    else if (s->bs && s->bs->close)
        s->bs->close(s->bs);
    if (s->t && s->bs && !ops->bootstrap && s->bs->close)
        s->bs->close(s->bs);
    free(s->topts);
    /* modules stay mapped: libraries may have registered exit handlers */
}

static int run(const vs_options_t *o)
{
    static session_t s; /* one run per process; see session_t */
    memset(&s, 0, sizeof s);
    s.o = o;
    s.core = (core_t){.opt = o, .transport = o->transport, .rank = -1};
    s.host = (vs_host_t){.core = &s.core, .error = host_error, .debug = host_debug};
    s.lenv.listen_fd = -1;
    snprintf(s.lenv.launcher, sizeof s.lenv.launcher, "none");
    s.lenv.size = 1;
    int code;
    (void)vs_provenance_copy_thresholds(); /* forks the loader: before any library starts */
    (void)vs_shm_sweep(NULL); /* what runs that died left in /dev/shm */
    vs_watchdog_catch();      /* before the local launcher forks the ranks */
    if (load(&s, &code)) {
        free(s.topts);
        return code;
    }
    s.r = (vs_run_t){.ops = s.mod.ops, .opt = o, .wd = &s.wd, .table = &s.table};
    int rc = vs_watchdog_start(&s.wd, o->timeout_s, s.lenv.rank);
    if (rc) {
        fprintf(stderr, "versus-run: cannot start the watchdog: %s\n", strerror(-rc));
        return EXIT_FAIL;
    }
    if (!(code = meet(&s)) && !(code = prepare(&s)))
        code = measure(&s);
    finish(&s);
    vs_watchdog_stop(&s.wd);
    return code;
}

int main(int argc, char **argv)
{
    vs_options_t o;
    char err[1024] = "";
    int rc = vs_options_parse(argc, argv, &o, err, sizeof err);
    int code;
    if (rc) {
        code = usage_error(err);
    } else {
        switch (o.action) {
        case VS_ACTION_HELP:
            if (o.json)
                code = vs_options_usage_json(stdout) ? EXIT_FAIL : EXIT_OK;
            else {
                vs_options_usage(stdout);
                code = EXIT_OK;
            }
            break;
        case VS_ACTION_VERSION: printf("versus-run %s (%s)\n", VS_VERSION, VS_REVISION); code = EXIT_OK; break;
        case VS_ACTION_LIST: code = vs_module_list(stdout, o.json) ? EXIT_FAIL : EXIT_OK; break;
        case VS_ACTION_TOPOLOGY: code = vs_topology_print(stdout) ? EXIT_FAIL : EXIT_OK; break;
        case VS_ACTION_CLEANUP: {
            int n = vs_shm_sweep(stdout);
            if (n < 0)
                fprintf(stderr, "versus-run: --cleanup: cannot read /dev/shm: %s\n", strerror(-n));
            else
                printf("versus-run: %d segment%s of ended runs removed\n", n, n == 1 ? "" : "s");
            code = n < 0 ? EXIT_FAIL : EXIT_OK;
            break;
        }
        default: code = run(&o); break;
        }
    }
    vs_options_free(&o);
    return code;
}
