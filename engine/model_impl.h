/* engine/model_impl.h: the model and sequence structs, private to engine/.
 * Architectures (arch_*.c) read hyperparameters and weights from here and
 * run their forward pass over the backend vtable. */
#ifndef ENG_MODEL_IMPL_H
#define ENG_MODEL_IMPL_H

#include "backend.h"
#include "engine.h"
#include "gguf.h"
#include "kvcache.h"

typedef enum eng_arch_id { ENG_ARCH_LLAMA = 0, ENG_ARCH_GEMMA3 = 1 } eng_arch_id;

typedef struct eng_hparams {
    int n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_kv_head, head_dim, n_ff, n_rot;
    float eps, rope_base, rope_base_local, rope_freq_scale;
    int swa_window;  /* gemma3 local layers; 0 elsewhere */
    int swa_pattern; /* layer il is local iff il % pattern < pattern - 1 */
} eng_hparams;

typedef struct eng_layer {
    eng_weight wq, wk, wv, wo, w_gate, w_up, w_down;
    const float *attn_norm, *ffn_norm;
    const float *q_norm, *k_norm, *post_attn_norm, *post_ffn_norm; /* gemma3 */
} eng_layer;

/* Scratch activations for up to n_batch tokens. */
typedef struct eng_scratch {
    int n_batch;
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2, *logits;
} eng_scratch;

struct eng_model {
    char *path;
    char *name;
    eng_gguf *gguf;
    eng_tokenizer *tok;
    eng_chat *chat;
    eng_backend *be;
    eng_arch_id arch;
    eng_hparams hp;
    eng_weight tok_embd, output;
    const float *output_norm;
    eng_layer *layers;
    const float **norm_copies; /* aligned copies of norm vectors (freed with the model) */
    int n_norm_copies;
    eng_kvcache *cache;        /* KV page pool + prefix tree, shared by all sequences */
};

enum { ENG_KV_PAGE_TOKENS = 16 };

struct eng_seq {
    eng_model *m;
    int n_ctx;
    int len;
    int n_batch;
    int32_t *toks;         /* the len tokens held */
    uint16_t **pages;      /* page table: page i holds positions i*P .. i*P+P-1 */
    eng_kv_node **nodes;   /* nodes[i]: the cache node page i belongs to (pinned, read-only), or NULL if private */
    int n_pages;           /* pages present */
    int max_pages;
    eng_kv_view kv;
    eng_scratch sc;
    eng_progress_fn progress;
    void *progress_user;
};

/* Runs n tokens at positions s->len .. s->len + n - 1 through the model
 * (n <= s->sc.n_batch, KV pages present); writes the last token's logits to
 * s->sc.logits when want_logits. Does not advance s->len. */
int eng_llama_forward(eng_seq *s, const int32_t *toks, int n, int want_logits, util_err *err);

#endif
