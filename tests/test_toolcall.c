/* tests/test_toolcall.c: tool-call parsing (agent/toolcall.c): lists, single
 * objects, arguments as a JSON string, several blocks, each family's native
 * form (Qwen/Hermes, Llama 3.x JSON and <|python_tag|>, Mistral [TOOL_CALLS]),
 * and every malformed shape becoming an error entry (never a crash or a
 * silent drop). */
#include <stdlib.h>
#include <string.h>

#include "../agent/format.h"
#include "../agent/toolcall.h"
#include "check.h"

static agent_toolcalls parse(const char *text) {
    agent_toolcalls c;
    util_err err;
    CHECK(agent_toolcalls_parse(&c, text, &err) == 0);
    return c;
}

static void test_parse_calls(void) {
    agent_toolcalls c = parse("plain text, no calls");
    CHECK_EQ_INT(c.n, 0);
    agent_toolcalls_release(&c);

    c = parse("ok <tool_call>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]</tool_call>");
    CHECK_EQ_INT(c.n, 1);
    CHECK_EQ_STR(c.v[0].name, "read_file");
    CHECK(c.v[0].error == NULL);
    CHECK_EQ_STR(cJSON_GetObjectItem(c.v[0].args, "path")->valuestring, "a.txt");
    agent_toolcalls_release(&c);

    /* one object, arguments as a string, a second block, missing arguments */
    c = parse(
        "<tool_call>{\"name\": \"grep\", \"arguments\": \"{\\\"pattern\\\": \\\"x\\\"}\"}</tool_call>"
        " then <tool_call>[{\"name\": \"git_status\"}, {\"name\": \"list_dir\", \"arguments\": {}}]</tool_call>");
    CHECK_EQ_INT(c.n, 3);
    CHECK_EQ_STR(c.v[0].name, "grep");
    CHECK_EQ_STR(cJSON_GetObjectItem(c.v[0].args, "pattern")->valuestring, "x");
    CHECK_EQ_STR(c.v[1].name, "git_status");
    CHECK(cJSON_IsObject(c.v[1].args));
    CHECK_EQ_STR(c.v[2].name, "list_dir");
    agent_toolcalls_release(&c);

    static const char *const bad[] = {
        "<tool_call>[{\"name\": \"read_file\", \"arguments\": {\"path\": }]</tool_call>", /* bad JSON */
        "<tool_call>[{\"name\": \"read_file\"",                                           /* unclosed */
        "<tool_call>[]</tool_call>",                                                      /* empty list */
        "<tool_call>[42]</tool_call>",                                                    /* not an object */
        "<tool_call>{\"arguments\": {}}</tool_call>",                                     /* no name */
        "<tool_call>{\"name\": \"x\", \"arguments\": [1]}</tool_call>",          /* args not object */
        "<tool_call>{\"name\": \"x\", \"arguments\": \"not json\"}</tool_call>", /* args string */
        "<tool_call></tool_call>",                                               /* empty */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = parse(bad[i]);
        CHECK_MSG(c.n == 1 && c.v[0].error && strstr(c.v[0].error, "malformed"), "bad[%zu] not reported", i);
        agent_toolcalls_release(&c);
    }
    c = parse("<tool_call>[{\"name\": \"read_file\", \"arguments\": {\"path\": }]");
    CHECK(c.n == 1 && strstr(c.v[0].error, "</tool_call> is missing"));
    agent_toolcalls_release(&c);

    /* too many calls: the rest is reported, not dropped silently */
    char many[4096] = "<tool_call>[";
    for (int i = 0; i < 12; i++)
        strncat(many, i ? ",{\"name\":\"git_status\"}" : "{\"name\":\"git_status\"}",
                sizeof many - strlen(many) - 1);
    strncat(many, "]</tool_call>", sizeof many - strlen(many) - 1);
    c = parse(many);
    CHECK_EQ_INT(c.n, AGENT_MAX_CALLS_PER_REPLY + 1);
    CHECK(c.v[c.n - 1].error && strstr(c.v[c.n - 1].error, "too many"));
    agent_toolcalls_release(&c);

    util_buf b;
    util_buf_init(&b);
    CHECK(agent_toolresult_format(&b, "read_file", 0, "no \"such\" file") == 0);
    CHECK(strstr(b.data, "<tool_response>") && strstr(b.data, "\"error\":\"no \\\"such\\\" file\""));
    util_buf_release(&b);
}

static agent_toolcalls parse_for(const char *text, eng_chat_format f) {
    agent_toolcalls c;
    util_err err;
    CHECK(agent_toolcalls_parse_for(&c, text, f, &err) == 0);
    return c;
}

/* One good call: name and one string argument. */
static void expect_call(const agent_toolcalls *c, size_t i, const char *name, const char *key,
                        const char *val) {
    CHECK_MSG(i < c->n && c->v[i].error == NULL, "call %zu: %s", i,
              i < c->n && c->v[i].error ? c->v[i].error : "missing");
    if (i >= c->n || c->v[i].error) return;
    CHECK_EQ_STR(c->v[i].name, name);
    const cJSON *a = cJSON_GetObjectItem(c->v[i].args, key);
    CHECK_MSG(cJSON_IsString(a) && strcmp(a->valuestring, val) == 0, "call %zu: %s is not '%s'", i, key, val);
}

/* Each family's native output, as the model card / llama.cpp's tests show it
 * (Qwen 2.5/3 and Hermes, Llama 3.1-3.3, Mistral v3, Nemo and the newer
 * NAME[ARGS] form), then malformed ones: every one an error entry. */
static void test_families(void) {
    agent_toolcalls c = parse_for(
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n"
        "</tool_call>\n<tool_call>\n{\"name\": \"grep\", \"arguments\": {\"pattern\": \"TODO\"}}\n"
        "</tool_call>",
        ENG_CHAT_CHATML); /* Qwen 2.5: one object per block */
    CHECK_EQ_INT(c.n, 2);
    expect_call(&c, 0, "read_file", "path", "README.md");
    expect_call(&c, 1, "grep", "pattern", "TODO");
    agent_toolcalls_release(&c);

    static const char *const llama_ok[] = {
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}",
        "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}",
        "\n\n{\"type\": \"function\", \"name\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}",
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}</tool_call>", /* prompted */
    };
    for (size_t i = 0; i < sizeof llama_ok / sizeof llama_ok[0]; i++) {
        c = parse_for(llama_ok[i], ENG_CHAT_LLAMA31);
        CHECK_MSG(c.n == 1, "llama_ok[%zu]: %zu calls", i, c.n);
        expect_call(&c, 0, "read_file", "path", "README.md");
        agent_toolcalls_release(&c);
    }
    c = parse_for("{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}; "
                  "{\"name\": \"grep\", \"parameters\": {\"pattern\": \"b\"}}",
                  ENG_CHAT_LLAMA3);
    CHECK_EQ_INT(c.n, 2);
    expect_call(&c, 1, "grep", "pattern", "b");
    agent_toolcalls_release(&c);
    c = parse_for("The file says {\"name\": 1}. No call here.", ENG_CHAT_LLAMA31); /* text */
    CHECK_EQ_INT(c.n, 0);
    agent_toolcalls_release(&c);
    c = parse_for("{\"answer\": 42}", ENG_CHAT_LLAMA31); /* JSON text, not a call */
    CHECK_EQ_INT(c.n, 0);
    agent_toolcalls_release(&c);

    static const char *const mistral_ok[] = {
        "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}, \"id\": \"call00001\"}]",
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}, \"id\": \"123456789\"}]</s>",
        "[TOOL_CALLS]read_file[ARGS]{\"path\": \"README.md\"}",
    };
    for (size_t i = 0; i < sizeof mistral_ok / sizeof mistral_ok[0]; i++) {
        c = parse_for(mistral_ok[i], i == 0 ? ENG_CHAT_MISTRAL_V3 : ENG_CHAT_MISTRAL_TEKKEN);
        CHECK_MSG(c.n == 1, "mistral_ok[%zu]: %zu calls", i, c.n);
        expect_call(&c, 0, "read_file", "path", "README.md");
        agent_toolcalls_release(&c);
    }
    c = parse_for("[TOOL_CALLS]read_file[ARGS]{\"path\": \"a\"}[TOOL_CALLS]grep[ARGS]{\"pattern\": \"b\"}",
                  ENG_CHAT_MISTRAL_TEKKEN);
    CHECK_EQ_INT(c.n, 2);
    expect_call(&c, 0, "read_file", "path", "a");
    expect_call(&c, 1, "grep", "pattern", "b");
    agent_toolcalls_release(&c);
    c = parse_for("Sure, here it is.", ENG_CHAT_MISTRAL_V3);
    CHECK_EQ_INT(c.n, 0);
    agent_toolcalls_release(&c);

    static const struct {
        const char *text;
        eng_chat_format f;
        const char *what;
    } bad[] = {
        {"<|python_tag|>brave_search.call(query=\"x\")", ENG_CHAT_LLAMA31, "built-in"},
        {"<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"path\": }", ENG_CHAT_LLAMA31,
         "invalid JSON"},
        {"{\"name\": \"read_file\", \"parameters\": [1]}", ENG_CHAT_LLAMA31, "must be a JSON object"},
        {"{\"parameters\": {}, \"name\": }", ENG_CHAT_LLAMA3, "invalid JSON"},
        {"[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {\"path\": ", ENG_CHAT_MISTRAL_V3,
         "invalid JSON"},
        {"[TOOL_CALLS][]", ENG_CHAT_MISTRAL_TEKKEN, "empty"},
        {"[TOOL_CALLS]read_file[ARGS]{\"path\": ", ENG_CHAT_MISTRAL_TEKKEN, "after [ARGS]"},
        {"[TOOL_CALLS]read_file", ENG_CHAT_MISTRAL_TEKKEN, "NAME[ARGS]"},
        {"[TOOL_CALLS][{\"arguments\": {}}]", ENG_CHAT_MISTRAL_V3, "\"name\""},
        {"<tool_call>{\"name\": \"x\", \"arguments\": \"not json\"}</tool_call>", ENG_CHAT_PHI3, "string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = parse_for(bad[i].text, bad[i].f);
        CHECK_MSG(c.n == 1 && c.v[0].error && strstr(c.v[0].error, "malformed") &&
                      strstr(c.v[0].error, bad[i].what),
                  "bad[%zu]: %zu calls, %s", i, c.n, c.n && c.v[0].error ? c.v[0].error : "no error");
        agent_toolcalls_release(&c);
    }
}

/* Every chat family has its own agent format entry; the families whose
 * templates alternate user/assistant (or drop unknown roles) get tool
 * results as user turns, Llama 3.x as tool (ipython) turns. */
static void test_format_entries(void) {
    for (int f = ENG_CHAT_CHATML; f <= ENG_CHAT_DEEPSEEK_R1; f++)
        CHECK_MSG(agent_format_of((eng_chat_format)f)->chat == (eng_chat_format)f, "no agent format for %s",
                  eng_chat_format_name((eng_chat_format)f));
    CHECK_EQ_STR(agent_format_of(ENG_CHAT_LLAMA31)->tool_result_role, "tool");
    CHECK_EQ_STR(agent_format_of(ENG_CHAT_MISTRAL_V3)->tool_result_role, "user");
    CHECK_EQ_INT(agent_format_of(ENG_CHAT_MISTRAL_V1)->tier2, AGENT_TIER2_USER);
    CHECK_EQ_STR(agent_format_of(ENG_CHAT_PHI3)->tool_result_role, "user");
    CHECK_EQ_STR(agent_format_of(ENG_CHAT_DEEPSEEK_R1)->tool_result_role, "user");
}

void test_toolcall(void) {
    CHECK_CASE(parse) test_parse_calls();
    CHECK_CASE(formats) test_format_entries();
    CHECK_CASE(families) test_families();
}
