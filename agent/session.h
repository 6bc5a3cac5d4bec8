/* agent/session.h: sessions as JSONL files under
 * $XDG_STATE_HOME/cachet/sessions/ (one event per line: session, message,
 * request, tool_call, tool_result, reply, break, turn_end, ...), appended with
 * one write per line and fsync'd once per turn, held under an advisory lock
 * (flock) by the one process writing them. Loading reads every sound line
 * whatever surrounds it (a torn line, NUL bytes a power loss leaves, garbage,
 * absurd numbers are skipped and counted) up to a size cap. Does not compute
 * statistics (stats.c) or decide what events mean (loop.c). */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../util/err.h"

/* The largest session file read (256 MiB): a larger one is refused with a
 * message rather than read into memory. Replies and tool output are bounded
 * far below this per turn, so only a very long session gets there. */
#define AGENT_SESSION_MAX_BYTES ((size_t)256 << 20)
/* The largest turn number a session line may carry. */
#define AGENT_SESSION_MAX_TURN 1000000000

typedef struct agent_session {
    int fd;
    char id[64];
    char path[4096];
} agent_session;

/* The sessions directory ($XDG_STATE_HOME or ~/.local/state, + cachet/sessions);
 * created if create is set. */
int agent_sessions_dir(char *buf, size_t cap, int create, util_err *err);

/* Creates a new session file with a fresh id (UTC time + random suffix),
 * mode 0600, locked. */
int agent_session_create(agent_session *s, util_err *err);
/* Opens an existing session (a regular file) for appending and takes its
 * lock (flock, exclusive, not waiting): UTIL_EIO "session 'x' is in use by
 * another process ..." when another process holds it. Ends a torn last line
 * with a newline so the next event starts clean. */
int agent_session_open(agent_session *s, const char *path, util_err *err);
/* Appends one event (adds nothing to it); one write(2), no fsync. */
int agent_session_append(agent_session *s, const cJSON *ev, util_err *err);
/* fsync: everything appended so far survives a crash. */
int agent_session_sync(agent_session *s, util_err *err);
/* fsync, close (releasing the lock). */
void agent_session_close(agent_session *s);
/* Deletes the session file and closes it: a session that never completed a
 * turn (a failed run) is not left to become "the latest". */
void agent_session_discard(agent_session *s);

/* Finds a session file: NULL/"" = the most recent one; else an exact id or a
 * unique id prefix. Writes the path and id. */
int agent_session_find(const char *id, char *path, size_t cap, char *id_out, size_t id_cap, util_err *err);

/* What agent_session_load skipped. */
typedef struct agent_session_info {
    int torn;           /* the last line was unreadable (a crash mid-write, a NUL-filled tail) */
    long skipped;       /* lines skipped: cut, with NUL bytes, not a JSON object, numbers out of range */
    long first_skipped; /* the first one's line number (from 1); 0 when none */
    char warning[600];  /* "" or a sentence for the user: the file, how many lines, the first and why */
} agent_session_info;

/* Reads a session's events into a cJSON array (caller frees with
 * cJSON_Delete). Every line that parses as a JSON object whose numbers are
 * finite and within +-2^53, and whose "turn" (if any) is an integer in 0 ..
 * AGENT_SESSION_MAX_TURN, is an event; every other line is skipped and
 * counted in *info (may be NULL), and reading goes on. A FIFO or device is
 * refused without blocking, a file over AGENT_SESSION_MAX_BYTES with a
 * message naming the limit (UTIL_ERANGE). */
int agent_session_load(const char *path, cJSON **events, agent_session_info *info, util_err *err);
/* The same rules on a session's text already read ([text, text + len), any
 * bytes); path names it in the warning. The fuzz harness's entry too. */
int agent_session_parse(const char *text, size_t len, const char *path, cJSON **events,
                        agent_session_info *info, util_err *err);

/* Lists session ids, newest first (malloc'd array of malloc'd strings). */
int agent_sessions_list(char ***ids, size_t *n, util_err *err);

#endif
