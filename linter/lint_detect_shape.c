/* linter/lint_detect_shape.c: placeholder syntax that is text by where it
 * stands, read from the characters around it: a {name} that is one segment of
 * a documented path, URL or API route ("`{lang}/README.md`", "GET
 * /v1/runs/{run_id}/events"), and a bare $name that its own shell command
 * assigns ("input=$(cat); echo \"$input\""). Called by lint_detect.c (which
 * classes what is left by name and words); calls nothing back and reads no
 * pattern. */
#include <ctype.h>
#include <string.h>

#include "lint_detect_impl.h"

/* --- path and route segments --------------------------------------------------- */

/* How far a token is followed either way: paths are short, and a bound keeps
 * the per-file test linear whatever a line holds. */
#define TOKEN_MAX 256

/* A byte a path, URL or query may hold ({x} segments and non-ASCII names
 * included); a space, quote, backtick or bracket ends the token. */
static int path_char(unsigned char c) {
    return isalnum(c) || c >= 0x80 || (c && strchr("_-.~/?&=%+:@{}*!,#", c));
}

static int word_char(unsigned char c) { return isalnum(c) || c == '_'; }

/* Whether the text before the token starting at s ends in an HTTP method and
 * a space on its line ("- get: GET /v1/triggers/{id}"): an API route shown to
 * the model. */
static int after_http_method(const char *d, size_t s) {
    static const char *const k[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", NULL};
    size_t e = s;
    while (e > 0 && s - e < 8 && (d[e - 1] == ' ' || d[e - 1] == '\t')) e--;
    if (e == s) return 0;
    size_t b = e;
    while (b > 0 && e - b < 8 && word_char((unsigned char)d[b - 1])) b--;
    return lint_detect_word_in(d + b, e - b, k);
}

/* Whether [s, e) opens with a URL scheme (http://, https://). */
static int url_token(const char *d, size_t s, size_t e) {
    return (e - s > 7 && !strncmp(d + s, "http://", 7)) || (e - s > 8 && !strncmp(d + s, "https://", 8));
}

/* Whether the token [s, e) names something besides its {x} fields: a letter,
 * digit or '.' outside braces (`{lang}/README.md`, not `{month}/{day}/{year}`). */
static int literal_segment(const char *d, size_t s, size_t e) {
    for (int depth = 0; s < e; s++) {
        if (d[s] == '{') depth++;
        if (d[s] == '}' && depth > 0) depth--;
        if (!depth && (isalnum((unsigned char)d[s]) || d[s] == '.' || (unsigned char)d[s] >= 0x80)) return 1;
    }
    return 0;
}

/* Whether the {name} at [a, b) is one segment of a path, URL or route: a '/'
 * right before or after it, or the value of a query (?k={k}, &k={k}), in a
 * token of path characters that names more than its fields or is a folder
 * (`{lang}/`), and that is inline code, or in prose a segment with a '/' on
 * both sides (repos/{owner}/{repo}/pulls), a URL's, or a route's after an
 * HTTP method (GET /v1/runs/{run_id}, GET {base}/.well-known/x). A {x} alone
 * in its span (`{debug_log_path}`) is none, nor a date (`{month}/{day}`). */
static int path_segment(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    size_t s = a, e = b; /* a newline is no path character: the token is on a's line */
    while (s > 0 && a - s < TOKEN_MAX && path_char((unsigned char)d[s - 1])) s--;
    while (e < t->len && e - b < TOKEN_MAX && path_char((unsigned char)d[e])) e++;
    int before = a > s && d[a - 1] == '/', after = b < e && d[b] == '/', query = 0;
    if (a > s && d[a - 1] == '=') { /* ?k={k} */
        size_t k = a - 1;
        while (k > s && word_char((unsigned char)d[k - 1])) k--;
        query = k > s && k < a - 1 && (d[k - 1] == '?' || d[k - 1] == '&');
    }
    if ((!before && !after && !query) || !(literal_segment(d, s, e) || (after && b + 1 == e))) return 0;
    if (lint_text_in_code(t, a)) return !(t->flags[lint_text_line_of(t, a)] & LINT_LF_FENCE);
    if ((before && after) || url_token(d, s, e)) return 1;
    return (d[s] == '/' || d[s] == '{') && after_http_method(d, s);
}

/* End of the single-brace {name} opening at i, as lint_detect_pat.c's
 * placeholder pattern reads one, or 0; with a format spec ({n:>8},
 * {when:%Y-%m-%d}) but not an object's member ({role:"system"},
 * {type:self_hosted}): no program fills that. */
static size_t brace_name_end(const char *d, size_t i, size_t le) { /* le: the text's end */
    if (i > 0 && (d[i - 1] == '{' || d[i - 1] == '$' || word_char((unsigned char)d[i - 1]))) return 0;
    size_t k = i + 1;
    if (k >= le || !(isalpha((unsigned char)d[k]) || d[k] == '_')) return 0;
    while (k < le && (word_char((unsigned char)d[k]) || d[k] == '.')) k++;
    if (k < le && d[k] == ':') {
        size_t c = ++k;
        while (k < le && d[k] != '}' && d[k] != '{' && d[k] != '\n') k++;
        if (k >= le || d[k] != '}' || k == c) return 0;
        if (!memchr(d + c, '%', k - c)) /* [[fill]align][sign][#][0][width][,_][.prec][type] */
            for (size_t q = c; q < k; q++)
                if (!strchr("<>^=+- #0123456789,_.", d[q]) && !(isalpha((unsigned char)d[q]) && q + 1 == k))
                    return 0;
    }
    if (k >= le || d[k] != '}' || (k + 1 < le && d[k + 1] == '}')) return 0;
    return k + 1;
}

/* Whether every {name} a program could fill in t is a path or route
 * segment: none in prose elsewhere ("Working directory: {cwd}") and none
 * alone in a code span (`{debug_log_path}`); fenced code and front matter
 * are examples and metadata. One pass over the braces. */
static int paths_only(const lint_text *t) {
    const char *d = t->data;
    for (const char *p = d; (p = memchr(p, '{', (size_t)(d + t->len - p))) != NULL; p++) {
        size_t i = (size_t)(p - d), li = lint_text_line_of(t, i);
        if (t->flags[li] & (LINT_LF_FENCE | LINT_LF_FRONTMATTER)) continue;
        size_t b = brace_name_end(d, i, t->len);
        if (!b || path_segment(t, i, b)) continue;
        if (!lint_text_in_code(t, i) || lint_text_code_path(t, i, b)) return 0;
    }
    return 1;
}

int lint_detect_path_pattern(const lint_text *t, size_t a, size_t b, int *state) {
    if (!t->plain_markdown || !path_segment(t, a, b)) return 0;
    if (!*state) *state = paths_only(t) ? 1 : -1;
    return *state > 0;
}

/* --- shell variables ------------------------------------------------------------ */

/* Whether p is at the start of a shell command on its line: the line's start,
 * or after a space (a list marker's too), ; ( ` { | or &&. */
static int command_start(const char *d, size_t ls, size_t p) {
    if (p == ls) return 1;
    char c = d[p - 1];
    if (c == '&') return p - 1 > ls && d[p - 2] == '&';
    return c == ' ' || c == '\t' || c == ';' || c == '(' || c == '`' || c == '{' || c == '|';
}

/* Whether the command ends at j (spaces, then ; | & < ) or the line's end):
 * "read line; do", "read name < file". */
static int command_end(const char *d, size_t j, size_t le) {
    while (j < le && (d[j] == ' ' || d[j] == '\t')) j++;
    return j == le || strchr(";|&<)", d[j]);
}

/* Whether a "read" command's options and names run from its start to the
 * name at i ("while read -r line", "read name"): the words back from i are
 * options or names up to "read". */
static int read_names(const char *d, size_t ls, size_t i) {
    for (size_t k = i;;) {
        size_t w = k;
        while (w > ls && (d[w - 1] == ' ' || d[w - 1] == '\t')) w--;
        size_t ws = w;
        while (ws > ls && (word_char((unsigned char)d[ws - 1]) || d[ws - 1] == '-')) ws--;
        if (ws == w || w == k) return 0;
        if (w - ws == 4 && !memcmp(d + ws, "read", 4)) return command_start(d, ls, ws);
        k = ws;
    }
}

/* Whether the line [ls, le) assigns the shell variable name[0, n): name=...
 * at a command's start (export name=, local name= too), not name=$name (a
 * key given the field of that name: "query=$query"); read [-r] ... name
 * ending the command; for name in. */
static int line_assigns(const char *d, size_t ls, size_t le, const char *name, size_t n) {
    for (size_t i = ls; i + n <= le; i++) {
        if (d[i] != name[0] || memcmp(d + i, name, n) || !command_start(d, ls, i)) continue;
        size_t j = i + n;
        if (j < le && word_char((unsigned char)d[j])) continue;
        if (j < le && d[j] == '=' && j + 1 < le && d[j + 1] != '=' && d[j + 1] != ' ') {
            size_t v = j + 1 + (d[j + 1] == '"');
            int self = v + n < le && d[v] == '$' && !memcmp(d + v + 1, name, n) &&
                       (v + 1 + n == le || !word_char((unsigned char)d[v + 1 + n]));
            if (!self) return 1;
        }
        if (i >= ls + 4 && !memcmp(d + i - 4, "for ", 4) && le - j >= 4 && !memcmp(d + j, " in ", 4))
            return 1;
        if (command_end(d, j, le) && read_names(d, ls, i)) return 1;
    }
    return 0;
}

/* How far from the $name its command's assignment is looked for: a bound
 * keeps a long line with many variables linear. */
#define COMMAND_MAX 256

int lint_detect_shell_assigned(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    if (b <= a + 1) return 0;
    size_t ls = a, le = b; /* a's line, cut COMMAND_MAX bytes either side */
    while (ls > 0 && a - ls < COMMAND_MAX && d[ls - 1] != '\n') ls--;
    while (le < t->len && le - b < COMMAND_MAX && d[le] != '\n' && d[le] != '\r') le++;
    return line_assigns(d, ls, le, d + a + 1, b - a - 1);
}
