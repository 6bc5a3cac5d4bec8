/* tests/lint_matrix_cell.h: what the generated matrices of rendered prompts
 * (lint_matrix_env.c, lint_matrix_user.c) share: a text buffer that marks the
 * line of its value, and linting one cell against what it expects. Not a
 * generator itself. */
#ifndef LINT_MATRIX_CELL_H
#define LINT_MATRIX_CELL_H

#include <stddef.h>

#include "../linter/lint_ctx.h"

typedef struct mx_buf {
    char s[2048];
    size_t n;
    int vline; /* 1-based line of the value (or of a block's first content) */
} mx_buf;

typedef struct mx_stats {
    int cells, pos, neg, miss_pos, miss_neg;
} mx_stats;

/* The opening every cell starts with, and the fixed instructions a value
 * stands before (its "before" position). */
extern const char mx_intro[];
extern const char mx_tail[];

/* Appends printf-style text (cut at the buffer's end). */
void mx_put(mx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The line the next text appended to b starts on (1-based). */
int mx_lines(const mx_buf *b);
/* Lints b's text as system_prompt.md and counts the cell in st: when
 * expect_error, a PL001 error must sit within a line of b->vline; otherwise
 * no error may be reported. A wrong cell is printed to stderr (verbose: with
 * its whole text). */
void mx_run_cell(lint_ctx *c, mx_stats *st, int verbose, const char *name, const mx_buf *b, int expect_error);

#endif
