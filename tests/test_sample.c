/* tests/test_sample.c: the sampler: greedy ties, top-k/top-p/min-p filtering,
 * temperature, seeded reproducibility and the empirical distribution. */
#include <math.h>
#include <stdlib.h>

#include "../engine/sample.h"
#include "check.h"

static int32_t draw(eng_sample_params p, const float *src, int n) {
    eng_sampler *s = NULL;
    util_err err;
    if (eng_sampler_new(&s, &p, n, &err)) return -1;
    float *l = malloc((size_t)n * sizeof *l);
    for (int i = 0; i < n; i++) l[i] = src[i];
    int32_t id = eng_sampler_sample(s, l);
    free(l);
    eng_sampler_free(s);
    return id;
}

static void test_draws(void) {
    float l[8] = {1, 3, 3, 0, -1, 2, 2.5f, 0.5f};
    eng_sample_params p = eng_sample_defaults();
    p.temp = 0;
    CHECK_EQ_INT(draw(p, l, 8), 1); /* tie between 1 and 2: lowest id */
    CHECK_EQ_INT(eng_argmax(l, 8), 1);

    p = eng_sample_defaults();
    p.top_k = 1;
    p.temp = 5;
    for (uint64_t seed = 0; seed < 20; seed++) {
        p.seed = seed;
        int32_t id = draw(p, l, 8);
        CHECK(id == 1 || id == 2);
    }

    /* min_p 0.5 keeps only tokens with p >= half of the top: ids 1, 2, 6. */
    p = eng_sample_defaults();
    p.top_k = 0;
    p.top_p = 1;
    p.min_p = 0.5f;
    p.temp = 1;
    for (uint64_t seed = 0; seed < 50; seed++) {
        p.seed = seed;
        int32_t id = draw(p, l, 8);
        CHECK_MSG(id == 1 || id == 2 || id == 6, "min_p kept id %d", id);
    }

    /* Same seed, same draws; the empirical distribution follows softmax. */
    p = eng_sample_defaults();
    p.top_k = 0;
    p.top_p = 1;
    p.min_p = 0;
    p.temp = 1;
    p.seed = 42;
    eng_sampler *a = NULL, *b = NULL;
    util_err err;
    CHECK(eng_sampler_new(&a, &p, 8, &err) == 0 && eng_sampler_new(&b, &p, 8, &err) == 0);
    int counts[8] = {0}, same = 1, N = 20000;
    for (int i = 0; a && b && i < N; i++) {
        float x[8], y[8];
        for (int j = 0; j < 8; j++) x[j] = y[j] = l[j];
        int32_t ia = eng_sampler_sample(a, x), ib = eng_sampler_sample(b, y);
        same &= ia == ib;
        if (ia >= 0 && ia < 8) counts[ia]++;
    }
    CHECK(same);
    double z = 0;
    for (int j = 0; j < 8; j++) z += exp(l[j]);
    for (int j = 0; j < 8; j++) {
        double want = exp(l[j]) / z * N;
        CHECK_MSG(fabs(counts[j] - want) <= 5 * sqrt(want) + 5, "id %d drawn %d times, expected %.0f", j,
                  counts[j], want);
    }
    eng_sampler_free(a);
    eng_sampler_free(b);

    /* top_p 0.5: ids 1 and 2 carry 0.31 each, so together they pass 0.5. */
    p.top_p = 0.5f;
    for (uint64_t seed = 0; seed < 50; seed++) {
        p.seed = seed;
        int32_t id = draw(p, l, 8);
        CHECK_MSG(id == 1 || id == 2, "top_p kept id %d", id);
    }

    /* Repetition penalty moves the argmax away from a recent token. */
    p = eng_sample_defaults();
    p.temp = 0;
    p.repeat_penalty = 2.0f;
    eng_sampler *r = NULL;
    CHECK(eng_sampler_new(&r, &p, 8, &err) == 0);
    if (r) {
        eng_sampler_accept(r, 1);
        eng_sampler_accept(r, 2);
        float x[8];
        for (int j = 0; j < 8; j++) x[j] = l[j];
        CHECK_EQ_INT(eng_sampler_sample(r, x), 6);
        eng_sampler_free(r);
    }
}

void test_sample(void) { CHECK_CASE(draws) test_draws(); }
