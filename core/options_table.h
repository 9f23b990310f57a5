/* versus-run's option table, shared by the parser (options.c) and --help
 * (options_help.c).  Private to core. */
#ifndef VS_OPTIONS_TABLE_H
#define VS_OPTIONS_TABLE_H

#include <stddef.h>

#include "options.h"

typedef struct vs_optdef vs_optdef_t;
typedef int (*vs_optdef_parse_fn)(vs_options_t *o, const vs_optdef_t *d, const char *arg, char *err, size_t errlen);

struct vs_optdef {
    const char *name;     /* long name, without the dashes */
    char short_name;      /* 0: none */
    const char *value;    /* what the value is called in --help; NULL: takes none */
    const char *kind;     /* the value's kind, for --help --json */
    vs_optdef_parse_fn parse;
    size_t field;         /* where the value goes in vs_options_t */
    long min, max;        /* count: bounds (max 0: none) */
    const char *unit;     /* count: what the number counts, for the message above max */
    const char *choices;  /* choice: '|'-separated, stored as the index */
    int code;             /* method option (method.h) or action */
    int repeatable;       /* may be given more than once */
    const char *def;      /* the default as a user would write it; NULL: none */
    int def_later;        /* 1: the default is decided after parsing (it depends on other options) */
    int group;            /* help section (G_*, options_help.c); -1: not listed */
    const char *label;    /* --help's left column when it is not "-s, --name VALUE" */
    const char *help;     /* continuation lines are indented to the help column; %D: def */
};

enum { G_TRANSPORT, G_PATTERN, G_METHOD, G_RANKS, G_OUTPUT, G_LAUNCH, G_PLACEMENT, G_ENV, N_GROUPS };

extern const vs_optdef_t vs_option_table[];
extern const int vs_option_count;

#endif
