/* versus — --transport-opt pairs checked and parsed against a module's option table. */
#include "topts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <versus/option.h>

static const vs_option_t *find(const vs_transport_ops_t *ops, const char *key)
{
    for (size_t i = 0; i < ops->n_options; i++)
        if (strcmp(ops->options[i].key, key) == 0)
            return &ops->options[i];
    return NULL;
}

/* "key=a|b", "key=BYTES", "key=TEXT" */
static void spell(const vs_option_t *op, char *buf, size_t len)
{
    snprintf(buf, len, "%s=%s", op->key,
             op->kind == VS_OPT_CHOICE  ? op->choices
             : op->kind == VS_OPT_BYTES ? "BYTES"
             : op->kind == VS_OPT_COUNT ? "N"
             : op->kind == VS_OPT_NUMBER ? "NUMBER"
                                        : "TEXT");
}

static void known(const vs_transport_ops_t *ops, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (!ops->n_options) {
        snprintf(buf, len, "none");
        return;
    }
    for (size_t i = 0; i < ops->n_options && used < len; i++) {
        char one[160];
        spell(&ops->options[i], one, sizeof one);
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", one);
    }
}

int vs_topts_parse(const vs_transport_ops_t *ops, const vs_kv_t *kv, size_t n, vs_opt_value_t *vals, char *err,
                   size_t errlen)
{
    char list[1024];
    for (size_t i = 0; i < ops->n_options; i++)
        vs_option_default(&ops->options[i], &vals[i]);
    for (size_t i = 0; i < n; i++) {
        const char *k = kv[i].key, *v = kv[i].value ? kv[i].value : "";
        const vs_option_t *op = find(ops, k);
        if (!op) {
            known(ops, list, sizeof list);
            snprintf(err, errlen, "transport '%s' has no option '%s' (it takes: %s; see versus-run --list)",
                     ops->name, k, list);
            return -EINVAL;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(kv[j].key, k) == 0) {
                snprintf(err, errlen, "option '%s' given twice (%s=%s and %s=%s): give it once", k, k,
                         kv[j].value ? kv[j].value : "", k, v);
                return -EINVAL;
            }
        if (vs_option_parse(op, v, &vals[op - ops->options])) {
            char want[160], limit[64] = "";
            spell(op, want, sizeof want);
            if (op->kind == VS_OPT_BYTES || op->kind == VS_OPT_COUNT)
                snprintf(limit, sizeof limit, op->max_bytes ? " (digits with an optional K or M, at most %llu)"
                                                            : " (digits with an optional K or M)",
                         (unsigned long long)op->max_bytes);
            snprintf(err, errlen, "option %s=%s of transport '%s': expected %s%s", k, v, ops->name, want, limit);
            return -EINVAL;
        }
    }
    return 0;
}

void vs_topts_json(const vs_transport_ops_t *ops, vs_json_t *j)
{
    static const char *const kinds[] = {"text", "bytes", "count", "choice", "number"};
    vs_json_arr_begin(j);
    for (size_t i = 0; i < ops->n_options; i++) {
        const vs_option_t *op = &ops->options[i];
        vs_json_obj_begin(j);
        vs_json_kstr(j, "key", op->key);
        vs_json_kstr(j, "kind", (unsigned)op->kind < 5 ? kinds[op->kind] : "text");
        if (op->kind == VS_OPT_CHOICE)
            vs_json_kstr(j, "choices", op->choices);
        if (op->max_bytes)
            vs_json_kint(j, "max", (int64_t)op->max_bytes);
        vs_json_kstr(j, "default", op->def ? op->def : "");
        vs_json_kstr(j, "help", op->help ? op->help : "");
        vs_json_obj_end(j);
    }
    vs_json_arr_end(j);
}

void vs_topts_describe(const vs_transport_ops_t *ops, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ops->n_options && used < len; i++) {
        const vs_option_t *op = &ops->options[i];
        char one[160];
        spell(op, one, sizeof one);
        used += (size_t)snprintf(buf + used, len - used, "%s--transport-opt %-24s %s (default: %s)", i ? "\n" : "",
                                 one, op->help ? op->help : "", op->def ? op->def : "none");
    }
}

void vs_roles_json(const vs_transport_ops_t *ops, vs_json_t *j)
{
    static const struct { uint32_t bit; const char *name; } roles[] = {
        {VS_ROLE_REFERENCE, "reference"},
        {VS_ROLE_FLOOR, "floor"},
    };
    vs_json_key(j, "roles");
    vs_json_arr_begin(j);
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (ops->roles & roles[i].bit)
            vs_json_str(j, roles[i].name);
    vs_json_arr_end(j);
}
