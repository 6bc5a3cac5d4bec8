/* cli/repl.c: the interactive chat on a terminal: line editing and history
 * through libedit, streamed replies, Ctrl-C stopping the current generation
 * (SIGINT is blocked and read through a signalfd, so no signal handler and no
 * global flag), confirmation prompts (control characters escaped, so a
 * command cannot disguise itself), and the slash commands /stats /prompt
 * /reset /sessions /help /quit. The loop itself is agent/loop.c. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <editline/readline.h>

#include "repl.h"
#include "../agent/session.h"
#include "../util/buf.h"
#include "../util/text.h"
#include "cli.h"
#include "status.h"
#include "../agent/stats.h"

typedef struct repl {
    int sigfd;
    int in_reply;
    cli_progress progress; /* the prefill line (status.h) */
} repl;

static int sig_pending(repl *r) {
    struct pollfd p = {.fd = r->sigfd, .events = POLLIN};
    if (r->sigfd < 0 || poll(&p, 1, 0) <= 0) return 0;
    struct signalfd_siginfo si;
    while (read(r->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {}
    return 1;
}

static int should_stop(void *user) { return sig_pending(user); }

/* Writes text to f with what could drive the terminal made visible
 * (util_text_escape); returns the number of escapes. */
static size_t put_escaped(FILE *f, const char *text, size_t len, int flags) {
    util_buf b;
    util_buf_init(&b);
    size_t n = util_text_escape(&b, text, len, flags);
    if (n == (size_t)-1) n = 0;
    if (b.len) fwrite(b.data, 1, b.len, f);
    util_buf_release(&b);
    return n;
}

/* The model's text: lines and tabs as they are, but no escape sequence or
 * carriage return reaches the terminal (a reply must not be able to redraw
 * what the user reads before a confirmation). Pieces may cut a UTF-8
 * character, so only single-byte controls are escaped here. */
static int on_text(void *user, const char *text, size_t len) {
    repl *r = user;
    cli_progress_clear(&r->progress);
    r->in_reply = 1;
    put_escaped(stdout, text, len, UTIL_ESC_KEEP_LINES | UTIL_ESC_ASCII_ONLY);
    fflush(stdout);
    return sig_pending(r);
}

static void on_note(void *user, const char *kind, const char *text) {
    repl *r = user;
    cli_progress_clear(&r->progress);
    if (r->in_reply) fputc('\n', stdout);
    r->in_reply = 0;
    fflush(stdout);
    fprintf(stderr, "\033[2m[%s] ", kind);
    put_escaped(stderr, text, strlen(text), UTIL_ESC_KEEP_LINES);
    fputs("\033[0m\n", stderr);
}

static void on_progress(void *user, int done, int total, double elapsed_ms) {
    cli_progress_update(&((repl *)user)->progress, done, total, elapsed_ms);
}

/* The confirmation: the tool and what it acts on with every control,
 * invisible and bidirectional character escaped, so what the user reads is
 * what runs; attributes a reply may have set are reset first. */
static int confirm(void *user, const char *tool, const char *what) {
    repl *r = user;
    cli_progress_clear(&r->progress);
    if (r->in_reply) fputc('\n', stdout);
    r->in_reply = 0;
    fflush(stdout);
    util_buf b;
    util_buf_init(&b);
    size_t n = util_text_escape(&b, what ? what : "", what ? strlen(what) : 0, 0);
    fputs("\033[0m", stderr);
    if (n && n != (size_t)-1)
        fprintf(stderr,
                "[warning] %zu control characters (or invisible ones) in this call are shown escaped "
                "(\\r \\n \\e \\xNN \\u{XXXX}): read it with care\n",
                n);
    fputs("allow ", stderr);
    put_escaped(stderr, tool, strlen(tool), 0);
    fprintf(stderr, ": %s ? [y/N] ", b.data ? b.data : "");
    fflush(stderr);
    util_buf_release(&b);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 0;
    return line[0] == 'y' || line[0] == 'Y';
}

static void history_path(char *buf, size_t cap) {
    char dir[4096];
    util_err e;
    buf[0] = '\0';
    if (agent_sessions_dir(dir, sizeof dir, 1, &e) == 0) snprintf(buf, cap, "%s/../history", dir);
}

static const char help_text[] =
    "/stats     cache hit rate of this session (per turn, TTFT, cost)\n"
    "/prompt    the assembled prompt with its tiers and token counts\n"
    "/reset     forget the conversation (keeps the system prompt; the break is recorded)\n"
    "/sessions  list saved sessions\n"
    "/help      this list\n"
    "/quit      leave (also Ctrl-D); Ctrl-C stops a reply, not the session\n";

/* Runs a slash command; returns 1 to quit. */
static int slash(cli_agent *c, agent *a, const char *line) {
    util_err err;
    if (strcmp(line, "/quit") == 0 || strcmp(line, "/exit") == 0) return 1;
    if (strcmp(line, "/help") == 0)
        fputs(help_text, stdout);
    else if (strcmp(line, "/stats") == 0) {
        char *argv[] = {"stats", (char *)agent_session_id(a), NULL};
        cli_cmd_stats(2, argv);
    } else if (strcmp(line, "/sessions") == 0) {
        char *argv[] = {"sessions", NULL};
        cli_cmd_sessions(1, argv);
    } else if (strcmp(line, "/prompt") == 0) {
        const agent_prompt *p = agent_get_prompt(a);
        printf("===== tiers 0-1: system prompt =====\n%s\n===== tier 2: session context =====\n%s\n"
               "===== tier 3: turn context is appended to each user message =====\n",
               p->system, agent_get_tier2(a));
    } else if (strcmp(line, "/reset") == 0) {
        if (agent_reset(a, &err))
            fprintf(stderr, "cachet: %s\n", err.msg);
        else
            printf("conversation reset (system prompt and session context kept)\n");
    } else {
        fprintf(stderr, "unknown command '%s'; /help lists them\n", line);
    }
    (void)c;
    return 0;
}

int cli_repl(cli_agent *c) {
    repl r = {.sigfd = -1};
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, &old);
    r.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    c->ao.on_text = on_text;
    c->ao.on_note = on_note;
    c->ao.on_progress = on_progress;
    cli_progress_init(&r.progress, 1);
    c->ao.should_stop = should_stop;
    c->ao.user = &r;
    c->ao.confirm = confirm;
    c->ao.confirm_user = &r;
    util_err err;
    util_err_clear(&err);
    agent *a = NULL;
    if (c->ao.http.url)
        fprintf(stderr, "cachet: connecting to %s...\n", c->ao.http.url);
    else
        fprintf(stderr, "cachet: loading the model...\n");
    if (agent_open(&a, &c->ao, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        if (r.sigfd >= 0) close(r.sigfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return CLI_EXIT_FAIL;
    }
    char hist[4200];
    history_path(hist, sizeof hist);
    using_history();
    if (hist[0]) read_history(hist);
    printf("cachet: session %s (%s). /help for commands, Ctrl-D to leave.\n", agent_session_id(a),
           agent_model_name(a));
    int rc = 0;
    for (;;) {
        char *line = readline("> ");
        if (!line) {
            fputc('\n', stdout);
            break;
        }
        size_t l = strlen(line);
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\n')) line[--l] = '\0';
        if (!*line) {
            free(line);
            continue;
        }
        add_history(line);
        if (line[0] == '/') {
            int q = slash(c, a, line);
            free(line);
            if (q) break;
            continue;
        }
        sig_pending(&r); /* a Ctrl-C typed at the prompt does not stop the next reply */
        agent_turn_result res;
        r.in_reply = 0;
        int t = agent_turn(a, line, &res, &err);
        free(line);
        cli_progress_clear(&r.progress);
        if (r.in_reply) fputc('\n', stdout);
        r.in_reply = 0;
        if (t) {
            fprintf(stderr, "cachet: %s\n", err.msg);
            util_err_clear(&err);
        } else {
            char sum[512];
            cli_turn_summary(sum, sizeof sum, &res); /* the line -p prints (status.h) */
            fprintf(stderr, "\033[2m%s\033[0m\n", sum);
        }
        agent_turn_result_release(&res);
    }
    if (hist[0]) write_history(hist);
    agent_free(a);
    if (r.sigfd >= 0) close(r.sigfd);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}
