#!/usr/bin/env python3
"""EXACT-MATH reference (our own, NOT llama.cpp): a plain numpy forward pass of the `llama`
architecture (SmolLM2) in float64 on weights dequantized with gguf.quants, written from
shared/reference/gguf-and-architectures.md §3 (RMSNorm eps from the file, RoPE NORMAL mode
pairs (2i,2i+1) with base llama.rope.freq_base, GQA kv head = h // (n_head/n_head_kv),
SiLU-gated FFN, tied LM head = token_embd). No activation quantization, f64 KV cache.

Why: llama.cpp's CPU backend quantizes activations to 8 bits (Q8_0/Q8_1) before every
quantized matmul and stores K/V in f16, which moves logits by ~0.1 on average (up to ~1.8) versus
exact math; an engine that computes in f32 should match THIS reference to ~1e-3 instead.
It is validated against the llama.cpp logits (KL divergence, top-k agreement) at generation time.

Usage: gen_exact.py MODEL.gguf OUTDIR      (needs logits_index.tsv from gen_logits.py in OUTDIR)

Writes:
  exact_<name>.f32   float32 LE [n_vocab]: exact logits at the last prompt position
  exact_index.tsv    '#' comments, then per prompt (TAB-separated):
     1 name  2 prompt_ids (same as logits_index.tsv)  3 greedy_ids (64, argmax with f64 KV cache,
     one token at a time, no EOG stop)  4 eos_stop (index of the first EOG id 0/2/4 in greedy_ids, -1 none)
     5 n_prompt  6 file  7 greedy_margins (top1-top2 gap per step, %.4f)
     8 max|exact - llama.cpp| at the last prompt position (%.4f)  9 mean|diff| (%.4f)
     10 KL(softmax(llama.cpp) || softmax(exact)) (%.6f)  11 argmax_exact  12 argmax_llama.cpp
     13 greedy_common_prefix: number of leading greedy tokens equal to llama.cpp's greedy_ids
"""
import os
import sys

import numpy as np
import gguf
from gguf.quants import dequantize

EOG = (0, 2, 4)  # llama_vocab_is_eog for this vocab: <|endoftext|>, <|im_end|>, <reponame>
N_GREEDY = 64


class Model:
    def __init__(self, path):
        r = gguf.GGUFReader(path)
        f = {k: v.contents() for k, v in r.fields.items()
             if not k.startswith("GGUF.") and v.types[0] != gguf.GGUFValueType.ARRAY}
        self.n_embd = int(f["llama.embedding_length"])
        self.n_layer = int(f["llama.block_count"])
        self.n_head = int(f["llama.attention.head_count"])
        self.n_head_kv = int(f["llama.attention.head_count_kv"])
        self.eps = float(np.float32(f["llama.attention.layer_norm_rms_epsilon"]))
        self.base = float(f["llama.rope.freq_base"])
        self.n_rot = int(f["llama.rope.dimension_count"])
        self.hd = self.n_embd // self.n_head
        self.W = {}
        for t in r.tensors:
            ne = [int(x) for x in t.shape]
            a = dequantize(np.asarray(t.data), t.tensor_type)
            self.W[t.name] = np.asarray(a, dtype=np.float64).reshape(list(reversed(ne)))  # [ne1, ne0]
        self.reset()

    def reset(self):
        self.k = [np.zeros((0, self.n_head_kv, self.hd)) for _ in range(self.n_layer)]
        self.v = [np.zeros((0, self.n_head_kv, self.hd)) for _ in range(self.n_layer)]
        self.n_past = 0

    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def rope(self, x, pos):
        i = np.arange(self.n_rot // 2)
        theta = pos[:, None] * self.base ** (-2.0 * i / self.n_rot)
        c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
        x0, x1 = x[..., 0:self.n_rot:2].copy(), x[..., 1:self.n_rot:2].copy()
        out = x.copy()
        out[..., 0:self.n_rot:2] = x0 * c - x1 * s
        out[..., 1:self.n_rot:2] = x0 * s + x1 * c
        return out

    def eval(self, ids):
        """Evaluate new tokens, return logits of the last one."""
        W = self.W
        T = len(ids)
        P = self.n_past
        x = W["token_embd.weight"][ids]
        pos = np.arange(P, P + T, dtype=np.float64)
        # query t (absolute P+t) sees keys 0..P+t
        mask = np.where(np.arange(P + T)[None, :] <= (P + np.arange(T))[:, None], 0.0, -np.inf)
        grp = self.n_head // self.n_head_kv
        for l in range(self.n_layer):
            p = "blk.%d." % l
            a = self.rms(x, W[p + "attn_norm.weight"])
            q = (a @ W[p + "attn_q.weight"].T).reshape(T, self.n_head, self.hd)
            k = (a @ W[p + "attn_k.weight"].T).reshape(T, self.n_head_kv, self.hd)
            v = (a @ W[p + "attn_v.weight"].T).reshape(T, self.n_head_kv, self.hd)
            q = self.rope(q, pos)
            k = self.rope(k, pos)
            self.k[l] = np.concatenate([self.k[l], k])
            self.v[l] = np.concatenate([self.v[l], v])
            K, V = self.k[l], self.v[l]
            o = np.empty((T, self.n_head, self.hd))
            for h in range(self.n_head):
                g = h // grp
                s = q[:, h, :] @ K[:, g, :].T / np.sqrt(self.hd) + mask
                s = np.exp(s - s.max(axis=-1, keepdims=True))
                s /= s.sum(axis=-1, keepdims=True)
                o[:, h, :] = s @ V[:, g, :]
            x = x + o.reshape(T, -1) @ W[p + "attn_output.weight"].T
            f = self.rms(x, W[p + "ffn_norm.weight"])
            gt = f @ W[p + "ffn_gate.weight"].T
            up = f @ W[p + "ffn_up.weight"].T
            x = x + (gt / (1.0 + np.exp(-gt)) * up) @ W[p + "ffn_down.weight"].T
        self.n_past += T
        xl = self.rms(x[-1:], W["output_norm.weight"])
        return (xl @ W["token_embd.weight"].T)[0]


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def main():
    model_path, outdir = sys.argv[1], sys.argv[2]
    m = Model(model_path)
    rows = []
    for line in open(os.path.join(outdir, "logits_index.tsv")):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        rows.append((f[0], [int(t) for t in f[1].split()], [int(t) for t in f[2].split()], f[5]))
    out = ["# EXACT-math reference (our numpy float64 forward pass on gguf-dequantized weights, see gen_exact.py);"
           " NOT llama.cpp",
           "# fields: name  prompt_ids  greedy_ids  eos_stop  n_prompt  file  greedy_margins  max_abs_diff_vs_llama.cpp"
           "  mean_abs_diff  KL(llama.cpp||exact)  argmax_exact  argmax_llama.cpp  greedy_common_prefix"]
    for name, ids, ref_greedy, ref_file in rows:
        m.reset()
        logits = m.eval(ids)
        last = logits.copy()
        fn = "exact_%s.f32" % name
        last.astype("<f4").tofile(os.path.join(outdir, fn))
        greedy, margins = [], []
        for step in range(N_GREEDY):
            tok = int(np.argmax(logits))
            top2 = np.partition(logits, -2)[-2:]
            margins.append(float(top2[1] - top2[0]))
            greedy.append(tok)
            if step + 1 < N_GREEDY:
                logits = m.eval([tok])
        ref = np.fromfile(os.path.join(outdir, ref_file), dtype="<f4").astype(np.float64)
        d = np.abs(last - ref)
        pr, pe = softmax(ref), softmax(last)
        kl = float(np.sum(pr * (np.log(pr + 1e-300) - np.log(pe + 1e-300))))
        common = next((i for i, (a, b) in enumerate(zip(greedy, ref_greedy)) if a != b), N_GREEDY)
        eos_stop = next((i for i, t in enumerate(greedy) if t in EOG), -1)
        top5_ref = list(np.argsort(-ref)[:5])
        top5_ex = list(np.argsort(-last)[:5])
        out.append("%s\t%s\t%s\t%d\t%d\t%s\t%s\t%.4f\t%.4f\t%.6f\t%d\t%d\t%d" % (
            name, " ".join(map(str, ids)), " ".join(map(str, greedy)), eos_stop, len(ids), fn,
            " ".join("%.4f" % x for x in margins), d.max(), d.mean(), kl, int(np.argmax(last)), int(np.argmax(ref)),
            common))
        print("  %-15s n=%4d exact-vs-llama.cpp max|d|=%.4f mean|d|=%.4f KL=%.5f argmax %d/%d top5 same set=%s "
              "greedy common prefix=%d eos_stop=%d" % (
                  name, len(ids), d.max(), d.mean(), kl, int(np.argmax(last)), int(np.argmax(ref)),
                  set(top5_ref) == set(top5_ex), common, eos_stop))
    with open(os.path.join(outdir, "exact_index.tsv"), "w", encoding="utf-8", newline="\n") as fp:
        fp.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
