/* agent/tools_git.c: git_status, git_diff and git_log through libgit2 (no git
 * binary needed), and the branch/status summary the turn context (tier 3)
 * shows. Read-only: nothing here changes the repository. */
#include <git2.h>
#include <stdio.h>
#include <string.h>

#include "tools_git.h"
#include "tools_impl.h"

static int open_repo(git_repository **r, const char *root, util_err *err) {
    git_libgit2_init();
    if (git_repository_open_ext(r, root, 0, NULL) != 0) {
        git_libgit2_shutdown();
        return util_err_set(err, UTIL_ENOTFOUND, "the workspace is not inside a git repository");
    }
    return UTIL_OK;
}

static void close_repo(git_repository *r) {
    git_repository_free(r);
    git_libgit2_shutdown();
}

static int git_fail(util_err *err, const char *what) {
    const git_error *e = git_error_last();
    return util_err_set(err, UTIL_EIO, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

static void branch_line(git_repository *r, util_buf *out) {
    git_reference *head = NULL;
    int rc = git_repository_head(&head, r);
    if (rc == GIT_EUNBORNBRANCH) util_buf_puts(out, "branch: (no commits yet)\n");
    else if (rc != 0) util_buf_puts(out, "branch: (unknown)\n");
    else if (git_repository_head_detached(r)) util_buf_puts(out, "branch: (detached HEAD)\n");
    else util_buf_printf(out, "branch: %s\n", git_reference_shorthand(head));
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

/* Short-format status lines ("XY path"), at most max of them. */
static int status_lines(git_repository *r, util_buf *out, size_t max, util_err *err) {
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
    git_status_list *sl = NULL;
    if (git_status_list_new(&sl, r, &so) != 0) return git_fail(err, "git status");
    size_t n = git_status_list_entrycount(sl);
    for (size_t i = 0; i < n && i < max; i++) {
        const git_status_entry *e = git_status_byindex(sl, i);
        const char *path = e->head_to_index ? e->head_to_index->new_file.path
                           : e->index_to_workdir ? e->index_to_workdir->new_file.path : "?";
        char x = status_char(e->status, 1), y = status_char(e->status, 0);
        if (y == '?') x = '?';
        util_buf_printf(out, "%c%c %s\n", x, y, path);
    }
    if (n > max) util_buf_printf(out, "[... %zu more]\n", n - max);
    if (n == 0) util_buf_puts(out, "clean\n");
    git_status_list_free(sl);
    return UTIL_OK;
}

int agent_tool_git_status(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    (void)a;
    git_repository *r;
    int rc = open_repo(&r, t->root, err);
    if (rc) return rc;
    branch_line(r, out);
    rc = status_lines(r, out, 200, err);
    close_repo(r);
    return rc;
}

/* Short on purpose: this goes into every user message. */
int agent_git_summary(const char *workspace, util_buf *out) {
    git_repository *r;
    util_err err;
    if (open_repo(&r, workspace, &err)) {
        util_buf_puts(out, "git: not a repository\n");
        return UTIL_OK;
    }
    branch_line(r, out);
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
    git_status_list *sl = NULL;
    if (git_status_list_new(&sl, r, &so) == 0) {
        size_t n = git_status_list_entrycount(sl), staged = 0, changed = 0, untracked = 0;
        util_buf names;
        util_buf_init(&names);
        for (size_t i = 0; i < n; i++) {
            const git_status_entry *e = git_status_byindex(sl, i);
            unsigned s = e->status;
            if (s & GIT_STATUS_WT_NEW) { untracked++; continue; }
            if (s & (GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED |
                     GIT_STATUS_INDEX_RENAMED)) staged++;
            if (s & (GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_DELETED | GIT_STATUS_WT_RENAMED)) changed++;
            const char *p = e->index_to_workdir ? e->index_to_workdir->new_file.path
                            : e->head_to_index ? e->head_to_index->new_file.path : NULL;
            if (p && staged + changed <= 5) util_buf_printf(&names, "%s%s", names.len ? ", " : "", p);
        }
        if (n == 0) util_buf_puts(out, "git: clean\n");
        else util_buf_printf(out, "git: %zu staged, %zu modified, %zu untracked%s%s\n", staged, changed,
                             untracked, names.len ? ": " : "", names.len ? names.data : "");
        util_buf_release(&names);
        git_status_list_free(sl);
    }
    close_repo(r);
    return UTIL_OK;
}

static int diff_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
                     void *payload) {
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
    git_repository *r;
    if ((rc = open_repo(&r, t->root, err))) return rc;
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    char *ps[1] = {(char *)path};
    if (path) {
        o.pathspec.strings = ps;
        o.pathspec.count = 1;
    }
    git_diff *d = NULL;
    int g;
    if (cJSON_IsTrue(staged)) {
        git_object *head = NULL;
        git_tree *tree = NULL;
        if (git_revparse_single(&head, r, "HEAD^{tree}") == 0) tree = (git_tree *)head;
        g = git_diff_tree_to_index(&d, r, tree, NULL, &o);
        git_object_free(head);
    } else {
        g = git_diff_index_to_workdir(&d, r, NULL, &o);
    }
    if (g != 0) rc = git_fail(err, "git diff");
    else git_diff_print(d, GIT_DIFF_FORMAT_PATCH, diff_line, out);
    if (!rc && out->len == 0) util_buf_puts(out, "(no changes)\n");
    git_diff_free(d);
    close_repo(r);
    return rc;
}

int agent_tool_git_log(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(a, "count");
    int max = 10;
    if (cnt) {
        if (!cJSON_IsNumber(cnt) || cnt->valuedouble < 1 || cnt->valuedouble > 200)
            return util_err_set(err, UTIL_EINVAL, "git_log: 'count' must be a number in [1, 200]");
        max = (int)cnt->valuedouble;
    }
    git_repository *r;
    int rc = open_repo(&r, t->root, err);
    if (rc) return rc;
    git_revwalk *w = NULL;
    if (git_revwalk_new(&w, r) != 0 || git_revwalk_push_head(w) != 0) {
        git_revwalk_free(w);
        close_repo(r);
        util_buf_puts(out, "(no commits)\n");
        return UTIL_OK;
    }
    git_revwalk_sorting(w, GIT_SORT_TIME);
    git_oid oid;
    for (int i = 0; i < max && git_revwalk_next(&oid, w) == 0; i++) {
        git_commit *c = NULL;
        if (git_commit_lookup(&c, r, &oid) != 0) continue;
        char hex[GIT_OID_HEXSZ + 1];
        git_oid_tostr(hex, sizeof hex, &oid);
        const git_signature *s = git_commit_author(c);
        const char *msg = git_commit_summary(c);
        util_buf_printf(out, "%.10s %s <%s>: %s\n", hex, s && s->name ? s->name : "?",
                        s && s->email ? s->email : "?", msg ? msg : "");
        git_commit_free(c);
    }
    git_revwalk_free(w);
    close_repo(r);
    return UTIL_OK;
}
