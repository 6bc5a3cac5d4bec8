/* engine/tokenizer.c: the model's tokenizer, built from GGUF metadata and exact
 * to llama.cpp: special-token partition, byte-level BPE ("gpt2", with the
 * pre-tokenizer of pretok.c), Gemma 4's BPE on raw UTF-8 ("gemma4") and
 * SentencePiece-style BPE ("llama") with byte fallback; detokenization and a
 * streaming UTF-8 decoder. Not here: chat templates (chat.c), WordPiece/Unigram/RWKV. */
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/vec.h"
#include "pretok.h"
#include "unicode.h"

/* --- types ------------------------------------------------------------- */

enum { TOK_BPE = 0, TOK_SPM = 1 };
enum { STRIP_LEFT = 1, STRIP_RIGHT = 2 }; /* llama.cpp's LSTRIP/RSTRIP token attributes */

/* The special ids llama.cpp reads from tokenizer.ggml.*_token_id (or detects). */
enum {
    SP_BOS,
    SP_EOS,
    SP_EOT,
    SP_EOM,
    SP_UNK,
    SP_SEP,
    SP_PAD,
    SP_MASK,
    SP_FIM_PRE,
    SP_FIM_SUF,
    SP_FIM_MID,
    SP_FIM_PAD,
    SP_FIM_REP,
    SP_FIM_SEP,
    SP_COUNT
};

typedef struct trie_node {
    int32_t child;   /* first child, -1 if none */
    int32_t sibling; /* next sibling, -1 if none */
    int32_t term;    /* rank in t->specials of the special ending here, -1 if none */
    unsigned char byte;
} trie_node;

typedef struct merge_ent {
    uint64_t key; /* (left text id << 32 | right text id) + 1; 0 = empty slot */
    int32_t rank;
    int32_t result; /* text id of left+right */
} merge_ent;

struct eng_tokenizer {
    int kind, clean_spaces;
    eng_pretok *pretok; /* BPE only */
    int ignore_merges;  /* BPE: a word that is a token is taken whole */
    int byte_encode;    /* BPE: GPT-2 byte map (0: Gemma 4's raw UTF-8 and <0xXX> bytes) */
    int escape_spaces;  /* BPE: ' ' -> U+2581 before splitting (Gemma 4) */
    int add_bos, add_eos, add_space_prefix;
    int32_t ids[SP_COUNT]; /* -1 = none */
    char warning[256];

    int32_t n_vocab;
    int32_t n_text; /* n_vocab plus texts only merges produce (BPE) */
    int32_t cap_text;
    char *arena; /* token texts and pieces, each NUL-terminated */
    size_t arena_len, arena_cap;
    uint32_t *text_off, *text_len;   /* per text id */
    uint32_t *piece_off, *piece_len; /* per token: bytes it prints as (specials rendered) */
    float *scores;
    unsigned char *attr;
    unsigned char *eog;

    int32_t *htab; /* text -> id, open addressing, -1 empty */
    uint32_t hmask;

    merge_ent *mtab;
    uint32_t mmask;
    int32_t byte_text[256]; /* BPE: text id of each byte's mapped character */

    int32_t *specials; /* ids of control/user_defined/unknown tokens, longest first */
    int32_t n_specials;
    trie_node *trie;
    int32_t n_trie, cap_trie;
    unsigned char first_byte[256]; /* 1 if some special starts with this byte */
    unsigned char *strip;          /* per token STRIP_* (llama.cpp's lstrip/rstrip), NULL if none */
};

/* --- small helpers ------------------------------------------------------- */

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static int arena_add(eng_tokenizer *t, const char *s, size_t n, uint32_t *off) {
    if (t->arena_len + n + 1 > t->arena_cap) {
        size_t cap = t->arena_cap ? t->arena_cap : 1 << 16;
        while (cap < t->arena_len + n + 1) cap *= 2;
        char *p = realloc(t->arena, cap);
        if (!p) return UTIL_ENOMEM;
        t->arena = p;
        t->arena_cap = cap;
    }
    if (t->arena_len > UINT32_MAX - n - 1) return UTIL_ENOMEM;
    if (n) memcpy(t->arena + t->arena_len, s, n);
    t->arena[t->arena_len + n] = '\0';
    *off = (uint32_t)t->arena_len;
    t->arena_len += n + 1;
    return UTIL_OK;
}

static const char *text_of(const eng_tokenizer *t, int32_t id) { return t->arena + t->text_off[id]; }

/* Looks up an exact text among all text ids (tokens and merge-only texts). */
static int32_t text_find(const eng_tokenizer *t, const char *s, size_t n) {
    uint32_t i = hash_bytes(s, n) & t->hmask;
    for (;;) {
        int32_t id = t->htab[i];
        if (id < 0) return -1;
        if (t->text_len[id] == n && memcmp(t->arena + t->text_off[id], s, n) == 0) return id;
        i = (i + 1) & t->hmask;
    }
}

/* Inserts text id `id` (already in the arena). A duplicate text maps to the
 * later id, as llama.cpp's token_to_id does. */
static void text_insert(eng_tokenizer *t, int32_t id) {
    const char *s = text_of(t, id);
    size_t n = t->text_len[id];
    uint32_t i = hash_bytes(s, n) & t->hmask;
    for (;;) {
        int32_t cur = t->htab[i];
        if (cur < 0) {
            t->htab[i] = id;
            return;
        }
        if (t->text_len[cur] == n && memcmp(text_of(t, cur), s, n) == 0) {
            t->htab[i] = id;
            return;
        }
        i = (i + 1) & t->hmask;
    }
}

/* Adds a text that is not a token (BPE merge parts and results); returns its id. */
static int32_t text_add_extra(eng_tokenizer *t, const char *s, size_t n) {
    int32_t id = text_find(t, s, n);
    if (id >= 0) return id;
    if (t->n_text == t->cap_text) return -2; /* sized up front; cannot happen */
    uint32_t off;
    if (arena_add(t, s, n, &off) != UTIL_OK) return -3;
    id = t->n_text++;
    t->text_off[id] = off;
    t->text_len[id] = (uint32_t)n;
    text_insert(t, id);
    return id;
}

static const merge_ent *merge_find(const eng_tokenizer *t, int32_t a, int32_t b) {
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    uint32_t i = (uint32_t)mix64(key) & t->mmask;
    for (;;) {
        const merge_ent *e = &t->mtab[i];
        if (e->key == 0) return NULL;
        if (e->key == key) return e;
        i = (i + 1) & t->mmask;
    }
}

/* Keeps the first rank of a duplicate pair, like llama.cpp's bpe_ranks.emplace. */
static void merge_insert(eng_tokenizer *t, int32_t a, int32_t b, int32_t rank, int32_t result) {
    uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    uint32_t i = (uint32_t)mix64(key) & t->mmask;
    for (;;) {
        merge_ent *e = &t->mtab[i];
        if (e->key == key) return;
        if (e->key == 0) {
            e->key = key;
            e->rank = rank;
            e->result = result;
            return;
        }
        i = (i + 1) & t->mmask;
    }
}

static uint32_t pow2_at_least(size_t n) {
    uint32_t c = 16;
    while (c < n) c *= 2;
    return c;
}

/* GPT-2 byte <-> unicode map: printable bytes map to themselves, the other 68
 * (0x00-0x20, 0x7F-0xA0, 0xAD) to U+0100.. in increasing order. */
static uint32_t byte_to_cp(unsigned b) {
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae)) return b;
    unsigned n = 0;
    for (unsigned c = 0; c < b; c++)
        if (!((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || (c >= 0xae))) n++;
    return 256 + n;
}

/* Inverse map for the 68 shifted bytes: shifted[k] is the byte of U+0100+k. */
static void shifted_bytes(unsigned char shifted[68]) {
    unsigned n = 0;
    for (unsigned c = 0; c < 256; c++)
        if (byte_to_cp(c) >= 256) shifted[n++] = (unsigned char)c;
}

static int cp_to_byte(uint32_t cp, const unsigned char shifted[68]) {
    if (cp < 256) return byte_to_cp(cp) == cp ? (int)cp : -1;
    if (cp < 256 + 68) return shifted[cp - 256];
    return -1;
}

/* --- building ------------------------------------------------------------ */

/* What eng_tokenizer_new reads from the GGUF, in one place. */
typedef struct tok_src {
    int kind, clean_spaces;
    const char **tokens;
    uint32_t *token_lens;
    uint64_t n_tokens;
    int32_t *types; /* NULL: all normal */
    float *scores;  /* NULL: all 0 */
    const char **merges;
    uint32_t *merge_lens;
    uint64_t n_merges;
} tok_src;

/* Grows the text tables so one more text fits, rehashing when half full. */
static int text_reserve(eng_tokenizer *t) {
    if (t->n_text + 1 > t->cap_text) {
        int32_t cap = t->cap_text ? t->cap_text * 2 : 1024;
        uint32_t *o = realloc(t->text_off, (size_t)cap * sizeof *o);
        if (!o) return UTIL_ENOMEM;
        t->text_off = o;
        uint32_t *l = realloc(t->text_len, (size_t)cap * sizeof *l);
        if (!l) return UTIL_ENOMEM;
        t->text_len = l;
        t->cap_text = cap;
    }
    if ((uint64_t)(t->n_text + 1) * 2 > (uint64_t)t->hmask + 1 || !t->htab) {
        uint32_t cap = pow2_at_least((size_t)(t->n_text + 1) * 2 + 16);
        int32_t *h = malloc((size_t)cap * sizeof *h);
        if (!h) return UTIL_ENOMEM;
        memset(h, 0xff, (size_t)cap * sizeof *h);
        free(t->htab);
        t->htab = h;
        t->hmask = cap - 1;
        for (int32_t id = 0; id < t->n_text; id++) text_insert(t, id);
    }
    return UTIL_OK;
}

static int add_text_checked(eng_tokenizer *t, const char *s, size_t n, int32_t *id) {
    int32_t found = text_find(t, s, n);
    if (found >= 0) {
        *id = found;
        return UTIL_OK;
    }
    int rc = text_reserve(t);
    if (rc) return rc;
    found = text_add_extra(t, s, n);
    if (found < 0) return UTIL_ENOMEM;
    *id = found;
    return UTIL_OK;
}

/* Token texts that llama.cpp recognises by name (llama-vocab.cpp, load): the
 * first token (lowest id here) matching a list fills that slot when the GGUF
 * has no id for it, and is forced to type control. */
typedef struct detect_rule {
    int slot;
    const char *texts[8];
} detect_rule;

static const detect_rule detect_rules[] = {
    {SP_EOT,
     {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
      "_<EOT>"}},
    {SP_EOT,
     {"<\xef\xbd\x9c"
      "end\xe2\x96\x81"
      "of\xe2\x96\x81"
      "sentence\xef\xbd\x9c>",
      "<end_of_utterance>"}},
    {SP_EOM, {"<|eom_id|>"}},
    {SP_FIM_PRE,
     {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "begin\xef\xbd\x9c>",
      "<PRE>", "\xe2\x96\x81<PRE>", "<|code_prefix|>"}},
    {SP_FIM_SUF,
     {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "hole\xef\xbd\x9c>",
      "<SUF>", "\xe2\x96\x81<SUF>", "<|code_suffix|>"}},
    {SP_FIM_MID,
     {"<|fim_middle|>", "<fim-middle>", "<fim_middle>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "end\xef\xbd\x9c>",
      "<MID>", "\xe2\x96\x81<MID>", "<|code_middle|>"}},
    {SP_FIM_PAD, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"}},
    {SP_FIM_REP, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
    {SP_FIM_SEP, {"<|file_sep|>"}},
};

/* Token texts that always end generation and become control tokens
 * (llama.cpp's EOG list, as of the version the goldens come from: Gemma 3's
 * user-defined "</s>" is one, so it is never parsed from plain text). */
static const char *const eog_texts[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\xef\xbd\x9c"
    "end\xe2\x96\x81"
    "of\xe2\x96\x81"
    "sentence\xef\xbd\x9c>",
    "[e~[",
};

static int tok_is(const eng_tokenizer *t, int32_t id, const char *s) {
    size_t n = strlen(s);
    return t->text_len[id] == n && memcmp(text_of(t, id), s, n) == 0;
}

static int32_t eog_find(const eng_tokenizer *t, const char *s) {
    int32_t id = text_find(t, s, strlen(s));
    return id >= 0 && id < t->n_vocab && t->eog[id] ? id : -1;
}

/* llama.cpp's exceptions to its text lists: gpt-oss's framing tokens print;
 * with <|return|> and <|call|> (or <|calls|> and <|flush|>) present <|end|>
 * ends nothing; next to <|tool_response>/<|plamo:eos|> (Gemma 4, PLaMo) </s>
 * is a normal token. */
static void fix_eog(eng_tokenizer *t) {
    static const char *const framing[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};
    for (int k = 0; k < 4; k++) {
        int32_t id = text_find(t, framing[k], strlen(framing[k]));
        if (id >= 0 && id < t->n_vocab) t->attr[id] = ENG_TOK_USER_DEFINED;
    }
    int32_t end = eog_find(t, "<|end|>"), call = eog_find(t, "<|call|>");
    if (call < 0) call = eog_find(t, "<|calls|>");
    if (end >= 0 && call >= 0 && (eog_find(t, "<|return|>") >= 0 || eog_find(t, "<|flush|>") >= 0)) {
        t->eog[end] = 0;
        t->attr[end] = ENG_TOK_USER_DEFINED;
    }
    int32_t s = eog_find(t, "</s>");
    if (s >= 0 && (eog_find(t, "<|tool_response>") >= 0 || eog_find(t, "<|plamo:eos|>") >= 0)) {
        t->eog[s] = 0;
        t->attr[s] = ENG_TOK_NORMAL;
    }
}

/* Fills undetected special slots, the EOG set and the control overrides. */
static void detect_specials(eng_tokenizer *t) {
    for (int32_t id = 0; id < t->n_vocab; id++) {
        for (size_t r = 0; r < sizeof detect_rules / sizeof detect_rules[0]; r++) {
            const detect_rule *d = &detect_rules[r];
            if (t->ids[d->slot] >= 0) continue; /* from the GGUF, or found already */
            for (int k = 0; k < 8 && d->texts[k]; k++) {
                if (tok_is(t, id, d->texts[k])) {
                    t->ids[d->slot] = id;
                    t->attr[id] = ENG_TOK_CONTROL;
                    break;
                }
            }
        }
    }
    static const int fim_slots[] = {SP_FIM_PAD, SP_FIM_REP, SP_FIM_SEP};
    for (int k = 0; k < 3; k++)
        if (t->ids[fim_slots[k]] >= 0) t->eog[t->ids[fim_slots[k]]] = 1;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        for (size_t k = 0; k < sizeof eog_texts / sizeof eog_texts[0]; k++) {
            if (tok_is(t, id, eog_texts[k])) {
                t->eog[id] = 1;
                t->attr[id] = ENG_TOK_CONTROL;
                break;
            }
        }
    }
    static const int more[] = {SP_EOS, SP_EOT, SP_EOM};
    for (int k = 0; k < 3; k++)
        if (t->ids[more[k]] >= 0) t->eog[t->ids[more[k]]] = 1;
    fix_eog(t);
}

/* The bytes a token prints as with specials rendered (llama.cpp token_to_piece
 * with special=true). Normal BPE tokens undo the byte map; a character outside
 * it prints as llama.cpp's "[UNK_BYTE_0x..]" marker. */
static int build_piece(eng_tokenizer *t, int32_t id, const unsigned char shifted[68], util_buf *tmp) {
    const char *s = text_of(t, id);
    size_t n = t->text_len[id];
    unsigned a = t->attr[id];
    tmp->len = 0;
    if (a == ENG_TOK_CONTROL || a == ENG_TOK_UNKNOWN || a == ENG_TOK_USER_DEFINED) {
        if (util_buf_append(tmp, s, n)) return UTIL_ENOMEM;
    } else if (a == ENG_TOK_NORMAL && t->kind == TOK_BPE && t->byte_encode) {
        for (size_t i = 0; i < n;) {
            size_t adv;
            uint32_t cp = eng_utf8_decode((const unsigned char *)s + i, n - i, &adv);
            if (cp == ENG_UTF8_BAD) cp = 0xFFFD;
            int b = cp_to_byte(cp, shifted);
            if (b >= 0) {
                char c = (char)b;
                if (util_buf_append(tmp, &c, 1)) return UTIL_ENOMEM;
            } else {
                char u[4];
                int k = eng_utf8_encode(cp, u);
                if (util_buf_puts(tmp, "[UNK_BYTE_0x")) return UTIL_ENOMEM;
                for (int j = 0; j < k; j++)
                    if (util_buf_printf(tmp, "%02x", (unsigned char)u[j])) return UTIL_ENOMEM;
                if (util_buf_append(tmp, s, n) || util_buf_puts(tmp, "]")) return UTIL_ENOMEM;
            }
            i += adv;
        }
    } else if (a == ENG_TOK_NORMAL) { /* SPM and Gemma 4: U+2581 -> space */
        for (size_t i = 0; i < n;) {
            if (i + 3 <= n && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
                if (util_buf_append(tmp, " ", 1)) return UTIL_ENOMEM;
                i += 3;
            } else {
                if (util_buf_append(tmp, s + i, 1)) return UTIL_ENOMEM;
                i++;
            }
        }
    } else if (a == ENG_TOK_BYTE && n >= 3) { /* "<0xXX>", read as strtol reads it */
        unsigned v = 0;
        for (size_t i = 3; i < 5 && i < n; i++) {
            char c = s[i];
            unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 16;
            if (d == 16) break;
            v = v * 16 + d;
        }
        char c = (char)v;
        if (util_buf_append(tmp, &c, 1)) return UTIL_ENOMEM;
    }
    /* unused and undefined tokens print nothing */
    uint32_t off;
    if (arena_add(t, tmp->data ? tmp->data : "", tmp->len, &off)) return UTIL_ENOMEM;
    t->piece_off[id] = off;
    t->piece_len[id] = (uint32_t)tmp->len;
    return UTIL_OK;
}

static int special_cmp(const void *pa, const void *pb, const eng_tokenizer *t) {
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    if (t->text_len[a] != t->text_len[b]) return t->text_len[a] > t->text_len[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Specials in partition order (longest text first, then lower id) and a byte
 * trie over their texts to find every occurrence in one pass. */
static int build_specials(eng_tokenizer *t) {
    int32_t n = 0;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        unsigned a = t->attr[id];
        if (a == ENG_TOK_CONTROL || a == ENG_TOK_USER_DEFINED || a == ENG_TOK_UNKNOWN) n++;
    }
    t->specials = malloc((size_t)(n ? n : 1) * sizeof *t->specials);
    if (!t->specials) return UTIL_ENOMEM;
    n = 0;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        unsigned a = t->attr[id];
        if (a == ENG_TOK_CONTROL || a == ENG_TOK_USER_DEFINED || a == ENG_TOK_UNKNOWN) t->specials[n++] = id;
    }
    t->n_specials = n;
    /* insertion sort is too slow for Gemma's thousands; a merge sort with the
     * tokenizer as context keeps it stable and simple */
    int32_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) return UTIL_ENOMEM;
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = special_cmp(&t->specials[j], &t->specials[i], t) < 0 ? t->specials[j++]
                                                                                : t->specials[i++];
            while (i < mid) tmp[k++] = t->specials[i++];
            while (j < hi) tmp[k++] = t->specials[j++];
        }
        memcpy(t->specials, tmp, (size_t)n * sizeof *tmp);
    }
    free(tmp);

    t->cap_trie = 64;
    t->trie = malloc((size_t)t->cap_trie * sizeof *t->trie);
    if (!t->trie) return UTIL_ENOMEM;
    t->trie[0] = (trie_node){-1, -1, -1, 0};
    t->n_trie = 1;
    for (int32_t r = 0; r < n; r++) {
        int32_t id = t->specials[r];
        const unsigned char *s = (const unsigned char *)text_of(t, id);
        size_t len = t->text_len[id];
        if (len == 0) continue; /* never: empty texts were renamed */
        t->first_byte[s[0]] = 1;
        int32_t node = 0;
        for (size_t i = 0; i < len; i++) {
            int32_t c = t->trie[node].child;
            while (c >= 0 && t->trie[c].byte != s[i]) c = t->trie[c].sibling;
            if (c < 0) {
                if (t->n_trie == t->cap_trie) {
                    trie_node *p = realloc(t->trie, (size_t)t->cap_trie * 2 * sizeof *p);
                    if (!p) return UTIL_ENOMEM;
                    t->trie = p;
                    t->cap_trie *= 2;
                }
                c = t->n_trie++;
                t->trie[c] = (trie_node){-1, t->trie[node].child, -1, s[i]};
                t->trie[node].child = c;
            }
            node = c;
        }
        if (t->trie[node].term < 0) t->trie[node].term = r; /* a duplicate text: first wins */
    }
    return UTIL_OK;
}

static int build_merges(eng_tokenizer *t, const tok_src *src, util_err *err) {
    t->mmask = pow2_at_least((size_t)src->n_merges * 2 + 16) - 1;
    t->mtab = calloc((size_t)t->mmask + 1, sizeof *t->mtab);
    if (!t->mtab) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    unsigned char cat[1024];
    for (uint64_t i = 0; i < src->n_merges; i++) {
        const char *m = src->merges[i];
        size_t n = src->merge_lens[i];
        const char *sp = n > 1 ? memchr(m + 1, ' ', n - 1) : NULL;
        if (!sp) continue; /* llama.cpp keys these as ("", ""): never matches */
        size_t nl = (size_t)(sp - m), nr = n - nl - 1;
        int32_t a, b, r;
        if (add_text_checked(t, m, nl, &a) || add_text_checked(t, sp + 1, nr, &b))
            return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        if (nl + nr <= sizeof cat) {
            memcpy(cat, m, nl);
            memcpy(cat + nl, sp + 1, nr);
            if (add_text_checked(t, (const char *)cat, nl + nr, &r))
                return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        } else {
            char *big = malloc(nl + nr);
            if (!big) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
            memcpy(big, m, nl);
            memcpy(big + nl, sp + 1, nr);
            int rc = add_text_checked(t, big, nl + nr, &r);
            free(big);
            if (rc) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        }
        merge_insert(t, a, b, (int32_t)i, r);
    }
    for (unsigned c = 0; c < 256; c++) {
        char u[4];
        int k = eng_utf8_encode(byte_to_cp(c), u);
        if (add_text_checked(t, u, (size_t)k, &t->byte_text[c]))
            return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    }
    return UTIL_OK;
}

static int build(eng_tokenizer *t, const tok_src *src, util_err *err) {
    if (src->n_tokens == 0 || src->n_tokens > (1u << 24))
        return util_err_set(err, UTIL_EFORMAT, "tokenizer: vocabulary size %llu is out of range",
                            (unsigned long long)src->n_tokens);
    t->n_vocab = (int32_t)src->n_tokens;
    t->attr = malloc((size_t)t->n_vocab);
    t->eog = calloc((size_t)t->n_vocab, 1);
    t->scores = malloc((size_t)t->n_vocab * sizeof *t->scores);
    t->piece_off = malloc((size_t)t->n_vocab * sizeof *t->piece_off);
    t->piece_len = malloc((size_t)t->n_vocab * sizeof *t->piece_len);
    if (!t->attr || !t->eog || !t->scores || !t->piece_off || !t->piece_len)
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    t->cap_text = 0;
    int32_t want = t->n_vocab + (t->kind == TOK_BPE ? 512 : 0);
    t->text_off = malloc((size_t)want * sizeof *t->text_off);
    t->text_len = malloc((size_t)want * sizeof *t->text_len);
    if (!t->text_off || !t->text_len) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    t->cap_text = want;
    t->hmask = pow2_at_least((size_t)want * 2) - 1;
    t->htab = malloc(((size_t)t->hmask + 1) * sizeof *t->htab);
    if (!t->htab) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    memset(t->htab, 0xff, ((size_t)t->hmask + 1) * sizeof *t->htab);

    for (int32_t id = 0; id < t->n_vocab; id++) {
        const char *s = src->tokens[id];
        size_t n = src->token_lens[id];
        char empty[32];
        if (n == 0) { /* llama.cpp renames empty tokens */
            int k = snprintf(empty, sizeof empty, "[EMPTY_%d]", (int)id);
            s = empty;
            n = (size_t)k;
        }
        uint32_t off;
        if (arena_add(t, s, n, &off)) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        t->text_off[id] = off;
        t->text_len[id] = (uint32_t)n;
        t->n_text = id + 1;
        text_insert(t, id);
        int32_t ty = src->types ? src->types[id] : ENG_TOK_NORMAL;
        t->attr[id] = (unsigned char)(ty >= 0 && ty <= 6 ? ty : ENG_TOK_UNDEFINED);
        float sc = src->scores ? src->scores[id] : 0.0f;
        t->scores[id] = sc == 0.0f ? 0.0f : sc; /* fold -0 into +0 for the heap key */
    }
    detect_specials(t);

    unsigned char shifted[68];
    shifted_bytes(shifted);
    util_buf tmp;
    util_buf_init(&tmp);
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (build_piece(t, id, shifted, &tmp)) {
            util_buf_release(&tmp);
            return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        }
    }
    util_buf_release(&tmp);
    if (build_specials(t)) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    if (t->kind == TOK_BPE) return build_merges(t, src, err);
    return UTIL_OK;
}

/* --- reading the GGUF ----------------------------------------------------- */

static const char *const special_keys[SP_COUNT] = {
    [SP_BOS] = "tokenizer.ggml.bos_token_id",         [SP_EOS] = "tokenizer.ggml.eos_token_id",
    [SP_EOT] = "tokenizer.ggml.eot_token_id",         [SP_EOM] = "tokenizer.ggml.eom_token_id",
    [SP_UNK] = "tokenizer.ggml.unknown_token_id",     [SP_SEP] = "tokenizer.ggml.seperator_token_id",
    [SP_PAD] = "tokenizer.ggml.padding_token_id",     [SP_MASK] = "tokenizer.ggml.mask_token_id",
    [SP_FIM_PRE] = "tokenizer.ggml.fim_pre_token_id", [SP_FIM_SUF] = "tokenizer.ggml.fim_suf_token_id",
    [SP_FIM_MID] = "tokenizer.ggml.fim_mid_token_id", [SP_FIM_PAD] = "tokenizer.ggml.fim_pad_token_id",
    [SP_FIM_REP] = "tokenizer.ggml.fim_rep_token_id", [SP_FIM_SEP] = "tokenizer.ggml.fim_sep_token_id",
};

static int str_is(const char *s, size_t n, const char *lit) {
    return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* Model type and pre-tokenizer, with llama.cpp's defaults for each: gpt2
 * (byte-level BPE) takes its pre-tokenizer from tokenizer.ggml.pre (missing:
 * llama.cpp's 'default' with a warning; unknown: an error naming it); gemma4 is
 * BPE on raw UTF-8 with its own fixed splitting; llama is SentencePiece. */
static int read_kind(eng_tokenizer *t, tok_src *src, const eng_gguf *g, util_err *err) {
    const char *s;
    size_t n;
    int rc = eng_gguf_get_str(g, "tokenizer.ggml.model", &s, &n, err);
    if (rc == UTIL_ENOTFOUND)
        return util_err_set(err, UTIL_EFORMAT, "tokenizer: key 'tokenizer.ggml.model' is missing");
    if (rc) return rc;
    for (int k = 0; k < SP_COUNT; k++) t->ids[k] = -1;
    int gemma4 = str_is(s, n, "gemma4");
    if (str_is(s, n, "gpt2") || gemma4) {
        src->kind = TOK_BPE;
        if (!gemma4) t->ids[SP_BOS] = t->ids[SP_EOS] = 11;
        t->add_bos = 0;
        t->add_space_prefix = 0;
    } else if (str_is(s, n, "llama")) {
        src->kind = TOK_SPM;
        t->ids[SP_BOS] = 1;
        t->ids[SP_EOS] = 2;
        t->ids[SP_UNK] = 0;
        t->add_bos = 1;
        t->add_space_prefix = 1;
    } else {
        return util_err_set(err, UTIL_EUNSUPPORTED, "tokenizer: model type '%.*s' is not supported",
                            (int)(n < 64 ? n : 64), s);
    }
    t->add_eos = 0;
    src->clean_spaces = 0;
    if (src->kind != TOK_BPE) return UTIL_OK;
    t->byte_encode = !gemma4;
    t->escape_spaces = gemma4;
    if (gemma4) {
        s = "gemma4";
        n = strlen(s);
    } else {
        rc = eng_gguf_get_str(g, "tokenizer.ggml.pre", &s, &n, err);
        if (rc == UTIL_ENOTFOUND) {
            snprintf(t->warning, sizeof t->warning,
                     "tokenizer: no pre-tokenizer type in the model; using llama.cpp's 'default' "
                     "splitting, which may not match the model");
            s = "default";
            n = strlen(s);
        } else if (rc) {
            return rc;
        }
    }
    rc = eng_pretok_new(&t->pretok, s, n, err);
    if (rc) return rc;
    const eng_pretok_flags *f = eng_pretok_flags_of(t->pretok);
    src->clean_spaces = f->clean_spaces;
    t->ignore_merges = f->ignore_merges;
    if (f->add_bos >= 0) t->add_bos = f->add_bos;
    return UTIL_OK;
}

static int read_flag(const eng_gguf *g, const char *key, int *val, util_err *err) {
    int v;
    int rc = eng_gguf_get_bool(g, key, &v, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    *val = v != 0;
    return UTIL_OK;
}

static int read_src(eng_tokenizer *t, tok_src *src, const eng_gguf *g, util_err *err) {
    int rc = read_kind(t, src, g, err);
    if (rc) return rc;
    rc = eng_gguf_get_str_arr(g, "tokenizer.ggml.tokens", &src->tokens, &src->token_lens, &src->n_tokens,
                              err);
    if (rc == UTIL_ENOTFOUND)
        return util_err_set(err, UTIL_EFORMAT, "tokenizer: key 'tokenizer.ggml.tokens' is missing");
    if (rc) return rc;
    uint64_t cnt = 0;
    rc = eng_gguf_get_i32_arr(g, "tokenizer.ggml.token_type", &src->types, &cnt, err);
    if (rc && rc != UTIL_ENOTFOUND) return rc;
    if (!rc && cnt != src->n_tokens)
        return util_err_set(err, UTIL_EFORMAT,
                            "tokenizer: 'tokenizer.ggml.token_type' has %llu entries for %llu tokens",
                            (unsigned long long)cnt, (unsigned long long)src->n_tokens);
    rc = eng_gguf_get_f32_arr(g, "tokenizer.ggml.scores", &src->scores, &cnt, err);
    if (rc && rc != UTIL_ENOTFOUND) return rc;
    if (!rc && cnt != src->n_tokens)
        return util_err_set(err, UTIL_EFORMAT,
                            "tokenizer: 'tokenizer.ggml.scores' has %llu entries for %llu tokens",
                            (unsigned long long)cnt, (unsigned long long)src->n_tokens);
    if (src->kind == TOK_BPE) {
        rc = eng_gguf_get_str_arr(g, "tokenizer.ggml.merges", &src->merges, &src->merge_lens, &src->n_merges,
                                  err);
        if (rc == UTIL_ENOTFOUND)
            return util_err_set(
                err, UTIL_EFORMAT,
                "tokenizer: key 'tokenizer.ggml.merges' is missing (needed by gpt2 vocabularies)");
        if (rc) return rc;
    }
    for (int k = 0; k < SP_COUNT; k++) {
        uint32_t v;
        rc = eng_gguf_get_u32(g, special_keys[k], &v, err);
        if (rc == UTIL_ENOTFOUND) continue;
        if (rc) return rc;
        if (v < src->n_tokens) t->ids[k] = (int32_t)v; /* else llama.cpp keeps the default */
    }
    for (int k = 0; k < SP_COUNT; k++)
        if (t->ids[k] >= (int64_t)src->n_tokens) t->ids[k] = -1;
    if ((rc = read_flag(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err))) return rc;
    if (t->pretok && strcmp(eng_pretok_name(t->pretok), "gemma4") == 0)
        t->add_bos = 1; /* as llama.cpp forces */
    if ((rc = read_flag(g, "tokenizer.ggml.add_eos_token", &t->add_eos, err))) return rc;
    return read_flag(g, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix, err);
}

/* llama.cpp sets token attributes the GGUF lacks by model name: in Phi-3
 * models every special token but <unk> <s> <|endoftext|> (and </s>) eats the
 * whitespace after it. */
static int set_strips(eng_tokenizer *t, const eng_gguf *g, util_err *err) {
    const char *name;
    size_t n;
    int rc = eng_gguf_get_str(g, "general.name", &name, &n, err);
    if (rc == UTIL_ENOTFOUND) return UTIL_OK;
    if (rc) return rc;
    char low[256]; /* the name in lower case, as llama.cpp compares it */
    size_t m = n < sizeof low - 1 ? n : sizeof low - 1;
    for (size_t i = 0; i < m; i++) low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    low[m] = '\0';
    if (!strstr(low, "phi-3") && !strstr(low, "phi3")) return UTIL_OK;
    t->strip = calloc((size_t)t->n_vocab, 1);
    if (!t->strip) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    for (int32_t r = 0; r < t->n_specials; r++) t->strip[t->specials[r]] = STRIP_RIGHT;
    static const char *const keep[] = {"<unk>", "<s>", "<|endoftext|>"};
    int32_t id = text_find(t, "</s>", 4);
    if (id >= 0 && id < t->n_vocab) t->strip[id] = STRIP_RIGHT;
    for (int k = 0; k < 3; k++) {
        id = text_find(t, keep[k], strlen(keep[k]));
        if (id >= 0 && id < t->n_vocab) t->strip[id] = 0;
    }
    return UTIL_OK;
}

int eng_tokenizer_new(eng_tokenizer **out, const eng_gguf *g, util_err *err) {
    *out = NULL;
    eng_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    tok_src src;
    memset(&src, 0, sizeof src);
    int rc = read_src(t, &src, g, err);
    if (!rc) {
        t->kind = src.kind;
        t->clean_spaces = src.clean_spaces;
        rc = build(t, &src, err);
        if (!rc) rc = set_strips(t, g, err);
    }
    free(src.tokens);
    free(src.token_lens);
    free(src.types);
    free(src.scores);
    free(src.merges);
    free(src.merge_lens);
    if (rc) {
        eng_tokenizer_free(t);
        return rc;
    }
    *out = t;
    return UTIL_OK;
}

void eng_tokenizer_free(eng_tokenizer *t) {
    if (!t) return;
    eng_pretok_free(t->pretok);
    free(t->arena);
    free(t->text_off);
    free(t->text_len);
    free(t->piece_off);
    free(t->piece_len);
    free(t->scores);
    free(t->attr);
    free(t->eog);
    free(t->htab);
    free(t->mtab);
    free(t->specials);
    free(t->trie);
    free(t->strip);
    free(t);
}

/* --- accessors ------------------------------------------------------------ */

int32_t eng_tokenizer_n_vocab(const eng_tokenizer *t) { return t->n_vocab; }
int32_t eng_tokenizer_bos(const eng_tokenizer *t) { return t->ids[SP_BOS]; }
int32_t eng_tokenizer_eos(const eng_tokenizer *t) { return t->ids[SP_EOS]; }
int eng_tokenizer_add_bos(const eng_tokenizer *t) { return t->add_bos; }

int eng_tokenizer_is_eog(const eng_tokenizer *t, int32_t id) {
    return id >= 0 && id < t->n_vocab && t->eog[id];
}

eng_token_attr eng_tokenizer_attr(const eng_tokenizer *t, int32_t id) {
    if (id < 0 || id >= t->n_vocab) return ENG_TOK_UNDEFINED;
    return (eng_token_attr)t->attr[id];
}

int32_t eng_tokenizer_find(const eng_tokenizer *t, const char *text, size_t len) {
    int32_t id = text_find(t, text, len);
    return id < t->n_vocab ? id : -1;
}

const char *eng_tokenizer_warning(const eng_tokenizer *t) { return t->warning[0] ? t->warning : NULL; }

int eng_token_piece(const eng_tokenizer *t, int32_t id, int render_special, const char **out, size_t *len) {
    *out = "";
    *len = 0;
    if (id < 0 || id >= t->n_vocab) return UTIL_ERANGE;
    unsigned a = t->attr[id];
    if (!render_special && (a == ENG_TOK_CONTROL || a == ENG_TOK_UNKNOWN)) return UTIL_OK;
    *out = t->arena + t->piece_off[id];
    *len = t->piece_len[id];
    return UTIL_OK;
}

/* --- special-token partition ------------------------------------------- */

typedef struct frag {
    size_t start, len; /* raw text span (tok < 0) */
    int32_t tok;       /* special token id, or -1 for raw text */
} frag;

typedef struct occ {
    size_t pos;
    int32_t rank;
    uint32_t lcut, rcut; /* whitespace stripped before and after it */
} occ;

static int occ_cmp(const void *pa, const void *pb) {
    const occ *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int occ_pos_cmp(const void *pa, const void *pb) {
    const occ *a = pa, *b = pb;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int c_isspace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Whether the special of this rank may be cut out at [pos, pos + n): always for
 * a user-defined token (llama.cpp's rule), else with parse_special and only
 * when none of its bytes is plain (plain: NULL, or 1 per byte inside a plain
 * span of eng_tokenize_spans). */
static int special_allowed(const eng_tokenizer *t, int32_t rank, int parse_special,
                           const unsigned char *plain, size_t pos, size_t n) {
    unsigned a = t->attr[t->specials[rank]];
    if (a == ENG_TOK_USER_DEFINED) return 1;
    if (!parse_special) return 0;
    if (plain)
        for (size_t k = pos; k < pos + n; k++)
            if (plain[k]) return 0;
    return 1;
}

/* Splits text into raw spans and special tokens exactly as llama.cpp's
 * tokenizer_st_partition does: for each special (longest first), every
 * remaining raw span is searched left to right and each occurrence cut out.
 * Done here in one trie pass that lists all occurrences, then a replay that
 * accepts an occurrence only if none of its bytes was taken before. */
static int partition(const eng_tokenizer *t, const char *text, size_t len, int parse_special,
                     const unsigned char *plain, frag **out, size_t *nout) {
    occ *oc = NULL;
    size_t noc = 0, cap = 0;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len; i++) {
        if (!t->first_byte[s[i]]) continue;
        int32_t node = 0;
        for (size_t j = i; j < len; j++) {
            int32_t c = t->trie[node].child;
            while (c >= 0 && t->trie[c].byte != s[j]) c = t->trie[c].sibling;
            if (c < 0) break;
            node = c;
            int32_t r = t->trie[node].term;
            if (r >= 0 && special_allowed(t, r, parse_special, plain, i, j + 1 - i)) {
                if (util_grow(&oc, &cap, noc + 1, sizeof *oc)) {
                    free(oc);
                    return UTIL_ENOMEM;
                }
                oc[noc++] = (occ){i, r, 0, 0};
            }
        }
    }
    size_t nacc = 0;
    if (noc) {
        unsigned char *taken = calloc(len, 1);
        if (!taken) {
            free(oc);
            return UTIL_ENOMEM;
        }
        qsort(oc, noc, sizeof *oc, occ_cmp);
        size_t last_end = 0;
        int32_t last_rank = -1;
        for (size_t k = 0; k < noc; k++) {
            size_t p = oc[k].pos, n = t->text_len[t->specials[oc[k].rank]];
            if (oc[k].rank != last_rank) {
                last_rank = oc[k].rank;
                last_end = 0;
            }
            if (p < last_end) continue;
            int free_span = 1;
            for (size_t q = p; q < p + n; q++)
                if (taken[q]) {
                    free_span = 0;
                    break;
                }
            if (!free_span) continue;
            memset(taken + p, 1, n);
            /* lstrip/rstrip: whitespace beside it within its raw span goes away */
            unsigned st = t->strip ? t->strip[t->specials[oc[k].rank]] : 0;
            for (size_t q = p; (st & STRIP_LEFT) && q > 0 && !taken[q - 1] && c_isspace(text[q - 1]); q--)
                taken[q - 1] = 1, oc[k].lcut++;
            for (size_t q = p + n; (st & STRIP_RIGHT) && q < len && !taken[q] && c_isspace(text[q]); q++)
                taken[q] = 1, oc[k].rcut++;
            last_end = p + n + oc[k].rcut;
            oc[nacc++] = oc[k];
        }
        free(taken);
        qsort(oc, nacc, sizeof *oc, occ_pos_cmp);
    }
    frag *f = malloc((2 * nacc + 1) * sizeof *f);
    if (!f) {
        free(oc);
        return UTIL_ENOMEM;
    }
    size_t nf = 0, at = 0;
    for (size_t k = 0; k < nacc; k++) {
        int32_t id = t->specials[oc[k].rank];
        if (oc[k].pos - oc[k].lcut > at) f[nf++] = (frag){at, oc[k].pos - oc[k].lcut - at, -1};
        f[nf++] = (frag){oc[k].pos, t->text_len[id], id};
        at = oc[k].pos + t->text_len[id] + oc[k].rcut;
    }
    if (at < len) f[nf++] = (frag){at, len - at, -1};
    free(oc);
    *out = f;
    *nout = nf;
    return UTIL_OK;
}

/* --- per-call scratch ------------------------------------------------------ */

typedef struct sym {
    int32_t id;        /* BPE: text id (-1 once merged away) */
    uint32_t start, n; /* SPM: byte span (n = 0 once merged away) */
    int32_t prev, next;
} sym;

typedef struct heap_ent {
    uint64_t key; /* smallest first */
    int32_t l, r, a, b, res;
} heap_ent;

typedef struct scratch {
    uint32_t *cp;
    uint16_t *fl;
    size_t cap_cp, cap_fl;
    eng_pretok_work pw;
    sym *syms;
    size_t cap_syms;
    heap_ent *heap;
    size_t nheap, cap_heap;
    char *bytes;
    size_t cap_bytes;
    int32_t *ids;
    size_t nids, cap_ids;
} scratch;

static int push_id(scratch *sc, int32_t id) {
    if (sc->nids == sc->cap_ids && util_grow(&sc->ids, &sc->cap_ids, sc->nids + 1, sizeof *sc->ids))
        return UTIL_ENOMEM;
    sc->ids[sc->nids++] = id;
    return UTIL_OK;
}

static int heap_push(scratch *sc, heap_ent e) {
    if (sc->nheap == sc->cap_heap && util_grow(&sc->heap, &sc->cap_heap, sc->nheap + 1, sizeof *sc->heap))
        return UTIL_ENOMEM;
    size_t i = sc->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (sc->heap[p].key <= e.key) break;
        sc->heap[i] = sc->heap[p];
        i = p;
    }
    sc->heap[i] = e;
    return UTIL_OK;
}

static heap_ent heap_pop(scratch *sc) {
    heap_ent top = sc->heap[0], last = sc->heap[--sc->nheap];
    size_t i = 0, n = sc->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && sc->heap[c + 1].key < sc->heap[c].key) c++;
        if (last.key <= sc->heap[c].key) break;
        sc->heap[i] = sc->heap[c];
        i = c;
    }
    if (n) sc->heap[i] = last;
    return top;
}

static void scratch_free(scratch *sc) {
    free(sc->cp);
    free(sc->fl);
    eng_pretok_work_release(&sc->pw);
    free(sc->syms);
    free(sc->heap);
    free(sc->bytes);
    free(sc->ids);
}

/* --- byte-level BPE ----------------------------------------------------- */

static int bpe_try_pair(const eng_tokenizer *t, scratch *sc, int32_t l, int32_t r) {
    if (l < 0 || r < 0 || sc->syms[l].id < 0 || sc->syms[r].id < 0) return UTIL_OK;
    const merge_ent *m = merge_find(t, sc->syms[l].id, sc->syms[r].id);
    if (!m) return UTIL_OK;
    heap_ent e = {
        ((uint64_t)(uint32_t)m->rank << 32) | (uint32_t)l, l, r, sc->syms[l].id, sc->syms[r].id, m->result};
    return heap_push(sc, e);
}

/* Emits the tokens of a final symbol: its token, or, for a text that is no
 * token, one token per byte (llama.cpp: the byte's own text, or <0xXX> when
 * the vocabulary is not byte-encoded; a byte without a token is dropped). */
static int bpe_emit(const eng_tokenizer *t, scratch *sc, int32_t id, const char *x, size_t n) {
    if (id >= 0 && id < t->n_vocab) return push_id(sc, id);
    for (size_t j = 0; j < n; j++) {
        int32_t b;
        if (t->byte_encode) {
            b = text_find(t, x + j, 1);
        } else {
            static const char hex[] = "0123456789ABCDEF";
            unsigned char c = (unsigned char)x[j];
            char name[6] = {'<', '0', 'x', hex[c >> 4], hex[c & 15], '>'};
            b = text_find(t, name, 6);
        }
        if (b >= 0 && b < t->n_vocab && push_id(sc, b)) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* One pre-tokenized word (code points cp[s..s+n)): byte-map (or take the
 * UTF-8 characters as they are), merge by rank (lowest first, ties leftmost),
 * emit ids. sc->bytes holds the word's text for the whole-word lookups. */
static int bpe_word(const eng_tokenizer *t, scratch *sc, size_t s, size_t n) {
    if (util_grow(&sc->syms, &sc->cap_syms, n * 4, sizeof *sc->syms) ||
        util_grow(&sc->bytes, &sc->cap_bytes, n * 8 + 1, 1))
        return UTIL_ENOMEM;
    int32_t ns = 0;
    size_t nb = 0;
    int all_newlines = 1;
    for (size_t i = s; i < s + n; i++) {
        char u[4];
        int k = eng_utf8_encode(sc->cp[i], u);
        all_newlines &= sc->cp[i] == '\n';
        if (!t->byte_encode) { /* one symbol per character; -1: not even a text */
            sc->syms[ns] = (sym){text_find(t, u, (size_t)k), (uint32_t)nb, (uint32_t)k, ns - 1, ns + 1};
            ns++;
            memcpy(sc->bytes + nb, u, (size_t)k);
            nb += (size_t)k;
            continue;
        }
        for (int j = 0; j < k; j++) {
            int32_t bt = t->byte_text[(unsigned char)u[j]];
            sc->syms[ns] = (sym){bt, 0, 0, ns - 1, ns + 1};
            ns++;
            memcpy(sc->bytes + nb, text_of(t, bt), t->text_len[bt]);
            nb += t->text_len[bt];
        }
    }
    if (ns == 0) return UTIL_OK;
    if (t->ignore_merges || (!t->byte_encode && all_newlines)) {
        int32_t id = text_find(t, sc->bytes, nb);
        if (id >= 0 && id < t->n_vocab) return push_id(sc, id);
    }
    sc->syms[ns - 1].next = -1;
    sc->nheap = 0;
    for (int32_t i = 1; i < ns; i++)
        if (bpe_try_pair(t, sc, i - 1, i)) return UTIL_ENOMEM;
    while (sc->nheap) {
        heap_ent e = heap_pop(sc);
        sym *l = &sc->syms[e.l], *r = &sc->syms[e.r];
        if (l->id != e.a || r->id != e.b || l->next != e.r) continue; /* stale */
        l->id = e.res;
        r->id = -2;
        l->next = r->next;
        if (r->next >= 0) sc->syms[r->next].prev = e.l;
        if (bpe_try_pair(t, sc, l->prev, e.l) || bpe_try_pair(t, sc, e.l, sc->syms[e.l].next))
            return UTIL_ENOMEM;
    }
    for (int32_t i = 0; i >= 0; i = sc->syms[i].next) {
        int32_t id = sc->syms[i].id;
        int rc = id >= 0 ? bpe_emit(t, sc, id, text_of(t, id), t->text_len[id])
                         : bpe_emit(t, sc, -1, sc->bytes + sc->syms[i].start, sc->syms[i].n);
        if (rc) return rc;
    }
    return UTIL_OK;
}

static int bpe_fragment(const eng_tokenizer *t, scratch *sc, const char *text, size_t len, util_err *err) {
    if (util_grow(&sc->cp, &sc->cap_cp, len, sizeof *sc->cp) ||
        util_grow(&sc->fl, &sc->cap_fl, len, sizeof *sc->fl))
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
    size_t n = 0;
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        size_t adv;
        uint32_t c = eng_utf8_decode(s + i, len - i, &adv);
        if (c == ENG_UTF8_BAD) c = 0xFFFD; /* llama.cpp: each bad byte becomes U+FFFD */
        if (c == ' ' && t->escape_spaces) c = 0x2581;
        sc->cp[n] = c;
        sc->fl[n] = (uint16_t)eng_unicode_flags(c);
        n++;
        i += adv;
    }
    const uint32_t *pieces;
    size_t np;
    int rc = eng_pretok_split(t->pretok, &sc->pw, sc->cp, sc->fl, n, &pieces, &np, err);
    if (rc) return rc;
    size_t at = 0;
    for (size_t k = 0; k < np; k++) {
        if (bpe_word(t, sc, at, pieces[k])) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        at += pieces[k];
    }
    return UTIL_OK;
}

/* --- SentencePiece-style BPE -------------------------------------------- */

static uint32_t score_order(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u); /* increasing with f */
}

static int spm_try_pair(const eng_tokenizer *t, scratch *sc, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return UTIL_OK;
    uint32_t n = sc->syms[l].n + sc->syms[r].n;
    int32_t id = text_find(t, sc->bytes + sc->syms[l].start, n);
    if (id < 0 || id >= t->n_vocab) return UTIL_OK;
    /* highest score first, then the leftmost pair */
    heap_ent e = {((uint64_t)~score_order(t->scores[id]) << 32) | (uint32_t)l, l, r, (int32_t)n, 0, id};
    return heap_push(sc, e);
}

static int spm_byte_token(const eng_tokenizer *t, unsigned char b, int32_t *id) {
    static const char hex[] = "0123456789ABCDEF";
    char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    *id = text_find(t, name, 6);
    if (*id < 0 || *id >= t->n_vocab) *id = text_find(t, (const char *)&b, 1);
    if (*id < 0 || *id >= t->n_vocab) *id = t->ids[SP_UNK]; /* llama.cpp would throw here */
    return *id >= 0;
}

static int spm_fragment(const eng_tokenizer *t, scratch *sc, const char *text, size_t len, int space_prefix) {
    /* escape: optional leading space, then every ' ' -> U+2581 */
    if (util_grow(&sc->bytes, &sc->cap_bytes, 3 * (len + 1), 1)) return UTIL_ENOMEM;
    size_t n = 0;
    if (space_prefix) {
        memcpy(sc->bytes, "\xe2\x96\x81", 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(sc->bytes + n, "\xe2\x96\x81", 3);
            n += 3;
        } else {
            sc->bytes[n++] = text[i];
        }
    }
    if (n == 0) return UTIL_OK;
    if (util_grow(&sc->syms, &sc->cap_syms, n, sizeof *sc->syms)) return UTIL_ENOMEM;
    int32_t ns = 0;
    for (size_t i = 0; i < n;) {
        size_t k = eng_utf8_len_lead((unsigned char)sc->bytes[i]);
        if (k > n - i) k = n - i;
        sc->syms[ns] = (sym){0, (uint32_t)i, (uint32_t)k, ns - 1, ns + 1};
        ns++;
        i += k;
    }
    sc->syms[ns - 1].next = -1;
    sc->nheap = 0;
    for (int32_t i = 1; i < ns; i++)
        if (spm_try_pair(t, sc, i - 1, i)) return UTIL_ENOMEM;
    while (sc->nheap) {
        heap_ent e = heap_pop(sc);
        sym *l = &sc->syms[e.l], *r = &sc->syms[e.r];
        if (l->n == 0 || r->n == 0 || l->n + r->n != (uint32_t)e.a) continue; /* stale */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) sc->syms[r->next].prev = e.l;
        if (spm_try_pair(t, sc, l->prev, e.l) || spm_try_pair(t, sc, e.l, sc->syms[e.l].next))
            return UTIL_ENOMEM;
    }
    for (int32_t i = 0; i >= 0; i = sc->syms[i].next) {
        const char *x = sc->bytes + sc->syms[i].start;
        int32_t id = text_find(t, x, sc->syms[i].n);
        if (id >= 0 && id < t->n_vocab) {
            if (push_id(sc, id)) return UTIL_ENOMEM;
            continue;
        }
        for (uint32_t j = 0; j < sc->syms[i].n; j++) /* byte fallback */
            if (spm_byte_token(t, (unsigned char)x[j], &id) && push_id(sc, id)) return UTIL_ENOMEM;
    }
    return UTIL_OK;
}

/* --- encode ---------------------------------------------------------------- */

static int tokenize(const eng_tokenizer *t, const char *text, size_t len, int add_special, int parse_special,
                    const unsigned char *plain, int32_t **out, size_t *n, util_err *err);

int eng_tokenize(const eng_tokenizer *t, const char *text, size_t len, int add_special, int parse_special,
                 int32_t **out, size_t *n, util_err *err) {
    return tokenize(t, text, len, add_special, parse_special, NULL, out, n, err);
}

int eng_tokenize_spans(const eng_tokenizer *t, const char *text, size_t len, int add_special,
                       const eng_tok_span *plain, size_t nplain, int32_t **out, size_t *n, util_err *err) {
    *out = NULL;
    *n = 0;
    unsigned char *mask = NULL;
    if (nplain && len) {
        if (!(mask = calloc(len, 1))) return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory");
        for (size_t i = 0; i < nplain; i++) {
            if (plain[i].start >= len) continue;
            size_t k = plain[i].len < len - plain[i].start ? plain[i].len : len - plain[i].start;
            memset(mask + plain[i].start, 1, k);
        }
    }
    int rc = tokenize(t, text, len, add_special, 1, mask, out, n, err);
    free(mask);
    return rc;
}

static int tokenize(const eng_tokenizer *t, const char *text, size_t len, int add_special, int parse_special,
                    const unsigned char *plain, int32_t **out, size_t *n, util_err *err) {
    *out = NULL;
    *n = 0;
    scratch sc;
    memset(&sc, 0, sizeof sc);
    frag *f = NULL;
    size_t nf = 0;
    int rc = UTIL_OK;
    if (add_special && t->add_bos && t->ids[SP_BOS] >= 0) rc = push_id(&sc, t->ids[SP_BOS]);
    if (!rc && len > 0) rc = partition(t, text, len, parse_special, plain, &f, &nf);
    int prev_special = 1; /* SPM: a space prefix goes at the start and after specials */
    for (size_t k = 0; !rc && k < nf; k++) {
        if (f[k].tok >= 0) {
            rc = push_id(&sc, f[k].tok);
            prev_special = 1;
        } else if (t->kind == TOK_BPE) {
            rc = bpe_fragment(t, &sc, text + f[k].start, f[k].len, err);
            if (rc && rc != UTIL_ENOMEM) { /* err says what PCRE2 reported */
                free(f);
                scratch_free(&sc);
                return rc;
            }
        } else {
            rc = spm_fragment(t, &sc, text + f[k].start, f[k].len, t->add_space_prefix && prev_special);
            prev_special = 0;
        }
    }
    if (!rc && add_special && t->add_eos && t->ids[SP_EOS] >= 0) rc = push_id(&sc, t->ids[SP_EOS]);
    free(f);
    if (!rc && !sc.ids) rc = util_grow(&sc.ids, &sc.cap_ids, 1, sizeof *sc.ids);
    if (rc) {
        scratch_free(&sc);
        return util_err_set(err, rc, "tokenizer: out of memory encoding %zu bytes", len);
    }
    *out = sc.ids;
    *n = sc.nids;
    sc.ids = NULL;
    scratch_free(&sc);
    return UTIL_OK;
}

/* --- decode ---------------------------------------------------------------- */

/* llama.cpp's clean_spaces pass for BPE pre types other than smollm: drops the
 * space before ?!., and before 's 'm 're 've, and around a lone '. */
static size_t clean_spaces(char *s, size_t n) {
    size_t total = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) total--;
        s[total++] = x;
    }
    n = total;
    total = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') {
            total--;
            s[++i] = '\0';
        }
        s[total++] = x;
    }
    n = total;
    total = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = s[i];
        if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            char x1 = s[i + 1];
            if (x1 == 's' || x1 == 'm')
                total--;
            else if (i + 2 < n && ((x1 == 'r' && s[i + 2] == 'e') || (x1 == 'v' && s[i + 2] == 'e')))
                total--;
        }
        s[total++] = x;
    }
    return total;
}

int eng_detokenize(const eng_tokenizer *t, const int32_t *ids, size_t n, int render_special, char **out,
                   size_t *len, util_err *err) {
    *out = NULL;
    *len = 0;
    util_buf b;
    util_buf_init(&b);
    int rc = util_buf_reserve(&b, n * 4 + 1);
    for (size_t i = 0; !rc && i < n; i++) {
        const char *p;
        size_t pl;
        if (eng_token_piece(t, ids[i], render_special, &p, &pl)) {
            util_buf_release(&b);
            return util_err_set(err, UTIL_ERANGE, "tokenizer: token id %d is outside the vocabulary (%d)",
                                (int)ids[i], (int)t->n_vocab);
        }
        /* llama.cpp drops one leading space of the first piece when the
         * vocabulary adds a space prefix */
        if (i == 0 && t->add_space_prefix && pl && p[0] == ' ') {
            p++;
            pl--;
        }
        rc = util_buf_append(&b, p, pl);
    }
    if (!rc) rc = util_buf_append(&b, "", 0);
    if (rc) {
        util_buf_release(&b);
        return util_err_set(err, UTIL_ENOMEM, "tokenizer: out of memory decoding %zu tokens", n);
    }
    if (t->clean_spaces) {
        b.len = clean_spaces(b.data, b.len);
        b.data[b.len] = '\0';
    }
    *out = util_buf_detach(&b, len);
    return UTIL_OK;
}

/* --- streaming decode ------------------------------------------------------ */

void eng_detok_stream_init(eng_detok_stream *s) { s->npend = 0; }

/* Works on the virtual sequence pend + piece: complete characters go out, an
 * invalid byte goes out alone, and a valid but unfinished tail (at most 3
 * bytes) waits in pend for the next piece. */
size_t eng_detok_stream_feed(eng_detok_stream *s, const char *piece, size_t len, char *out) {
    unsigned char head[8];
    size_t nh = s->npend > 0 ? (size_t)s->npend : 0, total = nh + len, w = 0;
    memcpy(head, s->pend, nh);
    s->npend = 0;
    for (size_t j = 0; j < total;) {
        unsigned char tmp[4];
        size_t m = total - j < 4 ? total - j : 4;
        for (size_t q = 0; q < m; q++) tmp[q] = j + q < nh ? head[j + q] : (unsigned char)piece[j + q - nh];
        int k = eng_utf8_check(tmp, m);
        if (k < 0) { /* only possible at the end: keep the tail */
            memcpy(s->pend, tmp, m);
            s->npend = (int)m;
            break;
        }
        size_t take = k > 0 ? (size_t)k : 1;
        memcpy(out + w, tmp, take);
        w += take;
        j += take;
    }
    return w;
}

size_t eng_detok_stream_flush(eng_detok_stream *s, char *out) {
    size_t n = (size_t)s->npend;
    memcpy(out, s->pend, n);
    s->npend = 0;
    return n;
}
