#!/bin/sh
# scripts/promptlint-hook.sh: promptlint for the pre-commit framework
# (.pre-commit-hooks.yaml, language: script). pre-commit runs it from its own
# clone of this repository (in its cache, ~/.cache/pre-commit); on first use,
# or when linter/ or util/ changed since, it builds an estimate-only promptlint
# (linter/ and util/ only, no model tokenizer; the Debian packages of the
# README's install line) into <clone>/build/hook/ and then runs it with the
# arguments pre-commit passes. Needs no promptlint on PATH; does not install.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/hook
exe=$out/promptlint

stale() {
    [ ! -x "$exe" ] && return 0
    [ -n "$(find "$root/linter" "$root/util" -name '*.[ch]' -newer "$exe" 2>/dev/null | head -n 1)" ]
}

build() {
    CC=${CC:-cc}
    pkgs="libcjson libpcre2-8 libgit2 yaml-0.1"
    if ! pkg-config --exists $pkgs 2>/dev/null; then
        echo "promptlint hook: building promptlint needs a C compiler, pkg-config and the" \
             "development packages of $pkgs (Debian: apt install build-essential pkg-config" \
             "libcjson-dev libpcre2-dev libgit2-dev libyaml-dev)" >&2
        exit 2
    fi
    echo "promptlint hook: building promptlint into $out (first use)" >&2
    tmp=$exe.$$
    # shellcheck disable=SC2046
    "$CC" -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE -O2 -DLINT_ENGINE_TOKENIZER=0 \
        -DCACHET_DATADIR="\"$root\"" $(pkg-config --cflags $pkgs) \
        -o "$tmp" "$root"/linter/*.c "$root"/util/*.c $(pkg-config --libs $pkgs) -lm -pthread \
        || { rm -f "$tmp"; echo "promptlint hook: the build failed" >&2; exit 2; }
    mv -f "$tmp" "$exe"
}

if stale; then
    mkdir -p "$out"
    # pre-commit may start several of these at once: one builds, the others wait
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$out/.lock"
        flock 9
    fi
    if stale; then build; fi
fi
exec "$exe" "$@"
