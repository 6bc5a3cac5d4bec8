/* engine/cpu/cpu_kernels.h: private to the CPU backend: the non-matmul kernels a SIMD
 * level replaces (attention per (token, head), RMSNorm rows, SwiGLU, f16 conversions).
 * The scalar references live in backend_cpu.c; a NULL slot keeps the reference.
 * Matmul kernels are not here: they come from the CPU quant traits (quant_cpu.h). */
#ifndef ENG_CPU_KERNELS_H
#define ENG_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

enum { CPU_ATTN_GROUP_MAX = 4 };

typedef struct cpu_kern {
    /* Attention of query token t, head h, over keys lo..p in position order,
     * reading the pages in the view's K and V types (f16, q8_0, q4_0);
     * sc holds at least p + 16 floats of scratch. Needs head_dim % 8 == 0. */
    void (*attn_head)(const eng_attn_args *a, int t, int h, float *sc);
    /* The same, reading keys and values as f32: row j of kv head g at kf + j * ld
     * + g * head_dim (NULL: dequantized from the pages, whatever their types,
     * on the fly: the same values, the same results).
     * Needs head_dim 64, 128 or 256. Preferred when present. */
    void (*attn_head_f32)(const eng_attn_args *a, int t, int h, const float *kf, const float *vf, size_t ld,
                          float *sc);
    /* attn_head_f32 for heads h0 .. h0 + nh - 1 of one kv head (1 <= nh <=
     * CPU_ATTN_GROUP_MAX), reading each key and value once for all of them;
     * head h0 + i's scratch at sc + i * scs. Each head's output has the bits
     * attn_head_f32 gives it. */
    void (*attn_group_f32)(const eng_attn_args *a, int t, int h0, int nh, const float *kf, const float *vf,
                           size_t ld, float *sc, size_t scs);
    void (*f16_to_f32)(float *dst, const uint16_t *src, size_t n);
    /* y = x / sqrt(mean(x^2) + eps) * w for one row of n values. */
    void (*rmsnorm_row)(float *y, const float *x, const float *w, int n, float eps);
    void (*swiglu)(float *out, const float *gate, const float *up, size_t n);
    void (*f32_to_f16)(uint16_t *dst, const float *src, size_t n);
} cpu_kern;

/* Fill the slots each level has (nothing on non-x86 builds). */
void cpu_kern_avx2(cpu_kern *k);
void cpu_kern_avx512(cpu_kern *k);

#endif
