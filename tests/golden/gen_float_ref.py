#!/usr/bin/env python3
"""Float reference for the llama and gemma3 forward passes (and for qwen2's
Q/K/V biases, qwen3's q/k head norms, phi3's fused attn_qkv and gate|up ffn_up,
their NEOX rope and llama 3's
rope_freqs, in the llama Model; tests/golden/archs/gen_archs.py imports it):
an independent
implementation in numpy (float64) over weights dequantized by the `gguf`
package. It runs the prompts of DIR/logits_index.tsv (gen_logits.py for
SmolLM2, gemma3/gen_logits.py for Gemma 3) and writes, per prompt, the last
position's logits and a 64-token greedy continuation. The architecture comes
from the file's general.architecture.

gemma3 follows gguf-and-architectures.md section 4 and llama.cpp's graph:
embeddings x sqrt(n_embd), RMSNorm with the stored (1 + w) weights, q/k
RMSNorm per head, NEOX RoPE (base 10000 on sliding layers, rope.freq_base on
global ones; layer il slides iff il % 6 < 5 when the file has no pattern key),
q x 1/sqrt(head_dim), a 512-position window (attention.sliding_window) on the
sliding layers, post-attention and post-FFN norms, GeGLU with tanh GELU, the
tied head.

Unlike llama.cpp, this reference does not quantize activations to 8 bits, so
it is the reference for cachet's exact (f32-activation) mode; the llama.cpp
data stays the reference for the default, llama.cpp-like 8-bit path. K and V
are rounded to float16 as they enter the cache, because cachet's (and
llama.cpp's) KV cache is f16 by design; everything else is float64.

Usage: gen_float_ref.py MODEL.gguf DIR   (DIR holds logits_index.tsv; tests/golden/gemma3 for Gemma 3)
Writes: DIR/float_<name>.f32 (float32[n_vocab]) and DIR/float_index.tsv:
  name  greedy_ids(64)  greedy_margins(top1-top2 per step, %.4f)
"""
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def load(model, dtype=np.float64):  # dtype: how the weights are held (float32 halves a 1B model's 8 GB)
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
    hp["neox"] = a in ("qwen2", "qwen3", "phi3")  # llama.cpp's LLAMA_ROPE_TYPE_NEOX: half-split pairs

    def w(name):
        t = tensors[name]
        a = np.asarray(dequantize(t.data, t.tensor_type), dtype=dtype)
        return a.reshape([int(x) for x in reversed(t.shape)]) if a.ndim == 1 and len(t.shape) > 1 else a

    W = {"E": w("token_embd.weight"), "out_norm": w("output_norm.weight"), "layers": []}
    W["out"] = w("output.weight") if "output.weight" in tensors else W["E"]
    W["rope_freqs"] = w("rope_freqs.weight") if "rope_freqs.weight" in tensors else 1.0  # llama 3 scaling
    Q, KV = hp["n_head"] * hp["hd"], hp["n_kv"] * hp["hd"]
    for l in range(hp["n_layer"]):
        fused = f"blk.{l}.attn_qkv.weight" in tensors  # phi3: q|k|v rows, ffn_up holds gate|up
        L = {k: w(f"blk.{l}.{k}.weight") for k in
             ("attn_norm", "attn_output", "ffn_norm", "ffn_up", "ffn_down") +
             (() if fused else ("attn_q", "attn_k", "attn_v")) + (() if a == "phi3" else ("ffn_gate",))}
        if fused:
            qkv = w(f"blk.{l}.attn_qkv.weight")
            L["attn_q"], L["attn_k"], L["attn_v"] = qkv[:Q], qkv[Q:Q + KV], qkv[Q + KV:]
        if a == "phi3":
            F = L["ffn_up"].shape[0] // 2
            L["ffn_gate"], L["ffn_up"] = L["ffn_up"][:F], L["ffn_up"][F:]
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
        x = W["E"][ids].astype(np.float64)
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


def load_gemma3(model):
    r = GGUFReader(model)
    tensors = {t.name: t for t in r.tensors}

    def field(key, default=None):
        if key not in r.fields:
            return default
        f = r.fields[key]
        return f.parts[f.data[0]][0]

    n_layer = int(field("gemma3.block_count"))
    hp = dict(n_layer=n_layer, n_head=int(field("gemma3.attention.head_count")),
              n_kv=int(field("gemma3.attention.head_count_kv")), n_embd=int(field("gemma3.embedding_length")),
              hd=int(field("gemma3.attention.key_length")),
              eps=float(field("gemma3.attention.layer_norm_rms_epsilon")),
              base=float(field("gemma3.rope.freq_base")), base_swa=float(field("gemma3.rope.freq_base_swa", 10000.0)),
              window=int(field("gemma3.attention.sliding_window")),
              swa=[il % 6 < 5 for il in range(n_layer)])
    assert "gemma3.attention.sliding_window_pattern" not in r.fields, "pattern key: not handled here"

    def w(name):
        t = tensors[name]
        a = np.asarray(dequantize(t.data, t.tensor_type), dtype=dtype)
        return a.reshape([int(x) for x in reversed(t.shape)]) if a.ndim == 1 and len(t.shape) > 1 else a

    W = {"E": w("token_embd.weight"), "out_norm": w("output_norm.weight"), "layers": []}
    for l in range(n_layer):
        W["layers"].append({k: w(f"blk.{l}.{k}.weight") for k in
                            ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
                             "post_attention_norm", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "post_ffw_norm")})
    return hp, W


class Gemma3(Model):
    def rope(self, x, pos, base):  # NEOX: pairs (i, i + hd/2); Q/K not permuted for gemma3
        hd = self.hp["hd"]
        half = hd // 2
        i = np.arange(half)
        th = pos[:, None] * base ** (-2.0 * i / hd)
        c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
        x0, x1 = x[..., :half].copy(), x[..., half:].copy()
        y = x.copy()
        y[..., :half] = x0 * c - x1 * s
        y[..., half:] = x0 * s + x1 * c
        return y

    def forward(self, ids):
        hp, W = self.hp, self.W
        n, H, KV, hd, E = len(ids), hp["n_head"], hp["n_kv"], hp["hd"], hp["n_embd"]
        pos = np.arange(self.pos, self.pos + n, dtype=np.float64)
        x = W["E"][ids] * np.sqrt(E)
        for l, L in enumerate(W["layers"]):
            swa = hp["swa"][l]
            a = self.rms(x, L["attn_norm"])
            q = self.rms((a @ L["attn_q"].T).reshape(n, H, hd), L["attn_q_norm"])
            k = self.rms((a @ L["attn_k"].T).reshape(n, KV, hd), L["attn_k_norm"])
            v = (a @ L["attn_v"].T).reshape(n, KV, hd)
            base = hp["base_swa"] if swa else hp["base"]
            q = self.rope(q, pos, base) / np.sqrt(hd)
            k = self.rope(k, pos, base).astype(np.float16).astype(np.float64)  # the f16 KV cache
            v = v.astype(np.float16).astype(np.float64)
            self.k[l].append(k)
            self.v[l].append(v)
            K, V = np.concatenate(self.k[l]), np.concatenate(self.v[l])
            j = np.arange(K.shape[0])[None, :]
            visible = j <= pos[:, None]
            if swa:
                visible &= pos[:, None] - j < hp["window"]
            mask = np.where(visible, 0.0, -np.inf)
            o = np.empty((n, H, hd))
            for h in range(H):
                g = h // (H // KV)
                s = q[:, h] @ K[:, g].T + mask
                p = np.exp(s - s.max(-1, keepdims=True))
                o[:, h] = (p / p.sum(-1, keepdims=True)) @ V[:, g]
            x = x + self.rms(o.reshape(n, H * hd) @ L["attn_output"].T, L["post_attention_norm"])
            m = self.rms(x, L["ffn_norm"])
            gt, up = m @ L["ffn_gate"].T, m @ L["ffn_up"].T
            gelu = 0.5 * gt * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (gt + 0.044715 * gt ** 3)))
            x = x + self.rms((gelu * up) @ L["ffn_down"].T, L["post_ffw_norm"])
        self.pos += n
        return self.rms(x[-1], W["out_norm"]) @ W["E"].T


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    arch = GGUFReader(model).fields["general.architecture"].contents()
    if arch == "gemma3":
        hp, W = load_gemma3(model)
        make = Gemma3
    else:
        hp, W = load(model)
        make = Model
    rows = []
    for line in open(os.path.join(outdir, "logits_index.tsv"), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        name, ids = f[0], [int(x) for x in f[1].split()]
        m = make(hp, W)
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
