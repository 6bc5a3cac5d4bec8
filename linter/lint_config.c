/* linter/lint_config.c: .promptlint.json (cJSON): rule selection, per-glob
 * roles, extra volatile patterns and placeholder names, boundary markers,
 * prompt globs and excludes; the built-in defaults; glob matching, the
 * role of a file by its name, and whether a walked file is a prompt by its
 * name or content (prose, templates, and YAML/JSON/TOML prompt keys' text).
 * Does not search directories (lint_ctx.c). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "lint_config.h"
#include "lint_registry.h"

/* --- defaults ------------------------------------------------------------------ */

static const char *const k_default_markers[] = {"<!-- cache-boundary -->", "<!-- OPENCLAW_CACHE_BOUNDARY -->",
                                                "{# cache-boundary #}"};
static const char *const k_default_globs[] = {"**/prompts/**",  "**/skills/**/*.md", "**/*.prompt",
                                              "**/*.prompt.md", "**/*.prompt.txt",   "**/*.prompt.j2",
                                              "**/*.prompty"};
static const char *const k_default_exclude[] = {"**/node_modules/**", "**/.git/**"};

static const struct {
    const char *name;
    int role;
} k_name_roles[] = {
    {"AGENTS.md", LINT_ROLE_STABLE},    {"SOUL.md", LINT_ROLE_STABLE},      {"IDENTITY.md", LINT_ROLE_STABLE},
    {"CLAUDE.md", LINT_ROLE_STABLE},    {"GEMINI.md", LINT_ROLE_STABLE},    {"SKILL.md", LINT_ROLE_SKILL},
    {"USER.md", LINT_ROLE_USER},        {"TOOLS.md", LINT_ROLE_PROMPT},     {"MEMORY.md", LINT_ROLE_PROMPT},
    {"HEARTBEAT.md", LINT_ROLE_PROMPT}, {"BOOTSTRAP.md", LINT_ROLE_PROMPT},
};

static const char *const k_role_names[LINT_ROLE_COUNT] = {"prompt", "stable",  "skill",
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
    } k[] = {{"stable", LINT_VC_NONE},         {"none", LINT_VC_NONE},       {"per-user", LINT_VC_USER},
             {"user", LINT_VC_USER},           {"per-day", LINT_VC_DAY},     {"day", LINT_VC_DAY},
             {"per-session", LINT_VC_SESSION}, {"session", LINT_VC_SESSION}, {"per-turn", LINT_VC_TURN},
             {"turn", LINT_VC_TURN},           {"per-call", LINT_VC_CALL},   {"call", LINT_VC_CALL}};
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
        c->content_detection = 1;
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
                       int (*fn)(lint_config *, const char *, util_err *), lint_config *c, util_err *err) {
    if (cJSON_IsString(v)) return fn(c, v->valuestring, err);
    if (!cJSON_IsArray(v))
        return util_err_set(err, UTIL_EFORMAT,
                            "config '%s': '%s' must be a string or an array "
                            "of strings",
                            path, key);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it))
            return util_err_set(err, UTIL_EFORMAT, "config '%s': '%s' must hold only strings", path, key);
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
        return util_err_set(err, UTIL_EFORMAT,
                            "config '%s': 'roles' must be an object of "
                            "glob: role",
                            path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int role = cJSON_IsString(it) ? lint_role_parse(it->valuestring) : UTIL_ENOTFOUND;
        if (role < 0)
            return util_err_set(err, UTIL_EFORMAT,
                                "config '%s': role of '%s' must be one of "
                                "prompt, stable, skill, user, dynamic, ignore",
                                path, it->string);
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
        return util_err_set(err, UTIL_EFORMAT,
                            "config '%s': 'placeholders' must be an object "
                            "of name: change class",
                            path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        int vc = cJSON_IsString(it) ? vclass_parse(it->valuestring) : UTIL_ENOTFOUND;
        if (vc < 0)
            return util_err_set(err, UTIL_EFORMAT,
                                "config '%s': placeholder '%s' must be one "
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
        return util_err_set(err, UTIL_EFORMAT,
                            "config '%s': 'volatile_patterns' must be an "
                            "array of objects",
                            path);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        const cJSON *re = cJSON_GetObjectItemCaseSensitive(it, "pattern");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(it, "changes");
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(it, "subday");
        if (!cJSON_IsString(re))
            return util_err_set(err, UTIL_EFORMAT,
                                "config '%s': each volatile pattern needs a "
                                "string 'pattern'",
                                path);
        int vc = LINT_VC_TURN;
        if (ch && (!cJSON_IsString(ch) || (vc = vclass_parse(ch->valuestring)) <= 0))
            return util_err_set(err, UTIL_EFORMAT,
                                "config '%s': pattern '%s': 'changes' must "
                                "be per-user, per-day, per-session, per-turn or per-call",
                                path, re->valuestring);
        int ec;
        PCRE2_SIZE off;
        pcre2_code *code = pcre2_compile((PCRE2_SPTR)re->valuestring, PCRE2_ZERO_TERMINATED, PCRE2_MULTILINE,
                                         &ec, &off, NULL);
        if (!code) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(ec, msg, sizeof msg);
            return util_err_set(err, UTIL_EFORMAT, "config '%s': pattern '%s': %s at offset %zu", path,
                                re->valuestring, (const char *)msg, (size_t)off);
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
        } else if (!strcmp(k, "max_file_size")) {
            size_t v = 0;
            if (cJSON_IsNumber(it) && it->valuedouble >= 1)
                v = (size_t)it->valuedouble;
            else if (cJSON_IsString(it))
                lint_parse_size(&v, it->valuestring);
            if (!v)
                return util_err_set(err, UTIL_EFORMAT,
                                    "config '%s': 'max_file_size' must be a "
                                    "positive number of bytes or a string such as \"16M\"",
                                    path);
            c->max_file_size = v;
            rc = UTIL_OK;
        } else if (!strcmp(k, "detect_by_content")) {
            if (!cJSON_IsBool(it))
                return util_err_set(err, UTIL_EFORMAT,
                                    "config '%s': 'detect_by_content' must be "
                                    "true or false",
                                    path);
            c->content_detection = cJSON_IsTrue(it);
            rc = UTIL_OK;
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

int lint_config_parse(lint_config **out, const char *json, size_t len, const char *path, const char *dir,
                      util_err *err) {
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
        return util_err_set(err, UTIL_EFORMAT,
                            "config '%s': not a JSON object (error near byte "
                            "%zu)",
                            path, at);
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
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
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
            if (*rest == '/')
                rest++;
            else if (!*rest)
                return 1;
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

/* --- which files are prompts (directory mode and --staged) ---------------------- */

static int ends_ci(const char *s, size_t n, const char *suffix) {
    size_t l = strlen(suffix);
    return n >= l && strncasecmp(s + n - l, suffix, l) == 0;
}

int lint_name_ends_with(const char *name, const char *const *suffixes) {
    size_t bl = strlen(name);
    for (const char *const *e = suffixes; *e; e++)
        if (bl > strlen(*e) && ends_ci(name, bl, *e)) return 1;
    return 0;
}

/* Text-like extensions a prompt glob may select. */
static const char *const k_text_ext[] = {".md",         ".markdown", ".mdx",    ".txt",      ".prompt",
                                         ".j2",         ".jinja",    ".jinja2", ".mustache", ".hbs",
                                         ".handlebars", ".tmpl",     ".tpl",    ".gotmpl",   ".njk",
                                         ".liquid",     ".prompty",  ".mdc",    NULL};
/* Formats that are prompts by their extension alone. */
static const char *const k_prompt_ext[] = {
    ".prompt",       ".prompty",     ".prompt.md",       ".prompt.txt", ".prompt.j2",
    ".prompt.jinja", ".chatmode.md", ".instructions.md", ".mdc",        NULL};
/* Template formats: prompts unless their text is markup or code. */
static const char *const k_tmpl_ext[] = {".j2",   ".jinja", ".jinja2", ".mustache", ".hbs",    ".handlebars",
                                         ".tmpl", ".tpl",   ".gotmpl", ".njk",      ".liquid", NULL};
static const char *const k_prose_ext[] = {".md", ".markdown", ".mdx", ".txt", NULL};
/* Templates of general-purpose engines (ERB, Velocity, StringTemplate):
 * mostly web pages, mail and generated code, so prompts by their content. */
static const char *const k_engine_ext[] = {".erb", ".vm", ".st", NULL};
/* Data formats: prompts by content where the path or name says prompts. */
static const char *const k_data_ext[] = {".yaml", ".yml", ".json", ".toml", NULL};
/* Data files that are project or tool config by their name, wherever they are. */
static const char *const k_data_config[] = {"package.json",
                                            "package-lock.json",
                                            "tsconfig.json",
                                            "composer.json",
                                            "pyproject.toml",
                                            "Cargo.toml",
                                            "docker-compose.yml",
                                            "docker-compose.yaml",
                                            "compose.yml",
                                            "compose.yaml",
                                            ".pre-commit-config.yaml",
                                            "pnpm-lock.yaml",
                                            "openapi.json",
                                            "openapi.yaml",
                                            "swagger.json",
                                            "swagger.yaml",
                                            NULL};
/* Prompt files by name, any folder (case-insensitive). */
static const char *const k_prompt_names[] = {".cursorrules",    ".windsurfrules",
                                             ".clinerules",     ".roorules",
                                             ".goosehints",     "copilot-instructions.md",
                                             "AGENT.md",        "AGENTS.override.md",
                                             "CONVENTIONS.md",  "skprompt.txt",
                                             "system.md",       "system.txt",
                                             "instructions.md", "instructions.txt",
                                             "persona.md",      NULL};
/* Folders whose files are prompts (path components). */
static const char *const k_prompt_dirs[] = {".claude/commands/",  ".claude/agents/",       ".github/prompts/",
                                            ".github/chatmodes/", ".github/instructions/", ".cursor/rules/",
                                            ".windsurf/rules/",   ".clinerules/",          NULL};
/* Project files that are never prompts, whatever they say. */
static const char *const k_not_prompts[] = {"readme",
                                            "changelog",
                                            "changes",
                                            "history",
                                            "license",
                                            "licence",
                                            "copying",
                                            "notice",
                                            "authors",
                                            "contributors",
                                            "contributing",
                                            "code_of_conduct",
                                            "security",
                                            "support",
                                            "maintainers",
                                            "governance",
                                            "requirements",
                                            "cmakelists",
                                            "robots",
                                            "third_party_notices",
                                            NULL};

/* Whether a template's name says it renders code or config: the extension
 * before the template's (`kubelet.yaml.j2`, `crio.conf.j2`, `run.sh.j2`,
 * `Dockerfile.j2`). */
static int rendered_code(const char *b) {
    static const char *const k_inner[] = {
        ".sh",   ".bash", ".py",  ".js",   ".ts",  ".go",  ".rb",      ".conf", ".cfg",        ".ini",
        ".toml", ".yaml", ".yml", ".json", ".xml", ".env", ".service", ".repo", ".properties", ".cnf",
        ".tf",   ".hcl",  ".sql", ".html", ".htm", ".css", ".j2",      NULL};
    const char *dot = strrchr(b, '.');
    if (!dot || dot == b) return 0;
    size_t n = (size_t)(dot - b);
    if (n >= 10 && !strncasecmp(dot - 10, "Dockerfile", 10)) return 1;
    for (const char *const *x = k_inner; *x; x++) {
        size_t l = strlen(*x);
        if (n > l && !strncasecmp(dot - l, *x, l)) return 1;
    }
    return 0;
}

/* Whether a template renders a project file that is never a prompt: its
 * name before the first dot is one of k_not_prompts (`README.md.tmpl`,
 * `CHANGELOG.md.j2`, `LICENSE.tmpl`); not the words that also name prompts
 * ("history", "changes", "support", "security": `history.j2` may be the
 * conversation). */
static int project_template(const char *b) {
    const char *dot = strchr(b, '.');
    if (!dot) return 0;
    size_t n = (size_t)(dot - b);
    for (const char *const *w = k_not_prompts; *w; w++)
        if (strlen(*w) == n && !strncasecmp(b, *w, n))
            return strcmp(*w, "history") && strcmp(*w, "changes") && strcmp(*w, "support") &&
                   strcmp(*w, "security");
    return 0;
}

/* Whether s[0, n) holds "prompt" as a word or a word's head: after a
 * non-letter or a lower-case letter ("systemPrompts"), before a non-letter,
 * an upper-case letter or "s" and one of those (`prompts/`,
 * `prompt_templates.yaml`, `system_prompts.json`, `promptLibrary.json`;
 * not `promptflow/`, `promptopt_config.yaml`). */
static int prompt_word(const char *s, size_t n) {
    for (size_t i = 0; i + 6 <= n; i++) {
        if ((s[i] != 'p' && s[i] != 'P') || strncasecmp(s + i, "prompt", 6)) continue;
        if (i > 0 && isalpha((unsigned char)s[i - 1]) && !(islower((unsigned char)s[i - 1]) && s[i] == 'P'))
            continue;
        size_t j = i + 6;
        j += j < n && s[j] == 's';
        if (j < n && islower((unsigned char)s[j])) continue;
        return 1;
    }
    return 0;
}

/* A data file (YAML, JSON, TOML) found by walking: a prompt to read by
 * content when the path or name says prompts (a prompt glob, a folder or
 * name holding the word "prompt"); never a project or tool config by name. */
static int data_select(const lint_config *c, const char *rel, const char *b) {
    size_t bl = strlen(b);
    if (ends_ci(b, bl, ".toml")) { /* Gemini CLI custom commands */
        const char *at = strstr(rel, ".gemini/commands/");
        if (at && (at == rel || at[-1] == '/')) return LINT_SEL_YES;
    }
    if (!c->content_detection) return LINT_SEL_NO;
    for (const char *const *n = k_data_config; *n; n++)
        if (strcasecmp(b, *n) == 0) return LINT_SEL_NO;
    for (size_t i = 0; i < c->n_prompt_globs; i++)
        if (lint_glob_match(c->prompt_globs[i], rel)) return LINT_SEL_DATA;
    if (prompt_word(rel, strlen(rel))) return LINT_SEL_DATA;
    /* elsewhere: YAML or TOML read for long prose under a prompt key (a
     * pipeline's prompt config, a toolset's llm_instructions); never CI
     * config, whose run: and script: blocks are shell */
    if (ends_ci(b, bl, ".json")) return LINT_SEL_NO;
    static const char *const k_ci[] = {".github/",    ".gitlab/",          ".circleci/",
                                       ".buildkite/", ".azure-pipelines/", NULL};
    for (const char *const *x = k_ci; *x; x++) {
        const char *at = strstr(rel, *x);
        if (at && (at == rel || at[-1] == '/')) return LINT_SEL_NO;
    }
    static const char *const k_ci_names[] = {".gitlab-ci.yml",
                                             "azure-pipelines.yml",
                                             "bitbucket-pipelines.yml",
                                             "mkdocs.yml",
                                             "Chart.yaml",
                                             "pubspec.yaml",
                                             "environment.yml",
                                             ".travis.yml",
                                             "codecov.yml",
                                             ".readthedocs.yaml",
                                             NULL};
    for (const char *const *x = k_ci_names; *x; x++)
        if (strcasecmp(b, *x) == 0) return LINT_SEL_NO;
    return LINT_SEL_DATA_PROSE;
}

int lint_sel_reads(int sel) {
    return sel == LINT_SEL_CONTENT || sel == LINT_SEL_TEMPLATE || sel == LINT_SEL_DATA ||
           sel == LINT_SEL_DATA_PROSE;
}

int lint_config_select(const lint_config *c, const char *rel) {
    const char *b = strrchr(rel, '/');
    b = b ? b + 1 : rel;
    if (lint_config_excluded(c, rel)) return LINT_SEL_EXCLUDED;
    for (size_t i = c->n_roles; i-- > 0;)
        if (lint_glob_match(c->roles[i].glob, rel))
            return c->roles[i].role == LINT_ROLE_IGNORE ? LINT_SEL_IGNORED : LINT_SEL_YES;
    for (size_t i = 0; i < sizeof k_name_roles / sizeof *k_name_roles; i++)
        if (strcmp(b, k_name_roles[i].name) == 0) return LINT_SEL_YES;
    for (const char *const *n = k_prompt_names; *n; n++)
        if (strcasecmp(b, *n) == 0) return LINT_SEL_YES;
    int text = lint_name_ends_with(b, k_text_ext) || lint_name_ends_with(b, k_prompt_ext) ||
               lint_name_ends_with(b, k_engine_ext);
    if (lint_name_ends_with(b, k_prompt_ext)) return LINT_SEL_YES;
    if (lint_name_ends_with(b, k_data_ext)) return data_select(c, rel, b);
    for (size_t i = 0; i < c->n_prompt_globs; i++)
        if (lint_glob_match(c->prompt_globs[i], rel)) return text ? LINT_SEL_YES : LINT_SEL_NO;
    size_t bl = strlen(b);
    for (const char *const *d = k_prompt_dirs; *d; d++) {
        const char *at = strstr(rel, *d);
        if (at && (at == rel || at[-1] == '/') && text) return LINT_SEL_YES;
    }
    /* a name that says so: Prompt.txt, system_prompt.md, "Agent Prompt v1.2.txt" */
    for (size_t i = 0; i + 6 <= bl; i++)
        if (strncasecmp(b + i, "prompt", 6) == 0 &&
            (lint_name_ends_with(b, k_prose_ext) || lint_name_ends_with(b, k_tmpl_ext) ||
             lint_name_ends_with(b, k_engine_ext)))
            return LINT_SEL_YES;
    if (ends_ci(b, bl, ".md.tpl") || ends_ci(b, bl, ".txt.tpl"))
        return project_template(b) ? LINT_SEL_NO : LINT_SEL_TEMPLATE;
    if (lint_name_ends_with(b, k_tmpl_ext))
        return rendered_code(b) || project_template(b) ? LINT_SEL_NO : LINT_SEL_TEMPLATE;
    if (lint_name_ends_with(b, k_engine_ext)) /* app.html.erb, mail.vm: not prompts; system.txt.erb may be */
        return !c->content_detection || rendered_code(b) || project_template(b) ? LINT_SEL_NO
                                                                                : LINT_SEL_CONTENT;
    if (lint_name_ends_with(b, k_prose_ext)) {
        if (!c->content_detection) return LINT_SEL_NO;
        for (const char *const *n = k_not_prompts; *n; n++)
            if (strncasecmp(b, *n, strlen(*n)) == 0 &&
                (b[strlen(*n)] == '.' || b[strlen(*n)] == '-' || b[strlen(*n)] == '_'))
                return LINT_SEL_NO;
        return LINT_SEL_CONTENT;
    }
    return LINT_SEL_NO;
}

int lint_config_is_prompt(const lint_config *c, const char *rel) {
    return lint_config_select(c, rel) == LINT_SEL_YES;
}

/* Occurrences of a phrase (ASCII, case-insensitive) at word starts. */
static int has_phrase(const char *s, size_t n, const char *w) {
    size_t l = strlen(w);
    int c0 = tolower((unsigned char)*w); /* a cheap first test before strncasecmp */
    for (size_t i = 0; i + l <= n; i++)
        if (tolower((unsigned char)s[i]) == c0 && (i == 0 || !isalnum((unsigned char)s[i - 1])) &&
            strncasecmp(s + i, w, l) == 0 && (i + l == n || !isalnum((unsigned char)s[i + l])))
            return 1;
    return 0;
}

/* Sum of weight[k] over the phrases of each NULL-ended list lists[k] found
 * in s[0, n), each phrase counted once where has_phrase would find it: one
 * pass over the text, trying at each word start only the phrases whose
 * first letter (byte) matches, instead of one pass per phrase. At most
 * PHRASE_MAX phrases in all; more are ignored. */
#define PHRASE_MAX 128
static int phrase_score(const char *s, size_t n, const char *const *const *lists, const int *weight,
                        size_t nlists) {
    const char *ph[PHRASE_MAX];
    int wt[PHRASE_MAX];
    size_t len[PHRASE_MAX], np = 0;
    uint64_t by_first[256][PHRASE_MAX / 64] = {{0}}, found[PHRASE_MAX / 64] = {0};
    for (size_t k = 0; k < nlists; k++)
        for (const char *const *w = lists[k]; *w && np < PHRASE_MAX; w++, np++) {
            ph[np] = *w, wt[np] = weight[k], len[np] = strlen(*w);
            by_first[(unsigned char)tolower((unsigned char)**w)][np / 64] |= (uint64_t)1 << (np % 64);
        }
    for (size_t i = 0; i < n; i++) {
        const uint64_t *f = by_first[(unsigned char)tolower((unsigned char)s[i])];
        if (!(f[0] | f[1]) || (i > 0 && isalnum((unsigned char)s[i - 1]))) continue;
        for (size_t g = 0; g < PHRASE_MAX / 64; g++)
            for (uint64_t m = f[g] & ~found[g]; m; m &= m - 1) {
                size_t b = g * 64 + (size_t)__builtin_ctzll(m), l = len[b];
                if (i + l <= n && strncasecmp(s + i, ph[b], l) == 0 &&
                    (i + l == n || !isalnum((unsigned char)s[i + l])))
                    found[g] |= (uint64_t)1 << (b % 64);
            }
    }
    int score = 0;
    for (size_t b = 0; b < np; b++)
        if (found[b / 64] >> (b % 64) & 1) score += wt[b];
    return score;
}

/* Whether the text is a coding agent's command or agent file: Claude Code's
 * $ARGUMENTS (word-bounded, upper case), or front matter that names the
 * command's arguments or tools (argument-hint:, allowed-tools:). Such files
 * are kept outside .claude/commands/ by collections meant to be copied
 * there (tools/review.md). */
static int command_file(const char *p, size_t n) {
    for (const char *q = p; (q = memmem(q, (size_t)(p + n - q), "$ARGUMENTS", 10)) != NULL; q += 10)
        if (q + 10 >= p + n || !(isalnum((unsigned char)q[10]) || q[10] == '_')) return 1;
    if (n > 4 && memcmp(p, "---", 3) == 0) {
        const char *end = memmem(p + 3, n - 3, "\n---", 4);
        size_t fl = end ? (size_t)(end - p) : 0;
        for (size_t i = 3; i + 14 <= fl; i++)
            if (p[i - 1] == '\n' &&
                (!strncmp(p + i, "argument-hint:", 14) || !strncmp(p + i, "allowed-tools:", 14)))
                return 1;
    }
    return 0;
}

/* How a template line ends, for telling prose templates from config and code
 * (a line ending in '}' was read as code before):
 * - TL_BARE, TL_CURLY: template tags and punctuation only (`{%- if x -%}`,
 *   `{# note #}`; TL_CURLY with an output tag, `{{ label }}: {{ value }}`,
 *   `{{#items}}`): a line, not code;
 * - TL_TEXT: text before a tag opened on the line (`Paragraph: {{ text }}`),
 *   a prose line whose field comes last: a line, not code;
 * - TL_KEY: a config key before it (`listen_port: {{ port }}`,
 *   `listen: 0.0.0.0:{{ port }}`, `app.kubernetes.io/name: {{ x }}`: a
 *   lower-case key, then ':' or '=', or a space and the tag): code;
 * - TL_GO: Go control tags (`{{- end }}`, `{{- if .Values.x }}`, a Go
 *   comment tag, `{{ .Values.x }}`), what Helm charts and other config
 *   templates are made of: code, and so are the file's TL_CURLY lines;
 * - TL_NONE: the line does not end in a tag: as before. */
enum { TL_NONE, TL_BARE, TL_CURLY, TL_TEXT, TL_KEY, TL_GO };

static int control_tag(const char *a, const char *b) {
    while (a < b && (*a == '-' || *a == '~' || *a == ' ')) a++;
    if (a + 1 < b &&
        ((*a == '.' && isalpha((unsigned char)a[1])) || *a == '$' || *a == '*' || (*a == '/' && a[1] == '*')))
        return 1; /* Go's .Values.x, $name, comments; not Mustache's {{.}} */
    static const char *const k_go[] = {"end",       "else",   "if ",      "range ",  "with ", "define ",
                                       "template ", "block ", "include ", "printf ", NULL};
    for (const char *const *w = k_go; *w; w++)
        if ((size_t)(b - a) >= strlen(*w) && !strncmp(a, *w, strlen(*w))) return 1;
    return 0;
}

/* A config line: an INI/TOML section (`[client]`, `[Service]`,
 * `[plugins."cri"]`); a key and '=' (`gpgcheck=0`, `ExecStart=/bin/x`,
 * `sandbox_image = "{{ img }}"`); a YAML key that starts lower-case
 * (`kind: ConfigMap`, `failSwapOn: {{ x }}`, `- name: web`, `metadata:`),
 * except a chat role marker (`system:`, `user: {{ question }}`). Not a JSON
 * key: prompts show JSON output formats. Prompt captions are capitalized (`Paragraph:`,
 * `QUESTION:`) or several words (`Text content:`). */
static int config_line(const char *q, const char *te) {
    if (*q == '[' && te[-1] == ']' && te - q > 2) {
        for (const char *k = q + 1; k < te - 1; k++)
            if (!(isalnum((unsigned char)*k) || strchr("_.-\"'", *k))) return 0;
        return 1;
    }
    if (*q == '-' && q + 1 < te && q[1] == ' ') q += 2;
    const char *k = q;
    for (; k < te && (isalnum((unsigned char)*k) || strchr("_.-/", *k)); k++)
        ;
    if (k == q || !isalpha((unsigned char)*q)) return 0;
    const char *v = k;
    if (v < te && *v == ' ') v++;
    if (v < te && *v == '=' && (v + 1 >= te || v[1] != '=')) return 1;
    if (k >= te || *k != ':' || (k + 1 < te && k[1] != ' ') || !islower((unsigned char)*q)) return 0;
    static const char *const k_roles[] = {"system",    "user",  "assistant", "human",    "ai", "bot",
                                          "developer", "model", "tool",      "function", NULL};
    for (const char *const *r = k_roles; *r; r++)
        if (strlen(*r) == (size_t)(k - q) && !strncmp(q, *r, (size_t)(k - q))) return 0;
    return 1;
}

/* Whether a line opening with '<' is a prompt's XML section tag
 * (`<instructions>`, `</user_question>`, `<id>{{ task.id }}</id>`) rather than
 * HTML or SVG markup: its name is no HTML element and it has no attributes.
 * Such lines count as prose only in a template with three lines of five
 * words or more outside tags (a prompt, not XML data). */
static int prompt_section(const char *q, const char *te) {
    static const char *const k_html[] = {
        "a",       "abbr",    "address", "area",   "article", "aside",    "audio",    "b",     "base",
        "body",    "br",      "button",  "canvas", "caption", "circle",   "code",     "col",   "dd",
        "defs",    "details", "dialog",  "div",    "dl",      "dt",       "em",       "embed", "fieldset",
        "figure",  "footer",  "form",    "g",      "h1",      "h2",       "h3",       "h4",    "h5",
        "h6",      "head",    "header",  "hr",     "html",    "i",        "iframe",   "img",   "input",
        "label",   "legend",  "li",      "line",   "link",    "main",     "meta",     "nav",   "noscript",
        "ol",      "option",  "p",       "path",   "picture", "polygon",  "pre",      "rect",  "script",
        "section", "select",  "small",   "source", "span",    "strong",   "style",    "sub",   "summary",
        "sup",     "svg",     "table",   "tbody",  "td",      "template", "textarea", "tfoot", "th",
        "thead",   "title",   "tr",      "u",      "ul",      "use",      "video",    "slot",  NULL};
    const char *k = q + 1;
    if (*k == '/') k++;
    const char *n = k;
    while (k < te && (isalnum((unsigned char)*k) || *k == '_' || *k == '-')) k++;
    if (k == n || k >= te || (*k != '>' && !(*k == '/' && k + 1 < te && k[1] == '>'))) return 0;
    size_t len = (size_t)(k - n);
    int c0 = tolower((unsigned char)*n);
    for (const char *const *h = k_html; *h; h++)
        if (**h == c0 && !strncasecmp(n, *h, len) && (*h)[len] == '\0') return 0;
    return 1;
}

static int tag_line(const char *q, const char *te) {
    if (te - q < 4 || te[-1] != '}' || (te[-2] != '}' && te[-2] != '%' && te[-2] != '#')) return TL_NONE;
    char open = te[-2] == '}' ? '{' : te[-2];
    const char *o = NULL; /* the opener of the closing tag */
    for (const char *k = te - 3; k > q; k--)
        if (k[-1] == '{' && k[0] == open) {
            o = k - 1;
            break;
        }
    if (!o) return TL_NONE;
    /* only tags and the punctuation between them */
    int bare = 1, curly = 0;
    for (const char *k = q; k < te && bare;) {
        if (*k == '{' && k + 1 < te && (k[1] == '{' || k[1] == '%' || k[1] == '#')) {
            char c = k[1] == '{' ? '}' : k[1];
            const char *e = k + 2;
            while (e + 1 < te && !(e[0] == c && e[1] == '}')) e++;
            if (e + 1 >= te) return TL_NONE;
            if (c == '}' && control_tag(k + 2, e)) return TL_GO;
            curly |= c == '}';
            k = e + 2;
        } else if (isalpha((unsigned char)*k)) {
            bare = 0;
        } else {
            k++;
        }
    }
    if (bare) return curly ? TL_CURLY : TL_BARE;
    if (control_tag(o + 2, te - 2)) return TL_GO;
    const char *k = q;
    while (k < o && (islower((unsigned char)*k) || isdigit((unsigned char)*k) || *k == '_' || *k == '.' ||
                     *k == '-' || *k == '/'))
        k++;
    if (k > q && k < o && (*k == ':' || *k == '=')) return TL_KEY;
    if (k > q && k < o && *k == ' ') {
        const char *v = k + 1;
        while (v < o && (*v == ' ' || *v == '=' || *v == '"' || *v == '\'')) v++;
        if (*v == '{') return TL_KEY;
    }
    return TL_TEXT;
}

/* Whether line [q, le) (past '#', list marks and spaces, and a trailing
 * ':' or '*') starts with one of the words (as a prefix when prefix, else
 * whole). */
static int line_starts(const char *q, const char *le, const char *const *w, int prefix) {
    while (q < le && (*q == '#' || *q == '-' || *q == '*' || *q == ' ' || *q == '\t' || *q == '>')) q++;
    while (le > q && (le[-1] == ' ' || le[-1] == ':' || le[-1] == '*' || le[-1] == '\r')) le--;
    for (; *w; w++) {
        size_t l = strlen(*w);
        if ((size_t)(le - q) >= l && strncasecmp(q, *w, l) == 0 &&
            (prefix ? (size_t)(le - q) == l || !isalnum((unsigned char)q[l]) : (size_t)(le - q) == l))
            return 1;
    }
    return 0;
}

/* Whether text written in German, French, Spanish, Portuguese, Italian or
 * Dutch reads as a system prompt without a "you are" opening: a line (a
 * heading too) among the first eight that names the model's task or role
 * ("Deine Aufgabe", "Ta mission", "Tu tarea", "Sua tarefa", "Il tuo
 * compito", "Je taak"), or a rules heading ("## Regeln", "Règles :",
 * "Reglas:") with a line or list item that tells it how to answer
 * ("Antworte", "Réponds", "Responde"); never text with a README's or a
 * changelog's marks (installation, licence, changelog in those languages). */
static int european_prompt(const char *p, const char *e) {
    static const char *const k_role[] = {
        "deine aufgabe", "ihre aufgabe", "deine rolle", "ta mission", "ta tâche",     "votre mission",
        "votre tâche",   "ton rôle",     "votre rôle",  "tu tarea",   "tu misión",    "tu rol ",
        "su tarea",      "sua tarefa",   "sua missão",  "seu papel",  "a sua tarefa", "il tuo compito",
        "il tuo ruolo",  "sei un",       "sei una",     "je taak",    "jouw taak",    "uw taak",
        "je bent ",      "jij bent ",    "u bent ",     NULL};
    static const char *const k_rules[] = {
        "regeln",    "règles",      "reglas",     "regras",      "regole",      "regels", "richtlinien",
        "consignes", "directrices", "diretrizes", "linee guida", "richtlijnen", NULL};
    static const char *const k_answer[] = {"antworte", "antworten sie", "beantworte", "réponds",
                                           "répondez", "responde",      "responda",   "rispondi",
                                           "antwoord", "beantwoord",    NULL};
    static const char *const k_docs[] = {"installation",
                                         "installieren",
                                         "lizenz",
                                         "licence",
                                         "license",
                                         "licencia",
                                         "licença",
                                         "licenza",
                                         "licentie",
                                         "instalación",
                                         "instalação",
                                         "installazione",
                                         "changelog",
                                         "änderungsprotokoll",
                                         "journal des modifications",
                                         "registro de cambios",
                                         "registro delle modifiche",
                                         "wijzigingslog",
                                         "pip install",
                                         "npm install",
                                         NULL};
    int role = 0, rules = 0, answer = 0, seen = 0;
    for (const char *l = p; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        const char *q = l;
        while (q < le && (*q == ' ' || *q == '\t')) q++;
        if (q < le) {
            if (seen++ < 8 && line_starts(q, le, k_role, 1)) role = 1;
            if (*q == '#' || le[-1] == ':' || (le - q > 2 && le[-1] == '*'))
                rules |= line_starts(q, le, k_rules, 0);
            answer |= line_starts(q, le, k_answer, 1);
        }
        l = nl ? nl + 1 : e;
    }
    if (!role && !(rules && answer)) return 0;
    static const char *const *const k_doc_list[] = {k_docs};
    static const int k_doc_weight[] = {1};
    return phrase_score(p, (size_t)(e - p), k_doc_list, k_doc_weight, 1) ==
           0; /* no README or changelog marks */
}

/* Whether one of the first six text lines opens as addressed to a model
 * ("You are ...", "Your task", "Act as", or the same in other languages). */
static int model_opening(const char *p, const char *e) {
    static const char *const k_open[] = {
        "you are", "you're", "you will", "your task", "your role", "your job", "act as", "i want you to",
        "as an ai", "the assistant is", "assistant is", "this is a conversation", "you have access",
        /* the same opening in other languages */
        "你是", "您是", "你现在是", "你将扮演", "你的任务", "你的角色", "あなたは", "당신은", "너는",
        "du bist ", "sie sind ein", "tu es ", "vous êtes ", "eres ", "tú eres", "actúa como", "você é ",
        "voce e ", "aja como", "ты — ", "ты - ", "Ты — ", "Ты - ", "Вы — ", "Ты являешься", "Вы являетесь",
        NULL};
    int seen_lines = 0;
    for (const char *l = p; l < e && seen_lines < 6;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e;
        const char *q = l;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '>' || *q == '*' || *q == '-')) q++;
        if (q < le && *q != '#' && *q != '<' && *q != '`' && *q != '[' && *q != '|') {
            seen_lines++;
            for (const char *const *w = k_open; *w; w++)
                if (tolower((unsigned char)*q) == (unsigned char)**w && (size_t)(le - q) >= strlen(*w) &&
                    strncasecmp(q, *w, strlen(*w)) == 0)
                    return 1;
        }
        l = nl ? nl + 1 : e;
    }
    return 0;
}

/* Whether text reads as addressed to a model: an opening such as "You are
 * ...", or phrases instructions to a model use scoring min_score or more;
 * the same openings in Chinese, Japanese, Korean, German, French, Spanish,
 * Portuguese and Russian, and (in text with non-ASCII letters) the same
 * phrases in those languages; a task or role line, or a rules heading with
 * an answer line, in six European languages (european_prompt). */
static int addressed_to_model(const char *p, const char *e, int min_score) {
    if (model_opening(p, e)) return 1;
    static const char *const k_strong[] = {"you are",        "you must",      "your task",
                                           "the user",       "the user's",    "the assistant",
                                           "respond",        "your response", "you will be given",
                                           "system prompt",  "as an ai",      "you have access to",
                                           "do not mention", "in your reply", NULL};
    static const char *const k_weak[] = {"never",        "always",       "do not",     "don't",
                                         "you should",   "answer",       "reply",      "instructions",
                                         "follow these", "guidelines",   "be concise", "you can",
                                         "tools",        "ask the user", "output",     NULL};
    static const char *const k_docs[] = {"installation",
                                         "npm install",
                                         "pip install",
                                         "license",
                                         "getting started",
                                         "## usage",
                                         "contributing",
                                         "changelog",
                                         "```bash",
                                         "```sh",
                                         NULL};
    size_t m = (size_t)(e - p);
    static const char *const *const k_lists[] = {k_strong, k_weak, k_docs};
    static const int k_weights[] = {2, 1, -2};
    int score = phrase_score(p, m, k_lists, k_weights, 3);
    if (score >= min_score) return 1;
    if (european_prompt(p, e)) return 1;
    /* the same cues in other languages, looked for only in text written
     * mostly outside ASCII (one byte in eight at least: Chinese, Japanese,
     * Korean, Russian; not English with an emoji or a box drawing, and
     * seldom German, French, Spanish or Portuguese, which their openings
     * find); CJK phrases match anywhere, having no spaces */
    size_t wide = 0;
    const char *k = p;
    for (uint64_t v; k + 8 <= e; k += 8) { /* eight bytes at a time: mostly ASCII */
        memcpy(&v, k, 8);
        if (v & 0x8080808080808080u)
            for (int b = 0; b < 8; b++) wide += (unsigned char)k[b] >= 0x80;
    }
    for (; k < e; k++) wide += (unsigned char)*k >= 0x80;
    if (wide < 16 || wide * 8 < m) return 0;
    static const char *const k_strong_intl[] = {
        "用户",          "你必须",      "您必须",       "你的任务",
        "你的回答",      "ユーザー",    "あなたの役割", "してはいけません",
        "사용자",        "당신의 역할", "der benutzer", "den benutzer",
        "des benutzers", "du musst",    "sie müssen",   "l'utilisateur",
        "tu dois",       "vous devez",  "el usuario",   "debes ",
        "o usuário",     "você deve",   "пользовател",  "ты должен",
        "вы должны",     NULL};
    static const char *const k_weak_intl[] = {"请",
                                              "不要",
                                              "必须",
                                              "回答",
                                              "始终",
                                              "永远不要",
                                              "你应该",
                                              "你可以",
                                              "系统提示",
                                              "してください",
                                              "しないでください",
                                              "하세요",
                                              "하지 마",
                                              "답변",
                                              "antworte",
                                              "niemals",
                                              "réponds",
                                              "répondez",
                                              "ne jamais",
                                              "responde",
                                              "nunca",
                                              "responda",
                                              "отвечай",
                                              "никогда",
                                              NULL};
    static const char *const k_docs_intl[] = {
        "安装",         "许可证",     "快速开始",  "贡献",     "更新日志", "使用方法",
        "インストール", "ライセンス", "설치",      "라이선스", "lizenz",   "licence",
        "instalación",  "instalação", "установка", "лицензия", NULL};
    static const char *const *const k_lists_intl[] = {k_strong_intl, k_weak_intl, k_docs_intl};
    score += phrase_score(p, m, k_lists_intl, k_weights, 3);
    return score >= min_score;
}

/* Whether text is a log, not a prompt: of ten or more lines, a third or more
 * open with a date and time (`2025-08-08 07:06:59`, `[2025/08/08T07:06`,
 * after a terminal colour code), as in a recorded tool output or a server
 * log kept as a test fixture. */
static int log_text(const char *p, const char *e) {
    int lines = 0, stamped = 0;
    for (const char *l = p; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        const char *le = nl ? nl : e, *q = l;
        while (q < le && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
        if (q < le) {
            lines++;
            if (*q == '\033' && q + 1 < le && q[1] == '[') { /* a colour code */
                q += 2;
                while (q < le && (isdigit((unsigned char)*q) || *q == ';')) q++;
                q += q < le && *q == 'm';
            }
            q += q < le && *q == '[';
            static const char k_shape[] =
                "dddd-dd-dd dd:dd"; /* d: a digit; '-': '-' or '/'; ' ': ' ' or 'T' */
            size_t i = 0;
            for (; k_shape[i] && q + i < le; i++) {
                char ch = q[i], want = k_shape[i];
                if (want == 'd'   ? !isdigit((unsigned char)ch)
                    : want == '-' ? ch != '-' && ch != '/'
                    : want == ' ' ? ch != ' ' && ch != 'T'
                                  : ch != want)
                    break;
            }
            stamped += !k_shape[i];
        }
        l = nl ? nl + 1 : e;
    }
    return lines >= 10 && stamped * 3 >= lines;
}

/* --- prompt text in data files (LINT_SEL_DATA) ---------------------------------- */

/* Whether a key names prompt text: system, user, content, prompt(s),
 * template(s), instruction(s), message, persona, backstory, goal, or a key
 * holding "prompt" or "instruction" or ending in "template" or "message"
 * (system_prompt, userPrompt, prompt_template, system_message); case, '_',
 * '-' and spaces aside. */
static int prompt_key(const char *k, size_t n, int strict) {
    char w[48];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '_' || k[i] == '-' || k[i] == ' ') continue;
        if (m + 1 >= sizeof w) return 0;
        w[m++] = (char)tolower((unsigned char)k[i]);
    }
    w[m] = 0;
    static const char *const k_keys[] = {
        "system",      "user",         "content", "prompt",  "prompts",   "template", "templates",
        "instruction", "instructions", "message", "persona", "backstory", "goal",     NULL};
    for (const char *const *x = k_keys; *x; x++)
        if (!strcmp(w, *x))
            return !strict ||
                   (strcmp(w, "user") && strcmp(w, "content") && strcmp(w, "message") && strcmp(w, "goal"));
    if (strstr(w, "prompt") || strstr(w, "instruction")) return 1;
    if (m > 8 && !strcmp(w + m - 8, "template")) return 1;
    return m > 7 && !strcmp(w + m - 7, "message") && (!strict || !strncmp(w, "system", 6));
}

/* The prompt text found so far: values of prompt keys, a blank line apart. */
typedef struct data_text {
    char *p;
    size_t n, cap;
    int opens;  /* a value opens as addressed to a model */
    int strict; /* LINT_SEL_DATA_PROSE: whole-prompt keys, long values only */
} data_text;

static void data_put(data_text *t, const char *s, size_t n) {
    if (n > t->cap - t->n) n = t->cap - t->n;
    memcpy(t->p + t->n, s, n);
    t->n += n;
}

/* End of the string opened by the quote at d[i] (one past the closing
 * quote, or n); with t, its text decoded (JSON/YAML escapes, YAML's ''). */
static size_t data_string(const char *d, size_t i, size_t n, data_text *t) {
    char q = d[i];
    for (i++; i < n; i++) {
        if (d[i] == q) {
            if (q == '\'' && i + 1 < n && d[i + 1] == '\'') {
                if (t) data_put(t, "'", 1);
                i++;
                continue;
            }
            return i + 1;
        }
        if (q == '"' && d[i] == '\\' && i + 1 < n) {
            char c = d[++i];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
            if (t) data_put(t, &c, 1);
        } else if (t) {
            data_put(t, d + i, 1);
        }
    }
    return n;
}

/* Whether the first text line of a prompt key's value opens with a task
 * given to a model ("Summarize this output focusing on:", "Given the
 * following ...", "Classify ..."): under a key that names a whole prompt, an
 * imperative addressed to whoever reads the value. */
static int task_opening(const char *p, const char *e) {
    static const char *const k_task[] = {"summarize ", "summarise ", "analyze ",      "analyse ", "generate ",
                                         "classify ",  "extract ",   "translate ",    "rewrite ", "evaluate ",
                                         "given the ", "given a ",   "based on the ", NULL};
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    for (const char *const *w = k_task; *w; w++)
        if ((size_t)(e - p) > strlen(*w) && !strncasecmp(p, *w, strlen(*w))) return 1;
    return 0;
}

/* Reads the value of a prompt key at d[v] (after ':' or '='; the key at
 * column col) into t when it is text: a YAML block scalar (the lines
 * indented past the key), a TOML multi-line string, a quoted string or a
 * plain scalar; kept when it spans lines or holds 24 bytes or more. Returns
 * where scanning goes on: past the value, or at v for a nested value. */
static size_t data_value(const char *d, size_t v, size_t n, size_t col, data_text *t) {
    while (v < n && (d[v] == ' ' || d[v] == '\t')) v++;
    if (v >= n || strchr("\r\n{[#&*!", d[v])) return v;
    size_t mark = t->n, end, a = v, b;
    if (d[v] == '|' || d[v] == '>') { /* a YAML block scalar */
        size_t k = v + 1;
        while (k < n && (d[k] == '-' || d[k] == '+' || isdigit((unsigned char)d[k]))) k++;
        while (k < n && (d[k] == ' ' || d[k] == '\t')) k++;
        if (k < n && d[k] != '\n' && d[k] != '\r' && d[k] != '#') return v;
        while (k < n && d[k] != '\n') k++;
        a = b = end = k < n ? k + 1 : n;
        for (size_t l = a; l < n;) {
            const char *nl = memchr(d + l, '\n', n - l);
            size_t le = nl ? (size_t)(nl - d) : n, q = l;
            while (q < le && (d[q] == ' ' || d[q] == '\t' || d[q] == '\r')) q++;
            if (q < le && q - l <= col) break; /* a line at the key's indent or less */
            l = le < n ? le + 1 : n;
            if (q < le) b = end = l;
        }
        data_put(t, d + a, b - a);
    } else if (v + 2 < n && (d[v] == '"' || d[v] == '\'') && d[v + 1] == d[v] && d[v + 2] == d[v]) {
        char tq[3] = {d[v], d[v], d[v]}; /* a TOML multi-line string */
        const char *c = memmem(d + v + 3, n - v - 3, tq, 3);
        a = v + 3, b = c ? (size_t)(c - d) : n, end = c ? b + 3 : n;
        data_put(t, d + a, b - a);
    } else if (d[v] == '"' || d[v] == '\'') {
        end = data_string(d, v, n, t);
    } else { /* a plain scalar: the rest of the line, less a comment */
        end = v;
        while (end < n && d[end] != '\n' && !(d[end] == '#' && d[end - 1] == ' ')) end++;
        b = end;
        while (b > v && (d[b - 1] == ' ' || d[b - 1] == '\r')) b--;
        data_put(t, d + v, b - v);
    }
    size_t got = t->n - mark;
    int line = !memchr(t->p + mark, '\n', got);
    if (line && (got < 24 || (t->strict && got < 80 && !model_opening(t->p + mark, t->p + t->n)))) {
        t->n = mark;
        return end;
    }
    t->opens |= model_opening(t->p + mark, t->p + t->n) ||
                (t->strict && task_opening(t->p + mark, t->p + t->n));
    data_put(t, "\n\n", 2);
    return end;
}

/* Whether a YAML, JSON or TOML file's prompt text (data_value under the
 * keys prompt_key names) reads as addressed to a model: a value opening as
 * one, or all of them together scoring 3 or more (addressed_to_model: the
 * key says half of it). */
static int data_prompt(const char *d, size_t n, int strict) {
    char store[16384 + 2];
    data_text t = {store, 0, sizeof store, 0, strict};
    for (size_t i = 0; i < n && !t.opens;) {
        /* a line: its indent, list dashes, then a bare key or tokens */
        size_t ls = i;
        while (i < n && (d[i] == ' ' || d[i] == '\t')) i++;
        while (i + 1 < n && d[i] == '-' && d[i + 1] == ' ') {
            i += 2;
            while (i < n && d[i] == ' ') i++;
        }
        size_t k = i;
        while (k < n && (isalnum((unsigned char)d[k]) || d[k] == '_' || d[k] == '-' || d[k] == '.')) k++;
        size_t s = k;
        while (s < n && (d[s] == ' ' || d[s] == '\t')) s++;
        if (k > i && s < n && ((d[s] == ':' && (s + 1 == n || strchr(" \t\r\n", d[s + 1]))) || d[s] == '=')) {
            i = prompt_key(d + i, k - i, t.strict) ? data_value(d, s + 1, n, i - ls, &t) : s + 1;
            if (i < n && d[i] == '\n') i++;
            continue;
        }
        while (i < n && d[i] != '\n') {
            if (d[i] == '"' || d[i] == '\'') {
                size_t e = data_string(d, i, n, NULL), c = e;
                while (c < n && (d[c] == ' ' || d[c] == '\t')) c++;
                if (c < n && d[c] == ':' && e - i > 2 && prompt_key(d + i + 1, e - i - 2, t.strict)) {
                    size_t col = i;
                    while (col > ls && d[col - 1] != '\n') col--;
                    e = data_value(d, c + 1, n, i - col, &t);
                }
                i = e;
            } else if (d[i] == '#' && (i == ls || d[i - 1] == ' ' || d[i - 1] == '\t')) {
                while (i < n && d[i] != '\n') i++;
            } else {
                i++;
            }
        }
        i += i < n;
    }
    return t.opens || addressed_to_model(t.p, t.p + t.n, strict ? 4 : 3);
}

/* Whether a YAML file is a CrewAI tasks file: entries (indented keys) with
 * a description: and an expected_output:, each a task's prompt. */
static int crewai_tasks(const char *d, size_t n) {
    int desc = 0, expected = 0;
    for (size_t i = 0; i < n;) {
        size_t q = i;
        while (q < n && d[q] == ' ') q++;
        if (q > i && n - q > 12 && !memcmp(d + q, "description:", 12)) desc = 1;
        if (q > i && n - q > 16 && !memcmp(d + q, "expected_output:", 16)) expected = 1;
        const char *nl = memchr(d + i, '\n', n - i);
        i = nl ? (size_t)(nl - d) + 1 : n;
    }
    return desc && expected;
}

/* Whether a YAML file is deployment or CI config by its top-level keys: a
 * Kubernetes manifest (apiVersion: and kind:), a CI pipeline (jobs: or
 * stages:, steps:), a compose file (services:). */
static int deploy_config(const char *d, size_t n) {
    static const char *const k_top[] = {
        "apiVersion:", "kind:", "jobs:", "stages:", "steps:", "services:", NULL};
    int seen[6] = {0};
    for (size_t i = 0; i < n;) {
        for (int k = 0; k_top[k]; k++)
            if (n - i >= strlen(k_top[k]) && !memcmp(d + i, k_top[k], strlen(k_top[k]))) seen[k] = 1;
        const char *nl = memchr(d + i, '\n', n - i);
        i = nl ? (size_t)(nl - d) + 1 : n;
    }
    return (seen[0] && seen[1]) || seen[2] || seen[3] || seen[4] || seen[5];
}

int lint_reads_like_prompt(const char *data, size_t len, int how) {
    size_t n = len < 16384 ? len : 16384;
    const char *p = data, *e = data + n;
    if (how == LINT_SEL_DATA) return data_prompt(p, n, 0);
    if (how == LINT_SEL_DATA_PROSE)
        return !deploy_config(p, n) && (crewai_tasks(p, n) || data_prompt(p, n, 1));
    if (how != LINT_SEL_TEMPLATE && command_file(p, n)) return 1;
    /* past a YAML frontmatter */
    if (n > 4 && memcmp(p, "---", 3) == 0) {
        const char *q = memmem(p + 3, n - 3, "\n---", 4);
        if (q) p = q + 4;
    }
    if (how == LINT_SEL_TEMPLATE) {
        /* prose, not an HTML page, config or code: markup, lines ending in
         * ';', '{', '}' or '\\' and config lines under a third of the lines; or,
         * in a template with sentences outside tags and comments (three, or
         * one for every four lines of text), the same with Jinja/Mustache tag
         * lines and XML sections read as prose lines; or a chat template */
        int lines = 0, bare = 0, markup = 0, strict = 0, words = 0, go = 0, curly = 0, sections = 0,
            sentences = 0;
        for (const char *l = p; l < e;) {
            const char *nl = memchr(l, '\n', (size_t)(e - l));
            const char *le = nl ? nl : e;
            const char *q = l;
            while (q < le && (*q == ' ' || *q == '\t')) q++;
            const char *te = le;
            while (te > q && (te[-1] == ' ' || te[-1] == '\t' || te[-1] == '\r')) te--;
            int conf = 0;
            if (q < te) {
                int tag = tag_line(q, te);
                lines++;
                if (*q == '<' && q + 1 < te && (isalpha((unsigned char)q[1]) || q[1] == '!' || q[1] == '/')) {
                    strict++;
                    if (prompt_section(q, te))
                        sections++;
                    else
                        markup++;
                }
                go |= tag == TL_GO;
                curly += tag == TL_CURLY;
                bare += tag == TL_CURLY || tag == TL_BARE;
                int ends = te - q > 1 && (te[-1] == ';' || te[-1] == '{' || te[-1] == '}' || te[-1] == '\\');
                conf = config_line(q, te);
                strict += ends || conf;
                markup += (ends && tag != TL_TEXT && tag != TL_BARE && tag != TL_CURLY) || (!ends && conf);
            }
            int in = 0, lw = 0, out = 0;
            char close = 0, last = 0; /* inside a tag until "close}"; the last character outside tags */
            for (const char *k = q; k < le; k++) {
                int a = isalpha((unsigned char)*k);
                if (a && !in) {
                    lw++;
                    out += !close;
                }
                in = a;
                if (!close && *k == '{' && k + 1 < le && (k[1] == '{' || k[1] == '%' || k[1] == '#'))
                    close = k[1] == '{' ? '}' : k[1], k++;
                else if (close && *k == close && k + 1 < le && k[1] == '}')
                    close = 0, k++;
                else if (!close && *k != ' ' && *k != '\t' && *k != '\r')
                    last = *k;
            }
            words += lw;
            /* a sentence: five words or more outside tags, ending in a full
             * stop, a colon or a question mark, or eight words from a capital
             * letter (after a bullet or number); not a comment, markup or a
             * config line */
            if (out >= 5 && !conf && !strchr("#/;<{[|\"", *q)) {
                const char *f = q;
                while (f < te &&
                       (*f == '-' || *f == '*' || *f == ' ' || *f == '.' || isdigit((unsigned char)*f)))
                    f++;
                sentences += (out >= 8 && f < te && isupper((unsigned char)*f)) ||
                             (last && strchr(".:?!", last));
            }
            l = nl ? nl + 1 : e;
        }
        if (n >= 9 && (has_phrase(p, (size_t)(e - p), "<!DOCTYPE") || has_phrase(p, 6, "<html"))) return 0;
        if (memmem(p, (size_t)(e - p), "<?xml", 5)) return 0;  /* an XML document */
        if (e - p > 2 && p[0] == '#' && p[1] == '!') return 0; /* a script */
        if (words < 10) return 0;
        if (strict * 3 < lines) return 1;
        /* a chat template: the conversation's messages and the generation cue */
        static const char *const k_chat[] = {"add_generation_prompt", "in messages",  "in loop_messages",
                                             "message['role']",       "message.role", NULL};
        if (memmem(p, (size_t)(e - p), "message", 7) || memmem(p, (size_t)(e - p), "_generation_prompt", 18))
            for (const char *const *w = k_chat; *w; w++)
                if (memmem(p, (size_t)(e - p), *w, strlen(*w))) return 1;
        if (go) markup += curly; /* a Go template: its bare `{{ x }}` lines are code too */
        if (sections && sentences < 3) markup += sections; /* XML data, not a prompt in sections */
        return markup * 3 < lines && sentences >= 1 && (sentences >= 3 || sentences * 4 >= lines - bare);
    }
    if (log_text(p, e)) return 0;
    return addressed_to_model(p, e, 10);
}

int lint_parse_size(size_t *out, const char *s) {
    *out = 0;
    if (!s || !isdigit((unsigned char)*s)) return UTIL_EINVAL;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if ((*end == 'i' || *end == 'I') && shift) end++;
    if ((*end == 'b' || *end == 'B')) end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift)) return UTIL_EINVAL;
    *out = (size_t)(v << shift);
    return UTIL_OK;
}
