#!/bin/sh
# scripts/rss-7b.sh: writes the mistral-7b-q4_k_m synthetic model once (4.1 GiB,
# build/synth), generates a few tokens from it and prints the peak RSS (VmHWM) split
# into file-backed (the mmap'd weights) and anonymous memory, from /proc/PID/status;
# fails if the anonymous part reaches a quarter of the file. Does not measure speed.
# usage: scripts/rss-7b.sh [BIN_DIR]   (env: MODEL7B=path THREADS=n TOKENS=4)
set -eu

BIN=${1:-bin}
F=${MODEL7B:-build/synth/mistral-7b-q4_k_m.gguf}
THREADS=${THREADS:-$(nproc)}
TOKENS=${TOKENS:-4}

if [ ! -f "$F" ]; then
    mkdir -p "$(dirname "$F")"
    "$BIN/cachet-synth" --preset mistral-7b-q4_k_m -o "$F"
fi
TMP=$(mktemp -d /tmp/cachet-rss7b-XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

"$BIN/cachet" generate --model "$F" --prompt "The capital of France is" --max-tokens "$TOKENS" \
    --temp 0 --no-cache --threads "$THREADS" --json >"$TMP/out.json" 2>"$TMP/err" &
PID=$!
hwm=0 anon=0 rfile=0
while kill -0 "$PID" 2>/dev/null; do
    if cp "/proc/$PID/status" "$TMP/status" 2>/dev/null && grep -q VmHWM "$TMP/status"; then
        eval "$(awk '/^VmHWM/ { h = $2 } /^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
                     END { printf "h=%d a=%d f=%d\n", h, a, f }' "$TMP/status")"
        [ "$h" -gt "$hwm" ] && hwm=$h
        [ "$a" -gt "$anon" ] && anon=$a
        [ "$f" -gt "$rfile" ] && rfile=$f
    fi
    sleep 0.05
done
rc=0
wait "$PID" || rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$TMP/err" >&2
    echo "rss-7b: cachet generate failed ($rc)" >&2
    exit 1
fi
size=$(($(wc -c <"$F") / 1024))
toks=$(sed -n 's/.*"generated_tokens":\([0-9]*\).*/\1/p' "$TMP/out.json")
echo "rss-7b: $F ($((size / 1024)) MiB), $toks tokens generated"
echo "rss-7b: peak RSS (VmHWM) $((hwm / 1024)) MiB; at most $((rfile / 1024)) MiB file-backed (the mapped weights)" \
    "and $((anon / 1024)) MiB anonymous"
if [ "$anon" -ge $((size / 4)) ] || [ "${toks:-0}" -lt 1 ]; then
    echo "rss-7b: FAIL: anonymous memory reaches a quarter of the file, or nothing was generated" >&2
    exit 1
fi
echo "rss-7b: ok (weights mapped, not copied)"
