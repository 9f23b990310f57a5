/* libFuzzer harness: the size grammar (--sizes).  Any input: no crash, no
 * leak, and a schedule that parses is a non-empty, strictly increasing list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sizes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    vs_sizes_t s;
    char err[256];
    if (vs_sizes_parse(spec, &s, err, sizeof err) == 0) {
        if (s.n == 0)
            abort();
        for (size_t i = 1; i < s.n; i++)
            if (s.v[i] <= s.v[i - 1])
                abort();
        vs_sizes_free(&s);
    } else if (!err[0]) {
        abort(); /* a refusal always says why */
    }
    free(spec);
    return 0;
}
