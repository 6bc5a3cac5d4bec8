/* linter/lint_tmpl_impl.h: what the template files share: lint_tmpl.c (the
 * passes), lint_tmpl_tags.c (tokenizing tags, matching blocks),
 * lint_tmpl_file.c (a file's kind by name and first lines) and
 * lint_tmpl_data.c (prompts inside data files): tags, bindings and the
 * scanner's state. Private to those files. */
#ifndef LINT_TMPL_IMPL_H
#define LINT_TMPL_IMPL_H

#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "lint_config.h"
#include "lint_detect.h"
#include "lint_text.h"

/* --- tags --------------------------------------------------------------------- */

enum {
    TK_EXPR = 0, /* output: {{ x }} */
    TK_COMMENT,
    TK_SET,     /* {% set x = e %} */
    TK_OPEN,    /* a block opener (see blk) */
    TK_CLOSE,   /* a block closer */
    TK_MID,     /* elif / else */
    TK_INCLUDE, /* renders another file: stable text */
    TK_ROLE,    /* {{role "user"}}: a role marker */
    TK_OTHER    /* any other statement: renders nothing */
};

enum {
    BK_NONE = 0,
    BK_FOR,
    BK_IF,
    BK_SET,
    BK_MACRO,
    BK_CALL,
    BK_OTHER,
    BK_HB_EACH,
    BK_HB_SECTION,
    BK_HB_IF,
    BK_GO
};

/* The tag syntax a file's engine reads (lint_tmpl_dialect.c). */
enum {
    TD_CURLY = 0, /* {{ }} {% %} {# #}: Jinja, Handlebars, Go, Liquid (lint_tmpl_tags.c) */
    TD_ERB,       /* Ruby ERB (.erb): <%= x %>, <% if x %>, <%# c %> */
    TD_VELOCITY,  /* Apache Velocity (.vm): $x, ${x.y}, $!x, #if() #foreach() #set() #end, ## */
    TD_ST_ANGLE   /* StringTemplate (.st) with <x> delimiters: <x>, <if(x)>, <endif>, <! c !> */
};

typedef struct tag {
    size_t start, end; /* the whole tag */
    size_t a, b;       /* the inside, without delimiters and whitespace control */
    int kind, blk;
    int go;        /* a Go template action (closed by {{ end }}) */
    long match;    /* index of the matching closer/opener, -1 if none */
    size_t kw_end; /* inside: end of the keyword ("for", "#each", ...) */
    int anyend;    /* an ERB or Velocity block: closed by the next bare end / #end */
    int split;     /* a loop header the dialect split: names [names_a, names_b) over
                    * the value [in_a, in_b) (ERB's `items.each do |item|`) */
    size_t names_a, names_b, in_a, in_b;
} tag;

typedef struct tagv {
    tag *v;
    size_t n, cap;
} tagv;

/* --- bindings: name -> class (open addressing) ------------------------------- */

typedef struct bind {
    char *name;
    int vclass, known, subday;
    int text; /* its value holds prompt text (a string, or text of another) */
    int item; /* an item of a list nothing classes: neither stable text nor volatile */
    int msgs; /* the messages list under another name (set msgs = messages[1:]) */
} bind;

typedef struct bindtab {
    bind *v;
    size_t cap, n;
} bindtab;

/* --- the scanner state ----------------------------------------------------------- */

typedef struct macro {
    size_t name_a, name_b; /* the name in the text */
    long open, close;      /* tag indexes */
    size_t end;            /* end of the closing tag */
    int quiet;             /* every call renders it inside a volatile loop */
    int text;              /* its body renders words (not only markup) */
} macro;

/* A call of a macro: where it stands decides whether the macro's body is
 * part of a volatile loop. */
typedef struct call_site {
    size_t callee;
    long caller;  /* the macro whose body holds the call, or -1 */
    int in_vloop; /* inside the body of a loop over volatile data */
} call_site;

/* A YAML list of a field's alternatives (topics: for {{topic}}): its key,
 * its item lines [first, end) (none for a one-line [a, b] list), and
 * whether a field picks from it (lint_tmpl_is_pick). */
typedef struct pick_list {
    char *key;
    size_t first, end;
    int used;
} pick_list;

typedef struct scan {
    const lint_detect *d;
    const lint_config *cfg;
    lint_text *t;
    tagv tags;
    bindtab binds;
    bindtab seen;     /* names read before any assignment: inputs of the template */
    bindtab owners;   /* unknown objects classed by their attributes (owner_class) */
    const char *self; /* the target of the {% set %} being read */
    size_t self_n;
    char **inputs; /* names declared in the frontmatter (inputs:, input.schema:, sample:) */
    size_t n_inputs;
    pick_list *picks; /* a YAML config's lists of alternatives (topics:, examples:), by key */
    size_t n_picks, cap_picks;
    macro *macros;
    size_t n_macros, cap_macros;
    call_site *calls;
    size_t n_calls, cap_calls;
    long cur_macro; /* the macro whose body is being read, or -1 */
    size_t cur_macro_end;
    size_t *emit_before;    /* per tag: emitting items before it */
    unsigned char *vloop;   /* per tag: an emitting loop over volatile data */
    int emit;               /* second pass: spans and quiet ranges */
    size_t quiet_until;     /* inside a quiet body up to here */
    size_t go_range_end[8]; /* where the Go ranges around the tag being read end */
    int n_go_range;
    size_t tail_from; /* end of the first emitting loop over messages (the
                           * conversation: what follows it is its tail), or 0 */
    lint_spanv *spans, *unknown;
    int by_root;    /* the last term read was stable only by its root (tools.x.y) */
    int code_tags;  /* not Markdown, with tags outside code: its inline code renders */
    int hbs_escape; /* Handlebars or Mustache (.hbs, .handlebars, .mustache, .prompt): \{{x}} is text */
    int dialect;    /* TD_*: which tags the file's engine reads */
    int rc;
} scan;

/* The next occurrence of a closing delimiter at or after a position, cached
 * so that scanning a file with many unclosed openers stays linear. */
typedef struct closer {
    const char *s;
    size_t next;
    int valid, none;
} closer;

static inline int lint_tmpl_is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

static inline int lint_tmpl_word_is(const char *s, size_t n, const char *w) {
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* The next closing delimiter c->s at or after from, or (size_t)-1. */
size_t lint_tmpl_next_plain(const char *d, size_t len, size_t from, closer *c);
/* End of the identifier (or '*') run at i, before b. */
size_t lint_tmpl_word_end(const char *d, size_t i, size_t b);
/* Finds every tag of s->t into s->tags, classed (UTIL_OK or UTIL_ENOMEM). */
int lint_tmpl_tokenize(scan *s);
/* The tag syntax of t, named rel: TD_ERB for .erb, TD_VELOCITY for .vm,
 * TD_ST_ANGLE for a .st file that writes its fields as <x> (no {x} field
 * outside code, and a <name> outside code that no </name> closes), else
 * TD_CURLY (lint_tmpl_dialect.c). */
int lint_tmpl_dialect(const lint_text *t, const char *rel);
/* Finds the tags of s->dialect (not TD_CURLY) into s->tags, classed as the
 * curly tokenizer classes its own (UTIL_OK or UTIL_ENOMEM). */
int lint_tmpl_tokenize_dialect(scan *s);
/* Pairs openers with closers (tag.match). */
int lint_tmpl_match_blocks(scan *s);
/* Fills s->emit_before and allocates s->vloop. */
int lint_tmpl_count_emitting(scan *s);
/* Whether the body between tags open and close renders anything. */
int lint_tmpl_body_emits(const scan *s, size_t open, size_t close);

/* Sets t's file-kind flags (verbatim, curly_only, is_template, fill_ins,
 * command_file, memory_file, skill_file, claude_live, program_template,
 * vscode_prompt), marks the front matter and returns its last line or
 * (size_t)-1 (lint_tmpl_file.c). dialect: lint_tmpl_dialect's; a file of a
 * syntax other than TD_CURLY renders only its own tags. */
size_t lint_tmpl_file_kind(lint_text *t, const char *rel, int dialect);
/* Whether a {{ x }} in t's inline code is a rendered field: not Markdown, not
 * a template format or verbatim file, and {{ }} stand outside code too. */
int lint_tmpl_code_tags(const lint_text *t, const char *rel);
/* Whether rel lies in a folder named prompts, *-prompts or *_prompts. */
int lint_tmpl_prompts_folder(const char *rel);
/* Whether the `---` block ending on line fm of a template is rendered text
 * (`CURRENT_TIME: {{ CURRENT_TIME }}`), not metadata (lint_tmpl_tags.c). */
int lint_tmpl_rendered_frontmatter(const lint_text *t, const char *rel, size_t fm, int markdown);
/* Whether the template tests root[digit]'s role against system or developer
 * (`messages[1].role == 'system'`): a second system message. */
int lint_tmpl_system_slot(const lint_text *t, const char *root, size_t rn, char digit);
/* Whether t opens with a comment declaring its template variables. */
int lint_tmpl_declares_variables(const lint_text *t);
int lint_tmpl_command_frontmatter(const lint_text *t);

/* The prompt's declared inputs (front matter, input_variables): a name filled
 * per call. add returns UTIL_OK or UTIL_ENOMEM (lint_tmpl_data.c). */
int lint_tmpl_add_input(scan *s, const char *p, size_t n);
int lint_tmpl_is_input(const scan *s, const char *p, size_t n);
/* Whether the name p[0, n) is one item of a list of alternatives the file
 * gives under its plural (topic of topics:, example of examples:,
 * lint_tmpl_yaml_picks): one of them is picked per request. Marks the list
 * used. */
int lint_tmpl_is_pick(scan *s, const char *p, size_t n);
/* Marks the item lines of the lists a field picks from as metadata: the
 * field's values, not text sent after it. UTIL_ENOMEM. */
int lint_tmpl_pick_lines(scan *s);
/* Prompts kept as values of data files (lint_tmpl_data.c): each reads rel's
 * kind and, when it is one, marks the other keys as metadata and adds the
 * spans of the fields it fills; UTIL_OK (not that kind too) or UTIL_ENOMEM. */
int lint_tmpl_serialized_prompt(scan *s, const char *rel); /* LangChain YAML/JSON */
int lint_tmpl_crewai_tasks(scan *s, const char *rel);      /* CrewAI tasks YAML */
/* Marks line i as metadata, not prompt text: front matter for the rules,
 * and quiet (with its newline) for the detectors. UTIL_ENOMEM. */
int lint_tmpl_meta_line(lint_text *t, size_t i);
/* Adds the names a prompt's front matter (lines first..last) declares as its
 * inputs: prompty inputs: and sample: keys, dotprompt input: schema: keys.
 * UTIL_ENOMEM. */
int lint_tmpl_read_inputs(scan *s, size_t first, size_t last);
/* Whether the quoted value opened at d[q], closed at d[close], is prompt
 * text (a sentence, a template tag, a lone {field}; json: a JSON slot). */
int lint_tmpl_prompt_string(const char *d, size_t q, size_t close, int json);
/* How the key [p, c) names its value: 0 not as a prompt, 1 a whole prompt
 * (final_prompt, meta_template), 2 one role's part (system_prompt). */
int lint_tmpl_library_key(const char *p, const char *c);
int lint_tmpl_yaml_config(scan *s, const char *rel);    /* prompts among YAML settings */
int lint_tmpl_json_config(scan *s, const char *rel);    /* prompts among JSON settings */
int lint_tmpl_template_map(scan *s, const char *rel);   /* several prompts: template:, commands: */
int lint_tmpl_yaml_library(scan *s, const char *rel);   /* several prompts under top-level keys */
int lint_tmpl_yaml_picks(scan *s, const char *rel);     /* lists of alternatives (s->picks) */
int lint_tmpl_gemini_command(scan *s, const char *rel); /* Gemini CLI .toml */
int lint_tmpl_toml_config(scan *s, const char *rel);    /* prompts among TOML settings */
int lint_tmpl_baml(scan *s, const char *rel);           /* BAML prompt #"..."# blocks */
int lint_tmpl_bracket_fields(scan *s, const char *rel); /* [[NAME]] in .txt prompts */
int lint_tmpl_genagents(scan *s, const char *rel);      /* Generative Agents !<INPUT n>! */
int lint_tmpl_n8n_workflow(scan *s, const char *rel);   /* n8n langchain nodes: sets t->order */

#endif
