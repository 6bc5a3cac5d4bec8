/* linter/lint_detect_blocks.c: volatile content found by the block it stands
 * in rather than by its own shape: text pasted inside a tag that names
 * per-request content (<user_query>...), and the "Key: value" items of a
 * list of the user's settings or of an environment block; the tag a value
 * stands alone in. Called by lint_detect.c; does not class single values. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lint_span.h"
#include "lint_detect_impl.h"
#include "lint_registry.h"

/* Whether [a, b) holds only a stand-in for a value, not the value: empty,
 * "...", {x}, [x], <x>. */
static int stand_in(const char *d, size_t a, size_t b) {
    while (a < b && isspace((unsigned char)d[a])) a++;
    while (b > a && isspace((unsigned char)d[b - 1])) b--;
    if (a == b) return 1;
    if (d[a] == '{' && d[b - 1] == '}' && memmem(d + a, b - a, "\":", 2)) return 0; /* a JSON object */
    if ((d[a] == '{' && d[b - 1] == '}') || (d[a] == '[' && d[b - 1] == ']') ||
        (d[a] == '<' && d[b - 1] == '>'))
        return 1;
    return b - a <= 3 && d[a] == '.';
}

/* Text pasted inside a tag that names per-request content (CONTENT_TAG) in a
 * rendered prompt (not a template: there the tag's text is the template's
 * own): the first text of its body is per turn, unless the body is a
 * stand-in ("<user_query>{question}</user_query>") or an example. */
int lint_detect_content_tags(lint_rx_lazy *tag_lazy, pcre2_match_context *mctx, const lint_text *t,
                             lint_spanv *out, util_err *err) {
    if (t->is_template) return UTIL_OK;
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    if (!md) return UTIL_ENOMEM;
    int rc = UTIL_OK;
    pcre2_code *tag_re = NULL;
    for (size_t l = 0; l < t->n_lines && !rc; l++) {
        size_t ls = t->line_start[l], le = lint_text_line_end(t, l);
        const char *p = t->data + ls;
        /* the tag opens its line (the pattern's ^\h*<; \h is a tab, a space or 0xA0) */
        const char *q = p;
        while (q < t->data + le && (*q == ' ' || *q == '\t' || (unsigned char)*q == 0xA0)) q++;
        if (le - ls > 2000 || q == t->data + le || *q != '<' ||
            (t->flags[l] & (LINT_LF_FENCE | LINT_LF_EXAMPLE | LINT_LF_FRONTMATTER)))
            continue;
        if (!tag_re && (rc = lint_rx_lazy_get(&tag_re, tag_lazy, err))) break;
        if (pcre2_match(tag_re, (PCRE2_SPTR)p, le - ls, 0, 0, md, mctx) < 0) continue;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        char closer[64]; /* a tag, not a word in prose: it is closed later */
        int cl = snprintf(closer, sizeof closer, "</%.*s>", (int)(ov[3] - ov[2]), p + ov[2]);
        size_t lim = t->len - (ls + ov[1]) > 65536 ? 65536 : t->len - (ls + ov[1]);
        if (cl <= 0 || (size_t)cl >= sizeof closer) continue;
        const char *body = t->data + ls + ov[1];
        const char *cp = memmem(body, lim, closer, (size_t)cl);
        /* "<user_query" again before it closes: the first was a word in prose */
        const char *op = cp ? memmem(body, (size_t)(cp - body), closer + 2, (size_t)cl - 3) : NULL;
        if (!cp || (op && op > body && op[-1] == '<')) continue;
        size_t a = ls + ov[1], nl = l;
        if (a >= le) { /* the body starts on a later line: its first non-blank one */
            for (nl = l + 1; nl < t->n_lines; nl++) {
                size_t s2 = t->line_start[nl], e2 = lint_text_line_end(t, nl);
                while (s2 < e2 && isspace((unsigned char)t->data[s2])) s2++;
                if (s2 < e2) {
                    a = s2;
                    break;
                }
            }
            if (nl >= t->n_lines) break;
        }
        size_t b = lint_text_line_end(t, nl);
        const char *close = memmem(t->data + a, b - a, "</", 2);
        if (close) b = (size_t)(close - t->data);
        if (a >= b || stand_in(t->data, a, b) || lint_text_in_code(t, a) || lint_text_in_quiet(t, a) ||
            (t->flags[nl] & (LINT_LF_FENCE | LINT_LF_EXAMPLE)))
            continue;
        while (b > a && isspace((unsigned char)t->data[b - 1])) b--;
        lint_span sp = {a, b, LINT_K_CONTENT, LINT_VC_TURN, 0, NULL, 1, 0};
        if (lint_spanv_push(out, &sp)) rc = UTIL_ENOMEM;
        /* the block's later lines are the same pasted text, not stable text */
        size_t cpos = (size_t)(cp - t->data);
        for (size_t k = nl + 1; k < t->n_lines && !rc && t->line_start[k] < cpos; k++) {
            size_t s2 = t->line_start[k], e2 = lint_text_line_end(t, k);
            if (e2 > cpos) e2 = cpos;
            while (s2 < e2 && isspace((unsigned char)t->data[s2])) s2++;
            while (e2 > s2 && isspace((unsigned char)t->data[e2 - 1])) e2--;
            if (s2 >= e2) continue;
            lint_span c = {s2, e2, LINT_K_CONTENT, LINT_VC_TURN, 0, NULL, 1, 1};
            if (lint_spanv_push(out, &c)) rc = UTIL_ENOMEM;
        }
    }
    pcre2_match_data_free(md);
    return rc;
}

/* Whether the item line [p, p + n) is a remark about the list ("- Note:
 * these variables set the folders", "Tip: ..."), not a setting or a fact. */
static int remark_item(const char *p, size_t n) {
    static const char *const k_remarks[] = {"note", "notes",     "nb",       "hint",
                                            "tip",  "important", "remember", NULL};
    size_t i = 0;
    while (i < n && (isspace((unsigned char)p[i]) || p[i] == '-' || p[i] == '*')) i++;
    size_t a = i;
    while (i < n && isalpha((unsigned char)p[i])) i++;
    size_t b = i;
    while (i < n && p[i] == '*') i++;
    if (b == a || b - a > 9 || i >= n || p[i] != ':') return 0;
    char w[10];
    for (size_t k = a; k < b; k++) w[k - a] = (char)tolower((unsigned char)p[k]);
    return lint_detect_word_in(w, b - a, k_remarks);
}

/* The "Key: value" items of a list of the user's settings (USER_BLOCK): each
 * value is the user's, up to the first line that is not an item; a remark
 * among them (remark_item) is neither. */
int lint_detect_user_blocks(lint_rx_lazy *block_lazy, lint_rx_lazy *item_lazy, pcre2_match_context *mctx,
                            const lint_text *t, lint_spanv *out, util_err *err) {
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    if (!md) return UTIL_ENOMEM;
    int rc = UTIL_OK, open = 0;
    pcre2_code *block_re = NULL, *item_re = NULL;
    for (size_t l = 0; l < t->n_lines && !rc; l++) {
        size_t ls = t->line_start[l], le = lint_text_line_end(t, l);
        const char *p = t->data + ls;
        size_t n = le - ls;
        if (n > 400 || (t->flags[l] & (LINT_LF_FENCE | LINT_LF_EXAMPLE | LINT_LF_FRONTMATTER))) {
            open = 0;
            continue;
        }
        if (open && !item_re && (rc = lint_rx_lazy_get(&item_re, item_lazy, err))) break;
        if (open && pcre2_match(item_re, (PCRE2_SPTR)p, n, 0, 0, md, mctx) >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t a = ls + ov[0], b = ls + ov[1];
            while (b > a && (t->data[b - 1] == ' ' || t->data[b - 1] == '\t')) b--;
            if (b > a && !lint_text_in_code(t, a) && !lint_text_in_quiet(t, a) && !remark_item(p, n)) {
                lint_span sp = {a,
                                b,
                                open == 2 ? LINT_K_ENV : LINT_K_PROFILE,
                                open == 2 ? LINT_VC_SESSION : LINT_VC_USER,
                                0,
                                NULL,
                                1,
                                0};
                if (lint_spanv_push(out, &sp)) rc = UTIL_ENOMEM;
            }
            continue;
        }
        open = 0;     /* 1: the user's settings; 2: an environment block (<env>) */
        size_t z = n; /* an opener ends in ':' or '>' */
        while (z > 0 && isspace((unsigned char)p[z - 1])) z--;
        if (z == 0 || (p[z - 1] != ':' && p[z - 1] != '>')) continue;
        if (!block_re && (rc = lint_rx_lazy_get(&block_re, block_lazy, err))) break;
        if (pcre2_match(block_re, (PCRE2_SPTR)p, n, 0, 0, md, mctx) > 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            open = pcre2_get_ovector_count(md) > 1 && ov[2] != PCRE2_UNSET ? 2 : 1;
        }
    }
    pcre2_match_data_free(md);
    return rc;
}

/* Whether the line [p, e) is blank. */
static int blank(const char *p, const char *e) {
    while (p < e && isspace((unsigned char)*p)) p++;
    return p == e;
}

/* Where the value of a "Key: value" line starting at p (before e) starts,
 * or NULL: the key is up to 30 bytes of letters, digits, blanks and '_'
 * then ": ". LOOSE also takes '/' and any non-ASCII byte in the key
 * (上证指数: 未知) and a full-width colon ("："). The one key reader of
 * data_shaped and data_line. */
static const char *kv_value(const char *p, const char *e, int loose) {
    const char *q = p;
    while (q < e && q - p <= 30 &&
           (isalnum((unsigned char)*q) || *q == ' ' || *q == '_' ||
            (loose && (*q == '/' || (unsigned char)*q >= 0x80)))) {
        if (loose && e - q >= 3 && !memcmp(q, "\xef\xbc\x9a", 3)) break; /* "：" */
        q++;
    }
    if (q == p || q >= e) return NULL;
    if (loose && e - q >= 4 && !memcmp(q, "\xef\xbc\x9a", 3)) return q + 3;
    return q + 1 < e && *q == ':' && q[1] == ' ' ? q + 2 : NULL;
}

/* Whether a heading's first body line [p, e) is shaped like data, not like
 * an instruction: a list item, a numbered result ("[1] ..."), a tag, JSON,
 * a table row, a fence or a "Key: value" line. Prose under a heading is how
 * fixed sections are written, so it is not claimed. */
static int data_shaped(const char *p, const char *e) {
    while (p < e && isspace((unsigned char)*p)) p++;
    if (p == e) return 0;
    if (strchr("-*[<{`|", *p) || isdigit((unsigned char)*p)) return 1;
    return kv_value(p, e, 0) != NULL;
}

/* Whether [p, e) is a line of data, not an instruction: a JSON object or
 * array, or a "Key: value" line (maybe a list item "- ", "• " or "1. ")
 * read by kv_value (LOOSE) with a value right after the colon, at most six
 * words (not a sentence: "Goal: You are an agent"). What a general caption
 * ("CONTEXT:", "Portfolio Data:") must head to be data. */
static int data_line(const char *p, const char *e) {
    while (p < e && isspace((unsigned char)*p)) p++;
    if (p == e) return 0;
    if (*p == '{' || *p == '[') return 1;
    if (e - p > 2 && (*p == '-' || *p == '*') && p[1] == ' ')
        p += 2;
    else if (e - p > 4 && !memcmp(p, "\xe2\x80\xa2", 3))
        p += 3; /* "•" */
    else if (isdigit((unsigned char)*p)) {
        while (p < e && isdigit((unsigned char)*p)) p++;
        if (p + 1 >= e || *p != '.' || p[1] != ' ') return 0;
        p += 2;
    }
    while (p < e && *p == ' ') p++;
    const char *q = kv_value(p, e, 1);
    if (!q || q >= e || (q[-1] == ' ' && isspace((unsigned char)*q))) return 0;
    int blanks = 0; /* a value, not a sentence ("Goal: You are an AI agent for ...") */
    for (; q < e && blanks <= 5; q++) blanks += *q == ' ';
    return blanks <= 5;
}

/* Pushes [a, b) of t trimmed, as the first line of a block (cont 0) or a
 * later one. */
static int push_line(const lint_text *t, size_t a, size_t b, int user, int cont, lint_spanv *out) {
    while (a < b && isspace((unsigned char)t->data[a])) a++;
    while (b > a && isspace((unsigned char)t->data[b - 1])) b--;
    if (a >= b) return UTIL_OK;
    lint_span sp = {
        a, b, user ? LINT_K_PROFILE : LINT_K_CONTENT, user ? LINT_VC_USER : LINT_VC_TURN, 0, NULL, 1, cont};
    return lint_spanv_push(out, &sp);
}

/* The offset of the last user turn of a message list written out in the
 * file ("- role: user" in YAML, "role": "user" in JSON), or 0: the user
 * turns before it are few-shot examples, not this request's. */
static size_t last_user_turn(const lint_text *t) {
    static const char *const keys[] = {"role: user", "\"role\": \"user\""};
    size_t best = 0;
    for (size_t i = 0; i < 2; i++) {
        size_t kl = strlen(keys[i]);
        for (const char *q = t->data, *e = t->data + t->len; (q = memmem(q, (size_t)(e - q), keys[i], kl));
             q += kl)
            if ((size_t)(q - t->data) > best) best = (size_t)(q - t->data);
    }
    return best;
}

/* The block under a content caption (CONTENT_CAPTION) in a rendered prompt:
 * the value after the caption's colon, then the lines up to the first blank
 * one (a caption may stand one blank line above its block; a fenced block
 * right under it is the block). A heading's block must be shaped like data
 * (data_shaped). Example blocks, fenced captions, front matter, stand-ins
 * ("Memories:\n{memories}", the placeholder's own case) and templates are
 * left alone. A general caption (CC_WEAK, CC_BRACKET in lint_detect_pat.c)
 * holds no value on its own line and heads a block that starts with a
 * data line (data_line). */
int lint_detect_content_captions(lint_rx_lazy *cap_lazy, pcre2_match_context *mctx, const lint_text *t,
                                 lint_spanv *out, util_err *err) {
    if (t->is_template) return UTIL_OK;
    pcre2_match_data *md = pcre2_match_data_create(4, NULL);
    if (!md) return UTIL_ENOMEM;
    int rc = UTIL_OK;
    pcre2_code *cap_re = NULL;
    size_t turn = (size_t)-1;
    for (size_t l = 0; l + 1 < t->n_lines && !rc; l++) {
        size_t ls = t->line_start[l], le = lint_text_line_end(t, l);
        const char *p = t->data + ls;
        if (le - ls > 160 || le == ls ||
            (t->flags[l] & (LINT_LF_FENCE | LINT_LF_EXAMPLE | LINT_LF_FRONTMATTER)))
            continue;
        const char *colon = memchr(p, ':', le - ls);
        const char *w = p;
        while (w < p + (le - ls) && (*w == ' ' || *w == '\t')) w++;
        int bracket = p + (le - ls) - w > 3 && !memcmp(w, "\xe3\x80\x90", 3); /* 【 */
        int heading = *p == '#' || bracket;
        if (!colon && !heading) continue;
        /* a caption's first word starts with one of these letters (a quick
         * test before the pattern: "- key: value" items, JSON, code fail) */
        while (!bracket && w < p + (le - ls) && (*w == '#' || *w == '*' || *w == ' ' || *w == '\t')) w++;
        unsigned c0 = (unsigned)(*w | 0x20) - 'a';
        if (bracket) c0 = 0; /* 'a', a letter that passes */
        if (w == p + (le - ls) || c0 > 25 || !((0x15FD98Fu >> c0) & 1) || (colon && colon - w > 140))
            continue;
        const char *z = p + (le - ls); /* a value after the colon: the caption is short */
        while (z > w && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '*')) z--;
        if (colon && !heading && z[-1] != ':' && colon - w > 60) continue;
        if (!cap_re && (rc = lint_rx_lazy_get(&cap_re, cap_lazy, err))) break;
        int mr = pcre2_match(cap_re, (PCRE2_SPTR)p, le - ls, 0, 0, md, mctx);
        if (mr < 0) continue;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        int user = mr > 1 && ov[2] != PCRE2_UNSET, br = mr > 3 && ov[6] != PCRE2_UNSET;
        int weak = br || (mr > 2 && ov[4] != PCRE2_UNSET);
        if (bracket != br) continue;
        if (turn == (size_t)-1) turn = last_user_turn(t); /* once, at the first caption */
        if (ls < turn) continue;                          /* a few-shot turn of a message list */
        size_t first = out->n, a = colon ? (size_t)(colon - p) + 1 : le - ls;
        while (ls + a < le && (p[a] == '*' || isspace((unsigned char)p[a]))) a++;
        if (weak && ls + a < le) continue; /* "Context: you are a ...": not a caption of data */
        if (ls + a < le) { /* the value on the caption's own line, then only the lines right under it */
            if (stand_in(t->data, ls + a, le) || memchr(p + a, '{', le - ls - a) ||
                memchr(p + a, '$', le - ls - a) || lint_text_in_code(t, ls + a))
                continue;
            rc = push_line(t, ls + a, le, user, 0, out);
        }
        int inl = out->n > first;
        size_t k = l + 1;
        while (k < t->n_lines && k <= l + (heading ? 3 : 1) &&
               blank(t->data + t->line_start[k], t->data + lint_text_line_end(t, k)))
            k++;
        if (k >= t->n_lines) continue;
        const char *bp = t->data + t->line_start[k], *be = t->data + lint_text_line_end(t, k);
        int fenced = (t->flags[k] & LINT_LF_FENCE_MARK) != 0;
        /* after a value on the caption's line: the lines right under it, a
         * fence after a blank, or a heading's first paragraph */
        if (inl && !heading && !fenced && k > l + 1) continue;
        if ((heading && !inl && !weak && !data_shaped(bp, be)) || (weak && !data_line(bp, be)) ||
            stand_in(t->data, t->line_start[k], lint_text_line_end(t, k)) ||
            (t->flags[k] & (LINT_LF_EXAMPLE | LINT_LF_FRONTMATTER)) ||
            (!fenced && (t->flags[k] & LINT_LF_FENCE)) || (*bp == '#'))
            continue;
        if (fenced) k++;
        for (; k < t->n_lines && !rc; k++) {
            size_t s2 = t->line_start[k], e2 = lint_text_line_end(t, k);
            if (fenced ? (t->flags[k] & LINT_LF_FENCE_MARK) != 0 : blank(t->data + s2, t->data + e2)) break;
            if (!fenced && t->data[s2] == '#') break;
            if (memmem(t->data + s2, e2 - s2, "{{", 2) || memchr(t->data + s2, '$', e2 - s2) ||
                memmem(t->data + s2, e2 - s2, "!`", 2) || stand_in(t->data, s2, e2)) {
                out->n = first; /* a block with template fields: the fields' own case */
                break;
            }
            rc = push_line(t, s2, e2, user, out->n > first, out);
        }
    }
    pcre2_match_data_free(md);
    return rc;
}

/* --- the installation's own paths ------------------------------------------ */

/* The caption of line l if it is a list item "- Caption: value" or
 * "Caption: value" (letters and blanks, up to 40 bytes, maybe in **): its
 * lower-case words, blank-separated, into buf; the offset after the colon
 * in *val. 0 when the line is not such an item. */
static size_t item_caption(const lint_text *t, size_t l, char *buf, size_t cap, size_t *val) {
    const char *d = t->data;
    size_t p = t->line_start[l], e = lint_text_line_end(t, l), n = 0;
    while (p < e && isspace((unsigned char)d[p])) p++;
    if (p + 1 < e && (d[p] == '-' || d[p] == '*') && d[p + 1] == ' ') p += 2;
    while (p < e && (d[p] == '*' || d[p] == ' ')) p++;
    size_t a = p;
    while (p < e && (isalpha((unsigned char)d[p]) || d[p] == ' ') && p - a <= 40) p++;
    size_t c = p;
    while (c < e && d[c] == '*') c++;
    if (p == a || c >= e || d[c] != ':' || p - a > 40) return 0;
    for (size_t k = a; k < p && n + 1 < cap; k++) buf[n++] = (char)tolower((unsigned char)d[k]);
    while (n && buf[n - 1] == ' ') n--;
    buf[n] = '\0';
    *val = c + 1;
    return n;
}

/* Whether the blank-separated words of s hold one of list. */
static int has_word(const char *s, const char *const *list) {
    for (const char *p = s; *p;) {
        while (*p == ' ') p++;
        const char *q = p;
        while (*q && *q != ' ') q++;
        if (q > p && lint_detect_word_in(p, (size_t)(q - p), list)) return 1;
        p = q;
    }
    return 0;
}

/* Whether the last word of s is one of list. */
static int last_word(const char *s, const char *const *list) {
    const char *e = s + strlen(s), *p = e;
    while (p > s && p[-1] != ' ') p--;
    return e > p && lint_detect_word_in(p, (size_t)(e - p), list);
}

static const char *const k_path_words[] = {"directory", "dir",    "folder",        "file", "path",
                                           "root",      "config", "configuration", NULL};

int lint_detect_install_item(const lint_text *t, size_t off) {
    /* the program's own stores: where it keeps its logs, data, config, docs */
    static const char *const k_install[] = {"logs",    "log",      "data",     "config",  "configuration",
                                            "cache",   "runbook",  "runbooks", "docs",    "documentation",
                                            "plugins", "plugin",   "store",    "storage", "installation",
                                            "install", "database", NULL};
    /* facts of a user's session: a block with one is the session's */
    static const char *const k_session[] = {
        "date",   "time",    "today",      "os",      "operating", "platform", "shell",    "git",
        "branch", "repo",    "repository", "user",    "username",  "host",     "hostname", "timezone",
        "locale", "project", "workspace",  "current", "home",      NULL};
    char cap[48];
    size_t l = lint_text_line_of(t, off), val;
    if (!item_caption(t, l, cap, sizeof cap, &val) || !last_word(cap, k_path_words)) return 0;
    for (size_t k = val; k < off; k++)
        if (!isspace((unsigned char)t->data[k])) return 0; /* the value starts the item */
    size_t first = l, last = l;
    while (first > 0 && item_caption(t, first - 1, cap, sizeof cap, &val)) first--;
    while (last + 1 < t->n_lines && item_caption(t, last + 1, cap, sizeof cap, &val)) last++;
    int install = 0;
    for (size_t k = first; k <= last; k++) {
        item_caption(t, k, cap, sizeof cap, &val);
        if (has_word(cap, k_session)) return 0;
        install += has_word(cap, k_install) && last_word(cap, k_path_words);
    }
    return install >= 3;
}

/* --- the tag around a value ------------------------------------------------ */

/* The name of the tag that [p, e) is exactly (after blanks): an opening tag
 * <name ...> (close 0) or a closing one </name> (close 1); 0 if it is not. */
static size_t tag_name(const char *p, const char *e, int close, const char **name) {
    while (p < e && isspace((unsigned char)*p)) p++;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if (e - p < 3 || *p != '<' || e[-1] != '>') return 0;
    p++;
    if (close != (*p == '/')) return 0;
    p += close;
    const char *n = p;
    while (p < e && (isalnum((unsigned char)*p) || *p == '_' || *p == '-')) p++;
    if (p == n || !isalpha((unsigned char)*n)) return 0;
    if (p < e - 1 && (close || *p != ' ')) return 0; /* attributes only after a space */
    *name = n;
    return (size_t)(p - n);
}

size_t lint_detect_enclosing_tag(const lint_text *t, size_t a, size_t b, const char **name) {
    const char *data = t->data;
    size_t l = lint_text_line_of(t, a);
    if (lint_text_line_of(t, b > a ? b - 1 : a) != l) return 0;
    size_t ls = t->line_start[l], le = lint_text_line_end(t, l);
    const char *open = NULL, *close = NULL;
    size_t on = 0, cn = 0;
    size_t p = ls, q = le;
    while (p < a && isspace((unsigned char)data[p])) p++;
    while (q > b && isspace((unsigned char)data[q - 1])) q--;
    if (p < a || q > b) { /* <name>value</name> on one line */
        on = tag_name(data + p, data + a, 0, &open);
        cn = tag_name(data + b, data + q, 1, &close);
    } else { /* the nearest non-blank lines above and below */
        size_t u = l, w = l + 1;
        while (u > 0) {
            u--;
            size_t s = t->line_start[u], e = lint_text_line_end(t, u);
            while (s < e && isspace((unsigned char)data[s])) s++;
            if (s < e) {
                on = tag_name(data + s, data + e, 0, &open);
                break;
            }
        }
        for (; w < t->n_lines && on; w++) {
            size_t s = t->line_start[w], e = lint_text_line_end(t, w);
            while (s < e && isspace((unsigned char)data[s])) s++;
            if (s < e) {
                cn = tag_name(data + s, data + e, 1, &close);
                break;
            }
        }
    }
    if (!on || on != cn || strncasecmp(open, close, on) != 0) return 0;
    *name = open;
    return on;
}
