/* engine/chat.h: chat templates implemented per family (ChatML/Qwen, Gemma,
 * Llama 3, Mistral, Phi-3, DeepSeek R1), chosen from the model's
 * tokenizer.chat_template or by name (--chat-template).
 * Renders messages to text, and to token ids in which only the template's own
 * markers are special tokens (eng_chat_tokenize): special-token text inside a
 * message is plain text, so a message cannot open or close a turn.
 * Tool definitions, assistant tool calls and tool results are rendered as
 * each family's template renders them (eng_chat_render_ex), from JSON text
 * the caller writes as Python's json.dumps does (the templates' tojson).
 * Not a Jinja interpreter: an unknown template falls back to ChatML and says so. */
#ifndef ENG_CHAT_H
#define ENG_CHAT_H

#include <stddef.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "gguf.h"
#include "tokenizer.h"

typedef enum eng_chat_format {
    ENG_CHAT_CHATML = 0,
    ENG_CHAT_GEMMA = 1,
    ENG_CHAT_LLAMA3 = 2,         /* Llama 3: headers, trimmed contents */
    ENG_CHAT_LLAMA31 = 3,        /* Llama 3.1-3.3: and a system header with a fixed "Today Date" */
    ENG_CHAT_MISTRAL_V0 = 4,     /* Mistral 7B v0.1: [INST] ... [/INST], no system role */
    ENG_CHAT_MISTRAL_V1 = 5,     /* Mistral 7B v0.2: " [INST] ", system before the first user turn */
    ENG_CHAT_MISTRAL_V3 = 6,     /* Mistral v3: "[INST] ", system before the last user turn */
    ENG_CHAT_MISTRAL_TEKKEN = 7, /* Mistral v3-tekken (Nemo): "[INST]" without spaces */
    ENG_CHAT_PHI3 = 8,           /* Phi-3.5: <|user|>, <|end|>, a non-empty system turn */
    ENG_CHAT_PHI3_MINI = 9,      /* Phi-3 mini/medium 4k: user turns open the assistant's; no system */
    ENG_CHAT_PHI3_SMALL = 10,    /* Phi-3 small: every role printed, EOS without the generation prompt */
    ENG_CHAT_PHI3_VISION = 11,   /* Phi-3 vision: every role printed, no EOS */
    ENG_CHAT_DEEPSEEK_R1 = 12    /* DeepSeek R1 distills: <｜User｜>, <｜Assistant｜> */
} eng_chat_format;

/* Llama 3.1's template prints "Today Date: D" in its system header; cachet
 * prints this fixed date (the template's own default) so that a prompt, and
 * the prefix cache keyed on it, does not change from one day to the next. */
#define ENG_CHAT_FIXED_DATE "26 Jul 2024"

typedef struct eng_chat_msg {
    const char *role;    /* "system", "user", "assistant", "tool" */
    const char *content; /* NUL-terminated */
} eng_chat_msg;

/* One tool call of an assistant turn. */
typedef struct eng_chat_call {
    const char *id;        /* NULL: none (Mistral needs 9 characters) */
    const char *name;      /* the function's name */
    const char *arguments; /* its arguments as JSON text in json.dumps form ({"path": "a.c"}); a
                            * JSON string ("{\"path\": ...}") when the caller holds them as text */
} eng_chat_call;

/* What a message adds to role and content (eng_chat_extra.msg). */
typedef struct eng_chat_msg_tools {
    const eng_chat_call *calls; /* an assistant turn's tool calls; its content may then be NULL
                                 * (JSON null: templates tell null from "") */
    size_t n_calls;
    const char *call_id; /* a tool result: the id of the call it answers (Mistral prints it) */
} eng_chat_msg_tools;

/* Tool definitions and per-message tool data for eng_chat_render_ex. */
typedef struct eng_chat_extra {
    const char *const *tools; /* n_tools definitions, each JSON text in json.dumps form:
                               * {"type": "function", "function": {"name": ..., ...}} */
    size_t n_tools;
    const eng_chat_msg_tools *msg; /* NULL, or one entry per message */
    int tools_in_system;           /* Llama 3.1: the definitions in the system header (its
                                    * tools_in_user_message = false), not the first user turn */
} eng_chat_extra;

typedef struct eng_chat eng_chat;

/* Reads tokenizer.chat_template (if any) and picks the family. A template's
 * default system text (SmolLM2 adds one when the first message is not a
 * system message) is taken from the template itself. Caller frees. */
int eng_chat_new(eng_chat **out, const eng_gguf *g, util_err *err);
void eng_chat_free(eng_chat *c);
eng_chat_format eng_chat_get_format(const eng_chat *c);
const char *eng_chat_format_name(eng_chat_format f);
/* The format called name ("chatml", "llama3.1", ...; see
 * eng_chat_format_name), or UTIL_EINVAL with the known names listed. */
int eng_chat_format_parse(const char *name, eng_chat_format *f, util_err *err);
/* A renderer for format f without a template (--chat-template NAME, tests):
 * bos and eos are the texts of the model's BOS and EOS tokens (NULL: none).
 * ChatML gets no default system text. Caller frees. */
/* eng_chat_new, but with name (not NULL) the family is that one (the
 * model's BOS and EOS texts, no warning); ChatML keeps the template's default
 * system block when the template is ChatML. UTIL_EINVAL for an unknown name. */
int eng_chat_new_named(eng_chat **out, const eng_gguf *g, const char *name, util_err *err);
int eng_chat_new_format(eng_chat **out, eng_chat_format f, const char *bos, const char *eos, util_err *err);
/* NULL, or a note that the model has no template or an unknown one (ChatML is
 * then used without a default system text). Owned by c. */
const char *eng_chat_warning(const eng_chat *c);
/* The block the template prints when the first message is not a system
 * message (SmolLM2: "<|im_start|>system\n...<|im_end|>\n"), read out of the
 * template; NULL if none. Owned by c. */
const char *eng_chat_default_system(const eng_chat *c, size_t *len);

/* Appends the rendered conversation to out; with add_generation_prompt the
 * text ends where the assistant's reply begins. Fails with UTIL_EINVAL on a
 * role order the template rejects (Gemma: user/assistant must alternate). */
int eng_chat_render(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                    util_buf *out, util_err *err);

/* eng_chat_render, and the byte ranges of out that came from the messages
 * (roles and contents, not the template's markers) into *plain (malloc'd,
 * caller frees; offsets in out->data, in order), *nplain their count. */
int eng_chat_render_spans(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                          util_buf *out, eng_tok_span **plain, size_t *nplain, util_err *err);

/* eng_chat_render_spans with tools (x may be NULL: none) where the family's
 * template has them: Qwen 2.5/3 (a <tools> block in the system turn,
 * <tool_call> blocks), Llama 3.1 (definitions indented in the first user
 * turn or the system header; one {"name", "parameters"} call per turn),
 * Mistral v3/tekken ([AVAILABLE_TOOLS] before the last user turn,
 * [TOOL_CALLS], [TOOL_RESULTS] with the call's id), DeepSeek R1 (tool-call
 * and tool-output markers). Other families print what their templates do
 * (definitions and calls ignored). plain may be NULL (no spans). Fails with
 * UTIL_EINVAL where jinja2 raises (Llama 3.1 with two calls in one turn,
 * Mistral ids not 9 long, a null content the template cannot print). */
int eng_chat_render_ex(const eng_chat *c, const eng_chat_msg *msgs, size_t n, const eng_chat_extra *x,
                       int add_generation_prompt, util_buf *out, eng_tok_span **plain, size_t *nplain,
                       util_err *err);

/* Whether the template wraps each tool result itself (Qwen 2.5/3's
 * <tool_response> blocks): a caller must then send the bare result. */
int eng_chat_wraps_tool_results(const eng_chat *c);

/* The conversation's token ids: rendered, then encoded with the template's
 * markers (and the text it adds itself: Gemma's BOS, SmolLM2's default system
 * block) as special tokens and every role and message content with special
 * parsing off (eng_tokenize_spans). For messages without special-token text
 * the ids equal eng_tokenize(render, 0, parse_special = 1). text, when not
 * NULL, receives the rendered text (appended). *ids is malloc'd (caller frees). */
int eng_chat_tokenize(const eng_chat *c, const eng_tokenizer *t, const eng_chat_msg *msgs, size_t n,
                      int add_generation_prompt, util_buf *text, int32_t **ids, size_t *nids, util_err *err);

#endif
