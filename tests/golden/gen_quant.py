#!/usr/bin/env python3
"""Dequantization goldens produced with the `gguf` PyPI package (gguf.quants.dequantize,
pure numpy, independent of ggml's C code).

Usage: gen_quant.py MODEL.gguf OUTDIR

Writes into OUTDIR:
  quant_<TYPE>.bin   raw blocks (seeded random bytes; f16 scale fields forced to finite values)
  quant_<TYPE>.f32   dequantized values, little-endian float32, n_blocks*block_size values
  real_<tensor>.bin  raw bytes of the first rows of a real tensor of MODEL
  real_<tensor>.f32  those rows dequantized (float32 LE)
  quant_index.tsv    one line per file pair (see header line in the file / README.md)
  quant_testvectors.tsv  the test-vector table of shared/reference/gguf-and-architectures.md §2,
                     recomputed with gguf.quants, with the agreement

Synthetic block layout per type (8 blocks each; F16/BF16: 256 single-value "blocks"):
  blocks 0..5: scale fields d (and m/dmin) = random finite normal f16 values,
               |d| in [2^-12, 2^-3), m/dmin in (-1, 1) resp. [2^-12, 2^-3)
  block 6:     d = random f16 with |d| in [2, 8) and negative sign
  block 7:     d (and m/dmin) = random f16 SUBNORMALS (tests subnormal f16 decoding)
  F16/BF16:    random 16-bit patterns with Inf/NaN rejected, the first 12 values are fixed
               special cases (+0, -0, smallest/largest subnormal, min normal, max finite, 1, -2 ...).
"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16"]
# byte offsets of f16 fields: (d_offset, second_offset or None)
SCALE_FIELDS = {
    "Q4_0": (0, None), "Q4_1": (0, 2), "Q5_0": (0, None), "Q5_1": (0, 2), "Q8_0": (0, None),
    "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208, None),
}
SECOND_IS_MIN = {"Q4_1": True, "Q5_1": True, "Q4_K": False, "Q5_K": False}  # m (signed) vs dmin

NBLOCKS = 8
NSCALAR = 256


def f16_bits(x):
    return int(np.array([x], dtype=np.float16).view(np.uint16)[0])


def rand_normal_f16(rng, lo_exp, hi_exp, sign=None):
    # random f16 with |x| in [2^lo_exp, 2^hi_exp)
    e = rng.uniform(lo_exp, hi_exp)
    x = 2.0 ** e
    if sign is None:
        sign = -1 if rng.integers(0, 2) else 1
    return f16_bits(sign * x)


def rand_subnormal_f16(rng):
    mant = int(rng.integers(1, 0x400))
    return mant | (0x8000 if rng.integers(0, 2) else 0)


def put16(block, off, bits):
    block[off] = bits & 0xFF
    block[off + 1] = (bits >> 8) & 0xFF


def make_synthetic(tname, seed):
    qt = T[tname]
    bs, ts = gguf.GGML_QUANT_SIZES[qt]
    rng = np.random.default_rng(seed)
    if tname in ("F16", "BF16"):
        if tname == "F16":
            special = [0x0000, 0x8000, 0x0001, 0x03FF, 0x8001, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xC000,
                       0x3555, 0x0200]
            expmask, expall = 0x7C00, 0x7C00
        else:
            special = [0x0000, 0x8000, 0x0001, 0x007F, 0x8001, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xC000,
                       0x3EAB, 0x0040]
            expmask, expall = 0x7F80, 0x7F80
        vals = list(special)
        while len(vals) < NSCALAR:
            v = int(rng.integers(0, 0x10000))
            if (v & expmask) == expall:
                continue  # Inf / NaN
            vals.append(v)
        raw = np.array(vals, dtype="<u2").view(np.uint8).copy()
        return raw, NSCALAR
    raw = rng.integers(0, 256, size=(NBLOCKS, ts), dtype=np.uint8)
    doff, soff = SCALE_FIELDS[tname]
    for b in range(NBLOCKS):
        if b < 6:
            d = rand_normal_f16(rng, -12, -3)
        elif b == 6:
            d = rand_normal_f16(rng, 1, 3, sign=-1)
        else:
            d = rand_subnormal_f16(rng)
        put16(raw[b], doff, d)
        if soff is not None:
            if b == 7:
                s = rand_subnormal_f16(rng)
            elif SECOND_IS_MIN[tname]:
                s = f16_bits(rng.uniform(-1, 1))
            else:
                s = rand_normal_f16(rng, -12, -3, sign=1)
            put16(raw[b], soff, s)
    return raw.reshape(-1), NBLOCKS


def deq(raw, qt):
    y = dequantize(np.ascontiguousarray(raw, dtype=np.uint8), qt)
    y = np.asarray(y, dtype=np.float32).reshape(-1)
    assert np.all(np.isfinite(y)), "non-finite output"
    return y


# Test vectors of shared/reference/gguf-and-architectures.md §2:
# fill b[i] = (37*i+11)&0xFF, d=0x3C00 (1.0) in the first f16 field, m/dmin=0x3800 (0.5) in the second
TV_EXPECTED = {
    "Q4_0": ([-3, 2, 7, -4], -3, 0, -21),
    "Q4_1": ([15.5, 4.5, 9.5, 14.5], 9.5, 12.5, 261),
    "Q5_0": ([9, -2, 3, -8], 14, 1, 15),
    "Q5_1": ([19.5, 24.5, 29.5, 18.5], 19.5, 5.5, 521),
    "Q8_0": ([85, 122, -97, -60], -91, -48, -176),
    "Q4_K": ([315.5, -25.5, 129.5, 284.5], 423, 48.5, 54440),
    "Q5_K": ([811.5, -25.5, 625.5, 284.5], 1047, 108.5, 116216),
    "Q6_K": ([-1431, 1696, 583, -530], -351, -60, 4612),
}


def test_vectors(outdir):
    lines = ["# test vectors of shared/reference/gguf-and-architectures.md §2 recomputed with gguf.quants",
             "# type\ty0 y1 y2 y3\ty[n/2]\ty[n-1]\tsum\tagrees_with_doc"]
    n_ok = 0
    for tname, exp in TV_EXPECTED.items():
        qt = T[tname]
        bs, ts = gguf.GGML_QUANT_SIZES[qt]
        b = np.array([(37 * i + 11) & 0xFF for i in range(ts)], dtype=np.uint8)
        doff, soff = SCALE_FIELDS[tname]
        put16(b, doff, 0x3C00)
        if soff is not None:
            put16(b, soff, 0x3800)
        y = deq(b, qt)
        got = ([float(v) for v in y[:4]], float(y[bs // 2]), float(y[bs - 1]), float(y.astype(np.float64).sum()))
        ok = (got[0] == [float(v) for v in exp[0]] and got[1] == exp[1] and got[2] == exp[2] and got[3] == exp[3])
        n_ok += ok
        print("  testvector %-5s y[0..3]=%s y[n/2]=%g y[n-1]=%g sum=%g  expected %s  -> %s" % (
            tname, " ".join("%g" % v for v in got[0]), got[1], got[2], got[3], exp, "OK" if ok else "MISMATCH"))
        lines.append("%s\t%s\t%g\t%g\t%g\t%s" % (tname, " ".join("%g" % v for v in got[0]), got[1], got[2], got[3],
                                                 "yes" if ok else "NO"))
    with open(os.path.join(outdir, "quant_testvectors.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("gen_quant: test vectors agree with the reference doc: %d/%d" % (n_ok, len(TV_EXPECTED)))
    return n_ok == len(TV_EXPECTED)


REAL = [
    ("token_embd.weight", 2),
    ("blk.0.attn_q.weight", 2),
    ("blk.0.ffn_down.weight", 2),
    ("blk.0.attn_norm.weight", None),  # 1-D: first 8 values
]


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    index = ["# file_f32\tkind\ttype\ttype_id\tblock_size\ttype_size\tn_blocks\tn_values\ttensor\trows\t"
             "raw_file\tabs_offset\tdescription"]
    for i, tname in enumerate(TYPES):
        qt = T[tname]
        bs, ts = gguf.GGML_QUANT_SIZES[qt]
        raw, nb = make_synthetic(tname, seed=1000 + i)
        y = deq(raw, qt)
        assert y.size == nb * bs and raw.size == nb * ts
        raw.tofile(os.path.join(outdir, "quant_%s.bin" % tname))
        y.astype("<f4").tofile(os.path.join(outdir, "quant_%s.f32" % tname))
        desc = ("random blocks seed=%d; blocks 0-5 normal scales, 6 large negative d, 7 subnormal scales" % (1000 + i)
                if tname not in ("F16", "BF16") else
                "seed=%d; 256 values, first 12 fixed specials (+-0, subnormals, max finite, ...), no Inf/NaN"
                % (1000 + i))
        index.append("quant_%s.f32\tsynthetic\t%s\t%d\t%d\t%d\t%d\t%d\t-\t-\tquant_%s.bin\t-\t%s" % (
            tname, tname, int(qt), bs, ts, nb, y.size, tname, desc))
        print("  %-5s %d blocks -> %d values, min %g max %g" % (tname, nb, y.size, y.min(), y.max()))

    r = gguf.GGUFReader(model)
    tensors = {t.name: t for t in r.tensors}
    for name, nrows in REAL:
        t = tensors[name]
        qt = t.tensor_type
        bs, ts = gguf.GGML_QUANT_SIZES[qt]
        ne0 = int(t.shape[0])
        row_bytes = ne0 // bs * ts
        flat = np.asarray(t.data).view(np.uint8).reshape(-1)
        if nrows is None:  # 1-D tensor: first 8 values
            nvals = 8
            raw = flat[: nvals // bs * ts].copy()
            rows_desc = "first 8 values"
        else:
            nvals = nrows * ne0
            raw = flat[: nrows * row_bytes].copy()
            rows_desc = "rows 0..%d (ne0=%d)" % (nrows - 1, ne0)
        y = deq(raw, qt)
        assert y.size == nvals
        base = "real_%s" % name
        raw.tofile(os.path.join(outdir, base + ".bin"))
        y.astype("<f4").tofile(os.path.join(outdir, base + ".f32"))
        index.append("%s.f32\treal\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s.bin\t%d\t%s of %s, shape %s" % (
            base, qt.name, int(qt), bs, ts, raw.size // ts, nvals, name,
            str(nrows) if nrows is not None else "-", base, t.data_offset, rows_desc, name,
            ",".join(str(int(x)) for x in t.shape)))
        print("  real %-24s %s: %d values, first %s" % (name, qt.name, nvals, " ".join("%.6g" % v for v in y[:4])))
    with open(os.path.join(outdir, "quant_index.tsv"), "w") as f:
        f.write("\n".join(index) + "\n")
    ok = test_vectors(outdir)
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
