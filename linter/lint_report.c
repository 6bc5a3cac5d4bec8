/* linter/lint_report.c: the findings of a run: adding one (strings copied),
 * sorting for stable output, counting by severity, and suppression comments
 * (the lines each one covers, whether a finding on a line is suppressed).
 * Does not decide what is a finding (lint_rules.c) and never prints
 * (lint_output.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"
#include "lint_report.h"

/* --- findings ------------------------------------------------------------------ */

void lint_report_init(lint_report *r) { memset(r, 0, sizeof *r); }

void lint_report_release(lint_report *r) {
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].file);
        free(r->items[i].message);
        free(r->items[i].source);
    }
    free(r->items);
    for (size_t i = 0; i < r->n_notes; i++) free(r->notes[i]);
    free(r->notes);
    memset(r, 0, sizeof *r);
}

const char *lint_skip_name(int kind) {
    static const char *const k[LINT_SKIP_COUNT] = {"not prompts (by name, extension or content)",
                                                   "excluded by config",
                                                   "ignored by role",
                                                   "binary",
                                                   "too large",
                                                   "not regular files",
                                                   "symlinks leaving the tree",
                                                   "documents (docs/, adr/ ...) not addressed to a model"};
    return kind >= 0 && kind < LINT_SKIP_COUNT ? k[kind] : "?";
}

static int add_note(lint_report *r, const char *fmt, va_list ap) {
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    char **p = realloc(r->notes, (r->n_notes + 1) * sizeof *p);
    if (!p) return UTIL_ENOMEM;
    r->notes = p;
    if (!(p[r->n_notes] = strdup(buf))) return UTIL_ENOMEM;
    r->n_notes++;
    return UTIL_OK;
}

int lint_report_note(lint_report *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = add_note(r, fmt, ap);
    va_end(ap);
    return rc;
}

int lint_report_skip(lint_report *r, int kind, const char *fmt, ...) {
    if (kind < 0 || kind >= LINT_SKIP_COUNT) return UTIL_EINVAL;
    r->skipped[kind]++;
    r->files_skipped++;
    if (!fmt) return UTIL_OK;
    va_list ap;
    va_start(ap, fmt);
    int rc = add_note(r, fmt, ap);
    va_end(ap);
    return rc;
}

int lint_report_add(lint_report *r, const lint_finding *f) {
    if (f->rule < 0 || f->rule >= LINT_R_COUNT || !f->file || !f->message) return UTIL_EINVAL;
    if (util_grow(&r->items, &r->cap, r->n + 1, sizeof *r->items)) return UTIL_ENOMEM;
    lint_finding *x = &r->items[r->n];
    *x = *f;
    x->file = strdup(f->file);
    x->message = strdup(f->message);
    x->source = f->source ? strdup(f->source) : NULL;
    if (!x->file || !x->message || (f->source && !x->source)) {
        free(x->file);
        free(x->message);
        free(x->source);
        return UTIL_ENOMEM;
    }
    if (f->tokens_lost >= 0 && f->tokens_estimated) r->tokens_estimated = 1;
    r->n++;
    return UTIL_OK;
}

static int finding_cmp(const void *x, const void *y) {
    const lint_finding *a = x, *b = y;
    int c = strcmp(a->file, b->file);
    if (c) return c;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->column != b->column) return a->column < b->column ? -1 : 1;
    return a->rule - b->rule;
}

void lint_report_sort(lint_report *r) {
    if (r->n > 1) qsort(r->items, r->n, sizeof *r->items, finding_cmp);
}

size_t lint_report_count(const lint_report *r, lint_severity s) {
    size_t n = (unsigned)s < 3 ? r->unlisted[s] : 0;
    for (size_t i = 0; i < r->n; i++) n += r->items[i].severity == s;
    return n;
}

/* --- suppressions ------------------------------------------------------------------ */

void lint_suppress_ranges(lint_directive *d, size_t n, size_t n_lines) {
    for (size_t i = 0; i < n; i++) {
        switch (d[i].kind) {
        case LINT_DIR_FILE: d[i].from = 0, d[i].to = n_lines; break;
        case LINT_DIR_LINE: d[i].from = d[i].to = d[i].line; break;
        case LINT_DIR_NEXT_LINE: d[i].from = d[i].to = d[i].line + 1; break;
        case LINT_DIR_ENABLE: d[i].from = 1, d[i].to = 0; break; /* covers nothing */
        default:
            if (!d[i].alone) { /* trailing comment: this line only */
                d[i].from = d[i].to = d[i].line;
                break;
            }
            d[i].from = d[i].line;
            d[i].to = n_lines;
            for (size_t k = i + 1; k < n; k++)
                if (d[k].kind == LINT_DIR_ENABLE && (d[k].codes & d[i].codes)) {
                    d[i].to = d[k].line;
                    break;
                }
        }
    }
}

int lint_suppressed(lint_directive *d, size_t n, size_t line, int rule) {
    int hit = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i].kind != LINT_DIR_ENABLE && line >= d[i].from && line <= d[i].to &&
            (d[i].codes & (1u << rule))) {
            d[i].used = 1;
            hit = 1;
        }
    return hit;
}
