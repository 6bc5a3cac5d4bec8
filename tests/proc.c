/* tests/proc.c: see proc.h. */
#include "proc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/fs.h"

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
    if (st == -1)
        r.status = -1;
    else if (WIFEXITED(st))
        r.status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        r.status = 128 + WTERMSIG(st);
    util_err err;
    size_t n;
    if (util_read_file(&r.out, &n, o, &err)) r.out = calloc(1, 1);
    if (util_read_file(&r.err, &n, e, &err)) r.err = calloc(1, 1);
    unlink(o);
    unlink(e);
    return r;
}

proc_result proc_runf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *cmd = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!cmd) {
        proc_result r = {-1, NULL, NULL};
        return r;
    }
    va_start(ap, fmt);
    vsnprintf(cmd, (size_t)n + 1, fmt, ap);
    va_end(ap);
    proc_result r = proc_run(cmd);
    free(cmd);
    return r;
}

int proc_files_equal(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

void proc_result_free(proc_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static void proc_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int proc_server_start(proc_server *s, const char *env, const char *args) {
    static const char listen_at[] = "listening on http://127.0.0.1:";
    memset(s, 0, sizeof *s);
    snprintf(s->log, sizeof s->log, "/tmp/cachet-serve-logXXXXXX");
    int fd = mkstemp(s->log);
    if (fd < 0) return -1;
    close(fd);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s exec '%s/cachet' serve --port 0 --no-disk-cache --threads 2 %s 2>'%s'",
             env ? env : "", proc_bin_dir(), args ? args : "", s->log);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the runner */
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 600; i++) { /* up to 60 s (sanitizer builds are slow) */
        char *text = NULL;
        size_t n;
        util_err err;
        if (util_read_file(&text, &n, s->log, &err) == 0) {
            const char *p = strstr(text, listen_at);
            if (p) s->port = (int)strtol(p + strlen(listen_at), NULL, 10);
            free(text);
            if (s->port > 0) return 0;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            return -1;
        }
        proc_sleep_ms(100);
    }
    return -1;
}

int proc_server_stop(proc_server *s) {
    int status = -1;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int st = 0, done = 0;
        for (int i = 0; i < 600 && !done; i++) {
            if (waitpid(s->pid, &st, WNOHANG) == s->pid)
                done = 1;
            else
                proc_sleep_ms(50);
        }
        if (!done) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
        }
        status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (status != 0) {
            char *text = NULL;
            size_t n;
            util_err err;
            if (util_read_file(&text, &n, s->log, &err) == 0) fprintf(stderr, "server log:\n%s\n", text);
            free(text);
        }
        s->pid = 0;
    }
    if (s->log[0]) unlink(s->log);
    return status;
}
