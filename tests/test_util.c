/* tests/test_util.c: util/ error context, buffer, array growth, UTF-8 text
 * helpers and the model and data search orders. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "../util/err.h"
#include "../util/path.h"
#include "../util/text.h"
#include "../util/vec.h"
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
    CHECK_EQ_STR(o, "a\xEF\xBF\xBD"
                    "b");
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

    /* escaping for a terminal: controls, C1, bidi overrides and bad bytes made visible */
    util_buf eb;
    util_buf_init(&eb);
    CHECK_EQ_INT(util_text_escape(
                     &eb, "ls\r\x1b[2Kx\x7f\x01\n\t\xc2\x9b\xe2\x80\xae\xef\xbb\xbf\xff\xc3\xa9\\e", 25, 0),
                 10);
    CHECK_EQ_STR(eb.data, "ls\\r\\e[2Kx\\x7f\\x01\\n\\t\\u{9b}\\u{202e}\\u{feff}\\xff\xc3\xa9\\e");
    eb.len = 0;
    CHECK_EQ_INT(util_text_escape(&eb, "a\nb\tc\rd", 7, UTIL_ESC_KEEP_LINES), 1);
    CHECK_EQ_STR(eb.data, "a\nb\tc\\rd");
    eb.len = 0; /* a piece of a stream: a cut character passes, controls do not */
    CHECK_EQ_INT(util_text_escape(&eb, "\xe2\x80\x1b]0;x\x07", 8, UTIL_ESC_ASCII_ONLY | UTIL_ESC_KEEP_LINES),
                 2);
    CHECK_EQ_STR(eb.data, "\xe2\x80\\e]0;x\\x07");
    util_buf_release(&eb);

    /* validation: the first bad byte's offset, or the length */
    CHECK_EQ_INT(util_utf8_check("abc", 3), 3);
    CHECK_EQ_INT(util_utf8_check("a\xc3\xa9\xf0\x9f\x98\x80", 7), 7);
    CHECK_EQ_INT(util_utf8_check("ab\xc0\xaf", 4), 2);       /* overlong '/' */
    CHECK_EQ_INT(util_utf8_check("a\xed\xa0\x80", 4), 1);    /* surrogate U+D800 */
    CHECK_EQ_INT(util_utf8_check("\xf4\x90\x80\x80", 4), 0); /* past U+10FFFF */
    CHECK_EQ_INT(util_utf8_check("ab\xe5\xae", 4), 2);       /* cut character */
    CHECK_EQ_INT(util_utf8_check("\x80", 1), 0);             /* stray continuation */
    CHECK_EQ_INT(util_utf8_char_len("\xe5\xae\x89", 3), 3);
    CHECK_EQ_INT(util_utf8_char_len("\xe5\xae\x89", 2), 0);
    CHECK_EQ_INT(util_utf8_char_len("x", 0), 0);

    /* boundaries: floor backs out of a character, complete_len drops a cut tail */
    const char *s = "a\xe5\xae\x89"
                    "b"; /* a, U+5B89, b */
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

/* Sets or (value NULL) unsets an environment variable, keeping the old value in
 * save (NULL when it was unset). */
static void env_swap(const char *name, const char *value, char **save) {
    const char *old = getenv(name);
    *save = old ? strdup(old) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void env_restore(const char *name, char *save) {
    if (save)
        setenv(name, save, 1);
    else
        unsetenv(name);
    free(save);
}

static void test_path(void) {
    util_err e;
    char exe[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
    CHECK_EQ_INT(util_exe_path(exe, sizeof exe, &e), 0);
    CHECK_EQ_INT(util_exe_dir(dir, sizeof dir, &e), 0);
    CHECK(exe[0] == '/' && strncmp(exe, dir, strlen(dir)) == 0 && exe[strlen(dir)] == '/');
    CHECK(strstr(exe, "cachet-tests") != NULL);

    char tmp[] = "/tmp/cachet-path-XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    char *s_model, *s_xdg, *s_data, p[PATH_MAX + 128];
    env_swap("CACHET_MODEL", NULL, &s_model);
    env_swap("XDG_DATA_HOME", tmp, &s_xdg);
    env_swap("CACHET_DATA", NULL, &s_data);

    /* given and $CACHET_MODEL: used as they are, a missing one named */
    CHECK_EQ_INT(util_model_find(out, sizeof out, "/nonexistent/m.gguf", &e), UTIL_ENOTFOUND);
    CHECK_EQ_STR(out, "/nonexistent/m.gguf");
    CHECK(strstr(e.msg, "/nonexistent/m.gguf") != NULL);
    setenv("CACHET_MODEL", "/nonexistent/env.gguf", 1);
    CHECK_EQ_INT(util_model_find(out, sizeof out, NULL, &e), UTIL_ENOTFOUND);
    CHECK(strstr(e.msg, "/nonexistent/env.gguf") && strstr(e.msg, "CACHET_MODEL"));
    CHECK_EQ_INT(util_model_find(out, sizeof out, "/etc/hostname", &e), 0); /* given beats the env */
    CHECK_EQ_STR(out, "/etc/hostname");
    unsetenv("CACHET_MODEL");

    /* $XDG_DATA_HOME/cachet/models comes before ./models and the source tree */
    snprintf(p, sizeof p, "%s/cachet/models", tmp);
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && : > '%s/%s'", p, p, UTIL_DEFAULT_MODEL);
    CHECK_EQ_INT(system(cmd), 0);
    CHECK_EQ_INT(util_model_find(out, sizeof out, NULL, &e), 0);
    snprintf(p, sizeof p, "%s/cachet/models/%s", tmp, UTIL_DEFAULT_MODEL);
    CHECK_EQ_STR(out, p);
    /* without it: ./models or the source tree the test binary runs from */
    snprintf(cmd, sizeof cmd, "rm -rf '%s/cachet'", tmp);
    CHECK_EQ_INT(system(cmd), 0);
    if (check_model_path()) {
        CHECK_EQ_INT(util_model_find(out, sizeof out, NULL, &e), 0);
        struct stat a, b;
        CHECK(stat(out, &a) == 0 && stat(check_model_path(), &b) == 0 && a.st_ino == b.st_ino);
    }
    /* nothing anywhere: every place searched is named */
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && chdir(tmp) == 0) {
        int rc = util_model_find(out, sizeof out, NULL, &e);
        if (rc == UTIL_ENOTFOUND) { /* the source tree may hold the model: then it is found there */
            CHECK_EQ_STR(out, "");
            snprintf(p, sizeof p, "'%s/cachet/models/%s'", tmp, UTIL_DEFAULT_MODEL);
            CHECK_MSG(strstr(e.msg, p) && strstr(e.msg, "'models/" UTIL_DEFAULT_MODEL "'") &&
                          strstr(e.msg, "/share/cachet/models/" UTIL_DEFAULT_MODEL),
                      "%s", e.msg);
        } else {
            CHECK_EQ_INT(rc, 0);
            CHECK(strstr(out, "/models/" UTIL_DEFAULT_MODEL) != NULL && out[0] == '/');
        }
        CHECK_EQ_INT(chdir(cwd), 0);
    }

    /* data: given and $CACHET_DATA must hold prompts/; the source tree otherwise */
    CHECK_EQ_INT(util_data_dir_find(out, sizeof out, tmp, &e), UTIL_ENOTFOUND);
    CHECK(strstr(e.msg, tmp) && strstr(e.msg, "prompts/"));
    setenv("CACHET_DATA", tmp, 1);
    CHECK_EQ_INT(util_data_dir_find(out, sizeof out, NULL, &e), UTIL_ENOTFOUND);
    CHECK(strstr(e.msg, "CACHET_DATA") != NULL);
    snprintf(p, sizeof p, "%s/prompts", tmp);
    CHECK_EQ_INT(mkdir(p, 0700), 0);
    CHECK_EQ_INT(util_data_dir_find(out, sizeof out, NULL, &e), 0);
    CHECK_EQ_STR(out, tmp);
    unsetenv("CACHET_DATA");
    CHECK_EQ_INT(util_data_dir_find(out, sizeof out, NULL, &e), 0);
    char root[PATH_MAX];
    CHECK_MSG(realpath(check_root(), root) && strcmp(out, root) == 0, "data dir '%s', root '%s'", out, root);

    /* the one name of a model: its file name without .gguf */
    char id[64];
    CHECK_EQ_STR(util_model_id(id, sizeof id, "/x/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
                 "SmolLM2-135M-Instruct.Q4_1");
    CHECK_EQ_STR(util_model_id(id, sizeof id, "plain"), "plain");
    CHECK_EQ_STR(util_model_id(id, sizeof id, "dir/.gguf"), ".gguf");

    env_restore("CACHET_MODEL", s_model);
    env_restore("XDG_DATA_HOME", s_xdg);
    env_restore("CACHET_DATA", s_data);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK_EQ_INT(system(cmd), 0);
}

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
    CHECK_EQ_INT(util_read_file(&data, &n, "/nonexistent/file", &e), UTIL_ENOTFOUND);
    CHECK(strstr(e.msg, "/nonexistent/file") != NULL);
}

static void test_grow(void) {
    int *v = NULL;
    size_t cap = 0;
    CHECK_EQ_INT(util_grow(&v, &cap, 1, sizeof *v), UTIL_OK);
    CHECK(v != NULL);
    CHECK_EQ_INT(cap, 16); /* the first capacity */
    for (int i = 0; i < 16; i++) v[i] = i;
    int *was = v;
    CHECK_EQ_INT(util_grow(&v, &cap, 16, sizeof *v), UTIL_OK); /* fits: nothing moves */
    CHECK(v == was);
    CHECK_EQ_INT(cap, 16);
    CHECK_EQ_INT(util_grow(&v, &cap, 17, sizeof *v), UTIL_OK); /* doubles */
    CHECK_EQ_INT(cap, 32);
    CHECK_EQ_INT(util_grow(&v, &cap, 100, sizeof *v), UTIL_OK); /* doubles until it fits */
    CHECK_EQ_INT(cap, 128);
    CHECK(v[0] == 0 && v[15] == 15); /* the elements move with the array */
    v[127] = 7;

    /* need * elem past SIZE_MAX: an error, the array and its capacity untouched */
    was = v;
    CHECK_EQ_INT(util_grow(&v, &cap, SIZE_MAX / sizeof *v + 1, sizeof *v), UTIL_ENOMEM);
    CHECK_EQ_INT(util_grow(&v, &cap, SIZE_MAX, sizeof *v), UTIL_ENOMEM);
    CHECK(v == was);
    CHECK_EQ_INT(cap, 128);
    CHECK(v[15] == 15 && v[127] == 7);
    free(v);
}

void test_util(void) {
    CHECK_CASE(basics) test_basics();
    CHECK_CASE(grow) test_grow();
    CHECK_CASE(text) test_text();
    CHECK_CASE(path) test_path();
}
