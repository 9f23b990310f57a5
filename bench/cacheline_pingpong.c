/* The hardware's floor for a small message between two cores: a bare
 * cache-line ping-pong, the yardstick of the shm transport's 8 B latency.
 *
 * Usage: cacheline_pingpong [CPU0 CPU1 [SAMPLES [BATCH [PAYLOAD]]]]
 *
 * Two processes (fork) share one anonymous MAP_SHARED mapping, as the shm
 * transport's ranks share a segment, and are pinned to CPU0 and CPU1.  Each
 * direction owns one 64-byte line: a sequence word written last with a
 * release store and PAYLOAD bytes (0 to 56) beside it, written before.  The
 * first process writes its line and spins (acquire loads) until the second
 * has answered with the same sequence number in its own line; the second
 * copies the payload it read into its answer.  Nothing else is on the path:
 * no queue, no matching, no function call, so each one-way trip is the
 * line's transfer from one core's cache to the other's (the writer's
 * request for ownership, then the reader's miss) and the loads and stores
 * around it.  No software that moves a message through memory can beat it.
 *
 * A sample is the mean round trip over BATCH consecutive round trips, timed
 * with CLOCK_MONOTONIC (as versus-run times a small message with batches, so
 * the clock's cost stays out of the figure); the median and the best sample
 * are printed halved, as one-way times:
 *   one_way_median_ns=... one_way_best_ns=... samples=... batch=... payload=...
 * A payload byte that arrives wrong makes it exit 1. */
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

#define LINE 64

typedef struct line {
    _Alignas(LINE) uint64_t seq;
    unsigned char data[LINE - sizeof(uint64_t)];
} line_t;

/* Write message seq into `out`: payload first, then the sequence word. */
static inline void send_line(line_t *out, const unsigned char *payload, size_t len, uint64_t seq)
{
    memcpy(out->data, payload, len);
    __atomic_store_n(&out->seq, seq, __ATOMIC_RELEASE);
}

static inline void recv_line(const line_t *in, unsigned char *payload, size_t len, uint64_t seq)
{
    for (unsigned long polls = 1; __atomic_load_n(&in->seq, __ATOMIC_ACQUIRE) != seq; polls++) {
        __builtin_ia32_pause();
        if (polls % (1UL << 20) == 0)
            bench_partner_check("cacheline_pingpong");
    }
    memcpy(payload, in->data, len);
}

int main(int argc, char **argv)
{
    int cpu0 = argc > 1 ? atoi(argv[1]) : 0, cpu1 = argc > 2 ? atoi(argv[2]) : 1;
    long samples = argc > 3 ? atol(argv[3]) : 20000;
    long batch = argc > 4 ? atol(argv[4]) : 16;
    long payload = argc > 5 ? atol(argv[5]) : 8;
    if (argc > 6 || cpu0 < 0 || cpu1 < 0 || samples < 1 || batch < 1 || payload < 0 ||
        payload > (long)sizeof(((line_t *)0)->data)) {
        fprintf(stderr, "usage: %s [CPU0 CPU1 [SAMPLES [BATCH [PAYLOAD (0 to 56)]]]]\n", argv[0]);
        return 2;
    }
    line_t *lines = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t *t = calloc((size_t)samples, sizeof *t);
    if (lines == MAP_FAILED || !t) {
        fprintf(stderr, "cacheline_pingpong: out of memory\n");
        return 1;
    }
    line_t *ping = &lines[0], *pong = &lines[2]; /* a line apart: no adjacent-line prefetch pairing */
    long warm = samples / 10 + 100;
    uint64_t total = (uint64_t)(warm + samples * batch);
    if (pin_both(cpu0, cpu1, "cacheline_pingpong"))
        return 2;
    bench_parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("cacheline_pingpong: fork");
        return 1;
    }
    if (child == 0) {
        if (pin_cpu(cpu1, "cacheline_pingpong"))
            _exit(1);
        bench_child = 0;
        unsigned char buf[LINE];
        for (uint64_t s = 1; s <= total; s++) {
            recv_line(ping, buf, (size_t)payload, s);
            send_line(pong, buf, (size_t)payload, s);
        }
        _exit(0);
    }
    bench_child = child;
    unsigned char out[LINE], in[LINE];
    int bad = 0;
    uint64_t s = 0;
    for (long i = 0; i < warm; i++) {
        s++;
        send_line(ping, out, (size_t)payload, s);
        recv_line(pong, in, (size_t)payload, s);
    }
    for (long i = 0; i < samples; i++) {
        uint64_t t0 = now_ns();
        for (long k = 0; k < batch; k++) {
            s++;
            memset(out, (int)(s & 0xff), (size_t)payload);
            send_line(ping, out, (size_t)payload, s);
            recv_line(pong, in, (size_t)payload, s);
        }
        t[i] = now_ns() - t0;
        bad |= payload && in[payload - 1] != (unsigned char)(s & 0xff);
    }
    int status = 0;
    waitpid(child, &status, 0);
    qsort(t, (size_t)samples, sizeof *t, cmp_u64);
    double half = 2.0 * (double)batch;
    printf("one_way_median_ns=%.1f one_way_best_ns=%.1f samples=%ld batch=%ld payload=%ld cpus=%d,%d\n",
           (double)t[samples / 2] / half, (double)t[0] / half, samples, batch, payload, cpu0, cpu1);
    if (bad || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "cacheline_pingpong: %s\n", bad ? "a payload arrived wrong" : "the echoing process failed");
        return 1;
    }
    return 0;
}
