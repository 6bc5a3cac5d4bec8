/* linter/lint_tmpl_file.c: what semantics a file gets from its name, folder
 * and first lines, before any tag is read: a template format by extension
 * (or {% %} and block tags outside code), Markdown whose {x} are fill-ins, a
 * file loaded verbatim (SKILL.md, agent definitions, a skill's other
 * Markdown), a Claude Code command or skill whose !`cmd` runs, a program's
 * template in a prompts/ folder, a VS Code prompt file, a file whose fields
 * are JS interpolations (${X}: its {x} and $x are text), Markdown that no
 * template engine reads (its path segments may be patterns); and the `---` front
 * matter block (metadata, unless the template renders it). Sets the lint_text
 * flags that say so. Does not tokenize or pair tags (lint_tmpl_tags.c) or read
 * expressions and front matter inputs (lint_tmpl.c). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lint_tmpl_impl.h"

/* Whether rel lies in a folder named prompts or ending in -prompts or
 * _prompts (src/app/prompts/x.md, system-prompts/x.md). */
int lint_tmpl_prompts_folder(const char *rel) {
    for (const char *p = strstr(rel, "prompts/"); p; p = strstr(p + 1, "prompts/"))
        if (p == rel || p[-1] == '/' || p[-1] == '-' || p[-1] == '_') return 1;
    return 0;
}

/* Whether the file opens with a comment that declares its template variables
 * (<!-- ... variables: ... -->, as prompt collections extracted from a
 * program write them): its ${X} and {x} are the program's fields. */
int lint_tmpl_declares_variables(const lint_text *t) {
    const char *d = t->data;
    size_t i = 0;
    while (i < t->len && isspace((unsigned char)d[i])) i++;
    if (t->len - i < 4 || memcmp(d + i, "<!--", 4) != 0) return 0;
    size_t lim = t->len - i > 4096 ? i + 4096 : t->len;
    for (size_t k = i + 4; k + 3 <= lim; k++) {
        if (!memcmp(d + k, "-->", 3)) return 0;
        if (d[k - 1] == '\n' && lim - k >= 10 && !memcmp(d + k, "variables:", 10)) return 1;
    }
    return 0;
}

/* Whether the file's front matter (a `---` block at its start, maybe after
 * an opening <!-- --> comment) declares a Claude Code command or skill:
 * an `allowed-tools:` or `argument-hint:` key. Claude Code then runs each
 * !`cmd` in the body wherever it stands, a fenced block included. */
int lint_tmpl_command_frontmatter(const lint_text *t) {
    const char *d = t->data, *e = t->data + (t->len > 8192 ? 8192 : t->len), *p = d;
    while (p < e && isspace((unsigned char)*p)) p++;
    if (e - p >= 4 && !memcmp(p, "<!--", 4)) {
        const char *c = memmem(p + 4, (size_t)(e - p - 4), "-->", 3);
        if (!c) return 0;
        for (p = c + 3; p < e && isspace((unsigned char)*p);) p++;
    }
    if (e - p < 4 || memcmp(p, "---", 3) || (p[3] != '\n' && p[3] != '\r')) return 0;
    for (const char *l = memchr(p, '\n', (size_t)(e - p)); l && l + 1 < e;
         l = memchr(l + 1, '\n', (size_t)(e - l - 1))) {
        const char *q = l + 1;
        size_t left = (size_t)(e - q);
        if (left >= 3 && !memcmp(q, "---", 3)) return 0;
        if ((left >= 14 && !strncasecmp(q, "allowed-tools:", 14)) ||
            (left >= 14 && !strncasecmp(q, "argument-hint:", 14)))
            return 1;
    }
    return 0;
}

/* The part of rel after its last '/'. */
static const char *base_name(const char *rel) {
    const char *b = strrchr(rel, '/');
    return b ? b + 1 : rel;
}

/* Whether the `---` block ending on line fm is text the template renders,
 * not metadata: a Markdown template (markdown: rel is Markdown) (not SKILL.md, not a command or agent
 * definition) whose block has a top-level key with an output expression as
 * its bare value, `CURRENT_TIME: {{ CURRENT_TIME }}` (no YAML reader could
 * take that value, so the template engine renders the block as part of the
 * prompt). A block of nested keys, lists and quoted "{{ x }}" strings is
 * YAML the program reads (tool definitions, container settings): metadata. */
int lint_tmpl_rendered_frontmatter(const lint_text *t, const char *rel, size_t fm, int markdown) {
    if (!markdown || !strcasecmp(base_name(rel), "SKILL.md") || t->command_file || strstr(rel, "agents/") ||
        !(t->is_template || lint_tmpl_prompts_folder(rel)))
        return 0;
    for (size_t i = 1; i < fm; i++) {
        const char *p = t->data + t->line_start[i], *e = t->data + lint_text_line_end(t, i);
        const char *o = memmem(p, (size_t)(e - p), "{{", 2);
        const char *c = o ? memchr(p, ':', (size_t)(o - p)) : NULL;
        /* a top-level key whose bare value is the expression; one that is
         * quoted ("{{x}}"), a list item or under a nested key is a YAML
         * string the program reads (tool arguments, container settings) */
        if (!c || p == c || isspace((unsigned char)*p) || *p == '-' || *p == '#') continue;
        const char *v = c + 1;
        while (v < o && (*v == ' ' || *v == '\t')) v++;
        if (v == o && memmem(o, (size_t)(e - o), "}}", 2)) return 1;
    }
    return 0;
}

/* Whether a file name is a template format whose tags render everywhere
 * (.j2 .jinja .jinja2 .njk .mustache .hbs .handlebars .tmpl .tpl .gotmpl
 * .liquid .prompt .prompty, skprompt.txt). */
static int template_name(const char *rel) {
    static const char *const k_ext[] = {".j2",     ".jinja",      ".jinja2",  ".njk", ".mustache",
                                        ".hbs",    ".handlebars", ".tmpl",    ".tpl", ".gotmpl",
                                        ".liquid", ".prompt",     ".prompty", NULL};
    return lint_name_ends_with(rel, k_ext) || strcasecmp(base_name(rel), "skprompt.txt") == 0;
}

/* Whether a .prompt file is a LangChain f-string template by its content
 * (a {query} field, nothing else that renders), not a dotprompt: no {{ }}
 * or {% %} tag anywhere and no front matter (after '#' comment lines), so
 * its {x} are its only fields. A dotprompt, whose {x} in prose or JSON is
 * literal text, has front matter or a tag and stays one. */
static int fstring_prompt(const lint_text *t, const char *rel) {
    static const char *const k_dotprompt[] = {".prompt", NULL};
    const char *d = t->data;
    if (!lint_name_ends_with(rel, k_dotprompt) || memmem(d, t->len, "{{", 2) || memmem(d, t->len, "{%", 2))
        return 0;
    size_t i = 0;
    while (i < t->n_lines && (t->line_start[i] == lint_text_line_end(t, i) || d[t->line_start[i]] == '#'))
        i++;
    if (i < t->n_lines && lint_text_line_end(t, i) - t->line_start[i] >= 3 &&
        !memcmp(d + t->line_start[i], "---", 3))
        return 0;
    for (const char *p = memchr(d, '{', t->len); p; p = memchr(p + 1, '{', t->len - (size_t)(p + 1 - d))) {
        const char *q = p + 1, *e = d + t->len;
        if (q < e && (isalpha((unsigned char)*q) || *q == '_'))
            while (q < e && lint_tmpl_is_ident(*q)) q++;
        if (q > p + 1 && q < e && *q == '}') return 1;
        if (q >= e) break;
    }
    return 0;
}

/* Markdown whose {x} fields are not rendered: not a VS Code prompt file
 * (.prompt.md, .instructions.md, .chatmode.md fill ${input:x}, ${file}). */
static int markdown_name(const char *rel) {
    static const char *const k_md[] = {".md", ".mdx", ".markdown", ".mdc", NULL};
    static const char *const k_vs[] = {".prompt.md", ".instructions.md", ".chatmode.md", NULL};
    return !lint_name_ends_with(rel, k_vs) && lint_name_ends_with(rel, k_md);
}

/* Whether the `---` block opening t (its first 8 KB) has both top-level
 * keys k1 and k2 ("name:", "description:"). */
static int frontmatter_has(const lint_text *t, const char *k1, const char *k2) {
    const char *d = t->data, *e = d + (t->len > 8192 ? 8192 : t->len);
    if (e - d < 4 || memcmp(d, "---", 3) || (d[3] != '\n' && d[3] != '\r')) return 0;
    size_t n1 = strlen(k1), n2 = strlen(k2);
    int has1 = 0, has2 = 0;
    for (const char *l = memchr(d, '\n', (size_t)(e - d)); l && l + 1 < e;
         l = memchr(l + 1, '\n', (size_t)(e - l - 1))) {
        const char *q = l + 1;
        size_t left = (size_t)(e - q);
        if (left >= 3 && !memcmp(q, "---", 3)) return has1 && has2;
        has1 |= left >= n1 && !memcmp(q, k1, n1);
        has2 |= left >= n2 && !memcmp(q, k2, n2);
    }
    return 0;
}

/* Whether rel is Markdown inside a skill's folder other than SKILL.md
 * (skills/NAME/references/x.md), not under a prompts/ folder. A file there
 * whose own front matter names and describes it (name:, description:) is
 * not an Agent Skill's reference, which only SKILL.md describes: it is one
 * skill of a program that keeps one file per skill in skills/GROUP/
 * (skills/digest/email_intent_planning.md) and renders it as its template. */
static int skill_part(const lint_text *t, const char *rel) {
    const char *base = base_name(rel);
    const char *sk = !strncmp(rel, "skills/", 7) ? rel : strstr(rel, "/skills/");
    if (!sk || strcasecmp(base, "SKILL.md") == 0 || !markdown_name(rel) || lint_tmpl_prompts_folder(rel))
        return 0;
    const char *name = sk + (*sk == '/' ? 8 : 7), *slash = strchr(name, '/');
    return slash && slash < base && !frontmatter_has(t, "name:", "description:");
}

/* A file an agent loads as written, with no template engine in between:
 * SKILL.md (Agent Skills), a subagent or custom agent definition (Markdown
 * under an agents/ folder whose front matter has a description:, as Claude Code and
 * OpenCode read them; a VS Code *.agent.md or *.chatmode.md, unless its
 * front matter is another program's manifest) and VS Code
 * *.instructions.md; a skill's other Markdown files (skills/NAME/...). Their {x}, {{x}} and ${X} reach the model as the
 * characters written (a template the model or the user fills in, or
 * documentation of one), so they are the file's fixed text. */
static int verbatim_file(const lint_text *t, const char *rel) {
    static const char *const k_vs[] = {".agent.md", ".chatmode.md", ".instructions.md", NULL};
    const char *base = base_name(rel);
    if (!strcasecmp(base, "SKILL.md")) return LINT_VERBATIM_SKILL;
    /* a skill's other Markdown (references/, examples/): read with a file tool */
    if (skill_part(t, rel)) return LINT_VERBATIM_PLAIN;
    /* front matter with apiVersion: and kind: is another program's versioned
     * resource manifest (kind: Agent, then metadata: and spec:), which no VS
     * Code agent or chat mode file has: that program reads the file and may
     * render its body as a template */
    if (lint_name_ends_with(rel, k_vs))
        return frontmatter_has(t, "apiVersion:", "kind:") ? 0 : LINT_VERBATIM_PLAIN;
    const char *ag = !strncmp(rel, "agents/", 7) ? rel : strstr(rel, "/agents/");
    if (!ag || ag >= base || !markdown_name(rel) || lint_tmpl_prompts_folder(rel) || t->len < 4 ||
        memcmp(t->data, "---", 3))
        return 0;
    const char *end = memmem(t->data + 3, t->len - 3, "\n---", 4);
    const char *desc = memmem(t->data, t->len, "\ndescription:", 13);
    return end && desc && desc < end ? LINT_VERBATIM_PLAIN : 0;
}

/* Whether a {{ x }} stands outside code spans and front matter: the file's
 * engine renders its text, so its inline code is rendered too. */
static int tags_outside_code(const lint_text *t) {
    const char *d = t->data;
    for (size_t i = 0; i + 3 < t->len;) {
        const char *o = memmem(d + i, t->len - i, "{{", 2);
        if (!o) return 0;
        i = (size_t)(o - d);
        if (!lint_text_in_code(t, i) && !(t->flags[lint_text_line_of(t, i)] & LINT_LF_FRONTMATTER)) return 1;
        i += 2;
    }
    return 0;
}

/* Any Markdown name, a VS Code prompt file too: inline code there shows
 * syntax. */
static int any_markdown(const char *rel) {
    static const char *const k_md[] = {".md", ".mdx", ".markdown", ".mdc", NULL};
    return lint_name_ends_with(rel, k_md);
}

/* A file of another extension is a template when statements ({% %}) or block
 * tags ({{#x}}, {{/x}}) appear outside its code spans. */
static int has_statements(const lint_text *t) {
    const char *d = t->data;
    closer c = {"%}", 0, 0, 0};
    for (size_t i = 0; i + 2 < t->len;) {
        const char *o = memchr(d + i, '{', t->len - i - 2);
        if (!o) return 0;
        i = (size_t)(o - d);
        if (!lint_text_in_code(t, i)) {
            if (d[i + 1] == '{' && (d[i + 2] == '#' || d[i + 2] == '/')) return 1;
            if (d[i + 1] == '%') {
                size_t e = lint_tmpl_next_plain(d, t->len, i + 2, &c);
                if (e == (size_t)-1) return 0;
                if (e <= lint_text_line_end(t, lint_text_line_of(t, i)) || e - i < 4096) return 1;
            }
        }
        i++;
    }
    return 0;
}

/* Frontmatter lines (lint_text marks `---` on line 1; a .prompt file may open
 * with '#' comment lines first). Returns the last line, or (size_t)-1. */
static size_t frontmatter(lint_text *t, const char *rel) {
    static const char *const k_dotprompt[] = {".prompt", NULL};
    size_t n = t->n_lines, start = 0;
    if (lint_name_ends_with(rel, k_dotprompt)) {
        while (start < n) {
            const char *p = t->data + t->line_start[start];
            size_t l = lint_text_line_end(t, start) - t->line_start[start];
            if (l == 0 || p[0] == '#')
                start++;
            else
                break;
        }
    }
    if (start >= n) return (size_t)-1;
    const char *p = t->data + t->line_start[start], *e = t->data + lint_text_line_end(t, start);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if (e - p != 3 || memcmp(p, "---", 3) != 0) return (size_t)-1;
    for (size_t i = start + 1; i < n; i++) {
        const char *q = t->data + t->line_start[i], *qe = t->data + lint_text_line_end(t, i);
        while (qe > q && (qe[-1] == ' ' || qe[-1] == '\t')) qe--;
        if (qe - q == 3 && (memcmp(q, "---", 3) == 0 || memcmp(q, "...", 3) == 0)) {
            for (size_t k = 0; k <= i; k++) t->flags[k] |= LINT_LF_FRONTMATTER;
            return i;
        }
    }
    return (size_t)-1;
}

/* Whether the file's name says it is the user message of a prompt: a word
 * "user" in its base name followed by the extensions (title.user.md.jinja,
 * extract-user.mustache, user.md) or by a word for a message
 * (summary-user-message.j2, user_prompt.txt); not user_profile.j2 nor
 * user-guide.md, which are named for their content. */
static int user_turn_name(const char *rel) {
    static const char *const k_msg[] = {"message", "msg",      "prompt", "turn",
                                        "input",   "template", "tmpl",   NULL};
    const char *b = base_name(rel);
    for (const char *p = b; (p = strcasestr(p, "user")); p += 4) {
        if (p > b && p[-1] != '.' && p[-1] != '-' && p[-1] != '_') continue;
        const char *q = p + 4;
        if (*q == '.') return 1;
        if (*q != '-' && *q != '_') continue;
        q++;
        size_t n = 0;
        while (isalpha((unsigned char)q[n])) n++;
        for (size_t k = 0; k_msg[k]; k++)
            if (n == strlen(k_msg[k]) && !strncasecmp(q, k_msg[k], n) &&
                (q[n] == '.' || q[n] == '-' || q[n] == '_'))
                return 1;
    }
    return 0;
}

/* Whether the file's fields are JavaScript template-literal interpolations,
 * as prompts extracted from a program's template literals write them: two
 * distinct ${NAME} (one when an opening comment declares the variables), and
 * no {{ or {% anywhere. Only ${...} is filled in there, so a bare {x} (a
 * TypeScript type, "pass {scriptPath}") and a shell $x are text. */
static int js_interpolations(const lint_text *t) {
    const char *d = t->data, *e = d + t->len, *first = NULL;
    size_t first_n = 0, need = lint_tmpl_declares_variables(t) ? 1 : 2, seen = 0;
    /* one pass over the braces: any {{ or {% rules it out */
    for (const char *p = d; (p = memchr(p, '{', (size_t)(e - p))) != NULL; p++) {
        if (p + 1 < e && (p[1] == '{' || p[1] == '%')) return 0;
        if (p == d || p[-1] != '$' || seen >= need) continue;
        const char *q = p + 1;
        if (q >= e || (!isalpha((unsigned char)*q) && *q != '_')) continue;
        while (q < e && (isalnum((unsigned char)*q) || *q == '_')) q++;
        size_t n = (size_t)(q - p - 1);
        if (!first)
            first = p + 1, first_n = n, seen = 1;
        else if (n != first_n || memcmp(first, p + 1, n))
            seen = 2;
    }
    return seen >= need;
}

/* --- the entry point --------------------------------------------------------- */

size_t lint_tmpl_file_kind(lint_text *t, const char *rel, int dialect) {
    t->verbatim = verbatim_file(t, rel);
    t->curly_only = (template_name(rel) && !fstring_prompt(t, rel)) || dialect != TD_CURLY;
    t->is_template = !t->verbatim && (t->curly_only || has_statements(t));
    /* markdown in a prompts/ folder is a program's template: its {x} are fields */
    t->fill_ins = !t->is_template && markdown_name(rel) && !lint_tmpl_prompts_folder(rel) &&
                  !lint_tmpl_declares_variables(t);
    t->command_file = t->fill_ins && (!strncmp(rel, "commands/", 9) || strstr(rel, "/commands/"));
    {
        const char *b = base_name(rel);
        t->memory_file = !strcasecmp(b, "AGENTS.md") || !strcasecmp(b, "CLAUDE.md") ||
                         !strcasecmp(b, "GEMINI.md") || !strcasecmp(b, "README.md");
    }
    t->skill_file = t->verbatim == LINT_VERBATIM_SKILL || skill_part(t, rel);
    t->claude_live = t->command_file || t->verbatim == LINT_VERBATIM_SKILL ||
                     (markdown_name(rel) && lint_tmpl_command_frontmatter(t));
    /* a YAML prompt file's values are a program's templates (SWE-smith's
     * instance: |- with "implement the function `{func_signature}`") */
    static const char *const k_yml[] = {".yml", ".yaml", NULL};
    t->program_template = !t->is_template &&
                          (lint_tmpl_prompts_folder(rel) || lint_name_ends_with(rel, k_yml));
    static const char *const k_vs_prompt[] = {".prompt.md", NULL};
    t->vscode_prompt = !t->is_template && lint_name_ends_with(rel, k_vs_prompt);
    t->js_fields = !t->is_template && !t->verbatim && !t->vscode_prompt && js_interpolations(t);
    t->plain_markdown = !t->is_template && !t->verbatim && markdown_name(rel) &&
                        !lint_tmpl_declares_variables(t);
    t->user_turn = !t->verbatim && !t->memory_file && !t->skill_file && user_turn_name(rel);
    size_t fm = frontmatter(t, rel);
    if (fm != (size_t)-1 && lint_tmpl_rendered_frontmatter(t, rel, fm, markdown_name(rel))) {
        for (size_t k = 0; k <= fm; k++) t->flags[k] &= (unsigned char)~LINT_LF_FRONTMATTER;
        fm = (size_t)-1;
    }
    return fm;
}

int lint_tmpl_code_tags(const lint_text *t, const char *rel) {
    /* a non-Markdown file in a prompts folder is a program's template even
     * when its one {{ x }} is in backticks ("Current date is: `{{ now }}`.") */
    return !t->is_template && !t->verbatim && !any_markdown(rel) &&
           (tags_outside_code(t) || t->program_template);
}
