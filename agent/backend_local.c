/* agent/backend_local.c: the two backends that run on the embedded engine:
 * sampling (eng_generate) and replay (recorded replies evaluated into the
 * sequence after a real prefill, so cache accounting stays the engine's).
 * Does not tokenize or render the conversation (loop.c does). */
#include "backend.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/time.h"
#include "../util/fs.h"

void agent_backend_free(agent_backend *b) {
    if (b) b->free(b);
}

/* --- engine ---------------------------------------------------------------------- */

typedef struct engine_be {
    agent_backend b; /* first: the struct is freed through it */
    eng_seq *seq;
} engine_be;

typedef struct gen_ctx {
    const agent_gen_req *req;
    util_buf *text;
    int stopped;
} gen_ctx;

static int on_token(void *user, int32_t id, const char *text, size_t len) {
    (void)id;
    gen_ctx *g = user;
    util_buf_append(g->text, text, len);
    if (len && g->req->on_text && g->req->on_text(g->req->user, text, len)) g->stopped = 1;
    if (g->req->should_stop && g->req->should_stop(g->req->user)) g->stopped = 1;
    return g->stopped;
}

static int engine_generate(agent_backend *b, const agent_gen_req *rq, util_buf *text, agent_gen_res *res,
                           util_err *err) {
    engine_be *e = (engine_be *)b;
    gen_ctx g = {rq, text, 0};
    eng_gen_params gp = {.max_tokens = rq->max_tokens, .sample = *rq->sp, .on_token = on_token, .user = &g};
    if (rq->spec) gp.spec = *rq->spec;
    res->cached_reported = 1;
    return eng_generate(e->seq, rq->toks, rq->n_toks, &gp, &res->ids, &res->n_ids, &res->st, err);
}

static void engine_free(agent_backend *b) { free(b); }

int agent_backend_engine_new(agent_backend **out, eng_seq *seq, util_err *err) {
    engine_be *e = calloc(1, sizeof *e);
    if (!e) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    e->b = (agent_backend){
        .name = "engine", .uses_tokens = 1, .generate = engine_generate, .free = engine_free};
    e->seq = seq;
    *out = &e->b;
    return UTIL_OK;
}

/* --- replay ------------------------------------------------------------------------ */

typedef struct replay_be {
    agent_backend b;
    eng_model *m;
    eng_seq *seq;
    cJSON *replies;
    int next;
    char path[4096];
} replay_be;

/* The prompt is prefilled for real, the reply comes from the recording and
 * is evaluated into the sequence like a generated one. */
static int replay_generate(agent_backend *b, const agent_gen_req *rq, util_buf *text, agent_gen_res *res,
                           util_err *err) {
    replay_be *r = (replay_be *)b;
    eng_gen_stats *st = &res->st;
    const cJSON *rep = cJSON_GetArrayItem(r->replies, r->next);
    if (!cJSON_IsString(rep))
        return util_err_set(err, UTIL_ENOTFOUND, "replay '%s': no recorded output left for request %d",
                            r->path, r->next + 1);
    r->next++;
    res->cached_reported = 1;
    double t0 = util_now_ms();
    int cm = 0, cd = 0;
    int rc = eng_seq_set_tokens(r->seq, rq->toks, rq->n_toks, NULL, &cm, &cd, err);
    if (rc) return rc;
    st->prompt_tokens = rq->n_toks;
    st->cached_tokens_memory = cm;
    st->cached_tokens_disk = cd;
    st->cached_tokens = cm + cd;
    st->computed_tokens = rq->n_toks - st->cached_tokens;
    st->ttft_ms = st->prefill_ms = util_now_ms() - t0;
    st->prefill_tps = st->prefill_ms > 0 ? st->computed_tokens / (st->prefill_ms / 1e3) : 0;
    size_t k = 0;
    const char *s = rep->valuestring;
    rc = eng_tokenize(eng_model_tokenizer(r->m), s, strlen(s), 0, 0, &res->ids, &k, err);
    if (rc) return rc;
    double t1 = util_now_ms();
    if (k && (rc = eng_seq_eval(r->seq, res->ids, (int)k, NULL, err))) return rc;
    eng_seq_commit(r->seq);
    st->decode_ms = util_now_ms() - t1;
    st->generated_tokens = (int)k;
    st->decode_tps = k > 1 && st->decode_ms > 0 ? (double)(k - 1) / (st->decode_ms / 1e3) : 0;
    res->n_ids = (int)k;
    util_buf_puts(text, s);
    if (rq->on_text) rq->on_text(rq->user, s, strlen(s));
    return UTIL_OK;
}

static void replay_free(agent_backend *b) {
    replay_be *r = (replay_be *)b;
    cJSON_Delete(r->replies);
    free(r);
}

int agent_backend_replay_new(agent_backend **out, eng_model *m, eng_seq *seq, const char *path,
                             util_err *err) {
    char *text = NULL;
    int rc = util_read_file(&text, NULL, path, err);
    if (rc) return rc;
    replay_be *r = calloc(1, sizeof *r);
    if (!r) {
        free(text);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    r->b = (agent_backend){
        .name = "replay", .uses_tokens = 1, .generate = replay_generate, .free = replay_free};
    r->m = m;
    r->seq = seq;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->replies = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsArray(r->replies)) {
        replay_free(&r->b);
        return util_err_set(err, UTIL_EFORMAT, "replay '%s': not a JSON array of strings", path);
    }
    *out = &r->b;
    return UTIL_OK;
}
