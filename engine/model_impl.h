/* engine/model_impl.h: the model and sequence structs and the architecture
 * entry, private to engine/. Architectures (arch_*.c) read hyperparameters
 * and weights from here and run their forward pass over the backend vtable;
 * model.c lists them in its table and loads what they share. */
#ifndef ENG_MODEL_IMPL_H
#define ENG_MODEL_IMPL_H

#include "backend.h"
#include "engine.h"
#include "gguf.h"
#include "kvcache.h"
#include "kvstream.h"

/* The hyperparameters every architecture has (model.c reads them from the
 * "<arch>.*" keys with llama.cpp's defaults). */
typedef struct eng_hparams {
    int n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_kv_head, head_dim, n_ff, n_rot;
    float eps, rope_base, rope_freq_scale;
    /* Sliding-window attention (model.c, swa_read): the window in positions (0:
     * none), how many layers slide, and their RoPE (the global layers use
     * rope_base and rope_freq_scale). */
    int n_swa, n_layer_swa;
    float rope_base_swa, rope_freq_scale_swa;
    float q_scale; /* multiplies q before attention (an architecture's load_hparams; 0: none) */
    /* Multi-head latent attention (deepseek2, arch_deepseek2.c; 0 elsewhere):
     * the file's ranks and head dims (qk_rope is n_rot). head_dim and
     * n_kv_head then describe the attention as the cache holds it: naive,
     * n_head heads of max(qk_nope + qk_rope, v_head_dim); absorbed, one
     * head of qk_rope + kv_lora_rank (the latent, values = keys). */
    int q_lora_rank, kv_lora_rank, qk_nope, v_head_dim, mla_absorbed;
    int scratch_extra; /* floats per token of eng_scratch.ex the pass needs (0: none) */
} eng_hparams;

/* The tensors of one layer every architecture has, the ones some add (NULL
 * when the architecture has none: see eng_arch.tensors), and where its KV
 * lives. */
typedef struct eng_layer {
    eng_weight wq, wk, wv, wo, w_gate, w_up, w_down;
    const float *attn_norm, *ffn_norm;
    const float *attn_q_norm, *attn_k_norm;      /* ENG_ARCH_QK_NORM: per head, over head_dim */
    const float *post_attn_norm, *post_ffw_norm; /* ENG_ARCH_POST_NORMS: over n_embd */
    const float *bq, *bk, *bv;                   /* ENG_ARCH_QKV_BIAS: over n_head / n_kv_head * head_dim */
    /* ENG_ARCH_MLA (deepseek2): wq is attn_q, or NULL data with q_a/q_b
     * (a q LoRA rank); kv_a = attn_kv_a_mqa (latent | rope key rows); kv_b
     * the unsplit attn_kv_b; per head, uk_t (kv_lora_rank rows of qk_nope:
     * W_UK transposed, f32, for the absorbed query) and uv (W_UV: v_head_dim
     * rows of kv_b); wo reads n_head * v_head_dim. */
    eng_weight wq_a, wq_b, wkv_a, wkv_b;
    const float *q_a_norm, *kv_a_norm;
    eng_weight *uk_t, *uv;
    int swa;     /* 1: a sliding-window layer (attends to the last hp.n_swa positions) */
    int kv_swa;  /* 1: its KV lives in the sliding pages (eng_model.kv_split) */
    int kv_slot; /* the layer of its KV view (eng_seq_layer_kv): its index among its kind */
} eng_layer;

/* One sequence's part of a forward pass: n_tok tokens at positions
 * seq->len .. seq->len + n_tok - 1 (KV pages present), the logits of its last
 * n_logits (0 <= n_logits <= n_tok). pass says whether they are prompt tokens
 * or a generated one; it goes to every op that takes it. */
typedef struct eng_fwd_entry {
    eng_seq *seq;
    const int32_t *toks;
    int n_tok;
    int n_logits;
    eng_pass pass;
} eng_fwd_entry;

/* A forward pass over n entries (distinct sequences): their rows lie one
 * after another in the scratch (entry 0's n_tok rows first), and their
 * logits too ([b->n_logits][n_vocab] in sc->logits, entry order). Matmuls,
 * norms and activations run over all rows at once (weights read once per
 * pass); RoPE, kv_store and attention run per entry, at its positions over
 * its KV (eng_fwd_attend). One entry is a single sequence's pass. */
typedef struct eng_fwd_batch {
    const eng_fwd_entry *e;
    int n;
    int n_tok, n_logits;    /* sums over the entries */
    struct eng_scratch *sc; /* n_batch >= n_tok, logits_rows >= n_logits */
} eng_fwd_batch;

/* Runs a batch through the model. Does not advance any sequence's len. */
typedef int (*eng_forward_fn)(const eng_model *m, const eng_fwd_batch *b, util_err *err);

/* One architecture: the entry model.c's table holds for a
 * general.architecture name. Adding one is an entry plus its arch_*.c. */
/* Tensors an architecture adds to each layer (eng_arch.tensors). */
enum {
    ENG_ARCH_QK_NORM = 1,    /* blk.N.attn_q_norm, attn_k_norm */
    ENG_ARCH_POST_NORMS = 2, /* blk.N.post_attention_norm, post_ffw_norm */
    ENG_ARCH_QKV_BIAS = 4,   /* blk.N.attn_q, attn_k, attn_v (.bias) */
    ENG_ARCH_MLA = 16,       /* deepseek2's latent attention tensors (eng_layer's MLA fields) */
    ENG_ARCH_FUSED = 8,      /* blk.N.attn_qkv (q|k|v rows) when the file has it, and ffn_up
                              * holding gate|up (2 n_ff rows, no ffn_gate): phi3. model.c
                              * binds wq/wk/wv and w_gate/w_up as row ranges of them */
};

typedef struct eng_arch {
    const char *name;
    /* Reads and checks what the architecture adds to the shared
     * hyperparameters (already in m->hp); NULL: nothing to add. */
    int (*load_hparams)(eng_model *m, util_err *err);
    eng_forward_fn forward;
    unsigned tensors;   /* ENG_ARCH_* flags */
    eng_rope_mode rope; /* how the pass pairs rope dims (arch_llama.c's family) */
} eng_arch;

/* Scratch activations for up to n_batch tokens. */
typedef struct eng_scratch {
    int n_batch;
    int logits_rows; /* rows of n_vocab in logits: 1, or n_batch after eng_seq_eval_all */
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2, *logits;
    float *ex; /* n_batch rows of hp.scratch_extra floats (NULL when 0): an architecture's own */
} eng_scratch;

struct eng_model {
    char *path;
    char *name;
    eng_gguf *gguf;
    eng_tokenizer *tok;
    eng_chat *chat;
    eng_backend *be;
    const eng_arch *arch; /* an entry of model.c's table */
    eng_hparams hp;
    eng_weight tok_embd, output;
    const float *output_norm;
    const float *rope_freqs; /* rope_freqs.weight (n_rot/2 divisors: llama 3's scaling), or NULL */
    eng_layer *layers;
    unsigned char *layer_swa;  /* n_layer flags from model.c's swa_read (NULL: no sliding layers) */
    const float **norm_copies; /* aligned copies of norm vectors (freed with the model) */
    int n_norm_copies;
    eng_kvcache *cache;            /* KV page pool + prefix tree, shared by all sequences */
    uint32_t kv_type_k, kv_type_v; /* KV element types (ENG_TYPE_F16, _Q8_0, _Q4_0) */
    int kv_split;            /* 1: sliding layers have pages of their own (some layers slide, some not) */
    eng_weight *mla_heads;   /* the layers' uk_t and uv entries (one block) */
    int kv_sinks, kv_window; /* StreamingLLM for every sequence (kv_window > 0; eng_model_params) */
    int kv_h2o_budget, kv_h2o_recent; /* H2O for every sequence (budget > 0) */
};

/* The KV views of a sequence of m (pages left to the caller): the global
 * layers' and the sliding layers'; latent rows under absorbed MLA. Inline:
 * seq.c and model.c both size pages by it (no call from seq.c into model.c). */
static inline void eng_model_kv_views(const eng_model *m, eng_kv_view *kv, eng_kv_view *kv_swa) {
    int n_slid = m->kv_split ? m->hp.n_layer_swa : 0, kv_dim = m->hp.n_kv_head * m->hp.head_dim;
    eng_kv_view_init(kv, ENG_KV_PAGE_TOKENS, m->hp.n_layer - n_slid, kv_dim, m->kv_type_k, m->kv_type_v);
    eng_kv_view_init(kv_swa, ENG_KV_PAGE_TOKENS, n_slid, kv_dim, m->kv_type_k, m->kv_type_v);
    if (m->hp.mla_absorbed) eng_kv_view_latent(kv);
}


struct eng_seq {
    eng_model *m;
    int n_ctx;
    int len;
    int n_batch;
    int32_t *toks; /* the len tokens held */
    void **pages;  /* page table: page i holds positions i*P .. i*P+P-1 */
    eng_kv_node *
        *nodes;  /* nodes[i]: the cache node page i belongs to (pinned, read-only), or NULL if private */
    int n_pages; /* pages present */
    int max_pages;
    eng_kv_view kv;
    /* Sliding layers (m->kv_split): their page table, by the same page index;
     * only the window of the next position is held (entries below swa_lo and
     * outside the window are NULL). A page shared with the cache is mapped
     * from nodes[i] (read-only) like pages[i]. */
    void **spages;
    int swa_lo;
    eng_kv_view kv_swa;
    eng_scratch sc;
    eng_progress_fn progress;
    void *progress_user;
    eng_kvstream *stream; /* StreamingLLM (m->kv_window > 0): len <= its cap; private */
};

/* The KV view a layer's keys and values live in (its layer there: kv_slot). */
static inline const eng_kv_view *eng_seq_layer_kv(const eng_seq *s, const eng_layer *L) {
    return L->kv_swa ? &s->kv_swa : &s->kv;
}

/* --- forward-pass parts every architecture shares (batch.c) ------------- */

/* x = the embedding rows of every entry's tokens. */
int eng_fwd_embed(const eng_model *m, const eng_fwd_batch *b, float *x, util_err *err);
/* y = W x over the batch's n_tok rows (one call per run of entries with the
 * same pass; one call for all on a pass_blind backend). */
int eng_fwd_matmul(const eng_model *m, const eng_fwd_batch *b, const eng_weight *w, const float *x, float *y,
                   util_err *err);
/* The same for n (<= ENG_MATMUL_N_MAX) weights of the same cols sharing the
 * input x (q/k/v, gate/up): one backend call per run of entries when it has
 * matmul_n. */
int eng_fwd_matmul_n(const eng_model *m, const eng_fwd_batch *b, const eng_weight *const *w, float *const *y,
                     int n, const float *x, util_err *err);
/* Per entry, on its rows of sc->q / sc->k / sc->v: RoPE of q and k at its
 * positions (rope: the architecture's arguments; x, n_tok, n_head and pos0
 * are filled in), q *= q_scale (0: not scaled), k and v stored in its KV
 * view of layer L, attention into sc->att (attn: the architecture's
 * arguments; out, q, kv, layer, n_tok, pos0 and pass are filled in). */
void eng_fwd_attend(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, const eng_rope_args *rope,
                    float q_scale, const eng_attn_args *attn);
/* The output head: norm of each entry's last n_logits rows of sc->x, then
 * the logits of all of them into sc->logits. */
int eng_fwd_head(const eng_model *m, const eng_fwd_batch *b, util_err *err);
/* The SwiGLU feed-forward block of layer L with its pre-norm and residual
 * (llama family, deepseek2's dense layers): sc->x += FFN(RMSNorm(sc->x)). */
int eng_fwd_ffn_swiglu(const eng_model *m, const eng_fwd_batch *b, const eng_layer *L, util_err *err);

/* --- what batch.c uses of a sequence (seq.c) ----------------------------- */

/* Scratch for n_batch rows and logits_rows rows of logits; UTIL_ENOMEM. */
int eng_scratch_init(eng_backend *be, eng_scratch *sc, const eng_hparams *hp, int n_batch, int logits_rows);
void eng_scratch_release(eng_backend *be, eng_scratch *sc);
/* Checks n tokens fit and are in the vocabulary and makes their positions
 * writable (seq_eval's checks), without evaluating them. */
int eng_seq_batch_prepare(eng_seq *s, const int32_t *toks, int n, util_err *err);
/* eng_seq_set_tokens without the evaluation: the sequence keeps or adopts
 * the longest reusable prefix of toks[0..n-1) (at most n - 1 tokens) and
 * counts the query; the caller computes toks[s->len..n) (in a batch) and
 * commits. */
int eng_seq_reuse(eng_seq *s, const int32_t *toks, int n, int *cached_memory, int *cached_disk,
                  util_err *err);
/* Appends n evaluated tokens (after the forward pass). */
void eng_seq_batch_advance(eng_seq *s, const int32_t *toks, int n);

/* eng_kvstream_h2o_layers from the model's layers (seq.c, for H2O on a
 * model with sliding-window layers); inline: seq.c uses no symbol of model.c. */
static inline int eng_model_h2o_layers(const eng_model *m, eng_kvstream *st, util_err *err) {
    int rc = eng_kvstream_h2o_layers(st, m->hp.n_swa, err);
    for (int l = 0; rc == 0 && l < m->hp.n_layer; l++)
        eng_kvstream_h2o_layer(st, l, m->layers[l].swa, m->layers[l].kv_swa, m->layers[l].kv_slot);
    return rc;
}

/* --kv-window / --kv-evict with --device cuda (or CACHET_DEVICE=cuda):
 * UTIL_EUNSUPPORTED, checked before the backend opens (model.c). */
int eng_model_stream_device_check(const eng_model_params *p, util_err *err);

/* --- architectures (arch_*.c) -------------------------------------------- */

int eng_llama_hparams(eng_model *m, util_err *err);
int eng_llama_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err);
int eng_gemma3_hparams(eng_model *m, util_err *err);
int eng_gemma3_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err);
int eng_phi3_hparams(eng_model *m, util_err *err);
int eng_deepseek2_hparams(eng_model *m, util_err *err);
int eng_deepseek2_forward(const eng_model *m, const eng_fwd_batch *b, util_err *err);

#endif
