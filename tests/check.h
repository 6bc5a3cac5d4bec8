/* tests/check.h: the tiny check helper every test file uses. Counts passes and
 * failures in the runner's state and prints failures with file:line. Each
 * tests/test_NAME.c defines `void test_NAME(void)`; the Makefile lists them. */
#ifndef CHECK_H
#define CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct check_state {
    int passed;
    int failed;
    int verbose;
} check_state;

check_state *check_get(void);
/* Path of the default model, or NULL (tests needing it then fail loudly). */
const char *check_model_path(void);
/* Repository root, so tests can find tests/golden etc. */
const char *check_root(void);

#define CHECK_(ok, ...)                                                    \
    do {                                                                   \
        if (ok) {                                                          \
            check_get()->passed++;                                         \
        } else {                                                           \
            check_get()->failed++;                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

#define CHECK(c) CHECK_((c), "%s", #c)
#define CHECK_MSG(c, ...) CHECK_((c), __VA_ARGS__)
#define CHECK_EQ_INT(a, b)                                                   \
    do {                                                                     \
        long long a_ = (long long)(a), b_ = (long long)(b);                  \
        CHECK_(a_ == b_, "%s == %s (%lld vs %lld)", #a, #b, a_, b_);         \
    } while (0)
#define CHECK_EQ_STR(a, b)                                                   \
    do {                                                                     \
        const char *a_ = (a), *b_ = (b);                                     \
        CHECK_(a_ && b_ && strcmp(a_, b_) == 0, "%s == %s ('%s' vs '%s')", #a, #b, \
               a_ ? a_ : "(null)", b_ ? b_ : "(null)");                      \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                \
    do {                                                                     \
        double a_ = (a), b_ = (b);                                           \
        CHECK_(fabs(a_ - b_) <= (tol), "%s ~ %s (%.9g vs %.9g, tol %g)", #a, #b, a_, b_, \
               (double)(tol));                                               \
    } while (0)

#endif
