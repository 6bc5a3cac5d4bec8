/* tests/test_tools.c: the built-in tools (agent/tools*.c): confinement to the
 * workspace ('..', absolute paths, symlink escapes, also for new files),
 * confirmation (refused without a TTY, allowed by --yes or the allow list in
 * .cachet/config.json, asked through the callback), edit_file's exact match,
 * grep, run_shell, and the git tools on a real temporary repository. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agent/tools.h"
#include "../agent/tools_git.h"
#include "check.h"
#include "proc.h"

static int run_tool(agent_tools *t, const char *name, const char *args_json, util_buf *out, util_err *err) {
    cJSON *a = cJSON_Parse(args_json);
    util_buf_release(out);
    util_buf_init(out);
    util_err_clear(err);
    int rc = agent_tool_run(t, name, a, out, err);
    util_buf_append(out, "", 0);
    cJSON_Delete(a);
    return rc;
}

/* Runs a shell command with every %s replaced by dir. */
static void sh(const char *tpl, const char *dir) {
    util_buf b;
    util_buf_init(&b);
    for (const char *s = tpl; *s; s++) {
        if (s[0] == '%' && s[1] == 's') {
            util_buf_puts(&b, dir);
            s++;
        } else {
            util_buf_append(&b, s, 1);
        }
    }
    const char *cmd = b.data;
    proc_result r = proc_run(cmd);
    CHECK_MSG(r.status == 0, "'%s': %s", cmd, r.err);
    proc_result_free(&r);
    util_buf_release(&b);
}

static int ask_no(void *u, const char *tool, const char *what) {
    (void)tool;
    (void)what;
    ++*(int *)u;
    return 0;
}

static void test_confinement(agent_tools *t, const char *dir) {
    util_buf out;
    util_buf_init(&out);
    util_err err;
    CHECK(run_tool(t, "read_file", "{\"path\": \"a.txt\"}", &out, &err) == 0);
    CHECK(strstr(out.data, "hello") != NULL);
    CHECK(run_tool(t, "read_file", "{\"path\": \"sub/../a.txt\"}", &out, &err) != 0);
    CHECK(strstr(err.msg, "'..'") != NULL);
    CHECK(run_tool(t, "read_file", "{\"path\": \"../outside.txt\"}", &out, &err) != 0);
    CHECK(run_tool(t, "read_file", "{\"path\": \"/etc/passwd\"}", &out, &err) != 0);
    CHECK(strstr(err.msg, "outside the workspace") != NULL);
    char abs[4200];
    snprintf(abs, sizeof abs, "{\"path\": \"%s/ws/a.txt\"}", dir);
    CHECK(run_tool(t, "read_file", abs, &out, &err) == 0); /* absolute inside: fine */
    CHECK(run_tool(t, "read_file", "{\"path\": \"escape/secret.txt\"}", &out, &err) != 0);
    CHECK(strstr(err.msg, "outside the workspace") != NULL);
    CHECK(run_tool(t, "read_file", "{\"path\": \"link.txt\"}", &out, &err) != 0);
    CHECK(run_tool(t, "list_dir", "{\"path\": \"escape\"}", &out, &err) != 0);
    t->yes = 1;
    CHECK(run_tool(t, "write_file", "{\"path\": \"escape/new.txt\", \"content\": \"x\"}", &out, &err) != 0);
    CHECK(run_tool(t, "write_file", "{\"path\": \"dangling\", \"content\": \"x\"}", &out, &err) != 0);
    CHECK(run_tool(t, "write_file", "{\"path\": \"../new.txt\", \"content\": \"x\"}", &out, &err) != 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/outside/new.txt", dir);
    CHECK(access(p, F_OK) != 0);
    t->yes = 0;
    /* grep does not follow the symlinked directory out of the workspace */
    CHECK(run_tool(t, "grep", "{\"pattern\": \"TOPSECRET\"}", &out, &err) == 0);
    CHECK(strstr(out.data, "TOPSECRET") == NULL);
    CHECK(run_tool(t, "grep", "{\"pattern\": \"hel+o\"}", &out, &err) == 0);
    CHECK(strstr(out.data, "a.txt:1: hello") != NULL);
    CHECK(run_tool(t, "grep", "{\"pattern\": \"(unclosed\"}", &out, &err) != 0);
    CHECK(run_tool(t, "list_dir", "{}", &out, &err) == 0);
    CHECK(strstr(out.data, "a.txt\n") && strstr(out.data, "sub/\n"));
    util_buf_release(&out);
}

static void test_confirm(agent_tools *t, const char *dir) {
    util_buf out;
    util_buf_init(&out);
    util_err err;
    /* no TTY (no callback), no --yes, no allow list: refused */
    CHECK(run_tool(t, "write_file", "{\"path\": \"w.txt\", \"content\": \"x\"}", &out, &err) ==
          UTIL_ECANCELED);
    CHECK(strstr(err.msg, "needs confirmation") != NULL);
    CHECK(run_tool(t, "run_shell", "{\"command\": \"touch ran.txt\"}", &out, &err) == UTIL_ECANCELED);
    char p[4200];
    snprintf(p, sizeof p, "%s/ws/ran.txt", dir);
    CHECK(access(p, F_OK) != 0);
    CHECK(run_tool(t, "edit_file", "{\"path\": \"a.txt\", \"old\": \"hello\", \"new\": \"bye\"}", &out,
                   &err) == UTIL_ECANCELED);
    /* a TTY user who says no */
    int asked = 0;
    t->confirm = ask_no;
    t->confirm_user = &asked;
    CHECK(run_tool(t, "run_shell", "{\"command\": \"touch ran.txt\"}", &out, &err) == UTIL_ECANCELED);
    CHECK_EQ_INT(asked, 1);
    CHECK(strstr(err.msg, "declined") != NULL);
    t->confirm = NULL;
    /* --yes */
    t->yes = 1;
    CHECK(run_tool(t, "run_shell", "{\"command\": \"echo out; echo err >&2; exit 3\"}", &out, &err) == 0);
    CHECK(strstr(out.data, "out") && strstr(out.data, "err") && strstr(out.data, "[exit status 3]"));
    CHECK(run_tool(t, "edit_file", "{\"path\": \"b.txt\", \"old\": \"x\", \"new\": \"y\"}", &out, &err) != 0);
    CHECK(strstr(err.msg, "more than once") != NULL);
    CHECK(run_tool(t, "edit_file", "{\"path\": \"b.txt\", \"old\": \"zz\", \"new\": \"y\"}", &out, &err) ==
          UTIL_ENOTFOUND);
    CHECK(run_tool(t, "edit_file", "{\"path\": \"b.txt\", \"old\": \"x1\", \"new\": \"Q\"}", &out, &err) ==
          0);
    CHECK(run_tool(t, "read_file", "{\"path\": \"b.txt\"}", &out, &err) == 0);
    CHECK_EQ_STR(out.data, "Q x2\n");
    CHECK(run_tool(t, "write_file", "{\"path\": \"sub/new.txt\", \"content\": \"made\"}", &out, &err) == 0);
    t->yes = 0;
    /* bad arguments */
    CHECK(run_tool(t, "read_file", "{}", &out, &err) == UTIL_EINVAL);
    CHECK(strstr(err.msg, "missing argument 'path'") != NULL);
    CHECK(run_tool(t, "read_file", "{\"path\": 7}", &out, &err) == UTIL_EINVAL);
    CHECK(run_tool(t, "no_such_tool", "{}", &out, &err) == UTIL_ENOTFOUND);
    /* output truncation */
    t->max_output = 64;
    t->yes = 1;
    CHECK(run_tool(t, "run_shell", "{\"command\": \"seq 1 1000\"}", &out, &err) == 0);
    CHECK(out.len < 200 && strstr(out.data, "cut by cachet"));
    t->yes = 0;
    t->max_output = AGENT_TOOL_OUTPUT_LIMIT;
    util_buf_release(&out);
}

static void test_allow_list(const char *dir) {
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/ws", dir);
    sh("mkdir -p %s/ws/.cachet && printf '{\"allow\": [\"run_shell:echo *\", \"write_file\"]}' > %s/ws/.cachet/config.json",
       dir);
    agent_tools t;
    util_err err;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    CHECK_EQ_INT(t.n_allow, 2);
    util_buf out;
    util_buf_init(&out);
    CHECK(run_tool(&t, "run_shell", "{\"command\": \"echo allowed\"}", &out, &err) == 0);
    CHECK(strstr(out.data, "allowed") != NULL);
    CHECK(run_tool(&t, "run_shell", "{\"command\": \"touch nope\"}", &out, &err) == UTIL_ECANCELED);
    CHECK(run_tool(&t, "write_file", "{\"path\": \"w2.txt\", \"content\": \"x\"}", &out, &err) == 0);
    CHECK(run_tool(&t, "edit_file", "{\"path\": \"w2.txt\", \"old\": \"x\", \"new\": \"y\"}", &out, &err) ==
          UTIL_ECANCELED);
    util_buf_release(&out);
    agent_tools_release(&t);
    sh("rm -rf %s/ws/.cachet", dir);
}

static void test_git(agent_tools *t, const char *dir) {
    util_buf out;
    util_buf_init(&out);
    util_err err;
    CHECK(run_tool(t, "git_status", "{}", &out, &err) != 0); /* not a repository yet */
    sh("cd %s/ws && git init -q -b main . && git -c user.name=T -c user.email=t@e commit -q --allow-empty -m 'first commit' && "
       "git add a.txt && git -c user.name=T -c user.email=t@e commit -q -m 'add a' && echo more >> a.txt && echo s > staged.txt && git add staged.txt",
       dir);
    CHECK(run_tool(t, "git_status", "{}", &out, &err) == 0);
    CHECK(strstr(out.data, "branch: main") != NULL);
    CHECK(strstr(out.data, " M a.txt") != NULL);
    CHECK(strstr(out.data, "A  staged.txt") != NULL);
    CHECK(strstr(out.data, "?? b.txt") != NULL);
    CHECK(run_tool(t, "git_diff", "{}", &out, &err) == 0);
    CHECK(strstr(out.data, "+more") != NULL);
    CHECK(run_tool(t, "git_diff", "{\"staged\": true}", &out, &err) == 0);
    CHECK(strstr(out.data, "+s") != NULL && strstr(out.data, "+more") == NULL);
    CHECK(run_tool(t, "git_log", "{\"count\": 1}", &out, &err) == 0);
    CHECK(strstr(out.data, "add a") && !strstr(out.data, "first commit"));
    CHECK(run_tool(t, "git_log", "{\"count\": \"x\"}", &out, &err) != 0);
    util_buf s;
    util_buf_init(&s);
    agent_git_summary(t->root, &s);
    util_buf_append(&s, "", 0);
    CHECK(strstr(s.data, "branch: main") && strstr(s.data, "1 staged, 1 modified"));
    util_buf_release(&s);
    util_buf_release(&out);
}

void test_tools(void) {
    char dir[] = "/tmp/cachet-tools-XXXXXX";
    if (!mkdtemp(dir)) return;
    sh("mkdir -p %s/ws/sub %s/outside && echo hello > %s/ws/a.txt && echo TOPSECRET > %s/outside/secret.txt",
       dir);
    sh("printf 'x1 x2\\n' > %s/ws/b.txt && ln -s %s/outside %s/ws/escape && ln -s %s/outside/secret.txt %s/ws/link.txt",
       dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ln -s %s/outside/nothing %s/ws/dangling", dir, dir);
    proc_result r = proc_run(cmd);
    proc_result_free(&r);
    char ws[4200];
    snprintf(ws, sizeof ws, "%s/ws", dir);
    agent_tools t;
    util_err err;
    CHECK(agent_tools_init(&t, ws, &err) == 0);
    CHECK(agent_tool_exists("read_file") && !agent_tool_exists("rm_rf"));
    CHECK_CASE(confinement) test_confinement(&t, dir);
    CHECK_CASE(confirm) test_confirm(&t, dir);
    CHECK_CASE(allow_list) test_allow_list(dir);
    CHECK_CASE(git) test_git(&t, dir);
    agent_tools_release(&t);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    r = proc_run(cmd);
    proc_result_free(&r);
}
