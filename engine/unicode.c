/* engine/unicode.c: UTF-8 decoding/encoding (lenient like llama.cpp, and a
 * strict check for streaming output), category-group lookup over the generated
 * range table, and the whitespace sets. Knows nothing about tokens. */
#include "unicode.h"
#include "unicode_tables.h"

uint32_t eng_utf8_decode(const unsigned char *s, size_t n, size_t *adv) {
    unsigned char c = s[0];
    *adv = 1;
    if (c < 0x80) return c;
    if (!(c & 0x40)) return ENG_UTF8_BAD; /* stray continuation byte */
    size_t len;
    uint32_t cp;
    if (!(c & 0x20)) {
        len = 2;
        cp = c & 0x1f;
    } else if (!(c & 0x10)) {
        len = 3;
        cp = c & 0x0f;
    } else if (!(c & 0x08)) {
        len = 4;
        cp = c & 0x07;
    } else {
        return ENG_UTF8_BAD; /* F8-FF */
    }
    if (n < len) return ENG_UTF8_BAD;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return ENG_UTF8_BAD;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* llama.cpp decodes these but then throws when re-encoding; treat the lead
     * byte as invalid instead (documented deviation, never seen in real text) */
    if (cp > 0x10FFFF) return ENG_UTF8_BAD;
    *adv = len;
    return cp;
}

int eng_utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | ((cp >> 18) & 0x07));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

int eng_utf8_check(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* no overlong forms */
        else if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -1;
        unsigned char b = s[i];
        if (i == 1 ? (b < lo || b > hi) : (b & 0xc0) != 0x80) return 0;
    }
    return len;
}

unsigned eng_unicode_flags(uint32_t cp) {
    if (cp < 0x80) return eng_unicode_ascii[cp];
    if (cp > 0x10FFFF) return 0;
    unsigned ws = 0;
    switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: ws = ENG_UC_WHITESPACE; break;
    default:
        if (cp >= 0x2000 && cp <= 0x200A) ws = ENG_UC_WHITESPACE;
    }
    /* last range whose first code point is <= cp */
    size_t lo = 0, hi = eng_unicode_nranges;
    uint32_t key = (cp << 8) | 0xff;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (eng_unicode_ranges[mid] <= key)
            lo = mid;
        else
            hi = mid;
    }
    return (eng_unicode_ranges[lo] & 0xff) | ws;
}

int eng_unicode_is_pyspace(uint32_t cp) {
    if (cp >= 0x1c && cp <= 0x1f) return 1;
    return (eng_unicode_flags(cp) & ENG_UC_WHITESPACE) != 0;
}
