/* linter/lint.h: promptlint's public API. A lint context holds the compiled
 * detection patterns, the config cache and the (optional) tokenizer; findings
 * are collected into a lint_report the caller owns and prints with
 * lint_output(). Does not print, exit or read the command line (main.c does). */
#ifndef LINT_H
#define LINT_H

/* Inside linter/, a module calls and includes only modules above it in this
 * list, never one below (no cycles; nm on the objects under build/linter shows it):
 *   lint_registry.c  rule table, change classes and kinds, rule docs (--explain)
 *   lint_text.c      a file as lines, code ranges, UTF-8 and binary checks
 *   lint_tokens.c    token counts (engine tokenizer or estimate)
 *   lint_report.c    findings: add, sort, count; suppression ranges
 *   lint_config.c    .promptlint.json, defaults, roles, globs
 *   lint_detect.c    volatile spans, order-unstable constructs, suppression comments
 *   lint_rules.c     the rules pass (given the patterns, a token counter, the options)
 *   lint_ctx.c       the context: config search, tokenizer, lint one buffer
 *   lint_walk.c lint_git.c lint_diff.c   paths, the git index and hook, diff
 *   lint_output.c    text, JSON, SARIF
 *   main.c           the command line
 * Each has a private header beside it (lint_<name>.h; none for walk, git,
 * diff and output, whose API is here). util/skillmd checks SKILL.md (PL005). */

#include <stddef.h>
#include <stdio.h>

#include "../util/err.h"

/* --- rules ------------------------------------------------------------- */

typedef enum lint_severity { LINT_INFO = 0, LINT_WARNING = 1, LINT_ERROR = 2 } lint_severity;

typedef enum lint_rule_id {
    LINT_R_VOLATILE_BEFORE_STABLE = 0, /* PL001 */
    LINT_R_VOLATILE_IN_STABLE_FILE,    /* PL002 */
    LINT_R_SUBDAY_TIME,                /* PL003 */
    LINT_R_UNSTABLE_ORDER,             /* PL004 */
    LINT_R_SKILL_FRONTMATTER,          /* PL005 */
    LINT_R_INVALID_UTF8,               /* PL006 */
    LINT_R_UNUSED_SUPPRESSION,         /* PL007 */
    LINT_R_UNKNOWN_PLACEHOLDER,        /* PL008 */
    LINT_R_COUNT
} lint_rule_id;

typedef struct lint_rule_info {
    const char *code; /* "PL001" */
    const char *name; /* "volatile-before-stable" */
    lint_severity severity;
    const char *summary; /* one line, used when the rule docs are not installed */
} lint_rule_info;

/* Static table entry for id; NULL when out of range. */
const lint_rule_info *lint_rule_get(int id);
/* Rule id for a code ("PL001", case-insensitive) or name; UTIL_ENOTFOUND if
 * unknown. */
int lint_rule_find(const char *code_or_name, size_t len);
/* Parses a comma/space separated list of codes into a bitmask (bit = rule id).
 * "ALL" selects every rule. Returns UTIL_EINVAL naming the unknown code. */
int lint_rule_parse_list(unsigned *out, const char *list, util_err *err);
const char *lint_severity_name(lint_severity s);

/* --- findings ------------------------------------------------------------ */

typedef struct lint_finding {
    char *file;       /* display path (relative when the input was relative) */
    int line, column; /* 1-based; column counts Unicode code points */
    int end_line, end_column;
    int rule; /* lint_rule_id */
    lint_severity severity;
    char *message;
    long tokens_lost; /* PL001 only; -1 elsewhere */
    int tokens_estimated;
    char *source; /* the source line, for the caret display (may be NULL) */
} lint_finding;

/* Why a file was not linted (counted per kind in the report). */
typedef enum lint_skip_kind {
    LINT_SKIP_NOT_PROMPT = 0, /* walking: not a prompt by name, extension or content */
    LINT_SKIP_EXCLUDED,       /* config "exclude" */
    LINT_SKIP_IGNORED,        /* config role "ignore" */
    LINT_SKIP_BINARY,         /* a NUL byte in the first 8 KiB */
    LINT_SKIP_TOO_LARGE,      /* over the size cap */
    LINT_SKIP_SPECIAL,        /* not a regular file (FIFO, device, socket) */
    LINT_SKIP_SYMLINK,        /* a symlink that leaves the linted tree */
    LINT_SKIP_DOCUMENT,       /* walking: Markdown in docs/, adr/ ... not addressed to a model */
    LINT_SKIP_COUNT
} lint_skip_kind;

/* "not a prompt", "binary", ... */
const char *lint_skip_name(int kind);

typedef struct lint_report {
    lint_finding *items;
    size_t n, cap;
    size_t files_checked;
    size_t files_skipped; /* sum of skipped[] */
    size_t skipped[LINT_SKIP_COUNT];
    char **notes; /* warnings about files not linted (malloc'd) */
    size_t n_notes;
    int walked;           /* a directory or the index was searched for prompts */
    size_t unlisted[3];   /* findings past LINT_MAX_LISTED in a file, by severity:
                                        * counted (lint_report_count), not listed */
    int tokens_estimated; /* 1 when any count came from the estimate */
} lint_report;

/* A file lists at most this many findings; the rest are counted by severity
 * (a note names the file), so memory and output stay bounded on a file that
 * is volatile on every line. */
#define LINT_MAX_LISTED 1000

void lint_report_init(lint_report *r);
void lint_report_release(lint_report *r);
/* Counts a skipped file; with a note (printf-style, may be NULL) that the
 * command line prints as a warning. UTIL_OK or UTIL_ENOMEM. */
int lint_report_skip(lint_report *r, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds a note (printf-style) that the command line prints as a warning.
 * UTIL_OK or UTIL_ENOMEM. */
int lint_report_note(lint_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sorts by file, line, column, rule (stable output for diffs and tests). */
void lint_report_sort(lint_report *r);
/* Findings of severity s, the unlisted ones included. */
size_t lint_report_count(const lint_report *r, lint_severity s);

/* --- context ------------------------------------------------------------ */

typedef struct lint_ctx lint_ctx;

typedef struct lint_options {
    const char *config_path;  /* use this config for every file (no upward search) */
    int no_config;            /* ignore .promptlint.json files */
    unsigned select_override; /* nonzero: replaces the config's select */
    unsigned ignore_extra;    /* added to the config's ignore */
    const char *model_path;   /* NULL: $CACHET_MODEL, then the default model */
    int no_model;             /* estimate tokens, never load a model */
    const char *exe_path;     /* argv[0] resolved; used to find data files */
    size_t max_file_size;     /* nonzero: replaces the config's max_file_size */
    int prompts_only;         /* files named explicitly are selected like walked ones */
} lint_options;

/* Parses a size: a number of bytes with an optional K, M or G suffix (powers
 * of 1024; "64K", "16M"). UTIL_EINVAL when it is not one or is 0. */
int lint_parse_size(size_t *out, const char *s);

/* The size cap when neither --max-file-size nor a config sets one. */
#define LINT_DEFAULT_MAX_FILE_SIZE ((size_t)16 << 20)

/* Creates a context (compiles patterns; the model is loaded lazily, only when
 * a finding needs a token count). Caller frees with lint_ctx_free. */
int lint_ctx_new(lint_ctx **out, const lint_options *opt, util_err *err);
void lint_ctx_free(lint_ctx *ctx);

/* Lints one buffer. display is the path printed in findings; path (may equal
 * display) locates the config and decides the file's role, relative paths
 * being taken from the current directory. Returns UTIL_OK or a config error. */
int lint_check_buffer(lint_ctx *ctx, lint_report *rep, const char *display, const char *path,
                      const char *data, size_t len, util_err *err);

/* Lints files and directories (walked in sorted order, .gitignore respected
 * inside a repository). Files found by walking are linted when they are
 * prompts by name, extension or content (lint_config_select; skipped kinds
 * are counted in rep). Files named explicitly are always linted (unless
 * opt.prompts_only): a named FIFO, device, binary file or one over the size
 * cap is an error (UTIL_EINVAL with a message). Symlinks that leave the tree (the walked directory; the current
 * directory for named files) are not followed: a note names them. Every
 * file is opened with O_NONBLOCK, checked with fstat and read up to the cap. */
int lint_check_paths(lint_ctx *ctx, lint_report *rep, const char *const *paths, size_t n, util_err *err);

/* Lints the staged (index) content of files added, copied, renamed or modified
 * relative to HEAD in the repository containing repo_dir. Paths filter it
 * (prefixes relative to the work tree root) when n > 0. */
int lint_check_staged(lint_ctx *ctx, lint_report *rep, const char *repo_dir, const char *const *paths,
                      size_t n, util_err *err);

/* Token count of a text: exact when a model is loaded, else estimated
 * (*estimated set to 1). */
long lint_count_tokens(lint_ctx *ctx, const char *text, size_t len, int *estimated);
/* Describes the token source: "model 'x.gguf'" or "estimate (no model)". */
const char *lint_token_source(lint_ctx *ctx);

/* --- rule documentation ------------------------------------------------- */

/* Reads the markdown for rule id from the rules directory (see docs/promptlint.md
 * for the search order) into a malloc'd string (caller frees). Returns
 * UTIL_ENOTFOUND when no directory holds it. */
int lint_rule_doc(char **out, const char *exe_path, int id, util_err *err);

/* --- pre-commit ----------------------------------------------------------- */

typedef enum lint_hook_result {
    LINT_HOOK_INSTALLED = 0, /* there was no hook */
    LINT_HOOK_UPDATED,       /* an older promptlint hook was rewritten */
    LINT_HOOK_UNCHANGED,     /* the same hook is already there */
    LINT_HOOK_REPLACED       /* --force: a foreign hook was moved to pre-commit.orig */
} lint_hook_result;

/* Writes the pre-commit hook (running `promptlint --staged`) of the repository
 * containing repo_dir, honouring core.hooksPath. exe_path is written into the
 * hook (NULL: "promptlint" from PATH). A foreign hook is an error (UTIL_EINVAL)
 * unless force. hook_path (may be NULL) receives the hook's path. */
int lint_hook_install(int *result, char *hook_path, size_t cap, const char *repo_dir, const char *exe_path,
                      int force, util_err *err);

/* --- output ---------------------------------------------------------------- */

typedef enum lint_format { LINT_FMT_TEXT = 0, LINT_FMT_JSON, LINT_FMT_SARIF } lint_format;

typedef struct lint_output_opts {
    lint_format format;
    int color;                /* ANSI colour (text only) */
    int quiet;                /* text: no summary line */
    const char *exe_path;     /* for rule help text in SARIF */
    const char *token_source; /* "model '...'" or "estimate (...)" */
} lint_output_opts;

/* Prints the (sorted) report. Returns UTIL_OK or UTIL_EIO/UTIL_ENOMEM. */
int lint_output(FILE *f, const lint_report *r, const lint_output_opts *o, util_err *err);

/* --- diff of two rendered prompts ------------------------------------------- */

typedef struct lint_diff {
    int identical;
    int extends; /* B starts with all of A: A's cache serves B's prefix */
    size_t byte; /* first divergent byte of the rendered texts */
    int line_a, col_a, line_b, col_b;
    long token;              /* index of the first divergent token */
    long tokens_a, tokens_b; /* token counts of the whole texts */
    long tokens_uncached;    /* tokens of B from the divergence on */
    int tokens_estimated;
    int rendered_json;                   /* the inputs were OpenAI chat request bodies */
    char where[128];                     /* JSON inputs: "messages[0].content (system)" */
    char context_a[200], context_b[200]; /* text around the divergence, escaped */
    char cause[256];                     /* the volatile field that most likely caused it, or "" */
} lint_diff;

/* Compares two rendered prompts (plain text, or JSON chat request bodies that
 * are rendered to ChatML-style text first). */
int lint_diff_texts(lint_ctx *ctx, lint_diff *out, const char *a, size_t al, const char *b, size_t bl,
                    util_err *err);
int lint_diff_print(FILE *f, const lint_diff *d, const char *name_a, const char *name_b, int json,
                    util_err *err);

#endif
