/* linter/lint_rules.c: the rules pass over one file: volatile-before-stable
 * (with tokens lost), volatile in stable-role files, sub-day time,
 * order-unstable constructs, SKILL.md frontmatter, invalid UTF-8, unused
 * suppressions, unknown placeholders. What counts as stable content after a
 * volatile value is decided here: fixed text that renders (lint_tmpl.c's
 * quiet ranges and placeholders of unknown class excluded) beyond markup,
 * role markers, delimiters and captions.
 * Token counts come from the counter it is given. Does not find files, read
 * configs, count tokens itself or detect patterns (lint_detect.c,
 * lint_tmpl.c), and never prints. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/skillmd.h"
#include "../util/vec.h"
#include "lint_registry.h"
#include "lint_rules.h"
#include "lint_tmpl.h"

/* --- one file's pending findings (before suppressions) ---------------------- */

typedef struct pending {
    int rule;
    int severity;      /* lint_severity: the rule's unless a rule lowers it for one finding */
    size_t start, end; /* byte offsets */
    char msg[512];
    long tokens;
    int estimated;
} pending;

typedef struct pendv {
    pending *v;
    size_t n, cap;
    /* past LINT_MAX_LISTED findings: suppressions are applied here and the
     * rest counted by severity, written into spill and dropped */
    const lint_text *t;
    lint_directive *dirs;
    size_t nd;
    size_t unlisted[3];
    pending spill;
} pendv;

static pending *pend_new(pendv *p, int rule, size_t start, size_t end) {
    if (p->n >= LINT_MAX_LISTED && p->t) {
        size_t line = p->t->n_lines ? lint_text_line_of(p->t, start) : 0;
        if (!lint_suppressed(p->dirs, p->nd, line, rule)) p->unlisted[lint_rule_get(rule)->severity]++;
        memset(&p->spill, 0, sizeof p->spill);
        return &p->spill;
    }
    if (util_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v)) return NULL;
    pending *x = &p->v[p->n++];
    memset(x, 0, sizeof *x);
    x->rule = rule;
    x->severity = lint_rule_get(rule)->severity;
    x->start = start;
    x->end = end;
    x->tokens = -1;
    return x;
}

/* "placeholder '{{ date }}'" or "date 'March 3, 2025'", quoted text cut at 48
 * bytes on a UTF-8 boundary. */
static void describe(char *out, size_t cap, const lint_text *t, const lint_span *s) {
    size_t n = s->end - s->start;
    int cut = 0;
    if (n > 48) {
        n = 48;
        while (n > 0 && ((unsigned char)t->data[s->start + n] & 0xC0) == 0x80) n--;
        cut = 1;
    }
    if (s->kind == LINT_K_CUSTOM && s->label)
        snprintf(out, cap, "%s '%.*s%s'", s->label, (int)n, t->data + s->start, cut ? "..." : "");
    else
        snprintf(out, cap, "%s%s '%.*s%s'", lint_vclass_name(s->vclass),
                 s->kind == LINT_K_PLACEHOLDER ? " placeholder" : "", (int)n, t->data + s->start,
                 cut ? "..." : "");
    if (s->kind != LINT_K_PLACEHOLDER && s->kind != LINT_K_CUSTOM) {
        char tmp[160];
        snprintf(tmp, sizeof tmp, "%s", out);
        snprintf(out, cap, "%s %s", lint_kind_name(s->kind), tmp + strlen(lint_vclass_name(s->vclass)) + 1);
        size_t l = strlen(out);
        snprintf(out + l, cap - l, " (%s)", lint_vclass_name(s->vclass));
    }
}

/* --- what counts as stable content ------------------------------------------ */

/* Fixed words a reader of the rendered prompt sees in [a, b): quiet ranges
 * (template tags, comments, frontmatter, volatile loop bodies), the spans in
 * hide (placeholders of unknown class: their bytes are not known to be
 * fixed; NULL for none), HTML comments,
 * markup tags (<context>, </current_date>, <|im_start|>) and short bracketed
 * markers ([INST], [END CONTEXT]) are skipped. roles counts the role words
 * among them (user, assistant, ...); colon: the text ends in ':'. */
typedef struct words {
    int n, alpha, roles, colon; /* alpha: the words with a letter */
} words;

static int role_word(const char *w, size_t n) {
    static const struct {
        const char *s;
        size_t n;
    } k[] = {{"system", 6},  {"user", 4},     {"assistant", 9}, {"human", 5},     {"ai", 2},
             {"model", 5},   {"bot", 3},      {"tool", 4},      {"developer", 9}, {"function", 8},
             {"chatbot", 7}, {"customer", 8}, {"agent", 5},     {"ipython", 7},   {"observation", 11}};
    if (n < 2 || n > 11) return 0; /* called for every word of a file */
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (k[i].n == n && (w[0] | 0x20) == k[i].s[0] && strncasecmp(k[i].s, w, n) == 0) return 1;
    return 0;
}

/* Whether the bracketed text [p, e) opens or closes a section around what
 * it frames, however long: "The Start of Assistant A's Answer", "End of
 * Document", "BEGIN USER INPUT" (a judge prompt's delimiters around each
 * answer, MT-Bench style). */
static int section_marker(const char *p, const char *e) {
    static const char *const k_open[] = {"the start of ", "the end of ", "the beginning of ",
                                         "start of ",     "end of ",     "beginning of ",
                                         "begin ",        NULL};
    for (const char *const *w = k_open; *w; w++) {
        size_t n = strlen(*w);
        if ((size_t)(e - p) > n && !strncasecmp(p, *w, n)) return 1;
    }
    return 0;
}

/* End of markup at i ('<' of a tag, '[' of a short marker or a section
 * marker), or i. */
static size_t skip_markup(const char *s, size_t i, size_t a, size_t b) {
    if (s[i] == '<' && i + 1 < b) {
        unsigned char n1 = (unsigned char)s[i + 1];
        if (i + 4 <= b && memcmp(s + i, "<!--", 4) == 0) {
            const char *e = memmem(s + i, b - i, "-->", 3);
            return e ? (size_t)(e - s) + 3 : i;
        }
        if (isalpha(n1) || n1 == '/' || n1 == '|' || n1 == '!' || n1 == '?' || n1 >= 0x80) {
            const char *e = memchr(s + i, '>', b - i < 200 ? b - i : 200);
            return e ? (size_t)(e - s) + 1 : i;
        }
    }
    if (s[i] == '[' && (i == a || !isalnum((unsigned char)s[i - 1]))) {
        const char *e = memchr(s + i, ']', b - i < 80 ? b - i : 80);
        if (e && ((size_t)(e - s) + 1 >= b || !isalnum((unsigned char)e[1]))) {
            int sp = 0;
            for (const char *q = s + i; q < e; q++) sp += *q == ' ';
            if ((sp <= 2 && e - (s + i) < 40) || section_marker(s + i + 1, e)) return (size_t)(e - s) + 1;
        }
    }
    return i;
}

/* The script of the UTF-8 character at s[i] (its length in *len): 1 for a
 * CJK ideograph, kana or Hangul syllable, text written without spaces where
 * each character counts as a word; 2 for CJK punctuation and full-width
 * forms (。、「」：), which separate words; 0 for anything else. */
static int cjk_char(const char *s, size_t i, size_t b, size_t *len) {
    const unsigned char *u = (const unsigned char *)s + i;
    *len = 1;
    if (u[0] < 0xE0 || u[0] >= 0xF0 || i + 3 > b || (u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80) return 0;
    unsigned cp = ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu);
    *len = 3;
    if ((cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
        (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0xF900 && cp <= 0xFAFF))
        return 1;
    if ((cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFFEF)) return 2;
    *len = 1;
    return 0;
}

/* Adds the words of [a, b) to out; *lastp: the last visible character. */
static void count_range(const lint_text *t, size_t a, size_t b, words *out, char *lastp) {
    const char *s = t->data;
    size_t ws = 0;
    int in_word = 0, has_alpha = 0;
    char last = *lastp;
    /* the quiet ranges are sorted and disjoint: walk them along with i
     * (qi: the first one ending after i) instead of a search per byte */
    size_t qi = lint_text_lower_bound(t->quiet, t->n_quiet, sizeof *t->quiet, offsetof(lint_range, end),
                                      a + 1);
    for (size_t i = a; i < b; i++) {
        size_t skip = i;
        while (qi < t->n_quiet && t->quiet[qi].end <= i) qi++;
        if (qi < t->n_quiet && t->quiet[qi].start <= i)
            skip = t->quiet[qi].end;
        else if (s[i] == '<' || s[i] == '[')
            skip = skip_markup(s, i, a, b);
        if (skip > i) {
            if (in_word) {
                out->n++;
                out->alpha += has_alpha;
                out->roles += role_word(s + ws, i - ws);
            }
            in_word = 0;
            i = (skip > b ? b : skip) - 1;
            continue;
        }
        char c = s[i];
        size_t cl;
        int cjk = ((unsigned char)c & 0x80) ? cjk_char(s, i, b, &cl) : 0;
        if (cjk) { /* a CJK character is a word of its own; its punctuation ends words */
            if (in_word) {
                out->n++;
                out->alpha += has_alpha;
                out->roles += role_word(s + ws, i - ws);
            }
            in_word = 0;
            if (cjk == 1) out->n++, out->alpha++;
            /* a full-width colon (U+FF1A) is a caption's colon */
            last = cjk == 2 && !memcmp(s + i, "\xEF\xBC\x9A", 3) ? ':' : (cjk == 2 ? (char)0xE3 : 'a');
            i += cl - 1;
            continue;
        }
        if (c == '\\' && i + 1 < b && (s[i + 1] == 'n' || s[i + 1] == 't' || s[i + 1] == 'r')) {
            if (in_word) { /* an escaped newline or tab in a serialized string: a space */
                out->n++;
                out->alpha += has_alpha;
                out->roles += role_word(s + ws, i - ws);
            }
            in_word = 0;
            i++;
            continue;
        }
        int w = isalnum((unsigned char)c) || ((unsigned char)c & 0x80) || c == '_';
        if (w && !in_word) ws = i, has_alpha = 0;
        if (w && (isalpha((unsigned char)c) || ((unsigned char)c & 0x80))) has_alpha = 1;
        if (!w && in_word) {
            out->n++;
            out->alpha += has_alpha;
            out->roles += role_word(s + ws, i - ws);
        }
        in_word = w;
        if (!isspace((unsigned char)c) && c != '*' && c != '_' && c != '"' && c != '\'') last = c;
    }
    if (in_word) {
        out->n++;
        out->alpha += has_alpha;
        out->roles += role_word(s + ws, b - ws);
    }
    *lastp = last;
}

static void count_words(const lint_text *t, const lint_spanv *hide, size_t a, size_t b, words *out) {
    memset(out, 0, sizeof *out);
    char last = 0;
    size_t lo = 0, hi = hide ? hide->n : 0;
    while (lo < hi) { /* the first hidden span that ends after a (spans are sorted) */
        size_t mid = lo + (hi - lo) / 2;
        if (hide->v[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; hide && lo < hide->n && hide->v[lo].start < b && a < b; lo++) {
        if (hide->v[lo].start > a) count_range(t, a, hide->v[lo].start, out, &last);
        if (hide->v[lo].end > a) a = hide->v[lo].end;
    }
    if (a < b) count_range(t, a, b, out, &last);
    out->colon = last == ':';
}

/* Whether [a, b) is a framing line: text between runs of 3+ of one
 * punctuation character ("---BEGIN RETRIEVED DOCUMENTS---", "=== END ==="). */
static int framing_line(const char *s, size_t a, size_t b) {
    while (a < b && isspace((unsigned char)s[a])) a++;
    while (b > a && isspace((unsigned char)s[b - 1])) b--;
    if (b - a < 7 || !strchr("-=*+~<>#_", s[a]) || s[a] == '\0') return 0;
    size_t i = a, j = b;
    while (i < b && s[i] == s[a]) i++;
    while (j > i && strchr("-=*+~<>#_", s[j - 1]) && s[j - 1] != '\0') j--;
    return i - a >= 3 && b - j >= 3;
}

/* Whether [a, b) of a line holds stable prompt text: at least min_words
 * words (1 for a whole line, more for the rest of a line after a volatile
 * value) that are not only a role marker ("user:", "# assistant") and not a
 * caption that introduces what follows (a line ending in ':' such as
 * "Output:" or "Here is the description of the command:", a short heading):
 * what a caption introduces is stable or not by itself. */
static int stable_part(const lint_text *t, const lint_spanv *hide, size_t line, size_t a, size_t b,
                       int min_words);

/* A fixed instruction that ends in an answer cue on its own line ("Please
 * answer yes or no! Answer:"): the sentence before the cue is stable
 * content; the cue (one or two words after the last '.', '!' or '?') only
 * opens the answer. */
static int instruction_before_cue(const lint_text *t, const lint_spanv *hide, size_t line, size_t a, size_t b,
                                  int min_words) {
    const char *d = t->data;
    size_t k = b;
    while (k > a && !((d[k - 1] == '.' || d[k - 1] == '!' || d[k - 1] == '?') && k < b && d[k] == ' ')) k--;
    if (k == a) return 0;
    words cue;
    count_words(t, hide, k, b, &cue);
    return cue.n <= 2 && stable_part(t, hide, line, a, k, min_words > 3 ? min_words : 3);
}

/* Whether [a, b), a whole line, echoes a command the way a terminal shows
 * one: "$ task lint", "$go_diagnostics" (a '$', then at most six words and
 * no sentence). It labels the output printed under it, as a caption does. */
static int shell_echo(const char *d, size_t a, size_t b) {
    while (a < b && (d[a] == ' ' || d[a] == '\t')) a++;
    while (b > a && isspace((unsigned char)d[b - 1])) b--;
    /* a sentence ends in a word's period ("./..." is a path) or a caption's colon */
    if (b - a < 2 || d[a] != '$' || d[a + 1] == '{' || d[b - 1] == ':' ||
        (d[b - 1] == '.' && isalpha((unsigned char)d[b - 2])))
        return 0;
    int n = 0;
    for (size_t i = a + 1; i < b; i++) n += d[i] == ' ' && d[i - 1] != ' ';
    return n <= 6 && (d[a + 1] == ' ' || isalpha((unsigned char)d[a + 1]) || d[a + 1] == '_');
}

static int stable_part(const lint_text *t, const lint_spanv *hide, size_t line, size_t a, size_t b,
                       int min_words) {
    if (a <= t->line_start[line] && shell_echo(t->data, a, b)) return 0; /* labels the output below it */
    words w;
    count_words(t, hide, a, b, &w);
    if ((min_words > 1 ? w.alpha : w.n) < min_words) return 0; /* next to a value: words, not numbers */
    if (w.n <= 6 && framing_line(t->data, a, b)) return 0;     /* a delimiter around what follows */
    if (w.roles > 0 && w.n <= 3) return 0; /* a role marker: "user:", "ai name=assistant" */
    if (w.colon)                           /* a caption or answer cue: what it introduces decides */
        return instruction_before_cue(t, hide, line, a, b, min_words);
    const char *p = t->data + t->line_start[line], *e = t->data + b;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (a <= (size_t)(p - t->data) && p < e && *p == '#' && w.n <= 6) return 0;
    return 1;
}

/* A serialized one-line template ("template": "...\\n...") is split at its
 * escaped newlines first: a final "\\nSummary:" cue does not make the fixed
 * instruction before it a caption. */
static int stable_text(const lint_text *t, const lint_spanv *hide, size_t line, size_t a, size_t b,
                       int min_words) {
    const char *d = t->data;
    if (b <= a) return 0; /* a value that runs past the line's end leaves nothing after it */
    const char *bs = b - a > 2 ? memchr(d + a, '\\', b - a) : NULL;
    if (!bs || !memmem(bs, (size_t)(d + b - bs), "\\n", 2))
        return stable_part(t, hide, line, a, b, min_words);
    for (size_t p = a; p < b;) {
        const char *e = p < b ? memmem(d + p, b - p, "\\n", 2) : NULL;
        size_t q = e ? (size_t)(e - d) : b;
        if (q > p && stable_part(t, hide, line, p, q, min_words)) return 1;
        p = e ? q + 2 : b;
    }
    return 0;
}

/* Whether the words before a value only introduce it: they end in "is",
 * "are", "was" or "were" ("The user's question is {{ question }}"). */
static int introduces(const char *d, size_t a, size_t b) {
    while (b > a &&
           (isspace((unsigned char)d[b - 1]) || d[b - 1] == '"' || d[b - 1] == '\'' || d[b - 1] == '`'))
        b--;
    size_t w = b;
    while (w > a && isalpha((unsigned char)d[w - 1])) w--;
    size_t n = b - w;
    return (n == 2 && !strncasecmp(d + w, "is", 2)) || (n == 3 && !strncasecmp(d + w, "are", 3)) ||
           (n == 3 && !strncasecmp(d + w, "was", 3)) || (n == 4 && !strncasecmp(d + w, "were", 4));
}

/* --- the volatile rules (PL001, PL002, PL003) ---------------------------------- */

typedef struct file_ctx {
    const lint_rules_env *env;
    const lint_text *t;
    int role;
    unsigned enabled;
    const char *base; /* file base name, for messages */
    const char *src;  /* the file as read, for the source line shown; t->data may be
                       * a copy with a log's margin blanked (lint_text_unmargin) */
} file_ctx;

/* A literal value (a date, a time, a path, an id: not a placeholder, a
 * command's output or a custom pattern) in a file that a tool sends as
 * written, filling in only its own syntax: a Claude Code command ($ARGUMENTS,
 * !`cmd`) or a VS Code prompt file (${selection}). Nothing renders a fresh
 * value there, so the literal is the same bytes on every run. */
static int committed_literal(const file_ctx *f, const lint_span *s) {
    if (!f->t->command_file && !f->t->vscode_prompt && !f->t->verbatim) return 0;
    return s->kind != LINT_K_PLACEHOLDER && s->kind != LINT_K_SHELL && s->kind != LINT_K_CUSTOM;
}

static int is_relevant(const file_ctx *f, const lint_span *s) {
    if (s->vclass == LINT_VC_NONE) return 0;
    if (f->role == LINT_ROLE_USER && s->vclass == LINT_VC_USER) return 0;
    if (s->rendered && (f->role == LINT_ROLE_STABLE || f->role == LINT_ROLE_SKILL))
        return 0; /* committed text of AGENTS.md or SKILL.md: fixed, not pasted per request */
    if (committed_literal(f, s)) return 0;
    return 1;
}

static const char *how_often(int vc) {
    switch (vc) {
    case LINT_VC_USER: return "per user";
    case LINT_VC_DAY: return "daily";
    case LINT_VC_SESSION: return "every session";
    case LINT_VC_TURN: return "every turn";
    default: return "on every call";
    }
}

static long count(const file_ctx *f, const char *text, size_t len, int *estimated) {
    return f->env->tokens.count(f->env->tokens.user, text, len, estimated);
}

/* Suffix sums of line tokens: suf[k - from] = tokens of lines k..to (each
 * with its newline), so tokens_lost is O(1) per finding. */
static long *line_token_suffix(file_ctx *f, size_t from, size_t to, int *est) {
    long *v = calloc(to - from + 2, sizeof *v);
    if (!v) return NULL;
    for (size_t i = to + 1; i-- > from;) {
        size_t s = f->t->line_start[i];
        size_t e = i + 1 < f->t->n_lines ? f->t->line_start[i + 1] : f->t->len;
        int e1 = 0;
        v[i - from] = v[i - from + 1] + count(f, f->t->data + s, e - s, &e1);
        *est |= e1;
    }
    return v;
}

typedef struct vstate {
    size_t *first, *last;  /* per line: first and last relevant span */
    unsigned char *stable; /* per line: 1 stable text after its values (or no value), 2 only
                            * before its first value (stable for the lines above only) */
    size_t last_stable;    /* (size_t)-1 when no line is stable */
    size_t *prompt_last;   /* with t->order: per prompt, its stable line sent last, or (size_t)-1 */
    /* with t->order: the lines sorted by (prompt, pos), and over that order
     * prefix sums of line tokens and of lines whose count is an estimate, so
     * a prompt's lines between two positions are summed at once */
    struct ord_line {
        size_t prompt, pos;
    } * ord;
    long *ord_tok;
    size_t *ord_est;
    long *suf; /* line token suffix sums from suf_from to last_stable */
    size_t suf_from;
    int est;
} vstate;

/* The last stable line that line i is sent before: the file's, or where a
 * data file's lines are sent in another order (t->order), the stable line
 * sent last in i's own prompt; (size_t)-1 when there is none. */
static size_t stable_end(const vstate *v, const lint_text *t, size_t i) {
    if (!t->order) return v->last_stable;
    size_t p = t->order[i].prompt;
    return p == LINT_NO_PROMPT ? (size_t)-1 : v->prompt_last[p];
}

/* Whether line i is sent before line j (in the same prompt). */
static int sent_before(const lint_text *t, size_t i, size_t j) {
    if (!t->order) return i < j;
    return t->order[i].prompt == t->order[j].prompt && t->order[i].pos < t->order[j].pos;
}

static int ord_cmp(const void *a, const void *b) {
    const struct ord_line *x = a, *y = b;
    if (x->prompt != y->prompt) return x->prompt < y->prompt ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Fills v->ord and its prefix sums (each line counted once). */
static int order_sums(file_ctx *f, vstate *v) {
    const lint_text *t = f->t;
    size_t n = t->n_lines;
    struct {
        struct ord_line k;
        size_t line;
    } *tmp = malloc((n ? n : 1) * sizeof *tmp);
    v->ord = malloc((n ? n : 1) * sizeof *v->ord);
    v->ord_tok = malloc((n + 1) * sizeof *v->ord_tok);
    v->ord_est = malloc((n + 1) * sizeof *v->ord_est);
    if (!tmp || !v->ord || !v->ord_tok || !v->ord_est) {
        free(tmp);
        free(v->ord);
        free(v->ord_tok);
        free(v->ord_est);
        v->ord = NULL, v->ord_tok = NULL, v->ord_est = NULL;
        return UTIL_ENOMEM;
    }
    for (size_t j = 0; j < n; j++)
        tmp[j].k = (struct ord_line){t->order[j].prompt, t->order[j].pos}, tmp[j].line = j;
    qsort(tmp, n, sizeof *tmp, ord_cmp); /* the key leads the struct: (prompt, pos) order */
    v->ord_tok[0] = 0;
    v->ord_est[0] = 0;
    for (size_t k = 0; k < n; k++) {
        size_t j = tmp[k].line, s = t->line_start[j], e = lint_text_line_end(t, j);
        int e1 = 0;
        v->ord[k] = tmp[k].k;
        v->ord_tok[k + 1] = v->ord_tok[k] + count(f, t->data + s, e - s, &e1);
        v->ord_est[k + 1] = v->ord_est[k] + (e1 != 0);
    }
    free(tmp);
    return UTIL_OK;
}

/* The first index of v->ord whose (prompt, pos) comes after (prompt, pos). */
static size_t ord_after(const vstate *v, size_t n, size_t prompt, size_t pos) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct ord_line *m = &v->ord[mid];
        if (m->prompt < prompt || (m->prompt == prompt && m->pos <= pos))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Tokens that a value ending at end on line i makes uncacheable. */
static int tokens_after(file_ctx *f, vstate *v, const lint_spanv *sv, size_t i, size_t end, long *out,
                        int *estimated) {
    const lint_text *t = f->t;
    int e1 = 0;
    size_t last = stable_end(v, t, i);
    if (t->order) { /* the rest of line i, then its prompt's lines sent after it */
        size_t le = lint_text_line_end(t, i);
        if (end > le) end = le;
        *out = count(f, t->data + end, le - end, &e1);
        *estimated = e1;
        if (last == (size_t)-1) return UTIL_OK;
        if (!v->ord && order_sums(f, v)) return UTIL_ENOMEM;
        /* the lines of i's prompt sent after i, up to and with the last stable one */
        size_t from = ord_after(v, t->n_lines, t->order[i].prompt, t->order[i].pos),
               to = ord_after(v, t->n_lines, t->order[i].prompt, t->order[last].pos);
        if (to > from) {
            *out += v->ord_tok[to] - v->ord_tok[from];
            *estimated |= v->ord_est[to] > v->ord_est[from];
        }
        return UTIL_OK;
    }
    if (!v->suf || i < v->suf_from) { /* PL008 can ask about a line above the first */
        free(v->suf);
        v->suf_from = i;
        if (!(v->suf = line_token_suffix(f, i, last, &v->est))) return UTIL_ENOMEM;
    }
    size_t le = lint_text_line_end(t, i);
    if (end > le) end = le; /* a value written across lines */
    if (i == last) {        /* only the rest of this line is stable */
        size_t from = v->last[i] != (size_t)-1 ? sv->v[v->last[i]].end : end;
        if (from < end) from = end;
        if (from > le) from = le;
        *out = count(f, t->data + from, le - from, &e1);
    } else {
        size_t next = i + 1 < t->n_lines ? t->line_start[i + 1] : t->len;
        *out = count(f, t->data + end, next - end, &e1) + v->suf[i + 1 - v->suf_from];
    }
    *estimated = v->est | e1;
    return UTIL_OK;
}

/* PL008 on the lines before stable content not already reported. */
static int unknown_rule(file_ctx *f, vstate *v, const lint_spanv *sv, const lint_spanv *unk,
                        unsigned char *reported, pendv *out) {
    const lint_text *t = f->t;
    if (!(f->enabled & (1u << LINT_R_UNKNOWN_PLACEHOLDER)) || f->role == LINT_ROLE_USER) return UTIL_OK;
    for (size_t k = 0; k < unk->n; k++) {
        const lint_span *s = &unk->v[k];
        size_t i = lint_text_line_of(t, s->start), last = stable_end(v, t, i);
        if (reported[i] || i >= t->boundary_line || last == (size_t)-1 ||
            (i != last && !sent_before(t, i, last)))
            continue;
        if (i == last && !stable_text(t, unk, i, s->end, lint_text_line_end(t, i), 5)) continue;
        long tok;
        int est;
        int rc = tokens_after(f, v, sv, i, s->end, &tok, &est);
        if (rc) return rc;
        pending *p = pend_new(out, LINT_R_UNKNOWN_PLACEHOLDER, s->start, s->end);
        if (!p) return UTIL_ENOMEM;
        reported[i] = 1;
        size_t nlen = s->end - s->start;
        snprintf(p->msg, sizeof p->msg,
                 "placeholder '%.*s%s' has no known name and the words around it do not say how "
                 "often it changes; it precedes stable content (%s%ld tokens): if it changes per "
                 "request or user, move it below line %zu; if it is fixed, declare it \"stable\" "
                 "under \"placeholders\" in .promptlint.json",
                 (int)(nlen > 48 ? 48 : nlen), t->data + s->start, nlen > 48 ? "..." : "", est ? "~" : "",
                 tok, last + 1);
    }
    return UTIL_OK;
}

/* What line i's first relevant value is, and how many more the line holds. */
static void line_what(const file_ctx *f, const lint_spanv *sv, const vstate *v, size_t i, char *what,
                      size_t cap) {
    describe(what, cap, f->t, &sv->v[v->first[i]]);
    int more = 0;
    for (size_t k = v->first[i] + 1; k <= v->last[i]; k++) more += is_relevant(f, &sv->v[k]);
    if (more) {
        size_t l = strlen(what);
        snprintf(what + l, cap - l, " (and %d more on this line)", more);
    }
}

static int mark_fallbacks(const lint_text *t, const lint_spanv *sv, const lint_spanv *unk, unsigned char *fb);

static int volatile_rules(file_ctx *f, const lint_spanv *sv, const lint_spanv *unk, pendv *out) {
    const lint_text *t = f->t;
    size_t n = t->n_lines, region = t->boundary_line;
    vstate v = {0};
    v.first = malloc((n + 1) * sizeof *v.first);
    v.last = malloc((n + 1) * sizeof *v.last);
    v.stable = calloc(n + 1, 1);
    unsigned char *reported = calloc(n + 1, 1);
    if (t->order) v.prompt_last = malloc((n + 1) * sizeof *v.prompt_last);
    int rc = v.first && v.last && v.stable && reported && (v.prompt_last || !t->order) ? UTIL_OK
                                                                                       : UTIL_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) v.first[i] = v.last[i] = (size_t)-1;
    for (size_t i = 0; i <= n && v.prompt_last; i++) v.prompt_last[i] = (size_t)-1;
    for (size_t k = 0; k < sv->n && !rc; k++) {
        if (!is_relevant(f, &sv->v[k])) continue;
        size_t l = lint_text_line_of(t, sv->v[k].start);
        if (v.first[l] == (size_t)-1) v.first[l] = k;
        v.last[l] = k;
    }
    v.last_stable = (size_t)-1;
    unsigned char *fallback = rc ? NULL : calloc(n + 1, 1);
    if (!rc && (!fallback || mark_fallbacks(t, sv, unk, fallback))) rc = UTIL_ENOMEM;
    for (size_t i = 0; i < region && !rc; i++) {
        if ((t->flags[i] & (LINT_LF_NO_OUTPUT | LINT_LF_BOUNDARY | LINT_LF_DIRECTIVE | LINT_LF_FRONTMATTER |
                            LINT_LF_PREFILL | LINT_LF_FENCE_MARK)) ||
            fallback[i])
            continue;
        size_t le = lint_text_line_end(t, i);
        if (v.first[i] == (size_t)-1)
            v.stable[i] = stable_text(t, unk, i, t->line_start[i], le, 1);
        else if (!(v.stable[i] = stable_text(t, unk, i, sv->v[v.last[i]].end, le, 5)) &&
                 stable_text(t, unk, i, t->line_start[i], sv->v[v.first[i]].start, 5) &&
                 !introduces(t->data, t->line_start[i], sv->v[v.first[i]].start))
            v.stable[i] = 2; /* fixed words before this line's value: stable for the lines above */
        if (v.stable[i]) v.last_stable = i;
        size_t p = t->order ? t->order[i].prompt : LINT_NO_PROMPT;
        if (v.stable[i] && p <= n && (v.prompt_last[p] == (size_t)-1 || sent_before(t, v.prompt_last[p], i)))
            v.prompt_last[p] = i;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        if (v.first[i] == (size_t)-1) continue;
        const lint_span *s = &sv->v[v.first[i]];
        if (s->cont) continue; /* reported with the line its block starts on */
        char what[240];
        size_t last = stable_end(&v, t, i);
        int before = i < region && last != (size_t)-1 &&
                     (sent_before(t, i, last) || (i == last && v.stable[i] == 1));
        if (before) reported[i] = 1;
        if (before && (f->enabled & (1u << LINT_R_VOLATILE_BEFORE_STABLE))) {
            pending *p = pend_new(out, LINT_R_VOLATILE_BEFORE_STABLE, s->start, s->end);
            if (!p) {
                rc = UTIL_ENOMEM;
                break;
            }
            if (p == &out->spill) continue; /* past the listing cap: counted, never printed */
            line_what(f, sv, &v, i, what, sizeof what);
            long tok;
            int est;
            if ((rc = tokens_after(f, &v, sv, i, s->end, &tok, &est))) break;
            p->tokens = tok;
            p->estimated = est;
            snprintf(p->msg, sizeof p->msg,
                     "%s changes %s and precedes stable content: %s%ld tokens after it cannot "
                     "be cached; move it below line %zu or under a cache-boundary marker",
                     what, how_often(s->vclass), p->estimated ? "~" : "", tok, last + 1);
            continue;
        }
        if (before) continue; /* PL001 is off: do not fall back to weaker rules */
        line_what(f, sv, &v, i, what, sizeof what);
        int stable_role = f->role == LINT_ROLE_STABLE || f->role == LINT_ROLE_SKILL;
        if (stable_role && i < region && (f->enabled & (1u << LINT_R_VOLATILE_IN_STABLE_FILE))) {
            pending *p = pend_new(out, LINT_R_VOLATILE_IN_STABLE_FILE, s->start, s->end);
            if (!p) {
                rc = UTIL_ENOMEM;
                break;
            }
            reported[i] = 1;
            snprintf(p->msg, sizeof p->msg,
                     "%s changes %s but %s is cached as stable content; move it to the "
                     "per-session context%s",
                     what, how_often(s->vclass), f->base, s->vclass == LINT_VC_USER ? " or USER.md" : "");
            continue;
        }
        if (!(f->enabled & (1u << LINT_R_SUBDAY_TIME))) continue;
        for (size_t k = v.first[i]; k <= v.last[i]; k++) {
            const lint_span *q = &sv->v[k];
            if (!q->subday || !is_relevant(f, q)) continue;
            describe(what, sizeof what, t, q);
            pending *p = pend_new(out, LINT_R_SUBDAY_TIME, q->start, q->end);
            if (!p) {
                rc = UTIL_ENOMEM;
                break;
            }
            reported[i] = 1;
            snprintf(p->msg, sizeof p->msg,
                     "%s is finer than a day: it changes on every call, so the prompt differs "
                     "from one turn to the next; use the date only, or send the time with the "
                     "newest user message",
                     what);
            break;
        }
    }
    if (!rc) rc = unknown_rule(f, &v, sv, unk, reported, out);
    free(reported);
    free(fallback);
    free(v.suf);
    free(v.prompt_last);
    free(v.ord);
    free(v.ord_tok);
    free(v.ord_est);
    free(v.first);
    free(v.last);
    free(v.stable);
    return rc;
}

/* --- order, skill, utf-8 ------------------------------------------------------------ */

static int order_rules(file_ctx *f, pendv *out, util_err *err) {
    lint_order_hit *h = NULL;
    size_t n = 0;
    int rc = lint_detect_order(f->env->det, f->t, &h, &n, err);
    for (size_t i = 0; i < n && !rc; i++) {
        pending *p = pend_new(out, LINT_R_UNSTABLE_ORDER, h[i].start, h[i].end);
        if (!p) {
            rc = UTIL_ENOMEM;
            break;
        }
        switch (h[i].why) {
        case LINT_ORDER_MAP_LOOP:
            snprintf(p->msg, sizeof p->msg,
                     "loop over a mapping without sorting ('%s'): iteration order can change "
                     "between renders; use |dictsort or sort the keys",
                     h[i].detail);
            break;
        case LINT_ORDER_GLOB:
            snprintf(p->msg, sizeof p->msg,
                     "glob include ('%s'): the order of the included files depends on the file "
                     "system; list them explicitly or sort them",
                     h[i].detail);
            break;
        case LINT_ORDER_TOOLS_LOOP:
            snprintf(p->msg, sizeof p->msg,
                     "loop over '%s' without sorting: tool and skill definitions must come in a "
                     "stable order; use |sort(attribute='name')",
                     h[i].detail);
            break;
        default:
            snprintf(p->msg, sizeof p->msg,
                     "tool list is not sorted by name (%s); sort it so the prompt prefix is "
                     "identical across sessions",
                     h[i].detail);
        }
    }
    free(h);
    return rc;
}

/* Whether the SKILL.md at rel (display: the same file as the caller named
 * it, a path on disk) is a Claude Code skill: under a .claude folder
 * (.claude/skills/NAME/, ~/.claude/skills/, a plugin kept in .claude/plugins/)
 * or in the skills/ folder of a plugin, whose root holds .claude-plugin/. */
static int claude_code_skill(const char *rel, const char *display) {
    if (!strncmp(rel, ".claude/", 8) || strstr(rel, "/.claude/") || strstr(display, "/.claude/") ||
        !strncmp(display, ".claude/", 8))
        return 1;
    const char *path = display;
    /* <plugin>/skills/<name>/SKILL.md: back over the last three components */
    size_t k = strlen(path), starts[3];
    for (int up = 0; up < 3; up++) {
        while (k > 0 && path[k - 1] != '/') k--;
        starts[up] = k;
        if (up < 2) {
            if (k == 0) return 0;
            k--; /* the '/' before it */
        }
    }
    if (strncmp(path + starts[2], "skills/", 7)) return 0;
    char manifest[4096];
    int n = snprintf(manifest, sizeof manifest, "%.*s.claude-plugin/plugin.json", (int)starts[2], path);
    return n > 0 && (size_t)n < sizeof manifest && access(manifest, R_OK) == 0;
}

static int skill_rules(file_ctx *f, const char *rel, const char *display, pendv *out, util_err *err) {
    /* the folder holding SKILL.md names the skill */
    char folder[256] = "";
    const char *slash = strrchr(rel, '/');
    if (slash) {
        const char *s = slash;
        while (s > rel && s[-1] != '/') s--;
        snprintf(folder, sizeof folder, "%.*s", (int)(slash - s), s);
    }
    if (!folder[0] || strcmp(folder, ".") == 0) {
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd)) {
            const char *b = strrchr(cwd, '/');
            snprintf(folder, sizeof folder, "%s", b ? b + 1 : cwd);
        }
    }
    int claude = claude_code_skill(rel, display);
    util_skillmd sk;
    int rc = util_skillmd_check(&sk, f->t->data, f->t->len, folder, err);
    for (size_t i = 0; !rc && i < sk.n_problems; i++) {
        size_t line = sk.problems[i].line - 1; /* 1-based */
        if (line >= f->t->n_lines) line = 0;
        size_t s = f->t->n_lines ? f->t->line_start[line] : 0;
        size_t e = f->t->n_lines ? lint_text_line_end(f->t, line) : 0;
        pending *p = pend_new(out, LINT_R_SKILL_FRONTMATTER, s, e > s ? e : s);
        if (!p) {
            rc = UTIL_ENOMEM;
        } else if (claude && sk.problems[i].claude_ok) {
            /* Claude Code loads it: only other Agent Skills hosts may not */
            p->severity = LINT_WARNING;
            snprintf(p->msg, sizeof p->msg,
                     "%s (Claude Code accepts it; the Agent Skills specification does not)",
                     sk.problems[i].msg);
        } else {
            snprintf(p->msg, sizeof p->msg, "%s", sk.problems[i].msg);
        }
    }
    util_skillmd_release(&sk);
    return rc;
}

/* --- the pass -------------------------------------------------------------------------- */

/* --- a placeholder nothing classes, in a run of fields ---------------------------- */

/* Whether [a, b) of line l holds fixed words: the words before a line's
 * first value count unless they are a caption ("Severity:", "- Tier:", a
 * short heading) or only introduce it ("... is"), the words between or after
 * values from five on, as after a volatile value. */
static int gap_fixed(const lint_text *t, size_t l, size_t a, size_t b, int after) {
    if (b <= a) return 0;
    if (after) return stable_text(t, NULL, l, a, b, 5);
    return stable_text(t, NULL, l, a, b, 1) && !introduces(t->data, a, b);
}

/* The marks line_fixed sets on a line, one byte per byte of the line: one
 * buffer grown to the longest line seen and reused for every line of a file.
 * Freed with free(m). */
typedef struct line_marks {
    unsigned char *m;
    size_t cap;
} line_marks;

/* Marks [s, e) of line [a, le) in m as a value. */
static void mark(unsigned char *m, size_t a, size_t le, size_t s, size_t e) {
    if (s < a) s = a;
    if (e > le) e = le;
    for (size_t i = s; i < e; i++) m[i - a] = 1;
}

/* Whether line l holds fixed text outside its values: its spans (sv, unk)
 * and every {...}, {{...}}, ${...} on it without a quoted string (a
 * placeholder a name classes as stable is a value too; a string literal in
 * an output tag is fixed text). A field ("Reporter: {{ user_name }}"), a caption, a
 * short heading, a delimiter and a blank line hold none. lm is the scratch
 * the marks go in. -1: out of memory. */
static int line_fixed(const lint_text *t, size_t l, const lint_spanv *sv, const lint_spanv *unk,
                      line_marks *lm) {
    const char *d = t->data;
    size_t a = t->line_start[l], le = lint_text_line_end(t, l);
    if (le <= a) return 0;
    if (le - a > lm->cap) { /* the old marks are not kept: no copy as realloc would */
        free(lm->m);
        lm->m = NULL, lm->cap = 0;
        if (util_grow(&lm->m, &lm->cap, le - a, 1)) return -1;
    }
    unsigned char *m = lm->m;
    memset(m, 0, le - a);
    const lint_spanv *lists[2] = {sv, unk};
    for (int w = 0; w < 2; w++) { /* both sorted by start: the line's spans and one before */
        const lint_spanv *x = lists[w];
        size_t lo = lint_text_lower_bound(x->v, x->n, sizeof *x->v, offsetof(lint_span, start), a);
        for (size_t k = lo ? lo - 1 : 0; k < x->n && x->v[k].start < le; k++)
            if (x->v[k].end > a) mark(m, a, le, x->v[k].start, x->v[k].end);
    }
    for (size_t i = a; i < le; i++) {
        if (d[i] != '{') continue;
        size_t j = i;
        int depth = 0;
        for (; j < le; j++)
            if (d[j] == '{')
                depth++;
            else if (d[j] == '}' && --depth == 0)
                break;
        if (j >= le) break; /* no closing brace on the line: text */
        if (!memchr(d + i, '\'', j - i) && !memchr(d + i, '"', j - i)) /* {{ 'Text: ' + x }} */
            mark(m, a, le, i > a && d[i - 1] == '$' ? i - 1 : i, j + 1);
        i = j;
    }
    int fixed = 0, after = 0;
    for (size_t i = a; i < le && !fixed;) {
        size_t j = i;
        if (m[i - a]) {
            while (j < le && m[j - a]) j++;
            after = 1;
        } else {
            while (j < le && !m[j - a]) j++;
            fixed = gap_fixed(t, l, i, j, after);
        }
        i = j;
    }
    return fixed;
}

/* How the template statement alone on line l moves a branch (LINT_BR_*,
 * from the template's own block tags), 0 outside templates. */
static int branch_step(const lint_text *t, size_t l) { return t->branch ? t->branch[l] : 0; }

/* The class of the first volatile value after line i in the same run of
 * fields (lines with no fixed text outside their values; blank lines and
 * template statements between; at most 12 such lines within 40), or
 * LINT_VC_NONE; -1: out of memory. Fields listed together ("Ticket:" /
 * "Severity: '{{ severity }}'" / "Reporter: {{ user_name }}") describe one
 * thing: a field no name classes that leads into a per-request one holds
 * request data too, and the run starts with it. Line i must be a field. */
static int field_run_class(const file_ctx *f, const lint_spanv *sv, const lint_spanv *unk,
                           const size_t *first, size_t i, line_marks *lm) {
    const lint_text *t = f->t;
    int r = line_fixed(t, i, sv, unk, lm);
    if (r) return r < 0 ? -1 : LINT_VC_NONE;
    size_t steps = 0;
    /* the other branch of the field's {% if %} ({% else %} "Scope: all") is
     * what renders without it, not text after it: skipped to its {% endif %} */
    int other = 0, depth = 0;
    for (size_t l = i + 1; l < t->n_lines && l < t->boundary_line && steps < 12 && l - i <= 40; l++) {
        if (t->order && t->order[l].prompt != t->order[i].prompt) break;
        if (t->flags[l] & (LINT_LF_BOUNDARY | LINT_LF_FRONTMATTER | LINT_LF_PREFILL)) break;
        int step = (t->flags[l] & LINT_LF_NO_OUTPUT) && first[l] == (size_t)-1 ? branch_step(t, l) : 0;
        if (step == LINT_BR_ELSE && depth == 0) other = 1;
        if (other) {
            depth += step == LINT_BR_OPEN || step == LINT_BR_COND ? 1 : step == LINT_BR_CLOSE ? -1 : 0;
            if (depth < 0) other = 0, depth = 0;
            continue;
        }
        if (step == LINT_BR_OPEN || step == LINT_BR_COND) depth++;
        if (step == LINT_BR_CLOSE && depth > 0) depth--;
        /* an output tag alone on its line ({{ query }}) is quiet text but a field */
        if ((t->flags[l] & LINT_LF_NO_OUTPUT) && first[l] != (size_t)-1) return sv->v[first[l]].vclass;
        if (t->flags[l] & (LINT_LF_NO_OUTPUT | LINT_LF_DIRECTIVE)) continue;
        size_t a = t->line_start[l], le = lint_text_line_end(t, l);
        while (a < le && isspace((unsigned char)t->data[a])) a++;
        if (a == le) continue;
        if ((r = line_fixed(t, l, sv, unk, lm))) return r < 0 ? -1 : LINT_VC_NONE;
        if (first[l] != (size_t)-1) return sv->v[first[l]].vclass;
        steps++;
    }
    return LINT_VC_NONE;
}

/* Whether line [a, le) holds a span of x. */
static int has_span(const lint_spanv *x, size_t a, size_t le) {
    size_t k = lint_text_lower_bound(x->v, x->n, sizeof *x->v, offsetof(lint_span, start), a);
    if (k && x->v[k - 1].end > a) return 1;
    return k < x->n && x->v[k].start < le;
}

/* Marks in fb the lines of each {% else %} branch whose {% if %} branch
 * holds only fields ("Scope: {{ scope }}" / else / "Scope: the whole
 * platform"): that text is the field's default, rendered in its place, not
 * stable content after it. -1: out of memory. */
static int mark_fallbacks(const lint_text *t, const lint_spanv *sv, const lint_spanv *unk,
                          unsigned char *fb) {
    line_marks lm = {0};
    int rc = 0;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        if (!(t->flags[i] & LINT_LF_NO_OUTPUT) || branch_step(t, i) != LINT_BR_COND) continue;
        size_t l = i + 1, fields = 0;
        int only = 1;
        for (; l < t->n_lines && only; l++) { /* the if branch: fields, blank lines */
            int step = (t->flags[l] & LINT_LF_NO_OUTPUT) ? branch_step(t, l) : 0;
            if (step == LINT_BR_ELSE || step == LINT_BR_CLOSE) break;
            if (step) only = 0; /* a nested block: not a plain default */
            if (t->flags[l] & LINT_LF_NO_OUTPUT) continue;
            size_t a = t->line_start[l], le = lint_text_line_end(t, l);
            while (a < le && isspace((unsigned char)t->data[a])) a++;
            if (a == le) continue;
            int r = line_fixed(t, l, sv, unk, &lm);
            if (r < 0) rc = -1;
            if (r || !(has_span(sv, a, le) || has_span(unk, a, le))) only = 0;
            fields++;
        }
        if (!only || !fields || l >= t->n_lines || branch_step(t, l) != LINT_BR_ELSE) continue;
        int depth = 0;
        for (l++; l < t->n_lines; l++) { /* the else branch, to its endif */
            int step = (t->flags[l] & LINT_LF_NO_OUTPUT) ? branch_step(t, l) : 0;
            if (step == LINT_BR_CLOSE && depth-- == 0) break;
            if (step == LINT_BR_OPEN || step == LINT_BR_COND) depth++;
            fb[l] = 1;
        }
    }
    free(lm.m);
    return rc;
}

/* Moves each unknown placeholder that sits in a run of fields with a
 * volatile value from unk into sv, with that value's class (PL001, not
 * PL008). */
static int promote_fields(const file_ctx *f, lint_spanv *sv, lint_spanv *unk) {
    const lint_text *t = f->t;
    if (!unk->n || !t->n_lines) return UTIL_OK;
    size_t *first = malloc(t->n_lines * sizeof *first);
    if (!first) return UTIL_ENOMEM;
    for (size_t i = 0; i < t->n_lines; i++) first[i] = (size_t)-1;
    for (size_t k = 0; k < sv->n; k++) {
        if (!is_relevant(f, &sv->v[k])) continue;
        size_t l = lint_text_line_of(t, sv->v[k].start);
        if (first[l] == (size_t)-1) first[l] = k;
    }
    int *cls = malloc(unk->n * sizeof *cls);
    int rc = cls ? UTIL_OK : UTIL_ENOMEM;
    line_marks lm = {0};
    size_t nm = 0;
    for (size_t k = 0; k < unk->n && !rc; k++) {
        size_t i = lint_text_line_of(t, unk->v[k].start);
        cls[k] = first[i] == (size_t)-1 && i < t->boundary_line ? field_run_class(f, sv, unk, first, i, &lm)
                                                                : LINT_VC_NONE;
        if (cls[k] < 0) rc = UTIL_ENOMEM;
        nm += cls[k] > LINT_VC_NONE;
    }
    size_t w = 0;
    for (size_t k = 0; k < unk->n && !rc && nm; k++) {
        lint_span s = unk->v[k];
        if (cls[k] <= LINT_VC_NONE) {
            unk->v[w++] = s;
            continue;
        }
        s.vclass = cls[k];
        if (lint_spanv_push(sv, &s)) rc = UTIL_ENOMEM;
    }
    if (!rc && nm) {
        unk->n = w;
        lint_spanv_sort(sv);
    }
    free(lm.m);
    free(cls);
    free(first);
    return rc;
}

/* Whether spans a and b hold the same field: the same bytes, blanks aside
 * ({{ path }} and {{path}}), and, where a data file holds several prompts,
 * in the same prompt. */
static int same_field(const lint_text *t, const lint_span *a, const lint_span *b) {
    if (t->order) {
        size_t pa = t->order[lint_text_line_of(t, a->start)].prompt;
        if (pa == LINT_NO_PROMPT || pa != t->order[lint_text_line_of(t, b->start)].prompt) return 0;
    }
    const char *d = t->data;
    size_t i = a->start, j = b->start;
    for (;;) {
        while (i < a->end && (d[i] == ' ' || d[i] == '\t')) i++;
        while (j < b->end && (d[j] == ' ' || d[j] == '\t')) j++;
        if (i == a->end || j == b->end) return i == a->end && j == b->end;
        if (d[i++] != d[j++]) return 0;
    }
}

/* A template fills every use of a field with the same value: str.format's
 * {0} its first argument, a ${path} or {{ target }} its one variable. A use
 * nothing classes where it stands (the project's name in "Analyze the
 * project {0}", "check ${path} for an AGENTS.md") takes the class of the
 * first use of the same field that something does ("PROJECT NAME: {0}" in a
 * run of request fields, "use ${path} as the workspace root"). */
/* FNV-1a of span s's text without its blanks: equal for two uses that
 * same_field takes for one field. */
static uint64_t field_hash(const lint_text *t, const lint_span *s) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = s->start; i < s->end; i++)
        if (t->data[i] != ' ' && t->data[i] != '\t') h = (h ^ (unsigned char)t->data[i]) * 1099511628211ull;
    return h;
}

typedef struct field_key {
    uint64_t h;
    size_t i; /* index in sv: the first use of a field has the lowest */
} field_key;

static int field_key_cmp(const void *x, const void *y) {
    const field_key *a = x, *b = y;
    if (a->h != b->h) return a->h < b->h ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int tie_fields(const file_ctx *f, lint_spanv *sv, lint_spanv *unk) {
    size_t n0 = sv->n, w = 0, moved = 0, nk = 0;
    if (!n0 || !unk->n) return UTIL_OK;
    /* the classified uses, by field: one sort, then a search per unknown use
     * (a file with a field on every line stays linear, not uses x uses) */
    field_key *keys = malloc(n0 * sizeof *keys);
    if (!keys) return UTIL_ENOMEM;
    for (size_t i = 0; i < n0; i++)
        if (sv->v[i].kind == LINT_K_PLACEHOLDER && is_relevant(f, &sv->v[i]))
            keys[nk++] = (field_key){field_hash(f->t, &sv->v[i]), i};
    qsort(keys, nk, sizeof *keys, field_key_cmp);
    int rc = UTIL_OK;
    for (size_t k = 0; k < unk->n && !rc; k++) {
        lint_span s = unk->v[k];
        int vc = LINT_VC_NONE;
        if (s.kind == LINT_K_PLACEHOLDER && nk) {
            uint64_t h = field_hash(f->t, &s);
            size_t lo = 0, hi = nk;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (keys[mid].h < h)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t m = lo; m < nk && keys[m].h == h && vc == LINT_VC_NONE; m++)
                if (same_field(f->t, &sv->v[keys[m].i], &s)) vc = sv->v[keys[m].i].vclass;
        }
        if (vc == LINT_VC_NONE) {
            unk->v[w++] = s;
            continue;
        }
        s.vclass = vc;
        if (lint_spanv_push(sv, &s)) rc = UTIL_ENOMEM;
        moved++;
    }
    free(keys);
    if (rc) return rc;
    unk->n = w;
    if (moved) lint_spanv_sort(sv);
    return UTIL_OK;
}

static int emit(file_ctx *f, lint_report *rep, const char *display, const pending *p) {
    const lint_text *t = f->t;
    lint_finding x = {.file = (char *)display,
                      .line = 1,
                      .column = 1,
                      .end_line = 1,
                      .end_column = 1,
                      .rule = p->rule,
                      .severity = p->severity,
                      .message = (char *)p->msg,
                      .tokens_lost = p->tokens,
                      .tokens_estimated = p->estimated};
    if (!t->n_lines) return lint_report_add(rep, &x);
    size_t l = lint_text_line_of(t, p->start), le = lint_text_line_of(t, p->end);
    size_t s = t->line_start[l], e = lint_text_line_end(t, l);
    x.line = (int)l + 1;
    x.column = lint_text_column(t, p->start);
    x.end_line = (int)le + 1;
    x.end_column = lint_text_column(t, le != l ? lint_text_line_end(t, le) : p->end);
    /* the source line, for the caret display (the report keeps its own copy) */
    if (!(x.source = malloc(e - s + 1))) return UTIL_ENOMEM;
    memcpy(x.source, f->src + s, e - s);
    x.source[e - s] = '\0';
    int rc = lint_report_add(rep, &x);
    free(x.source);
    return rc;
}

static int finish(file_ctx *f, lint_report *rep, const char *display, pendv *pv, lint_directive *dirs,
                  size_t nd) {
    const lint_text *t = f->t;
    int rc = UTIL_OK;
    for (size_t i = 0; i < pv->n && !rc; i++) {
        size_t line = t->n_lines ? lint_text_line_of(t, pv->v[i].start) : 0;
        if (lint_suppressed(dirs, nd, line, pv->v[i].rule)) continue;
        rc = emit(f, rep, display, &pv->v[i]);
    }
    size_t more = pv->unlisted[0] + pv->unlisted[1] + pv->unlisted[2];
    if (!rc && more) {
        for (int s = 0; s < 3; s++) rep->unlisted[s] += pv->unlisted[s];
        rc = lint_report_note(rep,
                              "'%s': %zu more findings (%zu errors) are counted but not "
                              "listed: a file lists at most %d",
                              display, more, pv->unlisted[LINT_ERROR], LINT_MAX_LISTED);
    }
    if (rc || !(f->enabled & (1u << LINT_R_UNUSED_SUPPRESSION))) return rc;
    for (size_t i = 0; i < nd && !rc; i++) {
        if (dirs[i].kind == LINT_DIR_ENABLE && !dirs[i].bad[0]) continue;
        pending p = {LINT_R_UNUSED_SUPPRESSION,
                     lint_rule_get(LINT_R_UNUSED_SUPPRESSION)->severity,
                     t->line_start[dirs[i].line],
                     lint_text_line_end(t, dirs[i].line),
                     "",
                     -1,
                     0};
        if (dirs[i].bad[0]) {
            snprintf(p.msg, sizeof p.msg, "unknown rule code '%s' in suppression", dirs[i].bad);
        } else if (!dirs[i].used && (dirs[i].codes & f->enabled & ~(1u << LINT_R_UNUSED_SUPPRESSION))) {
            char codes[128] = "";
            size_t l = 0;
            for (int r = 0; r < LINT_R_COUNT && dirs[i].codes != ~0u; r++)
                if (dirs[i].codes & (1u << r)) {
                    snprintf(codes + l, sizeof codes - l, "%s%s", l ? "," : " for ", lint_rule_get(r)->code);
                    l = strlen(codes);
                }
            snprintf(p.msg, sizeof p.msg,
                     "unused suppression%s: nothing on the lines it covers "
                     "needs it",
                     codes);
        } else {
            continue;
        }
        rc = emit(f, rep, display, &p);
    }
    return rc;
}

int lint_rules_run(lint_report *rep, const lint_rules_env *env, const lint_rules_file *file, util_err *err) {
    const lint_config *cfg = file->cfg;
    const char *display = file->display, *rel = file->rel, *data = file->data;
    size_t len = file->len;
    int role = file->role;
    if (!data) data = "", len = 0; /* an empty blob may come without a buffer */
    if (role == LINT_ROLE_IGNORE) return lint_report_skip(rep, LINT_SKIP_IGNORED, NULL);
    if (lint_is_binary(data, len)) return lint_report_skip(rep, LINT_SKIP_BINARY, NULL);
    rep->files_checked++;
    unsigned enabled = lint_config_enabled(cfg);
    if (env->opt->select_override) enabled = env->opt->select_override & ~cfg->ignore;
    enabled &= ~env->opt->ignore_extra;
    const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
    file_ctx f = {env, NULL, role, enabled, base, data};
    lint_text t;
    pendv pv = {0};
    lint_spanv sv = {0}, unk = {0};
    lint_directive *dirs = NULL;
    size_t nd = 0;
    int oom;
    char *unmargined = lint_text_unmargin(data, len, &oom);
    if (oom) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    int rc = lint_text_init(&t, unmargined ? unmargined : data, len, (const char *const *)cfg->markers,
                            cfg->n_markers, 0);
    if (rc) {
        lint_text_release(&t);
        free(unmargined);
        return util_err_set(err, rc, "out of memory");
    }
    /* template tags, frontmatter and what renders where (spans of a dynamic
     * file are dropped: it is rendered per turn anyway) */
    lint_spanv scratch = {0}, scratch_u = {0};
    int dyn = role == LINT_ROLE_DYNAMIC;
    rc = lint_tmpl_scan(env->det, cfg, &t, rel, dyn ? &scratch : &sv, dyn ? &scratch_u : &unk, err);
    lint_spanv_release(&scratch);
    lint_spanv_release(&scratch_u);
    f.t = &t;
    /* suppressions first: past LINT_MAX_LISTED pend_new applies them itself */
    if (!rc) rc = lint_detect_directives(env->det, &t, &dirs, &nd, err);
    for (size_t i = 0; !rc && i < nd; i++)
        if (dirs[i].alone) t.flags[dirs[i].line] |= LINT_LF_DIRECTIVE;
    if (!rc) lint_suppress_ranges(dirs, nd, t.n_lines);
    pv.t = &t, pv.dirs = dirs, pv.nd = nd;
    size_t bad = lint_utf8_check(data, len);
    if (bad < len && (enabled & (1u << LINT_R_INVALID_UTF8))) {
        pending *p = pend_new(&pv, LINT_R_INVALID_UTF8, bad, bad + 1);
        if (!p)
            rc = UTIL_ENOMEM;
        else
            snprintf(p->msg, sizeof p->msg,
                     "invalid UTF-8 byte 0x%02X at byte offset %zu; tokenizers replace it and "
                     "editors may rewrite it",
                     (unsigned char)data[bad], bad);
    }
    if (!rc && role != LINT_ROLE_DYNAMIC) {
        rc = lint_detect_spans(env->det, cfg, &t, &sv, &unk, err);
        if (!rc) lint_spanv_sort(&unk);
        if (!rc) rc = promote_fields(&f, &sv, &unk);
        if (!rc) rc = tie_fields(&f, &sv, &unk);
        if (!rc) rc = volatile_rules(&f, &sv, &unk, &pv);
    }
    if (!rc && (enabled & (1u << LINT_R_UNSTABLE_ORDER))) rc = order_rules(&f, &pv, err);
    if (!rc && role == LINT_ROLE_SKILL && (enabled & (1u << LINT_R_SKILL_FRONTMATTER)))
        rc = skill_rules(&f, rel, display, &pv, err);
    if (!rc) rc = finish(&f, rep, display, &pv, dirs, nd);
    if (rc && err && !err->msg[0]) util_err_set(err, rc, "out of memory");
    free(pv.v);
    free(dirs);
    lint_spanv_release(&sv);
    lint_spanv_release(&unk);
    lint_text_release(&t);
    free(unmargined);
    return rc;
}
