/* agent/prompt.h: stable-first prompt assembly. Reads the workspace files
 * (AGENTS.md, SOUL.md, IDENTITY.md, TOOLS.md, USER.md, MEMORY.md), the skills
 * index and the built-in prompt text from the data directory, and builds the
 * tiers: 0+1 form the system prompt, 2 is the session-context message, 3 the
 * turn context attached to a user message. Does not talk to the engine. */
#ifndef AGENT_PROMPT_H
#define AGENT_PROMPT_H

#include <stddef.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "format.h"
#include "skills.h"

/* Size limits for workspace text (bytes). A longer file keeps its head and
 * tail around a visible marker. */
#define AGENT_FILE_LIMIT  (16 * 1024)
#define AGENT_TOTAL_LIMIT (48 * 1024)
/* A workspace prompt file larger than this is not read at all: it is left
 * out with a warning and a marker line. */
#define AGENT_FILE_READ_MAX ((size_t)1 << 20)

/* --- the assembled prompt -------------------------------------------------- */

typedef struct agent_prompt_opts {
    const char *workspace;      /* directory with AGENTS.md etc. */
    const char *data_dir;       /* holds prompts/ and skills/ */
    const agent_format *format; /* the chat family: selects the tool-use text; NULL: ChatML's */
    const char *user_skills;    /* ~/.config/cachet/skills or NULL for the default */
} agent_prompt_opts;

typedef struct agent_prompt {
    char *tier0, *tier1; /* the system prompt is tier0 followed by tier1 */
    char *system;        /* tier0 + tier1 */
    char *tools_json;    /* tool definitions (sorted JSON array), for the tool registry */
    agent_skills skills;
    agent_warnings warnings;
} agent_prompt;

/* Builds tiers 0 and 1. Same files in -> same bytes out, in any process, at
 * any time, in any directory: nothing here reads the clock, cwd or env
 * (except to locate ~/.config/cachet/skills, shown as a fixed display path). */
int agent_prompt_build(agent_prompt *p, const agent_prompt_opts *o, util_err *err);
void agent_prompt_release(agent_prompt *p);

/* Tier 2: session context (date at day granularity, OS, workspace, model).
 * Written once at session start. Appends to out. */
int agent_tier2(util_buf *out, const char *data_dir, const char *workspace, const char *model, long long now,
                util_err *err);
/* Tier 3: turn context (git branch and status through libgit2, time of day),
 * appended to the user text as a trailing block. Appends to out. */
int agent_tier3(util_buf *out, const char *data_dir, const char *workspace, long long now, util_err *err);

/* Reads data_dir/prompts/name into *out (malloc'd, trailing newlines cut). */
int agent_read_prompt(char **out, const char *data_dir, const char *name, util_err *err);

#endif
