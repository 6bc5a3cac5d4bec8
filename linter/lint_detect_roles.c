/* linter/lint_detect_roles.c: speaker tokens a file declares as text the
 * model writes ("All user messages must start with \"{user}:\"", "use
 * {{char}} instead of the name"), and speaker fields that label the turns of
 * its examples ("{{$user}}How many ...", "{{$bot}}ConvertCurrency"): such a
 * {user} is a role marker, not a name or an input, so it is the same bytes
 * every time. The file is read once for each (lint_text.role_decls), then
 * each token is looked up. Does not class placeholders by name
 * (lint_detect.c, lint_detect_words.c); calls nothing in lint_detect.c, which
 * hands it the declaration pattern (RX_ROLE_TOKEN). */
#include <ctype.h>
#include <string.h>

#include "lint_detect_impl.h"

/* The brace count and lower-case name of a token such as "{{ char }}" into
 * name (cap bytes): ({{char}} and {{ char }} are one token), or 0. */
static int token_key(const char *s, size_t n, char *name, size_t cap, size_t *nl) {
    size_t i = 0, braces = 0;
    while (i < n && s[i] == '{') i++, braces++;
    *nl = 0;
    for (; i < n && s[i] != '}'; i++)
        if (s[i] != ' ' && s[i] != '\t') {
            if (*nl + 1 >= cap) return 0;
            name[(*nl)++] = (char)tolower((unsigned char)s[i]);
        }
    return *nl ? (int)braces : 0;
}

/* Reads t once for the speaker tokens it declares (RX_ROLE_TOKEN) into
 * r: a file with a token on every line asks once, not once per token. */
static void read_role_decls(pcre2_code *re, pcre2_match_context *mc, const lint_text *t, lint_role_decls *r) {
    r->scanned = 1;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return;
    for (size_t off = 0; off < t->len && r->n < (int)(sizeof r->v / sizeof *r->v);) {
        if (pcre2_match(re, (PCRE2_SPTR)t->data, t->len, off, 0, md, mc) < 0) break;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[2] != PCRE2_UNSET) {
            int k = r->n;
            r->v[k].braces = token_key(t->data + ov[2], ov[3] - ov[2], r->v[k].key, sizeof r->v[k].key,
                                       &r->v[k].len);
            int dup = 0; /* a token declared again keeps its one slot */
            for (int j = 0; j < k && !dup; j++)
                dup = r->v[j].braces == r->v[k].braces && r->v[j].len == r->v[k].len &&
                      !memcmp(r->v[j].key, r->v[k].key, r->v[k].len);
            if (r->v[k].braces && !dup) r->n++;
        }
        off = ov[1] > off ? ov[1] : off + 1;
    }
    pcre2_match_data_free(md);
}

/* --- speaker labels of example turns ------------------------------------ */

static const char *const k_speakers[] = {"user",  "char",      "character", "narrator", "bot",   "npc",
                                         "human", "assistant", "ai",        "player",   "model", NULL};

/* The field that opens line l as a speaker's label: one or two braces, an
 * optional '$' (Semantic Kernel's {{$user}}), a role word, the closing
 * braces, then the turn's text on the same line, after a colon or not
 * ("{{$user}}How many ...", "{bot}: Sure."). Its name into name (cap bytes,
 * lower case) and its bytes into [*a, *b); the name's length, or 0 when the
 * line opens otherwise. */
static size_t line_label(const lint_text *t, size_t l, char *name, size_t cap, size_t *a, size_t *b) {
    const char *d = t->data;
    size_t p = t->line_start[l], e = lint_text_line_end(t, l), braces = 0, n = 0;
    while (p < e && (d[p] == ' ' || d[p] == '\t')) p++;
    *a = p;
    while (p < e && d[p] == '{' && braces < 2) p++, braces++;
    if (!braces) return 0;
    while (p < e && d[p] == ' ') p++;
    if (p < e && d[p] == '$') p++;
    for (; p < e && (isalpha((unsigned char)d[p]) || d[p] == '_'); p++) {
        if (n + 1 >= cap) return 0;
        name[n++] = (char)tolower((unsigned char)d[p]);
    }
    while (p < e && d[p] == ' ') p++;
    for (size_t k = 0; k < braces; k++, p++)
        if (p >= e || d[p] != '}') return 0;
    *b = p;
    if (!n || !lint_detect_word_in(name, n, k_speakers)) return 0;
    while (p < e && (d[p] == ' ' || d[p] == '\t')) p++;
    if (p < e && d[p] == ':') p++;
    while (p < e && (d[p] == ' ' || d[p] == '\t')) p++;
    return p < e ? n : 0;
}

/* Whether line l holds only blanks. */
static int blank_line(const lint_text *t, size_t l) {
    for (size_t p = t->line_start[l], e = lint_text_line_end(t, l); p < e; p++)
        if (!isspace((unsigned char)t->data[p])) return 0;
    return 1;
}

/* Whether a run of labelled turns from line first stands in an example
 * block: its first label, or the caption just above it ("Examples:" and a
 * blank line), is marked one (LINT_LF_EXAMPLE). */
static int run_in_example(const lint_text *t, size_t first) {
    if (t->flags[first] & LINT_LF_EXAMPLE) return 1;
    size_t l = first;
    while (l > 0 && blank_line(t, l - 1)) l--;
    return l > 0 && (t->flags[l - 1] & LINT_LF_EXAMPLE);
}

/* Reads t once for runs of turns whose lines open with a speaker's field
 * (line_label): a run goes on past a turn's further lines and the blank
 * lines between turns, and ends at a heading or a paragraph that opens
 * otherwise. A run is kept when its labels name two speakers or more (turns
 * that alternate, not one field repeated at line starts) and it stands in
 * an example block; outside examples a {{user}}: label may be the user's
 * name, and a field alone is a field. */
static void read_label_runs(const lint_text *t, lint_role_decls *r) {
    r->labels_scanned = 1;
    size_t first = 0, last = 0, n0 = 0;
    int open = 0, two = 0, blank = 0;
    char name0[32], name[32];
    for (size_t l = 0; l <= t->n_lines; l++) {
        size_t a, b, n = l < t->n_lines ? line_label(t, l, name, sizeof name, &a, &b) : 0;
        if (n) {
            if (!open) open = 1, two = 0, first = l, n0 = n, memcpy(name0, name, n);
            two |= n != n0 || memcmp(name, name0, n) != 0;
            last = l, blank = 0;
            continue;
        }
        if (l < t->n_lines && blank_line(t, l)) {
            blank = 1;
            continue;
        }
        if (l < t->n_lines && open && !blank && t->data[t->line_start[l]] != '#') continue;
        if (open && two && run_in_example(t, first) && r->n_runs < (int)(sizeof r->runs / sizeof *r->runs)) {
            r->runs[r->n_runs].first = first;
            r->runs[r->n_runs++].last = last;
        }
        open = 0, blank = 0;
    }
}

/* Whether the token at a is the speaker field that labels an example turn. */
static int example_label(const lint_text *t, size_t a) {
    char name[32];
    size_t l = lint_text_line_of(t, a), la, lb;
    if (!line_label(t, l, name, sizeof name, &la, &lb) || a < la || a >= lb) return 0;
    lint_role_decls *r = t->role_decls;
    if (!r->labels_scanned) read_label_runs(t, r);
    for (int k = 0; k < r->n_runs; k++)
        if (l >= r->runs[k].first && l <= r->runs[k].last) return 1;
    return 0;
}

int lint_detect_roles_declared(pcre2_code *re, pcre2_match_context *mc, const lint_text *t, size_t a,
                               size_t b) {
    char want[32];
    size_t wl;
    static const char *const k_roles[] = {"user",  "char",      "character", "narrator", "bot", "npc",
                                          "human", "assistant", "ai",        "player",   NULL};
    if (t->role_decls && example_label(t, a)) return 1;
    int wb = token_key(t->data + a, b - a, want, sizeof want, &wl);
    if (!wb || !lint_detect_word_in(want, wl, k_roles) || !t->role_decls)
        return 0; /* before reading the file */
    lint_role_decls *r = t->role_decls;
    if (!r->scanned) read_role_decls(re, mc, t, r);
    for (int k = 0; k < r->n; k++)
        if (r->v[k].braces == wb && r->v[k].len == wl && !memcmp(r->v[k].key, want, wl)) return 1;
    return 0;
}
