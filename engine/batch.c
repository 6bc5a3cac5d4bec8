/* engine/batch.c: forward passes over several sequences at once: the parts
 * every architecture's pass shares (embeddings, matmuls over all rows, the
 * per-sequence RoPE / KV store / attention, the output head). Results of a
 * sequence do not depend on the others in the pass (batch-invariant ops).
 * Does not sample, schedule or own pages (seq.c does). */
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
 * one call per run of entries with the same pass. */
static int fwd_matmul_rows(const eng_model *m, const eng_fwd_batch *b, const eng_weight *w, const float *x,
                           float *y, int head, util_err *err) {
    eng_backend *be = m->be;
    size_t row = 0;
    for (int i = 0; i < b->n;) {
        eng_pass pass = b->e[i].pass;
        int rows = 0;
        for (; i < b->n && b->e[i].pass == pass; i++) rows += head ? b->e[i].n_logits : b->e[i].n_tok;
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

void eng_fwd_attend(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const eng_rope_args *rope,
                    float q_scale, const eng_attn_args *attn) {
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    const eng_hparams *hp = &m->hp;
    eng_scratch *sc = b->sc;
    size_t Q = (size_t)hp->n_head * (size_t)hp->head_dim, KV = (size_t)hp->n_kv_head * (size_t)hp->head_dim;
    size_t row = 0;
    for (int i = 0; i < b->n; i++) {
        const eng_fwd_entry *e = &b->e[i];
        const eng_kv_view *kv = eng_seq_layer_kv(e->seq, L);
        float *q = sc->q + row * Q, *k = sc->k + row * KV, *v = sc->v + row * KV;
        int n = e->n_tok, pos0 = e->seq->len;
        eng_rope_args rq = *rope;
        rq.x = q;
        rq.n_tok = n;
        rq.n_head = hp->n_head;
        rq.pos0 = pos0;
        eng_rope_args rk = rq;
        rk.x = k;
        rk.n_head = hp->n_kv_head;
        op->rope(be, &rq);
        op->rope(be, &rk);
        if (q_scale != 0) op->scale(be, q, q_scale, (size_t)n * Q);
        op->kv_store(be, kv, L->kv_slot, k, v, n, pos0);
        eng_attn_args a = *attn;
        a.out = sc->att + row * Q;
        a.q = q;
        a.kv = kv;
        a.layer = L->kv_slot;
        a.n_tok = n;
        a.pos0 = pos0;
        a.pass = e->pass;
        op->attention(be, &a);
        row += (size_t)n;
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
