/* tests/proc.c: see proc.h. */
#include "proc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/buf.h"

const char *proc_bin_dir(void) {
    static char dir[4096]; /* resolved once; tests are single-threaded */
    if (!dir[0]) {
        const char *b = getenv("CACHET_BIN");
        if (!realpath(b && *b ? b : "bin", dir)) snprintf(dir, sizeof dir, "%s", b && *b ? b : "bin");
    }
    return dir;
}

proc_result proc_run(const char *cmd) {
    proc_result r = {-1, NULL, NULL};
    char o[] = "/tmp/cachet-test-outXXXXXX", e[] = "/tmp/cachet-test-errXXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e);
    if (fo < 0 || fe < 0) return r;
    close(fo);
    close(fe);
    util_buf b;
    util_buf_init(&b);
    util_buf_printf(&b, "( %s ) >%s 2>%s </dev/null", cmd, o, e);
    int st = system(b.data);
    util_buf_release(&b);
    if (st == -1) r.status = -1;
    else if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) r.status = 128 + WTERMSIG(st);
    util_err err;
    size_t n;
    if (util_read_file(&r.out, &n, o, &err)) r.out = calloc(1, 1);
    if (util_read_file(&r.err, &n, e, &err)) r.err = calloc(1, 1);
    unlink(o);
    unlink(e);
    return r;
}

void proc_result_free(proc_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
