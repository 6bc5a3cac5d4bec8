/* tests/test_agent.c: the agent end to end (agent/loop.c, cmd_agent.c,
 * stats.c). The tool loop on the replay backend (recorded outputs incl.
 * malformed calls, a refused write, an unknown tool, a path escape) with the
 * real tokenizer, engine accounting and session files; a scripted 10-turn
 * session on the real model whose hit rate after turn 1 is >= 95% by the
 * engine's counters and by `cachet stats --json` alike; a new process getting
 * tiers 0-1 from the disk tier; --resume; breaks recorded with their cause. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agent/session.h"
#include "check.h"
#include "proc.h"

static cJSON *load_session(const char *state, const char *id) {
    char path[4096];
    snprintf(path, sizeof path, "%s/cachet/sessions/%s.jsonl", state, id);
    cJSON *evs = NULL;
    util_err err;
    CHECK_MSG(agent_session_load(path, &evs, NULL, &err) == 0, "load %s", path);
    return evs;
}

static const cJSON *nth_event(const cJSON *evs, const char *type, int n) {
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
        if (t && strcmp(t, type) == 0 && n-- == 0) return e;
    }
    return NULL;
}

static const char *estr(const cJSON *e, const char *k) {
    return cJSON_GetStringValue(cJSON_GetObjectItem(e, k));
}

static double enum_(const cJSON *e, const char *k) {
    const cJSON *v = cJSON_GetObjectItem(e, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char k_replay[] =
    "[\"<tool_call>[{\\\"name\\\": \\\"list_dir\\\", \\\"arguments\\\": {}}]</tool_call>\","
    "\"<tool_call>[{\\\"name\\\": \\\"read_file\\\", \\\"arguments\\\": {\\\"path\\\": \\\"notes.txt\\\"}}, "
    "{\\\"name\\\": \\\"read_file\\\", \\\"arguments\\\": {\\\"path\\\": \\\"../../etc/passwd\\\"}}]</tool_call>\","
    "\"<tool_call>[{\\\"name\\\": \\\"read_file\\\", \\\"arguments\\\": {\\\"path\\\": }]</tool_call>\","
    "\"<tool_call>[{\\\"name\\\": \\\"write_file\\\", \\\"arguments\\\": {\\\"path\\\": \\\"out.txt\\\", "
    "\\\"content\\\": \\\"x\\\"}}, {\\\"name\\\": \\\"launch_missiles\\\", \\\"arguments\\\": {}}]</tool_call>\","
    "\"All done.\", \"Second turn.\", \"Third turn.\"]";

static void test_replay(const char *dir, const char *model) {
    char state[4200];
    snprintf(state, sizeof state, "%s/state", dir);
    FILE *f;
    char p[4200];
    snprintf(p, sizeof p, "%s/replay.json", dir);
    if ((f = fopen(p, "w"))) {
        fputs(k_replay, f);
        fclose(f);
    }
    proc_result r = proc_runf(
        "mkdir -p %s/ws && cp -r %s/examples/workspace/. %s/ws/ && echo SECRET-NOTE > %s/ws/notes.txt", dir,
        check_root(), dir, dir);
    proc_result_free(&r);
    r = proc_runf(
        "cd %s && XDG_STATE_HOME=%s %s/cachet -p 'look around' --replay replay.json --workspace ws --model %s --json "
        "</dev/null",
        dir, state, proc_bin_dir(), model);
    CHECK_MSG(r.status == 0, "replay run: %s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    CHECK(o != NULL);
    CHECK_EQ_STR(estr(o, "reply"), "All done.");
    CHECK_EQ_INT(enum_(o, "rounds"), 5);
    char id[64] = "";
    if (estr(o, "session")) snprintf(id, sizeof id, "%s", estr(o, "session"));
    CHECK(strstr(r.err, "[tool] list_dir") != NULL);
    cJSON_Delete(o);
    proc_result_free(&r);
    snprintf(p, sizeof p, "%s/ws/out.txt", dir);
    CHECK_MSG(access(p, F_OK) != 0, "write_file ran without confirmation");

    cJSON *evs = load_session(state, id);
    const cJSON *t0 = nth_event(evs, "tool_result", 0), *t1 = nth_event(evs, "tool_result", 1);
    const cJSON *t2 = nth_event(evs, "tool_result", 2), *t3 = nth_event(evs, "tool_result", 3);
    const cJSON *t4 = nth_event(evs, "tool_result", 4), *t5 = nth_event(evs, "tool_result", 5);
    CHECK(t0 && cJSON_IsTrue(cJSON_GetObjectItem(t0, "ok")) && strcmp(estr(t0, "name"), "list_dir") == 0);
    CHECK(t1 && cJSON_IsTrue(cJSON_GetObjectItem(t1, "ok")));
    CHECK(t2 && cJSON_IsFalse(cJSON_GetObjectItem(t2, "ok")) && strstr(estr(t2, "error"), "'..'"));
    CHECK(t3 && cJSON_IsFalse(cJSON_GetObjectItem(t3, "ok")) && strstr(estr(t3, "error"), "malformed"));
    CHECK(t4 && strstr(estr(t4, "error"), "needs confirmation"));
    CHECK(t5 && strstr(estr(t5, "error"), "unknown tool 'launch_missiles'"));
    /* the results went back to the model as tool messages */
    int saw_note = 0, saw_malformed = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const char *t = estr(e, "type"), *role = estr(e, "role"), *c = estr(e, "content");
        if (!t || strcmp(t, "message") != 0 || !role || strcmp(role, "tool") != 0 || !c) continue;
        saw_note |= strstr(c, "SECRET-NOTE") != NULL;
        saw_malformed |= strstr(c, "<tool_response>") && strstr(c, "malformed tool call");
    }
    CHECK(saw_note && saw_malformed);
    /* within the turn every request after the first is nearly all cached */
    for (int i = 1; i < 5; i++) {
        const cJSON *q = nth_event(evs, "request", i);
        CHECK_MSG(q && enum_(q, "cached_tokens") >= 0.9 * enum_(q, "prompt_tokens"),
                  "round %d: %.0f of %.0f cached", i, enum_(q, "cached_tokens"), enum_(q, "prompt_tokens"));
        CHECK(q && enum_(q, "engine_hits") == enum_(q, "cached_tokens"));
    }
    CHECK(nth_event(evs, "break", 0) == NULL);
    cJSON_Delete(evs);

    /* resume with an edited AGENTS.md: the break is recorded with its cause */
    r = proc_runf(
        "cd %s && echo 'One more rule.' >> ws/AGENTS.md && XDG_STATE_HOME=%s %s/cachet --resume %s -p next "
        "--replay replay.json --model %s --json",
        dir, state, proc_bin_dir(), id, model);
    CHECK_MSG(r.status == 0, "resume: %s", r.err);
    proc_result_free(&r);
    evs = load_session(state, id);
    const cJSON *b = nth_event(evs, "break", 0);
    CHECK(b && strstr(estr(b, "cause"), "workspace files changed"));
    cJSON_Delete(evs);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats %s", state, proc_bin_dir(), id);
    CHECK(r.status == 0 && strstr(r.out, "workspace files changed") && strstr(r.out, "turn   2"));
    proc_result_free(&r);
    /* --max-rounds stops a turn that keeps calling tools */
    r = proc_runf(
        "cd %s && XDG_STATE_HOME=%s %s/cachet -p x --replay replay.json --workspace ws --model %s --max-rounds 2 --json",
        dir, state, proc_bin_dir(), model);
    CHECK(r.status == 0 && strstr(r.err, "stopped after 2 tool rounds"));
    proc_result_free(&r);
}

static const char k_questions[] =
    "What is the capital of France?\\nName a primary color.\\nWhat is 2 plus 2?\\nSay hello.\\n"
    "What language is this project in?\\nName a fruit.\\nWhat is the opposite of hot?\\n"
    "Name a planet.\\nWhat is water made of?\\nSay goodbye.\\n";

static void test_real_session(const char *dir, const char *model) {
    char state[4200];
    snprintf(state, sizeof state, "%s/state2", dir);
    proc_result r = proc_runf("mkdir -p %s/ws2 && cp -r %s/examples/workspace/. %s/ws2/", dir, check_root(),
                              dir);
    proc_result_free(&r);
    r = proc_runf("cd %s/ws2 && printf '%s' | XDG_STATE_HOME=%s %s/cachet --model %s --json --max-tokens 16",
                  dir, k_questions, state, proc_bin_dir(), model);
    CHECK_MSG(r.status == 0, "scripted session: %s", r.err);
    char id[64] = "";
    int lines = 0;
    for (char *s = r.out; s && *s; lines++) {
        cJSON *o = cJSON_Parse(s);
        if (o && estr(o, "session")) snprintf(id, sizeof id, "%s", estr(o, "session"));
        cJSON_Delete(o);
        s = strchr(s, '\n');
        if (s) s++;
    }
    CHECK_EQ_INT(lines, 10);
    proc_result_free(&r);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats %s --json", state, proc_bin_dir(), id);
    CHECK_MSG(r.status == 0, "stats %s: %s", id, r.err);
    cJSON *o = cJSON_Parse(r.out);
    cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sessions"), 0);
    double after1 = enum_(s, "hit_rate_after_turn1");
    fprintf(stderr, "agent: 10-turn session hit rate after turn 1: %.2f%% (overall %.2f%%)\n", 100 * after1,
            100 * enum_(s, "hit_rate"));
    CHECK_MSG(after1 >= 0.95, "hit rate after turn 1: %.3f", after1);
    CHECK_EQ_INT(enum_(s, "turns"), 10);
    CHECK(enum_(s, "engine_hits") == enum_(s, "cached_tokens"));
    CHECK(enum_(s, "engine_queries") == enum_(s, "prompt_tokens"));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(s, "breaks")) == 0);
    CHECK(enum_(s, "cost_with_cache") < enum_(s, "cost_without_cache"));
    cJSON_Delete(o);
    proc_result_free(&r);

    /* a new process in the same workspace: tiers 0-1 come from the disk tier */
    r = proc_runf("cd %s/ws2 && %s/cachet prompt --json --model %s", dir, proc_bin_dir(), model);
    o = cJSON_Parse(r.out);
    double sys_tokens = enum_(o, "system_message_tokens");
    /* the model has one name: the file's without .gguf, in tier 2 and in the session */
    const char *tier2 = cJSON_GetStringValue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "tiers"), 2), "text"));
    const char *named = tier2 ? strstr(tier2, "model: SmolLM2-135M-Instruct.Q4_1") : NULL;
    CHECK_MSG(named && strchr("\n", named[strlen("model: SmolLM2-135M-Instruct.Q4_1")]), "tier 2: %s",
              tier2 ? tier2 : "(none)");
    cJSON *sess = load_session(state, id);
    const cJSON *first = cJSON_GetArrayItem(sess, 0);
    CHECK_MSG(estr(first, "model") && strcmp(estr(first, "model"), "SmolLM2-135M-Instruct.Q4_1") == 0,
              "session model %s", estr(first, "model") ? estr(first, "model") : "(none)");
    cJSON_Delete(sess);
    cJSON_Delete(o);
    proc_result_free(&r);
    r = proc_runf(
        "cd %s/ws2 && XDG_STATE_HOME=%s %s/cachet -p 'Name a month.' --model %s --json --max-tokens 8", dir,
        state, proc_bin_dir(), model);
    o = cJSON_Parse(r.out);
    double cached = enum_(o, "cached_tokens");
    fprintf(stderr, "agent: new process, first turn: %.0f cached tokens; tiers 0-1 are %.0f tokens\n", cached,
            sys_tokens);
    CHECK_MSG(sys_tokens > 0 && cached >= 0.9 * sys_tokens, "first turn cached %.0f of %.0f", cached,
              sys_tokens);
    cJSON_Delete(o);
    proc_result_free(&r);

    /* --resume: the conversation's prefix comes back from the disk tier */
    r = proc_runf(
        "cd / && XDG_STATE_HOME=%s %s/cachet --resume %s -p 'One more.' --model %s --json --max-tokens 8",
        state, proc_bin_dir(), id, model);
    CHECK_MSG(r.status == 0, "resume: %s", r.err);
    proc_result_free(&r);
    cJSON *evs = load_session(state, id);
    const cJSON *last = NULL, *e;
    cJSON_ArrayForEach(e, evs) if (estr(e, "type") && strcmp(estr(e, "type"), "request") == 0) last = e;
    CHECK_MSG(last && enum_(last, "cached_tokens_disk") > 0.5 * enum_(last, "prompt_tokens"),
              "resumed request: %.0f of %.0f from disk", enum_(last, "cached_tokens_disk"),
              enum_(last, "prompt_tokens"));
    cJSON_Delete(evs);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet sessions", state, proc_bin_dir());
    CHECK(r.status == 0 && strstr(r.out, id) && strstr(r.out, "What is the capital of France?"));
    proc_result_free(&r);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats --all --json", state, proc_bin_dir());
    o = cJSON_Parse(r.out);
    CHECK(o && enum_(cJSON_GetObjectItem(o, "total"), "sessions") == 2);
    cJSON_Delete(o);
    proc_result_free(&r);
}

void test_agent(void) {
    const char *model = check_model_path();
    if (!model) {
        CHECK_MSG(0, "model missing");
        return;
    }
    char dir[] = "/tmp/cachet-agent-XXXXXX";
    if (!mkdtemp(dir)) return;
    CHECK_CASE(replay) test_replay(dir, model);
    CHECK_CASE(real_session) test_real_session(dir, model);
    proc_result r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
}
