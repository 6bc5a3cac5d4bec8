/* linter/lint_ctx.h: the lint context's insides and the upward config search
 * (lint_ctx.c), for the modules above it (walk, git, diff). The context owns
 * the patterns, configs and tokenizer and runs the rules pass; nothing below
 * it calls back into it. Private to linter/. */
#ifndef LINT_CTX_H
#define LINT_CTX_H

#include <stddef.h>

#include "lint.h"
#include "lint_config.h"
#include "lint_detect.h"
#include "lint_tokens.h"

typedef struct lint_cfg_cache_entry {
    char *dir;
    lint_config *cfg; /* borrowed from owned[] or the defaults */
} lint_cfg_cache_entry;

struct lint_ctx {
    lint_options opt;
    lint_detect *det;
    lint_tok *tok;
    lint_config *defaults;
    lint_config *forced;
    lint_config **owned;
    size_t n_owned, cap_owned;
    lint_cfg_cache_entry *cache;
    size_t n_cache, cap_cache;
};

/* The size cap for files governed by cfg: --max-file-size, else the config's
 * max_file_size, else LINT_DEFAULT_MAX_FILE_SIZE. *knob (may be NULL) names
 * where it came from, for messages. */
size_t lint_ctx_file_cap(const lint_ctx *ctx, const lint_config *cfg, const char **knob);

/* Config for a file path (searching upward, cached); *rel gets the path
 * relative to the config's directory (malloc'd, caller frees). */
int lint_ctx_config_for(lint_ctx *ctx, const char *path, lint_config **cfg, char **rel, util_err *err);

#endif
