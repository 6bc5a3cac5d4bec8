/* tests/helpers.c: the model opener and token helpers of tests/helpers.h. They
 * report through the runner's counters (tests/check.h) on the caller's line;
 * they hold no state between calls. */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* --- models ------------------------------------------------------------------ */

eng_model *th_open_model_with_at(const char *file, int line, const char *path, const eng_model_params *mp) {
    if (!path) path = check_model_path();
    if (!path) {
        check_fail_at(file, line, "the default model is missing: run 'make model'");
        return NULL;
    }
    eng_model *m = NULL;
    util_err err;
    int rc = eng_model_open(&m, path, mp, &err);
    if (rc == 0) {
        check_pass();
        return m;
    }
    check_fail_at(file, line, "open '%s' (threads %d, exact %d, device %s): %s", path, mp ? mp->n_threads : 0,
                  mp ? mp->exact : 0, mp && mp->device ? mp->device : "default", err.msg);
    return NULL;
}

eng_model *th_open_model_at(const char *file, int line, const char *path, int threads, int exact) {
    eng_model_params mp = {.n_threads = threads, .no_disk_cache = 1, .exact = exact};
    return th_open_model_with_at(file, line, path, &mp);
}

/* --- tokens ------------------------------------------------------------------ */

int32_t *th_tokenize_at(const char *file, int line, const eng_tokenizer *t, const char *text, int add_special,
                        int parse_special, size_t *n) {
    int32_t *ids = NULL;
    util_err err;
    *n = 0;
    int rc = eng_tokenize(t, text, strlen(text), add_special, parse_special, &ids, n, &err);
    if (rc == 0) {
        check_pass();
        return ids;
    }
    check_fail_at(file, line, "tokenize '%.60s': %s", text, err.msg);
    free(ids);
    *n = 0;
    return NULL;
}

int th_ids_equal(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && (na == 0 || (a && b && memcmp(a, b, na * sizeof *a) == 0));
}

size_t th_ids_agree(const int32_t *a, const int32_t *b, size_t n) {
    size_t k = 0;
    while (k < n && a[k] == b[k]) k++;
    return k;
}

void th_ids_str(char *out, size_t cap, const int32_t *ids, size_t n) {
    size_t w = 0;
    if (!cap) return;
    out[0] = '\0';
    for (size_t i = 0; i < n && w + 16 < cap; i++)
        w += (size_t)snprintf(out + w, cap - w, i ? " %d" : "%d", (int)ids[i]);
}

const char *th_gemma3_path(void) {
    static char buf[4096];
    const char *m = getenv("CACHET_GEMMA3_MODEL");
    if (m && *m) return m;
    snprintf(buf, sizeof buf, "%s/models/gemma-3-270m-q4_k_m.gguf", check_root());
    return access(buf, R_OK) == 0 ? buf : NULL;
}
