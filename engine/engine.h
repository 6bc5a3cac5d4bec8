/* engine/engine.h: the embedded engine's public API, the only engine header
 * agent/ and linter/ need besides tokenizer.h and chat.h. A model (weights,
 * tokenizer, chat template, backend) is opened once; a sequence holds the KV
 * cache of one token stream and evaluates tokens appended to it; a generation
 * (eng_gen, stepwise, or eng_generate in one call) runs prefill + sampling +
 * decode with timing. Types are opaque. */
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
    int n_threads;             /* <= 0: all online cores */
    uint64_t kv_budget;        /* bytes of KV memory (pages); 0: default 1 GiB */
    int no_cache;              /* 1: no prefix reuse (pages are still pooled) */
    int no_disk_cache;         /* 1: memory tier only */
    const char *kv_dir;        /* disk tier directory; NULL: $XDG_CACHE_HOME/cachet/kv */
    uint64_t kv_disk_budget;   /* 0: default 2 GiB */
    int debug;                 /* 1: report corrupt disk entries */
    int exact;                 /* 1: f32 activations everywhere (no 8-bit activation
                             * quantization): slower; the reference mode tested
                             * against a float64 implementation */
    const char *device;        /* "auto", "cpu", "cuda", "cuda:N": see --device; NULL:
                             * $CACHET_DEVICE when it is set, else "auto" */
    const char *chat_template; /* a chat family by name (--chat-template, see
                                * eng_chat_format_parse); NULL: the model's */
    uint32_t kv_type_k;        /* KV cache element type of keys, a ggml type id from
                                * eng_kv_type_parse (f16, q8_0, q4_0); 0: f16 */
    uint32_t kv_type_v;        /* of values; 0: f16 */
    int kv_f32;                /* 1: keys and values cached as f32 (CPU, scalar attention;
                                * kv_type_* ignored): the reference cache for --exact
                                * comparisons (tests) */
    int mla_naive;             /* deepseek2: 1: the latent up-projected to per-head K/V and
                                * cached so (--mla naive); 0: absorbed, the cache holding the
                                * latent and the RoPE key only (--mla absorbed) */
    int kv_sinks;              /* StreamingLLM (--kv-sinks, --kv-window; kv_window > 0 turns it
                                * on): every sequence keeps its first kv_sinks positions and the
                                * last kv_window, evicting the oldest other one as it grows, at
                                * positions re-assigned inside the cache (kvstream.h); such
                                * sequences are private (never in the prefix cache nor on disk).
                                * CPU only; Gemma 3: kv_sinks + kv_window <= its sliding window */
    int kv_window;             /* 0: off */
    int kv_evict;              /* ENG_KV_EVICT_H2O (--kv-evict h2o): H2O heavy hitters within
                                * kv_budget_tokens slots per sequence, the last kv_recent kept
                                * (0: half the budget); private sequences, CPU only; Gemma 3:
                                * budget <= its sliding window; not with kv_window */
    int kv_budget_tokens;
    int kv_recent;
} eng_model_params;

enum { ENG_KV_EVICT_NONE = 0, ENG_KV_EVICT_H2O = 1 };

/* A --kv-type name read: "f16", "q8_0" or "q4_0" (llama.cpp's --cache-type-k/-v
 * names and blocks: 32 values and an f16 scale per block) to its ggml type id.
 * UTIL_EINVAL, with a message naming the text, for anything else. */
int eng_kv_type_parse(uint32_t *out, const char *name, util_err *err);
/* The name of a KV type id ("f16"; 0 reads as f16), or NULL for one that is not a KV type. */
const char *eng_kv_type_name(uint32_t type);
/* Bytes per value of a KV type: 2 (f16), 34/32 (q8_0), 18/32 (q4_0); 0 for another id. */
double eng_kv_type_bytes(uint32_t type);

/* A --device name read: "auto", "cpu", "cuda" (device 0) or "cuda:N" (N in
 * 0..64, digits only). The engine's one reading of these names (engine/
 * backend.c picks the backend by it); a command line may check an option
 * with it before it opens a model. */
typedef enum eng_device_kind { ENG_DEVICE_AUTO = 0, ENG_DEVICE_CPU = 1, ENG_DEVICE_CUDA = 2 } eng_device_kind;
typedef struct eng_device {
    eng_device_kind kind;
    int index; /* cuda:N */
} eng_device;
/* UTIL_EINVAL, with a message naming the text, for anything else. */
int eng_device_parse(eng_device *out, const char *name, util_err *err);
/* The device a --device value asks for (NULL: $CACHET_DEVICE, else "auto"),
 * read as the backend is picked, without opening anything: lets a caller
 * refuse what the device cannot do before the device starts. */
int eng_device_requested(eng_device *out, const char *device, util_err *err);

/* Prefix-cache counters of a model (all its sequences), like vLLM's
 * prefix_cache_queries / prefix_cache_hits (in tokens). */
typedef struct eng_cache_stats {
    uint64_t queries;   /* prompt tokens looked up */
    uint64_t hits;      /* of which reused (memory + disk) */
    uint64_t hits_disk; /* of which loaded from the disk tier */
    uint64_t evictions; /* pages evicted from memory */
    uint64_t pages_in_use, pages_cached, bytes_in_use, budget_bytes;
    uint64_t disk_reads, disk_writes, disk_corrupt;
    /* Models with sliding-window layers: their pages (a second kind), apart
     * from the pages above (bytes_in_use counts both kinds). */
    uint64_t swa_pages_in_use, swa_pages_cached, swa_page_bytes;
} eng_cache_stats;

/* Opens a GGUF model: validates the file, maps weights, builds the tokenizer
 * and chat template, starts the backend. Caller frees with eng_model_free. */
int eng_model_open(eng_model **out, const char *path, const eng_model_params *params, util_err *err);
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
/* Shape facts for `cachet kv` and reports. */
typedef struct eng_model_shape {
    int n_layer, n_embd, n_head, n_kv_head, head_dim, n_ff;
    int n_swa;       /* sliding window in positions (0: every layer attends to all) */
    int n_layer_swa; /* of n_layer: the sliding-window layers */
} eng_model_shape;
/* Bytes of KV cache one token takes in a model of shape sh: layers x kv heads
 * x head dim x 2 (K and V) x elem_bytes (2 for f16, 4 for f32, 34/32 for
 * q8_0, 18/32 for q4_0; K and V in different types: their mean). The one
 * formula: the model's pages and `cachet kv` both use it. */
double eng_kv_bytes_per_token(const eng_model_shape *sh, double elem_bytes);
/* KV bytes of a sequence of n_ctx positions for a window-aware cache, split
 * into the global layers (every position, in pages of ENG_KV_PAGE_TOKENS)
 * and the sliding ones (at most their window plus one page: what the next
 * query can see, and the page being written); without a window every layer
 * is global. Returns *global + *sliding. The keep-everything figure is
 * eng_kv_bytes_per_token x n_ctx. */
double eng_kv_bytes_ctx(const eng_model_shape *sh, double elem_bytes, uint64_t n_ctx, double *global,
                        double *sliding);
/* The same for the model's own KV, in its K and V types (--kv-type): whole
 * blocks, so exactly what its pages hold per token. */
size_t eng_model_kv_bytes_per_token(const eng_model *m);
/* The model's KV types (ggml ids; see eng_kv_type_name). */
void eng_model_kv_types(const eng_model *m, uint32_t *type_k, uint32_t *type_v);
eng_model_shape eng_model_get_shape(const eng_model *m);
/* Reads the shape from a GGUF file's metadata alone (any architecture). */
int eng_model_shape_read(const char *path, eng_model_shape *out, util_err *err);

/* What `cachet info` prints about a GGUF file, from its metadata and tensor
 * table alone (no weights read; any architecture). */
typedef struct eng_model_type_count {
    char name[16]; /* the quant type ("q4_K", "f32") */
    int n_tensors;
    uint64_t n_params, bytes;
} eng_model_type_count;
typedef struct eng_model_info {
    char arch[32], name[96];
    eng_model_shape shape;
    int n_ctx_train, n_vocab;
    float rope_base, rope_base_swa;
    uint64_t n_params, file_bytes;
    char *layer_pattern; /* n_layer chars: 'S' sliding, 'G' global (malloc'd) */
    int n_types;
    eng_model_type_count types[24];
} eng_model_info;
/* Fills *out; release with eng_model_info_release. */
int eng_model_info_read(const char *path, eng_model_info *out, util_err *err);
void eng_model_info_release(eng_model_info *info);

/* A sequence of up to n_ctx positions (<= 0: the model's training context).
 * Caller frees with eng_seq_free. */
int eng_seq_new(eng_seq **out, eng_model *m, int n_ctx, util_err *err);
void eng_seq_free(eng_seq *s);
int eng_seq_len(const eng_seq *s);
int eng_seq_n_ctx(const eng_seq *s);
/* Forgets positions >= n (n <= len). A model with sliding-window layers
 * keeps only the window of the next position: when the window of n was
 * already released the sequence is emptied (length 0; eng_seq_len says). */
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
/* The same, writing every token's logits: logits holds n x n_vocab floats,
 * row i the distribution after toks[i] (perplexity, verifying drafted
 * tokens). Each row equals what eng_seq_eval would give for that token.
 * Truncating back to any of these rows afterwards keeps the sequence's KV
 * (sliding-window layers release nothing past the first row of the last
 * n_batch-row chunk until the next evaluation). */
int eng_seq_eval_all(eng_seq *s, const int32_t *toks, int n, float *logits, util_err *err);

/* --- several sequences in one forward pass ------------------------------- */
/* A batch evaluates tokens of several sequences of one model in one forward
 * pass: every weight is read once for all of them (decode of several
 * requests at the cost of about one), while each sequence keeps its own pages
 * and positions. A sequence's results are bit-identical to evaluating it
 * alone (batch-invariant ops), so cache hits stay exact. The batch owns
 * scratch rows for all its entries (grown on demand); not thread-safe. */
typedef struct eng_batch eng_batch;

/* One sequence's part of a batched evaluation: n_tok >= 1 tokens appended to
 * seq (one token is a decode step, more a prompt chunk, as in eng_seq_eval;
 * prompt = 1: prompt tokens even when n_tok is 1, as eng_seq_set_tokens
 * computes them); logits: NULL, or n_vocab floats for the last token's. */
typedef struct eng_batch_item {
    eng_seq *seq;
    const int32_t *toks;
    int n_tok;
    int prompt;
    float *logits;
} eng_batch_item;

/* Caller frees with eng_batch_free (before the model). */
int eng_batch_new(eng_batch **out, eng_model *m, util_err *err);
void eng_batch_free(eng_batch *b);
/* Evaluates n items (distinct sequences of b's model: UTIL_EINVAL
 * otherwise) in one forward pass: as eng_seq_eval on each, in one. The rows
 * of all items are one pass: callers bound them (prompt chunks of a few dozen
 * tokens). On failure no sequence has advanced. */
int eng_batch_eval(eng_batch *b, const eng_batch_item *items, int n, util_err *err);

/* --- generation --------------------------------------------------------- */

/* Why a generation ended. */
typedef enum eng_stop_reason {
    ENG_STOP_EOG = 0,          /* the model produced an end-of-generation token */
    ENG_STOP_MAX_TOKENS = 1,   /* max_tokens were generated */
    ENG_STOP_CONTEXT_FULL = 2, /* the sequence has no position left */
    ENG_STOP_CANCELED = 3,     /* the caller stopped it (a token callback, eng_gen_cancel/end) */
    ENG_STOP_ERROR = 4,        /* a step failed (its error code is what the call returned) */
} eng_stop_reason;

/* "eog", "max_tokens", "context_full", "canceled", "error" (the names of
 * `cachet generate --json`); "unknown" for another value. Never NULL. */
const char *eng_stop_reason_name(eng_stop_reason r);

typedef struct eng_gen_stats {
    int prompt_tokens;
    int cached_tokens; /* prompt tokens whose KV was reused (each counted once) */
    int cached_tokens_memory;
    int cached_tokens_disk;
    int computed_tokens;  /* prompt tokens computed */
    int generated_tokens; /* sampled tokens, an end-of-generation token not counted */
    double ttft_ms;       /* first prefill call -> first token sampled */
    double prefill_ms;    /* first prefill call -> end of the last chunk */
    double decode_ms;     /* first token sampled -> the end */
    double match_ms;      /* matching the prompt against the prefix cache (eng_gen_step_batch) */
    double prefill_tps;
    double decode_tps;
    eng_stop_reason stop_reason;
    /* decoding (speculative or not): a decode forward evaluates the pending
     * token, plus drafted tokens with --spec; tokens_per_forward is
     * (decode_forwards + spec_accepted) / decode_forwards (1 without --spec) */
    int decode_forwards;
    int spec_drafted;          /* tokens a drafter proposed and a forward verified */
    int spec_accepted;         /* of which sampling picked the same token */
    double spec_accept_rate;   /* spec_accepted / spec_drafted (0: none drafted) */
    double tokens_per_forward; /* 0 before the first decode forward */
} eng_gen_stats;

/* Called with each generated token and its decoded text (complete UTF-8
 * characters only; may be empty). Return nonzero to stop. */
typedef int (*eng_token_cb)(void *user, int32_t id, const char *text, size_t len);

/* Speculative decoding without a second model (prompt lookup): drafts the
 * next tokens from the sequence's own earlier tokens (engine/spec.h),
 * verifies the pending token and the draft in one forward pass
 * (eng_seq_eval_all) and keeps the longest prefix that sampling itself
 * picked: greedy output is identical to plain decoding, and sampled output
 * too for the same seed (each token is sampled from the same logits with the
 * same RNG draws; a deterministic draft is accepted iff the sampled token
 * equals it, so the distribution is exact). The rest is truncated. */
typedef enum eng_spec_mode { ENG_SPEC_NONE = 0, ENG_SPEC_NGRAM = 1 } eng_spec_mode;
typedef struct eng_spec_params {
    eng_spec_mode mode;
    int max_draft; /* tokens drafted per forward; <= 0: ENG_SPEC_DEFAULT_DRAFT */
    int ngram;     /* longest match length tried; <= 0: ENG_SPEC_DEFAULT_NGRAM */
} eng_spec_params;
#define ENG_SPEC_DEFAULT_DRAFT 8
#define ENG_SPEC_DEFAULT_NGRAM 3
#define ENG_SPEC_MAX_DRAFT     64
/* "none" or "ngram" into *out; UTIL_EINVAL with a message naming the text
 * otherwise. */
int eng_spec_mode_parse(eng_spec_mode *out, const char *name, util_err *err);

typedef struct eng_gen_params {
    int max_tokens; /* <= 0: until the context is full */
    eng_sample_params sample;
    eng_spec_params spec;  /* zeroed: plain decoding */
    eng_token_cb on_token; /* eng_generate only; the step API returns each token */
    void *user;
} eng_gen_params;

/* Sets the sequence to prompt (reusing cached KV, see eng_seq_set_tokens),
 * then generates: the steps below in a loop, on_token called per token and
 * once more (id -1) with a trailing incomplete character, if any. On
 * success the generated ids go to *out_ids (malloc'd, caller frees; NULL
 * when none) when out_ids is non-NULL. stats (may be NULL) is filled on
 * failure too: how far it got, stop_reason ENG_STOP_ERROR. */
int eng_generate(eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p, int32_t **out_ids,
                 int *n_out, eng_gen_stats *stats, util_err *err);

/* --- stepwise generation ------------------------------------------------ */
/* One generation on one sequence, a step at a time: eng_gen_begin, then
 * eng_gen_prefill (the whole prompt, or chunks between other work), then
 * eng_gen_step until a step reports done (or the caller stops: a stop string,
 * a client gone), then eng_gen_end. The generation owns the sampler, the
 * streaming detokenizer (a step's text is complete UTF-8 characters only),
 * the stop checks (end-of-generation token, max_tokens, context full) and the
 * timing. eng_generate and the server's scheduler both run on it, so the
 * decode loop exists once.
 *
 * A step samples from the logits the sequence holds and leaves the token it
 * returns pending: the next step evaluates it first. A caller that stops after
 * a step therefore computes nothing it will not use, and a decode step is
 * "evaluate each generation's pending token, then sample each": the shape a
 * batched step over several generations (one forward pass for all their
 * pending tokens) takes behind the same calls.
 *
 * A generation holds its sequence from begin to end: no other call may use the
 * sequence meanwhile. Not thread-safe; several generations on different
 * sequences may be interleaved by one thread. */
typedef struct eng_gen eng_gen;

/* What one decode step produced. */
typedef struct eng_gen_token {
    int32_t id;       /* the sampled token (also an end-of-generation one) */
    const char *text; /* its complete UTF-8 characters (may be empty; none for
                           * an end-of-generation token); owned by the generation,
                           * valid until its next call */
    size_t len;
    int done;             /* 1: the generation ended with this step */
    eng_stop_reason stop; /* why, when done */
} eng_gen_token;

/* Starts a generation of s from prompt (copied; 1 <= n_prompt < the
 * context: UTIL_EINVAL, UTIL_ERANGE otherwise) with p's max_tokens and
 * sampling. Computes nothing yet. Caller ends it with eng_gen_end. */
int eng_gen_begin(eng_gen **out, eng_seq *s, const int32_t *prompt, int n_prompt, const eng_gen_params *p,
                  util_err *err);
/* Prefills up to n more prompt tokens (n <= 0: all that are left): the
 * sequence is set to that prefix of the prompt (eng_seq_set_tokens: what it
 * holds or what the prefix cache has, possibly gained since the last chunk,
 * is reused; each reused token counts once in cached_tokens). The last chunk
 * computes the logits the first step samples from. On failure the generation
 * has ended (ENG_STOP_ERROR). */
int eng_gen_prefill(eng_gen *g, int n, util_err *err);
/* Prompt tokens not prefilled yet. */
int eng_gen_prompt_left(const eng_gen *g);
/* One decode step: prefills what is left, evaluates the previous step's
 * token, samples the next and decodes its text into *out. out->done says the
 * generation ended (end-of-generation token, max_tokens, context full); a
 * failure ends it too (ENG_STOP_ERROR) and returns the code with err set.
 * UTIL_EINVAL once it has ended. */
int eng_gen_step(eng_gen *g, eng_gen_token *out, util_err *err);
/* One step of n generations (of b's model) in one forward pass: a
 * generation with prompt left contributes its next prefill chunk, up to
 * `chunk` tokens past what its sequence holds or the prefix cache offers
 * (<= 0: all that is left; reused tokens counted as eng_gen_prefill counts
 * them), the others their pending token; a generation whose chunk an
 * earlier one of the step mostly computes too (the same prompt prefix at the
 * same positions) waits this step and reuses it from the cache at the next,
 * so a prefix shared by generations admitted together is computed once;
 * then each whose prompt is done samples, as eng_gen_step, into out[i]. One
 * still prefilling (or waiting) gets
 * out[i].id = -1 and done 0. Each gets the tokens and logits eng_gen_step
 * gives it alone. UTIL_EINVAL if one had ended. When the pass fails with
 * n > 1 no generation has advanced (the caller may step them one at a time
 * to find which fails); with n == 1 the generation has ended, as after a
 * failed eng_gen_step. */
int eng_gen_step_batch(eng_gen **g, int n, eng_batch *b, int chunk, eng_gen_token *out, util_err *err);
/* Ends the generation as canceled (no-op once it has ended); no step after. */
void eng_gen_cancel(eng_gen *g);
/* The bytes of an incomplete UTF-8 character still held back (at the end of
 * a generation, to pass on as they are); *text is owned by the generation,
 * valid until its next call. Returns their count (0: none). */
size_t eng_gen_flush(eng_gen *g, const char **text);
/* The stats so far (decode time up to now, or up to the end). */
eng_gen_stats eng_gen_get_stats(const eng_gen *g);
/* Ends the generation (as canceled if no step ended it), offers the
 * sequence's pages (the reply included: the next turn's prefix) to the
 * cache, writes the final stats to stats (may be NULL) and frees g. NULL is
 * a no-op. */
void eng_gen_end(eng_gen *g, eng_gen_stats *stats);

#endif
