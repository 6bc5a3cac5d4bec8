/* linter/lint_tmpl_formats.c: prompt files whose format has a syntax of its
 * own: BAML (.baml: only prompt #"..."# and template_string blocks are
 * prompt text, each a prompt of its own; old BAML's {#input} fields),
 * Gemini CLI commands (.toml with a prompt = """...""" value), other TOML
 * prompt files (string values among keys, tables and comments), Generative
 * Agents templates (!<INPUT n>! fields below a comment block) and [[NAME]]
 * fields of plain-text prompts. Marks
 * the rest as metadata; does not read YAML/JSON prompt data
 * (lint_tmpl_data.c) or template tags (lint_tmpl_tags.c). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lint_config.h"
#include "lint_registry.h"
#include "lint_tmpl_impl.h"

static const char *const k_baml[] = {".baml", NULL};
static const char *const k_toml[] = {".toml", NULL};
static const char *const k_txt[] = {".txt", NULL};

/* --- BAML files (prompt #"..."# blocks among schema declarations) ------------------ */

/* Whether line i opens a BAML prompt block: `prompt #"` or `template_string
 * Name(args) #"` with nothing after the raw string's opener; *hashes: how
 * many '#' open it (the closer "# repeats them). */
static int baml_opener(const lint_text *t, size_t i, size_t *hashes) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    while (p < e && isspace((unsigned char)*p)) p++;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if (!((e - p > 7 && !memcmp(p, "prompt", 6) && (p[6] == ' ' || p[6] == '\t')) ||
          (e - p > 16 && !memcmp(p, "template_string ", 16))))
        return 0;
    if (e - p < 2 || e[-1] != '"') return 0;
    const char *h = e - 1;
    while (h > p && h[-1] == '#') h--;
    *hashes = (size_t)(e - 1 - h);
    return *hashes > 0 && h > p && isspace((unsigned char)h[-1]);
}

/* Whether line i is the closer "# (with hashes '#') alone on its line. */
static int baml_closer(const lint_text *t, size_t i, size_t hashes) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    while (p < e && isspace((unsigned char)*p)) p++;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    if ((size_t)(e - p) != hashes + 1 || *p != '"') return 0;
    for (const char *q = p + 1; q < e; q++)
        if (*q != '#') return 0;
    return 1;
}

/* The fields of an old BAML prompt block (before BAML took Jinja, 2024):
 * {#input} and {#input.member} are the function's argument, what the call
 * passes, so per turn; another {#name} is classed by its name; the built-in
 * renderings {#print_type(x)}, {#print_enum(x)} and the role marker
 * {#chat(user)} hold parentheses and are fixed text. Lines [a, b). */
static int baml_old_fields(scan *s, size_t a, size_t b) {
    const lint_text *t = s->t;
    const char *d = t->data;
    size_t end = b < t->n_lines ? t->line_start[b] : t->len;
    for (size_t i = t->line_start[a]; i + 3 < end; i++) {
        if (d[i] != '{' || d[i + 1] != '#' || !(isalpha((unsigned char)d[i + 2]) || d[i + 2] == '_'))
            continue;
        size_t k = i + 2;
        while (k < end && (isalnum((unsigned char)d[k]) || d[k] == '_' || d[k] == '.')) k++;
        if (k >= end || d[k] != '}') continue;
        size_t root = i + 2;
        while (root < k && d[root] != '.') root++;
        int sub = 0, known = 0, vc;
        if (root - i - 2 == 5 && !memcmp(d + i + 2, "input", 5))
            vc = LINT_VC_TURN, known = 1;
        else
            vc = lint_detect_name_info(s->d, s->cfg, d + i + 2, k - i - 2, &sub, &known);
        lint_span sp = {i, k + 1, LINT_K_PLACEHOLDER, vc, sub, NULL, 0, 0};
        if (vc != LINT_VC_NONE ? lint_spanv_push(s->spans, &sp) : !known && lint_spanv_push(s->unknown, &sp))
            return UTIL_ENOMEM;
        i = k;
    }
    return UTIL_OK;
}

/* A BAML file (.baml): only its functions' prompt #"..."# blocks and its
 * template_string blocks are prompt text; the classes, enums, clients and
 * tests around them are schema and settings (an enum value `User` is not a
 * role marker). Each block is a prompt of its own, judged alone
 * (lint_text_own_prompt): two functions are two requests, and a
 * template_string is rendered where a prompt calls it, not where it stands. */
int lint_tmpl_baml(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!lint_name_ends_with(rel, k_baml)) return UTIL_OK;
    int rc = UTIL_OK, any = 0;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t hashes, k;
        if (!baml_opener(t, i, &hashes)) continue;
        for (k = i + 1; k < t->n_lines && !baml_closer(t, k, hashes); k++) {}
        if (k >= t->n_lines) break;
        for (size_t j = any ? i : 0; j <= i && !rc; j++) rc = lint_tmpl_meta_line(t, j);
        if (!rc) rc = lint_tmpl_meta_line(t, k);
        if (!rc) rc = lint_text_own_prompt(t, i + 1, k);
        if (!rc) rc = baml_old_fields(s, i + 1, k);
        any = 1;
        /* what follows, up to the next block, is declarations */
        size_t n = k + 1;
        for (size_t hh; n < t->n_lines && !baml_opener(t, n, &hh); n++) {}
        for (size_t j = k + 1; j < n && !rc; j++) rc = lint_tmpl_meta_line(t, j);
        i = n - 1;
    }
    return rc;
}

/* --- Gemini CLI commands (.toml with a prompt = """...""" value) ------------------- */

/* A Gemini CLI custom command: only the prompt value is prompt text (the
 * description is metadata), {{args}} is what the user typed after the
 * command, !{cmd} is the command's output and @{path} a file's content, all
 * filled in when the command runs. */
/* The line of a Gemini CLI command's top-level prompt = "..." key, its
 * value's opening quote in *vat; (size_t)-1 when t has none. */
static size_t gemini_prompt_line(const lint_text *t, size_t *vat) {
    const char *d = t->data;
    for (size_t i = 0; i < t->n_lines; i++) {
        const char *p = d + t->line_start[i], *e = d + lint_text_line_end(t, i);
        if (e - p < 7 || memcmp(p, "prompt", 6) != 0) continue;
        p += 6;
        while (p < e && *p == ' ') p++;
        if (p >= e || *p != '=') continue;
        for (p++; p < e && *p == ' '; p++) {}
        if (p < e && (*p == '"' || *p == '\'')) {
            *vat = (size_t)(p - d);
            return i;
        }
    }
    return (size_t)-1;
}

int lint_tmpl_gemini_command(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!lint_name_ends_with(rel, k_toml)) return UTIL_OK;
    const char *d = t->data;
    size_t vat = 0, pl = gemini_prompt_line(t, &vat);
    if (pl == (size_t)-1) return UTIL_OK;
    char q = d[vat];
    int triple = vat + 2 < t->len && d[vat + 1] == q && d[vat + 2] == q;
    vat += triple ? 3 : 1;
    size_t vend = t->len;
    if (triple) {
        char close[4] = {q, q, q, 0};
        const char *c = vat < t->len ? memmem(d + vat, t->len - vat, close, 3) : NULL;
        if (c) vend = (size_t)(c - d);
    } else {
        vend = lint_text_line_end(t, pl);
        for (size_t k = vat; k < vend; k++)
            if (d[k] == '\\')
                k++;
            else if (d[k] == q) {
                vend = k;
                break;
            }
    }
    size_t last = lint_text_line_of(t, vend > vat ? vend - 1 : vat);
    for (size_t k = 0; k < t->n_lines; k++)
        if (k < pl || k > last) t->flags[k] |= LINT_LF_FRONTMATTER;
    int rc = lint_text_add_quiet(t, 0, vat);
    if (!rc && vend < t->len) rc = lint_text_add_quiet(t, vend, t->len);
    for (size_t i = vat; !rc && i + 1 < vend; i++) {
        size_t b = 0;
        int kind = LINT_K_PLACEHOLDER;
        if (d[i] == '{' && vend - i >= 8 && !memcmp(d + i, "{{args}}", 8)) {
            b = i + 8;
        } else if ((d[i] == '!' || d[i] == '@') && d[i + 1] == '{') {
            int depth = 0; /* balanced braces, up to the line's end */
            size_t le = lint_text_line_end(t, lint_text_line_of(t, i));
            for (size_t k = i + 1; k < le && k < vend; k++)
                if (d[k] == '{')
                    depth++;
                else if (d[k] == '}' && --depth == 0) {
                    b = k + 1;
                    break;
                }
            if (d[i] == '!') kind = LINT_K_SHELL;
        }
        if (!b) continue;
        lint_span sp = {i, b, kind, LINT_VC_TURN, 0, NULL, 0, 0};
        if (lint_spanv_push(s->spans, &sp)) rc = UTIL_ENOMEM;
        i = b - 1;
    }
    return rc;
}

/* --- TOML prompt files (prompts as string values among keys and tables) ------------ */

/* Where the TOML string opened at d[v] (quote q, triple or not) closes in
 * [v, e): the offset of its closing quote(s), or (size_t)-1. */
static size_t toml_close(const char *d, size_t v, size_t e, char q, int triple) {
    for (size_t k = v; k < e; k++) {
        if (q == '"' && d[k] == '\\') {
            k++;
        } else if (d[k] == q && (!triple || (k + 2 < e && d[k + 1] == q && d[k + 2] == q))) {
            if (triple) /* """" ends with a quote inside: the last three close */
                while (k + 3 < e && d[k + 3] == q) k++;
            return k;
        }
    }
    return (size_t)-1;
}

/* The value of the TOML line [a, e): after `key =` (bare, dotted or quoted
 * keys), or the line's first character when it has no key (an array's
 * item); *key_end: where the key ends (a, without one). */
static size_t toml_value(const char *d, size_t a, size_t e, size_t *key_end) {
    size_t p = a;
    while (p < e && (d[p] == ' ' || d[p] == '\t')) p++;
    size_t k = p;
    while (k < e && (lint_tmpl_is_ident(d[k]) || d[k] == '-' || d[k] == '.' || d[k] == ' ' || d[k] == '"' ||
                     d[k] == '\''))
        k++;
    *key_end = a;
    if (k < e && k > p && d[k] == '=' && (k + 1 == e || d[k + 1] != '=')) {
        *key_end = k;
        for (k++; k < e && (d[k] == ' ' || d[k] == '\t');) k++;
        return k;
    }
    return p;
}

/* Whether quotes that end at k on line i close a multi-line string: what
 * follows on the line is a comment or an array's punctuation, and the next
 * line with text is a key, a table, a comment or an array's item, as after
 * a value; a prompt's own `"""{question}"""` line, prose after it, does
 * not close it. */
static int toml_closes(const lint_text *t, size_t i, size_t k) {
    const char *d = t->data;
    for (size_t e = lint_text_line_end(t, i); k < e && d[k] != '#'; k++)
        if (!strchr(" \t\r,]}", d[k])) return 0;
    for (size_t n = i + 1; n < t->n_lines; n++) {
        size_t a = t->line_start[n], e = lint_text_line_end(t, n), ke, v = toml_value(d, a, e, &ke);
        if (v >= e) continue;
        return ke > a || strchr("#[]\"'", d[v]) != NULL;
    }
    return 1;
}

/* A TOML file of prompts (a RAG app's rag_system_prompt = """...""", a
 * tool's prompt table): its prompt text is its string values, multi-line
 * ones whole and one-line ones when they read as text
 * (lint_tmpl_prompt_string); comments (a `# {query_str} = the e-mail` that
 * documents the fields), table headers, keys, numbers, arrays' punctuation
 * and short strings are configuration, neither volatile nor stable. Each
 * key named as a whole prompt, when two or more are (lint_tmpl_library_key:
 * summary_prompt beside qa_prompt, not a system_prompt and user_prompt
 * pair), is a prompt of its own, as in a YAML file. A Gemini CLI
 * command (top-level prompt =) has its own reader above. */
int lint_tmpl_toml_config(scan *s, const char *rel) {
    lint_text *t = s->t;
    size_t vat;
    if (!lint_name_ends_with(rel, k_toml) || gemini_prompt_line(t, &vat) != (size_t)-1) return UTIL_OK;
    const char *d = t->data;
    int rc = UTIL_OK;
    char ml = 0; /* the quote of the multi-line string being read */
    size_t whole = 0, roles = 0;
    char *unit = calloc(t->n_lines ? t->n_lines : 1, 1); /* a key named as a whole prompt */
    if (!unit) return UTIL_ENOMEM;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ke, close;
        if (ml) { /* inside a multi-line string: text up to its closing quotes */
            close = toml_close(d, a, e, ml, 1);
            if (close != (size_t)-1 && toml_closes(t, i, close + 3))
                rc = lint_text_add_quiet(t, close, e), ml = 0;
            continue;
        }
        size_t v = toml_value(d, a, e, &ke);
        if (v >= e) continue; /* a blank line */
        if (ke > a) {
            int k = lint_tmpl_library_key(d + a + strspn(d + a, " \t"), d + ke);
            whole += k != 0, roles += k == 2;
            unit[i] = k == 1;
        }
        if (d[v] != '"' && d[v] != '\'') {
            rc = lint_tmpl_meta_line(t, i); /* comments, tables, numbers, arrays */
            continue;
        }
        char q = d[v];
        int triple = v + 2 < e && d[v + 1] == q && d[v + 2] == q;
        size_t from = v + (triple ? 3 : 1);
        close = toml_close(d, from, e, q, triple);
        if (triple && close != (size_t)-1 && !toml_closes(t, i, close + 3)) close = (size_t)-1;
        if (triple && close == (size_t)-1) {
            rc = lint_text_add_quiet(t, a, from), ml = q;
        } else if (close != (size_t)-1 && (triple || lint_tmpl_prompt_string(d, v, close, 0))) {
            rc = lint_text_add_quiet(t, a, from);
            if (!rc) rc = lint_text_add_quiet(t, close, e);
        } else {
            rc = lint_tmpl_meta_line(t, i);
        }
    }
    /* prompts of their own: keys named as whole prompts */
    int keys = whole >= 2 && whole > roles;
    size_t from = 0;
    for (size_t i = 1; i < t->n_lines && !rc; i++) {
        if (unit[i] && keys) {
            rc = lint_text_own_prompt(t, from, i);
            from = i;
        }
    }
    if (!rc && from > 0) rc = lint_text_own_prompt(t, from, t->n_lines);
    free(unit);
    return rc;
}

/* --- Generative Agents templates (!<INPUT n>! fields, a comment block) --------------- */

#define GA_MARKER     "<commentblockmarker>###</commentblockmarker>"
#define GA_MAX_INPUTS 64

/* The field index of a !<INPUT n>! at i, its end in *end; -1 if none. */
static int ga_field(const char *d, size_t len, size_t i, size_t *end) {
    if (len - i < 11 || memcmp(d + i, "!<INPUT ", 8) != 0) return -1;
    size_t k = i + 8;
    int n = 0;
    while (k < len && isdigit((unsigned char)d[k]) && n < 100000) n = n * 10 + (d[k++] - '0');
    if (k == i + 8 || len - k < 2 || d[k] != '>' || d[k + 1] != '!') return -1;
    *end = k + 2;
    return n;
}

/* Words that end the noun phrase of a description ("hourly schedule so
 * far", "summary of the day"): the name is the words before them. */
static const char *const k_ga_stop[] = {"so",   "for", "of", "in", "on", "at", "with", "that", "which",
                                        "from", "to",  "as", "by", "e",  "eg", "i",    "ie",   NULL};

/* A description ("Persona's first name", "Detailed day schedule") read as a
 * placeholder name: its words in lower case joined by '_', up to a stop word
 * or a bracket; *owned: where the words after a possessive's "'s" start (0
 * without one). Returns the length written into out (at most cap-1). */
static size_t ga_name(const char *p, const char *e, char *out, size_t cap, size_t *owned) {
    size_t n = 0;
    *owned = 0;
    while (p < e && n + 1 < cap && *p != '(' && *p != '[' && *p != ',' && *p != '.') {
        if (*p == '\'' && p + 1 < e && (p[1] == 's' || p[1] == 'S') &&
            (p + 2 == e || !isalnum((unsigned char)p[2]))) {
            p += 2;
            if (n && out[n - 1] != '_') out[n++] = '_';
            *owned = n;
            continue;
        }
        if (!isalnum((unsigned char)*p)) {
            if (n && out[n - 1] != '_') out[n++] = '_';
            p++;
            continue;
        }
        const char *w = p;
        while (p < e && isalnum((unsigned char)*p)) p++;
        int stop = 0;
        for (size_t k = 0; k_ga_stop[k] && n; k++)
            stop |= (size_t)(p - w) == strlen(k_ga_stop[k]) && !strncasecmp(w, k_ga_stop[k], (size_t)(p - w));
        if (stop) break;
        for (; w < p && n + 1 < cap; w++) out[n++] = (char)tolower((unsigned char)*w);
    }
    while (n && out[n - 1] == '_') n--;
    if (*owned >= n) *owned = 0;
    out[n] = '\0';
    return n;
}

/* The class of a described field: what the possessive's words name when
 * they say how often it changes ("Persona's current action" per turn),
 * except a name or address, which is the possessor's ("Persona's first
 * name" stable: the persona is configured); else the whole description. */
static int ga_class(const scan *s, const char *name, size_t n, size_t owned, int *sub, int *known) {
    if (owned) {
        int vc = lint_detect_name_info(s->d, s->cfg, name + owned, n - owned, sub, known);
        if (vc != LINT_VC_NONE && vc != LINT_VC_USER) return vc;
    }
    return lint_detect_name_info(s->d, s->cfg, name, n, sub, known);
}

/* A field without a description that a caption opens its line with
 * ("Context: !<INPUT 0>!"): the caption is its name. */
static size_t ga_caption(const lint_text *t, size_t at, char *out, size_t cap) {
    size_t ls = t->line_start[lint_text_line_of(t, at)], k = at;
    while (k > ls && t->data[k - 1] == ' ') k--;
    if (k == ls || t->data[k - 1] != ':') return 0;
    const char *p = t->data + ls, *e = t->data + k - 1;
    for (const char *q = p; q < e; q++)
        if (!isalpha((unsigned char)*q) && *q != ' ' && *q != '\'') return 0;
    size_t owned;
    return e - p <= 40 ? ga_name(p, e, out, cap, &owned) : 0;
}

/* A Stanford Generative Agents prompt template: its loader keeps only the
 * text after <commentblockmarker>###</commentblockmarker>, so what stands
 * before it (the file name, "Variables:" with one "!<INPUT n>! --
 * description" line per field) is a comment; each !<INPUT n>! field is
 * classed by its description read as a name ("Detailed day schedule" per
 * turn, "Persona first name" stable), else by a caption before it
 * ("Context:") or the words before it ("Right now, it is"), else it is
 * unknown (PL008). */
int lint_tmpl_genagents(scan *s, const char *rel) {
    (void)rel;
    lint_text *t = s->t;
    const char *d = t->data;
    if (t->curly_only || !t->len || !memmem(d, t->len, "!<INPUT ", 8)) return UTIL_OK;
    const char *m = memmem(d, t->len, GA_MARKER, sizeof GA_MARKER - 1);
    size_t body = 0;
    int rc = UTIL_OK;
    size_t desc[GA_MAX_INPUTS][2];
    memset(desc, 0, sizeof desc);
    if (m) {
        body = (size_t)(m - d) + sizeof GA_MARKER - 1;
        size_t ml = lint_text_line_of(t, (size_t)(m - d));
        for (size_t k = 0; k < ml; k++) t->flags[k] |= LINT_LF_FRONTMATTER;
        if (lint_text_line_end(t, ml) == body) t->flags[ml] |= LINT_LF_FRONTMATTER;
        rc = lint_text_add_quiet(t, 0, body);
        for (size_t k = 0; k < ml; k++) { /* !<INPUT n>! -- description */
            size_t a = t->line_start[k], e = lint_text_line_end(t, k), fe;
            while (a < e && d[a] == ' ') a++;
            int n = ga_field(d, e, a, &fe);
            if (n < 0 || n >= GA_MAX_INPUTS) continue;
            while (fe < e && (d[fe] == ' ' || d[fe] == '-' || d[fe] == ':')) fe++;
            desc[n][0] = fe, desc[n][1] = e;
        }
    }
    for (size_t i = body; !rc && i + 10 < t->len; i++) {
        size_t fe;
        int n = d[i] == '!' ? ga_field(d, t->len, i, &fe) : -1;
        if (n < 0) continue;
        char name[128];
        size_t owned = 0;
        size_t nl = n < GA_MAX_INPUTS && desc[n][1] > desc[n][0]
                        ? ga_name(d + desc[n][0], d + desc[n][1], name, sizeof name, &owned)
                        : ga_caption(t, i, name, sizeof name);
        int sub = 0, known = 0;
        int vc = nl ? ga_class(s, name, nl, owned, &sub, &known) : LINT_VC_NONE;
        if (vc == LINT_VC_NONE && !known) vc = lint_detect_context_class(s->d, t, i, &sub);
        if (vc == LINT_VC_USER && lint_detect_self_name(s->d, t, i)) vc = LINT_VC_NONE, known = 1;
        lint_span sp = {i, fe, LINT_K_PLACEHOLDER, vc, sub, NULL, 0, 0};
        if (vc != LINT_VC_NONE)
            rc = lint_spanv_push(s->spans, &sp) ? UTIL_ENOMEM : UTIL_OK;
        else if (!known)
            rc = lint_spanv_push(s->unknown, &sp) ? UTIL_ENOMEM : UTIL_OK;
        i = fe - 1;
    }
    return rc;
}

/* --- [[NAME]] fields of plain-text prompts (a script's sed fills them) ------------- */

/* A plain-text prompt (.txt) that a script fills before it runs the model
 * (llama.cpp's example chat prompts: sed replaces [[USER_NAME]] and
 * [[DATE_YEAR]]): a [[NAME]] whose NAME is upper case (letters, digits and
 * '_', starting with a letter, at least two characters) is a field, classed
 * by its name only; a name that says nothing (a [[TODO]], a [[NOTE]]) is
 * left as text, and so is any wiki link ([[Some page]]). */
int lint_tmpl_bracket_fields(scan *s, const char *rel) {
    if (!lint_name_ends_with(rel, k_txt) || s->t->is_template) return UTIL_OK;
    const char *d = s->t->data;
    size_t len = s->t->len;
    for (size_t i = 0; i + 4 < len; i++) {
        if (d[i] != '[' || d[i + 1] != '[' || !isupper((unsigned char)d[i + 2])) continue;
        size_t k = i + 2;
        while (k < len && (isupper((unsigned char)d[k]) || isdigit((unsigned char)d[k]) || d[k] == '_')) k++;
        if (k + 1 >= len || d[k] != ']' || d[k + 1] != ']' || k - i - 2 < 2) continue;
        int subday = 0, known = 0;
        int vc = lint_detect_name_info(s->d, s->cfg, d + i + 2, k - i - 2, &subday, &known);
        lint_span sp = {i, k + 2, LINT_K_PLACEHOLDER, vc, subday, NULL, 0, 0};
        if (vc != LINT_VC_NONE && lint_spanv_push(s->spans, &sp)) return UTIL_ENOMEM;
        i = k + 1;
    }
    return UTIL_OK;
}
