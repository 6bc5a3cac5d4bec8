/* engine/arch_gemma3.c: the gemma3 architecture (Gemma 3): its hyperparameter
 * check and its forward pass: embeddings scaled by sqrt(n_embd), RMSNorm with
 * the GGUF's weights (the converter stored 1 + w), pre- and post-norms around
 * attention and the FFN, q/k RMSNorm per head, NEOX RoPE with the local base
 * on sliding-window layers and the global base (and scaling) on the others,
 * GeGLU (tanh GELU), tied or separate output head. Reads top to bottom over
 * backend calls; owns no memory (the pass's scratch, each sequence's KV). */
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

int eng_gemma3_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = b->sc;
    int E = hp->n_embd, hd = hp->head_dim, n = b->n_tok;
    size_t nE = (size_t)n * (size_t)E, nF = (size_t)n * (size_t)hp->n_ff;
    int rc;

    /* --- embeddings, scaled by sqrt(n_embd) ------------------------------ */
    if ((rc = eng_fwd_embed(m, b, sc->x, err))) return rc;
    op->scale(be, sc->x, sqrtf((float)E), nE);

    for (int il = 0; il < hp->n_layer; il++) {
        const eng_layer *L = &m->layers[il];

        /* --- attention: q/k normed per head, roped, q scaled ------------- */
        op->rmsnorm(be, sc->xb, sc->x, L->attn_norm, E, n, hp->eps);
        const eng_weight *qkv[3] = {&L->wq, &L->wk, &L->wv};
        float *const qkv_y[3] = {sc->q, sc->k, sc->v};
        if ((rc = eng_fwd_matmul_n(m, b, qkv, qkv_y, 3, sc->xb, err))) return rc;
        op->rmsnorm(be, sc->q, sc->q, L->attn_q_norm, hd, n * hp->n_head, hp->eps);
        op->rmsnorm(be, sc->k, sc->k, L->attn_k_norm, hd, n * hp->n_kv_head, hp->eps);
        const eng_rope_args rope = {
            .head_dim = hd,
            .n_rot = hp->n_rot,
            .base = L->swa ? hp->rope_base_swa : hp->rope_base,
            .freq_scale = L->swa ? hp->rope_freq_scale_swa : hp->rope_freq_scale,
            .mode = ENG_ROPE_NEOX,
        };
        const eng_attn_args attn = {
            .n_head = hp->n_head,
            .n_kv_head = hp->n_kv_head,
            .head_dim = hd,
            .scale = 1.0f,
            .window = L->swa ? hp->n_swa : 0,
        };
        eng_fwd_attend(m, b, L, &rope, hp->q_scale, &attn);
        if ((rc = eng_fwd_matmul(m, b, &L->wo, sc->att, sc->xb, err))) return rc;
        op->rmsnorm(be, sc->xb, sc->xb, L->post_attn_norm, E, n, hp->eps);
        op->add(be, sc->x, sc->xb, nE);

        /* --- feed-forward (GeGLU), post-normed ---------------------------- */
        op->rmsnorm(be, sc->xb, sc->x, L->ffn_norm, E, n, hp->eps);
        const eng_weight *gu[2] = {&L->w_gate, &L->w_up};
        float *const gy[2] = {sc->hb, sc->hb2};
        if ((rc = eng_fwd_matmul_n(m, b, gu, gy, 2, sc->xb, err))) return rc;
        op->geglu(be, sc->hb, sc->hb, sc->hb2, nF);
        if ((rc = eng_fwd_matmul(m, b, &L->w_down, sc->hb, sc->xb, err))) return rc;
        op->rmsnorm(be, sc->xb, sc->xb, L->post_ffw_norm, E, n, hp->eps);
        op->add(be, sc->x, sc->xb, nE);
    }

    /* --- output head: logits of each entry's last n_logits tokens ------- */
    return eng_fwd_head(m, b, err);
}
