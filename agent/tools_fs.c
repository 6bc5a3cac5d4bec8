/* agent/tools_fs.c: file tools: read_file (a bounded range), list_dir, grep
 * (PCRE2), write_file and edit_file (one exact match replaced). Every path
 * goes through the workspace resolver (tools_ws.h) and the tools then act on
 * the descriptor it returned, never on the name again; only regular files are
 * read, each with a size cap; writes ask for confirmation on the resolved
 * path. No git, no shell here. */
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
#include "../util/text.h"
#include "../util/vec.h"
#include "tools_impl.h"

/* grep reads files up to this size; larger ones are skipped with a note */
#define GREP_FILE_MAX ((size_t)4 << 20)
/* edit_file edits files up to this size */
#define EDIT_FILE_MAX ((size_t)16 << 20)

/* --- read_file ------------------------------------------------------------------------ */

/* An optional non-negative integer argument. */
static int arg_offset(const cJSON *a, const char *tool, const char *key, long long *out, util_err *err) {
    *out = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
    if (!v || cJSON_IsNull(v)) return UTIL_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9e15 ||
        v->valuedouble != (double)(long long)v->valuedouble)
        return util_err_set(err, UTIL_EINVAL, "%s: '%s' must be a whole number of bytes, 0 or more", tool,
                            key);
    *out = (long long)v->valuedouble;
    return UTIL_OK;
}

/* Reads at most one output's worth of the file from offset (pread: the rest
 * of the file is never read) and says how to read on when there is more. */
int agent_tool_read_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel;
    long long off;
    int rc = agent_tool_arg_str(a, "read_file", "path", 1, &rel, err);
    if (!rc) rc = arg_offset(a, "read_file", "offset", &off, err);
    if (rc) return rc;
    int fd;
    if ((rc = agent_tools_open(t, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, err))) return rc;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return util_err_set(err, UTIL_EINVAL, "read_file: '%s' is %s, not a regular file", rel,
                            util_fs_kind(st.st_mode));
    }
    long long size = (long long)st.st_size;
    if (off > size) {
        close(fd);
        return util_err_set(err, UTIL_EINVAL, "read_file: offset %lld is past the end of '%s' (%lld bytes)",
                            off, rel, size);
    }
    size_t window = t->max_output > 1024 ? t->max_output - 256 : t->max_output / 2 + 1;
    char *buf = malloc(window);
    if (!buf) {
        close(fd);
        return util_err_set(err, UTIL_ENOMEM, "read_file: out of memory");
    }
    size_t got = 0;
    while (got < window) {
        ssize_t k = pread(fd, buf + got, window - got, (off_t)(off + (long long)got));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return util_err_set(err, UTIL_EIO, "read_file: '%s': %s", rel, strerror(e));
        }
        if (k == 0) break;
        got += (size_t)k;
    }
    close(fd);
    long long end = off + (long long)got;
    if (end < size) { /* cut on a character boundary; the next part starts there */
        size_t cut = util_utf8_floor(buf, got, got);
        if (cut > 0) got = cut;
        end = off + (long long)got;
    }
    util_buf_append(out, buf, got);
    free(buf);
    if (off > 0 || end < size) {
        util_buf_printf(out, "%s[read_file: bytes %lld-%lld of %lld bytes",
                        got && out->data[out->len - 1] != '\n' ? "\n" : "", off, end, size);
        if (end < size) util_buf_printf(out, "; read on with \"offset\": %lld", end);
        util_buf_puts(out, "]\n");
    }
    return UTIL_OK;
}

/* --- list_dir ------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted names of directory fd (without '.', '..' and .git); frees with
 * free_names. The descriptor stays the caller's. */
static char **dir_names(int fd, size_t *n_out) {
    *n_out = 0;
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return NULL;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return NULL;
    }
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || strcmp(de->d_name, ".git") == 0)
            continue;
        if (util_grow(&v, &cap, n + 1, sizeof *v) || !(v[n] = strdup(de->d_name))) break;
        n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_str);
    *n_out = n;
    return v;
}

static void free_names(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

int agent_tool_list_dir(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel;
    int fd;
    int rc = agent_tool_arg_str(a, "list_dir", "path", 0, &rel, err);
    if (!rc) rc = agent_tools_open(t, rel ? rel : ".", O_RDONLY | O_DIRECTORY, &fd, err);
    if (rc) return rc;
    size_t n;
    char **v = dir_names(fd, &n);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        const char *mark = "";
        if (fstatat(fd, v[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
            mark = S_ISDIR(st.st_mode) ? "/" : S_ISLNK(st.st_mode) ? "@" : "";
        util_buf_printf(out, "%s%s\n", v[i], mark);
    }
    free_names(v, n);
    close(fd);
    if (n == 0) util_buf_puts(out, "(empty)\n");
    return UTIL_OK;
}

/* --- grep ----------------------------------------------------------------------------- */

typedef struct grep_ctx {
    pcre2_code *re;
    pcre2_match_data *md;
    util_buf *out;
    util_buf skipped; /* "name (why)" of what was not searched */
    size_t n_skipped;
    size_t hits, limit;
} grep_ctx;

static void grep_skip(grep_ctx *g, const char *name, const char *why) {
    if (g->n_skipped++ < 20) util_buf_printf(&g->skipped, "%s%s (%s)", g->skipped.len ? ", " : "", name, why);
}

/* Searches the regular file open on fd (the caller closes it). */
static void grep_fd(grep_ctx *g, int fd, const char *name) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if ((size_t)st.st_size > GREP_FILE_MAX) {
        char why[96];
        snprintf(why, sizeof why, "%lld bytes, over the limit of %zu", (long long)st.st_size, GREP_FILE_MAX);
        grep_skip(g, name, why);
        return;
    }
    char *text = NULL;
    size_t n = 0;
    util_err e;
    if (util_fs_read_fd(&text, &n, fd, name, GREP_FILE_MAX, 0, NULL, &e)) {
        grep_skip(g, name, e.code == UTIL_ERANGE ? "grew past the limit" : "unreadable");
        return;
    }
    if (memchr(text, '\0', n < 8000 ? n : 8000)) { /* binary */
        free(text);
        return;
    }
    size_t line = 1;
    for (char *s = text; *s && g->hits < g->limit; line++) {
        char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s) : strlen(s);
        if (pcre2_match(g->re, (PCRE2_SPTR)s, l, 0, 0, g->md, NULL) >= 0) {
            util_buf_printf(g->out, "%s:%zu: %.*s\n", name, line, (int)(l > 300 ? 300 : l), s);
            g->hits++;
        }
        if (!nl) break;
        s = nl + 1;
    }
    free(text);
}

/* Walks the directory open on fd: entries are looked at with
 * AT_SYMLINK_NOFOLLOW and opened relative to fd with O_NOFOLLOW, so the walk
 * never follows a link (in or out) and never blocks on a FIFO. */
static void grep_dir(grep_ctx *g, int fd, const char *prefix, int depth) {
    if (depth > 32) return;
    size_t n;
    char **v = dir_names(fd, &n);
    for (size_t i = 0; i < n && g->hits < g->limit; i++) {
        char name[PATH_MAX];
        snprintf(name, sizeof name, "%s%s", prefix, v[i]);
        struct stat st;
        if (fstatat(fd, v[i], &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISLNK(st.st_mode)) continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(fd, v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) continue;
            char pre[PATH_MAX];
            snprintf(pre, sizeof pre, "%s/", name);
            grep_dir(g, sub, pre, depth + 1);
            close(sub);
        } else if (!S_ISREG(st.st_mode)) {
            grep_skip(g, name, util_fs_kind(st.st_mode));
        } else if ((size_t)st.st_size > GREP_FILE_MAX) {
            char why[96];
            snprintf(why, sizeof why, "%lld bytes, over the limit of %zu", (long long)st.st_size,
                     GREP_FILE_MAX);
            grep_skip(g, name, why);
        } else {
            int f;
            util_err e;
            if (util_fs_open_regular(&f, fd, v[i], UTIL_FS_NOFOLLOW, &e) == 0) {
                grep_fd(g, f, name);
                close(f);
            } else if (e.code == UTIL_EFORMAT) {
                grep_skip(g, name, "not a regular file");
            }
        }
    }
    free_names(v, n);
}

int agent_tool_grep(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *pat, *rel;
    int fd;
    int rc = agent_tool_arg_str(a, "grep", "pattern", 1, &pat, err);
    if (!rc) rc = agent_tool_arg_str(a, "grep", "path", 0, &rel, err);
    if (!rc) rc = agent_tools_open(t, rel ? rel : ".", O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd, err);
    if (rc) return rc;
    struct stat st;
    if (fstat(fd, &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        close(fd);
        return util_err_set(err, UTIL_EINVAL, "grep: '%s' is %s, not a regular file or a directory", rel,
                            util_fs_kind(st.st_mode));
    }
    int ec;
    PCRE2_SIZE eo;
    grep_ctx g = {.out = out, .limit = 200};
    util_buf_init(&g.skipped);
    g.re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec,
                         &eo, NULL);
    if (!g.re) {
        close(fd);
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return util_err_set(err, UTIL_EINVAL, "grep: pattern '%s': %s at offset %zu", pat, (const char *)msg,
                            (size_t)eo);
    }
    g.md = pcre2_match_data_create_from_pattern(g.re, NULL);
    char prefix[PATH_MAX] = "";
    char root_rel[PATH_MAX];
    if (rel && agent_tools_relative(t, rel, root_rel, sizeof root_rel, err) == UTIL_OK &&
        strcmp(root_rel, ".") != 0)
        snprintf(prefix, sizeof prefix, "%s%s", root_rel, root_rel[strlen(root_rel) - 1] == '/' ? "" : "/");
    if (S_ISDIR(st.st_mode)) {
        grep_dir(&g, fd, prefix, 0);
    } else {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        grep_fd(&g, fd, rel);
    }
    close(fd);
    if (g.hits == 0)
        util_buf_puts(out, "(no matches)\n");
    else if (g.hits >= g.limit)
        util_buf_printf(out, "[stopped after %zu matches]\n", g.limit);
    if (g.n_skipped) {
        util_buf_append(&g.skipped, "", 0);
        util_buf_printf(out, "[skipped %zu: %s%s]\n", g.n_skipped, g.skipped.data,
                        g.n_skipped > 20 ? ", ..." : "");
    }
    util_buf_release(&g.skipped);
    pcre2_match_data_free(g.md);
    pcre2_code_free(g.re);
    return UTIL_OK;
}

/* --- writes ------------------------------------------------------------------------------- */

/* "to X" or, when a link led elsewhere, "to X (Y)". */
static void say_where(util_buf *out, const char *given, const agent_ws_target *w) {
    if (strcmp(given, w->rel) == 0)
        util_buf_printf(out, "%s\n", given);
    else
        util_buf_printf(out, "%s (%s)\n", given, w->rel);
}

int agent_tool_write_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel, *content;
    agent_ws_target w = {.dirfd = -1};
    int rc = agent_tool_arg_str(a, "write_file", "path", 1, &rel, err);
    if (!rc) rc = agent_tool_arg_str(a, "write_file", "content", 1, &content, err);
    if (!rc) rc = agent_tools_target(t, rel, &w, err);
    if (!rc) rc = agent_tools_check_write(t, "write_file", &w, err);
    if (!rc) rc = agent_tools_write_at(&w, content, strlen(content), err);
    if (!rc) {
        util_buf_printf(out, "wrote %zu bytes to ", strlen(content));
        say_where(out, rel, &w);
    }
    agent_ws_target_release(&w);
    return rc;
}

int agent_tool_edit_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *rel, *old, *new_text;
    agent_ws_target w = {.dirfd = -1};
    int rc = agent_tool_arg_str(a, "edit_file", "path", 1, &rel, err);
    if (!rc) rc = agent_tool_arg_str(a, "edit_file", "old", 1, &old, err);
    if (!rc) rc = agent_tool_arg_str(a, "edit_file", "new", 1, &new_text, err);
    if (!rc && !*old) rc = util_err_set(err, UTIL_EINVAL, "edit_file: 'old' must not be empty");
    if (!rc) rc = agent_tools_target(t, rel, &w, err);
    if (!rc && !w.exists) rc = util_err_set(err, UTIL_ENOTFOUND, "edit_file: '%s' does not exist", rel);
    char *text = NULL;
    size_t n = 0;
    if (!rc) {
        int fd;
        util_err e;
        rc = util_fs_open_regular(&fd, w.dirfd, w.name, UTIL_FS_NOFOLLOW, &e);
        if (!rc) {
            rc = util_fs_read_fd(&text, &n, fd, rel, EDIT_FILE_MAX, 0, NULL, &e);
            close(fd);
        }
        if (rc) util_err_set(err, rc, "edit_file: %s", e.msg);
    }
    char *hit = text ? strstr(text, old) : NULL;
    if (!rc && !hit)
        rc = util_err_set(err, UTIL_ENOTFOUND, "edit_file: the text of 'old' is not in '%s'", rel);
    if (!rc && strstr(hit + 1, old))
        rc = util_err_set(err, UTIL_EINVAL,
                          "edit_file: 'old' occurs more than once in '%s'; give more context", rel);
    if (!rc) rc = agent_tools_check_write(t, "edit_file", &w, err);
    if (!rc) {
        util_buf b;
        util_buf_init(&b);
        util_buf_append(&b, text, (size_t)(hit - text));
        util_buf_puts(&b, new_text);
        util_buf_puts(&b, hit + strlen(old));
        rc = agent_tools_write_at(&w, b.data ? b.data : "", b.len, err);
        util_buf_release(&b);
    }
    if (!rc) {
        util_buf_puts(out, "edited ");
        say_where(out, rel, &w);
    }
    free(text);
    agent_ws_target_release(&w);
    return rc;
}
