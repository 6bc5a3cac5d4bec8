/* engine/quant.h: the quant-type traits table. One entry per ggml type: block
 * size, bytes per block, the scalar reference dequantizer, the activation format
 * its dot product takes, and the dot product itself. The generic matmul in the
 * CPU backend walks this table; adding a type is one entry plus its kernels.
 * Does not allocate or thread; see backend_cpu.c for the matmul. */
#ifndef ENG_QUANT_H
#define ENG_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* ggml type ids, as stored in GGUF tensor infos. */
typedef enum eng_type {
    ENG_TYPE_F32 = 0,
    ENG_TYPE_F16 = 1,
    ENG_TYPE_Q4_0 = 2,
    ENG_TYPE_Q4_1 = 3,
    ENG_TYPE_Q5_0 = 6,
    ENG_TYPE_Q5_1 = 7,
    ENG_TYPE_Q8_0 = 8,
    ENG_TYPE_Q8_1 = 9,
    ENG_TYPE_Q2_K = 10,
    ENG_TYPE_Q3_K = 11,
    ENG_TYPE_Q4_K = 12,
    ENG_TYPE_Q5_K = 13,
    ENG_TYPE_Q6_K = 14,
    ENG_TYPE_Q8_K = 15,
    ENG_TYPE_BF16 = 30,
    ENG_TYPE_COUNT = 40
} eng_type;

/* Dequantize n values (n a multiple of blck) from src into dst. */
typedef void (*eng_to_float_fn)(const void *src, float *dst, int64_t n);
/* Quantize n activations (multiple of blck of the target type). */
typedef void (*eng_from_float_fn)(const float *src, void *dst, int64_t n);
/* Dot product of n values: weights w (this type) with activations a (in the
 * type's vec_dot_type); result in *s. */
typedef void (*eng_vec_dot_fn)(int64_t n, float *s, const void *w, const void *a);

typedef struct eng_type_traits {
    const char *name;     /* "q4_1" */
    int blck;             /* elements per block */
    size_t bytes;         /* bytes per block */
    int supported;        /* 0: the id is known (for messages) but has no kernels */
    eng_to_float_fn to_float;     /* scalar reference */
    eng_from_float_fn from_float; /* for activation formats (q8_0, q8_1, q8_k, f16, ...) */
    eng_type vec_dot_type;        /* activation format the dot product takes */
    eng_vec_dot_fn vec_dot;       /* scalar reference dot product */
} eng_type_traits;

/* Traits for a type id, or NULL for an unknown id. Check ->supported. */
const eng_type_traits *eng_type_get(uint32_t type);
/* Bytes of a row of n elements (n % blck == 0 assumed; returns 0 otherwise). */
size_t eng_type_row_size(uint32_t type, int64_t n);

/* --- fast kernels, selected at run time -------------------------------- */
/* The traits above are the scalar reference. A SIMD level may replace the dot
 * product with kernels that read activations in their own layout (quantized
 * exactly like the reference's from_float, then rearranged) and compute
 * several rows and tokens per weight pass. Results differ from the reference
 * only by float summation order; within one level every (row, token) is
 * computed with the same arithmetic whatever the tile shape. */

typedef enum eng_simd { ENG_SIMD_SCALAR = 0, ENG_SIMD_AVX2 = 1, ENG_SIMD_AVX512 = 2 } eng_simd;

/* Bytes of one prepared activation row of n values (a multiple of 64). */
typedef size_t (*eng_act_bytes_fn)(int64_t n);
/* Quantizes an f32 activation row of n values into the prepared layout. */
typedef void (*eng_act_fn)(const float *x, void *dst, int64_t n);
/* y[t * ldy + r] = (row r of w) . (prepared activation row t) for r < nr and
 * t < nt; weight rows are ldw bytes apart, activation rows lda bytes apart. */
typedef void (*eng_gemm_fn)(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr,
                            const void *a, size_t lda, int nt);

typedef struct eng_type_kernels {
    eng_simd level;             /* level of the dot product actually used */
    eng_vec_dot_fn vec_dot;     /* on vec_dot_type rows; bit-identical to gemm */
    eng_act_bytes_fn act_bytes;
    eng_act_fn act_quantize;
    eng_gemm_fn gemm;
} eng_type_kernels;

/* Fills *out with the fastest kernels for `type` at or below `level` (the
 * scalar level gives the references: vec_dot_type rows, gemm = vec_dot per
 * row and token). Returns 0, or -1 when the type has no dot product. */
int eng_type_kernels_get(uint32_t type, eng_simd level, eng_type_kernels *out);

/* The exact kernels (quant_exact.c): weights dequantized by the scalar
 * reference, f32 activations, no 8-bit activation quantization. Returns -1
 * for a type without a dequantizer. */
int eng_type_kernels_exact(uint32_t type, eng_type_kernels *out);

/* f16 / bf16 conversions (IEEE binary16 with subnormals; bf16 = top half of f32). */
float eng_f16_to_f32(uint16_t h);
uint16_t eng_f32_to_f16(float f); /* round to nearest even */
float eng_bf16_to_f32(uint16_t h);
uint16_t eng_f32_to_bf16(float f);

#endif
