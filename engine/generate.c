/* engine/generate.c: one generation on one sequence, step by step (eng_gen:
 * begin, prefill in one call or in chunks, decode steps, end), owning the
 * sampler, the streaming detokenizer, the stop checks and the timing every
 * generation reports (TTFT, prefill and decode tokens/s), and speculative
 * decoding (--spec ngram: draft, verify in one forward, keep what sampling
 * picked); eng_generate is those steps in a loop. Does not render chat
 * templates, apply stop strings or print anything. */
#include <stdlib.h>
#include <string.h>

#include "../util/time.h"
#include "model_impl.h"
#include "spec.h"

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
    /* speculative decoding (engine.h eng_spec_params); see gen_verify */
    eng_spec_params spec; /* mode NONE: plain decoding */
    int32_t *hist;        /* n_ctx: the sequence's tokens + pending, for the drafter */
    int32_t *draft;       /* max_draft + 1: pending, then the drafted tokens */
    float *rows;          /* (max_draft + 1) x n_vocab: logits of each */
    int32_t *queue;       /* max_draft + 1: tokens sampled ahead, returned one a step */
    int nq, qi;           /* queue[qi..nq) not returned yet */
    int n_returned;       /* tokens a step returned (an end-of-generation one too) */
};

int eng_spec_mode_parse(eng_spec_mode *out, const char *name, util_err *err) {
    if (strcmp(name, "none") == 0)
        *out = ENG_SPEC_NONE;
    else if (strcmp(name, "ngram") == 0)
        *out = ENG_SPEC_NGRAM;
    else
        return util_err_set(err, UTIL_EINVAL, "speculative decoding '%s': expected 'ngram' or 'none'", name);
    return UTIL_OK;
}

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
    st.spec_accept_rate = st.spec_drafted > 0 ? (double)st.spec_accepted / st.spec_drafted : 0;
    st.tokens_per_forward = st.decode_forwards > 0
                                ? (double)(st.decode_forwards + st.spec_accepted) / st.decode_forwards
                                : 0;
    return st;
}

/* The speculative-decoding buffers, when p asks for it; 0 or UTIL_ENOMEM. */
static int gen_spec_init(eng_gen *g, const eng_spec_params *p) {
    g->spec = *p;
    if (p->mode != ENG_SPEC_NGRAM) {
        g->spec.mode = ENG_SPEC_NONE;
        return UTIL_OK;
    }
    if (g->spec.max_draft <= 0) g->spec.max_draft = ENG_SPEC_DEFAULT_DRAFT;
    if (g->spec.max_draft > ENG_SPEC_MAX_DRAFT) g->spec.max_draft = ENG_SPEC_MAX_DRAFT;
    if (g->spec.ngram <= 0) g->spec.ngram = ENG_SPEC_DEFAULT_NGRAM;
    size_t k = (size_t)g->spec.max_draft + 1;
    g->hist = malloc((size_t)g->s->n_ctx * sizeof *g->hist);
    g->draft = malloc(k * sizeof *g->draft);
    g->queue = malloc(k * sizeof *g->queue);
    g->rows = malloc(k * (size_t)g->s->m->hp.n_vocab * sizeof *g->rows);
    return g->hist && g->draft && g->queue && g->rows ? UTIL_OK : UTIL_ENOMEM;
}

static void gen_spec_release(eng_gen *g) {
    free(g->hist);
    free(g->draft);
    free(g->queue);
    free(g->rows);
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
    if (!g->prompt || !g->logits || gen_spec_init(g, &p->spec))
        rc = util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
    else
        rc = eng_sampler_new(&g->smp, &p->sample, nv, err);
    if (rc) {
        gen_spec_release(g);
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

/* --- speculative decoding ------------------------------------------------------ */

/* Drafts after the pending token, evaluates pending + draft in one forward and
 * samples row by row while sampling picks the drafted token: the tokens
 * sampled (each the token plain decoding would have sampled there, with the
 * same logits and RNG draws) go to the queue, already given to the sampler's
 * history; the sequence keeps pending + the accepted drafts. Returns 0 with
 * nothing queued when there was no draft (the caller decodes plainly). */
static int gen_verify(eng_gen *g, util_err *err) {
    eng_seq *s = g->s;
    int nv = s->m->hp.n_vocab, len = s->len;
    /* no more tokens than max_tokens allows, and room in the context */
    int k = g->spec.max_draft, room = s->n_ctx - len - 1, left = g->max_tokens - g->st.generated_tokens - 1;
    k = k < room ? k : room;
    k = k < left ? k : left;
    /* pending + drafts in one chunk: a sliding-window sequence trims its old
     * pages only between chunks, so truncating back to any row stays possible */
    k = k < s->sc.n_batch - 1 ? k : s->sc.n_batch - 1;
    if (k < 1) return UTIL_OK;
    memcpy(g->hist, s->toks, (size_t)len * sizeof *g->hist);
    g->hist[len] = g->pending;
    k = eng_spec_ngram_draft(g->hist, len + 1, g->spec.ngram, k, g->draft + 1);
    if (k < 1) return UTIL_OK;
    g->draft[0] = g->pending;
    int rc = eng_seq_eval_all(s, g->draft, k + 1, g->rows, err);
    if (rc) return rc;
    g->st.decode_forwards++;
    g->st.spec_drafted += k;
    int acc = 0;
    g->nq = g->qi = 0;
    for (int i = 0; i <= k; i++) {
        int32_t id = eng_sampler_sample(g->smp, g->rows + (size_t)i * (size_t)nv);
        eng_sampler_accept(g->smp, id);
        g->queue[g->nq++] = id;
        if (i == k || id != g->draft[i + 1] || eng_tokenizer_is_eog(s->m->tok, id)) break;
        acc++;
    }
    g->st.spec_accepted += acc;
    eng_seq_truncate(s, len + 1 + acc); /* pending and the accepted drafts */
    if (s->len != len + 1 + acc)        /* the KV of that point was released (see eng_seq_eval_all) */
        return util_err_set(err, UTIL_EINTERNAL, "speculative decoding: cannot return to position %d",
                            len + 1 + acc);
    g->pending = -1;
    return UTIL_OK;
}

/* The next token: one sampled ahead by a verify, or sampled now after
 * evaluating the pending token (a plain decode step); given to the sampler's
 * history either way. */
static int gen_next(eng_gen *g, int32_t *id, util_err *err) {
    int rc;
    if (g->qi < g->nq) {
        *id = g->queue[g->qi++];
        return UTIL_OK;
    }
    if (g->pending >= 0 && g->spec.mode == ENG_SPEC_NGRAM) {
        if ((rc = gen_verify(g, err))) return rc;
        if (g->qi < g->nq) {
            *id = g->queue[g->qi++];
            return UTIL_OK;
        }
    }
    if (g->pending >= 0) {
        /* the previous step's token, evaluated only now that it is needed */
        if ((rc = eng_seq_eval(g->s, &g->pending, 1, g->logits, err))) return rc;
        g->pending = -1;
        g->st.decode_forwards++;
    }
    *id = eng_sampler_sample(g->smp, g->logits);
    eng_sampler_accept(g->smp, *id);
    return UTIL_OK;
}

/* --- decode steps (continued) ---------------------------------------------------- */

int eng_gen_step(eng_gen *g, eng_gen_token *out, util_err *err) {
    memset(out, 0, sizeof *out);
    out->id = -1;
    out->text = "";
    if (g->done) return util_err_set(err, UTIL_EINVAL, "generate: the generation has ended");
    int rc;
    if (g->prefilled < g->n_prompt && (rc = eng_gen_prefill(g, 0, err))) return rc;
    int32_t id;
    if ((rc = gen_next(g, &id, err))) {
        gen_finish(g, ENG_STOP_ERROR);
        return rc;
    }
    g->n_returned++;
    if (!g->sampled) {
        double now = util_now_ms();
        g->sampled = 1;
        g->st.ttft_ms = now - g->t_prefill0;
        g->t_decode0 = now;
    }
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
        /* positions plain decoding would hold now: the prompt and every
         * token before this one (a verify may have computed more) */
        if (g->st.generated_tokens >= g->max_tokens)
            gen_finish(g, ENG_STOP_MAX_TOKENS);
        else if (g->n_prompt + g->n_returned - 1 >= g->s->n_ctx)
            gen_finish(g, ENG_STOP_CONTEXT_FULL);
        else if (g->qi == g->nq)
            g->pending = id; /* a queued token is evaluated already */
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
    /* a verify may have computed tokens past the last one returned: keep what
     * plain decoding would hold */
    int plain = g->n_prompt + g->n_returned - 1;
    if (g->spec.mode == ENG_SPEC_NGRAM && g->n_returned > 0 && g->s->len > plain)
        eng_seq_truncate(g->s, plain);
    eng_seq_commit(g->s); /* the reply is the next turn's prefix */
    if (stats) *stats = gen_stats(g);
    gen_spec_release(g);
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

/* Whether generation i, about to prefill prompt[from, to), should wait a step
 * because an earlier generation j of the same step computes at least half of
 * that chunk itself (the same tokens from the same start: a shared prompt
 * prefix, committed to the cache after the step, which i then reuses): N
 * identical prompts arriving together compute the prefix once, not N times.
 * Bounded: i waits only while another computes tokens it shares, each step
 * moving that one a chunk further; never with reuse off (--no-cache). */
static int gen_rides_on(eng_gen **gens, const int *cached, int i, int from, int to) {
    const eng_gen *g = gens[i];
    if (!eng_kvcache_reuse(g->s->m->cache)) return 0;
    for (int j = 0; j < i; j++) {
        const eng_gen *o = gens[j];
        int o_to = cached[4 * j + 2];
        if (o_to < 0 || o->s->m != g->s->m) continue; /* not prefilling this step */
        int o_from = eng_seq_len(o->s);
        if (o_from > from || o_to <= from) continue;
        int n = o_to < g->n_prompt ? o_to : g->n_prompt, shared = 0;
        while (shared < n && o->prompt[shared] == g->prompt[shared]) shared++;
        if (2 * (shared - from) >= to - from) return 1;
    }
    return 0;
}

int eng_gen_step_batch(eng_gen **gens, int n, eng_batch *b, int chunk, eng_gen_token *out, util_err *err) {
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "generate: no generations to step");
    for (int i = 0; i < n; i++)
        if (gens[i]->done) return util_err_set(err, UTIL_EINVAL, "generate: the generation has ended");
    eng_batch_item *it = malloc((size_t)n * sizeof *it);
    int *cached = malloc((size_t)n * 4 * sizeof *cached); /* memory, disk, target, batched decode */
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
        int *c = &cached[4 * i];
        c[2] = -1;
        c[3] = 0;
        if (g->prefilled < g->n_prompt) {
            if (g->t_prefill0 == 0) g->t_prefill0 = util_now_ms();
            double t0 = util_now_ms();
            if ((rc = eng_seq_reuse(g->s, g->prompt, g->n_prompt, &c[0], &c[1], err))) break;
            g->st.match_ms += util_now_ms() - t0;
            int from = eng_seq_len(g->s);
            c[2] = chunk <= 0 || chunk >= g->n_prompt - from ? g->n_prompt : from + chunk;
            if (gen_rides_on(gens, cached, i, from, c[2])) {
                c[2] = -1; /* waits a step, then reuses that chunk from the cache */
                continue;
            }
            it[k++] = (eng_batch_item){.seq = g->s,
                                       .toks = g->prompt + from,
                                       .n_tok = c[2] - from,
                                       .prompt = 1,
                                       .logits = c[2] == g->n_prompt ? g->logits : NULL};
        } else if (g->pending >= 0 && g->spec.mode == ENG_SPEC_NONE) {
            /* (a speculative generation verifies its drafts alone, in eng_gen_step) */
            it[k++] = (eng_batch_item){.seq = g->s, .toks = &g->pending, .n_tok = 1, .logits = g->logits};
            c[3] = 1;
        }
    }
    if (rc == UTIL_OK && k > 0) rc = eng_batch_eval(b, it, k, err);
    if (rc && n == 1) gen_finish(gens[0], ENG_STOP_ERROR);
    /* then each samples, as eng_gen_step (with nothing left to evaluate) */
    for (int i = 0; i < n && rc == UTIL_OK; i++) {
        eng_gen *g = gens[i];
        const int *c = &cached[4 * i];
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
        if (c[3]) { /* its pending token was evaluated in the batch */
            g->pending = -1;
            g->st.decode_forwards++;
        }
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
