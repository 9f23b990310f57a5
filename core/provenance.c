/* Machine provenance (see provenance.h). */
#include "provenance.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static void copy_trimmed(char *dst, size_t len, const char *src)
{
    while (*src == ' ' || *src == '\t')
        src++;
    snprintf(dst, len, "%s", src);
    size_t n = strlen(dst);
    while (n && (dst[n - 1] == '\n' || dst[n - 1] == ' ' || dst[n - 1] == '\t'))
        dst[--n] = '\0';
}

/* First value of the first cpuinfo key found, in order of preference. */
static void read_cpuinfo(vs_provenance_t *p, int *hypervisor_flag)
{
    static const char *const model_keys[] = {"model name", "Processor", "cpu model", "cpu", NULL};
    int best = -1;
    char line[1024];
    FILE *f = fopen("/proc/cpuinfo", "r");
    *hypervisor_flag = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
            klen--;
        for (int k = 0; model_keys[k] && (best < 0 || k < best); k++) {
            if (strlen(model_keys[k]) == klen && strncmp(line, model_keys[k], klen) == 0) {
                copy_trimmed(p->cpu_model, sizeof p->cpu_model, colon + 1);
                best = k;
            }
        }
        if (klen == 5 && strncmp(line, "flags", 5) == 0 && strstr(colon, " hypervisor"))
            *hypervisor_flag = 1;
    }
    fclose(f);
}

static void read_hypervisor(vs_provenance_t *p, int flag)
{
    p->virtualization[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    if (flag) {
        unsigned a, b, c, d;
        char sig[13];
        __cpuid(0x40000000, a, b, c, d);
        memcpy(sig, &b, 4);
        memcpy(sig + 4, &c, 4);
        memcpy(sig + 8, &d, 4);
        sig[12] = '\0';
        int printable = sig[0] != '\0';
        for (int i = 0; sig[i]; i++)
            if (sig[i] < 0x20 || sig[i] > 0x7e)
                printable = 0;
        if (printable) {
            copy_trimmed(p->virtualization, sizeof p->virtualization, sig);
            return;
        }
    }
#endif
    if (flag) {
        snprintf(p->virtualization, sizeof p->virtualization, "hypervisor");
        return;
    }
    /* non-x86 or no flag: the kernel may still name one */
    FILE *f = fopen("/sys/hypervisor/type", "r");
    if (f) {
        char buf[48];
        if (fgets(buf, sizeof buf, f))
            copy_trimmed(p->virtualization, sizeof p->virtualization, buf);
        fclose(f);
    }
}

static void read_governor(vs_provenance_t *p, int cpu)
{
    char path[96], buf[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu < 0 ? 0 : cpu);
    p->governor[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, sizeof buf, f))
        copy_trimmed(p->governor, sizeof p->governor, buf);
    fclose(f);
}

void vs_provenance_read(vs_provenance_t *p, int cpu)
{
    struct utsname u;
    int flag;
    memset(p, 0, sizeof *p);
    if (gethostname(p->host, sizeof p->host - 1) != 0)
        snprintf(p->host, sizeof p->host, "unknown");
    if (uname(&u) == 0)
        snprintf(p->kernel, sizeof p->kernel, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
    read_cpuinfo(p, &flag);
    read_hypervisor(p, flag);
    read_governor(p, cpu);
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    if (!step)
        step = getenv("SLURM_STEPID");
    snprintf(p->slurm_job_id, sizeof p->slurm_job_id, "%s", job ? job : "");
    snprintf(p->slurm_step_id, sizeof p->slurm_step_id, "%s", step ? step : "");
}

/* The dynamic loader is the object whose name is the program's interpreter;
 * among the loaded objects it is the one named ld-*.so*. */
static int find_loader(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
    if (base && !strncmp(base + 1, "ld-", 3) && strstr(base, ".so")) {
        snprintf(data, 512, "%s", name);
        return 1;
    }
    return 0;
}

const vs_copy_thresholds_t *vs_provenance_copy_thresholds(void)
{
    static vs_copy_thresholds_t c = {-2, -2};
    if (c.rep_movsb != -2)
        return &c;
    c.rep_movsb = c.non_temporal = -1;
    char loader[512] = "", cmd[600], line[256];
    dl_iterate_phdr(find_loader, loader);
    if (!loader[0] || strchr(loader, '\'') || access(loader, X_OK))
        return &c;
    snprintf(cmd, sizeof cmd, "'%s' --list-tunables 2>/dev/null", loader);
    fflush(NULL);
    FILE *f = popen(cmd, "r");
    if (!f)
        return &c;
    while (fgets(line, sizeof line, f)) {
        long long *to = !strncmp(line, "glibc.cpu.x86_rep_movsb_threshold:", 34)        ? &c.rep_movsb
                        : !strncmp(line, "glibc.cpu.x86_non_temporal_threshold:", 37) ? &c.non_temporal
                                                                                      : NULL;
        const char *colon = strchr(line, ':');
        if (to && colon) {
            char *end;
            long long v = strtoll(colon + 1, &end, 0);
            if (end != colon + 1 && v > 0)
                *to = v;
        }
    }
    pclose(f);
    return &c;
}
