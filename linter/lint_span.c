/* linter/lint_span.c: the span vector's growth and release. */
#include "lint_span.h"

#include <stdlib.h>
#include <string.h>

#include "../util/err.h"

int lint_spanv_push(lint_spanv *sv, const lint_span *s) {
    if (sv->n == sv->cap) {
        size_t nc = sv->cap ? sv->cap * 2 : 32;
        lint_span *p = realloc(sv->v, nc * sizeof *p);
        if (!p) return UTIL_ENOMEM;
        sv->v = p;
        sv->cap = nc;
    }
    sv->v[sv->n++] = *s;
    return UTIL_OK;
}

void lint_spanv_release(lint_spanv *sv) {
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}
