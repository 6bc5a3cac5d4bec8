/* agent/tools.h: the built-in tools the model may call (read_file, list_dir,
 * grep, git_status, git_diff, git_log, write_file, edit_file, run_shell,
 * read_skill) by name, with output limits; the workspace they run in
 * (confinement, the confirmation policy) is tools_ws.h, included here. tools.c
 * is the registry, tools_fs.c, tools_git.c and tools_shell.c the tools
 * (tools_impl.h). Does not parse tool calls (toolcall.h) or talk to the
 * model. */
#ifndef AGENT_TOOLS_H
#define AGENT_TOOLS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "tools_ws.h"

/* 1 if a tool of that name is built in. */
int agent_tool_exists(const char *name);

/* Runs tool name with its JSON arguments; the result text goes to out
 * (truncated with a marker at max_output). A failure (bad arguments, a path
 * outside the workspace, refused confirmation, a missing file) returns an
 * error code with the message in err: the caller feeds it to the model. */
int agent_tool_run(agent_tools *t, const char *name, const cJSON *args, util_buf *out, util_err *err);

#endif
