/* versus — helpers for filling a vs_transport_info_t inside a module's query.
 * Header-only: modules link nothing of core's. */
#ifndef VERSUS_INFO_H
#define VERSUS_INFO_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <versus/transport.h>

/* Append attribute key = printf(fmt, ...); dropped when attrs is full. */
__attribute__((format(printf, 3, 4))) static inline void vs_info_attr(vs_transport_info_t *info,
                                                                     const char *key, const char *fmt, ...)
{
    if (info->n_attrs >= VS_MAX_ATTRS)
        return;
    vs_attr_t *a = &info->attrs[info->n_attrs++];
    snprintf(a->key, sizeof a->key, "%s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->value, sizeof a->value, fmt, ap);
    va_end(ap);
}

/* Append threshold name = bytes; dropped when thresholds is full. */
static inline void vs_info_threshold(vs_transport_info_t *info, const char *name, int64_t bytes)
{
    if (info->n_thresholds >= VS_MAX_THRESHOLDS)
        return;
    vs_threshold_t *th = &info->thresholds[info->n_thresholds++];
    snprintf(th->name, sizeof th->name, "%s", name);
    th->bytes = bytes;
}

#endif
