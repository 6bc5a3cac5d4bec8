/* tests/golden/gemma3/llama_logits.c: a small harness over llama.cpp's C API
 * (libllama) that produces the gemma3 golden logits. Not part of the cachet
 * build: gen_logits.py compiles it against a llama.cpp build (LLAMA_CPP_DIR)
 * and runs it; CI only reads the files it wrote.
 *
 * usage: llama_logits MODEL PROMPTS OUTDIR SUFFIX FA THREADS
 *   PROMPTS: lines "name<TAB>hex of the prompt text"; each is tokenized by
 *   llama.cpp (add_special on: BOS, parse_special on), evaluated in batches of
 *   512 (n_ctx 4096, f16 KV, flash attention FA = 0 off / 1 on), and its
 *   last-position logits written to OUTDIR/logits_<name><SUFFIX>.f32; then 64
 *   greedy tokens (argmax, lowest id on ties, no stop at end of generation) are
 *   fed back one at a time. Prints one line per prompt:
 *   name<TAB>prompt ids<TAB>greedy ids<TAB>top1-top2 margin per greedy step */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

enum { N_GEN = 64, N_BATCH = 512, N_CTX = 4096 };

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

static void top2(const float *lg, int nv, int *best, float *margin) {
    int b = 0;
    for (int i = 1; i < nv; i++)
        if (lg[i] > lg[b]) b = i;
    float second = -1e30f;
    for (int i = 0; i < nv; i++)
        if (i != b && lg[i] > second) second = lg[i];
    *best = b;
    *margin = lg[b] - second;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: llama_logits MODEL PROMPTS OUTDIR SUFFIX FA THREADS\n");
        return 2;
    }
    const char *outdir = argv[3], *suffix = argv[4];
    int fa = (int)strtol(argv[5], NULL, 10), threads = (int)strtol(argv[6], NULL, 10);
    llama_backend_init();
    llama_log_set(NULL, NULL);
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    int nv = llama_vocab_n_tokens(vocab);
    FILE *pf = fopen(argv[2], "r");
    if (!pf) return 1;
    static char line[1 << 20];
    while (fgets(line, sizeof line, pf)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = '\0';
        const char *hex = tab + 1;
        size_t hl = strcspn(hex, "\r\n");
        char *text = malloc(hl / 2 + 1);
        for (size_t i = 0; i + 1 < hl; i += 2) text[i / 2] = (char)(hexval(hex[i]) * 16 + hexval(hex[i + 1]));
        int tl = (int)(hl / 2);
        int n = -llama_tokenize(vocab, text, tl, NULL, 0, true, true);
        llama_token *ids = malloc(((size_t)n + N_GEN) * sizeof *ids);
        if (llama_tokenize(vocab, text, tl, ids, n, true, true) != n) return 1;
        struct llama_context_params cp = llama_context_default_params();
        cp.n_ctx = N_CTX;
        cp.n_batch = N_BATCH;
        cp.n_ubatch = N_BATCH;
        cp.n_threads = threads;
        cp.n_threads_batch = threads;
        cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
        cp.no_perf = true;
        struct llama_context *ctx = llama_init_from_model(model, cp);
        if (!ctx) return 1;
        for (int done = 0; done < n; done += N_BATCH) {
            int k = n - done < N_BATCH ? n - done : N_BATCH;
            if (llama_decode(ctx, llama_batch_get_one(ids + done, k))) return 1;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/logits_%s%s.f32", outdir, line, suffix);
        FILE *of = fopen(path, "wb");
        if (!of || fwrite(llama_get_logits_ith(ctx, -1), sizeof(float), (size_t)nv, of) != (size_t)nv)
            return 1;
        fclose(of);
        printf("%s\t", line);
        for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
        int gen[N_GEN];
        float margin[N_GEN];
        for (int g = 0; g < N_GEN; g++) {
            top2(llama_get_logits_ith(ctx, -1), nv, &gen[g], &margin[g]);
            if (g + 1 < N_GEN && llama_decode(ctx, llama_batch_get_one(&gen[g], 1))) return 1;
        }
        printf("\t");
        for (int g = 0; g < N_GEN; g++) printf(g ? " %d" : "%d", gen[g]);
        printf("\t");
        for (int g = 0; g < N_GEN; g++) printf(g ? " %.4f" : "%.4f", margin[g]);
        printf("\n");
        fflush(stdout);
        llama_free(ctx);
        free(ids);
        free(text);
    }
    fclose(pf);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
