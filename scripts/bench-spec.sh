#!/bin/sh
# scripts/bench-spec.sh: the speed-up of prompt-lookup speculative decoding on
# an agent's edit turn: the model is given a source file and asked to write it
# back with one rename (most of the reply is a copy), greedy, once plainly and
# once with --spec ngram; prints decode tok/s of each, the ratio, the
# acceptance and whether the two outputs are identical (they must be).
# usage: scripts/bench-spec.sh [BIN_DIR]   (env: MODEL, THREADS=2, MAX_TOKENS=400,
#        FILE=engine/spec.c, SPEC_ARGS="--spec-max 8 --spec-ngram 3", REPS=3)
set -eu
BIN=${1:-bin}
THREADS=${THREADS:-2}
MAX_TOKENS=${MAX_TOKENS:-400}
FILE=${FILE:-engine/spec.c}
SPEC_ARGS=${SPEC_ARGS:-}
REPS=${REPS:-3}
command -v python3 >/dev/null || { echo "bench-spec: needs python3 (to read --json)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/cachet-bench-spec-XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM
{
    printf 'Here is the file %s:\n\n```c\n' "$FILE"
    cat "$FILE"
    printf '```\n\nWrite the whole file again, unchanged except that the function last_match is renamed to find_last. Reply with the code only.\n'
} >"$TMP/prompt"
MODEL_ARG=
[ -n "${MODEL:-}" ] && MODEL_ARG="--model $MODEL"
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
echo "bench-spec: $FILE, max $MAX_TOKENS tokens, $THREADS threads, $REPS runs each (medians), load average $load before"
r=0
while [ "$r" -lt "$REPS" ]; do
    for mode in none ngram; do
        # shellcheck disable=SC2086
        "$BIN/cachet" generate --chat --prompt-file "$TMP/prompt" --temp 0 --max-tokens "$MAX_TOKENS" \
            --threads "$THREADS" --no-disk-cache --json --spec "$mode" $SPEC_ARGS $MODEL_ARG \
            >"$TMP/$mode.$r.json"
    done
    r=$((r + 1))
done
python3 - "$TMP" "$REPS" <<'PY'
import json, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
runs = {m: [json.load(open(f"{tmp}/{m}.{r}.json")) for r in range(reps)] for m in ("none", "ngram")}
tps = {m: statistics.median(x["decode_tps"] for x in runs[m]) for m in runs}
s = runs["ngram"][0]
same = all(x["tokens"] == runs["none"][0]["tokens"] for m in runs for x in runs[m])
print(f"generated {s['generated_tokens']} tokens ({s['stop_reason']}); outputs identical: {'yes' if same else 'NO'}")
print(f"plain decode: {tps['none']:.1f} tok/s; --spec ngram: {tps['ngram']:.1f} tok/s; speed-up {tps['ngram'] / tps['none']:.2f}x")
print(f"drafted {s['spec_drafted']}, accepted {s['spec_accepted']} ({100 * s['spec_accept_rate']:.0f}%), "
      f"{s['tokens_per_forward']:.2f} tokens per forward ({s['decode_forwards']} forwards)")
sys.exit(0 if same else 1)
PY
