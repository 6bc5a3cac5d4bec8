/* agent/tools_fs.c: file tools: read_file, list_dir, grep (PCRE2), write_file
 * and edit_file (one exact match replaced). Every path goes through
 * agent_tools_resolve; writes ask for confirmation. No git, no shell here. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fs.h"
#include "tools_impl.h"

int agent_tool_read_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel;
    char p[PATH_MAX];
    int rc = agent_tool_arg_str(a, "read_file", "path", 1, &rel, err);
    if (!rc) rc = agent_tools_resolve(t, rel, 0, p, sizeof p, err);
    if (rc) return rc;
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return util_err_set(err, UTIL_EINVAL, "read_file: '%s' is not a regular file", rel);
    char *text = NULL;
    size_t n = 0;
    if ((rc = util_read_file(&text, &n, p, err))) return rc;
    util_buf_append(out, text, n);
    free(text);
    return UTIL_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int agent_tool_list_dir(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel;
    char p[PATH_MAX];
    int rc = agent_tool_arg_str(a, "list_dir", "path", 0, &rel, err);
    if (!rc) rc = agent_tools_resolve(t, rel ? rel : ".", 0, p, sizeof p, err);
    if (rc) return rc;
    DIR *d = opendir(p);
    if (!d) return util_err_set(err, UTIL_EIO, "list_dir: '%s': %s", rel ? rel : ".", strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            strcmp(de->d_name, ".git") == 0)
            continue;
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", p, de->d_name);
        struct stat st;
        int dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **q = realloc(v, cap * sizeof *q);
            if (!q) break;
            v = q;
        }
        size_t l = strlen(de->d_name);
        if (!(v[n] = malloc(l + 2))) break;
        memcpy(v[n], de->d_name, l);
        v[n][l] = dir ? '/' : '\0';
        v[n][l + 1] = '\0';
        n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    for (size_t i = 0; i < n; i++) {
        util_buf_printf(out, "%s\n", v[i]);
        free(v[i]);
    }
    free(v);
    if (n == 0) util_buf_puts(out, "(empty)\n");
    return UTIL_OK;
}

/* --- grep ----------------------------------------------------------------------------- */

typedef struct grep_ctx {
    pcre2_code *re;
    pcre2_match_data *md;
    util_buf *out;
    const char *root;
    size_t hits, limit;
} grep_ctx;

static void grep_file(grep_ctx *g, const char *path) {
    char *text = NULL;
    size_t n = 0;
    util_err e;
    if (util_read_file(&text, &n, path, &e)) return;
    if (memchr(text, '\0', n < 8000 ? n : 8000)) { /* binary */
        free(text);
        return;
    }
    const char *rel = path + strlen(g->root);
    if (*rel == '/') rel++;
    size_t line = 1;
    for (char *s = text; *s && g->hits < g->limit; line++) {
        char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s) : strlen(s);
        if (pcre2_match(g->re, (PCRE2_SPTR)s, l, 0, 0, g->md, NULL) >= 0) {
            util_buf_printf(g->out, "%s:%zu: %.*s\n", rel, line, (int)(l > 300 ? 300 : l), s);
            g->hits++;
        }
        if (!nl) break;
        s = nl + 1;
    }
    free(text);
}

static void grep_walk(grep_ctx *g, const char *dir, int depth) {
    if (depth > 32) return;
    DIR *d = opendir(dir);
    if (!d) return;
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
                                     strcmp(de->d_name, ".git") == 0))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **q = realloc(v, cap * sizeof *q);
            if (!q) break;
            v = q;
        }
        if (!(v[n] = strdup(de->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", dir, v[i]);
        struct stat st;
        /* lstat: symlinks are not followed, so the walk cannot leave the workspace */
        if (g->hits < g->limit && lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode)) grep_walk(g, full, depth + 1);
            else if (S_ISREG(st.st_mode) && st.st_size < 4 * 1024 * 1024) grep_file(g, full);
        }
        free(v[i]);
    }
    free(v);
}

int agent_tool_grep(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *pat, *rel;
    char p[PATH_MAX];
    int rc = agent_tool_arg_str(a, "grep", "pattern", 1, &pat, err);
    if (!rc) rc = agent_tool_arg_str(a, "grep", "path", 0, &rel, err);
    if (!rc) rc = agent_tools_resolve(t, rel ? rel : ".", 0, p, sizeof p, err);
    if (rc) return rc;
    int ec;
    PCRE2_SIZE eo;
    grep_ctx g = {.out = out, .root = t->root, .limit = 200};
    g.re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
                         &ec, &eo, NULL);
    if (!g.re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return util_err_set(err, UTIL_EINVAL, "grep: pattern '%s': %s at offset %zu", pat,
                            (const char *)msg, (size_t)eo);
    }
    g.md = pcre2_match_data_create_from_pattern(g.re, NULL);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) grep_walk(&g, p, 0);
    else grep_file(&g, p);
    if (g.hits == 0) util_buf_puts(out, "(no matches)\n");
    else if (g.hits >= g.limit) util_buf_printf(out, "[stopped after %zu matches]\n", g.limit);
    pcre2_match_data_free(g.md);
    pcre2_code_free(g.re);
    return UTIL_OK;
}

/* --- writes ------------------------------------------------------------------------------- */

/* Writes through a temporary file and rename, so a failure leaves the old file. */
static int write_atomic(const char *p, const char *data, size_t n, util_err *err) {
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.cachet-tmp", p);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0) return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", p, strerror(errno));
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", p, strerror(errno));
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, p) != 0) {
        unlink(tmp);
        return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", p, strerror(errno));
    }
    return UTIL_OK;
}

int agent_tool_write_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel, *content;
    char p[PATH_MAX];
    int rc = agent_tool_arg_str(a, "write_file", "path", 1, &rel, err);
    if (!rc) rc = agent_tool_arg_str(a, "write_file", "content", 1, &content, err);
    if (!rc) rc = agent_tools_resolve(t, rel, 1, p, sizeof p, err);
    if (!rc) rc = agent_tools_check_confirm(t, "write_file", rel, err);
    if (!rc) rc = write_atomic(p, content, strlen(content), err);
    if (!rc) util_buf_printf(out, "wrote %zu bytes to %s\n", strlen(content), rel);
    return rc;
}

int agent_tool_edit_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel, *old, *new_text;
    char p[PATH_MAX];
    int rc = agent_tool_arg_str(a, "edit_file", "path", 1, &rel, err);
    if (!rc) rc = agent_tool_arg_str(a, "edit_file", "old", 1, &old, err);
    if (!rc) rc = agent_tool_arg_str(a, "edit_file", "new", 1, &new_text, err);
    if (!rc) rc = agent_tools_resolve(t, rel, 0, p, sizeof p, err);
    if (rc) return rc;
    if (!*old) return util_err_set(err, UTIL_EINVAL, "edit_file: 'old' must not be empty");
    char *text = NULL;
    size_t n = 0;
    if ((rc = util_read_file(&text, &n, p, err))) return rc;
    char *hit = strstr(text, old);
    if (!hit) {
        free(text);
        return util_err_set(err, UTIL_ENOTFOUND, "edit_file: the text of 'old' is not in '%s'", rel);
    }
    if (strstr(hit + 1, old)) {
        free(text);
        return util_err_set(err, UTIL_EINVAL,
                            "edit_file: 'old' occurs more than once in '%s'; give more context", rel);
    }
    rc = agent_tools_check_confirm(t, "edit_file", rel, err);
    if (!rc) {
        util_buf b;
        util_buf_init(&b);
        util_buf_append(&b, text, (size_t)(hit - text));
        util_buf_puts(&b, new_text);
        util_buf_puts(&b, hit + strlen(old));
        rc = write_atomic(p, b.data ? b.data : "", b.len, err);
        util_buf_release(&b);
    }
    if (!rc) util_buf_printf(out, "edited %s\n", rel);
    free(text);
    return rc;
}
