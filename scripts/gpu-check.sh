#!/bin/sh
# scripts/gpu-check.sh (make gpu-check): everything a GPU machine checks, in one
# run that fits a short lease with no network and no model files:
#   1. builds the engine-only GPU tools with CUDA (cachet-gpu, cachet-synth):
#      no agent libraries needed, only a C compiler and nvcc;
#   2. runs the CUDA suite (tests/test_cuda.c: every op and quant type GPU vs
#      CPU, synthetic llama models end to end, cache hit vs cold on the GPU);
#   3. writes 1B-parameter llama-shaped synthetic models in Q4_1 and Q8_0 and
#      benchmarks each: prefill and decode tok/s, cold vs warm TTFT for a
#      4,000-token prefix, decode's share of the measured HBM bandwidth bound.
# Results (logs, one JSON per model, summary.txt: 8 files) go to $OUT, else
# build/gpu-check. Exit status: 0 when the suite passed and both benchmarks ran.
# Bounded to fit one 10-minute device command: build ~1 min, suite <= 180 s,
# each benchmark <= 150 s. With the device tool:
#   run(command="sh scripts/gpu-check.sh", timeout_s=590)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/gpu-check}
mkdir -p "$OUT"
JOBS=$(nproc 2>/dev/null || echo 4)
MODELS=${GPU_CHECK_MODELS:-/tmp/cachet-gpu-models}
REPS=${GPU_CHECK_REPS:-3}
BIN=build/cuda/bin
status=0

say() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }
: >"$OUT/summary.txt"

say "== gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$OUT/summary.txt"
command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -1 | tee -a "$OUT/summary.txt"

# cuBLAS from the toolkit, else from the nvidia-cublas Python wheel (PyTorch images)
EXTRA_LDFLAGS=
NVCC_PATH=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CUDA_LIB=$(dirname "$(dirname "$NVCC_PATH")")/lib64
if ! ls "$CUDA_LIB"/libcublas.so >/dev/null 2>&1; then
    wheel=$(python3 -c 'import nvidia.cublas, os; print(list(nvidia.cublas.__path__)[0])' 2>/dev/null)
    if [ -n "$wheel" ] && ls "$wheel"/lib/libcublas.so.* >/dev/null 2>&1; then
        mkdir -p /tmp/cachet-culib
        for f in "$wheel"/lib/libcublas.so.* "$wheel"/lib/libcublasLt.so.*; do
            ln -sf "$f" /tmp/cachet-culib/"$(basename "$f")"
            ln -sf "$f" /tmp/cachet-culib/"$(basename "$f" | sed 's/\.so\..*/.so/')"
        done
        EXTRA_LDFLAGS="-L/tmp/cachet-culib -Wl,-rpath,/tmp/cachet-culib"
        say "cuBLAS from $wheel"
    fi
fi

say "== build (engine-only GPU tools, $JOBS jobs)"
t0=$(date +%s)
if ! make -j"$JOBS" BUILD=build/cuda BIN=$BIN CUDA=1 LDFLAGS="$EXTRA_LDFLAGS" $BIN/cachet-gpu $BIN/cachet-synth >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"
    say "build FAILED (see build.log)"
    exit 1
fi
say "built in $(( $(date +%s) - t0 )) s"

say "== make test-cuda (the CUDA suite)"
if timeout 180 $BIN/cachet-gpu test >"$OUT/test-cuda.log" 2>&1; then
    say "$(tail -1 "$OUT/test-cuda.log")"
else
    status=1
    grep -E 'FAIL|cuda ' "$OUT/test-cuda.log" | head -40 | tee -a "$OUT/summary.txt"
    say "test-cuda FAILED (see test-cuda.log)"
fi
grep -E '^  cuda|^SKIP' "$OUT/test-cuda.log" | tee -a "$OUT/summary.txt"

mkdir -p "$MODELS"
for t in q4_1 q8_0; do
    m="$MODELS/llama-1b-$t.gguf"
    say "== benchmark: synthetic llama-1b $t"
    if ! $BIN/cachet-synth --preset llama-1b --type "$t" --threads "$JOBS" -o "$m" >"$OUT/synth.log" 2>&1; then
        cat "$OUT/synth.log" | tee -a "$OUT/summary.txt"
        status=1
        continue
    fi
    cat "$OUT/synth.log" | tee -a "$OUT/summary.txt"
    if timeout 150 $BIN/cachet-gpu bench --model "$m" --reps "$REPS" --prompt-tokens 512 --gen-tokens 128 \
        --prefix 4000 --suffix 32 >"$OUT/bench-$t.json" 2>"$OUT/bench-$t.log"; then
        cat "$OUT/bench-$t.json" | tee -a "$OUT/summary.txt"
    else
        status=1
        tail -5 "$OUT/bench-$t.log" | tee -a "$OUT/summary.txt"
        say "bench $t FAILED"
    fi
    rm -f "$m"
done
say "== gpu-check done, status $status"
exit $status
