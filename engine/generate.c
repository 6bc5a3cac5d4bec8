/* engine/generate.c: prefill + sample + decode for one sequence, with the
 * timing every generation reports (TTFT, prefill and decode tokens/s).
 * Does not render chat templates or print anything. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_impl.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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

int eng_generate(eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p,
                 int32_t **out_ids, int *n_out, eng_gen_stats *stats, util_err *err) {
    eng_gen_stats st;
    memset(&st, 0, sizeof st);
    if (out_ids) *out_ids = NULL;
    if (n_out) *n_out = 0;
    const eng_model *m = s->m;
    int32_t nv = m->hp.n_vocab;
    if (n_prompt >= s->n_ctx)
        return util_err_set(err, UTIL_ERANGE, "prompt is %d tokens long; the context limit is %d tokens",
                            n_prompt, s->n_ctx);
    int max = p->max_tokens > 0 ? p->max_tokens : s->n_ctx;
    float *logits = malloc((size_t)nv * sizeof(float));
    int32_t *ids = malloc((size_t)(max > 0 ? max : 1) * sizeof(int32_t));
    eng_sampler *smp = NULL;
    char *text = NULL; /* the current token's complete characters (on_token only) */
    size_t text_cap = 0;
    int n = 0;
    double td = 0;
    int rc = UTIL_OK;
    if (!logits || !ids) {
        rc = util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
        goto done;
    }
    if ((rc = eng_sampler_new(&smp, &p->sample, nv, err))) goto done;
    for (int i = 0; i < n_prompt; i++) eng_sampler_accept(smp, prompt[i]);

    st.prompt_tokens = n_prompt;
    double t0 = now_ms();
    rc = eng_seq_set_tokens(s, prompt, n_prompt, logits, &st.cached_tokens_memory,
                            &st.cached_tokens_disk, err);
    if (rc) goto done;
    st.cached_tokens = st.cached_tokens_memory + st.cached_tokens_disk;
    st.computed_tokens = n_prompt - st.cached_tokens;
    double t1 = now_ms();
    st.prefill_ms = t1 - t0;

    const eng_tokenizer *tok = m->tok;
    eng_detok_stream ds;
    eng_detok_stream_init(&ds);
    st.stop_reason = ENG_STOP_MAX_TOKENS;
    td = t1;
    while (n < max) {
        int32_t id = eng_sampler_sample(smp, logits);
        if (n == 0) {
            st.ttft_ms = now_ms() - t0;
            td = now_ms();
        }
        eng_sampler_accept(smp, id);
        if (eng_tokenizer_is_eog(tok, id)) {
            st.stop_reason = ENG_STOP_EOG;
            break;
        }
        ids[n++] = id;
        if (p->on_token) {
            const char *piece;
            size_t plen;
            eng_token_piece(tok, id, 0, &piece, &plen);
            if (plen + 16 > text_cap) {
                char *t = realloc(text, plen + 16);
                if (!t) {
                    rc = util_err_set(err, UTIL_ENOMEM, "generate: out of memory");
                    break;
                }
                text = t;
                text_cap = plen + 16;
            }
            size_t k = eng_detok_stream_feed(&ds, piece, plen, text);
            if (p->on_token(p->user, id, text, k)) {
                st.stop_reason = ENG_STOP_CANCELED;
                break;
            }
        }
        if (n == max) break;
        if (s->len >= s->n_ctx) {
            st.stop_reason = ENG_STOP_CONTEXT_FULL;
            break;
        }
        if ((rc = eng_seq_eval(s, &id, 1, logits, err))) break;
    }
    /* a decode that failed part way ends here too: the stats say how far it got */
    if (rc) st.stop_reason = ENG_STOP_ERROR;
    if (rc == UTIL_OK && p->on_token && text_cap) {
        size_t k = eng_detok_stream_flush(&ds, text);
        if (k) p->on_token(p->user, -1, text, k);
    }
    if (rc == UTIL_OK) eng_seq_commit(s); /* the reply is the next turn's prefix */
    st.generated_tokens = n;
    st.decode_ms = now_ms() - td;
    st.prefill_tps = st.prefill_ms > 0 ? st.computed_tokens / (st.prefill_ms / 1e3) : 0;
    st.decode_tps = n > 1 && st.decode_ms > 0 ? (n - 1) / (st.decode_ms / 1e3) : 0;
    if (rc == UTIL_OK && out_ids) {
        *out_ids = ids;
        ids = NULL;
    }
    if (rc == UTIL_OK && n_out) *n_out = n;
done:
    if (rc) st.stop_reason = ENG_STOP_ERROR;
    if (stats) *stats = st;
    free(text);
    eng_sampler_free(smp);
    free(ids);
    free(logits);
    return rc;
}
