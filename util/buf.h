/* util/buf.h: a growable byte buffer (whole-file reading is util/fs.h).
 * Owns its memory (util_buf_release frees it); not thread-safe. */
#ifndef UTIL_BUF_H
#define UTIL_BUF_H

#include <stddef.h>

#include "err.h"

typedef struct util_buf {
    char *data; /* always NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
} util_buf;

void util_buf_init(util_buf *b);
void util_buf_release(util_buf *b);
int util_buf_reserve(util_buf *b, size_t extra);
int util_buf_append(util_buf *b, const void *p, size_t n);
int util_buf_puts(util_buf *b, const char *s);
int util_buf_printf(util_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the data to the caller (who frees it with free()) and resets b. */
char *util_buf_detach(util_buf *b, size_t *len);


#endif
