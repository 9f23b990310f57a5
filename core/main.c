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
#include "placement.h"
#include "table.h"
#include "timer.h"
#include "topts.h"
#include "version.h"
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
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "versus-run: rank %d: %s: ", core->rank, core->transport);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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

/* Variables that tune the libraries, recorded with the run. */
static void json_env(vs_json_t *j)
{
    static const char *const prefixes[] = {"OMPI_MCA_", "MPIR_CVAR_", "MPICH_", "HYDRA_", "UCX_", "FI_", "VERSUS_", NULL};
    /* set by the launchers themselves to wire the job, not tuning */
    static const char *const wiring[] = {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir", NULL};
    extern char **environ;
    vs_json_obj_begin(j);
    for (char **e = environ; *e; e++) {
        int skip = 0;
        for (int w = 0; wiring[w]; w++)
            skip |= !strncmp(*e, wiring[w], strlen(wiring[w]));
        if (skip)
            continue;
        for (int p = 0; prefixes[p]; p++) {
            if (strncmp(*e, prefixes[p], strlen(prefixes[p])))
                continue;
            const char *eq = strchr(*e, '=');
            if (!eq)
                break;
            char key[256];
            snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
            vs_json_kstr(j, key, eq + 1);
            break;
        }
    }
    vs_json_obj_end(j);
}

static int write_run_record(vs_run_t *r, const vs_transport_info_t *info, const vs_launch_env_t *lenv,
                            const char *hosts, size_t host_len, const vs_placement_t *pl, double drift_start)
{
    const vs_options_t *o = r->opt;
    char when[40], host[256] = "?";
    vs_iso8601_now(when, sizeof when);
    gethostname(host, sizeof host);
    char run_id[400];
    snprintf(run_id, sizeof run_id, "%s-%s-%ld", when, host, (long)getpid());

    vs_json_t j;
    vs_json_init(&j);
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "record", "run");
    vs_json_kint(&j, "schema", 1);
    vs_json_key(&j, "versus");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "version", VS_VERSION);
    vs_json_kstr(&j, "revision", VS_REVISION);
    vs_json_obj_end(&j);
    vs_json_kstr(&j, "run_id", run_id);
    vs_json_kint(&j, "launch_id", o->launch_id);

    vs_json_key(&j, "transport");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "name", info->name[0] ? info->name : o->transport);
    vs_json_kstr(&j, "library", info->library);
    vs_json_kstr(&j, "version", info->version);
    vs_json_kstr(&j, "provider", info->provider);
    vs_json_key(&j, "options");
    vs_json_obj_begin(&j);
    for (size_t i = 0; i < o->n_topts; i++)
        vs_json_kstr(&j, o->topts[i].key, o->topts[i].value);
    vs_json_obj_end(&j);
    vs_json_key(&j, "thresholds");
    vs_json_obj_begin(&j);
    for (int i = 0; i < info->n_thresholds && i < VS_MAX_THRESHOLDS; i++)
        if (info->thresholds[i].bytes >= 0)
            vs_json_kint(&j, info->thresholds[i].name, info->thresholds[i].bytes);
    vs_json_obj_end(&j);
    vs_json_key(&j, "attrs");
    vs_json_obj_begin(&j);
    for (int i = 0; i < info->n_attrs && i < VS_MAX_ATTRS; i++)
        vs_json_kstr(&j, info->attrs[i].key, info->attrs[i].value);
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);

    vs_json_kstr(&j, "pattern", o->pattern);
    vs_json_kstr(&j, "variant", o->variant);
    vs_pattern_params_json(o, &j);
    vs_json_kint(&j, "ranks", r->size);
    vs_json_key(&j, "hosts");
    vs_json_arr_begin(&j);
    for (int i = 0; i < r->size; i++)
        vs_json_str(&j, hosts + (size_t)i * host_len);
    vs_json_arr_end(&j);
    vs_json_key(&j, "launcher");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "name", lenv->launcher);
    vs_json_kstr(&j, "bootstrap", r->bs->name);
    vs_json_obj_end(&j);
    vs_json_key(&j, "command_line");
    vs_json_arr_begin(&j);
    for (int i = 0; i < o->argc; i++)
        vs_json_str(&j, o->argv[i]);
    vs_json_arr_end(&j);
    vs_json_kstr(&j, "start_time", when);
    vs_json_key(&j, "timer");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "clock", r->timer.clock);
    vs_json_knum(&j, "resolution_ns", r->timer.resolution_ns);
    vs_json_knum(&j, "cost_ns", r->timer.cost_ns);
    vs_timer_json_extra(&r->timer, &j);
    vs_json_obj_end(&j);
    vs_json_key(&j, "schedule");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "spec", o->sizes_spec);
    vs_json_key(&j, "sizes");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < o->sizes.n; i++)
        vs_json_int(&j, (int64_t)o->sizes.v[i]);
    vs_json_arr_end(&j);
    vs_method_schedule_json(&o->method, &j);
    vs_json_obj_end(&j);
    vs_json_key(&j, "iterations");
    vs_json_obj_begin(&j);
    vs_json_kint(&j, "measured", o->iterations);
    vs_json_kint(&j, "measured_large", o->iterations_large);
    vs_json_kint(&j, "warmup", o->warmup);
    vs_json_kint(&j, "warmup_large", o->warmup_large);
    vs_json_kint(&j, "large_from_bytes", (int64_t)o->large_from);
    if (o->batch)
        vs_json_kint(&j, "batch", o->batch);
    else
        vs_json_kstr(&j, "batch", "auto");
    vs_method_iterations_json(&o->method, &j);
    vs_json_obj_end(&j);
    vs_json_knum(&j, "timeout_s", o->timeout_s);
    vs_json_key(&j, "placement");
    vs_placement_json(pl, &j);
    vs_json_key(&j, "topology");
    vs_topology_json(pl, &j);
    vs_json_key(&j, "drift");
    vs_json_obj_begin(&j);
    vs_json_kbool(&j, "probed", r->drift != NULL);
    vs_json_knum(&j, "start_ns", drift_start);
    vs_json_obj_end(&j);
    vs_json_key(&j, "env");
    json_env(&j);
    vs_json_obj_end(&j);
    int rc = vs_writer_record(r->writer, &j, 0);
    vs_json_free(&j);
    return rc;
}

/* The one place a transport is opened: its options were checked against the
 * module's table (vs_topts_check) before any rank started. */
static int open_transport(const vs_module_t *mod, const vs_host_t *host, const vs_options_t *o, vs_transport_t **t)
{
    return mod->ops->open(host, o->topts, o->n_topts, t);
}

/* Meet the other ranks: the MPI modules bring their own bootstrap (and must
 * be opened first); the others use the launcher's environment + TCP. */
static int start_transport(core_t *core, const vs_options_t *o, const vs_module_t *mod, const vs_host_t *host,
                           vs_launch_env_t *lenv, vs_transport_t **t, vs_bootstrap_t **bs)
{
    const vs_transport_ops_t *ops = mod->ops;
    int rc;
    if (ops->bootstrap) {
        if ((rc = open_transport(mod, host, o, t)))
            return report(core, rc, "open");
        if ((rc = ops->bootstrap(*t, bs)))
            return report(core, rc, "bootstrap");
        vs_launch_env_detect(lenv); /* only for the launcher's name */
        lenv->rank = (*bs)->rank;
        lenv->size = (*bs)->size;
        return EXIT_OK;
    }
    if (!o->launch_local) {
        rc = vs_launch_env_detect(lenv);
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
    rc = vs_bootstrap_tcp_create(lenv, o->rendezvous, o->rendezvous_dir, o->timeout_s, bs, err, sizeof err);
    if (rc) {
        fprintf(stderr, "versus-run: rank %d: cannot meet the other ranks: %s\n", lenv->rank, err[0] ? err : strerror(-rc));
        return rc == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
    }
    core->rank = (*bs)->rank;
    if ((rc = open_transport(mod, host, o, t)))
        return report(core, rc, "open");
    return EXIT_OK;
}

static int run(const vs_options_t *o)
{
    core_t core = {.opt = o, .transport = o->transport, .rank = -1};
    vs_host_t host = {.core = &core, .error = host_error, .debug = host_debug};
    char err[1024] = "";
    int code;

    if (vs_placement_check_args(&(vs_placement_req_t){o->placement, o->cpus}, err, sizeof err))
        return usage_error(err);

    vs_launch_env_t lenv;
    memset(&lenv, 0, sizeof lenv);
    lenv.listen_fd = -1;
    snprintf(lenv.launcher, sizeof lenv.launcher, "none");
    lenv.size = 1;
    vs_module_t mod;
    int rc = vs_module_load(o->transport, &mod, err, sizeof err);
    if (rc) {
        fprintf(stderr, "versus-run: %s\n", err);
        return EXIT_USAGE;
    }
    if (vs_topts_check(mod.ops, o->topts, o->n_topts, err, sizeof err))
        return usage_error(err);
    if (o->launch_local && mod.ops->bootstrap) {
        /* started by its own launcher: opening it here makes it say which */
        vs_transport_t *t = NULL;
        rc = open_transport(&mod, &host, o, &t);
        if (!rc) {
            mod.ops->close(t);
            return usage_error("this transport is started by its MPI launcher, not by --launch local");
        }
        return report(&core, rc, "--launch local");
    }
    if (o->launch_local) {
        rc = vs_launch_local(o->nprocs, o->timeout_s, &lenv, &code);
        if (rc == 1)
            return code; /* the launcher's own process: the ranks are done */
        if (rc < 0) {
            fprintf(stderr, "versus-run: cannot start %d local ranks: %s\n", o->nprocs, strerror(-rc));
            return EXIT_FAIL;
        }
    }

    const vs_transport_ops_t *ops = mod.ops;
    const vs_pattern_t *pat = vs_pattern_find(o->pattern);

    vs_watchdog_t wd;
    memset(&wd, 0, sizeof wd);
    vs_transport_t *t = NULL;
    vs_bootstrap_t *bs = NULL;
    vs_writer_t *writer = NULL;
    vs_placement_t *pl = NULL;
    vs_table_t table = {0};
    vs_run_t r = {.ops = ops, .opt = o, .wd = &wd, .table = &table};
    char *hosts = NULL;
    enum { HOST_LEN = 256 };

    if ((rc = vs_watchdog_start(&wd, o->timeout_s, lenv.rank))) {
        fprintf(stderr, "versus-run: cannot start the watchdog: %s\n", strerror(-rc));
        code = EXIT_FAIL;
        goto unload;
    }
    vs_watchdog_phase(&wd, "starting the transport", UINT64_MAX);
    if ((code = start_transport(&core, o, &mod, &host, &lenv, &t, &bs)))
        goto close_transport;
    r.t = t;
    r.bs = bs;
    r.rank = bs->rank;
    r.size = bs->size;
    core.rank = bs->rank;
    wd.rank = bs->rank;
    if (r.size < pat->min_ranks) {
        fprintf(stderr, "versus-run: pattern %s needs at least %d ranks, this run has %d "
                        "(e.g. mpirun -np 2, mpiexec -n 2, srun -n 2, or --launch local -n 2)\n",
                pat->name, pat->min_ranks, r.size);
        code = EXIT_USAGE;
        goto close_transport;
    }

    /* rank 0 opens the results file before anything is measured */
    if (r.rank == 0 && o->out) {
        if (!(writer = vs_writer_open(o->out, err, sizeof err))) {
            fprintf(stderr, "versus-run: %s\n", err);
            code = EXIT_USAGE;
            goto close_transport;
        }
        r.writer = writer;
    }

    vs_watchdog_phase(&wd, "placing the ranks", UINT64_MAX);
    if ((rc = vs_placement_apply(&(vs_placement_req_t){o->placement, o->cpus}, bs, &pl, err, sizeof err))) {
        fprintf(stderr, "versus-run: rank %d: placement: %s\n", r.rank, err[0] ? err : strerror(-rc));
        code = exit_code_for(rc);
        vs_writer_abandon(writer); /* nothing measured, no run record: leave no file */
        writer = r.writer = NULL;
        goto close_transport;
    }

    vs_watchdog_phase(&wd, "connecting", UINT64_MAX);
    if ((rc = ops->connect(t, bs))) {
        code = report(&core, rc, "connect");
        vs_writer_abandon(writer);
        writer = r.writer = NULL;
        goto close_transport;
    }
    vs_transport_info_t info;
    memset(&info, 0, sizeof info);
    if ((rc = ops->query(t, &info))) {
        code = report(&core, rc, "query");
        goto close_transport;
    }

    /* host names of all ranks */
    char myhost[HOST_LEN] = "";
    gethostname(myhost, sizeof myhost - 1);
    if (!(hosts = calloc((size_t)r.size, HOST_LEN)) || bs->exchange(bs, myhost, hosts, HOST_LEN)) {
        fprintf(stderr, "versus-run: rank %d: cannot exchange host names\n", r.rank);
        code = EXIT_FAIL;
        goto close_transport;
    }
    vs_timer_calibrate(&r.timer, o->method.clock == VS_CLOCK_TSC);
    /* placement drift: a cache-line round trip between the bound cores, at
     * the start, after every size and at the end */
    r.drift_ns = NAN;
    double drift_start = NAN;
    vs_watchdog_phase(&wd, "probing placement drift", UINT64_MAX);
    if (vs_drift_open(bs, &r.drift, err, sizeof err) == 0) {
        if (vs_drift_probe(r.drift, 2000, o->timeout_s, &drift_start)) {
            fprintf(stderr, "versus-run: rank %d: placement drift probe failed\n", r.rank);
            code = EXIT_FAIL;
            goto close_transport;
        }
    } else {
        r.drift = NULL;
    }
    if (writer) {
        if ((rc = write_run_record(&r, &info, &lenv, hosts, HOST_LEN, pl, drift_start))) {
            fprintf(stderr, "versus-run: cannot write %s: %s\n", o->out, strerror(-rc));
            code = EXIT_FAIL;
            goto close_transport;
        }
        atomic_store(&wd.writer, writer);
    }

    table.planned = o->sizes.n;
    table.progress = r.rank == 0 && !o->quiet && isatty(STDERR_FILENO);
    rc = vs_driver_run(&r, pat);
    double drift_end = NAN;
    if (!rc && r.drift && vs_drift_probe(r.drift, 2000, o->timeout_s, &drift_end))
        fprintf(stderr, "versus-run: rank %d: final placement drift probe failed\n", r.rank);
    if (writer)
        vs_writer_end_num(writer, "drift_end_ns", drift_end);
    if (rc) {
        char msg[1200];
        const char *why = core.last_error[0] ? core.last_error : "";
        snprintf(msg, sizeof msg, "%s%s%s", r.err, why[0] ? ": " : "", why);
        fprintf(stderr, "%sversus-run: rank %d: %s: %s\n", table.progress ? "\n" : "", r.rank, o->transport, msg);
        if (writer)
            vs_writer_end(writer, "error", msg);
        code = exit_code_for(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_FAIL;
    } else if (r.invalid_sizes) {
        char msg[200];
        snprintf(msg, sizeof msg, "payload check failed at %ld size(s); see \"validation\" in their size records",
                 r.invalid_sizes);
        fprintf(stderr, "%sversus-run: rank %d: %s: %s\n", table.progress ? "\n" : "", r.rank, o->transport, msg);
        if (writer)
            vs_writer_end(writer, "invalid", msg);
        code = EXIT_FAIL;
    } else {
        if (writer)
            vs_writer_end(writer, "ok", "");
        code = EXIT_OK;
    }
    if (r.rank == 0 && !o->quiet) {
        char title[600];
        snprintf(title, sizeof title, "versus %s (%s) over %s: %s %s", o->pattern, o->variant, o->transport,
                 info.library, info.version);
        for (char *p = title; *p; p++)
            if (*p == '\n')
                *p = ' ';
        vs_table_print(&table, stdout, title);
        if (!o->out)
            fprintf(stderr, "versus-run: raw samples not saved (use --out FILE.jsonl)\n");
    }
    if ((!code || r.invalid_sizes) && bs)
        bs->barrier(bs); /* nobody tears down while a peer still talks */

close_transport:
    atomic_store(&wd.writer, NULL);
    vs_watchdog_phase(&wd, "shutting down", UINT64_MAX);
    free(hosts);
    vs_table_free(&table);
    vs_writer_close(writer);
    vs_drift_close(r.drift);
    if (pl)
        vs_placement_free(pl);
    if (t)
        ops->close(t); /* for MPI this finalises, which ends the MPI bootstrap too */
    else if (bs && bs->close)
        bs->close(bs);
    if (t && bs && !ops->bootstrap && bs->close)
        bs->close(bs);
unload:
    /* modules stay mapped: libraries may have registered exit handlers */
    (void)mod;
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
        case VS_ACTION_HELP: vs_options_usage(stdout); code = EXIT_OK; break;
        case VS_ACTION_VERSION: printf("versus-run %s (%s)\n", VS_VERSION, VS_REVISION); code = EXIT_OK; break;
        case VS_ACTION_LIST: code = vs_module_list(stdout) ? EXIT_FAIL : EXIT_OK; break;
        case VS_ACTION_TOPOLOGY: code = vs_topology_print(stdout) ? EXIT_FAIL : EXIT_OK; break;
        default: code = run(&o); break;
        }
    }
    vs_options_free(&o);
    return code;
}
