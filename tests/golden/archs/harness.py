"""The part gen_archs.py and gen_mla.py share: building llama_logits_ref (the
C++ harness beside this file, against llama.cpp's static libraries) and one
golden row: llama.cpp's last-position logits, greedy ids and margins, then
the float64 model's (any object with forward(ids) -> logits of the last
position, keeping its cache between calls). Writes <stem>.f32 and
<stem>.float.f32 beside this file; returns the row's fields."""
import os
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = ["src/libllama.a", "ggml/src/libggml.a", "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a"]


def build_ref(llama_src, llama_build, tmp):
    """Compiles llama_logits_ref.cpp into tmp; returns its path."""
    ref = os.path.join(tmp, "llama_logits_ref")
    subprocess.check_call(["g++", "-O1", "-std=c++17", "-I" + os.path.join(llama_src, "include"),
                           "-I" + os.path.join(llama_src, "ggml", "include"),
                           os.path.join(HERE, "llama_logits_ref.cpp"), "-o", ref] +
                          [os.path.join(llama_build, x) for x in LIBS] + ["-lpthread", "-lgomp", "-ldl"])
    return ref


def tokenize(model, text):
    """Prompt ids by `cachet tokenize` (its tokenizers match llama.cpp's on these vocabularies)."""
    return subprocess.check_output(["bin/cachet", "tokenize", "--model", model, text]).decode().split()


def golden_row(ref, model, ids, m, stem, label, n_gen):
    """llama.cpp and float64 model m on prompt ids (strings): writes the two
    logit files of stem, prints the agreement, returns
    [ids, llama_greedy, llama_margins, float_greedy, float_margins]."""
    out = os.path.join(HERE, stem + ".f32")
    line = subprocess.check_output([ref, model, out, str(n_gen)] + ids).decode().rstrip("\n")
    lgreedy, lmargins = line.split("\t")
    lg = m.forward([int(x) for x in ids])
    lg.astype("<f4").tofile(os.path.join(HERE, stem + ".float.f32"))
    first = lg.copy()
    greedy, margins = [], []
    for step in range(n_gen):
        top = np.argsort(-lg, kind="stable")[:2]
        greedy.append(int(top[0]))
        margins.append(float(lg[top[0]] - lg[top[1]]))
        if step < n_gen - 1:
            lg = m.forward([greedy[-1]])
    llama = np.fromfile(out, dtype="<f4")
    print("%s n=%3d  |float64 - llama.cpp| max %.4f  greedy same: %s" %
          (label, len(ids), np.abs(first - llama).max(), " ".join(map(str, greedy)) == lgreedy))
    return [" ".join(ids), lgreedy, lmargins, " ".join(map(str, greedy)), " ".join("%.4f" % x for x in margins)]
