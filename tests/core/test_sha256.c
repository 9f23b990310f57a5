/* SHA-256 against the published digests of FIPS 180-4's examples, and against
 * itself over every length 0..300 fed whole and in uneven pieces (the padding
 * changes at 55/56 and 64 bytes; the piecewise path crosses block borders). */
#include "sha256.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want)) {
        printf("FAIL %s: %s, expected %s\n", what, got, want);
        failures++;
    }
}

static void hex_of(const unsigned char d[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

int main(void)
{
    char hex[65];
    vs_sha256_hex("", 0, hex);
    expect("empty", hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    vs_sha256_hex("abc", 3, hex);
    expect("abc", hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes */
    vs_sha256_hex(two, strlen(two), hex);
    expect("56-byte message", hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    static char million[1000000];
    memset(million, 'a', sizeof million);
    vs_sha256_hex(million, sizeof million, hex);
    expect("one million 'a'", hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    unsigned char buf[300];
    for (int i = 0; i < 300; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof buf; len++) {
        char whole[65], pieces[65];
        unsigned char d[32];
        vs_sha256_hex(buf, len, whole);
        vs_sha256_t s;
        vs_sha256_init(&s);
        for (size_t at = 0, step = 1; at < len; at += step, step = step % 13 + 1)
            vs_sha256_update(&s, buf + at, step < len - at ? step : len - at);
        vs_sha256_final(&s, d);
        hex_of(d, pieces);
        char what[40];
        snprintf(what, sizeof what, "length %zu in pieces", len);
        expect(what, pieces, whole);
    }
    if (!failures)
        printf("sha256: 4 published digests and 301 lengths agree\n");
    return failures != 0;
}
