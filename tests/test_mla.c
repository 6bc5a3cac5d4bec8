/* tests/test_mla.c: deepseek2's multi-head latent attention on synthetic
 * models (tests/synth, DeepSeek-V2(-Lite)'s structure at a small shape, with
 * and without a q LoRA rank): the files; naive against absorbed on the exact
 * path; llama.cpp's logits and greedy tokens and a float64 pass
 * (tests/golden/archs/gen_mla.py); the latent cache's page size, prefix and
 * disk hits bit-identical to cold runs, the fingerprint keeping the modes'
 * pages apart; and the KV bytes per token reported. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "check.h"
#include "golden_io.h"
#include "helpers.h"
#include "proc.h"
#include "synth.h"

/* gen_mla.py's MODELS: 2 layers, embd 128, 4 heads, ff 256, kv LoRA rank 64,
 * qk nope 32, qk rope 16, v 32, q8_0, seed 7; "ds2lite" queries straight
 * from the residual (DeepSeek-V2-Lite), "ds2" through a q LoRA rank of 96. */
typedef struct mla_model {
    const char *name;
    int q_lora;
} mla_model;
static const mla_model mla_models[] = {{"ds2lite", 0}, {"ds2", 96}};

#define LOGIT_TOL_MIN 2e-2
#define SPREAD_FACTOR 1.5
#define EXACT_TOL     1e-2
#define MODES_TOL     1e-4
#define N_GEN         16

static synth_params mla_params(const mla_model *mm, const char *vocab) {
    synth_params p = synth_defaults();
    p.arch = SYNTH_ARCH_DEEPSEEK2;
    p.n_layer = 2;
    p.n_embd = 128;
    p.n_head = 4;
    p.n_kv_head = 4;
    p.n_ff = 256;
    p.q_lora_rank = mm->q_lora;
    p.kv_lora_rank = 64;
    p.qk_nope = 32;
    p.qk_rope = 16;
    p.v_head_dim = 32;
    p.wtype = ENG_TYPE_Q8_0;
    p.etype = ENG_TYPE_Q8_0;
    p.seed = 7;
    p.n_threads = 1;
    p.vocab = vocab;
    return p;
}

/* Writes mm (with the deepseek-llm vocabulary when real_vocab, else synth's
 * own); -1 after a skip or a failed check. */
static int write_mla(const mla_model *mm, const char *path, int real_vocab) {
    char vocab[4096];
    snprintf(vocab, sizeof vocab, "%s/models/vocab/ggml-vocab-deepseek-llm.gguf", check_root());
    if (real_vocab && access(vocab, R_OK) != 0) {
        CHECK_SKIP("%s absent (run `make vocabs`)", vocab);
        return -1;
    }
    synth_params p = mla_params(mm, real_vocab ? vocab : NULL);
    util_err err;
    int rc = synth_write(path, &p, &err);
    CHECK_MSG(rc == 0, "synth_write %s: %s", mm->name, rc ? err.msg : "");
    return rc ? -1 : 0;
}

static eng_model *open_mla(const char *path, int naive, int exact, int no_cache, const char *kv_dir,
                           int kv_f32) {
    eng_model_params mp = {.n_threads = 1,
                           .kv_f32 = kv_f32,
                           .no_cache = no_cache,
                           .no_disk_cache = kv_dir == NULL,
                           .kv_dir = kv_dir,
                           .exact = exact,
                           .device = "cpu",
                           .mla_naive = naive};
    eng_model *m = NULL;
    util_err err;
    int rc = eng_model_open(&m, path, &mp, &err);
    CHECK_MSG(rc == 0, "open %s (%s): %s", path, naive ? "naive" : "absorbed", rc ? err.msg : "");
    return m;
}

/* One golden row at one path and mode: the default path within
 * SPREAD_FACTOR x llama.cpp's distance from float64 (at least LOGIT_TOL_MIN)
 * of llama.cpp, greedy the same while its margin is above that; the exact
 * path within EXACT_TOL of float64, greedy the same. */
static void check_row(eng_model *m, char **f, int exact, const char *mode) {
    const th_arch_check c = {"deepseek2_", mode,      exact,         N_GEN,
                             N_GEN,        EXACT_TOL, LOGIT_TOL_MIN, SPREAD_FACTOR};
    th_arch_golden_row(m, f, &c);
}

/* Every golden row, both modes, on the default (exact = 0) or exact path. */
static void test_golden(int exact) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "")) return;
    size_t len;
    char *idx = golden_read("archs/mla_index.tsv", &len);
    CHECK_MSG(idx != NULL, "tests/golden/archs/mla_index.tsv missing");
    int rows = 0, written = 0;
    for (size_t i = 0; idx && i < sizeof mla_models / sizeof mla_models[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s.gguf", t.dir, mla_models[i].name);
        if (write_mla(&mla_models[i], path, 1)) continue;
        written++;
        for (int naive = 0; naive < 2; naive++) {
            eng_model *m = open_mla(path, naive, exact, 1, NULL, 0);
            if (m) CHECK(strcmp(eng_model_arch(m), "deepseek2") == 0);
            char *copy = strdup(idx), *save = NULL;
            for (char *line = strtok_r(copy, "\n", &save); m && line; line = strtok_r(NULL, "\n", &save)) {
                char *f[8];
                if (line[0] == '#' || golden_fields(line, f, 8) < 7 || strcmp(f[0], mla_models[i].name) != 0)
                    continue;
                check_row(m, f, exact, naive ? "naive" : "absorbed");
                rows++;
            }
            free(copy);
            eng_model_free(m);
        }
        unlink(path);
    }
    CHECK_MSG(rows >= 4 * written, "only %d golden rows for %d models", rows, written);
    free(idx);
    th_tmp_remove(&t);
}

/* The files: tensor and weight counts, the keys llama.cpp reads. */
static void test_files(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    for (size_t i = 0; i < sizeof mla_models / sizeof mla_models[0]; i++) {
        const mla_model *mm = &mla_models[i];
        if (write_mla(mm, path, 0)) continue;
        eng_gguf *g = NULL;
        util_err err;
        CHECK(eng_gguf_open(&g, path, &err) == 0);
        if (!g) continue;
        synth_params p = mla_params(mm, NULL);
        CHECK_MSG(eng_gguf_tensor_count(g) == synth_tensor_count(&p) &&
                      synth_tensor_count(&p) == 2 + 2 * (mm->q_lora ? 12 : 10),
                  "%s: %lld tensors, want %d", mm->name, (long long)eng_gguf_tensor_count(g),
                  synth_tensor_count(&p));
        int64_t elems = 0;
        for (int64_t t = 0; t < eng_gguf_tensor_count(g); t++) {
            const eng_gguf_tensor *tt = eng_gguf_tensor_at(g, t);
            elems += tt->ne[0] * tt->ne[1] * tt->ne[2] * tt->ne[3];
        }
        CHECK_MSG(elems == synth_param_count(&p), "%s: %lld weights, want %lld", mm->name, (long long)elems,
                  (long long)synth_param_count(&p));
        const struct {
            const char *key;
            uint32_t want;
        } keys[] = {{"deepseek2.attention.key_length", 48},
                    {"deepseek2.attention.value_length", 32},
                    {"deepseek2.rope.dimension_count", 16},
                    {"deepseek2.attention.kv_lora_rank", 64},
                    {"deepseek2.leading_dense_block_count", 2},
                    {"deepseek2.attention.q_lora_rank", (uint32_t)mm->q_lora}};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            uint32_t v = 0;
            CHECK_MSG(eng_gguf_get_u32(g, keys[k].key, &v, NULL) == 0 && v == keys[k].want,
                      "%s: %s = %u, want %u", mm->name, keys[k].key, v, keys[k].want);
        }
        const eng_gguf_tensor *kvb = eng_gguf_find_tensor(g, "blk.1.attn_kv_b.weight");
        CHECK(kvb && kvb->ne[0] == 64 && kvb->ne[1] == 4 * (32 + 32));
        CHECK((eng_gguf_find_tensor(g, "blk.0.attn_q_a.weight") != NULL) == (mm->q_lora > 0));
        eng_gguf_free(g);
    }
    /* the shape synth refuses */
    synth_params p = mla_params(&mla_models[0], NULL);
    util_err err;
    p.qk_rope = 15;
    CHECK(synth_check(&p, &err) == UTIL_EINVAL && strstr(err.msg, "odd"));
    p = mla_params(&mla_models[0], NULL);
    p.n_kv_head = 2;
    CHECK(synth_check(&p, &err) == UTIL_EINVAL && strstr(err.msg, "kv heads"));
    th_tmp_remove(&t);
}

/* Naive (per-head K/V cached) against absorbed (latent cached) on the exact
 * path with an f32 cache: the prompt's logits and every greedy step's,
 * within MODES_TOL. With the f16 cache the two round different quantities
 * (k_nope = W_UK c against c itself): a few 1e-3 apart, greedy the same. */
static void test_modes(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    const int32_t prompt[] = {257, 300, 12, 99, 310, 47,  101, 280, 5, 66,
                              71,  260, 33, 90, 120, 301, 7,   8,   9, 250};
    const int np = (int)(sizeof prompt / sizeof prompt[0]);
    for (size_t i = 0; i < sizeof mla_models / sizeof mla_models[0]; i++) {
        if (write_mla(&mla_models[i], path, 0)) continue;
        eng_model *mn = open_mla(path, 1, 1, 1, NULL, 1), *ma = open_mla(path, 0, 1, 1, NULL, 1);
        eng_seq *sn = NULL, *sa = NULL;
        util_err err;
        int nv = mn ? eng_model_n_vocab(mn) : 0;
        float *ln = malloc((size_t)(nv ? nv : 1) * sizeof(float)),
              *la = malloc((size_t)(nv ? nv : 1) * sizeof(float));
        int rc = mn && ma && ln && la ? 0 : -1;
        if (rc == 0) rc = eng_seq_new(&sn, mn, 256, &err) || eng_seq_new(&sa, ma, 256, &err);
        if (rc == 0) rc = eng_seq_eval(sn, prompt, np, ln, &err) || eng_seq_eval(sa, prompt, np, la, &err);
        double worst = 0;
        int steps = 0, same = 1;
        for (; rc == 0 && steps < 12; steps++) {
            double d = golden_max_abs(ln, la, nv);
            if (d > worst) worst = d;
            int32_t tn = eng_argmax(ln, nv), ta = eng_argmax(la, nv);
            same &= tn == ta;
            rc = eng_seq_eval(sn, &tn, 1, ln, &err) || eng_seq_eval(sa, &tn, 1, la, &err);
        }
        CHECK_MSG(rc == 0, "%s: eval failed", mla_models[i].name);
        CHECK_MSG(worst <= MODES_TOL, "%s: naive vs absorbed max |dlogit| %.3g > %g", mla_models[i].name,
                  worst, MODES_TOL);
        CHECK_MSG(same, "%s: naive and absorbed greedy tokens differ", mla_models[i].name);
        /* the attention is not trivial: the logits move with the context */
        CHECK(rc == 0 && steps == 12);
        fprintf(stderr, "  %s exact: naive vs absorbed max|dlogit| %.2e over %d steps\n", mla_models[i].name,
                worst, steps);
        /* and the modes differ in what they cache: the latent is a fraction */
        if (mn && ma)
            CHECK_MSG(eng_model_kv_page_bytes(ma) * 2 < eng_model_kv_page_bytes(mn), "pages %zu vs %zu",
                      eng_model_kv_page_bytes(ma), eng_model_kv_page_bytes(mn));
        eng_seq_free(sn);
        eng_seq_free(sa);
        eng_model_free(mn);
        eng_model_free(ma);
        free(ln);
        free(la);
    }
    th_tmp_remove(&t);
}

/* The latent cache: pages sized from the latent (layers x 16 x (rope +
 * rank) x 2 bytes, against the naive heads' K and V); a memory hit and a
 * disk hit (a fresh process-like model on the same directory) give the
 * cold run's logits bit for bit; the naive mode, whose pages hold other
 * values, finds nothing of the absorbed mode's on disk (the fingerprint
 * names what a page holds). */
static void test_cache(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    char kvdir[160];
    snprintf(kvdir, sizeof kvdir, "%s/kv", t.dir);
    if (write_mla(&mla_models[1], path, 0)) {
        th_tmp_remove(&t);
        return;
    }
    int32_t toks[70];
    for (int i = 0; i < 70; i++) toks[i] = 3 + (i * 37) % 250;
    eng_model *cold = open_mla(path, 0, 0, 1, NULL, 0);
    if (!cold) {
        th_tmp_remove(&t);
        return;
    }
    CHECK_MSG(eng_model_kv_page_bytes(cold) == 2 * 16 * (16 + 64) * 2, "latent page %zu bytes",
              eng_model_kv_page_bytes(cold));
    CHECK(eng_model_kv_bytes_per_token(cold) == 2 * (16 + 64) * 2);
    int nv = eng_model_n_vocab(cold);
    float *want = malloc((size_t)nv * sizeof(float)), *got = malloc((size_t)nv * sizeof(float));
    eng_seq *s = NULL;
    util_err err;
    /* cold: the whole prompt computed */
    CHECK(eng_seq_new(&s, cold, 256, &err) == 0 && eng_seq_eval(s, toks, 70, want, &err) == 0);
    eng_seq_free(s);
    eng_model_free(cold);
    /* warm memory: a first request of the first 50 tokens, then the 70 reuse them */
    eng_model *m = open_mla(path, 0, 0, 0, kvdir, 0);
    int mem = 0, disk = 0;
    s = NULL;
    CHECK(m && eng_seq_new(&s, m, 256, &err) == 0 &&
          eng_seq_set_tokens(s, toks, 50, NULL, NULL, NULL, &err) == 0);
    eng_seq_free(s);
    s = NULL;
    CHECK(m && eng_seq_new(&s, m, 256, &err) == 0 &&
          eng_seq_set_tokens(s, toks, 70, got, &mem, &disk, &err) == 0);
    CHECK_MSG(mem >= 48, "memory hit of %d tokens", mem);
    CHECK_MSG(memcmp(want, got, (size_t)nv * sizeof(float)) == 0,
              "memory hit: logits differ from the cold run");
    eng_seq_free(s);
    eng_model_flush_cache(m);
    eng_model_free(m);
    /* warm disk: a new model on the same directory */
    m = open_mla(path, 0, 0, 0, kvdir, 0);
    s = NULL;
    mem = disk = 0;
    CHECK(m && eng_seq_new(&s, m, 256, &err) == 0 &&
          eng_seq_set_tokens(s, toks, 70, got, &mem, &disk, &err) == 0);
    CHECK_MSG(disk >= 48 && mem == 0, "disk hit of %d tokens (memory %d)", disk, mem);
    CHECK_MSG(memcmp(want, got, (size_t)nv * sizeof(float)) == 0,
              "disk hit: logits differ from the cold run");
    eng_seq_free(s);
    eng_model_free(m);
    /* the naive mode on the same directory: other pages, no hit */
    m = open_mla(path, 1, 0, 0, kvdir, 0);
    s = NULL;
    mem = disk = -1;
    CHECK(m && eng_seq_new(&s, m, 256, &err) == 0 &&
          eng_seq_set_tokens(s, toks, 70, got, &mem, &disk, &err) == 0);
    CHECK_MSG(mem == 0 && disk == 0, "naive mode reused %d + %d tokens of the latent cache", mem, disk);
    if (m) CHECK(eng_model_kv_page_bytes(m) == 2 * 16 * 4 * 48 * 2 * 2);
    eng_seq_free(s);
    eng_model_free(m);
    free(want);
    free(got);
    th_tmp_remove(&t);
}

/* `cachet kv`: the file's latent against its MHA equivalent (heads x (K + V
 * head dims) x layers x 2 bytes), and the DeepSeek presets. ds2: 2 x (64 +
 * 16) x 2 = 320 B/token; MHA 4 x (48 + 32) x 2 x 2 = 1,280. V2-Lite: 27 x
 * 576 x 2 = 31,104; MHA 16 x (192 + 128) x 27 x 2 = 276,480 (8.9x). V3: 61
 * x 576 x 2 = 70,272; MHA 128 x 320 x 61 x 2 = 4,997,120 (71.1x). */
static void test_kv_report(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    const struct {
        const char *args;
        const char *want[3];
    } cases[] = {
        {"--model", {"bytes per token: 320", "it would be 1,280 bytes per token: MLA saves 4.0x", NULL}},
        {"--preset deepseek-v2-lite",
         {"bytes per token: 31,104", "276,480 bytes per token: MLA saves 8.9x", NULL}},
        {"--preset deepseek-v3",
         {"bytes per token: 70,272", "4,997,120 bytes per token: MLA saves 71.1x", NULL}},
        {"--layers 27 --kv-heads 16 --heads 16 --head-dim 192 --head-dim-v 128 --mla-rank 512 --rope-dim 64 --json",
         {"\"bytes_per_token\":31104", "\"mha_bytes_per_token\":276480", NULL}},
    };
    if (write_mla(&mla_models[0], path, 0) == 0)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char args[512];
            snprintf(args, sizeof args, "%s%s%s", cases[i].args, i == 0 ? " " : "", i == 0 ? path : "");
            proc_result r = proc_runf("%s/cachet kv %s", proc_bin_dir(), args);
            CHECK_MSG(r.status == 0, "cachet kv %s: exit %d: %s", args, r.status, r.err);
            for (int k = 0; cases[i].want[k]; k++)
                CHECK_MSG(r.out && strstr(r.out, cases[i].want[k]), "cachet kv %s: no '%s' in:\n%s", args,
                          cases[i].want[k], r.out);
            proc_result_free(&r);
        }
    th_tmp_remove(&t);
}

/* Two sequences in one pass (a prompt chunk beside a decode step, both
 * modes) give each the logits it gets alone: the pass's gathers run over
 * all rows, RoPE / store / attention per sequence. */
static void test_batch(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    int32_t a[24], bt[9];
    for (int i = 0; i < 24; i++) a[i] = 3 + (i * 53) % 251;
    for (int i = 0; i < 9; i++) bt[i] = 7 + (i * 29) % 240;
    for (int naive = 0; naive < 2 && write_mla(&mla_models[1], path, 0) == 0; naive++) {
        eng_model *m = open_mla(path, naive, 0, 1, NULL, 0);
        if (!m) break;
        int nv = eng_model_n_vocab(m);
        float *la = malloc((size_t)nv * sizeof(float)), *lb = malloc((size_t)nv * sizeof(float));
        float *wa = malloc((size_t)nv * sizeof(float)), *wb = malloc((size_t)nv * sizeof(float));
        eng_seq *sa = NULL, *sb = NULL;
        eng_batch *b = NULL;
        util_err err;
        /* alone: a's 20-token prompt then 4 decode steps; b's 9-token prompt */
        int rc = eng_seq_new(&sa, m, 128, &err) || eng_seq_eval(sa, a, 20, NULL, &err);
        for (int i = 20; rc == 0 && i < 24; i++) rc = eng_seq_eval(sa, &a[i], 1, wa, &err);
        rc = rc || eng_seq_new(&sb, m, 128, &err) || eng_seq_eval(sb, bt, 9, wb, &err);
        eng_seq_free(sa);
        eng_seq_free(sb);
        sa = sb = NULL;
        /* batched: a's decode steps ride with b's prompt on the last one */
        rc = rc || eng_seq_new(&sa, m, 128, &err) || eng_seq_new(&sb, m, 128, &err) ||
             eng_batch_new(&b, m, &err) || eng_seq_eval(sa, a, 20, NULL, &err);
        for (int i = 20; rc == 0 && i < 23; i++) rc = eng_seq_eval(sa, &a[i], 1, NULL, &err);
        if (rc == 0) {
            eng_batch_item items[2] = {{.seq = sa, .toks = &a[23], .n_tok = 1, .logits = la},
                                       {.seq = sb, .toks = bt, .n_tok = 9, .prompt = 1, .logits = lb}};
            rc = eng_batch_eval(b, items, 2, &err);
        }
        CHECK_MSG(rc == 0, "batch (%s): %s", naive ? "naive" : "absorbed", rc ? err.msg : "");
        if (rc == 0) {
            CHECK_MSG(memcmp(la, wa, (size_t)nv * sizeof(float)) == 0, "%s: the decode step differs batched",
                      naive ? "naive" : "absorbed");
            CHECK_MSG(memcmp(lb, wb, (size_t)nv * sizeof(float)) == 0, "%s: the prompt differs batched",
                      naive ? "naive" : "absorbed");
        }
        eng_batch_free(b);
        eng_seq_free(sa);
        eng_seq_free(sb);
        eng_model_free(m);
        free(la);
        free(lb);
        free(wa);
        free(wb);
    }
    th_tmp_remove(&t);
}

/* What the pass does not run is refused by name: MoE layers (a file whose
 * leading dense block count is below its layer count). */
static void test_refused(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    if (write_mla(&mla_models[0], path, 0) == 0) {
        FILE *f = fopen(path, "r+b");
        static const char key[] = "deepseek2.leading_dense_block_count";
        char buf[1 << 16];
        size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
        char *at = n ? memmem(buf, n, key, sizeof key - 1) : NULL;
        CHECK(at != NULL);
        if (at) { /* key, u32 type, u32 value: 2 -> 1 */
            long off = (long)(at - buf) + (long)sizeof key - 1 + 4;
            uint32_t one = 1;
            CHECK(fseek(f, off, SEEK_SET) == 0 && fwrite(&one, 4, 1, f) == 1);
        }
        if (f) fclose(f);
        eng_model_params mp = {.n_threads = 1, .no_cache = 1, .device = "cpu"};
        eng_model *m = NULL;
        util_err err;
        int rc = eng_model_open(&m, path, &mp, &err);
        CHECK(rc == UTIL_EUNSUPPORTED);
        CHECK_MSG(rc && strstr(err.msg, "MoE layers (1 of 2)"), "%s", rc ? err.msg : "opened");
        eng_model_free(m);
    }
    th_tmp_remove(&t);
}

/* The f16 cache through the SIMD attention kernels (exact path; the f32
 * cache of test_modes takes the scalar reference): at kv LoRA rank 96 +
 * rope 32 the absorbed head is 128 wide, the width AVX-512's kernel takes
 * (a latent view's values are its K rows there too). Naive and absorbed
 * round different values to f16: within 1e-2, the same greedy tokens. */
static void test_modes_f16(void) {
    th_tmp t;
    if (th_tmp_make(&t, "mla", "m.gguf")) return;
    const char *path = t.path;
    synth_params p = mla_params(&mla_models[0], NULL);
    p.kv_lora_rank = 96;
    p.qk_rope = 32;
    util_err err;
    CHECK(synth_write(path, &p, &err) == 0);
    int32_t prompt[20];
    for (int i = 0; i < 20; i++) prompt[i] = 3 + (i * 61) % 250;
    eng_model *mn = open_mla(path, 1, 1, 1, NULL, 0), *ma = open_mla(path, 0, 1, 1, NULL, 0);
    eng_seq *sn = NULL, *sa = NULL;
    int nv = mn ? eng_model_n_vocab(mn) : 1;
    float *ln = malloc((size_t)nv * sizeof(float)), *la = malloc((size_t)nv * sizeof(float));
    int rc = mn && ma ? 0 : -1, same = 1, steps = 0;
    double worst = 0;
    if (rc == 0) rc = eng_seq_new(&sn, mn, 128, &err) || eng_seq_new(&sa, ma, 128, &err);
    if (rc == 0) rc = eng_seq_eval(sn, prompt, 20, ln, &err) || eng_seq_eval(sa, prompt, 20, la, &err);
    for (; rc == 0 && steps < 8; steps++) {
        worst = fmax(worst, golden_max_abs(ln, la, nv));
        int32_t t = eng_argmax(ln, nv);
        same &= t == eng_argmax(la, nv);
        rc = eng_seq_eval(sn, &t, 1, ln, &err) || eng_seq_eval(sa, &t, 1, la, &err);
    }
    CHECK(rc == 0 && steps == 8);
    CHECK_MSG(worst <= 1e-2 && same, "f16 cache, head 128: naive vs absorbed %.3g, greedy same %d", worst,
              same);
    fprintf(stderr, "  f16 cache, absorbed head 128: naive vs absorbed max|dlogit| %.2e over %d steps\n",
            worst, steps);
    eng_seq_free(sn);
    eng_seq_free(sa);
    eng_model_free(mn);
    eng_model_free(ma);
    free(ln);
    free(la);
    th_tmp_remove(&t);
}

void test_mla(void) {
    CHECK_CASE(files) test_files();
    CHECK_CASE(modes) test_modes();
    CHECK_CASE(modes_f16) test_modes_f16();
    CHECK_CASE(llama_cpp) test_golden(0);
    CHECK_CASE(exact) test_golden(1);
    CHECK_CASE(cache) test_cache();
    CHECK_CASE(kv) test_kv_report();
    CHECK_CASE(batch) test_batch();
    CHECK_CASE(refused) test_refused();
}
