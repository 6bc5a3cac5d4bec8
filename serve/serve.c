/* serve/serve.c: the OpenAI-compatible HTTP server (serve.h) on
 * libmicrohttpd (a thread per connection) in front of one embedded model.
 * Handlers parse, authorize and tokenize, then hand the job to the scheduler
 * (serve_sched.c) and wait; streaming answers are SSE written from a content
 * callback. No engine call runs here except opening the model and the
 * (read-only) tokenizer and chat template; no options or printing (that is
 * cli/cmd_serve.c). */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../util/path.h"
#include "../util/time.h"
#include "serve.h"
#include "serve_impl.h"

/* The server's state, shared read-only by every connection thread. */
struct serve_server {
    serve_params p; /* strings point into the owned copies below */
    char *host, *api_key, *model_name;
    eng_model *m;
    serve_sched *sched;
    serve_metrics *metrics;
    struct MHD_Daemon *daemon;
    serve_watch *watch; /* the read deadline of every connection */
    int port;
    int stopped;
    char model_id[256];
    long started;
    pthread_mutex_t id_mu; /* guards next_id and live_jobs */
    unsigned long next_id;
    int live_jobs; /* requests holding a job, until their response is done */
};

/* The handlers' name for it. */
typedef serve_server serve_ctx;

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
    size_t sent;  /* bytes of the job's text already in an event */
    util_buf out; /* SSE bytes not yet handed to MHD */
    size_t out_off;
    int done; /* the last event is in out */
    double last_write;
} conn;

enum { R_NONE = 0, R_CHAT, R_COMPLETIONS, R_MODELS, R_HEALTH, R_METRICS };

static enum MHD_Result send_body(conn *k, int status, const char *type, char *body, int owned) {
    const char *b = body ? body : "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}";
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(b), (void *)b, body && owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
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
        /* a client's message text never becomes control tokens: only the
         * template's own markers are special (chat.h) */
        rc = eng_chat_tokenize(eng_model_chat(srv->m), tok, r->msgs, r->n_msgs, 1, NULL, ids, n, &err);
    }
    if (rc == UTIL_EINVAL)
        serve_error_set(e, 400, "invalid_request_error", NULL, "messages", "%s", err.msg);
    else if (rc)
        serve_error_set(e, 500, "server_error", NULL, NULL, "%s", err.msg);
    return rc;
}

/* Checks and turns a parsed request into a submitted job (k->job). */
static int start_job(conn *k, serve_request *r, serve_error *e) {
    serve_ctx *srv = k->srv;
    /* One model is served: clients send whatever their configuration names
     * (llama-server takes any name too); the reply says which model answered. */
    if (srv->p.strict_model && r->model && strcmp(r->model, srv->model_id) != 0) {
        serve_error_set(e, 404, "invalid_request_error", "model_not_found", "model",
                        "the model '%s' does not exist; this server serves '%s'", r->model, srv->model_id);
        return UTIL_ENOTFOUND;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = build_prompt(srv, r, &ids, &n, e);
    if (rc) return rc;
    int n_ctx = serve_sched_n_ctx(srv->sched);
    if (n == 0 || n >= (size_t)n_ctx) {
        free(ids);
        if (n == 0)
            serve_error_set(e, 400, "invalid_request_error", NULL, "prompt", "the prompt is empty");
        else
            serve_error_set(e, 400, "invalid_request_error", "context_length_exceeded", NULL,
                            "the prompt is %zu tokens long; the context limit is %d tokens", n, n_ctx);
        return n == 0 ? UTIL_EINVAL : UTIL_ERANGE;
    }
    serve_job *j = serve_job_new(ids, (int)n);
    if (!j) {
        free(ids);
        serve_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
        return UTIL_ENOMEM;
    }
    /* max_tokens is capped (not refused): clients often send large defaults. */
    int mt = r->max_tokens > 0 ? r->max_tokens : srv->p.max_tokens;
    if (mt > srv->p.max_tokens) mt = srv->p.max_tokens;
    if (mt > n_ctx - (int)n) mt = n_ctx - (int)n;
    j->max_tokens = mt;
    j->sp = r->sp;
    for (int i = 0; i < r->n_stop; i++) {
        j->stop[i] = r->stop[i];
        r->stop[i] = NULL;
    }
    j->n_stop = r->n_stop;
    r->n_stop = 0;
    if (serve_sched_submit(srv->sched, j, e)) { /* full or stopping: e says 503 */
        serve_job_release(srv->sched, j);
        return UTIL_ENOMEM;
    }
    k->job = j;
    pthread_mutex_lock(&srv->id_mu);
    srv->live_jobs++;
    pthread_mutex_unlock(&srv->id_mu);
    return UTIL_OK;
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
    if (serve_request_parse(&r, kind, k->body.data ? k->body.data : "", k->body.len, &srv->p.sp, &e))
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
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, k,
                                                                  NULL);
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
    static const struct {
        const char *path;
        int route, post;
    } routes[] = {{"/v1/chat/completions", R_CHAT, 1},
                  {"/v1/completions", R_COMPLETIONS, 1},
                  {"/v1/models", R_MODELS, 0},
                  {"/health", R_HEALTH, 0},
                  {"/metrics", R_METRICS, 0}};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(url, routes[i].path) == 0) {
            *want_post = routes[i].post;
            return routes[i].route;
        }
    return R_NONE;
}

/* Compares the Authorization header with the key in time independent of
 * where they differ. The scheme is case-insensitive (RFC 7235: `bearer`). */
static int authorized(serve_ctx *srv, struct MHD_Connection *c) {
    if (!srv->api_key) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer", 6) != 0 || h[6] != ' ') return 0;
    for (h += 6; *h == ' '; h++) {}
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
        if (*end == '\0' && v > srv->p.max_body) {
            char msg[128];
            snprintf(msg, sizeof msg, "the request body is %llu bytes; the limit is %llu", v,
                     (unsigned long long)srv->p.max_body);
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
        if (!k->too_big && k->body.len + *upload_size <= k->srv->p.max_body) {
            if (util_buf_append(&k->body, upload, *upload_size)) k->too_big = 1;
        } else {
            k->too_big = 1; /* chunked: read and drop, answer at the end */
        }
        *upload_size = 0;
        return MHD_YES;
    }
    serve_watch_reading(c, 0); /* the whole request is in */
    if (k->too_big)
        return send_err(k, 413, "invalid_request_error", "request_too_large",
                        "the request body is too large");
    if (k->route == R_CHAT || k->route == R_COMPLETIONS) return handle_generate(k);
    return handle_get(k);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    serve_ctx *srv = cls;
    conn *k = *con_cls;
    serve_watch_reading(c, 1); /* kept alive: the next request's deadline */
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

/* --- start and stop ------------------------------------------------------------- */

void serve_params_init(serve_params *p) {
    memset(p, 0, sizeof *p);
    p->host = "127.0.0.1";
    p->port = 8080;
    p->parallel = 4;
    p->max_queue = 64;
    p->max_tokens = 512;
    p->max_body = 1u << 20;
    p->prefill_chunk = 256;
    p->max_conns = 64;
    p->request_timeout = 10;
    p->sp = eng_sample_defaults();
    p->sp.seed = (uint64_t)time(NULL);
}

static int start_http(serve_server *srv, util_err *err) {
    const serve_params *o = &srv->p;
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
        return util_err_set(err, UTIL_EINVAL, "host '%s' is not an IPv4 or IPv6 address", o->host);
    }
    srv->daemon = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, on_request, srv,
                                   MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
                                   MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_conns,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_NOTIFY_CONNECTION,
                                   serve_watch_notify, srv->watch, MHD_OPTION_END);
    if (!srv->daemon) return util_err_set(err, UTIL_EIO, "cannot listen on %s port %d", o->host, o->port);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = di ? di->port : o->port;
    return UTIL_OK;
}

static void default_model_id(serve_server *srv, const char *path) {
    if (srv->p.model_name)
        snprintf(srv->model_id, sizeof srv->model_id, "%s", srv->p.model_name);
    else
        util_model_id(srv->model_id, sizeof srv->model_id, path); /* the name cachet shows everywhere */
}

/* Copies p's strings so the caller's may go away. */
static int copy_params(serve_server *srv, const serve_params *p) {
    srv->p = *p;
    srv->host = strdup(p->host ? p->host : "127.0.0.1");
    srv->api_key = p->api_key && *p->api_key ? strdup(p->api_key) : NULL;
    srv->model_name = p->model_name ? strdup(p->model_name) : NULL;
    srv->p.host = srv->host;
    srv->p.api_key = srv->api_key;
    srv->p.model_name = srv->model_name;
    srv->p.model_path = NULL; /* used by serve_start only */
    return srv->host && (srv->api_key || !p->api_key || !*p->api_key) && (srv->model_name || !p->model_name)
               ? UTIL_OK
               : UTIL_ENOMEM;
}

int serve_start(serve_server **out, const serve_params *p, util_err *err) {
    *out = NULL;
    serve_server *srv = calloc(1, sizeof *srv);
    if (!srv) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    srv->started = (long)time(NULL);
    if (pthread_mutex_init(&srv->id_mu, NULL) != 0) {
        free(srv);
        return util_err_set(err, UTIL_ENOMEM, "cannot create a mutex");
    }
    int rc = copy_params(srv, p);
    if (rc) util_err_set(err, rc, "out of memory");
    unsigned char addr[16];
    if (!rc && inet_pton(AF_INET, srv->p.host, addr) != 1 && inet_pton(AF_INET6, srv->p.host, addr) != 1)
        rc = util_err_set(err, UTIL_EINVAL, "host '%s' is not an IPv4 or IPv6 address", srv->p.host);
    if (!rc) rc = eng_model_open(&srv->m, p->model_path, &p->mp, err);
    if (!rc) {
        default_model_id(srv, p->model_path);
        serve_sched_params sp = {.parallel = p->parallel,
                                 .n_ctx = p->n_ctx,
                                 .prefill_chunk = p->prefill_chunk,
                                 .max_queue = p->max_queue,
                                 .max_passed_over = 4,
                                 .spec = p->spec};
        if (!(srv->metrics = serve_metrics_new()))
            rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
        else
            rc = serve_sched_new(&srv->sched, srv->m, &sp, srv->metrics, err);
    }
    if (!rc && serve_watch_new(&srv->watch, p->request_timeout > 0 ? p->request_timeout : 10) != UTIL_OK)
        rc = util_err_set(err, UTIL_ENOMEM, "cannot start the connection watchdog");
    if (!rc) rc = start_http(srv, err);
    if (rc) {
        serve_free(srv);
        return rc;
    }
    *out = srv;
    return UTIL_OK;
}

int serve_port(const serve_server *s) { return s->port; }
const char *serve_model_id(const serve_server *s) { return s->model_id; }
int serve_n_ctx(const serve_server *s) { return serve_sched_n_ctx(s->sched); }
const char *serve_backend(const serve_server *s) { return eng_model_backend(s->m); }

void serve_stop(serve_server *srv, int grace_ms) {
    if (srv->stopped) return;
    srv->stopped = 1;
    if (srv->daemon) MHD_quiesce_daemon(srv->daemon); /* no new connections */
    if (srv->sched) serve_sched_stop(srv->sched, grace_ms);
    /* Every job is finished; let the responses reach their clients (bounded)
     * before the connections are closed. */
    for (int i = 0; srv->daemon && i < 300; i++) {
        pthread_mutex_lock(&srv->id_mu);
        int live = srv->live_jobs;
        pthread_mutex_unlock(&srv->id_mu);
        if (live == 0) break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (srv->daemon) MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
}

void serve_free(serve_server *srv) {
    if (!srv) return;
    serve_stop(srv, 0);
    serve_sched_free(srv->sched);
    serve_metrics_free(srv->metrics);
    serve_watch_free(srv->watch);              /* after the daemon: its connections are closed */
    if (srv->m) eng_model_flush_cache(srv->m); /* the disk tier keeps what was computed */
    eng_model_free(srv->m);
    pthread_mutex_destroy(&srv->id_mu);
    free(srv->host);
    free(srv->api_key);
    free(srv->model_name);
    free(srv);
}
