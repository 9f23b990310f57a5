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

/* The C library's copy thresholds in force for this process (glibc's x86
 * tunables, as its dynamic loader lists them with --list-tunables, which
 * honours GLIBC_TUNABLES): where memcpy changes method, so where copies
 * through shared memory may change cost.  -1 when unknown. */
typedef struct vs_copy_thresholds {
    long long rep_movsb;      /* glibc.cpu.x86_rep_movsb_threshold */
    long long non_temporal;   /* glibc.cpu.x86_non_temporal_threshold */
} vs_copy_thresholds_t;

/* Read them once, before any library is initialised (it runs the loader in a
 * child process); later calls return the first answer. */
const vs_copy_thresholds_t *vs_provenance_copy_thresholds(void);

/* Fill *p; cpu is the CPU whose governor to read (-1: cpu0). */
void vs_provenance_read(vs_provenance_t *p, int cpu);

#endif
