/* engine/cpu/cpu_kernels.h: private to the CPU backend: the non-matmul kernels a SIMD
 * level replaces (attention per (token, head) or per chunk of keys, RMSNorm rows, SwiGLU,
 * f16 conversions).
 * The scalar references live in backend_cpu.c; a NULL slot keeps the reference.
 * Matmul kernels are not here: they come from the CPU quant traits (quant_cpu.h). */
#ifndef ENG_CPU_KERNELS_H
#define ENG_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

/* Query heads per kv head and per chunk call, query heads in all per chunk
 * call; keys per chunk: a query's keys are split at multiples of
 * CPU_ATTN_CHUNK positions (by position only: never by thread count, pass or
 * batch), and the chunks' partials merged in position order. */
enum { CPU_ATTN_GROUP_MAX = 4, CPU_ATTN_HEADS_MAX = 32, CPU_ATTN_CHUNK = 256 };

/* One query head of a chunk call: its head_dim values, where its partial goes. */
typedef struct cpu_attn_q {
    const float *q;
    float *o;  /* head_dim floats */
    float *ml; /* 2 floats */
} cpu_attn_q;

typedef struct cpu_kern {
    /* Attention of query token t, head h, over keys lo..p in position order,
     * reading the pages in the view's K and V types (f16, q8_0, q4_0);
     * sc holds at least p + 16 floats of scratch. Needs head_dim % 8 == 0. */
    void (*attn_head)(const eng_attn_args *a, int t, int h, float *sc);
    /* One chunk of keys (flash-decoding): keys j0 .. j0 + nk - 1 (nk <= CPU_ATTN_CHUNK)
     * of kv heads g0 .. g0 + ng - 1, nq query heads each (1 <= nq <= CPU_ATTN_GROUP_MAX,
     * ng * nq <= CPU_ATTN_HEADS_MAX; any tokens and sequences whose views hold the same
     * rows there): q[i * nq + s] is head s of kv head g0 + i. Each key and value is
     * read once for all of them, a block of keys for all ng kv heads at a time (whole
     * rows stream from the pages). Writes each head's partial: ml[0] its max score,
     * ml[1] the sum of exp(score - max), o the value sum weighted by those exps (not
     * divided). Keys and values come from the pages (kf, vf NULL) or from f32 rows
     * (row j of kv head g at kf + j * ld + g * head_dim): the same values, the same
     * bits. Head i's scratch at sc + i * scs (nk + 16 floats). Each head's partial
     * has the bits it gets alone. Needs head_dim 64, 128 or 256. */
    void (*attn_chunk_f32)(const eng_attn_args *a, int g0, int ng, int j0, int nk, const cpu_attn_q *q,
                           int nq, const float *kf, const float *vf, size_t ld, float *sc, size_t scs);
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
