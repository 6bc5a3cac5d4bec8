/* util/fs.h: typed, bounded reading of files. A file is opened without
 * blocking and checked to be a regular file before anything is read (a FIFO,
 * socket or device is refused with a message naming its kind, never waited
 * on), and read up to a cap: a larger file is an error naming the limit, or
 * its first `max` bytes when the caller asks for a prefix. Paths may be
 * relative to a directory descriptor, and resolved beneath it on descriptors
 * (openat2 or a per-component walk), so nothing leaves that directory. Does
 * not decide which directories are roots (agent/tools_ws.c: the workspace);
 * never prints. */
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
    UTIL_FS_BENEATH = 4,  /* resolve path beneath dirfd (util_fs_open_beneath, AUTO) */
};

/* "a directory", "a FIFO", "a socket", "a character device", "a block
 * device", "a symbolic link", "a regular file" (static strings). */
const char *util_fs_kind(mode_t mode);

/* Opens path (relative to dirfd, or AT_FDCWD) for reading: O_NONBLOCK while
 * opening so a FIFO cannot block, then fstat; anything but a regular file is
 * UTIL_EFORMAT "'path' is a FIFO, not a regular file". The descriptor (blocking
 * again, close-on-exec) goes to *out_fd; the caller closes it. With
 * UTIL_FS_BENEATH, path is resolved beneath dirfd and a way out is UTIL_EINVAL
 * (util_fs_open_beneath). */
int util_fs_open_regular(int *out_fd, int dirfd, const char *path, int flags, util_err *err);

/* Reads fd to its end, at most max bytes (0: UTIL_FS_DEFAULT_MAX) into *out
 * (NUL-terminated, caller frees). More than max: UTIL_ERANGE naming `name`
 * and the limit, unless flags has UTIL_FS_PREFIX (then *truncated, if
 * non-NULL, is set to 1 and the first max bytes are returned). */
int util_fs_read_fd(char **out, size_t *len, int fd, const char *name, size_t max, int flags, int *truncated,
                    util_err *err);

/* Reads a whole regular file into *out (NUL-terminated, caller frees), at
 * most UTIL_FS_DEFAULT_MAX bytes: util_fs_read(out, len, AT_FDCWD, path, 0, 0,
 * NULL, err). */
int util_read_file(char **out, size_t *len, const char *path, util_err *err);

/* util_fs_open_regular + util_fs_read_fd. */
int util_fs_read(char **out, size_t *len, int dirfd, const char *path, size_t max, int flags, int *truncated,
                 util_err *err);

/* --- resolving beneath a directory ------------------------------------------ */

typedef enum util_fs_resolve {
    UTIL_FS_RESOLVE_AUTO = 0,   /* openat2 where the kernel has it, else the walk;
                                   $CACHET_FS_RESOLVE=walk forces the walk (tests) */
    UTIL_FS_RESOLVE_KERNEL = 1, /* openat2 only: UTIL_EUNSUPPORTED where it is missing */
    UTIL_FS_RESOLVE_WALK = 2,   /* the per-component walk only */
} util_fs_resolve;

/* At most this many symbolic links are followed in one resolution. */
#define UTIL_FS_MAX_LINKS 40

/* Opens path beneath the directory rootfd with open(2) flags oflags (O_RDONLY,
 * O_DIRECTORY, O_PATH, O_NOFOLLOW, O_NONBLOCK...; not O_CREAT; O_CLOEXEC is
 * added). Every component is resolved inside rootfd's tree: '..' and symbolic
 * links are followed only while they stay beneath it; an absolute path, an
 * absolute link, a '..' above rootfd and /proc's magic links are refused
 * (even when they would come back inside). The kernel's way is openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS (Linux >= 5.6); the walk opens each
 * directory with O_NOFOLLOW relative to the previous one, reads links itself
 * and pops '..' from its own stack of descriptors, so a rename or a swapped
 * symlink meanwhile cannot lead it out either. The descriptor goes to
 * *out_fd (-1 on failure). Errors name path: UTIL_EINVAL "'p' leads outside
 * the directory" for a way out, UTIL_ENOTFOUND, UTIL_EIO (a loop of links, a
 * file used as a directory, permissions), UTIL_EUNSUPPORTED (KERNEL without
 * openat2). */
int util_fs_open_beneath(int *out_fd, int rootfd, const char *path, int oflags, util_fs_resolve how,
                         util_err *err);

/* The path of the directory fd relative to the directory rootfd (no leading
 * or trailing '/'; "" when fd is rootfd), found by walking '..' up from fd and
 * looking each directory up by device and inode in its parent, into out.
 * UTIL_EINVAL when fd is not beneath rootfd, UTIL_ERANGE when out is too
 * small, UTIL_EIO when a parent cannot be read. */
int util_fs_relpath(char *out, size_t cap, int rootfd, int fd, util_err *err);

#endif
