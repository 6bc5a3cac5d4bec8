/* agent/backend_http.c: the agent's remote backend: POST {url}/v1/chat/completions
 * on any OpenAI-compatible server (cachet serve, vLLM, SGLang, llama.cpp,
 * OpenAI) with libcurl, streamed as server-sent events with usage at the end;
 * connect and overall timeouts; bounded retries with exponential backoff and
 * jitter (Retry-After honoured) on 429, 5xx and connection errors; errors that
 * quote the server. Everything a server sends is bounded by the request's
 * max_tokens (backend.h: AGENT_HTTP_*), so a hostile or broken server cannot
 * grow the agent's memory or its session file. Does not tokenize: token
 * counts are what the server says. */
#include "backend.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../util/time.h"
#include "toolcall.h"

#define HTTP_MAX_ERROR_BODY    (64 * 1024)       /* what is kept of a non-2xx answer */
#define HTTP_MAX_MODELS_BODY   (8 * 1024 * 1024) /* GET /v1/models */
#define HTTP_BACKOFF_BASE_MS   500.0
#define HTTP_BACKOFF_MAX_MS    8000.0
#define HTTP_RETRY_AFTER_MAX_S 60.0

typedef struct http_be {
    agent_backend b; /* first: the struct is freed through it */
    CURL *curl;
    char chat_url[2200], models_url[2200];
    char auth[4200]; /* the Authorization header, or "" */
    long connect_ms, timeout_ms;
    int retries, stream;
    unsigned long long rng; /* jitter; xorshift seeded per process */
} http_be;

/* One OpenAI-style tool call, possibly streamed in pieces. */
typedef struct oa_call {
    util_buf name, args;
} oa_call;

/* The state of one attempt. */
typedef struct xfer {
    http_be *h;
    const agent_gen_req *rq; /* NULL: GET /v1/models */
    const char *url;
    util_buf *text;
    long status;
    char reason[96];
    double retry_after_s; /* < 0: none given */
    int mode;             /* 0 undecided, 1 one JSON body, 2 server-sent events */
    util_buf raw;         /* the JSON body, or a non-2xx body */
    util_buf line, data;  /* SSE: the line being read, the event's data */
    int done, failed, canceled, emitted;
    char fail[768];
    double t_start, t_first, t_last;
    int have_usage, cached_reported;
    long prompt, cached, completion;
    char finish[32];
    oa_call calls[AGENT_MAX_CALLS_PER_REPLY];
    int n_calls;
    /* the bounds of this reply (set_bounds) and what has come so far */
    size_t reply_cap, line_cap, body_cap;
    size_t reply_bytes, body_bytes;
} xfer;

static void xfer_release(xfer *x) {
    util_buf_release(&x->raw);
    util_buf_release(&x->line);
    util_buf_release(&x->data);
    for (int i = 0; i < AGENT_MAX_CALLS_PER_REPLY; i++) {
        util_buf_release(&x->calls[i].name);
        util_buf_release(&x->calls[i].args);
    }
}

/* The bounds of one reply, from its max_tokens: its text and tool calls,
 * one SSE line (or event, or a whole JSON answer), everything received. */
static void set_bounds(xfer *x) {
    if (!x->rq) { /* GET /v1/models */
        x->reply_cap = x->line_cap = x->body_cap = HTTP_MAX_MODELS_BODY;
        return;
    }
    size_t t = x->rq->max_tokens > 0 ? (size_t)x->rq->max_tokens : AGENT_HTTP_DEFAULT_TOKENS;
    x->reply_cap = t * AGENT_HTTP_BYTES_PER_TOKEN + AGENT_HTTP_REPLY_SLACK;
    x->line_cap = AGENT_HTTP_LINE_MIN + 2 * x->reply_cap;
    x->body_cap = x->reply_cap * 16 > AGENT_HTTP_BODY_MIN ? x->reply_cap * 16 : AGENT_HTTP_BODY_MIN;
}

static void xfer_init(xfer *x, http_be *h, const agent_gen_req *rq, const char *url, util_buf *text) {
    memset(x, 0, sizeof *x);
    x->h = h;
    x->rq = rq;
    x->url = url;
    x->text = text;
    x->retry_after_s = -1;
    x->t_start = util_now_ms();
    set_bounds(x);
}

/* Stops the transfer with an error (not retried: a server that breaks a
 * bound once will again). */
static void refuse(xfer *x, const char *what) {
    if (x->failed) return;
    x->failed = 1;
    snprintf(x->fail, sizeof x->fail, "server '%s' %s: the reply is refused", x->url, what);
}

/* Counts n more bytes of reply text or tool calls against the bound. */
static int reply_room(xfer *x, size_t n) {
    if (x->reply_bytes + n <= x->reply_cap) {
        x->reply_bytes += n;
        return 1;
    }
    char what[300];
    snprintf(what, sizeof what,
             "sent more than %zu bytes of reply for max_tokens %d (the bound is %d bytes per token + %d KiB)",
             x->reply_cap, x->rq ? x->rq->max_tokens : 0, AGENT_HTTP_BYTES_PER_TOKEN,
             AGENT_HTTP_REPLY_SLACK >> 10);
    refuse(x, what);
    return 0;
}

/* --- what the server said ----------------------------------------------------------- */

/* The message of an error answer: OpenAI's {"error":{"message","code"}}, vLLM's
 * {"message"}, FastAPI's {"detail"}, else the start of the body. */
static void server_message(const char *body, size_t len, char *out, size_t cap) {
    cJSON *o = len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    const char *msg = cJSON_GetStringValue(e);
    if (!msg) msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
    if (!msg) msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "message"));
    if (!msg) msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "detail"));
    const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
    if (msg && code)
        snprintf(out, cap, "%s (%s)", msg, code);
    else if (msg)
        snprintf(out, cap, "%s", msg);
    else {
        size_t k = 0;
        for (size_t i = 0; i < len && k + 1 < cap && k < 300; i++)
            out[k++] = (body[i] >= 32 && body[i] < 127) ? body[i] : ' ';
        out[k] = '\0';
        if (k == 0) snprintf(out, cap, "(empty body)");
    }
    cJSON_Delete(o);
}

static void read_usage(xfer *x, const cJSON *u) {
    if (!cJSON_IsObject(u)) return;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
    if (!cJSON_IsNumber(p)) return;
    x->have_usage = 1;
    x->prompt = (long)p->valuedouble;
    x->completion = cJSON_IsNumber(c) ? (long)c->valuedouble : 0;
    /* a missing field means "not reported" (vLLM leaves it out when 0 unless
     * told otherwise), never "nothing cached" */
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details"), "cached_tokens");
    if (!cJSON_IsNumber(k)) k = cJSON_GetObjectItemCaseSensitive(u, "cache_read_input_tokens");
    if (!cJSON_IsNumber(k)) k = cJSON_GetObjectItemCaseSensitive(u, "prompt_cache_hit_tokens");
    if (cJSON_IsNumber(k)) {
        x->cached_reported = 1;
        x->cached = (long)k->valuedouble;
    }
}

static int emit(xfer *x, const char *s, size_t n) {
    if (!n || !reply_room(x, n)) return 0;
    if (x->t_first == 0) x->t_first = util_now_ms();
    util_buf_append(x->text, s, n);
    x->emitted = 1;
    if (x->rq->on_text && x->rq->on_text(x->rq->user, s, n)) x->canceled = 1;
    return x->canceled;
}

/* choices[0] of a chunk (delta) or of a whole answer (message). */
static void read_choice(xfer *x, const cJSON *ch, int streamed) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ch, streamed ? "delta" : "message");
    const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "content"));
    if (content) emit(x, content, strlen(content));
    const cJSON *tc, *tcs = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    int pos = 0;
    cJSON_ArrayForEach(tc, tcs) {
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(tc, "index");
        int i = streamed && cJSON_IsNumber(ix) ? ix->valueint : pos;
        pos++;
        if (i < 0 || i >= AGENT_MAX_CALLS_PER_REPLY) continue;
        if (i >= x->n_calls) x->n_calls = i + 1;
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "name"));
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
        char *printed = cJSON_IsObject(args) ? cJSON_PrintUnformatted(args) : NULL;
        const char *a = cJSON_IsString(args) ? args->valuestring : printed;
        size_t nn = name ? strlen(name) : 0, na = a ? strlen(a) : 0;
        if (x->calls[i].name.len + nn > AGENT_HTTP_MAX_TOOL_NAME) {
            refuse(x, "sent a tool name longer than 256 bytes");
        } else if (x->calls[i].args.len + na > AGENT_HTTP_MAX_TOOL_ARGS) {
            char what[200];
            snprintf(what, sizeof what, "sent tool-call arguments longer than %d bytes (%d MiB)",
                     AGENT_HTTP_MAX_TOOL_ARGS, AGENT_HTTP_MAX_TOOL_ARGS >> 20);
            refuse(x, what);
        } else if (reply_room(x, nn + na)) {
            if (name) util_buf_puts(&x->calls[i].name, name);
            if (a) util_buf_puts(&x->calls[i].args, a);
        }
        free(printed);
        if (x->failed) return;
    }
    const char *fin = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ch, "finish_reason"));
    if (fin) snprintf(x->finish, sizeof x->finish, "%s", fin);
}

/* One parsed chunk or answer; sets x->failed on an error object. */
static void read_answer(xfer *x, const cJSON *o, int streamed) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    if (e && !cJSON_IsNull(e)) {
        char *s = cJSON_PrintUnformatted(o);
        char msg[512];
        server_message(s ? s : "", s ? strlen(s) : 0, msg, sizeof msg);
        free(s);
        x->failed = 1;
        snprintf(x->fail, sizeof x->fail, "server '%s' reported an error%s: %s", x->url,
                 streamed ? " in its stream" : "", msg);
        return;
    }
    read_choice(x, cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "choices"), 0), streamed);
    read_usage(x, cJSON_GetObjectItemCaseSensitive(o, "usage"));
}

static void quote_start(const char *s, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < cap && i < 80; i++)
        out[k++] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    if (n > 80 && k + 4 < cap) out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = '\0';
}

/* --- server-sent events -------------------------------------------------------------- */

static void sse_event(xfer *x) {
    const char *d = x->data.data ? x->data.data : "";
    size_t n = x->data.len;
    x->data.len = 0;
    if (n == 6 && memcmp(d, "[DONE]", 6) == 0) {
        x->done = 1;
        return;
    }
    cJSON *o = cJSON_ParseWithLength(d, n);
    if (!cJSON_IsObject(o)) {
        char q[128];
        quote_start(d, n, q, sizeof q);
        x->failed = 1;
        snprintf(x->fail, sizeof x->fail, "server '%s' sent malformed JSON in its stream: '%s'", x->url, q);
    } else {
        read_answer(x, o, 1);
    }
    cJSON_Delete(o);
}

static void sse_line(xfer *x, const char *s, size_t n) {
    if (n && s[n - 1] == '\r') n--;
    if (n == 0) {
        if (x->data.len) sse_event(x);
        return;
    }
    if (s[0] == ':' || n < 5 || memcmp(s, "data:", 5) != 0) return; /* comments, event:, id: */
    s += 5, n -= 5;
    if (n && s[0] == ' ') s++, n--;
    if (x->data.len + n + 1 > x->line_cap) {
        char what[160];
        snprintf(what, sizeof what, "sent an event longer than %zu bytes in its stream", x->line_cap);
        refuse(x, what);
        return;
    }
    if (x->data.len) util_buf_append(&x->data, "\n", 1);
    util_buf_append(&x->data, s, n);
}

/* Buffers a piece of an SSE line, within the line bound. */
static int line_add(xfer *x, const char *p, size_t n) {
    if (x->line.len + n > x->line_cap) {
        char what[160];
        snprintf(what, sizeof what, "sent a line longer than %zu bytes in its stream", x->line_cap);
        refuse(x, what);
        return 0;
    }
    util_buf_append(&x->line, p, n);
    return 1;
}

static void sse_feed(xfer *x, const char *p, size_t n) {
    while (n && !x->failed && !x->canceled && !x->done) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) {
            line_add(x, p, n);
            return;
        }
        size_t k = (size_t)(nl - p);
        if (x->line.len) {
            if (!line_add(x, p, k)) return;
            sse_line(x, x->line.data, x->line.len);
            x->line.len = 0;
        } else {
            sse_line(x, p, k);
        }
        p += k + 1, n -= k + 1;
    }
}

/* --- libcurl callbacks -------------------------------------------------------------- */

static size_t on_header(char *p, size_t sz, size_t n, void *user) {
    xfer *x = user;
    size_t len = sz * n;
    if (len > 5 && memcmp(p, "HTTP/", 5) == 0) { /* a new status line (after 100 Continue, redirects) */
        const char *sp = memchr(p, ' ', len);
        x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->reason[0] = '\0';
        x->retry_after_s = -1;
        const char *r = sp && (size_t)(sp - p) + 5 < len ? sp + 5 : NULL;
        if (r) {
            size_t k = len - (size_t)(r - p);
            while (k && (r[k - 1] == '\r' || r[k - 1] == '\n')) k--;
            snprintf(x->reason, sizeof x->reason, "%.*s", (int)(k < 90 ? k : 90), r);
        }
    } else if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
        char v[128];
        snprintf(v, sizeof v, "%.*s", (int)(len - 12 < 120 ? len - 12 : 120), p + 12);
        char *end;
        double s = strtod(v, &end);
        if (end != v && s >= 0)
            x->retry_after_s = s;
        else {
            time_t t = curl_getdate(v, NULL); /* an HTTP date */
            if (t > 0) x->retry_after_s = difftime(t, time(NULL)) > 0 ? difftime(t, time(NULL)) : 0;
        }
    }
    return len;
}

static size_t on_body(char *p, size_t sz, size_t n, void *user) {
    xfer *x = user;
    size_t len = sz * n;
    x->t_last = util_now_ms();
    if (x->status < 200 || x->status >= 300) {
        if (x->raw.len < HTTP_MAX_ERROR_BODY) util_buf_append(&x->raw, p, len);
        return len;
    }
    if (x->mode == 0) {
        size_t i = 0;
        while (i < len && (p[i] == ' ' || p[i] == '\r' || p[i] == '\n' || p[i] == '\t')) i++;
        if (i == len) return len;
        x->mode = (p[i] == '{' || !x->rq) ? 1 : 2;
    }
    x->body_bytes += len;
    if (x->body_bytes > x->body_cap) {
        char what[200];
        if (x->rq)
            snprintf(what, sizeof what, "sent more than %zu bytes for a reply of at most %d tokens",
                     x->body_cap, x->rq->max_tokens);
        else
            snprintf(what, sizeof what, "sent an answer over %zu MiB", x->body_cap >> 20);
        refuse(x, what);
        return 0;
    }
    if (x->mode == 1) {
        if (x->raw.len + len > x->line_cap) {
            char what[160];
            snprintf(what, sizeof what, "sent an answer over %zu bytes", x->line_cap);
            refuse(x, what);
            return 0;
        }
        util_buf_append(&x->raw, p, len);
        return len;
    }
    sse_feed(x, p, len);
    return x->failed || x->canceled ? 0 : len;
}

static int on_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    (void)dt, (void)dn, (void)ut, (void)un;
    xfer *x = user;
    if (x->rq && x->rq->should_stop && x->rq->should_stop(x->rq->user)) x->canceled = 1;
    return x->canceled;
}

/* --- one attempt, and retries --------------------------------------------------------- */

static CURLcode perform(xfer *x, const char *body, char *errbuf, double *connect_s) {
    http_be *h = x->h;
    CURL *c = h->curl;
    curl_easy_reset(c); /* keeps the connection cache */
    struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
    hd = curl_slist_append(hd, "Expect:"); /* no 100-continue round trip */
    if (x->rq && h->stream) hd = curl_slist_append(hd, "Accept: text/event-stream");
    if (h->auth[0]) hd = curl_slist_append(hd, h->auth);
    errbuf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, x->url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "cachet");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    x->t_start = util_now_ms();
    CURLcode rc = curl_easy_perform(c);
    curl_off_t ct = 0;
    curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &ct);
    *connect_s = (double)ct / 1e6;
    curl_slist_free_all(hd);
    if (rc == CURLE_OK && x->mode == 2 && !x->failed && !x->canceled) {
        if (x->line.len) sse_line(x, x->line.data, x->line.len); /* no final newline */
        x->line.len = 0;
        if (x->data.len && !x->done) sse_event(x);
    }
    return rc;
}

static double backoff_ms(http_be *h, int attempt) {
    double d = HTTP_BACKOFF_BASE_MS;
    for (int i = 0; i < attempt && d < HTTP_BACKOFF_MAX_MS; i++) d *= 2;
    if (d > HTTP_BACKOFF_MAX_MS) d = HTTP_BACKOFF_MAX_MS;
    h->rng ^= h->rng << 13, h->rng ^= h->rng >> 7, h->rng ^= h->rng << 17;
    return d * (0.5 + 0.5 * (double)(h->rng >> 11) / 9007199254740992.0); /* jitter: 50-100% */
}

/* Sleeps ms in short steps; returns 1 if the user asked to stop meanwhile. */
static int wait_ms(const agent_gen_req *rq, double ms) {
    double end = util_now_ms() + ms;
    for (double t = util_now_ms(); t < end; t = util_now_ms()) {
        if (rq && rq->should_stop && rq->should_stop(rq->user)) return 1;
        double step = end - t < 50 ? end - t : 50;
        struct timespec ts = {0, (long)(step * 1e6)};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static int retryable_curl(CURLcode rc) {
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_SEND_ERROR ||
           rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE;
}

/* Runs attempts until one gives a 2xx answer that parsed, the user stops,
 * an error that retrying cannot fix, or the retries are spent. On success x
 * holds the answer; the caller releases x either way. */
static int run_request(xfer *x, const char *body, int *attempts, util_err *err) {
    http_be *h = x->h;
    const agent_gen_req *rq = x->rq;
    util_buf *text = x->text;
    size_t text0 = text ? text->len : 0;
    char errbuf[CURL_ERROR_SIZE], msg[900];
    for (int attempt = 0;; attempt++) {
        xfer_release(x);
        xfer_init(x, h, rq, x->url, text);
        if (text) text->len = text0;
        double connect_s = 0;
        CURLcode rc = perform(x, body, errbuf, &connect_s);
        *attempts = attempt + 1;
        if (x->canceled) return UTIL_OK;
        if (x->failed) return util_err_set(err, UTIL_EFORMAT, "%s", x->fail);
        int retry = 0;
        if (rc == CURLE_OK && x->status >= 200 && x->status < 300) return UTIL_OK;
        if (rc == CURLE_OK) {
            char sm[600];
            server_message(x->raw.data ? x->raw.data : "", x->raw.len, sm, sizeof sm);
            snprintf(msg, sizeof msg, "server '%s' answered %ld%s%s: %s%s", x->url, x->status,
                     x->reason[0] ? " " : "", x->reason, sm,
                     x->status == 401 && !h->auth[0]
                         ? " (no API key was sent: --api-key-env VAR names the variable holding it)"
                         : "");
            retry = x->status == 429 || x->status >= 500;
        } else if (x->emitted) {
            snprintf(msg, sizeof msg, "server '%s': the connection broke mid-reply: %s", x->url,
                     errbuf[0] ? errbuf : curl_easy_strerror(rc));
        } else if (rc == CURLE_OPERATION_TIMEDOUT && connect_s > 0) {
            snprintf(msg, sizeof msg, "server '%s': no complete answer within %.3g s (--timeout): %s", x->url,
                     (double)h->timeout_ms / 1e3, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        } else if (rc == CURLE_OPERATION_TIMEDOUT) {
            snprintf(msg, sizeof msg, "server '%s': could not connect within %.3g s (--connect-timeout): %s",
                     x->url, (double)h->connect_ms / 1e3, errbuf[0] ? errbuf : curl_easy_strerror(rc));
            retry = 1;
        } else {
            snprintf(msg, sizeof msg, "server '%s': %s", x->url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
            retry = retryable_curl(rc);
        }
        if (!retry || attempt >= h->retries) {
            if (attempt > 0) return util_err_set(err, UTIL_EIO, "%s (%d attempts)", msg, attempt + 1);
            return util_err_set(err, UTIL_EIO, "%s", msg);
        }
        double ms = x->retry_after_s >= 0
                        ? 1e3 * (x->retry_after_s < HTTP_RETRY_AFTER_MAX_S ? x->retry_after_s
                                                                           : HTTP_RETRY_AFTER_MAX_S)
                        : backoff_ms(h, attempt);
        if (rq && rq->on_note) {
            char note[1100];
            snprintf(note, sizeof note, "%s; retrying in %.1f s%s (attempt %d of %d)", msg, ms / 1e3,
                     x->retry_after_s >= 0 ? " (Retry-After)" : "", attempt + 2, h->retries + 1);
            rq->on_note(rq->user, "retry", note);
        }
        if (wait_ms(rq, ms)) {
            x->canceled = 1;
            return UTIL_OK;
        }
    }
}

/* --- the messages on the wire ----------------------------------------------------------- */

static int put_msg(util_buf *out, const char *role, const char *content, int first, util_err *err) {
    cJSON *o = cJSON_CreateObject();
    char *s = NULL;
    if (o && cJSON_AddStringToObject(o, "role", role) && cJSON_AddStringToObject(o, "content", content))
        s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    int rc = util_buf_puts(out, first ? "[" : ",");
    if (!rc) rc = util_buf_puts(out, s);
    free(s);
    return rc ? util_err_set(err, UTIL_ENOMEM, "out of memory") : UTIL_OK;
}

int agent_http_render(util_buf *out, const eng_chat_msg *m, size_t n, util_err *err) {
    size_t i = 0;
    int rc = UTIL_OK, first = 1;
    util_buf sys;
    util_buf_init(&sys);
    for (; i < n && strcmp(m[i].role, "system") == 0; i++) {
        if (i) util_buf_puts(&sys, "\n\n");
        util_buf_puts(&sys, m[i].content);
    }
    if (i) {
        util_buf_append(&sys, "", 0);
        rc = put_msg(out, "system", sys.data, 1, err);
        first = 0;
    }
    util_buf_release(&sys);
    for (; i < n && !rc; i++, first = 0)
        rc = put_msg(out, strcmp(m[i].role, "tool") == 0 ? "user" : m[i].role, m[i].content, first, err);
    if (!rc && first)
        rc = util_buf_puts(out, "[") ? util_err_set(err, UTIL_ENOMEM, "out of memory") : UTIL_OK;
    return rc;
}

int agent_http_render_reply(util_buf *out, const char *reply, util_err *err) {
    return put_msg(out, "assistant", reply, 0, err);
}

/* OpenAI-style tool calls become the <tool_call> text the agent parses. */
static void calls_to_text(xfer *x) {
    if (!x->n_calls) return;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < x->n_calls; i++) {
        cJSON *c = cJSON_CreateObject();
        util_buf_append(&x->calls[i].name, "", 0);
        util_buf_append(&x->calls[i].args, "", 0);
        cJSON_AddStringToObject(c, "name", x->calls[i].name.data);
        cJSON *args = cJSON_Parse(x->calls[i].args.data);
        if (!args && x->calls[i].args.len == 0) args = cJSON_CreateObject();
        cJSON_AddItemToObject(c, "arguments", args ? args : cJSON_CreateString(x->calls[i].args.data));
        cJSON_AddItemToArray(arr, c);
    }
    char *s = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    if (!s) return;
    if (x->text->len) util_buf_puts(x->text, "\n");
    util_buf_printf(x->text, "<tool_call>%s</tool_call>", s);
    free(s);
}

/* --- generate ------------------------------------------------------------------------- */

static char *request_body(http_be *h, const agent_gen_req *rq, util_err *err) {
    util_buf b;
    util_buf_init(&b);
    int rc = util_buf_puts(&b, "{\"messages\":") ? UTIL_ENOMEM : UTIL_OK;
    if (!rc) rc = agent_http_render(&b, rq->msgs, rq->n_msgs, err);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", h->b.model);
    if (rq->max_tokens > 0) cJSON_AddNumberToObject(o, "max_tokens", rq->max_tokens);
    cJSON_AddNumberToObject(o, "temperature", rq->sp ? rq->sp->temp : 0);
    cJSON_AddBoolToObject(o, "stream", h->stream);
    if (h->stream) cJSON_AddTrueToObject(cJSON_AddObjectToObject(o, "stream_options"), "include_usage");
    char *tail = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!rc && (!tail || util_buf_printf(&b, "],%s", tail + 1))) rc = UTIL_ENOMEM;
    free(tail);
    if (rc) {
        util_buf_release(&b);
        if (rc == UTIL_ENOMEM) util_err_set(err, UTIL_ENOMEM, "out of memory");
        return NULL;
    }
    return util_buf_detach(&b, NULL);
}

static int http_generate(agent_backend *b, const agent_gen_req *rq, util_buf *text, agent_gen_res *res,
                         util_err *err) {
    http_be *h = (http_be *)b;
    char *body = request_body(h, rq, err);
    if (!body) return err->code;
    xfer x;
    xfer_init(&x, h, rq, h->chat_url, text);
    int rc = run_request(&x, body, &res->attempts, err);
    free(body);
    if (!rc && !x.canceled) {
        if (x.mode == 1) {
            cJSON *o = cJSON_ParseWithLength(x.raw.data ? x.raw.data : "", x.raw.len);
            if (!cJSON_IsObject(o)) {
                char q[128];
                quote_start(x.raw.data ? x.raw.data : "", x.raw.len, q, sizeof q);
                rc = util_err_set(err, UTIL_EFORMAT, "server '%s' answered with malformed JSON: '%s'",
                                  h->chat_url, q);
            } else {
                read_answer(&x, o, 0);
                if (x.failed) rc = util_err_set(err, UTIL_EFORMAT, "%s", x.fail);
            }
            cJSON_Delete(o);
        } else if (x.mode == 0) {
            rc = util_err_set(err, UTIL_EFORMAT, "server '%s' answered %ld with an empty body", h->chat_url,
                              x.status);
        } else if (!x.done && !x.finish[0]) {
            rc = util_err_set(err, UTIL_EFORMAT,
                              "server '%s': the stream ended without finish_reason or [DONE]", h->chat_url);
        }
    }
    if (!rc) {
        calls_to_text(&x);
        eng_gen_stats *st = &res->st;
        double first = x.t_first ? x.t_first : (x.t_last ? x.t_last : util_now_ms());
        double last = x.t_last ? x.t_last : first;
        res->streamed = x.mode == 2;
        res->cached_reported = x.have_usage && x.cached_reported;
        st->prompt_tokens = (int)x.prompt;
        st->cached_tokens = st->cached_tokens_memory = res->cached_reported ? (int)x.cached : 0;
        st->computed_tokens = st->prompt_tokens - st->cached_tokens;
        st->generated_tokens = (int)x.completion;
        st->ttft_ms = st->prefill_ms = first - x.t_start;
        st->decode_ms = last - first;
        st->prefill_tps = st->prefill_ms > 0 ? st->computed_tokens / (st->prefill_ms / 1e3) : 0;
        st->decode_tps = st->generated_tokens > 1 && st->decode_ms > 0
                             ? (st->generated_tokens - 1) / (st->decode_ms / 1e3)
                             : 0;
        st->stop_reason = x.canceled                        ? ENG_STOP_CANCELED
                          : strcmp(x.finish, "length") == 0 ? ENG_STOP_MAX_TOKENS
                                                            : ENG_STOP_EOG;
    }
    xfer_release(&x);
    return rc;
}

/* --- set-up ------------------------------------------------------------------------------ */

static int discover_model(http_be *h, util_err *err) {
    xfer x;
    xfer_init(&x, h, NULL, h->models_url, NULL);
    int attempts = 0;
    int rc = run_request(&x, NULL, &attempts, err);
    if (!rc) {
        cJSON *o = cJSON_ParseWithLength(x.raw.data ? x.raw.data : "", x.raw.len);
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "data"), 0), "id"));
        if (id)
            snprintf(h->b.model, sizeof h->b.model, "%s", id);
        else
            rc = util_err_set(err, UTIL_EFORMAT, "server '%s' lists no model: pass --backend-model NAME",
                              h->models_url);
        cJSON_Delete(o);
    } else if (x.status == 404) {
        util_err_wrap(err, "--backend-model NAME skips this lookup");
    }
    xfer_release(&x);
    return rc;
}

static void http_free(agent_backend *b) {
    http_be *h = (http_be *)b;
    if (h->curl) curl_easy_cleanup(h->curl);
    free(h);
}

int agent_backend_http_new(agent_backend **out, const agent_http_opts *o, util_err *err) {
    *out = NULL;
    char base[2048];
    size_t n = strlen(o->url);
    if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
        return util_err_set(err, UTIL_EINVAL, "--backend '%s': not an http:// or https:// URL", o->url);
    if (n >= sizeof base) return util_err_set(err, UTIL_EINVAL, "--backend: URL too long");
    snprintf(base, sizeof base, "%s", o->url);
    static const char *const tails[] = {"/chat/completions", "/", "/v1", "/"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        size_t t = strlen(tails[i]);
        if (n >= t && strcmp(base + n - t, tails[i]) == 0) base[n -= t] = '\0';
    }
    http_be *h = calloc(1, sizeof *h);
    if (!h) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    h->b = (agent_backend){.name = "http", .uses_tokens = 0, .generate = http_generate, .free = http_free};
    snprintf(h->chat_url, sizeof h->chat_url, "%s/v1/chat/completions", base);
    snprintf(h->models_url, sizeof h->models_url, "%s/v1/models", base);
    h->connect_ms = (long)(1e3 * (o->connect_timeout_s > 0 ? o->connect_timeout_s : 10));
    h->timeout_ms = (long)(1e3 * (o->timeout_s > 0 ? o->timeout_s : 600));
    h->retries = o->retries >= 0 ? o->retries : 4;
    h->stream = !o->no_stream;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->rng = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
             (unsigned long long)getpid();
    if (!h->rng) h->rng = 88172645463325252ULL;
    int rc = UTIL_OK;
    if (o->api_key_env) {
        const char *key = getenv(o->api_key_env);
        if (!key || !*key)
            rc = util_err_set(err, UTIL_EINVAL, "--api-key-env: environment variable '%s' is not set",
                              o->api_key_env);
        else if (strlen(key) > 4000 || strpbrk(key, "\r\n"))
            rc = util_err_set(err, UTIL_EINVAL,
                              "--api-key-env: the key in '%s' is too long or holds a line break",
                              o->api_key_env);
        else
            snprintf(h->auth, sizeof h->auth, "Authorization: Bearer %s", key);
    }
    if (!rc && !(h->curl = curl_easy_init()))
        rc = util_err_set(err, UTIL_ENOMEM, "libcurl: cannot create a handle");
    if (!rc && o->model && *o->model)
        snprintf(h->b.model, sizeof h->b.model, "%s", o->model);
    else if (!rc)
        rc = discover_model(h, err);
    if (rc) {
        http_free(&h->b);
        return rc;
    }
    *out = &h->b;
    return UTIL_OK;
}
