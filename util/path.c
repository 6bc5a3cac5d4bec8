/* util/path.c: the executable's directory and the model and data search
 * orders (see path.h). Stats and realpath only; never opens a model. */
#include "path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CACHET_DATADIR
#define CACHET_DATADIR "/usr/local/share/cachet"
#endif

int util_exe_path(char *out, size_t cap, util_err *err) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= cap) {
        if (cap) out[0] = '\0';
        return util_err_set(err, UTIL_ENOTFOUND, "the executable's path is unknown (/proc/self/exe)");
    }
    exe[n] = '\0';
    snprintf(out, cap, "%s", exe);
    return UTIL_OK;
}

int util_exe_dir(char *out, size_t cap, util_err *err) {
    int rc = util_exe_path(out, cap, err);
    if (rc) return rc;
    char *slash = strrchr(out, '/');
    if (!slash) return util_err_set(err, UTIL_ENOTFOUND, "the executable's path '%s' is not absolute", out);
    if (slash == out)
        slash[1] = '\0'; /* in / itself */
    else
        *slash = '\0';
    return UTIL_OK;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_prompts(const char *dir) {
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/prompts", dir);
    return is_dir(p);
}

/* The directory above the executable's (the install prefix, or a source
 * tree's root), canonical. 0 when unknown. */
static int exe_parent(char *out, size_t cap) {
    char dir[PATH_MAX], up[PATH_MAX + 4];
    if (util_exe_dir(dir, sizeof dir, NULL)) return 0;
    snprintf(up, sizeof up, "%s/..", dir);
    char real[PATH_MAX];
    if (!realpath(up, real)) return 0;
    snprintf(out, cap, "%s", real);
    return 1;
}

/* The source tree the executable was built in: <exe>/.. when it holds
 * prompts/, else <exe>/../../.. (build/san/bin and the like) when that does.
 * Falls back to <exe>/.. when neither does (then it is only a place searched).
 * Returns 1 if it holds prompts/, 0 if not, -1 if the executable is unknown. */
static int source_tree(char *out, size_t cap) {
    char parent[PATH_MAX];
    if (!exe_parent(parent, sizeof parent)) return -1;
    snprintf(out, cap, "%s", parent);
    if (has_prompts(parent)) return 1;
    char up[PATH_MAX + 8], real[PATH_MAX];
    snprintf(up, sizeof up, "%s/../..", parent);
    if (realpath(up, real) && has_prompts(real)) {
        snprintf(out, cap, "%s", real);
        return 1;
    }
    return 0;
}

/* A list of the places searched, for the not-found message. */
typedef struct searched {
    char text[768];
    size_t len;
} searched;

static void searched_add(searched *s, const char *place) {
    if (s->len >= sizeof s->text) return;
    int n = snprintf(s->text + s->len, sizeof s->text - s->len, "%s'%s'", s->len ? ", " : "", place);
    if (n > 0) s->len += (size_t)n;
}

/* A given or environment path: used when it exists. */
static int take_given(char *out, size_t cap, const char *path, const char *what, util_err *err) {
    snprintf(out, cap, "%s", path);
    if (access(path, F_OK) == 0) return UTIL_OK;
    return util_err_set(err, UTIL_ENOTFOUND, "model file '%s'%s not found", path, what);
}

int util_model_find(char *out, size_t cap, const char *given, util_err *err) {
    if (given && *given) return take_given(out, cap, given, "", err);
    const char *env = getenv("CACHET_MODEL");
    if (env && *env) return take_given(out, cap, env, " ($CACHET_MODEL)", err);
    char cand[5][PATH_MAX + 128];
    size_t nc = 0;
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(cand[nc++], sizeof cand[0], "%s/cachet/models/%s", xdg, UTIL_DEFAULT_MODEL);
    else if (home && *home)
        snprintf(cand[nc++], sizeof cand[0], "%s/.local/share/cachet/models/%s", home, UTIL_DEFAULT_MODEL);
    char dir[PATH_MAX];
    if (exe_parent(dir, sizeof dir))
        snprintf(cand[nc++], sizeof cand[0], "%s/share/cachet/models/%s", dir, UTIL_DEFAULT_MODEL);
    snprintf(cand[nc++], sizeof cand[0], "models/%s", UTIL_DEFAULT_MODEL);
    if (source_tree(dir, sizeof dir) >= 0)
        snprintf(cand[nc++], sizeof cand[0], "%s/models/%s", dir, UTIL_DEFAULT_MODEL);
    searched s = {.len = 0};
    for (size_t i = 0; i < nc; i++) {
        if (access(cand[i], R_OK) == 0) {
            snprintf(out, cap, "%s", cand[i]);
            return UTIL_OK;
        }
        searched_add(&s, cand[i]);
    }
    if (cap) out[0] = '\0';
    return util_err_set(err, UTIL_ENOTFOUND,
                        "no model file: none given, $CACHET_MODEL is not set and the default model is in "
                        "none of %s",
                        s.text);
}

const char *util_model_id(char *out, size_t cap, const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t l = strlen(base);
    if (l > 5 && strcmp(base + l - 5, ".gguf") == 0) l -= 5;
    snprintf(out, cap, "%.*s", (int)l, base);
    return out;
}

int util_data_dir_find(char *out, size_t cap, const char *given, util_err *err) {
    if (given && *given) {
        snprintf(out, cap, "%s", given);
        if (has_prompts(out)) return UTIL_OK;
        return util_err_set(err, UTIL_ENOTFOUND, "data directory '%s' has no prompts/", given);
    }
    const char *env = getenv("CACHET_DATA");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        if (has_prompts(out)) return UTIL_OK;
        return util_err_set(err, UTIL_ENOTFOUND, "CACHET_DATA '%s' has no prompts/", env);
    }
    char cand[3][PATH_MAX + 32];
    size_t nc = 0;
    char dir[PATH_MAX];
    if (source_tree(dir, sizeof dir) >= 0) snprintf(cand[nc++], sizeof cand[0], "%s", dir);
    if (exe_parent(dir, sizeof dir)) snprintf(cand[nc++], sizeof cand[0], "%s/share/cachet", dir);
    snprintf(cand[nc++], sizeof cand[0], "%s", CACHET_DATADIR);
    searched s = {.len = 0};
    for (size_t i = 0; i < nc; i++) {
        if (has_prompts(cand[i])) {
            snprintf(out, cap, "%s", cand[i]);
            return UTIL_OK;
        }
        searched_add(&s, cand[i]);
    }
    if (cap) out[0] = '\0';
    return util_err_set(err, UTIL_ENOTFOUND,
                        "no data directory (one holding prompts/): none given, $CACHET_DATA is not set and "
                        "none of %s holds prompts/",
                        s.text);
}
