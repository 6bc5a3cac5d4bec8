/* linter/lint_config.c: .promptlint.json (cJSON): rule selection, per-glob
 * roles, extra volatile patterns and placeholder names, boundary markers,
 * prompt globs and excludes; the built-in defaults; glob matching, the
 * role of a file by its name, and whether a walked file is a prompt by its
 * name or path, or is to be read (lint_sniff.c reads its text). Does not
 * search directories (lint_ctx.c). */
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
           sel == LINT_SEL_DATA_PROSE || sel == LINT_SEL_TEXT || sel == LINT_SEL_DOC;
}

/* Whether a prose file's name is a project file's (README.md, CHANGELOG.md,
 * LICENSE.txt, CONTRIBUTING-ja.md ...): never a prompt. */
static int project_file(const char *b) {
    for (const char *const *n = k_not_prompts; *n; n++) {
        size_t l = strlen(*n);
        if (strncasecmp(b, *n, l) == 0 && (b[l] == '.' || b[l] == '-' || b[l] == '_')) return 1;
    }
    return 0;
}

/* Whether rel lies in a documentation folder: a folder named docs, doc,
 * documentation, wiki, adr(s), decisions, rfc(s), proposals, design-docs or
 * workorders (any case), with no folder below it whose name holds the word
 * "prompt" (docs/prompt_templates/ holds prompts). What such a folder holds
 * is written about the project (decision records, RFCs, work orders, guides)
 * and names prompts, the user and tools without being addressed to a model. */
static int doc_folder(const char *rel) {
    static const char *const k_doc_dirs[] = {
        "docs", "doc",  "documentation", "wiki",        "adr",        "adrs",        "decisions",
        "rfc",  "rfcs", "proposals",     "design-docs", "workorders", "work-orders", NULL};
    const char *b = strrchr(rel, '/');
    int in = 0;
    for (const char *c = rel; b && c < b;) {
        const char *s = memchr(c, '/', (size_t)(b - c) + 1);
        size_t l = (size_t)(s - c);
        if (in && prompt_word(c, l)) return 0;
        for (const char *const *d = k_doc_dirs; *d && !in; d++)
            in = strlen(*d) == l && strncasecmp(c, *d, l) == 0;
        c = s + 1;
    }
    return in;
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
    int by_text = c->content_detection ? LINT_SEL_TEXT : LINT_SEL_YES; /* unless an env file */
    for (size_t i = 0; i < c->n_prompt_globs; i++)
        if (lint_glob_match(c->prompt_globs[i], rel)) return !text ? LINT_SEL_NO : by_text;
    size_t bl = strlen(b);
    for (const char *const *d = k_prompt_dirs; *d; d++) {
        const char *at = strstr(rel, *d);
        if (at && (at == rel || at[-1] == '/') && text) return LINT_SEL_YES;
    }
    /* Markdown in docs/, adr/ ...: by its text, whatever its name says
     * (005-prompt-construction.md is a decision record) */
    static const char *const k_md_ext[] = {".md", ".markdown", ".mdx", NULL};
    if (c->content_detection && lint_name_ends_with(b, k_md_ext) && doc_folder(rel))
        return project_file(b) ? LINT_SEL_NO : LINT_SEL_DOC;
    /* a name that says so: Prompt.txt, system_prompt.md, "Agent Prompt v1.2.txt" */
    for (size_t i = 0; i + 6 <= bl; i++)
        if (strncasecmp(b + i, "prompt", 6) == 0 &&
            (lint_name_ends_with(b, k_prose_ext) || lint_name_ends_with(b, k_tmpl_ext) ||
             lint_name_ends_with(b, k_engine_ext)))
            return by_text;
    if (ends_ci(b, bl, ".md.tpl") || ends_ci(b, bl, ".txt.tpl"))
        return project_template(b) ? LINT_SEL_NO : LINT_SEL_TEMPLATE;
    if (lint_name_ends_with(b, k_tmpl_ext))
        return rendered_code(b) || project_template(b) ? LINT_SEL_NO : LINT_SEL_TEMPLATE;
    if (lint_name_ends_with(b, k_engine_ext)) /* app.html.erb, mail.vm: not prompts; system.txt.erb may be */
        return !c->content_detection || rendered_code(b) || project_template(b) ? LINT_SEL_NO
                                                                                : LINT_SEL_CONTENT;
    if (lint_name_ends_with(b, k_prose_ext)) {
        if (!c->content_detection) return LINT_SEL_NO;
        return project_file(b) ? LINT_SEL_NO : LINT_SEL_CONTENT;
    }
    return LINT_SEL_NO;
}

int lint_config_is_prompt(const lint_config *c, const char *rel) {
    int sel = lint_config_select(c, rel);
    return sel == LINT_SEL_YES || sel == LINT_SEL_TEXT;
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
