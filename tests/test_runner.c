/* tests/test_runner.c: the runner itself (tests/check.c), through
 * bin/cachet-tests run as a child: a named case runs alone but with its suite's
 * setup, a whole suite runs every case, --list names suites and cases, an
 * unknown suite, case or option is exit 2 before anything runs, a named case
 * the suite never reaches is counted as skipped, and failures and skips name
 * their suite/case and land in the closing line. The child's target is this
 * suite's `probe` cases, which fail or skip when CACHET_RUNNER_PROBE asks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proc.h"

/* bin/cachet-tests ARGS with CACHET_RUNNER_PROBE=probe (stdout: the closing line). */
static proc_result child(const char *probe, const char *args) {
    return proc_runf("CACHET_RUNNER_PROBE=%s '%s/cachet-tests' %s", probe, proc_bin_dir(), args);
}

static int has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) return 1;
    return 0;
}

static void test_select(void) {
    proc_result r = child("pass", "runner/probe");
    CHECK_MSG(r.status == 0, "runner/probe: exit %d: %s", r.status, r.err);
    CHECK_EQ_STR(r.out, "2 passed, 0 failed, 0 skipped\n");
    CHECK_MSG(strstr(r.err, "  runner/probe ") && strstr(r.err, " 2 passed, 0 failed, 0 skipped"), "%s",
              r.err);
    CHECK_MSG(strstr(r.err, "runner/probe_b") == NULL, "an unselected case ran: %s", r.err);
    CHECK(strstr(r.err, "runner         2 passed, 0 failed, 0 skipped") != NULL);
    proc_result_free(&r);
    /* two cases; then the whole suite (-v: a line per case) */
    r = child("pass", "runner/probe_b runner/probe");
    CHECK_MSG(r.status == 0 && !strcmp(r.out, "3 passed, 0 failed, 0 skipped\n"), "exit %d: %s%s", r.status,
              r.out, r.err);
    proc_result_free(&r);
    r = child("pass", "-v runner");
    CHECK_MSG(r.status == 0 && !strcmp(r.out, "3 passed, 0 failed, 0 skipped\n"), "exit %d: %s%s", r.status,
              r.out, r.err);
    CHECK(strstr(r.err, "  runner/probe ") && strstr(r.err, "  runner/probe_b "));
    proc_result_free(&r);
    /* a case the suite returns before: counted as skipped, not passed */
    r = child("pass", "runner/select");
    CHECK_MSG(r.status == 0 && !strcmp(r.out, "0 passed, 0 failed, 1 skipped\n"), "exit %d: %s%s", r.status,
              r.out, r.err);
    CHECK(strstr(r.err, "SKIP runner/select: did not run") != NULL);
    proc_result_free(&r);
}

static void test_report(void) {
    proc_result r = child("fail", "runner/probe");
    CHECK_EQ_INT(r.status, 1);
    CHECK_EQ_STR(r.out, "2 passed, 1 failed, 0 skipped\n");
    CHECK_MSG(strstr(r.err, "FAIL runner/probe tests/test_runner.c:") && strstr(r.err, ": planted failure\n"),
              "%s", r.err);
    proc_result_free(&r);
    r = child("skip", "runner/probe");
    CHECK_EQ_INT(r.status, 0);
    CHECK_EQ_STR(r.out, "2 passed, 0 failed, 1 skipped\n");
    CHECK_MSG(has_line(r.err, "SKIP runner/probe: planted skip"), "%s", r.err);
    proc_result_free(&r);
}

static void test_unknown(void) {
    static const char *const bad[] = {"runner/nope", "nosuite", "nosuite/probe",
                                      "runner/",     "--bogus", "runner/probe runner/nope"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        proc_result r = child("fail", bad[i]);
        CHECK_MSG(r.status == 2, "cachet-tests %s: exit %d", bad[i], r.status);
        CHECK_MSG(!r.out[0] && !strstr(r.err, "FAIL"), "cachet-tests %s ran something: %s%s", bad[i], r.out,
                  r.err);
        proc_result_free(&r);
    }
    proc_result r = child("pass", "runner/nope");
    CHECK_MSG(strstr(r.err, "suite 'runner' has no case 'nope'") != NULL, "%s", r.err);
    proc_result_free(&r);
}

static void test_list(void) {
    proc_result r = child("fail", "--list");
    CHECK_EQ_INT(r.status, 0);
    static const char *const want[] = {"runner", "runner/probe",  "runner/probe_b", "runner/list",
                                       "engine", "engine/golden", "parse"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(has_line(r.out, want[i]), "--list has no line '%s'", want[i]);
    CHECK(strstr(r.err, "FAIL") == NULL);
    proc_result_free(&r);
    r = child("fail", "--list runner");
    CHECK_MSG(r.status == 0 && has_line(r.out, "runner/probe") && !strstr(r.out, "engine"), "%s", r.out);
    proc_result_free(&r);
}

void test_runner(void) {
    const char *probe = getenv("CACHET_RUNNER_PROBE");
    int setup = 42; /* set up before the cases, like a model opened once */
    CHECK_CASE(probe) {
        CHECK_EQ_STR(check_get()->case_name, "probe");
        CHECK_EQ_INT(setup, 42);
        if (probe && strcmp(probe, "fail") == 0) CHECK_MSG(0, "planted failure");
        if (probe && strcmp(probe, "skip") == 0) CHECK_SKIP("planted skip");
    }
    CHECK_CASE(probe_b) CHECK_EQ_STR(check_get()->case_name, "probe_b");
    if (probe) return; /* the child: what follows runs children */
    CHECK_CASE(select) test_select();
    CHECK_CASE(report) test_report();
    CHECK_CASE(unknown) test_unknown();
    CHECK_CASE(list) test_list();
}
