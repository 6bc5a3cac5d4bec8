/* tests/test_chat.c: chat templates. ChatML on the real SmolLM2 model (the
 * spec's "Hi" text, the default system block read from the template, the
 * rendered+tokenized "capital of France" prompt against llama.cpp's ids in the
 * golden file) and Gemma on a hand-built vocabulary laid out like Gemma 3's
 * (the spec's texts, the id line for "Test", one BOS, role errors). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../agent/format.h"
#include "../agent/toolcall.h"
#include "../engine/chat.h"
#include "../engine/gguf.h"
#include "../engine/tokenizer.h"
#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"

/* --- a minimal GGUF writer (metadata only) ----------------------------------- */

typedef struct cw {
    util_buf b;
    uint64_t nkv;
} cw;

static void cw_raw(cw *w, const void *p, size_t n) { util_buf_append(&w->b, p, n); }
static void cw_u32v(cw *w, uint32_t v) { cw_raw(w, &v, 4); }
static void cw_u64v(cw *w, uint64_t v) { cw_raw(w, &v, 8); }
static void cw_strv(cw *w, const char *s) {
    cw_u64v(w, strlen(s));
    cw_raw(w, s, strlen(s));
}
static void cw_begin(cw *w) {
    util_buf_init(&w->b);
    w->nkv = 0;
    cw_raw(w, "GGUF", 4);
    cw_u32v(w, 3);
    cw_u64v(w, 0);
    cw_u64v(w, 0);
}
static void cw_key(cw *w, const char *k, uint32_t type) {
    cw_strv(w, k);
    cw_u32v(w, type);
    w->nkv++;
}
static void cw_str(cw *w, const char *k, const char *v) {
    cw_key(w, k, ENG_GGUF_STRING);
    cw_strv(w, v);
}
static void cw_u32(cw *w, const char *k, uint32_t v) {
    cw_key(w, k, ENG_GGUF_U32);
    cw_u32v(w, v);
}
static void cw_bool(cw *w, const char *k, int v) {
    cw_key(w, k, ENG_GGUF_BOOL);
    unsigned char c = (unsigned char)(v != 0);
    cw_raw(w, &c, 1);
}
static void cw_arr(cw *w, const char *k, uint32_t et, const void *v, size_t n, size_t esz) {
    cw_key(w, k, ENG_GGUF_ARRAY);
    cw_u32v(w, et);
    cw_u64v(w, n);
    if (et == ENG_GGUF_STRING)
        for (size_t i = 0; i < n; i++) cw_strv(w, ((const char *const *)v)[i]);
    else
        cw_raw(w, v, n * esz);
}
static eng_gguf *cw_open(cw *w) {
    memcpy(w->b.data + 16, &w->nkv, 8);
    eng_gguf *g = NULL;
    util_err e;
    int rc = eng_gguf_open_mem(&g, w->b.data, w->b.len, "toy-chat", &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    return g;
}

/* --- helpers --------------------------------------------------------------------- */

static void expect_render(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, const char *want) {
    util_buf b;
    util_buf_init(&b);
    util_err e;
    int rc = eng_chat_render(c, m, n, gen, &b, &e);
    CHECK_MSG(rc == 0, "render failed: %s", e.msg);
    CHECK_MSG(rc == 0 && b.data && strcmp(b.data, want) == 0, "rendered:\n%s\nwanted:\n%s",
              b.data ? b.data : "(null)", want);
    util_buf_release(&b);
}

static void expect_render_error(const eng_chat *c, const eng_chat_msg *m, size_t n, const char *what) {
    util_buf b;
    util_buf_init(&b);
    util_buf_puts(&b, "keep");
    util_err e;
    util_err_clear(&e);
    CHECK_EQ_INT(eng_chat_render(c, m, n, 1, &b, &e), UTIL_EINVAL);
    CHECK_MSG(strstr(e.msg, what) != NULL, "error '%s' lacks '%s'", e.msg, what);
    CHECK_EQ_STR(b.data, "keep"); /* nothing appended on failure */
    util_buf_release(&b);
}

#define SMOL_SYSTEM \
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"

/* Finds the golden ids (parse_special on) of text in tests/golden/tokenizer_smollm2.tsv. */
static int golden_ids(const char *text, int32_t *ids, size_t cap, size_t *n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/golden/tokenizer_smollm2.tsv", check_root());
    char *data;
    size_t len;
    util_err e;
    if (util_read_file(&data, &len, path, &e)) return -1;
    size_t tl = strlen(text);
    char *hex = malloc(tl * 2 + 2);
    for (size_t i = 0; i < tl; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)text[i]);
    hex[2 * tl] = '\t';
    hex[2 * tl + 1] = '\0';
    int found = -1;
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (strncmp(line, hex, 2 * tl + 1) == 0) {
            const char *p = line + 2 * tl + 1;
            *n = 0;
            while (*p && *p != '\t' && *n < cap) {
                ids[(*n)++] = (int32_t)strtol(p, (char **)&p, 10);
                while (*p == ' ') p++;
            }
            found = 0;
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(hex);
    free(data);
    return found;
}

/* --- ChatML on the real model --------------------------------------------------- */

static void test_smollm2(void) {
    const char *path = check_model_path();
    CHECK_MSG(path != NULL, "model file missing: run make model");
    if (!path) return;
    util_err e;
    eng_gguf *g;
    if (eng_gguf_open(&g, path, &e)) {
        CHECK_MSG(0, "%s", e.msg);
        return;
    }
    eng_chat *c;
    eng_tokenizer *t;
    int rc = eng_chat_new(&c, g, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    int rt = eng_tokenizer_new(&t, g, &e);
    CHECK_MSG(rt == 0, "%s", e.msg);
    eng_gguf_free(g);
    if (rc || rt) {
        if (!rc) eng_chat_free(c);
        if (!rt) eng_tokenizer_free(t);
        return;
    }
    CHECK_EQ_INT(eng_chat_get_format(c), ENG_CHAT_CHATML);
    CHECK_EQ_STR(eng_chat_format_name(eng_chat_get_format(c)), "chatml");
    CHECK(eng_chat_warning(c) == NULL);
    size_t dl;
    const char *ds = eng_chat_default_system(c, &dl);
    CHECK(ds && dl == strlen(SMOL_SYSTEM) && memcmp(ds, SMOL_SYSTEM, dl) == 0);

    eng_chat_msg hi[] = {{"user", "Hi"}};
    expect_render(c, hi, 1, 1, SMOL_SYSTEM "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    expect_render(c, hi, 1, 0, SMOL_SYSTEM "<|im_start|>user\nHi<|im_end|>\n");
    eng_chat_msg multi[] = {
        {"system", "Be brief."}, {"user", " Hi "}, {"assistant", "Hello!"}, {"user", "Bye"}};
    expect_render(c, multi, 4, 1,
                  "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi <|im_end|>\n"
                  "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
                  "<|im_start|>assistant\n");
    /* the default block only when the first message is not system */
    eng_chat_msg later[] = {{"user", "a"}, {"system", "b"}};
    expect_render(c, later, 2, 0,
                  SMOL_SYSTEM "<|im_start|>user\na<|im_end|>\n<|im_start|>system\nb<|im_end|>\n");
    expect_render(c, NULL, 0, 1, "<|im_start|>assistant\n");
    eng_chat_msg bad[] = {{"user", NULL}};
    expect_render_error(c, bad, 1, "content");

    /* render + tokenize (parse_special on, no BOS added) vs llama.cpp */
    eng_chat_msg q[] = {{"user", "What is the capital of France?"}};
    util_buf b;
    util_buf_init(&b);
    CHECK_EQ_INT(eng_chat_render(c, q, 1, 1, &b, &e), 0);
    int32_t *ids;
    size_t n;
    CHECK_EQ_INT(eng_tokenize(t, b.data, b.len, 1, 1, &ids, &n, &e), 0);
    int32_t want[256];
    size_t nw = 0;
    int found = golden_ids(b.data, want, 256, &nw);
    CHECK_MSG(found == 0, "the rendered prompt is not in tests/golden/tokenizer_smollm2.tsv");
    if (found == 0)
        CHECK_MSG(n == nw && memcmp(ids, want, n * sizeof *ids) == 0,
                  "prompt ids differ from llama.cpp (%zu vs %zu ids)", n, nw);
    /* structure, independent of the golden file: ends with the tokens of the
     * generation prompt, and exactly two <|im_end|> */
    int32_t *tail;
    size_t nt;
    CHECK_EQ_INT(eng_tokenize(t, "<|im_start|>assistant\n", 22, 0, 1, &tail, &nt, &e), 0);
    CHECK(nt >= 3 && tail[0] == 1 && tail[nt - 1] == 198);
    CHECK(n > nt && ids[0] == 1 && memcmp(ids + n - nt, tail, nt * sizeof *tail) == 0);
    free(tail);
    int n_end = 0;
    for (size_t i = 0; i < n; i++) n_end += ids[i] == 2;
    CHECK_EQ_INT(n_end, 2);
    free(ids);
    util_buf_release(&b);
    eng_chat_free(c);
    eng_tokenizer_free(t);
}

/* --- Gemma on a vocabulary laid out like Gemma 3's ---------------------------------- */

/* Gemma 3's template, in effect (HF tokenizer_config.json); only its family
 * markers matter to eng_chat. */
static const char gemma_tpl[] =
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}\n"
    "{%- set loop_messages = messages[1:] -%}\n{%- else -%}\n{%- set first_user_prefix = \"\" -%}\n"
    "{%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "{{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "{%- endif -%}\n{%- if (message['role'] == 'assistant') -%}{%- set role = \"model\" -%}"
    "{%- else -%}{%- set role = message['role'] -%}{%- endif -%}\n"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\\n' }}{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{'<start_of_turn>model\\n'}}{%- endif -%}";

#define U2581 "\xe2\x96\x81"

static eng_gguf *gemma_gguf(cw *w) {
    enum { N = 4369 };
    static char fill[N][12];
    const char *tok[N];
    static int32_t ty[N];
    static float sc[N];
    for (int i = 0; i < N; i++) {
        snprintf(fill[i], sizeof fill[i], "[f%d]", i);
        tok[i] = fill[i];
        ty[i] = 1;
        sc[i] = -100;
    }
    static const struct {
        int id;
        const char *text;
        int type;
        float score;
    } fixed[] = {
        {0, "<pad>", 3, -1000},
        {1, "<eos>", 3, -1000},
        {2, "<bos>", 3, -1000},
        {3, "<unk>", 2, -1000},
        {105, "<start_of_turn>", 3, -1000},
        {106, "<end_of_turn>", 3, -1000},
        {107, "\n", 1, -50},
        {2364, "user", 1, -10},
        {3694, "Test", 1, -10},
        {4368, "model", 1, -10},
        {200, "u", 1, -90},
        {201, "s", 1, -90},
        {202, "e", 1, -90},
        {203, "r", 1, -90},
        {204, "us", 1, -20},
        {205, "er", 1, -20},
        {206, "T", 1, -90},
        {207, "t", 1, -90},
        {208, "Te", 1, -20},
        {209, "st", 1, -20},
        {210, "m", 1, -90},
        {211, "o", 1, -90},
        {212, "d", 1, -90},
        {213, "l", 1, -90},
        {214, "mo", 1, -20},
        {215, "de", 1, -20},
        {216, "del", 1, -15},
        {217, U2581, 1, -30},
    };
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
        tok[fixed[k].id] = fixed[k].text;
        ty[fixed[k].id] = fixed[k].type;
        sc[fixed[k].id] = fixed[k].score;
    }
    cw_begin(w);
    cw_str(w, "tokenizer.ggml.model", "llama");
    cw_str(w, "tokenizer.ggml.pre", "default");
    cw_arr(w, "tokenizer.ggml.tokens", ENG_GGUF_STRING, tok, N, 0);
    cw_arr(w, "tokenizer.ggml.scores", ENG_GGUF_F32, sc, N, 4);
    cw_arr(w, "tokenizer.ggml.token_type", ENG_GGUF_I32, ty, N, 4);
    cw_u32(w, "tokenizer.ggml.bos_token_id", 2);
    cw_u32(w, "tokenizer.ggml.eos_token_id", 1);
    cw_u32(w, "tokenizer.ggml.unknown_token_id", 3);
    cw_bool(w, "tokenizer.ggml.add_bos_token", 1);
    cw_bool(w, "tokenizer.ggml.add_space_prefix", 0);
    cw_str(w, "tokenizer.chat_template", gemma_tpl);
    return cw_open(w);
}

static void test_gemma(void) {
    cw w;
    eng_gguf *g = gemma_gguf(&w);
    if (!g) {
        util_buf_release(&w.b);
        return;
    }
    util_err e;
    eng_chat *c;
    eng_tokenizer *t;
    int rc = eng_chat_new(&c, g, &e), rt = eng_tokenizer_new(&t, g, &e);
    eng_gguf_free(g);
    CHECK_MSG(rc == 0 && rt == 0, "%s", e.msg);
    if (rc || rt) {
        util_buf_release(&w.b);
        return;
    }
    CHECK_EQ_INT(eng_chat_get_format(c), ENG_CHAT_GEMMA);
    CHECK_EQ_STR(eng_chat_format_name(ENG_CHAT_GEMMA), "gemma");
    CHECK(eng_chat_default_system(c, NULL) == NULL);

    eng_chat_msg sys[] = {{"system", "Be helpful."}, {"user", "Hello"}};
    expect_render(c, sys, 2, 1,
                  "<bos><start_of_turn>user\nBe helpful.\n\nHello<end_of_turn>\n<start_of_turn>model\n");
    eng_chat_msg multi[] = {{"system", " Keep it short. "},
                            {"user", "  Hi\n"},
                            {"assistant", "\tHello! "},
                            {"user", "\xe3\x80\x80"
                                     "Bye\xc2\xa0"}};
    expect_render(c, multi, 4, 0,
                  "<bos><start_of_turn>user\n Keep it short. \n\nHi<end_of_turn>\n"
                  "<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n");
    eng_chat_msg only_sys[] = {{"system", "S"}};
    expect_render(c, only_sys, 1, 1, "<bos><start_of_turn>model\n");

    /* role order the template rejects */
    eng_chat_msg uu[] = {{"user", "a"}, {"user", "b"}};
    expect_render_error(c, uu, 2, "alternate");
    eng_chat_msg a0[] = {{"assistant", "a"}};
    expect_render_error(c, a0, 1, "alternate");
    eng_chat_msg sa[] = {{"system", "s"}, {"assistant", "a"}};
    expect_render_error(c, sa, 2, "message 1 is 'assistant'");
    eng_chat_msg ss[] = {{"system", "s"}, {"user", "u"}, {"system", "again"}};
    expect_render(
        c, ss, 3, 0, /* any non-user role may take an odd turn, as in the template */
        "<bos><start_of_turn>user\ns\n\nu<end_of_turn>\n<start_of_turn>system\nagain<end_of_turn>\n");

    /* the spec's id line for user "Test": one BOS, no dummy prefix */
    eng_chat_msg test[] = {{"user", "Test"}};
    util_buf b;
    util_buf_init(&b);
    CHECK_EQ_INT(eng_chat_render(c, test, 1, 1, &b, &e), 0);
    int32_t *ids;
    size_t n;
    CHECK_EQ_INT(eng_tokenize(t, b.data, b.len, 0, 1, &ids, &n, &e), 0);
    static const int32_t want[] = {2, 105, 2364, 107, 3694, 106, 107, 105, 4368, 107};
    CHECK_MSG(n == 10 && memcmp(ids, want, sizeof want) == 0, "gemma prompt ids (%zu)", n);
    free(ids);
    util_buf_release(&b);
    eng_chat_free(c);
    eng_tokenizer_free(t);
    util_buf_release(&w.b);
}

/* --- template detection ----------------------------------------------------------- */

static void test_detection(void) {
    util_err e;
    eng_chat *c;
    cw w;
    /* ChatML written with double quotes and escapes: the block still comes out */
    cw_begin(&w);
    cw_str(&w, "tokenizer.chat_template",
           "{% for message in messages %}{% if loop.first and messages[0][\"role\"] != \"system\" %}"
           "{{ \"<|im_start|>system\\nBe \\\"brief\\\".<|im_end|>\\n\" }}{% endif %}"
           "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
           "{% endfor %}");
    eng_gguf *g = cw_open(&w);
    if (g && eng_chat_new(&c, g, &e) == 0) {
        CHECK(eng_chat_warning(c) == NULL);
        eng_chat_msg hi[] = {{"user", "Hi"}};
        expect_render(c, hi, 1, 1,
                      "<|im_start|>system\nBe \"brief\".<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                      "<|im_start|>assistant\n");
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);

    /* ChatML without a default system block */
    cw_begin(&w);
    cw_str(&w, "tokenizer.chat_template", "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}");
    g = cw_open(&w);
    if (g && eng_chat_new(&c, g, &e) == 0) {
        CHECK(eng_chat_default_system(c, NULL) == NULL);
        eng_chat_msg hi[] = {{"user", "Hi"}};
        expect_render(c, hi, 1, 0, "<|im_start|>user\nHi<|im_end|>\n");
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);

    /* Qwen 2.5's form: the default system block is a whole literal in the
     * else branch (the lines of the real template, tools branch shortened) */
    cw_begin(&w);
    cw_str(
        &w, "tokenizer.chat_template",
        "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n"
        "    {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n{%- else %}\n"
        "    {%- if messages[0]['role'] == 'system' %}\n"
        "        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n"
        "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
        "assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n");
    g = cw_open(&w);
    if (g && eng_chat_new(&c, g, &e) == 0) {
        CHECK(eng_chat_warning(c) == NULL);
        eng_chat_msg hi[] = {{"user", "Hi"}};
        expect_render(c, hi, 1, 1,
                      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
                      "assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
        eng_chat_msg sys[] = {{"system", "S"}, {"user", "Hi"}};
        expect_render(c, sys, 2, 0, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);

    /* --chat-template NAME: the family chosen, the model's BOS and no warning */
    cw_begin(&w);
    cw_str(&w, "tokenizer.chat_template", "{{ '### Instruction:' }}");
    const char *toks[] = {"<|begin_of_text|>", "<|eot_id|>"};
    cw_arr(&w, "tokenizer.ggml.tokens", ENG_GGUF_STRING, toks, 2, 0);
    cw_u32(&w, "tokenizer.ggml.bos_token_id", 0);
    cw_u32(&w, "tokenizer.ggml.eos_token_id", 1);
    g = cw_open(&w);
    if (g && eng_chat_new_named(&c, g, "llama3.1", &e) == 0) {
        CHECK_EQ_STR(eng_chat_format_name(eng_chat_get_format(c)), "llama3.1");
        CHECK(eng_chat_warning(c) == NULL);
        eng_chat_msg hi[] = {{"user", " Hi "}};
        expect_render(
            c, hi, 1, 1,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
            "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        eng_chat_free(c);
    } else {
        CHECK_MSG(0, "eng_chat_new_named: %s", e.msg);
    }
    /* Llama 3.1: a tool result is an ipython turn holding tojson of its text
     * (the expected text is jinja2's rendering of the real template) */
    if (eng_chat_new_format(&c, ENG_CHAT_LLAMA31, "<|begin_of_text|>", "<|eot_id|>", &e) == 0) {
        eng_chat_msg tool[] = {{"user", "Read a"},
                               {"assistant", "<tool_call>{}</tool_call>"},
                               {"tool", "line \"1\"\n\tend\x01 \xc3\xa9\\"}};
        expect_render(
            c, tool, 3, 1,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
            "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
            "\n\nRead a<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n<tool_call>{}</tool_call>"
            "<|eot_id|><|start_header_id|>ipython<|end_header_id|>\n\n\"line \\\"1\\\"\\n\\tend\\u0001 "
            "\xc3\xa9\\\\\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        eng_chat_free(c);
    }
    c = NULL;
    CHECK_EQ_INT(g ? eng_chat_new_named(&c, g, "alpaca", &e) : UTIL_EINVAL, UTIL_EINVAL);
    CHECK(c == NULL && strstr(e.msg, "alpaca") && strstr(e.msg, "mistral-v3-tekken"));
    if (g && eng_chat_new_named(&c, g, NULL, &e) == 0) { /* no name: recognised, or the fallback, said */
        CHECK(eng_chat_warning(c) != NULL);
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);

    /* tool results: Qwen 2.5/3 templates (they name <tool_response>) put
     * consecutive ones in one user turn; plain ChatML (OpenHermes) has a tool
     * role (both expected texts are jinja2's renderings of the real templates) */
    static const char *const tool_tpls[] = {"<|im_start|> <tool_response>", "<|im_start|>"};
    static const char *const tool_want[] = {
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nRead a<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{}\n"
        "</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n"
        "</tool_response><|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n<|im_start|>user\nu<|im_end|>\n"
        "<|im_start|>assistant\n",
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nRead a<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{}\n"
        "</tool_call><|im_end|>\n<|im_start|>tool\nr1<|im_end|>\n<|im_start|>tool\nr2<|im_end|>\n<|im_start|>assistant\n"
        "ok<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n"};
    for (size_t k = 0; k < 2; k++) {
        cw_begin(&w);
        cw_str(&w, "tokenizer.chat_template", tool_tpls[k]);
        g = cw_open(&w);
        if (g && eng_chat_new(&c, g, &e) == 0) {
            eng_chat_msg tm[] = {
                {"system", "S"}, {"user", "Read a"}, {"assistant", "<tool_call>\n{}\n</tool_call>"},
                {"tool", "r1"},  {"tool", "r2"},     {"assistant", "ok"},
                {"user", "u"}};
            expect_render(c, tm, 7, 1, tool_want[k]);
            eng_chat_free(c);
        }
        eng_gguf_free(g);
        util_buf_release(&w.b);
    }

    /* unknown template and no template: ChatML, said so */
    cw_begin(&w);
    cw_str(&w, "tokenizer.chat_template",
           "{{ '### Instruction:\\n' + messages[0]['content'] }}"); /* Alpaca */
    g = cw_open(&w);
    if (g && eng_chat_new(&c, g, &e) == 0) {
        CHECK_EQ_INT(eng_chat_get_format(c), ENG_CHAT_CHATML);
        CHECK(eng_chat_warning(c) && strstr(eng_chat_warning(c), "chatml"));
        CHECK(eng_chat_warning(c) && strstr(eng_chat_warning(c), "--chat-template"));
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);
    cw_begin(&w);
    cw_u32(&w, "general.alignment", 32);
    g = cw_open(&w);
    if (g && eng_chat_new(&c, g, &e) == 0) {
        CHECK(eng_chat_warning(c) && strstr(eng_chat_warning(c), "no chat template"));
        eng_chat_free(c);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);

    /* a template of the wrong type is an error with the key named */
    cw_begin(&w);
    cw_u32(&w, "tokenizer.chat_template", 5);
    g = cw_open(&w);
    if (g) {
        CHECK(eng_chat_new(&c, g, &e) != 0);
        CHECK(strstr(e.msg, "chat_template") != NULL);
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);
    eng_chat_free(NULL);
}

/* --- goldens: jinja2's renderings of the real templates ------------------------------ */

/* tests/golden/chat/renderings.json (tests/golden/gen_chat.py) holds each
 * template's renderings of a fixed set of conversations. Every case is
 * checked here but those that set enable_thinking (a template variable
 * cachet does not take): tool definitions, calls and results through
 * eng_chat_render_ex with the JSON text agent_json_dumps writes; the
 * template's family is the generator's "variant" (qwen2.5 and qwen3 are
 * ChatML). */
static int golden_format(const char *variant, eng_chat_format *f) {
    util_err e;
    if (strcmp(variant, "qwen2.5") == 0 || strcmp(variant, "qwen3") == 0) variant = "chatml";
    return eng_chat_format_parse(variant, f, &e) == 0 ? 0 : -1;
}

/* One conversation as render_ex's input; the strings live in the cJSON
 * document or in bufs (released by golden_conv_release). */
typedef struct golden_conv {
    eng_chat_msg m[16];
    eng_chat_msg_tools t[16];
    eng_chat_call calls[16];
    const char *tools[8];
    util_buf bufs[32];
    size_t n, nb;
    eng_chat_extra x;
} golden_conv;

static const char *golden_dumps(golden_conv *g, const cJSON *v) {
    if (g->nb == sizeof g->bufs / sizeof g->bufs[0]) return NULL;
    util_buf *b = &g->bufs[g->nb++];
    util_buf_init(b);
    agent_json_dumps(b, v);
    util_buf_append(b, "", 0);
    return b->data;
}

static void golden_conv_release(golden_conv *g) {
    for (size_t i = 0; i < g->nb; i++) util_buf_release(&g->bufs[i]);
}

/* The conversation (with tools when it has them); 0 if it does not fit. */
static size_t golden_msgs(const cJSON *conv, const cJSON *tools, golden_conv *g) {
    memset(g, 0, sizeof *g);
    const cJSON *msgs = cJSON_GetObjectItem(conv, "messages"), *it, *tc;
    size_t nc = 0;
    if (cJSON_IsTrue(cJSON_GetObjectItem(conv, "tools")))
        cJSON_ArrayForEach(it, tools) if (g->x.n_tools < 8) g->tools[g->x.n_tools++] = golden_dumps(g, it);
    g->x.tools = g->tools;
    g->x.msg = g->t;
    cJSON_ArrayForEach(it, msgs) {
        const cJSON *role = cJSON_GetObjectItem(it, "role"), *content = cJSON_GetObjectItem(it, "content");
        if (g->n == 16 || !cJSON_IsString(role) || !(cJSON_IsString(content) || cJSON_IsNull(content)))
            return 0;
        eng_chat_msg_tools *t = &g->t[g->n];
        t->calls = &g->calls[nc];
        cJSON_ArrayForEach(tc, cJSON_GetObjectItem(it, "tool_calls")) {
            const cJSON *fn = cJSON_GetObjectItem(tc, "function");
            if (nc == 16) return 0;
            eng_chat_call *c = &g->calls[nc++];
            c->id = cJSON_GetStringValue(cJSON_GetObjectItem(tc, "id"));
            c->name = cJSON_GetStringValue(cJSON_GetObjectItem(fn, "name"));
            c->arguments = golden_dumps(g, cJSON_GetObjectItem(fn, "arguments"));
            t->n_calls++;
        }
        t->call_id = cJSON_GetStringValue(cJSON_GetObjectItem(it, "tool_call_id"));
        g->m[g->n++] = (eng_chat_msg){role->valuestring,
                                      cJSON_IsString(content) ? content->valuestring : NULL};
    }
    return g->n;
}

/* A Python string literal of s (for a stand-in template). */
static void py_literal(util_buf *b, const char *s) {
    util_buf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\n')
            util_buf_puts(b, "\\n");
        else if (*s == '\'' || *s == '\\') {
            util_buf_append(b, "\\", 1);
            util_buf_append(b, s, 1);
        } else
            util_buf_append(b, s, 1);
    }
    util_buf_puts(b, "'");
}

/* The renderer for one template, from a stand-in GGUF: its chat template is
 * the strings of the real one that engine/chat.c looks for ("probes"), and
 * for ChatML the default system block jinja2 printed before the first user
 * turn of user_only; its vocabulary holds the template's BOS and EOS texts.
 * The family cachet picks from it must be the generator's variant, or for
 * a family cachet does not render (want_fallback) ChatML with a warning. */
static eng_chat *golden_chat(const cJSON *tpl, const char *variant, int want_fallback) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(tpl, "name"));
    const char *bos = cJSON_GetStringValue(cJSON_GetObjectItem(tpl, "bos"));
    const char *eos = cJSON_GetStringValue(cJSON_GetObjectItem(tpl, "eos"));
    util_buf t;
    util_buf_init(&t);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(tpl, "probes")) {
        util_buf_puts(&t, cJSON_GetStringValue(it));
        util_buf_puts(&t, "\n");
    }
    const char *user_only = NULL;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(tpl, "cases")) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "conversation")), "user_only") == 0)
            user_only = cJSON_GetStringValue(cJSON_GetObjectItem(it, "output"));
    }
    const char *at = user_only ? strstr(user_only, "<|im_start|>user") : NULL;
    if (strcmp(variant, "chatml") == 0 && at && at > user_only) {
        char *sys = malloc((size_t)(at - user_only) + 1);
        memcpy(sys, user_only, (size_t)(at - user_only));
        sys[at - user_only] = '\0';
        util_buf_puts(&t, "{% if loop.first and messages[0]['role'] != 'system' %}{{ ");
        py_literal(&t, sys);
        util_buf_puts(&t, " }}{% endif %}");
        free(sys);
    }
    cw w;
    cw_begin(&w);
    cw_str(&w, "tokenizer.chat_template", t.data ? t.data : "");
    const char *toks[2] = {bos && *bos ? bos : "<unused>", eos ? eos : "<unused>"};
    cw_arr(&w, "tokenizer.ggml.tokens", ENG_GGUF_STRING, toks, 2, 0);
    if (bos && *bos) cw_u32(&w, "tokenizer.ggml.bos_token_id", 0);
    if (eos) cw_u32(&w, "tokenizer.ggml.eos_token_id", 1);
    eng_gguf *g = cw_open(&w);
    eng_chat *c = NULL;
    util_err e;
    if (g) CHECK_MSG(eng_chat_new(&c, g, &e) == 0, "%s: %s", name, e.msg);
    if (c && want_fallback) {
        CHECK_MSG(eng_chat_get_format(c) == ENG_CHAT_CHATML && eng_chat_warning(c),
                  "%s: %s without a warning", name, eng_chat_format_name(eng_chat_get_format(c)));
    } else if (c) {
        CHECK_MSG(strcmp(eng_chat_format_name(eng_chat_get_format(c)), variant) == 0,
                  "%s: detected %s, not %s", name, eng_chat_format_name(eng_chat_get_format(c)), variant);
        CHECK_MSG(eng_chat_warning(c) == NULL, "%s: %s", name, eng_chat_warning(c));
    }
    eng_gguf_free(g);
    util_buf_release(&w.b);
    util_buf_release(&t);
    return c;
}

static int golden_plain_case(const cJSON *cs) {
    const cJSON *it;
    cJSON_ArrayForEach(it, cs) {
        const char *k = it->string;
        if (strcmp(k, "conversation") && strcmp(k, "add_generation_prompt") && strcmp(k, "output") &&
            strcmp(k, "error") && strcmp(k, "tools_in_user_message"))
            return 0;
    }
    return 1;
}

/* Renders every case of one template; counts the cases checked. */
static void golden_template(const cJSON *tpl, const cJSON *convs, const cJSON *tools, const char *variant,
                            int *checked, int *with_tools) {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(tpl, "name"));
    eng_chat *c = golden_chat(tpl, variant, 0);
    if (!c) return;
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItem(tpl, "cases")) {
        const char *conv = cJSON_GetStringValue(cJSON_GetObjectItem(cs, "conversation"));
        golden_conv g;
        size_t n = golden_msgs(cJSON_GetObjectItem(convs, conv), tools, &g);
        if (!n || !golden_plain_case(cs)) {
            golden_conv_release(&g);
            continue;
        }
        g.x.tools_in_system = cJSON_IsFalse(cJSON_GetObjectItem(cs, "tools_in_user_message"));
        int gen = cJSON_IsTrue(cJSON_GetObjectItem(cs, "add_generation_prompt"));
        const char *want = cJSON_GetStringValue(cJSON_GetObjectItem(cs, "output"));
        util_buf b;
        util_buf_init(&b);
        util_err e;
        util_err_clear(&e);
        int rc = eng_chat_render_ex(c, g.m, n, &g.x, gen, &b, NULL, NULL, &e);
        int calls = 0;
        for (size_t i = 0; i < n; i++) calls += g.t[i].n_calls > 0 || strcmp(g.m[i].role, "tool") == 0;
        *with_tools += g.x.n_tools > 0 || calls > 0;
        golden_conv_release(&g);
        if (want) {
            CHECK_MSG(rc == 0, "%s %s gen=%d: %s", name, conv, gen, e.msg);
            CHECK_MSG(rc != 0 || strcmp(b.data, want) == 0, "%s %s gen=%d:\n got: %s\nwant: %s", name, conv,
                      gen, b.data, want);
        } else {
            CHECK_MSG(rc == UTIL_EINVAL, "%s %s gen=%d: jinja2 raised (%s), cachet rendered %s", name, conv,
                      gen, cJSON_GetStringValue(cJSON_GetObjectItem(cs, "error")), b.data ? b.data : "");
        }
        util_buf_release(&b);
        ++*checked;
    }
    eng_chat_free(c);
}

static void test_golden(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/golden/chat/renderings.json", check_root());
    char *data;
    size_t len;
    util_err e;
    CHECK_MSG(util_read_file(&data, &len, path, &e) == 0, "%s", e.msg);
    if (!data) return;
    cJSON *doc = cJSON_ParseWithLength(data, len);
    free(data);
    CHECK(doc != NULL);
    if (!doc) return;
    const cJSON *convs = cJSON_GetObjectItem(doc, "conversations"), *tpl;
    int checked = 0, templates = 0, with_tools = 0;
    cJSON_ArrayForEach(tpl, cJSON_GetObjectItem(doc, "templates")) {
        const char *variant = cJSON_GetStringValue(cJSON_GetObjectItem(tpl, "variant"));
        eng_chat_format f;
        if (strcmp(variant, "gemma2") == 0) continue; /* Gemma 3's renderer: test_gemma */
        if (golden_format(variant, &f)) { /* a family cachet does not render: the fallback, said */
            eng_chat_free(golden_chat(tpl, variant, 1));
            continue;
        }
        if (strncmp(variant, "qwen", 4) == 0) variant = "chatml";
        golden_template(tpl, convs, cJSON_GetObjectItem(doc, "tools"), variant, &checked, &with_tools);
        templates++;
    }
    printf("  chat goldens: %d renderings of %d templates checked (%d with tools, calls or results)\n",
           checked, templates, with_tools);
    CHECK(checked >= 300);
    CHECK(with_tools >= 150);
    cJSON_Delete(doc);
}

/* --- real vocabularies (make vocabs; skipped without them) ------------------------- */

static int count_id(const int32_t *ids, size_t n, int32_t id) {
    int k = 0;
    for (size_t i = 0; i < n; i++) k += ids[i] == id;
    return k;
}

/* The id of a special token's text, or -1. */
static int32_t special_id(const eng_tokenizer *t, const char *text) {
    int32_t *ids = NULL;
    size_t n = 0;
    util_err e;
    int32_t id = eng_tokenize(t, text, strlen(text), 0, 1, &ids, &n, &e) == 0 && n == 1 ? ids[0] : -1;
    free(ids);
    return id;
}

/* Llama 3's vocabulary (no template in the file: --chat-template llama3.1),
 * and Phi-3's and Qwen 2's with their templates: recognised, and the
 * markers tokenized as their special tokens while the same text inside a
 * message stays plain. */
static void test_real_vocabs(void) {
    static const struct {
        const char *vocab, *name, *want, *marker;
    } cases[] = {
        {"llama-bpe", "llama3.1", "llama3.1", "<|eot_id|>"},
        {"phi-3", NULL, "phi3-mini", "<|end|>"},
        {"qwen2", NULL, "chatml", "<|im_end|>"}, /* with a default system block */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/models/vocab/ggml-vocab-%s.gguf", check_root(), cases[k].vocab);
        FILE *f = fopen(path, "rb");
        if (!f) {
            CHECK_SKIP("%s: no models/vocab (make vocabs)", cases[k].vocab);
            continue;
        }
        fclose(f);
        eng_gguf *g = NULL;
        eng_tokenizer *t = NULL;
        eng_chat *c = NULL;
        util_err e;
        if (eng_gguf_open(&g, path, &e) || eng_tokenizer_new(&t, g, &e) ||
            eng_chat_new_named(&c, g, cases[k].name, &e)) {
            CHECK_MSG(0, "%s: %s", cases[k].vocab, e.msg);
        } else {
            CHECK_EQ_STR(eng_chat_format_name(eng_chat_get_format(c)), cases[k].want);
            CHECK(eng_chat_warning(c) == NULL);
            if (strcmp(cases[k].vocab, "qwen2") == 0) CHECK(eng_chat_default_system(c, NULL) != NULL);
            int32_t mk = special_id(t, cases[k].marker);
            CHECK_MSG(mk >= 0, "%s: %s is not one special token", cases[k].vocab, cases[k].marker);
            eng_chat_msg m[] = {{"user", "Hi"}, {"assistant", "Hello"}, {"user", cases[k].marker}};
            int32_t *ids = NULL;
            size_t n = 0;
            CHECK(eng_chat_tokenize(c, t, m, 3, 1, NULL, &ids, &n, &e) == 0);
            /* 3.1's system header, Qwen 2's default system block: one turn more */
            int turns = 3 +
                        (strcmp(cases[k].want, "llama3.1") == 0 || eng_chat_default_system(c, NULL) != NULL);
            CHECK_MSG(count_id(ids, n, mk) == turns, "%s: %d x %s, want %d (the message's text is plain)",
                      cases[k].vocab, count_id(ids, n, mk), cases[k].marker, turns);
            if (strcmp(cases[k].want, "llama3.1") == 0)
                CHECK(n > 2 && ids[0] == special_id(t, "<|begin_of_text|>") &&
                      ids[1] == special_id(t, "<|start_header_id|>"));
            free(ids);
        }
        eng_chat_free(c);
        eng_tokenizer_free(t);
        eng_gguf_free(g);
    }
}

/* --- the agent's conversations: tiers 0-1 stable, tool results once ----------------- */

/* The agent's conversation as it grows over two turns with a tool call
 * (agent/loop.c: the system prompt, tier 2 as the family's table says,
 * results in its role), rendered by agent_format_render after each step:
 * under every family the system prompt (tiers 0-1) is in every rendering,
 * at the same offset, after the same bytes. */
static void test_tiers(void) {
    static const char sys[] = "You are cachet.\n\n# Tools\nread_file(path)"; /* tiers 0-1 */
    static const char t2[] = "Session: 2024-07-26, linux, /ws";
    for (int fi = ENG_CHAT_CHATML; fi <= ENG_CHAT_DEEPSEEK_R1; fi++) {
        eng_chat_format f = (eng_chat_format)fi;
        const agent_format *af = agent_format_of(f);
        eng_chat *c = NULL;
        util_err e;
        CHECK(eng_chat_new_format(&c, f, "<s>", "</s>", &e) == 0);
        if (!c) continue;
        char u1[128];
        snprintf(u1, sizeof u1, "%s\n\nRead a.c", t2);
        eng_chat_msg m[8];
        size_t n = 0;
        m[n++] = (eng_chat_msg){"system", sys};
        if (af->tier2 == AGENT_TIER2_SYSTEM) m[n++] = (eng_chat_msg){"system", t2};
        m[n++] = (eng_chat_msg){"user", af->tier2 == AGENT_TIER2_SYSTEM ? "Read a.c" : u1};
        const size_t steps[] = {n, n + 2, n + 4};
        m[n++] = (eng_chat_msg){"assistant", "<tool_call>{\"name\": \"read_file\"}</tool_call>"};
        m[n++] = (eng_chat_msg){af->tool_result_role,
                                "<tool_response>\n{\"result\": \"int x;\"}\n</tool_response>"};
        m[n++] = (eng_chat_msg){"assistant", "It declares x."};
        m[n++] = (eng_chat_msg){"user", "Thanks."};
        char *first = NULL;
        size_t at0 = 0;
        for (size_t k = 0; k < 3; k++) {
            util_buf b;
            util_buf_init(&b);
            eng_tok_span *plain = NULL;
            size_t np = 0;
            int rc = agent_format_render(af, c, m, steps[k], &b, &plain, &np, &e);
            CHECK_MSG(rc == 0, "%s step %zu: %s", eng_chat_format_name(f), k, rc ? e.msg : "");
            const char *at = rc ? NULL : strstr(b.data, sys);
            CHECK_MSG(at != NULL, "%s step %zu: the system prompt is not rendered", eng_chat_format_name(f),
                      k);
            if (at && k == 0) {
                at0 = (size_t)(at - b.data);
                first = strndup(b.data, at0 + sizeof sys - 1);
            } else if (at && first) {
                CHECK_MSG((size_t)(at - b.data) == at0 && memcmp(b.data, first, at0 + sizeof sys - 1) == 0,
                          "%s step %zu: tiers 0-1 moved (offset %zu, was %zu)", eng_chat_format_name(f), k,
                          (size_t)(at - b.data), at0);
            }
            free(plain);
            util_buf_release(&b);
        }
        free(first);
        eng_chat_free(c);
    }
}

/* Qwen's templates wrap each tool result in <tool_response> themselves:
 * eng_chat_wraps_tool_results says so (plain ChatML does not), and the
 * agent's bare result (agent_toolresult_format_as, wrapped 0) renders with
 * one wrapper, not two. */
static void test_tool_response_once(void) {
    static const char *const tpls[] = {"<|im_start|> <tool_response>", "<|im_start|>"};
    for (int k = 0; k < 2; k++) {
        cw w;
        cw_begin(&w);
        cw_str(&w, "tokenizer.chat_template", tpls[k]);
        eng_gguf *g = cw_open(&w);
        eng_chat *c = NULL;
        util_err e;
        CHECK(g && eng_chat_new(&c, g, &e) == 0);
        if (c) {
            int wraps = eng_chat_wraps_tool_results(c);
            CHECK_MSG(wraps == (k == 0), "template %d: wraps %d", k, wraps);
            util_buf r, b;
            util_buf_init(&r);
            util_buf_init(&b);
            CHECK(agent_toolresult_format_as(&r, "read_file", 1, "int x;", !wraps) == 0);
            eng_chat_msg m[] = {
                {"user", "Read a.c"}, {"assistant", "<tool_call>{}</tool_call>"}, {"tool", r.data}};
            CHECK(eng_chat_render(c, m, 3, 1, &b, &e) == 0);
            int count = 0;
            for (const char *p = b.data; p && (p = strstr(p, "<tool_response>")); p++) count++;
            CHECK_MSG(count == 1, "template %d: %d <tool_response> in %s", k, count, b.data);
            CHECK(strstr(b.data, "{\"name\":\"read_file\",\"result\":\"int x;\"}") != NULL);
            util_buf_release(&r);
            util_buf_release(&b);
        }
        eng_chat_free(c);
        eng_gguf_free(g);
        util_buf_release(&w.b);
    }
}

void test_chat(void) {
    CHECK_CASE(detection) test_detection();
    CHECK_CASE(gemma) test_gemma();
    CHECK_CASE(smollm2) test_smollm2();
    CHECK_CASE(golden) test_golden();
    CHECK_CASE(tiers) test_tiers();
    CHECK_CASE(tool_response) test_tool_response_once();
    CHECK_CASE(real_vocabs) test_real_vocabs();
}
