/* engine/unicode_tables.h: the generated Unicode tables (unicode_tables.c,
 * written by scripts/gen_unicode_tables.py): sorted code-point ranges, each
 * entry (first << 8) | an ENG_UC_* flag of unicode.h, and the flags of the
 * ASCII range. Data only; unicode.c answers questions about code points. */
#ifndef ENG_UNICODE_TABLES_H
#define ENG_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

extern const uint32_t eng_unicode_ranges[];
extern const size_t eng_unicode_nranges;
extern const uint16_t eng_unicode_ascii[128];

#endif
