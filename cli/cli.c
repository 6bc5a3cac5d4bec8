/* cli/cli.c: option parsing helpers and default paths for the cachet CLI. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AGENT_DEFAULT_MODEL "SmolLM2-135M-Instruct.Q4_1.gguf"

const char *agent_model_path(const char *explicit_path, char *buf, size_t cap) {
    if (explicit_path && *explicit_path) {
        snprintf(buf, cap, "%s", explicit_path);
        return buf;
    }
    const char *env = getenv("CACHET_MODEL");
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
        return buf;
    }
    snprintf(buf, cap, "models/%s", AGENT_DEFAULT_MODEL);
    if (access(buf, R_OK) == 0) return buf;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char cand[PATH_MAX + 64];
            snprintf(cand, sizeof cand, "%s/../models/%s", exe, AGENT_DEFAULT_MODEL);
            if (access(cand, R_OK) == 0) {
                snprintf(buf, cap, "%s", cand);
                return buf;
            }
        }
    }
    snprintf(buf, cap, "models/%s", AGENT_DEFAULT_MODEL);
    return buf;
}

void agent_report_model_error(const char *path, const util_err *err) {
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "cachet: model file '%s' not found", path);
        if (strstr(path, AGENT_DEFAULT_MODEL))
            fprintf(stderr, "; run 'make model' to fetch the default model");
        else
            fprintf(stderr, "; pass --model PATH or set CACHET_MODEL");
        fputc('\n', stderr);
        return;
    }
    fprintf(stderr, "cachet: %s\n", err->msg);
}

int agent_parse_int(const char *opt, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "cachet: option '%s': '%s' is not an integer in [%ld, %ld]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int agent_parse_float(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "cachet: option '%s': '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* The names the engine's --device takes; the number is bounded as there. */
static int device_ok(const char *s) {
    if (strcmp(s, "auto") == 0 || strcmp(s, "cpu") == 0 || strcmp(s, "cuda") == 0) return 1;
    if (strncmp(s, "cuda:", 5) != 0) return 0;
    const char *d = s + 5;
    size_t n = strspn(d, "0123456789");
    /* digits only (no sign, space or '0x'), at most 64 */
    return n > 0 && n <= 2 && d[n] == '\0' && strtol(d, NULL, 10) <= 64;
}

int agent_parse_device(const char **out, const char *given) {
    const char *src = "option '--device'", *s = given;
    if (!s) {
        s = getenv("CACHET_DEVICE");
        src = "CACHET_DEVICE";
        if (!s || !*s) s = "auto";
    }
    if (!device_ok(s)) {
        fprintf(stderr, "cachet: %s: '%s' is not a device; expected auto, cpu, cuda or cuda:N (N in 0..64)\n",
                src, s);
        return -1;
    }
    *out = s;
    return 0;
}
