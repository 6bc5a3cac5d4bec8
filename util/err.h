/* util/err.h: the one error enum and the error context every fallible call fills.
 * Codes are returned unchanged up the stack; the detailed message lives in the
 * caller's util_err, never in a global. Does not print or exit. */
#ifndef UTIL_ERR_H
#define UTIL_ERR_H

#include <stddef.h>

typedef enum util_status {
    UTIL_OK = 0,
    UTIL_EIO = -1,          /* open/read/write/mmap failed */
    UTIL_EFORMAT = -2,      /* malformed input (file, JSON, UTF-8) */
    UTIL_ENOMEM = -3,       /* allocation failed or budget exceeded */
    UTIL_EINVAL = -4,       /* bad argument or option value */
    UTIL_ENOTFOUND = -5,    /* key, tensor, file or token not present */
    UTIL_EUNSUPPORTED = -6, /* valid but not implemented (quant type, arch) */
    UTIL_ERANGE = -7,       /* value out of range (context length, index) */
    UTIL_ECANCELED = -8,    /* stopped by the caller (Ctrl-C, callback) */
    UTIL_EINTERNAL = -9,    /* a bug: invariant broken */
    UTIL_ECOUNT_ = 10
} util_status;

typedef struct util_err {
    int code;
    char msg[1024];
} util_err;

/* Sets err (if non-NULL) to code and a printf-style message; returns code so
 * callers can write `return util_err_set(err, UTIL_EIO, "...")`. */
int util_err_set(util_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with more context: "outer: inner". */
int util_err_wrap(util_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void util_err_clear(util_err *err);

/* Static name of a code ("i/o error", ...); never NULL. */
const char *util_strerror(int code);

#endif
