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

/* A SKILL.md larger than this is skipped with a warning. */
#define AGENT_SKILL_MAX ((size_t)256 << 10)

typedef struct agent_skill {
    char *name, *description;
    char *root;    /* the directory the skill is confined to (absolute) */
    char *rel;     /* its SKILL.md relative to root: read beneath root only */
    char *path;    /* root/rel, for messages */
    char *display; /* how the index shows the path; stable across processes */
} agent_skill;

typedef struct agent_skills {
    agent_skill *v;
    size_t n, cap;
} agent_skills;

/* Adds the valid skills of every root/sub/<name>/SKILL.md; display_prefix
 * is what the index shows in place of root/sub. Everything is resolved
 * beneath root on descriptors (util_fs_open_beneath): a folder or file that
 * leads outside root, is not a regular file or is larger than
 * AGENT_SKILL_MAX is skipped with a warning naming it, as is an invalid
 * skill (with the broken rule). A later directory's skill replaces an earlier
 * one of the same name. A missing directory is not an error. */
int agent_skills_scan(agent_skills *s, const char *root, const char *sub, const char *display_prefix,
                      agent_warnings *w, util_err *err);
/* Reads a skill's SKILL.md again, beneath its root (a folder swapped for a
 * link to outside since the scan is refused: UTIL_EINVAL): malloc'd text. */
int agent_skill_read(const agent_skill *k, char **text, size_t *len, util_err *err);
/* Sorts by name (byte order). */
void agent_skills_sort(agent_skills *s);
const agent_skill *agent_skills_find(const agent_skills *s, const char *name);
void agent_skills_release(agent_skills *s);
/* Parses the frontmatter of a SKILL.md text: name and description (malloc'd).
 * Fails with UTIL_EFORMAT and a message naming the rule. */
int agent_skill_parse(const char *text, size_t len, const char *folder, char **name, char **desc,
                      util_err *err);

#endif
