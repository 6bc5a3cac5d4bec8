/* util/parse.h: parsing of human-entered quantities shared by the command
 * lines: memory sizes with decimal (GB = 10^9) or binary (GiB = 2^30) units. */
#ifndef UTIL_PARSE_H
#define UTIL_PARSE_H

#include <stdint.h>

#include "err.h"

/* Parses "80GB", "80GiB", "1.5 MiB", "4096" (bytes), "512M" (bare K/M/G/T =
 * binary, as in most CLI tools). *binary tells which base the unit used (1 for
 * KiB..TiB and bare letters, 0 for kB..TB and plain bytes). */
int util_parse_size(const char *s, uint64_t *out, int *binary, util_err *err);

#endif
