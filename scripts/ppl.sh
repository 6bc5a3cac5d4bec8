#!/bin/sh
# scripts/ppl.sh (make ppl): `cachet perplexity` over the whole perplexity text
# (make ppl-text) at ctx 512 on SmolLM2 and, when fetched, Gemma 3 270M: the
# full-text figures of docs/perplexity.md. Env: THREADS (default: all cores),
# CTX (512), CHUNKS (all), PPL_ARGS (more options, e.g. --exact or --kv-type
# q8_0 once it lands). With LLAMA_CPP_DIR (a llama.cpp build with
# bin/llama-perplexity) it runs that too on the same text, ctx and chunks.
set -eu
cd "$(dirname "$0")/.."
text=models/pride-and-prejudice.txt
[ -f "$text" ] || sh scripts/fetch-ppl-text.sh
ctx=${CTX:-512}
args="--ctx $ctx"
[ -n "${CHUNKS:-}" ] && args="$args --chunks $CHUNKS"
[ -n "${THREADS:-}" ] && args="$args --threads $THREADS"
for model in models/SmolLM2-135M-Instruct.Q4_1.gguf models/gemma-3-270m-q4_k_m.gguf; do
    if [ ! -f "$model" ]; then
        echo "make ppl: $model is absent (make model / make model-gemma3); skipped"
        continue
    fi
    echo "== cachet perplexity $(basename "$model") $args ${PPL_ARGS:-}"
    # shellcheck disable=SC2086 # args are words
    bin/cachet perplexity -f "$text" --model "$model" $args ${PPL_ARGS:-} 2>/dev/null | tail -n 1
    if [ -n "${LLAMA_CPP_DIR:-}" ]; then
        echo "== llama-perplexity $(basename "$model") -c $ctx"
        "$LLAMA_CPP_DIR/bin/llama-perplexity" -m "$model" -f "$text" -c "$ctx" \
            ${CHUNKS:+--chunks $CHUNKS} ${THREADS:+-t $THREADS} 2>&1 | grep -o "Final estimate.*"
    fi
done
