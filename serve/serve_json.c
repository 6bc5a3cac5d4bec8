/* serve/serve_json.c: the JSON side of `cachet serve`: strict parsing of
 * OpenAI-style request bodies (chat and completions) into serve_request,
 * OpenAI-style error bodies, and the response and SSE chunk objects.
 * Does no HTTP and never calls the engine. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/text.h"
#include "../util/time.h"
#include "serve_impl.h"

double serve_now(void) { return util_now_s(); }

/* --- errors ------------------------------------------------------------- */

void serve_error_set(serve_error *e, int status, const char *type, const char *code, const char *param,
                     const char *fmt, ...) {
    e->status = status;
    e->type = type;
    e->code = code;
    e->param = param;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

char *serve_error_json(const serve_error *e) {
    cJSON *o = cJSON_CreateObject();
    cJSON *er = cJSON_AddObjectToObject(o, "error");
    cJSON_AddStringToObject(er, "message", e->msg);
    cJSON_AddStringToObject(er, "type", e->type ? e->type : "server_error");
    if (e->param)
        cJSON_AddStringToObject(er, "param", e->param);
    else
        cJSON_AddNullToObject(er, "param");
    if (e->code)
        cJSON_AddStringToObject(er, "code", e->code);
    else
        cJSON_AddNullToObject(er, "code");
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static int bad(serve_error *e, const char *param, const char *msg) {
    serve_error_set(e, 400, "invalid_request_error", NULL, param, "%s", msg);
    return UTIL_EINVAL;
}

/* A 500: the server ran out of memory. */
static int oom(serve_error *e) {
    serve_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
    return UTIL_ENOMEM;
}

/* A 400 naming the field: fmt has one %s for the field's name. */
static int bad_field(serve_error *e, const char *name, const char *fmt) {
    char msg[160];
    snprintf(msg, sizeof msg, "'%s' %s", name, fmt);
    return bad(e, name, msg);
}

/* --- request parsing ------------------------------------------------------ */

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* Message i's content: a string, or an array of {"type":"text","text":...}
 * parts (joined). null or a missing content is refused: it was taken as ""
 * without a word. Returns a malloc'd string. */
static int parse_content(const cJSON *c, int i, char **out, serve_error *e) {
    *out = NULL;
    if (cJSON_IsString(c)) {
        *out = dup_str(c->valuestring);
    } else if (!c || cJSON_IsNull(c)) {
        serve_error_set(
            e, 400, "invalid_request_error", NULL, "messages",
            "message %d has %s 'content': send a string (\"\" for none) or an array of text parts", i,
            c ? "a null" : "no");
        return UTIL_EINVAL;
    } else if (cJSON_IsArray(c)) {
        util_buf b;
        util_buf_init(&b);
        const cJSON *part;
        cJSON_ArrayForEach(part, c) {
            const cJSON *ty = cJSON_GetObjectItemCaseSensitive(part, "type");
            const cJSON *tx = cJSON_GetObjectItemCaseSensitive(part, "text");
            if (!cJSON_IsString(ty) || strcmp(ty->valuestring, "text") != 0 || !cJSON_IsString(tx)) {
                util_buf_release(&b);
                return bad(e, "messages", "only text content parts are supported");
            }
            util_buf_puts(&b, tx->valuestring);
        }
        *out = b.data ? util_buf_detach(&b, NULL) : dup_str("");
    } else {
        return bad(e, "messages", "'content' must be a string or an array of text parts");
    }
    if (!*out) {
        serve_error_set(e, 500, "server_error", NULL, NULL, "out of memory");
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

static int parse_messages(serve_request *r, const cJSON *msgs, serve_error *e) {
    if (!cJSON_IsArray(msgs)) return bad(e, "messages", "'messages' must be an array");
    int n = cJSON_GetArraySize(msgs);
    if (n < 1) return bad(e, "messages", "'messages' must not be empty");
    r->msgs = calloc((size_t)n, sizeof *r->msgs);
    if (!r->msgs) return oom(e);
    const cJSON *m;
    int i = 0;
    cJSON_ArrayForEach(m, msgs) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        if (!cJSON_IsObject(m) || !cJSON_IsString(role))
            return bad(e, "messages", "each message must be an object with a string 'role'");
        const char *rs = role->valuestring;
        if (strcmp(rs, "developer") == 0) rs = "system";
        if (strcmp(rs, "system") && strcmp(rs, "user") && strcmp(rs, "assistant") && strcmp(rs, "tool"))
            return (serve_error_set(e, 400, "invalid_request_error", NULL, "messages",
                                    "unknown message role '%s'", role->valuestring),
                    UTIL_EINVAL);
        char *content;
        int rc = parse_content(cJSON_GetObjectItemCaseSensitive(m, "content"), i++, &content, e);
        if (rc) return rc;
        char *rd = dup_str(rs);
        if (!rd) {
            free(content);
            return oom(e);
        }
        r->msgs[r->n_msgs].role = rd;
        r->msgs[r->n_msgs].content = content;
        r->n_msgs++;
    }
    return 0;
}

/* An optional number field in [lo, hi]; integral when integer is set. */
static int opt_number(const cJSON *o, const char *name, double lo, double hi, int integer, double *out,
                      int *given, serve_error *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (given) *given = 0;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad_field(e, name, "must be a number");
    double d = v->valuedouble;
    if (integer && d != floor(d)) return bad_field(e, name, "must be an integer");
    if (d < lo || d > hi) {
        serve_error_set(e, 400, "invalid_request_error", NULL, name, "'%s' is %g; it must lie in [%g, %g]",
                        name, d, lo, hi);
        return UTIL_EINVAL;
    }
    *out = d;
    if (given) *given = 1;
    return 0;
}

static int opt_bool(const cJSON *o, const char *name, int *out, serve_error *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsBool(v)) return bad_field(e, name, "must be a boolean");
    *out = cJSON_IsTrue(v);
    return 0;
}

static int add_stop(serve_request *r, const cJSON *s, serve_error *e) {
    if (!cJSON_IsString(s)) return bad(e, "stop", "'stop' must be a string or an array of strings");
    size_t l = strlen(s->valuestring);
    if (l == 0) return 0;
    if (l > SERVE_MAX_STOP_LEN) return bad(e, "stop", "a stop string is longer than 64 bytes");
    if (r->n_stop == SERVE_MAX_STOP) return bad(e, "stop", "at most 4 stop strings");
    if (!(r->stop[r->n_stop] = dup_str(s->valuestring))) return oom(e);
    r->n_stop++;
    return 0;
}

static int parse_sampling(serve_request *r, const cJSON *o, serve_error *e) {
    double d;
    int given, rc;
    if ((rc = opt_number(o, "temperature", 0, 2, 0, &d, &given, e))) return rc;
    if (given) r->sp.temp = (float)d;
    if ((rc = opt_number(o, "top_p", 0, 1, 0, &d, &given, e))) return rc;
    if (given) r->sp.top_p = d <= 0 ? 1e-6f : (float)d;
    if ((rc = opt_number(o, "top_k", -1, 1e6, 1, &d, &given, e))) return rc;
    if (given) r->sp.top_k = (int)d;
    if ((rc = opt_number(o, "min_p", 0, 1, 0, &d, &given, e))) return rc;
    if (given) r->sp.min_p = (float)d;
    if ((rc = opt_number(o, "repetition_penalty", 0.01, 100, 0, &d, &given, e))) return rc;
    if (given) r->sp.repeat_penalty = (float)d;
    if ((rc = opt_number(o, "seed", -9.2e18, 9.2e18, 1, &d, &given, e))) return rc;
    if (given) r->sp.seed = (uint64_t)(int64_t)d;
    /* max_completion_tokens is the newer name; either may be given. */
    if ((rc = opt_number(o, "max_tokens", 1, 1e9, 1, &d, &given, e))) return rc;
    if (given) r->max_tokens = (int)d;
    if ((rc = opt_number(o, "max_completion_tokens", 1, 1e9, 1, &d, &given, e))) return rc;
    if (given) r->max_tokens = (int)d;
    if (opt_number(o, "n", 1, 1, 1, &d, &given, e)) {
        serve_error_set(e, 400, "invalid_request_error", NULL, "n", "only n = 1 is supported");
        return UTIL_EINVAL;
    }
    return 0;
}

int serve_request_parse(serve_request *r, serve_kind kind, const char *body, size_t len,
                        const eng_sample_params *defaults, serve_error *e) {
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->sp = *defaults;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    int rc = UTIL_EINVAL;
    if (!o) {
        size_t at = end && end >= body ? (size_t)(end - body) : 0;
        serve_error_set(e, 400, "invalid_request_error", "invalid_json", NULL,
                        "request body is not valid JSON (at byte %zu)", at);
        return UTIL_EFORMAT;
    }
    if (!cJSON_IsObject(o)) {
        bad(e, NULL, "request body must be a JSON object");
        goto done;
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
    if (model && !cJSON_IsNull(model)) {
        if (!cJSON_IsString(model)) {
            bad(e, "model", "'model' must be a string");
            goto done;
        }
        if (!(r->model = dup_str(model->valuestring))) {
            rc = oom(e);
            goto done;
        }
    }
    if (kind == SERVE_CHAT) {
        if ((rc = parse_messages(r, cJSON_GetObjectItemCaseSensitive(o, "messages"), e))) goto done;
    } else {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "prompt");
        if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 1) p = cJSON_GetArrayItem(p, 0);
        if (!cJSON_IsString(p)) {
            bad(e, "prompt", "'prompt' must be a string");
            goto done;
        }
        if (!(r->prompt = dup_str(p->valuestring))) {
            rc = oom(e);
            goto done;
        }
    }
    if ((rc = parse_sampling(r, o, e)) || (rc = opt_bool(o, "stream", &r->stream, e))) goto done;
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(o, "stream_options");
    if (so && !cJSON_IsNull(so)) {
        if (!cJSON_IsObject(so)) {
            bad(e, "stream_options", "'stream_options' must be an object");
            goto done;
        }
        if ((rc = opt_bool(so, "include_usage", &r->include_usage, e))) goto done;
    }
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(o, "stop");
    if (cJSON_IsArray(stop)) {
        const cJSON *s;
        cJSON_ArrayForEach(s, stop) if ((rc = add_stop(r, s, e))) goto done;
    } else if (stop && !cJSON_IsNull(stop) && (rc = add_stop(r, stop, e))) {
        goto done;
    }
    rc = UTIL_OK;
done:
    cJSON_Delete(o);
    if (rc) serve_request_release(r);
    return rc;
}

void serve_request_release(serve_request *r) {
    for (size_t i = 0; i < r->n_msgs; i++) {
        free((char *)r->msgs[i].role);
        free((char *)r->msgs[i].content);
    }
    free(r->msgs);
    free(r->model);
    free(r->prompt);
    for (int i = 0; i < r->n_stop; i++) free(r->stop[i]);
    memset(r, 0, sizeof *r);
}

/* --- responses -------------------------------------------------------------- */

const char *serve_finish_name(serve_finish f) { return f == SERVE_FINISH_LENGTH ? "length" : "stop"; }

static cJSON *usage_obj(const serve_job *j, int prompt_tokens) {
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "prompt_tokens", prompt_tokens);
    cJSON_AddNumberToObject(u, "completion_tokens", j->completion_tokens);
    cJSON_AddNumberToObject(u, "total_tokens", prompt_tokens + j->completion_tokens);
    cJSON *d = cJSON_AddObjectToObject(u, "prompt_tokens_details");
    cJSON_AddNumberToObject(d, "cached_tokens", j->cached_tokens);
    return u;
}

static cJSON *base_obj(const serve_resp_info *ri, int chunk) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", ri->id);
    cJSON_AddStringToObject(o, "object",
                            ri->kind == SERVE_COMPLETION ? "text_completion"
                            : chunk                      ? "chat.completion.chunk"
                                                         : "chat.completion");
    cJSON_AddNumberToObject(o, "created", (double)ri->created);
    cJSON_AddStringToObject(o, "model", ri->model);
    return o;
}

/* A choice with either text (completions) or a message/delta (chat). The
 * text is made valid UTF-8 (util_utf8_append_valid): a character that
 * max_tokens cut is one U+FFFD at the end of the last chunk or of the whole
 * text, never its raw bytes (chunks before the last end on characters). */
static cJSON *choice_obj(const serve_resp_info *ri, const char *text, size_t len, int chunk, int role,
                         const char *finish) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "index", 0);
    util_buf vb;
    util_buf_init(&vb);
    char *t = util_utf8_append_valid(&vb, text ? text : "", len) == (size_t)-1 ? NULL : vb.data;
    if (ri->kind == SERVE_COMPLETION) {
        cJSON_AddStringToObject(c, "text", t ? t : "");
        cJSON_AddNullToObject(c, "logprobs");
    } else {
        cJSON *m = cJSON_AddObjectToObject(c, chunk ? "delta" : "message");
        if (role) cJSON_AddStringToObject(m, "role", "assistant");
        if (!chunk || len || role) cJSON_AddStringToObject(m, "content", t ? t : "");
    }
    util_buf_release(&vb);
    if (finish)
        cJSON_AddStringToObject(c, "finish_reason", finish);
    else
        cJSON_AddNullToObject(c, "finish_reason");
    return c;
}

char *serve_json_final(const serve_resp_info *ri, const serve_job *j, int prompt_tokens) {
    cJSON *o = base_obj(ri, 0);
    cJSON *ch = cJSON_AddArrayToObject(o, "choices");
    cJSON_AddItemToArray(ch, choice_obj(ri, j->text.data, j->text.len, 0, 1, serve_finish_name(j->finish)));
    cJSON_AddItemToObject(o, "usage", usage_obj(j, prompt_tokens));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static int sse_emit(util_buf *out, cJSON *o) {
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!s) return UTIL_ENOMEM;
    int rc = util_buf_printf(out, "data: %s\n\n", s);
    free(s);
    return rc;
}

int serve_sse_delta(util_buf *out, const serve_resp_info *ri, const char *text, size_t len, int first) {
    cJSON *o = base_obj(ri, 1);
    cJSON *ch = cJSON_AddArrayToObject(o, "choices");
    cJSON_AddItemToArray(ch, choice_obj(ri, text, len, 1, first && ri->kind == SERVE_CHAT, NULL));
    return sse_emit(out, o);
}

int serve_sse_finish(util_buf *out, const serve_resp_info *ri, serve_finish f) {
    cJSON *o = base_obj(ri, 1);
    cJSON *ch = cJSON_AddArrayToObject(o, "choices");
    cJSON_AddItemToArray(ch, choice_obj(ri, "", 0, 1, 0, serve_finish_name(f)));
    return sse_emit(out, o);
}

int serve_sse_usage(util_buf *out, const serve_resp_info *ri, const serve_job *j, int prompt_tokens) {
    cJSON *o = base_obj(ri, 1);
    cJSON_AddArrayToObject(o, "choices");
    cJSON_AddItemToObject(o, "usage", usage_obj(j, prompt_tokens));
    return sse_emit(out, o);
}
