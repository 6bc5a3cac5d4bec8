/* engine/cuda/cuda_kernels.h: launchers of the CUDA kernels the CUDA backend
 * (backend_cuda.cu) calls. Every launcher enqueues work on `stream` and
 * returns at once; errors surface at the backend's next synchronisation.
 * All pointers are device pointers unless a comment says otherwise.
 * Batch invariance: every output value is computed by a fixed sequence of
 * operations that depends only on its own inputs, never on how many tokens,
 * rows or heads are in the call (the prefix cache depends on it).
 * Does not allocate, synchronise, or know about models or sequences. */
#ifndef ENG_CUDA_KERNELS_H
#define ENG_CUDA_KERNELS_H

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* 1 if the kernels below handle ggml type `type` (F32 F16 BF16 Q4_0 Q4_1
 * Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K). */
int cu_type_ok(uint32_t type);

/* Decode matmul: y[t * rows + r] = sum_c W[r][c] * x[t * cols + c] for
 * t < n_tok, r < rows. W is `rows` rows of row_bytes bytes in ggml type
 * `type`, dequantized on the fly (one template over the types). f32 math;
 * a (row, token) result is bit-identical whatever n_tok is. */
void cu_matvec(cudaStream_t s, uint32_t type, const void *w, int64_t rows, int64_t cols, size_t row_bytes,
               const float *x, float *y, int n_tok);

/* Dequantizes rows [r0, r0 + n_rows) of W into out (row-major f16,
 * n_rows x cols), for the cuBLAS prefill GEMM. */
void cu_dequant_f16(cudaStream_t s, uint32_t type, const void *w, int64_t r0, int64_t n_rows, int64_t cols,
                    size_t row_bytes, __half *out);

/* out[t][c] = dequantized W[ids[t]][c] as f32 (ids on the device, in range). */
void cu_get_rows(cudaStream_t s, uint32_t type, const void *w, int64_t cols, size_t row_bytes,
                 const int32_t *ids, int n, float *out);

/* f32 -> f16 (round to nearest even) of n values. */
void cu_f32_to_f16(cudaStream_t s, const float *x, __half *y, size_t n);

/* y = x / sqrt(mean(x^2) + eps) * w per row of n values (y may be x). */
void cu_rmsnorm(cudaStream_t s, float *y, const float *x, const float *w, int n, int n_rows, float eps);

/* pos_dev: where a recorded decode step (a CUDA graph) keeps its position.
 * When non-NULL the kernels below read pos0 from *pos_dev (device memory)
 * instead of the pos0 argument, so one recording serves every position. */

/* RoPE on n_rot dims of each head of each token at position pos0 + t:
 * theta_i = (pos0 + t) * freq_scale * base^(-2i / n_rot); neox = 0 rotates
 * pairs (2i, 2i+1), neox = 1 pairs (i, i + n_rot/2); ff (NULL or n_rot/2 device
 * floats) divides theta_i. */
void cu_rope(cudaStream_t s, float *x, int n_tok, int n_head, int head_dim, int n_rot, int pos0,
             const int *pos_dev, float base, float freq_scale, int neox, const float *ff);

/* The paged KV cache as the kernels see it: pages[i] holds positions
 * i*page_tokens .. i*page_tokens + page_tokens - 1, laid out [layer][K rows]
 * [V rows] with rows of k_row / v_row bytes (engine/backend.h's eng_kv_view). */
typedef struct cu_kv {
    uint8_t *const *pages; /* device array of device page pointers */
    int page_tokens;
    int n_layer;
    int kv_dim;
    size_t k_row, v_row; /* bytes of one position's K row and V row */
} cu_kv;

/* Stores k and v ([n_tok][kv_dim] f32) as f16 (round to nearest even) at
 * positions pos0 .. pos0 + n_tok - 1 of `layer`. */
void cu_kv_store(cudaStream_t s, cu_kv kv, int layer, const float *k, const float *v, int n_tok, int pos0,
                 const int *pos_dev);

/* Causal attention over the paged cache, the Flash Attention way: per (query
 * token, head), keys in tiles in position order with an online softmax; the
 * score matrix is never materialised. out/q are [n_tok][n_head * head_dim];
 * query t sits at position pos0 + t and sees keys j <= pos0 + t (and, when
 * window > 0, pos0 + t - j < window). Head h reads kv head h / (n_head /
 * n_kv_head). head_dim <= 256. */
void cu_attention(cudaStream_t s, float *out, const float *q, cu_kv kv, int layer, int n_tok, int pos0,
                  const int *pos_dev, int n_head, int n_kv_head, int head_dim, float scale, int window);

/* Decode attention, split over the keys (split-K): as cu_attention (same
 * contract and visibility), but each (query t, head h) is cut into chunks of
 * CU_ATT_CHUNK absolute positions. Pass 1, a warp per (t, h, chunk c), folds
 * the keys of chunk c the query sees (online softmax within the chunk) into
 * part[(t * n_head + h) * n_chunk + c] = (m, l, acc[head_dim]); pass 2, a warp
 * per (t, h), merges the query's chunks in order (M = max m_c, l = sum l_c
 * exp(m_c - M), acc likewise, out = acc / l; chunks with no visible key are
 * neither written nor read). The split points are absolute positions, so a
 * query's arithmetic depends only on its position: batch-invariant, but not
 * bit-identical to cu_attention (another summation order).
 * n_chunk = ceil(max_pos / CU_ATT_CHUNK) sizes the grid and part; max_pos
 * must exceed every query position (pos0 + n_tok <= max_pos, also for the
 * positions a recorded graph is replayed at: chunks past a query's position
 * cost a warp a few instructions). A query past it gets NaN, never a read past
 * part. part: device scratch of cu_attention_split_floats(...) floats, 8-byte
 * aligned, not shared with work queued concurrently. pos_dev as above. */
#define CU_ATT_CHUNK 64
void cu_attention_split(cudaStream_t s, float *out, const float *q, cu_kv kv, int layer, int n_tok, int pos0,
                        const int *pos_dev, int n_head, int n_kv_head, int head_dim, float scale, int window,
                        int max_pos, float *part);

/* Floats of part for cu_attention_split (0 for an empty call). */
size_t cu_attention_split_floats(int n_tok, int n_head, int head_dim, int max_pos);

/* out = silu(gate) * up; out = gelu_tanh(gate) * up; y += x; x *= a. */
void cu_swiglu(cudaStream_t s, float *out, const float *gate, const float *up, size_t n);
void cu_geglu(cudaStream_t s, float *out, const float *gate, const float *up, size_t n);
void cu_add(cudaStream_t s, float *y, const float *x, size_t n);
void cu_scale(cudaStream_t s, float *x, float a, size_t n);

#endif
