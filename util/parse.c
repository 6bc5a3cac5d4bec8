/* util/parse.c: see parse.h. No locale dependence: '.' is the decimal point. */
#include "parse.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int util_parse_size(const char *s, uint64_t *out, int *binary, util_err *err) {
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p) && *p != '.')
        return util_err_set(err, UTIL_EINVAL, "size '%s': expected a number with an optional unit", s);
    char *end;
    double v = strtod(p, &end);
    while (isspace((unsigned char)*end)) end++;
    static const struct {
        const char *unit;
        double mul;
        int binary;
    } units[] = {
        {"", 1, 0},
        {"b", 1, 0},
        {"kb", 1e3, 0},
        {"mb", 1e6, 0},
        {"gb", 1e9, 0},
        {"tb", 1e12, 0},
        {"kib", 1024.0, 1},
        {"mib", 1048576.0, 1},
        {"gib", 1073741824.0, 1},
        {"tib", 1099511627776.0, 1},
        {"k", 1024.0, 1},
        {"m", 1048576.0, 1},
        {"g", 1073741824.0, 1},
        {"t", 1099511627776.0, 1},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(end, units[i].unit) != 0) continue;
        double bytes = v * units[i].mul;
        if (!isfinite(bytes) || bytes < 0 || bytes >= 1.8e19)
            return util_err_set(err, UTIL_ERANGE, "size '%s' is out of range", s);
        *out = (uint64_t)llround(bytes);
        if (binary) *binary = units[i].binary;
        return UTIL_OK;
    }
    return util_err_set(err, UTIL_EINVAL,
                        "size '%s': unknown unit '%s' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, end);
}
