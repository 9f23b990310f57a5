/* libFuzzer harness: the JSON writer's strings.  Any bytes written as a
 * string come out as one valid JSON string in valid UTF-8: no raw control
 * character, only JSON's escapes, and (for input that is valid UTF-8) the
 * same text back when the escapes are undone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* the writer takes C strings: the text up to the first NUL */
    vs_json_t j;
    vs_json_init(&j);
    vs_json_str(&j, s);
    if (j.oom)
        goto out;
    const unsigned char *o = (const unsigned char *)j.buf;
    size_t n = j.len;
    if (n < 2 || o[0] != '"' || o[n - 1] != '"' || !vs_utf8_valid((const char *)o, n))
        abort();
    char *back = malloc(n);
    size_t m = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (o[i] < 0x20 || o[i] == '"')
            abort();
        if (o[i] != '\\') {
            back[m++] = (char)o[i];
            continue;
        }
        i++;
        switch (o[i]) {
        case '"': case '\\': case '/': back[m++] = (char)o[i]; break;
        case 'n': back[m++] = '\n'; break;
        case 'r': back[m++] = '\r'; break;
        case 't': back[m++] = '\t'; break;
        case 'b': back[m++] = '\b'; break;
        case 'f': back[m++] = '\f'; break;
        case 'u': {
            if (i + 4 >= n - 1 + 1)
                abort();
            int v = 0;
            for (int k = 1; k <= 4; k++) {
                int h = hex(o[i + k]);
                if (h < 0)
                    abort();
                v = v * 16 + h;
            }
            i += 4;
            if (v < 0x20)
                back[m++] = (char)v;
            else if (v == 0xfffd) { /* the replacement for a byte that is not UTF-8 */
                back[m++] = (char)0xef, back[m++] = (char)0xbf, back[m++] = (char)0xbd;
            } else
                abort();
            break;
        }
        default:
            abort();
        }
    }
    if (vs_utf8_valid(s, strlen(s)) && (m != strlen(s) || memcmp(back, s, m) != 0))
        abort();
    free(back);
out:
    vs_json_free(&j);
    free(s);
    return 0;
}
