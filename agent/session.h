/* agent/session.h: sessions as JSONL files under
 * $XDG_STATE_HOME/cachet/sessions/ (one event per line: session, message,
 * request, tool_call, tool_result, reply, break, turn_end), appended with one
 * write per line and fsync'd once per turn. Loading tolerates a torn last
 * line (kill -9 mid-write). Does not compute statistics (stats.c). */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/err.h"

typedef struct agent_session {
    int fd;
    char id[64];
    char path[4096];
} agent_session;

/* The sessions directory ($XDG_STATE_HOME or ~/.local/state, + cachet/sessions);
 * created if create is set. */
int agent_sessions_dir(char *buf, size_t cap, int create, util_err *err);

/* Creates a new session file with a fresh id (UTC time + random suffix). */
int agent_session_create(agent_session *s, util_err *err);
/* Opens an existing session for appending. */
int agent_session_open(agent_session *s, const char *path, util_err *err);
/* Appends one event (adds nothing to it); one write(2), no fsync. */
int agent_session_append(agent_session *s, const cJSON *ev, util_err *err);
/* fsync: everything appended so far survives a crash. */
int agent_session_sync(agent_session *s, util_err *err);
void agent_session_close(agent_session *s);

/* Finds a session file: NULL/"" = the most recent one; else an exact id or a
 * unique id prefix. Writes the path and id. */
int agent_session_find(const char *id, char *path, size_t cap, char *id_out, size_t id_cap,
                       util_err *err);

/* Reads a session's events into a cJSON array (caller frees with cJSON_Delete).
 * A malformed final line (a turn cut by a crash) is skipped; *torn says so.
 * A malformed line elsewhere is an error naming the line. */
int agent_session_load(const char *path, cJSON **events, int *torn, util_err *err);

/* Lists session ids, newest first (malloc'd array of malloc'd strings). */
int agent_sessions_list(char ***ids, size_t *n, util_err *err);

#endif
