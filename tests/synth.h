/* tests/synth.h: writes synthetic GGUF v3 models (llama architecture) of any
 * shape and weight type, with seeded random weights and a small valid
 * byte-level BPE vocabulary with ChatML control tokens. For tests and
 * benchmarks that need odd shapes or no real model file; the weights mean
 * nothing, only the file's validity and determinism matter. */
#ifndef SYNTH_H
#define SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* Smallest vocabulary: 3 control tokens + 256 byte tokens. Larger sizes add
 * merge results, then "tokN" filler tokens. */
#define SYNTH_MIN_VOCAB 259

typedef struct synth_params {
    int n_layer, n_embd, n_head, n_kv_head, n_ff, n_vocab;
    int head_dim;       /* 0: n_embd / n_head (else written as attention.key_length) */
    int n_ctx;          /* llama.context_length */
    float rope_base;    /* llama.rope.freq_base */
    uint32_t wtype;     /* ggml type of the layer matrices */
    uint32_t etype;     /* type of token_embd */
    uint32_t otype;     /* type of output.weight when not tied */
    int tied;           /* 1: no output.weight (the head is token_embd) */
    uint64_t seed;
    const char *name;   /* general.name; NULL: "synthetic" */
} synth_params;

/* SmolLM2-like defaults at toy size: 2 layers, n_embd 64, 4 heads, 2 kv heads,
 * n_ff 128, vocab 320, context 2048, rope base 10000, Q4_1 layers, Q8_0 tied
 * embedding, seed 1. */
synth_params synth_defaults(void);

/* Tensors synth_write_llama writes for p: 2 + 9 per layer + 1 if untied. */
int synth_tensor_count(const synth_params *p);

/* Writes the model to path (created or truncated). Rejects shapes the types
 * cannot hold (a row length not a multiple of the block size) and types the
 * writer has no quantizer for, with a message in err; a partial file is
 * removed. The same params give the same bytes. */
int synth_write_llama(const char *path, const synth_params *p, util_err *err);

/* Whether synth can write weights of this ggml type: f32, f16, bf16, q4_0,
 * q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K. */
int synth_type_ok(uint32_t type);

/* Quantizes n floats (a multiple of the type's block) into dst, which holds
 * eng_type_row_size(type, n) bytes. Round to nearest with per-block scales:
 * valid blocks, not llama.cpp's quality. Returns 0, or -1 for a type
 * synth_type_ok rejects. */
int synth_quantize_row(uint32_t type, const float *src, void *dst, int64_t n);

#endif
