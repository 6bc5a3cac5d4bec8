/* tests/lint_matrix_cell.c: the buffer and the one-cell check the generated
 * matrices of rendered prompts share (lint_matrix_cell.h). */
#include "lint_matrix_cell.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../linter/lint.h"
#include "../linter/lint_registry.h"
#include "../linter/lint_report.h"
#include "check.h"

const char mx_intro[] = "You are Nova, a helpful assistant for Acme.\n\n";
const char mx_tail[] = "\n\n## Guidelines\n\n"
                       "- Answer the user's question directly and concisely.\n"
                       "- Use the tools provided when you need facts you do not have.\n"
                       "- Cite the files you read and never invent file names.\n"
                       "- Ask before running any command that deletes or overwrites data.\n"
                       "- Keep code examples short and explain each change you make.\n"
                       "- If a request is unclear, ask one clarifying question first.\n";

void mx_put(mx_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    if (k > 0) b->n += (size_t)k < sizeof b->s - b->n ? (size_t)k : sizeof b->s - b->n - 1;
}

int mx_lines(const mx_buf *b) {
    int n = 1;
    for (size_t i = 0; i < b->n; i++) n += b->s[i] == '\n';
    return n;
}

void mx_run_cell(lint_ctx *c, mx_stats *st, int verbose, const char *name, const mx_buf *b,
                 int expect_error) {
    lint_report rep;
    util_err err = {0};
    lint_report_init(&rep);
    int rc = lint_check_buffer(c, &rep, "system_prompt.md", "system_prompt.md", b->s, b->n, &err);
    CHECK_MSG(rc == 0, "lint '%s': %s", name, err.msg);
    int near = 0, any = 0, at = 0;
    for (size_t i = 0; i < rep.n; i++) {
        const lint_finding *f = &rep.items[i];
        if (f->severity != LINT_ERROR) continue;
        if (!any) at = f->line;
        any = 1;
        if (f->rule == LINT_R_VOLATILE_BEFORE_STABLE && f->line >= b->vline - 1 && f->line <= b->vline + 1)
            near = 1;
    }
    st->cells++;
    if (expect_error) {
        st->pos++;
        if (!near) st->miss_pos++;
    } else {
        st->neg++;
        if (any) st->miss_neg++;
    }
    if (expect_error ? !near : any) {
        const char *line = b->s;
        for (int l = 1; l < b->vline && line; l++) {
            line = strchr(line, '\n');
            if (line) line++;
        }
        int ll = line ? (int)strcspn(line, "\n") : 0;
        fprintf(stderr, "  matrix miss %-36s %s (line %d, want %d): %.*s\n", name,
                expect_error ? (any ? "error elsewhere" : "no error") : "error", at, b->vline, ll,
                line ? line : "");
        if (verbose) fprintf(stderr, "-----\n%s\n-----\n", b->s);
    }
    lint_report_release(&rep);
}
