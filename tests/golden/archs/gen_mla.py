#!/usr/bin/env python3
"""Goldens for the deepseek2 architecture (DeepSeek-V2's multi-head latent
attention, dense FFNs) on synthetic models: tests/test_mla.c reads them.

Writes each model with bin/cachet-synth (seeded; tests/test_mla.c writes the
same bytes through synth_write) with the deepseek-llm vocabulary of
llama.cpp's vocab-only GGUF (models/vocab, `make vocabs`). Prompt ids come
from `cachet tokenize`. Then:
  - llama.cpp: llama_logits_ref.cpp (beside this script) against libllama:
    last-position logits -> deepseek2_<model>_<prompt>.f32, greedy ids and
    margins (llama.cpp runs the unsplit attn_kv_b file as MHA: the naive form);
  - float64 numpy (DeepSeek2 below, llama.cpp's graph: q (or the q LoRA), the
    latent normed, per-head k = [k_nope | k_pe], v from attn_kv_b, RoPE on the
    trailing qk_rope dims in adjacent pairs, scale 1/sqrt(qk_nope + qk_rope);
    the latent and the RoPE key rounded to f16 as cachet's default cache
    holds them) -> deepseek2_<model>_<prompt>.float.f32, greedy ids, margins.
Usage (from the repository root, after make all):
  tests/golden/archs/gen_mla.py [--llama-src DIR] [--llama-build DIR]
Writes tests/golden/archs/mla_index.tsv:
  model  prompt  prompt_ids  llama_greedy  llama_margins  float_greedy  float_margins
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

from harness import build_ref, golden_row, tokenize

HERE = os.path.dirname(os.path.abspath(__file__))

# Must match tests/test_mla.c's mla_models[] and mla_params().
BASE = ["--arch", "deepseek2", "--vocab-file", "models/vocab/ggml-vocab-deepseek-llm.gguf", "--layers", "2",
        "--embd", "128", "--heads", "4", "--ff", "256", "--kv-lora-rank", "64", "--qk-nope", "32", "--qk-rope",
        "16", "--v-head-dim", "32", "--type", "q8_0", "--embd-type", "q8_0", "--seed", "7"]
MODELS = {"ds2lite": BASE, "ds2": BASE + ["--q-lora-rank", "96"]}
PROMPTS = {
    "france": "The capital of France is",
    "medium": " ".join("Line %d: the cache keeps every prefix it has seen, page by page." % i for i in range(6)),
}
N_GEN = 16  # tests/test_mla.c's N_GEN


def load(path):
    r = GGUFReader(path)
    t = {x.name: x for x in r.tensors}

    def field(key):
        f = r.fields[key]
        return f.parts[f.data[0]][0]

    def w(name):
        x = t[name]
        a = np.asarray(dequantize(x.data, x.tensor_type), dtype=np.float64)
        return a.reshape([int(s) for s in reversed(x.shape)]) if a.ndim == 1 and len(x.shape) > 1 else a

    p = "deepseek2."
    hp = dict(n_layer=int(field(p + "block_count")), H=int(field(p + "attention.head_count")),
              qk=int(field(p + "attention.key_length")), V=int(field(p + "attention.value_length")),
              rope=int(field(p + "rope.dimension_count")), R=int(field(p + "attention.kv_lora_rank")),
              eps=float(field(p + "attention.layer_norm_rms_epsilon")), base=float(field(p + "rope.freq_base")))
    W = {"E": w("token_embd.weight"), "out_norm": w("output_norm.weight"), "layers": []}
    W["out"] = w("output.weight") if "output.weight" in t else W["E"]
    for l in range(hp["n_layer"]):
        L = {k: w("blk.%d.%s.weight" % (l, k)) for k in
             ("attn_norm", "attn_kv_a_mqa", "attn_kv_a_norm", "attn_kv_b", "attn_output", "ffn_norm", "ffn_gate",
              "ffn_up", "ffn_down")}
        for k in ("attn_q", "attn_q_a", "attn_q_a_norm", "attn_q_b"):
            if "blk.%d.%s.weight" % (l, k) in t:
                L[k] = w("blk.%d.%s.weight" % (l, k))
        W["layers"].append(L)
    return hp, W


class DeepSeek2:
    def __init__(self, hp, W):
        self.hp, self.W, self.pos = hp, W, 0
        self.c = [[] for _ in range(hp["n_layer"])]   # the latent, per layer
        self.kpe = [[] for _ in range(hp["n_layer"])]  # the roped shared key

    def rms(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.hp["eps"]) * w

    def rope(self, x, pos):  # adjacent pairs over the last axis (llama.cpp's NORM mode)
        d = x.shape[-1]
        th = pos[:, None] * self.hp["base"] ** (-2.0 * np.arange(d // 2) / d)
        shape = (len(pos),) + (1,) * (x.ndim - 2) + (d // 2,)
        c, s = np.cos(th).reshape(shape), np.sin(th).reshape(shape)
        y = x.copy()
        y[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
        y[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
        return y

    def forward(self, ids):
        hp, W = self.hp, self.W
        n, H, qk, V, R, rp = len(ids), hp["H"], hp["qk"], hp["V"], hp["R"], hp["rope"]
        nope = qk - rp
        pos = np.arange(self.pos, self.pos + n, dtype=np.float64)
        x = W["E"][ids].astype(np.float64)
        for l, L in enumerate(W["layers"]):
            a = self.rms(x, L["attn_norm"])
            if "attn_q_a" in L:
                q = self.rms(a @ L["attn_q_a"].T, L["attn_q_a_norm"]) @ L["attn_q_b"].T
            else:
                q = a @ L["attn_q"].T
            q = q.reshape(n, H, qk)
            q = np.concatenate([q[..., :nope], self.rope(q[..., nope:], pos)], axis=-1)
            kva = a @ L["attn_kv_a_mqa"].T
            c = self.rms(kva[:, :R], L["attn_kv_a_norm"])
            kpe = self.rope(kva[:, R:], pos)
            self.c[l].append(c.astype(np.float16).astype(np.float64))  # cachet's f16 latent cache
            self.kpe[l].append(kpe.astype(np.float16).astype(np.float64))
            C, KPE = np.concatenate(self.c[l]), np.concatenate(self.kpe[l])
            kv = (C @ L["attn_kv_b"].T).reshape(C.shape[0], H, nope + V)
            K = np.concatenate([kv[..., :nope], np.repeat(KPE[:, None, :], H, axis=1)], axis=-1)
            Vv = kv[..., nope:]
            mask = np.where(np.arange(C.shape[0])[None, :] <= pos[:, None], 0.0, -np.inf)
            o = np.empty((n, H, V))
            for h in range(H):
                s = q[:, h] @ K[:, h].T / np.sqrt(qk) + mask
                p = np.exp(s - s.max(-1, keepdims=True))
                o[:, h] = (p / p.sum(-1, keepdims=True)) @ Vv[:, h]
            x = x + o.reshape(n, H * V) @ L["attn_output"].T
            f = self.rms(x, L["ffn_norm"])
            gt, up = f @ L["ffn_gate"].T, f @ L["ffn_up"].T
            x = x + (gt / (1 + np.exp(-gt)) * up) @ L["ffn_down"].T
        self.pos += n
        return self.rms(x[-1], W["out_norm"]) @ W["out"].T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--llama-build", default="/work/ref/build")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    ref = build_ref(a.llama_src, a.llama_build, tmp)
    rows = []
    for name, flags in MODELS.items():
        model = os.path.join(tmp, name + ".gguf")
        subprocess.check_call(["bin/cachet-synth", "-o", model, "--threads", "1"] + flags)
        hp, W = load(model)
        for pname, text in PROMPTS.items():
            ids = tokenize(model, text)
            row = golden_row(ref, model, ids, DeepSeek2(hp, W), "deepseek2_%s_%s" % (name, pname),
                             "%s %-7s" % (name, pname), N_GEN)
            rows.append("\t".join([name, pname] + row))
        os.unlink(model)
    with open(os.path.join(HERE, "mla_index.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("# deepseek2 (tests/test_mla.c): llama.cpp (llama-cpp-python 0.3.36's vendored source, libllama via "
                "llama_logits_ref.cpp, CPU, 1 thread, flash attention off) and the float64 pass; gen_mla.py\n")
        f.write("# fields: model  prompt  prompt_ids  llama_greedy(%d)  llama_margins  float_greedy  float_margins\n"
                % N_GEN)
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
