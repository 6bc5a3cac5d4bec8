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

/* Size limits for workspace text (bytes). A longer file keeps its head and
 * tail around a visible marker. */
#define AGENT_FILE_LIMIT (16 * 1024)
#define AGENT_TOTAL_LIMIT (48 * 1024)

/* Warnings collected while loading (invalid skills, truncations, bad UTF-8). */
typedef struct agent_warnings {
    char **v;
    size_t n, cap;
} agent_warnings;

void agent_warnings_release(agent_warnings *w);
int agent_warn(agent_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- skills (skills.c) ---------------------------------------------------- */

typedef struct agent_skill {
    char *name, *description;
    char *path;    /* the SKILL.md file on disk (absolute) */
    char *display; /* how the index shows the path; stable across processes */
} agent_skill;

typedef struct agent_skills {
    agent_skill *v;
    size_t n, cap;
} agent_skills;

/* Adds the valid skills of every <dir>/<name>/SKILL.md; display_prefix is
 * what the index shows in place of dir. Invalid skills are skipped with a
 * warning naming the file and the broken rule. A later directory's skill
 * replaces an earlier one of the same name. A missing dir is not an error. */
int agent_skills_scan(agent_skills *s, const char *dir, const char *display_prefix,
                      agent_warnings *w, util_err *err);
/* Sorts by name (byte order). */
void agent_skills_sort(agent_skills *s);
const agent_skill *agent_skills_find(const agent_skills *s, const char *name);
void agent_skills_release(agent_skills *s);
/* Parses the frontmatter of a SKILL.md text: name and description (malloc'd).
 * Fails with UTIL_EFORMAT and a message naming the rule. */
int agent_skill_parse(const char *text, size_t len, const char *folder, char **name, char **desc,
                      util_err *err);

/* --- the assembled prompt -------------------------------------------------- */

typedef struct agent_prompt_opts {
    const char *workspace; /* directory with AGENTS.md etc. */
    const char *data_dir;  /* holds prompts/ and skills/ */
    const char *chat_format; /* "chatml" or "gemma": selects the tool-use text */
    const char *user_skills; /* ~/.config/cachet/skills or NULL for the default */
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
int agent_tier2(util_buf *out, const char *data_dir, const char *workspace, const char *model,
                long long now, util_err *err);
/* Tier 3: turn context (git branch and status through libgit2, time of day),
 * appended to the user text as a trailing block. Appends to out. */
int agent_tier3(util_buf *out, const char *data_dir, const char *workspace, long long now,
                util_err *err);

/* Reads data_dir/prompts/name into *out (malloc'd, trailing newlines cut). */
int agent_read_prompt(char **out, const char *data_dir, const char *name, util_err *err);

#endif
