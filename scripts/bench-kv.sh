#!/bin/sh
# scripts/bench-kv.sh: every KV-memory figure of docs/kv-memory.md in ONE
# markdown table (make bench-kv): one row per technique and setting (KV types,
# the plain window, StreamingLLM and H2O at budgets of CTX, MLA's presets);
# bytes/token, a Gemma-2-27B-shaped model in 80 GiB, PPL and ΔPPL on SmolLM2
# and Gemma 3, recall accuracy (RCTX-token prompts, budgets the same fractions
# of RCTX), decode tok/s after DEPTH tokens. KV types: llama-perplexity's
# chunks (KVCTX x KVCHUNKS), ΔPPL against f16. Bounded caches: the targets CTX ..
# STREAM-1 of one stream, ΔPPL against the ceiling (f16, a fresh CTX context
# recomputed every STRIDE targets). Quality is deterministic; speed is a
# result on a quiet machine only.
# Usage: scripts/bench-kv.sh, with QUALITY_ONLY=1 or SPEED_ONLY=1 (the other
# columns say "-"), QUICK=1 (small, for tests), and CTX=128 STREAM=1152 SINKS=4
# FRACS="100 50 25 12.5" STRIDE=16 RCTX=256 TRIALS=8 KVCTX=512 KVCHUNKS=4
# TYPES="f16 q8_0 q4_0 q8_0/q4_0"
# DEPTH=4096 GEN=64 REPS=3 EVICT_REPS=1 SPEED_FRACS=100 THREADS=2 BIN=bin SMOL=... GEMMA=... (GEMMA= skips
# Gemma 3; PPL_SMOL=0 skips SmolLM2's quality: the two halves may run apart),
# ROWS="types window sinks h2o ceiling mla" (a subset: its rows only), BASES=0
# (no baselines run: bare PPLs, for parts run side by side).
set -eu
BIN=${BIN:-bin}
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
    CTX=${CTX:-64} STREAM=${STREAM:-128} FRACS=${FRACS:-50} TRIALS=${TRIALS:-2} TYPES=${TYPES:-"f16 q8_0"}
    RCTX=${RCTX:-128} KVCTX=${KVCTX:-64} KVCHUNKS=${KVCHUNKS:-2}
    DEPTH=${DEPTH:-160} GEN=${GEN:-4} REPS=${REPS:-1} GEMMA=${GEMMA-} SPEED_FRACS=${SPEED_FRACS:-50}
fi
CTX=${CTX:-128}
STREAM=${STREAM:-1152}
SINKS=${SINKS:-4}
FRACS=${FRACS:-"100 50 25 12.5"}
STRIDE=${STRIDE:-16}
TRIALS=${TRIALS:-8}
RCTX=${RCTX:-256}
KVCTX=${KVCTX:-512}
KVCHUNKS=${KVCHUNKS:-4}
TYPES=${TYPES:-"f16 q8_0 q4_0 q8_0/q4_0"}
DEPTH=${DEPTH:-4096}
GEN=${GEN:-64}
REPS=${REPS:-3}
EVICT_REPS=${EVICT_REPS:-1} # a bounded cache evaluates the prompt token by token past its budget: slow
SPEED_FRACS=${SPEED_FRACS:-100} # the budgets whose decode is timed (a step's work grows with the budget)
THREADS=${THREADS:-2}
SMOL=${SMOL:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
GEMMA=${GEMMA-models/gemma-3-270m-q4_k_m.gguf}
TEXT=${TEXT:-models/pride-and-prejudice.txt}
FACTS=${FACTS:-scripts/recall-facts.tsv}
QUALITY=1 SPEED=1
PPL_SMOL=${PPL_SMOL:-1} # 0: quality on Gemma 3 only (SmolLM2's columns "-")
ROWS=${ROWS:-"types window sinks h2o ceiling mla"}
BASES=${BASES:-1}
want() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; }
[ "${SPEED_ONLY:-0}" = 1 ] && QUALITY=0
[ "${QUALITY_ONLY:-0}" = 1 ] && SPEED=0
[ -x "$BIN/cachet" ] || { echo "bench-kv: no $BIN/cachet (run make)" >&2; exit 2; }
[ "$QUALITY" = 0 ] || [ -f "$TEXT" ] || { echo "bench-kv: no $TEXT (make ppl-text)" >&2; exit 2; }
[ -z "$GEMMA" ] || [ -f "$GEMMA" ] || { echo "bench-kv: no $GEMMA (make model-gemma3; GEMMA= skips)" >&2; exit 2; }
TMP=$(mktemp -d /tmp/bench-kv.XXXXXX)
trap 'rm -rf "$TMP"' EXIT INT TERM

# field "name" (a number) of a one-line JSON object
num() { sed -n "s/.*\"$1\":\([-0-9.e+]*\).*/\1/p"; }
# the reason a command failed: its last stderr line, without the command's name
why() { tail -1 "$TMP/err" | sed 's/^cachet [a-z]*: //; s/|/\//g'; }
kvt() { # "q8_0/q4_0" -> --kv-type-k q8_0 --kv-type-v q4_0
    echo "--kv-type-k ${1%/*} --kv-type-v ${1#*/}"
}

# ppl MODEL BASE OPTS...: "PPL (ΔPPL)" of `cachet perplexity OPTS` (BASE: the
# PPL the Δ is against; empty: the bare PPL), or why not
ppl() {
    m=$1 b=$2
    shift 2
    if v=$("$BIN/cachet" perplexity -f "$TEXT" --model "$m" --threads "$THREADS" --json "$@" 2> "$TMP/err" |
        num ppl) && [ -n "$v" ]; then
        if [ -z "$b" ]; then echo "$v"; else echo "$v $b" | awk '{printf "%.3f (%+.3f)", $1, $1 - $2}'; fi
    else
        echo "not run: $(why)"
    fi
}
# recall MODEL OPTS...: "correct/trials" of the recall probe in RCTX-token prompts
recall() {
    m=$1
    shift
    if o=$("$BIN/cachet" perplexity -f "$TEXT" --model "$m" --threads "$THREADS" --json --recall "$FACTS" \
        --ctx "$RCTX" --trials "$TRIALS" "$@" 2> "$TMP/err") && [ -n "$o" ]; then
        echo "$(echo "$o" | num correct)/$(echo "$o" | num trials)"
    else
        echo "not run: $(why)"
    fi
}

# A prompt of about DEPTH tokens (speed): the repository's docs, repeated as
# needed, cut at the byte count their token rate predicts.
prompt() {
    cat README.md docs/*.md > "$TMP/text"
    while [ "$(wc -c < "$TMP/text")" -lt $((DEPTH * 8)) ]; do
        cat "$TMP/text" "$TMP/text" > "$TMP/t2"
        mv "$TMP/t2" "$TMP/text"
    done
    bytes=$(wc -c < "$TMP/text")
    toks=$("$BIN/cachet" tokenize --model "$SMOL" --no-special --file "$TMP/text" | wc -w)
    cut=$((bytes * DEPTH / toks))
    head -c "$cut" "$TMP/text" > "$TMP/prompt"
    t1=$("$BIN/cachet" tokenize --model "$SMOL" --no-special --file "$TMP/prompt" | wc -w)
    head -c $((cut * DEPTH / t1)) "$TMP/text" > "$TMP/prompt" # once more at the cut's own rate
}
# speed REPS OPTS...: median decode tok/s (SmolLM2) of REPS generations after
# the DEPTH-token prompt, no prefix reuse
speed() {
    reps=$1
    shift
    : > "$TMP/tps"
    n=0
    while [ $n -lt "$reps" ]; do
        "$BIN/cachet" generate --model "$SMOL" --json --no-cache --temp 0 --max-tokens "$GEN" --threads "$THREADS" \
            --ctx-size $((DEPTH * 11 / 10 + GEN + 64)) "$@" --prompt-file "$TMP/prompt" > "$TMP/out" 2> "$TMP/err" ||
            { echo "failed: $(why)"; return 0; }
        num decode_tps < "$TMP/out" >> "$TMP/tps"
        n=$((n + 1))
    done
    sort -n "$TMP/tps" | awk '{v[NR] = $1} END {printf "%.1f", v[int((NR + 1) / 2)]}'
}

G27=$("$BIN/cachet" kv --preset gemma2-27b --json | num bytes_per_token)
S16=$("$BIN/cachet" kv --model "$SMOL" --json | num bytes_per_token)
# bounded: a sequence of B positions, every layer holding them (f16)
bounded() { # B -> "SmolLM2 bytes | Gemma-2-27B bytes | sequences in 80 GiB"
    echo "$1 $S16 $G27" | awk '{g = $1 * $3; printf "%d x %d = %d per sequence | %d x %d = %.1f MB per sequence | %d sequences", $1, $2, $1 * $2, $1, $3, g / 1e6, 80 * 2^30 / g}'
}
# row TECHNIQUE SETTING BYTES-CELLS PPL-OPTS RECALL-OPTS SPEED-OPTS (opts: "-"
# for a cell that does not apply, with its reason after "-:")
cell_ppl() { # MODEL BASE OPTS-STRING ("=": BASE itself, already run)
    case $3 in
    -:*) echo "${3#-:}" ;;
    =) if [ -n "$2" ]; then printf '%.3f (+0.000)' "$2"; else echo "not run: its baseline failed"; fi ;;
    *) ppl "$1" "$2" $3 ;;
    esac
}
cell_recall() {
    case $2 in -:*) echo "${2#-:}" ;; *) recall "$1" $2 ;; esac
}
row() { # ... BASE-SMOL BASE-GEMMA
    tech=$1 st=$2 bytes=$3 popt=$4 ropt=$5 sopt=$6 bs=$7 bg=$8
    p1=- p2=- r1=- r2=- s=-
    if [ "$QUALITY" = 1 ]; then
        if [ "$PPL_SMOL" = 1 ]; then
            p1=$(cell_ppl "$SMOL" "$bs" "$popt")
            r1=$(cell_recall "$SMOL" "$ropt")
        fi
        if [ -n "$GEMMA" ]; then
            p2=$(cell_ppl "$GEMMA" "$bg" "$popt")
            r2=$(cell_recall "$GEMMA" "$ropt")
        fi
    fi
    if [ "$SPEED" = 1 ]; then
        case $sopt in
        -:*) s=${sopt#-:} ;;
        *-kv-evict* | *-kv-window*) s=$(speed "$EVICT_REPS" $sopt) ;;
        *) s=$(speed "$REPS" $sopt) ;;
        esac
    fi
    echo "| $tech | $st | $bytes | $p1 | $p2 | $r1 | $r2 | $s |"
}

[ "$SPEED" = 0 ] || prompt
# the baselines first: f16's chunked PPL (KV types), the ceiling (bounded caches)
BASE_S= BASE_G= KV_S= KV_G=
CHUNKS="--ctx $KVCTX --chunks $KVCHUNKS"
CEIL="--stream $STREAM --recompute $CTX --stride $STRIDE"
[ "$BASES" = 1 ] || QB=0
if [ "$QUALITY" = 1 ] && [ "$PPL_SMOL" = 1 ] && [ "${QB:-1}" = 1 ]; then
    KV_S=$(ppl "$SMOL" "" $CHUNKS --kv-type f16 | sed 's/^not run.*//')
    BASE_S=$(ppl "$SMOL" "" $CEIL | sed 's/^not run.*//')
fi
if [ "$QUALITY" = 1 ] && [ -n "$GEMMA" ] && [ "${QB:-1}" = 1 ]; then
    KV_G=$(ppl "$GEMMA" "" $CHUNKS --kv-type f16 | sed 's/^not run.*//')
    BASE_G=$(ppl "$GEMMA" "" $CEIL | sed 's/^not run.*//')
fi

echo "| technique | setting | KV bytes/token, SmolLM2 | Gemma-2-27B-shaped (46 x 16 KV heads x 128): bytes | in 80 GiB | PPL (ΔPPL) SmolLM2 | PPL (ΔPPL) Gemma 3 | recall SmolLM2 | recall Gemma 3 | decode tok/s after $DEPTH (SmolLM2) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
# KV types: every position kept
want types || TYPES=
for t in $TYPES; do
    case $t in */*) opt=$(kvt "$t") ;; *) opt="--kv-type $t" ;; esac
    sb=$("$BIN/cachet" kv --model "$SMOL" $opt --json | num bytes_per_token)
    g=$("$BIN/cachet" kv --preset gemma2-27b --memory 80GiB $opt --json)
    cells="$sb | $(echo "$g" | num bytes_per_token) per token | $(echo "$g" | num tokens) tokens ($(echo "$g" | num tokens_window_aware) window-aware)"
    st="every position kept; PPL: $KVCHUNKS chunks of $KVCTX (llama-perplexity's way), Δ vs f16"
    popt="$CHUNKS $opt"
    [ "$t" = f16 ] && popt="="
    row "KV type $t" "$st" "$cells" "$popt" "$opt" "$opt" "$KV_S" "$KV_G"
done
# bounded caches: budget b of CTX for PPL (bytes), the same fraction of RCTX for recall
rb() { echo "$RCTX $1" | awk '{printf "%d", $1 * $2 / 100}'; }
PS="stream $STREAM, Δ vs ceiling"
want window && row "plain window" "100%, no sinks: window $CTX (recall $RCTX); $PS" "$(bounded "$CTX")" \
    "--stream $STREAM --kv-sinks 0 --kv-window $CTX" "--kv-sinks 0 --kv-window $RCTX" \
    "-:as StreamingLLM at 100% (same work)" "$BASE_S" "$BASE_G"
for f in $FRACS; do
    b=$(echo "$CTX $f" | awk '{printf "%d", $1 * $2 / 100}')
    r=$(rb "$f")
    ss="-:at least the 100% row's (a step's work grows with the budget)"
    case " $SPEED_FRACS " in *" $f "*) ss= ;; esac
    want sinks && row "StreamingLLM" "$f%: $SINKS sinks + $((b - SINKS)) window (recall $SINKS + $((r - SINKS))); $PS" \
        "$(bounded "$b")" "--stream $STREAM --kv-sinks $SINKS --kv-window $((b - SINKS))" \
        "--kv-sinks $SINKS --kv-window $((r - SINKS))" "${ss:-"--kv-sinks $SINKS --kv-window $((b - SINKS))"}" \
        "$BASE_S" "$BASE_G"
    want h2o && row "H2O" "$f%: budget $b, $((b / 2)) recent (recall $r, $((r / 2))); $PS" "$(bounded "$b")" \
        "--stream $STREAM --kv-evict h2o --kv-budget-tokens $b" "--kv-evict h2o --kv-budget-tokens $r" \
        "${ss:-"--kv-evict h2o --kv-budget-tokens $b"}" "$BASE_S" "$BASE_G"
done
want ceiling && row "recompute ceiling" "f16, a fresh $CTX-token context every $STRIDE targets; stream $STREAM" \
    "$(bounded "$CTX")" "=" "-:= KV type f16 (a fresh prompt per trial)" "-:evaluates $STRIDE tokens per target: not a decode" "$BASE_S" "$BASE_G"
want mla || MLA=
for p in ${MLA-deepseek-v2-lite deepseek-v3}; do
    k=$("$BIN/cachet" kv --preset "$p" --memory 80GiB --json)
    row "MLA (absorbed latent)" "$p preset (its own shape, not Gemma's)" \
        "- | $(echo "$k" | num bytes_per_token) per token (MHA equivalent $(echo "$k" | num mha_bytes_per_token)) | $(echo "$k" | num tokens) tokens" \
        "-:no PPL: MLA is an architecture (deepseek2 weights), not a cache option; the only deepseek2 file here is tests/synth's random one" \
        "-:-" "-:-" "" ""
done
echo
echo "PPL baselines (f16 chunked; ceiling): SmolLM2 ${KV_S:--}; ${BASE_S:--}, Gemma 3 ${KV_G:--}; ${BASE_G:--}"
echo "stream of $STREAM tokens (targets $CTX..$((STREAM - 1))), recall $TRIALS trials of $RCTX tokens, text $TEXT"
echo "load average during the run: $(uptime | sed 's/.*load average: //')"
