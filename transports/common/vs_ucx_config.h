/* UCX's configuration in force, for the modules whose messages go through UCP
 * (ucx, and mpich over its ch4:ucx device): UCX reads its UCX_* environment
 * itself (ucp_config_read), and prints every setting, defaults included
 * (ucp_config_print).  vs_ucx_config_attrs records the settings versus keeps
 * as attributes named `prefix` + the table's name, and returns the rendezvous
 * threshold when it is a size (-1 for "auto", "inf" or a failure).
 * Header only; the including module links UCX. */
#ifndef VS_UCX_CONFIG_H
#define VS_UCX_CONFIG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include <versus/info.h>

static const struct {
    const char *var;
    const char *attr;
} vs_ucx_config_keep[] = {
    {"UCX_TLS", "tls"},
    {"UCX_NET_DEVICES", "devices"},
    {"UCX_RNDV_THRESH", "rndv_thresh"},
    {"UCX_RNDV_SCHEME", "rndv_scheme"},
    {"UCX_ZCOPY_THRESH", "zcopy_thresh"},
    {"UCX_BCOPY_THRESH", "bcopy_thresh"},
};

/* UCX's memory units as it prints them: "12000", "12K", "8M"; -1 for "auto",
 * "inf" or anything that is not a size. */
static inline long long vs_ucx_memunits(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    return *end == '\0' || *end == '\n' ? v : -1;
}

static inline long long vs_ucx_config_attrs(vs_transport_info_t *info, const char *prefix)
{
    long long rndv = -1;
    ucp_config_t *config;
    if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
        return -1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        ucp_config_print(config, f, NULL, UCS_CONFIG_PRINT_CONFIG);
        fclose(f);
    }
    ucp_config_release(config);
    for (size_t k = 0; buf && k < sizeof vs_ucx_config_keep / sizeof vs_ucx_config_keep[0]; k++) {
        const char *var = vs_ucx_config_keep[k].var;
        size_t n = strlen(var);
        for (const char *p = buf; (p = strstr(p, var)) != NULL; p += n) {
            if ((p != buf && p[-1] != '\n') || p[n] != '=')
                continue;
            const char *val = p + n + 1;
            char key[64];
            snprintf(key, sizeof key, "%s%s", prefix, vs_ucx_config_keep[k].attr);
            vs_info_attr(info, key, "%.*s", (int)strcspn(val, "\n"), val);
            if (strcmp(var, "UCX_RNDV_THRESH") == 0)
                rndv = vs_ucx_memunits(val);
            break;
        }
    }
    free(buf);
    return rndv;
}

#endif
