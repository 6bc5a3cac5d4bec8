/* tests/test_agent_tty.c: the interactive chat in a real terminal: tmux runs
 * `cachet` (replay backend, real tokenizer and engine), the test types with
 * send-keys and reads the screen with capture-pane: a reply, /stats, /help,
 * /reset, a refused-then-declined confirmation, and /quit ending the process;
 * and the prefill progress line on a terminal (cleared when it is done). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

/* Waits up to timeout_s for text to appear on the pane. */
static int wait_for(const char *sock, const char *text, int timeout_s) {
    for (int i = 0; i < timeout_s * 10; i++) {
        proc_result r = proc_runf("tmux -S %s capture-pane -p -t t -S -200", sock);
        int ok = r.status == 0 && strstr(r.out, text) != NULL;
        if (!ok && i == timeout_s * 10 - 1) fprintf(stderr, "pane:\n%s\n", r.out);
        proc_result_free(&r);
        if (ok) return 1;
        usleep(100000);
    }
    return 0;
}

static void keys(const char *sock, const char *text) {
    proc_result r = proc_runf("tmux -S %s send-keys -t t -l '%s' && tmux -S %s send-keys -t t Enter", sock,
                              text, sock);
    proc_result_free(&r);
}

static void test_repl(void) {
    const char *model = check_model_path();
    proc_result r = proc_runf("command -v tmux");
    int have = r.status == 0;
    proc_result_free(&r);
    if (!model || !have) {
        CHECK_MSG(0, "needs the model and tmux");
        return;
    }
    char dir[] = "/tmp/cachet-tty-XXXXXX";
    if (!mkdtemp(dir)) return;
    FILE *f;
    char p[4200];
    snprintf(p, sizeof p, "%s/replay.json", dir);
    if ((f = fopen(p, "w"))) {
        fputs(
            "[\"Hello from the replay.\", "
            "\"<tool_call>[{\\\"name\\\": \\\"run_shell\\\", \\\"arguments\\\": {\\\"command\\\": \\\"touch made.txt\\\"}}]</tool_call>\", "
            "\"I did not run it.\", \"After reset.\"]",
            f);
        fclose(f);
    }
    char sock[4200];
    snprintf(sock, sizeof sock, "%s/tmux.sock", dir);
    r = proc_runf(
        "mkdir -p %s/ws && cd %s/ws && tmux -S %s new-session -d -s t -x 150 -y 50 "
        "'XDG_STATE_HOME=%s/state %s/cachet --replay %s/replay.json --model %s; echo EXITED-$?; sleep 30'",
        dir, dir, sock, dir, proc_bin_dir(), dir, model);
    CHECK_MSG(r.status == 0, "tmux: %s", r.err);
    proc_result_free(&r);
    CHECK(wait_for(sock, "/help for commands", 60));
    keys(sock, "say hello");
    CHECK(wait_for(sock, "Hello from the replay.", 60));
    CHECK(wait_for(sock, "[cache]", 10));
    CHECK(wait_for(sock, "prompt tokens cached (", 10)); /* the summary -p prints too */
    CHECK(wait_for(sock, ", TTFT ", 10));
    keys(sock, "make a file");
    CHECK(wait_for(sock, "allow run_shell: touch made.txt ? [y/N]", 30));
    keys(sock, "n");
    CHECK(wait_for(sock, "I did not run it.", 30));
    snprintf(p, sizeof p, "%s/ws/made.txt", dir);
    CHECK(access(p, F_OK) != 0);
    keys(sock, "/stats");
    CHECK(wait_for(sock, "hit rate", 10));
    keys(sock, "/help");
    CHECK(wait_for(sock, "/reset", 10));
    keys(sock, "/reset");
    CHECK(wait_for(sock, "conversation reset", 10));
    keys(sock, "again");
    CHECK(wait_for(sock, "After reset.", 30));
    keys(sock, "/quit");
    CHECK(wait_for(sock, "EXITED-0", 20));
    r = proc_runf("tmux -S %s kill-server; XDG_STATE_HOME=%s/state %s/cachet stats --json", sock, dir,
                  proc_bin_dir());
    CHECK(strstr(r.out, "\"cause\":\"reset\"") != NULL);
    proc_result_free(&r);
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}

/* A prefill of a few seconds (no cache, one thread) on a terminal shows
 * "[prefill] done/total tokens, N tok/s" on stderr while it runs, and the line
 * is gone once the reply comes (a redirected run has none: test_cli.c). */
static void test_progress(void) {
    const char *model = check_model_path();
    proc_result r = proc_runf("command -v tmux");
    int have = r.status == 0;
    proc_result_free(&r);
    if (!model || !have) {
        CHECK_MSG(0, "needs the model and tmux");
        return;
    }
    char dir[] = "/tmp/cachet-ttyp-XXXXXX";
    if (!mkdtemp(dir)) return;
    char p[4200], sock[4200];
    snprintf(p, sizeof p, "%s/long.txt", dir);
    FILE *f = fopen(p, "w");
    if (f) {
        for (int i = 0; i < 180; i++) fputs("The quick brown fox jumps over the lazy dog. ", f);
        fclose(f);
    }
    snprintf(sock, sizeof sock, "%s/tmux.sock", dir);
    r = proc_runf(
        "cd %s && tmux -S %s new-session -d -s t -x 150 -y 50 "
        "'%s/cachet generate --prompt-file long.txt --max-tokens 1 --temp 0 --no-cache --no-disk-cache "
        "--threads 1 --model %s > out.txt; echo EXITED-$?; sleep 30'",
        dir, sock, proc_bin_dir(), model);
    CHECK_MSG(r.status == 0, "tmux: %s", r.err);
    proc_result_free(&r);
    CHECK(wait_for(sock, "[prefill] ", 60));
    CHECK(wait_for(sock, " tok/s", 10));
    CHECK(wait_for(sock, "EXITED-0", 120));
    r = proc_runf("tmux -S %s capture-pane -p -t t -S -200", sock);
    CHECK_MSG(strstr(r.out, "[prefill]") == NULL, "the progress line stayed: %s", r.out);
    proc_result_free(&r);
    r = proc_runf("tmux -S %s kill-server; rm -rf %s", sock, dir);
    proc_result_free(&r);
}

void test_agent_tty(void) {
    CHECK_CASE(repl) test_repl();
    CHECK_CASE(progress) test_progress();
}
