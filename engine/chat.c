/* engine/chat.c: chat templates per family, rendered byte for byte as jinja2
 * renders the model's template: ChatML/Qwen (default system block read out of
 * the template), Gemma, Llama 3/3.1, Mistral v0/v1/v3/tekken, Phi-3 and
 * DeepSeek R1 (docs/chat-templates.md). The family is recognised from strings
 * in tokenizer.chat_template (without one: Gemma when the vocabulary has its
 * turn tokens, else ChatML), with tool definitions, calls and results where
 * the family's template has them (from the caller's json.dumps text); no
 * Jinja interpreter. */
#include "chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"
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
        if (util_grow(&o->spans, &o->cap, o->n + 1, sizeof *o->spans)) return UTIL_ENOMEM;
        o->spans[o->n++] = (eng_tok_span){o->b->len, n};
    }
    return util_buf_append(o->b, s, n);
}

/* What a message adds (eng_chat_extra.msg): none without it. */
static size_t n_calls_of(const eng_chat_extra *x, size_t i) { return x->msg ? x->msg[i].n_calls : 0; }
static const eng_chat_call *calls_of(const eng_chat_extra *x, size_t i) {
    return x->msg ? x->msg[i].calls : NULL;
}
static const char *call_id_of(const eng_chat_extra *x, size_t i) { return x->msg ? x->msg[i].call_id : NULL; }

static int put_str(render_out *o, const char *s) { return put_plain(o, s, strlen(s)); }

/* A JSON string literal (p at its quote, end past its closing one) decoded,
 * as a plain span: what a template prints for a string argument. */
static int put_unescaped(render_out *o, const char *p, const char *end) {
    util_buf b;
    util_buf_init(&b);
    int rc = 0;
    for (p++; p < end - 1 && !rc; p++) {
        if (*p != '\\') {
            rc = util_buf_append(&b, p, 1);
            continue;
        }
        char ch = *++p, u8[4];
        if (ch == 'u' && end - p > 4) {
            uint32_t cp = (uint32_t)strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && end - p > 6 && p[1] == '\\' && p[2] == 'u') {
                uint32_t lo = (uint32_t)strtoul((char[5]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            int k = eng_utf8_encode(cp, u8);
            rc = util_buf_append(&b, u8, (size_t)(k > 0 ? k : 0));
            continue;
        }
        ch = ch == 'n'   ? '\n'
             : ch == 't' ? '\t'
             : ch == 'r' ? '\r'
             : ch == 'b' ? '\b'
             : ch == 'f' ? '\f'
                         : ch;
        rc = util_buf_append(&b, &ch, 1);
    }
    if (!rc && b.len) rc = put_plain(o, b.data, b.len);
    util_buf_release(&b);
    return rc;
}

/* The end of the JSON value at p (json.dumps text: spaces only after , and
 * :), or NULL if it is cut short. */
static const char *json_skip(const char *p) {
    while (*p == ' ') p++;
    if (*p == '"') {
        for (p++; *p && *p != '"'; p++)
            if (*p == '\\' && !*++p) return NULL;
        return *p ? p + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; *p; p++) {
            if (*p == '"') {
                if (!(p = json_skip(p))) return NULL;
                p--;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if ((*p == '}' || *p == ']') && --depth == 0) {
                return p + 1;
            }
        }
        return NULL;
    }
    const char *v = p;
    while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ') p++;
    return p > v ? p : NULL;
}

/* A string argument (its JSON is a string literal) printed raw, anything
 * else as its JSON text: Qwen 3's "arguments is string" test. */
static int put_args_raw(render_out *o, const char *args) {
    const char *end = args[0] == '"' ? json_skip(args) : NULL;
    if (end && !*end) return put_unescaped(o, args, end);
    return put_str(o, args);
}

static int put_indent(util_buf *b, int depth) {
    int rc = util_buf_append(b, "\n", 1);
    for (int i = 0; i < depth && !rc; i++) rc = util_buf_append(b, "    ", 4);
    return rc;
}

/* json.dumps text re-indented as tojson(indent=4) writes it (Llama 3.1's
 * tool definitions): a plain span. */
static int put_json_indented(render_out *o, const char *js) {
    util_buf b;
    util_buf_init(&b);
    int rc = 0, depth = 0;
    for (const char *p = js; *p && !rc; p++) {
        if (*p == '"') {
            const char *e = json_skip(p);
            if (!e) e = p + strlen(p);
            rc = util_buf_append(&b, p, (size_t)(e - p));
            p = e - 1;
        } else if (*p == '{' || *p == '[') {
            if (p[1] == (*p == '{' ? '}' : ']')) { /* empty: {} or [] */
                rc = util_buf_append(&b, p, 2);
                p++;
            } else {
                rc = util_buf_append(&b, p, 1);
                if (!rc) rc = put_indent(&b, ++depth);
            }
        } else if (*p == '}' || *p == ']') {
            rc = put_indent(&b, --depth);
            if (!rc) rc = util_buf_append(&b, p, 1);
        } else if (*p == ',') {
            rc = util_buf_append(&b, ",", 1);
            if (!rc) rc = put_indent(&b, depth);
        } else if (*p == ':') {
            rc = util_buf_append(&b, ": ", 2);
        } else if (*p != ' ') {
            rc = util_buf_append(&b, p, 1);
        }
    }
    if (!rc && b.len) rc = put_plain(o, b.data, b.len);
    util_buf_release(&b);
    return rc;
}

static const char k_qwen_tools_head[] =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with "
    "function signatures within <tools></tools> XML tags:\n<tools>";
static const char k_qwen_tools_tail[] =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}\n</tool_call><|im_end|>\n";

/* Qwen's system turn with tools: the system message (else Qwen 2.5's
 * default text), then the definitions one a line. */
static int qwen_tools(const eng_chat *c, const eng_chat_msg *m, size_t n, const eng_chat_extra *x,
                      render_out *o) {
    static const size_t head = 19, tail = 11; /* "<|im_start|>system\n", "<|im_end|>\n" */
    int rc = put(o, "<|im_start|>system\n");
    if (!rc && n > 0 && strcmp(m[0].role, "system") == 0) {
        rc = put_str(o, m[0].content);
        if (!rc) rc = put(o, "\n\n");
    } else if (!rc && c->default_system && c->default_system_len > head + tail) {
        rc = util_buf_append(o->b, c->default_system + head, c->default_system_len - head - tail);
        if (!rc) rc = put(o, "\n\n");
    }
    if (!rc) rc = put(o, k_qwen_tools_head);
    for (size_t k = 0; k < x->n_tools && !rc; k++) {
        rc = put(o, "\n");
        if (!rc) rc = put_str(o, x->tools[k]);
    }
    return rc ? rc : put(o, k_qwen_tools_tail);
}

/* Qwen's <tool_call> blocks (Qwen 3: a newline before each but a first one
 * that follows no content; string arguments raw). */
static int qwen_calls(const eng_chat *c, const eng_chat_call *v, size_t nc, int has_content, render_out *o) {
    int rc = 0;
    for (size_t k = 0; k < nc && !rc; k++) {
        if (!c->strip_think || k > 0 || has_content) rc = put(o, "\n");
        if (!rc) rc = put(o, "<tool_call>\n{\"name\": \"");
        if (!rc) rc = put_str(o, v[k].name);
        if (!rc) rc = put(o, "\", \"arguments\": ");
        if (!rc) rc = c->strip_think ? put_args_raw(o, v[k].arguments) : put_str(o, v[k].arguments);
        if (!rc) rc = put(o, "}\n</tool_call>");
    }
    return rc;
}

/* Qwen 3's assistant turn: the reasoning before the last </think> split off;
 * after the last real user query the last turn (or one with reasoning)
 * shows it in a <think> block, earlier turns lose it. */
static int qwen3_assistant(const char *s, int show, render_out *o, int *has_content) {
    const char *close = NULL;
    for (const char *t = s; (t = strstr(t, "</think>")) != NULL; t += 8) close = t;
    const char *content = s, *r0 = s, *r1 = s;
    if (close) {
        const char *first = strstr(s, "</think>");
        content = close + 8;
        while (*content == '\n') content++;
        r1 = first; /* split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') */
        while (r1 > s && r1[-1] == '\n') r1--;
        for (const char *t = s; (t = strstr(t, "<think>")) != NULL && t < r1; t += 7) r0 = t + 7;
        if (r0 > r1) r0 = r1;
        while (r0 < r1 && *r0 == '\n') r0++;
    }
    *has_content = content[0] != 0;
    int rc = put(o, "<|im_start|>assistant\n");
    if (!rc && show && (r1 > r0 || show > 1)) {
        rc = put(o, "<think>\n");
        if (!rc) rc = put_plain(o, r0, (size_t)(r1 - r0));
        if (!rc) rc = put(o, "\n</think>\n\n");
        while (*content == '\n') content++;
    }
    return rc ? rc : put_str(o, content);
}

/* Qwen 3's last query: the last user turn that is not a bare tool response. */
static size_t qwen3_last_query(const eng_chat_msg *m, size_t n) {
    for (size_t i = n; i-- > 0;) {
        const char *s = m[i].content;
        size_t k = strlen(s);
        if (strcmp(m[i].role, "user") == 0 && !(strncmp(s, "<tool_response>", 15) == 0 && k >= 16 &&
                                                strcmp(s + k - 16, "</tool_response>") == 0))
            return i;
    }
    return n ? n - 1 : 0;
}

static int render_chatml(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, const eng_chat_extra *x,
                         render_out *out) {
    int rc = 0, tools = c->tool_response && x->n_tools > 0;
    size_t last_query = c->strip_think ? qwen3_last_query(m, n) : n;
    if (tools) rc = qwen_tools(c, m, n, x, out);
    for (size_t i = 0; i < n && !rc; i++) {
        const char *s = m[i].content;
        size_t nc = c->tool_response ? n_calls_of(x, i) : 0;
        if (c->tool_response && strcmp(m[i].role, "tool") == 0) { /* consecutive results share a user turn */
            if (i == 0 || strcmp(m[i - 1].role, "tool") != 0) rc = put(out, "<|im_start|>user");
            if (!rc) rc = put(out, "\n<tool_response>\n");
            if (!rc) rc = put_plain(out, s, strlen(s));
            if (!rc) rc = put(out, "\n</tool_response>");
            if (!rc && (i + 1 == n || strcmp(m[i + 1].role, "tool") != 0)) rc = put(out, "<|im_end|>\n");
            continue;
        }
        if (i == 0 && tools && strcmp(m[0].role, "system") == 0) continue; /* in the tools turn */
        if (c->strip_think && strcmp(m[i].role, "assistant") == 0) {
            int has_content;
            rc = qwen3_assistant(s, i > last_query && i + 1 == n ? 2 : i > last_query, out, &has_content);
            if (!rc) rc = qwen_calls(c, calls_of(x, i), nc, has_content, out);
            if (!rc) rc = put(out, "<|im_end|>\n");
            continue;
        }
        if (nc && strcmp(m[i].role, "assistant") == 0) { /* Qwen 2.5 */
            rc = put(out, "<|im_start|>assistant");
            if (!rc && s && s[0]) rc = put(out, "\n");
            if (!rc && s && s[0]) rc = put_str(out, s);
            if (!rc) rc = qwen_calls(c, calls_of(x, i), nc, s && s[0], out);
            if (!rc) rc = put(out, "<|im_end|>\n");
            continue;
        }
        if (i == 0 && strcmp(m[0].role, "system") != 0 && c->default_system && !tools)
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

static const char k_llama_fn_head_sys[] =
    "You have access to the following functions. To call a function, please respond with JSON for a function "
    "call.Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its "
    "value}.Do not use variables.\n\n";
static const char k_llama_fn_head_user[] =
    "Given the following functions, please respond with a JSON for a function call with its proper arguments "
    "that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": "
    "dictionary of argument name and its value}.Do not use variables.\n\n";

/* Llama 3.1's definitions: each as tojson(indent=4) and a blank line. */
static int llama_tools(const eng_chat_extra *x, const char *head, render_out *o) {
    int rc = put(o, head);
    for (size_t k = 0; k < x->n_tools && !rc; k++) {
        rc = put_json_indented(o, x->tools[k]);
        if (!rc) rc = put(o, "\n\n");
    }
    return rc;
}

/* Llama 3 and 3.1: a header per message, contents trimmed; 3.1 always
 * prints a system header with the knowledge and "Today" dates, with tools
 * "Environment: ipython" and the definitions (in the first user turn unless
 * x->tools_in_system), a call as {"name", "parameters"}, a result as an
 * ipython turn. Llama 3 prints a null content as jinja2 does: "None". */
static int render_llama3(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen, const eng_chat_extra *x,
                         render_out *o, util_err *err) {
    int rc = put_opt(o, c->bos), l31 = c->format == ENG_CHAT_LLAMA31, tools = l31 && x->n_tools > 0;
    size_t first = 0;
    if (l31) {
        if (!rc) rc = put(o, "<|start_header_id|>system<|end_header_id|>\n\n");
        if (!rc && tools) rc = put(o, "Environment: ipython\n");
        if (!rc)
            rc = put(o, "Cutting Knowledge Date: December 2023\nToday Date: " ENG_CHAT_FIXED_DATE "\n\n");
        if (!rc && tools && x->tools_in_system) rc = llama_tools(x, k_llama_fn_head_sys, o);
        if (n > 0 && strcmp(m[0].role, "system") == 0) {
            if (!rc) rc = put_trimmed(o, m[0].content);
            first = 1;
        }
        if (!rc) rc = put(o, "<|eot_id|>");
        if (!rc && tools && !x->tools_in_system) {
            if (first == n || !m[first].content)
                return util_err_set(
                    err, UTIL_EINVAL,
                    "chat: llama3.1 template: tools in the first user message, but there is none");
            rc = put(o, "<|start_header_id|>user<|end_header_id|>\n\n");
            if (!rc) rc = llama_tools(x, k_llama_fn_head_user, o);
            if (!rc) rc = put_trimmed(o, m[first].content);
            if (!rc) rc = put(o, "<|eot_id|>");
            first++;
        }
    }
    for (size_t i = first; i < n && !rc; i++) {
        size_t nc = l31 ? n_calls_of(x, i) : 0;
        if (nc) { /* 3.1: one call, {"name": ..., "parameters": ...} */
            if (nc != 1)
                return util_err_set(
                    err, UTIL_EINVAL,
                    "chat: llama3.1 template: only one tool call per turn (message %zu has %zu)", i, nc);
            const eng_chat_call *v = calls_of(x, i);
            rc = put(o, "<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"");
            if (!rc) rc = put_str(o, v->name);
            if (!rc) rc = put(o, "\", \"parameters\": ");
            if (!rc) rc = put_str(o, v->arguments);
            if (!rc) rc = put(o, "}<|eot_id|>");
            continue;
        }
        /* 3.1: a tool result is an ipython turn, its text as a JSON string, untrimmed */
        int ipy = l31 && (!strcmp(m[i].role, "tool") || !strcmp(m[i].role, "ipython"));
        rc = put(o, "<|start_header_id|>");
        if (!rc) rc = ipy ? put(o, "ipython") : put_plain(o, m[i].role, strlen(m[i].role));
        if (!rc) rc = put(o, "<|end_header_id|>\n\n");
        if (!rc)
            rc = ipy ? put_json_string(o, m[i].content)
                     : put_trimmed(o, m[i].content ? m[i].content : "None");
        if (!rc) rc = put(o, "<|eot_id|>");
    }
    if (!rc && gen) rc = put(o, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* The members of the JSON object at p: calls fn with each key (its quotes
 * included) and value span; -1 if the text is not an object. */
typedef int (*member_fn)(void *ctx, const char *k0, const char *k1, const char *v0, const char *v1);
static int json_members(const char *p, member_fn fn, void *ctx) {
    if (*p != '{') return -1;
    for (p++; *p == ' '; p++) {}
    while (*p && *p != '}') {
        const char *k0 = p, *k1 = *p == '"' ? json_skip(p) : NULL;
        if (!k1) return -1;
        for (p = k1; *p == ' ' || *p == ':'; p++) {}
        const char *v0 = p, *v1 = json_skip(p);
        if (!v1) return -1;
        int rc = fn(ctx, k0, k1, v0, v1);
        if (rc) return rc;
        for (p = v1; *p == ' ' || *p == ','; p++) {}
    }
    return *p == '}' ? 0 : -1;
}

static int find_function(void *ctx, const char *k0, const char *k1, const char *v0, const char *v1) {
    (void)v1;
    if (k1 - k0 == 10 && memcmp(k0, "\"function\"", 10) == 0) *(const char **)ctx = v0;
    return 0;
}

typedef struct mistral_fn {
    render_out *o;
    int n;
} mistral_fn;

/* One member of a definition's function as Mistral's template writes it:
 * "key": "raw string" or "key": JSON; "return" left out. */
static int mistral_member(void *ctx, const char *k0, const char *k1, const char *v0, const char *v1) {
    mistral_fn *m = ctx;
    if (k1 - k0 == 8 && memcmp(k0, "\"return\"", 8) == 0) return 0;
    int rc = m->n++ ? put(m->o, ", ") : 0;
    if (!rc) rc = put(m->o, "\"");
    if (!rc) rc = put_unescaped(m->o, k0, k1);
    if (!rc) rc = put(m->o, "\": ");
    if (*v0 == '"') {
        if (!rc) rc = put(m->o, "\"");
        if (!rc) rc = put_unescaped(m->o, v0, v1);
        if (!rc) rc = put(m->o, "\"");
    } else if (!rc) {
        rc = put_plain(m->o, v0, (size_t)(v1 - v0));
    }
    return rc ? 1 : 0;
}

/* Mistral's [AVAILABLE_TOOLS] block. */
static int mistral_tools(const eng_chat_extra *x, int tekken, render_out *o, util_err *err) {
    int rc = put(o, tekken ? "[AVAILABLE_TOOLS][" : "[AVAILABLE_TOOLS] [");
    for (size_t k = 0; k < x->n_tools && !rc; k++) {
        const char *fn = NULL;
        mistral_fn m = {o, 0};
        if (json_members(x->tools[k], find_function, &fn) || !fn)
            return util_err_set(err, UTIL_EINVAL,
                                "chat: tool definition %zu is not a JSON object with a function", k);
        rc = put(o, k ? ", " : "");
        if (!rc) rc = put(o, "{\"type\": \"function\", \"function\": {");
        if (!rc && (rc = json_members(fn, mistral_member, &m)) < 0)
            return util_err_set(err, UTIL_EINVAL,
                                "chat: tool definition %zu: its function is not a JSON object", k);
        if (!rc) rc = put(o, "}}");
    }
    if (!rc) rc = put(o, "][/AVAILABLE_TOOLS]");
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* Mistral's ids: 9 characters, or the template raises. */
static int mistral_id(const char *id, size_t i, util_err *err) {
    if (id && strlen(id) == 9) return UTIL_OK;
    return util_err_set(err, UTIL_EINVAL,
                        "chat: mistral template: tool call ids must be 9 characters (message %zu)", i);
}

/* v3/tekken's [TOOL_CALLS] turn and [TOOL_RESULTS] block. */
static int mistral_call_turn(const eng_chat *c, const eng_chat_extra *x, size_t i, render_out *o,
                             util_err *err) {
    int tek = c->format == ENG_CHAT_MISTRAL_TEKKEN, rc = put(o, tek ? "[TOOL_CALLS][" : "[TOOL_CALLS] [");
    const eng_chat_call *v = calls_of(x, i);
    for (size_t k = 0; k < n_calls_of(x, i) && !rc; k++) {
        if ((rc = mistral_id(v[k].id, i, err))) return rc;
        rc = put(o, k ? ", {\"name\": " : "{\"name\": ");
        if (!rc) rc = put_json_string(o, v[k].name);
        if (!rc) rc = put(o, ", \"arguments\": ");
        if (!rc) rc = put_str(o, v[k].arguments);
        if (!rc) rc = put(o, ", \"id\": \"");
        if (!rc) rc = put_str(o, v[k].id);
        if (!rc) rc = put(o, "\"}");
    }
    if (!rc) rc = put(o, "]");
    if (!rc) rc = put_opt(o, c->eos);
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

static int mistral_result(const eng_chat *c, const eng_chat_msg *m, const eng_chat_extra *x, size_t i,
                          render_out *o, util_err *err) {
    int rc = mistral_id(call_id_of(x, i), i, err);
    if (rc) return rc;
    rc = put(o, c->format == ENG_CHAT_MISTRAL_TEKKEN ? "[TOOL_RESULTS]{\"content\": "
                                                     : "[TOOL_RESULTS] {\"content\": ");
    if (!rc) rc = put_str(o, m[i].content);
    if (!rc) rc = put(o, ", \"call_id\": \"");
    if (!rc) rc = put_str(o, call_id_of(x, i));
    if (!rc) rc = put(o, "\"}[/TOOL_RESULTS]");
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* Mistral's [INST] templates: user/assistant alternate after an optional
 * system message, which v1 puts in the first user turn and v3 in the last
 * message when that is a user turn; v0 has no system role. v3 and tekken
 * skip tool calls and results in that count, put the definitions before the
 * last user turn, calls in [TOOL_CALLS] and results in [TOOL_RESULTS]. No
 * generation prompt: the text ends with [/INST] either way. */
static int render_mistral(const eng_chat *c, const eng_chat_msg *m, size_t n, const eng_chat_extra *x,
                          render_out *o, util_err *err) {
    eng_chat_format f = c->format;
    int v3 = f == ENG_CHAT_MISTRAL_V3 || f == ENG_CHAT_MISTRAL_TEKKEN;
    const char *sys = NULL;
    size_t first = 0, last_user = n, idx = 0;
    if (n > 0 && strcmp(m[0].role, "system") == 0 && f != ENG_CHAT_MISTRAL_V0) {
        sys = m[0].content;
        first = 1;
    }
    for (size_t i = first; i < n; i++) {
        int is_user = strcmp(m[i].role, "user") == 0;
        if (is_user) last_user = i;
        if (v3 && (n_calls_of(x, i) || !strcmp(m[i].role, "tool") || !strcmp(m[i].role, "tool_results")))
            continue;
        if (is_user != (idx++ % 2 == 0))
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
    const char *close = v3 ? "[/INST]" : " [/INST]";
    int rc = put_opt(o, c->bos);
    for (size_t i = first; i < n && !rc; i++) {
        if (strcmp(m[i].role, "user") == 0) {
            int with_sys = sys && (f == ENG_CHAT_MISTRAL_V1 ? i == first : i == n - 1);
            if (v3 && x->n_tools && i == last_user &&
                (rc = mistral_tools(x, f == ENG_CHAT_MISTRAL_TEKKEN, o, err)))
                return rc;
            rc = put(o, open);
            if (!rc && with_sys) rc = put_plain(o, sys, strlen(sys));
            if (!rc && with_sys) rc = put(o, "\n\n");
            if (!rc) rc = put_plain(o, m[i].content, strlen(m[i].content));
            if (!rc) rc = put(o, close);
            continue;
        }
        if (v3 && n_calls_of(x, i)) {
            if ((rc = mistral_call_turn(c, x, i, o, err))) return rc;
            continue;
        }
        if (v3 && strcmp(m[i].role, "assistant") != 0) {
            if ((rc = mistral_result(c, m, x, i, o, err))) return rc;
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

#define DS_(s) "<\xef\xbd\x9c" s "\xef\xbd\x9c>"
#define DS_SEP "\xe2\x96\x81" /* U+2581 */

/* DeepSeek R1's tool calls of message i: the conversation's first call opens
 * the calls block, later ones do not (the templates' ns.is_first is never
 * reset). The Qwen distill writes arguments as JSON and closes the block
 * after each turn's calls; the Llama distill (only for a null content)
 * concatenates them as text (not a string: jinja2 raises) and closes the
 * block after every call but the first. */
static int deepseek_calls(const eng_chat *c, const eng_chat_extra *x, size_t i, int *is_first, render_out *o,
                          util_err *err) {
    const eng_chat_call *v = calls_of(x, i);
    int rc = 0;
    for (size_t k = 0; k < n_calls_of(x, i) && !rc; k++) {
        const char *end = v[k].arguments[0] == '"' ? json_skip(v[k].arguments) : NULL;
        if (!c->think_close && !(end && !*end))
            return util_err_set(
                err, UTIL_EINVAL,
                "chat: deepseek-r1 template: tool call arguments must be a string (message %zu)", i);
        rc = put(o, *is_first ? "\n" DS_("tool" DS_SEP "call" DS_SEP "begin")
                              : DS_("Assistant") DS_("tool" DS_SEP "calls" DS_SEP "begin")
                                    DS_("tool" DS_SEP "call" DS_SEP "begin"));
        if (!rc) rc = put(o, "function" DS_("tool" DS_SEP "sep"));
        if (!rc) rc = put_str(o, v[k].name);
        if (!rc) rc = put(o, "\n```json\n");
        if (!rc) rc = c->think_close ? put_str(o, v[k].arguments) : put_unescaped(o, v[k].arguments, end);
        if (!rc) rc = put(o, "\n```" DS_("tool" DS_SEP "call" DS_SEP "end"));
        if (!rc && !c->think_close && *is_first)
            rc = put(o, DS_("tool" DS_SEP "calls" DS_SEP "end") DS_("end" DS_SEP "of" DS_SEP "sentence"));
        *is_first = 1;
    }
    if (!rc && c->think_close)
        rc = put(o, DS_("tool" DS_SEP "calls" DS_SEP "end") DS_("end" DS_SEP "of" DS_SEP "sentence"));
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* DeepSeek R1 distills: BOS, the last system message, then <｜User｜> and
 * <｜Assistant｜> turns; an assistant turn keeps only what follows its last
 * </think>. Tool calls in the calls block (deepseek_calls), results in the
 * outputs block, which the next assistant content closes. The generation
 * prompt (none right after results) opens a <think> block (the Qwen
 * distill's template closes it again unless enable_thinking). */
static int render_deepseek(const eng_chat *c, const eng_chat_msg *m, size_t n, int gen,
                           const eng_chat_extra *x, render_out *o, util_err *err) {
    int rc = put_opt(o, c->bos), is_tool = 0, is_first = 0, out_first = 1;
    const char *sys = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].role, "system") == 0) sys = m[i].content;
    if (!rc && sys) rc = put_plain(o, sys, strlen(sys));
    for (size_t i = 0; i < n && !rc; i++) {
        const char *s = m[i].content;
        if (strcmp(m[i].role, "user") == 0) {
            is_tool = 0;
            rc = put(o, DS_("User"));
            if (!rc) rc = put_plain(o, s, strlen(s));
        } else if (strcmp(m[i].role, "assistant") == 0) {
            if (c->think_close ? n_calls_of(x, i) > 0 : s == NULL) {
                is_tool = 0;
                if ((rc = deepseek_calls(c, x, i, &is_first, o, err))) return rc;
            }
            if (!s) continue;
            if (is_tool) {
                rc = put(o, DS_("tool" DS_SEP "outputs" DS_SEP "end"));
                is_tool = 0;
            } else {
                for (const char *t; (t = strstr(s, "</think>")) != NULL;) s = t + 8;
                rc = put(o, DS_("Assistant"));
            }
            if (!rc) rc = put_plain(o, s, strlen(s));
            if (!rc) rc = put(o, DS_("end" DS_SEP "of" DS_SEP "sentence"));
        } else if (strcmp(m[i].role, "tool") == 0) {
            is_tool = 1;
            rc = put(o, out_first ? DS_("tool" DS_SEP "outputs" DS_SEP "begin")
                                        DS_("tool" DS_SEP "output" DS_SEP "begin")
                                  : "\n" DS_("tool" DS_SEP "output" DS_SEP "begin"));
            out_first = 0;
            if (!rc) rc = put_plain(o, s, strlen(s));
            if (!rc) rc = put(o, DS_("tool" DS_SEP "output" DS_SEP "end"));
        }
    }
    if (!rc && is_tool) rc = put(o, DS_("tool" DS_SEP "outputs" DS_SEP "end"));
    if (!rc && gen && !is_tool) rc = put(o, DS_("Assistant") "<think>\n");
    if (!rc && gen && !is_tool && c->think_close) rc = put(o, "</think>");
    return rc ? util_err_set(err, UTIL_ENOMEM, "chat: out of memory") : UTIL_OK;
}

/* Whether the family's template prints a null content (a turn of tool
 * calls): Qwen 2.5, Llama 3 ("None") and 3.1, Mistral v3/tekken, DeepSeek R1. */
static int null_content_ok(const eng_chat *c) {
    switch (c->format) {
    case ENG_CHAT_CHATML: return c->tool_response && !c->strip_think;
    case ENG_CHAT_LLAMA3:
    case ENG_CHAT_LLAMA31:
    case ENG_CHAT_MISTRAL_V3:
    case ENG_CHAT_MISTRAL_TEKKEN:
    case ENG_CHAT_DEEPSEEK_R1: return 1;
    default: return 0;
    }
}

static int render(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                  const eng_chat_extra *x, render_out *o, util_err *err) {
    static const eng_chat_extra none;
    if (!x) x = &none;
    for (size_t i = 0; i < n; i++) {
        if (!msgs[i].role) return util_err_set(err, UTIL_EINVAL, "chat: message %zu has no role", i);
        if (!msgs[i].content && !(n_calls_of(x, i) && null_content_ok(c)))
            return util_err_set(err, UTIL_EINVAL, "chat: message %zu has no content%s", i,
                                n_calls_of(x, i) ? " (the template cannot print a null one)" : "");
        for (size_t k = 0; k < n_calls_of(x, i); k++)
            if (!x->msg[i].calls[k].name || !x->msg[i].calls[k].arguments)
                return util_err_set(err, UTIL_EINVAL, "chat: message %zu: tool call %zu has no %s", i, k,
                                    x->msg[i].calls[k].name ? "arguments" : "name");
    }
    for (size_t k = 0; k < x->n_tools; k++)
        if (!x->tools[k]) return util_err_set(err, UTIL_EINVAL, "chat: tool definition %zu is NULL", k);
    util_buf *out = o->b;
    size_t start = out->len;
    int rc;
    if (c->format == ENG_CHAT_GEMMA) {
        rc = render_gemma(c, msgs, n, add_generation_prompt, o, err);
    } else if (c->format >= ENG_CHAT_MISTRAL_V0 && c->format <= ENG_CHAT_MISTRAL_TEKKEN) {
        rc = render_mistral(c, msgs, n, x, o, err);
    } else if (c->format == ENG_CHAT_LLAMA3 || c->format == ENG_CHAT_LLAMA31) {
        rc = render_llama3(c, msgs, n, add_generation_prompt, x, o, err);
    } else if (c->format == ENG_CHAT_DEEPSEEK_R1) {
        rc = render_deepseek(c, msgs, n, add_generation_prompt, x, o, err);
    } else if (c->format != ENG_CHAT_CHATML) {
        rc = render_phi3(c, msgs, n, add_generation_prompt, o);
        if (rc) rc = util_err_set(err, UTIL_ENOMEM, "chat: out of memory");
    } else {
        rc = render_chatml(c, msgs, n, add_generation_prompt, x, o);
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
    return render(c, msgs, n, add_generation_prompt, NULL, &o, err);
}

int eng_chat_render_ex(const eng_chat *c, const eng_chat_msg *msgs, size_t n, const eng_chat_extra *x,
                       int add_generation_prompt, util_buf *out, eng_tok_span **plain, size_t *nplain,
                       util_err *err) {
    render_out o = {.b = out, .want_spans = plain != NULL};
    if (plain) *plain = NULL;
    if (nplain) *nplain = 0;
    int rc = render(c, msgs, n, add_generation_prompt, x, &o, err);
    if (rc || !plain) {
        free(o.spans);
        return rc;
    }
    *plain = o.spans;
    if (nplain) *nplain = o.n;
    return UTIL_OK;
}

int eng_chat_render_spans(const eng_chat *c, const eng_chat_msg *msgs, size_t n, int add_generation_prompt,
                          util_buf *out, eng_tok_span **plain, size_t *nplain, util_err *err) {
    return eng_chat_render_ex(c, msgs, n, NULL, add_generation_prompt, out, plain, nplain, err);
}

int eng_chat_wraps_tool_results(const eng_chat *c) {
    return c->format == ENG_CHAT_CHATML && c->tool_response;
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
