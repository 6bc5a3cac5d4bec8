/* cli/cmd_perplexity.c: `cachet perplexity`, a model's perplexity over a text
 * file computed as llama.cpp's llama-perplexity computes it: the whole text
 * tokenized once (BOS as the model adds it), cut into chunks of --ctx tokens,
 * each evaluated from an empty cache with its first token replaced by BOS when
 * the model adds one, and only the second half of each chunk scored. Running
 * PPL per chunk and the final estimate with its error on stdout (or --json);
 * progress on stderr. The arithmetic is perplexity.h's. */
#include "perplexity.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/engine.h"
#include "../util/fs.h"
#include "../util/text.h"
#include "../util/time.h"
#include "cli.h"
#include "opts.h"
#include "perplexity_stream.h"

/* --- options ---------------------------------------------------------------- */

static const char ppl_usage[] =
    "usage: cachet perplexity -f FILE [--ctx N] [--chunks N] [--json] [engine options]\n"
    "\n"
    "Perplexity of the model over a text, as llama.cpp's llama-perplexity computes it:\n"
    "the text is tokenized whole (with BOS when the model adds one), cut into chunks of\n"
    "N tokens, each evaluated from an empty cache with its first token replaced by BOS\n"
    "(when the model adds one); the last N/2 - 1 predictions of each chunk are scored.\n"
    "Prints the running PPL after each chunk and the final estimate +/- its standard\n"
    "error. The text must be valid UTF-8 and at least 2 x N tokens long.\n"
    "\n"
    "  -f, --file FILE       the text (make ppl-text fetches models/pride-and-prejudice.txt)\n"
    "  --ctx N               tokens per chunk, 8 or more (default 512; --ctx-size is the same)\n"
    "  --chunks N            evaluate the first N chunks only (default: all that fit)\n"
    "  --json                one JSON object: the figures and every chunk's\n"
    "\n"
    "A stream longer than the KV cache (docs/kv-memory.md), instead of chunks: targets\n"
    "ctx .. T-1 of the first T tokens, each scored once, token by token:\n"
    "  --stream T            with --kv-sinks N --kv-window W: StreamingLLM (ctx = N + W;\n"
    "                        --kv-sinks 0: the plain window); with --kv-evict h2o\n"
    "                        --kv-budget-tokens B: H2O (ctx = B)\n"
    "  --recompute C         or: a fresh context of the C tokens before each target (the\n"
    "                        quality ceiling), recomputed every --stride targets\n"
    "  --stride S            targets per recomputation, 1..C-1 (default 16)\n"
    "\n"
    "A recall probe of the KV options (docs/kv-memory.md): facts first, filler from the\n"
    "text, one fact's cloze last, in prompts of --ctx tokens (default 512):\n"
    "  --recall FACTS        lines CLOZE<TAB>ANSWER (scripts/recall-facts.tsv)\n"
    "  --trials N            prompts, each asking the next fact (default 16)\n"
    "\n"
    "engine options (the prefix cache is off: every chunk starts from an empty cache):\n";

enum { P_FILE = 256, P_CTX, P_CHUNKS, P_JSON, P_STREAM, P_RECOMPUTE, P_STRIDE, P_RECALL, P_TRIALS, P_HELP };

typedef struct ppl_opts {
    const char *file;
    long ctx, chunks;
    int json;
    cli_ppl_stream st;  /* --stream: tokens > 0 */
    const char *recall; /* --recall FACTS */
    long trials;
    cli_engine e;
} ppl_opts;

/* --stream's companions: exactly one of --kv-window and --recompute; the
 * context is what the mode keeps. */
static int stream_opts(ppl_opts *o) {
    cli_ppl_stream *s = &o->st;
    const char *bad = NULL;
    if (o->recall) {
        if (s->tokens || s->recompute || s->stride)
            bad = "--recall goes without --stream, --recompute, --stride";
        if (!o->ctx) o->ctx = 512;
        if (!o->trials) o->trials = 16;
        if (bad) fprintf(stderr, "cachet perplexity: %s\n", bad);
        return bad ? CLI_EXIT_USAGE : CLI_GO_ON;
    }
    if (o->trials)
        bad = "--trials goes with --recall";
    else if (!s->tokens && (s->recompute || s->stride))
        bad = "--recompute and --stride need --stream T";
    else if (s->tokens && !s->recompute && !o->e.mp.kv_window && !o->e.mp.kv_evict)
        bad = "--stream needs --kv-window W (StreamingLLM), --kv-evict h2o or --recompute C";
    else if (s->recompute && (o->e.mp.kv_window || o->e.mp.kv_evict))
        bad = "--recompute is the full-recomputation baseline: give it without --kv-window or --kv-evict";
    else if (!s->tokens && (o->e.mp.kv_window || o->e.mp.kv_evict))
        bad =
            "--kv-window and --kv-evict need --stream T (chunks start from an empty cache: nothing is evicted)";
    else if (s->tokens && o->ctx)
        bad = "--ctx is for chunks; with --stream the context is --kv-sinks + --kv-window or --recompute";
    if (bad) {
        fprintf(stderr, "cachet perplexity: %s\n", bad);
        return CLI_EXIT_USAGE;
    }
    if (!s->tokens) return CLI_GO_ON;
    if (s->stride == 0) s->stride = 16;
    if (s->recompute && s->stride >= s->recompute) {
        fprintf(stderr, "cachet perplexity: --stride %ld must be below --recompute %ld\n", s->stride,
                s->recompute);
        return CLI_EXIT_USAGE;
    }
    s->sinks = o->e.mp.kv_sinks;
    s->window = o->e.mp.kv_window;
    if (o->e.mp.kv_evict == ENG_KV_EVICT_H2O) {
        s->budget = o->e.mp.kv_budget_tokens;
        s->recent = o->e.mp.kv_recent > 0 ? o->e.mp.kv_recent : s->budget / 2;
    }
    o->ctx = cli_ppl_stream_ctx(s);
    return CLI_GO_ON;
}

static int parse_ppl(ppl_opts *o, int argc, char **argv) {
    static const struct option own[] = {{"file", required_argument, 0, P_FILE},
                                        {"ctx", required_argument, 0, P_CTX},
                                        {"chunks", required_argument, 0, P_CHUNKS},
                                        {"json", no_argument, 0, P_JSON},
                                        {"stream", required_argument, 0, P_STREAM},
                                        {"recompute", required_argument, 0, P_RECOMPUTE},
                                        {"stride", required_argument, 0, P_STRIDE},
                                        {"recall", required_argument, 0, P_RECALL},
                                        {"trials", required_argument, 0, P_TRIALS},
                                        {"help", no_argument, 0, P_HELP},
                                        {0, 0, 0, 0}};
    struct option opts[64];
    if (cli_engine_longopts(opts, 64, own, CLI_ENGINE_ALL)) return CLI_EXIT_FAIL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:", opts, NULL)) != -1) {
        int k = cli_engine_parse(&o->e, c, optarg);
        if (k == CLI_EXIT_USAGE) return k;
        if (k) continue;
        switch (c) {
        case 'f':
        case P_FILE: o->file = optarg; break;
        case P_CTX:
            if (cli_parse_int("--ctx", optarg, 8, 1 << 20, &o->ctx)) return CLI_EXIT_USAGE;
            break;
        case P_CHUNKS:
            if (cli_parse_int("--chunks", optarg, 1, 1 << 30, &o->chunks)) return CLI_EXIT_USAGE;
            break;
        case P_JSON: o->json = 1; break;
        case P_STREAM:
            if (cli_parse_int("--stream", optarg, 2, 1 << 30, &o->st.tokens)) return CLI_EXIT_USAGE;
            break;
        case P_RECOMPUTE:
            if (cli_parse_int("--recompute", optarg, 2, 1 << 20, &o->st.recompute)) return CLI_EXIT_USAGE;
            break;
        case P_RECALL: o->recall = optarg; break;
        case P_TRIALS:
            if (cli_parse_int("--trials", optarg, 1, 1 << 20, &o->trials)) return CLI_EXIT_USAGE;
            break;
        case P_STRIDE:
            if (cli_parse_int("--stride", optarg, 1, 1 << 20, &o->st.stride)) return CLI_EXIT_USAGE;
            break;
        case P_HELP:
            fputs(ppl_usage, stdout);
            cli_engine_usage(stdout, CLI_ENGINE_ALL, NULL);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cachet perplexity: unknown or incomplete option '%s'\n", argv[optind - 1]);
            fputs(ppl_usage, stderr);
            cli_engine_usage(stderr, CLI_ENGINE_ALL, NULL);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cachet perplexity: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if (!o->file) {
        fprintf(stderr, "cachet perplexity: give the text with -f FILE\n");
        fputs(ppl_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    int st = stream_opts(o);
    if (st != CLI_GO_ON) return st;
    if (o->ctx == 0) o->ctx = o->e.n_ctx > 0 ? o->e.n_ctx : 512;
    o->e.n_ctx = (int)o->ctx;
    o->e.mp.no_cache = 1; /* chunks share no prefix worth caching */
    o->e.mp.no_disk_cache = 1;
    return cli_engine_finish(&o->e, 1);
}

/* --- the text ----------------------------------------------------------------- */

/* Reads the file and checks it is UTF-8; on invalid bytes prints where
 * (line, column in characters, byte offset). Returns 0 or CLI_EXIT_FAIL. */
static int load_text(const char *path, char **out, size_t *len) {
    util_err err;
    if (util_read_file(out, len, path, &err)) {
        fprintf(stderr, "cachet perplexity: %s\n", err.msg);
        return CLI_EXIT_FAIL;
    }
    size_t bad = util_utf8_check(*out, *len);
    if (bad < *len) {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < bad;) {
            size_t l = util_utf8_char_len(*out + i, bad - i);
            if ((*out)[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
            i += l ? l : 1;
        }
        fprintf(stderr,
                "cachet perplexity: '%s' is not valid UTF-8: byte 0x%02x at offset %zu "
                "(line %zu, column %zu)\n",
                path, (unsigned char)(*out)[bad], bad, line, col);
        free(*out);
        *out = NULL;
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* --- the evaluation ----------------------------------------------------------- */

/* Rows of logits per eng_seq_eval_all call: bounds the buffer (Gemma 3's
 * 262,144-entry vocabulary: 64 MiB) without changing any figure (the engine's
 * results do not depend on how a sequence is split). */
enum { PPL_ROWS = 64 };

typedef struct ppl_run {
    int n_chunk, ctx, first;
    double *chunk_ppl; /* running PPL after chunk i */
    double *chunk_nll; /* mean nll of chunk i alone */
    double seconds;
    cli_ppl_acc acc;
} ppl_run;

/* Evaluates chunk i of toks into r (and prints its running value). */
static int eval_chunk(eng_seq *seq, const eng_model *m, const int32_t *toks, int i, int add_bos,
                      float *logits, ppl_run *r, util_err *err) {
    const int ctx = r->ctx, first = r->first;
    const int32_t nv = eng_model_n_vocab(m);
    int32_t *chunk = malloc((size_t)ctx * sizeof *chunk);
    if (!chunk) return util_err_set(err, UTIL_ENOMEM, "out of memory");
    memcpy(chunk, toks + (size_t)i * ctx, (size_t)ctx * sizeof *chunk);
    if (add_bos) chunk[0] = eng_tokenizer_bos(eng_model_tokenizer(m));
    eng_seq_truncate(seq, 0);
    /* rows first..ctx-2 predict tokens first+1..ctx-1; the last token's
     * prediction is not scored, so it is not evaluated */
    int rc = eng_seq_eval(seq, chunk, first, NULL, err);
    cli_ppl_acc one = {0};
    for (int p = first; rc == 0 && p < ctx - 1; p += PPL_ROWS) {
        int n = ctx - 1 - p < PPL_ROWS ? ctx - 1 - p : PPL_ROWS;
        rc = eng_seq_eval_all(seq, chunk + p, n, logits, err);
        for (int k = 0; rc == 0 && k < n; k++) {
            double v = cli_ppl_nll(logits + (size_t)k * nv, nv, chunk[p + k + 1]);
            cli_ppl_add(&r->acc, v);
            cli_ppl_add(&one, v);
        }
    }
    free(chunk);
    if (rc) return rc;
    r->chunk_ppl[i] = cli_ppl_value(&r->acc);
    r->chunk_nll[i] = one.nll / (double)one.count;
    return 0;
}

static int run_chunks(eng_model *m, const int32_t *toks, int add_bos, int json, ppl_run *r, util_err *err) {
    eng_seq *seq = NULL;
    float *logits = malloc((size_t)PPL_ROWS * (size_t)eng_model_n_vocab(m) * sizeof *logits);
    int rc = logits ? eng_seq_new(&seq, m, r->ctx, err) : util_err_set(err, UTIL_ENOMEM, "out of memory");
    double t0 = util_now_ms();
    for (int i = 0; rc == 0 && i < r->n_chunk; i++) {
        double tc = util_now_ms();
        rc = eval_chunk(seq, m, toks, i, add_bos, logits, r, err);
        if (rc) break;
        double s = (util_now_ms() - tc) / 1000.0;
        fprintf(stderr, "perplexity: chunk %d/%d: %.2f s, running PPL %.4f", i + 1, r->n_chunk, s,
                r->chunk_ppl[i]);
        if (i == 0) fprintf(stderr, " (ETA %.1f minutes)", s * r->n_chunk / 60.0);
        fputc('\n', stderr);
        if (!json) {
            printf("[%d]%.4f,", i + 1, r->chunk_ppl[i]);
            fflush(stdout);
        }
    }
    r->seconds = (util_now_ms() - t0) / 1000.0;
    eng_seq_free(seq);
    free(logits);
    return rc;
}

static void print_json(const ppl_opts *o, const eng_model *m, size_t n_tok, int add_bos, const ppl_run *r) {
    double err = 0;
    double ppl = cli_ppl_final(&r->acc, &err);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "file", o->file);
    cJSON_AddStringToObject(j, "model", eng_model_name(m));
    cJSON_AddStringToObject(j, "backend", eng_model_backend(m));
    cJSON_AddBoolToObject(j, "exact", o->e.mp.exact != 0);
    cJSON_AddNumberToObject(j, "threads", eng_model_n_threads(m));
    cJSON_AddNumberToObject(j, "tokens", (double)n_tok);
    cJSON_AddBoolToObject(j, "add_bos", add_bos != 0);
    cJSON_AddNumberToObject(j, "ctx", r->ctx);
    cJSON_AddNumberToObject(j, "chunks", r->n_chunk);
    cJSON_AddNumberToObject(j, "scored_per_chunk", r->ctx - 1 - r->first);
    cJSON_AddNumberToObject(j, "scored", (double)r->acc.count);
    cJSON_AddNumberToObject(j, "ppl", ppl);
    cJSON_AddNumberToObject(j, "ppl_error", err);
    cJSON_AddNumberToObject(j, "nll", r->acc.nll / (double)r->acc.count);
    cJSON_AddNumberToObject(j, "seconds", r->seconds);
    cJSON_AddItemToObject(j, "chunk_ppl", cJSON_CreateDoubleArray(r->chunk_ppl, r->n_chunk));
    cJSON_AddItemToObject(j, "chunk_nll", cJSON_CreateDoubleArray(r->chunk_nll, r->n_chunk));
    cli_json_puts(j);
    cJSON_Delete(j);
}

int cli_cmd_perplexity(int argc, char **argv) {
    ppl_opts o = {.chunks = -1};
    int st = parse_ppl(&o, argc, argv);
    if (st != CLI_GO_ON) return st;
    char *text = NULL;
    size_t len = 0;
    if (load_text(o.file, &text, &len)) return CLI_EXIT_FAIL;
    util_err err;
    util_err_clear(&err);
    eng_model *m = NULL;
    int32_t *toks = NULL;
    size_t n_tok = 0;
    ppl_run r = {.ctx = (int)o.ctx, .first = (int)o.ctx / 2};
    int rc = CLI_EXIT_FAIL;
    if (eng_model_open(&m, o.e.path, &o.e.mp, &err)) goto fail;
    const eng_tokenizer *t = eng_model_tokenizer(m);
    /* llama-perplexity: common_tokenize(text, add_special = true), no special-token parsing */
    fprintf(stderr, "perplexity: tokenizing %zu bytes of '%s' ...\n", len, o.file);
    if (eng_tokenize(t, text, len, 1, 0, &toks, &n_tok, &err)) goto fail;
    if (n_tok < 2 * (size_t)o.ctx) {
        fprintf(stderr,
                "cachet perplexity: '%s' tokenizes to %zu tokens; --ctx %ld needs at least %ld "
                "(two chunks)\n",
                o.file, n_tok, o.ctx, 2 * o.ctx);
        goto done;
    }
    int add_bos = eng_tokenizer_add_bos(t) && eng_tokenizer_bos(t) >= 0;
    if (o.recall) {
        if (cli_ppl_recall_run(m, toks, n_tok, o.recall, (int)o.ctx, (int)o.trials, o.json, &err)) goto fail;
        rc = CLI_EXIT_OK;
        goto done;
    }
    if (o.st.tokens) {
        if (cli_ppl_stream_run(m, toks, n_tok, add_bos, &o.st, o.json, o.file, &err)) goto fail;
        rc = CLI_EXIT_OK;
        goto done;
    }
    long n_max = (long)(n_tok / (size_t)o.ctx);
    r.n_chunk = (int)(o.chunks > 0 && o.chunks < n_max ? o.chunks : n_max);
    r.chunk_ppl = calloc((size_t)r.n_chunk, sizeof *r.chunk_ppl);
    r.chunk_nll = calloc((size_t)r.n_chunk, sizeof *r.chunk_nll);
    if (!r.chunk_ppl || !r.chunk_nll) {
        util_err_set(&err, UTIL_ENOMEM, "out of memory");
        goto fail;
    }
    fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d (%d scored each), %s, %s%s\n", n_tok, r.n_chunk,
            r.ctx, r.ctx - 1 - r.first, eng_model_name(m), eng_model_backend(m),
            o.e.mp.exact ? ", exact" : "");
    if (run_chunks(m, toks, add_bos, o.json, &r, &err)) {
        if (!o.json) putchar('\n');
        goto fail;
    }
    if (o.json) {
        print_json(&o, m, n_tok, add_bos, &r);
    } else {
        double e = 0;
        double ppl = cli_ppl_final(&r.acc, &e);
        printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, e);
    }
    rc = CLI_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, "cachet perplexity: %s\n", err.msg);
done:
    free(r.chunk_ppl);
    free(r.chunk_nll);
    free(toks);
    eng_model_free(m);
    free(text);
    return rc;
}
