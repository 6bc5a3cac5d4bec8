/* util/skillmd.h: SKILL.md frontmatter in the Agent Skills format, the one
 * validator the agent (which skips an invalid skill) and the linter (PL005)
 * share. Finds the frontmatter, parses it with libyaml (this module's one
 * dependency; the rest of util/ has none) and checks it against the
 * specification, returning every problem with a code, a message and a line.
 * Never prints, reads no files and does not look at the body. */
#ifndef UTIL_SKILLMD_H
#define UTIL_SKILLMD_H

#include <stddef.h>

#include "err.h"

/* What is checked (https://agentskills.io/specification):
 * - the text opens with a line '---' and a later line '---' (or '...') closes
 *   the frontmatter, which is a YAML mapping in which no key repeats;
 * - name (required): 1-64 characters, only lowercase letters, digits and
 *   hyphens, no leading, trailing or doubled hyphen, equal to the folder name;
 * - description (required): 1-1024 characters;
 * - license (optional): a string;
 * - compatibility (optional): 1-500 characters;
 * - metadata (optional): a mapping of strings to strings;
 * - allowed-tools (optional): a string (space-separated tool names).
 * Characters are Unicode code points. Other keys are allowed: agents add their
 * own. Values are strings when they are YAML scalars (`version: 1.0` is one).
 *
 * Claude Code reads the same files with looser rules (its skills reference,
 * https://code.claude.com/docs/en/skills: every field optional, name defaults
 * to the folder name and is lowercase letters, digits and hyphens up to 64
 * characters, description falls back to the first paragraph, allowed-tools is
 * a string or a YAML list; it does not read license, compatibility or
 * metadata). A problem Claude Code accepts has claude_ok set: a caller that
 * knows the file is a Claude Code skill may report it as a portability note. */
typedef enum util_skillmd_code {
    UTIL_SKILLMD_NO_FRONTMATTER = 1,   /* the first line is not '---' */
    UTIL_SKILLMD_UNCLOSED,             /* no later line '---' closes it */
    UTIL_SKILLMD_YAML,                 /* not valid YAML */
    UTIL_SKILLMD_NOT_MAPPING,          /* empty, or not a mapping */
    UTIL_SKILLMD_DUPLICATE_KEY,        /* a key given twice */
    UTIL_SKILLMD_NOT_STRING,           /* a field that must be a string is not */
    UTIL_SKILLMD_NO_NAME,              /* name is missing */
    UTIL_SKILLMD_NAME_LENGTH,          /* name is not 1-64 characters */
    UTIL_SKILLMD_NAME_CHARS,           /* name holds other than a-z, 0-9, '-' */
    UTIL_SKILLMD_NAME_HYPHEN,          /* leading, trailing or doubled hyphen */
    UTIL_SKILLMD_NAME_FOLDER,          /* name differs from the folder's name */
    UTIL_SKILLMD_NO_DESCRIPTION,       /* description is missing */
    UTIL_SKILLMD_DESCRIPTION_LENGTH,   /* description is not 1-1024 characters */
    UTIL_SKILLMD_COMPATIBILITY_LENGTH, /* compatibility is not 1-500 characters */
    UTIL_SKILLMD_METADATA,             /* metadata is not a mapping of strings */
} util_skillmd_code;

typedef struct util_skillmd_problem {
    int code;      /* util_skillmd_code */
    size_t line;   /* 1-based line of the SKILL.md text it is about */
    int claude_ok; /* 1 when Claude Code accepts what the specification does not */
    char msg[256]; /* lower case, no trailing period, the value quoted */
} util_skillmd_problem;

typedef struct util_skillmd {
    char *name;                     /* the values as written (malloc'd), NULL when absent or */
    char *description;              /* not a string; set even when they break a rule */
    util_skillmd_problem *problems; /* in the order of the text; missing fields last */
    size_t n_problems;
} util_skillmd;

/* Parses and checks the SKILL.md text [text, text + len). folder is the name
 * of the folder holding it (NULL or "": the name is not compared). Fills *out,
 * which the caller releases with util_skillmd_release; the skill is valid when
 * out->n_problems is 0. Returns UTIL_OK, or UTIL_ENOMEM (out left empty). */
int util_skillmd_check(util_skillmd *out, const char *text, size_t len, const char *folder, util_err *err);
void util_skillmd_release(util_skillmd *s);

#endif
