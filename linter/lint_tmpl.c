/* linter/lint_tmpl.c: template semantics. Tags are tokenized once ({{ }},
 * {{{ }}}, {% %}, {# #}, {{! }}, Go comments), blocks matched (Jinja for/if/
 * set/macro/call, Handlebars #each/#if/sections, Go range/if/with/end), and
 * every expression read term by term: string literals are prompt text,
 * identifiers are classed by binding ({% set %}, loop variables), by name,
 * by the frontmatter's declared inputs or by the words before them; date
 * functions (strftime_now, now) are volatile. A loop over volatile data is the
 * volatile part itself: its header is the span, its body renders nothing
 * stable. Tags are found and paired in lint_tmpl_tags.c; prompts kept as
 * values of data files (LangChain YAML/JSON, CrewAI tasks; Gemini CLI TOML and
 * other formats with syntaxes of their own in lint_tmpl_formats.c)
 * and the declared inputs are read in lint_tmpl_data.c; a file's kind (template
 * format, verbatim file, command, front matter) is decided in lint_tmpl_file.c.
 * Does not run literal patterns or decide findings. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/vec.h"
#include "lint_registry.h"
#include "lint_tmpl.h"
#include "lint_tmpl_impl.h"


/* --- bindings: name -> class (open addressing) ------------------------------- */
static size_t hash_str(const char *s, size_t n) {
    size_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static bind *bind_get(const bindtab *b, const char *s, size_t n) {
    if (!b->cap) return NULL;
    for (size_t i = hash_str(s, n) & (b->cap - 1);; i = (i + 1) & (b->cap - 1)) {
        if (!b->v[i].name) return NULL;
        if (strlen(b->v[i].name) == n && memcmp(b->v[i].name, s, n) == 0) return &b->v[i];
    }
}

/* Binds name to a class; a name assigned several times keeps the most
 * volatile class (branches of an if both count) unless override (a macro
 * parameter shadows what the name meant outside). known: the class comes
 * from something classed (not an unknown loop's item). */
static int bind_put(bindtab *b, const char *s, size_t n, int vclass, int subday, int known, int text,
                    int override) {
    bind *x = bind_get(b, s, n);
    if (x) {
        if (override)
            x->vclass = vclass, x->subday = subday, x->known = known, x->text = text;
        else {
            if (vclass > x->vclass) x->vclass = vclass;
            x->subday |= subday;
            x->known |= known;
            x->text |= text;
        }
        return UTIL_OK;
    }
    if ((b->n + 1) * 2 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        bind *nv = calloc(nc, sizeof *nv);
        if (!nv) return UTIL_ENOMEM;
        for (size_t i = 0; i < b->cap; i++) {
            if (!b->v[i].name) continue;
            size_t k = hash_str(b->v[i].name, strlen(b->v[i].name)) & (nc - 1);
            while (nv[k].name) k = (k + 1) & (nc - 1);
            nv[k] = b->v[i];
        }
        free(b->v);
        b->v = nv;
        b->cap = nc;
    }
    size_t k = hash_str(s, n) & (b->cap - 1);
    while (b->v[k].name) k = (k + 1) & (b->cap - 1);
    if (!(b->v[k].name = strndup(s, n))) return UTIL_ENOMEM;
    b->v[k].vclass = vclass;
    b->v[k].known = known;
    b->v[k].subday = subday;
    b->v[k].text = text;
    b->v[k].item = 0;
    b->v[k].msgs = 0;
    b->n++;
    return UTIL_OK;
}

static int bind_set(bindtab *b, const char *s, size_t n, int vclass, int subday) {
    return bind_put(b, s, n, vclass, subday, 1, 0, 0);
}

static void bind_clear(bindtab *b) {
    for (size_t i = 0; i < b->cap; i++) free(b->v[i].name);
    free(b->v);
    memset(b, 0, sizeof *b);
}


/* --- names ---------------------------------------------------------------------- */

static int is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$' || c == '@'; }


static int in_list(const char *s, size_t n, const char *const *list) {
    for (; *list; list++)
        if (lint_tmpl_word_is(s, n, *list)) return 1;
    return 0;
}

static const char *const k_keywords[] = {
    "and",         "or",       "not",       "in",      "is",       "if",      "else",    "elif",
    "true",        "false",    "none",      "True",    "False",    "None",    "defined", "undefined",
    "string",      "mapping",  "iterable",  "number",  "sequence", "boolean", "integer", "float",
    "divisibleby", "odd",      "even",      "equalto", "sameas",   "lower",   "upper",   "as",
    "with",        "without",  "recursive", "nil",     "eq",       "ne",      "lt",      "le",
    "gt",          "ge",       "len",       "index",   "print",    "printf",  "println", "html",
    "js",          "urlquery", NULL};

/* Names known to hold stable text: never an unknown placeholder. */
static const char *const k_stable_roots[] = {"loop",
                                             "range",
                                             "namespace",
                                             "raise_exception",
                                             "ns",
                                             "this",
                                             "self",
                                             "caller",
                                             "varargs",
                                             "kwargs",
                                             "super",
                                             "lipsum",
                                             "dict",
                                             "cycler",
                                             "joiner",
                                             "tools",
                                             "tool",
                                             "functions",
                                             "function",
                                             "available_tools",
                                             "custom_tools",
                                             "builtin_tools",
                                             "tools_in_user_message",
                                             "system",
                                             "system_message",
                                             "system_prompt",
                                             "default_system_message",
                                             "default_system_prompt",
                                             "add_generation_prompt",
                                             "bos_token",
                                             "eos_token",
                                             "pad_token",
                                             "unk_token",
                                             "assistant_name",
                                             "bot_name",
                                             "agent_name",
                                             "product_name",
                                             "company_name",
                                             "persona",
                                             "@index",
                                             "@key",
                                             "@first",
                                             "@last",
                                             "@root",
                                             ".",
                                             "role",
                                             "json",
                                             NULL};

/* Functions whose value is the current date or time, or random. */
static int volatile_function(const char *s, size_t n, int *subday) {
    static const char *const k_day[] = {"today",      "current_date", "get_current_date",
                                        "date_today", "localdate",    NULL};
    static const char *const k_call[] = {
        "now",       "utcnow",      "time",    "current_time", "get_current_time",
        "timestamp", "random",      "randint", "uuid",         "uuid1",
        "uuid4",     "random_uuid", "nonce",   "localtime",    "gmtime",
        "datetime",  "strftime",    NULL};
    const char *last = s;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.') last = s + i + 1;
    size_t ln = (size_t)(s + n - last);
    if (in_list(last, ln, k_day)) return LINT_VC_DAY;
    if (in_list(last, ln, k_call)) {
        *subday = 1;
        return LINT_VC_CALL;
    }
    return LINT_VC_NONE;
}

/* A strftime format that resolves finer than a day. */
static int format_subday(const char *s, size_t n) {
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '%' && strchr("HIMSpXcTRsfrkl", s[i + 1])) return 1;
    return 0;
}

/* GitHub Actions contexts: the event, the run and the ref change per run; the
 * repository, the workflow, secrets and variables do not. */
static int github_class(const char *p, size_t n) {
    static const char *const k[] = {"github.event",
                                    "github.run_",
                                    "github.sha",
                                    "github.ref",
                                    "github.head_ref",
                                    "github.base_ref",
                                    "github.actor",
                                    "github.triggering_actor",
                                    "inputs.",
                                    "steps.",
                                    "needs.",
                                    "matrix.",
                                    NULL};
    for (const char *const *w = k; *w; w++)
        if (n >= strlen(*w) && memcmp(p, *w, strlen(*w)) == 0) return LINT_VC_TURN;
    return LINT_VC_NONE;
}

/* Class of a term (a path such as `doc.text`, `messages[0]['content']`,
 * `.Date`, `$input`). root: the first name; idx0: subscripted with [0] (or
 * with an index whose role the template tests as system). */
/* Whether the name at p (n bytes) is the whole of a {{ name }} that is a path
 * in inline code (lint_detect_code_path). */
static int code_path_term(const scan *s, const char *p, size_t n) {
    const char *d = s->t->data;
    size_t a = (size_t)(p - d), b = a + n;
    while (a > 0 && d[a - 1] == ' ') a--;
    while (b < s->t->len && d[b] == ' ') b++;
    if (a < 2 || d[a - 1] != '{' || d[a - 2] != '{' || b + 1 >= s->t->len || d[b] != '}' || d[b + 1] != '}')
        return 0;
    return lint_detect_code_path(s->d, s->cfg, s->t, a - 2, b + 2, p, n);
}

/* Whether name is the messages list bound to another name. */
static int msgs_alias(const scan *s, const char *name, size_t n) {
    bind *b = bind_get((bindtab *)&s->binds, name, n);
    return b && b->msgs;
}

/* Whether the value [a, b) of a {% set %} is the messages list itself, or a
 * slice of it: `messages`, `messages[1:]`, `(messages if messages is defined
 * else [])`, or another name bound so. */
static int msgs_value(const scan *s, size_t a, size_t b) {
    const char *d = s->t->data;
    while (a < b && (d[a] == ' ' || d[a] == '(')) a++;
    size_t w = a;
    while (w < b && lint_tmpl_is_ident(d[w])) w++;
    if (w == a || !(lint_tmpl_word_is(d + a, w - a, "messages") ||
                    lint_tmpl_word_is(d + a, w - a, "loop_messages") || msgs_alias(s, d + a, w - a)))
        return 0;
    while (w < b && d[w] == ' ') w++;
    if (w < b && d[w] == '[') { /* a slice, not an item */
        size_t e = w;
        while (e < b && d[e] != ']') e++;
        if (!memchr(d + w, ':', e - w)) return 0;
        for (w = e + 1; w < b && d[w] == ' ';) w++;
    }
    return w >= b || d[w] == ')' || (b - w > 3 && !memcmp(d + w, "if ", 3));
}

/* Objects that describe the assistant or its configuration: a generic
 * attribute of theirs (agent.name) is configured whatever else they hold. */
static const char *const k_self_roots[] = {"agent",  "assistant", "bot",    "persona", "character",
                                           "config", "settings",  "system", NULL};

/* The class of an unknown object root (project, pr) read from its own
 * attributes in the file's tags: when two or more of them name values that
 * change per session or faster (project.repository, project.branch,
 * project.files_changed), the object is a record of what the request is
 * about, and its generic attributes (project.name, pr.title) change with it:
 * the least volatile of those classes. LINT_VC_NONE when fewer say so.
 * Cached in s->owners per root. */
static int owner_class(scan *s, const char *root, size_t root_n) {
    bind *o = bind_get(&s->owners, root, root_n);
    if (o) return o->vclass;
    const char *d = s->t->data;
    int n = 0, vc = LINT_VC_COUNT;
    size_t seen_a[8], seen_n[8]; /* the attributes counted (each counts once), up to 8 */
    for (size_t i = 0; i < s->tags.n && n < 8 && !in_list(root, root_n, k_self_roots); i++) {
        for (size_t k = s->tags.v[i].a; k + root_n + 1 < s->tags.v[i].b && n < 8; k++) {
            if (memcmp(d + k, root, root_n) != 0 || d[k + root_n] != '.' ||
                (k > 0 && (lint_tmpl_is_ident(d[k - 1]) || d[k - 1] == '.')))
                continue;
            size_t a = k + root_n + 1, e = a;
            while (e < s->tags.v[i].b && lint_tmpl_is_ident(d[e])) e++;
            int dup = e == a;
            for (int j = 0; j < n && !dup; j++)
                dup = e - a == seen_n[j] && !memcmp(d + a, d + seen_a[j], e - a);
            int sd = 0, kn = 0;
            int c = dup ? LINT_VC_NONE : lint_detect_name_info(s->d, s->cfg, d + a, e - a, &sd, &kn);
            if (c < LINT_VC_SESSION) continue;
            if (c < vc) vc = c;
            seen_a[n] = a, seen_n[n] = e - a;
            n++;
        }
    }
    if (n < 2) vc = LINT_VC_NONE;
    if (bind_set(&s->owners, root, root_n, vc, 0)) s->rc = UTIL_ENOMEM;
    return vc;
}

static int term_class(scan *s, const char *path, size_t n, size_t root_n, int idx0, int *subday, int *known) {
    *subday = 0;
    *known = 0;
    const char *root = path, *path0 = path;
    int dot = root_n > 0 && (*root == '.' || (*root == '$' && root_n > 1 && root[1] == '.'));
    while (root_n > 0 && (*root == '$' || *root == '.')) root++, root_n--, n--, path++;
    s->by_root = root_n < n && in_list(root, root_n, k_stable_roots); /* tools.memory.view */
    if (dot && lint_tmpl_word_is(root, root_n, "System") && root_n == n) {
        *known = 1; /* a Go chat template's .System: the system message, as system_message */
        return LINT_VC_NONE;
    }
    if (root_n == 0) {
        *known = 1; /* "." or "$": the current item */
        bind *b = bind_get(&s->binds, ".", 1);
        return b ? b->vclass : LINT_VC_NONE;
    }
    /* inside a Go range, .Name is a field of the item: of a tool in
     * `range .Functions`, the tool's name (stable), not a user's; a date
     * or time by its name still counts */
    bind *item = dot && *path0 == '.' && s->n_go_range > 0 ? bind_get(&s->binds, ".", 1) : NULL;
    if (item && item->known && !item->item && item->vclass == LINT_VC_NONE) {
        int k2;
        int vc = lint_detect_name_info(s->d, s->cfg, path, n, subday, &k2);
        *known = 1;
        return vc == LINT_VC_DAY || vc == LINT_VC_CALL ? vc : LINT_VC_NONE;
    }
    /* a GitHub Actions context is read by its members (inputs.version); a
     * bare {{{inputs}}} is a variable of that name (an agent's subtask results) */
    if (root_n < n &&
        (lint_tmpl_word_is(root, root_n, "github") || lint_tmpl_word_is(root, root_n, "inputs") ||
         lint_tmpl_word_is(root, root_n, "steps") || lint_tmpl_word_is(root, root_n, "needs") ||
         lint_tmpl_word_is(root, root_n, "matrix") || lint_tmpl_word_is(root, root_n, "secrets") ||
         lint_tmpl_word_is(root, root_n, "vars"))) {
        *known = 1;
        return github_class(path, n);
    }
    if (lint_tmpl_word_is(root, root_n, "messages") || lint_tmpl_word_is(root, root_n, "conversation") ||
        msgs_alias(s, root, root_n)) {
        *known = 1;
        return idx0 ? LINT_VC_NONE : LINT_VC_TURN; /* messages[0]: the system message */
    }
    bind *b = bind_get(&s->binds, path, n);
    if (!b) {
        b = bind_get(&s->binds, root, root_n);
        /* an attribute of a stable object can still be volatile by name:
         * system_message.current_date */
        if (b && b->vclass == LINT_VC_NONE && root_n < n) {
            int k2;
            int vc = lint_detect_name_info(s->d, s->cfg, path + root_n + 1, n - root_n - 1, subday, &k2);
            if (vc == LINT_VC_DAY || vc == LINT_VC_CALL) {
                *known = 1;
                return vc;
            }
        }
    }
    if (b) {
        *known = b->known;
        *subday = b->subday;
        return b->vclass;
    }
    if (!bind_get(&s->seen, root, root_n) && bind_set(&s->seen, root, root_n, 0, 0)) s->rc = UTIL_ENOMEM;
    int vc = lint_detect_name_info(s->d, s->cfg, path, n, subday, known);
    /* {{example}} beside examples: one of them, picked per request */
    if (root_n == n && s->n_picks && lint_tmpl_is_pick(s, root, root_n) && vc == LINT_VC_NONE) {
        *known = 1;
        return LINT_VC_TURN;
    }
    if (vc != LINT_VC_NONE || *known) return vc;
    if (root_n < n) {
        vc = lint_detect_name_info(s->d, s->cfg, root, root_n, subday, known);
        if (vc != LINT_VC_NONE) return vc;
    }
    if (lint_tmpl_is_input(s, root, root_n)) {
        *known = 1;
        return LINT_VC_TURN; /* declared as an input of the prompt: given per request */
    }
    if (!s->t->is_template && root_n == n && code_path_term(s, path, n)) {
        *known = 1;
        return LINT_VC_SESSION; /* `{{memory_directory}}/` in a rendered prompt */
    }
    if (in_list(root, root_n, k_stable_roots) ||
        (root_n > 6 && memcmp(root + root_n - 6, "_token", 6) == 0)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    if (root_n < n) { /* an unknown object's attribute can say: ctx.cwd, env.date */
        int k2 = 0, s2 = 0;
        (void)lint_detect_name_info(s->d, s->cfg, root, root_n, &s2, &k2);
        const char *seg = path + n;
        while (seg > path && seg[-1] != '.') seg--;
        size_t sl = (size_t)(path + n - seg);
        static const char *const k_generic[] = {"name", "title", "type", "kind", "label", "version", NULL};
        if (!k2 && seg > path && sl > 0 && !in_list(seg, sl, k_generic)) {
            for (size_t k = 0; k < sl; k++)
                if (!lint_tmpl_is_ident(seg[k])) return LINT_VC_NONE;
            vc = lint_detect_name_info(s->d, s->cfg, seg, sl, subday, known);
            if (vc != LINT_VC_NONE) return vc;
            *known = 0;
        }
        /* a generic attribute (project.name) of a record of the request */
        if (!k2 && seg > path && in_list(seg, sl, k_generic) && (vc = owner_class(s, root, root_n))) {
            *known = 1;
            return vc;
        }
        /* the run's state object (state.specification.description,
         * state.branch.project.name) holds what the run is about and has done
         * so far: it changes as the run goes, whatever the attribute says */
        if (lint_tmpl_word_is(root, root_n, "state")) {
            *known = 1;
            return LINT_VC_TURN;
        }
    }
    return LINT_VC_NONE;
}

/* --- expressions -------------------------------------------------------------- */

enum { EM_OUTPUT = 0, EM_SET, EM_COND, EM_ARGS };

typedef struct eval {
    int vclass, subday;
    size_t terms;                /* classed or unknown terms */
    size_t vis_strings;          /* visible string literals */
    size_t first_v_a, first_v_b; /* first volatile term */
    size_t first_u_a, first_u_b; /* first unknown term */
    int unknown;                 /* an unknown term was seen */
    int has_call;                /* a macro or function call */
    size_t strings;              /* string literals, visible or not */
    int concat;                  /* '+' or '~': text is being built */
    int text_terms;              /* terms bound to prompt text */
    int by_root;                 /* a term stable only by its root object (tools.memory.view) */
} eval;

/* Visible pieces of an expression, collected so the tag's remainder can be
 * made quiet. */
typedef struct vis {
    lint_range *v;
    size_t n, cap;
} vis;

static void vis_add(scan *s, vis *v, size_t a, size_t b) {
    if (!v || b <= a || s->rc) return;
    if (util_grow(&v->v, &v->cap, v->n + 1, sizeof *v->v)) {
        s->rc = UTIL_ENOMEM;
        return;
    }
    v->v[v->n].start = a;
    v->v[v->n++].end = b;
}

static size_t skip_string(const char *d, size_t i, size_t b) {
    char q = d[i++];
    while (i < b && d[i] != q) {
        if (d[i] == '\\' && i + 1 < b) i++;
        i++;
    }
    return i < b ? i + 1 : b;
}

/* End of the bracketed group opening at i ( '(' or '[' ), strings skipped. */
static size_t skip_group(const char *d, size_t i, size_t b) {
    int depth = 0;
    while (i < b) {
        char c = d[i];
        if (c == '"' || c == '\'') {
            i = skip_string(d, i, b);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) return i + 1;
        }
        i++;
    }
    return b;
}

static int count_alpha_words(const char *s, size_t n) {
    int w = 0, in = 0;
    for (size_t i = 0; i < n; i++) {
        int a = isalpha((unsigned char)s[i]) || ((unsigned char)s[i] & 0x80);
        if (a && !in) w++;
        in = a;
    }
    return w;
}

static void eval_expr(scan *s, size_t a, size_t b, int mode, eval *ev, vis *vv);

/* Whether text has a word outside markup (<tag>, <|token|>) and escapes. */
static int has_words(const char *p, size_t n) {
    int run = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '<') {
            const char *e = memchr(p + i, '>', n - i);
            if (e) {
                i = (size_t)(e - p);
                run = 0;
                continue;
            }
        }
        if (p[i] == '\\') {
            i++;
            run = 0;
            continue;
        }
        run = isalpha((unsigned char)p[i]) ? run + 1 : 0;
        if (run >= 2) return 1;
    }
    return 0;
}

static int macro_index(const scan *s, const char *name, size_t n) {
    for (size_t m = 0; m < s->n_macros; m++)
        if (s->macros[m].name_b - s->macros[m].name_a == n &&
            memcmp(s->t->data + s->macros[m].name_a, name, n) == 0)
            return (int)m;
    return -1;
}

/* Reads a term at i: a name, then .name, [..] and (..) parts. */
static size_t eval_term(scan *s, size_t i, size_t b, int mode, int filter, eval *ev, vis *vv, int *was_kw) {
    const char *d = s->t->data;
    size_t st = i;
    if (d[i] == '$' || d[i] == '@' || d[i] == '.') i++;
    while (i < b && lint_tmpl_is_ident(d[i])) i++;
    size_t root_end = i;
    int idx0 = 0, call = 0;
    size_t call_a = 0, call_b = 0, path_end = i;
    for (;;) {
        if (i + 1 < b && d[i] == '.' && is_ident_start(d[i + 1])) {
            i++;
            while (i < b && lint_tmpl_is_ident(d[i])) i++;
            path_end = i;
            continue;
        }
        if (i < b && d[i] == '[') {
            size_t e = skip_group(d, i, b);
            size_t k = i + 1;
            while (k < e && d[k] == ' ') k++;
            if (k < e && isdigit((unsigned char)d[k]) && (k + 1 >= e || !isdigit((unsigned char)d[k + 1])) &&
                path_end == root_end &&
                (d[k] == '0' || lint_tmpl_system_slot(s->t, d + st, root_end - st, d[k])))
                idx0 = 1;
            i = e;
            continue;
        }
        if (i < b && d[i] == '(') {
            size_t e = skip_group(d, i, b);
            call = 1;
            call_a = i + 1;
            call_b = e > call_a ? e - 1 : call_a;
            i = e;
            continue;
        }
        break;
    }
    *was_kw = 0;
    const char *root = d + st;
    size_t rn = root_end - st;
    if (!filter && !call && in_list(root, rn, k_keywords)) {
        *was_kw = 1;
        return root_end;
    }
    if (!filter && !call && lint_tmpl_word_is(root, rn, "context")) { /* "with context": a keyword */
        size_t k = st;
        while (k > 0 && (d[k - 1] == ' ' || d[k - 1] == '\t')) k--;
        size_t w = k;
        while (w > 0 && lint_tmpl_is_ident(d[w - 1])) w--;
        if (lint_tmpl_word_is(d + w, k - w, "with") || lint_tmpl_word_is(d + w, k - w, "without")) {
            *was_kw = 1;
            return root_end;
        }
    }
    if (filter) { /* a filter name: only its arguments matter */
        if (call) eval_expr(s, call_a, call_b, EM_ARGS, ev, NULL);
        return i;
    }
    int subday = 0, known = 0, vc;
    s->by_root = 0;
    if (call) {
        eval sub = {0};
        eval_expr(s, call_a, call_b, EM_ARGS, &sub, NULL);
        vc = volatile_function(root, path_end - st, &subday);
        if (lint_tmpl_word_is(root, rn, "strftime_now") || lint_tmpl_word_is(root, rn, "strftime")) {
            /* the format decides: strftime_now('%H:%M') is finer than a day */
            subday = 0;
            for (size_t k = call_a; k < call_b && !subday; k++)
                if (d[k] == '%') subday = format_subday(d + k, call_b - k);
            vc = subday ? LINT_VC_CALL : LINT_VC_DAY;
        }
        if (sub.vclass > vc) vc = sub.vclass, subday = sub.subday;
        /* a method called on a value (question.strip(), name|upper is a
         * filter): what it returns is that value, transformed */
        size_t dot = path_end;
        while (dot > root_end && d[dot - 1] != '.') dot--;
        if (dot > root_end) {
            int osd = 0, ok = 0;
            int ovc = term_class(s, d + st, dot - 1 - st, rn, idx0, &osd, &ok);
            if (ovc > vc) vc = ovc, subday = osd;
        }
        known = 1;
        ev->has_call = 1;
        /* a call of a macro defined in this file (first pass: recorded) */
        for (size_t m = 0; m < s->n_macros && !s->emit; m++)
            if (s->macros[m].name_b - s->macros[m].name_a == rn &&
                memcmp(d + s->macros[m].name_a, root, rn) == 0) {
                if (util_grow(&s->calls, &s->cap_calls, s->n_calls + 1, sizeof *s->calls)) {
                    s->rc = UTIL_ENOMEM;
                    break;
                }
                call_site *cs = &s->calls[s->n_calls++];
                cs->callee = m;
                cs->caller = s->cur_macro_end > st ? s->cur_macro : -1;
                cs->in_vloop = s->quiet_until > st;
            }
    } else {
        vc = term_class(s, d + st, path_end - st, rn, idx0, &subday, &known);
        ev->by_root |= s->by_root;
    }
    int self = s->self && path_end - st == s->self_n && memcmp(d + st, s->self, s->self_n) == 0;
    ev->terms++;
    if (vc > ev->vclass) ev->vclass = vc;
    ev->subday |= subday && vc != LINT_VC_NONE;
    if (vc != LINT_VC_NONE) {
        if (!ev->first_v_b && !self) ev->first_v_a = st, ev->first_v_b = i;
    } else if (!known) {
        ev->unknown = 1;
        if (!ev->first_u_b) ev->first_u_a = st, ev->first_u_b = i;
    }
    bind *bt = call ? NULL : bind_get(&s->binds, d + st, path_end - st);
    if (!bt && !call && rn < path_end - st) bt = bind_get(&s->binds, root, rn);
    if (bt && bt->text && vc == LINT_VC_NONE) ev->text_terms++;
    if (bt && bt->item) return i; /* an item of an unknown list: reported at its loop */
    int mi = call ? macro_index(s, root, rn) : -1;
    int silent = lint_tmpl_word_is(root, rn, "raise_exception") || (mi >= 0 && !s->macros[mi].text);
    if (vc == LINT_VC_NONE && known && !silent) {
        /* stable text the placeholder or macro call stands for (special
         * tokens are markup); in an assignment only text built earlier */
        int token = rn > 5 && memcmp(root + rn - 5, "token", 5) == 0;
        int meta = lint_tmpl_word_is(root, rn, "loop") || root[0] == '@' ||
                   lint_tmpl_word_is(root, rn, "namespace") || lint_tmpl_word_is(root, rn, "range");
        if (!token && !meta && (mode == EM_OUTPUT || (mode == EM_SET && bt && bt->text)))
            vis_add(s, vv, st, i);
    }
    return i;
}

/* Whether the string literal [i, e) is "now" or "today" piped into a date
 * filter ('now' | date: '%Y-%m-%d' in Liquid, "now" | date("YYYY") in
 * Nunjucks), or an empty string piped into one (askama's and Tera's custom
 * filters need an input, so {{ ""|current_date }} calls one on nothing:
 * the filter makes the value): the current date. *subday: the format
 * shows the time. A date filter on a field ({{ x|date_format }}) formats
 * that field's value and is not read here. */
static int now_filtered(const char *d, size_t i, size_t e, size_t b, int *subday) {
    size_t n = e - i;
    if (!((n == 5 && !strncasecmp(d + i + 1, "now", 3)) || (n == 7 && !strncasecmp(d + i + 1, "today", 5)) ||
          n == 2))
        return 0;
    size_t k = e;
    while (k < b && d[k] == ' ') k++;
    if (k >= b || d[k] != '|') return 0;
    k++;
    while (k < b && d[k] == ' ') k++;
    size_t w = k;
    while (k < b && lint_tmpl_is_ident(d[k])) k++;
    int dated = 0;
    for (size_t j = w; j + 4 <= k && !dated; j++)
        dated = !strncasecmp(d + j, "date", 4) || !strncasecmp(d + j, "time", 4);
    if (!dated) return 0;
    *subday = 0;
    for (size_t j = k; j < b && !*subday; j++)
        if (d[j] == '%')
            *subday = format_subday(d + j, b - j);
        else if (d[j] == 'H' || (d[j] == 'm' && j + 1 < b && d[j + 1] == 'm'))
            *subday = 1; /* HH:mm */
    return 1;
}

/* Reads an expression, classing its terms and collecting its visible strings
 * (mode EM_OUTPUT: every string that is not compared or a condition; EM_SET:
 * strings of three words or more; others: none). */
static void eval_expr(scan *s, size_t a, size_t b, int mode, eval *ev, vis *vv) {
    const char *d = s->t->data;
    size_t i = a;
    int filter = 0, cond = 0, cmp = 0;
    size_t pend = (size_t)-1; /* vv->n before the last visible string, until it is compared */
    while (i < b && !s->rc) {
        char c = d[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            size_t e = skip_string(d, i, b);
            ev->strings++;
            int sd = 0;
            if (now_filtered(d, i, e, b, &sd)) { /* 'now' | date: '%Y' renders the current date */
                int vc = sd ? LINT_VC_CALL : LINT_VC_DAY;
                if (vc > ev->vclass) ev->vclass = vc;
                ev->subday |= sd;
                ev->terms++;
                if (!ev->first_v_b) ev->first_v_a = i, ev->first_v_b = e;
                i = e;
                continue;
            }
            int show = !cond && !cmp && vv && (mode == EM_OUTPUT || mode == EM_SET);
            if (show && mode == EM_SET && count_alpha_words(d + i, e - i) < 3) show = 0;
            pend = (size_t)-1;
            if (show) {
                /* the string's text, escapes (\n, \") rendering as spaces */
                pend = vv->n;
                size_t from = i + 1, end = e > i + 1 ? e - 1 : i + 1;
                for (size_t k = from; k < end; k++)
                    if (d[k] == '\\' && k + 1 < end) {
                        vis_add(s, vv, from, k);
                        from = k + 2;
                        k++;
                    }
                vis_add(s, vv, from, end);
                ev->vis_strings++;
            }
            cmp = 0;
            i = e;
            continue;
        }
        if (isdigit((unsigned char)c)) {
            while (i < b && (isalnum((unsigned char)d[i]) || d[i] == '.')) i++;
            continue;
        }
        if (isalpha((unsigned char)c) || c == '_') { /* name=value: a keyword argument */
            size_t e = i;
            while (e < b && lint_tmpl_is_ident(d[e])) e++;
            size_t k = e;
            while (k < b && d[k] == ' ') k++;
            if (k < b && d[k] == '=' && (k + 1 >= b || d[k + 1] != '=')) {
                i = k + 1;
                continue;
            }
        }
        if (is_ident_start(c) ||
            (c == '.' && (i + 1 >= b || is_ident_start(d[i + 1]) || d[i + 1] == ' ' || d[i + 1] == '}'))) {
            int kw;
            size_t term_start = i;
            size_t terms0 = ev->terms;
            size_t e = eval_term(s, i, b, cond || cmp ? EM_COND : mode, filter, ev, cond || cmp ? NULL : vv,
                                 &kw);
            if (e == i) e = i + 1;
            (void)terms0;
            if (kw) {
                const char *w = d + term_start;
                size_t wl = e - term_start;
                if (lint_tmpl_word_is(w, wl, "if"))
                    cond = 1;
                else if (lint_tmpl_word_is(w, wl, "else"))
                    cond = 0;
                else if (lint_tmpl_word_is(w, wl, "is") || lint_tmpl_word_is(w, wl, "in") ||
                         lint_tmpl_word_is(w, wl, "not") || lint_tmpl_word_is(w, wl, "eq") ||
                         lint_tmpl_word_is(w, wl, "ne")) {
                    cmp = 1;
                    if (pend != (size_t)-1 && vv) vv->n = pend, ev->vis_strings--;
                }
            }
            pend = (size_t)-1;
            filter = 0;
            i = e;
            continue;
        }
        if (c == '|' && (i + 1 >= b || d[i + 1] != '|')) {
            filter = 1;
            i++;
            continue;
        }
        if (c == '=' || c == '!' || c == '<' || c == '>') {
            if (c != '=' || (i + 1 < b && d[i + 1] == '=') || (i > a && d[i - 1] == '=')) {
                cmp = 1;
                /* a compared string is not text */
                if (pend != (size_t)-1 && vv) vv->n = pend, ev->vis_strings--;
            }
            pend = (size_t)-1;
            i++;
            while (i < b && (d[i] == '=' || d[i] == '>')) i++;
            continue;
        }
        if (c == '(' || c == '[') { /* grouping: read inside, same mode */
            size_t e = skip_group(d, i, b);
            int inert = c == '[' || cond || cmp;
            eval_expr(s, i + 1, e > i + 1 ? e - 1 : i + 1, inert ? EM_COND : mode, ev, inert ? NULL : vv);
            pend = (size_t)-1;
            i = e;
            continue;
        }
        if (c == '+' || c == '~' || c == ',' || c == ':' || c == ')' || c == ']') {
            cmp = 0;
            pend = (size_t)-1;
        }
        if (c == '+' || c == '~') ev->concat = 1;
        i++;
    }
}

/* --- the passes --------------------------------------------------------------------- */

static void push_span(scan *s, lint_spanv *v, size_t a, size_t b, int vclass, int subday) {
    if (!s->emit || s->rc || b <= a) return;
    lint_span sp = {a, b, LINT_K_PLACEHOLDER, vclass, subday, NULL, 0, 0};
    if (lint_spanv_push(v, &sp)) s->rc = UTIL_ENOMEM;
}

static void quiet(scan *s, size_t a, size_t b) {
    if (s->emit && !s->rc && lint_text_add_quiet(s->t, a, b)) s->rc = UTIL_ENOMEM;
}

/* Makes a tag quiet except its visible pieces. */
static void quiet_except(scan *s, const tag *g, vis *v) {
    if (!s->emit) return;
    size_t at = g->start;
    for (size_t i = 0; i < (v ? v->n : 0); i++) {
        quiet(s, at, v->v[i].start);
        if (v->v[i].end > at) at = v->v[i].end;
    }
    quiet(s, at, g->end);
}

static void bind_item(scan *s, const char *name, size_t n, int cls, int subday, int known) {
    if (bind_put(&s->binds, name, n, cls, subday, 1, 0, 1)) {
        s->rc = UTIL_ENOMEM;
        return;
    }
    bind_get(&s->binds, name, n)->item = !known;
}

/* Binds the names of a for/each/range header to the class of what it loops
 * over (the items of an unknown list are reported once, at the loop). */
static void bind_loop_names(scan *s, size_t names_a, size_t names_b, int cls, int subday, int known) {
    const char *d = s->t->data;
    for (size_t i = names_a; i < names_b && !s->rc;) {
        if (is_ident_start(d[i])) {
            if (d[i] == '$' && i + 1 < names_b && lint_tmpl_is_ident(d[i + 1]))
                i++; /* Go's range $i, $x: read as i and x, as terms are */
            size_t e = i + 1;
            while (e < names_b && lint_tmpl_is_ident(d[e])) e++;
            if (!in_list(d + i, e - i, k_keywords)) bind_item(s, d + i, e - i, cls, subday, known);
            i = e;
        } else {
            i++;
        }
    }
    bind_item(s, ".", 1, cls, subday, known);
    bind_item(s, "this", 4, cls, subday, known);
}

/* Whether the term range looks like the whole tag's single value. */
static void span_for(scan *s, const tag *g, const eval *ev, size_t *a, size_t *b) {
    int one_line = !memchr(s->t->data + g->start, '\n', g->end - g->start);
    if (ev->terms <= 1 && ev->vis_strings == 0 && one_line) {
        *a = g->start;
        *b = g->end;
    } else {
        *a = ev->first_v_a;
        *b = ev->first_v_b;
    }
}

/* Whether the body text d[a, b) between a loop's tags renders no words of
 * its own: blank lines, markup tags with no text ("<chunk>", "</article>",
 * "<document_id>"), delimiter lines ("----", "===") and, before a tag on
 * its line, a caption that labels the value ("DocumentID: ", "TITLE:"). */
static int markup_gap(const char *d, size_t a, size_t b) {
    for (size_t q = a; q < b;) {
        size_t le = q;
        while (le < b && d[le] != '\n') le++;
        size_t p = q;
        while (p < le && isspace((unsigned char)d[p])) p++;
        while (p < le) {
            if (d[p] == '<') { /* a tag: a name, no text */
                size_t e = p + 1 + (p + 1 < le && d[p + 1] == '/');
                while (e < le && (lint_tmpl_is_ident(d[e]) || d[e] == '-' || d[e] == ':')) e++;
                if (e >= le || d[e] != '>') return 0;
                p = e + 1;
            } else if (strchr("-=*#_~+", d[p])) {
                p++;
            } else if (le == b) { /* the value's own line: a "Label: " caption */
                size_t e = b;
                while (e > p && isspace((unsigned char)d[e - 1])) e--;
                if (e == p || d[e - 1] != ':' || e - p > 40 || memchr(d + p, '.', e - p)) return 0;
                p = le;
            } else {
                return 0;
            }
            while (p < le && isspace((unsigned char)d[p])) p++;
        }
        q = le + 1;
    }
    return 1;
}

/* Whether the output expression d[p, ub) reads the item of a loop whose
 * names are d[names_a, names_b) (a Go range without names: its dot,
 * ".DocumentID"). */
static int reads_loop_name(const scan *s, const tag *g, size_t names_a, size_t names_b, size_t p, size_t ub) {
    const char *d = s->t->data;
    if (g->go && names_a == names_b) return p < ub && d[p] == '.';
    if (p < ub && d[p] == '$') p++;
    size_t e = p;
    while (e < ub && lint_tmpl_is_ident(d[e])) e++;
    for (size_t n = names_a; n < names_b && e > p;) {
        if (!is_ident_start(d[n])) {
            n++;
            continue;
        }
        size_t ns = d[n] == '$' ? n + 1 : n, ne = n + 1;
        while (ne < names_b && lint_tmpl_is_ident(d[ne])) ne++;
        if (ne - ns == e - p && !memcmp(d + ns, d + p, e - p)) return 1;
        n = ne;
    }
    return 0;
}

/* Where a volatile loop's value enters the text: the first output tag of
 * its body that reads a loop name ("## {{extension.name}}" two lines below
 * the header, "DocumentID: {{ .DocumentID }}" under "<article>"), when the
 * body renders no words before it, only markup (markup_gap); else the
 * header itself. The first byte that differs between two requests is that
 * value's, so that is the line to move. */
static void loop_value_at(const scan *s, size_t i, size_t names_a, size_t names_b, size_t *a, size_t *b) {
    const tag *g = &s->tags.v[i];
    const char *d = s->t->data;
    *a = g->start, *b = g->end;
    for (size_t k = i + 1; k < s->tags.n && (long)k < g->match; k++) {
        const tag *u = &s->tags.v[k];
        if (!markup_gap(d, k == i + 1 ? g->end : s->tags.v[k - 1].end, u->start)) return; /* words first */
        if (u->kind != TK_EXPR) return;
        size_t p = u->a;
        while (p < u->b && (d[p] == ' ' || d[p] == '-')) p++;
        if (reads_loop_name(s, g, names_a, names_b, p, u->b)) *a = u->start, *b = u->end;
        return; /* else another value first */
    }
}

static void do_loop(scan *s, size_t i) {
    tag *g = &s->tags.v[i];
    const char *d = s->t->data;
    size_t in_a = g->a, in_b = g->b, names_a = g->kw_end, names_b = g->kw_end;
    /* for NAMES in EXPR / #each EXPR as |NAMES| / range $i, $x := EXPR /
     * EXPR.each do |NAMES| (split by the dialect's tokenizer) */
    if (g->split) {
        names_a = g->names_a, names_b = g->names_b, in_a = g->in_a, in_b = g->in_b;
    } else if (g->blk == BK_FOR && !g->go) {
        size_t k = g->kw_end;
        for (; k + 3 < g->b; k++)
            if (d[k] == ' ' && d[k + 1] == 'i' && d[k + 2] == 'n' && (d[k + 3] == ' ' || d[k + 3] == '('))
                break;
        names_b = k;
        in_a = k + 3 < g->b ? k + 3 : g->b;
        /* drop a trailing "if cond" / "recursive" */
        in_b = g->b;
    } else if (g->go) {
        const char *as = NULL;
        for (size_t k = g->kw_end; k + 1 < g->b; k++)
            if (d[k] == ':' && d[k + 1] == '=') as = d + k;
        if (as)
            names_b = (size_t)(as - d), in_a = names_b + 2;
        else
            in_a = g->kw_end;
    } else {
        in_a = g->kw_end;
        for (size_t k = g->kw_end; k + 3 < g->b; k++)
            if (d[k] == ' ' && d[k + 1] == 'a' && d[k + 2] == 's' && d[k + 3] == ' ') {
                in_b = k;
                names_a = k + 4, names_b = g->b;
                break;
            }
    }
    eval ev = {0};
    eval_expr(s, in_a, in_b, EM_COND, &ev, NULL);
    int cls = ev.vclass;
    /* no name says: a caption above may ("The currently active extensions
     * are below.": this session's state) */
    if (cls == LINT_VC_NONE && ev.unknown) cls = lint_detect_state_caption(s->d, s->t, g->start, g->end);
    /* a loop over an item of an unknown list (`for d in e`, `for d in
     * e.descs`, inside `for e in entity_descriptions`): its items are unknown
     * too, and reported with the outer loop, not read as stable text */
    size_t r = in_a;
    while (r < in_b && (d[r] == ' ' || d[r] == '(')) r++;
    size_t re = r;
    while (re < in_b && lint_tmpl_is_ident(d[re])) re++;
    const bind *of = re > r ? bind_get(&s->binds, d + r, re - r) : NULL;
    int of_item = of && of->item && cls == LINT_VC_NONE;
    bind_loop_names(s, names_a, names_b, cls, ev.subday, !of_item && (!ev.unknown || cls != LINT_VC_NONE));
    if (g->go && g->match > (long)i &&
        s->n_go_range < (int)(sizeof s->go_range_end / sizeof s->go_range_end[0]))
        s->go_range_end[s->n_go_range++] = s->tags.v[g->match].start;
    int emits = g->match > (long)i && lint_tmpl_body_emits(s, i, (size_t)g->match);
    s->vloop[i] = cls != LINT_VC_NONE && emits;
    quiet_except(s, g, NULL);
    if (cls == LINT_VC_NONE && ev.unknown && emits && s->quiet_until <= g->start)
        push_span(s, s->unknown, g->start, g->end, LINT_VC_NONE, 0);
    if (!s->vloop[i] || s->quiet_until > g->start) return;
    size_t va, vb;
    loop_value_at(s, i, names_a, names_b, &va, &vb);
    push_span(s, s->spans, va, vb, cls, ev.subday);
    size_t end = s->tags.v[g->match].end;
    quiet(s, g->end, end);
    s->quiet_until = end;
    /* a chat template's loop over the messages: everything after it is the
     * conversation's tail, not stable text */
    size_t a = in_a;
    while (a < in_b && d[a] == ' ') a++;
    if (g->go) /* Go (Ollama): range .Messages, range $i, $_ := $.Messages */
        while (a < in_b && (d[a] == '.' || d[a] == '$')) a++;
    size_t w = a;
    while (w < in_b && lint_tmpl_is_ident(d[w])) w++;
    if (s->emit && !s->tail_from &&
        (lint_tmpl_word_is(d + a, w - a, "messages") || lint_tmpl_word_is(d + a, w - a, "loop_messages") ||
         msgs_alias(s, d + a, w - a) || (g->go && lint_tmpl_word_is(d + a, w - a, "Messages"))))
        s->tail_from = end;
}

static void do_set(scan *s, size_t i) {
    tag *g = &s->tags.v[i];
    const char *d = s->t->data;
    size_t k = g->kw_end;
    while (k < g->b && d[k] == ' ') k++;
    if (k < g->b && (d[k] == '$' || d[k] == '@')) k++; /* Velocity's #set( $x = ...), ERB's @x = ... */
    size_t na = k;
    while (k < g->b && (lint_tmpl_is_ident(d[k]) || d[k] == '.' || d[k] == ',' || d[k] == ' ') && d[k] != '=')
        k++;
    size_t nb = k;
    while (nb > na && d[nb - 1] == ' ') nb--;
    if (k < g->b && d[k] == '=') k++;
    eval ev = {0};
    vis v = {0};
    int was_seen = nb > na && bind_get(&s->seen, d + na, nb - na) != NULL;
    s->self = d + na, s->self_n = nb - na;
    eval_expr(s, k, g->b, EM_SET, &ev, &v);
    s->self = NULL;
    /* building prompt text around a new volatile term ("Today is " + today,
     * x + '\n' + doc): the term is where the volatile value enters */
    int builds = ev.vis_strings > 0 || (ev.concat && (ev.strings > 0 || ev.text_terms > 0));
    const char *lastc = d + na;
    for (size_t q = na; q < nb; q++)
        if (d[q] == '.') lastc = d + q + 1;
    int sys_target = nb > na && strncasecmp(lastc, "system", 6) == 0;
    if (ev.vclass != LINT_VC_NONE && builds && ev.first_v_b && s->quiet_until <= g->start &&
        !(sys_target && ev.vclass == LINT_VC_TURN))
        push_span(s, s->spans, ev.first_v_a, ev.first_v_b, ev.vclass, ev.subday);
    /* the target's class: its value's; a name read before it was assigned is
     * an input with a default, so its name counts too */
    int sd = 0, known = 0;
    int name_vc = was_seen ? lint_detect_name_info(s->d, s->cfg, d + na, nb - na, &sd, &known) : LINT_VC_NONE;
    /* the system message taken from the messages (a loop that picks the
     * system role, messages[0]) is stable; dates put into it are not */
    const char *last = d + na;
    for (size_t q = na; q < nb; q++)
        if (d[q] == '.') last = d + q + 1;
    int sysname = nb > na && strncasecmp(last, "system", 6) == 0;
    int val = ev.vclass == LINT_VC_TURN && sysname ? LINT_VC_NONE : ev.vclass;
    int cls = val > name_vc ? val : name_vc;
    int text = ev.vis_strings > 0 || ev.text_terms > 0;
    int msgs = nb > na && msgs_value(s, k, g->b);
    if (nb > na && bind_put(&s->binds, d + na, nb - na, cls, ev.subday | sd,
                            !ev.unknown || cls != LINT_VC_NONE, text, 0))
        s->rc = UTIL_ENOMEM;
    else if (nb > na)
        bind_get(&s->binds, d + na, nb - na)->msgs = msgs;
    quiet_except(s, g, s->quiet_until > g->start ? NULL : &v);
    free(v.v);
}

/* `name arg ...` (a Handlebars or Go helper such as `recall $input`, `json x`):
 * the helper's name is not a value; returns where the arguments start. */
static size_t skip_helper(const scan *s, size_t a, size_t b) {
    const char *d = s->t->data;
    if (a >= b || !(isalpha((unsigned char)d[a]) || d[a] == '_')) return a;
    size_t e = a;
    while (e < b && (lint_tmpl_is_ident(d[e]) || d[e] == '-')) e++;
    if (e >= b || (d[e] != ' ' && d[e] != '\t')) return a;
    if (in_list(d + a, e - a, k_keywords) && !lint_tmpl_word_is(d + a, e - a, "printf") &&
        !lint_tmpl_word_is(d + a, e - a, "print") && !lint_tmpl_word_is(d + a, e - a, "len") &&
        !lint_tmpl_word_is(d + a, e - a, "index"))
        return a;
    size_t k = e;
    while (k < b && (d[k] == ' ' || d[k] == '\t')) k++;
    if (k < b && (is_ident_start(d[k]) || d[k] == '"' || d[k] == '\'' || d[k] == '.' || d[k] == '(')) {
        size_t w = k;
        while (w < b && lint_tmpl_is_ident(d[w])) w++;
        /* `a and b`, `a if c else d`, `x is defined`: Jinja, not a helper */
        if (in_list(d + k, w - k, k_keywords) && w > k) return a;
        return k;
    }
    return a;
}

static void do_expr(scan *s, size_t i) {
    tag *g = &s->tags.v[i];
    if (lint_text_tag_name(s->t, g->start, g->end)) { /* <{{ tag }}>: markup, not a value */
        quiet_except(s, g, NULL);
        return;
    }
    eval ev = {0};
    vis v = {0};
    eval_expr(s, skip_helper(s, g->a, g->b), g->b, EM_OUTPUT, &ev, &v);
    int inside = s->quiet_until > g->start;
    if (ev.vclass == LINT_VC_USER && lint_detect_self_name(s->d, s->t, g->start))
        ev.vclass = LINT_VC_NONE; /* the assistant's own name: configured */
    if (ev.vclass != LINT_VC_NONE && ev.terms == 1 &&
        lint_detect_declared_token(s->d, s->t, g->start, g->end))
        ev.vclass = LINT_VC_NONE; /* a speaker's token the model writes ({{user}}:) */
    /* a value alone in a tag whose name says what it holds
     * (<memory_directory>, <pr_description>): the tag names it when its own
     * name does not, or only its root object does (tools.memory.view) */
    int tc = !inside && ev.vclass == LINT_VC_NONE && !ev.has_call && ev.terms == 1 &&
                     (ev.unknown || ev.by_root)
                 ? lint_detect_tag_class(s->d, s->cfg, s->t, g->start, g->end)
                 : LINT_VC_NONE;
    /* the list or the words around a lone name may class it anew: an
     * installation's paths, a documented default, a user message's material */
    if (!inside && !ev.has_call && tc == LINT_VC_NONE) {
        int fc = lint_detect_field_context(s->d, s->t, g->start, g->end, g->a, g->b, ev.vclass);
        if (fc == LINT_VC_NONE && ev.vclass != LINT_VC_NONE) ev.vclass = LINT_VC_NONE, ev.unknown = 0;
        if (fc != LINT_VC_NONE && ev.vclass == LINT_VC_NONE) tc = fc;
    }
    if (tc != LINT_VC_NONE) {
        push_span(s, s->spans, g->start, g->end, tc, 0);
        v.n = 0; /* the value is not known stable text */
    } else if (!inside && ev.vclass != LINT_VC_NONE) {
        size_t a, b;
        span_for(s, g, &ev, &a, &b);
        push_span(s, s->spans, a, b, ev.vclass, ev.subday);
    } else if (!inside && ev.unknown && !ev.has_call) {
        /* no name or binding says: the words before it may */
        int sd = 0;
        int wc = lint_detect_context_class(s->d, s->t, g->start, &sd);
        if (wc == LINT_VC_NONE) wc = lint_detect_state_caption(s->d, s->t, g->start, g->end);
        if (wc == LINT_VC_NONE && lint_detect_framed_input(s->t, g->start, g->end)) wc = LINT_VC_TURN;
        if (wc != LINT_VC_NONE)
            push_span(s, s->spans, g->start, g->end, wc, sd);
        else if (ev.terms <= 1 && lint_detect_declared_token(s->d, s->t, g->start, g->end))
            ; /* a speaker's token the model writes: text */
        else if (ev.terms <= 1)
            push_span(s, s->unknown, g->start, g->end, LINT_VC_NONE, 0);
        else
            push_span(s, s->unknown, ev.first_u_a, ev.first_u_b, LINT_VC_NONE, 0);
        v.n = 0; /* an unknown value is not known stable text */
    }
    quiet_except(s, g, inside ? NULL : &v);
    free(v.v);
}

/* The partial an include renders ({% include 'user_context.j2' %}, Go's
 * {{template "history" .}}, Handlebars' {{> user_profile}}) is not in view;
 * its name is what there is to go on, read as a placeholder's would be: a
 * partial named for the user, the request's context or the conversation
 * holds per-request text, one named for tools or rules is fixed, and one
 * whose name says nothing stays the stable text it was taken for. A base
 * layout ({% extends %}) wraps the file rather than standing in it. */
static void do_include(scan *s, size_t i) {
    const tag *g = &s->tags.v[i];
    const char *d = s->t->data;
    size_t a = g->a, b = g->b;
    if (s->quiet_until > g->start || lint_tmpl_word_is(d + a, lint_tmpl_word_end(d, a, b) - a, "extends"))
        return;
    if (a < b && d[a] == '>') { /* {{> name}}: the name up to a space */
        a++;
        while (a < b && d[a] == ' ') a++;
        b = a;
        while (b < g->b && d[b] != ' ' && d[b] != '\t') b++;
    } else { /* the first quoted string: include "x", template "x" */
        while (a < b && d[a] != '"' && d[a] != '\'') a++;
        if (a >= b) return;
        char q = d[a++];
        size_t e = a;
        while (e < b && d[e] != q) e++;
        if (e >= b) return;
        b = e;
    }
    for (size_t k = a; k < b; k++) /* the file's name, without its folder */
        if (d[k] == '/') a = k + 1;
    size_t e = a; /* and without its extensions: user_context.j2, x.md.tpl */
    while (e < b && d[e] != '.') e++;
    if (e == a) return;
    /* A partial whose last word says it is prompt text (error_log_prompt,
     * review_instructions) holds the instructions about its first words, not
     * their values. */
    size_t w = e;
    while (w > a && d[w - 1] != '_' && d[w - 1] != '-') w--;
    static const char *const text_words[] = {"prompt", "prompts",    "instructions",
                                             "rules",  "guidelines", "guide"};
    for (size_t k = 0; k < sizeof text_words / sizeof *text_words; k++)
        if (lint_tmpl_word_is(d + w, e - w, text_words[k])) return;
    int sd = 0, known = 0;
    int vc = lint_detect_name_info(s->d, s->cfg, d + a, e - a, &sd, &known);
    if (vc != LINT_VC_NONE) push_span(s, s->spans, g->start, g->end, vc, sd);
}

static void do_macro_open(scan *s, size_t i) {
    tag *g = &s->tags.v[i];
    const char *d = s->t->data;
    size_t k = g->kw_end;
    while (k < g->b && d[k] == ' ') k++;
    if (k < g->b && (d[k] == '$' || d[k] == '@')) k++; /* Velocity's #set( $x = ...), ERB's @x = ... */
    size_t na = k;
    while (k < g->b && lint_tmpl_is_ident(d[k])) k++;
    /* parameters hold what the caller passes: known, classed at the call */
    for (size_t p = k; p < g->b && !s->rc; p++)
        if (is_ident_start(d[p])) {
            size_t e = p;
            while (e < g->b && lint_tmpl_is_ident(d[e])) e++;
            if (bind_put(&s->binds, d + p, e - p, LINT_VC_NONE, 0, 1, 0, 1)) s->rc = UTIL_ENOMEM;
            while (e < g->b && d[e] != ',') e++;
            p = e;
        }
    quiet_except(s, g, NULL);
    if (s->emit) {
        for (size_t m = 0; m < s->n_macros; m++)
            if (s->macros[m].open == (long)i && s->macros[m].quiet && s->quiet_until <= g->start) {
                quiet(s, g->end, s->macros[m].end);
                s->quiet_until = s->macros[m].end;
            }
        return;
    }
    if (util_grow(&s->macros, &s->cap_macros, s->n_macros + 1, sizeof *s->macros)) {
        s->rc = UTIL_ENOMEM;
        return;
    }
    macro *m = &s->macros[s->n_macros];
    m->name_a = na, m->name_b = k, m->open = (long)i, m->close = g->match;
    m->end = g->match > (long)i ? s->tags.v[g->match].end : g->end;
    m->quiet = 0;
    m->text = 0;
    /* does the body render words: text between tags, strings it outputs, or
     * what it outputs that is not a string (a value) */
    size_t close = g->match > (long)i ? (size_t)g->match : i;
    for (size_t t2 = i; t2 < close && !m->text; t2++) {
        const tag *x = &s->tags.v[t2], *y = &s->tags.v[t2 + 1];
        if (has_words(d + x->end, y->start - x->end)) m->text = 1;
        if (t2 > i && x->kind == TK_EXPR) {
            for (size_t q = x->a; q < x->b && !m->text; q++) {
                if (d[q] != '"' && d[q] != '\'') {
                    if (is_ident_start(d[q]) && !(q + 3 < x->b && !memcmp(d + q, "raise", 5))) {
                        size_t e2 = q;
                        while (e2 < x->b && (lint_tmpl_is_ident(d[e2]) || d[e2] == '.')) e2++;
                        int tok = e2 - q > 5 && !memcmp(d + e2 - 5, "token", 5);
                        if (!in_list(d + q, e2 - q, k_keywords) && !tok && e2 < x->b && d[e2] != '(')
                            m->text = 1;
                        q = e2 - 1;
                    }
                    continue;
                }
                size_t e = skip_string(d, q, x->b);
                if (has_words(d + q + 1, e - q - 2 < e ? e - q - 2 : 0)) m->text = 1;
                q = e - 1;
            }
        }
    }
    s->cur_macro = (long)s->n_macros++;
    s->cur_macro_end = m->end;
}

/* A macro is part of a volatile loop when it is called, and every call is
 * inside such a loop or inside a macro that is (a fixpoint over the calls). */
static void resolve_macros(scan *s) {
    for (size_t m = 0; m < s->n_macros; m++) {
        int any = 0;
        for (size_t c = 0; c < s->n_calls; c++) any |= s->calls[c].callee == m;
        s->macros[m].quiet = any;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t c = 0; c < s->n_calls; c++) {
            const call_site *cs = &s->calls[c];
            macro *m = &s->macros[cs->callee];
            if (!m->quiet || cs->in_vloop) continue;
            if (cs->caller >= 0 && s->macros[cs->caller].quiet) continue;
            m->quiet = 0;
            changed = 1;
        }
    }
}

static void run_pass(scan *s) {
    bind_clear(&s->binds);
    bind_clear(&s->seen);
    s->quiet_until = 0;
    s->cur_macro = -1;
    s->cur_macro_end = 0;
    s->n_go_range = 0;
    for (size_t i = 0; i < s->tags.n && !s->rc; i++) {
        tag *g = &s->tags.v[i];
        while (s->n_go_range > 0 && s->go_range_end[s->n_go_range - 1] <= g->start) s->n_go_range--;
        if (s->emit && !s->rc && lint_text_add_tag(s->t, g->start, g->end)) s->rc = UTIL_ENOMEM;
        switch (g->kind) {
        case TK_EXPR: do_expr(s, i); break;
        case TK_SET: do_set(s, i); break;
        case TK_OPEN:
            if (g->blk == BK_FOR || g->blk == BK_HB_EACH || g->blk == BK_HB_SECTION)
                do_loop(s, i);
            else if (g->blk == BK_MACRO)
                do_macro_open(s, i);
            else {
                /* conditions are read for the names they mention (inputs) */
                eval ev = {0};
                eval_expr(s, g->kw_end, g->b, g->blk == BK_CALL ? EM_ARGS : EM_COND, &ev, NULL);
                quiet_except(s, g, NULL);
            }
            break;
        case TK_MID: {
            eval ev = {0};
            eval_expr(s, g->kw_end > g->a ? g->kw_end : lint_tmpl_word_end(s->t->data, g->a, g->b), g->b,
                      EM_COND, &ev, NULL);
            quiet_except(s, g, NULL);
            break;
        }
        case TK_INCLUDE: do_include(s, i); break;
        default:
            if (g->kind == TK_OTHER && s->quiet_until <= g->start &&
                lint_tmpl_word_is(s->t->data + g->a, lint_tmpl_word_end(s->t->data, g->a, g->b) - g->a,
                                  "now")) {
                /* {% now 'utc', '%Y-%m-%d' %} (jinja2-time): the current date */
                int sd = format_subday(s->t->data + g->a, g->b - g->a);
                push_span(s, s->spans, g->start, g->end, sd ? LINT_VC_CALL : LINT_VC_DAY, sd);
            }
            quiet_except(s, g, NULL);
        }
    }
}

/* --- the entry point ----------------------------------------------------------------- */

/* Role of a role marker: a {{role "x"}} tag or a line that is only a role
 * word ("assistant:", "# user:"). 0 none, 1 user/system, 2 assistant. */
static int role_of(const char *p, size_t n) {
    static const char *const k_asst[] = {"assistant", "model", "ai", "bot", NULL};
    static const char *const k_user[] = {"user", "human", "system", NULL};
    while (n > 0 && (*p == '#' || *p == '*' || *p == ' ' || *p == '"' || *p == '\'')) p++, n--;
    while (n > 0 && (p[n - 1] == ':' || p[n - 1] == '*' || p[n - 1] == ' ' || p[n - 1] == '"' ||
                     p[n - 1] == '\'' || p[n - 1] == '\r'))
        n--;
    for (const char *const *w = k_asst; *w; w++)
        if (strlen(*w) == n && strncasecmp(p, *w, n) == 0) return 2;
    for (const char *const *w = k_user; *w; w++)
        if (strlen(*w) == n && strncasecmp(p, *w, n) == 0) return 1;
    return 0;
}

/* Text after the last role marker, when that marker is the assistant's and a
 * user turn came before it, is a prefill of the answer, not prompt text that
 * could be cached ahead of the request. */
static void mark_prefill(scan *s) {
    lint_text *t = s->t;
    const char *d = t->data;
    size_t last_line = (size_t)-1;
    int last_role = 0, saw_user = 0, user_before_last = 0;
    size_t ti = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t ls = t->line_start[i], le = lint_text_line_end(t, i);
        int role = 0;
        for (; ti < s->tags.n && s->tags.v[ti].start < le; ti++) {
            const tag *g = &s->tags.v[ti];
            if (g->start < ls) continue;
            size_t a = g->a;
            if (d[a] == '#') a++;
            if (g->b - a > 5 && memcmp(d + a, "role", 4) == 0 && (d[a + 4] == ' '))
                role = role_of(d + a + 5, g->b - a - 5);
        }
        if (!role && !(t->flags[i] & (LINT_LF_FENCE | LINT_LF_FRONTMATTER)) && le - ls < 40)
            role = role_of(d + ls, le - ls);
        if (!role) continue;
        if (role == 1) saw_user = 1;
        if (role == 2) user_before_last = saw_user;
        last_role = role;
        last_line = i;
    }
    if (last_role != 2 || !user_before_last) return;
    for (size_t i = last_line + 1; i < t->n_lines; i++) t->flags[i] |= LINT_LF_PREFILL;
}

static void mark_no_output(lint_text *t) {
    for (size_t i = 0; i < t->n_lines; i++) {
        t->flags[i] &= (unsigned char)~LINT_LF_NO_OUTPUT; /* lint_text's guess, redone here */
        if ((t->flags[i] & LINT_LF_FRONTMATTER) || lint_text_cache_annotation(t, i)) {
            t->flags[i] |= LINT_LF_NO_OUTPUT;
            continue;
        }
        size_t s = t->line_start[i], e = lint_text_line_end(t, i);
        int any_tag = 0, text = 0;
        for (size_t k = s; k < e && !text;) {
            if (lint_text_in_quiet(t, k)) {
                any_tag = 1;
                size_t q = lint_text_quiet_end(t, k);
                k = q > k ? q : k + 1;
                continue;
            }
            if (!isspace((unsigned char)t->data[k])) text = 1;
            k++;
        }
        if (any_tag && !text) t->flags[i] |= LINT_LF_NO_OUTPUT;
    }
}

/* Fills t->branch from the block tags: for each line with no text, the
 * first tag that starts on it (tags are in text order). */
static int mark_branches(scan *s) {
    lint_text *t = s->t;
    free(t->branch);
    t->branch = NULL;
    if (!s->tags.n || !t->n_lines) return UTIL_OK;
    if (!(t->branch = calloc(t->n_lines, 1))) return UTIL_ENOMEM;
    size_t ti = 0;
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t ls = t->line_start[i], le = lint_text_line_end(t, i);
        while (ti < s->tags.n && s->tags.v[ti].start < ls) ti++;
        if (ti == s->tags.n || s->tags.v[ti].start >= le || !(t->flags[i] & LINT_LF_NO_OUTPUT)) continue;
        const tag *g = &s->tags.v[ti];
        const char *w = t->data + g->a;
        size_t wl = g->kw_end > g->a ? g->kw_end - g->a : 0;
        if (wl && (*w == '#' || *w == '^')) w++, wl--;
        int with = lint_tmpl_word_is(w, wl, "with"), cond = with || lint_tmpl_word_is(w, wl, "if");
        t->branch[i] = g->kind == TK_MID                               ? LINT_BR_ELSE
                       : g->kind == TK_CLOSE                           ? LINT_BR_CLOSE
                       : g->kind != TK_OPEN                            ? 0
                       : g->blk == BK_IF || g->blk == BK_HB_IF || cond ? LINT_BR_COND
                                                                       : LINT_BR_OPEN;
    }
    return UTIL_OK;
}

/* Whether rel is a Handlebars or Mustache file (dotprompt is Handlebars). */
static int hbs_file(const char *rel) {
    static const char *const k[] = {".hbs", ".handlebars", ".mustache", ".prompt", NULL};
    return lint_name_ends_with(rel, k);
}

int lint_tmpl_scan(const lint_detect *d, const lint_config *cfg, lint_text *t, const char *rel,
                   lint_spanv *spans, lint_spanv *unknown, util_err *err) {
    scan s;
    memset(&s, 0, sizeof s);
    s.d = d, s.cfg = cfg, s.t = t, s.spans = spans, s.unknown = unknown;
    s.hbs_escape = hbs_file(rel);
    s.dialect = lint_tmpl_dialect(t, rel);
    size_t fm = lint_tmpl_file_kind(t, rel, s.dialect);
    int rc = UTIL_OK;
    if (fm != (size_t)-1) {
        rc = lint_text_add_quiet(t, 0, lint_text_line_end(t, fm));
        if (!rc) rc = lint_tmpl_read_inputs(&s, 0, fm);
    }
    if (!rc) rc = lint_tmpl_serialized_prompt(&s, rel);
    if (!rc) rc = lint_tmpl_crewai_tasks(&s, rel);
    if (!rc) rc = lint_tmpl_yaml_config(&s, rel);
    if (!rc) rc = lint_tmpl_json_config(&s, rel);
    if (!rc) rc = lint_tmpl_template_map(&s, rel);
    if (!rc) rc = lint_tmpl_yaml_library(&s, rel);
    if (!rc) rc = lint_tmpl_yaml_picks(&s, rel);
    if (!rc) rc = lint_tmpl_gemini_command(&s, rel);
    if (!rc) rc = lint_tmpl_toml_config(&s, rel);
    if (!rc) rc = lint_tmpl_baml(&s, rel);
    if (!rc) rc = lint_tmpl_genagents(&s, rel);
    if (!rc) rc = lint_tmpl_bracket_fields(&s, rel);
    if (!rc) rc = lint_tmpl_n8n_workflow(&s, rel);
    s.code_tags = lint_tmpl_code_tags(t, rel);
    /* a file loaded as written has no tags: its {{x}} and {% %} are text */
    if (!rc && !t->verbatim)
        rc = s.dialect != TD_CURLY ? lint_tmpl_tokenize_dialect(&s) : lint_tmpl_tokenize(&s);
    if (!rc && !t->verbatim) rc = lint_tmpl_match_blocks(&s);
    if (!rc && !t->verbatim) rc = lint_tmpl_count_emitting(&s);
    if (!rc && !t->verbatim) {
        s.emit = 0; /* first pass: macros and their call sites */
        run_pass(&s);
        resolve_macros(&s);
        s.emit = 1;
        if (!s.rc) run_pass(&s);
        rc = s.rc;
    }
    if (!rc) rc = lint_tmpl_pick_lines(&s);
    lint_text_ranges_finish(t);
    if (!rc) mark_no_output(t);
    if (!rc) rc = mark_branches(&s);
    if (!rc) mark_prefill(&s);
    if (!rc && s.tail_from) /* the conversation's tail: after the messages loop */
        for (size_t i = lint_text_line_of(t, s.tail_from) + 1; i < t->n_lines; i++)
            t->flags[i] |= LINT_LF_PREFILL;
    bind_clear(&s.binds);
    bind_clear(&s.seen);
    bind_clear(&s.owners);
    for (size_t i = 0; i < s.n_inputs; i++) free(s.inputs[i]);
    free(s.inputs);
    for (size_t i = 0; i < s.n_picks; i++) free(s.picks[i].key);
    free(s.picks);
    free(s.macros);
    free(s.calls);
    free(s.tags.v);
    free(s.emit_before);
    free(s.vloop);
    if (rc) return util_err_set(err, rc, "out of memory");
    return UTIL_OK;
}
