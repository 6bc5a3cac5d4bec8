/* engine/arch_deepseek2.c: the deepseek2 architecture (DeepSeek-V2's
 * multi-head latent attention, MLA) with dense SwiGLU FFNs: its
 * hyperparameter checks and its forward pass, in two modes that compute the
 * same function. Naive: the normalized latent is up-projected to per-head K/V
 * and those are cached, as MHA. Absorbed (the default): W_UK is folded into
 * the query and W_UV applied after attention, so the cache holds only the
 * latent and the shared RoPE key per token and layer (one head, values =
 * keys). Reads top to bottom over backend calls; owns no memory (the pass's
 * scratch, each sequence's KV). No MoE layers, no YaRN, CPU backend only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model_impl.h"

/* "deepseek2.<suffix>" as u32; *out kept when absent unless required. */
static int ds2_u32(eng_model *m, const char *suffix, int *out, int required, util_err *err) {
    char key[96];
    snprintf(key, sizeof key, "deepseek2.%s", suffix);
    uint32_t v;
    int rc = eng_gguf_get_u32(m->gguf, key, &v, err);
    if (rc == UTIL_ENOTFOUND && !required) return UTIL_OK;
    if (rc == UTIL_ENOTFOUND)
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': missing key '%s'", m->path, key);
    if (rc) return rc;
    if (v > (1u << 20))
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': key '%s' has implausible value %u", m->path,
                            key, v);
    *out = (int)v;
    return UTIL_OK;
}

/* The ranks and head dims from the file (key_length = qk_nope + qk_rope,
 * rope.dimension_count = qk_rope, value_length = v_head_dim), checked; then
 * head_dim / n_kv_head become the attention's shape in the chosen mode, and
 * the scratch the pass needs beyond the shared buffers. */
int eng_deepseek2_hparams(eng_model *m, util_err *err) {
    eng_hparams *hp = &m->hp;
    int dense = 0, rc;
    hp->v_head_dim = hp->head_dim;
    if ((rc = ds2_u32(m, "attention.q_lora_rank", &hp->q_lora_rank, 0, err)) ||
        (rc = ds2_u32(m, "attention.kv_lora_rank", &hp->kv_lora_rank, 1, err)) ||
        (rc = ds2_u32(m, "attention.value_length", &hp->v_head_dim, 0, err)) ||
        (rc = ds2_u32(m, "leading_dense_block_count", &dense, 0, err)))
        return rc;
    if (dense < hp->n_layer) /* llama.cpp: layers from leading_dense_block_count on are MoE */
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': deepseek2 with MoE layers (%d of %d) is not supported: dense "
                            "FFNs only",
                            m->path, hp->n_layer - dense, hp->n_layer);
    hp->qk_nope = hp->head_dim - hp->n_rot;
    if (hp->qk_nope < 1 || hp->kv_lora_rank < 1 || hp->v_head_dim < 1 || hp->n_kv_head != hp->n_head)
        return util_err_set(err, UTIL_EFORMAT,
                            "model file '%s': inconsistent deepseek2 attention (key length %d, rope dims %d, "
                            "kv lora rank %d, value length %d, %d heads, %d kv heads)",
                            m->path, hp->head_dim, hp->n_rot, hp->kv_lora_rank, hp->v_head_dim, hp->n_head,
                            hp->n_kv_head);
    if (hp->n_swa > 0)
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': deepseek2 with a sliding window is not supported", m->path);
    int H = hp->n_head, qk = hp->head_dim, R = hp->kv_lora_rank, V = hp->v_head_dim;
    if (hp->mla_absorbed) {
        hp->n_kv_head = 1;
        hp->head_dim = hp->n_rot + R; /* [rope key | latent] */
    } else {
        hp->head_dim = qk > V ? qk : V; /* [rope | nope | 0] keys, [v | 0] values */
    }
    int64_t nope_v = hp->qk_nope > V ? hp->qk_nope : V;
    int64_t extra = (int64_t)H * qk + (R + hp->n_rot) + hp->q_lora_rank + R +
                    (hp->mla_absorbed ? 0 : (int64_t)H * (hp->qk_nope + V)) + nope_v + R + (int64_t)H * V;
    if (extra > (1 << 26))
        return util_err_set(err, UTIL_EFORMAT,
                            "model file '%s': deepseek2 attention of %lld values per token", m->path,
                            (long long)extra);
    hp->scratch_extra = (int)extra;
    return UTIL_OK;
}

/* The pass's own buffers in sc->ex, each n_batch rows of its width. */
typedef struct mla_bufs {
    float *q;   /* [H][qk_nope | qk_rope]: the queries as projected */
    float *kva; /* [latent | rope key]: attn_kv_a_mqa's output */
    float *qa;  /* [q_lora_rank] */
    float *lat; /* [kv_lora_rank]: the normalized latent */
    float *kvb; /* [H][k_nope | v]: the latent up-projected (naive) */
    float *t1;  /* [max(qk_nope, v_head_dim)]: one head's q_nope or output */
    float *t2;  /* [kv_lora_rank]: one head's absorbed query or latent output */
    float *o;   /* [H * v_head_dim]: the heads' outputs, attn_output's input */
} mla_bufs;

static mla_bufs mla_split(const eng_hparams *hp, const eng_scratch *sc) {
    size_t nb = (size_t)sc->n_batch, H = (size_t)hp->n_head, R = (size_t)hp->kv_lora_rank;
    size_t nope = (size_t)hp->qk_nope, V = (size_t)hp->v_head_dim, rope = (size_t)hp->n_rot;
    mla_bufs x;
    float *p = sc->ex;
    x.q = p, p += nb * H * (nope + rope);
    x.kva = p, p += nb * (R + rope);
    x.qa = p, p += nb * (size_t)hp->q_lora_rank;
    x.lat = p, p += nb * R;
    x.kvb = p, p += hp->mla_absorbed ? 0 : nb * H * (nope + V);
    x.t1 = p, p += nb * (nope > V ? nope : V);
    x.t2 = p, p += nb * R;
    x.o = p;
    return x;
}

/* dst[t][doff .. doff + w) = src[t][soff .. soff + w) for n rows (row widths dld, sld). */
static int cols(eng_backend *be, float *dst, size_t dld, size_t doff, const float *src, size_t sld,
                size_t soff, size_t w, int n, util_err *err) {
    for (int t = 0; t < n && w > 0; t++) {
        int rc = be->ops->copy(be, dst + (size_t)t * dld + doff, src + (size_t)t * sld + soff,
                               w * sizeof(float), err);
        if (rc) return rc;
    }
    return UTIL_OK;
}

/* dst[t][doff .. doff + w) = 0 for n rows. */
static int zero_cols(eng_backend *be, float *dst, size_t dld, size_t doff, size_t w, int n, util_err *err) {
    static const float zeros[64];
    for (int t = 0; t < n; t++)
        for (size_t i = 0; i < w; i += 64) {
            size_t k = w - i < 64 ? w - i : 64;
            int rc = be->ops->to_dev(be, dst + (size_t)t * dld + doff + i, zeros, k * sizeof(float), err);
            if (rc) return rc;
        }
    return UTIL_OK;
}

/* Naive: kvb = W_UK|W_UV latent; per head, queries [q_pe | q_nope | 0],
 * keys [k_pe | k_nope | 0] and values [v | 0] in sc->q, sc->k, sc->v. */
static int naive_qkv(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const mla_bufs *x,
                     util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    eng_scratch *sc = b->sc;
    size_t H = (size_t)hp->n_head, R = (size_t)hp->kv_lora_rank, hd = (size_t)hp->head_dim;
    size_t nope = (size_t)hp->qk_nope, V = (size_t)hp->v_head_dim, rope = (size_t)hp->n_rot, qk = nope + rope;
    size_t QW = H * qk, KVB = H * (nope + V), QA = H * hd;
    int n = b->n_tok, rc = eng_fwd_matmul(m, b, &L->wkv_b, x->lat, x->kvb, err);
    for (size_t h = 0; rc == UTIL_OK && h < H; h++) {
        size_t o = h * hd;
        if ((rc = cols(be, sc->q, QA, o, x->q, QW, h * qk + nope, rope, n, err)) ||
            (rc = cols(be, sc->q, QA, o + rope, x->q, QW, h * qk, nope, n, err)) ||
            (rc = zero_cols(be, sc->q, QA, o + qk, hd - qk, n, err)) ||
            (rc = cols(be, sc->k, QA, o, x->kva, R + rope, R, rope, n, err)) ||
            (rc = cols(be, sc->k, QA, o + rope, x->kvb, KVB, h * (nope + V), nope, n, err)) ||
            (rc = zero_cols(be, sc->k, QA, o + qk, hd - qk, n, err)) ||
            (rc = cols(be, sc->v, QA, o, x->kvb, KVB, h * (nope + V) + nope, V, n, err)) ||
            (rc = zero_cols(be, sc->v, QA, o + V, hd - V, n, err)))
            break;
    }
    return rc;
}

/* Absorbed: per head, the query [q_pe | W_UK^T q_nope] in sc->q; the one
 * key row [k_pe | latent] in sc->k (also the value: eng_kv_view_latent). */
static int absorbed_qk(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const mla_bufs *x,
                       util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    eng_scratch *sc = b->sc;
    size_t H = (size_t)hp->n_head, R = (size_t)hp->kv_lora_rank, hd = (size_t)hp->head_dim;
    size_t nope = (size_t)hp->qk_nope, rope = (size_t)hp->n_rot, qk = nope + rope, QW = H * qk, QA = H * hd;
    int n = b->n_tok, rc;
    if ((rc = cols(be, sc->k, hd, 0, x->kva, R + rope, R, rope, n, err)) ||
        (rc = cols(be, sc->k, hd, rope, x->lat, R, 0, R, n, err)))
        return rc;
    for (size_t h = 0; h < H; h++)
        if ((rc = cols(be, x->t1, nope, 0, x->q, QW, h * qk, nope, n, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->uk_t[h], x->t1, x->t2, err)) ||
            (rc = cols(be, sc->q, QA, h * hd, x->q, QW, h * qk + nope, rope, n, err)) ||
            (rc = cols(be, sc->q, QA, h * hd + rope, x->t2, R, 0, R, n, err)))
            return rc;
    return UTIL_OK;
}

/* The heads' outputs [n][H * v_head_dim] into x->o: naive, each head's first
 * v dims of sc->att; absorbed, W_UV times each head's latent output. */
static int heads_out(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const mla_bufs *x,
                     util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    size_t H = (size_t)hp->n_head, R = (size_t)hp->kv_lora_rank, hd = (size_t)hp->head_dim;
    size_t V = (size_t)hp->v_head_dim, rope = (size_t)hp->n_rot, QA = H * hd;
    int n = b->n_tok, rc = UTIL_OK;
    for (size_t h = 0; rc == UTIL_OK && h < H; h++) {
        if (!hp->mla_absorbed) {
            rc = cols(be, x->o, H * V, h * V, b->sc->att, QA, h * hd, V, n, err);
            continue;
        }
        if ((rc = cols(be, x->t2, R, 0, b->sc->att, QA, h * hd + rope, R, n, err)) ||
            (rc = eng_fwd_matmul(m, b, &L->uv[h], x->t2, x->t1, err)))
            break;
        rc = cols(be, x->o, H * V, h * V, x->t1, V, 0, V, n, err);
    }
    return rc;
}

int eng_deepseek2_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err) {
    const eng_hparams *hp = &m->hp;
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    eng_scratch *sc = b->sc;
    int E = hp->n_embd, n = b->n_tok, R = hp->kv_lora_rank, rope_dims = hp->n_rot;
    size_t nE = (size_t)n * (size_t)E;
    const mla_bufs x = mla_split(hp, sc);
    const eng_rope_args rope = {
        .head_dim = hp->head_dim,
        .n_rot = rope_dims, /* the leading dims of each head: the rope part */
        .base = hp->rope_base,
        .freq_scale = hp->rope_freq_scale,
        .freq_factors = m->rope_freqs,
        .mode = m->arch->rope,
    };
    const eng_attn_args attn = {
        .n_head = hp->n_head,
        .n_kv_head = hp->n_kv_head,
        .head_dim = hp->head_dim,
        .scale = 1.0f / sqrtf((float)(hp->qk_nope + rope_dims)), /* llama.cpp's kq_scale (no YaRN mscale) */
        .window = 0,
    };
    int rc;

    /* --- embeddings ------------------------------------------------------ */
    if ((rc = eng_fwd_embed(m, b, sc->x, err))) return rc;

    for (int il = 0; il < hp->n_layer; il++) {
        const eng_layer *L = &m->layers[il];

        /* --- queries [H][nope | rope], directly or through the q LoRA ---- */
        op->rmsnorm(be, sc->xb, sc->x, L->attn_norm, E, n, hp->eps);
        if (L->wq_a.data) {
            if ((rc = eng_fwd_matmul(m, b, &L->wq_a, sc->xb, x.qa, err))) return rc;
            op->rmsnorm(be, x.qa, x.qa, L->q_a_norm, hp->q_lora_rank, n, hp->eps);
            if ((rc = eng_fwd_matmul(m, b, &L->wq_b, x.qa, x.q, err))) return rc;
        } else if ((rc = eng_fwd_matmul(m, b, &L->wq, sc->xb, x.q, err))) {
            return rc;
        }

        /* --- the latent (normalized) and the shared rope key ------------- */
        if ((rc = eng_fwd_matmul(m, b, &L->wkv_a, sc->xb, x.kva, err)) ||
            (rc = cols(be, x.lat, (size_t)R, 0, x.kva, (size_t)(R + rope_dims), 0, (size_t)R, n, err)))
            return rc;
        op->rmsnorm(be, x.lat, x.lat, L->kv_a_norm, R, n, hp->eps);

        /* --- attention: MHA over up-projected heads, or MQA in the latent  */
        if ((rc = hp->mla_absorbed ? absorbed_qk(m, b, L, &x, err) : naive_qkv(m, b, L, &x, err))) return rc;
        eng_fwd_attend(m, b, L, &rope, 0, &attn);
        if ((rc = heads_out(m, b, L, &x, err)) || (rc = eng_fwd_matmul(m, b, &L->wo, x.o, sc->xb, err)))
            return rc;
        op->add(be, sc->x, sc->xb, nE);

        /* --- feed-forward (SwiGLU; every layer dense) --------------------- */
        if ((rc = eng_fwd_ffn_swiglu(m, b, L, err))) return rc;
    }

    /* --- output head: logits of each entry's last n_logits tokens ------- */
    return eng_fwd_head(m, b, err);
}
