#!/bin/sh
# scripts/greedy-check.sh BIN: greedy token fingerprints of the default model on
# fixed prompts at every CPU kernel level this machine has (scalar, avx2,
# avx512) and in --exact mode. Two runs of it before and after a refactor must
# print the same lines: the arithmetic did not change. Prints "level prompt md5".
set -eu
bin=${1:-bin/cachet}
root=$(cd "$(dirname "$0")/.." && pwd)
model=${CACHET_MODEL:-$root/models/SmolLM2-135M-Instruct.Q4_1.gguf}
levels="scalar avx2 avx512"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s' "The capital of France is" > "$tmp/prose"
printf '%s' "Hello" > "$tmp/single"
printf '%s' "Count from one to twenty: one, two, three," > "$tmp/numbers"
printf '%s' "What is the capital of France?" > "$tmp/chat_france"
head -c 3000 "$root/tests/data/long_prompt.txt" > "$tmp/long"
for level in $levels; do
    for mode in default exact; do
        extra=""
        [ "$mode" = exact ] && extra="--exact"
        for p in single prose numbers chat_france long; do
            chat=""
            [ "$p" = chat_france ] && chat="--chat"
            out=$(CACHET_CPU=$level "$bin" generate --model "$model" --prompt-file "$tmp/$p" $chat \
                  --temp 0 --max-tokens 48 --threads 2 --no-cache --json $extra 2>/dev/null) || {
                echo "$level-$mode $p unavailable"; continue; }
            toks=$(printf '%s' "$out" | sed -e 's/.*"tokens":\[\([^]]*\)\].*/\1/')
            echo "$level-$mode $p $(printf '%s' "$toks" | md5sum | cut -c1-12)"
        done
    done
done
