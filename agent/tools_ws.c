/* agent/tools_ws.c: the tools' workspace: confinement (realpath + prefix
 * check, so '..', absolute paths and symlinks cannot leave the workspace),
 * the allow list in .cachet/config.json, the confirmation policy (--yes, the
 * allow list, else ask on a TTY, else refuse) and argument helpers. Runs no
 * tool itself (tools.c, tools_fs.c, tools_git.c, tools_shell.c). */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int load_config(agent_tools *t, util_err *err) {
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/.cachet/config.json", t->root);
    struct stat st;
    if (stat(p, &st) != 0) return UTIL_OK;
    char *text = NULL;
    int rc = util_read_file(&text, NULL, p, err);
    if (rc) return rc;
    cJSON *c = cJSON_Parse(text);
    free(text);
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
        cJSON *e = cJSON_GetArrayItem(allow, i);
        if (!cJSON_IsString(e)) {
            rc = util_err_set(err, UTIL_EFORMAT, "'%s': \"allow\" must be an array of strings", p);
            break;
        }
        if (!(t->allow[t->n_allow] = strdup(e->valuestring))) rc = UTIL_ENOMEM;
        else t->n_allow++;
    }
    if (!rc) rc = load_secret_env(t, c, p, err);
    cJSON_Delete(c);
    return rc;
}

int agent_tools_init(agent_tools *t, const char *workspace, util_err *err) {
    memset(t, 0, sizeof *t);
    t->max_output = AGENT_TOOL_OUTPUT_LIMIT;
    t->shell_timeout_s = 30;
    char real[PATH_MAX];
    if (!realpath(workspace, real))
        return util_err_set(err, UTIL_ENOTFOUND, "workspace '%s': %s", workspace, strerror(errno));
    t->root = strdup(real);
    if (!t->root) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    int rc = load_config(t, err);
    if (rc) agent_tools_release(t);
    return rc;
}

void agent_tools_release(agent_tools *t) {
    for (size_t i = 0; i < t->n_allow; i++) free(t->allow[i]);
    free(t->allow);
    for (size_t i = 0; i < t->n_secret_env; i++) free(t->secret_env[i]);
    free(t->secret_env);
    free(t->root);
    memset(t, 0, sizeof *t);
}

/* --- confinement --------------------------------------------------------------------- */

static int inside(const char *root, const char *p) {
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0) return 1;
    return strncmp(p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

int agent_tools_resolve(const agent_tools *t, const char *rel, int for_write, char *out,
                        size_t cap, util_err *err) {
    if (!rel || !*rel) rel = ".";
    /* '..' is refused outright, even when it would stay inside: it is never needed */
    for (const char *s = rel; *s;) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l == 2 && s[0] == '.' && s[1] == '.')
            return util_err_set(err, UTIL_EINVAL, "path '%s': '..' is not allowed", rel);
        s += l;
        while (*s == '/') s++;
    }
    char joined[PATH_MAX * 2];
    if (rel[0] == '/') snprintf(joined, sizeof joined, "%s", rel);
    else snprintf(joined, sizeof joined, "%s/%s", t->root, rel);
    char real[PATH_MAX];
    if (realpath(joined, real)) {
        if (!inside(t->root, real))
            return util_err_set(err, UTIL_EINVAL, "path '%s' is outside the workspace", rel);
        snprintf(out, cap, "%s", real);
        return UTIL_OK;
    }
    if (errno != ENOENT || !for_write)
        return util_err_set(err, UTIL_ENOTFOUND, "path '%s': %s", rel, strerror(errno));
    /* a new file: its parent must exist inside the workspace, and the name
     * must not be a dangling symlink */
    char *slash = strrchr(joined, '/');
    if (!slash || !slash[1]) return util_err_set(err, UTIL_EINVAL, "path '%s': not a file name", rel);
    *slash = '\0';
    struct stat lst;
    char leaf[PATH_MAX * 2];
    snprintf(leaf, sizeof leaf, "%s/%s", joined, slash + 1);
    if (lstat(leaf, &lst) == 0)
        return util_err_set(err, UTIL_EINVAL, "path '%s' is a dangling symlink", rel);
    if (!realpath(joined, real))
        return util_err_set(err, UTIL_ENOTFOUND, "path '%s': directory does not exist", rel);
    if (!inside(t->root, real))
        return util_err_set(err, UTIL_EINVAL, "path '%s' is outside the workspace", rel);
    snprintf(out, cap, "%s/%s", real, slash + 1);
    return UTIL_OK;
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

/* --- arguments ----------------------------------------------------------------------- */

int agent_tool_arg_str(const cJSON *a, const char *tool, const char *key, int required,
                       const char **out, util_err *err) {
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, key);
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return util_err_set(err, UTIL_EINVAL, "%s: missing argument '%s'", tool, key);
        return UTIL_OK;
    }
    if (!cJSON_IsString(v))
        return util_err_set(err, UTIL_EINVAL, "%s: argument '%s' must be a string", tool, key);
    *out = v->valuestring;
    return UTIL_OK;
}
