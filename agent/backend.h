/* agent/backend.h: the seam between the turn loop and what writes replies.
 * Three backends fill the same struct: the embedded engine (prompt tokens in,
 * sampled tokens out), a replay of recorded replies over that engine (tests),
 * and an OpenAI-compatible HTTP endpoint (messages in, streamed text out).
 * Does not render prompts, check append-only or write sessions (loop.c). */
#ifndef AGENT_BACKEND_H
#define AGENT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/engine.h"
#include "../util/buf.h"
#include "../util/err.h"

/* One request. Token backends read toks, the HTTP backend reads msgs. */
typedef struct agent_gen_req {
    const int32_t *toks;
    int n_toks;
    const eng_chat_msg *msgs;
    size_t n_msgs;
    int max_tokens;
    const eng_sample_params *sp;
    int (*on_text)(void *user, const char *text, size_t len); /* nonzero: stop */
    int (*should_stop)(void *user);                           /* polled (Ctrl-C) */
    void (*on_note)(void *user, const char *kind, const char *text);
    void *user;
    const eng_spec_params *spec; /* token backends: speculative decoding (NULL: none) */
} agent_gen_req;

typedef struct agent_gen_res {
    eng_gen_stats st;
    int32_t *ids; /* token backends: the reply's ids (malloc'd; the caller frees) */
    int n_ids;
    int cached_reported; /* 0: the endpoint did not say how many prompt tokens were cached */
    int attempts;        /* HTTP: requests sent for this reply (1 + retries) */
    int streamed;        /* HTTP: the answer came as server-sent events */
} agent_gen_res;

typedef struct agent_backend agent_backend;
struct agent_backend {
    const char *name; /* "engine", "replay", "http": recorded in request events */
    int uses_tokens;  /* 1: generate reads req->toks; 0: req->msgs */
    char model[256];  /* HTTP: the model id sent (given, or the first of GET /v1/models) */
    /* Appends the reply to text and fills res (zeroed by the caller). A
     * canceled reply is UTIL_OK with st.stop_reason ENG_STOP_CANCELED. */
    int (*generate)(agent_backend *b, const agent_gen_req *req, util_buf *text, agent_gen_res *res,
                    util_err *err);
    void (*free)(agent_backend *b);
};

/* Frees any backend; NULL is a no-op. */
void agent_backend_free(agent_backend *b);

/* --- local backends (backend_local.c) ---------------------------------------- */

/* Samples from the engine into seq (borrowed; must outlive the backend). */
int agent_backend_engine_new(agent_backend **out, eng_seq *seq, util_err *err);
/* Replies from path (a JSON array of strings), one per request; the prompt is
 * prefilled into seq and the reply evaluated into it, so accounting is real.
 * m and seq are borrowed. */
int agent_backend_replay_new(agent_backend **out, eng_model *m, eng_seq *seq, const char *path,
                             util_err *err);

/* --- the HTTP backend (backend_http.c) ---------------------------------------- */

/* What a server may send for one request with max_tokens T (more is an
 * error, and the transfer stops there): reply text and tool calls together
 * T x AGENT_HTTP_BYTES_PER_TOKEN + AGENT_HTTP_REPLY_SLACK bytes (64 B a token
 * is generous: a token is 3-5 bytes of text, at most a few dozen); one SSE
 * line, one event or a whole JSON answer AGENT_HTTP_LINE_MIN + twice that;
 * all bytes received (SSE framing, comments, usage included) 16 times that,
 * at least AGENT_HTTP_BODY_MIN; one tool call's arguments
 * AGENT_HTTP_MAX_TOOL_ARGS. With the default --max-tokens 256: 80 KiB of reply, 1.2 MiB per
 * line, 16 MiB in all. */
#define AGENT_HTTP_BYTES_PER_TOKEN 64
#define AGENT_HTTP_REPLY_SLACK     (64 * 1024)
#define AGENT_HTTP_LINE_MIN        (1024 * 1024)
#define AGENT_HTTP_BODY_MIN        (16 * 1024 * 1024)
#define AGENT_HTTP_MAX_TOOL_ARGS   (1024 * 1024)
#define AGENT_HTTP_MAX_TOOL_NAME   256
#define AGENT_HTTP_DEFAULT_TOKENS  4096 /* the bound's T when a request sets no max_tokens */

typedef struct agent_http_opts {
    const char *url;          /* base URL, with or without /v1; NULL: no HTTP backend */
    const char *model;        /* NULL: the first id of GET {url}/v1/models */
    const char *api_key_env;  /* names the variable holding the key; NULL: no key sent */
    double connect_timeout_s; /* <= 0: 10 */
    double timeout_s;         /* one attempt, start to last byte; <= 0: 600 */
    int retries;              /* on 429, 5xx and connection errors; < 0: 4 */
    int no_stream;            /* ask for one JSON answer instead of SSE */
} agent_http_opts;

/* Checks the options, reads the key from the environment, and finds the
 * model id when none is given (one GET /v1/models, with the same retries).
 * Needs curl_global_init done by main(). */
int agent_backend_http_new(agent_backend **out, const agent_http_opts *o, util_err *err);

/* The messages as the HTTP backend sends them, as text without the closing
 * bracket: "[" then one JSON object per message joined by ",". Leading system
 * messages are merged into one (blank line between), role "tool" is sent as
 * "user". A request extends the previous one plus its reply exactly when this
 * text does (agent_http_render_reply appends the reply's object). */
int agent_http_render(util_buf *out, const eng_chat_msg *msgs, size_t n, util_err *err);
int agent_http_render_reply(util_buf *out, const char *reply, util_err *err);

#endif
