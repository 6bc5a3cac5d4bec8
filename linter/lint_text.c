/* linter/lint_text.c: a file as lines: the line index, fenced code blocks,
 * inline code spans, cache-boundary lines, lines that render to nothing
 * (jinja statements and comments), example blocks, and the quiet and tag
 * ranges lint_tmpl.c fills; plus UTF-8 and binary checks.
 * Does not detect volatile content (lint_detect.c) or apply rules. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/text.h"
#include "../util/vec.h"
#include "lint_text.h"

/* --- small helpers -------------------------------------------------------- */

size_t lint_utf8_check(const char *s, size_t len) { return util_utf8_check(s, len); }

int lint_is_binary(const char *s, size_t len) {
    size_t n = len < 8192 ? len : 8192;
    return memchr(s, '\0', n) != NULL;
}

/* --- the margin of a role-prefixed log --------------------------------------- */

/* Length of the speaker word that opens a line of a log that prefixes every
 * line of a message with its role in capitals (aider's .aider.llm.history:
 * "SYSTEM Act as ...", "USER fix the bug"), with its one space; 0 for any
 * other line. */
static size_t log_role(const char *p, const char *e) {
    static const char *const k_roles[] = {"SYSTEM", "USER", "ASSISTANT", "TOOL", "FUNCTION", NULL};
    for (const char *const *r = k_roles; *r; r++) {
        size_t n = strlen(*r);
        if ((size_t)(e - p) >= n && !memcmp(p, *r, n) && (p + n == e || p[n] == ' '))
            return p + n == e ? n : n + 1;
    }
    return 0;
}

/* Whether a line is the log's own framing, not a message: the request and
 * response headers with their timestamp ("TO LLM 2025-05-04T13:22:41",
 * "LLM RESPONSE ...") and the separator between messages ("-------"). */
static int log_frame(const char *p, const char *e, int *header) {
    *header = (e - p >= 7 && !memcmp(p, "TO LLM ", 7)) || (e - p >= 13 && !memcmp(p, "LLM RESPONSE ", 13));
    if (*header) return 1;
    const char *q = p;
    while (q < e && *q == '-') q++;
    return q - p >= 3 && q == e;
}

char *lint_text_unmargin(const char *data, size_t len, int *oom) {
    *oom = 0;
    size_t roles = 0;
    for (size_t a = 0; a < len;) {
        const char *p = data + a, *nl = memchr(p, '\n', len - a), *e = nl ? nl : data + len;
        int header;
        if (e > p && e[-1] == '\r') e--;
        if (e > p && !log_role(p, e) && !log_frame(p, e, &header)) return NULL;
        roles += log_role(p, e) != 0;
        a = nl ? (size_t)(nl - data) + 1 : len;
    }
    if (roles < 3) return NULL;
    char *m = malloc(len ? len : 1);
    if (!m) {
        *oom = 1;
        return NULL;
    }
    memcpy(m, data, len);
    /* the last message, when it is the user's, is the request itself: the
     * turn's input after the prompt, blanked whole like the headers */
    size_t last = len, last_end = len;
    int last_user = 0;
    for (size_t a = 0; a < len;) {
        char *p = m + a, *nl = memchr(p, '\n', len - a), *e = nl ? nl : m + len;
        int header = 0;
        if (e > p && e[-1] == '\r') e--;
        size_t n = log_role(p, e);
        if (n && (last == len || memcmp(data + last, data + a, n) || last_end != a)) {
            last = a;
            last_user = n >= 4 && !memcmp(p, "USER", 4);
        }
        if (n) last_end = nl ? (size_t)(nl - m) + 1 : len;
        if (!n && log_frame(p, e, &header) && header) n = (size_t)(e - p);
        memset(p, ' ', n);
        a = nl ? (size_t)(nl - m) + 1 : len;
    }
    for (size_t i = last; last_user && i < last_end; i++)
        if (m[i] != '\n' && m[i] != '\r') m[i] = ' ';
    return m;
}

static int range_push(lint_range **v, size_t *n, size_t *cap, size_t a, size_t b) {
    if (b <= a) return UTIL_OK;
    if (util_grow(v, cap, *n + 1, sizeof **v)) return UTIL_ENOMEM;
    (*v)[*n].start = a;
    (*v)[(*n)++].end = b;
    return UTIL_OK;
}

/* A fenced block or inline code span [a, b) (an empty one covers nothing). */
static int add_code(lint_text *t, size_t a, size_t b) {
    return range_push(&t->code, &t->n_code, &t->cap_code, a, b);
}

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p;
}

/* Past invisible characters pasted before a fence (zero-width space, joiners,
 * a byte order mark): "\u200b```" was meant as a fence, and reading it as
 * text would turn every later fence inside out. */
static const char *skip_invisible(const char *p, const char *e) {
    for (;;) {
        const unsigned char *u = (const unsigned char *)p;
        if (e - p >= 3 && u[0] == 0xE2 && u[1] == 0x80 && u[2] >= 0x8B && u[2] <= 0x8D)
            p += 3;
        else if (e - p >= 3 && u[0] == 0xE2 && u[1] == 0x81 && u[2] == 0xA0)
            p += 3;
        else if (e - p >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
            p += 3;
        else
            return p;
    }
}

/* A fence opener/closer: up to max_ind spaces (3 at the top level; more in
 * a list item), then 3+ backticks or tildes, or 3+ backslash-escaped
 * backticks (\`\`\`, as a prompt kept in a JS/TS template literal writes its
 * fences; *ch is then '\\', so such a fence closes only its own kind). */
static int fence_at(const char *p, const char *e, char *ch, size_t *count, int max_ind) {
    int ind = 0;
    while (p < e && *p == ' ' && ind <= max_ind) p++, ind++;
    p = skip_invisible(p, e);
    if (ind > max_ind || p >= e || (*p != '`' && *p != '~' && *p != '\\')) return 0;
    if (*p == '\\') { /* \`\`\`: a fence in a JS template literal's text */
        size_t n = 0;
        while (e - p >= 2 && p[0] == '\\' && p[1] == '`') p += 2, n++;
        if (n < 3 || memchr(p, '`', (size_t)(e - p))) return 0;
        *ch = '\\';
        *count = n;
        return 1;
    }
    char c = *p;
    size_t n = 0;
    while (p < e && *p == c) p++, n++;
    if (n < 3) return 0;
    if (c == '`' && memchr(p, '`', (size_t)(e - p))) return 0; /* info string may not hold ` */
    *ch = c;
    *count = n;
    return 1;
}

/* Spaces before the text of [p, e) (a tab counts 4). */
static int indent_of(const char *p, const char *e) {
    int ind = 0;
    for (; p < e && (*p == ' ' || *p == '\t'); p++) ind += *p == '\t' ? 4 : 1;
    return ind;
}

/* Whether line i, indented ind (4 or more) spaces, continues a list item: the
 * nearest line above it with less indentation (blank lines skipped) starts
 * with a list marker ("- ", "* ", "+ ", "17. ", "3) "). A fence there is a
 * fence ("17. **Setup**" then "    ```yaml"), not an indented code line. */
static int in_list_item(const lint_text *t, size_t i, int ind) {
    const char *d = t->data;
    for (size_t k = i, seen = 0; k-- > 0 && seen < 400; seen++) {
        const char *p = d + t->line_start[k], *e = d + lint_text_line_end(t, k);
        const char *q = skip_ws(p, e);
        if (q == e) continue;
        if (indent_of(p, e) >= ind) continue;
        if ((*q == '-' || *q == '*' || *q == '+') && q + 1 < e && q[1] == ' ') return 1;
        while (q < e && isdigit((unsigned char)*q)) q++;
        return q > skip_ws(p, e) && q + 1 < e && (*q == '.' || *q == ')') && q[1] == ' ';
    }
    return 0;
}

static int only_ws_after_fence(const char *p, const char *e, char c) {
    for (const char *q = NULL; p != q;) {
        q = p;
        while (p < e && (*p == ' ' || *p == c || (c == '\\' && *p == '`'))) p++;
        p = skip_invisible(p, e);
    }
    return skip_ws(p, e) == e;
}

/* True when the line holds only {% ... %} / {# ... #} blocks (and spaces),
 * none of which is an include (includes render text). */
/* Whether [p, e) is a dumped request's cache annotation
 * ("copilot_cache_control: {"type":"ephemeral"}"): a property of the
 * message, not text the model reads. */
static int cache_annotation(const char *p, const char *e) {
    static const char k_cc[] = "copilot_cache_control:";
    p = skip_ws(p, e);
    if ((size_t)(e - p) <= sizeof k_cc || memcmp(p, k_cc, sizeof k_cc - 1) != 0) return 0;
    const char *q = skip_ws(p + sizeof k_cc - 1, e);
    while (e > q && isspace((unsigned char)e[-1])) e--;
    return q < e && *q == '{' && e[-1] == '}';
}

int lint_text_cache_annotation(const lint_text *t, size_t line) {
    return cache_annotation(t->data + t->line_start[line], t->data + lint_text_line_end(t, line));
}

static int no_output_line(const char *p, const char *e) {
    int any = 0;
    if (cache_annotation(p, e)) return 1;
    p = skip_ws(p, e);
    while (p < e) {
        if (e - p >= 7 && memcmp(p, "<!--", 4) == 0) { /* an HTML comment: a note, not text */
            const char *c = memmem(p + 4, (size_t)(e - p - 4), "-->", 3);
            if (!c) return 0;
            any = 1;
            p = skip_ws(c + 3, e);
            continue;
        }
        if (e - p < 4 || p[0] != '{' || (p[1] != '%' && p[1] != '#')) return 0;
        char close = p[1];
        const char *q = p + 2;
        const char *end = NULL;
        for (; q + 1 < e; q++)
            if (q[0] == close && q[1] == '}') {
                end = q;
                break;
            }
        if (!end) return 0;
        if (close == '%') {
            const char *w = skip_ws(p + 2, end);
            if (w < end && *w == '-') w = skip_ws(w + 1, end);
            if ((size_t)(end - w) >= 7 && (memcmp(w, "include", 7) == 0)) return 0;
        }
        any = 1;
        p = skip_ws(end + 2, e);
    }
    return any;
}

static size_t placeholder_at(const char *p, const char *e);

/* Whether the span of n >= 3 backticks d[s, k) is a fence written with \n
 * escapes inside a string ("```plaintext\n{{feedback}}\n```" in a JSON
 * value saved on one line) whose body is only placeholders: a slot the
 * template fills, as an unescaped fence holding only them is
 * (slot_body), not inline code. */
static int escaped_slot_fence(const char *d, size_t s, size_t k, size_t n) {
    const char *p = memmem(d + s + n, k - n - (s + n), "\\n", 2), *e = d + k - n;
    if (n < 3 || !p) return 0;
    int any = 0;
    for (p += 2; p < e;) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (*p == '\\' && p + 1 < e && (p[1] == 'n' || p[1] == 't')) {
            p += 2;
        } else {
            size_t l = placeholder_at(p, e);
            if (!l) return 0;
            any = 1;
            p += l;
        }
    }
    return any;
}

/* Inline code spans on one (non-fence) line: a run of N backticks closed by
 * the next run of exactly N (not an escaped slot fence). */
static int scan_inline_code(lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    size_t i = a;
    while (i < b) {
        if (d[i] != '`') {
            i++;
            continue;
        }
        size_t s = i, n = 0;
        while (i < b && d[i] == '`') i++, n++;
        size_t j = i;
        int closed = 0;
        while (j < b) {
            if (d[j] != '`') {
                j++;
                continue;
            }
            size_t k = j, m = 0;
            while (k < b && d[k] == '`') k++, m++;
            if (m == n) {
                int rc = escaped_slot_fence(d, s, k, n) ? UTIL_OK : add_code(t, s, k);
                if (rc) return rc;
                i = k;
                closed = 1;
                break;
            }
            j = k;
        }
        if (!closed) break;
    }
    return UTIL_OK;
}

/* --- example blocks -------------------------------------------------------- */

/* Words of a line without markdown decoration; *heading gets the '#' level. */
static size_t strip_deco(const char *p, const char *e, const char **out, int *heading) {
    *heading = 0;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    while (p < e && *p == '#') p++, (*heading)++;
    while (p < e && (*p == ' ' || *p == '\t' || *p == '*' || *p == '_' || *p == '>')) p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '*' || e[-1] == '_')) e--;
    *out = p;
    return (size_t)(e - p);
}

static int starts_ci(const char *p, size_t n, const char *w) {
    size_t l = strlen(w);
    return n >= l && strncasecmp(p, w, l) == 0 && (n == l || !isalpha((unsigned char)p[l]));
}

static size_t count_words(const char *p, size_t n) {
    size_t w = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        int a = isalnum((unsigned char)p[i]) || ((unsigned char)p[i] & 0x80);
        if (a && !in) w++;
        in = a;
    }
    return w;
}

/* <example>...</example> (any tag named example*), "## Example ..." headings
 * up to the next heading of the same or a higher level, a short caption such
 * as "Example:" or "For example:" up to the next blank line, and a bare
 * "EXAMPLE" line up to "END OF EXAMPLE". Values there are illustrations. */
/* A line that announces sample conversations (few-shot turns): "Here are
 * conversations between a human and Sydney.", "41. Below is an example
 * dialogue", "The following are sample transcripts:". */
static int announces_dialogues(const char *w, size_t wl) {
    size_t i = 0;
    while (i < wl && isdigit((unsigned char)w[i])) i++;
    if (i > 0 && i < wl && (w[i] == '.' || w[i] == ')')) {
        i++;
        while (i < wl && w[i] == ' ') i++;
    } else {
        i = 0;
    }
    const char *p = w + i;
    size_t pl = wl - i;
    static const char *const k_open[] = {"here are",          "here is",          "below are", "below is",
                                         "the following are", "the following is", NULL};
    int open = 0;
    for (const char *const *o = k_open; *o && !open; o++) open = starts_ci(p, pl, *o);
    if (!open || count_words(p, pl) > 16) return 0;
    static const char *const k_what[] = {"conversation", "dialogue", "dialog", "transcript",
                                         "exchange",     "chat log", NULL};
    for (const char *const *x = k_what; *x; x++) {
        size_t xl = strlen(*x);
        for (size_t k = 0; k + xl <= pl; k++)
            if (strncasecmp(p + k, *x, xl) == 0) return 1;
    }
    return 0;
}

/* Length of a role marker starting w ("User:", "Human:", "Q:" when asks,
 * "Assistant:", "AI:", "A:" when !asks), or 0. */
static size_t turn_marker(const char *w, size_t wl, int asks) {
    static const char *const k_ask[] = {"user:", "human:", "q:", "customer:", "question:", NULL};
    static const char *const k_ans[] = {"assistant:", "ai:", "a:", "bot:", "answer:", "model:", NULL};
    char c = wl ? (char)(w[0] | 0x20) : 0;
    if (asks ? !strchr("uhqc", c) : !strchr("abm", c)) return 0; /* most lines: one compare */
    for (const char *const *m = asks ? k_ask : k_ans; *m; m++) {
        size_t ml = strlen(*m);
        if (wl > ml && strncasecmp(w, *m, ml) == 0) return ml;
    }
    return 0;
}

/* Whether line i is the question of a few-shot exchange: "User: ..." with
 * text, and the next non-blank line an answer "Assistant: ..." with text;
 * neither holds a template field. Returns the answer's line, or 0. */
static size_t fewshot_pair(const lint_text *t, size_t i) {
    const char *w, *e = t->data + lint_text_line_end(t, i);
    int lv;
    size_t wl = strip_deco(t->data + t->line_start[i], e, &w, &lv);
    size_t ml = turn_marker(w, wl, 1);
    if (!ml || count_words(w + ml, wl - ml) == 0 || memchr(w, '{', wl)) return 0;
    size_t k = i + 1;
    for (; k < t->n_lines; k++) {
        const char *q, *qe = t->data + lint_text_line_end(t, k);
        size_t ql = strip_deco(t->data + t->line_start[k], qe, &q, &lv);
        if (ql == 0) continue;
        size_t al = turn_marker(q, ql, 0);
        if (!al || count_words(q + al, ql - al) == 0 || memchr(q, '{', ql)) return 0;
        return k;
    }
    return 0;
}

/* Whether w[0, wl) ends with a colon, ASCII or full-width (：). */
static int ends_colon(const char *w, size_t wl) {
    return wl > 0 && (w[wl - 1] == ':' || (wl >= 3 && memcmp(w + wl - 3, "\xEF\xBC\x9A", 3) == 0));
}

/* Whether w opens with a Chinese or Japanese example word (例如, 比如, 示例,
 * 举例, 范例, 例えば, or 例 before a colon): a caption as "For example:" is. */
static int cjk_example_word(const char *w, size_t wl) {
    static const char *const k_cjk[] = {"例如", "比如", "譬如",   "示例",     "举例", "舉例", "范例", "範例",
                                        "样例", "樣例", "例えば", "たとえば", "例：", "例:",  NULL};
    if (wl < 3 || !((unsigned char)w[0] & 0x80)) return 0;
    for (const char *const *k = k_cjk; *k; k++)
        if (starts_ci(w, wl, *k)) return 1;
    return 0;
}

/* The line number opening a line of a numbered code listing ("3:    print(x)",
 * "4:"): its value, the offset after the ':' in *after; -1 when the line does
 * not open so. */
static long listing_number(const char *p, const char *e, const char **after) {
    const char *q = p;
    long v = 0;
    while (q < e && q - p < 6 && isdigit((unsigned char)*q)) v = v * 10 + (*q++ - '0');
    if (q == p || q >= e || *q != ':') return -1;
    *after = q + 1;
    return v;
}

/* A numbered code listing (a file quoted with its line numbers, as coding
 * assistants show code: "1:", "2:def f(name):", "3:    print(f\"{name}\")")
 * is code: three or more consecutive lines numbered n, n+1, n+2, ..., one
 * of them empty or indented after its "n:" (code has blank and indented
 * lines; numbered steps "1: Read the file" do not). Its lines are code
 * (t->code; an inline span inside is merged into it later). */
static int mark_listings(lint_text *t) {
    size_t n = t->n_lines;
    for (size_t i = 0; i < n;) {
        const char *after = NULL;
        long v = (t->flags[i] & (LINT_LF_FENCE | LINT_LF_FRONTMATTER))
                     ? -1
                     : listing_number(t->data + t->line_start[i], t->data + lint_text_line_end(t, i), &after);
        if (v < 0) {
            i++;
            continue;
        }
        size_t k = i;
        int code_like = 0;
        for (long want = v; k < n; k++, want++) {
            const char *e = t->data + lint_text_line_end(t, k);
            if (t->flags[k] & (LINT_LF_FENCE | LINT_LF_FRONTMATTER)) break;
            if (listing_number(t->data + t->line_start[k], e, &after) != want) break;
            if (after == e || (e - after >= 2 && after[0] == ' ' && after[1] == ' ') || *after == '\t')
                code_like = 1;
        }
        if (k - i >= 3 && code_like && add_code(t, t->line_start[i], lint_text_line_end(t, k - 1)))
            return UTIL_ENOMEM;
        i = k > i ? k : i + 1;
    }
    return UTIL_OK;
}

static void mark_examples(lint_text *t) {
    size_t n = t->n_lines;
    for (size_t i = 0; i < n; i++) {
        const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
        if (t->flags[i] & (LINT_LF_FENCE | LINT_LF_FRONTMATTER)) continue;
        const char *w;
        int level;
        size_t wl = strip_deco(p, e, &w, &level);
        int tag = wl >= 9 && w[0] == '<' && strncasecmp(w + 1, "example", 7) == 0;
        int word = starts_ci(w, wl, "example") || starts_ci(w, wl, "examples") ||
                   starts_ci(w, wl, "for example") || starts_ci(w, wl, "e.g.") ||
                   starts_ci(w, wl, "sample") || starts_ci(w, wl, "few-shot") ||
                   starts_ci(w, wl, "scenario") || starts_ci(w, wl, "illustration") ||
                   cjk_example_word(w, wl);
        size_t end = i; /* last line of the block */
        if (tag) {
            size_t k = i;
            for (; k < n; k++) {
                const char *q = t->data + t->line_start[k];
                const char *qe = t->data + lint_text_line_end(t, k);
                const char *c = memchr(q, '<', (size_t)(qe - q));
                int closed = 0;
                while (c && c + 9 <= qe) {
                    if (c[1] == '/' && strncasecmp(c + 2, "example", 7) == 0) closed = 1;
                    c = memchr(c + 1, '<', (size_t)(qe - c - 1));
                }
                if (closed && (k > i || memmem(w + 1, wl - 1, "</", 2))) break;
            }
            end = k < n ? k : i;
        } else if (word && level > 0) {
            size_t k = i + 1;
            for (; k < n; k++) {
                const char *q, *qe = t->data + lint_text_line_end(t, k);
                int lv;
                strip_deco(t->data + t->line_start[k], qe, &q, &lv);
                if (lv > 0 && lv <= level && !(t->flags[k] & LINT_LF_FENCE)) break;
            }
            end = k - 1;
        } else if (word && count_words(w, wl) <= 8 && (ends_colon(w, wl) || count_words(w, wl) <= 2)) {
            int bare = wl == 7 || (wl < 12 && count_words(w, wl) <= 2 && !ends_colon(w, wl));
            size_t k = i + 1, limit = bare ? i + 100 : n;
            for (; k < n && k < limit; k++) {
                const char *q, *qe = t->data + lint_text_line_end(t, k);
                int lv;
                size_t ql = strip_deco(t->data + t->line_start[k], qe, &q, &lv);
                if (bare && (starts_ci(q, ql, "end of example") || starts_ci(q, ql, "end example"))) break;
                if (!bare && ql == 0 && !(t->flags[k] & LINT_LF_FENCE)) {
                    k--;
                    break;
                }
                if (lv > 0 && !(t->flags[k] & LINT_LF_FENCE)) {
                    k--;
                    break;
                }
            }
            end = k < n ? k : n - 1;
        } else if ((end = fewshot_pair(t, i)) != 0) {
            /* a few-shot exchange: the question and its answer */
        } else if (announces_dialogues(w, wl)) {
            /* sample conversations run to the next heading or the end */
            size_t k = i + 1;
            for (; k < n; k++) {
                const char *q, *qe = t->data + lint_text_line_end(t, k);
                int lv;
                strip_deco(t->data + t->line_start[k], qe, &q, &lv);
                if (lv > 0 && !(t->flags[k] & LINT_LF_FENCE)) break;
            }
            end = k - 1;
        } else {
            continue;
        }
        for (size_t k = i; k <= end && k < n; k++) t->flags[k] |= LINT_LF_EXAMPLE;
        if (end > i) i = end;
    }
}

/* Length of a placeholder at p ({{ x }}, ${x}, {name}, $NAME), or 0. */
static size_t placeholder_at(const char *p, const char *e) {
    const char *q = p;
    if (*q == '$' && q + 1 < e && (isupper((unsigned char)q[1]) || q[1] == '_')) {
        for (q++; q < e && (isalnum((unsigned char)*q) || *q == '_');) q++;
        return (size_t)(q - p);
    }
    if (*q == '$') q++;
    if (q >= e || *q != '{') return 0;
    if (q + 1 < e && q[1] == '{') {
        const char *c = memmem(q + 2, (size_t)(e - q - 2), "}}", 2);
        if (!c || c == q + 2 || memchr(q + 2, '{', (size_t)(c - q - 2))) return 0;
        return (size_t)(c + 2 - p);
    }
    const char *c = memchr(q + 1, '}', (size_t)(e - q - 1));
    if (!c || c == q + 1) return 0;
    for (const char *k = q + 1; k < c; k++)
        if (!isalnum((unsigned char)*k) && *k != '_' && *k != '.' && !(q > p && *k != '{'))
            return 0; /* {name} / {a.b}; ${...} may hold an expression: ${X ?? "(none)"} */
    if (!isalpha((unsigned char)q[1]) && q[1] != '_') return 0;
    return (size_t)(c + 1 - p);
}

/* --- few-shot turns of a message list --------------------------------------- */

enum { TURN_NONE, TURN_SYSTEM, TURN_USER, TURN_REPLY };

/* The role a role word names: the system's (system, developer), the request's
 * (user, human) or a reply to it (assistant, ai, model, bot, and the tool and
 * function results an exchange may hold); TURN_NONE for any other word. */
static int turn_kind(const char *w, size_t n) {
    static const struct {
        const char *w;
        int kind;
    } k[] = {{"system", TURN_SYSTEM}, {"developer", TURN_SYSTEM}, {"user", TURN_USER},
             {"human", TURN_USER},    {"assistant", TURN_REPLY},  {"ai", TURN_REPLY},
             {"model", TURN_REPLY},   {"bot", TURN_REPLY},        {"tool", TURN_REPLY},
             {"function", TURN_REPLY}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strlen(k[i].w) == n && strncasecmp(w, k[i].w, n) == 0) return k[i].kind;
    return TURN_NONE;
}

/* The role set on line i by a role key ("role: user", "\"role\": \"user\""),
 * TURN_NONE when the line sets none. *item: the line its item opens on, when
 * the key is the item's first ("- role: user", {"role": "user", ...}, or a
 * "role" line right under a line that is only "{"), so the item's text
 * follows it; (size_t)-1 when it is not. */
static int turn_role_line(const lint_text *t, size_t i, size_t *item) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    const char *q = skip_ws(p, e);
    *item = (size_t)-1;
    if (q + 1 < e && *q == '-' && q[1] == ' ') q = skip_ws(q + 2, e), *item = i;
    if (q < e && *q == '{') q = skip_ws(q + 1, e), *item = i;
    int quoted = q < e && (*q == '"' || *q == '\'');
    q += quoted;
    if (e - q < 5 || strncmp(q, "role", 4) != 0) return TURN_NONE;
    q += 4;
    if (quoted && (q >= e || (*q != '"' && *q != '\''))) return TURN_NONE;
    q = skip_ws(q + quoted, e);
    if (q >= e || *q != ':') return TURN_NONE;
    q = skip_ws(q + 1, e);
    if (q < e && (*q == '"' || *q == '\'')) q++;
    const char *w = q;
    while (q < e && isalpha((unsigned char)*q)) q++;
    int kind = turn_kind(w, (size_t)(q - w));
    if (q < e && (*q == '"' || *q == '\'')) q++;
    q = skip_ws(q, e);
    if (kind == TURN_NONE || (q < e && *q != ',' && *q != '}' && *q != '#')) return TURN_NONE;
    for (size_t k = i; *item == (size_t)-1 && k-- > 0;) { /* pretty-printed JSON: "{" above */
        const char *a = t->data + t->line_start[k], *b = t->data + lint_text_line_end(t, k);
        const char *c = skip_ws(a, b);
        if (c == b) continue;
        if (*c == '{' && skip_ws(c + 1, b) == b) *item = k;
        break;
    }
    return kind;
}

/* Whether line i holds a template field ({x}, {{ x }}, ${x}, $NAME). */
static int line_has_field(const lint_text *t, size_t i) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    for (; p < e; p++)
        if ((*p == '{' || *p == '$') && placeholder_at(p, e)) return 1;
    return 0;
}

/* One message list written out in the file: turns[0, n) with the line each
 * item opens on, its role, and the line after its text. */
typedef struct turn_item {
    size_t line, end;
    int kind;
} turn_item;

/* Marks the few-shot turns of one list: the user and reply turns after the
 * leading system turns and before the last user turn, when that last user
 * turn holds a template field (the request the program fills in; a list with
 * none is a recorded conversation, whose earlier turns are its real history)
 * and a reply stands among them (an exchange, not two parts of one request).
 * A system turn between them stays the prompt's own. */
static void mark_turn_list(lint_text *t, const turn_item *it, size_t n) {
    size_t last = n, first = 0;
    for (size_t k = 0; k < n; k++)
        if (it[k].kind == TURN_USER) last = k;
    while (first < n && it[first].kind == TURN_SYSTEM) first++;
    if (last == n || first >= last) return;
    int field = 0, reply = 0;
    for (size_t l = it[last].line; l < it[last].end && !field; l++) field = line_has_field(t, l);
    for (size_t k = first; k < last; k++) reply |= it[k].kind == TURN_REPLY;
    if (!field || !reply) return;
    for (size_t k = first; k < last; k++)
        if (it[k].kind != TURN_SYSTEM)
            for (size_t l = it[k].line; l < it[k].end; l++) t->flags[l] |= LINT_LF_EXAMPLE;
}

/* A message list written out in the file (YAML "- role: user" items,
 * JSON {"role": "user", ...} objects): the turns before its last user turn
 * are worked examples (few-shot turns), whose values illustrate, as in an
 * example block. Items of one list share their indentation; a line indented
 * less, or as much without opening or closing an item ("- ", "{", "}"),
 * ends the list. A role key that is not the first of its item leaves the
 * file alone: where an item's text starts is then unknown. */
static int mark_turn_examples(lint_text *t) {
    size_t item;
    for (size_t i = 0; i < t->n_lines; i++)
        if (turn_role_line(t, i, &item) != TURN_NONE && item == (size_t)-1) return UTIL_OK;
    turn_item *it = NULL;
    size_t n = 0, cap = 0;
    int ind = -1;
    for (size_t i = 0; i <= t->n_lines; i++) {
        int kind = i < t->n_lines ? turn_role_line(t, i, &item) : TURN_NONE;
        const char *p = NULL, *e = NULL, *q = NULL;
        if (i < t->n_lines) {
            size_t l = kind != TURN_NONE ? item : i;
            p = t->data + t->line_start[l], e = t->data + lint_text_line_end(t, l), q = skip_ws(p, e);
            if (kind == TURN_NONE && q == e) continue; /* blank lines end nothing */
        }
        int li = p ? indent_of(p, e) : -1;
        int ends = !p || (kind != TURN_NONE ? li != ind : li < ind || (li == ind && !strchr("-{}", *q)));
        if (ends && n) {
            it[n - 1].end = kind != TURN_NONE ? item : i;
            mark_turn_list(t, it, n);
            n = 0;
        }
        if (kind == TURN_NONE) {
            if (ends) ind = -1;
            continue;
        }
        if (n == cap) {
            turn_item *v = realloc(it, (cap = cap ? cap * 2 : 8) * sizeof *v);
            if (!v) {
                free(it);
                return UTIL_ENOMEM;
            }
            it = v;
        }
        if (n) it[n - 1].end = item;
        it[n++] = (turn_item){item, t->n_lines, kind};
        ind = li;
    }
    free(it);
    return UTIL_OK;
}

size_t lint_text_stand_in(const char *p, const char *e) {
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if (e - p < 5 || *p != '{' || e[-1] != '}' || !islower((unsigned char)p[1])) return 0;
    int space = 0;
    for (const char *q = p + 1; q < e - 1; q++) {
        if (strchr("{}:=;()\"|$", *q)) return 0;
        space |= *q == ' ';
    }
    return space && e - p <= 240 ? (size_t)(e - p) : 0;
}

/* Whether [p, e) is only a markup tag (<session>, </session>). */
static int markup_only(const char *p, const char *e) {
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if (e - p < 3 || *p != '<' || e[-1] != '>') return 0;
    for (const char *q = p[1] == '/' ? p + 2 : p + 1; q < e - 1; q++)
        if (!isalnum((unsigned char)*q) && *q != '_' && *q != '-') return 0;
    return 1;
}

/* Whether a fenced block's body (lines a..b-1) holds only placeholders, at
 * least one, and blank lines, markup tags around them aside: a slot that the
 * placeholders fill ("```swift\n{{selected}}\n```", "<session>\n{session
 * content}\n</session>"), not an example. */
static int slot_body(const lint_text *t, size_t a, size_t b) {
    int any = 0;
    for (size_t i = a; i < b; i++) {
        const char *e = t->data + lint_text_line_end(t, i), *p = skip_ws(t->data + t->line_start[i], e);
        if (p < e && markup_only(p, e)) continue;
        if (p < e && lint_text_stand_in(p, e)) {
            any = 1;
            continue;
        }
        while (p < e) {
            size_t l = placeholder_at(p, e);
            if (!l) return 0;
            any = 1;
            p = skip_ws(p + l, e);
        }
    }
    return any;
}

/* Whether the line above the fence opening on line f (blank lines aside)
 * asks the model to write in a format: "Immediately start with the
 * following format.", "Respond using this format:", "Output format:". The
 * fence then shows what the model writes and its placeholders are stand-ins
 * for its own text (```\n{CELL_CODE}\n```), not a slot the program fills.
 * Not a caption about the input ("The input format is:"). */
static int output_format_caption(const lint_text *t, size_t f) {
    static const char *const k_verbs[] = {"respond", "reply",  "answer", "output",   "return",
                                          "write",   "start",  "begin",  "produce",  "generate",
                                          "use",     "follow", "print",  "response", NULL};
    size_t l = f;
    const char *p = NULL, *e = NULL;
    while (l > 0 && f - l < 3) {
        l--;
        p = t->data + t->line_start[l], e = t->data + lint_text_line_end(t, l);
        if (skip_ws(p, e) < e) break;
        p = NULL;
    }
    if (!p || (t->flags[l] & LINT_LF_FENCE)) return 0;
    int fmt = 0, verb = 0;
    size_t words = 0;
    for (const char *q = p; q < e;) {
        if (!isalpha((unsigned char)*q)) {
            q++;
            continue;
        }
        const char *w = q;
        while (q < e && isalpha((unsigned char)*q)) q++;
        size_t wl = (size_t)(q - w);
        words++;
        if (wl == 5 && !strncasecmp(w, "input", 5)) return 0;
        if (wl == 6 && !strncasecmp(w, "format", 6)) fmt = 1;
        for (const char *const *v = k_verbs; *v && !verb; v++)
            verb = strlen(*v) == wl && !strncasecmp(w, *v, wl);
    }
    return fmt && (verb || words <= 2);
}

/* Whether heading line h names what follows as a system prompt ("# System
 * Prompt - Acme Assistant", "## System message"). */
static int names_system_prompt(const lint_text *t, size_t h) {
    static const char *const k[] = {"system prompt", "system message", "system-prompt", NULL};
    const char *p = t->data + t->line_start[h], *e = t->data + lint_text_line_end(t, h);
    for (; p < e; p++)
        for (const char *const *w = k; *w; w++)
            if ((size_t)(e - p) >= strlen(*w) && !strncasecmp(p, *w, strlen(*w))) return 1;
    return 0;
}

/* Whether the fence opening on line f, the file's last block, is a
 * collection's answer section: a heading is the line before it (blank lines
 * aside), or all before it is a short preamble under a title (a name, a
 * description, an author, a link), and its body (lines f+1..c-1) speaks to
 * the model ("You are", "your ..."), as collections show a product's prompt
 * under "## A(product)" or under a GPT's title and link; or that heading or
 * title names the block a system prompt, whatever language the body is in.
 * named_only: only the last (an ```xml block: a prompt written in tags only
 * when so named). */
static int answer_section(const lint_text *t, size_t f, size_t c, int named_only) {
    size_t h = f;
    while (h > 0 && skip_ws(t->data + t->line_start[h - 1], t->data + lint_text_line_end(t, h - 1)) ==
                        t->data + lint_text_line_end(t, h - 1))
        h--;
    int heading = h > 0 && t->data[t->line_start[h - 1]] == '#';
    size_t title = heading ? h - 1 : (size_t)-1;
    if (!heading) { /* or a collector's short preamble: a title, a line or two, a link */
        size_t nb = 0, first = (size_t)-1;
        for (size_t i = 0; i < f; i++) {
            const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
            if (skip_ws(p, e) == e) continue;
            if (first == (size_t)-1) first = i;
            if (t->flags[i] & LINT_LF_FENCE) return 0;
            nb++;
        }
        if (nb == 0 || nb > 5 || t->data[t->line_start[first]] != '#') return 0;
        title = first;
    }
    if (names_system_prompt(t, title)) return 1;
    if (named_only) return 0;
    for (size_t i = f + 1; i < c; i++) {
        const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
        for (const char *b = p; p + 5 <= e; p++)
            if ((p == b || !isalpha((unsigned char)p[-1])) &&
                ((p + 8 <= e && !strncasecmp(p, "you are ", 8)) || !strncasecmp(p, "your ", 5)))
                return 1;
    }
    return 0;
}

/* Whether [p, e) opens a triple-quoted string (an f/r/b prefix allowed);
 * returns the quote character or 0. */
static char triple_quote(const char *p, const char *e) {
    while (p < e && strchr("fFrRbBuU", *p) && p + 1 < e && strchr("fFrRbBuU'\"", p[1])) p++;
    if (e - p >= 3 && (*p == '\'' || *p == '"') && p[1] == *p && p[2] == *p) return *p;
    return 0;
}

/* The first line of a fenced block's body (lines a..b-1) when it is a
 * program's prompt template quoted verbatim: an assignment of a
 * triple-quoted string (`search_template = \` then `'''# The results:`, or
 * `PROMPT = """You are...`) that the body's last line closes. Collections
 * of rendered prompts publish a product's template so; its {fields} are the
 * program's. (size_t)-1 otherwise. */
static size_t program_template_body(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    size_t f = a, l = b;
    while (f < b &&
           skip_ws(d + t->line_start[f], d + lint_text_line_end(t, f)) == d + lint_text_line_end(t, f))
        f++;
    while (l > f && skip_ws(d + t->line_start[l - 1], d + lint_text_line_end(t, l - 1)) ==
                        d + lint_text_line_end(t, l - 1))
        l--;
    if (l <= f + 1) return (size_t)-1;
    const char *p = skip_ws(d + t->line_start[f], d + lint_text_line_end(t, f)),
               *e = d + lint_text_line_end(t, f);
    const char *q = p;
    while (q < e && (isalnum((unsigned char)*q) || *q == '_')) q++;
    if (q == p || isdigit((unsigned char)*p)) return (size_t)-1;
    q = skip_ws(q, e);
    if (q >= e || *q != '=' || (q + 1 < e && q[1] == '=')) return (size_t)-1;
    q = skip_ws(q + 1, e);
    char quote = 0;
    if (q < e && *q == '\\' && skip_ws(q + 1, e) == e) { /* continued on the next line */
        const char *n = d + t->line_start[f + 1];
        quote = triple_quote(skip_ws(n, d + lint_text_line_end(t, f + 1)), d + lint_text_line_end(t, f + 1));
    } else {
        quote = triple_quote(q, e);
    }
    if (!quote) return (size_t)-1;
    const char *le = d + lint_text_line_end(t, l - 1), *ls = d + t->line_start[l - 1];
    while (le > ls && (le[-1] == ' ' || le[-1] == '\t' || le[-1] == '\r' || le[-1] == ')')) le--;
    if (le - ls < 3 || le[-1] != quote || le[-2] != quote || le[-3] != quote) return (size_t)-1;
    return f;
}

/* Whether a fence's info string names a template language. */
static int template_language(const char *info, size_t il) {
    static const char *const k[] = {"liquid", "jinja",    "jinja2",      "j2",       "django",
                                    "twig",   "nunjucks", "njk",         "mustache", "handlebars",
                                    "hbs",    "gotmpl",   "go-template", "gohtml",   "erb",
                                    "ejs",    "tmpl",     "tpl",         NULL};
    size_t n = 0;
    while (n < il && !isspace((unsigned char)info[n]) && info[n] != '{') n++;
    for (const char *const *w = k; *w; w++)
        if (strlen(*w) == n && !strncasecmp(info, *w, n)) return 1;
    return 0;
}

/* --- the index ----------------------------------------------------------- */

int lint_text_init(lint_text *t, const char *data, size_t len, const char *const *markers, size_t n_markers,
                   int is_template) {
    memset(t, 0, sizeof *t);
    t->data = data;
    t->len = len;
    t->is_template = is_template;
    size_t n = 1;
    for (const char *p = data, *e = data + len; p < e;) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        if (!nl) break;
        n++;
        p = nl + 1;
    }
    if (len > 0 && data[len - 1] == '\n') n--; /* no empty last line after a final newline */
    if (len == 0) n = 0;
    t->n_lines = n;
    t->line_start = malloc((n + 1) * sizeof *t->line_start);
    t->flags = calloc(n + 1, 1);
    t->role_decls = calloc(1, sizeof *t->role_decls);
    if (!t->line_start || !t->flags || !t->role_decls) return UTIL_ENOMEM;
    size_t li = 0, off = 0;
    while (li < n) {
        t->line_start[li++] = off;
        const char *nl = memchr(data + off, '\n', len - off);
        off = nl ? (size_t)(nl - data) + 1 : len;
    }
    t->line_start[n] = len + 1;
    t->boundary_line = n;

    /* The first and last non-blank lines: a fence around the whole file is
     * how collections publish a prompt, not an example inside one. */
    size_t first_nb = n, last_nb = 0;
    for (size_t i = 0; i < n; i++)
        if (skip_ws(data + t->line_start[i], data + lint_text_line_end(t, i)) <
            data + lint_text_line_end(t, i)) {
            if (first_nb == n) first_nb = i;
            last_nb = i;
        }
    char fch = 0;
    size_t fcount = 0, fstart = 0, fline = 0;
    int in_fence = 0, whole_info = 0, xml_info = 0, tmpl_info = 0, find = 0; /* find: the opener's indent */
    for (size_t i = 0; i < n; i++) {
        const char *p = data + t->line_start[i], *e = data + lint_text_line_end(t, i);
        char c;
        size_t cnt;
        if (in_fence) {
            t->flags[i] |= LINT_LF_FENCE;
            if (fence_at(p, e, &c, &cnt, find + 3) && c == fch && cnt >= fcount) {
                const char *q = skip_invisible(skip_ws(p, e), e);
                if (only_ws_after_fence(q, e, c)) {
                    in_fence = 0;
                    t->flags[i] |= LINT_LF_FENCE_MARK;
                    size_t assign = whole_info ? program_template_body(t, fline + 1, i) : (size_t)-1;
                    if (assign != (size_t)-1) { /* a program's template: prompt text, its own prompt */
                        for (size_t k = fline + 1; k < i; k++) t->flags[k] &= (unsigned char)~LINT_LF_FENCE;
                        t->flags[assign] |= LINT_LF_FENCE_MARK;
                        if (range_push(&t->fields, &t->n_fields, &t->cap_fields, t->line_start[fline + 1],
                                       t->line_start[i]))
                            return UTIL_ENOMEM;
                        continue;
                    }
                    if ((fline == first_nb && i == last_nb && whole_info) ||
                        (i == last_nb && (whole_info || xml_info) &&
                         answer_section(t, fline, i, !whole_info)) ||
                        (!tmpl_info && slot_body(t, fline + 1, i) && !output_format_caption(t, fline))) {
                        for (size_t k = fline + 1; k < i; k++) t->flags[k] &= (unsigned char)~LINT_LF_FENCE;
                        continue; /* prompt text, not code */
                    }
                    if (add_code(t, fstart, (size_t)(e - data))) return UTIL_ENOMEM;
                }
            }
            continue;
        }
        int ind = indent_of(p, e);
        if (fence_at(p, e, &c, &cnt, 3) ||
            (ind > 3 && ind < 16 && fence_at(p, e, &c, &cnt, ind) && in_list_item(t, i, ind))) {
            in_fence = 1;
            find = ind > 3 ? ind : 0;
            fch = c;
            fcount = cnt;
            fstart = t->line_start[i];
            fline = i;
            /* a whole-file fence counts as the prompt only without a language
             * or with a text one (```, ```text, ```markdown) */
            const char *info = skip_ws(skip_invisible(skip_ws(p, e), e) + (c == '\\' ? 2 * cnt : cnt), e);
            size_t il = (size_t)(e - info);
            whole_info = il == 0 || (il == 4 && !strncasecmp(info, "text", 4)) ||
                         (il == 8 && !strncasecmp(info, "markdown", 8)) ||
                         (il == 2 && !strncasecmp(info, "md", 2)) ||
                         (il == 9 && !strncasecmp(info, "plaintext", 9));
            xml_info = il == 3 && !strncasecmp(info, "xml", 3);
            /* a fence labelled with a template language shows its syntax
             * (```liquid / {{ page.title }}): an example, never a slot */
            tmpl_info = template_language(info, il);
            t->flags[i] |= LINT_LF_FENCE | LINT_LF_FENCE_MARK;
            continue;
        }
        for (size_t m = 0; m < n_markers; m++) {
            size_t ml = strlen(markers[m]);
            if (ml && ml <= (size_t)(e - p) && memmem(p, (size_t)(e - p), markers[m], ml)) {
                t->flags[i] |= LINT_LF_BOUNDARY;
                if (t->boundary_line == n) t->boundary_line = i;
                break;
            }
        }
        if (no_output_line(p, e)) t->flags[i] |= LINT_LF_NO_OUTPUT;
        if (memchr(p, '`', (size_t)(e - p)) && scan_inline_code(t, (size_t)(p - data), (size_t)(e - data)))
            return UTIL_ENOMEM;
    }
    /* a fence never closed runs to the end of the file (CommonMark): the
     * last block, judged as a closed one would be */
    if (in_fence) {
        if ((fline == first_nb && whole_info) ||
            ((whole_info || xml_info) && answer_section(t, fline, n, !whole_info))) {
            for (size_t k = fline + 1; k < n; k++) t->flags[k] &= (unsigned char)~LINT_LF_FENCE;
        } else if (add_code(t, fstart, len)) {
            return UTIL_ENOMEM;
        }
    }

    /* YAML frontmatter: '---' on the first line, closed by '---' or '...'. */
    if (n > 1 && lint_text_line_end(t, 0) - t->line_start[0] >= 3 && memcmp(data, "---", 3) == 0 &&
        skip_ws(data + 3, data + lint_text_line_end(t, 0)) == data + lint_text_line_end(t, 0)) {
        for (size_t i = 1; i < n; i++) {
            const char *p = data + t->line_start[i], *e = data + lint_text_line_end(t, i);
            size_t l = (size_t)(skip_ws(p, e) == e ? 0 : e - p);
            if (l >= 3 && (memcmp(p, "---", 3) == 0 || memcmp(p, "...", 3) == 0) && skip_ws(p + 3, e) == e) {
                for (size_t k = 0; k <= i; k++) t->flags[k] |= LINT_LF_FRONTMATTER;
                break;
            }
        }
    }
    mark_examples(t);
    if (mark_listings(t) || mark_turn_examples(t)) return UTIL_ENOMEM;
    /* each quoted template is a prompt of its own; the rest of the file is prompt 0 */
    for (size_t k = 0; k < t->n_fields; k++) {
        size_t a = lint_text_line_of(t, t->fields[k].start), b = lint_text_line_of(t, t->fields[k].end);
        if (lint_text_own_prompt(t, a, b)) return UTIL_ENOMEM;
    }
    /* Fenced blocks were added when closed, inline spans as seen: sort. */
    for (size_t i = 1; i < t->n_code; i++) {
        lint_range r = t->code[i];
        size_t j = i;
        while (j > 0 && t->code[j - 1].start > r.start) {
            t->code[j] = t->code[j - 1];
            j--;
        }
        t->code[j] = r;
    }
    /* a listing's range holds the inline spans on its lines: merge */
    size_t w = 0;
    for (size_t i = 0; i < t->n_code; i++) {
        if (w && t->code[i].start < t->code[w - 1].end) {
            if (t->code[i].end > t->code[w - 1].end) t->code[w - 1].end = t->code[i].end;
            continue;
        }
        t->code[w++] = t->code[i];
    }
    t->n_code = w;
    return UTIL_OK;
}

void lint_text_release(lint_text *t) {
    free(t->line_start);
    free(t->flags);
    free(t->code);
    free(t->quiet);
    free(t->tags);
    free(t->order);
    free(t->fields);
    free(t->role_decls);
    free(t->branch);
    memset(t, 0, sizeof *t);
}

size_t lint_text_line_of(const lint_text *t, size_t off) {
    size_t lo = 0, hi = t->n_lines;
    if (hi == 0) return 0;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->line_start[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

size_t lint_text_line_end(const lint_text *t, size_t line) {
    size_t s = t->line_start[line];
    const char *nl = memchr(t->data + s, '\n', t->len - s);
    size_t e = nl ? (size_t)(nl - t->data) : t->len;
    if (e > s && t->data[e - 1] == '\r') e--;
    return e;
}

size_t lint_text_lower_bound(const void *v, size_t n, size_t stride, size_t key_off, size_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* v may be NULL when n is 0: no arithmetic on it then */
        size_t mid = lo + (hi - lo) / 2, k;
        memcpy(&k, (const char *)v + mid * stride + key_off, sizeof k);
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The range of v (sorted, disjoint) holding off, or NULL: the first range
 * ending after off (an offset into a buffer, so off + 1 does not wrap). */
static const lint_range *range_find(const lint_range *v, size_t n, size_t off) {
    size_t lo = lint_text_lower_bound(v, n, sizeof *v, offsetof(lint_range, end), off + 1);
    return lo < n && v[lo].start <= off && off < v[lo].end ? &v[lo] : NULL;
}

/* t->fields is pushed as each fence closes, so in file order and disjoint. */
int lint_text_in_fields(const lint_text *t, size_t off) {
    return range_find(t->fields, t->n_fields, off) != NULL;
}

int lint_text_in_code(const lint_text *t, size_t off) { return range_find(t->code, t->n_code, off) != NULL; }

int lint_text_code_path(const lint_text *t, size_t a, size_t b) {
    const lint_range *r = range_find(t->code, t->n_code, a);
    if (!r || b > r->end) return 0;
    const char *d = t->data;
    size_t cs = r->start, ce = r->end;
    if (d[cs] != '`' || memchr(d + cs, '\n', ce - cs)) return 0; /* a fence */
    while (cs < ce && d[cs] == '`') cs++;
    while (ce > cs && d[ce - 1] == '`') ce--;
    /* the root of a path: starts the span or a word, a '/' after it */
    int root = a == cs || d[a - 1] == ' ' || d[a - 1] == '"' || d[a - 1] == '\'';
    if (root && b < ce && d[b] == '/') return 1;
    size_t x = cs, y = ce;
    while (x < y && (d[x] == ' ' || d[x] == '"' || d[x] == '\'')) x++;
    while (y > x && (d[y - 1] == ' ' || d[y - 1] == '"' || d[y - 1] == '\'' || d[y - 1] == '/')) y--;
    return x == a && y == b;
}

int lint_text_column(const lint_text *t, size_t off) {
    size_t s = t->line_start[lint_text_line_of(t, off)];
    int col = 1;
    for (size_t i = s; i < off && i < t->len; i++)
        if (((unsigned char)t->data[i] & 0xC0) != 0x80) col++;
    return col;
}

/* --- quiet and tag ranges ------------------------------------------------------ */

/* Each id given here is above every id in t->order (the highest one is the
 * last given), so the next id is a counter, not a scan of the lines; only an
 * order set elsewhere (t->next_prompt still 0) is scanned, once. */
int lint_text_own_prompt(lint_text *t, size_t a, size_t b) {
    size_t n = t->n_lines;
    if (b > n) b = n;
    if (a >= b) return UTIL_OK;
    if (!t->order) { /* so far one prompt in file order */
        if (!(t->order = malloc(n * sizeof *t->order))) return UTIL_ENOMEM;
        for (size_t i = 0; i < n; i++) t->order[i] = (lint_order){0, i};
        t->next_prompt = 1;
    }
    if (!t->next_prompt)
        for (size_t i = 0; i < n; i++)
            if (t->order[i].prompt != LINT_NO_PROMPT && t->order[i].prompt >= t->next_prompt)
                t->next_prompt = t->order[i].prompt + 1;
    size_t id = t->next_prompt++;
    for (size_t i = a; i < b; i++) t->order[i].prompt = id;
    return UTIL_OK;
}

int lint_text_add_quiet(lint_text *t, size_t a, size_t b) {
    return range_push(&t->quiet, &t->n_quiet, &t->cap_quiet, a, b);
}

int lint_text_add_tag(lint_text *t, size_t a, size_t b) {
    return range_push(&t->tags, &t->n_tags, &t->cap_tags, a, b);
}

static int range_cmp(const void *x, const void *y) {
    const lint_range *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

static void range_merge(lint_range *v, size_t *n) {
    if (*n > 1) qsort(v, *n, sizeof *v, range_cmp);
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        if (w > 0 && v[i].start <= v[w - 1].end) {
            if (v[i].end > v[w - 1].end) v[w - 1].end = v[i].end;
            continue;
        }
        v[w++] = v[i];
    }
    *n = w;
}

void lint_text_ranges_finish(lint_text *t) {
    range_merge(t->quiet, &t->n_quiet);
    range_merge(t->tags, &t->n_tags);
}

int lint_text_in_quiet(const lint_text *t, size_t off) {
    return range_find(t->quiet, t->n_quiet, off) != NULL;
}

int lint_text_in_tag(const lint_text *t, size_t off) { return range_find(t->tags, t->n_tags, off) != NULL; }

int lint_text_tag_name(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    if (a == 0 || b >= t->len || b <= a) return 0;
    if (d[a - 1] != '<' && !(a >= 2 && d[a - 1] == '/' && d[a - 2] == '<')) return 0;
    if (d[b] == '>' || (d[b] == '/' && b + 1 < t->len && d[b + 1] == '>')) return 1;
    if (d[b] != ' ' || b + 1 >= t->len || !isalpha((unsigned char)d[b + 1])) return 0;
    for (size_t k = b + 1; k < t->len && d[k] != '\n' && d[k] != '<'; k++) /* attributes */
        if (d[k] == '>') return 1;
    return 0;
}

size_t lint_text_quiet_end(const lint_text *t, size_t off) {
    const lint_range *r = range_find(t->quiet, t->n_quiet, off);
    return r ? r->end : off;
}
