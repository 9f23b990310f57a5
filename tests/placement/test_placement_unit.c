/* Placement and drift probe, in process: two threads act as two ranks through
 * a thread bootstrap, so binding (per thread) and the all-gather are real.
 * Expectations come from sysfs, not from the code under test. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "placement.h"
#include "record.h"
#include "topo.h"

#define NRANKS 2
#define SLOT (64 * 1024)

typedef struct shared {
    pthread_barrier_t barrier;
    char *slots;
} shared_t;

static int tb_barrier(vs_bootstrap_t *bs)
{
    pthread_barrier_wait(&((shared_t *)bs->ctx)->barrier);
    return 0;
}

static int tb_exchange(vs_bootstrap_t *bs, const void *mine, void *all, size_t len)
{
    shared_t *sh = bs->ctx;
    if (len > SLOT)
        return -EMSGSIZE;
    memcpy(sh->slots + (size_t)bs->rank * SLOT, mine, len);
    pthread_barrier_wait(&sh->barrier);
    for (int r = 0; r < bs->size; r++)
        memcpy((char *)all + (size_t)r * len, sh->slots + (size_t)r * SLOT, len);
    pthread_barrier_wait(&sh->barrier);
    return 0;
}

typedef struct result {
    vs_bootstrap_t bs;
    vs_placement_req_t req;
    int rc;
    char err[1024];
    char json[8192];
    cpu_set_t held; /* sched_getaffinity after apply */
    double rtt_ns;
    int drift_rc;
    int with_drift;
} result_t;

static void *rank_main(void *arg)
{
    result_t *r = arg;
    vs_placement_t *p = NULL;
    cpu_set_t start;
    sched_getaffinity(0, sizeof start, &start);
    r->rc = vs_placement_apply(&r->req, &r->bs, &p, r->err, sizeof r->err);
    sched_getaffinity(0, sizeof r->held, &r->held);
    if (r->rc == 0) {
        vs_json_t j;
        vs_json_init(&j);
        vs_json_obj_begin(&j);
        vs_json_key(&j, "placement");
        vs_record_placement(p, &j);
        vs_json_key(&j, "topology");
        vs_record_topology(p, &j);
        vs_json_obj_end(&j);
        snprintf(r->json, sizeof r->json, "%s", j.buf ? j.buf : "");
        vs_json_free(&j);
        if (r->with_drift) {
            char derr[256];
            r->drift_rc = vs_drift_measure(&r->bs, 4000, 10.0, &r->rtt_ns, derr, sizeof derr);
        }
    }
    vs_placement_free(p);
    sched_setaffinity(0, sizeof start, &start);
    return NULL;
}

static int failures;

static void check(int cond, const char *what)
{
    printf("%s: %s\n", cond ? "ok" : "FAIL", what);
    if (!cond)
        failures++;
}

static void run_ranks(const char *policy, const char *cpus, int with_drift, result_t res[NRANKS])
{
    shared_t sh;
    pthread_t th[NRANKS];
    pthread_barrier_init(&sh.barrier, NULL, NRANKS);
    sh.slots = calloc(NRANKS, SLOT);
    for (int i = 0; i < NRANKS; i++) {
        memset(&res[i], 0, sizeof res[i]);
        res[i].bs = (vs_bootstrap_t){.name = "threads", .rank = i, .size = NRANKS, .ctx = &sh,
                                     .barrier = tb_barrier, .exchange = tb_exchange};
        res[i].req = (vs_placement_req_t){.policy = policy, .cpus = cpus};
        res[i].with_drift = with_drift;
        pthread_create(&th[i], NULL, rank_main, &res[i]);
    }
    for (int i = 0; i < NRANKS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&sh.barrier);
    free(sh.slots);
}

/* Count of CPUs in a sysfs list file, or -1. */
static __attribute__((unused)) int sysfs_count(const char *path)
{
    char buf[256];
    cpu_set_t s;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return vs_cpuset_parse(buf, &s) == 0 ? CPU_COUNT(&s) : -1;
}

/* The "cpus_after" value of rank r in the placement JSON. */
static int json_cpus_after(const char *json, int r, char *out, size_t len)
{
    const char *p = json;
    for (int i = 0; i <= r; i++) {
        p = strstr(p, "\"cpus_after\":\"");
        if (!p)
            return -1;
        p += strlen("\"cpus_after\":\"");
    }
    size_t n = strcspn(p, "\"");
    snprintf(out, len, "%.*s", (int)n, p);
    return 0;
}

int main(void)
{
    char err[256];
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    int ncpus = CPU_COUNT(&all);

    /* argument checks need no machine */
    check(vs_placement_check_args(&(vs_placement_req_t){"same-l9", NULL}, err, sizeof err) == -EINVAL &&
              strstr(err, "same-l9"), "an unknown policy is refused and named");
    check(vs_placement_check_args(&(vs_placement_req_t){NULL, "0,x"}, err, sizeof err) == -EINVAL,
          "a malformed --cpus list is refused");
    check(vs_placement_check_args(&(vs_placement_req_t){"same-l3", "0,1"}, err, sizeof err) == -EINVAL,
          "--placement and --cpus together are refused");
    check(vs_placement_check_args(&(vs_placement_req_t){"auto", "1,0"}, err, sizeof err) == 0,
          "--cpus with the default policy is accepted");

    cpu_set_t s;
    char list[64];
    check(vs_cpuset_parse("0-2,5,7-8", &s) == 0 && CPU_COUNT(&s) == 6, "cpu list parses");
    vs_cpuset_format(&s, list, sizeof list);
    check(strcmp(list, "0-2,5,7-8") == 0, "cpu list formats like the kernel's Cpus_allowed_list");

    if (ncpus < 2) {
        printf("SKIP: fewer than 2 usable CPUs, binding tests need 2\n");
        return failures ? 1 : 77;
    }
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            if (first < 0)
                first = c;
            else if (second < 0)
                second = c;
        }

    /* explicit CPUs, reversed: each rank holds exactly its CPU, and says so */
    char cpus[32];
    snprintf(cpus, sizeof cpus, "%d,%d", second, first);
    result_t res[NRANKS];
    run_ranks(NULL, cpus, 1, res);
    for (int i = 0; i < NRANKS; i++) {
        char what[160], rec[64], held[64];
        int want = i == 0 ? second : first;
        snprintf(what, sizeof what, "--cpus %s: rank %d applied (%s)", cpus, i, res[i].err);
        check(res[i].rc == 0, what);
        vs_cpuset_format(&res[i].held, held, sizeof held);
        snprintf(what, sizeof what, "--cpus %s: rank %d holds exactly CPU %d (holds %s)", cpus, i, want, held);
        check(CPU_COUNT(&res[i].held) == 1 && CPU_ISSET(want, &res[i].held), what);
        snprintf(what, sizeof what, "rank %d's record names the CPUs it holds", i);
        check(json_cpus_after(res[0].json, i, rec, sizeof rec) == 0 &&
                  strcmp(rec, i == 0 ? (snprintf(held, sizeof held, "%d", second), held)
                                     : (snprintf(held, sizeof held, "%d", first), held)) == 0, what);
    }
    check(strstr(res[0].json, "\"policy\":\"cpus\"") != NULL, "record says the CPUs were explicit");
    check(strstr(res[0].json, "\"relation\":\"pu\"") == NULL && strstr(res[0].json, "\"relation\":\"") != NULL,
          "distinct CPUs are not reported as the same PU");
    check(strstr(res[0].json, "\"caches\":[") != NULL || strstr(res[0].json, "\"hwloc\":false") != NULL,
          "topology lists caches (with hwloc)");
    check(res[0].drift_rc == 0 && res[1].drift_rc == 0, "drift probe ran on both ranks");
    check(isfinite(res[0].rtt_ns) && res[0].rtt_ns > 1.0 && res[0].rtt_ns < 1e6 && res[1].rtt_ns == res[0].rtt_ns,
          "drift probe gives one finite round trip, the same on both ranks");
    printf("drift probe: cache-line round trip %.0f ns between CPUs %d and %d\n", res[0].rtt_ns, second, first);

    /* more CPUs named than exist */
    run_ranks(NULL, "0,1000", 0, res);
    check(res[0].rc == -EINVAL && res[1].rc == -EINVAL, "a CPU outside the machine fails on every rank");
    check(strstr(res[1].err, "1000") && strstr(res[0].err, "rank 1") != NULL, "the message names the missing CPU");

    /* same-core: possible only with SMT siblings */
    run_ranks("same-core", NULL, 0, res);
#if VS_HAVE_HWLOC
    int smt = sysfs_count("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
    if (smt == 1) {
        check(res[0].rc == -EINVAL && res[1].rc == -EINVAL, "same-core without SMT fails on both ranks");
        check(strstr(res[0].err, "SMT") != NULL, "the message says SMT is missing");
    } else if (smt > 1) {
        check(res[0].rc == 0 && res[1].rc == 0, "same-core with SMT succeeds");
    }
#else
    check(res[0].rc == -EINVAL && strstr(res[0].err, "hwloc"), "policies say they need hwloc");
#endif

    /* cross-node with both ranks in this process */
    run_ranks("cross-node", NULL, 0, res);
    check(res[0].rc == -EINVAL && strstr(res[0].err, "different hosts"), "cross-node on one host fails");

#if VS_HAVE_HWLOC
    run_ranks("auto", NULL, 0, res);
    check(res[0].rc == 0 && res[1].rc == 0, "auto applies");
    check(!CPU_EQUAL(&res[0].held, &res[1].held) && CPU_COUNT(&res[0].held) == 1,
          "auto puts the two ranks on distinct single PUs");
#endif
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
