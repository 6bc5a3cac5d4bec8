/* engine/engine.h: the embedded engine's public API, the only engine header
 * agent/ and linter/ need besides tokenizer.h and chat.h. A model (weights,
 * tokenizer, chat template, backend) is opened once; a sequence holds the KV
 * cache of one token stream and evaluates tokens appended to it; generate runs
 * prefill + sampling + decode with timing. Types are opaque. */
#ifndef ENG_ENGINE_H
#define ENG_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"
#include "chat.h"
#include "sample.h"
#include "tokenizer.h"

typedef struct eng_model eng_model;
typedef struct eng_seq eng_seq;

typedef struct eng_model_params {
    int n_threads; /* <= 0: all online cores */
} eng_model_params;

/* Opens a GGUF model: validates the file, maps weights, builds the tokenizer
 * and chat template, starts the backend. Caller frees with eng_model_free. */
int eng_model_open(eng_model **out, const char *path, const eng_model_params *params,
                   util_err *err);
void eng_model_free(eng_model *m);

const eng_tokenizer *eng_model_tokenizer(const eng_model *m);
const eng_chat *eng_model_chat(const eng_model *m);
const char *eng_model_arch(const eng_model *m);
const char *eng_model_name(const eng_model *m);
const char *eng_model_path(const eng_model *m);
int32_t eng_model_n_vocab(const eng_model *m);
int eng_model_n_ctx_train(const eng_model *m);
int eng_model_n_threads(const eng_model *m);
/* Bytes of KV cache per token (layers x kv heads x head dim x 2 x 2 bytes). */
size_t eng_model_kv_bytes_per_token(const eng_model *m);
/* Shape facts for `cachet kv` and reports. */
typedef struct eng_model_shape {
    int n_layer, n_embd, n_head, n_kv_head, head_dim, n_ff;
} eng_model_shape;
eng_model_shape eng_model_get_shape(const eng_model *m);
/* Reads the shape from a GGUF file's metadata alone (any architecture). */
int eng_model_shape_read(const char *path, eng_model_shape *out, util_err *err);

/* A sequence of up to n_ctx positions (<= 0: the model's training context).
 * Caller frees with eng_seq_free. */
int eng_seq_new(eng_seq **out, eng_model *m, int n_ctx, util_err *err);
void eng_seq_free(eng_seq *s);
int eng_seq_len(const eng_seq *s);
int eng_seq_n_ctx(const eng_seq *s);
/* Forgets positions >= n (n <= len). */
void eng_seq_truncate(eng_seq *s, int n);
/* Tokens per forward call during prefill (default 64; results do not depend on it). */
void eng_seq_set_batch(eng_seq *s, int n_batch);
/* Called after each prefill chunk with tokens done so far and the total. */
typedef void (*eng_progress_fn)(void *user, int done, int total);
void eng_seq_set_progress(eng_seq *s, eng_progress_fn fn, void *user);
/* Appends n tokens and computes them; if logits is non-NULL, writes the last
 * token's logits (n_vocab floats). UTIL_ERANGE if the context would overflow. */
int eng_seq_eval(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err);

/* --- generation --------------------------------------------------------- */

typedef struct eng_gen_stats {
    int prompt_tokens;
    int cached_tokens;   /* prompt tokens whose KV was reused (0 until the prefix cache) */
    int computed_tokens; /* prompt tokens computed */
    int generated_tokens;
    double ttft_ms;      /* prompt submitted -> first token sampled */
    double prefill_ms;
    double decode_ms;
    double prefill_tps;
    double decode_tps;
    int stop_reason;     /* 0 eog token, 1 max tokens, 2 context full, 3 canceled */
} eng_gen_stats;

/* Called with each generated token and its decoded text (complete UTF-8
 * characters only; may be empty). Return nonzero to stop. */
typedef int (*eng_token_cb)(void *user, int32_t id, const char *text, size_t len);

typedef struct eng_gen_params {
    int max_tokens;      /* <= 0: until the context is full */
    eng_sample_params sample;
    eng_token_cb on_token;
    void *user;
} eng_gen_params;

/* Evaluates prompt (appended to s) and generates. The generated ids go to
 * *out_ids (malloc'd, caller frees) when out_ids is non-NULL. */
int eng_generate(eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p,
                 int32_t **out_ids, int *n_out, eng_gen_stats *stats, util_err *err);

#endif
