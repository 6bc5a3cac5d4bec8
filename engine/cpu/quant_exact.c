/* engine/cpu/quant_exact.c: the exact matmul kernels: weights dequantized with the
 * scalar reference (to_float) and multiplied with f32 activations, no 8-bit
 * activation quantization. Slower than the default path; it is the mode
 * (--exact) that is held to 1e-2 against a float64 implementation. Each
 * (row, token) is summed in one fixed order whatever the tile shape, so the
 * batch invariance of the default path holds here too. */
#include <string.h>

#include "../quant.h"

enum { SEG = 256 }; /* dequantized in segments of 256 values (a multiple of every block size) */

static size_t exact_act_bytes(int64_t n) { return ((size_t)n * sizeof(float) + 63) & ~(size_t)63; }

static void exact_act(const float *x, void *dst, int64_t n) { memcpy(dst, x, (size_t)n * sizeof(float)); }

/* y[t*ldy + r] = sum_c W[r][c] * a_t[c]; per (r, t) the sum runs over c in
 * order, one float accumulator. */
static void exact_gemm_type(uint32_t type, int64_t n, float *y, size_t ldy, const void *w, size_t ldw,
                            int nr, const void *a, size_t lda, int nt) {
    const eng_type_traits *tr = eng_type_get(type);
    size_t seg_bytes = eng_type_row_size(type, SEG);
    float buf[SEG];
    enum { TT = 32 };
    for (int r = 0; r < nr; r++) {
        const char *row = (const char *)w + (size_t)r * ldw;
        for (int t0 = 0; t0 < nt; t0 += TT) {
            int tn = nt - t0 < TT ? nt - t0 : TT;
            float acc[TT] = {0};
            for (int64_t c0 = 0; c0 < n; c0 += SEG) {
                int64_t len = n - c0 < SEG ? n - c0 : SEG;
                tr->to_float(row + (size_t)(c0 / SEG) * seg_bytes, buf, len);
                for (int t = 0; t < tn; t++) {
                    const float *x = (const float *)((const char *)a + (size_t)(t0 + t) * lda) + c0;
                    float s = acc[t];
                    for (int64_t c = 0; c < len; c++) s += buf[c] * x[c];
                    acc[t] = s;
                }
            }
            for (int t = 0; t < tn; t++) y[(size_t)(t0 + t) * ldy + (size_t)r] = acc[t];
        }
    }
}

static void exact_dot_type(uint32_t type, int64_t n, float *s, const void *w, const void *a) {
    exact_gemm_type(type, n, s, 1, w, 0, 1, a, 0, 1);
}

/* One pair of wrappers per supported type: the kernel signatures carry no
 * type, so the type is bound here. */
#define EXACT_KERNELS(name, id)                                                                  \
    static void exact_gemm_##name(int64_t n, float *y, size_t ldy, const void *w, size_t ldw,   \
                                  int nr, const void *a, size_t lda, int nt) {                  \
        exact_gemm_type(id, n, y, ldy, w, ldw, nr, a, lda, nt);                                  \
    }                                                                                            \
    static void exact_dot_##name(int64_t n, float *s, const void *w, const void *a) {            \
        exact_dot_type(id, n, s, w, a);                                                          \
    }
EXACT_KERNELS(f32, ENG_TYPE_F32)
EXACT_KERNELS(f16, ENG_TYPE_F16)
EXACT_KERNELS(bf16, ENG_TYPE_BF16)
EXACT_KERNELS(q4_0, ENG_TYPE_Q4_0)
EXACT_KERNELS(q4_1, ENG_TYPE_Q4_1)
EXACT_KERNELS(q5_0, ENG_TYPE_Q5_0)
EXACT_KERNELS(q5_1, ENG_TYPE_Q5_1)
EXACT_KERNELS(q8_0, ENG_TYPE_Q8_0)
EXACT_KERNELS(q4_k, ENG_TYPE_Q4_K)
EXACT_KERNELS(q5_k, ENG_TYPE_Q5_K)
EXACT_KERNELS(q6_k, ENG_TYPE_Q6_K)
#undef EXACT_KERNELS

int eng_type_kernels_exact(uint32_t type, eng_type_kernels *out) {
    static const struct {
        uint32_t type;
        eng_gemm_fn gemm;
        eng_vec_dot_fn dot;
    } table[] = {
        {ENG_TYPE_F32, exact_gemm_f32, exact_dot_f32},    {ENG_TYPE_F16, exact_gemm_f16, exact_dot_f16},
        {ENG_TYPE_BF16, exact_gemm_bf16, exact_dot_bf16}, {ENG_TYPE_Q4_0, exact_gemm_q4_0, exact_dot_q4_0},
        {ENG_TYPE_Q4_1, exact_gemm_q4_1, exact_dot_q4_1}, {ENG_TYPE_Q5_0, exact_gemm_q5_0, exact_dot_q5_0},
        {ENG_TYPE_Q5_1, exact_gemm_q5_1, exact_dot_q5_1}, {ENG_TYPE_Q8_0, exact_gemm_q8_0, exact_dot_q8_0},
        {ENG_TYPE_Q4_K, exact_gemm_q4_k, exact_dot_q4_k}, {ENG_TYPE_Q5_K, exact_gemm_q5_k, exact_dot_q5_k},
        {ENG_TYPE_Q6_K, exact_gemm_q6_k, exact_dot_q6_k},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].type != type) continue;
        memset(out, 0, sizeof *out);
        out->level = ENG_SIMD_SCALAR;
        out->vec_dot = table[i].dot;
        out->act_bytes = exact_act_bytes;
        out->act_quantize = exact_act;
        out->gemm = table[i].gemm;
        return 0;
    }
    return -1;
}
