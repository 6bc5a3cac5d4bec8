/* util/text.h: UTF-8 on byte strings: validation (strict: no overlong forms,
 * surrogates or code points past U+10FFFF), sanitizing (invalid bytes become
 * U+FFFD) and cutting at a character boundary. Bytes only: no normalization,
 * widths or locale; decoding to code points for tokenizers is the engine's
 * (engine/unicode.c, lenient like llama.cpp). Never prints. */
#ifndef UTIL_TEXT_H
#define UTIL_TEXT_H

#include <stddef.h>

#include "buf.h"

/* U+FFFD REPLACEMENT CHARACTER as UTF-8. */
#define UTIL_UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Bytes of the valid UTF-8 character at s[0..n) (1 to 4), or 0 when s does
 * not start with one (n == 0, a stray or missing continuation byte, an
 * overlong form, a surrogate, a code point past U+10FFFF, a cut sequence). */
size_t util_utf8_char_len(const char *s, size_t n);

/* Offset of the first byte that does not start a valid character, or len
 * when the whole of s[0..len) is valid UTF-8. */
size_t util_utf8_check(const char *s, size_t len);

/* Copies s[0..n) with every byte that does not start a valid character
 * replaced by U+FFFD; a NUL byte is replaced too, so the copy is a C string
 * holding all of the text. *out is malloc'd and NUL-terminated (the caller
 * frees it; on allocation failure it is an empty string or NULL when even
 * that fails), *out_len (may be NULL) its length. Returns the number of
 * replacements. */
size_t util_utf8_sanitize(const char *s, size_t n, char **out, size_t *out_len);

/* Appends s[0..n) to out as valid UTF-8, for JSON and other strict
 * readers: a multi-byte character cut at the end of s (a reply stopped by
 * max_tokens inside a character) becomes one U+FFFD, as Python's
 * bytes.decode("utf-8", "replace") makes it; every other byte that does not
 * start a valid character, and NUL, becomes one U+FFFD each (as in
 * util_utf8_sanitize). out stays NUL-terminated. Returns the number of
 * replacements, or (size_t)-1 when out of memory. */
size_t util_utf8_append_valid(util_buf *out, const char *s, size_t n);

/* The largest i <= limit (and <= n) at which s[0..i) ends on a character
 * boundary: a cut there splits no multi-byte sequence. */
size_t util_utf8_floor(const char *s, size_t n, size_t limit);

/* Length of s[0..n) without a trailing multi-byte sequence that is not
 * complete yet (a streamed text cut inside a character). Everything else,
 * invalid bytes included, is kept. */
size_t util_utf8_complete_len(const char *s, size_t n);

/* Keeps at most about limit bytes of s[0..n): its head (two thirds) and tail
 * around a line naming how many bytes were cut, each cut on a character
 * boundary. *out is malloc'd and NUL-terminated (the caller frees it),
 * *out_len (may be NULL) its length. Returns 1 if something was cut, 0 if
 * the text was copied whole, UTIL_ENOMEM. */
int util_text_truncate(const char *s, size_t n, size_t limit, char **out, size_t *out_len);

/* --- text shown on a terminal ------------------------------------------------ */

enum {
    UTIL_ESC_KEEP_LINES = 1, /* \n and \t are copied, not escaped */
    UTIL_ESC_ASCII_ONLY = 2, /* only C0 controls and DEL are escaped: for text
                                streamed in pieces that may cut a character */
};

/* Appends s[0..n) to out with everything that can move the cursor, erase,
 * recolour, reorder or hide text on a terminal made visible: C0 controls as
 * \r \n \t \e or \xNN, DEL as \x7f, C1 controls (U+0080..U+009F), bidirectional
 * embeddings, overrides and isolates, zero-width and invisible format
 * characters (U+200B..U+200F, U+2028..U+202E, U+2060..U+206F, U+FEFF) as
 * \u{XXXX}, and bytes that are not UTF-8 as \xNN. Backslashes are copied as
 * they are. Returns the number of escapes written, or (size_t)-1 when out of
 * memory. */
size_t util_text_escape(util_buf *out, const char *s, size_t n, int flags);

#endif
