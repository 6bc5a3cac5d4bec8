/* agent/tools.h: the built-in tools the model may call (read_file, list_dir,
 * grep, git_status, git_diff, git_log, write_file, edit_file, run_shell,
 * read_skill): confinement to the workspace, the confirmation policy, output
 * limits. Does not parse tool calls (toolcall.h) or talk to the model. */
#ifndef AGENT_TOOLS_H
#define AGENT_TOOLS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "prompt.h"

#define AGENT_TOOL_OUTPUT_LIMIT (8 * 1024)

/* Asks the user whether a tool may run; returns 1 yes, 0 no. */
typedef int (*agent_confirm_fn)(void *user, const char *tool, const char *what);

typedef struct agent_tools {
    char *root;            /* realpath of the workspace */
    int yes;               /* --yes: run what would need confirmation */
    char **allow;          /* "tool" or "tool:glob" from .cachet/config.json */
    size_t n_allow;
    agent_confirm_fn confirm; /* NULL: no TTY, refuse what is not allowed */
    void *confirm_user;
    const agent_skills *skills;
    size_t max_output;     /* bytes kept of a tool's output */
    int shell_timeout_s;
} agent_tools;

/* Resolves the workspace and reads .cachet/config.json's "allow" list if
 * present. Release with agent_tools_release. */
int agent_tools_init(agent_tools *t, const char *workspace, util_err *err);
void agent_tools_release(agent_tools *t);

/* 1 if a tool of that name is built in. */
int agent_tool_exists(const char *name);

/* Runs tool name with its JSON arguments; the result text goes to out
 * (truncated with a marker at max_output). A failure (bad arguments, a path
 * outside the workspace, refused confirmation, a missing file) returns an
 * error code with the message in err: the caller feeds it to the model. */
int agent_tool_run(agent_tools *t, const char *name, const cJSON *args, util_buf *out,
                   util_err *err);

/* Maps a path the model gave to an absolute path inside the workspace.
 * Refuses '..' components, absolute paths outside the workspace and symlinks
 * that lead out of it. for_write: the file may not exist (its parent must). */
int agent_tools_resolve(const agent_tools *t, const char *rel, int for_write, char *out,
                        size_t cap, util_err *err);

/* 1 if the call may run without asking (--yes or the allow list). */
int agent_tools_allowed(const agent_tools *t, const char *tool, const char *arg);

/* --- per-file tool implementations (tools_fs.c, tools_git.c, tools_shell.c) --- */
int agent_tool_read_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_list_dir(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_grep(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_write_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_edit_file(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_status(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_diff(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_git_log(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
int agent_tool_run_shell(agent_tools *t, const cJSON *a, util_buf *out, util_err *err);
/* Asks for confirmation when needed; UTIL_ECANCELED with a message if refused. */
int agent_tools_check_confirm(agent_tools *t, const char *tool, const char *arg, util_err *err);
/* A required string argument; UTIL_EINVAL naming it if missing. */
int agent_tool_arg_str(const cJSON *a, const char *tool, const char *key, int required,
                       const char **out, util_err *err);
/* git branch + short status lines for the turn context (tier 3); appends to out. */
int agent_git_summary(const char *workspace, util_buf *out);

#endif
