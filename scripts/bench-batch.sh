#!/bin/sh
# scripts/bench-batch.sh: aggregate generated tokens/s of `cachet serve` with
# 1, 2, 4, 8 concurrent requests (batched decode: one forward pass per round
# for all of them), each level a fresh server with --parallel N and N clients
# sending REQUESTS chat requests of MAX_TOKENS tokens. Prints a line per level
# and the server's phase sums. Loopback only; run it on a quiet machine.
# usage: scripts/bench-batch.sh [BIN_DIR]
#   env: MODEL=path.gguf THREADS=2 LEVELS="1 2 4 8" REQUESTS=3 MAX_TOKENS=64
set -eu

BIN=${1:-bin}
THREADS=${THREADS:-2}
LEVELS=${LEVELS:-1 2 4 8}
REQUESTS=${REQUESTS:-3}
MAX_TOKENS=${MAX_TOKENS:-64}
MODEL_OPT=
[ -n "${MODEL:-}" ] && MODEL_OPT="--model $MODEL"

command -v curl >/dev/null || { echo "bench-batch: needs curl" >&2; exit 2; }
TMP=$(mktemp -d /tmp/cachet-bench-batch-XXXXXX)
PID=
stop_server() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID" 2>/dev/null || true
        i=0
        while kill -0 "$PID" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$PID" 2>/dev/null || true
    fi
    PID=
}
trap 'stop_server; rm -rf "$TMP"' EXIT INT TERM

SYSTEM="You are a concise assistant for a team that builds an embedded inference engine in C."

client() {
    c=$1
    r=0
    while [ $r -lt "$REQUESTS" ]; do
        body="{\"messages\":[{\"role\":\"system\",\"content\":\"$SYSTEM\"},{\"role\":\"user\",\"content\":\"Client $c, question $r: write a long story about a lighthouse.\"}],\"max_tokens\":$MAX_TOKENS,\"temperature\":0.7,\"seed\":$r}"
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 600 -H 'Content-Type: application/json' \
            -d "$body" "$URL/v1/chat/completions" >>"$TMP/codes" || echo 000 >>"$TMP/codes"
        r=$((r + 1))
    done
}

echo "bench-batch: ${MODEL:-default model}, --threads $THREADS, $REQUESTS requests per client, max_tokens $MAX_TOKENS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for N in $LEVELS; do
    rm -f "$TMP/codes"
    # shellcheck disable=SC2086
    "$BIN/cachet" serve --port 0 --threads "$THREADS" --parallel "$N" --ctx-size 1024 --no-disk-cache \
        $MODEL_OPT 2>"$TMP/log" &
    PID=$!
    PORT=
    i=0
    while [ -z "$PORT" ] && [ $i -lt 600 ]; do
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/log")
        kill -0 "$PID" 2>/dev/null || { cat "$TMP/log" >&2; exit 1; }
        [ -n "$PORT" ] || sleep 0.1
        i=$((i + 1))
    done
    [ -n "$PORT" ] || { echo "bench-batch: server did not start" >&2; exit 1; }
    URL=http://127.0.0.1:$PORT
    T0=$(date +%s.%N)
    c=0
    CPIDS=
    while [ $c -lt "$N" ]; do
        client $c &
        CPIDS="$CPIDS $!"
        c=$((c + 1))
    done
    for j in $CPIDS; do wait "$j" || true; done
    T1=$(date +%s.%N)
    curl -s "$URL/metrics" >"$TMP/metrics"
    m() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/metrics"; }
    FAILED=$(awk '$1 != 200' "$TMP/codes" | wc -l)
    awk -v n="$N" -v t0="$T0" -v t1="$T1" -v g="$(m cachet_generation_tokens_total)" -v f="$FAILED" \
        -v q="$(m cachet_request_queue_seconds_sum)" -v p="$(m cachet_request_prefill_seconds_sum)" \
        -v d="$(m cachet_request_decode_seconds_sum)" -v r="$(m cachet_generations_total)" \
        'BEGIN { printf "%d concurrent: %d tokens in %.2f s = %.1f tok/s aggregate (%d failed); per request: queue %.3f s, prefill %.3f s, decode %.3f s\n",
                 n, g, t1 - t0, g / (t1 - t0), f, q / r, p / r, d / r }'
    stop_server
done
