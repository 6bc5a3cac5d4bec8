/* tests/test_synth.c: the synthetic-model writer, then the engine on 15 odd
 * shapes it writes (GQA, MQA, K-quants, f32/f16/bf16, head dims 4 to 256):
 * open, shape, generation, batch and thread invariance, exact mode, prefix
 * hits, the CLI. Needs no real model; files live in a mkdtemp directory. Does
 * not compare against llama.cpp or check the weights mean anything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"
#include "synth.h"

#define N_PROMPT 70 /* one 64-token chunk and a tail */

/* --- the writer alone --------------------------------------------------- */

static void test_quantizers(void) {
    static const struct {
        uint32_t type;
        float tol; /* max error over the row's max |x|: about half a step of the format */
    } cases[] = {
        {ENG_TYPE_F32, 0},       {ENG_TYPE_F16, 1e-3f},  {ENG_TYPE_BF16, 8e-3f},  {ENG_TYPE_Q8_0, 1e-2f},
        {ENG_TYPE_Q4_0, 0.09f},  {ENG_TYPE_Q4_1, 0.09f}, {ENG_TYPE_Q5_0, 0.045f}, {ENG_TYPE_Q5_1, 0.045f},
        {ENG_TYPE_Q4_K, 0.125f}, {ENG_TYPE_Q5_K, 0.07f}, {ENG_TYPE_Q6_K, 0.04f},
    };
    enum { N = 512 };
    float x[N], y[N];
    unsigned char q[N * 4];
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * (i % 7 == 0 ? 6.0f : 2.0f);
    }
    float amax = 0;
    for (int i = 0; i < N; i++) amax = fmaxf(amax, fabsf(x[i]));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const eng_type_traits *tr = eng_type_get(cases[c].type);
        CHECK(synth_type_ok(cases[c].type));
        CHECK(synth_quantize_row(cases[c].type, x, q, N) == 0);
        tr->to_float(q, y, N);
        float err = 0;
        for (int i = 0; i < N; i++) err = fmaxf(err, fabsf(y[i] - x[i]));
        CHECK_MSG(err <= cases[c].tol * amax, "%s round trip: max error %g > %g", tr->name, (double)err,
                  (double)(cases[c].tol * amax));
    }
    CHECK(!synth_type_ok(ENG_TYPE_Q8_K) && synth_quantize_row(ENG_TYPE_Q8_K, x, q, N) == -1);
    CHECK(synth_quantize_row(ENG_TYPE_Q4_0, x, q, 48) == -1); /* not whole blocks */
}

static void test_writer(const char *dir) {
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/det1.gguf", dir);
    snprintf(b, sizeof b, "%s/det2.gguf", dir);
    synth_params p = synth_defaults();
    util_err err;
    CHECK(synth_write(a, &p, &err) == 0);
    CHECK(synth_write(b, &p, &err) == 0);
    CHECK_MSG(proc_files_equal(a, b), "the same params wrote different bytes");
    p.seed = 2;
    CHECK(synth_write(b, &p, &err) == 0);
    CHECK_MSG(!proc_files_equal(a, b), "another seed wrote the same bytes");
    unlink(b);

    /* rejected shapes leave no file behind */
    p = synth_defaults();
    p.wtype = ENG_TYPE_Q4_K; /* rows of 64 cannot hold 256-blocks */
    CHECK_EQ_INT(synth_write(b, &p, &err), UTIL_EINVAL);
    CHECK(strstr(err.msg, "attn_q") != NULL);
    CHECK(access(b, F_OK) != 0);
    p = synth_defaults();
    p.n_vocab = 100;
    CHECK_EQ_INT(synth_write(b, &p, &err), UTIL_EINVAL);
    p = synth_defaults();
    p.n_kv_head = 3;
    CHECK_EQ_INT(synth_write(b, &p, &err), UTIL_EINVAL);
    p = synth_defaults();
    p.etype = ENG_TYPE_Q2_K;
    CHECK_EQ_INT(synth_write(b, &p, &err), UTIL_EUNSUPPORTED);

    /* the vocabulary: specials, merges, byte round trip, chat template */
    eng_model *m = th_open_model(a, 1, 0);
    if (m) {
        const eng_tokenizer *t = eng_model_tokenizer(m);
        size_t n = 0;
        int32_t *ids = th_tokenize(t, "abc", 0, 1, &n);
        CHECK_EQ_INT(n, 1); /* merged by "a b" then "ab c" */
        free(ids);
        ids = th_tokenize(t, "<|im_start|>user\nthe hi<|im_end|>", 0, 1, &n);
        CHECK(n >= 3 && ids[0] == 1 && ids[n - 1] == 2);
        free(ids);
        const char *text = "Hello, world!\n\ttabs \xc3\xa9t\xc3\xa9 \xe2\x82\xac 123";
        ids = th_tokenize(t, text, 0, 0, &n);
        char *back = NULL;
        size_t blen = 0;
        CHECK(eng_detokenize(t, ids, n, 0, &back, &blen, &err) == 0);
        CHECK(back && blen == strlen(text) && memcmp(back, text, blen) == 0);
        free(back);
        free(ids);
        CHECK_EQ_INT(eng_tokenizer_eos(t), 2);
        CHECK(eng_tokenizer_is_eog(t, 2) && eng_tokenizer_is_eog(t, 0));
        CHECK_EQ_INT(eng_chat_get_format(eng_model_chat(m)), ENG_CHAT_CHATML);
        CHECK_EQ_STR(eng_model_name(m), "synthetic");
        eng_model_free(m);
    }
    unlink(a);
}

/* --- one model through the engine ---------------------------------------- */

typedef struct mcase {
    const char *label;
    synth_params p;
} mcase;

/* Last-token logits of toks evaluated in a fresh sequence, n_batch at a time,
 * split into two eval calls at `split` (0: one call). Caller frees. */
static float *eval_logits(eng_model *m, const int32_t *toks, int n, int n_batch, int split) {
    eng_seq *s = NULL;
    util_err err;
    float *lg = malloc((size_t)eng_model_n_vocab(m) * sizeof *lg);
    int rc = eng_seq_new(&s, m, 256, &err);
    if (!rc) {
        eng_seq_set_batch(s, n_batch);
        if (split) rc = eng_seq_eval(s, toks, split, NULL, &err);
        if (!rc) rc = eng_seq_eval(s, toks + split, n - split, lg, &err);
    }
    CHECK_MSG(rc == 0, "eval (batch %d): %s", n_batch, rc ? err.msg : "");
    eng_seq_free(s);
    if (rc) {
        free(lg);
        return NULL;
    }
    return lg;
}

static int same_logits(const eng_model *m, const float *a, const float *b) {
    return a && b && memcmp(a, b, (size_t)eng_model_n_vocab(m) * sizeof *a) == 0;
}

static void check_gguf(const char *path, const mcase *c) {
    eng_gguf *g = NULL;
    util_err err;
    int rc = eng_gguf_open(&g, path, &err);
    CHECK_MSG(rc == 0, "%s: gguf open: %s", c->label, rc ? err.msg : "");
    if (!g) return;
    CHECK_EQ_INT(eng_gguf_version(g), 3);
    CHECK_EQ_INT(eng_gguf_tensor_count(g), synth_tensor_count(&c->p));
    CHECK_EQ_INT(eng_gguf_alignment(g), 32);
    CHECK_EQ_INT(eng_gguf_data_offset(g) % 32, 0);
    int aligned = 1;
    for (int64_t i = 0; i < eng_gguf_tensor_count(g); i++)
        aligned &= eng_gguf_tensor_at(g, i)->offset % 32 == 0;
    CHECK(aligned);
    const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "blk.1.ffn_up.weight");
    CHECK(c->p.n_layer < 2 || (t && t->type == c->p.wtype));
    t = eng_gguf_find_tensor(g, "blk.0.ffn_down.weight"); /* of 8 layers, 0 gets the mix's type */
    CHECK(t && t->type == (c->p.mix_type && c->p.n_layer == 8 ? c->p.mix_type : c->p.wtype) &&
          t->ne[0] == c->p.n_ff && t->ne[1] == c->p.n_embd);
    t = eng_gguf_find_tensor(g, "token_embd.weight");
    CHECK(t && t->type == c->p.etype && t->ne[1] == c->p.n_vocab);
    t = eng_gguf_find_tensor(g, "output.weight");
    CHECK(c->p.tied ? t == NULL : (t && t->type == c->p.otype));
    t = eng_gguf_find_tensor(g, "output_norm.weight");
    CHECK(t && t->type == ENG_TYPE_F32 && t->n_dims == 1);
    eng_gguf_free(g);
}

static void check_generate(eng_model *m, const mcase *c) {
    const char *chat = "<|im_start|>user\nabc<|im_end|>\n<|im_start|>assistant\n";
    int32_t *out[2] = {NULL, NULL};
    size_t np = 0;
    int n_out[2] = {0, 0};
    util_err err;
    int32_t *prompt = th_tokenize(eng_model_tokenizer(m), chat, 0, 1, &np);
    for (int k = 0; k < 2; k++) {
        eng_seq *s = NULL;
        eng_gen_params gp = {.max_tokens = 8, .sample = eng_sample_defaults()};
        gp.sample.temp = 0;
        eng_gen_stats st;
        int rc = eng_seq_new(&s, m, 0, &err);
        if (!rc) rc = eng_generate(s, prompt, (int)np, &gp, &out[k], &n_out[k], &st, &err);
        CHECK_MSG(rc == 0, "%s: generate: %s", c->label, rc ? err.msg : "");
        CHECK_MSG(n_out[k] == 8 || (n_out[k] >= 1 && st.stop_reason == ENG_STOP_EOG),
                  "%s: generated %d tokens, stop %s", c->label, n_out[k],
                  eng_stop_reason_name(st.stop_reason));
        if (k == 1) CHECK_EQ_INT(st.cached_tokens, (int)np - 1); /* the second run hits */
        eng_seq_free(s);
    }
    CHECK_MSG(out[0] && out[1] && th_ids_equal(out[0], (size_t)n_out[0], out[1], (size_t)n_out[1]),
              "%s: greedy generation differs between a cold and a cached prompt", c->label);
    free(out[0]);
    free(out[1]);
    free(prompt);
}

/* Exact mode (f32 activations) against the default path (8-bit activations
 * where the weight type's dot product takes them): the two differ by the
 * activation rounding only, ~0.5% per matmul, and these random models do not
 * amplify it like a trained one, so the largest logit difference stays under
 * 5% of the largest logit (measured: 2.4% at most, q4_K). The top token
 * must agree unless the default path's top two are within 1% of the scale,
 * a near tie that rounding may legitimately flip. */
static void check_exact(const char *path, const mcase *c, const int32_t *toks, const float *ref) {
    eng_model *m = th_open_model(path, 1, 1);
    if (!m) return;
    float *lg = eval_logits(m, toks, N_PROMPT, 64, 0);
    if (lg && ref) {
        double scale = 0, diff = 0;
        for (int i = 0; i < c->p.n_vocab; i++) {
            scale = fmax(scale, fabs(lg[i]));
            diff = fmax(diff, fabs((double)lg[i] - ref[i]));
        }
        CHECK_MSG(scale > 0.1 && diff <= 5e-2 * scale, "%s: exact vs default: max |dlogit| %g, scale %g",
                  c->label, diff, scale);
        int top = 0, top_exact = 0, second = -1;
        for (int i = 1; i < c->p.n_vocab; i++) {
            if (ref[i] > ref[top])
                second = top, top = i;
            else if (second < 0 || ref[i] > ref[second])
                second = i;
            if (lg[i] > lg[top_exact]) top_exact = i;
        }
        CHECK_MSG(top == top_exact || ref[top] - ref[second] < 1e-2 * scale,
                  "%s: exact picks token %d, default %d (gap %g)", c->label, top_exact, top,
                  (double)(ref[top] - ref[second]));
    }
    free(lg);
    eng_model_free(m);
}

/* A prefix-cache hit (n - 1 tokens from memory) gives the cold run's logits. */
static void check_prefix(const char *path, const mcase *c, const int32_t *toks, const float *ref) {
    eng_model *m = th_open_model(path, 1, 0);
    if (!m) return;
    float *lg[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        eng_seq *s = NULL;
        util_err err;
        int mem = -1, disk = -1;
        lg[k] = malloc((size_t)c->p.n_vocab * sizeof(float));
        int rc = eng_seq_new(&s, m, 256, &err);
        if (!rc) rc = eng_seq_set_tokens(s, toks, N_PROMPT, lg[k], &mem, &disk, &err);
        CHECK_MSG(rc == 0, "%s: set_tokens: %s", c->label, rc ? err.msg : "");
        CHECK_MSG(mem == (k ? N_PROMPT - 1 : 0) && disk == 0,
                  "%s: run %d reused %d from memory, %d from disk", c->label, k, mem, disk);
        eng_seq_free(s);
    }
    CHECK_MSG(same_logits(m, lg[0], ref), "%s: set_tokens cold differs from eval", c->label);
    CHECK_MSG(same_logits(m, lg[1], lg[0]), "%s: prefix hit differs from the cold run", c->label);
    free(lg[0]);
    free(lg[1]);
    eng_model_free(m);
}

static void check_cli(const char *path, const mcase *c) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/cachet' generate --model '%s' --prompt abc --max-tokens 4 --temp 0",
             proc_bin_dir(), path);
    proc_result r = proc_run(cmd);
    CHECK_MSG(r.status == 0, "%s: cachet generate exited %d: %s", c->label, r.status, r.err ? r.err : "");
    proc_result_free(&r);
}

static void check_model(const char *dir, const mcase *c, int cli) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, c->label);
    util_err err;
    int rc = synth_write(path, &c->p, &err);
    CHECK_MSG(rc == 0, "%s: write: %s", c->label, rc ? err.msg : "");
    if (rc) return;
    check_gguf(path, c);
    eng_model *m = th_open_model(path, 1, 0);
    if (!m) {
        unlink(path);
        return;
    }
    eng_model_shape sh = eng_model_get_shape(m);
    int hd = c->p.head_dim ? c->p.head_dim : c->p.n_embd / c->p.n_head;
    CHECK_MSG(sh.n_layer == c->p.n_layer && sh.n_embd == c->p.n_embd && sh.n_head == c->p.n_head &&
                  sh.n_kv_head == c->p.n_kv_head && sh.head_dim == hd && sh.n_ff == c->p.n_ff,
              "%s: shape read back differs", c->label);
    CHECK_EQ_INT(eng_model_n_vocab(m), c->p.n_vocab);
    CHECK_EQ_INT(eng_model_n_ctx_train(m), c->p.n_ctx);

    int32_t toks[N_PROMPT];
    toks[0] = 1;
    for (int i = 1; i < N_PROMPT; i++) toks[i] = 3 + (int32_t)((i * 37 + 11) % (c->p.n_vocab - 3));

    /* prefill batching and splitting do not change a bit */
    float *b64 = eval_logits(m, toks, N_PROMPT, 64, 0);
    float *b1 = eval_logits(m, toks, N_PROMPT, 1, 0);
    float *b7 = eval_logits(m, toks, N_PROMPT, 7, 0);
    float *split = eval_logits(m, toks, N_PROMPT, 64, 29);
    CHECK_MSG(same_logits(m, b1, b64), "%s: batch 1 vs 64 differ", c->label);
    CHECK_MSG(same_logits(m, b7, b64), "%s: batch 7 vs 64 differ", c->label);
    CHECK_MSG(same_logits(m, split, b64), "%s: split eval differs", c->label);
    int finite = b64 != NULL;
    for (int i = 0; b64 && i < c->p.n_vocab; i++) finite &= isfinite(b64[i]) != 0;
    CHECK_MSG(finite, "%s: non-finite logits", c->label);
    free(b1);
    free(b7);
    free(split);

    eng_model *m2 = th_open_model(path, 2, 0);
    if (m2) {
        float *t2 = eval_logits(m2, toks, N_PROMPT, 64, 0);
        CHECK_MSG(same_logits(m, t2, b64), "%s: 2 threads differ from 1", c->label);
        free(t2);
        eng_model_free(m2);
    }
    check_exact(path, c, toks, b64);
    check_prefix(path, c, toks, b64);
    check_generate(m, c);
    free(b64);
    eng_model_free(m);
    if (cli) check_cli(path, c);
    unlink(path);
}

/* The Q4_K_M mix: attn_v and ffn_down in mix_type on llama.cpp's more-bits
 * layers (of 8: 0, 3, 6 and 7), the other matrices in wtype. */
static void check_mix(const char *dir, const synth_params *p) {
    char path[512];
    snprintf(path, sizeof path, "%s/mix.gguf", dir);
    util_err err;
    int rc = synth_write(path, p, &err);
    CHECK_MSG(rc == 0, "mix: write: %s", rc ? err.msg : "");
    eng_gguf *g = NULL;
    if (rc || eng_gguf_open(&g, path, &err)) return;
    static const int more[8] = {1, 0, 0, 1, 0, 0, 1, 1};
    int bad = 0;
    for (int il = 0; il < 8; il++) {
        static const char *const names[] = {"attn_v", "ffn_down", "attn_q", "ffn_up"};
        for (int k = 0; k < 4; k++) {
            char nm[64];
            snprintf(nm, sizeof nm, "blk.%d.%s.weight", il, names[k]);
            const eng_gguf_tensor *t = eng_gguf_find_tensor(g, nm);
            uint32_t want = k < 2 && more[il] ? p->mix_type : p->wtype;
            bad += !t || t->type != want;
        }
    }
    CHECK_MSG(bad == 0, "mix: %d layer matrices have the wrong type", bad);
    eng_gguf_free(g);
    unlink(path);
}

static synth_params shape(int n_layer, int n_embd, int n_head, int n_kv, int n_ff, int n_vocab,
                          uint32_t wtype, uint32_t etype, int tied, uint32_t otype) {
    synth_params p = synth_defaults();
    p.n_layer = n_layer;
    p.n_embd = n_embd;
    p.n_head = n_head;
    p.n_kv_head = n_kv;
    p.n_ff = n_ff;
    p.n_vocab = n_vocab;
    p.wtype = wtype;
    p.etype = etype;
    p.tied = tied;
    p.otype = otype;
    return p;
}

void test_synth(void) {
    char dir[] = "/tmp/cachet-synth-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    CHECK_CASE(quantizers) test_quantizers();
    CHECK_CASE(writer) test_writer(dir);

    mcase cases[] = {
        {"gqa_q4_1", shape(2, 64, 4, 2, 128, 320, ENG_TYPE_Q4_1, ENG_TYPE_Q8_0, 1, 0)},
        {"mqa_q8_0", shape(3, 64, 4, 1, 128, 384, ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 0, ENG_TYPE_Q8_0)},
        {"q4_k", shape(2, 256, 4, 2, 512, 320, ENG_TYPE_Q4_K, ENG_TYPE_Q8_0, 0, ENG_TYPE_Q6_K)},
        {"q6_k", shape(1, 256, 2, 2, 256, 259, ENG_TYPE_Q6_K, ENG_TYPE_F32, 1, 0)},
        {"q5_k", shape(1, 256, 8, 4, 512, 300, ENG_TYPE_Q5_K, ENG_TYPE_Q8_0, 1, 0)},
        {"f32", shape(2, 64, 2, 2, 96, 320, ENG_TYPE_F32, ENG_TYPE_F32, 1, 0)},
        {"f16", shape(2, 64, 4, 4, 128, 320, ENG_TYPE_F16, ENG_TYPE_Q8_0, 0, ENG_TYPE_F16)},
        {"odd_q4_0", shape(2, 96, 3, 1, 160, 300, ENG_TYPE_Q4_0, ENG_TYPE_F32, 0, ENG_TYPE_Q8_0)},
        {"hd24_q5_0", shape(2, 64, 4, 2, 96, 272, ENG_TYPE_Q5_0, ENG_TYPE_BF16, 1, 0)},
        {"q5_1", shape(2, 128, 2, 1, 224, 320, ENG_TYPE_Q5_1, ENG_TYPE_Q8_0, 1, 0)},
        {"tiny", shape(1, 32, 1, 1, 32, 259, ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 1, 0)},
        {"hd4", shape(1, 32, 8, 2, 64, 259, ENG_TYPE_Q4_1, ENG_TYPE_F16, 1, 0)},
        {"hd256", shape(1, 256, 2, 1, 256, 320, ENG_TYPE_Q4_0, ENG_TYPE_Q8_0, 1, 0)},
        /* MQA, head dim 128 on a 256 residual, n_ff a multiple of 32 not 64 */
        {"mqa_hd128_bf16", shape(2, 256, 4, 1, 352, 300, ENG_TYPE_BF16, ENG_TYPE_Q8_0, 0, ENG_TYPE_Q6_K)},
        {"mqa_hd128_q4_1", shape(2, 256, 2, 1, 96, 300, ENG_TYPE_Q4_1, ENG_TYPE_F16, 0, ENG_TYPE_Q5_0)},
        /* llama.cpp's Q4_K_M mix on a tied model (the llama-1b-q4_k_m preset's types) */
        {"q4_k_m", shape(8, 256, 4, 2, 512, 320, ENG_TYPE_Q4_K, ENG_TYPE_Q6_K, 1, 0)},
    };
    cases[15].p.mix_type = ENG_TYPE_Q6_K;
    CHECK_CASE(mix) check_mix(dir, &cases[15].p);
    cases[1].p.rope_base = 500000.0f;
    cases[1].p.n_ctx = 4096;
    cases[8].p.head_dim = 24; /* q/k/v 96 wide on a 64-wide residual */
    cases[12].p.head_dim = 256;
    cases[13].p.head_dim = 128; /* q 512 wide */
    CHECK_CASE(models) for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].p.seed = 100 + i;
        check_model(dir, &cases[i], i == 0 || i == 2);
    }
    if (rmdir(dir) != 0) CHECK_MSG(0, "could not remove %s", dir);
}
