/* engine/cpu/quant_avx2.c: AVX2+FMA+F16C kernels for the CPU quant traits (quant_cpu.h): tiles
 * (several tokens per weight pass) for q8_0, q5_0 (q8_0's prepared layout), q4_0 and q4_1 (pairs
 * of blocks) and q4_K, q5_K, q6_K (quant_simd.h's prepared q8_K and its quantizer); f16 and f32
 * dot products and the f16 activation quantizer. Per-function target attributes; only called
 * after run-time detection. No threading, no allocation. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../quant.h"
#include "../quant_impl.h"
#include "quant_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2_FN     __attribute__((target("avx2,fma,f16c")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))

/* Tokens per weight pass. Each token keeps two accumulators (even and odd
 * blocks), so one token alone is not bound by the fma latency. */
enum { TILE_T = 4 };
/* Software prefetch distance along weight rows (see quant_avx512.c). */
enum { PF_DIST = 4096 };

/* --- helpers ----------------------------------------------------------------- */

static uint16_t rd16(const void *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint32_t rd32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

AVX2_INLINE float h2f(uint16_t h) { return _cvtsh_ss(h); }

/* Fixed reduction tree: halves, then pairs, then the last two lanes. */
AVX2_INLINE float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2_INLINE int hsum8i(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* roundf (half away from zero) of values below 2^23 in magnitude: truncate, then
 * step away from zero when the dropped fraction is at least one half. */
AVX2_INLINE __m256 round_away(__m256 y) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 f = _mm256_andnot_ps(sign, _mm256_sub_ps(y, t));
    __m256 ge = _mm256_cmp_ps(f, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    __m256 one = _mm256_or_ps(_mm256_and_ps(y, sign), _mm256_set1_ps(1.0f));
    return _mm256_add_ps(t, _mm256_and_ps(ge, one));
}

/* One 32-value block quantized exactly like the reference q8_{0,1}_from_float
 * (finite inputs): q = roundf(x / d) with d = amax / 127. Returns d; *sum gets
 * the sum of q. */
AVX2_INLINE float q8_block(const float *x, int8_t *q, int *sum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 v[4], m = _mm256_setzero_ps();
    for (int i = 0; i < 4; i++) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i qi[4];
    for (int i = 0; i < 4; i++) qi[i] = _mm256_cvttps_epi32(round_away(_mm256_mul_ps(v[i], vid)));
    *sum = hsum8i(_mm256_add_epi32(_mm256_add_epi32(qi[0], qi[1]), _mm256_add_epi32(qi[2], qi[3])));
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)q, p);
    return d;
}

/* f32 of the f16 rounding of f, as the reference stores scales. */
AVX2_INLINE float f16_round(float f) { return _cvtsh_ss(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

/* --- tiles and chunked dot products ------------------------------------------------ */
/* The tiled matmul over prepared activations, one per weight type: for each
 * weight row, up to TILE_T tokens share one pass over the row (T a constant
 * in each call so the token loop unrolls); every (row, token) gets the same
 * instructions whatever the tile, so results do not depend on n_tok. */
#define AVX2_TILED_GEMM(pfx, wblk, ablk)                                                               \
    AVX2_INLINE void pfx##_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,       \
                                const ablk *a, size_t lda_blk, const int T) {                          \
        for (int r = 0; r < nr; r++) {                                                                 \
            __m256 acc[2 * TILE_T];                                                                    \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[t] = _mm256_setzero_ps(),          \
                                                                acc[TILE_T + t] = _mm256_setzero_ps(); \
            pfx##_acc((const wblk *)(w + (size_t)r * ldw), a, lda_blk, nb, acc, T);                    \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++)                                        \
                y[(size_t)t * ldy + (size_t)r] = hsum8(_mm256_add_ps(acc[t], acc[TILE_T + t]));        \
        }                                                                                              \
    }                                                                                                  \
    AVX2_FN static void pfx##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, \
                                   const void *a, size_t lda, int nt) {                                \
        const size_t lda_blk = lda / sizeof(ablk);                                                     \
        const int nb = (int)(n / 32);                                                                  \
        for (int t0 = 0; t0 < nt; t0 += TILE_T) {                                                      \
            const ablk *at = (const ablk *)((const char *)a + (size_t)t0 * lda);                       \
            float *yt = y + (size_t)t0 * ldy;                                                          \
            switch (nt - t0 < TILE_T ? nt - t0 : TILE_T) {                                             \
            case 1: pfx##_tile(nb, yt, ldy, w, ldw, nr, at, lda_blk, 1); break;                        \
            case 2: pfx##_tile(nb, yt, ldy, w, ldw, nr, at, lda_blk, 2); break;                        \
            case 3: pfx##_tile(nb, yt, ldy, w, ldw, nr, at, lda_blk, 3); break;                        \
            default: pfx##_tile(nb, yt, ldy, w, ldw, nr, at, lda_blk, 4); break;                       \
            }                                                                                          \
        }                                                                                              \
    }

/* vec_dot on the reference activation rows (src blocks): rearranged into the
 * prepared layout 16 blocks at a time by SET(prepared, src), then the same
 * accumulation as the tiled gemm (chunks of 16 keep each block's parity), so
 * the result is bit-identical to it. */
#define AVX2_CHUNKED_DOT(pfx, wblk, srcblk, ablk, SET)                                 \
    AVX2_FN static void pfx##_dot(int64_t n, float *s, const void *w, const void *a) { \
        const wblk *x = w;                                                             \
        const srcblk *yb = a;                                                          \
        ablk buf[16];                                                                  \
        __m256 acc[2 * TILE_T] = {_mm256_setzero_ps()};                                \
        acc[TILE_T] = _mm256_setzero_ps();                                             \
        const int nb = (int)(n / 32);                                                  \
        for (int b0 = 0; b0 < nb; b0 += 16) {                                          \
            int k = nb - b0 < 16 ? nb - b0 : 16;                                       \
            for (int i = 0; i < k; i++) {                                              \
                memcpy(buf[i].qs, yb[b0 + i].qs, 32);                                  \
                SET(&buf[i], &yb[b0 + i]);                                             \
            }                                                                          \
            pfx##_acc(x + b0, buf, 0, k, acc, 1);                                      \
        }                                                                              \
        *s = hsum8(_mm256_add_ps(acc[0], acc[TILE_T]));                                \
    }

/* --- q8_0 x q8_0 ------------------------------------------------------------------ */
/* Prepared activation block: the q8_0 values and the scale in all 8 lanes. The
 * signed product uses |w| * (a with w's sign), exact for a in [-127, 127] (all
 * the quantizer produces) and any weight byte. */
typedef struct a80_blk {
    int8_t qs[32];
    float d[8];
} a80_blk;

static size_t a80_bytes(int64_t n) { return (size_t)(n / 32) * sizeof(a80_blk); }

AVX2_FN static void a80_quantize(const float *x, void *dst, int64_t n) {
    a80_blk *o = dst;
    for (int64_t b = 0; b < n / 32; b++, o++, x += 32) {
        int sum;
        const float d = q8_block(x, o->qs, &sum);
        _mm256_storeu_ps(o->d, _mm256_set1_ps(f16_round(d)));
    }
}

AVX2_INLINE void q80_acc(const eng_block_q8_0 *x, const a80_blk *a, size_t lda_blk, int nb, __m256 *acc,
                         const int T) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int b = 0; b < nb; b++) {
        __m256 *ac = acc + (b & 1) * TILE_T;
        _mm_prefetch((const char *)&x[b] + PF_DIST, _MM_HINT_T0);
        __m256i wq = _mm256_loadu_si256((const __m256i *)x[b].qs);
        __m256i aw = _mm256_abs_epi8(wq);
        __m256 dv = _mm256_set1_ps(h2f(rd16(&x[b].d)));
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) {
            const a80_blk *A = a + (size_t)t * lda_blk + b;
            __m256i sa = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)A->qs), wq);
            __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(aw, sa), ones));
            ac[t] = _mm256_fmadd_ps(f, _mm256_mul_ps(dv, _mm256_loadu_ps(A->d)), ac[t]);
        }
    }
}

AVX2_TILED_GEMM(q80, eng_block_q8_0, a80_blk)

AVX2_INLINE void a80_from_ref(a80_blk *o, const eng_block_q8_0 *y) {
    _mm256_storeu_ps(o->d, _mm256_set1_ps(h2f(y->d)));
}

AVX2_CHUNKED_DOT(q80, eng_block_q8_0, eng_block_q8_0, a80_blk, a80_from_ref)

/* --- q4_0 / q5_0 x q8_0: tiles on the q8_0 layout -------------------------------- */

/* 32 bytes, 0xFF where bit i of the 32-bit little-endian word at p is set. */
AVX2_INLINE __m256i bits_to_bytes(const uint8_t *p) {
    const __m256i shuf = _mm256_setr_epi64x(0, 0x0101010101010101ll, 0x0202020202020202ll,
                                            0x0303030303030303ll);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)rd32(p)), shuf);
    b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfell));
    return _mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1));
}

AVX2_INLINE __m256i q50_values(const eng_block_q5_0 *x) {
    __m128i q = _mm_loadu_si128((const __m128i *)x->qs);
    __m256i v = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
    /* value = (nibble | bit << 4) - 16: nibble when the bit is set, else nibble | 0xF0 */
    return _mm256_or_si256(v, _mm256_andnot_si256(bits_to_bytes(x->qh), _mm256_set1_epi8((char)0xF0)));
}

/* Accumulation as q8_0's (|w| times a with w's sign: exact for these values),
 * the weights' signed values from pfx##_values. */
#define AVX2_Q8ACT_ACC(pfx, wblk)                                                                     \
    AVX2_INLINE void pfx##_acc(const wblk *x, const a80_blk *a, size_t lda_blk, int nb, __m256 *acc,  \
                               const int T) {                                                         \
        const __m256i ones = _mm256_set1_epi16(1);                                                    \
        for (int b = 0; b < nb; b++) {                                                                \
            __m256 *ac = acc + (b & 1) * TILE_T;                                                      \
            _mm_prefetch((const char *)&x[b] + PF_DIST, _MM_HINT_T0);                                 \
            __m256i wq = pfx##_values(&x[b]);                                                         \
            __m256i aw = _mm256_abs_epi8(wq);                                                         \
            __m256 dv = _mm256_set1_ps(h2f(rd16(&x[b].d)));                                           \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                                     \
                const a80_blk *A = a + (size_t)t * lda_blk + b;                                       \
                __m256i sa = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)A->qs), wq);        \
                __m256 f = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(aw, sa), ones)); \
                ac[t] = _mm256_fmadd_ps(f, _mm256_mul_ps(dv, _mm256_loadu_ps(A->d)), ac[t]);          \
            }                                                                                         \
        }                                                                                             \
    }

AVX2_Q8ACT_ACC(q50, eng_block_q5_0)
AVX2_TILED_GEMM(q50, eng_block_q5_0, a80_blk)
AVX2_CHUNKED_DOT(q50, eng_block_q5_0, eng_block_q8_0, a80_blk, a80_from_ref)

/* --- q4_0 x q8_0, q4_1 x q8_1: pairs of blocks ------------------------------------ */
/* Rows are walked in pairs of 32-blocks, block i of a pair in 128-bit lane i: one
 * register holds values 0-15 of both blocks (the low nibbles of their 16 bytes),
 * the other values 16-31 (the high nibbles), and the prepared activations are in
 * the same order. A token's two vpmaddubsw (the nibbles unsigned, the activations
 * signed) add into one 16-bit sum (at most 4 x 15 x 127) and one vpmaddwd gives
 * lanes 4i..4i+3 block i's partial integer sums; q4_0's -8 offset starts lane 4i
 * at -8 * sum(q_a) (prepared with the activations), q4_1's m * s is one fma
 * beside it. Per token and pair: two vpmaddubsw, two adds (q4_1 one), a vpmaddwd,
 * a conversion, a multiply and an fma (q4_1 one more); the weights are decoded
 * once for all tokens (used to be a sign trick per block and token: twice the
 * instructions). One accumulator per token (acc[t]; acc[TILE_T + t] stays zero):
 * indexing two by the pair's parity kept them in memory, 25% slower. */
typedef struct a4_pair {
    int8_t qs[64]; /* values 0-15 of blocks 0 and 1, then 16-31 of both */
    float d[8];    /* each block's f16-rounded d over its four lanes */
    union {
        int32_t st[8]; /* q4_0: -8 * sum(q) in lanes 0 and 4 */
        float s[8];    /* q4_1: the f16-rounded s in lanes 0 and 4 */
    } u;
} a4_pair;

static size_t a4_bytes(int64_t n) { return (size_t)((n / 32 + 1) / 2) * sizeof(a4_pair); }

/* Block i (0, 1) of pair p: values qs, scale d, sum the sum of qs (q4_0) or s (q4_1). */
AVX2_INLINE void a4_put(a4_pair *p, int i, const int8_t *qs, float d, int sum, float s, const int M) {
    memcpy(p->qs + 16 * i, qs, 16);
    memcpy(p->qs + 32 + 16 * i, qs + 16, 16);
    _mm_storeu_ps(p->d + 4 * i, _mm_set1_ps(d));
    if (M)
        _mm_storeu_ps(p->u.s + 4 * i, _mm_setr_ps(s, 0, 0, 0));
    else
        _mm_storeu_si128((__m128i *)(p->u.st + 4 * i), _mm_setr_epi32(-8 * sum, 0, 0, 0));
}

AVX2_INLINE void a4_quantize(const float *x, void *dst, int64_t n, const int M) {
    a4_pair *o = dst;
    const int64_t nb = n / 32;
    if (nb & 1) memset(&o[nb / 2], 0, sizeof *o);
    for (int64_t b = 0; b < nb; b++, x += 32) {
        int8_t q[32];
        int sum;
        const float d = q8_block(x, q, &sum);
        a4_put(&o[b / 2], (int)(b & 1), q, f16_round(d), sum, M ? f16_round((float)sum * d) : 0.0f, M);
    }
}

AVX2_FN static void a40_quantize(const float *x, void *dst, int64_t n) { a4_quantize(x, dst, n, 0); }
AVX2_FN static void a41_quantize(const float *x, void *dst, int64_t n) { a4_quantize(x, dst, n, 1); }

/* One pair (two = 0: one block, the last of a row; the other lane is zeros) of
 * q4_0 (M = 0, 18-byte blocks) or q4_1 (M = 1, 20-byte blocks) against T tokens,
 * its scales dw (and mins mw) already over each block's lanes. */
AVX2_INLINE void q4_pair_w(const uint8_t *x, const int two, const a4_pair *a, size_t lda_p, __m256 *acc,
                           const int T, const int M, const __m256 dw, const __m256 mw) {
    const int bb = M ? 20 : 18, qo = M ? 4 : 2;
    const __m256i m4 = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    const __m128i lo = _mm_loadu_si128((const __m128i *)(x + qo));
    const __m256i r = two ? _mm256_inserti128_si256(_mm256_castsi128_si256(lo),
                                                    _mm_loadu_si128((const __m128i *)(x + bb + qo)), 1)
                          : _mm256_zextsi128_si256(lo);
    const __m256i w0 = _mm256_and_si256(r, m4), w1 = _mm256_and_si256(_mm256_srli_epi16(r, 4), m4);
#pragma GCC unroll 4
    for (int t = 0; t < T; t++) {
        const a4_pair *A = a + (size_t)t * lda_p;
        const __m256i p = _mm256_add_epi16(
            _mm256_maddubs_epi16(w0, _mm256_loadu_si256((const __m256i *)A->qs)),
            _mm256_maddubs_epi16(w1, _mm256_loadu_si256((const __m256i *)(A->qs + 32))));
        __m256i s = _mm256_madd_epi16(p, ones);
        if (!M) s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)A->u.st));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_loadu_ps(A->d)), acc[t]);
        if (M) acc[t] = _mm256_fmadd_ps(mw, _mm256_loadu_ps(A->u.s), acc[t]);
    }
}

/* One pair, its f16 scales [d0 d1 m0 m1] (zeros past the row) converted here. */
AVX2_INLINE void q4_pair(const uint8_t *x, const int two, const a4_pair *a, size_t lda_p, __m256 *acc,
                         const int T, const int M) {
    const int bb = M ? 20 : 18;
    uint64_t h = (uint64_t)rd16(x) | (uint64_t)(two ? rd16(x + bb) : 0) << 16;
    if (M) h |= (uint64_t)rd16(x + 2) << 32 | (uint64_t)(two ? rd16(x + bb + 2) : 0) << 48;
    const __m256 f = _mm256_castps128_ps256(_mm_cvtph_ps(_mm_cvtsi64_si128((long long)h)));
    const __m256 dw = _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    const __m256 mw = M ? _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3))
                        : _mm256_setzero_ps();
    q4_pair_w(x, two, a, lda_p, acc, T, M, dw, mw);
}

/* Two whole pairs (four blocks), their scales [d0..d3 m0..m3] in one conversion:
 * the same values and order as two q4_pair calls. */
AVX2_INLINE void q4_quad(const uint8_t *x, const a4_pair *a, size_t lda_p, __m256 *acc, const int T,
                         const int M) {
    const int bb = M ? 20 : 18;
    __m128i h = _mm_cvtsi32_si128(rd16(x));
    h = _mm_insert_epi16(h, rd16(x + bb), 1);
    h = _mm_insert_epi16(h, rd16(x + 2 * bb), 2);
    h = _mm_insert_epi16(h, rd16(x + 3 * bb), 3);
    if (M) {
        h = _mm_insert_epi16(h, rd16(x + 2), 4);
        h = _mm_insert_epi16(h, rd16(x + bb + 2), 5);
        h = _mm_insert_epi16(h, rd16(x + 2 * bb + 2), 6);
        h = _mm_insert_epi16(h, rd16(x + 3 * bb + 2), 7);
    }
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256 z = _mm256_setzero_ps();
    q4_pair_w(x, 1, a, lda_p, acc, T, M,
              _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1)),
              M ? _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5)) : z);
    q4_pair_w(x + 2 * bb, 1, a + 1, lda_p, acc, T, M,
              _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3)),
              M ? _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(6, 6, 6, 6, 7, 7, 7, 7)) : z);
}

/* Accumulates blocks [0, nb) of one weight row against T prepared rows. */
AVX2_INLINE void q4_acc(const uint8_t *x, const a4_pair *a, size_t lda_p, int nb, __m256 *acc, const int T,
                        const int M) {
    const size_t pb = M ? 40 : 36;
    int p = 0;
    for (; 2 * p + 3 < nb; p += 2) {
        _mm_prefetch((const char *)x + pb * (size_t)p + PF_DIST, _MM_HINT_T0);
        _mm_prefetch((const char *)x + pb * (size_t)p + PF_DIST + 64, _MM_HINT_T0);
        q4_quad(x + pb * (size_t)p, a + p, lda_p, acc, T, M);
    }
    for (; 2 * p < nb; p++) {
        _mm_prefetch((const char *)x + pb * (size_t)p + PF_DIST, _MM_HINT_T0);
        q4_pair(x + pb * (size_t)p, 2 * p + 1 < nb, a + p, lda_p, acc, T, M);
    }
}

AVX2_INLINE void q40_acc(const eng_block_q4_0 *x, const a4_pair *a, size_t lda_p, int nb, __m256 *acc,
                         const int T) {
    q4_acc((const uint8_t *)x, a, lda_p, nb, acc, T, 0);
}

AVX2_INLINE void q41_acc(const eng_block_q4_1 *x, const a4_pair *a, size_t lda_p, int nb, __m256 *acc,
                         const int T) {
    q4_acc((const uint8_t *)x, a, lda_p, nb, acc, T, 1);
}

AVX2_TILED_GEMM(q40, eng_block_q4_0, a4_pair)
AVX2_TILED_GEMM(q41, eng_block_q4_1, a4_pair)

/* vec_dot on reference q8_0 / q8_1 rows: rearranged into pairs 16 blocks at a
 * time, then the gemm's accumulation: bit-identical to it. */
#define AVX2_PAIR_DOT(pfx, wblk, srcblk, M)                                            \
    AVX2_FN static void pfx##_dot(int64_t n, float *s, const void *w, const void *a) { \
        const wblk *x = w;                                                             \
        const srcblk *yb = a;                                                          \
        a4_pair buf[8];                                                                \
        __m256 acc[2 * TILE_T] = {_mm256_setzero_ps()};                                \
        acc[TILE_T] = _mm256_setzero_ps();                                             \
        const int nb = (int)(n / 32);                                                  \
        for (int b0 = 0; b0 < nb; b0 += 16) {                                          \
            const int k = nb - b0 < 16 ? nb - b0 : 16;                                 \
            if (k & 1) memset(&buf[k / 2], 0, sizeof buf[0]);                          \
            for (int i = 0; i < k; i++) {                                              \
                const srcblk *y = &yb[b0 + i];                                         \
                int sum = 0;                                                           \
                for (int j = 0; j < 32 && !(M); j++) sum += y->qs[j];                  \
                a4_put(&buf[i / 2], i & 1, y->qs, h2f(y->d), sum,                      \
                       (M) ? h2f(rd16((const char *)y + 2)) : 0.0f, M);                \
            }                                                                          \
            pfx##_acc(x + b0, buf, 0, k, acc, 1);                                      \
        }                                                                              \
        *s = hsum8(_mm256_add_ps(acc[0], acc[TILE_T]));                                \
    }

AVX2_PAIR_DOT(q40, eng_block_q4_0, eng_block_q8_0, 0)
AVX2_PAIR_DOT(q41, eng_block_q4_1, eng_block_q8_1, 1)

/* --- q4_K / q6_K x q8_K: tiles over prepared q8_K rows --------------------------- */
/* Integer sums per super-block (exact), scaled in float per token: acc += isum *
 * (d * dy) - imin * (dmin * dy) in 8 lanes, folded at the end of the row. The
 * float order differs from the reference's (one sum per block), so results are
 * within a rounding bound of it, not equal; every (row, token) gets the same
 * instructions whatever the tile, and vec_dot on reference q8_K rows runs the
 * same arithmetic on the reference layout (P = 0), so it equals the gemm. */

/* Activation block fields in the prepared layout (P = 1) or the reference one. */
#define KA_BYTES(P) ((P) ? sizeof(eng_q8k_prep) : sizeof(eng_block_q8_k))
#define KA_QS(p, P) ((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, qs) : offsetof(eng_block_q8_k, qs)))
#define KA_BS(p, P) \
    ((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, bsums) : offsetof(eng_block_q8_k, bsums)))
#define KA_D(p, P) \
    ((const float *)((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, d) : offsetof(eng_block_q8_k, d))))

size_t eng_q8k_prep_bytes(int64_t n) { return (size_t)(n / ENG_QK_K) * sizeof(eng_q8k_prep); }

/* As the reference q8_k_from_float, block by block: amax and the first value
 * reaching it, iscale = -127 / max, q = rint(iscale * x) (the default rounding
 * mode of the conversion), sums of 16, d = 1 / iscale. Finite inputs. */
AVX2_FN void eng_q8k_prep_avx2(const float *x, void *dst, int64_t n) {
    eng_q8k_prep *o = dst;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / ENG_QK_K; b++, o++, x += ENG_QK_K) {
        __m256 m = _mm256_setzero_ps();
        for (int i = 0; i < 32; i++) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * i)));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        memset(o, 0, sizeof *o);
        if (amax == 0.0f) continue;
        const __m256 va = _mm256_set1_ps(amax);
        float max = amax;
        for (int i = 0; i < 32; i++) {
            int hit = _mm256_movemask_ps(
                _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * i)), va, _CMP_EQ_OQ));
            if (hit) {
                max = x[8 * i + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 vs = _mm256_set1_ps(iscale);
        for (int i = 0; i < 8; i++) {
            __m256i q[4];
            for (int k = 0; k < 4; k++)
                q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + 32 * i + 8 * k)));
            __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256((__m256i *)(o->qs + 32 * i), p);
            int32_t s4[8];
            _mm256_storeu_si256((__m256i *)s4, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), p),
                                                                 _mm256_set1_epi16(1)));
            o->bsums[2 * i] = (int16_t)(s4[0] + s4[1] + s4[2] + s4[3]);
            o->bsums[2 * i + 1] = (int16_t)(s4[4] + s4[5] + s4[6] + s4[7]);
        }
        o->d = 1.0f / iscale;
    }
}

/* The 6-bit scales and mins of a q4_K / q5_K block (12 bytes at s, as
 * eng_k_scale_min for all j at once) in general registers: byte j of *sc is
 * sub-block j's scale, of *mn its min. */
static inline void k_scales64(const uint8_t *s, uint64_t *sc, uint64_t *mn) {
    uint64_t v;
    uint32_t u2;
    memcpy(&v, s, 8);
    memcpy(&u2, s + 8, 4);
    const uint64_t lo = v & 0x3f3f3f3f3f3f3f3full; /* scales 0-3, mins 0-3 */
    const uint64_t hi = ((u2 | (uint64_t)(u2 >> 4) << 32) & 0x0f0f0f0f0f0f0f0full) |
                        ((v >> 6) & 0x0303030303030303ull) << 4; /* scales 4-7, mins 4-7 */
    *sc = (lo & 0xffffffffull) | hi << 32;
    *mn = lo >> 32 | (hi & 0xffffffff00000000ull);
}

/* acc[t] += isum * (d * dy) - imin * (dm * dy) for activation block A. */
AVX2_INLINE __m256 k_scale_acc(__m256 acc, __m256i isum, __m256i imin, float d, float dm, float dy) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * dy), acc);
    return _mm256_fnmadd_ps(_mm256_cvtepi32_ps(imin), _mm256_set1_ps(dm * dy), acc);
}

/* One q4_K / q5_K super-block (the 4-bit values at qs, their fifth bits at qh
 * for q5_K, NULL for q4_K) of one row against T activation blocks lda bytes
 * apart; hd is the block's start (d, dmin, scales). */
AVX2_INLINE void k45_sb(const uint8_t *hd, const uint8_t *qs, const uint8_t *qhp, const char *a, size_t lda,
                        __m256 *acc, const int T, const int P) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    uint64_t sc, mn;
    k_scales64(hd + 4, &sc, &mn);
    const __m256i scb = _mm256_set1_epi64x((long long)sc);
    const __m128i mb = _mm_cvtsi64_si128((long long)mn);
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mb, mb)); /* mn_j at words 2j, 2j+1 */
    const __m256i qh = qhp ? _mm256_loadu_si256((const __m256i *)qhp) : _mm256_setzero_si256();
    __m256i isum[TILE_T];
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * g));
        __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (qhp) { /* bit 2g of qh[l] is value l's fifth bit, bit 2g + 1 value 32 + l's */
            lo = _mm256_or_si256(lo,
                                 _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), one), 4));
            hi = _mm256_or_si256(
                hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * g + 1), one), 4));
        }
        /* sub-block j's scale over 16-bit words: one vpshufb of the eight */
        const __m256i s0 = _mm256_shuffle_epi8(scb, _mm256_set1_epi16((short)(0x8000 | (2 * g)))),
                      s1 = _mm256_shuffle_epi8(scb, _mm256_set1_epi16((short)(0x8000 | (2 * g + 1))));
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) {
            const char *aq = KA_QS(a + (size_t)t * lda, P) + 64 * g;
            __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)aq)),
                                           s0);
            __m256i p1 = _mm256_madd_epi16(
                _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(aq + 32))), s1);
            isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(p0, p1));
        }
    }
    const float d = h2f(rd16(hd)), dm = h2f(rd16(hd + 2));
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const char *A = a + (size_t)t * lda;
        __m256i imin = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)KA_BS(A, P)), mins);
        acc[t] = k_scale_acc(acc[t], isum[t], imin, d, dm, *KA_D(A, P));
    }
}

AVX2_INLINE void q4k_sb(const eng_block_q4_k *x, const char *a, size_t lda, __m256 *acc, const int T,
                        const int P) {
    k45_sb((const uint8_t *)x, x->qs, NULL, a, lda, acc, T, P);
}

AVX2_INLINE void q5k_sb(const eng_block_q5_k *x, const char *a, size_t lda, __m256 *acc, const int T,
                        const int P) {
    k45_sb((const uint8_t *)x, x->qs, x->qh, a, lda, acc, T, P);
}

/* One q6_K super-block: unsigned 6-bit values, the -32 offset through bsums
 * (imin = sum_g sc_g * bsum_g, times 32). Register k of half h holds scale groups
 * g = 8h + 2k (lane 0) and g + 1 (lane 1): one vpshufb of the half's eight
 * sign-extended scales, broadcast to both lanes. */
AVX2_INLINE void q6k_sb(const eng_block_q6_k *x, const char *a, size_t lda, __m256 *acc, const int T,
                        const int P) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x->scales));
    __m256i isum[TILE_T];
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = x->ql + 64 * h, *qhp = x->qh + 32 * h;
        const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
        const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)qhp);
        /* the immediate must be a constant at -O0/-O1 too (make sanitize) */
        const __m256i sh = h ? _mm256_permute4x64_epi64(sc16, 0xEE) : _mm256_permute4x64_epi64(sc16, 0x44);
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            __m256i l = (k & 1) ? l1 : l0;
            if (k >= 2) l = _mm256_srli_epi16(l, 4);
            /* bits 2k, 2k + 1 of qh to bits 4, 5 */
            const __m256i hb = k < 2    ? _mm256_slli_epi16(qh, 4 - 2 * k)
                               : k == 2 ? qh
                                        : _mm256_srli_epi16(qh, 2);
            const __m256i v = _mm256_or_si256(_mm256_and_si256(l, m4), _mm256_and_si256(hb, m30));
            const __m256i sc = _mm256_shuffle_epi8(
                sh, _mm256_setr_epi8(4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1,
                                     4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1, 4 * k, 4 * k + 1,
                                     4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3,
                                     4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3,
                                     4 * k + 2, 4 * k + 3, 4 * k + 2, 4 * k + 3));
#pragma GCC unroll 8
            for (int t = 0; t < T; t++) {
                const char *qs = KA_QS(a + (size_t)t * lda, P) + 128 * h + 32 * k;
                __m256i p = _mm256_maddubs_epi16(v, _mm256_loadu_si256((const __m256i *)qs));
                isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sc));
            }
        }
    }
    const float d = h2f(rd16(&x->d));
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const char *A = a + (size_t)t * lda;
        __m256i corr = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)KA_BS(A, P)), sc16);
        acc[t] = k_scale_acc(acc[t], isum[t], corr, d, 32.0f * d, *KA_D(A, P));
    }
}

/* Rows of a K-quant type against T activation rows, super-block by super-block;
 * the gemm in TILE_T-token tiles on prepared rows and vec_dot on reference rows,
 * both over pfx##_sb. */
#define AVX2_K_GEMM(pfx, wblk)                                                                         \
    AVX2_INLINE void pfx##_rows(int nsb, float *y, size_t ldy, const char *w, size_t ldw, int nr,      \
                                const char *a, size_t lda, const int T, const int P) {                 \
        for (int r = 0; r < nr; r++) {                                                                 \
            const wblk *x = (const wblk *)(w + (size_t)r * ldw);                                       \
            __m256 acc[TILE_T];                                                                        \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[t] = _mm256_setzero_ps();          \
            for (int i = 0; i < nsb; i++) {                                                            \
                /* one per line: q6_K's 210-byte steps left a line between +128 and +210 */            \
                for (size_t o = 0; o < sizeof(wblk); o += 64)                                          \
                    _mm_prefetch((const char *)&x[i] + PF_DIST + o, _MM_HINT_T0);                      \
                pfx##_sb(&x[i], a + (size_t)i * KA_BYTES(P), lda, acc, T, P);                          \
            }                                                                                          \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++)                                        \
                y[(size_t)t * ldy + (size_t)r] = hsum8(acc[t]);                                        \
        }                                                                                              \
    }                                                                                                  \
    AVX2_FN static void pfx##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, \
                                   const void *a, size_t lda, int nt) {                                \
        const int nsb = (int)(n / ENG_QK_K);                                                           \
        for (int t0 = 0; t0 < nt; t0 += TILE_T) {                                                      \
            const char *at = (const char *)a + (size_t)t0 * lda;                                       \
            float *yt = y + (size_t)t0 * ldy;                                                          \
            switch (nt - t0 < TILE_T ? nt - t0 : TILE_T) {                                             \
            case 1: pfx##_rows(nsb, yt, ldy, w, ldw, nr, at, lda, 1, 1); break;                        \
            case 2: pfx##_rows(nsb, yt, ldy, w, ldw, nr, at, lda, 2, 1); break;                        \
            case 3: pfx##_rows(nsb, yt, ldy, w, ldw, nr, at, lda, 3, 1); break;                        \
            default: pfx##_rows(nsb, yt, ldy, w, ldw, nr, at, lda, 4, 1); break;                       \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    AVX2_FN static void pfx##_dot(int64_t n, float *s, const void *w, const void *a) {                 \
        pfx##_rows((int)(n / ENG_QK_K), s, 1, w, 0, 1, a, 0, 1, 0);                                    \
    }

AVX2_K_GEMM(q4k, eng_block_q4_k)
AVX2_K_GEMM(q6k, eng_block_q6_k)
AVX2_K_GEMM(q5k, eng_block_q5_k)

/* --- f16 / f32 ----------------------------------------------------------------------- */

AVX2_FN static void f16_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
#define LD(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) acc[k] = _mm256_fmadd_ps(LD(x + i + 8 * k), LD(y + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(LD(x + i), LD(y + i), acc[0]);
#undef LD
    float sum = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) sum += h2f(x[i]) * h2f(y[i]);
    *s = sum;
}

AVX2_FN static void f32_dot(int64_t n, float *s, const void *w, const void *a) {
    const float *x = w, *y = a;
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8 * k), _mm256_loadu_ps(y + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8)
        acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc[0]);
    float sum = hsum8(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; i++) sum += x[i] * y[i];
    *s = sum;
}

/* f32 -> f16 rounding to nearest even, as eng_f32_to_f16 (nan payloads aside). */
AVX2_FN static void f16_quantize(const float *x, void *dst, int64_t n) {
    uint16_t *d = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) d[i] = _cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT);
}

/* gemm for the types whose fast kernel is a plain dot product: one call per
 * (row, token), the same call whatever the tile. */
#define DOT_GEMM(tn)                                                                                  \
    AVX2_FN static void tn##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, \
                                  const void *a, size_t lda, int nt) {                                \
        for (int r = 0; r < nr; r++)                                                                  \
            for (int t = 0; t < nt; t++)                                                              \
                tn##_dot(n, y + (size_t)t * ldy + (size_t)r, (const char *)w + (size_t)r * ldw,       \
                         (const char *)a + (size_t)t * lda);                                          \
    }
DOT_GEMM(f16)
DOT_GEMM(f32)
#undef DOT_GEMM

void eng_quant_avx2_kernels(uint32_t type, eng_type_kernels *k) {
    switch (type) {
    case ENG_TYPE_Q4_1:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q41_dot, a4_bytes, a41_quantize, q41_gemm};
        break;
    case ENG_TYPE_Q8_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q80_dot, a80_bytes, a80_quantize, q80_gemm};
        break;
    case ENG_TYPE_Q4_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q40_dot, a4_bytes, a40_quantize, q40_gemm};
        break;
    case ENG_TYPE_Q5_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q50_dot, a80_bytes, a80_quantize, q50_gemm};
        break;
    case ENG_TYPE_Q4_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q4k_dot, eng_q8k_prep_bytes, eng_q8k_prep_avx2, q4k_gemm};
        break;
    case ENG_TYPE_Q5_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q5k_dot, eng_q8k_prep_bytes, eng_q8k_prep_avx2, q5k_gemm};
        break;
    case ENG_TYPE_Q6_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX2, q6k_dot, eng_q8k_prep_bytes, eng_q8k_prep_avx2, q6k_gemm};
        break;
    case ENG_TYPE_F16:
        k->level = ENG_SIMD_AVX2, k->vec_dot = f16_dot, k->gemm = f16_gemm;
        k->act_quantize = f16_quantize;
        break;
    case ENG_TYPE_F32: k->level = ENG_SIMD_AVX2, k->vec_dot = f32_dot, k->gemm = f32_gemm; break;
    default: break;
    }
}

#else /* not x86-64 */

void eng_quant_avx2_kernels(uint32_t type, eng_type_kernels *k) {
    (void)type;
    (void)k;
}

#endif
