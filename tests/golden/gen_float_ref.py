#!/usr/bin/env python3
"""Float reference for the llama forward pass (and qwen2's biases, qwen3's
head norms, their NEOX rope; gen_archs.py imports it): an independent implementation in
numpy (float64) over weights dequantized by the `gguf` package. It runs the
same prompts as gen_logits.py (read from logits_index.tsv) and writes, per
prompt, the last position's logits and a 64-token greedy continuation.

Unlike llama.cpp, this reference does not quantize activations to 8 bits, so
it is the reference for cachet's exact (f32-activation) mode; the llama.cpp
data stays the reference for the default, llama.cpp-like 8-bit path. K and V
are rounded to float16 as they enter the cache, because cachet's (and
llama.cpp's) KV cache is f16 by design; everything else is float64.

Usage: gen_float_ref.py MODEL.gguf DIR   (DIR holds logits_index.tsv)
Writes: DIR/float_<name>.f32 (float32[n_vocab]) and DIR/float_index.tsv:
  name  greedy_ids(64)  greedy_margins(top1-top2 per step, %.4f)
"""
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def load(model):
    r = GGUFReader(model)
    tensors = {t.name: t for t in r.tensors}

    def field(key):
        f = r.fields[key]
        return f.parts[f.data[0]][0]

    fa = r.fields["general.architecture"]
    a = bytes(fa.parts[fa.data[0]]).decode()
    hp = dict(n_layer=int(field(a + ".block_count")), n_head=int(field(a + ".attention.head_count")),
              n_kv=int(field(a + ".attention.head_count_kv")), n_embd=int(field(a + ".embedding_length")),
              eps=float(field(a + ".attention.layer_norm_rms_epsilon")),
              base=float(field(a + ".rope.freq_base")))
    hp["hd"] = hp["n_embd"] // hp["n_head"]
    if a + ".attention.key_length" in r.fields:
        hp["hd"] = int(field(a + ".attention.key_length"))
    hp["neox"] = a in ("qwen2", "qwen3")  # llama.cpp's LLAMA_ROPE_TYPE_NEOX: half-split pairs

    def w(name):
        t = tensors[name]
        a = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float64)
        return a.reshape([int(x) for x in reversed(t.shape)]) if a.ndim == 1 and len(t.shape) > 1 else a

    W = {"E": w("token_embd.weight"), "out_norm": w("output_norm.weight"), "layers": []}
    W["out"] = w("output.weight") if "output.weight" in tensors else W["E"]
    W["rope_freqs"] = w("rope_freqs.weight") if "rope_freqs.weight" in tensors else 1.0  # llama 3 scaling
    for l in range(hp["n_layer"]):
        L = {k: w(f"blk.{l}.{k}.weight") for k in
             ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm",
              "ffn_gate", "ffn_up", "ffn_down")}
        for k in ("attn_q_norm", "attn_k_norm"):  # qwen3: RMSNorm of each q/k head
            if f"blk.{l}.{k}.weight" in tensors:
                L[k] = w(f"blk.{l}.{k}.weight")
        for k in ("attn_q", "attn_k", "attn_v"):  # qwen2: biases
            if f"blk.{l}.{k}.bias" in tensors:
                L[k + ".bias"] = w(f"blk.{l}.{k}.bias")
        W["layers"].append(L)
    return hp, W


class Model:
    def __init__(self, hp, W):
        self.hp, self.W = hp, W
        self.k = [[] for _ in range(hp["n_layer"])]
        self.v = [[] for _ in range(hp["n_layer"])]
        self.pos = 0

    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.hp["eps"]) * w

    def rope(self, x, pos):  # GGUF llama: adjacent pairs (the converter permuted Q/K rows); neox: halves
        hd = self.hp["hd"]
        i = np.arange(hd // 2)
        th = pos[:, None] * self.hp["base"] ** (-2.0 * i / hd) / self.W["rope_freqs"]
        c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
        lo, hi = (slice(0, hd // 2), slice(hd // 2, hd)) if self.hp.get("neox") else (slice(0, None, 2), slice(1, None, 2))
        x0, x1 = x[..., lo].copy(), x[..., hi].copy()
        y = x.copy()
        y[..., lo] = x0 * c - x1 * s
        y[..., hi] = x0 * s + x1 * c
        return y

    def proj(self, a, L, k, heads):  # a @ W^T (+ bias), per head (+ qwen3's head norm)
        y = a @ L[k].T
        if k + ".bias" in L:
            y = y + L[k + ".bias"]
        y = y.reshape(a.shape[0], heads, self.hp["hd"])
        if k + "_norm" in L:
            y = self.rms(y, L[k + "_norm"])
        return y

    def forward(self, ids):
        hp, W = self.hp, self.W
        n, H, KV, hd = len(ids), hp["n_head"], hp["n_kv"], hp["hd"]
        pos = np.arange(self.pos, self.pos + n, dtype=np.float64)
        x = W["E"][ids]
        for l, L in enumerate(W["layers"]):
            a = self.rms(x, L["attn_norm"])
            q = self.rope(self.proj(a, L, "attn_q", H), pos)
            k = self.rope(self.proj(a, L, "attn_k", KV), pos)
            v = self.proj(a, L, "attn_v", KV)
            k = k.astype(np.float16).astype(np.float64)  # the f16 KV cache
            v = v.astype(np.float16).astype(np.float64)
            self.k[l].append(k)
            self.v[l].append(v)
            K, V = np.concatenate(self.k[l]), np.concatenate(self.v[l])
            total = K.shape[0]
            mask = np.where(np.arange(total)[None, :] <= pos[:, None], 0.0, -np.inf)
            o = np.empty((n, H, hd))
            for h in range(H):
                g = h // (H // KV)
                s = q[:, h] @ K[:, g].T / np.sqrt(hd) + mask
                p = np.exp(s - s.max(-1, keepdims=True))
                o[:, h] = (p / p.sum(-1, keepdims=True)) @ V[:, g]
            x = x + o.reshape(n, H * hd) @ L["attn_output"].T
            f = self.rms(x, L["ffn_norm"])
            gt, up = f @ L["ffn_gate"].T, f @ L["ffn_up"].T
            x = x + (gt / (1 + np.exp(-gt)) * up) @ L["ffn_down"].T
        self.pos += n
        return self.rms(x[-1], W["out_norm"]) @ W["out"].T


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    hp, W = load(model)
    rows = []
    for line in open(os.path.join(outdir, "logits_index.tsv"), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        name, ids = f[0], [int(x) for x in f[1].split()]
        m = Model(hp, W)
        lg = m.forward(ids)
        lg.astype("<f4").tofile(os.path.join(outdir, "float_%s.f32" % name))
        greedy, margins = [], []
        for step in range(64):
            top = np.argsort(-lg, kind="stable")[:2]
            greedy.append(int(top[0]))
            margins.append(float(lg[top[0]] - lg[top[1]]))
            if step < 63:
                lg = m.forward([greedy[-1]])
        ref = np.fromfile(os.path.join(outdir, f[5]), dtype="<f4")
        first = np.fromfile(os.path.join(outdir, "float_%s.f32" % name), dtype="<f4")
        same = next((i for i, (a, b) in enumerate(zip(greedy, map(int, f[2].split()))) if a != b), 64)
        print("%-16s n=%4d  |float - llama.cpp| max %.4f  greedy agrees with llama.cpp for %d tokens"
              % (name, len(ids), np.abs(first - ref).max(), same))
        rows.append("%s\t%s\t%s" % (name, " ".join(map(str, greedy)), " ".join("%.4f" % x for x in margins)))
    with open(os.path.join(outdir, "float_index.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("# float64 numpy reference over gguf-dequantized weights, f16 KV cache (gen_float_ref.py)\n")
        f.write("# fields: name  greedy_ids(64, argmax, no stop at end-of-generation)  greedy_margins\n")
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
