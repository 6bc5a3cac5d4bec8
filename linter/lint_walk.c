/* linter/lint_walk.c: lints the files and directories named on the command
 * line. Directories are walked in sorted order without following directory
 * symlinks, skipping VCS folders, configured excludes and, inside a git
 * repository, what .gitignore ignores (libgit2); a walked file is linted when
 * it is a prompt by name, extension or content (lint_config_select). Every
 * file is opened with O_NONBLOCK, checked with fstat (regular files only) and
 * read up to the size cap; symlinks that leave the tree are not followed.
 * Does not read the index (lint_git.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/vec.h"
#include "lint_ctx.h"
#include "lint_sniff.h"

typedef struct walker {
    lint_ctx *ctx;
    lint_report *rep;
    git_repository *repo; /* may be NULL: not inside a repository */
    char workdir[4096];   /* absolute, with a trailing '/' */
    char root[PATH_MAX];  /* the tree being linted (real path): symlinks stay in it */
} walker;

/* --- reading, bounded ------------------------------------------------------- */

typedef enum { RD_OK = 0, RD_SPECIAL, RD_TOO_LARGE } rd_status;

/* Reads at most cap bytes of a regular file (its first cap bytes when head is
 * set: a prefix is enough) with util/fs.h: opened with O_NONBLOCK and checked
 * with fstat, so a FIFO or device is refused by kind, never waited on.
 * *status says why nothing was read (RD_SPECIAL: why[] holds util_fs's
 * message naming the kind), *size is the file's size. */
static int read_bounded(const char *path, size_t cap, int head, char **out, size_t *len, rd_status *status,
                        char *why, size_t why_cap, size_t *size, util_err *err) {
    *out = NULL;
    *len = 0;
    *status = RD_OK;
    int fd;
    util_err e = {0};
    int rc = util_fs_open_regular(&fd, AT_FDCWD, path, 0, &e);
    if (rc == UTIL_EFORMAT) {
        snprintf(why, why_cap, "%s", e.msg);
        *status = RD_SPECIAL;
        return UTIL_OK;
    }
    if (rc) return util_err_set(err, rc, "%s", e.msg);
    struct stat st;
    *size = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0;
    rc = util_fs_read_fd(out, len, fd, path, cap, head ? UTIL_FS_PREFIX : 0, NULL, &e);
    close(fd);
    if (rc == UTIL_ERANGE) {
        if (*size <= cap) *size = cap + 1; /* it grew while read */
        *status = RD_TOO_LARGE;
        return UTIL_OK;
    }
    return rc ? util_err_set(err, rc, "%s", e.msg) : UTIL_OK;
}

/* Whether the real path p lies inside the directory root (both real). */
static int inside(const char *root, const char *p) {
    size_t rl = strlen(root);
    if (rl == 1 && root[0] == '/') return 1;
    return strncmp(p, root, rl) == 0 && (p[rl] == '/' || p[rl] == '\0');
}

/* --- one file ----------------------------------------------------------------------- */

/* Lints a file named on the command line: anything but a readable text file
 * under the cap is an error, with the reason. */
static int lint_named(walker *w, const char *path, util_err *err) {
    lint_config *cfg;
    char *rel;
    int rc = lint_ctx_config_for(w->ctx, path, &cfg, &rel, err);
    if (rc) return rc;
    free(rel);
    const char *knob;
    char why[1100];
    size_t cap = lint_ctx_file_cap(w->ctx, cfg, &knob), size = 0, len;
    char *data;
    rd_status st;
    rc = read_bounded(path, cap, 0, &data, &len, &st, why, sizeof why, &size, err);
    if (rc) return rc;
    if (st == RD_SPECIAL)
        return util_err_set(err, UTIL_EINVAL, "%s: promptlint reads regular text files only", why);
    if (st == RD_TOO_LARGE)
        return util_err_set(err, UTIL_EINVAL,
                            "'%s' is %zu bytes, over the limit of %zu bytes "
                            "(%s)",
                            path, size, cap, knob);
    if (lint_is_binary(data, len)) {
        size_t at = (size_t)((const char *)memchr(data, '\0', len < 8192 ? len : 8192) - data);
        free(data);
        return util_err_set(err, UTIL_EINVAL,
                            "'%s' is binary (a NUL byte at offset %zu): "
                            "promptlint lints text files",
                            path, at);
    }
    rc = lint_check_buffer(w->ctx, w->rep, path, path, data, len, err);
    free(data);
    return rc;
}

static int ignored(walker *w, const char *real, int is_dir) {
    if (!w->repo) return 0;
    size_t wl = strlen(w->workdir);
    if (strncmp(real, w->workdir, wl) != 0) return 0;
    char rel[4096];
    snprintf(rel, sizeof rel, "%s%s", real + wl, is_dir ? "/" : "");
    if (!rel[0] || strcmp(rel, "/") == 0) return 0;
    int ign = 0;
    if (git_ignore_path_is_ignored(&ign, w->repo, rel) < 0) return 0;
    return ign;
}

/* A file found by walking (or named with --prompts-only): linted when it is
 * a prompt; every other outcome is counted in the report. */
static int lint_found(walker *w, const char *path, const char *real, util_err *err) {
    lint_config *cfg;
    char *rel;
    int rc = lint_ctx_config_for(w->ctx, path, &cfg, &rel, err);
    if (rc) return rc;
    int sel = lint_config_select(cfg, rel);
    free(rel);
    if (sel == LINT_SEL_EXCLUDED) return lint_report_skip(w->rep, LINT_SKIP_EXCLUDED, NULL);
    if (sel == LINT_SEL_IGNORED) return lint_report_skip(w->rep, LINT_SKIP_IGNORED, NULL);
    if (sel == LINT_SEL_NO) return lint_report_skip(w->rep, LINT_SKIP_NOT_PROMPT, NULL);
    if (ignored(w, real, 0)) return UTIL_OK; /* not part of the project */
    const char *knob;
    char why[1100];
    size_t cap = lint_ctx_file_cap(w->ctx, cfg, &knob), size = 0, len;
    char *data;
    rd_status st;
    if (lint_sel_reads(sel)) {
        rc = read_bounded(path, 16384, 1, &data, &len, &st, why, sizeof why, &size, err);
        if (rc) return rc;
        int yes = st == RD_OK && !lint_is_binary(data, len) && lint_reads_like_prompt(data, len, sel);
        free(data);
        if (st == RD_SPECIAL) return lint_report_skip(w->rep, LINT_SKIP_SPECIAL, NULL);
        if (!yes)
            return lint_report_skip(w->rep, sel == LINT_SEL_DOC ? LINT_SKIP_DOCUMENT : LINT_SKIP_NOT_PROMPT,
                                    NULL);
    }
    rc = read_bounded(path, cap, 0, &data, &len, &st, why, sizeof why, &size, err);
    if (rc) return rc;
    if (st == RD_SPECIAL) return lint_report_skip(w->rep, LINT_SKIP_SPECIAL, NULL);
    if (st == RD_TOO_LARGE)
        return lint_report_skip(w->rep, LINT_SKIP_TOO_LARGE,
                                "'%s' is %zu bytes, over the limit "
                                "of %zu bytes (%s): not linted",
                                path, size, cap, knob);
    rc = lint_check_buffer(w->ctx, w->rep, path, path, data, len, err);
    free(data);
    return rc;
}

/* --- walking ---------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int walk_dir(walker *w, const char *dir, int depth, util_err *err) {
    if (depth > 64) return UTIL_OK;
    DIR *d = opendir(dir);
    if (!d) return util_err_set(err, UTIL_EIO, "directory '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = UTIL_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, ".git") || !strcmp(nm, ".hg") ||
            !strcmp(nm, ".svn") || !strcmp(nm, "node_modules"))
            continue;
        if (util_grow(&names, &cap, n + 1, sizeof *names) || !(names[n] = strdup(nm))) {
            rc = UTIL_ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (!rc && n > 1) qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n && !rc; i++) {
        char p[PATH_MAX + 256], real[PATH_MAX];
        snprintf(p, sizeof p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        if (!realpath(p, real)) continue; /* a dangling symlink */
        if (S_ISLNK(st.st_mode)) {
            if (!inside(w->root, real)) {
                rc = lint_report_skip(w->rep, LINT_SKIP_SYMLINK,
                                      "symlink '%s' points outside "
                                      "'%s' (to '%s'): not followed",
                                      p, w->root, real);
                continue;
            }
            if (stat(p, &st) != 0 || S_ISDIR(st.st_mode)) continue; /* its files are walked */
        }
        if (S_ISDIR(st.st_mode)) {
            if (!ignored(w, real, 1)) rc = walk_dir(w, p, depth + 1, err);
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            rc = lint_report_skip(w->rep, LINT_SKIP_SPECIAL, NULL);
            continue;
        }
        rc = lint_found(w, p, real, err);
    }
    if (rc == UTIL_ENOMEM && err && !err->msg[0]) util_err_set(err, rc, "out of memory");
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

static void open_repo(walker *w, const char *start) {
    if (w->repo) return;
    if (git_repository_open_ext(&w->repo, start, 0, NULL) != 0) {
        w->repo = NULL;
        return;
    }
    const char *wd = git_repository_workdir(w->repo);
    char real[4096];
    if (!wd || !realpath(wd, real)) {
        git_repository_free(w->repo);
        w->repo = NULL;
        return;
    }
    snprintf(w->workdir, sizeof w->workdir, "%s/", real);
}

int lint_check_paths(lint_ctx *ctx, lint_report *rep, const char *const *paths, size_t n, util_err *err) {
    walker w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx, w.rep = rep;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || !realpath(cwd, w.root)) snprintf(w.root, sizeof w.root, "/");
    int rc = UTIL_OK, git_on = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct stat st;
        char real[PATH_MAX];
        if (lstat(paths[i], &st) != 0 || stat(paths[i], &st) != 0 || !realpath(paths[i], real)) {
            rc = util_err_set(err, UTIL_ENOTFOUND, "path '%s': %s", paths[i], strerror(errno));
            break;
        }
        struct stat lst;
        if (lstat(paths[i], &lst) == 0 && S_ISLNK(lst.st_mode) && S_ISREG(st.st_mode)) {
            /* a named symlink: followed only inside the current directory's tree */
            char here[PATH_MAX];
            if (!getcwd(cwd, sizeof cwd) || !realpath(cwd, here)) snprintf(here, sizeof here, "/");
            if (!inside(here, real)) {
                rc = lint_report_skip(rep, LINT_SKIP_SYMLINK,
                                      "symlink '%s' points outside '%s' "
                                      "(to '%s'): not followed",
                                      paths[i], here, real);
                continue;
            }
        }
        if (S_ISDIR(st.st_mode)) {
            if (!git_on) { /* a walk reads .gitignore; named files never need libgit2 */
                git_libgit2_init();
                git_on = 1;
            }
            if (w.repo) { /* a different tree may belong to a different repository */
                git_repository_free(w.repo);
                w.repo = NULL;
            }
            open_repo(&w, paths[i]);
            snprintf(w.root, sizeof w.root, "%s", real);
            rep->walked = 1;
            rc = walk_dir(&w, paths[i], 0, err);
        } else if (ctx->opt.prompts_only && S_ISREG(st.st_mode)) {
            /* named (by a hook): no "no prompt files found" warning when none is */
            rc = lint_found(&w, paths[i], real, err);
        } else {
            rc = lint_named(&w, paths[i], err); /* named explicitly: always linted */
        }
    }
    git_repository_free(w.repo);
    if (git_on) git_libgit2_shutdown();
    return rc;
}
