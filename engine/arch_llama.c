/* engine/arch_llama.c: the llama architecture (SmolLM2): its hyperparameter
 * check and its forward pass: RMSNorm, GQA attention with NORMAL RoPE (the
 * GGUF converter permutes Q/K rows into adjacent pairs; angles divided by
 * rope_freqs.weight when the file has it: Llama 3's scaling), SwiGLU, tied or
 * separate output head. Reads top to bottom over backend calls; owns no
 * memory (the pass's scratch, each sequence's KV). model.c's table lists it. */
#include <math.h>

#include "model_impl.h"

/* llama ropes whole heads (the shared reader already checked the rest). */
int eng_llama_hparams(eng_model *m, util_err *err) {
    if (m->hp.n_rot != m->hp.head_dim)
        return util_err_set(err, UTIL_EUNSUPPORTED, "model file '%s': llama needs rope dims == head dim",
                            m->path);
    if (m->hp.n_swa > 0) /* this forward pass attends to every position */
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': llama with a sliding window is not supported", m->path);
    return UTIL_OK;
}

int eng_llama_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = b->sc;
    int E = hp->n_embd, hd = hp->head_dim, n = b->n_tok;
    size_t nE = (size_t)n * (size_t)E, nF = (size_t)n * (size_t)hp->n_ff;
    const eng_rope_args rope = {
        .head_dim = hd,
        .n_rot = hp->n_rot,
        .base = hp->rope_base,
        .freq_scale = hp->rope_freq_scale,
        .freq_factors = m->rope_freqs,
        .mode = ENG_ROPE_NORMAL,
    };
    const eng_attn_args attn = {
        .n_head = hp->n_head,
        .n_kv_head = hp->n_kv_head,
        .head_dim = hd,
        .scale = 1.0f / sqrtf((float)hd),
        .window = 0,
    };
    int rc;

    /* --- embeddings ------------------------------------------------------ */
    if ((rc = eng_fwd_embed(m, b, sc->x, err))) return rc;

    for (int il = 0; il < hp->n_layer; il++) {
        const eng_layer *L = &m->layers[il];

        /* --- attention: projections over all rows, then per sequence ----- */
        op->rmsnorm(be, sc->xb, sc->x, L->attn_norm, E, n, hp->eps);
        if ((rc = eng_fwd_matmul(m, b, &L->wq, sc->xb, sc->q, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->wk, sc->xb, sc->k, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->wv, sc->xb, sc->v, err)))
            return rc;
        eng_fwd_attend(m, b, L, &rope, 0, &attn);
        if ((rc = eng_fwd_matmul(m, b, &L->wo, sc->att, sc->xb, err))) return rc;
        op->add(be, sc->x, sc->xb, nE);

        /* --- feed-forward (SwiGLU) --------------------------------------- */
        op->rmsnorm(be, sc->xb, sc->x, L->ffn_norm, E, n, hp->eps);
        if ((rc = eng_fwd_matmul(m, b, &L->w_gate, sc->xb, sc->hb, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->w_up, sc->xb, sc->hb2, err)))
            return rc;
        op->swiglu(be, sc->hb, sc->hb, sc->hb2, nF);
        if ((rc = eng_fwd_matmul(m, b, &L->w_down, sc->hb, sc->xb, err))) return rc;
        op->add(be, sc->x, sc->xb, nE);
    }

    /* --- output head: logits of each entry's last n_logits tokens ------- */
    return eng_fwd_head(m, b, err);
}
