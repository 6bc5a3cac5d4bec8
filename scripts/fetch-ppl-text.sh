#!/bin/sh
# scripts/fetch-ppl-text.sh: the perplexity text (make ppl-text). Jane Austen's
# "Pride and Prejudice" (1813, public domain; the Project Gutenberg text without
# its licence header) from the Debian package r-cran-janeaustenr (MIT), whose
# R data file holds each novel as a character vector, one element per line.
# Writes models/pride-and-prejudice.txt (MODELS_DIR overrides), SHA-256 checked
# against scripts/models.sha256. Needs apt-get (download only) and python3.
set -eu
cd "$(dirname "$0")/.."
name=pride-and-prejudice.txt
dir=${MODELS_DIR:-models}
dest=$dir/$name
want=$(awk -v n="$name" '$2 == n {print $1}' scripts/models.sha256)

verify() { echo "$want  $1" | sha256sum -c --status; }

if [ -f "$dest" ] && verify "$dest"; then
    echo "ppl-text: $dest present and verified"
    exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "ppl-text: apt-get is not installed" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "ppl-text: python3 is not installed" >&2; exit 1; }
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # apt-get download runs as _apt where it can
echo "ppl-text: downloading r-cran-janeaustenr (Debian) ..." >&2
if ! (cd "$tmp" && apt-get download -q r-cran-janeaustenr >/dev/null 2>&1); then
    (apt-get update -q >/dev/null 2>&1 || true)
    (cd "$tmp" && apt-get download -q r-cran-janeaustenr >&2) || {
        echo "ppl-text: could not download r-cran-janeaustenr (is the package archive reachable?)" >&2
        exit 1
    }
fi
deb=$(ls "$tmp"/r-cran-janeaustenr_*.deb | head -n 1)
dpkg-deb -x "$deb" "$tmp/x"
rdb=$tmp/x/usr/lib/R/site-library/janeaustenr/data/Rdata.rdb
# Rdata.rdb: R's lazy-load database, one record per object: a 4-byte big-endian
# length and a zlib stream of R's XDR serialization (format 3). Each object here
# is a character vector (STRSXP, 16) of CHARSXPs (9) without attributes; the
# fifth is prideprejudice (the objects are stored in name order).
python3 - "$rdb" "$tmp/$name" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, objs = 0, []
while pos < len(data):
    d = zlib.decompressobj()
    objs.append(d.decompress(data[pos + 4:]))
    pos = len(data) - len(d.unused_data)
b = objs[4]
assert b[:2] == b"X\n", "not an XDR serialization"
p = 2
ver = struct.unpack(">i", b[p:p + 4])[0]
p += 12
if ver == 3:
    p += 4 + struct.unpack(">i", b[p:p + 4])[0]
flags, n = struct.unpack(">ii", b[p:p + 8])
p += 8
assert flags & 0xFF == 16, "not a character vector"
lines = []
for _ in range(n):
    f, ln = struct.unpack(">ii", b[p:p + 8])
    p += 8
    assert f & 0xFF == 9 and ln >= 0, "not a string"
    lines.append(b[p:p + ln].decode("utf-8"))
    p += ln
assert lines[0] == "PRIDE AND PREJUDICE", lines[0]
with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as out:
    out.write("\n".join(lines) + "\n")
PY
if ! verify "$tmp/$name"; then
    echo "ppl-text: SHA-256 of $name does not match scripts/models.sha256; not installed" >&2
    exit 1
fi
mv "$tmp/$name" "$dest.part" && mv "$dest.part" "$dest"
echo "ppl-text: $dest installed and verified"
