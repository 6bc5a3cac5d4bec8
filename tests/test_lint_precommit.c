/* tests/test_lint_precommit.c: the pre-commit framework's hooks
 * (.pre-commit-hooks.yaml, issue 19) with the real `pre-commit` package, in a
 * real temporary git repository whose .pre-commit-config.yaml names this
 * repository at HEAD, with no promptlint on PATH and an empty pre-commit cache:
 * the first run builds promptlint (scripts/promptlint-hook.sh), a bad prompt
 * fails, a fixed one passes and commits, and the hook picks the same files as
 * `promptlint DIR`. Skipped, with the reason, when pre-commit or git is
 * absent (pip install pre-commit). Does not test promptlint's rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "proc.h"

static void write_text(const char *dir, const char *name, const char *text) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    CHECK_MSG(f != NULL, "write '%s'", p);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static const char k_bad[] = "Today is 2025-03-03.\n"
                            "You are the release assistant. Answer briefly and cite the file.\n"
                            "Never invent version numbers; say you do not know instead.\n";
static const char k_good[] = "You are the release assistant. Answer briefly and cite the file.\n"
                             "Never invent version numbers; say you do not know instead.\n"
                             "Today is 2025-03-03.\n";

/* pre-commit ARGS in dir/work: PATH without any promptlint, pre-commit's
 * cache in dir/cache (empty at first, so the first run builds). */
static proc_result precommit(const char *dir, const char *args) {
    return proc_runf("cd '%s/work' && PRE_COMMIT_HOME='%s/cache' PATH=\"$(printf %%s \"$PATH\" | "
                     "tr : '\\n' | while read -r d; do [ -x \"$d/promptlint\" ] || printf %%s: "
                     "\"$d\"; done)\" timeout 580 pre-commit %s 2>&1",
                     dir, dir, args);
}

/* N of promptlint's summary "All checks passed (N files checked...)" in out,
 * or -1. */
static int files_checked(const char *out) {
    const char *p = out ? strstr(out, "All checks passed (") : NULL;
    return p ? (int)strtol(p + strlen("All checks passed ("), NULL, 10) : -1;
}

void test_lint_precommit(void) {
    proc_result v = proc_run("pre-commit --version && git --version");
    int have = v.status == 0;
    proc_result_free(&v);
    if (!have) {
        CHECK_SKIP("pre-commit or git is not installed (pip install pre-commit): the "
                   "pre-commit hook test did not run");
        return;
    }
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/promptlint-pc-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp");
        return;
    }
    proc_result r = proc_runf("cd '%s' && mkdir -p work/prompts && cd work && git init -q && "
                              "git config user.email t@example.com && git config user.name t",
                              dir);
    CHECK_EQ_INT(r.status, 0);
    proc_result_free(&r);
    char work[128];
    snprintf(work, sizeof work, "%s/work", dir);
    write_text(work, "prompts/system.md", k_bad);
    write_text(work, "notes.txt", "shopping list: eggs, milk\n");
    write_text(work, "README.md", "# demo\n\nToday is 2025-03-03. Install with make.\n");
    r = proc_runf("cd '%s' && git add -A", work);
    proc_result_free(&r);

    /* the hooks as a user adds them: this repository at its HEAD (committed
     * hook scripts; a working tree's uncommitted changes are not seen) */
    char cfg[4096];
    proc_result h = proc_runf("git -C '%s' rev-parse HEAD", check_root());
    if (h.out && strchr(h.out, '\n')) *strchr(h.out, '\n') = '\0';
    snprintf(cfg, sizeof cfg,
             "repos:\n- repo: %s\n  rev: %s\n  hooks:\n  - id: promptlint\n"
             "  - id: promptlint-staged\n",
             check_root(), h.out ? h.out : "HEAD");
    proc_result_free(&h);
    write_text(work, ".pre-commit-config.yaml", cfg);
    r = proc_runf("cd '%s' && git add -A", work);
    proc_result_free(&r);

    /* first use: builds promptlint into the empty cache, then fails */
    r = precommit(dir, "run promptlint --all-files");
    CHECK_MSG(r.status == 1, "bad prompt: exit %d\n%s", r.status, r.out);
    CHECK_MSG(strstr(r.out, "building promptlint") != NULL, "no first-use build:\n%s", r.out);
    CHECK_MSG(strstr(r.out, "PL001") && strstr(r.out, "prompts/system.md"), "out:\n%s", r.out);
    CHECK_MSG(strstr(r.out, "README.md:") == NULL, "README.md is not a prompt:\n%s", r.out);
    proc_result_free(&r);

    r = precommit(dir, "run promptlint-staged");
    CHECK_MSG(r.status == 1 && strstr(r.out, "PL001"), "staged: exit %d\n%s", r.status, r.out);
    CHECK_MSG(strstr(r.out, "building promptlint") == NULL, "built twice:\n%s", r.out);
    proc_result_free(&r);

    /* fixed: both hooks pass, and a commit goes through the installed hook */
    write_text(work, "prompts/system.md", k_good);
    r = proc_runf("cd '%s' && git add -A", work);
    proc_result_free(&r);
    r = precommit(dir, "run promptlint --all-files --verbose");
    CHECK_MSG(r.status == 0, "good prompt: exit %d\n%s", r.status, r.out);
    int hook_n = files_checked(r.out);
    proc_result_free(&r);
    r = precommit(dir, "run promptlint-staged");
    CHECK_MSG(r.status == 0, "staged good prompt: exit %d\n%s", r.status, r.out);
    proc_result_free(&r);

    /* the hook picks the same files as directory mode */
    r = proc_runf("cd '%s' && '%s/promptlint' --no-model .", work, proc_bin_dir());
    int dir_n = files_checked(r.out);
    CHECK_MSG(hook_n == 1 && dir_n == 1, "files checked: hook %d, promptlint . %d\n%s", hook_n, dir_n, r.out);
    proc_result_free(&r);
    r = precommit(dir, "install");
    CHECK_EQ_INT(r.status, 0);
    proc_result_free(&r);
    r = proc_runf("cd '%s' && PRE_COMMIT_HOME='%s/cache' git commit -q -m good 2>&1", work, dir);
    CHECK_MSG(r.status == 0, "commit through the hook: exit %d\n%s", r.status, r.out);
    proc_result_free(&r);

    r = proc_runf("rm -rf '%s'", dir);
    proc_result_free(&r);
}
