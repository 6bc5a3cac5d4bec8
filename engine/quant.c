/* engine/quant.c: the quant traits table and its scalar reference kernels: f16/bf16
 * conversions, dequantizers (ggml's formulas), activation quantizers rounding like
 * ggml's quantize_row_q8_{0,1,K}_ref, integer dot products summed block by block, left
 * to right (deterministic); eng_type_kernels_get adds the SIMD ones (quant_avx*.c).
 * Does not contain SIMD, threading or weight quantizers (weights come quantized). */
#include "quant.h"

#include <math.h>
#include <string.h>

#include "quant_impl.h"
#include "cpu/quant_simd.h"

/* --- f16 / bf16 ------------------------------------------------------- */

static float bits_to_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float eng_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    if (exp == 0x1F) return bits_to_f32(sign | 0x7F800000u | (mant << 13)); /* inf, nan */
    if (exp == 0) {
        if (mant == 0) return bits_to_f32(sign);
        /* subnormal: shift the leading 1 up to the implicit position */
        int e = 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        mant &= 0x3FFu;
        return bits_to_f32(sign | ((uint32_t)(e + 112) << 23) | (mant << 13));
    }
    return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t eng_f32_to_f16(float f) {
    uint32_t x = f32_to_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) return sign | 0x7E00u;  /* nan: quiet, sign kept (as ggml) */
    if (ax >= 0x477FF000u) return sign | 0x7C00u; /* at or past 65520: rounds to inf */
    uint32_t e = ax >> 23;
    if (ax < 0x38800000u) {       /* below 2^-14: f16 subnormal or 0 */
        if (e < 102) return sign; /* below 2^-25: rounds to 0 */
        uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((e - 112) << 10) | ((ax & 0x7FFFFFu) >> 13);
    uint32_t rem = ax & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++; /* a carry into the exponent is right */
    return (uint16_t)(sign | q);
}

float eng_bf16_to_f32(uint16_t h) { return bits_to_f32((uint32_t)h << 16); }

uint16_t eng_f32_to_bf16(float f) {
    uint32_t x = f32_to_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

#define F16(h) eng_f16_to_f32(h)

/* --- dequantizers (reference §2) -------------------------------------- */

static uint32_t load_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void f32_to_float(const void *src, float *dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void f16_to_float(const void *src, float *dst, int64_t n) {
    const uint16_t *s = src;
    for (int64_t i = 0; i < n; i++) dst[i] = F16(s[i]);
}

static void bf16_to_float(const void *src, float *dst, int64_t n) {
    const uint16_t *s = src;
    for (int64_t i = 0; i < n; i++) dst[i] = eng_bf16_to_f32(s[i]);
}

static void q4_0_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q4_0 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d);
        for (int j = 0; j < ENG_QK / 2; j++) {
            y[j] = (float)((b->qs[j] & 0xF) - 8) * d;
            y[j + 16] = (float)((b->qs[j] >> 4) - 8) * d;
        }
    }
}

static void q4_1_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q4_1 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d), m = F16(b->m);
        for (int j = 0; j < ENG_QK / 2; j++) {
            y[j] = (float)(b->qs[j] & 0xF) * d + m;
            y[j + 16] = (float)(b->qs[j] >> 4) * d + m;
        }
    }
}

static void q5_0_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q5_0 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d);
        const uint32_t qh = load_u32le(b->qh);
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = (b->qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4;
            int hi = (b->qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
            y[j] = (float)(lo - 16) * d;
            y[j + 16] = (float)(hi - 16) * d;
        }
    }
}

static void q5_1_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q5_1 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d), m = F16(b->m);
        const uint32_t qh = load_u32le(b->qh);
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = (b->qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4;
            int hi = (b->qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
            y[j] = (float)lo * d + m;
            y[j + 16] = (float)hi * d + m;
        }
    }
}

static void q8_0_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q8_0 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d);
        for (int j = 0; j < ENG_QK; j++) y[j] = (float)b->qs[j] * d;
    }
}

static void q8_1_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q8_1 *b = src;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, y += ENG_QK) {
        const float d = F16(b->d);
        for (int j = 0; j < ENG_QK; j++) y[j] = (float)b->qs[j] * d;
    }
}

/* The 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block. */
static void k_scale_min(const uint8_t *s, int j, int *sc, int *mn) {
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

static void q4_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q4_k *b = src;
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++) {
        const float d = F16(b->d), dmin = F16(b->dmin);
        for (int g = 0; g < 4; g++, y += 64) {
            const uint8_t *q = b->qs + 32 * g;
            int sc0, mn0, sc1, mn1;
            k_scale_min(b->scales, 2 * g, &sc0, &mn0);
            k_scale_min(b->scales, 2 * g + 1, &sc1, &mn1);
            const float d0 = d * (float)sc0, m0 = dmin * (float)mn0;
            const float d1 = d * (float)sc1, m1 = dmin * (float)mn1;
            for (int l = 0; l < 32; l++) {
                y[l] = d0 * (float)(q[l] & 0xF) - m0;
                y[l + 32] = d1 * (float)(q[l] >> 4) - m1;
            }
        }
    }
}

static void q5_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q5_k *b = src;
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++) {
        const float d = F16(b->d), dmin = F16(b->dmin);
        for (int g = 0; g < 4; g++, y += 64) {
            const uint8_t *q = b->qs + 32 * g;
            const uint8_t mlo = (uint8_t)(1u << (2 * g)), mhi = (uint8_t)(2u << (2 * g));
            int sc0, mn0, sc1, mn1;
            k_scale_min(b->scales, 2 * g, &sc0, &mn0);
            k_scale_min(b->scales, 2 * g + 1, &sc1, &mn1);
            const float d0 = d * (float)sc0, m0 = dmin * (float)mn0;
            const float d1 = d * (float)sc1, m1 = dmin * (float)mn1;
            for (int l = 0; l < 32; l++) {
                int lo = (q[l] & 0xF) + (b->qh[l] & mlo ? 16 : 0);
                int hi = (q[l] >> 4) + (b->qh[l] & mhi ? 16 : 0);
                y[l] = d0 * (float)lo - m0;
                y[l + 32] = d1 * (float)hi - m1;
            }
        }
    }
}

/* The 256 signed 6-bit values (q - 32) of a q6_K block, in element order. */
static void q6_k_values(const eng_block_q6_k *b, int8_t v[ENG_QK_K]) {
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
        int8_t *o = v + 128 * h;
        for (int l = 0; l < 32; l++) {
            o[l] = (int8_t)(((ql[l] & 0xF) | ((qh[l] >> 0 & 3) << 4)) - 32);
            o[l + 32] = (int8_t)(((ql[l + 32] & 0xF) | ((qh[l] >> 2 & 3) << 4)) - 32);
            o[l + 64] = (int8_t)(((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4)) - 32);
            o[l + 96] = (int8_t)(((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4)) - 32);
        }
    }
}

static void q6_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q6_k *b = src;
    int8_t v[ENG_QK_K];
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++, y += ENG_QK_K) {
        const float d = F16(b->d);
        q6_k_values(b, v);
        /* element e uses scale 8h + l/16 + 2*(quarter): i.e. scales[e / 16] */
        for (int e = 0; e < ENG_QK_K; e++) y[e] = d * (float)b->scales[e / 16] * (float)v[e];
    }
}

static void q8_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q8_k *b = src;
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++, y += ENG_QK_K)
        for (int j = 0; j < ENG_QK_K; j++) y[j] = b->d * (float)b->qs[j];
}

/* --- activation quantizers (round like ggml's *_ref) ------------------ */

/* A rounded value to int8; finite in-range inputs convert exactly as ggml's
 * (roundf / nearest_int); nan and out-of-range values (only from non-finite
 * activations) are clamped instead of being undefined behavior. */
static int8_t to_i8(float r) {
    if (!(r == r)) return 0;
    if (r > 127.0f) return 127;
    if (r < -128.0f) return -128;
    return (int8_t)r;
}

static void f32_from_float(const float *src, void *dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

static void f16_from_float(const float *src, void *dst, int64_t n) {
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = eng_f32_to_f16(src[i]);
}

static void bf16_from_float(const float *src, void *dst, int64_t n) {
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = eng_f32_to_bf16(src[i]);
}

/* Scale of a 32-block: amax / 127 and its inverse (0 for an all-zero block). */
static float q8_scale(const float *x, float *id) {
    float amax = 0.0f;
    for (int j = 0; j < ENG_QK; j++) {
        float a = fabsf(x[j]);
        amax = amax > a ? amax : a; /* as ggml's MAX(amax, a): a nan propagates */
    }
    const float d = amax / 127.0f;
    *id = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}

static void q8_0_from_float(const float *x, void *dst, int64_t n) {
    eng_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, x += ENG_QK) {
        float id;
        const float d = q8_scale(x, &id);
        b->d = eng_f32_to_f16(d);
        for (int j = 0; j < ENG_QK; j++) b->qs[j] = to_i8(roundf(x[j] * id));
    }
}

static void q8_1_from_float(const float *x, void *dst, int64_t n) {
    eng_block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, x += ENG_QK) {
        float id;
        const float d = q8_scale(x, &id);
        int sum = 0;
        b->d = eng_f32_to_f16(d);
        for (int j = 0; j < ENG_QK; j++) {
            b->qs[j] = to_i8(roundf(x[j] * id));
            sum += b->qs[j];
        }
        b->s = eng_f32_to_f16((float)sum * d); /* the unrounded d, as ggml */
    }
}

static void q8_k_from_float(const float *x, void *dst, int64_t n) {
    eng_block_q8_k *b = dst;
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++, x += ENG_QK_K) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < ENG_QK_K; j++) {
            float a = fabsf(x[j]);
            if (a > amax) {
                amax = a;
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            memset(b, 0, sizeof *b);
            continue;
        }
        /* ggml scales by -127/max (the signed extreme maps to -127) and rounds
         * half to even (its nearest_int); rintf does that in the default mode */
        const float iscale = -127.0f / max;
        for (int j = 0; j < ENG_QK_K; j++) b->qs[j] = to_i8(rintf(iscale * x[j]));
        for (int g = 0; g < ENG_QK_K / 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += b->qs[16 * g + l];
            b->bsums[g] = (int16_t)s;
        }
        b->d = 1.0f / iscale;
    }
}

/* --- dot products ------------------------------------------------------ */
/* Each block's integer sum is exact; it is scaled in float and added to the
 * running sum in block order, so the result depends only on the inputs. */

static void f32_dot(int64_t n, float *s, const void *w, const void *a) {
    const float *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += x[i] * y[i];
    *s = sum;
}

static void f16_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += F16(x[i]) * F16(y[i]);
    *s = sum;
}

static void bf16_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += eng_bf16_to_f32(x[i]) * eng_bf16_to_f32(y[i]);
    *s = sum;
}

static void q4_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            isum += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j];
            isum += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

static void q4_1_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_1 *x = w;
    const eng_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            isum += (x[i].qs[j] & 0xF) * y[i].qs[j];
            isum += (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum + F16(x[i].m) * F16(y[i].s);
    }
    *s = sum;
}

static void q5_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        const uint32_t qh = load_u32le(x[i].qh);
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = ((x[i].qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4) - 16;
            int hi = ((x[i].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4) - 16;
            isum += lo * y[i].qs[j] + hi * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

static void q5_1_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_1 *x = w;
    const eng_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        const uint32_t qh = load_u32le(x[i].qh);
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = (x[i].qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4;
            int hi = (x[i].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
            isum += lo * y[i].qs[j] + hi * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum + F16(x[i].m) * F16(y[i].s);
    }
    *s = sum;
}

static void q8_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q8_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK; j++) isum += x[i].qs[j] * y[i].qs[j];
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

/* q4_K / q5_K super-block against q8_K: sum_j sc[j] * dot(q_j, a_j) and the
 * min term sum_j mn[j] * (sum of a_j), the latter from the bsums. */
static void k_dot_block(const uint8_t *scales, const int8_t q[ENG_QK_K], const eng_block_q8_k *y,
                        int *isum, int *imin) {
    int s = 0, m = 0;
    for (int j = 0; j < 8; j++) {
        int sc, mn, d = 0;
        k_scale_min(scales, j, &sc, &mn);
        for (int l = 0; l < 32; l++) d += q[32 * j + l] * y->qs[32 * j + l];
        s += sc * d;
        m += mn * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    }
    *isum = s;
    *imin = m;
}

static void q4_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        for (int g = 0; g < 4; g++)
            for (int l = 0; l < 32; l++) {
                q[64 * g + l] = (int8_t)(x[i].qs[32 * g + l] & 0xF);
                q[64 * g + 32 + l] = (int8_t)(x[i].qs[32 * g + l] >> 4);
            }
        int isum, imin;
        k_dot_block(x[i].scales, q, &y[i], &isum, &imin);
        sum += (F16(x[i].d) * y[i].d) * (float)isum - (F16(x[i].dmin) * y[i].d) * (float)imin;
    }
    *s = sum;
}

static void q5_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        for (int g = 0; g < 4; g++) {
            const uint8_t mlo = (uint8_t)(1u << (2 * g)), mhi = (uint8_t)(2u << (2 * g));
            for (int l = 0; l < 32; l++) {
                q[64 * g + l] = (int8_t)((x[i].qs[32 * g + l] & 0xF) + (x[i].qh[l] & mlo ? 16 : 0));
                q[64 * g + 32 + l] =
                    (int8_t)((x[i].qs[32 * g + l] >> 4) + (x[i].qh[l] & mhi ? 16 : 0));
            }
        }
        int isum, imin;
        k_dot_block(x[i].scales, q, &y[i], &isum, &imin);
        sum += (F16(x[i].d) * y[i].d) * (float)isum - (F16(x[i].dmin) * y[i].d) * (float)imin;
    }
    *s = sum;
}

static void q6_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q6_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        q6_k_values(&x[i], q);
        int isum = 0;
        for (int g = 0; g < ENG_QK_K / 16; g++) {
            int d = 0;
            for (int l = 0; l < 16; l++) d += q[16 * g + l] * y[i].qs[16 * g + l];
            isum += x[i].scales[g] * d;
        }
        sum += (F16(x[i].d) * y[i].d) * (float)isum;
    }
    *s = sum;
}

/* --- reference gemm: the dot product per (row, token) ------------------- */

#define REF_GEMM(tn)                                                                               \
    static void tn##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr,     \
                          const void *a, size_t lda, int nt) {                                    \
        for (int r = 0; r < nr; r++)                                                               \
            for (int t = 0; t < nt; t++)                                                           \
                tn##_dot(n, y + (size_t)t * ldy + (size_t)r, (const char *)w + (size_t)r * ldw,   \
                         (const char *)a + (size_t)t * lda);                                      \
    }
REF_GEMM(f32)
REF_GEMM(f16)
REF_GEMM(bf16)
REF_GEMM(q4_0)
REF_GEMM(q4_1)
REF_GEMM(q5_0)
REF_GEMM(q5_1)
REF_GEMM(q8_0)
REF_GEMM(q4_k)
REF_GEMM(q5_k)
REF_GEMM(q6_k)
#undef REF_GEMM

/* Activation rows are padded to 64 bytes so every row stays aligned. */
static size_t pad64(size_t b) { return (b + 63) & ~(size_t)63; }
static size_t f32_act_bytes(int64_t n) { return pad64((size_t)n * 4); }
static size_t f16_act_bytes(int64_t n) { return pad64((size_t)n * 2); }
static size_t q8_0_act_bytes(int64_t n) { return pad64((size_t)(n / ENG_QK) * 34); }
static size_t q8_1_act_bytes(int64_t n) { return pad64((size_t)(n / ENG_QK) * 36); }
static size_t q8_k_act_bytes(int64_t n) { return pad64((size_t)(n / ENG_QK_K) * 292); }

/* --- the table ---------------------------------------------------------- */

#define KNOWN(nm, bl, by)                                                                          \
    { .name = (nm), .blck = (bl), .bytes = (by), .vec_dot_type = ENG_TYPE_COUNT }

static const eng_type_traits eng_types[ENG_TYPE_COUNT] = {
    [ENG_TYPE_F32] = {"f32", 1, 4, 1, f32_to_float, f32_from_float, ENG_TYPE_F32, f32_dot},
    [ENG_TYPE_F16] = {"f16", 1, 2, 1, f16_to_float, f16_from_float, ENG_TYPE_F16, f16_dot},
    [ENG_TYPE_BF16] = {"bf16", 1, 2, 1, bf16_to_float, bf16_from_float, ENG_TYPE_BF16, bf16_dot},
    [ENG_TYPE_Q4_0] = {"q4_0", 32, 18, 1, q4_0_to_float, NULL, ENG_TYPE_Q8_0, q4_0_dot},
    [ENG_TYPE_Q4_1] = {"q4_1", 32, 20, 1, q4_1_to_float, NULL, ENG_TYPE_Q8_1, q4_1_dot},
    [ENG_TYPE_Q5_0] = {"q5_0", 32, 22, 1, q5_0_to_float, NULL, ENG_TYPE_Q8_0, q5_0_dot},
    [ENG_TYPE_Q5_1] = {"q5_1", 32, 24, 1, q5_1_to_float, NULL, ENG_TYPE_Q8_1, q5_1_dot},
    [ENG_TYPE_Q8_0] = {"q8_0", 32, 34, 1, q8_0_to_float, q8_0_from_float, ENG_TYPE_Q8_0, q8_0_dot},
    [ENG_TYPE_Q8_1] = {"q8_1", 32, 36, 1, q8_1_to_float, q8_1_from_float, ENG_TYPE_Q8_1, NULL},
    [ENG_TYPE_Q2_K] = KNOWN("q2_K", 256, 84),
    [ENG_TYPE_Q3_K] = KNOWN("q3_K", 256, 110),
    [ENG_TYPE_Q4_K] = {"q4_K", 256, 144, 1, q4_k_to_float, NULL, ENG_TYPE_Q8_K, q4_k_dot},
    [ENG_TYPE_Q5_K] = {"q5_K", 256, 176, 1, q5_k_to_float, NULL, ENG_TYPE_Q8_K, q5_k_dot},
    [ENG_TYPE_Q6_K] = {"q6_K", 256, 210, 1, q6_k_to_float, NULL, ENG_TYPE_Q8_K, q6_k_dot},
    [ENG_TYPE_Q8_K] = {"q8_K", 256, 292, 1, q8_k_to_float, q8_k_from_float, ENG_TYPE_Q8_K, NULL},
    /* known to ggml, no kernels here: listed so files holding them open and
     * the loader can name the type it does not support */
    [16] = KNOWN("iq2_xxs", 256, 66),
    [17] = KNOWN("iq2_xs", 256, 74),
    [18] = KNOWN("iq3_xxs", 256, 98),
    [19] = KNOWN("iq1_s", 256, 50),
    [20] = KNOWN("iq4_nl", 32, 18),
    [21] = KNOWN("iq3_s", 256, 110),
    [22] = KNOWN("iq2_s", 256, 82),
    [23] = KNOWN("iq4_xs", 256, 136),
    [24] = KNOWN("i8", 1, 1),
    [25] = KNOWN("i16", 1, 2),
    [26] = KNOWN("i32", 1, 4),
    [27] = KNOWN("i64", 1, 8),
    [28] = KNOWN("f64", 1, 8),
    [29] = KNOWN("iq1_m", 256, 56),
    [34] = KNOWN("tq1_0", 256, 54),
    [35] = KNOWN("tq2_0", 256, 66),
    [39] = KNOWN("mxfp4", 32, 17),
};

const eng_type_traits *eng_type_get(uint32_t type) {
    if (type >= ENG_TYPE_COUNT || !eng_types[type].name) return NULL;
    return &eng_types[type];
}

int eng_type_kernels_get(uint32_t type, eng_simd level, eng_type_kernels *out) {
    static const eng_gemm_fn ref_gemm[ENG_TYPE_COUNT] = {
        [ENG_TYPE_F32] = f32_gemm,   [ENG_TYPE_F16] = f16_gemm,   [ENG_TYPE_BF16] = bf16_gemm,
        [ENG_TYPE_Q4_0] = q4_0_gemm, [ENG_TYPE_Q4_1] = q4_1_gemm, [ENG_TYPE_Q5_0] = q5_0_gemm,
        [ENG_TYPE_Q5_1] = q5_1_gemm, [ENG_TYPE_Q8_0] = q8_0_gemm, [ENG_TYPE_Q4_K] = q4_k_gemm,
        [ENG_TYPE_Q5_K] = q5_k_gemm, [ENG_TYPE_Q6_K] = q6_k_gemm,
    };
    const eng_type_traits *t = eng_type_get(type);
    if (!t || !t->supported || !t->vec_dot || !ref_gemm[type]) return -1;
    const eng_type_traits *vt = eng_type_get(t->vec_dot_type);
    out->level = ENG_SIMD_SCALAR;
    out->vec_dot = t->vec_dot;
    out->act_quantize = vt->from_float;
    out->gemm = ref_gemm[type];
    switch (t->vec_dot_type) {
    case ENG_TYPE_F32: out->act_bytes = f32_act_bytes; break;
    case ENG_TYPE_F16:
    case ENG_TYPE_BF16: out->act_bytes = f16_act_bytes; break;
    case ENG_TYPE_Q8_0: out->act_bytes = q8_0_act_bytes; break;
    case ENG_TYPE_Q8_1: out->act_bytes = q8_1_act_bytes; break;
    default: out->act_bytes = q8_k_act_bytes; break;
    }
    if (level >= ENG_SIMD_AVX2) eng_quant_avx2_kernels(type, out);
    if (level >= ENG_SIMD_AVX512) eng_quant_avx512_kernels(type, out);
    return 0;
}

size_t eng_type_row_size(uint32_t type, int64_t n) {
    const eng_type_traits *t = eng_type_get(type);
    if (!t || n < 0 || n % t->blck) return 0;
    return (size_t)(n / t->blck) * t->bytes;
}
