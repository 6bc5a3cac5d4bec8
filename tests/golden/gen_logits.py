#!/usr/bin/env python3
"""Reference logits and greedy continuations from llama.cpp (llama-cpp-python bindings).

Usage: gen_logits.py MODEL.gguf OUTDIR

Reference settings: Llama(model_path, logits_all=True, n_ctx=2048, n_threads=2, n_batch=512,
seed=0, verbose=False) and otherwise the llama-cpp-python defaults, i.e. flash attention
DISABLED (llama-cpp-python passes LLAMA_FLASH_ATTN_TYPE_DISABLED unless flash_attn=True),
f16 KV cache, n_ubatch=512, no GPU. Prompts are tokenized with add_bos=False, special=True.

Per prompt (name N):
  logits_N.f32      raw little-endian float32[n_vocab] = logits at the LAST prompt position
                    (after evaluating the whole prompt in one batch of <= 512 tokens, 2 batches
                    for prompts > 512 tokens)
Files over all prompts:
  logits_index.tsv  '#' comment lines, then one line per prompt, TAB-separated fields:
      1 name  2 prompt_ids  3 greedy_ids (64 ids)  4 eos_stop (index into greedy_ids of the first
      end-of-generation token, i.e. number of tokens a stop-at-EOG run would emit; -1 if none)
      5 n_prompt  6 logits_file  7 greedy_margins (top1-top2 logit gap at each of the 64 steps,
      %.4f; a small gap means a legitimately different argmax is possible)  8 description
      ids are space-separated decimals.
  logits_argmax.tsv per prompt position: name pos token_id argmax max_logit logsumexp
      (logits of position pos predict token pos+1; max_logit/logsumexp as %.6f)
  logits_prompts.txt human-readable prompts and greedy continuations (not for parsing)

Greedy: argmax (first index on ties, numpy.argmax) of the last logits; each chosen token is fed
back with Llama.eval([tok]) one at a time; 64 tokens, no stop at EOG.
"""
import os
import sys

import numpy as np
import llama_cpp
from llama_cpp import Llama

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chatml(messages, system=SYSTEM):
    s = ""
    if system is not None:
        s += "<|im_start|>system\n%s<|im_end|>\n" % system
    for role, content in messages:
        s += "<|im_start|>%s\n%s<|im_end|>\n" % (role, content)
    return s + "<|im_start|>assistant\n"


LONG_TEXT = """The lighthouse keeper's log, autumn entries.

Monday. The wind came around to the northwest before dawn and the sea built steadily through the morning. By noon the spray was reaching the gallery rail, and I spent an hour cleaning salt from the lantern glass. The supply boat did not come; I did not expect it to. There is enough flour for two weeks, enough oil for three, and more than enough patience for both.

Tuesday. Calm again, as if yesterday had been a rumour. A flock of small grey birds rested on the rocks below the tower for most of the afternoon. I do not know their name. I counted forty-one of them, then forty-three, then gave up. In the evening I repaired the clockwork that turns the lens. One of the brass teeth had worn nearly flat, and I filed a new profile into it by lamplight. It is not elegant work, but the beam turns evenly now, one revolution every twenty seconds, which is what the charts promise to every captain who passes.

Wednesday. Fog. The horn sounded every thirty seconds from six in the morning until well after dark. Fog makes the island feel smaller, as though the world ends a few metres past the landing stage. I read, I wrote letters that will not be posted until spring, and I tried to write down the method I use to estimate how much oil remains in the tank, because the next keeper should not have to work it out again from nothing.

To keep the numbers honest I wrote the estimate as a small program, the way my nephew showed me:

#include <stdio.h>

/* litres left in a horizontal cylindrical tank, by the trapezoid rule */
static double litres_left(double radius_m, double length_m, double depth_m) {
    const int steps = 1000;
    double area = 0.0;
    for (int i = 0; i < steps; i++) {
        double y0 = -radius_m + depth_m * i / steps;
        double y1 = -radius_m + depth_m * (i + 1) / steps;
        double w0 = 2.0 * sqrt(radius_m * radius_m - y0 * y0);
        double w1 = 2.0 * sqrt(radius_m * radius_m - y1 * y1);
        area += 0.5 * (w0 + w1) * (y1 - y0);
    }
    return area * length_m * 1000.0;
}

int main(void) {
    printf("%.1f litres\\n", litres_left(0.6, 2.4, 0.45));
    return 0;
}

And the same idea in Python, for whoever prefers it:

def litres_left(radius, length, depth, steps=1000):
    area = 0.0
    for i in range(steps):
        y0 = -radius + depth * i / steps
        y1 = -radius + depth * (i + 1) / steps
        w0 = 2 * (radius**2 - y0**2) ** 0.5
        w1 = 2 * (radius**2 - y1**2) ** 0.5
        area += 0.5 * (w0 + w1) * (y1 - y0)
    return area * length * 1000

Thursday. Clear and cold. The supply boat arrived at last, with flour, oil, two crates of apples and a newspaper eleven days old. The skipper asked whether I was lonely. I told him the lamp keeps me company, which is true, and that the birds came back, which is also true. When he had gone I climbed the tower and watched the beam sweep across the water, once every twenty seconds, and thought about how many people I will never meet are steering by it tonight."""


PROMPTS = [
    ("single", "a single token: 'Hello'", "Hello"),
    ("prose", "plain text completion prompt", "The capital of France is"),
    ("chat_france", "ChatML with the default system prompt: capital of France",
     chatml([("user", "What is the capital of France?")])),
    ("chat_prime", "ChatML with the default system prompt: Python prime function",
     chatml([("user", "Write a Python function that checks whether a number is prime.")])),
    ("chat_multiturn", "ChatML multi-turn with a custom system prompt",
     chatml([("user", "Hi! What's 2+2?"), ("assistant", "2 + 2 = 4."), ("user", "And times 3?")],
            system="You are a concise math tutor.")),
    ("numbers", "digits and punctuation (each digit is its own token)", "Fibonacci: 1, 1, 2, 3, 5, 8, 13, 21,"),
    ("long_mixed", "long passage (> 512 tokens, two batches): prose + C + Python code", LONG_TEXT),
]

N_GREEDY = 64


def logsumexp(x):
    m = float(np.max(x))
    return m + float(np.log(np.sum(np.exp(x.astype(np.float64) - m))))


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    llm = Llama(model_path=model, logits_all=True, n_ctx=2048, n_threads=2, n_batch=512, seed=0, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    n_vocab = llm.n_vocab()
    fa = llm.context_params.flash_attn_type
    print("gen_logits: llama-cpp-python %s, n_vocab=%d, flash_attn_type=%d (%s), n_threads=%d, n_batch=%d, "
          "n_ubatch=%d, type_k=%d type_v=%d" % (
              llama_cpp.__version__, n_vocab, fa,
              {-1: "auto", 0: "disabled", 1: "enabled"}.get(fa, "?"), llm.context_params.n_threads,
              llm.context_params.n_batch, llm.context_params.n_ubatch, llm.context_params.type_k,
              llm.context_params.type_v))
    index = ["# reference logits: llama-cpp-python %s, Llama(logits_all=True, n_ctx=2048, n_threads=2, n_batch=512, "
             "seed=0), flash attention disabled; prompts tokenized add_bos=False special=True" % llama_cpp.__version__,
             "# fields: name  prompt_ids  greedy_ids  eos_stop  n_prompt  logits_file  greedy_margins  description"]
    argmax_lines = ["# name\tpos\ttoken_id\targmax\tmax_logit\tlogsumexp  (logits at pos predict token pos+1)"]
    human = []
    results = {}
    for name, desc, text in PROMPTS:
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        llm.reset()
        llm.eval(ids)
        n = len(ids)
        all_logits = np.array(llm.scores[:n], dtype=np.float32)
        last = all_logits[n - 1].copy()
        fn = "logits_%s.f32" % name
        last.astype("<f4").tofile(os.path.join(outdir, fn))
        for p in range(n):
            row = all_logits[p]
            argmax_lines.append("%s\t%d\t%d\t%d\t%.6f\t%.6f" % (
                name, p, ids[p], int(np.argmax(row)), float(np.max(row)), logsumexp(row)))
        greedy, margins = [], []
        logits = last
        for step in range(N_GREEDY):
            tok = int(np.argmax(logits))
            top2 = np.partition(logits, -2)[-2:]
            margins.append(float(top2[1] - top2[0]))
            greedy.append(tok)
            if step + 1 < N_GREEDY:
                llm.eval([tok])
                logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        eos_stop = next((i for i, t in enumerate(greedy) if llama_cpp.llama_vocab_is_eog(vocab, t)), -1)
        results[name] = last
        index.append("%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s" % (
            name, " ".join(map(str, ids)), " ".join(map(str, greedy)), eos_stop, n, fn,
            " ".join("%.4f" % m for m in margins), desc))
        cont = llm.detokenize(greedy[: eos_stop if eos_stop >= 0 else N_GREEDY], special=True).decode("utf-8", "replace")
        full = llm.detokenize(greedy, special=True).decode("utf-8", "replace")
        human.append("=== %s (%s): %d prompt tokens\n--- prompt:\n%s\n--- greedy until EOG (eos_stop=%d):\n%s\n"
                     "--- all 64 greedy tokens:\n%s\n" % (name, desc, n, text, eos_stop, cont, full))
        print("  %-15s n_prompt=%4d argmax=%5d max=%.4f eos_stop=%3d min_margin=%.4f  %r" % (
            name, n, int(np.argmax(last)), float(np.max(last)), eos_stop, min(margins), cont[:70]))
    with open(os.path.join(outdir, "logits_index.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(index) + "\n")
    with open(os.path.join(outdir, "logits_argmax.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(argmax_lines) + "\n")
    with open(os.path.join(outdir, "logits_prompts.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(human))
    del llm

    # informational: how much do the last-position logits move with flash attention on?
    if os.environ.get("GOLDEN_SKIP_FA_CHECK") != "1":
        llm2 = Llama(model_path=model, logits_all=True, n_ctx=2048, n_threads=2, n_batch=512, seed=0,
                     verbose=False, flash_attn=True)
        for name, desc, text in PROMPTS:
            ids = llm2.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            llm2.reset()
            llm2.eval(ids)
            l2 = np.array(llm2.scores[len(ids) - 1], dtype=np.float32)
            d = np.abs(l2 - results[name])
            print("  flash_attn=on vs off %-15s max|diff|=%.3g mean|diff|=%.3g argmax same=%s" % (
                name, float(d.max()), float(d.mean()), int(np.argmax(l2)) == int(np.argmax(results[name]))))


if __name__ == "__main__":
    main()
