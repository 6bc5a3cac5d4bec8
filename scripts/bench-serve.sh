#!/bin/sh
# scripts/bench-serve.sh: a bounded load test of `cachet serve`: CLIENTS
# concurrent clients (curl) each send REQUESTS small chat requests sharing a
# system prompt, then it prints failures, latency, the server's prefix-cache
# counters, KV memory and peak RSS, and stops the server. Loopback only.
# usage: scripts/bench-serve.sh [BIN_DIR]   (env: CLIENTS=8 REQUESTS=25 MAX_TOKENS=8 KV_BUDGET=64MiB)
set -eu

BIN=${1:-bin}
CLIENTS=${CLIENTS:-8}
REQUESTS=${REQUESTS:-25}
MAX_TOKENS=${MAX_TOKENS:-8}
KV_BUDGET=${KV_BUDGET:-64MiB}
PARALLEL=${PARALLEL:-4}
THREADS=${THREADS:-$(nproc)}

command -v curl >/dev/null || { echo "bench-serve: needs curl" >&2; exit 2; }
TMP=$(mktemp -d /tmp/cachet-bench-serve-XXXXXX)
PID=
cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID" 2>/dev/null || true
        i=0
        while kill -0 "$PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        kill -KILL "$PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

"$BIN/cachet" serve --port 0 --threads "$THREADS" --parallel "$PARALLEL" --kv-budget "$KV_BUDGET" \
    --kv-dir "$TMP/kv" --max-queue 256 2>"$TMP/log" &
PID=$!
PORT=
i=0
while [ -z "$PORT" ] && [ $i -lt 300 ]; do
    PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/log")
    kill -0 "$PID" 2>/dev/null || { cat "$TMP/log" >&2; exit 1; }
    [ -n "$PORT" ] || sleep 0.1
    i=$((i + 1))
done
[ -n "$PORT" ] || { echo "bench-serve: server did not start" >&2; cat "$TMP/log" >&2; exit 1; }
URL=http://127.0.0.1:$PORT

SYSTEM="You are a concise assistant for a team that builds an embedded inference engine in C. \
Answer in one short sentence. Stable instructions come first so the prefix cache can reuse them."

client() {
    c=$1
    r=0
    while [ $r -lt "$REQUESTS" ]; do
        body="{\"messages\":[{\"role\":\"system\",\"content\":\"$SYSTEM\"},{\"role\":\"user\",\"content\":\"Client $c asks question $r: name a prime number.\"}],\"max_tokens\":$MAX_TOKENS,\"temperature\":0.7,\"seed\":$r}"
        out=$(curl -s -o "$TMP/resp.$c" -w '%{http_code} %{time_total}' --max-time 300 \
            -H 'Content-Type: application/json' -d "$body" "$URL/v1/chat/completions" || echo "000 0")
        echo "$out" >>"$TMP/results.$c"
        r=$((r + 1))
    done
}

echo "bench-serve: $CLIENTS clients x $REQUESTS requests, max_tokens $MAX_TOKENS, --parallel $PARALLEL, --threads $THREADS, --kv-budget $KV_BUDGET"
T0=$(date +%s.%N)
c=0
CPIDS=
while [ $c -lt "$CLIENTS" ]; do
    client $c &
    CPIDS="$CPIDS $!"
    c=$((c + 1))
done
for j in $CPIDS; do wait "$j" || true; done
T1=$(date +%s.%N)

cat "$TMP"/results.* >"$TMP/all"
TOTAL=$(wc -l <"$TMP/all")
FAILED=$(awk '$1 != 200' "$TMP/all" | wc -l)
curl -s "$URL/metrics" >"$TMP/metrics"
m() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/metrics"; }
HWM=$(awk '/VmHWM/ { print $2, $3 }' "/proc/$PID/status")
awk -v t0="$T0" -v t1="$T1" '{ n++; s += $2; if ($2 > max) max = $2 }
    END { printf "requests: %d in %.1f s (%.2f req/s), latency mean %.3f s, max %.3f s\n",
          n, t1 - t0, n / (t1 - t0), s / n, max }' "$TMP/all"
sort -n -k2 "$TMP/all" | awk '{ a[NR] = $2 } END { printf "latency p50 %.3f s, p95 %.3f s\n", a[int(NR * 0.5) + 1], a[int(NR * 0.95)] }'
echo "failed: $FAILED of $TOTAL"
Q=$(m cachet_prefix_cache_queries_total)
H=$(m cachet_prefix_cache_hits_total)
awk -v q="$Q" -v h="$H" 'BEGIN { printf "prefix cache: queries %d tokens, hits %d tokens, hit rate %.1f%%\n", q, h, (q > 0 ? 100 * h / q : 0) }'
echo "generated tokens: $(m cachet_generation_tokens_total), evictions: $(m cachet_prefix_cache_evictions_total)"
echo "kv memory: $(m cachet_kv_bytes_in_use) bytes in use, budget $(m cachet_kv_budget_bytes) bytes; server peak rss: $HWM"
kill -TERM "$PID"
i=0
while kill -0 "$PID" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
wait "$PID" && echo "server: clean exit" || echo "server: exit status $?"
PID=
[ "$FAILED" -eq 0 ]
