/* Topology queries behind placement: what the machine has, which processing
 * units (PUs) a policy picks, how two CPU sets relate, and binding the
 * calling thread.  With hwloc (VS_HAVE_HWLOC) everything is answered from
 * the hwloc topology; without it only the online CPU count is known and
 * every policy but explicit CPUs reports that it needs hwloc.
 *
 * CPU sets cross this interface as glibc cpu_set_t; PUs are OS indexes (the
 * numbers the kernel, taskset and /proc/<pid>/status use).
 */
#ifndef VS_TOPO_H
#define VS_TOPO_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct vs_topo vs_topo_t; /* opaque */

#define VS_TOPO_MAX_CACHES 8

typedef struct vs_topo_cache {
    int level;           /* 1, 2, 3, ... */
    char kind[12];       /* "data", "instruction", "unified" */
    uint64_t size_bytes; /* of one cache of this level */
    int line_bytes;
    int count;           /* caches of this level in the machine */
} vs_topo_cache_t;

typedef struct vs_topo_summary {
    int have_hwloc;
    char hwloc_version[32]; /* runtime library version, "" without hwloc */
    int packages, numa_nodes, cores, pus; /* -1 when unknown */
    int pus_per_core;                     /* SMT width of the first core, -1 unknown */
    int ncaches;
    vs_topo_cache_t caches[VS_TOPO_MAX_CACHES];
    char cpu_model[128]; /* hwloc's CPUModel of the first package, may be "" */
} vs_topo_summary_t;

int vs_topo_open(vs_topo_t **out, char *err, size_t errlen);
void vs_topo_close(vs_topo_t *t);
void vs_topo_summarize(const vs_topo_t *t, vs_topo_summary_t *s);

/* The CPUs this process may use at all (cgroup/cpuset), not its affinity. */
void vs_topo_allowed(const vs_topo_t *t, cpu_set_t *set);

/* 1 if policy names something the chooser knows ("auto" included). */
int vs_topo_policy_known(const char *policy);

/* Pick one PU (OS index) for each of n ranks sharing this host, under
 * policy ("auto" packs them on distinct cores sharing the deepest cache).
 * pus[i] is for the host's i-th local rank.  Returns 0, or -EINVAL with what
 * the machine lacks in err.  note (may be empty) says when the result shares
 * more than asked (e.g. same-package on a one-L3 package also shares L3). */
int vs_topo_choose(const vs_topo_t *t, const char *policy, int n, int *pus,
                   char *note, size_t notelen, char *err, size_t errlen);

/* How two CPU sets on this host relate: the deepest object covering both:
 * "pu", "core", "l1", "l2", "l3", "numa", "package", "machine".  *exact is 0
 * when a set spans more than one core (the relation is then an upper bound). */
const char *vs_topo_relation(const vs_topo_t *t, const cpu_set_t *a, const cpu_set_t *b,
                             int *exact, int *same_numa, int *same_package);

/* NUMA node (OS index) holding every CPU of set, or -1 (several/unknown). */
int vs_topo_numa_of(const vs_topo_t *t, const cpu_set_t *set);

/* Bind the calling thread to PU pu and its memory to that PU's NUMA node
 * (membind gets "node N", "unsupported" or "failed: why").  Returns 0 or a
 * negative errno with err. */
int vs_topo_bind_thread(const vs_topo_t *t, int pu, char *membind, size_t mblen,
                        char *err, size_t errlen);

/* The calling thread's binding as hwloc reads it back (hwloc_get_cpubind);
 * without hwloc the same as sched_getaffinity.  0 or negative errno. */
int vs_topo_get_thread_binding(const vs_topo_t *t, cpu_set_t *set);

/* "0-3,8" (the kernel's list format); "" for an empty set. */
void vs_cpuset_format(const cpu_set_t *set, char *buf, size_t len);
/* Parse that format (also plain "0,5"); 0 or -EINVAL. */
int vs_cpuset_parse(const char *s, cpu_set_t *set);

/* `versus-run --topology` body. */
int vs_topo_print(const vs_topo_t *t, FILE *out);

#endif
