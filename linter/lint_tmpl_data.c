/* linter/lint_tmpl_data.c: prompts kept as values of data files, read as
 * their prompt value only: LangChain prompts saved as YAML/JSON
 * (input_variables and template), CrewAI task files (description and
 * expected_output entries),
 * LocalAI template maps (several templates under template:, each a prompt
 * of its own), template pools (whole templates side by side under
 * top-level *_prompt / *_template keys, each a prompt of its own) and n8n
 * workflows (each langchain node's system message,
 * then its user text); other JSON files are read like YAML prompt configs.
 * Marks the other keys as metadata and adds the fields they declare; does not
 * tokenize template tags (lint_tmpl_tags.c), read expressions (lint_tmpl.c)
 * or read prompt formats with syntaxes of their own (lint_tmpl_formats.c). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lint_registry.h"
#include "../util/vec.h"
#include "lint_tmpl_impl.h"

/* File types by name (lint_name_ends_with: any case, and longer than the
 * suffix). */
static const char *const k_yaml[] = {".yaml", ".yml", NULL};
static const char *const k_json[] = {".json", NULL};
static const char *const k_jsonl[] = {".jsonl", ".ndjson", NULL};

/* --- declared inputs ------------------------------------------------------------- */

int lint_tmpl_add_input(scan *s, const char *p, size_t n) {
    while (n > 0 && (p[n - 1] == '?' || p[n - 1] == ' ')) n--;
    if (!n) return UTIL_OK;
    char **v = realloc(s->inputs, (s->n_inputs + 1) * sizeof *v);
    if (!v) return UTIL_ENOMEM;
    s->inputs = v;
    if (!(v[s->n_inputs] = strndup(p, n))) return UTIL_ENOMEM;
    s->n_inputs++;
    return UTIL_OK;
}

int lint_tmpl_is_input(const scan *s, const char *p, size_t n) {
    for (size_t i = 0; i < s->n_inputs; i++)
        if (lint_tmpl_word_is(p, n, s->inputs[i])) return 1;
    return 0;
}

/* Names a prompt declares as its inputs: prompty `inputs:` (a map, or a list of
 * `- name: x`) and `sample:` keys, dotprompt `input: schema:` keys. */
int lint_tmpl_read_inputs(scan *s, size_t first, size_t last) {
    const lint_text *t = s->t;
    int section = 0; /* 1 inputs/sample map, 2 dotprompt input (schema under it) */
    size_t key_indent = (size_t)-1;
    for (size_t i = first; i <= last; i++) {
        const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
        size_t ind = 0;
        while (p + ind < e && p[ind] == ' ') ind++;
        const char *q = p + ind;
        if (q >= e || *q == '#') continue;
        const char *colon = memchr(q, ':', (size_t)(e - q));
        if (ind == 0) {
            section = 0;
            key_indent = (size_t)-1;
            if (colon && (lint_tmpl_word_is(q, (size_t)(colon - q), "inputs") ||
                          lint_tmpl_word_is(q, (size_t)(colon - q), "sample")))
                section = 1;
            else if (colon && lint_tmpl_word_is(q, (size_t)(colon - q), "input"))
                section = 2;
            continue;
        }
        if (!section) continue;
        if (section == 2) {
            if (colon && lint_tmpl_word_is(q, (size_t)(colon - q), "schema"))
                section = 1, key_indent = (size_t)-1;
            continue;
        }
        if (q[0] == '-' && q + 1 < e) { /* - name: x */
            const char *r = q + 1;
            while (r < e && *r == ' ') r++;
            if ((size_t)(e - r) > 5 && memcmp(r, "name:", 5) == 0) {
                r += 5;
                while (r < e && *r == ' ') r++;
                const char *re = r;
                while (re < e && (lint_tmpl_is_ident(*re))) re++;
                if (lint_tmpl_add_input(s, r, (size_t)(re - r))) return UTIL_ENOMEM;
            }
            continue;
        }
        if (key_indent == (size_t)-1) key_indent = ind;
        if (ind != key_indent || !colon) continue;
        const char *ke = q;
        while (ke < colon && (lint_tmpl_is_ident(*ke) || *ke == '?')) ke++;
        if (ke == colon && lint_tmpl_add_input(s, q, (size_t)(ke - q))) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* --- serialized prompts (LangChain load_prompt YAML/JSON) ------------------------- */

int lint_tmpl_meta_line(lint_text *t, size_t i) {
    size_t e = lint_text_line_end(t, i);
    t->flags[i] |= LINT_LF_FRONTMATTER;
    return lint_text_add_quiet(t, t->line_start[i], e < t->len ? e + 1 : e);
}

/* Whether line i starts with key at column 0 ("key:" in YAML, "key": in JSON,
 * indented in JSON); returns the offset after the ':' or 0. */
static size_t key_line(const lint_text *t, size_t i, const char *key, int json) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    size_t kl = strlen(key);
    if (json) {
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (p >= e || *p != '"') return 0;
        p++;
    }
    if ((size_t)(e - p) <= kl || memcmp(p, key, kl) != 0) return 0;
    p += kl;
    if (json) {
        if (p >= e || *p != '"') return 0;
        p++;
        while (p < e && *p == ' ') p++;
    }
    if (p >= e || *p != ':') return 0;
    return (size_t)(p + 1 - t->data);
}

/* The names of input_variables ([a, b] or a YAML "- a" list) from offset at. */
static int serialized_inputs(scan *s, size_t line, size_t at) {
    const lint_text *t = s->t;
    const char *d = t->data;
    size_t i = at;
    while (i < t->len && (d[i] == ' ' || d[i] == '\t')) i++;
    if (i < t->len && d[i] == '[') {
        for (i++; i < t->len && d[i] != ']';) {
            if (lint_tmpl_is_ident(d[i]) && !isdigit((unsigned char)d[i])) {
                size_t a = i;
                while (i < t->len && lint_tmpl_is_ident(d[i])) i++;
                if (lint_tmpl_add_input(s, d + a, i - a)) return UTIL_ENOMEM;
            } else {
                i++;
            }
        }
        return UTIL_OK;
    }
    for (size_t k = line + 1; k < t->n_lines; k++) { /* - name */
        const char *p = d + t->line_start[k], *e = d + lint_text_line_end(t, k);
        while (p < e && *p == ' ') p++;
        if (p >= e || *p != '-') break;
        for (p++; p < e && (*p == ' ' || *p == '"' || *p == '\''); p++) {}
        const char *q = p;
        while (q < e && lint_tmpl_is_ident(*q)) q++;
        if (q > p && lint_tmpl_add_input(s, p, (size_t)(q - p))) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* A prompt saved by LangChain (load_prompt: .yaml/.yml/.json with
 * input_variables and template): only the template value is prompt text,
 * the other keys are metadata like frontmatter, and its {name} fields named
 * in input_variables are filled per call. */
int lint_tmpl_serialized_prompt(scan *s, const char *rel) {
    lint_text *t = s->t;
    int json = lint_name_ends_with(rel, k_json);
    if (!json && !lint_name_ends_with(rel, k_yaml)) return UTIL_OK;
    size_t tl = (size_t)-1, vat = 0, il = (size_t)-1, iat = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t a;
        if (tl == (size_t)-1 && (a = key_line(t, i, "template", json))) tl = i, vat = a;
        if (il == (size_t)-1 && (a = key_line(t, i, "input_variables", json))) il = i, iat = a;
    }
    if (tl == (size_t)-1 || il == (size_t)-1) return UTIL_OK;
    const char *d = t->data;
    /* the value: one JSON line, or YAML lines up to the next top-level key */
    size_t last = tl;
    if (!json)
        for (size_t k = tl + 1; k < t->n_lines; k++) {
            const char *p = d + t->line_start[k], *e = d + lint_text_line_end(t, k);
            const char *q = p;
            while (q < e && (lint_tmpl_is_ident(*q) || *q == '-')) q++;
            if (q > p && q < e && *q == ':' && !isspace((unsigned char)*p)) break;
            last = k;
        }
    while (vat < t->len && d[vat] == ' ') vat++;
    char quote = 0;
    if (vat < t->len && (d[vat] == '\'' || d[vat] == '"'))
        quote = d[vat++];
    else if (!json && vat < t->len && (d[vat] == '|' || d[vat] == '>'))
        vat = lint_text_line_end(t, tl);
    size_t vend = lint_text_line_end(t, last);
    if (quote) { /* the closing quote and what follows it */
        size_t k = vend;
        while (k > vat && (d[k - 1] == ' ' || d[k - 1] == ',')) k--;
        if (k > vat && d[k - 1] == quote) vend = k - 1;
    }
    for (size_t k = 0; k < t->n_lines; k++)
        if (k < tl || k > last) t->flags[k] |= LINT_LF_FRONTMATTER;
    int rc = lint_text_add_quiet(t, 0, vat);
    if (!rc && vend < t->len) rc = lint_text_add_quiet(t, vend, t->len);
    if (!rc) rc = serialized_inputs(s, il, iat);
    /* the declared fields no name classes are filled per call */
    for (size_t i = vat; !rc && i < vend; i++) {
        if (d[i] != '{' || (i + 1 < vend && d[i + 1] == '{') || (i > vat && d[i - 1] == '{')) continue;
        size_t a = i + 1, b = a;
        while (b < vend && lint_tmpl_is_ident(d[b])) b++;
        if (b >= vend || d[b] != '}' || b == a || !lint_tmpl_is_input(s, d + a, b - a)) continue;
        int sub = 0, known = 0;
        if (lint_detect_name_info(s->d, s->cfg, d + a, b - a, &sub, &known) == LINT_VC_NONE && !known) {
            lint_span sp = {i, b + 1, LINT_K_PLACEHOLDER, LINT_VC_TURN, 0, NULL, 0, 0};
            if (lint_spanv_push(s->spans, &sp)) rc = UTIL_ENOMEM;
        }
        i = b;
    }
    return rc;
}

/* Whether line i is an indented YAML key `key:` (an entry's field). */
static int indented_key(const lint_text *t, size_t i, const char *key) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    const char *q = p;
    while (q < e && *q == ' ') q++;
    size_t kl = strlen(key);
    return q > p && (size_t)(e - q) > kl && !memcmp(q, key, kl) && q[kl] == ':';
}

static size_t yaml_value(const char *d, size_t a, size_t e, size_t *indent);

/* Marks the comment lines of a YAML file as metadata (a `# {topic} is what
 * the user asked` documenting a field is not prompt text); a '#' line inside
 * a block scalar is the scalar's text. UTIL_ENOMEM. */
static int yaml_comments(lint_text *t) {
    const char *d = t->data;
    size_t block = (size_t)-1; /* the indent of the key a block scalar is under */
    int rc = UTIL_OK;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), p = a, ind;
        while (p < e && d[p] == ' ') p++;
        if (p >= e) continue;
        if (block != (size_t)-1 && p - a > block) continue;
        block = (size_t)-1;
        if (d[p] == '#') {
            rc = lint_tmpl_meta_line(t, i);
            continue;
        }
        size_t v = yaml_value(d, a, e, &ind);
        if (v != (size_t)-1 && v < e && (d[v] == '|' || d[v] == '>')) block = ind;
    }
    return rc;
}

/* A CrewAI tasks file (YAML entries with description: and expected_output:):
 * a task's prompt is its description, then its expected output, and its
 * {name} fields are the crew's kickoff inputs, filled per run; the ones no
 * name classes are per call, as in a LangChain prompt's input_variables. */
int lint_tmpl_crewai_tasks(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!lint_name_ends_with(rel, k_yaml)) return UTIL_OK;
    int desc = 0, expected = 0;
    for (size_t i = 0; i < t->n_lines && !(desc && expected); i++) {
        desc |= indented_key(t, i, "description");
        expected |= indented_key(t, i, "expected_output");
    }
    if (!desc || !expected) return UTIL_OK;
    int rc = yaml_comments(t);
    const char *d = t->data;
    for (size_t i = 0; i < t->len && !rc; i++) {
        if (t->flags[lint_text_line_of(t, i)] & LINT_LF_FRONTMATTER) continue; /* a comment */
        if (d[i] != '{' || (i + 1 < t->len && d[i + 1] == '{') || (i > 0 && d[i - 1] == '{')) continue;
        size_t a = i + 1, b = a;
        while (b < t->len && lint_tmpl_is_ident(d[b])) b++;
        if (b >= t->len || d[b] != '}' || b == a || (b + 1 < t->len && d[b + 1] == '}')) continue;
        int sub = 0, known = 0;
        if (lint_detect_name_info(s->d, s->cfg, d + a, b - a, &sub, &known) == LINT_VC_NONE && !known) {
            lint_span sp = {i, b + 1, LINT_K_PLACEHOLDER, LINT_VC_TURN, 0, NULL, 0, 0};
            if (lint_spanv_push(s->spans, &sp)) return UTIL_ENOMEM;
        }
        i = b;
    }
    return rc;
}

/* --- prompt configs (YAML holding prompts among their settings) ----------------------- */

/* .yaml, .yml, and lm-evaluation-harness's included task templates
 * (_default_template_yaml), YAML without the dot. */
static int yaml_name(const char *rel) {
    static const char *const k_yaml_task[] = {".yaml", ".yml", "_yaml", NULL};
    return lint_name_ends_with(rel, k_yaml_task);
}

/* Whether the YAML line [a, e) is a key of an lm-evaluation-harness task
 * whose template renders a dataset document: 1 for doc_to_text, the
 * sample's prompt, where every field is that sample's; 2 for the other
 * doc_to_* keys (doc_to_target, doc_to_choice), the answers scored after
 * the prompt, not prompt text. */
static int doc_key(const char *d, size_t a, size_t e) {
    while (a < e && d[a] == ' ') a++;
    if (e - a <= 7 || memcmp(d + a, "doc_to_", 7) != 0) return 0;
    return e - a > 12 && !memcmp(d + a + 7, "text:", 5) ? 1 : 2;
}

/* The {{ }} fields of [a, b) as spans of the class cls gives their inside
 * (LINT_VC_NONE: no span). */
static int curly_spans(scan *s, size_t a, size_t b, int (*cls)(const scan *, size_t, size_t, int *)) {
    const char *d = s->t->data;
    for (size_t i = a; i + 1 < b; i++) {
        if (d[i] != '{' || d[i + 1] != '{') continue;
        const char *c = memmem(d + i + 2, b - i - 2, "}}", 2);
        if (!c) break;
        size_t e = (size_t)(c - d) + 2;
        int subday = 0, vc = cls(s, i + 2, e - 2, &subday);
        lint_span sp = {i, e, LINT_K_PLACEHOLDER, vc, subday, NULL, 0, 0};
        if (vc != LINT_VC_NONE && lint_spanv_push(s->spans, &sp)) return UTIL_ENOMEM;
        i = e - 1;
    }
    return UTIL_OK;
}

/* A dataset document's field [a, b) is per sample (per turn) when it names one. */
static int doc_field_class(const scan *s, size_t a, size_t b, int *subday) {
    (void)subday;
    for (size_t k = a; k < b; k++)
        if (isalpha((unsigned char)s->t->data[k]) || s->t->data[k] == '_') return LINT_VC_TURN;
    return LINT_VC_NONE;
}

/* The {{ }} fields of [a, b) as per-sample values (a dataset document's). */
static int doc_fields(scan *s, size_t a, size_t b) { return curly_spans(s, a, b, doc_field_class); }

/* Whitespace-separated words in [a, b). */
static int yaml_words(const char *d, size_t a, size_t b) {
    int n = 0, in = 0;
    for (size_t i = a; i < b; i++) {
        int w = !isspace((unsigned char)d[i]);
        n += w && !in;
        in = w;
    }
    return n;
}

/* Whether [a, b) holds a {field} set off as a slot of its own: after a
 * caption's ':' or a tag's '>' (emphasis, spaces and quotes between), a \n
 * escape or the string's start, and before the string's end, a '<' or an
 * escape ("Question:\n{question}", "<context>{context}</context>",
 * "**Question:** {question}"). Not "{i}. {output}" nor a path's "/users/{id}". */
static int slot_field(const char *d, size_t a, size_t b) {
    for (size_t i = a; i + 2 < b; i++) {
        if (d[i] != '{' || d[i + 1] == '{') continue;
        size_t k = i + 1, j = i;
        while (k < b && lint_tmpl_is_ident(d[k])) k++;
        if (k == i + 1 || k >= b || d[k] != '}') continue;
        while (j > a && !(j - a >= 2 && d[j - 2] == '\\' && d[j - 1] == 'n') &&
               ((d[j - 1] && strchr(" *_\"'`", d[j - 1])) || (d[j - 1] == '\\' && d[j] == '"')))
            j--; /* spaces, emphasis, quotes (\" too) */
        if (!(j == a || d[j - 1] == ':' || d[j - 1] == '>' ||
              (j - a >= 2 && d[j - 2] == '\\' && d[j - 1] == 'n')))
            continue;
        for (k++; k < b && d[k] && strchr(" *_\"'`", d[k]);) k++;
        if (k == b || d[k] == '<' || d[k] == '\\') return 1;
    }
    return 0;
}

/* Whether the quoted string value opened at d[q] and closed at d[close] (or
 * cut at the line's end) is prompt text, in a YAML or a JSON config alike: a
 * sentence (four or more words), a template tag, one {field} or, in JSON (a
 * message list's content), a {field} in a slot of its own (slot_field); not
 * "0123" or "{i}. {output}", nor a YAML few-shot "Problem:\n{problem}" format. */
int lint_tmpl_prompt_string(const char *d, size_t q, size_t close, int json) {
    size_t w = yaml_words(d, q + 1, close);
    return w >= 4 || (close - q > 2 && memmem(d + q + 1, close - q - 1, "{{", 2)) ||
           (w == 1 && d[q + 1] == '{' && d[close - 1] == '}') || (json && slot_field(d, q + 1, close));
}

/* The closing quote q in [a, e) ('' is a quote inside '...', \" inside
 * "..."), or (size_t)-1. */
static size_t yaml_close(const char *d, size_t a, size_t e, char q) {
    for (size_t k = a; k < e; k++) {
        if (q == '"' && d[k] == '\\')
            k++;
        else if (d[k] == q && q == '\'' && k + 1 < e && d[k + 1] == '\'')
            k++;
        else if (d[k] == q)
            return k;
    }
    return (size_t)-1;
}

/* The value of a YAML line: after list dashes and a "key:" (plain or
 * quoted); *indent: where the line's key or item starts. Returns the value's
 * offset (the line's end when there is none), or (size_t)-1 when the line
 * has no key and no dash (a continuation line). */
static size_t yaml_value(const char *d, size_t a, size_t e, size_t *indent) {
    size_t p = a;
    while (p < e && d[p] == ' ') p++;
    *indent = p - a;
    int item = 0;
    while (p + 1 < e && d[p] == '-' && d[p + 1] == ' ') { /* "- " list items, nested ones too */
        item = 1;
        for (p += 2; p < e && d[p] == ' ';) p++;
    }
    if (p >= e && item) return e;
    size_t k = p;
    if (k < e && (d[k] == '"' || d[k] == '\'')) { /* a quoted key */
        char q = d[k];
        const char *c = memchr(d + k + 1, q, e - k - 1);
        if (c && c + 1 < d + e && c[1] == ':') k = (size_t)(c - d) + 1;
    } else {
        while (k < e &&
               (lint_tmpl_is_ident(d[k]) || d[k] == '-' || d[k] == '.' || d[k] == '$' || d[k] == ' '))
            k++;
    }
    if (k < e && d[k] == ':' && k > p && (k + 1 >= e || d[k + 1] == ' ')) {
        for (k++; k < e && d[k] == ' ';) k++;
        return k;
    }
    return item ? p : (size_t)-1;
}

/* The value at v of a YAML line that ends at e, after its node properties:
 * an anchor (&name) and a tag (!!str, !custom) stand before the value they
 * name or type, so "prompt: &prompt |-" opens a block scalar like
 * "prompt: |-" does. Returns e when only properties stand there. */
static size_t yaml_properties(const char *d, size_t v, size_t e) {
    while (v + 1 < e && (d[v] == '&' || d[v] == '!') && !isspace((unsigned char)d[v + 1])) {
        while (v < e && d[v] != ' ') v++;
        while (v < e && d[v] == ' ') v++;
    }
    return v;
}

/* The key of the YAML line [a, e), after its indentation and list dashes:
 * *ks..*ke (a plain key of identifier characters, '-' and '.'); 0 when the
 * line has no such key. */
static int yaml_key(const char *d, size_t a, size_t e, size_t *ks, size_t *ke) {
    size_t p = a;
    while (p < e && d[p] == ' ') p++;
    while (p + 1 < e && d[p] == '-' && d[p + 1] == ' ')
        for (p += 2; p < e && d[p] == ' ';) p++;
    size_t k = p;
    while (k < e && (lint_tmpl_is_ident(d[k]) || d[k] == '-' || d[k] == '.')) k++;
    if (k == p || k >= e || d[k] != ':') return 0;
    *ks = p, *ke = k;
    return 1;
}

/* Whether the key [a, b) has a word (split at '_', '-', '.' and a lower to
 * upper case step: llm_model_id, userPrompt) in list w; last: only its
 * last word. */
static int key_word_in(const char *d, size_t a, size_t b, const char *const *w, int last) {
    for (size_t i = a; i < b;) {
        size_t j = i + 1;
        while (j < b && d[j] != '_' && d[j] != '-' && d[j] != '.' &&
               !(isupper((unsigned char)d[j]) && islower((unsigned char)d[j - 1])))
            j++;
        if (!last || j >= b)
            for (size_t k = 0; w[k]; k++)
                if (strlen(w[k]) == j - i && !strncasecmp(d + i, w[k], j - i)) return 1;
        i = j;
        while (i < b && (d[i] == '_' || d[i] == '-' || d[i] == '.')) i++;
    }
    return 0;
}

/* Keys whose one-line value names a thing rather than saying something to
 * the model: ids, models, deployments, endpoints and paths
 * (PromptWizard's "emb_model_id: text embedding ada 002 [vellm-openai2]",
 * "llm_model_id: gpt 35 Turbo [...]"): settings even when the value has
 * four words, and so are a type's (request_type: rag query). By the key's
 * last word. */
static const char *const k_setting_word[] = {"id",         "ids",      "uuid",       "model", "engine",
                                             "deployment", "endpoint", "url",        "uri",   "path",
                                             "dir",        "host",     "checkpoint", "type",  NULL};

static int setting_key(const char *d, size_t a, size_t e) {
    size_t ks, ke;
    return yaml_key(d, a, e, &ks, &ke) && key_word_in(d, ks, ke, k_setting_word, 1);
}

/* Top-level keys that describe a prompt-config file itself (PromptHub's
 * description, tags and meta; a Semantic Kernel function's description; a
 * promptfoo suite's description): documentation of the file, never sent.
 * A fixed list, not a config option: docs/promptlint.md ("Other YAML
 * files") names every key, so a key added here is added there too. */
static const char *const k_yaml_meta[] = {"description", "tags",    "meta",    "metadata", "version",
                                          "author",      "authors", "license", "labels",   NULL};

/* Whether the YAML line [a, e) is a top-level key of k_yaml_meta. */
static int yaml_meta_key(const char *d, size_t a, size_t e) {
    for (size_t i = 0; k_yaml_meta[i]; i++) {
        size_t kl = strlen(k_yaml_meta[i]);
        if (e - a > kl && !memcmp(d + a, k_yaml_meta[i], kl) && d[a + kl] == ':') return 1;
    }
    return 0;
}

/* Whether the YAML line [a, e) is the top-level key "parameters:" with no
 * value on its line. */
static int params_key(const char *d, size_t a, size_t e) {
    if (e - a < 11 || memcmp(d + a, "parameters:", 11) != 0) return 0;
    for (size_t k = a + 11; k < e && d[k] != '#'; k++)
        if (d[k] != ' ') return 0;
    return 1;
}

/* A recipe's declared parameters (goose: a top-level "parameters:" list
 * whose items open with "- key: name", beside input_type and requirement):
 * each is filled in when the recipe is run, so its {{ name }} fields are
 * per-call input, and the list itself (descriptions, defaults) is the
 * recipe's settings. Adds the names to the scan's inputs; returns UTIL_OK,
 * or UTIL_ENOMEM; *found: whether the file declares such a list. */
static int recipe_params(scan *s, int *found) {
    const lint_text *t = s->t;
    const char *d = t->data;
    *found = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        if (!params_key(d, t->line_start[i], lint_text_line_end(t, i))) continue;
        for (size_t k = i + 1; k < t->n_lines; k++) {
            size_t a = t->line_start[k], e = lint_text_line_end(t, k), p = a;
            while (p < e && d[p] == ' ') p++;
            if (p >= e || d[p] == '#') continue;
            if (p == a && d[p] != '-') break; /* the next top-level key */
            if (e - p < 7 || memcmp(d + p, "- key:", 6) != 0) {
                if (!*found) break; /* not a list of "- key:" items */
                continue;
            }
            size_t q = p + 6, r;
            while (q < e && (d[q] == ' ' || d[q] == '"' || d[q] == '\'')) q++;
            for (r = q; r < e && lint_tmpl_is_ident(d[r]);) r++;
            if (r == q || isdigit((unsigned char)d[q])) continue;
            *found = 1;
            if (lint_tmpl_add_input(s, d + q, r - q)) return UTIL_ENOMEM;
        }
    }
    return UTIL_OK;
}

/* Whether the YAML key before v on a line (from k, after list dashes)
 * names a shell command a tool runs (command, cmd, script, run): its value
 * is executed with the tool call's arguments, never sent as prompt text. */
static int script_key(const char *d, size_t k, size_t v) {
    while (k + 1 < v && d[k] == '-' && d[k + 1] == ' ')
        for (k += 2; k < v && d[k] == ' ';) k++;
    size_t c = k;
    while (c < v && d[c] != ':') c++;
    static const char *const k_cmds[] = {"command", "cmd", "script", "run", NULL};
    for (const char *const *x = k_cmds; *x; x++)
        if (c - k == strlen(*x) && !memcmp(d + k, *x, c - k)) return 1;
    return 0;
}

/* A YAML file of prompts among settings (a grader's "prompt: |-" beside its
 * choice_strings, a guardrail's "content: |" under "- task:", a workflow
 * export's "text:" beside node ids and model names): its prompt text is its
 * block scalars, its multi-line quoted strings, its one-line quoted strings
 * of four or more words, a template tag or a lone {field}, and its plain
 * values of four or more words, except one-line values under a key that
 * names an id, a model, an endpoint or a path (k_setting_word:
 * "llm_model_id: gpt 35 Turbo [east]"); the other lines (keys, ids,
 * numbers, names, short flags) are configuration, not prompt text, neither
 * volatile nor stable content, and so is all under a top-level key that
 * documents the file (k_yaml_meta: "description:" however long, "tags:",
 * "meta:"). LangChain prompts and CrewAI tasks are read by their own rules
 * above. */
int lint_tmpl_yaml_config(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!yaml_name(rel)) return UTIL_OK;
    for (size_t i = 0; i < t->n_lines; i++)
        if (key_line(t, i, "input_variables", 0) || indented_key(t, i, "expected_output")) return UTIL_OK;
    const char *d = t->data;
    int recipe = 0;
    int rc = recipe_params(s, &recipe);
    size_t block = (size_t)-1, plain = (size_t)-1; /* the indent of the key a block or plain value is under */
    char quote = 0;
    int doc = 0;    /* the value being read is a doc_to_* template */
    int meta = 0;   /* the lines being read are under a k_yaml_meta key */
    int script = 0; /* the block being read is a command's script */
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ind = 0, p = a;
        while (p < e && d[p] == ' ') p++;
        int blank = p >= e;
        /* a top-level key starts or ends a k_yaml_meta value ("- x" items may stand at column 0) */
        if (!quote && !blank && p == a && !(meta && e - a > 1 && d[a] == '-' && d[a + 1] == ' '))
            meta = yaml_meta_key(d, a, e) || (recipe && params_key(d, a, e));
        if (!quote && meta) {
            block = plain = (size_t)-1;
            rc = lint_tmpl_meta_line(t, i);
            continue;
        }
        if (quote) { /* inside a quoted value: text up to its closing quote */
            size_t close = yaml_close(d, p, e, quote);
            if (doc == 1) rc = doc_fields(s, a, close != (size_t)-1 ? close : e);
            if (!rc && close != (size_t)-1) {
                rc = lint_text_add_quiet(t, close, e);
                quote = 0;
            }
            continue;
        }
        if (block != (size_t)-1) {
            if (blank || p - a > block) { /* the block's text */
                if (doc == 1) rc = doc_fields(s, a, e);
                if (!rc && script) rc = lint_tmpl_meta_line(t, i); /* a shell script, not prompt text */
                continue;
            }
            script = 0;
            block = (size_t)-1;
        }
        if (plain != (size_t)-1) {
            size_t dummy;
            if (!blank && p - a > plain && yaml_value(d, a, e, &dummy) == (size_t)-1) continue;
            plain = (size_t)-1;
        }
        if (blank) continue;
        size_t v = yaml_value(d, a, e, &ind);
        int text = 0;
        doc = v != (size_t)-1 ? doc_key(d, a, e) : 0;
        if (v != (size_t)-1) v = yaml_properties(d, v, e);
        if (v != (size_t)-1 && v < e && d[v] != '#' && (d[v] == '|' || d[v] == '>') &&
            script_key(d, a + ind, v)) {
            block = ind, script = 1; /* a command's script: settings, line by line */
            rc = lint_tmpl_meta_line(t, i);
            continue;
        }
        if (v != (size_t)-1 && v < e && d[v] != '#' && (setting_key(d, a, e) || script_key(d, a + ind, v))) {
            rc = lint_tmpl_meta_line(t, i); /* an identifier's or a command's one-line value: a setting */
            continue;
        }
        if (v != (size_t)-1 && v < e && d[v] != '#') {
            if (d[v] == '|' || d[v] == '>') {
                block = ind;
            } else if (d[v] == '"' || d[v] == '\'') {
                char q = d[v];
                size_t close = yaml_close(d, v + 1, e, q);
                if (close == (size_t)-1) {
                    text = 1, quote = q;
                } else {
                    text = lint_tmpl_prompt_string(d, v, close, 0) && !setting_key(d, a, e);
                    if (text) rc = lint_text_add_quiet(t, close, e);
                }
                v++;
            } else if (d[v] != '[' && d[v] != '{' && d[v] != '&' && d[v] != '*' && yaml_words(d, v, e) >= 4 &&
                       !setting_key(d, a, e)) {
                text = 1, plain = ind;
            }
        }
        if (rc) break;
        if (doc == 2) text = 0, block = plain = (size_t)-1, quote = 0; /* answers, not prompt text */
        if (text) {
            rc = lint_text_add_quiet(t, a, v);
            if (!rc && doc == 1) rc = doc_fields(s, v, e);
        } else {
            rc = lint_tmpl_meta_line(t, i);
        }
    }
    return rc;
}

/* --- prompt configs (JSON holding prompts among their settings) ----------------------- */

/* The closing quote of the JSON string opened at d[i], before e, or (size_t)-1. */
static size_t json_close(const char *d, size_t i, size_t e) {
    for (size_t k = i + 1; k < e; k++)
        if (d[k] == '\\')
            k++;
        else if (d[k] == '"')
            return k;
    return (size_t)-1;
}

/* Whether the JSON key d[a, b) (no quotes) names documentation of the file
 * or of a field (k_yaml_meta: "description", "version", "author" ...). */
static int json_meta_key(const char *d, size_t a, size_t b) {
    for (size_t i = 0; k_yaml_meta[i]; i++)
        if (strlen(k_yaml_meta[i]) == b - a && !memcmp(d + a, k_yaml_meta[i], b - a)) return 1;
    return 0;
}

/* Line [a, e) holds minified JSON (several "key":"value" pairs, as a file
 * saved on one line): its prompt strings are text, all else (keys,
 * punctuation, settings, documentation values) is quiet; *text: whether
 * any string was text. */
static int json_pairs(lint_text *t, size_t a, size_t e, int *text) {
    const char *d = t->data;
    size_t from = a; /* quiet from here up to the next text string */
    int rc = UTIL_OK, meta = 0;
    *text = 0;
    for (size_t k = a; k < e && !rc; k++) {
        if (d[k] != '"') continue;
        size_t close = json_close(d, k, e);
        if (close == (size_t)-1) break;
        size_t n = close + 1;
        while (n < e && d[n] == ' ') n++;
        if (n < e && d[n] == ':') { /* a key */
            meta = json_meta_key(d, k + 1, close);
        } else if (!meta && lint_tmpl_prompt_string(d, k, close, 1)) {
            rc = lint_text_add_quiet(t, from, k + 1);
            from = close;
            *text = 1;
        }
        k = close;
    }
    if (!rc && *text) rc = lint_text_add_quiet(t, from, e);
    return rc;
}

/* A JSON file of prompts among settings (a Flowise node's "template" beside
 * its anchors and ids, a chat preset's "content" beside its numbers): like
 * YAML above, its prompt text is its string values of four or more words, a
 * template tag or a lone {field}; keys, quotes, numbers, ids, booleans and
 * short names are settings, neither volatile nor stable content, and so are
 * the values of keys that document the file or a field at any depth
 * ("description", "version", "author": k_yaml_meta; PromptingTools'
 * "Placeholders: {{question}}", a parameter's description). Read line by
 * line (an excerpt need not be whole JSON); a line of minified JSON (several
 * pairs, a file saved on one line) is read pair by pair. LangChain prompts
 * and n8n workflows have their own readers. A JSON-lines file (.jsonl,
 * .ndjson: FastChat's judge prompts, one record a line) is read the same,
 * and each record is a prompt of its own (lint_text_own_prompt): one
 * record's last field does not precede the next record's text. */
int lint_tmpl_json_config(scan *s, const char *rel) {
    lint_text *t = s->t;
    int lines = lint_name_ends_with(rel, k_jsonl);
    if ((!lines && !lint_name_ends_with(rel, k_json)) ||
        memmem(t->data, t->len, "@n8n/n8n-nodes-langchain.", 25))
        return UTIL_OK;
    for (size_t i = 0; i < t->n_lines; i++)
        if (key_line(t, i, "input_variables", 1)) return UTIL_OK;
    const char *d = t->data;
    int rc = UTIL_OK;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), v = a, close;
        int meta = 0; /* the value documents the file or a field ("description": ...) */
        while (v < e && (d[v] == ' ' || d[v] == '\t')) v++;
        if (v < e && d[v] == '"' && (close = json_close(d, v, e)) != (size_t)-1) { /* a key, or an item */
            size_t k = close + 1;
            while (k < e && d[k] == ' ') k++;
            if (k < e && d[k] == ':') {
                meta = json_meta_key(d, v + 1, close);
                for (v = k + 1; v < e && d[v] == ' ';) v++;
            }
        }
        int text = 0;
        if (v < e && (d[v] == '[' || d[v] == '{') && memmem(d + v, e - v, "\":", 2)) {
            rc = json_pairs(t, v, e, &text);
        } else if (v < e && d[v] == '"' && !meta) {
            close = json_close(d, v, e);
            if (close == (size_t)-1) close = e;
            text = lint_tmpl_prompt_string(d, v, close, 1);
            if (text) rc = lint_text_add_quiet(t, a, v + 1);
            if (text && !rc) rc = lint_text_add_quiet(t, close, e);
        }
        if (!text && !rc) {
            rc = lint_tmpl_meta_line(t, i);
        }
        if (lines && !rc && v < e) rc = lint_text_own_prompt(t, i, i + 1);
    }
    return rc;
}

/* --- several prompts in one file (LocalAI's template: map, an agent's commands: map) ---- */

enum { MAP_NONE, MAP_TEMPLATES, MAP_COMMANDS, MAP_PROMPTS };


/* A key's name [p, c) in lower case without '_', '-', ' ' and quotes
 * (judge_prompts, qaPrompts: judgeprompts, qaprompts) into w[cap]. */
static size_t key_word(const char *p, const char *c, char *w, size_t cap) {
    size_t m = 0;
    for (; p < c && m + 1 < cap; p++)
        if (*p != '_' && *p != '-' && *p != ' ' && *p != '"' && *p != '\'')
            w[m++] = (char)tolower((unsigned char)*p);
    w[m] = 0;
    return m;
}

/* Whether line i is `key:` alone (a mapping opens under it) with key
 * template or templates (MAP_TEMPLATES), commands (MAP_COMMANDS), or a
 * name ending in prompts or prompt_templates (MAP_PROMPTS: prompts,
 * judge_prompts, qaPrompts); *indent: its indentation. */
static int template_map_line(const lint_text *t, size_t i, size_t *indent) {
    const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
    const char *q = p;
    while (q < e && *q == ' ') q++;
    *indent = (size_t)(q - p);
    while (e > q && (e[-1] == ' ' || e[-1] == '\r')) e--;
    if ((e - q == 9 && !memcmp(q, "template:", 9)) || (e - q == 10 && !memcmp(q, "templates:", 10)))
        return MAP_TEMPLATES;
    if (e - q == 9 && !memcmp(q, "commands:", 9)) return MAP_COMMANDS;
    if (e - q < 2 || e[-1] != ':' || *q == '-' || *q == '#') return MAP_NONE;
    char w[64];
    size_t m = key_word(q, e - 1, w, sizeof w);
    return (m >= 7 && !strcmp(w + m - 7, "prompts")) || (m >= 15 && !strcmp(w + m - 15, "prompttemplates"))
               ? MAP_PROMPTS
               : MAP_NONE;
}

/* Whether line i is a key at indentation ind named for one role of a
 * request (system:, user:, system_prompt:, human_template:): such keys
 * under prompts: are the parts of one request, not prompts of their own. */
static int role_key_line(const lint_text *t, size_t i, size_t ind) {
    const char *d = t->data, *q = d + t->line_start[i] + ind, *e = d + lint_text_line_end(t, i);
    const char *c = memchr(q, ':', (size_t)(e - q));
    if (!c) return 0;
    char w[64];
    key_word(q, c, w, sizeof w);
    static const char *const k_roles[] = {"system", "user", "human", "assistant", "ai", "developer", NULL};
    for (const char *const *r = k_roles; *r; r++)
        if (!strcmp(w, *r)) return 1;
    return lint_tmpl_library_key(q, c) == 2;
}

/* Whether line i is a key whose value is a block scalar (`chat: |`,
 * `chat_message: |-`) at indentation ind. */
static int block_key_line(const lint_text *t, size_t i, size_t ind) {
    const char *d = t->data;
    size_t a = t->line_start[i], e = lint_text_line_end(t, i), in;
    size_t v = yaml_value(d, a, e, &in);
    return v != (size_t)-1 && v < e && in == ind && (d[v] == '|' || d[v] == '>') && d[a + in] != '-';
}

/* Whether line i is a key at indentation ind (not a "- " item): a named
 * command, whose value is its prompt (`review: "Review the diff"`, a block
 * scalar) or a mapping that holds it (`review:` over `instruction: |`). */
static int any_key_line(const lint_text *t, size_t i, size_t ind) {
    const char *d = t->data;
    size_t a = t->line_start[i], e = lint_text_line_end(t, i), in;
    size_t v = yaml_value(d, a, e, &in);
    return v != (size_t)-1 && in == ind && d[a + in] != '-' && d[a + in] != '#';
}

/* A YAML mapping named template or templates whose keys hold two or more
 * block scalars (LocalAI's chat, chat_message, completion, function, edit:
 * one of them is rendered per request, chat_message once per message):
 * each value is a template of its own, so each one, and what follows the
 * mapping, is a prompt judged alone (lint_text_own_prompt: file order,
 * one prompt id per template in t->order); a per-message one
 * (a key ending in message) renders the conversation, like the body of a
 * messages loop, so none of its text is stable content. Nested in a block
 * scalar (LocalAI's config_file: |) too: this reads lines, not YAML.
 * An agent's commands: mapping (docker-agent's slash commands) with two or
 * more keys is read the same way: each command's value, its prompt string or
 * the mapping that holds its instruction, is a prompt sent alone when the
 * user runs that command. So is a mapping named for prompts (prompts:,
 * judge_prompts:, prompt_templates: over synthetic-data-kit's summary: and
 * qa_generation:), unless its keys are one request's role parts (system:
 * and user:, system_prompt:), which are sent together. */
int lint_tmpl_template_map(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!yaml_name(rel)) return UTIL_OK;
    int rc = UTIL_OK;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t ind, cind = (size_t)-1, k = i + 1, n = 0;
        int map = template_map_line(t, i, &ind), roles = 0;
        if (map == MAP_NONE) continue;
        /* a template is a block scalar; a command or a named prompt is any
         * key's value */
        int (*entry)(const lint_text *, size_t, size_t) = map == MAP_TEMPLATES ? block_key_line
                                                                               : any_key_line;
        for (; k < t->n_lines; k++) {
            size_t a = t->line_start[k], e = lint_text_line_end(t, k), p = a;
            while (p < e && t->data[p] == ' ') p++;
            if (p >= e) continue;
            if (p - a <= ind) break;
            if (cind == (size_t)-1) cind = p - a;
            int one = entry(t, k, cind);
            n += one;
            roles += one && map == MAP_PROMPTS && role_key_line(t, k, cind);
        }
        if (n < 2 || roles) continue;
        int per_message = 0;
        size_t from = (size_t)-1; /* the template being read starts here */
        for (size_t j = i + 1; j < k && !rc; j++) {
            if (entry(t, j, cind)) {
                if (from != (size_t)-1) rc = lint_text_own_prompt(t, from, j);
                from = j;
                const char *q = t->data + t->line_start[j] + cind, *c = strchr(q, ':');
                per_message = map == MAP_TEMPLATES && c && c - q >= 7 && !memcmp(c - 7, "message", 7);
            } else if (per_message) { /* the conversation itself, as a messages loop's body */
                t->flags[j] |= LINT_LF_PREFILL;
            }
        }
        if (!rc) rc = lint_text_own_prompt(t, from, k);
        if (!rc) rc = lint_text_own_prompt(t, k, t->n_lines); /* what follows the mapping */
        i = k - 1;
    }
    return rc;
}

/* How the top-level key [p, c) names its value: 0 not as a prompt; 1 as a
 * whole prompt (a name holding "prompt" or ending in "template", case, '_'
 * and '-' aside: final_prompt, evalPrompt, meta_sample_template); 2 as one
 * role's part of a request (the same after a role word: system_prompt,
 * user_prompt, human_template). */
int lint_tmpl_library_key(const char *p, const char *c) {
    char w[64];
    size_t m = key_word(p, c, w, sizeof w);
    if (!strstr(w, "prompt") && !(m >= 8 && !strcmp(w + m - 8, "template"))) return 0;
    static const char *const k_roles[] = {"system", "user", "human", "assistant", "ai", "developer", NULL};
    for (const char *const *r = k_roles; *r; r++)
        if (!strncmp(w, *r, strlen(*r)) && m > strlen(*r)) return 2;
    return 1;
}

/* The indent of line i when it opens a list item ("- "), else (size_t)-1. */
static size_t item_indent(const lint_text *t, size_t i) {
    const char *d = t->data;
    size_t a = t->line_start[i], e = lint_text_line_end(t, i), p = a;
    while (p < e && d[p] == ' ') p++;
    return p + 1 < e && d[p] == '-' && d[p + 1] == ' ' ? p - a : (size_t)-1;
}

/* Where the list item opened at line i (indent ind) ends: the next line of
 * text at its indent or less. */
static size_t item_end(const lint_text *t, size_t i, size_t ind) {
    for (size_t k = i + 1; k < t->n_lines; k++) {
        size_t a = t->line_start[k], e = lint_text_line_end(t, k), p = a;
        while (p < e && t->data[p] == ' ') p++;
        if (p < e && p - a <= ind) return k;
    }
    return t->n_lines;
}

/* Whether lines [a, b) hold a key named as a prompt (library_key). */
static int holds_prompt_key(const lint_text *t, size_t a, size_t b) {
    const char *d = t->data;
    for (size_t i = a; i < b; i++) {
        size_t s = t->line_start[i], e = lint_text_line_end(t, i), ind;
        size_t v = yaml_value(d, s, e, &ind);
        if (v == (size_t)-1) continue;
        size_t p = s + ind;
        while (p + 1 < e && d[p] == '-' && d[p + 1] == ' ')
            for (p += 2; p < e && d[p] == ' ';) p++;
        const char *c = memchr(d + p, ':', e - p);
        if (c && c < d + v && lint_tmpl_library_key(d + p, c)) return 1;
    }
    return 0;
}

/* A YAML list whose items each hold a prompt (two or more items with a key
 * named as a prompt at any depth: PromptWizard's "- name: CHAT-FIRST-MESSAGE"
 * entries with their prompt_template, a toolset's tools each with its
 * summarizing prompt:): each item is a prompt of its own, sent in its own
 * request (lint_text_own_prompt, file order). A message list (role: and
 * content:) names no prompt key and stays one request. */
static int library_items(scan *s) {
    lint_text *t = s->t;
    int rc = UTIL_OK;
    size_t walked[64] = {0}; /* per indent: where the run of items last walked ends */
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t ind = item_indent(t, i);
        if (ind == (size_t)-1) continue;
        /* a later sibling of a run already walked: walking it again from
         * each item made a long list quadratic */
        if (ind < 64 && i < walked[ind]) continue;
        /* the sibling items from line i on */
        size_t k = i, n = 0, end = i;
        while (k < t->n_lines && item_indent(t, k) == ind) {
            end = item_end(t, k, ind);
            n += holds_prompt_key(t, k, end);
            k = end;
        }
        if (ind < 64) walked[ind] = end;
        if (n >= 2)
            for (size_t j = i; j < end && !rc;) {
                size_t je = item_end(t, j, ind);
                rc = lint_text_own_prompt(t, j, je);
                j = je;
            }
        if (n < 2) continue; /* nested lists are looked at on their own lines */
        i = end - 1;
    }
    return rc;
}

/* The column where line i's text starts (its list dash, if any), or
 * (size_t)-1 for a blank or comment line. */
static size_t text_column(const lint_text *t, size_t i) {
    size_t a = t->line_start[i], e = lint_text_line_end(t, i), p = a;
    while (p < e && t->data[p] == ' ') p++;
    return p < e && t->data[p] != '#' ? p - a : (size_t)-1;
}

/* A prompt config that keeps a prompt as the block scalar of a key named as
 * a whole prompt inside a mapping (question: template: |, a view's prompt:
 * template: |, a mode's prompt_template: |): that mapping is one request, the
 * prompt and its sibling keys (a closing note sent with it, the lists its
 * fields are picked from); what the file holds outside it (a pipeline's step
 * descriptions, a UI's captions, the next view's prompt) is not sent after
 * it. Each such mapping is a prompt of its own (lint_text_own_prompt, file
 * order). A top-level prompt key's mapping is the whole file: left as it is. */
static int prompt_mappings(scan *s) {
    lint_text *t = s->t;
    const char *d = t->data;
    int rc = UTIL_OK;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ind;
        size_t v = yaml_value(d, a, e, &ind);
        if (v == (size_t)-1 || v >= e) continue;
        v = yaml_properties(d, v, e);
        if (v >= e || (d[v] != '|' && d[v] != '>')) continue;
        size_t p = a + ind;
        while (p + 1 < v && d[p] == '-' && d[p + 1] == ' ')
            for (p += 2; p < v && d[p] == ' ';) p++;
        const char *c = memchr(d + p, ':', v - p);
        size_t kc = p - a; /* the key's column: its siblings' */
        if (!c || kc == 0 || lint_tmpl_library_key(d + p, c) != 1) continue;
        /* the mapping's first line: the list item the key opens or stands
         * in ("- id: x" over "  template: |"), else the line after its
         * parent key */
        size_t from = i, k = i, col = (size_t)-1;
        while (kc == ind && k > 0 && ((col = text_column(t, --k)) == (size_t)-1 || col >= kc)) {}
        if (kc == ind && col != (size_t)-1 && col < kc) {
            size_t ik = item_indent(t, k), q = t->line_start[k] + col, qe = lint_text_line_end(t, k);
            while (ik != (size_t)-1 && q + 1 < qe && d[q] == '-' && d[q + 1] == ' ')
                for (q += 2; q < qe && d[q] == ' ';) q++;
            from = ik != (size_t)-1 && q - t->line_start[k] == kc ? k : k + 1;
        } else if (kc == ind) {
            continue; /* nothing above it at a lower column: no mapping to bound */
        }
        size_t end = i + 1; /* past its last line of text at the key's column or deeper */
        for (size_t j = i + 1; j < t->n_lines; j++) {
            size_t cj = text_column(t, j);
            if (cj == (size_t)-1) continue;
            if (cj < kc) break;
            end = j + 1;
        }
        rc = lint_text_own_prompt(t, from, end);
        i = end - 1;
    }
    return rc;
}

/* A YAML file that keeps several prompts under its top-level keys: two or
 * more keys named as whole prompts, not all of them one request's role
 * parts (PromptWizard's final_prompt, eval_prompt and
 * meta_sample_template beside system_prompt; not a system_prompt and
 * user_prompt pair, which one request sends together), or a CrewAI agents
 * or tasks file (entries with backstory: or expected_output:, one agent or
 * task each). Each top-level key's value is a prompt of its own
 * (lint_text_own_prompt, file order), so a field in one is not judged
 * against the fixed text of the next. */
int lint_tmpl_yaml_library(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!yaml_name(rel) || t->order) return UTIL_OK;
    const char *d = t->data;
    size_t whole = 0, roles = 0, keys = 0;
    int crew = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ind;
        crew |= indented_key(t, i, "backstory") || indented_key(t, i, "expected_output");
        if (a >= e || d[a] == ' ' || d[a] == '-' || d[a] == '#') continue;
        size_t v = yaml_value(d, a, e, &ind);
        if (v == (size_t)-1) continue;
        const char *c = memchr(d + a, ':', e - a);
        int k = c ? lint_tmpl_library_key(d + a, c) : 0;
        keys++;
        whole += k != 0;
        roles += k == 2;
    }
    int rc = UTIL_OK;
    if (keys < 2 || !(crew || (whole >= 2 && whole > roles))) {
        rc = library_items(s);
        return rc || t->order ? rc : prompt_mappings(s);
    }
    /* role parts (system_prompt beside user_prompt) stay the file's one
     * request, in file order; every other key is a prompt of its own */
    size_t from = (size_t)-1;
    int part = 0;
    for (size_t i = 0; i < t->n_lines && !rc; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ind;
        if (a >= e || d[a] == ' ' || d[a] == '-' || d[a] == '#' || yaml_value(d, a, e, &ind) == (size_t)-1)
            continue;
        if (from != (size_t)-1 && !part) rc = lint_text_own_prompt(t, from, i);
        const char *c = memchr(d + a, ':', e - a);
        part = c && lint_tmpl_library_key(d + a, c) == 2;
        from = i;
    }
    if (!rc && from != (size_t)-1 && !part) rc = lint_text_own_prompt(t, from, t->n_lines);
    return rc ? rc : library_items(s);
}

/* --- lists of alternatives (a randomizer's topics: and examples:) --------------- */

/* Whether line k is a list item ("- x") at indent ind or deeper whose value
 * is a scalar, not a mapping ("- name: x" is a record). */
static int scalar_item(const lint_text *t, size_t k, size_t ind) {
    const char *d = t->data;
    size_t a = t->line_start[k], e = lint_text_line_end(t, k), in;
    size_t it = item_indent(t, k);
    if (it == (size_t)-1 || it < ind) return 0;
    size_t v = yaml_value(d, a, e, &in);
    size_t p = a + it + 2;
    while (p < e && d[p] == ' ') p++;
    return v == p; /* no "key:" between the dash and the value */
}

/* How many items the flow list [v, e) holds ("[ a, "b, c", d ]"), commas in
 * quotes aside; 0 when it is no one-line flow list. */
static size_t flow_items(const char *d, size_t v, size_t e) {
    while (e > v && (d[e - 1] == ' ' || d[e - 1] == '\r')) e--;
    if (e - v < 2 || d[v] != '[' || d[e - 1] != ']') return 0;
    size_t n = 1;
    char q = 0;
    for (size_t i = v + 1; i + 1 < e; i++) {
        if (q) {
            q = d[i] == q ? 0 : q;
            continue;
        }
        if (d[i] == '"' || d[i] == '\'') q = d[i];
        n += d[i] == ',';
    }
    return n;
}

/* A YAML config that gives a field's alternatives as a list under the
 * field's plural (a question randomizer's topics: and examples: beside a
 * template with {{topic}} and {{example}}): the program picks one of them
 * per request, so the field changes per request whatever its name says
 * (an example is fixed text when the prompt always shows the same one).
 * Keeps the names of the keys that hold two or more scalar items, in a
 * block list or a one-line flow list, in s->picks (lint_tmpl_is_pick). */
static int pick_cmp(const void *x, const void *y) {
    return strcmp(((const pick_list *)x)->key, ((const pick_list *)y)->key);
}

int lint_tmpl_yaml_picks(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!yaml_name(rel)) return UTIL_OK;
    const char *d = t->data;
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t a = t->line_start[i], e = lint_text_line_end(t, i), ks, ke, ind;
        size_t v = yaml_value(d, a, e, &ind);
        if (v == (size_t)-1 || !yaml_key(d, a, e, &ks, &ke)) continue;
        size_t n = flow_items(d, v, e), k = i + 1;
        for (; v >= e && k < t->n_lines && scalar_item(t, k, ind); k++) n++;
        if (n < 2) continue;
        if (util_grow(&s->picks, &s->cap_picks, s->n_picks + 1, sizeof *s->picks)) return UTIL_ENOMEM;
        s->picks[s->n_picks] = (pick_list){strndup(d + ks, ke - ks), i + 1, k, 0};
        if (!s->picks[s->n_picks++].key) return UTIL_ENOMEM;
        i = k - 1;
    }
    /* by key, for lint_tmpl_is_pick's lookups */
    if (s->n_picks > 1) qsort(s->picks, s->n_picks, sizeof *s->picks, pick_cmp);
    return UTIL_OK;
}

/* Marks the lists keyed w (sorted s->picks) used; whether there is one. */
static int pick_key(scan *s, const char *w) {
    size_t lo = 0, hi = s->n_picks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->picks[mid].key, w) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->n_picks || strcmp(s->picks[lo].key, w)) return 0;
    /* the lists of one key are marked together, at the first lookup */
    if (s->picks[lo].used) return 1;
    for (size_t i = lo; i < s->n_picks && !strcmp(s->picks[i].key, w); i++) s->picks[i].used = 1;
    return 1;
}

int lint_tmpl_is_pick(scan *s, const char *p, size_t n) {
    char w[68];
    if (!n || n > 64) return 0;
    memcpy(w, p, n);
    int hit = 0;
    memcpy(w + n, "s", 2);
    hit |= pick_key(s, w); /* topic: topics */
    memcpy(w + n, "es", 3);
    hit |= pick_key(s, w); /* match: matches */
    if (n > 1 && p[n - 1] == 'y') {
        memcpy(w + n - 1, "ies", 4);
        hit |= pick_key(s, w); /* story: stories */
    }
    return hit;
}

int lint_tmpl_pick_lines(scan *s) {
    int rc = UTIL_OK;
    for (size_t i = 0; i < s->n_picks && !rc; i++)
        for (size_t l = s->picks[i].first; s->picks[i].used && l < s->picks[i].end && !rc; l++)
            if (!(s->t->flags[l] & LINT_LF_FRONTMATTER)) rc = lint_tmpl_meta_line(s->t, l);
    return rc;
}

/* --- n8n workflows (.json with @n8n/n8n-nodes-langchain nodes) ------------------ */

#define N8N_DEPTH 64

/* cJSON reads the structure (nodes, parameters, keys); it keeps no offsets,
 * so every string token of the file is listed once, in file order, and the
 * walk, which visits keys and strings in the same order, takes the next one. */

typedef struct n8n_value {
    size_t node; /* index into the node list */
    int system;  /* sent before the node's user text */
    size_t a, b; /* the string with its quotes */
} n8n_value;

/* A node object's address and its index in the node list. */
typedef struct n8n_node_ref {
    uintptr_t addr;
    size_t index;
} n8n_node_ref;

typedef struct n8n_walk {
    lint_range *str;             /* every string token, quotes included, in file order */
    size_t n_str, cap_str, next; /* next: the token the walk reads next */
    const cJSON **nodes;         /* the langchain node objects, in file order of their type */
    size_t n_nodes, cap_nodes;
    n8n_node_ref *by_addr; /* the nodes by address, each once (n8n_index_nodes) */
    size_t n_by_addr;
    n8n_value *vals;
    size_t n_vals, cap_vals;
    int pass, bad, oom; /* bad: the tokens and cJSON's strings do not pair up */
} n8n_walk;

/* Lists the string tokens of d[0, len) in w->str. This scanner only finds
 * where strings stand (a '"' outside a string opens one; '\' escapes the
 * next byte); cJSON says what they are. Returns 0 on an unclosed string. */
static int n8n_strings(n8n_walk *w, const char *d, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (d[i] != '"') continue;
        size_t j = json_close(d, i, len);
        if (j == (size_t)-1) return 0;
        if (util_grow(&w->str, &w->cap_str, w->n_str + 1, sizeof *w->str)) {
            w->oom = 1;
            return 0;
        }
        w->str[w->n_str++] = (lint_range){i, j + 1};
        i = j;
    }
    return 1;
}

/* The next string token: the one cJSON read as the key or string just visited. */
static lint_range n8n_take(n8n_walk *w) {
    if (w->next >= w->n_str) {
        w->bad = 1;
        return (lint_range){0, 0};
    }
    return w->str[w->next++];
}

static int n8n_key_is(const cJSON *it, const char *k) { return it->string && !strcmp(it->string, k); }

static int n8n_addr_cmp(const void *x, const void *y) {
    const n8n_node_ref *a = x, *b = y;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int n8n_ref_cmp(const void *x, const void *y) {
    const n8n_node_ref *a = x, *b = y;
    int c = n8n_addr_cmp(a, b);
    return c ? c : (a->index < b->index ? -1 : a->index > b->index);
}

/* Sorts the nodes pass 1 listed by address into w->by_addr, once, so that
 * pass 2 finds each container's node by a binary search, not a scan of the
 * list per container; an object listed twice (two "type" keys) keeps its
 * first index. Returns 0 on ENOMEM. */
static int n8n_index_nodes(n8n_walk *w) {
    if (!w->n_nodes) return 1;
    if (!(w->by_addr = malloc(w->n_nodes * sizeof *w->by_addr))) return 0;
    for (size_t i = 0; i < w->n_nodes; i++)
        w->by_addr[i] = (n8n_node_ref){(uintptr_t)(const void *)w->nodes[i], i};
    qsort(w->by_addr, w->n_nodes, sizeof *w->by_addr, n8n_ref_cmp);
    size_t n = 0;
    for (size_t i = 0; i < w->n_nodes; i++)
        if (!n || w->by_addr[i].addr != w->by_addr[n - 1].addr) w->by_addr[n++] = w->by_addr[i];
    w->n_by_addr = n;
    return 1;
}

/* The index of node object o in w->nodes (its first), or -1. */
static long n8n_node_of(const n8n_walk *w, const cJSON *o) {
    if (!w->n_by_addr) return -1;
    n8n_node_ref key = {(uintptr_t)(const void *)o, 0};
    const n8n_node_ref *r = bsearch(&key, w->by_addr, w->n_by_addr, sizeof key, n8n_addr_cmp);
    return r ? (long)r->index : -1;
}

/* A string member it under a node's parameters: a prompt value when its
 * key says so (a system message, the user text, a chain's messages). */
static void n8n_value_at(n8n_walk *w, const cJSON *it, long node, int messages, lint_range r) {
    static const char *const k_system[] = {"systemMessage", "systemPromptTemplate", NULL};
    static const char *const k_user[] = {"text", "prompt", "inputText", "humanMessage", NULL};
    int system = -1;
    messages |= n8n_key_is(it, "messageValues");
    for (int i = 0; k_system[i] && system < 0; i++)
        if (n8n_key_is(it, k_system[i])) system = 1;
    for (int i = 0; k_user[i] && system < 0; i++)
        if (n8n_key_is(it, k_user[i]) && !messages) system = 0;
    if (system < 0 && messages && n8n_key_is(it, "message")) system = 1; /* a chain's messages come first */
    if (system < 0) return;
    if (util_grow(&w->vals, &w->cap_vals, w->n_vals + 1, sizeof *w->vals)) {
        w->oom = 1;
        return;
    }
    w->vals[w->n_vals++] = (n8n_value){(size_t)node, system, r.start, r.end};
}

/* Visits the members of container c in file order: pass 1 lists the
 * langchain nodes by their type, pass 2 the prompt values of their
 * parameters. node: the innermost node c is in (-1: none); params: c is that
 * node's parameters or inside them; messages: a messageValues key on the way. */
static void n8n_visit(n8n_walk *w, const cJSON *c, long node, int params, int messages, int depth) {
    static const char k_type[] = "@n8n/n8n-nodes-langchain.";
    if (depth > N8N_DEPTH) {
        w->bad = 1;
        return;
    }
    int obj = cJSON_IsObject(c);
    for (const cJSON *it = c->child; it && !w->bad && !w->oom; it = it->next) {
        if (obj) n8n_take(w); /* the key */
        if (cJSON_IsString(it)) {
            lint_range r = n8n_take(w);
            if (!obj) continue;
            if (w->pass == 1 && n8n_key_is(it, "type") && strlen(it->valuestring) > sizeof k_type - 1 &&
                !strncmp(it->valuestring, k_type, sizeof k_type - 1)) {
                if (util_grow(&w->nodes, &w->cap_nodes, w->n_nodes + 1, sizeof *w->nodes))
                    w->oom = 1;
                else
                    w->nodes[w->n_nodes++] = c;
            } else if (w->pass == 2 && params) {
                n8n_value_at(w, it, node, messages, r);
            }
        } else if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
            long in = w->pass == 2 ? n8n_node_of(w, it) : -1;
            if (in >= 0)
                n8n_visit(w, it, in, 0, 0, depth + 1);
            else if (node >= 0 && !params && c == w->nodes[node])
                n8n_visit(w, it, node, obj && n8n_key_is(it, "parameters"), 0, depth + 1);
            else
                n8n_visit(w, it, node, params, messages || (params && obj && n8n_key_is(it, "messageValues")),
                          depth + 1);
        }
    }
}

/* The JSON values of d[0, len) (a workflow, or an excerpt of its nodes
 * array: objects one after another, commas between) gathered in one array,
 * in file order; NULL when cJSON rejects one (or on ENOMEM). The caller
 * frees it with cJSON_Delete. */
static cJSON *n8n_parse(const char *d, size_t len) {
    cJSON *all = cJSON_CreateArray();
    for (size_t at = 0; all;) {
        while (at < len && (isspace((unsigned char)d[at]) || d[at] == ',')) at++;
        if (at >= len) break;
        const char *end = NULL;
        cJSON *v = cJSON_ParseWithLengthOpts(d + at, len - at, &end, 0);
        if (!v || !cJSON_AddItemToArray(all, v)) {
            cJSON_Delete(v);
            cJSON_Delete(all);
            return NULL;
        }
        at = (size_t)(end - d);
    }
    return all;
}

/* One pass over the values in all; returns 0 when their strings and the
 * file's string tokens do not pair up (not JSON as expected). */
static int n8n_walk_json(n8n_walk *w, const cJSON *all, int pass) {
    w->pass = pass, w->next = 0;
    n8n_visit(w, all, -1, 0, 0, 0);
    return !w->bad && w->next == w->n_str;
}

/* The last name an n8n item expression reads ($json.body.message.text is
 * text; a method called on it, .trim(), is skipped), or 0. */
static size_t n8n_last_name(const char *d, size_t a, size_t b, size_t *na) {
    size_t e = b;
    while (e > a) {
        while (e > a && !lint_tmpl_is_ident(d[e - 1])) e--;
        size_t s = e;
        while (s > a && lint_tmpl_is_ident(d[s - 1])) s--;
        if (s == e) return 0;
        size_t after = e;
        while (after < b && d[after] == ' ') after++;
        if (after < b && d[after] == '(' && s > a &&
            d[s - 1] == '.') { /* a method: the value it is called on */
            e = s - 1;
            continue;
        }
        *na = s;
        return e - s;
    }
    return 0;
}

/* The class of the n8n expression inside {{ }} at [a, b): the current time
 * ($now, DateTime.now(), per call, per day when formatted as a date only),
 * today ($today), the run ($execution, per call), the incoming item ($json,
 * $input, $('Node').item.json.x: per call input, unless its last name says
 * otherwise). Deployment values ($vars, $env, $workflow) are stable; 0 when
 * the expression reads none of these. */
static int n8n_expr_class(const scan *s, size_t a, size_t b, int *subday) {
    const char *d = s->t->data;
    const char *p = d + a;
    size_t n = b - a;
    *subday = 0;
    const char *now = memmem(p, n, "$now", 4);
    if (!now) now = memmem(p, n, "DateTime.now", 12);
    if (!now) now = memmem(p, n, "DateTime.local", 14);
    if (now) {
        const char *f = memmem(p, n, "ormat(", 6); /* .format( / .toFormat( */
        int time = 1;
        if (f && f + 7 < p + n && (f[6] == '\'' || f[6] == '"')) {
            const char *q = memchr(f + 7, f[6], (size_t)(p + n - f - 7));
            time = 0;
            for (const char *c = f + 7; q && c < q && !time; c++) time = strchr("hHmsSaTt", *c) != NULL;
        }
        *subday = time;
        return time ? LINT_VC_CALL : LINT_VC_DAY;
    }
    if (memmem(p, n, "$today", 6)) return LINT_VC_DAY;
    if (memmem(p, n, "$execution", 10)) return LINT_VC_CALL;
    if (!memmem(p, n, "$json", 5) && !memmem(p, n, "$input", 6) && !memmem(p, n, "$(", 2) &&
        !memmem(p, n, "$node", 5) && !memmem(p, n, "$item", 5))
        return LINT_VC_NONE;
    size_t na = 0, nl = n8n_last_name(d, a, b, &na);
    int known = 0;
    int vc = nl ? lint_detect_name_info(s->d, s->cfg, d + na, nl, subday, &known) : LINT_VC_NONE;
    return known ? vc : LINT_VC_TURN;
}

/* The {{ }} expressions of an n8n value [a, b) that starts with '=' (an
 * expression; without it the braces are literal text) as spans. */
static int n8n_value_spans(scan *s, size_t a, size_t b) { return curly_spans(s, a, b, n8n_expr_class); }

/* An n8n workflow (.json with @n8n/n8n-nodes-langchain nodes: agents,
 * chains, extractors): each node's prompt is its prompt values only, in the
 * order the node sends them: its system message (and a chain's messages)
 * first, then its user text, although the file writes "text" above
 * "options.systemMessage". The other lines (ids, positions, settings such as
 * "promptType": "define") are metadata. Every value is one line of JSON, so
 * the order is kept per line (t->order); when two prompt values share a line
 * the file order stands. */
int lint_tmpl_n8n_workflow(scan *s, const char *rel) {
    lint_text *t = s->t;
    if (!lint_name_ends_with(rel, k_json) || t->n_lines == 0 ||
        !memmem(t->data, t->len, "@n8n/n8n-nodes-langchain.", 25))
        return UTIL_OK;
    n8n_walk w;
    memset(&w, 0, sizeof w);
    cJSON *all = n8n_strings(&w, t->data, t->len) ? n8n_parse(t->data, t->len) : NULL;
    int ok = all && n8n_walk_json(&w, all, 1) && w.n_nodes;
    if (ok && !w.oom && !n8n_index_nodes(&w)) w.oom = 1;
    if (ok && !w.oom) ok = n8n_walk_json(&w, all, 2);
    int rc = w.oom ? UTIL_ENOMEM : UTIL_OK;
    if (rc || !ok || !w.n_vals) goto done;
    free(t->order); /* a file order from quoted templates (lint_text.c) gives way */
    t->next_prompt = 0;
    if (!(t->order = malloc(t->n_lines * sizeof *t->order))) {
        rc = UTIL_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < t->n_lines; i++) t->order[i] = (lint_order){LINT_NO_PROMPT, 0};
    int shared = 0;
    const char *d = t->data;
    for (size_t k = 0; k < w.n_vals && !rc; k++) {
        const n8n_value *v = &w.vals[k];
        size_t line = lint_text_line_of(t, v->a), le = lint_text_line_end(t, line);
        shared |= t->order[line].prompt != LINT_NO_PROMPT || v->node >= t->n_lines;
        t->order[line] = (lint_order){v->node, (v->system ? 0 : w.n_vals) + k};
        size_t body = v->a + 1, end = v->b - 1;
        int expr = body < end && d[body] == '=';
        rc = lint_text_add_quiet(t, t->line_start[line], body + (size_t)expr);
        if (!rc) rc = lint_text_add_quiet(t, end, le);
        if (!rc && expr) rc = n8n_value_spans(s, body + 1, end);
    }
    for (size_t i = 0; i < t->n_lines && !rc; i++)
        if (t->order[i].prompt == LINT_NO_PROMPT) rc = lint_tmpl_meta_line(t, i);
    if (shared) {
        free(t->order);
        t->order = NULL;
    }
done:
    cJSON_Delete(all);
    free(w.str);
    free(w.nodes);
    free(w.by_addr);
    free(w.vals);
    return rc;
}
