/* engine/seq.c: a sequence: its page table (pages shared with the prefix
 * cache are read-only and copied before a write: copy-on-write), its tokens,
 * its scratch activations (in backend memory), and evaluation of tokens in
 * chunks of n_batch. Results do not depend on n_batch or on which pages came
 * from the cache (batch-invariant backend). The tree lives in kvcache.c.
 * Sliding-window layers (m->kv_split) have a page table of their own holding
 * only the window of the next position: older pages are released as it
 * moves, so such a sequence can resume only where its window is held. */
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

enum { P = ENG_KV_PAGE_TOKENS };

/* --- scratch ------------------------------------------------------------ */

static void scratch_release(eng_backend *be, eng_scratch *sc) {
    float *bufs[] = {sc->x, sc->xb, sc->q, sc->k, sc->v, sc->att, sc->hb, sc->hb2, sc->logits, sc->ex};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) be->ops->release(be, bufs[i]);
    memset(sc, 0, sizeof *sc);
}

/* logits_rows: 1 (the last token's logits) or n_batch (eng_seq_eval_all). */
static int scratch_init(eng_backend *be, eng_scratch *sc, const eng_hparams *hp, int n_batch,
                        int logits_rows) {
#define falloc(n) ((float *)be->ops->alloc(be, (n) * sizeof(float) + 64))
    size_t b = (size_t)n_batch, E = (size_t)hp->n_embd;
    size_t Q = (size_t)hp->n_head * (size_t)hp->head_dim, KV = (size_t)hp->n_kv_head * (size_t)hp->head_dim;
    size_t big = E > Q ? E : Q;
    sc->n_batch = n_batch;
    sc->logits_rows = logits_rows;
    sc->x = falloc(b * E);
    sc->xb = falloc(b * big);
    sc->q = falloc(b * Q);
    sc->k = falloc(b * KV);
    sc->v = falloc(b * KV);
    sc->att = falloc(b * Q);
    sc->hb = falloc(b * (size_t)hp->n_ff);
    sc->hb2 = falloc(b * (size_t)hp->n_ff);
    sc->logits = falloc((size_t)logits_rows * (size_t)hp->n_vocab);
    sc->ex = hp->scratch_extra > 0 ? falloc(b * (size_t)hp->scratch_extra) : NULL;
    if (!sc->x || !sc->xb || !sc->q || !sc->k || !sc->v || !sc->att || !sc->hb || !sc->hb2 || !sc->logits ||
        (hp->scratch_extra > 0 && !sc->ex)) {
        scratch_release(be, sc);
        return UTIL_ENOMEM;
    }
    return UTIL_OK;
#undef falloc
}

/* --- lifecycle ---------------------------------------------------------- */

/* StreamingLLM (m->kv_window > 0): the sequence keeps sinks + window
 * positions; H2O (m->kv_h2o_budget > 0): budget slots. */
static int stream_init(eng_seq *s, util_err *err) {
    const eng_model *m = s->m;
    if (m->kv_h2o_budget) {
        if (m->kv_h2o_budget > s->n_ctx)
            return util_err_set(err, UTIL_EINVAL, "--kv-budget-tokens %d exceeds the context of %d tokens",
                                m->kv_h2o_budget, s->n_ctx);
        int rc = eng_kvstream_new_h2o(&s->stream, m->kv_h2o_budget, m->kv_h2o_recent, m->hp.n_layer,
                                      m->hp.n_kv_head, m->hp.head_dim, err);
        return rc || m->hp.n_swa <= 0 ? rc : eng_model_h2o_layers(m, s->stream, err); /* sliding layers */
    }
    if (!m->kv_window) return UTIL_OK;
    if (m->kv_sinks + m->kv_window > s->n_ctx)
        return util_err_set(err, UTIL_EINVAL,
                            "--kv-sinks %d + --kv-window %d = %d exceeds the context of %d tokens",
                            m->kv_sinks, m->kv_window, m->kv_sinks + m->kv_window, s->n_ctx);
    return eng_kvstream_new(&s->stream, m->kv_sinks, m->kv_window, m->hp.n_layer,
                            m->hp.n_kv_head * m->hp.head_dim, err);
}

int eng_seq_new(eng_seq **out, eng_model *m, int n_ctx, util_err *err) {
    *out = NULL;
    /* a stream re-assigns positions inside its cache: its length may pass the training context */
    if (n_ctx <= 0 || (n_ctx > m->hp.n_ctx_train && !m->kv_window && !m->kv_h2o_budget))
        n_ctx = m->hp.n_ctx_train;
    eng_seq *s = calloc(1, sizeof *s);
    if (!s) return util_err_set(err, UTIL_ENOMEM, "sequence: out of memory");
    s->m = m;
    s->n_ctx = n_ctx;
    s->n_batch = m->be->ops->n_batch > 0 ? m->be->ops->n_batch : 64;
    s->max_pages = (n_ctx + P - 1) / P;
    s->pages = calloc((size_t)s->max_pages, sizeof *s->pages);
    s->nodes = calloc((size_t)s->max_pages, sizeof *s->nodes);
    s->spages = calloc((size_t)s->max_pages, sizeof *s->spages);
    s->toks = malloc((size_t)n_ctx * sizeof *s->toks);
    eng_model_kv_views(m, &s->kv, &s->kv_swa);
    s->kv.pages = s->pages;
    s->kv_swa.pages = s->spages;
    int rc = UTIL_OK;
    if (!s->pages || !s->nodes || !s->spages || !s->toks ||
        scratch_init(m->be, &s->sc, &m->hp, s->n_batch, 1))
        rc = util_err_set(err, UTIL_ENOMEM, "sequence: out of memory for %d tokens", n_ctx);
    else if ((rc = stream_init(s, err)) == UTIL_OK)
        rc = m->be->ops->reserve(m->be, s->stream ? eng_kvstream_cap(s->stream) : n_ctx, err);
    if (rc) {
        eng_seq_free(s);
        return rc;
    }
    *out = s;
    return UTIL_OK;
}

/* Drops sliding page i: a private one goes back to the pool, a shared one is
 * unmapped (the node keeps it while a marked end needs it). */
static void release_swa(eng_seq *s, int i) {
    if (!s->spages[i]) return;
    if (s->nodes[i])
        eng_kvcache_swa_unpin(s->m->cache, s->nodes[i]);
    else
        eng_kvcache_swa_free(s->m->cache, s->spages[i]);
    s->spages[i] = NULL;
}

/* Releases the sliding pages no query from position s->len on can see. */
static void swa_trim(eng_seq *s) {
    int lo = eng_kvcache_swa_first(s->m->cache, s->len);
    for (int i = s->swa_lo; i < lo && i < s->n_pages; i++) release_swa(s, i);
    if (lo > s->swa_lo) s->swa_lo = lo;
}

/* Whether the sequence holds what a continuation at position n needs: the
 * sliding pages of its window (always, without sliding layers). */
static int can_resume_at(const eng_seq *s, int n) {
    return !s->m->kv_split || n == 0 || eng_kvcache_swa_first(s->m->cache, n) >= s->swa_lo;
}

/* Drops pages from index `from` on: private ones go back to the pool, shared
 * ones are unpinned. */
static void release_pages(eng_seq *s, int from) {
    for (int i = from; i < s->n_pages; i++) {
        release_swa(s, i);
        if (s->nodes[i])
            eng_kvcache_unpin(s->m->cache, s->nodes[i]);
        else
            eng_kvcache_page_free(s->m->cache, s->pages[i]);
        s->pages[i] = NULL;
        s->nodes[i] = NULL;
    }
    if (from < s->n_pages) s->n_pages = from;
    if (s->swa_lo > from) s->swa_lo = from;
}

void eng_seq_free(eng_seq *s) {
    if (!s) return;
    if (s->pages && s->nodes && s->spages) release_pages(s, 0);
    free(s->pages);
    free(s->nodes);
    free(s->spages);
    free(s->toks);
    scratch_release(s->m->be, &s->sc);
    eng_kvstream_free(s->stream);
    free(s);
}

int eng_seq_len(const eng_seq *s) { return s->len; }
int eng_seq_n_ctx(const eng_seq *s) { return s->n_ctx; }
const int32_t *eng_seq_tokens(const eng_seq *s) { return s->toks; }

void eng_seq_truncate(eng_seq *s, int n) {
    if (n < 0 || n >= s->len) return;
    if (!can_resume_at(s, n)) n = 0; /* the window of n was released */
    s->len = n;
    release_pages(s, (n + P - 1) / P);
    if (s->stream) eng_kvstream_truncate(s->stream, n);
}

void eng_seq_set_batch(eng_seq *s, int n_batch) {
    if (n_batch < 1) n_batch = 1;
    if (n_batch == s->sc.n_batch) return;
    eng_scratch sc;
    int rows = s->sc.logits_rows > 1 ? n_batch : 1;
    if (scratch_init(s->m->be, &sc, &s->m->hp, n_batch, rows) == UTIL_OK) {
        scratch_release(s->m->be, &s->sc);
        s->sc = sc;
        s->n_batch = n_batch;
    }
}

void eng_seq_set_progress(eng_seq *s, eng_progress_fn fn, void *user) {
    s->progress = fn;
    s->progress_user = user;
}

/* --- pages -------------------------------------------------------------- */

/* Makes page i writable: a page shared with the cache is copied first (its
 * sliding page too, when mapped). */
static int make_private(eng_seq *s, int i, util_err *err) {
    if (!s->nodes[i]) return UTIL_OK;
    eng_kvcache *c = s->m->cache;
    eng_backend *be = s->m->be;
    void *copy, *scopy = NULL;
    int rc = eng_kvcache_page_alloc(c, &copy, err);
    if (rc) return rc;
    rc = be->ops->copy(be, copy, s->pages[i], eng_kvcache_page_bytes(c), err);
    if (rc == UTIL_OK && s->spages[i] && (rc = eng_kvcache_swa_alloc(c, &scopy, err)) == UTIL_OK &&
        (rc = be->ops->copy(be, scopy, s->spages[i], eng_kvcache_swa_page_bytes(c), err)))
        eng_kvcache_swa_free(c, scopy);
    if (rc) {
        eng_kvcache_page_free(c, copy);
        return rc;
    }
    if (s->spages[i]) {
        eng_kvcache_swa_unpin(c, s->nodes[i]);
        s->spages[i] = scopy;
    }
    eng_kvcache_unpin(c, s->nodes[i]);
    s->nodes[i] = NULL;
    s->pages[i] = copy;
    return UTIL_OK;
}

/* Makes positions [from, end) writable: existing pages private, new ones allocated. */
static int prepare_pages(eng_seq *s, int from, int end, util_err *err) {
    int first = from / P, need = (end + P - 1) / P;
    for (int i = first; i < s->n_pages && i < need; i++) {
        int rc = make_private(s, i, err);
        if (rc) return rc;
    }
    while (s->n_pages < need) {
        int rc = eng_kvcache_page_alloc(s->m->cache, &s->pages[s->n_pages], err);
        if (rc) return rc;
        s->nodes[s->n_pages++] = NULL;
    }
    return UTIL_OK;
}

/* Sliding layers: releases what the chunk at s->len no longer sees, then
 * allocates sliding pages for positions [s->len, end) (pages made private by
 * prepare_pages already). */
static int prepare_swa(eng_seq *s, int end, util_err *err) {
    if (!s->m->kv_split) return UTIL_OK;
    swa_trim(s);
    for (int i = s->len / P; i < (end + P - 1) / P; i++) {
        if (s->spages[i]) continue;
        int rc = eng_kvcache_swa_alloc(s->m->cache, &s->spages[i], err);
        if (rc) return rc;
    }
    return UTIL_OK;
}

/* --- evaluation --------------------------------------------------------- */

/* What a decode step's op calls depend on besides the position and token:
 * every buffer they name (see eng_backend_ops.step_begin). */
static uint64_t step_key(const eng_seq *s, int want_logits) {
    const void *ptrs[] = {s->sc.x,  s->sc.xb,  s->sc.q,      s->sc.k, s->sc.v,   s->sc.att,
                          s->sc.hb, s->sc.hb2, s->sc.logits, &s->kv,  &s->kv_swa};
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)want_logits;
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        h = (h ^ (uint64_t)(uintptr_t)ptrs[i]) * 0x100000001B3ull;
    return h;
}

/* The model's forward pass over this sequence alone (a batch of one entry). */
static int forward1(eng_seq *s, const int32_t *toks, int n, eng_pass pass, int n_logits, util_err *err) {
    eng_fwd_entry e = {.seq = s, .toks = toks, .n_tok = n, .n_logits = n_logits, .pass = pass};
    eng_fwd_batch b = {.e = &e, .n = 1, .n_tok = n, .n_logits = n_logits, .sc = &s->sc};
    return s->m->arch->forward(s->m, &b, err);
}

/* Checks n tokens to append (count, context room, ids) and makes their
 * global pages writable (prepare_pages). */
static int append_prepare(eng_seq *s, const int32_t *toks, int n, util_err *err) {
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "nothing to evaluate");
    if (s->len + n > s->n_ctx)
        return util_err_set(err, UTIL_ERANGE,
                            "prompt of %d tokens does not fit: %d already in context, limit %d", n, s->len,
                            s->n_ctx);
    int32_t nv = s->m->hp.n_vocab;
    for (int i = 0; i < n; i++)
        if (toks[i] < 0 || toks[i] >= nv)
            return util_err_set(err, UTIL_ERANGE, "token id %d outside the vocabulary (%d)", toks[i], nv);
    int rc = prepare_pages(s, s->len, s->len + n, err);
    return rc;
}

/* Evaluates n tokens of the given pass (see eng_pass in backend.h); logits:
 * NULL, the last token's (all == 0) or every token's ([n][n_vocab], all == 1;
 * the scratch holds n_batch rows of logits). */
static int seq_eval(eng_seq *s, const int32_t *toks, int n, float *logits, int all, eng_pass pass,
                    util_err *err) {
    int32_t nv = s->m->hp.n_vocab;
    int rc = append_prepare(s, toks, n, err);
    if (rc) return rc;
    eng_backend *be = s->m->be;
    if (n == 1 && (rc = prepare_swa(s, s->len + 1, err))) return rc;
    if (pass == ENG_PASS_DECODE && n == 1 && be->ops->step_begin) {
        /* a decode step: the backend may replay a recording of it */
        if ((rc = be->ops->step_begin(be, step_key(s, logits != NULL), &s->kv, toks[0], s->len, err)) < 0)
            return rc;
        rc = forward1(s, toks, 1, pass, logits != NULL, err);
        int again = be->ops->step_end(be, rc != UTIL_OK, err);
        if (rc) return rc;
        if (again < 0) return again;
        if (again && (rc = forward1(s, toks, 1, pass, logits != NULL, err))) return rc;
        s->toks[s->len++] = toks[0];
        if (logits) return be->ops->to_host(be, logits, s->sc.logits, (size_t)nv * sizeof(float), err);
        return UTIL_OK;
    }
    for (int done = 0; done < n;) {
        int chunk = n - done < s->sc.n_batch ? n - done : s->sc.n_batch;
        int last = done + chunk == n;
        int n_logits = !logits ? 0 : all ? chunk : last;
        if (n > 1 && (rc = prepare_swa(s, s->len + chunk, err))) return rc;
        rc = forward1(s, toks + done, chunk, pass, n_logits, err);
        if (rc) return rc;
        if (all && (rc = be->ops->to_host(be, logits + (size_t)done * (size_t)nv, s->sc.logits,
                                          (size_t)chunk * (size_t)nv * sizeof(float), err)))
            return rc;
        memcpy(s->toks + s->len, toks + done, (size_t)chunk * sizeof *toks);
        s->len += chunk;
        done += chunk;
        if (s->progress && n > chunk) s->progress(s->progress_user, done, n);
    }
    /* trimmed at rest, except after eval_all: its caller may truncate back to
     * any of the rows (verifying drafts), so the window of each stays */
    if (s->m->kv_split && !all) swa_trim(s);
    if (logits && !all) return be->ops->to_host(be, logits, s->sc.logits, (size_t)nv * sizeof(float), err);
    return UTIL_OK;
}

/* A stream's evaluation: chunks that fit its cache; when it is full, the
 * oldest position after the sinks is evicted before each token, so every
 * token attends to the sinks and the window - 1 tokens before it. */
static int stream_eval(eng_seq *s, const int32_t *toks, int n, float *logits, int all, eng_pass pass,
                       util_err *err) {
    int cap = eng_kvstream_cap(s->stream);
    size_t nv = (size_t)s->m->hp.n_vocab;
    for (int done = 0; done < n;) {
        const eng_kv_view *views[2] = {&s->kv, &s->kv_swa};
        if (s->len == cap && eng_kvstream_is_h2o(s->stream))
            s->len = eng_kvstream_evict_h2o(s->stream, views, s->toks, s->len);
        else if (s->len == cap)
            s->len = eng_kvstream_evict(s->stream, views, s->m->kv_split ? 2 : 1, s->toks, s->len, 1);
        int chunk = n - done < cap - s->len ? n - done : cap - s->len;
        float *out = !logits ? NULL : all ? logits + (size_t)done * nv : done + chunk == n ? logits : NULL;
        int rc = seq_eval(s, toks + done, chunk, out, all, chunk > 1 ? pass : ENG_PASS_DECODE, err);
        if (rc) return rc;
        done += chunk;
    }
    return UTIL_OK;
}

/* Several tokens are a prompt; one token is a decode step. */
int eng_seq_eval(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err) {
    eng_pass pass = n > 1 ? ENG_PASS_PROMPT : ENG_PASS_DECODE;
    return s->stream ? stream_eval(s, toks, n, logits, 0, pass, err)
                     : seq_eval(s, toks, n, logits, 0, pass, err);
}

int eng_seq_eval_all(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err) {
    if (!logits) return util_err_set(err, UTIL_EINVAL, "eng_seq_eval_all: no logits buffer");
    if (s->sc.logits_rows < s->sc.n_batch) {
        eng_scratch sc;
        if (scratch_init(s->m->be, &sc, &s->m->hp, s->sc.n_batch, s->sc.n_batch))
            return util_err_set(err, UTIL_ENOMEM, "sequence: out of memory for %d rows of logits",
                                s->sc.n_batch);
        scratch_release(s->m->be, &s->sc);
        s->sc = sc;
    }
    eng_pass pass = n > 1 ? ENG_PASS_PROMPT : ENG_PASS_DECODE;
    return s->stream ? stream_eval(s, toks, n, logits, 1, pass, err)
                     : seq_eval(s, toks, n, logits, 1, pass, err);
}

void eng_seq_commit(eng_seq *s) {
    if (s->stream) return; /* private: its pages hold re-assigned positions */
    int used = (s->len + P - 1) / P;
    for (int i = 0; i < used && i < s->n_pages; i++) {
        if (s->nodes[i]) continue;
        if (i > 0 && !s->nodes[i - 1]) return; /* reuse off, or an insert failed */
        int ntok = s->len - i * P < P ? s->len - i * P : P;
        eng_kv_node *node = eng_kvcache_insert(s->m->cache, i ? s->nodes[i - 1] : NULL, s->toks + i * P, ntok,
                                               s->pages[i]);
        if (!node) return;
        s->nodes[i] = node;
        s->pages[i] = eng_kvcache_node_page(node);
        if (s->spages[i]) s->spages[i] = eng_kvcache_give_swa(s->m->cache, node, s->spages[i]);
    }
    /* the window of this end stays in the tree: a request extending it hits here */
    if (s->m->kv_split && used > 0 && used <= s->n_pages)
        eng_kvcache_mark_end(s->m->cache, s->nodes[used - 1]);
}

static int common_prefix(const int32_t *a, int na, const int32_t *b, int nb) {
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

/* A stream matches nothing in the cache; it keeps its own prefix while
 * nothing was evicted (then its cache positions are the token positions). */
static int stream_reuse(eng_seq *s, const int32_t *toks, int n, int keep, int *cached_memory) {
    (void)toks;
    if (eng_kvstream_evicted(s->stream) > 0) keep = 0;
    s->len = keep;
    eng_kvstream_truncate(s->stream, keep);
    if (cached_memory) *cached_memory = keep;
    eng_kvcache_count_query(s->m->cache, n, keep, 0);
    return UTIL_OK;
}

int eng_seq_reuse(eng_seq *s, const int32_t *toks, int n, int *cached_memory, int *cached_disk,
                  util_err *err) {
    if (cached_memory) *cached_memory = 0;
    if (cached_disk) *cached_disk = 0;
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "empty prompt");
    if (n > s->n_ctx)
        return util_err_set(err, UTIL_ERANGE, "prompt is %d tokens long; the context limit is %d tokens", n,
                            s->n_ctx);
    /* Reuse at most n-1 tokens: the last one is computed for its logits.
     * With reuse off (--no-cache) not even this sequence's own KV is kept. */
    int keep = eng_kvcache_reuse(s->m->cache) ? common_prefix(s->toks, s->len, toks, n) : 0;
    if (keep > n - 1) keep = n - 1;
    if (!can_resume_at(s, keep)) keep = 0; /* its window was released: only the cache may help */
    if (s->stream) return stream_reuse(s, toks, n, keep, cached_memory);
    eng_kv_node **path = malloc(((size_t)n / P + 2) * sizeof *path);
    if (!path) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    eng_kv_match m;
    eng_kvcache_match(s->m->cache, toks, n, n - 1, path, &m);
    int reused = keep, from_disk = 0;
    if (m.tokens > keep) {
        /* The cache knows more than this sequence: adopt its path. */
        release_pages(s, 0);
        for (int i = 0; i < m.n_nodes; i++) {
            s->pages[i] = eng_kvcache_node_page(path[i]);
            s->nodes[i] = path[i];
            s->spages[i] = i >= m.swa_first ? eng_kvcache_node_swa_page(path[i]) : NULL;
        }
        s->n_pages = m.n_nodes;
        s->swa_lo = m.swa_first;
        memcpy(s->toks, toks, (size_t)m.tokens * sizeof *toks);
        s->len = m.tokens;
        reused = m.tokens;
        from_disk = m.from_disk;
    } else {
        for (int i = 0; i < m.n_nodes; i++) {
            if (i >= m.swa_first) eng_kvcache_swa_unpin(s->m->cache, path[i]);
            eng_kvcache_unpin(s->m->cache, path[i]);
        }
        s->len = keep;
        release_pages(s, (keep + P - 1) / P);
    }
    free(path);
    eng_kvcache_count_query(s->m->cache, n, reused, from_disk);
    if (cached_memory) *cached_memory = reused - from_disk;
    if (cached_disk) *cached_disk = from_disk;
    return UTIL_OK;
}

int eng_seq_set_tokens(eng_seq *s, const int32_t *toks, int n, float *logits, int *cached_memory,
                       int *cached_disk, util_err *err) {
    int rc = eng_seq_reuse(s, toks, n, cached_memory, cached_disk, err);
    if (rc) return rc;
    rc = s->stream ? stream_eval(s, toks + s->len, n - s->len, logits, 0, ENG_PASS_PROMPT, err)
                   : seq_eval(s, toks + s->len, n - s->len, logits, 0, ENG_PASS_PROMPT, err);
    if (rc == UTIL_OK) eng_seq_commit(s);
    return rc;
}

/* --- batch.c's access: evaluation of several sequences in one pass -------- */

int eng_scratch_init(eng_backend *be, eng_scratch *sc, const eng_hparams *hp, int n_batch, int logits_rows) {
    return scratch_init(be, sc, hp, n_batch, logits_rows);
}

void eng_scratch_release(eng_backend *be, eng_scratch *sc) { scratch_release(be, sc); }

int eng_seq_batch_prepare(eng_seq *s, const int32_t *toks, int n, util_err *err) {
    if (s->stream) return util_err_set(err, UTIL_EUNSUPPORTED, "--kv-window: a stream is evaluated alone");
    int rc = append_prepare(s, toks, n, err);
    return rc ? rc : prepare_swa(s, s->len + n, err); /* sliding layers' pages too (gemma3) */
}

void eng_seq_batch_advance(eng_seq *s, const int32_t *toks, int n) {
    memcpy(s->toks + s->len, toks, (size_t)n * sizeof *toks);
    s->len += n;
}
