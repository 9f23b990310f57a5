/* Unit tests of core/launch.c and core/launch_tcp.c: launcher environment
 * parsing, the local fork launcher, and the TCP rendezvous bootstrap, with
 * real processes and real sockets on 127.0.0.1.
 *
 * Usage: test_launch [CASE]   (no argument: every case)
 * Each case prints "ok"/"not ok" lines; the exit code is 0 only if all pass. */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct tally {
    int failed, passed;
} tally_t;

static void expect(tally_t *t, int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", cond ? "ok" : "not ok");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (cond)
        t->passed++;
    else
        t->failed++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *const launcher_vars[] = {
    "VERSUS_RANK", "VERSUS_SIZE", "VERSUS_JOB", "VERSUS_RENDEZVOUS", "VERSUS_LISTEN_FD",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
    "PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_KVSNAME", "PMI_JOBID", "HYDI_CONTROL_FD", "MPI_LOCALRANKID",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID",
    "SLURM_STEPID", NULL,
};

static void env_clear(void)
{
    for (int i = 0; launcher_vars[i]; i++)
        unsetenv(launcher_vars[i]);
}

/* "NAME=VALUE" pairs, NULL-terminated, after clearing every launcher variable */
static int detect_with(vs_launch_env_t *env, const char *const *pairs)
{
    env_clear();
    for (int i = 0; pairs[i]; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", pairs[i]);
        char *eq = strchr(buf, '=');
        *eq = '\0';
        setenv(buf, eq + 1, 1);
    }
    int rc = vs_launch_env_detect(env);
    env_clear();
    return rc;
}

/* ------------------------------------------------------------ env cases */

static void case_env(tally_t *t)
{
    vs_launch_env_t e;
    int rc;

    rc = detect_with(&e, (const char *[]){ NULL });
    expect(t, rc == -ENOENT && strcmp(e.launcher, "none") == 0 && e.rank == 0 && e.size == 1,
           "no launcher: -ENOENT, launcher none, rank 0 of 1 (rc=%d %s %d/%d)", rc, e.launcher, e.rank, e.size);

    rc = detect_with(&e, (const char *[]){ "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2",
                                            "OMPI_MCA_ess_base_jobid=2061434881", "PMIX_NAMESPACE=x", NULL });
    expect(t, rc == 0 && strcmp(e.launcher, "mpirun") == 0 && e.rank == 1 && e.size == 2 &&
              strcmp(e.job_key, "ompi-2061434881") == 0 && e.listen_fd == -1,
           "Open MPI: rank 1 of 2, job key from the ess jobid (rc=%d %s %d/%d %s)", rc, e.launcher,
           e.rank, e.size, e.job_key);

    rc = detect_with(&e, (const char *[]){ "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=4",
                                            "PMIX_NAMESPACE=prterun-vm-12@1", NULL });
    expect(t, rc == 0 && strcmp(e.job_key, "ompi-prterun-vm-12_1") == 0,
           "Open MPI: job key from PMIX_NAMESPACE, made safe for a file name (%s)", e.job_key);

    rc = detect_with(&e, (const char *[]){ "PMI_RANK=1", "PMI_SIZE=2", "PMI_FD=6", "MPI_LOCALRANKID=1",
                                            "HYDI_CONTROL_FD=7", NULL });
    expect(t, rc == 0 && strcmp(e.launcher, "mpiexec") == 0 && e.rank == 1 && e.size == 2 &&
              strncmp(e.job_key, "hydra-", 6) == 0,
           "MPICH hydra: rank 1 of 2, provisional job key (rc=%d %s %d/%d %s)", rc, e.launcher, e.rank,
           e.size, e.job_key);

    rc = detect_with(&e, (const char *[]){ "SLURM_PROCID=3", "SLURM_NTASKS=4", "SLURM_JOB_ID=77",
                                            "SLURM_STEP_ID=2", "PMI_RANK=3", "PMI_SIZE=4", "PMI_JOBID=77.2", NULL });
    expect(t, rc == 0 && strcmp(e.launcher, "srun") == 0 && e.rank == 3 && e.size == 4 &&
              strcmp(e.job_key, "slurm-77.2") == 0,
           "Slurm (srun --mpi=pmi2 also sets PMI_*): srun, rank 3 of 4, key slurm-77.2 (rc=%d %s %d/%d %s)",
           rc, e.launcher, e.rank, e.size, e.job_key);

    rc = detect_with(&e, (const char *[]){ "VERSUS_RANK=1", "VERSUS_SIZE=2", "VERSUS_JOB=abc",
                                            "VERSUS_RENDEZVOUS=127.0.0.1:4000", NULL });
    expect(t, rc == 0 && strcmp(e.launcher, "local") == 0 && e.rank == 1 && e.size == 2 &&
              strcmp(e.job_key, "abc") == 0 && strcmp(e.rendezvous, "127.0.0.1:4000") == 0,
           "versus env: rank 1 of 2, job abc, rendezvous 127.0.0.1:4000 (rc=%d)", rc);

    /* garbage: every one is -EINVAL */
    static const char *const bad[][6] = {
        { "VERSUS_RANK=abc", "VERSUS_SIZE=2", NULL },
        { "VERSUS_RANK=2", "VERSUS_SIZE=2", NULL },
        { "VERSUS_RANK=-1", "VERSUS_SIZE=2", NULL },
        { "VERSUS_RANK=0", "VERSUS_SIZE=0", NULL },
        { "VERSUS_RANK=0", NULL },
        { "VERSUS_RANK=0", "VERSUS_SIZE=2", "VERSUS_RENDEZVOUS=nohostport", NULL },
        { "VERSUS_RANK=0", "VERSUS_SIZE=2", "VERSUS_RENDEZVOUS=h:70000", NULL },
        { "VERSUS_RANK=0", "VERSUS_SIZE=2", "VERSUS_LISTEN_FD=0", NULL },
        { "VERSUS_RANK=0", "VERSUS_SIZE=2", "VERSUS_LISTEN_FD=x", NULL },
        { "OMPI_COMM_WORLD_RANK=1x", "OMPI_COMM_WORLD_SIZE=2", NULL },
        { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=", NULL },
        { "OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=99999999999999999999", NULL },
        { "PMI_RANK=5", "PMI_SIZE=2", NULL },
        { "PMI_RANK= 1", "PMI_SIZE=2", NULL },
        { "SLURM_PROCID=0", "SLURM_NTASKS=-3", NULL },
        { "SLURM_PROCID=0", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = detect_with(&e, bad[i]);
        expect(t, rc == -EINVAL && e.size == 1 && e.rank == 0,
               "garbage is rejected with -EINVAL: %s %s %s (rc=%d)", bad[i][0], bad[i][1] ? bad[i][1] : "",
               bad[i][1] && bad[i][2] ? bad[i][2] : "", rc);
    }
}

/* ------------------------------------------------ bootstrap exercises */

/* All-gather and barrier checks done by one rank; returns 0 if all held. */
static int rank_exercise(vs_bootstrap_t *bs)
{
    int n = bs->size, r = bs->rank;
    for (int round = 0; round < 5; round++) {
        size_t len = (size_t)(1 + round * 1000 + (round == 4 ? 300000 : 0));
        unsigned char *mine = malloc(len), *all = malloc(len * (size_t)n);
        for (size_t i = 0; i < len; i++)
            mine[i] = (unsigned char)(r * 31 + round * 7 + i);
        if (bs->exchange(bs, mine, all, len) != 0)
            return 1;
        for (int p = 0; p < n; p++)
            for (size_t i = 0; i < len; i++)
                if (all[(size_t)p * len + i] != (unsigned char)(p * 31 + round * 7 + i))
                    return 2;
        free(mine);
        free(all);
        if (bs->barrier(bs) != 0)
            return 3;
    }
    int rr = r, ranks[64];
    if (bs->exchange(bs, &rr, ranks, sizeof rr) != 0)
        return 4;
    for (int p = 0; p < n; p++)
        if (ranks[p] != p)
            return 5;
    return 0;
}

/* Fork n ranks described by env vars (file rendezvous in dir); each runs
 * rank_exercise.  Returns the number of ranks that failed. */
static int fork_ranks_file(int n, const char *job, const char *dir)
{
    pid_t pids[16];
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            vs_launch_env_t e;
            char rs[16], ns[16];
            snprintf(rs, sizeof rs, "%d", r);
            snprintf(ns, sizeof ns, "%d", n);
            env_clear();
            setenv("VERSUS_RANK", rs, 1);
            setenv("VERSUS_SIZE", ns, 1);
            setenv("VERSUS_JOB", job, 1);
            if (vs_launch_env_detect(&e) != 0)
                _exit(10);
            if (r == 0)
                usleep(300000);   /* the others must poll for the file */
            vs_bootstrap_t *bs;
            char err[512];
            int rc = vs_bootstrap_tcp_create(&e, NULL, dir, 10, &bs, err, sizeof err);
            if (rc) {
                fprintf(stderr, "rank %d: %s\n", r, err);
                _exit(11);
            }
            rc = rank_exercise(bs);
            bs->close(bs);
            _exit(rc);
        }
    }
    int failed = 0;
    for (int r = 0; r < n; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return failed;
}

/* ---------------------------------------------- local launcher + bootstrap */

static void case_local_exchange(tally_t *t)
{
    for (int n = 2; n <= 4; n += 2) {
        vs_launch_env_t e;
        int code = -1;
        double t0 = now_s();
        int rc = vs_launch_local(n, 10, &e, &code);
        if (rc == 0) {
            /* a rank: the env must say who we are */
            if (strcmp(e.launcher, "local") || e.size != n || (e.rank == 0) != (e.listen_fd >= 0))
                _exit(20);
            vs_bootstrap_t *bs;
            char err[512];
            if (vs_bootstrap_tcp_create(&e, NULL, NULL, 10, &bs, err, sizeof err)) {
                fprintf(stderr, "rank %d: %s\n", e.rank, err);
                _exit(21);
            }
            int x = rank_exercise(bs);
            bs->close(bs);
            _exit(x);
        }
        expect(t, rc == 1 && code == 0, "local launcher, %d ranks: exchange and barrier hold on every rank "
               "(rc=%d exit=%d, %.2f s)", n, rc, code, now_s() - t0);
    }
}

static void case_file_rendezvous(tally_t *t)
{
    char dir[] = "/tmp/versus-launch-test-XXXXXX";
    if (!mkdtemp(dir)) {
        expect(t, 0, "mkdtemp");
        return;
    }
    char job[64];
    snprintf(job, sizeof job, "unit-%ld", (long)getpid());
    int failed = fork_ranks_file(3, job, dir);
    expect(t, failed == 0, "file rendezvous, 3 ranks: exchange and barrier hold (%d failed)", failed);
    char path[512];
    snprintf(path, sizeof path, "%s/versus-%s.addr", dir, job);
    struct stat st;
    expect(t, stat(path, &st) < 0 && errno == ENOENT, "the address file is removed once everybody met");
    rmdir(dir);
    expect(t, rmdir(dir) < 0 && errno == ENOENT, "nothing else was left in the rendezvous directory");
}

static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);   /* nobody listens there now */
    return ntohs(sa.sin_port);
}

static void case_timeouts(tally_t *t)
{
    vs_bootstrap_t *bs = NULL;
    char err[512] = "", rdv[64];
    vs_launch_env_t e = { .launcher = "local", .rank = 0, .size = 2, .job_key = "to", .listen_fd = -1 };
    int port = closed_port();
    snprintf(rdv, sizeof rdv, "127.0.0.1:%d", port);

    /* rank 0 alone */
    double t0 = now_s();
    int rc = vs_bootstrap_tcp_create(&e, rdv, NULL, 1.0, &bs, err, sizeof err);
    double dt = now_s() - t0;
    char want[128];
    snprintf(want, sizeof want, "rank 1 did not connect within 1 s (rendezvous %s)", rdv);
    expect(t, rc == -ETIMEDOUT && bs == NULL && strstr(err, want) && dt >= 0.9 && dt < 2.5,
           "rank 0 whose peer never arrives: -ETIMEDOUT after %.2f s: \"%s\"", dt, err);

    /* rank 1 alone, at a closed port */
    e.rank = 1;
    err[0] = '\0';
    t0 = now_s();
    rc = vs_bootstrap_tcp_create(&e, rdv, NULL, 1.0, &bs, err, sizeof err);
    dt = now_s() - t0;
    expect(t, rc == -ETIMEDOUT && strstr(err, "rank 1 could not connect to rank 0 at") &&
              strstr(err, "within 1 s") && dt >= 0.9 && dt < 2.5,
           "rank 1 with no rank 0: -ETIMEDOUT after %.2f s: \"%s\"", dt, err);

    /* rank 1 alone, file rendezvous, no file ever */
    char dir[] = "/tmp/versus-launch-test-XXXXXX";
    mkdtemp(dir);
    err[0] = '\0';
    t0 = now_s();
    rc = vs_bootstrap_tcp_create(&e, NULL, dir, 1.0, &bs, err, sizeof err);
    dt = now_s() - t0;
    expect(t, rc == -ETIMEDOUT && strstr(err, "found no rendezvous file") && strstr(err, dir) && dt < 2.5,
           "rank 1 with no address file: -ETIMEDOUT after %.2f s: \"%s\"", dt, err);
    rmdir(dir);

    /* the local launcher's env is bad input for a size it cannot have */
    e.rank = 2;
    rc = vs_bootstrap_tcp_create(&e, rdv, NULL, 1.0, &bs, err, sizeof err);
    expect(t, rc == -EINVAL, "rank 2 of 2 is -EINVAL (rc=%d)", rc);
}

/* Rank 0 and rank 1 of different jobs (or sizes) at one address must not meet. */
static void case_handshake(tally_t *t)
{
    struct { const char *key1; int size1; const char *what; int rc1_expect; int rc0_expect; } cases[] = {
        { "jobB", 2, "another job", -EPROTO, -ETIMEDOUT },
        { "jobA", 3, "different number of ranks", -EPROTO, -EPROTO },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char rdv[64];
        snprintf(rdv, sizeof rdv, "127.0.0.1:%d", closed_port());
        int pipefd[2];
        if (pipe(pipefd) < 0)
            return;
        pid_t pid = fork();
        if (pid == 0) {
            close(pipefd[0]);
            vs_launch_env_t e1 = { .launcher = "local", .rank = 1, .size = cases[c].size1, .listen_fd = -1 };
            snprintf(e1.job_key, sizeof e1.job_key, "%s", cases[c].key1);
            vs_bootstrap_t *bs;
            char err[512] = "";
            int rc = vs_bootstrap_tcp_create(&e1, rdv, NULL, 3.0, &bs, err, sizeof err);
            dprintf(pipefd[1], "%d|%s", rc, err);
            _exit(0);
        }
        close(pipefd[1]);
        vs_launch_env_t e0 = { .launcher = "local", .rank = 0, .size = 2, .job_key = "jobA", .listen_fd = -1 };
        vs_bootstrap_t *bs = NULL;
        char err0[512] = "", msg1[600] = "";
        int rc0 = vs_bootstrap_tcp_create(&e0, rdv, NULL, 1.5, &bs, err0, sizeof err0);
        ssize_t got = read(pipefd[0], msg1, sizeof msg1 - 1);
        msg1[got > 0 ? got : 0] = '\0';
        close(pipefd[0]);
        waitpid(pid, NULL, 0);
        int rc1 = atoi(msg1);
        expect(t, rc1 == cases[c].rc1_expect && strstr(msg1, cases[c].what),
               "a rank of %s is turned away: \"%s\"", cases[c].what, msg1);
        expect(t, rc0 == cases[c].rc0_expect, "rank 0 facing %s: rc=%d \"%s\"", cases[c].what, rc0, err0);
        if (bs)
            bs->close(bs);
    }
}

/* A peer that leaves after the handshake: rank 0's exchange says who. */
static void case_peer_eof(tally_t *t)
{
    char rdv[64];
    snprintf(rdv, sizeof rdv, "127.0.0.1:%d", closed_port());
    pid_t pid = fork();
    if (pid == 0) {
        vs_launch_env_t e1 = { .launcher = "local", .rank = 1, .size = 2, .job_key = "eof", .listen_fd = -1 };
        vs_bootstrap_t *bs;
        char err[512];
        if (vs_bootstrap_tcp_create(&e1, rdv, NULL, 5.0, &bs, err, sizeof err))
            _exit(1);
        _exit(0);   /* leaves without a word */
    }
    vs_launch_env_t e0 = { .launcher = "local", .rank = 0, .size = 2, .job_key = "eof", .listen_fd = -1 };
    vs_bootstrap_t *bs = NULL;
    char err[512] = "";
    int rc = vs_bootstrap_tcp_create(&e0, rdv, NULL, 5.0, &bs, err, sizeof err);
    int st;
    waitpid(pid, &st, 0);
    expect(t, rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank 0 and rank 1 met (rc=%d %s)", rc, err);
    if (rc)
        return;
    double t0 = now_s();
    int x = 1, all[2];
    rc = bs->exchange(bs, &x, all, sizeof x);
    expect(t, rc == -ECONNRESET && now_s() - t0 < 1.0,
           "exchange with a rank that left: -ECONNRESET at once (rc=%d, %.3f s)", rc, now_s() - t0);
    bs->close(bs);
}

/* ------------------------------------------------------ exit codes */

/* Launch n ranks; rank r behaves as told by act[r]:
 * >= 0 exit with that code, -9 SIGKILL itself, -1 sleep forever. */
static int launch_with(int n, const int *act, double timeout_s, int *code, double *elapsed)
{
    vs_launch_env_t e;
    double t0 = now_s();
    int rc = vs_launch_local(n, timeout_s, &e, code);
    if (rc == 0) {
        int a = act[e.rank];
        if (a == -9)
            raise(SIGKILL);
        if (a == -1)
            for (;;)
                pause();
        usleep(100000);
        _exit(a);
    }
    *elapsed = now_s() - t0;
    return rc;
}

static void case_exit_codes(tally_t *t)
{
    struct { int n; int act[4]; int want; const char *what; } cases[] = {
        { 2, { 0, 0 }, 0, "all ranks succeed: 0" },
        { 3, { 0, 0, 3 }, 3, "rank 2 fails with 3, rank 0 succeeds: 3" },
        { 3, { 4, 3, 0 }, 4, "rank 0 fails with 4, rank 1 with 3: rank 0's code 4" },
        { 2, { 2, 77 }, 2, "rank 0 fails with 2, rank 1 with 77: rank 0's code 2" },
        { 2, { 0, -9 }, 1, "rank 1 killed by a signal: 1" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int code = -1;
        double dt;
        int rc = launch_with(cases[c].n, cases[c].act, 5, &code, &dt);
        expect(t, rc == 1 && code == cases[c].want, "%s (rc=%d exit=%d, %.2f s)", cases[c].what, rc, code, dt);
    }
    /* a survivor that never ends is killed after timeout + grace */
    int code = -1;
    double dt;
    int rc = launch_with(2, (int[]){ 0, -1 }, 0.5, &code, &dt);
    expect(t, rc == 1 && code == 1 && dt > 0.5 && dt < 8.0,
           "a rank that hangs after the other ended is killed after timeout + grace: exit 1 in %.2f s", dt);

    int bad = -1;
    vs_launch_env_t e;
    rc = vs_launch_local(0, 1, &e, &bad);
    expect(t, rc == -EINVAL, "zero ranks is -EINVAL (rc=%d)", rc);
}

/* The ranks die with their launcher: nothing is left behind. */
static void case_orphans(tally_t *t)
{
    int pipefd[2];
    if (pipe(pipefd) < 0)
        return;
    pid_t mid = fork();
    if (mid == 0) {
        close(pipefd[0]);
        vs_launch_env_t e;
        int code;
        if (vs_launch_local(1, 30, &e, &code) == 0) {
            pid_t me = getpid();
            if (write(pipefd[1], &me, sizeof me) != (ssize_t)sizeof me)
                _exit(1);
            for (;;)
                pause();
        }
        _exit(code);
    }
    close(pipefd[1]);
    pid_t rank0 = 0;
    ssize_t got = read(pipefd[0], &rank0, sizeof rank0);
    close(pipefd[0]);
    kill(mid, SIGKILL);
    waitpid(mid, NULL, 0);
    int gone = 0;
    for (int i = 0; i < 100 && !gone; i++) {
        usleep(20000);
        /* the orphan is reparented (to us as subreaper, or to init): reap if ours */
        waitpid(rank0, NULL, WNOHANG);
        gone = kill(rank0, 0) < 0 && errno == ESRCH;
    }
    expect(t, got == (ssize_t)sizeof rank0 && gone, "a rank dies when its launcher is killed (pid %d)", (int)rank0);
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*fn)(tally_t *); } cases[] = {
        { "env", case_env },
        { "local_exchange", case_local_exchange },
        { "file_rendezvous", case_file_rendezvous },
        { "timeouts", case_timeouts },
        { "handshake", case_handshake },
        { "peer_eof", case_peer_eof },
        { "exit_codes", case_exit_codes },
        { "orphans", case_orphans },
    };
    tally_t t = { 0, 0 };
    /* become the reaper of orphaned grandchildren, so the orphan test sees them end */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        printf("# %s\n", cases[i].name);
        fflush(stdout);   /* the cases fork */
        cases[i].fn(&t);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "unknown case '%s'\n", argv[1]);
        return 2;
    }
    printf("# %d passed, %d failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
