/* versus-link — a link with a one-way delay and a rate, in user space.
 *
 * Joins two TUN devices, each in its own network namespace, and carries every
 * IP packet from one to the other after the time a real link would take:
 *
 *     leaves  = max(arrives, wire free) + (length + framing) * 8 / rate
 *     delivered = leaves + delay
 *
 * per direction, in order (a FIFO queue per direction, dropping at its tail when
 * full, as a switch port would).  It stands in for the kernel's netem where the
 * kernel has none.  Deadlines are met by sleeping in ppoll until --spin µs
 * before the next one and polling from there; under SCHED_FIFO (--fifo) ranks
 * that busy-poll on the same CPU cannot starve it.
 *
 * Waking from an idle CPU can cost more than the delay's precision (tens of
 * microseconds in a virtual machine): --awake holds the kernel's CPU latency
 * request (/dev/cpu_dma_latency) at 0 while it runs, so idle CPUs stay ready,
 * at the cost of keeping them busy.
 *
 * The TUN devices must exist (ip tuntap add ... mode tun), persistent; versus
 * lab makes them.  SIGTERM or SIGINT end it; on the way out, and on SIGUSR1, it
 * prints per direction the packets, bytes, drops and how late it delivered.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define MAX_PACKET 65536

typedef struct {
    const char *name;      /* "a>b" */
    int in, out;           /* read from in, write to out */
    unsigned char *data;   /* cap slots of slot bytes */
    uint64_t *due;         /* ns, CLOCK_MONOTONIC */
    uint32_t *len;
    unsigned head, count, cap;
    size_t slot;
    uint64_t wire_free;    /* when the last packet has left */
    uint64_t packets, bytes, drops, late_sum, late_max;
} direction_t;

typedef struct {
    uint64_t delay_ns;
    double ns_per_byte;    /* 0: no rate */
    unsigned framing;
    uint64_t spin_ns;
} link_t;

static volatile sig_atomic_t stop_requested, stats_requested;

static void on_stop(int sig) { (void)sig; stop_requested = 1; }
static void on_stats(int sig) { (void)sig; stats_requested = 1; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: versus-link --a NETNS:IFACE --b NETNS:IFACE [options]\n"
        "\n"
        "Carries IP packets between two TUN devices (each in a network namespace named as\n"
        "for 'ip netns') with a one-way delay and a rate, per direction.\n"
        "\n"
        "  --a NETNS:IFACE     one end: a TUN device in /run/netns/NETNS\n"
        "  --b NETNS:IFACE     the other end\n"
        "  --delay US          one-way delay in microseconds (default 0)\n"
        "  --rate MBIT         link rate in Mbit/s, 10^6 bit/s (default: none)\n"
        "  --framing BYTES     bytes the link adds to each IP packet for the rate (default 14,\n"
        "                      an Ethernet header, as the kernel's tbf counts)\n"
        "  --queue PACKETS     per-direction queue; packets beyond it are dropped (default 1000)\n"
        "  --mtu BYTES         largest packet carried (default 9000)\n"
        "  --spin US           poll instead of sleeping this close to a deadline (default 30)\n"
        "  --cpu N             pin to CPU N\n"
        "  --fifo PRIO         run under SCHED_FIFO at PRIO (1-99; default: normal scheduling)\n"
        "  --awake             keep idle CPUs out of deep idle states while running\n"
        "                      (holds /dev/cpu_dma_latency at 0): wake-ups on time\n"
        "  --pidfile FILE      write the process id there once both ends are open\n"
        "  -h, --help          this text\n"
        "\n"
        "Exits 0 on SIGTERM or SIGINT, 2 on bad arguments, 1 when a device cannot be opened.\n");
}

static int parse_number(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "versus-link: %s %s: give a number from %g to %g\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Open IFACE inside the network namespace NETNS ("NETNS:IFACE"). */
static int open_end(const char *spec)
{
    char ns[256], path[300];
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= sizeof ns
        || strlen(colon + 1) >= IFNAMSIZ) {
        fprintf(stderr, "versus-link: '%s': give an end as NETNS:IFACE\n", spec);
        return -EXIT_USAGE;
    }
    memcpy(ns, spec, (size_t)(colon - spec));
    ns[colon - spec] = '\0';
    snprintf(path, sizeof path, "/run/netns/%s", ns);
    int nsfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) {
        fprintf(stderr, "versus-link: network namespace %s: %s\n", ns, strerror(errno));
        return -1;
    }
    if (setns(nsfd, CLONE_NEWNET) != 0) {
        fprintf(stderr, "versus-link: entering %s: %s (needs root)\n", ns, strerror(errno));
        close(nsfd);
        return -1;
    }
    close(nsfd);
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "versus-link: /dev/net/tun: %s\n", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "%s", colon + 1);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
        fprintf(stderr, "versus-link: TUN device %s in %s: %s\n", colon + 1, ns, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int direction_init(direction_t *d, const char *name, int in, int out, unsigned cap, size_t slot)
{
    memset(d, 0, sizeof *d);
    d->name = name;
    d->in = in;
    d->out = out;
    d->cap = cap;
    d->slot = slot;
    d->data = malloc((size_t)cap * slot);
    d->due = calloc(cap, sizeof *d->due);
    d->len = calloc(cap, sizeof *d->len);
    return d->data && d->due && d->len ? 0 : -1;
}

/* Read every packet waiting on d->in and queue it with its delivery time. */
static void take_in(direction_t *d, const link_t *l)
{
    unsigned char scratch[MAX_PACKET];
    for (;;) {
        unsigned char *dst = d->count < d->cap
            ? d->data + (size_t)((d->head + d->count) % d->cap) * d->slot : scratch;
        /* a slot holds one byte more than the largest packet carried: a read that fills
         * it was a larger packet, cut short by the device, and is dropped, not forwarded */
        ssize_t n = read(d->in, dst, dst == scratch ? sizeof scratch : d->slot);
        if (n <= 0)
            return;                       /* EAGAIN: nothing more now */
        if (dst == scratch || (size_t)n >= d->slot) {
            d->drops++;
            continue;
        }
        uint64_t t = now_ns();
        uint64_t start = t > d->wire_free ? t : d->wire_free;
        uint64_t leaves = start + (uint64_t)(((double)n + l->framing) * l->ns_per_byte);
        d->wire_free = leaves;
        unsigned i = (d->head + d->count) % d->cap;
        d->due[i] = leaves + l->delay_ns;
        d->len[i] = (uint32_t)n;
        d->count++;
    }
}

/* Deliver every queued packet whose time has come. */
static void hand_out(direction_t *d)
{
    while (d->count) {
        uint64_t t = now_ns();
        unsigned i = d->head;
        if (d->due[i] > t)
            return;
        ssize_t n = write(d->out, d->data + (size_t)i * d->slot, d->len[i]);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;                       /* try again on the next turn */
        if (n < 0)
            d->drops++;
        else {
            uint64_t late = t - d->due[i];
            d->packets++;
            d->bytes += (uint64_t)n;
            d->late_sum += late;
            if (late > d->late_max)
                d->late_max = late;
        }
        d->head = (d->head + 1) % d->cap;
        d->count--;
    }
}

static void print_stats(const direction_t *d, int n)
{
    for (int k = 0; k < n; k++)
        fprintf(stderr, "versus-link: %s %llu packets %llu bytes %llu dropped, late by %.2f us on average, "
                "%.2f us at most\n", d[k].name, (unsigned long long)d[k].packets,
                (unsigned long long)d[k].bytes, (unsigned long long)d[k].drops,
                d[k].packets ? (double)d[k].late_sum / (double)d[k].packets / 1e3 : 0.0,
                (double)d[k].late_max / 1e3);
    fflush(stderr);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"a", required_argument, 0, 'a'}, {"b", required_argument, 0, 'b'},
        {"delay", required_argument, 0, 'd'}, {"rate", required_argument, 0, 'r'},
        {"framing", required_argument, 0, 'F'}, {"queue", required_argument, 0, 'q'},
        {"mtu", required_argument, 0, 'm'}, {"spin", required_argument, 0, 's'},
        {"cpu", required_argument, 0, 'c'}, {"fifo", required_argument, 0, 'f'},
        {"pidfile", required_argument, 0, 'p'}, {"awake", no_argument, 0, 'A'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *end_a = NULL, *end_b = NULL, *pidfile = NULL;
    int awake = 0;
    double delay = 0, rate = 0, framing = 14, queue = 1000, mtu = 9000, spin = 30, cpu = -1, fifo = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'a': end_a = optarg; break;
        case 'b': end_b = optarg; break;
        case 'd': bad = parse_number("--delay", optarg, 0, 10e6, &delay); break;
        case 'r': bad = parse_number("--rate", optarg, 0.001, 1e6, &rate); break;
        case 'F': bad = parse_number("--framing", optarg, 0, 1000, &framing); break;
        case 'q': bad = parse_number("--queue", optarg, 1, 1e6, &queue); break;
        case 'm': bad = parse_number("--mtu", optarg, 68, MAX_PACKET, &mtu); break;
        case 's': bad = parse_number("--spin", optarg, 0, 1e6, &spin); break;
        case 'c': bad = parse_number("--cpu", optarg, 0, CPU_SETSIZE - 1, &cpu); break;
        case 'f': bad = parse_number("--fifo", optarg, 1, 99, &fifo); break;
        case 'p': pidfile = optarg; break;
        case 'A': awake = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (optind < argc || !end_a || !end_b) {
        fprintf(stderr, "versus-link: give both ends, --a NETNS:IFACE and --b NETNS:IFACE (see --help)\n");
        return EXIT_USAGE;
    }
    link_t l = {.delay_ns = (uint64_t)(delay * 1e3), .ns_per_byte = rate > 0 ? 8e3 / rate : 0,
                .framing = (unsigned)framing, .spin_ns = (uint64_t)(spin * 1e3)};

    int fa = open_end(end_a);
    if (fa < 0)
        return fa == -EXIT_USAGE ? EXIT_USAGE : 1;
    int fb = open_end(end_b);
    if (fb < 0)
        return fb == -EXIT_USAGE ? EXIT_USAGE : 1;

    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            fprintf(stderr, "versus-link: cannot pin to CPU %d: %s (running unpinned)\n", (int)cpu, strerror(errno));
    }
    if (fifo > 0) {
        struct sched_param sp = {.sched_priority = (int)fifo};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            fprintf(stderr, "versus-link: SCHED_FIFO %d: %s (running at normal priority)\n", (int)fifo,
                    strerror(errno));
    }

    if (awake) {
        /* the request holds while the file stays open, i.e. until this process ends */
        int qos = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
        int32_t zero = 0;
        if (qos < 0 || write(qos, &zero, sizeof zero) != (ssize_t)sizeof zero)
            fprintf(stderr, "versus-link: --awake: /dev/cpu_dma_latency: %s (idle CPUs may wake late)\n",
                    strerror(errno));
    }

    direction_t dir[2];
    size_t slot = (size_t)mtu + 1;
    if (direction_init(&dir[0], "a>b", fa, fb, (unsigned)queue, slot) != 0
        || direction_init(&dir[1], "b>a", fb, fa, (unsigned)queue, slot) != 0) {
        fprintf(stderr, "versus-link: out of memory for a queue of %u packets of %zu B\n", (unsigned)queue, slot);
        return 1;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_stats;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t blocked, during_wait;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGUSR1);
    sigprocmask(SIG_BLOCK, &blocked, &during_wait);   /* delivered only inside ppoll */

    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (!f) {
            fprintf(stderr, "versus-link: --pidfile %s: %s\n", pidfile, strerror(errno));
            return 1;
        }
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
    }

    struct pollfd pfd[2] = {{.fd = fa, .events = POLLIN}, {.fd = fb, .events = POLLIN}};
    while (!stop_requested) {
        for (int k = 0; k < 2; k++) {
            hand_out(&dir[k]);
            take_in(&dir[k], &l);
            hand_out(&dir[k]);
        }
        if (stats_requested) {
            stats_requested = 0;
            print_stats(dir, 2);
        }
        uint64_t next = UINT64_MAX;
        for (int k = 0; k < 2; k++)
            if (dir[k].count && dir[k].due[dir[k].head] < next)
                next = dir[k].due[dir[k].head];
        uint64_t t = now_ns();
        if (next != UINT64_MAX && next <= t + l.spin_ns) {
            /* close to a deadline: poll without sleeping, but let signals in */
            sigset_t pending;
            sigpending(&pending);
            if (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT) || sigismember(&pending, SIGUSR1)) {
                struct timespec zero = {0, 0};
                ppoll(pfd, 2, &zero, &during_wait);
            }
            continue;
        }
        struct timespec ts, *tsp = NULL;
        if (next != UINT64_MAX) {
            uint64_t wait = next - t - l.spin_ns;
            ts.tv_sec = (time_t)(wait / 1000000000u);
            ts.tv_nsec = (long)(wait % 1000000000u);
            tsp = &ts;
        }
        if (ppoll(pfd, 2, tsp, &during_wait) < 0 && errno != EINTR) {
            fprintf(stderr, "versus-link: ppoll: %s\n", strerror(errno));
            break;
        }
    }
    print_stats(dir, 2);
    return 0;
}
