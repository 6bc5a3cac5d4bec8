/* linter/lint_span.c: the span vector's growth and release. */
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

void lint_spanv_release(lint_spanv *sv) {
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}
