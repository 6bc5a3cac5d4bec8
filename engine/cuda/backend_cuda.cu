/* engine/cuda/backend_cuda.cu: the CUDA backend: the vtable of engine/backend.h on
 * one GPU. Weights are uploaded once in their quantized form; activations, KV pages
 * and scratch are device memory. Prompt tokens (ENG_PASS_PROMPT) go through
 * cuBLAS: the weight is dequantized to f16 (in row tiles whose size depends only on
 * the weight) and multiplied with the f16 activations padded to a fixed GEMM_N
 * columns, so the GEMM's shape, and with it each token's arithmetic, never depends
 * on how many tokens a call carries. Generated tokens go through the dequantizing
 * matvec kernel; a decode step is recorded once as a CUDA graph and replayed (its
 * position and token read from device memory), one launch instead of ~15 per layer.
 * Everything is queued on one stream; errors of queued work surface at the next
 * to_host. Does not sample, tokenize or manage the prefix tree. */
#include <cublas_v2.h>
#include <initializer_list>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../backend.h"
#include "../quant.h"
}
#include "cuda_kernels.h"

enum {
    GEMM_N = 64,                    /* columns of every prefill GEMM */
    TILE_VALUES = 32 * 1024 * 1024, /* f16 values of one dequantized weight tile */
};

/* A recorded decode step: which calls (key, page table) and their graph. */
typedef struct step_rec {
    uint64_t key;
    const void *ptab;
    cudaGraphExec_t exec; /* NULL: the slot is free */
    uint64_t hash;        /* the op arguments of the recording */
    uint64_t used;
} step_rec;

enum { STEP_RECS = 8 };

typedef struct cuda_backend {
    eng_backend base;
    eng_backend_ops ops;
    char name[32];
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    void **owned; /* weight and vector copies, freed with the backend */
    size_t n_owned, cap_owned;
    __half *wh;    /* a dequantized weight tile */
    size_t wh_cap; /* values */
    __half *xh;    /* GEMM_N activation columns as f16 */
    size_t xh_cap; /* values */
    float *yn;     /* GEMM_N output columns */
    size_t yn_cap; /* values */
    int32_t *ids;
    size_t ids_cap;
    uint8_t **ptab;   /* device copy of the page table */
    size_t ptab_cap;  /* entries */
    void **ptab_host; /* what ptab holds */
    size_t ptab_n;
    char failed[160]; /* a failure in an op without an error path, reported by to_host */
    /* decode-step recording (CUDA graphs; step_begin in backend.h) */
    int graphs;               /* 0: off (CACHET_CUDA_GRAPHS=0, or a recording failed) */
    int mode;                 /* STEP_RUN, STEP_RECORD or STEP_REPLAY */
    step_rec recs[STEP_RECS]; /* recordings, one per key (sequences take turns in serve) */
    int cur;                  /* the recording this step records or replays */
    uint64_t clock;           /* for least-recently-used replacement */
    uint64_t cur_hash;        /* the op arguments of this step so far */
    int *params;              /* device: [0] position, [1] token id of the step */
    int f16_weights;          /* keep f16 copies of weights for prefill (CACHET_CUDA_F16_WEIGHTS=0: no) */
    size_t f16_bytes;         /* held in such copies */
    int rec_bad;              /* the recording lacks scratch: discard it, issue the calls again */
    /* split-K decode attention (cu_attention_split): its grid covers positions
     * < att_max_pos; part is its scratch, sized for att_heads x att_hd heads */
    int att_max_pos;
    int att_heads, att_hd; /* of the last decode attention (0: none yet) */
    float *part;
    size_t part_cap; /* floats */
} cuda_backend;

enum { STEP_RUN = 0, STEP_RECORD = 1, STEP_REPLAY = 2 };

static cuda_backend *cb_of(eng_backend *be) { return (cuda_backend *)be; }

/* Makes cb's device current on the calling thread. The current device is per
 * host thread and starts at 0: without this, a backend on device N > 0 used
 * from another thread (the server's scheduler) would launch onto a stream of
 * another device (an error) and allocate its scratch on device 0. Every entry
 * point that launches, allocates or copies calls it (cudaGetDevice is cheap). */
static void use_device(int device) {
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == device) return;
    if (cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
}

static cuda_backend *cb_use(eng_backend *be) {
    cuda_backend *cb = cb_of(be);
    use_device(cb->device);
    return cb;
}

static int cu_fail(util_err *err, cudaError_t e, const char *what) {
    return util_err_set(err, e == cudaErrorMemoryAllocation ? UTIL_ENOMEM : UTIL_EIO, "cuda: %s: %s", what,
                        cudaGetErrorString(e));
}

/* Grows a device buffer of `elem`-byte values to hold at least `need` values.
 * The old buffer is freed once the work queued on `s` (which may read it) is
 * done. A failed allocation is returned, not left for cudaGetLastError. */
static cudaError_t dev_grow(cudaStream_t s, void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return cudaSuccess;
    size_t n = need + need / 4 + 256;
    void *q = NULL;
    cudaError_t e = cudaMalloc(&q, n * elem);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return e;
    }
    if (*p) {
        cudaStreamSynchronize(s);
        cudaFree(*p);
    }
    *p = q;
    *cap = n;
    return cudaSuccess;
}

/* --- memory --------------------------------------------------------------- */

/* KV pages and scratch come from the device's stream-ordered pool (it keeps
 * freed memory, so a page costs microseconds, not a cudaMalloc); a release is
 * ordered after the queued work that may still read the memory. */
static void *cuda_alloc(eng_backend *be, size_t bytes) {
    void *p = NULL;
    cuda_backend *cb = cb_use(be);
    if (cudaMallocAsync(&p, bytes ? bytes : 1, cb->stream) == cudaSuccess) return p;
    cudaGetLastError(); /* reported as NULL; not a failure of later work */
    return NULL;
}

static void cuda_release(eng_backend *be, void *p) {
    if (!p) return;
    cuda_backend *cb = cb_use(be);
    if (cudaFreeAsync(p, cb->stream) != cudaSuccess) cudaGetLastError();
}

/* --- decode steps: record once, replay as one graph launch ------------------ */

/* Folds an op's arguments into the step's hash (a replay must see the same). */
static void step_mix(cuda_backend *cb, const void *args, size_t n) {
    const unsigned char *b = (const unsigned char *)args;
    for (size_t i = 0; i < n; i++) cb->cur_hash = (cb->cur_hash ^ b[i]) * 0x100000001B3ull;
}

/* In a step: folds the op's arguments into the hash; 1 when the op must not
 * be issued (the recording will be replayed instead). */
static int step_skip(cuda_backend *cb, std::initializer_list<uint64_t> args) {
    if (cb->mode == STEP_RUN) return 0;
    for (uint64_t a : args) step_mix(cb, &a, sizeof a);
    return cb->mode == STEP_REPLAY;
}

static uint64_t U(const void *p) { return (uint64_t)(uintptr_t)p; }
static uint64_t F(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static const int *step_pos(const cuda_backend *cb) { return cb->mode == STEP_RECORD ? cb->params : NULL; }

/* Forgets the recorded step (it names scratch that is about to change). Never
 * while a step records or replays. */
static void drop_recording(cuda_backend *cb) {
    for (int i = 0; i < STEP_RECS; i++)
        if (cb->recs[i].exec) {
            cudaGraphExecDestroy(cb->recs[i].exec);
            cb->recs[i].exec = NULL;
        }
}

/* Grows the split attention's scratch to positions < max_pos (and n_tok
 * queries of the last seen head shape): the grid size and part pointer a
 * recorded step holds change, so the recording is dropped. Allocates and may
 * synchronise: never inside a recording (the callers check). */
static cudaError_t att_grow(cuda_backend *cb, int max_pos, int n_tok) {
    int changed = 0;
    if (max_pos > cb->att_max_pos) {
        cb->att_max_pos = max_pos;
        changed = 1;
    }
    if (cb->att_hd > 0) {
        size_t need = cu_attention_split_floats(n_tok, cb->att_heads, cb->att_hd, cb->att_max_pos);
        if (need > cb->part_cap) {
            cudaError_t e = dev_grow(cb->stream, (void **)&cb->part, &cb->part_cap, need, sizeof(float));
            if (e != cudaSuccess) return e;
            changed = 1;
        }
    }
    if (changed) drop_recording(cb);
    return cudaSuccess;
}

static int cuda_to_dev(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err) {
    /* from pageable memory: returns once src has been staged, so the caller may reuse it */
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cb_use(be)->stream);
    return e == cudaSuccess ? UTIL_OK : cu_fail(err, e, "copy to device");
}

static int cuda_to_host(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err) {
    cuda_backend *cb = cb_use(be);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && !cb->failed[0])
        snprintf(cb->failed, sizeof cb->failed, "kernel launch: %s", cudaGetErrorString(e));
    if (cb->failed[0]) {
        int rc = util_err_set(err, UTIL_EIO, "cuda: %s", cb->failed);
        if (err) cb->failed[0] = '\0'; /* kept for a caller that can report it */
        return rc;
    }
    e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cb->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cb->stream);
    return e == cudaSuccess ? UTIL_OK : cu_fail(err, e, "copy to host");
}

static int cuda_copy(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err) {
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cb_use(be)->stream);
    return e == cudaSuccess ? UTIL_OK : cu_fail(err, e, "device copy");
}

/* Records device memory the backend frees at the end. */
static int own(cuda_backend *cb, void *d) {
    if (cb->n_owned == cb->cap_owned) {
        size_t cap = cb->cap_owned ? cb->cap_owned * 2 : 64;
        void **o = (void **)realloc(cb->owned, cap * sizeof *o);
        if (!o) return -1;
        cb->owned = o;
        cb->cap_owned = cap;
    }
    cb->owned[cb->n_owned++] = d;
    return 0;
}

/* A device copy of host bytes, owned by the backend. */
static int upload_owned(cuda_backend *cb, const void *src, size_t bytes, void **out, const char *what,
                        util_err *err) {
    void *d = NULL;
    use_device(cb->device);
    cudaError_t e = cudaMalloc(&d, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return util_err_set(err, UTIL_ENOMEM, "cuda: no device memory for %s (%zu bytes): %s", what, bytes,
                            cudaGetErrorString(e));
    }
    /* On the backend's stream, not with cudaMemcpy: from pageable memory that
     * returns once src is staged, with the DMA still running on the legacy
     * stream, which the non-blocking stream does not wait for. */
    e = cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, cb->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cb->stream);
    if (e != cudaSuccess) {
        cudaFree(d);
        return cu_fail(err, e, what);
    }
    if (own(cb, d)) {
        cudaFree(d);
        return util_err_set(err, UTIL_ENOMEM, "cuda: out of host memory");
    }
    *out = d;
    return UTIL_OK;
}

/* Keeps an f16 copy of w's rows for the prefill GEMM while device memory
 * allows (such copies at most 40% of it, 1 GiB always left free), so prefill
 * skips dequantizing the weight on every call. An f16 weight is its own copy.
 * The GEMM reads the same row tiles with or without a copy: results do not
 * depend on it. Failing to make one is not an error. */
static void keep_f16(cuda_backend *cb, eng_weight *w) {
    if (w->type == ENG_TYPE_F16) {
        w->dev_f16 = w->dev;
        return;
    }
    size_t bytes = (size_t)w->rows * (size_t)w->cols * sizeof(__half), free_b = 0, total = 0;
    if (!cb->f16_weights || cudaMemGetInfo(&free_b, &total) != cudaSuccess ||
        cb->f16_bytes + bytes > total / 10 * 4 || free_b < bytes + ((size_t)1 << 30)) {
        cudaGetLastError();
        return;
    }
    void *d = NULL;
    if (cudaMalloc(&d, bytes) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    cu_dequant_f16(cb->stream, w->type, w->dev, 0, w->rows, w->cols, w->row_bytes, (__half *)d);
    if (cudaStreamSynchronize(cb->stream) != cudaSuccess || cudaGetLastError() != cudaSuccess || own(cb, d)) {
        cudaFree(d);
        return;
    }
    w->dev_f16 = d;
    cb->f16_bytes += bytes;
}

static int cuda_load(eng_backend *be, eng_weight *w, util_err *err) {
    const eng_type_traits *tr = eng_type_get(w->type);
    if (!cu_type_ok(w->type))
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': type %s has no CUDA kernels", w->name,
                            tr ? tr->name : "unknown");
    if (w->cols % 8) /* the kernels decode groups of 8 (f32/f16/bf16 rows could end mid-group) */
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': %lld columns, not a multiple of 8", w->name,
                            (long long)w->cols);
    cuda_backend *cb = cb_use(be);
    w->dev_f16 = NULL;
    int rc = upload_owned(cb, w->data, (size_t)w->rows * w->row_bytes, &w->dev, w->name, err);
    if (rc == UTIL_OK) keep_f16(cb, w);
    return rc;
}

static int cuda_load_vec(eng_backend *be, const float *v, size_t n, const float **out, util_err *err) {
    void *d = NULL;
    int rc = upload_owned(cb_of(be), v, n * sizeof(float), &d, "norm vector", err);
    if (rc == UTIL_OK) *out = (const float *)d;
    return rc;
}

/* Streaming bandwidth of device memory: a device-to-device copy moves each
 * byte twice (read + write); best of 5 copies of 256 MiB. */
static double cuda_bandwidth(eng_backend *be) {
    cuda_backend *cb = cb_use(be);
    size_t bytes = (size_t)256 << 20;
    void *a = NULL, *b = NULL;
    cudaEvent_t t0, t1;
    double best = 0;
    if (cudaMalloc(&a, bytes) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    if (cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(a);
        return 0;
    }
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    cudaMemsetAsync(a, 1, bytes, cb->stream);
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, cb->stream); /* warm-up */
    for (int i = 0; i < 5; i++) {
        float ms = 0;
        cudaEventRecord(t0, cb->stream);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, cb->stream);
        cudaEventRecord(t1, cb->stream);
        if (cudaEventSynchronize(t1) != cudaSuccess || cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess ||
            ms <= 0)
            continue;
        double bw = 2.0 * (double)bytes / (ms * 1e-3);
        if (bw > best) best = bw;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaStreamSynchronize(cb->stream);
    cudaFree(a);
    cudaFree(b);
    return best;
}

/* --- matmul ----------------------------------------------------------------- */

/* Rows per dequantized tile of w: a function of the weight alone. */
static int64_t tile_rows(const eng_weight *w) {
    int64_t r = TILE_VALUES / w->cols;
    if (r < 1) r = 1;
    return r < w->rows ? r : w->rows;
}

static int gemm_prefill(cuda_backend *cb, const eng_weight *w, const float *x, float *y, int n_tok,
                        util_err *err) {
    int64_t rows = w->rows, cols = w->cols, tr = tile_rows(w);
    size_t n_chunk = ((size_t)n_tok + GEMM_N - 1) / GEMM_N, npad = n_chunk * GEMM_N;
    cudaError_t e;
    if ((!w->dev_f16 && (e = dev_grow(cb->stream, (void **)&cb->wh, &cb->wh_cap, (size_t)(tr * cols) + 128,
                                      sizeof(__half)))) ||
        (e = dev_grow(cb->stream, (void **)&cb->xh, &cb->xh_cap, npad * (size_t)cols, sizeof(__half))) ||
        (e = dev_grow(cb->stream, (void **)&cb->yn, &cb->yn_cap, npad * (size_t)rows, sizeof(float))))
        return cu_fail(err, e, "prefill scratch");
    /* activations as f16, the last chunk padded with zero columns */
    cu_f32_to_f16(cb->stream, x, cb->xh, (size_t)n_tok * (size_t)cols);
    if ((size_t)n_tok < npad)
        cudaMemsetAsync(cb->xh + (size_t)n_tok * (size_t)cols, 0,
                        (npad - (size_t)n_tok) * (size_t)cols * sizeof(__half), cb->stream);
    const float one = 1.0f, zero = 0.0f;
    for (int64_t r0 = 0; r0 < rows; r0 += tr) {
        int64_t nr = rows - r0 < tr ? rows - r0 : tr;
        /* the tile sits at the same address modulo 256 bytes as it would in a
         * kept f16 copy (cudaMalloc bases are 256-aligned), so cuBLAS, whose
         * choice of kernel looks at alignment, computes it the same way */
        const size_t off = (size_t)r0 * (size_t)cols;
        __half *scratch = cb->wh + off % 128;
        const __half *tile = w->dev_f16 ? (const __half *)w->dev_f16 + off : scratch;
        if (!w->dev_f16) cu_dequant_f16(cb->stream, w->type, w->dev, r0, nr, cols, w->row_bytes, scratch);
        for (size_t c = 0; c < n_chunk; c++) {
            /* column-major view: C[r][t] (ldc = rows) = W_tile[r][:] . X[t][:], always
             * nr x GEMM_N x cols: the shape depends on the weight alone */
            cublasStatus_t st = cublasGemmEx(cb->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)nr, GEMM_N, (int)cols,
                                             &one, tile, CUDA_R_16F, (int)cols,
                                             cb->xh + c * GEMM_N * (size_t)cols, CUDA_R_16F, (int)cols, &zero,
                                             cb->yn + c * GEMM_N * (size_t)rows + r0, CUDA_R_32F, (int)rows,
                                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            if (st != CUBLAS_STATUS_SUCCESS)
                return util_err_set(err, UTIL_EIO, "cuda: cublasGemmEx on '%s': status %d", w->name, (int)st);
        }
    }
    e = cudaMemcpyAsync(y, cb->yn, (size_t)n_tok * (size_t)rows * sizeof(float), cudaMemcpyDeviceToDevice,
                        cb->stream);
    return e == cudaSuccess ? UTIL_OK : cu_fail(err, e, "prefill output");
}

static int cuda_matmul(eng_backend *be, const eng_weight *w, const float *x, float *y, int n_tok,
                       eng_pass pass, util_err *err) {
    cuda_backend *cb = cb_use(be);
    if (!w->dev) return util_err_set(err, UTIL_EINTERNAL, "cuda: tensor '%s' was not uploaded", w->name);
    if (n_tok <= 0 || step_skip(cb, {U(w->dev), U(x), U(y), (uint64_t)n_tok, (uint64_t)pass})) return UTIL_OK;
    if (pass == ENG_PASS_PROMPT) return gemm_prefill(cb, w, x, y, n_tok, err);
    cu_matvec(cb->stream, w->type, w->dev, w->rows, w->cols, w->row_bytes, x, y, n_tok);
    return UTIL_OK;
}

static int cuda_get_rows(eng_backend *be, const eng_weight *w, const int32_t *ids, int n, float *out,
                         util_err *err) {
    cuda_backend *cb = cb_use(be);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= w->rows)
            return util_err_set(err, UTIL_ERANGE, "token id %d outside the vocabulary (%lld)", ids[i],
                                (long long)w->rows);
    if (step_skip(cb, {U(w->dev), U(out), (uint64_t)n})) return UTIL_OK;
    if (cb->mode == STEP_RECORD && n == 1) { /* the id comes from the step's parameters */
        cu_get_rows(cb->stream, w->type, w->dev, w->cols, w->row_bytes, cb->params + 1, 1, out);
        return UTIL_OK;
    }
    cudaError_t e = dev_grow(cb->stream, (void **)&cb->ids, &cb->ids_cap, (size_t)n, sizeof(int32_t));
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(cb->ids, ids, (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice, cb->stream);
    if (e != cudaSuccess) return cu_fail(err, e, "token ids");
    cu_get_rows(cb->stream, w->type, w->dev, w->cols, w->row_bytes, cb->ids, n, out);
    return UTIL_OK;
}

/* --- the paged KV cache ------------------------------------------------------- */

/* The device page table for the first n pages of kv, uploaded when it changed
 * (new pages, copy-on-write, another sequence). NULL when out of memory. */
static uint8_t *const *page_table(cuda_backend *cb, const eng_kv_view *kv, int n_pos) {
    size_t n = (size_t)((n_pos + kv->page_tokens - 1) / kv->page_tokens);
    if (n <= cb->ptab_n && memcmp(cb->ptab_host, kv->pages, n * sizeof *kv->pages) == 0) return cb->ptab;
    if (n > cb->ptab_cap) {
        size_t cap = n + n / 2 + 64;
        void **h = (void **)realloc(cb->ptab_host, cap * sizeof *h);
        if (!h) return NULL;
        cb->ptab_host = h;
        size_t dcap = 0;
        void *d = NULL;
        if (dev_grow(cb->stream, &d, &dcap, cap, sizeof *h) != cudaSuccess) return NULL;
        if (cb->ptab) {
            cudaStreamSynchronize(cb->stream); /* queued kernels may still read it */
            cudaFree(cb->ptab);
        }
        cb->ptab = (uint8_t **)d;
        cb->ptab_cap = cap;
        cb->ptab_n = 0;
    }
    memcpy(cb->ptab_host, kv->pages, n * sizeof *kv->pages);
    cb->ptab_n = n;
    if (cudaMemcpyAsync(cb->ptab, cb->ptab_host, n * sizeof *kv->pages, cudaMemcpyHostToDevice, cb->stream) !=
        cudaSuccess) {
        cudaGetLastError();
        cb->ptab_n = 0; /* the device copy is unknown: upload again next time */
        return NULL;
    }
    return cb->ptab;
}

static cu_kv kv_of(uint8_t *const *table, const eng_kv_view *kv) {
    cu_kv k = {table, kv->page_tokens, kv->n_layer, kv->kv_dim, kv->k_row, kv->v_row};
    return k;
}

static void cuda_kv_store(eng_backend *be, const eng_kv_view *kv, int layer, const float *k, const float *v,
                          int n_tok, int pos0) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {U(kv), (uint64_t)layer, U(k), U(v), (uint64_t)n_tok})) return;
    uint8_t *const *t = page_table(cb, kv, pos0 + n_tok);
    if (!t) {
        snprintf(cb->failed, sizeof cb->failed, "cannot upload the KV page table");
        return;
    }
    cu_kv_store(cb->stream, kv_of(t, kv), layer, k, v, n_tok, pos0, step_pos(cb));
}

/* Prompt tokens: cu_attention (a warp walks all keys of a query: enough warps
 * with many queries). Generated tokens (ENG_PASS_DECODE, which also picks the
 * matvec, never the token count): cu_attention_split, whose grid covers
 * positions < att_max_pos (reserve's n_ctx) so that a recorded step stays
 * valid as the context grows. The scratch is sized outside recordings (reserve,
 * step_begin, or here in a plain call); a recording that finds it short is
 * discarded and its calls issued again (rec_bad), and a replay past
 * att_max_pos changes the step's hash ("fits"), so it is run instead. */
static void cuda_attention(eng_backend *be, const eng_attn_args *a) {
    cuda_backend *cb = cb_use(be);
    const int split = a->pass == ENG_PASS_DECODE;
    const int fits = a->pos0 + a->n_tok <= cb->att_max_pos;
    /* before step_skip: a replay must report it too, not skip the op silently */
    if (a->head_dim > 256 || a->head_dim % 2) {
        snprintf(cb->failed, sizeof cb->failed, "attention: head dim %d is not supported (even, <= 256)",
                 a->head_dim);
        return;
    }
    if (step_skip(cb,
                  {U(a->out), U(a->q), U(a->kv), (uint64_t)a->layer, (uint64_t)a->n_tok, (uint64_t)a->n_head,
                   (uint64_t)a->n_kv_head, (uint64_t)a->head_dim, F(a->scale), (uint64_t)a->window,
                   (uint64_t)split, U(cb->part), (uint64_t)cb->att_max_pos, (uint64_t)fits}))
        return;
    if (split) {
        size_t need = cu_attention_split_floats(a->n_tok, a->n_head, a->head_dim,
                                                fits ? cb->att_max_pos : a->pos0 + a->n_tok);
        if (!fits || need > cb->part_cap) {
            if (cb->mode == STEP_RECORD) { /* no allocation inside a recording */
                cb->rec_bad = 1;
                return;
            }
            cb->att_heads = a->n_head;
            cb->att_hd = a->head_dim;
            /* past att_max_pos (no reserve): double it, so that decoding regrows rarely */
            int mp = fits ? cb->att_max_pos : a->pos0 + a->n_tok;
            if (!fits && cb->att_max_pos > mp / 2) mp = cb->att_max_pos * 2;
            cudaError_t e = att_grow(cb, mp, a->n_tok);
            if (e != cudaSuccess) {
                snprintf(cb->failed, sizeof cb->failed, "attention scratch: %s", cudaGetErrorString(e));
                return;
            }
        }
        cb->att_heads = a->n_head;
        cb->att_hd = a->head_dim;
    }
    uint8_t *const *t = page_table(cb, a->kv, a->pos0 + a->n_tok);
    if (!t) {
        snprintf(cb->failed, sizeof cb->failed, "cannot upload the KV page table");
        return;
    }
    if (split)
        cu_attention_split(cb->stream, a->out, a->q, kv_of(t, a->kv), a->layer, a->n_tok, a->pos0,
                           step_pos(cb), a->n_head, a->n_kv_head, a->head_dim, a->scale, a->window,
                           cb->att_max_pos, cb->part);
    else
        cu_attention(cb->stream, a->out, a->q, kv_of(t, a->kv), a->layer, a->n_tok, a->pos0, step_pos(cb),
                     a->n_head, a->n_kv_head, a->head_dim, a->scale, a->window);
}

/* --- elementwise ops ----------------------------------------------------------- */

static void cuda_rmsnorm(eng_backend *be, float *y, const float *x, const float *w, int n, int n_rows,
                         float eps) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {U(y), U(x), U(w), (uint64_t)n, (uint64_t)n_rows, F(eps)})) return;
    cu_rmsnorm(cb->stream, y, x, w, n, n_rows, eps);
}

static void cuda_rope(eng_backend *be, const eng_rope_args *a) {
    cuda_backend *cb = cb_use(be);
    const int neox = a->mode == ENG_ROPE_NEOX;
    if (step_skip(cb, {U(a->x), (uint64_t)a->n_tok, (uint64_t)a->n_head, (uint64_t)a->head_dim,
                       (uint64_t)a->n_rot, F(a->base), F(a->freq_scale), (uint64_t)neox, U(a->freq_factors)}))
        return;
    cu_rope(cb->stream, a->x, a->n_tok, a->n_head, a->head_dim, a->n_rot, a->pos0, step_pos(cb), a->base,
            a->freq_scale, neox, a->freq_factors);
}

static void cuda_swiglu(eng_backend *be, float *out, const float *gate, const float *up, size_t n) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {1, U(out), U(gate), U(up), (uint64_t)n})) return;
    cu_swiglu(cb->stream, out, gate, up, n);
}

static void cuda_geglu(eng_backend *be, float *out, const float *gate, const float *up, size_t n) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {2, U(out), U(gate), U(up), (uint64_t)n})) return;
    cu_geglu(cb->stream, out, gate, up, n);
}

static void cuda_add(eng_backend *be, float *y, const float *x, size_t n) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {3, U(y), U(x), (uint64_t)n})) return;
    cu_add(cb->stream, y, x, n);
}

static void cuda_scale(eng_backend *be, float *x, float s, size_t n) {
    cuda_backend *cb = cb_use(be);
    if (step_skip(cb, {4, U(x), F(s), (uint64_t)n})) return;
    cu_scale(cb->stream, x, s, n);
}

/* --- decode steps ------------------------------------------------------------------ */

static int cuda_step_begin(eng_backend *be, uint64_t key, const eng_kv_view *kv, int32_t id, int pos0,
                           util_err *err) {
    cuda_backend *cb = cb_use(be);
    cb->mode = STEP_RUN;
    if (!cb->graphs) return 0;
    if (!cb->params) {
        if (cudaMalloc(&cb->params, 2 * sizeof(int)) != cudaSuccess) {
            cudaGetLastError();
            cb->params = NULL;
            cb->graphs = 0;
            return 0;
        }
    }
    /* outside any recording: the step's position and token, and its page table */
    const int hp[2] = {pos0, id};
    cudaError_t e = cudaMemcpyAsync(cb->params, hp, sizeof hp, cudaMemcpyHostToDevice, cb->stream);
    if (e != cudaSuccess) return cu_fail(err, e, "decode step parameters");
    /* the split attention's grid must cover this position (a recording is
     * replayed at later ones); growing drops the recording */
    if (pos0 + 1 > cb->att_max_pos) {
        int mp = cb->att_max_pos > (pos0 + 1) / 2 ? cb->att_max_pos * 2 : pos0 + 1;
        if ((e = att_grow(cb, mp, 1)) != cudaSuccess) return cu_fail(err, e, "attention scratch");
    }
    cb->rec_bad = 0;
    uint8_t *const *t = page_table(cb, kv, pos0 + 1);
    if (!t) return util_err_set(err, UTIL_EIO, "cuda: cannot upload the KV page table");
    cb->cur_hash = 0xcbf29ce484222325ull;
    int slot = 0;
    for (int i = 0; i < STEP_RECS; i++) {
        step_rec *r = &cb->recs[i];
        if (r->exec && r->key == key && r->ptab == (const void *)t) {
            r->used = ++cb->clock;
            cb->cur = i;
            cb->mode = STEP_REPLAY;
            return 1;
        }
        if (!r->exec || (cb->recs[slot].exec && r->used < cb->recs[slot].used)) slot = i;
    }
    step_rec *r = &cb->recs[slot]; /* a free slot, else the least recently used */
    if (r->exec) {
        cudaGraphExecDestroy(r->exec);
        r->exec = NULL;
    }
    if (cudaStreamBeginCapture(cb->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        cb->graphs = 0;
        return 0;
    }
    cb->mode = STEP_RECORD;
    cb->cur = slot;
    r->key = key;
    r->ptab = t;
    r->used = ++cb->clock;
    return 0;
}

static int cuda_step_end(eng_backend *be, int abort, util_err *err) {
    cuda_backend *cb = cb_use(be);
    int mode = cb->mode;
    step_rec *r = &cb->recs[cb->cur];
    cb->mode = STEP_RUN;
    if (mode == STEP_RUN || (abort && mode == STEP_REPLAY)) return 0;
    if (mode == STEP_RECORD) {
        cudaGraph_t g = NULL;
        cudaError_t e = cudaStreamEndCapture(cb->stream, &g);
        if (e == cudaSuccess && g && !abort && !cb->rec_bad) e = cudaGraphInstantiate(&r->exec, g, 0ull);
        if (g) cudaGraphDestroy(g);
        if (e != cudaSuccess && (abort || cb->rec_bad))
            cudaGetLastError(); /* not a failure of later work for to_host to report */
        if (abort) return 0;
        if (cb->rec_bad) { /* scratch was short: the calls run again and size it; the next step records */
            cb->rec_bad = 0;
            return 1;
        }
        if (e != cudaSuccess || !r->exec) {
            /* some op could not be recorded: graphs off, the calls issued again */
            cudaGetLastError();
            if (r->exec) cudaGraphExecDestroy(r->exec);
            r->exec = NULL;
            cb->graphs = 0;
            return 1;
        }
        r->hash = cb->cur_hash;
    } else if (cb->cur_hash != r->hash) {
        /* the calls differ from the recording (a key collision): run them, record anew */
        cudaGraphExecDestroy(r->exec);
        r->exec = NULL;
        return 1;
    }
    cudaError_t e = cudaGraphLaunch(r->exec, cb->stream);
    return e == cudaSuccess ? 0 : cu_fail(err, e, "graph launch");
}

/* --- lifecycle ------------------------------------------------------------------- */

static int cuda_n_threads(const eng_backend *be) { return 1; }

/* n_ctx bounds the positions of decode attention: its grid and scratch are
 * sized here (the scratch once a decode attention has shown the head shape,
 * else at that first call), never during a recorded step. */
static int cuda_reserve(eng_backend *be, int n_ctx, util_err *err) {
    cuda_backend *cb = cb_use(be);
    if (cb->mode != STEP_RUN || n_ctx <= cb->att_max_pos) return UTIL_OK;
    cudaError_t e = att_grow(cb, n_ctx, 1);
    return e == cudaSuccess ? UTIL_OK : cu_fail(err, e, "attention scratch");
}

static void cuda_destroy(eng_backend *be) {
    cuda_backend *cb = cb_use(be);
    if (cb->stream) cudaStreamSynchronize(cb->stream);
    for (size_t i = 0; i < cb->n_owned; i++) cudaFree(cb->owned[i]);
    free(cb->owned);
    drop_recording(cb);
    void *bufs[] = {cb->wh, cb->xh, cb->yn, cb->ids, cb->ptab, cb->params, cb->part};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) cudaFree(bufs[i]);
    free(cb->ptab_host);
    if (cb->blas) cublasDestroy(cb->blas);
    if (cb->stream) cudaStreamDestroy(cb->stream);
    free(cb);
}

static eng_backend_ops cuda_ops_template(void) {
    eng_backend_ops o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.destroy = cuda_destroy;
    o.n_threads = cuda_n_threads;
    o.n_batch = 512;
    o.alloc = cuda_alloc;
    o.release = cuda_release;
    o.to_dev = cuda_to_dev;
    o.to_host = cuda_to_host;
    o.copy = cuda_copy;
    o.load = cuda_load;
    o.load_vec = cuda_load_vec;
    o.bandwidth = cuda_bandwidth;
    o.reserve = cuda_reserve;
    o.matmul = cuda_matmul;
    o.get_rows = cuda_get_rows;
    o.rmsnorm = cuda_rmsnorm;
    o.rope = cuda_rope;
    o.kv_store = cuda_kv_store;
    o.attention = cuda_attention;
    o.swiglu = cuda_swiglu;
    o.geglu = cuda_geglu;
    o.add = cuda_add;
    o.scale = cuda_scale;
    o.step_begin = cuda_step_begin;
    o.step_end = cuda_step_end;
    return o;
}

extern "C" int eng_backend_cuda_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device/driver" state */
        return 0;
    }
    return n;
}

extern "C" int eng_backend_cuda_new(eng_backend **out, int device, util_err *err) {
    *out = NULL;
    int n = eng_backend_cuda_count();
    if (n == 0) return util_err_set(err, UTIL_EUNSUPPORTED, "cuda: no CUDA device is available");
    if (device < 0 || device >= n)
        return util_err_set(err, UTIL_EINVAL, "cuda: device %d does not exist (%d available)", device, n);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return cu_fail(err, e, "select device");
    { /* the pool keeps what is freed (KV pages come and go with the prefix cache) */
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();
    }
    cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
        return cu_fail(err, e, "device properties");
    cuda_backend *cb = (cuda_backend *)calloc(1, sizeof *cb);
    if (!cb) return util_err_set(err, UTIL_ENOMEM, "cuda: out of host memory");
    cb->device = device;
    cb->ops = cuda_ops_template();
    /* the name enters the prefix-cache fingerprint: KV written by another GPU
     * generation (different kernels' rounding) is never mixed in */
    snprintf(cb->name, sizeof cb->name, "cuda-sm%d%d", prop.major, prop.minor);
    cb->ops.name = cb->name;
    cb->base.ops = &cb->ops;
    const char *g = getenv("CACHET_CUDA_GRAPHS");
    cb->graphs = !(g && strcmp(g, "0") == 0);
    g = getenv("CACHET_CUDA_F16_WEIGHTS");
    cb->f16_weights = !(g && strcmp(g, "0") == 0);
    if ((e = cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        cuda_destroy(&cb->base);
        return cu_fail(err, e, "create stream");
    }
    if (cublasCreate(&cb->blas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream(cb->blas, cb->stream) != CUBLAS_STATUS_SUCCESS ||
        /* no split-K reductions with atomics: results stay deterministic */
        cublasSetAtomicsMode(cb->blas, CUBLAS_ATOMICS_NOT_ALLOWED) != CUBLAS_STATUS_SUCCESS) {
        cuda_destroy(&cb->base);
        return util_err_set(err, UTIL_EIO, "cuda: cannot start cuBLAS");
    }
    *out = &cb->base;
    return UTIL_OK;
}
