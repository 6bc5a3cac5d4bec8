/* tests/test_cuda.c: the CUDA backend against the CPU (`make test-cuda`). Every
 * op and quant type on the GPU vs the CPU's scalar reference (exact mode: f32
 * activations), with a normalised error bound stated per op; batch invariance
 * on the GPU; end to end on synthetic llama models (logits, greedy tokens, and a
 * prefix-cache hit vs a cold run). Without CUDA in the build, or without a GPU,
 * it says so and skips. Gemma3 shapes wait for the gemma3 forward pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../engine/cpu/cpu_features.h"
#include "../engine/engine.h"
#include "../engine/quant.h"
#include "check.h"
#include "helpers.h"
#include "proc.h"
#include "synth.h"

#ifndef CACHET_CUDA

static void test_no_backend(void) {
    eng_backend *be = NULL;
    util_err err;
    CHECK(eng_backend_cuda_count() == 0);
    CHECK(eng_backend_cuda_new(&be, 0, &err) == UTIL_EUNSUPPORTED && be == NULL);
    CHECK(strstr(err.msg, "make cuda") != NULL);
    CHECK_SKIP("this build has no CUDA backend; `make test-cuda` builds one");
}

void test_cuda(void) { CHECK_CASE(no_backend) test_no_backend(); }

#else

/* --- helpers ------------------------------------------------------------------ */

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static float frand(void) { return th_rng_unit(&g_rng); } /* uniform in [-1, 1) */

static void fill(float *x, size_t n, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = frand() * scale;
}

/* A device copy of n floats (or NULL to only allocate). */
static float *dput(eng_backend *g, const float *h, size_t n) {
    float *d = g->ops->alloc(g, n * sizeof(float));
    util_err err;
    if (d && h) CHECK(g->ops->to_dev(g, d, h, n * sizeof(float), &err) == 0);
    return d;
}

static void dget(eng_backend *g, float *h, const float *d, size_t n) {
    util_err err;
    int rc = g->ops->to_host(g, h, d, n * sizeof(float), &err);
    CHECK_MSG(rc == 0, "to_host: %s", rc ? err.msg : "");
}

/* max |a - b| / max(norm, tiny): the normalised error of an op */
static double max_err(const float *a, const float *b, size_t n, const float *norm) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double s = norm ? norm[i] : 1.0;
        if (!(d <= 1e300)) return INFINITY; /* NaN */
        if (s < 1e-30) s = 1e-30;
        if (d / s > worst) worst = d / s;
    }
    return worst;
}

static double max_abs(const float *a, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

static const uint32_t k_types[] = {ENG_TYPE_F32,  ENG_TYPE_F16,  ENG_TYPE_BF16, ENG_TYPE_Q4_0,
                                   ENG_TYPE_Q4_1, ENG_TYPE_Q5_0, ENG_TYPE_Q5_1, ENG_TYPE_Q8_0,
                                   ENG_TYPE_Q4_K, ENG_TYPE_Q5_K, ENG_TYPE_Q6_K};

/* A random weight of `type` (host data; dev set by load on g). */
static void *make_weight(eng_weight *w, uint32_t type, int64_t rows, int64_t cols) {
    size_t rb = eng_type_row_size(type, cols);
    unsigned char *data = malloc(rb * (size_t)rows);
    float *row = malloc((size_t)cols * sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        fill(row, (size_t)cols, 1.0f);
        synth_quantize_row(type, row, data + (size_t)r * rb, cols);
    }
    free(row);
    memset(w, 0, sizeof *w);
    w->name = "test";
    w->type = type;
    w->rows = rows;
    w->cols = cols;
    w->row_bytes = rb;
    w->data = data;
    return data;
}

/* --- ops ------------------------------------------------------------------------ */

/* matmul: GPU decode (matvec, f32) and prefill (cuBLAS, f16 inputs) vs the CPU's
 * exact reference. Bound: |y_gpu - y_ref| <= tol * sum_c |w_rc x_tc| with tol
 * 2e-5 for matvec (f32 sums in another order) and 2e-3 for the GEMM (weights
 * and activations rounded to f16: 2^-11 relative each). Batch invariance: a
 * token's result is bit-identical whatever the call's token count. */
static void test_matmul(eng_backend *g, eng_backend *c) {
    const int64_t rows = 67, cols = 512;
    const int n_toks[] = {1, 3, 9, 70};
    util_err err;
    for (size_t ti = 0; ti < sizeof k_types / sizeof k_types[0]; ti++) {
        uint32_t type = k_types[ti];
        eng_weight w;
        void *data = make_weight(&w, type, rows, cols);
        int rc = g->ops->load(g, &w, &err);
        CHECK_MSG(rc == 0 && w.dev, "load %s: %s", eng_type_get(type)->name, rc ? err.msg : "");
        if (rc) {
            free(data);
            continue;
        }
        float *deq = malloc((size_t)(rows * cols) * sizeof(float));
        for (int64_t r = 0; r < rows; r++)
            eng_type_get(type)->to_float((const char *)data + (size_t)r * w.row_bytes, deq + r * cols, cols);
        int nmax = 70;
        float *x = malloc((size_t)(nmax * cols) * sizeof(float));
        fill(x, (size_t)(nmax * cols), 2.0f);
        float *ref = malloc((size_t)(nmax * rows) * sizeof(float));
        float *norm = malloc((size_t)(nmax * rows) * sizeof(float));
        CHECK(c->ops->matmul(c, &w, x, ref, nmax, ENG_PASS_PROMPT, &err) == 0);
        for (int t = 0; t < nmax; t++)
            for (int64_t r = 0; r < rows; r++) {
                double s = 0;
                for (int64_t k = 0; k < cols; k++) s += fabs(deq[r * cols + k] * x[t * cols + k]);
                norm[t * rows + r] = (float)s;
            }
        float *dx = dput(g, x, (size_t)(nmax * cols)), *dy = dput(g, NULL, (size_t)(nmax * rows));
        float *y = malloc((size_t)(nmax * rows) * sizeof(float));
        float *first[2] = {malloc((size_t)(nmax * rows) * sizeof(float)),
                           malloc((size_t)(nmax * rows) * sizeof(float))};
        for (int prefill = 0; prefill <= 1; prefill++) {
            double tol = prefill ? 2e-3 : 2e-5;
            eng_pass pass = prefill ? ENG_PASS_PROMPT : ENG_PASS_DECODE;
            for (size_t k = 0; k < sizeof n_toks / sizeof n_toks[0]; k++) {
                int n = n_toks[k];
                /* the same tokens at another offset: token 0 of this call is token (70 - n) */
                const float *xs = dx + (size_t)(nmax - n) * (size_t)cols;
                rc = g->ops->matmul(g, &w, xs, dy, n, pass, &err);
                CHECK_MSG(rc == 0, "matmul: %s", rc ? err.msg : "");
                dget(g, y, dy, (size_t)n * (size_t)rows);
                size_t off = (size_t)(nmax - n) * (size_t)rows;
                double e = max_err(y, ref + off, (size_t)n * (size_t)rows, norm + off);
                CHECK_MSG(e <= tol, "%s %s n=%d: normalised error %.3g > %.3g", eng_type_get(type)->name,
                          prefill ? "prefill" : "decode", n, e, tol);
                if (n == nmax) memcpy(first[prefill], y, (size_t)(n * rows) * sizeof(float));
            }
            /* the last token of every call above: bit-identical to the 70-token call's */
            for (size_t k = 0; k < sizeof n_toks / sizeof n_toks[0]; k++) {
                int n = n_toks[k];
                const float *xs = dx + (size_t)(nmax - n) * (size_t)cols;
                CHECK(g->ops->matmul(g, &w, xs, dy, n, pass, &err) == 0);
                dget(g, y, dy, (size_t)n * (size_t)rows);
                CHECK_MSG(memcmp(y, first[prefill] + (size_t)(nmax - n) * (size_t)rows,
                                 (size_t)(n * rows) * sizeof(float)) == 0,
                          "%s %s: %d tokens per call changed a token's bits", eng_type_get(type)->name,
                          prefill ? "prefill" : "decode", n);
            }
        }
        /* get_rows: the same dequantized values, bit for bit */
        int32_t ids[5] = {0, 66, 13, 13, 40};
        float *rows_g = malloc(5 * (size_t)cols * sizeof(float)), *dr = dput(g, NULL, 5 * (size_t)cols);
        CHECK(g->ops->get_rows(g, &w, ids, 5, dr, &err) == 0);
        dget(g, rows_g, dr, 5 * (size_t)cols);
        int same = 1;
        for (int i = 0; i < 5; i++)
            same &= memcmp(rows_g + (size_t)i * (size_t)cols, deq + ids[i] * cols,
                           (size_t)cols * sizeof(float)) == 0;
        CHECK_MSG(same, "get_rows %s differs from the reference dequantizer", eng_type_get(type)->name);
        int32_t bad = (int32_t)rows;
        CHECK(g->ops->get_rows(g, &w, &bad, 1, dr, &err) == UTIL_ERANGE);
        g->ops->release(g, dr);
        /* the matvec's decoders (its own 16/32-bit fetch for q4_0 q4_1 q8_0): with
         * a one-hot x, y[t][r] = 0 + ... + w[r][c_t] * 1 + ... exactly (the other
         * products are +-0, every sum with +0 is exact), so the decoded weights
         * must equal the reference dequantizer's (==, as -0 becomes +0) */
        enum { NH = 9 };
        float *hot = calloc((size_t)NH * (size_t)cols, sizeof(float));
        float *yh = malloc((size_t)NH * (size_t)rows * sizeof(float));
        int hot_c[NH];
        for (int t = 0; t < NH; t++) {
            hot_c[t] = (int)((t * 61 + 7 * (t & 1)) % cols); /* several groups and block positions */
            hot[(size_t)t * (size_t)cols + (size_t)hot_c[t]] = 1.0f;
        }
        float *dh = dput(g, hot, (size_t)NH * (size_t)cols), *dyh = dput(g, NULL, (size_t)NH * (size_t)rows);
        CHECK(g->ops->matmul(g, &w, dh, dyh, NH, ENG_PASS_DECODE, &err) == 0);
        dget(g, yh, dyh, (size_t)NH * (size_t)rows);
        int exact = 1;
        for (int t = 0; t < NH; t++)
            for (int64_t r = 0; r < rows; r++)
                exact &= yh[(size_t)t * (size_t)rows + (size_t)r] == deq[r * cols + hot_c[t]];
        CHECK_MSG(exact, "matvec %s: a one-hot x does not give the reference weights exactly",
                  eng_type_get(type)->name);
        g->ops->release(g, dh);
        g->ops->release(g, dyh);
        free(hot);
        free(yh);
        free(rows_g);
        g->ops->release(g, dx);
        g->ops->release(g, dy);
        free(first[0]);
        free(first[1]);
        free(y);
        free(norm);
        free(ref);
        free(x);
        free(deq);
        free(data);
    }
}

/* Prefill with the kept f16 copy of a weight == with the weight dequantized
 * on every call (CACHET_CUDA_F16_WEIGHTS=0), bit for bit: the same tiles at the
 * same alignment. A weight taller than one tile (32M values) covers the tiling. */
static void test_f16_copies(void) {
    const int64_t shapes[][2] = {{67, 512}, {(32 << 20) / 256 + 37, 256}};
    util_err err;
    for (int k = 0; k < 2; k++) {
        eng_backend *a = NULL, *b = NULL;
        setenv("CACHET_CUDA_F16_WEIGHTS", "0", 1);
        int rc = eng_backend_cuda_new(&b, 0, &err);
        unsetenv("CACHET_CUDA_F16_WEIGHTS");
        if (rc || eng_backend_cuda_new(&a, 0, &err)) {
            CHECK_MSG(0, "cuda backend: %s", err.msg);
            eng_backend_free(b);
            return;
        }
        int64_t rows = shapes[k][0], cols = shapes[k][1];
        eng_weight wa, wb;
        void *data = make_weight(&wa, ENG_TYPE_Q4_1, rows, cols);
        wb = wa;
        CHECK(a->ops->load(a, &wa, &err) == 0 && b->ops->load(b, &wb, &err) == 0);
        CHECK_MSG(wa.dev_f16 != NULL && wb.dev_f16 == NULL, "f16 copy kept: %d / %d", wa.dev_f16 != NULL,
                  wb.dev_f16 != NULL);
        int n = 70;
        float *x = malloc((size_t)(n * cols) * sizeof(float));
        fill(x, (size_t)(n * cols), 1.0f);
        float *ya = malloc((size_t)(n * rows) * sizeof(float)),
              *yb = malloc((size_t)(n * rows) * sizeof(float));
        float *dxa = dput(a, x, (size_t)(n * cols)), *dya = dput(a, NULL, (size_t)(n * rows));
        float *dxb = dput(b, x, (size_t)(n * cols)), *dyb = dput(b, NULL, (size_t)(n * rows));
        CHECK(a->ops->matmul(a, &wa, dxa, dya, n, ENG_PASS_PROMPT, &err) == 0 &&
              b->ops->matmul(b, &wb, dxb, dyb, n, ENG_PASS_PROMPT, &err) == 0);
        dget(a, ya, dya, (size_t)(n * rows));
        dget(b, yb, dyb, (size_t)(n * rows));
        CHECK_MSG(memcmp(ya, yb, (size_t)(n * rows) * sizeof(float)) == 0,
                  "prefill %lldx%lld: kept f16 copy != dequantized per call", (long long)rows,
                  (long long)cols);
        a->ops->release(a, dxa);
        a->ops->release(a, dya);
        b->ops->release(b, dxb);
        b->ops->release(b, dyb);
        free(x);
        free(ya);
        free(yb);
        free(data);
        eng_backend_free(a);
        eng_backend_free(b);
    }
}

/* rmsnorm, rope, swiglu, geglu, add, scale: same formulas, f32; bounds relative
 * to the largest output (rmsnorm 1e-5, rope 1e-5: sinf/cosf differ by ulps,
 * activations 1e-6). */
static void test_elementwise(eng_backend *g, eng_backend *c) {
    enum { N = 576, R = 5, H = 9, HD = 64 };
    float x[R * N], w[N], y[R * N], ref[R * N];
    fill(x, R * N, 40.0f);
    fill(w, N, 1.5f);
    float *dx = dput(g, x, R * N), *dw = dput(g, w, N), *dy = dput(g, NULL, R * N);
    g->ops->rmsnorm(g, dy, dx, dw, N, R, 1e-5f);
    dget(g, y, dy, R * N);
    c->ops->rmsnorm(c, ref, x, w, N, R, 1e-5f);
    double e = max_err(y, ref, R * N, NULL) / max_abs(ref, R * N);
    CHECK_MSG(e <= 1e-5, "rmsnorm: relative error %.3g", e);

    for (int neox = 0; neox <= 1; neox++) {
        float q[R * H * HD];
        fill(q, R * H * HD, 3.0f);
        float *dq = dput(g, q, R * H * HD);
        eng_rope_args ra = {.x = dq,
                            .n_tok = R,
                            .n_head = H,
                            .head_dim = HD,
                            .n_rot = HD,
                            .pos0 = 1000,
                            .base = 10000.0f,
                            .freq_scale = 1.0f,
                            .mode = neox ? ENG_ROPE_NEOX : ENG_ROPE_NORMAL};
        g->ops->rope(g, &ra);
        float got[R * H * HD];
        dget(g, got, dq, R * H * HD);
        ra.x = q;
        c->ops->rope(c, &ra);
        e = max_err(got, q, R * H * HD, NULL) / max_abs(q, R * H * HD);
        CHECK_MSG(e <= 1e-5, "rope neox=%d: relative error %.3g", neox, e);
        g->ops->release(g, dq);
    }

    float a[R * N], b[R * N];
    fill(a, R * N, 6.0f);
    fill(b, R * N, 2.0f);
    for (int op = 0; op < 4; op++) {
        float *da = dput(g, a, R * N), *db = dput(g, b, R * N);
        memcpy(ref, a, sizeof a);
        static const char *names[] = {"swiglu", "geglu", "add", "scale"};
        switch (op) {
        case 0:
            g->ops->swiglu(g, da, da, db, R * N);
            c->ops->swiglu(c, ref, ref, b, R * N);
            break;
        case 1:
            g->ops->geglu(g, da, da, db, R * N);
            c->ops->geglu(c, ref, ref, b, R * N);
            break;
        case 2:
            g->ops->add(g, da, db, R * N);
            c->ops->add(c, ref, b, R * N);
            break;
        default:
            g->ops->scale(g, da, 0.37f, R * N);
            c->ops->scale(c, ref, 0.37f, R * N);
            break;
        }
        dget(g, y, da, R * N);
        e = max_err(y, ref, R * N, NULL) / max_abs(ref, R * N);
        CHECK_MSG(e <= 1e-6, "%s: relative error %.3g", names[op], e);
        g->ops->release(g, da);
        g->ops->release(g, db);
    }
    g->ops->release(g, dx);
    g->ops->release(g, dw);
    g->ops->release(g, dy);
}

/* kv_store writes the same f16 bits as the CPU (round to nearest even);
 * attention over paged KV matches the CPU within 1e-4 of max |v| (f32 online
 * softmax vs the CPU's two passes) and is bit-identical whether queries come
 * one per call or all at once. GQA, MQA, head dims 64 and 256, a window. */
static void test_attention(eng_backend *g, eng_backend *c) {
    struct {
        int n_head, n_kv, hd, window;
    } shapes[] = {{4, 2, 64, 0}, {4, 1, 256, 0}, {8, 8, 64, 5}, {2, 1, 128, 40}};
    enum { P = 16, L = 2, NPOS = 90 };
    util_err err;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int nh = shapes[si].n_head, nkv = shapes[si].n_kv, hd = shapes[si].hd, win = shapes[si].window;
        int kvd = nkv * hd, qd = nh * hd, np = (NPOS + P - 1) / P;
        eng_kv_view hv, dv;
        eng_kv_view_init(&hv, P, L, kvd, ENG_TYPE_F16, ENG_TYPE_F16);
        dv = hv;
        size_t page_bytes = eng_kv_page_bytes(&hv);
        void *hp[8], *dp[8];
        int pages_ok = 1;
        for (int i = 0; i < np; i++) {
            hp[i] = calloc(page_bytes, 1);
            dp[i] = g->ops->alloc(g, page_bytes);
            /* zeroed like the host pages: layer 0 and the positions past NPOS
             * are never stored, and the pages are compared whole below */
            pages_ok &= hp[i] && dp[i] && g->ops->to_dev(g, dp[i], hp[i], page_bytes, &err) == 0;
        }
        CHECK_MSG(pages_ok, "kv pages (hd %d)", hd);
        if (!pages_ok) {
            for (int i = 0; i < np; i++) {
                free(hp[i]);
                if (dp[i]) g->ops->release(g, dp[i]);
            }
            continue;
        }
        /* the CPU's attention scratch (scores per thread) is sized by reserve */
        CHECK(c->ops->reserve(c, NPOS, &err) == 0 && g->ops->reserve(g, NPOS, &err) == 0);
        hv.pages = hp;
        dv.pages = dp;
        float *k = malloc((size_t)NPOS * (size_t)kvd * sizeof(float)),
              *v = malloc((size_t)NPOS * (size_t)kvd * sizeof(float));
        fill(k, (size_t)NPOS * (size_t)kvd, 2.0f);
        fill(v, (size_t)NPOS * (size_t)kvd, 2.0f);
        float *dk = dput(g, k, (size_t)NPOS * (size_t)kvd), *dvv = dput(g, v, (size_t)NPOS * (size_t)kvd);
        /* store in uneven chunks on both sides, layer 1 */
        int cuts[] = {0, 1, 17, 40, 41, NPOS};
        for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++) {
            int p0 = cuts[i], n = cuts[i + 1] - cuts[i];
            g->ops->kv_store(g, &dv, 1, dk + (size_t)p0 * (size_t)kvd, dvv + (size_t)p0 * (size_t)kvd, n, p0);
            c->ops->kv_store(c, &hv, 1, k + (size_t)p0 * (size_t)kvd, v + (size_t)p0 * (size_t)kvd, n, p0);
        }
        int same = 1;
        void *back = malloc(page_bytes);
        for (int i = 0; i < np; i++) {
            CHECK(g->ops->to_host(g, back, dp[i], page_bytes, &err) == 0);
            same &= memcmp(back, hp[i], page_bytes) == 0;
        }
        CHECK_MSG(same, "kv_store: pages differ from the CPU's (hd %d)", hd);
        free(back);

        const int nq = 30, pos0 = NPOS - nq;
        float *q = malloc((size_t)nq * (size_t)qd * sizeof(float)),
              *ref = malloc((size_t)nq * (size_t)qd * sizeof(float));
        float *got = malloc((size_t)nq * (size_t)qd * sizeof(float)),
              *one = malloc((size_t)nq * (size_t)qd * sizeof(float));
        fill(q, (size_t)nq * (size_t)qd, 1.0f);
        float *dq = dput(g, q, (size_t)nq * (size_t)qd), *dout = dput(g, NULL, (size_t)nq * (size_t)qd);
        float scale = 1.0f / sqrtf((float)hd);
        eng_attn_args ca = {ref, q, &hv, 1, nq, pos0, nh, nkv, hd, scale, win, ENG_PASS_PROMPT};
        c->ops->attention(c, &ca);
        /* prompt path (cu_attention) and decode path (split-K, chunks of
         * CU_ATT_CHUNK = 64 positions: queries 60..89 span one or two chunks,
         * with and without a window cutting the first) */
        float *got_path[2] = {malloc((size_t)nq * (size_t)qd * sizeof(float)),
                              malloc((size_t)nq * (size_t)qd * sizeof(float))};
        for (int prefill = 1; prefill >= 0; prefill--) {
            const char *path = prefill ? "prefill" : "decode";
            eng_pass pass = prefill ? ENG_PASS_PROMPT : ENG_PASS_DECODE;
            eng_attn_args ga = {dout, dq, &dv, 1, nq, pos0, nh, nkv, hd, scale, win, pass};
            g->ops->attention(g, &ga);
            dget(g, got, dout, (size_t)nq * (size_t)qd);
            double e = max_err(got, ref, (size_t)nq * (size_t)qd, NULL) / 2.0;
            CHECK_MSG(e <= 1e-4, "attention %s %d/%d heads, hd %d, window %d: error %.3g of max|v|", path, nh,
                      nkv, hd, win, e);
            for (int t = 0; t < nq; t++) {
                eng_attn_args a1 = {dout + (size_t)t * (size_t)qd,
                                    dq + (size_t)t * (size_t)qd,
                                    &dv,
                                    1,
                                    1,
                                    pos0 + t,
                                    nh,
                                    nkv,
                                    hd,
                                    scale,
                                    win,
                                    pass};
                g->ops->attention(g, &a1);
            }
            dget(g, one, dout, (size_t)nq * (size_t)qd);
            CHECK_MSG(memcmp(one, got, (size_t)nq * (size_t)qd * sizeof(float)) == 0,
                      "attention %s: one query per call changed bits (hd %d)", path, hd);
            memcpy(got_path[prefill], got, (size_t)nq * (size_t)qd * sizeof(float));
        }
        /* the two paths sum in another order: close, not bit-identical */
        double e2 = max_err(got_path[0], got_path[1], (size_t)nq * (size_t)qd, NULL) / 2.0;
        CHECK_MSG(e2 <= 1e-5, "attention split vs single pass, hd %d window %d: %.3g of max|v|", hd, win, e2);
        free(got_path[0]);
        free(got_path[1]);
        g->ops->release(g, dq);
        g->ops->release(g, dout);
        g->ops->release(g, dk);
        g->ops->release(g, dvv);
        free(q);
        free(ref);
        free(got);
        free(one);
        free(k);
        free(v);
        for (int i = 0; i < np; i++) {
            free(hp[i]);
            g->ops->release(g, dp[i]);
        }
    }
}

/* --- end to end on synthetic models ----------------------------------------------- */

static char g_dir[64];

static eng_model *open_synth(const char *path, const char *device, int exact, int no_cache) {
    eng_model_params mp = {
        .n_threads = 2, .device = device, .exact = exact, .no_cache = no_cache, .no_disk_cache = 1};
    return th_open_model_with(path, &mp);
}

static float *prompt_logits(eng_model *m, const int32_t *toks, int n, int n_batch, int *cached) {
    int nv = eng_model_n_vocab(m), mem = 0, disk = 0;
    float *lg = malloc((size_t)nv * sizeof(float));
    eng_seq *s = NULL;
    util_err err;
    CHECK(eng_seq_new(&s, m, 1024, &err) == 0);
    if (!s) return lg;
    if (n_batch) eng_seq_set_batch(s, n_batch);
    int rc = eng_seq_set_tokens(s, toks, n, lg, &mem, &disk, &err);
    CHECK_MSG(rc == 0, "set_tokens: %s", rc ? err.msg : "");
    if (cached) *cached = mem + disk;
    eng_seq_free(s);
    return lg;
}

static int argmax2(const float *x, int n, double *margin) {
    int a = 0, b = -1;
    for (int i = 1; i < n; i++) {
        if (x[i] > x[a]) {
            b = a;
            a = i;
        } else if (b < 0 || x[i] > x[b]) {
            b = i;
        }
    }
    *margin = b >= 0 ? (double)x[a] - (double)x[b] : INFINITY;
    return a;
}

/* Logits GPU vs CPU exact within 3e-2 of the logits' range (prefill rounds
 * GEMM inputs to f16 in every layer); greedy tokens identical at every step
 * whose CPU top-2 margin exceeds that bound; prefix-cache hit == cold on the
 * GPU, bit for bit. */
static void test_model(uint32_t wtype, int n_layer, int n_embd, int n_head, int n_kv, int head_dim) {
    synth_params p = synth_defaults();
    p.n_layer = n_layer;
    p.n_embd = n_embd;
    p.n_head = n_head;
    p.n_kv_head = n_kv;
    p.head_dim = head_dim;
    p.n_ff = 2 * n_embd;
    p.n_vocab = 400;
    p.wtype = wtype;
    p.seed = 7 + wtype;
    char path[128];
    snprintf(path, sizeof path, "%s/synth-%s-%d.gguf", g_dir, eng_type_get(wtype)->name, n_embd);
    util_err err;
    int rc = synth_write(path, &p, &err);
    CHECK_MSG(rc == 0, "synth_write: %s", rc ? err.msg : "");
    if (rc) return;
    eng_model *gm = open_synth(path, "cuda", 0, 0), *cm = open_synth(path, "cpu", 1, 1);
    if (!gm || !cm) {
        eng_model_free(gm);
        eng_model_free(cm);
        return;
    }
    int nv = eng_model_n_vocab(gm), n = 150;
    int32_t toks[200];
    for (int i = 0; i < 200; i++) toks[i] = (int32_t)(3 + (i * 37 + 11) % (nv - 3));
    /* the command line on the GPU, where this build has one (cachet-gpu alone has not) */
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/cachet", proc_bin_dir());
    if (wtype == ENG_TYPE_Q4_1 && access(exe, X_OK) == 0) {
        proc_result r = proc_runf(
            "'%s' generate --model '%s' --device cuda --prompt hello --max-tokens 4 --temp 0 "
            "--no-cache --json",
            exe, path);
        CHECK_MSG(r.status == 0 && r.out && strstr(r.out, "\"tokens\""),
                  "cachet generate --device cuda: exit %d: %s", r.status, r.err ? r.err : "");
        proc_result_free(&r);
    }
    float *gl = prompt_logits(gm, toks, n, 0, NULL), *cl = prompt_logits(cm, toks, n, 0, NULL);
    double range = max_abs(cl, (size_t)nv), e = max_err(gl, cl, (size_t)nv, NULL) / (range > 0 ? range : 1);
    double bound = 3e-2;
    CHECK_MSG(e <= bound, "%s: logits GPU vs CPU: %.3g of range > %.3g", path, e, bound);

    /* greedy decode, one token at a time on both */
    eng_seq *gs = NULL, *cs = NULL;
    CHECK(eng_seq_new(&gs, gm, 1024, &err) == 0 && eng_seq_new(&cs, cm, 1024, &err) == 0);
    int agree = 0, decided = 0;
    if (gs && cs) {
        CHECK(eng_seq_set_tokens(gs, toks, n, gl, NULL, NULL, &err) == 0);
        CHECK(eng_seq_set_tokens(cs, toks, n, cl, NULL, NULL, &err) == 0);
        for (int step = 0; step < 24; step++) {
            double mg, mc;
            int tg = argmax2(gl, nv, &mg), tc = argmax2(cl, nv, &mc);
            if (mc > 2 * bound * range) {
                decided++;
                agree += tg == tc;
            }
            if (tg != tc) break; /* the streams diverge: later steps compare different texts */
            int32_t id = tc;
            if (eng_seq_eval(gs, &id, 1, gl, &err) || eng_seq_eval(cs, &id, 1, cl, &err)) break;
        }
    }
    CHECK_MSG(agree == decided, "%s: greedy agrees at %d of %d decided steps", path, agree, decided);
    fprintf(stderr, "  cuda %-6s embd %4d: logits err %.2e of range, greedy %d/%d decided steps agree\n",
            eng_type_get(wtype)->name, n_embd, e, agree, decided);
    eng_seq_free(gs);
    eng_seq_free(cs);

    /* decode steps replayed as CUDA graphs == issued call by call, bit for bit:
     * two sequences taking turns (as in serve), 30 steps each from positions
     * 150 and 120, crossing page boundaries */
    setenv("CACHET_CUDA_GRAPHS", "0", 1);
    eng_model *nog = open_synth(path, "cuda", 0, 1);
    unsetenv("CACHET_CUDA_GRAPHS");
    if (nog) {
        eng_seq *a[2] = {NULL, NULL}, *b[2] = {NULL, NULL};
        float *la = malloc((size_t)nv * sizeof(float)), *lb = malloc((size_t)nv * sizeof(float));
        int same = 1, steps = 0, ok = 1;
        for (int q = 0; q < 2; q++) {
            int len = q ? 120 : n;
            const int32_t *pr = q ? toks + 10 : toks;
            ok &= eng_seq_new(&a[q], gm, 1024, &err) == 0 && eng_seq_new(&b[q], nog, 1024, &err) == 0 &&
                  eng_seq_set_tokens(a[q], pr, len, la, NULL, NULL, &err) == 0 &&
                  eng_seq_set_tokens(b[q], pr, len, lb, NULL, NULL, &err) == 0;
        }
        CHECK_MSG(ok, "graph test set-up: %s", err.msg);
        for (int i = 0; ok && i < 60 && same; i++, steps++) {
            int32_t id = toks[(i * 7) % n];
            int q = i % 2;
            int ra = eng_seq_eval(a[q], &id, 1, la, &err), rb = eng_seq_eval(b[q], &id, 1, lb, &err);
            same = ra == 0 && rb == 0 && memcmp(la, lb, (size_t)nv * sizeof(float)) == 0;
        }
        CHECK_MSG(same && steps == 60, "%s: decode with graphs != without at step %d", path, steps);
        for (int q = 0; q < 2; q++) {
            eng_seq_free(a[q]);
            eng_seq_free(b[q]);
        }
        free(la);
        free(lb);
        eng_model_free(nog);
    }

    /* prefix cache on the GPU: cold vs a hit from memory, bit for bit */
    int cached = 0;
    eng_model *cold = open_synth(path, "cuda", 0, 1);
    if (cold) {
        float *c1 = prompt_logits(cold, toks, n, 0, NULL);
        float *c7 = prompt_logits(cold, toks, n, 7, NULL);
        float *w1 = prompt_logits(gm, toks, n, 0, &cached); /* gm has seen toks: n - 1 cached */
        CHECK_EQ_INT(cached, n - 1);
        CHECK_MSG(memcmp(c1, w1, (size_t)nv * sizeof(float)) == 0, "%s: cache hit != cold on the GPU", path);
        CHECK_MSG(memcmp(c1, c7, (size_t)nv * sizeof(float)) == 0, "%s: prefill chunks of 7 != 512", path);
        /* a shared prefix of 70 tokens then a different suffix */
        int32_t other[200];
        memcpy(other, toks, sizeof other);
        for (int i = 70; i < 200; i++) other[i] = (int32_t)(3 + (i * 53 + 5) % (nv - 3));
        float *c2 = prompt_logits(cold, other, 120, 0, NULL), *w2 = prompt_logits(gm, other, 120, 0, &cached);
        CHECK_EQ_INT(cached, 70);
        CHECK_MSG(memcmp(c2, w2, (size_t)nv * sizeof(float)) == 0, "%s: 70-token prefix hit != cold", path);
        free(c1);
        free(c7);
        free(w1);
        free(c2);
        free(w2);
        eng_model_free(cold);
    }
    free(gl);
    free(cl);
    eng_model_free(gm);
    eng_model_free(cm);
    unlink(path);
}

/* The CUDA build's cachet on a machine without a GPU: --device cuda is a
 * clean error (exit 1, no crash), auto falls back to the CPU. */
static void test_cli_without_gpu(void) {
    char exe[4096];
    snprintf(exe, sizeof exe, "%s/cachet", proc_bin_dir());
    if (access(exe, X_OK) != 0) {
        CHECK_SKIP("%s not built: the command-line checks did not run", exe);
        return;
    }
    const char *model = check_model_path();
    char model_arg[4200] = "";
    if (model) snprintf(model_arg, sizeof model_arg, "--model '%s'", model);
    proc_result r = proc_runf("'%s' generate --device cuda --prompt hi --max-tokens 1 %s", exe, model_arg);
    CHECK_MSG(r.status == 1 && r.err && strstr(r.err, "no CUDA device"),
              "--device cuda without a GPU: exit %d: %s", r.status, r.err ? r.err : "");
    proc_result_free(&r);
    if (!model) return;
    r = proc_runf("env -u CACHET_DEVICE '%s' generate --model '%s' --device auto --prompt hi --max-tokens 2 "
                  "--temp 0 --threads 2 --no-cache --json",
                  exe, model);
    CHECK_MSG(r.status == 0 && r.out && strstr(r.out, "\"tokens\""),
              "--device auto without a GPU: exit %d: %s", r.status, r.err ? r.err : "");
    proc_result_free(&r);
}

void test_cuda(void) {
    int n = eng_backend_cuda_count();
    if (n == 0) {
        eng_backend *be = NULL;
        util_err err;
        CHECK(eng_backend_cuda_new(&be, 0, &err) != 0 && be == NULL);
        CHECK_CASE(cli_without_gpu) test_cli_without_gpu();
        CHECK_SKIP("no CUDA device on this machine (%s): the GPU checks did not run", err.msg);
        return;
    }
    eng_backend *g = NULL, *c = NULL;
    util_err err;
    int rc = eng_backend_cuda_new(&g, 0, &err);
    CHECK_MSG(rc == 0, "cuda backend: %s", rc ? err.msg : "");
    CHECK(eng_backend_cpu_new_level(&c, 2, ENG_SIMD_SCALAR, &err) == 0);
    if (!g || !c) {
        eng_backend_free(g);
        eng_backend_free(c);
        return;
    }
    eng_backend_cpu_set_exact(c);
    fprintf(stderr, "  cuda: %d device(s), backend %s, %.0f GB/s measured\n", n, g->ops->name,
            g->ops->bandwidth ? g->ops->bandwidth(g) / 1e9 : 0.0);
    CHECK_CASE(matmul) test_matmul(g, c);
    CHECK_CASE(f16_copies) test_f16_copies();
    CHECK_CASE(elementwise) test_elementwise(g, c);
    CHECK_CASE(attention) test_attention(g, c);
    eng_backend_free(g);
    eng_backend_free(c);

    snprintf(g_dir, sizeof g_dir, "/tmp/cachet-cuda-XXXXXX");
    if (!mkdtemp(g_dir)) {
        CHECK_MSG(0, "mkdtemp failed");
        return;
    }
    CHECK_CASE(model_q4_1_gqa) test_model(ENG_TYPE_Q4_1, 2, 256, 4, 2, 0); /* GQA, head dim 64 */
    CHECK_CASE(model_q8_0_mqa) test_model(ENG_TYPE_Q8_0, 2, 256, 4, 1, 0); /* MQA */
    CHECK_CASE(model_q6_k) test_model(ENG_TYPE_Q6_K, 2, 512, 4, 2, 128);
    CHECK_CASE(model_f16) test_model(ENG_TYPE_F16, 1, 256, 2, 1, 128);
    rmdir(g_dir);
}

#endif
