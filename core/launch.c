/* STUB — replaced by the launcher/bootstrap implementation. */
#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int vs_launch_env_detect(vs_launch_env_t *env)
{
    memset(env, 0, sizeof *env);
    snprintf(env->launcher, sizeof env->launcher, "none");
    env->size = 1;
    env->listen_fd = -1;
    return -ENOENT;
}

int vs_launch_local(int n, double timeout_s, vs_launch_env_t *child, int *exit_code)
{
    (void)n; (void)timeout_s; (void)child; (void)exit_code;
    return -ENOSYS;
}

int vs_bootstrap_tcp_create(const vs_launch_env_t *env, const char *rendezvous,
                            const char *rdv_dir, double timeout_s,
                            vs_bootstrap_t **out, char *err, size_t errlen)
{
    (void)env; (void)rendezvous; (void)rdv_dir; (void)timeout_s; (void)out;
    snprintf(err, errlen, "TCP bootstrap not implemented");
    return -ENOSYS;
}
