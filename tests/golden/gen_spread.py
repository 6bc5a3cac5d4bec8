#!/usr/bin/env python3
"""How much llama.cpp's own logits move under a legitimate change of numerics:
flash attention on versus off (same model, same prompts as logits_index.tsv).
SmolLM2-135M has residual activations in the thousands; with 8-bit activation
quantization small rounding differences are amplified, so this spread is the
honest floor for how closely any other implementation can track llama.cpp.

Usage: gen_spread.py MODEL.gguf DIR  -> DIR/spread.tsv: name  max|FA-noFA|  top1_same
"""
import os
import sys

import numpy as np
from llama_cpp import Llama


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    rows = []
    for line in open(os.path.join(outdir, "logits_index.tsv"), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        ids = [int(x) for x in f[1].split()]
        ref = np.fromfile(os.path.join(outdir, f[5]), dtype="<f4")
        llm = Llama(model, logits_all=True, n_ctx=2048, n_threads=2, n_batch=512, flash_attn=True,
                    verbose=False)
        llm.eval(ids)
        fa = np.array(llm.scores[len(ids) - 1], dtype=np.float32)
        rows.append("%s\t%.5f\t%d" % (f[0], np.abs(fa - ref).max(), int(fa.argmax() == ref.argmax())))
        print(rows[-1])
    with open(os.path.join(outdir, "spread.tsv"), "w", encoding="utf-8", newline="\n") as out:
        out.write("# llama.cpp flash attention on vs off, last-position logits (gen_spread.py)\n")
        out.write("# fields: name  max_abs_diff  top1_same\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
