/* The hardware's floor for a large message between two cores: a bare copy
 * ping-pong, the yardstick of the shm transport's large-message bandwidth
 * beside memcpy_bw (one core copying data its own cache holds).
 *
 * Usage: xcore_copy BYTES [CPU0 CPU1 [REPS [shared|separate]]]
 *
 * Two processes (fork) share the buffers, as the shm transport's ranks do
 * once single copy has mapped the sender's pages, and are pinned to CPU0
 * and CPU1.  One one-way trip is one memcpy of BYTES by the receiving
 * process out of the sending process's buffer, then a flag on its own line
 * (release store, acquire spin) hands the turn over:
 *   shared  : each process has one buffer and sends back what it received
 *             (NetPIPE's cache mode, versus-run --buffers shared): every
 *             line the receiver reads was written by the other core.
 *   separate: each process sends out of a send buffer nobody writes after
 *             the first fill and receives into its own receive buffer
 *             (versus-run's default, as OSU and IMB).
 * Nothing else is on the path (no ring, no matching, no reference to a
 * buffer), so this is what moving the bytes costs; the one-way time is the
 * median of REPS one-way trips timed on CPU0, halved round trips:
 *   bytes=... mode=... one_way_median_ns=... median_GBps=...
 * A received byte that is wrong makes it exit 1. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

typedef struct turn {
    _Alignas(64) uint64_t to1; /* round number handed to the second process */
    _Alignas(64) uint64_t to0; /* and back */
} turn_t;

static void wait_for(const uint64_t *w, uint64_t v)
{
    for (unsigned long polls = 1; __atomic_load_n(w, __ATOMIC_ACQUIRE) != v; polls++) {
        __builtin_ia32_pause();
        if (polls % (1UL << 20) == 0)
            bench_partner_check("xcore_copy");
    }
}

int main(int argc, char **argv)
{
    size_t len = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    int cpu0 = argc > 2 ? atoi(argv[2]) : 0, cpu1 = argc > 3 ? atoi(argv[3]) : 1;
    long reps = argc > 4 ? atol(argv[4]) : 200;
    const char *mode = argc > 5 ? argv[5] : "shared";
    int shared = !strcmp(mode, "shared");
    if (argc < 2 || argc > 6 || !len || cpu0 < 0 || cpu1 < 0 || reps < 1 || (!shared && strcmp(mode, "separate"))) {
        fprintf(stderr, "usage: %s BYTES [CPU0 CPU1 [REPS [shared|separate]]]\n", argv[0]);
        return 2;
    }
    size_t span = (len + 4095) / 4096 * 4096;
    /* [0] process 0's send (and, shared, receive) buffer, [1] process 1's,
     * [2] process 0's receive buffer, [3] process 1's (separate only) */
    unsigned char *area = mmap(NULL, 4 * span + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t *t = calloc((size_t)reps, sizeof *t);
    if (area == MAP_FAILED || !t) {
        fprintf(stderr, "xcore_copy: out of memory\n");
        return 1;
    }
    turn_t *turn = (turn_t *)area;
    unsigned char *buf[4] = {area + 4096, area + 4096 + span, area + 4096 + 2 * span, area + 4096 + 3 * span};
    unsigned char *send0 = buf[0], *send1 = buf[1];
    unsigned char *recv0 = shared ? buf[0] : buf[2], *recv1 = shared ? buf[1] : buf[3];
    memset(send0, 0x5a, len);
    memset(send1, 0x5a, len);
    long warm = reps / 10 + 2;
    uint64_t total = (uint64_t)(warm + reps);
    if (pin_both(cpu0, cpu1, "xcore_copy"))
        return 2;
    bench_parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("xcore_copy: fork");
        return 1;
    }
    if (child == 0) {
        if (pin_cpu(cpu1, "xcore_copy"))
            _exit(1);
        for (uint64_t r = 1; r <= total; r++) {
            wait_for(&turn->to1, r);
            memcpy(recv1, send0, len);
            __atomic_store_n(&turn->to0, r, __ATOMIC_RELEASE);
        }
        _exit(0);
    }
    bench_child = child;
    for (uint64_t r = 1; r <= total; r++) {
        uint64_t t0 = now_ns();
        __atomic_store_n(&turn->to1, r, __ATOMIC_RELEASE);
        wait_for(&turn->to0, r);
        memcpy(recv0, send1, len);
        if (r > (uint64_t)warm)
            t[r - (uint64_t)warm - 1] = now_ns() - t0;
    }
    int status = 0;
    waitpid(child, &status, 0);
    int bad = recv0[len - 1] != 0x5a || recv0[0] != 0x5a;
    qsort(t, (size_t)reps, sizeof *t, cmp_u64);
    double one_way = (double)t[reps / 2] / 2.0;
    printf("bytes=%zu mode=%s one_way_median_ns=%.0f median_GBps=%.2f\n", len, mode, one_way, (double)len / one_way);
    if (bad || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "xcore_copy: %s\n", bad ? "a received byte is wrong" : "the second process failed");
        return 1;
    }
    return 0;
}
