/* tests/test_lint_git.c: promptlint against real temporary git repositories
 * made with libgit2: --staged reads the index, not the work tree (both
 * directions), before and after the first commit; install-hook (fresh,
 * unchanged, foreign, --force, core.hooksPath); and the installed hook
 * blocking a real `git commit` when the git CLI is there. */
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../linter/lint.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "lint_yaml_select.h"

static const char k_bad[] = "Today is {{ date }}.\n\nYou are the ACME support assistant.\n"
                            "Answer briefly and politely.\n";
static const char k_good[] = "You are the ACME support assistant.\nAnswer briefly and politely.\n"
                             "\n<!-- cache-boundary -->\nToday is {{ date }}.\n";

static void write_file(const char *dir, const char *rel, const char *text) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (char *s = p + strlen(dir) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    FILE *f = fopen(p, "wb");
    CHECK_MSG(f != NULL, "cannot write '%s'", p);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void stage(git_repository *repo, const char *rel, int remove) {
    git_index *idx = NULL;
    CHECK(git_repository_index(&idx, repo) == 0);
    if (!idx) return;
    int rc = remove ? git_index_remove_bypath(idx, rel) : git_index_add_bypath(idx, rel);
    CHECK_MSG(rc == 0, "stage '%s': %s", rel, git_error_last() ? git_error_last()->message : "");
    CHECK(git_index_write(idx) == 0);
    git_index_free(idx);
}

static void commit(git_repository *repo) {
    git_index *idx = NULL;
    git_oid tree_id, commit_id;
    git_tree *tree = NULL;
    git_signature *sig = NULL;
    git_object *parent = NULL;
    CHECK(git_repository_index(&idx, repo) == 0);
    CHECK(git_index_write_tree(&tree_id, idx) == 0);
    CHECK(git_tree_lookup(&tree, repo, &tree_id) == 0);
    CHECK(git_signature_new(&sig, "test", "test@example.com", 1700000000, 0) == 0);
    int has_parent = git_revparse_single(&parent, repo, "HEAD") == 0;
    const git_commit *parents[1] = {has_parent ? (const git_commit *)parent : NULL};
    CHECK(git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL, "test", tree, has_parent ? 1 : 0,
                            parents) == 0);
    git_object_free(parent);
    git_signature_free(sig);
    git_tree_free(tree);
    git_index_free(idx);
}

static lint_ctx *new_ctx(void) {
    lint_options o = {0};
    o.no_model = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    CHECK_MSG(lint_ctx_new(&c, &o, &err) == 0, "%s", err.msg);
    return c;
}

/* Runs --staged on dir; returns the number of findings (all severities). */
static int staged(lint_ctx *c, const char *dir, const char *filter, size_t *checked) {
    lint_report r;
    lint_report_init(&r);
    util_err err = {0};
    const char *paths[1] = {filter};
    int rc = lint_check_staged(c, &r, dir, paths, filter ? 1 : 0, &err);
    CHECK_MSG(rc == 0, "staged: %s", err.msg);
    int n = (int)r.n;
    if (checked) *checked = r.files_checked;
    lint_report_release(&r);
    return n;
}

static void rm_rf(const char *dir) {
    char cmd[4200];
    if (strncmp(dir, "/tmp/", 5) != 0 || strstr(dir, "..")) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove '%s'\n", dir);
}

static void test_staged(void) {
    char dir[] = "/tmp/promptlint-staged-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    git_libgit2_init();
    git_repository *repo = NULL;
    CHECK(git_repository_init(&repo, dir, 0) == 0);
    lint_ctx *c = new_ctx();
    if (!repo || !c) goto out;
    size_t checked = 0;

    /* before the first commit: index has the bad version, work tree the good one */
    write_file(dir, "prompts/system.md", k_bad);
    write_file(dir, "src/notes.c", "/* Today is 2025-03-03 */\n");
    stage(repo, "prompts/system.md", 0);
    stage(repo, "src/notes.c", 0);
    write_file(dir, "prompts/system.md", k_good);
    CHECK_EQ_INT(staged(c, dir, NULL, &checked), 1);
    CHECK_EQ_INT(checked, 1); /* src/notes.c is not a prompt file */

    /* the other way: index good, work tree bad */
    stage(repo, "prompts/system.md", 0);
    write_file(dir, "prompts/system.md", k_bad);
    CHECK_EQ_INT(staged(c, dir, NULL, NULL), 0);
    commit(repo);

    /* after a commit only changed files are linted; the committed copy is clean */
    CHECK_EQ_INT(staged(c, dir, NULL, &checked), 0);
    CHECK_EQ_INT(checked, 0);
    stage(repo, "prompts/system.md", 0); /* modified: bad staged */
    write_file(dir, "prompts/system.md", k_good);
    CHECK_EQ_INT(staged(c, dir, NULL, NULL), 1);

    /* path filters, a subdirectory as repo_dir, a new file, a staged deletion */
    write_file(dir, "skills/demo/SKILL.md", "---\nname: demo\ndescription: A demo.\n---\nBody.\n");
    write_file(dir, "AGENTS.md", "Rules.\nMore rules.\nBranch: {{ git_branch }}\n");
    stage(repo, "skills/demo/SKILL.md", 0);
    stage(repo, "AGENTS.md", 0);
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/prompts", dir);
    CHECK_EQ_INT(staged(c, sub, NULL, &checked), 2); /* PL001 + PL002 */
    CHECK_EQ_INT(checked, 3);
    char filt[4200];
    snprintf(filt, sizeof filt, "%s/skills", dir);
    CHECK_EQ_INT(staged(c, dir, filt, &checked), 0);
    CHECK_EQ_INT(checked, 1);
    commit(repo);
    stage(repo, "AGENTS.md", 1);
    CHECK_EQ_INT(staged(c, dir, NULL, &checked), 0);
    CHECK_EQ_INT(checked, 0);

    /* a prompt kept as YAML in prompts/ is staged like directory mode reads it;
     * model settings beside it are not */
    write_file(dir, "prompts/triage.yaml",
               "- role: system\n  content: |\n    You are the triage assistant for a bike repair shop.\n"
               "    Sort each request into repair, sale or question. Never promise a price.\n");
    write_file(dir, "prompts/model.yaml", "model: gpt-4o-mini\ntemperature: 0.2\n");
    stage(repo, "prompts/triage.yaml", 0);
    stage(repo, "prompts/model.yaml", 0);
    CHECK_EQ_INT(staged(c, dir, NULL, &checked), 0);
    CHECK_EQ_INT(checked, 1);

    /* YAML outside prompts/ by content: the same set directory mode picks (test_lint_cli.c) */
    commit(repo);
    size_t want = 0;
    for (size_t i = 0; i < sizeof k_yaml_sel / sizeof *k_yaml_sel; i++) {
        write_file(dir, k_yaml_sel[i].path, k_yaml_sel[i].text);
        stage(repo, k_yaml_sel[i].path, 0);
        want += (size_t)k_yaml_sel[i].prompt;
    }
    staged(c, dir, NULL, &checked);
    CHECK_EQ_INT(checked, want);
    commit(repo);

    /* a decision record under docs/ named for prompts and an environment file
     * in prompts/ are no prompts, staged as walked (test_lint_cli.c); a system
     * prompt under docs/ that opens addressed to a model is */
    write_file(dir, "docs/adr/0003-prompt-caching.md",
               "# ADR 0003: Prompt caching\n\n## Date\n\n2025-01-09\n\n## Decision\n\nThe system prompt "
               "keeps the rules first; the user's question and the tools come after, and the model must "
               "respond fast.\n");
    write_file(dir, "prompts/.env.txt", "API_KEY=3f9c2a71-0b4e-4d8a-9c1f-5e6d7a8b9c0d\nBASE_URL=http://x\n");
    write_file(dir, "docs/bot_prompt.md", "You are the shop's support bot.\nAnswer briefly.\n");
    stage(repo, "docs/adr/0003-prompt-caching.md", 0);
    stage(repo, "prompts/.env.txt", 0);
    stage(repo, "docs/bot_prompt.md", 0);
    CHECK_EQ_INT(staged(c, dir, NULL, &checked), 0);
    CHECK_EQ_INT(checked, 1);
    commit(repo);

    /* the work tree's config applies to staged content */
    write_file(dir, ".promptlint.json", "{\"ignore\": [\"PL001\"]}\n");
    lint_ctx_free(c);
    c = new_ctx(); /* configs are cached per context */
    CHECK_EQ_INT(staged(c, dir, NULL, NULL), 0);

    /* not a repository */
    {
        lint_report r;
        lint_report_init(&r);
        util_err err = {0};
        CHECK(lint_check_staged(c, &r, "/", NULL, 0, &err) == UTIL_ENOTFOUND);
        CHECK(strstr(err.msg, "not inside a git repository") != NULL);
        lint_report_release(&r);
    }
out:
    lint_ctx_free(c);
    git_repository_free(repo);
    git_libgit2_shutdown();
    rm_rf(dir);
}

static char *slurp(const char *path) {
    char *d = NULL;
    size_t n;
    util_err err = {0};
    if (util_read_file(&d, &n, path, &err)) return NULL;
    return d;
}

static const char *promptlint_bin(char *buf, size_t cap) {
    const char *b = getenv("CACHET_BIN");
    if (b && *b)
        snprintf(buf, cap, "%s/promptlint", b);
    else
        snprintf(buf, cap, "%s/bin/promptlint", check_root());
    if (buf[0] != '/') {
        char cwd[2048], tmp[4096];
        if (getcwd(cwd, sizeof cwd)) {
            snprintf(tmp, sizeof tmp, "%s/%s", cwd, buf);
            snprintf(buf, cap, "%s", tmp);
        }
    }
    return buf;
}

/* Runs `git ARGS` in dir (dir NULL: just `git --version`); returns its exit status. */
static int git_cli(const char *dir, const char *args) {
    char cmd[8192];
    if (!dir)
        snprintf(cmd, sizeof cmd, "git --version >/dev/null 2>&1");
    else
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && git -c user.name=t -c user.email=t@example.com "
                 "%s >/dev/null 2>&1",
                 dir, args);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_install_hook(void) {
    char dir[] = "/tmp/promptlint-hook-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    git_libgit2_init();
    git_repository *repo = NULL;
    CHECK(git_repository_init(&repo, dir, 0) == 0);
    char exe[4096], hook[4200], path[4200];
    promptlint_bin(exe, sizeof exe);
    snprintf(hook, sizeof hook, "%s/.git/hooks/pre-commit", dir);
    int result = -1;
    util_err err = {0};

    CHECK(lint_hook_install(&result, path, sizeof path, dir, exe, 0, &err) == 0);
    CHECK_EQ_INT(result, LINT_HOOK_INSTALLED);
    CHECK_EQ_STR(path, hook);
    struct stat st;
    CHECK(stat(hook, &st) == 0 && (st.st_mode & 0111));
    char *text = slurp(hook);
    CHECK(text && strncmp(text, "#!/bin/sh", 9) == 0 && strstr(text, "--staged") && strstr(text, exe));
    free(text);
    CHECK(lint_hook_install(&result, NULL, 0, dir, exe, 0, &err) == 0);
    CHECK_EQ_INT(result, LINT_HOOK_UNCHANGED);

    /* a foreign hook is kept unless --force, which moves it aside */
    write_file(dir, ".git/hooks/pre-commit", "#!/bin/sh\necho mine\n");
    util_err_clear(&err);
    CHECK(lint_hook_install(&result, NULL, 0, dir, exe, 0, &err) == UTIL_EINVAL);
    CHECK(strstr(err.msg, "--force") != NULL);
    text = slurp(hook);
    CHECK(text && strstr(text, "echo mine"));
    free(text);
    CHECK(lint_hook_install(&result, NULL, 0, dir, exe, 1, &err) == 0);
    CHECK_EQ_INT(result, LINT_HOOK_REPLACED);
    snprintf(path, sizeof path, "%s.orig", hook);
    text = slurp(path);
    CHECK(text && strstr(text, "echo mine"));
    free(text);

    /* core.hooksPath is honoured */
    git_config *cfg = NULL;
    CHECK(git_repository_config(&cfg, repo) == 0);
    CHECK(git_config_set_string(cfg, "core.hooksPath", ".githooks") == 0);
    git_config_free(cfg);
    CHECK(lint_hook_install(&result, path, sizeof path, dir, exe, 0, &err) == 0);
    CHECK(strstr(path, "/.githooks/pre-commit") != NULL);
    CHECK(access(path, X_OK) == 0);

    /* end to end: the hook blocks a bad commit and lets the fixed one through */
    if (access(exe, X_OK) == 0 && git_cli(NULL, NULL) == 0) {
        write_file(dir, "prompts/system.md", k_bad);
        CHECK_EQ_INT(git_cli(dir, "add prompts/system.md"), 0);
        char cmd[8600];
        snprintf(cmd, sizeof cmd, "cd '%s' && sh '%s' >/dev/null 2>&1", dir, path);
        int st = system(cmd);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "the hook script exited %d, want 1",
                  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        CHECK_MSG(git_cli(dir, "commit -q -m bad") != 0, "the hook let a bad prompt through");
        write_file(dir, "prompts/system.md", k_good);
        CHECK_EQ_INT(git_cli(dir, "add prompts/system.md"), 0);
        CHECK_MSG(git_cli(dir, "commit -q -m good") == 0, "the hook blocked a clean prompt");
    } else {
        CHECK_SKIP("no git CLI or no '%s': the git commit check did not run", exe);
    }
    git_repository_free(repo);
    git_libgit2_shutdown();
    rm_rf(dir);
}

void test_lint_git(void) {
    CHECK_CASE(staged) test_staged();
    CHECK_CASE(install_hook) test_install_hook();
}
