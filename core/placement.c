/* STUB — replaced by the hwloc placement implementation. */
#include "placement.h"

#include <errno.h>
#include <stdlib.h>

struct vs_placement { int unused; };

int vs_placement_check_args(const vs_placement_req_t *req, char *err, size_t errlen)
{
    (void)req; (void)err; (void)errlen;
    return 0;
}

int vs_placement_apply(const vs_placement_req_t *req, vs_bootstrap_t *bs,
                       vs_placement_t **out, char *err, size_t errlen)
{
    (void)req; (void)bs; (void)err; (void)errlen;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : -ENOMEM;
}

void vs_placement_json(const vs_placement_t *p, vs_json_t *j) { (void)p; vs_json_null(j); }
void vs_topology_json(const vs_placement_t *p, vs_json_t *j) { (void)p; vs_json_null(j); }
void vs_placement_free(vs_placement_t *p) { free(p); }
int vs_topology_print(FILE *out) { fprintf(out, "topology: not available in this build\n"); return 0; }
