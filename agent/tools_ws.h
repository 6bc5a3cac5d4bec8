/* agent/tools_ws.h: the workspace the tools run in: its root (realpath and a
 * directory descriptor), the one resolver every workspace path goes through
 * (beneath the root on descriptors, util_fs_open_beneath), where a write goes
 * and whether it is protected (.git/, .cachet/), the allow list in
 * .cachet/config.json, the confirmation policy (--yes, the allow list, else
 * ask on a TTY, else refuse) and argument helpers for the tools. Runs no tool
 * (tools.h). */
#ifndef AGENT_TOOLS_WS_H
#define AGENT_TOOLS_WS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <sys/types.h>

#include "../util/err.h"
#include "skills.h"

#define AGENT_TOOL_OUTPUT_LIMIT (8 * 1024)

/* Asks the user whether a tool may run; returns 1 yes, 0 no. */
typedef int (*agent_confirm_fn)(void *user, const char *tool, const char *what);

typedef struct agent_tools {
    char *root;   /* realpath of the workspace */
    int rootfd;   /* the workspace directory (O_PATH): every path is resolved beneath it */
    int yes;      /* --yes: run what would need confirmation */
    char **allow; /* "tool" or "tool:glob" from .cachet/config.json */
    size_t n_allow;
    char **
        secret_env; /* "secret_env" globs from .cachet/config.json: variables run_shell's commands never see */
    size_t n_secret_env;
    const char
        *key_env; /* the API key's variable (--api-key-env; borrowed): never passed to a command either */
    agent_confirm_fn confirm; /* NULL: no TTY, refuse what is not allowed */
    void *confirm_user;
    const agent_skills *skills;
    size_t max_output; /* bytes kept of a tool's output */
    int shell_timeout_s;
} agent_tools;

/* Resolves the workspace, opens its directory and reads .cachet/config.json's
 * "allow" list if present (beneath the workspace, at most 1 MiB). Release
 * with agent_tools_release. */
int agent_tools_init(agent_tools *t, const char *workspace, util_err *err);
void agent_tools_release(agent_tools *t);
/* The config's text ([text, text + len), not necessarily NUL-terminated) into
 * t's allow and secret_env lists (t zeroed or from agent_tools_init; released
 * by agent_tools_release). label names the file in messages. UTIL_EFORMAT for
 * what is not an object with string arrays. The fuzz harness's entry too. */
int agent_tools_config_parse(agent_tools *t, const char *text, size_t len, const char *label, util_err *err);

/* --- paths ---------------------------------------------------------------------- */

/* A path the model gave, as a path relative to the workspace (into out; "."
 * for the root): '..' components are refused (never needed), an absolute
 * path must start with the workspace's realpath (which is cut). No file
 * system access: what the path leads to is the resolver's business. */
int agent_tools_relative(const agent_tools *t, const char *path, char *out, size_t cap, util_err *err);

/* Opens a path the model gave, resolved beneath the workspace on descriptors
 * (symbolic links that stay inside are followed; anything that leaves is
 * UTIL_EINVAL "path 'p' is outside the workspace ..."), with open(2) flags
 * oflags (no O_CREAT). The caller closes *out_fd and acts on it, never on the
 * name again. */
int agent_tools_open(const agent_tools *t, const char *path, int oflags, int *out_fd, util_err *err);

/* Where a write goes: the directory (a descriptor beneath the workspace) and
 * the name in it, after following the links the path names while they stay
 * inside. The entry is absent or a regular file (a directory, FIFO or device
 * is refused before anything is created). rel is the resolved path relative
 * to the workspace: allow rules and the protection of .git/ and .cachet/ are
 * matched on it, not on the path the model gave. */
typedef struct agent_ws_target {
    int dirfd; /* owned: agent_ws_target_release closes it */
    char name[256];
    char rel[4096];
    int exists;  /* the entry is a regular file now */
    mode_t mode; /* its permission bits, when it exists */
} agent_ws_target;

int agent_tools_target(const agent_tools *t, const char *path, agent_ws_target *out, util_err *err);
void agent_ws_target_release(agent_ws_target *w);

/* Writes data to w atomically: a new temporary file (O_CREAT | O_EXCL) in
 * w's directory, then renameat over the name on the same descriptor. An
 * existing file keeps its permission bits. */
int agent_tools_write_at(const agent_ws_target *w, const char *data, size_t n, util_err *err);

/* What writing a workspace-relative path (resolved) can do beyond changing a
 * file (a static sentence), or NULL: anything in a .git directory (git runs
 * commands named in its config and its hooks) or in .cachet (its config
 * grants tools permissions; its skills go into the prompt). */
const char *agent_tools_protected(const agent_tools *t, const char *rel);

/* 1 if the call may run without asking (--yes or the allow list). */
int agent_tools_allowed(const agent_tools *t, const char *tool, const char *arg);

/* Asks for confirmation when needed; UTIL_ECANCELED with a message if refused. */
int agent_tools_check_confirm(agent_tools *t, const char *tool, const char *arg, util_err *err);
/* The same for a write to w: a protected file (agent_tools_protected) is asked
 * about on the terminal every time, the question saying what the file does;
 * --yes and allow rules do not apply to it, and without a terminal it is
 * refused. Anything else: agent_tools_check_confirm on w->rel. */
int agent_tools_check_write(agent_tools *t, const char *tool, const agent_ws_target *w, util_err *err);
/* A required string argument; UTIL_EINVAL naming it if missing. */
int agent_tool_arg_str(const cJSON *a, const char *tool, const char *key, int required, const char **out,
                       util_err *err);

#endif
