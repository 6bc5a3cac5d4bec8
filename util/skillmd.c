/* util/skillmd.c: the SKILL.md frontmatter validator (util/skillmd.h): finds
 * the '---' block, loads it as one YAML document with libyaml and checks the
 * top-level mapping field by field, collecting every problem with its line.
 * Does not read files, print, or interpret the Markdown body. */
#include "skillmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct check {
    util_skillmd *out;
    int nomem;
} check;

static void add(check *c, int code, size_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void add(check *c, int code, size_t line, const char *fmt, ...) {
    util_skillmd *s = c->out;
    if (c->nomem) return;
    util_skillmd_problem *p = realloc(s->problems, (s->n_problems + 1) * sizeof *p);
    if (!p) {
        c->nomem = 1;
        return;
    }
    s->problems = p;
    p += s->n_problems++;
    p->code = code;
    p->line = line;
    p->claude_ok = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
}

/* Marks the problems added since index from as ones Claude Code accepts. */
static void claude_ok_since(check *c, size_t from) {
    for (size_t i = from; !c->nomem && i < c->out->n_problems; i++) c->out->problems[i].claude_ok = 1;
}

static size_t codepoints(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* --- finding the frontmatter ------------------------------------------------
 * A first line '---' (trailing blanks allowed), closed by the next line that
 * is '---' or '...' (YAML's document end), trailing blanks allowed. The body
 * is [*a, *b); *close_line is the 1-based line of the closing line. Returns 0
 * when the first line is not '---', -1 when nothing closes it. */
static int frontmatter(const char *d, size_t len, size_t *a, size_t *b, size_t *close_line) {
    if (len < 4 || memcmp(d, "---", 3) != 0) return 0;
    size_t i = 3;
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r')) i++;
    if (i >= len || d[i] != '\n') return 0;
    *a = i + 1;
    size_t line = 2;
    for (size_t p = *a; p < len; line++) {
        const char *nl = memchr(d + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - d) : len;
        size_t l = e - p;
        while (l > 3 && (d[p + l - 1] == ' ' || d[p + l - 1] == '\r' || d[p + l - 1] == '\t')) l--;
        if (l == 3 && (memcmp(d + p, "---", 3) == 0 || memcmp(d + p, "...", 3) == 0)) {
            *b = p;
            *close_line = line;
            return 1;
        }
        p = e + 1;
    }
    return -1;
}

/* --- the fields ------------------------------------------------------------- */

static const char *scalar(const yaml_node_t *v) {
    return v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
}

/* A string field: a problem naming key unless v is a scalar. */
static int is_string(check *c, const yaml_node_t *v, size_t line, const char *key) {
    if (v->type == YAML_SCALAR_NODE) return 1;
    add(c, UTIL_SKILLMD_NOT_STRING, line, "frontmatter '%s' must be a string", key);
    return 0;
}

static void check_name(check *c, const yaml_node_t *v, size_t line, const char *folder) {
    if (!is_string(c, v, line, "name")) return;
    const char *s = scalar(v);
    size_t n = v->data.scalar.length;
    if (n == 0 || n > 64) {
        add(c, UTIL_SKILLMD_NAME_LENGTH, line, "skill name '%.64s' must be 1-64 characters (it is %zu)", s,
            codepoints(s, n));
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
            add(c, UTIL_SKILLMD_NAME_CHARS, line,
                "skill name '%.64s' may hold only lowercase letters, digits and hyphens", s);
            return;
        }
    /* Claude Code asks only for the characters and the length: the name is
     * its display name and slash command, whatever the folder is called */
    size_t from = c->out->n_problems;
    if (s[0] == '-' || s[n - 1] == '-' || strstr(s, "--"))
        add(c, UTIL_SKILLMD_NAME_HYPHEN, line,
            "skill name '%.64s' must not start or end with a hyphen or hold '--'", s);
    else if (folder && *folder && strcmp(folder, s) != 0)
        add(c, UTIL_SKILLMD_NAME_FOLDER, line, "skill name '%.64s' differs from its folder name '%.64s'", s,
            folder);
    claude_ok_since(c, from);
}

static void check_length(check *c, const yaml_node_t *v, size_t line, const char *key, int code, size_t max) {
    if (!is_string(c, v, line, key)) return;
    size_t n = codepoints(scalar(v), v->data.scalar.length);
    if (n < 1 || n > max)
        add(c, code, line, "frontmatter '%s' must be 1-%zu characters (it is %zu)", key, max, n);
}

static void check_metadata(check *c, yaml_document_t *doc, const yaml_node_t *v, size_t line) {
    int ok = v->type == YAML_MAPPING_NODE;
    for (yaml_node_pair_t *p = ok ? v->data.mapping.pairs.start : NULL;
         p && p < v->data.mapping.pairs.top && ok; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *x = yaml_document_get_node(doc, p->value);
        ok = k && x && k->type == YAML_SCALAR_NODE && x->type == YAML_SCALAR_NODE;
    }
    if (!ok)
        add(c, UTIL_SKILLMD_METADATA, line, "frontmatter 'metadata' must be a mapping of strings to strings");
}

/* Whether v is a YAML sequence of scalars (allowed-tools: [Read, Grep]). */
static int string_list(yaml_document_t *doc, const yaml_node_t *v) {
    if (v->type != YAML_SEQUENCE_NODE) return 0;
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        yaml_node_t *x = yaml_document_get_node(doc, *i);
        if (!x || x->type != YAML_SCALAR_NODE) return 0;
    }
    return 1;
}

/* Keeps a copy of the first value of a string field. */
static void keep(char **dst, const yaml_node_t *v, check *c) {
    if (*dst || v->type != YAML_SCALAR_NODE) return;
    if (!(*dst = malloc(v->data.scalar.length + 1))) {
        c->nomem = 1;
        return;
    }
    memcpy(*dst, v->data.scalar.value, v->data.scalar.length);
    (*dst)[v->data.scalar.length] = '\0';
}

/* base: the 1-based line of the frontmatter's first line of YAML. */
static void check_doc(check *c, yaml_document_t *doc, size_t base, const char *folder) {
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root) {
        add(c, UTIL_SKILLMD_NOT_MAPPING, base - 1,
            "SKILL.md frontmatter is empty; it needs 'name' and 'description'");
        return;
    }
    if (root->type != YAML_MAPPING_NODE) {
        add(c, UTIL_SKILLMD_NOT_MAPPING, base + root->start_mark.line,
            "SKILL.md frontmatter must be a YAML mapping with 'name' and 'description'");
        return;
    }
    int have_name = 0, have_desc = 0;
    yaml_node_pair_t *start = root->data.mapping.pairs.start;
    for (yaml_node_pair_t *p = start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) continue;
        const char *key = scalar(k);
        size_t line = base + k->start_mark.line;
        int dup = 0;
        for (yaml_node_pair_t *q = start; q < p && !dup; q++) {
            yaml_node_t *k2 = yaml_document_get_node(doc, q->key);
            dup = k2 && k2->type == YAML_SCALAR_NODE && k2->data.scalar.length == k->data.scalar.length &&
                  memcmp(k2->data.scalar.value, key, k->data.scalar.length) == 0;
        }
        if (dup) {
            add(c, UTIL_SKILLMD_DUPLICATE_KEY, line, "frontmatter key '%.64s' appears twice", key);
            continue;
        }
        if (!strcmp(key, "name")) {
            have_name = 1;
            check_name(c, v, line, folder);
            keep(&c->out->name, v, c);
        } else if (!strcmp(key, "description")) {
            have_desc = 1;
            /* Claude Code needs a string but only truncates a long one */
            if (is_string(c, v, line, "description")) {
                size_t from = c->out->n_problems;
                check_length(c, v, line, "description", UTIL_SKILLMD_DESCRIPTION_LENGTH, 1024);
                claude_ok_since(c, from);
            }
            keep(&c->out->description, v, c);
        } else if (!strcmp(key, "allowed-tools")) {
            size_t from = c->out->n_problems;
            is_string(c, v, line, key);
            if (string_list(doc, v)) claude_ok_since(c, from); /* Claude Code takes a YAML list */
        } else if (!strcmp(key, "compatibility") || !strcmp(key, "license") || !strcmp(key, "metadata")) {
            /* fields Claude Code does not read */
            size_t from = c->out->n_problems;
            if (!strcmp(key, "compatibility"))
                check_length(c, v, line, "compatibility", UTIL_SKILLMD_COMPATIBILITY_LENGTH, 500);
            else if (!strcmp(key, "license"))
                is_string(c, v, line, key);
            else
                check_metadata(c, doc, v, line);
            claude_ok_since(c, from);
        }
    }
    /* Claude Code takes the folder's name and the body's first paragraph */
    size_t from = c->out->n_problems;
    if (!have_name) add(c, UTIL_SKILLMD_NO_NAME, base - 1, "SKILL.md frontmatter lacks 'name'");
    if (!have_desc) add(c, UTIL_SKILLMD_NO_DESCRIPTION, base - 1, "SKILL.md frontmatter lacks 'description'");
    claude_ok_since(c, from);
}

/* --- the whole check ------------------------------------------------------------ */

void util_skillmd_release(util_skillmd *s) {
    if (!s) return;
    free(s->name);
    free(s->description);
    free(s->problems);
    memset(s, 0, sizeof *s);
}

int util_skillmd_check(util_skillmd *out, const char *text, size_t len, const char *folder, util_err *err) {
    memset(out, 0, sizeof *out);
    check c = {out, 0};
    size_t a = 0, b = 0, close_line = 0;
    int fm = text ? frontmatter(text, len, &a, &b, &close_line) : 0;
    if (fm == 0) {
        add(&c, UTIL_SKILLMD_NO_FRONTMATTER, 1,
            "SKILL.md has no YAML frontmatter (a first line '---', then 'name' and "
            "'description', then a line '---')");
    } else if (fm < 0) {
        add(&c, UTIL_SKILLMD_UNCLOSED, 1, "SKILL.md frontmatter is not closed by a line '---'");
    } else {
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!yaml_parser_initialize(&parser)) {
            c.nomem = 1;
        } else {
            yaml_parser_set_input_string(&parser, (const unsigned char *)text + a, b - a);
            if (yaml_parser_load(&parser, &doc)) {
                check_doc(&c, &doc, 2, folder);
                yaml_document_delete(&doc);
            } else if (parser.error == YAML_MEMORY_ERROR) {
                c.nomem = 1;
            } else {
                /* point at the construct left open, if any, else at the problem */
                size_t l = 2 + (parser.context ? parser.context_mark.line : parser.problem_mark.line);
                add(&c, UTIL_SKILLMD_YAML, l < close_line ? l : close_line,
                    "SKILL.md frontmatter is not valid YAML: %s%s%s",
                    parser.problem ? parser.problem : "parse error", parser.context ? " " : "",
                    parser.context ? parser.context : "");
            }
            yaml_parser_delete(&parser);
        }
    }
    if (c.nomem) {
        util_skillmd_release(out);
        return util_err_set(err, UTIL_ENOMEM, "SKILL.md frontmatter: out of memory");
    }
    return UTIL_OK;
}
