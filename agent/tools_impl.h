/* agent/tools_impl.h: the tools themselves (tools_fs.c, tools_git.c,
 * tools_shell.c), which only the registry in tools.c calls. Calls run one way:
 * tools.c -> the tools -> tools_ws.c. Not a public API. */
#ifndef AGENT_TOOLS_IMPL_H
#define AGENT_TOOLS_IMPL_H

#include <cjson/cJSON.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "tools_ws.h"

int agent_tool_read_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_list_dir(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_grep(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_write_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_edit_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_status(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_diff(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_log(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_run_shell(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);

#endif
