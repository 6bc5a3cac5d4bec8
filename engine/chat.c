/* engine/chat.c: chat templates per family, rendered the way Hugging Face's
 * Jinja2 rendering of the model's template does: ChatML (SmolLM2, with the
 * default system block read out of the template) and Gemma (system folded into
 * the first user turn, strict user/model alternation, one BOS). The family is
 * chosen from tokenizer.chat_template (without one: Gemma when the vocabulary
 * has its turn tokens, else ChatML); there is no Jinja interpreter here. */
#include "chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h"

struct eng_chat {
    eng_chat_format format;
    char *default_system; /* ChatML: the block the template adds when messages[0] is not system */
    size_t default_system_len;
    char *bos; /* Gemma: the text of the BOS token the template starts with */
    size_t bos_len;
    char warning[160];
};

/* --- reading the template ------------------------------------------------ */

static const char *find_in(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    if (k == 0 || k > n) return NULL;
    for (size_t i = 0; i + k <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return s + i;
    return NULL;
}

/* Parses a Jinja string literal starting at s (a quote) into a malloc'd string;
 * the escapes are Python's. Returns NULL if it is not a closed literal. */
static char *parse_literal(const char *s, const char *end, size_t *len) {
    char q = *s++;
    char *out = malloc((size_t)(end - s) + 1);
    if (!out) return NULL;
    size_t n = 0;
    for (; s < end; s++) {
        if (*s == q) {
            out[n] = '\0';
            *len = n;
            return out;
        }
        if (*s == '\\' && s + 1 < end) {
            char c = *++s;
            switch (c) {
            case 'n': out[n++] = '\n'; break;
            case 't': out[n++] = '\t'; break;
            case 'r': out[n++] = '\r'; break;
            case '\\': case '\'': case '"': out[n++] = c; break;
            default: /* Python keeps unknown escapes as written */
                out[n++] = '\\';
                out[n++] = c;
            }
            continue;
        }
        out[n++] = *s;
    }
    free(out);
    return NULL;
}

/* The SmolLM2 template prints a fixed system block inside
 * {% if loop.first and messages[0]['role'] != 'system' %}{{ '...' }}{% endif %};
 * that literal is the default system text. Absent: no default. */
static int extract_default_system(eng_chat *c, const char *tpl, size_t n) {
    static const char *const conds[] = {"messages[0]['role'] != 'system'",
                                        "messages[0][\"role\"] != \"system\""};
    const char *at = NULL;
    for (size_t k = 0; k < 2 && !at; k++) at = find_in(tpl, n, conds[k]);
    if (!at) return UTIL_OK;
    const char *end = tpl + n;
    const char *close = find_in(at, (size_t)(end - at), "%}");
    if (!close) return UTIL_OK;
    const char *endif = find_in(close, (size_t)(end - close), "endif");
    const char *open = find_in(close, (size_t)(end - close), "{{");
    if (!open || (endif && open > endif)) return UTIL_OK;
    const char *p = open + 2;
    while (p < end && (*p == ' ' || *p == '-' || *p == '\t' || *p == '\n')) p++;
    if (p >= end || (*p != '\'' && *p != '"')) return UTIL_OK;
    size_t len;
    char *lit = parse_literal(p, end, &len);
    if (!lit) return UTIL_OK;
    if (len < 12 || memcmp(lit, "<|im_start|>", 12) != 0) { /* not a ChatML block: ignore */
        free(lit);
        return UTIL_OK;
    }
    c->default_system = lit;
    c->default_system_len = len;
    return UTIL_OK;
}

/* Gemma's template starts with {{ bos_token }}: the text of the BOS token. */
static int read_bos_text(eng_chat *c, const eng_gguf *g, util_err *err) {
    uint32_t bos;
    int rc = eng_gguf_get_u32(g, "tokenizer.ggml.bos_token_id", &bos, err);
    if (rc == UTIL_ENOTFOUND) {
        const char *m;
        size_t ml;
        /* llama.cpp's default BOS for SentencePiece vocabularies */
        if (eng_gguf_get_str(g, "tokenizer.ggml.model", &m, &ml, err) || ml != 5 ||
            memcmp(m, "llama", 5) != 0)
            return UTIL_OK;
        bos = 1;
    } else if (rc) {
        return rc;
    }
    const char **strs;
    uint32_t *lens;
    uint64_t count;
    rc = eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &strs, &lens, &count, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    if (bos < count) {
        c->bos = malloc((size_t)lens[bos] + 1);
        if (c->bos) {
            memcpy(c->bos, strs[bos], lens[bos]);
            c->bos[lens[bos]] = '\0';
            c->bos_len = lens[bos];
        }
    }
    free(strs);
    free(lens);
    if (bos < count && !c->bos) return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    return UTIL_OK;
}

/* Whether the vocabulary has <start_of_turn> and <end_of_turn>. */
static int has_gemma_turns(const eng_gguf *g) {
    const char **strs;
    uint32_t *lens;
    uint64_t count;
    if (eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &strs, &lens, &count, NULL)) return 0;
    int found = 0;
    for (uint64_t i = 0; i < count && found != 3; i++) {
        if (lens[i] == 15 && memcmp(strs[i], "<start_of_turn>", 15) == 0) found |= 1;
        if (lens[i] == 13 && memcmp(strs[i], "<end_of_turn>", 13) == 0) found |= 2;
    }
    free(strs);
    free(lens);
    return found == 3;
}

int eng_chat_new(eng_chat **out, const eng_gguf *g, util_err *err) {
    *out = NULL;
    eng_chat *c = calloc(1, sizeof *c);
    if (!c) return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    const char *tpl = NULL;
    size_t n = 0;
    int rc = g ? eng_gguf_get_str(g, "tokenizer.chat_template", &tpl, &n, err) : UTIL_ENOTFOUND;
    if (rc && rc != UTIL_ENOTFOUND) {
        eng_chat_free(c);
        return rc;
    }
    c->format = ENG_CHAT_CHATML;
    if (rc == UTIL_ENOTFOUND && g && has_gemma_turns(g)) {
        /* a base model (Gemma 3 270M) ships no template; its vocabulary says the family */
        c->format = ENG_CHAT_GEMMA;
        snprintf(c->warning, sizeof c->warning,
                 "chat: the model has no chat template; its vocabulary has Gemma's turn tokens: using gemma");
        rc = read_bos_text(c, g, err);
    } else if (rc == UTIL_ENOTFOUND) { /* not an error: the fallback (it failed the open before) */
        snprintf(c->warning, sizeof c->warning, "chat: the model has no chat template; using chatml");
        rc = UTIL_OK;
    } else if (find_in(tpl, n, "<|im_start|>")) {
        rc = extract_default_system(c, tpl, n);
    } else if (find_in(tpl, n, "<start_of_turn>")) {
        c->format = ENG_CHAT_GEMMA;
        rc = read_bos_text(c, g, err);
    } else {
        snprintf(c->warning, sizeof c->warning,
                 "chat: the model's chat template is not a known family; using chatml");
    }
    if (rc) {
        eng_chat_free(c);
        return rc;
    }
    *out = c;
    return UTIL_OK;
}

void eng_chat_free(eng_chat *c) {
    if (!c) return;
    free(c->default_system);
    free(c->bos);
    free(c);
}

eng_chat_format eng_chat_get_format(const eng_chat *c) { return c->format; }

const char *eng_chat_format_name(eng_chat_format f) {
    switch (f) {
    case ENG_CHAT_CHATML: return "chatml";
    case ENG_CHAT_GEMMA: return "gemma";
    }
    return "unknown";
}

const char *eng_chat_warning(const eng_chat *c) { return c->warning[0] ? c->warning : NULL; }

const char *eng_chat_default_system(const eng_chat *c, size_t *len) {
    if (len) *len = c->default_system_len;
    return c->default_system;
}

/* --- rendering -------------------------------------------------------------- */

/* Where the rendering goes: the text, and (when spans is not NULL) the byte
 * ranges of text that came from the messages (roles and contents) rather than
 * from the template. */
typedef struct render_out {
    util_buf *b;
    eng_tok_span *spans;
    size_t n, cap;
    int want_spans;
} render_out;

static int put(render_out *o, const char *s) { return util_buf_puts(o->b, s); }

/* Appends message text: a plain span. */
static int put_plain(render_out *o, const char *s, size_t n) {
    if (o->want_spans && n) {
        if (o->n == o->cap) {
            size_t cap = o->cap ? 2 * o->cap : 16;
            eng_tok_span *v = realloc(o->spans, cap * sizeof *v);
            if (!v) return UTIL_ENOMEM;
            o->spans = v;
            o->cap = cap;
        }
        o->spans[o->n++] = (eng_tok_span){o->b->len, n};
    }
    return util_buf_append(o->b, s, n);
}

static int render_chatml(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *out) {
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (i == 0 && strcmp(m[0].role, "system") != 0 && c->default_system)
            rc = util_buf_append(out->b, c->default_system, c->default_system_len);
        if (!rc) rc = put(out, "<|im_start|>");
        if (!rc) rc = put_plain(out, m[i].role, strlen(m[i].role));
        if (!rc) rc = put(out, "\n");
        if (!rc) rc = put_plain(out, m[i].content, strlen(m[i].content));
        if (!rc) rc = put(out, "<|im_end|>\n");
    }
    if (!rc && gen) rc = put(out, "<|im_start|>assistant\n");
    return rc;
}

/* Jinja's trim: Python str.strip() of Unicode whitespace. */
static void strip_span(const char *s, size_t *start, size_t *end) {
    size_t n = strlen(s), a = 0, b = n;
    while (a < b) {
        size_t adv;
        uint32_t cp = eng_utf8_decode((const unsigned char *)s + a, b - a, &adv);
        if (cp == ENG_UTF8_BAD || !eng_unicode_is_pyspace(cp)) break;
        a += adv;
    }
    while (b > a) {
        size_t k = b - 1; /* back up to a lead byte */
        while (k > a && ((unsigned char)s[k] & 0xc0) == 0x80 && b - k < 4) k--;
        size_t adv;
        uint32_t cp = eng_utf8_decode((const unsigned char *)s + k, b - k, &adv);
        if (cp == ENG_UTF8_BAD || k + adv != b || !eng_unicode_is_pyspace(cp)) break;
        b = k;
    }
    *start = a;
    *end = b;
}

static int render_gemma(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *out,
                        util_err *err) {
    size_t first = 0;
    const char *prefix = NULL;
    if (n > 0 && strcmp(m[0].role, "system") == 0) { /* system text is not trimmed */
        prefix = m[0].content;
        first = 1;
    }
    for (size_t i = first; i < n; i++) {
        int is_user = strcmp(m[i].role, "user") == 0;
        if (is_user != ((i - first) % 2 == 0))
            return util_err_set(err, UTIL_EINVAL,
                                "chat: gemma template: conversation roles must alternate "
                                "user/assistant starting with user (message %zu is '%s')",
                                i, m[i].role);
    }
    int rc = c->bos ? util_buf_append(out->b, c->bos, c->bos_len) : 0;
    for (size_t i = first; i < n && !rc; i++) {
        const char *role = strcmp(m[i].role, "assistant") == 0 ? "model" : m[i].role;
        size_t a, b;
        strip_span(m[i].content, &a, &b);
        rc = put(out, "<start_of_turn>");
        if (!rc) rc = strcmp(m[i].role, "assistant") == 0 ? put(out, role) : put_plain(out, role, strlen(role));
        if (!rc) rc = put(out, "\n");
        if (!rc && i == first && prefix) {
            rc = put_plain(out, prefix, strlen(prefix));
            if (!rc) rc = put(out, "\n\n");
        }
        if (!rc) rc = put_plain(out, m[i].content + a, b - a);
        if (!rc) rc = put(out, "<end_of_turn>\n");
    }
    if (!rc && gen) rc = put(out, "<start_of_turn>model\n");
    if (rc) return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    return UTIL_OK;
}

static int render(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                  render_out *o, util_err *err) {
    for (size_t i = 0; i < n; i++)
        if (!msgs[i].role || !msgs[i].content)
            return util_err_set(err, UTIL_EINVAL, "chat: message %zu has no %s", i,
                                msgs[i].role ? "content" : "role");
    util_buf *out = o->b;
    size_t start = out->len;
    int rc;
    if (c->format == ENG_CHAT_GEMMA) {
        rc = render_gemma(c, msgs, n, add_generation_prompt, o, err);
    } else {
        rc = render_chatml(c, msgs, n, add_generation_prompt, o);
        if (rc) rc = util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    }
    if (!rc && (rc = util_buf_append(out, "", 0))) rc = util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    if (rc) { /* leave out as it was */
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}

int eng_chat_render(const eng_chat *c, const eng_chat_msg *msgs, size_t n,
                    int add_generation_prompt, util_buf *out, util_err *err) {
    render_out o = {.b = out};
    return render(c, msgs, n, add_generation_prompt, &o, err);
}

int eng_chat_render_spans(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                          util_buf *out, eng_tok_span **plain, size_t *nplain, util_err *err) {
    render_out o = {.b = out, .want_spans = 1};
    *plain = NULL;
    *nplain = 0;
    int rc = render(c, msgs, n, add_generation_prompt, &o, err);
    if (rc) {
        free(o.spans);
        return rc;
    }
    *plain = o.spans;
    *nplain = o.n;
    return UTIL_OK;
}

int eng_chat_tokenize(const eng_chat *c, const eng_tokenizer *t, const eng_chat_msg *msgs, size_t n,
                      int add_generation_prompt, util_buf *text, int32_t **ids, size_t *nids, util_err *err) {
    *ids = NULL;
    *nids = 0;
    util_buf local;
    util_buf_init(&local);
    util_buf *b = text ? text : &local;
    size_t start = b->len;
    eng_tok_span *plain = NULL;
    size_t np = 0;
    int rc = eng_chat_render_spans(c, msgs, n, add_generation_prompt, b, &plain, &np, err);
    if (!rc) {
        for (size_t i = 0; i < np; i++) plain[i].start -= start;
        rc = eng_tokenize_spans(t, b->data + start, b->len - start, 0, plain, np, ids, nids, err);
    }
    free(plain);
    util_buf_release(&local);
    return rc;
}
