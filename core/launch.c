/* Launching without MPI: launcher environment detection and the embedded
 * local launcher.  The TCP rendezvous bootstrap is in launch_tcp.c. */
#include "launch.h"
#include "hostload.h"
#include "watchdog.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VS_LAUNCH_MAX_RANKS 4096
#define VS_LAUNCH_GRACE_S 5.0      /* beyond timeout_s, before survivors are killed */

/* ------------------------------------------------------------------ time */

static double vs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------ environment parse */

/* Strict integer in [min, max]; garbage is -EINVAL with a message. */
static int vs_env_int(const char *name, long min, long max, int *out)
{
    const char *s = getenv(name);
    if (!s) {
        fprintf(stderr, "versus-run: launcher environment: %s is not set\n", name);
        return -EINVAL;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || !(*s == '-' || (*s >= '0' && *s <= '9')) ||
        v < min || v > max) {
        fprintf(stderr, "versus-run: launcher environment: %s='%s' is not an integer in [%ld, %ld]\n",
                name, s, min, max);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* Job keys end up in file names: keep [A-Za-z0-9._-], replace the rest. */
static void vs_key_set(char *dst, size_t n, const char *prefix, const char *id)
{
    int len = snprintf(dst, n, "%s%s", prefix, id);
    if (len < 0)
        dst[0] = '\0';
    for (char *p = dst; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
            *p = '_';
}

/* A key for launchers that name no job: host + parent pid (one host only). */
static void vs_key_fallback(char *dst, size_t n, const char *prefix)
{
    char host[64] = "host", id[96];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(id, sizeof id, "%s-%ld", host, (long)getppid());
    vs_key_set(dst, n, prefix, id);
}

int vs_launch_addr_parse(const char *s, char *host, size_t hostlen, int *port)
{
    const char *colon = s ? strrchr(s, ':') : NULL;
    if (!colon || colon == s || (size_t)(colon - s) >= hostlen)
        return -EINVAL;
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end != '\0' || p < 1 || p > 65535)
        return -EINVAL;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    *port = (int)p;
    return 0;
}

static int vs_rank_size_check(const char *rank_var, const vs_launch_env_t *env)
{
    if (env->rank >= env->size) {
        fprintf(stderr, "versus-run: launcher environment: %s=%d is not below the size %d\n",
                rank_var, env->rank, env->size);
        return -EINVAL;
    }
    return 0;
}

static int vs_env_detect_local(vs_launch_env_t *env)
{
    int rc;
    snprintf(env->launcher, sizeof env->launcher, "local");
    if ((rc = vs_env_int("VERSUS_RANK", 0, VS_LAUNCH_MAX_RANKS - 1, &env->rank)) < 0 ||
        (rc = vs_env_int("VERSUS_SIZE", 1, VS_LAUNCH_MAX_RANKS, &env->size)) < 0 ||
        (rc = vs_rank_size_check("VERSUS_RANK", env)) < 0)
        return rc;
    const char *job = getenv("VERSUS_JOB");
    vs_key_set(env->job_key, sizeof env->job_key, "", job && *job ? job : "manual");
    const char *rdv = getenv("VERSUS_RENDEZVOUS");
    if (rdv && *rdv) {
        char host[256];
        int port;
        if (vs_launch_addr_parse(rdv, host, sizeof host, &port) < 0 ||
            strlen(rdv) >= sizeof env->rendezvous) {
            fprintf(stderr, "versus-run: launcher environment: VERSUS_RENDEZVOUS='%s' is not HOST:PORT\n", rdv);
            return -EINVAL;
        }
        snprintf(env->rendezvous, sizeof env->rendezvous, "%s", rdv);
    }
    if (getenv("VERSUS_LISTEN_FD")) {
        int fd, listening = 0;
        socklen_t sl = sizeof listening;
        if ((rc = vs_env_int("VERSUS_LISTEN_FD", 0, INT_MAX, &fd)) < 0)
            return rc;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &sl) < 0 || !listening) {
            fprintf(stderr, "versus-run: launcher environment: VERSUS_LISTEN_FD=%d is not a listening socket\n", fd);
            return -EINVAL;
        }
        env->listen_fd = fd;
    }
    return 0;
}

/* MPICH's hydra sets PMI_RANK and PMI_SIZE, and so does srun --mpi=pmi2: hydra's
 * own marks (4.0.2 sets PMI_FD, MPI_LOCALRANKID, HYDI_CONTROL_FD and no job name:
 * the KVS name is asked over PMI_FD by the bootstrap, only when it needs one), or
 * no Slurm rank, tell them apart. */
static int vs_hydra_not_srun(void)
{
    return getenv("HYDI_CONTROL_FD") || getenv("MPI_LOCALRANKID") || !getenv("SLURM_PROCID");
}

/* The launchers versus-run recognises by the environment they give each rank,
 * one row each, tried in this order. */
typedef struct vs_launcher_env {
    const char *name;                     /* recorded as the launcher */
    const char *marks[2];                 /* either set: this launcher started the rank */
    int (*also)(void);                    /* NULL, or a further condition */
    int (*own)(vs_launch_env_t *env);     /* a launcher that reads its variables itself */
    const char *rank;                     /* the rank's variable */
    const char *size[2];                  /* the size's: the first when set, else the second */
    const char *job[2];                   /* the job's name: the first set and not empty */
    const char *step[2];                  /* with a step (srun): the key is JOB.STEP, each
                                           * the first set, else "nojob" and "0" */
    const char *prefix, *fallback;        /* the key's prefix; a made-up key's, without a job name */
} vs_launcher_env_t;

static const vs_launcher_env_t vs_launcher_envs[] = {
    {.name = "local", .marks = {"VERSUS_RANK", "VERSUS_SIZE"}, .own = vs_env_detect_local},
    {.name = "mpirun", .marks = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
     .rank = "OMPI_COMM_WORLD_RANK", .size = {"OMPI_COMM_WORLD_SIZE"},
     .job = {"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"}, .prefix = "ompi-", .fallback = "ompi-"},
    {.name = "mpiexec", .marks = {"PMI_RANK", "PMI_SIZE"}, .also = vs_hydra_not_srun,
     .rank = "PMI_RANK", .size = {"PMI_SIZE"}, .job = {"PMI_KVSNAME", "PMI_JOBID"},
     .prefix = "pmi-", .fallback = "hydra-"},
    {.name = "srun", .marks = {"SLURM_PROCID"},
     .rank = "SLURM_PROCID", .size = {"SLURM_NTASKS", "SLURM_NPROCS"},
     .job = {"SLURM_JOB_ID", "SLURM_JOBID"}, .step = {"SLURM_STEP_ID", "SLURM_STEPID"}, .prefix = "slurm-"},
};

static const char *vs_env_first(const char *const names[2], int nonempty)
{
    for (int i = 0; i < 2; i++) {
        const char *v = names[i] ? getenv(names[i]) : NULL;
        if (v && (!nonempty || *v))
            return v;
    }
    return NULL;
}

static int vs_env_detect_row(const vs_launcher_env_t *l, vs_launch_env_t *env)
{
    int rc;
    snprintf(env->launcher, sizeof env->launcher, "%s", l->name);
    if (l->own)
        return l->own(env);
    const char *size = l->size[1] && !getenv(l->size[0]) ? l->size[1] : l->size[0];
    if ((rc = vs_env_int(l->rank, 0, INT_MAX - 1, &env->rank)) < 0 ||
        (rc = vs_env_int(size, 1, INT_MAX, &env->size)) < 0 ||
        (rc = vs_rank_size_check(l->rank, env)) < 0)
        return rc;
    if (l->step[0]) {
        const char *job = vs_env_first(l->job, 0), *step = vs_env_first(l->step, 0);
        char id[96];
        snprintf(id, sizeof id, "%s.%s", job ? job : "nojob", step ? step : "0");
        vs_key_set(env->job_key, sizeof env->job_key, l->prefix, id);
        return 0;
    }
    const char *job = vs_env_first(l->job, 1);
    if (job)
        vs_key_set(env->job_key, sizeof env->job_key, l->prefix, job);
    else
        vs_key_fallback(env->job_key, sizeof env->job_key, l->fallback);
    return 0;
}

int vs_launch_env_detect(vs_launch_env_t *env)
{
    memset(env, 0, sizeof *env);
    env->listen_fd = -1;
    env->size = 1;
    for (size_t i = 0; i < sizeof vs_launcher_envs / sizeof vs_launcher_envs[0]; i++) {
        const vs_launcher_env_t *l = &vs_launcher_envs[i];
        if (!vs_env_first(l->marks, 0) || (l->also && !l->also()))
            continue;
        int rc = vs_env_detect_row(l, env);
        if (rc < 0) {
            env->rank = 0;
            env->size = 1;
            env->listen_fd = -1;
        }
        return rc;
    }
    snprintf(env->launcher, sizeof env->launcher, "none");
    return -ENOENT;
}

/* ------------------------------------------------------- local launcher */

static int vs_listen_loopback(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = 0 };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, backlog) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static void vs_child_setup(int rank, int n, pid_t parent, int lfd, int port,
                           const sigset_t *oldmask, vs_launch_env_t *child)
{
    /* Die with the launcher; if it is already gone, do not run orphaned. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    /* the launcher's notice that another rank ended badly: a rank that did not
     * arrange to act on it (vs_watchdog_catch) must not die of it */
    struct sigaction peer;
    if (sigaction(VS_PEER_ENDED_SIGNAL, NULL, &peer) == 0 && !(peer.sa_flags & SA_SIGINFO) &&
        peer.sa_handler == SIG_DFL)
        signal(VS_PEER_ENDED_SIGNAL, SIG_IGN);
    sigprocmask(SIG_SETMASK, oldmask, NULL);

    memset(child, 0, sizeof *child);
    snprintf(child->launcher, sizeof child->launcher, "local");
    child->rank = rank;
    child->size = n;
    snprintf(child->job_key, sizeof child->job_key, "local-%ld", (long)parent);
    snprintf(child->rendezvous, sizeof child->rendezvous, "127.0.0.1:%d", port);
    child->listen_fd = rank == 0 ? lfd : -1;
    if (rank != 0)
        close(lfd);

    /* The same description in the environment, for anything that re-detects. */
    char buf[32];
    snprintf(buf, sizeof buf, "%d", rank);
    setenv("VERSUS_RANK", buf, 1);
    snprintf(buf, sizeof buf, "%d", n);
    setenv("VERSUS_SIZE", buf, 1);
    setenv("VERSUS_JOB", child->job_key, 1);
    setenv("VERSUS_RENDEZVOUS", child->rendezvous, 1);
    if (rank == 0) {
        snprintf(buf, sizeof buf, "%d", lfd);
        setenv("VERSUS_LISTEN_FD", buf, 1);
    } else {
        unsetenv("VERSUS_LISTEN_FD");
    }
}

static void vs_children_signal(const pid_t *pids, const int *done, int n, int sig)
{
    for (int r = 0; r < n; r++)
        if (pids[r] > 0 && !done[r])
            kill(pids[r], sig);
}

/* Reap the ranks that have ended (only ours: other children of this process
 * are left alone); returns how many are still running. */
static int vs_children_reap(const pid_t *pids, int *done, int *codes, int n, int killed_by_us)
{
    int alive = 0, bad = -1;
    for (int r = 0; r < n; r++) {
        int status;
        if (done[r] || waitpid(pids[r], &status, WNOHANG) <= 0) {
            alive += !done[r];
            continue;
        }
        done[r] = 1;
        if (WIFEXITED(status)) {
            codes[r] = WEXITSTATUS(status);
            if (codes[r] != 0)
                fprintf(stderr, "versus-run: rank %d exited with code %d\n", r, codes[r]);
        } else {
            int sig = WTERMSIG(status);
            codes[r] = 1;
            fprintf(stderr, "versus-run: rank %d was killed by signal %d (%s)%s\n", r, sig,
                    strsignal(sig), killed_by_us ? " after the grace period" : "");
        }
        /* died, or failed its run (exit 1); a usage error (2) or a transport
         * that cannot run here (77) is every rank's own verdict, not news */
        if ((!WIFEXITED(status) || codes[r] == 1) && bad < 0 && !killed_by_us)
            bad = r;
    }
    /* a rank that ended badly: the others are told at once (libraries that
     * busy-poll a dead peer would otherwise wait for the whole timeout) */
    for (int r = 0; bad >= 0 && r < n; r++)
        if (!done[r] && pids[r] > 0)
            sigqueue(pids[r], VS_PEER_ENDED_SIGNAL, (union sigval){.sival_int = bad});
    return alive;
}

/* Whether a process is stopped (SIGSTOP, SIGTSTP, a debugger): it cannot act on
 * the notice that a peer ended, nor reach its own timeout. */
static int vs_pid_stopped(pid_t pid)
{
    char buf[512];
    const char *p = vs_proc_stat_fields((int)pid, buf, sizeof buf);
    return p && p[0] == ' ' && (p[1] == 'T' || p[1] == 't');
}

/* Stopped and still stopped a moment later: LeakSanitizer stops a process with
 * ptrace for its check at exit, which shows as a tracing stop for a few
 * milliseconds (the launcher killed an ASan rank 0 that was exiting with 2). */
static int vs_pid_stays_stopped(pid_t pid)
{
    if (!vs_pid_stopped(pid))
        return 0;
    nanosleep(&(struct timespec){.tv_nsec = 300000000}, NULL);
    return vs_pid_stopped(pid);
}

/* After a rank ended badly: the survivors that are stopped get SIGKILL at once (a
 * stopped rank would otherwise hold the launch until timeout + grace).  Returns
 * how many were killed. */
static int vs_children_kill_stopped(const pid_t *pids, const int *done, int n)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        if (!done[r] && pids[r] > 0 && vs_pid_stays_stopped(pids[r])) {
            fprintf(stderr, "versus-run: rank %d is stopped (a SIGSTOP or a debugger) after another rank "
                    "ended; killing it\n", r);
            kill(pids[r], SIGKILL);
            k++;
        }
    return k;
}

/* Parent side: wait for the ranks, forward SIGINT/SIGTERM, and once one rank
 * has ended give the others timeout_s + grace before SIGKILL.  done and codes
 * hold n zeroed entries.  Returns the exit code of the whole launch. */
static int vs_children_supervise(const pid_t *pids, int *done, int *codes, int n,
                                 double timeout_s, const sigset_t *waitset)
{
    double deadline = 0;   /* 0: none yet */
    double allowed = (timeout_s > 0 ? timeout_s : 0) + VS_LAUNCH_GRACE_S;
    int killed = 0, alive;
    while ((alive = vs_children_reap(pids, done, codes, n, killed)) > 0) {
        if (alive < n && deadline == 0)
            deadline = vs_now() + allowed;
        int bad = 0;
        for (int r = 0; r < n; r++)
            bad |= done[r] && codes[r] == 1;
        /* a survivor told of a bad end acts within a second unless it is stopped */
        double wake = deadline;
        if (bad && !killed && vs_children_kill_stopped(pids, done, n) == 0 && vs_now() + 1.0 < deadline)
            wake = vs_now() + 1.0;
        siginfo_t info;
        int sig;
        if (wake > 0) {
            double left = wake - vs_now();
            if (left < 0)
                left = 0;
            struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
            sig = sigtimedwait(waitset, &info, &ts);
        } else {
            sig = sigwaitinfo(waitset, &info);
        }
        if (sig == SIGINT || sig == SIGTERM) {
            vs_children_signal(pids, done, n, sig);
            double soon = vs_now() + VS_LAUNCH_GRACE_S;
            if (deadline == 0 || deadline > soon)
                deadline = soon;
        } else if (sig < 0 && errno == EAGAIN && deadline > 0 && vs_now() >= deadline) {
            if (killed) {
                fprintf(stderr, "versus-run: %d rank(s) did not end after SIGKILL; giving up\n", alive);
                break;
            }
            for (int r = 0; r < n; r++)
                if (!done[r])
                    fprintf(stderr, "versus-run: rank %d was still running %g s after another rank "
                            "ended; killing it\n", r, allowed);
            vs_children_signal(pids, done, n, SIGKILL);
            killed = 1;
            deadline = vs_now() + VS_LAUNCH_GRACE_S;
        }
    }
    int code = codes[0];
    for (int r = 1; r < n && code == 0; r++)
        if (codes[r] > code)
            code = codes[r];
    for (int r = 0; r < n && code == 0; r++)
        if (!done[r])
            code = 1;
    return code;
}

int vs_launch_local_fits(int n, char *err, size_t errlen)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && n > VS_LAUNCH_RANKS_PER_CPU * cpus) {
        snprintf(err, errlen, "--launch local -n %d: this host has %ld CPU%s, and more than %d ranks per CPU "
                 "take turns for so long that the run would end in its timeout; give -n %ld or fewer, or "
                 "spread the ranks over hosts (mpirun, srun)", n, cpus, cpus == 1 ? "" : "s",
                 VS_LAUNCH_RANKS_PER_CPU, VS_LAUNCH_RANKS_PER_CPU * cpus);
        return -EINVAL;
    }
    struct rlimit fds;
    if (getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur != RLIM_INFINITY &&
        (rlim_t)n + 64 > fds.rlim_cur) {
        snprintf(err, errlen, "--launch local -n %d: the limit on open files is %llu, and rank 0 keeps a "
                 "connection to every rank (and a transport one per peer): raise it (ulimit -n %d) or "
                 "give fewer ranks", n, (unsigned long long)fds.rlim_cur, n + 64);
        return -EINVAL;
    }
    return 0;
}

int vs_launch_local(int n, double timeout_s, vs_launch_env_t *child, int *exit_code)
{
    if (n < 1 || n > VS_LAUNCH_MAX_RANKS) {
        fprintf(stderr, "versus-run: --launch local -n %d: the number of ranks must be in [1, %d]\n",
                n, VS_LAUNCH_MAX_RANKS);
        return -EINVAL;
    }
    int port = 0, rc;
    int lfd = vs_listen_loopback(n + 8, &port);
    if (lfd < 0) {
        fprintf(stderr, "versus-run: local launcher: cannot listen on 127.0.0.1: %s\n", strerror(-lfd));
        return lfd;
    }
    /* Everything the parent needs is allocated before the first fork. */
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    int *done = calloc((size_t)n, sizeof *done), *codes = calloc((size_t)n, sizeof *codes);
    if (!pids || !done || !codes) {
        rc = -ENOMEM;
        goto free_tables;
    }

    sigset_t waitset, oldmask;
    sigemptyset(&waitset);
    sigaddset(&waitset, SIGCHLD);
    sigaddset(&waitset, SIGINT);
    sigaddset(&waitset, SIGTERM);
    sigprocmask(SIG_BLOCK, &waitset, &oldmask);
    fflush(NULL);   /* or buffered output would be written again by every child */

    pid_t parent = getpid();
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            free(pids);
            free(done);
            free(codes);
            vs_child_setup(r, n, parent, lfd, port, &oldmask, child);
            return 0;
        }
        if (pid < 0) {
            rc = -errno;
            fprintf(stderr, "versus-run: local launcher: cannot start rank %d: %s\n", r, strerror(errno));
            goto kill_started;
        }
        pids[r] = pid;
    }
    close(lfd);
    *exit_code = vs_children_supervise(pids, done, codes, n, timeout_s, &waitset);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    free(pids);
    free(done);
    free(codes);
    return 1;

kill_started:
    for (int r = 0; r < n && pids[r] > 0; r++)
        kill(pids[r], SIGKILL);
    for (int r = 0; r < n && pids[r] > 0; r++)
        waitpid(pids[r], NULL, 0);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
free_tables:
    free(pids);
    free(done);
    free(codes);
    close(lfd);
    return rc;
}
