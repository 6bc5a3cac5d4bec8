#!/usr/bin/env bash
# Regenerate every golden file in tests/golden/ from the reference implementation.
# CI never runs this: it only reads the committed outputs. See README.md for the setup.
#
# usage: tests/golden/regen.sh [MODEL.gguf]
# env:   MODEL          model path (default: <repo>/models/SmolLM2-135M-Instruct.Q4_1.gguf)
#        LLAMA_CPP_DIR  llama.cpp cmake build dir with bin/llama-tokenize (default /opt/ref/llama.cpp-build)
#        LLAMA_CPP_SRC  llama.cpp source tree (default: vendor tree of the llama-cpp-python sdist)
#        PYTHON         python interpreter with llama_cpp, gguf, numpy (default: python3)
#        GOLDEN_SKIP_FA_CHECK=1  skip the informational flash-attention comparison in gen_logits.py
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
MODEL="${1:-${MODEL:-$REPO/models/SmolLM2-135M-Instruct.Q4_1.gguf}}"
LLAMA_CPP_DIR="${LLAMA_CPP_DIR:-/opt/ref/llama.cpp-build}"
LLAMA_CPP_SRC="${LLAMA_CPP_SRC:-/opt/ref/src/llama_cpp_python-0.3.36/vendor/llama.cpp}"
PYTHON="${PYTHON:-python3}"
EXPECTED_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

[ -f "$MODEL" ] || { echo "regen.sh: model not found: $MODEL" >&2; exit 1; }
SHA="$(sha256sum "$MODEL" | cut -d' ' -f1)"
if [ "$SHA" != "$EXPECTED_SHA" ]; then
    echo "regen.sh: WARNING: $MODEL sha256 $SHA != expected $EXPECTED_SHA" >&2
    echo "regen.sh: the committed goldens describe the expected file; refusing to overwrite them" >&2
    exit 1
fi

cd "$HERE"
echo "== gen_metadata.py"
"$PYTHON" gen_metadata.py "$MODEL" metadata_smollm2.txt
echo "== gen_quant.py"
"$PYTHON" gen_quant.py "$MODEL" .
if [ -f "$LLAMA_CPP_DIR/bin/libggml-base.so" ] && [ -f "$LLAMA_CPP_SRC/ggml/include/ggml.h" ]; then
    echo "== check_ggml_dequant.py (optional)"
    "$PYTHON" check_ggml_dequant.py . "$LLAMA_CPP_SRC" "$LLAMA_CPP_DIR"
fi
echo "== gen_tokenizer.py"
TOKBIN="$LLAMA_CPP_DIR/bin/llama-tokenize"
if [ -x "$TOKBIN" ]; then
    "$PYTHON" gen_tokenizer.py "$MODEL" tokenizer_smollm2.tsv "$TOKBIN"
else
    echo "regen.sh: $TOKBIN not found: skipping the llama-tokenize cross-check" >&2
    "$PYTHON" gen_tokenizer.py "$MODEL" tokenizer_smollm2.tsv
fi
echo "== gen_logits.py"
"$PYTHON" gen_logits.py "$MODEL" .
echo "== gen_float_ref.py (numpy float64 forward pass, f16 KV; needs logits_index.tsv)"
"$PYTHON" gen_float_ref.py "$MODEL" .
echo "== gen_spread.py (llama.cpp flash attention on vs off)"
"$PYTHON" gen_spread.py "$MODEL" .
echo "== gen_chat.py (jinja2 renderings of the real chat templates; the templates are not committed)"
CHAT_TPL="$(mktemp -d)"
"$PYTHON" gen_chat.py extract "$LLAMA_CPP_SRC/../.." "$CHAT_TPL" "$MODEL"
"$PYTHON" gen_chat.py generate "$CHAT_TPL" chat/renderings.json
rm -rf "$CHAT_TPL"
echo "== sizes"
rm -rf "$HERE/__pycache__"
du -ch "$HERE"/* | tail -1
