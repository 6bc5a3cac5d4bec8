/* agent/skills.h: skills in the Agent Skills format (<dir>/<name>/SKILL.md
 * with YAML frontmatter): scanning folders into a sorted index, finding one
 * by name, and the warnings list loaders fill (invalid skills, truncations,
 * bad UTF-8). Used by the prompt (the index) and the read_skill tool; knows
 * nothing of either. */
#ifndef AGENT_SKILLS_H
#define AGENT_SKILLS_H

#include <stddef.h>

#include "../util/err.h"

/* Warnings collected while loading (invalid skills, truncations, bad UTF-8). */
typedef struct agent_warnings {
    char **v;
    size_t n, cap;
} agent_warnings;

void agent_warnings_release(agent_warnings *w);
int agent_warn(agent_warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

#endif
