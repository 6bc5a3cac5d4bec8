/* tests/check.h: the tiny check helper every test file uses. Counts passes,
 * failures and skips in the runner's state and prints failures as
 * "FAIL suite/case file:line: ...". Each tests/test_NAME.c defines
 * `void test_NAME(void)` (the Makefile lists them) and names its cases with
 * CHECK_CASE, which runs a case only when the command line selected it. The
 * runner itself (selection, --list, the closing line) is tests/check.c. */
#ifndef CHECK_H
#define CHECK_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct check_state {
    int passed;
    int failed;
    int skipped;
    int verbose;           /* -v: per-case lines and the suites' extra detail */
    const char *suite;     /* the suite running now */
    const char *case_name; /* the case running now, NULL between cases */
} check_state;

check_state *check_get(void);
/* Path of the default model, or NULL (tests needing it then fail loudly). */
const char *check_model_path(void);
/* Repository root, so tests can find tests/golden etc. */
const char *check_root(void);

/* --- what the macros below call ------------------------------------------ */

/* Counts a pass or a failure; a failure prints "FAIL suite/case file:line: "
 * then the message. The message arguments are evaluated only on failure. */
void check_pass(void);
void check_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Counts a skip and prints "SKIP suite/case: reason". */
void check_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when the case `name` of the running suite is selected: it becomes the
 * current case (ending any case still open); 0 when it is not. */
int check_case_begin(const char *name);
/* Ends the current case; returns 0 (the CHECK_CASE loop's condition). */
int check_case_end(void);

/* --- the runner (tests/test_main.c, tests/tools/gpu_main.c) --------------- */

typedef struct check_suite {
    const char *name; /* engine: runs test_engine() */
    void (*fn)(void);
    const char *const *cases; /* its CHECK_CASE names, NULL-terminated */
} check_suite;

/* Runs what argv selects (argv[0] is the program): nothing, all suites;
 * "SUITE", all its cases; "SUITE/CASE", that case (and the suite function's
 * setup around it); "--list", prints "SUITE" and "SUITE/CASE" lines instead;
 * "-v", a line per case. Prints a line per suite to stderr and the closing
 * line "N passed, N failed, N skipped" to stdout. Returns the exit status:
 * 0 all passed, 1 a check failed, 2 an unknown option, suite or case. */
int check_main(const check_suite *suites, size_t n, int argc, char **argv);

/* --- checks ---------------------------------------------------------------- */

#define CHECK_AT_(file, line, ok, ...)                  \
    do {                                                \
        if (ok)                                         \
            check_pass();                               \
        else                                            \
            check_fail_at((file), (line), __VA_ARGS__); \
    } while (0)
#define CHECK_(ok, ...) CHECK_AT_(__FILE__, __LINE__, ok, __VA_ARGS__)

#define CHECK(c)          CHECK_((c), "%s", #c)
#define CHECK_MSG(c, ...) CHECK_((c), __VA_ARGS__)
#define CHECK_EQ_INT(a, b)                                           \
    do {                                                             \
        long long a_ = (long long)(a), b_ = (long long)(b);          \
        CHECK_(a_ == b_, "%s == %s (%lld vs %lld)", #a, #b, a_, b_); \
    } while (0)
#define CHECK_EQ_STR(a, b)                                                                           \
    do {                                                                                             \
        const char *a_ = (a), *b_ = (b);                                                             \
        CHECK_(a_ &&b_ &&strcmp(a_, b_) == 0, "%s == %s ('%s' vs '%s')", #a, #b, a_ ? a_ : "(null)", \
               b_ ? b_ : "(null)");                                                                  \
    } while (0)
#define CHECK_NEAR(a, b, tol)                                                                            \
    do {                                                                                                 \
        double a_ = (a), b_ = (b);                                                                       \
        CHECK_(fabs(a_ - b_) <= (tol), "%s ~ %s (%.9g vs %.9g, tol %g)", #a, #b, a_, b_, (double)(tol)); \
    } while (0)

/* A check that did not run, and why (a missing tool, GPU, golden file): counted
 * in "N skipped", never in "N passed". The caller then returns or goes on. */
#define CHECK_SKIP(...) check_skip(__VA_ARGS__)

/* Names the statement or block that follows as a case of the running suite:
 *     CHECK_CASE(golden) test_golden(m);
 *     CHECK_CASE(limits) { ... }
 * It runs only when selected (`cachet-tests engine/golden`, or the whole suite).
 * The name is a bare identifier on the same line: the Makefile lists a suite's
 * cases from its source by that pattern (for --list and unknown names). State
 * the suite function sets up before its cases (a model opened once) is there
 * whichever case runs. A case ends at the end of its statement, or at the next
 * case or the suite's end if left by return or break. */
#define CHECK_CASE(name)                                                   \
    for (int check_case_once_ = check_case_begin(#name); check_case_once_; \
         check_case_once_ = check_case_end())

#endif
