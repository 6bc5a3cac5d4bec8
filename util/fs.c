/* util/fs.c: typed, bounded file reading (see fs.h). */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    int fd = openat(dirfd, path, of);
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

int util_fs_read_fd(char **out, size_t *len, int fd, const char *name, size_t max, int flags,
                    int *truncated, util_err *err) {
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

int util_fs_read(char **out, size_t *len, int dirfd, const char *path, size_t max, int flags,
                 int *truncated, util_err *err) {
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
