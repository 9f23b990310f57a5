/* UCX's configuration in force, for the modules whose messages go through UCP
 * (ucx, and mpich over its ch4:ucx device): UCX reads its UCX_* environment
 * itself (ucp_config_read), and prints every setting, defaults included
 * (ucp_config_print).  vs_ucx_config_attrs records the settings versus keeps
 * as attributes named `prefix` + the table's name, and returns the rendezvous
 * threshold when it is a size (-1 for "auto", "inf" or a failure).
 * Header only; the including module links UCX. */
#ifndef VS_UCX_CONFIG_H
#define VS_UCX_CONFIG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>
#ifdef VS_UCX_PARSER
#include <ucs/config/parser.h>
#endif

#include <versus/info.h>

/* What one of UCX's printers writes to a FILE (ucp_config_print, ucp_ep_print_info,
 * ...), captured in memory: begin, print to pr.f, read vs_ucx_print_text, end. */
typedef struct vs_ucx_print {
    char *buf;
    size_t len;
    FILE *f;
} vs_ucx_print_t;

static inline int vs_ucx_print_begin(vs_ucx_print_t *pr)
{
    pr->buf = NULL;
    pr->len = 0;
    pr->f = open_memstream(&pr->buf, &pr->len);
    return pr->f ? 0 : -errno;
}

static inline const char *vs_ucx_print_text(vs_ucx_print_t *pr)
{
    fflush(pr->f);
    return pr->buf ? pr->buf : "";
}

static inline void vs_ucx_print_end(vs_ucx_print_t *pr)
{
    fclose(pr->f);
    free(pr->buf);
}

/* The value of a "VAR=value" line in UCX's printed configuration, or NULL. */
static inline const char *vs_ucx_setting(const char *text, const char *var)
{
    size_t n = strlen(var);
    for (const char *p = text; (p = strstr(p, var)) != NULL; p += n)
        if ((p == text || p[-1] == '\n') && p[n] == '=')
            return p + n + 1;
    return NULL;
}

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
    vs_ucx_print_t pr;
    if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
        return -1;
    if (vs_ucx_print_begin(&pr)) {
        ucp_config_release(config);
        return -1;
    }
    ucp_config_print(config, pr.f, NULL, UCS_CONFIG_PRINT_CONFIG);
    ucp_config_release(config);
    const char *text = vs_ucx_print_text(&pr);
    for (size_t k = 0; k < sizeof vs_ucx_config_keep / sizeof vs_ucx_config_keep[0]; k++) {
        const char *val = vs_ucx_setting(text, vs_ucx_config_keep[k].var);
        if (!val)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%s%s", prefix, vs_ucx_config_keep[k].attr);
        vs_info_attr(info, key, "%.*s", (int)strcspn(val, "\n"), val);
        if (strcmp(vs_ucx_config_keep[k].var, "UCX_RNDV_THRESH") == 0)
            rndv = vs_ucx_memunits(val);
    }
    vs_ucx_print_end(&pr);
    return rndv;
}

/* A setting of one of UCX's transports ("UCX_SYSV_SEG_SIZE") as UCX's parser
 * prints its registered tables (what `ucx_info -c` shows: every transport loaded
 * in this process, defaults included), in bytes; -1 when it is not there, not a
 * size, or UCX's development headers were missing at build time. */
static inline long long vs_ucx_tl_setting(const char *var)
{
    long long v = -1;
#ifdef VS_UCX_PARSER
    vs_ucx_print_t pr;
    if (vs_ucx_print_begin(&pr))
        return -1;
    ucs_config_parser_print_all_opts(pr.f, "UCX_", UCS_CONFIG_PRINT_CONFIG, &ucs_config_global_list);
    const char *val = vs_ucx_setting(vs_ucx_print_text(&pr), var);
    if (val)
        v = vs_ucx_memunits(val);
    vs_ucx_print_end(&pr);
#else
    (void)var;
#endif
    return v;
}

/* The segment size of UCX's transport `tl` ("sysv", "posix", "tcp"): the largest
 * active message it sends in one copy; above it UCP's eager protocol sends the
 * message in several fragments.  Recorded as threshold `name` when known. */
static inline void vs_ucx_seg_size_threshold(vs_transport_info_t *info, const char *tl, const char *name)
{
    char var[64];
    int n = snprintf(var, sizeof var, "UCX_%s_SEG_SIZE", tl);
    for (int i = 4; i < n; i++)
        var[i] = (char)(var[i] >= 'a' && var[i] <= 'z' ? var[i] - 'a' + 'A' : var[i]);
    long long v = vs_ucx_tl_setting(var);
    if (v > 0)
        vs_info_threshold(info, name, v);
}

#endif
