/* engine/cpu/cpu_features.c: run-time SIMD level detection from CPUID and XCR0 (the
 * instructions exist and the OS saves the wide registers) and the CACHET_CPU
 * override. Does not select kernels: see eng_type_kernels_get in quant_cpu.c and the
 * CPU backend. */
#include "cpu_features.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* Which register states the OS saves (XCR0): without them the wide registers
 * are not usable even when CPUID lists the instructions. */
static unsigned long long xcr0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

eng_simd eng_cpu_detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return ENG_SIMD_SCALAR;
    const int fma = c >> 12 & 1, osxsave = c >> 27 & 1, avx = c >> 28 & 1, f16c = c >> 29 & 1;
    if (!osxsave || !avx || !fma || !f16c) return ENG_SIMD_SCALAR;
    const unsigned long long x = xcr0();
    if ((x & 0x6) != 0x6) return ENG_SIMD_SCALAR; /* xmm and ymm state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b >> 5 & 1)) return ENG_SIMD_SCALAR;
    const int f = b >> 16 & 1, dq = b >> 17 & 1, bw = b >> 30 & 1, vl = b >> 31 & 1, vnni = c >> 11 & 1;
    if (f && dq && bw && vl && vnni && (x & 0xE0) == 0xE0) return ENG_SIMD_AVX512; /* opmask, zmm */
    return ENG_SIMD_AVX2;
}
#else
eng_simd eng_cpu_detect(void) { return ENG_SIMD_SCALAR; }
#endif

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
            return util_err_set(err, UTIL_EINVAL, "CACHET_CPU='%s': this cpu supports up to '%s'", env,
                                eng_simd_name(have));
        *out = (eng_simd)l;
        return UTIL_OK;
    }
    return util_err_set(err, UTIL_EINVAL, "CACHET_CPU='%s': expected scalar, avx2, avx512 or auto", env);
}
