/* agent/tools_git.c: git_status, git_diff and git_log through libgit2 (no git
 * binary needed), and the branch/status summary the turn context (tier 3)
 * shows, all confined to the workspace: the repository's working directory
 * must be the workspace or above it, its git directory must belong to it,
 * and every pathspec starts with the workspace's path in the repository.
 * Read-only: nothing here changes the repository. */
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fs.h"

#include "tools_git.h"
#include "tools_impl.h"

/* An open repository and where the workspace is inside it. */
typedef struct ws_repo {
    git_repository *r;
    char prefix[PATH_MAX]; /* the workspace's path in the repository: "" or "a/b" */
    int literal;           /* the prefix holds glob characters: pathspecs are matched literally */
} ws_repo;

/* 1 if p is dir or lies under it (both canonical). */
static int under(const char *p, const char *dir) {
    size_t n = strlen(dir);
    if (strcmp(dir, "/") == 0) return 1;
    return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int canon(const char *p, char *out) {
    if (!p || !realpath(p, out)) return 0;
    return 1;
}

/* The path a file of the git directory names (a worktree's "gitdir"), canonical. */
static int named_path(const char *gd, const char *file, char *out) {
    char p[PATH_MAX + 32], *text = NULL;
    snprintf(p, sizeof p, "%s/%s", gd, file);
    util_err e;
    if (util_fs_read(&text, NULL, AT_FDCWD, p, 4096, 0, NULL, &e)) return 0;
    size_t l = strlen(text);
    while (l && (text[l - 1] == '\n' || text[l - 1] == '\r' || text[l - 1] == ' ')) text[--l] = '\0';
    char *sl = strrchr(text, '/'); /* it names <worktree>/.git: take its directory */
    if (sl && strcmp(sl, "/.git") == 0) *sl = '\0';
    int ok = canon(text, out);
    free(text);
    return ok;
}

/* 1 if the repository's git directory belongs to its working directory wd:
 * inside it; or a linked worktree's directory (under the main repository's
 * worktrees/) whose back-reference names wd; or a submodule's directory
 * (under an ancestor's .git/modules/) whose core.worktree is wd. A .git file
 * or commondir pointing anywhere else (another repository on the machine) is
 * not. */
static int gitdir_belongs(git_repository *r, const char *wd) {
    char gd[PATH_MAX], cd[PATH_MAX], back[PATH_MAX];
    if (!canon(git_repository_path(r), gd) || !canon(git_repository_commondir(r), cd)) return 0;
    if (under(gd, wd) && under(cd, wd)) return 1;
    if (git_repository_is_worktree(r)) {
        char wt[PATH_MAX + 16];
        snprintf(wt, sizeof wt, "%s/worktrees", cd);
        return under(gd, wt) && named_path(gd, "gitdir", back) && strcmp(back, wd) == 0;
    }
    const char *m = strstr(gd, "/.git/modules/");
    if (!m || strcmp(gd, cd) != 0) return 0;
    char anc[PATH_MAX];
    snprintf(anc, sizeof anc, "%.*s", (int)(m - gd), gd);
    if (!under(wd, anc)) return 0;
    char cfgp[PATH_MAX + 16];
    snprintf(cfgp, sizeof cfgp, "%s/config", gd);
    git_config *cfg = NULL;
    git_buf v = {0};
    int ok = 0;
    if (git_config_open_ondisk(&cfg, cfgp) == 0 && git_config_get_string_buf(&v, cfg, "core.worktree") == 0) {
        char p[PATH_MAX * 2];
        if (v.ptr[0] == '/')
            snprintf(p, sizeof p, "%s", v.ptr);
        else
            snprintf(p, sizeof p, "%s/%s", gd, v.ptr);
        ok = canon(p, back) && strcmp(back, wd) == 0;
    }
    git_buf_dispose(&v);
    git_config_free(cfg);
    return ok;
}

/* Opens the repository the workspace is in, confined: its working directory
 * must be the workspace or above it (then every pathspec is confined to the
 * workspace's prefix) and its git directory must belong to it. */
static int open_repo(ws_repo *w, const char *root, util_err *err) {
    memset(w, 0, sizeof *w);
    git_libgit2_init();
    if (git_repository_open_ext(&w->r, root, 0, NULL) != 0) {
        git_libgit2_shutdown();
        return util_err_set(err, UTIL_ENOTFOUND, "the workspace is not inside a git repository");
    }
    char wd[PATH_MAX];
    const char *why = NULL;
    if (git_repository_is_bare(w->r) || !canon(git_repository_workdir(w->r), wd))
        why = "the repository has no working directory";
    else if (!under(root, wd))
        why = "the repository's working directory is outside the workspace and not above it";
    else if (!gitdir_belongs(w->r, wd))
        why =
            "the repository's git directory is outside the workspace (a .git file or commondir points elsewhere)";
    if (why) {
        git_repository_free(w->r);
        git_libgit2_shutdown();
        w->r = NULL;
        return util_err_set(err, UTIL_EINVAL, "git: %s; refused", why);
    }
    const char *p = root + strlen(wd);
    while (*p == '/') p++;
    snprintf(w->prefix, sizeof w->prefix, "%s", p);
    w->literal = strpbrk(w->prefix, "*?[]\\!") != NULL;
    return UTIL_OK;
}

static void close_repo(ws_repo *w) {
    git_repository_free(w->r);
    git_libgit2_shutdown();
    w->r = NULL;
}

/* The pathspec for a path the model gave (NULL: the whole workspace): the
 * workspace prefix, then the path ('..' refused, absolute paths only inside
 * the workspace). "" when the workspace is the whole repository. */
static int pathspec(const ws_repo *w, const agent_tools *t, const char *user, char *out, size_t cap,
                    util_err *err) {
    char rel[PATH_MAX] = ".";
    if (user) {
        int rc = agent_tools_relative(t, user, rel, sizeof rel, err);
        if (rc) return rc;
    }
    const char *r = rel;
    while (r[0] == '.' && r[1] == '/') r += 2;
    if (strcmp(r, ".") == 0) r = "";
    snprintf(out, cap, "%s%s%s", w->prefix, w->prefix[0] && r[0] ? "/" : "", r);
    return UTIL_OK;
}

/* A repository path as the workspace sees it (the prefix cut). */
static const char *ws_path(const ws_repo *w, const char *p) {
    size_t n = strlen(w->prefix);
    if (n && strncmp(p, w->prefix, n) == 0 && p[n] == '/') return p + n + 1;
    return p;
}

static int git_fail(util_err *err, const char *what) {
    const git_error *e = git_error_last();
    return util_err_set(err, UTIL_EIO, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

static void branch_line(git_repository *r, util_buf *out) {
    git_reference *head = NULL;
    int rc = git_repository_head(&head, r);
    if (rc == GIT_EUNBORNBRANCH)
        util_buf_puts(out, "branch: (no commits yet)\n");
    else if (rc != 0)
        util_buf_puts(out, "branch: (unknown)\n");
    else if (git_repository_head_detached(r))
        util_buf_puts(out, "branch: (detached HEAD)\n");
    else
        util_buf_printf(out, "branch: %s\n", git_reference_shorthand(head));
    git_reference_free(head);
}

static char status_char(unsigned s, int index) {
    if (index) {
        if (s & GIT_STATUS_INDEX_NEW) return 'A';
        if (s & GIT_STATUS_INDEX_MODIFIED) return 'M';
        if (s & GIT_STATUS_INDEX_DELETED) return 'D';
        if (s & GIT_STATUS_INDEX_RENAMED) return 'R';
        return ' ';
    }
    if (s & GIT_STATUS_WT_NEW) return '?';
    if (s & GIT_STATUS_WT_MODIFIED) return 'M';
    if (s & GIT_STATUS_WT_DELETED) return 'D';
    if (s & GIT_STATUS_WT_RENAMED) return 'R';
    return ' ';
}

/* Status confined to the workspace's prefix. */
static int status_list(git_status_list **sl, const ws_repo *w, unsigned flags) {
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    so.flags = flags | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
    char *ps[1] = {(char *)w->prefix};
    if (w->prefix[0]) {
        so.pathspec.strings = ps;
        so.pathspec.count = 1;
        if (w->literal) so.flags |= GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
    }
    return git_status_list_new(sl, w->r, &so);
}

static const char *entry_path(const git_status_entry *e) {
    return e->head_to_index      ? e->head_to_index->new_file.path
           : e->index_to_workdir ? e->index_to_workdir->new_file.path
                                 : "?";
}

/* Short-format status lines ("XY path", paths relative to the workspace), at
 * most max of them. */
static int status_lines(const ws_repo *w, util_buf *out, size_t max, util_err *err) {
    git_status_list *sl = NULL;
    if (status_list(&sl, w, GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS) != 0)
        return git_fail(err, "git status");
    size_t n = git_status_list_entrycount(sl);
    for (size_t i = 0; i < n && i < max; i++) {
        const git_status_entry *e = git_status_byindex(sl, i);
        char x = status_char(e->status, 1), y = status_char(e->status, 0);
        if (y == '?') x = '?';
        util_buf_printf(out, "%c%c %s\n", x, y, ws_path(w, entry_path(e)));
    }
    if (n > max) util_buf_printf(out, "[... %zu more]\n", n - max);
    if (n == 0) util_buf_puts(out, "clean\n");
    git_status_list_free(sl);
    return UTIL_OK;
}

int agent_tool_git_status(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    (void)a;
    ws_repo w;
    int rc = open_repo(&w, t->root, err);
    if (rc) return rc;
    branch_line(w.r, out);
    if (w.prefix[0])
        util_buf_printf(out, "workspace: '%s/' of the repository (only its files are shown)\n", w.prefix);
    rc = status_lines(&w, out, 200, err);
    close_repo(&w);
    return rc;
}

/* Short on purpose: this goes into every user message. */
int agent_git_summary(const char *workspace, util_buf *out) {
    ws_repo w;
    util_err err;
    int rc = open_repo(&w, workspace, &err);
    if (rc == UTIL_ENOTFOUND) {
        util_buf_puts(out, "git: not a repository\n");
        return UTIL_OK;
    }
    if (rc) { /* the reason, without the path outside */
        util_buf_puts(out, "git: not shown (the repository is not confined to the workspace)\n");
        return UTIL_OK;
    }
    branch_line(w.r, out);
    git_status_list *sl = NULL;
    if (status_list(&sl, &w, GIT_STATUS_OPT_INCLUDE_UNTRACKED) == 0) {
        size_t n = git_status_list_entrycount(sl), staged = 0, changed = 0, untracked = 0;
        util_buf names;
        util_buf_init(&names);
        for (size_t i = 0; i < n; i++) {
            const git_status_entry *e = git_status_byindex(sl, i);
            unsigned s = e->status;
            if (s & GIT_STATUS_WT_NEW) {
                untracked++;
                continue;
            }
            if (s & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
                     GIT_STATUS_INDEX_RENAMED))
                staged++;
            if (s & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_DELETED | GIT_STATUS_WT_RENAMED)) changed++;
            const char *p = e->index_to_workdir ? e->index_to_workdir->new_file.path
                            : e->head_to_index  ? e->head_to_index->new_file.path
                                                : NULL;
            if (p && staged + changed <= 5)
                util_buf_printf(&names, "%s%s", names.len ? ", " : "", ws_path(&w, p));
        }
        if (n == 0)
            util_buf_puts(out, "git: clean\n");
        else
            util_buf_printf(out, "git: %zu staged, %zu modified, %zu untracked%s%s\n", staged, changed,
                            untracked, names.len ? ": " : "", names.len ? names.data : "");
        util_buf_release(&names);
        git_status_list_free(sl);
    }
    close_repo(&w);
    return UTIL_OK;
}

static int diff_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l, void *payload) {
    (void)d;
    (void)h;
    util_buf *out = payload;
    if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
        l->origin == GIT_DIFF_LINE_DELETION)
        util_buf_append(out, &l->origin, 1);
    util_buf_append(out, l->content, l->content_len);
    return out->len > 256 * 1024; /* stop early: the output is truncated anyway */
}

int agent_tool_git_diff(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const cJSON *staged = cJSON_GetObjectItemCaseSensitive(a, "staged");
    const char *path;
    int rc = agent_tool_arg_str(a, "git_diff", "path", 0, &path, err);
    if (rc) return rc;
    ws_repo w;
    if ((rc = open_repo(&w, t->root, err))) return rc;
    char spec[PATH_MAX * 2];
    if ((rc = pathspec(&w, t, path, spec, sizeof spec, err))) {
        close_repo(&w);
        return rc;
    }
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    char *ps[1] = {spec};
    if (spec[0]) {
        o.pathspec.strings = ps;
        o.pathspec.count = 1;
        if (w.literal) o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
    }
    git_diff *d = NULL;
    int g;
    if (cJSON_IsTrue(staged)) {
        git_object *head = NULL;
        git_tree *tree = NULL;
        if (git_revparse_single(&head, w.r, "HEAD^{tree}") == 0) tree = (git_tree *)head;
        g = git_diff_tree_to_index(&d, w.r, tree, NULL, &o);
        git_object_free(head);
    } else {
        g = git_diff_index_to_workdir(&d, w.r, NULL, &o);
    }
    if (g != 0) {
        rc = git_fail(err, "git diff");
    } else {
        size_t start = out->len;
        if (w.prefix[0])
            util_buf_printf(out, "[paths are relative to the repository; the workspace is its '%s/']\n",
                            w.prefix);
        size_t head = out->len;
        git_diff_print(d, GIT_DIFF_FORMAT_PATCH, diff_line, out);
        if (out->len == head) {
            out->len = start;
            util_buf_puts(out, "(no changes)\n");
        }
    }
    git_diff_free(d);
    close_repo(&w);
    return rc;
}

/* 1 if commit c changes something under prefix (against its first parent). */
static int touches(git_commit *c, const char *prefix) {
    git_tree *t = NULL, *pt = NULL;
    git_commit *parent = NULL;
    git_tree_entry *e = NULL, *pe = NULL;
    if (git_commit_tree(&t, c) != 0) return 0;
    if (git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) == 0) git_commit_tree(&pt, parent);
    int have = git_tree_entry_bypath(&e, t, prefix) == 0;
    int had = pt && git_tree_entry_bypath(&pe, pt, prefix) == 0;
    int r = have != had || (have && !git_oid_equal(git_tree_entry_id(e), git_tree_entry_id(pe)));
    git_tree_entry_free(e);
    git_tree_entry_free(pe);
    git_tree_free(t);
    git_tree_free(pt);
    git_commit_free(parent);
    return r;
}

int agent_tool_git_log(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(a, "count");
    int max = 10;
    if (cnt) {
        if (!cJSON_IsNumber(cnt) || cnt->valuedouble < 1 || cnt->valuedouble > 200)
            return util_err_set(err, UTIL_EINVAL, "git_log: 'count' must be a number in [1, 200]");
        max = (int)cnt->valuedouble;
    }
    ws_repo w;
    int rc = open_repo(&w, t->root, err);
    if (rc) return rc;
    git_revwalk *rw = NULL;
    if (git_revwalk_new(&rw, w.r) != 0 || git_revwalk_push_head(rw) != 0) {
        git_revwalk_free(rw);
        close_repo(&w);
        util_buf_puts(out, "(no commits)\n");
        return UTIL_OK;
    }
    git_revwalk_sorting(rw, GIT_SORT_TIME);
    if (w.prefix[0])
        util_buf_printf(out, "[commits that change the workspace, '%s/' of the repository]\n", w.prefix);
    git_oid oid;
    int shown = 0, scanned = 0;
    /* in a subdirectory only the commits that change it, as `git log -- DIR`;
     * the scan is bounded */
    while (shown < max && scanned < 20000 && git_revwalk_next(&oid, rw) == 0) {
        scanned++;
        git_commit *c = NULL;
        if (git_commit_lookup(&c, w.r, &oid) != 0) continue;
        if (w.prefix[0] && !touches(c, w.prefix)) {
            git_commit_free(c);
            continue;
        }
        char hex[GIT_OID_HEXSZ + 1];
        git_oid_tostr(hex, sizeof hex, &oid);
        const git_signature *s = git_commit_author(c);
        const char *msg = git_commit_summary(c);
        util_buf_printf(out, "%.10s %s <%s>: %s\n", hex, s && s->name ? s->name : "?",
                        s && s->email ? s->email : "?", msg ? msg : "");
        git_commit_free(c);
        shown++;
    }
    if (shown == 0) util_buf_puts(out, "(no commits)\n");
    git_revwalk_free(rw);
    close_repo(&w);
    return UTIL_OK;
}
