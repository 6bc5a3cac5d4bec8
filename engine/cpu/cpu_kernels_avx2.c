/* engine/cpu/cpu_kernels_avx2.c: AVX2+FMA+F16C versions of the CPU backend's
 * non-matmul kernels: attention over one chunk of keys for several query heads
 * and kv heads at once (flash-decoding partials, as the AVX-512 kernel at 8
 * lanes) and per (token, head) for the head sizes the chunks do not take, with a
 * fixed order over keys (f16, q8_0 or q4_0 KV rows), a polynomial exp, RMSNorm
 * with a double-precision sum, SwiGLU, f16 <-> f32. Each result depends only on
 * its inputs (never on batch size or thread), and differs from the scalar
 * reference by summation order and exp rounding (see tests). */
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

/* --- attention over one chunk of keys (flash-decoding) -------------------------
 * The AVX-512 kernel's plan at 8 lanes (see cpu_kernels_avx512.c and the
 * contract in cpu_kernels.h): scores 8 keys at a time, each key's chunks of 8
 * values loaded (converted) once for the up to 4 query heads of its kv head, one
 * fma chain per (key, head), then a fixed transpose-and-add tree; the exps in
 * 8-lane partial sums from the chunk's first key; the value sums in key order,
 * even and odd keys in two sums added at the end. Each head's arithmetic is the
 * one it gets alone, whatever the heads, kv heads, tokens or sequences of the
 * call, and whether the rows come from the pages or converted to f32. */
enum { KV_F32 = 3, KU_MAX = 4, HD_MAX = 256, GROUP_MAX = CPU_ATTN_GROUP_MAX, HEADS_MAX = CPU_ATTN_HEADS_MAX };

/* Where row j of kv head g starts: in the converted f32 rows, or in the pages. */
typedef struct kv_src {
    const float *f32;
    const uint8_t *raw;
} kv_src;

/* Rows lo + j0 .. lo + j0 + 7 of kv head g (past lo + nk - 1: the last row
 * again) into r, addressed a page at a time; when prefetch is not 0, that many
 * bytes from the head's offset goff of each of the next 8 rows are prefetched
 * to L2, as in the AVX-512 kernel. */
AVX2_INLINE void kv_rows8(const eng_attn_args *a, const float *conv, size_t ld, int v, int g, size_t goff,
                          const size_t prefetch, int lo, int j0, int nk, kv_src *r) {
    const int last = lo + nk - 1;
    int pos = lo + j0;
    if (conv) {
        for (int i = 0; i < 8; i++, pos += pos < last) {
            r[i].f32 = conv + (size_t)pos * ld + (size_t)g * (size_t)a->head_dim;
            r[i].raw = NULL;
        }
        return;
    }
    const eng_kv_view *kv = a->kv;
    const int pt = kv->page_tokens;
    v = v && !kv->v_is_k; /* a latent view (absorbed MLA) has no V rows: its values are the K rows */
    const size_t row = v ? kv->v_row : kv->k_row;
    const size_t base = (size_t)a->layer * (size_t)pt * (kv->k_row + kv->v_row) +
                        (v ? (size_t)pt * kv->k_row : 0) + goff;
    int page = pos / pt, in = pos % pt;
    const uint8_t *p = (const uint8_t *)kv->pages[page] + base + (size_t)in * row;
    for (int i = 0; i < 8; i++) {
        r[i].raw = p;
        r[i].f32 = NULL;
        if (pos < last) {
            pos++;
            p = ++in == pt ? (in = 0, (const uint8_t *)kv->pages[++page] + base) : p + row;
        }
    }
    for (int i = 0; i < 8 && prefetch && pos < last; i++) {
        pos++;
        p = ++in == pt ? (in = 0, (const uint8_t *)kv->pages[++page] + base) : p + row;
        for (size_t b = 0; b < prefetch; b += 64) _mm_prefetch((const char *)p + b, _MM_HINT_T1);
    }
}

/* Prefetches `bytes` from goff of the V rows lo + j0 .. lo + j0 + 7 (at most to
 * lo + nk - 1) into L2: the scores pass fetches the values its keys will need. */
AVX2_INLINE void kv_prefetch8_l2(const eng_attn_args *a, size_t goff, size_t bytes, int lo, int j0, int nk) {
    const eng_kv_view *kv = a->kv;
    const int pt = kv->page_tokens, v = !kv->v_is_k;
    const size_t row = v ? kv->v_row : kv->k_row;
    const size_t base = (size_t)a->layer * (size_t)pt * (kv->k_row + kv->v_row) +
                        (v ? (size_t)pt * kv->k_row : 0) + goff;
    const int end = j0 + 8 < nk ? j0 + 8 : nk;
    for (int pos = lo + j0; pos < lo + end; pos++) {
        const uint8_t *p = (const uint8_t *)kv->pages[pos / pt] + base + (size_t)(pos % pt) * row;
        for (size_t b = 0; b < bytes; b += 64) _mm_prefetch((const char *)p + b, _MM_HINT_T1);
    }
}

/* Values 8c .. 8c + 7 of a row: the pages' conversion (kv_load8) or the f32 row. */
AVX2_INLINE __m256 kv_src_load(kv_src r, int c, const int kind) {
    return kind == KV_F32 ? _mm256_loadu_ps(r.f32 + 8 * c) : kv_load8(r.raw, 8 * c, kind);
}

/* Sums of 8 accumulators as one vector (lane i = sum of a[i]), every lane by the
 * tree ((x0+x1)+(x2+x3)) + ((x4+x5)+(x6+x7)) whatever its slot. */
AVX2_INLINE __m256 reduce8(const __m256 *a) {
    const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

AVX2_INLINE float hmax8(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* Scores of keys lo .. lo + nk - 1 for the S query heads of each of the ng kv
 * heads g0 .. (head s of kv head g0 + i: q[i * S + s], into sc + (i * S + s) *
 * scs, whole blocks of 8: the last repeats the last key), their maxima into
 * mx. A block's rows are read for all ng kv heads before the next block, its
 * value rows prefetched to L2 (vf NULL). nc = head_dim / 8. */
AVX2_INLINE void scores_body(const eng_attn_args *a, const cpu_attn_q *q, int g0, int ng, int lo, int nk,
                             const float *kf, const float *vf, size_t ld, float *sc, size_t scs, float *mx,
                             const int nc, const int kind, const int S) {
    __m256 vmx[HEADS_MAX];
    for (int h = 0; h < ng * S; h++) vmx[h] = _mm256_set1_ps(-INFINITY);
    const int hd = a->head_dim;
    const size_t goff = kf ? 0 : eng_type_row_size(a->kv->type_k, (int64_t)g0 * hd);
    const size_t gstep = kf ? 0 : eng_type_row_size(a->kv->type_k, hd);
    const size_t bytes = gstep * (size_t)ng;
    const size_t voff = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)g0 * hd);
    const size_t vbytes = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)ng * hd);
    const __m256 scale = _mm256_set1_ps(a->scale);
    kv_src rows[8];
    for (int j0 = 0; j0 < nk; j0 += 8) {
        kv_rows8(a, kf, ld, 0, g0, goff, bytes, lo, j0, nk, rows);
        if (!vf) kv_prefetch8_l2(a, voff, vbytes, lo, j0, nk);
        for (int gi = 0; gi < ng; gi++) {
            __m256 acc[GROUP_MAX][8];
            const cpu_attn_q *qg = q + gi * S;
            /* KU keys at a time: KU x S independent fma chains in flight (the fma
             * latency bound one key's chains), each key's arithmetic unchanged */
            const int KU = S <= 2 ? 4 : 2;
            for (int i = 0; i < 8; i += KU) {
                kv_src r[KU_MAX];
                __m256 kc[KU_MAX], x[KU_MAX][GROUP_MAX];
#pragma GCC unroll 4
                for (int u = 0; u < KU; u++) {
                    r[u] = rows[i + u];
                    if (kf)
                        r[u].f32 += (size_t)gi * (size_t)hd;
                    else
                        r[u].raw += (size_t)gi * gstep;
                    kc[u] = kv_src_load(r[u], 0, kind);
                }
#pragma GCC unroll 4
                for (int h = 0; h < S; h++) {
                    const __m256 qv = _mm256_loadu_ps(qg[h].q);
#pragma GCC unroll 4
                    for (int u = 0; u < KU; u++) x[u][h] = _mm256_mul_ps(qv, kc[u]);
                }
#pragma GCC unroll 32
                for (int c = 1; c < nc; c++) {
#pragma GCC unroll 4
                    for (int u = 0; u < KU; u++) kc[u] = kv_src_load(r[u], c, kind);
#pragma GCC unroll 4
                    for (int h = 0; h < S; h++) {
                        const __m256 qv = _mm256_loadu_ps(qg[h].q + 8 * c);
#pragma GCC unroll 4
                        for (int u = 0; u < KU; u++) x[u][h] = _mm256_fmadd_ps(qv, kc[u], x[u][h]);
                    }
                }
#pragma GCC unroll 4
                for (int u = 0; u < KU; u++)
#pragma GCC unroll 4
                    for (int h = 0; h < S; h++) acc[h][i + u] = x[u][h];
            }
            for (int h = 0; h < S; h++) {
                const int hh = gi * S + h;
                const __m256 x = _mm256_mul_ps(reduce8(acc[h]), scale);
                _mm256_storeu_ps(sc + (size_t)hh * scs + j0, x); /* the scratch holds nk + 16 */
                vmx[hh] = _mm256_max_ps(vmx[hh], x); /* the repeated key does not change the max */
            }
        }
    }
    for (int h = 0; h < ng * S; h++) mx[h] = hmax8(vmx[h]);
}

/* o[s] = sum_j sc[s][j] v_j over keys in order for the S heads, one sum per
 * (head, 8 values); CP chunks of 8 values per pass over a block of keys (4 for
 * up to 2 heads, else 2: S x CP independent fma chains, all in registers),
 * blocks of VB keys whose rows stay in L1 over the passes (the next block's
 * prefetched), which changes no head's arithmetic. Row addresses are found
 * once for all passes. */
AVX2_INLINE void values_body(const eng_attn_args *a, int g, int lo, int nk, const float *vf, size_t ld,
                             const float *sc, size_t scs, const cpu_attn_q *q, const int nc, const int kind,
                             const int S) {
    enum { CPM = 4, VB = 32 };
    const int CP = S <= 2 ? 4 : 2;
    const size_t goff = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)g * a->head_dim);
    const size_t bytes = vf ? 0 : eng_type_row_size(a->kv->type_v, a->head_dim);
    kv_src rows[CPU_ATTN_CHUNK];
    for (int j = 0; j < nk; j += 8) kv_rows8(a, vf, ld, 1, g, goff, 0, lo, j, nk, rows + j);
    /* VB keys at a time, every pass over them (their rows stay in L1), the
     * sums carried in the outputs between blocks: each sum's order is unchanged */
    for (int jb = 0; jb < nk; jb += VB) {
        const int je = jb + VB < nk ? jb + VB : nk;
        if (!vf)
            for (int j = je; j < je + VB && j < nk; j++)
                for (size_t b = 0; b < bytes; b += 64)
                    _mm_prefetch((const char *)rows[j].raw + b, _MM_HINT_T0);
        for (int c0 = 0; c0 < nc; c0 += CP) {
            __m256 acc[GROUP_MAX][CPM];
#pragma GCC unroll 4
            for (int h = 0; h < S; h++)
#pragma GCC unroll 4
                for (int c = 0; c < CP; c++)
                    acc[h][c] = jb ? _mm256_loadu_ps(q[h].o + 8 * (c0 + c)) : _mm256_setzero_ps();
            for (int j = jb; j < je; j++) {
                __m256 v[CPM];
#pragma GCC unroll 4
                for (int c = 0; c < CP; c++) v[c] = kv_src_load(rows[j], c0 + c, kind);
#pragma GCC unroll 4
                for (int h = 0; h < S; h++) {
                    const __m256 w = _mm256_set1_ps(sc[(size_t)h * scs + j]);
#pragma GCC unroll 4
                    for (int c = 0; c < CP; c++) acc[h][c] = _mm256_fmadd_ps(w, v[c], acc[h][c]);
                }
            }
#pragma GCC unroll 4
            for (int h = 0; h < S; h++)
#pragma GCC unroll 4
                for (int c = 0; c < CP; c++) _mm256_storeu_ps(q[h].o + 8 * (c0 + c), acc[h][c]);
        }
    }
}

/* One function per (chunks, kind, heads): the bodies with constant arguments. */
typedef void (*scores_fn)(const eng_attn_args *, const cpu_attn_q *, int, int, int, int, const float *,
                          const float *, size_t, float *, size_t, float *);
typedef void (*values_fn)(const eng_attn_args *, int, int, int, const float *, size_t, const float *, size_t,
                          const cpu_attn_q *);
#define KV_FNS(NC, K, S)                                                                                     \
    AVX2_FN static void scores_##NC##_##K##_##S(const eng_attn_args *a, const cpu_attn_q *q, int g0, int ng, \
                                                int lo, int nk, const float *kf, const float *vf, size_t ld, \
                                                float *sc, size_t scs, float *mx) {                          \
        scores_body(a, q, g0, ng, lo, nk, kf, vf, ld, sc, scs, mx, NC, K, S);                                \
    }                                                                                                        \
    AVX2_FN static void values_##NC##_##K##_##S(const eng_attn_args *a, int g, int lo, int nk,               \
                                                const float *vf, size_t ld, const float *sc, size_t scs,     \
                                                const cpu_attn_q *q) {                                       \
        values_body(a, g, lo, nk, vf, ld, sc, scs, q, NC, K, S);                                             \
    }
#define KV_FNS_S(NC, K) KV_FNS(NC, K, 1) KV_FNS(NC, K, 2) KV_FNS(NC, K, 3) KV_FNS(NC, K, 4)
#define KV_FNS_NC(NC)   KV_FNS_S(NC, 0) KV_FNS_S(NC, 1) KV_FNS_S(NC, 2) KV_FNS_S(NC, 3)
KV_FNS_NC(8)
KV_FNS_NC(16)
KV_FNS_NC(32)
#define ROW_S(NC, K, P) \
    { P##_##NC##_##K##_1, P##_##NC##_##K##_2, P##_##NC##_##K##_3, P##_##NC##_##K##_4 }
#define ROW_K(NC, P) \
    { ROW_S(NC, 0, P), ROW_S(NC, 1, P), ROW_S(NC, 2, P), ROW_S(NC, 3, P) }
static const scores_fn k_scores[3][4][GROUP_MAX] = {ROW_K(8, scores), ROW_K(16, scores), ROW_K(32, scores)};
static const values_fn k_values[3][4][GROUP_MAX] = {ROW_K(8, values), ROW_K(16, values), ROW_K(32, values)};
#undef ROW_K
#undef ROW_S
#undef KV_FNS_NC
#undef KV_FNS_S
#undef KV_FNS

/* Keys j0 .. j0 + nk - 1 of kv heads g0 .. g0 + ng - 1, nq query heads each:
 * cpu_kern.attn_chunk_f32's contract (cpu_kernels.h). */
AVX2_FN static void attn_chunk(const eng_attn_args *a, int g0, int ng, int j0, int nk, const cpu_attn_q *q,
                               int nq, const float *kf, const float *vf, size_t ld, float *sc, size_t scs) {
    const int hd = a->head_dim;
    const int sz = hd == 64 ? 0 : hd == 128 ? 1 : 2; /* head_dim 64, 128 or 256 (see cpu_kernels.h) */
    float mx[HEADS_MAX];
    k_scores[sz][kf ? KV_F32 : kv_kind(a->kv->type_k)][nq - 1](a, q, g0, ng, j0, nk, kf, vf, ld, sc, scs, mx);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int h = 0; h < ng * nq; h++) { /* softmax numerators, their sum in 8-lane partial sums */
        float *s = sc + (size_t)h * scs;
        const __m256 vmx = _mm256_set1_ps(mx[h]);
        __m256 sum = _mm256_setzero_ps();
        for (int j = 0; j < nk; j += 8) {
            __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmx));
            if (nk - j < 8) /* the block's repeated keys count nothing */
                e = _mm256_and_ps(e,
                                  _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(nk - j), lane)));
            _mm256_storeu_ps(s + j, e);
            sum = _mm256_add_ps(sum, e);
        }
        q[h].ml[0] = mx[h];
        q[h].ml[1] = hsum8(sum);
    }
    const values_fn vfn = k_values[sz][vf ? KV_F32 : kv_kind(a->kv->type_v)][nq - 1];
    for (int gi = 0; gi < ng; gi++)
        vfn(a, g0 + gi, j0, nk, vf, ld, sc + (size_t)gi * (size_t)nq * scs, scs, q + gi * nq);
}

/* f16 -> f32 of n values (exact). */
AVX2_FN static void f16_to_f32(float *dst, const uint16_t *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = _cvtsh_ss(src[i]);
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
    k->attn_chunk_f32 = attn_chunk;
    k->f16_to_f32 = f16_to_f32;
    k->rmsnorm_row = rmsnorm_row;
    k->swiglu = swiglu;
    k->f32_to_f16 = f32_to_f16;
}

#else /* not x86-64 */

void cpu_kern_avx2(cpu_kern *k) { (void)k; }

#endif
