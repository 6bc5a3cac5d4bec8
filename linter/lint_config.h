/* linter/lint_config.h: .promptlint.json, the default config, file roles and
 * globs (lint_config.c). Calls only the registry (rule lists) below it; does
 * not search directories for configs (lint_ctx.h). Private to linter/. */
#ifndef LINT_CONFIG_H
#define LINT_CONFIG_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>

#include "lint.h"

/* --- roles and config ------------------------------------------------------ */
typedef enum lint_role {
    LINT_ROLE_PROMPT = 0, /* ordinary prompt text */
    LINT_ROLE_STABLE,     /* AGENTS.md, SOUL.md, IDENTITY.md: cached as tier 0 */
    LINT_ROLE_SKILL,      /* SKILL.md: stable, plus frontmatter checks */
    LINT_ROLE_USER,       /* USER.md: per-user content is expected */
    LINT_ROLE_DYNAMIC,    /* rendered per turn/session: only order rules apply */
    LINT_ROLE_IGNORE,     /* not linted */
    LINT_ROLE_COUNT
} lint_role;

int lint_role_parse(const char *s); /* a lint_role, or UTIL_ENOTFOUND */
const char *lint_role_name(int role);

typedef struct lint_custom_pattern {
    char *name;
    pcre2_code *re;
    int vclass;
    int subday;
} lint_custom_pattern;

typedef struct lint_name_class {
    char *name;
    int vclass; /* LINT_VC_NONE marks a name as stable */
} lint_name_class;

typedef struct lint_glob_role {
    char *glob;
    int role;
} lint_glob_role;

typedef struct lint_config {
    char *path; /* the file it came from, or NULL for the defaults */
    char *dir;  /* globs are relative to this directory ("" for defaults) */
    unsigned select, ignore;
    lint_glob_role *roles;
    size_t n_roles;
    lint_custom_pattern *patterns;
    size_t n_patterns;
    lint_name_class *names;
    size_t n_names;
    char **markers;
    size_t n_markers;
    char **prompt_globs;
    size_t n_prompt_globs;
    char **exclude;
    size_t n_exclude;
    size_t max_file_size;  /* 0: not set here */
    int content_detection; /* select .md/.txt files that read like prompts (default on) */
} lint_config;

int lint_config_defaults(lint_config **out, util_err *err);
/* Parses JSON text (path names it in messages; dir anchors its globs). */
int lint_config_parse(lint_config **out, const char *json, size_t len, const char *path, const char *dir,
                      util_err *err);
int lint_config_load(lint_config **out, const char *path, util_err *err);
void lint_config_free(lint_config *c);
/* Rule ids enabled for this config (select minus ignore), as a bitmask. */
unsigned lint_config_enabled(const lint_config *c);
/* Role of a file: config globs first, then the file name. rel is the path
 * relative to the config's directory. */
int lint_config_role(const lint_config *c, const char *rel);
/* Whether a walked (not explicitly named) file is a prompt by its name or
 * a glob alone (its content only read to rule out an environment file). */
int lint_config_is_prompt(const lint_config *c, const char *rel);
/* Whether name ends with one of the NULL-ended suffixes (any case) and is
 * longer than it (".md" is not a Markdown file's name). */
int lint_name_ends_with(const char *name, const char *const *suffixes);

/* Directory mode's decision for a file found by walking or in the index. */
typedef enum lint_select {
    LINT_SEL_NO = 0,     /* not a prompt (by name and extension) */
    LINT_SEL_YES,        /* a prompt by name, extension, glob or role */
    LINT_SEL_CONTENT,    /* prose (.md, .txt): a prompt if it reads like one */
    LINT_SEL_TEMPLATE,   /* a template extension: a prompt unless it is markup or code */
    LINT_SEL_DATA,       /* YAML/JSON/TOML where the path says prompts: a prompt if a
                          prompt key's text reads like one */
    LINT_SEL_DATA_PROSE, /* YAML/TOML elsewhere: a prompt if a prompt key holds long
                            prose that reads like one, and the file is no CI, compose
                            or Kubernetes config */
    LINT_SEL_TEXT,       /* a text file a prompt glob (a prompts/ folder) or a name holding
                            "prompt" selects: a prompt unless it is an environment
                            file (KEY=value lines) */
    LINT_SEL_DOC,        /* Markdown in a documentation folder (docs/, adr/, rfcs/
                            ...): a prompt only if it opens addressed to a model or
                            has a command's front matter */
    LINT_SEL_EXCLUDED,   /* config "exclude" */
    LINT_SEL_IGNORED     /* config role "ignore" */
} lint_select;
int lint_config_select(const lint_config *c, const char *rel);
int lint_sel_reads(int sel); /* whether sel is decided by lint_reads_like_prompt */
int lint_config_excluded(const lint_config *c, const char *rel);

/* Glob match with '*', '?', '[...]' and '**' (any number of directories).
 * A pattern without '/' matches the base name. */
int lint_glob_match(const char *pat, const char *path);

#endif
