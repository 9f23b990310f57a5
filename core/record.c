/* The records of a results file, in the order they appear in it; see
 * record.h and docs/results-schema.md. */
#include "record.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "drift.h"
#include "hostload.h"
#include "method.h"
#include "topts.h"
#include "pattern_params.h"
#include "schedule.h"
#include "timer.h"
#include "validate.h"
#include "version.h"

/* ---- the run record and its parts ---- */

static void kstr_or_null(vs_json_t *j, const char *key, const char *s)
{
    if (s && *s)
        vs_json_kstr(j, key, s);
    else {
        vs_json_key(j, key);
        vs_json_null(j);
    }
}

static void kint_or_null(vs_json_t *j, const char *key, int v)
{
    if (v >= 0)
        vs_json_kint(j, key, v);
    else {
        vs_json_key(j, key);
        vs_json_null(j);
    }
}

static void lines_json(vs_json_t *j, const char *lines)
{
    const char *s = lines;
    char line[VS_PL_WARN];
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        snprintf(line, sizeof line, "%.*s", n, s);
        vs_json_str(j, line);
        s += n + (nl ? 1 : 0);
    }
}

void vs_record_placement(const vs_placement_t *p, vs_json_t *j)
{
    if (!p) {
        vs_json_null(j);
        return;
    }
    int by_us = 0, by_launcher = 0;
    for (int r = 0; r < p->size; r++) {
        by_us += p->ranks[r].bound_by_us;
        by_launcher += p->ranks[r].launcher_bound && !p->ranks[r].bound_by_us;
    }
    vs_json_obj_begin(j);
    vs_json_kstr(j, "policy", p->policy);
    kstr_or_null(j, "cpus_arg", p->cpus_arg);
    vs_json_kstr(j, "decided_by", by_us ? "versus" : by_launcher ? "launcher" : "none");
    vs_json_kbool(j, "hwloc", p->summary.have_hwloc);
    vs_json_kstr(j, "relation", p->relation);
    vs_json_kbool(j, "relation_exact", p->relation_exact);
    if (p->summary.have_hwloc) {
        vs_json_kbool(j, "same_numa", p->same_numa);
        vs_json_kbool(j, "same_package", p->same_package);
    }
    vs_json_key(j, "ranks");
    vs_json_arr_begin(j);
    for (int r = 0; r < p->size; r++) {
        const vs_rank_place_t *rp = &p->ranks[r];
        vs_json_obj_begin(j);
        vs_json_kint(j, "rank", rp->rank);
        vs_json_kstr(j, "host", rp->prov.host);
        vs_json_kint(j, "pid", rp->pid);
        vs_json_kint(j, "local_rank", rp->local_rank);
        vs_json_kstr(j, "bound_by", rp->bound_by_us ? "versus" : rp->launcher_bound ? "launcher" : "none");
        vs_json_key(j, "cpus_requested");
        if (rp->requested_pu >= 0) {
            char s[16];
            snprintf(s, sizeof s, "%d", rp->requested_pu);
            vs_json_str(j, s);
        } else {
            vs_json_null(j);
        }
        vs_json_kstr(j, "cpus_before", rp->cpus_before);
        vs_json_kstr(j, "cpus_after", rp->cpus_after);
        vs_json_kstr(j, "cpus_hwloc", rp->cpus_hwloc);
        kint_or_null(j, "cpu_seen", rp->cpu_seen);
        kint_or_null(j, "numa_node", rp->numa_node);
        vs_json_kstr(j, "membind", rp->membind);
        vs_json_obj_end(j);
    }
    vs_json_arr_end(j);
    vs_json_key(j, "warnings");
    vs_json_arr_begin(j);
    for (int r = 0; r < p->size; r++)
        lines_json(j, p->ranks[r].warnings);
    lines_json(j, p->warnings);
    vs_json_arr_end(j);
    vs_json_obj_end(j);
}

static void provenance_json(const vs_provenance_t *pv, vs_json_t *j)
{
    kstr_or_null(j, "kernel", pv->kernel);
    kstr_or_null(j, "cpu_model", pv->cpu_model);
    kstr_or_null(j, "governor", pv->governor);
    kstr_or_null(j, "virtualization", pv->virtualization);
}

void vs_record_topology(const vs_placement_t *p, vs_json_t *j)
{
    if (!p) {
        vs_json_null(j);
        return;
    }
    const vs_topo_summary_t *s = &p->summary;
    vs_json_obj_begin(j);
    vs_json_kbool(j, "hwloc", s->have_hwloc);
    kstr_or_null(j, "hwloc_version", s->hwloc_version);
    vs_json_kstr(j, "host", p->ranks[p->rank].prov.host);
    kint_or_null(j, "packages", s->packages);
    kint_or_null(j, "numa_nodes", s->numa_nodes);
    kint_or_null(j, "cores", s->cores);
    kint_or_null(j, "pus", s->pus);
    kint_or_null(j, "pus_per_core", s->pus_per_core);
    kint_or_null(j, "page_bytes", (int)sysconf(_SC_PAGESIZE));   /* copies and pinning work per page */
    kstr_or_null(j, "cpu_model", s->cpu_model[0] ? s->cpu_model : p->ranks[p->rank].prov.cpu_model);
    const vs_copy_thresholds_t *copy = vs_provenance_copy_thresholds();
    vs_json_key(j, "copy_thresholds"); /* where memcpy changes method (glibc's tunables in force) */
    vs_json_obj_begin(j);
    if (copy->rep_movsb > 0)
        vs_json_kint(j, "x86_rep_movsb_threshold", copy->rep_movsb);
    if (copy->non_temporal > 0)
        vs_json_kint(j, "x86_non_temporal_threshold", copy->non_temporal);
    vs_json_obj_end(j);
    vs_json_key(j, "caches");
    vs_json_arr_begin(j);
    for (int i = 0; i < s->ncaches; i++) {
        vs_json_obj_begin(j);
        vs_json_kint(j, "level", s->caches[i].level);
        vs_json_kstr(j, "kind", s->caches[i].kind);
        vs_json_kint(j, "size_bytes", (int64_t)s->caches[i].size_bytes);
        vs_json_kint(j, "line_bytes", s->caches[i].line_bytes);
        vs_json_kint(j, "count", s->caches[i].count);
        vs_json_obj_end(j);
    }
    vs_json_arr_end(j);

    const vs_provenance_t *mine = &p->ranks[p->rank].prov;
    vs_json_key(j, "provenance");
    vs_json_obj_begin(j);
    provenance_json(mine, j);
    kstr_or_null(j, "slurm_job_id", mine->slurm_job_id);
    kstr_or_null(j, "slurm_step_id", mine->slurm_step_id);
    vs_json_key(j, "hosts");
    vs_json_arr_begin(j);
    for (int r = 0; r < p->size; r++) {
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= strcmp(p->ranks[q].prov.host, p->ranks[r].prov.host) == 0;
        if (seen)
            continue;
        vs_json_obj_begin(j);
        vs_json_kstr(j, "host", p->ranks[r].prov.host);
        vs_json_key(j, "ranks");
        vs_json_arr_begin(j);
        for (int q = r; q < p->size; q++)
            if (strcmp(p->ranks[q].prov.host, p->ranks[r].prov.host) == 0)
                vs_json_int(j, q);
        vs_json_arr_end(j);
        provenance_json(&p->ranks[r].prov, j);
        vs_json_obj_end(j);
    }
    vs_json_arr_end(j);
    vs_json_obj_end(j);
    vs_json_obj_end(j);
}

static const char *order_name(vs_order_t o)
{
    return o == VS_ORDER_SHUFFLED ? "shuffled" : o == VS_ORDER_INTERLEAVED ? "interleaved" : "sequential";
}

static void method_schedule_json(const vs_method_t *m, vs_json_t *j)
{
    vs_json_kstr(j, "order", order_name(m->order));
    vs_json_kint(j, "seed", (int64_t)m->seed);
    if (m->precision == 0)
        vs_json_kint(j, "rounds", m->rounds); /* with --precision: until each size stops */
    vs_json_kint(j, "perturb_bytes", (int64_t)m->perturb);
    vs_json_key(j, "adaptive");
    if (!m->adaptive) {
        vs_json_bool(j, 0);
        return;
    }
    vs_json_obj_begin(j);
    vs_json_knum(j, "tol_pct", m->adaptive_tol * 100);
    vs_json_kint(j, "min_gap_bytes", (int64_t)m->adaptive_gap_b);
    vs_json_knum(j, "min_gap_pct", m->adaptive_gap_frac * 100);
    vs_json_kint(j, "max_sizes", m->adaptive_max_sizes);
    vs_json_obj_end(j);
}

static void method_iterations_json(const vs_method_t *m, vs_json_t *j)
{
    vs_json_kstr(j, "mode", m->precision > 0 ? "precision" : "fixed");
    if (m->precision > 0) {
        vs_json_knum(j, "precision_pct", m->precision * 100);
        vs_json_kint(j, "min_iterations", m->min_iterations);
        vs_json_kint(j, "max_iterations", m->max_iterations);
        vs_json_knum(j, "max_seconds_per_size", m->max_seconds);
    }
}

static void pattern_params_json(const vs_options_t *o, vs_json_t *j)
{
    vs_json_key(j, "pattern_params");
    vs_json_obj_begin(j);
    if (!strcmp(o->pattern, "stream") || !strcmp(o->pattern, "bistream") || vs_pattern_rma_windowed(o))
        vs_json_kint(j, "window", vs_pattern_window(o));
    if (!strcmp(o->pattern, "doublebuffer")) {
        vs_json_kstr(j, "progress", o->progress ? o->progress : "none");
        if (o->poll_every)
            vs_json_kint(j, "poll_every", o->poll_every);
        vs_json_kstr(j, "element", "double");
    }
    if (!strcmp(o->pattern, "pingpong"))
        vs_json_kstr(j, "buffers", vs_pattern_buffers_shared(o) ? "shared" : "separate");
    vs_json_obj_end(j);
    vs_json_kbool(j, "validate", o->validate);
}

static void timer_json_extra(const vs_timer_info_t *info, vs_json_t *j)
{
    vs_json_kbool(j, "tsc_invariant", info->tsc_invariant);
    if (!info->use_tsc)
        return;
    vs_json_knum(j, "tsc_hz", info->tsc_hz);
    vs_json_knum(j, "tsc_calibration_error_ppm", info->tsc_error_ppm);
    vs_json_kstr(j, "tsc_calibrated_against", "CLOCK_MONOTONIC");
}

static int has_prefix(const char *s, const char *const *prefixes)
{
    for (int i = 0; prefixes && prefixes[i]; i++)
        if (!strncmp(s, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

/* Variables that tune the library (the module's prefixes) or versus itself,
 * without those the launchers set to wire the job. */
static void json_env(const vs_transport_ops_t *ops, vs_json_t *j)
{
    static const char *const own[] = {"VERSUS_", NULL};
    extern char **environ;
    vs_json_obj_begin(j);
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || has_prefix(*e, ops->env_wiring) || !(has_prefix(*e, own) || has_prefix(*e, ops->env_prefixes)))
            continue;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        vs_json_kstr(j, key, eq + 1);
    }
    vs_json_obj_end(j);
}

/* The run_id of the run record this process wrote: every later line of the file
 * carries it, so a reader tells a line of another run from one of this run. */
static char written_run_id[400];

static void krun_id(vs_json_t *j)
{
    if (written_run_id[0])
        vs_json_kstr(j, "run_id", written_run_id);
}

/* Open a record of this kind: {"record":"<kind>","run_id":"<the run's>", ... */
static void begin(vs_json_t *j, const char *kind)
{
    vs_json_init(j);
    vs_json_obj_begin(j);
    vs_json_kstr(j, "record", kind);
    if (strcmp(kind, "run"))
        krun_id(j);
}

/* "key": [v0, v1, ...] */
static void int_array(vs_json_t *j, const char *key, const int64_t *v, long n)
{
    vs_json_key(j, key);
    vs_json_arr_begin(j);
    for (long i = 0; i < n; i++)
        vs_json_int(j, v[i]);
    vs_json_arr_end(j);
}

int vs_record_run(const vs_run_t *r, const vs_record_run_t *facts)
{
    const vs_options_t *o = r->opt;
    const vs_transport_info_t *info = facts->info;
    char when[40], host[256] = "?";
    vs_iso8601_now(when, sizeof when);
    gethostname(host, sizeof host);
    char run_id[400];
    snprintf(run_id, sizeof run_id, "%s-%s-%ld", when, host, (long)getpid());
    snprintf(written_run_id, sizeof written_run_id, "%s", run_id);

    vs_json_t j;
    begin(&j, "run");
    vs_json_kint(&j, "schema", VS_RECORD_SCHEMA);
    /* Every line of the file ends with the SHA-256 of the bytes before it (writer.c). */
    vs_json_kstr(&j, "integrity", "line_sha256");
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
    vs_json_key(&j, "medium");
    if (info->medium[0])
        vs_json_str(&j, info->medium);
    else
        vs_json_null(&j);
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
    if (r->ops)
        vs_roles_json(r->ops, &j);
    vs_json_obj_end(&j);

    vs_json_kstr(&j, "pattern", o->pattern);
    vs_json_kstr(&j, "variant", o->variant);
    pattern_params_json(o, &j);
    vs_json_kint(&j, "ranks", r->size);
    if (o->scan || r->npairs > 1) {
        /* who measured with whom: every pair at once (fixed) or the scan's rounds */
        vs_json_key(&j, "pairing");
        vs_json_obj_begin(&j);
        vs_json_kstr(&j, "kind", o->scan ? "round-robin" : "fixed");
        vs_json_kstr(&j, "mode", o->scan ? (o->serial ? "scan-serial" : "scan") : "all-pairs-at-once");
        vs_json_kint(&j, "pairs_per_round", r->size / 2);
        vs_json_kint(&j, "rounds", o->scan ? r->size - 1 : 1);
        if (o->scan) {
            vs_json_kint(&j, "passes", o->passes);
            vs_json_kbool(&j, "pinned_per_pair", o->serial);
            vs_json_kbool(&j, "shuffled", o->shuffle_pairs);
            if (o->shuffle_pairs)
                vs_json_kint(&j, "seed", (int64_t)o->method.seed);
        } else {
            vs_json_key(&j, "pairs");
            vs_json_arr_begin(&j);
            for (int k = 0; k < r->size; k++) {
                if (r->partner[k] <= k)
                    continue;
                vs_json_arr_begin(&j);
                vs_json_int(&j, k);
                vs_json_int(&j, r->partner[k]);
                vs_json_arr_end(&j);
            }
            vs_json_arr_end(&j);
        }
        vs_json_obj_end(&j);
    }
    vs_json_key(&j, "hosts");
    vs_json_arr_begin(&j);
    for (int i = 0; i < r->size; i++)
        vs_json_str(&j, facts->hosts + (size_t)i * facts->host_len);
    vs_json_arr_end(&j);
    vs_json_key(&j, "launcher");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "name", facts->launch->launcher);
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
    timer_json_extra(&r->timer, &j);
    vs_json_obj_end(&j);
    vs_json_key(&j, "schedule");
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "spec", o->sizes_spec);
    vs_json_key(&j, "sizes");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < o->sizes.n; i++)
        vs_json_int(&j, (int64_t)o->sizes.v[i]);
    vs_json_arr_end(&j);
    method_schedule_json(&o->method, &j);
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
    method_iterations_json(&o->method, &j);
    vs_json_obj_end(&j);
    vs_json_knum(&j, "timeout_s", o->timeout_s);
    vs_json_key(&j, "placement");
    vs_record_placement(facts->placement, &j);
    vs_json_key(&j, "topology");
    vs_record_topology(facts->placement, &j);
    vs_json_key(&j, "drift");
    vs_json_obj_begin(&j);
    vs_json_kbool(&j, "probed", r->drift != NULL);
    vs_json_knum(&j, "start_ns", facts->drift_start_ns);
    vs_json_obj_end(&j);
    if (r->load) {
        const vs_hostload_t *h = r->load;
        vs_json_key(&j, "host_load");
        vs_json_obj_begin(&j);
        vs_json_key(&j, "cpus");
        vs_json_arr_begin(&j);
        for (int i = 0; i < h->ncpu; i++)
            vs_json_int(&j, h->cpus[i]);
        vs_json_arr_end(&j);
        vs_json_key(&j, "loadavg");
        vs_json_arr_begin(&j);
        for (int i = 0; i < 3; i++)
            vs_json_num(&j, h->loadavg[i]);
        vs_json_arr_end(&j);
        kint_or_null(&j, "running", h->running);
        kint_or_null(&j, "online_cpus", h->ncpu_online);
        vs_json_obj_end(&j);
    }
    vs_json_key(&j, "warnings");
    vs_json_arr_begin(&j);
    if (facts->warning && facts->warning[0])
        vs_json_str(&j, facts->warning);
    vs_json_arr_end(&j);
    vs_json_key(&j, "env");
    json_env(r->ops, &j);
    vs_json_obj_end(&j);
    int rc = vs_writer_record(r->writer, &j, 0);
    vs_json_free(&j);
    return rc;
}

/* ---- size records ---- */

static void validate_json(const vs_run_t *r, vs_json_t *j)
{
    vs_validate_finding_t f;
    if (!vs_validate_finding(r, &f))
        return;
    vs_json_kbool(j, "valid", f.valid);
    if (f.valid)
        return;
    char dir[32];
    snprintf(dir, sizeof dir, "%d->%d", f.from, 1 - f.from);
    vs_json_key(j, "validation");
    vs_json_obj_begin(j);
    vs_json_kstr(j, "phase", f.after ? "after" : "before");
    vs_json_kint(j, "round", f.round);
    vs_json_kstr(j, "direction", dir);
    vs_json_kint(j, "offset", f.offset);
    vs_json_kint(j, "expected", f.expected);
    vs_json_kint(j, "got", f.got);
    vs_json_kint(j, "differing_bytes", f.differing);
    vs_json_obj_end(j);
}

static void visit_json(const vs_visit_t *v, vs_json_t *j)
{
    if (!v)
        return;
    vs_json_kint(j, "round", v->round);
    vs_json_kint(j, "position", v->position);
    vs_json_kint(j, "pass", v->pass);
    vs_json_kbool(j, "adaptive", v->pass > 0);
    vs_json_knum(j, "precision_pct", isfinite(v->precision) ? v->precision * 100 : NAN);
    if (v->stop)
        vs_json_kstr(j, "stop", v->stop);
}

/* Write a finished record (counts_size: it completes a size, for the end record). */
static int emit(vs_run_t *r, vs_json_t *j, int counts_size)
{
    int rc = vs_writer_record(r->writer, j, counts_size);
    vs_json_free(j);
    if (rc == -ECANCELED) /* the watchdog wrote the end record and is ending the process: */
        for (;;)          /* a message from here would only contradict its own */
            pause();
    return rc ? vs_run_fail(r, rc, "cannot write the results file") : 0;
}

/* "ranks", "hosts" and "same_host" of the pair a, b. */
static void pair_json(const vs_run_t *r, int a, int b, vs_json_t *j)
{
    vs_json_key(j, "ranks");
    vs_json_arr_begin(j);
    vs_json_int(j, a);
    vs_json_int(j, b);
    vs_json_arr_end(j);
    if (!r->hosts)
        return;
    const char *ha = r->hosts + (size_t)a * r->host_len, *hb = r->hosts + (size_t)b * r->host_len;
    vs_json_key(j, "hosts");
    vs_json_arr_begin(j);
    vs_json_str(j, ha);
    vs_json_str(j, hb);
    vs_json_arr_end(j);
    vs_json_kbool(j, "same_host", !strcmp(ha, hb));
}

int vs_record_size(vs_run_t *r, const vs_pattern_t *p, size_t bytes, long warmup, long batch,
                   int64_t *const *series, long n, uint64_t elapsed_ns)
{
    if (!r->writer)
        return 0;
    vs_json_t j;
    begin(&j, "size");
    vs_json_kint(&j, "bytes", (int64_t)bytes);
    vs_json_kint(&j, "iterations", n);
    vs_json_kint(&j, "warmup", warmup);
    vs_json_kint(&j, "batch", batch);
    for (int k = 0; k < VS_MAX_SERIES && p->series[k]; k++)
        int_array(&j, k == 0 ? "samples_ns" : p->series[k], series[k], n);
    vs_json_kint(&j, "elapsed_ns", (int64_t)elapsed_ns);
    if (r->pair_ranks[0] >= 0) {
        vs_json_key(&j, "pair");
        vs_json_obj_begin(&j);
        pair_json(r, r->pair_ranks[0], r->pair_ranks[1], &j);
        vs_json_obj_end(&j);
    }
    if (r->drift && isfinite(r->drift_ns))
        vs_json_knum(&j, "drift_ns", r->drift_ns);
    if (r->load && (isfinite(r->load_waited) || isfinite(r->load_others))) {
        vs_json_key(&j, "host_load");
        vs_json_obj_begin(&j);
        if (isfinite(r->load_waited))
            vs_json_knum(&j, "waited", r->load_waited);
        if (isfinite(r->load_others)) {
            vs_json_knum(&j, "others", r->load_others);
            vs_json_knum(&j, "steal", r->load_steal);
        }
        vs_json_obj_end(&j);
    }
    validate_json(r, &j);
    visit_json(r->visit, &j);
    vs_json_obj_end(&j);
    /* a size is completed once, however many pairs measured it */
    return emit(r, &j, r->pair_ranks[0] <= 0);
}

int vs_record_pair(vs_run_t *r, long pass, long round, long slot, int a, int b, size_t bytes, long warmup,
                   const int64_t *samples, long n, uint64_t elapsed_ns)
{
    if (!r->writer)
        return 0;
    vs_json_t j;
    begin(&j, "pair");
    vs_json_kint(&j, "pass", pass);
    vs_json_kint(&j, "round", round);
    if (slot >= 0)
        vs_json_kint(&j, "slot", slot);
    pair_json(r, a, b, &j);
    vs_json_kint(&j, "bytes", (int64_t)bytes);
    vs_json_kint(&j, "iterations", n);
    vs_json_kint(&j, "warmup", warmup);
    int_array(&j, "samples_ns", samples, n);
    vs_json_kint(&j, "elapsed_ns", (int64_t)elapsed_ns);
    vs_json_obj_end(&j);
    return emit(r, &j, 1);
}

int vs_record_aggregate(vs_run_t *r, size_t bytes, int pairs, long messages_per_pair, const vs_pairs_timing_t *t)
{
    if (!r->writer)
        return 0;
    double per_pair = (double)messages_per_pair * (double)bytes;
    double base = vs_pairs_time(t);
    vs_json_t j;
    begin(&j, "aggregate");
    vs_json_kint(&j, "bytes", (int64_t)bytes);
    vs_json_kint(&j, "pairs", pairs);
    vs_json_kint(&j, "messages_per_pair", messages_per_pair);
    vs_json_knum(&j, "elapsed_max_ns", t->max_ns);
    vs_json_knum(&j, "elapsed_mean_ns", t->mean_ns);
    vs_json_knum(&j, "span_ns", t->span_ns);
    vs_json_knum(&j, "overlap", t->overlap);
    vs_json_knum(&j, "bandwidth_MBps", base > 0 ? per_pair * pairs / base * 1e3 : NAN);
    vs_json_knum(&j, "message_rate", base > 0 ? (double)messages_per_pair * pairs / base * 1e9 : NAN);
    /* osu_mbw_mr's figure: the same bytes over the mean of the pairs' times */
    vs_json_knum(&j, "mean_time_bandwidth_MBps", t->mean_ns > 0 ? per_pair * pairs / t->mean_ns * 1e3 : NAN);
    visit_json(r->visit, &j);
    vs_json_obj_end(&j);
    return emit(r, &j, 0);
}

/* ---- the end record ---- */

void vs_record_end(vs_json_t *j, const vs_writer_end_t *e)
{
    char when[40];
    vs_iso8601_now(when, sizeof when);
    vs_json_obj_begin(j);
    vs_json_kstr(j, "record", "end");
    krun_id(j);
    vs_json_kstr(j, "status", e->status);
    vs_json_kstr(j, "message", e->message);
    vs_json_kint(j, "sizes_completed", e->sizes_completed);
    vs_json_kstr(j, "end_time", when);
    struct rusage ru; /* the writing rank's peak resident memory so far */
    vs_json_kint(j, "peak_rss_kib", getrusage(RUSAGE_SELF, &ru) == 0 ? (long long)ru.ru_maxrss : -1);
    for (int i = 0; i < e->n_extra; i++)
        vs_json_knum(j, e->extra_key[i], e->extra_val[i]);
    vs_json_obj_end(j);
}
