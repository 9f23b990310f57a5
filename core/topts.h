/* versus — a transport's --transport-opt pairs checked against the table its
 * module declares (vs_option_t) and parsed into the values open() gets, and
 * that table as lines for --list. */
#ifndef VERSUS_TOPTS_H
#define VERSUS_TOPTS_H

#include <stddef.h>

#include <versus/transport.h>

#include "json.h"

/* 0 when every pair names a key of ops->options once with a value of its
 * kind within its limit: vals (ops->n_options entries, the table's order)
 * then holds what open() gets, each value parsed or its default
 * (vs_option_default).  Else -EINVAL with a message in err that lists what
 * the module takes. */
int vs_topts_parse(const vs_transport_ops_t *ops, const vs_kv_t *kv, size_t n, vs_opt_value_t *vals, char *err,
                   size_t errlen);

/* One line per option ("key=VALUE  help (default: d)"), '\n'-separated. */
void vs_topts_describe(const vs_transport_ops_t *ops, char *buf, size_t len);
/* The table as a JSON array of {key, kind, choices, max, default, help}. */
void vs_topts_json(const vs_transport_ops_t *ops, vs_json_t *j);
/* "roles": the module's VS_ROLE_* bits as names ("reference", "floor"), for --list --json
 * and the run record. */
void vs_roles_json(const vs_transport_ops_t *ops, vs_json_t *j);

#endif
