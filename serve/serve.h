/* serve/serve.h: the OpenAI-compatible HTTP server as a library: one embedded
 * model behind POST /v1/chat/completions and /v1/completions, GET /v1/models,
 * /health and /metrics (Prometheus), every client sharing one warm prefix
 * cache. Start it, ask where it listens, stop it. No argv, no usage text, no
 * signal handling and no printing: the command line (cli/cmd_serve.c) does
 * those. */
#ifndef SERVE_SERVE_H
#define SERVE_SERVE_H

#include <stdint.h>

#include "../engine/engine.h"
#include "../util/err.h"

typedef struct serve_params {
    const char *model_path; /* the GGUF file (the caller found it) */
    const char *model_name; /* the id clients send and /v1/models lists; NULL:
                             * util_model_id, the file name without .gguf */
    int strict_model;       /* 1: a request naming another model gets 404
                             * model_not_found; 0: any name is taken (one model
                             * is served, as llama-server does) and the reply
                             * carries the served id */
    const char *host;       /* IPv4 or IPv6 address to bind */
    int port;               /* 0: a free one (serve_port says which) */
    const char *api_key;    /* NULL or "": no auth; else required as
                             * 'Authorization: Bearer KEY' on /v1/ routes */
    int parallel;           /* requests generating at once */
    int max_queue;          /* requests waiting beyond those before 503 */
    int max_tokens;         /* cap on a request's max_tokens, and its default */
    uint64_t max_body;      /* request body limit in bytes (413 beyond) */
    int prefill_chunk;      /* prompt tokens computed per scheduling round */
    int max_conns;          /* concurrent connections */
    int request_timeout;    /* seconds a client has to send a whole request
                             * (headers and body); <= 0: the default, 10 */
    int n_ctx;              /* context per request; <= 0: the model's */
    eng_model_params mp;    /* for eng_model_open (its strings must outlive the server) */
    eng_sample_params sp;   /* sampling defaults for requests that do not set them */
    eng_spec_params spec;   /* speculative decoding of every request (--spec; zeroed: none) */
} serve_params;

/* The defaults: 127.0.0.1:8080, 4 parallel, 64 queued, 512 max tokens, 1 MiB
 * bodies, 256-token prefill chunks, 64 connections, 10 s to send a request,
 * the engine's sampling defaults with a time-based seed. */
void serve_params_init(serve_params *p);

typedef struct serve_server serve_server;

/* Opens the model, starts the scheduler thread and the HTTP server (a thread
 * per connection). Every thread it starts inherits the caller's signal mask:
 * block SIGINT/SIGTERM first to take them with sigwait. A client that left
 * shows up as a failed write, so the process should ignore SIGPIPE. Strings
 * in p are copied. Errors: the model's (eng_model_open), UTIL_EINVAL for a
 * host that is not an address, UTIL_EIO when it cannot listen, UTIL_ENOMEM.
 * Free with serve_free. */
int serve_start(serve_server **out, const serve_params *p, util_err *err);

int serve_port(const serve_server *s);             /* the port it listens on */
const char *serve_model_id(const serve_server *s); /* the id of the model it serves */
int serve_n_ctx(const serve_server *s);            /* context length per request */
const char *serve_backend(const serve_server *s);  /* the engine backend's name */

/* Takes no new connections, lets running and queued requests finish for up
 * to grace_ms (then cancels the rest), lets their responses reach the
 * clients (bounded) and stops the HTTP server. Call once. */
void serve_stop(serve_server *s, int grace_ms);

/* Stops the server if serve_stop was not called (no grace), writes what the
 * disk tier still holds and frees everything. NULL is a no-op. */
void serve_free(serve_server *s);

#endif
