/* linter/lint_tokens.h: token counts (lint_tokens.c): the engine's tokenizer
 * when a model is found, else a labelled estimate. Calls nothing else in
 * linter/; the rules pass sees it only through a lint_counter (lint_rules.h).
 * Private to linter/. */
#ifndef LINT_TOKENS_H
#define LINT_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

typedef struct lint_tok lint_tok;

int lint_tok_new(lint_tok **out, const char *model_path, int no_model, const char *exe_path);
void lint_tok_free(lint_tok *t);
long lint_tok_count(lint_tok *t, const char *text, size_t len, int *estimated);
const char *lint_tok_source(lint_tok *t);
/* Token ids (malloc'd, caller frees); UTIL_ENOTFOUND when no model is loaded. */
int lint_tok_ids(lint_tok *t, const char *text, size_t len, int32_t **ids, size_t *n);
long lint_tok_estimate(const char *text, size_t len);

#endif
