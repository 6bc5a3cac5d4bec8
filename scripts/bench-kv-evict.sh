#!/bin/sh
# scripts/bench-kv-evict.sh: the eviction rows of docs/kv-memory.md: next-token
# perplexity over a stream of Pride and Prejudice longer than the KV cache
# (`cachet perplexity --stream`), for StreamingLLM (sinks + window), the plain
# window (no sinks), H2O (heavy hitters + recent) at budgets of CTX tokens and
# fractions of it, against the ceiling: a fresh context of CTX tokens recomputed
# every STRIDE targets. Every mode scores the same targets (positions CTX ..
# STREAM-1). ΔPPL is against the ceiling at the full budget. Prints markdown rows.
# Usage: scripts/bench-kv-evict.sh (MODELS="models/a.gguf ..." CTX=256 STREAM=2304
# SINKS=4 FRACS="100 50 25 12.5" STRIDE=16 THREADS=2 BIN=bin H2O=1 QUICK=0|1)
# QUICK=1: CTX=32 STREAM=96 FRACS="100 50", for tests.
set -eu
BIN=${BIN:-bin}
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then CTX=${CTX:-32}; STREAM=${STREAM:-96}; FRACS=${FRACS:-"100 50"}; fi
CTX=${CTX:-256}
STREAM=${STREAM:-2304}
SINKS=${SINKS:-4}
FRACS=${FRACS:-"100 50 25 12.5"}
STRIDE=${STRIDE:-16}
THREADS=${THREADS:-2}
H2O=${H2O:-1}
TEXT=${TEXT:-models/pride-and-prejudice.txt}
MODELS=${MODELS:-"models/SmolLM2-135M-Instruct.Q4_1.gguf models/gemma-3-270m-q4_k_m.gguf"}
[ -x "$BIN/cachet" ] || { echo "bench-kv-evict: no $BIN/cachet (run make)" >&2; exit 2; }
[ -f "$TEXT" ] || { echo "bench-kv-evict: no $TEXT (make ppl-text)" >&2; exit 2; }
ERR=$(mktemp /tmp/bench-kv-evict.XXXXXX)
trap 'rm -f "$ERR"' EXIT INT TERM
num() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p"; }

# ppl ARGS...: the stream's PPL for one mode (empty on failure, reason on stderr)
ppl() {
    "$BIN/cachet" perplexity -f "$TEXT" --model "$model" --threads "$THREADS" --json --stream "$STREAM" "$@" \
        2> "$ERR" | num ppl || true
}
# A Gemma-2-27B-shaped sequence (f16, `cachet kv --preset gemma2-27b`) holding
# BUDGET positions: its KV bytes and how many such sequences 80 GiB holds.
G27=$("$BIN/cachet" kv --preset gemma2-27b --json | num bytes_per_token)
g27() { echo "$1 $G27" | awk '{b = $1 * $2; printf "%.0f MB | %d", b / 1e6, 80 * 2^30 / b}'; }
row() { # technique budget ppl
    if [ -z "$3" ]; then
        echo "| $name | $1 | $2 | $(g27 "$2") | not run: $(tail -1 "$ERR" | sed 's/^cachet perplexity: //') | |"
    else
        echo "| $name | $1 | $2 | $(g27 "$2") | $3 | $(echo "$3 $base" | awk '{printf "%+.3f", $1 - $2}') |"
    fi
}

echo "| model | technique | KV budget (tokens) | Gemma-2-27B-shaped KV per sequence | sequences in 80 GiB | PPL | ΔPPL vs recompute at $CTX |"
echo "|---|---|---|---|---|---|---|"
# MLA hook: the MLA helper adds its rows here (a latent cache is a bytes/token
# change, not an eviction: its PPL is `cachet perplexity` on the MLA model).
for model in $MODELS; do
    [ -f "$model" ] || { echo "bench-kv-evict: skipping absent $model" >&2; continue; }
    name=$(basename "$model" .gguf)
    base=$(ppl --recompute "$CTX" --stride "$STRIDE")
    row "recompute (ceiling, stride $STRIDE)" "$CTX" "$base"
    row "window, no sinks" "$CTX" "$(ppl --kv-sinks 0 --kv-window "$CTX")"
    for f in $FRACS; do
        b=$(echo "$CTX $f" | awk '{printf "%d", $1 * $2 / 100}')
        row "StreamingLLM, $SINKS sinks" "$b" "$(ppl --kv-sinks "$SINKS" --kv-window $((b - SINKS)))"
        if [ "$H2O" = 1 ]; then # refused on models with sliding layers (the row says why)
            row "H2O, recent $((b / 2))" "$b" "$(ppl --kv-evict h2o --kv-budget-tokens "$b")"
        fi
    done
done
echo
echo "load average during the run: $(uptime | sed 's/.*load average: //')"
