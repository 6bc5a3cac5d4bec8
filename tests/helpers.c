/* tests/helpers.c: the model opener and token helpers of tests/helpers.h. They
 * report through the runner's counters (tests/check.h) on the caller's line;
 * they hold no state between calls. */
#include "helpers.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "golden_io.h"

/* --- models ------------------------------------------------------------------ */

eng_model *th_open_model_with_at(const char *file, int line, const char *path, const eng_model_params *mp) {
    if (!path) path = check_model_path();
    if (!path) {
        check_fail_at(file, line, "the default model is missing: run 'make model'");
        return NULL;
    }
    eng_model *m = NULL;
    util_err err;
    int rc = eng_model_open(&m, path, mp, &err);
    if (rc == 0) {
        check_pass();
        return m;
    }
    check_fail_at(file, line, "open '%s' (threads %d, exact %d, device %s): %s", path, mp ? mp->n_threads : 0,
                  mp ? mp->exact : 0, mp && mp->device ? mp->device : "default", err.msg);
    return NULL;
}

eng_model *th_open_model_at(const char *file, int line, const char *path, int threads, int exact) {
    eng_model_params mp = {.n_threads = threads, .no_disk_cache = 1, .exact = exact};
    return th_open_model_with_at(file, line, path, &mp);
}

/* --- tokens ------------------------------------------------------------------ */

int32_t *th_tokenize_at(const char *file, int line, const eng_tokenizer *t, const char *text, int add_special,
                        int parse_special, size_t *n) {
    int32_t *ids = NULL;
    util_err err;
    *n = 0;
    int rc = eng_tokenize(t, text, strlen(text), add_special, parse_special, &ids, n, &err);
    if (rc == 0) {
        check_pass();
        return ids;
    }
    check_fail_at(file, line, "tokenize '%.60s': %s", text, err.msg);
    free(ids);
    *n = 0;
    return NULL;
}

int th_ids_equal(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && (na == 0 || (a && b && memcmp(a, b, na * sizeof *a) == 0));
}

size_t th_ids_agree(const int32_t *a, const int32_t *b, size_t n) {
    size_t k = 0;
    while (k < n && a[k] == b[k]) k++;
    return k;
}

void th_ids_str(char *out, size_t cap, const int32_t *ids, size_t n) {
    size_t w = 0;
    if (!cap) return;
    out[0] = '\0';
    for (size_t i = 0; i < n && w + 16 < cap; i++)
        w += (size_t)snprintf(out + w, cap - w, i ? " %d" : "%d", (int)ids[i]);
}

const char *th_gemma3_path(void) {
    static char buf[4096];
    const char *m = getenv("CACHET_GEMMA3_MODEL");
    if (m && *m) return m;
    snprintf(buf, sizeof buf, "%s/models/gemma-3-270m-q4_k_m.gguf", check_root());
    return access(buf, R_OK) == 0 ? buf : NULL;
}

/* --- architecture goldens ----------------------------------------------------- */

int th_eval_greedy(eng_model *m, const int32_t *ids, int n, float *first, int32_t *out, int n_gen) {
    eng_seq *s = NULL;
    util_err err;
    int nv = eng_model_n_vocab(m);
    float *lg = malloc((size_t)nv * sizeof(float));
    int rc = lg ? eng_seq_new(&s, m, 512, &err) : -1;
    if (rc == 0) rc = eng_seq_eval(s, ids, n, lg, &err);
    if (rc == 0) memcpy(first, lg, (size_t)nv * sizeof(float));
    for (int i = 0; rc == 0 && i < n_gen; i++) {
        out[i] = eng_argmax(lg, nv);
        if (i + 1 < n_gen) rc = eng_seq_eval(s, &out[i], 1, lg, &err);
    }
    CHECK_MSG(rc == 0, "eval: %s", rc && lg ? err.msg : "out of memory");
    eng_seq_free(s);
    free(lg);
    return rc ? -1 : 0;
}

size_t th_margins_decided(const char *margins, double tol, size_t n) {
    size_t k = 0;
    for (const char *p = margins; k < n; k++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || v < tol) break;
        p = end;
    }
    return k;
}

void th_arch_golden_row(eng_model *m, char **f, const th_arch_check *c) {
    size_t np = 0, nl = 0, nx = 0, flen = 0, xlen = 0;
    int32_t *ids = golden_ids(f[2], &np), *lgreedy = golden_ids(f[3], &nl), *xgreedy = golden_ids(f[5], &nx);
    char name[160];
    snprintf(name, sizeof name, "archs/%s%s_%s.f32", c->prefix, f[0], f[1]);
    float *llama = (float *)golden_read(name, &flen);
    snprintf(name, sizeof name, "archs/%s%s_%s.float.f32", c->prefix, f[0], f[1]);
    float *f64 = (float *)golden_read(name, &xlen);
    const char *ex = c->exact ? "exact" : "default";
    int nv = eng_model_n_vocab(m), check_gen = c->check_gen;
    int files_ok = llama && f64 && flen == (size_t)nv * 4 && xlen == flen && nl == (size_t)c->n_gen &&
                   nx == (size_t)c->n_gen && check_gen <= c->n_gen && check_gen >= 1;
    CHECK_MSG(files_ok, "%s/%s: golden files", f[0], f[1]);
    float *lg = malloc((size_t)nv * sizeof(float));
    int32_t *out = malloc((size_t)(check_gen > 0 ? check_gen : 1) * sizeof(int32_t));
    if (files_ok && lg && out && th_eval_greedy(m, ids, (int)np, lg, out, check_gen) == 0) {
        const float *ref = c->exact ? f64 : llama;
        double spread = golden_max_abs(f64, llama, nv);
        double tol = c->exact ? c->exact_tol : fmax(c->tol_min, c->spread_factor * spread);
        double err = golden_max_abs(lg, ref, nv);
        CHECK_MSG(err <= tol, "%s/%s %s %s: max abs logit error %.5f > %.3g", f[0], f[1], c->mode, ex, err,
                  tol);
        /* top-1: always on the exact path; on the default one where llama.cpp's
         * margin is above the bound (the 1B shape's random logits are flat) */
        if (c->exact || th_margins_decided(f[4], tol, 1) == 1)
            CHECK_MSG(eng_argmax(lg, nv) == eng_argmax(ref, nv), "%s/%s %s: top-1 differs", f[0], f[1],
                      c->mode);
        const int32_t *want = c->exact ? xgreedy : lgreedy;
        size_t agree = th_ids_agree(out, want, (size_t)check_gen);
        size_t robust = c->exact ? (size_t)check_gen : th_margins_decided(f[4], tol, (size_t)check_gen);
        CHECK_MSG(agree >= robust, "%s/%s %s %s: greedy differs at token %zu (decided steps %zu)", f[0], f[1],
                  c->mode, ex, agree, robust);
        fprintf(
            stderr,
            "  %s %-6s %-8s %-7s %3zu tokens  max|dlogit| %.4f (bound %.3g)  greedy %2zu/%d (decided %zu)\n",
            f[0], f[1], c->mode, ex, np, err, tol, agree, check_gen, robust);
    }
    free(out);
    free(lg);
    free(llama);
    free(f64);
    free(ids);
    free(lgreedy);
    free(xgreedy);
}

int th_tmp_make(th_tmp *t, const char *tag, const char *name) {
    snprintf(t->dir, sizeof t->dir, "/tmp/cachet-%s-XXXXXX", tag);
    t->path[0] = '\0';
    if (!mkdtemp(t->dir)) {
        CHECK_MSG(0, "mkdtemp %s failed", t->dir);
        t->dir[0] = '\0';
        return -1;
    }
    snprintf(t->path, sizeof t->path, "%s/%s", t->dir, name);
    return 0;
}

static int tmp_rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

void th_tmp_remove(th_tmp *t) {
    if (t->dir[0]) nftw(t->dir, tmp_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    t->dir[0] = '\0';
}
