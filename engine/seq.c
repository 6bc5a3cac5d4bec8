/* engine/seq.c: a sequence: its KV pages (allocated as positions are filled),
 * its scratch activations, and evaluation of appended tokens in chunks of
 * n_batch. Results do not depend on n_batch (batch-invariant backend).
 * Does not share pages between sequences (that is the prefix cache's job). */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

static void scratch_release(eng_scratch *sc) {
    free(sc->x);
    free(sc->xb);
    free(sc->q);
    free(sc->k);
    free(sc->v);
    free(sc->att);
    free(sc->hb);
    free(sc->hb2);
    free(sc->logits);
    memset(sc, 0, sizeof *sc);
}

static float *falloc(size_t n) {
    void *p = NULL;
    return posix_memalign(&p, 64, n * sizeof(float) + 64) ? NULL : p;
}

static int scratch_init(eng_scratch *sc, const eng_hparams *hp, int n_batch) {
    size_t b = (size_t)n_batch, E = (size_t)hp->n_embd;
    size_t Q = (size_t)hp->n_head * (size_t)hp->head_dim, KV = (size_t)hp->n_kv_head * (size_t)hp->head_dim;
    size_t big = E > Q ? E : Q;
    sc->n_batch = n_batch;
    sc->x = falloc(b * E);
    sc->xb = falloc(b * big);
    sc->q = falloc(b * Q);
    sc->k = falloc(b * KV);
    sc->v = falloc(b * KV);
    sc->att = falloc(b * Q);
    sc->hb = falloc(b * (size_t)hp->n_ff);
    sc->hb2 = falloc(b * (size_t)hp->n_ff);
    sc->logits = falloc((size_t)hp->n_vocab);
    if (!sc->x || !sc->xb || !sc->q || !sc->k || !sc->v || !sc->att || !sc->hb || !sc->hb2 ||
        !sc->logits) {
        scratch_release(sc);
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

int eng_seq_new(eng_seq **out, eng_model *m, int n_ctx, util_err *err) {
    *out = NULL;
    if (n_ctx <= 0 || n_ctx > m->hp.n_ctx_train) n_ctx = m->hp.n_ctx_train;
    eng_seq *s = calloc(1, sizeof *s);
    if (!s) return util_err_set(err, UTIL_ENOMEM, "sequence: out of memory");
    s->m = m;
    s->n_ctx = n_ctx;
    s->n_batch = 64;
    int max_pages = (n_ctx + ENG_KV_PAGE_TOKENS - 1) / ENG_KV_PAGE_TOKENS;
    s->pages = calloc((size_t)max_pages, sizeof *s->pages);
    s->page_elems = (size_t)m->hp.n_layer * 2u * ENG_KV_PAGE_TOKENS * (size_t)m->hp.n_kv_head *
                    (size_t)m->hp.head_dim;
    s->kv.pages = s->pages;
    s->kv.page_tokens = ENG_KV_PAGE_TOKENS;
    s->kv.n_layer = m->hp.n_layer;
    s->kv.kv_dim = m->hp.n_kv_head * m->hp.head_dim;
    int rc = UTIL_OK;
    if (!s->pages || scratch_init(&s->sc, &m->hp, s->n_batch))
        rc = util_err_set(err, UTIL_ENOMEM, "sequence: out of memory for %d tokens", n_ctx);
    else
        rc = m->be->ops->reserve(m->be, n_ctx, err);
    if (rc) {
        eng_seq_free(s);
        return rc;
    }
    *out = s;
    return UTIL_OK;
}

void eng_seq_free(eng_seq *s) {
    if (!s) return;
    for (int i = 0; i < s->n_pages; i++) free(s->pages[i]);
    free(s->pages);
    scratch_release(&s->sc);
    free(s);
}

int eng_seq_len(const eng_seq *s) { return s->len; }
int eng_seq_n_ctx(const eng_seq *s) { return s->n_ctx; }

void eng_seq_truncate(eng_seq *s, int n) {
    if (n >= 0 && n < s->len) s->len = n;
}

void eng_seq_set_batch(eng_seq *s, int n_batch) {
    if (n_batch < 1) n_batch = 1;
    if (n_batch == s->sc.n_batch) return;
    eng_scratch sc;
    if (scratch_init(&sc, &s->m->hp, n_batch) == UTIL_OK) {
        scratch_release(&s->sc);
        s->sc = sc;
        s->n_batch = n_batch;
    }
}

void eng_seq_set_progress(eng_seq *s, eng_progress_fn fn, void *user) {
    s->progress = fn;
    s->progress_user = user;
}

/* Makes sure pages exist for positions < end. */
static int seq_grow(eng_seq *s, int end, util_err *err) {
    int need = (end + ENG_KV_PAGE_TOKENS - 1) / ENG_KV_PAGE_TOKENS;
    while (s->n_pages < need) {
        void *p = NULL;
        if (posix_memalign(&p, 64, s->page_elems * sizeof(uint16_t)))
            return util_err_set(err, UTIL_ENOMEM, "kv cache: out of memory at %d tokens", end);
        s->pages[s->n_pages++] = p;
    }
    return UTIL_OK;
}

int eng_seq_eval(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err) {
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "nothing to evaluate");
    if (s->len + n > s->n_ctx)
        return util_err_set(err, UTIL_ERANGE,
                            "prompt of %d tokens does not fit: %d already in context, limit %d",
                            n, s->len, s->n_ctx);
    int32_t nv = s->m->hp.n_vocab;
    for (int i = 0; i < n; i++)
        if (toks[i] < 0 || toks[i] >= nv)
            return util_err_set(err, UTIL_ERANGE, "token id %d outside the vocabulary (%d)", toks[i], nv);
    int rc = seq_grow(s, s->len + n, err);
    if (rc) return rc;
    for (int done = 0; done < n;) {
        int chunk = n - done < s->sc.n_batch ? n - done : s->sc.n_batch;
        int last = done + chunk == n;
        rc = eng_llama_forward(s, toks + done, chunk, last && logits, err);
        if (rc) return rc;
        s->len += chunk;
        done += chunk;
        if (s->progress && n > chunk) s->progress(s->progress_user, done, n);
    }
    if (logits) memcpy(logits, s->sc.logits, (size_t)nv * sizeof(float));
    return UTIL_OK;
}
