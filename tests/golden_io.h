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

/* One line of a logits index (tests/golden/logits_index.tsv and its kin):
 * name, prompt ids, greedy ids, the llama.cpp top-1/top-2 margin per greedy
 * step, the logits file. */
typedef struct golden_row {
    char *name;
    int32_t *prompt, *greedy;
    size_t n_prompt, n_greedy;
    double *margins; /* n_greedy + 1 entries */
    char *logits_file;
} golden_row;

/* Reads up to max rows of tests/golden/<index>; returns how many (a missing
 * file is a failed check and 0). golden_rows_free releases them. */
int golden_rows_load(const char *index, golden_row *rows, int max);
void golden_rows_free(golden_row *rows, int n);

/* llama.cpp's flash-attention spread for prompt `name` from a spread file
 * (tests/golden/<file>: name, spread per line); 0 if unknown. */
double golden_spread(const char *file, const char *name);
/* max |a[i] - b[i]| over n values, in double. */
double golden_max_abs(const float *a, const float *b, int n);

#endif
