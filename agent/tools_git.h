/* agent/tools_git.h: what the git tools (tools_git.c, libgit2) offer outside
 * the tool registry: the short repository summary of the turn context. The
 * tools themselves are reached through tools.h by name. */
#ifndef AGENT_TOOLS_GIT_H
#define AGENT_TOOLS_GIT_H

#include "../util/buf.h"

/* git branch + short status lines for the turn context (tier 3); appends to out. */
int agent_git_summary(const char *workspace, util_buf *out);

#endif
