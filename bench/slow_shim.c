/* A slowdown of a stack that leaves its run record unchanged, for bench/gate.py.
 *
 * LD_PRELOAD=bench/slow_shim.so with SLOW_FRACTION=g: in versus-run processes only (the
 * analysis in Python is left alone), each sendmsg() (tcp) and each memcpy() of at least
 * SLOW_MIN_BYTES (default 33: shm's payload copies; its 32 B box line copies inline) first
 * spins for g times the time since this process's previous such call, capped at 1 ms.  In a
 * ping-pong the two ranks' spins add up to 2g of the round trip they lengthen, so the time
 * grows by 1 / (1 - 2g) whatever the host's speed: g = 1/12 makes it 20 % slower.
 *
 *   cc -O2 -shared -fPIC -o bench/slow_shim.so bench/slow_shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double fraction;
static size_t min_bytes = 33;
static int active;
static uint64_t last_ns;
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static void *(*real_memcpy)(void *, const void *, size_t);

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin(void)
{
    uint64_t t = now_ns();
    if (last_ns) {
        uint64_t gap = t - last_ns;
        if (gap > 1000000)
            gap = 1000000;
        uint64_t until = t + (uint64_t)(fraction * (double)gap);
        while (now_ns() < until)
            __builtin_ia32_pause();
    }
    last_ns = now_ns();
}

__attribute__((constructor)) static void slow_init(void)
{
    real_sendmsg = (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
    real_memcpy = (void *(*)(void *, const void *, size_t))dlsym(RTLD_NEXT, "memcpy");
    const char *f = getenv("SLOW_FRACTION"), *m = getenv("SLOW_MIN_BYTES");
    char cmd[256] = {0};
    FILE *p = fopen("/proc/self/cmdline", "r");
    if (p) {
        size_t n = fread(cmd, 1, sizeof cmd - 1, p);
        cmd[n] = 0;
        fclose(p);
    }
    if (m)
        min_bytes = (size_t)strtoull(m, NULL, 10);
    fraction = f ? strtod(f, NULL) : 0.0;
    active = fraction > 0 && strstr(cmd, "versus-run") != NULL;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    if (active)
        spin();
    return real_sendmsg(fd, msg, flags);
}

void *memcpy(void *d, const void *s, size_t n)
{
    if (!real_memcpy) {                 /* before the constructor: copy by hand */
        unsigned char *dd = d;
        const unsigned char *ss = s;
        while (n--)
            *dd++ = *ss++;
        return d;
    }
    if (active && n >= min_bytes)
        spin();
    return real_memcpy(d, s, n);
}
