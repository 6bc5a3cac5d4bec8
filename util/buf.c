/* util/buf.c: growable buffer and file reading. No formatting beyond printf. */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

void util_buf_init(util_buf *b) { memset(b, 0, sizeof *b); }

void util_buf_release(util_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

int util_buf_reserve(util_buf *b, size_t extra) {
    if (extra > (size_t)-1 - b->len - 1) return UTIL_ENOMEM;
    return util_grow(&b->data, &b->cap, b->len + extra + 1, 1);
}

int util_buf_append(util_buf *b, const void *p, size_t n) {
    int rc = util_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return UTIL_OK;
}

int util_buf_puts(util_buf *b, const char *s) { return util_buf_append(b, s, strlen(s)); }

int util_buf_printf(util_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return UTIL_EINVAL;
    int rc = util_buf_reserve(b, (size_t)n);
    if (rc) return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return UTIL_OK;
}

char *util_buf_detach(util_buf *b, size_t *len) {
    if (!b->data && util_buf_reserve(b, 0)) return NULL;
    if (b->len == 0) b->data[0] = '\0';
    char *p = b->data;
    if (len) *len = b->len;
    memset(b, 0, sizeof *b);
    return p;
}
