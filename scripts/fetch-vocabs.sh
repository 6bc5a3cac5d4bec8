#!/bin/sh
# scripts/fetch-vocabs.sh: fetch llama.cpp's vocab-only GGUFs and its tokenizer
# tests (ggml-vocab-*.gguf, .gguf.inp, .gguf.out) from the llama-cpp-python
# 0.3.36 source package on PyPI into models/vocab/, each checked against
# scripts/vocabs.sha256. Downloads nothing else; builds nothing.
set -eu
cd "$(dirname "$0")/.."
version=0.3.36
sdist=llama_cpp_python-$version.tar.gz
sums=scripts/vocabs.sha256
dest=models/vocab
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cachet/vocab-src

want() { awk -v n="$1" '$2 == n {print $1}' "$sums"; }
verify() { [ -f "$2" ] && echo "$(want "$1")  $2" | sha256sum -c --status; }
names() { awk '!/^#/ && $2 != "'"$sdist"'" {print $2}' "$sums"; }

missing=0
for n in $(names); do verify "$n" "$dest/$n" || missing=$((missing + 1)); done
if [ "$missing" -eq 0 ]; then
    echo "vocabs: $dest present and verified ($(names | wc -l) files)"
    exit 0
fi

mkdir -p "$cache"
if ! verify "$sdist" "$cache/$sdist"; then
    pip=pip3
    command -v $pip >/dev/null 2>&1 || pip=pip
    if ! command -v $pip >/dev/null 2>&1; then
        if python3 -m pip --version >/dev/null 2>&1; then
            pip="python3 -m pip"
        else
            echo "vocabs: pip is not installed; run 'make deps' first (it installs python3-pip)" >&2
            exit 1
        fi
    fi
    echo "vocabs: downloading llama-cpp-python==$version (source package) from PyPI ..."
    rm -f "$cache/$sdist"
    if ! $pip download --quiet --no-deps --no-binary :all: --disable-pip-version-check \
            -d "$cache" "llama-cpp-python==$version"; then
        echo "vocabs: could not download 'llama-cpp-python==$version' from PyPI (is the package registry reachable?)" >&2
        exit 1
    fi
    if ! verify "$sdist" "$cache/$sdist"; then
        echo "vocabs: SHA-256 of $sdist does not match $sums; removed" >&2
        rm -f "$cache/$sdist"
        exit 1
    fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$cache/$sdist" -C "$tmp" --wildcards "llama_cpp_python-$version/vendor/llama.cpp/models/ggml-vocab-*"
src=$tmp/llama_cpp_python-$version/vendor/llama.cpp/models
mkdir -p "$dest"
for n in $(names); do
    if ! verify "$n" "$src/$n"; then
        echo "vocabs: SHA-256 of $n does not match $sums; nothing installed" >&2
        exit 1
    fi
done
for n in $(names); do mv "$src/$n" "$dest/$n.part" && mv "$dest/$n.part" "$dest/$n"; done
echo "vocabs: $dest installed and verified ($(names | wc -l) files)"
