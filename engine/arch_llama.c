/* engine/arch_llama.c: the llama family: llama (SmolLM2, Llama 3, Mistral),
 * qwen2, qwen3 and phi3, their hyperparameter checks and their one forward
 * pass: RMSNorm, GQA attention with RoPE (the table's mode: NORMAL for llama,
 * whose converter permutes Q/K rows into adjacent pairs, NEOX for the others;
 * angles divided by rope_freqs.weight when the file has it: Llama 3's
 * scaling), SwiGLU, tied or separate output head. What a layer adds is in its
 * tensors (model.c binds them from the table's flags): qwen2's Q/K/V biases,
 * qwen3's per-head Q/K RMSNorm; phi3's fused attn_qkv and gate|up ffn_up are
 * bound as row ranges of the file's tensors, so the loop does not see them.
 * Reads top to bottom over backend calls; owns no memory (the pass's
 * scratch, each sequence's KV). No sliding window (gemma3 is arch_gemma3.c). */
#include <math.h>

#include "model_impl.h"

/* The family ropes whole heads (the shared reader already checked the rest). */
int eng_llama_hparams(eng_model *m, util_err *err) {
    if (m->hp.n_rot != m->hp.head_dim)
        return util_err_set(err, UTIL_EUNSUPPORTED, "model file '%s': %s needs rope dims == head dim",
                            m->path, m->arch->name);
    if (m->hp.n_swa > 0) /* this forward pass attends to every position */
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': %s with a sliding window is not supported", m->path,
                            m->arch->name);
    return UTIL_OK;
}

/* phi3: llama.cpp ignores the sliding window Phi-3 files declare (its
 * converter writes one that the model's attention does not use as such:
 * "Phi SWA is currently disabled"), so does this; LongRoPE's per-layer
 * rope_factors_long/short (the 128k models) are refused. */
int eng_phi3_hparams(eng_model *m, util_err *err) {
    if (eng_gguf_find_tensor(m->gguf, "rope_factors_long.weight") ||
        eng_gguf_find_tensor(m->gguf, "rope_factors_short.weight"))
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': phi3 with LongRoPE factors (the 128k models) is not supported",
                            m->path);
    return eng_llama_hparams(m, err);
}

/* y[t] += b for each of n tokens of width w. */
static void add_bias(eng_backend *be, float *y, const float *b, int n, int w) {
    for (int t = 0; t < n; t++) be->ops->add(be, y + (size_t)t * (size_t)w, b, (size_t)w);
}

int eng_llama_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = b->sc;
    int E = hp->n_embd, hd = hp->head_dim, n = b->n_tok;
    int Q = hp->n_head * hd, KV = hp->n_kv_head * hd;
    size_t nE = (size_t)n * (size_t)E;
    const eng_rope_args rope = {
        .head_dim = hd,
        .n_rot = hp->n_rot,
        .base = hp->rope_base,
        .freq_scale = hp->rope_freq_scale,
        .freq_factors = m->rope_freqs,
        .mode = m->arch->rope,
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
        const eng_weight *qkv[3] = {&L->wq, &L->wk, &L->wv};
        float *const qkv_y[3] = {sc->q, sc->k, sc->v};
        if ((rc = eng_fwd_matmul_n(m, b, qkv, qkv_y, 3, sc->xb, err))) return rc;
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
        if ((rc = eng_fwd_ffn_swiglu(m, b, L, err))) return rc;
    }

    /* --- output head: logits of each entry's last n_logits tokens ------- */
    return eng_fwd_head(m, b, err);
}
