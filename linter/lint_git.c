/* linter/lint_git.c: git through libgit2: --staged lints the index (blob)
 * content of files added, copied, renamed or modified relative to HEAD (or
 * every staged file before the first commit), and install-hook writes the
 * pre-commit hook. Does not read the work tree's copies of staged files. */
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "lint_ctx.h"
#include "lint_sniff.h"

static int git_fail(util_err *err, const char *what) {
    const git_error *e = git_error_last();
    return util_err_set(err, UTIL_EIO, "%s: %s", what, e && e->message ? e->message : "failed");
}

static int open_repo(git_repository **repo, const char *dir, util_err *err) {
    if (git_repository_open_ext(repo, dir && *dir ? dir : ".", 0, NULL) != 0)
        return util_err_set(err, UTIL_ENOTFOUND, "'%s' is not inside a git repository",
                            dir && *dir ? dir : ".");
    if (git_repository_is_bare(*repo)) {
        git_repository_free(*repo);
        *repo = NULL;
        return util_err_set(err, UTIL_EUNSUPPORTED, "repository at '%s' is bare", dir);
    }
    return UTIL_OK;
}

/* Path filters are relative to the current directory; make them relative to
 * the work tree root (which ends with '/'). */
static char *filter_rel(const char *workdir, const char *p) {
    char cwd[4096], abs[8192], real[4096];
    if (p[0] == '/')
        snprintf(abs, sizeof abs, "%s", p);
    else if (getcwd(cwd, sizeof cwd))
        snprintf(abs, sizeof abs, "%s/%s", cwd, p);
    else
        return NULL;
    const char *use = realpath(abs, real) ? real : abs;
    char wd[4096];
    if (!realpath(workdir, wd)) snprintf(wd, sizeof wd, "%s", workdir);
    size_t wl = strlen(wd);
    while (wl > 1 && wd[wl - 1] == '/') wd[--wl] = '\0';
    if (strncmp(use, wd, wl) != 0) return strdup(p);
    const char *r = use + wl;
    while (*r == '/') r++;
    return strdup(r);
}

static int matches_filter(const char *path, char **filters, size_t n, int *exact) {
    *exact = 0;
    if (n == 0) return 1;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(filters[i]);
        if (l == 0) return 1;
        if (strcmp(path, filters[i]) == 0) {
            *exact = 1;
            return 1;
        }
        if (strncmp(path, filters[i], l) == 0 && (path[l] == '/' || filters[i][l - 1] == '/')) return 1;
    }
    return 0;
}

static int lint_delta(lint_ctx *ctx, lint_report *rep, git_repository *repo, const char *wd,
                      const git_diff_delta *dd, char **filters, size_t nf, util_err *err) {
    const char *path = dd->new_file.path;
    int exact;
    if (!matches_filter(path, filters, nf, &exact)) return UTIL_OK;
    if (dd->new_file.mode != GIT_FILEMODE_BLOB && dd->new_file.mode != GIT_FILEMODE_BLOB_EXECUTABLE)
        return UTIL_OK; /* a symlink's blob is its target's name, a submodule is a commit */
    char abs[8192];
    snprintf(abs, sizeof abs, "%s%s", wd, path);
    lint_config *cfg;
    char *rel;
    int rc = lint_ctx_config_for(ctx, abs, &cfg, &rel, err);
    if (rc) return rc;
    /* the same choice as directory mode: by name, extension or content */
    int sel = exact ? LINT_SEL_YES : lint_config_select(cfg, rel);
    free(rel);
    if (sel == LINT_SEL_EXCLUDED) return lint_report_skip(rep, LINT_SKIP_EXCLUDED, NULL);
    if (sel == LINT_SEL_IGNORED) return lint_report_skip(rep, LINT_SKIP_IGNORED, NULL);
    if (sel == LINT_SEL_NO) return lint_report_skip(rep, LINT_SKIP_NOT_PROMPT, NULL);
    const char *knob;
    size_t cap = lint_ctx_file_cap(ctx, cfg, &knob);
    if ((size_t)dd->new_file.size > cap)
        return lint_report_skip(rep, LINT_SKIP_TOO_LARGE,
                                "'%s' is %zu bytes, over the limit of "
                                "%zu bytes (%s): not linted",
                                path, (size_t)dd->new_file.size, cap, knob);
    git_blob *blob;
    if (git_blob_lookup(&blob, repo, &dd->new_file.id) != 0) return git_fail(err, path);
    const char *data = git_blob_rawcontent(blob);
    size_t len = (size_t)git_blob_rawsize(blob);
    if (len > cap) {
        git_blob_free(blob);
        return lint_report_skip(rep, LINT_SKIP_TOO_LARGE,
                                "'%s' is %zu bytes, over the limit of "
                                "%zu bytes (%s): not linted",
                                path, len, cap, knob);
    }
    if (lint_sel_reads(sel) && (lint_is_binary(data, len) || !lint_reads_like_prompt(data, len, sel))) {
        git_blob_free(blob);
        return lint_report_skip(rep, sel == LINT_SEL_DOC ? LINT_SKIP_DOCUMENT : LINT_SKIP_NOT_PROMPT, NULL);
    }
    rc = lint_check_buffer(ctx, rep, path, abs, data, len, err);
    git_blob_free(blob);
    return rc;
}

int lint_check_staged(lint_ctx *ctx, lint_report *rep, const char *repo_dir, const char *const *paths,
                      size_t n, util_err *err) {
    git_repository *repo = NULL;
    git_index *idx = NULL;
    git_object *head = NULL;
    git_diff *diff = NULL;
    char **filters = NULL;
    git_libgit2_init(); /* reference counted: only the git paths pay for it */
    int rc = open_repo(&repo, repo_dir, err);
    if (rc) {
        git_libgit2_shutdown();
        return rc;
    }
    const char *wd = git_repository_workdir(repo);
    if (n && !(filters = calloc(n, sizeof *filters))) rc = UTIL_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        if (!(filters[i] = filter_rel(wd, paths[i]))) rc = UTIL_ENOMEM;
    if (rc) {
        util_err_set(err, rc, "out of memory");
        goto done;
    }
    if (git_repository_index(&idx, repo) != 0) {
        rc = git_fail(err, "reading the index");
        goto done;
    }
    /* before the first commit HEAD is unborn: diff against the empty tree */
    if (git_revparse_single(&head, repo, "HEAD^{tree}") != 0) head = NULL;
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    opts.flags |= GIT_DIFF_INCLUDE_TYPECHANGE;
    if (git_diff_tree_to_index(&diff, repo, (git_tree *)head, idx, &opts) != 0) {
        rc = git_fail(err, "comparing the index with HEAD");
        goto done;
    }
    size_t nd = git_diff_num_deltas(diff);
    rep->walked = 1;
    for (size_t i = 0; i < nd && !rc; i++) {
        const git_diff_delta *dd = git_diff_get_delta(diff, i);
        switch (dd->status) {
        case GIT_DELTA_ADDED:
        case GIT_DELTA_MODIFIED:
        case GIT_DELTA_RENAMED:
        case GIT_DELTA_COPIED:
        case GIT_DELTA_TYPECHANGE: rc = lint_delta(ctx, rep, repo, wd, dd, filters, n, err); break;
        default: break;
        }
    }
done:
    for (size_t i = 0; filters && i < n; i++) free(filters[i]);
    free(filters);
    git_diff_free(diff);
    git_object_free(head);
    git_index_free(idx);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return rc;
}

/* --- install-hook ----------------------------------------------------------------- */

#define HOOK_MARK "promptlint pre-commit hook"

static int hooks_dir(char *out, size_t cap, git_repository *repo, util_err *err) {
    git_config *cfg = NULL;
    git_buf b = {0};
    int found = 0;
    if (git_repository_config_snapshot(&cfg, repo) == 0 &&
        git_config_get_string_buf(&b, cfg, "core.hooksPath") == 0 && b.ptr && b.ptr[0]) {
        if (b.ptr[0] == '/')
            snprintf(out, cap, "%s", b.ptr);
        else
            snprintf(out, cap, "%s%s", git_repository_workdir(repo), b.ptr);
        found = 1;
    }
    git_buf_dispose(&b);
    git_config_free(cfg);
    if (found) return UTIL_OK;
    if (git_repository_item_path(&b, repo, GIT_REPOSITORY_ITEM_HOOKS) != 0)
        return git_fail(err, "locating the hooks directory");
    snprintf(out, cap, "%s", b.ptr);
    git_buf_dispose(&b);
    return UTIL_OK;
}

/* mkdir -p; UTIL_EIO with errno set on failure. */
static int mkdirs(const char *dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) return UTIL_EIO;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? UTIL_EIO : UTIL_OK;
}

/* The hook text; the binary's path is single-quoted for the shell. */
static int hook_text(util_buf *b, const char *exe) {
    int rc = util_buf_puts(b, "#!/bin/sh\n# " HOOK_MARK " (written by 'promptlint install-hook')\n"
                              "# Lints the staged content of prompt files; skip once with "
                              "'git commit --no-verify'.\nPROMPTLINT_BUILT=");
    if (!rc && exe && *exe) {
        rc = util_buf_puts(b, "'");
        for (const char *p = exe; !rc && *p; p++)
            rc = *p == '\'' ? util_buf_puts(b, "'\\''") : util_buf_append(b, p, 1);
        if (!rc) rc = util_buf_puts(b, "'");
    } else if (!rc) {
        rc = util_buf_puts(b, "promptlint");
    }
    if (!rc)
        rc = util_buf_puts(b, "\nPROMPTLINT=\"${PROMPTLINT:-$PROMPTLINT_BUILT}\"\n"
                              "if [ ! -x \"$PROMPTLINT\" ]; then PROMPTLINT=promptlint; fi\n"
                              "exec \"$PROMPTLINT\" --staged\n");
    return rc;
}

int lint_hook_install(int *result, char *hook_path, size_t cap, const char *repo_dir, const char *exe_path,
                      int force, util_err *err) {
    git_repository *repo = NULL;
    util_buf text;
    util_buf_init(&text);
    char dir[4096], path[4200], tmp[4300];
    char *old = NULL;
    git_libgit2_init();
    int rc = open_repo(&repo, repo_dir, err);
    if (!rc) rc = hooks_dir(dir, sizeof dir, repo, err);
    if (rc) goto done;
    snprintf(path, sizeof path, "%s%spre-commit", dir, dir[strlen(dir) - 1] == '/' ? "" : "/");
    if (hook_path) snprintf(hook_path, cap, "%s", path);
    if (hook_text(&text, exe_path)) {
        rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        goto done;
    }
    *result = LINT_HOOK_INSTALLED;
    size_t olen = 0;
    if (access(path, F_OK) == 0) {
        rc = util_read_file(&old, &olen, path, err);
        if (rc) goto done;
        if (olen == text.len && memcmp(old, text.data, olen) == 0) {
            *result = LINT_HOOK_UNCHANGED;
            goto done;
        }
        if (strstr(old, HOOK_MARK)) {
            *result = LINT_HOOK_UPDATED;
        } else if (!force) {
            rc = util_err_set(err, UTIL_EINVAL,
                              "hook '%s' exists and is not promptlint's; "
                              "rerun with --force to replace it (it is kept as "
                              "'pre-commit.orig')",
                              path);
            goto done;
        } else {
            char bak[4300];
            snprintf(bak, sizeof bak, "%s.orig", path);
            if (rename(path, bak) != 0) {
                rc = util_err_set(err, UTIL_EIO, "hook '%s': %s", path, strerror(errno));
                goto done;
            }
            *result = LINT_HOOK_REPLACED;
        }
    }
    if (mkdirs(dir) != 0) {
        rc = util_err_set(err, UTIL_EIO, "hooks directory '%s': %s", dir, strerror(errno));
        goto done;
    }
    snprintf(tmp, sizeof tmp, "%s.promptlint-tmp", path);
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL;
    if (f) {
        ok = fwrite(text.data, 1, text.len, f) == text.len;
        ok = (fclose(f) == 0) && ok;
    }
    if (!ok || chmod(tmp, 0755) != 0 || rename(tmp, path) != 0) {
        rc = util_err_set(err, UTIL_EIO, "hook '%s': %s", path, strerror(errno));
        unlink(tmp);
    }
done:
    free(old);
    util_buf_release(&text);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return rc;
}
