/* engine/sample.c: the sampler. Order as llama.cpp's default chain:
 * repetition penalty, top-k, top-p, min-p, temperature, then a draw from the
 * softmax with a seeded xoshiro256** generator. Greedy bypasses all of it. */
#include "sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cand {
    int32_t id;
    float logit;
    float p;
} cand;

struct eng_sampler {
    eng_sample_params p;
    int32_t n_vocab;
    uint64_t rng[4];
    int32_t *hist; /* ring of the last repeat_last_n tokens */
    int hist_len, hist_pos;
    cand *c;
};

eng_sample_params eng_sample_defaults(void) {
    eng_sample_params p = {.temp = 0.8f,
                           .top_k = 40,
                           .top_p = 0.95f,
                           .min_p = 0.05f,
                           .repeat_penalty = 1.0f,
                           .repeat_last_n = 64,
                           .seed = 0};
    return p;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(uint64_t s[4]) {
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

int eng_sampler_new(eng_sampler **out, const eng_sample_params *p, int32_t n_vocab, util_err *err) {
    *out = NULL;
    eng_sampler *s = calloc(1, sizeof *s);
    if (!s) return util_err_set(err, UTIL_ENOMEM, "sampler: out of memory");
    s->p = *p;
    s->n_vocab = n_vocab;
    if (s->p.repeat_last_n < 0) s->p.repeat_last_n = 0;
    uint64_t x = p->seed;
    for (int i = 0; i < 4; i++) s->rng[i] = splitmix(&x);
    s->c = malloc((size_t)n_vocab * sizeof *s->c);
    s->hist = malloc((size_t)(s->p.repeat_last_n + 1) * sizeof *s->hist);
    if (!s->c || !s->hist) {
        eng_sampler_free(s);
        return util_err_set(err, UTIL_ENOMEM, "sampler: out of memory");
    }
    *out = s;
    return UTIL_OK;
}

void eng_sampler_free(eng_sampler *s) {
    if (!s) return;
    free(s->c);
    free(s->hist);
    free(s);
}

void eng_sampler_accept(eng_sampler *s, int32_t id) {
    if (s->p.repeat_last_n == 0) return;
    s->hist[s->hist_pos] = id;
    s->hist_pos = (s->hist_pos + 1) % s->p.repeat_last_n;
    if (s->hist_len < s->p.repeat_last_n) s->hist_len++;
}

int32_t eng_argmax(const float *x, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static int cand_desc(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->logit > y->logit) return -1;
    if (x->logit < y->logit) return 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void apply_penalty(eng_sampler *s, float *logits) {
    float pen = s->p.repeat_penalty;
    if (pen == 1.0f || s->hist_len == 0) return;
    /* Each distinct recent token is penalised once, as llama.cpp does. */
    for (int i = 0; i < s->hist_len; i++) {
        int32_t id = s->hist[i];
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= s->hist[j] == id;
        if (seen || id < 0 || id >= s->n_vocab) continue;
        logits[id] = logits[id] > 0 ? logits[id] / pen : logits[id] * pen;
    }
}

/* Softmax over c[0..n) (sorted descending) into .p. */
static void softmax(cand *c, int n, float temp) {
    double sum = 0.0;
    float mx = c[0].logit / temp;
    for (int i = 0; i < n; i++) {
        c[i].p = expf(c[i].logit / temp - mx);
        sum += c[i].p;
    }
    for (int i = 0; i < n; i++) c[i].p = (float)(c[i].p / sum);
}

int32_t eng_sampler_sample(eng_sampler *s, float *logits) {
    apply_penalty(s, logits);
    if (s->p.temp <= 0.0f) return eng_argmax(logits, s->n_vocab);
    int n = s->n_vocab;
    for (int i = 0; i < n; i++) s->c[i] = (cand){i, logits[i], 0.0f};
    cand *c = s->c;
    qsort(c, (size_t)n, sizeof *c, cand_desc);
    if (s->p.top_k > 0 && s->p.top_k < n) n = s->p.top_k;
    if (s->p.top_p < 1.0f) {
        softmax(c, n, 1.0f);
        double cum = 0.0;
        for (int i = 0; i < n; i++) {
            cum += c[i].p;
            if (cum >= s->p.top_p) {
                n = i + 1;
                break;
            }
        }
    }
    if (s->p.min_p > 0.0f) {
        softmax(c, n, 1.0f);
        float floor_p = c[0].p * s->p.min_p;
        int keep = 1;
        while (keep < n && c[keep].p >= floor_p) keep++;
        n = keep;
    }
    softmax(c, n, s->p.temp);
    double r = (double)(rng_next(s->rng) >> 11) * (1.0 / 9007199254740992.0);
    double cum = 0.0;
    for (int i = 0; i < n; i++) {
        cum += c[i].p;
        if (r < cum) return c[i].id;
    }
    return c[n - 1].id;
}
