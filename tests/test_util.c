/* tests/test_util.c: util/ error context and buffer. */
#include <stdlib.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "check.h"

static void test_basics(void) {
    util_err e;
    util_err_clear(&e);
    CHECK_EQ_INT(util_err_set(&e, UTIL_EIO, "file '%s': %s", "x", "gone"), UTIL_EIO);
    CHECK_EQ_STR(e.msg, "file 'x': gone");
    util_err_wrap(&e, "model");
    CHECK_EQ_STR(e.msg, "model: file 'x': gone");
    CHECK_EQ_STR(util_strerror(UTIL_ENOTFOUND), "not found");
    CHECK_EQ_STR(util_strerror(-1000), "unknown error");

    util_buf b;
    util_buf_init(&b);
    for (int i = 0; i < 1000; i++) CHECK_EQ_INT(util_buf_printf(&b, "%d,", i % 10), 0);
    CHECK_EQ_INT(b.len, 2000);
    CHECK(b.data[1999] == ',' && b.data[2000] == '\0');
    size_t n;
    char *s = util_buf_detach(&b, &n);
    CHECK_EQ_INT(n, 2000);
    CHECK(b.data == NULL);
    free(s);

    char *data;
    CHECK_EQ_INT(util_read_file(&data, &n, "/nonexistent/file", &e), UTIL_EIO);
    CHECK(strstr(e.msg, "/nonexistent/file") != NULL);
}

void test_util(void) { CHECK_CASE(basics) test_basics(); }
