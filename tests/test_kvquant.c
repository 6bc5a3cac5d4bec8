/* tests/test_kvquant.c: the quantized KV cache (--kv-type q8_0 / q4_0, K and V
 * apart): the KV quantizers against ggml's formulas, every attention kernel
 * (AVX2, AVX-512) against the scalar reference and that against float64 over
 * dequantized rows, batch invariance per type, and on the real model the page
 * sizes, cache hits bit-identical to cold runs per type (memory and disk), a
 * disk directory shared by an f16 and a q8_0 cache never crossing types, and
 * the quality cost (mean KL, top-1 agreement vs f16) on the golden prompts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../engine/cpu/cpu_features.h"
#include "../engine/engine.h"
#include "../engine/quant.h"
#include "check.h"
#include "golden_io.h"
#include "helpers.h"
#include "proc.h"

static const uint32_t k_types[] = {ENG_TYPE_F16, ENG_TYPE_Q8_0, ENG_TYPE_Q4_0};
enum { N_TYPES = 3 };

/* --- quantizers ------------------------------------------------------------ */

static void test_quantizers(void) {
    const eng_type_traits *q8 = eng_type_get(ENG_TYPE_Q8_0), *q4 = eng_type_get(ENG_TYPE_Q4_0);
    CHECK(q8 && q8->from_float && q4 && q4->from_float);
    if (!q8 || !q4 || !q4->from_float) return;
    /* q4_0 by hand: the value of largest magnitude, -8, gives d = 1, and every
     * integer in [-8, 7] comes back exactly; 7.6 rounds to the nibble 15 (7) */
    float x[32], y[32];
    for (int i = 0; i < 32; i++) x[i] = (float)(i % 16 - 8);
    x[31] = 7.6f;
    uint8_t blk[18];
    q4->from_float(x, blk, 32);
    CHECK_EQ_INT(blk[0] | blk[1] << 8, eng_f32_to_f16(1.0f));
    q4->to_float(blk, y, 32);
    int exact = 1;
    for (int i = 0; i < 31; i++) exact &= y[i] == x[i];
    CHECK_MSG(exact && y[31] == 7.0f, "q4_0 round trip of integers");
    /* a positive extreme maps to -8 too: d = -max / 8 */
    for (int i = 0; i < 32; i++) x[i] = (float)i / 31.0f * 4.0f;
    q4->from_float(x, blk, 32);
    q4->to_float(blk, y, 32);
    CHECK(y[31] == 4.0f && eng_f16_to_f32((uint16_t)(blk[0] | blk[1] << 8)) == -0.5f);
    /* all zero: d = 0 and zeros back, no division by zero */
    memset(x, 0, sizeof x);
    q4->from_float(x, blk, 32);
    q4->to_float(blk, y, 32);
    CHECK(y[0] == 0.0f && y[31] == 0.0f);

    /* round trips on random rows, against the bound per block */
    uint64_t rs = 7;
    enum { N = 32 * 40 };
    float *src = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    uint8_t *buf = malloc(eng_type_row_size(ENG_TYPE_Q8_0, N));
    for (int i = 0; i < N; i++) src[i] = 3.0f * th_rng_unit(&rs) * (i % 64 < 32 ? 1.0f : 0.01f);
    const uint32_t qt[2] = {ENG_TYPE_Q8_0, ENG_TYPE_Q4_0};
    for (int k = 0; k < 2; k++) {
        const eng_type_traits *t = eng_type_get(qt[k]);
        t->from_float(src, buf, N);
        t->to_float(buf, back, N);
        double worst = 0;
        for (int b = 0; b < N / 32; b++) {
            float amax = 0;
            for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(src[32 * b + i]));
            /* half a step (q4_0: a whole one where +max clamps to nibble 15), plus
             * the f16 rounding of d (2^-11 relative) times the largest level */
            const double bound = qt[k] == ENG_TYPE_Q8_0 ? amax / 127.0 * (0.5 + 127.0 / 2048)
                                                        : amax / 8.0 * (1.0 + 8.0 / 2048);
            for (int i = 0; i < 32; i++) {
                double e = fabs((double)back[32 * b + i] - (double)src[32 * b + i]);
                worst = fmax(worst, e / (bound + 1e-30));
            }
        }
        CHECK_MSG(worst <= 1.0, "%s round trip: error %.3f of its bound", t->name, worst);
    }
    free(src), free(back), free(buf);

    /* the public names and sizes */
    uint32_t id = 0;
    CHECK(eng_kv_type_parse(&id, "q8_0", NULL) == 0 && id == ENG_TYPE_Q8_0);
    CHECK(eng_kv_type_parse(&id, "q4_0", NULL) == 0 && id == ENG_TYPE_Q4_0);
    CHECK(eng_kv_type_parse(&id, "f16", NULL) == 0 && id == ENG_TYPE_F16);
    util_err err;
    CHECK(eng_kv_type_parse(&id, "q4_1", &err) == UTIL_EINVAL && strstr(err.msg, "'q4_1'"));
    CHECK(eng_kv_type_parse(&id, "f32", &err) == UTIL_EINVAL);
    CHECK(eng_kv_type_bytes(ENG_TYPE_Q8_0) == 34.0 / 32.0 &&
          eng_kv_type_bytes(ENG_TYPE_Q4_0) == 18.0 / 32.0 && eng_kv_type_bytes(ENG_TYPE_F16) == 2.0 &&
          eng_kv_type_bytes(ENG_TYPE_Q4_1) == 0.0);
    CHECK_EQ_STR(eng_kv_type_name(0), "f16");
    CHECK(eng_kv_type_name(ENG_TYPE_Q5_0) == NULL);
}

/* --- kernels ----------------------------------------------------------------- */

enum { P = 16, L = 2, NPOS = 90, NPAGE = (NPOS + P - 1) / P };

typedef struct shape {
    int n_head, n_kv, hd, window;
} shape;

typedef struct fixture {
    void *pages[NPAGE];
    eng_kv_view kv;
} fixture;

static int fixture_init(fixture *f, int kvd, uint32_t tk, uint32_t tv) {
    eng_kv_view_init(&f->kv, P, L, kvd, tk, tv);
    f->kv.pages = f->pages;
    int ok = 1;
    for (int i = 0; i < NPAGE; i++) {
        f->pages[i] = calloc(eng_kv_page_bytes(&f->kv), 1);
        ok &= f->pages[i] != NULL;
    }
    return ok;
}

static void fixture_free(fixture *f) {
    for (int i = 0; i < NPAGE; i++) free(f->pages[i]);
}

static void attn(eng_backend *be, const fixture *f, const shape *s, const float *q, float *out, int t0,
                 int n) {
    const size_t qd = (size_t)s->n_head * (size_t)s->hd;
    eng_attn_args a = {.out = out + (size_t)t0 * qd,
                       .q = q + (size_t)t0 * qd,
                       .kv = &f->kv,
                       .layer = 1,
                       .n_tok = n,
                       .pos0 = t0,
                       .n_head = s->n_head,
                       .n_kv_head = s->n_kv,
                       .head_dim = s->hd,
                       .scale = 1.0f / sqrtf((float)s->hd),
                       .window = s->window};
    be->ops->attention(be, &a);
}

/* Attention in float64 over the stored rows dequantized by quant.c's to_float:
 * what the scalar kernel must compute (it reads the blocks itself). */
static void attn_f64(const fixture *f, const shape *s, const float *q, double *out) {
    const int hd = s->hd, kvd = s->n_kv * hd;
    float *k = malloc((size_t)NPOS * (size_t)kvd * sizeof(float)),
          *v = malloc((size_t)NPOS * (size_t)kvd * sizeof(float));
    double *sc = malloc(NPOS * sizeof(double));
    for (int p = 0; p < NPOS; p++) {
        eng_type_get(f->kv.type_k)->to_float(eng_kv_k(&f->kv, 1, p), k + (size_t)p * (size_t)kvd, kvd);
        eng_type_get(f->kv.type_v)->to_float(eng_kv_v(&f->kv, 1, p), v + (size_t)p * (size_t)kvd, kvd);
    }
    for (int t = 0; t < NPOS; t++)
        for (int h = 0; h < s->n_head; h++) {
            const int g = h / (s->n_head / s->n_kv);
            const int lo = s->window > 0 && t - s->window + 1 > 0 ? t - s->window + 1 : 0;
            const float *qh = q + ((size_t)t * (size_t)s->n_head + (size_t)h) * (size_t)hd;
            double mx = -INFINITY, sum = 0;
            for (int j = lo; j <= t; j++) {
                double d = 0;
                for (int i = 0; i < hd; i++)
                    d += (double)qh[i] * k[(size_t)j * (size_t)kvd + (size_t)(g * hd + i)];
                sc[j] = d / sqrt((double)hd);
                mx = fmax(mx, sc[j]);
            }
            for (int j = lo; j <= t; j++) sum += sc[j] = exp(sc[j] - mx);
            double *o = out + ((size_t)t * (size_t)s->n_head + (size_t)h) * (size_t)hd;
            for (int i = 0; i < hd; i++) {
                double acc = 0;
                for (int j = lo; j <= t; j++)
                    acc += sc[j] / sum * v[(size_t)j * (size_t)kvd + (size_t)(g * hd + i)];
                o[i] = acc;
            }
        }
    free(k), free(v), free(sc);
}

/* One shape and type pair: stores the same rows through every backend (the
 * pages must be byte-identical), then attention of all positions at once and
 * in uneven chunks (prefill converts rows, single tokens read the blocks:
 * the same bits), against the scalar reference and that against float64. */
static void check_shape(eng_backend **be, int n_be, const shape *s, uint32_t tk, uint32_t tv, uint64_t *rs) {
    const int kvd = s->n_kv * s->hd;
    const size_t qn = (size_t)NPOS * (size_t)s->n_head * (size_t)s->hd, kn = (size_t)NPOS * (size_t)kvd;
    float *k = malloc(kn * sizeof(float)), *v = malloc(kn * sizeof(float)), *q = malloc(qn * sizeof(float));
    float *ref = calloc(qn, sizeof(float)), *o1 = calloc(qn, sizeof(float)), *o2 = calloc(qn, sizeof(float));
    double *f64 = malloc(qn * sizeof(double));
    for (size_t i = 0; i < kn; i++) k[i] = 2.0f * th_rng_unit(rs), v[i] = 2.0f * th_rng_unit(rs);
    for (size_t i = 0; i < qn; i++) q[i] = 3.0f * th_rng_unit(rs);
    fixture f[3];
    const char *tn = eng_type_get(tk)->name, *vn = eng_type_get(tv)->name;
    static const int cuts[] = {0, 1, 2, 17, 18, 33, 50, 79, NPOS};
    for (int b = 0; b < n_be; b++) {
        if (!fixture_init(&f[b], kvd, tk, tv) || be[b]->ops->reserve(be[b], NPOS, NULL)) {
            CHECK_MSG(0, "fixture");
            return;
        }
        for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
            const size_t off = (size_t)cuts[c] * (size_t)kvd;
            be[b]->ops->kv_store(be[b], &f[b].kv, 1, k + off, v + off, cuts[c + 1] - cuts[c], cuts[c]);
        }
    }
    for (int b = 1; b < n_be; b++) {
        int same = 1;
        for (int i = 0; i < NPAGE; i++)
            same &= memcmp(f[0].pages[i], f[b].pages[i], eng_kv_page_bytes(&f[0].kv)) == 0;
        CHECK_MSG(same, "%s kv_store %s/%s: pages differ from the reference's", be[b]->ops->name, tn, vn);
    }
    /* the reference against float64: float sums over head_dim and keys, ~1e-6 */
    attn(be[0], &f[0], s, q, ref, 0, NPOS);
    attn_f64(&f[0], s, q, f64);
    double e64 = 0;
    for (size_t i = 0; i < qn; i++) e64 = fmax(e64, fabs((double)ref[i] - f64[i]));
    CHECK_MSG(e64 <= 2e-5, "scalar attention %s/%s hd %d: %.3g from float64", tn, vn, s->hd, e64);
    for (int b = 1; b < n_be; b++) {
        attn(be[b], &f[b], s, q, o1, 0, NPOS);
        double err = 0;
        for (size_t i = 0; i < qn; i++) err = fmax(err, fabs((double)o1[i] - (double)ref[i]));
        /* as tests/test_kernels.c: fma, the exp polynomial and other summation
         * orders move an output by a few ulp of the values (|v| <= 2) */
        CHECK_MSG(err <= 2e-5, "%s attention %s/%s hd %d window %d: max error %.3g", be[b]->ops->name, tn, vn,
                  s->hd, s->window, err);
        memset(o2, 0, qn * sizeof(float));
        for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++)
            attn(be[b], &f[b], s, q, o2, cuts[c], cuts[c + 1] - cuts[c]);
        CHECK_MSG(memcmp(o1, o2, qn * sizeof(float)) == 0, "%s attention %s/%s hd %d depends on chunking",
                  be[b]->ops->name, tn, vn, s->hd);
    }
    for (int b = 0; b < n_be; b++) fixture_free(&f[b]);
    free(k), free(v), free(q), free(ref), free(o1), free(o2), free(f64);
}

static void test_kernels(void) {
    eng_backend *be[3] = {NULL, NULL, NULL};
    int n = 0;
    util_err err;
    const int levels[] = {ENG_SIMD_SCALAR, ENG_SIMD_AVX2, ENG_SIMD_AVX512};
    const int have = (int)eng_cpu_detect();
    for (int l = 0; l < 3 && levels[l] <= have; l++) {
        CHECK(eng_backend_cpu_new_level(&be[n], 2, levels[l], &err) == 0);
        if (be[n]) CHECK(be[n++]->ops->kv_quant == 1);
    }
    if (n < 3) CHECK_SKIP("this CPU lacks %s: only the levels it has are tested", n < 2 ? "AVX2" : "AVX-512");
    /* head dims 64/128/256 take AVX-512's kernel, 32 and 96 AVX2's on both levels;
     * GQA, MQA, MHA; windows inside a page, across pages and none */
    static const shape shapes[] = {{4, 2, 64, 0},   {4, 1, 256, 0}, {8, 8, 64, 5},
                                   {2, 1, 128, 40}, {6, 2, 32, 0},  {3, 1, 96, 17}};
    uint64_t rs = 42;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int a = 0; a < N_TYPES; a++)
            for (int b = 0; b < N_TYPES; b++) {
                if (a == 0 && b == 0 && si > 1) continue; /* f16/f16: tests/test_kernels.c */
                check_shape(be, n, &shapes[si], k_types[a], k_types[b], &rs);
            }
    for (int i = 0; i < n; i++) eng_backend_free(be[i]);
}

/* --- the model ---------------------------------------------------------------- */

static const char *text_a =
    "<|im_start|>system\nYou are a careful assistant. Answer briefly and cite the file you used. "
    "Never invent paths. Prefer short sentences.<|im_end|>\n<|im_start|>user\nWhat does the "
    "function parse_header in src/http.c return when the input is empty?<|im_end|>\n"
    "<|im_start|>assistant\n";

static eng_model *open_typed(uint32_t tk, uint32_t tv, int no_cache, const char *dir) {
    eng_model_params mp = {.n_threads = 2,
                           .kv_type_k = tk,
                           .kv_type_v = tv,
                           .no_cache = no_cache,
                           .no_disk_cache = dir == NULL,
                           .kv_dir = dir};
    return th_open_model_with(NULL, &mp);
}

static float *run(eng_model *m, const int32_t *toks, int n, int *mem, int *disk) {
    eng_seq *s = NULL;
    util_err err;
    float *lg = malloc((size_t)eng_model_n_vocab(m) * sizeof *lg);
    int rc = eng_seq_new(&s, m, 1024, &err);
    if (!rc) rc = eng_seq_set_tokens(s, toks, n, lg, mem, disk, &err);
    CHECK_MSG(rc == 0, "set_tokens: %s", rc ? err.msg : "");
    eng_seq_free(s);
    return lg;
}

static int same(const eng_model *m, const float *a, const float *b) {
    return a && b && memcmp(a, b, (size_t)eng_model_n_vocab(m) * sizeof *a) == 0;
}

/* Bytes per token and per page in whole blocks; hits equal cold runs per type. */
static void test_model(void) {
    static const struct {
        uint32_t tk, tv;
        size_t bpt; /* SmolLM2-135M: 30 layers x 192 K or V values per token */
    } cases[] = {{ENG_TYPE_F16, ENG_TYPE_F16, 30 * 192 * 2 * 2},
                 {ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 30 * 6 * 34 * 2},
                 {ENG_TYPE_Q4_0, ENG_TYPE_Q4_0, 30 * 6 * 18 * 2},
                 {ENG_TYPE_Q8_0, ENG_TYPE_Q4_0, 30 * 6 * (34 + 18)}};
    float *f16_ref = NULL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        eng_model *cold = open_typed(cases[c].tk, cases[c].tv, 1, NULL);
        eng_model *warm = open_typed(cases[c].tk, cases[c].tv, 0, NULL);
        if (!cold || !warm) {
            eng_model_free(cold);
            eng_model_free(warm);
            return;
        }
        const char *tn = eng_kv_type_name(cases[c].tk), *vn = eng_kv_type_name(cases[c].tv);
        CHECK_MSG(eng_model_kv_bytes_per_token(warm) == cases[c].bpt, "%s/%s: %zu bytes per token", tn, vn,
                  eng_model_kv_bytes_per_token(warm));
        CHECK_EQ_INT(eng_model_kv_page_bytes(warm), 16 * cases[c].bpt);
        uint32_t gk, gv;
        eng_model_kv_types(warm, &gk, &gv);
        CHECK(gk == cases[c].tk && gv == cases[c].tv);
        size_t nt = 0;
        int32_t *t = th_tokenize(eng_model_tokenizer(warm), text_a, 0, 1, &nt);
        int n = (int)nt, mem, disk;
        float *ref = run(cold, t, n, &mem, &disk);
        /* warm a prefix ending inside a page, then the whole prompt: the cached
         * part is reused and the logits are the cold run's bits */
        free(run(warm, t, 37, &mem, &disk));
        float *hit = run(warm, t, n, &mem, &disk);
        CHECK_MSG(mem == 37 && same(warm, hit, ref), "%s/%s: memory hit (%d tokens) differs from cold", tn,
                  vn, mem);
        /* one token at a time (decode steps) from the cached prefix: the same
         * last logits as the cold prompt pass (batch invariance) */
        eng_seq *s = NULL;
        util_err err;
        float *step = malloc((size_t)eng_model_n_vocab(warm) * sizeof *step);
        int rc = eng_seq_new(&s, warm, 1024, &err);
        if (!rc) rc = eng_seq_set_tokens(s, t, 20, NULL, &mem, &disk, &err);
        for (int i = 20; !rc && i < n; i++) rc = eng_seq_eval(s, t + i, 1, step, &err);
        CHECK_MSG(rc == 0 && same(warm, step, ref), "%s/%s: token-by-token differs from the prompt pass", tn,
                  vn);
        eng_seq_free(s);
        free(step);
        if (c == 0)
            f16_ref = ref, ref = NULL;
        else /* the type is really used: other bits than f16's */
            CHECK_MSG(!same(warm, hit, f16_ref), "%s/%s: the same logits as f16", tn, vn);
        free(ref);
        free(hit);
        free(t);
        eng_model_free(cold);
        eng_model_free(warm);
    }
    free(f16_ref);
    /* head_dim 64 holds whole blocks; a bad id is refused */
    eng_model_params mp = {.n_threads = 1, .kv_type_k = ENG_TYPE_Q4_1};
    eng_model *m = NULL;
    util_err err;
    CHECK(eng_model_open(&m, check_model_path(), &mp, &err) == UTIL_EINVAL && strstr(err.msg, "--kv-type-k"));
    eng_model_free(m);
}

/* One disk directory, two KV types: a q8_0 cache never serves an f16 request
 * nor the reverse (the fingerprint names the types); each type's own disk
 * hits are bit-identical to its cold run. */
static void test_disk(void) {
    char dir[] = "/tmp/cachet-kvq-XXXXXX";
    if (!mkdtemp(dir)) return;
    eng_model *f16 = open_typed(ENG_TYPE_F16, ENG_TYPE_F16, 0, dir);
    eng_model *q8 = open_typed(ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 0, dir);
    eng_model *q8cold = open_typed(ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 1, NULL);
    if (f16 && q8 && q8cold) {
        size_t nt = 0;
        int32_t *t = th_tokenize(eng_model_tokenizer(q8), text_a, 0, 1, &nt);
        int n = (int)nt, mem, disk;
        float *ref = run(q8cold, t, n, &mem, &disk);
        free(run(f16, t, n, &mem, &disk)); /* f16 pages on disk */
        eng_model_flush_cache(f16);
        float *lg = run(q8, t, n, &mem, &disk);
        CHECK_MSG(mem == 0 && disk == 0, "q8_0 request reused %d memory + %d disk tokens of f16 pages", mem,
                  disk);
        CHECK(same(q8, lg, ref));
        /* not even looked at: another name (a page of another size would be
         * rejected as corrupt, which this would count) */
        CHECK_EQ_INT(eng_model_cache_stats(q8).disk_corrupt, 0);
        free(lg);
        eng_model_flush_cache(q8); /* q8_0 pages on disk too */
        eng_model_free(q8);
        q8 = open_typed(ENG_TYPE_Q8_0, ENG_TYPE_Q8_0, 0, dir); /* cold memory, warm disk */
        eng_model *f16b = open_typed(ENG_TYPE_F16, ENG_TYPE_F16, 0, dir);
        eng_model *mixed = open_typed(ENG_TYPE_Q8_0, ENG_TYPE_F16, 0, dir);
        if (q8 && f16b && mixed) {
            lg = run(q8, t, n, &mem, &disk);
            CHECK_MSG(disk == n - 1 && mem == 0, "q8_0 disk hit: %d from disk (n=%d)", disk, n);
            CHECK_MSG(same(q8, lg, ref), "q8_0 disk hit differs from the cold run");
            free(lg);
            lg = run(f16b, t, n, &mem, &disk);
            CHECK_MSG(disk == n - 1, "f16 disk hit: %d (its own pages are there)", disk);
            CHECK(!same(f16b, lg, ref));
            free(lg);
            lg = run(mixed, t, n, &mem, &disk);
            CHECK_MSG(disk == 0, "K q8_0 / V f16 reused %d tokens of another type's pages", disk);
            free(lg);
        }
        eng_model_free(f16b);
        eng_model_free(mixed);
        free(ref);
        free(t);
    }
    eng_model_free(f16);
    eng_model_free(q8);
    eng_model_free(q8cold);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    proc_result r = proc_run(cmd);
    proc_result_free(&r);
}

/* --- quality ------------------------------------------------------------------- */

/* Next-token distributions of a quantized cache against f16 at every position
 * of the golden prompts followed by their greedy continuations (the quality
 * figure until `cachet perplexity` lands): mean KL(f16 || type) in nats and how
 * often the top token agrees. Printed; the bounds are loose sanity checks. */
static void test_quality(void) {
    enum { MAX_ROWS = 16, N_ROWS_USED = 4 };
    golden_row rows[MAX_ROWS];
    int nr = golden_rows_load("logits_index.tsv", rows, MAX_ROWS);
    eng_model *m[N_TYPES];
    for (int i = 0; i < N_TYPES; i++) m[i] = open_typed(k_types[i], k_types[i], 1, NULL);
    if (!m[0] || !m[1] || !m[2] || nr == 0) goto out;
    const int nv = eng_model_n_vocab(m[0]);
    double kl[N_TYPES] = {0}, klmax[N_TYPES] = {0};
    int agree[N_TYPES] = {0}, npos = 0;
    float *all[N_TYPES] = {NULL, NULL, NULL};
    eng_seq *s[N_TYPES];
    double *p = malloc((size_t)nv * sizeof(double));
    for (int r = 0; r < nr && r < N_ROWS_USED; r++) {
        size_t n = rows[r].n_prompt + rows[r].n_greedy;
        int32_t *toks = malloc(n * sizeof *toks);
        memcpy(toks, rows[r].prompt, rows[r].n_prompt * sizeof *toks);
        memcpy(toks + rows[r].n_prompt, rows[r].greedy, rows[r].n_greedy * sizeof *toks);
        util_err err;
        util_err_clear(&err);
        int ok = 1;
        /* every position's logits in one pass (each row equals a token-by-token run) */
        for (int i = 0; ok && i < N_TYPES; i++) {
            float *a = realloc(all[i], n * (size_t)nv * sizeof(float));
            s[i] = NULL;
            ok = a && eng_seq_new(&s[i], m[i], (int)n + 1, &err) == 0 &&
                 eng_seq_eval_all(s[i], toks, (int)n, a, &err) == 0;
            all[i] = a ? a : all[i];
            eng_seq_free(s[i]);
        }
        for (size_t pos = 0; ok && pos < n; pos++) {
            const float *lg[N_TYPES];
            for (int i = 0; i < N_TYPES; i++) lg[i] = all[i] + pos * (size_t)nv;
            double mx = -INFINITY, z = 0;
            int top0 = 0;
            for (int v = 0; v < nv; v++) {
                if (lg[0][v] > lg[0][top0]) top0 = v;
                mx = fmax(mx, lg[0][v]);
            }
            for (int v = 0; v < nv; v++) z += p[v] = exp(lg[0][v] - mx);
            const double lz = log(z);
            for (int i = 1; i < N_TYPES; i++) {
                double mq = -INFINITY, zq = 0, d = 0;
                int top = 0;
                for (int v = 0; v < nv; v++) {
                    if (lg[i][v] > lg[i][top]) top = v;
                    mq = fmax(mq, lg[i][v]);
                }
                for (int v = 0; v < nv; v++) zq += exp(lg[i][v] - mq);
                const double lzq = log(zq);
                /* KL(p||q) = sum p (log p - log q), log p = l - mx - log z */
                for (int v = 0; v < nv; v++) d += p[v] / z * ((lg[0][v] - mx - lz) - (lg[i][v] - mq - lzq));
                kl[i] += d;
                klmax[i] = fmax(klmax[i], d);
                agree[i] += top == top0;
            }
            npos++;
        }
        CHECK_MSG(ok, "eval: %s", err.msg);
        free(toks);
    }
    for (int i = 1; i < N_TYPES; i++) {
        printf(
            "  kv %-5s vs f16 over %d positions (%d golden prompts + greedy): mean KL %.5f nats (max %.4f), "
            "top-1 agrees %d/%d (%.1f%%)\n",
            eng_kv_type_name(k_types[i]), npos, nr < N_ROWS_USED ? nr : N_ROWS_USED, kl[i] / npos, klmax[i],
            agree[i], npos, 100.0 * agree[i] / npos);
    }
    CHECK(npos > 100);
    /* measured: 0.0049 nats, 97.9% (the bounds are sanity checks, not the figure) */
    CHECK_MSG(kl[1] / npos < 0.02 && agree[1] >= npos * 9 / 10, "q8_0 quality: KL %.4f, top-1 %d/%d",
              kl[1] / npos, agree[1], npos);
    /* q4_0 (16 levels per block) costs SmolLM2-135M far more: measured 0.21
     * nats, 82% */
    CHECK_MSG(kl[2] / npos < 0.5 && agree[2] >= npos * 7 / 10 && kl[2] > kl[1],
              "q4_0 quality: KL %.4f, top-1 %d/%d", kl[2] / npos, agree[2], npos);
    for (int i = 0; i < N_TYPES; i++) free(all[i]);
    free(p);
out:
    for (int i = 0; i < N_TYPES; i++) eng_model_free(m[i]);
    golden_rows_free(rows, nr);
}

void test_kvquant(void) {
    CHECK_CASE(quantizers) test_quantizers();
    CHECK_CASE(kernels) test_kernels();
    CHECK_CASE(model) test_model();
    CHECK_CASE(disk) test_disk();
    CHECK_CASE(quality) test_quality();
}
