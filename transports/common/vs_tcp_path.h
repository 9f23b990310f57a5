/* versus — the path of a TCP connection, for the modules that send over TCP.
 *
 * What the packet steps of a curve follow: the connection's segment size
 * (TCP_MAXSEG), the interface its local address belongs to, and that
 * interface's MTU; and its congestion control (TCP_CONGESTION): a pacing one
 * (bbr) spaces the segments of a large message by its own estimate of the
 * bandwidth, per connection.  Header-only, like the other helpers here.
 */
#ifndef VS_TCP_PATH_H
#define VS_TCP_PATH_H

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct vs_tcp_path {
    int mss;          /* -1 when unknown */
    int mtu;          /* -1 when unknown */
    char iface[16];   /* "" when unknown */
    char congestion[16]; /* "" when unknown */
} vs_tcp_path_t;

static inline void vs_tcp_path_of(int fd, vs_tcp_path_t *p)
{
    p->mss = p->mtu = -1;
    memset(p->iface, 0, sizeof p->iface);
    memset(p->congestion, 0, sizeof p->congestion);
    socklen_t sl = sizeof p->congestion - 1;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, p->congestion, &sl))
        p->congestion[0] = '\0';
    sl = sizeof p->mss;
    if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &p->mss, &sl))
        p->mss = -1;
    struct sockaddr_in me;
    sl = sizeof me;
    struct ifaddrs *ifs;
    if (getsockname(fd, (struct sockaddr *)&me, &sl) || me.sin_family != AF_INET || getifaddrs(&ifs))
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != me.sin_addr.s_addr)
            continue;
        snprintf(p->iface, sizeof p->iface, "%s", i->ifa_name);
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", i->ifa_name);
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0)
            p->mtu = ifr.ifr_mtu;
        if (s >= 0)
            close(s);
        break;
    }
    freeifaddrs(ifs);
}

#endif
