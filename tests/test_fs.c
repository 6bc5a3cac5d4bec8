/* tests/test_fs.c: util/fs.h: regular files only (a FIFO, a device, a
 * directory and, with NOFOLLOW, a symbolic link are refused without blocking),
 * the size cap and the prefix mode, reads relative to a directory fd. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/fs.h"
#include "check.h"

static void write_bytes(const char *path, size_t n, char c) {
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < n; i++) fputc(c, f);
    if (f) fclose(f);
}

static void test_reads(void) {
    char dir[] = "/tmp/cachet-fs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[256], q[256];
    util_err err;
    char *data;
    size_t len;
    int trunc;

    /* a regular file, whole; an empty one */
    snprintf(p, sizeof p, "%s/ten", dir);
    write_bytes(p, 10, 'a');
    CHECK(util_read_file(&data, &len, p, &err) == UTIL_OK && len == 10 && data[10] == '\0');
    free(data);
    snprintf(q, sizeof q, "%s/empty", dir);
    write_bytes(q, 0, 'a');
    CHECK(util_read_file(&data, &len, q, &err) == UTIL_OK && len == 0 && data && data[0] == '\0');
    free(data);

    /* the cap: at it is fine, one byte over is an error naming the limit, or a prefix */
    CHECK(util_fs_read(&data, &len, AT_FDCWD, p, 10, 0, NULL, &err) == UTIL_OK && len == 10);
    free(data);
    CHECK(util_fs_read(&data, &len, AT_FDCWD, p, 9, 0, NULL, &err) == UTIL_ERANGE && data == NULL);
    CHECK_MSG(strstr(err.msg, "limit of 9 bytes") && strstr(err.msg, p), "%s", err.msg);
    CHECK(util_fs_read(&data, &len, AT_FDCWD, p, 4, UTIL_FS_PREFIX, &trunc, &err) == UTIL_OK);
    CHECK(len == 4 && trunc == 1 && strcmp(data, "aaaa") == 0);
    free(data);
    CHECK(util_fs_read(&data, &len, AT_FDCWD, p, 10, UTIL_FS_PREFIX, &trunc, &err) == UTIL_OK);
    CHECK(len == 10 && trunc == 0);
    free(data);

    /* a FIFO with no writer: refused at once, never waited on */
    snprintf(q, sizeof q, "%s/fifo", dir);
    CHECK(mkfifo(q, 0600) == 0);
    CHECK(util_read_file(&data, &len, q, &err) == UTIL_EFORMAT);
    CHECK_MSG(strstr(err.msg, "is a FIFO, not a regular file"), "%s", err.msg);
    /* a device and a directory */
    CHECK(util_read_file(&data, &len, "/dev/zero", &err) == UTIL_EFORMAT);
    CHECK_MSG(strstr(err.msg, "character device"), "%s", err.msg);
    CHECK(util_read_file(&data, &len, dir, &err) == UTIL_EFORMAT && strstr(err.msg, "a directory"));
    /* a symbolic link to /dev/zero is followed to what it is */
    snprintf(q, sizeof q, "%s/zero", dir);
    CHECK(symlink("/dev/zero", q) == 0);
    CHECK(util_read_file(&data, &len, q, &err) == UTIL_EFORMAT);
    /* NOFOLLOW refuses a link as the last component, even to a regular file */
    snprintf(q, sizeof q, "%s/link", dir);
    CHECK(symlink("ten", q) == 0);
    CHECK(util_fs_read(&data, &len, AT_FDCWD, q, 0, 0, NULL, &err) == UTIL_OK && len == 10);
    free(data);
    CHECK(util_fs_read(&data, &len, AT_FDCWD, q, 0, UTIL_FS_NOFOLLOW, NULL, &err) != UTIL_OK);
    CHECK_MSG(strstr(err.msg, "symbolic link"), "%s", err.msg);
    /* relative to a directory descriptor; a missing file */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    CHECK(util_fs_read(&data, &len, dfd, "ten", 0, 0, NULL, &err) == UTIL_OK && len == 10);
    free(data);
    CHECK(util_fs_read(&data, &len, dfd, "missing", 0, 0, NULL, &err) == UTIL_ENOTFOUND);
    close(dfd);
    CHECK_EQ_STR(util_fs_kind(S_IFIFO), "a FIFO");

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

void test_fs(void) { CHECK_CASE(reads) test_reads(); }
