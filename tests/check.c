/* tests/check.c: the counters behind tests/check.h and the runner's loop:
 * which suites the command line selects (SUITE, --list), a line per suite and
 * the closing line "N passed, N failed, N skipped". It does not set up the
 * environment tests run in (tests/test_main.c, tests/tools/gpu_main.c do). */
#include "check.h"

#include <stdarg.h>

/* The runner's state: one per process (the runner is single-threaded between
 * suites; the checks inside a suite may come from its threads). */
static struct {
    check_state st;
} g_run;

check_state *check_get(void) { return &g_run.st; }

void check_pass(void) { g_run.st.passed++; }

void check_fail_at(const char *file, int line, const char *fmt, ...) {
    const char *w = g_run.st.suite ? g_run.st.suite : "";
    g_run.st.failed++;
    fprintf(stderr, "FAIL %s%s%s:%d: ", w, w[0] ? " " : "", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void check_skip(const char *fmt, ...) {
    g_run.st.skipped++;
    fprintf(stderr, "SKIP %s: ", g_run.st.suite ? g_run.st.suite : "?");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* --- the runner ------------------------------------------------------------ */

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-v] [SUITE]...\n"
            "       %s --list\n"
            "Runs every suite, or the suites named; the last line is\n"
            "\"N passed, N failed, N skipped\". --list prints the suites.\n"
            "Exit: 0 all passed, 1 a check failed, 2 usage.\n",
            prog, prog);
}

int check_main(const check_suite *suites, size_t n, int argc, char **argv) {
    const char *prog = argc > 0 ? argv[0] : "cachet-tests";
    const char *slash = strrchr(prog, '/');
    if (slash) prog = slash + 1;
    int list = 0, named = 0;
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        if (strcmp(argv[a], "-v") == 0) g_run.st.verbose = 1;
        else if (strcmp(argv[a], "--list") == 0) list = 1;
        else if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
            usage(stdout, prog);
            return 0;
        } else {
            while (i < n && strcmp(suites[i].name, argv[a]) != 0) i++;
            if (i == n) {
                fprintf(stderr, "%s: unknown suite '%s' (--list shows them)\n", prog, argv[a]);
                usage(stderr, prog);
                return 2;
            }
            named++;
        }
    }
    check_state *st = &g_run.st;
    for (size_t i = 0; i < n; i++) {
        int want = !named;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], suites[i].name) == 0) want = 1;
        if (!want) continue;
        if (list) {
            printf("%s\n", suites[i].name);
            continue;
        }
        int p0 = st->passed, f0 = st->failed, s0 = st->skipped;
        st->suite = suites[i].name;
        suites[i].fn();
        fprintf(stderr, "%-14s %d passed, %d failed, %d skipped\n", suites[i].name, st->passed - p0,
                st->failed - f0, st->skipped - s0);
        st->suite = NULL;
    }
    if (list) return 0;
    fflush(stderr);
    printf("%d passed, %d failed, %d skipped\n", st->passed, st->failed, st->skipped);
    fflush(stdout);
    return st->failed ? 1 : 0;
}
