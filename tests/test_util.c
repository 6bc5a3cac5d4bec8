/* tests/test_util.c: util/ error context, buffer and UTF-8 text helpers. */
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/text.h"
#include "check.h"

static void test_text(void) {
    char *o = NULL;
    size_t n = 0;
    /* each byte that cannot start a valid sequence becomes one U+FFFD */
    CHECK_EQ_INT(util_utf8_sanitize("ok\xff\xfe!\xe2\x82", 7, &o, &n), 4);
    CHECK_EQ_STR(o, "ok\xEF\xBF\xBD\xEF\xBF\xBD!\xEF\xBF\xBD\xEF\xBF\xBD");
    free(o);
    CHECK_EQ_INT(util_utf8_sanitize("h\xc3\xa9llo", 6, &o, &n), 0);
    CHECK_EQ_STR(o, "h\xc3\xa9llo");
    free(o);
    /* a NUL byte is replaced too: the copy is a C string with all of the text */
    CHECK_EQ_INT(util_utf8_sanitize("a\0b", 3, &o, &n), 1);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_STR(o, "a\xEF\xBF\xBD" "b");
    free(o);
    char big[3000];
    memset(big, 'a', sizeof big);
    memcpy(big + 2990, "THE-END.\n", 9);
    big[2999] = '\0';
    CHECK_EQ_INT(util_text_truncate(big, strlen(big), 1000, &o, &n), 1);
    CHECK(n < 1100 && strstr(o, "bytes cut by cachet") && strstr(o, "THE-END."));
    free(o);
    CHECK_EQ_INT(util_text_truncate("short", 5, 1000, &o, &n), 0);
    CHECK_EQ_STR(o, "short");
    free(o);
    /* cuts land on character boundaries: 3-byte characters cut at 1000 */
    char wide[3 * 600 + 1];
    for (int i = 0; i < 600; i++) memcpy(wide + 3 * i, "\xe2\x82\xac", 3); /* U+20AC */
    wide[sizeof wide - 1] = '\0';
    CHECK_EQ_INT(util_text_truncate(wide, strlen(wide), 1000, &o, &n), 1);
    CHECK_EQ_INT(util_utf8_check(o, n), n);
    free(o);

    /* validation: the first bad byte's offset, or the length */
    CHECK_EQ_INT(util_utf8_check("abc", 3), 3);
    CHECK_EQ_INT(util_utf8_check("a\xc3\xa9\xf0\x9f\x98\x80", 7), 7);
    CHECK_EQ_INT(util_utf8_check("ab\xc0\xaf", 4), 2);         /* overlong '/' */
    CHECK_EQ_INT(util_utf8_check("a\xed\xa0\x80", 4), 1);     /* surrogate U+D800 */
    CHECK_EQ_INT(util_utf8_check("\xf4\x90\x80\x80", 4), 0); /* past U+10FFFF */
    CHECK_EQ_INT(util_utf8_check("ab\xe5\xae", 4), 2);         /* cut character */
    CHECK_EQ_INT(util_utf8_check("\x80", 1), 0);                /* stray continuation */
    CHECK_EQ_INT(util_utf8_char_len("\xe5\xae\x89", 3), 3);
    CHECK_EQ_INT(util_utf8_char_len("\xe5\xae\x89", 2), 0);
    CHECK_EQ_INT(util_utf8_char_len("x", 0), 0);

    /* boundaries: floor backs out of a character, complete_len drops a cut tail */
    const char *s = "a\xe5\xae\x89" "b"; /* a, U+5B89, b */
    CHECK_EQ_INT(util_utf8_floor(s, 5, 0), 0);
    CHECK_EQ_INT(util_utf8_floor(s, 5, 1), 1);
    CHECK_EQ_INT(util_utf8_floor(s, 5, 2), 1);
    CHECK_EQ_INT(util_utf8_floor(s, 5, 3), 1);
    CHECK_EQ_INT(util_utf8_floor(s, 5, 4), 4);
    CHECK_EQ_INT(util_utf8_floor(s, 5, 99), 5);
    CHECK_EQ_INT(util_utf8_complete_len(s, 5), 5);
    CHECK_EQ_INT(util_utf8_complete_len(s, 4), 4);
    CHECK_EQ_INT(util_utf8_complete_len(s, 3), 1);
    CHECK_EQ_INT(util_utf8_complete_len(s, 2), 1);
    CHECK_EQ_INT(util_utf8_complete_len("\xf0\x9f\x98", 3), 0);
    CHECK_EQ_INT(util_utf8_complete_len("ab\xff", 3), 3); /* invalid, not cut: kept */
    CHECK_EQ_INT(util_utf8_complete_len("", 0), 0);
}

void test_util(void) {
    test_text();
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
