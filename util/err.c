/* util/err.c: error context helpers. Formatting only; no I/O. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const util_err_names[UTIL_ECOUNT_] = {
    "ok",        "i/o error",   "malformed input", "out of memory", "invalid argument",
    "not found", "unsupported", "out of range",    "canceled",      "internal error",
};

const char *util_strerror(int code) {
    int i = -code;
    if (i < 0 || i >= UTIL_ECOUNT_) return "unknown error";
    return util_err_names[i];
}

int util_err_set(util_err *err, int code, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int util_err_wrap(util_err *err, const char *fmt, ...) {
    if (!err) return UTIL_EINTERNAL;
    char prefix[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    return err->code;
}

void util_err_clear(util_err *err) {
    if (!err) return;
    err->code = UTIL_OK;
    err->msg[0] = '\0';
}
