/* tests/golden_io.c: see golden_io.h. */
#include "golden_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int golden_rows_load(const char *index, golden_row *rows, int max) {
    size_t len;
    char *idx = golden_read(index, &len);
    if (!idx) {
        CHECK_MSG(0, "tests/golden/%s missing", index);
        return 0;
    }
    int k = 0;
    char *save = NULL;
    for (char *line = strtok_r(idx, "\n", &save); line && k < max; line = strtok_r(NULL, "\n", &save)) {
        char *f[8];
        if (line[0] == '#' || golden_fields(line, f, 8) < 7) continue;
        golden_row *r = &rows[k++];
        r->name = strdup(f[0]);
        r->prompt = golden_ids(f[1], &r->n_prompt);
        r->greedy = golden_ids(f[2], &r->n_greedy);
        r->logits_file = strdup(f[5]);
        size_t nm = 0;
        r->margins = calloc(r->n_greedy + 1, sizeof *r->margins);
        for (char *p = f[6]; *p && nm < r->n_greedy; nm++) {
            char *end;
            r->margins[nm] = strtod(p, &end);
            if (end == p) break;
            p = end;
        }
    }
    free(idx);
    return k;
}

void golden_rows_free(golden_row *rows, int n) {
    for (int i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].prompt);
        free(rows[i].greedy);
        free(rows[i].margins);
        free(rows[i].logits_file);
    }
}

double golden_spread(const char *file, const char *name) {
    size_t len;
    char *data = golden_read(file, &len);
    double v = 0;
    char *save = NULL;
    for (char *line = data ? strtok_r(data, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        char *f[3];
        if (line[0] != '#' && golden_fields(line, f, 3) == 3 && strcmp(f[0], name) == 0)
            v = strtod(f[1], NULL);
    }
    free(data);
    return v;
}

double golden_max_abs(const float *a, const float *b, int n) {
    double mx = 0;
    for (int i = 0; i < n; i++) mx = fmax(mx, fabs((double)a[i] - b[i]));
    return mx;
}
