/* agent/toolcall.c: finds <tool_call> blocks in a reply and parses their JSON
 * (a list of calls or one call; "arguments" an object or a JSON string) with
 * cJSON. Every problem becomes a per-call error message for the model.
 * Does not run tools (tools.c). */
#include "toolcall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_open[] = "<tool_call>";
static const char k_close[] = "</tool_call>";

static int push(agent_toolcalls *c, agent_toolcall t) {
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 4;
        agent_toolcall *p = realloc(c->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        c->v = p;
        c->cap = nc;
    }
    c->v[c->n++] = t;
    return UTIL_OK;
}

static int push_error(agent_toolcalls *c, const char *name, const char *msg) {
    agent_toolcall t = {0};
    t.error = strdup(msg);
    if (name) t.name = strdup(name);
    if (!t.error || push(c, t)) {
        free(t.error);
        free(t.name);
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* One {"name", "arguments"} object. */
static int parse_one(agent_toolcalls *c, const cJSON *o) {
    if (!cJSON_IsObject(o))
        return push_error(c, NULL, "malformed tool call: each call must be a JSON object "
                                   "{\"name\": ..., \"arguments\": {...}}");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (!cJSON_IsString(nm) || !*nm->valuestring)
        return push_error(c, NULL, "malformed tool call: \"name\" must be a non-empty string");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "arguments");
    if (!a) a = cJSON_GetObjectItemCaseSensitive(o, "parameters");
    cJSON *args = NULL;
    if (!a || cJSON_IsNull(a)) {
        args = cJSON_CreateObject();
    } else if (cJSON_IsObject(a)) {
        args = cJSON_Duplicate(a, 1);
    } else if (cJSON_IsString(a)) { /* OpenAI style: arguments as a JSON string */
        args = cJSON_Parse(a->valuestring);
        if (!cJSON_IsObject(args)) {
            cJSON_Delete(args);
            return push_error(c, nm->valuestring,
                              "malformed tool call: \"arguments\" is a string that is not a JSON object");
        }
    } else {
        return push_error(c, nm->valuestring, "malformed tool call: \"arguments\" must be a JSON object");
    }
    agent_toolcall t = {0};
    t.name = strdup(nm->valuestring);
    t.args = args;
    if (!t.name || !args || push(c, t)) {
        free(t.name);
        cJSON_Delete(args);
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

static int parse_block(agent_toolcalls *c, const char *s, size_t n, int closed) {
    char *json = malloc(n + 1);
    if (!json) return UTIL_ENOMEM;
    memcpy(json, s, n);
    json[n] = '\0';
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(json, &end, 0);
    int rc = UTIL_OK;
    if (!v) {
        char msg[512];
        size_t off = end ? (size_t)(end - json) : 0;
        snprintf(msg, sizeof msg,
                 "malformed tool call: invalid JSON at byte %zu of the <tool_call> block%s; "
                 "write <tool_call>[{\"name\": \"TOOL\", \"arguments\": {...}}]</tool_call>",
                 off, closed ? "" : " (and </tool_call> is missing)");
        rc = push_error(c, NULL, msg);
    } else if (cJSON_IsArray(v)) {
        int k = cJSON_GetArraySize(v);
        if (k == 0) rc = push_error(c, NULL, "malformed tool call: the list of calls is empty");
        for (int i = 0; i < k && !rc; i++) rc = parse_one(c, cJSON_GetArrayItem(v, i));
    } else {
        rc = parse_one(c, v);
    }
    cJSON_Delete(v);
    free(json);
    return rc;
}

int agent_toolcalls_parse(agent_toolcalls *c, const char *text, util_err *err) {
    memset(c, 0, sizeof *c);
    int rc = UTIL_OK;
    for (const char *s = strstr(text, k_open); s && !rc; s = strstr(s, k_open)) {
        s += sizeof k_open - 1;
        const char *e = strstr(s, k_close);
        rc = parse_block(c, s, e ? (size_t)(e - s) : strlen(s), e != NULL);
        s = e ? e + sizeof k_close - 1 : s + strlen(s);
    }
    if (!rc && c->n > AGENT_MAX_CALLS_PER_REPLY) {
        for (size_t i = AGENT_MAX_CALLS_PER_REPLY; i < c->n; i++) {
            free(c->v[i].name);
            cJSON_Delete(c->v[i].args);
            free(c->v[i].error);
        }
        c->n = AGENT_MAX_CALLS_PER_REPLY;
        char msg[160];
        snprintf(msg, sizeof msg, "too many tool calls in one reply: only the first %d ran",
                 AGENT_MAX_CALLS_PER_REPLY);
        rc = push_error(c, NULL, msg);
    }
    if (rc) {
        agent_toolcalls_release(c);
        return util_err_set(err, UTIL_ENOMEM, "tool calls: out of memory");
    }
    return UTIL_OK;
}

void agent_toolcalls_release(agent_toolcalls *c) {
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].name);
        cJSON_Delete(c->v[i].args);
        free(c->v[i].error);
    }
    free(c->v);
    memset(c, 0, sizeof *c);
}

int agent_toolresult_format(util_buf *out, const char *name, int ok, const char *text) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return UTIL_ENOMEM;
    cJSON_AddStringToObject(o, "name", name ? name : "");
    cJSON_AddStringToObject(o, ok ? "result" : "error", text ? text : "");
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return UTIL_ENOMEM;
    int rc = util_buf_printf(out, "<tool_response>\n%s\n</tool_response>", s);
    free(s);
    return rc;
}
