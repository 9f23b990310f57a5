/* Placement: which processing unit each rank runs on, chosen with hwloc,
 * bound, verified, and recorded. */
#ifndef VS_PLACEMENT_H
#define VS_PLACEMENT_H

#include <stdint.h>
#include <stdio.h>

#include <versus/bootstrap.h>

#include "provenance.h"
#include "topo.h"

typedef struct vs_placement_req {
    const char *policy; /* "auto" (default), "same-core", "same-l2", "same-l3", "same-package",
                           "cross-numa", "cross-package", "cross-node", or NULL */
    const char *cpus;   /* explicit "--cpus 0,5" (one per rank), or NULL */
} vs_placement_req_t;

#define VS_PL_WARN 768

/* One rank's facts; exchanged as a fixed-size blob through the bootstrap. */
typedef struct vs_rank_place {
    int32_t status; /* 0 or negative errno */
    int32_t rank, local_rank, nlocal;
    int32_t launcher_bound; /* affinity at start narrower than the allowed CPUs */
    int32_t bound_by_us;
    int32_t requested_pu; /* -1: versus did not bind */
    int32_t cpu_seen;     /* sched_getcpu() right after binding */
    int32_t numa_node;    /* -1: several or unknown */
    int32_t pid;
    char cpus_before[128], cpus_after[128], cpus_hwloc[128];
    char membind[64];
    char warnings[VS_PL_WARN]; /* '\n'-separated */
    char err[512];
    vs_provenance_t prov;
} vs_rank_place_t;

/* The run's placement, built by vs_placement_apply and written into the run
 * record by record.c. */
typedef struct vs_placement {
    char policy[24];
    char cpus_arg[128]; /* "" without --cpus */
    int size, rank;
    vs_rank_place_t *ranks;
    char relation[16];
    int relation_exact, same_numa, same_package;
    char warnings[2048]; /* run-wide, '\n'-separated */
    vs_topo_summary_t summary; /* this rank's host */
} vs_placement_t;

/* Parse/validate the request without touching the machine: -EINVAL with err
 * for an unknown policy or a malformed cpu list. */
int vs_placement_check_args(const vs_placement_req_t *req, char *err, size_t errlen);

/* Choose, bind and verify this rank's placement; all ranks call it
 * collectively (it uses bs->exchange).  A policy this machine cannot satisfy
 * returns -EINVAL with the reason in err (exit 2, before any measurement). */
int vs_placement_apply(const vs_placement_req_t *req, vs_bootstrap_t *bs,
                       vs_placement_t **out, char *err, size_t errlen);

void vs_placement_free(vs_placement_t *p);

/* `versus-run --topology`: what hwloc sees and which placements are possible. */
int vs_topology_print(FILE *out);

#endif
