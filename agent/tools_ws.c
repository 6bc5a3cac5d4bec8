/* agent/tools_ws.c: the tools' workspace: the one resolver for workspace
 * paths (lexical rules here, then util_fs_open_beneath on the workspace's
 * descriptor, so '..', absolute paths, symlinks and a concurrent rename cannot
 * lead out), where a write goes and whether it is protected (.git/, .cachet/),
 * the allow list in .cachet/config.json, the confirmation policy (--yes, the
 * allow list, else ask on a TTY, else refuse) and argument helpers. Runs no
 * tool itself (tools.c, tools_fs.c, tools_git.c, tools_shell.c). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "tools_ws.h"

/* --- config ---------------------------------------------------------------------- */

/* "secret_env": an array of variable-name globs (tools_shell.c drops them
 * from the commands' environment). */
static int load_secret_env(agent_tools *t, const cJSON *c, const char *p, util_err *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "secret_env"), *e;
    if (!v) return UTIL_OK;
    if (!cJSON_IsArray(v))
        return util_err_set(err, UTIL_EFORMAT, "'%s': \"secret_env\" must be an array of strings", p);
    t->secret_env = calloc((size_t)cJSON_GetArraySize(v) + 1, sizeof *t->secret_env);
    if (!t->secret_env) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e))
            return util_err_set(err, UTIL_EFORMAT, "'%s': \"secret_env\" must be an array of strings", p);
        if (!(t->secret_env[t->n_secret_env] = strdup(e->valuestring)))
            return util_err_set(err, UTIL_ENOMEM, "out of memory");
        t->n_secret_env++;
    }
    return UTIL_OK;
}

#define CONFIG_MAX ((size_t)1 << 20)

static int load_config(agent_tools *t, util_err *err) {
    const char *p = ".cachet/config.json";
    char *text = NULL;
    size_t len = 0;
    util_err e;
    int rc = util_fs_read(&text, &len, t->rootfd, p, CONFIG_MAX, UTIL_FS_BENEATH, NULL, &e);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc == UTIL_EINVAL)
        return util_err_set(err, rc, "'%s/%s' leads outside the workspace: refused", t->root, p);
    if (rc) return util_err_set(err, rc, "workspace %s", e.msg);
    char label[PATH_MAX + 32];
    snprintf(label, sizeof label, "%s/%s", t->root, p);
    rc = agent_tools_config_parse(t, text, len, label, err);
    free(text);
    return rc;
}

int agent_tools_config_parse(agent_tools *t, const char *text, size_t len, const char *label, util_err *err) {
    int rc = UTIL_OK;
    const char *p = label;
    cJSON *c = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(c)) {
        cJSON_Delete(c);
        return util_err_set(err, UTIL_EFORMAT, "'%s' is not a JSON object", p);
    }
    cJSON *allow = cJSON_GetObjectItemCaseSensitive(c, "allow");
    if (allow && !cJSON_IsArray(allow)) {
        cJSON_Delete(c);
        return util_err_set(err, UTIL_EFORMAT, "'%s': \"allow\" must be an array of strings", p);
    }
    int n = cJSON_GetArraySize(allow);
    t->allow = calloc((size_t)n + 1, sizeof *t->allow);
    if (!t->allow) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
    for (int i = 0; !rc && i < n; i++) {
        cJSON *e2 = cJSON_GetArrayItem(allow, i);
        if (!cJSON_IsString(e2)) {
            rc = util_err_set(err, UTIL_EFORMAT, "'%s': \"allow\" must be an array of strings", p);
            break;
        }
        if (!(t->allow[t->n_allow] = strdup(e2->valuestring)))
            rc = UTIL_ENOMEM;
        else
            t->n_allow++;
    }
    if (!rc) rc = load_secret_env(t, c, p, err);
    cJSON_Delete(c);
    return rc;
}

int agent_tools_init(agent_tools *t, const char *workspace, util_err *err) {
    memset(t, 0, sizeof *t);
    t->rootfd = -1;
    t->max_output = AGENT_TOOL_OUTPUT_LIMIT;
    t->shell_timeout_s = 30;
    char real[PATH_MAX];
    if (!realpath(workspace, real))
        return util_err_set(err, UTIL_ENOTFOUND, "workspace '%s': %s", workspace, strerror(errno));
    t->root = strdup(real);
    if (!t->root) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    t->rootfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (t->rootfd < 0) {
        int e = errno;
        agent_tools_release(t);
        return util_err_set(err, UTIL_EIO, "workspace '%s': %s", workspace, strerror(e));
    }
    int rc = load_config(t, err);
    if (rc) agent_tools_release(t);
    return rc;
}

void agent_tools_release(agent_tools *t) {
    for (size_t i = 0; i < t->n_allow; i++) free(t->allow[i]);
    free(t->allow);
    for (size_t i = 0; i < t->n_secret_env; i++) free(t->secret_env[i]);
    free(t->secret_env);
    if (t->root && t->rootfd >= 0) close(t->rootfd); /* a zeroed, never initialized struct holds no fd */
    free(t->root);
    memset(t, 0, sizeof *t);
    t->rootfd = -1;
}

/* --- paths --------------------------------------------------------------------------- */

int agent_tools_relative(const agent_tools *t, const char *path, char *out, size_t cap, util_err *err) {
    if (!path || !*path) path = ".";
    /* '..' is refused outright, even when it would stay inside: it is never needed */
    for (const char *s = path; *s;) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 2 && s[0] == '.' && s[1] == '.')
            return util_err_set(err, UTIL_EINVAL, "path '%s': '..' is not allowed", path);
        s += l;
        while (*s == '/') s++;
    }
    const char *rel = path;
    if (path[0] == '/') {
        size_t n = strlen(t->root);
        if (strcmp(t->root, "/") == 0)
            n = 0;
        else if (strncmp(path, t->root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
            return util_err_set(err, UTIL_EINVAL, "path '%s' is outside the workspace", path);
        rel = path + n;
        while (*rel == '/') rel++;
        if (!*rel) rel = ".";
    }
    if (strlen(rel) + 1 > cap) return util_err_set(err, UTIL_EINVAL, "path '%s' is too long", path);
    memcpy(out, rel, strlen(rel) + 1);
    return UTIL_OK;
}

/* A resolver error as the tools say it: a way out names the workspace. */
static int resolve_fail(int rc, const char *path, const util_err *e, util_err *err) {
    if (rc == UTIL_EINVAL)
        return util_err_set(
            err, rc, "path '%s' is outside the workspace (it leads out through a symbolic link); refused",
            path);
    if (rc == UTIL_ENOTFOUND) return util_err_set(err, rc, "path '%s' does not exist", path);
    return util_err_set(err, rc, "path '%s': %s", path, e->msg);
}

int agent_tools_open(const agent_tools *t, const char *path, int oflags, int *out_fd, util_err *err) {
    *out_fd = -1;
    char rel[PATH_MAX];
    int rc = agent_tools_relative(t, path, rel, sizeof rel, err);
    if (rc) return rc;
    util_err e;
    rc = util_fs_open_beneath(out_fd, t->rootfd, rel, oflags, UTIL_FS_RESOLVE_AUTO, &e);
    return rc ? resolve_fail(rc, path, &e, err) : UTIL_OK;
}

void agent_ws_target_release(agent_ws_target *w) {
    if (w->dirfd >= 0) close(w->dirfd);
    w->dirfd = -1;
}

/* cur = "dir/name": its directory part (may be "") and its last name. */
static void split_last(const char *cur, char *dir, size_t dcap, const char **name) {
    const char *sl = strrchr(cur, '/');
    size_t dl = sl ? (size_t)(sl - cur) : 0;
    if (dl >= dcap) dl = dcap - 1;
    memcpy(dir, cur, dl);
    dir[dl] = '\0';
    *name = sl ? sl + 1 : cur;
}

int agent_tools_target(const agent_tools *t, const char *path, agent_ws_target *w, util_err *err) {
    memset(w, 0, sizeof *w);
    w->dirfd = -1;
    char cur[PATH_MAX], dir[PATH_MAX];
    int rc = agent_tools_relative(t, path, cur, sizeof cur, err);
    if (rc) return rc;
    for (int links = 0;; links++) {
        size_t l = strlen(cur);
        const char *name;
        split_last(cur, dir, sizeof dir, &name);
        if (l == 0 || cur[l - 1] == '/' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            return util_err_set(err, UTIL_EINVAL, "path '%s' is a directory, not a file", path);
        if (strlen(name) >= sizeof w->name)
            return util_err_set(err, UTIL_EINVAL, "path '%s': the name is too long", path);
        util_err e;
        rc = util_fs_open_beneath(&w->dirfd, t->rootfd, dir[0] ? dir : ".", O_PATH | O_DIRECTORY,
                                  UTIL_FS_RESOLVE_AUTO, &e);
        if (rc == UTIL_ENOTFOUND)
            return util_err_set(err, rc, "path '%s': directory '%s' does not exist", path, dir);
        if (rc) return resolve_fail(rc, path, &e, err);
        snprintf(w->name, sizeof w->name, "%s", name);
        struct stat st;
        if (fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) {
                rc = util_err_set(err, UTIL_EIO, "path '%s': %s", path, strerror(errno));
                break;
            }
            w->exists = 0;
        } else if (S_ISLNK(st.st_mode)) {
            /* follow the link from its directory, within the workspace */
            char target[PATH_MAX], next[PATH_MAX * 2];
            ssize_t k = readlinkat(w->dirfd, w->name, target, sizeof target - 1);
            agent_ws_target_release(w);
            if (k < 0) return util_err_set(err, UTIL_EIO, "path '%s': %s", path, strerror(errno));
            target[k] = '\0';
            if (links >= UTIL_FS_MAX_LINKS)
                return util_err_set(err, UTIL_EINVAL, "path '%s': too many symbolic links (or a loop)", path);
            if (target[0] == '/')
                return util_err_set(err, UTIL_EINVAL,
                                    "path '%s' is outside the workspace (a symbolic link to '%s'); refused",
                                    path, target);
            snprintf(next, sizeof next, "%s%s%s", dir, dir[0] ? "/" : "", target);
            if (strlen(next) >= sizeof cur)
                return util_err_set(err, UTIL_EINVAL, "path '%s' is too long", path);
            memcpy(cur, next, strlen(next) + 1);
            continue;
        } else if (S_ISREG(st.st_mode)) {
            w->exists = 1;
            w->mode = st.st_mode & 0777;
        } else {
            rc = util_err_set(err, UTIL_EINVAL, "path '%s' is %s, not a file", path,
                              util_fs_kind(st.st_mode));
            break;
        }
        /* where it really is, for the allow list and the protected names */
        char drel[PATH_MAX];
        util_err e2;
        if (util_fs_relpath(drel, sizeof drel, t->rootfd, w->dirfd, &e2) != 0) {
            rc = util_err_set(err, UTIL_EINVAL, "path '%s': its directory is not in the workspace (%s)", path,
                              e2.msg);
            break;
        }
        snprintf(w->rel, sizeof w->rel, "%s%s%s", drel, drel[0] ? "/" : "", w->name);
        return UTIL_OK;
    }
    agent_ws_target_release(w);
    return rc;
}

int agent_tools_write_at(const agent_ws_target *w, const char *data, size_t n, util_err *err) {
    char tmp[NAME_MAX + 1];
    int fd = -1;
    for (int i = 0; i < 32 && fd < 0; i++) {
        unsigned r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = (unsigned)getpid() * 2654435761u + (unsigned)i;
        snprintf(tmp, sizeof tmp, ".%.200s.cachet-%08x", w->name, r);
        fd = openat(w->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", w->rel, strerror(errno));
    if (w->exists) (void)fchmod(fd, w->mode);
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(fd, data + off, n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = errno;
            close(fd);
            unlinkat(w->dirfd, tmp, 0);
            return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", w->rel, strerror(e));
        }
        off += (size_t)k;
    }
    if (close(fd) != 0 || renameat(w->dirfd, tmp, w->dirfd, w->name) != 0) {
        int e = errno;
        unlinkat(w->dirfd, tmp, 0);
        return util_err_set(err, UTIL_EIO, "cannot write '%s': %s", w->rel, strerror(e));
    }
    return UTIL_OK;
}

/* --- protected files ------------------------------------------------------------------ */

static int has_component(const char *path, const char *name) {
    size_t nl = strlen(name);
    for (const char *s = path; *s;) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == nl && strncasecmp(s, name, nl) == 0) return 1;
        s += l;
        while (*s == '/') s++;
    }
    return 0;
}

const char *agent_tools_protected(const agent_tools *t, const char *rel) {
    int git = has_component(rel, ".git") || has_component(t->root, ".git");
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (git && (has_component(rel, "hooks") || has_component(t->root, "hooks")))
        return "a git hook: git runs it as a program";
    if (git && strcasecmp(base, "config") == 0)
        return "git's configuration: git runs the commands it names (core.fsmonitor, core.sshCommand, hooks, "
               "aliases, credential helpers)";
    if (git) return "inside a .git directory: git runs commands its files name (config, hooks)";
    if (has_component(rel, ".cachet") && strcasecmp(base, "config.json") == 0)
        return "cachet's configuration: its allow list lets tools run without asking";
    if (has_component(rel, ".cachet") || has_component(t->root, ".cachet"))
        return "cachet's own directory: its configuration grants tools permissions and its skills go into the "
               "prompt";
    return NULL;
}

/* --- confirmation -------------------------------------------------------------------- */

int agent_tools_allowed(const agent_tools *t, const char *tool, const char *arg) {
    if (t->yes) return 1;
    char full[8192];
    snprintf(full, sizeof full, "%s:%s", tool, arg ? arg : "");
    for (size_t i = 0; i < t->n_allow; i++) {
        const char *a = t->allow[i];
        if (strcmp(a, tool) == 0) return 1;
        if (strchr(a, ':') && fnmatch(a, full, 0) == 0) return 1;
    }
    return 0;
}

int agent_tools_check_confirm(agent_tools *t, const char *tool, const char *arg, util_err *err) {
    if (agent_tools_allowed(t, tool, arg)) return UTIL_OK;
    if (t->confirm) {
        if (t->confirm(t->confirm_user, tool, arg)) return UTIL_OK;
        return util_err_set(err, UTIL_ECANCELED, "%s: the user declined", tool);
    }
    return util_err_set(err, UTIL_ECANCELED,
                        "%s needs confirmation and there is no terminal to ask: refused "
                        "(run with --yes, or allow it in .cachet/config.json)",
                        tool);
}

int agent_tools_check_write(agent_tools *t, const char *tool, const agent_ws_target *w, util_err *err) {
    const char *why = agent_tools_protected(t, w->rel);
    if (!why) return agent_tools_check_confirm(t, tool, w->rel, err);
    char what[4096 + 512];
    snprintf(what, sizeof what, "'%s' (protected: %s; asked every time, --yes and allow rules do not apply)",
             w->rel, why);
    if (t->confirm) {
        if (t->confirm(t->confirm_user, tool, what)) return UTIL_OK;
        return util_err_set(err, UTIL_ECANCELED, "%s: the user declined to write '%s'", tool, w->rel);
    }
    return util_err_set(
        err, UTIL_ECANCELED,
        "%s: '%s' is protected (%s): it is written only after a yes on the terminal, never with "
        "--yes or an allow rule; refused",
        tool, w->rel, why);
}

/* --- arguments ----------------------------------------------------------------------- */

int agent_tool_arg_str(const cJSON *a, const char *tool, const char *key, int required, const char **out,
                       util_err *err) {
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
    if (!v || cJSON_IsNull(v)) {
        if (required) return util_err_set(err, UTIL_EINVAL, "%s: missing argument '%s'", tool, key);
        return UTIL_OK;
    }
    if (!cJSON_IsString(v))
        return util_err_set(err, UTIL_EINVAL, "%s: argument '%s' must be a string", tool, key);
    *out = v->valuestring;
    return UTIL_OK;
}
