/* tests/test_vocabs.c: the tokenizer on real vocabularies (llama.cpp's vocab-only
 * GGUFs, fetched by `make vocabs` into models/vocab/; "skipped" without them).
 * Case inpout: llama.cpp's own test inputs and expected ids (.gguf.inp/.out),
 * every vocabulary. Case golden: our strings (tests/golden/vocabs/NAME.tsv, ids from
 * llama.cpp with and without special-token parsing, detokenized bytes), also for
 * pre-tokenizers put on another vocabulary (VOCAB+PRE).
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
    "llama-bpe",      "qwen2", "qwen35",    "llama-spm", "phi-3",  "gemma-4", "deepseek-llm",
    "deepseek-coder", "gpt-2", "starcoder", "command-r", "falcon", "mpt",     "refact",
};
static const char *const vocabs_unsupported[] = {"bert-bge"};
/* Pre-tokenizers llama.cpp ships no vocabulary for, checked on a vocabulary
 * whose tokenizer.ggml.pre is rewritten (VOCAB+PRE, same length, as
 * tests/golden/vocabs/gen_vocabs.py rewrites it for the reference). */
static const char *const vocab_variants[] = {"falcon+tekken", "falcon+gpt-4o", "falcon+llama4",
                                             "qwen2+hy_v4"};

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

/* Opens NAME, or VOCAB+PRE: VOCAB's file with tokenizer.ggml.pre set to PRE. */
static eng_tokenizer *open_variant(const char *name, util_err *e) {
    const char *plus = strchr(name, '+');
    if (!plus) return open_vocab(name, e);
    char base[64], path[4096];
    snprintf(base, sizeof base, "%.*s", (int)(plus - name), name);
    if (!vocab_path(path, sizeof path, base, "")) return NULL;
    const char *pre = plus + 1;
    uint64_t npre = strlen(pre);
    char *data = NULL;
    size_t len = 0;
    if (util_read_file(&data, &len, path, e)) return NULL;
    static const char key[] = "tokenizer.ggml.pre";
    char *k = memmem(data, len, key, sizeof key - 1);
    eng_tokenizer *t = NULL;
    uint32_t type = 0;
    uint64_t n = 0;
    if (k && (size_t)(k - data) + sizeof key - 1 + 12 + npre <= len) {
        memcpy(&type, k + sizeof key - 1, 4); /* little-endian hosts, as the GGUF */
        memcpy(&n, k + sizeof key - 1 + 4, 8);
    }
    if (type == ENG_GGUF_STRING && n == npre) {
        memcpy(k + sizeof key - 1 + 12, pre, npre);
        eng_gguf *g = NULL;
        if (eng_gguf_open_mem(&g, data, len, name, e) == 0) eng_tokenizer_new(&t, g, e);
        eng_gguf_free(g);
    } else {
        snprintf(e->msg, sizeof e->msg, "%s: no tokenizer.ggml.pre of %d bytes to rewrite", path, (int)npre);
    }
    free(data);
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
            CHECK_MSG(0, "vocab %s: '%.*s': got [%s] want [%s]", name, (int)(len < 60 ? len : 60), p, got,
                      exp);
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

/* --- our strings: tests/golden/vocabs/NAME.tsv ---------------------------------- */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decodes a hex field into out (malloc'd); returns -1 on a malformed field. */
static long unhex(const char *s, size_t n, char **out) {
    *out = malloc(n / 2 + 1);
    if (!*out || n % 2) return -1;
    for (size_t i = 0; i < n; i += 2) {
        int a = hexval(s[i]), b = hexval(s[i + 1]);
        if (a < 0 || b < 0) return -1;
        (*out)[i / 2] = (char)(a * 16 + b);
    }
    return (long)(n / 2);
}

typedef struct gold_stats {
    int lines, ok_special, ok_plain, ok_detok, ok_detok_plain, ok_decode, reported;
} gold_stats;

static int bytes_eq(const char *a, size_t na, const char *b, long nb) {
    return a && (long)na == nb && memcmp(a, b, na) == 0;
}

/* One line: ids with parse_special on and off, the reference ids decoded both
 * ways, and decode(encode(s)) as llama.cpp decodes its own ids. */
static void gold_line(const eng_tokenizer *t, const char *name, char *line, gold_stats *st) {
    char *f[6];
    size_t fl[6];
    int nf = 0;
    for (char *p = line; nf < 6;) {
        char *tab = strchr(p, '\t');
        f[nf] = p;
        fl[nf++] = tab ? (size_t)(tab - p) : strlen(p);
        if (!tab) break;
        p = tab + 1;
    }
    CHECK_MSG(nf == 6, "golden %s: line %d has %d fields", name, st->lines + 1, nf);
    if (nf != 6) return;
    char *in = NULL, *d1 = NULL, *d2 = NULL;
    long nin = unhex(f[0], fl[0], &in), nd1 = unhex(f[3], fl[3], &d1), nd2 = unhex(f[4], fl[4], &d2);
    size_t cap = fl[1] + fl[2] + 2;
    int32_t *want_sp = malloc(cap * sizeof *want_sp), *want_pl = malloc(cap * sizeof *want_pl);
    CHECK_MSG(nin >= 0 && nd1 >= 0 && nd2 >= 0 && want_sp && want_pl, "golden %s: bad line %d", name,
              st->lines + 1);
    if (nin < 0 || nd1 < 0 || nd2 < 0 || !want_sp || !want_pl) goto done;
    size_t nsp = parse_ids(f[1], fl[1], want_sp, cap), npl = parse_ids(f[2], fl[2], want_pl, cap);
    st->lines++;
    util_err e;
    for (int ps = 1; ps >= 0; ps--) {
        int32_t *ids = NULL;
        size_t n = 0;
        int rc = eng_tokenize(t, in, (size_t)nin, 0, ps, &ids, &n, &e);
        int ok = rc == 0 && th_ids_equal(ids, n, ps ? want_sp : want_pl, ps ? nsp : npl);
        if (ok) {
            check_pass();
            *(ps ? &st->ok_special : &st->ok_plain) += 1;
        } else if (st->reported++ < 5) {
            char got[1024], exp[1024];
            th_ids_str(got, sizeof got, ids, n);
            th_ids_str(exp, sizeof exp, ps ? want_sp : want_pl, ps ? nsp : npl);
            CHECK_MSG(0, "golden %s [%.*s] %.40s parse_special=%d: got [%s] want [%s]", name, (int)fl[5],
                      f[5], f[0], ps, got, exp);
        } else {
            check_get()->failed++;
        }
        if (ps && rc == 0) {
            char *d = NULL;
            size_t dl = 0;
            eng_detokenize(t, ids, n, 1, &d, &dl, &e);
            int ok3 = bytes_eq(d, dl, d1, nd1);
            free(d);
            st->ok_decode += ok3;
            CHECK_MSG(ok3, "golden %s: decode(encode(s)) differs from llama.cpp's on line %d (%.40s)", name,
                      st->lines, f[0]);
        }
        free(ids);
    }
    for (int rs = 1; rs >= 0; rs--) {
        char *d = NULL;
        size_t dl = 0;
        eng_detokenize(t, want_sp, nsp, rs, &d, &dl, &e);
        int ok = bytes_eq(d, dl, rs ? d1 : d2, rs ? nd1 : nd2);
        free(d);
        *(rs ? &st->ok_detok : &st->ok_detok_plain) += ok;
        CHECK_MSG(ok, "golden %s: detokenize(render_special=%d) of line %d (%.40s)", name, rs, st->lines,
                  f[0]);
    }
done:
    free(in);
    free(d1);
    free(d2);
    free(want_sp);
    free(want_pl);
}

static void test_golden(void) {
    int any = 0;
    size_t nvar = sizeof vocab_variants / sizeof vocab_variants[0];
    for (size_t v = 0; v < N_SUPPORTED + nvar; v++) {
        const char *name = v < N_SUPPORTED ? vocabs_supported[v] : vocab_variants[v - N_SUPPORTED];
        char gpath[4096], vpath[4096], base[64];
        snprintf(gpath, sizeof gpath, "%s/tests/golden/vocabs/%s.tsv", check_root(), name);
        snprintf(base, sizeof base, "%.*s", (int)strcspn(name, "+"), name);
        vocab_path(vpath, sizeof vpath, base, "");
        if (!file_exists(vpath)) continue;
        any = 1;
        char *data = NULL;
        size_t len = 0;
        util_err e;
        int rc = util_read_file(&data, &len, gpath, &e);
        CHECK_MSG(rc == 0, "golden %s: %s", name, e.msg);
        eng_tokenizer *t = rc ? NULL : open_variant(name, &e);
        CHECK_MSG(rc || t, "vocab %s: %s", name, e.msg);
        gold_stats st;
        memset(&st, 0, sizeof st);
        for (char *line = t ? data : NULL; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            if (*line && *line != '#') gold_line(t, name, line, &st);
            line = nl ? nl + 1 : NULL;
        }
        if (t) {
            CHECK_MSG(st.lines >= 300, "golden %s: only %d strings", name, st.lines);
            fprintf(stderr,
                    "vocabs: %-15s ours: ids %d/%d (parse_special on) %d/%d (off); detokenize %d/%d "
                    "rendered %d/%d plain; decode(encode) %d/%d\n",
                    name, st.ok_special, st.lines, st.ok_plain, st.lines, st.ok_detok, st.lines,
                    st.ok_detok_plain, st.lines, st.ok_decode, st.lines);
        }
        eng_tokenizer_free(t);
        free(data);
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
    CHECK_CASE(golden) test_golden();
    CHECK_CASE(unsupported) test_unsupported();
}
