/* engine/backend_cpu.c: the CPU backend. Scalar, readable kernels over the
 * quant traits table, split across a thread pool by output row (matmul) or by
 * (token, head) (attention). Every output element is computed by exactly one
 * thread in a fixed order, so results do not depend on the thread count or on
 * how a sequence is chunked. SIMD kernels plug in through the traits table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "quant.h"
#include "threadpool.h"

typedef struct cpu_backend {
    eng_backend base;
    eng_pool *pool;
    int n_threads;
    void *act;          /* quantized activations for the current matmul */
    size_t act_cap;
    float *scores;      /* per-thread attention score rows */
    size_t scores_cap;  /* floats per thread */
} cpu_backend;

static int cpu_grow(void **p, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t n = need + need / 2 + 64;
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
    const eng_type_traits *tr;
    const char *act;    /* n_tok rows of act_row bytes, or the f32 input */
    size_t act_row;
    const float *x;
    int64_t cols;
    float *y;
    int n_tok;
} mm_task;

static void mm_quantize(void *arg, int ith, int nth) {
    mm_task *t = arg;
    const eng_type_traits *vt = eng_type_get(t->tr->vec_dot_type);
    for (int i = ith; i < t->n_tok; i += nth)
        vt->from_float(t->x + (size_t)i * (size_t)t->cols, (char *)t->act + (size_t)i * t->act_row,
                       t->cols);
}

static void mm_rows(void *arg, int ith, int nth) {
    mm_task *t = arg;
    const eng_weight *w = t->w;
    int64_t r0 = w->rows * ith / nth, r1 = w->rows * (ith + 1) / nth;
    const char *base = w->data;
    for (int64_t r = r0; r < r1; r++) {
        const void *wrow = base + (size_t)r * w->row_bytes;
        for (int i = 0; i < t->n_tok; i++) {
            float s;
            t->tr->vec_dot(t->cols, &s, wrow, t->act + (size_t)i * t->act_row);
            t->y[(size_t)i * (size_t)w->rows + (size_t)r] = s;
        }
    }
}

static int cpu_matmul(eng_backend *be, const eng_weight *w, const float *x, float *y, int n_tok,
                      util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    const eng_type_traits *tr = eng_type_get(w->type);
    if (!tr || !tr->supported || !tr->vec_dot)
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': no kernel for type %u", w->name,
                            w->type);
    mm_task t = {.w = w, .tr = tr, .x = x, .cols = w->cols, .y = y, .n_tok = n_tok};
    if (tr->vec_dot_type == ENG_TYPE_F32) {
        t.act = (const char *)x;
        t.act_row = (size_t)w->cols * sizeof(float);
    } else {
        t.act_row = eng_type_row_size(tr->vec_dot_type, w->cols);
        if (!t.act_row || cpu_grow(&cb->act, &cb->act_cap, t.act_row * (size_t)n_tok))
            return util_err_set(err, UTIL_ENOMEM, "matmul '%s': activation buffer", w->name);
        t.act = cb->act;
        if (n_tok >= 4) eng_pool_run(cb->pool, mm_quantize, &t);
        else mm_quantize(&t, 0, 1);
    }
    eng_pool_run(cb->pool, mm_rows, &t);
    return UTIL_OK;
}

static int cpu_get_rows(eng_backend *be, const eng_weight *w, const int32_t *ids, int n,
                        float *out, util_err *err) {
    const eng_type_traits *tr = eng_type_get(w->type);
    if (!tr || !tr->supported)
        return util_err_set(err, UTIL_EUNSUPPORTED, "tensor '%s': no kernel for type %u", w->name,
                            w->type);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= w->rows)
            return util_err_set(err, UTIL_ERANGE, "token id %d outside the vocabulary (%lld)",
                                ids[i], (long long)w->rows);
        tr->to_float((const char *)w->data + (size_t)ids[i] * w->row_bytes,
                     out + (size_t)i * (size_t)w->cols, w->cols);
    }
    return UTIL_OK;
}

/* --- elementwise ------------------------------------------------------- */

static void cpu_rmsnorm(eng_backend *be, float *y, const float *x, const float *w, int n,
                        int n_rows, float eps) {
    for (int r = 0; r < n_rows; r++) {
        const float *xr = x + (size_t)r * (size_t)n;
        float *yr = y + (size_t)r * (size_t)n;
        double sum = 0.0;
        for (int i = 0; i < n; i++) sum += (double)xr[i] * (double)xr[i];
        float mean = (float)(sum / n);
        float s = 1.0f / sqrtf(mean + eps);
        for (int i = 0; i < n; i++) yr[i] = (xr[i] * s) * w[i];
    }
}

static void cpu_rope(eng_backend *be, float *x, int n_tok, int n_head, int head_dim, int n_rot,
                     int pos0, float base, float freq_scale, int neox) {
    float theta_scale = powf(base, -2.0f / (float)n_rot);
    int half = n_rot / 2;
    for (int t = 0; t < n_tok; t++) {
        float *xt = x + (size_t)t * (size_t)n_head * (size_t)head_dim;
        float theta = (float)(pos0 + t) * freq_scale;
        for (int i = 0; i < half; i++) {
            float c = cosf(theta), s = sinf(theta);
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

static void cpu_kv_store(eng_backend *be, const eng_kv_view *kv, int layer, const float *k,
                         const float *v, int n_tok, int pos0) {
    for (int t = 0; t < n_tok; t++) {
        uint16_t *kd = eng_kv_k(kv, layer, pos0 + t), *vd = eng_kv_v(kv, layer, pos0 + t);
        const float *ks = k + (size_t)t * (size_t)kv->kv_dim, *vs = v + (size_t)t * (size_t)kv->kv_dim;
        for (int i = 0; i < kv->kv_dim; i++) {
            kd[i] = eng_f32_to_f16(ks[i]);
            vd[i] = eng_f32_to_f16(vs[i]);
        }
    }
}

static void cpu_swiglu(eng_backend *be, float *out, const float *gate, const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
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
} attn_task;

/* One (token, head): scores over visible keys in position order, softmax with
 * the max subtracted, then the weighted sum of values in position order. */
static void attn_one(const eng_attn_args *a, int t, int h, float *sc) {
    int hd = a->head_dim, p = a->pos0 + t;
    int g = h / (a->n_head / a->n_kv_head);
    int lo = a->window > 0 && p - a->window + 1 > 0 ? p - a->window + 1 : 0;
    const float *q = a->q + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float *o = a->out + ((size_t)t * (size_t)a->n_head + (size_t)h) * (size_t)hd;
    float mx = -INFINITY;
    for (int j = lo; j <= p; j++) {
        const uint16_t *k = eng_kv_k(a->kv, a->layer, j) + (size_t)g * (size_t)hd;
        float s = 0.0f;
        for (int d = 0; d < hd; d++) s += q[d] * eng_f16_to_f32(k[d]);
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
        const uint16_t *v = eng_kv_v(a->kv, a->layer, j) + (size_t)g * (size_t)hd;
        float wj = sc[j - lo] * inv;
        for (int d = 0; d < hd; d++) o[d] += wj * eng_f16_to_f32(v[d]);
    }
}

static void attn_run(void *arg, int ith, int nth) {
    attn_task *at = arg;
    const eng_attn_args *a = at->a;
    float *sc = at->cb->scores + (size_t)ith * at->cb->scores_cap;
    int jobs = a->n_tok * a->n_head;
    for (int j = ith; j < jobs; j += nth) attn_one(a, j / a->n_head, j % a->n_head, sc);
}

static int cpu_reserve(eng_backend *be, int n_ctx, util_err *err) {
    cpu_backend *cb = (cpu_backend *)be;
    size_t need = (size_t)n_ctx + 16;
    if (need <= cb->scores_cap) return UTIL_OK;
    float *s = malloc(need * (size_t)cb->n_threads * sizeof(float));
    if (!s) return util_err_set(err, UTIL_ENOMEM, "cpu backend: attention scratch for %d tokens", n_ctx);
    free(cb->scores);
    cb->scores = s;
    cb->scores_cap = need;
    return UTIL_OK;
}

/* The caller reserved scratch for pos0 + n_tok positions (see reserve). */
static void cpu_attention(eng_backend *be, const eng_attn_args *a) {
    cpu_backend *cb = (cpu_backend *)be;
    attn_task at = {a, cb};
    eng_pool_run(cb->pool, attn_run, &at);
}

/* --- lifecycle ---------------------------------------------------------- */

static int cpu_n_threads(const eng_backend *be) { return ((const cpu_backend *)be)->n_threads; }

static void cpu_destroy(eng_backend *be) {
    cpu_backend *cb = (cpu_backend *)be;
    eng_pool_free(cb->pool);
    free(cb->act);
    free(cb->scores);
    free(cb);
}

static const eng_backend_ops cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .n_threads = cpu_n_threads,
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

int eng_backend_cpu_new(eng_backend **out, int n_threads, util_err *err) {
    *out = NULL;
    if (n_threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = n > 0 ? (int)n : 1;
    }
    if (n_threads > 256) n_threads = 256;
    cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb) return util_err_set(err, UTIL_ENOMEM, "cpu backend: out of memory");
    cb->base.ops = &cpu_ops;
    cb->pool = eng_pool_new(n_threads);
    if (!cb->pool) {
        free(cb);
        return util_err_set(err, UTIL_ENOMEM, "cpu backend: cannot start %d threads", n_threads);
    }
    cb->n_threads = eng_pool_size(cb->pool);
    *out = &cb->base;
    return UTIL_OK;
}

void eng_backend_free(eng_backend *be) {
    if (be) be->ops->destroy(be);
}
