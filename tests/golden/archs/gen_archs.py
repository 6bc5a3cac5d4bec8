#!/usr/bin/env python3
"""Goldens for the qwen2 and qwen3 architectures on synthetic models.

Writes each model with bin/cachet-synth (seeded; the same flags give the same
bytes, and tests/test_archs.c writes the same files through synth_write), with
the real vocabulary of llama.cpp's vocab-only GGUF (models/vocab, `make
vocabs`). Prompt ids come from `cachet tokenize` (its tokenizers match
llama.cpp's on these vocabularies: tests/golden/vocabs). Then:
  - llama.cpp: llama_logits_ref.cpp (beside this script) against libllama:
    last-position logits -> <arch>_<prompt>.f32, greedy ids and margins;
  - float64 numpy (../gen_float_ref.py's Model): -> <arch>_<prompt>.float.f32,
    greedy ids and margins.
Usage (from the repository root, after make all):
  tests/golden/archs/gen_archs.py [--llama-src DIR] [--llama-build DIR]
Build line of the harness (what this script runs):
  g++ -O1 -std=c++17 -I$SRC/include -I$SRC/ggml/include llama_logits_ref.cpp -o llama_logits_ref
      $BUILD/src/libllama.a $BUILD/ggml/src/libggml.a $BUILD/ggml/src/libggml-cpu.a
      $BUILD/ggml/src/libggml-base.a -lpthread -lgomp -ldl
Writes tests/golden/archs/index.tsv:
  arch  prompt  prompt_ids  llama_greedy  llama_margins  float_greedy  float_margins
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gen_float_ref import Model, load  # noqa: E402

# Must match tests/test_archs.c's arch_models[].
MODELS = {
    "qwen2": ["--arch", "qwen2", "--vocab-file", "models/vocab/ggml-vocab-qwen2.gguf", "--layers", "2",
              "--embd", "128", "--heads", "4", "--kv-heads", "2", "--ff", "256", "--type", "q8_0",
              "--embd-type", "q8_0", "--seed", "7"],
    "qwen3": ["--arch", "qwen3", "--vocab-file", "models/vocab/ggml-vocab-qwen35.gguf", "--layers", "2",
              "--embd", "128", "--heads", "4", "--kv-heads", "2", "--head-dim", "64", "--ff", "256",
              "--type", "q8_0", "--embd-type", "q8_0", "--seed", "7"],
}
PROMPTS = {
    "france": "The capital of France is",
    "chat": "<|im_start|>user\nWrite a haiku about caching.<|im_end|>\n<|im_start|>assistant\n",
}
N_GEN = 32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--llama-build", default="/work/ref/build")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    ref = os.path.join(tmp, "llama_logits_ref")
    libs = ["src/libllama.a", "ggml/src/libggml.a", "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a"]
    subprocess.check_call(["g++", "-O1", "-std=c++17", "-I" + os.path.join(a.llama_src, "include"),
                           "-I" + os.path.join(a.llama_src, "ggml", "include"),
                           os.path.join(HERE, "llama_logits_ref.cpp"), "-o", ref] +
                          [os.path.join(a.llama_build, x) for x in libs] + ["-lpthread", "-lgomp", "-ldl"])
    rows = []
    for arch, flags in MODELS.items():
        model = os.path.join(tmp, arch + ".gguf")
        subprocess.check_call(["bin/cachet-synth", "-o", model, "--threads", "1"] + flags)
        hp, W = load(model)
        for name, text in PROMPTS.items():
            ids = subprocess.check_output(["bin/cachet", "tokenize", "--model", model, text]).decode().split()
            out = os.path.join(HERE, "%s_%s.f32" % (arch, name))
            line = subprocess.check_output([ref, model, out, str(N_GEN)] + ids).decode().rstrip("\n")
            lgreedy, lmargins = line.split("\t")
            m = Model(hp, W)
            lg = m.forward([int(x) for x in ids])
            lg.astype("<f4").tofile(os.path.join(HERE, "%s_%s.float.f32" % (arch, name)))
            first = lg.copy()
            greedy, margins = [], []
            for step in range(N_GEN):
                top = np.argsort(-lg, kind="stable")[:2]
                greedy.append(int(top[0]))
                margins.append(float(lg[top[0]] - lg[top[1]]))
                if step < N_GEN - 1:
                    lg = m.forward([greedy[-1]])
            llama = np.fromfile(out, dtype="<f4")
            print("%s %-7s n=%3d  |float64 - llama.cpp| max %.4f  greedy same: %s" %
                  (arch, name, len(ids), np.abs(first - llama).max(), " ".join(map(str, greedy)) == lgreedy))
            rows.append("\t".join([arch, name, " ".join(ids), lgreedy, lmargins, " ".join(map(str, greedy)),
                                   " ".join("%.4f" % x for x in margins)]))
    with open(os.path.join(HERE, "index.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("# llama.cpp (llama-cpp-python 0.3.36's vendored source, libllama via llama_logits_ref.cpp, CPU, "
                "1 thread, flash attention off) and the float64 reference (gen_float_ref.py); gen_archs.py\n")
        f.write("# fields: arch  prompt  prompt_ids  llama_greedy(%d)  llama_margins  float_greedy  float_margins\n"
                % N_GEN)
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
