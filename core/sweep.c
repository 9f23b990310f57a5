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

static const char *const kinds[] = {"versus-shm-", "versus-drift-", NULL};

/* The creator's pid from a segment's name, or 0 when the name is not ours. */
static long creator(const char *name)
{
    for (int i = 0; kinds[i]; i++) {
        size_t n = strlen(kinds[i]);
        if (strncmp(name, kinds[i], n) != 0)
            continue;
        char *end;
        errno = 0;
        long pid = strtol(name + n, &end, 10);
        return errno == 0 && end != name + n && *end == '-' && pid > 0 ? pid : 0;
    }
    return 0;
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
