/* linter/lint_sniff.h: whether a walked file's text reads like a prompt
 * (lint_sniff.c), for the selections lint_config_select leaves to the text.
 * Private to linter/. */
#ifndef LINT_SNIFF_H
#define LINT_SNIFF_H

#include <stddef.h>

/* Whether the head of a file (the first 16 KiB are enough) reads like a
 * prompt: for LINT_SEL_CONTENT, instructions addressed to a model ("You are
 * ...", "the user", "you must", "respond", or the same in Chinese, Japanese,
 * Korean, German, French, Spanish, Portuguese, Russian; a task or role line,
 * or a rules heading with an answer line, in German, French, Spanish,
 * Portuguese, Italian, Dutch); for LINT_SEL_TEMPLATE, prose rather
 * than HTML, config or code; for LINT_SEL_DATA, the same instructions in the
 * string values of keys that name prompt text (system, prompt, template,
 * content, instructions, *_prompt, *_message ...); for LINT_SEL_DATA_PROSE,
 * the same in long values (a block scalar, a multi-line string, a line of
 * 80 bytes or more) of keys that name a whole prompt (system, prompt,
 * template, instructions, *_prompt, *_instructions ...), in a file that is
 * not a CI workflow, a compose file or a Kubernetes manifest. */
int lint_reads_like_prompt(const char *data, size_t len, int how);

#endif
