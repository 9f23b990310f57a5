/* Launching without MPI: who started us, and the TCP rendezvous bootstrap.
 *
 * Three ways a non-MPI transport's ranks get started:
 *   - `versus-run --launch local -n N`: the embedded launcher forks N ranks on
 *     this host (vs_launch_local);
 *   - an external launcher (mpirun.openmpi, mpiexec.mpich, srun): the rank
 *     and size come from its environment (vs_launch_env_detect);
 *   - nothing: a single process, which is an error for two-rank patterns.
 * The ranks then meet through vs_bootstrap_tcp_create.
 */
#ifndef VS_LAUNCH_H
#define VS_LAUNCH_H

#include <stddef.h>

#include <versus/bootstrap.h>

typedef struct vs_launch_env {
    char launcher[16];  /* "local", "mpirun", "mpiexec", "srun", "none" */
    int rank;
    int size;
    char job_key[128];  /* identifies this job among others sharing a rendezvous dir */
    int listen_fd;      /* local launcher: rank 0 inherits a bound, listening socket; else -1 */
    char rendezvous[256]; /* "HOST:PORT" handed down by the local launcher, or "" */
} vs_launch_env_t;

/* Fill *env from the environment of an external launcher (Open MPI's
 * OMPI_COMM_WORLD_*, MPICH hydra's PMI_RANK/PMI_SIZE, Slurm's SLURM_PROCID/
 * SLURM_NTASKS) or of the local launcher's children.  Returns 0, or -ENOENT
 * when no launcher is detected (env then says launcher "none", rank 0, size 1). */
int vs_launch_env_detect(vs_launch_env_t *env);

/* Embedded launcher.  Forks n ranks of this process.  In each child it
 * returns 0 with *child describing that rank.  In the parent it waits for
 * the children and returns 1 with *exit_code set (rank 0's code if it
 * failed, else the worst); a child that dies is reported on stderr, and the
 * survivors get timeout_s to finish (their own deadline) before SIGKILL.
 * Returns a negative errno if the ranks could not be started. */
int vs_launch_local(int n, double timeout_s, vs_launch_env_t *child, int *exit_code);

/* TCP rendezvous bootstrap.  Rank 0 listens (on env->listen_fd if >= 0, else
 * on `rendezvous`'s port, else on an ephemeral port whose HOST:PORT it
 * publishes as a file named after env->job_key in rdv_dir); other ranks
 * connect to `rendezvous` or to the address found in that file.  Every wait
 * is bounded by timeout_s: a peer that never arrives gives -ETIMEDOUT with
 * an explanation in err.  rendezvous and rdv_dir may be NULL. */
int vs_bootstrap_tcp_create(const vs_launch_env_t *env, const char *rendezvous,
                            const char *rdv_dir, double timeout_s,
                            vs_bootstrap_t **out, char *err, size_t errlen);

/* Split "HOST:PORT" (PORT 1..65535) into host and port: 0 or -EINVAL. */
int vs_launch_addr_parse(const char *s, char *host, size_t hostlen, int *port);

#endif
