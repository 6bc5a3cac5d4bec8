/* tests/check.c: the counters behind tests/check.h and the runner's loop:
 * which suites and cases the command line selects (SUITE, SUITE/CASE, --list),
 * a line per suite and the closing line "N passed, N failed, N skipped". It
 * knows a suite's cases from the list the Makefile generates from the sources
 * (tests/tools/cases.awk); it does not set up the environment tests run in
 * (tests/test_main.c, tests/tools/gpu_main.c do). */
#include "check.h"

#include <stdarg.h>

#define CHECK_MAX_PICKS 64

/* One SUITE/CASE named on the command line. */
typedef struct check_pick {
    const check_suite *suite;
    const char *case_name; /* NULL: the whole suite */
    int ran;
} check_pick;

/* The runner's state: one per process (the runner is single-threaded between
 * suites; the checks inside a suite may come from its threads). */
static struct {
    check_state st;
    const check_suite *suite;
    check_pick picks[CHECK_MAX_PICKS];
    int n_picks;
    int whole_suite; /* the running suite was selected as a whole */
    int case_p, case_f, case_s;
    int case_shown; /* print the case's own line at its end */
} g_run;

check_state *check_get(void) { return &g_run.st; }

/* "suite/case" or "suite" for the messages; "" outside the runner. */
static void where(char *out, size_t cap) {
    const check_state *s = &g_run.st;
    if (s->suite && s->case_name)
        snprintf(out, cap, "%s/%s", s->suite, s->case_name);
    else
        snprintf(out, cap, "%s", s->suite ? s->suite : "");
}

void check_pass(void) { g_run.st.passed++; }

void check_fail_at(const char *file, int line, const char *fmt, ...) {
    char w[160];
    where(w, sizeof w);
    g_run.st.failed++;
    fprintf(stderr, "FAIL %s%s%s:%d: ", w, w[0] ? " " : "", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void check_skip(const char *fmt, ...) {
    char w[160];
    where(w, sizeof w);
    g_run.st.skipped++;
    fprintf(stderr, "SKIP %s: ", w[0] ? w : "?");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int listed(const check_suite *s, const char *name) {
    for (const char *const *c = s->cases; c && *c; c++)
        if (strcmp(*c, name) == 0) return 1;
    return 0;
}

static void case_close(void) {
    check_state *s = &g_run.st;
    if (!s->case_name) return;
    if (g_run.case_shown) {
        char w[160];
        where(w, sizeof w);
        fprintf(stderr, "  %-30s %d passed, %d failed, %d skipped\n", w, s->passed - g_run.case_p,
                s->failed - g_run.case_f, s->skipped - g_run.case_s);
    }
    s->case_name = NULL;
}

int check_case_begin(const char *name) {
    case_close();
    const check_suite *su = g_run.suite;
    if (!su) return 1; /* outside the runner: everything runs */
    if (!listed(su, name)) {
        /* the Makefile's list missed it (a name not on the CHECK_CASE line) */
        check_fail_at(__FILE__, __LINE__, "case '%s' of suite '%s' is missing from the generated case list",
                      name, su->name);
    }
    int want = g_run.whole_suite;
    for (int i = 0; i < g_run.n_picks; i++)
        if (g_run.picks[i].suite == su && g_run.picks[i].case_name &&
            strcmp(g_run.picks[i].case_name, name) == 0) {
            g_run.picks[i].ran = 1;
            want = 1;
        }
    if (!want) return 0;
    check_state *s = &g_run.st;
    s->case_name = name;
    g_run.case_p = s->passed;
    g_run.case_f = s->failed;
    g_run.case_s = s->skipped;
    g_run.case_shown = s->verbose || !g_run.whole_suite;
    return 1;
}

int check_case_end(void) {
    case_close();
    return 0;
}

/* --- the runner ------------------------------------------------------------ */

static const check_suite *find_suite(const check_suite *suites, size_t n, const char *name, size_t len) {
    for (size_t i = 0; i < n; i++)
        if (strlen(suites[i].name) == len && strncmp(suites[i].name, name, len) == 0) return &suites[i];
    return NULL;
}

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [-v] [SUITE | SUITE/CASE]...\n"
            "       %s --list [SUITE]...\n"
            "Runs every suite, or the suites and cases named; the last line is\n"
            "\"N passed, N failed, N skipped\". --list prints each suite and its cases.\n"
            "-v prints a line per case. Exit: 0 all passed, 1 a check failed, 2 usage.\n",
            prog, prog);
}

/* Parses SUITE and SUITE/CASE into g_run.picks; 0, 1 after printing the
 * usage (--help), or -1 after an error message. */
static int pick_all(const check_suite *suites, size_t n, int argc, char **argv, const char *prog, int *list) {
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "-v") == 0) {
            g_run.st.verbose = 1;
            continue;
        }
        if (strcmp(arg, "--list") == 0) {
            *list = 1;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            usage(stdout, prog);
            return 1;
        }
        if (arg[0] == '-') {
            fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
            usage(stderr, prog);
            return -1;
        }
        const char *slash = strchr(arg, '/');
        const check_suite *s = find_suite(suites, n, arg, slash ? (size_t)(slash - arg) : strlen(arg));
        if (!s) {
            fprintf(stderr, "%s: unknown suite '%.*s' (--list shows them)\n", prog,
                    slash ? (int)(slash - arg) : (int)strlen(arg), arg);
            return -1;
        }
        if (slash && !listed(s, slash + 1)) {
            fprintf(stderr, "%s: suite '%s' has no case '%s' (--list %s shows its cases)\n", prog, s->name,
                    slash + 1, s->name);
            return -1;
        }
        if (g_run.n_picks == CHECK_MAX_PICKS) {
            fprintf(stderr, "%s: more than %d suites and cases named\n", prog, CHECK_MAX_PICKS);
            return -1;
        }
        g_run.picks[g_run.n_picks++] = (check_pick){s, slash ? slash + 1 : NULL, 0};
    }
    return 0;
}

static int picked(const check_suite *s, int *whole) {
    int any = g_run.n_picks == 0;
    *whole = any;
    for (int i = 0; i < g_run.n_picks; i++)
        if (g_run.picks[i].suite == s) {
            any = 1;
            if (!g_run.picks[i].case_name) *whole = 1;
        }
    return any;
}

int check_main(const check_suite *suites, size_t n, int argc, char **argv) {
    const char *prog = argc > 0 ? argv[0] : "cachet-tests";
    const char *slash = strrchr(prog, '/');
    if (slash) prog = slash + 1;
    int list = 0, whole;
    int rc = pick_all(suites, n, argc, argv, prog, &list);
    if (rc) return rc < 0 ? 2 : 0;
    if (list) {
        for (size_t i = 0; i < n; i++) {
            if (!picked(&suites[i], &whole)) continue;
            printf("%s\n", suites[i].name);
            for (const char *const *c = suites[i].cases; c && *c; c++) printf("%s/%s\n", suites[i].name, *c);
        }
        return 0;
    }
    check_state *st = &g_run.st;
    for (size_t i = 0; i < n; i++) {
        if (!picked(&suites[i], &whole)) continue;
        int p0 = st->passed, f0 = st->failed, s0 = st->skipped;
        g_run.suite = &suites[i];
        g_run.whole_suite = whole;
        st->suite = suites[i].name;
        suites[i].fn();
        case_close();
        /* a case named on the command line that the suite never reached */
        for (int k = 0; k < g_run.n_picks; k++)
            if (g_run.picks[k].suite == &suites[i] && g_run.picks[k].case_name && !g_run.picks[k].ran) {
                st->case_name = g_run.picks[k].case_name;
                check_skip("did not run (the suite stopped before it, or this build has no such case)");
                st->case_name = NULL;
            }
        fprintf(stderr, "%-14s %d passed, %d failed, %d skipped\n", suites[i].name, st->passed - p0,
                st->failed - f0, st->skipped - s0);
        st->suite = NULL;
        g_run.suite = NULL;
    }
    fflush(stderr);
    printf("%d passed, %d failed, %d skipped\n", st->passed, st->failed, st->skipped);
    fflush(stdout);
    return st->failed ? 1 : 0;
}
