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

#define CU_WARP 32
#define CU_FULL 0xFFFFFFFFu
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
template <uint32_t T>
__device__ __forceinline__ void cu_load8(const uint8_t *row, int64_t g, float v[8]) {
    if constexpr (T == ENG_TYPE_F32) cuq_load8_f32(row, g, v);
    else if constexpr (T == ENG_TYPE_F16) cuq_load8_f16(row, g, v);
    else if constexpr (T == ENG_TYPE_BF16) cuq_load8_bf16(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_0) cuq_load8_q4_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_1) cuq_load8_q4_1(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_0) cuq_load8_q5_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_1) cuq_load8_q5_1(row, g, v);
    else if constexpr (T == ENG_TYPE_Q8_0) cuq_load8_q8_0(row, g, v);
    else if constexpr (T == ENG_TYPE_Q4_K) cuq_load8_q4_k(row, g, v);
    else if constexpr (T == ENG_TYPE_Q5_K) cuq_load8_q5_k(row, g, v);
    else if constexpr (T == ENG_TYPE_Q6_K) cuq_load8_q6_k(row, g, v);
    else static_assert(T == ENG_TYPE_F32, "no decoder for this type");
}

/* Runs LAUNCH(T) for the runtime type id; unsupported ids launch nothing. */
#define CU_DISPATCH(type, LAUNCH)                                                                  \
    switch (type) {                                                                                \
    case ENG_TYPE_F32: LAUNCH(ENG_TYPE_F32); break;                                                \
    case ENG_TYPE_F16: LAUNCH(ENG_TYPE_F16); break;                                                \
    case ENG_TYPE_BF16: LAUNCH(ENG_TYPE_BF16); break;                                              \
    case ENG_TYPE_Q4_0: LAUNCH(ENG_TYPE_Q4_0); break;                                              \
    case ENG_TYPE_Q4_1: LAUNCH(ENG_TYPE_Q4_1); break;                                              \
    case ENG_TYPE_Q5_0: LAUNCH(ENG_TYPE_Q5_0); break;                                              \
    case ENG_TYPE_Q5_1: LAUNCH(ENG_TYPE_Q5_1); break;                                              \
    case ENG_TYPE_Q8_0: LAUNCH(ENG_TYPE_Q8_0); break;                                              \
    case ENG_TYPE_Q4_K: LAUNCH(ENG_TYPE_Q4_K); break;                                              \
    case ENG_TYPE_Q5_K: LAUNCH(ENG_TYPE_Q5_K); break;                                              \
    case ENG_TYPE_Q6_K: LAUNCH(ENG_TYPE_Q6_K); break;                                              \
    default: break;                                                                                \
    }

int cu_type_ok(uint32_t type) { return cuq_type_ok(type); }

/* --- matvec ---------------------------------------------------------------- */
/* One warp per weight row, MV_WARPS rows per block; blockIdx.y walks groups
 * of up to MV_TOK tokens. Lane l takes the groups of 8 values g = l, l + 32,
 * ..., decodes them once and adds w[i] * x[t][i] (i = 0..7 in order, fmaf)
 * into one accumulator per token; then the xor tree; lane 0 writes. A token's
 * arithmetic is the same in every token group, so results do not depend on
 * n_tok. */

#define MV_WARPS 8
#define MV_TOK 8

template <uint32_t T>
__global__ void __launch_bounds__(MV_WARPS *CU_WARP)
    cu_matvec_k(const uint8_t *__restrict__ w, int64_t rows, int64_t cols, size_t row_bytes,
                const float *__restrict__ x, float *__restrict__ y, int n_tok, int x_vec) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    const int64_t n_grp = cols / 8;
    const int n_tg = (n_tok + MV_TOK - 1) / MV_TOK;
    const int64_t warp0 = (int64_t)blockIdx.x * MV_WARPS + threadIdx.x / CU_WARP;
    const int64_t wstride = (int64_t)gridDim.x * MV_WARPS;
    for (int tg = blockIdx.y; tg < n_tg; tg += gridDim.y) {
        const int t0 = tg * MV_TOK;
        const int nt = n_tok - t0 < MV_TOK ? n_tok - t0 : MV_TOK;
        const float *xt = x + (size_t)t0 * (size_t)cols;
        for (int64_t r = warp0; r < rows; r += wstride) { /* warp-uniform */
            const uint8_t *row = w + (size_t)r * row_bytes;
            float acc[MV_TOK];
#pragma unroll
            for (int j = 0; j < MV_TOK; j++) acc[j] = 0.0f;
            for (int64_t g = lane; g < n_grp; g += CU_WARP) {
                float wv[8];
                cu_load8<T>(row, g, wv);
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
                    for (int i = 0; i < 8; i++) acc[j] = fmaf(wv[i], xv[i], acc[j]);
                }
            }
#pragma unroll
            for (int j = 0; j < MV_TOK; j++) acc[j] = cu_warp_sum(acc[j]);
            if (lane == 0)
                for (int j = 0; j < nt; j++) y[(size_t)(t0 + j) * (size_t)rows + (size_t)r] = acc[j];
        }
    }
}

void cu_matvec(cudaStream_t s, uint32_t type, const void *w, int64_t rows, int64_t cols,
               size_t row_bytes, const float *x, float *y, int n_tok) {
    if (rows <= 0 || cols <= 0 || n_tok <= 0) return;
    const int n_tg = (n_tok + MV_TOK - 1) / MV_TOK;
    const dim3 grid(cu_blocks(rows, MV_WARPS), n_tg < 65535 ? n_tg : 65535);
    /* cols is a multiple of 8, so every group of x is 32-byte aligned when x is */
    const int x_vec = cu_aligned(x, 16);
#define MV_LAUNCH(T)                                                                               \
    cu_matvec_k<T><<<grid, MV_WARPS * CU_WARP, 0, s>>>((const uint8_t *)w, rows, cols, row_bytes, \
                                                        x, y, n_tok, x_vec)
    CU_DISPATCH(type, MV_LAUNCH)
#undef MV_LAUNCH
}

/* --- dequantization and row gathers ---------------------------------------- */
/* One thread per group of 8 values, grid-stride. */

#define DQ_THREADS 256

__device__ __forceinline__ void cu_store8_f16(__half *o, const float v[8], int vec) {
    __half2 h[4];
#pragma unroll
    for (int i = 0; i < 4; i++) h[i] = __halves2half2(__float2half_rn(v[2 * i]), __float2half_rn(v[2 * i + 1]));
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

void cu_dequant_f16(cudaStream_t s, uint32_t type, const void *w, int64_t r0, int64_t n_rows,
                    int64_t cols, size_t row_bytes, __half *out) {
    if (n_rows <= 0 || cols <= 0) return;
    const unsigned nb = cu_blocks(n_rows * (cols / 8), DQ_THREADS);
    const int vec = cu_aligned(out, 16);
#define DQ_LAUNCH(T)                                                                               \
    cu_dequant_f16_k<T><<<nb, DQ_THREADS, 0, s>>>((const uint8_t *)w, r0, n_rows, cols, row_bytes, \
                                                   out, vec)
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
#define GR_LAUNCH(T)                                                                               \
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
         i += (size_t)gridDim.x * blockDim.x)
    {
        /* saturate: a value past f16's range becomes +-65504, not inf (then
         * NaN in the GEMM); NaN stays NaN (comparisons with it are false) */
        float v = x[i];
        if (v > 65504.0f) v = 65504.0f;
        else if (v < -65504.0f) v = -65504.0f;
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
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = __fadd_rn(y[i], x[i]);
}

void cu_add(cudaStream_t s, float *y, const float *x, size_t n) {
    if (!n) return;
    cu_add_k<<<cu_blocks((int64_t)n, EW_THREADS), EW_THREADS, 0, s>>>(y, x, n);
}

__global__ void cu_scale_k(float *x, float a, size_t n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
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
    cu_rmsnorm_k(float *y, const float *x, const float *__restrict__ w, int n, int n_rows,
                 float eps) {
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

void cu_rmsnorm(cudaStream_t s, float *y, const float *x, const float *w, int n, int n_rows,
                float eps) {
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
              const int *__restrict__ pos_dev, float theta_scale, float freq_scale, int neox) {
    const int half = n_rot / 2;
    if (pos_dev) pos0 = *pos_dev;
    for (int t = blockIdx.x; t < n_tok; t += gridDim.x) {
        float *xt = x + (size_t)t * (size_t)n_head * (size_t)head_dim;
        const float theta0 = __fmul_rn((float)(pos0 + t), freq_scale);
        for (int i = threadIdx.x; i < half; i += blockDim.x) {
            float theta = theta0;
            for (int k = 0; k < i; k++) theta = __fmul_rn(theta, theta_scale);
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
             const int *pos_dev, float base, float freq_scale, int neox) {
    if (n_tok <= 0 || n_head <= 0 || n_rot < 2) return;
    const float theta_scale = powf(base, -2.0f / (float)n_rot);
    const unsigned nb = (unsigned)(n_tok < CU_MAX_BLOCKS ? n_tok : CU_MAX_BLOCKS);
    cu_rope_k<<<nb, RP_THREADS, 0, s>>>(x, n_tok, n_head, head_dim, n_rot, pos0, pos_dev,
                                        theta_scale, freq_scale, neox);
}

/* --- paged KV cache ---------------------------------------------------------- */

/* Element (layer, kv, pos, c) of the cache (kv 0 for K, 1 for V). */
__device__ __forceinline__ uint16_t *cu_kv_at(const cu_kv &kv, int layer, int which, int pos) {
    uint16_t *page = kv.pages[pos / kv.page_tokens];
    return page + ((size_t)(layer * 2 + which) * (size_t)kv.page_tokens +
                   (size_t)(pos % kv.page_tokens)) *
                      (size_t)kv.kv_dim;
}

__global__ void cu_kv_store_k(cu_kv kv, int layer, const float *__restrict__ k,
                              const float *__restrict__ v, int n_tok, int pos0,
                              const int *__restrict__ pos_dev) {
    if (pos_dev) pos0 = *pos_dev;
    const size_t n = (size_t)n_tok * (size_t)kv.kv_dim;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const int t = (int)(i / (size_t)kv.kv_dim), c = (int)(i % (size_t)kv.kv_dim);
        cu_kv_at(kv, layer, 0, pos0 + t)[c] = __half_as_ushort(__float2half_rn(k[i]));
        cu_kv_at(kv, layer, 1, pos0 + t)[c] = __half_as_ushort(__float2half_rn(v[i]));
    }
}

void cu_kv_store(cudaStream_t s, cu_kv kv, int layer, const float *k, const float *v, int n_tok,
                 int pos0, const int *pos_dev) {
    if (n_tok <= 0 || kv.kv_dim <= 0) return;
    const unsigned nb = cu_blocks((int64_t)n_tok * kv.kv_dim, EW_THREADS);
    cu_kv_store_k<<<nb, EW_THREADS, 0, s>>>(kv, layer, k, v, n_tok, pos0, pos_dev);
}

/* --- attention --------------------------------------------------------------- */
/* One warp per (query token, head), AT_WARPS per block, grid-stride; no
 * shared memory, warps are independent. Lane l owns the dim pairs 2l + 64k
 * (k < 4, so head_dim <= 256) of q and of the output accumulator. Keys come
 * in tiles of 32 in position order from the first visible one:
 *   1. each lane computes its partial q.k (its pairs, in order, fmaf) for all
 *      32 keys of the tile, then a transposing xor tree (16 + 8 + 4 + 2 + 1
 *      shuffles) leaves the full dot of key j on lane j;
 *   2. online softmax: m_new = max(m, tile max), p_j = expf(s_j - m_new),
 *      l = l * expf(m - m_new) + sum p (xor tree), acc *= expf(m - m_new);
 *   3. acc += p_j * v_j for j in tile order (p_j broadcast from lane j).
 * out = acc / l. The tiles start at the query's first visible key, so a
 * query's arithmetic depends only on its position, never on n_tok. */

#define AT_WARPS 4
#define AT_TILE 32
#define AT_PAIRS 4 /* pairs per lane: 4 * 2 * 32 = 256 dims */

/* Partial sums a[0..2n) of 2n keys -> a[0..n) over the pairs of lanes o apart:
 * a lane with bit o set keeps the upper half of the keys. */
template <int N>
__device__ __forceinline__ void cu_fold(float *a, int lane, int o) {
    const bool up = (lane & o) != 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const float keep = up ? a[i + N] : a[i], send = up ? a[i] : a[i + N];
        a[i] = keep + __shfl_xor_sync(CU_FULL, send, o);
    }
}

__global__ void __launch_bounds__(AT_WARPS *CU_WARP)
    cu_attention_k(float *__restrict__ out, const float *__restrict__ q, cu_kv kv, int layer,
                   int n_tok, int pos0, const int *__restrict__ pos_dev, int n_head,
                   int n_kv_head, int head_dim, float scale, int window) {
    const int lane = threadIdx.x & (CU_WARP - 1);
    if (pos_dev) pos0 = *pos_dev;
    const int64_t jobs = (int64_t)n_tok * n_head;
    const int group = n_head / n_kv_head;
    for (int64_t job = (int64_t)blockIdx.x * AT_WARPS + threadIdx.x / CU_WARP; job < jobs;
         job += (int64_t)gridDim.x * AT_WARPS) { /* warp-uniform */
        const int t = (int)(job / n_head), h = (int)(job % n_head);
        const int p = pos0 + t, kvh = h / group;
        const int lo = window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
        const size_t qoff = ((size_t)t * (size_t)n_head + (size_t)h) * (size_t)head_dim;
        const size_t hoff = (size_t)kvh * (size_t)head_dim;

        float2 qv[AT_PAIRS], acc[AT_PAIRS];
#pragma unroll
        for (int k = 0; k < AT_PAIRS; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            qv[k] = d < head_dim ? make_float2(q[qoff + d], q[qoff + d + 1]) : make_float2(0.0f, 0.0f);
            acc[k] = make_float2(0.0f, 0.0f);
        }
        float m = -INFINITY, l = 0.0f;

        for (int j0 = lo; j0 <= p; j0 += AT_TILE) {
            const int nk = p - j0 + 1 < AT_TILE ? p - j0 + 1 : AT_TILE;
            /* 1. scores */
            float a[AT_TILE];
#pragma unroll
            for (int j = 0; j < AT_TILE; j++) {
                float sum = 0.0f;
                if (j < nk) {
                    const uint16_t *kr = cu_kv_at(kv, layer, 0, j0 + j) + hoff;
#pragma unroll
                    for (int k = 0; k < AT_PAIRS; k++) {
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
            cu_fold<16>(a, lane, 16);
            cu_fold<8>(a, lane, 8);
            cu_fold<4>(a, lane, 4);
            cu_fold<2>(a, lane, 2);
            cu_fold<1>(a, lane, 1);
            const float sc = lane < nk ? a[0] * scale : -INFINITY; /* key j0 + lane */
            /* 2. online softmax */
            const float m_new = fmaxf(m, cu_warp_max(sc));
            const float pj = lane < nk ? expf(sc - m_new) : 0.0f;
            const float alpha = expf(m - m_new);
            l = fmaf(l, alpha, cu_warp_sum(pj));
            m = m_new;
#pragma unroll
            for (int k = 0; k < AT_PAIRS; k++) acc[k].x *= alpha, acc[k].y *= alpha;
            /* 3. values */
            for (int j = 0; j < nk; j++) {
                const float pw = __shfl_sync(CU_FULL, pj, j);
                const uint16_t *vr = cu_kv_at(kv, layer, 1, j0 + j) + hoff;
#pragma unroll
                for (int k = 0; k < AT_PAIRS; k++) {
                    const int d = 2 * lane + 2 * CU_WARP * k;
                    if (d < head_dim) {
                        const float2 vf = __half22float2(*(const __half2 *)(vr + d));
                        acc[k].x = fmaf(pw, vf.x, acc[k].x);
                        acc[k].y = fmaf(pw, vf.y, acc[k].y);
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < AT_PAIRS; k++) {
            const int d = 2 * lane + 2 * CU_WARP * k;
            if (d < head_dim) {
                out[qoff + d] = acc[k].x / l;
                out[qoff + d + 1] = acc[k].y / l;
            }
        }
    }
}

/* head_dim must be even and at most 256; the pages 4-byte aligned. */
void cu_attention(cudaStream_t s, float *out, const float *q, cu_kv kv, int layer, int n_tok,
                  int pos0, const int *pos_dev, int n_head, int n_kv_head, int head_dim, float scale,
                  int window) {
    if (n_tok <= 0 || n_head <= 0 || n_kv_head <= 0 || head_dim <= 0) return;
    if (head_dim > 2 * CU_WARP * AT_PAIRS || head_dim % 2) return; /* outside the contract */
    const unsigned nb = cu_blocks((int64_t)n_tok * n_head, AT_WARPS);
    cu_attention_k<<<nb, AT_WARPS * CU_WARP, 0, s>>>(out, q, kv, layer, n_tok, pos0, pos_dev,
                                                     n_head, n_kv_head, head_dim, scale, window);
}
