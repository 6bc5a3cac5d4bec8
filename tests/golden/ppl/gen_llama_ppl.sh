#!/usr/bin/env bash
# tests/golden/ppl/gen_llama_ppl.sh: llama.cpp's llama-perplexity on SmolLM2 and
# Gemma 3 270M over the perplexity text (make ppl-text), ctx 512, writing
# llama_ppl_<model>.txt here: the build line, the running PPL per chunk and the
# final estimate. CI never runs this; tests/test_perplexity.c reads its output.
#
# usage: tests/golden/ppl/gen_llama_ppl.sh [smollm2|gemma3 ...]
# env:   LLAMA_CPP_BIN  folder with llama-perplexity (default /work/ref/build/bin)
#        CHUNKS_smollm2, CHUNKS_gemma3  chunks to run (default 32 and 16: the
#        running value after chunk N is what --chunks N prints, so the test may
#        use any N up to these); THREADS (default 2)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
BIN="${LLAMA_CPP_BIN:-/work/ref/build/bin}"
TEXT="$REPO/models/pride-and-prejudice.txt"
THREADS="${THREADS:-2}"
[ -f "$TEXT" ] || { echo "gen_llama_ppl.sh: $TEXT missing (make ppl-text)" >&2; exit 1; }
for which in "${@:-smollm2 gemma3}"; do
    for w in $which; do
        case $w in
        smollm2) model="$REPO/models/SmolLM2-135M-Instruct.Q4_1.gguf"; chunks="${CHUNKS_smollm2:-32}" ;;
        gemma3) model="$REPO/models/gemma-3-270m-q4_k_m.gguf"; chunks="${CHUNKS_gemma3:-16}" ;;
        *) echo "gen_llama_ppl.sh: unknown model '$w'" >&2; exit 2 ;;
        esac
        out="$HERE/llama_ppl_$w.txt"
        log=$(mktemp)
        "$BIN/llama-perplexity" -m "$model" -f "$TEXT" -c 512 --chunks "$chunks" -t "$THREADS" \
            > "$log.out" 2> "$log"
        {
            echo "# llama-perplexity -m $(basename "$model") -f pride-and-prejudice.txt -c 512 --chunks $chunks"
            echo "# model sha256 $(sha256sum "$model" | cut -d' ' -f1)"
            echo "# text sha256 $(sha256sum "$TEXT" | cut -d' ' -f1)"
            grep -E "system_info|calculating perplexity" "$log" | sed 's/^[0-9.]* [IWE] /# /'
            grep -o "Final estimate.*" "$log" | sed 's/^/# /'
            tr ',' '\n' < "$log.out" | sed -n 's/^\[\([0-9]*\)\]\([0-9.]*\)$/\1\t\2/p'
        } > "$out"
        rm -f "$log" "$log.out"
        echo "gen_llama_ppl.sh: wrote $out"
    done
done
