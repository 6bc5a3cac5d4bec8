/* util/vec.h: growing a caller-typed array (T *v; size_t n, cap) by doubling,
 * overflow-checked, so every "push" in the tree shares one growth rule.
 * Does not own, free or construct the elements, nor track the count: the
 * caller keeps v, n and cap in its own struct. Byte strings are util/buf.h. */
#ifndef UTIL_VEC_H
#define UTIL_VEC_H

#include <stddef.h>

/* Makes room for at least `need` elements of `elem` bytes in the array whose
 * pointer is at `array` (a T **: the address of the caller's T *v, which may
 * be NULL with *cap 0; realloc'd): nothing when need <= *cap, else the
 * capacity doubles (from 16) until need fits. Returns UTIL_OK, or UTIL_ENOMEM
 * when need * elem would overflow size_t or realloc fails, leaving the array
 * and *cap unchanged. Call it as util_grow(&s->v, &s->cap, s->n + 1,
 * sizeof *s->v); the pointer is read and written with memcpy, so any object
 * pointer type works without a cast through void **. The caller frees the
 * array with free(). elem must not be 0. */
int util_grow(void *array, size_t *cap, size_t need, size_t elem);

#endif
