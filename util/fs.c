/* util/fs.c: typed, bounded file reading and resolution beneath a
 * directory on descriptors (see fs.h). */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#endif

#include "buf.h"

const char *util_fs_kind(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "a special file";
}

int util_fs_open_regular(int *out_fd, int dirfd, const char *path, int flags, util_err *err) {
    *out_fd = -1;
    int of = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    if (flags & UTIL_FS_NOFOLLOW) of |= O_NOFOLLOW;
    int fd;
    if (flags & UTIL_FS_BENEATH) {
        int rc = util_fs_open_beneath(&fd, dirfd, path, of, UTIL_FS_RESOLVE_AUTO, err);
        if (rc) return rc;
    } else {
        fd = openat(dirfd, path, of);
    }
    if (fd < 0) {
        if (errno == ELOOP && (flags & UTIL_FS_NOFOLLOW))
            return util_err_set(err, UTIL_EIO, "'%s' is a symbolic link, which is not followed here", path);
        return util_err_set(err, errno == ENOENT ? UTIL_ENOTFOUND : UTIL_EIO, "'%s': %s", path,
                            strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return util_err_set(err, UTIL_EIO, "'%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return util_err_set(err, UTIL_EFORMAT, "'%s' is %s, not a regular file", path,
                            util_fs_kind(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        return util_err_set(err, UTIL_EIO, "'%s': %s", path, strerror(e));
    }
    *out_fd = fd;
    return UTIL_OK;
}

int util_fs_read_fd(char **out, size_t *len, int fd, const char *name, size_t max, int flags, int *truncated,
                    util_err *err) {
    *out = NULL;
    if (len) *len = 0;
    if (truncated) *truncated = 0;
    if (max == 0) max = UTIL_FS_DEFAULT_MAX;
    util_buf b;
    util_buf_init(&b);
    /* size the buffer from fstat when it is sane; read until EOF regardless
     * (the file may grow or shrink meanwhile) */
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
        if (util_buf_reserve(&b, want + 1))
            return util_err_set(err, UTIL_ENOMEM, "'%s': out of memory for %zu bytes", name, want);
    }
    for (;;) {
        if (b.len == max) {
            /* one byte more tells whether the file goes on */
            char probe;
            ssize_t k = read(fd, &probe, 1);
            if (k < 0 && errno == EINTR) continue;
            if (k > 0) {
                if (flags & UTIL_FS_PREFIX) {
                    if (truncated) *truncated = 1;
                    break;
                }
                util_buf_release(&b);
                return util_err_set(err, UTIL_ERANGE, "'%s' is larger than the limit of %zu bytes", name,
                                    max);
            }
            if (k < 0) {
                int e = errno;
                util_buf_release(&b);
                return util_err_set(err, UTIL_EIO, "'%s': %s", name, strerror(e));
            }
            break;
        }
        size_t room = max - b.len;
        if (room > 65536) room = 65536;
        if (util_buf_reserve(&b, room + 1)) {
            util_buf_release(&b);
            return util_err_set(err, UTIL_ENOMEM, "'%s': out of memory", name);
        }
        ssize_t k = read(fd, b.data + b.len, room);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            util_buf_release(&b);
            return util_err_set(err, UTIL_EIO, "'%s': %s", name, strerror(e));
        }
        if (k == 0) break;
        b.len += (size_t)k;
    }
    if (util_buf_append(&b, "", 0)) {
        util_buf_release(&b);
        return util_err_set(err, UTIL_ENOMEM, "'%s': out of memory", name);
    }
    *out = util_buf_detach(&b, len);
    return UTIL_OK;
}

int util_fs_read(char **out, size_t *len, int dirfd, const char *path, size_t max, int flags, int *truncated,
                 util_err *err) {
    *out = NULL;
    if (len) *len = 0;
    int fd;
    int rc = util_fs_open_regular(&fd, dirfd, path, flags, err);
    if (rc) return rc;
    rc = util_fs_read_fd(out, len, fd, path, max, flags, truncated, err);
    close(fd);
    return rc;
}

int util_read_file(char **out, size_t *len, const char *path, util_err *err) {
    return util_fs_read(out, len, AT_FDCWD, path, 0, 0, NULL, err);
}

/* --- resolving beneath a directory ------------------------------------------- */

static int errno_code(int e) {
    if (e == ENOENT) return UTIL_ENOTFOUND;
    if (e == EXDEV) return UTIL_EINVAL;
    return UTIL_EIO;
}

static int fail_errno(util_err *err, const char *path, int e, int oflags) {
    if (e == EXDEV) return util_err_set(err, UTIL_EINVAL, "'%s' leads outside the directory", path);
    if (e == ELOOP && (oflags & O_NOFOLLOW))
        return util_err_set(err, UTIL_EIO, "'%s' is a symbolic link, which is not followed here", path);
    if (e == ELOOP) return util_err_set(err, UTIL_EIO, "'%s': too many symbolic links (or a loop)", path);
    return util_err_set(err, errno_code(e), "'%s': %s", path, strerror(e));
}

/* openat2 with RESOLVE_BENEATH: 1 when the kernel does not have it (the
 * caller falls back), else UTIL_OK or an error. EAGAIN (a rename raced a '..')
 * is retried a few times, then left to the walk. */
static int open_kernel(int *out, int rootfd, const char *path, int oflags, util_err *err) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(oflags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0; tries < 16; tries++) {
        long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof how);
        if (fd >= 0) {
            *out = (int)fd;
            return UTIL_OK;
        }
        if (errno == EAGAIN || errno == EINTR) continue;
        /* ENOSYS: an older kernel; EPERM: a seccomp filter that does not know it */
        if (errno == ENOSYS || errno == EPERM) return 1;
        return fail_errno(err, path, errno, oflags);
    }
    return 1;
#else
    (void)out;
    (void)rootfd;
    (void)path;
    (void)oflags;
    (void)err;
    return 1;
#endif
}

typedef struct walk {
    int fd[256]; /* the directories descended into; fd[0] is the root */
    int n;
} walk;

static void walk_close(walk *w) {
    while (w->n > 0) close(w->fd[--w->n]);
}

static int is_link(int dirfd, const char *name) {
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* rest = target + "/" + rest[pos..] (+ "/" when a directory was required). */
static int splice_link(char **rest, size_t pos, const char *target, int want_dir) {
    size_t tl = strlen(target), rl = strlen(*rest + pos);
    char *n = malloc(tl + rl + 3);
    if (!n) return -1;
    memcpy(n, target, tl);
    size_t k = tl;
    if (rl) {
        n[k++] = '/';
        memcpy(n + k, *rest + pos, rl);
        k += rl;
    } else if (want_dir) {
        n[k++] = '/';
    }
    n[k] = '\0';
    free(*rest);
    *rest = n;
    return 0;
}

/* The walk (see fs.h): one component at a time, each opened with O_NOFOLLOW
 * relative to the directory before it. */
static int open_walk(int *out, int rootfd, const char *path, int oflags, util_err *err) {
    walk w = {.n = 0};
    if (path[0] == '/') return util_err_set(err, UTIL_EINVAL, "'%s' leads outside the directory", path);
    w.fd[0] = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (w.fd[0] < 0) return fail_errno(err, path, errno, oflags);
    w.n = 1;
    char *rest = strdup(path);
    if (!rest) {
        walk_close(&w);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    size_t pos = 0;
    int links = 0, rc = UTIL_OK;
    for (;;) {
        const char *s = rest + pos;
        while (*s == '/') s++;
        int top = w.fd[w.n - 1];
        if (!*s) { /* the path ends at a directory already open */
            int fd = openat(top, ".", oflags | O_CLOEXEC);
            if (fd < 0)
                rc = fail_errno(err, path, errno, oflags);
            else
                *out = fd;
            break;
        }
        const char *end = strchr(s, '/');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *after = s + len;
        while (*after == '/') after++;
        int last = *after == '\0', want_dir = last && end != NULL;
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            rc = fail_errno(err, path, ENAMETOOLONG, 0);
            break;
        }
        memcpy(name, s, len);
        name[len] = '\0';
        pos = (size_t)(after - rest);
        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            if (w.n == 1) {
                rc = util_err_set(err, UTIL_EINVAL, "'%s' leads outside the directory", path);
                break;
            }
            close(w.fd[--w.n]);
            continue;
        }
        int fd, e;
        if (!last) {
            fd = openat(top, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) {
                if (w.n == (int)(sizeof w.fd / sizeof w.fd[0])) {
                    close(fd);
                    rc = fail_errno(err, path, ENAMETOOLONG, 0);
                    break;
                }
                w.fd[w.n++] = fd;
                continue;
            }
            e = errno;
            if ((e != ENOTDIR && e != ELOOP) || !is_link(top, name)) {
                rc = fail_errno(err, path, e, oflags);
                break;
            }
        } else {
            fd = openat(top, name, oflags | O_NOFOLLOW | O_CLOEXEC | (want_dir ? O_DIRECTORY : 0));
            if (fd >= 0) {
                struct stat st;
                if (!(oflags & O_PATH) || fstat(fd, &st) != 0 || !S_ISLNK(st.st_mode)) {
                    *out = fd;
                    break;
                }
                close(fd); /* O_PATH | O_NOFOLLOW opened the link itself */
                e = ELOOP;
            } else {
                e = errno;
            }
            if ((e != ELOOP && e != ENOTDIR) || (oflags & O_NOFOLLOW) || !is_link(top, name)) {
                rc = fail_errno(err, path, e, oflags);
                break;
            }
        }
        /* a symbolic link: resolve its target from here, within the stack */
        char target[PATH_MAX];
        ssize_t k = readlinkat(top, name, target, sizeof target - 1);
        if (k < 0) {
            rc = fail_errno(err, path, errno, oflags);
            break;
        }
        target[k] = '\0';
        if (++links > UTIL_FS_MAX_LINKS) {
            rc = fail_errno(err, path, ELOOP, 0);
            break;
        }
        if (target[0] == '/') {
            rc = util_err_set(err, UTIL_EINVAL, "'%s' leads outside the directory", path);
            break;
        }
        if (splice_link(&rest, pos, target, want_dir)) {
            rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
            break;
        }
        pos = 0;
    }
    free(rest);
    walk_close(&w);
    return rc;
}

int util_fs_open_beneath(int *out_fd, int rootfd, const char *path, int oflags, util_fs_resolve how,
                         util_err *err) {
    *out_fd = -1;
    if (oflags & O_CREAT)
        return util_err_set(err, UTIL_EINTERNAL, "'%s': O_CREAT is not resolved beneath", path);
    if (!path || !*path) path = ".";
    if (how == UTIL_FS_RESOLVE_AUTO) {
        const char *env = getenv("CACHET_FS_RESOLVE");
        if (env && strcmp(env, "walk") == 0) how = UTIL_FS_RESOLVE_WALK;
    }
    if (how != UTIL_FS_RESOLVE_WALK) {
        int rc = open_kernel(out_fd, rootfd, path, oflags, err);
        if (rc <= 0) return rc;
        if (how == UTIL_FS_RESOLVE_KERNEL)
            return util_err_set(err, UTIL_EUNSUPPORTED, "'%s': this kernel has no openat2", path);
    }
    return open_walk(out_fd, rootfd, path, oflags, err);
}

/* The name of the entry of directory par that is (dev, ino), into name. */
static int name_in(int par, dev_t dev, ino_t ino, char *name, size_t cap) {
    int dfd = openat(par, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int found = -1;
    /* first by the inode readdir reports, then (a mount point reports the
     * inode below it) by fstatat of every directory */
    for (int pass = 0; pass < 2 && found < 0; pass++) {
        rewinddir(d);
        struct dirent *de;
        while (found < 0 && (de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
            if (pass == 0 && de->d_ino != ino) continue;
            if (pass == 1 && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) continue;
            struct stat st;
            if (fstatat(par, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev &&
                st.st_ino == ino && strlen(de->d_name) < cap) {
                memcpy(name, de->d_name, strlen(de->d_name) + 1);
                found = 0;
            }
        }
    }
    closedir(d);
    return found;
}

int util_fs_relpath(char *out, size_t cap, int rootfd, int fd, util_err *err) {
    struct stat rs, cs;
    if (cap) out[0] = '\0';
    if (fstat(rootfd, &rs) != 0)
        return util_err_set(err, UTIL_EIO, "the root directory: %s", strerror(errno));
    int cur = openat(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0) return util_err_set(err, UTIL_EIO, "a directory: %s", strerror(errno));
    char buf[PATH_MAX];
    size_t start = sizeof buf - 1;
    buf[start] = '\0';
    int rc = UTIL_OK;
    for (int depth = 0;; depth++) {
        if (fstat(cur, &cs) != 0) {
            rc = util_err_set(err, UTIL_EIO, "a directory: %s", strerror(errno));
            break;
        }
        if (cs.st_dev == rs.st_dev && cs.st_ino == rs.st_ino) break;
        int par = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat ps;
        if (par < 0 || fstat(par, &ps) != 0) {
            rc = util_err_set(err, UTIL_EIO, "a parent directory: %s", strerror(errno));
            if (par >= 0) close(par);
            break;
        }
        if ((ps.st_dev == cs.st_dev && ps.st_ino == cs.st_ino) || depth > 512) { /* '/' reached */
            close(par);
            rc = util_err_set(err, UTIL_EINVAL, "the directory is not beneath the root");
            break;
        }
        char name[NAME_MAX + 1];
        if (name_in(par, cs.st_dev, cs.st_ino, name, sizeof name) != 0) {
            close(par);
            rc = util_err_set(err, UTIL_EIO, "a directory was not found in its parent (moved meanwhile?)");
            break;
        }
        size_t l = strlen(name) + (start < sizeof buf - 1 ? 1 : 0);
        if (l > start) {
            close(par);
            rc = util_err_set(err, UTIL_ERANGE, "the path is too long");
            break;
        }
        if (start < sizeof buf - 1) buf[--start] = '/';
        start -= strlen(name);
        memcpy(buf + start, name, strlen(name));
        close(cur);
        cur = par;
    }
    close(cur);
    if (rc) return rc;
    size_t n = sizeof buf - 1 - start;
    if (n + 1 > cap) return util_err_set(err, UTIL_ERANGE, "the path is too long");
    memcpy(out, buf + start, n + 1);
    return UTIL_OK;
}
