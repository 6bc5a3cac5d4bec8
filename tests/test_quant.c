/* tests/test_quant.c: the quant traits tables (generic and CPU) and their scalar references: the
 * reference test vectors, dequantization goldens from the gguf Python package
 * (synthetic blocks and real model rows, bit-exact), dot products against a
 * double-precision reference, activation quantizer error bounds and rounding,
 * and exhaustive f16/bf16 conversion checks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/cpu/quant_cpu.h"
#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "../engine/quant_impl.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "helpers.h"

/* --- helpers ------------------------------------------------------------ */

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Where a type keeps its f16 scale (d) and its second f16 field (m or dmin). */
static void scale_fields(uint32_t type, int *d_off, int *m_off) {
    *m_off = -1;
    *d_off = 0;
    if (type == ENG_TYPE_Q4_1 || type == ENG_TYPE_Q5_1 || type == ENG_TYPE_Q4_K || type == ENG_TYPE_Q5_K)
        *m_off = 2;
    if (type == ENG_TYPE_Q6_K) *d_off = 208;
}

/* --- traits table --------------------------------------------------------- */

static void test_table(void) {
    static const struct {
        uint32_t t;
        int blck;
        size_t bytes;
        int supported;
        uint32_t vdt;
    } want[] = {
        {ENG_TYPE_F32, 1, 4, 1, ENG_TYPE_F32},
        {ENG_TYPE_F16, 1, 2, 1, ENG_TYPE_F16},
        {ENG_TYPE_BF16, 1, 2, 1, ENG_TYPE_BF16},
        {ENG_TYPE_Q4_0, 32, 18, 1, ENG_TYPE_Q8_0},
        {ENG_TYPE_Q4_1, 32, 20, 1, ENG_TYPE_Q8_1},
        {ENG_TYPE_Q5_0, 32, 22, 1, ENG_TYPE_Q8_0},
        {ENG_TYPE_Q5_1, 32, 24, 1, ENG_TYPE_Q8_1},
        {ENG_TYPE_Q8_0, 32, 34, 1, ENG_TYPE_Q8_0},
        {ENG_TYPE_Q8_1, 32, 36, 1, ENG_TYPE_Q8_1},
        {ENG_TYPE_Q2_K, 256, 84, 0, 0},
        {ENG_TYPE_Q3_K, 256, 110, 0, 0},
        {ENG_TYPE_Q4_K, 256, 144, 1, ENG_TYPE_Q8_K},
        {ENG_TYPE_Q5_K, 256, 176, 1, ENG_TYPE_Q8_K},
        {ENG_TYPE_Q6_K, 256, 210, 1, ENG_TYPE_Q8_K},
        {ENG_TYPE_Q8_K, 256, 292, 1, ENG_TYPE_Q8_K},
        {20, 32, 18, 0, 0} /* iq4_nl */,
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const eng_type_traits *t = eng_type_get(want[i].t);
        CHECK_MSG(t != NULL, "type %u known", want[i].t);
        if (!t) continue;
        CHECK_MSG(t->blck == want[i].blck && t->bytes == want[i].bytes, "type %s: blck %d bytes %zu", t->name,
                  t->blck, t->bytes);
        CHECK_EQ_INT(t->supported, want[i].supported);
        if (!want[i].supported) continue;
        CHECK_MSG(t->to_float != NULL, "%s has to_float", t->name);
        int is_act = want[i].t == ENG_TYPE_Q8_1 || want[i].t == ENG_TYPE_Q8_K;
        const eng_type_traits_cpu *c = eng_type_get_cpu(want[i].t);
        CHECK_MSG(c != NULL, "%s has cpu traits", t->name);
        if (!c) continue;
        CHECK_MSG(is_act ? c->vec_dot == NULL && c->gemm == NULL : c->vec_dot != NULL && c->gemm != NULL,
                  "%s vec_dot", t->name);
        CHECK_MSG((uint32_t)t->vec_dot_type == want[i].vdt, "%s vec_dot_type", t->name);
        const eng_type_traits *v = eng_type_get(t->vec_dot_type);
        const eng_type_traits_cpu *vc = eng_type_get_cpu(t->vec_dot_type);
        CHECK_MSG(v && v->from_float && v->to_float && vc && vc->act_bytes, "%s activation format usable",
                  t->name);
        /* a reference activation row: the format's own row, 64-byte padded */
        if (vc && vc->act_bytes)
            CHECK_EQ_INT(vc->act_bytes(512), (eng_type_row_size(t->vec_dot_type, 512) + 63) / 64 * 64);
        eng_type_kernels k;
        CHECK_EQ_INT(eng_type_kernels_get(want[i].t, ENG_SIMD_SCALAR, &k),
                     is_act ? UTIL_EUNSUPPORTED : UTIL_OK);
    }
    /* the ids the engine only names have no CPU traits and no kernels */
    eng_type_kernels k;
    CHECK(eng_type_get_cpu(ENG_TYPE_Q2_K) == NULL && eng_type_get_cpu(ENG_TYPE_IQ4_NL) == NULL);
    CHECK_EQ_INT(eng_type_kernels_get(ENG_TYPE_Q2_K, ENG_SIMD_AVX512, &k), UTIL_EUNSUPPORTED);
    CHECK_EQ_INT(eng_type_kernels_get(ENG_TYPE_COUNT, ENG_SIMD_SCALAR, &k), UTIL_EUNSUPPORTED);
    /* every known id: its size is its block struct's, listed as ggml's */
    CHECK_EQ_INT(eng_type_get(ENG_TYPE_IQ4_XS)->bytes, 136);
    CHECK_EQ_INT(eng_type_get(ENG_TYPE_TQ1_0)->bytes, 54);
    CHECK_EQ_INT(eng_type_get(ENG_TYPE_MXFP4)->bytes, 17);
    CHECK_EQ_INT(eng_type_get(ENG_TYPE_I64)->bytes, 8);
    CHECK(eng_type_get(4) == NULL && eng_type_get(5) == NULL && eng_type_get(31) == NULL);
    CHECK(eng_type_get(ENG_TYPE_COUNT) == NULL && eng_type_get(UINT32_MAX) == NULL);
    CHECK_EQ_STR(eng_type_get(ENG_TYPE_Q4_1)->name, "q4_1");
    CHECK_EQ_INT(eng_type_row_size(ENG_TYPE_Q4_1, 576), 360);
    CHECK_EQ_INT(eng_type_row_size(ENG_TYPE_Q8_0, 576), 612);
    CHECK_EQ_INT(eng_type_row_size(ENG_TYPE_Q6_K, 512), 420);
    CHECK_EQ_INT(eng_type_row_size(ENG_TYPE_F16, 7), 14);
    CHECK_EQ_INT(eng_type_row_size(ENG_TYPE_Q4_K, 576), 0); /* not a multiple of 256 */
    CHECK_EQ_INT(eng_type_row_size(4, 32), 0);
}

/* --- (a) reference test vectors (gguf-and-architectures.md §2) ---------- */

static void test_vectors(void) {
    static const struct {
        uint32_t t;
        float y[4], mid, last;
        double sum;
    } tv[] = {
        {ENG_TYPE_Q4_0, {-3, 2, 7, -4}, -3, 0, -21},
        {ENG_TYPE_Q4_1, {15.5f, 4.5f, 9.5f, 14.5f}, 9.5f, 12.5f, 261},
        {ENG_TYPE_Q5_0, {9, -2, 3, -8}, 14, 1, 15},
        {ENG_TYPE_Q5_1, {19.5f, 24.5f, 29.5f, 18.5f}, 19.5f, 5.5f, 521},
        {ENG_TYPE_Q8_0, {85, 122, -97, -60}, -91, -48, -176},
        {ENG_TYPE_Q4_K, {315.5f, -25.5f, 129.5f, 284.5f}, 423, 48.5f, 54440},
        {ENG_TYPE_Q5_K, {811.5f, -25.5f, 625.5f, 284.5f}, 1047, 108.5f, 116216},
        {ENG_TYPE_Q6_K, {-1431, 1696, 583, -530}, -351, -60, 4612},
    };
    for (size_t k = 0; k < sizeof tv / sizeof tv[0]; k++) {
        const eng_type_traits *t = eng_type_get(tv[k].t);
        uint8_t b[256];
        float y[256];
        int d_off, m_off;
        for (size_t i = 0; i < t->bytes; i++) b[i] = (uint8_t)((37 * i + 11) & 0xFF);
        scale_fields(tv[k].t, &d_off, &m_off);
        put16(b + d_off, 0x3C00);
        if (m_off >= 0) put16(b + m_off, 0x3800);
        t->to_float(b, y, t->blck);
        double sum = 0;
        for (int i = 0; i < t->blck; i++) sum += y[i];
        int ok = y[0] == tv[k].y[0] && y[1] == tv[k].y[1] && y[2] == tv[k].y[2] && y[3] == tv[k].y[3] &&
                 y[t->blck / 2] == tv[k].mid && y[t->blck - 1] == tv[k].last && sum == tv[k].sum;
        CHECK_MSG(ok, "test vector %s: got %g %g %g %g | %g | %g | sum %g", t->name, y[0], y[1], y[2], y[3],
                  y[t->blck / 2], y[t->blck - 1], sum);
    }
}

/* --- (b, c) goldens from the gguf Python package ------------------------ */

static char *read_golden(const char *name, size_t *len) {
    char path[4096];
    char *data;
    util_err e;
    snprintf(path, sizeof path, "%s/tests/golden/%s", check_root(), name);
    return util_read_file(&data, len, path, &e) == 0 ? data : NULL;
}

static int split_tabs(char *line, char **f, int max) {
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

/* Compares to_float of raw against want bit for bit; returns mismatches. */
static int compare_dequant(const eng_type_traits *t, const void *raw, const float *want, int64_t n,
                           const char *what) {
    float *y = malloc((size_t)n * sizeof *y);
    int bad = 0;
    t->to_float(raw, y, n);
    for (int64_t i = 0; i < n; i++)
        if (fbits(y[i]) != fbits(want[i])) {
            if (bad++ < 3)
                fprintf(stderr, "  %s [%lld]: %.9g (0x%08x), golden %.9g (0x%08x)\n", what, (long long)i,
                        y[i], fbits(y[i]), want[i], fbits(want[i]));
        }
    free(y);
    return bad;
}

static void test_goldens(const eng_gguf *model) {
    size_t len;
    char *idx = read_golden("quant_index.tsv", &len);
    if (!idx) {
        CHECK_SKIP("tests/golden/quant_index.tsv missing: no dequantization goldens "
                   "(tests/golden/gen_quant.py writes them)");
        return;
    }
    int n_syn = 0, n_real = 0;
    for (char *line = idx, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (line[0] == '#' || !line[0]) continue;
        char *f[13];
        if (split_tabs(line, f, 13) < 12) {
            CHECK_MSG(0, "quant_index.tsv: short line '%s'", line);
            continue;
        }
        uint32_t type = (uint32_t)strtoul(f[3], NULL, 10);
        long long n_blocks = strtoll(f[6], NULL, 10), n_vals = strtoll(f[7], NULL, 10);
        const eng_type_traits *t = eng_type_get(type);
        CHECK_MSG(t && t->supported && t->blck == strtol(f[4], NULL, 10) &&
                      (long)t->bytes == strtol(f[5], NULL, 10),
                  "golden %s: type %s known with the same block size", f[0], f[2]);
        if (!t || !t->supported) continue;
        size_t rlen, flen;
        char *raw = read_golden(f[10], &rlen);
        char *vals = read_golden(f[0], &flen);
        CHECK_MSG(raw && vals && rlen == (size_t)n_blocks * t->bytes && flen == (size_t)n_vals * 4 &&
                      n_vals == n_blocks * t->blck,
                  "golden %s: files present and sized as indexed", f[0]);
        if (raw && vals && flen == (size_t)n_vals * 4 && rlen == (size_t)n_blocks * t->bytes) {
            int bad = compare_dequant(t, raw, (const float *)vals, n_vals, f[0]);
            CHECK_MSG(bad == 0, "golden %s: %d of %lld values differ", f[0], bad, n_vals);
            if (strcmp(f[1], "real") == 0) {
                n_real++;
                /* (c) the same rows straight from the model file */
                const eng_gguf_tensor *tt = model ? eng_gguf_find_tensor(model, f[8]) : NULL;
                CHECK_MSG(!model || tt, "model has tensor '%s'", f[8]);
                if (tt) {
                    CHECK_EQ_INT(tt->type, type);
                    CHECK_EQ_INT(eng_gguf_data_offset(model) + tt->offset, strtoull(f[11], NULL, 10));
                    CHECK_MSG(tt->nbytes >= rlen && memcmp(tt->data, raw, rlen) == 0,
                              "golden %s bytes equal the model's", f[10]);
                    bad = compare_dequant(t, tt->data, (const float *)vals, n_vals, f[8]);
                    CHECK_MSG(bad == 0, "model rows of %s: %d values differ", f[8], bad);
                }
            } else {
                n_syn++;
            }
        }
        free(raw);
        free(vals);
    }
    CHECK_MSG(n_syn >= 10 && n_real >= 3, "goldens compared: %d synthetic, %d real", n_syn, n_real);
    free(idx);
}

/* --- (d) dot products against double precision -------------------------- */

/* A random row of n values of weight type t with sane scales. */
static void random_row(uint32_t type, uint8_t *w, int64_t n, uint64_t *rs) {
    const eng_type_traits *t = eng_type_get(type);
    if (t->blck == 1) {
        float *x = malloc((size_t)n * sizeof *x);
        for (int64_t i = 0; i < n; i++) x[i] = th_rng_unit(rs) * 0.5f;
        t->from_float(x, w, n);
        free(x);
        return;
    }
    int64_t nb = n / t->blck;
    int d_off, m_off;
    scale_fields(type, &d_off, &m_off);
    for (size_t i = 0; i < (size_t)nb * t->bytes; i++) w[i] = (uint8_t)th_rng_next(rs);
    for (int64_t b = 0; b < nb; b++) {
        uint8_t *blk = w + (size_t)b * t->bytes;
        float d = ldexpf(1.0f + 0.5f * th_rng_unit(rs), -6 - (int)(th_rng_next(rs) % 5));
        put16(blk + d_off, eng_f32_to_f16(type == ENG_TYPE_Q6_K || th_rng_next(rs) % 2 ? d : -d));
        if (m_off >= 0) {
            float m = (type == ENG_TYPE_Q4_K || type == ENG_TYPE_Q5_K) ? fabsf(d) : 0.1f * th_rng_unit(rs);
            put16(blk + m_off, eng_f32_to_f16(m));
        }
    }
}

/* Largest activation-quantization error of element i (|dequant - x| bound). */
static double act_err_bound(uint32_t vdt, const void *act, const float *x, int64_t i) {
    const uint8_t *a = act;
    switch (vdt) {
    case ENG_TYPE_F32: return 0;
    case ENG_TYPE_F16: return fabs(x[i]) * ldexp(1, -11) + ldexp(1, -25);
    case ENG_TYPE_BF16: return fabs(x[i]) * ldexp(1, -8);
    case ENG_TYPE_Q8_0:
    case ENG_TYPE_Q8_1: {
        /* d/2 from rounding, plus |q| times the f16 rounding error of d itself */
        const uint8_t *blk = a + (size_t)(i / 32) * (vdt == ENG_TYPE_Q8_0 ? 34 : 36);
        float amax = 0;
        for (int64_t j = i / 32 * 32; j < i / 32 * 32 + 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        double d = amax / 127.0f, d16 = eng_f16_to_f32(get16(blk));
        return (d / 2 + 127 * fabs(d16 - d)) * (1 + 1e-6);
    }
    case ENG_TYPE_Q8_K: {
        const eng_block_q8_k *b = (const eng_block_q8_k *)a + i / 256;
        return fabs(b->d) * 0.5 * (1 + 1e-5);
    }
    }
    return INFINITY;
}

static void check_dot(uint32_t type, const uint8_t *w, const float *x, int64_t n, const char *what) {
    const eng_type_traits *t = eng_type_get(type);
    const eng_type_traits *v = eng_type_get(t->vec_dot_type);
    void *act = malloc(eng_type_row_size(t->vec_dot_type, n));
    float *wd = malloc((size_t)n * sizeof *wd), *ad = malloc((size_t)n * sizeof *ad);
    v->from_float(x, act, n);
    v->to_float(act, ad, n);
    t->to_float(w, wd, n);
    float s = NAN, s2 = NAN;
    eng_type_get_cpu(type)->vec_dot(n, &s, w, act);
    eng_type_get_cpu(type)->vec_dot(n, &s2, w, act);
    /* the offsets (m, or dmin * min) of each weight: dequantized with q = 0 */
    float *off = calloc((size_t)n, sizeof *off);
    int q0 = 0, q1 = 0;
    if (type == ENG_TYPE_Q4_1) q0 = 4, q1 = 20;
    if (type == ENG_TYPE_Q5_1) q0 = 4, q1 = 24;
    if (type == ENG_TYPE_Q4_K) q0 = 16, q1 = 144;
    if (type == ENG_TYPE_Q5_K) q0 = 16, q1 = 176;
    if (q1) {
        size_t rb = eng_type_row_size(type, n);
        uint8_t *wz = malloc(rb);
        memcpy(wz, w, rb);
        for (size_t b = 0; b < rb; b += t->bytes) memset(wz + b + q0, 0, (size_t)(q1 - q0));
        t->to_float(wz, off, n);
        free(wz);
    }
    double ref = 0, ref_x = 0, mag = 0, act_tol = 0, s_tol = 0;
    for (int64_t i = 0; i < n; i++) {
        ref += (double)wd[i] * ad[i];
        ref_x += (double)wd[i] * x[i];
        mag += (fabs((double)wd[i]) + 2 * fabs((double)off[i])) * fabs((double)ad[i]);
        act_tol += fabs(wd[i]) * act_err_bound(t->vec_dot_type, act, x, i);
    }
    free(off);
    if (t->vec_dot_type == ENG_TYPE_Q8_1) {
        /* m * s uses s = f16(d * sum q) instead of sum(f16(d) * q) */
        for (int64_t b = 0; b < n / 32; b++) {
            const eng_block_q8_1 *ab = (const eng_block_q8_1 *)act + b;
            double m = eng_f16_to_f32(get16(w + (size_t)b * t->bytes + 2)), sum = 0;
            for (int j = 0; j < 32; j++) sum += ab->qs[j];
            s_tol += fabs(m) * fabs(sum * eng_f16_to_f32(ab->d)) * ldexp(1, -10);
        }
    }
    /* float rounding: one per addition (n for float types, one per block for
     * quant types, whose block sums are exact integers) plus a few per block for
     * the scale products, each at most 2^-24 of the magnitude (parts counted
     * separately where a q term and an offset term partly cancel) */
    double ops = (t->blck == 1 ? (double)n : (double)(n / t->blck)) + 8;
    double tol = ops * ldexp(1, -24) * mag + s_tol + 1e-30;
    CHECK_MSG(fbits(s) == fbits(s2), "%s: vec_dot is deterministic", what);
    CHECK_MSG(fabs(s - ref) <= tol, "%s %s: vec_dot %.9g vs double %.9g (tol %.3g)", what, t->name, s, ref,
              tol);
    CHECK_MSG(fabs(s - ref_x) <= tol + act_tol,
              "%s %s: vec_dot %.9g vs unquantized activations %.9g (tol %.3g)", what, t->name, s, ref_x,
              tol + act_tol);
    free(act);
    free(wd);
    free(ad);
}

static void test_dots(const eng_gguf *model) {
    static const uint32_t types[] = {ENG_TYPE_F32,  ENG_TYPE_F16,  ENG_TYPE_BF16, ENG_TYPE_Q4_0,
                                     ENG_TYPE_Q4_1, ENG_TYPE_Q5_0, ENG_TYPE_Q5_1, ENG_TYPE_Q8_0,
                                     ENG_TYPE_Q4_K, ENG_TYPE_Q5_K, ENG_TYPE_Q6_K};
    enum { N = 1024 };
    uint64_t rs = 12345;
    uint8_t *w = malloc(N * 4);
    float x[N];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        for (int rep = 0; rep < 8; rep++) {
            random_row(types[k], w, N, &rs);
            for (int i = 0; i < N; i++) x[i] = th_rng_unit(&rs) * (rep == 3 ? 100.0f : 1.0f);
            if (rep == 5) x[th_rng_next(&rs) % N] = 50.0f; /* an outlier in one block */
            if (rep == 6)
                for (int i = 0; i < 256; i++) x[i] = 0; /* all-zero blocks */
            check_dot(types[k], w, x, N, "random");
        }
    free(w);
    /* real rows: token_embd (q8_0) and blk.0.attn_q (q4_1) */
    static const char *const names[] = {"token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_down.weight"};
    for (size_t k = 0; model && k < sizeof names / sizeof names[0]; k++) {
        const eng_gguf_tensor *t = eng_gguf_find_tensor(model, names[k]);
        CHECK_MSG(t != NULL, "model has '%s'", names[k]);
        if (!t) continue;
        float *xr = malloc((size_t)t->ne[0] * sizeof *xr);
        for (int r = 0; r < 4; r++) {
            for (int64_t i = 0; i < t->ne[0]; i++) xr[i] = th_rng_unit(&rs);
            check_dot(t->type, (const uint8_t *)t->data + (size_t)(r * 97) * t->row_bytes, xr, t->ne[0],
                      names[k]);
        }
        free(xr);
    }
}

/* --- (f) activation quantizers ------------------------------------------- */

static void test_act_quant(void) {
    enum { N = 512 };
    uint64_t rs = 777;
    float x[N], y[N];
    static const uint32_t fmts[] = {ENG_TYPE_Q8_0, ENG_TYPE_Q8_1, ENG_TYPE_Q8_K};
    for (size_t k = 0; k < 3; k++) {
        const eng_type_traits *t = eng_type_get(fmts[k]);
        uint8_t buf[N / 32 * 36 + N / 256 * 292];
        for (int rep = 0; rep < 20; rep++) {
            float scale = ldexpf(1.0f, (int)(th_rng_next(&rs) % 20) - 10);
            for (int i = 0; i < N; i++) x[i] = th_rng_unit(&rs) * scale;
            if (rep == 1) memset(x, 0, sizeof x);
            if (rep == 2) x[7] = -1000.0f * scale; /* negative extreme */
            if (rep == 3)
                for (int i = 0; i < N; i++) x[i] = (float)(i % 37) - 18.0f;
            t->from_float(x, buf, N);
            t->to_float(buf, y, N);
            int bad = 0;
            for (int i = 0; i < N; i++) {
                double bound = act_err_bound(fmts[k], buf, x, i) * (1 + 1e-6);
                if (fabs((double)y[i] - x[i]) > bound && bad++ < 3)
                    fprintf(stderr, "  %s [%d]: %g -> %g (bound %g)\n", t->name, i, x[i], y[i], bound);
            }
            CHECK_MSG(bad == 0, "%s rep %d: %d values beyond scale/2", t->name, rep, bad);
        }
        /* structure: q8_1 s = f16(d * sum), q8_K bsums and sign of d */
        for (int i = 0; i < N; i++) x[i] = th_rng_unit(&rs);
        t->from_float(x, buf, N);
        if (fmts[k] == ENG_TYPE_Q8_1) {
            const eng_block_q8_1 *b = (const eng_block_q8_1 *)buf;
            float amax = 0;
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                amax = fmaxf(amax, fabsf(x[j]));
                sum += b->qs[j];
            }
            CHECK_EQ_INT(b->s, eng_f32_to_f16((float)sum * (amax / 127.0f)));
            CHECK_EQ_INT(b->d, eng_f32_to_f16(amax / 127.0f));
        }
        if (fmts[k] == ENG_TYPE_Q8_K) {
            const eng_block_q8_k *b = (const eng_block_q8_k *)buf;
            int ok = 1;
            for (int g = 0; g < 16; g++) {
                int s = 0;
                for (int l = 0; l < 16; l++) s += b->qs[16 * g + l];
                ok &= s == b->bsums[g];
            }
            CHECK_MSG(ok, "q8_K bsums are the 16-sums of qs");
        }
    }
    /* rounding: q8_0/q8_1 round half away from zero (roundf), q8_K half to even */
    float h[256] = {127.0f, 2.5f, -2.5f, 3.5f, 0.5f, -0.5f};
    eng_block_q8_0 b0[8];
    eng_type_get(ENG_TYPE_Q8_0)->from_float(h, b0, 32);
    CHECK(b0[0].d == 0x3C00 && b0[0].qs[0] == 127 && b0[0].qs[1] == 3 && b0[0].qs[2] == -3 &&
          b0[0].qs[3] == 4 && b0[0].qs[4] == 1 && b0[0].qs[5] == -1);
    eng_block_q8_k bk;
    eng_type_get(ENG_TYPE_Q8_K)->from_float(h, &bk, 256);
    /* max = 127 -> iscale = -1, d = -1: q = rint(-x) */
    CHECK(bk.d == -1.0f && bk.qs[0] == -127 && bk.qs[1] == -2 && bk.qs[2] == 2 && bk.qs[3] == -4 &&
          bk.qs[4] == 0 && bk.qs[5] == 0);
    /* non-finite activations: no undefined behavior, just some values */
    h[9] = NAN;
    h[10] = INFINITY;
    eng_type_get(ENG_TYPE_Q8_0)->from_float(h, b0, 32);
    eng_type_get(ENG_TYPE_Q8_K)->from_float(h, &bk, 256);
    CHECK(1);
}

/* --- (e) f16 / bf16 -------------------------------------------------------- */

static void test_half(void) {
    int bad_rt = 0, bad_nan = 0, bad_bf = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = eng_f16_to_f32((uint16_t)h);
        int is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
        if (is_nan) {
            uint16_t r = eng_f32_to_f16(f);
            bad_nan += !isnan(f) || (r & 0x7FFF) <= 0x7C00 || (r & 0x8000) != (h & 0x8000);
        } else {
            bad_rt += eng_f32_to_f16(f) != h;
        }
        float g = eng_bf16_to_f32((uint16_t)h);
        int bnan = (h & 0x7F80) == 0x7F80 && (h & 0x7F);
        if (bnan)
            bad_bf += !isnan(g) || !isnan(eng_bf16_to_f32(eng_f32_to_bf16(g)));
        else
            bad_bf += eng_f32_to_bf16(g) != h || fbits(g) != h << 16;
    }
    CHECK_MSG(bad_rt == 0, "f16 round trip: %d mismatches", bad_rt);
    CHECK_MSG(bad_nan == 0, "f16 nan round trip: %d mismatches", bad_nan);
    CHECK_MSG(bad_bf == 0, "bf16 round trip: %d mismatches", bad_bf);
    /* values, subnormals included */
    CHECK(eng_f16_to_f32(0x0001) == ldexpf(1, -24) && eng_f16_to_f32(0x03FF) == ldexpf(1023, -24));
    CHECK(eng_f16_to_f32(0x0400) == ldexpf(1, -14) && eng_f16_to_f32(0x7BFF) == 65504.0f);
    CHECK(eng_f16_to_f32(0xC000) == -2.0f && isinf(eng_f16_to_f32(0x7C00)));
    CHECK(fbits(eng_f16_to_f32(0x8000)) == 0x80000000u);
    /* rounding to nearest even: at, below and above every midpoint between
     * consecutive non-negative f16 values (65504 -> inf included) */
    int bad_mid = 0;
    for (uint32_t h = 0; h < 0x7C00; h++) {
        float a = eng_f16_to_f32((uint16_t)h), b = eng_f16_to_f32((uint16_t)(h + 1));
        if (h + 1 == 0x7C00) b = 65536.0f; /* the rounding boundary of inf */
        float mid = (a + b) / 2;           /* exact: 12 significant bits */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        bad_mid += eng_f32_to_f16(mid) != even;
        bad_mid += eng_f32_to_f16(nextafterf(mid, 0)) != h;
        bad_mid += eng_f32_to_f16(nextafterf(mid, INFINITY)) != h + 1;
        bad_mid += eng_f32_to_f16(-nextafterf(mid, INFINITY)) != ((h + 1) | 0x8000);
    }
    CHECK_MSG(bad_mid == 0, "f16 round-to-nearest-even: %d mismatches", bad_mid);
    CHECK(eng_f32_to_f16(1e-10f) == 0 && eng_f32_to_f16(-1e-10f) == 0x8000);
    CHECK(eng_f32_to_f16(1e10f) == 0x7C00 && eng_f32_to_f16(-INFINITY) == 0xFC00);
    CHECK((eng_f32_to_f16(NAN) & 0x7E00) == 0x7E00);
    /* bf16 rounding: ties to even, overflow to inf, nan stays nan */
    CHECK(eng_f32_to_bf16(bitsf(0x3F808000u)) == 0x3F80); /* tie, even below */
    CHECK(eng_f32_to_bf16(bitsf(0x3F818000u)) == 0x3F82); /* tie, even above */
    CHECK(eng_f32_to_bf16(bitsf(0x3F808001u)) == 0x3F81);
    CHECK(eng_f32_to_bf16(bitsf(0x7F7FFFFFu)) == 0x7F80);
    CHECK(isnan(eng_bf16_to_f32(eng_f32_to_bf16(bitsf(0x7F800001u)))));
#ifdef __FLT16_MAX__
    /* the compiler's own conversion as a second opinion on random floats */
    uint64_t rs = 99;
    int bad_cc = 0;
    for (int i = 0; i < 200000; i++) {
        float f = bitsf((uint32_t)th_rng_next(&rs));
        if (isnan(f)) continue;
        _Float16 c = (_Float16)f;
        uint16_t cb;
        memcpy(&cb, &c, 2);
        bad_cc += eng_f32_to_f16(f) != cb;
    }
    CHECK_MSG(bad_cc == 0, "f16 conversion vs the compiler's _Float16: %d mismatches", bad_cc);
#endif
}

void test_quant(void) {
    util_err e;
    eng_gguf *model = NULL;
    const char *mp = check_model_path();
    CHECK_MSG(mp != NULL, "model missing: run `make model`");
    if (mp) CHECK_MSG(eng_gguf_open(&model, mp, &e) == 0, "open model: %s", e.msg);
    CHECK_CASE(table) test_table();
    CHECK_CASE(vectors) test_vectors();
    CHECK_CASE(goldens) test_goldens(model);
    CHECK_CASE(dots) test_dots(model);
    CHECK_CASE(act_quant) test_act_quant();
    CHECK_CASE(half) test_half();
    eng_gguf_free(model);
}
