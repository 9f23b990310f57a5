/* The check macro of the C unit tests: a failed expectation is printed with
 * its place and counted; main returns failures ? 1 : 0. */
#ifndef VS_EXPECT_H
#define VS_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            failures++;                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
        }                                                  \
    } while (0)

#endif
