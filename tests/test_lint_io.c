/* tests/test_lint_io.c: promptlint on hostile input (issue 13): a named FIFO,
 * a symlink to /dev/zero and a named binary file are a clear message and exit
 * 2, nothing hangs (every command runs under `timeout`); symlinks that leave
 * the linted tree are not followed and a warning names them; a size cap
 * (--max-file-size, max_file_size in .promptlint.json) bounds what is read,
 * stdin included; a file lists at most LINT_MAX_LISTED findings and counts
 * the rest; linting time for 1 MiB and 4 MiB of volatile-heavy text is
 * printed (not checked: make bench-lint measures 200 MB). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../linter/lint.h"
#include "../util/time.h"
#include "check.h"
#include "proc.h"

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "write '%s'", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* promptlint ARGS in dir, killed after 20 s (a hang is exit 124). */
static proc_result pl(const char *dir, const char *args) {
    return proc_runf("cd '%s' && timeout 20 '%s/promptlint' --no-model %s", dir, proc_bin_dir(), args);
}

static void test_special_files(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s/pipe.md", dir);
    CHECK(mkfifo(p, 0600) == 0);
    proc_result r = pl(dir, "pipe.md");
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "'pipe.md'") && strstr(r.err, "FIFO"), "fifo: %s", r.err);
    proc_result_free(&r);

    snprintf(p, sizeof p, "%s/zero.md", dir);
    CHECK(symlink("/dev/zero", p) == 0);
    r = pl(dir, "zero.md");
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "'zero.md'") && strstr(r.err, "not a regular file"), "zero: %s", r.err);
    proc_result_free(&r);

    snprintf(p, sizeof p, "%s/image.md", dir);
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite("PNG\0\0\1\2binary", 1, 14, f);
        fclose(f);
    }
    r = pl(dir, "image.md");
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "'image.md'") && strstr(r.err, "binary"), "binary: %s", r.err);
    proc_result_free(&r);
}

static void test_symlinks(const char *dir) {
    char tree[512], p[512], outside[512];
    snprintf(tree, sizeof tree, "%s/tree", dir);
    snprintf(p, sizeof p, "%s/prompts", tree);
    CHECK(mkdir(tree, 0755) == 0 && mkdir(p, 0755) == 0);
    snprintf(outside, sizeof outside, "%s/secret.md", dir);
    write_file(outside, "Today is 2025-03-03.\nYou are the vault. Never reveal the master key.\n");
    snprintf(p, sizeof p, "%s/prompts/system.md", tree);
    write_file(p, "You are helpful.\nAnswer briefly.\n");
    snprintf(p, sizeof p, "%s/prompts/leak.md", tree);
    CHECK(symlink(outside, p) == 0);
    snprintf(p, sizeof p, "%s/prompts/alias.md", tree);
    CHECK(symlink("system.md", p) == 0);
    proc_result r = pl(tree, ".");
    CHECK_EQ_INT(r.status, 0); /* the outside file's date is never linted */
    CHECK_MSG(strstr(r.out, "2 files checked") != NULL, "out: %s", r.out);
    CHECK_MSG(strstr(r.err, "leak.md") && strstr(r.err, "outside"), "err: %s", r.err);
    CHECK_MSG(strstr(r.out, "secret") == NULL && strstr(r.out, "vault") == NULL, "out: %s", r.out);
    proc_result_free(&r);
    /* named on the command line, it is refused the same way */
    r = pl(tree, "prompts/leak.md");
    CHECK_MSG(strstr(r.err, "outside") != NULL, "named: %s", r.err);
    CHECK(strstr(r.out, "vault") == NULL);
    proc_result_free(&r);
}

static void test_size_cap(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s/big", dir);
    CHECK(mkdir(p, 0755) == 0);
    snprintf(p, sizeof p, "%s/big/prompts", dir);
    CHECK(mkdir(p, 0755) == 0);
    snprintf(p, sizeof p, "%s/big/prompts/huge.md", dir);
    FILE *f = fopen(p, "wb");
    for (int i = 0; f && i < 4000; i++) fputs("You are helpful. Answer briefly.\n", f);
    if (f) fclose(f);
    char big[512];
    snprintf(big, sizeof big, "%s/big", dir);
    proc_result r = pl(big, "--max-file-size 64K prompts/huge.md");
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "huge.md") && strstr(r.err, "65536") && strstr(r.err, "max-file-size"), "cap: %s",
              r.err);
    proc_result_free(&r);
    r = pl(big, "--max-file-size 1M prompts/huge.md");
    CHECK_EQ_INT(r.status, 0);
    proc_result_free(&r);
    /* walked, it is skipped with a warning, counted */
    r = pl(big, "--max-file-size 64K .");
    CHECK_MSG(strstr(r.err, "huge.md") && strstr(r.err, "65536"), "walk: %s", r.err);
    CHECK_MSG(strstr(r.out, "too large") != NULL, "walk out: %s", r.out);
    proc_result_free(&r);
    /* the config key */
    snprintf(p, sizeof p, "%s/big/.promptlint.json", dir);
    write_file(p, "{\"max_file_size\": \"64K\"}");
    r = pl(big, "prompts/huge.md");
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "max_file_size") != NULL, "config cap: %s", r.err);
    proc_result_free(&r);
    /* stdin is capped too */
    r = proc_runf("head -c 300000 /dev/zero | tr '\\0' 'a' | timeout 20 '%s/promptlint' "
                  "--no-model --isolated --max-file-size 64K -",
                  proc_bin_dir());
    CHECK_EQ_INT(r.status, 2);
    CHECK_MSG(strstr(r.err, "standard input") && strstr(r.err, "65536"), "stdin: %s", r.err);
    proc_result_free(&r);
}

/* Volatile-heavy text: a dated line, an id line, stable prose, repeated. */
static char *volatile_text(size_t bytes, size_t *len) {
    char *b = malloc(bytes + 256);
    size_t n = 0;
    for (unsigned i = 0; b && n < bytes; i++)
        n += (size_t)snprintf(b + n, 256,
                              "Today is March %u, 2025. Session id: s%08u.\n"
                              "You are the support assistant; answer briefly.\n",
                              1 + i % 28, i);
    *len = n;
    return b;
}

static long lint_ms(lint_ctx *c, const char *text, size_t len) {
    long best = -1;
    for (int k = 0; k < 2; k++) {
        lint_report r;
        lint_report_init(&r);
        util_err err = {0};
        long t0 = (long)util_now_ms();
        CHECK(lint_check_buffer(c, &r, "big.md", "big.md", text, len, &err) == 0);
        long ms = (long)util_now_ms() - t0;
        if (best < 0 || ms < best) best = ms;
        lint_report_release(&r);
    }
    return best;
}

/* A file volatile on every other line lists LINT_MAX_LISTED findings, counts
 * the rest and says so in a note. */
static void test_listing_cap(lint_ctx *c, const char *text, size_t len) {
    lint_report r;
    lint_report_init(&r);
    util_err err = {0};
    CHECK(lint_check_buffer(c, &r, "big.md", "big.md", text, len, &err) == 0);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    CHECK_EQ_INT((int)r.n, LINT_MAX_LISTED);
    /* every dated line but the last precedes stable text */
    CHECK_EQ_INT((int)lint_report_count(&r, LINT_ERROR), (int)(lines / 2));
    CHECK_MSG(r.n_notes == 1 && strstr(r.notes[0], "not listed"), "notes: %zu", r.n_notes);
    lint_report_release(&r);
}

static void test_linear(void) {
    lint_options o = {0};
    o.no_model = 1;
    o.no_config = 1;
    lint_ctx *c = NULL;
    util_err err = {0};
    if (lint_ctx_new(&c, &o, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    size_t l1, l4;
    char *t1 = volatile_text(1 << 20, &l1), *t4 = volatile_text(4 << 20, &l4);
    if (t1 && t4) {
        test_listing_cap(c, t1, l1);
        long a = lint_ms(c, t1, l1), b = lint_ms(c, t4, l4);
        /* linear: about 4x; the old quadratic pass was about 16x. Printed, not
         * checked (no timing assertions: the machine is shared); make
         * bench-lint shows 200 MB */
        fprintf(stderr, "lint io: 1 MiB %ld ms, 4 MiB %ld ms (ratio %.1f)\n", a, b,
                a > 0 ? (double)b / (double)a : 0.0);
    }
    free(t1);
    free(t4);
    lint_ctx_free(c);
}

void test_lint_io(void) {
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/promptlint-io-XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp");
        return;
    }
    test_special_files(dir);
    test_symlinks(dir);
    test_size_cap(dir);
    test_linear();
    proc_result r = proc_runf("rm -rf '%s'", dir);
    proc_result_free(&r);
}
