/* agent/session.c: JSONL session files: create and open under an advisory
 * lock, append (one write per line with O_APPEND), fsync per turn, discard,
 * find by id or prefix, list, and a bounded load that skips (and counts)
 * every unreadable line instead of stopping at it. Does not decide what
 * events mean (loop.c, stats.c). */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/text.h"
#include "../util/vec.h"

static int mkdir_p(const char *path) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST) return UTIL_EIO;
        *p = '/';
    }
    return mkdir(tmp, 0700) != 0 && errno != EEXIST ? UTIL_EIO : UTIL_OK;
}

int agent_sessions_dir(char *buf, size_t cap, int create, util_err *err) {
    const char *x = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    if (x && *x)
        snprintf(buf, cap, "%s/cachet/sessions", x);
    else if (home && *home)
        snprintf(buf, cap, "%s/.local/state/cachet/sessions", home);
    else
        return util_err_set(err, UTIL_ENOTFOUND, "neither XDG_STATE_HOME nor HOME is set");
    if (create && mkdir_p(buf) != 0)
        return util_err_set(err, UTIL_EIO, "cannot create '%s': %s", buf, strerror(errno));
    return UTIL_OK;
}

int agent_session_create(agent_session *s, util_err *err) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    char dir[4096];
    int rc = agent_sessions_dir(dir, sizeof dir, 1, err);
    if (rc) return rc;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    unsigned rnd = (unsigned)(ts.tv_nsec ^ ((unsigned)getpid() << 12));
    for (int tries = 0; tries < 16; tries++, rnd = rnd * 1103515245u + 12345u) {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(s->id, sizeof s->id, "%s-%04x", stamp, (rnd >> 8) & 0xffff);
        snprintf(s->path, sizeof s->path, "%s/%s.jsonl", dir, s->id);
        s->fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
        if (s->fd >= 0) {
            flock(s->fd, LOCK_EX | LOCK_NB); /* new: nobody else can hold it yet */
            return UTIL_OK;
        }
        if (errno != EEXIST) break;
    }
    return util_err_set(err, UTIL_EIO, "cannot create session file '%s': %s", s->path, strerror(errno));
}

/* The lock of an open session: one writer per file, so two agents resuming
 * one session cannot interleave its history. */
static int lock_session(agent_session *s, util_err *err) {
    while (flock(s->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno == EWOULDBLOCK)
            return util_err_set(err, UTIL_EIO,
                                "session '%s' is in use by another process (another cachet holds its lock): "
                                "finish that one first, or start a new session",
                                s->id);
        return util_err_set(err, UTIL_EIO, "session '%s': flock: %s", s->path, strerror(errno));
    }
    return UTIL_OK;
}

int agent_session_open(agent_session *s, const char *path, util_err *err) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    const char *b = strrchr(path, '/');
    snprintf(s->id, sizeof s->id, "%s", b ? b + 1 : path);
    char *dot = strstr(s->id, ".jsonl");
    if (dot) *dot = '\0';
    /* a regular file, checked without blocking on a FIFO */
    int r;
    int rc = util_fs_open_regular(&r, AT_FDCWD, path, 0, err);
    if (rc) return rc;
    s->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (s->fd < 0 || fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = util_err_set(err, UTIL_EIO, "session '%s': %s", path,
                          s->fd < 0 ? strerror(errno) : "not a regular file");
        close(r);
        agent_session_close(s);
        return rc;
    }
    rc = lock_session(s, err);
    /* a torn last line from a crash: end it so the next event starts clean */
    char c = '\n';
    if (!rc && fstat(r, &st) == 0 && st.st_size > 0 && pread(r, &c, 1, st.st_size - 1) == 1 && c != '\n' &&
        write(s->fd, "\n", 1) != 1)
        rc = util_err_set(err, UTIL_EIO, "session '%s': %s", path, strerror(errno));
    close(r);
    if (rc) {
        if (s->fd >= 0) close(s->fd); /* not agent_session_close: nothing of ours to fsync */
        s->fd = -1;
    }
    return rc;
}

int agent_session_append(agent_session *s, const cJSON *ev, util_err *err) {
    if (s->fd < 0) return UTIL_OK;
    char *printed = cJSON_PrintUnformatted(ev);
    if (!printed) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    /* Valid UTF-8 on disk whatever the strings held (a file the agent read, a
     * backend's reply): invalid bytes can only sit inside JSON strings, where
     * each becomes U+FFFD (util_utf8_append_valid), so the line stays JSON. */
    util_buf b;
    util_buf_init(&b);
    size_t rep = util_utf8_append_valid(&b, printed, strlen(printed));
    free(printed);
    if (rep == (size_t)-1 || util_buf_append(&b, "\n", 1)) {
        util_buf_release(&b);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    char *line = b.data;
    size_t n = b.len - 1;
    size_t off = 0;
    int rc = UTIL_OK;
    while (off < n + 1) {
        ssize_t w = write(s->fd, line + off, n + 1 - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            rc = util_err_set(err, UTIL_EIO, "session '%s': write: %s", s->path, strerror(errno));
            break;
        }
        off += (size_t)w;
    }
    util_buf_release(&b);
    return rc;
}

int agent_session_sync(agent_session *s, util_err *err) {
    if (s->fd >= 0 && fsync(s->fd) != 0)
        return util_err_set(err, UTIL_EIO, "session '%s': fsync: %s", s->path, strerror(errno));
    return UTIL_OK;
}

void agent_session_close(agent_session *s) {
    if (s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    s->fd = -1;
}

void agent_session_discard(agent_session *s) {
    if (s->fd < 0) return;
    unlink(s->path); /* while the lock is held: no other process is using it */
    close(s->fd);
    s->fd = -1;
}

/* --- finding and listing ------------------------------------------------------------- */

static int cmp_desc(const void *a, const void *b) { return strcmp(*(char *const *)b, *(char *const *)a); }

int agent_sessions_list(char ***ids, size_t *n, util_err *err) {
    *ids = NULL;
    *n = 0;
    char dir[4096];
    int rc = agent_sessions_dir(dir, sizeof dir, 0, err);
    if (rc) return rc;
    DIR *d = opendir(dir);
    if (!d) return UTIL_OK;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l <= 6 || strcmp(de->d_name + l - 6, ".jsonl") != 0) continue;
        if (util_grow(ids, &cap, *n + 1, sizeof **ids)) break;
        char *id = strndup(de->d_name, l - 6);
        if (!id) break;
        (*ids)[(*n)++] = id;
    }
    closedir(d);
    if (*n) qsort(*ids, *n, sizeof **ids, cmp_desc); /* ids start with the UTC time */
    return UTIL_OK;
}

int agent_session_find(const char *id, char *path, size_t cap, char *id_out, size_t id_cap, util_err *err) {
    char dir[4096];
    int rc = agent_sessions_dir(dir, sizeof dir, 0, err);
    if (rc) return rc;
    char **ids;
    size_t n;
    if ((rc = agent_sessions_list(&ids, &n, err))) return rc;
    const char *found = NULL;
    int matches = 0;
    for (size_t i = 0; i < n; i++) {
        if (!id || !*id) {
            found = ids[0];
            matches = 1;
            break;
        }
        if (strcmp(ids[i], id) == 0) {
            found = ids[i];
            matches = 1;
            break;
        }
        if (strncmp(ids[i], id, strlen(id)) == 0) {
            found = found ? found : ids[i];
            matches++;
        }
    }
    if (matches == 1) {
        snprintf(path, cap, "%s/%s.jsonl", dir, found);
        snprintf(id_out, id_cap, "%s", found);
    } else if (matches == 0) {
        rc = util_err_set(err, UTIL_ENOTFOUND,
                          id && *id ? "no session '%s' in '%s'" : "%sno sessions in '%s'",
                          id && *id ? id : "", dir);
    } else {
        rc = util_err_set(err, UTIL_EINVAL, "session id '%s' is ambiguous (%d sessions match)", id, matches);
    }
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    return rc;
}

/* --- loading -------------------------------------------------------------------------- */

/* Why a line is not an event, or NULL when *out is one (then the caller owns it). */
static const char *parse_line(const char *s, size_t n, cJSON **out) {
    *out = NULL;
    if (memchr(s, '\0', n)) return "NUL bytes";
    cJSON *ev = cJSON_ParseWithLength(s, n);
    if (!cJSON_IsObject(ev)) {
        cJSON_Delete(ev);
        return "not a JSON object";
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, ev) {
        if (!cJSON_IsNumber(v)) continue;
        double d = v->valuedouble;
        int bad = !isfinite(d) || fabs(d) > 9007199254740992.0; /* 2^53: exact in a double, fits a long */
        if (!bad && strcmp(v->string ? v->string : "", "turn") == 0)
            bad = d < 0 || d > AGENT_SESSION_MAX_TURN || d != floor(d);
        if (bad) {
            cJSON_Delete(ev);
            return "a number out of range";
        }
    }
    *out = ev;
    return NULL;
}

int agent_session_load(const char *path, cJSON **events, agent_session_info *info, util_err *err) {
    if (info) memset(info, 0, sizeof *info);
    *events = NULL;
    int fd;
    int rc = util_fs_open_regular(&fd, AT_FDCWD, path, 0, err);
    if (rc) return rc;
    struct stat st;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size > AGENT_SESSION_MAX_BYTES) {
        close(fd);
        return util_err_set(err, UTIL_ERANGE,
                            "session '%s' is %lld MiB, larger than the limit of %zu MiB for a session file: "
                            "start a new session",
                            path, (long long)(st.st_size >> 20), AGENT_SESSION_MAX_BYTES >> 20);
    }
    char *text = NULL;
    size_t len = 0;
    rc = util_fs_read_fd(&text, &len, fd, path, AGENT_SESSION_MAX_BYTES, 0, NULL, err);
    close(fd);
    if (rc) return rc;
    rc = agent_session_parse(text, len, path, events, info, err);
    free(text);
    return rc;
}

int agent_session_parse(const char *text, size_t len, const char *path, cJSON **events,
                        agent_session_info *info, util_err *err) {
    agent_session_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    *events = NULL;
    cJSON *arr = cJSON_CreateArray();
    if (!arr) return util_err_set(err, UTIL_ENOMEM, "session '%s': out of memory", path);
    const char *why_first = NULL;
    long line = 0;
    for (size_t off = 0; off < len;) {
        const char *s = text + off, *nl = memchr(s, '\n', len - off);
        size_t n = nl ? (size_t)(nl - s) : len - off;
        off += n + (nl ? 1 : 0);
        line++;
        if (n && s[n - 1] == '\r') n--;
        if (n == 0) continue;
        cJSON *ev;
        const char *why = parse_line(s, n, &ev);
        if (!why) {
            cJSON_AddItemToArray(arr, ev);
            continue;
        }
        if (off >= len) info->torn = 1; /* the last line: a write cut by a crash */
        if (!info->skipped++) {
            info->first_skipped = line;
            why_first = off >= len && !nl && strcmp(why, "not a JSON object") == 0 ? "cut short" : why;
        }
    }
    if (info->skipped)
        snprintf(
            info->warning, sizeof info->warning,
            "session '%s': skipped %ld unreadable line%s (the first: line %ld, %s); every other line was read",
            path, info->skipped, info->skipped == 1 ? "" : "s", info->first_skipped, why_first);
    *events = arr;
    return UTIL_OK;
}
