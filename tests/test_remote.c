/* tests/test_remote.c: the agent's HTTP backend (agent/backend_http.c) over
 * real loopback HTTP. Against `cachet serve` (a subprocess on a free port,
 * always stopped): a scripted 3-turn session plus a --resume turn whose hit
 * rate `cachet stats` and the server's /metrics report alike, and the API key.
 * Against fake servers (a socket thread in this process answering canned
 * bytes): Retry-After, 500s until the retries run out, malformed JSON, a stall,
 * a refused connection, OpenAI-style tool_calls, unreported cached tokens. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../agent/session.h"
#include "../util/buf.h"
#include "check.h"
#include "fakesrv.h"
#include "proc.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *estr(const cJSON *e, const char *k) {
    return cJSON_GetStringValue(cJSON_GetObjectItem(e, k));
}

static double enum_(const cJSON *e, const char *k) {
    const cJSON *v = cJSON_GetObjectItem(e, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const cJSON *nth_event(const cJSON *evs, const char *type, int n) {
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const char *t = estr(e, "type");
        if (t && strcmp(t, type) == 0 && n-- == 0) return e;
    }
    return NULL;
}

static cJSON *load_session(const char *state, const char *id) {
    char path[4096];
    snprintf(path, sizeof path, "%s/cachet/sessions/%s.jsonl", state, id);
    cJSON *evs = NULL;
    util_err err;
    CHECK_MSG(agent_session_load(path, &evs, NULL, &err) == 0, "load %s", path);
    return evs;
}

/* The session id of the last JSON line an agent printed. */
static void session_of(const char *out, char *id, size_t cap) {
    id[0] = '\0';
    for (const char *s = out; s && *s;) {
        cJSON *o = cJSON_Parse(s);
        if (o && estr(o, "session")) snprintf(id, cap, "%s", estr(o, "session"));
        cJSON_Delete(o);
        s = strchr(s, '\n');
        if (s) s++;
    }
}

/* --- fake servers (tests/fakesrv.h) ------------------------------------------------------ */

/* A complete answer with a Content-Length into buf; returns buf. */
static const char *answer(char *buf, size_t cap, const char *status, const char *headers, const char *body) {
    char *a = fake_answer(status, headers, body);
    snprintf(buf, cap, "%s", a ? a : "");
    free(a);
    return buf;
}

#define k_sse_head fake_sse_head

static const char k_hello[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    ": a comment\r\n\r\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello \"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"there.\"},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":3,"
    "\"prompt_tokens_details\":{\"cached_tokens\":64}}}\n\n"
    "data: [DONE]\n\n";

/* Runs the agent once against a fake server; ws holds a workspace, state the sessions. */
static proc_result agent_fake(const char *dir, const fake *f, const char *extra) {
    return proc_runf(
        "cd %s && XDG_STATE_HOME=%s/state %s/cachet -p 'hi' --backend http://127.0.0.1:%d/v1 --backend-model fake "
        "--workspace ws --json %s",
        dir, dir, proc_bin_dir(), f->port, extra);
}

static void test_retry_after(const char *dir) {
    fake f;
    char a429[512];
    answer(a429, sizeof a429, "429 Too Many Requests", "Retry-After: 1\r\n",
           "{\"error\":{\"message\":\"slow down\",\"code\":\"rate_limited\"}}");
    CHECK(fake_start(&f, 2, a429, k_hello) == 0);
    proc_result r = agent_fake(dir, &f, "");
    fake_stop(&f);
    CHECK_MSG(r.status == 0, "429 then 200: status %d: %s", r.status, r.err);
    cJSON *o = cJSON_Parse(r.out);
    CHECK_EQ_STR(estr(o, "reply"), "Hello there.");
    CHECK_EQ_INT(enum_(o, "prompt_tokens"), 100);
    CHECK_EQ_INT(enum_(o, "cached_tokens"), 64);
    CHECK_MSG(strstr(r.err, "[retry]") && strstr(r.err, "answered 429") && strstr(r.err, "slow down") &&
                  strstr(r.err, "Retry-After"),
              "retry note: %s", r.err);
    CHECK_EQ_INT(f.served, 2);
    CHECK_MSG(f.t[1] - f.t[0] >= 0.95, "Retry-After: 1 honoured (%.3f s)", f.t[1] - f.t[0]);
    const char *req = f.req[1] ? f.req[1] : "";
    CHECK(strncmp(req, "POST /v1/chat/completions ", 26) == 0);
    CHECK(strstr(req, "\"stream\":true") && strstr(req, "\"include_usage\":true") &&
          strstr(req, "\"model\":\"fake\""));
    CHECK(strstr(req, "\"messages\":[{\"role\":\"system\"") != NULL);
    CHECK(strcasestr(req, "authorization:") == NULL);
    char id[64] = "";
    if (estr(o, "session")) snprintf(id, sizeof id, "%s", estr(o, "session"));
    cJSON_Delete(o);
    proc_result_free(&r);
    char state[4200];
    snprintf(state, sizeof state, "%s/state", dir);
    cJSON *evs = load_session(state, id);
    const cJSON *q = nth_event(evs, "request", 0);
    CHECK(q && estr(q, "backend") && strcmp(estr(q, "backend"), "http") == 0);
    CHECK(q && enum_(q, "attempts") == 2 && cJSON_IsTrue(cJSON_GetObjectItem(q, "stream")));
    CHECK(q && enum_(q, "cached_tokens") == 64 && enum_(q, "generated_tokens") == 3 &&
          enum_(q, "ttft_ms") >= 0);
    const cJSON *s0 = nth_event(evs, "session", 0);
    CHECK(s0 && estr(s0, "model") && strcmp(estr(s0, "model"), "fake") == 0);
    cJSON_Delete(evs);
    fake_release(&f);
}

static void test_errors(const char *dir) {
    char k500[512], bad_json[512];
    answer(k500, sizeof k500, "500 Internal Server Error", "", "{\"error\":{\"message\":\"boom\"}}");
    fake f;
    CHECK(fake_start(&f, 4, k500, k500, k500, k500) == 0);
    double t0 = now_s();
    proc_result r = agent_fake(dir, &f, "--retries 2");
    double dt = now_s() - t0;
    fake_stop(&f);
    CHECK_MSG(r.status == 1 && strstr(r.err, "answered 500 Internal Server Error: boom") &&
                  strstr(r.err, "(3 attempts)"),
              "500s: status %d: %s", r.status, r.err);
    CHECK_EQ_INT(f.served, 3);
    CHECK_MSG(dt < 10, "three attempts took %.1f s", dt);
    proc_result_free(&r);
    fake_release(&f);

    /* malformed JSON: in a stream, and as a whole answer */
    static char bad_sse[512];
    snprintf(bad_sse, sizeof bad_sse,
             "%sdata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {not json\n\n", k_sse_head);
    answer(bad_json, sizeof bad_json, "200 OK", "", "{oops");
    CHECK(fake_start(&f, 2, bad_sse, bad_json) == 0);
    r = agent_fake(dir, &f, "");
    CHECK_MSG(r.status == 1 && strstr(r.err, "malformed JSON in its stream: '{not json'"), "bad sse: %d: %s",
              r.status, r.err);
    proc_result_free(&r);
    r = agent_fake(dir, &f, "--no-stream");
    CHECK_MSG(r.status == 1 && strstr(r.err, "answered with malformed JSON: '{oops'"), "bad json: %d: %s",
              r.status, r.err);
    proc_result_free(&r);
    fake_stop(&f);
    CHECK(f.req[1] && strstr(f.req[1], "\"stream\":false") && !strstr(f.req[1], "include_usage"));
    fake_release(&f);

    /* a stall: one attempt, cut at --timeout, not retried */
    CHECK(fake_start(&f, 1, FAKE_STALL) == 0);
    t0 = now_s();
    r = agent_fake(dir, &f, "--timeout 1 --retries 3");
    dt = now_s() - t0;
    fake_stop(&f);
    CHECK_MSG(r.status == 1 && strstr(r.err, "no complete answer within 1 s"), "stall: %d: %s", r.status,
              r.err);
    CHECK_EQ_INT(f.served, 1);
    CHECK_MSG(dt < 5, "stall took %.1f s", dt);
    proc_result_free(&r);
    fake_release(&f);

    /* nothing listening: connection errors are retried, then named */
    fake g;
    CHECK(fake_start(&g, 0) == 0);
    fake_stop(&g); /* its port is closed now */
    r = agent_fake(dir, &g, "--retries 1");
    CHECK_MSG(r.status == 1 && strstr(r.err, "(2 attempts)") && strstr(r.err, "127.0.0.1"), "refused: %d: %s",
              r.status, r.err);
    proc_result_free(&r);
}

/* OpenAI-style tool_calls become a <tool_call> the agent runs; a usage
 * without cached_tokens is "not reported", cache_read_input_tokens is read. */
static void test_tool_calls(const char *dir) {
    static char a0[2048], a1[1024];
    snprintf(
        a0, sizeof a0,
        "%sdata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\","
        "\"function\":{\"name\":\"list_dir\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\": \\\".\\\"}\"}}]},"
        "\"finish_reason\":\"tool_calls\"}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":200,\"completion_tokens\":9}}\n\n"
        "data: [DONE]\n\n",
        k_sse_head);
    snprintf(a1, sizeof a1,
             "%sdata: {\"choices\":[{\"delta\":{\"content\":\"Done.\"},\"finish_reason\":\"stop\"}],"
             "\"usage\":{\"prompt_tokens\":260,\"completion_tokens\":2,\"cache_read_input_tokens\":200}}\n\n",
             k_sse_head);
    fake f;
    CHECK(fake_start(&f, 2, a0, a1) == 0);
    proc_result r = agent_fake(dir, &f, "");
    fake_stop(&f);
    CHECK_MSG(r.status == 0, "tool_calls: %d: %s", r.status, r.err);
    cJSON *o = cJSON_Parse(r.out);
    CHECK_EQ_STR(estr(o, "reply"), "Done.");
    CHECK_EQ_INT(enum_(o, "rounds"), 2);
    CHECK_MSG(strstr(r.err, "[tool] list_dir . (") != NULL, "%s",
              r.err); /* the path listed, the output size */
    const char *q = f.req[1] ? f.req[1] : "";
    CHECK_MSG(strstr(q, "<tool_call>[{\\\"name\\\":\\\"list_dir\\\"") &&
                  strstr(q, "{\"role\":\"user\",\"content\":\"<tool_response>"),
              "second request: %.600s", q);
    char id[64] = "", state[4200];
    if (estr(o, "session")) snprintf(id, sizeof id, "%s", estr(o, "session"));
    cJSON_Delete(o);
    proc_result_free(&r);
    snprintf(state, sizeof state, "%s/state", dir);
    cJSON *evs = load_session(state, id);
    const cJSON *q0 = nth_event(evs, "request", 0), *q1 = nth_event(evs, "request", 1);
    CHECK(q0 && !cJSON_GetObjectItem(q0, "cached_tokens") && enum_(q0, "prompt_tokens") == 200);
    CHECK(q1 && enum_(q1, "cached_tokens") == 200);
    cJSON_Delete(evs);
    fake_release(&f);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats %s --json", state, proc_bin_dir(), id);
    o = cJSON_Parse(r.out);
    cJSON *s = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sessions"), 0);
    CHECK_EQ_INT(enum_(s, "requests"), 2);
    CHECK_EQ_INT(enum_(s, "requests_cached_unreported"), 1);
    CHECK_EQ_INT(enum_(s, "prompt_tokens"), 260); /* the unreported request is not counted as a miss */
    CHECK_NEAR(enum_(s, "hit_rate"), 200.0 / 260.0, 1e-9);
    cJSON_Delete(o);
    proc_result_free(&r);
    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats %s", state, proc_bin_dir(), id);
    CHECK(strstr(r.out, "did not report cached tokens") != NULL);
    proc_result_free(&r);
}

/* --- against cachet serve --------------------------------------------------------------- */

typedef proc_server server;

/* `cachet serve --port 0` with ENV (e.g. the key) in its environment (tests/proc.c). */
static int server_start(server *s, const char *env, const char *args) {
    return proc_server_start(s, env, args);
}
static int server_stop(server *s) { return proc_server_stop(s); }

static size_t on_write(char *p, size_t sz, size_t n, void *user) {
    util_buf_append(user, p, sz * n);
    return sz * n;
}

/* A metric's value from /metrics (first line starting with name + ' '). */
static double metric(const server *s, const char *name) {
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", s->port);
    util_buf b;
    util_buf_init(&b);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    double v = -1;
    if (curl_easy_perform(c) == CURLE_OK && b.data) {
        size_t l = strlen(name);
        for (const char *p = b.data; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            if (strncmp(p, name, l) == 0 && p[l] == ' ') {
                v = strtod(p + l + 1, NULL);
                break;
            }
    }
    util_buf_release(&b);
    curl_easy_cleanup(c);
    return v;
}

static const char k_turns[] = "What is the capital of France?\\nName a primary color.\\nSay hello.\\n";

static void test_against_serve(const char *dir) {
    server s;
    int started = server_start(&s, "CACHET_TEST_KEY=sekrit-42", "--api-key-env CACHET_TEST_KEY") == 0;
    CHECK_MSG(started, "cachet serve did not start");
    if (!started) {
        server_stop(&s);
        return;
    }
    char state[4200];
    snprintf(state, sizeof state, "%s/state-serve", dir);
    /* no key, a wrong key, a key variable that is not set */
    proc_result r = proc_runf(
        "cd %s && XDG_STATE_HOME=%s %s/cachet -p hi --backend http://127.0.0.1:%d --workspace ws", dir, state,
        proc_bin_dir(), s.port);
    CHECK_MSG(r.status == 1 && strstr(r.err, "answered 401") && strstr(r.err, "invalid_api_key") &&
                  strstr(r.err, "no API key was sent"),
              "no key: %d: %s", r.status, r.err);
    proc_result_free(&r);
    r = proc_runf(
        "cd %s && WRONG_KEY=nope XDG_STATE_HOME=%s %s/cachet -p hi --backend http://127.0.0.1:%d/v1 "
        "--api-key-env WRONG_KEY --backend-model SmolLM2-135M-Instruct.Q4_1 --workspace ws",
        dir, state, proc_bin_dir(), s.port);
    CHECK_MSG(r.status == 1 && strstr(r.err, "/v1/chat/completions' answered 401") &&
                  !strstr(r.err, "no API key"),
              "wrong key: %d: %s", r.status, r.err);
    proc_result_free(&r);
    r = proc_runf(
        "cd %s && %s/cachet -p hi --backend http://127.0.0.1:%d --api-key-env CACHET_UNSET_VAR_X --workspace ws",
        dir, proc_bin_dir(), s.port);
    CHECK_MSG(r.status == 1 && strstr(r.err, "'CACHET_UNSET_VAR_X' is not set"), "unset: %s", r.err);
    proc_result_free(&r);

    /* a scripted 3-turn session: one turn per line of stdin, streamed */
    r = proc_runf(
        "cd %s && printf '%s' | CACHET_TEST_KEY=sekrit-42 XDG_STATE_HOME=%s %s/cachet --backend http://127.0.0.1:%d "
        "--api-key-env CACHET_TEST_KEY --workspace ws --json --max-tokens 8",
        dir, k_turns, state, proc_bin_dir(), s.port);
    CHECK_MSG(r.status == 0, "session: %d: %s", r.status, r.err);
    char id[64];
    session_of(r.out, id, sizeof id);
    proc_result_free(&r);
    /* one more turn through --resume and -p */
    r = proc_runf(
        "cd / && CACHET_TEST_KEY=sekrit-42 XDG_STATE_HOME=%s %s/cachet --resume %s -p 'One more.' --backend "
        "http://127.0.0.1:%d/ --api-key-env CACHET_TEST_KEY --json --max-tokens 8",
        state, proc_bin_dir(), id, s.port);
    CHECK_MSG(r.status == 0, "resume: %d: %s", r.status, r.err);
    cJSON *o = cJSON_Parse(r.out);
    CHECK_MSG(o && enum_(o, "turn_cached_tokens") >= 0.9 * enum_(o, "turn_prompt_tokens"),
              "resumed turn: %.0f of %.0f", enum_(o, "turn_cached_tokens"), enum_(o, "turn_prompt_tokens"));
    cJSON_Delete(o);
    proc_result_free(&r);

    r = proc_runf("XDG_STATE_HOME=%s %s/cachet stats %s --json", state, proc_bin_dir(), id);
    o = cJSON_Parse(r.out);
    cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "sessions"), 0);
    double queries = metric(&s, "cachet_prefix_cache_queries_total"),
           hits = metric(&s, "cachet_prefix_cache_hits_total");
    double ap = enum_(st, "prompt_tokens"), ac = enum_(st, "cached_tokens");
    fprintf(
        stderr,
        "remote: 4 turns against cachet serve: agent stats %.0f/%.0f cached (hit rate %.2f%%, after turn 1 "
        "%.2f%%); server /metrics %.0f/%.0f (%.2f%%)\n",
        ac, ap, 100 * enum_(st, "hit_rate"), 100 * enum_(st, "hit_rate_after_turn1"), hits, queries,
        queries > 0 ? 100 * hits / queries : 0.0);
    CHECK_EQ_INT(enum_(st, "turns"), 4);
    CHECK(ap > 0 && ap == queries);
    CHECK(ac > 0 && ac == hits);
    CHECK_MSG(enum_(st, "hit_rate_after_turn1") >= 0.9, "after turn 1: %.3f",
              enum_(st, "hit_rate_after_turn1"));
    CHECK_EQ_INT(enum_(st, "requests_cached_unreported"), 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(st, "breaks")) == 0);
    cJSON_Delete(o);
    proc_result_free(&r);
    cJSON *evs = load_session(state, id);
    int n = 0, streamed = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        if (!estr(e, "type") || strcmp(estr(e, "type"), "request") != 0) continue;
        n++;
        streamed += cJSON_IsTrue(cJSON_GetObjectItem(e, "stream")) && enum_(e, "ttft_ms") > 0;
    }
    CHECK(n == 4 && streamed == 4);
    const cJSON *s0 = nth_event(evs, "session", 0);
    CHECK(s0 && estr(s0, "model") && strcmp(estr(s0, "model"), "SmolLM2-135M-Instruct.Q4_1") == 0);
    cJSON_Delete(evs);
    CHECK_EQ_INT(server_stop(&s), 0);
}

void test_remote(void) {
    char dir[] = "/tmp/cachet-remote-XXXXXX";
    if (!mkdtemp(dir)) return;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    proc_result r = proc_runf("mkdir -p %s/ws && cp -r %s/examples/workspace/. %s/ws/", dir, check_root(),
                              dir);
    proc_result_free(&r);
    CHECK_CASE(retry_after) test_retry_after(dir);
    CHECK_CASE(errors) test_errors(dir);
    CHECK_CASE(tool_calls) test_tool_calls(dir);
    CHECK_CASE(against_serve) {
        if (check_model_path())
            test_against_serve(dir);
        else
            CHECK_MSG(0, "model missing: the session against cachet serve did not run");
    }
    r = proc_runf("rm -rf %s", dir);
    proc_result_free(&r);
    curl_global_cleanup();
}
