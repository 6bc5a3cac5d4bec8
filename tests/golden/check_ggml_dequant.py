#!/usr/bin/env python3
"""Optional cross-check: are the gguf.quants (numpy) dequantization goldens bit-identical to
ggml's own C dequantizers (type_traits->to_float in libggml-base)?

Usage: check_ggml_dequant.py GOLDEN_DIR LLAMA_CPP_SRC LLAMA_CPP_BUILD
  LLAMA_CPP_SRC   llama.cpp source tree (for ggml/include/ggml.h)
  LLAMA_CPP_BUILD cmake build dir containing bin/libggml-base.so

Writes a tiny C program to a temporary directory, compiles it with cc and runs it on every
entry of quant_index.tsv. Nothing is written into the repository.
"""
import os
import subprocess
import sys
import tempfile

C_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "ggml.h"
static void *slurp(const char *p, long *n) {
    FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(2); }
    fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
    void *b = malloc(*n ? *n : 1); if (fread(b, 1, *n, f) != (size_t)*n) exit(2); fclose(f); return b;
}
int main(int argc, char **argv) {
    int t = atoi(argv[1]);
    long nb, nf; void *raw = slurp(argv[2], &nb); float *ref = slurp(argv[3], &nf);
    int64_t k = nf / 4, nexact = 0; int maxulp = 0;
    float *y = malloc(nf);
    if (t == GGML_TYPE_F32) memcpy(y, raw, nf); else ggml_get_type_traits((enum ggml_type)t)->to_float(raw, y, k);
    for (int64_t i = 0; i < k; i++) {
        uint32_t a, b; memcpy(&a, &y[i], 4); memcpy(&b, &ref[i], 4);
        if (a == b) { nexact++; continue; }
        int d = (int)((int32_t)a - (int32_t)b); if (d < 0) d = -d; if (d > maxulp) maxulp = d;
    }
    printf("%-34s type=%2d n=%5lld bit_exact=%5lld max_ulp_diff=%d\n", argv[2], t, (long long)k, (long long)nexact, maxulp);
    return nexact == k ? 0 : 1;
}
"""


def main():
    gdir, src, build = sys.argv[1], sys.argv[2], sys.argv[3]
    libdir = os.path.join(build, "bin")
    with tempfile.TemporaryDirectory() as td:
        c = os.path.join(td, "chk.c")
        exe = os.path.join(td, "chk")
        open(c, "w").write(C_SRC)
        subprocess.run(["cc", "-O2", "-o", exe, c, "-I", os.path.join(src, "ggml", "include"), "-L", libdir,
                        "-lggml-base", "-Wl,-rpath," + libdir], check=True)
        bad = 0
        total = 0
        for line in open(os.path.join(gdir, "quant_index.tsv")):
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            total += 1
            r = subprocess.run([exe, f[3], f[10], f[0]], cwd=gdir, capture_output=True, text=True)
            sys.stdout.write("  " + r.stdout)
            bad += r.returncode != 0
        print("check_ggml_dequant: %d/%d golden files bit-identical to ggml's C to_float" % (total - bad, total))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
