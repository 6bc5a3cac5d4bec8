// tests/golden/archs/llama_logits_ref.cpp: the llama.cpp side of the
// architecture goldens. Loads one model with libllama (CPU, flash attention
// off, 1 thread), runs the given prompt ids as one batch, writes the last
// position's logits (float32[n_vocab]) to OUT and prints one line: the greedy
// continuation of N tokens (one decode per token) and each step's top1-top2
// margin. Built and run only by gen_archs.py; not part of cachet's build.
// Usage: llama_logits_ref MODEL OUT N ID...
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "llama.h"

static void quiet(enum ggml_log_level, const char *, void *) {}

static int argmax(const float *l, int n, float *margin) {
    int b = 0, s = -1;
    for (int i = 1; i < n; i++)
        if (l[i] > l[b]) b = i;
    for (int i = 0; i < n; i++)
        if (i != b && (s < 0 || l[i] > l[s])) s = i;
    *margin = l[b] - l[s];
    return b;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: llama_logits_ref MODEL OUT N ID...\n");
        return 2;
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    int n_gen = atoi(argv[3]);
    std::vector<llama_token> ids;
    for (int i = 4; i < argc; i++) ids.push_back((llama_token)strtol(argv[i], nullptr, 10));
    if (llama_decode(ctx, llama_batch_get_one(ids.data(), (int32_t)ids.size()))) return 1;
    const float *l = llama_get_logits_ith(ctx, -1);
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(l, sizeof(float), (size_t)n_vocab, f) != (size_t)n_vocab || fclose(f)) return 1;
    std::vector<int> gen;
    std::vector<float> margins;
    for (int k = 0; k < n_gen; k++) {
        float m;
        llama_token t = argmax(l, n_vocab, &m);
        gen.push_back(t);
        margins.push_back(m);
        if (llama_decode(ctx, llama_batch_get_one(&t, 1))) return 1;
        l = llama_get_logits_ith(ctx, -1);
    }
    for (size_t i = 0; i < gen.size(); i++) printf("%s%d", i ? " " : "", gen[i]);
    printf("\t");
    for (size_t i = 0; i < margins.size(); i++) printf("%s%.4f", i ? " " : "", (double)margins[i]);
    printf("\n");
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
