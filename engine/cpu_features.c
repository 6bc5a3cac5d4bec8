/* engine/cpu_features.c: run-time SIMD level detection with
 * __builtin_cpu_supports (which also checks that the OS saves the wide
 * registers) and the CACHET_CPU override. Does not select kernels: see
 * eng_type_kernels_get in quant.c and the CPU backend. */
#include "cpu_features.h"

#include <stdlib.h>
#include <string.h>

eng_simd eng_cpu_detect(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("f16c");
    if (!avx2) return ENG_SIMD_SCALAR;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vnni"))
        return ENG_SIMD_AVX512;
    return ENG_SIMD_AVX2;
#else
    return ENG_SIMD_SCALAR;
#endif
}

const char *eng_simd_name(eng_simd level) {
    switch (level) {
    case ENG_SIMD_AVX2: return "avx2";
    case ENG_SIMD_AVX512: return "avx512";
    default: return "scalar";
    }
}

int eng_cpu_level(eng_simd *out, util_err *err) {
    eng_simd have = eng_cpu_detect();
    *out = have;
    const char *env = getenv("CACHET_CPU");
    if (!env || !*env || strcmp(env, "auto") == 0) return UTIL_OK;
    for (int l = ENG_SIMD_SCALAR; l <= ENG_SIMD_AVX512; l++) {
        if (strcmp(env, eng_simd_name((eng_simd)l)) != 0) continue;
        if (l > (int)have)
            return util_err_set(err, UTIL_EINVAL, "CACHET_CPU='%s': this cpu supports up to '%s'",
                                env, eng_simd_name(have));
        *out = (eng_simd)l;
        return UTIL_OK;
    }
    return util_err_set(err, UTIL_EINVAL, "CACHET_CPU='%s': expected scalar, avx2, avx512 or auto",
                        env);
}
