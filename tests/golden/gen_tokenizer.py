#!/usr/bin/env python3
"""Tokenizer goldens from llama.cpp (through the llama-cpp-python bindings).

Usage: gen_tokenizer.py MODEL.gguf OUT.tsv [LLAMA_TOKENIZE_BINARY]

For every test string (tokenizer_cases.py) the reference is asked for
  * ids with parse_special=True   : Llama.tokenize(bytes, add_bos=False, special=True)
  * ids with parse_special=False  : Llama.tokenize(bytes, add_bos=False, special=False)
  * the detokenized bytes of the parse_special=True ids, via the C API
    llama_detokenize(remove_special=False, unparse_special=True)  (control tokens rendered as text)
  * the same with unparse_special=False (control tokens render as nothing)
(llama_detokenize is used instead of Llama.detokenize because the Python wrapper strips a
leading space after a BOS token (id 1 = <|im_start|> here), which llama.cpp itself does not do.)

Output: UTF-8/ASCII text, '\\n' line ends; lines starting with '#' are comments.
Data lines have exactly 6 TAB-separated fields:
  1 hex_input        input bytes, lowercase hex, 2 chars per byte (empty for the empty string)
  2 ids_special      space-separated decimal ids, parse_special=True (empty field = no tokens)
  3 ids_nospecial    same with parse_special=False
  4 hex_detok        hex of llama_detokenize(ids_special, unparse_special=True)
  5 hex_detok_plain  hex of llama_detokenize(ids_special, unparse_special=False)
  6 category         a label (basic, prose, code_c, whitespace, special, invalid_utf8, ...)
add_bos is False everywhere (also the model's own default: tokenizer.ggml.add_bos_token=false).

If LLAMA_TOKENIZE_BINARY (the built llama-tokenize) is given, a sample of ~24 strings is
cross-checked against it (both parse_special on and off) and the result is printed.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import llama_cpp
from llama_cpp import Llama

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_cases  # noqa: E402

TOKEN_TYPE_NAMES = {0: "undefined", 1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}


def llama_cpp_would_abort(data):
    """True if llama.cpp (this version) aborts the process on this input: its UTF-8 decoder
    (unicode_cpt_from_utf8) checks only the lead/continuation bit patterns, so a 4-byte form
    F0..F7 + 3 continuation bytes can yield a code point > U+10FFFF, which later throws
    std::invalid_argument("invalid codepoint") out of llama_tokenize -> std::terminate."""
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            i += 1
            continue
        if b & 0x40 == 0:
            i += 1  # stray continuation -> U+FFFD, skip 1
            continue
        if b & 0x20 == 0:
            need = 1
        elif b & 0x10 == 0:
            need = 2
        elif b & 0x08 == 0:
            need = 3
        else:
            i += 1
            continue
        if i + need < n and all((data[i + k] & 0xC0) == 0x80 for k in range(1, need + 1)):
            if need == 3:
                cp = ((b & 7) << 18) | ((data[i + 1] & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6) | (data[i + 3] & 0x3F)
                if cp > 0x10FFFF:
                    return True
            i += need + 1
        else:
            i += 1
    return False


def detok(vocab, ids, unparse_special):
    n = len(ids)
    arr = (llama_cpp.llama_token * max(n, 1))(*ids)
    cap = 64 + 64 * n
    buf = ctypes.create_string_buffer(cap)
    r = llama_cpp.llama_detokenize(vocab, arr, n, buf, cap, False, unparse_special)
    if r < 0:
        cap = -r + 1
        buf = ctypes.create_string_buffer(cap)
        r = llama_cpp.llama_detokenize(vocab, arr, n, buf, cap, False, unparse_special)
    assert r >= 0
    return buf.raw[:r]


def special_tokens_from_gguf(model):
    import gguf
    r = gguf.GGUFReader(model)
    toks = r.fields["tokenizer.ggml.tokens"].contents()
    tt = r.fields["tokenizer.ggml.token_type"].contents()
    return [(i, toks[i], tt[i]) for i in range(len(toks)) if tt[i] in (2, 3, 4)]


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
    binary = sys.argv[3] if len(sys.argv) > 3 else None
    llm = Llama(model_path=model, vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)

    specials = special_tokens_from_gguf(model)
    # cross-check with what llama.cpp reports about these tokens
    for i, text, ty in specials:
        assert llama_cpp.llama_vocab_get_text(vocab, i).decode("utf-8") == text
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    eog = [i for i in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab, i)]

    cases = tokenizer_cases.cases([t for _, t, _ in specials])
    seen = set()
    rows = []
    excluded = []
    for cat, data in cases:
        if data in seen:
            continue
        seen.add(data)
        if llama_cpp_would_abort(data):
            excluded.append(data)
            continue
        ids_sp = llm.tokenize(data, add_bos=False, special=True)
        ids_ns = llm.tokenize(data, add_bos=False, special=False)
        d1 = detok(vocab, ids_sp, True)
        d2 = detok(vocab, ids_sp, False)
        rows.append((cat, data, ids_sp, ids_ns, d1, d2))

    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write("# tokenizer goldens for %s, produced by tests/golden/gen_tokenizer.py\n" % os.path.basename(model))
        f.write("# reference: llama-cpp-python %s (vendored llama.cpp, see README.md); add_bos=False\n"
                % llama_cpp.__version__)
        f.write("# fields (TAB-separated): hex_input  ids_special  ids_nospecial  hex_detok(unparse_special=1)"
                "  hex_detok(unparse_special=0)  category\n")
        f.write("# vocab: n_vocab=%d bos=%d eos=%d eot=%d pad=%d eog_ids=%s\n" % (
            n_vocab, llama_cpp.llama_vocab_bos(vocab), llama_cpp.llama_vocab_eos(vocab),
            llama_cpp.llama_vocab_eot(vocab), llama_cpp.llama_vocab_pad(vocab), " ".join(map(str, eog))))
        f.write("# special tokens (id type text): %s\n" % "; ".join(
            "%d %s %s" % (i, TOKEN_TYPE_NAMES.get(ty, ty), t) for i, t, ty in specials))
        f.write("# excluded inputs (llama.cpp aborts with std::invalid_argument 'invalid codepoint': 4-byte form "
                "decoding above U+10FFFF), hex: %s\n" % " ".join(d.hex() for d in excluded))
        for cat, data, a, b, d1, d2 in rows:
            f.write("%s\t%s\t%s\t%s\t%s\t%s\n" % (
                data.hex(), " ".join(map(str, a)), " ".join(map(str, b)), d1.hex(), d2.hex(), cat))

    n_rt = sum(1 for r in rows if r[4] == r[1])
    valid = [r for r in rows if _is_valid_utf8(r[1])]
    n_rt_valid = sum(1 for r in valid if r[4] == r[1])
    n_diff = sum(1 for r in rows if r[2] != r[3])
    print("gen_tokenizer: wrote %s: %d strings (%d with valid UTF-8); parse_special changes ids for %d; "
          "detok(unparse_special=1) == input for %d/%d valid-UTF-8 strings (%d/%d overall)" % (
              out, len(rows), len(valid), n_diff, n_rt_valid, len(valid), n_rt, len(rows)))
    print("gen_tokenizer: eog ids = %s" % eog)

    if binary:
        # deterministic sample: every k-th string plus some hand-picked categories
        k = max(1, len(rows) // 20)
        sample = rows[::k]
        extra_cats = {"special", "invalid_utf8", "whitespace"}
        for cat in extra_cats:
            sample += [r for r in rows if r[0] == cat][1:3]
        n_ok = 0
        n_tot = 0
        for cat, data, a, b, _, _ in sample:
            for ps, ref in ((True, a), (False, b)):
                got = run_binary(binary, model, data, ps)
                ok = got == ref
                n_ok += ok
                n_tot += 1
                if not ok:
                    print("  MISMATCH llama-tokenize vs bindings: %s parse_special=%s %r: %s vs %s" % (
                        cat, ps, data[:60], got, ref))
        print("gen_tokenizer: cross-check with %s: %d/%d (string, parse_special) pairs agree (%d strings)" % (
            os.path.basename(binary), n_ok, n_tot, len(sample)))
        if n_ok != n_tot:
            sys.exit(1)


def _is_valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    main()
