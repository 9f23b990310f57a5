/* Launching without MPI: who started us, and the TCP rendezvous bootstrap.
 *
 * Three ways a non-MPI transport's ranks get started:
 *   - `versus-run --launch local -n N`: the embedded launcher forks N ranks on
 *     this host (vs_launch_local);
 *   - an external launcher (mpirun, mpiexec, srun): the rank
 *     and size come from its environment (vs_launch_env_detect);
 *   - nothing: a single process, which is an error for two-rank patterns.
 * The ranks then meet through vs_bootstrap_tcp_create.
 */
#ifndef VS_LAUNCH_H
#define VS_LAUNCH_H

#include <stddef.h>

#include <versus/bootstrap.h>

#include "idle.h"

typedef struct vs_launch_env {
    char launcher[16];  /* "local", "mpirun", "mpiexec", "srun", "none" */
    int rank;
    int size;
    char job_key[128];  /* identifies this job among others sharing a rendezvous dir */
    int listen_fd;      /* local launcher: rank 0 inherits a bound, listening socket; else -1 */
    char rendezvous[256]; /* "HOST:PORT" handed down by the local launcher, or "" */
} vs_launch_env_t;

/* Fill *env from the environment of the local launcher's children or of a
 * person (VERSUS_RANK, VERSUS_SIZE, VERSUS_JOB, VERSUS_RENDEZVOUS,
 * VERSUS_LISTEN_FD), of Open MPI (OMPI_COMM_WORLD_*), of MPICH hydra
 * (PMI_RANK/PMI_SIZE) or of Slurm (SLURM_PROCID/SLURM_NTASKS), in that order.
 * Returns 0; -ENOENT when no launcher is detected (env then says launcher
 * "none", rank 0, size 1); -EINVAL, with a message on stderr naming the
 * variable, for values that are not integers, a rank >= size, a size < 1,
 * a VERSUS_RENDEZVOUS that is not HOST:PORT or a VERSUS_LISTEN_FD that is
 * not a listening socket.  Only reads the environment: safe to call in a
 * process that will initialise MPI. */
int vs_launch_env_detect(vs_launch_env_t *env);

/* Embedded launcher.  Binds a listening socket on 127.0.0.1, then forks n
 * ranks of this process.  In each child it returns 0 with *child describing
 * that rank (rank 0 owns child->listen_fd; every rank gets child->rendezvous
 * and the same in VERSUS_* variables); the children die with the parent.  In
 * the parent it forwards SIGINT/SIGTERM, waits for the children and returns
 * 1 with *exit_code set (rank 0's code if it failed, else the worst; a rank
 * killed by a signal counts 1).  A child that fails or dies is reported on
 * stderr; once a rank has ended, the others get timeout_s + 5 s to finish
 * before SIGKILL.  Returns a negative errno if the ranks could not be started
 * (-EINVAL for n outside [1, 4096]). */
int vs_launch_local(int n, double timeout_s, vs_launch_env_t *child, int *exit_code);

/* Can n local ranks run here at all?  At most VS_LAUNCH_RANKS_PER_CPU per
 * online CPU (beyond that busy-polling ranks take turns for so long that a
 * run ends in its timeout, not in results), and a file-descriptor limit that
 * leaves room for a socket per rank.  0, or -EINVAL with the reason in err. */
#define VS_LAUNCH_RANKS_PER_CPU 64
int vs_launch_local_fits(int n, char *err, size_t errlen);

/* TCP rendezvous bootstrap (launch_tcp.c), a star through rank 0.  Rank 0
 * listens on env->listen_fd if >= 0 (and takes ownership of it), else on the
 * port of `rendezvous` (or env->rendezvous), else on an ephemeral port whose
 * HOST:PORT it publishes atomically in <rdv_dir>/versus-<job_key>.addr
 * (rdv_dir NULL: the current directory), removed once every rank connected.
 * Other ranks connect to the rendezvous address or poll for that file.  The
 * handshake checks a magic, the rank, the size and the job key.  Under hydra
 * the job key is replaced by the PMI KVS name, asked over PMI_FD, when the
 * file is needed.  Every wait, here and in barrier/exchange, is bounded by
 * timeout_s (<= 0: unbounded): a peer that never arrives gives -ETIMEDOUT
 * with an explanation in err; barrier/exchange report on stderr, a peer
 * that left as -ECONNRESET.  rendezvous and rdv_dir may be NULL. */
int vs_bootstrap_tcp_create(const vs_launch_env_t *env, const char *rendezvous,
                            const char *rdv_dir, double timeout_s,
                            vs_bootstrap_t **out, char *err, size_t errlen);

/* From now on, a collective of this TCP bootstrap that waits calls idle
 * (the transport's progress, idle.h).  bs must come from vs_bootstrap_tcp_create. */
void vs_bootstrap_tcp_set_idle(vs_bootstrap_t *bs, vs_idle_t idle);

/* Split "HOST:PORT" (PORT 1..65535) into host and port: 0 or -EINVAL. */
int vs_launch_addr_parse(const char *s, char *host, size_t hostlen, int *port);

#endif
