/* linter/lint_span.h: a volatile span of a prompt file and a growable vector
 * of them (lint_span.c): what detection finds and the rules read. Holds no
 * detection logic. Private to linter/. */
#ifndef LINT_SPAN_H
#define LINT_SPAN_H

#include <stddef.h>

typedef struct lint_span {
    size_t start, end; /* byte offsets into the file */
    int kind;          /* lint_kind */
    int vclass;        /* lint_vclass */
    int subday;        /* finer than a day (PL003) */
    const char *label; /* custom pattern name, or NULL */
    int rendered;      /* a literal only a rendered prompt holds per request (a
                        * branch, a pasted search result): in a committed
                        * AGENTS.md or SKILL.md it is the file's own fixed text */
    int cont;          /* a later line of a value that began on a line above (a
                        * pasted block): volatile, reported with that line */
} lint_span;

typedef struct lint_spanv {
    lint_span *v;
    size_t n, cap;
} lint_spanv;

int lint_spanv_push(lint_spanv *sv, const lint_span *s);
void lint_spanv_release(lint_spanv *sv);
/* Sorts sv by start, the longer of two spans that start together first. */
void lint_spanv_sort(lint_spanv *sv);
/* Gives p the class of q where q's is more volatile (vclass, kind, label),
 * and q's sub-day flag: q overlaps p and is merged into it. */
void lint_span_absorb_class(lint_span *p, const lint_span *q);

#endif
