/* util/text.c: UTF-8 validation, sanitizing and boundary cuts (see text.h).
 * One implementation for the agent, the server, the command line and the
 * linter. */
#include "text.h"

#include <stdlib.h>

#include "buf.h"
#include "err.h"

static int is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Bytes a lead byte announces (1 to 4), or 0 for a byte no character starts with. */
static size_t lead_len(unsigned char c) {
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return 2;
    if (c >= 0xE0 && c <= 0xEF) return 3;
    if (c >= 0xF0 && c <= 0xF4) return 4;
    return 0;
}

size_t util_utf8_char_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return 0;
    size_t k = lead_len(u[0]);
    if (k <= 1 || k > n) return k == 1 ? 1 : 0;
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    unsigned cp = u[0] & (0x7Fu >> k);
    for (size_t i = 1; i < k; i++) {
        if (!is_cont(u[i])) return 0;
        cp = (cp << 6) | (u[i] & 0x3Fu);
    }
    if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return k;
}

size_t util_utf8_check(const char *s, size_t len) {
    for (size_t i = 0; i < len;) {
        size_t k = util_utf8_char_len(s + i, len - i);
        if (k == 0) return i;
        i += k;
    }
    return len;
}

size_t util_utf8_sanitize(const char *s, size_t n, char **out, size_t *out_len) {
    util_buf b;
    util_buf_init(&b);
    size_t bad = 0;
    int rc = util_buf_reserve(&b, n);
    for (size_t i = 0; i < n && !rc;) {
        size_t k = util_utf8_char_len(s + i, n - i);
        if (k == 0 || (k == 1 && s[i] == '\0')) {
            rc = util_buf_append(&b, UTIL_UTF8_REPLACEMENT, 3);
            bad++;
            i++;
        } else {
            rc = util_buf_append(&b, s + i, k);
            i += k;
        }
    }
    if (rc) util_buf_release(&b);
    *out = util_buf_detach(&b, out_len);
    if (!*out && out_len) *out_len = 0;
    return bad;
}

size_t util_utf8_append_valid(util_buf *out, const char *s, size_t n) {
    size_t whole = util_utf8_complete_len(s, n), bad = 0;
    int rc = util_buf_reserve(out, n + 4);
    for (size_t i = 0; i < whole && !rc;) {
        size_t k = util_utf8_char_len(s + i, whole - i);
        if (k == 0 || (k == 1 && s[i] == '\0')) {
            rc = util_buf_append(out, UTIL_UTF8_REPLACEMENT, 3);
            bad++;
            i++;
        } else {
            size_t j = i + k; /* a run of valid characters copied at once */
            while (j < whole && (k = util_utf8_char_len(s + j, whole - j)) && !(k == 1 && s[j] == '\0'))
                j += k;
            rc = util_buf_append(out, s + i, j - i);
            i = j;
        }
    }
    if (!rc && whole < n) {
        /* the cut tail: one character was on its way, one replacement */
        rc = util_buf_append(out, UTIL_UTF8_REPLACEMENT, 3);
        bad++;
    }
    if (!rc) rc = util_buf_append(out, "", 0);
    return rc ? (size_t)-1 : bad;
}

size_t util_utf8_floor(const char *s, size_t n, size_t limit) {
    if (limit >= n) return n;
    size_t i = limit;
    while (i > 0 && is_cont((unsigned char)s[i])) i--;
    return i;
}

size_t util_utf8_complete_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    /* a character is at most 4 bytes: look at the last 3 for its lead */
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = u[n - back];
        if (is_cont(c)) continue;
        size_t k = lead_len(c);
        return k > back ? n - back : n;
    }
    return n;
}

int util_text_truncate(const char *s, size_t n, size_t limit, char **out, size_t *out_len) {
    util_buf b;
    util_buf_init(&b);
    int cut = n > limit, rc;
    if (!cut) {
        rc = util_buf_append(&b, s, n);
    } else {
        size_t head = util_utf8_floor(s, n, limit * 2 / 3);
        size_t tail = util_utf8_floor(s, n, n - (limit - limit * 2 / 3));
        if (tail < head) tail = head;
        rc = util_buf_append(&b, s, head);
        if (!rc) rc = util_buf_printf(&b, "\n[... %zu bytes cut by cachet ...]\n", tail - head);
        if (!rc) rc = util_buf_append(&b, s + tail, n - tail);
    }
    if (!rc) rc = util_buf_reserve(&b, 0);
    if (rc) {
        util_buf_release(&b);
        *out = NULL;
        if (out_len) *out_len = 0;
        return UTIL_ENOMEM;
    }
    *out = util_buf_detach(&b, out_len);
    return cut;
}

/* --- text shown on a terminal ------------------------------------------------------- */

/* 1 for the code points a terminal acts on or shows as nothing. */
static int invisible_cp(unsigned cp) {
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF;
}

static unsigned decode(const unsigned char *u, size_t k) {
    if (k == 1) return u[0];
    unsigned cp = u[0] & (0x7Fu >> k);
    for (size_t i = 1; i < k; i++) cp = (cp << 6) | (u[i] & 0x3Fu);
    return cp;
}

size_t util_text_escape(util_buf *out, const char *s, size_t n, int flags) {
    const unsigned char *u = (const unsigned char *)s;
    size_t esc = 0, i = 0;
    int rc = 0;
    while (i < n && !rc) {
        unsigned char c = u[i];
        if (c < 0x20 || c == 0x7F) {
            if ((flags & UTIL_ESC_KEEP_LINES) && (c == '\n' || c == '\t'))
                rc = util_buf_append(out, s + i, 1);
            else {
                esc++;
                rc = c == '\r'   ? util_buf_puts(out, "\\r")
                     : c == '\n' ? util_buf_puts(out, "\\n")
                     : c == '\t' ? util_buf_puts(out, "\\t")
                     : c == 0x1B ? util_buf_puts(out, "\\e")
                                 : util_buf_printf(out, "\\x%02x", c);
            }
            i++;
            continue;
        }
        if (c < 0x80 || (flags & UTIL_ESC_ASCII_ONLY)) {
            size_t j = i + 1; /* a run of bytes copied as they are */
            while (j < n && u[j] >= 0x20 && u[j] != 0x7F && (u[j] < 0x80 || (flags & UTIL_ESC_ASCII_ONLY)))
                j++;
            rc = util_buf_append(out, s + i, j - i);
            i = j;
            continue;
        }
        size_t k = util_utf8_char_len(s + i, n - i);
        if (k == 0) {
            esc++;
            rc = util_buf_printf(out, "\\x%02x", c);
            i++;
        } else if (invisible_cp(decode(u + i, k))) {
            esc++;
            rc = util_buf_printf(out, "\\u{%x}", decode(u + i, k));
            i += k;
        } else {
            rc = util_buf_append(out, s + i, k);
            i += k;
        }
    }
    if (!rc) rc = util_buf_append(out, "", 0);
    return rc ? (size_t)-1 : esc;
}
