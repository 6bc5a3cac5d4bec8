/* engine/quant.h: the generic quant-type traits: one entry per ggml type with
 * what the type is, whatever computes it: name, block size, bytes per block,
 * the scalar reference dequantizer, the quantizer of activation formats, and
 * the activation format its dot products pair it with. As ggml's type_traits:
 * the CPU kernels (dot products, gemm tiles, SIMD) are the CPU backend's
 * traits (cpu/quant_cpu.h); the CUDA backend reads only this table. Does not
 * allocate, thread or multiply. */
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
    ENG_TYPE_IQ2_XXS = 16,
    ENG_TYPE_IQ2_XS = 17,
    ENG_TYPE_IQ3_XXS = 18,
    ENG_TYPE_IQ1_S = 19,
    ENG_TYPE_IQ4_NL = 20,
    ENG_TYPE_IQ3_S = 21,
    ENG_TYPE_IQ2_S = 22,
    ENG_TYPE_IQ4_XS = 23,
    ENG_TYPE_I8 = 24,
    ENG_TYPE_I16 = 25,
    ENG_TYPE_I32 = 26,
    ENG_TYPE_I64 = 27,
    ENG_TYPE_F64 = 28,
    ENG_TYPE_IQ1_M = 29,
    ENG_TYPE_BF16 = 30,
    ENG_TYPE_TQ1_0 = 34,
    ENG_TYPE_TQ2_0 = 35,
    ENG_TYPE_MXFP4 = 39,
    ENG_TYPE_COUNT = 40
} eng_type;

/* Dequantize n values (n a multiple of blck) from src into dst. */
typedef void (*eng_to_float_fn)(const void *src, float *dst, int64_t n);
/* Quantize n activations (multiple of blck of the target type). */
typedef void (*eng_from_float_fn)(const float *src, void *dst, int64_t n);

typedef struct eng_type_traits {
    const char *name;             /* "q4_1" */
    int blck;                     /* elements per block */
    size_t bytes;                 /* bytes per block */
    int supported;                /* 0: the id is known (for messages) but cannot be computed */
    eng_to_float_fn to_float;     /* scalar reference (supported types) */
    eng_from_float_fn from_float; /* activation formats (f32, f16, bf16, q8_0, q8_1, q8_K) and
                                   * KV formats (f16, q8_0, q4_0) */
    eng_type vec_dot_type;        /* the activation format its dot products take
                                   * (ENG_TYPE_COUNT for unsupported types) */
} eng_type_traits;

/* Traits for a type id, or NULL for an unknown id. Check ->supported. */
const eng_type_traits *eng_type_get(uint32_t type);
/* Bytes of a row of n elements (n % blck == 0 assumed; returns 0 otherwise). */
size_t eng_type_row_size(uint32_t type, int64_t n);

/* f16 / bf16 conversions (IEEE binary16 with subnormals; bf16 = top half of f32). */
float eng_f16_to_f32(uint16_t h);
uint16_t eng_f32_to_f16(float f); /* round to nearest even */
float eng_bf16_to_f32(uint16_t h);
uint16_t eng_f32_to_bf16(float f);

#endif
