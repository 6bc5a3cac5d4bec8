#!/bin/sh
# scripts/fuzz-all.sh: runs every libFuzzer harness (make fuzz) for SECONDS
# each and prints, per harness, the inputs executed, the seconds run and the
# crashes found. Usage: sh scripts/fuzz-all.sh SECONDS [HARNESS...]
# (default: all; JOBS=2 runs two at a time, under nice). Seeds come from
# tests/fuzz/corpus/<harness>/ (read only); what the fuzzer adds goes to
# build/fuzz/corpus/<harness>/, crashes to build/fuzz/crashes/<harness>/, the
# log to build/fuzz/logs/<harness>.log. Exits 1 if any harness crashed.
set -u
secs=${1:?usage: fuzz-all.sh SECONDS [HARNESS...]}
shift
all="gguf model toolcall skillmd config session serve_json lint"
list=${*:-$all}
bin=${BIN:-bin}
jobs=${JOBS:-1}
out=build/fuzz
mkdir -p "$out/logs"
for h in $list; do
    [ -x "$bin/fuzz_$h" ] || { echo "fuzz-all: $bin/fuzz_$h is missing: run make fuzz" >&2; exit 2; }
done

# The longest input each harness is given: the models are ~35 KB files.
max_len() {
    case $1 in
    gguf|model) echo 40000 ;;
    lint|session) echo 16384 ;;
    *) echo 8192 ;;
    esac
}

run_one() {
    h=$1
    mkdir -p "$out/corpus/$h" "$out/crashes/$h" "$out/logs"
    rm -f "$out/crashes/$h"/crash-* "$out/crashes/$h"/leak-* "$out/crashes/$h"/timeout-* "$out/crashes/$h"/oom-*
    seeds=tests/fuzz/corpus/$h
    start=$(date +%s)
    nice -n 10 "$bin/fuzz_$h" -max_total_time="$secs" -max_len="$(max_len "$h")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/crashes/$h/" \
        "$out/corpus/$h" "$seeds" >"$out/logs/$h.log" 2>&1
    rc=$?
    end=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/logs/$h.log" | tail -1)
    crashes=$(ls "$out/crashes/$h" 2>/dev/null | wc -l)
    printf '%-12s execs %-10s time %5ss  crashes %s%s\n' "$h" "${execs:-?}" "$((end - start))" "$crashes" \
        "$([ "$rc" -ne 0 ] && echo "  (exit $rc: see $out/logs/$h.log)")"
}

status=0
set -- $list
while [ $# -gt 0 ]; do
    pids=""
    i=0
    while [ $i -lt "$jobs" ] && [ $# -gt 0 ]; do
        run_one "$1" >"$out/logs/$1.line" 2>&1 &
        pids="$pids $!"
        names="${names:-} $1"
        shift
        i=$((i + 1))
    done
    for p in $pids; do wait "$p"; done
done
for h in $list; do
    cat "$out/logs/$h.line"
    grep -q 'crashes [1-9]\|exit' "$out/logs/$h.line" && status=1
done
exit $status
