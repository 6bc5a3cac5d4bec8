/* tests/golden_io.c: see golden_io.h. */
#include "golden_io.h"

#include <stdio.h>
#include <stdlib.h>

#include "../util/buf.h"
#include "../util/fs.h"
#include "check.h"

char *golden_read(const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/golden/%s", check_root(), name);
    char *data = NULL;
    util_err err;
    if (util_read_file(&data, len, path, &err)) return NULL;
    return data;
}

int golden_fields(char *line, char **f, int max) {
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

int32_t *golden_ids(const char *s, size_t *n) {
    size_t cap = 16, k = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    while (ids && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) break;
        if (k == cap) {
            int32_t *t = realloc(ids, (cap *= 2) * sizeof *ids);
            if (!t) break;
            ids = t;
        }
        ids[k++] = (int32_t)v;
        s = end;
    }
    *n = k;
    return ids;
}
