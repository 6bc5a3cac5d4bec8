/* linter/lint_detect_words.c: the class of a placeholder name no built-in
 * list names whole, from its words (PLAN_FILE_PATH per session,
 * READ_TOOL_NAME stable), whether a ${...} picks text with ?: && or || and
 * where it ends (its span: the whole expression),
 * whether an environment value is a fixed one, and
 * whether the file gives the assistant a name, which ${...} names VS Code
 * fills in a prompt file, and whether a label of the current date in another
 * language ends before a value. Calls nothing in lint_detect.c
 * (which calls it); does not read the words around a placeholder. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "lint_detect_impl.h"
#include "lint_registry.h"

/* Words that make a name hold fixed text, wherever they stand:
 * READ_TOOL_NAME, OUTPUT_FORMAT, FILE_ALREADY_IN_CONTEXT_REMINDER_PREFIX,
 * MAX_LINES_CONSTANT, DEFAULT_TIMEOUT_MS. */
static const char *const k_stable[] = {
    "tool",      "tools",      "function", "functions", "instruction", "instructions", "guidance",
    "guideline", "guidelines", "rule",     "rules",     "persona",     "format",       "formats",
    "schema",    "schemas",    "example",  "examples",  "template",    "templates",    "prefix",
    "suffix",    "note",       "reminder", "constant",  "max",         "min",          "limit",
    "timeout",   "label",      "sentinel", "enabled",   "disabled",    "system",       "banner",
    "legend",    "rubric",     "style",    "icon",      "icons",       "emoji",        "version",
    "threshold", "categories", NULL};

/* A name ending in one of these is the name of something configured, not of
 * a person: agent_name, chatbot_name, server_name (user_name is in the
 * built-in list). */
static const char *const k_owner_of_name[] = {"agent",  "assistant", "bot",    "chatbot", "product", "app",
                                              "model",  "tool",      "server", "company", "brand",   "skill",
                                              "plugin", "command",   "mode",   NULL};

/* Who a prompt's own handle belongs to, and the words for a handle. */
static const char *const k_self[] = {"bot", "chatbot", "agent", "assistant", NULL};
static const char *const k_handle[] = {"username", "handle", "nickname", "nick", "mention", NULL};

typedef struct word_class {
    const char *word;
    int vclass;
    int subday;
} word_class;

/* Words that say how often the value changes. */
static const word_class k_volatile[] = {{"date", LINT_VC_DAY, 0},
                                        {"today", LINT_VC_DAY, 0},
                                        {"month", LINT_VC_DAY, 0},
                                        {"year", LINT_VC_DAY, 0},
                                        {"weekday", LINT_VC_DAY, 0},
                                        {"timestamp", LINT_VC_CALL, 1},
                                        {"now", LINT_VC_CALL, 1},
                                        {"nonce", LINT_VC_CALL, 0},
                                        {"uuid", LINT_VC_CALL, 0},
                                        {"cwd", LINT_VC_SESSION, 0},
                                        {"pwd", LINT_VC_SESSION, 0},
                                        {"worktree", LINT_VC_SESSION, 0},
                                        {"workdir", LINT_VC_SESSION, 0},
                                        {"dir", LINT_VC_SESSION, 0},
                                        {"directory", LINT_VC_SESSION, 0},
                                        {"folder", LINT_VC_SESSION, 0},
                                        {"path", LINT_VC_SESSION, 0},
                                        {"branch", LINT_VC_SESSION, 0},
                                        {"repo", LINT_VC_SESSION, 0},
                                        {"repository", LINT_VC_SESSION, 0},
                                        {"session", LINT_VC_SESSION, 0},
                                        {"workspace", LINT_VC_SESSION, 0},
                                        {"hostname", LINT_VC_SESSION, 0},
                                        {"shell", LINT_VC_SESSION, 0},
                                        {"file", LINT_VC_TURN, 0},
                                        {"files", LINT_VC_TURN, 0},
                                        {"filename", LINT_VC_TURN, 0},
                                        {"content", LINT_VC_TURN, 0},
                                        {"contents", LINT_VC_TURN, 0},
                                        {"prompt", LINT_VC_TURN, 0},
                                        {"query", LINT_VC_TURN, 0},
                                        {"question", LINT_VC_TURN, 0},
                                        {"input", LINT_VC_TURN, 0},
                                        {"request", LINT_VC_TURN, 0},
                                        {"selection", LINT_VC_TURN, 0},
                                        {"diff", LINT_VC_TURN, 0},
                                        {"patch", LINT_VC_TURN, 0},
                                        {"snippet", LINT_VC_TURN, 0},
                                        {"log", LINT_VC_TURN, 0},
                                        {"logs", LINT_VC_TURN, 0},
                                        {"transcript", LINT_VC_TURN, 0},
                                        {"findings", LINT_VC_TURN, 0},
                                        {"attachment", LINT_VC_TURN, 0},
                                        {"attachments", LINT_VC_TURN, 0},
                                        {"context", LINT_VC_TURN, 0},
                                        {"objective", LINT_VC_TURN, 0},
                                        {"schedule", LINT_VC_TURN, 0},
                                        {"agenda", LINT_VC_TURN, 0},
                                        {"summary", LINT_VC_TURN, 0},
                                        {"output", LINT_VC_TURN, 0},
                                        {"result", LINT_VC_TURN, 0},
                                        {"results", LINT_VC_TURN, 0},
                                        {"error", LINT_VC_TURN, 0},
                                        {"errors", LINT_VC_TURN, 0},
                                        {"message", LINT_VC_TURN, 0},
                                        {"messages", LINT_VC_TURN, 0},
                                        {"history", LINT_VC_TURN, 0},
                                        {"issue", LINT_VC_TURN, 0},
                                        {"ticket", LINT_VC_TURN, 0},
                                        {"answer", LINT_VC_TURN, 0},
                                        {"response", LINT_VC_TURN, 0},
                                        {"document", LINT_VC_TURN, 0},
                                        {"code", LINT_VC_TURN, 0},
                                        {"symptoms", LINT_VC_TURN, 0},
                                        {"booking", LINT_VC_TURN, 0},
                                        {"reservation", LINT_VC_TURN, 0},
                                        {"historico", LINT_VC_TURN, 0},
                                        {"historial", LINT_VC_TURN, 0},
                                        {"historique", LINT_VC_TURN, 0},
                                        {"mensagem", LINT_VC_TURN, 0},
                                        {"mensaje", LINT_VC_TURN, 0},
                                        {"msg", LINT_VC_TURN, 0},
                                        {"documents", LINT_VC_TURN, 0},
                                        {"user", LINT_VC_USER, 0},
                                        {"username", LINT_VC_USER, 0},
                                        {"email", LINT_VC_USER, 0},
                                        {NULL, 0, 0}};

/* More per-turn heads, counted in public prompt repositories: what a
 * request hands in to be judged, answered or classified (retrieved_facts,
 * product_review, user_requirements, supporting_evidence, lint_violations),
 * and the signature of the code it works on (func_signature,
 * method_signature; tool_signatures stay the fixed tool list by "tool"). */
static const char *const k_turn_heads[] = {
    "requirements", "facts",      "solution", "review",    "reviews",    "comment",   "comments", "claim",
    "keywords",     "prediction", "evidence", "violation", "violations", "signature", NULL};

/* Words that say the value is the state of the moment it is rendered in:
 * PENDING_MCP_SERVERS, FAILED_MCP_SERVERS, CURRENT_ALARM. */
static const char *const k_state[] = {"current", "pending", "failed",    "active", "selected", "previous",
                                      "opened",  "visible", "connected", "latest", "running",  NULL};

/* Words after the head that say nothing of it: MAIN_WORKING_DIRECTORY_FN,
 * query_language_info, and the methods of a JS expression
 * (${ITEM.content.trim()}). */
static const char *const k_generic[] = {
    "fn",     "str",   "string", "text", "value", "values", "data",  "info",  "display", "list",  "obj",
    "object", "block", "trim",   "join", "map",   "length", "slice", "strip", "lower",   "upper", NULL};

/* Head words that describe the word before them: a task_description is the
 * task, an issue_details the issue, a problem_spec the problem. */
static const char *const k_about[] = {"description", "descriptions", "desc",          "details", "detail",
                                      "statement",   "spec",         "specification", NULL};
/* The work a request asks for, as the head of such a name: task_description,
 * bug_details (single names such as task are in the built-in list). */
static const char *const k_work[] = {"task", "problem", "bug", NULL};

/* Splits norm (lower case, '.' and '-' already '_') into its words: at most
 * 16 (a longer name keeps its first 16). */
static size_t words(const char *norm, size_t n, size_t ws[16], size_t wl[16]) {
    size_t nw = 0;
    for (size_t i = 0; i < n && nw < 16;) {
        while (i < n && norm[i] == '_') i++;
        size_t a = i;
        while (i < n && norm[i] != '_') i++;
        if (i > a) ws[nw] = a, wl[nw++] = i - a;
    }
    return nw;
}

/* Heads that name a piece of fixed text even where a built-in pattern
 * (file_*, *_context) would read the name as volatile:
 * FILE_ALREADY_IN_CONTEXT_REMINDER_PREFIX, file_size_note. */
static const char *const k_fixed_head[] = {"prefix", "suffix",   "note",   "reminder", "constant", "template",
                                           "banner", "sentinel", "rubric", "legend",   "guidance", NULL};

/* Words before a prompt head that make it the request's own prompt, not a
 * fixed sub-prompt: user_prompt, query_prompt, TASK_PROMPT,
 * WORKFLOW_SUBAGENT_PROMPT, dynamic_prompt (with the words of k_volatile
 * and k_state: FILE_PROMPT, current_prompt). */
static const char *const k_own_prompt[] = {"user",     "users",  "human",     "custom",  "customer",
                                           "task",     "tasks",  "subagent",  "dynamic", "personal",
                                           "followup", "follow", "generated", NULL};

/* Whether the word w is one of k_volatile's. */
static int volatile_word(const char *w, size_t l) {
    for (size_t i = 0; k_volatile[i].word; i++)
        if (strlen(k_volatile[i].word) == l && !memcmp(k_volatile[i].word, w, l)) return 1;
    return lint_detect_word_in(w, l, k_turn_heads);
}

/* Whether a name whose head is prompt or instructions (after generic words
 * and "section": SYSTEM_PROMPT_SECTION) inserts another fixed sub-prompt
 * (BASH_TOOL_PROMPT, PLAN_MODE_PROMPT, chatdev_prompt, GIT_INSTRUCTIONS):
 * no word before the head says the request's own (k_own_prompt, a volatile
 * or a state word). */
static int sub_prompt_name(const char *norm, const size_t *ws, const size_t *wl, size_t nw) {
    static const char *const k_heads[] = {"prompt", "prompts", "instruction", "instructions", NULL};
    static const char *const k_after[] = {"section", "sections", "part", "parts", NULL};
    size_t head = nw - 1;
    while (head > 0 && (lint_detect_word_in(norm + ws[head], wl[head], k_generic) ||
                        lint_detect_word_in(norm + ws[head], wl[head], k_after)))
        head--;
    if (head == 0 || !lint_detect_word_in(norm + ws[head], wl[head], k_heads)) return 0;
    for (size_t k = 0; k < head; k++)
        if (lint_detect_word_in(norm + ws[k], wl[k], k_own_prompt) ||
            lint_detect_word_in(norm + ws[k], wl[k], k_state) || volatile_word(norm + ws[k], wl[k]))
            return 0;
    return 1;
}

int lint_detect_name_fixed(const char *norm, size_t n) {
    size_t ws[16], wl[16], nw = words(norm, n, ws, wl);
    if (nw < 2) return 0;
    /* a user's own text keeps its class: user_note, custom_template */
    if (lint_detect_word_in(norm + ws[0], wl[0], (const char *const[]){"user", "custom", "customer", NULL}))
        return 0;
    if (sub_prompt_name(norm, ws, wl, nw)) return 1;
    size_t head = nw - 1;
    while (head > 0 && lint_detect_word_in(norm + ws[head], wl[head], k_generic)) head--;
    return lint_detect_word_in(norm + ws[head], wl[head], k_fixed_head);
}

/* Whether a name's head (at head) is a location whose word right before it
 * is the program's own documentation: documentation_path, docs_dir,
 * manual_url, which an installation ships or configures once (the agent's
 * docs); not when a word before says whose they are (project_docs_dir,
 * repo_docs_path, user_manual_path: the user's or the session's). */
static int docs_location(const char *norm, const size_t *ws, const size_t *wl, size_t head) {
    static const char *const k_where[] = {"path", "dir", "directory", "folder",
                                          "root", "url", "location",  NULL};
    static const char *const k_docs[] = {"documentation", "docs", "manual", "manuals", "handbook", NULL};
    static const char *const k_whose[] = {"user", "users", "project", "workspace", "custom", "local", NULL};
    if (head == 0 || !lint_detect_word_in(norm + ws[head], wl[head], k_where) ||
        !lint_detect_word_in(norm + ws[head - 1], wl[head - 1], k_docs))
        return 0;
    for (size_t k = 0; k + 1 < head; k++)
        if (lint_detect_word_in(norm + ws[k], wl[k], k_whose) || volatile_word(norm + ws[k], wl[k]) ||
            lint_detect_word_in(norm + ws[k], wl[k], k_state))
            return 0;
    return 1;
}

/* Whether the stable word at k is "function" naming whose code the name
 * holds: a head after it that is program text (PROJECT_FUNCTION_CODE,
 * function_body, function_source), which a code review, test or fuzzing
 * prompt receives per request; function_schema or functions stay the tool
 * definitions. */
static int code_of_function(const char *norm, const size_t *ws, const size_t *wl, size_t nw, size_t k) {
    static const char *const k_fn[] = {"function", "functions", NULL};
    static const char *const k_code[] = {"code", "source", "body", "implementation", "impl", "snippet", NULL};
    size_t head = nw - 1;
    while (head > 0 && lint_detect_word_in(norm + ws[head], wl[head], k_generic)) head--;
    return k < head && lint_detect_word_in(norm + ws[k], wl[k], k_fn) &&
           lint_detect_word_in(norm + ws[head], wl[head], k_code);
}

/* A word naming fixed text makes the name stable; else its head (the last
 * word before a generic one) classes it when it names something that
 * changes (a content_type is a type, not content); else a state word makes
 * it per turn. */
int lint_detect_name_words(const char *norm, size_t n, int *subday, int *known) {
    size_t ws[16], wl[16], nw = words(norm, n, ws, wl);
    *subday = 0;
    if (nw < 2) return LINT_VC_NONE; /* one word: the built-in lists decide */
    for (size_t k = 0; k < nw; k++)
        if (lint_detect_word_in(norm + ws[k], wl[k], k_stable) && !code_of_function(norm, ws, wl, nw, k)) {
            *known = 1;
            return LINT_VC_NONE;
        }
    size_t last = nw - 1;
    if (wl[last] == 4 && !memcmp(norm + ws[last], "name", 4) &&
        lint_detect_word_in(norm + ws[last - 1], wl[last - 1], k_owner_of_name)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    /* the handle a bot or agent posts under is configured with it like its
     * name: BotUsername, bot_handle, agent_mention (not app_username: an
     * app's username is its user's) */
    if (nw == 2 && lint_detect_word_in(norm + ws[0], wl[0], k_self) &&
        lint_detect_word_in(norm + ws[1], wl[1], k_handle)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    size_t head = last;
    while (head > 0 && lint_detect_word_in(norm + ws[head], wl[head], k_generic)) head--;
    if (head > 0 && lint_detect_word_in(norm + ws[head], wl[head], k_about)) {
        head--;
        if (lint_detect_word_in(norm + ws[head], wl[head], k_work)) {
            *known = 1;
            return LINT_VC_TURN;
        }
    }
    if (docs_location(norm, ws, wl, head)) {
        *known = 1;
        return LINT_VC_NONE;
    }
    for (size_t i = 0; k_volatile[i].word; i++)
        if (strlen(k_volatile[i].word) == wl[head] &&
            !memcmp(k_volatile[i].word, norm + ws[head], wl[head])) {
            *known = 1;
            *subday = k_volatile[i].subday;
            return k_volatile[i].vclass;
        }
    if (lint_detect_word_in(norm + ws[head], wl[head], k_turn_heads)) {
        *known = 1;
        return LINT_VC_TURN;
    }
    for (size_t k = 0; k < nw; k++)
        if (lint_detect_word_in(norm + ws[k], wl[k], k_state)) {
            *known = 1;
            return LINT_VC_TURN;
        }
    return LINT_VC_NONE;
}


/* Words for how to answer, which a prompt's author configures even inside
 * the user message: output_format, json_schema, few_shot_examples,
 * answer_rules (k_stable less the words for a remark: a note or a reminder
 * in the user's own tag block is the user's). */
static const char *const k_configured[] = {
    "tool",      "tools",      "function",   "functions", "instruction", "instructions", "guidance",
    "guideline", "guidelines", "rule",       "rules",     "persona",     "format",       "formats",
    "schema",    "schemas",    "example",    "examples",  "template",    "templates",    "system",
    "rubric",    "style",      "categories", "legend",    NULL};

int lint_detect_name_configured(const char *name, size_t len) {
    char w[48];
    size_t n = 0;
    for (size_t i = 0; i <= len; i++) {
        int end = i == len || !isalnum((unsigned char)name[i]) ||
                  (isupper((unsigned char)name[i]) && i > 0 && islower((unsigned char)name[i - 1]));
        if (end && n) {
            if (lint_detect_word_in(w, n, k_configured)) return 1;
            n = 0;
        }
        if (i < len && isalnum((unsigned char)name[i]) && n < sizeof w)
            w[n++] = (char)tolower((unsigned char)name[i]);
    }
    return 0;
}

/* Whether the file gives the assistant the name v[0, n) ("You are Santa
 * Claus", "an assistant named Grace", "I am Lumo"): then "Hey Santa" greets
 * the assistant, not the user. */
int lint_detect_persona_name(const lint_text *t, const char *v, size_t n) {
    static const char *const k_intro[] = {"you are ", "You are ", "You're ", "you're ", "named ",
                                          "called ",  "I am ",    "I'm ",    NULL};
    for (size_t k = 0; k_intro[k]; k++) {
        size_t il = strlen(k_intro[k]);
        for (const char *p = t->data, *e = t->data + t->len; p + il + n <= e;) {
            const char *q = memmem(p, (size_t)(e - p), k_intro[k], il);
            if (!q || q + il + n > e) break;
            const char *c = q + il;
            if (memcmp(c, v, n) == 0 && (c + n == e || !isalnum((unsigned char)c[n]))) return 1;
            p = q + 1;
        }
    }
    return 0;
}

/* Walks the ${ ... } starting at off to its closing brace, before end,
 * over nested braces (a nested ${x} of an inner template literal) and, with
 * quotes, over quoted strings ('', "", ``). *close: the closing brace, or
 * (size_t)-1. Returns what it saw: 1 a '?', then 2 a ':' (a ?: conditional),
 * 3 a && or ||. */
static int interpolation_walk(const lint_text *t, size_t off, size_t end, int quotes, size_t *close) {
    const char *d = t->data;
    int depth = 0, q = 0, cond = 0;
    *close = (size_t)-1;
    for (size_t i = off + 2; i < end; i++) {
        char c = d[i];
        if (q) {
            if (c == '\\')
                i++;
            else if (c == q)
                q = 0;
            continue;
        }
        if (quotes && (c == '\'' || c == '"' || c == '`'))
            q = c;
        else if (c == '{')
            depth++;
        else if (c == '}') {
            if (depth-- == 0) {
                *close = i;
                return cond;
            }
        } else if (c == '?' && i + 1 < end && d[i + 1] != '.' && d[i + 1] != '?')
            cond |= 1;
        else if (c == ':' && (cond & 1))
            cond |= 2;
        else if ((c == '&' || c == '|') && i + 1 < end && d[i + 1] == c)
            cond = 3;
    }
    return cond;
}

/* The end of a walk from off: 4 KiB on, across lines. */
static size_t walk_end(const lint_text *t, size_t off) { return t->len - off > 4096 ? off + 4096 : t->len; }

/* Whether the ${ ... } starting at off holds an expression that picks text
 * from state (a ?: conditional, && or ||): a TS/JS template literal that
 * renders differently as that state changes. Skips quoted strings. */
int lint_detect_conditional_interpolation(const lint_text *t, size_t off) {
    size_t close;
    int cond = interpolation_walk(t, off, walk_end(t, off), 1, &close);
    return close != (size_t)-1 && (cond == 2 || cond == 3);
}

/* The closing brace of the ${ ... } at off, or (size_t)-1: read over its
 * quoted strings, or, where they do not pair up (a prompt collection prints
 * the template literal's inner backticks unescaped: ${A?`Don't `put()``:""}),
 * by its braces alone on its own line. */
static size_t interpolation_close(const lint_text *t, size_t off) {
    size_t close;
    interpolation_walk(t, off, walk_end(t, off), 1, &close);
    if (close == (size_t)-1)
        interpolation_walk(t, off, lint_text_line_end(t, lint_text_line_of(t, off)), 0, &close);
    return close;
}

/* A ${ ... } field is its whole expression, up to its closing brace: the
 * text of its ?: branches, its operands and the template literals nested in
 * it render only as the expression picks them, so none of it is stable
 * content after the field. Extends each span of sv that opens with ${ to
 * its closing brace, drops the fields found inside it (their class joins
 * the whole one's), and, with cont, cuts one that runs across lines at each
 * line's end, the later lines as its continuation (lint_span.cont), as the
 * rules read a value line by line. Sorts sv by start. UTIL_ENOMEM. */
int lint_detect_interpolation_spans(const lint_text *t, lint_spanv *sv, int cont) {
    const char *d = t->data;
    lint_spanv_sort(sv);
    size_t w = 0, whole = (size_t)-1, n = sv->n;
    for (size_t i = 0; i < n; i++) {
        lint_span sp = sv->v[i];
        if (whole != (size_t)-1 && sp.start < sv->v[whole].end) { /* inside the expression */
            lint_span_absorb_class(&sv->v[whole], &sp);
            continue;
        }
        whole = (size_t)-1;
        if (sp.start + 2 < t->len && d[sp.start] == '$' && d[sp.start + 1] == '{' && !sp.cont) {
            size_t close = interpolation_close(t, sp.start);
            if (close != (size_t)-1 && close + 1 > sp.end) sp.end = close + 1, whole = w;
        }
        sv->v[w++] = sp;
    }
    sv->n = w;
    for (size_t i = 0; cont && i < w; i++) {
        size_t l = lint_text_line_of(t, sv->v[i].start), le = lint_text_line_end(t, l), end = sv->v[i].end;
        if (end <= le || d[sv->v[i].start] != '$' || d[sv->v[i].start + 1] != '{') continue;
        sv->v[i].end = le;
        lint_span part = sv->v[i];
        part.cont = 1;
        for (l++; l < t->n_lines && t->line_start[l] < end; l++) {
            size_t a = t->line_start[l], b = lint_text_line_end(t, l);
            while (a < b && (d[a] == ' ' || d[a] == '\t')) a++;
            part.start = a, part.end = b < end ? b : end;
            if (a < part.end && lint_spanv_push(sv, &part)) return UTIL_ENOMEM;
        }
    }
    return UTIL_OK;
}

/* Home folders of fixed accounts in sandboxes, containers and CI images:
 * the same for every user, so not a per-user value. */
static const char *const k_fixed_homes[] = {
    "user",   "username",  "you",        "me",        "name",     "example",   "someone",    "shared",
    "runner", "claude",    "ubuntu",     "project",   "projects", "app",       "node",       "coder",
    "vscode", "codespace", "codespaces", "jovyan",    "sandbox",  "workspace", "workspaces", "ec2-user",
    "admin",  "root",      "dev",        "developer", "agent",    "default",   "guest",      "daytona",
    "gitpod", "vercel",    "devuser",    "appuser",   "pi",       NULL};

/* An environment fact that is the same for everyone: a sandbox's fixed
 * folder (/workspace, /app, /tmp/x; not one named with a timestamp or a
 * counter), a home folder of a fixed account
 * (/home/claude, /home/project), or an English word rather than a value
 * ("Your shell is currently at the repository root"). */
int lint_detect_fixed_env_value(const char *v, size_t n) {
    static const char *const k_words[] = {"currently", "running",    "set",    "located",  "the",   "a",
                                          "an",        "not",        "open",   "in",       "at",    "on",
                                          "available", "configured", "always", "also",     "now",   "still",
                                          "being",     "used",       "given",  "provided", "shown", NULL};
    size_t w = 0;
    while (w < n && isalpha((unsigned char)v[w])) w++;
    if (w == n && lint_detect_word_in(v, w, k_words)) return 1;
    if (n == 0 || v[0] != '/') return 0;
    /* a session's own folder: /tmp/claude-history-1759164907215-dnsko8 */
    for (size_t i = 0, run = 0; i < n; i++)
        if ((run = isdigit((unsigned char)v[i]) ? run + 1 : 0) >= 6) return 0;
    static const char *const k_roots[] = {"workspace", "workspaces",    "app", "tmp",
                                          "code",      "project",       "src", "repo",
                                          "mnt/data",  "mnt/user-data", NULL};
    for (const char *const *r = k_roots; *r; r++) {
        size_t rl = strlen(*r);
        if (n > rl && !strncmp(v + 1, *r, rl) &&
            (v[1 + rl] == '/' || v[1 + rl] == '.' || v[1 + rl] == ',' || 1 + rl == n))
            return 1;
        if (n == rl + 1 && !strncmp(v + 1, *r, rl)) return 1;
    }
    const char *h = NULL;
    if (n > 6 && !strncmp(v, "/home/", 6))
        h = v + 6;
    else if (n > 7 && !strncmp(v, "/Users/", 7))
        h = v + 7;
    if (!h) return 0;
    size_t hl = 0;
    while (h + hl < v + n && h[hl] != '/' && h[hl] != '.' && h[hl] != ',') hl++;
    if (!lint_detect_word_in(h, hl, k_fixed_homes)) return 0;
    /* below the fixed home, a folder of the session's own (the repository
     * it cloned: /home/user/harbor-release) changes per session; a generic
     * one (/home/user/workspace, /home/ubuntu/app) is part of the image */
    const char *f = h + hl;
    if (f >= v + n || *f != '/') return 1;
    f++;
    size_t fl = 0;
    while (f + fl < v + n && f[fl] != '/' && f[fl] != '.' && f[fl] != ',') fl++;
    static const char *const k_image_folders[] = {
        "repos", "work", "data", "output",    "outputs",    "files", "uploads", "downloads", "tmp",
        "code",  "src",  "repo", "workspace", "workspaces", "app",   "project", "projects",  NULL};
    return fl == 0 || lint_detect_word_in(f, fl, k_image_folders) ||
           lint_detect_word_in(f, fl, k_fixed_homes);
}

/* Whether the name of a ${...} is a variable VS Code fills in a prompt file
 * (${file}, ${selection}, ${workspaceFolder}, ${input:name}). */
int lint_detect_vscode_variable(const char *nm, size_t nl) {
    static const char *const k_vars[] = {
        "file",         "fileBasename",    "fileBasenameNoExtension", "fileDirname", "selection",
        "selectedText", "workspaceFolder", "workspaceFolderBasename", NULL};
    for (size_t i = 0; k_vars[i]; i++)
        if (strlen(k_vars[i]) == nl && !memcmp(nm, k_vars[i], nl)) return 1;
    return nl == 5 && !memcmp(nm, "input", 5) && nm[5] == ':';
}

/* --- labels of the current date in other languages ----------------------- */

/* Labels of the current date or time in German, French, Spanish,
 * Portuguese, Italian, Russian and Japanese, ASCII letters in lower case,
 * one space between words. A table, not a pattern: a pattern this long would
 * cost every run its compile time. */
static const char *const k_intl_labels[] = {
    "aktuelles datum",
    "heutiges datum",
    "datum",
    "datum heute",
    "heute",
    "heute ist",
    "heute ist der",
    "aktuelle uhrzeit",
    "aktuelle zeit",
    "uhrzeit",
    "es ist",
    "es ist jetzt",
    "date actuelle",
    "date du jour",
    "date d'aujourd'hui",
    "nous sommes",
    "aujourd'hui",
    "aujourd'hui nous sommes",
    "aujourd'hui, nous sommes",
    "aujourd'hui c'est",
    "heure actuelle",
    "heure locale",
    "il est",
    "il est actuellement",
    "fecha actual",
    "fecha de hoy",
    "hoy es",
    "hora actual",
    "hora local",
    "son las",
    "data atual",
    "data de hoje",
    "hoje \xc3\xa9",
    "hora atual",
    "agora s\xc3\xa3o",
    "data odierna",
    "data attuale",
    "data di oggi",
    "oggi \xc3\xa8",
    "ora attuale",
    "ora corrente",
    "ora locale",
    "sono le",
    "\xd1\x82\xd0\xb5\xd0\xba\xd1\x83\xd1\x89\xd0\xb0\xd1\x8f \xd0\xb4\xd0\xb0\xd1\x82\xd0\xb0", /* текущая дата */
    "\xd1\x81\xd0\xb5\xd0\xb3\xd0\xbe\xd0\xb4\xd0\xbd\xd1\x8f\xd1\x88\xd0\xbd\xd1\x8f\xd1\x8f "
    "\xd0\xb4\xd0\xb0\xd1\x82\xd0\xb0",                         /* сегодняшняя дата */
    "\xd1\x81\xd0\xb5\xd0\xb3\xd0\xbe\xd0\xb4\xd0\xbd\xd1\x8f", /* сегодня */
    "\xd1\x82\xd0\xb5\xd0\xba\xd1\x83\xd1\x89\xd0\xb5\xd0\xb5 \xd0\xb2\xd1\x80\xd0\xb5\xd0\xbc\xd1\x8f", /* текущее время */
    "\xd1\x81\xd0\xb5\xd0\xb9\xd1\x87\xd0\xb0\xd1\x81",             /* сейчас */
    "\xe7\x8f\xbe\xe5\x9c\xa8\xe3\x81\xae\xe6\x97\xa5\xe4\xbb\x98", /* 現在の日付 */
    "\xe7\x8f\xbe\xe5\x9c\xa8\xe3\x81\xae\xe6\x97\xa5\xe6\x99\x82", /* 現在の日時 */
    "\xe4\xbb\x8a\xe6\x97\xa5\xe3\x81\xae\xe6\x97\xa5\xe4\xbb\x98", /* 今日の日付 */
    "\xe6\x9c\xac\xe6\x97\xa5\xe3\x81\xae\xe6\x97\xa5\xe4\xbb\x98", /* 本日の日付 */
    "\xe4\xbb\x8a\xe6\x97\xa5\xe3\x81\xaf",                         /* 今日は */
    "\xe6\x9c\xac\xe6\x97\xa5\xe3\x81\xaf",                         /* 本日は */
    "\xe7\x8f\xbe\xe5\x9c\xa8\xe6\x99\x82\xe5\x88\xbb",             /* 現在時刻 */
    "\xe7\x8f\xbe\xe5\x9c\xa8\xe3\x81\xae\xe6\x99\x82\xe5\x88\xbb", /* 現在の時刻 */
    NULL};

/* Whether b[0, n) ends with one of k_intl_labels, on a word boundary. */
static int ends_with_intl_label(const char *b, size_t n) {
    /* Japanese adds は after a label: 現在の時刻は, 今日の日付は */
    if (n > 3 && !memcmp(b + n - 3, "\xe3\x81\xaf", 3) && (unsigned char)b[n - 4] >= 0x80 &&
        ends_with_intl_label(b, n - 3))
        return 1;
    for (const char *const *l = k_intl_labels; *l; l++) {
        size_t k = strlen(*l);
        if (k > n || memcmp(b + n - k, *l, k)) continue;
        if (n == k || (unsigned char)(*l)[0] >= 0x80) return 1;
        unsigned char c = (unsigned char)b[n - k - 1];
        if (!isalnum(c) && c != '_' && c < 0x80) return 1;
    }
    return 0;
}

static size_t trim_end(const char *b, size_t n, const char *chars) {
    while (n > 0 && strchr(chars, b[n - 1])) n--;
    return n;
}

/* Whether b[0, n) ends with a label and a separator (':', '：', '=',
 * Markdown emphasis) or none. */
static int label_at_end(const char *b, size_t n) {
    size_t k = trim_end(b, n, " *_");
    if (k >= 3 && !memcmp(b + k - 3, "\xef\xbc\x9a", 3)) /* ： */
        k -= 3;
    else if (k && (b[k - 1] == ':' || b[k - 1] == '='))
        k--;
    k = trim_end(b, k, " *_");
    return k && ends_with_intl_label(b, k);
}

/* n less a final article "le" or "el" ("Nous sommes le", "Hoy es el"). */
static size_t strip_article(const char *b, size_t n) {
    if (n >= 3 && b[n - 3] == ' ' && (!memcmp(b + n - 2, "le", 2) || !memcmp(b + n - 2, "el", 2)))
        return trim_end(b, n - 3, " ");
    return n;
}

int lint_detect_intl_label_before(const char *s, size_t n) {
    char b[96];
    size_t m = 0;
    /* lower-case ASCII and Cyrillic capitals (U+0410..U+042F), one space per gap */
    for (size_t i = 0; i < n && m + 2 < sizeof b; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t') {
            if (m && b[m - 1] != ' ') b[m++] = ' ';
            continue;
        }
        if (c == 0xd0 && i + 1 < n && (unsigned char)s[i + 1] >= 0x90 && (unsigned char)s[i + 1] <= 0xaf) {
            unsigned char lo = (unsigned char)s[i + 1] + 0x20; /* А..П -> а..п; Р..Я -> р..я */
            b[m++] = lo >= 0xc0 ? (char)0xd1 : (char)0xd0;
            b[m++] = lo >= 0xc0 ? (char)(lo - 0x40) : (char)lo;
            i++;
            continue;
        }
        b[m++] = (char)tolower(c);
    }
    m = trim_end(b, m, " ,");
    if (label_at_end(b, m) || label_at_end(b, strip_article(b, m))) return 1;
    /* a weekday between label and date: "Donnerstag, ", "jeudi ", "segunda-feira, " */
    size_t w = m;
    if (w >= 6 && !memcmp(b + w - 6, "-feira", 6)) w -= 6;
    size_t e = w;
    while (w > 0 && (isalpha((unsigned char)b[w - 1]) || (unsigned char)b[w - 1] >= 0x80)) w--;
    if (e - w < 4 || e - w > 16) return 0;
    w = trim_end(b, w, " ,");
    return label_at_end(b, w) || label_at_end(b, strip_article(b, w));
}
