/* engine/arch_gemma3.c: the gemma3 architecture (Gemma 3): its hyperparameter
 * check and its forward pass: embeddings scaled by sqrt(n_embd), RMSNorm with
 * the GGUF's weights (the converter stored 1 + w), pre- and post-norms around
 * attention and the FFN, q/k RMSNorm per head, NEOX RoPE with the local base
 * on sliding-window layers and the global base (and scaling) on the others,
 * GeGLU (tanh GELU), tied or separate output head. Reads top to bottom over
 * backend calls; owns no memory (the sequence's scratch and KV). */
#include <math.h>

#include "model_impl.h"

/* The sliding layers and their window come from the file (model.c reads
 * them for every architecture before this);
 * the query scale is llama.cpp's: 1/sqrt(head_dim), which is HF's
 * query_pre_attn_scalar^-1/2 for every size but 27B (62 layers), where it
 * is 1/sqrt(n_embd / n_head). The file carries no key for it. */
int eng_gemma3_hparams(eng_model *m, util_err *err) {
    eng_hparams *hp = &m->hp;
    float softcap = 0;
    int rc = eng_gguf_get_f32(m->gguf, "gemma3.final_logit_softcapping", &softcap, err);
    if (rc && rc != UTIL_ENOTFOUND) return rc;
    if (rc == UTIL_OK && softcap != 0)
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': gemma3 with final logit softcapping is not supported", m->path);
    if (hp->n_rot != hp->head_dim)
        return util_err_set(err, UTIL_EUNSUPPORTED, "model file '%s': gemma3 needs rope dims == head dim",
                            m->path);
    hp->q_scale = hp->n_layer == 62 ? 1.0f / sqrtf((float)(hp->n_embd / hp->n_head))
                                    : 1.0f / sqrtf((float)hp->head_dim);
    return UTIL_OK;
}

int eng_gemma3_forward(eng_seq *s, const int32_t *toks, int n, eng_pass pass, int n_logits, util_err *err) {
    const eng_model *m = s->m;
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = &s->sc;
    int E = hp->n_embd, F = hp->n_ff, hd = hp->head_dim, pos0 = s->len;
    size_t nE = (size_t)n * (size_t)E, nF = (size_t)n * (size_t)F;
    int rc;

    /* --- embeddings, scaled by sqrt(n_embd) ------------------------------ */
    if ((rc = op->get_rows(be, &m->tok_embd, toks, n, sc->x, err))) return rc;
    op->scale(be, sc->x, sqrtf((float)E), nE);

    for (int il = 0; il < hp->n_layer; il++) {
        const eng_layer *L = &m->layers[il];
        const eng_kv_view *kv = eng_seq_layer_kv(s, L);

        /* --- attention: q/k normed per head, roped, q scaled ------------- */
        op->rmsnorm(be, sc->xb, sc->x, L->attn_norm, E, n, hp->eps);
        if ((rc = op->matmul(be, &L->wq, sc->xb, sc->q, n, pass, err)) ||
            (rc = op->matmul(be, &L->wk, sc->xb, sc->k, n, pass, err)) ||
            (rc = op->matmul(be, &L->wv, sc->xb, sc->v, n, pass, err)))
            return rc;
        op->rmsnorm(be, sc->q, sc->q, L->attn_q_norm, hd, n * hp->n_head, hp->eps);
        op->rmsnorm(be, sc->k, sc->k, L->attn_k_norm, hd, n * hp->n_kv_head, hp->eps);
        eng_rope_args rq = {
            .x = sc->q,
            .n_tok = n,
            .n_head = hp->n_head,
            .head_dim = hd,
            .n_rot = hp->n_rot,
            .pos0 = pos0,
            .base = L->swa ? hp->rope_base_swa : hp->rope_base,
            .freq_scale = L->swa ? hp->rope_freq_scale_swa : hp->rope_freq_scale,
            .mode = ENG_ROPE_NEOX,
        };
        eng_rope_args rk = rq;
        rk.x = sc->k;
        rk.n_head = hp->n_kv_head;
        op->rope(be, &rq);
        op->rope(be, &rk);
        op->scale(be, sc->q, hp->q_scale, (size_t)n * (size_t)hp->n_head * (size_t)hd);
        op->kv_store(be, kv, L->kv_slot, sc->k, sc->v, n, pos0);
        eng_attn_args a = {
            .out = sc->att,
            .q = sc->q,
            .kv = kv,
            .layer = L->kv_slot,
            .n_tok = n,
            .pos0 = pos0,
            .n_head = hp->n_head,
            .n_kv_head = hp->n_kv_head,
            .head_dim = hd,
            .scale = 1.0f,
            .window = L->swa ? hp->n_swa : 0,
            .pass = pass,
        };
        op->attention(be, &a);
        if ((rc = op->matmul(be, &L->wo, sc->att, sc->xb, n, pass, err))) return rc;
        op->rmsnorm(be, sc->xb, sc->xb, L->post_attn_norm, E, n, hp->eps);
        op->add(be, sc->x, sc->xb, nE);

        /* --- feed-forward (GeGLU), post-normed ---------------------------- */
        op->rmsnorm(be, sc->xb, sc->x, L->ffn_norm, E, n, hp->eps);
        if ((rc = op->matmul(be, &L->w_gate, sc->xb, sc->hb, n, pass, err)) ||
            (rc = op->matmul(be, &L->w_up, sc->xb, sc->hb2, n, pass, err)))
            return rc;
        op->geglu(be, sc->hb, sc->hb, sc->hb2, nF);
        if ((rc = op->matmul(be, &L->w_down, sc->hb, sc->xb, n, pass, err))) return rc;
        op->rmsnorm(be, sc->xb, sc->xb, L->post_ffw_norm, E, n, hp->eps);
        op->add(be, sc->x, sc->xb, nE);
    }

    /* --- output head: logits of the last n_logits tokens only ----------- */
    if (n_logits <= 0) return UTIL_OK;
    const float *rows = sc->x + (size_t)(n - n_logits) * (size_t)E;
    op->rmsnorm(be, sc->xb, rows, m->output_norm, E, n_logits, hp->eps);
    return op->matmul(be, &m->output, sc->xb, sc->logits, n_logits, pass, err);
}
