/* tests/test_synth_cli.c: bin/cachet-synth end to end as a subprocess
 * (presets, overrides, bad options, write failures, determinism) and the
 * writer's gemma3 files: GGUF layout, shape, SentencePiece vocabulary, chat
 * template, and the engine refusing the architecture cleanly while it has no
 * gemma3 forward pass. Presets are written shrunk (few layers, small vocab)
 * to stay fast; their full parameter counts are checked by arithmetic. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/chat.h"
#include "../engine/engine.h"
#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "../engine/tokenizer.h"
#include "check.h"
#include "proc.h"
#include "synth.h"

/* Runs `cachet-synth ARGS` (printf-style shell text). Caller frees. */
static proc_result synth_cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static proc_result synth_cli(const char *fmt, ...) {
    char args[1024], cmd[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s/cachet-synth' %s", proc_bin_dir(), args);
    return proc_run(cmd);
}

/* Entries in dir other than . and .. (leftover temporary files show here). */
static int dir_entries(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    proc_result r = proc_run(cmd);
    int n = r.status == 0 && r.out ? (int)strtol(r.out, NULL, 10) : -1;
    proc_result_free(&r);
    return n;
}

static int read_shape(const char *path, eng_model_shape *sh) {
    util_err err;
    int rc = eng_model_shape_read(path, sh, &err);
    CHECK_MSG(rc == 0, "shape of '%s': %s", path, rc ? err.msg : "");
    return rc;
}

static uint32_t key_u32(const eng_gguf *g, const char *key) {
    uint32_t v = 0;
    util_err err;
    CHECK_MSG(eng_gguf_get_u32(g, key, &v, &err) == 0, "key '%s' missing", key);
    return v;
}

/* --- the command line ------------------------------------------------------ */

/* cachet bench on the shrunk Q4_K_M file reports the tensor types it ran: 8
 * layers of 7 matrices, 4 of them more-bits (attn_v and ffn_down in q6_K), the
 * q6_K embedding, the f32 norms. */
static void check_bench_types(const char *path) {
    proc_result r = proc_runf("'%s/cachet' bench --model '%s' --prompt-tokens 8 --gen-tokens 2 --reps 1 "
                              "--no-llama --threads 1 --json",
                              proc_bin_dir(), path);
    cJSON *j = r.status == 0 && r.out ? cJSON_Parse(r.out) : NULL;
    const cJSON *ty = cJSON_GetObjectItem(j, "tensor_types");
    CHECK_MSG(cJSON_IsArray(ty), "bench --json: %d %s", r.status, r.err ? r.err : "");
    int q4k = -1, q6k = -1, f32 = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, ty) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
        int n = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tensors"));
        if (name && !strcmp(name, "q4_K")) q4k = n;
        if (name && !strcmp(name, "q6_K")) q6k = n;
        if (name && !strcmp(name, "f32")) f32 = n;
    }
    CHECK_MSG(q4k == 8 * 7 - 8 && q6k == 8 + 1 && f32 == 2 * 8 + 1, "bench types: q4_K %d, q6_K %d, f32 %d",
              q4k, q6k, f32);
    cJSON_Delete(j);
    proc_result_free(&r);
    r = proc_runf(
        "'%s/cachet' bench --model '%s' --prompt-tokens 8 --gen-tokens 2 --reps 1 --no-llama --threads 1",
        proc_bin_dir(), path);
    CHECK_MSG(r.status == 0 && r.out && strstr(r.out, "tensor types: q4_K x48"), "bench table: %s",
              r.out ? r.out : "");
    proc_result_free(&r);
}

static void test_presets(const char *dir) {
    char out[512];
    snprintf(out, sizeof out, "%s/p.gguf", dir);
    eng_model_shape sh;

    /* tiny = synth_defaults; the line names path, arch, parameters, bytes, seconds */
    proc_result r = synth_cli("-o '%s'", out);
    CHECK_MSG(r.status == 0, "tiny: exit %d: %s", r.status, r.err ? r.err : "");
    synth_params d = synth_defaults();
    CHECK_EQ_INT(synth_param_count(&d), 94528);
    CHECK(r.out && strstr(r.out, out) && strstr(r.out, "llama") && strstr(r.out, "94,528 parameters") &&
          strstr(r.out, " bytes") && strstr(r.out, " s\n"));
    CHECK(r.out && strchr(r.out, '\n') == r.out + strlen(r.out) - 1); /* one line */
    proc_result_free(&r);
    if (!read_shape(out, &sh))
        CHECK(sh.n_layer == 2 && sh.n_embd == 64 && sh.n_head == 4 && sh.n_kv_head == 2 && sh.n_ff == 128);

    /* the presets' full sizes, by arithmetic (reference doc section 5) */
    synth_params p = synth_defaults();
    p.n_layer = 30, p.n_embd = 576, p.n_head = 9, p.n_kv_head = 3, p.n_ff = 1536, p.n_vocab = 49152;
    CHECK_EQ_INT(synth_param_count(&p), 134515008);
    p = synth_defaults();
    p.arch = SYNTH_ARCH_GEMMA3;
    p.n_layer = 18, p.n_embd = 640, p.n_head = 4, p.n_kv_head = 1, p.head_dim = 256, p.n_ff = 2048;
    p.n_vocab = 262144;
    CHECK_EQ_INT(synth_param_count(&p), 268098176);

    /* presets shrunk by overrides, which win wherever they stand */
    r = synth_cli("--layers 1 --vocab 300 --preset smollm2-135m -o '%s'", out);
    CHECK_MSG(r.status == 0, "smollm2: exit %d: %s", r.status, r.err ? r.err : "");
    proc_result_free(&r);
    if (!read_shape(out, &sh))
        CHECK(sh.n_layer == 1 && sh.n_embd == 576 && sh.n_head == 9 && sh.n_kv_head == 3 &&
              sh.head_dim == 64 && sh.n_ff == 1536);
    eng_gguf *g = NULL;
    util_err err;
    if (eng_gguf_open(&g, out, &err) == 0) {
        CHECK_EQ_INT(key_u32(g, "llama.context_length"), 8192);
        const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "token_embd.weight");
        CHECK(t && t->ne[1] == 300 && t->type == ENG_TYPE_Q8_0);
        t = eng_gguf_find_tensor(g, "blk.0.ffn_up.weight");
        CHECK(t && t->type == ENG_TYPE_Q4_1);
        CHECK(eng_gguf_find_tensor(g, "output.weight") == NULL);
        eng_gguf_free(g);
    }

    r = synth_cli("--preset llama-1b --layers 1 --ff 256 --vocab 300 --type q8_0 --output-type f16 -o '%s'",
                  out);
    CHECK_MSG(r.status == 0, "llama-1b: exit %d: %s", r.status, r.err ? r.err : "");
    proc_result_free(&r);
    if (!read_shape(out, &sh))
        CHECK(sh.n_layer == 1 && sh.n_embd == 2048 && sh.n_head == 32 && sh.n_kv_head == 8 &&
              sh.head_dim == 64 && sh.n_ff == 256);
    if (eng_gguf_open(&g, out, &err) == 0) {
        const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "output.weight");
        CHECK(t && t->type == ENG_TYPE_F16); /* --output-type implies untied */
        t = eng_gguf_find_tensor(g, "blk.0.attn_k.weight");
        CHECK(t && t->type == ENG_TYPE_Q8_0 && t->ne[1] == 512);
        eng_gguf_free(g);
    }

    /* the 1B presets in llama-quantize's mixes, shrunk: 8 layers, so 0, 3, 6, 7
     * are Q4_K_M's more-bits layers */
    static const struct {
        const char *preset;
        uint32_t embd, layer, v0, v1;
    } mixes[] = {
        {"llama-1b-q4_k_m", ENG_TYPE_Q6_K, ENG_TYPE_Q4_K, ENG_TYPE_Q6_K, ENG_TYPE_Q4_K},
        {"llama-1b-q4_0", ENG_TYPE_Q6_K, ENG_TYPE_Q4_0, ENG_TYPE_Q4_0, ENG_TYPE_Q4_0},
        {"llama-1b-q8_0", ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, ENG_TYPE_Q8_0},
    };
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++) {
        r = synth_cli("--preset %s --layers 8 --embd 256 --heads 4 --kv-heads 2 --ff 512 --vocab 300 -o '%s'",
                      mixes[i].preset, out);
        CHECK_MSG(r.status == 0, "%s: exit %d: %s", mixes[i].preset, r.status, r.err ? r.err : "");
        proc_result_free(&r);
        if (eng_gguf_open(&g, out, &err) == 0) {
            const eng_gguf_tensor *e = eng_gguf_find_tensor(g, "token_embd.weight");
            const eng_gguf_tensor *q = eng_gguf_find_tensor(g, "blk.0.attn_q.weight");
            const eng_gguf_tensor *v0 = eng_gguf_find_tensor(g, "blk.0.attn_v.weight");
            const eng_gguf_tensor *v1 = eng_gguf_find_tensor(g, "blk.1.ffn_down.weight");
            const eng_gguf_tensor *v7 = eng_gguf_find_tensor(g, "blk.7.ffn_down.weight");
            CHECK_MSG(e && q && v0 && v1 && v7 && e->type == mixes[i].embd && q->type == mixes[i].layer &&
                          v0->type == mixes[i].v0 && v1->type == mixes[i].v1 && v7->type == mixes[i].v0,
                      "%s: tensor types", mixes[i].preset);
            CHECK(eng_gguf_find_tensor(g, "output.weight") == NULL);
            eng_gguf_free(g);
        }
        if (i == 0) check_bench_types(out);
    }

    r = synth_cli("--preset gemma3-270m --layers 2 --vocab 1000 --swa-window 64 -o '%s'", out);
    CHECK_MSG(r.status == 0, "gemma3-270m: exit %d: %s", r.status, r.err ? r.err : "");
    CHECK(r.out && strstr(r.out, "gemma3"));
    proc_result_free(&r);
    if (!read_shape(out, &sh))
        CHECK(sh.n_layer == 2 && sh.n_embd == 640 && sh.n_head == 4 && sh.n_kv_head == 1 &&
              sh.head_dim == 256 && sh.n_ff == 2048);
    if (eng_gguf_open(&g, out, &err) == 0) {
        CHECK_EQ_INT(key_u32(g, "gemma3.attention.sliding_window"), 64);
        CHECK_EQ_INT(key_u32(g, "gemma3.context_length"), 32768);
        const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "blk.1.attn_q.weight");
        CHECK(t && t->type == ENG_TYPE_Q5_0 && t->ne[0] == 640 && t->ne[1] == 1024);
        eng_gguf_free(g);
    }

    r = synth_cli("--help");
    CHECK(r.status == 0 && r.out && strstr(r.out, "usage: cachet-synth") && strstr(r.out, "gemma3-270m"));
    proc_result_free(&r);
    unlink(out);
}

static void test_bad_options(const char *dir) {
    static const char *const cases[] = {
        "--bogus",                             /* unknown option */
        "--layers",                            /* missing value */
        "--layers 0",                          /* out of range */
        "--layers 2x",                         /* not a number */
        "--type q2_k",                         /* no quantizer */
        "--embd-type iq4_nl",                  /* no quantizer */
        "--arch mamba",                        /* unknown arch */
        "--preset llama-70b",                  /* unknown preset */
        "--preset llama-1b-q2_k",              /* unknown mix */
        "--heads 3 --kv-heads 2",              /* kv heads do not divide */
        "--embd 66 --heads 4",                 /* embd not a multiple of heads */
        "--type q4_k",                         /* 64-wide rows cannot hold 256-blocks */
        "--ff 100",                            /* not a multiple of 32 for q4_1 */
        "--vocab 100",                         /* below the minimum */
        "--arch gemma3 --vocab 262",           /* below gemma3's minimum */
        "--head-dim 3 --heads 1 --kv-heads 1", /* odd head dim */
        "--seed -1",                           /* not unsigned */
        "--rope-base 0",                       /* not positive */
        "extra",                               /* stray argument */
    };
    char out[512];
    snprintf(out, sizeof out, "%s/bad.gguf", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        proc_result r = synth_cli("%s -o '%s'", cases[i], out);
        CHECK_MSG(r.status == 2 && r.err && strstr(r.err, "cachet-synth: "), "'%s': exit %d, stderr '%s'",
                  cases[i], r.status, r.err ? r.err : "");
        CHECK_MSG(access(out, F_OK) != 0, "'%s' left a file", cases[i]);
        proc_result_free(&r);
    }
    proc_result r = synth_cli("--layers 1"); /* no -o */
    CHECK(r.status == 2 && r.err && strstr(r.err, "-o PATH is required"));
    proc_result_free(&r);
    CHECK_EQ_INT(dir_entries(dir), 0);
}

static void test_write_failures(const char *dir) {
    char file[512], out[600];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    /* a path under a regular file cannot be created, even by root */
    snprintf(out, sizeof out, "%s/x.gguf", file);
    proc_result r = synth_cli("-o '%s'", out);
    CHECK_MSG(r.status == 1 && r.err && strstr(r.err, "cannot create") && strstr(r.err, out),
              "unwritable: exit %d, stderr '%s'", r.status, r.err ? r.err : "");
    proc_result_free(&r);
    unlink(file);

    /* a full disk, as a 64 KiB file size limit (SIGXFSZ ignored, so the write
     * fails with EFBIG): exit 1, nothing left, an old file kept */
    snprintf(out, sizeof out, "%s/full.gguf", dir);
    f = fopen(out, "w");
    if (f) {
        fputs("old", f);
        fclose(f);
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "trap '' XFSZ; ulimit -f 64; exec '%s/cachet-synth' --embd 256 --ff 512 -o '%s'", proc_bin_dir(),
             out);
    r = proc_run(cmd);
    CHECK_MSG(r.status == 1 && r.err && strstr(r.err, "writing") && strstr(r.err, out),
              "full disk: exit %d, stderr '%s'", r.status, r.err ? r.err : "");
    proc_result_free(&r);
    struct stat st;
    CHECK(stat(out, &st) == 0 && st.st_size == 3);
    unlink(out);
    CHECK_EQ_INT(dir_entries(dir), 0);
}

static void test_determinism(const char *dir) {
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/d1.gguf", dir);
    snprintf(b, sizeof b, "%s/d2.gguf", dir);
    const char *shape = "--embd 256 --ff 512 --heads 4 --kv-heads 1 --type q4_k --untied --output-type q6_k";
    proc_result r1 = synth_cli("%s --threads 1 -o '%s'", shape, a);
    proc_result r2 = synth_cli("%s --threads 3 -o '%s'", shape, b);
    CHECK(r1.status == 0 && r2.status == 0);
    CHECK_MSG(proc_files_equal(a, b), "two runs (1 and 3 threads) wrote different bytes");
    proc_result_free(&r1);
    proc_result_free(&r2);
    r1 = synth_cli("%s --seed 7 -o '%s'", shape, b);
    CHECK(r1.status == 0 && !proc_files_equal(a, b));
    proc_result_free(&r1);
    /* the CLI's tiny preset is the library's defaults, byte for byte */
    synth_params p = synth_defaults();
    util_err err;
    r1 = synth_cli("--preset tiny -o '%s'", a);
    CHECK(r1.status == 0 && synth_write(b, &p, &err) == 0 && proc_files_equal(a, b));
    proc_result_free(&r1);
    unlink(a);
    unlink(b);
}

/* --- gemma3 files -------------------------------------------------------------- */

static void check_gemma_gguf(const char *path, const synth_params *p) {
    eng_gguf *g = NULL;
    util_err err;
    int rc = eng_gguf_open(&g, path, &err);
    CHECK_MSG(rc == 0, "gemma3 gguf open: %s", rc ? err.msg : "");
    if (!g) return;
    const char *s;
    size_t n;
    CHECK(eng_gguf_get_str(g, "general.architecture", &s, &n, &err) == 0 && n == 6 &&
          !memcmp(s, "gemma3", 6));
    CHECK_EQ_INT(eng_gguf_tensor_count(g), synth_tensor_count(p));
    CHECK_EQ_INT(synth_tensor_count(p), 2 + 13 * p->n_layer);
    CHECK_EQ_INT(key_u32(g, "gemma3.embedding_length"), p->n_embd);
    CHECK_EQ_INT(key_u32(g, "gemma3.block_count"), p->n_layer);
    CHECK_EQ_INT(key_u32(g, "gemma3.feed_forward_length"), p->n_ff);
    CHECK_EQ_INT(key_u32(g, "gemma3.attention.head_count"), p->n_head);
    CHECK_EQ_INT(key_u32(g, "gemma3.attention.head_count_kv"), p->n_kv_head);
    CHECK_EQ_INT(key_u32(g, "gemma3.attention.key_length"), p->head_dim);
    CHECK_EQ_INT(key_u32(g, "gemma3.attention.value_length"), p->head_dim);
    CHECK_EQ_INT(key_u32(g, "gemma3.attention.sliding_window"), p->swa_window);
    CHECK_EQ_INT(key_u32(g, "gemma3.context_length"), p->n_ctx);
    float eps = 0, base = 0;
    CHECK(eng_gguf_get_f32(g, "gemma3.attention.layer_norm_rms_epsilon", &eps, &err) == 0 && eps == 1e-6f);
    CHECK(eng_gguf_get_f32(g, "gemma3.rope.freq_base", &base, &err) == 0 && base == p->rope_base);
    static const struct {
        const char *name;
        int cols; /* 0 embd, 1 head dim, 2 q width, 3 kv width, 4 ff */
        int rows; /* -1 vector, else as cols */
    } want[] = {
        {"attn_norm", 0, -1},     {"attn_q", 0, 2},
        {"attn_k", 0, 3},         {"attn_v", 0, 3},
        {"attn_q_norm", 1, -1},   {"attn_k_norm", 1, -1},
        {"attn_output", 2, 0},    {"post_attention_norm", 0, -1},
        {"ffn_norm", 0, -1},      {"ffn_gate", 0, 4},
        {"ffn_up", 0, 4},         {"ffn_down", 4, 0},
        {"post_ffw_norm", 0, -1},
    };
    int64_t dims[5] = {p->n_embd, p->head_dim, (int64_t)p->n_head * p->head_dim,
                       (int64_t)p->n_kv_head * p->head_dim, p->n_ff};
    for (int il = 0; il < p->n_layer; il++) {
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            char name[96];
            snprintf(name, sizeof name, "blk.%d.%s.weight", il, want[i].name);
            const eng_gguf_tensor *t = eng_gguf_find_tensor(g, name);
            int ok = t && t->ne[0] == dims[want[i].cols];
            if (ok && want[i].rows < 0) {
                /* stored as 1 + w: the values sit near 1 (reference doc section 4) */
                ok = t->n_dims == 1 && t->type == ENG_TYPE_F32;
                const float *v = t->data;
                double mean = 0;
                for (int64_t k = 0; ok && k < t->ne[0]; k++) mean += v[k];
                ok = ok && mean / (double)t->ne[0] > 0.95 && mean / (double)t->ne[0] < 1.05;
            } else if (ok) {
                ok = t->ne[1] == dims[want[i].rows] && t->type == p->wtype;
            }
            CHECK_MSG(ok, "gemma3 tensor '%s' missing or mis-shaped", name);
        }
    }
    const eng_gguf_tensor *t = eng_gguf_find_tensor(g, "token_embd.weight");
    CHECK(t && t->ne[0] == p->n_embd && t->ne[1] == p->n_vocab && t->type == p->etype);
    CHECK(eng_gguf_find_tensor(g, "output.weight") == NULL);

    /* the vocabulary: Gemma's specials, byte fallback, merges, round trip */
    eng_tokenizer *tok = NULL;
    rc = eng_tokenizer_new(&tok, g, &err);
    CHECK_MSG(rc == 0, "gemma3 tokenizer: %s", rc ? err.msg : "");
    if (tok) {
        CHECK_EQ_INT(eng_tokenizer_n_vocab(tok), p->n_vocab);
        CHECK_EQ_INT(eng_tokenizer_bos(tok), 2);
        CHECK_EQ_INT(eng_tokenizer_eos(tok), 1);
        CHECK(eng_tokenizer_add_bos(tok));
        CHECK(eng_tokenizer_is_eog(tok, 1) && eng_tokenizer_is_eog(tok, 5));
        CHECK(eng_tokenizer_warning(tok) == NULL);
        int32_t *ids = NULL;
        size_t nid = 0;
        CHECK(eng_tokenize(tok, "abc", 3, 1, 0, &ids, &nid, &err) == 0);
        CHECK(nid == 2 && ids[0] == 2 && ids[1] == eng_tokenizer_find(tok, "abc", 3)); /* bos, one merge */
        free(ids);
        CHECK(eng_tokenize(tok, " the", 4, 0, 0, &ids, &nid, &err) == 0);
        CHECK(nid == 1 && ids[0] == eng_tokenizer_find(tok, "\xe2\x96\x81the", 6));
        free(ids);
        CHECK(eng_tokenize(tok, "\xc3\xa9", 2, 0, 0, &ids, &nid, &err) == 0);
        CHECK(nid == 2 && ids[0] == 6 + 0xC3 && ids[1] == 6 + 0xA9); /* byte fallback */
        free(ids);
        const char *chat = "<start_of_turn>user\nhi<end_of_turn>";
        CHECK(eng_tokenize(tok, chat, strlen(chat), 0, 1, &ids, &nid, &err) == 0);
        CHECK(nid >= 3 && ids[0] == 4 && ids[nid - 1] == 5);
        char *back = NULL;
        size_t blen = 0;
        CHECK(eng_detokenize(tok, ids, nid, 1, &back, &blen, &err) == 0);
        CHECK(back && blen == strlen(chat) && memcmp(back, chat, blen) == 0);
        free(back);
        free(ids);
        const char *text = "Hello, world!\n\ttabs \xc3\xa9t\xc3\xa9 \xe2\x82\xac 123  the abc\x01\xff";
        CHECK(eng_tokenize(tok, text, strlen(text), 1, 0, &ids, &nid, &err) == 0);
        back = NULL;
        CHECK(eng_detokenize(tok, ids, nid, 0, &back, &blen, &err) == 0);
        CHECK_MSG(back && blen == strlen(text) && memcmp(back, text, blen) == 0, "gemma3 round trip: '%s'",
                  back ? back : "");
        free(back);
        free(ids);
        eng_tokenizer_free(tok);
    }
    eng_chat *c = NULL;
    CHECK(eng_chat_new(&c, g, &err) == 0 && c && eng_chat_get_format(c) == ENG_CHAT_GEMMA);
    eng_chat_free(c);
    eng_gguf_free(g);
}

/* The engine has no gemma3 forward pass yet: opening must fail with the
 * unsupported-architecture message. Once it has one, the file must run. */
static void check_gemma_open(const char *path, const synth_params *p) {
    eng_model *m = NULL;
    eng_model_params mp = {.n_threads = 1, .no_disk_cache = 1};
    util_err err;
    util_err_clear(&err);
    int rc = eng_model_open(&m, path, &mp, &err);
    if (rc) {
        CHECK_EQ_INT(rc, UTIL_EUNSUPPORTED);
        CHECK_MSG(strstr(err.msg, "architecture 'gemma3' is not supported") != NULL, "gemma3 open: %s",
                  err.msg);
        CHECK(m == NULL);
        return;
    }
    eng_seq *s = NULL;
    float *lg = malloc((size_t)p->n_vocab * sizeof *lg);
    int32_t toks[] = {2, 4, 300, 301, 302, 5};
    rc = eng_seq_new(&s, m, 64, &err);
    if (!rc) rc = eng_seq_eval(s, toks, 6, lg, &err);
    CHECK_MSG(rc == 0, "gemma3 eval: %s", rc ? err.msg : "");
    int finite = rc == 0;
    for (int i = 0; finite && i < p->n_vocab; i++) finite = isfinite(lg[i]) != 0;
    CHECK(finite);
    free(lg);
    eng_seq_free(s);
    eng_model_free(m);
}

static void test_gemma3(const char *dir) {
    char path[512], other[512];
    snprintf(path, sizeof path, "%s/g.gguf", dir);
    snprintf(other, sizeof other, "%s/g2.gguf", dir);
    synth_params p = synth_defaults();
    p.arch = SYNTH_ARCH_GEMMA3;
    p.n_layer = 2, p.n_embd = 128, p.n_head = 4, p.n_kv_head = 1, p.head_dim = 64, p.n_ff = 192;
    p.n_vocab = 400, p.rope_base = 1e6f, p.swa_window = 16, p.n_ctx = 4096, p.wtype = ENG_TYPE_Q8_0;
    util_err err;
    int rc = synth_write(path, &p, &err);
    CHECK_MSG(rc == 0, "gemma3 write: %s", rc ? err.msg : "");
    if (rc) return;
    check_gemma_gguf(path, &p);
    eng_model_shape sh;
    if (!read_shape(path, &sh))
        CHECK(sh.n_layer == 2 && sh.n_embd == 128 && sh.n_head == 4 && sh.n_kv_head == 1 &&
              sh.head_dim == 64 && sh.n_ff == 192);
    check_gemma_open(path, &p);
    p.n_threads = 2;
    CHECK(synth_write(other, &p, &err) == 0 && proc_files_equal(path, other));
    unlink(other);

    /* the smallest vocabulary (specials and bytes only) still round-trips */
    p.n_vocab = SYNTH_MIN_VOCAB_GEMMA3;
    p.head_dim = 0; /* 128 / 4 */
    rc = synth_write(path, &p, &err);
    CHECK_MSG(rc == 0, "gemma3 min vocab: %s", rc ? err.msg : "");
    eng_gguf *g = NULL;
    eng_tokenizer *tok = NULL;
    if (!rc && eng_gguf_open(&g, path, &err) == 0) {
        CHECK_EQ_INT(key_u32(g, "gemma3.attention.key_length"), 32);
        if (eng_tokenizer_new(&tok, g, &err) == 0) {
            const char *text = "any text \xe2\x82\xac";
            int32_t *ids = NULL;
            size_t n = 0;
            char *back = NULL;
            size_t blen = 0;
            CHECK(eng_tokenize(tok, text, strlen(text), 0, 0, &ids, &n, &err) == 0 && n == strlen(text));
            CHECK(eng_detokenize(tok, ids, n, 0, &back, &blen, &err) == 0 && back && !strcmp(back, text));
            free(back);
            free(ids);
            eng_tokenizer_free(tok);
        } else {
            CHECK_MSG(0, "gemma3 min vocab tokenizer: %s", err.msg);
        }
        eng_gguf_free(g);
    }
    p.n_vocab = SYNTH_MIN_VOCAB_GEMMA3 - 1;
    CHECK_EQ_INT(synth_write(other, &p, &err), UTIL_EINVAL);
    unlink(path);
}

void test_synth_cli(void) {
    char dir[] = "/tmp/cachet-synth-cli-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    CHECK_CASE(presets) test_presets(dir);
    CHECK_CASE(bad_options) test_bad_options(dir);
    CHECK_CASE(write_failures) test_write_failures(dir);
    CHECK_CASE(determinism) test_determinism(dir);
    CHECK_CASE(gemma3) test_gemma3(dir);
    if (rmdir(dir) != 0) CHECK_MSG(0, "could not remove %s (files left behind)", dir);
}
