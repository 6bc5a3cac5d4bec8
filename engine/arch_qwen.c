/* engine/arch_qwen.c: the qwen2 and qwen3 architectures: llama's pass with
 * NEOX RoPE (half-split pairs: the converter does not permute Q/K), plus
 * qwen2's Q/K/V biases or qwen3's RMSNorm of each Q and K head before RoPE.
 * Which extras a layer has is in its tensors (model.c binds them from the
 * table's flags). Owns no memory; no sliding window. */
#include <math.h>

#include "model_impl.h"

/* Both rope whole heads (the shared reader already checked the rest). */
int eng_qwen_hparams(eng_model *m, util_err *err) {
    if (m->hp.n_rot != m->hp.head_dim)
        return util_err_set(err, UTIL_EUNSUPPORTED, "model file '%s': %s needs rope dims == head dim",
                            m->path, m->arch->name);
    if (m->hp.n_swa > 0) /* this forward pass attends to every position */
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': %s with a sliding window is not supported", m->path,
                            m->arch->name);
    return UTIL_OK;
}

/* y[t] += b for each of n tokens of width w. */
static void add_bias(eng_backend *be, float *y, const float *b, int n, int w) {
    for (int t = 0; t < n; t++) be->ops->add(be, y + (size_t)t * (size_t)w, b, (size_t)w);
}

static int qwen_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = b->sc;
    int E = hp->n_embd, hd = hp->head_dim, n = b->n_tok;
    int Q = hp->n_head * hd, KV = hp->n_kv_head * hd;
    size_t nE = (size_t)n * (size_t)E, nF = (size_t)n * (size_t)hp->n_ff;
    const eng_rope_args rope = {
        .head_dim = hd,
        .n_rot = hp->n_rot,
        .base = hp->rope_base,
        .freq_scale = hp->rope_freq_scale,
        .freq_factors = m->rope_freqs,
        .mode = ENG_ROPE_NEOX,
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

        /* --- attention: projections, qwen2's biases, qwen3's head norms -- */
        op->rmsnorm(be, sc->xb, sc->x, L->attn_norm, E, n, hp->eps);
        if ((rc = eng_fwd_matmul(m, b, &L->wq, sc->xb, sc->q, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->wk, sc->xb, sc->k, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->wv, sc->xb, sc->v, err)))
            return rc;
        if (L->bq) {
            add_bias(be, sc->q, L->bq, n, Q);
            add_bias(be, sc->k, L->bk, n, KV);
            add_bias(be, sc->v, L->bv, n, KV);
        }
        if (L->attn_q_norm) {
            op->rmsnorm(be, sc->q, sc->q, L->attn_q_norm, hd, n * hp->n_head, hp->eps);
            op->rmsnorm(be, sc->k, sc->k, L->attn_k_norm, hd, n * hp->n_kv_head, hp->eps);
        }
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

int eng_qwen2_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    return qwen_forward(m, b, err);
}

int eng_qwen3_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    return qwen_forward(m, b, err);
}
