/* linter/lint_impl.h: structures shared by the linter's files (detection
 * spans, the line index, configs, the context). Used only inside linter/;
 * everything outside sees lint.h. Does not declare output or CLI code. */
#ifndef LINT_IMPL_H
#define LINT_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/buf.h"
#include "lint.h"

/* --- how often a volatile value changes (higher = more often) ------------ */
typedef enum lint_vclass {
    LINT_VC_NONE = 0,
    LINT_VC_USER,    /* per user: names, e-mail, home paths */
    LINT_VC_DAY,     /* per day: dates, weekdays */
    LINT_VC_SESSION, /* per session: session ids, cwd, git branch, hosts */
    LINT_VC_TURN,    /* per turn: retrieved text, history, counters */
    LINT_VC_CALL,    /* per call: times, timestamps, request ids, nonces */
    LINT_VC_COUNT
} lint_vclass;

const char *lint_vclass_name(int vc); /* "per-day", ... */

/* --- what a span is -------------------------------------------------------- */
typedef enum lint_kind {
    LINT_K_PLACEHOLDER = 0,
    LINT_K_DATE,
    LINT_K_DATETIME,
    LINT_K_TIME,
    LINT_K_WEEKDAY,
    LINT_K_TIMESTAMP,
    LINT_K_RELTIME,
    LINT_K_UUID,
    LINT_K_ID,
    LINT_K_NONCE,
    LINT_K_HASH,
    LINT_K_NAME,
    LINT_K_HOME,
    LINT_K_HOST,
    LINT_K_IP,
    LINT_K_COUNTER,
    LINT_K_GREETING,
    LINT_K_CUSTOM,
    LINT_K_COUNT
} lint_kind;

const char *lint_kind_name(int kind); /* "date", "placeholder", ... */

typedef struct lint_span {
    size_t start, end; /* byte offsets into the file */
    int kind;          /* lint_kind */
    int vclass;        /* lint_vclass */
    int subday;        /* finer than a day (PL003) */
    const char *label; /* custom pattern name, or NULL */
} lint_span;

typedef struct lint_spanv {
    lint_span *v;
    size_t n, cap;
} lint_spanv;

int lint_spanv_push(lint_spanv *sv, const lint_span *s);
void lint_spanv_release(lint_spanv *sv);

/* --- the file as lines ----------------------------------------------------- */
enum {
    LINT_LF_FENCE = 1,      /* inside a fenced code block or its fence line */
    LINT_LF_BOUNDARY = 2,   /* a cache-boundary marker line */
    LINT_LF_DIRECTIVE = 4,  /* a promptlint suppression comment, alone on its line */
    LINT_LF_NO_OUTPUT = 8,  /* renders to nothing: jinja statement/comment only */
    LINT_LF_FRONTMATTER = 16,
};

typedef struct lint_range {
    size_t start, end;
} lint_range;

typedef struct lint_text {
    const char *data;
    size_t len;
    size_t *line_start; /* n_lines + 1 entries; the last is len (+1) */
    size_t n_lines;
    unsigned char *flags; /* per line, LINT_LF_* */
    lint_range *code;     /* sorted, disjoint: fenced blocks and inline code */
    size_t n_code, cap_code;
    int is_template;      /* jinja/mustache placeholders render inside code too */
    size_t boundary_line; /* first boundary line index, or n_lines */
} lint_text;

int lint_text_init(lint_text *t, const char *data, size_t len, const char *const *markers,
                   size_t n_markers, int is_template);
void lint_text_release(lint_text *t);
size_t lint_text_line_of(const lint_text *t, size_t off);   /* 0-based */
size_t lint_text_line_end(const lint_text *t, size_t line); /* offset of '\n' or len */
int lint_text_in_code(const lint_text *t, size_t off);
/* 1-based column in code points of byte offset off on its line. */
int lint_text_column(const lint_text *t, size_t off);

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

int lint_role_parse(const char *s);  /* -1 if unknown */
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
} lint_config;

int lint_config_defaults(lint_config **out, util_err *err);
/* Parses JSON text (path names it in messages; dir anchors its globs). */
int lint_config_parse(lint_config **out, const char *json, size_t len, const char *path,
                      const char *dir, util_err *err);
int lint_config_load(lint_config **out, const char *path, util_err *err);
void lint_config_free(lint_config *c);
/* Rule ids enabled for this config (select minus ignore), as a bitmask. */
unsigned lint_config_enabled(const lint_config *c);
/* Role of a file: config globs first, then the file name. rel is the path
 * relative to the config's directory. */
int lint_config_role(const lint_config *c, const char *rel);
/* Whether a walked (not explicitly named) file should be linted. */
int lint_config_is_prompt(const lint_config *c, const char *rel);
int lint_config_excluded(const lint_config *c, const char *rel);

/* Glob match with '*', '?', '[...]' and '**' (any number of directories).
 * A pattern without '/' matches the base name. */
int lint_glob_match(const char *pat, const char *path);

/* --- detection --------------------------------------------------------------- */
typedef struct lint_detect lint_detect;

int lint_detect_new(lint_detect **out, util_err *err);
void lint_detect_free(lint_detect *d);
/* Finds volatile spans in t, sorted by start, overlaps merged. */
int lint_detect_spans(const lint_detect *d, const lint_config *cfg, const lint_text *t,
                      lint_spanv *out, util_err *err);
/* Class of a placeholder name (after config overrides); LINT_VC_NONE if stable
 * or unknown. *subday is set for time-like names. */
int lint_detect_name_class(const lint_detect *d, const lint_config *cfg, const char *name,
                           size_t len, int *subday);

/* Order-unstable constructs (PL004): appends spans (kind unused) with a
 * reason string index in vclass. */
typedef struct lint_order_hit {
    size_t start, end;
    int why; /* LINT_ORDER_* */
    char detail[96];
} lint_order_hit;

enum { LINT_ORDER_MAP_LOOP = 0, LINT_ORDER_GLOB, LINT_ORDER_TOOLS_LOOP, LINT_ORDER_TOOL_LIST };

int lint_detect_order(const lint_detect *d, const lint_text *t, lint_order_hit **out, size_t *n,
                      util_err *err);

/* Suppression directives found on a line. */
typedef struct lint_directive {
    size_t line;     /* 0-based line of the comment */
    int kind;        /* LINT_DIR_* */
    unsigned codes;  /* bitmask; all ones when no code was given */
    char bad[32];    /* first unknown code, or "" */
    int alone;       /* the comment is the whole line */
    int used;
    size_t from, to; /* lines covered, inclusive (filled by the rules pass) */
} lint_directive;

enum { LINT_DIR_DISABLE = 0, LINT_DIR_ENABLE, LINT_DIR_NEXT_LINE, LINT_DIR_LINE, LINT_DIR_FILE };

int lint_detect_directives(const lint_detect *d, const lint_text *t, lint_directive **out,
                           size_t *n, util_err *err);

/* --- tokens ------------------------------------------------------------------ */
typedef struct lint_tok lint_tok;

int lint_tok_new(lint_tok **out, const char *model_path, int no_model, const char *exe_path);
void lint_tok_free(lint_tok *t);
long lint_tok_count(lint_tok *t, const char *text, size_t len, int *estimated);
const char *lint_tok_source(lint_tok *t);
/* Token ids (malloc'd, caller frees); UTIL_ENOTFOUND when no model is loaded. */
int lint_tok_ids(lint_tok *t, const char *text, size_t len, int32_t **ids, size_t *n);
long lint_tok_estimate(const char *text, size_t len);

/* --- the context --------------------------------------------------------------- */
typedef struct lint_cfg_cache_entry {
    char *dir;
    lint_config *cfg; /* borrowed from owned[] or the defaults */
} lint_cfg_cache_entry;

struct lint_ctx {
    lint_options opt;
    lint_detect *det;
    lint_tok *tok;
    lint_config *defaults;
    lint_config *forced;
    lint_config **owned;
    size_t n_owned, cap_owned;
    lint_cfg_cache_entry *cache;
    size_t n_cache, cap_cache;
};

/* Config for a file path (searching upward, cached); *rel gets the path
 * relative to the config's directory (malloc'd, caller frees). */
int lint_ctx_config_for(lint_ctx *ctx, const char *path, lint_config **cfg, char **rel,
                        util_err *err);

/* --- the rules pass (lint_rules.c) --------------------------------------------- */

/* A token counter: count(user, text, len, &estimated) returns the number of
 * tokens of text and sets *estimated to 1 when the number is an estimate. */
typedef struct lint_counter {
    long (*count)(void *user, const char *text, size_t len, int *estimated);
    void *user;
} lint_counter;

/* What the rules need besides the file: the compiled patterns, a token counter
 * and the options (select_override and ignore_extra are read). Borrowed. */
typedef struct lint_rules_env {
    const lint_detect *det;
    lint_counter tokens;
    const lint_options *opt;
} lint_rules_env;

/* One file for the rules pass. */
typedef struct lint_rules_file {
    const lint_config *cfg; /* the config that governs it */
    int role;               /* lint_role */
    const char *display;    /* path printed in findings */
    const char *rel;        /* path relative to the config's directory */
    const char *data;       /* the bytes (may be NULL when len is 0) */
    size_t len;
} lint_rules_file;

/* Runs every enabled rule on one file and appends its findings to rep. */
int lint_rules_run(lint_report *rep, const lint_rules_env *env, const lint_rules_file *file,
                   util_err *err);

/* --- report internals (lint_report.c) ------------------------------------------ */

/* Appends a copy of *f (its strings are copied; source may be NULL). The
 * caller fills every field, severity included. Returns UTIL_EINVAL for a rule
 * out of range or a missing file or message, UTIL_ENOMEM. */
int lint_report_add(lint_report *r, const lint_finding *f);
/* Fills each directive's covered lines (from, to) in a file of n_lines lines. */
void lint_suppress_ranges(lint_directive *d, size_t n, size_t n_lines);
/* Whether a finding of rule on line (0-based) is suppressed; marks the
 * directives that suppress it as used. */
int lint_suppressed(lint_directive *d, size_t n, size_t line, int rule);

/* First invalid UTF-8 byte offset, or len if valid. */
size_t lint_utf8_check(const char *s, size_t len);
/* Whether the buffer looks binary (NUL bytes in the first 8 KiB). */
int lint_is_binary(const char *s, size_t len);

#endif
