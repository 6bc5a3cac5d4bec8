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
    int n_threads;          /* <= 0: all online cores */
    uint64_t kv_budget;     /* bytes of KV memory (pages); 0: default 1 GiB */
    int no_cache;           /* 1: no prefix reuse (pages are still pooled) */
    int no_disk_cache;      /* 1: memory tier only */
    const char *kv_dir;     /* disk tier directory; NULL: $XDG_CACHE_HOME/cachet/kv */
    uint64_t kv_disk_budget; /* 0: default 2 GiB */
    int debug;              /* 1: report corrupt disk entries */
    int exact;              /* 1: f32 activations everywhere (no 8-bit activation
                             * quantization): slower; the reference mode tested
                             * against a float64 implementation */
    const char *device;     /* "auto", "cpu", "cuda", "cuda:N": see --device; NULL:
                             * $CACHET_DEVICE when it is set, else "auto" */
} eng_model_params;

/* Prefix-cache counters of a model (all its sequences), like vLLM's
 * prefix_cache_queries / prefix_cache_hits (in tokens). */
typedef struct eng_cache_stats {
    uint64_t queries;        /* prompt tokens looked up */
    uint64_t hits;           /* of which reused (memory + disk) */
    uint64_t hits_disk;      /* of which loaded from the disk tier */
    uint64_t evictions;      /* pages evicted from memory */
    uint64_t pages_in_use, pages_cached, bytes_in_use, budget_bytes;
    uint64_t disk_reads, disk_writes, disk_corrupt;
} eng_cache_stats;

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
/* The backend's name, which names its kernel variant ("cpu-avx512"). */
const char *eng_model_backend(const eng_model *m);
/* Bytes of weights one decode step reads: every layer matrix, the output head
 * and the norm vectors (for bandwidth figures). */
uint64_t eng_model_weight_bytes(const eng_model *m);
eng_cache_stats eng_model_cache_stats(const eng_model *m);
/* Bytes/s a streaming read of the backend's memory reaches (a GPU's HBM,
 * measured on each call, ~0.1 s), or 0 on the CPU backend. */
double eng_model_backend_bandwidth(const eng_model *m);
/* Waits until every queued disk-tier write is on disk. */
void eng_model_flush_cache(const eng_model *m);
/* Bytes of one KV page (ENG_KV_PAGE_TOKENS tokens, all layers, K and V). */
size_t eng_model_kv_page_bytes(const eng_model *m);
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
/* Makes the sequence hold exactly toks[0..n) and computes what is missing:
 * the longest common prefix with what it already holds, or with the model's
 * prefix cache (memory, then disk), is reused at token granularity; the last
 * token is always computed so its logits (written to logits if non-NULL)
 * exist. Then the sequence's pages are offered to the cache. cached_memory and
 * cached_disk (may be NULL) receive how many tokens were reused from where. */
int eng_seq_set_tokens(eng_seq *s, const int32_t *toks, int n, float *logits, int *cached_memory,
                       int *cached_disk, util_err *err);
/* Offers the sequence's pages (including generated tokens) to the cache. */
void eng_seq_commit(eng_seq *s);
/* The tokens the sequence holds (len of them). */
const int32_t *eng_seq_tokens(const eng_seq *s);

/* Called after each prefill chunk with tokens done so far and the total. */
typedef void (*eng_progress_fn)(void *user, int done, int total);
void eng_seq_set_progress(eng_seq *s, eng_progress_fn fn, void *user);
/* Appends n tokens and computes them; if logits is non-NULL, writes the last
 * token's logits (n_vocab floats). UTIL_ERANGE if the context would overflow.
 * n > 1 tokens are computed as a prompt, one token as a decode step (on CUDA
 * the two take different matmul paths; eng_seq_set_tokens is always a prompt). */
int eng_seq_eval(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err);

/* --- generation --------------------------------------------------------- */

/* Why a generation ended. */
typedef enum eng_stop_reason {
    ENG_STOP_EOG = 0,          /* the model produced an end-of-generation token */
    ENG_STOP_MAX_TOKENS = 1,   /* max_tokens were generated */
    ENG_STOP_CONTEXT_FULL = 2, /* the sequence has no position left */
    ENG_STOP_CANCELED = 3,     /* the caller stopped it (a token callback returned nonzero) */
    ENG_STOP_ERROR = 4,        /* a step failed (its error code is what the call returned) */
} eng_stop_reason;

/* "eog", "max_tokens", "context_full", "canceled", "error" (the names of
 * `cachet generate --json`); "unknown" for another value. Never NULL. */
const char *eng_stop_reason_name(eng_stop_reason r);

typedef struct eng_gen_stats {
    int prompt_tokens;
    int cached_tokens;   /* prompt tokens whose KV was reused */
    int cached_tokens_memory;
    int cached_tokens_disk;
    int computed_tokens; /* prompt tokens computed */
    int generated_tokens;
    double ttft_ms;      /* prompt submitted -> first token sampled */
    double prefill_ms;
    double decode_ms;
    double prefill_tps;
    double decode_tps;
    eng_stop_reason stop_reason;
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

/* Sets the sequence to prompt (reusing cached KV, see eng_seq_set_tokens),
 * then generates. The generated ids go to
 * *out_ids (malloc'd, caller frees) when out_ids is non-NULL. */
int eng_generate(eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p,
                 int32_t **out_ids, int *n_out, eng_gen_stats *stats, util_err *err);

#endif
