/* engine/cuda/kernels.cu: the CUDA kernels behind cuda_kernels.h: the decode
 * matvec over quantized weights (one template over the types, decoding with
 * cuda_quant.h), dequantization to f16 for the cuBLAS prefill, norms, RoPE,
 * the paged KV store, flash-style attention and the elementwise ops. Each
 * output value comes from a fixed sequence of operations that does not depend
 * on the launch size (batch invariance). Does not allocate or synchronise. */
#include <math.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "cuda_quant.h"

/* --- shared helpers -------------------------------------------------------- */

#define CU_WARP       32
#define CU_FULL       0xFFFFFFFFu
#define CU_MAX_BLOCKS ((int64_t)1 << 20) /* grid-stride loops cover the rest */

/* Blocks of `threads` for n independent items, at least 1, at most CU_MAX_BLOCKS. */
static unsigned cu_blocks(int64_t n, int threads) {
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    return (unsigned)(b < CU_MAX_BLOCKS ? b : CU_MAX_BLOCKS);
}

static int cu_aligned(const void *p, uintptr_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* Sum over the warp by a fixed xor tree; every lane gets the same bits
 * (each level adds the same two values, only commuted). */
__device__ __forceinline__ float cu_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(CU_FULL, v, o);
    return v;
}

__device__ __forceinline__ double cu_warp_sum_d(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(CU_FULL, v, o);
    return v;
}

__device__ __forceinline__ float cu_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(CU_FULL, v, o));
    return v;
}

/* The decoder of type T, resolved at compile time: the one place a kernel
 * learns about a quant type. */
template <uint32_t T> __device__ __forceinline__ void cu_load8(const uint8_t *row, int64_t g, float v[8]) {
    if constexpr (T == ENG_TYPE_F32)
        cuq_load8_f32(row, g, v);
    else if constexpr (T == ENG_TYPE_F16)
        cuq_load8_f16(row, g, v);
    else if constexpr (T == ENG_TYPE_BF16)
        cuq_load8_bf16(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_0)
        cuq_load8_q4_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_1)
        cuq_load8_q4_1(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_0)
        cuq_load8_q5_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_1)
        cuq_load8_q5_1(row, g, v);
    else if constexpr (T == ENG_TYPE_Q8_0)
        cuq_load8_q8_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_K)
        cuq_load8_q4_k(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_K)
        cuq_load8_q5_k(row, g, v);
    else if constexpr (T == ENG_TYPE_Q6_K)
        cuq_load8_q6_k(row, g, v);
    else
        static_assert(T == ENG_TYPE_F32, "no decoder for this type");
}

/* Runs LAUNCH(T) for the runtime type id; unsupported ids launch nothing. */
#define CU_DISPATCH(type, LAUNCH)                     \
    switch (type) {                                   \
    case ENG_TYPE_F32: LAUNCH(ENG_TYPE_F32); break;   \
    case ENG_TYPE_F16: LAUNCH(ENG_TYPE_F16); break;   \
    case ENG_TYPE_BF16: LAUNCH(ENG_TYPE_BF16); break; \
    case ENG_TYPE_Q4_0: LAUNCH(ENG_TYPE_Q4_0); break; \
    case ENG_TYPE_Q4_1: LAUNCH(ENG_TYPE_Q4_1); break; \
    case ENG_TYPE_Q5_0: LAUNCH(ENG_TYPE_Q5_0); break; \
    case ENG_TYPE_Q5_1: LAUNCH(ENG_TYPE_Q5_1); break; \
    case ENG_TYPE_Q8_0: LAUNCH(ENG_TYPE_Q8_0); break; \
    case ENG_TYPE_Q4_K: LAUNCH(ENG_TYPE_Q4_K); break; \
    case ENG_TYPE_Q5_K: LAUNCH(ENG_TYPE_Q5_K); break; \
    case ENG_TYPE_Q6_K: LAUNCH(ENG_TYPE_Q6_K); break; \
    default: break;                                   \
    }

int cu_type_ok(uint32_t type) { return cuq_type_ok(type); }

/* --- matvec ---------------------------------------------------------------- */
/* One warp per MV_ROWS weight rows, MV_WARPS warps per block; blockIdx.y
 * walks groups of up to MV_TOK tokens. Lane l takes the groups of 8 values
 * g = l, l + 32, ... in that order, decodes each once per row and adds
 * w[i] * x[t][i] (i = 0..7 in order, fmaf) into one accumulator per (row,
 * token); then the xor tree; lane 0 writes. The rows of a warp share the x
 * loads (x is read from L1 once per MV_ROWS rows) and a lane fetches the raw
 * bytes of MV_UNROLL groups of every row before decoding any, so a warp has
 * MV_ROWS * MV_UNROLL groups of loads in flight instead of one. None of this
 * changes a (row, token)'s sequence of operations, which is the same in every
 * token group and every row set: results do not depend on n_tok. */

#define MV_WARPS  4
#define MV_ROWS   2
#define MV_UNROLL 4
#define MV_TOK    8

/* The raw bytes one lane needs for one group, fetched with 16/32-bit loads
 * ahead of the decode. Q4_0, Q4_1 and Q8_0 (the hot decode types) have such a
 * fetch when V (the launcher checked the rows' alignment); for the others, or
 * without V, the fetch keeps the address and the decode is cu_load8 (bytes).
 * sc: the scale bits (f16 d, and f16 m above it for q4_1); q0, q1: the group's
 * 8 quant bytes, little-endian; sh: the nibble shift (q4). */
struct mv_raw {
    const uint8_t *row;
    int64_t g;
    uint32_t sc, q0, q1;
    int sh;
};

template <uint32_t T, bool V> struct mv_fast {
    static constexpr bool on = V && (T == ENG_TYPE_Q4_0 || T == ENG_TYPE_Q4_1 || T == ENG_TYPE_Q8_0);
};

/* Two little-endian 16-bit loads as one word (p 2-byte aligned). */
__device__ __forceinline__ uint32_t cu_ld16x2(const uint8_t *p) {
    const uint16_t *h = (const uint16_t *)p;
    return (uint32_t)__ldg(h) | (uint32_t)__ldg(h + 1) << 16;
}

/* Byte offsets from cuq_w8_at (cuda_quant.h, tested on the host against the
 * reference). Alignment (the launcher's V check): q4_1 blocks are 20 bytes and
 * the row 4-aligned, so every load here is 4-aligned; q4_0 (18) and q8_0 (34)
 * blocks are only 2-aligned, hence 16-bit loads. */
template <uint32_t T, bool V>
__device__ __forceinline__ void mv_fetch(const uint8_t *row, int64_t g, mv_raw &r) {
    if constexpr (mv_fast<T, V>::on) {
        int64_t qo;
        const uint8_t *b = row + cuq_w8_at(T, g, &qo, &r.sh);
        const uint8_t *q = row + qo;
        if constexpr (T == ENG_TYPE_Q4_1) {
            r.sc = __ldg((const uint32_t *)b);
            r.q0 = __ldg((const uint32_t *)q);
            r.q1 = __ldg((const uint32_t *)(q + 4));
        } else {
            r.sc = __ldg((const uint16_t *)b);
            r.q0 = cu_ld16x2(q);
            r.q1 = cu_ld16x2(q + 4);
        }
    } else {
        r.row = row;
        r.g = g;
    }
}

/* The values cu_load8<T> gives, bit for bit (cuq_w8_decode: the same scale
 * decode, the same __fmul_rn/__fadd_rn in the same order, the integer quant
 * converted exactly by cuq_int_f instead of the cast; tests/test_cuda_quant.c
 * checks it on the host, tests/test_cuda.c on the GPU with a one-hot x). */
template <uint32_t T, bool V> __device__ __forceinline__ void mv_decode(const mv_raw &r, float v[8]) {
    if constexpr (mv_fast<T, V>::on) {
        cuq_w8_decode(T, r.sc, r.q0, r.q1, r.sh, v);
    } else {
        cu_load8<T>(r.row, r.g, v);
    }
}

template <uint32_t T, bool V>
__global__ void __launch_bounds__(MV_WARPS *CU_WARP)
    cu_matvec_k(const uint8_t *__restrict__ w, int64_t rows, int64_t cols, size_t row_bytes,
                const float *__restrict__ x, float *__restrict__ y, int n_tok, int x_vec) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    const int64_t n_grp = cols / 8, n_set = (rows + MV_ROWS - 1) / MV_ROWS;
    const int n_tg = (n_tok + MV_TOK - 1) / MV_TOK;
    const int64_t warp0 = (int64_t)blockIdx.x * MV_WARPS + threadIdx.x / CU_WARP;
    const int64_t wstride = (int64_t)gridDim.x * MV_WARPS;
    for (int tg = blockIdx.y; tg < n_tg; tg += gridDim.y) {
        const int t0 = tg * MV_TOK;
        const int nt = n_tok - t0 < MV_TOK ? n_tok - t0 : MV_TOK;
        const float *xt = x + (size_t)t0 * (size_t)cols;
        for (int64_t rs = warp0; rs < n_set; rs += wstride) { /* warp-uniform */
            const int64_t r0 = rs * MV_ROWS;
            const int nr = rows - r0 < MV_ROWS ? (int)(rows - r0) : MV_ROWS;
            const uint8_t *rp[MV_ROWS];
#pragma unroll
            for (int k = 0; k < MV_ROWS; k++) /* a missing last row repeats row r0 (not written) */
                rp[k] = w + (size_t)(r0 + (k < nr ? k : 0)) * row_bytes;
            float acc[MV_ROWS][MV_TOK];
#pragma unroll
            for (int k = 0; k < MV_ROWS; k++)
#pragma unroll
                for (int j = 0; j < MV_TOK; j++) acc[k][j] = 0.0f;
            for (int64_t g0 = lane; g0 < n_grp; g0 += (int64_t)CU_WARP * MV_UNROLL) {
                mv_raw raw[MV_UNROLL][MV_ROWS];
#pragma unroll
                for (int u = 0; u < MV_UNROLL; u++) {
                    const int64_t g = g0 + (int64_t)CU_WARP * u;
                    if (g < n_grp)
#pragma unroll
                        for (int k = 0; k < MV_ROWS; k++) mv_fetch<T, V>(rp[k], g, raw[u][k]);
                }
#pragma unroll
                for (int u = 0; u < MV_UNROLL; u++) {
                    const int64_t g = g0 + (int64_t)CU_WARP * u;
                    if (g >= n_grp) break; /* lane-dependent; no shuffles in this loop */
                    float wv[MV_ROWS][8];
#pragma unroll
                    for (int k = 0; k < MV_ROWS; k++) mv_decode<T, V>(raw[u][k], wv[k]);
#pragma unroll
                    for (int j = 0; j < MV_TOK; j++) {
                        if (j >= nt) break;
                        const float *xp = xt + (size_t)j * (size_t)cols + 8 * g;
                        float xv[8];
                        if (x_vec) {
                            const float4 a = __ldg((const float4 *)xp), b = __ldg((const float4 *)xp + 1);
                            xv[0] = a.x, xv[1] = a.y, xv[2] = a.z, xv[3] = a.w;
                            xv[4] = b.x, xv[5] = b.y, xv[6] = b.z, xv[7] = b.w;
                        } else {
#pragma unroll
                            for (int i = 0; i < 8; i++) xv[i] = __ldg(xp + i);
                        }
#pragma unroll
                        for (int k = 0; k < MV_ROWS; k++)
#pragma unroll
                            for (int i = 0; i < 8; i++) acc[k][j] = fmaf(wv[k][i], xv[i], acc[k][j]);
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < MV_ROWS; k++)
#pragma unroll
                for (int j = 0; j < MV_TOK; j++) acc[k][j] = cu_warp_sum(acc[k][j]);
            if (lane == 0)
#pragma unroll
                for (int k = 0; k < MV_ROWS; k++)
#pragma unroll
                    for (int j = 0; j < MV_TOK; j++) /* constant indices: acc stays in registers */
                        if (k < nr && j < nt)
                            y[(size_t)(t0 + j) * (size_t)rows + (size_t)(r0 + k)] = acc[k][j];
        }
    }
}

/* Whether the 16/32-bit fetches of mv_fetch are aligned for every row: the
 * base and row_bytes multiples of the fetch width (cudaMalloc gives 256-byte
 * bases; row_bytes is 20k, 18k, 34k: always a multiple of 4, 2, 2). */
static int mv_rows_aligned(uint32_t type, const void *w, size_t row_bytes) {
    const size_t a = type == ENG_TYPE_Q4_1 ? 4 : 2;
    return cu_aligned(w, a) && row_bytes % a == 0;
}

/* The vector-fetch kernel only for the types that have one (no second copy
 * of the others). */
template <uint32_t T>
static void mv_launch(cudaStream_t s, dim3 grid, bool vec, const uint8_t *w, int64_t rows, int64_t cols,
                      size_t row_bytes, const float *x, float *y, int n_tok, int x_vec) {
    if constexpr (mv_fast<T, true>::on) {
        if (vec) {
            cu_matvec_k<T, true>
                <<<grid, MV_WARPS * CU_WARP, 0, s>>>(w, rows, cols, row_bytes, x, y, n_tok, x_vec);
            return;
        }
    }
    cu_matvec_k<T, false><<<grid, MV_WARPS * CU_WARP, 0, s>>>(w, rows, cols, row_bytes, x, y, n_tok, x_vec);
}

void cu_matvec(cudaStream_t s, uint32_t type, const void *w, int64_t rows, int64_t cols, size_t row_bytes,
               const float *x, float *y, int n_tok) {
    if (rows <= 0 || cols <= 0 || n_tok <= 0) return;
    const int n_tg = (n_tok + MV_TOK - 1) / MV_TOK;
    const dim3 grid(cu_blocks((rows + MV_ROWS - 1) / MV_ROWS, MV_WARPS), n_tg < 65535 ? n_tg : 65535);
    /* cols is a multiple of 8, so every group of x is 32-byte aligned when x is */
    const int x_vec = cu_aligned(x, 16);
    const bool vec = mv_rows_aligned(type, w, row_bytes);
#define MV_LAUNCH(T) mv_launch<T>(s, grid, vec, (const uint8_t *)w, rows, cols, row_bytes, x, y, n_tok, x_vec)
    CU_DISPATCH(type, MV_LAUNCH)
#undef MV_LAUNCH
}

/* --- dequantization and row gathers ---------------------------------------- */
/* One thread per group of 8 values, grid-stride. */

#define DQ_THREADS 256

__device__ __forceinline__ void cu_store8_f16(__half *o, const float v[8], int vec) {
    __half2 h[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        h[i] = __halves2half2(__float2half_rn(v[2 * i]), __float2half_rn(v[2 * i + 1]));
    if (vec) {
        uint4 u;
        memcpy(&u, h, sizeof u);
        *(uint4 *)o = u;
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            o[2 * i] = __low2half(h[i]);
            o[2 * i + 1] = __high2half(h[i]);
        }
    }
}

template <uint32_t T>
__global__ void __launch_bounds__(DQ_THREADS)
    cu_dequant_f16_k(const uint8_t *__restrict__ w, int64_t r0, int64_t n_rows, int64_t cols,
                     size_t row_bytes, __half *__restrict__ out, int vec) {
    const int64_t gpr = cols / 8, total = n_rows * gpr;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / gpr, g = i - r * gpr;
        float v[8];
        cu_load8<T>(w + (size_t)(r0 + r) * row_bytes, g, v);
        cu_store8_f16(out + (size_t)r * (size_t)cols + 8 * (size_t)g, v, vec);
    }
}

void cu_dequant_f16(cudaStream_t s, uint32_t type, const void *w, int64_t r0, int64_t n_rows, int64_t cols,
                    size_t row_bytes, __half *out) {
    if (n_rows <= 0 || cols <= 0) return;
    const unsigned nb = cu_blocks(n_rows * (cols / 8), DQ_THREADS);
    const int vec = cu_aligned(out, 16);
#define DQ_LAUNCH(T) \
    cu_dequant_f16_k<T><<<nb, DQ_THREADS, 0, s>>>((const uint8_t *)w, r0, n_rows, cols, row_bytes, out, vec)
    CU_DISPATCH(type, DQ_LAUNCH)
#undef DQ_LAUNCH
}

template <uint32_t T>
__global__ void __launch_bounds__(DQ_THREADS)
    cu_get_rows_k(const uint8_t *__restrict__ w, int64_t cols, size_t row_bytes,
                  const int32_t *__restrict__ ids, int n, float *__restrict__ out) {
    const int64_t gpr = cols / 8, total = (int64_t)n * gpr;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i / gpr, g = i - t * gpr;
        float v[8];
        cu_load8<T>(w + (size_t)ids[t] * row_bytes, g, v);
        float *o = out + (size_t)t * (size_t)cols + 8 * (size_t)g;
#pragma unroll
        for (int k = 0; k < 8; k++) o[k] = v[k];
    }
}

void cu_get_rows(cudaStream_t s, uint32_t type, const void *w, int64_t cols, size_t row_bytes,
                 const int32_t *ids, int n, float *out) {
    if (n <= 0 || cols <= 0) return;
    const unsigned nb = cu_blocks((int64_t)n * (cols / 8), DQ_THREADS);
#define GR_LAUNCH(T) \
    cu_get_rows_k<T><<<nb, DQ_THREADS, 0, s>>>((const uint8_t *)w, cols, row_bytes, ids, n, out)
    CU_DISPATCH(type, GR_LAUNCH)
#undef GR_LAUNCH
}

/* --- elementwise ------------------------------------------------------------ */
/* Grid-stride, one value per step. Products and sums that the host code
 * rounds separately use the _rn intrinsics, which nvcc never fuses. */

#define EW_THREADS 256

__global__ void cu_f32_to_f16_k(const float *__restrict__ x, __half *__restrict__ y, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        /* saturate: a value past f16's range becomes +-65504, not inf (then
         * NaN in the GEMM); NaN stays NaN (comparisons with it are false) */
        float v = x[i];
        if (v > 65504.0f)
            v = 65504.0f;
        else if (v < -65504.0f)
            v = -65504.0f;
        y[i] = __float2half_rn(v);
    }
}

void cu_f32_to_f16(cudaStream_t s, const float *x, __half *y, size_t n) {
    if (!n) return;
    cu_f32_to_f16_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(x, y, n);
}

/* out may alias gate (each element reads its inputs before writing). */
__global__ void cu_swiglu_k(float *out, const float *gate, const float *up, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float g = gate[i];
        out[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), up[i]);
    }
}

void cu_swiglu(cudaStream_t s, float *out, const float *gate, const float *up, size_t n) {
    if (!n) return;
    cu_swiglu_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(out, gate, up, n);
}

/* 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) up, left to right as the CPU. */
__global__ void cu_geglu_k(float *out, const float *gate, const float *up, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float z = gate[i];
        const float z3 = __fmul_rn(__fmul_rn(__fmul_rn(0.044715f, z), z), z);
        const float t = tanhf(__fmul_rn(0.7978845608f, __fadd_rn(z, z3)));
        const float g = __fmul_rn(__fmul_rn(0.5f, z), __fadd_rn(1.0f, t));
        out[i] = __fmul_rn(g, up[i]);
    }
}

void cu_geglu(cudaStream_t s, float *out, const float *gate, const float *up, size_t n) {
    if (!n) return;
    cu_geglu_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(out, gate, up, n);
}

__global__ void cu_add_k(float *y, const float *x, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = __fadd_rn(y[i], x[i]);
}

void cu_add(cudaStream_t s, float *y, const float *x, size_t n) {
    if (!n) return;
    cu_add_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(y, x, n);
}

__global__ void cu_scale_k(float *x, float a, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = __fmul_rn(x[i], a);
}

void cu_scale(cudaStream_t s, float *x, float a, size_t n) {
    if (!n) return;
    cu_scale_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(x, a, n);
}

/* --- rmsnorm --------------------------------------------------------------- */
/* One block of RN_THREADS per row (grid-stride over rows). The sum of squares
 * is taken in double as the CPU reference does: thread i sums elements i,
 * i + RN_THREADS, ... in order, each warp reduces by the xor tree, warp 0
 * reduces the warp sums the same way. Then s = 1 / sqrtf(mean + eps) and
 * y = (x * s) * w. */

#define RN_THREADS 256

__global__ void __launch_bounds__(RN_THREADS)
    cu_rmsnorm_k(float *y, const float *x, const float *__restrict__ w, int n, int n_rows, float eps) {
    __shared__ double part[RN_THREADS / CU_WARP];
    __shared__ float s_scale;
    const int lane = threadIdx.x & (CU_WARP - 1), wid = threadIdx.x / CU_WARP;
    for (int r = blockIdx.x; r < n_rows; r += gridDim.x) {
        const float *xr = x + (size_t)r * (size_t)n;
        float *yr = y + (size_t)r * (size_t)n;
        double sum = 0.0;
        for (int i = threadIdx.x; i < n; i += RN_THREADS) {
            const double v = (double)xr[i];
            sum = __dadd_rn(sum, __dmul_rn(v, v));
        }
        sum = cu_warp_sum_d(sum);
        if (lane == 0) part[wid] = sum;
        __syncthreads();
        if (wid == 0) {
            double t = lane < RN_THREADS / CU_WARP ? part[lane] : 0.0;
            t = cu_warp_sum_d(t);
            if (lane == 0) {
                const float mean = (float)__ddiv_rn(t, (double)n);
                s_scale = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
            }
        }
        __syncthreads();
        const float sc = s_scale;
        for (int i = threadIdx.x; i < n; i += RN_THREADS) yr[i] = __fmul_rn(__fmul_rn(xr[i], sc), w[i]);
        __syncthreads(); /* part and s_scale are reused by the next row */
    }
}

void cu_rmsnorm(cudaStream_t s, float *y, const float *x, const float *w, int n, int n_rows, float eps) {
    if (n <= 0 || n_rows <= 0) return;
    const unsigned nb = (unsigned)(n_rows < CU_MAX_BLOCKS ? n_rows : CU_MAX_BLOCKS);
    cu_rmsnorm_k<<<nb, RN_THREADS, 0, s>>>(y, x, w, n, n_rows, eps);
}

/* --- rope ------------------------------------------------------------------ */
/* One block per token (grid-stride); thread i handles pairs i, i + blockDim,
 * ... of every head. theta_i is built as the CPU builds it: (pos * freq_scale)
 * multiplied i times by theta_scale, which the host computes with the same
 * powf call as the CPU backend. cosf/sinf are CUDA's (within 2 ulp of the
 * host's). */

#define RP_THREADS 64

__global__ void __launch_bounds__(RP_THREADS)
    cu_rope_k(float *x, int n_tok, int n_head, int head_dim, int n_rot, int pos0,
              const int *__restrict__ pos_dev, float theta_scale, float freq_scale, int neox,
              const float *__restrict__ ff) {
    const int half = n_rot / 2;
    if (pos_dev) pos0 = *pos_dev;
    for (int t = blockIdx.x; t < n_tok; t += gridDim.x) {
        float *xt = x + (size_t)t * (size_t)n_head * (size_t)head_dim;
        const float theta0 = __fmul_rn((float)(pos0 + t), freq_scale);
        for (int i = threadIdx.x; i < half; i += blockDim.x) {
            float theta = theta0;
            for (int k = 0; k < i; k++) theta = __fmul_rn(theta, theta_scale);
            if (ff) theta = __fdiv_rn(theta, ff[i]);
            const float c = cosf(theta), sn = sinf(theta);
            const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
            for (int h = 0; h < n_head; h++) {
                float *xh = xt + (size_t)h * (size_t)head_dim;
                const float x0 = xh[a], x1 = xh[b];
                xh[a] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, sn));
                xh[b] = __fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, c));
            }
        }
    }
}

void cu_rope(cudaStream_t s, float *x, int n_tok, int n_head, int head_dim, int n_rot, int pos0,
             const int *pos_dev, float base, float freq_scale, int neox, const float *ff) {
    if (n_tok <= 0 || n_head <= 0 || n_rot < 2) return;
    const float theta_scale = powf(base, -2.0f / (float)n_rot);
    const unsigned nb = (unsigned)(n_tok < CU_MAX_BLOCKS ? n_tok : CU_MAX_BLOCKS);
    cu_rope_k<<<nb, RP_THREADS, 0, s>>>(x, n_tok, n_head, head_dim, n_rot, pos0, pos_dev, theta_scale,
                                        freq_scale, neox, ff);
}

/* --- paged KV cache ---------------------------------------------------------- */

/* Element (layer, kv, pos, c) of the cache (kv 0 for K, 1 for V). */
__device__ __forceinline__ uint16_t *cu_kv_at(const cu_kv &kv, int layer, int which, int pos) {
    uint8_t *page = kv.pages[pos / kv.page_tokens] +
                    (size_t)layer * (size_t)kv.page_tokens * (kv.k_row + kv.v_row);
    const size_t row = (size_t)(pos % kv.page_tokens);
    return (uint16_t *)(which ? page + (size_t)kv.page_tokens * kv.k_row + row * kv.v_row
                              : page + row * kv.k_row);
}

__global__ void cu_kv_store_k(cu_kv kv, int layer, const float *__restrict__ k, const float *__restrict__ v,
                              int n_tok, int pos0, const int *__restrict__ pos_dev) {
    if (pos_dev) pos0 = *pos_dev;
    const size_t n = (size_t)n_tok * (size_t)kv.kv_dim;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const int t = (int)(i / (size_t)kv.kv_dim), c = (int)(i % (size_t)kv.kv_dim);
        cu_kv_at(kv, layer, 0, pos0 + t)[c] = __half_as_ushort(__float2half_rn(k[i]));
        cu_kv_at(kv, layer, 1, pos0 + t)[c] = __half_as_ushort(__float2half_rn(v[i]));
    }
}

void cu_kv_store(cudaStream_t s, cu_kv kv, int layer, const float *k, const float *v, int n_tok, int pos0,
                 const int *pos_dev) {
    if (n_tok <= 0 || kv.kv_dim <= 0) return;
    const unsigned nb = cu_blocks((int64_t)n_tok * kv.kv_dim, EW_THREADS);
    cu_kv_store_k<<<nb, EW_THREADS, 0, s>>>(kv, layer, k, v, n_tok, pos0, pos_dev);
}

/* --- attention --------------------------------------------------------------- */
/* One warp per (query token, head) [cu_attention] or per (query token, head,
 * chunk of keys) [cu_attention_split], AT_WARPS per block, grid-stride; no
 * shared memory, warps are independent. Lane l owns the dim pairs 2l + 64k
 * (k < P, P = ceil(head_dim / 64) in {1, 2, 4}, so head_dim <= 256) of q and
 * of the output accumulator. at_keys folds the keys lo..hi, in tiles of 32 in
 * position order from lo:
 *   1. each lane computes its partial q.k (its pairs, in order, fmaf) for all
 *      32 keys of the tile, then a transposing xor tree (16 + 8 + 4 + 2 + 1
 *      shuffles) leaves the full dot of key j on lane j;
 *   2. online softmax: m_new = max(m, tile max), p_j = expf(s_j - m_new),
 *      l = l * expf(m - m_new) + sum p (xor tree), acc *= expf(m - m_new);
 *   3. acc += p_j * v_j for j in tile order (p_j broadcast from lane j).
 * The V rows are loaded 32 / P keys at a time into registers, the first ones
 * before step 1's shuffles, so their latency overlaps the K loads; this moves
 * loads only, not arithmetic. cu_attention: lo = the query's first visible
 * key, hi = its position; out = acc / l. cu_attention_split: the same per
 * chunk of CU_ATT_CHUNK absolute positions, then a merge (below). Both start
 * every range at a position fixed by the query's position, so a query's
 * arithmetic never depends on n_tok. */

#define AT_WARPS 4
#define AT_TILE  32

/* Partial sums a[0..2n) of 2n keys -> a[0..n) over the pairs of lanes o apart:
 * a lane with bit o set keeps the upper half of the keys. */
template <int N> __device__ __forceinline__ void cu_fold(float *a, int lane, int o) {
    const bool up = (lane & o) != 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const float keep = up ? a[i + N] : a[i], send = up ? a[i] : a[i + N];
        a[i] = keep + __shfl_xor_sync(CU_FULL, send, o);
    }
}

/* The running state of one (query, head): max score m, sum l, acc (lane's pairs). */
template <int P> struct at_state {
    float m, l;
    float2 acc[P];
};

/* The V halves of keys j0 + s .. j0 + s + 32/P - 1 (those below j0 + nk) that
 * this lane owns; zeros elsewhere (never used). */
template <int P>
__device__ __forceinline__ void at_load_v(const cu_kv &kv, int layer, size_t hoff, int head_dim, int lane,
                                          int j0, int s, int nk, __half2 (&vv)[AT_TILE / P][P]) {
#pragma unroll
    for (int j = 0; j < AT_TILE / P; j++) {
        const uint16_t *vr = s + j < nk ? cu_kv_at(kv, layer, 1, j0 + s + j) + hoff : NULL;
#pragma unroll
        for (int k = 0; k < P; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            vv[j][k] = vr && d < head_dim ? *(const __half2 *)(vr + d) : __float2half2_rn(0.0f);
        }
    }
}

/* Folds keys lo..hi (inclusive, lo <= hi + 1; all of one kv head at hoff) into st. */
template <int P>
__device__ __forceinline__ void at_keys(const cu_kv &kv, int layer, size_t hoff, int head_dim, float scale,
                                        int lane, const float2 (&qv)[P], int lo, int hi, at_state<P> &st) {
    constexpr int VS = AT_TILE / P; /* keys per V load round: 32 halves per lane */
    for (int j0 = lo; j0 <= hi; j0 += AT_TILE) {
        const int nk = hi - j0 + 1 < AT_TILE ? hi - j0 + 1 : AT_TILE;
        /* 1. scores */
        float a[AT_TILE];
#pragma unroll
        for (int j = 0; j < AT_TILE; j++) {
            float sum = 0.0f;
            if (j < nk) {
                const uint16_t *kr = cu_kv_at(kv, layer, 0, j0 + j) + hoff;
#pragma unroll
                for (int k = 0; k < P; k++) {
                    const int d = 2 * lane + 2 * CU_WARP * k;
                    if (d < head_dim) {
                        const float2 kf = __half22float2(*(const __half2 *)(kr + d));
                        sum = fmaf(qv[k].x, kf.x, sum);
                        sum = fmaf(qv[k].y, kf.y, sum);
                    }
                }
            }
            a[j] = sum;
        }
        __half2 vv[VS][P];
        at_load_v<P>(kv, layer, hoff, head_dim, lane, j0, 0, nk, vv);
        cu_fold<16>(a, lane, 16);
        cu_fold<8>(a, lane, 8);
        cu_fold<4>(a, lane, 4);
        cu_fold<2>(a, lane, 2);
        cu_fold<1>(a, lane, 1);
        const float sc = lane < nk ? a[0] * scale : -INFINITY; /* key j0 + lane */
        /* 2. online softmax */
        const float m_new = fmaxf(st.m, cu_warp_max(sc));
        const float pj = lane < nk ? expf(sc - m_new) : 0.0f;
        const float alpha = expf(st.m - m_new);
        st.l = fmaf(st.l, alpha, cu_warp_sum(pj));
        st.m = m_new;
#pragma unroll
        for (int k = 0; k < P; k++) st.acc[k].x *= alpha, st.acc[k].y *= alpha;
        /* 3. values, in key order */
        for (int s = 0; s < nk; s += VS) { /* warp-uniform */
            if (s > 0) at_load_v<P>(kv, layer, hoff, head_dim, lane, j0, s, nk, vv);
#pragma unroll
            for (int j = 0; j < VS; j++) {
                if (s + j >= nk) break; /* warp-uniform */
                const float pw = __shfl_sync(CU_FULL, pj, s + j);
#pragma unroll
                for (int k = 0; k < P; k++) {
                    const int d = 2 * lane + 2 * CU_WARP * k;
                    if (d < head_dim) {
                        const float2 vf = __half22float2(vv[j][k]);
                        st.acc[k].x = fmaf(pw, vf.x, st.acc[k].x);
                        st.acc[k].y = fmaf(pw, vf.y, st.acc[k].y);
                    }
                }
            }
        }
    }
}

/* The lane's pairs of query t, head h (zeros past head_dim); an empty state. */
template <int P>
__device__ __forceinline__ void at_begin(const float *q, size_t qoff, int head_dim, int lane, float2 (&qv)[P],
                                         at_state<P> &st) {
#pragma unroll
    for (int k = 0; k < P; k++) {
        const int d = 2 * lane + 2 * CU_WARP * k;
        qv[k] = d < head_dim ? make_float2(q[qoff + d], q[qoff + d + 1]) : make_float2(0.0f, 0.0f);
        st.acc[k] = make_float2(0.0f, 0.0f);
    }
    st.m = -INFINITY;
    st.l = 0.0f;
}

/* The first key query position p sees. */
__device__ __forceinline__ int at_first(int p, int window) {
    return window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
}

template <int P>
__global__ void __launch_bounds__(AT_WARPS *CU_WARP)
    cu_attention_k(float *__restrict__ out, const float *__restrict__ q, cu_kv kv, int layer, int n_tok,
                   int pos0, const int *__restrict__ pos_dev, int n_head, int n_kv_head, int head_dim,
                   float scale, int window) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    if (pos_dev) pos0 = *pos_dev;
    const int64_t jobs = (int64_t)n_tok * n_head;
    const int group = n_head / n_kv_head;
    for (int64_t job = (int64_t)blockIdx.x * AT_WARPS + threadIdx.x / CU_WARP; job < jobs;
         job += (int64_t)gridDim.x * AT_WARPS) { /* warp-uniform */
        const int t = (int)(job / n_head), h = (int)(job % n_head);
        const int p = pos0 + t;
        const size_t qoff = ((size_t)t * (size_t)n_head + (size_t)h) * (size_t)head_dim;
        float2 qv[P];
        at_state<P> st;
        at_begin<P>(q, qoff, head_dim, lane, qv, st);
        at_keys<P>(kv, layer, (size_t)(h / group) * (size_t)head_dim, head_dim, scale, lane, qv,
                   at_first(p, window), p, st);
#pragma unroll
        for (int k = 0; k < P; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            if (d < head_dim) {
                out[qoff + d] = st.acc[k].x / st.l;
                out[qoff + d + 1] = st.acc[k].y / st.l;
            }
        }
    }
}

/* Runs LAUNCH(P) for the pairs per lane that head_dim needs (<= 256). */
#define AT_DISPATCH(head_dim, LAUNCH)       \
    do {                                    \
        if ((head_dim) <= 2 * CU_WARP)      \
            LAUNCH(1);                      \
        else if ((head_dim) <= 4 * CU_WARP) \
            LAUNCH(2);                      \
        else                                \
            LAUNCH(4);                      \
    } while (0)

/* head_dim must be even and at most 256; the pages 4-byte aligned. */
void cu_attention(cudaStream_t s, float *out, const float *q, cu_kv kv, int layer, int n_tok, int pos0,
                  const int *pos_dev, int n_head, int n_kv_head, int head_dim, float scale, int window) {
    if (n_tok <= 0 || n_head <= 0 || n_kv_head <= 0 || head_dim <= 0) return;
    if (head_dim > 8 * CU_WARP || head_dim % 2) return; /* outside the contract */
    const unsigned nb = cu_blocks((int64_t)n_tok * n_head, AT_WARPS);
#define AT_LAUNCH(P)                                                                                     \
    cu_attention_k<P><<<nb, AT_WARPS * CU_WARP, 0, s>>>(out, q, kv, layer, n_tok, pos0, pos_dev, n_head, \
                                                        n_kv_head, head_dim, scale, window)
    AT_DISPATCH(head_dim, AT_LAUNCH);
#undef AT_LAUNCH
}

/* --- split-K decode attention --------------------------------------------------- */
/* Pass 1, warp per job (t, h, c), c-major (job = c * n_tok * n_head + t *
 * n_head + h): the jobs with visible keys come first whatever n_chunk is, so a
 * grid of at most AS_MAX_BLOCKS spreads them over the warps and the chunks past
 * every query (the grid covers max_pos) cost a warp a few instructions each. A
 * job folds keys [c*CHUNK, c*CHUNK + CHUNK) ∩ [first visible, p] with at_keys
 * and stores (m, l, acc) at part[(t*n_head + h)*n_chunk + c]; a job with no
 * such key stores nothing. Pass 2, warp per (t, h): the chunks c0 = first
 * visible / CHUNK .. c1 = p / CHUNK, which all hold a visible key (c0 holds the
 * first, c1 holds p, the ones between are inside the range), merged in chunk
 * order: M = max m_c, w_c = expf(m_c - M), l = sum l_c w_c, acc = sum acc_c w_c
 * (fmaf, c ascending), out = acc / l. Every quantity depends on the position,
 * the window and the keys alone. */

#define AS_MAX_BLOCKS 2048

template <int P>
__global__ void __launch_bounds__(AT_WARPS *CU_WARP)
    cu_attention_part_k(float *__restrict__ part, const float *__restrict__ q, cu_kv kv, int layer, int n_tok,
                        int pos0, const int *__restrict__ pos_dev, int n_head, int n_kv_head, int head_dim,
                        float scale, int window, int n_chunk) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    if (pos_dev) pos0 = *pos_dev;
    const int64_t n_th = (int64_t)n_tok * n_head, jobs = n_th * n_chunk;
    const int group = n_head / n_kv_head;
    for (int64_t job = (int64_t)blockIdx.x * AT_WARPS + threadIdx.x / CU_WARP; job < jobs;
         job += (int64_t)gridDim.x * AT_WARPS) { /* warp-uniform */
        const int c = (int)(job / n_th);
        const int64_t th = job % n_th;
        const int t = (int)(th / n_head), h = (int)(th % n_head);
        const int p = pos0 + t, first = at_first(p, window);
        const int c_lo = c * CU_ATT_CHUNK, c_hi = c_lo + CU_ATT_CHUNK - 1;
        const int lo = first > c_lo ? first : c_lo, hi = p < c_hi ? p : c_hi;
        if (lo > hi) continue; /* no visible key in this chunk */
        float2 qv[P];
        at_state<P> st;
        at_begin<P>(q, (size_t)th * (size_t)head_dim, head_dim, lane, qv, st);
        at_keys<P>(kv, layer, (size_t)(h / group) * (size_t)head_dim, head_dim, scale, lane, qv, lo, hi, st);
        /* (head_dim + 2) is even and part 256-aligned: the float2 stores are aligned */
        float *pc = part + ((size_t)th * (size_t)n_chunk + (size_t)c) * (size_t)(head_dim + 2);
        if (lane == 0) *(float2 *)pc = make_float2(st.m, st.l);
#pragma unroll
        for (int k = 0; k < P; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            if (d < head_dim) *(float2 *)(pc + 2 + d) = st.acc[k];
        }
    }
}

template <int P>
__global__ void __launch_bounds__(AT_WARPS *CU_WARP)
    cu_attention_merge_k(float *__restrict__ out, const float *__restrict__ part, int n_tok, int pos0,
                         const int *__restrict__ pos_dev, int n_head, int head_dim, int window, int n_chunk) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    if (pos_dev) pos0 = *pos_dev;
    const int64_t n_th = (int64_t)n_tok * n_head;
    const size_t rec = (size_t)head_dim + 2;
    for (int64_t th = (int64_t)blockIdx.x * AT_WARPS + threadIdx.x / CU_WARP; th < n_th;
         th += (int64_t)gridDim.x * AT_WARPS) { /* warp-uniform */
        const int p = pos0 + (int)(th / n_head);
        const int c0 = at_first(p, window) / CU_ATT_CHUNK, c1 = p / CU_ATT_CHUNK;
        float *o = out + (size_t)th * (size_t)head_dim;
        if (c1 >= n_chunk) { /* outside the contract (max_pos <= p): NaN, not a read past part */
            for (int d = lane; d < head_dim; d += CU_WARP) o[d] = NAN;
            continue;
        }
        const float *base = part + (size_t)th * (size_t)n_chunk * rec;
        float mx = -INFINITY; /* max is exact: the lanes may take the chunks in any order */
        for (int c = c0 + lane; c <= c1; c += CU_WARP) {
            const float2 ml = *(const float2 *)(base + (size_t)c * rec);
            if (ml.y > 0.0f) mx = fmaxf(mx, ml.x);
        }
        mx = cu_warp_max(mx);
        float l = 0.0f;
        float2 acc[P];
#pragma unroll
        for (int k = 0; k < P; k++) acc[k] = make_float2(0.0f, 0.0f);
#pragma unroll 4
        for (int c = c0; c <= c1; c++) {
            const float *pc = base + (size_t)c * rec;
            const float2 ml = *(const float2 *)pc;
            if (!(ml.y > 0.0f)) continue; /* an empty chunk (m = -inf): never expf(-inf - -inf) */
            const float wc = expf(ml.x - mx);
            l = fmaf(ml.y, wc, l);
#pragma unroll
            for (int k = 0; k < P; k++) {
                const int d = 2 * lane + 2 * CU_WARP * k;
                if (d < head_dim) {
                    const float2 a = *(const float2 *)(pc + 2 + d);
                    acc[k].x = fmaf(a.x, wc, acc[k].x);
                    acc[k].y = fmaf(a.y, wc, acc[k].y);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < P; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            if (d < head_dim) {
                o[d] = acc[k].x / l;
                o[d + 1] = acc[k].y / l;
            }
        }
    }
}

static int64_t as_chunks(int max_pos) { return ((int64_t)max_pos + CU_ATT_CHUNK - 1) / CU_ATT_CHUNK; }

size_t cu_attention_split_floats(int n_tok, int n_head, int head_dim, int max_pos) {
    if (n_tok <= 0 || n_head <= 0 || head_dim <= 0 || max_pos <= 0) return 0;
    return (size_t)n_tok * (size_t)n_head * (size_t)as_chunks(max_pos) * ((size_t)head_dim + 2);
}

void cu_attention_split(cudaStream_t s, float *out, const float *q, cu_kv kv, int layer, int n_tok, int pos0,
                        const int *pos_dev, int n_head, int n_kv_head, int head_dim, float scale, int window,
                        int max_pos, float *part) {
    if (n_tok <= 0 || n_head <= 0 || n_kv_head <= 0 || head_dim <= 0 || max_pos <= 0) return;
    if (head_dim > 8 * CU_WARP || head_dim % 2) return; /* outside the contract */
    const int64_t n_chunk = as_chunks(max_pos), n_th = (int64_t)n_tok * n_head;
    unsigned nb = cu_blocks(n_th * n_chunk, AT_WARPS);
    if (nb > AS_MAX_BLOCKS) nb = AS_MAX_BLOCKS;
    const unsigned nm = cu_blocks(n_th, AT_WARPS);
#define AS_LAUNCH(P)                                                                                         \
    do {                                                                                                     \
        cu_attention_part_k<P><<<nb, AT_WARPS * CU_WARP, 0, s>>>(part, q, kv, layer, n_tok, pos0, pos_dev,   \
                                                                 n_head, n_kv_head, head_dim, scale, window, \
                                                                 (int)n_chunk);                              \
        cu_attention_merge_k<P><<<nm, AT_WARPS * CU_WARP, 0, s>>>(out, part, n_tok, pos0, pos_dev, n_head,   \
                                                                  head_dim, window, (int)n_chunk);           \
    } while (0)
    AT_DISPATCH(head_dim, AS_LAUNCH);
#undef AS_LAUNCH
}
