/* linter/lint_config.c: .promptlint.json (cJSON): rule selection, per-glob
 * roles, extra volatile patterns and placeholder names, boundary markers,
 * prompt globs and excludes; the built-in defaults; glob matching and the
 * role of a file by its name. Does not search directories (lint_ctx.c). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "lint_config.h"
#include "lint_registry.h"

/* --- defaults ------------------------------------------------------------------ */

static const char *const k_default_markers[] = {"<!-- cache-boundary -->",
                                                "<!-- OPENCLAW_CACHE_BOUNDARY -->",
                                                "{# cache-boundary #}"};
static const char *const k_default_globs[] = {
    "**/prompts/**", "**/skills/**/*.md", "**/*.prompt", "**/*.prompt.md", "**/*.prompt.txt",
    "**/*.prompt.j2", "**/*.prompty"};
static const char *const k_default_exclude[] = {"**/node_modules/**", "**/.git/**"};

static const struct {
    const char *name;
    int role;
} k_name_roles[] = {
    {"AGENTS.md", LINT_ROLE_STABLE},   {"SOUL.md", LINT_ROLE_STABLE},
    {"IDENTITY.md", LINT_ROLE_STABLE}, {"CLAUDE.md", LINT_ROLE_STABLE},
    {"GEMINI.md", LINT_ROLE_STABLE},   {"SKILL.md", LINT_ROLE_SKILL},
    {"USER.md", LINT_ROLE_USER},       {"TOOLS.md", LINT_ROLE_PROMPT},
    {"MEMORY.md", LINT_ROLE_PROMPT},   {"HEARTBEAT.md", LINT_ROLE_PROMPT},
    {"BOOTSTRAP.md", LINT_ROLE_PROMPT},
};

static const char *const k_role_names[LINT_ROLE_COUNT] = {"prompt", "stable", "skill",
                                                          "user",   "dynamic", "ignore"};

int lint_role_parse(const char *s) {
    for (int i = 0; i < LINT_ROLE_COUNT; i++)
        if (strcasecmp(s, k_role_names[i]) == 0) return i;
    return UTIL_ENOTFOUND;
}

const char *lint_role_name(int role) {
    return role >= 0 && role < LINT_ROLE_COUNT ? k_role_names[role] : "?";
}

static int vclass_parse(const char *s) {
    static const struct {
        const char *n;
        int vc;
    } k[] = {{"stable", LINT_VC_NONE},   {"none", LINT_VC_NONE},     {"per-user", LINT_VC_USER},
             {"user", LINT_VC_USER},     {"per-day", LINT_VC_DAY},   {"day", LINT_VC_DAY},
             {"per-session", LINT_VC_SESSION}, {"session", LINT_VC_SESSION},
             {"per-turn", LINT_VC_TURN}, {"turn", LINT_VC_TURN},     {"per-call", LINT_VC_CALL},
             {"call", LINT_VC_CALL}};
    char b[32];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof b; i++) b[i] = s[i] == '_' ? '-' : s[i];
    b[i] = '\0';
    for (size_t k2 = 0; k2 < sizeof k / sizeof k[0]; k2++)
        if (strcasecmp(b, k[k2].n) == 0) return k[k2].vc;
    return UTIL_ENOTFOUND;
}

/* --- lifecycle ----------------------------------------------------------------- */

static int push_str(char ***v, size_t *n, const char *s) {
    char **p = realloc(*v, (*n + 1) * sizeof *p);
    if (!p) return UTIL_ENOMEM;
    *v = p;
    if (!(p[*n] = strdup(s))) return UTIL_ENOMEM;
    (*n)++;
    return UTIL_OK;
}

void lint_config_free(lint_config *c) {
    if (!c) return;
    free(c->path);
    free(c->dir);
    for (size_t i = 0; i < c->n_roles; i++) free(c->roles[i].glob);
    free(c->roles);
    for (size_t i = 0; i < c->n_patterns; i++) {
        free(c->patterns[i].name);
        pcre2_code_free(c->patterns[i].re);
    }
    free(c->patterns);
    for (size_t i = 0; i < c->n_names; i++) free(c->names[i].name);
    free(c->names);
    for (size_t i = 0; i < c->n_markers; i++) free(c->markers[i]);
    free(c->markers);
    for (size_t i = 0; i < c->n_prompt_globs; i++) free(c->prompt_globs[i]);
    free(c->prompt_globs);
    for (size_t i = 0; i < c->n_exclude; i++) free(c->exclude[i]);
    free(c->exclude);
    free(c);
}

int lint_config_defaults(lint_config **out, util_err *err) {
    lint_config *c = calloc(1, sizeof *c);
    int rc = c ? UTIL_OK : UTIL_ENOMEM;
    if (!rc) {
        c->dir = strdup("");
        c->select = (1u << LINT_R_COUNT) - 1;
        if (!c->dir) rc = UTIL_ENOMEM;
    }
    for (size_t i = 0; !rc && i < sizeof k_default_markers / sizeof *k_default_markers; i++)
        rc = push_str(&c->markers, &c->n_markers, k_default_markers[i]);
    for (size_t i = 0; !rc && i < sizeof k_default_globs / sizeof *k_default_globs; i++)
        rc = push_str(&c->prompt_globs, &c->n_prompt_globs, k_default_globs[i]);
    for (size_t i = 0; !rc && i < sizeof k_default_exclude / sizeof *k_default_exclude; i++)
        rc = push_str(&c->exclude, &c->n_exclude, k_default_exclude[i]);
    if (rc) {
        lint_config_free(c);
        *out = NULL;
        return util_err_set(err, rc, "out of memory");
    }
    *out = c;
    return UTIL_OK;
}

/* --- parsing --------------------------------------------------------------------- */

/* A string or an array of strings, each passed to fn. */
static int each_string(const cJSON *v, const char *path, const char *key,
                       int (*fn)(lint_config *, const char *, util_err *), lint_config *c,
                       util_err *err) {
    if (cJSON_IsString(v)) return fn(c, v->valuestring, err);
    if (!cJSON_IsArray(v))
        return util_err_set(err, UTIL_EFORMAT, "config '%s': '%s' must be a string or an array "
                            "of strings", path, key);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it))
            return util_err_set(err, UTIL_EFORMAT, "config '%s': '%s' must hold only strings",
                                path, key);
        int rc = fn(c, it->valuestring, err);
        if (rc) return rc;
    }
    return UTIL_OK;
}

static int add_select(lint_config *c, const char *s, util_err *err) {
    unsigned m;
    int rc = lint_rule_parse_list(&m, s, err);
    if (!rc) c->select |= m;
    return rc;
}
static int add_ignore(lint_config *c, const char *s, util_err *err) {
    unsigned m;
    int rc = lint_rule_parse_list(&m, s, err);
    if (!rc) c->ignore |= m;
    return rc;
}
static int add_marker(lint_config *c, const char *s, util_err *err) {
    if (!*s) return util_err_set(err, UTIL_EINVAL, "empty boundary marker");
    return push_str(&c->markers, &c->n_markers, s);
}
static int add_glob(lint_config *c, const char *s, util_err *err) {
    (void)err;
    return push_str(&c->prompt_globs, &c->n_prompt_globs, s);
}
static int add_exclude(lint_config *c, const char *s, util_err *err) {
    (void)err;
    return push_str(&c->exclude, &c->n_exclude, s);
}

static int parse_roles(lint_config *c, const cJSON *v, const char *path, util_err *err) {
    if (!cJSON_IsObject(v))
        return util_err_set(err, UTIL_EFORMAT, "config '%s': 'roles' must be an object of "
                            "glob: role", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int role = cJSON_IsString(it) ? lint_role_parse(it->valuestring) : UTIL_ENOTFOUND;
        if (role < 0)
            return util_err_set(err, UTIL_EFORMAT, "config '%s': role of '%s' must be one of "
                                "prompt, stable, skill, user, dynamic, ignore", path, it->string);
        lint_glob_role *p = realloc(c->roles, (c->n_roles + 1) * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        c->roles = p;
        if (!(p[c->n_roles].glob = strdup(it->string))) return UTIL_ENOMEM;
        p[c->n_roles++].role = role;
    }
    return UTIL_OK;
}

static int parse_names(lint_config *c, const cJSON *v, const char *path, util_err *err) {
    if (!cJSON_IsObject(v))
        return util_err_set(err, UTIL_EFORMAT, "config '%s': 'placeholders' must be an object "
                            "of name: change class", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int vc = cJSON_IsString(it) ? vclass_parse(it->valuestring) : UTIL_ENOTFOUND;
        if (vc < 0)
            return util_err_set(err, UTIL_EFORMAT, "config '%s': placeholder '%s' must be one "
                                "of stable, per-user, per-day, per-session, per-turn, per-call",
                                path, it->string);
        lint_name_class *p = realloc(c->names, (c->n_names + 1) * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        c->names = p;
        char *n = strdup(it->string);
        if (!n) return UTIL_ENOMEM;
        for (char *q = n; *q; q++) *q = *q == '.' || *q == '-' ? '_' : (char)tolower(*q);
        p[c->n_names].name = n;
        p[c->n_names++].vclass = vc;
    }
    return UTIL_OK;
}

static int parse_patterns(lint_config *c, const cJSON *v, const char *path, util_err *err) {
    if (!cJSON_IsArray(v))
        return util_err_set(err, UTIL_EFORMAT, "config '%s': 'volatile_patterns' must be an "
                            "array of objects", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        const cJSON *re = cJSON_GetObjectItemCaseSensitive(it, "pattern");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(it, "changes");
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(it, "subday");
        if (!cJSON_IsString(re))
            return util_err_set(err, UTIL_EFORMAT, "config '%s': each volatile pattern needs a "
                                "string 'pattern'", path);
        int vc = LINT_VC_TURN;
        if (ch && (!cJSON_IsString(ch) || (vc = vclass_parse(ch->valuestring)) <= 0))
            return util_err_set(err, UTIL_EFORMAT, "config '%s': pattern '%s': 'changes' must "
                                "be per-user, per-day, per-session, per-turn or per-call", path,
                                re->valuestring);
        int ec;
        PCRE2_SIZE off;
        pcre2_code *code = pcre2_compile((PCRE2_SPTR)re->valuestring, PCRE2_ZERO_TERMINATED,
                                         PCRE2_MULTILINE, &ec, &off, NULL);
        if (!code) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(ec, msg, sizeof msg);
            return util_err_set(err, UTIL_EFORMAT, "config '%s': pattern '%s': %s at offset %zu",
                                path, re->valuestring, (const char *)msg, (size_t)off);
        }
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        lint_custom_pattern *p = realloc(c->patterns, (c->n_patterns + 1) * sizeof *p);
        if (!p) {
            pcre2_code_free(code);
            return UTIL_ENOMEM;
        }
        c->patterns = p;
        p[c->n_patterns].re = code;
        p[c->n_patterns].vclass = vc;
        p[c->n_patterns].subday = cJSON_IsTrue(sd);
        p[c->n_patterns].name = strdup(cJSON_IsString(nm) ? nm->valuestring : re->valuestring);
        if (!p[c->n_patterns++].name) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

static int parse_obj(lint_config *c, const cJSON *root, const char *path, util_err *err) {
    const cJSON *it;
    int sel_given = 0;
    cJSON_ArrayForEach(it, root) {
        const char *k = it->string;
        int rc;
        if (!strcmp(k, "select")) {
            if (!sel_given) c->select = 0;
            sel_given = 1;
            rc = each_string(it, path, k, add_select, c, err);
        } else if (!strcmp(k, "ignore")) {
            rc = each_string(it, path, k, add_ignore, c, err);
        } else if (!strcmp(k, "boundary_marker") || !strcmp(k, "boundary_markers")) {
            rc = each_string(it, path, k, add_marker, c, err);
        } else if (!strcmp(k, "prompt_globs")) {
            rc = each_string(it, path, k, add_glob, c, err);
        } else if (!strcmp(k, "exclude")) {
            rc = each_string(it, path, k, add_exclude, c, err);
        } else if (!strcmp(k, "roles")) {
            rc = parse_roles(c, it, path, err);
        } else if (!strcmp(k, "placeholders")) {
            rc = parse_names(c, it, path, err);
        } else if (!strcmp(k, "volatile_patterns")) {
            rc = parse_patterns(c, it, path, err);
        } else if (k[0] == '$' || !strcmp(k, "comment")) {
            rc = UTIL_OK; /* "$schema", comments */
        } else {
            return util_err_set(err, UTIL_EFORMAT, "config '%s': unknown key '%s'", path, k);
        }
        if (rc == UTIL_ENOMEM) return util_err_set(err, rc, "out of memory");
        if (rc) {
            if (rc == UTIL_EINVAL) util_err_wrap(err, "config '%s'", path);
            return rc;
        }
    }
    return UTIL_OK;
}

int lint_config_parse(lint_config **out, const char *json, size_t len, const char *path,
                      const char *dir, util_err *err) {
    *out = NULL;
    lint_config *c;
    int rc = lint_config_defaults(&c, err);
    if (rc) return rc;
    free(c->dir);
    c->dir = strdup(dir);
    c->path = strdup(path);
    if (!c->dir || !c->path) {
        lint_config_free(c);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        size_t at = root ? 0 : (end && end >= json ? (size_t)(end - json) : 0);
        cJSON_Delete(root);
        lint_config_free(c);
        return util_err_set(err, UTIL_EFORMAT, "config '%s': not a JSON object (error near byte "
                            "%zu)", path, at);
    }
    rc = parse_obj(c, root, path, err);
    cJSON_Delete(root);
    if (rc) {
        lint_config_free(c);
        return rc;
    }
    *out = c;
    return UTIL_OK;
}

int lint_config_load(lint_config **out, const char *path, util_err *err) {
    char *data;
    size_t len;
    *out = NULL;
    int rc = util_read_file(&data, &len, path, err);
    if (rc) return rc;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else snprintf(dir, sizeof dir, ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    rc = lint_config_parse(out, data, len, path, dir, err);
    free(data);
    return rc;
}

unsigned lint_config_enabled(const lint_config *c) {
    return c->select & ~c->ignore & ((1u << LINT_R_COUNT) - 1);
}

/* --- globs and roles ------------------------------------------------------------- */

static int class_match(const char **pp, char c) {
    const char *p = *pp + 1;
    int neg = (*p == '!' || *p == '^');
    if (neg) p++;
    int hit = 0;
    const char *start = p;
    while (*p && (*p != ']' || p == start)) {
        if (p[1] == '-' && p[2] && p[2] != ']') {
            if (c >= p[0] && c <= p[2]) hit = 1;
            p += 3;
        } else {
            if (c == *p) hit = 1;
            p++;
        }
    }
    if (*p != ']') return -1; /* unterminated: treat '[' literally */
    *pp = p + 1;
    return hit != neg;
}

static int glob_rec(const char *p, const char *s, int depth) {
    if (depth > 64) return 0;
    while (*p) {
        if (p[0] == '*' && p[1] == '*') {
            const char *rest = p + 2;
            if (*rest == '/') rest++;
            else if (!*rest) return 1;
            for (const char *q = s;; q++) {
                if ((q == s || q[-1] == '/') && glob_rec(rest, q, depth + 1)) return 1;
                if (!*q) return 0;
            }
        }
        if (*p == '*') {
            p++;
            for (const char *q = s;; q++) {
                if (glob_rec(p, q, depth + 1)) return 1;
                if (!*q || *q == '/') return 0;
            }
        }
        if (!*s) return 0;
        if (*p == '?') {
            if (*s == '/') return 0;
            p++, s++;
            continue;
        }
        if (*p == '[') {
            const char *q = p;
            int m = class_match(&q, *s);
            if (m >= 0) {
                if (!m || *s == '/') return 0;
                p = q, s++;
                continue;
            }
        }
        if (*p != *s) return 0;
        p++, s++;
    }
    return !*s;
}

int lint_glob_match(const char *pat, const char *path) {
    while (path[0] == '.' && path[1] == '/') path += 2;
    if (*pat == '/') return glob_rec(pat + 1, path, 0);
    if (!strchr(pat, '/')) {
        const char *b = strrchr(path, '/');
        return glob_rec(pat, b ? b + 1 : path, 0);
    }
    return glob_rec(pat, path, 0);
}

int lint_config_role(const lint_config *c, const char *rel) {
    for (size_t i = c->n_roles; i-- > 0;) /* later entries win */
        if (lint_glob_match(c->roles[i].glob, rel)) return c->roles[i].role;
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    for (size_t i = 0; i < sizeof k_name_roles / sizeof *k_name_roles; i++)
        if (strcmp(b, k_name_roles[i].name) == 0) return k_name_roles[i].role;
    return LINT_ROLE_PROMPT;
}

int lint_config_excluded(const lint_config *c, const char *rel) {
    for (size_t i = 0; i < c->n_exclude; i++)
        if (lint_glob_match(c->exclude[i], rel)) return 1;
    return 0;
}

int lint_config_is_prompt(const lint_config *c, const char *rel) {
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    for (size_t i = 0; i < sizeof k_name_roles / sizeof *k_name_roles; i++)
        if (strcmp(b, k_name_roles[i].name) == 0) return 1;
    for (size_t i = 0; i < c->n_roles; i++)
        if (lint_glob_match(c->roles[i].glob, rel)) return c->roles[i].role != LINT_ROLE_IGNORE;
    static const char *const k_ext[] = {".md", ".txt", ".prompt", ".j2", ".jinja", ".jinja2",
                                        ".mustache", ".tmpl", ".prompty", NULL};
    size_t bl = strlen(b);
    int ext_ok = 0;
    for (const char *const *e = k_ext; *e; e++) {
        size_t el = strlen(*e);
        if (bl > el && strcasecmp(b + bl - el, *e) == 0) ext_ok = 1;
    }
    if (!ext_ok) return 0;
    for (size_t i = 0; i < c->n_prompt_globs; i++)
        if (lint_glob_match(c->prompt_globs[i], rel)) return 1;
    return 0;
}
