/* engine/chat.c: chat templates per family, rendered byte for byte as jinja2
 * renders the model's template: ChatML/Qwen (default system block read out of
 * the template), Gemma, Llama 3/3.1, Mistral v0/v1/v3/tekken, Phi-3 and
 * DeepSeek R1 (docs/chat-templates.md). The family is recognised from strings
 * in tokenizer.chat_template (without one: Gemma when the vocabulary has its
 * turn tokens, else ChatML); no Jinja interpreter, no tool definitions. */
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
    char *eos;         /* the text of the EOS token (Mistral, Phi-3 and DeepSeek print it) */
    int think_close;   /* DeepSeek R1 (Qwen distill): the generation prompt closes <think> */
    int strip_think;   /* Qwen 3: earlier assistant turns lose their <think> block */
    int tool_response; /* Qwen 2.5/3: tool results are <tool_response> blocks in one user turn */
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
            case '\\':
            case '\'':
            case '"': out[n++] = c; break;
            default: /* Python keeps unknown escapes as written */ out[n++] = '\\'; out[n++] = c;
            }
            continue;
        }
        out[n++] = *s;
    }
    free(out);
    return NULL;
}

/* Qwen 2.5's form: in the else branch of "messages[0]['role'] == 'system'",
 * a whole literal '<|im_start|>system\n...<|im_end|>\n' with nothing added
 * to it. Sets c->default_system to the first such literal. */
static void extract_whole_system_literal(eng_chat *c, const char *tpl, size_t n) {
    static const char head[] = "<|im_start|>system\\n";
    const char *end = tpl + n;
    if (!find_in(tpl, n, "messages[0]['role'] == 'system'") &&
        !find_in(tpl, n, "messages[0][\"role\"] == \"system\""))
        return;
    for (const char *p = tpl; (p = find_in(p, (size_t)(end - p), head)) != NULL; p++) {
        if (p == tpl || (p[-1] != '\'' && p[-1] != '"')) continue;
        char q = p[-1];
        const char *before = p - 1, *after = p;
        while (before > tpl && (before[-1] == ' ' || before[-1] == '\n')) before--;
        while (after < end && *after != q) after += *after == '\\' ? 2 : 1;
        for (after++; after < end && (*after == ' ' || *after == '\n');) after++;
        if ((before > tpl && before[-1] == '+') || (after < end && *after == '+')) continue; /* a part */
        size_t len;
        char *lit = parse_literal(p - 1, end, &len);
        if (lit && len > sizeof head && memcmp(lit + len - 11, "<|im_end|>\n", 11) == 0) {
            c->default_system = lit;
            c->default_system_len = len;
            return;
        }
        free(lit);
    }
}

/* The SmolLM2 template prints a fixed system block inside
 * {% if loop.first and messages[0]['role'] != 'system' %}{{ '...' }}{% endif %};
 * that literal is the default system text. Absent: no default. */
static int extract_default_system(eng_chat *c, const char *tpl, size_t n) {
    static const char *const conds[] = {"messages[0]['role'] != 'system'",
                                        "messages[0][\"role\"] != \"system\""};
    const char *at = NULL;
    for (size_t k = 0; k < 2 && !at; k++) at = find_in(tpl, n, conds[k]);
    if (!at) {
        extract_whole_system_literal(c, tpl, n);
        return UTIL_OK;
    }
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

/* The text of the EOS token; none when the file names none. */
static int read_eos_text(eng_chat *c, const eng_gguf *g, util_err *err) {
    uint32_t eos;
    int rc = eng_gguf_get_u32(g, "tokenizer.ggml.eos_token_id", &eos, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    const char **strs;
    uint32_t *lens;
    uint64_t count;
    rc = eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &strs, &lens, &count, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    if (eos < count && (c->eos = malloc((size_t)lens[eos] + 1)) != NULL) {
        memcpy(c->eos, strs[eos], lens[eos]);
        c->eos[lens[eos]] = '\0';
    }
    free(strs);
    free(lens);
    if (eos < count && !c->eos) return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    return UTIL_OK;
}

/* The family of a template other than ChatML and Gemma, from the markers and
 * literals only that family's templates have; -1 if none. */
static int detect_family(eng_chat *c, const char *tpl, size_t n) {
    if (find_in(tpl, n, "<|start_header_id|>"))
        return find_in(tpl, n, "Today Date") ? ENG_CHAT_LLAMA31 : ENG_CHAT_LLAMA3;
    if (find_in(tpl, n, "[INST]")) {
        if (find_in(tpl, n, "\"[INST]\" +") || find_in(tpl, n, "'[INST]' +")) return ENG_CHAT_MISTRAL_TEKKEN;
        if (find_in(tpl, n, "' [INST] '") || find_in(tpl, n, "\" [INST] \"")) return ENG_CHAT_MISTRAL_V1;
        if (find_in(tpl, n, "' [/INST]'") || find_in(tpl, n, "\" [/INST]\"")) return ENG_CHAT_MISTRAL_V0;
        return ENG_CHAT_MISTRAL_V3;
    }
    if (find_in(tpl, n, "<|end|>") &&
        (find_in(tpl, n, "<|user|>") || find_in(tpl, n, "'<|' + message['role'] + '|>'"))) {
        if (find_in(tpl, n, "'<|' + message['role'] + '|>'"))
            return find_in(tpl, n, "eos_token") ? ENG_CHAT_PHI3_SMALL : ENG_CHAT_PHI3_VISION;
        return find_in(tpl, n, "<|system|>") ? ENG_CHAT_PHI3 : ENG_CHAT_PHI3_MINI;
    }
    if (find_in(tpl, n, "<think></think>")) return -1; /* DeepSeek V3.1: its own thinking switch */
    /* <｜User｜>, and the R1 generation prompt <｜Assistant｜><think>\n (V3.2 and V4 differ) */
    if (find_in(tpl, n, "<\xef\xbd\x9cUser\xef\xbd\x9c>") && find_in(tpl, n,
                                                                     "<\xef\xbd\x9c"
                                                                     "Assistant\xef\xbd\x9c><think>\\n")) {
        c->think_close = find_in(tpl, n, "enable_thinking") != NULL;
        return ENG_CHAT_DEEPSEEK_R1;
    }
    return -1;
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
    } else if (find_in(tpl, n, "<|im_start|>") && !find_in(tpl, n, "<|im_sep|>")) { /* <|im_sep|>: Phi-4 */
        c->strip_think = find_in(tpl, n, "</think>") != NULL;
        c->tool_response = find_in(tpl, n, "<tool_response>") != NULL;
        rc = extract_default_system(c, tpl, n);
    } else if (find_in(tpl, n, "<start_of_turn>")) {
        c->format = ENG_CHAT_GEMMA;
        rc = read_bos_text(c, g, err);
    } else {
        int f = detect_family(c, tpl, n);
        if (f >= 0) {
            c->format = (eng_chat_format)f;
            if (find_in(tpl, n, "bos_token")) rc = read_bos_text(c, g, err);
            if (!rc) rc = read_eos_text(c, g, err);
        } else {
            snprintf(c->warning, sizeof c->warning,
                     "chat: the model's chat template is not a known family; using chatml "
                     "(--chat-template NAME chooses another)");
        }
    }
    if (rc) {
        eng_chat_free(c);
        return rc;
    }
    *out = c;
    return UTIL_OK;
}

int eng_chat_new_named(eng_chat **out, const eng_gguf *g, const char *name, util_err *err) {
    eng_chat_format f = ENG_CHAT_CHATML;
    int rc = name ? eng_chat_format_parse(name, &f, err) : UTIL_OK;
    if (!rc) rc = eng_chat_new(out, g, err);
    if (rc || !name) return rc;
    eng_chat *c = *out;
    c->warning[0] = '\0';
    if (c->format == f) return UTIL_OK;
    if (f != ENG_CHAT_CHATML) {
        free(c->default_system);
        c->default_system = NULL;
        c->default_system_len = 0;
    }
    c->format = f;
    if (g && !c->bos) rc = read_bos_text(c, g, err);
    if (!rc && g && !c->eos) rc = read_eos_text(c, g, err);
    if (rc) {
        eng_chat_free(c);
        *out = NULL;
    }
    return rc;
}

static char *dup_opt(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

int eng_chat_new_format(eng_chat **out, eng_chat_format f, const char *bos, const char *eos, util_err *err) {
    *out = NULL;
    eng_chat *c = calloc(1, sizeof *c);
    if (!c) return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    c->format = f;
    c->bos = dup_opt(bos);
    c->bos_len = bos ? strlen(bos) : 0;
    c->eos = dup_opt(eos);
    if ((bos && !c->bos) || (eos && !c->eos)) {
        eng_chat_free(c);
        return util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    }
    *out = c;
    return UTIL_OK;
}

void eng_chat_free(eng_chat *c) {
    if (!c) return;
    free(c->default_system);
    free(c->bos);
    free(c->eos);
    free(c);
}

eng_chat_format eng_chat_get_format(const eng_chat *c) { return c->format; }

const char *eng_chat_format_name(eng_chat_format f) {
    switch (f) {
    case ENG_CHAT_CHATML: return "chatml";
    case ENG_CHAT_GEMMA: return "gemma";
    case ENG_CHAT_LLAMA3: return "llama3";
    case ENG_CHAT_LLAMA31: return "llama3.1";
    case ENG_CHAT_MISTRAL_V0: return "mistral-v0";
    case ENG_CHAT_MISTRAL_V1: return "mistral-v1";
    case ENG_CHAT_MISTRAL_V3: return "mistral-v3";
    case ENG_CHAT_MISTRAL_TEKKEN: return "mistral-v3-tekken";
    case ENG_CHAT_PHI3: return "phi3";
    case ENG_CHAT_PHI3_MINI: return "phi3-mini";
    case ENG_CHAT_PHI3_SMALL: return "phi3-small";
    case ENG_CHAT_PHI3_VISION: return "phi3-vision";
    case ENG_CHAT_DEEPSEEK_R1: return "deepseek-r1";
    }
    return "unknown";
}

int eng_chat_format_parse(const char *name, eng_chat_format *f, util_err *err) {
    for (int i = ENG_CHAT_CHATML; i <= ENG_CHAT_DEEPSEEK_R1; i++)
        if (strcmp(name, eng_chat_format_name((eng_chat_format)i)) == 0) {
            *f = (eng_chat_format)i;
            return UTIL_OK;
        }
    return util_err_set(err, UTIL_EINVAL,
                        "unknown chat template '%s' (known: chatml, gemma, llama3, llama3.1, mistral-v0, "
                        "mistral-v1, mistral-v3, mistral-v3-tekken, phi3, phi3-mini, phi3-small, "
                        "phi3-vision, deepseek-r1)",
                        name);
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

/* Qwen 3 drops the reasoning of assistant turns before the last user turn:
 * what follows the last </think>, leading newlines stripped. */
static const char *drop_think(const char *s) {
    for (const char *t; (t = strstr(s, "</think>")) != NULL;) s = t + 8;
    while (*s == '\n') s++;
    return s;
}

static int render_chatml(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *out) {
    int rc = 0;
    size_t last_user = n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].role, "user") == 0) last_user = i;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *s = m[i].content;
        if (c->tool_response && strcmp(m[i].role, "tool") == 0) { /* consecutive results share a user turn */
            if (i == 0 || strcmp(m[i - 1].role, "tool") != 0) rc = put(out, "<|im_start|>user");
            if (!rc) rc = put(out, "\n<tool_response>\n");
            if (!rc) rc = put_plain(out, s, strlen(s));
            if (!rc) rc = put(out, "\n</tool_response>");
            if (!rc && (i + 1 == n || strcmp(m[i + 1].role, "tool") != 0)) rc = put(out, "<|im_end|>\n");
            continue;
        }
        if (c->strip_think && last_user < n && i < last_user && strcmp(m[i].role, "assistant") == 0 &&
            strstr(s, "</think>"))
            s = drop_think(s);
        if (i == 0 && strcmp(m[0].role, "system") != 0 && c->default_system)
            rc = util_buf_append(out->b, c->default_system, c->default_system_len);
        if (!rc) rc = put(out, "<|im_start|>");
        if (!rc) rc = put_plain(out, m[i].role, strlen(m[i].role));
        if (!rc) rc = put(out, "\n");
        if (!rc) rc = put_plain(out, s, strlen(s));
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
        if (!rc)
            rc = strcmp(m[i].role, "assistant") == 0 ? put(out, role) : put_plain(out, role, strlen(role));
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

/* --- Llama 3, Mistral, Phi-3, DeepSeek ------------------------------------ */

static const char k_alternate[] = "conversation roles must alternate user/assistant/user/assistant/...";

/* Message content trimmed the way Jinja's |trim does (str.strip()). */
static int put_trimmed(render_out *o, const char *s) {
    size_t a, b;
    strip_span(s, &a, &b);
    return put_plain(o, s + a, b - a);
}

static int put_opt(render_out *o, const char *s) { return s ? put(o, s) : 0; }

/* s as a JSON string the way the template's tojson writes it (Python's
 * json.dumps, ensure_ascii off): a plain span between the quotes' markers. */
static int put_json_string(render_out *o, const char *s) {
    util_buf tmp;
    util_buf_init(&tmp);
    int rc = util_buf_append(&tmp, "\"", 1);
    for (; *s && !rc; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        const char *e = NULL;
        switch (ch) {
        case '"': e = "\\\""; break;
        case '\\': e = "\\\\"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        default:
            if (ch < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", ch);
                e = esc;
            }
        }
        rc = e ? util_buf_puts(&tmp, e) : util_buf_append(&tmp, s, 1);
    }
    if (!rc) rc = util_buf_append(&tmp, "\"", 1);
    if (!rc) rc = put_plain(o, tmp.data, tmp.len);
    util_buf_release(&tmp);
    return rc;
}

/* Llama 3 and 3.1 (no tools): a header per message, contents trimmed; 3.1
 * always prints a system header with the knowledge and "Today" dates. */
static int render_llama3(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *o) {
    int rc = put_opt(o, c->bos);
    size_t first = 0;
    if (c->format == ENG_CHAT_LLAMA31) {
        if (!rc)
            rc = put(o, "<|start_header_id|>system<|end_header_id|>\n\n"
                        "Cutting Knowledge Date: December 2023\nToday Date: " ENG_CHAT_FIXED_DATE "\n\n");
        if (n > 0 && strcmp(m[0].role, "system") == 0) {
            if (!rc) rc = put_trimmed(o, m[0].content);
            first = 1;
        }
        if (!rc) rc = put(o, "<|eot_id|>");
    }
    for (size_t i = first; i < n && !rc; i++) {
        /* 3.1: a tool result is an ipython turn, its text as a JSON string, untrimmed */
        int ipy = c->format == ENG_CHAT_LLAMA31 &&
                  (!strcmp(m[i].role, "tool") || !strcmp(m[i].role, "ipython"));
        rc = put(o, "<|start_header_id|>");
        if (!rc) rc = ipy ? put(o, "ipython") : put_plain(o, m[i].role, strlen(m[i].role));
        if (!rc) rc = put(o, "<|end_header_id|>\n\n");
        if (!rc) rc = ipy ? put_json_string(o, m[i].content) : put_trimmed(o, m[i].content);
        if (!rc) rc = put(o, "<|eot_id|>");
    }
    if (!rc && gen) rc = put(o, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    return rc;
}

/* Mistral's [INST] templates: user/assistant alternate after an optional
 * system message, which v1 puts in the first user turn and v3 in the last
 * message when that is a user turn; v0 has no system role. No generation
 * prompt: the text ends with [/INST] either way. */
static int render_mistral(const eng_chat *c, const eng_chat_msg *m, size_t n, render_out *o, util_err *err) {
    eng_chat_format f = c->format;
    const char *sys = NULL;
    size_t first = 0;
    if (n > 0 && strcmp(m[0].role, "system") == 0 && f != ENG_CHAT_MISTRAL_V0) {
        sys = m[0].content;
        first = 1;
    }
    for (size_t i = first; i < n; i++) {
        int is_user = strcmp(m[i].role, "user") == 0;
        if (is_user != ((i - first) % 2 == 0))
            return util_err_set(err, UTIL_EINVAL, "chat: %s template: %s (message %zu is '%s')",
                                eng_chat_format_name(f), k_alternate, i, m[i].role);
        if (!is_user && strcmp(m[i].role, "assistant") != 0)
            return util_err_set(err, UTIL_EINVAL,
                                "chat: %s template: only user and assistant roles (and a first system "
                                "message) are supported (message %zu is '%s')",
                                eng_chat_format_name(f), i, m[i].role);
    }
    const char *open = f == ENG_CHAT_MISTRAL_V1       ? " [INST] "
                       : f == ENG_CHAT_MISTRAL_TEKKEN ? "[INST]"
                                                      : "[INST] ";
    const char *close = f == ENG_CHAT_MISTRAL_V3 || f == ENG_CHAT_MISTRAL_TEKKEN ? "[/INST]" : " [/INST]";
    int rc = put_opt(o, c->bos);
    for (size_t i = first; i < n && !rc; i++) {
        if (strcmp(m[i].role, "user") == 0) {
            int with_sys = sys && (f == ENG_CHAT_MISTRAL_V1 ? i == first : i == n - 1);
            rc = put(o, open);
            if (!rc && with_sys) rc = put_plain(o, sys, strlen(sys));
            if (!rc && with_sys) rc = put(o, "\n\n");
            if (!rc) rc = put_plain(o, m[i].content, strlen(m[i].content));
            if (!rc) rc = put(o, close);
            continue;
        }
        if (f == ENG_CHAT_MISTRAL_V1 || f == ENG_CHAT_MISTRAL_V3) rc = put(o, " ");
        if (!rc)
            rc = f == ENG_CHAT_MISTRAL_V3 ? put_trimmed(o, m[i].content)
                                          : put_plain(o, m[i].content, strlen(m[i].content));
        if (!rc) rc = put_opt(o, c->eos);
    }
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* Phi-3: <|role|>\n content <|end|>\n. Phi-3.5 prints a non-empty system
 * turn, user and assistant turns, then the generation prompt or EOS; mini
 * and medium print user and assistant only, a user turn opening the
 * assistant's; small prints every role, then the prompt or EOS; vision every
 * role, then the prompt unless the last turn is the assistant's. */
static int render_phi3(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *o) {
    eng_chat_format f = c->format;
    int rc = put_opt(o, c->bos);
    for (size_t i = 0; i < n && !rc; i++) {
        const char *r = m[i].role;
        int ua = strcmp(r, "user") == 0 || strcmp(r, "assistant") == 0;
        if (f == ENG_CHAT_PHI3 && !ua && (strcmp(r, "system") != 0 || !m[i].content[0])) continue;
        if (f == ENG_CHAT_PHI3_MINI && !ua) continue;
        if (f != ENG_CHAT_PHI3_MINI || strcmp(r, "user") == 0) {
            rc = put(o, "<|");
            if (!rc) rc = put_plain(o, r, strlen(r));
            if (!rc) rc = put(o, "|>\n");
        }
        if (!rc) rc = put_plain(o, m[i].content, strlen(m[i].content));
        if (!rc) rc = put(o, "<|end|>\n");
        if (!rc && f == ENG_CHAT_PHI3_MINI && strcmp(r, "user") == 0) rc = put(o, "<|assistant|>\n");
    }
    if (rc || f == ENG_CHAT_PHI3_MINI) return rc;
    if (f == ENG_CHAT_PHI3_VISION)
        return gen && !(n > 0 && strcmp(m[n - 1].role, "assistant") == 0) ? put(o, "<|assistant|>\n") : 0;
    return gen ? put(o, "<|assistant|>\n") : put_opt(o, c->eos);
}

/* DeepSeek R1 distills: BOS, the last system message, then <｜User｜> and
 * <｜Assistant｜> turns; an assistant turn keeps only what follows its last
 * </think>. The generation prompt opens a <think> block (the Qwen distill's
 * template closes it again unless enable_thinking). */
static int render_deepseek(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, render_out *o) {
    int rc = put_opt(o, c->bos);
    const char *sys = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].role, "system") == 0) sys = m[i].content;
    if (!rc && sys) rc = put_plain(o, sys, strlen(sys));
    for (size_t i = 0; i < n && !rc; i++) {
        const char *s = m[i].content;
        if (strcmp(m[i].role, "user") == 0) {
            rc = put(o, "<\xef\xbd\x9cUser\xef\xbd\x9c>");
            if (!rc) rc = put_plain(o, s, strlen(s));
        } else if (strcmp(m[i].role, "assistant") == 0) {
            for (const char *t; (t = strstr(s, "</think>")) != NULL;) s = t + 8;
            rc = put(o, "<\xef\xbd\x9c"
                        "Assistant\xef\xbd\x9c>");
            if (!rc) rc = put_plain(o, s, strlen(s));
            if (!rc)
                rc = put(o, "<\xef\xbd\x9c"
                            "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>");
        }
    }
    if (!rc && gen)
        rc = put(o, "<\xef\xbd\x9c"
                    "Assistant\xef\xbd\x9c><think>\n");
    if (!rc && gen && c->think_close) rc = put(o, "</think>");
    return rc;
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
    } else if (c->format >= ENG_CHAT_MISTRAL_V0 && c->format <= ENG_CHAT_MISTRAL_TEKKEN) {
        rc = render_mistral(c, msgs, n, o, err);
    } else if (c->format != ENG_CHAT_CHATML) {
        if (c->format >= ENG_CHAT_PHI3 && c->format <= ENG_CHAT_PHI3_VISION)
            rc = render_phi3(c, msgs, n, add_generation_prompt, o);
        else if (c->format == ENG_CHAT_DEEPSEEK_R1)
            rc = render_deepseek(c, msgs, n, add_generation_prompt, o);
        else
            rc = render_llama3(c, msgs, n, add_generation_prompt, o);
        if (rc) rc = util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
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

int eng_chat_render(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                    util_buf *out, util_err *err) {
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
