#!/usr/bin/env python3
"""Tokenizer goldens for llama.cpp's vocab-only GGUFs (models/vocab/, `make vocabs`).

Usage: gen_vocabs.py [--llama-src DIR] [--llama-build DIR] [--vocab-dir DIR] [NAME...]

  --llama-src    llama.cpp sources (default: the one vendored in the llama-cpp-python 0.3.36
                 sdist, /work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp)
  --llama-build  its CMake build with src/libllama.a, ggml/src/libggml*.a and bin/llama-tokenize
                 (default: /work/ref/build)
  NAME           vocabularies (default: all of VOCABS and VARIANTS below)

The reference is llama.cpp itself: llama_vocab_ref.cpp (beside this script) is compiled
against libllama and, per vocabulary, prints for every input string
  * ids with parse_special on and off (llama_tokenize, add_special off both times),
  * llama_detokenize(ids_special) with unparse_special on and off,
exactly what llama-tokenize --ids --no-bos [--no-parse-special] prints (a sample of strings
of every vocabulary is cross-checked against the llama-tokenize binary and must agree).

Inputs: tests/golden/tokenizer_cases.py (our strings: prose, code, whitespace runs, digits,
many scripts, emoji, invalid UTF-8, all ASCII bytes, special tokens of the vocabulary) plus
EXTRA below (strings aimed at the pre-tokenizers' differences). Inputs on which llama.cpp
aborts (4-byte forms above U+10FFFF) are left out and listed in the header.

Output: tests/golden/vocabs/NAME.tsv, the format of tests/golden/tokenizer_smollm2.tsv:
  hex_input  ids_special  ids_nospecial  hex_detok(unparse_special=1)  hex_detok(unparse_special=0)  category
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
import tokenizer_cases  # noqa: E402

VOCABS = ["llama-bpe", "qwen2", "qwen35", "llama-spm", "phi-3", "gemma-4", "deepseek-llm",
          "deepseek-coder", "gpt-2", "starcoder", "command-r", "falcon", "mpt", "refact"]
# Pre-tokenizers without a vocabulary of their own in llama.cpp's set: a vocabulary with
# tokenizer.ggml.pre rewritten in place (same length: "falcon" -> "tekken"), named VOCAB+PRE
# (hy_v4 is DeepSeek V3's pre-tokenizer under a name as long as "qwen2").
VARIANTS = ["falcon+tekken", "falcon+gpt-4o", "falcon+llama4", "qwen2+hy_v4"]

# Aimed at where the pre-tokenizers differ: non-ASCII whitespace (collapsed to one class),
# CR/LF runs, numbers in other scripts, 1-3 digit groups, contractions in capitals,
# trailing whitespace (deepseek's \s+$), CJK and the ranges deepseek lists, marks (qwen35),
# symbols vs punctuation, newline runs (gemma-4), U+2581 itself, and surrogates encoded in UTF-8.
EXTRA = [
    "a\u00a0b", "a\u0085b", "x\u3000y", "\u3000\u3000", "a \u2003 b", "tab\t\u00a0\tend", "\u2028line\u2029",
    "a\r\nb", "a\r\n\r\nb", "\r\r\n\n", " \r\n ", "x  \r\n  y", "end   ", "end \n ", "\n\n\n\nx", "x\n\n\n\n",
    "\n \n", "  \n\n  x", "\u0663\u0664\u0665", "\uff11\uff12\uff13", "\u2460\u2461", "\u00bd\u00be",
    "1", "12", "123", "1234", "12345", "123456", "1234567", "x1234y", "1,234,567.89", "-0.5e+10",
    "IT'S", "WE'LL", "YOU'RE", "I'VE", "SHE'D", "I'M", "don'T", "'S", "''s", "rock'n'roll",
    "\u4f60\u597d\u4e16\u754c", "\u4f60\u597d\uff0c\u4e16\u754c\u3002", "\u3053\u3093\u306b\u3061\u306f\u4e16\u754c",
    "\u30ab\u30bf\u30ab\u30ca", "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8", "\u1100\u1161\u11a8", "\u0800\u0801",
    "abc\u4e00def", "\u4e00" * 5 + "abc", "\u9fa5\u9fa6", "\u00b5m", "\u00c0\u00d6\u00d7\u00d8",
    "\u01bb\u01bc", "\u2126 \u212a \u212b", "\uff21\uff22\uff43", "\u2018quoted\u2019", "\u201cdouble\u201d",
    "e\u0301", "a\u0308o\u0308u\u0308", "\u0915\u094d\u0937", "\u0e01\u0e34\u0e19", "\u05e9\u05b8\u05c1",
    "\u0627\u0644\u0639\u064e\u0631\u064e\u0628\u0650\u064a\u0651\u064e\u0629", "x\u0301\u0302\u0303",
    "$100 + 5% = ?", "a<=b>=c", "x^2~y|z", "`code`", "\u00a9\u00ae\u2122", "\u20ac5 \u00a35 \u00a55",
    "\u2581", "\u2581\u2581x", "a\u2581b", " \u2581 ", "\u2192 \u21d2 \u2194", "\u2200x\u2208S",
    "\U0001f469\u200d\U0001f4bb", "\U0001f1fa\U0001f1f8", "\u200b", "a\u200bb", "\ufeffBOM",
    "\u00ad", "soft\u00adhyphen", "\U00020000\U0002a6d6", "\U0001d400\U0001d401",
    "\u0391\u03b8\u03ae\u03bd\u03b1", "\u041c\u043e\u0441\u043a\u0432\u0430", "\u0531\u0562", "\u10a0\u10d0",
    b"\xed\xa0\x80x", b"\xef\xbf\xbd", b"\xef\xbf\xbe", b"\xf4\x8f\xbf\xbf",
]

TYPE_NAMES = {0: "undefined", 1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}


def would_abort(data):
    """llama.cpp decodes F0..F7 + 3 continuation bytes even above U+10FFFF and then throws
    'invalid codepoint' out of llama_tokenize (std::terminate): such inputs are left out."""
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        need = 0 if b < 0x80 else -1 if b & 0x40 == 0 else 1 if b & 0x20 == 0 else \
            2 if b & 0x10 == 0 else 3 if b & 0x08 == 0 else -1
        if need <= 0 or i + need >= n or any(data[i + k] & 0xC0 != 0x80 for k in range(1, need + 1)):
            i += 1
            continue
        if need == 3:
            cp = ((b & 7) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6) | (data[i + 3] & 0x3F)
            if cp > 0x10FFFF:
                return True
        i += need + 1
    return False


def specials_of(path):
    import gguf
    r = gguf.GGUFReader(path)
    toks = r.fields["tokenizer.ggml.tokens"].contents()
    tt = r.fields["tokenizer.ggml.token_type"].contents() if "tokenizer.ggml.token_type" in r.fields else []
    return [(i, toks[i], tt[i]) for i in range(len(tt)) if tt[i] in (2, 3, 4)]


def pick_specials(specials):
    """At most 24 of a vocabulary's special tokens: the first 12 by id and 12 more drawn
    with a fixed seed (Gemma 4 has thousands; every one would add three strings)."""
    texts = [t for _, t, _ in specials if t]
    while len(texts) < 3:  # tokenizer_cases pairs the 2nd and 3rd (GPT-2 has one special)
        texts.append(texts[-1] if texts else "<|endoftext|>")
    if len(texts) <= 24:
        return texts
    rest = texts[12:]
    return texts[:12] + random.Random(16).sample(rest, 12)


def build_ref(src, build, out):
    libs = ["src/libllama.a", "ggml/src/libggml.a", "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a"]
    cmd = ["g++", "-O1", "-std=c++17", "-I" + os.path.join(src, "include"), "-I" + os.path.join(src, "ggml", "include"),
           os.path.join(HERE, "llama_vocab_ref.cpp"), "-o", out] + [os.path.join(build, l) for l in libs] + \
          ["-lpthread", "-lgomp", "-ldl"]
    subprocess.run(cmd, check=True)


def llama_tokenize(binary, model, data, parse_special):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
        path = f.name
    try:
        cmd = [binary, "-m", model, "-f", path, "--ids", "--no-bos", "--no-escape", "--log-disable"]
        if not parse_special:
            cmd.append("--no-parse-special")
        out = subprocess.run(cmd, capture_output=True, check=True).stdout.decode("utf-8", "replace")
    finally:
        os.unlink(path)
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return [int(x) for x in line.strip("[]").split(",") if x.strip()]


def with_pre(path, pre, tmp):
    """A copy of the GGUF at path with tokenizer.ggml.pre's value replaced by pre (same length;
    tests/test_vocabs.c patches it the same way in memory)."""
    data = bytearray(open(path, "rb").read())
    key = b"tokenizer.ggml.pre"
    i = data.find(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    assert struct.unpack("<I", data[i:i + 4])[0] == 8, "tokenizer.ggml.pre is not a string"
    n = struct.unpack("<Q", data[i + 4:i + 12])[0]
    assert n == len(pre), "tokenizer.ggml.pre %r has another length than %r" % (bytes(data[i + 12:i + 12 + n]), pre)
    data[i + 12:i + 12 + n] = pre.encode()
    out = os.path.join(tmp, "ggml-vocab-%s+%s.gguf" % (os.path.basename(path), pre))
    open(out, "wb").write(data)
    return out


def one_vocab(name, args, ref, tmp):
    base, _, pre = name.partition("+")
    model = os.path.join(args.vocab_dir, "ggml-vocab-%s.gguf" % base)
    if pre:
        model = with_pre(model, pre, tmp)
    specials = specials_of(model)
    cases = tokenizer_cases.cases(pick_specials(specials))
    cases += [("vocab_extra", x if isinstance(x, bytes) else x.encode("utf-8")) for x in EXTRA]
    seen, rows, excluded = set(), [], []
    for cat, data in cases:
        if data in seen:
            continue
        seen.add(data)
        (excluded if would_abort(data) else rows).append((cat, data))
    inp = "".join(d.hex() + "\n" for _, d in rows)
    out = subprocess.run([ref, model], input=inp.encode(), capture_output=True, check=True).stdout.decode()
    lines = out.split("\n")[:len(rows)]
    assert len(lines) == len(rows), (name, len(lines), len(rows))
    dest = os.path.join(HERE, name + ".tsv")
    with open(dest, "w", encoding="ascii", newline="\n") as f:
        f.write("# tokenizer goldens for ggml-vocab-%s.gguf%s, produced by tests/golden/vocabs/gen_vocabs.py\n"
                % (base, " with tokenizer.ggml.pre=" + pre if pre else ""))
        f.write("# reference: llama.cpp vendored in llama-cpp-python 0.3.36 (libllama through llama_vocab_ref.cpp); "
                "add_special=False\n")
        f.write("# fields (TAB-separated): hex_input  ids_special  ids_nospecial  hex_detok(unparse_special=1)"
                "  hex_detok(unparse_special=0)  category\n")
        f.write("# special tokens used (of %d): %s\n" % (len(specials), " ".join(
            t.encode("utf-8", "surrogateescape").hex() for t in pick_specials(specials))))
        f.write("# excluded inputs (llama.cpp aborts on them), hex: %s\n" % " ".join(d.hex() for _, d in excluded))
        for (cat, data), line in zip(rows, lines):
            f.write("%s\t%s\t%s\n" % (data.hex(), line, cat))
    # cross-check a sample against the llama-tokenize binary
    binary = os.path.join(args.llama_build, "bin", "llama-tokenize")
    sample = rows[:: max(1, len(rows) // 12)] + [r for r in rows if r[0] in ("special", "vocab_extra")][:4]
    ok = tot = 0
    for (cat, data) in sample:
        fields = lines[rows.index((cat, data))].split("\t")
        for ps, ref_ids in ((True, fields[0]), (False, fields[1])):
            got = llama_tokenize(binary, model, data, ps)
            want = [int(x) for x in ref_ids.split()]
            tot += 1
            ok += got == want
            if got != want:
                print("  MISMATCH %s llama-tokenize parse_special=%s %r: %s vs %s" % (name, ps, data[:40], got, want))
    print("gen_vocabs: %-15s %d strings -> %s; llama-tokenize agrees on %d/%d sampled (string, parse_special)"
          % (name, len(rows), os.path.relpath(dest, ROOT), ok, tot))
    return ok == tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-src", default="/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp")
    ap.add_argument("--llama-build", default="/work/ref/build")
    ap.add_argument("--vocab-dir", default=os.path.join(ROOT, "models", "vocab"))
    ap.add_argument("names", nargs="*", default=VOCABS + VARIANTS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ref = os.path.join(tmp, "llama_vocab_ref")
        build_ref(args.llama_src, args.llama_build, ref)
        ok = all([one_vocab(n, args, ref, tmp) for n in args.names])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
