/* engine/quant_impl.h: the byte layouts of the ggml quant blocks, for engine/
 * code that writes fast kernels beside the scalar references in quant.c. Little-
 * endian hosts only (as GGUF itself). f16 fields are raw IEEE binary16 bits.
 * Does not declare functions; see quant.h for the traits table. */
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

#endif
