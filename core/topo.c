/* Topology queries behind placement (see topo.h). */
#include "topo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if VS_HAVE_HWLOC
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#endif

static const char *const policies[] = {
    "auto", "same-core", "same-l2", "same-l3", "same-package",
    "cross-numa", "cross-package", "cross-node", "none", NULL,
};

int vs_topo_policy_known(const char *policy)
{
    for (int i = 0; policies[i]; i++)
        if (strcmp(policy, policies[i]) == 0)
            return 1;
    return 0;
}

/* ---- cpu_set_t list format ------------------------------------------- */

void vs_cpuset_format(const cpu_set_t *set, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int n = (e == c) ? snprintf(buf + used, len > used ? len - used : 0, "%s%d", used ? "," : "", c)
                         : snprintf(buf + used, len > used ? len - used : 0, "%s%d-%d", used ? "," : "", c, e);
        if (n < 0 || used + (size_t)n >= len)
            return; /* truncated: keep what fits */
        used += (size_t)n;
        c = e;
    }
}

int vs_cpuset_parse(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (!s || !*s)
        return -EINVAL;
    const char *p = s;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        long a = strtol(p, &end, 10), b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                return -EINVAL;
            b = strtol(p, &end, 10);
            p = end;
        }
        if (a < 0 || b < a || b >= CPU_SETSIZE)
            return -EINVAL;
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return -EINVAL;
        p++;
    }
}

#if VS_HAVE_HWLOC

struct vs_topo {
    hwloc_topology_t topo;
};

int vs_topo_open(vs_topo_t **out, char *err, size_t errlen)
{
    vs_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    if (hwloc_topology_init(&t->topo) < 0) {
        int e = errno ? errno : EIO;
        snprintf(err, errlen, "hwloc_topology_init: %s", strerror(e));
        free(t);
        return -e;
    }
    if (hwloc_topology_load(t->topo) < 0) {
        int e = errno ? errno : EIO;
        snprintf(err, errlen, "hwloc_topology_load: %s", strerror(e));
        hwloc_topology_destroy(t->topo);
        free(t);
        return -e;
    }
    *out = t;
    return 0;
}

void vs_topo_close(vs_topo_t *t)
{
    if (!t)
        return;
    hwloc_topology_destroy(t->topo);
    free(t);
}

static int count_type(const vs_topo_t *t, hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(t->topo, type);
    return n < 0 ? -1 : n; /* -1: several depths (not expected for these types) */
}

void vs_topo_summarize(const vs_topo_t *t, vs_topo_summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->have_hwloc = 1;
    /* the release the topology was built by; the API version only as a fallback */
    const char *rel = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t->topo), "hwlocVersion");
    unsigned v = hwloc_get_api_version();
    if (rel)
        snprintf(s->hwloc_version, sizeof s->hwloc_version, "%s", rel);
    else
        snprintf(s->hwloc_version, sizeof s->hwloc_version, "api %u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
    s->packages = count_type(t, HWLOC_OBJ_PACKAGE);
    s->numa_nodes = count_type(t, HWLOC_OBJ_NUMANODE);
    s->cores = count_type(t, HWLOC_OBJ_CORE);
    s->pus = count_type(t, HWLOC_OBJ_PU);
    hwloc_obj_t core0 = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, 0);
    s->pus_per_core = core0 ? hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, core0->cpuset, HWLOC_OBJ_PU) : -1;
    static const struct { hwloc_obj_type_t type; int level; const char *kind; } kinds[] = {
        {HWLOC_OBJ_L1CACHE, 1, "data"},    {HWLOC_OBJ_L1ICACHE, 1, "instruction"},
        {HWLOC_OBJ_L2CACHE, 2, "unified"}, {HWLOC_OBJ_L2ICACHE, 2, "instruction"},
        {HWLOC_OBJ_L3CACHE, 3, "unified"}, {HWLOC_OBJ_L3ICACHE, 3, "instruction"},
        {HWLOC_OBJ_L4CACHE, 4, "unified"}, {HWLOC_OBJ_L5CACHE, 5, "unified"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && s->ncaches < VS_TOPO_MAX_CACHES; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t->topo, kinds[i].type, 0);
        if (!c)
            continue;
        vs_topo_cache_t *vc = &s->caches[s->ncaches++];
        vc->level = kinds[i].level;
        const char *kind = kinds[i].kind;
        if (c->attr->cache.type == HWLOC_OBJ_CACHE_UNIFIED)
            kind = "unified";
        else if (c->attr->cache.type == HWLOC_OBJ_CACHE_DATA)
            kind = "data";
        snprintf(vc->kind, sizeof vc->kind, "%s", kind);
        vc->size_bytes = c->attr->cache.size;
        vc->line_bytes = (int)c->attr->cache.linesize;
        vc->count = count_type(t, kinds[i].type);
    }
    hwloc_obj_t pkg = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    snprintf(s->cpu_model, sizeof s->cpu_model, "%s", model ? model : "");
}

void vs_topo_allowed(const vs_topo_t *t, cpu_set_t *set)
{
    hwloc_cpuset_to_glibc_sched_affinity(t->topo, hwloc_topology_get_allowed_cpuset(t->topo),
                                         set, sizeof *set);
}

/* The "cores" placement spreads over: Core objects, or PUs where the
 * topology has no cores. */
static hwloc_obj_type_t unit_type(const vs_topo_t *t)
{
    return hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

static int first_pu(const vs_topo_t *t, hwloc_obj_t obj)
{
    hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(t->topo, obj->cpuset, HWLOC_OBJ_PU, 0);
    return pu ? (int)pu->os_index : -1;
}

static int units_in(const vs_topo_t *t, hwloc_obj_t obj)
{
    return hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, obj->cpuset, unit_type(t));
}

/* Pick n units inside obj so that they share as little as possible (spread)
 * or as much as possible (pack): greedy on the depth of common ancestors. */
static void pick_units(const vs_topo_t *t, hwloc_obj_t obj, int n, int spread, int *pus)
{
    hwloc_obj_type_t ut = unit_type(t);
    int avail = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, obj->cpuset, ut);
    hwloc_obj_t chosen[n];
    for (int k = 0; k < n; k++) {
        hwloc_obj_t best = NULL;
        int best_depth = 0;
        for (int i = 0; i < avail; i++) {
            hwloc_obj_t u = hwloc_get_obj_inside_cpuset_by_type(t->topo, obj->cpuset, ut, (unsigned)i);
            int taken = 0, depth = spread ? -1 : 1 << 30;
            for (int c = 0; c < k; c++) {
                if (chosen[c] == u)
                    taken = 1;
                int d = hwloc_get_common_ancestor_obj(t->topo, u, chosen[c])->depth;
                depth = spread ? (d > depth ? d : depth) : (d < depth ? d : depth);
            }
            if (taken)
                continue;
            /* spread: minimise the deepest shared ancestor; pack: maximise it */
            if (!best || (spread ? depth < best_depth : depth > best_depth)) {
                best = u;
                best_depth = depth;
            }
        }
        chosen[k] = best;
        pus[k] = first_pu(t, best);
    }
}

static hwloc_obj_type_t policy_type(const char *policy, const char **label)
{
    if (strcmp(policy, "same-l2") == 0) {
        *label = "L2 cache";
        return HWLOC_OBJ_L2CACHE;
    }
    if (strcmp(policy, "same-l3") == 0) {
        *label = "L3 cache";
        return HWLOC_OBJ_L3CACHE;
    }
    if (strcmp(policy, "same-package") == 0 || strcmp(policy, "cross-package") == 0) {
        *label = "package";
        return HWLOC_OBJ_PACKAGE;
    }
    *label = "NUMA node";
    return HWLOC_OBJ_NUMANODE;
}

static int choose_pack(const vs_topo_t *t, int n, int *pus, char *err, size_t errlen)
{
    hwloc_obj_type_t ut = unit_type(t);
    int nunits = hwloc_get_nbobjs_by_type(t->topo, ut);
    if (n > nunits) {
        snprintf(err, errlen, "%d ranks on this host but only %d %s", n, nunits,
                 ut == HWLOC_OBJ_CORE ? "cores" : "PUs");
        return -EINVAL;
    }
    /* deepest object holding n units: its units share the deepest cache */
    int top = hwloc_get_type_depth(t->topo, ut);
    for (int d = top; d >= 0; d--) {
        int nobj = hwloc_get_nbobjs_by_depth(t->topo, d);
        for (int i = 0; i < nobj; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_depth(t->topo, d, (unsigned)i);
            if (units_in(t, o) >= n) {
                pick_units(t, o, n, 0, pus);
                return 0;
            }
        }
    }
    snprintf(err, errlen, "no object of the topology holds %d cores", n);
    return -EINVAL;
}

static int choose_same_core(const vs_topo_t *t, int n, int *pus, char *err, size_t errlen)
{
    int ncores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE), most = 0;
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, (unsigned)i);
        int npu = hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, core->cpuset, HWLOC_OBJ_PU);
        most = npu > most ? npu : most;
        if (npu < n)
            continue;
        for (int k = 0; k < n; k++)
            pus[k] = (int)hwloc_get_obj_inside_cpuset_by_type(t->topo, core->cpuset, HWLOC_OBJ_PU,
                                                              (unsigned)k)->os_index;
        return 0;
    }
    snprintf(err, errlen, "same-core needs %d hardware threads (SMT siblings) in one core: "
             "no SMT here, every one of the %d cores has %d PU", n, ncores, most);
    return -EINVAL;
}

static int choose_same(const vs_topo_t *t, const char *policy, int n, int *pus, char *note,
                       size_t notelen, char *err, size_t errlen)
{
    const char *label;
    hwloc_obj_type_t type = policy_type(policy, &label);
    int nobj = hwloc_get_nbobjs_by_type(t->topo, type), most = 0;
    if (nobj <= 0) {
        snprintf(err, errlen, "%s needs an %s: hwloc sees none on this machine", policy, label);
        return -EINVAL;
    }
    for (int i = 0; i < nobj; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, type, (unsigned)i);
        int u = units_in(t, o);
        most = u > most ? u : most;
        if (u < n)
            continue;
        pick_units(t, o, n, 1, pus);
        /* does the pick share something deeper than asked for? */
        hwloc_obj_t a = hwloc_get_pu_obj_by_os_index(t->topo, (unsigned)pus[0]);
        for (int k = 1; k < n; k++)
            a = hwloc_get_common_ancestor_obj(t->topo, a, hwloc_get_pu_obj_by_os_index(t->topo, (unsigned)pus[k]));
        if (a != o && a->depth > o->depth) {
            char tn[32];
            hwloc_obj_type_snprintf(tn, sizeof tn, a, 0);
            snprintf(note, notelen, "%s: no %d cores in one %s without also sharing an %s; "
                     "the ranks share the %s", policy, n, label, tn, tn);
        }
        return 0;
    }
    snprintf(err, errlen, "%s needs %d distinct cores in one %s: each of the %d %s%s here holds "
             "%d core%s", policy, n, label, nobj, label, nobj == 1 ? "" : "s", most, most == 1 ? "" : "s");
    return -EINVAL;
}

static int choose_cross(const vs_topo_t *t, const char *policy, int n, int *pus, char *err, size_t errlen)
{
    const char *label;
    hwloc_obj_type_t type = policy_type(policy, &label);
    int nobj = hwloc_get_nbobjs_by_type(t->topo, type), usable = 0;
    for (int i = 0; i < nobj && usable < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, type, (unsigned)i);
        if (hwloc_bitmap_iszero(o->cpuset))
            continue; /* memory-only NUMA node */
        hwloc_obj_t u = hwloc_get_obj_inside_cpuset_by_type(t->topo, o->cpuset, unit_type(t), 0);
        if (u)
            pus[usable++] = first_pu(t, u);
    }
    if (usable >= n)
        return 0;
    snprintf(err, errlen, "%s needs %d %ss with CPUs (one per rank on this host): this machine has %d",
             policy, n, label, usable);
    return -EINVAL;
}

int vs_topo_choose(const vs_topo_t *t, const char *policy, int n, int *pus,
                   char *note, size_t notelen, char *err, size_t errlen)
{
    if (notelen)
        note[0] = '\0';
    if (n < 1)
        return -EINVAL;
    if (strcmp(policy, "auto") == 0 || strcmp(policy, "cross-node") == 0)
        return choose_pack(t, n, pus, err, errlen);
    if (strcmp(policy, "same-core") == 0)
        return choose_same_core(t, n, pus, err, errlen);
    if (strncmp(policy, "same-", 5) == 0)
        return choose_same(t, policy, n, pus, note, notelen, err, errlen);
    if (strcmp(policy, "cross-numa") == 0 || strcmp(policy, "cross-package") == 0)
        return choose_cross(t, policy, n, pus, err, errlen);
    snprintf(err, errlen, "unknown placement policy '%s'", policy);
    return -EINVAL;
}

static hwloc_bitmap_t to_hwloc(const vs_topo_t *t, const cpu_set_t *set)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (b)
        hwloc_cpuset_from_glibc_sched_affinity(t->topo, b, set, sizeof *set);
    return b;
}

static int within_one_core(const vs_topo_t *t, hwloc_const_bitmap_t b)
{
    hwloc_obj_t o = hwloc_get_obj_covering_cpuset(t->topo, b);
    return o && (o->type == HWLOC_OBJ_PU || o->type == HWLOC_OBJ_CORE);
}

static int nodes_of(const vs_topo_t *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t nodes)
{
    hwloc_cpuset_to_nodeset(t->topo, cpus, nodes);
    return hwloc_bitmap_weight(nodes);
}

const char *vs_topo_relation(const vs_topo_t *t, const cpu_set_t *a, const cpu_set_t *b,
                             int *exact, int *same_numa, int *same_package)
{
    const char *rel = "machine";
    hwloc_bitmap_t ha = to_hwloc(t, a), hb = to_hwloc(t, b), u = hwloc_bitmap_alloc();
    hwloc_bitmap_t na = hwloc_bitmap_alloc(), nb = hwloc_bitmap_alloc();
    *exact = *same_numa = *same_package = 0;
    if (!ha || !hb || !u || !na || !nb)
        goto free_maps;
    hwloc_bitmap_or(u, ha, hb);
    *exact = within_one_core(t, ha) && within_one_core(t, hb);
    int wa = nodes_of(t, ha, na), wb = nodes_of(t, hb, nb);
    *same_numa = wa == 1 && wb == 1 && hwloc_bitmap_isequal(na, nb);
    hwloc_obj_t pa = hwloc_get_ancestor_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE,
                                                    hwloc_get_obj_covering_cpuset(t->topo, ha));
    hwloc_obj_t pb = hwloc_get_ancestor_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE,
                                                    hwloc_get_obj_covering_cpuset(t->topo, hb));
    hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(t->topo, u);
    if (cover && cover->type == HWLOC_OBJ_PACKAGE)
        pa = pb = cover;
    *same_package = pa && pa == pb;
    for (hwloc_obj_t o = cover; o; o = o->parent) {
        if (o->type == HWLOC_OBJ_PU) { rel = "pu"; break; }
        if (o->type == HWLOC_OBJ_CORE) { rel = "core"; break; }
        if (hwloc_obj_type_is_cache(o->type)) {
            static const char *const lv[] = {"l1", "l1", "l2", "l3", "l4", "l5"};
            unsigned d = o->attr->cache.depth;
            rel = d < 6 ? lv[d] : "cache";
            break;
        }
        if (o->type == HWLOC_OBJ_PACKAGE) { rel = "package"; break; }
        if (*same_numa && o->memory_arity > 0) { rel = "numa"; break; }
        if (o->type == HWLOC_OBJ_MACHINE) { rel = *same_numa ? "numa" : "machine"; break; }
    }
free_maps:
    hwloc_bitmap_free(ha);
    hwloc_bitmap_free(hb);
    hwloc_bitmap_free(u);
    hwloc_bitmap_free(na);
    hwloc_bitmap_free(nb);
    return rel;
}

int vs_topo_numa_of(const vs_topo_t *t, const cpu_set_t *set)
{
    int node = -1;
    hwloc_bitmap_t c = to_hwloc(t, set), n = hwloc_bitmap_alloc();
    if (c && n && nodes_of(t, c, n) == 1)
        node = hwloc_bitmap_first(n);
    hwloc_bitmap_free(c);
    hwloc_bitmap_free(n);
    return node;
}

int vs_topo_bind_thread(const vs_topo_t *t, int pu, char *membind, size_t mblen,
                        char *err, size_t errlen)
{
    hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(t->topo, (unsigned)pu);
    if (!obj) {
        snprintf(err, errlen, "PU %d is not in this machine's (allowed) topology", pu);
        return -EINVAL;
    }
    if (hwloc_set_cpubind(t->topo, obj->cpuset, HWLOC_CPUBIND_THREAD) < 0) {
        int e = errno ? errno : EIO;
        snprintf(err, errlen, "hwloc_set_cpubind(PU %d): %s", pu, strerror(e));
        return -e;
    }
    const struct hwloc_topology_support *sup = hwloc_topology_get_support(t->topo);
    if (!sup->membind->set_thisthread_membind || !sup->membind->bind_membind) {
        snprintf(membind, mblen, "unsupported");
        return 0;
    }
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (!nodes)
        return -ENOMEM;
    hwloc_cpuset_to_nodeset(t->topo, obj->cpuset, nodes);
    if (hwloc_set_membind(t->topo, nodes, HWLOC_MEMBIND_BIND,
                          HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) < 0)
        snprintf(membind, mblen, "failed: %s", strerror(errno));
    else
        snprintf(membind, mblen, "node %d", hwloc_bitmap_first(nodes));
    hwloc_bitmap_free(nodes);
    return 0;
}

int vs_topo_get_thread_binding(const vs_topo_t *t, cpu_set_t *set)
{
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    if (!b)
        return -ENOMEM;
    int rc = 0;
    if (hwloc_get_cpubind(t->topo, b, HWLOC_CPUBIND_THREAD) < 0)
        rc = errno ? -errno : -EIO;
    else
        hwloc_cpuset_to_glibc_sched_affinity(t->topo, b, set, sizeof *set);
    hwloc_bitmap_free(b);
    return rc;
}

int vs_topo_print(const vs_topo_t *t, FILE *out)
{
    vs_topo_summary_t s;
    vs_topo_summarize(t, &s);
    fprintf(out, "hwloc %s\n", s.hwloc_version);
    fprintf(out, "CPU model:   %s\n", s.cpu_model[0] ? s.cpu_model : "(not reported)");
    fprintf(out, "packages:    %d\nNUMA nodes:  %d\ncores:       %d\nPUs:         %d (%d per core)\n",
            s.packages, s.numa_nodes, s.cores, s.pus, s.pus_per_core);
    for (int i = 0; i < s.ncaches; i++)
        fprintf(out, "L%d %-11s %d x %llu KiB (line %d B)\n", s.caches[i].level, s.caches[i].kind,
                s.caches[i].count, (unsigned long long)(s.caches[i].size_bytes / 1024), s.caches[i].line_bytes);
    fprintf(out, "\nPUs by core (OS indexes):\n");
    int ncores = hwloc_get_nbobjs_by_type(t->topo, unit_type(t));
    for (int i = 0; i < ncores; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t->topo, unit_type(t), (unsigned)i);
        char pus[128], chain[256] = "";
        hwloc_bitmap_list_snprintf(pus, sizeof pus, c->cpuset);
        size_t used = 0;
        for (hwloc_obj_t p = c->parent; p && used < sizeof chain; p = p->parent) {
            char tn[32];
            if (p->type == HWLOC_OBJ_L1ICACHE || p->type == HWLOC_OBJ_GROUP)
                continue;
            hwloc_obj_type_snprintf(tn, sizeof tn, p, 0);
            int w = snprintf(chain + used, sizeof chain - used, " %s#%u", tn, p->logical_index);
            if (w < 0)
                break;
            used += (size_t)w;
        }
        fprintf(out, "  core %u: PU %s  in%s\n", c->logical_index, pus, chain);
    }
    fprintf(out, "\nplacements for two ranks on this host:\n");
    for (int i = 0; policies[i]; i++) {
        int pus[2];
        char note[256], err[256];
        if (strcmp(policies[i], "cross-node") == 0) {
            fprintf(out, "  %-14s needs ranks 0 and 1 on different hosts (decided at run time); "
                    "each host binds as 'auto'\n", policies[i]);
            continue;
        }
        if (vs_topo_choose(t, policies[i], 2, pus, note, sizeof note, err, sizeof err) != 0) {
            fprintf(out, "  %-14s no: %s\n", policies[i], err);
            continue;
        }
        cpu_set_t a, b;
        CPU_ZERO(&a);
        CPU_ZERO(&b);
        CPU_SET(pus[0], &a);
        CPU_SET(pus[1], &b);
        int exact, sn, sp;
        const char *rel = vs_topo_relation(t, &a, &b, &exact, &sn, &sp);
        fprintf(out, "  %-14s yes: PUs %d,%d (they share: %s)%s%s\n", policies[i], pus[0], pus[1], rel,
                note[0] ? "; " : "", note);
    }
    fprintf(out, "  %-14s explicit PUs, one per rank, by rank (e.g. --cpus %d,%d)\n", "--cpus",
            0, s.pus > 1 ? s.pus - 1 : 0);
    return 0;
}

#else /* !VS_HAVE_HWLOC */

struct vs_topo {
    int npus;
};

int vs_topo_open(vs_topo_t **out, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    vs_topo_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    t->npus = n > 0 ? (int)n : -1;
    *out = t;
    return 0;
}

void vs_topo_close(vs_topo_t *t) { free(t); }

void vs_topo_summarize(const vs_topo_t *t, vs_topo_summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->packages = s->numa_nodes = s->cores = s->pus_per_core = -1;
    s->pus = t->npus;
}

void vs_topo_allowed(const vs_topo_t *t, cpu_set_t *set)
{
    (void)t;
    /* without hwloc the process's starting affinity is the best estimate;
     * the caller compares it with itself, so nothing counts as launcher-bound */
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0)
        CPU_ZERO(set);
}

int vs_topo_choose(const vs_topo_t *t, const char *policy, int n, int *pus,
                   char *note, size_t notelen, char *err, size_t errlen)
{
    (void)t; (void)n; (void)pus;
    if (notelen)
        note[0] = '\0';
    snprintf(err, errlen, "placement policy '%s' needs hwloc, and this build has none "
             "(install libhwloc-dev and reconfigure), or give explicit --cpus", policy);
    return -EINVAL;
}

const char *vs_topo_relation(const vs_topo_t *t, const cpu_set_t *a, const cpu_set_t *b,
                             int *exact, int *same_numa, int *same_package)
{
    (void)t;
    *exact = CPU_COUNT(a) == 1 && CPU_COUNT(b) == 1;
    *same_numa = *same_package = -1;
    return (*exact && CPU_EQUAL(a, b)) ? "pu" : "unknown";
}

int vs_topo_numa_of(const vs_topo_t *t, const cpu_set_t *set)
{
    (void)t; (void)set;
    return -1;
}

int vs_topo_bind_thread(const vs_topo_t *t, int pu, char *membind, size_t mblen,
                        char *err, size_t errlen)
{
    (void)t;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        int e = errno;
        snprintf(err, errlen, "sched_setaffinity(CPU %d): %s", pu, strerror(e));
        return -e;
    }
    snprintf(membind, mblen, "unsupported");
    return 0;
}

int vs_topo_get_thread_binding(const vs_topo_t *t, cpu_set_t *set)
{
    (void)t;
    return sched_getaffinity(0, sizeof *set, set) == 0 ? 0 : -errno;
}

int vs_topo_print(const vs_topo_t *t, FILE *out)
{
    fprintf(out, "this build has no hwloc: %d online CPUs; only explicit --cpus placement "
            "(sched_setaffinity) and 'auto' (keep the launcher's binding) are available\n", t->npus);
    return 0;
}

#endif
