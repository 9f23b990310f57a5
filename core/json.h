/* Minimal JSON builder into a growing buffer, used for the JSONL records. */
#ifndef VS_JSON_H
#define VS_JSON_H

#include <stddef.h>
#include <stdint.h>

#define VS_JSON_DEPTH 16

typedef struct vs_json {
    char *buf;
    size_t len, cap;
    int depth;
    int first[VS_JSON_DEPTH]; /* no element yet at this level */
    int after_key;            /* a key was just written */
    int oom;                  /* allocation failed: buffer is unusable */
} vs_json_t;

void vs_json_init(vs_json_t *j);
void vs_json_free(vs_json_t *j);
void vs_json_reset(vs_json_t *j);

void vs_json_obj_begin(vs_json_t *j);
void vs_json_obj_end(vs_json_t *j);
void vs_json_arr_begin(vs_json_t *j);
void vs_json_arr_end(vs_json_t *j);
void vs_json_key(vs_json_t *j, const char *key);
void vs_json_str(vs_json_t *j, const char *s);
void vs_json_int(vs_json_t *j, int64_t v);
void vs_json_num(vs_json_t *j, double v); /* non-finite becomes null */
void vs_json_bool(vs_json_t *j, int v);
void vs_json_null(vs_json_t *j);

/* key + value shorthands */
void vs_json_kstr(vs_json_t *j, const char *key, const char *s);
void vs_json_kint(vs_json_t *j, const char *key, int64_t v);
void vs_json_knum(vs_json_t *j, const char *key, double v);
void vs_json_kbool(vs_json_t *j, const char *key, int v);

#endif
