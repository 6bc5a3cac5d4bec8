/* agent/tools_shell.c: run_shell: runs a command with /bin/sh in the
 * workspace after confirmation, captures stdout+stderr (bounded) and the exit
 * status, and kills the process group on timeout. Not a sandbox: confinement
 * of a shell command is the user's confirmation, not this code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/time.h"
#include "tools_impl.h"

int agent_tool_run_shell(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *cmd;
    int rc = agent_tool_arg_str(a, "run_shell", "command", 1, &cmd, err);
    if (!rc) rc = agent_tools_check_confirm(t, "run_shell", cmd, err);
    if (rc) return rc;
    int fds[2];
    if (pipe(fds) != 0) return util_err_set(err, UTIL_EIO, "run_shell: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return util_err_set(err, UTIL_EIO, "run_shell: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        sigset_t all; /* the chat blocks SIGINT for its signalfd: the command must not inherit that */
        sigemptyset(&all);
        sigaddset(&all, SIGINT);
        sigprocmask(SIG_UNBLOCK, &all, NULL);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        int devnull = open("/dev/null", 0);
        if (devnull >= 0) dup2(devnull, 0);
        if (chdir(t->root) != 0) _exit(126);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);
    double deadline = util_now_s() + t->shell_timeout_s;
    int timed_out = 0;
    size_t cap = t->max_output * 4;
    char chunk[4096];
    for (;;) {
        double left = deadline - util_now_s();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (out->len < cap) util_buf_append(out, chunk, (size_t)n); /* keep draining past cap */
    }
    if (timed_out) kill(-pid, SIGKILL);
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (timed_out) util_buf_printf(out, "\n[killed after %d s]\n", t->shell_timeout_s);
    else if (WIFEXITED(st)) util_buf_printf(out, "\n[exit status %d]\n", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) util_buf_printf(out, "\n[killed by signal %d]\n", WTERMSIG(st));
    return UTIL_OK;
}
