/* Placement: which processing unit each rank runs on, chosen with hwloc,
 * bound, verified, and recorded. */
#ifndef VS_PLACEMENT_H
#define VS_PLACEMENT_H

#include <stdio.h>

#include <versus/bootstrap.h>

#include "json.h"

typedef struct vs_placement_req {
    const char *policy; /* "auto" (default), "same-core", "same-l2", "same-l3", "same-package",
                           "cross-numa", "cross-package", "cross-node", or NULL */
    const char *cpus;   /* explicit "--cpus 0,5" (one per rank), or NULL */
} vs_placement_req_t;

typedef struct vs_placement vs_placement_t; /* opaque, owned by placement.c */

/* Parse/validate the request without touching the machine: -EINVAL with err
 * for an unknown policy or a malformed cpu list. */
int vs_placement_check_args(const vs_placement_req_t *req, char *err, size_t errlen);

/* Choose, bind and verify this rank's placement; all ranks call it
 * collectively (it uses bs->exchange).  A policy this machine cannot satisfy
 * returns -EINVAL with the reason in err (exit 2, before any measurement). */
int vs_placement_apply(const vs_placement_req_t *req, vs_bootstrap_t *bs,
                       vs_placement_t **out, char *err, size_t errlen);

/* Write the run record's "placement" value (an object) and "topology" value. */
void vs_placement_json(const vs_placement_t *p, vs_json_t *j);
void vs_topology_json(const vs_placement_t *p, vs_json_t *j);

void vs_placement_free(vs_placement_t *p);

/* `versus-run --topology`: what hwloc sees and which placements are possible. */
int vs_topology_print(FILE *out);

#endif
