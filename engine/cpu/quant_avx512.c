/* engine/cpu/quant_avx512.c: AVX-512 (F/BW/VL/DQ + VNNI) tiles for q4_1 and q8_0, the
 * two types of the default model: two 32-blocks per 512-bit register, integer dot
 * products with vpdpbusd, up to 8 tokens per weight pass over a prepared activation
 * layout. Other types keep the AVX2 kernels at this level. Compiled with
 * per-function target attributes; called only after run-time detection. */
#include <stdint.h>
#include <string.h>

#include "../quant.h"
#include "../quant_impl.h"
#include "quant_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c"
#define AVX512_FN __attribute__((target(AVX512_TARGET)))
#define AVX512_INLINE static inline __attribute__((always_inline, target(AVX512_TARGET)))

/* Tokens per weight pass: q4_1 keeps three accumulators per token (even and odd
 * block pairs, m * s terms: independent chains, so one token is not latency
 * bound), q8_0 two; both fit the 32 vector registers. */
enum { Q41_T = 6, Q80_T = 8 };

/* Software prefetch distance along a weight row (and on into the next rows): a
 * decode step streams every weight once, and the hardware prefetchers stop at
 * each 4 KiB page; measured best between 4 and 8 KiB. */
enum { PF_DIST = 4096 };

/* Fixed reduction tree: 512 -> 256 -> 128 -> pairs -> last two lanes. */
AVX512_INLINE float hsum16(__m512 v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX512_INLINE float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* One 32-value block quantized exactly like the reference q8_{0,1}_from_float
 * (finite inputs); see round_away in quant_avx2.c for the rounding. Returns d. */
AVX512_INLINE float q8_block(const float *x, int8_t *q, int *sum) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m512 vid = _mm512_set1_ps(id), half = _mm512_set1_ps(0.5f);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    const __m512i one = _mm512_castps_si512(_mm512_set1_ps(1.0f));
    __m512i qi[2];
    for (int i = 0; i < 2; i++) {
        __m512 y = _mm512_mul_ps(i ? v1 : v0, vid);
        __m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __mmask16 ge = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(y, t)), half, _CMP_GE_OQ);
        __m512 away = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(y), sign), one));
        t = _mm512_mask_add_ps(t, ge, t, away);
        qi[i] = _mm512_cvttps_epi32(t);
        _mm_storeu_si128((__m128i *)(q + 16 * i), _mm512_cvtsepi32_epi8(qi[i]));
    }
    *sum = _mm512_reduce_add_epi32(_mm512_add_epi32(qi[0], qi[1]));
    return d;
}

AVX512_INLINE float h2f(uint16_t h) { return _cvtsh_ss(h); }

/* --- q4_1 x q8_1 ------------------------------------------------------------------ */
/* Rows are walked in quads of four 32-blocks (two 512-bit registers). Prepared
 * activation quad: the q8_1 values (zeros past the end of the row), each block's
 * f16-rounded scale over its 8 lanes, and the f16 sums s at odd lanes [0 s0 0 s1 0
 * s2 0 s3], the layout of the weights' (d, m) pairs, so one 8-lane fma adds m * s. */
typedef struct a41_quad {
    int8_t qs[128];
    float d[32];
    float s[16];
} a41_quad;

static size_t a41_bytes(int64_t n) { return (size_t)((n / 32 + 3) / 4) * sizeof(a41_quad); }

static void a41_put(a41_quad *q, int i, const int8_t *qs, float d, float s) {
    memcpy(q->qs + 32 * i, qs, 32);
    for (int l = 0; l < 8; l++) q->d[8 * i + l] = d;
    q->s[2 * i] = 0.0f;
    q->s[2 * i + 1] = s;
}

AVX512_FN static void a41_quantize(const float *x, void *dst, int64_t n) {
    a41_quad *o = dst;
    const int64_t nb = n / 32;
    if (nb & 3) memset(&o[nb / 4], 0, sizeof *o);
    for (int64_t b = 0; b < nb; b++, x += 32) {
        int8_t q[32];
        int sum;
        const float d = q8_block(x, q, &sum);
        const uint16_t dh = _cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
        const uint16_t sh = _cvtss_sh((float)sum * d, _MM_FROUND_TO_NEAREST_INT);
        a41_put(&o[b / 4], (int)(b & 3), q, h2f(dh), h2f(sh));
    }
}

/* Nibbles of blocks x[0] and x[1] (x[1] absent when one), in the activations'
 * order: [x0 low, x0 high, x1 low, x1 high]. */
AVX512_INLINE __m512i q41_nibbles(const uint8_t *x, int one) {
    __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x + 4)));
    __m512i z = one ? _mm512_zextsi256_si512(lo)
                    : _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                                         _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(x + 24))), 1);
    z = _mm512_srlv_epi64(z, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4));
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0F));
}

/* One quad of nbq blocks (1..4; fewer only at the end of a row): weights loaded
 * once, then the same arithmetic for each of the T tokens. */
AVX512_INLINE void q41_quad(const uint8_t *x, int nbq, const a41_quad *a, size_t lda_q, __m512 *acc0,
                            __m512 *acc1, __m256 *macc, const int T) {
    const __m512i idx_dm = _mm512_setr_epi32(0x00010000, 0x000B000A, 0x00150014, 0x001F001E, 0, 0, 0, 0,
                                             0, 0, 0, 0, 0, 0, 0, 0);
    __m512i raw = nbq == 4 ? _mm512_loadu_si512(x) : _mm512_maskz_loadu_epi8((1ull << (20 * nbq)) - 1, x);
    /* [d0 m0 d1 m1 d2 m2 d3 m3], zeros for absent blocks */
    const __m256 f = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi16(idx_dm, raw)));
    const __m512 fz = _mm512_castps256_ps512(f);
    const __m512 dv01 = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2), fz);
    const __m512i wq01 = q41_nibbles(x, nbq == 1);
    __m512 dv23 = _mm512_setzero_ps();
    __m512i wq23 = _mm512_setzero_si512();
    if (nbq > 2) {
        dv23 = _mm512_permutexvar_ps(_mm512_setr_epi32(4, 4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 6, 6, 6, 6, 6), fz);
        wq23 = q41_nibbles(x + 40, nbq == 3);
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const a41_quad *A = a + (size_t)t * lda_q;
        __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wq01, _mm512_load_si512(A->qs));
        acc0[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dv01, _mm512_load_ps(A->d)), acc0[t]);
        if (nbq > 2) {
            p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wq23, _mm512_load_si512(A->qs + 64));
            acc1[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dv23, _mm512_load_ps(A->d + 16)), acc1[t]);
        }
        macc[t] = _mm256_fmadd_ps(f, _mm256_load_ps(A->s), macc[t]);
    }
}

/* Accumulates blocks [0, nb) of one weight row against T prepared rows. */
AVX512_INLINE void q41_acc(const uint8_t *x, int nb, const a41_quad *a, size_t lda_q, __m512 *acc0,
                           __m512 *acc1, __m256 *macc, const int T) {
    int q = 0;
    for (; 4 * q + 4 <= nb; q++) {
        _mm_prefetch((const char *)x + 80 * (size_t)q + PF_DIST, _MM_HINT_T0);
        _mm_prefetch((const char *)x + 80 * (size_t)q + PF_DIST + 64, _MM_HINT_T0);
        q41_quad(x + 80 * (size_t)q, 4, a + q, lda_q, acc0, acc1, macc, T);
    }
    if (4 * q < nb) q41_quad(x + 80 * (size_t)q, nb - 4 * q, a + q, lda_q, acc0, acc1, macc, T);
}

/* The row's result from its accumulators, in one fixed order. */
AVX512_INLINE float q41_result(__m512 acc0, __m512 acc1, __m256 macc) {
    return hsum16(_mm512_add_ps(acc0, acc1)) + hsum8(macc);
}

AVX512_INLINE void q41_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,
                            const a41_quad *a, size_t lda_q, const int T) {
    for (int r = 0; r < nr; r++) {
        __m512 acc0[8], acc1[8]; /* T <= 8 for TILE_SWITCH; q41 uses T <= Q41_T */
        __m256 macc[8];
#pragma GCC unroll 8
        for (int t = 0; t < T; t++)
            acc0[t] = _mm512_setzero_ps(), acc1[t] = _mm512_setzero_ps(), macc[t] = _mm256_setzero_ps();
        q41_acc((const uint8_t *)(w + (size_t)r * ldw), nb, a, lda_q, acc0, acc1, macc, T);
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) y[(size_t)t * ldy + (size_t)r] = q41_result(acc0[t], acc1[t], macc[t]);
    }
}

/* Calls tile(..., T) with T = nt as a constant, nt in 1..8. */
#define TILE_SWITCH(tile, nt, ...)                                                                 \
    switch (nt) {                                                                                  \
    case 1: tile(__VA_ARGS__, 1); break;                                                           \
    case 2: tile(__VA_ARGS__, 2); break;                                                           \
    case 3: tile(__VA_ARGS__, 3); break;                                                           \
    case 4: tile(__VA_ARGS__, 4); break;                                                           \
    case 5: tile(__VA_ARGS__, 5); break;                                                           \
    case 6: tile(__VA_ARGS__, 6); break;                                                           \
    case 7: tile(__VA_ARGS__, 7); break;                                                           \
    case 8: tile(__VA_ARGS__, 8); break;                                                           \
    default: break;                                                                                \
    }

/* A gemm over T-token tiles of prepared activations (quad blocks), each tile
 * by pfx##_tile at its width (TILE_SWITCH). */
#define AVX512_TILED_GEMM(pfx, quad, TT)                                                           \
    AVX512_FN static void pfx##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw,   \
                                     int nr, const void *a, size_t lda, int nt) {                  \
        const size_t lda_q = lda / sizeof(quad);                                                   \
        const int nb = (int)(n / 32);                                                              \
        for (int t0 = 0; t0 < nt; t0 += TT) {                                                      \
            const quad *at = (const quad *)((const char *)a + (size_t)t0 * lda);                   \
            float *yt = y + (size_t)t0 * ldy;                                                      \
            TILE_SWITCH(pfx##_tile, nt - t0 < TT ? nt - t0 : TT, nb, yt, ldy, w, ldw, nr, at, lda_q) \
        }                                                                                          \
    }

AVX512_TILED_GEMM(q41, a41_quad, Q41_T)

/* The same arithmetic on reference q8_1 activations, rearranged in chunks. */
AVX512_FN static void q41_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint8_t *x = w;
    const eng_block_q8_1 *yb = a;
    a41_quad buf[4] __attribute__((aligned(64)));
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    __m256 macc = _mm256_setzero_ps();
    const int nb = (int)(n / 32);
    for (int b0 = 0; b0 < nb; b0 += 16) {
        const int k = nb - b0 < 16 ? nb - b0 : 16;
        if (k & 3) memset(&buf[k / 4], 0, sizeof buf[0]);
        for (int i = 0; i < k; i++)
            a41_put(&buf[i / 4], i & 3, yb[b0 + i].qs, h2f(yb[b0 + i].d), h2f(yb[b0 + i].s));
        q41_acc(x + 20 * (size_t)b0, k, buf, 0, &acc0, &acc1, &macc, 1);
    }
    *s = q41_result(acc0, acc1, macc);
}

/* --- q8_0 x q8_0 ------------------------------------------------------------------ */
/* vpdpbusd multiplies unsigned by signed bytes: the weights are biased to w + 128
 * (xor 0x80) and corr, the start value of each 32-bit lane, is -128 times the sum
 * of the lane's four activations, so each lane ends with the exact signed sum.
 * Quads of four blocks as for q4_1. */
typedef struct a80_quad {
    int8_t qs[128];
    int32_t corr[32];
    float d[32];
} a80_quad;

static size_t a80_bytes(int64_t n) { return (size_t)((n / 32 + 3) / 4) * sizeof(a80_quad); }

AVX512_INLINE void a80_put(a80_quad *q, int i, const int8_t *qs, float d) {
    memcpy(q->qs + 32 * i, qs, 32);
    __m256i v = _mm256_loadu_si256((const __m256i *)qs);
    __m256i s4 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(1), v);
    _mm256_storeu_si256((__m256i *)(q->corr + 8 * i), _mm256_mullo_epi32(s4, _mm256_set1_epi32(-128)));
    _mm256_storeu_ps(q->d + 8 * i, _mm256_set1_ps(d));
}

AVX512_FN static void a80_quantize(const float *x, void *dst, int64_t n) {
    a80_quad *o = dst;
    const int64_t nb = n / 32;
    if (nb & 3) memset(&o[nb / 4], 0, sizeof *o);
    for (int64_t b = 0; b < nb; b++, x += 32) {
        int8_t q[32];
        int sum;
        const float d = q8_block(x, q, &sum);
        a80_put(&o[b / 4], (int)(b & 3), q, h2f(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT)));
    }
}

/* Values of blocks x[0], x[1] (x[1] absent when one), biased by 128. */
AVX512_INLINE __m512i q80_values(const uint8_t *x, int one) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(x + 2));
    __m512i z = one ? _mm512_zextsi256_si512(lo)
                    : _mm512_inserti64x4(_mm512_castsi256_si512(lo), _mm256_loadu_si256((const __m256i *)(x + 36)), 1);
    return _mm512_xor_si512(z, _mm512_set1_epi8((char)0x80));
}

AVX512_INLINE void q80_quad(const uint8_t *x, int nbq, const a80_quad *a, size_t lda_q, __m512 *acc0,
                            __m512 *acc1, const int T) {
    /* the scales sit at words 0, 17, 34 and 51 of the quad's 136 bytes */
    const __m512i idx_d = _mm512_setr_epi32(0x00110000, 0x00330022, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m512i r0, r1 = _mm512_setzero_si512();
    if (nbq == 4) {
        r0 = _mm512_loadu_si512(x);
        r1 = _mm512_loadu_si512(x + 64);
    } else {
        const int bytes = 34 * nbq;
        r0 = _mm512_maskz_loadu_epi8(bytes >= 64 ? ~0ull : (1ull << bytes) - 1, x);
        if (bytes > 64) r1 = _mm512_maskz_loadu_epi8((1ull << (bytes - 64)) - 1, x + 64);
    }
    const __m128 f = _mm_cvtph_ps(_mm512_castsi512_si128(_mm512_permutex2var_epi16(r0, idx_d, r1)));
    const __m512 fz = _mm512_castps128_ps512(f);
    const __m512 dv01 = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), fz);
    const __m512i wq01 = q80_values(x, nbq == 1);
    __m512 dv23 = _mm512_setzero_ps();
    __m512i wq23 = _mm512_setzero_si512();
    if (nbq > 2) {
        dv23 = _mm512_permutexvar_ps(_mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3), fz);
        wq23 = q80_values(x + 68, nbq == 3);
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const a80_quad *A = a + (size_t)t * lda_q;
        __m512i p = _mm512_dpbusd_epi32(_mm512_load_si512(A->corr), wq01, _mm512_load_si512(A->qs));
        acc0[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dv01, _mm512_load_ps(A->d)), acc0[t]);
        if (nbq > 2) {
            p = _mm512_dpbusd_epi32(_mm512_load_si512(A->corr + 16), wq23, _mm512_load_si512(A->qs + 64));
            acc1[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dv23, _mm512_load_ps(A->d + 16)), acc1[t]);
        }
    }
}

AVX512_INLINE void q80_acc(const uint8_t *x, int nb, const a80_quad *a, size_t lda_q, __m512 *acc0,
                           __m512 *acc1, const int T) {
    int q = 0;
    for (; 4 * q + 4 <= nb; q++) {
        _mm_prefetch((const char *)x + 136 * (size_t)q + PF_DIST, _MM_HINT_T0);
        _mm_prefetch((const char *)x + 136 * (size_t)q + PF_DIST + 64, _MM_HINT_T0);
        _mm_prefetch((const char *)x + 136 * (size_t)q + PF_DIST + 128, _MM_HINT_T0);
        q80_quad(x + 136 * (size_t)q, 4, a + q, lda_q, acc0, acc1, T);
    }
    if (4 * q < nb) q80_quad(x + 136 * (size_t)q, nb - 4 * q, a + q, lda_q, acc0, acc1, T);
}

AVX512_INLINE void q80_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,
                            const a80_quad *a, size_t lda_q, const int T) {
    for (int r = 0; r < nr; r++) {
        __m512 acc0[8], acc1[8];
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) acc0[t] = _mm512_setzero_ps(), acc1[t] = _mm512_setzero_ps();
        q80_acc((const uint8_t *)(w + (size_t)r * ldw), nb, a, lda_q, acc0, acc1, T);
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) y[(size_t)t * ldy + (size_t)r] = hsum16(_mm512_add_ps(acc0[t], acc1[t]));
    }
}

AVX512_TILED_GEMM(q80, a80_quad, Q80_T)

AVX512_FN static void q80_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint8_t *x = w;
    const eng_block_q8_0 *yb = a;
    a80_quad buf[4] __attribute__((aligned(64)));
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    const int nb = (int)(n / 32);
    for (int b0 = 0; b0 < nb; b0 += 16) {
        const int k = nb - b0 < 16 ? nb - b0 : 16;
        if (k & 3) memset(&buf[k / 4], 0, sizeof buf[0]);
        for (int i = 0; i < k; i++) a80_put(&buf[i / 4], i & 3, yb[b0 + i].qs, h2f(yb[b0 + i].d));
        q80_acc(x + 34 * (size_t)b0, k, buf, 0, &acc0, &acc1, 1);
    }
    *s = hsum16(_mm512_add_ps(acc0, acc1));
}

#undef TILE_SWITCH

void eng_quant_avx512_kernels(uint32_t type, eng_type_kernels *k) {
    switch (type) {
    case ENG_TYPE_Q4_1:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q41_dot, a41_bytes, a41_quantize, q41_gemm};
        break;
    case ENG_TYPE_Q8_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q80_dot, a80_bytes, a80_quantize, q80_gemm};
        break;
    default: break;
    }
}

#else /* not x86-64 */

void eng_quant_avx512_kernels(uint32_t type, eng_type_kernels *k) {
    (void)type;
    (void)k;
}

#endif
