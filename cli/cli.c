/* cli/cli.c: option parsing helpers and default paths for the cachet CLI. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/engine.h"
#include "../util/parse.h"
#include "../util/path.h"
#include "../util/text.h"

int cli_json_puts(const cJSON *o) {
    char *s = cJSON_PrintUnformatted(o);
    if (!s) return CLI_EXIT_FAIL;
    size_t n = strlen(s);
    char *v = NULL;
    /* JSON's structure is ASCII: only bytes inside strings can be replaced */
    if (util_utf8_check(s, n) != n) util_utf8_sanitize(s, n, &v, &n);
    fwrite(v ? v : s, 1, n, stdout);
    fputc('\n', stdout);
    free(v);
    free(s);
    return 0;
}

int cli_model_path(char *out, size_t cap, const char *given) {
    util_err err;
    if (util_model_find(out, cap, given, &err) == UTIL_OK) return 0;
    if (out[0])
        fprintf(stderr, "cachet: %s\n", err.msg); /* a given path: it names it */
    else
        fprintf(stderr,
                "cachet: %s; pass --model PATH or set CACHET_MODEL (in the source tree, "
                "'make model' fetches the default model)\n",
                err.msg);
    return CLI_EXIT_FAIL;
}

int cli_data_dir(char *out, size_t cap, const char *given) {
    util_err err;
    if (util_data_dir_find(out, cap, given, &err) == UTIL_OK) return 0;
    fprintf(stderr, "cachet: %s%s\n", err.msg, out[0] ? "" : "; pass --data-dir DIR or set CACHET_DATA");
    return CLI_EXIT_FAIL;
}

int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "cachet: option '%s': '%s' is not an integer in [%ld, %ld]\n", opt, s, lo, hi);
        return CLI_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_float(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "cachet: option '%s': '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return CLI_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_size(const char *opt, const char *s, uint64_t *out) {
    util_err err;
    uint64_t v = 0;
    if (util_parse_size(s, &v, NULL, &err)) {
        fprintf(stderr,
                "cachet: option '%s': '%s' is not a size (%s); a size looks like 512MiB, 2GiB, "
                "1.5GB, 256M or 1048576 (bytes)\n",
                opt, s, err.msg);
        return CLI_EXIT_USAGE;
    }
    if (v == 0) {
        fprintf(stderr, "cachet: option '%s': the size must be more than 0 bytes\n", opt);
        return CLI_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

int cli_parse_device(const char **out, const char *given) {
    const char *src = "option '--device'", *s = given;
    if (!s) {
        s = getenv("CACHET_DEVICE");
        src = "CACHET_DEVICE";
        if (!s || !*s) s = "auto";
    }
    eng_device dev;
    util_err derr;
    if (eng_device_parse(&dev, s, &derr) != UTIL_OK) {
        fprintf(stderr, "cachet: %s: '%s' is not a device; expected auto, cpu, cuda or cuda:N (N in 0..64)\n",
                src, s);
        return CLI_EXIT_USAGE;
    }
    *out = s;
    return 0;
}
