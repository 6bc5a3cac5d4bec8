/* agent/shellwords.h: a command line split into words the way /bin/sh splits
 * a simple command (blanks, single and double quotes, backslashes), with no
 * expansion at all, and the allow rules of run_shell ("run_shell:make *")
 * matched word by word against those words. A command with any shell syntax
 * (operators, redirections, expansions, globs, comments, assignments,
 * keywords, control characters) gets no words: the feature found is named
 * instead, and no rule can match it. Runs nothing (tools_shell.c does). */
#ifndef AGENT_SHELLWORDS_H
#define AGENT_SHELLWORDS_H

#include <stddef.h>

#include "../util/err.h"

typedef struct agent_words {
    char **v; /* n words, then NULL (an argv); each malloc'd */
    size_t n;
} agent_words;

/* Splits cmd into w (zeroed first; release with agent_words_release).
 * UTIL_OK with *why NULL: a simple command, w holds its words (at least one).
 * UTIL_OK with *why set: the command needs a shell; *why names the first
 * feature that does ("';' (a command separator)", a static string) and w is
 * empty. UTIL_EINVAL: nothing but blanks. UTIL_ENOMEM. */
int agent_shell_split(agent_words *w, const char *cmd, const char **why, util_err *err);
void agent_words_release(agent_words *w);

/* 1 when the rule text (what follows "run_shell:") matches the words. The
 * rule is split like a command, except that unquoted * ? [...] are fnmatch
 * patterns on one word each (quoted, they are literal); a lone unquoted '*'
 * as the last word stands for any number of further words, none included.
 * A rule that itself holds other shell syntax matches nothing. */
int agent_shell_rule_match(const char *rule, const agent_words *w);

#endif
