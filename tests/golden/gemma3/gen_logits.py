#!/usr/bin/env python3
"""Reference logits and greedy continuations for Gemma 3 270M from llama.cpp.

Usage: gen_logits.py MODEL.gguf OUTDIR [LLAMA_CPP_DIR] [LLAMA_CPP_SRC]

Compiles llama_logits.c (beside this script) against the static libraries of a
llama.cpp build (default /work/ref/build; sources default to the copy vendored
in llama-cpp-python 0.3.36) and runs it twice on the prompts below:

  flash attention OFF (the reference): per prompt, llama.cpp tokenizes the text
      itself (BOS added, special tokens parsed), evaluates it in batches of 512
      tokens (n_ctx 4096, f16 KV cache, 2 threads) and writes the last position's
      logits (logits_<name>.f32, float32[262144]); then 64 greedy tokens (argmax,
      fed back one at a time, no stop at end of generation).
  flash attention ON: the same, to measure how far llama.cpp's own logits move
      under a legitimate change of its kernels (spread.tsv). Not committed.

Files (in OUTDIR):
  logits_index.tsv  name  prompt_ids  greedy_ids(64)  eos_stop  n_prompt  logits_file
                    greedy_margins(top1-top2 per step)  description
                    (the same fields as ../logits_index.tsv; eos_stop: index of the
                    first end-of-generation token, 1 <eos> or 106 <end_of_turn>, or -1)
  logits_<name>.f32 the last prompt position's logits, flash attention off
  spread.tsv        name  max|FA on - FA off|  top1_same
The prompt ids come from llama.cpp, so the goldens do not depend on cachet's
tokenizer; cachet's tests feed those ids.
"""
import ast
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EOG = {1, 106}


def gemma_chat(turns):
    """Gemma's turn format without the BOS (llama.cpp adds it)."""
    s = ""
    for role, text in turns:
        s += "<start_of_turn>%s\n%s<end_of_turn>\n" % (role, text)
    return s + "<start_of_turn>model\n"


def long_text():
    """The SmolLM2 goldens' long passage, a ledger that never repeats, and a
    question about the first lines: > 2,000 tokens, so the sliding-window layers
    (512 positions) really slide while the global ones still see the start."""
    src = open(os.path.join(HERE, "..", "gen_logits.py"), encoding="utf-8").read()
    text = next(ast.literal_eval(n.value) for n in ast.parse(src).body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "LONG_TEXT")
    words = ["anchor", "barrel", "candle", "drift", "ember", "falcon", "granite", "harbour", "island",
             "juniper", "kettle", "lantern", "meadow", "needle", "orchard", "pebble", "quarry", "rudder"]
    ledger = ["", "", "The keeper's ledger of stores, one line per day:"]
    for day in range(1, 41):
        a, b = words[day % len(words)], words[(day * 7 + 3) % len(words)]
        ledger.append("Day %d: %d litres of oil, %d candles, the %s by the %s was checked at %02d:%02d."
                      % (day, 400 - 3 * day, (day * 13) % 97, a, b, (day * 5) % 24, (day * 11) % 60))
    return (text + "\n".join(ledger) + "\n\nQuestion: what did the keeper repair on Tuesday, and how long "
            "does one revolution of the beam take? Answer:")


PROMPTS = [
    ("single", "one word after BOS", "Hello"),
    ("prose", "plain text completion prompt", "The capital of France is"),
    ("chat_france", "Gemma turn template: capital of France",
     gemma_chat([("user", "What is the capital of France?")])),
    ("chat_prime", "Gemma turn template: Python prime function",
     gemma_chat([("user", "Write a Python function that checks whether a number is prime.")])),
    ("chat_multiturn", "Gemma turn template, two user turns and a model turn",
     gemma_chat([("user", "I have 3 apples and eat one. How many are left?"), ("model", "You have 2 apples left."),
                 ("user", "And if I buy 4 more?")])),
    ("numbers", "digits and punctuation", "Fibonacci: 1, 1, 2, 3, 5, 8, 13, 21,"),
    ("long_mixed", "> 2,000 tokens (5 batches of 512): prose, C, Python, a ledger, a question about the start",
     long_text()),
]


def build(llama_dir, llama_src, out):
    libs = [os.path.join(llama_dir, p) for p in ("src/libllama.a", "ggml/src/libggml.a",
                                                   "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a")]
    cmd = ["g++", "-x", "c", "-O2", "-std=c11", "-I" + os.path.join(llama_src, "include"),
           "-I" + os.path.join(llama_src, "ggml", "include"), os.path.join(HERE, "llama_logits.c"), "-x", "none",
           "-o", out] + libs + ["-fopenmp", "-lpthread", "-lm", "-ldl"]
    subprocess.run(cmd, check=True)


def run(binary, model, prompts_file, outdir, suffix, fa):
    r = subprocess.run([binary, model, prompts_file, outdir, suffix, str(fa), "2"], check=True,
                       capture_output=True, text=True)
    rows = {}
    for line in r.stdout.splitlines():
        name, ids, greedy, margins = line.split("\t")
        rows[name] = (ids, greedy, margins)
    return rows


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    llama_dir = sys.argv[3] if len(sys.argv) > 3 else "/work/ref/build"
    llama_src = sys.argv[4] if len(sys.argv) > 4 else "/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp"
    tmp = tempfile.mkdtemp()
    binary = os.path.join(tmp, "llama_logits")
    build(llama_dir, llama_src, binary)
    pf = os.path.join(tmp, "prompts.tsv")
    with open(pf, "w") as f:
        for name, _, text in PROMPTS:
            f.write("%s\t%s\n" % (name, text.encode("utf-8").hex()))
    ref = run(binary, model, pf, outdir, "", 0)
    fa = run(binary, model, pf, tmp, "_fa", 1)
    index = ["# reference logits: llama.cpp (vendored in llama-cpp-python 0.3.36) through llama_logits.c; n_ctx 4096, "
             "batches of 512, 2 threads, f16 KV, flash attention off; BOS added and special tokens parsed by llama.cpp",
             "# fields: name  prompt_ids  greedy_ids  eos_stop  n_prompt  logits_file  greedy_margins  description"]
    spread = ["# llama.cpp flash attention on vs off, last-position logits (gen_logits.py)",
              "# fields: name  max_abs_diff  top1_same"]
    for name, desc, _ in PROMPTS:
        ids, greedy, margins = ref[name]
        g = [int(x) for x in greedy.split()]
        eos = next((i for i, t in enumerate(g) if t in EOG), -1)
        n = len(ids.split())
        index.append("\t".join([name, ids, greedy, str(eos), str(n), "logits_%s.f32" % name, margins, desc]))
        a = np.fromfile(os.path.join(outdir, "logits_%s.f32" % name), dtype="<f4")
        b = np.fromfile(os.path.join(tmp, "logits_%s_fa.f32" % name), dtype="<f4")
        spread.append("%s\t%.5f\t%d" % (name, float(np.abs(a - b).max()), int(a.argmax() == b.argmax())))
        print("%-15s n=%5d argmax %6d  FA spread %.4f  eos_stop %d" % (name, n, int(a.argmax()),
                                                                       float(np.abs(a - b).max()), eos))
    with open(os.path.join(outdir, "logits_index.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(index) + "\n")
    with open(os.path.join(outdir, "spread.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(spread) + "\n")
    subprocess.run(["rm", "-rf", tmp], check=True)


if __name__ == "__main__":
    main()
