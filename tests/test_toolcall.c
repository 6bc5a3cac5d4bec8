/* tests/test_toolcall.c: tool-call parsing (agent/toolcall.c): lists, single
 * objects, arguments as a JSON string, several blocks, and every malformed
 * shape becoming an error entry (never a crash or a silent drop). */
#include <stdlib.h>
#include <string.h>

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
    c = parse("<tool_call>{\"name\": \"grep\", \"arguments\": \"{\\\"pattern\\\": \\\"x\\\"}\"}</tool_call>"
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
        "<tool_call>[{\"name\": \"read_file\"",                                          /* unclosed */
        "<tool_call>[]</tool_call>",                                                     /* empty list */
        "<tool_call>[42]</tool_call>",                                                   /* not an object */
        "<tool_call>{\"arguments\": {}}</tool_call>",                                    /* no name */
        "<tool_call>{\"name\": \"x\", \"arguments\": [1]}</tool_call>",                  /* args not object */
        "<tool_call>{\"name\": \"x\", \"arguments\": \"not json\"}</tool_call>",         /* args string */
        "<tool_call></tool_call>",                                                       /* empty */
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
        strncat(many, i ? ",{\"name\":\"git_status\"}" : "{\"name\":\"git_status\"}", sizeof many - strlen(many) - 1);
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

void test_toolcall(void) { CHECK_CASE(parse) test_parse_calls(); }
