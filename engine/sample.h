/* engine/sample.h: token sampling from logits: greedy, temperature, top-k,
 * top-p, min-p and a repetition penalty, with a seeded RNG owned by the
 * sampler. Does not run the model. */
#ifndef ENG_SAMPLE_H
#define ENG_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

typedef struct eng_sample_params {
    float temp;           /* <= 0: greedy (argmax, lowest id on ties) */
    int top_k;            /* <= 0: off */
    float top_p;          /* >= 1: off */
    float min_p;          /* <= 0: off */
    float repeat_penalty; /* 1: off */
    int repeat_last_n;    /* how many recent tokens the penalty sees */
    uint64_t seed;
} eng_sample_params;

/* Defaults: temp 0.8, top_k 40, top_p 0.95, min_p 0.05, no penalty, seed 0. */
eng_sample_params eng_sample_defaults(void);

typedef struct eng_sampler eng_sampler;

int eng_sampler_new(eng_sampler **out, const eng_sample_params *p, int32_t n_vocab, util_err *err);
void eng_sampler_free(eng_sampler *s);
/* Records a token in the penalty history (prompt and generated tokens). */
void eng_sampler_accept(eng_sampler *s, int32_t id);
/* Picks a token from logits (n_vocab floats; modified in place by penalties). */
int32_t eng_sampler_sample(eng_sampler *s, float *logits);

/* Index of the largest value (lowest index on ties). */
int32_t eng_argmax(const float *x, int32_t n);

#endif
