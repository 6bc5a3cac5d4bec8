/* tests/test_parse.c: memory-size parsing (decimal vs binary units). */
#include <stdint.h>

#include "../util/parse.h"
#include "check.h"

static void test_size(void) {
    uint64_t v;
    int bin;
    util_err e;
    CHECK(util_parse_size("80GB", &v, &bin, &e) == 0 && v == 80000000000ull && !bin);
    CHECK(util_parse_size("80GiB", &v, &bin, &e) == 0 && v == 80ull << 30 && bin);
    CHECK(util_parse_size("1.5 MiB", &v, &bin, &e) == 0 && v == 1572864 && bin);
    CHECK(util_parse_size("4096", &v, &bin, &e) == 0 && v == 4096 && !bin);
    CHECK(util_parse_size("512m", &v, &bin, &e) == 0 && v == 512ull << 20 && bin);
    CHECK(util_parse_size("2kb", &v, &bin, &e) == 0 && v == 2000);
    CHECK_EQ_INT(util_parse_size("", &v, &bin, &e), UTIL_EINVAL);
    CHECK_EQ_INT(util_parse_size("GB", &v, &bin, &e), UTIL_EINVAL);
    CHECK_EQ_INT(util_parse_size("12 parsecs", &v, &bin, &e), UTIL_EINVAL);
    CHECK(strstr(e.msg, "parsecs") != NULL);
    CHECK_EQ_INT(util_parse_size("-5GB", &v, &bin, &e), UTIL_EINVAL);
    CHECK_EQ_INT(util_parse_size("1e30", &v, &bin, &e), UTIL_ERANGE);
}

void test_parse(void) { CHECK_CASE(size) test_size(); }
