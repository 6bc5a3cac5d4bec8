/* tests/test_session.c: session files (agent/session.c): create, append,
 * load, a torn last line tolerated, find by id prefix and latest, listing
 * newest first; and kill -9 during a scripted session: the file parses and
 * holds every completed turn, and the session resumes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../agent/session.h"
#include "../util/text.h"
#include "check.h"
#include "proc.h"

static void test_files(void) {
    agent_session s;
    util_err err;
    CHECK(agent_session_create(&s, &err) == 0);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "session");
    cJSON_AddStringToObject(e, "id", s.id);
    CHECK(agent_session_append(&s, e, &err) == 0);
    cJSON_Delete(e);
    CHECK(agent_session_sync(&s, &err) == 0);
    agent_session_close(&s);
    FILE *f = fopen(s.path, "ab");
    fputs("{\"type\":\"request\",\"prompt_tok", f); /* a torn line */
    fclose(f);
    cJSON *evs;
    agent_session_info info;
    CHECK(agent_session_load(s.path, &evs, &info, &err) == 0);
    CHECK_EQ_INT(cJSON_GetArraySize(evs), 1);
    CHECK_EQ_INT(info.torn, 1);
    CHECK_EQ_INT(info.skipped, 1);
    CHECK_MSG(strstr(info.warning, "line 2, cut short") != NULL, "%s", info.warning);
    cJSON_Delete(evs);
    /* reopening ends the torn line, so the next event is whole */
    agent_session s2;
    CHECK(agent_session_open(&s2, s.path, &err) == 0);
    e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "turn_end");
    CHECK(agent_session_append(&s2, e, &err) == 0);
    cJSON_Delete(e);
    agent_session_close(&s2);
    CHECK(agent_session_load(s.path, &evs, &info, &err) == 0);
    CHECK_EQ_INT(cJSON_GetArraySize(evs), 2);
    CHECK_EQ_INT(info.torn, 0);
    cJSON_Delete(evs);
    char path[4096], id[64], prefix[32];
    CHECK(agent_session_find(NULL, path, sizeof path, id, sizeof id, &err) == 0);
    CHECK_EQ_STR(id, s.id);
    snprintf(prefix, sizeof prefix, "%.17s", s.id);
    CHECK(agent_session_find(prefix, path, sizeof path, id, sizeof id, &err) == 0);
    CHECK_EQ_STR(path, s.path);
    CHECK(agent_session_find("nope", path, sizeof path, id, sizeof id, &err) == UTIL_ENOTFOUND);
}

/* Strings with invalid UTF-8 (a Latin-1 file the agent read, a cut reply)
 * reach the file as valid UTF-8 JSON: each bad byte one U+FFFD (the cut
 * character inside the string is two bytes, so two). */
static void test_utf8(void) {
    agent_session s;
    util_err err;
    CHECK(agent_session_create(&s, &err) == 0);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "type", "tool_result");
    cJSON_AddStringToObject(e, "text", "caf\xe9 ok \xe5\xae");
    CHECK(agent_session_append(&s, e, &err) == 0);
    cJSON_Delete(e);
    agent_session_close(&s);
    FILE *f = fopen(s.path, "rb");
    char buf[4096] = {0};
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    CHECK_MSG(n > 0 && util_utf8_check(buf, n) == n, "session file is not valid UTF-8 (%zu bytes)", n);
    cJSON *evs;
    agent_session_info info;
    CHECK(agent_session_load(s.path, &evs, &info, &err) == 0);
    cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(evs, 0), "text");
    CHECK_EQ_STR(cJSON_IsString(t) ? t->valuestring : "", "caf\xef\xbf\xbd ok \xef\xbf\xbd\xef\xbf\xbd");
    cJSON_Delete(evs);
    unlink(s.path);
}

/* A scripted session on the replay backend, killed with SIGKILL mid-way. */
static void test_kill9(void) {
    const char *model = check_model_path();
    if (!model) {
        CHECK_MSG(0, "model missing");
        return;
    }
    char dir[] = "/tmp/cachet-kill-XXXXXX";
    if (!mkdtemp(dir)) return;
    char cmd[8192];
    /* 40 turns of replayed replies; a fifo feeds the turns slowly */
    snprintf(
        cmd, sizeof cmd,
        "mkdir -p %s/ws %s/state && cd %s && (printf '[' > replay.json; for i in $(seq 1 39); do printf '\"reply %%s xxxxxxxx\",' $i >> replay.json; done; printf '\"last\"]' >> replay.json)",
        dir, dir, dir);
    proc_result r = proc_run(cmd);
    proc_result_free(&r);
    snprintf(
        cmd, sizeof cmd,
        "cd %s && mkfifo in || exit 1; XDG_STATE_HOME=%s/state %s/cachet --workspace ws --replay replay.json "
        "--model %s --json < in > out.txt 2> err.txt & pid=$!; "
        "(for i in $(seq 1 40); do echo \"question $i\"; sleep 0.05; done) > %s/in & "
        "for i in $(seq 1 1800); do n=$(cat state/cachet/sessions/*.jsonl 2>/dev/null | grep -c turn_end); "
        "[ \"${n:-0}\" -ge 3 ] && break; sleep 0.05; done; kill -9 $pid; wait $pid 2>/dev/null; echo killed; wait",
        dir, dir, proc_bin_dir(), model, dir);
    r = proc_run(cmd);
    CHECK(strstr(r.out, "killed") != NULL);
    proc_result_free(&r);
    snprintf(cmd, sizeof cmd, "ls %s/state/cachet/sessions/*.jsonl", dir);
    r = proc_run(cmd);
    char path[4096] = "";
    sscanf(r.out, "%4095s", path);
    proc_result_free(&r);
    cJSON *evs = NULL;
    util_err err;
    CHECK(agent_session_load(path, &evs, NULL, &err) == 0);
    int turns = 0, replies = 0, requests = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
        if (!t) continue;
        turns += strcmp(t, "turn_end") == 0;
        replies += strcmp(t, "reply") == 0;
        requests += strcmp(t, "request") == 0;
    }
    CHECK_MSG(turns >= 3, "completed turns in the file: %d", turns);
    CHECK(replies >= turns && requests >= turns);
    cJSON_Delete(evs);
    /* the session resumes after the crash */
    snprintf(
        cmd, sizeof cmd,
        "cd %s && XDG_STATE_HOME=%s/state %s/cachet --resume --replay replay.json --model %s -p again --json",
        dir, dir, proc_bin_dir(), model);
    r = proc_run(cmd);
    CHECK_MSG(r.status == 0, "resume after kill -9: %s", r.err);
    CHECK(strstr(r.out, "\"reply\":\"reply 1 ") != NULL);
    proc_result_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    r = proc_run(cmd);
    proc_result_free(&r);
}

void test_session(void) {
    CHECK_CASE(files) test_files();
    CHECK_CASE(kill9) test_kill9();
    CHECK_CASE(utf8) test_utf8();
}
