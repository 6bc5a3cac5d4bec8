/* engine/cpu/backend_cpu.c: the CPU backend: matmul over the quant kernels of one SIMD
 * level (scalar, AVX2 or AVX-512, chosen at creation), attention (in chunks of positions
 * merged in order, several sequences per call), norms, RoPE and activations on a thread
 * pool, in chunks of rows or (token, head) jobs. Every output
 * is computed by one fixed kernel in a fixed order: results do not depend on thread
 * count, chunking or tokens per call. No kernels here beyond the scalar references. */
#include <assert.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend.h"
#include "../quant.h"
#include "../quant_impl.h"
#include "cpu_features.h"
#include "cpu_kernels.h"
#include "quant_cpu.h"
#include "threadpool.h"

typedef struct cpu_backend {
    eng_backend base;
    eng_backend_ops ops; /* cpu_ops with this level's name */
    char name[24];
    eng_simd level;
    cpu_kern k; /* NULL slots: the scalar references below */
    eng_type_kernels kern[ENG_TYPE_COUNT];
    unsigned char has_kern[ENG_TYPE_COUNT];
    int exact; /* matmuls by eng_exact_gemm (kern: its activation functions) */
    eng_pool *pool;
    int n_threads;
    void *act; /* prepared activations for the current matmul */
    size_t act_cap;
    float *scores;     /* per-thread attention score rows */
    size_t scores_cap; /* floats per thread: one row of scores_row */
    size_t scores_row; /* floats per row */
    float *chunk_sc;   /* per-thread score rows of attn_chunk_f32 (CHUNK_SC floats each) */
    void *plan;        /* the chunked attention's plan and partials (attn_plan_build) */
    size_t plan_cap;
    float *rope_cs; /* cos/sin per (position, pair) for the last rope range */
    size_t rope_cap;
    int rope_pos0, rope_n, rope_nrot;
    float rope_base, rope_fs;
} cpu_backend;

static int cpu_grow(void **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t n = need + need / 2 + 64;
    n = (n + 63) & ~(size_t)63;
    void *q = NULL;
    if (posix_memalign(&q, 64, n)) return -1;
    free(*p);
    *p = q;
    *cap = n;
    return 0;
}

/* --- matmul ------------------------------------------------------------- */

typedef struct mm_part {
    const eng_weight *w;
    const eng_type_kernels *k;
    const char *act; /* n_tok prepared rows of lda bytes */
    size_t lda;
    float *y;
    int64_t chunk_rows;
    int c0; /* the part's first chunk */
} mm_part;

typedef struct mm_task {
    mm_part p[ENG_MATMUL_N_MAX];
    int n;
    int exact; /* eng_exact_gemm instead of k->gemm */
    const float *x;
    char *act;
    int n_tok;
    int n_chunks;
    atomic_int next;
} mm_task;

/* Prepares rows [ith, ith + nth, ...) of x for every part that owns its activation rows. */
static void mm_quantize(void *arg, int ith, int nth) {
    mm_task *t = arg;
    for (int j = 0; j < t->n; j++) {
        const mm_part *P = &t->p[j];
        if (j > 0 && P->act == t->p[j - 1].act) continue;
        for (int i = ith; i < t->n_tok; i += nth)
            P->k->act_quantize(t->x + (size_t)i * (size_t)P->w->cols, (char *)P->act + (size_t)i * P->lda,
                               P->w->cols);
    }
}

static void mm_rows(void *arg, int ith, int nth) {
    mm_task *t = arg;
    int c;
    (void)ith;
    (void)nth;
    while ((c = eng_pool_next(&t->next, t->n_chunks)) >= 0) {
        int j = t->n - 1;
        while (c < t->p[j].c0) j--;
        const mm_part *P = &t->p[j];
        const eng_weight *w = P->w;
        int64_t r0 = (int64_t)(c - P->c0) * P->chunk_rows;
        int64_t nr = w->rows - r0 < P->chunk_rows ? w->rows - r0 : P->chunk_rows;
        const char *wr = (const char *)w->data + (size_t)r0 * w->row_bytes;
        if (t->exact)
            eng_exact_gemm(w->type, w->cols, P->y + r0, (size_t)w->rows, wr, w->row_bytes, (int)nr, P->act,
                           P->lda, t->n_tok);
        else
            P->k->gemm(w->cols, P->y + r0, (size_t)w->rows, wr, w->row_bytes, (int)nr, P->act, P->lda,
                       t->n_tok);
    }
}

/* y[j] = w[j] x for n weights of the same cols: the activations prepared once
 * per activation format, every weight's chunks in one pool run. Each (row,
 * token) runs the kernel it runs alone, so values equal n cpu_matmul calls. */
static int cpu_matmul_n(eng_backend *be, const eng_weight *const *w, float *const *y, int n, const float *x,
                        int n_tok, eng_pass pass, util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    (void)pass;
    assert(n >= 1 && n <= ENG_MATMUL_N_MAX);
    mm_task t = {.n = n, .exact = cb->exact, .x = x, .n_tok = n_tok};
    size_t off[ENG_MATMUL_N_MAX], total = 0;
    int64_t rows = 0;
    for (int j = 0; j < n; j++) {
        mm_part *P = &t.p[j];
        if (w[j]->type >= ENG_TYPE_COUNT || !cb->has_kern[w[j]->type])
            return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': no kernel for type %u", w[j]->name,
                                w[j]->type);
        P->w = w[j];
        P->k = &cb->kern[w[j]->type];
        P->y = y[j];
        P->lda = P->k->act_bytes(w[j]->cols);
        if (!P->lda) return util_err_set(err, UTIL_ENOMEM, "matmul '%s': activation buffer", w[j]->name);
        rows += w[j]->rows;
        /* one prepared copy per activation format: share the previous part's */
        if (j > 0 && P->k->act_quantize == t.p[j - 1].k->act_quantize && P->lda == t.p[j - 1].lda &&
            w[j]->cols == w[j - 1]->cols) {
            off[j] = off[j - 1];
            continue;
        }
        off[j] = total;
        total += (P->lda * (size_t)n_tok + 63) & ~(size_t)63;
    }
    if (cpu_grow(&cb->act, &cb->act_cap, total))
        return util_err_set(err, UTIL_ENOMEM, "matmul '%s': activation buffer", w[0]->name);
    t.act = cb->act;
    for (int j = 0; j < n; j++) t.p[j].act = t.act + off[j];
    /* a decode step's few rows (one per sequence, up to 8) are quantized by the
     * caller: a pool run costs a wait for the slowest thread, more than the rows */
    if (n_tok > 8)
        eng_pool_run(cb->pool, mm_quantize, &t);
    else
        mm_quantize(&t, 0, 1);
    /* about 8 chunks per thread (32 when several tokens make a chunk take longer)
     * over all the weights' rows, whole multiples of 4 rows, keep the threads
     * balanced when one is interrupted and shorten the wait for the last chunk */
    int64_t want = (int64_t)cb->n_threads * (n_tok >= 2 ? 32 : 8);
    int64_t per = (rows + want - 1) / want;
    per = per < 4 ? 4 : (per + 3) & ~(int64_t)3;
    for (int j = 0; j < n; j++) {
        t.p[j].chunk_rows = per;
        t.p[j].c0 = t.n_chunks;
        t.n_chunks += (int)((w[j]->rows + per - 1) / per);
    }
    atomic_init(&t.next, 0);
    eng_pool_run(cb->pool, mm_rows, &t);
    return UTIL_OK;
}

/* One path for prompt and decode tokens: pass is not looked at. */
static int cpu_matmul(eng_backend *be, const eng_weight *w, const float *x, float *y, int n_tok,
                      eng_pass pass, util_err *err) {
    return cpu_matmul_n(be, &w, &y, 1, x, n_tok, pass, err);
}

static int cpu_get_rows(eng_backend *be, const eng_weight *w, const int32_t *ids, int n, float *out,
                        util_err *err) {
    const eng_type_traits *tr = eng_type_get(w->type);
    if (!tr || !tr->supported)
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': no kernel for type %u", w->name, w->type);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= w->rows)
            return util_err_set(err, UTIL_ERANGE, "token id %d outside the vocabulary (%lld)", ids[i],
                                (long long)w->rows);
        tr->to_float((const char *)w->data + (size_t)ids[i] * w->row_bytes, out + (size_t)i * (size_t)w->cols,
                     w->cols);
    }
    return UTIL_OK;
}

/* --- elementwise (scalar references, SIMD through cb->k) ----------------- */

static void ref_rmsnorm_row(float *yr, const float *xr, const float *w, int n, float eps) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += (double)xr[i] * (double)xr[i];
    float mean = (float)(sum / n);
    float s = 1.0f / sqrtf(mean + eps);
    for (int i = 0; i < n; i++) yr[i] = (xr[i] * s) * w[i];
}

static void cpu_rmsnorm(eng_backend *be, float *y, const float *x, const float *w, int n, int n_rows,
                        float eps) {
    cpu_backend *cb = (cpu_backend *)be;
    void (*row)(float *, const float *, const float *, int, float) = cb->k.rmsnorm_row ? cb->k.rmsnorm_row
                                                                                       : ref_rmsnorm_row;
    for (int r = 0; r < n_rows; r++) row(y + (size_t)r * (size_t)n, x + (size_t)r * (size_t)n, w, n, eps);
}

/* cos/sin of each (position, pair) of pos0 .. pos0+n_tok-1, computed exactly as
 * the reference does and kept while the range and parameters repeat (every layer
 * of a forward pass ropes the same positions twice). NULL if out of memory. */
static const float *rope_table(cpu_backend *cb, int n_tok, int n_rot, int pos0, float base,
                               float freq_scale) {
    int half = n_rot / 2;
    if (cb->rope_cs && cb->rope_pos0 == pos0 && cb->rope_n == n_tok && cb->rope_nrot == n_rot &&
        cb->rope_base == base && cb->rope_fs == freq_scale)
        return cb->rope_cs;
    size_t need = (size_t)n_tok * (size_t)half * 2 * sizeof(float);
    if (cpu_grow((void **)&cb->rope_cs, &cb->rope_cap, need)) {
        cb->rope_n = -1;
        return NULL;
    }
    float theta_scale = powf(base, -2.0f / (float)n_rot);
    for (int t = 0; t < n_tok; t++) {
        float *cs = cb->rope_cs + (size_t)t * (size_t)half * 2;
        float theta = (float)(pos0 + t) * freq_scale;
        for (int i = 0; i < half; i++) {
            if (cb->exact) { /* the angle in double: f32's running product drifts by ~1e-4 rad at
                              * position 2,000 (llama.cpp's drift, which the default path keeps) */
                double th = (double)(pos0 + t) * (double)freq_scale * pow((double)base, -2.0 * i / n_rot);
                cs[2 * i] = (float)cos(th);
                cs[2 * i + 1] = (float)sin(th);
                continue;
            }
            cs[2 * i] = cosf(theta);
            cs[2 * i + 1] = sinf(theta);
            theta *= theta_scale;
        }
    }
    cb->rope_pos0 = pos0, cb->rope_n = n_tok, cb->rope_nrot = n_rot;
    cb->rope_base = base, cb->rope_fs = freq_scale;
    return cb->rope_cs;
}

static void cpu_rope(eng_backend *be, const eng_rope_args *a) {
    cpu_backend *cb = (cpu_backend *)be;
    float *x = a->x;
    const int n_tok = a->n_tok, n_head = a->n_head, head_dim = a->head_dim, n_rot = a->n_rot, pos0 = a->pos0;
    const float base = a->base, freq_scale = a->freq_scale;
    const int neox = a->mode == ENG_ROPE_NEOX;
    const float *ff = a->freq_factors;
    const float *tab = ff ? NULL : rope_table(cb, n_tok, n_rot, pos0, base, freq_scale);
    float theta_scale = powf(base, -2.0f / (float)n_rot);
    int half = n_rot / 2;
    for (int t = 0; t < n_tok; t++) {
        float *xt = x + (size_t)t * (size_t)n_head * (size_t)head_dim;
        float theta = (float)(pos0 + t) * freq_scale;
        for (int i = 0; i < half; i++) {
            float c, s;
            if (tab) {
                c = tab[((size_t)t * (size_t)half + (size_t)i) * 2];
                s = tab[((size_t)t * (size_t)half + (size_t)i) * 2 + 1];
            } else {
                float th = ff ? theta / ff[i] : theta; /* as ggml: theta_base / freq_factor */
                c = cosf(th), s = sinf(th);
                if (cb->exact) { /* in double, as rope_table */
                    double thd = (double)(pos0 + t) * (double)freq_scale *
                                 pow((double)base, -2.0 * i / n_rot) / (ff ? (double)ff[i] : 1.0);
                    c = (float)cos(thd), s = (float)sin(thd);
                }
            }
            for (int h = 0; h < n_head; h++) {
                float *xh = xt + (size_t)h * (size_t)head_dim;
                int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
                float x0 = xh[a], x1 = xh[b];
                xh[a] = x0 * c - x1 * s;
                xh[b] = x0 * s + x1 * c;
            }
            theta *= theta_scale;
        }
    }
}

/* One row of n values into a KV row of `type`: f16 by the level's converter
 * (or the reference), q8_0 and q4_0 by the reference quantizers (quant.c, as
 * ggml's quantize_row_*_ref): a few rows per token, never the bottleneck. */
static void kv_store_row(const cpu_backend *cb, uint8_t *dst, const float *src, uint32_t type, int n) {
    if (type != ENG_TYPE_F16) {
        eng_type_get(type)->from_float(src, dst, n);
        return;
    }
    uint16_t *d = (uint16_t *)dst;
    if (cb->k.f32_to_f16) {
        cb->k.f32_to_f16(d, src, (size_t)n);
        return;
    }
    for (int i = 0; i < n; i++) d[i] = eng_f32_to_f16(src[i]);
}

static void cpu_kv_store(eng_backend *be, const eng_kv_view *kv, int layer, const float *k, const float *v,
                         int n_tok, int pos0) {
    cpu_backend *cb = (cpu_backend *)be;
    for (int t = 0; t < n_tok; t++) {
        const size_t off = (size_t)t * (size_t)kv->kv_dim;
        kv_store_row(cb, eng_kv_k(kv, layer, pos0 + t), k + off, kv->type_k, kv->kv_dim);
        if (v && !kv->v_is_k)
            kv_store_row(cb, eng_kv_v(kv, layer, pos0 + t), v + off, kv->type_v, kv->kv_dim);
    }
}

typedef struct ew_task {
    cpu_backend *cb;
    float *out;
    const float *a, *b;
    size_t n;
} ew_task;

static void ref_swiglu(float *out, const float *gate, const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

/* Elementwise, so any split gives the same values; slices are multiples of 64. */
static void swiglu_run(void *arg, int ith, int nth) {
    ew_task *t = arg;
    size_t per = ((t->n + (size_t)nth - 1) / (size_t)nth + 63) & ~(size_t)63;
    size_t i0 = per * (size_t)ith, i1 = i0 + per < t->n ? i0 + per : t->n;
    if (i0 >= i1) return;
    void (*f)(float *, const float *, const float *, size_t) = t->cb->k.swiglu ? t->cb->k.swiglu : ref_swiglu;
    f(t->out + i0, t->a + i0, t->b + i0, i1 - i0);
}

static void cpu_swiglu(eng_backend *be, float *out, const float *gate, const float *up, size_t n) {
    cpu_backend *cb = (cpu_backend *)be;
    ew_task t = {cb, out, gate, up, n};
    if (n >= 16384)
        eng_pool_run(cb->pool, swiglu_run, &t);
    else
        swiglu_run(&t, 0, 1);
}

static void cpu_geglu(eng_backend *be, float *out, const float *gate, const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float z = gate[i];
        float g = 0.5f * z * (1.0f + tanhf(0.7978845608f * (z + 0.044715f * z * z * z)));
        out[i] = g * up[i];
    }
}

static void cpu_add(eng_backend *be, float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

static void cpu_scale(eng_backend *be, float *x, float s, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

/* --- attention ---------------------------------------------------------- */

typedef struct attn_task {
    const eng_attn_args *a;
    cpu_backend *cb;
    int fast; /* 1: attn_head */
    atomic_int next;
} attn_task;

/* Value i of a KV row of `type`, by the dequantizers' formulas (quant.c): the
 * scalar reference reads the cache one value at a time. */
static float kv_value(const uint8_t *row, uint32_t type, int i) {
    uint16_t d;
    if (type == ENG_TYPE_Q8_0) {
        const uint8_t *b = row + (size_t)(i / ENG_QK) * sizeof(eng_block_q8_0);
        memcpy(&d, b, sizeof d);
        return (float)(int8_t)b[offsetof(eng_block_q8_0, qs) + i % ENG_QK] * eng_f16_to_f32(d);
    }
    if (type == ENG_TYPE_Q4_0) {
        const uint8_t *b = row + (size_t)(i / ENG_QK) * sizeof(eng_block_q4_0);
        const int j = i % ENG_QK;
        const uint8_t q = b[offsetof(eng_block_q4_0, qs) + j % (ENG_QK / 2)];
        memcpy(&d, b, sizeof d);
        return (float)((j < ENG_QK / 2 ? q & 0xF : q >> 4) - 8) * eng_f16_to_f32(d);
    }
    if (type == ENG_TYPE_F32) {
        float f;
        memcpy(&f, row + 4 * (size_t)i, sizeof f);
        return f;
    }
    memcpy(&d, row + 2 * (size_t)i, sizeof d);
    return eng_f16_to_f32(d);
}

/* One (token, head): scores over visible keys in position order, softmax with
 * the max subtracted, then the weighted sum of values in position order. */
static void attn_one(const eng_attn_args *a, int t, int h, float *sc) {
    int hd = a->head_dim, p = a->pos0 + t;
    int g = h / (a->n_head / a->n_kv_head);
    int lo = a->window > 0 && p - a->window + 1 > 0 ? p - a->window + 1 : 0;
    const uint32_t tk = a->kv->type_k, tv = a->kv->type_v;
    const size_t koff = eng_type_row_size(tk, (int64_t)g * hd), voff = eng_type_row_size(tv, (int64_t)g * hd);
    const float *q = a->q + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float *o = a->out + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float mx = -INFINITY;
    for (int j = lo; j <= p; j++) {
        const uint8_t *k = eng_kv_k(a->kv, a->layer, j) + koff;
        float s = 0.0f;
        for (int d = 0; d < hd; d++) s += q[d] * kv_value(k, tk, d);
        s *= a->scale;
        sc[j - lo] = s;
        if (s > mx) mx = s;
    }
    float sum = 0.0f;
    for (int j = lo; j <= p; j++) {
        float e = expf(sc[j - lo] - mx);
        sc[j - lo] = e;
        sum += e;
    }
    float inv = 1.0f / sum;
    memset(o, 0, (size_t)hd * sizeof(float));
    for (int j = lo; j <= p; j++) {
        const uint8_t *v = eng_kv_v(a->kv, a->layer, j) + voff;
        float wj = sc[j - lo] * inv;
        for (int d = 0; d < hd; d++) o[d] += wj * kv_value(v, tv, d);
    }
}

static void attn_run(void *arg, int ith, int nth) {
    attn_task *at = arg;
    const eng_attn_args *a = at->a;
    float *sc = at->cb->scores + (size_t)ith * at->cb->scores_cap;
    int jobs = a->n_tok * a->n_head, j;
    (void)nth;
    while ((j = eng_pool_next(&at->next, jobs)) >= 0) {
        int t = j / a->n_head, h = j % a->n_head;
        if (at->fast)
            at->cb->k.attn_head(a, t, h, sc);
        else
            attn_one(a, t, h, sc);
    }
}

static int cpu_reserve(eng_backend *be, int n_ctx, util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    size_t need = ((size_t)n_ctx + 16 + 15) & ~(size_t)15; /* keeps each thread's row 64-byte aligned */
    if (need <= cb->scores_row) return UTIL_OK;
    float *s = malloc(need * (size_t)cb->n_threads * sizeof(float));
    if (!s) return util_err_set(err, UTIL_ENOMEM, "cpu backend: attention scratch for %d tokens", n_ctx);
    free(cb->scores);
    cb->scores = s;
    cb->scores_row = need;
    cb->scores_cap = need;
    return UTIL_OK;
}

/* --- attention in chunks of positions (flash-decoding) ------------------------
 * A query's keys lo..p are cut at multiples of CPU_ATTN_CHUNK positions; each
 * piece gives a partial (max, sum of exps, value sum) and the partials are merged
 * in position order, so a result depends only on the positions and the values,
 * never on the thread count, the pass or the batch. A segment is one piece of
 * keys that several queries read alike: the tokens of a prompt chunk below their
 * own positions, and sequences whose views hold the same pages there (a shared
 * prefix from the prefix cache). A job is up to CPU_ATTN_GROUP_MAX query heads of
 * each of up to CPU_ATTN_HEADS_MAX / CPU_ATTN_GROUP_MAX kv heads on one segment:
 * each key and value is read once for all of them (loop interchange), whole rows
 * of the pages at a time, so the reads stream (one job per kv head read 128 of
 * SmolLM2's 384 bytes per row, at a third of the streaming rate); fewer kv heads
 * per job only while the jobs are too few to keep the threads busy. Each query
 * head's arithmetic is the one it gets alone, whatever the job. */

enum { CHUNK_SC = CPU_ATTN_HEADS_MAX * (CPU_ATTN_CHUNK + 32) };

typedef struct attn_seg {
    int e;      /* the entry whose view it reads */
    int j0, nk; /* keys j0 .. j0 + nk - 1 */
    int r0, nr; /* its records: rec[r0 .. r0 + nr) */
} attn_seg;

typedef struct attn_rec {
    int T, k; /* flat query token, its piece (0: its first) */
    int seg;
} attn_rec;

typedef struct attn_job {
    int seg, g, ng; /* kv heads g .. g + ng - 1 */
    int v0, nv;     /* of each kv head g', query heads v0 .. v0 + nv - 1 of the segment: record v / ratio,
                     * head g' * ratio + v % ratio */
} attn_job;

typedef struct attn_plan {
    const eng_attn_args *a;
    cpu_backend *cb;
    int ratio; /* query heads per kv head */
    attn_seg *seg;
    attn_rec *rec; /* grouped by segment */
    attn_job *job;
    int n_job;
    int *tok_e, *tok_t, *nch; /* per flat token: entry, token, pieces */
    size_t *tbase;            /* per flat token: partial slot of (head 0, piece 0) */
    atomic_int *left;         /* per (flat token, head): pieces not yet done */
    float *po, *pml;          /* partials: [slot][head_dim], [slot][2] */
    atomic_int next;
} attn_plan;

/* 1 when views a and b hold the same rows for positions j0 .. j1 - 1 of their layer. */
static int kv_same_rows(const eng_attn_args *a, const eng_attn_args *b, int j0, int j1) {
    const eng_kv_view *x = a->kv, *y = b->kv;
    if (a->layer != b->layer || x->page_tokens != y->page_tokens || x->n_layer != y->n_layer ||
        x->kv_dim != y->kv_dim || x->type_k != y->type_k || x->type_v != y->type_v || x->v_is_k != y->v_is_k)
        return 0;
    if (x->pages == y->pages) return 1;
    for (int pg = j0 / x->page_tokens; pg <= (j1 - 1) / x->page_tokens; pg++)
        if (x->pages[pg] != y->pages[pg]) return 0;
    return 1;
}

static int attn_lo(const eng_attn_args *a, int p) {
    return a->window > 0 && p - a->window + 1 > 0 ? p - a->window + 1 : 0;
}

/* Carves n bytes (64-byte aligned) from *p. */
static void *carve(char **p, size_t n) {
    void *r = *p;
    *p += (n + 63) & ~(size_t)63;
    return r;
}

/* Lays out segments, records, jobs and partials for n entries of one layer in
 * cb->plan. -1 when out of memory. */
static int attn_plan_build(cpu_backend *cb, attn_plan *P, const eng_attn_args *as, int n) {
    const int C = CPU_ATTN_CHUNK, nh = as[0].n_head, hd = as[0].head_dim;
    int n_tok = 0;
    size_t n_rec = 0;
    for (int e = 0; e < n; e++)
        for (int t = 0; t < as[e].n_tok; t++, n_tok++) {
            int p = as[e].pos0 + t;
            n_rec += (size_t)(p / C - attn_lo(&as[e], p) / C + 1);
        }
    size_t hcap = 16;
    while (hcap < 2 * n_rec) hcap *= 2;
    const size_t n_slot = n_rec * (size_t)nh, max_job = n_slot;
    size_t need = 0;
    const size_t sizes[] = {n_rec * sizeof(attn_seg),
                            n_rec * sizeof(attn_rec) * 2,
                            max_job * sizeof(attn_job),
                            (size_t)n_tok * sizeof(int) * 3,
                            (size_t)n_tok * sizeof(size_t),
                            (size_t)n_tok * (size_t)nh * sizeof(atomic_int),
                            n_slot * (size_t)hd * sizeof(float),
                            n_slot * 2 * sizeof(float),
                            hcap * sizeof(int),
                            n_rec * sizeof(int)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) need += (sizes[i] + 63) & ~(size_t)63;
    if (cpu_grow(&cb->plan, &cb->plan_cap, need)) return -1;
    char *m = cb->plan;
    P->seg = carve(&m, sizes[0]);
    attn_rec *raw = carve(&m, sizes[1]);
    P->rec = raw + n_rec;
    P->job = carve(&m, sizes[2]);
    P->tok_e = carve(&m, sizes[3]);
    P->tok_t = P->tok_e + n_tok;
    P->nch = P->tok_t + n_tok;
    P->tbase = carve(&m, sizes[4]);
    P->left = carve(&m, sizes[5]);
    P->po = carve(&m, sizes[6]);
    P->pml = carve(&m, sizes[7]);
    int *hash = carve(&m, sizes[8]), *fill = carve(&m, sizes[9]);
    memset(hash, 0xff, hcap * sizeof(int));
    /* pieces of every query token, each matched to a segment by (keys, rows) */
    int n_seg = 0, T = 0;
    size_t r = 0, slot = 0;
    for (int e = 0; e < n; e++)
        for (int t = 0; t < as[e].n_tok; t++, T++) {
            const int p = as[e].pos0 + t, lo = attn_lo(&as[e], p), nch = p / C - lo / C + 1;
            P->tok_e[T] = e, P->tok_t[T] = t, P->nch[T] = nch, P->tbase[T] = slot;
            slot += (size_t)nch * (size_t)nh;
            for (int h = 0; h < nh; h++) atomic_init(&P->left[(size_t)T * (size_t)nh + (size_t)h], nch);
            for (int k = 0; k < nch; k++, r++) {
                const int K = lo / C + k, j0 = K * C > lo ? K * C : lo,
                          j1 = (K + 1) * C < p + 1 ? (K + 1) * C : p + 1;
                const void *pg = as[e].kv->pages[j0 / as[e].kv->page_tokens];
                size_t hsh = ((size_t)j0 * 2654435761u) ^ ((size_t)j1 * 40503u) ^
                             ((size_t)(uintptr_t)pg >> 6);
                int s = -1;
                for (size_t b = hsh & (hcap - 1);; b = (b + 1) & (hcap - 1)) {
                    int c = hash[b];
                    if (c < 0) {
                        s = n_seg++;
                        P->seg[s] = (attn_seg){.e = e, .j0 = j0, .nk = j1 - j0};
                        hash[b] = s;
                        break;
                    }
                    const attn_seg *sg = &P->seg[c];
                    if (sg->j0 == j0 && sg->nk == j1 - j0 && kv_same_rows(&as[sg->e], &as[e], j0, j1)) {
                        s = c;
                        break;
                    }
                }
                raw[r] = (attn_rec){.T = T, .k = k, .seg = s};
                P->seg[s].nr++;
            }
        }
    /* records grouped by segment (counting sort, stable), then the jobs */
    int r0 = 0;
    for (int s = 0; s < n_seg; s++) P->seg[s].r0 = fill[s] = r0, r0 += P->seg[s].nr;
    for (size_t i = 0; i < n_rec; i++) P->rec[fill[raw[i].seg]++] = raw[i];
    const int ratio = nh / as[0].n_kv_head, nkv = as[0].n_kv_head;
    P->ratio = ratio;
    P->n_job = 0;
    int ng = nkv < CPU_ATTN_HEADS_MAX / CPU_ATTN_GROUP_MAX ? nkv : CPU_ATTN_HEADS_MAX / CPU_ATTN_GROUP_MAX;
    for (;;) { /* about 4 jobs per thread at least, if kv heads can be split */
        long jobs = 0;
        for (int s = 0; s < n_seg; s++)
            jobs += (long)((P->seg[s].nr * ratio + CPU_ATTN_GROUP_MAX - 1) / CPU_ATTN_GROUP_MAX) *
                    ((nkv + ng - 1) / ng);
        if (ng == 1 || jobs >= 4L * cb->n_threads) break;
        ng = (ng + 1) / 2;
    }
    for (int s = 0; s < n_seg; s++)
        for (int g = 0; g < nkv; g += ng)
            for (int v = 0; v < P->seg[s].nr * ratio; v += CPU_ATTN_GROUP_MAX) {
                int nv = P->seg[s].nr * ratio - v;
                P->job[P->n_job++] = (attn_job){.seg = s,
                                                .g = g,
                                                .ng = nkv - g < ng ? nkv - g : ng,
                                                .v0 = v,
                                                .nv = nv < CPU_ATTN_GROUP_MAX ? nv : CPU_ATTN_GROUP_MAX};
            }
    return 0;
}

/* The output of query head h of flat token T: its pieces' partials merged in
 * position order (each scaled to the largest max). */
static void attn_merge(const attn_plan *P, int T, int h) {
    const eng_attn_args *a = &P->a[P->tok_e[T]];
    const int hd = a->head_dim, nch = P->nch[T];
    const size_t s0 = P->tbase[T] + (size_t)h * (size_t)nch;
    const float *po = P->po + s0 * (size_t)hd, *ml = P->pml + 2 * s0;
    float *o = a->out + ((size_t)P->tok_t[T] * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float mx = ml[0], sum = 0.0f;
    for (int c = 1; c < nch; c++) mx = ml[2 * c] > mx ? ml[2 * c] : mx;
    for (int d = 0; d < hd; d++) o[d] = 0.0f;
    for (int c = 0; c < nch; c++) {
        const float f = expf(ml[2 * c] - mx);
        sum += f * ml[2 * c + 1];
        for (int d = 0; d < hd; d++) o[d] += f * po[(size_t)c * (size_t)hd + (size_t)d];
    }
    const float inv = 1.0f / sum;
    for (int d = 0; d < hd; d++) o[d] *= inv;
}

static void attn_chunks_run(void *arg, int ith, int nth) {
    attn_plan *P = arg;
    const int nh = P->a[0].n_head, hd = P->a[0].head_dim;
    float *sc = P->cb->chunk_sc + (size_t)ith * CHUNK_SC;
    int j;
    (void)nth;
    while ((j = eng_pool_next(&P->next, P->n_job)) >= 0) {
        const attn_job *jb = &P->job[j];
        const attn_seg *sg = &P->seg[jb->seg];
        cpu_attn_q q[CPU_ATTN_HEADS_MAX];
        size_t done[CPU_ATTN_HEADS_MAX];
        const int nq = jb->ng * jb->nv;
        for (int i = 0; i < nq; i++) {
            const int v = jb->v0 + i % jb->nv, h = (jb->g + i / jb->nv) * P->ratio + v % P->ratio;
            const attn_rec *rc = &P->rec[sg->r0 + v / P->ratio];
            const eng_attn_args *a = &P->a[P->tok_e[rc->T]];
            const size_t slot = P->tbase[rc->T] + (size_t)h * (size_t)P->nch[rc->T] + (size_t)rc->k;
            q[i].q = a->q + ((size_t)P->tok_t[rc->T] * (size_t)nh + (size_t)h) * (size_t)hd;
            q[i].o = P->po + slot * (size_t)hd;
            q[i].ml = P->pml + 2 * slot;
            done[i] = (size_t)rc->T * (size_t)nh + (size_t)h;
        }
        P->cb->k.attn_chunk_f32(&P->a[sg->e], jb->g, jb->ng, sg->j0, sg->nk, q, jb->nv, NULL, NULL, 0, sc,
                                CPU_ATTN_CHUNK + 32);
        for (int i = 0; i < nq; i++) /* the last piece of a query head merges it */
            if (atomic_fetch_sub(&P->left[done[i]], 1) == 1)
                attn_merge(P, (int)(done[i] / (size_t)nh), (int)(done[i] % (size_t)nh));
    }
}

/* 1 when the chunked kernel takes these arguments. */
static int attn_chunked(const cpu_backend *cb, const eng_attn_args *a) {
    const int f32 = a->kv->type_k == ENG_TYPE_F32 || a->kv->type_v == ENG_TYPE_F32;
    return !f32 && cb->k.attn_chunk_f32 && cb->chunk_sc && a->n_head % a->n_kv_head == 0 &&
           (a->head_dim == 64 || a->head_dim == 128 || a->head_dim == 256);
}

/* One entry by the per-(token, head) kernels (the scalar reference, AVX2).
 * The caller reserved scratch for pos0 + n_tok positions (see reserve). */
static void attn_heads(cpu_backend *cb, const eng_attn_args *a) {
    /* f32 rows (the exact path's reference cache) by the scalar reference only */
    const int f32 = a->kv->type_k == ENG_TYPE_F32 || a->kv->type_v == ENG_TYPE_F32;
    attn_task at = {.a = a, .cb = cb, .fast = !f32 && cb->k.attn_head && a->head_dim % 8 == 0};
    atomic_init(&at.next, 0);
    eng_pool_run(cb->pool, attn_run, &at);
}

/* n entries of one layer (same shapes, each its own view): one pool run for
 * all when the chunked kernel takes them, each entry's bits as alone. */
static void cpu_attention_batch(eng_backend *be, const eng_attn_args *as, int n) {
    cpu_backend *cb = (cpu_backend *)be;
    int chunked = n > 0;
    for (int e = 0; e < n; e++)
        chunked = chunked && attn_chunked(cb, &as[e]) && as[e].n_head == as[0].n_head &&
                  as[e].n_kv_head == as[0].n_kv_head && as[e].head_dim == as[0].head_dim &&
                  as[e].scale == as[0].scale;
    attn_plan P = {.a = as, .cb = cb};
    if (chunked && attn_plan_build(cb, &P, as, n) == 0) {
        atomic_init(&P.next, 0);
        eng_pool_run(cb->pool, attn_chunks_run, &P);
        return;
    }
    for (int e = 0; e < n; e++) attn_heads(cb, &as[e]);
}

static void cpu_attention(eng_backend *be, const eng_attn_args *a) { cpu_attention_batch(be, a, 1); }

/* --- lifecycle ---------------------------------------------------------- */

static int cpu_n_threads(const eng_backend *be) { return ((const cpu_backend *)be)->n_threads; }

static void cpu_destroy(eng_backend *be) {
    cpu_backend *cb = (cpu_backend *)be;
    eng_pool_free(cb->pool);
    free(cb->act);
    free(cb->scores);
    free(cb->chunk_sc);
    free(cb->plan);
    free(cb->rope_cs);
    free(cb);
}

/* --- memory: host memory, plain copies ------------------------------------ */

static void *cpu_alloc(eng_backend *be, size_t bytes) {
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 1) ? NULL : p;
}

static void cpu_release(eng_backend *be, void *p) { free(p); }

static int cpu_copy(eng_backend *be, void *dst, const void *src, size_t bytes, util_err *err) {
    if (bytes) memcpy(dst, src, bytes);
    return UTIL_OK;
}

static int cpu_load(eng_backend *be, eng_weight *w, util_err *err) {
    w->dev = NULL; /* the kernels read the file mapping */
    return UTIL_OK;
}

static int cpu_load_vec(eng_backend *be, const float *v, size_t n, const float **out, util_err *err) {
    *out = v;
    return UTIL_OK;
}

static const eng_backend_ops cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .n_threads = cpu_n_threads,
    .n_batch = 64,
    .kv_quant = 1,
    .kv_stream = 1,
    .pass_blind = 1,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .to_dev = cpu_copy,
    .to_host = cpu_copy,
    .copy = cpu_copy,
    .load = cpu_load,
    .load_vec = cpu_load_vec,
    .reserve = cpu_reserve,
    .matmul = cpu_matmul,
    .matmul_n = cpu_matmul_n,
    .get_rows = cpu_get_rows,
    .rmsnorm = cpu_rmsnorm,
    .rope = cpu_rope,
    .kv_store = cpu_kv_store,
    .attention = cpu_attention,
    .attention_batch = cpu_attention_batch,
    .swiglu = cpu_swiglu,
    .geglu = cpu_geglu,
    .add = cpu_add,
    .scale = cpu_scale,
};

int eng_backend_cpu_new_level(eng_backend **out, int n_threads, int level, util_err *err) {
    *out = NULL;
    if (level < ENG_SIMD_SCALAR || level > (int)eng_cpu_detect())
        return util_err_set(err, UTIL_EINVAL, "cpu backend: this cpu has no '%s' kernels",
                            eng_simd_name((eng_simd)level));
    if (n_threads <= 0) { /* the cores this process may run on (taskset, cpusets) */
        cpu_set_t set;
        long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = n > 0 ? (int)n : 1;
    }
    if (n_threads > 256) n_threads = 256;
    cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb) return util_err_set(err, UTIL_ENOMEM, "cpu backend: out of memory");
    cb->level = (eng_simd)level;
    snprintf(cb->name, sizeof cb->name, "cpu-%s", eng_simd_name(cb->level));
    cb->ops = cpu_ops;
    cb->ops.name = cb->name;
    cb->base.ops = &cb->ops;
    if (cb->level >= ENG_SIMD_AVX2) cpu_kern_avx2(&cb->k);
    if (cb->level >= ENG_SIMD_AVX512) cpu_kern_avx512(&cb->k);
    for (uint32_t t = 0; t < ENG_TYPE_COUNT; t++)
        cb->has_kern[t] = eng_type_kernels_get(t, cb->level, &cb->kern[t]) == UTIL_OK;
    cb->pool = eng_pool_new(n_threads);
    if (!cb->pool) {
        free(cb);
        return util_err_set(err, UTIL_ENOMEM, "cpu backend: cannot start %d threads", n_threads);
    }
    cb->n_threads = eng_pool_size(cb->pool);
    if (cb->k.attn_chunk_f32) { /* else the per-head kernels (NULL: they stay in use) */
        void *sc = NULL;
        if (posix_memalign(&sc, 64, (size_t)cb->n_threads * CHUNK_SC * sizeof(float)) == 0) cb->chunk_sc = sc;
    }
    *out = &cb->base;
    return UTIL_OK;
}

int eng_backend_cpu_new(eng_backend **out, int n_threads, util_err *err) {
    eng_simd level;
    *out = NULL;
    int rc = eng_cpu_level(&level, err);
    if (rc) return rc;
    return eng_backend_cpu_new_level(out, n_threads, (int)level, err);
}

/* Every type with a dequantizer (and a dot product for the default mode: the
 * same set) multiplies by the one exact kernel; f32 activations. */
int eng_backend_cpu_set_exact(eng_backend *be) {
    cpu_backend *cb = (cpu_backend *)be;
    cb->exact = 1;
    for (uint32_t t = 0; t < ENG_TYPE_COUNT; t++) {
        const eng_type_traits *tr = eng_type_get(t);
        cb->has_kern[t] = tr && tr->supported && tr->to_float && cb->has_kern[t];
        cb->kern[t] = (eng_type_kernels){
            .level = ENG_SIMD_SCALAR, .act_bytes = eng_exact_act_bytes, .act_quantize = eng_exact_act};
    }
    size_t l = strlen(cb->name);
    snprintf(cb->name + l, sizeof cb->name - l, "-exact2"); /* 2: RoPE angles in double */
    cb->rope_n = -1;                                        /* no table of the other numerics */
    return UTIL_OK;
}
