/* engine/model.c: opens a GGUF model: finds its architecture in the table of
 * architectures, reads the shared hyperparameters (with llama.cpp's defaults
 * for missing keys) and the entry's own, binds and shape-checks every weight,
 * builds the tokenizer and chat template, and starts the backend. Does not
 * compute anything (arch_*.c) or manage KV memory (seq.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "quant.h"

/* --- architectures ------------------------------------------------------- */

static const eng_arch eng_archs[] = {
    {.name = "llama",
     .load_hparams = eng_llama_hparams,
     .forward = eng_llama_forward,
     .rope = ENG_ROPE_NORMAL},
    {.name = "gemma3",
     .load_hparams = eng_gemma3_hparams,
     .forward = eng_gemma3_forward,
     .tensors = ENG_ARCH_QK_NORM | ENG_ARCH_POST_NORMS,
     .rope = ENG_ROPE_NEOX},
    {.name = "qwen2",
     .load_hparams = eng_llama_hparams,
     .forward = eng_llama_forward,
     .tensors = ENG_ARCH_QKV_BIAS,
     .rope = ENG_ROPE_NEOX},
    {.name = "qwen3",
     .load_hparams = eng_llama_hparams,
     .forward = eng_llama_forward,
     .tensors = ENG_ARCH_QK_NORM,
     .rope = ENG_ROPE_NEOX},
    {.name = "phi3",
     .load_hparams = eng_phi3_hparams,
     .forward = eng_llama_forward,
     .tensors = ENG_ARCH_FUSED,
     .rope = ENG_ROPE_NEOX},
    {.name = "deepseek2",
     .load_hparams = eng_deepseek2_hparams,
     .forward = eng_deepseek2_forward,
     .tensors = ENG_ARCH_MLA,
     .rope = ENG_ROPE_NORMAL},
};

static const eng_arch *arch_find(const char *name) {
    for (size_t i = 0; i < sizeof eng_archs / sizeof eng_archs[0]; i++)
        if (strcmp(eng_archs[i].name, name) == 0) return &eng_archs[i];
    return NULL;
}

/* "llama, ..." for messages. */
static void arch_list(char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof eng_archs / sizeof eng_archs[0] && k < cap; i++) {
        int w = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", eng_archs[i].name);
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* --- hyperparameters ---------------------------------------------------- */

/* Where the shared hyperparameters are read from: "<arch>.<suffix>" keys of g. */
typedef struct hp_src {
    const eng_gguf *g;
    const char *path;
    const char *arch;
} hp_src;

/* Reads "<arch>.<suffix>" as u32 into *out, keeping *out when absent. */
static int hp_u32(const hp_src *src, const char *suffix, int *out, int required, util_err *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", src->arch, suffix);
    uint32_t v;
    int rc = eng_gguf_get_u32(src->g, key, &v, err);
    if (rc == UTIL_ENOTFOUND) {
        if (!required) return UTIL_OK;
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': missing key '%s'", src->path, key);
    }
    if (rc) return rc;
    if (v == 0 || v > (1u << 24))
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': key '%s' has implausible value %u",
                            src->path, key, v);
    *out = (int)v;
    return UTIL_OK;
}

static int hp_f32(const hp_src *src, const char *suffix, float *out, util_err *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", src->arch, suffix);
    float v;
    int rc = eng_gguf_get_f32(src->g, key, &v, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    if (!isfinite(v) || v <= 0)
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': key '%s' has invalid value %g", src->path,
                            key, (double)v);
    *out = v;
    return UTIL_OK;
}

/* RoPE scaling as llama.cpp reads it: "rope.scaling.type" (absent: linear)
 * and the factor "rope.scaling.factor" (else "rope.scale_linear"), which
 * divides positions. yarn and longrope change the rotation itself: refused. */
static int read_rope_scaling(const hp_src *src, eng_hparams *hp, util_err *err) {
    char key[128];
    const char *type;
    size_t len;
    snprintf(key, sizeof key, "%s.rope.scaling.type", src->arch);
    int rc = eng_gguf_get_str(src->g, key, &type, &len, err);
    if (rc && rc != UTIL_ENOTFOUND) return rc;
    if (rc == UTIL_OK && !(len == 6 && memcmp(type, "linear", 6) == 0) &&
        !(len == 4 && memcmp(type, "none", 4) == 0))
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': rope scaling '%.*s' is not supported (linear only)", src->path,
                            (int)(len < 32 ? len : 32), type);
    float factor = 0;
    if ((rc = hp_f32(src, "rope.scaling.factor", &factor, err))) return rc;
    if (factor == 0 && (rc = hp_f32(src, "rope.scale_linear", &factor, err))) return rc;
    hp->rope_freq_scale = factor > 0 ? 1.0f / factor : 1.0f;
    return UTIL_OK;
}

/* The hyperparameters every architecture shares, checked for consistency;
 * what an architecture adds is its entry's load_hparams. */
static int read_hparams(const hp_src *src, eng_hparams *hp, util_err *err) {
    int rc;
    hp->n_ctx_train = 2048;
    hp->eps = 1e-5f;
    hp->rope_base = 10000.0f;
    hp->rope_freq_scale = 1.0f;
    if ((rc = hp_u32(src, "context_length", &hp->n_ctx_train, 0, err)) ||
        (rc = hp_u32(src, "embedding_length", &hp->n_embd, 1, err)) ||
        (rc = hp_u32(src, "block_count", &hp->n_layer, 1, err)) ||
        (rc = hp_u32(src, "feed_forward_length", &hp->n_ff, 1, err)) ||
        (rc = hp_u32(src, "attention.head_count", &hp->n_head, 1, err)))
        return rc;
    /* Every layer has tensors of its own: a block count beyond the file's
     * tensor count is corrupt (and would size the layer table from it). */
    if ((int64_t)hp->n_layer > eng_gguf_tensor_count(src->g))
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': block_count %d but only %lld tensors",
                            src->path, hp->n_layer, (long long)eng_gguf_tensor_count(src->g));
    hp->n_kv_head = hp->n_head;
    hp->head_dim = hp->n_embd / hp->n_head;
    if ((rc = hp_u32(src, "attention.head_count_kv", &hp->n_kv_head, 0, err)) ||
        (rc = hp_u32(src, "attention.key_length", &hp->head_dim, 0, err)) ||
        (rc = hp_f32(src, "attention.layer_norm_rms_epsilon", &hp->eps, err)) ||
        (rc = hp_f32(src, "rope.freq_base", &hp->rope_base, err)) || (rc = read_rope_scaling(src, hp, err)))
        return rc;
    hp->n_rot = hp->head_dim;
    if ((rc = hp_u32(src, "rope.dimension_count", &hp->n_rot, 0, err))) return rc;
    if (hp->n_head % hp->n_kv_head != 0 || hp->n_rot > hp->head_dim || hp->n_rot % 2)
        return util_err_set(err, UTIL_EFORMAT,
                            "model file '%s': inconsistent attention shape (%d heads, %d kv heads, "
                            "head dim %d, rope dims %d)",
                            src->path, hp->n_head, hp->n_kv_head, hp->head_dim, hp->n_rot);
    return UTIL_OK;
}

/* --- sliding-window attention --------------------------------------------- */

/* llama.cpp's built-in layer periods (load_swa_pattern) and default windows
 * for architectures whose files may carry no pattern key. */
static const struct {
    const char *arch;
    int period, window;
} swa_defaults[] = {
    {"gemma3", 6, 0},  {"gemma2", 2, 4096}, {"gemma-embedding", 6, 0},
    {"cohere2", 4, 0}, {"phi3", -1, 0}, /* -1: llama.cpp ignores the window its files declare (arch_llama.c) */
};

/* Sliding-window attention from a GGUF's "<arch>.*" keys, as llama.cpp reads
 * them: the window "attention.sliding_window" (absent or 0: none); which
 * layers slide, from "attention.sliding_window_pattern" when present (an
 * array of n_layer flags, or a period N: layer il slides iff il % N < N - 1),
 * else the architecture's built-in period (gemma3 6, gemma2 2, cohere2 4;
 * any other architecture with a window: every layer); the sliding layers'
 * RoPE base "rope.freq_base_swa" (absent: 10000, llama.cpp's default) at
 * scale 1. Fills those fields of hp (hp->n_layer read) and *layers (n_layer
 * flags, malloc'd, the caller frees; NULL when there is no window). */
static int swa_read(const eng_gguf *g, const char *path, const char *arch, eng_hparams *hp,
                    unsigned char **layers, util_err *err) {
    hp_src src = {g, path, arch};
    int period = 0, window = 0, rc;
    *layers = NULL;
    hp->n_swa = hp->n_layer_swa = 0;
    hp->rope_base_swa = 10000.0f;
    hp->rope_freq_scale_swa = 1.0f;
    for (size_t i = 0; i < sizeof swa_defaults / sizeof swa_defaults[0]; i++)
        if (strcmp(swa_defaults[i].arch, arch) == 0)
            period = swa_defaults[i].period, window = swa_defaults[i].window;
    if (period < 0) return UTIL_OK;
    char key[128];
    snprintf(key, sizeof key, "%s.attention.sliding_window", arch);
    uint32_t w;
    rc = eng_gguf_get_u32(g, key, &w, err);
    if (rc == UTIL_OK)
        window = (int)(w > (1u << 30) ? (1u << 30) : w);
    else if (rc != UTIL_ENOTFOUND)
        return rc;
    if (window <= 0) return UTIL_OK;
    if ((rc = hp_f32(&src, "rope.freq_base_swa", &hp->rope_base_swa, err))) return rc;
    unsigned char *f = calloc((size_t)hp->n_layer, 1);
    if (!f) return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", path);
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", arch);
    eng_gguf_vtype et;
    uint64_t count;
    int32_t *arr = NULL;
    if (eng_gguf_get_arr(g, key, &et, &count, NULL) == UTIL_OK) {
        if ((rc = eng_gguf_get_i32_arr(g, key, &arr, &count, err))) {
            free(f);
            return rc;
        }
        if (count != (uint64_t)hp->n_layer) {
            free(arr);
            free(f);
            return util_err_set(err, UTIL_EFORMAT, "model file '%s': key '%s' has %llu entries for %d layers",
                                path, key, (unsigned long long)count, hp->n_layer);
        }
        for (int il = 0; il < hp->n_layer; il++) f[il] = arr[il] != 0;
        free(arr);
    } else {
        if ((rc = hp_u32(&src, "attention.sliding_window_pattern", &period, 0, err))) {
            free(f);
            return rc;
        }
        for (int il = 0; il < hp->n_layer; il++) f[il] = period <= 0 || il % period < period - 1;
    }
    hp->n_swa = window;
    for (int il = 0; il < hp->n_layer; il++) hp->n_layer_swa += f[il];
    *layers = f;
    return UTIL_OK;
}

static int load_hparams(eng_model *m, const char *arch, util_err *err) {
    hp_src src = {m->gguf, m->path, arch};
    int rc = read_hparams(&src, &m->hp, err);
    if (rc == UTIL_OK) rc = swa_read(m->gguf, m->path, arch, &m->hp, &m->layer_swa, err);
    if (rc == UTIL_OK && m->arch->load_hparams) rc = m->arch->load_hparams(m, err);
    return rc;
}

/* --- weights ------------------------------------------------------------ */

static int bind_weight(eng_model *m, eng_weight *w, const char *name, int64_t cols, int64_t rows,
                       int optional, util_err *err) {
    const eng_gguf_tensor *t = eng_gguf_find_tensor(m->gguf, name);
    if (!t) {
        if (optional) return UTIL_ENOTFOUND;
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': missing tensor '%s'", m->path, name);
    }
    if (t->ne[0] != cols || t->ne[1] != rows || t->ne[2] != 1 || t->ne[3] != 1)
        return util_err_set(
            err, UTIL_EFORMAT, "model file '%s': tensor '%s' has shape [%lld,%lld], expected [%lld,%lld]",
            m->path, name, (long long)t->ne[0], (long long)t->ne[1], (long long)cols, (long long)rows);
    const eng_type_traits *tr = eng_type_get(t->type);
    if (!tr || !tr->supported)
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "model file '%s': tensor '%s' has type %s, which cachet does not support",
                            m->path, name, tr ? tr->name : "unknown");
    w->name = t->name;
    w->type = t->type;
    w->cols = cols;
    w->rows = rows;
    w->row_bytes = t->row_bytes;
    w->data = t->data;
    w->dev = NULL;
    w->dev_f16 = NULL;
    return UTIL_OK;
}

/* Rows [r0, r0 + rows) of a bound weight, as a weight of its own (no copy:
 * the rows are contiguous in the file). */
static eng_weight weight_rows(const eng_weight *w, int64_t r0, int64_t rows) {
    eng_weight v = *w;
    v.data = (const unsigned char *)w->data + (size_t)r0 * w->row_bytes;
    v.rows = rows;
    return v;
}

/* Layer binders: W a matrix, N a norm vector, B a bias of layer `il` into
 * L->field, by the tensor name "blk.<il>.<suffix>.weight|bias". They use the
 * caller's m, L, il, n (a name buffer), rc and err, and return on error. */
#define W(field, suffix, cols, rows)                       \
    snprintf(n, sizeof n, "blk.%d." suffix ".weight", il); \
    if ((rc = bind_weight(m, &L->field, n, cols, rows, 0, err))) return rc;
#define N(field, suffix, len)                              \
    snprintf(n, sizeof n, "blk.%d." suffix ".weight", il); \
    if ((rc = bind_norm(m, &L->field, n, len, err))) return rc;
#define B(field, suffix, len)                            \
    snprintf(n, sizeof n, "blk.%d." suffix ".bias", il); \
    if ((rc = bind_norm(m, &L->field, n, len, err))) return rc;

/* phi3's fused tensors (ENG_ARCH_FUSED): attn_qkv's q|k|v rows when the
 * file has it (else the three separate ones), and ffn_up's gate|up rows
 * (llama.cpp's swiglu: the first half goes through silu). */
static int bind_fused(eng_model *m, eng_layer *L, int il, util_err *err) {
    const eng_hparams *hp = &m->hp;
    int64_t E = hp->n_embd, Q = (int64_t)hp->n_head * hp->head_dim,
            KV = (int64_t)hp->n_kv_head * hp->head_dim, F = hp->n_ff;
    char n[96];
    eng_weight w;
    snprintf(n, sizeof n, "blk.%d.attn_qkv.weight", il);
    int rc = bind_weight(m, &w, n, E, Q + 2 * KV, 1, err);
    if (rc == UTIL_OK) {
        L->wq = weight_rows(&w, 0, Q);
        L->wk = weight_rows(&w, Q, KV);
        L->wv = weight_rows(&w, Q + KV, KV);
    } else if (rc != UTIL_ENOTFOUND) {
        return rc;
    } else {
        const struct {
            eng_weight *w;
            const char *suffix;
            int64_t rows;
        } qkv[] = {{&L->wq, "attn_q", Q}, {&L->wk, "attn_k", KV}, {&L->wv, "attn_v", KV}};
        for (int i = 0; i < 3; i++) {
            snprintf(n, sizeof n, "blk.%d.%s.weight", il, qkv[i].suffix);
            if ((rc = bind_weight(m, qkv[i].w, n, E, qkv[i].rows, 0, err))) return rc;
        }
    }
    snprintf(n, sizeof n, "blk.%d.ffn_up.weight", il);
    if ((rc = bind_weight(m, &w, n, E, 2 * F, 0, err))) return rc;
    L->w_gate = weight_rows(&w, 0, F);
    L->w_up = weight_rows(&w, F, F);
    return UTIL_OK;
}

/* Keeps a malloc'd vector until the model is freed (the norm copies' list). */
static int keep_vec(eng_model *m, float *v, util_err *err) {
    const float **list = realloc(m->norm_copies, (size_t)(m->n_norm_copies + 1) * sizeof *list);
    if (!v || !list) {
        free(v);
        if (list) m->norm_copies = list;
        return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", m->path);
    }
    m->norm_copies = list;
    m->norm_copies[m->n_norm_copies++] = v;
    return UTIL_OK;
}

static int bind_norm(eng_model *m, const float **out, const char *name, int64_t n, util_err *err);

/* deepseek2's latent attention (ENG_ARCH_MLA): attn_q or attn_q_a +
 * attn_q_a_norm + attn_q_b, attn_kv_a_mqa, attn_kv_a_norm, the unsplit
 * attn_kv_b (llama.cpp's legacy layout: per head k_nope rows then v rows)
 * and attn_output over n_head * v_head_dim; per head, W_UV as rows of
 * attn_kv_b and W_UK transposed as an f32 copy (the absorbed query). The
 * split attn_k_b / attn_v_b of newer conversions are refused. */
static int bind_mla(eng_model *m, eng_layer *L, int il, eng_weight *heads, util_err *err) {
    const eng_hparams *hp = &m->hp;
    int64_t E = hp->n_embd, H = hp->n_head, qk = hp->qk_nope + hp->n_rot, R = hp->kv_lora_rank;
    int64_t nope = hp->qk_nope, V = hp->v_head_dim;
    char n[96];
    int rc;
    snprintf(n, sizeof n, "blk.%d.attn_k_b.weight", il);
    if (eng_gguf_find_tensor(m->gguf, n))
        return util_err_set(
            err, UTIL_EUNSUPPORTED,
            "model file '%s': deepseek2 with split attn_k_b/attn_v_b (a newer conversion) is not "
            "supported: cachet reads the unsplit attn_kv_b",
            m->path);
    if (hp->q_lora_rank > 0) {
        W(wq_a, "attn_q_a", E, hp->q_lora_rank)
        N(q_a_norm, "attn_q_a_norm", hp->q_lora_rank)
        W(wq_b, "attn_q_b", hp->q_lora_rank, H * qk)
    } else {
        W(wq, "attn_q", E, H * qk)
    }
    W(wkv_a, "attn_kv_a_mqa", E, R + hp->n_rot)
    N(kv_a_norm, "attn_kv_a_norm", R)
    W(wkv_b, "attn_kv_b", R, H * (nope + V))
    W(wo, "attn_output", H * V, E)
    const eng_type_traits *tr = eng_type_get(L->wkv_b.type);
    float *row = malloc((size_t)R * sizeof *row), *t = malloc((size_t)(H * R * nope) * sizeof *t);
    if (!row || !t) {
        free(row);
        free(t);
        return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", m->path);
    }
    L->uk_t = heads;
    L->uv = heads + H;
    for (int64_t h = 0; h < H; h++) {
        float *th = t + h * R * nope; /* [R][nope]: th[r][d] = W_UK_h[d][r] */
        for (int64_t d = 0; d < nope; d++) {
            tr->to_float((const unsigned char *)L->wkv_b.data +
                             (size_t)(h * (nope + V) + d) * L->wkv_b.row_bytes,
                         row, R);
            for (int64_t r = 0; r < R; r++) th[r * nope + d] = row[r];
        }
        L->uk_t[h] = (eng_weight){.name = L->wkv_b.name,
                                  .type = ENG_TYPE_F32,
                                  .cols = nope,
                                  .rows = R,
                                  .row_bytes = (size_t)nope * sizeof(float),
                                  .data = th};
        L->uv[h] = weight_rows(&L->wkv_b, h * (nope + V) + nope, V);
    }
    free(row);
    return keep_vec(m, t, err);
}

/* A norm vector as f32: the mapped data when it is f32, else a converted copy. */
static int bind_norm(eng_model *m, const float **out, const char *name, int64_t n, util_err *err) {
    const eng_gguf_tensor *t = eng_gguf_find_tensor(m->gguf, name);
    if (!t) return util_err_set(err, UTIL_EFORMAT, "model file '%s': missing tensor '%s'", m->path, name);
    if (t->ne[0] != n || t->ne[1] != 1 || t->ne[2] != 1 || t->ne[3] != 1)
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': tensor '%s' has %lld values, expected %lld",
                            m->path, name, (long long)t->ne[0], (long long)n);
    if (t->type == ENG_TYPE_F32 && ((uintptr_t)t->data % sizeof(float)) == 0) {
        *out = t->data;
        return UTIL_OK;
    }
    const eng_type_traits *tr = eng_type_get(t->type);
    if (!tr || !tr->supported)
        return util_err_set(err, UTIL_EUNSUPPORTED, "model file '%s': tensor '%s': unsupported type", m->path,
                            name);
    float *copy = malloc((size_t)n * sizeof(float));
    const float **list = realloc(m->norm_copies, (size_t)(m->n_norm_copies + 1) * sizeof *list);
    if (!copy || !list) {
        free(copy);
        if (list) m->norm_copies = list;
        return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", m->path);
    }
    tr->to_float(t->data, copy, n);
    m->norm_copies = list;
    m->norm_copies[m->n_norm_copies++] = copy;
    *out = copy;
    return UTIL_OK;
}

static int load_weights(eng_model *m, util_err *err) {
    const eng_hparams *hp = &m->hp;
    int64_t E = hp->n_embd, Q = (int64_t)hp->n_head * hp->head_dim,
            KV = (int64_t)hp->n_kv_head * hp->head_dim, F = hp->n_ff;
    const eng_gguf_tensor *te = eng_gguf_find_tensor(m->gguf, "token_embd.weight");
    if (!te)
        return util_err_set(err, UTIL_EFORMAT, "model file '%s': missing tensor 'token_embd.weight'",
                            m->path);
    m->hp.n_vocab = (int)te->ne[1];
    int rc = bind_weight(m, &m->tok_embd, "token_embd.weight", E, hp->n_vocab, 0, err);
    if (rc) return rc;
    rc = bind_weight(m, &m->output, "output.weight", E, hp->n_vocab, 1, err);
    if (rc == UTIL_ENOTFOUND)
        m->output = m->tok_embd; /* tied embeddings */
    else if (rc)
        return rc;
    if ((rc = bind_norm(m, &m->output_norm, "output_norm.weight", E, err))) return rc;
    if (eng_gguf_find_tensor(m->gguf, "rope_freqs.weight") &&
        (rc = bind_norm(m, &m->rope_freqs, "rope_freqs.weight", hp->n_rot / 2, err)))
        return rc;
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (m->arch->tensors & ENG_ARCH_MLA)
        m->mla_heads = calloc((size_t)hp->n_layer * 2 * (size_t)hp->n_head, sizeof *m->mla_heads);
    if (!m->layers || ((m->arch->tensors & ENG_ARCH_MLA) && !m->mla_heads))
        return util_err_set(err, UTIL_ENOMEM, "model file '%s': out of memory", m->path);
    for (int il = 0; il < hp->n_layer; il++) {
        eng_layer *L = &m->layers[il];
        char n[96];
        if (m->arch->tensors & ENG_ARCH_FUSED) {
            if ((rc = bind_fused(m, L, il, err))) return rc;
        } else if (m->arch->tensors & ENG_ARCH_MLA) {
            if ((rc = bind_mla(m, L, il, m->mla_heads + (size_t)il * 2 * (size_t)hp->n_head, err))) return rc;
            W(w_gate, "ffn_gate", E, F)
            W(w_up, "ffn_up", E, F)
        } else {
            W(wq, "attn_q", E, Q)
            W(wk, "attn_k", E, KV)
            W(wv, "attn_v", E, KV)
            W(w_gate, "ffn_gate", E, F)
            W(w_up, "ffn_up", E, F)
        }
        if (!(m->arch->tensors & ENG_ARCH_MLA)) {
            W(wo, "attn_output", Q, E)
        }
        W(w_down, "ffn_down", F, E)
        N(attn_norm, "attn_norm", E)
        N(ffn_norm, "ffn_norm", E)
        if (m->arch->tensors & ENG_ARCH_QK_NORM) {
            N(attn_q_norm, "attn_q_norm", hp->head_dim)
            N(attn_k_norm, "attn_k_norm", hp->head_dim)
        }
        if (m->arch->tensors & ENG_ARCH_POST_NORMS) {
            N(post_attn_norm, "post_attention_norm", E)
            N(post_ffw_norm, "post_ffw_norm", E)
        }
        if (m->arch->tensors & ENG_ARCH_QKV_BIAS) {
            B(bq, "attn_q", Q)
            B(bk, "attn_k", KV)
            B(bv, "attn_v", KV)
        }
        L->swa = m->layer_swa && m->layer_swa[il];
    }
#undef W
#undef N
#undef B
    /* Sliding layers get pages of their own (a sequence keeps only their
     * window) when some layers slide and some do not; kv_slot is a layer's
     * index among the layers of its kind. */
    m->kv_split = hp->n_swa > 0 && hp->n_layer_swa > 0 && hp->n_layer_swa < hp->n_layer;
    for (int il = 0, n_glob = 0, n_slid = 0; il < hp->n_layer; il++) {
        eng_layer *L = &m->layers[il];
        L->kv_swa = m->kv_split && L->swa;
        L->kv_slot = !m->kv_split ? il : L->kv_swa ? n_slid++ : n_glob++;
    }
    return UTIL_OK;
}

/* Gives the backend its copy of every weight and norm vector (CUDA: one
 * upload, in the file's quantized form; CPU: nothing to do). */
static int upload_weights(eng_model *m, util_err *err) {
    eng_backend *be = m->be;
    const eng_backend_ops *op = be->ops;
    int rc;
    if ((rc = op->load(be, &m->tok_embd, err))) return rc;
    if (m->output.data == m->tok_embd.data) {
        m->output.dev = m->tok_embd.dev;
        m->output.dev_f16 = m->tok_embd.dev_f16;
    } else if ((rc = op->load(be, &m->output, err)))
        return rc;
    if ((rc = op->load_vec(be, m->output_norm, (size_t)m->hp.n_embd, &m->output_norm, err))) return rc;
    if (m->rope_freqs && (rc = op->load_vec(be, m->rope_freqs, (size_t)m->hp.n_rot / 2, &m->rope_freqs, err)))
        return rc;
    for (int il = 0; il < m->hp.n_layer; il++) {
        eng_layer *L = &m->layers[il];
        eng_weight *w[] = {&L->wq,     &L->wk,   &L->wv,   &L->wo,    &L->w_gate, &L->w_up,
                           &L->w_down, &L->wq_a, &L->wq_b, &L->wkv_a, &L->wkv_b};
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
            if (w[i]->data && (rc = op->load(be, w[i], err))) return rc;
        for (int h = 0; L->uk_t && h < m->hp.n_head; h++)
            if ((rc = op->load(be, &L->uk_t[h], err)) || (rc = op->load(be, &L->uv[h], err))) return rc;
        size_t E = (size_t)m->hp.n_embd, hd = (size_t)m->hp.head_dim;
        size_t Q = (size_t)m->hp.n_head * hd, KV = (size_t)m->hp.n_kv_head * hd;
        const struct {
            const float **v;
            size_t n;
        } vecs[] = {{&L->attn_norm, E},
                    {&L->ffn_norm, E},
                    {&L->post_attn_norm, E},
                    {&L->post_ffw_norm, E},
                    {&L->attn_q_norm, hd},
                    {&L->attn_k_norm, hd},
                    {&L->bq, Q},
                    {&L->bk, KV},
                    {&L->q_a_norm, (size_t)m->hp.q_lora_rank},
                    {&L->kv_a_norm, (size_t)m->hp.kv_lora_rank},
                    {&L->bv, KV}};
        for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
            if (*vecs[i].v && (rc = op->load_vec(be, *vecs[i].v, vecs[i].n, vecs[i].v, err))) return rc;
    }
    return UTIL_OK;
}

/* --- prefix cache -------------------------------------------------------- */

/* What makes two processes' KV values interchangeable: the same weights and
 * tokenizer (the file's identity), the same KV layout and precision, and the
 * same backend kernels. The trailing version is bumped whenever a kernel's
 * arithmetic changes under an unchanged backend name (v4: the avx2 level
 * attends in chunks of keys). */
static uint64_t model_fingerprint(const eng_model *m) {
    char desc[192], kv[32];
    /* "kv=f16" as before quantized KV existed, so f16 pages on disk stay valid */
    if (m->kv_type_k == ENG_TYPE_F16 && m->kv_type_v == ENG_TYPE_F16)
        snprintf(kv, sizeof kv, "f16");
    else if (m->kv_type_k == ENG_TYPE_F32) /* kv_f32 (0 is f32's ggml id: not a KV type name) */
        snprintf(kv, sizeof kv, "f32");
    else
        snprintf(kv, sizeof kv, "k:%s,v:%s", eng_kv_type_name(m->kv_type_k), eng_kv_type_name(m->kv_type_v));
    int n = snprintf(desc, sizeof desc, "kv=%s;page=%d;backend=%s;v4", kv, ENG_KV_PAGE_TOKENS,
                     m->be->ops->name);
    if (m->kv_split && n > 0 &&
        (size_t)n < sizeof desc) /* pages hold the global layers only; v1 of the split */
        snprintf(desc + n, sizeof desc - (size_t)n, ";swa-split=%dx%d;v1", m->hp.n_swa, m->hp.n_layer_swa);
    if (m->arch->tensors & ENG_ARCH_MLA && n > 0 && (size_t)n < sizeof desc) /* what a page holds */
        snprintf(desc + n, sizeof desc - (size_t)n, ";mla=%s:%dx%d;v1",
                 m->hp.mla_absorbed ? "latent" : "heads", m->hp.n_kv_head, m->hp.head_dim);
    uint64_t h = eng_gguf_identity(m->gguf) ^ 0x9E3779B97F4A7C15ull;
    for (const char *p = desc; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001B3ull;
    return h;
}

/* The eviction policies move KV rows in host memory: a backend without
 * ops->kv_stream (CUDA) cannot run them. The message names the option. */
static int stream_refuse(const eng_model_params *p, const char *backend, util_err *err) {
    if (p->kv_evict == ENG_KV_EVICT_H2O)
        return util_err_set(
            err, UTIL_EUNSUPPORTED,
            "--kv-evict h2o moves KV rows in host memory; the %s backend cannot (use --device cpu)", backend);
    return util_err_set(err, UTIL_EUNSUPPORTED,
                        "--kv-window: StreamingLLM moves KV rows in host memory; the %s backend cannot "
                        "(use --device cpu)",
                        backend);
}

/* Before the device starts: --kv-window / --kv-evict with --device cuda (or
 * CACHET_DEVICE=cuda) is refused here, so the message does not wait for a
 * GPU (nor depend on this build having CUDA). "auto" is checked after the
 * backend opens (stream_check). */
int eng_model_stream_device_check(const eng_model_params *p, util_err *err) {
    eng_device dev;
    if (!p || (!p->kv_window && !p->kv_evict)) return UTIL_OK;
    if (eng_device_requested(&dev, p->device, err)) return UTIL_OK; /* eng_backend_open says why */
    return dev.kind == ENG_DEVICE_CUDA ? stream_refuse(p, "cuda", err) : UTIL_OK;
}

/* StreamingLLM's settings (--kv-sinks, --kv-window): checked once here;
 * sequences (seq.c) apply them. */
static int stream_check(eng_model *m, const eng_model_params *p, util_err *err) {
    m->kv_sinks = p->kv_sinks;
    m->kv_window = p->kv_window;
    if ((p->kv_window || p->kv_evict) && m->hp.kv_lora_rank > 0)
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "--kv-window / --kv-evict: deepseek2's latent cache (MLA) is not supported by "
                            "the eviction policies (they move per-head K and V rows)");
    if (p->kv_evict == ENG_KV_EVICT_H2O) {
        int b = p->kv_budget_tokens, r = p->kv_recent > 0 ? p->kv_recent : p->kv_budget_tokens / 2;
        if (p->kv_window)
            return util_err_set(err, UTIL_EINVAL,
                                "--kv-evict h2o and --kv-window are two policies: give one");
        if (b < 2 || r < 1 || r >= b)
            return util_err_set(
                err, UTIL_EINVAL,
                "--kv-evict h2o: --kv-budget-tokens %d, --kv-recent %d (need 1 <= recent < budget)", b, r);
        if (!m->be->ops->kv_stream) return stream_refuse(p, m->be->ops->name, err);
        if (m->hp.n_swa > 0 && b > m->hp.n_swa) /* kvstream.h: eng_kvstream_h2o_layers */
            return util_err_set(
                err, UTIL_EINVAL,
                "--kv-evict h2o: --kv-budget-tokens %d exceeds the model's sliding window of %d "
                "(a sliding layer's kept keys must all lie within its window)",
                b, m->hp.n_swa);
        m->kv_h2o_budget = b;
        m->kv_h2o_recent = r;
    } else if (p->kv_evict || p->kv_budget_tokens || p->kv_recent) {
        return util_err_set(err, UTIL_EINVAL, "--kv-budget-tokens and --kv-recent need --kv-evict h2o");
    }
    if (p->kv_sinks < 0 || p->kv_window < 0)
        return util_err_set(err, UTIL_EINVAL, "--kv-sinks %d / --kv-window %d: negative", p->kv_sinks,
                            p->kv_window);
    if (p->kv_window == 0) {
        if (p->kv_sinks > 0)
            return util_err_set(err, UTIL_EINVAL,
                                "--kv-sinks %d needs --kv-window (the recent positions kept)", p->kv_sinks);
        return UTIL_OK;
    }
    if (!m->be->ops->kv_stream) return stream_refuse(p, m->be->ops->name, err);
    if (m->kv_split && p->kv_sinks + p->kv_window > m->hp.n_swa)
        return util_err_set(err, UTIL_EINVAL,
                            "--kv-sinks %d + --kv-window %d = %d exceeds the model's sliding window of %d "
                            "(its sliding layers would drop the sinks; not supported)",
                            p->kv_sinks, p->kv_window, p->kv_sinks + p->kv_window, m->hp.n_swa);
    return UTIL_OK;
}

static int open_cache(eng_model *m, const eng_model_params *params, util_err *err) {
    eng_model_params none;
    memset(&none, 0, sizeof none);
    if (!params) params = &none;
    m->kv_type_k = params->kv_type_k ? params->kv_type_k : ENG_TYPE_F16;
    m->kv_type_v = params->kv_type_v ? params->kv_type_v : ENG_TYPE_F16;
    if (params->kv_f32) {
        if (strncmp(m->be->ops->name, "cpu", 3) != 0)
            return util_err_set(err, UTIL_EUNSUPPORTED, "an f32 KV cache needs the CPU backend");
        m->kv_type_k = m->kv_type_v = ENG_TYPE_F32;
    }
    if (m->hp.mla_absorbed) m->kv_type_v = m->kv_type_k; /* the latent is read as keys and values */
    const uint32_t types[2] = {m->kv_type_k, m->kv_type_v};
    for (int i = 0; i < 2; i++) {
        const char *name = eng_kv_type_name(types[i]), *which = i ? "--kv-type-v" : "--kv-type-k";
        if (!name) return util_err_set(err, UTIL_EINVAL, "%s: type id %u is not a KV type", which, types[i]);
        if (types[i] == ENG_TYPE_F16 || params->kv_f32) continue;
        if (m->hp.head_dim % 32)
            return util_err_set(err, UTIL_EINVAL,
                                "%s %s: head_dim %d is not a multiple of its 32-value blocks", which, name,
                                m->hp.head_dim);
        if (!m->be->ops->kv_quant)
            return util_err_set(err, UTIL_EUNSUPPORTED,
                                "%s %s: the %s backend stores KV only as f16 (use --device cpu)", which, name,
                                m->be->ops->name);
    }
    int rc = stream_check(m, params, err);
    if (rc) return rc;
    eng_kv_view kv, kv_swa;
    eng_model_kv_views(m, &kv, &kv_swa);
    eng_kvcache_params cp = {
        .page_bytes = eng_kv_page_bytes(&kv),
        .swa_page_bytes = eng_kv_page_bytes(&kv_swa),
        .window = m->kv_split ? m->hp.n_swa : 0,
        .fingerprint = model_fingerprint(m),
        .budget_bytes = params->kv_budget ? params->kv_budget : (1ull << 30),
        .reuse = !params->no_cache,
        .disk = !params->no_cache && !params->no_disk_cache,
        .disk_dir = params->kv_dir,
        .disk_budget = params->kv_disk_budget,
        .debug = params->debug,
        .be = m->be,
    };
    return eng_kvcache_new(&m->cache, &cp, err);
}

eng_cache_stats eng_model_cache_stats(const eng_model *m) { return eng_kvcache_get_stats(m->cache); }
void eng_model_flush_cache(const eng_model *m) { eng_kvcache_flush(m->cache); }
size_t eng_model_kv_page_bytes(const eng_model *m) { return eng_kvcache_page_bytes(m->cache); }

/* --- open / free -------------------------------------------------------- */

static char *dup_str(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

int eng_model_open(eng_model **out, const char *path, const eng_model_params *params, util_err *err) {
    *out = NULL;
    eng_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = dup_str(path, strlen(path)))) {
        free(m);
        return util_err_set(err, UTIL_ENOMEM, "out of memory");
    }
    int rc = eng_gguf_open(&m->gguf, path, err);
    if (rc) goto fail;
    const char *arch;
    size_t arch_len;
    rc = eng_gguf_get_str(m->gguf, "general.architecture", &arch, &arch_len, err);
    if (rc) {
        if (rc == UTIL_ENOTFOUND)
            rc = util_err_set(err, UTIL_EFORMAT, "model file '%s': missing key 'general.architecture'", path);
        goto fail;
    }
    char archz[32];
    snprintf(archz, sizeof archz, "%.*s", (int)(arch_len < 31 ? arch_len : 31), arch);
    if (!(m->arch = arch_find(archz))) {
        char list[128];
        arch_list(list, sizeof list);
        rc = util_err_set(err, UTIL_EUNSUPPORTED,
                          "model file '%s': architecture '%s' is not supported (supported: %s)", path, archz,
                          list);
        goto fail;
    }
    const char *name;
    size_t name_len;
    if (eng_gguf_get_str(m->gguf, "general.name", &name, &name_len, NULL) == UTIL_OK)
        m->name = dup_str(name, name_len);
    else
        m->name = dup_str(archz, strlen(archz));
    m->hp.mla_absorbed = (m->arch->tensors & ENG_ARCH_MLA) && !(params && params->mla_naive);
    if ((rc = load_hparams(m, archz, err)) || (rc = load_weights(m, err))) goto fail;
    if ((rc = eng_tokenizer_new(&m->tok, m->gguf, err))) {
        util_err_wrap(err, "model file '%s'", path);
        goto fail;
    }
    if (eng_tokenizer_n_vocab(m->tok) != m->hp.n_vocab) {
        rc = util_err_set(err, UTIL_EFORMAT,
                          "model file '%s': vocabulary has %d tokens but token_embd has %d rows", path,
                          eng_tokenizer_n_vocab(m->tok), m->hp.n_vocab);
        goto fail;
    }
    if ((rc = eng_chat_new_named(&m->chat, m->gguf, params ? params->chat_template : NULL, err))) goto fail;
    if ((rc = eng_model_stream_device_check(params, err))) goto fail;
    eng_backend_params bp = {.device = params ? params->device : NULL,
                             .n_threads = params ? params->n_threads : 0,
                             .exact = params && params->exact};
    if ((rc = eng_backend_open(&m->be, &bp, err))) goto fail;
    if ((m->arch->tensors & ENG_ARCH_MLA) && strncmp(m->be->ops->name, "cpu", 3) != 0) {
        rc = util_err_set(err, UTIL_EUNSUPPORTED,
                          "model file '%s': deepseek2 (multi-head latent attention) runs on the CPU backend "
                          "only, not %s: use --device cpu",
                          path, m->be->ops->name);
        goto fail;
    }
    if ((rc = upload_weights(m, err))) {
        util_err_wrap(err, "model file '%s'", path);
        goto fail;
    }
    if ((rc = open_cache(m, params, err))) goto fail;
    *out = m;
    return UTIL_OK;
fail:
    eng_model_free(m);
    return rc;
}

void eng_model_free(eng_model *m) {
    if (!m) return;
    eng_kvcache_free(m->cache);
    eng_backend_free(m->be);
    eng_chat_free(m->chat);
    eng_tokenizer_free(m->tok);
    eng_gguf_free(m->gguf);
    for (int i = 0; i < m->n_norm_copies; i++) free((void *)m->norm_copies[i]);
    free(m->norm_copies);
    free(m->layers);
    free(m->mla_heads);
    free(m->layer_swa);
    free(m->name);
    free(m->path);
    free(m);
}

const eng_tokenizer *eng_model_tokenizer(const eng_model *m) { return m->tok; }
const eng_chat *eng_model_chat(const eng_model *m) { return m->chat; }
const char *eng_model_arch(const eng_model *m) { return m->arch->name; }
const char *eng_model_name(const eng_model *m) { return m->name; }
const char *eng_model_path(const eng_model *m) { return m->path; }
int32_t eng_model_n_vocab(const eng_model *m) { return m->hp.n_vocab; }
int eng_model_n_ctx_train(const eng_model *m) { return m->hp.n_ctx_train; }
int eng_model_n_threads(const eng_model *m) { return m->be->ops->n_threads(m->be); }
const char *eng_model_backend(const eng_model *m) { return m->be->ops->name; }

double eng_model_backend_bandwidth(const eng_model *m) {
    return m->be->ops->bandwidth ? m->be->ops->bandwidth(m->be) : 0.0;
}

uint64_t eng_model_weight_bytes(const eng_model *m) {
    uint64_t b = (uint64_t)m->output.rows * m->output.row_bytes + (uint64_t)m->hp.n_embd * 4;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const eng_layer *L = &m->layers[il];
        const eng_weight *w[] = {&L->wq,     &L->wk,   &L->wv,   &L->wo,    &L->w_gate, &L->w_up,
                                 &L->w_down, &L->wq_a, &L->wq_b, &L->wkv_a, &L->wkv_b};
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) b += (uint64_t)w[i]->rows * w[i]->row_bytes;
        b += 2 * (uint64_t)m->hp.n_embd * 4;
        if (L->post_attn_norm) b += 2 * (uint64_t)m->hp.n_embd * 4;
        if (L->attn_q_norm) b += 2 * (uint64_t)m->hp.head_dim * 4;
        if (L->bq) b += (uint64_t)(m->hp.n_head + 2 * m->hp.n_kv_head) * (uint64_t)m->hp.head_dim * 4;
    }
    return b;
}

double eng_kv_bytes_per_token(const eng_model_shape *sh, double elem_bytes) {
    return (double)sh->n_layer * (double)sh->n_kv_head * (double)sh->head_dim * 2.0 * elem_bytes;
}

size_t eng_model_kv_bytes_per_token(const eng_model *m) {
    eng_model_shape sh = eng_model_get_shape(m);
    if (m->hp.mla_absorbed) /* K rows only: the latent and the RoPE key */
        return (size_t)((double)sh.n_layer * (double)sh.head_dim * eng_kv_type_bytes(m->kv_type_k));
    return (size_t)eng_kv_bytes_per_token(
        &sh, (eng_kv_type_bytes(m->kv_type_k) + eng_kv_type_bytes(m->kv_type_v)) / 2);
}

void eng_model_kv_types(const eng_model *m, uint32_t *type_k, uint32_t *type_v) {
    *type_k = m->kv_type_k;
    *type_v = m->kv_type_v;
}

/* --- KV element types ---------------------------------------------------- */

static const struct {
    const char *name;
    uint32_t type;
} k_kv_types[] = {{"f16", ENG_TYPE_F16}, {"q8_0", ENG_TYPE_Q8_0}, {"q4_0", ENG_TYPE_Q4_0}};

int eng_kv_type_parse(uint32_t *out, const char *name, util_err *err) {
    for (size_t i = 0; name && i < sizeof k_kv_types / sizeof k_kv_types[0]; i++)
        if (strcmp(name, k_kv_types[i].name) == 0) {
            *out = k_kv_types[i].type;
            return UTIL_OK;
        }
    return util_err_set(err, UTIL_EINVAL, "KV type '%s': expected f16, q8_0 or q4_0", name ? name : "");
}

const char *eng_kv_type_name(uint32_t type) {
    if (type == 0) type = ENG_TYPE_F16;
    for (size_t i = 0; i < sizeof k_kv_types / sizeof k_kv_types[0]; i++)
        if (k_kv_types[i].type == type) return k_kv_types[i].name;
    return NULL;
}

double eng_kv_type_bytes(uint32_t type) {
    const eng_type_traits *t = eng_kv_type_name(type) ? eng_type_get(type ? type : ENG_TYPE_F16) : NULL;
    return t ? (double)t->bytes / (double)t->blck : 0.0;
}

double eng_kv_bytes_ctx(const eng_model_shape *sh, double elem_bytes, uint64_t n_ctx, double *global,
                        double *sliding) {
    const uint64_t P = ENG_KV_PAGE_TOKENS;
    uint64_t all = (n_ctx + P - 1) / P * P, kept = all;
    int n_swa = sh->n_swa > 0 ? sh->n_layer_swa : 0;
    if (n_swa) {
        uint64_t win = ((uint64_t)sh->n_swa - 1 + P - 1) / P * P + P; /* window pages + the one written */
        if (win < kept) kept = win;
    }
    eng_model_shape g = *sh, w = *sh;
    g.n_layer = sh->n_layer - n_swa;
    w.n_layer = n_swa;
    *global = eng_kv_bytes_per_token(&g, elem_bytes) * (double)all;
    *sliding = eng_kv_bytes_per_token(&w, elem_bytes) * (double)kept;
    return *global + *sliding;
}

eng_model_shape eng_model_get_shape(const eng_model *m) {
    eng_model_shape s = {m->hp.n_layer,  m->hp.n_embd, m->hp.n_head, m->hp.n_kv_head,
                         m->hp.head_dim, m->hp.n_ff,   m->hp.n_swa,  m->hp.n_layer_swa};
    return s;
}

/* The shared hyperparameters alone: no architecture entry is consulted, so
 * this reads files of architectures the engine cannot run. */
int eng_model_shape_read(const char *path, eng_model_shape *out, util_err *err) {
    eng_gguf *g = NULL;
    int rc = eng_gguf_open(&g, path, err);
    if (rc) return rc;
    const char *arch;
    size_t len;
    rc = eng_gguf_get_str(g, "general.architecture", &arch, &len, err);
    if (rc == UTIL_ENOTFOUND)
        rc = util_err_set(err, UTIL_EFORMAT, "model file '%s': missing key 'general.architecture'", path);
    eng_hparams hp;
    memset(&hp, 0, sizeof hp);
    if (rc == UTIL_OK) {
        char archz[32];
        snprintf(archz, sizeof archz, "%.*s", (int)(len < 31 ? len : 31), arch);
        hp_src src = {g, path, archz};
        rc = read_hparams(&src, &hp, err);
    }
    unsigned char *swa = NULL;
    if (rc == UTIL_OK) {
        char archz[32];
        snprintf(archz, sizeof archz, "%.*s", (int)(len < 31 ? len : 31), arch);
        rc = swa_read(g, path, archz, &hp, &swa, err);
    }
    if (rc == UTIL_OK) {
        eng_model_shape s = {hp.n_layer,  hp.n_embd, hp.n_head, hp.n_kv_head,
                             hp.head_dim, hp.n_ff,   hp.n_swa,  hp.n_layer_swa};
        *out = s;
    }
    free(swa);
    eng_gguf_free(g);
    return rc;
}

int eng_model_info_read(const char *path, eng_model_info *out, util_err *err) {
    memset(out, 0, sizeof *out);
    int rc = eng_model_shape_read(path, &out->shape, err);
    if (rc) return rc;
    eng_gguf *g = NULL;
    if ((rc = eng_gguf_open(&g, path, err))) return rc;
    const char *s;
    size_t len;
    if (eng_gguf_get_str(g, "general.architecture", &s, &len, NULL) == UTIL_OK)
        snprintf(out->arch, sizeof out->arch, "%.*s", (int)(len < 31 ? len : 31), s);
    if (eng_gguf_get_str(g, "general.name", &s, &len, NULL) == UTIL_OK)
        snprintf(out->name, sizeof out->name, "%.*s", (int)(len < 95 ? len : 95), s);
    eng_hparams hp;
    memset(&hp, 0, sizeof hp);
    hp_src src = {g, path, out->arch};
    unsigned char *swa = NULL;
    if ((rc = read_hparams(&src, &hp, err)) || (rc = swa_read(g, path, out->arch, &hp, &swa, err))) {
        eng_gguf_free(g);
        return rc;
    }
    out->n_ctx_train = hp.n_ctx_train;
    out->rope_base = hp.rope_base;
    out->rope_base_swa = hp.rope_base_swa;
    out->file_bytes = eng_gguf_size(g);
    out->layer_pattern = calloc((size_t)hp.n_layer + 1, 1);
    for (int il = 0; out->layer_pattern && il < hp.n_layer; il++)
        out->layer_pattern[il] = swa && swa[il] ? 'S' : 'G';
    free(swa);
    for (int64_t i = 0; i < eng_gguf_tensor_count(g); i++) {
        const eng_gguf_tensor *t = eng_gguf_tensor_at(g, i);
        uint64_t n = 1;
        for (int d = 0; d < t->n_dims; d++) n *= (uint64_t)t->ne[d];
        out->n_params += n;
        if (strcmp(t->name, "token_embd.weight") == 0) out->n_vocab = (int)t->ne[1];
        const eng_type_traits *tr = eng_type_get(t->type);
        const char *tn = tr ? tr->name : "unknown";
        int k = 0;
        while (k < out->n_types && strcmp(out->types[k].name, tn) != 0) k++;
        if (k == out->n_types) {
            if (k == (int)(sizeof out->types / sizeof out->types[0])) continue;
            snprintf(out->types[k].name, sizeof out->types[k].name, "%s", tn);
            out->n_types++;
        }
        out->types[k].n_tensors++;
        out->types[k].n_params += n;
        out->types[k].bytes += t->nbytes;
    }
    eng_gguf_free(g);
    if (!out->layer_pattern) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    return UTIL_OK;
}

void eng_model_info_release(eng_model_info *info) {
    if (!info) return;
    free(info->layer_pattern);
    info->layer_pattern = NULL;
}
