#include "json.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vs_json_init(vs_json_t *j)
{
    memset(j, 0, sizeof *j);
    j->first[0] = 1;
}

void vs_json_free(vs_json_t *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

void vs_json_reset(vs_json_t *j)
{
    char *buf = j->buf;
    size_t cap = j->cap;
    vs_json_init(j);
    j->buf = buf;
    j->cap = cap;
    if (buf)
        buf[0] = '\0';
}

static void put(vs_json_t *j, const char *s, size_t n)
{
    if (j->oom)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) {
            j->oom = 1;
            return;
        }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(vs_json_t *j, const char *s) { put(j, s, strlen(s)); }

/* comma before a value unless it follows a key or opens a container */
static void sep(vs_json_t *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (!j->first[j->depth])
        put(j, ",", 1);
    j->first[j->depth] = 0;
}

static void open_(vs_json_t *j, char c)
{
    sep(j);
    put(j, &c, 1);
    if (j->depth + 1 < VS_JSON_DEPTH)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(vs_json_t *j, char c)
{
    put(j, &c, 1);
    if (j->depth > 0)
        j->depth--;
}

void vs_json_obj_begin(vs_json_t *j) { open_(j, '{'); }
void vs_json_obj_end(vs_json_t *j) { close_(j, '}'); }
void vs_json_arr_begin(vs_json_t *j) { open_(j, '['); }
void vs_json_arr_end(vs_json_t *j) { close_(j, ']'); }

/* A JSON string of s: the escapes JSON needs, and a byte that is not part of
 * valid UTF-8 (a host name, an argument, an environment value can hold one)
 * written as U+FFFD, so that every record is valid UTF-8. */
static void quoted(vs_json_t *j, const char *s)
{
    put(j, "\"", 1);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)p);
    while (*p) {
        char esc[8];
        size_t k = 1;
        switch (*p) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                puts_(j, esc);
            } else if ((k = vs_utf8_seq(p, left)) > 0) {
                put(j, (const char *)p, k);
            } else {
                puts_(j, "\\ufffd");
                k = 1;
            }
        }
        p += k;
        left -= k;
    }
    put(j, "\"", 1);
}

void vs_json_key(vs_json_t *j, const char *key)
{
    sep(j);
    quoted(j, key);
    put(j, ":", 1);
    j->after_key = 1;
}

void vs_json_str(vs_json_t *j, const char *s)
{
    sep(j);
    quoted(j, s);
}

void vs_json_int(vs_json_t *j, int64_t v)
{
    char b[32];
    sep(j);
    snprintf(b, sizeof b, "%lld", (long long)v);
    puts_(j, b);
}

void vs_json_num(vs_json_t *j, double v)
{
    char b[40];
    sep(j);
    if (!isfinite(v)) {
        puts_(j, "null");
        return;
    }
    snprintf(b, sizeof b, "%.17g", v);
    puts_(j, b);
}

void vs_json_bool(vs_json_t *j, int v)
{
    sep(j);
    puts_(j, v ? "true" : "false");
}

void vs_json_null(vs_json_t *j)
{
    sep(j);
    puts_(j, "null");
}

void vs_json_kstr(vs_json_t *j, const char *k, const char *s) { vs_json_key(j, k); vs_json_str(j, s); }
void vs_json_kint(vs_json_t *j, const char *k, int64_t v) { vs_json_key(j, k); vs_json_int(j, v); }
void vs_json_knum(vs_json_t *j, const char *k, double v) { vs_json_key(j, k); vs_json_num(j, v); }
void vs_json_kbool(vs_json_t *j, const char *k, int v) { vs_json_key(j, k); vs_json_bool(j, v); }
