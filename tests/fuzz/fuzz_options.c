/* libFuzzer harness: the option parser.  The input is split at NUL bytes
 * into arguments after "versus-run".  Any input: no crash, no leak, and a
 * refusal always says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    char **argv = calloc(size + 3, sizeof *argv);
    if (!buf || !argv) {
        free(buf);
        free(argv);
        return 0;
    }
    memcpy(buf, data, size);
    buf[size] = '\0';
    int argc = 0;
    argv[argc++] = "versus-run";
    for (size_t i = 0; i <= size; ) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    vs_options_t o;
    char err[1024] = "";
    if (vs_options_parse(argc, argv, &o, err, sizeof err) != 0 && !err[0])
        abort();
    vs_options_free(&o);
    free(argv);
    free(buf);
    return 0;
}
