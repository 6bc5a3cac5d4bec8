/* tests/proc.h: run a shell command from a test and capture its exit status,
 * stdout and stderr (through temporary files). Test-only. */
#ifndef PROC_H
#define PROC_H

typedef struct proc_result {
    int status; /* exit code, or 128 + signal number */
    char *out;  /* captured stdout (malloc'd, NUL-terminated) */
    char *err;  /* captured stderr */
} proc_result;

/* Runs `cmd` under /bin/sh; the caller frees with proc_result_free. */
proc_result proc_run(const char *cmd);
/* proc_run of a printf-formatted command. */
proc_result proc_runf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when both files can be read and hold the same bytes. */
int proc_files_equal(const char *a, const char *b);
void proc_result_free(proc_result *r);
/* $CACHET_BIN (set by make test) or ./bin. */
const char *proc_bin_dir(void);

/* A `cachet serve` subprocess on a free loopback port. */
typedef struct proc_server {
    int pid;
    int port;
    char log[64]; /* its stderr */
} proc_server;

/* Starts `ENV exec cachet serve --port 0 --no-disk-cache --threads 2 ARGS`
 * (ENV and ARGS are shell text, may be "") and reads the port it prints. The
 * child dies with the test runner. 0, or -1 if it did not come up in 60 s. */
int proc_server_start(proc_server *s, const char *env, const char *args);
/* SIGTERM, up to 30 s for a clean exit, then SIGKILL. Returns the exit status
 * (128 + signal if killed), prints the server's log when it is not 0, and
 * removes the log. */
int proc_server_stop(proc_server *s);

#endif
