#!/usr/bin/env python3
"""Dump GGUF metadata of a model with gguf.GGUFReader (the reference reader from
the `gguf` PyPI package) into a line-based text file for testing our C GGUF reader.

Usage: gen_metadata.py MODEL.gguf OUT.txt

Output format (UTF-8 text, one record per line, fields separated by TAB):
  # ...                                   comment lines
  version <u32>
  tensor_count <n>
  kv_count <n>                            (real KV pairs in the file, not counting the header)
  alignment <n>                           (general.alignment or default 32)
  data_offset <n>                         (absolute file offset of the tensor data blob)
  kv <idx> <key> <TYPE> <value>           scalar KV pair, idx = position in the file (0-based)
  kv <idx> <key> ARRAY <ELEMTYPE> <count> array KV pair
  arr <key> <index> <value>               sample elements of each array (first 5 and the last)
  arrsum <key> <n>                        STRING arrays: total byte length of all strings
                                          (u64 length prefixes excluded); integer arrays: sum
  special <id> <token_type> <text>        every token whose token_type != 1 (normal)
  tensor <idx> <name> <TYPE> <type_id> <n_dims> <ne0,ne1,..> <rel_offset> <abs_offset> <n_bytes>
TYPE is one of UINT8 INT8 UINT16 INT16 UINT32 INT32 FLOAT32 BOOL STRING UINT64 INT64 FLOAT64.
Value encoding: integers in decimal; BOOL as `true`/`false`; FLOAT32/FLOAT64 as the
shortest decimal string that round-trips (strtof/strtod); STRING escaped: backslash -> \\\\,
newline -> \\n, tab -> \\t, CR -> \\r, any other byte < 0x20 or 0x7F -> \\xHH (two lowercase
hex digits); all other bytes (including UTF-8 multi-byte sequences) are written raw.
rel_offset is the offset stored in the tensor info (relative to data_offset);
abs_offset = data_offset + rel_offset. ne is in GGUF order (ne0 = contiguous axis).
"""
import sys

from importlib.metadata import version as pkg_version

import numpy as np
import gguf
from gguf import GGUFValueType as VT


def esc(s: str) -> str:
    buf = bytearray()
    for b in s.encode("utf-8"):
        if b == 0x5C:
            buf += b"\\\\"
        elif b == 0x0A:
            buf += b"\\n"
        elif b == 0x09:
            buf += b"\\t"
        elif b == 0x0D:
            buf += b"\\r"
        elif b < 0x20 or b == 0x7F:
            buf += b"\\x%02x" % b
        else:
            buf.append(b)
    return buf.decode("utf-8")


def fmt_scalar(vtype, v) -> str:
    if vtype == VT.STRING:
        return esc(v)
    if vtype == VT.BOOL:
        return "true" if v else "false"
    if vtype == VT.FLOAT32:
        return str(np.float32(v))
    if vtype == VT.FLOAT64:
        return repr(float(v))
    return str(int(v))


def main():
    model, out = sys.argv[1], sys.argv[2]
    r = gguf.GGUFReader(model)
    lines = []
    lines.append("# GGUF metadata dumped by tests/golden/gen_metadata.py with gguf.GGUFReader (gguf %s)"
                 % pkg_version("gguf"))
    lines.append("# model: %s" % model.split("/")[-1])
    lines.append("# format: see the docstring of gen_metadata.py / README.md; fields are TAB-separated")
    hdr = {k: f for k, f in r.fields.items() if k.startswith("GGUF.")}
    kvs = [(k, f) for k, f in r.fields.items() if not k.startswith("GGUF.")]
    lines.append("version\t%d" % hdr["GGUF.version"].contents())
    lines.append("tensor_count\t%d" % hdr["GGUF.tensor_count"].contents())
    lines.append("kv_count\t%d" % hdr["GGUF.kv_count"].contents())
    assert len(kvs) == hdr["GGUF.kv_count"].contents()
    lines.append("alignment\t%d" % r.alignment)
    lines.append("data_offset\t%d" % r.data_offset)
    arrays = []
    for idx, (k, f) in enumerate(kvs):
        t = f.types[0]
        if t == VT.ARRAY:
            et = f.types[1] if len(f.types) > 1 else None
            n = len(f.data)
            lines.append("kv\t%d\t%s\tARRAY\t%s\t%d" % (idx, k, et.name if et is not None else "NONE", n))
            arrays.append((k, f, et, n))
        else:
            lines.append("kv\t%d\t%s\t%s\t%s" % (idx, k, t.name, fmt_scalar(t, f.contents())))
    for k, f, et, n in arrays:
        vals = f.contents()
        idxs = sorted(set([i for i in range(min(5, n))] + ([n - 1] if n else [])))
        for i in idxs:
            lines.append("arr\t%s\t%d\t%s" % (k, i, fmt_scalar(et, vals[i])))
        if et == VT.STRING:
            lines.append("arrsum\t%s\t%d" % (k, sum(len(v.encode("utf-8")) for v in vals)))
        elif et not in (VT.FLOAT32, VT.FLOAT64):
            lines.append("arrsum\t%s\t%d" % (k, sum(int(v) for v in vals)))
    if "tokenizer.ggml.token_type" in r.fields:
        tt = r.fields["tokenizer.ggml.token_type"].contents()
        toks = r.fields["tokenizer.ggml.tokens"].contents()
        for i, ty in enumerate(tt):
            if ty != 1:
                lines.append("special\t%d\t%d\t%s" % (i, ty, esc(toks[i])))
    for idx, t in enumerate(r.tensors):
        ne = [int(x) for x in t.shape]
        lines.append("tensor\t%d\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%d" % (
            idx, t.name, t.tensor_type.name, int(t.tensor_type), len(ne),
            ",".join(str(x) for x in ne), t.data_offset - r.data_offset, t.data_offset, t.n_bytes))
    with open(out, "w", encoding="utf-8", newline="\n") as fp:
        fp.write("\n".join(lines) + "\n")
    print("gen_metadata: wrote %s (%d kv, %d tensors)" % (out, len(kvs), len(r.tensors)))


if __name__ == "__main__":
    main()
