/* engine/pretok.c: byte-level BPE pre-tokenizers by tokenizer.ggml.pre. Each
 * type is a list of passes; a pass splits every piece further, a piece's end
 * being the end of text for its rules (llama.cpp's unicode_regex_split).
 * Regex passes run on PCRE2 the way llama.cpp runs std::regex; the GPT-2 split
 * and a few digit/punctuation passes are hand-coded. No merging here. */
#include "pretok.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/vec.h"
#include "unicode.h"

/* --- the types ------------------------------------------------------------- */

enum {
    PASS_END = 0,
    PASS_REGEX,       /* a regex (documented form, \p{..} as llama.cpp reads it) */
    PASS_GPT2,        /* the GPT-2 split, hand-coded (llama.cpp: custom too) */
    PASS_EACH_NUMBER, /* \p{N}: every number alone */
    PASS_PUNCT_RUNS,  /* [\p{P}\$\+<=>\^~\|]+ */
    PASS_NUMBER_RUNS, /* \p{N}+ */
    PASS_THREE_DIGITS /* [0-9][0-9][0-9] */
};

typedef struct pass_def {
    int kind;
    const char *re;
} pass_def;

#define MAX_PASSES 6
#define MAX_NAMES  10

typedef struct pre_def {
    const char *names[MAX_NAMES]; /* names[0] is the canonical one */
    eng_pretok_flags flags;
    pass_def passes[MAX_PASSES];
} pre_def;

/* The regexes as llama.cpp's llama-vocab.cpp documents them (its adapted forms
 * without (?i:...)). */
#define RE_GPT2         "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RE_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RE_LLAMA3                                                                                \
    RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" \
                    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN2                                                                            \
    RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" \
                    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN35                                                                               \
    RE_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+" \
                    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* Tekken (Mistral NeMo) and GPT-4o (Llama 4): case-aware words; llama.cpp
 * writes [\p{Lu}..]* as "a letter that is not a-z" by lookahead */
#define RE_UPPER "((?=[\\p{L}])([^a-z]))"
#define RE_LOWER "((?=[\\p{L}])([^A-Z]))"
#define RE_TEKKEN                                                                                   \
    "[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "*" RE_LOWER "+|[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "+" RE_LOWER \
    "*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_GPT4O                                                                                           \
    "[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER "*" RE_LOWER "+" RE_CONTRACTIONS "?|[^\\r\\n\\p{L}\\p{N}]?" RE_UPPER \
    "+" RE_LOWER "*" RE_CONTRACTIONS "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|"        \
    "\\s+(?!\\S)|\\s+"
/* DeepSeek V3: [一-龥぀-ゟ゠-ヿ]+ (CJK ideographs, hiragana, katakana), then ASCII
 * punctuation + ASCII word, letters with marks, punctuation/symbol runs */
#define RE_DEEPSEEK3_CJK "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+"
#define RE_DEEPSEEK3                                                                                   \
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|" \
    " ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
/* DeepSeek's letters, written out as code-point ranges in its tokenizer.json */
#define RE_DEEPSEEK_LETTERS                                                                        \
    "\\s?[A-Za-z\xc2\xb5\xc3\x80-\xc3\x96\xc3\x98-\xc3\xb6\xc3\xb8-\xc6\xba\xc6\xbc-\xc6\xbf"      \
    "\xc7\x84-\xca\x93\xca\x95-\xca\xaf\xcd\xb0-\xcd\xb3\xcd\xb6\xcd\xb7\xcd\xbb-\xcd\xbd\xcd\xbf" \
    "\xce\x86\xce\x88-\xce\x8a\xce\x8c\xce\x8e-\xce\xa1\xce\xa3-\xcf\xb5\xcf\xb7-\xd2\x81"         \
    "\xd2\x8a-\xd4\xaf\xd4\xb1-\xd5\x96\xe1\x82\xa0-\xe1\x83\x85\xe1\x8e\xa0-\xe1\x8f\xb5"         \
    "\xe1\x8f\xb8-\xe1\x8f\xbd\xe1\xb2\x90-\xe1\xb2\xba\xe1\xb2\xbd-\xe1\xb2\xbf"                  \
    "\xe1\xb4\x80-\xe1\xb4\xab\xe1\xb5\xab-\xe1\xb5\xb7\xe1\xb5\xb9-\xe1\xb6\x9a"                  \
    "\xe1\xb8\x80-\xe1\xbc\x95\xe1\xbc\x98-\xe1\xbc\x9d\xe1\xbc\xa0-\xe1\xbd\x85"                  \
    "\xe1\xbd\x88-\xe1\xbd\x8d\xe1\xbd\x90-\xe1\xbd\x97\xe1\xbd\x99\xe1\xbd\x9b\xe1\xbd\x9d"       \
    "\xe1\xbd\x9f-\xe1\xbd\xbd\xe1\xbe\x80-\xe1\xbe\xb4\xe1\xbe\xb6-\xe1\xbe\xbc\xe1\xbe\xbe"      \
    "\xe1\xbf\x82-\xe1\xbf\x84\xe1\xbf\x86-\xe1\xbf\x8c\xe1\xbf\x90-\xe1\xbf\x93"                  \
    "\xe1\xbf\x96-\xe1\xbf\x9b\xe1\xbf\xa0-\xe1\xbf\xac\xe1\xbf\xb2-\xe1\xbf\xb4"                  \
    "\xe1\xbf\xb6-\xe1\xbf\xbc\xe2\x84\x82\xe2\x84\x87\xe2\x84\x8a-\xe2\x84\x93\xe2\x84\x95"       \
    "\xe2\x84\x99-\xe2\x84\x9d\xe2\x84\xa4\xe2\x84\xa6\xe2\x84\xa8\xe2\x84\xaa-\xe2\x84\xad"       \
    "\xe2\x84\xaf-\xe2\x84\xb4\xe2\x84\xb9\xe2\x84\xbc-\xe2\x84\xbf\xe2\x85\x85-\xe2\x85\x89"      \
    "\xe2\x85\x8e\xe2\x86\x83\xe2\x86\x84\xe2\xb0\x80-\xe2\xb1\xbb\xe2\xb1\xbe-\xe2\xb3\xa4"       \
    "\xe2\xb3\xab-\xe2\xb3\xae\xe2\xb3\xb2\xe2\xb3\xb3\xea\x99\x80-\xea\x99\xad"                   \
    "\xea\x9a\x80-\xea\x9a\x9b\xea\x9c\xa2-\xea\x9d\xaf\xea\x9d\xb1-\xea\x9e\x87"                  \
    "\xea\x9e\x8b-\xea\x9e\x8e\xea\xad\xb0-\xea\xae\xbf\xef\xac\x80-\xef\xac\x86"                  \
    "\xef\xac\x93-\xef\xac\x97\xef\xbc\xa1-\xef\xbc\xba\xef\xbd\x81-\xef\xbd\x9a"                  \
    "\xf0\x90\x90\x80-\xf0\x90\x91\x8f\xf0\x90\x92\xb0-\xf0\x90\x93\x93"                           \
    "\xf0\x90\x93\x98-\xf0\x90\x93\xbb\xf0\x90\xb2\x80-\xf0\x90\xb2\xb2"                           \
    "\xf0\x90\xb3\x80-\xf0\x90\xb3\xb2\xf0\x91\xa2\xa0-\xf0\x91\xa3\x9f"                           \
    "\xf0\x9e\xa4\x80-\xf0\x9e\xa5\x83]+"
/* [一-龥ࠀ-一가-퟿]+ : CJK ideographs, U+0800..U+4E00, Hangul */
#define RE_DEEPSEEK_CJK "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+"

#define F(clean, ignore, bos) \
    { (clean), (ignore), (bos) }
#define REGEX(r) \
    { PASS_REGEX, (r) }
#define HAND(k) \
    { (k), NULL }

static const pre_def pre_defs[] = {
    {{"default"},
     F(1, 0, -1),
     {HAND(PASS_PUNCT_RUNS), HAND(PASS_GPT2), HAND(PASS_NUMBER_RUNS), HAND(PASS_THREE_DIGITS)}},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
      "jina-v5-nano"},
     F(1, 1, 1),
     {REGEX(RE_LLAMA3)}},
    {{"dbrx", "smaug-bpe"}, F(1, 0, -1), {REGEX(RE_LLAMA3)}},
    {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"},
     F(0, 0, -1),
     {REGEX(RE_QWEN2)}},
    {{"stablelm2", "megrez"}, F(1, 0, -1), {REGEX(RE_QWEN2)}},
    {{"qwen35"}, F(0, 0, -1), {REGEX(RE_QWEN35)}},
    {{"tekken"}, F(0, 1, 1), {REGEX(RE_TEKKEN)}},
    {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, F(0, 0, -1), {REGEX(RE_GPT4O)}},
    {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
     F(0, 0, -1),
     {REGEX("\\p{N}{1,3}"), REGEX(RE_DEEPSEEK3_CJK), REGEX(RE_DEEPSEEK3)}},
    {{"deepseek-llm"},
     F(0, 0, -1),
     {REGEX("[\r\n]"), REGEX(RE_DEEPSEEK_LETTERS),
      REGEX("\\s?[!-/:-~\xef\xbc\x81-\xef\xbc\x8f\xef\xbc\x9a-\xef\xbd\x9e\xe2\x80\x98-\xe2\x80\x9f"
            "\xe3\x80\x80-\xe3\x80\x82]+"),
      REGEX("\\s+$"), REGEX(RE_DEEPSEEK_CJK), REGEX("\\p{N}+")}},
    {{"deepseek-coder"},
     F(0, 0, -1),
     {REGEX("[\r\n]"), REGEX("\\s?\\p{L}+"), REGEX("\\s?\\p{P}+"), REGEX(RE_DEEPSEEK_CJK), REGEX("\\p{N}")}},
    {{"falcon"}, F(1, 0, -1), {REGEX("[\\p{P}\\$\\+<=>\\^~\\|`]+"), HAND(PASS_GPT2), HAND(PASS_THREE_DIGITS)}},
    {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"},
     F(1, 0, -1),
     {HAND(PASS_EACH_NUMBER), HAND(PASS_GPT2)}},
    {{"smollm", "command-r"}, F(0, 0, -1), {HAND(PASS_EACH_NUMBER), HAND(PASS_GPT2)}},
    {{"gpt-2", "gpt2", "phi-2", "mpt", "olmo", "jais", "exaone4", "mellum", "a.x-4.0"},
     F(1, 0, -1),
     {HAND(PASS_GPT2)}},
    {{"trillion", "granite-docling"}, F(0, 0, -1), {HAND(PASS_GPT2)}},
    /* Gemma 4 (tokenizer.ggml.model "gemma4"): spaces become U+2581 before
     * this, and BPE runs on newline runs and the text between them */
    {{"gemma4"}, F(1, 0, 1), {REGEX("[^\\n]+|[\\n]+")}},
};

/* --- compiling a regex the way llama.cpp runs it ---------------------------- */

/* llama.cpp runs a regex with \p{..} classes on a "collapsed" text: ASCII as
 * is, any other code point one byte for its group (whitespace 0x0B, number
 * 0xD1, letter 0xD2, punctuation 0xD3, mark 0xD4, symbol 0xD5, else 0xD0); a
 * \p{X} becomes that byte plus the ASCII members of the group. Without \p{..}
 * it runs on the code points with non-ASCII whitespace replaced by 0x0B. Both
 * are reproduced here, so matches agree with it byte for byte. */
typedef struct ucat {
    const char *name;
    const char *cls; /* PCRE2 class body: the collapsed byte and the ASCII members */
} ucat;

static const ucat ucats[] = {
    {"\\p{N}", "\\x{D1}0-9"},
    {"\\p{L}", "\\x{D2}A-Za-z"},
    {"\\p{Lu}", "\\x{D2}A-Za-z"}, /* llama.cpp maps every letter class to all letters */
    {"\\p{Ll}", "\\x{D2}A-Za-z"},
    {"\\p{Lt}", "\\x{D2}A-Za-z"},
    {"\\p{Lm}", "\\x{D2}A-Za-z"},
    {"\\p{Lo}", "\\x{D2}A-Za-z"},
    {"\\p{P}", "\\x{D3}!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", "\\x{D4}"},
    {"\\p{S}", "\\x{D5}\\$\\+<->\\^`\\|~"},
};

static const ucat *ucat_at(const char *re, size_t i) {
    for (size_t k = 0; k < sizeof ucats / sizeof ucats[0]; k++) {
        size_t n = strlen(ucats[k].name);
        if (strncmp(re + i, ucats[k].name, n) == 0) return &ucats[k];
    }
    return NULL;
}

/* Rewrites re for the collapsed text into b; returns 1 if it used \p{..}. */
static int collapse_regex(const char *re, util_buf *b, int *oom) {
    int used = 0, inside = 0;
    *oom = 0;
    for (size_t i = 0; re[i]; i++) {
        if (re[i] == '\\' && re[i + 1]) {
            const ucat *u = ucat_at(re, i);
            if (u) {
                used = 1;
                if (!inside && util_buf_puts(b, "[")) *oom = 1;
                if (util_buf_puts(b, u->cls)) *oom = 1;
                if (!inside && util_buf_puts(b, "]")) *oom = 1;
                i += strlen(u->name) - 1;
                continue;
            }
            if (util_buf_append(b, re + i, 2)) *oom = 1;
            i++;
            continue;
        }
        if (re[i] == '[')
            inside = 1;
        else if (re[i] == ']')
            inside = 0;
        if (util_buf_append(b, re + i, 1)) *oom = 1;
    }
    return used;
}

typedef struct pass {
    int kind;
    int wide; /* regex on UTF-8 code points, not the collapsed bytes */
    pcre2_code *code;
} pass;

struct eng_pretok {
    const pre_def *def;
    pass passes[MAX_PASSES];
    int npasses;
};

static int compile_pass(pass *ps, const char *re, util_err *err) {
    util_buf b;
    util_buf_init(&b);
    int oom;
    int collapsed = collapse_regex(re, &b, &oom);
    if (oom || util_buf_append(&b, "", 0)) {
        util_buf_release(&b);
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    }
    /* $ is end of subject only, as in ECMAScript */
    uint32_t opts = PCRE2_DOLLAR_ENDONLY | PCRE2_NO_AUTO_CAPTURE;
    if (!collapsed) opts |= PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    int ec;
    PCRE2_SIZE eo;
    ps->code = pcre2_compile((PCRE2_SPTR)b.data, b.len, opts, &ec, &eo, NULL);
    util_buf_release(&b);
    if (!ps->code) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return util_err_set(err, UTIL_EINTERNAL, "tokenizer: pre-tokenizer regex '%.60s': %s at %zu", re,
                            (const char *)msg, (size_t)eo);
    }
    pcre2_jit_compile(ps->code, PCRE2_JIT_COMPLETE); /* optional: the interpreter is exact too */
    ps->kind = PASS_REGEX;
    ps->wide = !collapsed;
    return UTIL_OK;
}

static int name_is(const char *lit, const char *s, size_t n) {
    return strlen(lit) == n && memcmp(lit, s, n) == 0;
}

int eng_pretok_new(eng_pretok **out, const char *name, size_t n, util_err *err) {
    *out = NULL;
    const pre_def *def = NULL;
    for (size_t d = 0; !def && d < sizeof pre_defs / sizeof pre_defs[0]; d++)
        for (int k = 0; k < MAX_NAMES && pre_defs[d].names[k]; k++)
            if (name_is(pre_defs[d].names[k], name, n)) {
                def = &pre_defs[d];
                break;
            }
    if (!def)
        return util_err_set(err, UTIL_EUNSUPPORTED,
                            "tokenizer: pre-tokenizer '%.*s' (tokenizer.ggml.pre) is not supported",
                            (int)(n < 64 ? n : 64), name);
    eng_pretok *p = calloc(1, sizeof *p);
    if (!p) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    p->def = def;
    for (int k = 0; k < MAX_PASSES && def->passes[k].kind != PASS_END; k++) {
        pass *ps = &p->passes[p->npasses++];
        ps->kind = def->passes[k].kind;
        if (ps->kind != PASS_REGEX) continue;
        int rc = compile_pass(ps, def->passes[k].re, err);
        if (rc) {
            eng_pretok_free(p);
            return rc;
        }
    }
    *out = p;
    return UTIL_OK;
}

void eng_pretok_free(eng_pretok *p) {
    if (!p) return;
    for (int k = 0; k < p->npasses; k++) pcre2_code_free(p->passes[k].code);
    free(p);
}

const eng_pretok_flags *eng_pretok_flags_of(const eng_pretok *p) { return &p->def->flags; }
const char *eng_pretok_name(const eng_pretok *p) { return p->def->names[0]; }

void eng_pretok_work_release(eng_pretok_work *w) {
    free(w->seg[0]);
    free(w->seg[1]);
    free(w->subj);
    free(w->cp_at);
    free(w->boff);
    pcre2_match_data_free(w->md);
    memset(w, 0, sizeof *w);
}

/* --- hand-coded passes ------------------------------------------------------- */

/* Each pass reads the pieces in seg[in] and writes finer ones to seg[!in]. */
typedef struct split_ctx {
    eng_pretok_work *w;
    const uint32_t *cp;
    const uint16_t *fl;
} split_ctx;

static void seg_put(eng_pretok_work *w, int o, size_t len) {
    if (len) w->seg[o][w->nseg[o]++] = (uint32_t)len;
}

static void pass_each_number(const split_ctx *c, int in) {
    eng_pretok_work *w = c->w;
    int o = !in;
    size_t at = 0;
    for (size_t k = 0; k < w->nseg[in]; k++) {
        size_t s = at, e = at + w->seg[in][k], run = s;
        for (size_t i = s; i < e; i++) {
            if (c->fl[i] & ENG_UC_NUMBER) {
                seg_put(w, o, i - run);
                seg_put(w, o, 1);
                run = i + 1;
            }
        }
        seg_put(w, o, e - run);
        at = e;
    }
}

/* llama.cpp's default pre-tokenizer, regexes 1 and 3: runs of a class. */
static int in_punct_class(const split_ctx *c, size_t i) {
    uint32_t x = c->cp[i];
    if (x < 128 && x && strchr("$+<=>^~|", (int)x)) return 1;
    return (c->fl[i] & ENG_UC_PUNCT) && !(c->fl[i] & ENG_UC_WHITESPACE);
}

static void pass_runs(const split_ctx *c, int in, int number_class) {
    eng_pretok_work *w = c->w;
    int o = !in;
    size_t at = 0;
    for (size_t k = 0; k < w->nseg[in]; k++) {
        size_t s = at, e = at + w->seg[in][k], run = s;
        int cur = -1;
        for (size_t i = s; i < e; i++) {
            int m = number_class ? (c->fl[i] & ENG_UC_NUMBER) != 0 : in_punct_class(c, i);
            if (m != cur) {
                seg_put(w, o, i - run);
                run = i;
                cur = m;
            }
        }
        seg_put(w, o, e - run);
        at = e;
    }
}

static void pass_three_digits(const split_ctx *c, int in) {
    eng_pretok_work *w = c->w;
    int o = !in;
    size_t at = 0;
    for (size_t k = 0; k < w->nseg[in]; k++) {
        size_t s = at, e = at + w->seg[in][k], run = s;
        for (size_t i = s; i + 3 <= e;) {
            if (c->cp[i] - '0' < 10 && c->cp[i + 1] - '0' < 10 && c->cp[i + 2] - '0' < 10) {
                seg_put(w, o, i - run);
                seg_put(w, o, 3);
                i += 3;
                run = i;
            } else {
                i++;
            }
        }
        seg_put(w, o, e - run);
        at = e;
    }
}

/* The GPT-2 pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * as llama.cpp's unicode_regex_split_custom_gpt2 runs it. */
static void pass_gpt2(const split_ctx *c, int in) {
    eng_pretok_work *w = c->w;
    int o = !in;
    size_t at = 0;
    const uint32_t *cp = c->cp;
    for (size_t k = 0; k < w->nseg[in]; k++) {
        size_t s = at, e = at + w->seg[in][k];
        at = e;
#define FL(p) ((p) < e ? (unsigned)c->fl[p] : 0u)
        size_t prev = s;
        for (size_t pos = s; pos < e;) {
            uint32_t x = cp[pos];
            if (x == '\'' && pos + 1 < e) {
                uint32_t c1 = cp[pos + 1];
                if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
                    seg_put(w, o, pos + 2 - prev);
                    pos = prev = pos + 2;
                    continue;
                }
                if (pos + 2 < e) {
                    uint32_t c2 = cp[pos + 2];
                    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
                        seg_put(w, o, pos + 3 - prev);
                        pos = prev = pos + 3;
                        continue;
                    }
                }
            }
            unsigned f2 = x == ' ' ? FL(pos + 1) : FL(pos);
            if (f2 & ENG_UC_LETTER) {
                pos += x == ' ';
                while (FL(pos) & ENG_UC_LETTER) pos++;
                seg_put(w, o, pos - prev);
                prev = pos;
                continue;
            }
            if (f2 & ENG_UC_NUMBER) {
                pos += x == ' ';
                while (FL(pos) & ENG_UC_NUMBER) pos++;
                seg_put(w, o, pos - prev);
                prev = pos;
                continue;
            }
            const unsigned wln = ENG_UC_WHITESPACE | ENG_UC_LETTER | ENG_UC_NUMBER;
            if (!(f2 & wln) && f2) {
                pos += x == ' ';
                for (;;) {
                    unsigned f = FL(pos);
                    if ((f & wln) || !f) break;
                    pos++;
                }
                seg_put(w, o, pos - prev);
                prev = pos;
                continue;
            }
            size_t nws = 0;
            while (FL(pos + nws) & ENG_UC_WHITESPACE) nws++;
            if (nws > 1 && pos + nws < e) {
                pos += nws - 1;
                seg_put(w, o, pos - prev);
                prev = pos;
                continue;
            }
            if (nws > 0) {
                pos += nws;
                seg_put(w, o, pos - prev);
                prev = pos;
                continue;
            }
            pos++;
            seg_put(w, o, pos - prev);
            prev = pos;
        }
#undef FL
    }
}

/* --- regex passes -------------------------------------------------------------- */

static unsigned char collapsed_byte(uint32_t cp, unsigned fl) {
    if (cp < 128) return (unsigned char)cp;
    if (fl & ENG_UC_WHITESPACE) return 0x0B;
    switch (fl & 0xFF) {
    case ENG_UC_NUMBER: return 0xD1;
    case ENG_UC_LETTER: return 0xD2;
    case ENG_UC_PUNCT: return 0xD3;
    case ENG_UC_MARK: return 0xD4;
    case ENG_UC_SYMBOL: return 0xD5;
    default: return 0xD0;
    }
}

/* Fills w->subj with the text the regexes of one kind run on; for wide ones
 * w->cp_at maps each byte offset that starts a code point to its index. */
static int make_subject(const split_ctx *c, size_t n, int wide, size_t *len) {
    eng_pretok_work *w = c->w;
    if (!wide) {
        if (util_grow(&w->subj, &w->cap_subj, n + 1, 1)) return UTIL_ENOMEM;
        for (size_t i = 0; i < n; i++) w->subj[i] = collapsed_byte(c->cp[i], c->fl[i]);
        *len = n;
        return UTIL_OK;
    }
    if (util_grow(&w->subj, &w->cap_subj, 4 * n + 1, 1) ||
        util_grow(&w->cp_at, &w->cap_cp_at, 4 * n + 1, sizeof *w->cp_at) ||
        util_grow(&w->boff, &w->cap_boff, n + 1, sizeof *w->boff))
        return UTIL_ENOMEM;
    size_t b = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = c->cp[i];
        if (x > 0x7F && (c->fl[i] & ENG_UC_WHITESPACE)) x = 0x0B;
        char u[4];
        int k = eng_utf8_encode(x, u);
        w->boff[i] = (uint32_t)b;
        for (int j = 0; j < k; j++) {
            w->cp_at[b + (size_t)j] = j ? UINT32_MAX : (uint32_t)i;
            w->subj[b + (size_t)j] = (unsigned char)u[j];
        }
        b += (size_t)k;
    }
    w->cp_at[b] = (uint32_t)n;
    w->boff[n] = (uint32_t)b;
    *len = b;
    return UTIL_OK;
}

/* Like std::regex_iterator over each piece: matches and the text between
 * them become pieces. Offsets are code points (collapsed) or bytes mapped back
 * through cp_at (wide). */
static int pass_regex(const split_ctx *c, const pass *ps, int in, size_t n, util_err *err) {
    eng_pretok_work *w = c->w;
    int o = !in;
    size_t slen;
    if (make_subject(c, n, ps->wide, &slen))
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    (void)slen;
    size_t at = 0;
    for (size_t k = 0; k < w->nseg[in]; k++) {
        size_t plen = w->seg[in][k];
        size_t b0 = ps->wide ? w->boff[at] : at, b1 = ps->wide ? w->boff[at + plen] : at + plen;
        const unsigned char *subj = w->subj + b0;
        size_t blen = b1 - b0, pos = 0, last = 0;
#define CP_OF(off) (ps->wide ? (size_t)w->cp_at[b0 + (off)] : at + (off))
        while (pos < blen) {
            int rc = pcre2_match(ps->code, subj, blen, pos, 0, (pcre2_match_data *)w->md, NULL);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {
                PCRE2_UCHAR msg[160];
                pcre2_get_error_message(rc, msg, sizeof msg);
                return util_err_set(err, UTIL_EINTERNAL, "tokenizer: pre-tokenizer match: %s",
                                    (const char *)msg);
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer((pcre2_match_data *)w->md);
            size_t ms = ov[0], me = ov[1];
            if (me == ms) break; /* no regex here matches empty; stop rather than loop */
            if (ms > last) seg_put(w, o, CP_OF(ms) - CP_OF(last));
            seg_put(w, o, CP_OF(me) - CP_OF(ms));
            last = pos = me;
        }
        if (last < blen) seg_put(w, o, at + plen - CP_OF(last));
#undef CP_OF
        at += plen;
    }
    return UTIL_OK;
}

int eng_pretok_split(const eng_pretok *p, eng_pretok_work *w, const uint32_t *cp, const uint16_t *fl,
                     size_t n, const uint32_t **pieces, size_t *npieces, util_err *err) {
    *pieces = NULL;
    *npieces = 0;
    if (util_grow(&w->seg[0], &w->cap_seg[0], n + 1, sizeof(uint32_t)) ||
        util_grow(&w->seg[1], &w->cap_seg[1], n + 1, sizeof(uint32_t)))
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    if (!w->md) {
        w->md = pcre2_match_data_create(4, NULL);
        if (!w->md) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    }
    split_ctx c = {w, cp, fl};
    int in = 0;
    w->nseg[0] = 0;
    seg_put(w, 0, n);
    for (int k = 0; k < p->npasses; k++) {
        w->nseg[!in] = 0;
        switch (p->passes[k].kind) {
        case PASS_REGEX: {
            int rc = pass_regex(&c, &p->passes[k], in, n, err);
            if (rc) return rc;
            break;
        }
        case PASS_GPT2: pass_gpt2(&c, in); break;
        case PASS_EACH_NUMBER: pass_each_number(&c, in); break;
        case PASS_PUNCT_RUNS: pass_runs(&c, in, 0); break;
        case PASS_NUMBER_RUNS: pass_runs(&c, in, 1); break;
        case PASS_THREE_DIGITS: pass_three_digits(&c, in); break;
        default: return util_err_set(err, UTIL_EINTERNAL, "tokenizer: unknown pre-tokenizer pass");
        }
        in = !in;
    }
    *pieces = w->seg[in];
    *npieces = w->nseg[in];
    return UTIL_OK;
}
