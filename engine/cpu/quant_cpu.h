/* engine/cpu/quant_cpu.h: the CPU backend's side of the quant traits (as
 * ggml's type_traits_cpu beside type_traits): per type its scalar reference
 * dot product with its activation format (quant.h's vec_dot_type) and the
 * reference gemm on it; per activation format the bytes of a prepared row;
 * and, assembled from those and the SIMD hooks (quant_simd.h), the kernels a
 * level runs (eng_type_kernels), which the backend's one generic matmul walks.
 * Adding a type: its generic entry (quant.c), its entry here, its kernels.
 * No threading or allocation; the matmul is backend_cpu.c's. */
#ifndef ENG_QUANT_CPU_H
#define ENG_QUANT_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "../../util/err.h"
#include "../quant.h"
#include "cpu_features.h"
#include "quant_kernels.h"

typedef struct eng_type_traits_cpu {
    eng_vec_dot_fn vec_dot;     /* weight types: the scalar reference dot product */
    eng_gemm_fn gemm;           /* weight types: vec_dot per (row, token) */
    eng_act_bytes_fn act_bytes; /* activation formats: a reference row (from_float), 64-byte padded */
} eng_type_traits_cpu;

/* The CPU traits of a type id, or NULL when the CPU has none for it. */
const eng_type_traits_cpu *eng_type_get_cpu(uint32_t type);

/* --- fast kernels, selected at run time -------------------------------- */
/* The traits are the scalar reference. A SIMD level may replace the dot
 * product with kernels that read activations in their own layout (quantized
 * exactly like the reference's from_float, then rearranged) and compute
 * several rows and tokens per weight pass. Results differ from the reference
 * only by float summation order; within one level every (row, token) is
 * computed with the same arithmetic whatever the tile shape. */


/* Fills *out with the fastest kernels for `type` at or below `level` (the
 * scalar level gives the references: vec_dot_type rows, gemm = vec_dot per
 * row and token). UTIL_EUNSUPPORTED when the type has no dot product. */
int eng_type_kernels_get(uint32_t type, eng_simd level, eng_type_kernels *out);

/* --- the exact mode (quant_exact.c) ------------------------------------ */
/* Weights dequantized by the generic reference (to_float), f32 activations,
 * no 8-bit activation quantization: one kernel for every type with a
 * dequantizer, the type passed along. */
size_t eng_exact_act_bytes(int64_t n);
void eng_exact_act(const float *x, void *dst, int64_t n);
/* As eng_gemm_fn, for weights of `type`. */
void eng_exact_gemm(uint32_t type, int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr,
                    const void *a, size_t lda, int nt);

#endif
