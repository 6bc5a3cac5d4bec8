/* tests/fuzz/fuzz_model.c: libFuzzer target for the model loader and a short
 * forward pass: the input is written to a memfd and opened as a model file
 * (hyperparameters, tensor shapes and types, tokenizer, chat template, the CPU
 * backend), then a 16-token sequence evaluates 3 tokens and one more.
 * Seeds: tests/fuzz/corpus/model (tiny synthetic llama and gemma3 models,
 * tests/synth.h); run with -max_len above the largest seed. Build: make fuzz. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../engine/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* One memfd for the whole run (the harness's only state, like fuzz_lint's
     * compiled patterns): creating one per input would dominate the time. */
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz.gguf", MFD_CLOEXEC)) < 0) abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    eng_model_params mp = {.n_threads = 1, .kv_budget = 4u << 20, .no_disk_cache = 1, .device = "cpu"};
    eng_model *m = NULL;
    if (eng_model_open(&m, path, &mp, NULL) != 0) return 0;
    eng_seq *s = NULL;
    if (eng_seq_new(&s, m, 16, NULL) == 0) {
        int32_t nv = eng_model_n_vocab(m);
        int32_t toks[4] = {0, 1 % nv, (int32_t)(size % (size_t)nv), nv - 1};
        float *logits = malloc((size_t)nv * sizeof *logits);
        if (logits && eng_seq_eval(s, toks, 3, logits, NULL) == 0)
            (void)eng_seq_eval(s, toks + 3, 1, logits, NULL);
        free(logits);
        eng_seq_free(s);
    }
    eng_model_free(m);
    return 0;
}
