/* A module gets its --transport-opt values parsed against its table: one
 * vs_opt_value_t per row, in the table's order; a value given is read as its
 * kind within its limit; one not given is the table's default when that is a
 * value of the kind (never for text), else zero; keys unknown or given twice
 * and values of the wrong kind or over the limit are refused with a message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <versus/transport.h>

#include "topts.h"
#include "vs_expect.h"

enum { MODE, BUF, COUNT, ADDR, RATE, SEED, SOCK, N };

static const vs_option_t table[N] = {
    [MODE] = {"mode", VS_OPT_CHOICE, "poll|block|spin", 0, "block", "choice"},
    [BUF] = {"buf", VS_OPT_BYTES, NULL, 1 << 20, "8K", "bytes"},
    [COUNT] = {"count", VS_OPT_COUNT, NULL, 4096, "16", "count"},
    [ADDR] = {"addr", VS_OPT_TEXT, NULL, 0, "the address the ranks met on", "text"},
    [RATE] = {"rate", VS_OPT_NUMBER, NULL, 0, "0.5", "number"},
    [SEED] = {"seed", VS_OPT_NUMBER, NULL, 0, "fixed", "a default in words"},
    [SOCK] = {"sock", VS_OPT_BYTES, NULL, 0, "the system's", "a default in words"},
};

static const vs_transport_ops_t ops = {.name = "t", .options = table, .n_options = N};

static int parse(const vs_kv_t *kv, size_t n, vs_opt_value_t *v, char *err, size_t len)
{
    memset(v, 0x5a, sizeof *v * N); /* what core's parse does not set shows */
    err[0] = '\0';
    return vs_topts_parse(&ops, kv, n, v, err, len);
}

int main(void)
{
    vs_opt_value_t v[N];
    char err[1024];

    /* nothing given: the defaults that are values, zero for the others */
    EXPECT(parse(NULL, 0, v, err, sizeof err) == 0, "no options: %s", err);
    EXPECT(!v[MODE].given && v[MODE].choice == 1 && !strcmp(v[MODE].text, "block"), "mode defaults to block (1)");
    EXPECT(!v[BUF].given && v[BUF].count == 8192, "buf defaults to 8K = 8192, got %llu",
           (unsigned long long)v[BUF].count);
    EXPECT(!v[COUNT].given && v[COUNT].count == 16, "count defaults to 16");
    EXPECT(!v[ADDR].given && v[ADDR].text == NULL, "a text option's default is words, never a value");
    EXPECT(!v[RATE].given && v[RATE].number == 0.5, "rate defaults to 0.5, got %g", v[RATE].number);
    EXPECT(!v[SEED].given && v[SEED].number == 0 && v[SEED].text == NULL, "a default in words is zero");
    EXPECT(!v[SOCK].given && v[SOCK].count == 0 && v[SOCK].text == NULL, "a byte default in words is zero");

    /* every kind given */
    vs_kv_t all[] = {{"sock", "1M"}, {"mode", "spin"}, {"buf", "1M"}, {"count", "4096"},
                     {"addr", "10.0.0.1"}, {"rate", "1e3"}, {"seed", "7"}};
    EXPECT(parse(all, 7, v, err, sizeof err) == 0, "all given: %s", err);
    EXPECT(v[MODE].given && v[MODE].choice == 2 && !strcmp(v[MODE].text, "spin"), "mode=spin is choice 2");
    EXPECT(v[BUF].given && v[BUF].count == 1 << 20, "buf=1M at its limit is 1048576");
    EXPECT(v[COUNT].given && v[COUNT].count == 4096, "count=4096 at its limit");
    EXPECT(v[ADDR].given && !strcmp(v[ADDR].text, "10.0.0.1"), "addr as written");
    EXPECT(v[RATE].given && v[RATE].number == 1000, "rate=1e3 is 1000");
    EXPECT(v[SEED].given && v[SEED].number == 7, "seed=7");
    EXPECT(v[SOCK].given && v[SOCK].count == 1 << 20 && !strcmp(v[SOCK].text, "1M"), "sock=1M, no limit");
    vs_kv_t one[] = {{"mode", "poll"}};
    EXPECT(parse(one, 1, v, err, sizeof err) == 0 && v[MODE].choice == 0 && v[BUF].count == 8192 && !v[BUF].given,
           "one given, the others at their defaults");

    /* refusals, each with the message versus-run prints */
    struct {
        vs_kv_t kv[2];
        size_t n;
        const char *says;
    } bad[] = {
        {{{"nosuch", "1"}}, 1, "transport 't' has no option 'nosuch' (it takes: mode=poll|block|spin, buf=BYTES"},
        {{{"buf", "1K"}, {"buf", "2K"}}, 2, "option 'buf' given twice (buf=1K and buf=2K)"},
        {{{"mode", "fast"}}, 1, "option mode=fast of transport 't': expected mode=poll|block|spin"},
        {{{"mode", "pol"}}, 1, "expected mode=poll|block|spin"},
        {{{"buf", "1025K"}}, 1, "expected buf=BYTES (digits with an optional K or M, at most 1048576)"},
        {{{"count", "4097"}}, 1, "at most 4096"},
        {{{"count", "-1"}}, 1, "expected count=N"},
        {{{"buf", "12abc"}}, 1, "expected buf=BYTES"},
        {{{"rate", "-1"}}, 1, "expected rate=NUMBER"},
        {{{"rate", "inf"}}, 1, "expected rate=NUMBER"},
        {{{"rate", "2x"}}, 1, "expected rate=NUMBER"},
        {{{"addr", ""}}, 1, "expected addr=TEXT"},
        {{{"mode", ""}}, 1, "expected mode=poll|block|spin"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = parse(bad[i].kv, bad[i].n, v, err, sizeof err);
        EXPECT(rc == -EINVAL && strstr(err, bad[i].says), "%s=%s: refused saying \"%s\" (rc %d, said \"%s\")",
               bad[i].kv[bad[i].n - 1].key, bad[i].kv[bad[i].n - 1].value, bad[i].says, rc, err);
    }

    /* a module that takes none refuses every key */
    const vs_transport_ops_t none = {.name = "n"};
    EXPECT(vs_topts_parse(&none, one, 1, v, err, sizeof err) == -EINVAL && strstr(err, "it takes: none"),
           "no table: every key refused (%s)", err);
    printf("%s\n", failures ? "FAILED" : "ok: option values parsed, defaulted and refused as the table says");
    return failures ? 1 : 0;
}
