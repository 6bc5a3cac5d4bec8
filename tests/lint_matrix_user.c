/* tests/lint_matrix_user.c: the coverage matrix of per-user and per-request
 * content blocks in rendered prompts (lint_matrix_user.h): facts about the
 * user, memories, a profile, search results and documents, a conversation
 * summary, open files and selected text, tool output, the user's custom
 * instructions, a previous session's recap, the current task, the user's
 * calendar and e-mails. Each kind is written in several wrappers (a caption
 * line, a tag pair, a Markdown heading, a fenced block under a caption, a
 * JSON object, a sentence) and placed before fixed instructions (PL001
 * expected within a line of the block's first content line: the line after
 * a caption, a heading or an opening tag that stands alone) or last (none).
 * Negatives: the same blocks as examples, fixed reference text under like
 * captions, tool descriptions, the assistant's own persona. Does not read
 * files.
 *
 * Left out on purpose (promptlint does not claim them):
 * - a JSON member ("memories": [...], "user_profile": {...}): a key alone
 *   cannot tell a filled value from a schema or an example in the
 *   instructions;
 * - prose under a heading (summary, recap, custom instructions, task, facts
 *   about the user, an open file's code, a tool's output under "## ..."):
 *   prose under a heading is how fixed sections are written; only a
 *   data-shaped block (items, [1] results, Key: value lines) is claimed;
 * - "Sources:" / "## Sources" / <sources>, <summary>, <task>, <profile>,
 *   <file path=...>: they head fixed text as often as per-request text;
 * - bare facts with no caption ("User prefers metric units.", "In your last
 *   session with the user, ..."): nothing marks them as per-user;
 * - "The user lives in Lyon and works as a nurse." last: the words after a
 *   place in the same sentence count as stable (an environment-value matter,
 *   tests/lint_matrix_env.c);
 * - a persona card "About you:\nName: Max": a "Name:" line is read as the
 *   user's name whatever the caption above (a name-class matter). */
#include "lint_matrix_user.h"

#include <stdio.h>
#include <string.h>

#include "../linter/lint.h"
#include "../linter/lint_ctx.h"
#include "../linter/lint_registry.h"
#include "../linter/lint_report.h"
#include "check.h"
#include "lint_matrix_cell.h"

/* --- the kinds ---------------------------------------------------------- */

enum { W_CAPTION, W_TAG, W_HEADING, W_FENCE, W_JSON, W_PROSE, W_COUNT };
static const char *const k_wrap_name[W_COUNT] = {"caption", "tag", "heading", "fence", "json", "prose"};

#define MAXV 5
/* One kind of per-user or per-request block: the captions, tags and
 * headings rendered prompts put it under, its body lines, a JSON key and a
 * sentence that carries it inline (NULL where a wrapper does not fit). */
typedef struct mx_kind {
    const char *name;
    const char *captions[MAXV];
    const char *tags[MAXV]; /* an opening tag; the closer is derived */
    const char *headings[MAXV];
    const char *body; /* lines, each ending in '\n' */
    const char *json; /* a JSON object holding the block */
    const char *prose[MAXV];
} mx_kind;

static const mx_kind k_kinds[] = {
    {"user-facts",
     {"About the user:", "User information:", "Here is what we know about the user:"},
     {"<user_info>", "<about_user>"},
     {NULL},
     "The user's name is Ann Lee.\nThe user lives in Lyon and works as a nurse.\nUser prefers metric units.\n",
     NULL,
     {"The user's name is Ann Lee."}},
    {"memories",
     {"Memories:", "What you remember about the user:", "Saved memories:", "User memories:"},
     {"<userMemories>", "<memories>", "<user_memories>"},
     {"## User memories", "## Memories", "# Model Set Context"},
     "- Has two cats named Miso and Tofu.\n- Is training for a marathon in April.\n- Works as a nurse in "
     "Lyon.\n",
     NULL,
     {NULL}},
    {"profile",
     {"User profile:", "User Profile:", "The user's profile:"},
     {"<user_profile>"},
     {"## User Profile"},
     "Name: Ann Lee\nAge: 34\nJob: Nurse\nInterests: running, baking, chess\n",
     NULL,
     {NULL}},
    {"search",
     {"Search results:", "Web search results:", "Retrieved documents:"},
     {"<search_results>", "<documents>", "<document index=\"1\">"},
     {"## Search Results", "# Retrieved Context"},
     "[1] Lyon weather in March - https://weather.example.com/lyon\n[2] Best running routes in Lyon - "
     "https://runs.example.org/lyon\n",
     NULL,
     {NULL}},
    {"summary",
     {"Summary of the conversation so far:", "Conversation summary:", "Summary of previous messages:"},
     {"<conversation_summary>"},
     {NULL},
     "The user asked for a 12-week marathon plan and said they can run four days a week.\n",
     NULL,
     {"Summary of the conversation so far: the user asked for a 12-week marathon plan."}},
    {"open-file",
     {"Selected text:", "The user has selected the following code:", "Currently open file: src/app.ts",
      "Clipboard contents:"},
     {"<open_file path=\"src/app.ts\">", "<selected_text>", "<current_file>"},
     {NULL},
     "export function add(a: number, b: number) {\n  return a + b;\n}\n",
     NULL,
     {"The user has selected the following code: export const x = 1;"}},
    {"tool-output",
     {"Tool result:", "Tool output:", "Output of the last command:"},
     {"<function_results>", "<tool_result>", "<tool_output>"},
     {NULL},
     "total 12\n-rw-r--r--  1 ann  staff  210 Mar  5 14:02 package.json\n",
     NULL,
     {NULL}},
    {"custom-instructions",
     {"The user provided the following custom instructions:", "User's custom instructions:",
      "The user has provided additional info about how they would like you to respond:"},
     {"<user_instructions>", "<custom_instructions>", "<user_preferences>"},
     {NULL},
     "Always answer in British English.\nKeep replies under 200 words.\n",
     NULL,
     {"The user provided the following custom instructions: always answer in British English."}},
    {"recap",
     {"Previous session recap:", "Recap of your last session with the user:", "Last session summary:"},
     {"<previous_session>", "<session_recap>"},
     {NULL},
     "You helped Ann fix a failing login test and she planned to add rate limiting next.\n",
     NULL,
     {NULL}},
    {"task",
     {"Current task:", "Ticket:", "Issue #4812: Login fails after password reset", "The user's task:"},
     {"<issue>", "<ticket>"},
     {"## Issue #4812: Login fails after password reset"},
     "Users who reset their password cannot log in until they clear their cookies.\n",
     NULL,
     {NULL}},
    {"calendar",
     {"Upcoming calendar events:", "The user's calendar for today:", "Recent emails:"},
     {"<calendar_events>", "<emails>", "<inbox>"},
     {"## Calendar", "## Recent Emails"},
     "- 09:30 Stand-up with the platform team\n- 14:00 Dentist (Dr. Moreau)\n",
     NULL,
     {NULL}},
};

/* Fixed text that looks like the blocks above but is the same on every
 * request: examples, reference text, tool descriptions, the persona. */
static const char *const k_negatives[] = {
    /* examples */
    "Example memory:\n\n```\nMemories:\n- Has two cats named Miso and Tofu.\n- Works as a nurse in Lyon.\n```",
    "<example>\nUser profile:\nName: Ann Lee\nAge: 34\n</example>",
    "<example>\n<search_results>\n[1] Lyon weather in March - https://weather.example.com/lyon\n"
    "</search_results>\n</example>",
    "For example, a memory might read: \"Has two cats named Miso and Tofu.\"",
    "Example of a conversation summary:\n\n```\nThe user asked for a 12-week marathon plan.\n```",
    "<example>\nTool result:\ntotal 12\n</example>",
    "Example custom instructions: \"Always answer in British English.\"",
    /* fixed reference text under like captions */
    "Sources of truth: the handbook at https://handbook.example.com and the API reference.",
    "Sources:\n- The Acme handbook (https://handbook.example.com)\n- The Acme API reference",
    "## Memory\n\nYou have a memory tool. Save facts the user asks you to remember; never save passwords.",
    "## Search results\n\nWhen you cite a search result, give its number in brackets, like [1].",
    "## Tool results\n\nTool results may be long; summarise them before you answer.",
    "## User Profile\n\nThe profile tool returns the user's name and preferences; use it sparingly.",
    /* tool descriptions, not results */
    "## Tools\n\n- search(query): searches the web and returns numbered results with titles and URLs.\n"
    "- read_file(path): returns the contents of a file in the workspace.",
    "<tool name=\"memory\">\nStores and recalls facts about the user across sessions.\n</tool>",
    /* the assistant's own persona */
    "Your name is Max. You live in Lyon and you love running.",
};

/* "<document index="1">" -> "</document>" */
static void closer(char *out, size_t cap, const char *open) {
    size_t k = strcspn(open + 1, " >");
    snprintf(out, cap, "</%.*s>", (int)k, open + 1);
}

/* Whether a caption carries a value after its colon ("Issue #4812: Login
 * fails"): the value enters on the caption's line. */
static int inline_value(const char *cap) {
    const char *c = strchr(cap, ':');
    return c && c[1] != 0;
}

/* Appends kind k in wrapper w (variant v); returns 0 when that variant does
 * not exist. */
static int wrap(mx_buf *b, const mx_kind *k, int w, int v) {
    char cl[64];
    switch (w) {
    case W_CAPTION:
        if (!k->captions[v]) return 0;
        mx_put(b, "%s\n", k->captions[v]);
        b->vline = mx_lines(b) - inline_value(k->captions[v]);
        mx_put(b, "%s", k->body);
        return 1;
    case W_TAG:
        if (!k->tags[v]) return 0;
        closer(cl, sizeof cl, k->tags[v]);
        mx_put(b, "%s\n", k->tags[v]);
        b->vline = mx_lines(b);
        mx_put(b, "%s%s", k->body, cl);
        return 1;
    case W_HEADING:
        if (!k->headings[v]) return 0;
        mx_put(b, "%s\n\n", k->headings[v]);
        b->vline = mx_lines(b) - 2 * inline_value(k->headings[v]);
        mx_put(b, "%s", k->body);
        return 1;
    case W_FENCE:
        if (!k->captions[v]) return 0;
        mx_put(b, "%s\n\n```\n", k->captions[v]);
        b->vline = mx_lines(b) - 3 * inline_value(k->captions[v]);
        mx_put(b, "%s```", k->body);
        return 1;
    case W_JSON:
        if (v || !k->json) return 0;
        mx_put(b, "%s", "Context:\n");
        b->vline = mx_lines(b) + 1;
        mx_put(b, "%s", k->json);
        return 1;
    case W_PROSE:
        if (!k->prose[v]) return 0;
        b->vline = mx_lines(b);
        mx_put(b, "%s", k->prose[v]);
        return 1;
    default: return 0;
    }
}

int lint_matrix_user_check(int verbose, int *cells, int *wrong) {
    lint_options o = {0};
    o.no_model = 1;
    o.no_config = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    if (lint_ctx_new(&c, &o, &err) || !c) return -1;
    mx_stats st = {0};
    char nm[128];
    for (size_t k = 0; k < sizeof k_kinds / sizeof k_kinds[0]; k++)
        for (int w = 0; w < W_COUNT; w++)
            for (int v = 0; v < MAXV; v++)
                for (int pos = 0; pos < 2; pos++) {
                    mx_buf b = {.n = 0};
                    mx_put(&b, "%s", mx_intro);
                    if (!wrap(&b, &k_kinds[k], w, v)) break;
                    mx_put(&b, "%s", pos ? "\n" : mx_tail);
                    snprintf(nm, sizeof nm, "%s/%s%d/%s", k_kinds[k].name, k_wrap_name[w], v,
                             pos ? "last" : "before");
                    mx_run_cell(c, &st, verbose, nm, &b, !pos);
                }
    for (size_t i = 0; i < sizeof k_negatives / sizeof k_negatives[0]; i++) {
        mx_buf b = {.n = 0};
        mx_put(&b, "%s", mx_intro);
        b.vline = mx_lines(&b);
        mx_put(&b, "%s%s", k_negatives[i], mx_tail);
        snprintf(nm, sizeof nm, "negative#%zu", i);
        mx_run_cell(c, &st, verbose, nm, &b, 0);
    }
    fprintf(
        stderr,
        "lint user-content matrix: %d cells (%d expect an error, %d none): missed %d (%d without error, %d "
        "with)\n",
        st.cells, st.pos, st.neg, st.miss_pos + st.miss_neg, st.miss_pos, st.miss_neg);
    *cells = st.cells;
    *wrong = st.miss_pos + st.miss_neg;
    lint_ctx_free(c);
    return 0;
}
