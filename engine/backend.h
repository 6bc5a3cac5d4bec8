/* engine/backend.h: the backend vtable the forward passes are written against.
 * A backend owns its threads, streams and scratch; activations, KV pages and
 * weights live in memory the backend allocates and addresses (host memory for
 * the CPU backend, device memory for CUDA): callers allocate through alloc,
 * move bytes with to_dev/to_host/copy and never dereference those pointers
 * themselves. Each op is a plain
 * function of its arguments: a token's result never depends on how many other
 * tokens are in the call (batch invariance, required by the prefix cache).
 * Does not know about models, tokenizers or sequences. */
#ifndef ENG_BACKEND_H
#define ENG_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "quant.h"

/* A 2-D weight: `rows` rows of `cols` contiguous values in ggml type `type`. */
typedef struct eng_weight {
    const char *name;
    uint32_t type;
    int64_t cols; /* ne[0] */
    int64_t rows; /* ne[1] */
    size_t row_bytes;
    const void *data; /* host copy (the file mapping) */
    void *dev;        /* backend copy, NULL when the backend reads `data` */
    void *dev_f16;    /* a second backend copy, as f16 rows (CUDA's prefill GEMM), or NULL */
} eng_weight;

/* Where a layer's K and V rows live: a page table of byte pages, each page
 * laid out [layer][K rows][V rows], page_tokens rows each; a row holds the
 * kv_dim values of one position in type_k (K) or type_v (V), ggml type ids:
 * ENG_TYPE_F16, ENG_TYPE_Q8_0 or ENG_TYPE_Q4_0 (blocks of 32 values never
 * straddle a head: head_dim % 32 == 0 for the block types). Fill it with
 * eng_kv_view_init; the byte sizes come from there and eng_kv_page_bytes. */
typedef struct eng_kv_view {
    void *const *pages;
    int page_tokens;
    int n_layer;
    int kv_dim;
    uint32_t type_k, type_v;
    size_t k_row, v_row; /* bytes of one position's K row and V row */
    int v_is_k;          /* 1: no V rows: values are the K rows (MLA's latent cache, eng_kv_view_latent) */
} eng_kv_view;

/* Sets the shape, the types and the row sizes (pages is left to the caller). */
static inline void eng_kv_view_init(eng_kv_view *kv, int page_tokens, int n_layer, int kv_dim,
                                    uint32_t type_k, uint32_t type_v) {
    kv->page_tokens = page_tokens;
    kv->n_layer = n_layer;
    kv->kv_dim = kv_dim;
    kv->type_k = type_k;
    kv->type_v = type_v;
    kv->k_row = eng_type_row_size(type_k, kv_dim);
    kv->v_row = eng_type_row_size(type_v, kv_dim);
    kv->v_is_k = 0;
}

/* Makes an initialized view one of K rows only, whose values are its keys
 * (multi-head latent attention absorbed: each row holds the latent and the
 * RoPE key, attended to as both): pages are half the size, kv_store writes
 * the K rows alone and eng_kv_v returns the K row. */
static inline void eng_kv_view_latent(eng_kv_view *kv) {
    kv->v_is_k = 1;
    kv->type_v = kv->type_k;
    kv->v_row = 0;
}

/* Bytes of one page: every layer's K and V rows of page_tokens positions.
 * The one formula for the pool, the disk tier and copies. */
static inline size_t eng_kv_page_bytes(const eng_kv_view *kv) {
    return (size_t)kv->n_layer * (size_t)kv->page_tokens * (kv->k_row + kv->v_row);
}

/* The K row of a position (its kv_dim values), then the V row. */
static inline uint8_t *eng_kv_k(const eng_kv_view *kv, int layer, int pos) {
    uint8_t *page = (uint8_t *)kv->pages[pos / kv->page_tokens];
    return page + (size_t)layer * (size_t)kv->page_tokens * (kv->k_row + kv->v_row) +
           (size_t)(pos % kv->page_tokens) * kv->k_row;
}

static inline uint8_t *eng_kv_v(const eng_kv_view *kv, int layer, int pos) {
    if (kv->v_is_k) return eng_kv_k(kv, layer, pos);
    uint8_t *page = (uint8_t *)kv->pages[pos / kv->page_tokens];
    return page + (size_t)layer * (size_t)kv->page_tokens * (kv->k_row + kv->v_row) +
           (size_t)kv->page_tokens * kv->k_row + (size_t)(pos % kv->page_tokens) * kv->v_row;
}

/* What a forward pass carries: prompt tokens, or one generated token. It is
 * passed to every op whose kernel may differ between the two (matmul,
 * attention). A backend with two paths (CUDA: cuBLAS and single-pass
 * attention for prompts, the dequantizing matvec and split-K attention for
 * decode) picks by it, never by the token count, so a prompt token's values
 * do not depend on how the prompt was split (prefix-cache hits equal cold
 * runs). The CPU backend has one path for both. */
typedef enum eng_pass { ENG_PASS_PROMPT = 0, ENG_PASS_DECODE = 1 } eng_pass;

typedef struct eng_attn_args {
    float *out;            /* [n_tok][n_head * head_dim] */
    const float *q;        /* [n_tok][n_head * head_dim], roped */
    const eng_kv_view *kv; /* keys/values for positions 0 .. pos0 + n_tok - 1 */
    int layer;
    int n_tok;
    int pos0; /* position of the first query token */
    int n_head;
    int n_kv_head;
    int head_dim;
    float scale;   /* multiplies q·k */
    int window;    /* > 0: key j visible to query p iff p - j < window */
    eng_pass pass; /* prompt or decode tokens (see eng_pass) */
} eng_attn_args;

/* How RoPE pairs a head's dims. */
typedef enum eng_rope_mode {
    ENG_ROPE_NORMAL = 0, /* adjacent pairs (2i, 2i+1): llama GGUF (Q/K rows permuted by the converter) */
    ENG_ROPE_NEOX = 1,   /* half-split pairs (i, i + n_rot/2): gemma3 */
} eng_rope_mode;

typedef struct eng_rope_args {
    float *x; /* [n_tok][n_head * head_dim], rotated in place */
    int n_tok;
    int n_head;
    int head_dim;
    int n_rot;  /* leading dims of each head rotated (even, <= head_dim) */
    int pos0;   /* position of the first token */
    float base; /* pair i turns by pos * freq_scale * base^(-2i / n_rot) */
    float freq_scale;
    eng_rope_mode mode;
    const float *freq_factors; /* NULL, or n_rot/2 divisors of pair i's angle (llama 3's
                                * rope_freqs; backend memory, from load_vec) */
} eng_rope_args;

typedef struct eng_backend eng_backend;

/* The most weights one matmul_n call takes (today's callers pass 2 or 3). */
enum { ENG_MATMUL_N_MAX = 4 };

typedef struct eng_backend_ops {
    const char *name;
    void (*destroy)(eng_backend *be);
    int (*n_threads)(const eng_backend *be);
    /* Tokens per forward call the backend is best at (sequences' default). */
    int n_batch;
    /* 1: kv_store and attention take q8_0 and q4_0 rows besides f16 (--kv-type). */
    int kv_quant;
    /* 1: KV pages are host memory the engine may move rows in (StreamingLLM's
     * eviction, engine/kvstream.c) and kv_store takes v == NULL. */
    int kv_stream;
    /* 1: matmul gives the same values whatever the pass (one path for prompt
     * and decode tokens), so a forward pass may run rows of both in one call
     * (a prompt chunk riding with decode steps reads the weights once). */
    int pass_blind;

    /* --- memory ----------------------------------------------------------- */
    /* Backend memory of `bytes` (64-byte aligned), or NULL when out of it. */
    void *(*alloc)(eng_backend *be, size_t bytes);
    void (*release)(eng_backend *be, void *p);
    /* Copies host -> backend, backend -> host, backend -> backend. to_host
     * waits for all queued work first and reports its errors. */
    int (*to_dev)(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err);
    int (*to_host)(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err);
    int (*copy)(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err);
    /* Makes a weight addressable by the ops: sets w->dev to a backend copy of
     * its rows (freed with the backend), or leaves it NULL when the backend
     * reads w->data (CPU). Once per weight, at model load. */
    int (*load)(eng_backend *be, eng_weight *w, util_err *err);
    /* The same for a read-only f32 vector (norm weights): *out is the
     * backend's copy, or v itself on the CPU. */
    int (*load_vec)(eng_backend *be, const float *v, size_t n, const float **out, util_err *err);
    /* Bytes/s a streaming read of backend memory reaches (measured), or NULL
     * (CPU: callers measure host memory themselves). */
    double (*bandwidth)(eng_backend *be);

    /* --- decode steps (optional; NULL on the CPU) -------------------------- */
    /* A decode step, the forward pass of one generated token at position
     * pos0 over kv, is about to be issued. `key` names the caller's buffers:
     * two steps with the same key issue the same op calls with the same
     * arguments except pos0 and the token id. The backend may record a
     * step's calls once and replay the recording for later steps with the
     * same key (CUDA graphs: one launch instead of ~15 per layer); while it
     * replays, the ops return at once and step_end launches the recording.
     * Returns 1 when the calls will be replayed, 0 when they run as usual. */
    int (*step_begin)(eng_backend *be, uint64_t key, const eng_kv_view *kv, int32_t id, int pos0,
                      util_err *err);
    /* Ends the step (abort: the forward pass failed; discard a recording).
     * Returns 1 when nothing ran (a recording failed, or the calls did not
     * match the recording): the caller issues the step's calls again, which
     * then run as usual. */
    int (*step_end)(eng_backend *be, int abort, util_err *err);

    /* --- ops -------------------------------------------------------------- */
    /* Sizes scratch for sequences of up to n_ctx positions; call before
     * attention on longer sequences. */
    int (*reserve)(eng_backend *be, int n_ctx, util_err *err);
    /* y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tok; x is [n_tok][cols];
     * pass: which tokens x holds (see eng_pass). */
    int (*matmul)(eng_backend *be, const eng_weight *w, const float *x, float *y, int n_tok, eng_pass pass,
                  util_err *err);
    /* y[j] = w[j] x for n (<= ENG_MATMUL_N_MAX) weights of the same cols
     * sharing one input (q/k/v, gate/up): the same values as n matmul calls,
     * in one call (optional; NULL: the engine calls matmul n times). */
    int (*matmul_n)(eng_backend *be, const eng_weight *const *w, float *const *y, int n, const float *x,
                    int n_tok, eng_pass pass, util_err *err);
    /* out[t] = dequantized row ids[t] of w. */
    int (*get_rows)(eng_backend *be, const eng_weight *w, const int32_t *ids, int n, float *out,
                    util_err *err);
    /* y = x / sqrt(mean(x^2) + eps) * w, per row of n values (y may be x). */
    void (*rmsnorm)(eng_backend *be, float *y, const float *x, const float *w, int n, int n_rows, float eps);
    /* Rotates n_rot dims of each head of each token at positions pos0 + t. */
    void (*rope)(eng_backend *be, const eng_rope_args *a);
    /* Stores k and v ([n_tok][kv_dim]) at positions pos0.. of a layer, in the
     * view's types; v == NULL stores the keys alone (backends with kv_stream). */
    void (*kv_store)(eng_backend *be, const eng_kv_view *kv, int layer, const float *k, const float *v,
                     int n_tok, int pos0);
    void (*attention)(eng_backend *be, const eng_attn_args *a);
    /* Optional (NULL: callers call attention once per entry): the attention of
     * n argument sets of one layer (the same heads, head_dim and scale; each its
     * own view, tokens and positions) in one call. Each entry's output has the
     * bits attention gives it alone; entries whose views share pages (a prefix
     * from the prefix cache) may read those rows once for all of them. */
    void (*attention_batch)(eng_backend *be, const eng_attn_args *a, int n);
    /* out = silu(gate) * up, elementwise over n (out may alias gate). */
    void (*swiglu)(eng_backend *be, float *out, const float *gate, const float *up, size_t n);
    /* out = gelu_tanh(gate) * up. */
    void (*geglu)(eng_backend *be, float *out, const float *gate, const float *up, size_t n);
    /* y += x over n values. */
    void (*add)(eng_backend *be, float *y, const float *x, size_t n);
    /* x *= s over n values. */
    void (*scale)(eng_backend *be, float *x, float s, size_t n);
} eng_backend_ops;

/* A backend: its ops; each implementation extends the struct privately. It
 * holds no per-pass mode: what a call needs comes in its arguments. */
struct eng_backend {
    const eng_backend_ops *ops;
};

/* --- opening a backend (backend.c, the one file that names both) -------- */

typedef struct eng_backend_params {
    const char *device; /* "auto", "cpu", "cuda", "cuda:N" (eng_device_parse); NULL:
                         * $CACHET_DEVICE when it is set, else "auto" */
    int n_threads;      /* CPU workers (<= 0: all the cores this process may use) */
    int exact;          /* 1: the CPU's exact mode (UTIL_EINVAL on CUDA) */
} eng_backend_params;

/* Opens the backend p->device names: "auto" takes the GPU when this build has
 * CUDA and the machine has one, else the CPU. UTIL_EINVAL for a bad name
 * (the message names it), a backend's own errors otherwise. Caller frees with
 * eng_backend_free. */
int eng_backend_open(eng_backend **out, const eng_backend_params *p, util_err *err);

/* The CPU backend with n_threads workers (<= 0: all online cores), its kernels
 * at the best SIMD level the CPU has, or at the level CACHET_CPU names
 * (scalar|avx2|avx512). ops->name names the level ("cpu-avx512"). */
int eng_backend_cpu_new(eng_backend **out, int n_threads, util_err *err);
/* The same at an explicit level (an eng_simd value from cpu/cpu_features.h; tests and
 * benchmarks). UTIL_EINVAL if this CPU lacks it. */
int eng_backend_cpu_new_level(eng_backend **out, int n_threads, int level, util_err *err);
/* Switches a CPU backend's matmuls to the exact kernels (f32 activations,
 * see quant_exact.c); ops->name gains "-exact". Before any use. */
int eng_backend_cpu_set_exact(eng_backend *be);
/* The CUDA backend on device `device` (engine/cuda/; only in binaries built
 * with `make cuda`, elsewhere UTIL_EUNSUPPORTED with a message saying so). */
int eng_backend_cuda_new(eng_backend **out, int device, util_err *err);
/* Number of usable CUDA devices (0 without CUDA support or without a GPU). */
int eng_backend_cuda_count(void);
void eng_backend_free(eng_backend *be);

#endif
