/* engine/cpu/cpu_features.h: which SIMD kernel level this CPU runs (scalar, AVX2
 * with FMA/F16C, AVX-512 with VNNI), detected at run time, and the CACHET_CPU
 * override (scalar|avx2|avx512) for tests and benchmarks. Detection has no
 * state: callers keep the result (the CPU backend stores it in its struct). */
#ifndef ENG_CPU_FEATURES_H
#define ENG_CPU_FEATURES_H

#include "../../util/err.h"

/* The kernel levels, in order: a level's CPU can run every level below it. */
typedef enum eng_simd { ENG_SIMD_SCALAR = 0, ENG_SIMD_AVX2 = 1, ENG_SIMD_AVX512 = 2 } eng_simd;

/* The best level this CPU and OS support. */
eng_simd eng_cpu_detect(void);
/* "scalar", "avx2" or "avx512". */
const char *eng_simd_name(eng_simd level);
/* The level to use: detected, or CACHET_CPU when set (empty or "auto" =
 * detected). UTIL_EINVAL for an unknown name or a level this CPU lacks. */
int eng_cpu_level(eng_simd *out, util_err *err);

#endif
