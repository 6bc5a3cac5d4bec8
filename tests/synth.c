/* tests/synth.c: the synthetic-model writer (see synth.h). Builds the GGUF
 * header (metadata, vocabulary, tensor table) in memory, then streams the
 * tensors in chunks of rows that worker threads fill and quantize, each row
 * from its own seeded stream so the bytes do not depend on the thread count.
 * The reference quantizers aim at valid blocks, not quality; the engine's own
 * from_float is used where the type has one. Writes llama and gemma3. */
#include "synth.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/gguf.h"
#include "../engine/quant.h"
#include "../util/buf.h"
#include "helpers.h" /* th_rng_*: the seeded streams (one draw per value keeps the 1B presets fast) */

#define SYNTH_ALIGN       32
#define SYNTH_MAX_DIM     (1 << 24)  /* the engine's bound on a shape key */
#define SYNTH_CHUNK       (8u << 20) /* output bytes per chunk of rows */
#define SYNTH_MAX_THREADS 64

/* --- reference quantizers ----------------------------------------------- */

static void put_u16(unsigned char *p, uint16_t v) {
    p[0] = (unsigned char)(v & 0xFF);
    p[1] = (unsigned char)(v >> 8);
}

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The f32 value a stored f16 scale decodes to, so quants match what is read. */
static float f16_round(float f) { return eng_f16_to_f32(eng_f32_to_f16(f)); }

/* Q4_0 / Q5_0: symmetric, d = signed max / -(levels/2), as ggml's reference. */
static void quant_q4_0(const float *x, unsigned char *b) {
    float amax = 0, max = 0;
    for (int i = 0; i < 32; i++)
        if (fabsf(x[i]) > amax) amax = fabsf(x[i]), max = x[i];
    float d = max / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    put_u16(b, eng_f32_to_f16(d));
    for (int j = 0; j < 16; j++) {
        int q0 = clampi((int)(x[j] * id + 8.5f), 0, 15), q1 = clampi((int)(x[j + 16] * id + 8.5f), 0, 15);
        b[2 + j] = (unsigned char)(q0 | (q1 << 4));
    }
}

static void quant_q5_0(const float *x, unsigned char *b) {
    float amax = 0, max = 0;
    for (int i = 0; i < 32; i++)
        if (fabsf(x[i]) > amax) amax = fabsf(x[i]), max = x[i];
    float d = max / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    uint32_t qh = 0;
    put_u16(b, eng_f32_to_f16(d));
    for (int j = 0; j < 16; j++) {
        int q0 = clampi((int)(x[j] * id + 16.5f), 0, 31), q1 = clampi((int)(x[j + 16] * id + 16.5f), 0, 31);
        b[6 + j] = (unsigned char)((q0 & 0xF) | ((q1 & 0xF) << 4));
        qh |= (uint32_t)(q0 >> 4) << j;
        qh |= (uint32_t)(q1 >> 4) << (j + 16);
    }
    put_u32(b + 2, qh);
}

/* Min and max of a 32-value block; plain compares (no NaNs here) so the
 * compiler vectorizes them, which fminf's NaN rules prevent. */
static void block_range(const float *x, float *mn_out, float *mx_out) {
    float mn = x[0], mx = x[0];
    for (int i = 1; i < 32; i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    *mn_out = mn;
    *mx_out = mx;
}

/* Q4_1 / Q5_1: affine, d = (max - min) / (levels - 1), m = min. */
static void quant_q4_1(const float *x, unsigned char *b) {
    float mn, mx;
    block_range(x, &mn, &mx);
    float d = (mx - mn) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    put_u16(b, eng_f32_to_f16(d));
    put_u16(b + 2, eng_f32_to_f16(mn));
    for (int j = 0; j < 16; j++) {
        int q0 = clampi((int)((x[j] - mn) * id + 0.5f), 0, 15);
        int q1 = clampi((int)((x[j + 16] - mn) * id + 0.5f), 0, 15);
        b[4 + j] = (unsigned char)(q0 | (q1 << 4));
    }
}

static void quant_q5_1(const float *x, unsigned char *b) {
    float mn, mx;
    block_range(x, &mn, &mx);
    float d = (mx - mn) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    uint32_t qh = 0;
    put_u16(b, eng_f32_to_f16(d));
    put_u16(b + 2, eng_f32_to_f16(mn));
    for (int j = 0; j < 16; j++) {
        int q0 = clampi((int)((x[j] - mn) * id + 0.5f), 0, 31);
        int q1 = clampi((int)((x[j + 16] - mn) * id + 0.5f), 0, 31);
        b[8 + j] = (unsigned char)((q0 & 0xF) | ((q1 & 0xF) << 4));
        qh |= (uint32_t)(q0 >> 4) << j;
        qh |= (uint32_t)(q1 >> 4) << (j + 16);
    }
    put_u32(b + 4, qh);
}

/* Q4_K / Q5_K: eight sub-blocks of 32 with 6-bit scales and mins relative to
 * the super-block's d and dmin; q = round((x + min) / scale) in 0..levels. */
static void quant_qk_affine(const float *x, unsigned char *b, int levels) {
    float scale[8], mins[8], smax = 0, mmax = 0;
    for (int j = 0; j < 8; j++) {
        float mn = 0, mx = x[32 * j];
        for (int i = 0; i < 32; i++) mn = fminf(mn, x[32 * j + i]), mx = fmaxf(mx, x[32 * j + i]);
        scale[j] = (mx - mn) / (float)levels;
        mins[j] = -mn;
        smax = fmaxf(smax, scale[j]);
        mmax = fmaxf(mmax, mins[j]);
    }
    float d = f16_round(smax / 63.0f), dmin = f16_round(mmax / 63.0f);
    int sc[8], mq[8];
    for (int j = 0; j < 8; j++) {
        sc[j] = d > 0 ? clampi((int)lrintf(scale[j] / d), 0, 63) : 0;
        mq[j] = dmin > 0 ? clampi((int)lrintf(mins[j] / dmin), 0, 63) : 0;
    }
    put_u16(b, eng_f32_to_f16(d));
    put_u16(b + 2, eng_f32_to_f16(dmin));
    unsigned char *s = b + 4;
    for (int j = 0; j < 4; j++) {
        s[j] = (unsigned char)(sc[j] | ((sc[j + 4] >> 4) << 6));
        s[j + 4] = (unsigned char)(mq[j] | ((mq[j + 4] >> 4) << 6));
        s[j + 8] = (unsigned char)((sc[j + 4] & 0xF) | ((mq[j + 4] & 0xF) << 4));
    }
    unsigned char *qh = levels == 31 ? b + 16 : NULL, *qs = levels == 31 ? b + 48 : b + 16;
    if (qh) memset(qh, 0, 32);
    for (int g = 0; g < 4; g++) {
        for (int l = 0; l < 32; l++) {
            int q[2];
            for (int h = 0; h < 2; h++) {
                int j = 2 * g + h;
                float ds = d * (float)sc[j], m = dmin * (float)mq[j];
                float v = x[64 * g + 32 * h + l];
                q[h] = ds > 0 ? clampi((int)lrintf((v + m) / ds), 0, levels) : 0;
                if (qh && (q[h] & 16)) qh[l] |= (unsigned char)(1u << j);
            }
            qs[32 * g + l] = (unsigned char)((q[0] & 0xF) | ((q[1] & 0xF) << 4));
        }
    }
}

/* Q6_K: sixteen sub-blocks of 16 with int8 scales; q in -32..31. */
static void quant_q6_k(const float *x, unsigned char *b) {
    float scale[16], smax = 0;
    for (int j = 0; j < 16; j++) {
        float amax = 0;
        for (int i = 0; i < 16; i++) amax = fmaxf(amax, fabsf(x[16 * j + i]));
        scale[j] = amax / 31.0f;
        smax = fmaxf(smax, scale[j]);
    }
    float d = f16_round(smax / 127.0f);
    int sc[16];
    for (int j = 0; j < 16; j++) sc[j] = d > 0 ? clampi((int)lrintf(scale[j] / d), -128, 127) : 0;
    unsigned char *ql = b, *qh = b + 128;
    memset(b, 0, 192);
    for (int j = 0; j < 16; j++) b[192 + j] = (unsigned char)(int8_t)sc[j];
    put_u16(b + 208, eng_f32_to_f16(d));
    int q[256];
    for (int i = 0; i < 256; i++) {
        float ds = d * (float)sc[i / 16];
        q[i] = (ds != 0.0f ? clampi((int)lrintf(x[i] / ds), -32, 31) : 0) + 32;
    }
    for (int h = 0; h < 2; h++) {
        for (int l = 0; l < 32; l++) {
            int q0 = q[128 * h + l], q1 = q[128 * h + l + 32], q2 = q[128 * h + l + 64],
                q3 = q[128 * h + l + 96];
            ql[64 * h + l] = (unsigned char)((q0 & 0xF) | ((q2 & 0xF) << 4));
            ql[64 * h + l + 32] = (unsigned char)((q1 & 0xF) | ((q3 & 0xF) << 4));
            qh[32 * h + l] = (unsigned char)((q0 >> 4) | ((q1 >> 4) << 2) | ((q2 >> 4) << 4) |
                                             ((q3 >> 4) << 6));
        }
    }
}

int synth_type_ok(uint32_t type) {
    switch (type) {
    case ENG_TYPE_F32:
    case ENG_TYPE_F16:
    case ENG_TYPE_BF16:
    case ENG_TYPE_Q4_0:
    case ENG_TYPE_Q4_1:
    case ENG_TYPE_Q5_0:
    case ENG_TYPE_Q5_1:
    case ENG_TYPE_Q8_0:
    case ENG_TYPE_Q4_K:
    case ENG_TYPE_Q5_K:
    case ENG_TYPE_Q6_K: return 1;
    default: return 0;
    }
}

int synth_quantize_row(uint32_t type, const float *src, void *dst, int64_t n) {
    const eng_type_traits *tr = eng_type_get(type);
    if (!synth_type_ok(type) || !tr || n % tr->blck) return -1;
    unsigned char *b = dst;
    int64_t nb = n / tr->blck;
    switch (type) {
    case ENG_TYPE_F32:
    case ENG_TYPE_F16:
    case ENG_TYPE_BF16:
    case ENG_TYPE_Q8_0:
        tr->from_float(src, dst, n); /* the engine's own: the formats are exact or activation-grade */
        return 0;
    default: break;
    }
    for (int64_t i = 0; i < nb; i++) {
        const float *x = src + i * tr->blck;
        unsigned char *o = b + (size_t)i * tr->bytes;
        switch (type) {
        case ENG_TYPE_Q4_0: quant_q4_0(x, o); break;
        case ENG_TYPE_Q4_1: quant_q4_1(x, o); break;
        case ENG_TYPE_Q5_0: quant_q5_0(x, o); break;
        case ENG_TYPE_Q5_1: quant_q5_1(x, o); break;
        case ENG_TYPE_Q4_K: quant_qk_affine(x, o, 15); break;
        case ENG_TYPE_Q5_K: quant_qk_affine(x, o, 31); break;
        case ENG_TYPE_Q6_K: quant_q6_k(x, o); break;
        default: return -1;
        }
    }
    return 0;
}

/* --- metadata ------------------------------------------------------------ */

typedef struct kvw {
    util_buf b;
    uint64_t n;
    int oom;
} kvw;

static void w_raw(kvw *w, const void *p, size_t n) {
    if (util_buf_append(&w->b, p, n)) w->oom = 1;
}

static void w_u32(kvw *w, uint32_t v) {
    unsigned char p[4];
    put_u32(p, v);
    w_raw(w, p, 4);
}

static void w_u64(kvw *w, uint64_t v) {
    unsigned char p[8];
    put_u64(p, v);
    w_raw(w, p, 8);
}

static void w_f32(kvw *w, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    w_u32(w, u);
}

static void w_str(kvw *w, const char *s, size_t n) {
    w_u64(w, n);
    w_raw(w, s, n);
}

static void kv_key(kvw *w, const char *key, uint32_t vtype) {
    w_str(w, key, strlen(key));
    w_u32(w, vtype);
    w->n++;
}

static void kv_u32(kvw *w, const char *key, uint32_t v) {
    kv_key(w, key, 4);
    w_u32(w, v);
}

static void kv_f32(kvw *w, const char *key, float v) {
    kv_key(w, key, 6);
    w_f32(w, v);
}

static void kv_bool(kvw *w, const char *key, int v) {
    unsigned char c = v ? 1 : 0;
    kv_key(w, key, 7);
    w_raw(w, &c, 1);
}

static void kv_str(kvw *w, const char *key, const char *s) {
    kv_key(w, key, 8);
    w_str(w, s, strlen(s));
}

/* "<arch>.<suffix>" keys. */
static void kv_arch_u32(kvw *w, const char *arch, const char *suffix, uint32_t v) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    kv_u32(w, key, v);
}

static void kv_arch_f32(kvw *w, const char *arch, const char *suffix, float v) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    kv_f32(w, key, v);
}

/* An array header: key, type 9, element type, count. */
static void kv_arr(kvw *w, const char *key, uint32_t elem, uint64_t n) {
    kv_key(w, key, 9);
    w_u32(w, elem);
    w_u64(w, n);
}

/* GPT-2's byte-to-unicode map: printable bytes map to themselves, the other
 * 68 to U+0100.. in increasing order; returned as UTF-8 (1 or 2 bytes). */
static int byte_text(unsigned b, char out[4]) {
    unsigned cp = b, n = 0;
    int printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    if (!printable) {
        for (unsigned c = 0; c < b; c++)
            if (!((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae)) n++;
        cp = 256 + n;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

/* Merges in rank order; each one's parts exist by the time it applies, so a
 * prefix of the list is itself valid. "\xc4\xa0" is U+0120, the space byte.
 * The gemma3 vocabulary uses the same pieces with U+2581 for the space. */
static const char *const synth_merges[] = {
    "\xc4\xa0 t", "h e", "i n", "\xc4\xa0t he", "a b", "ab c", "e r", "o n", "\xc4\xa0 a", "r e",
};
#define N_MERGES (sizeof synth_merges / sizeof synth_merges[0])

/* The text a merge produces: its two parts joined, the BPE space mapped to
 * SentencePiece's U+2581 when spm. */
static size_t merge_text(const char *merge, int spm, char *out, size_t cap) {
    size_t o = 0;
    for (const char *p = merge; *p && o + 3 < cap; p++) {
        if (*p == ' ') continue;
        if (spm && p[0] == '\xc4' && p[1] == '\xa0') {
            memcpy(out + o, "\xe2\x96\x81", 3);
            o += 3;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    return o;
}

static const char *const synth_controls[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};

/* ChatML, in the SmolLM2 template's shape (with a default system block). */
static const char synth_template[] =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a synthetic test model.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/* Gemma's turn format: bos, then user/model turns (assistant renamed). */
static const char synth_template_gemma[] =
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

/* llama vocabulary: ids 0-2 control, 3-258 the bytes, then merge results while
 * the size allows, then "tokN" fillers. */
static void write_vocab_bpe(kvw *w, int n_vocab) {
    size_t n_merges = (size_t)(n_vocab - SYNTH_MIN_VOCAB);
    if (n_merges > N_MERGES) n_merges = N_MERGES;
    kv_str(w, "tokenizer.ggml.model", "gpt2");
    kv_str(w, "tokenizer.ggml.pre", "smollm");
    kv_arr(w, "tokenizer.ggml.tokens", 8, (uint64_t)n_vocab);
    int id = 0;
    for (; id < 3; id++) w_str(w, synth_controls[id], strlen(synth_controls[id]));
    for (unsigned c = 0; c < 256; c++, id++) {
        char t[4];
        w_str(w, t, (size_t)byte_text(c, t));
    }
    for (size_t k = 0; k < n_merges; k++, id++) {
        char t[64];
        w_str(w, t, merge_text(synth_merges[k], 0, t, sizeof t));
    }
    for (; id < n_vocab; id++) {
        char t[32];
        int k = snprintf(t, sizeof t, "tok%d", id);
        w_str(w, t, (size_t)k);
    }
    kv_arr(w, "tokenizer.ggml.token_type", 5, (uint64_t)n_vocab);
    for (id = 0; id < n_vocab; id++) w_u32(w, id < 3 ? 3u : 1u); /* control : normal */
    kv_arr(w, "tokenizer.ggml.merges", 8, n_merges);
    for (size_t k = 0; k < n_merges; k++) w_str(w, synth_merges[k], strlen(synth_merges[k]));
    kv_u32(w, "tokenizer.ggml.bos_token_id", 1);
    kv_u32(w, "tokenizer.ggml.eos_token_id", 2);
    kv_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    kv_u32(w, "tokenizer.ggml.padding_token_id", 2);
    kv_bool(w, "tokenizer.ggml.add_bos_token", 0);
    kv_str(w, "tokenizer.chat_template", synth_template);
}

/* gemma3 vocabulary (SentencePiece "llama" model, Gemma's special ids 0-3):
 * 0 <pad>, 1 <eos>, 2 <bos>, 3 <unk>, 4 <start_of_turn>, 5 <end_of_turn>,
 * 6-261 <0x00>..<0xFF>, 262 U+2581 (the escaped space: as bytes it would
 * decode to U+2581, not ' '), then while the size allows the printable ASCII
 * characters, the merge pieces (scored by rank), and "tokN" fillers.
 * Anything else falls back to byte tokens, so all text round-trips. */
enum { GEMMA_N_SPECIAL = 6, GEMMA_N_CHARS = 1 + 94 }; /* U+2581 and '!'..'~' */
static const char *const gemma_specials[GEMMA_N_SPECIAL] = {
    "<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>",
};

/* Text, type and score of gemma3 vocabulary entry id. */
static size_t gemma_token(int id, char *t, size_t cap, uint32_t *type, float *score) {
    static const char hex[] = "0123456789ABCDEF";
    int orig = id;
    *score = 0.0f;
    if (id < GEMMA_N_SPECIAL) {
        *type = id == 3 ? 2u : 3u; /* unknown : control */
        return (size_t)snprintf(t, cap, "%s", gemma_specials[id]);
    }
    id -= GEMMA_N_SPECIAL;
    if (id < 256) {
        *type = 6; /* byte */
        return (size_t)snprintf(t, cap, "<0x%c%c>", hex[id >> 4], hex[id & 15]);
    }
    id -= 256;
    *type = 1;
    if (id < GEMMA_N_CHARS) {
        *score = -1000.0f - (float)id; /* never a merge result */
        if (id == 0) {
            memcpy(t, "\xe2\x96\x81", 3);
            return 3;
        }
        t[0] = (char)(0x20 + id);
        return 1;
    }
    id -= GEMMA_N_CHARS;
    if (id < (int)N_MERGES) {
        *score = -(float)(id + 1); /* earlier merges first */
        return merge_text(synth_merges[id], 1, t, cap);
    }
    *score = -2000.0f;
    return (size_t)snprintf(t, cap, "tok%d", orig);
}

static void write_vocab_spm(kvw *w, int n_vocab) {
    char t[64];
    uint32_t type;
    float score;
    kv_str(w, "tokenizer.ggml.model", "llama");
    kv_str(w, "tokenizer.ggml.pre", "default");
    kv_arr(w, "tokenizer.ggml.tokens", 8, (uint64_t)n_vocab);
    for (int id = 0; id < n_vocab; id++) w_str(w, t, gemma_token(id, t, sizeof t, &type, &score));
    kv_arr(w, "tokenizer.ggml.scores", 6, (uint64_t)n_vocab);
    for (int id = 0; id < n_vocab; id++) {
        gemma_token(id, t, sizeof t, &type, &score);
        w_f32(w, score);
    }
    kv_arr(w, "tokenizer.ggml.token_type", 5, (uint64_t)n_vocab);
    for (int id = 0; id < n_vocab; id++) {
        gemma_token(id, t, sizeof t, &type, &score);
        w_u32(w, type);
    }
    kv_u32(w, "tokenizer.ggml.bos_token_id", 2);
    kv_u32(w, "tokenizer.ggml.eos_token_id", 1);
    kv_u32(w, "tokenizer.ggml.unknown_token_id", 3);
    kv_u32(w, "tokenizer.ggml.padding_token_id", 0);
    kv_bool(w, "tokenizer.ggml.add_bos_token", 1);
    kv_bool(w, "tokenizer.ggml.add_eos_token", 0);
    kv_bool(w, "tokenizer.ggml.add_space_prefix", 0);
    kv_str(w, "tokenizer.chat_template", synth_template_gemma);
}

/* --- tensors ------------------------------------------------------------- */

/* T_BIAS: 1-D f32, normal(0, std); T_ROPEF: Llama 3's rope_freqs for rope base std */
typedef enum { T_NORM, T_MAT, T_BIAS, T_ROPEF } tkind;

typedef struct tdesc {
    char name[64];
    int64_t ne0, ne1; /* ne1 = 1 for vectors */
    uint32_t type;
    tkind kind;
    float std;
    uint64_t bytes;
    uint64_t offset;
} tdesc;

synth_params synth_defaults(void) {
    synth_params p = {
        .arch = SYNTH_ARCH_LLAMA,
        .n_layer = 2,
        .n_embd = 64,
        .n_head = 4,
        .n_kv_head = 2,
        .n_ff = 128,
        .n_vocab = 320,
        .head_dim = 0,
        .n_ctx = 2048,
        .rope_base = 10000.0f,
        .swa_window = 512,
        .wtype = ENG_TYPE_Q4_1,
        .etype = ENG_TYPE_Q8_0,
        .otype = ENG_TYPE_Q8_0,
        .tied = 1,
        .seed = 1,
        .n_threads = 0,
        .name = NULL,
    };
    return p;
}

int synth_min_vocab(const synth_params *p) {
    return p->arch == SYNTH_ARCH_GEMMA3 ? SYNTH_MIN_VOCAB_GEMMA3 : SYNTH_MIN_VOCAB;
}

static const char *arch_name(synth_arch a) {
    return a == SYNTH_ARCH_GEMMA3      ? "gemma3"
           : a == SYNTH_ARCH_QWEN2     ? "qwen2"
           : a == SYNTH_ARCH_QWEN3     ? "qwen3"
           : a == SYNTH_ARCH_PHI3      ? "phi3"
           : a == SYNTH_ARCH_DEEPSEEK2 ? "deepseek2"
                                       : "llama";
}

int synth_tensor_count(const synth_params *p) {
    int per_layer = p->arch == SYNTH_ARCH_GEMMA3      ? 13
                    : p->arch == SYNTH_ARCH_QWEN2     ? 12
                    : p->arch == SYNTH_ARCH_QWEN3     ? 11
                    : p->arch == SYNTH_ARCH_PHI3      ? 6
                    : p->arch == SYNTH_ARCH_DEEPSEEK2 ? (p->q_lora_rank ? 12 : 10)
                                                      : 9;
    return 2 + per_layer * p->n_layer + (p->tied ? 0 : 1) + (p->rope_freqs ? 1 : 0);
}

static int64_t head_dim_of(const synth_params *p) {
    return p->head_dim ? p->head_dim : p->n_head > 0 ? p->n_embd / p->n_head : 0;
}

static void add_t(tdesc *t, int *n, const char *name, int64_t ne0, int64_t ne1, uint32_t type, tkind kind,
                  float std) {
    tdesc *d = &t[(*n)++];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->ne0 = ne0;
    d->ne1 = ne1;
    d->type = kind != T_MAT ? ENG_TYPE_F32 : type;
    d->kind = kind;
    d->std = std;
    d->bytes = (uint64_t)eng_type_row_size(d->type, ne0) * (uint64_t)ne1;
}

/* llama.cpp's use_more_bits (llama-quant.cpp): layer il of n gets the _M
 * mixes' higher type for attn_v and ffn_down. */
static int more_bits(int il, int n) { return il < n / 8 || il >= 7 * n / 8 || (il - n / 8) % 3 == 2; }

/* The tensor list in file order (llama.cpp's converter order). */
static tdesc *plan(const synth_params *p, int *count) {
    int n = 0, total = synth_tensor_count(p);
    tdesc *t = calloc((size_t)total, sizeof *t);
    if (!t) return NULL;
    int64_t E = p->n_embd, hd = head_dim_of(p);
    int64_t Q = p->n_head * hd, KV = p->n_kv_head * hd, F = p->n_ff;
    int gemma = p->arch == SYNTH_ARCH_GEMMA3, qwen2 = p->arch == SYNTH_ARCH_QWEN2;
    int phi3 = p->arch == SYNTH_ARCH_PHI3, ds2 = p->arch == SYNTH_ARCH_DEEPSEEK2;
    int qk_norm = gemma || p->arch == SYNTH_ARCH_QWEN3;
    float es = 2.0f / sqrtf((float)E); /* logits of order 1-2 */
    add_t(t, &n, "token_embd.weight", E, p->n_vocab, p->etype, T_MAT, es);
    add_t(t, &n, "output_norm.weight", E, 1, 0, T_NORM, 0);
    if (!p->tied) add_t(t, &n, "output.weight", E, p->n_vocab, p->otype, T_MAT, es);
    for (int il = 0; il < p->n_layer; il++) {
        char nm[64];
        const uint32_t mixed = p->mix_type && more_bits(il, p->n_layer) ? p->mix_type : p->wtype;
#define TT(suffix, ne0, ne1, kind, std, type)                    \
    do {                                                         \
        snprintf(nm, sizeof nm, "blk.%d." suffix ".weight", il); \
        add_t(t, &n, nm, ne0, ne1, type, kind, std);             \
    } while (0);
#define T(suffix, ne0, ne1, kind, std) TT(suffix, ne0, ne1, kind, std, p->wtype)
        /* unit-variance projections; the residual writers at half that.
         * gemma3's norms are stored as 1 + w, so all of them sit near 1 */
        T("attn_norm", E, 1, T_NORM, 0)
        if (ds2) {
            /* llama.cpp's order and shapes (the unsplit attn_kv_b of the
             * converter before split k_b / v_b): per head, q and k are
             * [nope | rope] and kv_b's rows [k_nope | v] */
            int64_t qr = p->q_lora_rank, kvr = p->kv_lora_rank, qk = p->qk_nope + p->qk_rope;
            if (qr) {
                T("attn_q_a", E, qr, T_MAT, 1.0f / sqrtf((float)E))
                T("attn_q_a_norm", qr, 1, T_NORM, 0)
                T("attn_q_b", qr, p->n_head * qk, T_MAT, 1.0f / sqrtf((float)qr))
            } else {
                T("attn_q", E, p->n_head * qk, T_MAT, 1.0f / sqrtf((float)E))
            }
            T("attn_kv_a_mqa", E, kvr + p->qk_rope, T_MAT, 1.0f / sqrtf((float)E))
            T("attn_kv_a_norm", kvr, 1, T_NORM, 0)
            TT("attn_kv_b", kvr, p->n_head * (p->qk_nope + p->v_head_dim), T_MAT, 1.0f / sqrtf((float)kvr),
               mixed)
        } else if (phi3) {
            T("attn_qkv", E, Q + 2 * KV, T_MAT, 1.0f / sqrtf((float)E))
        } else {
            T("attn_q", E, Q, T_MAT, 1.0f / sqrtf((float)E))
            T("attn_k", E, KV, T_MAT, 1.0f / sqrtf((float)E))
            TT("attn_v", E, KV, T_MAT, 1.0f / sqrtf((float)E), mixed)
        }
        if (qwen2) {
            snprintf(nm, sizeof nm, "blk.%d.attn_q.bias", il);
            add_t(t, &n, nm, Q, 1, 0, T_BIAS, 0.1f);
            snprintf(nm, sizeof nm, "blk.%d.attn_k.bias", il);
            add_t(t, &n, nm, KV, 1, 0, T_BIAS, 0.1f);
            snprintf(nm, sizeof nm, "blk.%d.attn_v.bias", il);
            add_t(t, &n, nm, KV, 1, 0, T_BIAS, 0.1f);
        }
        if (qk_norm) {
            T("attn_q_norm", hd, 1, T_NORM, 0)
            T("attn_k_norm", hd, 1, T_NORM, 0)
        }
        T("attn_output", ds2 ? p->n_head * p->v_head_dim : Q, E, T_MAT, 0.5f / sqrtf((float)Q))
        if (gemma) T("post_attention_norm", E, 1, T_NORM, 0)
        T("ffn_norm", E, 1, T_NORM, 0)
        if (phi3) {
            T("ffn_up", E, 2 * F, T_MAT, 1.0f / sqrtf((float)E)) /* gate | up */
        } else {
            T("ffn_gate", E, F, T_MAT, 1.0f / sqrtf((float)E))
            T("ffn_up", E, F, T_MAT, 1.0f / sqrtf((float)E))
        }
        TT("ffn_down", F, E, T_MAT, 0.5f / sqrtf((float)F), mixed)
        if (gemma) T("post_ffw_norm", E, 1, T_NORM, 0)
#undef T
#undef TT
    }
    /* last, so the other tensors' seeded streams (by index) are the same without it */
    if (p->rope_freqs) add_t(t, &n, "rope_freqs.weight", hd / 2, 1, 0, T_ROPEF, p->rope_base);
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        t[i].offset = off;
        off += (t[i].bytes + SYNTH_ALIGN - 1) / SYNTH_ALIGN * SYNTH_ALIGN;
    }
    *count = n;
    return t;
}

int64_t synth_param_count(const synth_params *p) {
    int64_t E = p->n_embd, hd = head_dim_of(p), F = p->n_ff, V = p->n_vocab;
    int64_t Q = p->n_head * hd, KV = p->n_kv_head * hd;
    int64_t layer = 2 * E + E * Q + 2 * E * KV + Q * E + 3 * E * F;
    if (p->arch == SYNTH_ARCH_GEMMA3) layer += 2 * hd + 2 * E;
    if (p->arch == SYNTH_ARCH_QWEN3) layer += 2 * hd;
    if (p->arch == SYNTH_ARCH_QWEN2) layer += Q + 2 * KV;
    if (p->arch == SYNTH_ARCH_DEEPSEEK2) {
        int64_t H = p->n_head, qr = p->q_lora_rank, kvr = p->kv_lora_rank, qk = p->qk_nope + p->qk_rope;
        layer = 2 * E + 3 * E * F + (qr ? E * qr + qr + qr * H * qk : E * H * qk) + E * (kvr + p->qk_rope) +
                kvr + kvr * H * (p->qk_nope + p->v_head_dim) + H * p->v_head_dim * E;
    }
    return E * V * (p->tied ? 1 : 2) + E + layer * p->n_layer + (p->rope_freqs ? hd / 2 : 0);
}

static int check_dims(const synth_params *p, util_err *err) {
    const struct {
        const char *what;
        int v, min;
    } dims[] = {
        {"layers", p->n_layer, 1},     {"n_embd", p->n_embd, 1},      {"heads", p->n_head, 1},
        {"kv heads", p->n_kv_head, 1}, {"n_ff", p->n_ff, 1},          {"context", p->n_ctx, 1},
        {"head dim", p->head_dim, 0},  {"vocabulary", p->n_vocab, 1},
    };
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].v < dims[i].min || dims[i].v > SYNTH_MAX_DIM)
            return util_err_set(err, UTIL_EINVAL, "synth: %s %d is out of range [%d, %d]", dims[i].what,
                                dims[i].v, dims[i].min, SYNTH_MAX_DIM);
    if (p->arch < SYNTH_ARCH_LLAMA || p->arch > SYNTH_ARCH_DEEPSEEK2)
        return util_err_set(err, UTIL_EINVAL, "synth: unknown architecture %d", (int)p->arch);
    if (p->arch == SYNTH_ARCH_DEEPSEEK2) {
        const struct {
            const char *what;
            int v, min;
        } mla[] = {{"q lora rank", p->q_lora_rank, 0},
                   {"kv lora rank", p->kv_lora_rank, 1},
                   {"qk nope dims", p->qk_nope, 1},
                   {"qk rope dims", p->qk_rope, 2},
                   {"v head dims", p->v_head_dim, 1}};
        for (size_t i = 0; i < sizeof mla / sizeof mla[0]; i++)
            if (mla[i].v < mla[i].min || mla[i].v > SYNTH_MAX_DIM)
                return util_err_set(err, UTIL_EINVAL, "synth: %s %d is out of range [%d, %d]", mla[i].what,
                                    mla[i].v, mla[i].min, SYNTH_MAX_DIM);
        if (p->qk_rope % 2)
            return util_err_set(err, UTIL_EINVAL, "synth: qk rope dims %d is odd", p->qk_rope);
        if (p->n_kv_head != p->n_head)
            return util_err_set(err, UTIL_EINVAL,
                                "synth: deepseek2 has as many kv heads as heads (%d, not %d)", p->n_head,
                                p->n_kv_head);
    }
    if (p->n_head % p->n_kv_head)
        return util_err_set(err, UTIL_EINVAL, "synth: %d heads are not a multiple of %d kv heads", p->n_head,
                            p->n_kv_head);
    if (!p->head_dim && p->n_embd % p->n_head)
        return util_err_set(err, UTIL_EINVAL, "synth: n_embd %d is not a multiple of %d heads", p->n_embd,
                            p->n_head);
    int64_t hd = head_dim_of(p);
    if (hd % 2) return util_err_set(err, UTIL_EINVAL, "synth: head dim %lld is odd", (long long)hd);
    if (p->n_head * hd > SYNTH_MAX_DIM)
        return util_err_set(err, UTIL_EINVAL, "synth: %d heads x head dim %lld is too wide", p->n_head,
                            (long long)hd);
    if (p->n_vocab < synth_min_vocab(p))
        return util_err_set(err, UTIL_EINVAL, "synth: vocabulary %d is below the minimum %d", p->n_vocab,
                            synth_min_vocab(p));
    if (!(p->rope_base > 0) || !isfinite(p->rope_base))
        return util_err_set(err, UTIL_EINVAL, "synth: rope base must be positive");
    if ((p->arch == SYNTH_ARCH_GEMMA3 || p->arch == SYNTH_ARCH_PHI3) &&
        (p->swa_window < 1 || p->swa_window > SYNTH_MAX_DIM))
        return util_err_set(err, UTIL_EINVAL, "synth: sliding window %d is out of range [1, %d]",
                            p->swa_window, SYNTH_MAX_DIM);
    return UTIL_OK;
}

int synth_check(const synth_params *p, util_err *err) {
    int rc = check_dims(p, err);
    if (rc) return rc;
    const uint32_t types[] = {p->wtype, p->etype, p->tied ? p->etype : p->otype,
                              p->mix_type ? p->mix_type : p->wtype};
    for (int i = 0; i < 4; i++)
        if (!synth_type_ok(types[i])) {
            const eng_type_traits *tr = eng_type_get(types[i]);
            return util_err_set(err, UTIL_EUNSUPPORTED, "synth: no quantizer for type %s (%u)",
                                tr ? tr->name : "unknown", types[i]);
        }
    /* every row must hold whole blocks: the row lengths are n_embd, q width, n_ff */
    int64_t hd = head_dim_of(p);
    const struct {
        const char *tensor;
        int64_t ne0;
        uint32_t type;
    } rows[] = {
        {"token_embd", p->n_embd, p->etype},
        {"output", p->n_embd, p->tied ? p->etype : p->otype},
        {"attn_q", p->n_embd, p->wtype},
        {"attn_output", p->n_head * hd, p->wtype},
        {"ffn_down", p->n_ff, p->wtype},
        {"attn_v", p->n_embd, p->mix_type ? p->mix_type : p->wtype},
        {"ffn_down", p->n_ff, p->mix_type ? p->mix_type : p->wtype},
        /* deepseek2's (0 elsewhere: no row to check) */
        {"attn_q_b", p->q_lora_rank, p->wtype},
        {"attn_kv_b", p->kv_lora_rank, p->mix_type ? p->mix_type : p->wtype},
        {"attn_output", (int64_t)p->n_head * p->v_head_dim, p->wtype},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const eng_type_traits *tr = eng_type_get(rows[i].type);
        if (rows[i].ne0 % tr->blck)
            return util_err_set(err, UTIL_EINVAL,
                                "synth: tensor '%s' has rows of %lld, not a multiple of %s's block %d",
                                rows[i].tensor, (long long)rows[i].ne0, tr->name, tr->blck);
    }
    return UTIL_OK;
}

/* --- streaming the tensor data -------------------------------------------- */

/* Rows [r0, r1) of one tensor into out (row r at (r - r0) * row bytes). */
typedef struct fill_job {
    const tdesc *t;
    uint64_t seed;
    int index;
    int64_t r0, r1;
    unsigned char *out;
    float *row;
    int failed;
} fill_job;

/* convert_hf_to_gguf.py's LlamaModel rope_freqs for Llama 3.1 (factor 8,
 * low_freq_factor 1, high_freq_factor 4, original context 8192): n = head
 * dim / 2 divisors of the pairs' angles. */
static void llama3_factors(float *out, int64_t n, double base) {
    const double factor = 8, low = 1, high = 4, old_ctx = 8192;
    const double low_wl = old_ctx / low, high_wl = old_ctx / high, pi = 3.14159265358979323846;
    for (int64_t i = 0; i < n; i++) {
        double freq = 1.0 / pow(base, (double)(2 * i) / (double)(2 * n)), wl = 2 * pi / freq;
        if (wl < high_wl) {
            out[i] = 1.0f;
        } else if (wl > low_wl) {
            out[i] = (float)factor;
        } else {
            double smooth = (old_ctx / wl - low) / (high - low);
            out[i] = (float)(1.0 / ((1 - smooth) / factor + smooth));
        }
    }
}

/* Row r of tensor `index` has its own stream, so any split of the rows
 * between threads gives the same bytes. */
static void *fill_rows(void *arg) {
    fill_job *j = arg;
    const tdesc *t = j->t;
    size_t rb = eng_type_row_size(t->type, t->ne0);
    for (int64_t r = j->r0; r < j->r1; r++) {
        uint64_t s = j->seed * 0x100000001B3ull ^ (uint64_t)j->index * 0x9E3779B97F4A7C15ull ^
                     (uint64_t)r * 0xD6E8FEB86659FD93ull;
        th_rng_next(&s);
        if (t->kind == T_NORM)
            for (int64_t c = 0; c < t->ne0; c++) j->row[c] = 1.0f + 0.2f * (th_rng_uniform(&s) - 0.5f);
        else if (t->kind == T_ROPEF)
            llama3_factors(j->row, t->ne0, t->std);
        else
            for (int64_t c = 0; c < t->ne0; c++) j->row[c] = t->std * th_rng_normal(&s);
        if (synth_quantize_row(t->type, j->row, j->out + (size_t)(r - j->r0) * rb, t->ne0)) {
            j->failed = 1;
            break;
        }
    }
    return NULL;
}

typedef struct streamer {
    FILE *f;
    uint64_t seed;
    int n_threads;
    unsigned char *buf; /* SYNTH_CHUNK or one row, whichever is larger */
    float *rows[SYNTH_MAX_THREADS];
} streamer;

/* Fills rows [r0, r1) into s->buf with up to n_threads threads (one for
 * small chunks, where starting threads costs more than it saves). */
static int fill_chunk(streamer *s, const tdesc *t, int index, int64_t r0, int64_t r1) {
    size_t rb = eng_type_row_size(t->type, t->ne0);
    int64_t n = r1 - r0;
    int nt = s->n_threads;
    if ((uint64_t)n * (uint64_t)t->ne0 < (1u << 18)) nt = 1;
    if (nt > n) nt = (int)n;
    fill_job jobs[SYNTH_MAX_THREADS];
    pthread_t tid[SYNTH_MAX_THREADS];
    int started[SYNTH_MAX_THREADS] = {0};
    for (int k = 0; k < nt; k++) {
        int64_t a = r0 + n * k / nt, b = r0 + n * (k + 1) / nt;
        jobs[k] = (fill_job){t, s->seed, index, a, b, s->buf + (size_t)(a - r0) * rb, s->rows[k], 0};
        if (k > 0) started[k] = pthread_create(&tid[k], NULL, fill_rows, &jobs[k]) == 0;
    }
    for (int k = 1; k < nt; k++)
        if (!started[k]) fill_rows(&jobs[k]); /* no thread: do it here */
    fill_rows(&jobs[0]);
    int failed = 0;
    for (int k = 0; k < nt; k++) {
        if (k > 0 && started[k]) pthread_join(tid[k], NULL);
        failed |= jobs[k].failed;
    }
    return failed ? -1 : 0;
}

static int write_tensor(streamer *s, const tdesc *t, int index) {
    size_t rb = eng_type_row_size(t->type, t->ne0);
    int64_t per_chunk = rb >= SYNTH_CHUNK ? 1 : (int64_t)(SYNTH_CHUNK / rb);
    for (int64_t r = 0; r < t->ne1; r += per_chunk) {
        int64_t r1 = r + per_chunk < t->ne1 ? r + per_chunk : t->ne1;
        size_t bytes = (size_t)(r1 - r) * rb;
        if (fill_chunk(s, t, index, r, r1) || fwrite(s->buf, 1, bytes, s->f) != bytes) return -1;
    }
    static const unsigned char zeros[SYNTH_ALIGN];
    size_t pad = (size_t)((SYNTH_ALIGN - t->bytes % SYNTH_ALIGN) % SYNTH_ALIGN);
    return pad && fwrite(zeros, 1, pad, s->f) != pad ? -1 : 0;
}

static void write_arch_keys(kvw *kv, const synth_params *p) {
    int gemma = p->arch == SYNTH_ARCH_GEMMA3,
        qwen = p->arch == SYNTH_ARCH_QWEN2 || p->arch == SYNTH_ARCH_QWEN3;
    const char *a = arch_name(p->arch);
    uint32_t hd = (uint32_t)head_dim_of(p);
    kv_arch_u32(kv, a, "context_length", (uint32_t)p->n_ctx);
    kv_arch_u32(kv, a, "embedding_length", (uint32_t)p->n_embd);
    kv_arch_u32(kv, a, "block_count", (uint32_t)p->n_layer);
    kv_arch_u32(kv, a, "feed_forward_length", (uint32_t)p->n_ff);
    kv_arch_u32(kv, a, "attention.head_count", (uint32_t)p->n_head);
    kv_arch_u32(kv, a, "attention.head_count_kv", (uint32_t)p->n_kv_head);
    if ((gemma || p->head_dim) && p->arch != SYNTH_ARCH_DEEPSEEK2) {
        kv_arch_u32(kv, a, "attention.key_length", hd);
        kv_arch_u32(kv, a, "attention.value_length", hd);
    }
    kv_arch_f32(kv, a, "attention.layer_norm_rms_epsilon", gemma || qwen ? 1e-6f : 1e-5f);
    kv_arch_f32(kv, a, "rope.freq_base", p->rope_base);
    if (p->arch == SYNTH_ARCH_DEEPSEEK2) { /* as the converter writes DeepSeek-V2(-Lite) */
        kv_arch_u32(kv, a, "attention.key_length", (uint32_t)(p->qk_nope + p->qk_rope));
        kv_arch_u32(kv, a, "attention.value_length", (uint32_t)p->v_head_dim);
        kv_arch_u32(kv, a, "rope.dimension_count", (uint32_t)p->qk_rope);
        kv_arch_u32(kv, a, "attention.q_lora_rank", (uint32_t)p->q_lora_rank);
        kv_arch_u32(kv, a, "attention.kv_lora_rank", (uint32_t)p->kv_lora_rank);
        kv_arch_u32(kv, a, "leading_dense_block_count", (uint32_t)p->n_layer); /* every layer dense */
        kv_arch_u32(kv, a, "expert_feed_forward_length", (uint32_t)p->n_ff);
        kv_arch_u32(kv, a, "expert_shared_count", 0);
        kv_arch_u32(kv, a, "vocab_size", (uint32_t)p->n_vocab);
        return;
    }
    if (gemma) {
        kv_arch_u32(kv, a, "attention.sliding_window", (uint32_t)p->swa_window);
    } else {
        kv_arch_u32(kv, a, "rope.dimension_count", hd);
        kv_arch_u32(kv, a, "vocab_size", (uint32_t)p->n_vocab);
    }
    if (p->arch == SYNTH_ARCH_PHI3) { /* as Phi-3's converter: a window llama.cpp ignores */
        kv_arch_u32(kv, a, "attention.sliding_window", (uint32_t)p->swa_window);
        kv_arch_u32(kv, a, "rope.scaling.original_context_length", (uint32_t)p->n_ctx);
    }
}

/* Copies the tokenizer.* keys of a vocab-only GGUF (the types its files use:
 * strings, u32/i32/bool/f32 scalars, arrays of strings, i32 and f32). */
static int copy_vocab(kvw *kv, const char *path) {
    eng_gguf *g = NULL;
    if (eng_gguf_open(&g, path, NULL)) return -1;
    int bad = 0;
    for (int64_t i = 0; i < eng_gguf_kv_count(g) && !bad; i++) {
        const char *key = eng_gguf_kv_key(g, i);
        if (strncmp(key, "tokenizer.", 10) != 0) continue;
        eng_gguf_vtype vt = eng_gguf_kv_type(g, i), et;
        uint64_t cnt = 0;
        if (vt == ENG_GGUF_STRING) {
            const char *sv;
            size_t len;
            bad = eng_gguf_get_str(g, key, &sv, &len, NULL) != UTIL_OK;
            if (!bad) {
                kv_key(kv, key, ENG_GGUF_STRING);
                w_str(kv, sv, len);
            }
        } else if (vt == ENG_GGUF_U32 || vt == ENG_GGUF_I32) {
            uint32_t v;
            bad = eng_gguf_get_u32(g, key, &v, NULL) != UTIL_OK;
            if (!bad) kv_u32(kv, key, v);
        } else if (vt == ENG_GGUF_BOOL) {
            int v;
            bad = eng_gguf_get_bool(g, key, &v, NULL) != UTIL_OK;
            if (!bad) kv_bool(kv, key, v);
        } else if (vt == ENG_GGUF_F32) {
            float v;
            bad = eng_gguf_get_f32(g, key, &v, NULL) != UTIL_OK;
            if (!bad) kv_f32(kv, key, v);
        } else if (vt == ENG_GGUF_ARRAY && eng_gguf_get_arr(g, key, &et, &cnt, NULL) == UTIL_OK) {
            if (et == ENG_GGUF_STRING) {
                const char **strs = NULL;
                uint32_t *lens = NULL;
                bad = eng_gguf_get_str_arr(g, key, &strs, &lens, &cnt, NULL) != UTIL_OK;
                if (!bad) {
                    kv_arr(kv, key, ENG_GGUF_STRING, cnt);
                    for (uint64_t k = 0; k < cnt; k++) w_str(kv, strs[k], lens[k]);
                }
                free(strs);
                free(lens);
            } else if (et == ENG_GGUF_I32 || et == ENG_GGUF_U32) {
                int32_t *v = NULL;
                bad = eng_gguf_get_i32_arr(g, key, &v, &cnt, NULL) != UTIL_OK;
                if (!bad) {
                    kv_arr(kv, key, ENG_GGUF_I32, cnt);
                    for (uint64_t k = 0; k < cnt; k++) w_u32(kv, (uint32_t)v[k]);
                }
                free(v);
            } else if (et == ENG_GGUF_F32) {
                float *v = NULL;
                bad = eng_gguf_get_f32_arr(g, key, &v, &cnt, NULL) != UTIL_OK;
                if (!bad) {
                    kv_arr(kv, key, ENG_GGUF_F32, cnt);
                    for (uint64_t k = 0; k < cnt; k++) w_f32(kv, v[k]);
                }
                free(v);
            } else {
                bad = 1;
            }
        } else {
            bad = 1;
        }
    }
    eng_gguf_free(g);
    return bad ? -1 : 0;
}

int synth_vocab_size(const char *path, int *n_vocab, util_err *err) {
    eng_gguf *g = NULL;
    int rc = eng_gguf_open(&g, path, err);
    if (rc) return rc;
    eng_gguf_vtype et;
    uint64_t cnt = 0;
    rc = eng_gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &cnt, err);
    if (rc == UTIL_ENOTFOUND)
        rc = util_err_set(err, UTIL_EFORMAT, "synth: '%s' has no tokenizer.ggml.tokens", path);
    if (rc == UTIL_OK && (cnt < 1 || cnt > SYNTH_MAX_DIM))
        rc = util_err_set(err, UTIL_EFORMAT, "synth: '%s' has %llu tokens", path, (unsigned long long)cnt);
    if (rc == UTIL_OK) *n_vocab = (int)cnt;
    eng_gguf_free(g);
    return rc;
}

static int build_header(kvw *hdr, const synth_params *p, const tdesc *t, int nt) {
    kvw kv = {0};
    util_buf_init(&kv.b);
    int gemma = p->arch == SYNTH_ARCH_GEMMA3;
    kv_str(&kv, "general.architecture", arch_name(p->arch));
    kv_str(&kv, "general.name", p->name ? p->name : "synthetic");
    kv_u32(&kv, "general.alignment", SYNTH_ALIGN);
    kv_u32(&kv, "general.quantization_version", 2);
    write_arch_keys(&kv, p);
    if (p->vocab) {
        if (copy_vocab(&kv, p->vocab)) kv.oom = 1;
    } else if (gemma) {
        write_vocab_spm(&kv, p->n_vocab);
    } else {
        write_vocab_bpe(&kv, p->n_vocab);
    }

    w_raw(hdr, "GGUF", 4);
    w_u32(hdr, 3);
    w_u64(hdr, (uint64_t)nt);
    w_u64(hdr, kv.n);
    w_raw(hdr, kv.b.data, kv.b.len);
    hdr->oom |= kv.oom;
    util_buf_release(&kv.b);
    for (int i = 0; i < nt; i++) {
        w_str(hdr, t[i].name, strlen(t[i].name));
        w_u32(hdr, t[i].kind == T_MAT ? 2 : 1);
        w_u64(hdr, (uint64_t)t[i].ne0);
        if (t[i].kind == T_MAT) w_u64(hdr, (uint64_t)t[i].ne1);
        w_u32(hdr, t[i].type);
        w_u64(hdr, t[i].offset);
    }
    static const unsigned char zeros[SYNTH_ALIGN];
    w_raw(hdr, zeros, (SYNTH_ALIGN - hdr->b.len % SYNTH_ALIGN) % SYNTH_ALIGN);
    return hdr->oom ? -1 : 0;
}

static int n_threads_for(const synth_params *p) {
    long n = p->n_threads > 0 ? p->n_threads : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SYNTH_MAX_THREADS ? SYNTH_MAX_THREADS : (int)n;
}

/* Header and tensors into f; errno tells why when it fails. */
static int write_all(FILE *f, const synth_params *p, const kvw *hdr, const tdesc *t, int nt, util_err *err) {
    streamer s = {.f = f, .seed = p->seed, .n_threads = n_threads_for(p)};
    int64_t widest = p->n_embd > p->n_ff ? p->n_embd : p->n_ff;
    if (p->n_head * head_dim_of(p) > widest) widest = p->n_head * head_dim_of(p);
    size_t max_row = 0;
    for (int i = 0; i < nt; i++) {
        size_t rb = eng_type_row_size(t[i].type, t[i].ne0);
        if (rb > max_row) max_row = rb;
    }
    int rc = UTIL_OK;
    s.buf = malloc(max_row > SYNTH_CHUNK ? max_row : SYNTH_CHUNK);
    for (int k = 0; k < s.n_threads; k++) s.rows[k] = malloc((size_t)widest * sizeof(float));
    int oom = !s.buf;
    for (int k = 0; k < s.n_threads; k++) oom |= !s.rows[k];
    if (oom) {
        rc = util_err_set(err, UTIL_ENOMEM, "synth: out of memory");
    } else {
        int bad = fwrite(hdr->b.data, 1, hdr->b.len, f) != hdr->b.len;
        for (int i = 0; i < nt && !bad; i++) bad = write_tensor(&s, &t[i], i) != 0;
        if (bad) rc = UTIL_EIO;
    }
    for (int k = 0; k < s.n_threads; k++) free(s.rows[k]);
    free(s.buf);
    return rc;
}

/* A temporary file beside path, renamed over it once complete, so a failure
 * (or a reader racing the writer) never sees a partial model. */
int synth_write(const char *path, const synth_params *p_in, util_err *err) {
    synth_params pv = *p_in;
    const synth_params *p = &pv;
    int rc = p->vocab ? synth_vocab_size(p->vocab, &pv.n_vocab, err) : UTIL_OK;
    if (rc || (rc = synth_check(p, err))) return rc;
    int nt = 0;
    tdesc *t = plan(p, &nt);
    kvw hdr = {0};
    util_buf_init(&hdr.b);
    if (!t || build_header(&hdr, p, t, nt)) {
        util_buf_release(&hdr.b);
        free(t);
        return util_err_set(err, UTIL_ENOMEM, "synth: out of memory");
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    int fd = -1;
    if (tmp) {
        snprintf(tmp, plen + 16, "%s.tmp-XXXXXX", path);
        fd = mkstemp(tmp);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!tmp) {
        rc = util_err_set(err, UTIL_ENOMEM, "synth: out of memory");
    } else if (!f) {
        rc = util_err_set(err, UTIL_EIO, "synth: cannot create '%s': %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
    } else {
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask); /* mkstemp's 0600 is for secrets; this is a model */
        errno = 0;
        rc = write_all(f, p, &hdr, t, nt, err);
        int e = errno;
        if (fclose(f) != 0 && rc == UTIL_OK) {
            rc = UTIL_EIO;
            e = errno;
        }
        if (rc == UTIL_OK && rename(tmp, path) != 0) {
            rc = UTIL_EIO;
            e = errno;
        }
        if (rc) unlink(tmp);
        if (rc == UTIL_EIO)
            util_err_set(err, UTIL_EIO, "synth: writing '%s' failed: %s", path,
                         e ? strerror(e) : "short write");
    }
    free(tmp);
    util_buf_release(&hdr.b);
    free(t);
    return rc;
}
