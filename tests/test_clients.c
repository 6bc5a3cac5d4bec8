/* tests/test_clients.c: `cachet serve` driven by clients other people wrote:
 * the official `openai` Python package (its SSE reader, its error classes, and
 * its pydantic types validating every raw reply) and prometheus_client's text
 * parser reading /metrics (tests/clients/openai_client.py does the checks and
 * prints one line per check). Real HTTP on loopback against a real server and
 * the real model. Skipped, with the reason, when python3 or the openai package
 * is absent (pip install openai prometheus_client; .ci/run installs them).
 * Does not test the model's text beyond greedy replies agreeing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proc.h"

/* Each "FAIL name: why" line of the script's output becomes a failed check. */
static void report_lines(const char *out) {
    int ok = 0;
    for (const char *p = out; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n >= 3 && strncmp(p, "ok ", 3) == 0) ok++;
        if (n >= 5 && strncmp(p, "FAIL ", 5) == 0) CHECK_MSG(0, "openai client: %.*s", (int)n, p);
        p = e ? e + 1 : NULL;
    }
    /* 15 chat/stream/completions/error checks, 4 metrics checks */
    CHECK_MSG(ok >= 19, "openai client: only %d checks passed:\n%s", ok, out ? out : "");
}

void test_clients(void) {
    if (!check_model_path()) {
        CHECK_SKIP("no model (make model): the client tests did not run");
        return;
    }
    proc_result v = proc_run("python3 -c 'import openai, prometheus_client' 2>&1");
    int have = v.status == 0;
    proc_result_free(&v);
    if (!have) {
        CHECK_SKIP("python3 with the openai and prometheus_client packages is absent (pip install openai "
                   "prometheus_client): the client tests did not run");
        return;
    }
    proc_server s;
    int started = proc_server_start(&s, "", "--ctx-size 1024 --parallel 2") == 0;
    CHECK_MSG(started, "cachet serve did not start");
    if (!started) return;
    proc_result r = proc_runf(
        "timeout 600 python3 '%s/tests/clients/openai_client.py' http://127.0.0.1:%d 2>&1", check_root(),
        s.port);
    CHECK_MSG(r.status == 0, "openai client exited %d:\n%s", r.status, r.out ? r.out : "");
    report_lines(r.out);
    proc_result_free(&r);
    CHECK_EQ_INT(proc_server_stop(&s), 0);
}
