/* Finding and loading transport modules (versus-NAME.so). */
#ifndef VS_LOADER_H
#define VS_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include <versus/transport.h>

typedef struct vs_module {
    void *handle;
    const vs_transport_ops_t *ops;
    char path[4096];
} vs_module_t;

/* Load module `name`.  Returns 0; -ENOENT (not found: err lists what is
 * there), or -EINVAL (found but unusable) with the reason in err. */
int vs_module_load(const char *name, vs_module_t *m, char *err, size_t errlen);
void vs_module_unload(vs_module_t *m);

/* --list: every module found, whether it loads, its library version.
 * Each module is probed in a child process so that libraries never meet. */
int vs_module_list(FILE *out, int json);

#endif
