/* versus-run reads a byte count as the shared table byte-sizes.txt says (the Python side
 * reads the same table), so "1M" means the same to the runner and to every versus option. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sizes.h"
#include "vs_expect.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_bytes_grammar byte-sizes.txt\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    char line[256];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#')
            continue;
        char *bar = strchr(line, '|');
        if (!bar)
            continue;
        *bar = '\0';
        const char *text = line, *want = bar + 1;
        uint64_t got = 0;
        int rc = vs_bytes_parse(text, &got);
        if (!strcmp(want, "error")) {
            EXPECT(rc == -EINVAL, "'%s' should be refused, got %d (%" PRIu64 ")", text, rc, got);
        } else {
            uint64_t v = strtoull(want, NULL, 10);
            EXPECT(rc == 0 && got == v, "'%s' should be %" PRIu64 ", got rc %d value %" PRIu64, text, v, rc, got);
        }
        cases++;
    }
    fclose(f);
    EXPECT(cases >= 30, "only %d cases read from %s", cases, argv[1]);
    printf("%d byte counts read as the table says\n", cases);
    return failures ? 1 : 0;
}
