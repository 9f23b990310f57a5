#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VS_SEGMENT_PREFIX "versus-"

/* The creator's pid from a segment's name, versus-<kind>-<pid>-<token> with kind
 * a lower-case word (core's "drift", a module's own name), or 0 when the name is
 * not one of ours. */
static long creator(const char *name)
{
    size_t n = strlen(VS_SEGMENT_PREFIX);
    if (strncmp(name, VS_SEGMENT_PREFIX, n) != 0)
        return 0;
    const char *kind = name + n, *p = kind;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
        p++;
    if (p == kind || *p != '-' || !(p[1] >= '0' && p[1] <= '9'))
        return 0;
    char *end;
    errno = 0;
    long pid = strtol(p + 1, &end, 10);
    return errno == 0 && *end == '-' && pid > 0 ? pid : 0;
}

int vs_shm_sweep(FILE *report)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return -errno;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid = creator(e->d_name);
        if (!pid)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != geteuid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to judge) */
        char name[300];
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (shm_unlink(name) == 0) {
            removed++;
            if (report)
                fprintf(report, "removed %s (its run, pid %ld, has ended)\n", name, pid);
        }
    }
    closedir(d);
    return removed;
}
