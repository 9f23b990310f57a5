/* Finding and loading transport modules (versus-NAME.so). */
#ifndef VS_LOADER_H
#define VS_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include <versus/transport.h>

typedef struct vs_module {
    void *handle;
    /* The module's table copied into a full-size one (table), the rest zero:
     * an interface-4 table is shorter, and core never reads past what the
     * module declared (ops->size still says how long it was). */
    const vs_transport_ops_t *ops;
    vs_transport_ops_t table;
    char path[4096];
} vs_module_t;

/* The module has the one-sided operations (interface 5, and all of them). */
static inline int vs_module_has_rma(const vs_transport_ops_t *ops) { return VS_HAS_RMA(ops); }
static inline int vs_module_has_atomics(const vs_transport_ops_t *ops)
{
    return VS_HAS_RMA(ops) && ops->atomic != NULL;
}

/* Load module `name` (interface VS_TRANSPORT_ABI_OLDEST to VS_TRANSPORT_ABI).
 * m->ops points at m->table: m must not be copied.  Returns 0; -ENOENT (not found: err lists what is
 * there), or -EINVAL (found but unusable) with the reason in err. */
int vs_module_load(const char *name, vs_module_t *m, char *err, size_t errlen);
void vs_module_unload(vs_module_t *m);

/* --list: every module found, whether it loads, its library version.
 * Each module is probed in a child process so that libraries never meet. */
int vs_module_list(FILE *out, int json);

#endif
