/* serve/serve_impl.h: private types shared by the `cachet serve` files:
 * serve.c (HTTP routes, start and stop), serve_json.c (request parsing and
 * response bodies), serve_sched.c (the one thread that calls the engine) and
 * serve_metrics.c (counters, Prometheus text), serve_watch.c (the read
 * deadline). Not a public API. */
#ifndef AGENT_SERVE_IMPL_H
#define AGENT_SERVE_IMPL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../engine/engine.h"
#include "../util/buf.h"
#include "../util/err.h"

/* --- requests (serve_json.c) ---------------------------------------------- */

enum { SERVE_MAX_STOP = 4, SERVE_MAX_STOP_LEN = 64 };

typedef enum serve_kind { SERVE_CHAT = 0, SERVE_COMPLETION = 1 } serve_kind;

/* A parsed, validated request body. Strings are owned by the request. */
typedef struct serve_request {
    serve_kind kind;
    char *model;        /* NULL: not given */
    eng_chat_msg *msgs; /* chat: roles and contents (owned) */
    size_t n_msgs;
    char *prompt;   /* completion: the prompt text */
    int max_tokens; /* 0: not given */
    int stream, include_usage;
    eng_sample_params sp;
    char *stop[SERVE_MAX_STOP];
    int n_stop;
} serve_request;

/* An HTTP-level failure: status, OpenAI error type and code, message. */
typedef struct serve_error {
    int status;
    const char *type; /* "invalid_request_error", "authentication_error", ... */
    const char *code; /* NULL or "model_not_found", "context_length_exceeded", ... */
    const char *param;
    char msg[512];
} serve_error;

void serve_error_set(serve_error *e, int status, const char *type, const char *code, const char *param,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The body {"error":{"message","type","param","code"}}; caller frees. */
char *serve_error_json(const serve_error *e);

/* Parses body (len bytes) as a request of the given kind. On failure fills e
 * (400, or 500 when out of memory) and returns UTIL_EFORMAT (not JSON),
 * UTIL_EINVAL (a field is wrong) or UTIL_ENOMEM. defaults: sampling defaults
 * of the server. */
int serve_request_parse(serve_request *r, serve_kind kind, const char *body, size_t len,
                        const eng_sample_params *defaults, serve_error *e);
void serve_request_release(serve_request *r);

/* --- jobs and the scheduler (serve_sched.c) ------------------------------- */

typedef enum serve_finish {
    SERVE_RUNNING = 0,
    SERVE_FINISH_STOP,    /* end-of-generation token or a stop string */
    SERVE_FINISH_LENGTH,  /* max_tokens or the context is full */
    SERVE_FINISH_ERROR,   /* err is set */
    SERVE_FINISH_CANCELED /* the client went away */
} serve_finish;

/* One request in flight. The HTTP thread fills the inputs, submits, then
 * reads the outputs under the scheduler's lock; the job is freed when both
 * sides have let go (serve_job_release). */
typedef struct serve_job {
    /* inputs: fixed once submitted */
    int32_t *prompt;
    int n_prompt;
    int max_tokens;
    eng_sample_params sp;
    char *stop[SERVE_MAX_STOP];
    int n_stop, max_stop_len;
    double t_submit;
    double t_admit; /* when it got a sequence (0: still queued); the scheduler's */
    /* outputs: read and written under the scheduler lock */
    util_buf text;     /* generated text so far (stop strings cut off) */
    size_t text_ready; /* bytes of text safe to send (no partial stop, no half char) */
    int completion_tokens, cached_tokens, cached_disk;
    double t_first; /* time of the first generated token (0: none yet) */
    serve_finish finish;
    serve_error err; /* when finish == SERVE_FINISH_ERROR */
    int cancel;      /* set by the HTTP side: stop at the next step */
    int refs;
    pthread_cond_t cond;    /* signalled on every change of the outputs */
    struct serve_job *next; /* queue link */
    int passed_over;        /* times a later request was admitted first */
    /* the scheduler's rounds this request was stepped in, and the requests
     * stepped in them together (itself included): the log's batching figure */
    int passes;
    long pass_seqs;
} serve_job;

typedef struct serve_sched serve_sched;
typedef struct serve_metrics serve_metrics;

typedef struct serve_sched_params {
    int parallel;         /* sequences (requests decoding at once) */
    int n_ctx;            /* per sequence; <= 0: the model's */
    int prefill_chunk;    /* prompt tokens per scheduling step */
    int max_queue;        /* waiting requests beyond which submit fails (503) */
    int max_passed_over;  /* starvation bound of the longest-prefix-first order */
    eng_spec_params spec; /* speculative decoding of every generation (--spec) */
} serve_sched_params;

/* Starts the scheduler thread; it owns every engine call on m from now on. */
int serve_sched_new(serve_sched **out, eng_model *m, const serve_sched_params *p, serve_metrics *metrics,
                    util_err *err);
/* Refuses new jobs, finishes what is running and queued (up to grace_ms,
 * then cancels the rest) and stops the thread. Jobs stay releasable. */
void serve_sched_stop(serve_sched *s, int grace_ms);
/* Frees the sequences and the scheduler (after serve_sched_stop and after
 * every job reference is released). NULL is a no-op. */
void serve_sched_free(serve_sched *s);
int serve_sched_n_ctx(const serve_sched *s);

/* A new job holding one reference for the caller; takes ownership of prompt. */
serve_job *serve_job_new(int32_t *prompt, int n_prompt);
/* Queues the job (the scheduler takes its own reference). -1 with e set
 * (503) when the queue is full or the server is stopping. */
int serve_sched_submit(serve_sched *s, serve_job *j, serve_error *e);
/* Drops one reference (under the scheduler lock); frees at zero. */
void serve_job_release(serve_sched *s, serve_job *j);
/* The lock guarding every job's outputs; waiters use j->cond with it. */
pthread_mutex_t *serve_sched_lock(serve_sched *s);

/* --- metrics (serve_metrics.c) -------------------------------------------- */

serve_metrics *serve_metrics_new(void);
void serve_metrics_free(serve_metrics *m);
/* One finished HTTP request (any route) with its status. */
void serve_metrics_request(serve_metrics *m, int status);
/* One finished generation: token counts and latencies (seconds; ttft < 0: none). */
void serve_metrics_generation(serve_metrics *m, int prompt_tokens, int cached_tokens, int cached_disk,
                              int completion_tokens, double ttft_s, double total_s, int canceled);
/* Speculative decoding of a finished generation (its eng_gen_stats). */
void serve_metrics_spec(serve_metrics *m, const eng_gen_stats *st);
/* Where a finished generation's time went (seconds): queued, matching its
 * prompt against the prefix cache, prefilling, decoding. */
void serve_metrics_phases(serve_metrics *m, double queue_s, double match_s, double prefill_s,
                          double decode_s);
/* One round of the scheduler: a batched forward pass stepping n_seqs requests. */
void serve_metrics_pass(serve_metrics *m, int n_seqs);
/* Scheduler state, published by the scheduler thread after each step. */
void serve_metrics_sched(serve_metrics *m, int running, int waiting, const eng_cache_stats *cs);
/* Appends the Prometheus text exposition to out. */
int serve_metrics_render(serve_metrics *m, util_buf *out);

/* --- responses (serve_json.c) --------------------------------------------- */

/* Fields every response object carries. */
typedef struct serve_resp_info {
    serve_kind kind;
    const char *id; /* "chatcmpl-7" */
    const char *model;
    long created;
} serve_resp_info;

/* The non-streaming body of a finished job; caller frees. */
char *serve_json_final(const serve_resp_info *ri, const serve_job *j, int prompt_tokens);
/* One SSE event "data: {...}\n\n" appended to out: a text delta (first: with
 * the assistant role), or the closing chunk with finish_reason, or the usage
 * chunk. */
int serve_sse_delta(util_buf *out, const serve_resp_info *ri, const char *text, size_t len, int first);
int serve_sse_finish(util_buf *out, const serve_resp_info *ri, serve_finish f);
int serve_sse_usage(util_buf *out, const serve_resp_info *ri, const serve_job *j, int prompt_tokens);
const char *serve_finish_name(serve_finish f);
/* --- the read deadline (serve_watch.c) ---------------------------------------- */

typedef struct serve_watch serve_watch;

/* Starts the watchdog: a connection still sending a request's headers or body
 * `timeout_s` seconds after it connected (or got its previous answer) has its
 * socket shut down. UTIL_ENOMEM when it cannot start. Free after the daemon
 * stopped (serve_watch_free joins the thread). */
int serve_watch_new(serve_watch **out, double timeout_s);
void serve_watch_free(serve_watch *w);
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the watch): tracks each TCP
 * connection from its start to its close. */
void serve_watch_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
/* The connection's request arrived whole (reading 0: no deadline while it is
 * answered) or was answered (1: the next one's deadline starts now). */
void serve_watch_reading(struct MHD_Connection *connection, int reading);

/* Monotonic seconds: util_now_s, kept for serve_sched.c until it calls that. */
double serve_now(void);

#endif
