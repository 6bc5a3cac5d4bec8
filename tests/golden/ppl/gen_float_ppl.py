#!/usr/bin/env python3
"""Float64 reference perplexity for `cachet perplexity --exact`: llama-perplexity's
algorithm (tools/perplexity/perplexity.cpp) over the numpy forward pass of
tests/golden/gen_float_ref.py (weights dequantized by the `gguf` package, f16
K/V, everything else float64). The text is tokenized by llama.cpp's
llama-tokenize (with BOS when the model adds one); chunk i is tokens
[i*ctx, (i+1)*ctx) with its first token replaced by BOS when the model adds
one; rows ctx/2 .. ctx-2 are scored against the next token.

Usage: gen_float_ppl.py MODEL.gguf TEXT CTX CHUNKS OUT.txt
env:   LLAMA_CPP_BIN  folder with llama-tokenize (default /work/ref/build/bin)
Writes OUT.txt: comment lines, then "chunk<TAB>running ppl" per chunk and
"final<TAB>ppl<TAB>nll mean<TAB>count" (%.10g).
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gen_float_ref as ref  # noqa: E402
from gguf import GGUFReader  # noqa: E402


def add_bos_of(model):
    r = GGUFReader(model)
    f = r.fields.get("tokenizer.ggml.add_bos_token")
    add = bool(f.parts[f.data[0]][0]) if f is not None else False
    b = r.fields.get("tokenizer.ggml.bos_token_id")
    return add, (int(b.parts[b.data[0]][0]) if b is not None else -1)


def tokenize(model, text):
    bin_dir = os.environ.get("LLAMA_CPP_BIN", "/work/ref/build/bin")
    out = subprocess.run([os.path.join(bin_dir, "llama-tokenize"), "-m", model, "-f", text, "--ids",
                          "--log-disable"], check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return [int(x) for x in line.strip("[]").split(",") if x.strip()]


def nll(logits, tok):
    m = logits.max()
    return float(m + np.log(np.exp(logits - m).sum()) - logits[tok])


def main():
    model, text, ctx, chunks, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    arch = GGUFReader(model).fields["general.architecture"].contents()
    hp, W = (ref.load_gemma3(model) if arch == "gemma3" else ref.load(model))
    make = ref.Gemma3 if arch == "gemma3" else ref.Model
    add_bos, bos = add_bos_of(model)
    toks = tokenize(model, text)
    first = ctx // 2
    total, total2, count, rows = 0.0, 0.0, 0, []
    for i in range(min(chunks, len(toks) // ctx)):
        c = list(toks[i * ctx:(i + 1) * ctx])
        if add_bos:
            c[0] = bos
        m = make(hp, W)
        lg = m.forward(c[:first + 1])  # row `first`
        for p in range(first, ctx - 1):
            if p > first:
                lg = m.forward([c[p]])
            v = nll(np.asarray(lg, dtype=np.float64), c[p + 1])
            total += v
            total2 += v * v
            count += 1
        rows.append("%d\t%.10g" % (i + 1, np.exp(total / count)))
        print("chunk %d: running ppl %.6f" % (i + 1, np.exp(total / count)), file=sys.stderr)
    mean = total / count
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write("# gen_float_ppl.py %s %s ctx %d chunks %d (float64 numpy, f16 KV; add_bos %d)\n"
                % (os.path.basename(model), os.path.basename(text), ctx, len(rows), add_bos))
        f.write("# tokens %d (llama-tokenize)\n" % len(toks))
        f.write("\n".join(rows) + "\n")
        f.write("final\t%.10g\t%.10g\t%d\n" % (np.exp(mean), mean, count))


if __name__ == "__main__":
    main()
