/* tests/test_cuda_quant.c: the CUDA kernels' weight decoding (engine/cuda/
 * cuda_quant.h), run on the host: every group of 8 of random rows of every
 * type equals the scalar reference to_float bit for bit, and the f16 decoder
 * equals eng_f16_to_f32 over all 65536 values; so do the matvec's word
 * decoder (cuq_w8_*) and its exact integer conversion (cuq_int_f). Needs no
 * GPU; the kernels themselves are tested by the CUDA backend's suite. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/cuda/cuda_quant.h"
#include "../engine/quant.h"
#include "check.h"
#include "helpers.h"
#include "synth.h"

/* An f16 field at p made finite (an inf or nan exponent loses its top bit). */
static void cq_finite16(uint8_t *p) {
    if ((p[1] & 0x7C) == 0x7C) p[1] &= 0xBF;
}

/* Raw random bytes with the block scales forced finite, so every value is a
 * number the reference computes the same way whatever its bits. */
static void cq_raw_row(uint32_t type, uint8_t *row, size_t bytes, uint64_t *rng) {
    for (size_t i = 0; i < bytes; i++) row[i] = (uint8_t)th_rng_next(rng);
    const eng_type_traits *tr = eng_type_get(type);
    if (tr->blck == 1) return; /* f32 / f16 / bf16: any bits, nan payloads included */
    for (size_t b = 0; b < bytes; b += tr->bytes) {
        uint8_t *blk = row + b;
        if (type == ENG_TYPE_Q6_K) {
            cq_finite16(blk + 208);
            continue;
        }
        cq_finite16(blk);
        if (type == ENG_TYPE_Q4_1 || type == ENG_TYPE_Q5_1 || type == ENG_TYPE_Q4_K || type == ENG_TYPE_Q5_K)
            cq_finite16(blk + 2);
    }
}

/* Compares every group of 8 of one row with the reference; returns the
 * number of mismatching groups (reported once per row). */
static int cq_compare_row(uint32_t type, const uint8_t *row, int64_t n, const char *what) {
    float *ref = malloc((size_t)n * sizeof *ref);
    if (!ref) return 1;
    eng_type_get(type)->to_float(row, ref, n);
    int bad = 0, bad_w = 0;
    int64_t first = -1, first_w = -1;
    const int words = type == ENG_TYPE_Q4_0 || type == ENG_TYPE_Q4_1 || type == ENG_TYPE_Q8_0;
    for (int64_t g = 0; g < n / 8; g++) {
        float v[8];
        cuq_load8(type, row, g, v);
        if (memcmp(v, ref + 8 * g, sizeof v) != 0) {
            if (first < 0) first = g;
            bad++;
        }
        if (words) { /* the matvec's word fetch and integer conversion */
            cuq_w8_load8(type, row, g, v);
            if (memcmp(v, ref + 8 * g, sizeof v) != 0) {
                if (first_w < 0) first_w = g;
                bad_w++;
            }
        }
    }
    CHECK_MSG(bad == 0, "%s row of %lld (%s): %d groups differ, first %lld", eng_type_get(type)->name,
              (long long)n, what, bad, (long long)first);
    CHECK_MSG(bad_w == 0, "%s row of %lld (%s), word decoder: %d groups differ, first %lld",
              eng_type_get(type)->name, (long long)n, what, bad_w, (long long)first_w);
    bad += bad_w;
    free(ref);
    return bad;
}

static void test_rows(void) {
    static const uint32_t types[] = {
        ENG_TYPE_F32,  ENG_TYPE_F16,  ENG_TYPE_BF16, ENG_TYPE_Q4_0, ENG_TYPE_Q4_1, ENG_TYPE_Q5_0,
        ENG_TYPE_Q5_1, ENG_TYPE_Q8_0, ENG_TYPE_Q4_K, ENG_TYPE_Q5_K, ENG_TYPE_Q6_K,
    };
    static const int blocks[] = {1, 2, 3, 5, 8}; /* row lengths in blocks (f: in 8s) */
    uint64_t rng = 42;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        uint32_t type = types[ti];
        const eng_type_traits *tr = eng_type_get(type);
        CHECK(cuq_type_ok(type));
        CHECK(tr && tr->supported && tr->to_float);
        if (!tr) continue;
        for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++) {
            int64_t n = (int64_t)blocks[bi] * (tr->blck > 8 ? tr->blck : 8) * (tr->blck == 1 ? 5 : 1);
            size_t bytes = eng_type_row_size(type, n);
            float *src = malloc((size_t)n * sizeof *src);
            uint8_t *row = malloc(bytes);
            if (!src || !row) {
                CHECK_MSG(0, "out of memory");
                free(src);
                free(row);
                return;
            }
            for (int rep = 0; rep < 4; rep++) {
                /* a valid row from random floats of varying magnitude */
                float mag = rep == 0 ? 1.0f : rep == 1 ? 1e-3f : rep == 2 ? 37.0f : 1e4f;
                for (int64_t i = 0; i < n; i++) src[i] = th_rng_unit(&rng) * mag;
                if (rep == 3 && n >= 16) src[3] = 0.0f, src[9] = -mag; /* zeros, extremes */
                CHECK(synth_quantize_row(type, src, row, n) == 0);
                cq_compare_row(type, row, n, "quantized");
                /* raw bytes: every bit pattern of the quants and scale fields */
                cq_raw_row(type, row, bytes, &rng);
                cq_compare_row(type, row, n, "raw");
            }
            free(src);
            free(row);
        }
    }
    /* an unsupported id decodes to zeros and is rejected */
    float v[8] = {1, 1, 1, 1, 1, 1, 1, 1}, z[8] = {0};
    uint8_t blk[84] = {0};
    CHECK(!cuq_type_ok(ENG_TYPE_Q2_K));
    CHECK(!cuq_type_ok(ENG_TYPE_Q8_1));
    cuq_load8(ENG_TYPE_Q2_K, blk, 0, v);
    CHECK(memcmp(v, z, sizeof v) == 0);
}

static void test_f16(void) {
    int bad = 0, first = -1;
    for (uint32_t h = 0; h < 65536; h++) {
        float a = cuq_h2f((uint16_t)h), b = eng_f16_to_f32((uint16_t)h);
        if (memcmp(&a, &b, sizeof a) != 0) { /* bits, so nan payloads count too */
            if (first < 0) first = (int)h;
            bad++;
        }
    }
    CHECK_MSG(bad == 0, "cuq_h2f: %d of 65536 differ, first 0x%04x", bad, first);
    bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float a = cuq_bf2f((uint16_t)h), b = eng_bf16_to_f32((uint16_t)h);
        bad += memcmp(&a, &b, sizeof a) != 0;
    }
    CHECK_MSG(bad == 0, "cuq_bf2f: %d of 65536 differ", bad);
    CHECK(cuq_h2f(0x0001) == 5.9604644775390625e-8f);    /* smallest subnormal */
    CHECK(cuq_h2f(0x03FF) == 6.0975551605224609375e-5f); /* largest subnormal */
    CHECK(cuq_h2f(0x7BFF) == 65504.0f);
}

/* cuq_int_f: (float)((int)n - c) bit for bit (the quant ranges and beyond). */
static void test_int_f(void) {
    static const int cs[] = {0, 8, 16, 32, 128};
    int bad = 0;
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (uint32_t n = 0; n < 4096; n++) {
            float a = cuq_int_f(n, 8388608.0f + (float)cs[ci]), b = (float)((int)n - cs[ci]);
            bad += memcmp(&a, &b, sizeof a) != 0;
        }
    float big = cuq_int_f(0x7FFFFFu, 8388608.0f), want = 8388607.0f;
    CHECK(memcmp(&big, &want, sizeof big) == 0);
    CHECK_MSG(bad == 0, "cuq_int_f: %d values differ from the conversion", bad);
}

void test_cuda_quant(void) {
    CHECK_CASE(int_f) test_int_f();
    CHECK_CASE(f16) test_f16();
    CHECK_CASE(rows) test_rows();
}
