/* Provenance of the machine a rank runs on: kernel, CPU model, frequency
 * governor, virtualisation hint, batch-system ids.  Read from uname,
 * /proc/cpuinfo, /sys and the environment; every field may be "" when the
 * machine does not say. */
#ifndef VS_PROVENANCE_H
#define VS_PROVENANCE_H

#include <stddef.h>

typedef struct vs_provenance {
    char host[64];
    char kernel[272];      /* "Linux 6.1.0-18-amd64 #1 SMP ... x86_64" */
    char cpu_model[128];   /* /proc/cpuinfo "model name" (or the arch's equivalent) */
    char governor[32];     /* cpufreq scaling_governor of the bound CPU, "" if unreadable */
    char virtualization[48]; /* hypervisor signature ("KVMKVMKVM"), "hypervisor" (flag only), or "" */
    char slurm_job_id[24]; /* SLURM_JOB_ID, "" outside Slurm */
    char slurm_step_id[24]; /* SLURM_STEP_ID (or SLURM_STEPID) */
} vs_provenance_t;

/* Fill *p; cpu is the CPU whose governor to read (-1: cpu0). */
void vs_provenance_read(vs_provenance_t *p, int cpu);

#endif
