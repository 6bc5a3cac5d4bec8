/* tests/test_tokenizer.c: the tokenizer. On the real SmolLM2 model: every line
 * of tests/golden/tokenizer_smollm2.tsv (llama.cpp ids with parse_special on
 * and off, detokenized bytes), the spec's vectors, EOG ids, round trips,
 * streaming decode and speed. On hand-built GGUF vocabularies: the
 * SentencePiece path (merges by score, byte fallback, space prefix, specials).
 * The pre-tokenizers of pretok.c on hand-worked examples. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/gguf.h"
#include "../engine/pretok.h"
#include "../engine/tokenizer.h"
#include "../engine/unicode.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"
#include "helpers.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- a tiny GGUF writer for toy vocabularies ------------------------------- */

typedef struct gw {
    util_buf b;
    uint64_t nkv;
} gw;

static void gw_raw(gw *w, const void *p, size_t n) { util_buf_append(&w->b, p, n); }
static void gw_u32v(gw *w, uint32_t v) { gw_raw(w, &v, 4); } /* little-endian hosts only */
static void gw_u64v(gw *w, uint64_t v) { gw_raw(w, &v, 8); }
static void gw_strv(gw *w, const char *s) {
    gw_u64v(w, strlen(s));
    gw_raw(w, s, strlen(s));
}

static void gw_begin(gw *w) {
    util_buf_init(&w->b);
    w->nkv = 0;
    gw_raw(w, "GGUF", 4);
    gw_u32v(w, 3);
    gw_u64v(w, 0); /* tensors */
    gw_u64v(w, 0); /* kv count, patched in gw_end */
}

static void gw_key(gw *w, const char *k, uint32_t type) {
    gw_strv(w, k);
    gw_u32v(w, type);
    w->nkv++;
}

static void gw_str(gw *w, const char *k, const char *v) {
    gw_key(w, k, ENG_GGUF_STRING);
    gw_strv(w, v);
}

static void gw_u32(gw *w, const char *k, uint32_t v) {
    gw_key(w, k, ENG_GGUF_U32);
    gw_u32v(w, v);
}

static void gw_bool(gw *w, const char *k, int v) {
    gw_key(w, k, ENG_GGUF_BOOL);
    unsigned char c = (unsigned char)(v != 0);
    gw_raw(w, &c, 1);
}

static void gw_strs(gw *w, const char *k, const char *const *v, size_t n) {
    gw_key(w, k, ENG_GGUF_ARRAY);
    gw_u32v(w, ENG_GGUF_STRING);
    gw_u64v(w, n);
    for (size_t i = 0; i < n; i++) gw_strv(w, v[i]);
}

static void gw_i32s(gw *w, const char *k, const int32_t *v, size_t n) {
    gw_key(w, k, ENG_GGUF_ARRAY);
    gw_u32v(w, ENG_GGUF_I32);
    gw_u64v(w, n);
    gw_raw(w, v, n * 4);
}

static void gw_f32s(gw *w, const char *k, const float *v, size_t n) {
    gw_key(w, k, ENG_GGUF_ARRAY);
    gw_u32v(w, ENG_GGUF_F32);
    gw_u64v(w, n);
    gw_raw(w, v, n * 4);
}

static void gw_end(gw *w) { memcpy(w->b.data + 16, &w->nkv, 8); }

/* --- helpers ----------------------------------------------------------------- */

/* Encodes s and compares with want (n ids); reports the input on mismatch. */
static void expect_ids(const eng_tokenizer *t, const char *s, size_t len, int add_special, int parse_special,
                       const int32_t *want, size_t nwant) {
    util_err e;
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = eng_tokenize(t, s, len, add_special, parse_special, &ids, &n, &e);
    char got[512], exp[512];
    th_ids_str(got, sizeof got, ids, n);
    th_ids_str(exp, sizeof exp, want, nwant);
    CHECK_MSG(rc == 0 && th_ids_equal(ids, n, want, nwant),
              "encode '%.*s' (special %d/%d): got [%s] want [%s]", (int)len, s, add_special, parse_special,
              got, exp);
    free(ids);
}

#define EXPECT(t, s, ...)                                                             \
    do {                                                                              \
        const int32_t want_[] = {__VA_ARGS__};                                        \
        expect_ids((t), (s), strlen(s), 0, 1, want_, sizeof want_ / sizeof want_[0]); \
    } while (0)

static int32_t find(const eng_tokenizer *t, const char *s) { return eng_tokenizer_find(t, s, strlen(s)); }

static int utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        int k = eng_utf8_check(s + i, n - i);
        if (k <= 0) return 0;
        i += (size_t)k;
    }
    return 1;
}

/* Feeds pieces one token at a time (and each piece cut into single bytes) and
 * checks every chunk that comes out is whole UTF-8 and the total is right. */
static void check_stream(const eng_tokenizer *t, const int32_t *ids, size_t n, const char *want, size_t wlen,
                         int bytewise) {
    eng_detok_stream st;
    eng_detok_stream_init(&st);
    util_buf all;
    util_buf_init(&all);
    int whole = 1;
    for (size_t i = 0; i < n; i++) {
        const char *p;
        size_t pl;
        eng_token_piece(t, ids[i], 0, &p, &pl);
        size_t step = bytewise ? 1 : (pl ? pl : 1);
        for (size_t o = 0; o < pl || (o == 0 && pl == 0); o += step) {
            size_t m = pl - o < step ? pl - o : step;
            char out[64];
            size_t w = eng_detok_stream_feed(&st, p + o, m, out);
            whole &= utf8_valid((const unsigned char *)out, w);
            util_buf_append(&all, out, w);
            if (pl == 0) break;
        }
    }
    char out[16];
    size_t w = eng_detok_stream_flush(&st, out);
    util_buf_append(&all, out, w);
    util_buf_append(&all, "", 0);
    CHECK_MSG(whole, "stream emitted a partial character for '%s'", want);
    CHECK_MSG(all.len == wlen && memcmp(all.data, want, wlen) == 0, "stream output '%s' != '%s'", all.data,
              want);
    util_buf_release(&all);
}

/* --- golden data -------------------------------------------------------------- */

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
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
    (*out)[n / 2] = '\0';
    return (long)(n / 2);
}

static size_t parse_ids(const char *s, size_t n, int32_t *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        while (i < n && s[i] == ' ') i++;
        if (i >= n) break;
        long v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
        out[k++] = (int32_t)v;
    }
    return k;
}

typedef struct golden_stats {
    int lines, ok_special, ok_plain, ok_detok, ok_detok_plain, valid_utf8, ok_roundtrip, ref_lossy;
} golden_stats;

static void golden_line(const eng_tokenizer *t, char *line, golden_stats *st, int *reported) {
    char *f[6];
    size_t fl[6];
    int nf = 0;
    char *p = line;
    while (nf < 6) {
        char *tab = strchr(p, '\t');
        f[nf] = p;
        fl[nf] = tab ? (size_t)(tab - p) : strlen(p);
        nf++;
        if (!tab) break;
        p = tab + 1;
    }
    CHECK_MSG(nf == 6, "golden: line with %d fields", nf);
    if (nf != 6) return;
    char *in = NULL, *d1 = NULL, *d2 = NULL;
    long nin = unhex(f[0], fl[0], &in), nd1 = unhex(f[3], fl[3], &d1), nd2 = unhex(f[4], fl[4], &d2);
    CHECK_MSG(nin >= 0 && nd1 >= 0 && nd2 >= 0, "golden: bad hex in line %d", st->lines + 1);
    size_t cap = (size_t)(nin > 0 ? nin : 1) * 4 + 16;
    int32_t *want_sp = malloc(cap * sizeof *want_sp), *want_pl = malloc(cap * sizeof *want_pl);
    if (nin < 0 || nd1 < 0 || nd2 < 0 || !want_sp || !want_pl) goto done;
    size_t nsp = parse_ids(f[1], fl[1], want_sp, cap), npl = parse_ids(f[2], fl[2], want_pl, cap);
    st->lines++;
    util_err e;
    for (int ps = 1; ps >= 0; ps--) {
        int32_t *ids = NULL;
        size_t n = 0;
        int rc = eng_tokenize(t, in, (size_t)nin, 0, ps, &ids, &n, &e);
        const int32_t *want = ps ? want_sp : want_pl;
        size_t nw = ps ? nsp : npl;
        int ok = rc == 0 && th_ids_equal(ids, n, want, nw);
        if (ok) {
            check_get()->passed++;
            if (ps)
                st->ok_special++;
            else
                st->ok_plain++;
        } else if ((*reported)++ < 20) {
            char got[2048], exp[2048];
            th_ids_str(got, sizeof got, ids, n);
            th_ids_str(exp, sizeof exp, want, nw);
            CHECK_MSG(0, "golden [%.*s] %.60s... parse_special=%d: got [%s] want [%s]", (int)fl[5], f[5],
                      f[0], ps, got, exp);
        } else {
            check_get()->failed++;
        }
        if (ps) { /* decode the reference ids both ways */
            char *d;
            size_t dl;
            eng_detokenize(t, want_sp, nsp, 1, &d, &dl, &e);
            int ok1 = d && (long)dl == nd1 && memcmp(d, d1, dl) == 0;
            free(d);
            eng_detokenize(t, want_sp, nsp, 0, &d, &dl, &e);
            int ok2 = d && (long)dl == nd2 && memcmp(d, d2, dl) == 0;
            free(d);
            st->ok_detok += ok1;
            st->ok_detok_plain += ok2;
            CHECK_MSG(ok1 && ok2, "golden detokenize of line %d (%.40s)", st->lines, f[0]);
            /* round trip: decode(encode(s)) is what llama.cpp decodes to, and
             * s itself unless the vocabulary has no token for some byte (SmolLM2
             * lacks a few control bytes and F1/F2 lead bytes: llama.cpp drops them) */
            eng_detokenize(t, ids, n, 1, &d, &dl, &e);
            int ok3 = d && (long)dl == nd1 && memcmp(d, d1, dl) == 0;
            int ok4 = d && (long)dl == nin && memcmp(d, in, dl) == 0;
            free(d);
            CHECK_MSG(ok3, "decode(encode(s)) differs from llama.cpp's on line %d (%.40s)", st->lines, f[0]);
            if (utf8_valid((const unsigned char *)in, (size_t)nin)) {
                st->valid_utf8++;
                int ref_ok = nd1 == nin && memcmp(d1, in, (size_t)nin) == 0;
                st->ok_roundtrip += ok4;
                st->ref_lossy += !ref_ok;
                CHECK_MSG(ok4 || !ref_ok, "round trip of golden line %d (%.40s)", st->lines, f[0]);
            }
        }
        free(ids);
    }
done:
    free(in);
    free(d1);
    free(d2);
    free(want_sp);
    free(want_pl);
}

void th_tokenizer_golden(const eng_tokenizer *t, const char *name, int min_lines) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/golden/%s", check_root(), name);
    char *data = NULL;
    size_t len = 0;
    util_err e;
    int rc = util_read_file(&data, &len, path, &e);
    CHECK_MSG(rc == 0, "golden file missing: %s", e.msg);
    if (rc) return;
    golden_stats st;
    memset(&st, 0, sizeof st);
    int reported = 0;
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (*line && *line != '#') golden_line(t, line, &st, &reported);
        line = nl ? nl + 1 : NULL;
    }
    CHECK_MSG(st.lines >= min_lines, "golden: only %d lines", st.lines);
    fprintf(stderr,
            "tokenizer: %s: golden %d/%d (parse_special on) %d/%d (off) agree with llama.cpp; "
            "detokenize %d/%d rendered, %d/%d plain; round trip %d/%d valid-UTF-8 inputs "
            "(%d lose bytes in llama.cpp too: no token for them)\n",
            name, st.ok_special, st.lines, st.ok_plain, st.lines, st.ok_detok, st.lines, st.ok_detok_plain,
            st.lines, st.ok_roundtrip, st.valid_utf8, st.ref_lossy);
    free(data);
}

/* --- the real model -------------------------------------------------------------- */

static void test_spec_vectors(const eng_tokenizer *t) {
    /* llama.cpp models/ggml-vocab-smollm.gguf.out (spec section 5) */
    EXPECT(t, "ied 4 \xc2\xbd months", 885, 216, 36, 216, 16738, 2704);
    EXPECT(t, "F\xc3\xbchrer", 54, 46991, 16863);
    EXPECT(t, " ", 216);
    EXPECT(t, "  ", 256);
    EXPECT(t, "   ", 333);
    EXPECT(t, "\t", 197);
    EXPECT(t, "\n", 198);
    EXPECT(t, "\n\n", 1116);
    EXPECT(t, "\n\n\n", 16506);
    EXPECT(t, "\t\n", 197, 198);
    EXPECT(t, "Hello world", 19556, 905);
    EXPECT(t, " Hello world", 38699, 905);
    EXPECT(t, " Hello World!", 38699, 2260, 17);
    EXPECT(t, "Hello, world!", 19556, 28, 905, 17);
    EXPECT(t, "   Hello", 256, 38699);
    EXPECT(t, "    Hello\n    Hello", 333, 38699, 472, 38699);
    EXPECT(t, "\n =", 198, 446);
    EXPECT(t, "' era", 23, 5741);
    EXPECT(t, "333333333", 35, 35, 35, 35, 35, 35, 35, 35, 35);

    /* spec section 2 pre-tokenizer results, as the pieces' tokens */
    int32_t a = find(t, "a"), sp = find(t, "\xc4\xa0"), one = find(t, "1"), two = find(t, "2");
    int32_t sp2 = find(t, "\xc4\xa0\xc4\xa0"), hello = find(t, "\xc4\xa0Hello"), x = find(t, "x");
    int32_t nl2 = find(t, "\xc4\x8a\xc4\x8a"), nl = find(t, "\xc4\x8a"), y = find(t, "y");
    int32_t it = find(t, "it"), s_ = find(t, "'s");
    CHECK(a >= 0 && sp >= 0 && one >= 0 && two >= 0 && sp2 >= 0 && hello >= 0 && nl2 >= 0);
    int32_t v1[] = {a, sp, one, two}; /* gpt2 alone would give " 12" */
    expect_ids(t, "a 12", 4, 0, 1, v1, 4);
    int32_t v2[] = {a, sp2, one};
    expect_ids(t, "a  1", 4, 0, 1, v2, 3);
    int32_t v3[] = {sp, hello};
    expect_ids(t, "  Hello", 7, 0, 1, v3, 2);
    int32_t v4[] = {find(t, "Hello"), sp2};
    expect_ids(t, "Hello  ", 7, 0, 1, v4, 2);
    int32_t v5[] = {x, nl2, nl, y};
    expect_ids(t, "x\n\n\ny", 5, 0, 1, v5, 4);
    int32_t v6[] = {it, s_};
    expect_ids(t, "it's", 4, 0, 1, v6, 2);

    /* specials: control tokens only with parse_special */
    EXPECT(t, "<|im_start|>user\nHi<|im_end|>", 1, find(t, "user"), 198, find(t, "Hi"), 2);
    int32_t *ids;
    size_t n;
    util_err e;
    CHECK_EQ_INT(eng_tokenize(t, "<|im_end|>", 10, 0, 0, &ids, &n, &e), 0);
    CHECK(n > 1 && ids[0] != 2);
    free(ids);

    /* empty input: no tokens, a valid (freeable) array */
    CHECK_EQ_INT(eng_tokenize(t, "", 0, 1, 1, &ids, &n, &e), 0);
    CHECK_EQ_INT(n, 0);
    free(ids);
}

static void test_model_meta(const eng_tokenizer *t) {
    CHECK_EQ_INT(eng_tokenizer_n_vocab(t), 49152);
    CHECK_EQ_INT(eng_tokenizer_bos(t), 1);
    CHECK_EQ_INT(eng_tokenizer_eos(t), 2);
    CHECK_EQ_INT(eng_tokenizer_add_bos(t), 0);
    CHECK(eng_tokenizer_warning(t) == NULL);
    /* llama.cpp's EOG set for SmolLM2: <|endoftext|>, <|im_end|>, <reponame> */
    int neog = 0;
    for (int32_t id = 0; id < eng_tokenizer_n_vocab(t); id++) neog += eng_tokenizer_is_eog(t, id);
    CHECK_EQ_INT(neog, 3);
    CHECK(eng_tokenizer_is_eog(t, 0) && eng_tokenizer_is_eog(t, 2) && eng_tokenizer_is_eog(t, 4));
    CHECK(!eng_tokenizer_is_eog(t, -1) && !eng_tokenizer_is_eog(t, 49152));
    CHECK_EQ_INT(eng_tokenizer_attr(t, 1), ENG_TOK_CONTROL);
    CHECK_EQ_INT(eng_tokenizer_attr(t, 100), ENG_TOK_NORMAL);
    CHECK_EQ_INT(find(t, "<|im_start|>"), 1);
    CHECK_EQ_INT(find(t, "no such token text"), -1);

    const char *p;
    size_t pl;
    CHECK_EQ_INT(eng_token_piece(t, 1, 0, &p, &pl), 0);
    CHECK_EQ_INT(pl, 0);
    CHECK_EQ_INT(eng_token_piece(t, 1, 1, &p, &pl), 0);
    CHECK(pl == 12 && memcmp(p, "<|im_start|>", 12) == 0);
    CHECK_EQ_INT(eng_token_piece(t, 198, 0, &p, &pl), 0);
    CHECK(pl == 1 && p[0] == '\n');
    CHECK_EQ_INT(eng_token_piece(t, 49152, 0, &p, &pl), UTIL_ERANGE);
    char *d;
    size_t dl;
    util_err e;
    int32_t bad[] = {5, -3};
    CHECK_EQ_INT(eng_detokenize(t, bad, 2, 0, &d, &dl, &e), UTIL_ERANGE);
    CHECK(strstr(e.msg, "-3") != NULL);
}

static void test_stream(const eng_tokenizer *t) {
    static const char *texts[] = {
        "h\xc3\xa9llo w\xc3\xb6rld",
        "\xe4\xb8\xad\xe6\x96\x87\xe6\xb5\x8b\xe8\xaf\x95",
        "emoji \xf0\x9f\x98\x80\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd!",
        "\xe2\x82\xac 5 \xc2\xbd",
    };
    util_err e;
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        int32_t *ids;
        size_t n;
        CHECK_EQ_INT(eng_tokenize(t, texts[k], strlen(texts[k]), 0, 1, &ids, &n, &e), 0);
        check_stream(t, ids, n, texts[k], strlen(texts[k]), 0);
        check_stream(t, ids, n, texts[k], strlen(texts[k]), 1);
        free(ids);
    }
    /* by hand: a split euro sign waits; bytes that cannot complete pass through */
    eng_detok_stream st;
    eng_detok_stream_init(&st);
    char out[64];
    CHECK_EQ_INT(eng_detok_stream_feed(&st, "a\xe2", 2, out), 1);
    CHECK_EQ_INT(eng_detok_stream_feed(&st, "\x82", 1, out), 0);
    size_t w = eng_detok_stream_feed(&st,
                                     "\xac"
                                     "b",
                                     2, out);
    CHECK(w == 4 && memcmp(out,
                           "\xe2\x82\xac"
                           "b",
                           4) == 0);
    w = eng_detok_stream_feed(&st, "\xe2\x82", 2, out);
    CHECK_EQ_INT(w, 0);
    w = eng_detok_stream_feed(&st, "A", 1, out);
    CHECK(w == 3 && memcmp(out,
                           "\xe2\x82"
                           "A",
                           3) == 0);
    w = eng_detok_stream_feed(&st, "\xff\x80z", 3, out);
    CHECK(w == 3 && memcmp(out, "\xff\x80z", 3) == 0);
    w = eng_detok_stream_feed(&st, "\xf0\x9f", 2, out);
    CHECK_EQ_INT(w, 0);
    w = eng_detok_stream_flush(&st, out);
    CHECK(w == 2 && memcmp(out, "\xf0\x9f", 2) == 0);
    CHECK_EQ_INT(eng_detok_stream_flush(&st, out), 0);
}

/* Builds ~1 MB of mixed text and times encoding; also a long single word. */
static void test_speed(const eng_tokenizer *t) {
    static const char *parts[] = {
        "The quick brown fox jumps over the lazy dog. ",
        "int main(void) { return 0; }\n",
        "    indented line with  two spaces\n",
        "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 ",
        "Numbers 12345 and 3.14159; ",
        "It's, we're, they'll... ",
        "\t\ttabs\r\n",
    };
    util_buf b;
    util_buf_init(&b);
    uint64_t s = 42;
    while (b.len < (1u << 20)) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        util_buf_puts(&b, parts[(s >> 33) % (sizeof parts / sizeof parts[0])]);
    }
    util_err e;
    int32_t *ids;
    size_t n;
    double t0 = now_s();
    CHECK_EQ_INT(eng_tokenize(t, b.data, b.len, 0, 1, &ids, &n, &e), 0);
    double dt = now_s() - t0;
    fprintf(stderr, "tokenizer: encoded %zu bytes into %zu tokens in %.1f ms\n", b.len, n, dt * 1e3);
    CHECK_MSG(dt < 5.0, "encoding 1 MB took %.2f s", dt); /* well under 1 s in release builds */
    char *d;
    size_t dl;
    CHECK_EQ_INT(eng_detokenize(t, ids, n, 0, &d, &dl, &e), 0);
    CHECK(dl == b.len && memcmp(d, b.data, dl) == 0);
    free(d);
    free(ids);
    util_buf_release(&b);
}

static void test_real_model(void) {
    const char *path = check_model_path();
    CHECK_MSG(path != NULL, "model file missing: run make model");
    if (!path) return;
    util_err e;
    eng_gguf *g;
    int rc = eng_gguf_open(&g, path, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc) return;
    eng_tokenizer *t;
    double t0 = now_s();
    rc = eng_tokenizer_new(&t, g, &e);
    double dt = now_s() - t0;
    eng_gguf_free(g); /* the tokenizer keeps copies */
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc) return;
    fprintf(stderr, "tokenizer: built the SmolLM2 tokenizer in %.1f ms\n", dt * 1e3);
    CHECK_MSG(dt < 1.0, "building the tokenizer took %.2f s", dt);
    CHECK_CASE(model_meta) test_model_meta(t);
    CHECK_CASE(spec_vectors) test_spec_vectors(t);
    CHECK_CASE(stream) test_stream(t);
    CHECK_CASE(golden) th_tokenizer_golden(t, "tokenizer_smollm2.tsv", 320);
    CHECK_CASE(speed) test_speed(t);
    eng_tokenizer_free(t);
}

/* --- toy vocabularies ------------------------------------------------------------- */

#define U2581 "\xe2\x96\x81"

/* A SentencePiece-style vocabulary shaped like Gemma 3's (types, specials,
 * user-defined space run, byte tokens). add_space_prefix < 0: key absent. */
static eng_tokenizer *toy_spm(int add_space_prefix, gw *w) {
    static const char *tok[] = {
        "<pad>",  "<eos>",   "<bos>",
        "<unk>",  "  ",      U2581,
        "a",      "b",       "x",
        "y",      "z",       "xy",
        "yz",     "p",       "q",
        "r",      "pq",      "qr",
        "<0xC3>", "<0xA9>",  "<start_of_turn>",
        "\n",     U2581 "a", "<end_of_turn>",
        "<code>", "<0x41>",  "ab",
    };
    enum { N = sizeof tok / sizeof tok[0] };
    int32_t ty[N];
    float sc[N];
    for (int i = 0; i < N; i++) {
        ty[i] = 1;
        sc[i] = 0;
    }
    ty[0] = ty[1] = ty[2] = ty[20] = ty[23] = 3;
    ty[3] = 2;
    ty[4] = ty[24] = 4;
    ty[18] = ty[19] = ty[25] = 6;
    sc[11] = sc[12] = -1;
    sc[16] = -3;
    sc[17] = -2;
    sc[22] = -5;
    sc[26] = -4;
    gw_begin(w);
    gw_str(w, "general.architecture", "gemma3");
    gw_str(w, "tokenizer.ggml.model", "llama");
    gw_str(w, "tokenizer.ggml.pre", "default");
    gw_strs(w, "tokenizer.ggml.tokens", tok, N);
    gw_f32s(w, "tokenizer.ggml.scores", sc, N);
    gw_i32s(w, "tokenizer.ggml.token_type", ty, N);
    gw_u32(w, "tokenizer.ggml.bos_token_id", 2);
    gw_u32(w, "tokenizer.ggml.eos_token_id", 1);
    gw_u32(w, "tokenizer.ggml.unknown_token_id", 3);
    gw_u32(w, "tokenizer.ggml.padding_token_id", 0);
    gw_bool(w, "tokenizer.ggml.add_bos_token", 1);
    if (add_space_prefix >= 0) gw_bool(w, "tokenizer.ggml.add_space_prefix", add_space_prefix);
    gw_end(w);
    util_err e;
    eng_gguf *g;
    eng_tokenizer *t = NULL;
    int rc = eng_gguf_open_mem(&g, w->b.data, w->b.len, "toy-spm", &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    if (rc) return NULL;
    rc = eng_tokenizer_new(&t, g, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    eng_gguf_free(g);
    return t;
}

static void expect_spm(const eng_tokenizer *t, const char *s, int add_special, int parse_special,
                       const int32_t *want, size_t n) {
    expect_ids(t, s, strlen(s), add_special, parse_special, want, n);
}

static void test_toy_spm(void) {
    gw w;
    eng_tokenizer *t = toy_spm(0, &w);
    if (!t) {
        util_buf_release(&w.b);
        return;
    }
    /* spec section 3, checked against llama.cpp on toy files */
    int32_t r1[] = {11, 10}; /* xy=-1, yz=-1: tie goes to the left pair */
    expect_spm(t, "xyz", 0, 0, r1, 2);
    int32_t r2[] = {13, 17}; /* pq=-3 < qr=-2 */
    expect_spm(t, "pqr", 0, 0, r2, 2);
    int32_t r3[] = {18, 19}; /* byte fallback */
    expect_spm(t, "\xc3\xa9", 0, 0, r3, 2);
    int32_t r4[] = {6, 4, 7}; /* user-defined "  " cut out even without parse_special */
    expect_spm(t, "a  b", 0, 0, r4, 3);
    int32_t r5[] = {6, 4, 5, 7};
    expect_spm(t, "a   b", 0, 0, r5, 4);
    int32_t r6[] = {2, 20, 6, 21, 26, 23, 21}; /* BOS, specials, no dummy prefix */
    expect_spm(t, "<start_of_turn>a\nab<end_of_turn>\n", 1, 1, r6, 7);
    int32_t r7[] = {2, 24, 6}; /* user-defined tag */
    expect_spm(t, "<code>a", 1, 0, r7, 3);
    int32_t r8[] = {3}; /* a lone byte with no <0x..> token and no text falls to <unk> */
    expect_spm(t, "\x80", 0, 0, r8, 1);
    int32_t r9[] = {2};
    expect_spm(t, "", 1, 0, r9, 1);
    expect_spm(t, "", 0, 0, r9, 0);
    int32_t r10[] = {25, 7}; /* "A" only as a byte token */
    expect_spm(t, "Ab", 0, 0, r10, 2);
    /* without parse_special, control text is merged from characters (llama.cpp) */
    int32_t *ids;
    size_t n;
    util_err e;
    CHECK_EQ_INT(eng_tokenize(t, "<eos>", 5, 0, 0, &ids, &n, &e), 0);
    CHECK(n >= 1 && ids[0] != 1);
    free(ids);

    CHECK_EQ_INT(eng_tokenizer_bos(t), 2);
    CHECK_EQ_INT(eng_tokenizer_add_bos(t), 1);
    CHECK(eng_tokenizer_is_eog(t, 1) && eng_tokenizer_is_eog(t, 23) && !eng_tokenizer_is_eog(t, 20));

    /* decode: U+2581 -> space, byte tokens as bytes, control hidden unless rendered */
    int32_t d1[] = {2, 20, 22, 5, 7, 18, 19, 4, 24};
    char *d;
    size_t dl;
    CHECK_EQ_INT(eng_detokenize(t, d1, 9, 0, &d, &dl, &e), 0);
    CHECK_EQ_STR(d, " a b\xc3\xa9  <code>");
    free(d);
    CHECK_EQ_INT(eng_detokenize(t, d1, 9, 1, &d, &dl, &e), 0);
    CHECK_EQ_STR(d, "<bos><start_of_turn> a b\xc3\xa9  <code>");
    free(d);
    check_stream(t, d1 + 5, 2, "\xc3\xa9", 2, 0);
    eng_tokenizer_free(t);
    util_buf_release(&w.b);

    /* add_space_prefix: default true when the key is absent */
    t = toy_spm(-1, &w);
    if (t) {
        int32_t s1[] = {22, 5, 7};
        expect_spm(t, "a b", 0, 0, s1, 3);
        int32_t s2[] = {2, 20, 22}; /* a prefix after a special too */
        expect_spm(t, "<start_of_turn>a", 1, 1, s2, 3);
        CHECK_EQ_INT(eng_detokenize(t, s1, 3, 0, &d, &dl, &e), 0);
        CHECK_EQ_STR(d, "a b"); /* llama.cpp strips the one leading space again */
        free(d);
        eng_tokenizer_free(t);
    }
    util_buf_release(&w.b);
}

/* A byte-level BPE vocabulary: the 256 byte characters plus a few merges. */
static eng_tokenizer *toy_bpe(const char *pre, gw *w, util_err *e) {
    static char store[256][4];
    const char *tok[300];
    int n = 0;
    for (int c = 0; c < 256; c++) {
        uint32_t cp = (c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae ? (uint32_t)c : 0;
        if (!cp) {
            int k = 0;
            for (int d = 0; d < c; d++)
                k += !((d >= 0x21 && d <= 0x7e) || (d >= 0xa1 && d <= 0xac) || d >= 0xae);
            cp = 256 + (uint32_t)k;
        }
        int len = eng_utf8_encode(cp, store[c]);
        store[c][len] = '\0';
        tok[n++] = store[c];
    }
    tok[n++] = "ab";
    tok[n++] = "\xc4\xa0"
               "ab";
    tok[n++] = "34";
    tok[n++] = "<|endoftext|>";
    static const char *merges[] = {"a b", "\xc4\xa0 ab", "c d", "3 4"}; /* "cd" is no token */
    int32_t ty[300];
    for (int i = 0; i < n; i++) ty[i] = 1;
    ty[n - 1] = 3;
    gw_begin(w);
    gw_str(w, "tokenizer.ggml.model", "gpt2");
    if (pre) gw_str(w, "tokenizer.ggml.pre", pre);
    gw_strs(w, "tokenizer.ggml.tokens", tok, (size_t)n);
    gw_i32s(w, "tokenizer.ggml.token_type", ty, (size_t)n);
    gw_strs(w, "tokenizer.ggml.merges", merges, 4);
    gw_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)n - 1);
    gw_end(w);
    eng_gguf *g;
    eng_tokenizer *t = NULL;
    if (eng_gguf_open_mem(&g, w->b.data, w->b.len, "toy-bpe", e)) return NULL;
    eng_tokenizer_new(&t, g, e);
    eng_gguf_free(g);
    return t;
}

static void test_toy_bpe(void) {
    gw w;
    util_err e;
    eng_tokenizer *t = toy_bpe("gpt-2", &w, &e);
    CHECK_MSG(t != NULL, "%s", e.msg);
    if (t) {
        CHECK(eng_tokenizer_warning(t) == NULL);
        int32_t r1[] = {256, 257, 'c', 'd'};
        expect_ids(t, "ab abcd", 7, 0, 0, r1, 4); /* ' ab' merges; "cd" falls back to bytes */
        int32_t r2[] = {'1', '2', 258, '5'};      /* one piece "12345" */
        expect_ids(t, "12345", 5, 0, 0, r2, 4);
        int32_t r3[] = {259};
        expect_ids(t, "<|endoftext|>", 13, 0, 1, r3, 1);
        CHECK(eng_tokenizer_is_eog(t, 259));
        char *d;
        size_t dl;
        int32_t d1[] = {256, 257, 259, 10, 'x', ' ', ',', 258}; /* id c is byte c's character */
        CHECK_EQ_INT(eng_detokenize(t, d1, 8, 0, &d, &dl, &e), 0);
        CHECK_EQ_STR(d, "ab ab\nx,34"); /* clean_spaces drops the space before ',' */
        free(d);
        eng_tokenizer_free(t);
    }
    util_buf_release(&w.b);

    /* an unknown pre type is an error naming it, not a guess */
    t = toy_bpe("no-such-pre", &w, &e);
    CHECK(t == NULL);
    CHECK_MSG(strstr(e.msg, "'no-such-pre'") && strstr(e.msg, "not supported"), "%s", e.msg);
    eng_tokenizer_free(t);
    util_buf_release(&w.b);
    /* llama.cpp's default by name, and (with a note) when the key is missing */
    t = toy_bpe("default", &w, &e);
    CHECK(t != NULL && eng_tokenizer_warning(t) == NULL);
    if (t) { /* default splitting: punctuation runs, then 3-digit groups */
        int32_t r1[] = {'1', '2', '3', '4', '5', '$', '+', '+', '!'};
        expect_ids(t, "12345$++!", 9, 0, 0, r1, 9); /* "123" "45": no "34" across pieces */
    }
    eng_tokenizer_free(t);
    util_buf_release(&w.b);
    t = toy_bpe(NULL, &w, &e);
    CHECK(t != NULL && eng_tokenizer_warning(t) != NULL);
    eng_tokenizer_free(t);
    util_buf_release(&w.b);

    /* malformed vocabularies fail with a message, never crash */
    gw_begin(&w);
    gw_str(&w, "tokenizer.ggml.model", "bert");
    gw_end(&w);
    eng_gguf *g;
    if (eng_gguf_open_mem(&g, w.b.data, w.b.len, "toy", &e) == 0) {
        CHECK_EQ_INT(eng_tokenizer_new(&t, g, &e), UTIL_EUNSUPPORTED);
        CHECK(strstr(e.msg, "bert") != NULL);
        eng_gguf_free(g);
    }
    util_buf_release(&w.b);
    gw_begin(&w);
    gw_str(&w, "tokenizer.ggml.model", "gpt2");
    static const char *one[] = {"a"};
    gw_strs(&w, "tokenizer.ggml.tokens", one, 1);
    gw_end(&w);
    if (eng_gguf_open_mem(&g, w.b.data, w.b.len, "toy", &e) == 0) {
        CHECK_EQ_INT(eng_tokenizer_new(&t, g, &e), UTIL_EFORMAT);
        CHECK(strstr(e.msg, "merges") != NULL);
        eng_gguf_free(g);
    }
    util_buf_release(&w.b);
    gw_begin(&w);
    gw_end(&w);
    if (eng_gguf_open_mem(&g, w.b.data, w.b.len, "toy", &e) == 0) {
        CHECK_EQ_INT(eng_tokenizer_new(&t, g, &e), UTIL_EFORMAT);
        eng_gguf_free(g);
    }
    util_buf_release(&w.b);
    eng_tokenizer_free(NULL);
}

static void test_unicode(void) {
    CHECK(eng_unicode_flags('a') & ENG_UC_LETTER);
    CHECK(eng_unicode_flags(0xBD) & ENG_UC_NUMBER);  /* ½ */
    CHECK(eng_unicode_flags(0x663) & ENG_UC_NUMBER); /* ٣ */
    CHECK(eng_unicode_flags(0x3000) & ENG_UC_WHITESPACE);
    CHECK(!(eng_unicode_flags(0x1C) & ENG_UC_WHITESPACE));
    CHECK(eng_unicode_is_pyspace(0x1C));
    CHECK(!(eng_unicode_flags(0x200B) & ENG_UC_WHITESPACE));
    CHECK(eng_unicode_flags(0x2EBF0) & ENG_UC_LETTER);         /* CJK ext. I: Unicode 15.1 */
    CHECK_EQ_INT(eng_unicode_flags(0x1C89), ENG_UC_UNDEFINED); /* new in 16.0 */
    CHECK_EQ_INT(eng_unicode_flags(0x110000), 0);
    size_t adv;
    CHECK_EQ_INT(eng_utf8_decode((const unsigned char *)"\xc0\x80", 2, &adv), 0); /* overlong, lenient */
    CHECK_EQ_INT(adv, 2);
    CHECK_EQ_INT(eng_utf8_decode((const unsigned char *)"\xe2\x82", 2, &adv), ENG_UTF8_BAD);
    CHECK_EQ_INT(adv, 1);
    CHECK_EQ_INT(eng_utf8_check((const unsigned char *)"\xc0\x80", 2), 0); /* strict */
    CHECK_EQ_INT(eng_utf8_check((const unsigned char *)"\xed\xa0\x80", 3), 0);
    CHECK_EQ_INT(eng_utf8_check((const unsigned char *)"\xf0\x9f", 2), -1);
}

/* Splits text with the named pre-tokenizer; the pieces, joined by '|', must be want. */
static void expect_pieces(const char *pre, const char *text, const char *want) {
    eng_pretok *p = NULL;
    util_err e;
    int rc = eng_pretok_new(&p, pre, strlen(pre), &e);
    CHECK_MSG(rc == 0, "pre-tokenizer %s: %s", pre, e.msg);
    if (rc) return;
    size_t len = strlen(text), n = 0;
    uint32_t cp[256];
    uint16_t fl[256];
    for (size_t i = 0; i < len && n < 256;) {
        size_t adv;
        uint32_t c = eng_utf8_decode((const unsigned char *)text + i, len - i, &adv);
        cp[n] = c == ENG_UTF8_BAD ? 0xFFFD : c;
        fl[n] = (uint16_t)eng_unicode_flags(cp[n]);
        n++;
        i += adv;
    }
    eng_pretok_work w;
    memset(&w, 0, sizeof w);
    const uint32_t *pieces;
    size_t np;
    rc = eng_pretok_split(p, &w, cp, fl, n, &pieces, &np, &e);
    CHECK_MSG(rc == 0, "pre-tokenizer %s: %s", pre, e.msg);
    char got[1024];
    size_t g = 0, at = 0;
    for (size_t k = 0; rc == 0 && k < np && g < sizeof got - 16; k++) {
        if (k) got[g++] = '|';
        for (size_t i = at; i < at + pieces[k]; i++) g += (size_t)eng_utf8_encode(cp[i], got + g);
        at += pieces[k];
    }
    got[g] = '\0';
    CHECK_MSG(rc == 0 && at == n && strcmp(got, want) == 0, "pre-tokenizer %s on '%s': got '%s' want '%s'",
              pre, text, got, want);
    eng_pretok_work_release(&w);
    eng_pretok_free(p);
}

/* The pre-tokenizers on their own, without a vocabulary (the vocabs suite runs
 * them on the real ones): pieces worked out by hand from llama.cpp's regexes. */
static void test_pretok(void) {
    expect_pieces("llama-bpe", "Hello world 12345", "Hello| world| |123|45");
    expect_pieces("llama-bpe", "I'M here\r\n\n  x", "I|'M| here|\r\n\n| | x");
    expect_pieces("qwen2", "x 2024", "x| |2|0|2|4");
    expect_pieces("qwen35", "e\xcc\x81x 1", "e\xcc\x81x| |1"); /* marks stay with letters */
    expect_pieces("gpt-2", "it's  ok", "it|'s| | ok");
    expect_pieces("starcoder", "a12 b", "a|1|2| b");
    expect_pieces("deepseek-coder", "foo(bar) 12", "foo|(|bar|)| |1|2");
    /* U+3000 is whitespace (0x0B to the regexes), so only U+3002 is in the CJK
     * pass's U+0800-U+4E00 range and it splits the punctuation run */
    expect_pieces("deepseek-llm", "x\xe3\x80\x80\xe3\x80\x82", "x|\xe3\x80\x80|\xe3\x80\x82");
    expect_pieces("deepseek-llm",
                  "a\xff"
                  "b",
                  "a|\xef\xbf\xbd|b"); /* a bad byte is U+FFFD */
    expect_pieces("deepseek-llm", "ab  ", "ab|  ");
    expect_pieces("gemma4", "a b\n\nc", "a b|\n\n|c");
    expect_pieces("tekken", "HelloWorld FOO", "Hello|World| FOO"); /* words split by case */
    expect_pieces("llama4", "I'M 12345", "I'M| |123|45");
    expect_pieces("deepseek-v3", "abc 1234 \xe4\xb8\xad\xe6\x96\x87",
                  "abc| |123|4| |\xe4\xb8\xad\xe6\x96\x87");
    expect_pieces("default", "12345$++!", "123|45|$++!");
    eng_pretok *p = NULL;
    util_err e;
    CHECK_EQ_INT(eng_pretok_new(&p, "no-such-pre", 11, &e), UTIL_EUNSUPPORTED);
    CHECK(p == NULL && strstr(e.msg, "'no-such-pre'") != NULL);
    CHECK_EQ_INT(eng_pretok_new(&p, "llama-bpe", 9, &e), 0);
    CHECK(p && strcmp(eng_pretok_name(p), "llama3") == 0 && eng_pretok_flags_of(p)->ignore_merges);
    eng_pretok_free(p);
}

void test_tokenizer(void) {
    CHECK_CASE(unicode) test_unicode();
    CHECK_CASE(pretok) test_pretok();
    CHECK_CASE(toy_spm) test_toy_spm();
    CHECK_CASE(toy_bpe) test_toy_bpe();
    test_real_model();
}
