#!/bin/sh
# scripts/bench.sh: `make bench`: the embedded engine beside llama.cpp's llama-bench
# on the same model and thread count (cachet bench; see docs/bench.md). llama.cpp
# runs only when LLAMA_CPP_DIR points at a build of it; it is never built here.
# Usage: scripts/bench.sh [path/to/cachet] [cachet bench options]
#   env: THREADS (2), MODEL (a GGUF; default cachet's own default model)
set -eu
CACHET=${1:-${BIN:-bin}/cachet}
[ $# -gt 0 ] && shift
[ -x "$CACHET" ] || { echo "bench: no cachet at '$CACHET' (run make)" >&2; exit 2; }
if [ -n "${LLAMA_CPP_DIR:-}" ] && [ ! -x "$LLAMA_CPP_DIR/bin/llama-bench" ] &&
    [ ! -x "$LLAMA_CPP_DIR/llama-bench" ]; then
    echo "bench: LLAMA_CPP_DIR='$LLAMA_CPP_DIR' holds no llama-bench (see docs/bench.md)" >&2
fi
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
echo "bench: load average $load before the run (cachet bench withholds ratios above 0.5 per core; --force)" >&2
if [ -n "${MODEL:-}" ]; then
    [ -f "$MODEL" ] || { echo "bench: no model file '$MODEL'" >&2; exit 2; }
    set -- --model "$MODEL" "$@"
fi
exec "$CACHET" bench --threads "${THREADS:-2}" "$@"
