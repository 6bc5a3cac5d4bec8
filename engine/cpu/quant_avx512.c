/* engine/cpu/quant_avx512.c: AVX-512 (F/BW/VL/DQ + VNNI) tiles, up to 8 tokens per weight pass:
 * q8_0, q5_0 two 32-blocks per register over prepared quads, q4_0 and q4_1 sixteen blocks
 * per register, one per lane (an exact integer sum per block and token), with vpdpbusd; q4_K, q5_K, q6_K 64 values per register (vpmaddubsw + vpdpwssd) over
 * quant_simd.h's prepared q8_K (q4_K/q5_K: eng_q8k4_prep). Without VNNI a CPU runs the AVX2 level; other types keep the
 * AVX2 kernels here. Per-function target attributes; called only after run-time detection. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../quant.h"
#include "../quant_impl.h"
#include "quant_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c"
#define AVX512_FN     __attribute__((target(AVX512_TARGET)))
#define AVX512_INLINE static inline __attribute__((always_inline, target(AVX512_TARGET)))

/* Tokens per weight pass of q8_0 and q5_0: two accumulators per token, which
 * fit the 32 vector registers. */
enum { Q80_T = 8 };

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
        __m512 away = _mm512_castsi512_ps(
            _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(y), sign), one));
        t = _mm512_mask_add_ps(t, ge, t, away);
        qi[i] = _mm512_cvttps_epi32(t);
        _mm_storeu_si128((__m128i *)(q + 16 * i), _mm512_cvtsepi32_epi8(qi[i]));
    }
    *sum = _mm512_reduce_add_epi32(_mm512_add_epi32(qi[0], qi[1]));
    return d;
}

AVX512_INLINE float h2f(uint16_t h) { return _cvtsh_ss(h); }

/* --- q4_0 x q8_0, q4_1 x q8_1 --------------------------------------------------------- */
/* Rows are walked in groups of 16 32-blocks, one block per 32-bit lane: vpdpbusd
 * sums 4 byte products into a lane, so eight of them, each over 4 values of
 * every block of the group, leave each lane with its block's exact integer dot
 * product. The weights are loaded as four quads (block 4q + i's 16 bytes in
 * 128-bit lane i of register q) and a 4 x 4 dword transpose within the 128-bit
 * lanes (eight unpacks, once per group for all tokens) makes register k hold
 * bytes 4k..4k+3 of every block, lane 4i + q for block 4q + i; its low nibbles
 * are values 4k..4k+3, its high ones 16 + 4k..; the prepared activations are
 * laid out to match. vpdpbusd takes the nibbles unsigned (0..15) and the
 * activations signed: q4_0's -8 offset is each lane's start, -8 * sum(q_a)
 * (prepared once per token). Each block's term is then the reference's,
 * (float)isum * (d_w * d_a), fma'd into its lane, and q4_1's m * s after it in
 * the same lane: per token and group eight vpdpbusd, one conversion, one
 * multiply and one fma (q4_1 one more) where quads of four blocks took two
 * vpdpbusd, a conversion, a multiply and an fma per quad. The lanes are summed
 * at the end (hsum16); every (row, token) goes through the same instructions
 * whatever the tile. A prepared group (640 bytes): the values, then d, then s
 * (q4_1) or the starts (q4_0), all in lane order. */
typedef struct a4_group {
    int8_t qs[8][64];
    float d[16];
    union {
        float s[16];    /* q4_1: f16-rounded s */
        int32_t st[16]; /* q4_0: -8 * sum(q_a) */
    } x;
} a4_group;

/* Tokens per weight pass: one accumulator per token. */
enum { Q4_T = 8 };

static size_t a4_bytes(int64_t n) { return (size_t)((n / 32 + 15) / 16) * sizeof(a4_group); }

/* Block b (0..15) of group g: values qs, scale d; sum the integer sum of qs
 * (q4_0's start) or s (q4_1). */
AVX512_INLINE void a4_put(a4_group *g, int b, const int8_t *qs, float d, int sum, float s, const int M) {
    const int lane = 4 * (b & 3) + (b >> 2);
    for (int k = 0; k < 8; k++) memcpy(&g->qs[k][4 * lane], qs + 4 * k, 4);
    g->d[lane] = d;
    if (M)
        g->x.s[lane] = s;
    else
        g->x.st[lane] = -8 * sum;
}

AVX512_INLINE void a4_quantize(const float *x, void *dst, int64_t n, const int M) {
    a4_group *o = dst;
    const int64_t nb = n / 32;
    if (nb & 15) memset(&o[nb / 16], 0, sizeof *o);
    for (int64_t b = 0; b < nb; b++, x += 32) {
        int8_t q[32];
        int sum;
        const float d = q8_block(x, q, &sum);
        const float dh = h2f(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        const float sh = M ? h2f(_cvtss_sh((float)sum * d, _MM_FROUND_TO_NEAREST_INT)) : 0.0f;
        a4_put(&o[b / 16], (int)(b & 15), q, dh, sum, sh, M);
    }
}

AVX512_FN static void a40_quantize(const float *x, void *dst, int64_t n) { a4_quantize(x, dst, n, 0); }
AVX512_FN static void a41_quantize(const float *x, void *dst, int64_t n) { a4_quantize(x, dst, n, 1); }

/* Where q4_decode finds a group's bytes in its five 64-byte loads (q4_0, q4_1):
 * the words of quad 0's values in loads 0 and 1 (block i's in 128-bit lane i; quad
 * q's are quad 0's plus 2 * bb - 32 in loads q and q + 1), and the words of d and m in lane
 * order from loads 0-1, 2-3 and 4. */
static const uint16_t q4_quad_idx[2][32]
    __attribute__((aligned(64))) = {{1,  2,  3,  4,  5,  6,  7,  8,  10, 11, 12, 13, 14, 15, 16, 17,
                                     19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31, 32, 33, 34, 35},
                                    {2,  3,  4,  5,  6,  7,  8,  9,  12, 13, 14, 15, 16, 17, 18, 19,
                                     22, 23, 24, 25, 26, 27, 28, 29, 32, 33, 34, 35, 36, 37, 38, 39}};
static const uint16_t q4_scale_idx[2][3][32] __attribute__((aligned(64))) = {
    {{0, 36, 0, 0, 9, 45, 0, 0, 18, 54, 0, 0, 27, 63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
     {0, 0, 8, 44, 0, 0, 17, 53, 0, 0, 26, 62, 0, 0, 35, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
     {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {{0, 40, 0, 0, 10, 50, 0, 0, 20, 60, 0, 0, 30, 0, 0, 0,
      1, 41, 0, 0, 11, 51, 0, 0, 21, 61, 0, 0, 31, 0, 0, 0},
     {0, 0, 16, 56, 0, 0, 26, 0, 0, 0, 36, 0, 0, 6, 46, 0,
      0, 0, 17, 57, 0, 0, 27, 0, 0, 0, 37, 0, 0, 7, 47, 0},
     {0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 12, 0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 13, 0, 0, 0, 23}}};
static const uint32_t q4_scale_mask[2][2] = {{0x4cccu, 0x8000u}, {0x644c644cu, 0x88808880u}};

/* Bytes [0, rem) from p, zeros past them (nothing read there). */
AVX512_INLINE __m512i q4_load_part(const uint8_t *p, int rem) {
    if (rem >= 64) return _mm512_loadu_si512(p);
    return _mm512_maskz_loadu_epi8(rem > 0 ? ~0ull >> (64 - rem) : 0, p);
}

/* One group of nb blocks (1..16) of one row of q4_0 (M = 0, 18-byte blocks) or
 * q4_1 (M = 1, 20-byte blocks), decoded for all tokens: w[k] the nibbles of
 * values 4k..4k+3 (k < 4) or 16 + 4(k - 4).. of every block, block 4q + i in lane
 * 4i + q; dw (and mw, q4_1) its scales in the same lanes; zeros past nb. The
 * group is five 64-byte loads (fewer bytes at the end), picked apart by vpermt2w
 * (the values start at even offsets) (q4_quad_idx, q4_scale_idx). */
AVX512_INLINE void q4_decode(const uint8_t *x, int nb, __m512i *w, __m512 *dw, __m512 *mw, const int M) {
    const int bb = M ? 20 : 18, valid = (nb < 16 ? nb : 16) * bb;
    __m512i l[5], r[4];
#pragma GCC unroll 5
    for (int j = 0; j < 5; j++) l[j] = q4_load_part(x + 64 * j, valid - 64 * j);
    const __m512i qidx = _mm512_load_si512(q4_quad_idx[M]);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++)
        r[q] = _mm512_permutex2var_epi16(
            l[q], _mm512_add_epi16(qidx, _mm512_set1_epi16((short)((2 * bb - 32) * q))), l[q + 1]);
    const __m512i t0 = _mm512_unpacklo_epi32(r[0], r[1]), t1 = _mm512_unpackhi_epi32(r[0], r[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(r[2], r[3]), t3 = _mm512_unpackhi_epi32(r[2], r[3]);
    const __m512i u[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                          _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
    const __m512i m4 = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        w[k] = _mm512_and_si512(u[k], m4);
        w[4 + k] = _mm512_and_si512(_mm512_srli_epi16(u[k], 4), m4);
    }
    /* words 0-15: d in lane order, 16-31: m */
    const __m512i a = _mm512_permutex2var_epi16(l[0], _mm512_load_si512(q4_scale_idx[M][0]), l[1]);
    const __m512i b = _mm512_permutex2var_epi16(l[2], _mm512_load_si512(q4_scale_idx[M][1]), l[3]);
    const __m512i c = _mm512_permutexvar_epi16(_mm512_load_si512(q4_scale_idx[M][2]), l[4]);
    const __m512i o = _mm512_mask_blend_epi16(q4_scale_mask[M][1],
                                              _mm512_mask_blend_epi16(q4_scale_mask[M][0], a, b), c);
    *dw = _mm512_cvtph_ps(_mm512_castsi512_si256(o));
    if (M) *mw = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(o, 1));
}

/* Accumulates blocks [0, nb) of one weight row against T prepared rows; pf:
 * how far ahead of each group to prefetch. */
AVX512_INLINE void q4_acc(const uint8_t *x, int nb, const a4_group *a, size_t lda_g, __m512 *acc, size_t pf,
                          const int T, const int M) {
    const size_t gb = M ? 320 : 288;
    for (int g = 0; 16 * g < nb; g++) {
        const uint8_t *xg = x + gb * (size_t)g;
        if (nb - 16 * g >= 16)
            for (int o = 0; o < (M ? 320 : 288); o += 64)
                _mm_prefetch((const char *)xg + pf + o, _MM_HINT_T0);
        __m512i w[8];
        __m512 dw, mw = _mm512_setzero_ps();
        q4_decode(xg, nb - 16 * g, w, &dw, &mw, M);
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) {
            const a4_group *A = a + (size_t)t * lda_g + g;
            __m512i p = M ? _mm512_setzero_si512() : _mm512_load_si512(A->x.st);
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++) p = _mm512_dpbusd_epi32(p, w[k], _mm512_load_si512(A->qs[k]));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw, _mm512_load_ps(A->d)), acc[t]);
            if (M) acc[t] = _mm512_fmadd_ps(mw, _mm512_load_ps(A->x.s), acc[t]);
        }
    }
}

/* Rows wider than 2 segments of Q4_SEG blocks, with 4+ tokens, go segment by
 * segment over Q4_SUB rows at a time (their accumulators kept on the stack), so
 * that a segment of the T prepared rows (20 KB at T = 8) stays in L1 where a
 * whole row's (80 KB for the FFN's 8192-wide down projection) would not; each
 * lane still sums its groups in order, so the results are those of one pass,
 * and weights are prefetched two rows ahead in the same segment. */
enum { Q4_SEG = 64, Q4_SUB = 16 };

AVX512_INLINE void q4_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr, const a4_group *a,
                           size_t lda_g, const int M, const int T) {
    if (T < 4 || nb <= 2 * Q4_SEG) {
        for (int r = 0; r < nr; r++) {
            __m512 acc[Q4_T];
#pragma GCC unroll 8
            for (int t = 0; t < T; t++) acc[t] = _mm512_setzero_ps();
            q4_acc((const uint8_t *)(w + (size_t)r * ldw), nb, a, lda_g, acc, PF_DIST, T, M);
#pragma GCC unroll 8
            for (int t = 0; t < T; t++) y[(size_t)t * ldy + (size_t)r] = hsum16(acc[t]);
        }
        return;
    }
    const size_t gb = M ? 320 : 288;
    for (int r0 = 0; r0 < nr; r0 += Q4_SUB) {
        const int ns = nr - r0 < Q4_SUB ? nr - r0 : Q4_SUB;
        __m512 keep[Q4_SUB][Q4_T];
        for (int b0 = 0; b0 < nb; b0 += Q4_SEG) {
            const int nbs = nb - b0 < Q4_SEG ? nb - b0 : Q4_SEG;
            for (int r = 0; r < ns; r++) {
                __m512 acc[Q4_T];
#pragma GCC unroll 8
                for (int t = 0; t < T; t++) acc[t] = b0 ? keep[r][t] : _mm512_setzero_ps();
                q4_acc((const uint8_t *)(w + (size_t)(r0 + r) * ldw) + gb * (size_t)(b0 / 16), nbs,
                       a + b0 / 16, lda_g, acc, 2 * ldw, T, M);
#pragma GCC unroll 8
                for (int t = 0; t < T; t++) keep[r][t] = acc[t];
            }
        }
        for (int r = 0; r < ns; r++)
#pragma GCC unroll 8
            for (int t = 0; t < T; t++) y[(size_t)t * ldy + (size_t)(r0 + r)] = hsum16(keep[r][t]);
    }
}

AVX512_INLINE void q40_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,
                            const a4_group *a, size_t lda_g, const int T) {
    q4_tile(nb, y, ldy, w, ldw, nr, a, lda_g, 0, T);
}

AVX512_INLINE void q41_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,
                            const a4_group *a, size_t lda_g, const int T) {
    q4_tile(nb, y, ldy, w, ldw, nr, a, lda_g, 1, T);
}

/* Calls tile(..., T) with T = nt as a constant, nt in 1..8. */
#define TILE_SWITCH(tile, nt, ...)       \
    switch (nt) {                        \
    case 1: tile(__VA_ARGS__, 1); break; \
    case 2: tile(__VA_ARGS__, 2); break; \
    case 3: tile(__VA_ARGS__, 3); break; \
    case 4: tile(__VA_ARGS__, 4); break; \
    case 5: tile(__VA_ARGS__, 5); break; \
    case 6: tile(__VA_ARGS__, 6); break; \
    case 7: tile(__VA_ARGS__, 7); break; \
    case 8: tile(__VA_ARGS__, 8); break; \
    default: break;                      \
    }

/* A gemm over T-token tiles of prepared activations (quad blocks), each tile
 * by pfx##_tile at its width (TILE_SWITCH). */
#define AVX512_TILED_GEMM(pfx, quad, TT)                                                                 \
    AVX512_FN static void pfx##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, \
                                     const void *a, size_t lda, int nt) {                                \
        const size_t lda_q = lda / sizeof(quad);                                                         \
        const int nb = (int)(n / 32);                                                                    \
        for (int t0 = 0; t0 < nt; t0 += TT) {                                                            \
            const quad *at = (const quad *)((const char *)a + (size_t)t0 * lda);                         \
            float *yt = y + (size_t)t0 * ldy;                                                            \
            TILE_SWITCH(pfx##_tile, nt - t0 < TT ? nt - t0 : TT, nb, yt, ldy, w, ldw, nr, at, lda_q)     \
        }                                                                                                \
    }

AVX512_TILED_GEMM(q40, a4_group, Q4_T)
AVX512_TILED_GEMM(q41, a4_group, Q4_T)

/* The same arithmetic on reference q8_0 / q8_1 activations, rearranged a group at a time. */
AVX512_FN static void q40_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q8_0 *yb = a;
    a4_group buf __attribute__((aligned(64)));
    __m512 acc = _mm512_setzero_ps();
    const int nb = (int)(n / 32);
    for (int b0 = 0; b0 < nb; b0 += 16) {
        const int k = nb - b0 < 16 ? nb - b0 : 16;
        if (k < 16) memset(&buf, 0, sizeof buf);
        for (int i = 0; i < k; i++) {
            int sum = 0;
            for (int j = 0; j < 32; j++) sum += yb[b0 + i].qs[j];
            a4_put(&buf, i, yb[b0 + i].qs, h2f(yb[b0 + i].d), sum, 0.0f, 0);
        }
        q4_acc((const uint8_t *)w + 18 * (size_t)b0, k, &buf, 0, &acc, PF_DIST, 1, 0);
    }
    *s = hsum16(acc);
}

AVX512_FN static void q41_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q8_1 *yb = a;
    a4_group buf __attribute__((aligned(64)));
    __m512 acc = _mm512_setzero_ps();
    const int nb = (int)(n / 32);
    for (int b0 = 0; b0 < nb; b0 += 16) {
        const int k = nb - b0 < 16 ? nb - b0 : 16;
        if (k < 16) memset(&buf, 0, sizeof buf);
        for (int i = 0; i < k; i++)
            a4_put(&buf, i, yb[b0 + i].qs, h2f(yb[b0 + i].d), 0, h2f(yb[b0 + i].s), 1);
        q4_acc((const uint8_t *)w + 20 * (size_t)b0, k, &buf, 0, &acc, PF_DIST, 1, 1);
    }
    *s = hsum16(acc);
}

/* --- q8_0, q4_0, q5_0 x q8_0 ---------------------------------------------------------- */
/* vpdpbusd multiplies unsigned by signed bytes: the prepared activations are
 * biased to a + 128 (xor 0x80) and each lane starts at -128 times the sum of its
 * four weights (computed once per weight pass, for all tokens), so each 32-bit
 * lane ends with the exact signed sum. Rows are walked in quads of four 32-blocks
 * (two 512-bit registers); a prepared quad holds the biased values (zeros past
 * the end of the row) and the four f16-rounded scales: 192 bytes, so a tile's
 * rows stay in L1 longer than with scales spread over the lanes. */
typedef struct a80_quad {
    uint8_t qs[128];
    float d[4];
    float pad[12];
} a80_quad;

static size_t a80_bytes(int64_t n) { return (size_t)((n / 32 + 3) / 4) * sizeof(a80_quad); }

AVX512_INLINE void a80_put(a80_quad *q, int i, const int8_t *qs, float d) {
    __m256i v = _mm256_loadu_si256((const __m256i *)qs);
    _mm256_storeu_si256((__m256i *)(q->qs + 32 * i), _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80)));
    q->d[i] = d;
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

static uint32_t rd32(const void *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The signed values of blocks x[0], x[1] (x[1] absent, zeros, when one). */
AVX512_INLINE __m512i q80_values(const uint8_t *x, const int one) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)(x + 2));
    return one ? _mm512_zextsi256_si512(lo)
               : _mm512_inserti64x4(_mm512_castsi256_si512(lo), _mm256_loadu_si256((const __m256i *)(x + 36)),
                                    1);
}

/* The nibbles of the 16 bytes at q0 and at q1 (zeros when one) in element order,
 * [q0 low, q0 high, q1 low, q1 high], plus bias (absent values stay 0). */
AVX512_INLINE __m512i nibbles2(const uint8_t *q0, const uint8_t *q1, const int one, char bias) {
    __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q0));
    __m512i z = one ? _mm512_zextsi256_si512(lo)
                    : _mm512_inserti64x4(_mm512_castsi256_si512(lo),
                                         _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q1)),
                                         1);
    z = _mm512_and_si512(_mm512_srlv_epi64(z, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)),
                         _mm512_set1_epi8(0x0F));
    return _mm512_maskz_add_epi8(one ? 0xFFFFFFFFull : ~0ull, z, _mm512_set1_epi8(bias));
}

AVX512_INLINE __m512i q50_values(const uint8_t *x, const int one) {
    const __m512i v = nibbles2(x + 6, x + 28, one, -16);
    const uint64_t hb = (uint64_t)rd32(x + 2) | (one ? 0 : (uint64_t)rd32(x + 24) << 32);
    return _mm512_mask_add_epi8(v, _cvtu64_mask64(hb), v, _mm512_set1_epi8(16));
}

/* -128 times the sum of each lane's four weights: the start of its vpdpbusd. */
AVX512_INLINE __m512i q8_start(__m512i w) {
    return _mm512_sub_epi32(_mm512_setzero_si512(),
                            _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8((char)0x80), w));
}

/* The tiled gemm and the vec_dot of one type of BB-byte 32-blocks whose values
 * pfx##_values gives: per quad the weights and their scales once, then for each
 * of the T tokens two vpdpbusd and two fma (block pairs into acc0, acc1). */
#define AVX512_Q8ACT_QUAD(pfx, BB)                                                                          \
    AVX512_INLINE void pfx##_quad(const uint8_t *x, int nbq, const a80_quad *a, size_t lda_q, __m512 *acc0, \
                                  __m512 *acc1, const int T) {                                              \
        const __m512i idx_d = _mm512_setr_epi32((BB) / 2 << 16, (3 * (BB) / 2) << 16 | (BB), 0, 0, 0, 0, 0, \
                                                0, 0, 0, 0, 0, 0, 0, 0, 0);                                 \
        const __m512i i01 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);              \
        const __m512i i23 = _mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);              \
        __m512i r0, r1 = _mm512_setzero_si512();                                                            \
        const int bytes = (BB)*nbq;                                                                         \
        r0 = _mm512_maskz_loadu_epi8(bytes >= 64 ? ~0ull : (1ull << bytes) - 1, x);                         \
        if (bytes > 64)                                                                                     \
            r1 = _mm512_maskz_loadu_epi8(bytes >= 128 ? ~0ull : (1ull << (bytes - 64)) - 1, x + 64);        \
        const __m128 f = _mm_cvtph_ps(_mm512_castsi512_si128(_mm512_permutex2var_epi16(r0, idx_d, r1)));    \
        const __m512i wq01 = pfx##_values(x, nbq == 1), st01 = q8_start(wq01);                              \
        __m512i wq23 = _mm512_setzero_si512(), st23 = _mm512_setzero_si512();                               \
        if (nbq > 2) {                                                                                      \
            wq23 = pfx##_values(x + 2 * (BB), nbq == 3);                                                    \
            st23 = q8_start(wq23);                                                                          \
        }                                                                                                   \
        _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                                               \
            const a80_quad *A = a + (size_t)t * lda_q;                                                      \
            /* the four blocks' d_w * d_a, then over each block's 8 lanes */                                \
            const __m512 dd = _mm512_castps128_ps512(_mm_mul_ps(f, _mm_load_ps(A->d)));                     \
            __m512i p = _mm512_dpbusd_epi32(st01, _mm512_load_si512(A->qs), wq01);                          \
            acc0[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(i01, dd), acc0[t]);      \
            if (nbq > 2) {                                                                                  \
                p = _mm512_dpbusd_epi32(st23, _mm512_load_si512(A->qs + 64), wq23);                         \
                acc1[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(i23, dd), acc1[t]);  \
            }                                                                                               \
        }                                                                                                   \
    }

/* The rest of the gemm and the vec_dot over pfx##_quad, on prepared quads of type
 * QT that PUT fills. */
#define AVX512_Q8ACT_GEMM(pfx, BB, QT, PUT)                                                            \
    AVX512_INLINE void pfx##_acc(const uint8_t *x, int nb, const QT *a, size_t lda_q, __m512 *acc0,    \
                                 __m512 *acc1, const int T) {                                          \
        int q = 0;                                                                                     \
        for (; 4 * q + 4 <= nb; q++) {                                                                 \
            for (int o = 0; o < 4 * (BB); o += 64)                                                     \
                _mm_prefetch((const char *)x + 4 * (BB) * (size_t)q + PF_DIST + o, _MM_HINT_T0);       \
            pfx##_quad(x + 4 * (BB) * (size_t)q, 4, a + q, lda_q, acc0, acc1, T);                      \
        }                                                                                              \
        if (4 * q < nb) pfx##_quad(x + 4 * (BB) * (size_t)q, nb - 4 * q, a + q, lda_q, acc0, acc1, T); \
    }                                                                                                  \
    AVX512_INLINE void pfx##_tile(int nb, float *y, size_t ldy, const char *w, size_t ldw, int nr,     \
                                  const QT *a, size_t lda_q, const int T) {                            \
        for (int r = 0; r < nr; r++) {                                                                 \
            __m512 acc0[8], acc1[8];                                                                   \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc0[t] = _mm512_setzero_ps(),         \
                                                                acc1[t] = _mm512_setzero_ps();         \
            pfx##_acc((const uint8_t *)(w + (size_t)r * ldw), nb, a, lda_q, acc0, acc1, T);            \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++)                                        \
                y[(size_t)t * ldy + (size_t)r] = hsum16(_mm512_add_ps(acc0[t], acc1[t]));              \
        }                                                                                              \
    }                                                                                                  \
    AVX512_TILED_GEMM(pfx, QT, Q80_T)                                                                  \
    AVX512_FN static void pfx##_dot(int64_t n, float *s, const void *w, const void *a) {               \
        const uint8_t *x = w;                                                                          \
        const eng_block_q8_0 *yb = a;                                                                  \
        QT buf[4] __attribute__((aligned(64)));                                                        \
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();                                 \
        const int nb = (int)(n / 32);                                                                  \
        for (int b0 = 0; b0 < nb; b0 += 16) {                                                          \
            const int k = nb - b0 < 16 ? nb - b0 : 16;                                                 \
            if (k & 3) memset(&buf[k / 4], 0, sizeof buf[0]);                                          \
            for (int i = 0; i < k; i++) PUT(&buf[i / 4], i & 3, yb[b0 + i].qs, h2f(yb[b0 + i].d));     \
            pfx##_acc(x + (BB) * (size_t)b0, k, buf, 0, &acc0, &acc1, 1);                              \
        }                                                                                              \
        *s = hsum16(_mm512_add_ps(acc0, acc1));                                                        \
    }

AVX512_Q8ACT_QUAD(q80, 34)
AVX512_Q8ACT_QUAD(q50, 22)
AVX512_Q8ACT_GEMM(q80, 34, a80_quad, a80_put)
AVX512_Q8ACT_GEMM(q50, 22, a80_quad, a80_put)

/* --- q4_K, q5_K, q6_K x q8_K -------------------------------------------------------- */
/* 64 values per register: per super-block the integer sums by vpmaddubsw and
 * vpdpwssd (the 16-bit sub-block scales), then per token one conversion and two
 * fma. The weights of a block are decoded once for all T tokens (up to K_T per
 * pass) with as few instructions as the layouts allow, since at one token
 * (decode) that decoding is most of the work:
 * - q4_K / q5_K: one 64-byte load of the nibbles gives sub-blocks 0 and 2 (low
 *   nibbles) and 1 and 3 (high), so the prepared activations (eng_q8k4_prep) hold
 *   the sub-blocks in that order and their sums; the 6-bit scales and mins are
 *   unpacked in general registers, each register's two scales spread by one
 *   vpshufb, and the mins term (dmin * sum_j mn_j * sum_j(a), sums prepared with
 *   the activations) enters four float lanes beside the block's: per token
 *   isum * d - imin * dmin, then one fma by the activations' scale.
 * - q6_K: the -32 offset enters the integer sum itself (from the bsums, before
 *   the scales), each 128-bit lane of a register holds one 16-value scale group
 *   (one vpshufb of the sign-extended scales), and one fma by d_w * d_a.
 * vec_dot runs the same arithmetic on the reference q8_K layout (P = 0). */
enum { K_T = 8 };

#define KA_BYTES(P) ((P) ? sizeof(eng_q8k_prep) : sizeof(eng_block_q8_k))
#define KA_QS(p, P) ((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, qs) : offsetof(eng_block_q8_k, qs)))
#define KA_BS(p, P) \
    ((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, bsums) : offsetof(eng_block_q8_k, bsums)))
#define KA_D(p, P) \
    ((const float *)((const char *)(p) + ((P) ? offsetof(eng_q8k_prep, d) : offsetof(eng_block_q8_k, d))))

/* The prepared q4_K / q5_K activations: the reference q8_K values with 32-byte
 * chunks 1-2 and 5-6 swapped and the eight sub-block sums beside them. */
AVX512_FN static void k4_quantize(const float *x, void *dst, int64_t n) {
    eng_q8k_prep_avx2(x, dst, n);
    char *o = dst;
    for (int64_t b = 0; b < n / ENG_QK_K; b++, o += sizeof(eng_q8k4_prep)) {
        for (int h = 0; h < 2; h++) {
            __m256i *c = (__m256i *)(o + 128 * h);
            const __m256i c1 = _mm256_loadu_si256(c + 1), c2 = _mm256_loadu_si256(c + 2);
            _mm256_storeu_si256(c + 1, c2);
            _mm256_storeu_si256(c + 2, c1);
        }
        const __m256i s = _mm256_madd_epi16(
            _mm256_loadu_si256((const __m256i *)(o + offsetof(eng_q8k_prep, bsums))), _mm256_set1_epi16(1));
        _mm_storeu_si128((__m128i *)(o + offsetof(eng_q8k4_prep, sums)),
                         _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1)));
        _mm_storeu_si128((__m128i *)(o + offsetof(eng_q8k4_prep, pad16)), _mm_setzero_si128());
    }
}

/* Register k (0-3) of a q4_K / q5_K block's activations: sub-blocks k4_sub(k)
 * and k4_sub(k) + 2. */
static inline int k4_sub(int k) { return (k & 2) * 2 + (k & 1); }

AVX512_INLINE __m512i k4_act(const char *A, int k, const int P) {
    if (P) return _mm512_loadu_si512(A + 64 * k);
    const char *qs = KA_QS(A, 0) + 32 * k4_sub(k);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)qs)),
                              _mm256_loadu_si256((const __m256i *)(qs + 64)), 1);
}

/* The eight sub-block sums of an activation block, as 16-bit words. */
AVX512_INLINE __m128i k4_sums(const char *A, const int P) {
    if (P) return _mm_loadu_si128((const __m128i *)(A + offsetof(eng_q8k4_prep, sums)));
    const __m256i s = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)KA_BS(A, 0)),
                                        _mm256_set1_epi16(1));
    return _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/* The 6-bit scales and mins of a q4_K / q5_K block (12 bytes at s, as
 * eng_k_scale_min): byte j of *sc is sub-block j's scale, of *mn its min. */
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

/* vpshufb indexes spreading bytes a and b of each 128-bit lane to 16-bit words:
 * byte a over the low 256 bits, b over the high. */
#define K_SPREAD(a, b) \
    _mm512_inserti64x4(_mm512_set1_epi16((short)(0x8000 | (a))), _mm256_set1_epi16((short)(0x8000 | (b))), 1)

/* One q4_K / q5_K super-block: 4-bit values at qs, fifth bits at qhp (q5_K;
 * NULL for q4_K), hd the block's start (d, dmin, scales). */
AVX512_INLINE void k45_sb(const uint8_t *hd, const uint8_t *qs, const uint8_t *qhp, const char *a, size_t lda,
                          __m512 *acc, const int T, const int P) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    uint64_t sc, mn;
    k_scales64(hd + 4, &sc, &mn);
    const __m512i r0 = _mm512_loadu_si512(qs), r1 = _mm512_loadu_si512(qs + 64);
    __m512i w[4] = {_mm512_and_si512(r0, m4), _mm512_and_si512(_mm512_srli_epi16(r0, 4), m4),
                    _mm512_and_si512(r1, m4), _mm512_and_si512(_mm512_srli_epi16(r1, 4), m4)};
    if (qhp) { /* sub-block j's fifth bits are bit j of qh[0..31]: rotated to bit 4 */
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)qhp));
        const __m512i m10 = _mm512_set1_epi8(0x10);
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const int j = k4_sub(k);
            const __m512i cnt = _mm512_inserti64x4(_mm512_set1_epi64((4 - j) & 63),
                                                   _mm256_set1_epi64x((4 - j - 2) & 63), 1);
            w[k] = _mm512_ternarylogic_epi32(w[k], _mm512_rolv_epi64(qh, cnt), m10, 0xF8); /* a | (b & c) */
        }
    }
    const __m512i scb = _mm512_set1_epi64((long long)sc);
    const __m512i s[4] = {_mm512_shuffle_epi8(scb, K_SPREAD(0, 2)), _mm512_shuffle_epi8(scb, K_SPREAD(1, 3)),
                          _mm512_shuffle_epi8(scb, K_SPREAD(4, 6)), _mm512_shuffle_epi8(scb, K_SPREAD(5, 7))};
    const __m128i mins = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)mn));
    const __m128 dmf = _mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)hd)); /* d, dmin */
    const __m512 dv = _mm512_broadcastss_ps(dmf);
    const __m128 mv = _mm_broadcastss_ps(_mm_movehdup_ps(dmf));
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const char *A = a + (size_t)t * lda;
        __m512i isum = _mm512_madd_epi16(_mm512_maddubs_epi16(w[0], k4_act(A, 0, P)), s[0]);
#pragma GCC unroll 3
        for (int k = 1; k < 4; k++)
            isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(w[k], k4_act(A, k, P)), s[k]);
        const __m128 m = _mm_mul_ps(_mm_cvtepi32_ps(_mm_madd_epi16(mins, k4_sums(A, P))), mv);
        const __m512 f = _mm512_fmsub_ps(_mm512_cvtepi32_ps(isum), dv, _mm512_zextps128_ps512(m));
        acc[t] = _mm512_fmadd_ps(f, _mm512_set1_ps(*KA_D(A, P)), acc[t]);
    }
}

AVX512_INLINE void q4k_sb(const eng_block_q4_k *x, const char *a, size_t lda, __m512 *acc, const int T,
                          const int P) {
    k45_sb((const uint8_t *)x, x->qs, NULL, a, lda, acc, T, P);
}

AVX512_INLINE void q5k_sb(const eng_block_q5_k *x, const char *a, size_t lda, __m512 *acc, const int T,
                          const int P) {
    k45_sb((const uint8_t *)x, x->qs, x->qh, a, lda, acc, T, P);
}

AVX512_INLINE void q6k_sb(const eng_block_q6_k *x, const char *a, size_t lda, __m512 *acc, const int T,
                          const int P) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x->scales));
    const __m512i sc16 = _mm512_zextsi256_si512(s16);
    /* the -32 offset in the integer sum: it starts at -32 * sum_g scale_g * bsum_g */
    const __m256i s16m = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s16, 5));
    __m512i isum[K_T];
#pragma GCC unroll 8
    for (int t = 0; t < T; t++)
        isum[t] = _mm512_zextsi256_si512(
            _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)KA_BS(a + (size_t)t * lda, P)), s16m));
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        /* values 64c..64c+63: ql's 64 bytes of half c / 2 (low nibbles for even
         * c, high for odd), two bits each from qh's 32 bytes */
        const int h = c >> 1;
        __m512i l = _mm512_loadu_si512(x->ql + 64 * h);
        __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(x->qh + 32 * h)));
        if (c & 1) {
            l = _mm512_srli_epi16(l, 4);
            qh = _mm512_srlv_epi64(qh, _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2));
        } else {
            qh = _mm512_sllv_epi64(qh, _mm512_setr_epi64(4, 4, 4, 4, 2, 2, 2, 2));
        }
        const __m512i v = _mm512_or_si512(_mm512_and_si512(l, m4), _mm512_and_si512(qh, m30));
        /* word k of the 32 products: scale group 4c + k / 8 */
        const __m512i sc = _mm512_permutexvar_epi16(
            _mm512_add_epi16(
                _mm512_set1_epi16((short)(4 * c)),
                _mm512_srli_epi16(_mm512_setr_epi32(0x10000, 0x30002, 0x50004, 0x70006, 0x90008, 0xB000A,
                                                    0xD000C, 0xF000E, 0x110010, 0x130012, 0x150014, 0x170016,
                                                    0x190018, 0x1B001A, 0x1D001C, 0x1F001E),
                                  3)),
            sc16);
#pragma GCC unroll 8
        for (int t = 0; t < T; t++) {
            const char *qs = KA_QS(a + (size_t)t * lda, P) + 64 * c;
            __m512i p = _mm512_maddubs_epi16(v, _mm512_loadu_si512(qs));
            isum[t] = _mm512_dpwssd_epi32(isum[t], p, sc);
        }
    }
    const __m512 dv = _mm512_set1_ps(h2f(x->d));
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) {
        const __m512 s = _mm512_mul_ps(dv, _mm512_set1_ps(*KA_D(a + (size_t)t * lda, P)));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), s, acc[t]);
    }
}

/* Rows against T activation rows super-block by super-block; the gemm in K_T
 * tiles on prepared rows, vec_dot on reference rows, both over pfx##_sb. At one
 * token (decode) rows go in pairs, their super-blocks interleaved (the activation
 * loads shared, two independent chains): 2% (q4_K) to 6% (q6_K) less time, each
 * row's arithmetic unchanged. */
#define AVX512_K_GEMM(pfx, wblk)                                                                         \
    AVX512_INLINE void pfx##_rows(int nsb, float *y, size_t ldy, const char *w, size_t ldw, int nr,      \
                                  const char *a, size_t lda, const int P, const int T) {                 \
        int r = 0;                                                                                       \
        if (T == 1)                                                                                      \
            for (; r + 2 <= nr; r += 2) {                                                                \
                const wblk *x0 = (const wblk *)(w + (size_t)r * ldw);                                    \
                const wblk *x1 = (const wblk *)(w + (size_t)(r + 1) * ldw);                              \
                __m512 acc0[1] = {_mm512_setzero_ps()}, acc1[1] = {_mm512_setzero_ps()};                 \
                for (int i = 0; i < nsb; i++) {                                                          \
                    for (size_t o = 0; o < sizeof(wblk); o += 64) {                                      \
                        _mm_prefetch((const char *)&x0[i] + PF_DIST + o, _MM_HINT_T0);                   \
                        _mm_prefetch((const char *)&x1[i] + PF_DIST + o, _MM_HINT_T0);                   \
                    }                                                                                    \
                    pfx##_sb(&x0[i], a + (size_t)i * KA_BYTES(P), lda, acc0, 1, P);                      \
                    pfx##_sb(&x1[i], a + (size_t)i * KA_BYTES(P), lda, acc1, 1, P);                      \
                }                                                                                        \
                y[r] = hsum16(acc0[0]);                                                                  \
                y[r + 1] = hsum16(acc1[0]);                                                              \
            }                                                                                            \
        for (; r < nr; r++) {                                                                            \
            const wblk *x = (const wblk *)(w + (size_t)r * ldw);                                         \
            __m512 acc[K_T];                                                                             \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[t] = _mm512_setzero_ps();            \
            for (int i = 0; i < nsb; i++) {                                                              \
                for (size_t o = 0; o < sizeof(wblk); o += 64) /* one per line: steps under 64 */         \
                    _mm_prefetch((const char *)&x[i] + PF_DIST + o, _MM_HINT_T0);                        \
                pfx##_sb(&x[i], a + (size_t)i * KA_BYTES(P), lda, acc, T, P);                            \
            }                                                                                            \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++)                                          \
                y[(size_t)t * ldy + (size_t)r] = hsum16(acc[t]);                                         \
        }                                                                                                \
    }                                                                                                    \
    AVX512_FN static void pfx##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, \
                                     const void *a, size_t lda, int nt) {                                \
        const int nsb = (int)(n / ENG_QK_K);                                                             \
        for (int t0 = 0; t0 < nt; t0 += K_T) {                                                           \
            const char *at = (const char *)a + (size_t)t0 * lda;                                         \
            float *yt = y + (size_t)t0 * ldy;                                                            \
            TILE_SWITCH(pfx##_rows, nt - t0 < K_T ? nt - t0 : K_T, nsb, yt, ldy, w, ldw, nr, at, lda, 1) \
        }                                                                                                \
    }                                                                                                    \
    AVX512_FN static void pfx##_dot(int64_t n, float *s, const void *w, const void *a) {                 \
        pfx##_rows((int)(n / ENG_QK_K), s, 1, w, 0, 1, a, 0, 0, 1);                                      \
    }

AVX512_K_GEMM(q4k, eng_block_q4_k)
AVX512_K_GEMM(q6k, eng_block_q6_k)
AVX512_K_GEMM(q5k, eng_block_q5_k)

#undef TILE_SWITCH

void eng_quant_avx512_kernels(uint32_t type, eng_type_kernels *k) {
    switch (type) {
    case ENG_TYPE_Q4_1:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q41_dot, a4_bytes, a41_quantize, q41_gemm};
        break;
    case ENG_TYPE_Q8_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q80_dot, a80_bytes, a80_quantize, q80_gemm};
        break;
    case ENG_TYPE_Q4_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q40_dot, a4_bytes, a40_quantize, q40_gemm};
        break;
    case ENG_TYPE_Q5_0:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q50_dot, a80_bytes, a80_quantize, q50_gemm};
        break;
    case ENG_TYPE_Q4_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q4k_dot, eng_q8k_prep_bytes, k4_quantize, q4k_gemm};
        break;
    case ENG_TYPE_Q5_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q5k_dot, eng_q8k_prep_bytes, k4_quantize, q5k_gemm};
        break;
    case ENG_TYPE_Q6_K:
        *k = (eng_type_kernels){ENG_SIMD_AVX512, q6k_dot, eng_q8k_prep_bytes, eng_q8k_prep_avx2, q6k_gemm};
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
