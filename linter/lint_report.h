/* linter/lint_report.h: adding findings to a report and applying
 * suppression comments (lint_report.c; the rest of the report API is public,
 * in lint.h). Calls nothing else in linter/. Private to linter/. */
#ifndef LINT_REPORT_H
#define LINT_REPORT_H

#include <stddef.h>

#include "lint.h"

/* A suppression comment (found by lint_detect_directives). */
typedef struct lint_directive {
    size_t line;    /* 0-based line of the comment */
    int kind;       /* LINT_DIR_* */
    unsigned codes; /* bitmask; all ones when no code was given */
    char bad[32];   /* first unknown code, or "" */
    int alone;      /* the comment is the whole line */
    int used;
    size_t from, to; /* lines covered, inclusive (lint_suppress_ranges) */
} lint_directive;

enum { LINT_DIR_DISABLE = 0, LINT_DIR_ENABLE, LINT_DIR_NEXT_LINE, LINT_DIR_LINE, LINT_DIR_FILE };

/* Appends a copy of *f (its strings are copied; source may be NULL). The
 * caller fills every field, severity included. Returns UTIL_EINVAL for a rule
 * out of range or a missing file or message, UTIL_ENOMEM. */
int lint_report_add(lint_report *r, const lint_finding *f);
/* Fills each directive's covered lines (from, to) in a file of n_lines lines. */
void lint_suppress_ranges(lint_directive *d, size_t n, size_t n_lines);
/* Whether a finding of rule on line (0-based) is suppressed; marks the
 * directives that suppress it as used. */
int lint_suppressed(lint_directive *d, size_t n, size_t line, int rule);

#endif
