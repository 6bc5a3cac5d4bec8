#!/bin/sh
# scripts/bench-kv.sh: the quantized-KV figures of docs/kv-memory.md, one row per
# --kv-type: KV bytes per token of the model, tokens in 80 GiB for a
# Gemma-2-27B-shaped model (46 layers, 16 KV heads x 128, 23 layers with a
# 4,096 window; `cachet kv`), decode tok/s after a DEPTH-token context (the
# median of REPS runs of `cachet generate --json`, no prefix reuse), and the
# quality against f16 (mean KL, top-1 agreement; tests/test_kvquant.c's
# quality case, until `cachet perplexity` gives delta-PPL). Speed is only a
# result on a quiet machine. Usage: scripts/bench-kv.sh (MODEL=file.gguf (default
# SmolLM2-135M-Instruct.Q4_1.gguf under models/)
# DEPTH=4096 GEN=64 REPS=3 THREADS=2 BIN=bin TYPES="f16 q8_0 q4_0" QUALITY=0|1
# EVICT="sinks:4:1020 h2o:1024"; EVICT= for none)
set -eu
BIN=${BIN:-bin}
DEPTH=${DEPTH:-4096}
GEN=${GEN:-64}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
TYPES=${TYPES:-"f16 q8_0 q4_0"}
QUALITY=${QUALITY:-1}
MODEL=${MODEL:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
MODEL_OPT="--model $MODEL"
[ -x "$BIN/cachet" ] || { echo "bench-kv: no $BIN/cachet (run make)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/bench-kv.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

# field "name" (a number) of a one-line JSON object
num() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p"; }

# A prompt of about DEPTH tokens: the repository's docs, repeated as needed,
# cut at the byte count their token rate predicts.
cat README.md docs/*.md > "$TMP/text"
while [ "$(wc -c < "$TMP/text")" -lt $((DEPTH * 8)) ]; do cat "$TMP/text" "$TMP/text" > "$TMP/t2"; mv "$TMP/t2" "$TMP/text"; done
bytes=$(wc -c < "$TMP/text")
toks=$("$BIN/cachet" tokenize $MODEL_OPT --no-special --file "$TMP/text" | wc -w)
cut=$((bytes * DEPTH / toks))
head -c "$cut" "$TMP/text" > "$TMP/prompt"
t1=$("$BIN/cachet" tokenize $MODEL_OPT --no-special --file "$TMP/prompt" | wc -w)
head -c $((cut * DEPTH / t1)) "$TMP/text" > "$TMP/prompt" # once more at the cut's own rate
CTX=$((DEPTH * 11 / 10 + GEN + 64))

echo "| KV type | bytes/token (model) | Gemma-2-27B-shaped bytes/token | tokens in 80 GiB (all layers / window-aware) | context | decode tok/s after it |"
echo "|---|---|---|---|---|---|"
for t in $TYPES; do
    bpt=$("$BIN/cachet" kv $MODEL_OPT --kv-type "$t" --json | num bytes_per_token)
    g=$("$BIN/cachet" kv --layers 46 --kv-heads 16 --head-dim 128 --heads 32 --window 4096 --sliding-layers 23 \
        --memory 80GiB --kv-type "$t" --json)
    gb=$(echo "$g" | num bytes_per_token)
    gt=$(echo "$g" | num tokens)
    gw=$(echo "$g" | num tokens_window_aware)
    : > "$TMP/tps"
    n=0
    while [ $n -lt "$REPS" ]; do
        "$BIN/cachet" generate $MODEL_OPT --json --no-cache --temp 0 --max-tokens "$GEN" --threads "$THREADS" \
            --ctx-size "$CTX" --kv-type "$t" --prompt-file "$TMP/prompt" > "$TMP/out" 2> "$TMP/err" ||
            { echo "bench-kv: cachet generate --kv-type $t failed: $(cat "$TMP/err")" >&2; exit 1; }
        num decode_tps < "$TMP/out" >> "$TMP/tps"
        ctx=$(num prompt_tokens < "$TMP/out")
        n=$((n + 1))
    done
    tps=$(sort -n "$TMP/tps" | awk '{v[NR] = $1} END {printf "%.1f", v[int((NR + 1) / 2)]}')
    echo "| $t | $bpt | $gb | $gt / $gw | $ctx | $tps |"
done
# Eviction rows (EVICT="sinks:N:W h2o:B ..."; f16): decode tok/s after the same
# DEPTH-token prompt with a cache capped at N + W or B positions (the prompt
# itself is evaluated token by token once the cache is full). Their quality is
# scripts/bench-kv-evict.sh's (make bench-kv runs both).
EVICT=${EVICT:-"sinks:4:1020 h2o:1024"}
bpt16=$("$BIN/cachet" kv $MODEL_OPT --kv-type f16 --json | num bytes_per_token)
for e in $EVICT; do
    case $e in
    sinks:*) w=${e##*:}; n=${e#sinks:}; n=${n%%:*}; opt="--kv-sinks $n --kv-window $w"; cap=$((n + w)) ;;
    h2o:*) cap=${e#h2o:}; opt="--kv-evict h2o --kv-budget-tokens $cap" ;;
    *) echo "bench-kv: EVICT entry '$e' is not sinks:N:W or h2o:B" >&2; exit 2 ;;
    esac
    "$BIN/cachet" generate $MODEL_OPT --json --no-cache --temp 0 --max-tokens "$GEN" --threads "$THREADS" \
        --ctx-size "$CTX" $opt --prompt-file "$TMP/prompt" > "$TMP/out" 2> "$TMP/err" ||
        { echo "bench-kv: cachet generate $opt failed: $(cat "$TMP/err")" >&2; exit 1; }
    echo "| f16, $e ($cap positions kept) | $bpt16 x $cap = $((bpt16 * cap)) per sequence | | | $(num prompt_tokens < "$TMP/out") | $(num decode_tps < "$TMP/out" | awk '{printf "%.1f", $1}') |"
done
if [ "$QUALITY" = 1 ]; then
    echo
    echo "quality against f16 (next-token distributions at every position of 4 golden prompts + greedy):"
    CACHET_ROOT=$(pwd) CACHET_BIN=$(pwd)/$BIN "$BIN/cachet-tests" kvquant/quality 2>/dev/null | grep "vs f16" || true
fi
