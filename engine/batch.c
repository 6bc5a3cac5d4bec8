/* engine/batch.c: forward passes over several sequences at once: the parts
 * every architecture's pass shares (embeddings, matmuls over all rows, the
 * per-sequence RoPE / KV store / attention, the output head). Results of a
 * sequence do not depend on the others in the pass (batch-invariant ops).
 * Does not sample, schedule or own pages (seq.c does). */
#include <stdlib.h>

#include "model_impl.h"

/* --- forward-pass parts ---------------------------------------------------- */

int eng_fwd_embed(const eng_model *m, const eng_fwd_batch *b, float *x, util_err *err) {
    eng_backend *be = m->be;
    size_t row = 0, E = (size_t)m->hp.n_embd;
    for (int i = 0; i < b->n; i++) {
        int rc = be->ops->get_rows(be, &m->tok_embd, b->e[i].toks, b->e[i].n_tok, x + row * E, err);
        if (rc) return rc;
        row += (size_t)b->e[i].n_tok;
    }
    return UTIL_OK;
}

/* y = W x over rows of each entry (its n_tok, or its n_logits for the head),
 * one call per run of entries with the same pass (one call for all on a
 * backend whose matmul ignores the pass). */
static int fwd_matmul_rows(const eng_model *m, const eng_fwd_batch *b, const eng_weight *w, const float *x,
                           float *y, int head, util_err *err) {
    eng_backend *be = m->be;
    size_t row = 0;
    for (int i = 0; i < b->n;) {
        eng_pass pass = b->e[i].pass;
        int rows = 0;
        for (; i < b->n && (b->e[i].pass == pass || be->ops->pass_blind); i++)
            rows += head ? b->e[i].n_logits : b->e[i].n_tok;
        if (rows == 0) continue;
        int rc = be->ops->matmul(be, w, x + row * (size_t)w->cols, y + row * (size_t)w->rows, rows, pass,
                                 err);
        if (rc) return rc;
        row += (size_t)rows;
    }
    return UTIL_OK;
}

int eng_fwd_matmul(const eng_model *m, const eng_fwd_batch *b, const eng_weight *w, const float *x, float *y,
                   util_err *err) {
    return fwd_matmul_rows(m, b, w, x, y, 0, err);
}

int eng_fwd_matmul_n(const eng_model *m, const eng_fwd_batch *b, const eng_weight *const *w, float *const *y,
                     int n, const float *x, util_err *err) {
    eng_backend *be = m->be;
    if (n > ENG_MATMUL_N_MAX)
        return util_err_set(err, UTIL_EINVAL, "matmul of %d weights at once (at most %d)", n,
                            ENG_MATMUL_N_MAX);
    if (!be->ops->matmul_n) {
        for (int j = 0; j < n; j++) {
            int rc = fwd_matmul_rows(m, b, w[j], x, y[j], 0, err);
            if (rc) return rc;
        }
        return UTIL_OK;
    }
    float *yr[ENG_MATMUL_N_MAX];
    size_t row = 0;
    for (int i = 0; i < b->n;) { /* runs of entries with the same pass, as fwd_matmul_rows */
        eng_pass pass = b->e[i].pass;
        int rows = 0;
        for (; i < b->n && (b->e[i].pass == pass || be->ops->pass_blind); i++) rows += b->e[i].n_tok;
        if (rows == 0) continue;
        for (int j = 0; j < n; j++) yr[j] = y[j] + row * (size_t)w[j]->rows;
        int rc = be->ops->matmul_n(be, w, yr, n, x + row * (size_t)w[0]->cols, rows, pass, err);
        if (rc) return rc;
        row += (size_t)rows;
    }
    return UTIL_OK;
}

/* Entries per attention_batch call (the args live on the stack). */
enum { ATTEND_BATCH = 16 };

void eng_fwd_attend(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const eng_rope_args *rope,
                    float q_scale, const eng_attn_args *attn) {
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    const eng_hparams *hp = &m->hp;
    eng_scratch *sc = b->sc;
    size_t Q = (size_t)hp->n_head * (size_t)hp->head_dim, KV = (size_t)hp->n_kv_head * (size_t)hp->head_dim;
    size_t row = 0;
    eng_attn_args as[ATTEND_BATCH];
    for (int i0 = 0; i0 < b->n; i0 += ATTEND_BATCH) {
        const int n = b->n - i0 < ATTEND_BATCH ? b->n - i0 : ATTEND_BATCH;
        for (int j = 0; j < n; j++) { /* rope and store each entry's rows, then attend all */
            const eng_fwd_entry *e = &b->e[i0 + j];
            const eng_kv_view *kv = eng_seq_layer_kv(e->seq, L);
            float *q = sc->q + row * Q, *k = sc->k + row * KV, *v = sc->v + row * KV;
            int nt = e->n_tok, pos0 = e->seq->len;
            eng_rope_args rq = *rope;
            rq.x = q;
            rq.n_tok = nt;
            rq.n_head = hp->n_head;
            rq.pos0 = pos0 +
                      (e->seq->stream ? eng_kvstream_shift(e->seq->stream) : 0); /* h2o: original positions */
            eng_rope_args rk = rq;
            rk.x = k;
            rk.n_head = hp->n_kv_head;
            if (e->seq->stream) /* keep raw keys; rotate moved ones at their new positions */
                eng_kvstream_attend(e->seq->stream, be, kv, (int)(L - m->layers), L->kv_slot, &rk, k, nt,
                                    pos0);
            op->rope(be, &rq);
            op->rope(be, &rk);
            if (q_scale != 0) op->scale(be, q, q_scale, (size_t)nt * Q);
            op->kv_store(be, kv, L->kv_slot, k, v, nt, pos0);
            eng_attn_args *a = &as[j];
            *a = *attn;
            a->out = sc->att + row * Q;
            a->q = q;
            a->kv = kv;
            a->layer = L->kv_slot;
            a->n_tok = nt;
            a->pos0 = pos0;
            a->pass = e->pass;
            row += (size_t)nt;
        }
        if (op->attention_batch && n > 1)
            op->attention_batch(be, as, n);
        else
            for (int j = 0; j < n; j++) op->attention(be, &as[j]);
        for (int j = 0; j < n; j++) {
            const eng_fwd_entry *e = &b->e[i0 + j];
            if (e->seq->stream) eng_kvstream_observe(e->seq->stream, &as[j], (int)(L - m->layers)); /* h2o */
        }
    }
}

int eng_fwd_head(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    if (b->n_logits <= 0) return UTIL_OK;
    eng_backend *be = m->be;
    const eng_hparams *hp = &m->hp;
    eng_scratch *sc = b->sc;
    size_t E = (size_t)hp->n_embd, row = 0, out = 0;
    for (int i = 0; i < b->n; i++) {
        const eng_fwd_entry *e = &b->e[i];
        if (e->n_logits > 0) {
            const float *rows = sc->x + (row + (size_t)(e->n_tok - e->n_logits)) * E;
            be->ops->rmsnorm(be, sc->xb + out * E, rows, m->output_norm, hp->n_embd, e->n_logits, hp->eps);
            out += (size_t)e->n_logits;
        }
        row += (size_t)e->n_tok;
    }
    return fwd_matmul_rows(m, b, &m->output, sc->xb, sc->logits, 1, err);
}

/* x += W_down(silu(W_gate n) * W_up n), n = RMSNorm(x) with L's ffn_norm. */
int eng_fwd_ffn_swiglu(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    eng_scratch *sc = b->sc;
    size_t n = (size_t)b->n_tok, nE = n * (size_t)hp->n_embd, nF = n * (size_t)hp->n_ff;
    int rc;
    be->ops->rmsnorm(be, sc->xb, sc->x, L->ffn_norm, hp->n_embd, b->n_tok, hp->eps);
    const eng_weight *gu[2] = {&L->w_gate, &L->w_up};
    float *const gy[2] = {sc->hb, sc->hb2};
    if ((rc = eng_fwd_matmul_n(m, b, gu, gy, 2, sc->xb, err))) return rc;
    be->ops->swiglu(be, sc->hb, sc->hb, sc->hb2, nF);
    if ((rc = eng_fwd_matmul(m, b, &L->w_down, sc->hb, sc->xb, err))) return rc;
    be->ops->add(be, sc->x, sc->xb, nE);
    return UTIL_OK;
}

/* --- several sequences in one pass ----------------------------------------- */

struct eng_batch {
    eng_model *m;
    eng_scratch sc; /* rows for every entry of a pass, grown on demand */
    eng_fwd_entry *e;
    int *item; /* e[j] is items[item[j]] */
    int cap;
};

int eng_batch_new(eng_batch **out, eng_model *m, util_err *err) {
    *out = calloc(1, sizeof **out);
    if (!*out) return util_err_set(err, UTIL_ENOMEM, "batch: out of memory");
    (*out)->m = m;
    return UTIL_OK;
}

void eng_batch_free(eng_batch *b) {
    if (!b) return;
    if (b->sc.x) eng_scratch_release(b->m->be, &b->sc);
    free(b->e);
    free(b->item);
    free(b);
}

/* Room for n entries, rows rows and n_logits rows of logits. */
static int batch_grow(eng_batch *b, int n, int rows, int n_logits, util_err *err) {
    if (n > b->cap) {
        eng_fwd_entry *e = realloc(b->e, (size_t)n * sizeof *e);
        if (e) b->e = e;
        int *item = e ? realloc(b->item, (size_t)n * sizeof *item) : NULL;
        if (!item) return util_err_set(err, UTIL_ENOMEM, "batch: out of memory");
        b->item = item;
        b->cap = n;
    }
    if (b->sc.x && rows <= b->sc.n_batch && n_logits <= b->sc.logits_rows) return UTIL_OK;
    int want = rows > b->sc.n_batch ? rows : b->sc.n_batch;
    int want_logits = n_logits > b->sc.logits_rows ? n_logits : b->sc.logits_rows;
    want = (want + 15) / 16 * 16;
    want_logits = (want_logits + 7) / 8 * 8;
    eng_scratch sc;
    if (eng_scratch_init(b->m->be, &sc, &b->m->hp, want, want_logits))
        return util_err_set(err, UTIL_ENOMEM, "batch: out of memory for %d rows", want);
    if (b->sc.x) eng_scratch_release(b->m->be, &b->sc);
    b->sc = sc;
    return UTIL_OK;
}

int eng_batch_eval(eng_batch *b, const eng_batch_item *items, int n, util_err *err) {
    if (n <= 0) return util_err_set(err, UTIL_EINVAL, "batch: nothing to evaluate");
    if (n == 1 && (items[0].n_tok > 1 || !items[0].prompt))
        /* alone: the sequence's own path (chunks, a backend's recorded decode step) */
        return eng_seq_eval(items[0].seq, items[0].toks, items[0].n_tok, items[0].logits, err);
    int rows = 0, n_logits = 0, rc;
    for (int i = 0; i < n; i++) {
        if (items[i].seq->m != b->m)
            return util_err_set(err, UTIL_EINVAL, "batch: sequence %d belongs to another model", i);
        for (int j = 0; j < i; j++)
            if (items[j].seq == items[i].seq)
                return util_err_set(err, UTIL_EINVAL, "batch: sequence %d appears twice", i);
        if ((rc = eng_seq_batch_prepare(items[i].seq, items[i].toks, items[i].n_tok, err))) return rc;
        rows += items[i].n_tok;
        n_logits += items[i].logits != NULL;
    }
    if ((rc = batch_grow(b, n, rows, n_logits, err))) return rc;
    /* decode steps first, then prompt chunks: one matmul call per pass */
    int k = 0;
    for (int pass = ENG_PASS_DECODE; pass >= ENG_PASS_PROMPT; pass--)
        for (int i = 0; i < n; i++) {
            eng_pass p = items[i].n_tok > 1 || items[i].prompt ? ENG_PASS_PROMPT : ENG_PASS_DECODE;
            if ((int)p != pass) continue;
            b->e[k] = (eng_fwd_entry){.seq = items[i].seq,
                                      .toks = items[i].toks,
                                      .n_tok = items[i].n_tok,
                                      .n_logits = items[i].logits != NULL,
                                      .pass = p};
            b->item[k++] = i;
        }
    eng_fwd_batch fb = {.e = b->e, .n = n, .n_tok = rows, .n_logits = n_logits, .sc = &b->sc};
    if ((rc = b->m->arch->forward(b->m, &fb, err))) return rc;
    eng_backend *be = b->m->be;
    size_t nv = (size_t)b->m->hp.n_vocab, row = 0;
    for (int j = 0; j < n; j++) {
        const eng_batch_item *it = &items[b->item[j]];
        if (!it->logits) continue;
        if ((rc = be->ops->to_host(be, it->logits, b->sc.logits + row * nv, nv * sizeof(float), err)))
            return rc;
        row++;
    }
    for (int i = 0; i < n; i++) eng_seq_batch_advance(items[i].seq, items[i].toks, items[i].n_tok);
    return UTIL_OK;
}
