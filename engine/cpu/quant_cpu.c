/* engine/cpu/quant_cpu.c: the CPU quant traits (quant_cpu.h): the scalar
 * reference dot products, integer sums block by block, left to right
 * (deterministic), the reference gemm built on each, the prepared-row size of
 * each activation format, and eng_type_kernels_get, which starts from those
 * and lets the SIMD hooks (quant_avx2.c, quant_avx512.c) replace what they
 * have. Does not contain SIMD, threading or dequantizers (quant.c). */
#include "quant_cpu.h"

#include <string.h>

#include "../quant_impl.h"
#include "quant_simd.h"

#define F16(h) eng_f16_to_f32(h)

/* --- dot products ------------------------------------------------------ */
/* Each block's integer sum is exact; it is scaled in float and added to the
 * running sum in block order, so the result depends only on the inputs. */

static void f32_dot(int64_t n, float *s, const void *w, const void *a) {
    const float *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += x[i] * y[i];
    *s = sum;
}

static void f16_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += F16(x[i]) * F16(y[i]);
    *s = sum;
}

static void bf16_dot(int64_t n, float *s, const void *w, const void *a) {
    const uint16_t *x = w, *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) sum += eng_bf16_to_f32(x[i]) * eng_bf16_to_f32(y[i]);
    *s = sum;
}

static void q4_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            isum += ((x[i].qs[j] & 0xF) - 8) * y[i].qs[j];
            isum += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

static void q4_1_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_1 *x = w;
    const eng_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            isum += (x[i].qs[j] & 0xF) * y[i].qs[j];
            isum += (x[i].qs[j] >> 4) * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum + F16(x[i].m) * F16(y[i].s);
    }
    *s = sum;
}

static void q5_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        const uint32_t qh = eng_load_u32le(x[i].qh);
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = ((x[i].qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4) - 16;
            int hi = ((x[i].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4) - 16;
            isum += lo * y[i].qs[j] + hi * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

static void q5_1_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_1 *x = w;
    const eng_block_q8_1 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        const uint32_t qh = eng_load_u32le(x[i].qh);
        int isum = 0;
        for (int j = 0; j < ENG_QK / 2; j++) {
            int lo = (x[i].qs[j] & 0xF) | (int)((qh >> j) & 1u) << 4;
            int hi = (x[i].qs[j] >> 4) | (int)((qh >> (j + 16)) & 1u) << 4;
            isum += lo * y[i].qs[j] + hi * y[i].qs[j + 16];
        }
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum + F16(x[i].m) * F16(y[i].s);
    }
    *s = sum;
}

static void q8_0_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q8_0 *x = w;
    const eng_block_q8_0 *y = a;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK; i++) {
        int isum = 0;
        for (int j = 0; j < ENG_QK; j++) isum += x[i].qs[j] * y[i].qs[j];
        sum += (F16(x[i].d) * F16(y[i].d)) * (float)isum;
    }
    *s = sum;
}

/* q4_K / q5_K super-block against q8_K: sum_j sc[j] * dot(q_j, a_j) and the
 * min term sum_j mn[j] * (sum of a_j), the latter from the bsums. */
static void k_dot_block(const uint8_t *scales, const int8_t q[ENG_QK_K], const eng_block_q8_k *y, int *isum,
                        int *imin) {
    int s = 0, m = 0;
    for (int j = 0; j < 8; j++) {
        int sc, mn, d = 0;
        eng_k_scale_min(scales, j, &sc, &mn);
        for (int l = 0; l < 32; l++) d += q[32 * j + l] * y->qs[32 * j + l];
        s += sc * d;
        m += mn * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    }
    *isum = s;
    *imin = m;
}

static void q4_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q4_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        for (int g = 0; g < 4; g++)
            for (int l = 0; l < 32; l++) {
                q[64 * g + l] = (int8_t)(x[i].qs[32 * g + l] & 0xF);
                q[64 * g + 32 + l] = (int8_t)(x[i].qs[32 * g + l] >> 4);
            }
        int isum, imin;
        k_dot_block(x[i].scales, q, &y[i], &isum, &imin);
        sum += (F16(x[i].d) * y[i].d) * (float)isum - (F16(x[i].dmin) * y[i].d) * (float)imin;
    }
    *s = sum;
}

static void q5_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q5_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        for (int g = 0; g < 4; g++) {
            const uint8_t mlo = (uint8_t)(1u << (2 * g)), mhi = (uint8_t)(2u << (2 * g));
            for (int l = 0; l < 32; l++) {
                q[64 * g + l] = (int8_t)((x[i].qs[32 * g + l] & 0xF) + (x[i].qh[l] & mlo ? 16 : 0));
                q[64 * g + 32 + l] = (int8_t)((x[i].qs[32 * g + l] >> 4) + (x[i].qh[l] & mhi ? 16 : 0));
            }
        }
        int isum, imin;
        k_dot_block(x[i].scales, q, &y[i], &isum, &imin);
        sum += (F16(x[i].d) * y[i].d) * (float)isum - (F16(x[i].dmin) * y[i].d) * (float)imin;
    }
    *s = sum;
}

static void q6_k_dot(int64_t n, float *s, const void *w, const void *a) {
    const eng_block_q6_k *x = w;
    const eng_block_q8_k *y = a;
    int8_t q[ENG_QK_K];
    float sum = 0.0f;
    for (int64_t i = 0; i < n / ENG_QK_K; i++) {
        eng_q6_k_values(&x[i], q);
        int isum = 0;
        for (int g = 0; g < ENG_QK_K / 16; g++) {
            int d = 0;
            for (int l = 0; l < 16; l++) d += q[16 * g + l] * y[i].qs[16 * g + l];
            isum += x[i].scales[g] * d;
        }
        sum += (F16(x[i].d) * y[i].d) * (float)isum;
    }
    *s = sum;
}

/* --- reference gemm: the dot product per (row, token) ------------------- */

#define REF_GEMM(tn)                                                                                         \
    static void tn##_gemm(int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr, const void *a, \
                          size_t lda, int nt) {                                                              \
        for (int r = 0; r < nr; r++)                                                                         \
            for (int t = 0; t < nt; t++)                                                                     \
                tn##_dot(n, y + (size_t)t * ldy + (size_t)r, (const char *)w + (size_t)r * ldw,              \
                         (const char *)a + (size_t)t * lda);                                                 \
    }
REF_GEMM(f32)
REF_GEMM(f16)
REF_GEMM(bf16)
REF_GEMM(q4_0)
REF_GEMM(q4_1)
REF_GEMM(q5_0)
REF_GEMM(q5_1)
REF_GEMM(q8_0)
REF_GEMM(q4_k)
REF_GEMM(q5_k)
REF_GEMM(q6_k)
#undef REF_GEMM

/* --- activation rows ------------------------------------------------------ */

/* A reference activation row: the format's from_float output, padded to 64
 * bytes so every row of a batch stays aligned. */
#define ACT_BYTES(tn, id) \
    static size_t tn##_act_bytes(int64_t n) { return (eng_type_row_size(id, n) + 63) & ~(size_t)63; }
ACT_BYTES(f32, ENG_TYPE_F32)
ACT_BYTES(f16, ENG_TYPE_F16)
ACT_BYTES(bf16, ENG_TYPE_BF16)
ACT_BYTES(q8_0, ENG_TYPE_Q8_0)
ACT_BYTES(q8_1, ENG_TYPE_Q8_1)
ACT_BYTES(q8_k, ENG_TYPE_Q8_K)
#undef ACT_BYTES

/* --- the table ---------------------------------------------------------- */

/* A weight type: its reference dot product and gemm. */
#define WEIGHT(tn) \
    { .vec_dot = tn##_dot, .gemm = tn##_gemm }

static const eng_type_traits_cpu eng_types_cpu[ENG_TYPE_COUNT] = {
    [ENG_TYPE_F32] = {.vec_dot = f32_dot, .gemm = f32_gemm, .act_bytes = f32_act_bytes},
    [ENG_TYPE_F16] = {.vec_dot = f16_dot, .gemm = f16_gemm, .act_bytes = f16_act_bytes},
    [ENG_TYPE_BF16] = {.vec_dot = bf16_dot, .gemm = bf16_gemm, .act_bytes = bf16_act_bytes},
    [ENG_TYPE_Q4_0] = WEIGHT(q4_0),
    [ENG_TYPE_Q4_1] = WEIGHT(q4_1),
    [ENG_TYPE_Q5_0] = WEIGHT(q5_0),
    [ENG_TYPE_Q5_1] = WEIGHT(q5_1),
    [ENG_TYPE_Q8_0] = {.vec_dot = q8_0_dot, .gemm = q8_0_gemm, .act_bytes = q8_0_act_bytes},
    [ENG_TYPE_Q8_1] = {.act_bytes = q8_1_act_bytes},
    [ENG_TYPE_Q4_K] = WEIGHT(q4_k),
    [ENG_TYPE_Q5_K] = WEIGHT(q5_k),
    [ENG_TYPE_Q6_K] = WEIGHT(q6_k),
    [ENG_TYPE_Q8_K] = {.act_bytes = q8_k_act_bytes},
};

#undef WEIGHT

const eng_type_traits_cpu *eng_type_get_cpu(uint32_t type) {
    const eng_type_traits *t = eng_type_get(type);
    if (!t || !t->supported) return NULL;
    return &eng_types_cpu[type];
}

int eng_type_kernels_get(uint32_t type, eng_simd level, eng_type_kernels *out) {
    const eng_type_traits *t = eng_type_get(type);
    const eng_type_traits_cpu *c = eng_type_get_cpu(type);
    if (!t || !c || !c->vec_dot || !c->gemm) return UTIL_EUNSUPPORTED;
    const eng_type_traits *vt = eng_type_get(t->vec_dot_type);
    const eng_type_traits_cpu *vc = eng_type_get_cpu(t->vec_dot_type);
    if (!vt || !vc || !vt->from_float || !vc->act_bytes) return UTIL_EUNSUPPORTED;
    out->level = ENG_SIMD_SCALAR;
    out->vec_dot = c->vec_dot;
    out->act_bytes = vc->act_bytes;
    out->act_quantize = vt->from_float;
    out->gemm = c->gemm;
    if (level >= ENG_SIMD_AVX2) eng_quant_avx2_kernels(type, out);
    if (level >= ENG_SIMD_AVX512) eng_quant_avx512_kernels(type, out);
    return UTIL_OK;
}
