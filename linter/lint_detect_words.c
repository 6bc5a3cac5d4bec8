/* linter/lint_detect_words.c: the class of a placeholder name no built-in
 * list names whole, from its words (PLAN_FILE_PATH per session,
 * READ_TOOL_NAME stable) or of the names in a ${FN(ARG)} expression, whether
 * a placeholder in inline code is a path on the user's machine, and whether
 * the file gives the assistant a name. Does not read the words around a
 * placeholder (lint_detect.c does). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lint_detect.h"
#include "lint_detect_impl.h"
#include "lint_registry.h"

/* Words that make a name hold fixed text, wherever they stand:
 * READ_TOOL_NAME, OUTPUT_FORMAT, FILE_ALREADY_IN_CONTEXT_REMINDER_PREFIX,
 * MAX_LINES_CONSTANT, DEFAULT_TIMEOUT_MS. */
static const char *const k_stable[] = {
    "tool",       "tools",    "function", "functions", "instruction", "instructions", "guidance", "guideline",
    "guidelines", "rule",     "rules",    "persona",   "format",      "formats",      "schema",   "schemas",
    "example",    "examples", "template", "templates", "prefix",      "suffix",       "note",     "reminder",
    "constant",   "max",      "min",      "limit",     "timeout",     "label",        "sentinel", "enabled",
    "disabled",   "system",   "banner",   "legend",    "rubric",      "style",        "icon",     "icons",
    "emoji",      "version",  NULL};

/* A name ending in one of these is the name of something configured, not of
 * a person: agent_name, server_name (user_name is in the built-in list). */
static const char *const k_owner_of_name[] = {"agent", "assistant", "bot",     "product", "app",
                                              "model", "tool",      "server",  "company", "brand",
                                              "skill", "plugin",    "command", "mode",    NULL};

typedef struct word_class {
    const char *word;
    int vclass;
    int subday;
} word_class;

/* Words that say how often the value changes. */
static const word_class k_volatile[] = {{"date", LINT_VC_DAY, 0},
                                        {"today", LINT_VC_DAY, 0},
                                        {"month", LINT_VC_DAY, 0},
                                        {"year", LINT_VC_DAY, 0},
                                        {"weekday", LINT_VC_DAY, 0},
                                        {"timestamp", LINT_VC_CALL, 1},
                                        {"now", LINT_VC_CALL, 1},
                                        {"nonce", LINT_VC_CALL, 0},
                                        {"uuid", LINT_VC_CALL, 0},
                                        {"cwd", LINT_VC_SESSION, 0},
                                        {"pwd", LINT_VC_SESSION, 0},
                                        {"worktree", LINT_VC_SESSION, 0},
                                        {"workdir", LINT_VC_SESSION, 0},
                                        {"dir", LINT_VC_SESSION, 0},
                                        {"directory", LINT_VC_SESSION, 0},
                                        {"folder", LINT_VC_SESSION, 0},
                                        {"path", LINT_VC_SESSION, 0},
                                        {"branch", LINT_VC_SESSION, 0},
                                        {"repo", LINT_VC_SESSION, 0},
                                        {"repository", LINT_VC_SESSION, 0},
                                        {"session", LINT_VC_SESSION, 0},
                                        {"workspace", LINT_VC_SESSION, 0},
                                        {"hostname", LINT_VC_SESSION, 0},
                                        {"shell", LINT_VC_SESSION, 0},
                                        {"file", LINT_VC_TURN, 0},
                                        {"files", LINT_VC_TURN, 0},
                                        {"filename", LINT_VC_TURN, 0},
                                        {"content", LINT_VC_TURN, 0},
                                        {"contents", LINT_VC_TURN, 0},
                                        {"prompt", LINT_VC_TURN, 0},
                                        {"query", LINT_VC_TURN, 0},
                                        {"question", LINT_VC_TURN, 0},
                                        {"input", LINT_VC_TURN, 0},
                                        {"request", LINT_VC_TURN, 0},
                                        {"selection", LINT_VC_TURN, 0},
                                        {"diff", LINT_VC_TURN, 0},
                                        {"patch", LINT_VC_TURN, 0},
                                        {"snippet", LINT_VC_TURN, 0},
                                        {"log", LINT_VC_TURN, 0},
                                        {"logs", LINT_VC_TURN, 0},
                                        {"transcript", LINT_VC_TURN, 0},
                                        {"findings", LINT_VC_TURN, 0},
                                        {"attachment", LINT_VC_TURN, 0},
                                        {"attachments", LINT_VC_TURN, 0},
                                        {"context", LINT_VC_TURN, 0},
                                        {"objective", LINT_VC_TURN, 0},
                                        {"summary", LINT_VC_TURN, 0},
                                        {"output", LINT_VC_TURN, 0},
                                        {"result", LINT_VC_TURN, 0},
                                        {"results", LINT_VC_TURN, 0},
                                        {"error", LINT_VC_TURN, 0},
                                        {"errors", LINT_VC_TURN, 0},
                                        {"message", LINT_VC_TURN, 0},
                                        {"messages", LINT_VC_TURN, 0},
                                        {"history", LINT_VC_TURN, 0},
                                        {"issue", LINT_VC_TURN, 0},
                                        {"ticket", LINT_VC_TURN, 0},
                                        {"answer", LINT_VC_TURN, 0},
                                        {"response", LINT_VC_TURN, 0},
                                        {"document", LINT_VC_TURN, 0},
                                        {"documents", LINT_VC_TURN, 0},
                                        {"user", LINT_VC_USER, 0},
                                        {"username", LINT_VC_USER, 0},
                                        {"email", LINT_VC_USER, 0},
                                        {NULL, 0, 0}};

/* Words that say the value is the state of the moment it is rendered in:
 * PENDING_MCP_SERVERS, FAILED_MCP_SERVERS, CURRENT_ALARM. */
static const char *const k_state[] = {"current", "pending", "failed",    "active", "selected", "previous",
                                      "opened",  "visible", "connected", "latest", "running",  NULL};

/* Words after the head that say nothing of it: MAIN_WORKING_DIRECTORY_FN,
 * query_language_info, and the methods of a JS expression
 * (${ITEM.content.trim()}). */
static const char *const k_generic[] = {
    "fn",     "str",   "string", "text", "value", "values", "data",  "info",  "display", "list",  "obj",
    "object", "block", "trim",   "join", "map",   "length", "slice", "strip", "lower",   "upper", NULL};

static int word_in(const char *w, size_t n, const char *const *list) {
    for (size_t i = 0; list[i]; i++)
        if (strlen(list[i]) == n && memcmp(list[i], w, n) == 0) return 1;
    return 0;
}

/* Splits norm (lower case, '.' and '-' already '_') into its words: at most
 * 16 (a longer name keeps its first 16). */
static size_t words(const char *norm, size_t n, size_t ws[16], size_t wl[16]) {
    size_t nw = 0;
    for (size_t i = 0; i < n && nw < 16;) {
        while (i < n && norm[i] == '_') i++;
        size_t a = i;
        while (i < n && norm[i] != '_') i++;
        if (i > a) ws[nw] = a, wl[nw++] = i - a;
    }
    return nw;
}

/* Heads that name a piece of fixed text even where a built-in pattern
 * (file_*, *_context) would read the name as volatile:
 * FILE_ALREADY_IN_CONTEXT_REMINDER_PREFIX, file_size_note. */
static const char *const k_fixed_head[] = {"prefix", "suffix",   "note",   "reminder", "constant", "template",
                                           "banner", "sentinel", "rubric", "legend",   "guidance", NULL};

int lint_detect_name_fixed(const char *norm, size_t n) {
    size_t ws[16], wl[16], nw = words(norm, n, ws, wl);
    if (nw < 2) return 0;
    /* a user's own text keeps its class: user_note, custom_template */
    if (word_in(norm + ws[0], wl[0], (const char *const[]){"user", "custom", "customer", NULL})) return 0;
    size_t head = nw - 1;
    while (head > 0 && word_in(norm + ws[head], wl[head], k_generic)) head--;
    return word_in(norm + ws[head], wl[head], k_fixed_head);
}

/* A word naming fixed text makes the name stable; else its head (the last
 * word before a generic one) classes it when it names something that
 * changes (a content_type is a type, not content); else a state word makes
 * it per turn. */
int lint_detect_name_words(const char *norm, size_t n, int *subday, int *known) {
    size_t ws[16], wl[16], nw = words(norm, n, ws, wl);
    *subday = 0;
    if (nw < 2) return LINT_VC_NONE; /* one word: the built-in lists decide */
    for (size_t k = 0; k < nw; k++)
        if (word_in(norm + ws[k], wl[k], k_stable)) {
            *known = 1;
            return LINT_VC_NONE;
        }
    size_t last = nw - 1;
    if (wl[last] == 4 && !memcmp(norm + ws[last], "name", 4) &&
        word_in(norm + ws[last - 1], wl[last - 1], k_owner_of_name)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    size_t head = last;
    while (head > 0 && word_in(norm + ws[head], wl[head], k_generic)) head--;
    for (size_t i = 0; k_volatile[i].word; i++)
        if (strlen(k_volatile[i].word) == wl[head] &&
            !memcmp(k_volatile[i].word, norm + ws[head], wl[head])) {
            *known = 1;
            *subday = k_volatile[i].subday;
            return k_volatile[i].vclass;
        }
    for (size_t k = 0; k < nw; k++)
        if (word_in(norm + ws[k], wl[k], k_state)) {
            *known = 1;
            return LINT_VC_TURN;
        }
    return LINT_VC_NONE;
}

int lint_detect_code_path(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t a,
                          size_t b, const char *name, size_t len) {
    int subday;
    if (!lint_text_code_path(t, a, b)) return 0;
    if (lint_detect_name_class(d, cfg, name, len, &subday) == LINT_VC_SESSION) return 1;
    /* a path-shaped name there (memory_directory, debug_log_path) is a
     * folder or file on the user's machine; elsewhere such a name may be
     * configuration (template_path) and stays unclassed */
    size_t n = len;
    while (n > 0 && (isalnum((unsigned char)name[n - 1]))) n--;
    if (n == 0 || (name[n - 1] != '_' && name[n - 1] != '.')) return 0;
    const char *w = name + n;
    size_t wl = len - n;
    return (wl == 3 && !strncasecmp(w, "dir", 3)) || (wl == 9 && !strncasecmp(w, "directory", 9)) ||
           (wl == 6 && !strncasecmp(w, "folder", 6)) || (wl == 4 && !strncasecmp(w, "path", 4));
}

/* The class of the rest of a ${NAME...} expression whose NAME nothing
 * classes: the first name in [a, b) that has one, as in
 * ${ESCAPE_FN(ATTACHMENT.filename)} (a function of the file's name). */
int lint_detect_expression_class(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t a,
                                 size_t b, int *subday, int *known) {
    const char *s = t->data;
    for (size_t i = a; i < b;) {
        if (s[i] == '\'' || s[i] == '"') { /* a string literal is text, not a name */
            char q = s[i++];
            while (i < b && s[i] != q) i++;
            i++;
            continue;
        }
        if (!isalpha((unsigned char)s[i]) && s[i] != '_') {
            i++;
            continue;
        }
        size_t j = i;
        while (j < b && (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '.')) j++;
        int sd = 0, k = 0;
        int vc = lint_detect_name_info(d, cfg, s + i, j - i, &sd, &k);
        if (vc != LINT_VC_NONE) {
            *subday = sd;
            *known = 1;
            return vc;
        }
        i = j;
    }
    return LINT_VC_NONE;
}

/* Whether the file gives the assistant the name v[0, n) ("You are Santa
 * Claus", "an assistant named Grace", "I am Lumo"): then "Hey Santa" greets
 * the assistant, not the user. */
int lint_detect_persona_name(const lint_text *t, const char *v, size_t n) {
    static const char *const k_intro[] = {"you are ", "You are ", "You're ", "you're ", "named ",
                                          "called ",  "I am ",    "I'm ",    NULL};
    for (size_t k = 0; k_intro[k]; k++) {
        size_t il = strlen(k_intro[k]);
        for (const char *p = t->data, *e = t->data + t->len; p + il + n <= e;) {
            const char *q = memmem(p, (size_t)(e - p), k_intro[k], il);
            if (!q || q + il + n > e) break;
            const char *c = q + il;
            if (memcmp(c, v, n) == 0 && (c + n == e || !isalnum((unsigned char)c[n]))) return 1;
            p = q + 1;
        }
    }
    return 0;
}
