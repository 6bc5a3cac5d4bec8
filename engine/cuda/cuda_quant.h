/* engine/cuda/cuda_quant.h: decoding of 8 consecutive values of a weight row,
 * per ggml type, shared by the CUDA kernels (device) and the CPU tests (host):
 * valid C11 and CUDA C++. Every value equals engine/quant.c's to_float bit for
 * bit: the same float operations in the same order, never contracted to FMA.
 * Reads bytes one at a time (any alignment). Does not quantize or allocate. */
#ifndef ENG_CUDA_QUANT_H
#define ENG_CUDA_QUANT_H

#include <stdint.h>
#include <string.h>

#include "../quant.h"

#ifdef __CUDACC__
#define CU_HD __host__ __device__ static inline
#else
#define CU_HD static inline
#endif

/* Products and sums that must round like the host's -ffp-contract=off code:
 * nvcc would otherwise fuse d * q + m into one FMA (different bits). */
#if defined(__CUDA_ARCH__)
#define CUQ_MUL(a, b) __fmul_rn((a), (b))
#define CUQ_ADD(a, b) __fadd_rn((a), (b))
#define CUQ_SUB(a, b) __fsub_rn((a), (b))
#else
#define CUQ_MUL(a, b) ((a) * (b))
#define CUQ_ADD(a, b) ((a) + (b))
#define CUQ_SUB(a, b) ((a) - (b))
#endif

/* --- scalars -------------------------------------------------------------- */

CU_HD float cuq_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

CU_HD uint16_t cuq_rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

CU_HD uint32_t cuq_rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* IEEE binary16 to f32, exact (subnormals, inf, nan payloads kept). */
CU_HD float cuq_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    if (exp == 0x1Fu) return cuq_bits_f32(sign | 0x7F800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0) return cuq_bits_f32(sign);
        uint32_t e = 113; /* biased f32 exponent of 2^-14, lowered per leading zero */
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        return cuq_bits_f32(sign | (e << 23) | ((mant & 0x3FFu) << 13));
    }
    return cuq_bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

/* bf16 is the top half of an f32. */
CU_HD float cuq_bf2f(uint16_t h) { return cuq_bits_f32((uint32_t)h << 16); }

/* --- per type: values 8g .. 8g+7 of a row --------------------------------- */
/* `row` points at the row's first block; a group of 8 never straddles a
 * block, a nibble half (q4/q5) or a K-quant sub-block. */

CU_HD void cuq_load8_f32(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *p = row + 32 * g;
    for (int i = 0; i < 8; i++) v[i] = cuq_bits_f32(cuq_rd32(p + 4 * i));
}

CU_HD void cuq_load8_f16(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *p = row + 16 * g;
    for (int i = 0; i < 8; i++) v[i] = cuq_h2f(cuq_rd16(p + 2 * i));
}

CU_HD void cuq_load8_bf16(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *p = row + 16 * g;
    for (int i = 0; i < 8; i++) v[i] = cuq_bf2f(cuq_rd16(p + 2 * i));
}

/* 32-blocks: block g / 4, elements j0 .. j0+7 with j0 = 8 * (g % 4); element
 * j < 16 is the low nibble of qs[j], j >= 16 the high nibble of qs[j - 16]. */

CU_HD void cuq_load8_q4_0(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 18 * (g >> 2);
    const int j0 = 8 * (int)(g & 3);
    const float d = cuq_h2f(cuq_rd16(b));
    const uint8_t *qs = b + 2 + (j0 & 15);
    const int sh = j0 >= 16 ? 4 : 0;
    for (int i = 0; i < 8; i++) v[i] = CUQ_MUL((float)(((qs[i] >> sh) & 0xF) - 8), d);
}

CU_HD void cuq_load8_q4_1(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 20 * (g >> 2);
    const int j0 = 8 * (int)(g & 3);
    const float d = cuq_h2f(cuq_rd16(b)), m = cuq_h2f(cuq_rd16(b + 2));
    const uint8_t *qs = b + 4 + (j0 & 15);
    const int sh = j0 >= 16 ? 4 : 0;
    for (int i = 0; i < 8; i++) v[i] = CUQ_ADD(CUQ_MUL((float)((qs[i] >> sh) & 0xF), d), m);
}

CU_HD void cuq_load8_q5_0(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 22 * (g >> 2);
    const int j0 = 8 * (int)(g & 3);
    const float d = cuq_h2f(cuq_rd16(b));
    const uint32_t qh = cuq_rd32(b + 2);
    const uint8_t *qs = b + 6 + (j0 & 15);
    const int sh = j0 >= 16 ? 4 : 0;
    for (int i = 0; i < 8; i++) {
        int q = ((qs[i] >> sh) & 0xF) | (int)((qh >> (j0 + i)) & 1u) << 4;
        v[i] = CUQ_MUL((float)(q - 16), d);
    }
}

CU_HD void cuq_load8_q5_1(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 24 * (g >> 2);
    const int j0 = 8 * (int)(g & 3);
    const float d = cuq_h2f(cuq_rd16(b)), m = cuq_h2f(cuq_rd16(b + 2));
    const uint32_t qh = cuq_rd32(b + 4);
    const uint8_t *qs = b + 8 + (j0 & 15);
    const int sh = j0 >= 16 ? 4 : 0;
    for (int i = 0; i < 8; i++) {
        int q = ((qs[i] >> sh) & 0xF) | (int)((qh >> (j0 + i)) & 1u) << 4;
        v[i] = CUQ_ADD(CUQ_MUL((float)q, d), m);
    }
}

CU_HD void cuq_load8_q8_0(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 34 * (g >> 2);
    const float d = cuq_h2f(cuq_rd16(b));
    const uint8_t *qs = b + 2 + 8 * (int)(g & 3);
    for (int i = 0; i < 8; i++) v[i] = CUQ_MUL((float)(int8_t)qs[i], d);
}

/* The same values of q4_0, q4_1 and q8_0 from whole words, as the CUDA
 * matvec fetches them (16/32-bit loads ahead of the decode; the host tests
 * read the words with cuq_rd16/cuq_rd32, the GPU's little-endian order).
 * cuq_w8_at: group g's block starts at the returned byte offset (f16 d there;
 * q4_1: f16 m after it, read together as one word, d in the low half), its 8
 * quant bytes at byte *q (two words, q0 then q1), *sh the nibble shift (q4:
 * 4 for the high nibbles, g % 4 >= 2; q8_0: 0). The bytes cuq_load8_* reads. */
CU_HD int64_t cuq_w8_at(uint32_t type, int64_t g, int64_t *q, int *sh) {
    const int64_t bs = type == ENG_TYPE_Q4_1 ? 20 : type == ENG_TYPE_Q4_0 ? 18 : 34;
    const int64_t b = bs * (g >> 2);
    if (type == ENG_TYPE_Q8_0) {
        *q = b + 2 + 8 * (g & 3);
        *sh = 0;
    } else {
        *q = b + (type == ENG_TYPE_Q4_1 ? 4 : 2) + 8 * (g & 1);
        *sh = (g & 2) ? 4 : 0;
    }
    return b;
}

/* (float)((int)n - c) without an int-to-float conversion (a quarter-rate
 * instruction on sm_80/sm_90): the bits 0x4B000000 | n are the float 2^23 + n
 * for n < 2^23, and subtracting two23_plus_c = 2^23 + c (also exact) is exact
 * by Sterbenz, so the result is bit for bit the conversion's, +0.0f for n == c. */
CU_HD float cuq_int_f(uint32_t n, float two23_plus_c) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(__uint_as_float(0x4B000000u | n), two23_plus_c);
#else
    return cuq_bits_f32(0x4B000000u | n) - two23_plus_c;
#endif
}

/* Decodes the words of cuq_w8_at: sc the scale field (16 bits; q4_1: 32),
 * q0/q1 the quant bytes, sh the shift. Equal to cuq_load8_* bit for bit. */
CU_HD void cuq_w8_decode(uint32_t type, uint32_t sc, uint32_t q0, uint32_t q1, int sh, float v[8]) {
    const float d = cuq_h2f((uint16_t)(sc & 0xFFFFu));
    const float m = type == ENG_TYPE_Q4_1 ? cuq_h2f((uint16_t)(sc >> 16)) : 0.0f;
    for (int i = 0; i < 8; i++) {
        const uint32_t byte = ((i < 4 ? q0 : q1) >> (8 * (i & 3))) & 0xFFu;
        if (type == ENG_TYPE_Q4_1) /* q: (2^23 + q) - 2^23 */
            v[i] = CUQ_ADD(CUQ_MUL(cuq_int_f((byte >> sh) & 0xFu, 8388608.0f), d), m);
        else if (type == ENG_TYPE_Q4_0) /* q - 8: (2^23 + q) - (2^23 + 8) */
            v[i] = CUQ_MUL(cuq_int_f((byte >> sh) & 0xFu, 8388616.0f), d);
        else /* q8_0: (int8_t)byte + 128 == byte ^ 0x80, then minus 2^23 + 128 */
            v[i] = CUQ_MUL(cuq_int_f(byte ^ 0x80u, 8388736.0f), d);
    }
}

/* The host's fetch for cuq_w8_decode (tests): group g of a q4_0/q4_1/q8_0 row. */
CU_HD void cuq_w8_load8(uint32_t type, const uint8_t *row, int64_t g, float v[8]) {
    int64_t q;
    int sh;
    const int64_t b = cuq_w8_at(type, g, &q, &sh);
    const uint32_t sc = type == ENG_TYPE_Q4_1 ? cuq_rd32(row + b) : cuq_rd16(row + b);
    cuq_w8_decode(type, sc, cuq_rd32(row + q), cuq_rd32(row + q + 4), sh, v);
}

/* 256-blocks: block g / 32, elements e0 .. e0+7 with e0 = 8 * (g % 32). */

/* The 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block. */
CU_HD void cuq_k_scale_min(const uint8_t *s, int j, int *sc, int *mn) {
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* q4_K: 64-element chunk c = e0 / 64 uses qs[32c ..]: low nibbles for its
 * first 32 elements (sub-block 2c), high nibbles for the next 32 (2c + 1). */
CU_HD void cuq_load8_q4_k(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 144 * (g >> 5);
    const int e0 = 8 * (int)(g & 31), c = e0 >> 6, l0 = e0 & 31, hi = (e0 >> 5) & 1;
    const float d = cuq_h2f(cuq_rd16(b)), dmin = cuq_h2f(cuq_rd16(b + 2));
    int sc, mn;
    cuq_k_scale_min(b + 4, 2 * c + hi, &sc, &mn);
    const float dd = CUQ_MUL(d, (float)sc), mm = CUQ_MUL(dmin, (float)mn);
    const uint8_t *q = b + 16 + 32 * c + l0;
    const int sh = hi ? 4 : 0;
    for (int i = 0; i < 8; i++) v[i] = CUQ_SUB(CUQ_MUL(dd, (float)((q[i] >> sh) & 0xF)), mm);
}

/* q5_K: as q4_K plus a fifth bit from qh[l], bit 2c (low half) or 2c + 1. */
CU_HD void cuq_load8_q5_k(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 176 * (g >> 5);
    const int e0 = 8 * (int)(g & 31), c = e0 >> 6, l0 = e0 & 31, hi = (e0 >> 5) & 1;
    const float d = cuq_h2f(cuq_rd16(b)), dmin = cuq_h2f(cuq_rd16(b + 2));
    int sc, mn;
    cuq_k_scale_min(b + 4, 2 * c + hi, &sc, &mn);
    const float dd = CUQ_MUL(d, (float)sc), mm = CUQ_MUL(dmin, (float)mn);
    const uint8_t *qh = b + 16 + l0, *q = b + 48 + 32 * c + l0;
    const int sh = hi ? 4 : 0, hb = 2 * c + hi;
    for (int i = 0; i < 8; i++) {
        int x = ((q[i] >> sh) & 0xF) + (((qh[i] >> hb) & 1) ? 16 : 0);
        v[i] = CUQ_SUB(CUQ_MUL(dd, (float)x), mm);
    }
}

/* q6_K: half h = e0 / 128 uses ql[64h ..] and qh[32h ..]; its quarter
 * k = (e0 / 32) % 4 takes bits 2k, 2k+1 of qh[l] and a nibble of
 * ql[l + 32 (k & 1)], the low one for k < 2, the high one for k >= 2.
 * Value (d * scales[e / 16]) * (q - 32). */
CU_HD void cuq_load8_q6_k(const uint8_t *row, int64_t g, float v[8]) {
    const uint8_t *b = row + 210 * (g >> 5);
    const int e0 = 8 * (int)(g & 31), h = e0 >> 7, k = (e0 >> 5) & 3, l0 = e0 & 31;
    const float d = cuq_h2f(cuq_rd16(b + 208));
    const float ds = CUQ_MUL(d, (float)(int8_t)b[192 + (e0 >> 4)]);
    const uint8_t *ql = b + 64 * h + 32 * (k & 1) + l0, *qh = b + 128 + 32 * h + l0;
    const int sh = k >= 2 ? 4 : 0;
    for (int i = 0; i < 8; i++) {
        int q = ((ql[i] >> sh) & 0xF) | ((qh[i] >> (2 * k)) & 3) << 4;
        v[i] = CUQ_MUL(ds, (float)(q - 32));
    }
}

/* --- by type id (host and device) ------------------------------------------ */

/* 1 for the types above. */
CU_HD int cuq_type_ok(uint32_t type) {
    switch (type) {
    case ENG_TYPE_F32:
    case ENG_TYPE_F16:
    case ENG_TYPE_BF16:
    case ENG_TYPE_Q4_0:
    case ENG_TYPE_Q4_1:
    case ENG_TYPE_Q5_0:
    case ENG_TYPE_Q5_1:
    case ENG_TYPE_Q8_0:
    case ENG_TYPE_Q4_K:
    case ENG_TYPE_Q5_K:
    case ENG_TYPE_Q6_K: return 1;
    default: return 0;
    }
}

/* Values 8g .. 8g+7 of a row of `type`; zeros for a type cuq_type_ok rejects. */
CU_HD void cuq_load8(uint32_t type, const uint8_t *row, int64_t g, float v[8]) {
    switch (type) {
    case ENG_TYPE_F32: cuq_load8_f32(row, g, v); return;
    case ENG_TYPE_F16: cuq_load8_f16(row, g, v); return;
    case ENG_TYPE_BF16: cuq_load8_bf16(row, g, v); return;
    case ENG_TYPE_Q4_0: cuq_load8_q4_0(row, g, v); return;
    case ENG_TYPE_Q4_1: cuq_load8_q4_1(row, g, v); return;
    case ENG_TYPE_Q5_0: cuq_load8_q5_0(row, g, v); return;
    case ENG_TYPE_Q5_1: cuq_load8_q5_1(row, g, v); return;
    case ENG_TYPE_Q8_0: cuq_load8_q8_0(row, g, v); return;
    case ENG_TYPE_Q4_K: cuq_load8_q4_k(row, g, v); return;
    case ENG_TYPE_Q5_K: cuq_load8_q5_k(row, g, v); return;
    case ENG_TYPE_Q6_K: cuq_load8_q6_k(row, g, v); return;
    default:
        for (int i = 0; i < 8; i++) v[i] = 0.0f;
        return;
    }
}

#endif
