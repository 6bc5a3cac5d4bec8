/* engine/cpu/quant_simd.h: private to engine/cpu/: the hooks through which the
 * SIMD kernel files replace slots of an eng_type_kernels (see quant_kernels.h). Each
 * leaves the slots it has no kernel for untouched. On non-x86 builds they do
 * nothing. */
#ifndef ENG_QUANT_SIMD_H
#define ENG_QUANT_SIMD_H

#include "quant_kernels.h"

void eng_quant_avx2_kernels(uint32_t type, eng_type_kernels *k);
void eng_quant_avx512_kernels(uint32_t type, eng_type_kernels *k);

#endif
