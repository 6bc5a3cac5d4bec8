/* linter/lint_text.h: a file as lines (line starts, per-line flags, code
 * ranges, the cache boundary, frontmatter, example blocks and the few-shot
 * turns of a message list), the ranges that
 * render nothing where they stand (filled by lint_tmpl.c), and UTF-8/binary
 * checks (lint_text.c). Calls nothing else in linter/. Does not detect
 * volatile content. Private to linter/. */
#ifndef LINT_TEXT_H
#define LINT_TEXT_H

#include <stddef.h>

#include "../util/err.h"

/* --- the file as lines ----------------------------------------------------- */
enum {
    LINT_LF_FENCE = 1,        /* inside a fenced code block or its fence line */
    LINT_LF_BOUNDARY = 2,     /* a cache-boundary marker line */
    LINT_LF_DIRECTIVE = 4,    /* a promptlint suppression comment, alone on its line */
    LINT_LF_NO_OUTPUT = 8,    /* renders to nothing: jinja statement/comment only */
    LINT_LF_FRONTMATTER = 16, /* YAML frontmatter: metadata, not prompt text */
    LINT_LF_EXAMPLE = 32,     /* inside an example block (<example>, "Example:" ... blank, few-shot turns) */
    LINT_LF_PREFILL = 64,     /* after the last role marker, an assistant's: a prefill */
    LINT_LF_FENCE_MARK = 128, /* a fence line itself (```lang): markup, not prompt text */
};

/* The template dialect of a file, and so its semantics (lint_tmpl.c decides). */
typedef enum lint_tmpl_mode {
    LINT_TMPL_NONE = 0, /* plain text or markdown: placeholders in code are examples */
    LINT_TMPL_RENDERS,  /* a template: its tags render inside code fences too */
} lint_tmpl_mode;

typedef struct lint_order {
    size_t prompt, pos;
} lint_order;
#define LINT_NO_PROMPT ((size_t)-1)

typedef struct lint_range {
    size_t start, end;
} lint_range;

enum { LINT_VERBATIM_SKILL = 1, LINT_VERBATIM_PLAIN = 2 };

/* The speaker tokens a file declares as text the model writes ("start with
 * \"{user}:\""), and the runs of example turns whose lines open with a
 * speaker's field ({{$user}}, {{$bot}}): each found by one pass over the
 * file the first time a token asks (lint_detect_declared_token), then
 * looked up. */
typedef struct lint_role_decls {
    int scanned; /* 1 once the file was read */
    int n;
    struct {
        int braces;   /* {user}: 1, {{char}}: 2 */
        size_t len;   /* of key */
        char key[32]; /* lower case, spaces dropped */
    } v[16];
    int labels_scanned; /* 1 once the file was read for speaker labels */
    int n_runs;
    struct {
        size_t first, last; /* lines of the first and last label */
    } runs[16];
} lint_role_decls;

typedef struct lint_text {
    const char *data;
    size_t len;
    size_t *line_start; /* n_lines + 1 entries; the last is len (+1) */
    size_t n_lines;
    unsigned char *flags; /* per line, LINT_LF_* */
    lint_range *code;     /* sorted, disjoint: fenced blocks and inline code */
    size_t n_code, cap_code;
    int is_template;      /* jinja/mustache placeholders render inside code too */
    int curly_only;       /* a template by its extension: only its own tags render, so
                           * {x}, ${x}, $x and %(x)s are literal text there */
    int fill_ins;         /* markdown, not a template: {x}, ${x} in prose are fill-ins
                           * for the model or documentation, not render-time fields */
    int command_file;     /* markdown in a commands/ folder (Claude Code commands):
                           * $ARGUMENTS is filled in there even inside code */
    int memory_file;      /* AGENTS.md, CLAUDE.md, GEMINI.md, README.md: loaded or read as
                           * written; a $ARGUMENTS there documents the syntax */
    int skill_file;       /* SKILL.md or a skill's other Markdown (skills/NAME/...):
                           * $ARGUMENTS in its prose is filled in */
    int claude_live;      /* a Claude Code command or skill (commands/ folder, SKILL.md,
                           * or front matter with allowed-tools:/argument-hint:):
                           * its !`cmd` runs even inside a fenced block */
    int program_template; /* not a template by its tags, but a program's template by
                           * its folder (prompts/) or as a YAML prompt file: a {x}
                           * field that is a whole inline code span is filled in
                           * there too */
    int verbatim;         /* LINT_VERBATIM_*: a file an agent loads as written (SKILL.md,
                           * a subagent or custom agent, a VS Code instructions or chat
                           * mode file, a skill's reference): nothing renders its {x},
                           * {{x}}, ${X} or {% %}; in SKILL.md Claude Code fills in
                           * $ARGUMENTS, and !`cmd` output is volatile in all */
    int vscode_prompt;    /* a VS Code prompt file (*.prompt.md): ${file}, ${selection},
                           * ${workspaceFolder}, ${input:x} are filled in, even in code */
    int js_fields;        /* fields written as JavaScript interpolations (${X}, two
                           * distinct names, no {{ }} or {% %}): only ${...} is
                           * filled in, a bare {x} or $x there is text */
    int plain_markdown;   /* Markdown by its name, not a template by its tags, no declared
                           * variables: a {x} segment of a path or route there is a
                           * pattern the model reads when all its {x} are */
    int user_turn;        /* a template of the user message by its name (title.user.md.jinja,
                           * summary-user-message.j2, user_prompt.txt): what it wraps in a
                           * tag block is the request's material */
    size_t boundary_line; /* first boundary line index, or n_lines */
    /* NULL (the file is one prompt, sent in file order), or per line where
     * the line is sent: the prompt it belongs to (LINT_NO_PROMPT for a line
     * of none) and its place in that prompt. Volatile content is judged only
     * against stable content of its own prompt sent after it. An n8n agent
     * node sends its system message before its user text although the file
     * writes the text first (lint_tmpl_data.c sets both); a file of several
     * independent templates (LocalAI's template: map, quoted program
     * templates) keeps file order with one prompt per template
     * (lint_text_own_prompt). Freed by lint_text_release. */
    lint_order *order;
    size_t next_prompt;          /* the id lint_text_own_prompt gives next; 0 until it made t->order */
    lint_role_decls *role_decls; /* owned; filled on first use though t is read-only there */
    /* Fenced blocks that quote a program's prompt template (`x_template =
     * '''...'''` under a text fence): prompt text whose {x} are that
     * program's fields, not fill-ins; each is its own prompt in order. */
    lint_range *fields;
    size_t n_fields, cap_fields;
    /* Set by lint_tmpl.c: bytes that render nothing where they stand (template
     * tags except their visible strings, comments, frontmatter, bodies of
     * loops over volatile data), and every template tag, each sorted and
     * disjoint once lint_text_ranges_finish ran. */
    lint_range *quiet;
    size_t n_quiet, cap_quiet;
    lint_range *tags;
    size_t n_tags, cap_tags;
    /* Set by lint_tmpl.c, per line: how the block tag that opens a line with
     * no text moves a branch (LINT_BR_*); NULL when the file has no tags. */
    signed char *branch;
} lint_text;

/* lint_text.branch: a conditional opens (if, unless, with), another block
 * opens (for, range, each, macro, a section), another branch of the open
 * conditional starts (else, elif), a block closes; 0 for any other line. */
enum { LINT_BR_COND = 3, LINT_BR_ELSE = 2, LINT_BR_OPEN = 1, LINT_BR_CLOSE = -1 };

/* Indexes data (borrowed; must outlive t). Returns UTIL_OK or UTIL_ENOMEM; t is
 * released by lint_text_release either way. */
int lint_text_init(lint_text *t, const char *data, size_t len, const char *const *markers, size_t n_markers,
                   int is_template);
void lint_text_release(lint_text *t);
size_t lint_text_line_of(const lint_text *t, size_t off);   /* 0-based */
size_t lint_text_line_end(const lint_text *t, size_t line); /* offset of '\n' or len */
int lint_text_in_code(const lint_text *t, size_t off);
/* Whether off lies in a fence quoting a program's template (t->fields). */
int lint_text_in_fields(const lint_text *t, size_t off);
/* Whether the placeholder [a, b) lies in an inline code span (not a fence) as
 * a path: the span holds only it (a trailing '/' allowed) or it is the root
 * of a path (`{{home}}/.claude/x.mjs`, `{debug_log_path}`; not the middle of
 * `repos/{owner}/{repo}/pulls`). Such a placeholder is the
 * value the prompt hands the model, not an example of syntax. */
int lint_text_code_path(const lint_text *t, size_t a, size_t b);
/* Length of a collector's stand-in that is the whole of [p, e) (trailing
 * space aside): "{session content}", "{summary — the model's output}", braces
 * around lower-case words with a space and no code punctuation; else 0. */
size_t lint_text_stand_in(const char *p, const char *e);
/* 1-based column in code points of byte offset off on its line. */
int lint_text_column(const lint_text *t, size_t off);

/* Makes lines a..b-1 a prompt of their own (a new id in t->order), sent in
 * file order; the other lines keep theirs (without t->order: one prompt, in
 * file order). A data file holding several independent templates (LocalAI's
 * chat, chat_message, completion, function) is judged template by template
 * so. UTIL_ENOMEM. */
int lint_text_own_prompt(lint_text *t, size_t a, size_t b);

/* Adds [a, b) to t->quiet or t->tags (any order; UTIL_ENOMEM); finish sorts
 * and merges both and must run before the lookups below. */
int lint_text_add_quiet(lint_text *t, size_t a, size_t b);
int lint_text_add_tag(lint_text *t, size_t a, size_t b);
void lint_text_ranges_finish(lint_text *t);
int lint_text_in_quiet(const lint_text *t, size_t off);
int lint_text_in_tag(const lint_text *t, size_t off);
/* Whether the placeholder [a, b) is the name of an XML tag: right after '<'
 * or "</" and right before '>', "/>" or a space and attributes that close
 * on the line (`<${TAG}>`, `</{{ section }}>`, `<{x} id="1">`). Such a
 * variable is markup, not text whose value changes per request. */
int lint_text_tag_name(const lint_text *t, size_t a, size_t b);
/* End of the quiet range holding off, or off when off is not quiet. */
size_t lint_text_quiet_end(const lint_text *t, size_t off);

/* The one lower-bound search over a sorted array of offsets: v holds n
 * elements of stride bytes, each with a size_t at byte key_off (a
 * lint_range's or lint_span's start or end: offsetof), ascending; returns
 * the first index whose key is >= key, or n. */
size_t lint_text_lower_bound(const void *v, size_t n, size_t stride, size_t key_off, size_t key);

/* First invalid UTF-8 byte offset, or len if valid. */
size_t lint_utf8_check(const char *s, size_t len);
/* Whether the buffer looks binary (NUL bytes in the first 8 KiB). */
int lint_is_binary(const char *s, size_t len);

/* A copy of data (len bytes; the caller frees it) with the margin of a log
 * that prefixes every line with its speaker blanked: the role word that
 * opens each line ("SYSTEM ", "USER ") and the log's timestamped headers
 * become spaces, so offsets, lines and columns stay those of data and a
 * line's text starts where its message's line did; a last message that is
 * the user's (the request, after the prompt) is blanked whole. NULL when data is not
 * such a log (fewer than 3 role lines, or a line that is neither a role
 * line, a header nor a separator), or out of memory (*oom set). */
char *lint_text_unmargin(const char *data, size_t len, int *oom);

/* Whether line is a dumped request's cache annotation
 * ("copilot_cache_control: {...}"), which renders no text. */
int lint_text_cache_annotation(const lint_text *t, size_t line);

#endif
