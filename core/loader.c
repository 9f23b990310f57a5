#include "loader.h"
#include "memory.h"
#include "topts.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PREFIX "versus-"
#define SUFFIX ".so"
#define MAX_DIRS 16

/* Search path: $VERSUS_MODULE_PATH (an explicit choice wins, as LD_LIBRARY_PATH
 * does), the build tree next to the executable, the module directory relative to
 * the executable (an installation moved as a whole), the configured module directory. */
static int module_dirs(char dirs[][PATH_MAX], int max)
{
    int n = 0;
    const char *env = getenv("VERSUS_MODULE_PATH");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *d = strtok_r(copy, ":", &save); d && n < max; d = strtok_r(NULL, ":", &save))
            snprintf(dirs[n++], PATH_MAX, "%s", d);
        free(copy);
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0 && n < max) {
        exe[k] = '\0';
        char *dir = dirname(exe);
        snprintf(dirs[n++], PATH_MAX, "%s/../transports", dir);
        if (n < max)
            snprintf(dirs[n++], PATH_MAX, "%s/%s", dir, VS_MODULE_REL);
    }
    if (n < max)
        snprintf(dirs[n++], PATH_MAX, "%s", VS_MODULE_DIR);
    return n;
}

static int valid_name(const char *name)
{
    if (!*name || strlen(name) > 64)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

static int open_path(const char *path, int flags, const char *name, vs_module_t *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    void *h = dlopen(path, flags);
    if (!h) {
        snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
        return -EINVAL;
    }
    vs_transport_entry_fn entry = (vs_transport_entry_fn)dlsym(h, VS_TRANSPORT_ENTRY_SYMBOL);
    const vs_transport_ops_t *ops = entry ? entry() : NULL;
    if (!ops) {
        snprintf(err, errlen, "%s is not a versus transport module (no %s)", path, VS_TRANSPORT_ENTRY_SYMBOL);
        goto close_handle;
    }
    if (ops->abi < VS_TRANSPORT_ABI_OLDEST || ops->abi > VS_TRANSPORT_ABI) {
        snprintf(err, errlen, "%s was built for transport interface %u, this runner speaks %d (and still loads "
                              "%d): rebuild it", path, ops->abi, VS_TRANSPORT_ABI, VS_TRANSPORT_ABI_OLDEST);
        goto close_handle;
    }
    /* An interface-4 table ends before the one-sided operations; a newer one is
     * this header's size.  Core reads the copy, never past what the module has. */
    size_t want = ops->abi == VS_TRANSPORT_ABI ? sizeof *ops : VS_TRANSPORT_OPS_SIZE_4;
    if (ops->size < VS_TRANSPORT_OPS_SIZE_4 || ops->size > sizeof *ops || ops->size < want) {
        snprintf(err, errlen, "%s declares an ops table of %u bytes for interface %u, where %zu are expected "
                              "(at least %zu, at most %zu): rebuild it against this runner's header",
                 path, ops->size, ops->abi, want, (size_t)VS_TRANSPORT_OPS_SIZE_4, sizeof *ops);
        goto close_handle;
    }
    memset(&m->table, 0, sizeof m->table);
    memcpy(&m->table, ops, ops->size);
    ops = &m->table;
    if (name && strcmp(ops->name, name)) {
        snprintf(err, errlen, "%s calls itself '%s', not '%s'", path, ops->name, name);
        goto close_handle;
    }
    if (!ops->open || !ops->close || !ops->connect || !ops->query || !ops->post_send ||
        !ops->post_recv || !ops->test || !ops->wait || !ops->library_version) {
        snprintf(err, errlen, "%s lacks a mandatory operation", path);
        goto close_handle;
    }
    int nmem = !!ops->mem_alloc + !!ops->mem_free + !!ops->mem_fill + !!ops->mem_compare;
    /* all four, none, or mem_alloc and mem_free alone (host memory the module allocates) */
    if (nmem != 0 && nmem != 4 && !(nmem == 2 && ops->mem_alloc && ops->mem_free)) {
        snprintf(err, errlen, "%s declares %d of the 4 memory operations (mem_alloc, mem_free, mem_fill, "
                              "mem_compare): all, none, or mem_alloc and mem_free alone", path, nmem);
        goto close_handle;
    }
    if (!ops->bootstrap != !ops->launcher || (ops->launcher && (!ops->launcher->kind || !ops->launcher->program))) {
        snprintf(err, errlen, "%s: a module with its own bootstrap names its launcher (kind and program), "
                              "and only such a module does", path);
        goto close_handle;
    }
    int nrma = !!ops->rma_expose + !!ops->rma_attach + !!ops->rma_release + !!ops->put + !!ops->get +
               !!ops->rma_epoch;
    if (nrma != 0 && nrma != 6) {
        snprintf(err, errlen, "%s declares %d of the 6 one-sided operations (rma_expose, rma_attach, rma_release, "
                              "put, get, rma_epoch): all or none", path, nrma);
        goto close_handle;
    }
    if (!nrma && (ops->atomic || ops->rma_sync)) {
        snprintf(err, errlen, "%s declares atomic or rma_sync without the one-sided operations they belong to",
                 path);
        goto close_handle;
    }
    for (size_t i = 0; i < ops->n_options; i++) {
        const vs_option_t *op = ops->options ? &ops->options[i] : NULL;
        if (!op || !op->key || !*op->key || (op->kind == VS_OPT_CHOICE && !op->choices)) {
            snprintf(err, errlen, "%s: row %zu of its %zu options has no key (or a choice no choices)", path, i,
                     ops->n_options);
            goto close_handle;
        }
    }
    m->handle = h;
    m->ops = &m->table;
    snprintf(m->path, sizeof m->path, "%s", path);
    return 0;
close_handle:
    dlclose(h);
    return -EINVAL;
}

static int list_names(char dirs[][PATH_MAX], int nd, char names[][72], char paths[][PATH_MAX], int max)
{
    int n = 0;
    for (int d = 0; d < nd; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir)) && n < max) {
            size_t len = strlen(e->d_name);
            if (len <= strlen(PREFIX) + strlen(SUFFIX) || strncmp(e->d_name, PREFIX, strlen(PREFIX)) ||
                strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX))
                continue;
            char name[72];
            snprintf(name, sizeof name, "%.*s", (int)(len - strlen(PREFIX) - strlen(SUFFIX)), e->d_name + strlen(PREFIX));
            int dup = 0;
            for (int i = 0; i < n; i++)
                dup |= !strcmp(names[i], name);
            if (dup)
                continue; /* an earlier directory wins */
            snprintf(names[n], 72, "%s", name);
            snprintf(paths[n], PATH_MAX, "%s/%s", dirs[d], e->d_name);
            n++;
        }
        closedir(dir);
    }
    return n;
}

int vs_module_load(const char *name, vs_module_t *m, char *err, size_t errlen)
{
    if (!valid_name(name)) {
        snprintf(err, errlen, "invalid transport name '%s'", name);
        return -EINVAL;
    }
    char dirs[MAX_DIRS][PATH_MAX];
    int nd = module_dirs(dirs, MAX_DIRS);
    for (int d = 0; d < nd; d++) {
        char path[PATH_MAX + 80];
        snprintf(path, sizeof path, "%s/" PREFIX "%s" SUFFIX, dirs[d], name);
        if (access(path, F_OK) == 0)
            return open_path(path, RTLD_NOW | RTLD_GLOBAL, name, m, err, errlen);
    }
    static char names[64][72], paths[64][PATH_MAX];
    int n = list_names(dirs, nd, names, paths, 64);
    char known[512] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
    }
    snprintf(err, errlen, "unknown transport '%s'; modules found: %s (see versus-run --list)", name,
             n ? known : "none (set VERSUS_MODULE_PATH?)");
    return -ENOENT;
}

void vs_module_unload(vs_module_t *m)
{
    if (m->handle)
        dlclose(m->handle);
    memset(m, 0, sizeof *m);
}

static void json_list(vs_json_t *j, const char *key, const char *const *items)
{
    vs_json_key(j, key);
    vs_json_arr_begin(j);
    for (int i = 0; items && items[i]; i++)
        vs_json_str(j, items[i]);
    vs_json_arr_end(j);
}

/* What a module declares, as JSON (after "OK\t"): what campaigns and tests
 * ask instead of knowing transports by name. */
static void probe_json(const vs_module_t *m, const char *ver, const char *details, char *out, size_t len)
{
    const vs_transport_ops_t *ops = m->ops;
    vs_json_t j;
    vs_json_init(&j);
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "name", ops->name);
    vs_json_kbool(&j, "loads", 1);
    vs_json_kstr(&j, "summary", ops->summary ? ops->summary : "");
    vs_json_kstr(&j, "version", ver);
    vs_json_kstr(&j, "details", details);
    vs_json_kstr(&j, "path", m->path);
    vs_json_kbool(&j, "bootstrap", ops->bootstrap != NULL);
    vs_json_key(&j, "launcher");
    if (ops->launcher) {
        vs_json_obj_begin(&j);
        vs_json_kstr(&j, "kind", ops->launcher->kind);
        vs_json_kstr(&j, "program", ops->launcher->program);
        if (ops->launcher->srun_mpi)
            vs_json_kstr(&j, "srun_mpi", ops->launcher->srun_mpi);
        else {
            vs_json_key(&j, "srun_mpi");
            vs_json_null(&j);
        }
        vs_json_obj_end(&j);
    } else {
        vs_json_null(&j);
    }
    json_list(&j, "env_prefixes", ops->env_prefixes);
    json_list(&j, "env_wiring", ops->env_wiring);
    vs_json_kstr(&j, "memory", vs_mem_host(ops) ? "host" : "module");
    vs_json_kstr(&j, "allocator", ops->mem_alloc ? "module" : "core");
    vs_json_kint(&j, "interface", ops->abi);
    vs_json_kbool(&j, "rma", vs_module_has_rma(ops));
    vs_json_kbool(&j, "atomics", vs_module_has_atomics(ops));
    vs_roles_json(ops, &j);
    vs_json_key(&j, "options");
    vs_topts_json(ops, &j);
    vs_json_obj_end(&j);
    snprintf(out, len, "OK\t%s", j.oom ? "{}" : j.buf);
    vs_json_free(&j);
}

/* Probe one module in a child: "OK\t<summary>\t<version>\t<details>" or "ERR\t<reason>";
 * newlines in details travel as '\v'.  With json: "OK\t<object>" (probe_json). */
static void probe(const char *path, const char *name, int json, char *line, size_t len)
{
    int fds[2];
    if (pipe(fds)) {
        snprintf(line, len, "ERR\tpipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char err[1024], ver[512] = "", out[16384], details[4096] = "";
        vs_module_t m;
        if (open_path(path, RTLD_NOW | RTLD_LOCAL, name, &m, err, sizeof err))
            snprintf(out, sizeof out, "ERR\t%s", err);
        else if (m.ops->library_version(ver, sizeof ver))
            snprintf(out, sizeof out, "ERR\tloads, but cannot tell its library version");
        else {
            if (m.ops->describe && m.ops->describe(details, sizeof details))
                details[0] = '\0';
            size_t used = strlen(details);
            if (vs_module_has_rma(m.ops) && used + 2 < sizeof details)
                used += (size_t)snprintf(details + used, sizeof details - used, "%sone-sided: put, get%s",
                                         used ? "\n" : "", vs_module_has_atomics(m.ops) ? ", atomics" : "");
            if (used >= sizeof details)
                used = sizeof details - 1;
            if (m.ops->n_options && used + 2 < sizeof details) {
                if (used)
                    details[used++] = '\n';
                vs_topts_describe(m.ops, details + used, sizeof details - used);
            }
            for (char *p = details; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = *p == '\n' ? '\v' : ' ';
            for (char *p = ver; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            if (json) {
                for (char *p = details; *p; p++)
                    if (*p == '\v')
                        *p = '\n';
                probe_json(&m, ver, details, out, sizeof out);
            } else {
                snprintf(out, sizeof out, "OK\t%s\t%s\t%s", m.ops->summary ? m.ops->summary : "", ver, details);
            }
        }
        for (char *p = out; *p; p++)
            if (*p == '\n')
                *p = ' ';
        if (write(fds[1], out, strlen(out)) < 0)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    line[0] = '\0';
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    while (pid > 0 && got + 1 < len && poll(&pfd, 1, 10000) > 0) {
        ssize_t k = read(fds[0], line + got, len - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    line[got] = '\0';
    close(fds[0]);
    if (pid > 0) {
        int st;
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    if (!got)
        snprintf(line, len, "ERR\tthe probe crashed or hung while loading it");
}

int vs_module_list(FILE *out, int json)
{
    char dirs[MAX_DIRS][PATH_MAX];
    int nd = module_dirs(dirs, MAX_DIRS);
    static char names[64][72], paths[64][PATH_MAX];
    int n = list_names(dirs, nd, names, paths, 64);
    for (int i = 1; i < n; i++) /* by name, for a stable listing */
        for (int k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char tn[72], tp[PATH_MAX];
            memcpy(tn, names[k], sizeof tn);
            memcpy(names[k], names[k - 1], sizeof tn);
            memcpy(names[k - 1], tn, sizeof tn);
            memcpy(tp, paths[k], sizeof tp);
            memcpy(paths[k], paths[k - 1], sizeof tp);
            memcpy(paths[k - 1], tp, sizeof tp);
        }
    if (json) {
        fputs("[", out);
        for (int i = 0; i < n; i++) {
            char line[16384];
            probe(paths[i], names[i], 1, line, sizeof line);
            fputs(i ? ",\n " : "\n ", out);
            if (!strncmp(line, "OK\t", 3)) {
                fputs(line + 3, out);
                continue;
            }
            vs_json_t j;
            vs_json_init(&j);
            vs_json_obj_begin(&j);
            vs_json_kstr(&j, "name", names[i]);
            vs_json_kbool(&j, "loads", 0);
            vs_json_kstr(&j, "reason", strncmp(line, "ERR\t", 4) ? line : line + 4);
            vs_json_kstr(&j, "path", paths[i]);
            vs_json_obj_end(&j);
            fputs(j.oom ? "{}" : j.buf, out);
            vs_json_free(&j);
        }
        fputs("\n]\n", out);
        return 0;
    }
    fprintf(out, "%-10s %-6s %s\n", "TRANSPORT", "LOADS", "LIBRARY VERSION / REASON");
    for (int i = 0; i < n; i++) {
        char line[8192];
        probe(paths[i], names[i], 0, line, sizeof line);
        char *fields[4] = {line, NULL, NULL, NULL};
        for (int f = 1; f < 4; f++) {
            char *tab = fields[f - 1] ? strchr(fields[f - 1], '\t') : NULL;
            if (tab) {
                *tab = '\0';
                fields[f] = tab + 1;
            }
        }
        int ok = !strcmp(fields[0], "OK");
        fprintf(out, "%-10s %-6s %s\n", names[i], ok ? "yes" : "no", ok ? (fields[2] ? fields[2] : "") : (fields[1] ? fields[1] : ""));
        if (ok && fields[1] && *fields[1])
            fprintf(out, "%-10s %-6s   %s\n", "", "", fields[1]);
        char *save = NULL;
        for (char *d = ok && fields[3] ? strtok_r(fields[3], "\v", &save) : NULL; d; d = strtok_r(NULL, "\v", &save))
            fprintf(out, "%-10s %-6s   %s\n", "", "", d);
        fprintf(out, "%-10s %-6s   %s\n", "", "", paths[i]);
    }
    if (!n)
        fprintf(out, "no transport modules found (searched $VERSUS_MODULE_PATH, the build tree and %s)\n", VS_MODULE_DIR);
    return n ? 0 : 1;
}
