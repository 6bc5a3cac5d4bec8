/* tests/test_kernels.c: every SIMD kernel against its scalar reference, at each level
 * this CPU has (AVX2, AVX-512): quant dot products and activation quantizers, gemm tiles
 * (bit-identical to the 1x1 path whatever the tile), the backend's attention, RMSNorm,
 * RoPE, SwiGLU, f16 stores; batch and thread invariance of matmul and attention within
 * each level; kernels/speed times gemm shapes. Tolerances are stated where used. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/backend.h"
#include "../engine/cpu/cpu_features.h"
#include "../engine/cpu/cpu_kernels.h"
#include "../engine/cpu/quant_cpu.h"
#include "../engine/quant.h"
#include "../engine/quant_impl.h"
#include "check.h"
#include "helpers.h"

/* --- helpers ------------------------------------------------------------ */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static void *zalloc64(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n + 64)) return NULL;
    memset(p, 0, n + 64);
    return p;
}

/* A weight row of n values in `type`: random quant bytes with plausible f16
 * scales (d > 0, q4_1/q4_K mins negative), or random f16/f32 values. */
static void rand_row(uint32_t type, uint8_t *w, int64_t n, uint64_t *rs) {
    const eng_type_traits *t = eng_type_get(type);
    size_t bytes = eng_type_row_size(type, n);
    for (size_t i = 0; i < bytes; i++) w[i] = (uint8_t)th_rng_next(rs);
    if (type == ENG_TYPE_F16) {
        for (int64_t i = 0; i < n; i++) put16(w + 2 * i, eng_f32_to_f16(th_rng_unit(rs)));
        return;
    }
    if (type == ENG_TYPE_F32) {
        for (int64_t i = 0; i < n; i++) {
            float f = th_rng_unit(rs);
            memcpy(w + 4 * i, &f, 4);
        }
        return;
    }
    for (int64_t b = 0; b < n / t->blck; b++) {
        uint8_t *p = w + (size_t)b * t->bytes;
        uint16_t d = eng_f32_to_f16(0.002f + 0.01f * (1.0f + th_rng_unit(rs)));
        uint16_t m = eng_f32_to_f16(-0.04f * (1.0f + th_rng_unit(rs)));
        if (type == ENG_TYPE_Q6_K) {
            put16(p + 208, d);
            continue;
        }
        put16(p, d);
        if (type == ENG_TYPE_Q4_1 || type == ENG_TYPE_Q4_K || type == ENG_TYPE_Q5_K) put16(p + 2, m);
    }
}

static void rand_vec(float *x, size_t n, float scale, uint64_t *rs) {
    for (size_t i = 0; i < n; i++) x[i] = scale * th_rng_unit(rs);
}

static int levels(eng_simd out[2]) {
    int n = 0;
    eng_simd have = eng_cpu_detect();
    if (have >= ENG_SIMD_AVX2) out[n++] = ENG_SIMD_AVX2;
    if (have >= ENG_SIMD_AVX512) out[n++] = ENG_SIMD_AVX512;
    return n;
}

/* --- quant kernels ------------------------------------------------------- */

/* Bound on sum |term| of the reference dot: per value |w - m| |a| (the scaled
 * integer products) plus |m| |a| (the block's m * s term), with w and a
 * dequantized. Reordering a float sum of k terms moves it by at most about
 * k * 2^-24 * that bound (k counts the blocks plus the lanes folded at the end). */
static double abs_bound(uint32_t type, const uint8_t *w, const void *act, int64_t n) {
    const eng_type_traits *t = eng_type_get(type), *vt = eng_type_get(t->vec_dot_type);
    float *wf = malloc((size_t)n * sizeof(float)), *af = malloc((size_t)n * sizeof(float));
    t->to_float(w, wf, n);
    vt->to_float(act, af, n);
    double b = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = 0;
        if (type == ENG_TYPE_Q4_1) m = fabs(eng_f16_to_f32(((const eng_block_q4_1 *)w)[i / 32].m));
        if (type == ENG_TYPE_Q4_K || type == ENG_TYPE_Q5_K) { /* dmin * min of the sub-block */
            const uint8_t *blk = w + (size_t)(i / 256) * t->bytes;
            uint16_t dm;
            int sc, mn;
            memcpy(&dm, blk + 2, 2);
            eng_k_scale_min(blk + 4, (int)(i % 256 / 32), &sc, &mn);
            m = fabs(eng_f16_to_f32(dm)) * mn;
        }
        if (type == ENG_TYPE_Q6_K) { /* the -32 offset, summed apart by the SIMD kernels */
            const eng_block_q6_k *blk = (const eng_block_q6_k *)(w + (size_t)(i / 256) * t->bytes);
            uint16_t d;
            memcpy(&d, &blk->d, 2);
            m = 32.0 * fabs(eng_f16_to_f32(d) * blk->scales[i % 256 / 16]);
        }
        if (type == ENG_TYPE_Q4_0) m = 8.0 * fabs(eng_f16_to_f32(((const eng_block_q4_0 *)w)[i / 32].d));
        if (type == ENG_TYPE_Q5_0) m = 16.0 * fabs(eng_f16_to_f32(((const eng_block_q5_0 *)w)[i / 32].d));
        b += (fabs(wf[i]) + 2 * m) * fabs(af[i]);
    }
    free(wf);
    free(af);
    return b;
}

/* One (type, level, n): fast vec_dot vs the reference within the bound; the
 * fast vec_dot on reference activations equals gemm on prepared activations
 * (so the prepared quantization rounds exactly like the reference). */
static void check_dot(uint32_t type, eng_simd level, int64_t n, uint64_t *rs, double *worst) {
    const eng_type_traits *t = eng_type_get(type), *vt = eng_type_get(t->vec_dot_type);
    eng_type_kernels k;
    CHECK(eng_type_kernels_get(type, level, &k) == 0);
    uint8_t *w = zalloc64(eng_type_row_size(type, n));
    float *x = malloc((size_t)n * sizeof(float));
    void *a = zalloc64(eng_type_row_size(t->vec_dot_type, n));
    void *pa = zalloc64(k.act_bytes(n));
    for (int rep = 0; rep < 6; rep++) {
        rand_row(type, w, n, rs);
        rand_vec(x, (size_t)n, rep == 5 ? 30.0f : 1.0f, rs);
        if (rep == 4 && n >= 32) /* rounding ties: amax 127 makes d = 1, x / d = x */
            for (int64_t i = 0; i < n; i++) x[i] = i % 32 == 0 ? 127.0f : (float)(i % 7) - 3.5f;
        vt->from_float(x, a, n);
        k.act_quantize(x, pa, n);
        float ref, fast, g;
        eng_type_get_cpu(type)->vec_dot(n, &ref, w, a);
        k.vec_dot(n, &fast, w, a);
        k.gemm(n, &g, 1, w, 0, 1, pa, 0, 1);
        CHECK_MSG(memcmp(&fast, &g, sizeof g) == 0, "%s %s n=%lld: vec_dot %.9g != gemm %.9g", t->name,
                  eng_simd_name(level), (long long)n, (double)fast, (double)g);
        int blocks = (int)(n / t->blck);
        double bound = abs_bound(type, w, a, n);
        double tol = (2.0 * blocks + 24) * ldexp(1.0, -24) * bound;
        if (type == ENG_TYPE_F16 || type == ENG_TYPE_F32) tol = ((double)n + 24) * ldexp(1.0, -24) * bound;
        double err = fabs((double)fast - (double)ref);
        if (bound > 0 && err / bound > *worst) *worst = err / bound;
        CHECK_MSG(err <= tol, "%s %s n=%lld: fast %.9g vs reference %.9g (tol %.3g)", t->name,
                  eng_simd_name(level), (long long)n, (double)fast, (double)ref, tol);
    }
    free(w);
    free(x);
    free(a);
    free(pa);
}

static void test_dots(void) {
    static const struct {
        uint32_t type;
        int64_t n[5];
    } cases[] = {
        {ENG_TYPE_Q4_1, {32, 96, 576, 1536, 544}},    {ENG_TYPE_Q8_0, {32, 96, 576, 1536, 544}},
        {ENG_TYPE_Q5_0, {32, 96, 576, 1536, 544}},    {ENG_TYPE_Q4_0, {32, 96, 576, 1536, 544}},
        {ENG_TYPE_Q4_K, {256, 512, 1536, 2304, 256}}, {ENG_TYPE_Q6_K, {256, 512, 1536, 2304, 256}},
        {ENG_TYPE_Q5_K, {256, 512, 1536, 2304, 768}}, {ENG_TYPE_F16, {1, 7, 31, 576, 1000}},
        {ENG_TYPE_F32, {1, 9, 33, 576, 1000}},
    };
    eng_simd lv[2];
    int nl = levels(lv);
    uint64_t rs = 42;
    for (int l = 0; l < nl; l++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            double worst = 0;
            for (int i = 0; i < 5; i++) check_dot(cases[c].type, lv[l], cases[c].n[i], &rs, &worst);
            if (check_get()->verbose)
                fprintf(stderr, "  %s %-5s worst |fast - ref| / sum|terms| = %.3g\n", eng_simd_name(lv[l]),
                        eng_type_get(cases[c].type)->name, worst);
        }
}

/* Whether prepared block pb (320 bytes, quant_simd.h) holds reference block ref:
 * the q8_K layout (values, bsums, d) or, for AVX-512 q4_K / q5_K (k4), the
 * values in sub-block order 0 2 1 3 4 6 5 7, the eight sub-block sums, d. */
static int prep_same(const char *pb, const eng_block_q8_k *ref, int k4) {
    float d;
    memcpy(&d, pb + 288, 4);
    if (memcmp(&d, &ref->d, 4) != 0) return 0;
    if (!k4) return memcmp(pb, ref->qs, 256) == 0 && memcmp(pb + 256, ref->bsums, 32) == 0;
    static const int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int c = 0; c < 8; c++) {
        int16_t sum;
        memcpy(&sum, pb + 256 + 2 * order[c], 2);
        if (memcmp(pb + 32 * c, ref->qs + 32 * order[c], 32) != 0 ||
            sum != ref->bsums[2 * order[c]] + ref->bsums[2 * order[c] + 1])
            return 0;
    }
    return 1;
}

/* The K-quants' prepared activations hold the reference q8_K values exactly:
 * random rows, a zero block, and blocks where +amax and -amax both occur (the
 * reference takes the first one as the sign of its scale). */
static void test_q8k_prep(void) {
    enum { N = 256 * 5 };
    static const uint32_t types[] = {ENG_TYPE_Q4_K, ENG_TYPE_Q5_K, ENG_TYPE_Q6_K};
    eng_simd lv[2];
    int nl = levels(lv);
    uint64_t rs = 5;
    const eng_type_traits *vt = eng_type_get(ENG_TYPE_Q8_K);
    float *x = malloc(N * sizeof(float));
    eng_block_q8_k *ref = zalloc64(eng_type_row_size(ENG_TYPE_Q8_K, N));
    for (int l = 0; l < nl; l++)
        for (size_t ty = 0; ty < sizeof types / sizeof types[0]; ty++) {
            eng_type_kernels k;
            CHECK(eng_type_kernels_get(types[ty], lv[l], &k) == 0);
            const int k4 = lv[l] == ENG_SIMD_AVX512 && types[ty] != ENG_TYPE_Q6_K;
            char *pa = zalloc64(k.act_bytes(N));
            int bad = 0;
            for (int rep = 0; rep < 4; rep++) {
                rand_vec(x, N, rep == 3 ? 40.0f : 1.0f, &rs);
                for (int i = 256; i < 512; i++) x[i] = 0.0f;
                x[512 + 7] = -2.5f, x[512 + 200] = 2.5f;  /* - first */
                x[768 + 9] = 3.0f, x[768 + 100] = -3.0f;  /* + first */
                x[1024 + 255] = (float)(rep + 1) * 10.0f; /* the last value */
                vt->from_float(x, ref, N);
                k.act_quantize(x, pa, N);
                for (int b = 0; b < N / 256; b++)
                    bad += !prep_same(pa + (size_t)b * (k.act_bytes(N) / (N / 256)), &ref[b], k4);
            }
            CHECK_MSG(bad == 0, "%s %s: %d prepared q8_K blocks differ from the reference",
                      eng_simd_name(lv[l]), eng_type_get(types[ty])->name, bad);
            free(pa);
        }
    free(x);
    free(ref);
}

/* gemm over nr rows x nt tokens gives, for every (row, token), the bits of the
 * 1x1 call: the tile shape and the rows' chunking never change a result. */
static void check_tiles(uint32_t type, eng_simd level, int64_t n, uint64_t *rs) {
    enum { NR = 11, NT = 19 };
    eng_type_kernels k;
    if (eng_type_kernels_get(type, level, &k)) return;
    size_t rb = eng_type_row_size(type, n), lda = k.act_bytes(n);
    uint8_t *w = zalloc64(rb * NR);
    float *x = malloc((size_t)n * NT * sizeof(float));
    char *pa = zalloc64(lda * NT);
    float y[NT * NR], y1;
    for (int r = 0; r < NR; r++) rand_row(type, w + rb * (size_t)r, n, rs);
    rand_vec(x, (size_t)n * NT, 1.0f, rs);
    for (int t = 0; t < NT; t++) k.act_quantize(x + (size_t)t * (size_t)n, pa + lda * (size_t)t, n);
    static const int shapes[][2] = {{NR, NT}, {NR, 8}, {3, 5}, {1, NT}, {4, 9}};
    int bad = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int nr = shapes[s][0], nt = shapes[s][1];
        k.gemm(n, y, NR, w, rb, nr, pa, lda, nt);
        for (int r = 0; r < nr; r++)
            for (int t = 0; t < nt; t++) {
                k.gemm(n, &y1, 1, w + rb * (size_t)r, rb, 1, pa + lda * (size_t)t, lda, 1);
                bad += memcmp(&y1, &y[t * NR + r], sizeof y1) != 0;
            }
    }
    CHECK_MSG(bad == 0, "%s %s n=%lld: %d tile results differ from the 1x1 path", eng_type_get(type)->name,
              eng_simd_name(level), (long long)n, bad);
    free(w);
    free(x);
    free(pa);
}

/* One gemm call over `rows` rows (more than a tile keeps at once) and 8 tokens
 * against the 1x1 path, bit for bit. */
static void check_tile_rows(uint32_t type, eng_simd level, int64_t n, int rows, uint64_t *rs) {
    enum { NT = 8 };
    eng_type_kernels k;
    if (eng_type_kernels_get(type, level, &k)) return;
    size_t rb = eng_type_row_size(type, n), lda = k.act_bytes(n);
    uint8_t *w = zalloc64(rb * (size_t)rows);
    float *x = malloc((size_t)n * NT * sizeof(float)), *y = malloc((size_t)rows * NT * sizeof(float)), y1;
    char *pa = zalloc64(lda * NT);
    for (int r = 0; r < rows; r++) rand_row(type, w + rb * (size_t)r, n, rs);
    rand_vec(x, (size_t)n * NT, 1.0f, rs);
    for (int t = 0; t < NT; t++) k.act_quantize(x + (size_t)t * (size_t)n, pa + lda * (size_t)t, n);
    k.gemm(n, y, (size_t)rows, w, rb, rows, pa, lda, NT);
    int bad = 0;
    for (int r = 0; r < rows; r++)
        for (int t = 0; t < NT; t++) {
            k.gemm(n, &y1, 1, w + rb * (size_t)r, rb, 1, pa + lda * (size_t)t, lda, 1);
            bad += memcmp(&y1, &y[(size_t)t * (size_t)rows + (size_t)r], sizeof y1) != 0;
        }
    CHECK_MSG(bad == 0, "%s %s n=%lld, %d rows: %d results differ from the 1x1 path",
              eng_type_get(type)->name, eng_simd_name(level), (long long)n, rows, bad);
    free(w), free(x), free(y), free(pa);
}

static void test_tiles(void) {
    eng_simd lv[2];
    int nl = levels(lv);
    uint64_t rs = 7;
    for (int l = 0; l < nl; l++) {
        check_tiles(ENG_TYPE_Q4_1, lv[l], 576, &rs);
        check_tiles(ENG_TYPE_Q4_1, lv[l], 1536, &rs);
        check_tiles(ENG_TYPE_Q4_1, lv[l], 96, &rs);   /* odd block count: the tail pair */
        check_tiles(ENG_TYPE_Q4_1, lv[l], 4224, &rs); /* 132 blocks: 8 groups of 16 and one quad */
        check_tiles(ENG_TYPE_Q8_0, lv[l], 576, &rs);
        check_tiles(ENG_TYPE_Q8_0, lv[l], 160, &rs);
        check_tiles(ENG_TYPE_Q6_K, lv[l], 512, &rs);
        check_tiles(ENG_TYPE_Q6_K, lv[l], 2816, &rs); /* 11 super-blocks */
        check_tiles(ENG_TYPE_Q4_0, lv[l], 576, &rs);
        check_tiles(ENG_TYPE_Q4_0, lv[l], 96, &rs);   /* a lone last block */
        check_tiles(ENG_TYPE_Q4_0, lv[l], 1056, &rs); /* 33 blocks: past one chunk of 16 */
        check_tiles(ENG_TYPE_Q4_0, lv[l], 4160, &rs); /* 130 blocks: 8 groups and a partial quad */
        check_tiles(ENG_TYPE_Q5_0, lv[l], 160, &rs);
        check_tiles(ENG_TYPE_Q5_0, lv[l], 2080, &rs);
        check_tiles(ENG_TYPE_Q4_K, lv[l], 256, &rs);
        check_tiles(ENG_TYPE_Q4_K, lv[l], 2304, &rs);
        check_tiles(ENG_TYPE_Q5_K, lv[l], 768, &rs);
        check_tiles(ENG_TYPE_F16, lv[l], 100, &rs);
    }
    for (int l = 0; l < nl; l++) { /* wide rows, 8 tokens: q4's segments over 16 rows at a time */
        check_tile_rows(ENG_TYPE_Q4_1, lv[l], 8320, 37, &rs);
        check_tile_rows(ENG_TYPE_Q4_0, lv[l], 4160, 19, &rs);
    }
    /* the scalar level goes through the same gemm interface */
    check_tiles(ENG_TYPE_Q4_1, ENG_SIMD_SCALAR, 576, &rs);
}

/* --- backend ops ----------------------------------------------------------- */

/* T_CTX past two multiples of CPU_ATTN_CHUNK: three pieces, the last a partial one */
enum { T_HEADS = 6, T_KV = 2, T_HD = 64, T_CTX = 592 };

typedef struct kv_fixture {
    void *pages[T_CTX / 16];
    eng_kv_view kv;
} kv_fixture;

static void kv_init(kv_fixture *f, uint64_t *rs) {
    eng_kv_view_init(&f->kv, 16, 1, T_KV * T_HD, ENG_TYPE_F16, ENG_TYPE_F16);
    for (int i = 0; i < T_CTX / 16; i++) {
        uint16_t *pg = malloc(eng_kv_page_bytes(&f->kv));
        for (int j = 0; j < 2 * 16 * T_KV * T_HD; j++) pg[j] = eng_f32_to_f16(2.0f * th_rng_unit(rs));
        f->pages[i] = pg;
    }
    f->kv.pages = f->pages;
}

static void kv_release(kv_fixture *f) {
    for (int i = 0; i < T_CTX / 16; i++) free(f->pages[i]);
}

/* Attention of tokens [t0, t0 + n) of a T_CTX-token sequence, all heads. */
static void run_attn(eng_backend *be, const kv_fixture *f, const float *q, float *out, int t0, int n,
                     int window) {
    eng_attn_args a = {.out = out + (size_t)t0 * T_HEADS * T_HD,
                       .q = q + (size_t)t0 * T_HEADS * T_HD,
                       .kv = &f->kv,
                       .layer = 0,
                       .n_tok = n,
                       .pos0 = t0,
                       .n_head = T_HEADS,
                       .n_kv_head = T_KV,
                       .head_dim = T_HD,
                       .scale = 0.125f,
                       .window = window};
    be->ops->attention(be, &a);
}

static double max_rel(const float *a, const float *b, size_t n, double floor) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)b[i]), floor);
        w = fmax(w, d);
    }
    return w;
}

/* Fast attention vs the scalar reference. Tolerance 1e-5 of max |v| (= 2): the
 * levels use fma where the reference rounds twice, an exp good to about 2 ulp and
 * other summation orders; each moves an output by a few ulp of the values. */
static void check_attention(eng_backend *ref, eng_backend *fast, uint64_t *rs) {
    kv_fixture f;
    kv_init(&f, rs);
    size_t nq = (size_t)T_CTX * T_HEADS * T_HD;
    float *q = malloc(nq * sizeof(float)), *o1 = calloc(nq, sizeof(float)), *o2 = calloc(nq, sizeof(float));
    rand_vec(q, nq, 3.0f, rs);
    CHECK(ref->ops->reserve(ref, T_CTX, NULL) == 0 && fast->ops->reserve(fast, T_CTX, NULL) == 0);
    static const int windows[] = {0, 24, 300};
    for (size_t wi = 0; wi < sizeof windows / sizeof windows[0]; wi++) {
        const int window = windows[wi];
        run_attn(ref, &f, q, o1, 0, T_CTX, window);
        run_attn(fast, &f, q, o2, 0, T_CTX, window);
        double err = 0;
        for (size_t i = 0; i < nq; i++) err = fmax(err, fabs((double)o1[i] - (double)o2[i]));
        CHECK_MSG(err <= 2e-5, "%s attention (window %d): max error %.3g > 2e-5", fast->ops->name, window,
                  err);
        /* chunked the way prefill and decode call it: the same bits */
        memset(o1, 0, nq * sizeof(float));
        static const int cuts[] = {0, 1, 17, 18, 50, 79, 255, 256, 257, 300, 511, 513, T_CTX};
        for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++)
            run_attn(fast, &f, q, o1, cuts[c], cuts[c + 1] - cuts[c], window);
        CHECK_MSG(memcmp(o1, o2, nq * sizeof(float)) == 0, "%s attention depends on chunking",
                  fast->ops->name);
    }
    free(q);
    free(o1);
    free(o2);
    kv_release(&f);
}

/* The attention kernels of a level (AVX2's, then AVX-512's over them); 0 when
 * it has no chunk kernel (a failed check: every x86 level has one). */
static int chunk_kern(eng_simd level, cpu_kern *k) {
    memset(k, 0, sizeof *k);
    cpu_kern_avx2(k);
    if (level >= ENG_SIMD_AVX512) cpu_kern_avx512(k);
    CHECK_MSG(k->attn_chunk_f32 && k->f16_to_f32, "%s: no chunk attention kernel", eng_simd_name(level));
    return k->attn_chunk_f32 && k->f16_to_f32;
}

/* The chunk kernel gives the same bits reading rows converted up front or
 * converting them as it loads them, and a query head's partial does not depend
 * on the other heads of the call (1 to 4, from any tokens). */
static void check_attention_sources(eng_simd level, uint64_t *rs) {
    cpu_kern k;
    if (!chunk_kern(level, &k)) return;
    enum { C = CPU_ATTN_CHUNK, SCS = CPU_ATTN_CHUNK + 32, NQ = T_HEADS * 5 };
    kv_fixture f;
    kv_init(&f, rs);
    const size_t ld = T_KV * T_HD;
    float *kf = malloc(sizeof(float) * T_CTX * ld), *vf = malloc(sizeof(float) * T_CTX * ld);
    float *q = malloc(sizeof(float) * NQ * T_HD), *sc = malloc(sizeof(float) * CPU_ATTN_GROUP_MAX * SCS);
    float *o[3], *ml[3];
    for (int i = 0; i < 3; i++)
        o[i] = calloc(NQ * T_HD, sizeof(float)), ml[i] = calloc(NQ * 2, sizeof(float));
    rand_vec(q, NQ * T_HD, 3.0f, rs);
    for (int p = 0; p < T_CTX; p++) {
        k.f16_to_f32(kf + (size_t)p * ld, (const uint16_t *)eng_kv_k(&f.kv, 0, p), ld);
        k.f16_to_f32(vf + (size_t)p * ld, (const uint16_t *)eng_kv_v(&f.kv, 0, p), ld);
    }
    eng_attn_args a = {.kv = &f.kv, .n_head = T_HEADS, .n_kv_head = T_KV, .head_dim = T_HD, .scale = 0.125f};
    static const int pieces[][2] = {{0, 1}, {0, 17}, {0, C}, {C, 80}, {2 * C - 40, 40}, {37, 219}};
    for (size_t pc = 0; pc < sizeof pieces / sizeof pieces[0]; pc++) {
        const int j0 = pieces[pc][0], nk = pieces[pc][1];
        for (int g = 0; g < T_KV; g++) {
            for (int src = 0; src < 2; src++) /* one query head per call */
                for (int i = 0; i < NQ; i++) {
                    cpu_attn_q qi = {q + (size_t)i * T_HD, o[src] + (size_t)i * T_HD, ml[src] + 2 * i};
                    k.attn_chunk_f32(&a, g, 1, j0, nk, &qi, 1, src ? kf : NULL, src ? vf : NULL, ld, sc, SCS);
                }
            CHECK_MSG(memcmp(o[0], o[1], sizeof(float) * NQ * T_HD) == 0 &&
                          memcmp(ml[0], ml[1], sizeof(float) * NQ * 2) == 0,
                      "attn_chunk_f32 keys %d+%d: converted rows vs on the fly", j0, nk);
            for (int nq = 2; nq <= CPU_ATTN_GROUP_MAX; nq++) {
                memset(o[2], 0, sizeof(float) * NQ * T_HD);
                for (int i = 0; i < NQ; i += nq) {
                    cpu_attn_q qs[CPU_ATTN_GROUP_MAX];
                    int n = NQ - i < nq ? NQ - i : nq;
                    for (int x = 0; x < n; x++) /* heads of the group in a scattered order */
                        qs[x] = (cpu_attn_q){q + (size_t)(i + n - 1 - x) * T_HD,
                                             o[2] + (size_t)(i + n - 1 - x) * T_HD,
                                             ml[2] + 2 * (i + n - 1 - x)};
                    k.attn_chunk_f32(&a, g, 1, j0, nk, qs, n, nq % 2 ? kf : NULL, nq % 2 ? vf : NULL, ld, sc,
                                     SCS);
                }
                CHECK_MSG(memcmp(o[0], o[2], sizeof(float) * NQ * T_HD) == 0 &&
                              memcmp(ml[0], ml[2], sizeof(float) * NQ * 2) == 0,
                          "attn_chunk_f32 keys %d+%d: %d heads per call differ from one", j0, nk, nq);
            }
        }
    }
    for (int i = 0; i < 3; i++) free(o[i]), free(ml[i]);
    free(kf), free(vf), free(q), free(sc);
    kv_release(&f);
}

/* Several kv heads per chunk call (the pages' rows read whole, a block of keys
 * for all of them at a time) give each query head the bits it gets in a call
 * of its own kv head alone, for 1 to 4 query heads per kv head, from the pages
 * and from converted rows. */
static void check_attention_groups(eng_simd level, uint64_t *rs) {
    cpu_kern k;
    if (!chunk_kern(level, &k)) return;
    enum { SCS = CPU_ATTN_CHUNK + 32, G = CPU_ATTN_GROUP_MAX };
    kv_fixture f;
    kv_init(&f, rs);
    const size_t ld = T_KV * T_HD;
    float *kf = malloc(sizeof(float) * T_CTX * ld), *vf = malloc(sizeof(float) * T_CTX * ld);
    float *q = malloc(sizeof(float) * T_KV * G * T_HD), *sc = malloc(sizeof(float) * T_KV * G * SCS);
    float *o1 = calloc(T_KV * G * T_HD, sizeof(float)), *o2 = calloc(T_KV * G * T_HD, sizeof(float));
    float *ml1 = calloc(T_KV * G * 2, sizeof(float)), *ml2 = calloc(T_KV * G * 2, sizeof(float));
    rand_vec(q, T_KV * G * T_HD, 3.0f, rs);
    for (int p = 0; p < T_CTX; p++) {
        k.f16_to_f32(kf + (size_t)p * ld, (const uint16_t *)eng_kv_k(&f.kv, 0, p), ld);
        k.f16_to_f32(vf + (size_t)p * ld, (const uint16_t *)eng_kv_v(&f.kv, 0, p), ld);
    }
    eng_attn_args a = {.kv = &f.kv, .n_head = T_HEADS, .n_kv_head = T_KV, .head_dim = T_HD, .scale = 0.125f};
    static const int pieces[][2] = {{0, 1}, {0, 23}, {16, CPU_ATTN_CHUNK}, {CPU_ATTN_CHUNK + 5, 251}};
    for (size_t pc = 0; pc < sizeof pieces / sizeof pieces[0]; pc++)
        for (int nq = 1; nq <= G; nq++)
            for (int src = 0; src < 2; src++) {
                const int j0 = pieces[pc][0], nk = pieces[pc][1];
                const float *kp = src ? kf : NULL, *vp = src ? vf : NULL;
                cpu_attn_q qs[T_KV * G];
                for (int i = 0; i < T_KV * nq; i++) /* head i % nq of kv head i / nq */
                    qs[i] = (cpu_attn_q){q + (size_t)i * T_HD, o2 + (size_t)i * T_HD, ml2 + 2 * i};
                k.attn_chunk_f32(&a, 0, T_KV, j0, nk, qs, nq, kp, vp, ld, sc, SCS);
                for (int g = 0; g < T_KV; g++) {
                    for (int i = 0; i < nq; i++) {
                        const size_t x = (size_t)g * nq + (size_t)i;
                        qs[i] = (cpu_attn_q){q + x * T_HD, o1 + x * T_HD, ml1 + 2 * x};
                    }
                    k.attn_chunk_f32(&a, g, 1, j0, nk, qs, nq, kp, vp, ld, sc, SCS);
                }
                CHECK_MSG(memcmp(o1, o2, sizeof(float) * T_KV * nq * T_HD) == 0 &&
                              memcmp(ml1, ml2, sizeof(float) * T_KV * nq * 2) == 0,
                          "attn_chunk_f32 keys %d+%d, %d heads per kv head, %s: %d kv heads per call differ "
                          "from one",
                          j0, nk, nq, src ? "converted rows" : "pages", T_KV);
            }
    free(kf), free(vf), free(q), free(sc), free(o1), free(o2), free(ml1), free(ml2);
    kv_release(&f);
}

/* RMSNorm: only the order of the double-precision sum of squares differs, so the
 * scale differs by at most an ulp: 2^-22 relative. SwiGLU: the exp polynomial is
 * within a few ulp: 1e-6 relative (with a floor for outputs near 0). RoPE and f16
 * stores use the reference's arithmetic: bit-identical. */
static void check_elementwise(eng_backend *ref, eng_backend *fast, uint64_t *rs) {
    enum { E = 576, R = 5, F = 1536 * 3 + 5 };
    float *x = malloc(sizeof(float) * E * R), *w = malloc(sizeof(float) * E);
    float *y1 = malloc(sizeof(float) * E * R), *y2 = malloc(sizeof(float) * E * R);
    rand_vec(x, E * R, 4.0f, rs);
    rand_vec(w, E, 2.0f, rs);
    ref->ops->rmsnorm(ref, y1, x, w, E, R, 1e-5f);
    fast->ops->rmsnorm(fast, y2, x, w, E, R, 1e-5f);
    CHECK_MSG(max_rel(y2, y1, E * R, 1e-30) <= ldexp(1.0, -22), "%s rmsnorm", fast->ops->name);

    memcpy(y1, x, sizeof(float) * E * R);
    memcpy(y2, x, sizeof(float) * E * R);
    eng_rope_args ra = {.x = y1,
                        .n_tok = R,
                        .n_head = 9,
                        .head_dim = 64,
                        .n_rot = 64,
                        .pos0 = 1000,
                        .base = 100000.0f,
                        .freq_scale = 1.0f,
                        .mode = ENG_ROPE_NORMAL};
    ref->ops->rope(ref, &ra);
    ra.x = y2;
    fast->ops->rope(fast, &ra);
    ra.n_tok = 0, ra.pos0 = 7;
    fast->ops->rope(fast, &ra); /* no-op call, other range */
    CHECK_MSG(memcmp(y1, y2, sizeof(float) * E * R) == 0, "%s rope", fast->ops->name);

    float *g = malloc(sizeof(float) * F), *u = malloc(sizeof(float) * F);
    float *s1 = malloc(sizeof(float) * F), *s2 = malloc(sizeof(float) * F);
    rand_vec(g, F, 12.0f, rs);
    rand_vec(u, F, 2.0f, rs);
    ref->ops->swiglu(ref, s1, g, u, F);
    fast->ops->swiglu(fast, s2, g, u, F);
    CHECK_MSG(max_rel(s2, s1, F, 1e-3) <= 1e-6, "%s swiglu: %.3g", fast->ops->name, max_rel(s2, s1, F, 1e-3));

    kv_fixture f1, f2;
    uint64_t seed = *rs;
    kv_init(&f1, rs);
    *rs = seed;
    kv_init(&f2, rs);
    ref->ops->kv_store(ref, &f1.kv, 0, x, x + 128, 3, 30);
    fast->ops->kv_store(fast, &f2.kv, 0, x, x + 128, 3, 30);
    int same = 1;
    for (int i = 0; i < T_CTX / 16; i++)
        same &= memcmp(f1.pages[i], f2.pages[i], eng_kv_page_bytes(&f1.kv)) == 0;
    CHECK_MSG(same, "%s kv_store", fast->ops->name);
    kv_release(&f1);
    kv_release(&f2);
    free(x), free(w), free(y1), free(y2), free(g), free(u), free(s1), free(s2);
}

/* matmul through the backend: a token's row does not depend on how many tokens
 * share the call or on the thread count. */
static void check_matmul_invariance(eng_backend *b1, eng_backend *b2, uint32_t type, int64_t cols,
                                    int64_t rows, uint64_t *rs) {
    enum { NT = 37 };
    size_t rb = eng_type_row_size(type, cols);
    uint8_t *wd = zalloc64(rb * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) rand_row(type, wd + rb * (size_t)r, cols, rs);
    eng_weight w = {.name = "test", .type = type, .cols = cols, .rows = rows, .row_bytes = rb, .data = wd};
    float *x = malloc(sizeof(float) * (size_t)cols * NT);
    float *y = malloc(sizeof(float) * (size_t)rows * NT), *y1 = malloc(sizeof(float) * (size_t)rows * NT);
    rand_vec(x, (size_t)cols * NT, 1.0f, rs);
    util_err err;
    CHECK(b2->ops->matmul(b2, &w, x, y, NT, ENG_PASS_PROMPT, &err) == 0);
    int bad = 0;
    for (int t = 0; t < NT; t++) {
        CHECK(b2->ops->matmul(b2, &w, x + (size_t)t * (size_t)cols, y1, 1, ENG_PASS_DECODE, &err) == 0);
        bad += memcmp(y1, y + (size_t)t * (size_t)rows, sizeof(float) * (size_t)rows) != 0;
    }
    CHECK(b1->ops->matmul(b1, &w, x, y1, NT, ENG_PASS_PROMPT, &err) == 0);
    bad += memcmp(y1, y, sizeof(float) * (size_t)rows * NT) != 0;
    CHECK_MSG(bad == 0, "%s matmul %s: results depend on batch or threads (%d)", b2->ops->name,
              eng_type_get(type)->name, bad);
    free(wd), free(x), free(y), free(y1);
}

static void test_backend_ops(void) {
    eng_simd lv[2];
    int nl = levels(lv);
    uint64_t rs = 99;
    eng_backend *ref = NULL;
    util_err err;
    CHECK(eng_backend_cpu_new_level(&ref, 2, ENG_SIMD_SCALAR, &err) == 0);
    if (!ref) return;
    CHECK_EQ_STR(ref->ops->name, "cpu-scalar");
    for (int l = 0; l < nl; l++) {
        eng_backend *b1 = NULL, *b2 = NULL;
        CHECK(eng_backend_cpu_new_level(&b1, 1, lv[l], &err) == 0);
        CHECK(eng_backend_cpu_new_level(&b2, 2, lv[l], &err) == 0);
        if (!b1 || !b2) continue;
        CHECK_MSG(strcmp(b2->ops->name, lv[l] == ENG_SIMD_AVX2 ? "cpu-avx2" : "cpu-avx512") == 0,
                  "backend name '%s'", b2->ops->name);
        check_attention(ref, b2, &rs);
        check_attention_sources(lv[l], &rs), check_attention_groups(lv[l], &rs);
        check_elementwise(ref, b2, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q4_1, 576, 200, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q8_0, 576, 300, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q6_K, 512, 40, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q4_K, 768, 60, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q4_0, 800, 70, &rs);
        check_matmul_invariance(b1, b2, ENG_TYPE_Q5_K, 512, 30, &rs);
        eng_backend_free(b1);
        eng_backend_free(b2);
    }
    eng_backend_free(ref);
}

static void test_levels(void) {
    eng_simd have = eng_cpu_detect(), got;
    util_err err;
    CHECK_EQ_STR(eng_simd_name(ENG_SIMD_AVX512), "avx512");
    if (have < ENG_SIMD_AVX512)
        CHECK_SKIP("this CPU has no %s: those kernels are not tested here",
                   have < ENG_SIMD_AVX2 ? "AVX2" : "AVX-512");
    eng_backend *be = NULL;
    CHECK(eng_backend_cpu_new_level(&be, 1, (int)have + 1, &err) == UTIL_EINVAL);
    const char *old = getenv("CACHET_CPU");
    char *saved = old ? strdup(old) : NULL;
    setenv("CACHET_CPU", "scalar", 1);
    CHECK(eng_cpu_level(&got, &err) == 0 && got == ENG_SIMD_SCALAR);
    setenv("CACHET_CPU", "sse9", 1);
    CHECK(eng_cpu_level(&got, &err) == UTIL_EINVAL && strstr(err.msg, "sse9"));
    setenv("CACHET_CPU", "auto", 1);
    CHECK(eng_cpu_level(&got, &err) == 0 && got == have);
    if (saved)
        setenv("CACHET_CPU", saved, 1);
    else
        unsetenv("CACHET_CPU");
    free(saved);
}

/* --- kernel speed ------------------------------------------------------------ */

/* The CPU time of one gemm shape, as the backend runs it (32-row chunks), for
 * before/after comparisons of a kernel on a shared machine: user CPU time of one
 * thread, the best of `reps`, in ns per weight byte per token. Always checks
 * that the shape's results are those of the 1x1 path (first and last row, every
 * token); prints the times with -v or CACHET_KERN_BENCH=REPS (default 1 rep of
 * a small shape: cheap inside make test). Run alone:
 *   CACHET_KERN_BENCH=20 bin/cachet-tests kernels/speed */
static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void time_gemm(uint32_t type, eng_simd level, int64_t n, int64_t rows, int nt, int reps, int print,
                      uint64_t *rs) {
    eng_type_kernels k;
    if (eng_type_kernels_get(type, level, &k)) return;
    size_t rb = eng_type_row_size(type, n), lda = k.act_bytes(n);
    uint8_t *w = zalloc64(rb * (size_t)rows);
    float *x = malloc((size_t)n * (size_t)nt * sizeof(float));
    float *y = malloc((size_t)rows * (size_t)nt * sizeof(float));
    char *pa = zalloc64(lda * (size_t)nt);
    for (int64_t r = 0; r < rows; r++) rand_row(type, w + rb * (size_t)r, n, rs);
    rand_vec(x, (size_t)n * (size_t)nt, 1.0f, rs);
    for (int t = 0; t < nt; t++) k.act_quantize(x + (size_t)t * (size_t)n, pa + lda * (size_t)t, n);
    double best = 0;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = cpu_ns();
        for (int64_t r0 = 0; r0 < rows; r0 += 32)
            k.gemm(n, y + r0, (size_t)rows, w + rb * (size_t)r0, rb, rows - r0 < 32 ? (int)(rows - r0) : 32,
                   pa, lda, nt);
        double ns = cpu_ns() - t0;
        if (rep == 0 || ns < best) best = ns;
    }
    int bad = 0;
    for (int64_t r = 0; r < rows; r += rows - 1)
        for (int t = 0; t < nt; t++) {
            float y1;
            k.gemm(n, &y1, 1, w + rb * (size_t)r, rb, 1, pa + lda * (size_t)t, lda, 1);
            bad += memcmp(&y1, &y[(size_t)t * (size_t)rows + (size_t)r], sizeof y1) != 0;
        }
    CHECK_MSG(bad == 0, "%s %s nt=%d: %d results differ from the 1x1 path", eng_type_get(type)->name,
              eng_simd_name(level), nt, bad);
    if (print)
        fprintf(stderr,
                "  speed %-6s %-5s %4lld x %lld nt=%-3d %.4f ns per weight byte per token (best of %d)\n",
                eng_simd_name(level), eng_type_get(type)->name, (long long)rows, (long long)n, nt,
                best / ((double)rb * (double)rows * nt), reps);
    free(w);
    free(x);
    free(y);
    free(pa);
}

/* Decode attention (one token per sequence, all heads, one layer of f16 pages
 * in a 4-layer page layout) of n_seq sequences of depth + 5 i positions, the
 * first `shared` positions on the same pages (a prefix from the prefix cache),
 * the rest on each sequence's own: one attention_batch call (when the backend
 * has one) against one attention call per sequence, which must give the same
 * bits. Prints the CPU time of one thread per layer call, best of reps, and
 * the distinct KV bytes read over that time. */
static void time_attn(eng_backend *be, int n_head, int n_kv, int depth, int n_seq, int shared, int reps,
                      int print, uint64_t *rs) {
    enum { PT = 16, NL = 4, LAYER = 2, MAXS = 8 };
    const int hd = 64, kvd = n_kv * hd, top = depth + 5 * (n_seq - 1) + 1;
    eng_kv_view kv[MAXS];
    void **pages[MAXS];
    const int np = (top + PT - 1) / PT, nshared = shared / PT;
    size_t distinct = 0;
    for (int i = 0; i < n_seq; i++) {
        eng_kv_view_init(&kv[i], PT, NL, kvd, ENG_TYPE_F16, ENG_TYPE_F16);
        pages[i] = calloc((size_t)np, sizeof(void *));
        for (int pg = 0; pg < np; pg++) {
            if (i > 0 && pg < nshared) {
                pages[i][pg] = pages[0][pg];
                continue;
            }
            uint16_t *page = zalloc64(eng_kv_page_bytes(&kv[i]));
            uint16_t *rows = page + (size_t)LAYER * PT * 2 * (size_t)kvd;
            for (size_t j = 0; j < (size_t)PT * 2 * (size_t)kvd; j++)
                rows[j] = eng_f32_to_f16(2.0f * th_rng_unit(rs));
            pages[i][pg] = page;
        }
        kv[i].pages = pages[i];
        distinct += (size_t)(i == 0 ? depth + 1 : depth + 5 * i + 1 - shared) * 2 * (size_t)kvd * 2;
    }
    const size_t nq = (size_t)n_head * (size_t)hd;
    float *q = malloc(sizeof(float) * nq * MAXS), *o1 = calloc(nq * MAXS, sizeof(float)),
          *o2 = calloc(nq * MAXS, sizeof(float));
    rand_vec(q, nq * MAXS, 3.0f, rs);
    eng_attn_args as[MAXS];
    for (int i = 0; i < n_seq; i++)
        as[i] = (eng_attn_args){.out = o1 + nq * (size_t)i,
                                .q = q + nq * (size_t)i,
                                .kv = &kv[i],
                                .layer = LAYER,
                                .n_tok = 1,
                                .pos0 = depth + 5 * i,
                                .n_head = n_head,
                                .n_kv_head = n_kv,
                                .head_dim = hd,
                                .scale = 0.125f,
                                .pass = ENG_PASS_DECODE};
    CHECK(be->ops->reserve(be, top, NULL) == 0);
    double best[2] = {0, 0};
    for (int rep = 0; rep < reps; rep++)
        for (int mode = 0; mode < 2; mode++) { /* 0: one call per sequence, 1: one call for all */
            double t0 = cpu_ns();
            for (int i = 0; i < n_seq; i++) as[i].out = (mode ? o2 : o1) + nq * (size_t)i;
            if (mode && be->ops->attention_batch)
                be->ops->attention_batch(be, as, n_seq);
            else
                for (int i = 0; i < n_seq; i++) be->ops->attention(be, &as[i]);
            double ns = cpu_ns() - t0;
            if (rep == 0 || ns < best[mode]) best[mode] = ns;
        }
    CHECK_MSG(memcmp(o1, o2, sizeof(float) * nq * (size_t)n_seq) == 0,
              "%s attention_batch: %d sequences sharing %d positions differ from one call each",
              be->ops->name, n_seq, shared);
    if (print)
        fprintf(stderr,
                "  speed attn %-10s %2d/%d heads d%-5d x%d (shared %4d): %.3f ms per layer one call per "
                "sequence, %.3f ms batched = %.1f GB/s of distinct KV (best of %d)\n",
                be->ops->name, n_head, n_kv, depth, n_seq, shared, best[0] / 1e6, best[1] / 1e6,
                (double)distinct / best[1], reps);
    for (int i = 0; i < n_seq; i++)
        for (int pg = 0; pg < np; pg++)
            if (i == 0 || pg >= nshared) free(pages[i][pg]);
    for (int i = 0; i < n_seq; i++) free(pages[i]);
    free(q), free(o1), free(o2);
}

static void test_speed(void) {
    static const uint32_t types[] = {ENG_TYPE_Q4_0, ENG_TYPE_Q4_1, ENG_TYPE_Q8_0,
                                     ENG_TYPE_Q4_K, ENG_TYPE_Q5_K, ENG_TYPE_Q6_K};
    const char *env = getenv("CACHET_KERN_BENCH");
    long reps = env ? strtol(env, NULL, 10) : 0;
    const int bench = reps > 0, print = bench || check_get()->verbose;
    const int64_t rows = bench ? 1024 : 64;    /* 1024 x 2048: about 1 MiB of q4_K, in L2 */
    static const int nts[] = {1, 2, 4, 8, 64}; /* decode steps of 1-8 sequences, a prompt */
    eng_simd lv[2];
    int nl = levels(lv);
    uint64_t rs = 11;
    for (int l = 0; l < nl; l++)
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            for (size_t j = 0; j < sizeof nts / sizeof nts[0]; j++)
                time_gemm(types[i], lv[l], 2048, rows, bench ? nts[j] : nts[j] % 17, bench ? (int)reps : 1,
                          print, &rs);
    for (int l = 0; l < nl; l++) { /* attention: SmolLM2's and the 1B preset's heads */
        eng_backend *be = NULL;
        util_err err;
        CHECK(eng_backend_cpu_new_level(&be, 1, lv[l], &err) == 0);
        if (!be) continue;
        if (bench) {
            time_attn(be, 9, 3, 4096, 1, 0, (int)reps, print, &rs);
            time_attn(be, 32, 8, 4096, 1, 0, (int)reps, print, &rs);
            time_attn(be, 32, 8, 1520, 8, 1504, (int)reps, print, &rs);
        } else { /* three sequences sharing 32 pages (two pieces), private tails of 3 lengths */
            time_attn(be, 9, 3, 560, 3, 512, 1, print, &rs);
        }
        eng_backend_free(be);
    }
}

void test_kernels(void) {
    CHECK_CASE(levels) test_levels();
    CHECK_CASE(dots) test_dots();
    CHECK_CASE(q8k_prep) test_q8k_prep();
    CHECK_CASE(tiles) test_tiles();
    CHECK_CASE(backend_ops) test_backend_ops();
    CHECK_CASE(speed) test_speed();
}
