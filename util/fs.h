/* util/fs.h: typed, bounded reading of files. A file is opened without
 * blocking and checked to be a regular file before anything is read (a FIFO,
 * socket or device is refused with a message naming its kind, never waited
 * on), and read up to a cap: a larger file is an error naming the limit, or
 * its first `max` bytes when the caller asks for a prefix. Paths may be
 * relative to a directory descriptor. Does not decide which paths are allowed
 * (agent/tools_ws.c confines paths to a workspace); never prints. */
#ifndef UTIL_FS_H
#define UTIL_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* The cap util_read_file applies (128 MiB): callers that may meet larger
 * files on purpose pass their own to util_fs_read. */
#define UTIL_FS_DEFAULT_MAX ((size_t)128 << 20)

enum {
    UTIL_FS_NOFOLLOW = 1, /* refuse a symbolic link as the last component */
    UTIL_FS_PREFIX = 2,   /* a file longer than max yields its first max bytes */
};

/* "a directory", "a FIFO", "a socket", "a character device", "a block
 * device", "a symbolic link", "a regular file" (static strings). */
const char *util_fs_kind(mode_t mode);

/* Opens path (relative to dirfd, or AT_FDCWD) for reading: O_NONBLOCK while
 * opening so a FIFO cannot block, then fstat; anything but a regular file is
 * UTIL_EFORMAT "'path' is a FIFO, not a regular file". The descriptor (blocking
 * again, close-on-exec) goes to *out_fd; the caller closes it. */
int util_fs_open_regular(int *out_fd, int dirfd, const char *path, int flags, util_err *err);

/* Reads fd to its end, at most max bytes (0: UTIL_FS_DEFAULT_MAX) into *out
 * (NUL-terminated, caller frees). More than max: UTIL_ERANGE naming `name`
 * and the limit, unless flags has UTIL_FS_PREFIX (then *truncated, if
 * non-NULL, is set to 1 and the first max bytes are returned). */
int util_fs_read_fd(char **out, size_t *len, int fd, const char *name, size_t max, int flags,
                    int *truncated, util_err *err);

/* Reads a whole regular file into *out (NUL-terminated, caller frees), at
 * most UTIL_FS_DEFAULT_MAX bytes: util_fs_read(out, len, AT_FDCWD, path, 0, 0,
 * NULL, err). */
int util_read_file(char **out, size_t *len, const char *path, util_err *err);

/* util_fs_open_regular + util_fs_read_fd. */
int util_fs_read(char **out, size_t *len, int dirfd, const char *path, size_t max, int flags,
                 int *truncated, util_err *err);

#endif
