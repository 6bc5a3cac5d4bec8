/* agent/tools_shell.c: run_shell. Who may run what: --yes or a bare
 * "run_shell" allow entry runs the command with /bin/sh; an entry
 * "run_shell:PATTERN" allows a command only when it has no shell syntax at
 * all, and then runs its words without a shell (execve, PATH searched in its
 * absolute entries only), so what the rule matched is exactly what runs
 * (shellwords.h); anything else needs the user's confirmation, then runs with
 * /bin/sh. Commands run in the workspace with an environment cleaned of
 * secrets (the API key's variable, "secret_env" of .cachet/config.json and
 * the built-in names below); output is captured (bounded) with the exit
 * status, and the process group is killed on timeout. Not a sandbox: a
 * command may read or write anything the user can. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/time.h"
#include "shellwords.h"
#include "tools_impl.h"

extern char **environ;

/* Variables no command sees, whatever the configuration says (matched
 * without regard to case): API keys, tokens, secrets and passwords by the
 * usual naming. docs/agent.md lists them. */
static const char *const k_secret_env[] = {
    "*_API_KEY",    "*_APIKEY",   "API_KEY",  "*_TOKEN",       "*_SECRET",   "*_SECRET_*",
    "*_SECRET_KEY", "*_PASSWORD", "*_PASSWD", "*_PRIVATE_KEY", "PGPASSWORD", "MYSQL_PWD",
};

/* --- the environment --------------------------------------------------------------- */

static int secret_name(const agent_tools *t, const char *name) {
    if (t->key_env && strcmp(name, t->key_env) == 0) return 1;
    for (size_t i = 0; i < sizeof k_secret_env / sizeof *k_secret_env; i++)
        if (fnmatch(k_secret_env[i], name, FNM_CASEFOLD) == 0) return 1;
    for (size_t i = 0; i < t->n_secret_env; i++)
        if (fnmatch(t->secret_env[i], name, FNM_CASEFOLD) == 0) return 1;
    return 0;
}

/* The process's environment without the secret variables: an array of
 * pointers into environ (malloc'd, NULL-terminated; free only the array).
 * Built before fork: the child of a threaded process must not allocate. */
static char **clean_env(const agent_tools *t) {
    size_t n = 0, k = 0;
    while (environ && environ[n]) n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env) return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        char *name = strndup(environ[i], eq ? (size_t)(eq - environ[i]) : strlen(environ[i]));
        if (!name) {
            free(env);
            return NULL;
        }
        if (!secret_name(t, name)) env[k++] = environ[i];
        free(name);
    }
    return env;
}

/* --- permission -------------------------------------------------------------------- */

enum { RUN_SHELL, RUN_DIRECT };

/* How cmd may run (RUN_SHELL or RUN_DIRECT in *how), or why it may not. */
static int permit(agent_tools *t, const char *cmd, const agent_words *w, const char *why, int *how,
                  util_err *err) {
    *how = RUN_SHELL;
    if (t->yes) return UTIL_OK;
    for (size_t i = 0; i < t->n_allow; i++) {
        const char *a = t->allow[i];
        if (strcmp(a, "run_shell") == 0) return UTIL_OK;
        if (!why && strncmp(a, "run_shell:", 10) == 0 && agent_shell_rule_match(a + 10, w)) {
            *how = RUN_DIRECT;
            return UTIL_OK;
        }
    }
    if (t->confirm) {
        if (t->confirm(t->confirm_user, "run_shell", cmd)) return UTIL_OK;
        return util_err_set(err, UTIL_ECANCELED, "run_shell: the user declined");
    }
    if (why)
        return util_err_set(
            err, UTIL_ECANCELED,
            "run_shell: the command uses shell syntax (%s), which no allow rule matches: it needs "
            "confirmation and there is no terminal to ask: refused (run a plain command, one program "
            "and its arguments, or run with --yes)",
            why);
    return util_err_set(
        err, UTIL_ECANCELED,
        "run_shell needs confirmation and there is no terminal to ask: refused (run with --yes, "
        "or allow it in .cachet/config.json)");
}

/* The program of an allowed command: a name is looked up in PATH's absolute
 * entries only (a relative entry would run a file from the workspace the
 * model can write), a path is taken relative to the workspace. */
static int find_program(const agent_tools *t, const char *name, char *out, size_t cap, util_err *err) {
    struct stat st;
    if (strchr(name, '/')) {
        snprintf(out, cap, name[0] == '/' ? "%s%s" : "%s/%s", name[0] == '/' ? "" : t->root, name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return UTIL_OK;
        return util_err_set(err, UTIL_ENOTFOUND, "run_shell: '%s' is not an executable file", name);
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l && p[0] == '/' && l < PATH_MAX) {
            snprintf(out, cap, "%.*s/%s", (int)l, p, name);
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return UTIL_OK;
        }
        p += l;
        if (*p == ':') p++;
    }
    return util_err_set(
        err, UTIL_ENOTFOUND,
        "run_shell: '%s' was not found in PATH (an allowed command runs without a shell, so shell "
        "builtins such as cd are not available)",
        name);
}

/* --- running ----------------------------------------------------------------------- */

/* Runs prog with argv and env in the workspace; appends its output (bounded)
 * and how it ended to out. */
static int spawn(agent_tools *t, const char *prog, char *const argv[], char *const env[], util_buf *out,
                 util_err *err) {
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
        if (fchdir(t->rootfd) != 0)
            _exit(126); /* the descriptor, not the name: a renamed workspace cannot redirect it */
        execve(prog, argv, env);
        static const char msg[] = "run_shell: the program could not be started\n";
        if (write(2, msg, sizeof msg - 1) < 0) _exit(127);
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
    if (timed_out)
        util_buf_printf(out, "\n[killed after %d s]\n", t->shell_timeout_s);
    else if (WIFEXITED(st))
        util_buf_printf(out, "\n[exit status %d]\n", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        util_buf_printf(out, "\n[killed by signal %d]\n", WTERMSIG(st));
    return UTIL_OK;
}

int agent_tool_run_shell(agent_tools *t, const cJSON *a, util_buf *out, util_err *err) {
    const char *cmd, *why = NULL;
    int rc = agent_tool_arg_str(a, "run_shell", "command", 1, &cmd, err);
    if (rc) return rc;
    agent_words w;
    if ((rc = agent_shell_split(&w, cmd, &why, err))) return rc;
    int how = RUN_SHELL;
    char prog[PATH_MAX + 256];
    char **env = NULL;
    rc = permit(t, cmd, &w, why, &how, err);
    if (!rc && how == RUN_DIRECT) rc = find_program(t, w.v[0], prog, sizeof prog, err);
    if (!rc && !(env = clean_env(t))) rc = util_err_set(err, UTIL_ENOMEM, "run_shell: out of memory");
    if (!rc && how == RUN_DIRECT) {
        rc = spawn(t, prog, w.v, env, out, err);
    } else if (!rc) {
        char *argv[] = {"sh", "-c", (char *)cmd, NULL};
        rc = spawn(t, "/bin/sh", argv, env, out, err);
    }
    free(env);
    agent_words_release(&w);
    return rc;
}
