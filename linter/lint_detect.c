/* linter/lint_detect.c: volatile-content detection with PCRE2. Every pattern
 * runs once over the whole file (multiline, JIT when available; those that
 * need a digit only over the lines that have one); matches are
 * filtered by context (code, examples, constant qualifiers) and classed by how
 * often they change. Order-unstable constructs and suppression comments are
 * lint_detect_order.c; the filters on a literal's own text are
 * lint_detect_values.c; syntax that is text where it stands (a documented
 * path's {x}, a shell's $x) is lint_detect_shape.c; the pattern text is
 * lint_detect_pat.c; fields filled once (a deployment's or agent's own
 * members, an author's fill-ins) are lint_detect_fixed.c. Does not decide
 * what is an error (lint_rules.c does). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/vec.h"
#include "lint_detect.h"
#include "lint_detect_impl.h"
#include "lint_registry.h"

/* Patterns every file runs are compiled by lint_detect_new; the others
 * (lazy_literal, lazy_misc) have NULL there and a slot in lazy, compiled on
 * first use: literal row i at lazy[i], context pattern RX_x at
 * lazy[LINT_N_LITERALS + RX_x]. lazy is a pointer so that its slots stay
 * writable through a const lint_detect. */
struct lint_detect {
    pcre2_code *lit[LINT_N_LITERALS];
    pcre2_code *ph[LINT_N_PLACEHOLDERS];
    pcre2_code *names[LINT_N_NAMES];
    pcre2_code *misc[RX_MISC_COUNT];
    lint_rx_lazy *lazy;
    pcre2_match_context *mctx;
};

#define LAZY_N (LINT_N_LITERALS + RX_MISC_COUNT)

/* --- compile --------------------------------------------------------------- */

/* Literal rows only a file with a byte above 0x7f runs (pat_def.digit 6, 7). */
static int lazy_literal(size_t i) { return lint_detect_literals[i].digit >= 6; }

/* Context patterns only some files reach (per-user and per-request content:
 * lint_detect_blocks.c runs them after its quick tests on a line). */
static int lazy_misc(size_t i) {
    return i == RX_USER_BLOCK || i == RX_USER_ITEM || i == RX_CONTENT_TAG || i == RX_CONTENT_CAPTION;
}

int lint_detect_new(lint_detect **out, util_err *err) {
    *out = NULL;
    lint_detect *d = calloc(1, sizeof *d);
    if (!d || !(d->lazy = calloc(LAZY_N, sizeof *d->lazy))) {
        free(d);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    int rc = UTIL_OK;
    for (size_t i = 0; i < LINT_N_LITERALS && !rc; i++) {
        const pat_def *p = &lint_detect_literals[i];
        uint32_t flags = PCRE2_MULTILINE | (p->digit && p->digit != 7 ? PCRE2_USE_OFFSET_LIMIT : 0);
        if (lazy_literal(i))
            d->lazy[i] = (lint_rx_lazy){.re = p->re, .flags = flags};
        else
            rc = lint_rx_compile(&d->lit[i], p->re, flags, err);
    }
    for (size_t i = 0; i < LINT_N_PLACEHOLDERS && !rc; i++)
        rc = lint_rx_compile(&d->ph[i], lint_detect_placeholders[i], PCRE2_MULTILINE, err);
    for (size_t i = 0; i < LINT_N_NAMES && !rc; i++) {
        char buf[4096];
        if ((size_t)snprintf(buf, sizeof buf, "^%s$", lint_detect_names[i].re) >= sizeof buf)
            rc = util_err_set(err, UTIL_EINTERNAL, "name pattern %zu is longer than %zu bytes", i,
                              sizeof buf - 3);
        else
            rc = lint_rx_compile(&d->names[i], buf, PCRE2_CASELESS, err);
    }
    for (size_t i = 0; i < RX_MISC_COUNT && !rc; i++) {
        uint32_t flags = (i == RX_TOOL_HEADING || i == RX_TOOL_ITEM)                     ? PCRE2_MULTILINE
                         : i == RX_SUBDAY || i == RX_CONTENT_TAG || i == RX_PERSONA_LINE ? PCRE2_CASELESS
                                                                                         : 0;
        if (lazy_misc(i))
            d->lazy[LINT_N_LITERALS + i] = (lint_rx_lazy){.re = lint_detect_misc[i], .flags = flags};
        else
            rc = lint_rx_compile(&d->misc[i], lint_detect_misc[i], flags, err);
    }
    if (!rc) {
        d->mctx = pcre2_match_context_create(NULL);
        if (!d->mctx)
            rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        else
            pcre2_set_match_limit(d->mctx, 2000000);
    }
    if (rc) {
        lint_detect_free(d);
        return rc;
    }
    *out = d;
    return UTIL_OK;
}

void lint_detect_free(lint_detect *d) {
    if (!d) return;
    for (size_t i = 0; i < LINT_N_LITERALS; i++) pcre2_code_free(d->lit[i]);
    for (size_t i = 0; i < LINT_N_PLACEHOLDERS; i++) pcre2_code_free(d->ph[i]);
    for (size_t i = 0; i < LINT_N_NAMES; i++) pcre2_code_free(d->names[i]);
    for (size_t i = 0; i < RX_MISC_COUNT; i++) pcre2_code_free(d->misc[i]);
    for (size_t i = 0; d->lazy && i < LAZY_N; i++) lint_rx_lazy_release(&d->lazy[i]);
    free(d->lazy);
    pcre2_match_context_free(d->mctx);
    free(d);
}

int lint_detect_compile_all(const lint_detect *d, util_err *err) {
    int rc = UTIL_OK;
    for (size_t i = 0; i < LAZY_N && !rc; i++) {
        pcre2_code *re;
        if (d->lazy[i].re) rc = lint_rx_lazy_get(&re, &d->lazy[i], err);
    }
    return rc;
}

/* --- matching helpers ------------------------------------------------------------ */

/* Whether re matches anywhere in [a, b). */
static int match_in(const lint_detect *d, pcre2_code *re, const char *s, size_t a, size_t b) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return 0;
    int rc = pcre2_match(re, (PCRE2_SPTR)(s + a), b - a, 0, 0, md, d->mctx);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Whether a full-width sentence end (。！？；) ends at byte i: Chinese and
 * Japanese put no space after it. */
static int cjk_sentence_end(const char *d, size_t from, size_t i) {
    const unsigned char *u = (const unsigned char *)d;
    if (i < from + 2) return 0;
    if (u[i - 2] == 0xE3 && u[i - 1] == 0x80 && u[i] == 0x82) return 1; /* 。 */
    return u[i - 2] == 0xEF && u[i - 1] == 0xBC &&
           (u[i] == 0x81 || u[i] == 0x9F || u[i] == 0x9B); /* ！？； */
}

/* The sentence holding off, up to off, joined (with a space) to a caption on
 * the line above when the sentence opens its line: "Launch Details:" above
 * "- September 8, 2025" qualifies the date. At most cap-1 bytes, the text
 * nearest to off kept. Returns the length written into buf. */
static size_t sentence_before(const lint_text *t, size_t off, char *buf, size_t cap) {
    size_t line = lint_text_line_of(t, off), ls = t->line_start[line];
    size_t from = off - ls > 240 ? off - 240 : ls;
    size_t st = from;
    for (size_t i = off; i > from; i--)
        if (i < off && i + 1 < t->len &&
            (((t->data[i + 1] == ' ' || t->data[i + 1] == '\t') && lint_detect_sentence_end(t->data, ls, i)) ||
             cjk_sentence_end(t->data, from, i))) {
            st = i + 1;
            break;
        }
    size_t n = 0;
    int at_line_start = st == ls; /* (never scanned from ls: lines can be megabytes long) */
    for (size_t k = st; k < off && at_line_start; k++)
        if (!isspace((unsigned char)t->data[k]) && t->data[k] != '-' && t->data[k] != '*' &&
            t->data[k] != '>')
            at_line_start = 0;
    if (st == ls && line > 0 && at_line_start) {
        size_t pl = line - 1;
        while (pl > 0 && lint_text_line_end(t, pl) == t->line_start[pl]) pl--;
        size_t ps = t->line_start[pl], pe = lint_text_line_end(t, pl);
        while (pe > ps && isspace((unsigned char)t->data[pe - 1])) pe--;
        /* a long line above: its caption is its last sentence ("... under
         * five sentences. Here is the message the customer sent:") */
        if (pe > ps && t->data[pe - 1] == ':' && pe - ps >= cap / 2) {
            size_t lo = pe - ps > 240 ? pe - 240 : ps, cs = pe;
            for (size_t i = pe - 1; i > lo; i--)
                if (i + 1 < pe && (((t->data[i + 1] == ' ' || t->data[i + 1] == '\t') &&
                                    lint_detect_sentence_end(t->data, ps, i)) ||
                                   cjk_sentence_end(t->data, lo, i))) {
                    cs = i + 1;
                    break;
                }
            while (cs < pe && isspace((unsigned char)t->data[cs])) cs++;
            ps = cs;
        }
        if (pe > ps && t->data[pe - 1] == ':' && pe - ps < cap / 2) {
            memcpy(buf, t->data + ps, pe - ps);
            n = pe - ps;
            buf[n++] = ' ';
        }
    }
    size_t take = off - st;
    if (take > cap - 1 - n) {
        st = off - (cap - 1 - n);
        take = off - st;
    }
    memcpy(buf + n, t->data + st, take);
    n += take;
    buf[n] = '\0';
    return n;
}

static int match_buf(const lint_detect *d, pcre2_code *re, const char *s, size_t n) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return 0;
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, d->mctx);
    pcre2_match_data_free(md);
    return rc >= 0;
}

/* Example words in the value's own sentence, or an example block. */
static int example_context(const lint_detect *d, const lint_text *t, size_t off) {
    if (t->flags[lint_text_line_of(t, off)] & LINT_LF_EXAMPLE) return 1;
    char buf[400];
    size_t n = sentence_before(t, off, buf, sizeof buf);
    return match_buf(d, d->misc[RX_EXAMPLE], buf, n);
}

/* Whether a label [p, p+n) names the present: "Current date:", "Today's
 * date", "Time now". */
static int label_names_now(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && isalpha((unsigned char)p[i - 1])) continue;
        if ((n - i >= 7 && !strncasecmp(p + i, "current", 7)) ||
            (n - i >= 5 && !strncasecmp(p + i, "today", 5)) ||
            (n - i >= 3 && !strncasecmp(p + i, "now", 3) &&
             (n - i == 3 || !isalpha((unsigned char)p[i + 3]))))
            return 1;
    }
    return 0;
}

/* A qualifier that makes a date a fixed fact, in the value's own sentence. */
static int const_context(const lint_detect *d, const lint_text *t, size_t off) {
    char buf[400];
    size_t n = sentence_before(t, off, buf, sizeof buf);
    return match_buf(d, d->misc[RX_CONST], buf, n);
}

int lint_detect_context_class(const lint_detect *d, const lint_text *t, size_t off, int *subday) {
    char buf[400];
    size_t n = sentence_before(t, off, buf, sizeof buf);
    *subday = 0;
    static const struct {
        int rx, vclass, subday;
    } k[] = {{RX_CTX_CALL, LINT_VC_CALL, 1}, {RX_CTX_DAY, LINT_VC_DAY, 0},
             {RX_CTX_TURN, LINT_VC_TURN, 0}, {RX_CTX_SESSION, LINT_VC_SESSION, 0},
             {RX_CTX_USER, LINT_VC_USER, 0}, {RX_CTX_STATE, LINT_VC_TURN, 0}};
    /* markdown fill-ins ({table} in "Query root fields: {table}") are values
     * only when the words name the date or time */
    size_t nk = t->fill_ins ? 2 : sizeof k / sizeof k[0];
    for (size_t i = 0; i < nk; i++)
        if (match_buf(d, d->misc[k[i].rx], buf, n)) {
            *subday = k[i].subday;
            return k[i].vclass;
        }
    return LINT_VC_NONE;
}

/* The class the nearest line above line (up to three blank lines between)
 * gives what it heads, when it is a heading or a caption ending in ':': the
 * user's, when it says the block holds what is known of the user now
 * (RX_USER_HEADING: "## Current user info", "## 用户当前信息"); the
 * session's, when it names the present state of what it heads
 * (RX_STATE_HEADING: "# Current target", "# 当前管理的目标"); else none. */
static int state_heading_above(const lint_detect *d, const lint_text *t, size_t line) {
    const char *data = t->data;
    for (size_t l = line, blanks = 0; l > 0 && blanks <= 3;) {
        l--;
        const char *p = data + t->line_start[l], *e = data + lint_text_line_end(t, l);
        while (p < e && isspace((unsigned char)*p)) p++;
        while (e > p && isspace((unsigned char)e[-1])) e--;
        if (p == e) {
            blanks++;
            continue;
        }
        if (t->flags[l] & LINT_LF_FENCE) return LINT_VC_NONE;
        int heading = *p == '#';
        while (p < e && (*p == '#' || *p == '*' || *p == ' ' || *p == '\t')) p++;
        while (e > p && (e[-1] == '*' || e[-1] == ' ')) e--;
        int colon = 0;
        if (e > p && e[-1] == ':') /* ':' or the full-width '：' (EF BC 9A) */
            e--, colon = 1;
        else if (e - p >= 3 && !memcmp(e - 3, "\xef\xbc\x9a", 3))
            e -= 3, colon = 1;
        if (!heading && !colon) return LINT_VC_NONE;
        while (e > p && (e[-1] == '*' || e[-1] == ' ')) e--;
        if (e == p) return LINT_VC_NONE;
        if (match_buf(d, d->misc[RX_USER_HEADING], p, (size_t)(e - p))) return LINT_VC_USER;
        return match_buf(d, d->misc[RX_STATE_HEADING], p, (size_t)(e - p)) ? LINT_VC_SESSION : LINT_VC_NONE;
    }
    return LINT_VC_NONE;
}

int lint_detect_state_caption(const lint_detect *d, const lint_text *t, size_t off, size_t end) {
    size_t line = lint_text_line_of(t, off), ls = t->line_start[line];
    const char *data = t->data;
    /* words before off on its own line say it themselves (context_class) */
    for (size_t k = ls; k < off; k++)
        if (!isspace((unsigned char)data[k]) && !lint_text_in_tag(t, k) && data[k] != '#' && data[k] != '-' &&
            data[k] != '*')
            return 0;
    size_t le = lint_text_line_end(t, line), k = end;
    while (k < le && isspace((unsigned char)data[k])) k++;
    /* nothing after it on its line either, a comment aside */
    int alone = k == le || (le - k >= 4 && !memcmp(data + k, "<!--", 4)) ||
                (le - k >= 2 && !memcmp(data + k, "{#", 2));
    /* a lone field under a heading or caption naming the present state
     * ("## Current Work Package", "# 当前管理的目标") is that state */
    int hc = alone ? state_heading_above(d, t, line) : LINT_VC_NONE;
    if (hc != LINT_VC_NONE) return hc;
    /* the paragraph above: past blank lines and lines of template statements
     * only, up to a blank line; a heading ends it (and is read) */
    size_t l = line, blanks = 0, lines = 0;
    char buf[512];
    size_t n = 0;
    while (l > 0 && lines < 4) {
        l--;
        size_t a = t->line_start[l], e = lint_text_line_end(t, l), p = a;
        while (p < e && isspace((unsigned char)data[p])) p++;
        int stmt = p + 1 < e && data[p] == '{' && (data[p + 1] == '%' || data[p + 1] == '#');
        if (p >= e || stmt) {
            if (lines) break;
            if (++blanks > 3) return 0;
            continue;
        }
        if (e - a > sizeof buf - 2 - n) a = e - (sizeof buf - 2 - n);
        memmove(buf + (e - a) + 1, buf, n); /* prepend, lines joined with a space */
        memcpy(buf, data + a, e - a);
        buf[e - a] = ' ';
        n += e - a + 1;
        lines++;
        if (data[p] == '#' || n >= sizeof buf - 2) break;
    }
    if (!n) return LINT_VC_NONE;
    while (n > 0 && buf[n - 1] == ' ') n--;
    buf[n] = '\0';
    return match_buf(d, d->misc[RX_STATE_CAPTION], buf, n) ? LINT_VC_SESSION : LINT_VC_NONE;
}

/* Whether [a, b) is a rule line: only blanks and one run of three or more of one
 * of = - ~ ` * _ + " (a fence may name its language: ```python). */
static int rule_line(const char *d, size_t a, size_t b) {
    while (a < b && isspace((unsigned char)d[a])) a++;
    while (b > a && isspace((unsigned char)d[b - 1])) b--;
    if (b - a < 3 || !strchr("=-~`*_+\"", d[a])) return 0;
    size_t k = a;
    while (k < b && d[k] == d[a]) k++;
    if (k - a < 3) return 0;
    if (d[a] == '`' || d[a] == '~')
        while (k < b && (isalnum((unsigned char)d[k]) || d[k] == '-' || d[k] == '+')) k++;
    return k == b;
}

int lint_detect_framed_input(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    size_t l = lint_text_line_of(t, a);
    if (l < 2 || l + 1 >= t->n_lines || lint_text_line_of(t, b > a ? b - 1 : a) != l) return 0;
    size_t le = lint_text_line_end(t, l);
    for (size_t k = t->line_start[l]; k < le; k++) {
        if (k >= a && k < b) continue;
        /* a comment beside it renders nothing: {# ... #}, <!-- ... --> */
        const char *close = k + 1 < le && d[k] == '{' && d[k + 1] == '#' ? "#}"
                            : k + 3 < le && !memcmp(d + k, "<!--", 4)    ? "-->"
                                                                         : NULL;
        const char *c = close ? memmem(d + k, le - k, close, strlen(close)) : NULL;
        if (c) {
            k = (size_t)(c - d) + strlen(close) - 1;
            continue;
        }
        if (!isspace((unsigned char)d[k])) return 0;
    }
    if (!rule_line(d, t->line_start[l - 1], lint_text_line_end(t, l - 1)) ||
        !rule_line(d, t->line_start[l + 1], lint_text_line_end(t, l + 1)))
        return 0;
    /* the caption may stand a blank line or two above the opening delimiter
     * ("The actions so far:" / "" / "```json" / {{ actions }} / "```") */
    size_t cl = l - 2, ca, ce;
    for (int blanks = 0;; blanks++) {
        ca = t->line_start[cl], ce = lint_text_line_end(t, cl);
        while (ce > ca && isspace((unsigned char)d[ce - 1])) ce--;
        if (ce > ca || blanks == 2 || cl == 0) break;
        cl--;
    }
    while (ca < ce && isspace((unsigned char)d[ca])) ca++;
    return ce > ca + 1 && d[ce - 1] == ':' && isalpha((unsigned char)d[ca]) && !rule_line(d, ca, ce);
}

int lint_detect_tag_class(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t a,
                          size_t b) {
    const char *name;
    size_t n = lint_detect_enclosing_tag(t, a, b, &name);
    int sd = 0, known = 0;
    return n ? lint_detect_name_info(d, cfg, name, n, &sd, &known) : LINT_VC_NONE;
}

int lint_detect_default_value(const lint_detect *d, const lint_text *t, size_t off) {
    char buf[400];
    size_t n = sentence_before(t, off, buf, sizeof buf);
    return n && match_buf(d, d->misc[RX_DEFAULT], buf, n);
}

/* Whether the expression [a, b) is one name (user.note, enhanced_note), with
 * Jinja's whitespace marks around it: its span into [*na, *nb). */
static int bare_name(const char *d, size_t a, size_t b, size_t *na, size_t *nb) {
    while (a < b && (isspace((unsigned char)d[a]) || d[a] == '-' || d[a] == '~')) a++;
    while (b > a && (isspace((unsigned char)d[b - 1]) || d[b - 1] == '-' || d[b - 1] == '~')) b--;
    if (a == b || !(isalpha((unsigned char)d[a]) || d[a] == '_' || d[a] == '.')) return 0;
    for (size_t k = a; k < b; k++)
        if (!isalnum((unsigned char)d[k]) && d[k] != '_' && d[k] != '.') return 0;
    *na = a, *nb = b;
    return 1;
}

int lint_detect_field_context(const lint_detect *d, const lint_text *t, size_t start, size_t end, size_t a,
                              size_t b, int vclass) {
    size_t na, nb;
    if (!bare_name(t->data, a, b, &na, &nb)) return vclass;
    if ((vclass == LINT_VC_SESSION || vclass == LINT_VC_TURN) &&
        (lint_detect_install_item(t, start) || lint_detect_default_value(d, t, start)))
        return LINT_VC_NONE;
    if (vclass == LINT_VC_NONE && lint_detect_turn_material(t, start, end, t->data + na, nb - na))
        return LINT_VC_TURN;
    return vclass;
}

int lint_detect_turn_material(const lint_text *t, size_t a, size_t b, const char *name, size_t len) {
    const char *tag;
    return t->user_turn && len && lint_detect_enclosing_tag(t, a, b, &tag) &&
           !lint_detect_name_configured(name, len);
}

int lint_detect_self_name(const lint_detect *d, const lint_text *t, size_t off) {
    char buf[400];
    size_t n = sentence_before(t, off, buf, sizeof buf);
    return match_buf(d, d->misc[RX_SELF_NAME], buf, n);
}

int lint_detect_declared_token(const lint_detect *d, const lint_text *t, size_t a, size_t b) {
    return lint_detect_roles_declared(d->misc[RX_ROLE_TOKEN], d->mctx, t, a, b);
}

int lint_detect_name_info(const lint_detect *d, const lint_config *cfg, const char *name, size_t len,
                          int *subday, int *known) {
    char norm[128];
    size_t n = 0;
    *subday = 0;
    *known = 0;
    while (len > 0 && (*name == '$' || *name == '.' || *name == '@')) name++, len--;
    for (size_t i = 0; i < len && n + 2 < sizeof norm; i++) {
        char c = name[i];
        /* camelCase reads as snake_case: firstName is first_name */
        if (isupper((unsigned char)c) && i > 0 &&
            (islower((unsigned char)name[i - 1]) || isdigit((unsigned char)name[i - 1])))
            norm[n++] = '_';
        norm[n++] = c == '.' || c == '-' || c == ':' ? '_' : (char)tolower((unsigned char)c);
    }
    norm[n] = '\0';
    /* __shell__, _user: the underscores around a name are a convention
     * (Python's dunder and private names, aichat's built-ins), not part of it */
    while (n > 0 && norm[n - 1] == '_') norm[--n] = '\0';
    size_t lead = 0;
    while (lead < n && norm[lead] == '_') lead++;
    if (lead) memmove(norm, norm + lead, (n -= lead) + 1);
    if (!n) return LINT_VC_NONE;
    static const char *const k_suffixes[] = {"_iso",       "_str", "_string", "_fmt",
                                             "_formatted", "_utc", "_local",  "_text"};
    for (size_t i = 0; i < sizeof k_suffixes / sizeof k_suffixes[0]; i++) {
        size_t sl = strlen(k_suffixes[i]);
        if (n > sl + 1 && memcmp(norm + n - sl, k_suffixes[i], sl) == 0) {
            n -= sl;
            norm[n] = '\0';
            /* raw_text, page_text: the text itself, named by where it came
             * from, not a value formatted as text */
            static const char *const k_text_sources[] = {
                "raw",  "full",    "extracted", "page", "body", "source", "original", "plain",
                "html", "scraped", "ocr",       "pdf",  "web",  "input",  "parsed",   NULL};
            if (!strcmp(k_suffixes[i], "_text"))
                for (size_t k = 0; k_text_sources[k]; k++)
                    if (!strcmp(norm, k_text_sources[k])) memcpy(norm, "text", (n = 4) + 1);
            break;
        }
    }
    if (n > 4 && memcmp(norm, "the_", 4) == 0) memmove(norm, norm + 4, (n -= 4) + 1);
    if (cfg)
        for (size_t i = 0; i < cfg->n_names; i++)
            if (strcmp(cfg->names[i].name, norm) == 0) {
                *known = 1;
                return cfg->names[i].vclass;
            }
    if (lint_detect_self_member(name, len)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    if (lint_detect_deployment_member(name, len)) {
        /* site.url, app.timezone: a setting of the deployment, fixed like
         * its name; only a clock reading (site.today) still moves */
        const char *m = (const char *)memchr(name, '.', len) + 1;
        int vc = lint_detect_name_info(d, cfg, m, len - (size_t)(m - name), subday, known);
        *known = 1;
        if (vc == LINT_VC_DAY || vc == LINT_VC_CALL) return vc;
        *subday = 0;
        return LINT_VC_NONE;
    }
    for (size_t i = 0; i < LINT_N_NAMES; i++) {
        if (i == 1 && lint_detect_name_fixed(norm, n)) { /* after the names known stable */
            *known = 1;
            return LINT_VC_NONE;
        }
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(d->names[i], NULL);
        if (!md) return LINT_VC_NONE;
        int rc = pcre2_match(d->names[i], (PCRE2_SPTR)norm, n, 0, 0, md, d->mctx);
        pcre2_match_data_free(md);
        if (rc >= 0) {
            *known = 1;
            if (lint_detect_names[i].vclass == LINT_VC_CALL)
                *subday = match_in(d, d->misc[RX_SUBDAY], norm, 0, n);
            return lint_detect_names[i].vclass;
        }
    }
    int vc = lint_detect_name_words(norm, n, subday, known);
    /* a numbered one (input1, completion_2, doc3) is what its name without the number is */
    size_t m = n;
    while (m > 1 && isdigit((unsigned char)norm[m - 1])) m--;
    if (m > 0 && norm[m - 1] == '_') m--;
    if (vc == LINT_VC_NONE && !*known && m < n && m > 1)
        return lint_detect_name_info(d, cfg, norm, m, subday, known);
    return vc;
}

/* Whether the line holding off talks about template syntax outside its code
 * spans ("the renderer fills `{{cwd}}`", "the `{{home}}` placeholder"): a
 * field in inline code there is shown, not filled. */
static int syntax_talk(const lint_text *t, size_t off) {
    static const char *const k[] = {"placeholder", "variable",  "template",   "syntax", "fill",
                                    "replace",     "substitut", "interpolat", "expand", NULL};
    size_t li = lint_text_line_of(t, off);
    const char *d = t->data;
    size_t ls = t->line_start[li], le = lint_text_line_end(t, li);
    for (size_t i = ls; i < le; i++) {
        if (!isalpha((unsigned char)d[i]) || (i > ls && isalpha((unsigned char)d[i - 1])) ||
            lint_text_in_code(t, i))
            continue;
        for (const char *const *w = k; *w; w++)
            if (le - i >= strlen(*w) && !strncasecmp(d + i, *w, strlen(*w))) return 1;
    }
    return 0;
}

int lint_detect_code_path(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t a,
                          size_t b, const char *name, size_t len) {
    int subday;
    /* AGENTS.md and its kin are read as written: nothing fills them */
    if (t->memory_file || !lint_text_code_path(t, a, b) || syntax_talk(t, a)) return 0;
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

int lint_detect_name_class(const lint_detect *d, const lint_config *cfg, const char *name, size_t len,
                           int *subday) {
    int known;
    return lint_detect_name_info(d, cfg, name, len, subday, &known);
}

/* Calls fn for each match of re in t (ov: the ovector). Stops on error. */
typedef lint_match_fn match_fn;

static int scan(const lint_detect *d, pcre2_code *re, const lint_text *t, match_fn fn, void *arg) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return UTIL_ENOMEM;
    size_t pos = 0;
    int rc = UTIL_OK;
    while (pos <= t->len) {
        int m = pcre2_match(re, (PCRE2_SPTR)t->data, t->len, pos, 0, md, d->mctx);
        if (m == PCRE2_ERROR_NOMATCH) break;
        if (m < 0) { /* match limit on a pathological line: skip that line */
            size_t line = lint_text_line_of(t, pos);
            size_t next = line + 1 < t->n_lines ? t->line_start[line + 1] : t->len + 1;
            pos = next > pos ? next : pos + 1;
            continue;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[0] <= ov[1]) {
            rc = fn(d, t, ov, m, arg);
            if (rc) break;
        }
        size_t next = ov[1] > pos ? ov[1] : pos + 1;
        if (ov[0] > ov[1]) next = pos + 1; /* \K past the end: never loop */
        pos = next;
    }
    pcre2_match_data_free(md);
    return rc;
}

/* Whether s[0..n) holds a weekday's first three letters (any case). */
static int has_weekday_stem(const char *s, size_t n) {
    static const char k[7][4] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
    for (size_t i = 0; i + 3 <= n; i++) {
        char c = (char)(s[i] | 0x20);
        if (c != 'm' && c != 't' && c != 'w' && c != 'f' && c != 's') continue;
        char b = (char)(s[i + 1] | 0x20), d = (char)(s[i + 2] | 0x20);
        for (int w = 0; w < 7; w++)
            if (k[w][0] == c && k[w][1] == b && k[w][2] == d) return 1;
    }
    return 0;
}

/* Whether s[0, n) holds a byte above 0x7f (8 bytes at a time). */
static int has_non_ascii(const char *s, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) return 1;
    }
    for (; i < n; i++)
        if ((unsigned char)s[i] & 0x80) return 1;
    return 0;
}

/* The lines of t a pattern of pat_def.digit mode searches, in order (1: the
 * lines with an ASCII digit; 2: the lines without one that hold a weekday
 * stem; 3: the lines with an '@'; 4: with a ':'; 5: those whose first
 * non-blank byte opens a table row, a quoted key, a tag or a heading:
 * | " ' < #); *n their count. NULL with *n 0 when there
 * are none or memory runs out (then *oom is set). */
static size_t *digit_lines(const lint_text *t, int mode, size_t *n, int *oom) {
    size_t *v = NULL, cap = 0;
    *n = 0;
    *oom = 0;
    for (size_t l = 0; l < t->n_lines; l++) {
        size_t i = t->line_start[l], e = l + 1 < t->n_lines ? t->line_start[l + 1] : t->len;
        if (mode == 5) {
            size_t k = i;
            while (k < e && (t->data[k] == ' ' || t->data[k] == '\t')) k++;
            if (k == e || !strchr("|\"'<#", t->data[k])) continue;
        } else if (mode >= 3) {
            if (!memchr(t->data + i, mode == 3 ? '@' : ':', e - i)) continue;
        } else {
            while (i < e && (unsigned char)(t->data[i] - '0') > 9) i++;
            if (mode == 1 ? i == e
                          : i < e || !has_weekday_stem(t->data + t->line_start[l], e - t->line_start[l]))
                continue;
        }
        if (util_grow(&v, &cap, *n + 1, sizeof *v)) {
            free(v);
            *n = 0;
            *oom = 1;
            return NULL;
        }
        v[(*n)++] = l;
    }
    return v;
}

/* Whether s[0, n) holds one of the '|'-separated words of needles, ASCII
 * case-insensitive (pat_def.needle). */
static int has_needle(const char *s, size_t n, const char *needles) {
    for (const char *w = needles; *w;) {
        size_t wl = strcspn(w, "|");
        if (wl && wl <= n) { /* the next lower and upper case first letters, each found once */
            const char *end = s + n - wl + 1;
            int c0 = tolower((unsigned char)w[0]), c1 = toupper(c0);
            const char *a = memchr(s, c0, (size_t)(end - s)),
                       *b = c1 != c0 ? memchr(s, c1, (size_t)(end - s)) : NULL;
            while (a || b) {
                const char *q = !a ? b : !b ? a : a < b ? a : b;
                if (!strncasecmp(q, w, wl)) return 1;
                if (q == a)
                    a = memchr(a + 1, c0, (size_t)(end - a - 1));
                else
                    b = memchr(b + 1, c1, (size_t)(end - b - 1));
            }
        }
        w += wl;
        if (*w == '|') w++;
    }
    return 0;
}

/* scan() for a pattern whose kept matches hold a digit and never cross a
 * line (pat_def.digit): the same matches, but only the lines dl (those with
 * a digit) are searched. The subject stays the whole file (lookbehind and
 * lookahead see what they always saw); an offset limit ends each search at
 * its line's end. */
static int scan_digit(const lint_detect *d, pcre2_code *re, const lint_text *t, const size_t *dl, size_t ndl,
                      match_fn fn, void *arg) {
    if (!ndl) return UTIL_OK;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    pcre2_match_context *mc = pcre2_match_context_copy(d->mctx);
    if (!md || !mc) {
        pcre2_match_data_free(md);
        pcre2_match_context_free(mc);
        return UTIL_ENOMEM;
    }
    size_t pos = 0;
    int rc = UTIL_OK;
    for (size_t k = 0; k < ndl && !rc; k++) {
        size_t ls = t->line_start[dl[k]], le = lint_text_line_end(t, dl[k]);
        if (le < pos) continue; /* a match ran to the end of this line */
        pcre2_set_offset_limit(mc, le);
        /* the subject ends with the next line: lookahead still sees past this
         * line's end, but a search for a code unit the pattern needs (the
         * '/' of owner/name) does not run to the end of the file on every
         * line, which made a file with few such units quadratic */
        size_t se = dl[k] + 1 < t->n_lines ? lint_text_line_end(t, dl[k] + 1) : t->len;
        if (se < le) se = le;
        for (size_t from = ls > pos ? ls : pos; from <= le;) {
            int m = pcre2_match(re, (PCRE2_SPTR)t->data, se, from, 0, md, mc);
            if (m < 0) break; /* none in this line, or the match limit: the next line */
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            if (ov[0] <= ov[1]) {
                rc = fn(d, t, ov, m, arg);
                if (rc) break;
            }
            size_t next = ov[1] > from ? ov[1] : from + 1;
            if (ov[0] > ov[1]) next = from + 1; /* \K past the end: never loop */
            pos = from = next;
        }
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return rc;
}

/* Whether a label of the current date or time in another language (and
 * maybe a weekday) ends right before off on its line: "Aktuelles Datum:
 * Donnerstag, " before "5. März 2026", "Сейчас " before "14:22". */
static int intl_label_before(const lint_text *t, size_t off) {
    size_t ls = t->line_start[lint_text_line_of(t, off)];
    size_t from = off - ls > 64 ? off - 64 : ls;
    return lint_detect_intl_label_before(t->data + from, off - from);
}

typedef struct lit_arg {
    const pat_def *def;
    const lint_config *cfg;
    lint_spanv *out;
    const char *label;
    int template_text; /* the file's text is a template's (lint_detect_template_text) */
} lit_arg;

/* Whether the name at s is the value of a bare "Name:" line in a block that
 * describes the persona the assistant plays (RX_PERSONA_LINE on a line of
 * the block, or on the line that introduces it past a blank or a fence
 * line): "Take on the following persona: ... Name: Emma ... Personality:
 * curious" names the assistant. "User:" and "Customer:" lines, and a
 * "Name:" in a block about the user, stay the user's. */
/* Whether line k is blank or only frames a block: no letter or digit
 * (a row of quotes, "---", a curly-quote fence), or a fence with its
 * language. */
static int frame_line(const lint_text *t, size_t k) {
    size_t a = t->line_start[k], b = lint_text_line_end(t, k);
    if (rule_line(t->data, a, b)) return 1;
    for (size_t i = a; i < b; i++)
        if (isalnum((unsigned char)t->data[i])) return 0;
    return 1;
}

static int persona_name_line(const lint_detect *d, const lint_text *t, size_t s) {
    const char *data = t->data;
    size_t l = lint_text_line_of(t, s), p = t->line_start[l];
    while (p < s && (data[p] == ' ' || data[p] == '\t' || data[p] == '-' || data[p] == '*')) p++;
    if (s - p < 5 || strncasecmp(data + p, "name", 4)) return 0;
    for (p += 4; p < s; p++)
        if (data[p] != ':' && data[p] != '*' && data[p] != ' ' && data[p] != '\t') return 0;
    size_t first = l, last = l, intro = 0;
    int has_intro = 0;
    /* a character sheet is short: 40 lines each way bounds the work */
    while (first > 0 && l - first < 40 && !frame_line(t, first - 1)) first--;
    while (last + 1 < t->n_lines && last - l < 40 && !frame_line(t, last + 1)) last++;
    /* the introducing line: up to three blank or fence lines above a block
     * that opens with a field, not with a caption of its own ("About the
     * person you are helping:") */
    size_t fa = t->line_start[first], fe = lint_text_line_end(t, first);
    while (fe > fa && isspace((unsigned char)data[fe - 1])) fe--;
    const char *colon = memchr(data + fa, ':', fe - fa);
    int opens_with_field = colon && colon + 1 < data + fe;
    for (size_t k = first, skipped = 0; opens_with_field && k > 0 && skipped < 3 && !has_intro; skipped++) {
        k--;
        if (!frame_line(t, k)) has_intro = 1, intro = k;
    }
    for (size_t k = first; k <= last; k++)
        if (match_in(d, d->misc[RX_PERSONA_LINE], data, t->line_start[k], lint_text_line_end(t, k))) return 1;
    return has_intro &&
           match_in(d, d->misc[RX_PERSONA_LINE], data, t->line_start[intro], lint_text_line_end(t, intro));
}

/* Whether the name at s is the value of a lowercase `name:` key nested in a
 * YAML-style record (indented, or a `- name:` list item) whose parent key
 * names no person: a workflow step's, an agent's or a tool's own name
 * ("steps:" / "  - name: Analyze Issue"), written by the file's author. A
 * record under "user:", "customer:" or a profile keeps its name the user's;
 * a capitalised "Name:" is a label a person reads. */
static int record_name_line(const lint_text *t, size_t s) {
    static const char *const k_person[] = {"user",    "customer", "client",  "human",  "member", "person",
                                           "profile", "contact",  "patient", "caller", "lead",   NULL};
    const char *data = t->data;
    size_t l = lint_text_line_of(t, s), p = t->line_start[l], ind = 0;
    while (p < s && (data[p] == ' ' || data[p] == '\t')) p++, ind++;
    if (p < s && data[p] == '-' && p + 1 < s && data[p + 1] == ' ') {
        p += 2, ind += 2;
        while (p < s && data[p] == ' ') p++, ind++;
    } else if (!ind)
        return 0;
    if (s - p < 5 || memcmp(data + p, "name:", 5)) return 0;
    for (size_t k = l; k-- > 0;) {
        size_t a = t->line_start[k], e = lint_text_line_end(t, k), i = a;
        while (i < e && (data[i] == ' ' || data[i] == '\t')) i++;
        if (i == e || data[i] == '#') continue;
        size_t ki = i - a;
        if (data[i] == '-' && i + 1 < e && data[i + 1] == ' ') ki += 2;
        if (ki >= ind) continue;
        /* the parent key: its name, lowercased, must not name a person */
        char key[48];
        size_t n = 0;
        for (; i < e && data[i] != ':' && n + 1 < sizeof key; i++)
            key[n++] = (char)tolower((unsigned char)data[i]);
        key[n] = '\0';
        for (size_t w = 0; k_person[w]; w++)
            if (strstr(key, k_person[w])) return 0;
        return 1;
    }
    return 0;
}

static int on_literal(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups,
                      void *argp) {
    lit_arg *a = argp;
    const pat_def *p = a->def;
    size_t s = ov[0], e = ov[1];
    if (e <= s) return UTIL_OK;
    /* most dates and times have no such label: the cheapest test first */
    if (p && p->mode == PM_INTL && !intl_label_before(t, s)) return UTIL_OK;
    const char *v = t->data + s;
    size_t n = e - s;
    /* Claude Code runs a command's !`cmd` inside a fence too (not in inline code) */
    int live = p && p->mode == PM_SHELL && t->claude_live &&
               (t->flags[lint_text_line_of(t, s)] & LINT_LF_FENCE);
    /* an environment fact whose value is a whole inline code span ("The
     * current working directory is `/srv/x`") is that value, not an example */
    int env_code = p && p->mode == PM_ENV && p->kind == LINT_K_ENV && lint_text_code_path(t, s, e);
    if ((lint_text_in_code(t, s) && !live && !env_code) || lint_text_in_quiet(t, s)) return UTIL_OK;
    /* a memory file's import, "@/Users/alice/notes.md" opening a line (or a
     * list item) as CLAUDE.md writes them, names a file to read in, not where
     * the user works */
    /* a template's own text is the same in every render: a home path written
     * there is its author's machine (/Users/alice/project), not the user's;
     * a field fills in the user's */
    if (p && p->mode == PM_HOME && a->template_text) return UTIL_OK;
    if (p && p->mode == PM_HOME && s > 0 && t->data[s - 1] == '@') {
        size_t k = t->line_start[lint_text_line_of(t, s)];
        while (k < s - 1 && (t->data[k] == ' ' || t->data[k] == '-' || t->data[k] == '*')) k++;
        if (k == s - 1) return UTIL_OK;
    }
    lint_span sp = {s,
                    e,
                    p ? p->kind : LINT_K_CUSTOM,
                    p ? p->vclass : LINT_VC_TURN,
                    p ? p->subday : 0,
                    a->label,
                    p ? p->rendered : 0,
                    0};
    if (!p) return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
    if (example_context(d, t, s)) return UTIL_OK;
    size_t ctx_at = s; /* where the constant-qualifier check looks back from */
    switch (p->mode) {
    case PM_INTL:
    case PM_LABELLED:
        if (ngroups > 1 && ov[2] != PCRE2_UNSET) ctx_at = ov[2];
        if (p->kind == LINT_K_DATE) lint_detect_classify_value(v, n, &sp);
        /* "9:00-17:00" and "Mon-Fri" are ranges: hours, not the current time */
        {
            size_t k = e;
            while (k < t->len && (t->data[k] == ' ' || t->data[k] == '\t')) k++;
            if (k < t->len && (t->data[k] == '-' || t->data[k] == '/') && k + 1 < t->len &&
                !isalpha((unsigned char)t->data[k + 1]) && sp.kind != LINT_K_DATE)
                return UTIL_OK;
            if (k + 2 < t->len && (unsigned char)t->data[k] == 0xE2 && (unsigned char)t->data[k + 1] == 0x80)
                return UTIL_OK;
            if (k + 1 < t->len && strncasecmp(t->data + k, "to ", 3) == 0) return UTIL_OK;
        }
        /* a qualifier before the label ("Knowledge cutoff: 2022-01 Current
         * date: ...") belongs to the value before it when this label names
         * the present */
        if (!label_names_now(t->data + ctx_at, s - ctx_at) && const_context(d, t, ctx_at)) return UTIL_OK;
        break;
    case PM_ALWAYS:
        if ((p->kind == LINT_K_DATETIME || p->kind == LINT_K_RELTIME) &&
            (const_context(d, t, s) || lint_detect_in_url_or_quoted(t, s, e)))
            return UTIL_OK;
        break;
    case PM_NAME:
    case PM_NAME_LINE: {
        size_t w = 0;
        while (w < n && isalpha((unsigned char)v[w])) w++;
        if (lint_detect_not_name(v, w) || lint_detect_in_string_literal(t, s) ||
            lint_detect_persona_name(t, v, w) ||
            (p->mode == PM_NAME_LINE && (persona_name_line(d, t, s) || record_name_line(t, s))))
            return UTIL_OK;
        break;
    }
    case PM_IDS: {
        if (!lint_detect_has_digit(v, n) || lint_detect_placeholder_value(v, n)) return UTIL_OK;
        const char *g = t->data + ov[2];
        size_t gl = ov[3] - ov[2];
        if (gl >= 4 && (!strncasecmp(g, "sess", 4) || !strncasecmp(g, "conv", 4) ||
                        !strncasecmp(g, "thre", 4) || !strncasecmp(g, "chat", 4)))
            sp.vclass = LINT_VC_SESSION;
        else if (gl >= 4 && (!strncasecmp(g, "user", 4) || !strncasecmp(g, "visi", 4) ||
                             !strncasecmp(g, "clie", 4) || !strncasecmp(g, "devi", 4)))
            sp.vclass = LINT_VC_USER;
        break;
    }
    case PM_HASH:
        if (!lint_detect_has_digit(v, n) || !lint_detect_has_hex_letter(v, n) ||
            lint_detect_placeholder_value(v, n) || lint_detect_history_commit(t, s, e))
            return UTIL_OK;
        break;
    case PM_HEX:
        if (!lint_detect_has_digit(v, n) || !lint_detect_has_hex_letter(v, n) ||
            lint_detect_in_url_or_quoted(t, s, e))
            return UTIL_OK;
        break;
    case PM_UUID:
        if (lint_detect_in_url_or_quoted(t, s, e)) return UTIL_OK;
        if (!strncmp(v, "00000000-0000", 13) || !strncasecmp(v, "123e4567-e89b", 13) ||
            !strncasecmp(v, "ffffffff-ffff", 13))
            return UTIL_OK;
        break;
    case PM_IP:
        if (lint_detect_fixed_ip(v, n) || lint_detect_version_before(t, s) ||
            lint_detect_section_number(t, s, e))
            return UTIL_OK;
        break;
    case PM_ENV:
        if (p->kind == LINT_K_ENV && lint_detect_fixed_env_value(v, n)) return UTIL_OK;
        break;
    case PM_RELTIME: {
        char buf[400];
        size_t bl = sentence_before(t, s, buf, sizeof buf);
        if (match_buf(d, d->misc[RX_DURATION], buf, bl)) return UTIL_OK; /* a length */
        const char *u = v;
        while (u < v + n && (isdigit((unsigned char)*u) || *u == ' ' || *u == '\t')) u++;
        sp.subday = (*u == 's' || *u == 'm' || *u == 'h' || *u == 'S' || *u == 'M' || *u == 'H');
        break;
    }
    default: break;
    }
    return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
}

typedef struct ph_arg {
    const lint_config *cfg;
    lint_spanv *out, *unknown;
    /* where the file's "{/name" closers (not Mustache's "{{/name}}") start,
     * in order: found at the first single-brace field (closers_read) */
    size_t *closers, n_closers;
    int closers_read, oom;
    int args_read, takes_args; /* skill_takes_arguments, found once */
    int paths;                 /* lint_detect_path_pattern's answer for the file */
} ph_arg;

/* Finds the file's "{/name" closers once (p->closers, p->n_closers). */
static void read_closers(const lint_text *t, ph_arg *p) {
    p->closers_read = 1;
    size_t cap = 0;
    for (const char *c = t->data; (c = memmem(c, (size_t)(t->data + t->len - c), "{/", 2)) != NULL; c += 2) {
        if ((c > t->data && c[-1] == '{') || c + 2 >= t->data + t->len || !isalpha((unsigned char)c[2]))
            continue;
        if (p->n_closers == cap) {
            size_t nc = cap ? 2 * cap : 16;
            size_t *v = realloc(p->closers, nc * sizeof *v);
            if (!v) {
                p->oom = 1;
                return;
            }
            p->closers = v, cap = nc;
        }
        p->closers[p->n_closers++] = (size_t)(c - t->data);
    }
}

/* Whether a single-brace {name ...} at [a, b) opens a tag that a "{/name}"
 * after it closes: a collection that writes a prompt's XML tags with braces
 * ({citation_instructions} ... {/citation_instructions}, {antml:cite
 * index="1"}) so they survive being pasted; in such a file a {name}
 * followed by "tag" or "tags" names one ("wrapped in {document_context}
 * tags"). A tag, not a field. */
static int brace_tag(const lint_text *t, const ph_arg *p, size_t a, size_t b) {
    if (b + 4 <= t->len && t->data[b] == ' ' && !memcmp(t->data + b + 1, "tag", 3) &&
        (b + 4 == t->len || !isalpha((unsigned char)t->data[b + 4]) || t->data[b + 4] == 's'))
        return 1;
    size_t n = a + 1;
    while (n < b && t->data[n] != ' ' && t->data[n] != '}') n++;
    size_t nl = n - a - 1;
    if (nl == 0) return 0;
    /* closers are in file order: start at the first one past b */
    size_t lo = b >= 2 ? lint_text_lower_bound(p->closers, p->n_closers, sizeof *p->closers, 0, b - 2) : 0;
    for (size_t i = lo; i < p->n_closers; i++) {
        size_t c = p->closers[i] + 2; /* past "{/" */
        if (c + nl >= t->len) break;
        if (!memcmp(t->data + c, t->data + a + 1, nl) && t->data[c + nl] == '}') return 1;
    }
    return 0;
}


/* The class of the rest of a ${NAME...} expression whose NAME nothing
 * classes: the first name in [a, b) that has one, as in
 * ${ESCAPE_FN(ATTACHMENT.filename)} (a function of the file's name). */
static int expression_class(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t a,
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

/* Claude Code's own fill-ins besides $ARGUMENTS in a skill:
 * ${CLAUDE_SESSION_ID} and ${CLAUDE_SKILL_DIR}. */
static int claude_fill_in(const char *nm, size_t nl) {
    return (nl == 17 && !memcmp(nm, "CLAUDE_SESSION_ID", 17)) ||
           (nl == 16 && !memcmp(nm, "CLAUDE_SKILL_DIR", 16));
}

/* A name only a program fills in: the moment or the person it serves
 * ({current_date_and_time}, {user_name}, {user_age}); a reader's fill-in in
 * markdown is named for what the reader supplies ({project}, {your_name}). */
static int runtime_name(const char *nm, size_t nl) {
    return (nl > 8 && !strncasecmp(nm, "current_", 8)) || (nl > 5 && !strncasecmp(nm, "user_", 5));
}

/* Whether the {x} at [a, b) is a program's block slot in Markdown: alone on
 * its line (no list marker, no caption), named as an identifier of several
 * words (customer_context, email_body: a program's variable; a reader's
 * fill-in is {project} or {Your Name}), the whole body of the Markdown
 * heading right above it ("## Customer Context" then {customer_context}),
 * and neither that heading nor one it sits under about what to write (an
 * output format or a template the model fills in: "## Output format" over
 * "### Summary", "### Example answer"). */
static int block_slot(const lint_text *t, size_t a, size_t b) {
    static const char *const k_output[] = {"output",  "format",   "template", "example", "examples",
                                           "respond", "response", "answer",   "reply",   "write",
                                           "fill",    "report",   NULL};
    const char *d = t->data;
    size_t l = lint_text_line_of(t, a), ls = t->line_start[l], le = lint_text_line_end(t, l);
    for (size_t i = ls; i < a; i++)
        if (d[i] != ' ' && d[i] != '\t') return 0;
    for (size_t i = b; i < le; i++)
        if (!isspace((unsigned char)d[i])) return 0;
    int words = 1;
    for (size_t i = a + 1; i + 1 < b; i++) {
        if (d[i] == '_' && i > a + 1 && i + 2 < b)
            words++;
        else if (!islower((unsigned char)d[i]) && !isdigit((unsigned char)d[i]) && d[i] != '_')
            return 0;
    }
    if (words < 2) return 0;
    /* the heading right above it (blank lines between), then the headings
     * it sits under (### Summary under ## Output format) */
    size_t level = 0;
    for (size_t k = l, n = 0; k > 0 && (level || n < 4); n++) {
        k--;
        size_t p = t->line_start[k], e = lint_text_line_end(t, k);
        while (e > p && isspace((unsigned char)d[e - 1])) e--;
        if (e == p) continue;
        if (d[p] != '#') {
            if (!level) return 0; /* prose, a caption or another value right above */
            continue;
        }
        size_t h = 0;
        while (p + h < e && d[p + h] == '#') h++;
        if (level && h >= level) continue;
        level = h;
        for (size_t i = p; i < e;) {
            while (i < e && !isalpha((unsigned char)d[i])) i++;
            size_t w = i;
            while (i < e && isalpha((unsigned char)d[i])) i++;
            char lw[16];
            if (i - w && i - w < sizeof lw) {
                for (size_t c = 0; c < i - w; c++) lw[c] = (char)tolower((unsigned char)d[w + c]);
                if (lint_detect_word_in(lw, i - w, k_output)) return 0;
            }
        }
        if (level == 1) break;
    }
    return level > 0;
}

/* Whether the words right after a placeholder ending at b, on its line,
 * name it the session's directory ("${path} as the workspace root"). */
static int words_after_session(const lint_detect *d, const lint_text *t, size_t b) {
    size_t e = lint_text_line_end(t, lint_text_line_of(t, b > 0 ? b - 1 : 0));
    if (e > b + 120) e = b + 120;
    return b < e && match_in(d, d->misc[RX_CTX_SESSION_AFTER], t->data, b, e);
}

/* Whether [a, b) is a positional str.format field, {0} to {99}. */
static int positional_field(const lint_text *t, size_t a, size_t b) {
    return b - a >= 3 && t->data[a] == '{' && isdigit((unsigned char)t->data[a + 1]);
}

/* A positional field ({0}) that a caption opens its line with
 * ("SOURCE_CODE: {7}", "- Project name: {0}"): the caption names it, as
 * a field's name would ("source_code" per turn). LINT_VC_NONE when there
 * is no such caption or its words say nothing. */
static int caption_name_class(const lint_detect *d, const lint_config *cfg, const lint_text *t, size_t off,
                              int *subday) {
    size_t ls = t->line_start[lint_text_line_of(t, off)], k = off;
    const char *s = t->data;
    while (k > ls && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '*')) k--;
    if (k == ls || s[k - 1] != ':') return LINT_VC_NONE;
    size_t p = ls, e = k - 1;
    while (p < e && (s[p] == ' ' || s[p] == '\t' || s[p] == '-' || s[p] == '*')) p++;
    while (e > p && (s[e - 1] == ' ' || s[e - 1] == '*')) e--;
    if (e <= p || e - p > 40) return LINT_VC_NONE;
    char name[48];
    size_t n = 0;
    for (size_t q = p; q < e; q++) {
        if (isalnum((unsigned char)s[q]))
            name[n++] = (char)tolower((unsigned char)s[q]);
        else if ((s[q] == ' ' || s[q] == '_' || s[q] == '-') && n && name[n - 1] != '_')
            name[n++] = '_';
        else if (s[q] != ' ' && s[q] != '_' && s[q] != '-')
            return LINT_VC_NONE;
    }
    return n ? lint_detect_name_class(d, cfg, name, n, subday) : LINT_VC_NONE;
}

/* Whether off lies in a fenced block whose info string is not Markdown's
 * (```, ```text, ```bash: not ```markdown or ```md). */
static int fenced_not_markdown(const lint_text *t, size_t off) {
    size_t l = lint_text_line_of(t, off);
    if (!(t->flags[l] & LINT_LF_FENCE) || (t->flags[l] & LINT_LF_FENCE_MARK)) return 0;
    while (l > 0 && !(t->flags[l] & LINT_LF_FENCE_MARK)) l--;
    const char *p = t->data + t->line_start[l], *e = t->data + lint_text_line_end(t, l);
    while (p < e && (*p == ' ' || *p == '`' || *p == '~')) p++;
    size_t n = 0;
    while (p + n < e && isalnum((unsigned char)p[n])) n++;
    return !((n == 8 && !strncasecmp(p, "markdown", 8)) || (n == 2 && !strncasecmp(p, "md", 2)));
}

/* Whether a SKILL.md takes arguments: its front matter has Claude Code's
 * argument-hint:, or its text fills $ARGUMENTS outside code or in a fenced
 * block that is not Markdown. Such a skill's `$ARGUMENTS` in inline code is
 * the argument too ("if `$ARGUMENTS` is a single number"); a skill that only
 * shows the syntax (a guide to writing commands) has neither. Found once per
 * file (p->args_read). */
static int skill_takes_arguments(const lint_text *t, ph_arg *p) {
    if (p->args_read) return p->takes_args;
    p->args_read = 1;
    for (size_t l = 0; l < t->n_lines && (t->flags[l] & LINT_LF_FRONTMATTER); l++)
        if (t->len - t->line_start[l] >= 14 && !strncasecmp(t->data + t->line_start[l], "argument-hint:", 14))
            return p->takes_args = 1;
    for (const char *c = t->data; (c = memmem(c, (size_t)(t->data + t->len - c), "$ARGUMENTS", 10)) != NULL;
         c += 10) {
        size_t off = (size_t)(c - t->data);
        if (t->flags[lint_text_line_of(t, off)] & LINT_LF_FRONTMATTER) continue;
        if (!lint_text_in_code(t, off) || fenced_not_markdown(t, off)) return p->takes_args = 1;
    }
    return 0;
}

static int on_placeholder(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups,
                          void *argp) {
    ph_arg *a = argp;
    if (ngroups < 2 || ov[2] == PCRE2_UNSET) return UTIL_OK;
    /* template tags are read by lint_tmpl.c; code is an example here */
    size_t nl = ov[3] - ov[2];
    const char *nm = t->data + ov[2];
    int arguments = t->data[ov[0]] == '$' && nl == 9 && !memcmp(nm, "ARGUMENTS", 9);
    /* nothing fills $ARGUMENTS in an AGENTS.md or a README: it names the syntax */
    if (arguments && t->memory_file) return UTIL_OK;
    int vscode = t->vscode_prompt && t->data[ov[0]] == '$' && t->data[ov[0] + 1] == '{' &&
                 lint_detect_vscode_variable(nm, nl);
    int in_code = lint_text_in_code(t, ov[0]);
    /* a $name that stands alone ($user, not ${user}, $DOC$ or {$user}): a
     * shell's or PHP's variable as often as a field */
    int bare = t->data[ov[0]] == '$' && t->data[ov[0] + 1] != '{' && t->data[ov[1] - 1] != '$';
    /* {$name} (WildBench's {$history}, and inside Semantic Kernel's {{$input}}):
     * a syntax only programs fill in, never a reader's fill-in */
    int brace_dollar = bare && ov[0] > 0 && t->data[ov[0] - 1] == '{' && ov[1] < t->len &&
                       t->data[ov[1]] == '}';
    if (brace_dollar) bare = 0;
    /* only ${...} is filled in a file of JavaScript interpolations ({x}, $x are text) */
    if (t->js_fields && !arguments && (t->data[ov[0]] == '{' || bare || brace_dollar)) return UTIL_OK;
    /* a documented path or route's segment (`{lang}/README.md`, GET /v1/runs/{id}) */
    if (t->data[ov[0]] == '{' && nl && lint_detect_path_pattern(t, ov[0], ov[1], &a->paths)) return UTIL_OK;
    /* a per-session path in inline code is the value itself (`{home}/x`;
     * a $VAR there is the shell's) */
    int code_path = in_code && nl && t->data[ov[0]] == '{' &&
                    lint_detect_code_path(d, a->cfg, t, ov[0], ov[1], nm, nl);
    /* a program's template fills a {x} field wherever it stands: one that
     * is a whole inline code span ("INSTRUCTION: `{instruction}`") is a field */
    if (in_code && nl && t->program_template && t->data[ov[0]] == '{' && lint_text_code_path(t, ov[0], ov[1]))
        in_code = 0;
    /* Claude Code fills $ARGUMENTS wherever a command has it, and in a
     * skill's fenced block ("ARGUMENTS: $ARGUMENTS" under "Parse arguments")
     * too; in a skill's inline code it names the syntax, and a fence that
     * shows a whole Markdown file (```markdown) is an example command */
    int args_live = arguments && (t->command_file || (t->skill_file && fenced_not_markdown(t, ov[0])));
    /* but a SKILL.md that takes arguments fills its inline `$ARGUMENTS` as
     * well, unless the line talks about the syntax ("the `$ARGUMENTS`
     * placeholder") */
    if (arguments && !args_live && in_code && t->verbatim == LINT_VERBATIM_SKILL &&
        !(t->flags[lint_text_line_of(t, ov[0])] & LINT_LF_FENCE) && !syntax_talk(t, ov[0]) &&
        skill_takes_arguments(t, a))
        args_live = 1;
    if ((in_code && !args_live && !vscode && !code_path) || lint_text_in_tag(t, ov[0]) ||
        lint_text_in_quiet(t, ov[0]) || lint_text_tag_name(t, ov[0], ov[1]))
        return UTIL_OK;
    if (t->data[ov[0]] == '{' && !a->closers_read) read_closers(t, a);
    if (a->oom) return UTIL_ENOMEM;
    if (a->n_closers && t->data[ov[0]] == '{' && brace_tag(t, a, ov[0], ov[1])) return UTIL_OK;
    /* nothing renders a file an agent loads as written: its {{x}} is text;
     * but $ARGUMENTS in the prose of a skill's file is Claude Code's fill-in:
     * a skill's other file that uses it (not in code) is a command's body
     * kept there, as an installer's source folder keeps it (skills/pt/core/x.md) */
    int named = ov[1] + 1 < t->len && (t->data[ov[1]] == '-' || t->data[ov[1]] == '_') &&
                isalpha((unsigned char)t->data[ov[1] + 1]); /* "$ARGUMENTS-style": the syntax named */
    if (t->verbatim && !(arguments && t->skill_file && !named) &&
        !(t->verbatim == LINT_VERBATIM_SKILL && claude_fill_in(nm, nl)))
        return UTIL_OK;
    /* a file that is a template by its tags ({% %}, {{#section}}) renders
     * only those: a bare $NAME in its prose is the shell's ("My $PWD is the
     * root of my project"), not a field */
    if (t->is_template && bare && !arguments) return UTIL_OK;
    /* a bare $name after "Example:" or "e.g." in its clause is a shell or PHP
     * variable in sample code ("Example: $response = validate($request)") */
    if (bare && !arguments && example_context(d, t, ov[0])) return UTIL_OK;
    /* and one its own line assigns (input=$(cat); echo "$input") is the shell's */
    if (bare && !arguments && lint_detect_shell_assigned(t, ov[0], ov[1])) return UTIL_OK;
    int subday = 0, known = 0;
    /* in markdown, {x} and ${x} in prose are fill-ins or documentation: only
     * the words around one can make it a value ("The current date is {}");
     * Claude Code's $ARGUMENTS is a real one, and so is a ${x ? 'a' : 'b'}
     * that picks text (no person fills in a conditional: a program does) */
    int dollar_brace = t->data[ov[0]] == '$' && t->data[ov[0] + 1] == '{';
    int picks = dollar_brace && lint_detect_conditional_interpolation(t, ov[0]);
    /* a runtime name is a program's field, but no program renders a memory
     * file (AGENTS.md), a command or a skill: there it is text as written */
    int runtime = t->data[ov[0]] == '{' && runtime_name(nm, nl) && !t->memory_file && !t->command_file &&
                  !t->skill_file;
    int fill_in = t->fill_ins && !arguments && !vscode && !picks && !code_path && !brace_dollar && !runtime &&
                  !lint_text_in_fields(t, ov[0]);
    int vc = nl && !fill_in ? lint_detect_name_info(d, a->cfg, nm, nl, &subday, &known) : LINT_VC_NONE;
    if (fill_in) {
        vc = lint_detect_context_class(d, t, ov[0], &subday);
        /* a section whose body is one program variable: its name classes it */
        if (vc == LINT_VC_NONE && nl && !in_code && block_slot(t, ov[0], ov[1]))
            vc = lint_detect_name_info(d, a->cfg, nm, nl, &subday, &known);
        if (vc == LINT_VC_NONE) return UTIL_OK;
        known = 1;
    }
    /* the installation's own paths ("- Logs Directory: {log_dir}" among others like it) */
    if ((vc == LINT_VC_SESSION || vc == LINT_VC_TURN) && !bare && lint_detect_install_item(t, ov[0])) {
        vc = LINT_VC_NONE;
        known = 1;
    }
    /* a user message's tag block holds what the request hands in */
    if (vc == LINT_VC_NONE && !fill_in && !bare && !in_code &&
        lint_detect_turn_material(t, ov[0], ov[1], nm, nl)) {
        vc = LINT_VC_TURN;
        known = 1;
    }
    if (vc == LINT_VC_NONE && code_path) {
        vc = LINT_VC_SESSION; /* `{debug_log_path}`: a file on the user's machine */
        known = 1;
    }
    if (vc == LINT_VC_NONE && !known && picks) {
        vc = LINT_VC_TURN; /* text chosen from state at render time */
        known = 1;
    }
    if (vc == LINT_VC_NONE && !known && dollar_brace)
        vc = expression_class(d, a->cfg, t, ov[0] + 2 + nl, ov[1], &subday, &known);
    if (vc == LINT_VC_NONE && !known) {
        /* no name says: the words before it may ("The current date is {}") */
        vc = lint_detect_context_class(d, t, ov[0], &subday);
        if (vc == LINT_VC_NONE && words_after_session(d, t, ov[1])) vc = LINT_VC_SESSION;
        if (vc == LINT_VC_NONE) vc = lint_detect_state_caption(d, t, ov[0], ov[1]);
        if (vc == LINT_VC_NONE && lint_detect_framed_input(t, ov[0], ov[1])) vc = LINT_VC_TURN;
        if (vc == LINT_VC_NONE && !nl && positional_field(t, ov[0], ov[1]))
            vc = caption_name_class(d, a->cfg, t, ov[0], &subday);
        if (vc == LINT_VC_NONE && !bare) vc = lint_detect_tag_class(d, a->cfg, t, ov[0], ov[1]);
        if (vc == LINT_VC_NONE) {
            /* a positional field nothing classes is still a field (PL008; a
             * run of fields or its other uses may class it); a bare {} is
             * as often an empty JSON object as a field */
            if ((!nl && !positional_field(t, ov[0], ov[1])) || bare || example_context(d, t, ov[0]) ||
                lint_detect_declared_token(d, t, ov[0], ov[1]))
                return UTIL_OK;
            lint_span sp = {
                ov[0] - brace_dollar, ov[1] + brace_dollar, LINT_K_PLACEHOLDER, LINT_VC_NONE, 0, NULL, 0, 0};
            return lint_spanv_push(a->unknown, &sp) ? UTIL_ENOMEM : UTIL_OK;
        }
    }
    if (vc == LINT_VC_NONE || (vc == LINT_VC_USER && lint_detect_self_name(d, t, ov[0]))) return UTIL_OK;
    /* a setting's documented default ("defaults to ${DAGS_DIR}/docs") */
    if (lint_detect_default_value(d, t, ov[0])) return UTIL_OK;
    /* a speaker's token the file tells the model to write ({user}) */
    if (lint_detect_declared_token(d, t, ov[0], ov[1])) return UTIL_OK;
    /* a segment of a file path (docs/framework/{name}.md) names a file, not a person */
    if (vc == LINT_VC_USER &&
        ((ov[0] > 0 && t->data[ov[0] - 1] == '/') ||
         (ov[1] + 1 < t->len && t->data[ov[1]] == '.' && isalnum((unsigned char)t->data[ov[1] + 1]))))
        return UTIL_OK;
    lint_span sp = {ov[0] - brace_dollar, ov[1] + brace_dollar, LINT_K_PLACEHOLDER, vc, subday, NULL, 0, 0};
    return lint_spanv_push(a->out, &sp) ? UTIL_ENOMEM : UTIL_OK;
}

/* A collector's stand-in alone on its line ("{session content}", "{summary
 * — the model's compaction output ...}") in a rendered prompt: the
 * collection put it where the product pasted text, so it is that text,
 * classed by its words before a dash or comma read as a name (session_content
 * per turn). Not in templates (their fields are lint_tmpl.c's), code,
 * examples or front matter. */
static int stand_in_lines(const lint_detect *d, const lint_config *cfg, const lint_text *t, lint_spanv *out) {
    if (t->is_template || t->verbatim) return UTIL_OK;
    for (size_t l = 0; l < t->n_lines; l++) {
        if (t->flags[l] & (LINT_LF_EXAMPLE | LINT_LF_FRONTMATTER)) continue;
        const char *p = t->data + t->line_start[l], *e = t->data + lint_text_line_end(t, l);
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        size_t n = lint_text_stand_in(p, e);
        size_t a = (size_t)(p - t->data);
        if (!n || lint_text_in_code(t, a) || lint_text_in_quiet(t, a)) continue;
        char name[64];
        size_t nl = 0;
        for (const char *q = p + 1; q < p + n - 1 && nl + 1 < sizeof name; q++) {
            if (isalpha((unsigned char)*q) || *q == '_')
                name[nl++] = (char)tolower((unsigned char)*q);
            else if (*q == ' ' && nl && name[nl - 1] != '_')
                name[nl++] = '_';
            else if (*q != ' ')
                break;
        }
        while (nl && name[nl - 1] == '_') nl--;
        int subday = 0;
        int vc = nl ? lint_detect_name_class(d, cfg, name, nl, &subday) : LINT_VC_NONE;
        if (vc == LINT_VC_NONE) continue;
        lint_span sp = {a, a + n, LINT_K_PLACEHOLDER, vc, subday, NULL, 1, 0};
        if (lint_spanv_push(out, &sp)) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

int lint_detect_spans(const lint_detect *d, const lint_config *cfg, const lint_text *t, lint_spanv *out,
                      lint_spanv *unknown, util_err *err) {
    int rc = UTIL_OK;
    ph_arg a = {cfg, out, unknown, NULL, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < LINT_N_PLACEHOLDERS && !rc && !t->curly_only; i++) {
        rc = scan(d, d->ph[i], t, on_placeholder, &a);
    }
    free(a.closers);
    if (!rc) rc = lint_detect_interpolation_spans(t, out, 1);
    if (!rc && unknown) rc = lint_detect_interpolation_spans(t, unknown, 0);
    size_t ndl, nwl;
    int oom, oom2;
    size_t *dl = digit_lines(t, 1, &ndl, &oom);
    size_t *wl = digit_lines(t, 2, &nwl, &oom2), nal;
    int oom3;
    size_t *al = digit_lines(t, 3, &nal, &oom3), ncl;
    int oom4;
    size_t *cl = digit_lines(t, 4, &ncl, &oom4), nsl;
    int oom5;
    size_t *sl = digit_lines(t, 5, &nsl, &oom5);
    if (oom || oom2 || oom3 || oom4 || oom5) rc = UTIL_ENOMEM;
    int non_ascii = has_non_ascii(t->data, t->len), tmpl = lint_detect_template_text(t);
    for (size_t i = 0; i < LINT_N_LITERALS && !rc; i++) {
        lit_arg a = {&lint_detect_literals[i], cfg, out, NULL, tmpl};
        int mode = lint_detect_literals[i].digit;
        if (mode >= 6 && !non_ascii) continue;
        if (lint_detect_literals[i].needle && !has_needle(t->data, t->len, lint_detect_literals[i].needle))
            continue;
        pcre2_code *re = d->lit[i];
        if (!re && (rc = lint_rx_lazy_get(&re, &d->lazy[i], err))) break;
        rc = mode == 5   ? scan_digit(d, re, t, sl, nsl, on_literal, &a)
             : mode == 4 ? scan_digit(d, re, t, cl, ncl, on_literal, &a)
             : mode == 3 ? scan_digit(d, re, t, al, nal, on_literal, &a)
             : mode == 2 ? scan_digit(d, re, t, wl, nwl, on_literal, &a)
             : mode == 7 ? scan(d, re, t, on_literal, &a)
             : mode      ? scan_digit(d, re, t, dl, ndl, on_literal, &a)
                         : scan(d, re, t, on_literal, &a);
    }
    free(dl);
    free(wl);
    free(al);
    free(cl);
    free(sl);
    lint_rx_lazy *lz = d->lazy + LINT_N_LITERALS;
    if (!rc) rc = lint_detect_user_blocks(&lz[RX_USER_BLOCK], &lz[RX_USER_ITEM], d->mctx, t, out, err);
    if (!rc) rc = lint_detect_content_tags(&lz[RX_CONTENT_TAG], d->mctx, t, out, err);
    if (!rc) rc = lint_detect_content_captions(&lz[RX_CONTENT_CAPTION], d->mctx, t, out, err);
    if (!rc) rc = stand_in_lines(d, cfg, t, out);
    for (size_t i = 0; cfg && i < cfg->n_patterns && !rc; i++) {
        lit_arg a = {NULL, cfg, out, cfg->patterns[i].name, 0};
        size_t before = out->n;
        rc = scan(d, cfg->patterns[i].re, t, on_literal, &a);
        for (size_t k = before; k < out->n; k++) {
            out->v[k].vclass = cfg->patterns[i].vclass;
            out->v[k].subday = cfg->patterns[i].subday;
        }
    }
    if (rc) return rc == UTIL_ENOMEM ? util_err_set(err, rc, "out of memory") : rc; /* else err is set */
    if (lint_detect_author_fill_ins(t)) { /* STEP_1_GOAL: filled when the prompt is written */
        lint_detect_drop_fill_ins(t, out);
        if (unknown) lint_detect_drop_fill_ins(t, unknown);
    }
    /* sort, then merge overlaps keeping the most volatile class */
    lint_spanv_sort(out);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (w > 0 && out->v[i].start < out->v[w - 1].end) {
            lint_span *p = &out->v[w - 1];
            if (out->v[i].end > p->end) p->end = out->v[i].end;
            lint_span_absorb_class(p, &out->v[i]);
            p->rendered &= out->v[i].rendered;
            p->cont &= out->v[i].cont;
            continue;
        }
        out->v[w++] = out->v[i];
    }
    out->n = w;
    return UTIL_OK;
}

/* --- for lint_detect_order.c ------------------------------------------------------ */

int lint_detect_scan(const lint_detect *d, pcre2_code *re, const lint_text *t, lint_match_fn fn, void *arg) {
    return scan(d, re, t, fn, arg);
}

pcre2_code *lint_detect_rx(const lint_detect *d, int which) { return d->misc[which]; }

pcre2_match_context *lint_detect_mctx(const lint_detect *d) { return d->mctx; }

int lint_detect_match_in(const lint_detect *d, pcre2_code *re, const char *s, size_t a, size_t b) {
    return match_in(d, re, s, a, b);
}
