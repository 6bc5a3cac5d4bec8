/* tests/helpers.h: what several suites share: a seeded random stream
 * (splitmix64), opening a model with a failure reported as a failed check on the
 * caller's line, and token helpers (tokenize a string, compare and print id
 * arrays). Test-only. The random stream is header-only, so a tool without the
 * runner (cachet-synth) uses the same numbers; the rest needs tests/helpers.c
 * and the runner's counters (tests/check.c). */
#ifndef HELPERS_H
#define HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "../engine/engine.h"

/* --- random numbers ---------------------------------------------------------- */

/* splitmix64: tiny, fast, and the same sequence everywhere. The state is the
 * caller's; any value is a seed. */
static inline uint64_t th_rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) (53 bits rounded to float). */
static inline float th_rng_unit(uint64_t *s) {
    return (float)((double)(th_rng_next(s) >> 11) / 4503599627370496.0 - 1.0);
}

/* Uniform in [0, 1) (24 bits, exact in a float). */
static inline float th_rng_uniform(uint64_t *s) {
    return (float)(th_rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

/* Roughly N(0,1) from one draw: the sum of its four 16-bit quarters (each
 * uniform, variance 1/12 after scaling) rescaled. No libm call, so the values
 * do not depend on the platform's log/cos (synthetic models' bytes rest on it). */
static inline float th_rng_normal(uint64_t *s) {
    uint64_t z = th_rng_next(s);
    uint32_t sum = (uint32_t)(z & 0xFFFF) + (uint32_t)((z >> 16) & 0xFFFF) + (uint32_t)((z >> 32) & 0xFFFF) +
                   (uint32_t)(z >> 48);
    return ((float)sum * (1.0f / 65536.0f) - 2.0f) * 1.7320508f;
}

/* --- models ------------------------------------------------------------------ */

/* Opens the model at path (NULL: the default model, check_model_path()) with
 * n_threads `threads`, `exact` and no disk tier. A missing default model or a
 * failed open is a failed check on the caller's line (a successful one a
 * passed check); NULL then. The caller frees with eng_model_free. */
#define th_open_model(path, threads, exact) th_open_model_at(__FILE__, __LINE__, (path), (threads), (exact))
/* The same with the caller's parameters (NULL: the engine's defaults). */
#define th_open_model_with(path, mp) th_open_model_with_at(__FILE__, __LINE__, (path), (mp))

eng_model *th_open_model_at(const char *file, int line, const char *path, int threads, int exact);
eng_model *th_open_model_with_at(const char *file, int line, const char *path, const eng_model_params *mp);

/* The second real model: $CACHET_GEMMA3_MODEL, else
 * models/gemma-3-270m-q4_k_m.gguf under the checkout (make model-gemma3);
 * NULL when absent (the caller skips with a reason). */
const char *th_gemma3_path(void);

/* --- tokens ------------------------------------------------------------------ */

/* The ids of text (add_special: the model's BOS; parse_special: special-token
 * text becomes those tokens), *n set to their count. A failure is a failed
 * check on the caller's line (success a passed one); NULL and *n = 0 then.
 * The caller frees the ids. */
#define th_tokenize(t, text, add_special, parse_special, n) \
    th_tokenize_at(__FILE__, __LINE__, (t), (text), (add_special), (parse_special), (n))
int32_t *th_tokenize_at(const char *file, int line, const eng_tokenizer *t, const char *text, int add_special,
                        int parse_special, size_t *n);

/* Checks t against a tokenizer golden file under tests/golden/ (the format of
 * tokenizer_smollm2.tsv: llama.cpp's ids with and without special parsing,
 * its detokenized bytes both ways) with at least min_lines strings
 * (tests/test_tokenizer.c). */
void th_tokenizer_golden(const eng_tokenizer *t, const char *name, int min_lines);

/* 1 when a[0..na) and b[0..nb) are the same ids. */
int th_ids_equal(const int32_t *a, size_t na, const int32_t *b, size_t nb);
/* How many leading ids a and b (n each) share. */
size_t th_ids_agree(const int32_t *a, const int32_t *b, size_t n);
/* "1 2 3" into out (cap bytes, always terminated; cut short when full). */
void th_ids_str(char *out, size_t cap, const int32_t *ids, size_t n);

/* --- architecture goldens (tests/golden/archs/, gen_archs.py, gen_mla.py) --- */

/* How one golden row is checked: its files are archs/<prefix><name>_<shape>.f32
 * (llama.cpp's last-position logits) and .float.f32 (the float64 reference). */
typedef struct th_arch_check {
    const char *prefix; /* "" or "deepseek2_" */
    const char *mode;   /* a label printed with the row ("" for none) */
    int exact;          /* 1: against float64 within exact_tol, greedy all the same */
    int n_gen;          /* greedy ids the row holds */
    int check_gen;      /* of which the first check_gen are run (1 .. n_gen) */
    double exact_tol;
    double tol_min;       /* the default path: within max(tol_min, */
    double spread_factor; /* spread_factor x llama.cpp's distance from float64) */
} th_arch_check;

/* Logits after prompt ids[0..n) into first, then n_gen greedy ids into out
 * one decode at a time (a 512-position sequence). 0, or -1 after a failed
 * check. */
int th_eval_greedy(eng_model *m, const int32_t *ids, int n, float *first, int32_t *out, int n_gen);
/* Leading steps of a golden row's margins (space-separated, llama.cpp's top-1
 * minus top-2 per greedy step) before one falls below tol: the steps whose
 * choice a run within tol must share. */
size_t th_margins_decided(const char *margins, double tol, size_t n);
/* Checks model m against golden row f (name, shape, prompt ids, llama.cpp's
 * greedy ids, its margins, float64 greedy ids, ...): the logit bound, top-1
 * where decided, greedy agreement; prints the row's figures. */
void th_arch_golden_row(eng_model *m, char **f, const th_arch_check *c);

/* --- temporary directories ------------------------------------------------ */

/* A fresh directory /tmp/cachet-<tag>-XXXXXX and a file name inside it. */
typedef struct th_tmp {
    char dir[64];
    char path[128]; /* dir/<name> */
} th_tmp;

/* Makes t->dir and sets t->path; 0, or -1 after a failed check. */
int th_tmp_make(th_tmp *t, const char *tag, const char *name);
/* Removes t->dir and everything under it (no shell). */
void th_tmp_remove(th_tmp *t);

#endif
