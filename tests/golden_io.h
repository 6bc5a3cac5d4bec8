/* tests/golden_io.h: readers for the committed golden files (tests/golden/):
 * TSV lines, space-separated id lists, raw float32 files. Test-only. */
#ifndef GOLDEN_IO_H
#define GOLDEN_IO_H

#include <stddef.h>
#include <stdint.h>

/* Reads tests/golden/<name> under check_root(); NULL if missing. Caller frees. */
char *golden_read(const char *name, size_t *len);
/* Splits a line in place at tabs into at most max fields; returns the count. */
int golden_fields(char *line, char **f, int max);
/* Parses space-separated integers; returns a malloc'd array and its length. */
int32_t *golden_ids(const char *s, size_t *n);

#endif
