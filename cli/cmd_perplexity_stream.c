/* cli/cmd_perplexity_stream.c: `cachet perplexity --stream T`: the next-token
 * perplexity of a text stream longer than the KV cache, for StreamingLLM
 * (attention sinks + window, or a plain window with --kv-sinks 0), for H2O
 * (--kv-evict h2o --kv-budget-tokens B) and for their
 * quality ceiling (a fresh context of the same size recomputed every --stride
 * targets). The same targets are scored in every mode: positions ctx .. T-1.
 * Does not chunk the text as llama-perplexity does (cmd_perplexity.c). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/time.h"
#include "cli.h"
#include "perplexity.h"
#include "perplexity_stream.h"

enum { ROWS = 64, BLOCK = 256 };

int cli_ppl_stream_ctx(const cli_ppl_stream *o) {
    return o->recompute > 0 ? (int)o->recompute : o->budget > 0 ? o->budget : o->sinks + o->window;
}

typedef struct stream_run {
    cli_ppl_acc acc;
    double *block_nll; /* mean nll of targets ctx + i*BLOCK .. (the drift along the stream) */
    long *block_n;
    int n_block, ctx;
    double seconds;
} stream_run;

static void score(stream_run *r, const float *logits, int32_t nv, int32_t tok, long target) {
    double v = cli_ppl_nll(logits, nv, tok);
    cli_ppl_add(&r->acc, v);
    long b = (target - r->ctx) / BLOCK;
    r->block_nll[b] += v;
    r->block_n[b]++;
}

/* StreamingLLM: one sequence over the whole stream; its cache evicts. */
static int run_stream(eng_model *m, const int32_t *toks, long T, float *logits, stream_run *r,
                      util_err *err) {
    eng_seq *seq = NULL;
    int32_t nv = eng_model_n_vocab(m);
    int rc = eng_seq_new(&seq, m, r->ctx, err);
    if (rc == 0) rc = eng_seq_eval(seq, toks, r->ctx - 1, NULL, err);
    for (long p = r->ctx - 1; rc == 0 && p < T - 1; p += ROWS) {
        int n = T - 1 - p < ROWS ? (int)(T - 1 - p) : ROWS;
        rc = eng_seq_eval_all(seq, toks + p, n, logits, err);
        for (int k = 0; rc == 0 && k < n; k++)
            score(r, logits + (size_t)k * (size_t)nv, nv, toks[p + k + 1], p + k + 1);
        if (rc == 0 && (p - r->ctx + 1) % (ROWS * 8) == 0)
            fprintf(stderr, "perplexity: %ld/%ld targets, running PPL %.4f\n", r->acc.count, T - r->ctx,
                    cli_ppl_value(&r->acc));
    }
    eng_seq_free(seq);
    return rc;
}

/* The ceiling: targets j0 .. j1-1 (stride of them) from a fresh context of
 * the ctx tokens before j1 - 1 (its first one BOS when the model adds one),
 * so target j1 - 1 sees ctx tokens, as a stream's targets do. */
static int run_recompute(eng_model *m, const int32_t *toks, long T, int add_bos, long stride, float *logits,
                         stream_run *r, util_err *err) {
    eng_seq *seq = NULL;
    int32_t nv = eng_model_n_vocab(m);
    const int ctx = r->ctx;
    int32_t *win = malloc((size_t)ctx * sizeof *win);
    int rc = win ? eng_seq_new(&seq, m, ctx, err) : util_err_set(err, UTIL_ENOMEM, "out of memory");
    for (long j0 = ctx; rc == 0 && j0 < T; j0 += stride) {
        long j1 = j0 + stride < T ? j0 + stride : T, b = j1 - 1 - ctx;
        memcpy(win, toks + b, (size_t)ctx * sizeof *win);
        if (add_bos) win[0] = eng_tokenizer_bos(eng_model_tokenizer(m));
        eng_seq_truncate(seq, 0);
        int first = (int)(j0 - 1 - b); /* inputs before the first scored row */
        if (first > 0) rc = eng_seq_eval(seq, win, first, NULL, err);
        for (int p = first; rc == 0 && p < ctx; p += ROWS) {
            int n = ctx - p < ROWS ? ctx - p : ROWS;
            rc = eng_seq_eval_all(seq, win + p, n, logits, err);
            for (int k = 0; rc == 0 && k < n; k++)
                score(r, logits + (size_t)k * (size_t)nv, nv, toks[b + p + k + 1], b + p + k + 1);
        }
        if (rc == 0 && ((j0 - ctx) / stride) % 32 == 0)
            fprintf(stderr, "perplexity: %ld/%ld targets, running PPL %.4f\n", r->acc.count, T - ctx,
                    cli_ppl_value(&r->acc));
    }
    eng_seq_free(seq);
    free(win);
    return rc;
}

static void print_stream(const eng_model *m, const cli_ppl_stream *o, const stream_run *r, long T, int json,
                         const char *file) {
    double e = 0, ppl = cli_ppl_final(&r->acc, &e);
    const char *mode = o->recompute > 0 ? "recompute"
                       : o->budget > 0  ? "h2o"
                       : o->sinks > 0   ? "sinks"
                                        : "window";
    size_t kv = (size_t)r->ctx * eng_model_kv_bytes_per_token(m);
    if (!json) {
        printf("stream of %ld tokens, %s: context %d (", T, mode, r->ctx);
        if (o->recompute > 0)
            printf("recomputed every %ld targets", o->stride);
        else if (o->budget > 0)
            printf("h2o, %d recent kept", o->recent);
        else
            printf("%d sinks + %d window", o->sinks, o->window);
        printf("), %ld targets scored\nPPL by block of %d targets:", r->acc.count, BLOCK);
        for (int b = 0; b < r->n_block; b++)
            if (r->block_n[b]) printf(" %.3f", exp(r->block_nll[b] / (double)r->block_n[b]));
        printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, e);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", file);
    cJSON_AddStringToObject(j, "model", eng_model_name(m));
    cJSON_AddStringToObject(j, "backend", eng_model_backend(m));
    cJSON_AddStringToObject(j, "mode", mode);
    cJSON_AddNumberToObject(j, "stream", (double)T);
    cJSON_AddNumberToObject(j, "ctx", r->ctx);
    cJSON_AddNumberToObject(j, "sinks", o->recompute > 0 ? 0 : o->sinks);
    cJSON_AddNumberToObject(j, "window", o->recompute > 0 ? 0 : o->window);
    cJSON_AddNumberToObject(j, "h2o_recent", o->budget > 0 ? o->recent : 0);
    cJSON_AddNumberToObject(j, "stride", o->recompute > 0 ? (double)o->stride : 1);
    cJSON_AddNumberToObject(j, "kv_bytes", (double)kv);
    cJSON_AddNumberToObject(j, "scored", (double)r->acc.count);
    cJSON_AddNumberToObject(j, "ppl", ppl);
    cJSON_AddNumberToObject(j, "ppl_error", e);
    cJSON_AddNumberToObject(j, "nll", r->acc.nll / (double)r->acc.count);
    cJSON_AddNumberToObject(j, "seconds", r->seconds);
    cJSON *blocks = cJSON_AddArrayToObject(j, "block_ppl");
    for (int b = 0; b < r->n_block; b++)
        if (r->block_n[b])
            cJSON_AddItemToArray(blocks, cJSON_CreateNumber(exp(r->block_nll[b] / (double)r->block_n[b])));
    cli_json_puts(j);
    cJSON_Delete(j);
}

int cli_ppl_stream_run(eng_model *m, const int32_t *toks, size_t n_tok, int add_bos, const cli_ppl_stream *o,
                       int json, const char *file, util_err *err) {
    stream_run r = {.ctx = cli_ppl_stream_ctx(o)};
    long T = o->tokens;
    if ((size_t)T > n_tok)
        return util_err_set(err, UTIL_ERANGE, "--stream %ld: '%s' has %zu tokens", T, file, n_tok);
    if (T <= r.ctx)
        return util_err_set(err, UTIL_EINVAL, "--stream %ld: no longer than the context of %d tokens kept", T,
                            r.ctx);
    r.n_block = (int)((T - r.ctx + BLOCK - 1) / BLOCK);
    r.block_nll = calloc((size_t)r.n_block, sizeof *r.block_nll);
    r.block_n = calloc((size_t)r.n_block, sizeof *r.block_n);
    float *logits = malloc((size_t)ROWS * (size_t)eng_model_n_vocab(m) * sizeof *logits);
    int rc = UTIL_OK;
    if (!r.block_nll || !r.block_n || !logits) rc = util_err_set(err, UTIL_ENOMEM, "out of memory");
    double t0 = util_now_ms();
    if (rc == 0)
        rc = o->recompute > 0 ? run_recompute(m, toks, T, add_bos, o->stride, logits, &r, err)
                              : run_stream(m, toks, T, logits, &r, err);
    r.seconds = (util_now_ms() - t0) / 1000.0;
    if (rc == 0) print_stream(m, o, &r, T, json, file);
    free(logits);
    free(r.block_nll);
    free(r.block_n);
    return rc;
}
