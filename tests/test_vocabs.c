/* tests/test_vocabs.c: the tokenizer on real vocabularies (llama.cpp's vocab-only
 * GGUFs, fetched by `make vocabs` into models/vocab/; "skipped" without them).
 * Case inpout: llama.cpp's own test inputs and expected ids (.gguf.inp/.out),
 * every vocabulary. Case golden: our strings (tests/golden/vocabs/NAME.tsv, ids from
 * llama.cpp with and without special-token parsing, detokenized bytes).
 * Prints a count per vocabulary. Does not run models. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/gguf.h"
#include "../engine/tokenizer.h"
#include "../util/fs.h"
#include "check.h"
#include "helpers.h"

/* The vocabularies that must pass 100%, and those llama.cpp ships that cachet
 * does not tokenize (WordPiece and friends): they must fail cleanly. */
static const char *const vocabs_supported[] = {
    "llama-bpe", "qwen2", "qwen35", "llama-spm", "phi-3", "gemma-4", "deepseek-llm",
    "deepseek-coder", "gpt-2", "starcoder", "command-r", "falcon", "mpt", "refact",
};
static const char *const vocabs_unsupported[] = {"bert-bge"};

#define N_SUPPORTED (sizeof vocabs_supported / sizeof vocabs_supported[0])

static int vocab_path(char *out, size_t cap, const char *name, const char *ext) {
    int n = snprintf(out, cap, "%s/models/vocab/ggml-vocab-%s.gguf%s", check_root(), name, ext);
    return n > 0 && (size_t)n < cap;
}

static int file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static eng_tokenizer *open_vocab(const char *name, util_err *e) {
    char path[4096];
    if (!vocab_path(path, sizeof path, name, "")) return NULL;
    eng_gguf *g = NULL;
    if (eng_gguf_open(&g, path, e)) return NULL;
    eng_tokenizer *t = NULL;
    eng_tokenizer_new(&t, g, e);
    eng_gguf_free(g);
    return t;
}

static size_t parse_ids(const char *s, size_t n, int32_t *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        while (i < n && (s[i] == ' ' || s[i] == '\r')) i++;
        if (i >= n) break;
        long v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
        if (i < n && s[i] != ' ' && s[i] != '\r') i++; /* not a digit: skip it */
        out[k++] = (int32_t)v;
    }
    return k;
}

/* --- llama.cpp's .inp/.out ----------------------------------------------------- */

/* Runs one vocabulary's tests the way llama.cpp's test-tokenizer-0 does (no
 * BOS/EOS, no special-token parsing); returns the number passed, *total the count. */
static int inpout_vocab(const char *name, int *total) {
    char pin[4096], pout[4096];
    *total = 0;
    if (!vocab_path(pin, sizeof pin, name, ".inp") || !vocab_path(pout, sizeof pout, name, ".out")) return 0;
    char *inp = NULL, *outs = NULL;
    size_t ninp = 0, nout = 0;
    util_err e;
    if (util_read_file(&inp, &ninp, pin, &e) || util_read_file(&outs, &nout, pout, &e)) {
        CHECK_MSG(0, "vocab %s: %s", name, e.msg);
        free(inp);
        free(outs);
        return 0;
    }
    eng_tokenizer *t = open_vocab(name, &e);
    CHECK_MSG(t != NULL, "vocab %s: %s", name, e.msg);
    int passed = 0, reported = 0;
    static const char sep[] = "\n__ggml_vocab_test__\n";
    const char *p = inp, *end = inp + ninp, *line = outs, *oend = outs + nout;
    while (t && p < end) {
        const char *next = strstr(p, sep); /* the .inp files hold no NUL bytes */
        size_t len = next ? (size_t)(next - p) : (size_t)(end - p);
        const char *nl = memchr(line, '\n', (size_t)(oend - line));
        size_t ll = nl ? (size_t)(nl - line) : (size_t)(oend - line);
        if (line >= oend) {
            CHECK_MSG(0, "vocab %s: more inputs than expected outputs", name);
            break;
        }
        int32_t want[4096];
        size_t nw = parse_ids(line, ll, want, 4096);
        int32_t *ids = NULL;
        size_t n = 0;
        int rc = eng_tokenize(t, p, len, 0, 0, &ids, &n, &e);
        (*total)++;
        if (rc == 0 && th_ids_equal(ids, n, want, nw)) {
            passed++;
            check_pass();
        } else if (reported++ < 5) {
            char got[1024], exp[1024];
            th_ids_str(got, sizeof got, ids, n);
            th_ids_str(exp, sizeof exp, want, nw);
            CHECK_MSG(0, "vocab %s: '%.*s': got [%s] want [%s]", name, (int)(len < 60 ? len : 60), p,
                      got, exp);
        } else {
            check_get()->failed++;
        }
        free(ids);
        line = nl ? nl + 1 : oend;
        p = next ? next + sizeof sep - 1 : end;
    }
    eng_tokenizer_free(t);
    free(inp);
    free(outs);
    return passed;
}

static void test_inpout(void) {
    int any = 0;
    for (size_t v = 0; v < N_SUPPORTED; v++) {
        char path[4096];
        vocab_path(path, sizeof path, vocabs_supported[v], ".inp");
        if (!file_exists(path)) continue;
        any = 1;
        int total = 0, passed = inpout_vocab(vocabs_supported[v], &total);
        CHECK_MSG(total > 0, "vocab %s: no tests read", vocabs_supported[v]);
        fprintf(stderr, "vocabs: %-15s llama.cpp .inp/.out %3d/%3d\n", vocabs_supported[v], passed, total);
    }
    if (!any) CHECK_SKIP("no vocabularies in models/vocab/ (run `make vocabs`)");
}

/* A vocabulary cachet cannot tokenize says so by name instead of guessing. */
static void test_unsupported(void) {
    for (size_t v = 0; v < sizeof vocabs_unsupported / sizeof vocabs_unsupported[0]; v++) {
        char path[4096];
        vocab_path(path, sizeof path, vocabs_unsupported[v], "");
        if (!file_exists(path)) {
            CHECK_SKIP("%s absent (run `make vocabs`)", path);
            continue;
        }
        util_err e;
        eng_tokenizer *t = open_vocab(vocabs_unsupported[v], &e);
        CHECK(t == NULL);
        CHECK_MSG(t == NULL && strstr(e.msg, "not supported"), "vocab %s: %s", vocabs_unsupported[v], e.msg);
        eng_tokenizer_free(t);
    }
}

void test_vocabs(void) {
    CHECK_CASE(inpout) test_inpout();
    CHECK_CASE(unsupported) test_unsupported();
}
