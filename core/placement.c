/* Placement: choose, bind, verify and record where each rank runs.
 *
 * Rules (also in docs/placement.md):
 *   - `auto` keeps a binding the launcher made (the process's affinity at
 *     start is narrower than the CPUs it is allowed); otherwise it packs the
 *     host's ranks on distinct cores sharing the deepest cache.
 *   - Any other policy, and --cpus, is decided by versus: it wins over a
 *     launcher binding, and when the launcher had bound the rank elsewhere a
 *     warning is recorded and printed.
 *   - Ranks that end up sharing CPUs, or a launcher that bound two ranks to
 *     the same set, give a warning in the record, never a silent fix.
 *   - A policy this machine cannot satisfy fails on every rank, before any
 *     measurement, with -EINVAL and the missing piece in the message.
 */
#include "placement.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void append_line(char *buf, size_t len, const char *line)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    snprintf(buf + used, len - used, "%s%s", used ? "\n" : "", line);
}

/* Explicit list "0,5": one CPU per rank, in rank order. */
static int parse_cpu_list(const char *s, int *cpus, int max)
{
    int n = 0;
    const char *p = s;
    if (!s || !*s)
        return -EINVAL;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9' || n == max)
            return -EINVAL;
        long c = strtol(p, &end, 10);
        if (c >= CPU_SETSIZE)
            return -EINVAL;
        cpus[n++] = (int)c;
        p = end;
        if (*p == '\0')
            return n;
        if (*p != ',')
            return -EINVAL;
        p++;
    }
}

#define VS_MAX_CPU_LIST 1024

int vs_placement_check_args(const vs_placement_req_t *req, char *err, size_t errlen)
{
    if (req->policy && !vs_topo_policy_known(req->policy)) {
        snprintf(err, errlen, "unknown --placement '%s' (auto, same-core, same-l2, same-l3, same-package, "
                 "cross-numa, cross-package, cross-node, none)", req->policy);
        return -EINVAL;
    }
    if (req->cpus) {
        int cpus[VS_MAX_CPU_LIST];
        if (parse_cpu_list(req->cpus, cpus, VS_MAX_CPU_LIST) < 0) {
            snprintf(err, errlen, "--cpus '%s': expected CPU numbers separated by commas, one per rank "
                     "(e.g. 0,5), each below %d", req->cpus, CPU_SETSIZE);
            return -EINVAL;
        }
        if (req->policy && strcmp(req->policy, "auto") != 0) {
            snprintf(err, errlen, "give either --placement %s or --cpus %s, not both", req->policy, req->cpus);
            return -EINVAL;
        }
    }
    return 0;
}

/* Which PU should this rank take?  *pu = -1 leaves the binding alone. */
static int decide(const vs_placement_t *p, const vs_topo_t *topo, const char *hosts,
                  vs_rank_place_t *me, const cpu_set_t *allowed, int *pu)
{
    char note[256], err[256];
    int two_hosts = p->size >= 2 && strcmp(hosts, hosts + 64) != 0;
    *pu = -1;
    if (p->cpus_arg[0]) {
        int cpus[VS_MAX_CPU_LIST], n = parse_cpu_list(p->cpus_arg, cpus, VS_MAX_CPU_LIST);
        char list[128];
        if (n != p->size) {
            snprintf(me->err, sizeof me->err, "--cpus %s names %d CPU%s for %d ranks (one per rank)",
                     p->cpus_arg, n, n == 1 ? "" : "s", p->size);
            return -EINVAL;
        }
        vs_cpuset_format(allowed, list, sizeof list);
        if (!CPU_ISSET(cpus[me->rank], allowed)) {
            snprintf(me->err, sizeof me->err, "--cpus: CPU %d (rank %d) is not available on %s "
                     "(allowed CPUs: %s)", cpus[me->rank], me->rank, me->prov.host, list);
            return -EINVAL;
        }
        *pu = cpus[me->rank];
        return 0;
    }
    if (strcmp(p->policy, "none") == 0)
        return 0; /* every rank stays where the launcher or the OS put it */
    int keep = strcmp(p->policy, "auto") == 0 || strcmp(p->policy, "cross-node") == 0;
    if (strcmp(p->policy, "cross-node") == 0 && !two_hosts) {
        snprintf(me->err, sizeof me->err, "cross-node needs ranks 0 and 1 on different hosts: "
                 "all %d ranks run on '%s'", p->size, hosts);
        return -EINVAL;
    }
    if (!keep && two_hosts) {
        snprintf(me->err, sizeof me->err, "placement %s needs ranks 0 and 1 on one host; they run on "
                 "'%s' and '%s' (use cross-node or auto)", p->policy, hosts, hosts + 64);
        return -EINVAL;
    }
    if (keep && me->launcher_bound)
        return 0; /* the launcher decided; recorded as such */
    int pus[me->nlocal];
    int rc = vs_topo_choose(topo, keep ? "auto" : p->policy, me->nlocal, pus, note, sizeof note,
                            err, sizeof err);
    if (rc < 0 && keep) {
        /* auto never fails a run: leave the ranks where the OS puts them */
        char w[400];
        snprintf(w, sizeof w, "rank %d: not bound: %s", me->rank, err);
        append_line(me->warnings, sizeof me->warnings, w);
        return 0;
    }
    if (rc < 0) {
        snprintf(me->err, sizeof me->err, "%s", err);
        return rc;
    }
    if (note[0] && me->local_rank == 0) {
        char w[400];
        snprintf(w, sizeof w, "rank %d: %s", me->rank, note);
        append_line(me->warnings, sizeof me->warnings, w);
    }
    *pu = pus[me->local_rank];
    return 0;
}

static int bind_and_verify(const vs_placement_t *p, const vs_topo_t *topo, vs_rank_place_t *me, int pu,
                           const cpu_set_t *before)
{
    char w[400];
    if (me->launcher_bound && !CPU_ISSET(pu, before)) {
        snprintf(w, sizeof w, "rank %d: the launcher bound it to CPUs %s; %s moves it to CPU %d "
                 "(an explicit placement wins over the launcher's)", me->rank, me->cpus_before,
                 p->cpus_arg[0] ? "--cpus" : p->policy, pu);
        append_line(me->warnings, sizeof me->warnings, w);
    }
    int rc = vs_topo_bind_thread(topo, pu, me->membind, sizeof me->membind, me->err, sizeof me->err);
    if (rc < 0)
        return rc;
    me->bound_by_us = 1;
    if (strncmp(me->membind, "failed", 6) == 0) {
        snprintf(w, sizeof w, "rank %d: memory binding %s", me->rank, me->membind);
        append_line(me->warnings, sizeof me->warnings, w);
    }
    cpu_set_t want, got, hw;
    CPU_ZERO(&want);
    CPU_SET(pu, &want);
    if (sched_getaffinity(0, sizeof got, &got) != 0)
        return -errno;
    rc = vs_topo_get_thread_binding(topo, &hw);
    if (rc < 0)
        return rc;
    vs_cpuset_format(&hw, me->cpus_hwloc, sizeof me->cpus_hwloc);
    if (!CPU_EQUAL(&got, &want) || !CPU_EQUAL(&hw, &want)) {
        char g[128];
        vs_cpuset_format(&got, g, sizeof g);
        snprintf(me->err, sizeof me->err, "binding rank %d to CPU %d did not hold: sched_getaffinity "
                 "reads %s, hwloc_get_cpubind reads %s", me->rank, pu, g, me->cpus_hwloc);
        return -EIO;
    }
    return 0;
}

/* Run-wide warnings from every rank's facts; relation of ranks 0 and 1. */
static void relate(vs_placement_t *p, const vs_topo_t *topo)
{
    char w[512];
    /* more ranks than cores: every pair would be named; the first few are, then a count */
    enum { SHARED_NAMED = 3 };
    int shared = 0;
    for (int i = 0; i < p->size; i++)
        for (int j = i + 1; j < p->size; j++) {
            const vs_rank_place_t *a = &p->ranks[i], *b = &p->ranks[j];
            cpu_set_t sa, sb, both;
            if (strcmp(a->prov.host, b->prov.host) != 0)
                continue;
            if (a->launcher_bound && b->launcher_bound && strcmp(a->cpus_before, b->cpus_before) == 0) {
                snprintf(w, sizeof w, "the launcher bound ranks %d and %d to the same CPUs %s%s", i, j,
                         a->cpus_before, a->bound_by_us && b->bound_by_us ? " (versus rebound them)" : "");
                append_line(p->warnings, sizeof p->warnings, w);
            }
            if (vs_cpuset_parse(a->cpus_after, &sa) == 0 && vs_cpuset_parse(b->cpus_after, &sb) == 0) {
                CPU_AND(&both, &sa, &sb);
                if (CPU_COUNT(&both) > 0 && ++shared <= SHARED_NAMED) {
                    char l[128];
                    vs_cpuset_format(&both, l, sizeof l);
                    snprintf(w, sizeof w, "ranks %d and %d may run on the same CPU%s %s: they compete "
                             "for it", i, j, CPU_COUNT(&both) > 1 ? "s" : "", l);
                    append_line(p->warnings, sizeof p->warnings, w);
                }
            }
        }
    if (shared > SHARED_NAMED) {
        snprintf(w, sizeof w, "and %d more pairs of ranks may run on the same CPUs", shared - SHARED_NAMED);
        append_line(p->warnings, sizeof p->warnings, w);
    }
    int two_hosts = p->size >= 2 && strcmp(p->ranks[0].prov.host, p->ranks[1].prov.host) != 0;
    snprintf(p->relation, sizeof p->relation, "%s", p->size < 2 ? "self" : two_hosts ? "cross-node" : "none");
    p->relation_exact = 1;
    p->same_numa = p->same_package = 0;
    if (p->size < 2 || two_hosts)
        return;
    cpu_set_t s0, s1;
    if (vs_cpuset_parse(p->ranks[0].cpus_after, &s0) < 0 || vs_cpuset_parse(p->ranks[1].cpus_after, &s1) < 0)
        return;
    const char *rel = vs_topo_relation(topo, &s0, &s1, &p->relation_exact, &p->same_numa, &p->same_package);
    snprintf(p->relation, sizeof p->relation, "%s", rel);
    if (!p->relation_exact) {
        snprintf(w, sizeof w, "rank 0 (CPUs %s) or rank 1 (CPUs %s) is not held to one core: '%s' is "
                 "the closest they are guaranteed to share, the OS may place them closer",
                 p->ranks[0].cpus_after, p->ranks[1].cpus_after, rel);
        append_line(p->warnings, sizeof p->warnings, w);
    }
}

static void print_warnings(const char *lines, FILE *out)
{
    const char *s = lines;
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        fprintf(out, "versus-run: placement warning: %.*s\n", n, s);
        s += n + (nl ? 1 : 0);
    }
}

int vs_placement_apply(const vs_placement_req_t *req, vs_bootstrap_t *bs,
                       vs_placement_t **out, char *err, size_t errlen)
{
    int rc = vs_placement_check_args(req, err, errlen);
    if (rc < 0)
        return rc;
    vs_placement_t *p = calloc(1, sizeof *p);
    char *hosts = calloc((size_t)bs->size, 64);
    if (!p || !hosts) {
        free(p);
        free(hosts);
        return -ENOMEM;
    }
    p->ranks = calloc((size_t)bs->size, sizeof *p->ranks);
    if (!p->ranks) {
        free(hosts);
        free(p);
        return -ENOMEM;
    }
    p->size = bs->size;
    p->rank = bs->rank;
    snprintf(p->policy, sizeof p->policy, "%s", req->cpus ? "cpus" : req->policy ? req->policy : "auto");
    snprintf(p->cpus_arg, sizeof p->cpus_arg, "%s", req->cpus ? req->cpus : "");

    /* Every rank takes part in both exchanges, whatever fails locally, so a
     * failure on one rank never leaves the others waiting. */
    vs_rank_place_t *me = calloc(1, sizeof *me);
    if (!me) {
        rc = -ENOMEM;
        goto free_placement;
    }
    me->rank = bs->rank;
    me->pid = (int32_t)getpid();
    me->requested_pu = me->cpu_seen = me->numa_node = -1;
    vs_provenance_read(&me->prov, -1);
    char myhost[64] = {0};
    snprintf(myhost, sizeof myhost, "%s", me->prov.host);
    rc = bs->exchange(bs, myhost, hosts, 64);
    if (rc < 0) {
        snprintf(err, errlen, "placement: exchanging host names failed: %s", strerror(-rc));
        goto free_me;
    }
    for (int r = 0; r < bs->size; r++)
        if (strcmp(hosts + 64 * r, myhost) == 0) {
            me->local_rank += r < bs->rank;
            me->nlocal++;
        }

    vs_topo_t *topo = NULL;
    cpu_set_t before, allowed, after;
    int pu = -1;
    me->status = vs_topo_open(&topo, me->err, sizeof me->err);
    if (me->status == 0 && sched_getaffinity(0, sizeof before, &before) != 0)
        me->status = -errno;
    if (me->status == 0) {
        vs_topo_summarize(topo, &p->summary);
        vs_topo_allowed(topo, &allowed);
        vs_cpuset_format(&before, me->cpus_before, sizeof me->cpus_before);
        me->launcher_bound = !CPU_EQUAL(&before, &allowed);
        snprintf(me->membind, sizeof me->membind, "not set");
        me->status = decide(p, topo, hosts, me, &allowed, &pu);
    }
    if (me->status == 0 && pu >= 0) {
        me->requested_pu = pu;
        me->status = bind_and_verify(p, topo, me, pu, &before);
    }
    if (me->status == 0) {
        if (sched_getaffinity(0, sizeof after, &after) == 0)
            vs_cpuset_format(&after, me->cpus_after, sizeof me->cpus_after);
        if (!me->cpus_hwloc[0] && vs_topo_get_thread_binding(topo, &after) == 0)
            vs_cpuset_format(&after, me->cpus_hwloc, sizeof me->cpus_hwloc);
        me->cpu_seen = sched_getcpu();
        if (vs_cpuset_parse(me->cpus_after, &after) == 0)
            me->numa_node = vs_topo_numa_of(topo, &after);
        vs_provenance_read(&me->prov, pu >= 0 ? pu : me->cpu_seen);
    }
    if (me->status < 0 && !me->err[0])
        snprintf(me->err, sizeof me->err, "placement failed: %s", strerror(-me->status));

    rc = bs->exchange(bs, me, p->ranks, sizeof *me);
    if (rc < 0) {
        snprintf(err, errlen, "placement: exchanging bindings failed: %s", strerror(-rc));
        goto close_topo;
    }
    for (int r = 0; r < bs->size; r++)
        if (p->ranks[r].status < 0) {
            rc = p->ranks[r].status;
            if (r == bs->rank)
                snprintf(err, errlen, "%s", p->ranks[r].err);
            else
                snprintf(err, errlen, "rank %d: %s", r, p->ranks[r].err);
            goto close_topo;
        }
    print_warnings(me->warnings, stderr);
    relate(p, topo);
    if (bs->rank == 0)
        print_warnings(p->warnings, stderr);
    vs_topo_close(topo);
    free(me);
    free(hosts);
    *out = p;
    return 0;

close_topo:
    vs_topo_close(topo);
free_me:
    free(me);
free_placement:
    free(hosts);
    vs_placement_free(p);
    return rc;
}

void vs_placement_free(vs_placement_t *p)
{
    if (!p)
        return;
    free(p->ranks);
    free(p);
}

int vs_topology_print(FILE *out)
{
    vs_topo_t *topo;
    char err[256];
    int rc = vs_topo_open(&topo, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "versus-run: topology: %s\n", err);
        return rc;
    }
    vs_provenance_t pv;
    vs_provenance_read(&pv, -1);
    fprintf(out, "host:        %s\nkernel:      %s\nCPU (cpuinfo): %s\nvirtualised: %s\ngovernor:    %s\n",
            pv.host, pv.kernel, pv.cpu_model, pv.virtualization[0] ? pv.virtualization : "no sign of it",
            pv.governor[0] ? pv.governor : "not readable");
    rc = vs_topo_print(topo, out);
    vs_topo_close(topo);
    return rc;
}
