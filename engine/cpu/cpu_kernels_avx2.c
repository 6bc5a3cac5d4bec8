/* engine/cpu/cpu_kernels_avx2.c: AVX2+FMA+F16C versions of the CPU backend's
 * non-matmul kernels: attention per (token, head) with a fixed order over keys
 * (f16, q8_0 or q4_0 KV rows), a polynomial exp, RMSNorm with a double-precision
 * sum, SwiGLU, f32 -> f16. Each result depends only on its inputs (never on
 * batch size or thread), and differs from the scalar reference by summation
 * order and exp rounding (see tests). */
#include "cpu_kernels.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../quant_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2_FN     __attribute__((target("avx2,fma,f16c")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))

/* exp(x) for 8 lanes (Cephes expf: range reduction by ln 2 in two parts, degree-6
 * polynomial); about 1 ulp; 0 below -87.3, clamped above 88. */
AVX2_INLINE __m256 exp8(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.3365447504f);
    const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), lo);
    __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
    return _mm256_andnot_ps(under, y);
}

AVX2_INLINE float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Four dot products from four 8-lane accumulators, each reduced by the same tree
 * ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) whatever its slot. */
AVX2_INLINE __m128 reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* KV rows as the pages hold them (f16, q8_0 or q4_0), 8 values at a time,
 * dequantized as they load ((float)q * d, quant.c's formula); see the choice
 * of dequantizing over integer dots in cpu_kernels_avx512.c. */
enum { KV_F16 = 0, KV_Q8_0 = 1, KV_Q4_0 = 2 };

static int kv_kind(uint32_t type) {
    return type == ENG_TYPE_Q8_0 ? KV_Q8_0 : type == ENG_TYPE_Q4_0 ? KV_Q4_0 : KV_F16;
}

AVX2_INLINE float half_at(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
}

/* Values d .. d+7 of a row (d a multiple of 8). */
AVX2_INLINE __m256 kv_load8(const uint8_t *row, int d, const int kind) {
    if (kind == KV_F16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 2 * (size_t)d)));
    if (kind == KV_Q8_0) {
        const uint8_t *b = row + (size_t)(d / ENG_QK) * sizeof(eng_block_q8_0);
        const __m128i q = _mm_loadl_epi64((const __m128i *)(b + offsetof(eng_block_q8_0, qs) + d % ENG_QK));
        return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), _mm256_set1_ps(half_at(b)));
    }
    const uint8_t *b = row + (size_t)(d / ENG_QK) * sizeof(eng_block_q4_0);
    const int j = d % ENG_QK;
    __m256i x = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64((const __m128i *)(b + offsetof(eng_block_q4_0, qs) + j % 16)));
    x = j >= 16 ? _mm256_srli_epi32(x, 4) : _mm256_and_si256(x, _mm256_set1_epi32(0xF));
    x = _mm256_sub_epi32(x, _mm256_set1_epi32(8));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(x), _mm256_set1_ps(half_at(b)));
}

/* Scores of keys lo + j, j < nk, in blocks of four (the last block repeats the last
 * key so every score goes through the same code). */
AVX2_INLINE void attn_scores(const eng_attn_args *a, const float *q, int g, int lo, int nk, float *sc,
                             const int kind) {
    const int hd = a->head_dim;
    const size_t off = eng_type_row_size(a->kv->type_k, (int64_t)g * hd);
    for (int j0 = 0; j0 < nk; j0 += 4) {
        const uint8_t *kp[4];
        for (int i = 0; i < 4; i++) {
            int j = j0 + i < nk ? j0 + i : nk - 1;
            kp[i] = eng_kv_k(a->kv, a->layer, lo + j) + off;
        }
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
        for (int d = 0; d < hd; d += 8) {
            __m256 qv = _mm256_loadu_ps(q + d);
            c0 = _mm256_fmadd_ps(qv, kv_load8(kp[0], d, kind), c0);
            c1 = _mm256_fmadd_ps(qv, kv_load8(kp[1], d, kind), c1);
            c2 = _mm256_fmadd_ps(qv, kv_load8(kp[2], d, kind), c2);
            c3 = _mm256_fmadd_ps(qv, kv_load8(kp[3], d, kind), c3);
        }
        __m128 s = _mm_mul_ps(reduce4(c0, c1, c2, c3), _mm_set1_ps(a->scale));
        float tmp[4];
        _mm_storeu_ps(tmp, s);
        for (int i = 0; i < 4 && j0 + i < nk; i++) sc[j0 + i] = tmp[i];
    }
}

/* sc[j] = exp(sc[j] - max) in place; returns their sum (8-lane partial sums from
 * j = 0, then the fixed tree). sc has room for nk rounded up to 8. */
AVX2_INLINE float softmax_exp(float *sc, int nk) {
    float mx = -INFINITY;
    for (int j = 0; j < nk; j++) mx = sc[j] > mx ? sc[j] : mx;
    for (int j = nk; j < ((nk + 7) & ~7); j++) sc[j] = -INFINITY;
    const __m256 vmx = _mm256_set1_ps(mx);
    __m256 sum = _mm256_setzero_ps();
    for (int j = 0; j < nk; j += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(sc + j), vmx));
        _mm256_storeu_ps(sc + j, e);
        sum = _mm256_add_ps(sum, e);
    }
    return hsum8(sum);
}

AVX2_INLINE void attn_head_body(const eng_attn_args *a, int t, int h, float *sc, const int kk, const int kv) {
    const int hd = a->head_dim, p = a->pos0 + t;
    const int g = h / (a->n_head / a->n_kv_head);
    const int lo = a->window > 0 && p - a->window + 1 > 0 ? p - a->window + 1 : 0;
    const int nk = p - lo + 1;
    const size_t voff = eng_type_row_size(a->kv->type_v, (int64_t)g * hd);
    const float *q = a->q + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float *o = a->out + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    attn_scores(a, q, g, lo, nk, sc, kk);
    const float inv = 1.0f / softmax_exp(sc, nk);
    /* out = sum_j (e_j / sum) v_j, over keys in order, 64 dims at a time */
    for (int d0 = 0; d0 < hd; d0 += 64) {
        const int nd = hd - d0 < 64 ? (hd - d0) / 8 : 8;
        __m256 acc[8];
        for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();
        for (int j = 0; j < nk; j++) {
            const uint8_t *v = eng_kv_v(a->kv, a->layer, lo + j) + voff;
            const __m256 wj = _mm256_set1_ps(sc[j] * inv);
            for (int i = 0; i < nd; i++) acc[i] = _mm256_fmadd_ps(wj, kv_load8(v, d0 + 8 * i, kv), acc[i]);
        }
        for (int i = 0; i < nd; i++) _mm256_storeu_ps(o + d0 + 8 * i, acc[i]);
    }
}

/* One function per (K kind, V kind): the body with constant kinds. */
#define HEAD_FN(KK, KV)                                                                          \
    AVX2_FN static void attn_head_##KK##_##KV(const eng_attn_args *a, int t, int h, float *sc) { \
        attn_head_body(a, t, h, sc, KK, KV);                                                     \
    }
HEAD_FN(0, 0)
HEAD_FN(0, 1)
HEAD_FN(0, 2)
HEAD_FN(1, 0)
HEAD_FN(1, 1)
HEAD_FN(1, 2)
HEAD_FN(2, 0)
HEAD_FN(2, 1)
HEAD_FN(2, 2)
#undef HEAD_FN

static void attn_head(const eng_attn_args *a, int t, int h, float *sc) {
    static void (*const fns[3][3])(const eng_attn_args *, int, int,
                                   float *) = {{attn_head_0_0, attn_head_0_1, attn_head_0_2},
                                               {attn_head_1_0, attn_head_1_1, attn_head_1_2},
                                               {attn_head_2_0, attn_head_2_1, attn_head_2_2}};
    fns[kv_kind(a->kv->type_k)][kv_kind(a->kv->type_v)](a, t, h, sc);
}

AVX2_FN static void rmsnorm_row(float *y, const float *x, const float *w, int n, float eps) {
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
        s0 = _mm256_fmadd_pd(lo, lo, s0);
        s1 = _mm256_fmadd_pd(hi, hi, s1);
    }
    __m256d s = _mm256_add_pd(s0, s1);
    __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    double sum = _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
    for (; i < n; i++) sum += (double)x[i] * (double)x[i];
    const float mean = (float)(sum / n);
    const float sc = 1.0f / sqrtf(mean + eps);
    const __m256 vs = _mm256_set1_ps(sc);
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i,
                         _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
    for (; i < n; i++) y[i] = (x[i] * sc) * w[i];
}

AVX2_FN static void swiglu(float *out, const float *gate, const float *up, size_t n) {
    const __m256 one = _mm256_set1_ps(1.0f), neg = _mm256_set1_ps(-0.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(gate + i);
        __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, neg))));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
    }
    if (i < n) { /* the tail through the same vector code */
        float g[8] = {0}, u[8] = {0}, r[8];
        for (size_t k = i; k < n; k++) g[k - i] = gate[k], u[k - i] = up[k];
        __m256 gv = _mm256_loadu_ps(g);
        __m256 s = _mm256_div_ps(gv, _mm256_add_ps(one, exp8(_mm256_xor_ps(gv, neg))));
        _mm256_storeu_ps(r, _mm256_mul_ps(s, _mm256_loadu_ps(u)));
        for (size_t k = i; k < n; k++) out[k] = r[k - i];
    }
}

AVX2_FN static void f32_to_f16(uint16_t *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

void cpu_kern_avx2(cpu_kern *k) {
    k->attn_head = attn_head;
    k->rmsnorm_row = rmsnorm_row;
    k->swiglu = swiglu;
    k->f32_to_f16 = f32_to_f16;
}

#else /* not x86-64 */

void cpu_kern_avx2(cpu_kern *k) { (void)k; }

#endif
