/* tests/proc.h: run a shell command from a test and capture its exit status,
 * stdout and stderr (through temporary files). Test-only. */
#ifndef PROC_H
#define PROC_H

typedef struct proc_result {
    int status;   /* exit code, or 128 + signal number */
    char *out;    /* captured stdout (malloc'd, NUL-terminated) */
    char *err;    /* captured stderr */
} proc_result;

/* Runs `cmd` under /bin/sh; the caller frees with proc_result_free. */
proc_result proc_run(const char *cmd);
void proc_result_free(proc_result *r);
/* $CACHET_BIN (set by make test) or ./bin. */
const char *proc_bin_dir(void);

#endif
