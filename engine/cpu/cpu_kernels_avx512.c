/* engine/cpu/cpu_kernels_avx512.c: AVX-512 attention over one chunk of keys (at most
 * CPU_ATTN_CHUNK positions) for up to 4 query heads of each of several kv heads, from
 * any tokens or sequences that read the same rows: scores for 16 keys at a time (one
 * fma chain per key, then a fixed transpose-and-add tree), a 16-lane exp, the value sum
 * in key order; each key and value (f16, q8_0 or q4_0 rows, or f32 rows) is loaded and
 * converted once for all the heads, each head's arithmetic unchanged. It writes
 * partials (max, sum of exps, value sum); merging the chunks is the backend's. Rows are
 * addressed a page at a time, whole rows of a block of keys for all kv heads, with the
 * next block and the block's values prefetched to L2, and no call sits in a loop (it
 * spilled the accumulators). The other non-matmul kernels stay at the AVX2 level. */
#include "cpu_kernels.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../quant_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c"
#define AVX512_FN     __attribute__((target(AVX512_TARGET)))
#define AVX512_INLINE static inline __attribute__((always_inline, target(AVX512_TARGET)))

enum { HD_MAX = 256, GROUP_MAX = CPU_ATTN_GROUP_MAX, HEADS_MAX = CPU_ATTN_HEADS_MAX };

/* exp(x) for 16 lanes, the polynomial of exp8 in cpu_kernels_avx2.c. */
AVX512_INLINE __m512 exp16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-87.3365447504f);
    const __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.0f)), lo);
    __m512 fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fx), _mm512_set1_epi32(127)), 23);
    y = _mm512_mul_ps(y, _mm512_castsi512_ps(e));
    return _mm512_maskz_mov_ps((__mmask16)~under, y);
}

AVX512_INLINE float hsum16(__m512 v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Sums of 16 accumulators as one vector (lane i = sum of a[i]); every lane goes
 * through the same tree whatever its slot. */
AVX512_INLINE __m512 reduce16(const __m512 *a) {
    __m512 l1[8], l2[4], l3[2];
    for (int i = 0; i < 8; i++)
        l1[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]),
                              _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
    for (int i = 0; i < 4; i++) {
        __m512d x = _mm512_castps_pd(l1[2 * i]), y = _mm512_castps_pd(l1[2 * i + 1]);
        l2[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                              _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
    }
    for (int i = 0; i < 2; i++)
        l3[i] = _mm512_add_ps(_mm512_shuffle_f32x4(l2[2 * i], l2[2 * i + 1], 0x88),
                              _mm512_shuffle_f32x4(l2[2 * i], l2[2 * i + 1], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_f32x4(l3[0], l3[1], 0x88), _mm512_shuffle_f32x4(l3[0], l3[1], 0xDD));
}

/* How a kernel reads keys or values: rows converted to f32 (prefill), or the
 * pages themselves in the cache's type, dequantized 16 values at a time as
 * they are loaded: the same values as the conversion (quant.c's formulas,
 * (float)q * d), so the same results. Blocks are dequantized, not dotted as
 * integers with a q8-quantized query as llama.cpp's CPU path does: the query
 * keeps its f32 precision (no second rounding in the scores), the prefill
 * (converted) and decode (in-register) paths give bit-identical values, which
 * batch invariance needs, and decode attention is bound by the bytes read,
 * which the block types cut, not by the few instructions per block. */
enum { KV_F32 = 0, KV_F16 = 1, KV_Q8_0 = 2, KV_Q4_0 = 3, KV_KINDS = 4 };

static int kv_kind(uint32_t type) {
    return type == ENG_TYPE_Q8_0 ? KV_Q8_0 : type == ENG_TYPE_Q4_0 ? KV_Q4_0 : KV_F16;
}

/* Where row j of kv head g starts: in the converted f32 rows, or in the pages. */
typedef struct kv_src {
    const float *f32;
    const uint8_t *raw;
} kv_src;

/* Rows lo + j0 .. lo + j0 + 15 of kv head g (past lo + nk - 1: the last row
 * again) into r. In the pages they are addressed page by page (one division
 * per 16 rows, the head's offset goff computed once per call: per row they
 * cost more than the 128 bytes a row's head reads), and the next 16 rows are
 * prefetched: a layer's rows of one page are ~6 KB, the next page's far
 * away, where the hardware prefetcher does not follow. To L2 (T1): on Zen 4
 * it keeps more lines in flight than T0, which fills L1's few miss buffers
 * (SmolLM2 at depth 4,096, one thread: 18 ms of CPU per token, not 22). */
AVX512_INLINE void kv_rows16(const eng_attn_args *a, const float *conv, size_t ld, int v, int g, size_t goff,
                             size_t bytes, int lo, int j0, int nk, kv_src *r) {
    const int last = lo + nk - 1;
    int pos = lo + j0;
    if (conv) {
        for (int i = 0; i < 16; i++, pos += pos < last) {
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
    for (int i = 0; i < 16; i++) {
        r[i].raw = p;
        r[i].f32 = NULL;
        if (pos < last) {
            pos++;
            p = ++in == pt ? (in = 0, (const uint8_t *)kv->pages[++page] + base) : p + row;
        }
    }
    /* the next block: from pos (the row after this block's last), up to 16 rows */
    for (int i = 0; i < 16 && pos < last; i++) {
        pos++;
        p = ++in == pt ? (in = 0, (const uint8_t *)kv->pages[++page] + base) : p + row;
        for (size_t b = 0; b < bytes; b += 64) _mm_prefetch((const char *)p + b, _MM_HINT_T1);
    }
}

/* Prefetches `bytes` from goff of rows lo + j0 .. lo + j0 + 15 (at most to
 * lo + nk - 1) of the K (v = 0) or V rows into the L2 cache: the scores pass
 * fetches the values its block's keys will need, so that the values pass,
 * one kv head at a time, reads them from there. */
AVX512_INLINE void kv_prefetch16_l2(const eng_attn_args *a, int v, size_t goff, size_t bytes, int lo, int j0,
                                    int nk) {
    const eng_kv_view *kv = a->kv;
    const int pt = kv->page_tokens;
    v = v && !kv->v_is_k;
    const size_t row = v ? kv->v_row : kv->k_row;
    const size_t base = (size_t)a->layer * (size_t)pt * (kv->k_row + kv->v_row) +
                        (v ? (size_t)pt * kv->k_row : 0) + goff;
    const int end = j0 + 16 < nk ? j0 + 16 : nk;
    for (int pos = lo + j0; pos < lo + end; pos++) {
        const uint8_t *p = (const uint8_t *)kv->pages[pos / pt] + base + (size_t)(pos % pt) * row;
        for (size_t b = 0; b < bytes; b += 64) _mm_prefetch((const char *)p + b, _MM_HINT_T1);
    }
}

AVX512_INLINE float half_at(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
}

/* Values c*16 .. c*16+15 of a row (a q8_0 or q4_0 block holds chunks 2b, 2b+1;
 * q4_0's low nibbles are the first 16 values of a block, the high ones the rest). */
AVX512_INLINE __m512 kv_load(kv_src r, int c, const int kind) {
    if (kind == KV_F32) return _mm512_loadu_ps(r.f32 + 16 * c);
    if (kind == KV_F16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(r.raw + 32 * c)));
    if (kind == KV_Q8_0) {
        const uint8_t *b = r.raw + (size_t)(c >> 1) * sizeof(eng_block_q8_0);
        const __m128i q = _mm_loadu_si128((const __m128i *)(b + offsetof(eng_block_q8_0, qs) + 16 * (c & 1)));
        return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), _mm512_set1_ps(half_at(b)));
    }
    const uint8_t *b = r.raw + (size_t)(c >> 1) * sizeof(eng_block_q4_0);
    __m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(b + offsetof(eng_block_q4_0, qs))));
    x = (c & 1) ? _mm512_srli_epi32(x, 4) : _mm512_and_si512(x, _mm512_set1_epi32(0xF));
    x = _mm512_sub_epi32(x, _mm512_set1_epi32(8));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(x), _mm512_set1_ps(half_at(b)));
}

/* Scores of keys lo .. lo + nk - 1 for the S query heads of each of the ng
 * kv heads g0 .. g0 + ng - 1 (head s of kv head g0 + i: q[i * S + s], into sc
 * + (i * S + s) * scs), 16 keys at a time (the last block repeats the last
 * key); their maxima into mx[i * S + s]. A block's rows are read for all ng
 * kv heads before the next block (whole rows, where the pages hold them
 * contiguously, so the reads stream) and its value rows are prefetched to
 * L2 (vf NULL). Each key's chunks are loaded (converted) once for the S
 * heads; each head's arithmetic is the one-head kernel's (mul, then fma per
 * chunk in order, the fixed tree), so a head's scores depend neither on S
 * nor on ng. nc = head_dim / 16, the kind and S are constants. */
AVX512_INLINE void scores_body(const eng_attn_args *a, const cpu_attn_q *q, int g0, int ng, int lo, int nk,
                               const float *kf, const float *vf, size_t ld, float *sc, size_t scs, float *mx,
                               const int nc, const int kind, const int S) {
    __m512 vmx[HEADS_MAX];
    for (int h = 0; h < ng * S; h++) vmx[h] = _mm512_set1_ps(-INFINITY);
    /* no call in the loops: every zmm register is caller-saved, so a call per
     * row (the row size, once) spilled the accumulators to the stack */
    const int hd = a->head_dim;
    const size_t goff = kf ? 0 : eng_type_row_size(a->kv->type_k, (int64_t)g0 * hd);
    const size_t gstep = kf ? 0 : eng_type_row_size(a->kv->type_k, hd);
    const size_t bytes = gstep * (size_t)ng;
    const size_t voff = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)g0 * hd);
    const size_t vbytes = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)ng * hd);
    kv_src rows[16];
    for (int j0 = 0; j0 < nk; j0 += 16) {
        kv_rows16(a, kf, ld, 0, g0, goff, bytes, lo, j0, nk, rows);
        if (!vf) kv_prefetch16_l2(a, 1, voff, vbytes, lo, j0, nk);
        const int valid = nk - j0 < 16 ? nk - j0 : 16;
        for (int gi = 0; gi < ng; gi++) {
            __m512 acc[GROUP_MAX][16];
            const cpu_attn_q *qg = q + gi * S;
            for (int i = 0; i < 16; i++) {
                kv_src r = rows[i];
                if (kf)
                    r.f32 += (size_t)gi * (size_t)hd;
                else
                    r.raw += (size_t)gi * gstep;
                __m512 kc[HD_MAX / 16];
#pragma GCC unroll 16
                for (int c = 0; c < nc; c++) kc[c] = kv_load(r, c, kind);
#pragma GCC unroll 4
                for (int h = 0; h < S; h++) {
                    const float *qh = qg[h].q;
                    __m512 x = _mm512_mul_ps(_mm512_loadu_ps(qh), kc[0]);
#pragma GCC unroll 16
                    for (int c = 1; c < nc; c++) x = _mm512_fmadd_ps(_mm512_loadu_ps(qh + 16 * c), kc[c], x);
                    acc[h][i] = x;
                }
            }
            for (int h = 0; h < S; h++) {
                const int hh = gi * S + h;
                __m512 x = _mm512_mul_ps(reduce16(acc[h]), _mm512_set1_ps(a->scale));
                _mm512_mask_storeu_ps(sc + (size_t)hh * scs + j0, (__mmask16)((1u << valid) - 1), x);
                vmx[hh] = _mm512_max_ps(vmx[hh], x); /* the repeated key does not change the max */
            }
        }
    }
    for (int h = 0; h < ng * S; h++) mx[h] = _mm512_reduce_max_ps(vmx[h]);
}

/* o[s] = sum_j (sc[s][j] * inv[s]) v_j over keys in order for the S heads;
 * up to head_dim 128 the even and odd keys go to two sums (added at the end)
 * so the fma latency does not bound the loop. Two chunks (a cache line of
 * f16, a q8_0 or q4_0 block) per pass over the keys keep S x 2 x 2 sums in
 * registers; each value's sums are the one-head kernel's. */
AVX512_INLINE void values_body(const eng_attn_args *a, int g, int lo, int nk, const float *vf, size_t ld,
                               const float *sc, size_t scs, const cpu_attn_q *q, const int nc, const int kind,
                               const int S) {
    const int sets = nc <= 8 ? 2 : 1;
    const size_t goff = vf ? 0 : eng_type_row_size(a->kv->type_v, (int64_t)g * a->head_dim);
    const size_t bytes = vf ? 0 : eng_type_row_size(a->kv->type_v, a->head_dim);
    kv_src rows[16];
    for (int c0 = 0; c0 < nc; c0 += 2) {
        __m512 acc[GROUP_MAX][2][2];
#pragma GCC unroll 4
        for (int h = 0; h < S; h++)
            acc[h][0][0] = acc[h][0][1] = acc[h][1][0] = acc[h][1][1] = _mm512_setzero_ps();
        for (int j = 0; j < nk; j += sets) { /* key j + e goes to sum e (j even: pairs stay in a block) */
            if (j % 16 == 0) kv_rows16(a, vf, ld, 1, g, goff, bytes, lo, j, nk, rows);
            /* e = 0, then e = 1 written out: an index that is not a constant
             * would keep the sums in memory */
            __m512 v0 = kv_load(rows[j % 16], c0, kind), v1 = kv_load(rows[j % 16], c0 + 1, kind);
#pragma GCC unroll 4
            for (int h = 0; h < S; h++) {
                const __m512 w = _mm512_set1_ps(sc[(size_t)h * scs + j]);
                acc[h][0][0] = _mm512_fmadd_ps(w, v0, acc[h][0][0]);
                acc[h][0][1] = _mm512_fmadd_ps(w, v1, acc[h][0][1]);
            }
            if (sets == 2 && j + 1 < nk) {
                v0 = kv_load(rows[(j + 1) % 16], c0, kind);
                v1 = kv_load(rows[(j + 1) % 16], c0 + 1, kind);
#pragma GCC unroll 4
                for (int h = 0; h < S; h++) {
                    const __m512 w = _mm512_set1_ps(sc[(size_t)h * scs + j + 1]);
                    acc[h][1][0] = _mm512_fmadd_ps(w, v0, acc[h][1][0]);
                    acc[h][1][1] = _mm512_fmadd_ps(w, v1, acc[h][1][1]);
                }
            }
        }
#pragma GCC unroll 4
        for (int h = 0; h < S; h++) {
            float *oh = q[h].o + 16 * c0;
            _mm512_storeu_ps(oh, sets == 2 ? _mm512_add_ps(acc[h][0][0], acc[h][1][0]) : acc[h][0][0]);
            _mm512_storeu_ps(oh + 16, sets == 2 ? _mm512_add_ps(acc[h][0][1], acc[h][1][1]) : acc[h][0][1]);
        }
    }
}

/* One function per (chunks, kind, heads): the bodies with constant arguments. */
typedef void (*scores_fn)(const eng_attn_args *, const cpu_attn_q *, int, int, int, int, const float *,
                          const float *, size_t, float *, size_t, float *);
typedef void (*values_fn)(const eng_attn_args *, int, int, int, const float *, size_t, const float *, size_t,
                          const cpu_attn_q *);
#define KV_FNS(NC, K, S)                                                                                    \
    AVX512_FN static void scores_##NC##_##K##_##S(const eng_attn_args *a, const cpu_attn_q *q, int g0,      \
                                                  int ng, int lo, int nk, const float *kf, const float *vf, \
                                                  size_t ld, float *sc, size_t scs, float *mx) {            \
        scores_body(a, q, g0, ng, lo, nk, kf, vf, ld, sc, scs, mx, NC, K, S);                               \
    }                                                                                                       \
    AVX512_FN static void values_##NC##_##K##_##S(const eng_attn_args *a, int g, int lo, int nk,            \
                                                  const float *vf, size_t ld, const float *sc, size_t scs,  \
                                                  const cpu_attn_q *q) {                                    \
        values_body(a, g, lo, nk, vf, ld, sc, scs, q, NC, K, S);                                            \
    }
#define KV_FNS_S(NC, K) KV_FNS(NC, K, 1) KV_FNS(NC, K, 2) KV_FNS(NC, K, 3) KV_FNS(NC, K, 4)
#define KV_FNS_NC(NC)   KV_FNS_S(NC, 0) KV_FNS_S(NC, 1) KV_FNS_S(NC, 2) KV_FNS_S(NC, 3)
KV_FNS_NC(4)
KV_FNS_NC(8)
KV_FNS_NC(16)
#define ROW_S(NC, K, P) \
    { P##_##NC##_##K##_1, P##_##NC##_##K##_2, P##_##NC##_##K##_3, P##_##NC##_##K##_4 }
#define ROW_K(NC, P) \
    { ROW_S(NC, 0, P), ROW_S(NC, 1, P), ROW_S(NC, 2, P), ROW_S(NC, 3, P) }
static const scores_fn k_scores[3][KV_KINDS][GROUP_MAX] = {ROW_K(4, scores), ROW_K(8, scores),
                                                           ROW_K(16, scores)};
static const values_fn k_values[3][KV_KINDS][GROUP_MAX] = {ROW_K(4, values), ROW_K(8, values),
                                                           ROW_K(16, values)};
#undef ROW_K
#undef ROW_S
#undef KV_FNS_NC
#undef KV_FNS_S
#undef KV_FNS

/* Keys j0 .. j0 + nk - 1 of kv heads g0 .. g0 + ng - 1, nq query heads each
 * (nq <= GROUP_MAX, ng * nq <= HEADS_MAX; any tokens and sequences whose
 * views hold the same rows there): the keys and values are read once for
 * all of them; each head's partial (max, sum of exp, unnormalized value sum)
 * is the one it gets alone. Score rows at sc + i * scs. */
AVX512_FN static void attn_chunk(const eng_attn_args *a, int g0, int ng, int j0, int nk, const cpu_attn_q *q,
                                 int nq, const float *kf, const float *vf, size_t ld, float *sc, size_t scs) {
    const int hd = a->head_dim;
    const int sz = hd == 64 ? 0 : hd == 128 ? 1 : 2; /* head_dim 64, 128 or 256 (see cpu_kernels.h) */
    float mx[HEADS_MAX];
    k_scores[sz][kf ? KV_F32 : kv_kind(a->kv->type_k)][nq - 1](a, q, g0, ng, j0, nk, kf, vf, ld, sc, scs, mx);
    /* softmax numerators: exp and its sum in 16-lane partial sums from the chunk's first key */
    for (int h = 0; h < ng * nq; h++) {
        float *s = sc + (size_t)h * scs;
        const __m512 vmx = _mm512_set1_ps(mx[h]);
        __m512 sum = _mm512_setzero_ps();
        for (int j = 0; j < nk; j += 16) {
            __mmask16 m = (__mmask16)(nk - j >= 16 ? 0xFFFF : (1u << (nk - j)) - 1);
            __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + j), vmx));
            e = _mm512_maskz_mov_ps(m, e);
            _mm512_mask_storeu_ps(s + j, m, e);
            sum = _mm512_add_ps(sum, e);
        }
        q[h].ml[0] = mx[h];
        q[h].ml[1] = hsum16(sum);
    }
    const values_fn vfn = k_values[sz][vf ? KV_F32 : kv_kind(a->kv->type_v)][nq - 1];
    for (int gi = 0; gi < ng; gi++)
        vfn(a, g0 + gi, j0, nk, vf, ld, sc + (size_t)gi * (size_t)nq * scs, scs, q + gi * nq);
}

/* f16 -> f32 of n values (exact). */
AVX512_FN static void f16_to_f32(float *dst, const uint16_t *src, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    for (; i < n; i++) dst[i] = _cvtsh_ss(src[i]);
}

void cpu_kern_avx512(cpu_kern *k) {
    k->attn_chunk_f32 = attn_chunk;
    k->f16_to_f32 = f16_to_f32;
}

#else /* not x86-64 */

void cpu_kern_avx512(cpu_kern *k) { (void)k; }

#endif
