/* util/vec.c: the one growth rule for caller-typed arrays (doubling,
 * overflow-checked). Does not know the element type or the count. */
#include "vec.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int util_grow(void *array, size_t *cap, size_t need, size_t elem) {
    assert(elem > 0);
    if (need <= *cap) return UTIL_OK;
    size_t max = SIZE_MAX / elem; /* the most elements whose bytes fit a size_t */
    if (need > max) return UTIL_ENOMEM;
    size_t c = *cap ? *cap : 16;
    if (c > max) c = need;
    while (c < need) c = c > max / 2 ? need : c * 2;
    void *old;
    memcpy(&old, array, sizeof old); /* the caller's T *, whatever T is */
    void *p = realloc(old, c * elem);
    if (!p) return UTIL_ENOMEM;
    memcpy(array, &p, sizeof p);
    *cap = c;
    return UTIL_OK;
}
