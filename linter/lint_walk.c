/* linter/lint_walk.c: lints the files and directories named on the command
 * line. Directories are walked in sorted order without following directory
 * symlinks, skipping VCS folders, configured excludes and, inside a git
 * repository, what .gitignore ignores (libgit2). Does not read the index. */
#include <dirent.h>
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

typedef struct walker {
    lint_ctx *ctx;
    lint_report *rep;
    git_repository *repo; /* may be NULL: not inside a repository */
    char workdir[4096];   /* absolute, with a trailing '/' */
} walker;

static int lint_file(walker *w, const char *path, util_err *err) {
    char *data;
    size_t len;
    int rc = util_read_file(&data, &len, path, err);
    if (rc) return rc;
    rc = lint_check_buffer(w->ctx, w->rep, path, path, data, len, err);
    free(data);
    return rc;
}

static int ignored(walker *w, const char *path, int is_dir) {
    if (!w->repo) return 0;
    char abs[8192];
    if (path[0] == '/') {
        snprintf(abs, sizeof abs, "%s", path);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) return 0;
        snprintf(abs, sizeof abs, "%s/%s", cwd, path);
    }
    char real[4096];
    if (!realpath(abs, real)) return 0;
    size_t wl = strlen(w->workdir);
    if (strncmp(real, w->workdir, wl) != 0) return 0;
    char rel[4096];
    snprintf(rel, sizeof rel, "%s%s", real + wl, is_dir ? "/" : "");
    if (!rel[0] || strcmp(rel, "/") == 0) return 0;
    int ign = 0;
    if (git_ignore_path_is_ignored(&ign, w->repo, rel) < 0) return 0;
    return ign;
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

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
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = UTIL_ENOMEM;
                break;
            }
            names = p;
        }
        if (!(names[n] = strdup(nm))) {
            rc = UTIL_ENOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (!rc && n > 1) qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n && !rc; i++) {
        char p[8192];
        snprintf(p, sizeof p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (lstat(p, &st) != 0) continue;
        if (S_ISLNK(st.st_mode) && (stat(p, &st) != 0 || S_ISDIR(st.st_mode))) continue;
        if (S_ISDIR(st.st_mode)) {
            if (!ignored(w, p, 1)) rc = walk_dir(w, p, depth + 1, err);
            continue;
        }
        if (!S_ISREG(st.st_mode)) continue;
        lint_config *cfg;
        char *rel;
        rc = lint_ctx_config_for(w->ctx, p, &cfg, &rel, err);
        if (rc) break;
        int want = !lint_config_excluded(cfg, rel) && lint_config_is_prompt(cfg, rel) &&
                   lint_config_role(cfg, rel) != LINT_ROLE_IGNORE;
        free(rel);
        if (want && !ignored(w, p, 0)) rc = lint_file(w, p, err);
    }
    if (rc == UTIL_ENOMEM) util_err_set(err, rc, "out of memory");
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

int lint_check_paths(lint_ctx *ctx, lint_report *rep, const char *const *paths, size_t n,
                     util_err *err) {
    walker w = {ctx, rep, NULL, ""};
    int rc = UTIL_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            rc = util_err_set(err, UTIL_ENOTFOUND, "path '%s': %s", paths[i], strerror(errno));
            break;
        }
        if (S_ISDIR(st.st_mode)) {
            if (w.repo) { /* a different tree may belong to a different repository */
                git_repository_free(w.repo);
                w.repo = NULL;
            }
            open_repo(&w, paths[i]);
            rc = walk_dir(&w, paths[i], 0, err);
        } else {
            rc = lint_file(&w, paths[i], err); /* named explicitly: always linted */
        }
    }
    git_repository_free(w.repo);
    return rc;
}
