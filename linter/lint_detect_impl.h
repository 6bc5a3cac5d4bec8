/* linter/lint_detect_impl.h: what lint_detect.c shares with the other
 * lint_detect_*.c files: the ids of its context patterns, its scanning loop,
 * a one-range match, and the helpers each of them adds. Private to them. */
#ifndef LINT_DETECT_IMPL_H
#define LINT_DETECT_IMPL_H

#include <stddef.h>

#include "lint_config.h" /* pcre2 */
#include "lint_rx.h"
#include "lint_span.h"
#include "lint_text.h"

typedef struct lint_detect lint_detect; /* as in lint_detect.h */

enum {
    RX_EXAMPLE = 0,
    RX_CONST,
    RX_SUBDAY,
    RX_ORDER_MAP,
    RX_ORDER_GLOB,
    RX_ORDER_TOOLS,
    RX_TOOL_HEADING,
    RX_TOOL_ITEM,
    RX_DIR_HTML,
    RX_DIR_JINJA,
    RX_CTX_CALL,
    RX_CTX_DAY,
    RX_CTX_TURN,
    RX_CTX_SESSION,
    RX_CTX_USER,
    RX_DURATION,
    RX_USER_BLOCK,
    RX_USER_ITEM,
    RX_CONTENT_TAG,
    RX_SELF_NAME,
    RX_CTX_STATE,
    RX_STATE_CAPTION,
    RX_CONTENT_CAPTION,
    RX_ROLE_TOKEN,
    RX_DEFAULT,
    RX_STATE_HEADING,
    RX_CTX_SESSION_AFTER,
    RX_PERSONA_LINE,
    RX_USER_HEADING,
    RX_MISC_COUNT
};

/* --- the pattern tables (lint_detect_pat.c) ------------------------------- */

/* How a literal pattern's matches are filtered (on_literal in lint_detect.c). */
enum {
    PM_ALWAYS = 0,
    PM_LABELLED,
    PM_NAME_LINE,
    PM_NAME,
    PM_IDS,
    PM_HASH,
    PM_HEX,
    PM_IP,
    PM_COUNTER,
    PM_RELTIME,
    PM_UUID,
    PM_HOME,
    PM_ENV,
    PM_SHELL,
    PM_INTL /* a date or time whose label in another language lint_detect_intl_label_before finds */
};

typedef struct pat_def {
    const char *re;
    int mode;
    int kind;
    int vclass;
    int subday;
    /* 1: every match that is kept holds a digit on its own line (matches
     * never run across lines): lines without a digit are skipped; 2: a bare
     * weekday on one line: only lines without a digit that hold a weekday's
     * first three letters are searched (scan_digit on those lines); 3: an
     * e-mail address on one line: only lines with an '@'; 4: a "Label:"
     * line: only lines with a ':'; 5: a table row, quoted key, tag or
     * heading: only lines opening with | " ' < or #; 6: as 1, and only in a
     * file with a byte above 0x7f (a label in another language: text in
     * those languages always has one); 7: every line, only in such a file
     * (the pattern itself needs a byte above 0x7f). Rows 6 and 7 are
     * compiled on first use (most files never need them). */
    int digit;
    int rendered; /* lint_span.rendered for its matches */
    /* NULL, or words separated by '|' one of which every match holds (ASCII,
     * case-insensitive): a file holding none of them is not searched, which
     * spares a whole-text pass for a row most files never match */
    const char *needle;
} pat_def;

/* Placeholder names by change frequency (matched whole, case-insensitive). */
typedef struct pat_name {
    int vclass;
    const char *re;
} pat_name;

/* Rows of each table: lint_detect_pat.c does not compile (a static
 * assertion) when a table has another number of rows. */
#define LINT_N_LITERALS     58
#define LINT_N_PLACEHOLDERS 7
#define LINT_N_NAMES        6
extern const pat_def lint_detect_literals[];
extern const char *const lint_detect_placeholders[];
extern const pat_name lint_detect_names[];
extern const char *const lint_detect_misc[];

/* Calls fn for each match of re in t (ov: the ovector). Stops on error. */
typedef int (*lint_match_fn)(const lint_detect *d, const lint_text *t, const PCRE2_SIZE *ov, int ngroups,
                             void *arg);
int lint_detect_scan(const lint_detect *d, pcre2_code *re, const lint_text *t, lint_match_fn fn, void *arg);
/* The compiled context pattern RX_... */
pcre2_code *lint_detect_rx(const lint_detect *d, int which);
/* The match context (its match limit). */
pcre2_match_context *lint_detect_mctx(const lint_detect *d);
/* Whether re matches somewhere in s[a, b). */
int lint_detect_match_in(const lint_detect *d, pcre2_code *re, const char *s, size_t a, size_t b);
/* lint_detect_values.c: filters on a literal's own text. */
/* Whether s[0, n) holds a digit; a hex letter (a-f, A-F). */
int lint_detect_has_digit(const char *s, size_t n);
int lint_detect_has_hex_letter(const char *s, size_t n);
/* Whether w[0, n) is one of the words of the NULL-ended list. */
int lint_detect_word_in(const char *w, size_t n, const char *const *list);
/* The same, ignoring ASCII case. */
int lint_detect_word_in_ci(const char *w, size_t n, const char *const *list);
/* Whether the speaker token t[a, b) ({user}, {{ char }}) is one the file
 * declares as text the model writes, by re (RX_ROLE_TOKEN), or the label of
 * a turn in its examples ("{{$user}}How many ...", "{{$bot}}Convert"): the
 * file is read once for each (lint_text.role_decls). lint_detect_roles.c. */
int lint_detect_roles_declared(pcre2_code *re, pcre2_match_context *mc, const lint_text *t, size_t a,
                               size_t b);
/* IPs that are the same everywhere: loopback, unspecified, broadcast, docs. */
int lint_detect_fixed_ip(const char *s, size_t n);
/* Whether a version word or a 'v' stands right before off ("v1.2.3.4"). */
int lint_detect_version_before(const lint_text *t, size_t off);
/* Whether a sentence ends at the punctuation at i of a line starting at ls
 * ('.', '!', '?', ';' or a table cell's '|'): not after "e.g", "i.e", "etc",
 * "vs", "approx" or an initial. The caller checks the space after it. */
int lint_detect_sentence_end(const char *d, size_t ls, size_t i);
/* Whether the hash at [s, e) after a commit word in running text is cited
 * as the repository's history ("restored in commit 85d8e06", "matches
 * commit 85d8e06"), not captioned as the current state (HEAD, checked out,
 * current commit). */
int lint_detect_history_commit(const lint_text *t, size_t s, size_t e);
/* A dotted number that is a section or a range of them ("Sections 2.1.1.1-2.1.1.5",
 * "§ 1.2.3.4"), not an address. */
int lint_detect_section_number(const lint_text *t, size_t s, size_t e);
/* Kind and change class of a labelled value from its text. */
void lint_detect_classify_value(const char *s, size_t n, lint_span *sp);
/* Values written to look like a value: 0x12345678, abc123, xxxx-xxxx. */
int lint_detect_placeholder_value(const char *v, size_t n);
/* Whether [s, e) sits in a URL (a token holding "://") or is quoted on both
 * sides like a literal in code ('2024-01-15 10:00:00', "C03E...-AA"). */
int lint_detect_in_url_or_quoted(const lint_text *t, size_t s, size_t e);
/* Whether off lies inside a '...' or "..." string that opened earlier on its
 * line after code punctuation ("console.log('Hello, Bolt!')", "= \"Hi Ann\""):
 * a string in code, not words to the model. */
int lint_detect_in_string_literal(const lint_text *t, size_t off);
/* Whether v[0, n) is a capitalised word that is not a person's name
 * (k_not_names). */
int lint_detect_not_name(const char *v, size_t n);
/* Class of a normalized placeholder name (lower case, words split by '_')
 * that no built-in list names whole, from its words (lint_detect_words.c):
 * sets *known when a word says fixed or how often it changes. */
int lint_detect_name_words(const char *norm, size_t n, int *subday, int *known);
/* Whether that name's head names fixed text (a prefix, a note, a template)
 * even where a built-in pattern would read it as volatile. */
int lint_detect_name_fixed(const char *norm, size_t n);
/* Whether the raw name [name, name + len) (camelCase or snake_case) holds a
 * word for how to answer that an author configures (format, schema,
 * examples, tools, rules). */
int lint_detect_name_configured(const char *name, size_t len);
/* Whether the ${ ... } starting at off picks text from state with ?:, && or
 * || (a TS/JS template literal). */
int lint_detect_conditional_interpolation(const lint_text *t, size_t off);
/* Makes each ${ ... } span of sv its whole expression, up to its closing
 * brace, dropping the fields inside it; cont: cut at line ends, the later
 * lines continuations. Sorts sv. UTIL_ENOMEM. */
int lint_detect_interpolation_spans(const lint_text *t, lint_spanv *sv, int cont);
/* Whether the environment value v[0, n) is a fixed one, not the user's
 * (a generic or sandbox path, a placeholder word). */
int lint_detect_fixed_env_value(const char *v, size_t n);
/* Whether the file gives the assistant the name v[0, n) ("You are Santa
 * Claus", "named Grace", "I am Lumo"). */
int lint_detect_persona_name(const lint_text *t, const char *v, size_t n);
/* Whether a ${...} named nm[0, nl) is one VS Code fills in a prompt file:
 * ${file}, ${selection}, ${workspaceFolder}, ${input:name} (lint_detect_words.c). */
int lint_detect_vscode_variable(const char *nm, size_t nl);

/* lint_detect_shape.c: placeholder syntax that is text by where it stands.
 * Whether the {name} at [a, b) is a segment of a path, URL or API route that
 * a Markdown file documents (t->plain_markdown): a '/' next to it or a
 * query's value, in inline code, or in prose between slashes, in a URL or
 * after an HTTP method ("`{lang}/README.md`", "GET /v1/runs/{run_id}/events"),
 * in a file whose every {name} is such a segment; *state caches that
 * per-file answer (0 until read, then 1 or -1). */
int lint_detect_path_pattern(const lint_text *t, size_t a, size_t b, int *state);
/* Whether the bare $name at [a, b) is a shell variable its own line assigns
 * (input=$(cat); echo "$input"; read -r line; for f in). */
int lint_detect_shell_assigned(const lint_text *t, size_t a, size_t b);

/* Whether s[0, n), the text before a date or time on its line, ends with
 * a label of the current date or time in German, French, Spanish,
 * Portuguese, Italian, Russian or Japanese, maybe with a weekday after it
 * ("Aktuelles Datum: Donnerstag, ", "Nous sommes le ", "現在時刻：")
 * (lint_detect_words.c). */
int lint_detect_intl_label_before(const char *s, size_t n);

/* Spans of text pasted in a content tag (per turn) and of the items of a
 * user-settings or environment block (lint_detect_blocks.c), appended to out;
 * the patterns RX_CONTENT_TAG, RX_USER_BLOCK, RX_USER_ITEM come as arguments
 * and are compiled when a line first passes the quick tests before them
 * (lint_detect_blocks.c does not see lint_detect). err: a pattern that does
 * not compile. */
int lint_detect_content_tags(lint_rx_lazy *tag_re, pcre2_match_context *mctx, const lint_text *t,
                             lint_spanv *out, util_err *err);
int lint_detect_user_blocks(lint_rx_lazy *block_re, lint_rx_lazy *item_re, pcre2_match_context *mctx,
                            const lint_text *t, lint_spanv *out, util_err *err);
/* Spans of the block under a caption or heading that introduces per-user
 * or per-request content (RX_CONTENT_CAPTION) in a rendered prompt
 * (lint_detect_blocks.c). */
int lint_detect_content_captions(lint_rx_lazy *cap_re, pcre2_match_context *mctx, const lint_text *t,
                                 lint_spanv *out, util_err *err);
/* The name (in *name, its length returned) of the tag the value [a, b)
 * stands alone in: on its own line between an opening tag line <name ...>
 * and a closing one </name> (blank lines between), or <name>value</name> on
 * one line; 0 when it does not (lint_detect_blocks.c). */
size_t lint_detect_enclosing_tag(const lint_text *t, size_t a, size_t b, const char **name);

/* --- fields filled once (lint_detect_fixed.c) -------------------------------- */

/* Whether name is object.member with the object a deployment's own: the
 * site, app, company or organization a bot is set up for ({{site.url}},
 * {{ app.name }}, Hugo's {{ .Site.Title }}, {{config.timezone}},
 * {{organization.timezone}}). Its settings are filled once per deployment,
 * as the README's product name is; a longer chain (app.user.name) reaches
 * past them to something else. Not platform.* (the user's machine in
 * Python); a tenant's id keeps its class by name (tenant_id per user). */
int lint_detect_deployment_member(const char *name, size_t len);
/* Whether name is object.member with the object the bot or agent itself and
 * the member part of its own account or definition: the record a chat
 * platform returns for the bot (Slack's auth.test: user_id, team, team_id,
 * url), {{ bot.user_id }}, {{ agent.name }}, and what the agent is defined
 * with ({{agent.role}}, {{agent.goal}}, {{agent.backstory}}, as CrewAI's
 * agents are). It is fixed when the bot is installed or the agent defined;
 * the same member of a user's record is per user. Other members
 * (agent.session_id, agent.memory, agent.task) keep their own class: an
 * agent object also carries its run. Case and underscores are ignored. */
int lint_detect_self_member(const char *name, size_t len);
/* Whether t's text is a template's, the same bytes in every render: a file
 * that is a template by its kind or tags, or that holds a {{name}} field
 * outside code (an agent config's action with {{ISSUE_NUMBER}}). Not a file
 * loaded as written (AGENTS.md, SKILL.md): nothing renders it. */
int lint_detect_template_text(const lint_text *t);
/* Whether t is a prompt its author completes by hand before use: at least
 * three distinct upper-case fields {{NAME}} that number parts of the prompt
 * itself (STEP_1_GOAL, STEP_2_OF_ANALYSIS, SPECIAL_TOPIC_RULE_1). Such a
 * template is filled once, when the prompt is written, not per request. */
int lint_detect_author_fill_ins(const lint_text *t);
/* Drops from sv the upper-case {{NAME}} placeholders of such a file whose
 * class is per turn or unknown; a name that says a clock, a user or the
 * user's machine (CURRENT_DATE, USER_NAME, WORKSPACE_DIR) keeps its span. */
void lint_detect_drop_fill_ins(const lint_text *t, lint_spanv *sv);

#endif
