/* tests/synth.h: writes synthetic GGUF v3 models (llama, gemma3, qwen2 or
 * qwen3 architecture) of any shape and weight type, with seeded random weights and
 * a small valid vocabulary: byte-level BPE with ChatML control tokens for
 * llama, SentencePiece-style with byte fallback and Gemma's turn tokens for
 * gemma3. For tests and benchmarks that need odd shapes or no real model
 * file; the weights mean nothing, only validity and determinism matter. */
#ifndef SYNTH_H
#define SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* qwen2: llama's tensors + Q/K/V biases; qwen3: + per-head Q/K norms;
 * phi3: fused attn_qkv (q|k|v rows) and ffn_up holding gate|up (no ffn_gate);
 * deepseek2: DeepSeek-V2's multi-head latent attention (attn_q, or attn_q_a +
 * attn_q_a_norm + attn_q_b with a q LoRA rank; attn_kv_a_mqa, attn_kv_a_norm,
 * the unsplit attn_kv_b) and dense SwiGLU FFNs in every layer (no MoE). */
typedef enum synth_arch {
    SYNTH_ARCH_LLAMA = 0,
    SYNTH_ARCH_GEMMA3 = 1,
    SYNTH_ARCH_QWEN2 = 2,
    SYNTH_ARCH_QWEN3 = 3,
    SYNTH_ARCH_PHI3 = 4,
    SYNTH_ARCH_DEEPSEEK2 = 5
} synth_arch;

/* Smallest vocabularies. llama: 3 control tokens + 256 byte tokens; gemma3:
 * <pad> <eos> <bos> <unk> <start_of_turn> <end_of_turn> + 256 "<0xXX>" byte
 * tokens + U+2581 (SentencePiece's space). Larger sizes add single characters (gemma3), merge results, then
 * "tokN" filler tokens. */
#define SYNTH_MIN_VOCAB        259
#define SYNTH_MIN_VOCAB_GEMMA3 263

typedef struct synth_params {
    synth_arch arch; /* SYNTH_ARCH_LLAMA (the default) or SYNTH_ARCH_GEMMA3 */
    int n_layer, n_embd, n_head, n_kv_head, n_ff, n_vocab;
    int head_dim;      /* 0: n_embd / n_head (else written as attention.key_length; gemma3 always) */
    int n_ctx;         /* <arch>.context_length */
    float rope_base;   /* <arch>.rope.freq_base */
    int swa_window;    /* gemma3.attention.sliding_window (the pattern is gemma3's fixed 6); phi3
                         * writes it too (its files declare one; llama.cpp ignores it) */
    uint32_t wtype;    /* ggml type of the layer matrices */
    uint32_t etype;    /* type of token_embd */
    uint32_t otype;    /* type of output.weight when not tied */
    int tied;          /* 1: no output.weight (the head is token_embd) */
    uint32_t mix_type; /* 0, or the type of attn_v and ffn_down in the layers llama.cpp's
                         * _M mixes give more bits (its use_more_bits: the first and last
                         * eighth, every third between); q6_K makes Q4_K_M */
    uint64_t seed;
    int n_threads;     /* writer threads; 0: one per core. Never changes the bytes */
    const char *name;  /* general.name; NULL: "synthetic" */
    int rope_freqs;    /* 1: write rope_freqs.weight, Llama 3.1's scaling (factor 8, low 1,
                         * high 4, original context 8192) as its converter computes it */
    const char *vocab; /* a vocab-only GGUF (models/vocab/ggml-vocab-*.gguf) whose tokenizer.*
                         * keys are copied, n_vocab becoming its token count; NULL: synth's own */
    /* deepseek2 (0 elsewhere): q_lora_rank 0 queries straight from n_embd
     * (DeepSeek-V2-Lite); n_kv_head is written equal to n_head. */
    int q_lora_rank, kv_lora_rank, qk_nope, qk_rope, v_head_dim;
} synth_params;

/* SmolLM2-like defaults at toy size: llama, 2 layers, n_embd 64, 4 heads, 2
 * kv heads, n_ff 128, vocab 320, context 2048, rope base 10000, sliding
 * window 512 (gemma3 only), Q4_1 layers, Q8_0 tied embedding, seed 1. */
synth_params synth_defaults(void);

/* Smallest vocabulary of p's architecture (SYNTH_MIN_VOCAB*). */
int synth_min_vocab(const synth_params *p);

/* Tensors synth_write writes for p: llama 2 + 9 per layer, gemma3 2 + 13,
 * qwen2 2 + 12, qwen3 2 + 11, phi3 2 + 6, deepseek2 2 + 10 (+ 2 with a q LoRA
 * rank), + 1 if untied, + 1 with rope_freqs. */
int synth_tensor_count(const synth_params *p);

/* Weights in the file (every tensor's element count, the head once if tied). */
int64_t synth_param_count(const synth_params *p);

/* Checks p as synth_write would (dimensions, head/kv-head/vocab/type limits,
 * rows that hold whole blocks of their type), with a message in err. */
int synth_check(const synth_params *p, util_err *err);

/* Writes the model to path (created or truncated). Rejects what synth_check
 * rejects; on any failure (including a short write) the partial file is
 * removed. The same params give the same bytes, whatever n_threads. */
int synth_write(const char *path, const synth_params *p, util_err *err);

/* The token count of a vocab-only GGUF (what p->vocab makes n_vocab). */
int synth_vocab_size(const char *path, int *n_vocab, util_err *err);

/* Whether synth can write weights of this ggml type: f32, f16, bf16, q4_0,
 * q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K. */
int synth_type_ok(uint32_t type);

/* Quantizes n floats (a multiple of the type's block) into dst, which holds
 * eng_type_row_size(type, n) bytes. Round to nearest with per-block scales:
 * valid blocks, not llama.cpp's quality. Returns 0, or -1 for a type
 * synth_type_ok rejects. */
int synth_quantize_row(uint32_t type, const float *src, void *dst, int64_t n);

#endif
