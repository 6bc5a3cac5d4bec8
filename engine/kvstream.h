/* engine/kvstream.h: KV eviction for one sequence, two policies.
 * StreamingLLM (Xiao et al. 2023, "Efficient Streaming
 * Language Models with Attention Sinks") for one sequence: its first `sinks`
 * positions and its last `window` stay in its KV pages; when the cache is
 * full the oldest other position is evicted and the later ones move down, so
 * the positions RoPE sees stay in 0 .. sinks + window - 1 however long the
 * stream. Keys are kept before RoPE (f32, beside the pages) and rotated again
 * at their new positions before a layer's next attention; values move as
 * bytes. H2O (Zhang et al. 2023, "Heavy-Hitter Oracle"): a budget of B
 * slots; per layer and KV head, the attention each key received (summed over
 * the query heads of its group and over steps) is accumulated, and when the
 * cache is full each (layer, KV head) drops its key of least mass outside the
 * R most recent slots; keys keep their original positions (RoPE is not
 * redone: new keys go at slot + evictions so far); a sliding-window layer
 * (Gemma 3) drops instead the key that leaves its window (B <= window).
 * Private to engine/ (seq.c evicts, batch.c saves, re-rotates, observes).
 * Does not know about the prefix cache: seq.c keeps such sequences private. */
#ifndef ENG_KVSTREAM_H
#define ENG_KVSTREAM_H

#include <stdint.h>

#include "../util/err.h"
#include "backend.h"

typedef struct eng_kvstream eng_kvstream;

/* A stream of sinks + window positions (sinks >= 0, window >= 1) over
 * n_layer layers of kv_dim values. Caller frees with eng_kvstream_free. */
int eng_kvstream_new(eng_kvstream **out, int sinks, int window, int n_layer, int kv_dim, util_err *err);
/* H2O: budget slots, the last `recent` always kept (1 <= recent < budget),
 * n_layer layers of n_kv_head heads of head_dim values. */
int eng_kvstream_new_h2o(eng_kvstream **out, int budget, int recent, int n_layer, int n_kv_head, int head_dim,
                         util_err *err);
void eng_kvstream_free(eng_kvstream *st);
/* sinks + window: the most positions the cache holds. */
int eng_kvstream_cap(const eng_kvstream *st);
int eng_kvstream_sinks(const eng_kvstream *st);
/* Positions evicted so far (per layer and head with H2O). */
long eng_kvstream_evicted(const eng_kvstream *st);
/* What to add to a slot index to get the RoPE position of new keys: 0 for
 * StreamingLLM (re-assigned), the evictions so far for H2O. */
int eng_kvstream_shift(const eng_kvstream *st);
/* 1 for H2O. */
int eng_kvstream_is_h2o(const eng_kvstream *st);

/* H2O: a full cache of len slots drops one key per (layer, KV head): the
 * least accumulated mass among slots 0 .. len - recent - 1 (ties: the
 * oldest); in a sliding layer (eng_kvstream_h2o_layers), the head's oldest
 * key instead when the next key's position would leave it outside the
 * window. Later slots of that head move down one. views[0] holds the layers
 * (views[1] the sliding ones of a split cache); toks drops layer 0 head 0's
 * victim. Returns len - 1. */
int eng_kvstream_evict_h2o(eng_kvstream *st, const eng_kv_view *const *views, int32_t *toks, int len);
/* H2O on a model with sliding-window layers of n_swa positions: tracks each
 * slot's original position per head so a sliding layer never keeps a key
 * outside its window; the budget must be at most n_swa (UTIL_EINVAL), so the
 * kernels' mask by slot distance sees every kept key, as the window would.
 * Then eng_kvstream_h2o_layer says, per layer, swa (1: it sees the last n_swa
 * positions only), view (1: its KV is in views[1]) and slot (its index in
 * that view); unset layers: global, views[0], their own index. */
int eng_kvstream_h2o_layers(eng_kvstream *st, int n_swa, util_err *err);
void eng_kvstream_h2o_layer(eng_kvstream *st, int layer, int swa, int view, int slot);
/* H2O: the original position of a head's key in a slot (for tests). */
int eng_kvstream_h2o_pos(const eng_kvstream *st, int layer, int head, int slot);
/* The victim slot of one head's masses m[0..len) (for tests): see above. */
int eng_kvstream_h2o_victim(const float *m, int len, int recent);
/* H2O: after layer `layer`'s attention (a: its arguments, q roped and
 * scaled as attention read it, n_tok queries at slots pos0..), adds each
 * query head's attention probabilities over slots 0 .. pos0 + t to its KV
 * head's masses. A no-op for StreamingLLM. */
void eng_kvstream_observe(eng_kvstream *st, const eng_attn_args *a, int layer);

/* The cache was cut to len positions: H2O forgets the masses of the slots
 * from len on; at 0 the stream starts over (no evictions counted). */
void eng_kvstream_truncate(eng_kvstream *st, int len);

/* Evicts n positions after the sinks of a cache holding len (n <= len -
 * sinks): positions sinks + n .. len - 1 move to sinks .. len - n - 1 (the
 * value rows of every layer of the n_views views, the raw keys, toks); every
 * layer's keys are marked for rotation at their new positions. Returns the
 * new length. The views' pages must be host memory (ops->kv_stream). */
int eng_kvstream_evict(eng_kvstream *st, const eng_kv_view *const *views, int n_views, int32_t *toks, int len,
                       int n);

/* Layer `layer` (the model's index) is about to rotate and store the keys k
 * ([n][kv_dim], before RoPE) of cache positions pos0 .. pos0 + n - 1: keeps
 * them raw; if the layer's keys moved since its last attention, rotates the
 * kept raw keys of positions sinks .. pos0 - 1 at those positions (rope: the
 * layer's arguments for its keys) and stores them as keys of slot `slot` of
 * kv (values untouched). */
void eng_kvstream_attend(eng_kvstream *st, eng_backend *be, const eng_kv_view *kv, int layer, int slot,
                         const eng_rope_args *rope, const float *k, int n, int pos0);

#endif
