/* engine/quant_impl.h: the byte layouts of the ggml quant blocks (those the
 * engine computes and, for their sizes, those it only names), and the few
 * integer unpacking helpers the dequantizers (quant.c) and the CPU dot products
 * (cpu/quant_cpu.c, cpu/quant_avx2.c) share. Little-endian hosts only (as GGUF
 * itself). f16 fields are raw IEEE binary16 bits. The traits are quant.h's. */
#ifndef ENG_QUANT_IMPL_H
#define ENG_QUANT_IMPL_H

#include <stdint.h>

enum { ENG_QK = 32, ENG_QK_K = 256 };

typedef struct eng_block_q4_0 {
    uint16_t d;
    uint8_t qs[ENG_QK / 2]; /* element j in the low nibble of qs[j], j+16 in the high one */
} eng_block_q4_0;

typedef struct eng_block_q4_1 {
    uint16_t d, m;
    uint8_t qs[ENG_QK / 2];
} eng_block_q4_1;

typedef struct eng_block_q5_0 {
    uint16_t d;
    uint8_t qh[4]; /* bit i (u32 LE) is bit 4 of element i */
    uint8_t qs[ENG_QK / 2];
} eng_block_q5_0;

typedef struct eng_block_q5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[ENG_QK / 2];
} eng_block_q5_1;

typedef struct eng_block_q8_0 {
    uint16_t d;
    int8_t qs[ENG_QK];
} eng_block_q8_0;

/* Activation format for q4_1/q5_1: s = f16(d_unrounded * sum(qs)). */
typedef struct eng_block_q8_1 {
    uint16_t d, s;
    int8_t qs[ENG_QK];
} eng_block_q8_1;

typedef struct eng_block_q4_k {
    uint16_t d, dmin;
    uint8_t scales[12]; /* 8 six-bit scales and 8 six-bit mins, packed */
    uint8_t qs[ENG_QK_K / 2];
} eng_block_q4_k;

typedef struct eng_block_q5_k {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[ENG_QK_K / 8];
    uint8_t qs[ENG_QK_K / 2];
} eng_block_q5_k;

typedef struct eng_block_q6_k {
    uint8_t ql[ENG_QK_K / 2];
    uint8_t qh[ENG_QK_K / 4];
    int8_t scales[ENG_QK_K / 16];
    uint16_t d;
} eng_block_q6_k;

/* Activation format for the K-quants: f32 scale, bsums[i] = sum of qs[16i..16i+15]. */
typedef struct eng_block_q8_k {
    float d;
    int8_t qs[ENG_QK_K];
    int16_t bsums[ENG_QK_K / 16];
} eng_block_q8_k;

/* --- types the engine names but does not compute: layouts as ggml's, for
 * their sizes (files holding them open; messages name them) --------------- */

typedef struct eng_block_q2_k {
    uint8_t scales[ENG_QK_K / 16];
    uint8_t qs[ENG_QK_K / 4];
    uint16_t d, dmin;
} eng_block_q2_k;

typedef struct eng_block_q3_k {
    uint8_t hmask[ENG_QK_K / 8];
    uint8_t qs[ENG_QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} eng_block_q3_k;

typedef struct eng_block_iq2_xxs {
    uint16_t d;
    uint16_t qs[ENG_QK_K / 8];
} eng_block_iq2_xxs;

typedef struct eng_block_iq2_xs {
    uint16_t d;
    uint16_t qs[ENG_QK_K / 8];
    uint8_t scales[ENG_QK_K / 32];
} eng_block_iq2_xs;

typedef struct eng_block_iq3_xxs {
    uint16_t d;
    uint8_t qs[3 * ENG_QK_K / 8];
} eng_block_iq3_xxs;

typedef struct eng_block_iq1_s {
    uint16_t d;
    uint8_t qs[ENG_QK_K / 8];
    uint16_t qh[ENG_QK_K / 32];
} eng_block_iq1_s;

typedef struct eng_block_iq4_nl {
    uint16_t d;
    uint8_t qs[ENG_QK / 2];
} eng_block_iq4_nl;

typedef struct eng_block_iq3_s {
    uint16_t d;
    uint8_t qs[ENG_QK_K / 4];
    uint8_t qh[ENG_QK_K / 32];
    uint8_t signs[ENG_QK_K / 8];
    uint8_t scales[ENG_QK_K / 64];
} eng_block_iq3_s;

typedef struct eng_block_iq2_s {
    uint16_t d;
    uint8_t qs[ENG_QK_K / 4];
    uint8_t qh[ENG_QK_K / 32];
    uint8_t scales[ENG_QK_K / 32];
} eng_block_iq2_s;

typedef struct eng_block_iq4_xs {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[ENG_QK_K / 64];
    uint8_t qs[ENG_QK_K / 2];
} eng_block_iq4_xs;

typedef struct eng_block_iq1_m {
    uint8_t qs[ENG_QK_K / 8];
    uint8_t qh[ENG_QK_K / 16];
    uint8_t scales[ENG_QK_K / 32];
} eng_block_iq1_m;

typedef struct eng_block_tq1_0 {
    uint8_t qs[(ENG_QK_K - 4 * ENG_QK_K / 64) / 5];
    uint8_t qh[ENG_QK_K / 64];
    uint16_t d;
} eng_block_tq1_0;

typedef struct eng_block_tq2_0 {
    uint8_t qs[ENG_QK_K / 4];
    uint16_t d;
} eng_block_tq2_0;

typedef struct eng_block_mxfp4 {
    uint8_t e; /* E8M0 shared exponent */
    uint8_t qs[ENG_QK / 2];
} eng_block_mxfp4;

/* ggml's own sizes: a layout above that drifted from them would be caught here */
_Static_assert(sizeof(eng_block_q4_0) == 18, "q4_0 block size");
_Static_assert(sizeof(eng_block_q4_1) == 20, "q4_1 block size");
_Static_assert(sizeof(eng_block_q5_0) == 22, "q5_0 block size");
_Static_assert(sizeof(eng_block_q5_1) == 24, "q5_1 block size");
_Static_assert(sizeof(eng_block_q8_0) == 34, "q8_0 block size");
_Static_assert(sizeof(eng_block_q8_1) == 36, "q8_1 block size");
_Static_assert(sizeof(eng_block_q4_k) == 144, "q4_k block size");
_Static_assert(sizeof(eng_block_q5_k) == 176, "q5_k block size");
_Static_assert(sizeof(eng_block_q6_k) == 210, "q6_k block size");
_Static_assert(sizeof(eng_block_q8_k) == 292, "q8_k block size");
_Static_assert(sizeof(eng_block_q2_k) == 84, "q2_k block size");
_Static_assert(sizeof(eng_block_q3_k) == 110, "q3_k block size");
_Static_assert(sizeof(eng_block_iq2_xxs) == 66, "iq2_xxs block size");
_Static_assert(sizeof(eng_block_iq2_xs) == 74, "iq2_xs block size");
_Static_assert(sizeof(eng_block_iq3_xxs) == 98, "iq3_xxs block size");
_Static_assert(sizeof(eng_block_iq1_s) == 50, "iq1_s block size");
_Static_assert(sizeof(eng_block_iq4_nl) == 18, "iq4_nl block size");
_Static_assert(sizeof(eng_block_iq3_s) == 110, "iq3_s block size");
_Static_assert(sizeof(eng_block_iq2_s) == 82, "iq2_s block size");
_Static_assert(sizeof(eng_block_iq4_xs) == 136, "iq4_xs block size");
_Static_assert(sizeof(eng_block_iq1_m) == 56, "iq1_m block size");
_Static_assert(sizeof(eng_block_tq1_0) == 54, "tq1_0 block size");
_Static_assert(sizeof(eng_block_tq2_0) == 66, "tq2_0 block size");
_Static_assert(sizeof(eng_block_mxfp4) == 17, "mxfp4 block size");

/* --- shared unpacking --------------------------------------------------- */

static inline uint32_t eng_load_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The 6-bit scale and min of sub-block j (0..7) of a q4_K / q5_K block. */
static inline void eng_k_scale_min(const uint8_t *s, int j, int *sc, int *mn) {
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* The 256 signed 6-bit values (q - 32) of a q6_K block, in element order. */
static inline void eng_q6_k_values(const eng_block_q6_k *b, int8_t v[ENG_QK_K]) {
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

#endif
