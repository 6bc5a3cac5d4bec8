/* tests/lint_matrix.h: the generated template-field matrix (tests/lint_matrix.c)
 * run by test_lint.c. Not a suite of its own. */
#ifndef LINT_MATRIX_H
#define LINT_MATRIX_H

/* Lints every generated cell; *cells and *wrong count them and each wrong cell
 * is printed to stderr (verbose: with its text). Returns 0, or -1 when the
 * linter context cannot be made. */
int lint_matrix_check(int verbose, int *cells, int *wrong);

#endif
