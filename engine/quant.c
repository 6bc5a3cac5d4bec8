/* engine/quant.c: the generic quant traits table (quant.h) and its scalar
 * references: f16/bf16 conversions, dequantizers (ggml's formulas) and the
 * activation quantizers rounding like ggml's quantize_row_q8_{0,1,K}_ref, and
 * q4_0's (a KV-cache format: --kv-type). Knows no backend: the CPU's dot products
 * and kernels are cpu/quant_cpu.c's. Does not contain SIMD, threading or weight
 * quantizers (weights come quantized). */
#include "quant.h"

#include <math.h>
#include <string.h>

#include "quant_impl.h"

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
        const uint32_t qh = eng_load_u32le(b->qh);
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
        const uint32_t qh = eng_load_u32le(b->qh);
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

static void q4_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q4_k *b = src;
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++) {
        const float d = F16(b->d), dmin = F16(b->dmin);
        for (int g = 0; g < 4; g++, y += 64) {
            const uint8_t *q = b->qs + 32 * g;
            int sc0, mn0, sc1, mn1;
            eng_k_scale_min(b->scales, 2 * g, &sc0, &mn0);
            eng_k_scale_min(b->scales, 2 * g + 1, &sc1, &mn1);
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
            eng_k_scale_min(b->scales, 2 * g, &sc0, &mn0);
            eng_k_scale_min(b->scales, 2 * g + 1, &sc1, &mn1);
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

static void q6_k_to_float(const void *src, float *y, int64_t n) {
    const eng_block_q6_k *b = src;
    int8_t v[ENG_QK_K];
    for (int64_t i = 0; i < n / ENG_QK_K; i++, b++, y += ENG_QK_K) {
        const float d = F16(b->d);
        eng_q6_k_values(b, v);
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

/* As ggml's quantize_row_q4_0_ref: d = max / -8 with max the value of largest
 * magnitude (so it maps to -8), nibbles min(15, trunc(x / d + 8.5)). The KV
 * cache's q4_0 (the weights' q4_0 comes quantized in the file). */
static void q4_0_from_float(const float *x, void *dst, int64_t n) {
    eng_block_q4_0 *b = dst;
    for (int64_t i = 0; i < n / ENG_QK; i++, b++, x += ENG_QK) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < ENG_QK; j++) {
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b->d = eng_f32_to_f16(d);
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = (int8_t)(x[j] * id + 8.5f), hi = (int8_t)(x[j + 16] * id + 8.5f);
            lo = lo < 15 ? lo : 15;
            hi = hi < 15 ? hi : 15;
            b->qs[j] = (uint8_t)(lo | hi << 4);
        }
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

/* --- the table ---------------------------------------------------------- */

/* A type this engine computes: layout, dequantizer, activation format. */
#define TYPE(nm, block, elems, deq, act)                                                          \
    {                                                                                             \
        .name = (nm), .blck = (elems), .bytes = sizeof(block), .supported = 1, .to_float = (deq), \
        .vec_dot_type = (act)                                                                     \
    }
/* An activation format: it also quantizes (from_float), and pairs with itself. */
#define ACT(nm, id, block, elems, deq, quant)                                                     \
    {                                                                                             \
        .name = (nm), .blck = (elems), .bytes = sizeof(block), .supported = 1, .to_float = (deq), \
        .from_float = (quant), .vec_dot_type = (id)                                               \
    }
/* A weight type that is also a KV-cache format: it quantizes too (from_float). */
#define KVTYPE(nm, block, elems, deq, quant, act)                                                 \
    {                                                                                             \
        .name = (nm), .blck = (elems), .bytes = sizeof(block), .supported = 1, .to_float = (deq), \
        .from_float = (quant), .vec_dot_type = (act)                                              \
    }
/* Known to ggml, not computed here: listed so files holding them open and the
 * loader can name the type it does not support. */
#define KNOWN(nm, block, elems) \
    { .name = (nm), .blck = (elems), .bytes = sizeof(block), .vec_dot_type = ENG_TYPE_COUNT }

static const eng_type_traits eng_types[ENG_TYPE_COUNT] = {
    [ENG_TYPE_F32] = ACT("f32", ENG_TYPE_F32, float, 1, f32_to_float, f32_from_float),
    [ENG_TYPE_F16] = ACT("f16", ENG_TYPE_F16, uint16_t, 1, f16_to_float, f16_from_float),
    [ENG_TYPE_BF16] = ACT("bf16", ENG_TYPE_BF16, uint16_t, 1, bf16_to_float, bf16_from_float),
    [ENG_TYPE_Q4_0] = KVTYPE("q4_0", eng_block_q4_0, ENG_QK, q4_0_to_float, q4_0_from_float, ENG_TYPE_Q8_0),
    [ENG_TYPE_Q4_1] = TYPE("q4_1", eng_block_q4_1, ENG_QK, q4_1_to_float, ENG_TYPE_Q8_1),
    [ENG_TYPE_Q5_0] = TYPE("q5_0", eng_block_q5_0, ENG_QK, q5_0_to_float, ENG_TYPE_Q8_0),
    [ENG_TYPE_Q5_1] = TYPE("q5_1", eng_block_q5_1, ENG_QK, q5_1_to_float, ENG_TYPE_Q8_1),
    [ENG_TYPE_Q8_0] = ACT("q8_0", ENG_TYPE_Q8_0, eng_block_q8_0, ENG_QK, q8_0_to_float, q8_0_from_float),
    [ENG_TYPE_Q8_1] = ACT("q8_1", ENG_TYPE_Q8_1, eng_block_q8_1, ENG_QK, q8_1_to_float, q8_1_from_float),
    [ENG_TYPE_Q4_K] = TYPE("q4_K", eng_block_q4_k, ENG_QK_K, q4_k_to_float, ENG_TYPE_Q8_K),
    [ENG_TYPE_Q5_K] = TYPE("q5_K", eng_block_q5_k, ENG_QK_K, q5_k_to_float, ENG_TYPE_Q8_K),
    [ENG_TYPE_Q6_K] = TYPE("q6_K", eng_block_q6_k, ENG_QK_K, q6_k_to_float, ENG_TYPE_Q8_K),
    [ENG_TYPE_Q8_K] = ACT("q8_K", ENG_TYPE_Q8_K, eng_block_q8_k, ENG_QK_K, q8_k_to_float, q8_k_from_float),
    [ENG_TYPE_Q2_K] = KNOWN("q2_K", eng_block_q2_k, ENG_QK_K),
    [ENG_TYPE_Q3_K] = KNOWN("q3_K", eng_block_q3_k, ENG_QK_K),
    [ENG_TYPE_IQ2_XXS] = KNOWN("iq2_xxs", eng_block_iq2_xxs, ENG_QK_K),
    [ENG_TYPE_IQ2_XS] = KNOWN("iq2_xs", eng_block_iq2_xs, ENG_QK_K),
    [ENG_TYPE_IQ3_XXS] = KNOWN("iq3_xxs", eng_block_iq3_xxs, ENG_QK_K),
    [ENG_TYPE_IQ1_S] = KNOWN("iq1_s", eng_block_iq1_s, ENG_QK_K),
    [ENG_TYPE_IQ4_NL] = KNOWN("iq4_nl", eng_block_iq4_nl, ENG_QK),
    [ENG_TYPE_IQ3_S] = KNOWN("iq3_s", eng_block_iq3_s, ENG_QK_K),
    [ENG_TYPE_IQ2_S] = KNOWN("iq2_s", eng_block_iq2_s, ENG_QK_K),
    [ENG_TYPE_IQ4_XS] = KNOWN("iq4_xs", eng_block_iq4_xs, ENG_QK_K),
    [ENG_TYPE_I8] = KNOWN("i8", int8_t, 1),
    [ENG_TYPE_I16] = KNOWN("i16", int16_t, 1),
    [ENG_TYPE_I32] = KNOWN("i32", int32_t, 1),
    [ENG_TYPE_I64] = KNOWN("i64", int64_t, 1),
    [ENG_TYPE_F64] = KNOWN("f64", double, 1),
    [ENG_TYPE_IQ1_M] = KNOWN("iq1_m", eng_block_iq1_m, ENG_QK_K),
    [ENG_TYPE_TQ1_0] = KNOWN("tq1_0", eng_block_tq1_0, ENG_QK_K),
    [ENG_TYPE_TQ2_0] = KNOWN("tq2_0", eng_block_tq2_0, ENG_QK_K),
    [ENG_TYPE_MXFP4] = KNOWN("mxfp4", eng_block_mxfp4, ENG_QK),
};

#undef TYPE
#undef ACT
#undef KVTYPE
#undef KNOWN

const eng_type_traits *eng_type_get(uint32_t type) {
    if (type >= ENG_TYPE_COUNT || !eng_types[type].name) return NULL;
    return &eng_types[type];
}

size_t eng_type_row_size(uint32_t type, int64_t n) {
    const eng_type_traits *t = eng_type_get(type);
    if (!t || n < 0 || n % t->blck) return 0;
    return (size_t)(n / t->blck) * t->bytes;
}
