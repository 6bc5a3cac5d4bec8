/* engine/cpu/backend_cpu.c: the CPU backend: matmul over the quant kernels of one SIMD
 * level (scalar, AVX2 or AVX-512, chosen at creation), attention, norms, RoPE and
 * activations on a thread pool, in chunks of rows or (token, head) jobs. Every output
 * is computed by one fixed kernel in a fixed order: results do not depend on thread
 * count, chunking or tokens per call. No kernels here beyond the scalar references. */
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
    size_t scores_cap; /* floats per thread: CPU_ATTN_GROUP_MAX rows of scores_row */
    size_t scores_row; /* floats per row */
    void *kvf;         /* the layer's keys and values as f32, for attn_head_f32 */
    size_t kvf_cap;
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

typedef struct mm_task {
    const eng_weight *w;
    const eng_type_kernels *k;
    int exact; /* eng_exact_gemm instead of k->gemm */
    const float *x;
    char *act; /* n_tok prepared rows of lda bytes */
    size_t lda;
    float *y;
    int n_tok;
    int64_t chunk_rows;
    int n_chunks;
    atomic_int next;
} mm_task;

static void mm_quantize(void *arg, int ith, int nth) {
    mm_task *t = arg;
    for (int i = ith; i < t->n_tok; i += nth)
        t->k->act_quantize(t->x + (size_t)i * (size_t)t->w->cols, t->act + (size_t)i * t->lda, t->w->cols);
}

static void mm_rows(void *arg, int ith, int nth) {
    mm_task *t = arg;
    const eng_weight *w = t->w;
    int c;
    (void)ith;
    (void)nth;
    while ((c = eng_pool_next(&t->next, t->n_chunks)) >= 0) {
        int64_t r0 = (int64_t)c * t->chunk_rows;
        int64_t nr = w->rows - r0 < t->chunk_rows ? w->rows - r0 : t->chunk_rows;
        const char *wr = (const char *)w->data + (size_t)r0 * w->row_bytes;
        if (t->exact)
            eng_exact_gemm(w->type, w->cols, t->y + r0, (size_t)w->rows, wr, w->row_bytes, (int)nr, t->act,
                           t->lda, t->n_tok);
        else
            t->k->gemm(w->cols, t->y + r0, (size_t)w->rows, wr, w->row_bytes, (int)nr, t->act, t->lda,
                       t->n_tok);
    }
}

/* One path for prompt and decode tokens: pass is not looked at. */
static int cpu_matmul(eng_backend *be, const eng_weight *w, const float *x, float *y, int n_tok,
                      eng_pass pass, util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    if (w->type >= ENG_TYPE_COUNT || !cb->has_kern[w->type])
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': no kernel for type %u", w->name, w->type);
    mm_task t = {.w = w, .k = &cb->kern[w->type], .exact = cb->exact, .x = x, .y = y, .n_tok = n_tok};
    t.lda = t.k->act_bytes(w->cols);
    if (!t.lda || cpu_grow(&cb->act, &cb->act_cap, t.lda * (size_t)n_tok))
        return util_err_set(err, UTIL_ENOMEM, "matmul '%s': activation buffer", w->name);
    t.act = cb->act;
    if (n_tok >= 4)
        eng_pool_run(cb->pool, mm_quantize, &t);
    else
        mm_quantize(&t, 0, 1);
    /* about 8 chunks per thread (32 for batches, whose chunks take longer), whole
     * multiples of 4 rows, keep the threads balanced when one is interrupted */
    int64_t want = (int64_t)cb->n_threads * (n_tok >= 16 ? 32 : 8);
    int64_t per = (w->rows + want - 1) / want;
    t.chunk_rows = per < 4 ? 4 : (per + 3) & ~(int64_t)3;
    t.n_chunks = (int)((w->rows + t.chunk_rows - 1) / t.chunk_rows);
    atomic_init(&t.next, 0);
    eng_pool_run(cb->pool, mm_rows, &t);
    return UTIL_OK;
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
    int fast;       /* 1: attn_head, 2: attn_head_f32 (attn_group_f32 when group > 1) */
    int group;      /* heads of a kv head per job (fast == 2) */
    float *kf, *vf; /* converted rows (fast == 2), or NULL */
    int j0, j1;     /* positions to convert */
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
    const size_t ld = (size_t)a->n_kv_head * (size_t)a->head_dim;
    int jobs = a->n_tok * a->n_head, j;
    (void)nth;
    if (at->group > 1) { /* jobs of `group` heads sharing a kv head */
        const int per = a->n_head / at->group;
        jobs = a->n_tok * per;
        while ((j = eng_pool_next(&at->next, jobs)) >= 0)
            at->cb->k.attn_group_f32(a, j / per, j % per * at->group, at->group, at->kf, at->vf, ld, sc,
                                     at->cb->scores_row);
        return;
    }
    while ((j = eng_pool_next(&at->next, jobs)) >= 0) {
        int t = j / a->n_head, h = j % a->n_head;
        if (at->fast == 2)
            at->cb->k.attn_head_f32(a, t, h, at->kf, at->vf, ld, sc);
        else if (at->fast)
            at->cb->k.attn_head(a, t, h, sc);
        else
            attn_one(a, t, h, sc);
    }
}

/* A KV row of n values to f32: exact, the same values the kernels dequantize
 * as they load (f16 by the level's converter, blocks by quant.c's to_float). */
static void kv_row_f32(const cpu_backend *cb, float *dst, const uint8_t *row, uint32_t type, size_t n) {
    if (type == ENG_TYPE_F16)
        cb->k.f16_to_f32(dst, (const uint16_t *)row, n);
    else
        eng_type_get(type)->to_float(row, dst, (int64_t)n);
}

/* Keys and values of positions j0 .. j1-1 to f32 (exact), split by position. */
static void attn_convert(void *arg, int ith, int nth) {
    attn_task *at = arg;
    const eng_attn_args *a = at->a;
    const size_t ld = (size_t)a->n_kv_head * (size_t)a->head_dim;
    int n = at->j1 - at->j0, p0 = at->j0 + n * ith / nth, p1 = at->j0 + n * (ith + 1) / nth;
    for (int p = p0; p < p1; p++) {
        kv_row_f32(at->cb, at->kf + (size_t)p * ld, eng_kv_k(a->kv, a->layer, p), a->kv->type_k, ld);
        kv_row_f32(at->cb, at->vf + (size_t)p * ld, eng_kv_v(a->kv, a->layer, p), a->kv->type_v, ld);
    }
}

static int cpu_reserve(eng_backend *be, int n_ctx, util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    size_t need = ((size_t)n_ctx + 16 + 15) & ~(size_t)15; /* keeps each thread's row 64-byte aligned */
    if (need <= cb->scores_row) return UTIL_OK;
    float *s = malloc(need * CPU_ATTN_GROUP_MAX * (size_t)cb->n_threads * sizeof(float));
    if (!s) return util_err_set(err, UTIL_ENOMEM, "cpu backend: attention scratch for %d tokens", n_ctx);
    free(cb->scores);
    cb->scores = s;
    cb->scores_row = need;
    cb->scores_cap = need * CPU_ATTN_GROUP_MAX;
    return UTIL_OK;
}

/* Heads per job of the f32 kernel: the query heads of a kv head read its
 * keys and values once (GQA: 3 on SmolLM2, 4 on the 1B preset), as many as
 * divide the group and still give every thread a job (a head's result does
 * not depend on it, so neither on the thread count). */
static int attn_group_size(const cpu_backend *cb, const eng_attn_args *a) {
    const int r = a->n_head / a->n_kv_head;
    if (!cb->k.attn_group_f32 || a->n_head % a->n_kv_head) return 1;
    for (int s = CPU_ATTN_GROUP_MAX; s > 1; s--)
        if (r % s == 0 && a->n_tok * (a->n_head / s) >= cb->n_threads) return s;
    return 1;
}

/* The caller reserved scratch for pos0 + n_tok positions (see reserve). */
static void cpu_attention(eng_backend *be, const eng_attn_args *a) {
    cpu_backend *cb = (cpu_backend *)be;
    /* f32 rows (the exact path's reference cache) by the scalar reference only */
    const int f32 = a->kv->type_k == ENG_TYPE_F32 || a->kv->type_v == ENG_TYPE_F32;
    attn_task at = {.a = a, .cb = cb, .fast = !f32 && cb->k.attn_head && a->head_dim % 8 == 0};
    atomic_init(&at.next, 0);
    if (!f32 && cb->k.attn_head_f32 && (a->head_dim == 64 || a->head_dim == 128 || a->head_dim == 256)) {
        /* for a batch, convert every key once instead of once per head and query
         * token; a few tokens (or no buffer) convert as they load: the same values */
        at.fast = 2;
        at.group = attn_group_size(cb, a);
        const int end = a->pos0 + a->n_tok;
        const size_t ld = (size_t)a->n_kv_head * (size_t)a->head_dim;
        if (a->n_tok >= 4 && cpu_grow(&cb->kvf, &cb->kvf_cap, 2 * (size_t)end * ld * sizeof(float)) == 0) {
            at.kf = cb->kvf;
            at.vf = at.kf + (size_t)end * ld;
            at.j0 = a->window > 0 && a->pos0 - a->window + 1 > 0 ? a->pos0 - a->window + 1 : 0;
            at.j1 = end;
            if ((size_t)(at.j1 - at.j0) * ld >= 16384)
                eng_pool_run(cb->pool, attn_convert, &at);
            else
                attn_convert(&at, 0, 1);
        }
    }
    eng_pool_run(cb->pool, attn_run, &at);
}

/* --- lifecycle ---------------------------------------------------------- */

static int cpu_n_threads(const eng_backend *be) { return ((const cpu_backend *)be)->n_threads; }

static void cpu_destroy(eng_backend *be) {
    cpu_backend *cb = (cpu_backend *)be;
    eng_pool_free(cb->pool);
    free(cb->act);
    free(cb->scores);
    free(cb->kvf);
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
    .get_rows = cpu_get_rows,
    .rmsnorm = cpu_rmsnorm,
    .rope = cpu_rope,
    .kv_store = cpu_kv_store,
    .attention = cpu_attention,
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
