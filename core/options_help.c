/* --help and --help --json, written from the option table (options.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "options_table.h"
#include "pattern.h"


static const struct {
    const char *title, *intro, *outro;
} groups[N_GROUPS] = {
    [G_TRANSPORT] = {"Transport", "", ""},
    [G_PATTERN] = {"Pattern", "", ""},
    [G_METHOD] = {"Method (docs/methodology.md)", "", ""},
    [G_RANKS] = {"More than two ranks (docs/patterns.md)",
                 "  With N > 2 ranks (N even) pingpong, stream and bistream run on every pair at\n"
                 "  once, rank i with rank i + N/2 (osu_mbw_mr's pairing): a size record per pair\n"
                 "  and an aggregate record (bandwidth, message rate) per size.\n",
                 ""},
    [G_OUTPUT] = {"Output", "", ""},
    [G_LAUNCH] = {"Launching (transports that are not MPI)", "",
                  "  Under mpirun/mpiexec/srun the rank is read from the launcher's environment.\n"
                  "  The openmpi and mpich transports are started by their own launcher:\n"
                  "    mpirun.openmpi -np 2 versus-run --transport openmpi\n"
                  "    mpiexec.mpich -n 2 versus-run --transport mpich\n"},
    [G_PLACEMENT] = {"Placement", "", ""},
    [G_ENV] = {"Environment (the manual page versus-run(1) lists every variable read)",
               "  VERSUS_MODULE_PATH DIRS   colon-separated directories searched for transport modules\n"
               "                            before the installed ones (an installation, even a moved\n"
               "                            one, finds its own without it)\n"
               "  The rank and size come from the launcher: VERSUS_RANK and VERSUS_SIZE (--launch\n"
               "  local, or set by hand), OMPI_COMM_WORLD_*, PMI_* (hydra), SLURM_* (srun).\n"
               "  Variables named VERSUS_* or with the transport's prefixes (--list --json) are\n"
               "  written into the run record.\n",
               ""},
};

static const char usage_head[] =
    "Usage: versus-run --transport NAME [options]\n"
    "       versus-run --list [--json] | --topology | --help | --version\n"
    "\n"
    "Measures point-to-point communication between two processes the same way over\n"
    "every transport, writes raw samples as JSON Lines and prints an OSU-style table.\n";
static const char usage_tail[] = "Exit status: 0 ok, 1 run failed, 2 bad usage or input, 77 transport cannot run here.\n";

/* ---- --help */

/* Text with %D replaced by the default; each line after the first indented by `indent`. */
static void put_help(FILE *out, const vs_optdef_t *d, int indent)
{
    for (const char *p = d->help; *p; p++) {
        if (p[0] == '%' && p[1] == 'D') {
            fputs(d->def ? d->def : "", out);
            p++;
        } else {
            fputc(*p, out);
            if (*p == '\n')
                fprintf(out, "%*s", indent, "");
        }
    }
    fputc('\n', out);
}

void vs_options_usage(FILE *out)
{
    fputs(usage_head, out);
    for (int g = 0; g < N_GROUPS; g++) {
        fprintf(out, "\n%s\n%s", groups[g].title, groups[g].intro);
        for (int i = 0; i < vs_option_count; i++) {
            const vs_optdef_t *d = &vs_option_table[i];
            if (d->group != g)
                continue;
            char left[64];
            if (d->label)
                snprintf(left, sizeof left, "%s", d->label);
            else if (d->short_name)
                snprintf(left, sizeof left, "-%c, --%s%s%s", d->short_name, d->name, d->value ? " " : "",
                         d->value ? d->value : "");
            else
                snprintf(left, sizeof left, "    --%s%s%s", d->name, d->value ? " " : "", d->value ? d->value : "");
            int w = (int)strlen(left);
            fprintf(out, "  %s%*s", left, w < 24 ? 26 - w : 2, "");
            put_help(out, d, 28);
        }
        fputs(groups[g].outro, out);
    }
    fprintf(out, "\n%s", usage_tail);
    fputs("\nPatterns\n", out);
    for (const vs_pattern_t *const *p = vs_patterns; *p; p++)
        fprintf(out, "  %-12s %s\n", (*p)->name, (*p)->summary);
}

/* The help text of one option on one line, %D replaced, into buf. */
static void help_line(const vs_optdef_t *d, char *buf, size_t len)
{
    size_t at = 0;
    for (const char *p = d->help; *p && at + 1 < len; p++) {
        if (p[0] == '%' && p[1] == 'D') {
            at += (size_t)snprintf(buf + at, len - at, "%s", d->def ? d->def : "");
            p++;
        } else if (*p == '\n') {
            buf[at++] = ' ';
            while (p[1] == ' ')
                p++;
        } else
            buf[at++] = *p;
        if (at >= len)
            at = len - 1;
    }
    buf[at] = '\0';
}

int vs_options_usage_json(FILE *out)
{
    vs_json_t j;
    char text[1024], s[2] = "";
    vs_json_init(&j);
    vs_json_obj_begin(&j);
    vs_json_kstr(&j, "program", "versus-run");
    vs_json_key(&j, "options");
    vs_json_arr_begin(&j);
    for (int i = 0; i < vs_option_count; i++) {
        const vs_optdef_t *d = &vs_option_table[i];
        vs_json_obj_begin(&j);
        vs_json_kstr(&j, "name", d->name);
        vs_json_key(&j, "short");
        s[0] = d->short_name;
        d->short_name ? vs_json_str(&j, s) : vs_json_null(&j);
        vs_json_key(&j, "value");
        d->value ? vs_json_str(&j, d->value) : vs_json_null(&j);
        vs_json_kstr(&j, "kind", d->kind);
        vs_json_kbool(&j, "repeatable", d->repeatable);
        vs_json_key(&j, "choices");
        if (d->choices) {
            vs_json_arr_begin(&j);
            for (const char *c = d->choices; *c;) {
                size_t n = strcspn(c, "|");
                snprintf(text, sizeof text, "%.*s", (int)n, c);
                vs_json_str(&j, text);
                c += n + (c[n] == '|');
            }
            vs_json_arr_end(&j);
        } else
            vs_json_null(&j);
        vs_json_key(&j, "default");
        d->def ? vs_json_str(&j, d->def) : vs_json_null(&j);
        vs_json_kbool(&j, "default_depends", d->def_later);
        vs_json_key(&j, "group");
        d->group >= 0 ? vs_json_str(&j, groups[d->group].title) : vs_json_null(&j);
        help_line(d, text, sizeof text);
        vs_json_kstr(&j, "help", text);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_key(&j, "patterns");
    vs_json_arr_begin(&j);
    for (const vs_pattern_t *const *p = vs_patterns; *p; p++) {
        vs_json_obj_begin(&j);
        vs_json_kstr(&j, "name", (*p)->name);
        vs_json_kstr(&j, "summary", (*p)->summary);
        vs_json_key(&j, "variants");
        vs_json_arr_begin(&j);
        for (int k = 0; (*p)->variants[k]; k++)
            vs_json_str(&j, (*p)->variants[k]);
        vs_json_arr_end(&j);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_obj_end(&j);
    int rc = j.oom ? -ENOMEM : 0;
    if (!rc && (fwrite(j.buf, 1, j.len, out) != j.len || fputc('\n', out) == EOF))
        rc = -EIO;
    vs_json_free(&j);
    return rc;
}
