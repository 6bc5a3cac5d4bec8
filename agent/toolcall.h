/* agent/toolcall.h: tool calls in the format the chat template uses
 * (SmolLM2/ChatML: <tool_call>[{"name": ..., "arguments": {...}}]</tool_call>;
 * Llama 3.x JSON and Mistral [TOOL_CALLS] by agent_toolcalls_parse_for),
 * parsed with cJSON; and the text of tool results fed back to the model.
 * A malformed call becomes an entry with an error, never a crash or a drop. */
#ifndef AGENT_TOOLCALL_H
#define AGENT_TOOLCALL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../engine/chat.h"
#include "../util/buf.h"
#include "../util/err.h"

#define AGENT_MAX_CALLS_PER_REPLY 8

typedef struct agent_toolcall {
    char *name;  /* NULL when malformed */
    cJSON *args; /* an object (owned); NULL when malformed */
    char *error; /* non-NULL: why the call cannot run (fed back to the model) */
} agent_toolcall;

typedef struct agent_toolcalls {
    agent_toolcall *v;
    size_t n, cap;
} agent_toolcalls;

/* Finds every <tool_call> block in text. Returns UTIL_OK with c->n == 0 when
 * there is none; only allocation failure is an error. */
int agent_toolcalls_parse(agent_toolcalls *c, const char *text, util_err *err);
/* The same for the native tool-call output of the model's family: Llama 3.x
 * JSON ({"name", "parameters"}, after <|python_tag|> or alone), Mistral's
 * [TOOL_CALLS] (a JSON list, or NAME[ARGS]{...}); <tool_call> for ChatML/Qwen
 * (Hermes), Phi-3, Gemma and DeepSeek (prompted), and as every family's
 * fallback when its own form is absent. */
int agent_toolcalls_parse_for(agent_toolcalls *c, const char *text, eng_chat_format f, util_err *err);
void agent_toolcalls_release(agent_toolcalls *c);

/* The content of a tool-result message: <tool_response>{"name","result"|"error"}
 * </tool_response>, or (wrapped 0: for a template that wraps results itself,
 * eng_chat_wraps_tool_results) the JSON object alone. Appends to out. */
int agent_toolresult_format(util_buf *out, const char *name, int ok, const char *text);
int agent_toolresult_format_as(util_buf *out, const char *name, int ok, const char *text, int wrapped);

/* v as Python's json.dumps writes it (", " and ": " separators, non-ASCII
 * kept, integral numbers below 1e16 without a fraction, others in the
 * shortest form that reads back): the JSON text the chat templates' tojson
 * prints, for eng_chat_render_ex. Appends to out. */
int agent_json_dumps(util_buf *out, const cJSON *v);

#endif
