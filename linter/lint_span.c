/* linter/lint_span.c: the span vector's growth, order and release, and how
 * one span takes the class of another merged into it. */
#include "lint_span.h"

#include <stdlib.h>
#include <string.h>

#include "../util/err.h"
#include "../util/vec.h"

int lint_spanv_push(lint_spanv *sv, const lint_span *s) {
    if (util_grow(&sv->v, &sv->cap, sv->n + 1, sizeof *sv->v)) return UTIL_ENOMEM;
    sv->v[sv->n++] = *s;
    return UTIL_OK;
}

static int span_cmp(const void *x, const void *y) {
    const lint_span *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->end < b->end ? 1 : a->end > b->end ? -1 : 0;
}

void lint_spanv_sort(lint_spanv *sv) {
    if (sv->n > 1) qsort(sv->v, sv->n, sizeof *sv->v, span_cmp);
}

void lint_span_absorb_class(lint_span *p, const lint_span *q) {
    if (q->vclass > p->vclass) {
        p->vclass = q->vclass;
        p->kind = q->kind;
        p->label = q->label;
    }
    p->subday |= q->subday;
}

void lint_spanv_release(lint_spanv *sv) {
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}
