/* serve/serve.c: `cachet serve`: an OpenAI-compatible HTTP server on
 * libmicrohttpd (a thread per connection) in front of one embedded model.
 * Handlers parse, authorize and tokenize, then hand the job to the scheduler
 * (serve_sched.c) and wait; streaming answers are SSE written from a content
 * callback. No engine call runs here except the (read-only) tokenizer and
 * chat template. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <microhttpd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/parse.h"
#include "../util/time.h"
#include "../cli/cli.h"
#include "serve_impl.h"

static const char serve_usage[] =
    "usage: cachet serve [--model PATH] [--host ADDR] [--port N] [--api-key-env VAR]\n"
    "                    [--parallel N] [options]\n"
    "\n"
    "Serves the model over an OpenAI-compatible HTTP API: POST /v1/chat/completions,\n"
    "POST /v1/completions, GET /v1/models, GET /health, GET /metrics (Prometheus).\n"
    "Every client shares one warm prefix cache.\n"
    "\n"
    "  --model PATH         GGUF model (default: $CACHET_MODEL, else models/SmolLM2-135M-Instruct.Q4_1.gguf)\n"
    "  --model-name NAME    the model id clients send (default: the file name without .gguf)\n"
    "  --host ADDR          address to bind, IPv4 or IPv6 (default 127.0.0.1)\n"
    "  --port N             port (default 8080; 0 picks a free one, printed at start)\n"
    "  --api-key-env VAR    require 'Authorization: Bearer $VAR' on /v1/ routes\n"
    "  --parallel N         requests generating at once (default 4)\n"
    "  --max-queue N        requests waiting beyond those before 503 (default 64)\n"
    "  --max-tokens N       cap on max_tokens; also the default (default 512)\n"
    "  --max-body SIZE      request body limit; larger is refused (413) (default 1MiB)\n"
    "  --prefill-chunk N    prompt tokens computed per scheduling round (default 256)\n"
    "  --max-connections N  concurrent connections (default 64)\n"
    "  --shutdown-grace MS  on SIGINT/SIGTERM, let requests finish for MS (default 5000)\n"
    "  --temp T, --top-k K, --top-p P, --min-p P, --seed S\n"
    "                       sampling defaults for requests that do not set them\n"
    "  --threads N          worker threads (default: all cores)\n"
    "  --device D           compute on D: auto (a GPU when this build has CUDA and one is present),\n"
    "                       cpu, cuda, cuda:N (default auto; $CACHET_DEVICE sets it when absent)\n"
    "  --ctx-size N         context length per request (default: the model's)\n"
    "  --kv-budget SIZE     KV-cache memory (default 1GiB)\n"
    "  --no-cache           do not reuse cached prefixes\n"
    "  --no-disk-cache      keep the prefix cache in memory only\n"
    "  --kv-dir DIR         disk tier directory (default $XDG_CACHE_HOME/cachet/kv)\n"
    "  --kv-disk-budget SIZE  disk tier size limit (default 2GiB)\n";

typedef struct serve_opts {
    const char *model, *model_name, *host, *api_key_env;
    int port, parallel, max_queue, max_tokens, prefill_chunk, max_conns, grace_ms, threads, ctx;
    uint64_t max_body;
    eng_model_params mp;
    eng_sample_params sp;
} serve_opts;

/* The server's state, shared read-only by every connection thread. */
typedef struct serve_ctx {
    const serve_opts *o;
    eng_model *m;
    serve_sched *sched;
    serve_metrics *metrics;
    const char *api_key; /* NULL: no auth */
    char model_id[256];
    long started;
    pthread_mutex_t id_mu; /* guards next_id and live_jobs */
    unsigned long next_id;
    int live_jobs;         /* requests holding a job, until their response is done */
} serve_ctx;

/* --- options -------------------------------------------------------------- */

enum { O_MODEL = 256, O_NAME, O_HOST, O_PORT, O_KEY, O_PAR, O_QUEUE, O_MAXTOK, O_BODY, O_CHUNK,
       O_CONNS, O_GRACE, O_TEMP, O_TOPK, O_TOPP, O_MINP, O_SEED, O_THREADS, O_CTX, O_KVB, O_NOC,
       O_NOD, O_KVDIR, O_KVDB, O_DEVICE, O_HELP };

static int parse_size_opt(const char *opt, const char *arg, uint64_t *out) {
    util_err err;
    if (util_parse_size(arg, out, NULL, &err) || *out == 0) {
        fprintf(stderr, "cachet serve: option '%s': %s\n", opt, *out == 0 ? "size must be positive" : err.msg);
        return -1;
    }
    return 0;
}

/* One option with an argument; returns 0, or 2 on a bad value. */
static int parse_one(serve_opts *o, int c, const char *a) {
    long l;
    double d;
    uint64_t v = 1;
    switch (c) {
    case O_MODEL: o->model = a; return 0;
    case O_NAME: o->model_name = a; return 0;
    case O_HOST: o->host = a; return 0;
    case O_KEY: o->api_key_env = a; return 0;
    case O_KVDIR: o->mp.kv_dir = a; return 0;
    case O_DEVICE: return agent_parse_device(&o->mp.device, a) ? 2 : 0;
    case O_PORT: return agent_parse_int("--port", a, 0, 65535, &l) ? 2 : (o->port = (int)l, 0);
    case O_PAR: return agent_parse_int("--parallel", a, 1, 64, &l) ? 2 : (o->parallel = (int)l, 0);
    case O_QUEUE: return agent_parse_int("--max-queue", a, 0, 100000, &l) ? 2 : (o->max_queue = (int)l, 0);
    case O_MAXTOK: return agent_parse_int("--max-tokens", a, 1, 1 << 24, &l) ? 2 : (o->max_tokens = (int)l, 0);
    case O_CHUNK: return agent_parse_int("--prefill-chunk", a, 1, 1 << 20, &l) ? 2 : (o->prefill_chunk = (int)l, 0);
    case O_CONNS: return agent_parse_int("--max-connections", a, 1, 10000, &l) ? 2 : (o->max_conns = (int)l, 0);
    case O_GRACE: return agent_parse_int("--shutdown-grace", a, 0, 3600000, &l) ? 2 : (o->grace_ms = (int)l, 0);
    case O_THREADS: return agent_parse_int("--threads", a, 1, 256, &l) ? 2 : (o->threads = (int)l, 0);
    case O_CTX: return agent_parse_int("--ctx-size", a, 1, 1 << 24, &l) ? 2 : (o->ctx = (int)l, 0);
    case O_TOPK: return agent_parse_int("--top-k", a, 0, INT_MAX, &l) ? 2 : (o->sp.top_k = (int)l, 0);
    case O_SEED: return agent_parse_int("--seed", a, 0, LONG_MAX, &l) ? 2 : (o->sp.seed = (uint64_t)l, 0);
    case O_TEMP: return agent_parse_float("--temp", a, 0, 100, &d) ? 2 : (o->sp.temp = (float)d, 0);
    case O_TOPP: return agent_parse_float("--top-p", a, 0, 1, &d) ? 2 : (o->sp.top_p = (float)d, 0);
    case O_MINP: return agent_parse_float("--min-p", a, 0, 1, &d) ? 2 : (o->sp.min_p = (float)d, 0);
    case O_BODY: return parse_size_opt("--max-body", a, &v) ? 2 : (o->max_body = v, 0);
    case O_KVB: return parse_size_opt("--kv-budget", a, &v) ? 2 : (o->mp.kv_budget = v, 0);
    case O_KVDB: return parse_size_opt("--kv-disk-budget", a, &v) ? 2 : (o->mp.kv_disk_budget = v, 0);
    default: return 2;
    }
}

/* Returns -1 to go on, else the exit status. */
static int parse_opts(serve_opts *o, int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, O_MODEL}, {"model-name", required_argument, 0, O_NAME},
        {"host", required_argument, 0, O_HOST}, {"port", required_argument, 0, O_PORT},
        {"api-key-env", required_argument, 0, O_KEY}, {"parallel", required_argument, 0, O_PAR},
        {"max-queue", required_argument, 0, O_QUEUE}, {"max-tokens", required_argument, 0, O_MAXTOK},
        {"max-body", required_argument, 0, O_BODY}, {"prefill-chunk", required_argument, 0, O_CHUNK},
        {"max-connections", required_argument, 0, O_CONNS}, {"shutdown-grace", required_argument, 0, O_GRACE},
        {"temp", required_argument, 0, O_TEMP}, {"top-k", required_argument, 0, O_TOPK},
        {"top-p", required_argument, 0, O_TOPP}, {"min-p", required_argument, 0, O_MINP},
        {"seed", required_argument, 0, O_SEED}, {"threads", required_argument, 0, O_THREADS},
        {"ctx-size", required_argument, 0, O_CTX}, {"kv-budget", required_argument, 0, O_KVB},
        {"no-cache", no_argument, 0, O_NOC}, {"no-disk-cache", no_argument, 0, O_NOD},
        {"kv-dir", required_argument, 0, O_KVDIR}, {"kv-disk-budget", required_argument, 0, O_KVDB},
        {"device", required_argument, 0, O_DEVICE}, {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == O_HELP) {
            fputs(serve_usage, stdout);
            return 0;
        }
        if (c == O_NOC) o->mp.no_cache = 1;
        else if (c == O_NOD) o->mp.no_disk_cache = 1;
        else if (c == '?' || c == ':') {
            fprintf(stderr, "cachet serve: unknown or incomplete option '%s'\n%s", argv[optind - 1], serve_usage);
            return 2;
        } else if (parse_one(o, c, optarg)) {
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet serve: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!o->mp.device && agent_parse_device(&o->mp.device, NULL)) return 2;
    return -1;
}

/* --- responses ------------------------------------------------------------ */

/* Per-request state, from the first callback to the completed notification. */
typedef struct conn {
    serve_ctx *srv;
    struct MHD_Connection *c;
    int route, status, too_big, include_usage;
    util_buf body;
    serve_job *job;
    serve_resp_info ri;
    char id[48];
    size_t sent;      /* bytes of the job's text already in an event */
    util_buf out;     /* SSE bytes not yet handed to MHD */
    size_t out_off;
    int done;         /* the last event is in out */
    double last_write;
} conn;

enum { R_NONE = 0, R_CHAT, R_COMPLETIONS, R_MODELS, R_HEALTH, R_METRICS };

static enum MHD_Result send_body(conn *k, int status, const char *type, char *body, int owned) {
    const char *b = body ? body : "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}";
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(b), (void *)b,
                                                             body && owned ? MHD_RESPMEM_MUST_FREE
                                                                           : MHD_RESPMEM_MUST_COPY);
    if (!r) {
        if (owned) free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == 401) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    k->status = status;
    enum MHD_Result ret = MHD_queue_response(k->c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_json(conn *k, int status, cJSON *o) {
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return send_body(k, status, "application/json", s, 1);
}

static enum MHD_Result send_error(conn *k, const serve_error *e) {
    return send_body(k, e->status, "application/json", serve_error_json(e), 1);
}

static enum MHD_Result send_err(conn *k, int status, const char *type, const char *code, const char *msg) {
    serve_error e;
    serve_error_set(&e, status, type, code, NULL, "%s", msg);
    return send_error(k, &e);
}

/* 1 if the client has closed its end (checked while a job runs). */
static int client_gone(conn *k) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return 0;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static void abs_deadline(struct timespec *ts, long ms) {
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* --- SSE ------------------------------------------------------------------- */

/* Fills k->out with the next events (lock held). Returns 0 when it has
 * nothing yet, 1 when it wrote something. */
static int next_events(conn *k) {
    serve_job *j = k->job;
    if (j->text_ready > k->sent) {
        serve_sse_delta(&k->out, &k->ri, j->text.data + k->sent, j->text_ready - k->sent, 0);
        k->sent = j->text_ready;
        return 1;
    }
    if (j->finish == SERVE_RUNNING) return 0;
    if (j->finish == SERVE_FINISH_ERROR || j->finish == SERVE_FINISH_CANCELED) {
        serve_error e = j->err;
        if (j->finish == SERVE_FINISH_CANCELED)
            serve_error_set(&e, 503, "server_error", "canceled", NULL, "the request was canceled");
        char *s = serve_error_json(&e);
        util_buf_printf(&k->out, "data: %s\n\n", s ? s : "{}");
        free(s);
    } else {
        serve_sse_finish(&k->out, &k->ri, j->finish);
        if (k->include_usage) serve_sse_usage(&k->out, &k->ri, j, j->n_prompt);
    }
    util_buf_puts(&k->out, "data: [DONE]\n\n");
    k->done = 1;
    return 1;
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    conn *k = cls;
    pthread_mutex_t *mu = serve_sched_lock(k->srv->sched);
    if (k->out_off == k->out.len) {
        k->out.len = k->out_off = 0;
        if (k->done) return MHD_CONTENT_READER_END_OF_STREAM;
        pthread_mutex_lock(mu);
        while (!next_events(k)) {
            struct timespec ts;
            abs_deadline(&ts, 200);
            pthread_cond_timedwait(&k->job->cond, mu, &ts);
            if (k->out.len == 0 && client_gone(k)) {
                k->job->cancel = 1;
                pthread_mutex_unlock(mu);
                return MHD_CONTENT_READER_END_WITH_ERROR;
            }
            if (util_now_s() - k->last_write > 15) {
                util_buf_puts(&k->out, ": keep-alive\n\n"); /* for proxies; SSE comment */
                break;
            }
        }
        pthread_mutex_unlock(mu);
        k->last_write = util_now_s();
    }
    size_t n = k->out.len - k->out_off;
    if (n > max) n = max;
    memcpy(buf, k->out.data + k->out_off, n);
    k->out_off += n;
    return (ssize_t)n;
}

/* --- generation requests ---------------------------------------------------- */

/* Renders (chat) and tokenizes the request's prompt. */
static int build_prompt(serve_ctx *srv, const serve_request *r, int32_t **ids, size_t *n, serve_error *e) {
    util_err err;
    util_err_clear(&err);
    const eng_tokenizer *tok = eng_model_tokenizer(srv->m);
    int rc;
    if (r->kind == SERVE_COMPLETION) {
        rc = eng_tokenize(tok, r->prompt, strlen(r->prompt), 1, 1, ids, n, &err);
    } else {
        util_buf b;
        util_buf_init(&b);
        rc = eng_chat_render(eng_model_chat(srv->m), r->msgs, r->n_msgs, 1, &b, &err);
        if (rc == UTIL_OK) rc = eng_tokenize(tok, b.data ? b.data : "", b.len, 0, 1, ids, n, &err);
        util_buf_release(&b);
    }
    if (rc == UTIL_EINVAL) serve_error_set(e, 400, "invalid_request_error", NULL, "messages", "%s", err.msg);
    else if (rc) serve_error_set(e, 500, "server_error", NULL, NULL, "%s", err.msg);
    return rc ? -1 : 0;
}

/* Checks and turns a parsed request into a submitted job (k->job). */
static int start_job(conn *k, serve_request *r, serve_error *e) {
    serve_ctx *srv = k->srv;
    if (r->model && strcmp(r->model, srv->model_id) != 0) {
        serve_error_set(e, 404, "invalid_request_error", "model_not_found", "model",
                        "the model '%s' does not exist; this server serves '%s'", r->model, srv->model_id);
        return -1;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    if (build_prompt(srv, r, &ids, &n, e)) return -1;
    int n_ctx = serve_sched_n_ctx(srv->sched);
    if (n == 0 || n >= (size_t)n_ctx) {
        free(ids);
        if (n == 0) serve_error_set(e, 400, "invalid_request_error", NULL, "prompt", "the prompt is empty");
        else serve_error_set(e, 400, "invalid_request_error", "context_length_exceeded", NULL,
                             "the prompt is %zu tokens long; the context limit is %d tokens", n, n_ctx);
        return -1;
    }
    serve_job *j = serve_job_new(ids, (int)n);
    if (!j) {
        free(ids);
        serve_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
        return -1;
    }
    /* max_tokens is capped (not refused): clients often send large defaults. */
    int mt = r->max_tokens > 0 ? r->max_tokens : srv->o->max_tokens;
    if (mt > srv->o->max_tokens) mt = srv->o->max_tokens;
    if (mt > n_ctx - (int)n) mt = n_ctx - (int)n;
    j->max_tokens = mt;
    j->sp = r->sp;
    for (int i = 0; i < r->n_stop; i++) {
        j->stop[i] = r->stop[i];
        r->stop[i] = NULL;
    }
    j->n_stop = r->n_stop;
    r->n_stop = 0;
    if (serve_sched_submit(srv->sched, j, e)) {
        serve_job_release(srv->sched, j);
        return -1;
    }
    k->job = j;
    pthread_mutex_lock(&srv->id_mu);
    srv->live_jobs++;
    pthread_mutex_unlock(&srv->id_mu);
    return 0;
}

static enum MHD_Result finish_plain(conn *k) {
    pthread_mutex_t *mu = serve_sched_lock(k->srv->sched);
    serve_job *j = k->job;
    pthread_mutex_lock(mu);
    while (j->finish == SERVE_RUNNING) {
        struct timespec ts;
        abs_deadline(&ts, 200);
        pthread_cond_timedwait(&j->cond, mu, &ts);
        if (j->finish == SERVE_RUNNING && !j->cancel && client_gone(k)) j->cancel = 1;
    }
    pthread_mutex_unlock(mu);
    /* The scheduler no longer writes the job: read it without the lock. */
    if (j->finish == SERVE_FINISH_CANCELED) {
        if (client_gone(k)) return MHD_NO; /* nobody to answer */
        return send_err(k, 503, "server_error", "canceled", "the request was canceled");
    }
    if (j->finish == SERVE_FINISH_ERROR) return send_error(k, &j->err);
    return send_body(k, 200, "application/json", serve_json_final(&k->ri, j, j->n_prompt), 1);
}

static enum MHD_Result handle_generate(conn *k) {
    serve_ctx *srv = k->srv;
    serve_request r;
    serve_error e = {0};
    serve_kind kind = k->route == R_CHAT ? SERVE_CHAT : SERVE_COMPLETION;
    if (serve_request_parse(&r, kind, k->body.data ? k->body.data : "", k->body.len, &srv->o->sp, &e))
        return send_error(k, &e);
    int rc = start_job(k, &r, &e);
    int stream = r.stream;
    k->include_usage = r.include_usage;
    serve_request_release(&r);
    if (rc) return send_error(k, &e);
    pthread_mutex_lock(&srv->id_mu);
    unsigned long id = ++srv->next_id;
    pthread_mutex_unlock(&srv->id_mu);
    snprintf(k->id, sizeof k->id, "%s-%lx-%lu", kind == SERVE_CHAT ? "chatcmpl" : "cmpl",
             (unsigned long)srv->started, id);
    k->ri = (serve_resp_info){kind, k->id, srv->model_id, (long)time(NULL)};
    if (!stream) return finish_plain(k);
    if (kind == SERVE_CHAT) serve_sse_delta(&k->out, &k->ri, "", 0, 1); /* the role comes first */
    k->last_write = util_now_s();
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, k, NULL);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    k->status = 200;
    enum MHD_Result ret = MHD_queue_response(k->c, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* --- other routes ------------------------------------------------------------- */

static enum MHD_Result handle_get(conn *k) {
    serve_ctx *srv = k->srv;
    if (k->route == R_HEALTH) return send_body(k, 200, "application/json", "{\"status\":\"ok\"}", 0);
    if (k->route == R_METRICS) {
        util_buf b;
        util_buf_init(&b);
        serve_metrics_render(srv->metrics, &b);
        return send_body(k, 200, "text/plain; version=0.0.4", util_buf_detach(&b, NULL), 1);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "list");
    cJSON *d = cJSON_AddArrayToObject(o, "data");
    cJSON *mo = cJSON_CreateObject();
    cJSON_AddStringToObject(mo, "id", srv->model_id);
    cJSON_AddStringToObject(mo, "object", "model");
    cJSON_AddNumberToObject(mo, "created", (double)srv->started);
    cJSON_AddStringToObject(mo, "owned_by", "cachet");
    cJSON_AddNumberToObject(mo, "max_model_len", serve_sched_n_ctx(srv->sched));
    cJSON_AddItemToArray(d, mo);
    return send_json(k, 200, o);
}

static int route_of(const char *url, int *want_post) {
    static const struct { const char *path; int route, post; } routes[] = {
        {"/v1/chat/completions", R_CHAT, 1}, {"/v1/completions", R_COMPLETIONS, 1},
        {"/v1/models", R_MODELS, 0},         {"/health", R_HEALTH, 0},
        {"/metrics", R_METRICS, 0}};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(url, routes[i].path) == 0) {
            *want_post = routes[i].post;
            return routes[i].route;
        }
    return R_NONE;
}

/* Compares the Authorization header with the key in time independent of
 * where they differ. */
static int authorized(serve_ctx *srv, struct MHD_Connection *c) {
    if (!srv->api_key) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    size_t a = strlen(h), b = strlen(srv->api_key);
    unsigned diff = (unsigned)(a != b);
    for (size_t i = 0; i < a; i++) diff |= (unsigned)(h[i] ^ srv->api_key[i % (b ? b : 1)]);
    return diff == 0;
}

/* The first call for a request: route, method, auth and size checks.
 * Returns 1 if a response was queued (*ret set), 0 to go on reading. */
static int first_call(conn *k, const char *url, const char *method, enum MHD_Result *ret) {
    serve_ctx *srv = k->srv;
    int post = 0;
    k->route = route_of(url, &post);
    if (k->route == R_NONE) {
        *ret = send_err(k, 404, "invalid_request_error", "not_found", "no such route");
        return 1;
    }
    if (strcmp(method, post ? "POST" : "GET") != 0) {
        *ret = send_err(k, 405, "invalid_request_error", "method_not_allowed",
                        post ? "this route takes POST" : "this route takes GET");
        return 1;
    }
    if (strncmp(url, "/v1/", 4) == 0 && !authorized(srv, k->c)) {
        *ret = send_err(k, 401, "invalid_request_error", "invalid_api_key",
                        "missing or wrong API key: send 'Authorization: Bearer KEY'");
        return 1;
    }
    const char *cl = MHD_lookup_connection_value(k->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (post && cl) {
        char *end;
        unsigned long long v = strtoull(cl, &end, 10);
        if (*end == '\0' && v > srv->o->max_body) {
            char msg[128];
            snprintf(msg, sizeof msg, "the request body is %llu bytes; the limit is %llu", v,
                     (unsigned long long)srv->o->max_body);
            *ret = send_err(k, 413, "invalid_request_error", "request_too_large", msg);
            return 1;
        }
    }
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size,
                                  void **con_cls) {
    serve_ctx *srv = cls;
    conn *k = *con_cls;
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k) return MHD_NO;
        k->srv = srv;
        k->c = c;
        util_buf_init(&k->body);
        util_buf_init(&k->out);
        *con_cls = k;
        enum MHD_Result ret;
        if (first_call(k, url, method, &ret)) return ret;
        if (k->route == R_CHAT || k->route == R_COMPLETIONS) return MHD_YES; /* body follows */
    }
    if (*upload_size) {
        if (!k->too_big && k->body.len + *upload_size <= k->srv->o->max_body) {
            if (util_buf_append(&k->body, upload, *upload_size)) k->too_big = 1;
        } else {
            k->too_big = 1; /* chunked: read and drop, answer at the end */
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (k->too_big)
        return send_err(k, 413, "invalid_request_error", "request_too_large", "the request body is too large");
    if (k->route == R_CHAT || k->route == R_COMPLETIONS) return handle_generate(k);
    return handle_get(k);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    serve_ctx *srv = cls;
    conn *k = *con_cls;
    if (!k) return;
    if (k->job) {
        pthread_mutex_lock(serve_sched_lock(srv->sched));
        if (k->job->finish == SERVE_RUNNING) k->job->cancel = 1;
        pthread_mutex_unlock(serve_sched_lock(srv->sched));
        serve_job_release(srv->sched, k->job);
        pthread_mutex_lock(&srv->id_mu);
        srv->live_jobs--;
        pthread_mutex_unlock(&srv->id_mu);
    }
    if (k->status) serve_metrics_request(srv->metrics, k->status);
    util_buf_release(&k->body);
    util_buf_release(&k->out);
    free(k);
    *con_cls = NULL;
}

/* --- start, wait for a signal, stop ------------------------------------------------ */

static struct MHD_Daemon *start_http(serve_ctx *srv, int *port) {
    const serve_opts *o = srv->o;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    const struct sockaddr *sa;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    if (inet_pton(AF_INET, o->host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)o->port);
        sa = (const struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, o->host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)o->port);
        sa = (const struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        fprintf(stderr, "cachet serve: --host '%s' is not an IPv4 or IPv6 address\n", o->host);
        return NULL;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, (uint16_t)o->port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, sa,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_conns,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "cachet serve: cannot listen on %s port %d\n", o->host, o->port);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    *port = di ? di->port : o->port;
    return d;
}

static void default_model_id(serve_ctx *srv, const char *path) {
    const serve_opts *o = srv->o;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(srv->model_id, sizeof srv->model_id, "%s", o->model_name ? o->model_name : base);
    size_t l = strlen(srv->model_id);
    if (!o->model_name && l > 5 && strcmp(srv->model_id + l - 5, ".gguf") == 0) srv->model_id[l - 5] = '\0';
}

/* Runs the server until SIGINT or SIGTERM. The signals are blocked in every
 * thread (masks are inherited, so this happens before any thread starts) and
 * taken here with sigwait: no handler, no global flag. */
static int run_server(serve_ctx *srv, const sigset_t *sigs) {
    const serve_opts *o = srv->o;
    util_err err;
    util_err_clear(&err);
    char path[PATH_MAX];
    if (cli_model_path(path, sizeof path, o->model)) return 1;
    eng_model_params mp = o->mp;
    mp.n_threads = o->threads;
    if (eng_model_open(&srv->m, path, &mp, &err)) {
        fprintf(stderr, "cachet: %s\n", err.msg);
        return 1;
    }
    default_model_id(srv, path);
    serve_sched_params sp = {.parallel = o->parallel, .n_ctx = o->ctx, .prefill_chunk = o->prefill_chunk,
                             .max_queue = o->max_queue, .max_passed_over = 4};
    int rc = 1, port = 0;
    struct MHD_Daemon *d = NULL;
    if (!(srv->metrics = serve_metrics_new()) ||
        serve_sched_new(&srv->sched, srv->m, &sp, srv->metrics, &err)) {
        fprintf(stderr, "cachet serve: %s\n", srv->metrics ? err.msg : "out of memory");
        goto done;
    }
    if (!(d = start_http(srv, &port))) goto done;
    int sig = 0;
    fprintf(stderr, "cachet serve: model '%s' (%d-token context, %d parallel, %s), listening on http://%s%s%s:%d\n",
            srv->model_id, serve_sched_n_ctx(srv->sched), o->parallel, eng_model_backend(srv->m), strchr(o->host, ':') ? "[" : "",
            o->host, strchr(o->host, ':') ? "]" : "", port);
    fflush(stderr);
    while (sigwait(sigs, &sig) != 0) {
    }
    fprintf(stderr, "cachet serve: %s, finishing requests (up to %d ms)\n", strsignal(sig), o->grace_ms);
    MHD_quiesce_daemon(d); /* no new connections */
    serve_sched_stop(srv->sched, o->grace_ms);
    /* Every job is finished; let the responses reach their clients (bounded)
     * before the connections are closed. */
    for (int i = 0; i < 300; i++) {
        pthread_mutex_lock(&srv->id_mu);
        int live = srv->live_jobs;
        pthread_mutex_unlock(&srv->id_mu);
        if (live == 0) break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(d);
    rc = 0;
done:
    serve_sched_free(srv->sched);
    serve_metrics_free(srv->metrics);
    eng_model_flush_cache(srv->m); /* the disk tier keeps what was computed */
    eng_model_free(srv->m);
    return rc;
}

int agent_cmd_serve(int argc, char **argv) {
    serve_opts o = {.host = "127.0.0.1", .port = 8080, .parallel = 4, .max_queue = 64, .max_tokens = 512,
                    .prefill_chunk = 256, .max_conns = 64, .grace_ms = 5000, .max_body = 1u << 20,
                    .sp = eng_sample_defaults()};
    o.sp.seed = (uint64_t)time(NULL);
    int st = parse_opts(&o, argc, argv);
    if (st >= 0) return st;
    serve_ctx srv = {.o = &o, .started = (long)time(NULL)};
    if (o.api_key_env) {
        srv.api_key = getenv(o.api_key_env);
        if (!srv.api_key || !*srv.api_key) {
            fprintf(stderr, "cachet serve: --api-key-env: environment variable '%s' is not set or empty\n",
                    o.api_key_env);
            return 2;
        }
    }
    if (strcmp(o.host, "127.0.0.1") != 0 && strcmp(o.host, "::1") != 0)
        fprintf(stderr, "cachet serve: warning: listening on %s, not loopback%s\n", o.host,
                srv.api_key ? "" : ", without an API key");
    if (pthread_mutex_init(&srv.id_mu, NULL) != 0) return 1;
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    signal(SIGPIPE, SIG_IGN); /* a client that left is an error return, not a signal */
    int rc = run_server(&srv, &sigs);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_mutex_destroy(&srv.id_mu);
    return rc;
}
