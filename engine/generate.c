/* engine/generate.c: one generation on one sequence, step by step (eng_gen:
 * begin, prefill in one call or in chunks, decode steps, end), owning the
 * sampler, the streaming detokenizer, the stop checks and the timing every
 * generation reports (TTFT, prefill and decode tokens/s); eng_generate is
 * those steps in a loop. Does not render chat templates, apply stop strings
 * or print anything. */
#include <stdlib.h>
#include <string.h>

#include "../util/time.h"
#include "model_impl.h"

const char *eng_stop_reason_name(eng_stop_reason r) {
    switch (r) {
    case ENG_STOP_EOG: return "eog";
    case ENG_STOP_MAX_TOKENS: return "max_tokens";
    case ENG_STOP_CONTEXT_FULL: return "context_full";
    case ENG_STOP_CANCELED: return "canceled";
    case ENG_STOP_ERROR: return "error";
    }
    return "unknown";
}

/* --- the generation state ------------------------------------------------ */

struct eng_gen {
    eng_seq *s;
    int32_t *prompt; /* a copy */
    int n_prompt;
    int prefilled; /* prompt tokens the sequence holds */
    int max_tokens;
    eng_sampler *smp;
    float *logits;   /* n_vocab: what the next step samples from */
    int32_t pending; /* sampled, not yet evaluated (-1: none); see eng_gen_step */
    eng_detok_stream ds;
    char *text; /* the last step's text (or the flushed tail) */
    size_t text_cap;
    int sampled; /* a token was sampled (ttft_ms is set) */
    int done;
    eng_gen_stats st;  /* counts and prefill figures; the rest filled by gen_stats */
    double t_prefill0; /* first prefill call (0: none yet) */
    double t_decode0;  /* first sample */
    double t_end;      /* when it ended (0: running) */
};

static void gen_finish(eng_gen *g, eng_stop_reason why) {
    if (g->done) return;
    g->done = 1;
    g->st.stop_reason = why;
    g->t_end = util_now_ms();
    if (g->prefilled < g->n_prompt && g->t_prefill0 > 0) g->st.prefill_ms = g->t_end - g->t_prefill0;
}

/* The stats so far: decode figures up to now, or up to the end. */
static eng_gen_stats gen_stats(const eng_gen *g) {
    eng_gen_stats st = g->st;
    double end = g->t_end > 0 ? g->t_end : util_now_ms();
    st.cached_tokens_memory = st.cached_tokens - st.cached_tokens_disk;
    st.computed_tokens = g->prefilled - st.cached_tokens;
    st.decode_ms = g->sampled ? end - g->t_decode0 : 0;
    st.prefill_tps = st.prefill_ms > 0 ? st.computed_tokens / (st.prefill_ms / 1e3) : 0;
    st.decode_tps = st.generated_tokens > 1 && st.decode_ms > 0
                        ? (st.generated_tokens - 1) / (st.decode_ms / 1e3)
                        : 0;
    return st;
}

int eng_gen_begin(eng_gen **out, eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p,
                  util_err *err) {
    *out = NULL;
    if (n_prompt <= 0) return util_err_set(err, UTIL_EINVAL, "empty prompt");
    if (n_prompt >= s->n_ctx)
        return util_err_set(err, UTIL_ERANGE, "prompt is %d tokens long; the context limit is %d tokens",
                            n_prompt, s->n_ctx);
    int32_t nv = s->m->hp.n_vocab;
    eng_gen *g = calloc(1, sizeof *g);
    if (!g) return util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
    g->s = s;
    g->n_prompt = n_prompt;
    g->max_tokens = p->max_tokens > 0 ? p->max_tokens : s->n_ctx;
    g->pending = -1;
    g->st.prompt_tokens = n_prompt;
    g->st.stop_reason = ENG_STOP_MAX_TOKENS;
    eng_detok_stream_init(&g->ds);
    g->prompt = malloc((size_t)n_prompt * sizeof *g->prompt);
    g->logits = malloc((size_t)nv * sizeof(float));
    int rc = UTIL_OK;
    if (!g->prompt || !g->logits)
        rc = util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
    else
        rc = eng_sampler_new(&g->smp, &p->sample, nv, err);
    if (rc) {
        free(g->prompt);
        free(g->logits);
        free(g);
        return rc;
    }
    memcpy(g->prompt, prompt, (size_t)n_prompt * sizeof *prompt);
    for (int i = 0; i < n_prompt; i++) eng_sampler_accept(g->smp, prompt[i]);
    *out = g;
    return UTIL_OK;
}

/* --- prefill --------------------------------------------------------------- */

int eng_gen_prefill(eng_gen *g, int n, util_err *err) {
    if (g->done) return util_err_set(err, UTIL_EINVAL, "generate: the generation has ended");
    int left = g->n_prompt - g->prefilled;
    if (left == 0) return UTIL_OK;
    int target = n <= 0 || n >= left ? g->n_prompt : g->prefilled + n;
    if (g->t_prefill0 == 0) g->t_prefill0 = util_now_ms();
    int cm = 0, cd = 0;
    int rc = eng_seq_set_tokens(g->s, g->prompt, target, target == g->n_prompt ? g->logits : NULL, &cm, &cd,
                                err);
    if (rc) {
        gen_finish(g, ENG_STOP_ERROR);
        return rc;
    }
    /* Each chunk reuses what the sequence holds or what the cache gained
     * meanwhile: only tokens beyond what was already prefilled count, once. */
    int gained = cm + cd - g->prefilled;
    if (gained > 0) {
        g->st.cached_tokens += gained;
        g->st.cached_tokens_disk += cd < gained ? cd : gained;
    }
    g->prefilled = target;
    if (target == g->n_prompt) g->st.prefill_ms = util_now_ms() - g->t_prefill0;
    return UTIL_OK;
}

int eng_gen_prompt_left(const eng_gen *g) { return g->n_prompt - g->prefilled; }

/* --- decode steps ---------------------------------------------------------- */

/* The complete characters of token id's piece into g->text. */
static int gen_detok(eng_gen *g, int32_t id, size_t *len, util_err *err) {
    const char *piece = "";
    size_t plen = 0;
    eng_token_piece(g->s->m->tok, id, 0, &piece, &plen);
    if (plen + 16 > g->text_cap) {
        char *t = realloc(g->text, plen + 16);
        if (!t) return util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
        g->text = t;
        g->text_cap = plen + 16;
    }
    *len = eng_detok_stream_feed(&g->ds, piece, plen, g->text);
    return UTIL_OK;
}

int eng_gen_step(eng_gen *g, eng_gen_token *out, util_err *err) {
    memset(out, 0, sizeof *out);
    out->id = -1;
    out->text = "";
    if (g->done) return util_err_set(err, UTIL_EINVAL, "generate: the generation has ended");
    int rc;
    if (g->prefilled < g->n_prompt && (rc = eng_gen_prefill(g, 0, err))) return rc;
    if (g->pending >= 0) {
        /* the previous step's token, evaluated only now that it is needed */
        if ((rc = eng_seq_eval(g->s, &g->pending, 1, g->logits, err))) {
            gen_finish(g, ENG_STOP_ERROR);
            return rc;
        }
        g->pending = -1;
    }
    int32_t id = eng_sampler_sample(g->smp, g->logits);
    if (!g->sampled) {
        double now = util_now_ms();
        g->sampled = 1;
        g->st.ttft_ms = now - g->t_prefill0;
        g->t_decode0 = now;
    }
    eng_sampler_accept(g->smp, id);
    out->id = id;
    if (eng_tokenizer_is_eog(g->s->m->tok, id)) {
        gen_finish(g, ENG_STOP_EOG);
    } else {
        g->st.generated_tokens++;
        size_t len = 0;
        if ((rc = gen_detok(g, id, &len, err))) {
            gen_finish(g, ENG_STOP_ERROR);
            return rc;
        }
        out->text = g->text;
        out->len = len;
        if (g->st.generated_tokens >= g->max_tokens)
            gen_finish(g, ENG_STOP_MAX_TOKENS);
        else if (g->s->len >= g->s->n_ctx)
            gen_finish(g, ENG_STOP_CONTEXT_FULL);
        else
            g->pending = id;
    }
    out->done = g->done;
    out->stop = g->st.stop_reason;
    return UTIL_OK;
}

void eng_gen_cancel(eng_gen *g) { gen_finish(g, ENG_STOP_CANCELED); }

size_t eng_gen_flush(eng_gen *g, const char **text) {
    *text = "";
    if (g->ds.npend <= 0) return 0;
    if (g->text_cap < 16) {
        char *t = realloc(g->text, 16);
        if (!t) return 0;
        g->text = t;
        g->text_cap = 16;
    }
    *text = g->text;
    return eng_detok_stream_flush(&g->ds, g->text);
}

eng_gen_stats eng_gen_get_stats(const eng_gen *g) { return gen_stats(g); }

void eng_gen_end(eng_gen *g, eng_gen_stats *stats) {
    if (!g) return;
    gen_finish(g, ENG_STOP_CANCELED); /* no-op when a step or an error ended it */
    eng_seq_commit(g->s);             /* the reply is the next turn's prefix */
    if (stats) *stats = gen_stats(g);
    eng_sampler_free(g->smp);
    free(g->text);
    free(g->logits);
    free(g->prompt);
    free(g);
}

/* --- the whole generation in one call -------------------------------------- */

int eng_generate(eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p, int32_t **out_ids,
                 int *n_out, eng_gen_stats *stats, util_err *err) {
    if (out_ids) *out_ids = NULL;
    if (n_out) *n_out = 0;
    eng_gen *g = NULL;
    int rc = eng_gen_begin(&g, s, prompt, n_prompt, p, err);
    if (rc) {
        if (stats) {
            memset(stats, 0, sizeof *stats);
            stats->prompt_tokens = n_prompt;
            stats->stop_reason = ENG_STOP_ERROR;
        }
        return rc;
    }
    int32_t *ids = NULL;
    int n = 0, cap = 0, canceled = 0;
    rc = eng_gen_prefill(g, 0, err);
    while (rc == UTIL_OK) {
        eng_gen_token t;
        if ((rc = eng_gen_step(g, &t, err))) break;
        if (t.done && t.stop == ENG_STOP_EOG) break;
        if (n == cap) {
            int32_t *more = realloc(ids, (size_t)(cap ? cap * 2 : 64) * sizeof *ids);
            if (!more) {
                rc = util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
                break;
            }
            ids = more;
            cap = cap ? cap * 2 : 64;
        }
        ids[n++] = t.id;
        if (p->on_token && p->on_token(p->user, t.id, t.text, t.len)) {
            canceled = 1;
            eng_gen_cancel(g);
            break;
        }
        if (t.done) break;
    }
    if (rc == UTIL_OK && p->on_token) {
        const char *tail;
        size_t k = eng_gen_flush(g, &tail);
        if (k) p->on_token(p->user, -1, tail, k);
    }
    eng_gen_stats st;
    eng_gen_end(g, &st);
    if (rc)
        st.stop_reason = ENG_STOP_ERROR;
    else if (canceled)
        st.stop_reason = ENG_STOP_CANCELED; /* even on the last token */
    if (stats) *stats = st;
    if (rc == UTIL_OK) {
        if (out_ids) {
            *out_ids = ids;
            ids = NULL;
        }
        if (n_out) *n_out = n;
    }
    free(ids);
    return rc;
}

/* --- several generations in one forward pass -------------------------------- */

int eng_gen_step_batch(eng_gen **gens, int n, eng_batch *b, int chunk, eng_gen_token *out, util_err *err) {
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "generate: no generations to step");
    for (int i = 0; i < n; i++)
        if (gens[i]->done) return util_err_set(err, UTIL_EINVAL, "generate: the generation has ended");
    eng_batch_item *it = malloc((size_t)n * sizeof *it);
    int *cached = malloc((size_t)n * 3 * sizeof *cached); /* memory, disk, target per generation */
    if (!it || !cached) {
        free(it);
        free(cached);
        return util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
    }
    /* each generation's part: its pending token, or its next prompt chunk
     * past what it holds or the cache offers (counted as eng_gen_prefill) */
    int k = 0, rc = UTIL_OK;
    for (int i = 0; i < n && rc == UTIL_OK; i++) {
        eng_gen *g = gens[i];
        int *c = &cached[3 * i];
        c[2] = -1;
        if (g->prefilled < g->n_prompt) {
            if (g->t_prefill0 == 0) g->t_prefill0 = util_now_ms();
            double t0 = util_now_ms();
            if ((rc = eng_seq_reuse(g->s, g->prompt, g->n_prompt, &c[0], &c[1], err))) break;
            g->st.match_ms += util_now_ms() - t0;
            int from = eng_seq_len(g->s);
            c[2] = chunk <= 0 || chunk >= g->n_prompt - from ? g->n_prompt : from + chunk;
            it[k++] = (eng_batch_item){.seq = g->s,
                                       .toks = g->prompt + from,
                                       .n_tok = c[2] - from,
                                       .prompt = 1,
                                       .logits = c[2] == g->n_prompt ? g->logits : NULL};
        } else if (g->pending >= 0) {
            it[k++] = (eng_batch_item){.seq = g->s, .toks = &g->pending, .n_tok = 1, .logits = g->logits};
        }
    }
    if (rc == UTIL_OK && k > 0) rc = eng_batch_eval(b, it, k, err);
    if (rc && n == 1) gen_finish(gens[0], ENG_STOP_ERROR);
    /* then each samples, as eng_gen_step (with nothing left to evaluate) */
    for (int i = 0; i < n && rc == UTIL_OK; i++) {
        eng_gen *g = gens[i];
        const int *c = &cached[3 * i];
        if (c[2] >= 0) {
            eng_seq_commit(g->s);
            int gained = c[0] + c[1] - g->prefilled;
            if (gained > 0) {
                g->st.cached_tokens += gained;
                g->st.cached_tokens_disk += c[1] < gained ? c[1] : gained;
            }
            g->prefilled = c[2];
            if (c[2] == g->n_prompt) g->st.prefill_ms = util_now_ms() - g->t_prefill0;
        }
        g->pending = -1;
        if (g->prefilled < g->n_prompt) { /* still prefilling: no token yet */
            memset(&out[i], 0, sizeof out[i]);
            out[i].id = -1;
            out[i].text = "";
            continue;
        }
        rc = eng_gen_step(g, &out[i], err);
    }
    free(it);
    free(cached);
    return rc;
}
