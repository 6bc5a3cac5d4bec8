/* tests/golden/gemma3/llama_tok.c: a small harness over llama.cpp's C API
 * (libllama) that produces the gemma3 tokenizer goldens. Not part of the
 * cachet build: gen_tokenizer.py compiles it against a llama.cpp build and
 * runs it; CI only reads the file it wrote.
 *
 * usage: llama_tok MODEL < lines of hex input
 *   per line prints: ids (add_special off, parse_special on) TAB ids
 *   (parse_special off) TAB hex of llama_detokenize(ids with parse_special on,
 *   remove_special off, unparse_special on) TAB the same with unparse_special
 *   off; ids are space-separated decimals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static int hexval(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

static llama_token *tokenize(const struct llama_vocab *v, const char *text, int len, int special, int *n) {
    int k = -llama_tokenize(v, text, len, NULL, 0, false, special != 0);
    if (k < 0) k = 0;
    llama_token *ids = malloc(((size_t)k + 1) * sizeof *ids);
    if (k && llama_tokenize(v, text, len, ids, k, false, special != 0) != k) exit(1);
    *n = k;
    return ids;
}

static void print_ids(const llama_token *ids, int n) {
    for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", ids[i]);
}

static void print_detok(const struct llama_vocab *v, const llama_token *ids, int n, int unparse) {
    int cap = 64 + 64 * n;
    char *buf = malloc((size_t)cap);
    int r = llama_detokenize(v, ids, n, buf, cap, false, unparse != 0);
    if (r < 0) {
        cap = -r + 1;
        buf = realloc(buf, (size_t)cap);
        r = llama_detokenize(v, ids, n, buf, cap, false, unparse != 0);
    }
    if (r < 0) exit(1);
    for (int i = 0; i < r; i++) printf("%02x", (unsigned char)buf[i]);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: llama_tok MODEL < hex lines\n");
        return 2;
    }
    llama_backend_init();
    llama_log_set(NULL, NULL);
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        size_t hl = strcspn(line, "\r\n");
        char *text = malloc(hl / 2 + 1);
        for (size_t i = 0; i + 1 < hl; i += 2)
            text[i / 2] = (char)(hexval(line[i]) * 16 + hexval(line[i + 1]));
        int tl = (int)(hl / 2), na, nb;
        llama_token *a = tokenize(vocab, text, tl, 1, &na), *b = tokenize(vocab, text, tl, 0, &nb);
        print_ids(a, na);
        printf("\t");
        print_ids(b, nb);
        printf("\t");
        print_detok(vocab, a, na, 1);
        printf("\t");
        print_detok(vocab, a, na, 0);
        printf("\n");
        fflush(stdout);
        free(a);
        free(b);
        free(text);
    }
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
