/* linter/lint_tokens.c: token counts for tokens_lost. Uses the engine's
 * tokenizer when a model is found (--model, $CACHET_MODEL, or the default
 * model in util/path.h's search order), loaded lazily on the first
 * count; otherwise a documented estimate, always labelled as such.
 * Does not run the model or render chat templates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/path.h"
#include "lint_tokens.h"

/* 1 when engine/tokenizer.c is part of the build. */
#ifndef LINT_ENGINE_TOKENIZER
#define LINT_ENGINE_TOKENIZER 1 /* build with -DLINT_ENGINE_TOKENIZER=0 for estimate-only */
#endif

#if LINT_ENGINE_TOKENIZER
#include "../engine/gguf.h"
#include "../engine/tokenizer.h"
#endif

struct lint_tok {
    int state; /* 0 not tried, 1 loaded, -1 estimate */
    int no_model;
    char path[4096];
    char source[4200];
#if LINT_ENGINE_TOKENIZER
    eng_tokenizer *tk;
#endif
};

/* --- the estimate -------------------------------------------------------------
 * Mimics a byte-level BPE pre-tokenizer on English prompt text: a word (with
 * its leading space) is one token up to 7 letters and one more per 5 after,
 * digits come in groups of up to 3, punctuation is one token per character
 * except runs of the same character (pairs merge), a run of spaces or
 * newlines is one token, and a non-ASCII character is one token. */
long lint_tok_estimate(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    long n = 0;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t j = i + 1;
        if ((c | 32) >= 'a' && (c | 32) <= 'z') {
            while (j < len && (((s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') || s[j] == '\'')) j++;
            size_t l = j - i;
            n += l <= 7 ? 1 : 1 + (long)((l - 7 + 4) / 5);
        } else if (c >= '0' && c <= '9') {
            while (j < len && s[j] >= '0' && s[j] <= '9') j++;
            n += (long)((j - i + 2) / 3);
        } else if (c == ' ') {
            while (j < len && s[j] == ' ') j++;
            /* one space before a word merges into it */
            if (!(j - i == 1 && j < len && (((s[j] | 32) >= 'a' && (s[j] | 32) <= 'z')))) n += 1;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            while (j < len && (s[j] == '\n' || s[j] == '\r' || s[j] == '\t')) j++;
            n += 1;
        } else if (c < 0x80) {
            while (j < len && s[j] == c) j++;
            n += (long)((j - i + 1) / 2);
        } else {
            while (j < len && (s[j] & 0xC0) == 0x80) j++;
            n += 1;
        }
        i = j;
    }
    return n;
}

/* --- model lookup --------------------------------------------------------------- */

/* The one search order (util/path.h). A given or $CACHET_MODEL path that does
 * not exist is kept, so the estimate's label names it; no default model
 * found: the estimate. */
static void find_model(lint_tok *t, const char *model_path) {
    util_model_find(t->path, sizeof t->path, model_path, NULL);
}

int lint_tok_new(lint_tok **out, const char *model_path, int no_model, const char *exe_path) {
    lint_tok *t = calloc(1, sizeof *t);
    if (!t) return UTIL_ENOMEM;
    t->no_model = no_model;
    if (!no_model) find_model(t, model_path);
    snprintf(t->source, sizeof t->source, "estimate (no model)");
    *out = t;
    return UTIL_OK;
}

void lint_tok_free(lint_tok *t) {
    if (!t) return;
#if LINT_ENGINE_TOKENIZER
    eng_tokenizer_free(t->tk);
#endif
    free(t);
}

static void load(lint_tok *t) {
    t->state = -1;
    if (t->no_model || !t->path[0]) return;
#if LINT_ENGINE_TOKENIZER
    eng_gguf *g = NULL;
    util_err err = {0};
    if (eng_gguf_open(&g, t->path, &err) == UTIL_OK && eng_tokenizer_new(&t->tk, g, &err) == UTIL_OK) {
        t->state = 1;
        snprintf(t->source, sizeof t->source, "model '%s'", t->path);
    } else {
        snprintf(t->source, sizeof t->source, "estimate (model '%s' unusable: %s)", t->path, err.msg);
    }
    eng_gguf_free(g);
#else
    snprintf(t->source, sizeof t->source, "estimate (tokenizer not built in)");
#endif
}

long lint_tok_count(lint_tok *t, const char *text, size_t len, int *estimated) {
    if (t->state == 0) load(t);
#if LINT_ENGINE_TOKENIZER
    if (t->state == 1) {
        int32_t *ids = NULL;
        size_t n = 0;
        util_err err = {0};
        if (eng_tokenize(t->tk, text, len, 0, 0, &ids, &n, &err) == UTIL_OK) {
            free(ids);
            *estimated = 0;
            return (long)n;
        }
        free(ids);
    }
#endif
    *estimated = 1;
    return lint_tok_estimate(text, len);
}

int lint_tok_ids(lint_tok *t, const char *text, size_t len, int32_t **ids, size_t *n) {
    *ids = NULL;
    *n = 0;
    if (t->state == 0) load(t);
#if LINT_ENGINE_TOKENIZER
    if (t->state == 1) {
        int32_t *v = NULL;
        util_err err = {0};
        if (eng_tokenize(t->tk, text, len, 0, 0, &v, n, &err) != UTIL_OK) {
            free(v);
            return UTIL_EFORMAT;
        }
        *ids = v;
        return UTIL_OK;
    }
#else
    (void)text, (void)len;
#endif
    return UTIL_ENOTFOUND;
}

const char *lint_tok_source(lint_tok *t) {
    if (t->state == 0) load(t);
    return t->source;
}
