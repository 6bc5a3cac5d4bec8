/* agent/tools_ws.h: the workspace the tools run in: its root (realpath),
 * confinement of the paths a model gives, the allow list in
 * .cachet/config.json, the confirmation policy (--yes, the allow list, else
 * ask on a TTY, else refuse) and argument helpers for the tools. Runs no tool
 * (tools.h). */
#ifndef AGENT_TOOLS_WS_H
#define AGENT_TOOLS_WS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/err.h"
#include "skills.h"

#define AGENT_TOOL_OUTPUT_LIMIT (8 * 1024)

/* Asks the user whether a tool may run; returns 1 yes, 0 no. */
typedef int (*agent_confirm_fn)(void *user, const char *tool, const char *what);

typedef struct agent_tools {
    char *root;            /* realpath of the workspace */
    int yes;               /* --yes: run what would need confirmation */
    char **allow;          /* "tool" or "tool:glob" from .cachet/config.json */
    size_t n_allow;
    char **secret_env;     /* "secret_env" globs from .cachet/config.json: variables run_shell's commands never see */
    size_t n_secret_env;
    const char *key_env;   /* the API key's variable (--api-key-env; borrowed): never passed to a command either */
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

/* Maps a path the model gave to an absolute path inside the workspace.
 * Refuses '..' components, absolute paths outside the workspace and symlinks
 * that lead out of it. for_write: the file may not exist (its parent must). */
int agent_tools_resolve(const agent_tools *t, const char *rel, int for_write, char *out,
                        size_t cap, util_err *err);

/* 1 if the call may run without asking (--yes or the allow list). */
int agent_tools_allowed(const agent_tools *t, const char *tool, const char *arg);

/* Asks for confirmation when needed; UTIL_ECANCELED with a message if refused. */
int agent_tools_check_confirm(agent_tools *t, const char *tool, const char *arg, util_err *err);
/* A required string argument; UTIL_EINVAL naming it if missing. */
int agent_tool_arg_str(const cJSON *a, const char *tool, const char *key, int required,
                       const char **out, util_err *err);

#endif
