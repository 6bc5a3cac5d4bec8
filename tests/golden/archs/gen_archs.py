#!/usr/bin/env python3
"""Goldens for the qwen2, qwen3 and phi3 architectures, llama with Llama 3's
rope scaling (rope_freqs.weight) and llama at Mistral's shapes, on synthetic
models.

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
  tests/golden/archs/gen_archs.py [--llama-src DIR] [--llama-build DIR] [NAME...]
(no NAME: every model but llama1b, the 1B shape; name it to remake its rows)
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
from harness import build_ref, golden_row, tokenize  # noqa: E402

# Must match tests/test_archs.c's arch_models[].
MODELS = {
    "qwen2": ["--arch", "qwen2", "--vocab-file", "models/vocab/ggml-vocab-qwen2.gguf", "--layers", "2",
              "--embd", "128", "--heads", "4", "--kv-heads", "2", "--ff", "256", "--type", "q8_0",
              "--embd-type", "q8_0", "--seed", "7"],
    "qwen3": ["--arch", "qwen3", "--vocab-file", "models/vocab/ggml-vocab-qwen35.gguf", "--layers", "2",
              "--embd", "128", "--heads", "4", "--kv-heads", "2", "--head-dim", "64", "--ff", "256",
              "--type", "q8_0", "--embd-type", "q8_0", "--seed", "7"],
    "llama3": ["--arch", "llama", "--vocab-file", "models/vocab/ggml-vocab-llama-bpe.gguf", "--layers", "2",
               "--embd", "128", "--heads", "4", "--kv-heads", "2", "--ff", "256", "--type", "q8_0",
               "--embd-type", "q8_0", "--rope-base", "10000", "--rope-freqs", "--seed", "7"],
    # fused attn_qkv and gate|up ffn_up, head dim 96 as Phi-3 mini, a 4-position window llama.cpp ignores
    "phi3": ["--arch", "phi3", "--vocab-file", "models/vocab/ggml-vocab-phi-3.gguf", "--layers", "2",
             "--embd", "192", "--heads", "2", "--kv-heads", "2", "--ff", "256", "--type", "q8_0",
             "--embd-type", "q8_0", "--swa-window", "4", "--seed", "7"],
    # Mistral's shapes: llama, the llama-spm vocabulary, 4 query heads per kv head, rope base 1e6
    "mistral": ["--arch", "llama", "--vocab-file", "models/vocab/ggml-vocab-llama-spm.gguf", "--layers", "2",
                "--embd", "256", "--heads", "8", "--kv-heads", "2", "--ff", "512", "--type", "q8_0",
                "--embd-type", "q8_0", "--rope-base", "1000000", "--seed", "7"],
    # the 1B shape in llama-quantize's Q4_K_M mix (16 layers, embd 2048, 32/8 heads, ff 8192), with the
    # llama-spm vocabulary (32000 tokens, the preset's count): 600 MiB; not run unless named
    "llama1b": ["--preset", "llama-1b-q4_k_m", "--vocab-file", "models/vocab/ggml-vocab-llama-spm.gguf",
                "--seed", "7"],
}
BIG = {"llama1b"}  # run only when named on the command line (minutes, 4 GB for the float reference)
PROMPTS = {
    "france": "The capital of France is",
    "chat": "<|im_start|>user\nWrite a haiku about caching.<|im_end|>\n<|im_start|>assistant\n",
    "phichat": "<|user|>\nWrite a haiku about caching.<|end|>\n<|assistant|>\n",
    "inst": "[INST] Write a haiku about caching. [/INST]",
    # long enough (about 400 tokens) that llama 3's divided angles move the logits
    "long": " ".join("Line %d: the cache keeps every prefix it has seen, page by page." % i for i in range(25)),
    "medium": " ".join("Line %d: the cache keeps every prefix it has seen, page by page." % i for i in range(6)),
}
ARCH_PROMPTS = {"qwen2": ["france", "chat"], "qwen3": ["france", "chat"], "llama3": ["france", "long"],
                "phi3": ["france", "phichat"], "mistral": ["france", "inst"],
                "llama1b": ["france", "inst", "medium"]}
N_GEN = 32
N_GEN_MODEL = {"llama1b": 16}  # tests/test_archs.c's n_gen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--llama-build", default="/work/ref/build")
    ap.add_argument("names", nargs="*", help="models to (re)make (default: all but %s); the index keeps the "
                    "others' rows" % ", ".join(sorted(BIG)))
    a = ap.parse_args()
    names = a.names or [x for x in MODELS if x not in BIG]
    index = os.path.join(HERE, "index.tsv")
    kept = {}
    if os.path.exists(index):
        for line in open(index, encoding="utf-8"):
            if not line.startswith("#") and line.strip() and line.split("\t")[0] not in names:
                kept.setdefault(line.split("\t")[0], []).append(line.rstrip("\n"))
    tmp = tempfile.mkdtemp()
    ref = build_ref(a.llama_src, a.llama_build, tmp)
    rows = []
    for arch, flags in MODELS.items():
        if arch not in names:
            rows += kept.get(arch, [])
            continue
        n_gen = N_GEN_MODEL.get(arch, N_GEN)
        model = os.path.join(tmp, arch + ".gguf")
        subprocess.check_call(["bin/cachet-synth", "-o", model, "--threads", "1"] + flags)
        hp, W = load(model, np.float32 if arch in BIG else np.float64)  # f32 storage, f64 arithmetic
        for name in ARCH_PROMPTS[arch]:
            text = PROMPTS[name]
            ids = tokenize(model, text)
            out = os.path.join(HERE, "%s_%s.f32" % (arch, name))
            if arch == "llama3":  # the same file without rope_freqs: how far the scaling moves the logits
                plain = os.path.join(tmp, "plain.gguf")
                subprocess.check_call(["bin/cachet-synth", "-o", plain, "--threads", "1"] +
                                      [x for x in flags if x != "--rope-freqs"])
                subprocess.check_output([ref, plain, plain + ".f32", "1"] + ids)
                subprocess.check_output([ref, model, out, "1"] + ids)
                print("llama3 %s: rope_freqs moves llama.cpp's logits by %.4f" % (name, np.abs(
                    np.fromfile(plain + ".f32", dtype="<f4") - np.fromfile(out, dtype="<f4")).max()))
            row = golden_row(ref, model, ids, Model(hp, W), "%s_%s" % (arch, name), "%s %-7s" % (arch, name),
                             n_gen)
            rows.append("\t".join([arch, name] + row))
        os.unlink(model)
    with open(index, "w", encoding="utf-8", newline="\n") as f:
        f.write("# llama.cpp (llama-cpp-python 0.3.36's vendored source, libllama via llama_logits_ref.cpp, CPU, "
                "1 thread, flash attention off) and the float64 reference (gen_float_ref.py); gen_archs.py\n")
        f.write("# fields: arch  prompt  prompt_ids  llama_greedy(%d; llama1b %d)  llama_margins  float_greedy  "
                "float_margins\n" % (N_GEN, N_GEN_MODEL["llama1b"]))
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
