/* tests/test_batch.c: several sequences in one forward pass (eng_batch_eval,
 * eng_gen_step_batch): a sequence's logits are bit-identical alone or batched
 * with others (1, 2 and 5 sequences at different lengths, a prompt chunk
 * riding with decode steps), on SmolLM2's default and exact paths and on
 * Gemma 3 when its file is present; a prompt prefix shared by generations
 * admitted together is computed once; sequences sharing a long prefix's
 * pages decode batched as alone; bad batches are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "check.h"
#include "helpers.h"

#define N_SEQ_MAX 5
#define N_STEPS   4

static const char *const texts[N_SEQ_MAX] = {
    "Hello",
    "The capital of France is",
    "def add(a, b):\n    return a + b\n\n# a longer prompt so that this sequence sits further on",
    "Once upon a time, in a land far away, there lived a",
    "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,",
};

static int32_t argmax(const float *v, size_t n) {
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return (int32_t)best;
}

/* k sequences prefilled with texts[0..k) decode N_STEPS greedy tokens, alone
 * (eng_seq_eval) and together (eng_batch_eval): every step's logits equal. */
static void check_decode(eng_model *m, int k) {
    const eng_tokenizer *t = eng_model_tokenizer(m);
    size_t nv = (size_t)eng_model_n_vocab(m);
    util_err err;
    eng_seq *alone[N_SEQ_MAX] = {0}, *batched[N_SEQ_MAX] = {0};
    float *la = malloc((size_t)k * nv * sizeof(float)), *lb = malloc((size_t)k * nv * sizeof(float));
    int32_t next[N_SEQ_MAX];
    eng_batch *b = NULL;
    if (!la || !lb || eng_batch_new(&b, m, &err)) {
        CHECK_MSG(0, "setup: out of memory");
        goto out;
    }
    for (int i = 0; i < k; i++) {
        size_t n = 0;
        int32_t *ids = th_tokenize(t, texts[i], 0, 0, &n);
        int ok = ids && eng_seq_new(&alone[i], m, 256, &err) == 0 &&
                 eng_seq_new(&batched[i], m, 256, &err) == 0 &&
                 eng_seq_eval(alone[i], ids, (int)n, la + i * nv, &err) == 0 &&
                 eng_seq_eval(batched[i], ids, (int)n, lb + i * nv, &err) == 0;
        free(ids);
        if (!ok) {
            CHECK_MSG(0, "prefill %d: %s", i, err.msg);
            goto out;
        }
        next[i] = argmax(la + i * nv, nv);
    }
    for (int step = 0; step < N_STEPS; step++) {
        eng_batch_item it[N_SEQ_MAX];
        for (int i = 0; i < k; i++) {
            if (eng_seq_eval(alone[i], &next[i], 1, la + i * nv, &err)) {
                CHECK_MSG(0, "eng_seq_eval: %s", err.msg);
                goto out;
            }
            it[i] = (eng_batch_item){.seq = batched[i], .toks = &next[i], .n_tok = 1, .logits = lb + i * nv};
        }
        int rc = eng_batch_eval(b, it, k, &err);
        CHECK_MSG(rc == 0, "eng_batch_eval: %s", rc ? err.msg : "");
        if (rc) goto out;
        for (int i = 0; i < k; i++) {
            CHECK_EQ_INT(eng_seq_len(batched[i]), eng_seq_len(alone[i]));
            CHECK_MSG(memcmp(la + i * nv, lb + i * nv, nv * sizeof(float)) == 0,
                      "%d sequences, step %d: sequence %d's logits differ batched", k, step, i);
            next[i] = argmax(la + i * nv, nv);
        }
    }
out:
    for (int i = 0; i < k; i++) {
        eng_seq_free(alone[i]);
        eng_seq_free(batched[i]);
    }
    eng_batch_free(b);
    free(la);
    free(lb);
}

/* A prompt chunk in the same pass as two decode steps: each equals its run
 * alone (the chunk's last logits, and a later chunk on top of it). */
static void check_mixed(eng_model *m) {
    const eng_tokenizer *t = eng_model_tokenizer(m);
    size_t nv = (size_t)eng_model_n_vocab(m), n = 0;
    util_err err;
    int32_t *ids = th_tokenize(t, texts[4], 0, 0, &n);
    eng_seq *s[6] = {0};
    float *l = malloc(6 * nv * sizeof(float));
    eng_batch *b = NULL;
    if (!ids || n < 12 || !l || eng_batch_new(&b, m, &err)) {
        CHECK_MSG(0, "setup");
        goto out;
    }
    for (int i = 0; i < 6; i++)
        if (eng_seq_new(&s[i], m, 256, &err)) {
            CHECK_MSG(0, "eng_seq_new: %s", err.msg);
            goto out;
        }
    /* s[0], s[1]: decoders (alone: s[3], s[4]); s[2]: the chunked prompt (alone: s[5]) */
    CHECK(eng_seq_eval(s[0], ids, 3, NULL, &err) == 0 && eng_seq_eval(s[3], ids, 3, NULL, &err) == 0);
    CHECK(eng_seq_eval(s[1], ids + 3, 5, NULL, &err) == 0 && eng_seq_eval(s[4], ids + 3, 5, NULL, &err) == 0);
    for (int round = 0; round < 2; round++) {
        const int32_t *chunk = ids + round * 6;
        eng_batch_item it[3] = {
            {.seq = s[0], .toks = &ids[7], .n_tok = 1, .logits = l},
            {.seq = s[2], .toks = chunk, .n_tok = 6, .logits = l + nv},
            {.seq = s[1], .toks = &ids[9], .n_tok = 1, .logits = l + 2 * nv},
        };
        int rc = eng_batch_eval(b, it, 3, &err);
        CHECK_MSG(rc == 0, "eng_batch_eval: %s", rc ? err.msg : "");
        CHECK(eng_seq_eval(s[3], &ids[7], 1, l + 3 * nv, &err) == 0);
        CHECK(eng_seq_eval(s[5], chunk, 6, l + 4 * nv, &err) == 0);
        CHECK(eng_seq_eval(s[4], &ids[9], 1, l + 5 * nv, &err) == 0);
        CHECK_MSG(memcmp(l, l + 3 * nv, nv * sizeof(float)) == 0, "round %d: decode 0 differs", round);
        CHECK_MSG(memcmp(l + nv, l + 4 * nv, nv * sizeof(float)) == 0, "round %d: prompt chunk differs",
                  round);
        CHECK_MSG(memcmp(l + 2 * nv, l + 5 * nv, nv * sizeof(float)) == 0, "round %d: decode 1 differs",
                  round);
    }
    CHECK_EQ_INT(eng_seq_len(s[2]), 12);
    /* one prompt token alone takes the batch's own path (a prompt pass) */
    eng_batch_item one = {.seq = s[0], .toks = &ids[10], .n_tok = 1, .prompt = 1, .logits = l};
    CHECK(eng_batch_eval(b, &one, 1, &err) == 0 && eng_seq_eval(s[3], &ids[10], 1, l + 3 * nv, &err) == 0);
    CHECK_MSG(memcmp(l, l + 3 * nv, nv * sizeof(float)) == 0, "a lone prompt token differs");
    /* refused: nothing, a sequence twice, a token outside the vocabulary */
    int32_t bad = eng_model_n_vocab(m);
    eng_batch_item twice[2] = {{.seq = s[0], .toks = ids, .n_tok = 1},
                               {.seq = s[0], .toks = ids, .n_tok = 1}};
    CHECK_EQ_INT(eng_batch_eval(b, twice, 0, &err), UTIL_EINVAL);
    CHECK_EQ_INT(eng_batch_eval(b, twice, 2, &err), UTIL_EINVAL);
    int len0 = eng_seq_len(s[0]);
    eng_batch_item oov[2] = {{.seq = s[0], .toks = ids, .n_tok = 1}, {.seq = s[1], .toks = &bad, .n_tok = 1}};
    CHECK_EQ_INT(eng_batch_eval(b, oov, 2, &err), UTIL_ERANGE);
    CHECK_EQ_INT(eng_seq_len(s[0]), len0);
out:
    for (int i = 0; i < 6; i++) eng_seq_free(s[i]);
    eng_batch_free(b);
    free(l);
    free(ids);
}

/* eng_gen_step_batch: three greedy generations started at different rounds,
 * their prompts prefilled in chunks of 8 riding with the others' decode
 * steps, give the tokens each gives alone (eng_generate); with --spec ngram
 * too (a speculative one verifies its drafts in its own pass). */
static void check_gen(eng_model *m, int spec) {
    enum { N = 3, MAX_NEW = 6 };
    const eng_tokenizer *t = eng_model_tokenizer(m);
    util_err err;
    eng_gen_params gp = {.max_tokens = MAX_NEW, .sample = eng_sample_defaults()};
    gp.sample.temp = 0;
    if (spec) gp.spec.mode = ENG_SPEC_NGRAM; /* greedy: the same tokens as plain decoding */
    eng_seq *s[N] = {0};
    eng_gen *g[N] = {0};
    int32_t *ids[N] = {0}, *want[N] = {0}, got[N][MAX_NEW];
    size_t n_ids[N];
    int n_want[N], n_got[N] = {0}, done[N] = {0};
    eng_batch *b = NULL;
    if (eng_batch_new(&b, m, &err)) {
        CHECK_MSG(0, "eng_batch_new: %s", err.msg);
        return;
    }
    for (int i = 0; i < N; i++) {
        ids[i] = th_tokenize(t, texts[i + 2], 0, 0, &n_ids[i]);
        eng_seq *alone = NULL;
        int ok = ids[i] && eng_seq_new(&alone, m, 256, &err) == 0 &&
                 eng_generate(alone, ids[i], (int)n_ids[i], &gp, &want[i], &n_want[i], NULL, &err) == 0 &&
                 eng_seq_new(&s[i], m, 256, &err) == 0;
        eng_seq_free(alone);
        if (!ok) {
            CHECK_MSG(0, "setup %d: %s", i, err.msg);
            goto out;
        }
    }
    for (int round = 0, left = N; left > 0 && round < 64; round++) {
        eng_gen *run[N];
        int idx[N], k = 0;
        for (int i = 0; i < N; i++) {
            if (!g[i] && !done[i] && round >= 2 * i) /* a new request every other round */
                CHECK(eng_gen_begin(&g[i], s[i], ids[i], (int)n_ids[i], &gp, &err) == 0);
            if (g[i]) {
                run[k] = g[i];
                idx[k++] = i;
            }
        }
        if (k == 0) continue;
        eng_gen_token out[N];
        if (eng_gen_step_batch(run, k, b, 8, out, &err)) {
            CHECK_MSG(0, "eng_gen_step_batch: %s", err.msg);
            goto out;
        }
        for (int j = 0; j < k; j++) {
            int i = idx[j];
            if (out[j].id >= 0 && !(out[j].done && out[j].stop == ENG_STOP_EOG) && n_got[i] < MAX_NEW)
                got[i][n_got[i]++] = out[j].id;
            if (out[j].done) {
                eng_gen_end(g[i], NULL);
                g[i] = NULL;
                done[i] = 1;
                left--;
            }
        }
    }
    for (int i = 0; i < N; i++) {
        CHECK_MSG(done[i], "generation %d did not end", i);
        CHECK_EQ_INT(n_got[i], n_want[i]);
        CHECK_MSG(n_got[i] == n_want[i] && memcmp(got[i], want[i], (size_t)n_got[i] * sizeof(int32_t)) == 0,
                  "generation %d: batched tokens differ from alone", i);
    }
out:
    for (int i = 0; i < N; i++) {
        eng_gen_end(g[i], NULL);
        eng_seq_free(s[i]);
        free(ids[i]);
        free(want[i]);
    }
    eng_batch_free(b);
}

/* Four generations admitted together, three with one long prompt and one
 * with that prompt plus another question, prefilled in chunks of 32: the
 * shared prefix is computed once (the others wait a step and reuse each
 * chunk from the cache), not four times, and each gives the tokens it gives
 * alone (cache hits are exact). */
static void check_shared_prefill(eng_model *m) {
    enum { N = 4, MAX_NEW = 3, CHUNK = 32 };
    const eng_tokenizer *t = eng_model_tokenizer(m);
    util_err err;
    eng_gen_params gp = {.max_tokens = MAX_NEW, .sample = eng_sample_defaults()};
    gp.sample.temp = 0;
    char text[4096];
    size_t len = 0;
    for (int i = 0; i < 30 && len < sizeof text - 200; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "Rule %d of the shared prompt: answer in %d words. ", i + 1, 3 * i + 7);
    char other[4200];
    snprintf(other, sizeof other, "%sWhich rule mentions forty words?", text);
    eng_seq *s[N] = {0};
    eng_gen *g[N] = {0};
    int32_t *ids[N] = {0}, got[N][MAX_NEW];
    size_t n_ids[N];
    int n_got[N] = {0}, computed = 0, left = N;
    eng_batch *b = NULL;
    if (eng_batch_new(&b, m, &err)) {
        CHECK_MSG(0, "eng_batch_new: %s", err.msg);
        return;
    }
    for (int i = 0; i < N; i++) {
        ids[i] = th_tokenize(t, i == N - 1 ? other : text, 0, 0, &n_ids[i]);
        if (!ids[i] || eng_seq_new(&s[i], m, 512, &err) ||
            eng_gen_begin(&g[i], s[i], ids[i], (int)n_ids[i], &gp, &err)) {
            CHECK_MSG(0, "setup %d: %s", i, err.msg);
            goto out;
        }
    }
    int shared = 0; /* tokens the last prompt shares with the others */
    while (shared < (int)n_ids[0] && shared < (int)n_ids[N - 1] && ids[0][shared] == ids[N - 1][shared])
        shared++;
    CHECK_MSG(n_ids[0] > 6 * CHUNK && shared > 5 * CHUNK, "prompt %zu tokens, shared %d", n_ids[0], shared);
    for (int round = 0; left > 0 && round < 200; round++) {
        eng_gen *run[N];
        int idx[N], k = 0;
        for (int i = 0; i < N; i++)
            if (g[i]) {
                run[k] = g[i];
                idx[k++] = i;
            }
        eng_gen_token out[N];
        if (eng_gen_step_batch(run, k, b, CHUNK, out, &err)) {
            CHECK_MSG(0, "eng_gen_step_batch: %s", err.msg);
            goto out;
        }
        for (int j = 0; j < k; j++) {
            int i = idx[j];
            if (out[j].id >= 0 && !(out[j].done && out[j].stop == ENG_STOP_EOG) && n_got[i] < MAX_NEW)
                got[i][n_got[i]++] = out[j].id;
            if (out[j].done) {
                eng_gen_stats st;
                eng_gen_end(g[i], &st);
                g[i] = NULL;
                computed += st.computed_tokens;
                CHECK_EQ_INT(st.cached_tokens + st.computed_tokens, (int)n_ids[i]);
                left--;
            }
        }
    }
    CHECK_EQ_INT(left, 0);
    /* the prompt once, the last token of each identical copy (always
     * computed for its logits), the other question's own part and at most
     * the one chunk where it leaves the shared prefix; four copies before */
    int most = (int)n_ids[0] + (N - 2) + ((int)n_ids[N - 1] - shared) + CHUNK;
    CHECK_MSG(computed <= most, "%d prompt tokens computed for 4 prompts of %zu (shared %d); want <= %d",
              computed, n_ids[0], shared, most);
    for (int i = 0; i < N; i++) {
        eng_seq *alone = NULL;
        int32_t *want = NULL;
        int n_want = 0;
        if (eng_seq_new(&alone, m, 512, &err) ||
            eng_generate(alone, ids[i], (int)n_ids[i], &gp, &want, &n_want, NULL, &err)) {
            CHECK_MSG(0, "alone %d: %s", i, err.msg);
        } else {
            CHECK_EQ_INT(n_got[i], n_want);
            CHECK_MSG(n_got[i] == n_want && memcmp(got[i], want, (size_t)n_want * sizeof(int32_t)) == 0,
                      "generation %d: tokens differ from alone", i);
        }
        free(want);
        eng_seq_free(alone);
    }
out:
    for (int i = 0; i < N; i++) {
        eng_gen_end(g[i], NULL);
        eng_seq_free(s[i]);
        free(ids[i]);
    }
    eng_batch_free(b);
}

/* Three sequences holding one prompt prefix of more than two attention pieces
 * (CPU_ATTN_CHUNK = 256 positions) from the prefix cache, so their views share
 * those pages, each with its own suffix of a different length: batched decode
 * steps (one attention call reading the shared rows once for all three) give
 * each the logits of its steps alone. */
static void check_shared_pages(eng_model *m) {
    enum { N = 3, CTX = 1024 };
    const eng_tokenizer *t = eng_model_tokenizer(m);
    size_t nv = (size_t)eng_model_n_vocab(m);
    util_err err;
    char *text = malloc(16384);
    size_t len = 0, n_pre = 0;
    int32_t *pre = NULL;
    for (int r = 0; r < 64 && n_pre < 560; r++) { /* a prefix of at least 560 tokens */
        len += (size_t)snprintf(text + len, 16384 - len, "Rule %d of the shared prompt: %s %s\n", r + 1,
                                texts[3], texts[4]);
        free(pre);
        pre = th_tokenize(t, text, 0, 0, &n_pre);
        if (!pre) break;
    }
    static const char *const suffix[N] = {" Now", " What is the capital of France?", " 1, 2, 3, 4, 5, 6, 7,"};
    eng_seq *alone[N] = {0}, *batched[N] = {0};
    float *la = malloc(N * nv * sizeof(float)), *lb = malloc(N * nv * sizeof(float));
    int32_t next[N];
    eng_batch *b = NULL;
    if (!pre || n_pre < 560 || !la || !lb || eng_batch_new(&b, m, &err)) {
        CHECK_MSG(0, "setup: prefix of %zu tokens", n_pre);
        goto out;
    }
    for (int i = 0; i < N; i++) {
        size_t n_suf = 0;
        int32_t *suf = th_tokenize(t, suffix[i], 0, 0, &n_suf);
        int32_t *ids = suf ? malloc((n_pre + n_suf) * sizeof(int32_t)) : NULL;
        int cached = 0, ok = ids != NULL;
        if (ok) {
            memcpy(ids, pre, n_pre * sizeof(int32_t));
            memcpy(ids + n_pre, suf, n_suf * sizeof(int32_t));
        }
        ok = ok && eng_seq_new(&alone[i], m, CTX, &err) == 0 && eng_seq_new(&batched[i], m, CTX, &err) == 0 &&
             eng_seq_set_tokens(batched[i], ids, (int)(n_pre + n_suf), lb + i * nv, &cached, NULL, &err) ==
                 0 &&
             eng_seq_set_tokens(alone[i], ids, (int)(n_pre + n_suf), la + i * nv, NULL, NULL, &err) == 0;
        free(suf);
        free(ids);
        if (!ok) {
            CHECK_MSG(0, "prefill %d: %s", i, err.msg);
            goto out;
        }
        /* the second and third take the prefix's pages from the cache */
        CHECK_MSG(i == 0 || cached >= 512, "sequence %d: %d tokens from the cache", i, cached);
        CHECK_MSG(memcmp(la + i * nv, lb + i * nv, nv * sizeof(float)) == 0, "prefill %d differs", i);
        next[i] = argmax(la + i * nv, nv);
    }
    for (int step = 0; step < N_STEPS; step++) {
        eng_batch_item it[N];
        for (int i = 0; i < N; i++) {
            if (eng_seq_eval(alone[i], &next[i], 1, la + i * nv, &err)) {
                CHECK_MSG(0, "eng_seq_eval: %s", err.msg);
                goto out;
            }
            it[i] = (eng_batch_item){.seq = batched[i], .toks = &next[i], .n_tok = 1, .logits = lb + i * nv};
        }
        int rc = eng_batch_eval(b, it, N, &err);
        CHECK_MSG(rc == 0, "eng_batch_eval: %s", rc ? err.msg : "");
        if (rc) goto out;
        for (int i = 0; i < N; i++) {
            CHECK_MSG(memcmp(la + i * nv, lb + i * nv, nv * sizeof(float)) == 0,
                      "shared prefix of %zu tokens, step %d: sequence %d's logits differ batched", n_pre,
                      step, i);
            next[i] = argmax(la + i * nv, nv);
        }
    }
out:
    for (int i = 0; i < N; i++) {
        eng_seq_free(alone[i]);
        eng_seq_free(batched[i]);
    }
    eng_batch_free(b);
    free(pre);
    free(text);
    free(la);
    free(lb);
}

static void check_model(eng_model *m) {
    check_decode(m, 1);
    check_decode(m, 2);
    check_decode(m, 5);
    check_mixed(m);
    check_gen(m, 0);
    check_gen(m, 1);
    check_shared_prefill(m);
}

void test_batch(void) {
    eng_model *m = th_open_model(NULL, 2, 0);
    if (!m) return;
    CHECK_CASE(eval) check_model(m);
    CHECK_CASE(shared_pages) check_shared_pages(m);
    eng_model *mx = th_open_model(NULL, 2, 1);
    if (mx) CHECK_CASE(exact_eval) check_model(mx);
    eng_model_free(mx);
    CHECK_CASE(gemma3_eval) {
        const char *gp = th_gemma3_path();
        eng_model *g = gp ? th_open_model(gp, 2, 0) : NULL;
        if (!gp)
            CHECK_SKIP("models/gemma-3-270m-q4_k_m.gguf is absent (make model-gemma3)");
        else if (g)
            check_model(g);
        eng_model_free(g);
    }
    eng_model_free(m);
}
