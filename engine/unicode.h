/* engine/unicode.h: the little Unicode the tokenizers and chat templates need:
 * UTF-8 decoding the way llama.cpp does it (lenient; bad bytes reported one at
 * a time), strict validation for streaming output, general-category groups from
 * a generated range table (Unicode 15.1, like llama.cpp) and whitespace sets.
 * No normalization, case mapping or grapheme logic. */
#ifndef ENG_UNICODE_H
#define ENG_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Category-group flags (one per code point) plus whitespace; same values as
 * llama.cpp's unicode_cpt_flags so its splitting rules carry over unchanged. */
enum {
    ENG_UC_UNDEFINED = 0x01,  /* Cn: unassigned */
    ENG_UC_NUMBER = 0x02,     /* Nd Nl No */
    ENG_UC_LETTER = 0x04,     /* Lu Ll Lt Lm Lo */
    ENG_UC_SEPARATOR = 0x08,  /* Zs Zl Zp */
    ENG_UC_MARK = 0x10,       /* Mn Mc Me */
    ENG_UC_PUNCT = 0x20,      /* P* */
    ENG_UC_SYMBOL = 0x40,     /* S* */
    ENG_UC_CONTROL = 0x80,    /* Cc Cf Cs Co */
    ENG_UC_WHITESPACE = 0x100 /* Python regex \s: 9-D 20 85 A0 1680 2000-200A 2028 2029 202F 205F 3000 */
};

#define ENG_UTF8_BAD 0xFFFFFFFFu

/* Decodes one code point at s[0..n) (n >= 1) the way llama.cpp's
 * unicode_cpt_from_utf8 does: the lead byte decides the length, continuation
 * bytes must be 10xxxxxx, overlong forms and surrogates are accepted. Returns
 * ENG_UTF8_BAD (and *adv = 1) for a byte that starts no such sequence, and also
 * for sequences above U+10FFFF (llama.cpp throws on those later). */
uint32_t eng_utf8_decode(const unsigned char *s, size_t n, size_t *adv);

/* Writes cp (<= 0x10FFFF) as UTF-8 to out; returns 1-4. */
int eng_utf8_encode(uint32_t cp, char out[4]);

/* Length a lead byte announces (llama.cpp's unicode_len_utf8: 1 for ASCII and
 * stray continuation bytes, 2/3/4 by the high nibble). */
static inline size_t eng_utf8_len_lead(unsigned char c) {
    static const unsigned char lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lut[c >> 4];
}

/* Strict UTF-8 check of the character starting at s[0] (n >= 1): returns its
 * length (1-4) if it is a complete valid character, 0 if s[0] can never start
 * one with the bytes that follow, and -1 if the n bytes are a valid but
 * incomplete prefix. */
int eng_utf8_check(const unsigned char *s, size_t n);

/* ENG_UC_* flags of cp; 0 above U+10FFFF. */
unsigned eng_unicode_flags(uint32_t cp);

/* Python str.isspace() (what Jinja's trim strips): the \s set plus U+001C-001F. */
int eng_unicode_is_pyspace(uint32_t cp);


#endif
