/* versus — helpers for filling a vs_transport_info_t inside a module's query.
 * Header-only: modules link nothing of core's. */
#ifndef VERSUS_INFO_H
#define VERSUS_INFO_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <versus/transport.h>

/* Set attribute key = printf(fmt, ...): replaces a value set before, else
 * appends; dropped when attrs is full. */
__attribute__((format(printf, 3, 4))) static inline void vs_info_attr(vs_transport_info_t *info,
                                                                     const char *key, const char *fmt, ...)
{
    vs_attr_t *a = NULL;
    for (int i = 0; i < info->n_attrs && !a; i++)
        if (strcmp(info->attrs[i].key, key) == 0)
            a = &info->attrs[i];
    if (!a) {
        if (info->n_attrs >= VS_MAX_ATTRS)
            return;
        a = &info->attrs[info->n_attrs++];
        snprintf(a->key, sizeof a->key, "%s", key);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->value, sizeof a->value, fmt, ap);
    va_end(ap);
}

/* Set threshold name = bytes: replaces a value set before, else appends;
 * dropped when thresholds is full. */
static inline void vs_info_threshold(vs_transport_info_t *info, const char *name, int64_t bytes)
{
    for (int i = 0; i < info->n_thresholds; i++)
        if (strcmp(info->thresholds[i].name, name) == 0) {
            info->thresholds[i].bytes = bytes;
            return;
        }
    if (info->n_thresholds >= VS_MAX_THRESHOLDS)
        return;
    vs_threshold_t *th = &info->thresholds[info->n_thresholds++];
    snprintf(th->name, sizeof th->name, "%s", name);
    th->bytes = bytes;
}

#endif
