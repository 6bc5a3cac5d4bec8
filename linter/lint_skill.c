/* linter/lint_skill.c: SKILL.md frontmatter against the Agent Skills spec
 * (name: 1-64 lowercase letters, digits and hyphens, no leading, trailing or
 * doubled hyphen, equal to the folder; description: 1-1024 characters;
 * compatibility <= 500; metadata a mapping), parsed with libyaml.
 * Does not look for volatile content (the rules pass does that). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "lint_impl.h"

typedef struct issues {
    lint_skill_issue *v;
    size_t n, cap;
} issues;

static int add(issues *is, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int add(issues *is, size_t line, const char *fmt, ...) {
    if (is->n == is->cap) {
        size_t nc = is->cap ? is->cap * 2 : 4;
        lint_skill_issue *p = realloc(is->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        is->v = p;
        is->cap = nc;
    }
    is->v[is->n].line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(is->v[is->n].msg, sizeof is->v[is->n].msg, fmt, ap);
    va_end(ap);
    is->n++;
    return UTIL_OK;
}

static size_t codepoints(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Frontmatter bounds: body [*a, *b) between the '---' lines; returns 0 if none. */
static int frontmatter(const char *d, size_t len, size_t *a, size_t *b, size_t *close_line) {
    if (len < 4 || memcmp(d, "---", 3) != 0) return 0;
    size_t i = 3;
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r')) i++;
    if (i >= len || d[i] != '\n') return 0;
    *a = i + 1;
    size_t line = 1;
    for (size_t p = *a; p < len;) {
        const char *nl = memchr(d + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - d) : len;
        size_t l = e - p;
        while (l > 3 && (d[p + l - 1] == ' ' || d[p + l - 1] == '\r' || d[p + l - 1] == '\t'))
            l--;
        if (l == 3 && (memcmp(d + p, "---", 3) == 0 || memcmp(d + p, "...", 3) == 0)) {
            *b = p;
            *close_line = line;
            return 1;
        }
        p = e + 1;
        line++;
    }
    return 0;
}

static void check_name(issues *is, const yaml_node_t *v, size_t line, const char *folder) {
    if (v->type != YAML_SCALAR_NODE) {
        add(is, line, "frontmatter 'name' must be a string");
        return;
    }
    const char *s = (const char *)v->data.scalar.value;
    size_t n = v->data.scalar.length;
    if (n == 0 || n > 64) {
        add(is, line, "skill name '%.64s' must be 1-64 characters (it is %zu)", s, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) {
            add(is, line, "skill name '%.64s' may hold only lowercase letters, digits and "
                "hyphens", s);
            return;
        }
    if (s[0] == '-' || s[n - 1] == '-' || strstr(s, "--")) {
        add(is, line, "skill name '%.64s' must not start or end with a hyphen or hold '--'", s);
        return;
    }
    if (folder && *folder && strcmp(folder, s) != 0)
        add(is, line, "skill name '%.64s' must equal its folder name '%.64s'", s, folder);
}

static void check_text(issues *is, const yaml_node_t *v, size_t line, const char *key,
                       size_t min, size_t max) {
    if (v->type != YAML_SCALAR_NODE) {
        add(is, line, "frontmatter '%s' must be a string", key);
        return;
    }
    size_t n = codepoints((const char *)v->data.scalar.value, v->data.scalar.length);
    if (n < min || n > max)
        add(is, line, "frontmatter '%s' must be %zu-%zu characters (it is %zu)", key, min, max, n);
}

static void check_doc(issues *is, yaml_document_t *doc, size_t base, const char *folder) {
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        add(is, base, "SKILL.md frontmatter must be a YAML mapping with 'name' and "
            "'description'");
        return;
    }
    int have_name = 0, have_desc = 0;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) continue;
        const char *key = (const char *)k->data.scalar.value;
        size_t line = base + k->start_mark.line;
        if (!strcmp(key, "name")) {
            have_name = 1;
            check_name(is, v, line, folder);
        } else if (!strcmp(key, "description")) {
            have_desc = 1;
            check_text(is, v, line, "description", 1, 1024);
        } else if (!strcmp(key, "compatibility")) {
            check_text(is, v, line, "compatibility", 1, 500);
        } else if (!strcmp(key, "metadata") && v->type != YAML_MAPPING_NODE) {
            add(is, line, "frontmatter 'metadata' must be a mapping of string keys to values");
        }
    }
    if (!have_name) add(is, base - 1, "SKILL.md frontmatter has no 'name'");
    if (!have_desc) add(is, base - 1, "SKILL.md frontmatter has no 'description'");
}

int lint_skill_check(const char *data, size_t len, const char *folder, lint_skill_issue **out,
                     size_t *n) {
    issues is = {0};
    size_t a, b, close_line;
    *out = NULL;
    *n = 0;
    if (!frontmatter(data, len, &a, &b, &close_line)) {
        if (add(&is, 0, "SKILL.md has no YAML frontmatter ('---' lines holding name and "
                "description)"))
            return UTIL_ENOMEM;
        *out = is.v;
        *n = is.n;
        return UTIL_OK;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) return UTIL_ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)data + a, b - a);
    if (!yaml_parser_load(&parser, &doc)) {
        /* point at the construct that was left open, if any, else at the problem */
        size_t l = parser.context ? parser.context_mark.line : parser.problem_mark.line;
        if (l + 1 > close_line) l = close_line - 1;
        add(&is, 1 + l, "SKILL.md frontmatter is not valid YAML: %s%s%s",
            parser.problem ? parser.problem : "parse error", parser.context ? " " : "",
            parser.context ? parser.context : "");
    } else {
        if (!yaml_document_get_root_node(&doc))
            add(&is, 0, "SKILL.md frontmatter is empty; it needs 'name' and 'description'");
        else check_doc(&is, &doc, 1, folder);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    *out = is.v;
    *n = is.n;
    return UTIL_OK;
}
