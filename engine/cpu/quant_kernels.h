/* engine/cpu/quant_kernels.h: the shapes of the CPU's quant kernels (dot
 * product, prepared activation rows, gemm tiles) and the set of them a SIMD
 * level runs for one type (eng_type_kernels). Types only: quant_cpu.c fills a
 * set from the references and the SIMD hooks (quant_simd.h), which fill their
 * slots; both include this, so neither depends on the other's header. */
#ifndef ENG_QUANT_KERNELS_H
#define ENG_QUANT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_features.h"

/* Dot product of n values: weights w (this type) with activations a (in the
 * type's vec_dot_type); result in *s. */
typedef void (*eng_vec_dot_fn)(int64_t n, float *s, const void *w, const void *a);
/* Bytes of one prepared activation row of n values (a multiple of 64). */
typedef size_t (*eng_act_bytes_fn)(int64_t n);
/* Quantizes an f32 activation row of n values into the prepared layout. */
typedef void (*eng_act_fn)(const float *x, void *dst, int64_t n);
/* y[t * ldy + r] = (row r of w) . (prepared activation row t) for r < nr and
 * t < nt; weight rows are ldw bytes apart, activation rows lda bytes apart. */
typedef void (*eng_gemm_fn)(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, const void *a,
                            size_t lda, int nt);

typedef struct eng_type_kernels {
    eng_simd level;         /* level of the dot product actually used */
    eng_vec_dot_fn vec_dot; /* on vec_dot_type rows; bit-identical to gemm */
    eng_act_bytes_fn act_bytes;
    eng_act_fn act_quantize;
    eng_gemm_fn gemm;
} eng_type_kernels;

#endif
