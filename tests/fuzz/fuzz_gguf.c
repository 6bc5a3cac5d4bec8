/* tests/fuzz/fuzz_gguf.c: libFuzzer target for the GGUF reader over a buffer:
 * every key read with every typed getter (scalars, strings, arrays), every
 * tensor's first and last byte, then the tokenizer and the chat template built
 * from the file and used once (encode with and without special parsing, the
 * template's render-to-tokens, decode). Seeds: tests/fuzz/corpus/gguf (tiny
 * synthetic models, tests/synth.h). Build: make fuzz. Not in the test runner. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/chat.h"
#include "../../engine/gguf.h"
#include "../../engine/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned char sink;

static void read_key(const eng_gguf *g, int64_t i) {
    const char *key = eng_gguf_kv_key(g, i);
    if (!key) return;
    (void)eng_gguf_kv_type(g, i);
    (void)eng_gguf_find_key(g, key);
    uint32_t u;
    int64_t l;
    float f;
    int b;
    const char *s;
    size_t n;
    eng_gguf_vtype et;
    uint64_t count;
    (void)eng_gguf_get_u32(g, key, &u, NULL);
    (void)eng_gguf_get_i64(g, key, &l, NULL);
    (void)eng_gguf_get_f32(g, key, &f, NULL);
    (void)eng_gguf_get_bool(g, key, &b, NULL);
    if (eng_gguf_get_str(g, key, &s, &n, NULL) == 0 && n) sink ^= (unsigned char)(s[0] ^ s[n - 1]);
    (void)eng_gguf_get_arr(g, key, &et, &count, NULL);
    const char **strs = NULL;
    uint32_t *lens = NULL;
    if (eng_gguf_get_str_arr(g, key, &strs, &lens, &count, NULL) == 0) {
        for (uint64_t k = 0; k < count; k++)
            if (lens[k]) sink ^= (unsigned char)(strs[k][0] ^ strs[k][lens[k] - 1]);
        free(strs);
        free(lens);
    }
    float *fa = NULL;
    int32_t *ia = NULL;
    if (eng_gguf_get_f32_arr(g, key, &fa, &count, NULL) == 0) free(fa);
    if (eng_gguf_get_i32_arr(g, key, &ia, &count, NULL) == 0) free(ia);
}

static void use_tokenizer(const eng_tokenizer *t, const eng_chat *c) {
    static const char text[] = "Hello <|im_start|>user\n wor ld!\xe2\x82\xac\xff <start_of_turn> 123";
    for (int special = 0; special < 2; special++) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (eng_tokenize(t, text, sizeof text - 1, 1, special, &ids, &n, NULL) == 0) {
            char *out = NULL;
            size_t len = 0;
            if (eng_detokenize(t, ids, n, special, &out, &len, NULL) == 0) free(out);
            free(ids);
        }
    }
    int32_t nv = eng_tokenizer_n_vocab(t);
    for (int32_t id = 0; id < nv && id < 512; id++) {
        const char *p;
        size_t len;
        if (eng_token_piece(t, id, 1, &p, &len) == 0 && len) sink ^= (unsigned char)p[len - 1];
        (void)eng_tokenizer_is_eog(t, id);
        (void)eng_tokenizer_attr(t, id);
    }
    if (!c) return;
    eng_chat_msg msgs[3] = {{"system", "be brief"}, {"user", "hi <|im_end|>"}, {"assistant", "ok"}};
    int32_t *ids = NULL;
    size_t n = 0;
    if (eng_chat_tokenize(c, t, msgs, 3, 1, NULL, &ids, &n, NULL) == 0) free(ids);
    if (eng_chat_tokenize(c, t, msgs + 1, 1, 1, NULL, &ids, &n, NULL) == 0) free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    eng_gguf *g = NULL;
    if (eng_gguf_open_mem(&g, data, size, "fuzz.gguf", NULL) != 0) return 0;
    (void)eng_gguf_version(g);
    (void)eng_gguf_identity(g);
    int64_t nk = eng_gguf_kv_count(g);
    for (int64_t i = 0; i < nk; i++) read_key(g, i);
    int64_t nt = eng_gguf_tensor_count(g);
    for (int64_t i = 0; i < nt; i++) {
        const eng_gguf_tensor *te = eng_gguf_tensor_at(g, i);
        if (!te) continue;
        if (eng_gguf_find_tensor(g, te->name) == NULL) abort();
        if (te->nbytes) {
            const unsigned char *p = te->data;
            sink ^= (unsigned char)(p[0] ^ p[te->nbytes - 1]);
        }
    }
    eng_tokenizer *t = NULL;
    eng_chat *c = NULL;
    if (eng_tokenizer_new(&t, g, NULL) == 0) {
        if (eng_chat_new(&c, g, NULL) != 0) c = NULL;
        use_tokenizer(t, c);
    } else if (eng_chat_new(&c, g, NULL) == 0) {
        util_buf b;
        util_buf_init(&b);
        eng_chat_msg m = {"user", "x"};
        (void)eng_chat_render(c, &m, 1, 1, &b, NULL);
        util_buf_release(&b);
    }
    eng_chat_free(c);
    eng_tokenizer_free(t);
    eng_gguf_free(g);
    return 0;
}
