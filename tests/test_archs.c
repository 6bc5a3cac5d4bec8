/* tests/test_archs.c: the qwen2, qwen3 and phi3 forward passes, llama with
 * Llama 3's rope scaling (rope_freqs) and llama at Mistral's shapes, on
 * synthetic models (tests/synth, the real qwen2 / Qwen 3.5 / Llama 3 / Phi-3 /
 * llama-spm vocabularies from models/vocab/,
 * "skipped" without `make vocabs`) against tests/golden/archs/: llama.cpp's
 * last-position logits and greedy tokens (default path) and a float64 numpy
 * pass (exact path). The files are written here with the flags of
 * gen_archs.py's MODELS, so the goldens describe the same bytes. */
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
#include "synth.h"

/* As tests/test_engine.c: the default path within 1.5x llama.cpp's distance
 * from the float64 pass (its 8-bit activations are the spread), at least
 * 2e-2; the exact path within 1e-2 of float64. */
#define LOGIT_TOL_MIN 2e-2
#define SPREAD_FACTOR 1.5
#define EXACT_TOL     1e-2
#define N_GEN         32

typedef struct arch_model {
    const char *name, *arch, *vocab; /* golden rows' name, the engine's architecture */
    synth_arch a;
    int head_dim, rope_freqs;
    int embd, heads, kv_heads, ff, swa_window; /* 0: 128, 4, 2, 256, synth's default */
    float rope_base;                           /* 0: synth's default (10000) */
    int big; /* 1: the llama-1b-q4_k_m preset's shape and types (the case big) */
} arch_model;

/* gen_archs.py's MODELS: 2 layers, q8_0, seed 7; embd 128, 4/2 heads, ff 256
 * unless given. phi3: head dim 96 as Phi-3 mini, and a 4-position window in
 * the file that llama.cpp ignores (so must cachet: the prompts are longer);
 * mistral: 4 query heads per kv head, rope base 1e6. */
static const arch_model arch_models[] = {
    {"qwen2", "qwen2", "qwen2", SYNTH_ARCH_QWEN2, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3", "qwen3", "qwen35", SYNTH_ARCH_QWEN3, 64, 0, 0, 0, 0, 0, 0, 0, 0},
    {"llama3", "llama", "llama-bpe", SYNTH_ARCH_LLAMA, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {"phi3", "phi3", "phi-3", SYNTH_ARCH_PHI3, 0, 0, 192, 2, 2, 256, 4, 0, 0},
    {"mistral", "llama", "llama-spm", SYNTH_ARCH_LLAMA, 0, 0, 256, 8, 2, 512, 0, 1e6f, 0},
};

/* gen_archs.py's llama1b: cachet-synth's llama-1b-q4_k_m preset (16 layers,
 * embd 2048, 32/8 heads, ff 8192, rope base 5e5, q4_K layers with q6_K
 * attn_v/ffn_down in llama.cpp's more-bits layers, q6_K tied embedding: 600
 * MiB) with the llama-spm vocabulary; 16 greedy tokens. */
static const arch_model big_model = {"llama1b", "llama", "llama-spm", SYNTH_ARCH_LLAMA, 0, 0, 2048, 32,
                                     8,         8192,    0,           500000.0f,        1};
#define N_GEN_BIG 16

/* The synth parameters of am (its vocabulary not yet read). */
static synth_params model_params(const arch_model *am) {
    synth_params p = synth_defaults();
    p.arch = am->a;
    p.n_layer = 2;
    p.n_embd = am->embd ? am->embd : 128;
    p.n_head = am->heads ? am->heads : 4;
    p.n_kv_head = am->kv_heads ? am->kv_heads : 2;
    p.head_dim = am->head_dim;
    p.rope_freqs = am->rope_freqs;
    p.n_ff = am->ff ? am->ff : 256;
    if (am->swa_window) p.swa_window = am->swa_window;
    if (am->rope_base > 0) p.rope_base = am->rope_base;
    p.wtype = ENG_TYPE_Q8_0;
    p.etype = ENG_TYPE_Q8_0;
    p.seed = 7;
    p.n_threads = 1;
    if (am->big) {
        p.n_layer = 16, p.n_ctx = 8192;
        p.wtype = ENG_TYPE_Q4_K, p.mix_type = ENG_TYPE_Q6_K, p.etype = ENG_TYPE_Q6_K;
        p.n_threads = 0; /* the same bytes on any count */
    }
    return p;
}

static int write_model(const arch_model *am, const char *path) {
    char vocab[4096];
    snprintf(vocab, sizeof vocab, "%s/models/vocab/ggml-vocab-%s.gguf", check_root(), am->vocab);
    if (access(vocab, R_OK) != 0) {
        CHECK_SKIP("%s absent (run `make vocabs`)", vocab);
        return -1;
    }
    synth_params p = model_params(am);
    p.vocab = vocab;
    util_err err;
    int rc = synth_write(path, &p, &err);
    CHECK_MSG(rc == 0, "synth_write %s: %s", am->name, rc ? err.msg : "");
    return rc ? -1 : 0;
}

/* One golden row against the model at one path (exact: the float64 columns),
 * n_gen greedy tokens (the row's count) of which the first check_gen are run. */
static void check_row(eng_model *m, char **f, int exact, int n_gen, int check_gen) {
    const th_arch_check c = {"", "", exact, n_gen, check_gen, EXACT_TOL, LOGIT_TOL_MIN, SPREAD_FACTOR};
    th_arch_golden_row(m, f, &c);
}

static void test_golden(int exact) {
    char dir[] = "/tmp/cachet-archs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    size_t len;
    char *idx = golden_read("archs/index.tsv", &len);
    CHECK_MSG(idx != NULL, "tests/golden/archs/index.tsv missing");
    int rows = 0, written = 0;
    for (size_t i = 0; idx && i < sizeof arch_models / sizeof arch_models[0]; i++) {
        const arch_model *am = &arch_models[i];
        char path[256];
        snprintf(path, sizeof path, "%s/%s.gguf", dir, am->name);
        if (write_model(am, path)) continue;
        written++;
        eng_model_params mp = {.n_threads = 1, .no_cache = 1, .exact = exact, .device = "cpu"};
        eng_model *m = NULL;
        util_err err;
        int rc = eng_model_open(&m, path, &mp, &err);
        CHECK_MSG(rc == 0, "open %s: %s", am->name, rc ? err.msg : "");
        if (rc == 0) CHECK(strcmp(eng_model_arch(m), am->arch) == 0);
        char *copy = strdup(idx), *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save); rc == 0 && line; line = strtok_r(NULL, "\n", &save)) {
            char *f[8];
            if (line[0] == '#' || golden_fields(line, f, 8) < 7 || strcmp(f[0], am->name) != 0) continue;
            check_row(m, f, exact, N_GEN, N_GEN);
            rows++;
        }
        free(copy);
        eng_model_free(m);
        unlink(path);
    }
    CHECK_MSG(rows >= 2 * written, "only %d golden rows for %d models", rows, written);
    free(idx);
    rmdir(dir);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n))) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

/* The files themselves: the tensor count and weights synth promises, the
 * vocabulary copied key for key; and a file that lacks an architecture's
 * tensors is refused by name (a qwen3 file relabelled qwen2 has no biases). */
static void test_files(void) {
    char dir[] = "/tmp/cachet-archs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    for (size_t i = 0; i < sizeof arch_models / sizeof arch_models[0]; i++) {
        const arch_model *am = &arch_models[i];
        if (write_model(am, path)) continue;
        eng_gguf *g = NULL, *v = NULL;
        util_err err;
        char vocab[4096];
        snprintf(vocab, sizeof vocab, "%s/models/vocab/ggml-vocab-%s.gguf", check_root(), am->vocab);
        CHECK(eng_gguf_open(&g, path, &err) == 0 && eng_gguf_open(&v, vocab, &err) == 0);
        if (g && v) {
            synth_params p = model_params(am);
            CHECK(synth_vocab_size(vocab, &p.n_vocab, &err) == 0);
            CHECK_MSG(eng_gguf_tensor_count(g) == synth_tensor_count(&p), "%s: %lld tensors, want %d",
                      am->name, (long long)eng_gguf_tensor_count(g), synth_tensor_count(&p));
            int64_t elems = 0;
            for (int64_t t = 0; t < eng_gguf_tensor_count(g); t++) {
                const eng_gguf_tensor *tt = eng_gguf_tensor_at(g, t);
                elems += tt->ne[0] * tt->ne[1] * tt->ne[2] * tt->ne[3];
            }
            CHECK_MSG(elems == synth_param_count(&p), "%s: %lld weights, want %lld", am->name,
                      (long long)elems, (long long)synth_param_count(&p));
            const char *a, *b;
            size_t la, lb;
            CHECK(eng_gguf_get_str(g, "tokenizer.ggml.pre", &a, &la, NULL) == 0 &&
                  eng_gguf_get_str(v, "tokenizer.ggml.pre", &b, &lb, NULL) == 0 && la == lb &&
                  memcmp(a, b, la) == 0);
            int copied = 0, want = 0;
            for (int64_t k = 0; k < eng_gguf_kv_count(v); k++) {
                const char *key = eng_gguf_kv_key(v, k);
                if (strncmp(key, "tokenizer.", 10) != 0) continue;
                want++;
                int64_t j = eng_gguf_find_key(g, key);
                copied += j >= 0 && eng_gguf_kv_type(g, j) == eng_gguf_kv_type(v, k);
            }
            CHECK_MSG(copied == want && want >= 4, "%s: %d of %d tokenizer keys copied", am->name, copied,
                      want);
        }
        eng_gguf_free(g);
        eng_gguf_free(v);
    }
    /* synth's own vocabulary: the relabelled file holds no other "qwen3" bytes */
    synth_params p = synth_defaults();
    p.arch = SYNTH_ARCH_QWEN3;
    util_err err;
    CHECK(synth_write(path, &p, &err) == 0);
    size_t len = 0;
    char *data = read_all(path, &len);
    CHECK(data != NULL);
    int n = 0;
    for (char *q = data; data && (q = memmem(q, len - (size_t)(q - data), "qwen3", 5)); q += 5, n++)
        q[4] = '2';
    CHECK(n >= 8);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len);
    if (f) fclose(f);
    free(data);
    eng_model *m = NULL;
    eng_model_params mp = {.n_threads = 1, .no_cache = 1, .device = "cpu"};
    int rc = eng_model_open(&m, path, &mp, &err);
    CHECK(rc == UTIL_EFORMAT);
    CHECK_MSG(rc && strstr(err.msg, "missing tensor 'blk.0.attn_q.bias'"), "%s", rc ? err.msg : "opened");
    eng_model_free(m);
    unlink(path);
    rmdir(dir);
}

/* A /proc/self/status field in KiB (-1 if absent: not Linux). */
static long proc_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t k = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, k) == 0 && line[k] == ':') v = strtol(line + k + 1, NULL, 10);
    if (f) fclose(f);
    return v;
}

/* The 1B shape (big_model): written once, both paths; on the exact path
 * (f32 activations, seconds per token at this size) only the shortest
 * prompt and its first greedy token (the top-1). */
static void test_big(void) {
    char dir[] = "/tmp/cachet-archs-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    size_t len;
    char *idx = golden_read("archs/index.tsv", &len);
    CHECK_MSG(idx != NULL, "tests/golden/archs/index.tsv missing");
    char path[256];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, big_model.name);
    int rows = 0;
    if (idx && write_model(&big_model, path) == 0) {
        for (int exact = 0; exact < 2; exact++) {
            eng_model_params mp = {.n_threads = 1, .no_cache = 1, .exact = exact, .device = "cpu"};
            eng_model *m = NULL;
            util_err err;
            long anon0 = proc_kib("RssAnon");
            int rc = eng_model_open(&m, path, &mp, &err);
            CHECK_MSG(rc == 0, "open %s: %s", big_model.name, rc ? err.msg : "");
            char *copy = strdup(idx), *save = NULL;
            for (char *line = strtok_r(copy, "\n", &save); rc == 0 && line;
                 line = strtok_r(NULL, "\n", &save)) {
                char *f[8];
                if (line[0] == '#' || golden_fields(line, f, 8) < 7 || strcmp(f[0], big_model.name) != 0)
                    continue;
                if (exact && strcmp(f[1], "france") != 0) continue;
                check_row(m, f, exact, N_GEN_BIG, exact ? 1 : N_GEN_BIG);
                rows++;
            }
            /* the weights are mapped, not copied: anonymous memory grows by the KV,
             * scratch and tables only (the file is 600 MiB) */
            long anon1 = proc_kib("RssAnon");
            if (rc == 0 && anon0 >= 0 && anon1 >= 0) {
                CHECK_MSG(anon1 - anon0 < 75 * 1024,
                          "%s: anonymous memory grew by %ld KiB (a copy of the weights?)",
                          exact ? "exact" : "default", anon1 - anon0);
                fprintf(stderr, "  llama1b %s: RssAnon +%ld MiB over the run (the 609 MiB file is mapped)\n",
                        exact ? "exact" : "default", (anon1 - anon0) / 1024);
            }
            free(copy);
            eng_model_free(m);
        }
        CHECK_MSG(rows == 4, "%d llama1b golden rows run, want 3 default + 1 exact", rows);
    }
    unlink(path);
    free(idx);
    rmdir(dir);
}

void test_archs(void) {
    CHECK_CASE(files) test_files();
    CHECK_CASE(llama_cpp) test_golden(0);
    CHECK_CASE(exact) test_golden(1);
    CHECK_CASE(big) test_big();
}
