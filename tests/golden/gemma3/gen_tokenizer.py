#!/usr/bin/env python3
"""Tokenizer goldens for Gemma 3 270M (262,144-token SentencePiece vocabulary,
byte fallback) from llama.cpp.

Usage: gen_tokenizer.py MODEL.gguf OUT.tsv [LLAMA_CPP_DIR] [LLAMA_CPP_SRC]

Compiles llama_tok.c (beside this script) against the static libraries of a
llama.cpp build (default /work/ref/build, sources default to the copy vendored
in llama-cpp-python 0.3.36; build line in build() below) and feeds it every
test string: ../tokenizer_cases.py (ours: prose, code, whitespace runs,
digits, many scripts, emoji, combining marks, invalid UTF-8, every ASCII byte)
with the vocabulary's own special tokens, plus the Gemma strings below. Every
special token (control and user-defined: 6,414, most of them <unusedN>)
appears alone; the ones that are not <unusedN> also inside text. A sample is
cross-checked against the llama-tokenize binary (LLAMA_CPP_DIR/bin).

Output: the format of ../tokenizer_smollm2.tsv (README.md): per string
  hex_input  ids_special  ids_nospecial  hex_detok(unparse_special=1)
  hex_detok(unparse_special=0)  category
with add_special off (no BOS; cachet's tests add none either).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import tokenizer_cases  # noqa: E402

GEMMA = [
    "<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n<start_of_turn>model\n",
    "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n",
    "<start_of_turn>", "<end_of_turn>", "<start_of_turn>model", "<start_of_turn >", "<start_of_turn",
    "start_of_turn>", "<end_of_turn><eos>", "x<eos>y", "<pad><pad>", "<start_of_image>", "<unused0>x<unused99>",
    "▁", "▁▁", "▁Hello", "Hello▁world", "a\u2581b", "  leading", "trailing  ", "\t\ttabs\t", "\r\n\r\n",
    "\n" * 31, "\n" * 32, "\n" * 40, " " * 31, " " * 32, " " * 45, "x" + " " * 33 + "y",
    "12345678901234567890", "3.14159265358979", "1,000,000", "0x7fffffff", "-42", "१२३ ٤٥٦ ๗๘๙",
    "ქართული ენა", "Հայերեն", "ଓଡ଼ିଆ", "தமிழ்", "తెలుగు", "ಕನ್ನಡ", "മലയാളം", "සිංහල", "བོད་ཡིག",
    "ພາສາລາວ", "ខ្មែរ", "မြန်မာ", "አማርኛ", "ᠮᠣᠩᠭᠣᠯ", "Kiswahili ni lugha", "isiZulu", "Tagalog: Kumusta",
    "Ελληνικά και English", "ελληνικά ΚΕΦΑΛΑΙΑ", "Ўзбекча", "Қазақша", "Монгол", "ئۇيغۇرچە", "فارسی",
    "اردو", "עִבְרִית", "𓀀𓀁", "🧑‍🔬🧑🏿‍🚀", "🫠🫶🏻", "🇪🇺🇺🇳", "∑∫∂√∞≠≈", "→⇒↔", "½¾⅓", "™©®",
]


def llama_cpp_would_abort(data):
    """This llama.cpp's UTF-8 decoder accepts a 4-byte form above U+10FFFF and
    then throws out of llama_tokenize: such inputs are left out (as in
    ../gen_tokenizer.py, whose check this repeats)."""
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80 or b & 0x40 == 0:
            i += 1
            continue
        need = 1 if b & 0x20 == 0 else 2 if b & 0x10 == 0 else 3 if b & 0x08 == 0 else 0
        if need and i + need < n and all((data[i + k] & 0xC0) == 0x80 for k in range(1, need + 1)):
            if need == 3:
                cp = ((b & 7) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6) | (data[i + 3] & 0x3F)
                if cp > 0x10FFFF:
                    return True
            i += need + 1
        else:
            i += 1
    return False


def build(llama_dir, llama_src, out):
    libs = [os.path.join(llama_dir, p) for p in ("src/libllama.a", "ggml/src/libggml.a",
                                                   "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a")]
    cmd = ["g++", "-x", "c", "-O2", "-std=c11", "-I" + os.path.join(llama_src, "include"),
           "-I" + os.path.join(llama_src, "ggml", "include"), os.path.join(HERE, "llama_tok.c"), "-x", "none",
           "-o", out] + libs + ["-fopenmp", "-lpthread", "-lm", "-ldl"]
    subprocess.run(cmd, check=True)


def specials(model):
    import gguf
    r = gguf.GGUFReader(model)
    toks = r.fields["tokenizer.ggml.tokens"].contents()
    tt = r.fields["tokenizer.ggml.token_type"].contents()
    return [toks[i] for i in range(len(toks)) if tt[i] in (2, 3, 4)]


def run_binary(binary, model, data, parse_special):
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
    inner = line.strip()[1:-1].strip()
    return [int(x) for x in inner.split(",")] if inner else []


def main():
    model, out = sys.argv[1], sys.argv[2]
    llama_dir = sys.argv[3] if len(sys.argv) > 3 else "/work/ref/build"
    llama_src = sys.argv[4] if len(sys.argv) > 4 else "/work/ref/llama_cpp_python-0.3.36/vendor/llama.cpp"
    sp = specials(model)
    named = [t for t in sp if not t.startswith("<unused")]
    cases = tokenizer_cases.cases(named)
    cases += [("special_all", t.encode("utf-8")) for t in sp if t.startswith("<unused")]
    cases += [("gemma", t.encode("utf-8")) for t in GEMMA]
    seen, rows, excluded = set(), [], []
    for cat, data in cases:
        if data in seen:
            continue
        seen.add(data)
        (excluded if llama_cpp_would_abort(data) else rows).append((cat, data))
    tmp = tempfile.mkdtemp()
    binary = os.path.join(tmp, "llama_tok")
    build(llama_dir, llama_src, binary)
    r = subprocess.run([binary, model], input="".join(d.hex() + "\n" for _, d in rows), capture_output=True,
                       text=True, check=True)
    lines = r.stdout.split("\n")[:len(rows)]
    assert len(lines) == len(rows)
    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write("# tokenizer goldens for %s, produced by tests/golden/gemma3/gen_tokenizer.py\n"
                % os.path.basename(model))
        f.write("# reference: llama.cpp vendored in llama-cpp-python 0.3.36 through llama_tok.c; add_special off\n")
        f.write("# fields (TAB-separated): hex_input  ids_special  ids_nospecial  hex_detok(unparse_special=1)"
                "  hex_detok(unparse_special=0)  category\n")
        f.write("# excluded inputs (llama.cpp throws 'invalid codepoint'), hex: %s\n"
                % " ".join(d.hex() for _, d in excluded))
        for (cat, data), line in zip(rows, lines):
            f.write("%s\t%s\t%s\n" % (data.hex(), line, cat))
    n_diff = sum(1 for l in lines if l.split("\t")[0] != l.split("\t")[1])
    print("gen_tokenizer: %d strings (%d special tokens, all of them), parse_special changes %d" %
          (len(rows), len(sp), n_diff))
    tok = os.path.join(llama_dir, "bin", "llama-tokenize")
    if os.path.exists(tok):
        sample = rows[::max(1, len(rows) // 40)] + [x for x in rows if x[0] in ("gemma", "invalid_utf8")][:20]
        bad = 0
        for cat, data in sample:
            i = rows.index((cat, data))
            f = lines[i].split("\t")
            for ps, ref in ((True, f[0]), (False, f[1])):
                got = " ".join(map(str, run_binary(tok, model, data, ps)))
                if got != ref:
                    bad += 1
                    print("  MISMATCH llama-tokenize vs llama_tok: %s %r parse_special=%s" % (cat, data[:40], ps))
        print("gen_tokenizer: llama-tokenize agrees on %d/%d (string, parse_special) pairs" %
              (2 * len(sample) - bad, 2 * len(sample)))
        if bad:
            sys.exit(1)
    subprocess.run(["rm", "-rf", tmp], check=True)


if __name__ == "__main__":
    main()
