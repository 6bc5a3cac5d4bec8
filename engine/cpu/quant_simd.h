/* engine/cpu/quant_simd.h: private to engine/cpu/: the hooks through which the
 * SIMD kernel files replace slots of an eng_type_kernels (see quant_kernels.h), and
 * the prepared q8_K activation layout both levels' K-quant tiles read. Each hook
 * leaves the slots it has no kernel for untouched. On non-x86 builds they do
 * nothing. */
#ifndef ENG_QUANT_SIMD_H
#define ENG_QUANT_SIMD_H

#include <stddef.h>

#include "quant_kernels.h"

void eng_quant_avx2_kernels(uint32_t type, eng_type_kernels *k);
void eng_quant_avx512_kernels(uint32_t type, eng_type_kernels *k);

/* A prepared q8_K block: the reference block's values (same quantization) with
 * qs and bsums on 64-byte boundaries (the reference block is 292 bytes, its qs
 * at offset 4); 320 bytes, so rows of them stay aligned. */
typedef struct eng_q8k_prep {
    int8_t qs[256];
    int16_t bsums[16];
    float d;
    float pad[7];
} eng_q8k_prep;
_Static_assert(sizeof(eng_q8k_prep) == 320, "prepared q8_K block size");

/* The AVX-512 q4_K / q5_K layout of the same values (quant_avx512.c): the
 * 32-value sub-blocks in the order 0 2 1 3 4 6 5 7 (what the low and high
 * nibbles of one 64-byte load of the weights hold), each sub-block's sum (the
 * mins term), and d at the same offset. */
typedef struct eng_q8k4_prep {
    int8_t qs[256];
    int16_t sums[8];
    int16_t pad16[8];
    float d;
    float pad[7];
} eng_q8k4_prep;
_Static_assert(sizeof(eng_q8k4_prep) == 320, "prepared q4_K activation block size");
_Static_assert(offsetof(eng_q8k4_prep, d) == offsetof(eng_q8k_prep, d), "d where q8_K's prepared d is");

/* Bytes of a prepared row of n values (n a multiple of 256). */
size_t eng_q8k_prep_bytes(int64_t n);
/* Quantizes like the reference q8_K from_float (bit-identical values), into the
 * prepared layout; AVX2 (quant_avx2.c), called only on CPUs that have it. */
void eng_q8k_prep_avx2(const float *x, void *dst, int64_t n);

#endif
