/* cli/perplexity_stream.h: `cachet perplexity --stream T`, perplexity over a
 * stream longer than the cache (cmd_perplexity_stream.c): StreamingLLM's
 * sinks + window (--kv-sinks, --kv-window; --kv-sinks 0 is the plain window)
 * or H2O (--kv-evict h2o --kv-budget-tokens B), or the quality ceiling, a fresh context of the same size recomputed for
 * every few tokens (--recompute C). Both score the same tokens. */
#ifndef CLI_PERPLEXITY_STREAM_H
#define CLI_PERPLEXITY_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/engine.h"

typedef struct cli_ppl_stream {
    long tokens;        /* --stream T: the first T tokens of the text */
    long recompute;     /* --recompute C: sliding context of C tokens, recomputed; 0: the model's stream */
    long stride;        /* --stride S: targets per recomputation (default 16) */
    int sinks, window;  /* the model's --kv-sinks / --kv-window (stream mode) */
    int budget, recent; /* the model's --kv-budget-tokens / --kv-recent with --kv-evict h2o */
} cli_ppl_stream;

/* The context both modes keep: sinks + window, or C. */
int cli_ppl_stream_ctx(const cli_ppl_stream *o);

/* Scores targets ctx .. T-1 of toks (each from the tokens before it that the
 * mode keeps: the stream's cache, or the last ctx tokens with the first one
 * BOS when add_bos) and prints the figures (text, or one JSON object). */
int cli_ppl_stream_run(eng_model *m, const int32_t *toks, size_t n_tok, int add_bos, const cli_ppl_stream *o,
                       int json, const char *file, util_err *err);

/* `--recall FACTS` (cmd_perplexity_recall.c): `trials` prompts of ctx
 * tokens (every fact, filler from text, one fact's cloze), each a fresh
 * sequence under the engine options; prints the share whose answer ranks
 * first among the facts' answers, and the mean rank. */
int cli_ppl_recall_run(eng_model *m, const int32_t *text, size_t n_text, const char *facts_path, int ctx,
                       int trials, int json, util_err *err);

#endif
