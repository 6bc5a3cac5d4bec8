/* engine/cpu/quant_exact.c: the exact matmul kernel: weights dequantized with the
 * generic scalar reference (to_float) and multiplied with f32 activations, no 8-bit
 * activation quantization; one kernel for every type with a dequantizer (the type is
 * an argument, so a new type needs nothing here). Slower than the default path; it is
 * the mode (--exact) that is held to 1e-2 against a float64 implementation. Each
 * (row, token) is summed in one fixed order whatever the tile shape, so the batch
 * invariance of the default path holds here too. */
#include <string.h>

#include "quant_cpu.h"

enum { SEG = 256 }; /* dequantized in segments of 256 values (a multiple of every block size) */

size_t eng_exact_act_bytes(int64_t n) { return ((size_t)n * sizeof(float) + 63) & ~(size_t)63; }

void eng_exact_act(const float *x, void *dst, int64_t n) { memcpy(dst, x, (size_t)n * sizeof(float)); }

/* y[t*ldy + r] = sum_c W[r][c] * a_t[c]; per (r, t) the sum runs over c in
 * order, one float accumulator. */
void eng_exact_gemm(uint32_t type, int64_t n, float *y, size_t ldy, const void *w, size_t ldw, int nr,
                    const void *a, size_t lda, int nt) {
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
