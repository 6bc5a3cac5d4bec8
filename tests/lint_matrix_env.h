/* tests/lint_matrix_env.h: a generated coverage matrix of rendered environment
 * values (dates, times, zones, places, OS, shell, paths, branches, names) in
 * many formats, labels, languages and wrappers, before fixed instructions
 * (PL001 expected) or last and as examples (none expected). Run from the
 * lint suite (test_lint.c); no files, no model. */
#ifndef LINT_MATRIX_ENV_H
#define LINT_MATRIX_ENV_H

/* Lints every cell, prints the missed ones (with -v: all counts), and checks
 * that none is missed. */
void lint_matrix_env_check(void);

#endif
