/* agent/loop.h: the agent's turn loop: renders the whole conversation each
 * request (the engine's prefix cache reuses what it has), checks that each
 * request extends the previous one plus its reply, runs tool calls, records
 * everything in the session file. Backends (backend.h): the embedded engine,
 * a replay of recorded outputs (tests) with the real tokenizer and engine
 * accounting behind it, or an OpenAI-compatible HTTP endpoint.
 * No terminal handling here (repl.c, cmd_agent.c). */
#ifndef AGENT_LOOP_H
#define AGENT_LOOP_H

#include <stdint.h>

#include "../engine/engine.h"
#include "backend.h"
#include "prompt.h"
#include "tools.h"

typedef struct agent agent;

typedef struct agent_opts {
    const char *workspace; /* NULL: the current directory (or the resumed session's) */
    const char *data_dir;  /* holds prompts/ and skills/ (see util_data_dir_find) */
    const char *model_path;
    const char *replay_path; /* JSON array of recorded replies: used instead of sampling */
    agent_http_opts http;    /* http.url set: replies from that endpoint; no model file is opened */
    const char *resume;      /* with resume_set: a session id or prefix, "" = the latest */
    int resume_set;
    int no_session; /* write no session file */
    int max_tokens; /* per reply (default 256) */
    int max_rounds; /* tool rounds per turn (default 8) */
    int n_ctx;      /* <= 0: the model's */
    int yes;        /* run writes and shell commands without asking */
    eng_model_params mp;
    eng_sample_params sp;
    eng_spec_params spec;     /* the embedded engine's speculative decoding (--spec) */
    agent_confirm_fn confirm; /* NULL: no TTY */
    void *confirm_user;
    /* streamed reply text, <tool_call> blocks left out (visible.h); return
     * nonzero to stop the generation. The session keeps the whole reply. */
    int (*on_text)(void *user, const char *text, size_t len);
    /* notes for the user, by kind: "tool" (a call that ran: "read_file
     * src/main.c (1.2 KB)", or why it failed), "limit" (a reply cut at
     * max_tokens or the context, a turn stopped at max_rounds), "no-tool"
     * (the task names a tool and none ran), "break", "warning", "resume",
     * "retry" */
    void (*on_note)(void *user, const char *kind, const char *text);
    /* the embedded engine's prefill: after each chunk of a request's prompt
     * that is computed in several (the uncached part), tokens done of total
     * and the milliseconds since the request started; NULL: not called */
    void (*on_progress)(void *user, int done, int total, double elapsed_ms);
    void *user;
    int (*should_stop)(void *user); /* polled during generation (Ctrl-C) */
} agent_opts;

typedef struct agent_turn_result {
    char *reply;        /* the final reply text, valid UTF-8 (malloc'd; free it) */
    int rounds;         /* requests made this turn */
    long prompt_tokens; /* summed over this turn's requests */
    long cached_tokens;
    int cached_reported; /* 0: a server did not say how many were cached (cached_tokens is 0 then) */
    long generated_tokens;
    double ttft_ms;              /* the turn's first request: time to its first token */
    int tool_calls;              /* tool calls run this turn (malformed and refused ones too) */
    eng_stop_reason stop_reason; /* why the final reply ended (ENG_STOP_MAX_TOKENS: cut) */
    int canceled;
} agent_turn_result;

/* Opens the model, builds the prompt, starts or resumes a session. */
int agent_open(agent **out, const agent_opts *o, util_err *err);
void agent_free(agent *a);

/* One user turn: requests, tool rounds, session events, fsync. */
int agent_turn(agent *a, const char *user_text, agent_turn_result *res, util_err *err);
void agent_turn_result_release(agent_turn_result *r);

/* Forgets the conversation (keeps system prompt and session context); the
 * next request records a cache break with cause "reset". */
int agent_reset(agent *a, util_err *err);

const char *agent_session_id(const agent *a);
const char *agent_session_path(const agent *a);
int agent_turns(const agent *a);
/* Totals of this process's requests. */
void agent_totals(const agent *a, long *prompt_tokens, long *cached_tokens);
const agent_prompt *agent_get_prompt(const agent *a);
const char *agent_get_tier2(const agent *a);
eng_model *agent_model(agent *a); /* NULL with the HTTP backend */
/* The model's id (util_model_id: its file name without .gguf), or the
 * model id sent to the HTTP endpoint. */
const char *agent_model_name(const agent *a);

#endif
