/* tests/test_install.c: `make install PREFIX=<tmp>` and `make uninstall` as
 * a newcomer uses them: the installed cachet and promptlint run from an
 * unrelated folder with a fresh HOME and XDG folders (generate on the
 * installed model, an agent turn against the fake backend tests/fakesrv.c,
 * promptlint on a file), the no-model message names the places searched, and
 * uninstall leaves nothing. make does not rebuild here (-o: the binaries
 * under test are taken as they are). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fakesrv.h"
#include "proc.h"

/* A clean environment: nothing from the caller's HOME, XDG folders, model or data settings. */
#define FRESH_ENV                                                                \
    "env -i PATH=/usr/bin:/bin HOME=%s/home XDG_DATA_HOME=%s/home/.local/share " \
    "XDG_STATE_HOME=%s/home/.local/state XDG_CACHE_HOME=%s/home/.cache XDG_CONFIG_HOME=%s/home/.config"

static int make_install(const char *dir, const char *prefix, const char *models) {
    const char *bin = proc_bin_dir();
    proc_result r = proc_runf("make --no-print-directory -C '%s' -o '%s/cachet' -o '%s/promptlint' install "
                              "BIN='%s' PREFIX='%s/%s' INSTALL_MODELS='%s'",
                              check_root(), bin, bin, bin, dir, prefix, models);
    CHECK_MSG(r.status == 0, "make install: %s%s", r.out, r.err);
    CHECK_MSG(strstr(r.out, "is not on PATH") != NULL, "no PATH advice: %s", r.out);
    int st = r.status;
    proc_result_free(&r);
    return st;
}

static void test_installed(const char *dir, const char *model) {
    char models[4200];
    snprintf(models, sizeof models, "%s", model);
    if (make_install(dir, "prefix", models)) return;
    proc_result r = proc_runf("mkdir -p %s/home %s/elsewhere/ws && cd %s/elsewhere && " FRESH_ENV
                              " %s/prefix/bin/cachet --version",
                              dir, dir, dir, dir, dir, dir, dir, dir, dir);
    CHECK_EQ_INT(r.status, 0);
    CHECK_MSG(strncmp(r.out, "cachet 0.", 9) == 0, "%s", r.out);
    proc_result_free(&r);

    /* the model installed under PREFIX/share/cachet/models is found from the binary's path */
    r = proc_runf("cd %s/elsewhere && " FRESH_ENV
                  " %s/prefix/bin/cachet generate --prompt 'The capital of France is' "
                  "--max-tokens 4 --temp 0 --threads 2 --no-disk-cache",
                  dir, dir, dir, dir, dir, dir, dir);
    CHECK_MSG(r.status == 0 && strstr(r.out, "Paris"), "generate: %d %s %s", r.status, r.out, r.err);
    proc_result_free(&r);

    /* an agent turn: prompts/ come from PREFIX/share/cachet */
    fake f;
    char *ans = fake_sse_text("Hello from the fake backend.");
    CHECK(fake_start(&f, 1, ans) == 0);
    free(ans);
    r = proc_runf("cd %s/elsewhere && " FRESH_ENV
                  " %s/prefix/bin/cachet -p hi --backend http://127.0.0.1:%d/v1 "
                  "--backend-model fake --workspace ws",
                  dir, dir, dir, dir, dir, dir, dir, f.port);
    CHECK_MSG(r.status == 0 && strstr(r.out, "Hello from the fake backend."), "agent: %d %s %s", r.status,
              r.out, r.err);
    proc_result_free(&r);
    fake_stop(&f);
    fake_release(&f);
    r = proc_runf("ls %s/home/.local/state/cachet/sessions", dir);
    CHECK_MSG(r.status == 0 && r.out[0], "the session went to XDG_STATE_HOME: %s", r.err);
    proc_result_free(&r);

    /* promptlint: its rules from PREFIX/share/cachet/linter/rules */
    r = proc_runf(
        "cd %s/elsewhere && printf 'You are a helpful assistant. Answer briefly.\\n' > p.md && " FRESH_ENV
        " %s/prefix/bin/promptlint p.md && " FRESH_ENV " %s/prefix/bin/promptlint --version",
        dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
    CHECK_MSG(r.status == 0 && strstr(r.out, "promptlint 0."), "promptlint: %d %s %s", r.status, r.out,
              r.err);
    proc_result_free(&r);

    /* uninstall removes what install wrote: the prefix folder is gone */
    r = proc_runf("make --no-print-directory -C '%s' uninstall PREFIX='%s/prefix' && test ! -e '%s/prefix'",
                  check_root(), dir, dir);
    CHECK_MSG(r.status == 0, "uninstall: %s %s", r.out, r.err);
    proc_result_free(&r);
    r = proc_runf("make --no-print-directory -C '%s' uninstall PREFIX='%s/prefix'", check_root(), dir);
    CHECK_MSG(r.status != 0 && strstr(r.err, "nothing to remove"), "second uninstall: %s", r.err);
    proc_result_free(&r);
}

/* Without a model anywhere, the message names every place searched. */
static void test_no_model(const char *dir) {
    if (make_install(dir, "bare", "")) return;
    proc_result r = proc_runf("mkdir -p %s/home %s/elsewhere && cd %s/elsewhere && " FRESH_ENV
                              " %s/bare/bin/cachet generate --prompt hi",
                              dir, dir, dir, dir, dir, dir, dir, dir, dir);
    CHECK_EQ_INT(r.status, 1);
    char want[4200];
    snprintf(want, sizeof want, "%s/home/.local/share/cachet/models", dir);
    CHECK_MSG(strstr(r.err, want) != NULL, "no %s in: %s", want, r.err);
    snprintf(want, sizeof want, "%s/bare/share/cachet/models", dir);
    CHECK_MSG(strstr(r.err, want) != NULL, "no %s in: %s", want, r.err);
    CHECK_MSG(strstr(r.err, "CACHET_MODEL") && strstr(r.err, "--model"), "%s", r.err);
    proc_result_free(&r);
    r = proc_runf("make --no-print-directory -C '%s' uninstall PREFIX='%s/bare' && test ! -e '%s/bare'",
                  check_root(), dir, dir);
    CHECK_MSG(r.status == 0, "uninstall: %s %s", r.out, r.err);
    proc_result_free(&r);
}

void test_install(void) {
    const char *model = check_model_path();
    proc_result r = proc_run("command -v make");
    int have_make = r.status == 0;
    proc_result_free(&r);
    if (!model || !have_make) {
        CHECK_MSG(0, "needs the model and make");
        return;
    }
    char dir[] = "/tmp/cachet-install-XXXXXX";
    if (!mkdtemp(dir)) return;
    CHECK_CASE(installed) test_installed(dir, model);
    CHECK_CASE(no_model) test_no_model(dir);
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}
