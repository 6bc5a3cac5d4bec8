/* agent/toolcall.c: finds <tool_call> blocks in a reply and parses their JSON
 * (a list of calls or one call; "arguments" an object or a JSON string) with
 * cJSON. Every problem becomes a per-call error message for the model.
 * Does not run tools (tools.c). */
#include "toolcall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

static const char k_open[] = "<tool_call>";
static const char k_close[] = "</tool_call>";

static int push(agent_toolcalls *c, agent_toolcall t) {
    if (util_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v)) return UTIL_ENOMEM;
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
        return push_error(c, NULL,
                          "malformed tool call: each call must be a JSON object "
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

/* how: the block's name and the form to write, for the error message */
static int parse_json(agent_toolcalls *c, const char *s, size_t n, int closed, const char *what,
                      const char *how) {
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
        snprintf(msg, sizeof msg, "malformed tool call: invalid JSON at byte %zu of the %s%s; write %s", off,
                 what, closed ? "" : " (and </tool_call> is missing)", how);
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

static const char k_hermes_how[] = "<tool_call>[{\"name\": \"TOOL\", \"arguments\": {...}}]</tool_call>";

static int parse_hermes(agent_toolcalls *c, const char *text) {
    int rc = UTIL_OK;
    for (const char *s = strstr(text, k_open); s && !rc; s = strstr(s, k_open)) {
        s += sizeof k_open - 1;
        const char *e = strstr(s, k_close);
        rc = parse_json(c, s, e ? (size_t)(e - s) : strlen(s), e != NULL, "<tool_call> block", k_hermes_how);
        s = e ? e + sizeof k_close - 1 : s + strlen(s);
    }
    return rc;
}

static const char *skip_space(const char *s) {
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
    return s;
}

/* Llama 3.1-3.3: the reply is the call, {"name": ..., "parameters": {...}}
 * (several separated by ';'), optionally after <|python_tag|>; code after
 * <|python_tag|> is a built-in tool call, which cachet has not. A reply that
 * does not start with a JSON object with a "name" is text (or <tool_call>). */
static int parse_llama3(agent_toolcalls *c, const char *text) {
    static const char tag[] = "<|python_tag|>";
    static const char how[] = "{\"name\": \"TOOL\", \"parameters\": {...}}";
    const char *s = skip_space(text);
    int tagged = strncmp(s, tag, sizeof tag - 1) == 0;
    if (tagged) s = skip_space(s + sizeof tag - 1);
    if (*s != '{') {
        if (tagged)
            return push_error(c, NULL,
                              "malformed tool call: built-in tools (code after <|python_tag|>) are not "
                              "available; call a tool as {\"name\": \"TOOL\", \"parameters\": {...}}");
        return parse_hermes(c, text);
    }
    cJSON *first = cJSON_ParseWithOpts(s, NULL, 0);
    int is_call = cJSON_IsObject(first) && cJSON_GetObjectItemCaseSensitive(first, "name");
    cJSON_Delete(first);
    if (!tagged && !is_call && !strstr(s, "\"name\"")) return parse_hermes(c, text); /* JSON text, no call */
    int rc = UTIL_OK;
    while (*s && !rc) {
        const char *end = NULL;
        cJSON *v = cJSON_ParseWithOpts(s, &end, 0);
        if (!v) return parse_json(c, s, strlen(s), 1, "call", how);
        rc = parse_one(c, v);
        cJSON_Delete(v);
        s = skip_space(end);
        if (*s != ';') break;
        s = skip_space(s + 1);
    }
    return rc;
}

/* Mistral: [TOOL_CALLS] then a JSON list of {"name", "arguments", "id"}
 * (v3: "[TOOL_CALLS] [", tekken "[TOOL_CALLS]["), or the newer
 * [TOOL_CALLS]NAME[ARGS]{...}; each [TOOL_CALLS] is read. */
static int parse_mistral(agent_toolcalls *c, const char *text) {
    static const char tag[] = "[TOOL_CALLS]", args[] = "[ARGS]";
    static const char how[] = "[TOOL_CALLS][{\"name\": \"TOOL\", \"arguments\": {...}}]";
    const char *s = strstr(text, tag);
    if (!s) return parse_hermes(c, text);
    int rc = UTIL_OK;
    for (; s && !rc; s = strstr(s, tag)) {
        s = skip_space(s + sizeof tag - 1);
        if (*s == '[' || *s == '{') {
            rc = parse_json(c, s, strlen(s), 1, "[TOOL_CALLS] list", how);
            continue;
        }
        const char *a = strstr(s, args);
        const char *next = strstr(s, tag);
        if (!a || (next && next < a) || a == s) {
            rc = push_error(c, NULL,
                            "malformed tool call: [TOOL_CALLS] must be followed by a JSON list "
                            "or NAME[ARGS]{...}");
            continue;
        }
        char name[128];
        size_t nl = (size_t)(a - s);
        if (nl >= sizeof name) nl = sizeof name - 1;
        memcpy(name, s, nl);
        name[nl] = '\0';
        const char *end = NULL;
        cJSON *v = cJSON_ParseWithOpts(a + sizeof args - 1, &end, 0);
        cJSON *o = cJSON_CreateObject();
        if (!o) {
            cJSON_Delete(v);
            return UTIL_ENOMEM;
        }
        cJSON_AddStringToObject(o, "name", name);
        if (v) cJSON_AddItemToObject(o, "arguments", v);
        rc = v ? parse_one(c, o)
               : push_error(
                     c, name,
                     "malformed tool call: invalid JSON after [ARGS]; write [TOOL_CALLS]NAME[ARGS]{...}");
        cJSON_Delete(o);
        s = v && end ? end : a + sizeof args - 1;
    }
    return rc;
}

int agent_toolcalls_parse(agent_toolcalls *c, const char *text, util_err *err) {
    return agent_toolcalls_parse_for(c, text, ENG_CHAT_CHATML, err);
}

int agent_toolcalls_parse_for(agent_toolcalls *c, const char *text, eng_chat_format f, util_err *err) {
    memset(c, 0, sizeof *c);
    int rc;
    if (f == ENG_CHAT_LLAMA3 || f == ENG_CHAT_LLAMA31)
        rc = parse_llama3(c, text);
    else if (f >= ENG_CHAT_MISTRAL_V0 && f <= ENG_CHAT_MISTRAL_TEKKEN)
        rc = parse_mistral(c, text);
    else
        rc = parse_hermes(c, text);
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
    return agent_toolresult_format_as(out, name, ok, text, 1);
}

int agent_toolresult_format_as(util_buf *out, const char *name, int ok, const char *text, int wrapped) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return UTIL_ENOMEM;
    cJSON_AddStringToObject(o, "name", name ? name : "");
    cJSON_AddStringToObject(o, ok ? "result" : "error", text ? text : "");
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return UTIL_ENOMEM;
    int rc = wrapped ? util_buf_printf(out, "<tool_response>\n%s\n</tool_response>", s)
                     : util_buf_puts(out, s);
    free(s);
    return rc;
}

static int dumps_string(util_buf *out, const char *s) {
    int rc = util_buf_append(out, "\"", 1);
    for (; s && *s && !rc; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        const char *e = ch == '"'    ? "\\\""
                        : ch == '\\' ? "\\\\"
                        : ch == '\n' ? "\\n"
                        : ch == '\r' ? "\\r"
                        : ch == '\t' ? "\\t"
                        : ch == '\b' ? "\\b"
                        : ch == '\f' ? "\\f"
                                     : NULL;
        if (!e && ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            e = esc;
        }
        rc = e ? util_buf_puts(out, e) : util_buf_append(out, s, 1);
    }
    return rc ? rc : util_buf_append(out, "\"", 1);
}

/* Python's repr of a float: the shortest digits that read back. */
static int dumps_number(util_buf *out, double d) {
    if (d > -1e16 && d < 1e16 && d == (double)(long long)d) return util_buf_printf(out, "%lld", (long long)d);
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    return util_buf_puts(out, buf);
}

int agent_json_dumps(util_buf *out, const cJSON *v) {
    if (!v || cJSON_IsNull(v)) return util_buf_puts(out, "null");
    if (cJSON_IsTrue(v)) return util_buf_puts(out, "true");
    if (cJSON_IsFalse(v)) return util_buf_puts(out, "false");
    if (cJSON_IsNumber(v)) return dumps_number(out, v->valuedouble);
    if (cJSON_IsString(v)) return dumps_string(out, v->valuestring);
    int obj = cJSON_IsObject(v), rc = util_buf_puts(out, obj ? "{" : "[");
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, v) {
        if (!rc && k++) rc = util_buf_puts(out, ", ");
        if (!rc && obj) rc = dumps_string(out, it->string);
        if (!rc && obj) rc = util_buf_puts(out, ": ");
        if (!rc) rc = agent_json_dumps(out, it);
    }
    return rc ? rc : util_buf_puts(out, obj ? "}" : "]");
}
