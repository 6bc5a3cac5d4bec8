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
    const char *workspace;   /* NULL: the current directory (or the resumed session's) */
    const char *data_dir;    /* holds prompts/ and skills/ (see util_data_dir_find) */
    const char *model_path;
    const char *replay_path; /* JSON array of recorded replies: used instead of sampling */
    agent_http_opts http;    /* http.url set: replies from that endpoint; no model file is opened */
    const char *resume;      /* with resume_set: a session id or prefix, "" = the latest */
    int resume_set;
    int no_session;          /* write no session file */
    int max_tokens;          /* per reply (default 256) */
    int max_rounds;          /* tool rounds per turn (default 8) */
    int n_ctx;               /* <= 0: the model's */
    int yes;                 /* run writes and shell commands without asking */
    eng_model_params mp;
    eng_sample_params sp;
    agent_confirm_fn confirm; /* NULL: no TTY */
    void *confirm_user;
    /* streamed reply text; return nonzero to stop the generation */
    int (*on_text)(void *user, const char *text, size_t len);
    /* notes for the user: tool calls, results, cache breaks, warnings */
    void (*on_note)(void *user, const char *kind, const char *text);
    void *user;
    int (*should_stop)(void *user); /* polled during generation (Ctrl-C) */
} agent_opts;

typedef struct agent_turn_result {
    char *reply;        /* the final reply text (malloc'd; free it) */
    int rounds;         /* requests made this turn */
    long prompt_tokens; /* summed over this turn's requests */
    long cached_tokens;
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
