/* agent/shellwords.c: splitting a command line into words as /bin/sh would
 * for a simple command, refusing (by naming it) any shell syntax, and
 * matching run_shell allow rules word by word (see shellwords.h). No
 * expansion, no execution. */
#include "shellwords.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/text.h"

typedef struct scan {
    agent_words *w;
    util_buf word;
    int in_word, quoted; /* a word has started; some of it was quoted */
    int pattern;         /* splitting a rule: unquoted globs stay patterns */
    int first_quoted;    /* the first word had quotes: it cannot be a keyword */
    const char *why;
    int oom;
} scan;

void agent_words_release(agent_words *w) {
    for (size_t i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
    w->v = NULL;
    w->n = 0;
}

/* One literal character of a word; in a rule, characters fnmatch would read
 * as a pattern are escaped so they match only themselves. */
static void put(scan *s, char c) {
    s->in_word = 1;
    if (s->pattern && strchr("*?[]\\", c) && util_buf_append(&s->word, "\\", 1)) s->oom = 1;
    if (util_buf_append(&s->word, &c, 1)) s->oom = 1;
}

static void end_word(scan *s) {
    if (!s->in_word) return;
    char **v = realloc(s->w->v, (s->w->n + 2) * sizeof *v);
    char *d = v ? strndup(s->word.data ? s->word.data : "", s->word.len) : NULL;
    if (v) s->w->v = v;
    if (!d) {
        s->oom = 1;
        return;
    }
    if (s->w->n == 0) s->first_quoted = s->quoted;
    v[s->w->n++] = d;
    v[s->w->n] = NULL;
    s->word.len = 0;
    s->in_word = s->quoted = 0;
}

/* 1 when the word so far is a shell variable name (then '=' assigns). */
static int is_name(const util_buf *b) {
    if (!b->len || (b->data[0] >= '0' && b->data[0] <= '9')) return 0;
    for (size_t i = 0; i < b->len; i++) {
        char c = b->data[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* What an unquoted character means to the shell, or NULL for a plain one. */
static const char *syntax_of(const scan *s, char c) {
    switch (c) {
    case ';': return "';' (a command separator)";
    case '&': return "'&' (a background job or '&&')";
    case '|': return "'|' (a pipe or '||')";
    case '<':
    case '>': return "a redirection ('<' or '>')";
    case '(':
    case ')': return "parentheses (a subshell)";
    case '$': return "'$' (an expansion)";
    case '`': return "'`' (command substitution)";
    case '{':
    case '}': return "braces";
    case '!': return "'!'";
    case '*':
    case '?':
    case '[': return s->pattern ? NULL : "a glob ('*', '?' or '[')";
    case '#': return s->in_word ? NULL : "'#' (a comment)";
    case '~': return s->in_word ? NULL : "'~' (a home directory)";
    case '=': return s->w->n == 0 && !s->quoted && is_name(&s->word) ? "an assignment (NAME=value)" : NULL;
    default: return NULL;
    }
}

/* Scans text into s->w; sets s->why at the first shell feature. */
static void scan_text(scan *s, const char *t) {
    for (const char *p = t; *p && !s->why && !s->oom; p++) {
        char c = *p;
        if (c == ' ' || c == '\t') {
            end_word(s);
        } else if (c == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e) {
                s->why = "an unterminated quote";
                return;
            }
            s->in_word = s->quoted = 1;
            for (p++; p < e; p++) put(s, *p);
        } else if (c == '"') {
            s->in_word = s->quoted = 1;
            for (p++; *p && *p != '"' && !s->why; p++) {
                if (*p == '$' || *p == '`')
                    s->why = *p == '$' ? "'$' (an expansion)" : "'`' (command substitution)";
                else if (*p == '\\' && p[1] && strchr("$`\"\\", p[1]))
                    put(s, *++p);
                else
                    put(s, *p);
            }
            if (!*p && !s->why) s->why = "an unterminated quote";
            if (!*p) return;
        } else if (c == '\\') {
            if (!p[1]) {
                s->why = "a trailing backslash";
                return;
            }
            s->quoted = 1;
            put(s, *++p);
        } else if ((s->why = syntax_of(s, c)) == NULL) {
            if (s->pattern && strchr("*?[", c)) { /* a pattern character, kept as one */
                s->in_word = 1;
                if (util_buf_append(&s->word, &c, 1)) s->oom = 1;
            } else {
                put(s, c);
            }
        }
    }
    if (!s->why) end_word(s);
}

static const char *const k_keywords[] = {"if",   "then",     "else",   "elif",  "fi",    "case",
                                         "esac", "for",      "select", "while", "until", "do",
                                         "done", "function", "time",   "[[",    "]]",    "coproc"};

/* The control characters and invisible ones a terminal would not show as
 * they are: never part of a command a rule may allow (a tab is a blank). */
static const char *hidden_chars(const char *cmd) {
    if (strchr(cmd, '\n')) return "a newline";
    if (strchr(cmd, '\r')) return "a carriage return";
    util_buf b;
    util_buf_init(&b);
    size_t n = util_text_escape(&b, cmd, strlen(cmd), UTIL_ESC_KEEP_LINES);
    util_buf_release(&b);
    return n ? "a control or invisible character" : NULL;
}

static int split(agent_words *w, const char *cmd, int pattern, const char **why) {
    memset(w, 0, sizeof *w);
    *why = NULL;
    scan s = {.w = w, .pattern = pattern};
    util_buf_init(&s.word);
    if (!pattern) s.why = hidden_chars(cmd);
    if (!s.why) scan_text(&s, cmd);
    util_buf_release(&s.word);
    if (!s.why && !s.oom && w->n && !pattern && !s.first_quoted)
        for (size_t i = 0; i < sizeof k_keywords / sizeof *k_keywords; i++)
            if (strcmp(w->v[0], k_keywords[i]) == 0) s.why = "a shell keyword";
    if (s.why || s.oom) agent_words_release(w);
    *why = s.why;
    return s.oom ? UTIL_ENOMEM : UTIL_OK;
}

int agent_shell_split(agent_words *w, const char *cmd, const char **why, util_err *err) {
    int rc = split(w, cmd, 0, why);
    if (rc) return util_err_set(err, rc, "run_shell: out of memory");
    if (!*why && w->n == 0) return util_err_set(err, UTIL_EINVAL, "run_shell: the command is empty");
    return UTIL_OK;
}

int agent_shell_rule_match(const char *rule, const agent_words *w) {
    agent_words p;
    const char *why;
    if (split(&p, rule, 1, &why) || why || p.n == 0) {
        agent_words_release(&p);
        return 0;
    }
    int tail_any = strcmp(p.v[p.n - 1], "*") == 0; /* quoted, it would be "\*" */
    size_t fixed = tail_any ? p.n - 1 : p.n;
    int ok = tail_any ? w->n >= fixed : w->n == fixed;
    for (size_t i = 0; ok && i < fixed; i++) ok = fnmatch(p.v[i], w->v[i], 0) == 0;
    agent_words_release(&p);
    return ok;
}
