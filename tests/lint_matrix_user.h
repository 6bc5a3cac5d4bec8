/* tests/lint_matrix_user.h: a generated coverage matrix of per-user and
 * per-request content blocks in rendered prompts (memories, a profile,
 * search results, a conversation summary, open files, tool output, custom
 * instructions, a recap, the task, calendar and e-mails) in several
 * wrappers, before fixed instructions (PL001 expected) or last, and the same
 * shapes as examples or fixed text (none expected). Run from the lint suite
 * (test_lint.c); no files, no model. */
#ifndef LINT_MATRIX_USER_H
#define LINT_MATRIX_USER_H

/* Lints every cell; *cells and *wrong count them and each wrong cell is
 * printed to stderr (verbose: with its text). Returns 0, or -1 when the
 * linter context cannot be made. */
int lint_matrix_user_check(int verbose, int *cells, int *wrong);

#endif
